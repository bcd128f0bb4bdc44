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
//! the Linux kernel and for sr6 (the kernel lacks End.DT4/End.DT46 without VRF
//! devices; those are sr6 only).

use std::net::{Ipv4Addr, Ipv6Addr};

use crate::model::Behavior;

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
    /// transit behaviours, the SUT's SID for the endpoint behaviours.
    pub dst6: Option<Ipv6Addr>,
    /// For endpoint behaviours with Segments Left 1 (End, End.T, End.X): the next
    /// segment (routed back to the tester).
    pub next_sid: Option<Ipv6Addr>,
    /// Destination of the inner IPv6 packet (decapsulating behaviours) or of the plain
    /// IPv6 packet (transit).
    pub inner6: Ipv6Addr,
    /// Destination of IPv4 packets (plain or inner).
    pub inner4: Ipv4Addr,
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

/// The SUT's SID of each endpoint behaviour, and the steered prefix of each transit
/// behaviour.
pub fn flow(b: Behavior) -> Flow {
    let sid = |last: u16| Some(a6([0xfc00, 0x2, 0, 0, 0, 0, 0, last]));
    let steered = |n: u16| Some(a6([0xfc00, 0x100 + n, 0, 0, 0, 0, 0, 1]));
    let f = |dst6, next_sid| Flow { dst6, next_sid, inner6: DST6, inner4: DST4 };
    match b {
        Behavior::Ipv6 => f(Some(DST6), None),
        Behavior::Ipv4 => f(None, None),
        Behavior::TEncaps => f(steered(1), None),
        Behavior::TInsert => f(steered(2), None),
        Behavior::TEncapsL2 => f(steered(3), None),
        Behavior::End => f(sid(0xe), Some(SEG1)),
        Behavior::EndT => f(sid(0x7), Some(SEG1)),
        Behavior::EndX => f(sid(0x10), Some(SEG1)),
        Behavior::EndDx2 => f(sid(0xd2), None),
        Behavior::EndDx4 => f(sid(0xd4), None),
        Behavior::EndDx6 => f(sid(0xd6), None),
        Behavior::EndDt4 => f(sid(0xd5), None),
        Behavior::EndDt6 => f(sid(0xd7), None),
        Behavior::EndDt46 => f(sid(0xd8), None),
    }
}

/// Why a forwarder cannot run a behaviour (`None`: it can).
pub fn unsupported(forwarder: &str, b: Behavior) -> Option<&'static str> {
    match (forwarder, b) {
        ("linux", Behavior::EndDt4 | Behavior::EndDt46) => {
            Some("the kernel's End.DT4/End.DT46 need a VRF device, which this testbed does not create")
        }
        _ => None,
    }
}

/// The SUT's configuration for behaviour `b` (iproute2 lines; the leading `ip` kept so
/// the same text configures the kernel). `tg1_mac` is the tester's receiving MAC.
pub fn config(b: Behavior, tg1_mac: &str) -> String {
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
        Behavior::End => format!("ip -6 route add {dst}/128 encap seg6local action End dev {DUT0}\n"),
        Behavior::EndT => format!(
            "ip -6 route add fc00:200::/64 via {TG1_6} dev {DUT1} table 100\n\
             ip -6 route add {dst}/128 encap seg6local action End.T table 100 dev {DUT0}\n"
        ),
        Behavior::EndX => format!("ip -6 route add {dst}/128 encap seg6local action End.X nh6 {TG1_6} dev {DUT0}\n"),
        Behavior::EndDx2 => format!("ip -6 route add {dst}/128 encap seg6local action End.DX2 oif {DUT1} dev {DUT0}\n"),
        // The kernel looks nh4 up as a route and, nh4 being on-link, resolves the
        // *inner destination* on dut1 rather than nh4 (seg6_local.c looks up nh4 with
        // ip_route_input and a connected route has no gateway): give it that neighbour.
        // sr6 sends to nh4's MAC (RFC 8986 §4.5's adjacency) and does not need it.
        Behavior::EndDx4 => format!(
            "ip neigh add {DST4} lladdr {tg1_mac} dev {DUT1}\n\
             ip -6 route add {dst}/128 encap seg6local action End.DX4 nh4 {TG1_4} dev {DUT0}\n"
        ),
        Behavior::EndDx6 => {
            format!("ip -6 route add {dst}/128 encap seg6local action End.DX6 nh6 {TG1_6} dev {DUT0}\n")
        }
        Behavior::EndDt6 => format!("ip -6 route add {dst}/128 encap seg6local action End.DT6 table 254 dev {DUT0}\n"),
        Behavior::EndDt4 => format!(
            "ip route add 10.100.0.0/24 via {TG1_4} dev {DUT1} table 100\n\
             ip -6 route add {dst}/128 encap seg6local action End.DT4 vrftable 100 dev {DUT0}\n"
        ),
        Behavior::EndDt46 => format!(
            "ip route add 10.100.0.0/24 via {TG1_4} dev {DUT1} table 100\n\
             ip -6 route add fc00:100::/64 via {TG1_6} dev {DUT1} table 100\n\
             ip -6 route add {dst}/128 encap seg6local action End.DT46 vrftable 100 dev {DUT0}\n"
        ),
    };
    c.push_str(&line);
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_behaviour_configures_sr6() {
        for b in Behavior::ALL {
            let text = config(b, "02:00:00:00:00:02");
            let spec = sr6_config::parse_str(&text, b.name()).unwrap_or_else(|e| panic!("{}: {e}", b.name()));
            sr6_core::tables::Tables::build(&spec).unwrap_or_else(|e| panic!("{}: {}", b.name(), e.message));
        }
    }

    #[test]
    fn sids_are_distinct() {
        let mut d: Vec<_> = Behavior::ALL.iter().filter_map(|b| flow(*b).dst6).collect();
        let n = d.len();
        d.sort();
        d.dedup();
        assert_eq!(d.len(), n, "one destination per behaviour (ipv4 has none)");
        assert_eq!(n, Behavior::ALL.len() - 1);
    }
}
