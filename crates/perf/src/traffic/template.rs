//! The frames the tester sends, one template per behaviour, as SRPerf maps them
//! (Abdelsalam et al. 2018, §III-A and §IV-A).
//!
//! # What "64 bytes" means here
//!
//! The paper uses "an IPv6 packet of size 64 bytes" for the transit behaviours and "an
//! SRv6 packet of size 64 bytes plus SRv6 encapsulation" (80 bytes: outer IPv6 40 + SRH
//! with two SIDs 40) for the endpoint behaviours. Here **64 bytes is the size of the
//! innermost IP packet**, IP header included: IPv6 40 + UDP 8 + telemetry 16, or IPv4
//! 20 + UDP 8 + 20 zero bytes + telemetry 16. Every template carries exactly one such
//! packet; an Ethernet header (14 bytes, no VLAN tag, no FCS) and, for the endpoint
//! behaviours, the 80-byte encapsulation come on top. Frame sizes below are bytes on
//! the wire without the 4-byte FCS (add 4 for RFC 2544's "frame size", 20 more for the
//! preamble and inter-frame gap of line-rate arithmetic).
//!
//! Endpoint behaviours are the rows of the behaviour table; what a row `takes` decides
//! its frame, so a new row gets one without a change here (End.B6\* is End.B6,
//! End.B6.Encaps and End.B6.Encaps.Red):
//!
//! | behaviour (what it takes)              | frame = headers                                    | bytes |
//! |----------------------------------------|----------------------------------------------------|------:|
//! | ipv6, T.Insert, T.Encaps               | Eth 14 + IPv6/UDP 64                               |    78 |
//! | ipv4                                   | Eth 14 + IPv4/UDP 64                               |    78 |
//! | T.Encaps.L2                            | Eth 14 + IPv6/UDP 64 (the SUT carries it whole)    |    78 |
//! | a segment: End, End.X, End.T, End.B6*  | Eth 14 + IPv6 40 + SRH(2 SIDs, SL 1) 40 + IPv6 64  |   158 |
//! | End-hmac-sha256, End-hmac-sha1         | as End, the SRH with an HMAC TLV 40                |   198 |
//! | H.Encaps-hmac-sha256, -sha1            | Eth 14 + IPv6/UDP 64                               |    78 |
//! | inner IPv6: End.DX6, End.DT6           | Eth 14 + IPv6 40 + SRH(2 SIDs, SL 0) 40 + IPv6 64  |   158 |
//! | inner IPv4: End.DX4, End.DT4           | Eth 14 + IPv6 40 + SRH(2 SIDs, SL 0) 40 + IPv4 64  |   158 |
//! | inner IP: End.DT46 (even stream / odd) | as inner IPv6 / as inner IPv4                      |   158 |
//! | inner Ethernet: End.DX2                | Eth 14 + IPv6 40 + SRH(SL 0) 40 + Eth 14 + IPv6 64 |   172 |
//! | NEXT-C-SID: End-next-csid, End.X-...   | Eth 14 + IPv6 40 (no SRH) + IPv6 64                |   118 |
//! | from a proxy's function: End.AD-return | Eth 14 + IPv6/UDP 64 (the inner packet)            |    78 |
//! | from a proxy's function: End.AM-return | Eth 14 + IPv6 40 + SRH(2 SIDs, SL 1) 40 + IPv6 64  |   158 |
//! | mobile: GTP-U.Encap, SRv6.Encap      | Eth 14 + IPv4/UDP 64                               |    78 |
//! | mobile: GTP-U.Decap, H.M.GTP4.D       | Eth 14 + IPv4 20 + UDP 8 + GTP-U 8 + IPv4 64       |   114 |
//! | mobile: SRv6.Decap, End.M.GTP4.E      | Eth 14 + IPv6 40 (no SRH) + IPv4 64                |   118 |
//!
//! The innermost packet is 64 bytes by default; the experiment's `packet_bytes` sets it
//! ([`Addressing::inner_len`], within [`inner_len_range`]): the mobile experiment uses
//! the GTP-U/SRv6 paper's 46 and 1460.
//!
//! # The frames
//!
//! * Outer Ethernet: `tg0_mac` -> `dut0_mac`.
//! * Innermost packet: `src6 -> dst6` (IPv6: traffic class 0, flow label 0, hop limit
//!   64) or `src4 -> dst4` (IPv4: DF, TTL 64, ID 0, header checksum valid), then UDP
//!   from port `49152 + stream % 16384` to port 9 (discard), checksum valid (computed
//!   over the pseudo-header of the innermost IP header), then the UDP payload whose
//!   last 16 bytes are the telemetry block (`telemetry.rs`, sequence number and
//!   timestamp 0 in the template; the generator patches them).
//! * Encapsulation (endpoint behaviours, like an H.Encaps head-end's): outer IPv6
//!   `src6 -> sid`, hop limit 64, Next Header 43; SRH: Hdr Ext Len 4, Routing Type 4,
//!   Last Entry 1, flags 0, tag 0, Next Header 41 (inner IPv6), 4 (inner IPv4) or 143
//!   (inner Ethernet, RFC 8986 §10.1).
//!   * Behaviours that take a segment (`Takes::Segment`: End, End.T, End.X, the
//!     End.B6 family): Segments Left 1, Segment List `[next_sid, sid]`: the active SID
//!     (list\[1\], = the destination) is the SUT's, the next and last one is routed
//!     back to the tester (the paper: at least two SIDs, the active one not the last).
//!   * The End HMAC rows ([`Behavior::hmac`]): End's SRH, Hdr Ext Len 9, flags 0x08
//!     ([`HMAC_FLAG`]: Linux looks for the TLV only then), with an HMAC TLV after the
//!     Segment List (RFC 8754 §2.1.2: type 5, length 38, the row's key id, the HMAC of
//!     the source, Last Entry, Flags, key id and Segment List, computed here with the
//!     `hmac` crate for the SUT to verify).
//!   * Decapsulating behaviours (`Takes::Inner`: End.DX*/End.DT*): Segments Left 0,
//!     Segment List `[sid, next_sid]`: the SUT's SID is the last segment (list\[0\],
//!     = the destination); `next_sid` stands for the segment visited before.
//!   * An inner Ethernet frame (End.DX2): `tg0_mac -> tg1_mac`, EtherType IPv6, then
//!     the 64-byte IPv6 packet: once decapsulated it goes out of dut1 as it is, and tg1
//!     accepts it as addressed to itself (an AF_PACKET receiver only sees frames for
//!     its MAC).
//!   * An inner IPv4-or-IPv6 packet (End.DT46, [`Behavior::mixed`]): the inner family
//!     follows the stream id's parity (even: IPv6, odd: IPv4), so streams 0 and 1
//!     make the behaviour's mixed traffic ([`templates`]).
//! * Pure uSID encapsulation (the NEXT-C-SID rows, [`Behavior::next_csid`]; RFC 9800
//!   §4.1): outer IPv6 `src6 -> sid`, hop limit 64, Next Header 41, no SRH: `sid` is a
//!   C-SID container (block, the SUT's C-SID, the C-SIDs to come) that the SUT shifts
//!   and routes to tg1; `next_sid` stands for the shifted destination.
//! * The mobile rows ([`Behavior::mobile`]): IPv4 user packets, plain (the
//!   encapsulations), behind outer IPv6 to the SID with no SRH (the SRv6 decapsulation,
//!   End.M.GTP4.E: `sid` and `src6` carry the session, RFC 9433 Figs. 9-10), or behind
//!   GTP-U: outer IPv4 `src4 -> upf4` (DF, TTL 64), UDP 2152 -> 2152 with checksum 0
//!   (the generator patches the inner UDP checksum only), GTP-U version 1, PT 1, no
//!   optional field, T-PDU, TEID `teid`.
//! * An SR proxy's return rows ([`Behavior::proxy_return`]; the SRv6 service-programming
//!   draft §6): what the service function sends back to the proxy. The SR proxy rows
//!   of the table (End.AD, End.AM, ...) take a segment: End's frame, whose packet the
//!   proxy hands to the function.
//!   * End.AD-return: the function's packet is the inner packet the proxy handed it
//!     (§6.2): the plain IPv6/UDP packet `src6 -> dst6`, as ipv6's frame. The proxy
//!     pushes back the headers it cached from End's frame ([`warm_up_frame`]).
//!   * End.AM-return: the function returns the masqueraded packet (§6.4): End's frame
//!     with the outer destination Segment List\[0\] (`next_sid`), Segments Left 1 and
//!     the list `[next_sid, sid]` as End.AM left them.
//!
//! The orchestrator owns the address plan and passes it in [`Addressing`];
//! [`Addressing::default`] is the proposed plan (fc00::/16 for IPv6, the RFC 2544
//! benchmarking range 198.18.0.0/15 for IPv4):
//!
//! ```text
//!  tester                         SUT                          tester
//!  tg0 fc00:1::1 ---- veth ---- dut0 fc00:1::2
//!      198.18.1.1                    198.18.1.2
//!                                dut1 fc00:2::2 ---- veth ---- tg1 fc00:2::1
//!                                     198.18.2.2                   198.18.2.1
//!  MACs 02:53:36:00:00:01 (tg0), :02 (dut0), :03 (dut1), :04 (tg1)
//!
//!  fc00:b::/64, 198.19.0.0/24  "behind tg1": the SUT routes them via tg1
//!      dst6 = fc00:b::1, dst4 = 198.19.0.1, next_sid = fc00:b::2
//!  fc00:e::/64                 the SUT's SIDs: sid = fc00:e::1
//!  src6 = fc00:1::1, src4 = 198.18.1.1 (tg0's addresses)
//! ```
//!
//! For T.Insert/T.Encaps/T.Encaps.L2 the SUT's policy on `dst6` decides the segments;
//! a list ending with a SID routed to tg1 (e.g. `next_sid`) brings the packets back.

