//! The IDS's alerts and counters as JSON and text (docs/ids.md): one JSON object per
//! alert, written as JSON lines to the alerts file and shown by `sr6 pcap --json`.

use serde_json::{json, Value};
use sr6_core::firewall::Hook;
use sr6_core::ids::alert::Alert;
use sr6_core::ids::IdsCounters;
use sr6_core::tables::Tables;

/// An alert as a JSON object: time, rule (sid, rev, msg), what was done, where, the
/// inspected packet and the packet as received.
pub fn alert_json(t: &Tables, a: &Alert) -> Value {
    let msg = t.ids.as_ref().and_then(|i| i.spec.rules.get(a.rule as usize)).map_or("", |r| r.msg.as_str());
    let (sport, dport) = a.ports.map_or((None, None), |(s, d)| (Some(s), Some(d)));
    json!({
        "time": a.time_ns as f64 / 1e9,
        "time_ns": a.time_ns,
        "sid": a.sid,
        "rev": a.rev,
        "msg": msg,
        "action": a.action.name(),
        "point": match a.hook { Hook::Input => "input", Hook::Forward => "forward" },
        "proto": a.proto,
        "src": a.src.to_string(),
        "dst": a.dst.to_string(),
        "sport": sport,
        "dport": dport,
        "outer_src": a.outer.0.to_string(),
        "outer_dst": a.outer.1.to_string(),
        "active_sid": a.active_sid.map(|s| s.to_string()),
    })
}

/// The IDS's configuration and counters (`null` without an IDS).
pub fn stats_json(t: &Tables, c: &IdsCounters) -> Value {
    let Some(ids) = &t.ids else { return Value::Null };
    json!({
        "rules": ids.spec.rules.len(),
        "patterns": ids.engine.patterns(),
        "mode": ids.spec.mode.name(),
        "input": ids.spec.input,
        "forward": ids.spec.forward,
        "inspected": c.inspected,
        "alerts": c.alerts,
        "dropped": c.dropped,
        "passed": c.passed,
        "malformed": c.malformed,
        "alerts_lost": c.alerts_lost,
    })
}

/// [`stats_json`] as one line of text (empty without an IDS).
pub fn stats_text(t: &Tables, c: &IdsCounters) -> String {
    let Some(ids) = &t.ids else { return String::new() };
    let points: Vec<&str> = [(ids.spec.input, "input"), (ids.spec.forward, "forward")]
        .iter()
        .filter_map(|(on, n)| on.then_some(*n))
        .collect();
    format!(
        "ids ({} mode, on {}): {} rules, {} inspected, {} alerts, {} dropped, {} passed, {} malformed, {} alerts lost",
        ids.spec.mode.name(),
        points.join(","),
        ids.spec.rules.len(),
        c.inspected,
        c.alerts,
        c.dropped,
        c.passed,
        c.malformed,
        c.alerts_lost
    )
}
