//! The forwarding state: devices, FIBs, local SIDs, SR policies, neighbours and HMAC
//! keys — built once from a [`RouterSpec`](crate::spec::RouterSpec) by
//! [`Tables::build`] and never modified. A change builds new tables and swaps them in.

mod build;
mod policy;

pub use build::BuildError;
pub use policy::Policy;

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use rustc_hash::FxHashMap;

use crate::behaviour::BehaviorKind;
use crate::exact::ExactMap;
use crate::hmac::HmacKey;
use crate::lpm::Lpm;
use crate::packet::DevId;
use crate::spec::{Flavors, Prefix, Seg6Mode};
use crate::words::WordMap;

/// A network device sr6 receives on or transmits to.
#[derive(Debug, Clone)]
pub struct Device {
    pub name: String,
    pub mac: [u8; 6],
    /// `net.ipv6.conf.{all,DEV}.seg6_enabled`, combined as the kernel does (min).
    pub seg6_enabled: bool,
    /// `net.ipv6.conf.DEV.seg6_require_hmac`: -1 ignore, 0 verify if present, 1 require.
    pub require_hmac: i8,
    pub forwarding6: bool,
    pub forwarding4: bool,
    /// Addresses in configuration order.
    pub addrs6: Vec<Ipv6Addr>,
    pub addrs4: Vec<Ipv4Addr>,
}

/// A resolved L2 adjacency: where a next hop is and the Ethernet header to reach it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Adjacency {
    pub dev: DevId,
    pub nh: IpAddr,
    /// Destination MAC + source MAC, ready to copy; `None` if no neighbour is known.
    pub eth: Option<[u8; 12]>,
}

/// How to reach a route's next hop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NextHop {
    /// A fixed gateway: index into [`Tables::adjacencies`].
    Adj(u32),
    /// On-link: the packet's destination is the neighbour, on this device.
    OnLink(DevId),
}

/// What a FIB lookup yields. `repr(u8)`: a tag of its own rather than one shared with
/// [`NextHop`]'s, so the hot paths dispatch on it with one compare.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Route {
    Forward(NextHop),
    /// A local address (not a SID).
    Local,
    /// A local SID: index into [`Tables::sids`].
    Sid(u32),
    /// A head-end SR policy: index into [`Tables::policies`].
    Policy(u32),
    Blackhole,
    Unreachable,
}

/// What the fast path finds next to a FIB value (the aux record of [`Fib::lpm6`] and
/// [`Fib::lpm4`], kept in the LPM's hash slot itself): [`Fib::GATEWAY`] alone (so that
/// one compare tells it), with the adjacency's device and Ethernet header, for a route
/// through a gateway whose neighbour is known; [`Fib::POLICY`] + the policy index for a head-end policy;
/// else 0.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Hop {
    pub code: u32,
    pub dev: DevId,
    pub eth: [u8; 12],
}

/// The IPv6 LPM of a FIB.
pub type FibLpm6 = Lpm<16, Route, Hop>;
/// The IPv4 LPM of a FIB.
pub type FibLpm4 = Lpm<4, Route, Hop>;

/// One routing table. Build it with [`Fib::new`] (the trie must be marked).
#[derive(Debug)]
pub struct Fib {
    /// /128 entries, including local addresses (which win, as the kernel's local table).
    pub exact6: ExactMap<Route>,
    /// The keys of `exact6` with what the fast path needs to know of each
    /// ([`FastSid::pack`], [`FastSid::NOT_SID`]), for its one probe.
    pub words6: WordMap,
    pub lpm6: FibLpm6,
    /// /32 entries.
    pub exact4: ExactMap<Route>,
    pub lpm4: FibLpm4,
}

impl Fib {
    /// Rebuilds [`words6`](Self::words6) from `exact6`, with `word(route)` for each key.
    pub(crate) fn set_words(&mut self, word: impl Fn(Route) -> u64) {
        self.words6 = WordMap::build(self.exact6.iter().map(|(k, r)| (k, word(r))).collect());
    }

