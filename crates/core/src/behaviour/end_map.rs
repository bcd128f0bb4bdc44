//! End.MAP (RFC 9433 §6.2): replace the destination with a mapped SID and forward by the
//! main table, the SRH (if any) untouched. An sr6 extension of the seg6local grammar:
//! `action End.MAP map SID`.
//!
//! RFC 9433 §6.2: S01 decrement the Hop Limit, S02 replace the IPv6 DA with the mapped
//! SID, S03 submit the packet to the egress IPv6 FIB lookup. S01 and S03 are the
//! forwarding step the pipeline applies to a [`Next::Lookup6`] with `forward`: a hop
//! limit that does not survive forwarding, a mapped SID with no route, a device that does
//! not forward get what ordinary forwarding gives them (the packet then carries the
//! mapped SID, so an ICMPv6 error quotes it with that destination).

use std::net::Ipv6Addr;

use super::{Arrival, Behaviour, Next, Param, Takes};
use crate::drop::DropReason;
use crate::packet::PacketBuf;
use crate::spec::{Prefix, SidAction};
use crate::tables::{BuildError, Sid, SidBuilder, SidState, Tables};
use sr6_wire::Ipv6Packet;

pub static END_MAP: Behaviour = Behaviour {
    keyword: "End.MAP",
    required: &[Param::Map],
    optional: &[],
    flavors: &[],
    rfc: "RFC 9433 §6.2",
    summary: "replace the destination with a mapped SID, forward by the main table",
    in_kernel: false,
    takes: Takes::Segment,
    build,
    input,
};

/// The mapped SID must be a unicast address a packet can be forwarded to (not
/// unspecified, loopback, multicast or link-local: RFC 4291 §2.5.2, §2.5.3, §2.5.6),
/// outside the SID's own prefix (the lookup would hand the packet back to this SID until
/// the pass limit drops it).
fn build(b: &mut SidBuilder, a: &SidAction) -> Result<SidState, BuildError> {
    let map = a.params.map.ok_or_else(|| b.error("End.MAP requires `map SID`"))?;
    let kind = if map.is_unspecified() {
        Some("the unspecified address")
    } else if map.is_loopback() {
        Some("the loopback address")
    } else if map.is_multicast() {
        Some("a multicast address")
    } else if map.is_unicast_link_local() {
        Some("a link-local address")
    } else {
        None
    };
    if let Some(kind) = kind {
        return Err(b.error(format!("End.MAP: map {map} is {kind}, not a SID a packet can be forwarded to")));
    }
    if within(b.prefix(), map) {
        return Err(b.error(format!(
            "End.MAP: map {map} is within the SID's own prefix {}: the packet would come back to this SID",
            show(b.prefix())
        )));
    }
    Ok(SidState { table: Tables::MAIN, ..SidState::default() })
}

fn within(p: Prefix, a: Ipv6Addr) -> bool {
    match p {
        Prefix::V6(net, len) => {
            let mask = u128::MAX.checked_shl(128u32.saturating_sub(u32::from(len))).unwrap_or(0);
            u128::from(net) & mask == u128::from(a) & mask
        }
        Prefix::V4(..) => false,
    }
}

fn show(p: Prefix) -> String {
    match p {
        Prefix::V6(a, l) => format!("{a}/{l}"),
        Prefix::V4(a, l) => format!("{a}/{l}"),
    }
}

