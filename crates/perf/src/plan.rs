//! The testbed's address plan and the forwarding configuration of each behaviour.
//!
//! ```text
//!   tester (ns tg)                      SUT (ns sut)
//!   tg0 fc00:a::2 / 10.0.1.2  ───────►  dut0 fc00:a::1 / 10.0.1.1
//!   tg1 fc00:b::2 / 10.0.2.2  ◄───────  dut1 fc00:b::1 / 10.0.2.1
//! ```
//!
//! Everything the tester sends enters the SUT on dut0 and must leave on dut1 towards
//! tg1: plain destinations and next segments are routed via fc00:b::2 / 10.0.2.2, whose
//! MAC the SUT knows from a static `neigh` line (no neighbour discovery during a trial).
//! [`config`] gives, per behaviour, the iproute2 lines of the SUT — the same lines for
//! the Linux kernel and for sr6 ([`unsupported`]: what the kernel cannot run here).
//!
//! An endpoint behaviour's lines, SID and traffic all come from its row of the behaviour
//! table (`sr6_core::behaviour::TABLE`), whatever the behaviour: one SID per row, its
//! required parameters given values from this address plan ([`sid_params`]). A new row
//! is measured without a change here.
//!
//! The compressed-SID rows ([`crate::model::CSID_ROWS`], RFC 9800) use a compressed
//! plan of their own, F3216 (Linux's default lengths): the block [`CSID_BLOCK`]
//! (fc00:0::/32), the SUT's C-SID of each row `0100 + i` (`fc00:0:100::/48` End,
//! `fc00:0:101::/48` End.X, ...: `flavors next-csid lblen 32 nflen 16`), and two C-SIDs to
//! come, `0200` and `0300`. The tester sends to `fc00:0:10i:200:300::`; the SUT shifts
//! the destination to `fc00:0:200:300::`, which it routes to tg1 (`fc00:0:200::/48`).
//! The REPLACE-C-SID row (§4.2, `fc00:0:103::/48`, `flavors replace-csid lblen 32
//! nflen 16`: 16-bit C-SIDs, 8 to a container, a 3-bit index) is sent to
//! `fc00:0:103::1` (index 1) with an SRH of one container, Segments Left 0, whose slot 0
//! is `0200` ([`csid_container`]); the SUT takes the index down to 0 and writes that
//! C-SID over its own: `fc00:0:200::`, routed to tg1 as above.
//!
//! The SR proxies (draft-ietf-spring-sr-service-programming §6) stand in front of a
//! service function; the tester plays the function, so the testbed stays two-node:
//!
//! - the table's rows (End.AS, End.AD, End.AM, ...) measure the direction *to* the
//!   function: the function is tg1 (`nh6` [`TG1_6`], `oif dut1`) and its packets come
//!   back on dut1 (`iif dut1`: both directions of one link, as the draft allows);
//! - the [`crate::model::PROXY_RETURN`] rows (End.AD-return, End.AM-return) measure the
//!   direction *from* it: the proxy's `iif` is dut0, so what the tester sends on tg0
//!   arrives as if from the function, and the proxy sends it on along the chain, to
//!   [`SEG1`] (routed to tg1). Their SID is `fc00:2::2:<row index>`.
//!
//! The HMAC rows ([`crate::model::HMAC_ROWS`], RFC 8754 §2.1.2) share one key per
//! algorithm, `ip sr hmac set 256 sha256 SECRET` or `ip sr hmac set 1 sha1 SECRET`
//! ([`crate::model::HMAC_SECRET`]; the kernel's iproute2 reads the secret from its
//! standard input, `driver::apply_to_kernel` gives it there). H.Encaps adds an HMAC TLV
//! (`encap seg6 mode encap segs SEG1,SEG2 hmac KEYID`, steered `fc00:104::1/128`, then
//! `fc00:105::1/128`); End verifies the one the tester computed on a dut0 that requires
//! it (`seg6_require_hmac=1`, its SID `fc00:2::5:<row>`).
//!
//! The mobile functions ([`crate::model::MOBILE`]; the GTP-U/SRv6 paper's six) carry
//! IPv4 user traffic to [`DST4`] in the GTP-U session TEID [`MOB_TEID`], QFI
//! [`MOB_QFI`]:
//!
//! | function | the tester sends | the SUT's line | what reaches tg1 |
//! |---|---|---|---|
//! | GTP-U.Encap | IPv4 to [`MOB_GTP_DST`] | `ip route add 10.101.0.1/32 encap gtp teid T dst 10.0.2.2 src 10.0.2.1 dev dut1` | GTP-U/IPv4 to tg1 |
//! | GTP-U.Decap | GTP-U/IPv4 to the UPF [`MOB_UPF`] | `ip route add 10.0.3.1/32 encap gtp decap dev dut0` | the inner IPv4 packet |
//! | SRv6.Encap | IPv4 to [`MOB_SR_DST`] | `ip route add 10.102.0.1/32 encap seg6 mode encap.red segs fc00:200::1 dev dut1` | IPv6 to SEG1, no SRH |
//! | SRv6.Decap | IPv6 to its End.DX4 SID, no SRH | `... action End.DX4 nh4 10.0.2.2` | the inner IPv4 packet |
//! | H.M.GTP4.D | GTP-U/IPv4 to [`MOB_TMAP`] | `ip route add 10.0.4.1/32 encap seg6local action H.M.GTP4.D sr-prefix fc00:4::/48 src-prefix fc00:5::/64 dev dut0` | IPv6 to `fc00:4:0:a00:401:0:1e2:4000` (routed to tg1), no SRH |
//! | End.M.GTP4.E | IPv6 from `fc00:7::a00:102:0:0` to `fc00:6:0:a64:1:0:1e2:4000` | `ip -6 route add fc00:6::/48 encap seg6local action End.M.GTP4.E v4src-position 64 dev dut0` | GTP-U/IPv4 10.0.1.2 -> 10.100.0.1 |

use std::fmt::Write;
use std::net::{Ipv4Addr, Ipv6Addr};
use std::path::Path;

use sr6_core::behaviour::{Behaviour, Param, Takes};

use crate::model::{Behavior, MobileKind, HMAC_SECRET};

pub const TG0: &str = "tg0";
pub const TG1: &str = "tg1";
pub const DUT0: &str = "dut0";
pub const DUT1: &str = "dut1";

pub const TG0_6: Ipv6Addr = Ipv6Addr::new(0xfc00, 0xa, 0, 0, 0, 0, 0, 2);
pub const DUT0_6: Ipv6Addr = Ipv6Addr::new(0xfc00, 0xa, 0, 0, 0, 0, 0, 1);
pub const DUT1_6: Ipv6Addr = Ipv6Addr::new(0xfc00, 0xb, 0, 0, 0, 0, 0, 1);
pub const TG1_6: Ipv6Addr = Ipv6Addr::new(0xfc00, 0xb, 0, 0, 0, 0, 0, 2);
pub const TG0_4: Ipv4Addr = Ipv4Addr::new(10, 0, 1, 2);
pub const DUT0_4: Ipv4Addr = Ipv4Addr::new(10, 0, 1, 1);
pub const DUT1_4: Ipv4Addr = Ipv4Addr::new(10, 0, 2, 1);
pub const TG1_4: Ipv4Addr = Ipv4Addr::new(10, 0, 2, 2);