use std::net::{Ipv4Addr, Ipv6Addr};

use sr6_wire::checksum;
use sr6_wire::proto::{IPPROTO_ETHERNET, IPPROTO_IPV4, IPPROTO_IPV6, IPPROTO_ROUTING, IPPROTO_UDP};
use sr6_wire::{ETHERTYPE_IPV4, ETHERTYPE_IPV6};

use sr6_core::behaviour::proxy::Kind;
use sr6_core::behaviour::{self as table, Takes};

use super::telemetry::{Telemetry, TELEMETRY_LEN};
use crate::model::{Behavior, HmacRow, MobileKind, HMAC_SECRET};

/// Size of the innermost IP packet of every template (see the module docs).
pub const INNER_IP_LEN: usize = 64;
/// Bytes of SRv6 encapsulation on the endpoint templates: outer IPv6 40 + SRH 40.
pub const ENCAP_LEN: usize = 80;
/// Bytes of encapsulation on the pure uSID templates (NEXT-C-SID) and on the mobile
/// rows' SRv6 ones: outer IPv6 40.
pub const USID_ENCAP_LEN: usize = 40;
/// Bytes of encapsulation on the REPLACE-C-SID template: outer IPv6 40 + an SRH of one
/// C-SID container 24.
pub const CONTAINER_ENCAP_LEN: usize = 64;
/// Bytes of GTP-U encapsulation: IPv4 20 + UDP 8 + GTP-U 8 (the paper's Fig. 4).
pub const GTPU4_ENCAP_LEN: usize = IPV4_LEN + UDP_LEN + GTPU_LEN;
/// The GTP-U port (TS 29.281 §4.4.2).
pub const GTPU_PORT: u16 = 2152;
const GTPU_LEN: usize = 8;
/// The UDP destination port (discard).
pub const UDP_DST_PORT: u16 = 9;
/// UDP source ports are `UDP_SRC_PORT_BASE + stream % 16384`.
pub const UDP_SRC_PORT_BASE: u16 = 49152;