    /// Kinds of the [`Hop`] codes the fast path finds next to the values of `lpm6` and
    /// `lpm4` ([`Lpm::lookup_aux`]).
    pub(crate) const GATEWAY: u32 = 1 << 28;
    pub(crate) const POLICY: u32 = 2 << 28;
    pub(crate) const HOP_INDEX: u32 = (1 << 28) - 1;

    #[inline(always)]
    pub fn lookup6(&self, a: &[u8; 16]) -> Option<Route> {
        self.lookup6_key(u128::from_be_bytes(*a))
    }

    /// [`lookup6`](Self::lookup6) with the address as a big-endian integer (the fast
    /// path keeps addresses in registers this way).
    #[inline(always)]
    pub fn lookup6_key(&self, a: u128) -> Option<Route> {
        // The /128s win (they are the longest prefixes); the trie tells whether any
        // /128 can match at all, so most lookups skip the exact-table probe.
        let (r, exact) = self.lpm6.lookup_marked(a);
        if exact {
            if let Some(x) = self.exact6.get(a) {
                return Some(x);
            }
        }
        r.copied()
    }

    /// [`lookup6_key`](Self::lookup6_key) given the entry
    /// [`Lpm::lookup_entry`](crate::lpm::Lpm::lookup_entry) found for `a`.
    #[inline(always)]
    pub(crate) fn route_of_entry(&self, a: u128, e: u32) -> Option<Route> {
        if crate::lpm::entry_marked(e) {
            if let Some(x) = self.exact6.get(a) {
                return Some(x);
            }
        }
        self.lpm6.value(e).copied()
    }

    /// Same result as [`lookup6_key`](Self::lookup6_key), probing the /128 table first:
    /// cheaper when `a` is most likely a /128 (a local SID) under a deep trie.
    #[inline(always)]
    pub fn lookup6_exact_first(&self, a: u128) -> Option<Route> {
        if let Some(r) = self.exact6.get(a) {
            return Some(r);
        }
        self.lpm6.lookup_key(a).copied()
    }

    #[inline(always)]
    pub fn lookup4(&self, a: &[u8; 4]) -> Option<Route> {
        let k = u32::from_be_bytes(*a);
        let (r, exact) = self.lpm4.lookup_marked(u128::from(k) << 96);
        if exact {
            if let Some(x) = self.exact4.get(u128::from(k)) {
                return Some(x);
            }
        }
        r.copied()
    }

    /// Builds a FIB from its /128 (/32) entries and its shorter prefixes; the trie
    /// entries under which a /128 (/32) lies are marked for [`lookup6`](Self::lookup6).
    /// The [`Hop`]s are set for policies only; [`Fib::set_hops`] adds the gateways.
    pub fn new(exact6: ExactMap<Route>, mut lpm6: FibLpm6, exact4: ExactMap<Route>, mut lpm4: FibLpm4) -> Fib {
        for (k, _) in exact6.iter() {
            lpm6.mark(k);
        }
        for (k, _) in exact4.iter() {
            lpm4.mark(k << 96);
        }
        let mut fib = Fib { exact6, words6: WordMap::default(), exact4, lpm4: Lpm::default(), lpm6: Lpm::default() };
        // Every /128 is in `words6` from the start (as no SID: the fast path then asks
        // `exact6`); the table builder gives the SIDs their words.
        fib.set_words(|_| FastSid::NOT_SID);
        lpm6.set_aux(|r| fib.hop(r, &[]));
        lpm4.set_aux(|r| fib.hop(r, &[]));
        fib.lpm6 = lpm6;
        fib.lpm4 = lpm4;
        fib
    }

