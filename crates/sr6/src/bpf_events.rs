//! The events End.BPF programs emit with `bpf_perf_event_output` (docs/bpf.md, "Events"),
//! for their reader: `sr6 ctl bpf events` streams them from a running `sr6 run` as
//! `bpftool map event_pipe` prints them (per event `== @SEC.NSEC CPU: C index: I =====`
//! and the bytes in hex, 16 a line; `lost N events`; with `--json` one object per event,
//! `{"timestamp", "type", "cpu", "index", "data": [bytes]}`), and `sr6 pcap` prints
//! those of its run after its report.
//!
//! The stream is a poll: the client asks the daemon over the control socket, in the
//! ordinary one-request-one-answer way, for the events waiting in the map's ring
//! (`bpf events id N max K`, which drains at most K of them and answers with their JSON
//! records), prints them, and asks again — at once after events, after 100 ms after none
//! — until `--count` events, `--timeout` seconds, or an interrupt (SIGINT, SIGTERM,
//! SIGHUP, as bpftool stops on: the events of the poll in flight are printed first).

use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use sr6_bpf::events::{Drained, Event};
use sr6_core::bpf_prog::BpfProg;
use sr6_core::tables::Tables;

use crate::bpf_maps::{programs, select};

/// `PERF_RECORD_SAMPLE` and `PERF_RECORD_LOST` (include/uapi/linux/perf_event.h).
const RECORD_SAMPLE: u64 = 9;
const RECORD_LOST: u64 = 2;
/// Most events one poll drains.
const POLL_MAX: usize = 4096;
/// Pause between two polls that found nothing (bpftool polls every 200 ms).
const IDLE: Duration = Duration::from_millis(100);

const USAGE: &str = "usage: bpf events [id N|name NAME] [--count N] [--timeout SECONDS] [--json] \
(without a map: the only perf event array)";

/// An event as `bpftool -j map event_pipe` prints it (the timestamp: the packet's time).
pub fn event_json(e: &Event) -> Value {
    json!({"timestamp": e.ts_ns, "type": RECORD_SAMPLE, "cpu": e.cpu, "index": e.index, "data": e.data})
}

/// A drain's records: its events, then how many were lost if any were.
pub fn drained_json(d: &Drained) -> Vec<Value> {
    let mut out: Vec<Value> = d.events.iter().map(event_json).collect();
    if d.lost > 0 {
        let ts = d.events.last().map_or(0, |e| e.ts_ns);
        out.push(json!({
            "timestamp": ts, "type": RECORD_LOST, "cpu": d.lost_cpu, "index": d.lost_index,
            "lost": {"id": 0, "count": d.lost},
        }));
    }
    out
}

/// bpftool's `fprint_hex`: two hex digits a byte, a space between, two after the eighth
/// byte of a line, 16 a line.
fn hex_lines(b: &[u8]) -> String {
    let mut s = String::with_capacity(b.len() * 3 + b.len() / 8);
    for (i, x) in b.iter().enumerate() {
        if i > 0 {
            s.push_str(if i % 16 == 0 {
                "\n"
            } else if i % 8 == 0 {
                "  "
            } else {
                " "
            });
        }
        s.push_str(&format!("{x:02x}"));
    }
    s
}

/// A record as `bpftool map event_pipe` prints it, without the last newline.
pub fn record_text(v: &Value) -> String {
    let ts = v["timestamp"].as_u64().unwrap_or(0);
    match v["type"].as_u64() {
        Some(RECORD_LOST) => format!("lost {} events", v["lost"]["count"].as_u64().unwrap_or(0)),
        _ => {
            let data: Vec<u8> = v["data"]
                .as_array()
                .map(|a| a.iter().map(|x| x.as_u64().unwrap_or(0) as u8).collect())
                .unwrap_or_default();
            format!(
                "== @{}.{} CPU: {} index: {} =====\n{}",
                ts / 1_000_000_000,
                ts % 1_000_000_000,
                v["cpu"],
                v["index"],
                hex_lines(&data)
            )
        }
    }
}

