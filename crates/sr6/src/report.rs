//! Counters and tables for humans and for JSON.

use serde_json::{json, Value};
use sr6_core::behaviour::TABLE;
use sr6_core::counters::Counters;
use sr6_core::spec::Prefix;
use sr6_core::tables::Tables;

pub fn prefix(p: &Prefix) -> String {
    match p {
        Prefix::V6(a, l) => format!("{a}/{l}"),
        Prefix::V4(a, l) => format!("{a}/{l}"),
    }
}

/// One SID and its counters (`sid`, `action`, `params`, `packets`, `bytes`, `errors`), as
/// `sr6 pcap --json` and `sr6 ctl show sids --json` print it.
pub fn sid_json(s: &sr6_core::tables::Sid, k: &sr6_core::counters::SidCounter) -> Value {
    json!({
        "sid": prefix(&s.prefix),
        "action": s.behaviour.keyword,
        "params": s.action.params_text(),
        "packets": k.packets,
        "bytes": k.bytes(),
        "errors": k.errors,
    })
}

/// The counters as one JSON object (schema in docs/cli.md).
pub fn json(t: &Tables, c: &Counters) -> Value {
    let tx: serde_json::Map<String, Value> =
        t.devices.iter().zip(&c.tx).map(|(d, n)| (d.name.clone(), json!(n))).collect();
    let sids: Vec<Value> = t.sids.iter().zip(c.sids.iter()).map(|(s, k)| sid_json(s, &k)).collect();
    let policies: Vec<Value> = t
        .policies
        .iter()
        .zip(&c.policies)
        .map(|(p, n)| {
            json!({
                "mode": p.mode.keyword(),
                "behavior": p.mode.rfc_name(),
                "segs": p.segs.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
                "csid": p.csid.map(|c| c.to_string()),
                "packets": n,
            })
        })
        .collect();
    let drops: serde_json::Map<String, Value> =
        c.drop_reasons().map(|(r, n)| (r.name().to_string(), json!(n))).collect();
    json!({
        "packets_in": c.rx,
        "tx": tx,
        "local": c.local,
        "dropped": c.dropped(),
        "drops": drops,
        "icmp": {"sent": c.icmp_sent, "ratelimited": c.icmp_ratelimited, "suppressed": c.icmp_suppressed},
        "fragmentation": {"packets": c.fragmented, "fragments": c.fragments},
        "sids": sids,
        "policies": policies,
    })
}

/// One line relating what came in to what went out: `N frames in -> M out (K of them
/// ICMP errors), L local, D dropped: REASON n, ...`. Each frame in is forwarded, local
/// or dropped; the frames out are the forwarded ones plus the ICMP errors sent.
pub fn summary(rx: u64, out: u64, icmp: u64, local: u64, drops: &[(String, u64)]) -> String {
    let mut s = format!("{rx} frames in -> {out} out");
    if icmp > 0 {
        s += &format!(" ({icmp} of them ICMP errors)");
    }
    let dropped: u64 = drops.iter().map(|(_, n)| n).sum();
    s += &format!(", {local} local, {dropped} dropped");
    if !drops.is_empty() {
        let r: Vec<String> = drops.iter().map(|(k, n)| format!("{k} {n}")).collect();
        s += &format!(": {}", r.join(", "));
    }
    s
}

/// The counters as text.
pub fn print(t: &Tables, c: &Counters) {
    let drops: Vec<(String, u64)> = c.drop_reasons().map(|(r, n)| (r.name().to_string(), n)).collect();
    println!("{}", summary(c.rx, c.tx.iter().sum(), c.icmp_sent, c.local, &drops));
    let tx: Vec<String> = t.devices.iter().zip(&c.tx).map(|(d, n)| format!("{}={n}", d.name)).collect();
    println!("out by device: {}", tx.join(" "));
    if c.fragmented > 0 {
        println!("ipv4 fragmentation: {} packets sent as {} fragments", c.fragmented, c.fragments);
    }
    if !t.sids.is_empty() {
        println!("{:<28} {:<18} {:>10} {:>12} {:>8}", "SID", "action", "packets", "bytes", "errors");
        for (s, k) in t.sids.iter().zip(c.sids.iter()) {
            println!(
                "{:<28} {:<18} {:>10} {:>12} {:>8}",
                prefix(&s.prefix),
                s.behaviour.keyword,
                k.packets,
                k.bytes(),
                k.errors
            );
        }
    }
    let drops: Vec<_> = c.drop_reasons().collect();
    if !drops.is_empty() {
        println!("drops:");
        for (r, n) in drops {
            println!("  {:<22} {:>10}  {}", r.name(), n, r.describe());
        }
    }
    if c.icmp_ratelimited + c.icmp_suppressed > 0 {
        println!(
            "icmp errors not sent: {} rate-limited, {} forbidden by RFC 4443 §2.4(e)",
            c.icmp_ratelimited, c.icmp_suppressed
        );
    }
}

/// `sr6 behaviours`.
pub fn print_behaviours() {
    for d in TABLE {
        let mut params: Vec<String> =
            d.required.iter().map(|p| format!("{} <{}>", p.keyword(), p.value_hint())).collect();
        params.extend(d.optional.iter().map(|p| format!("[{} <{}>]", p.keyword(), p.value_hint())));
        let fl: Vec<&str> = d.flavors.iter().map(|f| f.keyword()).collect();
        if !fl.is_empty() {
            params.push(format!("[flavors {}]", fl.join(",")));
        }
        println!("{:<18} {}", d.keyword, params.join(" "));
        println!("{:<18} {} ({}{})", "", d.summary, d.rfc, if d.in_kernel { "" } else { "; sr6 extension" });
    }
    println!();
    println!("Head-end modes (encap seg6 mode M [csid next|replace ...] segs S1,...): encap, encap.red, inline, inline.red (sr6 extension), l2encap, l2encap.red");
}
