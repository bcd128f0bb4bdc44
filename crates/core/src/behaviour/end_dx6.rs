//! End.DX6 (RFC 8986 §4.4): decapsulate and cross-connect the inner IPv6 packet to a
//! next hop.

use super::{decap, Arrival, Behaviour, Inner, Next, Param, Takes};
use std::net::Ipv6Addr;

use crate::drop::DropReason;
use crate::packet::PacketBuf;
use crate::spec::SidAction;
use crate::tables::{BuildError, FastKind, FastSid, Route, Sid, SidBuilder, SidState, Tables};
use sr6_wire::Ipv6Packet;

pub static END_DX6: Behaviour = Behaviour {
    keyword: "End.DX6",
    required: &[Param::Nh6],
    optional: &[Param::Oif],
    flavors: &[],
    rfc: "RFC 8986 §4.4",
    summary: "decapsulate and cross-connect the inner IPv6 packet to a next hop",
    in_kernel: true,
    takes: Takes::Inner(Inner::Ipv6),
    build,
    input,
};

fn build(b: &mut SidBuilder, a: &SidAction) -> Result<SidState, BuildError> {
    // `nh6 ::`: the inner packet's own destination is looked up (below).
    if a.params.nh6 == Some(Ipv6Addr::UNSPECIFIED) {
        if a.params.oif.is_some() {
            return Err(b.error("End.DX6: `nh6 ::` looks the inner destination up; it takes no `oif`"));
        }
        return Ok(SidState { nh: None, table: Tables::MAIN, fast: FastSid::NO, ..SidState::default() });
    }
    let nh = b.next_hop6(a)?;
    Ok(SidState { nh: Some(nh), fast: FastSid::to(FastKind::Dx6, nh), ..SidState::default() })
}

fn input(t: &Tables, p: &mut PacketBuf, sid: &Sid, a: &Arrival) -> Next {
    let nh = sid.state.nh;
    if nh.is_none() && sid.action.params.nh6 != Some(Ipv6Addr::UNSPECIFIED) {
        return Next::drop(DropReason::NoRoute);
    }
    match decap::last_segment(p, a, |up| up == decap::IPV6) {
        Ok(_) => match nh {
            Some(nh) => decap::xconnect6(p, nh),
            None => any_next_hop(t, p),
        },
        Err(n) => n,
    }
}

/// `nh6 ::`: the inner packet goes where the main table sends its destination, as
/// Linux does (`input_action_end_dx6` looks up the inner destination when nh6 is
/// `::`, net/ipv6/seg6_local.c), but never to the host itself: that lookup is made
/// without local delivery, so a local destination is dropped.
fn any_next_hop(t: &Tables, p: &mut PacketBuf) -> Next {
    let Ok(ip) = Ipv6Packet::new_checked(p.data()) else { return Next::drop(DropReason::Malformed) };
    let dst = ip.dst_addr().octets();
    let n = ip.total_len();
    if matches!(t.fibs[Tables::MAIN as usize].lookup6(&dst), Some(Route::Local)) {
        return Next::drop(DropReason::NoRoute);
    }
    p.truncate(n);
    Next::Lookup6 { table: Tables::MAIN, forward: true }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::behaviour::by_keyword;
    use crate::packet::Verdict;
    use crate::pipeline::Worker;
    use crate::spec::{AddrSpec, Flavors, NeighSpec, Prefix, RouteKind, RouteSpec, RouterSpec, SidParams, MAIN_TABLE};
    use std::net::IpAddr;

    fn v6(s: &str) -> Ipv6Addr {
        s.parse().unwrap()
    }

    /// eth0 on fc00:1::/64 with neighbour fc00:1::2; End.DX6 `nh6 ::` at fc00:f::1.
    fn tables() -> Tables {
        let action = SidAction {
            behaviour: by_keyword("End.DX6").unwrap(),
            params: SidParams { nh6: Some(Ipv6Addr::UNSPECIFIED), ..SidParams::default() },
            flavors: Flavors::default(),
            count: false,
        };
        let spec = RouterSpec {
            devices: vec!["eth0".into()],
            addrs: vec![AddrSpec { line: 1, dev: "eth0".into(), addr: IpAddr::V6(v6("fc00:1::1")), prefix_len: 64 }],
            neighs: vec![NeighSpec {
                line: 2,
                dev: "eth0".into(),
                addr: IpAddr::V6(v6("fc00:1::2")),
                mac: [2, 0xaa, 0, 0, 0, 1],
            }],
            routes: vec![RouteSpec {
                line: 3,
                table: MAIN_TABLE,
                prefix: Prefix::V6(v6("fc00:f::1"), 128),
                kind: RouteKind::Seg6Local { action: Box::new(action), dev: Some("eth0".into()) },
            }],
            ..RouterSpec::default()
        };
        Tables::build(&spec).unwrap_or_else(|e| panic!("{e}")).0
    }

    /// An IPv6-in-IPv6 packet (no SRH) to the SID, the inner one to `inner_dst`.
    fn frame(inner_dst: &str) -> Vec<u8> {
        let mut inner = vec![0x60, 0, 0, 0, 0, 8, 59, 30];
        inner.extend_from_slice(&v6("fc00:1::2").octets());
        inner.extend_from_slice(&v6(inner_dst).octets());
        inner.extend_from_slice(&[0xa5; 8]);
        let mut f = vec![2, 0, 0, 0, 0, 1, 2, 0xaa, 0, 0, 0, 1, 0x86, 0xdd, 0x60, 0, 0, 0];
        f.extend_from_slice(&(inner.len() as u16).to_be_bytes());
        f.extend_from_slice(&[41, 64]);
        f.extend_from_slice(&v6("fc00:1::2").octets());
        f.extend_from_slice(&v6("fc00:f::1").octets());
        f.extend_from_slice(&inner);
        f
    }

    fn verdict(t: &Tables, f: &[u8]) -> Verdict {
        let mut w = Worker::new(t);
        let mut p = PacketBuf::new();
        assert!(p.load(f, 0));
        w.process(t, &mut p);
        p.verdict
    }

    #[test]
    fn nh6_any_forwards_by_the_inner_destination() {
        assert_eq!(verdict(&tables(), &frame("fc00:1::2")), Verdict::Tx(0));
    }

    #[test]
    fn nh6_any_drops_a_local_inner_destination() {
        assert_eq!(verdict(&tables(), &frame("fc00:1::1")), Verdict::Drop(DropReason::NoRoute));
    }
}