/// The only perf event array of `t`: its program and index, else why not.
fn only_perf_map(t: &Tables) -> Result<(&BpfProg, usize), String> {
    let mut found = Vec::new();
    for a in programs(t) {
        a.prog.with_maps(|maps| {
            found.extend(maps.iter().enumerate().filter(|(_, m)| m.events().is_some()).map(|(i, _)| (a.prog, i)))
        });
    }
    match found.as_slice() {
        [one] => Ok(*one),
        [] => Err("no perf event array (`bpf list` shows the maps)".into()),
        _ => Err(format!("{} perf event arrays: name one by `id N` or `name NAME`", found.len())),
    }
}

/// The daemon's side of `sr6 ctl bpf events`: `[id N|name NAME] [max K]` drains at most
/// K events (default and cap [`POLL_MAX`]) of that perf event array (without a map: the
/// only one); the answer is the JSON array of their records.
pub fn poll(t: &Tables, args: &[&str]) -> Result<String, String> {
    let (prog, i, rest) = match args.first() {
        Some(&"id" | &"name") => select(t, args)?,
        _ => {
            let (prog, i) = only_perf_map(t)?;
            (prog, i, args)
        }
    };
    let max = match rest {
        [] => POLL_MAX,
        ["max", n] => n.parse::<usize>().map_err(|_| format!("`{n}`: expected a number of events"))?.min(POLL_MAX),
        _ => return Err(USAGE.into()),
    };
    let d = prog.with_maps(|maps| {
        let m = maps.get_mut(i).ok_or("the map is gone")?;
        let name = m.def.name.clone();
        m.events_mut().map(|r| r.drain_max(max)).ok_or(format!("map `{name}` is not a perf event array"))
    })?;
    Ok(Value::Array(drained_json(&d)).to_string())
}

/// What `sr6 pcap` collects: per perf event array (by its `bpf list` id), its records.
#[derive(Default)]
pub struct Collected {
    maps: std::collections::BTreeMap<usize, Vec<Value>>,
}

impl Collected {
    /// Drains every perf event array of `t` (after each batch: a run of any length keeps
    /// every event, the rings only bound what one batch emits).
    pub fn drain(&mut self, t: &Tables) {
        let mut id = 0;
        for a in programs(t) {
            a.prog.with_maps(|maps| {
                for m in maps.iter_mut() {
                    id += 1;
                    if let Some(r) = m.events_mut() {
                        let d = r.drain();
                        self.maps.entry(id).or_default().extend(drained_json(&d));
                    }
                }
            });
        }
    }

    /// Adds `events` (the records) and `lost` (their count) to each perf event array of
    /// `sr6 pcap --json`'s `bpf` ([`crate::bpf_maps::report_json`]).
    pub fn annotate(&self, bpf: &mut Value) {
        for m in bpf.as_array_mut().into_iter().flatten().flat_map(|p| p["maps"].as_array_mut().into_iter().flatten()) {
            let Some(id) = m["id"].as_u64() else { continue };
            if let Some(recs) = self.maps.get(&(id as usize)) {
                m["lost"] = json!(lost(recs));
                m["events"] = Value::Array(recs.clone());
            }
        }
    }

    /// `sr6 pcap`'s text: per perf event array, its events as bpftool prints them
    /// (`None` without perf event arrays).
    pub fn text(&self, t: &Tables) -> Option<String> {
        if self.maps.is_empty() {
            return None;
        }
        let names = crate::bpf_maps::list_json(t);
        let mut out = vec!["eBPF events:".to_string()];
        for (id, recs) in &self.maps {
            let m = names
                .as_array()
                .into_iter()
                .flatten()
                .flat_map(|p| p["maps"].as_array().into_iter().flatten())
                .find(|m| m["id"].as_u64() == Some(*id as u64));
            let (name, at) = m.map_or(("?".to_string(), "?".to_string()), |m| {
                (m["name"].as_str().unwrap_or("?").to_string(), crate::bpf_maps::attach_text(m))
            });
            let n = recs.iter().filter(|r| r["type"].as_u64() == Some(RECORD_SAMPLE)).count();
            out.push(format!("map {id} ({name}, {at}): {n} event(s), {} lost", lost(recs)));
            out.extend(recs.iter().map(record_text));
        }
        Some(out.join("\n"))
    }
}

fn lost(recs: &[Value]) -> u64 {
    recs.iter().filter_map(|r| r["lost"]["count"].as_u64()).sum()
}