    /// The [`Hop`] of a FIB value, given the adjacencies.
    fn hop(&self, r: &Route, adjacencies: &[Adjacency]) -> Hop {
        match *r {
            Route::Forward(NextHop::Adj(i)) => match adjacencies.get(i as usize) {
                Some(Adjacency { dev, eth: Some(eth), .. }) => Hop { code: Fib::GATEWAY, dev: *dev, eth: *eth },
                _ => Hop::default(),
            },
            Route::Policy(i) if i <= Fib::HOP_INDEX => Hop { code: Fib::POLICY | i, ..Hop::default() },
            _ => Hop::default(),
        }
    }

    /// Sets the [`Hop`]s of gateway routes (their adjacencies' devices and Ethernet
    /// headers) and policies.
    pub(crate) fn set_hops(&mut self, adjacencies: &[Adjacency]) {
        let mut lpm6 = std::mem::take(&mut self.lpm6);
        let mut lpm4 = std::mem::take(&mut self.lpm4);
        lpm6.set_aux(|r| self.hop(r, adjacencies));
        lpm4.set_aux(|r| self.hop(r, adjacencies));
        self.lpm6 = lpm6;
        self.lpm4 = lpm4;
    }
}

/// The precomputed operation of a local SID.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SidOp {
    End,
    EndX { nh: NextHop },
    EndT { table: u32 },
    EndDx2 { oif: DevId },
    EndDx6 { nh: NextHop },
    EndDx4 { nh: NextHop },
    EndDt6 { table: u32 },
    EndDt4 { table: u32 },
    EndDt46 { table: u32 },
    EndB6 { policy: u32 },
    EndB6Encaps { policy: u32 },
}

/// What the fast path needs to know about the device a frame came in on, as bits, for
/// every possible [`DevId`]: a fixed-size array indexed by the device, so reading it
/// needs no bounds check (a device that does not exist has no bit set).
pub(crate) struct FastDevs(Box<[u8; 1 << 16]>);

impl FastDevs {
    /// `net.ipv6.conf.DEV.forwarding` is on.
    pub const FORWARDING6: u8 = 1;
    /// `seg6_require_hmac` is 1: every SRH must carry a valid HMAC TLV.
    pub const REQUIRE_HMAC: u8 = 2;

    pub fn of(devices: &[Device]) -> Self {
        let mut bits = vec![0u8; 1 << 16];
        for (b, d) in bits.iter_mut().zip(devices) {
            *b = if d.forwarding6 { Self::FORWARDING6 } else { 0 }
                | if d.require_hmac > 0 { Self::REQUIRE_HMAC } else { 0 };
        }
        // The length is right by construction; an all-clear table (nothing for the fast
        // path) otherwise.
        FastDevs(bits.into_boxed_slice().try_into().unwrap_or_else(|_| Box::new([0; 1 << 16])))
    }

    #[inline(always)]
    pub fn get(&self, dev: DevId) -> u8 {
        self.0[usize::from(dev)]
    }
}

impl std::fmt::Debug for FastDevs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FastDevs").field("set", &self.0.iter().filter(|&&b| b != 0).count()).finish()
    }
}

/// A local SID as the fast path sees it (`pipeline/fast.rs`), precomputed from its op
/// and flavours when the tables are built: a kind and its argument, 8 bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FastSid {
    pub kind: u8,
    /// A FIB index, an adjacency index or a device, by kind.
    pub arg: u32,
}

