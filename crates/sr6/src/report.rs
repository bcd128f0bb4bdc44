//! Counters and tables for humans and for JSON.

use serde_json::{json, Value};
use sr6_core::behaviour::proxy::cache::{Entry, MAX_LEN};
use sr6_core::behaviour::proxy::{Proxy, ProxyCounters};
use sr6_core::behaviour::Inner;
use sr6_core::behaviour::TABLE;
use sr6_core::counters::Counters;
use sr6_core::packet::DevId;
use sr6_core::spec::Prefix;
use sr6_core::tables::Tables;
use sr6_wire::srh::ROUTING_TYPE_SRH;
use sr6_wire::{walk_chain, Ipv6Packet, SrhPacket};

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
        .live_policies()
        .map(|(i, p)| (p, c.policies.get(i).copied().unwrap_or(0)))
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
        "proxies": proxies(t),
        "firewall": firewall(t, &c.firewall),
        "ids": crate::ids_alerts::stats_json(t, &c.ids),
    })
}

/// The firewall's policies and rules with their counters (`counters`: packets and
/// bytes per rule, [`Counters::firewall`]), in `ip6tables -S` order: `sr6 ctl show
/// firewall --json` and `firewall` in `sr6 pcap --json` (schema in docs/cli.md).
pub fn firewall(t: &Tables, counters: &[u64]) -> Value {
    let Some(fw) = &t.firewall else { return Value::Array(Vec::new()) };
    let get = |i: usize| (counters.get(2 * i).copied().unwrap_or(0), counters.get(2 * i + 1).copied().unwrap_or(0));
    let rows = fw
        .list()
        .into_iter()
        .map(|l| {
            let (packets, bytes) = get(l.counter);
            match l.rule {
                Some(r) => json!({
                    "chain": l.chain, "line": r.line,
                    "rule": r.nft.clone().unwrap_or_else(|| format!("-A {}{} {}", l.chain, r.m, r.target)),
                    "packets": packets, "bytes": bytes,
                }),
                None => json!({
                    "chain": l.chain,
                    "rule": format!("-P {} {}", l.chain, if l.policy == Some(false) { "DROP" } else { "ACCEPT" }),
                    "packets": packets, "bytes": bytes,
                }),
            }
        })
        .collect();
    Value::Array(rows)
}