/// Where the tester's traffic is going, per behaviour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Flow {
    /// Destination of the (outer) packet the tester sends: a plain destination for the
    /// transit behaviours, the SUT's SID for the endpoint behaviours (a C-SID container
    /// for the NEXT-C-SID rows).
    pub dst6: Option<Ipv6Addr>,
    /// For endpoint behaviours that consume a segment (Segments Left 1: End, End.X,
    /// End.B6, ...): the next segment (routed back to the tester); for the NEXT-C-SID
    /// rows, the destination once shifted (routed back too).
    pub next_sid: Option<Ipv6Addr>,
    /// Destination of the inner IPv6 packet (decapsulating behaviours) or of the plain
    /// IPv6 packet (transit).
    pub inner6: Ipv6Addr,
    /// Destination of IPv4 packets (plain or inner).
    pub inner4: Ipv4Addr,
    /// Source of the outer IPv6 header where it is not the tester's address: an
    /// End.M.GTP4.E row's, which carries the GTP-U source (RFC 9433 Fig. 10).
    pub src6: Option<Ipv6Addr>,
    /// The outer IPv4 destination of the GTP-U packets the tester sends (the mobile
    /// rows that take GTP-U).
    pub upf4: Option<Ipv4Addr>,
}

const fn a6(s: [u16; 8]) -> Ipv6Addr {
    Ipv6Addr::new(s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7])
}

/// Plain destinations behind tg1 (`fc00:100::/64`, `10.100.0.0/24`).
pub const DST6: Ipv6Addr = a6([0xfc00, 0x100, 0, 0, 0, 0, 0, 1]);
pub const DST4: Ipv4Addr = Ipv4Addr::new(10, 100, 0, 1);
/// Segments routed back to the tester (`fc00:200::/64`).
pub const SEG1: Ipv6Addr = a6([0xfc00, 0x200, 0, 0, 0, 0, 0, 1]);
pub const SEG2: Ipv6Addr = a6([0xfc00, 0x200, 0, 0, 0, 0, 0, 2]);

/// The mobile rows' GTP-U session: TEID and QFI. QFI 0, as in the paper (2019, before
/// 5G's PDU Session Container): GTP-U is 8 bytes, 36 with UDP and IPv4 (its Fig. 4).
pub const MOB_TEID: u32 = 0x0001_e240;
pub const MOB_QFI: u8 = 0;
/// GTP-U.Encap: the IPv4 destination the SUT encapsulates in GTP-U.
pub const MOB_GTP_DST: Ipv4Addr = Ipv4Addr::new(10, 101, 0, 1);
/// GTP-U.Decap: the SUT's UPF address, where GTP-U is decapsulated.
pub const MOB_UPF: Ipv4Addr = Ipv4Addr::new(10, 0, 3, 1);
/// SRv6.Encap: the IPv4 destination the SUT encapsulates in SRv6.
pub const MOB_SR_DST: Ipv4Addr = Ipv4Addr::new(10, 102, 0, 1);
/// H.M.GTP4.D: the UPF address whose route translates GTP-U to SRv6.
pub const MOB_TMAP: Ipv4Addr = Ipv4Addr::new(10, 0, 4, 1);
/// H.M.GTP4.D's `sr-prefix` (routed to tg1) and `src-prefix`.
pub const MOB_SR_PREFIX: Ipv6Addr = a6([0xfc00, 4, 0, 0, 0, 0, 0, 0]);
pub const MOB_SRC_PREFIX: Ipv6Addr = a6([0xfc00, 5, 0, 0, 0, 0, 0, 0]);
/// End.M.GTP4.E's locator (/48) and the tester's source prefix (/64: the IPv4 source
/// at bit 64, `v4src-position 64`).
pub const MOB_E_LOCATOR: Ipv6Addr = a6([0xfc00, 6, 0, 0, 0, 0, 0, 0]);
pub const MOB_E_SRC_PREFIX: Ipv6Addr = a6([0xfc00, 7, 0, 0, 0, 0, 0, 0]);
/// The length of the mobile prefixes (sr-prefix, End.M.GTP4.E's locator).
pub const MOB_PREFIX_LEN: u8 = 48;
/// The position of the IPv4 source in End.M.GTP4.E's source address.
pub const MOB_V4SRC_POSITION: u8 = 64;

/// A SID of RFC 9433 Fig. 9: `prefix` (its first `plen` bits), the IPv4 address, then
/// Args.Mob.Session (QFI 6 bits, R, U, TEID 32: §6.1), zeros after. Written from the
/// RFC's figures, not with sr6's code, so the tester checks sr6 rather than agrees with
/// it.
pub fn mobile_sid(prefix: Ipv6Addr, plen: u8, v4: Ipv4Addr, qfi: u8, teid: u32) -> Ipv6Addr {
    let args = u128::from(qfi & 0x3f) << 34 | u128::from(teid);
    let shift = 128 - u32::from(plen) - 32;
    let v = u128::from(prefix) | u128::from(u32::from(v4)) << shift | args << (shift - 40);
    Ipv6Addr::from(v)
}

/// The table the lookup behaviours' routes are in (`table 100`, `vrftable 100`).
pub const TABLE_ID: u32 = 100;

/// The NEXT-C-SID rows' locator block (32 bits) and C-SID length (16 bits).
pub const CSID_BLOCK: Ipv6Addr = a6([0xfc00, 0, 0, 0, 0, 0, 0, 0]);
pub const CSID_LBLEN: u8 = 32;
pub const CSID_NFLEN: u8 = 16;
/// The SUT's first C-SID (End); the other rows follow it.
pub const CSID_NODE: u16 = 0x0100;
/// The C-SIDs to come after the SUT's: the first routed to tg1 (`fc00:0:200::/48`).
pub const CSID_NEXT: [u16; 2] = [0x0200, 0x0300];

