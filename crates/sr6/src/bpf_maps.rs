//! The eBPF programs' maps for their operator (docs/bpf.md, "Maps from the command
//! line"): `sr6 ctl bpf list`, `sr6 ctl bpf map show|dump|lookup|update|delete` in the
//! shape of `bpftool prog show` and `bpftool map ...` (keys and values as bytes, as
//! bpftool prints a map without BTF), and the maps `sr6 pcap` prints after a run.
//!
//! The programs are End.BPF's (one per SID) and the LWT hooks' of `encap bpf` routes
//! (one per hook). Each loads its own copy of its object, so a map belongs to one
//! program. Maps are numbered from 1 in the order `bpf list` shows them (End.BPF SIDs in
//! configuration order, then the LWT routes' hooks, `in`, `out`, `xmit`; each program's
//! maps in its object's order): `id N` names one, as does `name NAME`
//! when one map has that name. The numbers hold for a generation of the tables; a
//! change of the configuration that reloads the objects gives fresh maps.

use serde_json::{json, Value};

use sr6_bpf::maps::Map;
use sr6_core::bpf_prog::BpfProg;
use sr6_core::tables::Tables;

const USAGE: &str = "usage: bpf list | bpf map show | bpf map dump MAP | bpf map lookup MAP key BYTES | \
bpf map update MAP key BYTES value BYTES [any|noexist|exist] | bpf map delete MAP key BYTES | \
bpf events [MAP] [--count N] [--timeout SECONDS] \
(MAP: id N | name NAME; BYTES: [hex] B1 B2 ..., each byte decimal or 0x.. unless after `hex`)";

/// A loaded program and where the configuration attaches it.
pub(crate) struct Attached<'a> {
    /// End.BPF's SID (`ADDR/LEN`).
    pub sid: Option<String>,
    /// An LWT hook's route (`PREFIX`, with ` table N` outside the main table) and hook.
    pub route: Option<(String, &'static str)>,
    pub obj: &'a str,
    pub section: &'a str,
    pub prog: &'a BpfProg,
}

impl Attached<'_> {
    /// Where it is attached, as `bpf list` prints it: the SID, or `PREFIX HOOK`.
    pub fn at(&self) -> String {
        match (&self.sid, &self.route) {
            (Some(sid), _) => sid.clone(),
            (None, Some((route, hook))) => format!("{route} {hook}"),
            (None, None) => String::new(),
        }
    }
}

/// The programs of `t`: End.BPF's SIDs in configuration order, then each LWT route's
/// hooks (`in`, `out`, `xmit`).
pub(crate) fn programs(t: &Tables) -> Vec<Attached<'_>> {
    let sids = t.sids.iter().filter_map(|s| {
        let b = s.action.params.bpf.as_ref()?;
        Some(Attached {
            sid: Some(crate::report::prefix(&s.prefix)),
            route: None,
            obj: &b.obj,
            section: &b.section,
            prog: &b.prog,
        })
    });
    let hooks = t.lwts.iter().flat_map(|r| {
        let mut route = crate::report::prefix(&r.prefix);
        if r.table != sr6_core::spec::MAIN_TABLE {
            route.push_str(&format!(" table {}", r.table));
        }
        [("in", &r.bpf.input), ("out", &r.bpf.output), ("xmit", &r.bpf.xmit)].into_iter().filter_map(move |(h, p)| {
            let p = p.as_ref()?;
            Some(Attached {
                sid: None,
                route: Some((route.clone(), h)),
                obj: &p.obj,
                section: &p.section,
                prog: &p.prog,
            })
        })
    });
    sids.chain(hooks).collect()
}

/// bpftool's name of a map type.
fn type_name(t: u32) -> String {
    match t {
        1 => "hash".into(),
        2 => "array".into(),
        4 => "perf_event_array".into(),
        5 => "percpu_hash".into(),
        6 => "percpu_array".into(),
        11 => "lpm_trie".into(),
        n => format!("type {n}"),
    }
}

/// Where a program is attached, as JSON fields: `sid`, or `route` and `hook`; and
/// `attach`, either as text.
fn attach_json(a: &Attached, v: &mut Value) {
    if let Some(sid) = &a.sid {
        v["sid"] = json!(sid);
    }
    if let Some((route, hook)) = &a.route {
        v["route"] = json!(route);
        v["hook"] = json!(hook);
    }
    v["attach"] = json!(a.at());
}