impl FastSid {
    /// Not handled by the fast path.
    pub const NONE: u8 = 0;
    /// A SID of kind NONE.
    pub const NO: FastSid = FastSid { kind: Self::NONE, arg: 0 };
    /// The kinds `fast::try_cold` handles: End.DX4 to adjacency `arg` / on-link on
    /// device `arg`; End.B6.Encaps(.Red) without flavours with policy `arg`; End.DT4
    /// and End.DT46 with FIB `arg`; End.DX2 out of device `arg`; End, End.T (FIB `arg`)
    /// and End.X (adjacency / device `arg`) with the PSP flavour; End.B6 without
    /// flavours with policy `arg`. Below the kinds of
    /// `fast::try6`, so that it declines them together with NONE in one compare.
    pub const DX4_ADJ: u8 = 1;
    pub const DX4_ONLINK: u8 = 2;
    pub const B6_ENCAPS: u8 = 3;
    pub const DT4: u8 = 4;
    pub const DT46: u8 = 5;
    pub const DX2: u8 = 6;
    pub const END_PSP: u8 = 7;
    pub const END_X_PSP_ADJ: u8 = 8;
    pub const END_X_PSP_ONLINK: u8 = 9;
    pub const B6_INSERT: u8 = 10;
    /// The last kind `fast::try6` declines.
    pub const COLD: u8 = 10;
    /// End (and End.T of the main table) without PSP: the next segment is looked up
    /// in the main FIB, which the fast path has at hand. (USP and USD act only on a
    /// packet that arrives with Segments Left 0, which the fast path leaves to the
    /// general path.)
    pub const END: u8 = 11;
    /// End.T of another table without PSP: the next segment is looked up in FIB `arg`.
    pub const END_T: u8 = 12;
    /// End.X without PSP, to adjacency `arg` / on-link on device `arg`.
    pub const END_X_ADJ: u8 = 13;
    pub const END_X_ONLINK: u8 = 14;
    /// End.DX6 to adjacency `arg` / on-link on device `arg`.
    pub const DX6_ADJ: u8 = 15;
    pub const DX6_ONLINK: u8 = 16;
    /// End.DT6: the inner destination is looked up in FIB `arg`.
    pub const DT6: u8 = 17;

    /// The word of [`Fib::words6`] for a /128 entry that is SID `index`: the kind in the
    /// low byte, the argument in the next three (kind NONE if it does not fit in 24
    /// bits), the index in the top 16 bits (kind NONE if it does not fit: the fast path
    /// counts a SID with [`SidCounters::count_frame`](crate::counters::SidCounters), by a `u16`). A SID of
    /// kind NONE gets argument 1, so that no word is [`WordMap::MISS`] (0).
    pub(crate) fn pack(self, index: u32) -> u64 {
        let none = self.kind == Self::NONE || self.arg >= 1 << 24 || index as usize >= crate::counters::FIXED;
        let (kind, arg) = if none { (Self::NONE, 1) } else { (self.kind, self.arg) };
        u64::from(kind) | u64::from(arg) << 8 | u64::from(index as u16) << 48
    }

    /// The word of [`Fib::words6`] for a /128 entry that is not a SID: kind NONE,
    /// argument 0 (no SID's), not [`WordMap::MISS`].
    pub(crate) const NOT_SID: u64 = 0xffff << 48;

    /// The SID index and what [`pack`](Self::pack) packed (kind NONE for
    /// [`NOT_SID`](Self::NOT_SID); the index means nothing for kind NONE). The index
    /// is a `usize` straight away: the compiler knows it is under 2^16, and narrowing
    /// it to a `u16` at the count costs nothing (as a `u16` here, widening it there
    /// would cost an instruction).
    #[inline(always)]
    pub(crate) fn unpack(w: u64) -> (usize, FastSid) {
        ((w >> 48) as usize, FastSid { kind: w as u8, arg: (w as u32) >> 8 })
    }

    /// [`of`](Self::of) for SID `index`: kind NONE past the ids the fast path can count
    /// ([`crate::counters::FIXED`]).
    pub(crate) fn of_index(index: usize, s: &Sid) -> FastSid {
        if index >= crate::counters::FIXED {
            return FastSid::NO;
        }
        FastSid::of(s)
    }