/// RFC 9433 §6.2 S01-S03, whatever the packet's SRH (Segments Left > 0, 0, or none).
fn input(_: &Tables, p: &mut PacketBuf, sid: &Sid, _: &Arrival) -> Next {
    let Some(map) = sid.action.params.map else { return Next::drop(DropReason::NoRoute) };
    Ipv6Packet::new_unchecked(p.data_mut()).set_dst_addr(&map);
    Next::Lookup6 { table: sid.state.table, forward: true }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::behaviour::by_keyword;
    use crate::packet::Verdict;
    use crate::pipeline::Worker;
    use crate::spec::{AddrSpec, DevSel, NeighSpec, RouteKind, RouteSpec, RouterSpec, SidParams, SysctlSpec};
    use crate::spec::{Flavors, MAIN_TABLE};
    use std::net::IpAddr;

    const SID: &str = "fc00:f::1";
    const MAP: &str = "fc00:2::99";
    const SRC: &str = "fc00:a::100";
    const ETH0_MAC: [u8; 6] = [2, 0, 0, 0, 0, 1];
    const ETH1_MAC: [u8; 6] = [2, 0, 0, 0, 0, 2];
    const B_MAC: [u8; 6] = [2, 0xaa, 0, 0, 0, 2];
    const SID_LINE: usize = 9;

    fn v6(s: &str) -> Ipv6Addr {
        s.parse().unwrap()
    }

    fn route(line: usize, prefix: Prefix, kind: RouteKind) -> RouteSpec {
        RouteSpec { line, table: MAIN_TABLE, prefix, kind }
    }

    fn fwd(line: usize, p: &str, len: u8, via: Option<&str>, dev: &str) -> RouteSpec {
        let via = via.map(|v| IpAddr::V6(v6(v)));
        route(line, Prefix::V6(v6(p), len), RouteKind::Forward { via, dev: Some(dev.into()) })
    }

    /// eth0 towards A (fc00:a::/64), eth1 towards B (fc00:2::/48), the End.MAP SID
    /// `sid` mapping to `map` on line [`SID_LINE`].
    fn spec(sid: Prefix, map: Option<Ipv6Addr>) -> RouterSpec {
        let action = SidAction {
            behaviour: by_keyword("End.MAP").unwrap(),
            params: SidParams { map, ..SidParams::default() },
            flavors: Flavors::default(),
            count: false,
        };
        let addr =
            |line, a: &str, dev: &str| AddrSpec { line, dev: dev.into(), addr: IpAddr::V6(v6(a)), prefix_len: 64 };
        let neigh = |line, a: &str, mac, dev: &str| NeighSpec { line, dev: dev.into(), addr: IpAddr::V6(v6(a)), mac };
        RouterSpec {
            devices: vec!["eth0".into(), "eth1".into()],
            addrs: vec![addr(1, "fc00:1::1", "eth0"), addr(2, "fc00:12::1", "eth1")],
            neighs: vec![neigh(3, "fc00:1::2", [2, 0xaa, 0, 0, 0, 1], "eth0"), neigh(4, "fc00:12::2", B_MAC, "eth1")],
            routes: vec![
                fwd(5, "fc00:1::2", 128, None, "eth0"),
                fwd(6, "fc00:12::2", 128, None, "eth1"),
                fwd(7, "fc00:a::", 64, Some("fc00:1::2"), "eth0"),
                fwd(8, "fc00:2::", 48, Some("fc00:12::2"), "eth1"),
                route(SID_LINE, sid, RouteKind::Seg6Local { action: Box::new(action), dev: Some("eth0".into()) }),
            ],
            sysctls: vec![SysctlSpec::Forwarding6 { line: 10, dev: DevSel::All, value: true }],
            ..RouterSpec::default()
        }
    }

    fn sid128() -> Prefix {
        Prefix::V6(v6(SID), 128)
    }

    fn tables(map: &str) -> Tables {
        Tables::build(&spec(sid128(), Some(v6(map)))).unwrap_or_else(|e| panic!("{e}")).0
    }

    fn build_error(sid: Prefix, map: Option<&str>) -> BuildError {
        match Tables::build(&spec(sid, map.map(v6))) {
            Ok(_) => panic!("map {map:?} accepted"),
            Err(e) => e,
        }
    }

    #[test]
    fn build_rejects_what_cannot_be_forwarded_to() {
        for (map, what) in [
            ("::", "the unspecified address"),
            ("::1", "the loopback address"),
            ("ff02::1", "a multicast address"),
            ("ff0e::5", "a multicast address"),
            ("fe80::1", "a link-local address"),
        ] {
            let e = build_error(sid128(), Some(map));
            assert_eq!(e.line, SID_LINE, "{map}: {e}");
            assert!(e.message.starts_with(&format!("End.MAP: map {map} is {what}")), "{map}: {e}");
        }
    }

    #[test]
    fn build_rejects_a_map_back_to_the_sid() {
        let e = build_error(sid128(), Some(SID));
        assert_eq!(e.line, SID_LINE);
        assert!(e.message.contains("within the SID's own prefix fc00:f::1/128"), "{e}");
        // A SID with arguments: anything in its prefix comes back to it.
        let e = build_error(Prefix::V6(v6("fc00:f::"), 64), Some("fc00:f::1:2"));
        assert!(e.message.contains("within the SID's own prefix fc00:f::/64"), "{e}");
        // Next to it is fine.
        assert!(Tables::build(&spec(Prefix::V6(v6("fc00:f::"), 64), Some(v6("fc00:f:0:1::1")))).is_ok());
        assert!(Tables::build(&spec(sid128(), Some(v6("fc00:f::2")))).is_ok());
    }

    #[test]
    fn build_requires_map() {
        let e = build_error(sid128(), None);
        assert_eq!(e.line, SID_LINE);
        assert!(e.message.contains("End.MAP requires `map`"), "{e}");
    }

    /// Ethernet to eth0, IPv6 from [`SRC`] to `dst` with hop limit `hl`, then `segs`
    /// (header order) as an SRH with Segments Left `sl` if any, then 8 bytes of payload
    /// (next header 59 after the last header).
    fn frame(dst: &str, hl: u8, srh: Option<(&[&str], u8)>) -> Vec<u8> {
        let payload = [0xa5u8; 8];
        let mut ext = Vec::new();
        if let Some((segs, sl)) = srh {
            let n = segs.len() as u8;
            ext.extend_from_slice(&[59, 2 * n, 4, sl, n - 1, 0, 0, 0]);
            for s in segs {
                ext.extend_from_slice(&v6(s).octets());
            }
        }
        let mut f = Vec::new();
        f.extend_from_slice(&ETH0_MAC);
        f.extend_from_slice(&[2, 0xaa, 0, 0, 0, 1, 0x86, 0xdd]);
        f.extend_from_slice(&[0x60, 0, 0, 0]);
        f.extend_from_slice(&((ext.len() + payload.len()) as u16).to_be_bytes());
        f.extend_from_slice(&[if srh.is_some() { 43 } else { 59 }, hl]);
        f.extend_from_slice(&v6(SRC).octets());
        f.extend_from_slice(&v6(dst).octets());
        f.extend_from_slice(&ext);
        f.extend_from_slice(&payload);
        f
    }

    /// `input` as the pipeline runs it (the general path: End.MAP has no fast step).
    fn run(t: &Tables, f: &[u8]) -> (PacketBuf, Worker) {
        let mut w = Worker::new(t);
        let mut p = PacketBuf::new();
        assert!(p.load(f, 0));
        w.process(t, &mut p);
        assert_eq!(w.fast_hits, 0);
        (p, w)
    }

    /// What forwarding `f` to B must give: the destination `map`, the hop limit one less,
    /// everything else byte for byte, from eth1's MAC to B's.
    fn forwarded(f: &[u8], map: &str) -> Vec<u8> {
        let mut want = f.to_vec();
        want[..6].copy_from_slice(&B_MAC);
        want[6..12].copy_from_slice(&ETH1_MAC);
        want[14 + 7] -= 1;
        want[14 + 24..14 + 40].copy_from_slice(&v6(map).octets());
        want
    }

    #[test]
    fn replaces_the_destination_and_leaves_the_srh_alone() {
        let t = tables(MAP);
        let cases: [Option<(&[&str], u8)>; 4] = [
            Some((&["fc00:2::1", SID, "fc00:a::9"], 1)),
            Some((&["fc00:2::1", SID], 1)),
            Some((&[SID, "fc00:a::9"], 0)),
            None,
        ];
        for srh in cases {
            let f = frame(SID, 64, srh);
            let (p, w) = run(&t, &f);
            assert_eq!(p.verdict, Verdict::Tx(1), "{srh:?}");
            assert_eq!(p.data(), &forwarded(&f, MAP)[..], "{srh:?}");
            let c = w.counters.sids.get(0).unwrap();
            assert_eq!((c.packets, c.errors), (1, 0), "{srh:?}");
        }
        // Hop limit 2 leaves with 1.
        let f = frame(SID, 2, None);
        let (p, _) = run(&t, &f);
        assert_eq!(p.data()[14 + 7], 1);
        assert_eq!(p.data(), &forwarded(&f, MAP)[..]);
    }

    #[test]
    fn hop_limit_and_no_route_as_forwarding() {
        let t = tables(MAP);
        for hl in [1, 0] {
            let (p, w) = run(&t, &frame(SID, hl, Some((&["fc00:2::1", SID], 1))));
            // ICMPv6 Time Exceeded (type 3) back out eth0, from forwarding: the SID did
            // its part (as End.DT6 does for an inner packet that cannot be forwarded).
            assert_eq!(p.verdict, Verdict::Tx(0), "hop limit {hl}");
            assert_eq!(p.data()[14 + 40], 3, "hop limit {hl}");
            assert_eq!(w.counters.icmp_sent, 1);
            let c = w.counters.sids.get(0).unwrap();
            assert_eq!((c.packets, c.errors), (1, 0));
        }
        // A mapped SID the main table has no route for: Destination Unreachable (type
        // 1, code 0), the drop counted as no route.
        let t = tables("fc00:99::1");
        let (p, w) = run(&t, &frame(SID, 64, None));
        assert_eq!(p.verdict, Verdict::Tx(0));
        assert_eq!((p.data()[14 + 40], p.data()[14 + 41]), (1, 0));
        assert_eq!(w.counters.drops[DropReason::NoRoute as usize], 1);
        assert_eq!(w.counters.sids.get(0).unwrap().packets, 1);
    }

    #[test]
    fn the_row() {
        let b = by_keyword("End.MAP").unwrap();
        assert!(!b.in_kernel);
        assert_eq!((b.required, b.optional), (&[Param::Map][..], &[][..]));
        assert_eq!(b.rfc, "RFC 9433 §6.2");
    }
}
