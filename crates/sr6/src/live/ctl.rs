//! The control socket of a running router (`sr6 run --socket PATH`) and its protocol.
//!
//! One request per connection: the client writes one line, a JSON object
//! `{"args": ["show", "sids", "--json"]}`, and reads one line back,
//! `{"ok": true, "output": "..."}` (or `"ok": false` with the error in `output`). The
//! socket is created mode 0600: controlling the router is root's business. A malformed
//! or unknown request gets an error reply; nothing a client sends can stop the daemon.

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::control::Control;
use super::show;
use super::state::{lock, Shared};

/// Default control socket path.
pub const DEFAULT_SOCKET: &str = "/run/sr6.sock";
/// Longest request accepted.
const MAX_REQUEST: u64 = 1 << 20;

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Request {
    pub args: Vec<String>,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Response {
    pub ok: bool,
    pub output: String,
}

pub const HELP: &str = "\
commands:
  route add|replace|append|del ...   change a route (the configuration grammar, docs/config.md);
  rule add|del ...                   change the policy routing rules (ip rule);
                                     any other configuration line (neigh, sr hmac, sysctl...) too
  show sids [--json]                 local SIDs with packets, bytes, errors
  show routes [--json]               routes, in configuration syntax, by origin (config, ctl, FPM, kernel)
  show proxies [--json]              SR proxies: caches, packets to and from their functions, drops
  show rules [--json]                policy routing rules (ip rule), in configuration syntax
  show firewall [--json]             firewall policies and rules (ip6tables -S -v): packets, bytes
  ip6tables -L|-S [CHAIN] [-v] [-x] [--line-numbers] [--json]
                                     the firewall as ip6tables lists it, with counters
  ip6tables -Z [CHAIN [N]]           zero the counters of every chain, one chain or one rule
  show counters [--json]             frames in -> out, drops by reason, ICMP, neighbour queue, devices
  show neighbours [--json]           neighbours in use (static and learned from the kernel)
  show status [--json]               backend, workers, devices, tables generation
  ids alerts [-n N] [--json]         the IDS's most recent alerts (default 20, at most 1000)
  ids stats [--json]                 the IDS: rules, packets inspected, alerts, drops
  bpf list [--json]                  eBPF programs (End.BPF, encap bpf) and their maps (ids below)
  bpf map dump|lookup|update|delete id N|name NAME [key [hex] BYTES] [value [hex] BYTES]
                                     a program's map, as bpftool map ... (docs/bpf.md)
  bpf events [id N|name NAME] [--count N] [--timeout SECONDS] [--json]
                                     stream a perf event array's events, as bpftool map event_pipe
  clear-counters                     zero every counter
  batch FILE|-                       apply FILE's configuration lines (- for stdin) as one change:
                                     all or none, published once (route changes in place)
  reload FILE                        replace the configuration with FILE (atomic)
  help                               this text";

/// Static facts about the running daemon, for `show status`.
#[derive(Debug, Clone, Serialize)]
pub struct Status {
    pub backend: String,
    pub workers: usize,
    pub devices: Vec<String>,
    pub config: String,
    pub pid: u32,
    /// Warnings about the devices that hold while sr6 runs (a veth peer's transmit
    /// checksum offload, `sr6_io::veth`), repeated by `show status`.
    pub warnings: Vec<String>,
}

/// Binds the control socket at `path`. A stale socket file (no daemon answering) is
/// replaced; a live one is an error.
pub fn bind(path: &Path) -> Result<UnixListener, String> {
    if path.exists() {
        if UnixStream::connect(path).is_ok() {
            return Err(format!(
                "{}: another sr6 is already listening there (choose another --socket)",
                path.display()
            ));
        }
        std::fs::remove_file(path).map_err(|e| format!("{}: cannot remove the stale socket: {e}", path.display()))?;
    }
    if let Some(dir) = path.parent() {
        if !dir.as_os_str().is_empty() {
            std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        }
    }
    let l = UnixListener::bind(path).map_err(|e| format!("{}: cannot listen: {e}", path.display()))?;
    let _ = std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600));
    Ok(l)
}

