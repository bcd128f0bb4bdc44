//! `sr6 ctl show ...`: SIDs, routes, counters, devices and neighbours of a running router, as
//! text for humans or JSON (schema in docs/cli.md).

use std::fmt::Write;
use std::net::IpAddr;

use serde_json::{json, Value};
use sr6_core::spec::{NexthopKind, PathSpec, RouteKind, RouteSpec, RouterSpec, RuleAction, RuleSpec};
use sr6_core::tables::Tables;

use super::state::{PrefixKey, Retired, Shared};
use crate::report::prefix;

/// Per SID: prefix, behaviour, parameters and counters (summed over workers and over
/// the table generations the SID lived through).
pub fn sids(t: &Tables, c: &Retired) -> Value {
    Value::Array(
        t.sids
            .iter()
            .map(|s| {
                let k = c.sids.get(&(PrefixKey::from(&s.prefix), s.behaviour.keyword)).copied().unwrap_or_default();
                crate::report::sid_json(s, &k)
            })
            .collect(),
    )
}

pub fn sids_text(t: &Tables, c: &Retired) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "{:<28} {:<16} {:>12} {:>14} {:>8}  params", "sid", "action", "packets", "bytes", "errors");
    for v in sids(t, c).as_array().into_iter().flatten() {
        let _ = writeln!(
            o,
            "{:<28} {:<16} {:>12} {:>14} {:>8}  {}",
            v["sid"].as_str().unwrap_or(""),
            v["action"].as_str().unwrap_or(""),
            n(&v["packets"]),
            n(&v["bytes"]),
            n(&v["errors"]),
            v["params"].as_str().unwrap_or("")
        );
    }
    o
}

/// A counter of a JSON object, for aligned text.
fn n(v: &Value) -> u64 {
    v.as_u64().unwrap_or(0)
}

/// The routes, in configuration syntax (what `ip -6 route show` would list).
pub fn routes(spec: &RouterSpec) -> Vec<String> {
    spec.routes.iter().map(|r| route_line(spec, r)).collect()
}

/// The policy routing rules, IPv6 then IPv4 each in the order they are walked, as the
/// configuration lines that make them (priorities written out; the kernel's implicit
/// rules 0, 32766 and 32767 are not listed).
pub fn rules(spec: &RouterSpec) -> Vec<String> {
    let (v6, v4): (Vec<&RuleSpec>, Vec<&RuleSpec>) = spec.rules.iter().partition(|r| r.v6);
    v6.into_iter().chain(v4).map(rule_line).collect()
}

fn rule_line(r: &RuleSpec) -> String {
    let mut o = String::from(if r.v6 { "ip -6 rule add" } else { "ip -4 rule add" });
    if r.not {
        o.push_str(" not");
    }
    if let Some(p) = &r.from {
        let _ = write!(o, " from {}", prefix(p));
    }
    if let Some(p) = &r.to {
        let _ = write!(o, " to {}", prefix(p));
    }
    if let Some(d) = &r.iif {
        let _ = write!(o, " iif {d}");
    }
    if r.ipproto != 0 {
        let _ = write!(o, " ipproto {}", r.ipproto);
    }
    for (w, range) in [("sport", r.sport), ("dport", r.dport)] {
        match range {
            Some((a, b)) if a == b => {
                let _ = write!(o, " {w} {a}");
            }
            Some((a, b)) => {
                let _ = write!(o, " {w} {a}-{b}");
            }
            None => {}
        }
    }
    let _ = write!(o, " priority {}", r.pref);
    match r.action {
        RuleAction::Lookup(254) => o.push_str(" lookup main"),
        RuleAction::Lookup(255) => o.push_str(" lookup local"),
        RuleAction::Lookup(253) => o.push_str(" lookup default"),
        RuleAction::Lookup(t) => {
            let _ = write!(o, " lookup {t}");
        }
        RuleAction::Blackhole => o.push_str(" blackhole"),
        RuleAction::Unreachable => o.push_str(" unreachable"),
        RuleAction::Prohibit => o.push_str(" prohibit"),
    }
    o
}

