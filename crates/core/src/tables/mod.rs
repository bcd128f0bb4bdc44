//! The forwarding state: devices, FIBs, local SIDs, SR policies, neighbours and HMAC
//! keys — built from a [`RouterSpec`](crate::spec::RouterSpec) by [`Tables::build`].
//! A change builds new tables and swaps them in, except the plain route changes
//! [`Tables::apply_routes`] makes in place (`update.rs`).

mod build;
pub mod csid_policy;
pub(crate) mod fast_route;
mod fast_sid;
mod multipath;
mod offload;
mod policy;
mod policy_update;
mod rewrite;
pub mod rules;
mod sid_builder;
mod sid_update;
mod update;

pub use build::BuildError;
pub use fast_route::Out;
pub(crate) use fast_sid::{FastKind, FastSid};
pub use multipath::Group;
pub use offload::{Offload4, Offload6, OffloadAct, OffloadPolicy, OffloadRewrite};
pub use policy::Policy;
pub(crate) use rewrite::{Rewrite, RewriteKind};
pub use sid_builder::SidBuilder;
pub use update::{NeedsBuild, NeighChange, RouteChange};

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use rustc_hash::FxHashMap;

use crate::behaviour::proxy::{Proxy, ProxyIn};
use crate::behaviour::Behaviour;
use crate::exact::ExactMap;
use crate::hmac::HmacKey;
use crate::lpm::Lpm;
use crate::packet::DevId;
use crate::spec::{Prefix, SidAction};
use crate::words::WordMap;
use sr6_wire::ethernet::MacAddr;
use sr6_wire::EthernetFrame;

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
    /// The largest IPv6 or IPv4 packet the device sends (`ip link set DEV mtu N`,
    /// [`DEFAULT_MTU`](crate::spec::DEFAULT_MTU) otherwise; the kernel's under `sr6 run`).
    pub mtu: u16,
    /// Addresses in configuration order.
    pub addrs6: Vec<Ipv6Addr>,
    pub addrs4: Vec<Ipv4Addr>,
    /// The prefix length of each of `addrs6` / `addrs4`.
    pub plens6: Vec<u8>,
    pub plens4: Vec<u8>,
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
    /// A multipath route: index into [`Tables::groups`]; the general path picks the
    /// next hop by the packet's flow hash.
    Multipath(u32),
    /// A GTP-U encapsulation (`encap gtp teid ...`): index into [`Tables::gtp_encaps`];
    /// general path only.
    GtpEncap(u32),
    /// A route with LWT BPF programs (`encap bpf ...`): index into [`Tables::lwts`];
    /// general path only.
    Lwt(u32),
}

/// What the fast path finds next to a FIB value (the aux record of [`Fib::lpm6`] and
/// [`Fib::lpm4`], kept in the LPM's hash slot itself): [`Fib::GATEWAY`] alone (so that
/// one compare tells it), with the adjacency's device and Ethernet header, for a route
/// through a gateway whose neighbour is known; [`Fib::POLICY`] + the policy index for a head-end policy;
/// [`Fib::CSID_MAIN`], [`Fib::CSID`] or [`Fib::CSID_X`] for a SID with the NEXT-C-SID
/// flavour the fast path shifts ([`Hop::csid`]); else 0.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Hop {
    pub code: u32,
    pub dev: DevId,
    pub eth: [u8; 12],
}