/// Serves requests until the process ends (run it on its own thread).
pub fn serve(listener: UnixListener, control: Arc<Mutex<Control>>, status: Status) {
    for conn in listener.incoming() {
        let Ok(mut s) = conn else { continue };
        let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
        let _ = s.set_write_timeout(Some(Duration::from_secs(5)));
        let resp = match read_request(&s) {
            Ok(req) => handle(&req.args, &control, &status),
            Err(e) => Response { ok: false, output: e },
        };
        if let Ok(mut line) = serde_json::to_string(&resp) {
            line.push('\n');
            let _ = s.write_all(line.as_bytes());
        }
    }
}

fn read_request(s: &UnixStream) -> Result<Request, String> {
    let mut line = String::new();
    BufReader::new(s.take(MAX_REQUEST)).read_line(&mut line).map_err(|e| format!("cannot read the request: {e}"))?;
    serde_json::from_str(&line).map_err(|e| format!("malformed request (expected {{\"args\": [...]}}): {e}"))
}

/// Executes one request.
pub fn handle(args: &[String], control: &Mutex<Control>, status: &Status) -> Response {
    let r = dispatch(args, control, status);
    match r {
        Ok(output) => Response { ok: true, output },
        Err(output) => Response { ok: false, output },
    }
}

fn dispatch(args: &[String], control: &Mutex<Control>, status: &Status) -> Result<String, String> {
    let words: Vec<&str> = args.iter().map(String::as_str).collect();
    let json = words.contains(&"--json");
    let plain: Vec<&str> = words.iter().copied().filter(|w| *w != "--json").collect();
    match plain.as_slice() {
        [] => Err(format!("no command given\n{HELP}")),
        ["help"] | ["--help"] => Ok(HELP.to_string()),
        ["show", what] => {
            let c = lock(control);
            show_cmd(what, json, &c, status)
        }
        ["show", ..] => {
            Err("show what? (sids, routes, proxies, rules, firewall, counters, neighbours or status)".into())
        }
        ["ids", "alerts", rest @ ..] => {
            let n = match rest {
                [] => 20,
                ["-n", n] => n.parse().map_err(|_| format!("`{n}`: expected a number of alerts"))?,
                _ => return Err("usage: ids alerts [-n N] [--json]".into()),
            };
            let c = lock(control);
            let v = crate::live::ids::last(&c.shared.ids_recent, n);
            Ok(if json {
                serde_json::to_string_pretty(&v).unwrap_or_default()
            } else {
                v.iter().map(|a| a.to_string()).collect::<Vec<_>>().join("\n")
            })
        }
        ["ids", "stats"] => {
            let c = lock(control);
            let g = c.shared.gen.load();
            let sum = crate::live::ids::totals(&c.shared);
            Ok(if json {
                serde_json::to_string_pretty(&crate::ids_alerts::stats_json(&g.tables, &sum)).unwrap_or_default()
            } else if g.tables.ids.is_none() {
                "no IDS configured".into()
            } else {
                crate::ids_alerts::stats_text(&g.tables, &sum)
            })
        }
        ["ids", ..] => Err("usage: ids alerts [-n N] [--json] | ids stats [--json]".into()),
        ["ip6tables", rest @ ..] if crate::live::fw_ctl::command_kind(rest) => {
            let c = lock(control);
            crate::live::fw_ctl::command(&c.shared, rest, json).unwrap_or_else(|| Err("not a listing".into()))
        }
        ["bpf", rest @ ..] => {
            let c = lock(control);
            let g = c.shared.gen.load();
            crate::bpf_maps::command(&g.tables, rest, json)
        }
        ["clear-counters"] => {
            lock(control).shared.clear_counters();
            Ok("counters cleared".into())
        }
        ["batch", text] => lock(control).apply_batch(text),
        ["batch", ..] => Err("usage: batch FILE|- (the client sends the file's lines)".into()),
        ["reload", file] => lock(control).reload(&PathBuf::from(file)),
        ["reload", ..] => Err("usage: reload FILE".into()),
        [first, ..] if is_config_word(first) => lock(control).apply_line(&plain.join(" ")),
        [first, ..] => Err(format!("unknown command `{first}`\n{HELP}")),
    }
}