/// ` nexthop via A dev D weight W` per path, as `ip route` lists a multipath route.
fn paths(o: &mut String, paths: &[PathSpec]) {
    for p in paths {
        o.push_str(" nexthop");
        if let Some(v) = p.via {
            let _ = write!(o, " via {v}");
        }
        if let Some(d) = &p.dev {
            let _ = write!(o, " dev {d}");
        }
        let _ = write!(o, " weight {}", p.weight);
    }
}

/// The paths of nexthop object `id`, as a comment (what `ip route` lists under a
/// route with `nhid`).
fn nexthop_paths(spec: &RouterSpec, id: u32) -> String {
    let single = |id: u32, weight: u16| match spec.nexthops.iter().find(|n| n.id == id).map(|n| &n.kind) {
        Some(NexthopKind::Single { via, dev, .. }) => {
            Some(PathSpec { via: *via, dev: Some(dev.as_str().into()), weight })
        }
        _ => None,
    };
    let mut o = String::new();
    match spec.nexthops.iter().find(|n| n.id == id).map(|n| &n.kind) {
        Some(NexthopKind::Group { members }) => {
            paths(&mut o, &members.iter().filter_map(|(m, w)| single(*m, *w)).collect::<Vec<_>>())
        }
        Some(NexthopKind::Single { .. }) => {
            paths(&mut o, &single(id, 1).into_iter().collect::<Vec<_>>());
            o = o.replace(" weight 1", "");
        }
        Some(NexthopKind::Blackhole { .. }) => o.push_str(" blackhole"),
        None => {}
    }
    o
}

fn route_line(spec: &RouterSpec, r: &RouteSpec) -> String {
    let mut o = prefix(&r.prefix);
    let via_dev = |o: &mut String, via: &Option<IpAddr>, dev: &Option<sr6_core::spec::DevName>| {
        if let Some(v) = via {
            let _ = write!(o, " via {v}");
        }
        if let Some(d) = dev {
            let _ = write!(o, " dev {d}");
        }
    };
    match &r.kind {
        RouteKind::Forward { via, dev } => via_dev(&mut o, via, dev),
        RouteKind::Blackhole => o.insert_str(0, "blackhole "),
        RouteKind::Unreachable => o.insert_str(0, "unreachable "),
        RouteKind::Seg6 { encap, via, dev } => {
            let _ = write!(o, " encap seg6 mode {encap}");
            via_dev(&mut o, via, dev);
        }
        RouteKind::Seg6Local { action, dev } => {
            let _ = write!(o, " encap seg6local action {action}");
            via_dev(&mut o, &None, dev);
        }
        RouteKind::Gtp { tunnel, via, dev } => {
            let _ = write!(o, " encap gtp {tunnel}");
            via_dev(&mut o, via, dev);
        }
        RouteKind::Bpf { bpf, via, dev } => {
            let _ = write!(o, " encap bpf {bpf}");
            via_dev(&mut o, via, dev);
        }
        RouteKind::Multipath { paths: ps } => {
            if r.table != sr6_core::spec::MAIN_TABLE {
                let _ = write!(o, " table {}", r.table);
            }
            paths(&mut o, ps);
            return o;
        }
        RouteKind::Nhid { id } => {
            let _ = write!(o, " nhid {id}");
            if r.table != sr6_core::spec::MAIN_TABLE {
                let _ = write!(o, " table {}", r.table);
            }
            let _ = write!(o, "   #{}", nexthop_paths(spec, *id));
            return o;
        }
    }
    if r.table != sr6_core::spec::MAIN_TABLE {
        let _ = write!(o, " table {}", r.table);
    }
    o
}