    pub(crate) fn of(s: &Sid) -> FastSid {
        // The general path delivers packets for multicast and link-local destinations
        // to the host before any lookup; the fast path tests that only for destinations
        // that are not SIDs, so a SID that could match such a destination stays off it.
        if let Prefix::V6(a, len) = s.prefix {
            if meets(u128::from(a), len, 0xfe80 << 112, 10) || meets(u128::from(a), len, 0xff << 120, 8) {
                return FastSid::NO;
            }
        }
        let plain = s.flavors.is_empty();
        let psp = s.flavors.psp;
        let (kind, arg) = match s.op {
            SidOp::End => (if psp { Self::END_PSP } else { Self::END }, Tables::MAIN),
            SidOp::EndT { table } => (
                if psp {
                    Self::END_PSP
                } else if table == Tables::MAIN {
                    Self::END
                } else {
                    Self::END_T
                },
                table,
            ),
            SidOp::EndX { nh: NextHop::Adj(a) } => (if psp { Self::END_X_PSP_ADJ } else { Self::END_X_ADJ }, a),
            SidOp::EndX { nh: NextHop::OnLink(d) } => {
                (if psp { Self::END_X_PSP_ONLINK } else { Self::END_X_ONLINK }, u32::from(d))
            }
            SidOp::EndDx6 { nh: NextHop::Adj(a) } => (Self::DX6_ADJ, a),
            SidOp::EndDx6 { nh: NextHop::OnLink(d) } => (Self::DX6_ONLINK, u32::from(d)),
            SidOp::EndDt6 { table } => (Self::DT6, table),
            SidOp::EndDx4 { nh: NextHop::Adj(a) } => (Self::DX4_ADJ, a),
            SidOp::EndDx4 { nh: NextHop::OnLink(d) } => (Self::DX4_ONLINK, u32::from(d)),
            SidOp::EndB6Encaps { policy } if plain => (Self::B6_ENCAPS, policy),
            SidOp::EndB6 { policy } if plain => (Self::B6_INSERT, policy),
            SidOp::EndDt4 { table } => (Self::DT4, table),
            SidOp::EndDt46 { table } => (Self::DT46, table),
            SidOp::EndDx2 { oif } => (Self::DX2, u32::from(oif)),
            _ => (Self::NONE, 0),
        };
        FastSid { kind, arg }
    }

    /// The next hop of the END_X_*, DX6_* and DX4_* kinds.
    #[inline(always)]
    pub(crate) fn next_hop(self, adj: u8) -> NextHop {
        if self.kind == adj {
            NextHop::Adj(self.arg)
        } else {
            NextHop::OnLink(self.arg as DevId)
        }
    }
}

/// Whether the IPv6 prefixes `a/la` and `b/lb` have an address in common (one holds
/// the other: their first min(la, lb) bits agree).
fn meets(a: u128, la: u8, b: u128, lb: u8) -> bool {
    let l = u32::from(la.min(lb)).min(128);
    l == 0 || (a ^ b) >> (128 - l) == 0
}

/// A head-end policy as the fast path applies it (`pipeline/fast.rs`): the bytes that
/// go in front of the packet — Ethernet header towards the first segment, IPv6 header,
/// SRH — prepared once, right-aligned in a fixed-size block so that they are written
/// with one block copy ([`PacketBuf::put_front`](crate::packet::PacketBuf::put_front));
/// the fields that depend on the packet are patched after.
#[derive(Debug, Clone)]
pub(crate) struct FastPolicy {
    pub kind: u8,
    pub out: DevId,
    /// How many bytes of the block's end are the headers (Ethernet + IPv6 + SRH).
    pub len: u8,
    /// The code that applies it, chosen by `kind` and `len` when the tables are built
    /// (the usual header lengths have code of their own with every offset a constant).
    pub rewrite: crate::pipeline::fast::Rewrite,
    pub block: [u8; FastPolicy::BLOCK],
}

impl FastPolicy {
    pub const BLOCK: usize = 128;
    /// Not handled by the fast path (HMAC computed per packet, no route to the first
    /// segment, headers longer than the block).
    pub const NONE: u8 = 0;
    /// H.Encaps, H.Encaps.Red: the block's headers replace the Ethernet header.
    pub const ENCAP: u8 = 1;
    /// H.Insert, H.Insert.Red: the block's headers replace the Ethernet + IPv6 headers.
    pub const INSERT: u8 = 2;
    /// H.Encaps.L2, H.Encaps.L2.Red: the block's headers go in front of the frame as
    /// received (RFC 8986 §5.3).
    pub const ENCAP_L2: u8 = 3;