const ETH_LEN: usize = 14;
const IPV6_LEN: usize = 40;
const IPV4_LEN: usize = 20;
const UDP_LEN: usize = 8;
const SRH_LEN: usize = 40;
/// An HMAC TLV: type, length, D and reserved, key id, a 32-byte HMAC field.
pub const HMAC_TLV_LEN: usize = 40;
const HOP_LIMIT: u8 = 64;

/// The addresses the templates use. See the module docs for the proposed plan
/// ([`Addressing::default`]) and where each one appears.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Addressing {
    /// The tester's sending device: source MAC of every frame.
    pub tg0_mac: [u8; 6],
    /// The SUT's receiving device: destination MAC of every frame.
    pub dut0_mac: [u8; 6],
    /// The SUT's sending device (not in the frames; for the orchestrator's neighbours).
    pub dut1_mac: [u8; 6],
    /// The tester's receiving device: destination MAC of End.DX2's inner frame.
    pub tg1_mac: [u8; 6],
    /// Source of the plain, the outer and the inner IPv6 headers.
    pub src6: Ipv6Addr,
    /// Source of the IPv4 packets (plain and inner).
    pub src4: Ipv4Addr,
    /// Destination of the plain and the inner IPv6 packets: the SUT routes it to tg1.
    pub dst6: Ipv6Addr,
    /// Destination of the plain and the inner IPv4 packets: the SUT routes it to tg1.
    pub dst4: Ipv4Addr,
    /// The SUT's SID for the behaviour under test: the outer destination.
    pub sid: Ipv6Addr,
    /// The other SID of the SRH: the next (and final) segment for the behaviours that
    /// take a segment, routed by the SUT to tg1; the segment visited before for the
    /// decapsulating ones.
    pub next_sid: Ipv6Addr,
    /// Outer IPv4 destination of the GTP-U frames (the mobile rows that send GTP-U).
    pub upf4: Ipv4Addr,
    /// The TEID of those frames.
    pub teid: u32,
    /// Size of the innermost IP packet, header included (the experiment's
    /// `packet_bytes`; [`INNER_IP_LEN`] by default).
    pub inner_len: usize,
}

impl Default for Addressing {
    /// The proposed address plan (module docs).
    fn default() -> Addressing {
        Addressing {
            tg0_mac: [0x02, 0x53, 0x36, 0, 0, 0x01],
            dut0_mac: [0x02, 0x53, 0x36, 0, 0, 0x02],
            dut1_mac: [0x02, 0x53, 0x36, 0, 0, 0x03],
            tg1_mac: [0x02, 0x53, 0x36, 0, 0, 0x04],
            src6: Ipv6Addr::new(0xfc00, 1, 0, 0, 0, 0, 0, 1),
            src4: Ipv4Addr::new(198, 18, 1, 1),
            dst6: Ipv6Addr::new(0xfc00, 0xb, 0, 0, 0, 0, 0, 1),
            dst4: Ipv4Addr::new(198, 19, 0, 1),
            sid: Ipv6Addr::new(0xfc00, 0xe, 0, 0, 0, 0, 0, 1),
            next_sid: Ipv6Addr::new(0xfc00, 0xb, 0, 0, 0, 0, 0, 2),
            upf4: Ipv4Addr::new(198, 18, 3, 1),
            teid: 1,
            inner_len: INNER_IP_LEN,
        }
    }
}

/// A template with what the generator needs to patch it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template {
    pub behavior: Behavior,
    pub stream: u16,
    /// The Ethernet frame (without FCS); its last 16 bytes are the telemetry block with
    /// sequence number and timestamp 0.
    pub frame: Vec<u8>,
    /// Offset in `frame` of the innermost UDP header's checksum field.
    pub udp_csum_at: usize,
}

/// The innermost packet's family.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Inner {
    V6,
    V4,
    /// Ethernet + IPv6 (End.DX2).
    Eth,
}

/// The Ethernet frame the tester sends for behaviour `b` (see the module docs).
pub fn template(b: Behavior, a: &Addressing, stream: u16) -> Vec<u8> {
    build(b, a, stream).frame
}

/// The templates of behaviour `b`: one per stream of its traffic (streams 0 and 1 for
/// [mixed](Behavior::mixed) traffic, else stream 0).
pub fn templates(b: Behavior, a: &Addressing) -> Vec<Template> {
    (0..b.streams()).map(|s| build(b, a, s)).collect()
}

/// What comes before the innermost packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Encap {
    /// Nothing: a plain packet.
    None,
    /// Outer IPv6 + an SRH of two SIDs at this Segments Left.
    Srh(u8),
    /// As `Srh(1)`, masqueraded by End.AM: the outer destination is Segment List\[0\].
    Masqueraded,
    /// Outer IPv6 only, to a C-SID container (pure uSID), or to any SID with no SRH.
    Usid,
    /// Outer IPv6 to a REPLACE-C-SID SID + an SRH of one C-SID container
    /// ([`crate::plan::csid_container`]) at Segments Left 0.
    Container,
    /// Outer IPv4 + UDP + GTP-U (a T-PDU, no extension header), to `upf4`.
    Gtpu4,
    /// As `Srh(1)`, with an HMAC TLV of this row's key after the Segment List.
    Hmac(&'static HmacRow),
}