impl Hop {
    /// The hop of a prefix SID with the NEXT-C-SID flavour of lengths `c` whose fast
    /// step is `f` (kind EndCsid or EndXCsid) and whose index is `i`, so that the route
    /// lookup of a pure uSID packet finds all the fast path needs
    /// (`behaviour::next_csid::fast_hop`). The code alone says what the step looks up
    /// (one compare each): [`Fib::CSID_X`] for End.X (its next hop), [`Fib::CSID_MAIN`]
    /// for End in the main table with a block of at least 24 bits (the shifted
    /// destination lies under the same root entry of the LPM as the SID's: the step
    /// probes its hash table without reading that entry again), [`Fib::CSID`] for the
    /// others (End.T, a shorter block). The index is the device; the bytes a gateway's
    /// Ethernet header takes hold the mask of the Locator-Block in the address's first
    /// 64 bits, the C-SID length and the argument (FIB or next hop) in 3 bytes. Only for
    /// a block of at most 64 bits and a C-SID of less than 64 (the usual formats, F3216
    /// first; the others' packets take the general fast step) with an argument under
    /// 2^24: `None` otherwise.
    pub(crate) fn csid(f: FastSid, i: u16, c: crate::spec::CsidLengths) -> Option<Hop> {
        if c.lblen > 64 || c.nflen >= 64 || f.arg >= 1 << 24 {
            return None;
        }
        let code = if f.is(FastKind::EndXCsid) {
            Fib::CSID_X
        } else if f.arg == Tables::MAIN && usize::from(c.lblen) >= crate::lpm::ROOT_BITS {
            Fib::CSID_MAIN
        } else {
            Fib::CSID
        };
        let mut eth = [0; 12];
        eth[..8].copy_from_slice(&crate::behaviour::next_csid::block_mask_hi(c.lblen).to_le_bytes());
        eth[8] = c.nflen;
        eth[9..].copy_from_slice(&f.arg.to_le_bytes()[..3]);
        Some(Hop { code, dev: i, eth })
    }

    /// What [`Hop::csid`] stored for the shift: the SID's index, the block's mask in the
    /// first 64 bits, the C-SID length.
    #[inline(always)]
    pub(crate) fn csid_parts(&self) -> (usize, u64, u32) {
        let [m0, m1, m2, m3, m4, m5, m6, m7, nf, ..] = self.eth;
        (usize::from(self.dev), u64::from_le_bytes([m0, m1, m2, m3, m4, m5, m6, m7]), u32::from(nf))
    }

    /// What [`Hop::csid`] stored for the lookup of End.T and End.X: the argument (FIB or
    /// next hop).
    #[inline(always)]
    pub(crate) fn csid_arg(&self) -> u32 {
        let [.., a0, a1, a2] = self.eth;
        u32::from_le_bytes([a0, a1, a2, 0])
    }
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
    /// The NEXT-C-SID codes ([`Hop::csid`]): every code at or above [`Fib::CSID`] is one.
    pub(crate) const CSID: u32 = 3 << 28;
    pub(crate) const CSID_X: u32 = 4 << 28;
    pub(crate) const CSID_MAIN: u32 = 5 << 28;
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
    /// A FIB with no route.
    pub fn empty() -> Fib {
        Fib::new(
            ExactMap::build(Vec::new()),
            Lpm::build(Vec::new()),
            ExactMap::build(Vec::new()),
            Lpm::build(Vec::new()),
        )
    }

    pub fn new(exact6: ExactMap<Route>, mut lpm6: FibLpm6, exact4: ExactMap<Route>, mut lpm4: FibLpm4) -> Fib {
        for (k, _) in exact6.iter() {
            lpm6.mark(k);
        }
        for (k, _) in exact4.iter() {
            lpm4.mark(k << 96);
        }
        lpm6.set_aux(|r| Fib::hop(r, &[]));
        lpm4.set_aux(|r| Fib::hop(r, &[]));
        let mut fib = Fib { exact6, words6: WordMap::default(), exact4, lpm4, lpm6 };
        // Every /128 is in `words6` from the start (as no SID: the fast path then asks
        // `exact6`); the table builder gives the SIDs their words.
        fib.set_words(|_| FastSid::NOT_SID);
        fib
    }

    /// The [`Hop`] of a FIB value, given the adjacencies.
    pub(crate) fn hop(r: &Route, adjacencies: &[Adjacency]) -> Hop {
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
    /// headers), policies, and SID routes (`sid_hops`, by SID index: what the fast path
    /// needs of a SID it handles on the route lookup's hop alone).
    pub(crate) fn set_hops(&mut self, adjacencies: &[Adjacency], sid_hops: &[Hop]) {
        self.lpm6.set_aux(|r| match *r {
            Route::Sid(i) => sid_hops.get(i as usize).copied().unwrap_or_default(),
            _ => Fib::hop(r, adjacencies),
        });
        self.lpm4.set_aux(|r| Fib::hop(r, adjacencies));
    }
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
    /// The device is an SR proxy's `iif`: no fast step at all for its frames.
    pub const PROXY_IN: u8 = 4;

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

    /// Keeps the fast path away from every frame of `dev` (a proxy's `iif`, whose IP
    /// packets the general path's inbound policy handles): its forwarding bit cleared.
    pub fn decline(&mut self, dev: DevId) {
        let b = &mut self.0[usize::from(dev)];
        *b = (*b & !Self::FORWARDING6) | Self::PROXY_IN;
    }

    /// Whether [`decline`](Self::decline) was called for `dev`.
    #[inline(always)]
    pub fn proxy_in(&self, dev: DevId) -> bool {
        self.get(dev) & Self::PROXY_IN != 0
    }
}

impl std::fmt::Debug for FastDevs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FastDevs").field("set", &self.0.iter().filter(|&&b| b != 0).count()).finish()
    }
}