/// The SUT's SID of each endpoint behaviour (`fc00:2::1:<row index>`: one per row of
/// the behaviour table; `fc00:2::2:<row index>` for a proxy's return row, whose
/// frames go elsewhere: to the inner destination or, masqueraded, to [`SEG1`]), and
/// the steered prefix of each transit behaviour.
pub fn flow(b: Behavior) -> Flow {
    let steered = |n: u16| Some(a6([0xfc00, 0x100 + n, 0, 0, 0, 0, 0, 1]));
    let f = |dst6, next_sid| Flow { dst6, next_sid, inner6: DST6, inner4: DST4, src6: None, upf4: None };
    match b {
        Behavior::Ipv6 => f(Some(DST6), None),
        Behavior::Ipv4 => f(None, None),
        Behavior::TEncaps => f(steered(1), None),
        Behavior::TInsert => f(steered(2), None),
        Behavior::TEncapsL2 => f(steered(3), None),
        Behavior::Endpoint(e) => {
            let index = u16::try_from(e.index()).expect("fewer than 65536 behaviours");
            let sid = a6([0xfc00, 0x2, 0, 0, 0, 0, 1, index]);
            f(Some(sid), (e.row().takes == Takes::Segment).then_some(SEG1))
        }
        Behavior::ProxyReturn(_) => {
            let index = b.endpoint().and_then(|r| sr6_core::behaviour::TABLE.iter().position(|x| *x == r));
            let index = u16::try_from(index.unwrap_or(0)).expect("fewer than 65536 behaviours");
            f(Some(a6([0xfc00, 0x2, 0, 0, 0, 0, 2, index])), Some(SEG1))
        }
        Behavior::Csid(c) if c.replace => {
            // Block, the SUT's C-SID, an argument of index 1; then slot 0's C-SID, index 0.
            let [b0, b1, ..] = CSID_BLOCK.segments();
            f(Some(a6([b0, b1, csid_node(b), 0, 0, 0, 0, 1])), Some(a6([b0, b1, CSID_NEXT[0], 0, 0, 0, 0, 0])))
        }
        Behavior::Csid(_) => {
            // Block, the SUT's C-SID, the C-SIDs to come; after the shift, the next.
            let [b0, b1, ..] = CSID_BLOCK.segments();
            let [n1, n2] = CSID_NEXT;
            f(Some(a6([b0, b1, csid_node(b), n1, n2, 0, 0, 0])), Some(a6([b0, b1, n1, n2, 0, 0, 0, 0])))
        }
        // fc00:2::4:<row>: End.BPF SIDs, one per program.
        Behavior::Bpf(fun) => {
            let i = crate::model::END_BPF.iter().position(|x| x == fun).unwrap_or(0) as u16;
            f(Some(a6([0xfc00, 0x2, 0, 0, 0, 0, 4, i])), Some(SEG1))
        }
        // fc00:104::1, fc00:105::1: the H.Encaps rows' steered prefixes;
        // fc00:2::5:<row>: the verifying End SIDs.
        Behavior::Hmac(h) => {
            let i = crate::model::HMAC_ROWS.iter().position(|x| x == h).unwrap_or(0) as u16;
            if h.verify {
                f(Some(a6([0xfc00, 0x2, 0, 0, 0, 0, 5, i])), Some(SEG1))
            } else {
                f(steered(4 + i), None)
            }
        }
        Behavior::Mobile(m) => {
            let base = f(None, None);
            match m.kind {
                MobileKind::GtpEncap => Flow { inner4: MOB_GTP_DST, ..base },
                MobileKind::GtpDecap => Flow { upf4: Some(MOB_UPF), ..base },
                MobileKind::SrEncap => Flow { inner4: MOB_SR_DST, ..base },
                MobileKind::SrDecap => f(Some(a6([0xfc00, 0x2, 0, 0, 0, 0, 3, 0])), None),
                MobileKind::Gtp4D => Flow { upf4: Some(MOB_TMAP), ..base },
                MobileKind::Gtp4E => Flow {
                    dst6: Some(mobile_sid(MOB_E_LOCATOR, MOB_PREFIX_LEN, DST4, MOB_QFI, MOB_TEID)),
                    src6: Some(mobile_src(MOB_E_SRC_PREFIX, MOB_V4SRC_POSITION, TG0_4)),
                    ..base
                },
            }
        }
    }
}

/// A source address of RFC 9433 Fig. 10: `prefix`, the IPv4 source at bit `pos`.
pub fn mobile_src(prefix: Ipv6Addr, pos: u8, v4: Ipv4Addr) -> Ipv6Addr {
    Ipv6Addr::from(u128::from(prefix) | u128::from(u32::from(v4)) << (128 - u32::from(pos) - 32))
}

/// The SUT's C-SID of a NEXT-C-SID row (`CSID_NODE + i` for the i-th row; 0 for any
/// other behaviour).
fn csid_node(b: Behavior) -> u16 {
    let i = crate::model::CSID_ROWS.iter().position(|c| Some(c) == b.csid());
    i.map_or(0, |i| CSID_NODE + i as u16)
}

/// The C-SID container of the REPLACE-C-SID row's SRH: slot 0 (its first 16 bits) the
/// C-SID routed to tg1, the other slots empty.
pub fn csid_container() -> Ipv6Addr {
    a6([CSID_NEXT[0], 0, 0, 0, 0, 0, 0, 0])
}

/// The /48 locator of a compressed-SID row's SID (`fc00:0:100::/48`).
fn csid_prefix(b: Behavior) -> String {
    let [b0, b1, ..] = CSID_BLOCK.segments();
    format!("{}/{}", a6([b0, b1, csid_node(b), 0, 0, 0, 0, 0]), CSID_LBLEN + CSID_NFLEN)
}

/// The prefix the shifted destination falls in, routed to tg1 (`fc00:0:200::/48`).
fn csid_next_prefix() -> String {
    let [b0, b1, ..] = CSID_BLOCK.segments();
    format!("{}/{}", a6([b0, b1, CSID_NEXT[0], 0, 0, 0, 0, 0]), CSID_LBLEN + CSID_NFLEN)
}

/// Why a forwarder cannot run a behaviour (`None`: it can).
pub fn unsupported(forwarder: &str, b: Behavior) -> Option<String> {
    if let Some(m) = b.mobile() {
        return match forwarder {
            "linux" if !m.in_kernel() => Some(match m.kind {
                MobileKind::GtpEncap | MobileKind::GtpDecap => {
                    "the kernel's GTP-U is a gtp device configured with libgtpnl, not iproute2".to_string()
                }
                _ => format!("the kernel has no {}", m.name),
            }),
            _ => None,
        };
    }
    let row = b.endpoint()?;
    if sr6_core::behaviour::mobile::is_gtp(row) {
        return Some(format!("sr6 perf does not measure {} yet", row.keyword));
    }
    match forwarder {
        "linux" if b.csid().is_some_and(|c| c.replace) => {
            Some("the kernel has no REPLACE-C-SID (RFC 9800 §4.2; an sr6 extension)".to_string())
        }
        "linux" if b.csid().is_some_and(|c| !c.in_kernel) => {
            Some(format!("the kernel accepts flavours on {} but ignores them", row.keyword))
        }
        "linux" if !row.in_kernel => Some(format!("the kernel has no {}", row.keyword)),
        "linux" if row.required.contains(&Param::VrfTable) => {
            Some(format!("the kernel's {} needs a VRF device, which this testbed does not create", row.keyword))
        }
        _ => None,
    }
}