/// (encapsulation, innermost packet) of behaviour `b`'s stream `stream`: what its row
/// of the behaviour table takes, pure uSID for a NEXT-C-SID row, what the function
/// sends back for a proxy's return row.
fn shape(b: Behavior, stream: u16) -> (Encap, Inner) {
    if let Some(m) = b.mobile() {
        let encap = match m.kind {
            MobileKind::GtpEncap | MobileKind::SrEncap => Encap::None,
            MobileKind::GtpDecap | MobileKind::Gtp4D => Encap::Gtpu4,
            MobileKind::SrDecap | MobileKind::Gtp4E => Encap::Usid,
        };
        return (encap, Inner::V4);
    }
    if let Some(c) = b.csid() {
        return (if c.replace { Encap::Container } else { Encap::Usid }, Inner::V6);
    }
    if let Some(h) = b.hmac().filter(|h| h.verify) {
        return (Encap::Hmac(h), Inner::V6);
    }
    if let Some(r) = b.proxy_return() {
        let inner = ip_inner(b.inner_ipv4(stream));
        return match r.kind() {
            Some(Kind::Masquerade) => (Encap::Masqueraded, inner),
            // The inner packet the function got (End.AD, End.AS, End.EAD*).
            _ => (Encap::None, inner),
        };
    }
    match b.takes() {
        None => (Encap::None, ip_inner(b.inner_ipv4(stream))),
        Some(Takes::Segment) => (Encap::Srh(1), ip_inner(b.inner_ipv4(stream))),
        Some(Takes::Inner(table::Inner::Ethernet)) => (Encap::Srh(0), Inner::Eth),
        Some(Takes::Inner(_)) => (Encap::Srh(0), ip_inner(b.inner_ipv4(stream))),
        // H.M.GTP4.D is measured as a mobile row (above); the table's row is not.
        Some(Takes::Gtpu4) => (Encap::Gtpu4, Inner::V4),
        // End.M.GTP6.D/.Di: not measured yet (`plan::unsupported`); plain IPv6.
        Some(Takes::Gtpu6) => (Encap::None, Inner::V6),
    }
}

/// The frame that fills behaviour `b`'s state in the SUT before its trials (`None`:
/// it needs none): for a dynamic proxy's return row, End's frame to the proxy's SID,
/// which the proxy's first part caches the headers of. It is sent from tg1 to dut1
/// (`tg1_mac -> dut1_mac`), not on the proxy's `iif`, dut0, where it would be taken for
/// the function's; the inner packet the proxy then sends to tg1 carries telemetry with
/// timestamp 0, which the receiver does not count.
pub fn warm_up_frame(b: Behavior, a: &Addressing) -> Option<Vec<u8>> {
    if !b.needs_warm_up() {
        return None;
    }
    let mut f = build_shaped(b, a, 0, (Encap::Srh(1), ip_inner(b.inner_ipv4(0)))).frame;
    f.get_mut(..6)?.copy_from_slice(&a.dut1_mac);
    f.get_mut(6..12)?.copy_from_slice(&a.tg1_mac);
    Some(f)
}

fn ip_inner(v4: bool) -> Inner {
    if v4 {
        Inner::V4
    } else {
        Inner::V6
    }
}

/// [`template`] with the offsets the generator patches.
pub fn build(b: Behavior, a: &Addressing, stream: u16) -> Template {
    build_shaped(b, a, stream, shape(b, stream))
}

/// [`build`] with the shape given.
fn build_shaped(b: Behavior, a: &Addressing, stream: u16, (encap, inner): (Encap, Inner)) -> Template {
    let (inner_bytes, inner_csum_at) = match inner {
        Inner::V6 => ipv6_udp(a, stream),
        Inner::V4 => ipv4_udp(a, stream),
        Inner::Eth => {
            let (p, at) = ipv6_udp(a, stream);
            let mut f = eth(&a.tg1_mac, &a.tg0_mac, ETHERTYPE_IPV6);
            f.extend_from_slice(&p);
            (f, at + ETH_LEN)
        }
    };
    let outer_ethertype = match (encap, inner) {
        (Encap::None, Inner::V4) | (Encap::Gtpu4, _) => ETHERTYPE_IPV4,
        _ => ETHERTYPE_IPV6,
    };
    let mut frame = eth(&a.dut0_mac, &a.tg0_mac, outer_ethertype);
    let mut udp_csum_at = ETH_LEN + inner_csum_at;
    let nh = match inner {
        Inner::V6 => IPPROTO_IPV6,
        Inner::V4 => IPPROTO_IPV4,
        Inner::Eth => IPPROTO_ETHERNET,
    };
    match encap {
        Encap::None => {}
        Encap::Srh(_) | Encap::Masqueraded => {
            let (sl, dst) = match encap {
                Encap::Srh(sl) => (sl, a.sid),
                _ => (1, a.next_sid),
            };
            let segs = if sl == 1 { [a.next_sid, a.sid] } else { [a.sid, a.next_sid] };
            ipv6_header(&mut frame, (SRH_LEN + inner_bytes.len()) as u16, IPPROTO_ROUTING, &a.src6, &dst);
            frame.extend_from_slice(&[nh, (SRH_LEN / 8 - 1) as u8, 4, sl, 1, 0, 0, 0]);
            for s in &segs {
                frame.extend_from_slice(&s.octets());
            }
            udp_csum_at += ENCAP_LEN;
        }
        Encap::Hmac(h) => {
            let srh_len = SRH_LEN + HMAC_TLV_LEN;
            ipv6_header(&mut frame, (srh_len + inner_bytes.len()) as u16, IPPROTO_ROUTING, &a.src6, &a.sid);
            frame.extend_from_slice(&[nh, (srh_len / 8 - 1) as u8, 4, 1, 1, HMAC_FLAG, 0, 0]);
            frame.extend_from_slice(&a.next_sid.octets());
            frame.extend_from_slice(&a.sid.octets());
            frame.extend_from_slice(&hmac_tlv(h, &a.src6, HMAC_FLAG, &[a.next_sid, a.sid]));
            udp_csum_at += ENCAP_LEN + HMAC_TLV_LEN;
        }
        Encap::Usid => {
            ipv6_header(&mut frame, inner_bytes.len() as u16, nh, &a.src6, &a.sid);
            udp_csum_at += USID_ENCAP_LEN;
        }
        Encap::Container => {
            let srh_len = CONTAINER_ENCAP_LEN - IPV6_LEN;
            ipv6_header(&mut frame, (srh_len + inner_bytes.len()) as u16, IPPROTO_ROUTING, &a.src6, &a.sid);
            // Hdr Ext Len 2, type 4, Segments Left 0, Last Entry 0.
            frame.extend_from_slice(&[nh, (srh_len / 8 - 1) as u8, 4, 0, 0, 0, 0, 0]);
            frame.extend_from_slice(&crate::plan::csid_container().octets());
            udp_csum_at += CONTAINER_ENCAP_LEN;
        }
        Encap::Gtpu4 => {
            gtpu4_headers(&mut frame, a, inner_bytes.len());
            udp_csum_at += GTPU4_ENCAP_LEN;
        }
    }
    frame.extend_from_slice(&inner_bytes);
    Template { behavior: b, stream, frame, udp_csum_at }
}