/// `sr6 ctl bpf events ...`: polls the daemon at `socket` and prints the events as they
/// come (see the module docs).
pub fn stream(socket: &Path, words: &[String]) -> Result<(), String> {
    let mut sel: Vec<String> = Vec::new();
    let (mut count, mut timeout, mut json) = (None::<u64>, None::<Duration>, false);
    let mut it = words.iter();
    while let Some(w) = it.next() {
        match w.as_str() {
            "--json" | "-j" => json = true,
            "--count" => {
                let n = it.next().ok_or(USAGE)?;
                count = Some(n.parse().map_err(|_| format!("--count `{n}`: expected a number of events"))?);
            }
            "--timeout" => {
                let s = it.next().ok_or(USAGE)?;
                let secs: f64 = s
                    .parse()
                    .ok()
                    .filter(|x: &f64| x.is_finite() && *x >= 0.0)
                    .ok_or_else(|| format!("--timeout `{s}`: expected seconds"))?;
                timeout = Some(Duration::from_secs_f64(secs));
            }
            _ => sel.push(w.clone()),
        }
    }
    if !matches!(sel.as_slice(), [] | [_, _]) || sel.first().is_some_and(|k| k != "id" && k != "name") {
        return Err(USAGE.into());
    }
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM, signal_hook::consts::SIGHUP] {
        signal_hook::flag::register(sig, stop.clone()).map_err(|e| format!("installing the signal handlers: {e}"))?;
    }
    let start = Instant::now();
    let mut seen = 0u64;
    let mut out = std::io::stdout().lock();
    while !stop.load(Ordering::Relaxed) {
        let left = count.map_or(POLL_MAX as u64, |c| c.saturating_sub(seen)).min(POLL_MAX as u64);
        if left == 0 {
            return Ok(());
        }
        let mut args = vec!["bpf".to_string(), "events".to_string()];
        args.extend(sel.iter().cloned());
        args.extend(["max".to_string(), left.to_string()]);
        let r = crate::live::ctl::request(socket, &args)?;
        if !r.ok {
            return Err(r.output);
        }
        let recs: Vec<Value> = serde_json::from_str(&r.output).map_err(|e| format!("malformed answer: {e}"))?;
        for rec in &recs {
            let line = if json { rec.to_string() } else { record_text(rec) };
            writeln!(out, "{line}").map_err(|e| e.to_string())?;
            if rec["type"].as_u64() == Some(RECORD_SAMPLE) {
                seen += 1;
            }
        }
        out.flush().map_err(|e| e.to_string())?;
        if count.is_some_and(|c| seen >= c) {
            return Ok(());
        }
        let elapsed = start.elapsed();
        if let Some(t) = timeout {
            if elapsed >= t {
                return Ok(());
            }
            if recs.is_empty() {
                std::thread::sleep(IDLE.min(t - elapsed));
            }
        } else if recs.is_empty() {
            std::thread::sleep(IDLE);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support;
    use sr6_core::packet::PacketBuf;
    use sr6_core::pipeline::Worker;
    use std::net::Ipv6Addr;

    /// crates/bpf/tests/progs/events.c, compiled into a directory of the call's own.
    fn events_object() -> std::path::PathBuf {
        test_support::compile("events", &test_support::scratch_dir("bpf-events"))
    }

    use test_support::srh_frame as frame;

    /// The events of a program, drained by `bpf events` (as `sr6 ctl` polls them) and by
    /// `sr6 pcap`'s collector; refusals name what was expected.
    #[test]
    fn events_are_polled_and_collected() {
        let obj = events_object();
        let conf = format!(
            "link set eth0 address 02:00:00:00:00:a0\naddr add fc00:1::1/64 dev eth0\n\
             neigh add fc00:1::2 lladdr 02:00:00:00:01:02 dev eth0\nroute add fc00:9::/64 via fc00:1::2 dev eth0\n\
             route add fc00:1::b/128 encap seg6local action End.BPF endpoint obj {} sec fields dev eth0\n",
            obj.display()
        );
        let t = Tables::build(&sr6_config::parse_str(&conf, "t.conf").unwrap()).unwrap().0;
        let list = crate::bpf_maps::command(&t, &["list"], false).unwrap();
        assert!(list.contains("map 1: perf_event_array  name events  flags 0x0  key 4B  value 4B"), "{list}");
        let mut w = Worker::new(&t);
        let mut batch: Vec<PacketBuf> = (0..3).map(|_| PacketBuf::new()).collect();
        for (k, b) in batch.iter_mut().enumerate() {
            b.load(&frame(0x0700 + k as u16), 0);
            b.ts_ns = 5_000_000_000 + k as u64;
        }
        w.process_batch(&t, 0, &mut batch);
        // One poll of at most 2, then the rest.
        let recs: Vec<Value> = serde_json::from_str(&poll(&t, &["id", "1", "max", "2"]).unwrap()).unwrap();
        assert_eq!(recs.len(), 2);
        let data: Vec<u8> = serde_json::from_value(recs[1]["data"].clone()).unwrap();
        assert_eq!(&data[..16], &"fc00:9::1".parse::<Ipv6Addr>().unwrap().octets(), "the new destination");
        assert_eq!(&data[20..24], &[0x07, 0x01, 0, 64], "Tag, Segments Left 0, hop limit before forwarding");
        assert_eq!((recs[1]["timestamp"].as_u64(), recs[1]["cpu"].as_u64()), (Some(5_000_000_001), Some(0)));
        let rest: Vec<Value> = serde_json::from_str(&poll(&t, &[]).unwrap()).unwrap();
        assert_eq!(rest.len(), 1);
        assert_eq!(poll(&t, &["id", "1"]).unwrap(), "[]");
        // sr6 pcap's collector.
        batch[0].load(&frame(0x0909), 0);
        w.process_batch(&t, 0, &mut batch[..1]);
        let mut c = Collected::default();
        c.drain(&t);
        let text = c.text(&t).unwrap();
        assert!(text.starts_with("eBPF events:\nmap 1 (events, sid fc00:1::b/128): 1 event(s), 0 lost\n== @5.0 CPU: 0 index: 0 =====\nfc 00 00 09"), "{text}");
        let mut bpf = crate::bpf_maps::report_json(&t);
        c.annotate(&mut bpf);
        assert_eq!(bpf[0]["maps"][0]["events"][0]["data"][21], json!(0x09));
        assert_eq!(bpf[0]["maps"][0]["lost"], json!(0));
        // Refusals.
        assert!(poll(&t, &["id", "9"]).unwrap_err().contains("no map with id 9"));
        assert!(poll(&t, &["id", "1", "max", "x"]).unwrap_err().contains("expected a number"));
        assert!(poll(&t, &["id", "1", "nope"]).unwrap_err().starts_with("usage: bpf events"));
        let none = Tables::build(&sr6_config::parse_str("addr add fc00::1/64 dev eth0\n", "t").unwrap()).unwrap().0;
        assert!(poll(&none, &[]).unwrap_err().starts_with("no perf event array"));
        let e = crate::bpf_maps::command(&t, &["map", "update", "id", "1", "key", "0", "0", "0", "0"], false);
        assert!(e.unwrap_err().contains("is a perf event array"));
        assert_eq!(crate::bpf_maps::command(&t, &["map", "dump", "id", "1"], false).unwrap(), "Found 0 elements");
        let _ = std::fs::remove_dir_all(obj.parent().unwrap());
    }

    #[test]
    fn records_print_as_bpftools() {
        let e = Event { cpu: 1, index: 1, ts_ns: 3_000_000_042, data: (0..18).collect() };
        let v = event_json(&e);
        assert_eq!(
            v,
            json!({"timestamp": 3_000_000_042u64, "type": 9, "cpu": 1, "index": 1, "data": (0..18).collect::<Vec<u8>>()})
        );
        assert_eq!(
            record_text(&v),
            "== @3.42 CPU: 1 index: 1 =====\n00 01 02 03 04 05 06 07  08 09 0a 0b 0c 0d 0e 0f\n10 11"
        );
        let empty = Event { data: vec![], ..e.clone() };
        assert_eq!(record_text(&event_json(&empty)), "== @3.42 CPU: 1 index: 1 =====\n");
        let d = Drained { events: vec![e], lost: 3, lost_cpu: 0, lost_index: 0 };
        let recs = drained_json(&d);
        assert_eq!(recs.len(), 2);
        assert_eq!(recs[1]["lost"], json!({"id": 0, "count": 3}));
        assert_eq!(record_text(&recs[1]), "lost 3 events");
        assert_eq!(lost(&recs), 3);
    }
}