/// The longest frame that, grown by the largest rewrite a policy of `policies` makes
/// (encapsulation: outer IPv6 header + SRH, and the inner Ethernet header for the L2
/// modes; insertion: the SRH), still fits the smallest MTU of `devices` (Ethernet
/// header included).
pub(crate) fn fast_max_len<'a>(devices: &[Device], policies: impl IntoIterator<Item = &'a Policy>) -> usize {
    let growth = policies.into_iter().map(policy_growth).max().unwrap_or(0);
    min_frame(devices).saturating_sub(growth)
}

/// The shortest MTU of `devices` as a frame length.
pub(crate) fn min_frame(devices: &[Device]) -> usize {
    devices.iter().map(|d| usize::from(d.mtu) + ETH_HEADER_LEN).min().unwrap_or(0)
}

/// How many bytes policy `p` adds to a frame.
pub(crate) fn policy_growth(p: &Policy) -> usize {
    let l2 = matches!(p.mode, crate::spec::Seg6Mode::L2Encap | crate::spec::Seg6Mode::L2EncapRed);
    let outer = if p.encapsulates() { 40 + if l2 { ETH_HEADER_LEN } else { 0 } } else { 0 };
    p.srh.len() + outer
}

const ETH_HEADER_LEN: usize = EthernetFrame::<&[u8]>::HEADER_LEN;

/// One local SID: its behaviour's row, the action as configured, and what the
/// behaviour's `build` resolved it to.
#[derive(Debug, Clone)]
pub struct Sid {
    pub prefix: Prefix,
    pub behaviour: &'static Behaviour,
    pub action: SidAction,
    pub state: SidState,
    pub line: usize,
}

/// A local SID's parameters resolved to table indices by its behaviour's `build`:
/// each behaviour uses the fields it needs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SidState {
    /// The next hop of a cross-connect (End.X, End.DX4, End.DX6).
    pub nh: Option<NextHop>,
    /// The FIB (dense index) of a lookup (End.T, End.DT*).
    pub table: u32,
    /// The output device (End.DX2).
    pub oif: DevId,
    /// The policy (index into [`Tables::policies`]) of a binding SID.
    pub policy: u32,
    /// What the fast path does with the SID ([`FastSid::NO`]: nothing).
    pub(crate) fast: FastSid,
    /// An SR proxy's index into [`Tables::proxies`].
    pub proxy: u32,
    /// An End.Limit SID's index into [`Tables::limiters`].
    pub limiter: u32,
}

/// HMAC keys by key id.
#[derive(Debug, Default)]
pub struct HmacKeys {
    pub keys: FxHashMap<u32, HmacKey>,
}

/// The FIBs by dense index, [`Tables::MAIN`] first. The main table lies inside
/// [`Tables`] itself, at a fixed offset: the fast path, which reads it for nearly every
/// packet, reaches it through the tables' address and keeps no register of its own for
/// it across the batch loop (`pipeline::fast::try6`).
#[derive(Debug)]
pub struct Fibs {
    main: Fib,
    others: Vec<Fib>,
}

impl Fibs {
    /// The FIBs of `fibs`, in order; an empty main table if there are none.
    pub fn new(fibs: Vec<Fib>) -> Fibs {
        let mut it = fibs.into_iter();
        let main = it.next().unwrap_or_else(Fib::empty);
        Fibs { main, others: it.collect() }
    }

    /// The main table.
    #[inline(always)]
    pub fn main(&self) -> &Fib {
        &self.main
    }