/// The frame size of behaviour `b`'s template (bytes without FCS) for an innermost
/// packet of `inner_len` bytes.
pub fn frame_len(b: Behavior, inner_len: usize) -> usize {
    match shape(b, 0) {
        (Encap::None, _) => ETH_LEN + inner_len,
        (Encap::Usid, _) => ETH_LEN + USID_ENCAP_LEN + inner_len,
        (Encap::Container, _) => ETH_LEN + CONTAINER_ENCAP_LEN + inner_len,
        (Encap::Gtpu4, _) => ETH_LEN + GTPU4_ENCAP_LEN + inner_len,
        (Encap::Srh(_) | Encap::Masqueraded, Inner::Eth) => ETH_LEN + ENCAP_LEN + ETH_LEN + inner_len,
        (Encap::Srh(_) | Encap::Masqueraded, _) => ETH_LEN + ENCAP_LEN + inner_len,
        (Encap::Hmac(_), _) => ETH_LEN + ENCAP_LEN + HMAC_TLV_LEN + inner_len,
    }
}

/// The smallest innermost packet of behaviour `b`: IP and UDP headers and the
/// telemetry block.
pub fn min_inner_len(b: Behavior) -> usize {
    let ip = if (0..b.streams()).all(|s| b.inner_ipv4(s)) { IPV4_LEN } else { IPV6_LEN };
    ip + UDP_LEN + TELEMETRY_LEN
}

/// The testbed's MTU (veth's default).
pub const MTU: usize = 1500;

/// The sizes of innermost packet behaviour `b` takes: from [`min_inner_len`] to what
/// keeps every frame it sends and gets back within [`MTU`]: the largest encapsulation
/// on either side, outer IPv6 without SRH for the mobile rows (40), none for plain
/// forwarding, and at most outer IPv6 + SRH of three SIDs + Ethernet (150) otherwise.
pub fn inner_len_range(b: Behavior) -> (usize, usize) {
    let overhead = if b.mobile().is_some() {
        USID_ENCAP_LEN
    } else if matches!(b, Behavior::Ipv6 | Behavior::Ipv4) {
        0
    } else {
        IPV6_LEN + 8 + 3 * 16 + ETH_LEN + 40
    };
    (min_inner_len(b), MTU - overhead)
}

/// The SRH flag Linux needs to look for an HMAC TLV at all (its `SR6_FLAG1_HMAC`, the
/// H flag of the SRH drafts before RFC 8754, which has no flag), and sets on the SRHs
/// its H.Encaps adds one to: set on the End HMAC rows' SRH, as that head-end sends it.
pub const HMAC_FLAG: u8 = 0x08;

/// An HMAC TLV (RFC 8754 §2.1.2): type 5, length 38, D flag and reserved 0, the row's
/// key id, then the HMAC (32 bytes: SHA-256's, or SHA-1's 20 and 12 zero bytes, as
/// Linux pads it) over the source address, Last Entry, `flags`, the key id and the
/// Segment List (§2.1.2.1), with the rows' secret.
fn hmac_tlv(h: &HmacRow, src: &Ipv6Addr, flags: u8, segs: &[Ipv6Addr]) -> [u8; HMAC_TLV_LEN] {
    use hmac::{Hmac, Mac};
    let mut text = Vec::with_capacity(22 + 16 * segs.len());
    text.extend_from_slice(&src.octets());
    text.extend_from_slice(&[(segs.len() - 1) as u8, flags]);
    text.extend_from_slice(&h.key_id.to_be_bytes());
    for s in segs {
        text.extend_from_slice(&s.octets());
    }
    let key = HMAC_SECRET.as_bytes();
    let mac: Vec<u8> = if h.alg == "sha1" {
        let mut m = Hmac::<sha1::Sha1>::new_from_slice(key).expect("HMAC takes a key of any length");
        m.update(&text);
        m.finalize().into_bytes().to_vec()
    } else {
        let mut m = Hmac::<sha2::Sha256>::new_from_slice(key).expect("HMAC takes a key of any length");
        m.update(&text);
        m.finalize().into_bytes().to_vec()
    };
    let mut t = [0u8; HMAC_TLV_LEN];
    t[..4].copy_from_slice(&[5, (HMAC_TLV_LEN - 2) as u8, 0, 0]);
    t[4..8].copy_from_slice(&h.key_id.to_be_bytes());
    t[8..8 + mac.len()].copy_from_slice(&mac);
    t
}

/// Outer IPv4 (`src4 -> upf4`, DF, TTL 64, ID 0, checksum valid), UDP 2152 -> 2152
/// (checksum 0, allowed over IPv4: RFC 768, TS 29.281 §4.4.2.0) and a GTP-U header
/// (TS 29.281 §5.1: version 1, PT 1, no optional field, T-PDU, `teid`) in front of a
/// T-PDU of `inner` bytes.
fn gtpu4_headers(out: &mut Vec<u8>, a: &Addressing, inner: usize) {
    let total = (GTPU4_ENCAP_LEN + inner) as u16;
    let mut ip = vec![0x45, 0];
    ip.extend_from_slice(&total.to_be_bytes());
    ip.extend_from_slice(&[0, 0, 0x40, 0, HOP_LIMIT, IPPROTO_UDP, 0, 0]);
    ip.extend_from_slice(&a.src4.octets());
    ip.extend_from_slice(&a.upf4.octets());
    let hc = checksum::fold(checksum::sum(&ip));
    ip[10..12].copy_from_slice(&hc.to_be_bytes());
    out.extend_from_slice(&ip);
    out.extend_from_slice(&GTPU_PORT.to_be_bytes());
    out.extend_from_slice(&GTPU_PORT.to_be_bytes());
    out.extend_from_slice(&((UDP_LEN + GTPU_LEN + inner) as u16).to_be_bytes());
    out.extend_from_slice(&[0, 0]);
    out.extend_from_slice(&[0x30, 0xff]);
    out.extend_from_slice(&(inner as u16).to_be_bytes());
    out.extend_from_slice(&a.teid.to_be_bytes());
}