/// The parameters a SID of `row` is configured with, as written after its keyword
/// (`nh6 fc00:b::2`): each required one, with a value from the address plan. Next hops
/// are tg1, the output device dut1, tables [`TABLE_ID`] (where [`config`] puts routes
/// towards tg1), a binding SID's policy the one segment [`SEG1`], a mapped SID (End.MAP)
/// [`SEG2`], routed to tg1 like the next segments. A lookup whose table
/// is optional (End.DT6: sr6 defaults to the main table, the kernel insists on `table`
/// or `vrftable`) gets the main table, 254, where the plain routes are.
pub fn sid_params(row: &Behaviour) -> Vec<(Param, String)> {
    let mut out: Vec<(Param, String)> = row
        .required
        .iter()
        .map(|&p| {
            let v = match p {
                Param::Nh6 => TG1_6.to_string(),
                Param::Nh4 => TG1_4.to_string(),
                Param::Oif => DUT1.to_string(),
                Param::Table | Param::VrfTable => TABLE_ID.to_string(),
                Param::Srh => format!("segs {SEG1}"),
                Param::Map => SEG2.to_string(),
                // An SR proxy's function is the tester behind dut1 (End.AS restores
                // the one segment SEG1 from dut0's address).
                Param::Iif => DUT1.to_string(),
                Param::Src => DUT0_6.to_string(),
                Param::Segs => SEG1.to_string(),
                // End.Limit's are optional: a /128 End.Limit without a rate is End.
                Param::GroupBits => "0".to_string(),
                Param::Rate => "0".to_string(),
                Param::Burst => "15000".to_string(),
                // The mobile behaviours (RFC 9433) are not in the experiments yet.
                Param::V4SrcPosition => "64".to_string(),
                Param::SrPrefix | Param::SrcPrefix => "fc00:4::/48".to_string(),
                // The End.BPF rows name their own program (config_in).
                Param::Endpoint => "obj end.o sec end".to_string(),
            };
            (p, v)
        })
        .collect();
    // An SR proxy whose next hop is optional (End.AS, End.AD) gets an IPv6 function,
    // the inner packet of the tester's segment traffic.
    if row.required.contains(&Param::Iif) && row.optional.contains(&Param::Nh6) {
        out.push((Param::Nh6, TG1_6.to_string()));
    }
    let looks_up = |p: &Param| matches!(p, Param::Table | Param::VrfTable);
    if !row.required.iter().any(looks_up) && row.optional.contains(&Param::Table) {
        out.push((Param::Table, "254".into()));
    }
    out
}

/// The SUT's configuration for behaviour `b` (iproute2 lines; the leading `ip` kept so
/// the same text configures the kernel). `tg1_mac` is the tester's receiving MAC. An
/// End.BPF row names its object relative to the configuration file ([`config_in`]
/// names it in a directory).
pub fn config(b: Behavior, tg1_mac: &str) -> String {
    config_in(b, tg1_mac, Path::new(""))
}

/// [`config`] with an End.BPF row's object in `objects` (where
/// [`crate::bpf_objects::build`] compiled it): the kernel's iproute2 runs elsewhere
/// than the configuration file, so its line needs the whole path.
pub fn config_in(b: Behavior, tg1_mac: &str, objects: &Path) -> String {
    let mut c = format!(
        "ip -6 addr add {DUT0_6}/64 dev {DUT0}\n\
         ip -6 addr add {DUT1_6}/64 dev {DUT1}\n\
         ip addr add {DUT0_4}/24 dev {DUT0}\n\
         ip addr add {DUT1_4}/24 dev {DUT1}\n\
         ip -6 neigh add {TG1_6} lladdr {tg1_mac} dev {DUT1}\n\
         ip neigh add {TG1_4} lladdr {tg1_mac} dev {DUT1}\n\
         ip -6 route add fc00:100::/64 via {TG1_6} dev {DUT1}\n\
         ip -6 route add fc00:200::/64 via {TG1_6} dev {DUT1}\n\
         ip route add 10.100.0.0/24 via {TG1_4} dev {DUT1}\n\
         sysctl -w net.ipv6.conf.all.forwarding=1\n\
         sysctl -w net.ipv4.ip_forward=1\n\
         sysctl -w net.ipv6.conf.all.seg6_enabled=1\n\
         sysctl -w net.ipv6.conf.{DUT0}.seg6_enabled=1\n"
    );
    let fl = flow(b);
    let dst = fl.dst6.map(|d| d.to_string()).unwrap_or_default();
    let line = match b {
        Behavior::Ipv6 | Behavior::Ipv4 => String::new(),
        Behavior::TEncaps => format!("ip -6 route add {dst}/128 encap seg6 mode encap segs {SEG1},{SEG2} dev {DUT1}\n"),
        Behavior::TInsert => format!("ip -6 route add {dst}/128 encap seg6 mode inline segs {SEG1} dev {DUT1}\n"),
        Behavior::TEncapsL2 => {
            format!("ip -6 route add {dst}/128 encap seg6 mode l2encap segs {SEG1},{SEG2} dev {DUT1}\n")
        }
        Behavior::Endpoint(e) => endpoint_lines(e.row(), &format!("{dst}/128"), "", tg1_mac, DUT1),
        // The function's packets come back on dut0, from the tester.
        Behavior::ProxyReturn(_) => match b.endpoint() {
            Some(row) => endpoint_lines(row, &format!("{dst}/128"), "", tg1_mac, DUT0),
            None => String::new(),
        },
        Behavior::Csid(_) => match b.endpoint() {
            Some(row) => {
                let next = csid_next_prefix();
                let mut o = format!("ip -6 route add {next} via {TG1_6} dev {DUT1}\n");
                if row.required.iter().any(|p| matches!(p, Param::Table | Param::VrfTable)) {
                    let _ = writeln!(o, "ip -6 route add {next} via {TG1_6} dev {DUT1} table {TABLE_ID}");
                }
                let flavour = if b.csid().is_some_and(|c| c.replace) { "replace-csid" } else { "next-csid" };
                let flavors = format!(" flavors {flavour} lblen {CSID_LBLEN} nflen {CSID_NFLEN}");
                o.push_str(&endpoint_lines(row, &csid_prefix(b), &flavors, tg1_mac, DUT1));
                o
            }
            None => String::new(),
        },
        Behavior::Mobile(m) => mobile_lines(b, m.kind, tg1_mac),
        Behavior::Hmac(h) => {
            let mut o = format!("ip sr hmac set {} {} {HMAC_SECRET}\n", h.key_id, h.alg);
            match b.endpoint() {
                Some(row) if h.verify => {
                    let _ = writeln!(o, "sysctl -w net.ipv6.conf.{DUT0}.seg6_require_hmac=1");
                    o.push_str(&endpoint_lines(row, &format!("{dst}/128"), "", tg1_mac, DUT1));
                }
                _ => {
                    let _ = writeln!(
                        o,
                        "ip -6 route add {dst}/128 encap seg6 mode encap segs {SEG1},{SEG2} hmac {} dev {DUT1}",
                        h.key_id
                    );
                }
            }
            o
        }
        Behavior::Bpf(fun) => {
            // End.T through the helper looks up table TABLE_ID: routes towards tg1 there.
            let mut o = format!(
                "ip -6 route add fc00:200::/64 via {TG1_6} dev {DUT1} table {TABLE_ID}\n\
                 ip -6 route add fc00:100::/64 via {TG1_6} dev {DUT1} table {TABLE_ID}\n"
            );
            let obj = objects.join(fun.object());
            let _ = writeln!(
                o,
                "ip -6 route add {dst}/128 encap seg6local action End.BPF endpoint obj {} sec {} dev {DUT0}",
                obj.display(),
                fun.section
            );
            o
        }
    };
    c.push_str(&line);
    c
}