    /// The main table, as `Vec::first` would say it.
    #[inline(always)]
    pub fn first(&self) -> Option<&Fib> {
        Some(&self.main)
    }

    /// The FIB of dense index `i`.
    #[inline(always)]
    pub fn get(&self, i: usize) -> Option<&Fib> {
        if i == 0 {
            return Some(&self.main);
        }
        self.other(i)
    }

    /// Adds an empty FIB after the others (a table made in place, `update.rs`).
    pub(crate) fn push_empty(&mut self) {
        self.others.push(Fib::empty());
    }

    /// Removes the last FIB, unless it is the main table.
    pub(crate) fn pop(&mut self) {
        self.others.pop();
    }

    /// The FIB of dense index `i` if it is not the main table (`None` for 0).
    #[inline(always)]
    pub fn other(&self, i: usize) -> Option<&Fib> {
        self.others.get(i.wrapping_sub(1))
    }

    pub fn len(&self) -> usize {
        1 + self.others.len()
    }

    pub fn is_empty(&self) -> bool {
        false
    }

    pub fn iter(&self) -> impl Iterator<Item = &Fib> {
        std::iter::once(&self.main).chain(&self.others)
    }

    /// The FIB of dense index `i`, to change.
    pub fn get_mut(&mut self, i: usize) -> Option<&mut Fib> {
        if i == 0 {
            return Some(&mut self.main);
        }
        self.others.get_mut(i.wrapping_sub(1))
    }

    pub fn iter_mut(&mut self) -> impl Iterator<Item = &mut Fib> {
        std::iter::once(&mut self.main).chain(&mut self.others)
    }
}

impl std::ops::Index<usize> for Fibs {
    type Output = Fib;
    fn index(&self, i: usize) -> &Fib {
        match self.get(i) {
            Some(f) => f,
            None => panic!("no FIB of index {i} (there are {})", self.len()),
        }
    }
}