fn eth(dst: &[u8; 6], src: &[u8; 6], ethertype: u16) -> Vec<u8> {
    let mut f = Vec::with_capacity(256);
    f.extend_from_slice(dst);
    f.extend_from_slice(src);
    f.extend_from_slice(&ethertype.to_be_bytes());
    f
}

fn ipv6_header(out: &mut Vec<u8>, payload_len: u16, nh: u8, src: &Ipv6Addr, dst: &Ipv6Addr) {
    out.extend_from_slice(&[0x60, 0, 0, 0]);
    out.extend_from_slice(&payload_len.to_be_bytes());
    out.extend_from_slice(&[nh, HOP_LIMIT]);
    out.extend_from_slice(&src.octets());
    out.extend_from_slice(&dst.octets());
}

/// A UDP header (checksum 0) and its payload: `pad` zero bytes, then the telemetry
/// block of `stream` (sequence number and timestamp 0).
fn udp(stream: u16, pad: usize) -> Vec<u8> {
    let len = (UDP_LEN + pad + TELEMETRY_LEN) as u16;
    let mut u = Vec::with_capacity(len as usize);
    u.extend_from_slice(&(UDP_SRC_PORT_BASE + stream % 16384).to_be_bytes());
    u.extend_from_slice(&UDP_DST_PORT.to_be_bytes());
    u.extend_from_slice(&len.to_be_bytes());
    u.extend_from_slice(&[0, 0]);
    u.resize(UDP_LEN + pad, 0);
    u.extend_from_slice(&Telemetry { stream, seq: 0, tx_ns: 0 }.to_bytes());
    u
}

/// A finished UDP checksum: 0 goes on the wire as 0xFFFF (RFC 768; RFC 8200 §8.1).
fn udp_csum(sum: u32) -> u16 {
    match checksum::fold(sum) {
        0 => 0xffff,
        c => c,
    }
}

/// The IPv6/UDP packet of `a.inner_len` bytes (at least 64) and the offset of its UDP
/// checksum.
fn ipv6_udp(a: &Addressing, stream: u16) -> (Vec<u8>, usize) {
    let mut u = udp(stream, a.inner_len.saturating_sub(IPV6_LEN + UDP_LEN + TELEMETRY_LEN));
    let c = udp_csum(checksum::pseudo_header_v6(&a.src6, &a.dst6, u.len() as u32, IPPROTO_UDP) + checksum::sum(&u));
    u[6..8].copy_from_slice(&c.to_be_bytes());
    let mut p = Vec::with_capacity(INNER_IP_LEN);
    ipv6_header(&mut p, u.len() as u16, IPPROTO_UDP, &a.src6, &a.dst6);
    p.extend_from_slice(&u);
    (p, IPV6_LEN + 6)
}