/// [`firewall`] as `ip6tables -S -v` prints it: each rule, then `-c PACKETS BYTES`.
pub fn firewall_text(v: &Value) -> String {
    let rows = v.as_array().map(Vec::as_slice).unwrap_or_default();
    if rows.is_empty() {
        return "no firewall rules (every chain accepts)".into();
    }
    rows.iter()
        .map(|r| format!("{} -c {} {}", r["rule"].as_str().unwrap_or_default(), r["packets"], r["bytes"]))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The SR proxies with their caches and counters (`sr6 ctl show proxies --json`, and
/// `proxies` in `sr6 pcap --json` and `sr6 bench --json`; schema in docs/cli.md).
pub fn proxies(t: &Tables) -> Value {
    Value::Array(t.proxies.iter().map(|p| proxy_json(t, p)).collect())
}

fn proxy_json(t: &Tables, p: &Proxy) -> Value {
    let s = t.sids.get(p.sid as usize);
    let a = s.map(|s| &s.action.params);
    let dev = |d: DevId| t.devices.get(usize::from(d)).map(|d| d.name.clone());
    let nh = a.and_then(|a| a.nh6.map(|x| x.to_string()).or(a.nh4.map(|x| x.to_string())));
    let c = &p.state.counters;
    let drops: serde_json::Map<String, Value> =
        c.drops().into_iter().map(|(r, n)| (r.name().to_string(), json!(n))).collect();
    json!({
        "sid": s.map(|s| prefix(&s.prefix)),
        "behaviour": s.map(|s| s.behaviour.keyword),
        "params": s.map(|s| s.action.params_text()),
        "nh": nh,
        "oif": a.and_then(|a| a.oif.clone()),
        "iif": dev(p.iif),
        "inner": match p.inner {
            Inner::Ipv4 => "ipv4",
            Inner::Ethernet => "ethernet",
            Inner::Ipv6 | Inner::Ip => "ipv6",
        },
        "cache": if p.kind.caches() { cache_json(p) } else { Value::Null },
        "to_function": ProxyCounters::get(&c.to_function),
        "from_function": ProxyCounters::get(&c.from_function),
        "hits": ProxyCounters::get(&c.hits),
        "misses": ProxyCounters::get(&c.misses),
        "updates": ProxyCounters::get(&c.updates),
        "drops": drops,
    })
}

/// An End.AD cache: `{"state": "empty"}`, `{"state": "end_of_chain"}`, or the
/// headers: `{"state": "headers", "length", "src", "dst", "segments_left",
/// "segments" (Segment List[0] first), "hex"}`.
fn cache_json(p: &Proxy) -> Value {
    let mut b = [0u8; MAX_LEN];
    let n = match p.state.cache.read(&mut b) {
        None => return json!({"state": "busy"}),
        Some(Entry::Empty) => return json!({"state": "empty"}),
        Some(Entry::EndOfChain) => return json!({"state": "end_of_chain"}),
        Some(Entry::Headers(n)) => n,
    };
    let h = &mut b[..n.min(MAX_LEN)];
    let hex: String = h.iter().map(|x| format!("{x:02x}")).collect();
    let mut v = json!({"state": "headers", "length": n, "hex": hex});
    // The payload length as cached is the learning packet's: the headers alone here.
    if h.len() >= 40 {
        let mut ip = Ipv6Packet::new_unchecked(&mut *h);
        ip.set_payload_len((n - 40) as u16);
        v["src"] = json!(ip.src_addr().to_string());
        v["dst"] = json!(ip.dst_addr().to_string());
    }
    let srh = walk_chain(h).ok().and_then(|c| c.routing).filter(|r| r.routing_type == ROUTING_TYPE_SRH);
    if let Some(srh) = srh.and_then(|r| SrhPacket::new_checked(h.get(r.offset..)?).ok()) {
        v["segments_left"] = json!(srh.segments_left());
        let segs: Vec<String> = (0..=srh.last_entry()).filter_map(|i| srh.segment(i)).map(|a| a.to_string()).collect();
        v["segments"] = json!(segs);
    }
    v
}

/// `sr6 ctl show proxies`: one line per proxy, and its cache.
pub fn proxies_text(v: &Value) -> String {
    let mut o = String::new();
    let n = |x: &Value| x.as_u64().unwrap_or(0);
    let st = |x: &Value| x.as_str().unwrap_or("-").to_string();
    o += &format!(
        "{:<24} {:<9} {:>10} {:>10} {:>8} {:>8} {:>8}  params\n",
        "sid", "action", "to_func", "from_func", "hits", "misses", "updates"
    );
    for p in v.as_array().into_iter().flatten() {
        o += &format!(
            "{:<24} {:<9} {:>10} {:>10} {:>8} {:>8} {:>8}  {}\n",
            st(&p["sid"]),
            st(&p["behaviour"]),
            n(&p["to_function"]),
            n(&p["from_function"]),
            n(&p["hits"]),
            n(&p["misses"]),
            n(&p["updates"]),
            st(&p["params"])
        );
        let c = &p["cache"];
        match c["state"].as_str() {
            Some("headers") => {
                let segs: Vec<String> = c["segments"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|s| s.as_str())
                    .map(String::from)
                    .collect();
                o += &format!(
                    "  cache: {} bytes, {} -> {}, segments left {}, segments [{}]\n",
                    n(&c["length"]),
                    st(&c["src"]),
                    st(&c["dst"]),
                    c["segments_left"].as_u64().map_or("-".into(), |x| x.to_string()),
                    segs.join(", ")
                );
            }
            Some(s) => o += &format!("  cache: {}\n", s.replace('_', " ")),
            None => {}
        }
        if let Some(d) = p["drops"].as_object().filter(|d| !d.is_empty()) {
            let r: Vec<String> = d.iter().map(|(k, x)| format!("{k} {}", n(x))).collect();
            o += &format!("  drops: {}\n", r.join(", "));
        }
    }
    o
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
    if t.ids.is_some() {
        println!("{}", crate::ids_alerts::stats_text(t, &c.ids));
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
    println!("GTP-U encapsulation (a head-end; sr6 extension, 3GPP TS 29.281): encap gtp teid T dst A src B [qfi Q]; `encap gtp decap [table N]` is GTP-U.Decap");
}
