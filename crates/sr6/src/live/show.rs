//! `sr6 ctl show ...`: SIDs, routes, counters and neighbours of a running router, as
//! text for humans or JSON (schema in docs/cli.md).

use std::fmt::Write;
use std::net::IpAddr;

use serde_json::{json, Value};
use sr6_core::spec::{RouteKind, RouteSpec, RouterSpec};
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
    spec.routes.iter().map(route_line).collect()
}

fn route_line(r: &RouteSpec) -> String {
    let mut o = prefix(&r.prefix);
    let via_dev = |o: &mut String, via: &Option<IpAddr>, dev: &Option<String>| {
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
            (
                d.name.clone(),
                json!({
                    "rx": p.rx, "tx": p.tx, "tx_pipeline": c.tx.get(&d.name).copied().unwrap_or(0),
                    "rx_ring_full": p.rx_ring_full, "rx_oversized": p.rx_oversized, "tx_ring_full": p.tx_ring_full,
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
        "neighbour_queue": {"queued": pend.queued, "sent": pend.sent, "overflow": pend.overflow, "timeout": pend.timeout},
        "tx_no_port": no_port,
        "overload": {"raised": ovl.raised, "raised_ms": ovl.raised_ns / 1_000_000},
        "devices": devs,
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
    let q = &v["neighbour_queue"];
    let _ = writeln!(
        o,
        "neighbour queue: queued {} sent {} overflow {} timeout {}",
        q["queued"], q["sent"], q["overflow"], q["timeout"]
    );
    let g = &v["overload"];
    let _ = writeln!(o, "overload guard: raised {} times, {} ms in all", g["raised"], g["raised_ms"]);
    let _ = writeln!(o, "{:<16} {:>12} {:>12} {:>12} {:>12}", "device", "rx", "tx", "rx_ring_full", "tx_ring_full");
    if let Some(m) = v["devices"].as_object() {
        for (d, p) in m {
            let _ = writeln!(
                o,
                "{d:<16} {:>12} {:>12} {:>12} {:>12}",
                n(&p["rx"]),
                n(&p["tx"]),
                n(&p["rx_ring_full"]),
                n(&p["tx_ring_full"])
            );
        }
    }
    o
}

/// The neighbours the tables hold (static and learned).
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