    pub(crate) fn of(pol: &Policy, out: Option<(DevId, [u8; 12])>) -> FastPolicy {
        let none = FastPolicy {
            kind: Self::NONE,
            out: 0,
            len: 0,
            rewrite: crate::pipeline::fast::rewrite_for(Self::NONE, 0),
            block: [0; Self::BLOCK],
        };
        let Some((dev, eth)) = out else { return none };
        let kind = match pol.mode {
            Seg6Mode::Encap | Seg6Mode::EncapRed if pol.hmac_key_id.is_none() || pol.hmac_ready => Self::ENCAP,
            Seg6Mode::L2Encap | Seg6Mode::L2EncapRed if pol.hmac_key_id.is_none() || pol.hmac_ready => Self::ENCAP_L2,
            // An SRH of at least one segment (the fast path patches Segment List[0]).
            Seg6Mode::Inline | Seg6Mode::InlineRed if pol.hmac_key_id.is_none() && pol.srh.len() >= 24 => Self::INSERT,
            _ => return none,
        };
        let len = 14 + 40 + pol.srh.len();
        if len > Self::BLOCK {
            return none;
        }
        let mut h = vec![0u8; len];
        h[..12].copy_from_slice(&eth);
        h[12..14].copy_from_slice(&[0x86, 0xdd]);
        h[14] = 0x60;
        let encap = kind == Self::ENCAP || kind == Self::ENCAP_L2;
        let payload = if kind == Self::ENCAP_L2 { sr6_wire::IPPROTO_ETHERNET } else { 41 };
        h[14 + 6] = if pol.srh.is_empty() { payload } else { sr6_wire::IPPROTO_ROUTING };
        if encap {
            h[14 + 8..14 + 24].copy_from_slice(&pol.src);
        }
        h[14 + 24..14 + 40].copy_from_slice(&pol.first);
        h[54..].copy_from_slice(&pol.srh);
        if encap && !pol.srh.is_empty() {
            h[54] = payload;
        }
        let mut block = [0u8; Self::BLOCK];
        block[Self::BLOCK - len..].copy_from_slice(&h);
        FastPolicy { kind, out: dev, len: len as u8, rewrite: crate::pipeline::fast::rewrite_for(kind, len), block }
    }
}

/// One local SID.
#[derive(Debug, Clone)]
pub struct Sid {
    pub prefix: Prefix,
    pub behavior: BehaviorKind,
    pub op: SidOp,
    pub flavors: Flavors,
    /// Human-readable parameters, for `show`.
    pub params: String,
    pub line: usize,
}

/// HMAC keys by key id.
#[derive(Debug, Default)]
pub struct HmacKeys {
    pub keys: FxHashMap<u32, HmacKey>,
}