/// The IPv4/UDP packet of `a.inner_len` bytes (at least 44) and the offset of its UDP
/// checksum.
fn ipv4_udp(a: &Addressing, stream: u16) -> (Vec<u8>, usize) {
    let mut u = udp(stream, a.inner_len.saturating_sub(IPV4_LEN + UDP_LEN + TELEMETRY_LEN));
    let c = udp_csum(checksum::pseudo_header_v4(&a.src4, &a.dst4, u.len() as u16, IPPROTO_UDP) + checksum::sum(&u));
    u[6..8].copy_from_slice(&c.to_be_bytes());
    let total = (IPV4_LEN + u.len()) as u16;
    let mut p = Vec::with_capacity(INNER_IP_LEN);
    p.extend_from_slice(&[0x45, 0]);
    p.extend_from_slice(&total.to_be_bytes());
    // ID 0, DF, TTL, protocol, checksum (below).
    p.extend_from_slice(&[0, 0, 0x40, 0, HOP_LIMIT, IPPROTO_UDP, 0, 0]);
    p.extend_from_slice(&a.src4.octets());
    p.extend_from_slice(&a.dst4.octets());
    let hc = checksum::fold(checksum::sum(&p));
    p[10..12].copy_from_slice(&hc.to_be_bytes());
    p.extend_from_slice(&u);
    (p, IPV4_LEN + 6)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_follow_the_table() {
        let a = Addressing::default();
        for &b in Behavior::all() {
            for stream in [0u16, 1] {
                let t = build(b, &a, stream);
                assert_eq!(t.frame.len(), frame_len(b, INNER_IP_LEN), "{}", b.name());
                assert_eq!(t.frame, template(b, &a, stream));
                let tel = Telemetry::from_frame(&t.frame).expect("telemetry at the end");
                assert_eq!(tel, Telemetry { stream, seq: 0, tx_ns: 0 });
                // The checksum field is the innermost UDP header's.
                let u = t.udp_csum_at - 6;
                assert_eq!(&t.frame[u..u + 4], &[0xc0, stream as u8, 0, 9], "{}", b.name());
                let udp_len = u16::from_be_bytes([t.frame[u + 4], t.frame[u + 5]]) as usize;
                assert_eq!(u + udp_len, t.frame.len());
            }
        }
        let b = |n: &str| Behavior::parse(n).unwrap();
        for (n, len) in [
            ("ipv6", 78),
            ("ipv4", 78),
            ("T.Insert", 78),
            ("T.Encaps", 78),
            ("T.Encaps.L2", 78),
            ("End", 158),
            ("End.T", 158),
            ("End.X", 158),
            ("End.B6", 158),
            ("End.B6.Encaps", 158),
            ("End.B6.Encaps.Red", 158),
            ("End.DX6", 158),
            ("End.DX4", 158),
            ("End.DT6", 158),
            ("End.DT4", 158),
            ("End.DT46", 158),
            ("End.DX2", 172),
            ("End-next-csid", 118),
            ("End.X-next-csid", 118),
            ("End.T-next-csid", 118),
            ("End.AD", 158),
            ("End.AM", 158),
            ("End.AD-return", 78),
            ("End.AM-return", 158),
            ("GTP-U.Encap", 78),
            ("GTP-U.Decap", 114),
            ("SRv6.Encap", 78),
            ("SRv6.Decap", 118),
            ("H.M.GTP4.D", 114),
            ("End.M.GTP4.E", 118),
        ] {
            assert_eq!(frame_len(b(n), INNER_IP_LEN), len, "{n}");
        }
        for &b in Behavior::all() {
            let t = templates(b, &a);
            assert_eq!(t.len(), if b.name() == "End.DT46" { 2 } else { 1 }, "{}", b.name());
            assert!(t.iter().enumerate().all(|(i, t)| t.stream == i as u16 && t.frame == template(b, &a, t.stream)));
        }
    }

    #[test]
    fn end_srh_fields() {
        let a = Addressing::default();
        let b = |n: &str| Behavior::parse(n).unwrap();
        let f = template(b("End"), &a, 0);
        assert_eq!(&f[12..14], &[0x86, 0xdd]);
        assert_eq!(f[14 + 6], IPPROTO_ROUTING);
        assert_eq!(&f[14 + 24..14 + 40], &a.sid.octets());
        let srh = &f[54..94];
        assert_eq!(&srh[..8], &[IPPROTO_IPV6, 4, 4, 1, 1, 0, 0, 0]);
        assert_eq!(&srh[8..24], &a.next_sid.octets());
        assert_eq!(&srh[24..40], &a.sid.octets());
        // Every behaviour that takes a segment gets End's frame.
        for n in ["End.T", "End.X", "End.B6", "End.B6.Encaps", "End.B6.Encaps.Red"] {
            assert_eq!(template(b(n), &a, 0), f, "{n}");
        }
        let d = template(b("End.DX4"), &a, 0);
        assert_eq!(&d[54..62], &[IPPROTO_IPV4, 4, 4, 0, 1, 0, 0, 0]);
        assert_eq!(&d[62..78], &a.sid.octets());
        assert_eq!(template(b("End.DT4"), &a, 0), d);
        assert_eq!(template(b("End.DX6"), &a, 0), template(b("End.DT6"), &a, 0));
        assert_eq!(template(b("End.DX6"), &a, 0)[54], IPPROTO_IPV6);
        assert_eq!(template(b("End.DX2"), &a, 0)[54], IPPROTO_ETHERNET);
        assert_eq!(template(b("End.DT46"), &a, 0)[54], IPPROTO_IPV6);
        assert_eq!(template(b("End.DT46"), &a, 1)[54], IPPROTO_IPV4);
        assert_eq!(template(b("End.DT46"), &a, 0), template(b("End.DT6"), &a, 0));
        assert_eq!(template(b("End.DT46"), &a, 1), template(b("End.DT4"), &a, 1));
    }

    #[test]
    fn next_csid_frames_are_pure_usid() {
        let a = Addressing::default();
        let b = |n: &str| Behavior::parse(n).unwrap();
        let f = template(b("End-next-csid"), &a, 0);
        assert_eq!(&f[12..14], &[0x86, 0xdd]);
        // Outer IPv6: payload 64 (the inner packet), Next Header 41, hop limit 64, to the
        // container; no SRH: the inner packet follows.
        assert_eq!(&f[14..22], &[0x60, 0, 0, 0, 0, 64, IPPROTO_IPV6, 64]);
        assert_eq!(&f[14 + 8..14 + 24], &a.src6.octets());
        assert_eq!(&f[14 + 24..14 + 40], &a.sid.octets());
        assert_eq!(&f[54..], &template(Behavior::Ipv6, &a, 0)[14..]);
        assert_eq!(template(b("End.X-next-csid"), &a, 0), f);
        assert_eq!(template(b("End.T-next-csid"), &a, 0), f);
    }

    /// What the tester sends as the proxies' function (the SRv6 service-programming
    /// draft §6.2, §6.4), read with the wire crate's views.
    #[test]
    fn proxy_return_frames_are_what_the_function_sends_back() {
        use sr6_wire::{EthernetFrame, Ipv6Packet, SrhPacket};
        let a = Addressing::default();
        let b = |n: &str| Behavior::parse(n).unwrap();
        let end = template(b("End"), &a, 0);
        // The part-1 rows: End's frame to the proxy's SID.
        assert_eq!(template(b("End.AD"), &a, 0), end);
        assert_eq!(template(b("End.AM"), &a, 0), end);

        // End.AD-return: the inner packet End.AD handed the function, plain, tg0 -> dut0.
        let f = template(b("End.AD-return"), &a, 0);
        let eth = EthernetFrame::new_checked(&f[..]).unwrap();
        assert_eq!((eth.dst_addr(), eth.src_addr(), eth.ethertype()), (a.dut0_mac, a.tg0_mac, ETHERTYPE_IPV6));
        let ip = Ipv6Packet::new_checked(&f[14..]).unwrap();
        assert_eq!((ip.src_addr(), ip.dst_addr(), ip.next_header(), ip.hop_limit()), (a.src6, a.dst6, 17, 64));
        assert_eq!(&f[14..], &end[94..], "End's inner packet");
        assert_eq!(f, template(Behavior::Ipv6, &a, 0));

        // End.AM-return: End's frame as End.AM masqueraded it — destination Segment
        // List[0], Segments Left 1, the list and the inner packet unchanged.
        let f = template(b("End.AM-return"), &a, 0);
        let eth = EthernetFrame::new_checked(&f[..]).unwrap();
        assert_eq!((eth.dst_addr(), eth.src_addr()), (a.dut0_mac, a.tg0_mac));
        let ip = Ipv6Packet::new_checked(&f[14..]).unwrap();
        assert_eq!((ip.src_addr(), ip.dst_addr(), ip.next_header()), (a.src6, a.next_sid, IPPROTO_ROUTING));
        assert_eq!(usize::from(ip.payload_len()), f.len() - 14 - 40);
        let srh = SrhPacket::new_checked(ip.payload()).unwrap();
        assert_eq!((srh.routing_type(), srh.segments_left(), srh.last_entry()), (4, 1, 1));
        assert_eq!(srh.segments().collect::<Vec<_>>(), [a.next_sid, a.sid]);
        assert_eq!(srh.segment(0), Some(ip.dst_addr()), "DA = Segment List[0]");
        assert_eq!(srh.next_header(), IPPROTO_IPV6);
        assert_eq!(&ip.payload()[srh.header_len()..], &end[94..]);
        let mut masqueraded = end.clone();
        masqueraded[38..54].copy_from_slice(&a.next_sid.octets());
        assert_eq!(f, masqueraded, "End's frame but for the destination");

        // The warm-up of End.AD-return: End's frame to its SID, tg1 -> dut1.
        let w = warm_up_frame(b("End.AD-return"), &a).unwrap();
        let eth = EthernetFrame::new_checked(&w[..]).unwrap();
        assert_eq!((eth.dst_addr(), eth.src_addr()), (a.dut1_mac, a.tg1_mac));
        assert_eq!(&w[12..], &end[12..]);
        for &x in Behavior::all() {
            assert_eq!(warm_up_frame(x, &a).is_some(), x.name() == "End.AD-return", "{}", x.name());
        }
    }

    /// The mobile rows' frames at the GTP-U/SRv6 paper's sizes (its Fig. 4: a basic
    /// IPv4 packet of 46 or 1460 bytes; frames of 64/1478 (plain), 100/1514 (GTP-U)
    /// and 104/1518 (SRv6) bytes with the 4-byte FCS), and GTP-U's fields (TS 29.281
    /// §5.1) read with the wire crate's views.
    #[test]
    fn mobile_frames_have_the_papers_sizes() {
        use sr6_wire::{Ipv4Packet, Ipv6Packet};
        let b = |n: &str| Behavior::parse(n).unwrap();
        for (inner_len, plain, gtpu, srv6) in [(46, 64, 100, 104), (1460, 1478, 1514, 1518)] {
            let a = Addressing { inner_len, teid: 0xdead_beef, ..Addressing::default() };
            for (n, fcs_len) in [
                ("GTP-U.Encap", plain),
                ("SRv6.Encap", plain),
                ("GTP-U.Decap", gtpu),
                ("H.M.GTP4.D", gtpu),
                ("SRv6.Decap", srv6),
                ("End.M.GTP4.E", srv6),
            ] {
                let f = template(b(n), &a, 0);
                assert_eq!(f.len() + 4, fcs_len, "{n} at {inner_len}");
                assert_eq!(frame_len(b(n), inner_len), f.len(), "{n}");
                let user = &f[f.len() - inner_len..];
                let ip = Ipv4Packet::new_checked(user).unwrap();
                assert_eq!((ip.src_addr(), ip.dst_addr(), usize::from(ip.total_len())), (a.src4, a.dst4, inner_len));
                assert!(ip.verify_checksum());
            }
            let f = template(b("GTP-U.Decap"), &a, 0);
            assert_eq!(&f[12..14], &[0x08, 0x00]);
            let ip = Ipv4Packet::new_checked(&f[14..]).unwrap();
            assert_eq!((ip.src_addr(), ip.dst_addr(), ip.protocol(), ip.ttl()), (a.src4, a.upf4, 17, 64));
            assert!(ip.verify_checksum());
            assert_eq!(usize::from(ip.total_len()), 36 + inner_len);
            let udp = ip.payload();
            assert_eq!(&udp[..4], &[0x08, 0x68, 0x08, 0x68]);
            assert_eq!(usize::from(u16::from_be_bytes([udp[4], udp[5]])), 16 + inner_len);
            assert_eq!(&udp[6..8], &[0, 0], "no UDP checksum over IPv4");
            // Version 1, PT 1, no E/S/PN; T-PDU; length: what follows the 8 bytes.
            assert_eq!(&udp[8..16], &[0x30, 0xff, (inner_len >> 8) as u8, inner_len as u8, 0xde, 0xad, 0xbe, 0xef]);
            assert_eq!(template(b("H.M.GTP4.D"), &a, 0), f);
            let f = template(b("End.M.GTP4.E"), &a, 0);
            let ip = Ipv6Packet::new_checked(&f[14..]).unwrap();
            assert_eq!((ip.next_header(), ip.dst_addr(), ip.src_addr()), (IPPROTO_IPV4, a.sid, a.src6), "no SRH");
            assert_eq!(template(b("SRv6.Decap"), &a, 0), f);
        }
        for n in ["GTP-U.Encap", "H.M.GTP4.D", "End.M.GTP4.E"] {
            assert_eq!(inner_len_range(b(n)), (44, 1460), "{n}");
        }
        assert_eq!(inner_len_range(Behavior::Ipv6), (64, 1500));
        assert_eq!(inner_len_range(Behavior::Ipv4), (44, 1500));
        assert_eq!(inner_len_range(b("End.DT46")).0, 64);
    }

    #[test]
    fn checksums_are_valid() {
        let a = Addressing::default();
        // IPv6 UDP: pseudo-header + datagram sums to 0xFFFF.
        let f = template(Behavior::Ipv6, &a, 3);
        let udp = &f[54..];
        let s = checksum::pseudo_header_v6(&a.src6, &a.dst6, udp.len() as u32, IPPROTO_UDP) + checksum::sum(udp);
        assert_eq!(checksum::fold(s), 0);
        // IPv4 header and UDP.
        let f = template(Behavior::Ipv4, &a, 3);
        assert_eq!(checksum::fold(checksum::sum(&f[14..34])), 0);
        let udp = &f[34..];
        let s = checksum::pseudo_header_v4(&a.src4, &a.dst4, udp.len() as u16, IPPROTO_UDP) + checksum::sum(udp);
        assert_eq!(checksum::fold(s), 0);
        assert_eq!(u16::from_be_bytes([f[16], f[17]]), 64);
    }
}