/// Words that start a configuration line (`ip` optional, as in a file).
fn is_config_word(w: &str) -> bool {
    matches!(
        w,
        "ip" | "route"
            | "rule"
            | "ru"
            | "r"
            | "ro"
            | "neigh"
            | "neighbour"
            | "neighbor"
            | "addr"
            | "address"
            | "link"
            | "sr"
            | "sysctl"
            | "ip6tables"
            | "-6"
            | "-4"
    )
}

fn show_cmd(what: &str, json: bool, c: &Control, status: &Status) -> Result<String, String> {
    let shared: &Shared = &c.shared;
    let g = shared.gen.load();
    let t = &g.tables;
    let pretty = |v: &serde_json::Value| serde_json::to_string_pretty(v).unwrap_or_default();
    match what {
        "sids" | "sid" => {
            let totals = shared.totals();
            Ok(if json { pretty(&show::sids(t, &totals)) } else { show::sids_text(t, &totals) })
        }
        "proxies" | "proxy" => {
            let v = crate::report::proxies(t);
            Ok(if json { pretty(&v) } else { crate::report::proxies_text(&v) })
        }
        "firewall" | "fw" => {
            // The workers' counters of the current tables (each worker carries its
            // counts into new tables, per rule: `worker::carry_unchanged`).
            let mut sum = vec![0u64; 2 * t.firewall.as_ref().map_or(0, |f| f.counter_count())];
            for w in &shared.workers {
                let s = crate::live::state::lock(w);
                if s.gen.id == g.id {
                    sum.iter_mut().zip(&s.counters.firewall).for_each(|(a, b)| *a += b);
                }
            }
            let v = crate::report::firewall(t, &sum);
            Ok(if json { pretty(&v) } else { crate::report::firewall_text(&v) })
        }
        "routes" | "route" => {
            let v = route_listing(c);
            Ok(if json { pretty(&serde_json::json!(v)) } else { route_listing_text(&v) })
        }
        "rules" | "rule" => {
            let r = show::rules(&c.spec);
            Ok(if json { pretty(&serde_json::json!(r)) } else { r.join("\n") })
        }
        "counters" => {
            let v = show::counters(shared, t);
            Ok(if json { pretty(&v) } else { show::counters_text(&v) })
        }
        "devices" | "device" | "links" | "link" => {
            let v = show::devices(t);
            Ok(if json { pretty(&v) } else { show::devices_text(&v) })
        }
        "neighbours" | "neighbors" | "neigh" => {
            let n = show::neighbours(t);
            Ok(if json {
                pretty(&serde_json::Value::Array(
                    n.iter()
                        .map(|(d, a, m)| serde_json::json!({"dev": d, "addr": a.to_string(), "lladdr": m}))
                        .collect(),
                ))
            } else {
                n.iter().map(|(d, a, m)| format!("{a} dev {d} lladdr {m}")).collect::<Vec<_>>().join("\n")
            })
        }
        "status" => {
            // By device: the tier it runs and why ("af_xdp" or "af_packet" alone
            // without the XDP tier).
            let tiers: serde_json::Map<String, serde_json::Value> = match lock(&shared.fast).as_ref() {
                Some(f) => f.status(t).into_iter().map(|(d, s)| (d, s.into())).collect(),
                None => {
                    let why = if status.backend.starts_with("af_packet") {
                        "af_packet"
                    } else {
                        "af_xdp: the XDP tier is off (--fast-path off, or it could not start)"
                    };
                    t.devices.iter().map(|d| (d.name.clone(), why.into())).collect()
                }
            };
            // The routes the tables hold: the configuration's and `sr6 ctl`'s, and those
            // merged from the kernel and zebra.
            let routes = c.merged.as_ref().map_or(c.spec.routes.len(), |m| m.routes.len());
            let v = serde_json::json!({
                "backend": status.backend, "workers": status.workers, "devices": status.devices,
                "config": status.config, "pid": status.pid, "generation": g.id,
                "sids": t.sids.len(), "routes": routes, "own_routes": c.spec.routes.len(),
                "warnings": status.warnings, "links": show::links(shared), "tiers": tiers,
            });
            Ok(if json {
                pretty(&v)
            } else {
                format!(
                    "sr6 pid {} — backend {}, {} worker(s), devices {}\nconfig {}; tables generation {}: {} routes \
                     ({} of the configuration and sr6 ctl), {} SIDs",
                    status.pid,
                    status.backend,
                    status.workers,
                    status.devices.join(", "),
                    status.config,
                    g.id,
                    routes,
                    c.spec.routes.len(),
                    t.sids.len()
                ) + &show::links_text(&v["links"])
                    + &tiers
                        .iter()
                        .map(|(d, s)| format!("\ntier {d}: {}", s.as_str().unwrap_or("")))
                        .collect::<String>()
                    + &status.warnings.iter().map(|w| format!("\nwarning: {w}")).collect::<String>()
            })
        }
        other => Err(format!(
            "show {other}: unknown (sids, routes, proxies, rules, firewall, counters, devices, neighbours or status)"
        )),
    }
}