/// The lines of a mobile function (see the module docs' table).
fn mobile_lines(b: Behavior, kind: MobileKind, tg1_mac: &str) -> String {
    let sr = format!("{MOB_SR_PREFIX}/{MOB_PREFIX_LEN}");
    match kind {
        MobileKind::GtpEncap => {
            format!("ip route add {MOB_GTP_DST}/32 encap gtp teid {MOB_TEID} dst {TG1_4} src {DUT1_4} dev {DUT1}\n")
        }
        MobileKind::GtpDecap => format!("ip route add {MOB_UPF}/32 encap gtp decap dev {DUT0}\n"),
        MobileKind::SrEncap => {
            format!("ip route add {MOB_SR_DST}/32 encap seg6 mode encap.red segs {SEG1} dev {DUT1}\n")
        }
        MobileKind::SrDecap => {
            let sid = flow(b).dst6.unwrap_or(Ipv6Addr::UNSPECIFIED);
            match sr6_core::behaviour::by_keyword("End.DX4") {
                Some(row) => endpoint_lines(row, &format!("{sid}/128"), "", tg1_mac, DUT1),
                None => String::new(),
            }
        }
        MobileKind::Gtp4D => format!(
            "ip -6 route add {sr} via {TG1_6} dev {DUT1}\n\
             ip route add {MOB_TMAP}/32 encap seg6local action H.M.GTP4.D sr-prefix {sr} \
             src-prefix {MOB_SRC_PREFIX}/64 dev {DUT0}\n"
        ),
        MobileKind::Gtp4E => format!(
            "ip -6 route add {MOB_E_LOCATOR}/{MOB_PREFIX_LEN} encap seg6local action End.M.GTP4.E \
             v4src-position {MOB_V4SRC_POSITION} dev {DUT0}\n"
        ),
    }
}