/// Where the program of a map of [`map_json`] is attached: `sid ADDR/LEN` or `route
/// PREFIX HOOK`.
pub(crate) fn attach_text(m: &Value) -> String {
    let kind = if m.get("sid").is_some() { "sid" } else { "route" };
    format!("{kind} {}", m["attach"].as_str().unwrap_or_default())
}

fn map_json(id: usize, a: &Attached, m: &Map) -> Value {
    let mut v = json!({
        "id": id, "name": m.def.name, "type": type_name(m.def.map_type),
        "key_size": m.def.key_size, "value_size": m.def.value_size,
        "max_entries": m.def.max_entries, "flags": m.def.flags,
        "read_only": m.read_only,
    });
    attach_json(a, &mut v);
    v
}

/// `bpf list`: each program (End.BPF's SIDs, LWT hooks) and its maps.
pub fn list_json(t: &Tables) -> Value {
    let mut id = 0;
    let rows = programs(t)
        .into_iter()
        .map(|a| {
            let maps: Vec<Value> = a
                .prog
                .maps()
                .iter()
                .map(|m| {
                    id += 1;
                    map_json(id, &a, m)
                })
                .collect();
            let p = a.prog.program();
            let mut v = json!({
                "obj": a.obj, "section": a.section, "type": p.prog_type.name(),
                "insns": p.insns.len(), "maps": maps,
            });
            attach_json(&a, &mut v);
            v
        })
        .collect();
    Value::Array(rows)
}

fn list_text(v: &Value) -> String {
    let rows = v.as_array().map(Vec::as_slice).unwrap_or_default();
    if rows.is_empty() {
        return "no eBPF programs (End.BPF SIDs or encap bpf routes)".into();
    }
    let mut out = Vec::new();
    for r in rows {
        out.push(format!(
            "{}: {}  obj {} sec {}  {} insns",
            r["attach"].as_str().unwrap_or_default(),
            r["type"].as_str().unwrap_or_default(),
            r["obj"].as_str().unwrap_or_default(),
            r["section"].as_str().unwrap_or_default(),
            r["insns"]
        ));
        for m in r["maps"].as_array().map(Vec::as_slice).unwrap_or_default() {
            out.push(format!("\tmap {}", map_line(m)));
        }
    }
    out.join("\n")
}

/// A map as `bpftool map show` prints it: `ID: TYPE  name NAME  flags 0xF` and its
/// sizes (here on one line).
fn map_line(m: &Value) -> String {
    format!(
        "{}: {}  name {}  flags {:#x}  key {}B  value {}B  max_entries {}{}",
        m["id"],
        m["type"].as_str().unwrap_or_default(),
        m["name"].as_str().unwrap_or_default(),
        m["flags"].as_u64().unwrap_or(0),
        m["key_size"],
        m["value_size"],
        m["max_entries"],
        if m["read_only"].as_bool() == Some(true) { "  read-only" } else { "" }
    )
}

/// The map `sel` names (`id N` or `name NAME`) and the words after the selector.
pub(crate) fn select<'a, 'w>(t: &'a Tables, sel: &'w [&'w str]) -> Result<(&'a BpfProg, usize, &'w [&'w str]), String> {
    let all: Vec<(&BpfProg, usize, String)> = programs(t)
        .into_iter()
        .flat_map(|a| a.prog.maps().into_iter().enumerate().map(move |(i, m)| (a.prog, i, m.def.name)))
        .collect();
    match sel {
        ["id", n, rest @ ..] => {
            let id: usize = n.parse().map_err(|_| format!("`{n}`: expected a map id (a number)"))?;
            let (ep, i, _) = id
                .checked_sub(1)
                .and_then(|k| all.get(k))
                .ok_or_else(|| format!("no map with id {id} (`bpf list` shows {} map(s))", all.len()))?;
            Ok((ep, *i, rest))
        }
        ["name", name, rest @ ..] => {
            let found: Vec<usize> = all.iter().enumerate().filter(|(_, m)| m.2 == *name).map(|(k, _)| k + 1).collect();
            match found.as_slice() {
                [k] => Ok((all[k - 1].0, all[k - 1].1, rest)),
                [] => Err(format!("no map named `{name}` (`bpf list` shows the maps)")),
                ids => Err(format!(
                    "{} maps are named `{name}` (ids {}): name one by `id N`",
                    ids.len(),
                    ids.iter().map(usize::to_string).collect::<Vec<_>>().join(", ")
                )),
            }
        }
        _ => Err(format!("which map? `id N` or `name NAME`\n{USAGE}")),
    }
}