/// Client side: sends `args` to the daemon at `path`, returns its response.
pub fn request(path: &Path, args: &[String]) -> Result<Response, String> {
    let mut s = UnixStream::connect(path)
        .map_err(|e| format!("{}: cannot connect ({e}); is `sr6 run` running with this --socket?", path.display()))?;
    let _ = s.set_read_timeout(Some(Duration::from_secs(30)));
    let mut line = serde_json::to_string(&Request { args: args.to_vec() }).map_err(|e| e.to_string())?;
    line.push('\n');
    s.write_all(line.as_bytes()).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut resp = String::new();
    BufReader::new(s).read_line(&mut resp).map_err(|e| format!("{}: no answer: {e}", path.display()))?;
    serde_json::from_str(&resp).map_err(|e| format!("{}: malformed answer: {e}", path.display()))
}

/// `show routes`: every route the tables hold, in configuration syntax, with where it
/// comes from (`origin`: `config`, `ctl`, `fpm` for zebra's stream, `kernel` for the
/// mirror) and, for the outside ones, the routing protocol that installed them (the
/// line's `proto`, when it has one): the configuration's and `sr6 ctl`'s first, then
/// the outside routes the tables took, in the order they are merged.
fn route_listing(c: &Control) -> Vec<serde_json::Value> {
    let entry = |line: String, origin: &str| {
        let proto = line.split_whitespace().skip_while(|w| *w != "proto").nth(1).map(str::to_string);
        serde_json::json!({ "route": line, "origin": origin, "protocol": proto })
    };
    let lines = show::routes(&c.spec);
    let own = c.route_origins().into_iter().zip(lines);
    let (config, ctl): (Vec<_>, Vec<_>) = own.partition(|(o, _)| *o == "config");
    let mut v: Vec<serde_json::Value> = config.into_iter().chain(ctl).map(|(o, l)| entry(l, o)).collect();
    let mut merged = c.spec.clone();
    let outside = c.outside_routes();
    let nf = c.fpm_routes.len();
    for i in super::control::merge_outside_routes(&mut merged, &outside) {
        v.push(entry(outside[i].clone(), if i < nf { "fpm" } else { "kernel" }));
    }
    v
}