/// Everything the data plane reads. Immutable while published; [`Tables::apply_routes`]
/// changes routes of tables no worker reads.
#[derive(Debug)]
pub struct Tables {
    pub devices: Vec<Device>,
    /// FIBs by dense index; [`Tables::MAIN`] is the main table.
    pub fibs: Fibs,
    /// Kernel table id of each FIB.
    pub table_ids: Vec<u32>,
    pub sids: Vec<Sid>,
    /// By SID: what the fast path does with it.
    pub(crate) fast_sids: Vec<FastSid>,
    /// By receiving device: what the fast path checks.
    pub(crate) fast_devs: FastDevs,
    /// The longest frame the fast path takes ([`fast_max_len`]): no step of it can make
    /// a frame of this length exceed any device's MTU. Longer frames take the general
    /// path, which checks the MTU of the device each one leaves by.
    pub(crate) fast_max_len: usize,
    pub policies: Vec<Policy>,
    /// The indices of the policies no route points at any more (retired by a route
    /// change in place, `policy_update.rs`): the next new policies take them.
    pub policy_free: Vec<u32>,
    /// By policy: the device and Ethernet header towards its first segment when the main
    /// FIB forwards it (`None`: not a plain route or no neighbour; the general path
    /// decides). Precomputed since both the segment and the tables are immutable.
    pub policy_out: Vec<Option<(DevId, [u8; 12])>>,
    /// By policy: its rewrite as the fast path applies it.
    pub(crate) rewrites: Vec<Rewrite>,
    pub adjacencies: Vec<Adjacency>,
    /// The next hops of multipath routes ([`Route::Multipath`]).
    pub groups: Vec<Group>,
    /// By nexthop object id and family (IPv6: `true`), the route the build made of a
    /// route through that object (of every object that resolves for the family, used
    /// by a route or not): what a route through it added in place takes
    /// ([`Tables::apply_routes`]; a zebra installs every route through one).
    pub(crate) nhid_routes: rustc_hash::FxHashMap<(u32, bool), Route>,
    /// `net.ipv6.fib_multipath_hash_policy` and `net.ipv4.fib_multipath_hash_policy`.
    pub multipath_hash6: u8,
    pub multipath_hash4: u8,
    /// Neighbours: (device, address as IPv6 or IPv4-mapped) -> MAC.
    pub neighbours: FxHashMap<(DevId, u128), [u8; 6]>,
    pub hmac: HmacKeys,
    pub tunsrc: Option<Ipv6Addr>,
    /// The first IPv6 address of the configuration file (the last-resort source).
    pub first_addr6: Option<Ipv6Addr>,
    /// The outer source End.BPF's End.B6.Encaps (and an LWT hook's push) takes for a
    /// route through each device, the last entry for a route without one
    /// (`behaviour::end_bpf::encap_src`): worked out once, not per packet.
    pub bpf_encap_src: Vec<[u8; 16]>,
    /// The directed broadcast address of each connected IPv4 subnet shorter than /31,
    /// as the kernel adds it to its local table (`fib_add_ifaddr`).
    pub bcast4: Vec<u32>,
    /// One bit per own IPv4 address ([`local4_bit`]): the fast path's test of a source
    /// that may be the router's own (a set bit sends it to the general path).
    pub(crate) local4_filter: u64,
    /// The SR proxies (draft-ietf-spring-sr-service-programming §6), with their shared
    /// state ([`crate::behaviour::proxy`]).
    pub proxies: Vec<Proxy>,
    /// By receiving device: the proxies it is the `iif` of, whose part 2 the general
    /// path applies to IP packets from it (empty when there is no proxy).
    pub proxy_in: Vec<Option<ProxyIn>>,
    /// The End.Limit SIDs' layouts and token buckets (RFC 9433 §6.8), shared by every
    /// worker ([`crate::behaviour::end_limit`]).
    pub limiters: Vec<std::sync::Arc<crate::behaviour::end_limit::Limiter>>,
    /// The indices of [`limiters`](Self::limiters) no SID uses any more (an End.Limit
    /// SID replaced or removed in place): the next End.Limit SID made in place takes one.
    pub limiter_free: Vec<u32>,
    /// The GTP-U encapsulations of `encap gtp` routes ([`Route::GtpEncap`]).
    pub gtp_encaps: Vec<crate::behaviour::mobile::gtp_encap::GtpEncap>,
    /// Indices of [`gtp_encaps`](Self::gtp_encaps) no route uses any more (replaced or
    /// deleted in place): the next one made in place takes one.
    pub gtp_free: Vec<u32>,
    /// The routes with LWT BPF programs ([`Route::Lwt`]).
    pub lwts: Vec<crate::pipeline::lwt_bpf::LwtRoute>,
    /// Live routers set this after building: a packet whose next hop has no known
    /// link-layer address gets [`Verdict::Resolve`](crate::packet::Verdict::Resolve)
    /// and waits for resolution, rather than being dropped as `no_neighbour`.
    pub resolve_neighbours: bool,
    /// The policy routing rules of each family (`ip rule`, [`rules`]): empty when none
    /// is configured, and then the fast path is on.
    pub rules: rules::Rules,
    /// The FIB whose lookups walk the rules: [`Tables::MAIN`] for a family with rules,
    /// else none (`u32::MAX`), so that the general path's route lookup tests it with one
    /// compare against the table it was asked for.
    pub(crate) rules_fib6: u32,
    pub(crate) rules_fib4: u32,
    /// The firewall ([`crate::firewall`]): `None` without rules and with every policy
    /// ACCEPT; with one, the fast path takes no frame.
    pub firewall: Option<Box<crate::firewall::Firewall>>,
    /// The IDS ([`crate::ids`]): `None` unless configured; with one, the fast path
    /// takes no frame.
    pub ids: Option<Box<crate::ids::Ids>>,
    /// The device routes of the main table the tables were built with, which resolve
    /// the next hops of SIDs built in place.
    onlink: Option<Box<build::OnLinkIndex>>,
    /// Some SID's next hop is resolved through a route of the main table (a next hop
    /// behind a gateway): a change of a main-table route makes the caller build
    /// ([`Tables::apply_routes`]), which resolves it again.
    sid_via_routes: bool,
    /// The policies whose source address is the address of the device their first
    /// segment is routed by (no `ip sr tunsrc`, no `dev` on its route): a change of a main-table
    /// route covering that segment finds the source again (`policy_update.rs`).
    policy_src_routed: Vec<u32>,
    /// Some route or SID resolved a gateway given without a device on a device route of
    /// the main table (`build::OnLinkIndex`): a change of such a route then makes the
    /// caller build, which resolves them again.
    onlink_used: bool,
}