/// The lines of an endpoint behaviour: what its parameters need, then its SID `prefix`
/// (`SID/128`, or a C-SID's /48) with `flavors` (empty, or ` flavors ...`). An SR
/// proxy's function sends its packets back on `iif` (dut1, or dut0 for a return row).
fn endpoint_lines(row: &Behaviour, prefix: &str, flavors: &str, tg1_mac: &str, iif: &str) -> String {
    let mut params = sid_params(row);
    for (p, v) in &mut params {
        if *p == Param::Iif {
            *v = iif.to_string();
        }
    }
    let mut o = String::new();
    if params.iter().any(|(p, _)| *p == Param::Nh4) {
        // The kernel looks nh4 up as a route and, nh4 being on-link, resolves the
        // *inner destination* on dut1 rather than nh4 (seg6_local.c looks up nh4 with
        // ip_route_input and a connected route has no gateway): give it that neighbour.
        // sr6 sends to nh4's MAC (RFC 8986 §4.5's adjacency) and does not need it.
        let _ = writeln!(o, "ip neigh add {DST4} lladdr {tg1_mac} dev {DUT1}");
    }
    if row.required.iter().any(|p| matches!(p, Param::Table | Param::VrfTable)) {
        // The table the SID looks up in: next segments and plain destinations via tg1.
        let _ = write!(
            o,
            "ip -6 route add fc00:200::/64 via {TG1_6} dev {DUT1} table {TABLE_ID}\n\
             ip -6 route add fc00:100::/64 via {TG1_6} dev {DUT1} table {TABLE_ID}\n\
             ip route add 10.100.0.0/24 via {TG1_4} dev {DUT1} table {TABLE_ID}\n"
        );
    }
    let _ = write!(o, "ip -6 route add {prefix} encap seg6local action {}", row.keyword);
    for (p, v) in &params {
        let _ = write!(o, " {} {v}", p.keyword());
    }
    let _ = writeln!(o, "{flavors} dev {DUT0}");
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The configuration of `b` with tg1 at 02:00:00:00:00:02; an End.BPF row's object
    /// compiled into a directory of this process (clang: scripts/setup.sh).
    fn test_config(b: Behavior) -> String {
        // A directory per test thread: two tests writing one object at once break it.
        let thread = format!("{:?}", std::thread::current().id()).replace(|c: char| !c.is_ascii_digit(), "");
        let dir = std::env::temp_dir().join(format!("sr6-perf-plan-{}-{thread}", std::process::id()));
        if let Some(f) = b.bpf() {
            crate::bpf_objects::build(&dir, f).unwrap();
        }
        config_in(b, "02:00:00:00:00:02", &dir)
    }

    #[test]
    fn every_behaviour_configures_sr6() {
        for &b in Behavior::all() {
            let text = test_config(b);
            let spec = sr6_config::parse_str(&text, b.name()).unwrap_or_else(|e| panic!("{}: {e}", b.name()));
            sr6_core::tables::Tables::build(&spec).unwrap_or_else(|e| panic!("{}: {}", b.name(), e.message));
        }
    }

    #[test]
    fn sids_are_distinct() {
        let mut d: Vec<_> = Behavior::all().iter().filter_map(|b| flow(*b).dst6).collect();
        let n = d.len();
        d.sort();
        d.dedup();
        assert_eq!(d.len(), n, "one destination per behaviour (ipv4 has none)");
        // Nor do the mobile rows whose traffic is IPv4: plain or GTP-U.
        let v4 = crate::model::MOBILE.iter().filter(|m| !matches!(m.kind, MobileKind::SrDecap | MobileKind::Gtp4E));
        assert_eq!(n, Behavior::all().len() - 1 - v4.count());
    }

    fn line_of(b: &str) -> String {
        let b = Behavior::parse(b).unwrap();
        let c = config(b, "02:00:00:00:00:02");
        let base = config(Behavior::Ipv6, "02:00:00:00:00:02");
        let sid = flow(b).dst6.unwrap().to_string();
        c.strip_prefix(&base).unwrap().replace(&sid, "SID")
    }

    #[test]
    fn hmac_rows_set_a_key_and_use_it() {
        let e = line_of("H.Encaps-hmac-sha256");
        assert_eq!(
            e,
            format!(
                "ip sr hmac set 256 sha256 {HMAC_SECRET}\n\
                 ip -6 route add SID/128 encap seg6 mode encap segs fc00:200::1,fc00:200::2 hmac 256 dev dut1\n"
            )
        );
        assert!(line_of("H.Encaps-hmac-sha1").contains(" hmac 1 dev dut1\n"));
        assert_eq!(
            line_of("End-hmac-sha1"),
            format!(
                "ip sr hmac set 1 sha1 {HMAC_SECRET}\n\
                 sysctl -w net.ipv6.conf.dut0.seg6_require_hmac=1\n\
                 ip -6 route add SID/128 encap seg6local action End dev dut0\n"
            )
        );
        // sr6 reads the key and the requirement from the same lines.
        let text = config(Behavior::parse("End-hmac-sha256").unwrap(), "02:00:00:00:00:02");
        let spec = sr6_config::parse_str(&text, "End-hmac-sha256").unwrap();
        assert_eq!(spec.hmac_keys.iter().map(|k| k.key_id).collect::<Vec<_>>(), [256]);
    }

    #[test]
    fn endpoint_lines_come_from_the_table() {
        assert_eq!(line_of("End"), "ip -6 route add SID/128 encap seg6local action End dev dut0\n");
        assert_eq!(line_of("End.X"), "ip -6 route add SID/128 encap seg6local action End.X nh6 fc00:b::2 dev dut0\n");
        assert_eq!(
            line_of("End.DX6"),
            "ip -6 route add SID/128 encap seg6local action End.DX6 nh6 fc00:b::2 dev dut0\n"
        );
        assert_eq!(line_of("End.DX2"), "ip -6 route add SID/128 encap seg6local action End.DX2 oif dut1 dev dut0\n");
        assert_eq!(line_of("End.DT6"), "ip -6 route add SID/128 encap seg6local action End.DT6 table 254 dev dut0\n");
        assert_eq!(
            line_of("End.DX4"),
            "ip neigh add 10.100.0.1 lladdr 02:00:00:00:00:02 dev dut1\n\
             ip -6 route add SID/128 encap seg6local action End.DX4 nh4 10.0.2.2 dev dut0\n"
        );
        let table100 = "ip -6 route add fc00:200::/64 via fc00:b::2 dev dut1 table 100\n\
                        ip -6 route add fc00:100::/64 via fc00:b::2 dev dut1 table 100\n\
                        ip route add 10.100.0.0/24 via 10.0.2.2 dev dut1 table 100\n";
        for (b, p) in [("End.T", "table 100"), ("End.DT4", "vrftable 100"), ("End.DT46", "vrftable 100")] {
            let want = format!("{table100}ip -6 route add SID/128 encap seg6local action {b} {p} dev dut0\n");
            assert_eq!(line_of(b), want);
        }
        for b in ["End.B6", "End.B6.Encaps", "End.B6.Encaps.Red"] {
            let want = format!("ip -6 route add SID/128 encap seg6local action {b} srh segs fc00:200::1 dev dut0\n");
            assert_eq!(line_of(b), want);
        }
    }

    /// The SR proxies' function is tg1 (nh6 fc00:b::2 out of dut1); its packets come
    /// back on dut1 for the rows of the direction to it, on dut0 (from the tester) for
    /// the return rows.
    #[test]
    fn proxy_lines_put_the_function_behind_dut1() {
        assert_eq!(
            line_of("End.AD"),
            "ip -6 route add SID/128 encap seg6local action End.AD oif dut1 iif dut1 nh6 fc00:b::2 dev dut0\n"
        );
        assert_eq!(
            line_of("End.AD-return"),
            "ip -6 route add SID/128 encap seg6local action End.AD oif dut1 iif dut0 nh6 fc00:b::2 dev dut0\n"
        );
        assert_eq!(
            line_of("End.AM"),
            "ip -6 route add SID/128 encap seg6local action End.AM nh6 fc00:b::2 oif dut1 iif dut1 dev dut0\n"
        );
        assert_eq!(
            line_of("End.AM-return"),
            "ip -6 route add SID/128 encap seg6local action End.AM nh6 fc00:b::2 oif dut1 iif dut0 dev dut0\n"
        );
        // A return row's SID is its own (`fc00:2::2:<row index>`), the next segment SEG1.
        for (kw, i) in [("End.AD", 14), ("End.AM", 17)] {
            assert_eq!(sr6_core::behaviour::TABLE[i].keyword, kw);
            let f = flow(Behavior::parse(&format!("{kw}-return")).unwrap());
            assert_eq!(f.dst6, Some(a6([0xfc00, 2, 0, 0, 0, 0, 2, i as u16])), "{kw}");
            assert_eq!(f.next_sid, Some(SEG1), "{kw}");
        }
    }

    #[test]
    fn next_csid_rows_shift_towards_the_tester() {
        let end = "ip -6 route add fc00:0:200::/48 via fc00:b::2 dev dut1\n\
                   ip -6 route add fc00:0:100::/48 encap seg6local action End \
                   flavors next-csid lblen 32 nflen 16 dev dut0\n";
        assert_eq!(line_of("End-next-csid"), end);
        let x = "ip -6 route add fc00:0:200::/48 via fc00:b::2 dev dut1\n\
                 ip -6 route add fc00:0:101::/48 encap seg6local action End.X nh6 fc00:b::2 \
                 flavors next-csid lblen 32 nflen 16 dev dut0\n";
        assert_eq!(line_of("End.X-next-csid"), x);
        let t = line_of("End.T-next-csid");
        assert!(t.contains("ip -6 route add fc00:0:200::/48 via fc00:b::2 dev dut1 table 100\n"), "{t}");
        assert!(
            t.ends_with("ip -6 route add fc00:0:102::/48 encap seg6local action End.T table 100 flavors next-csid lblen 32 nflen 16 dev dut0\n"),
            "{t}"
        );
        // The destination: block, the row's C-SID, two to come; shifted once, the
        // next C-SID is in the prefix routed to tg1.
        for (name, node) in [("End-next-csid", "100"), ("End.X-next-csid", "101"), ("End.T-next-csid", "102")] {
            let f = flow(Behavior::parse(name).unwrap());
            assert_eq!(f.dst6.unwrap().to_string(), format!("fc00:0:{node}:200:300::"), "{name}");
            assert_eq!(f.next_sid.unwrap().to_string(), "fc00:0:200:300::", "{name}");
        }
    }

    /// The REPLACE-C-SID row: its own C-SID with the flavour, index 1 in the
    /// destination, the next C-SID routed to tg1 as the NEXT-C-SID rows' is.
    #[test]
    fn the_replace_csid_row_takes_slot_0_of_its_container() {
        let b = Behavior::parse("End-replace-csid").unwrap();
        let l = line_of("End-replace-csid");
        assert_eq!(
            l,
            "ip -6 route add fc00:0:200::/48 via fc00:b::2 dev dut1\n\
             ip -6 route add fc00:0:103::/48 encap seg6local action End \
             flavors replace-csid lblen 32 nflen 16 dev dut0\n"
        );
        let f = flow(b);
        assert_eq!(f.dst6.unwrap().to_string(), "fc00:0:103::1");
        assert_eq!(f.next_sid.unwrap().to_string(), "fc00:0:200::");
        assert_eq!(csid_container().to_string(), "200::");
        assert!(unsupported("linux", b).unwrap().contains("no REPLACE-C-SID"));
        assert_eq!(unsupported("sr6", b), None);
    }

    /// sr6's pipeline, given each behaviour's configuration, sends the tester's frame
    /// (the template the tester sends, addressed as on a testbed) out of dut1 to tg1's
    /// MAC; a NEXT-C-SID row with the destination shifted by one C-SID, hop limit - 1.
    #[test]
    fn every_template_comes_back_to_the_tester_through_sr6() {
        use sr6_core::packet::{PacketBuf, Verdict};
        use sr6_core::pipeline::Worker;
        use sr6_core::tables::Tables;
        let tg1_mac = [0x02, 0, 0, 0, 0, 0x02];
        // The mobile rows at the paper's short and long sizes too.
        let sizes = |b: Behavior| if b.mobile().is_some() { vec![64, 46, 1460] } else { vec![64] };
        for (b, inner_len) in Behavior::all().iter().flat_map(|&b| sizes(b).into_iter().map(move |n| (b, n))) {
            let spec = sr6_config::parse_str(&test_config(b), b.name()).unwrap();
            let (t, _) = Tables::build(&spec).unwrap_or_else(|e| panic!("{}: {}", b.name(), e.message));
            let (dut0, dut1) = (t.device_id(DUT0).unwrap(), t.device_id(DUT1).unwrap());
            let a = crate::tester::addressing_with(
                [[2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 3], [2, 0, 0, 0, 0, 4], tg1_mac],
                b,
            );
            let a = crate::traffic::Addressing { inner_len, ..a };
            // A dynamic proxy's cache, filled from dut1 (its iif is dut0).
            if let Some(f) = crate::traffic::warm_up_frame(b, &a) {
                let mut w = Worker::new(&t);
                let mut p = PacketBuf::new();
                assert!(p.load(&f, dut1));
                w.process(&t, &mut p);
                assert_eq!(p.verdict, Verdict::Tx(dut1), "{}: the warm-up frame goes to the function", b.name());
                assert_eq!(&p.data()[..6], &tg1_mac, "{}", b.name());
            }
            for tpl in crate::traffic::templates(b, &a) {
                let mut w = Worker::new(&t);
                let mut p = PacketBuf::new();
                assert!(p.load(&tpl.frame, dut0));
                w.process(&t, &mut p);
                let what = format!("{} stream {} ({inner_len} B)", b.name(), tpl.stream);
                assert_eq!(p.verdict, Verdict::Tx(dut1), "{what}");
                assert_eq!(&p.data()[..6], &tg1_mac, "{what}");
                if let (Some(next), Some(c)) = (flow(b).next_sid, b.csid()) {
                    let ip = &p.data()[14..];
                    let nh = if c.replace { 43 } else { 41 };
                    assert_eq!((ip[6], ip[7]), (nh, 63), "{what}: SRH (REPLACE-C-SID) or none, hop limit 64 - 1");
                    assert_eq!(&ip[24..40], &next.octets(), "{what}: the destination's next C-SID");
                    assert_eq!(&ip[40..], &tpl.frame[54..], "{what}: the SRH and inner packet as sent");
                }
                if b.proxy_return().is_some() {
                    proxy_sent_on(&p.data()[14..], &tpl.frame[14..], flow(b), &what);
                }
                if let Some(m) = b.mobile() {
                    let inner = &tpl.frame[tpl.frame.len() - inner_len..];
                    mobile_sent_on(m.kind, &p.data()[14..], inner, &what);
                }
                if let Some(f) = b.bpf() {
                    bpf_sent_on(f, &p.data()[14..], &tpl.frame[14..], &what);
                }
            }
        }
    }

    /// What an End.BPF row sends to tg1 (`out`) for the packet `sent` (IPv6 + SRH
    /// [SEG1, SID], Segments Left 1): the segment consumed (destination SEG1, Segments
    /// Left 0, hop limit 64 - 1), and what the program did: nothing more (End), Tag + 1
    /// and Flags 0x20 (Tag++), an 8-byte TLV after the segments (Add TLV; action.c's
    /// End.T changes no byte, its table routes SEG1 to tg1 too).
    fn bpf_sent_on(f: &crate::model::BpfFn, out: &[u8], sent: &[u8], what: &str) {
        let mut want = sent.to_vec();
        want[7] -= 1;
        want[24..40].copy_from_slice(&SEG1.octets());
        want[43] = 0;
        match f.section {
            "tag_inc" => {
                let tag = u16::from_be_bytes([sent[46], sent[47]]).wrapping_add(1);
                want[46..48].copy_from_slice(&tag.to_be_bytes());
                want[45] = 0x20;
            }
            "add_tlv" => {
                let end = 40 + (usize::from(sent[41]) + 1) * 8;
                // tlv.c's TLV: type 0x7e, length 6, values 1 to 6.
                want.splice(end..end, [0x7e, 6, 1, 2, 3, 4, 5, 6]);
                want[41] += 1;
                let plen = u16::from_be_bytes([sent[4], sent[5]]) + 8;
                want[4..6].copy_from_slice(&plen.to_be_bytes());
            }
            _ => {}
        }
        assert_eq!(out, &want[..], "{what}");
    }

    /// What a mobile function sends to tg1 (`out`, from its IP header) for the user
    /// packet `inner` (IPv4, as the tester sent it), built from the paper's Fig. 4 and
    /// RFC 9433's figures: GTP-U with the session's TEID, IPv6 with no SRH, or the
    /// user packet itself, TTL 64 - 1 where the SUT routed it.
    fn mobile_sent_on(kind: MobileKind, out: &[u8], inner: &[u8], what: &str) {
        use sr6_wire::{Ipv4Packet, Ipv6Packet};
        let mut routed = inner.to_vec();
        routed[8] -= 1;
        routed[10..12].fill(0);
        let csum = sr6_wire::checksum::fold(sr6_wire::checksum::sum(&routed[..20]));
        routed[10..12].copy_from_slice(&csum.to_be_bytes());
        let gtpu = |out: &[u8], src: Ipv4Addr, dst: Ipv4Addr| {
            let ip = Ipv4Packet::new_checked(out).unwrap_or_else(|e| panic!("{what}: {e:?}"));
            assert_eq!((ip.src_addr(), ip.dst_addr(), ip.protocol()), (src, dst, 17), "{what}");
            assert_eq!(sr6_wire::checksum::fold(sr6_wire::checksum::sum(&out[..20])), 0, "{what}: IPv4 checksum");
            let udp = &out[20..];
            assert_eq!(&udp[..4], &[0x08, 0x68, 0x08, 0x68], "{what}: UDP 2152 -> 2152");
            assert_eq!(usize::from(u16::from_be_bytes([udp[4], udp[5]])), udp.len(), "{what}");
            let g = &udp[8..];
            assert_eq!((g[0] & 0xe0, g[0] & 0x10, g[1]), (0x20, 0x10, 0xff), "{what}: GTPv1-U T-PDU");
            assert_eq!(u32::from_be_bytes([g[4], g[5], g[6], g[7]]), MOB_TEID, "{what}: TEID");
            assert_eq!(usize::from(u16::from_be_bytes([g[2], g[3]])), g.len() - 8, "{what}");
            g[8..].to_vec()
        };
        match kind {
            MobileKind::GtpEncap => assert_eq!(gtpu(out, DUT1_4, TG1_4), routed, "{what}"),
            MobileKind::Gtp4E => assert_eq!(gtpu(out, TG0_4, DST4), inner, "{what}"),
            MobileKind::GtpDecap | MobileKind::SrDecap => assert_eq!(out, &routed[..], "{what}"),
            MobileKind::SrEncap | MobileKind::Gtp4D => {
                let ip = Ipv6Packet::new_checked(out).unwrap_or_else(|e| panic!("{what}: {e:?}"));
                assert_eq!(ip.next_header(), 4, "{what}: no SRH");
                let (src, dst) = if kind == MobileKind::SrEncap {
                    (DUT0_6, SEG1)
                } else {
                    let sid = mobile_sid(MOB_SR_PREFIX, MOB_PREFIX_LEN, MOB_TMAP, MOB_QFI, MOB_TEID);
                    (mobile_src(MOB_SRC_PREFIX, 64, TG0_4), sid)
                };
                assert_eq!(ip.dst_addr(), dst, "{what}");
                if kind == MobileKind::Gtp4D {
                    assert_eq!(ip.src_addr(), src, "{what}");
                }
                assert_eq!(ip.payload(), inner, "{what}: the user packet as sent (RFC 8986 §5.1)");
            }
        }
    }

    /// What a proxy sends on along the chain (`out`, from its IPv6 header) for the
    /// function's packet `sent`: to the next segment SEG1 at Segments Left 0, with the
    /// SRH `[SEG1, SID]`, hop limit 64 - 1 — End.AD pushed back the headers it cached
    /// (the warm-up frame's outer headers after the draft's End step, §6.2.1, which
    /// leaves the hop limit), then forwarded them; End.AM de-masqueraded (an End step,
    /// §6.4) — and the inner packet as sent.
    fn proxy_sent_on(out: &[u8], sent: &[u8], f: Flow, what: &str) {
        use sr6_wire::{Ipv6Packet, SrhPacket};
        let ip = Ipv6Packet::new_checked(out).unwrap_or_else(|e| panic!("{what}: {e:?}"));
        assert_eq!((ip.dst_addr(), ip.src_addr()), (SEG1, TG0_6), "{what}");
        assert_eq!(ip.next_header(), 43, "{what}");
        assert_eq!(usize::from(ip.payload_len()), out.len() - 40, "{what}");
        let srh = SrhPacket::new_checked(ip.payload()).unwrap_or_else(|e| panic!("{what}: {e:?}"));
        assert_eq!((srh.routing_type(), srh.segments_left(), srh.last_entry()), (4, 0, 1), "{what}");
        assert_eq!(srh.segments().collect::<Vec<_>>(), [SEG1, f.dst6.unwrap()], "{what}");
        assert_eq!(srh.next_header(), 41, "{what}");
        let inner = &ip.payload()[srh.header_len()..];
        let sent_inner = if sent[6] == 43 { &sent[80..] } else { sent };
        assert_eq!(ip.hop_limit(), 63, "{what}");
        assert_eq!(inner, sent_inner, "{what}: the function's packet, as it sent it");
    }

    #[test]
    fn bpf_rows_name_their_object_and_table() {
        let f = &crate::model::END_BPF[3];
        let c = config_in(Behavior::Bpf(f), "02:00:00:00:00:02", Path::new("/run/x"));
        assert!(
            c.contains("ip -6 route add fc00:2::4:3/128 encap seg6local action End.BPF endpoint obj /run/x/action.o sec end_t dev dut0\n"),
            "{c}"
        );
        // action.c's End.T looks up table 100, where the plan routes the next segment.
        assert_eq!(TABLE_ID, 100);
        assert!(c.contains(&format!("ip -6 route add fc00:200::/64 via {TG1_6} dev {DUT1} table 100\n")), "{c}");
        assert!(config(Behavior::Bpf(f), "02:00:00:00:00:02").contains(" obj action.o sec end_t "));
    }

    #[test]
    fn sids_and_next_segments_follow_the_table() {
        for (i, row) in sr6_core::behaviour::TABLE.iter().enumerate() {
            if sr6_core::behaviour::mobile::is_gtp(row) || crate::model::needs_object(row) {
                continue;
            }
            let f = flow(Behavior::parse(row.keyword).unwrap());
            assert_eq!(f.dst6, Some(a6([0xfc00, 2, 0, 0, 0, 0, 1, i as u16])), "{}", row.keyword);
            let segment = row.takes == Takes::Segment;
            assert_eq!(f.next_sid, segment.then_some(SEG1), "{}", row.keyword);
        }
        assert_eq!(flow(Behavior::parse("End").unwrap()).dst6.unwrap().to_string(), "fc00:2::1:0");
    }

    #[test]
    fn what_the_kernel_cannot_run() {
        let no: Vec<&str> =
            Behavior::all().iter().filter(|b| unsupported("linux", **b).is_some()).map(|b| b.name()).collect();
        // The kernel's rows that need a VRF, then the sr6 extensions, whatever rows are
        // added after these.
        let extensions: Vec<&str> = sr6_core::behaviour::TABLE
            .iter()
            .filter(|r| !r.in_kernel && !sr6_core::behaviour::mobile::is_gtp(r))
            .map(|r| r.keyword)
            .collect();
        assert!(extensions.contains(&"End.B6.Encaps.Red"), "{extensions:?}");
        let returns: Vec<&str> = crate::model::PROXY_RETURN.iter().map(|r| r.name).collect();
        let gtp: Vec<&str> = crate::model::MOBILE.iter().filter(|m| !m.in_kernel()).map(|m| m.name).collect();
        let vrf_or_extension = |n: &&str| {
            ["End.DT4", "End.DT46", "End.T-next-csid", "End-replace-csid"].contains(n)
                || extensions.contains(n)
                || returns.contains(n)
                || gtp.contains(n)
        };
        assert!(no.iter().all(vrf_or_extension), "{no:?}");
        assert_eq!(no.len(), 4 + extensions.len() + returns.len() + gtp.len(), "{no:?}");
        assert_eq!(gtp, ["GTP-U.Encap", "GTP-U.Decap", "H.M.GTP4.D", "End.M.GTP4.E"]);
        assert!(unsupported("linux", Behavior::parse("GTP-U.Decap").unwrap()).unwrap().contains("libgtpnl"));
        assert_eq!(
            unsupported("linux", Behavior::parse("H.M.GTP4.D").unwrap()).unwrap(),
            "the kernel has no H.M.GTP4.D"
        );
        // The kernel has no SR proxy, in either direction.
        for r in &crate::model::PROXY_RETURN {
            let why = unsupported("linux", Behavior::parse(r.name).unwrap());
            assert_eq!(why.unwrap(), format!("the kernel has no {}", r.keyword));
        }
        for b in [
            "ipv6",
            "ipv4",
            "T.Encaps",
            "End",
            "End.X",
            "End.T",
            "End.DX6",
            "End.DT6",
            "End.B6",
            "End-next-csid",
            "End.X-next-csid",
        ] {
            assert_eq!(unsupported("linux", Behavior::parse(b).unwrap()), None, "{b}");
        }
        assert!(unsupported("linux", Behavior::parse("End.DT4").unwrap()).unwrap().contains("VRF device"));
        let t = unsupported("linux", Behavior::parse("End.T-next-csid").unwrap()).unwrap();
        assert_eq!(t, "the kernel accepts flavours on End.T but ignores them");
        for kw in extensions {
            assert_eq!(unsupported("linux", Behavior::parse(kw).unwrap()).unwrap(), format!("the kernel has no {kw}"));
        }
        assert!(Behavior::all().iter().all(|b| unsupported("sr6", *b).is_none()));
    }
}