/// [`route_listing`] as text: the lines, each source after a comment naming it (the
/// configuration's without one).
fn route_listing_text(v: &[serde_json::Value]) -> String {
    let mut out = Vec::new();
    let mut last = "config";
    for e in v {
        let origin = e["origin"].as_str().unwrap_or("config");
        if origin != last {
            out.push(match origin {
                "ctl" => "# added by sr6 ctl".to_string(),
                "fpm" => "# from zebra's FPM stream (--fpm-listen)".to_string(),
                _ => "# mirrored from the kernel's tables (--mirror-kernel-routes)".to_string(),
            });
            last = origin;
        }
        out.push(e["route"].as_str().unwrap_or_default().to_string());
    }
    out.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicBool;

    fn setup() -> (Arc<Mutex<Control>>, Status) {
        let src = "addr add fc00::1/64 dev eth0\nroute add fc00:1::e/128 encap seg6local action End dev eth0\n";
        let spec = sr6_config::parse_str(src, "t").unwrap();
        let t = sr6_core::tables::Tables::build(&spec).unwrap().0;
        let shared = Arc::new(Shared::new(t, 2, Arc::new(AtomicBool::new(false))));
        let c = Control::new(spec, shared);
        let st = Status {
            backend: "test".into(),
            workers: 2,
            devices: vec!["eth0".into()],
            config: "t".into(),
            pid: 1,
            warnings: vec![],
        };
        (Arc::new(Mutex::new(c)), st)
    }

    /// `show routes` says where each route comes from: the configuration's, then
    /// `sr6 ctl`'s, then the mirror's with the protocol that installed them.
    #[test]
    fn routes_are_listed_by_origin() {
        let (c, _) = setup();
        let mut c = c.lock().unwrap();
        c.apply_line("route add fc00:2::/64 via fc00::2 dev eth0").unwrap();
        c.kernel_routes = crate::live::outside::KernelLines::listed(vec![
            "ip -6 route add fc00:3::/48 via fc00::3 dev eth0 proto isis metric 20".into(),
        ]);
        let v = route_listing(&c);
        let origins: Vec<(&str, Option<&str>)> =
            v.iter().map(|e| (e["origin"].as_str().unwrap(), e["protocol"].as_str())).collect();
        assert_eq!(origins, [("config", None), ("ctl", None), ("kernel", Some("isis"))]);
        let text = route_listing_text(&v);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[1], "# added by sr6 ctl", "{text}");
        assert!(lines[2].contains("fc00:2::/64"), "{text}");
        assert_eq!(lines[3], "# mirrored from the kernel's tables (--mirror-kernel-routes)", "{text}");
        assert!(lines[4].ends_with("proto isis metric 20"), "{text}");
    }

    /// `show status` counts the routes the tables hold, the kernel's merged ones too,
    /// and says how many are the configuration's and `sr6 ctl`'s.
    #[test]
    fn status_counts_the_merged_routes() {
        let (c, st) = setup();
        {
            let mut c = c.lock().unwrap();
            c.republish().unwrap();
            let k = crate::live::outside::KernelLines::listed(vec![
                "ip -6 route add fc00:3::/48 via fc00::3 dev eth0 metric 20".into(),
                "ip -6 route add fc00:4::/48 via fc00::3 dev eth0 metric 20".into(),
            ]);
            c.replace_outside_routes(|c| &mut c.kernel_routes, k).unwrap().unwrap();
        }
        let text = run(&c, &st, "show status").output;
        assert!(text.contains(": 3 routes (1 of the configuration and sr6 ctl), 1 SIDs"), "{text}");
        let v: serde_json::Value = serde_json::from_str(&run(&c, &st, "show status --json").output).unwrap();
        assert_eq!((v["routes"].as_u64(), v["own_routes"].as_u64()), (Some(3), Some(1)));
    }

    fn run(c: &Mutex<Control>, st: &Status, cmd: &str) -> Response {
        let args: Vec<String> = cmd.split_whitespace().map(String::from).collect();
        handle(&args, c, st)
    }

    #[test]
    fn commands_over_a_real_socket() {
        let (c, st) = setup();
        let dir = std::env::temp_dir().join(format!("sr6-ctl-test-{}", std::process::id()));
        let path = dir.join("ctl.sock");
        let l = bind(&path).unwrap();
        assert!(bind(&path).unwrap_err().contains("another sr6"));
        let c2 = c.clone();
        std::thread::spawn(move || serve(l, c2, st));
        let r = request(&path, &["show".into(), "sids".into(), "--json".into()]).unwrap();
        assert!(r.ok, "{}", r.output);
        let v: serde_json::Value = serde_json::from_str(&r.output).unwrap();
        assert_eq!(v[0]["sid"], "fc00:1::e/128");
        assert_eq!(v[0]["action"], "End");
        assert_eq!(v[0]["packets"], 0);
        // A malformed request gets an error; the server keeps serving.
        let mut s = UnixStream::connect(&path).unwrap();
        s.write_all(b"this is not json\n").unwrap();
        let mut resp = String::new();
        BufReader::new(&s).read_line(&mut resp).unwrap();
        let r: Response = serde_json::from_str(&resp).unwrap();
        assert!(!r.ok && r.output.contains("malformed request"), "{}", r.output);
        let r = request(
            &path,
            &[
                "route".into(),
                "add".into(),
                "fc00:9::/64".into(),
                "via".into(),
                "fc00::2".into(),
                "dev".into(),
                "eth0".into(),
            ],
        )
        .unwrap();
        assert!(r.ok, "{}", r.output);
        let r = request(&path, &["show".into(), "routes".into()]).unwrap();
        assert!(r.output.contains("fc00:9::/64 via fc00::2 dev eth0"), "{}", r.output);
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// `rule add|del` through the control socket change the tables; `show rules` lists
    /// the rules as lines that make them again.
    #[test]
    fn rules_are_changed_and_shown() {
        let (c, st) = setup();
        let r = run(&c, &st, "ip -6 rule add from fc00:a::/64 ipproto udp dport 5000-5999 lookup 100");
        assert!(r.ok, "{}", r.output);
        assert!(run(&c, &st, "rule add not to 10.2.0.0/16 iif eth0 sport 7 pref 9 prohibit").ok);
        assert_eq!(lock(&c).shared.gen.load().tables.rules.v6.len(), 4, "the rule and the implicit three");
        let r = run(&c, &st, "show rules");
        let want = "ip -6 rule add from fc00:a::/64 ipproto 17 dport 5000-5999 priority 32765 lookup 100\n\
                    ip -4 rule add not to 10.2.0.0/16 iif eth0 sport 7 priority 9 prohibit";
        assert_eq!(r.output, want);
        // The lines make the same rules again.
        let mut again = sr6_config::parse_str("link set eth0 up", "t").unwrap();
        for (i, l) in want.lines().enumerate() {
            sr6_config::parse_line(l, "t", i + 1, &mut again).unwrap();
        }
        let strip = |v: &[sr6_core::spec::RuleSpec]| {
            v.iter().map(|r| sr6_core::spec::RuleSpec { line: 0, ..r.clone() }).collect::<Vec<_>>()
        };
        assert_eq!(strip(&again.rules), strip(&lock(&c).spec.rules));
        let r = run(&c, &st, "show rules --json");
        assert_eq!(serde_json::from_str::<serde_json::Value>(&r.output).unwrap()[1], want.lines().nth(1).unwrap());
        let r = run(&c, &st, "ip -6 rule del lookup main");
        assert!(!r.ok && r.output.contains("32766"), "{}", r.output);
        assert!(run(&c, &st, "ip -6 rule del dport 5000-5999").ok);
        assert!(lock(&c).shared.gen.load().tables.rules.v6.is_empty());
        assert_eq!(run(&c, &st, "show rules").output, want.lines().nth(1).unwrap());
    }

    /// `ip6tables` lines through the control socket add rules (an invalid one changes
    /// nothing); `show firewall` lists them as `ip6tables -S -v` with counters.
    #[test]
    fn firewall_is_changed_and_shown() {
        let (c, st) = setup();
        assert_eq!(run(&c, &st, "show firewall").output, "no firewall rules (every chain accepts)");
        assert!(run(&c, &st, "ip6tables -N SERA").ok);
        let r = run(&c, &st, "ip6tables -A FORWARD -m srh ! --srh-tag 7 -j SERA");
        assert!(r.ok, "{}", r.output);
        let r = run(&c, &st, "ip6tables -A SERA -j SEG6");
        assert!(!r.ok && r.output.contains("--seg6-action"), "{}", r.output);
        assert!(run(&c, &st, "ip6tables -A SERA -j SEG6 --seg6-action skip-next").ok);
        assert!(lock(&c).shared.gen.load().tables.firewall.is_some());
        let want = "-P INPUT ACCEPT -c 0 0\n-P FORWARD ACCEPT -c 0 0\n\
                    -A FORWARD -m srh ! --srh-tag 7 -j SERA -c 0 0\n\
                    -A SERA -j SEG6 --seg6-action skip-next -c 0 0";
        assert_eq!(run(&c, &st, "show firewall").output, want);
        let v: serde_json::Value = serde_json::from_str(&run(&c, &st, "show firewall --json").output).unwrap();
        assert_eq!(v[2]["chain"], "FORWARD");
        assert_eq!(v[2]["packets"], 0);
        // Deleted by number and by rule, flushed, the emptied chain deleted; a chain
        // something jumps to, or a rule that is not there, changes nothing.
        assert!(!run(&c, &st, "ip6tables -X SERA").ok);
        assert!(!run(&c, &st, "ip6tables -D SERA -j DROP").ok);
        assert!(run(&c, &st, "ip6tables -D SERA 1").ok);
        assert!(run(&c, &st, "ip6tables -D FORWARD -m srh ! --srh-tag 7 -j SERA").ok);
        assert!(run(&c, &st, "ip6tables -X SERA").ok);
        assert!(run(&c, &st, "ip6tables -A INPUT -p udp -j DROP").ok);
        assert!(run(&c, &st, "ip6tables -F").ok);
        assert!(lock(&c).shared.gen.load().tables.firewall.is_none());
        assert_eq!(run(&c, &st, "show firewall").output, "no firewall rules (every chain accepts)");
    }

    /// `show devices` lists each device with its MTU (the configured one here; the
    /// kernel's under `sr6 run`), as text and JSON.
    #[test]
    fn show_devices_lists_the_mtu() {
        let (c, st) = setup();
        assert!(run(&c, &st, "link set dev eth0 mtu 1400").ok);
        let r = run(&c, &st, "show devices");
        assert!(r.ok && r.output.contains("eth0 address 02:00:00:00:00:01 mtu 1400"), "{}", r.output);
        let r = run(&c, &st, "show devices --json");
        let v: serde_json::Value = serde_json::from_str(&r.output).unwrap();
        assert_eq!(v[0]["mtu"], 1400);
    }

    /// `show proxies` lists an SR proxy with its cache; a route added at run time
    /// (new tables) keeps the cache and the counters; clear-counters zeroes the
    /// counters, not the cache.
    #[test]
    fn show_proxies_and_a_rebuild_keeps_the_cache() {
        let (c, st) = setup();
        let r = run(&c, &st, "addr add fc00:2::1/64 dev eth0");
        assert!(r.ok, "{}", r.output);
        let r = run(
            &c,
            &st,
            "route add fc00:f::1/128 encap seg6local action End.AD nh6 fc00:2::2 oif eth0 iif eth0 dev eth0",
        );
        assert!(r.ok, "{}", r.output);
        let v: serde_json::Value = serde_json::from_str(&run(&c, &st, "show proxies --json").output).unwrap();
        assert_eq!((v[0]["sid"].as_str(), v[0]["behaviour"].as_str()), (Some("fc00:f::1/128"), Some("End.AD")));
        assert_eq!((v[0]["iif"].as_str(), v[0]["nh"].as_str()), (Some("eth0"), Some("fc00:2::2")));
        assert_eq!(v[0]["cache"]["state"], "empty");
        // The headers of a packet that went through: IPv6 (the payload length its own)
        // + an SRH of two segments.
        let mut h = vec![0x60, 0, 0, 0, 0, 200, 43, 63];
        h.extend_from_slice(&"fc00:1::2".parse::<std::net::Ipv6Addr>().unwrap().octets());
        h.extend_from_slice(&"fc00:e::9".parse::<std::net::Ipv6Addr>().unwrap().octets());
        h.extend_from_slice(&[41, 4, 4, 0, 1, 0, 0, 0]);
        h.extend_from_slice(&"fc00:e::9".parse::<std::net::Ipv6Addr>().unwrap().octets());
        h.extend_from_slice(&"fc00:f::1".parse::<std::net::Ipv6Addr>().unwrap().octets());
        {
            let g = c.lock().unwrap().shared.gen.load_full();
            g.tables.proxies[0].state.cache.store(&h);
            g.tables.proxies[0].state.counters.hits.fetch_add(3, std::sync::atomic::Ordering::Relaxed);
        }
        let r = run(&c, &st, "route add fc00:77::/64 via fc00:2::9 dev eth0");
        assert!(r.ok, "{}", r.output);
        let v: serde_json::Value = serde_json::from_str(&run(&c, &st, "show proxies --json").output).unwrap();
        let cache = &v[0]["cache"];
        assert_eq!((cache["state"].as_str(), cache["length"].as_u64()), (Some("headers"), Some(80)));
        assert_eq!((cache["dst"].as_str(), cache["segments_left"].as_u64()), (Some("fc00:e::9"), Some(0)));
        assert_eq!(cache["segments"], serde_json::json!(["fc00:e::9", "fc00:f::1"]));
        assert_eq!(v[0]["hits"], 3);
        let text = run(&c, &st, "show proxies").output;
        assert!(text.contains("cache: 80 bytes, fc00:1::2 -> fc00:e::9, segments left 0"), "{text}");
        assert!(run(&c, &st, "clear-counters").ok);
        let v: serde_json::Value = serde_json::from_str(&run(&c, &st, "show proxies --json").output).unwrap();
        assert_eq!((v[0]["hits"].as_u64(), v[0]["cache"]["state"].as_str()), (Some(0), Some("headers")));
    }

    #[test]
    fn errors_name_what_was_expected() {
        let (c, st) = setup();
        let r = run(&c, &st, "frobnicate");
        assert!(!r.ok && r.output.contains("unknown command `frobnicate`"));
        let r = run(&c, &st, "show");
        assert!(!r.ok);
        let r = run(&c, &st, "show bogus");
        assert!(!r.ok && r.output.contains("unknown"));
        let r = run(&c, &st, "route add fc00:5::/64 via zz dev eth0");
        assert!(!r.ok && r.output.starts_with("ctl:1:"), "{}", r.output);
        let r = run(&c, &st, "reload /nonexistent/sr6.conf");
        assert!(!r.ok && r.output.contains("/nonexistent/sr6.conf"), "{}", r.output);
        for cmd in
            ["show counters", "show counters --json", "show status", "show neighbours --json", "clear-counters", "help"]
        {
            let r = run(&c, &st, cmd);
            assert!(r.ok, "{cmd}: {}", r.output);
        }
    }
}