/// One byte as bpftool reads it: decimal, `0x` hex or `0` octal (C's strtoul), or
/// hex digits alone after the word `hex`.
fn byte_of(w: &str, hex: bool) -> Result<u8, String> {
    let v = if hex {
        u8::from_str_radix(w, 16).ok()
    } else if let Some(h) = w.strip_prefix("0x").or_else(|| w.strip_prefix("0X")) {
        u8::from_str_radix(h, 16).ok()
    } else if w.len() > 1 && w.starts_with('0') {
        u8::from_str_radix(&w[1..], 8).ok()
    } else {
        w.parse().ok()
    };
    v.ok_or_else(|| {
        format!("`{w}`: expected a byte ({})", if hex { "two hex digits" } else { "0 to 255, or 0x00 to 0xff" })
    })
}

/// `WHAT [hex] B1 B2 ...` up to the next keyword: exactly `size` bytes.
fn bytes_after<'w>(words: &'w [&'w str], what: &str, size: u32) -> Result<(Vec<u8>, &'w [&'w str]), String> {
    let Some((first, rest)) = words.split_first() else {
        return Err(format!("expected `{what}` and {size} bytes\n{USAGE}"));
    };
    if *first != what {
        return Err(format!("`{first}`: expected `{what}` and {size} bytes\n{USAGE}"));
    }
    let (hex, rest) = match rest.split_first() {
        Some((&"hex", r)) => (true, r),
        _ => (false, rest),
    };
    let n = rest.iter().take_while(|w| !matches!(**w, "key" | "value" | "any" | "noexist" | "exist")).count();
    let b = rest[..n].iter().map(|w| byte_of(w, hex)).collect::<Result<Vec<u8>, _>>()?;
    if b.len() != size as usize {
        return Err(format!("{what} expected {size} bytes got {}", b.len()));
    }
    Ok((b, &rest[n..]))
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect::<Vec<_>>().join(" ")
}

fn hex_json(b: &[u8]) -> Value {
    Value::Array(b.iter().map(|x| Value::String(format!("{x:#04x}"))).collect())
}

/// The map's value at storage offset `off`.
fn value_at(m: &Map, off: usize) -> Vec<u8> {
    m.storage().get(off..off + m.def.value_size as usize).map(<[u8]>::to_vec).unwrap_or_default()
}

/// A perf event array has no values to look up, update or delete.
fn no_values(m: &Map) -> Result<(), String> {
    match m.events() {
        Some(_) => Err(format!(
            "map `{}` is a perf event array: its slots hold readers, not values (read its events with `bpf events`)",
            m.def.name
        )),
        None => Ok(()),
    }
}

/// What a map helper's errno means to the operator.
fn errno_text(e: i64) -> &'static str {
    match -e {
        17 => "the key exists (noexist)",
        2 => "no such key",
        7 => "the map is full, or an array's key is past max_entries",
        22 => "invalid argument (an array's elements cannot be deleted)",
        _ => "refused",
    }
}

/// The programs with their maps' contents, for `sr6 pcap --json` (`null` without
/// programs): [`list_json`] with each map's `entries` as `bpf map dump --json` has them.
pub fn report_json(t: &Tables) -> Value {
    let mut v = list_json(t);
    let progs = programs(t);
    let Some(rows) = v.as_array_mut() else { return Value::Null };
    if rows.is_empty() {
        return Value::Null;
    }
    for (row, a) in rows.iter_mut().zip(progs) {
        let contents = a.prog.maps();
        for (m, map) in row["maps"].as_array_mut().into_iter().flatten().zip(&contents) {
            m["entries"] = Value::Array(
                map.entries().iter().map(|(k, v)| json!({"key": hex_json(k), "value": hex_json(v)})).collect(),
            );
        }
    }
    v
}

/// The same as text, for `sr6 pcap`'s report (`None` without programs).
pub fn report_text(t: &Tables) -> Option<String> {
    let v = list_json(t);
    let progs = programs(t);
    if progs.is_empty() {
        return None;
    }
    let mut out = vec!["eBPF maps:".to_string()];
    for (row, a) in v.as_array().into_iter().flatten().zip(progs) {
        for (m, map) in row["maps"].as_array().into_iter().flatten().zip(a.prog.maps()) {
            out.push(format!("  map {}  {}", map_line(m), attach_text(m)));
            for (k, v) in map.entries() {
                out.push(format!("    key: {}  value: {}", hex(&k), hex(&v)));
            }
        }
    }
    Some(out.join("\n"))
}