/// Counters: packets in/out, drops by reason, ICMP, neighbour queue, ports.
pub fn counters(shared: &Shared, t: &Tables) -> Value {
    let c = shared.totals();
    let (ports, pend, no_port) = shared.port_totals();
    let ovl = shared.overload_totals();
    // The XDP tier's share of rx and tx (included in them).
    let xdp = super::state::lock(&shared.fast).as_ref().map(|f| f.device_counts(t)).unwrap_or_default();
    let drops: serde_json::Map<String, Value> = sr6_core::drop::DropReason::ALL
        .iter()
        .filter(|r| c.drops[**r as usize] > 0)
        .map(|r| (r.name().to_string(), json!(c.drops[*r as usize])))
        .collect();
    let devs: serde_json::Map<String, Value> = t
        .devices
        .iter()
        .enumerate()
        .map(|(i, d)| {
            let p = ports.get(i).copied().unwrap_or_default();
            let (rx_xdp, tx_xdp) = xdp.get(i).copied().unwrap_or_default();
            (
                d.name.clone(),
                json!({
                    "rx": p.rx, "tx": p.tx, "tx_pipeline": c.tx.get(&d.name).copied().unwrap_or(0),
                    "rx_ring_full": p.rx_ring_full, "rx_oversized": p.rx_oversized, "tx_ring_full": p.tx_ring_full,
                    "rx_csum_completed": p.rx_csum_completed, "rx_gso": p.rx_gso, "rx_bad_vnet": p.rx_bad_vnet,
                    "tx_absent": p.tx_absent, "rx_xdp": rx_xdp, "tx_xdp": tx_xdp,
                }),
            )
        })
        .collect();
    json!({
        "packets_in": c.rx,
        "local": c.local,
        "dropped": c.dropped(),
        "drops": drops,
        "icmp": {"sent": c.icmp_sent, "ratelimited": c.icmp_ratelimited, "suppressed": c.icmp_suppressed},
        "fragmentation": {"packets": c.fragmented, "fragments": c.fragments},
        "neighbour_queue": {"queued": pend.queued, "sent": pend.sent, "overflow": pend.overflow, "timeout": pend.timeout},
        "tx_no_port": no_port,
        "overload": {"raised": ovl.raised, "raised_ms": ovl.raised_ns / 1_000_000},
        "devices": devs,
        "ids": crate::ids_alerts::stats_json(t, &super::ids::totals(shared)),
    })
}

pub fn counters_text(v: &Value) -> String {
    let mut o = String::new();
    let drops: Vec<(String, u64)> =
        v["drops"].as_object().map_or(Vec::new(), |m| m.iter().map(|(k, c)| (k.clone(), n(c))).collect());
    let out = v["devices"].as_object().map_or(0, |m| m.values().map(|p| n(&p["tx"])).sum());
    let line = crate::report::summary(n(&v["packets_in"]), out, n(&v["icmp"]["sent"]), n(&v["local"]), &drops);
    let _ = writeln!(o, "{line}");
    let i = &v["icmp"];
    let _ =
        writeln!(o, "icmp errors: sent {} ratelimited {} suppressed {}", i["sent"], i["ratelimited"], i["suppressed"]);
    let f = &v["fragmentation"];
    let _ = writeln!(o, "ipv4 fragmentation: {} packets sent as {} fragments", n(&f["packets"]), n(&f["fragments"]));
    let q = &v["neighbour_queue"];
    let _ = writeln!(
        o,
        "neighbour queue: queued {} sent {} overflow {} timeout {}",
        q["queued"], q["sent"], q["overflow"], q["timeout"]
    );
    if !v["ids"].is_null() {
        let i = &v["ids"];
        let _ = writeln!(
            o,
            "ids ({} mode): inspected {} alerts {} dropped {} passed {} malformed {} alerts_lost {}",
            i["mode"].as_str().unwrap_or(""),
            i["inspected"],
            i["alerts"],
            i["dropped"],
            i["passed"],
            i["malformed"],
            i["alerts_lost"]
        );
    }
    let g = &v["overload"];
    let _ = writeln!(o, "overload guard: raised {} times, {} ms in all", g["raised"], g["raised_ms"]);
    let _ = writeln!(
        o,
        "{:<16} {:>12} {:>12} {:>12} {:>12} {:>12}",
        "device", "rx", "tx", "rx_ring_full", "tx_ring_full", "tx_absent"
    );
    if let Some(m) = v["devices"].as_object() {
        for (d, p) in m {
            let _ = writeln!(
                o,
                "{d:<16} {:>12} {:>12} {:>12} {:>12} {:>12}",
                n(&p["rx"]),
                n(&p["tx"]),
                n(&p["rx_ring_full"]),
                n(&p["tx_ring_full"]),
                n(&p["tx_absent"])
            );
        }
    }
    o
}