/// The 12 bytes of Ethernet addresses a frame to `dst` from `src` starts with (the
/// destination first), as adjacencies keep them.
#[inline(always)]
pub(crate) fn eth_addrs(dst: MacAddr, src: MacAddr) -> [u8; 12] {
    let mut e = [0u8; 12];
    let mut f = EthernetFrame::new_unchecked(&mut e[..]);
    f.set_dst_addr(dst);
    f.set_src_addr(src);
    e
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
    /// The main table as a SID's `table`/`vrftable` names it, when there are rules:
    /// looked up without them, as the kernel's seg6local looks up a named table
    /// (`seg6_lookup_any_nexthop` with a table id), while [`Tables::MAIN`] is the
    /// ordinary lookup, which walks the rules. No FIB has this index: the route lookup
    /// reads the main FIB for it.
    pub const MAIN_BY_NAME: u32 = u32::MAX - 1;

    /// Looks up the Ethernet header (dst + src MAC) to reach `nh` on `dev`.
    #[inline(always)]
    pub fn neighbour_eth(&self, dev: DevId, nh: u128) -> Option<[u8; 12]> {
        let mac = self.neighbours.get(&(dev, nh))?;
        let src = self.devices.get(dev as usize)?.mac;
        Some(eth_addrs(*mac, src))
    }

    /// The longest frame the fast path takes (the field's docs say why).
    pub fn fast_max_len(&self) -> usize {
        self.fast_max_len
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

    /// Whether the fast path leaves every frame of device `dev` to the general path
    /// (an SR proxy's `iif`, whose returning packets the proxy takes).
    pub fn fast_path_declines(&self, dev: DevId) -> bool {
        self.fast_devs.proxy_in(dev)
    }

    /// The MTU of device `dev` (0 for a device that does not exist: nothing fits).
    #[inline]
    pub fn mtu(&self, dev: DevId) -> usize {
        self.devices.get(usize::from(dev)).map_or(0, |d| usize::from(d.mtu))
    }

    /// Index of the device named `name`.
    pub fn device_id(&self, name: &str) -> Option<DevId> {
        self.devices.iter().position(|d| d.name == name).map(|i| i as DevId)
    }

    /// The address an ICMPv6 error to `dst` about a packet received on `dev` is sent
    /// from, chosen as Linux's `icmp6_send` does with `ipv6_dev_get_saddr` (RFC 6724 §5)
    /// among the router's addresses that are not link-local: rule 5, an address of `dev`
    /// (the kernel's "more meaningful saddr from input if"); rule 8, the longest prefix in
    /// common with `dst`, counted up to the address's prefix length; on a tie, the
    /// address configured last on its device (the kernel lists a device's addresses
    /// newest first), devices in order. (Rules 1-4, 6 and 7 do not separate the
    /// addresses sr6 has: all global, none deprecated, home or temporary; label
    /// differences are not modelled.) Without any: `tunsrc`, else the first address.
    pub fn icmp6_source(&self, dev: DevId, dst: &Ipv6Addr) -> Ipv6Addr {
        let d = u128::from(*dst);
        let mut best: Option<((bool, u32), Ipv6Addr)> = None;
        for (i, device) in self.devices.iter().enumerate() {
            for (a, plen) in device.addrs6.iter().zip(&device.plens6).rev() {
                if is_link_local(a) {
                    continue;
                }
                let common = (u128::from(*a) ^ d).leading_zeros().min(u32::from(*plen));
                let score = (i == usize::from(dev), common);
                if best.is_none_or(|(b, _)| score > b) {
                    best = Some((score, *a));
                }
            }
        }
        if let Some((_, a)) = best {
            return a;
        }
        if let Some(t) = self.tunsrc {
            return t;
        }
        self.first_addr6.unwrap_or(Ipv6Addr::UNSPECIFIED)
    }

    /// The address an ICMPv4 error leaving `dev` toward the next hop `nh` (the gateway,
    /// or the destination itself on-link) is sent from, as Linux's `inet_select_addr`
    /// chooses the route's source: the first address of `dev` whose subnet holds `nh`,
    /// else the first of `dev`, else the first of any device.
    pub fn icmp4_source(&self, dev: DevId, nh: Ipv4Addr) -> Ipv4Addr {
        let on_subnet = self.devices.get(dev as usize).and_then(|d| {
            d.addrs4.iter().zip(&d.plens4).find(|(a, l)| mask4_u32(**a, **l) == mask4_u32(nh, **l)).map(|(a, _)| a)
        });
        on_subnet
            .or_else(|| self.devices.get(dev as usize).and_then(|d| d.addrs4.first()))
            .or_else(|| self.devices.iter().flat_map(|d| d.addrs4.iter()).next())
            .copied()
            .unwrap_or(Ipv4Addr::UNSPECIFIED)
    }

    /// Is `a` one of the router's own IPv4 addresses?
    pub fn is_local4(&self, a: u32) -> bool {
        matches!(self.fibs.first().and_then(|f| f.exact4.get(u128::from(a))), Some(Route::Local))
    }

    /// Is `a` the directed broadcast address of a connected subnet?
    pub fn is_bcast4(&self, a: u32) -> bool {
        self.bcast4.contains(&a)
    }

    /// Takes over the shared state (caches, counters) of the proxies of `old` that
    /// these tables keep — the same SID prefix, behaviour and `iif` device name — so
    /// that a rebuild (a route added at run time) does not empty their caches.
    pub fn adopt_proxies(&mut self, old: &Tables) {
        let key = |t: &Tables, p: &Proxy| {
            let s = t.sids.get(p.sid as usize)?;
            Some((s.prefix, s.behaviour.keyword, t.devices.get(usize::from(p.iif))?.name.clone()))
        };
        let keys: Vec<_> = self.proxies.iter().map(|p| key(self, p)).collect();
        for (p, k) in self.proxies.iter_mut().zip(keys) {
            let Some(k) = k else { continue };
            if let Some(o) = old.proxies.iter().find(|o| key(old, o).as_ref() == Some(&k)) {
                p.state = o.state.clone();
            }
        }
    }

    /// The End.Limit SIDs that these tables keep (the same prefix and action) take over
    /// the token buckets of `old`'s: the buckets are shared by the generations of the
    /// live router instead of starting full at each new set of tables (and, for the
    /// two copies that in-place changes alternate, instead of flipping between two sets).
    pub fn adopt_limiters(&mut self, old: &Tables) {
        if self.limiters.is_empty() || old.limiters.is_empty() {
            return;
        }
        let limit_sids = |t: &Tables| -> Vec<(usize, Prefix, SidAction)> {
            t.sids
                .iter()
                .filter(|s| s.behaviour.keyword == "End.Limit")
                .map(|s| (s.state.limiter as usize, s.prefix, s.action.clone()))
                .collect()
        };
        let theirs = limit_sids(old);
        for (i, prefix, action) in limit_sids(self) {
            let Some(&(j, ..)) = theirs.iter().find(|(_, p, a)| *p == prefix && *a == action) else { continue };
            if let (Some(l), Some(o)) = (self.limiters.get_mut(i), old.limiters.get(j)) {
                *l = o.clone();
            }
        }
    }

    /// Is `a` one of the router's own IPv6 addresses?
    pub fn is_local6(&self, a: &[u8; 16]) -> bool {
        matches!(self.fibs.first().and_then(|f| f.exact6.get(u128::from_be_bytes(*a))), Some(Route::Local))
    }
}

/// `a` with the bits past the first `len` cleared.
fn mask4_u32(a: Ipv4Addr, len: u8) -> u32 {
    u32::from(a) & u32::MAX.checked_shl(32 - u32::from(len.min(32))).unwrap_or(0)
}

/// The bit of [`Tables::local4_filter`] an IPv4 address sets (a multiplicative hash).
#[inline(always)]
pub(crate) fn local4_bit(a: u32) -> u64 {
    1 << (a.wrapping_mul(0x9e37_79b9) >> 26)
}

pub(crate) fn is_link_local(a: &Ipv6Addr) -> bool {
    a.segments()[0] & 0xffc0 == 0xfe80
}