/// Everything the data plane reads. Immutable once built.
#[derive(Debug)]
pub struct Tables {
    pub devices: Vec<Device>,
    /// FIBs by dense index; [`Tables::MAIN`] is the main table.
    pub fibs: Vec<Fib>,
    /// Kernel table id of each FIB.
    pub table_ids: Vec<u32>,
    pub sids: Vec<Sid>,
    /// By SID: what the fast path does with it.
    pub(crate) fast_sids: Vec<FastSid>,
    /// By receiving device: what the fast path checks.
    pub(crate) fast_devs: FastDevs,
    pub policies: Vec<Policy>,
    /// By policy: the device and Ethernet header towards its first segment when the main
    /// FIB forwards it (`None`: not a plain route or no neighbour; the general path
    /// decides). Precomputed since both the segment and the tables are immutable.
    pub policy_out: Vec<Option<(DevId, [u8; 12])>>,
    /// By policy: its rewrite as the fast path applies it.
    pub(crate) fast_policies: Vec<FastPolicy>,
    pub adjacencies: Vec<Adjacency>,
    /// Neighbours: (device, address as IPv6 or IPv4-mapped) -> MAC.
    pub neighbours: FxHashMap<(DevId, u128), [u8; 6]>,
    pub hmac: HmacKeys,
    pub tunsrc: Option<Ipv6Addr>,
    /// The first IPv6 address of the configuration file (the last-resort source).
    pub first_addr6: Option<Ipv6Addr>,
    /// Live routers set this after building: a packet whose next hop has no known
    /// link-layer address gets [`Verdict::Resolve`](crate::packet::Verdict::Resolve)
    /// and waits for resolution, rather than being dropped as `no_neighbour`.
    pub resolve_neighbours: bool,
}

/// Key of the neighbour map for an address (IPv4 as IPv4-mapped IPv6).
#[inline]
pub fn neigh_key(a: IpAddr) -> u128 {
    match a {
        IpAddr::V6(a) => u128::from(a),
        IpAddr::V4(a) => u128::from(a.to_ipv6_mapped()),
    }
}

impl Tables {
    /// Dense index of the main table.
    pub const MAIN: u32 = 0;

    /// Looks up the Ethernet header (dst + src MAC) to reach `nh` on `dev`.
    #[inline(always)]
    pub fn neighbour_eth(&self, dev: DevId, nh: u128) -> Option<[u8; 12]> {
        let mac = self.neighbours.get(&(dev, nh))?;
        let src = self.devices.get(dev as usize)?.mac;
        let mut e = [0u8; 12];
        e[..6].copy_from_slice(mac);
        e[6..].copy_from_slice(&src);
        Some(e)
    }

    /// Resolves a next hop to its device and Ethernet header; `dst` is the packet's
    /// destination (the neighbour of an on-link route).
    #[inline(always)]
    pub fn resolve(&self, nh: NextHop, dst: u128) -> Option<(DevId, [u8; 12])> {
        match nh {
            NextHop::Adj(i) => {
                let a = self.adjacencies.get(i as usize)?;
                Some((a.dev, a.eth?))
            }
            NextHop::OnLink(d) => Some((d, self.neighbour_eth(d, dst)?)),
        }
    }

    /// Index of the device named `name`.
    pub fn device_id(&self, name: &str) -> Option<DevId> {
        self.devices.iter().position(|d| d.name == name).map(|i| i as DevId)
    }

    /// The address an ICMPv6 error leaving `dev` is sent from (docs/behaviours.md).
    pub fn icmp6_source(&self, dev: DevId) -> Ipv6Addr {
        if let Some(a) = self.devices.get(dev as usize).and_then(|d| d.addrs6.iter().find(|a| !is_link_local(a))) {
            return *a;
        }
        if let Some(t) = self.tunsrc {
            return t;
        }
        self.first_addr6.unwrap_or(Ipv6Addr::UNSPECIFIED)
    }

    /// The address an ICMPv4 error leaving `dev` is sent from.
    pub fn icmp4_source(&self, dev: DevId) -> Ipv4Addr {
        self.devices
            .get(dev as usize)
            .and_then(|d| d.addrs4.first())
            .or_else(|| self.devices.iter().flat_map(|d| d.addrs4.iter()).next())
            .copied()
            .unwrap_or(Ipv4Addr::UNSPECIFIED)
    }

    /// Is `a` one of the router's own IPv6 addresses?
    pub fn is_local6(&self, a: &[u8; 16]) -> bool {
        matches!(self.fibs.first().and_then(|f| f.exact6.get(u128::from_be_bytes(*a))), Some(Route::Local))
    }
}

pub(crate) fn is_link_local(a: &Ipv6Addr) -> bool {
    a.segments()[0] & 0xffc0 == 0xfe80
}