/// The neighbours the tables hold (static and learned).
/// Per device: name, MAC, MTU (the kernel's) and forwarding.
pub fn devices(t: &Tables) -> Value {
    Value::Array(
        t.devices
            .iter()
            .map(|d| {
                let mac = d.mac.iter().map(|b| format!("{b:02x}")).collect::<Vec<_>>().join(":");
                json!({"name": d.name, "mac": mac, "mtu": d.mtu, "forwarding6": d.forwarding6,
                       "forwarding4": d.forwarding4})
            })
            .collect(),
    )
}

pub fn devices_text(v: &Value) -> String {
    let mut o = String::new();
    for d in v.as_array().into_iter().flatten() {
        let _ = writeln!(
            o,
            "{} address {} mtu {}",
            d["name"].as_str().unwrap_or(""),
            d["mac"].as_str().unwrap_or(""),
            d["mtu"]
        );
    }
    o
}

pub fn neighbours(t: &Tables) -> Vec<(String, IpAddr, String)> {
    let mut v: Vec<(String, IpAddr, String)> = t
        .neighbours
        .iter()
        .map(|((d, k), mac)| {
            let a = std::net::Ipv6Addr::from(*k);
            let addr = match a.to_ipv4_mapped() {
                Some(v4) => IpAddr::V4(v4),
                None => IpAddr::V6(a),
            };
            let name = t.devices.get(*d as usize).map_or("?".to_string(), |x| x.name.clone());
            let m = mac.iter().map(|b| format!("{b:02x}")).collect::<Vec<_>>().join(":");
            (name, addr, m)
        })
        .collect();
    v.sort();
    v
}

/// Each device's life (`show status`): state, kernel index, re-attachments.
pub fn links(shared: &Shared) -> Value {
    Value::Array(
        shared
            .links
            .status()
            .iter()
            .map(|d| json!({"name": d.name, "state": d.state.as_str(), "ifindex": d.ifindex, "reattached": d.reattached}))
            .collect(),
    )
}