/// `sr6 ctl bpf ...` on the tables `t`.
pub fn command(t: &Tables, args: &[&str], json: bool) -> Result<String, String> {
    let pretty = |v: &Value| serde_json::to_string_pretty(v).unwrap_or_default();
    match args {
        ["list"] | ["prog", "list" | "show"] => {
            let v = list_json(t);
            Ok(if json { pretty(&v) } else { list_text(&v) })
        }
        ["map", "list" | "show"] => {
            let v = list_json(t);
            let maps: Vec<Value> = v
                .as_array()
                .into_iter()
                .flatten()
                .flat_map(|p| p["maps"].as_array().cloned().unwrap_or_default())
                .collect();
            Ok(if json {
                pretty(&Value::Array(maps))
            } else if maps.is_empty() {
                "no maps".into()
            } else {
                maps.iter().map(|m| format!("{}  {}", map_line(m), attach_text(m))).collect::<Vec<_>>().join("\n")
            })
        }
        ["events", rest @ ..] => crate::bpf_events::poll(t, rest),
        ["map", "dump", sel @ ..] => {
            let (prog, i, rest) = select(t, sel)?;
            if !rest.is_empty() {
                return Err(USAGE.into());
            }
            let entries = prog.with_maps(|m| m.get(i).map(Map::entries).unwrap_or_default());
            Ok(if json {
                pretty(&Value::Array(
                    entries.iter().map(|(k, v)| json!({"key": hex_json(k), "value": hex_json(v)})).collect(),
                ))
            } else {
                let mut out: Vec<String> =
                    entries.iter().map(|(k, v)| format!("key: {}  value: {}", hex(k), hex(v))).collect();
                out.push(format!("Found {} element{}", entries.len(), if entries.len() == 1 { "" } else { "s" }));
                out.join("\n")
            })
        }
        ["map", "lookup", sel @ ..] => {
            let (prog, i, rest) = select(t, sel)?;
            prog.with_maps(|maps| {
                let m = maps.get(i).ok_or("the map is gone")?;
                no_values(m)?;
                let (key, rest) = bytes_after(rest, "key", m.def.key_size)?;
                if !rest.is_empty() {
                    return Err(USAGE.to_string());
                }
                let off = m.lookup(&key).ok_or_else(|| format!("no entry for key {}", hex(&key)))?;
                let value = value_at(m, off);
                Ok(if json {
                    pretty(&json!({"key": hex_json(&key), "value": hex_json(&value)}))
                } else {
                    format!("key: {}  value: {}", hex(&key), hex(&value))
                })
            })
        }
        ["map", "update", sel @ ..] => {
            let (prog, i, rest) = select(t, sel)?;
            prog.with_maps(|maps| {
                let m = maps.get_mut(i).ok_or("the map is gone")?;
                no_values(m)?;
                let (key, rest) = bytes_after(rest, "key", m.def.key_size)?;
                let (value, rest) = bytes_after(rest, "value", m.def.value_size)?;
                // BPF_ANY, BPF_NOEXIST, BPF_EXIST.
                let flags = match rest {
                    [] | ["any"] => 0,
                    ["noexist"] => 1,
                    ["exist"] => 2,
                    _ => return Err(USAGE.to_string()),
                };
                if m.read_only {
                    return Err(format!("map `{}` is read-only (.rodata)", m.def.name));
                }
                match m.update(&key, &value, flags) {
                    0 => Ok(format!("updated key {}", hex(&key))),
                    e => Err(format!("update failed: {}", errno_text(e))),
                }
            })
        }
        ["map", "delete", sel @ ..] => {
            let (prog, i, rest) = select(t, sel)?;
            prog.with_maps(|maps| {
                let m = maps.get_mut(i).ok_or("the map is gone")?;
                no_values(m)?;
                let (key, rest) = bytes_after(rest, "key", m.def.key_size)?;
                if !rest.is_empty() {
                    return Err(USAGE.to_string());
                }
                if m.read_only {
                    return Err(format!("map `{}` is read-only (.rodata)", m.def.name));
                }
                match m.delete(&key) {
                    0 => Ok(format!("deleted key {}", hex(&key))),
                    e => Err(format!("delete failed: {}", errno_text(e))),
                }
            })
        }
        _ => Err(USAGE.into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support;
    use sr6_core::packet::PacketBuf;
    use sr6_core::pipeline::Worker;
    use std::net::Ipv6Addr;

    /// crates/bpf/tests/progs/maps.c, compiled into a directory of the call's own.
    fn maps_object() -> std::path::PathBuf {
        test_support::compile("maps", &test_support::scratch_dir("bpf-maps"))
    }

    use test_support::srh_frame as frame;

    /// An LWT hook's program (`encap bpf in`) is listed after the End.BPF SIDs, by its
    /// route and hook, and its maps are numbered, dumped and changed as theirs.
    #[test]
    fn lwt_programs_are_listed_with_their_maps() {
        let obj = maps_object();
        let conf = format!(
            "link set eth0 address 02:00:00:00:00:a0\naddr add fc00:1::1/64 dev eth0\n\
             sysctl -w net.ipv6.conf.all.forwarding=1\n\
             neigh add fc00:1::2 lladdr 02:00:00:00:01:02 dev eth0\nroute add fc00:9::/64 via fc00:1::2 dev eth0\n\
             route add fc00:1::b/128 encap seg6local action End.BPF endpoint obj {o} sec count dev eth0\n\
             route add fc00:8::/64 encap bpf in obj {o} sec count via fc00:1::2 dev eth0\n",
            o = obj.display()
        );
        let t = Tables::build(&sr6_config::parse_str(&conf, "t.conf").unwrap()).unwrap().0;
        let list = run(&t, "list").unwrap();
        let (sid_part, lwt_part) = list.split_once("fc00:8::/64 in: lwt_in  obj ").expect(&list);
        assert!(sid_part.starts_with("fc00:1::b/128: lwt_seg6local"), "{list}");
        let id = lwt_part
            .lines()
            .find(|l| l.contains("name pkts"))
            .and_then(|l| l.trim_start_matches("\tmap ").split(':').next())
            .expect(&list)
            .to_string();
        assert_ne!(id, "1", "the SID's maps come first: {list}");
        assert!(run(&t, "map dump name pkts").unwrap_err().contains("2 maps are named `pkts`"));
        // A packet routed through the hook: its program counts it in slot 2.
        let mut f = frame(0x0101);
        f[38..54].copy_from_slice(&"fc00:8::1".parse::<Ipv6Addr>().unwrap().octets());
        let mut w = Worker::new(&t);
        let mut b = PacketBuf::new();
        b.load(&f, 0);
        w.process_batch(&t, 0, std::slice::from_mut(&mut b));
        assert!(matches!(b.verdict, sr6_core::packet::Verdict::Tx(0)), "{:?}", b.verdict);
        let one = "key: 02 00 00 00  value: 01 00 00 00 00 00 00 00";
        assert_eq!(run(&t, &format!("map lookup id {id} key 2 0 0 0")).unwrap(), one);
        assert_eq!(run(&t, "map lookup id 1 key 2 0 0 0").unwrap(), one.replace("01 00", "00 00"), "the SID's own");
        run(&t, &format!("map update id {id} key 2 0 0 0 value 9 0 0 0 0 0 0 0")).unwrap();
        let shown = run(&t, "map show").unwrap();
        assert!(
            shown.contains(&format!("{id}: array  name pkts")) && shown.contains("route fc00:8::/64 in"),
            "{shown}"
        );
        let js = list_json(&t);
        assert_eq!((js[1]["route"].as_str(), js[1]["hook"].as_str()), (Some("fc00:8::/64"), Some("in")));
        assert_eq!(report_json(&t)[1]["maps"][0]["entries"][2]["value"][0], json!("0x09"));
        let _ = std::fs::remove_dir_all(obj.parent().unwrap());
    }

    fn run(t: &Tables, args: &str) -> Result<String, String> {
        let w: Vec<&str> = args.split_whitespace().collect();
        command(t, &w, false)
    }

    /// Maps seen and changed from the command line while the program counts into them:
    /// the counts a packet left, bpftool's byte syntax, and every refusal.
    #[test]
    fn maps_are_listed_dumped_and_changed() {
        let obj = maps_object();
        let conf = format!(
            "link set eth0 address 02:00:00:00:00:a0\naddr add fc00:1::1/64 dev eth0\n\
             neigh add fc00:1::2 lladdr 02:00:00:00:01:02 dev eth0\nroute add fc00:9::/64 via fc00:1::2 dev eth0\n\
             route add fc00:1::b/128 encap seg6local action End.BPF endpoint obj {} sec count dev eth0\n",
            obj.display()
        );
        let t = Tables::build(&sr6_config::parse_str(&conf, "t.conf").unwrap()).unwrap().0;
        let mut w = Worker::new(&t);
        let mut batch: Vec<PacketBuf> = (0..2).map(|_| PacketBuf::new()).collect();
        batch[0].load(&frame(0x0707), 0);
        batch[1].load(&frame(0x0707), 0);
        w.process_batch(&t, 0, &mut batch);
        let text = report_text(&t).unwrap();
        assert!(text.contains("  map 1: array  name pkts") && text.contains("    key: 07 07  value: 02 00"), "{text}");
        assert_eq!(report_json(&t)[0]["maps"][1]["entries"][0]["key"], json!(["0x07", "0x07"]));

        let list = run(&t, "list").unwrap();
        assert!(list.starts_with("fc00:1::b/128: lwt_seg6local  obj "), "{list}");
        assert!(list.contains("\tmap 1: array  name pkts  flags 0x0  key 4B  value 8B  max_entries 4"), "{list}");
        assert!(list.contains("map 2: hash  name by_tag"), "{list}");
        // The program counted both packets in slot 2 (from .rodata) and under Tag 0x0707.
        let dump = run(&t, "map dump id 1").unwrap();
        assert_eq!(
            dump,
            "key: 00 00 00 00  value: 00 00 00 00 00 00 00 00\n\
             key: 01 00 00 00  value: 00 00 00 00 00 00 00 00\n\
             key: 02 00 00 00  value: 02 00 00 00 00 00 00 00\n\
             key: 03 00 00 00  value: 00 00 00 00 00 00 00 00\nFound 4 elements"
        );
        assert_eq!(run(&t, "map lookup name by_tag key 7 7").unwrap(), "key: 07 07  value: 02 00 00 00 00 00 00 00");
        let js: Value = serde_json::from_str(&command(&t, &["map", "dump", "name", "by_tag"], true).unwrap()).unwrap();
        assert_eq!(
            js,
            json!([{"key": ["0x07", "0x07"], "value": ["0x02", "0x00", "0x00", "0x00", "0x00", "0x00", "0x00", "0x00"]}])
        );
        // Writes: decimal, 0x and `hex` bytes; the program sees them on its next run.
        run(&t, "map update id 1 key 2 0 0 0 value hex 10 00 00 00 00 00 00 00").unwrap();
        run(&t, "map update name by_tag key 0x01 0x00 value 5 0 0 0 0 0 0 0 noexist").unwrap();
        batch[0].load(&frame(0x0707), 0);
        w.process_batch(&t, 0, &mut batch[..1]);
        assert_eq!(run(&t, "map lookup id 1 key 2 0 0 0").unwrap(), "key: 02 00 00 00  value: 11 00 00 00 00 00 00 00");
        assert_eq!(run(&t, "map dump name by_tag").unwrap().lines().last(), Some("Found 2 elements"));
        run(&t, "map delete name by_tag key 1 0").unwrap();
        assert!(run(&t, "map lookup name by_tag key 1 0").unwrap_err().contains("no entry for key 01 00"));
        // Refusals, with what was expected.
        let e = |args: &str| run(&t, args).unwrap_err();
        assert!(e("map update name by_tag key 7 7 value 1 0 0 0 0 0 0 0 noexist").contains("the key exists"));
        run(&t, "map update name by_tag key 9 9 value 1 0 0 0 0 0 0 0").unwrap();
        assert!(e("map update name by_tag key 8 8 value 1 0 0 0 0 0 0 0").contains("the map is full"));
        assert!(e("map delete id 1 key 0 0 0 0").contains("delete failed"));
        assert!(e("map update id 1 key 4 0 0 0 value 0 0 0 0 0 0 0 0").contains("past max_entries"));
        assert!(e("map lookup id 1 key 2 0 0").contains("key expected 4 bytes got 3"));
        assert!(e("map lookup id 1 key 256 0 0 0").contains("`256`: expected a byte"));
        assert!(e("map dump id 99").contains("no map with id 99"));
        assert!(e("map dump name nope").contains("no map named `nope`"));
        let ro = list.lines().find(|l| l.contains("read-only")).expect("the .rodata map listed read-only");
        let id = ro.trim_start_matches("\tmap ").split(':').next().unwrap();
        assert!(e(&format!("map update id {id} key 0 0 0 0 value 9 0 0 0")).contains("read-only"));
        assert!(e("frobnicate").starts_with("usage: bpf list"));
        let _ = std::fs::remove_dir_all(obj.parent().unwrap());
    }
}