pub fn links_text(v: &Value) -> String {
    let mut o = String::new();
    for d in v.as_array().into_iter().flatten() {
        let _ = write!(
            o,
            "\ndevice {} {} ifindex {} re-attached {}",
            d["name"].as_str().unwrap_or(""),
            d["state"].as_str().unwrap_or(""),
            d["ifindex"],
            d["reattached"]
        );
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `show routes` lists multipath routes and routes through nexthop objects in
    /// configuration syntax: the listing parses back to the same routes.
    #[test]
    fn multipath_routes_list_as_config() {
        let nh = "ip nexthop add id 1 via fc00:12::2 dev eth1\nip nexthop add id 2 via fc00:13::2 dev eth2\n\
                  ip nexthop add id 9 group 1/2,3\n";
        let conf = format!(
            "{nh}ip -6 route add fc00:50::/48 nexthop via fc00:12::2 dev eth1 weight 2 nexthop dev eth2\n\
             ip -6 route add fc00:60::/48 nhid 9 table 7\n"
        );
        let spec = sr6_config::parse_str(&conf, "t").unwrap();
        let lines = routes(&spec);
        assert_eq!(lines[0], "fc00:50::/48 nexthop via fc00:12::2 dev eth1 weight 2 nexthop dev eth2 weight 1");
        assert_eq!(
            lines[1],
            "fc00:60::/48 nhid 9 table 7   # nexthop via fc00:12::2 dev eth1 weight 1 nexthop via fc00:13::2 dev eth2 weight 3"
        );
        let again: String = lines.iter().map(|l| format!("ip -6 route add {l}\n")).collect();
        let back = sr6_config::parse_str(&format!("{nh}{again}"), "t").unwrap();
        let kinds = |s: &RouterSpec| s.routes.iter().map(|r| (r.table, r.prefix, r.kind.clone())).collect::<Vec<_>>();
        assert_eq!(kinds(&back), kinds(&spec));
    }

    /// `show routes` writes compressed head-ends and binding SIDs as they were given:
    /// the scheme, its lengths and the full SIDs; the listing parses back to them.
    #[test]
    fn compressed_lists_list_as_config() {
        let conf = "ip -6 route add fc00:9::/64 encap seg6 mode encap csid next segs fc00:0:1::,fc00:0:2:: dev eth1\n\
                    ip -6 route add fc00:1::b6/128 encap seg6local action End.B6.Encaps srh csid replace lblen 48 \
                    nflen 16 segs 2001:db8:1:1::,2001:db8:1:2:: hmac 3 dev eth1\n";
        let spec = sr6_config::parse_str(conf, "t").unwrap();
        let lines = routes(&spec);
        assert_eq!(
            lines[0],
            "fc00:9::/64 encap seg6 mode encap csid next lblen 32 nflen 16 segs fc00:0:1::,fc00:0:2:: dev eth1"
        );
        assert_eq!(
            lines[1],
            "fc00:1::b6/128 encap seg6local action End.B6.Encaps srh csid replace lblen 48 nflen 16 segs \
             2001:db8:1:1::,2001:db8:1:2:: hmac 3 dev eth1"
        );
        let again: String = lines.iter().map(|l| format!("ip -6 route add {l}\n")).collect();
        assert_eq!(sr6_config::parse_str(&again, "t").unwrap().routes, spec.routes);
    }

    /// `show routes` writes GTP-U tunnels in `encap gtp` syntax; the listing parses back
    /// to the same routes.
    #[test]
    fn gtp_tunnels_list_as_config() {
        let conf = "ip route add 198.18.0.0/16 encap gtp teid 4294967295 dst 10.2.0.77 src 10.0.12.1 qfi 9 \
                    via 10.0.12.2 dev eth1\n\
                    ip -6 route add 2001:db8:9::/48 encap gtp teid 7 dst fc00:2::77 src fc00:12::1 dev eth1\n\
                    ip route add 192.0.2.1/32 encap gtp decap table 100 dev eth0\n\
                    ip -6 route add fc00:99::1/128 encap gtp decap dev eth0\n";
        let spec = sr6_config::parse_str(conf, "t").unwrap();
        let lines = routes(&spec);
        assert_eq!(
            lines,
            [
                "198.18.0.0/16 encap gtp teid 4294967295 dst 10.2.0.77 src 10.0.12.1 qfi 9 via 10.0.12.2 dev eth1",
                "2001:db8:9::/48 encap gtp teid 7 dst fc00:2::77 src fc00:12::1 dev eth1",
                "192.0.2.1/32 encap gtp decap table 100 dev eth0",
                "fc00:99::1/128 encap gtp decap dev eth0",
            ]
        );
        let again: String = lines.iter().map(|l| format!("ip route add {l}\n")).collect();
        assert_eq!(sr6_config::parse_str(&again, "t").unwrap().routes, spec.routes);
    }

    #[test]
    fn lwt_bpf_routes_list_as_config() {
        let dir = crate::test_support::scratch_dir("show-lwt");
        let o = crate::test_support::compile("lwt_in", &dir).display().to_string();
        let conf = format!(
            "ip -6 route add fc00:9::/64 encap bpf in obj {o} sec in_encap headroom 8 via fc00:12::2 dev eth1\n"
        );
        let spec = sr6_config::parse_str(&conf, "t").unwrap();
        let lines = routes(&spec);
        assert_eq!(
            lines,
            [format!("fc00:9::/64 encap bpf in obj {o} sec in_encap headroom 8 via fc00:12::2 dev eth1")]
        );
        let again: String = lines.iter().map(|l| format!("ip -6 route add {l}\n")).collect();
        assert_eq!(sr6_config::parse_str(&again, "t").unwrap().routes, spec.routes);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
