//! Workers end to end over socket-pair ports: frames in, the pipeline, frames out, table
//! swaps under traffic, and packets waiting for neighbour resolution.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{sync_channel, Receiver};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use sr6_core::tables::neigh_key;
use sr6_io::live::Port;
use sr6_io::socketpair::{SocketPairPort, Wire};

use super::control::Control;
use super::overload::OverloadGuard;
use super::state::Shared;
use super::worker::{run, ResolveRequest, WorkerCtx};

const CONF: &str = "\
link set eth0 address 02:00:00:00:00:a0
link set eth1 address 02:00:00:00:00:a1
addr add fc00:1::1/64 dev eth0
addr add fc00:2::1/64 dev eth1
neigh add fc00:1::2 lladdr 02:00:00:00:01:02 dev eth0
neigh add fc00:2::2 lladdr 02:00:00:00:02:02 dev eth1
route add fc00:9::/64 via fc00:2::2 dev eth1
route add fc00:8::/64 via fc00:2::3 dev eth1
route add fc00:7::/64 via fc00:2::2 dev eth1
";

struct Rig {
    control: Arc<Mutex<Control>>,
    wires: Vec<Wire>,
    resolve: Receiver<ResolveRequest>,
    alerts: Receiver<super::ids::AlertMsg>,
    stop: Arc<AtomicBool>,
    worker: Option<JoinHandle<()>>,
}

impl Rig {
    fn new() -> Rig {
        Rig::with(CONF)
    }

    fn with(conf: &str) -> Rig {
        Rig::worker(conf, 0)
    }

    /// The rig with its one worker numbered `id` (of `id + 1`).
    fn worker(conf: &str, id: usize) -> Rig {
        let spec = sr6_config::parse_str(conf, "t").unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let t0 = sr6_core::tables::Tables::build(&spec).unwrap().0;
        let shared = Arc::new(Shared::new(t0, id + 1, stop.clone()));
        let mut c = Control::new(spec, shared.clone());
        c.republish().map(|_| ()).unwrap_or_else(|e| panic!("{e}"));
        let (p0, w0) = SocketPairPort::pair("eth0", 0).unwrap();
        let (p1, w1) = SocketPairPort::pair("eth1", 1).unwrap();
        for w in [&w0, &w1] {
            w.from_port.set_read_timeout(Some(Duration::from_millis(500))).unwrap();
        }
        let (tx, rx) = sync_channel(64);
        let (alerts, alerts_rx) = sync_channel(64);
        let ctx =
            WorkerCtx { id, shared, batch: 32, resolve: tx, cpu: None, overload: OverloadGuard::new(None), alerts };
        let ports: Vec<Box<dyn Port>> = vec![Box::new(p0), Box::new(p1)];
        let worker = std::thread::spawn(move || run(ctx, ports));
        Rig {
            control: Arc::new(Mutex::new(c)),
            wires: vec![w0, w1],
            resolve: rx,
            alerts: alerts_rx,
            stop,
            worker: Some(worker),
        }
    }

    /// `sr6 ctl CMD` (words split at spaces) on the rig's control: its output, or its
    /// error message.
    fn ctl(&self, cmd: &str) -> Result<String, String> {
        let st = super::ctl::Status {
            backend: "test".into(),
            workers: 1,
            devices: vec!["eth0".into(), "eth1".into()],
            config: "t".into(),
            pid: 1,
            warnings: vec![],
        };
        let args: Vec<String> = cmd.split_whitespace().map(String::from).collect();
        let r = super::ctl::handle(&args, &self.control, &st);
        if r.ok {
            Ok(r.output)
        } else {
            Err(r.output)
        }
    }

    fn recv(&self, dev: usize) -> Option<Vec<u8>> {
        let mut b = vec![0u8; 2048];
        self.wires[dev].from_port.recv(&mut b).ok().map(|n| b[..n].to_vec())
    }
}

impl Drop for Rig {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(w) = self.worker.take() {
            let _ = w.join();
        }
    }
}

/// Ethernet (to eth0's MAC) + IPv6 (hop limit 64, UDP) + 8-byte UDP header + payload.
fn frame(dst: &str, payload: u8) -> Vec<u8> {
    let mut f = vec![2, 0, 0, 0, 0, 0xa0, 2, 0, 0, 0, 1, 2, 0x86, 0xdd];
    f.extend_from_slice(&[0x60, 0, 0, 0, 0, 9, 17, 64]);
    f.extend_from_slice(&"fc00:1::2".parse::<std::net::Ipv6Addr>().unwrap().octets());
    f.extend_from_slice(&dst.parse::<std::net::Ipv6Addr>().unwrap().octets());
    f.extend_from_slice(&[0x12, 0x34, 0x56, 0x78, 0, 9, 0, 0, payload]);
    f
}

/// What a router must make of `frame(dst, p)` sent towards `mac` out of eth1 (RFC 8200
/// §3: hop limit - 1; the Ethernet header rewritten).
fn forwarded(dst: &str, p: u8, mac: [u8; 6]) -> Vec<u8> {
    let mut f = frame(dst, p);
    f[..6].copy_from_slice(&mac);
    f[6..12].copy_from_slice(&[2, 0, 0, 0, 0, 0xa1]);
    f[14 + 7] = 63;
    f
}

#[test]
fn frames_are_forwarded_between_ports() {
    let rig = Rig::new();
    rig.wires[0].to_port.send(&frame("fc00:9::5", 1)).unwrap();
    assert_eq!(rig.recv(1).expect("forwarded frame"), forwarded("fc00:9::5", 1, [2, 0, 0, 0, 2, 2]));
}

#[test]
fn unresolved_packets_wait_for_the_neighbour() {
    let rig = Rig::new();
    rig.wires[0].to_port.send(&frame("fc00:8::5", 2)).unwrap();
    let req = rig.resolve.recv_timeout(Duration::from_secs(2)).expect("a resolution request");
    assert_eq!(req, (1, neigh_key("fc00:2::3".parse().unwrap())));
    assert!(rig.recv(1).is_none(), "nothing leaves before the neighbour is known");
    {
        let mut c = rig.control.lock().unwrap();
        assert!(c.learn("eth1", "fc00:2::3".parse().unwrap(), Some([2, 0, 0, 0, 2, 3])));
        c.republish().unwrap();
    }
    assert_eq!(rig.recv(1).expect("the queued frame"), forwarded("fc00:8::5", 2, [2, 0, 0, 0, 2, 3]));
    let c = rig.control.lock().unwrap();
    let deadline = Instant::now() + Duration::from_secs(2);
    loop {
        let (_, pend, _) = c.shared.port_totals();
        if pend.sent == 1 || Instant::now() > deadline {
            assert_eq!((pend.queued, pend.sent, pend.overflow, pend.timeout), (1, 1, 0, 0));
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn a_route_change_under_traffic_loses_nothing() {
    let rig = Rig::new();
    const N: u32 = 3000;
    let wire_in = rig.wires[0].to_port.try_clone().unwrap();
    let sender = std::thread::spawn(move || {
        for i in 0..N {
            // The socket buffer may fill: retry, never skip.
            while wire_in.send(&frame("fc00:7::1", (i % 251) as u8)).is_err() {
                std::thread::sleep(Duration::from_micros(50));
            }
        }
    });
    // Read both wires while the stream runs (a full socket would count as a full ring).
    let readers: Vec<_> = (0..2)
        .map(|w| {
            let wire = rig.wires[w].from_port.try_clone().unwrap();
            std::thread::spawn(move || {
                wire.set_read_timeout(Some(Duration::from_millis(500))).unwrap();
                let mut b = vec![0u8; 2048];
                let mut n = 0u32;
                while wire.recv(&mut b).is_ok() {
                    n += 1;
                }
                n
            })
        })
        .collect();
    std::thread::sleep(Duration::from_millis(5));
    rig.control.lock().unwrap().apply_line("route replace fc00:7::/64 via fc00:1::2 dev eth0").unwrap();
    sender.join().unwrap();
    let mut counts = readers.into_iter().map(|r| r.join().unwrap());
    let (on0, on1) = (counts.next().unwrap(), counts.next().unwrap());
    assert_eq!(on0 + on1, N, "every packet left by one path or the other ({on0} + {on1})");
    assert!(on0 > 0, "the new route was used");
    let totals = rig.control.lock().unwrap().shared.totals();
    assert_eq!(totals.rx, u64::from(N));
    assert_eq!(totals.dropped(), 0);
}

/// IPv4: eth1 at MTU 1280, one gateway known and one not.
const CONF4: &str = "\
link set eth0 address 02:00:00:00:00:a0
link set eth1 address 02:00:00:00:00:a1
link set eth1 mtu 1280
addr add 10.0.1.1/24 dev eth0
addr add 10.0.2.1/24 dev eth1
neigh add 10.0.2.2 lladdr 02:00:00:00:02:02 dev eth1
route add 10.9.0.0/16 via 10.0.2.2 dev eth1
route add 10.8.0.0/16 via 10.0.2.3 dev eth1
";

/// Ethernet (to eth0's MAC) + an IPv4/UDP packet of `total` bytes to `dst`, DF clear.
fn frame4(dst: [u8; 4], total: usize) -> Vec<u8> {
    let mut f = vec![2, 0, 0, 0, 0, 0xa0, 2, 0, 0, 0, 1, 2, 8, 0];
    f.extend_from_slice(&[0x45, 0, 0, 0, 0xab, 0xcd, 0, 0, 64, 17, 0, 0, 10, 0, 1, 2]);
    f.extend_from_slice(&dst);
    f.extend((0..total - 20).map(|i| i as u8));
    let mut ip = sr6_wire::Ipv4Packet::new_unchecked(&mut f[14..]);
    ip.set_total_len(total as u16);
    ip.fill_checksum();
    f
}

/// (length, flags + offset word) of the IPv4 packet in an Ethernet frame.
fn frag_of(f: &[u8]) -> (usize, u16) {
    let ip = sr6_wire::Ipv4Packet::new_checked(&f[14..]).unwrap();
    assert!(ip.verify_checksum());
    (usize::from(ip.total_len()), ip.flags_frag())
}

#[test]
fn ipv4_fragments_leave_in_order_also_after_resolution() {
    let rig = Rig::with(CONF4);
    // 1400 bytes over MTU 1280: 1276 (1256 bytes of data) + 144 (the other 124), TTL - 1.
    rig.wires[0].to_port.send(&frame4([10, 9, 0, 5], 1400)).unwrap();
    let a = rig.recv(1).expect("first fragment");
    let b = rig.recv(1).expect("second fragment");
    assert_eq!((frag_of(&a), frag_of(&b)), ((1276, 0x2000), (144, 1256 / 8)));
    assert_eq!((a[14 + 8], &a[..6]), (63, &[2, 0, 0, 0, 2, 2][..]));
    // Towards a gateway not resolved yet: each fragment waits, then both leave, in order.
    rig.wires[0].to_port.send(&frame4([10, 8, 0, 5], 1400)).unwrap();
    let req = rig.resolve.recv_timeout(Duration::from_secs(2)).expect("a resolution request");
    assert_eq!(req, (1, neigh_key("10.0.2.3".parse().unwrap())));
    assert!(rig.recv(1).is_none(), "nothing leaves before the neighbour is known");
    {
        let mut c = rig.control.lock().unwrap();
        assert!(c.learn("eth1", "10.0.2.3".parse().unwrap(), Some([2, 0, 0, 0, 2, 3])));
        c.republish().unwrap();
    }
    let a = rig.recv(1).expect("first queued fragment");
    let b = rig.recv(1).expect("second queued fragment");
    assert_eq!((frag_of(&a), frag_of(&b)), ((1276, 0x2000), (144, 1256 / 8)));
    assert_eq!((&a[..6], &b[..6]), (&[2, 0, 0, 0, 2, 3][..], &[2, 0, 0, 0, 2, 3][..]));
    // Counters are published when the worker falls idle.
    let deadline = Instant::now() + Duration::from_secs(2);
    loop {
        let t = rig.control.lock().unwrap().shared.totals();
        if (t.fragmented, t.fragments) == (2, 4) || Instant::now() > deadline {
            assert_eq!((t.fragmented, t.fragments, t.unresolved), (2, 4, 2));
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// `clear-counters` while the worker is idle, then one frame: it is counted. (The worker
/// used to notice the clear only when it next published, after that frame's batch, and
/// forgot the frame with what came before the clear.)
#[test]
fn the_first_frame_after_clear_counters_is_counted() {
    let rig = Rig::new();
    let shared = rig.control.lock().unwrap().shared.clone();
    let totals = |want: u64| {
        let deadline = Instant::now() + Duration::from_secs(2);
        loop {
            let rx = shared.totals().rx;
            if rx == want || Instant::now() > deadline {
                return rx;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    };
    rig.wires[0].to_port.send(&frame("fc00:9::5", 1)).unwrap();
    assert!(rig.recv(1).is_some());
    assert_eq!(totals(1), 1);
    // Idle now (its counters published); the clear, then the next frame.
    std::thread::sleep(Duration::from_millis(50));
    shared.clear_counters();
    rig.wires[0].to_port.send(&frame("fc00:9::5", 2)).unwrap();
    assert!(rig.recv(1).is_some());
    assert_eq!(totals(1), 1);
}

#[test]
fn ids_in_ips_mode_drops_and_hands_alerts_to_the_writer() {
    let dir = crate::test_support::scratch_dir("live-ids");
    let rules = dir.join("rules.txt");
    std::fs::write(&rules, "drop udp any any -> fc00:9::/64 any (msg:\"star\"; content:\"|2a|\"; sid:5;)\n").unwrap();
    let out = dir.join("alerts.json");
    let rig = Rig::with(&format!("{CONF}ids rules {} mode ips on forward alerts {}\n", rules.display(), out.display()));
    rig.wires[0].to_port.send(&frame("fc00:9::5", b'*')).unwrap();
    rig.wires[0].to_port.send(&frame("fc00:9::5", b'+')).unwrap();
    // Only the second leaves; the first raised an alert, with the generation's rules.
    assert_eq!(rig.recv(1).expect("forwarded frame"), forwarded("fc00:9::5", b'+', [2, 0, 0, 0, 2, 2]));
    let (gen, a) = rig.alerts.recv_timeout(Duration::from_secs(2)).expect("an alert");
    assert_eq!((a.sid, a.action, a.dst.to_string()), (5, sr6_core::ids::rule::Action::Drop, "fc00:9::5".to_string()));
    let js = crate::ids_alerts::alert_json(&gen.tables, &a);
    assert_eq!((js["msg"].as_str(), js["point"].as_str()), (Some("star"), Some("forward")));
    assert!(rig.alerts.recv_timeout(Duration::from_millis(200)).is_err(), "one alert only");
    // The writer: a JSON line in the generation's alerts file, and the ring.
    let (tx, rx) = sync_channel(4);
    tx.send((gen, a)).unwrap();
    drop(tx);
    let recent = Arc::new(super::ids::Recent::default());
    super::ids::writer(rx, recent.clone(), 0);
    let text = std::fs::read_to_string(&out).unwrap();
    let lines: Vec<serde_json::Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines, vec![js]);
    assert_eq!(super::ids::last(&recent, 10), lines);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A neighbour learnt (or a route added) rebuilds the tables: the firewall's and the
/// IDS's counters go on from where they were; a rule inserted before a counted one
/// starts at zero while the counted one keeps its count. (They used to restart at every rebuild,
/// so the counts of a live router lost everything before its last neighbour change.)
#[test]
fn firewall_and_ids_counts_survive_rebuilds_that_keep_their_rules() {
    let dir = crate::test_support::scratch_dir("live-carry");
    let rules = dir.join("rules.txt");
    std::fs::write(&rules, "alert udp any any -> fc00:9::/64 any (msg:\"star\"; content:\"|2a|\"; sid:5;)\n").unwrap();
    let conf =
        format!("{CONF}ids rules {} on forward\nip6tables -A FORWARD -d fc00:9::/64 -j ACCEPT\n", rules.display());
    let rig = Rig::with(&conf);
    let shared = rig.control.lock().unwrap().shared.clone();
    // (firewall rule 0's packets, IDS inspected) once both reach `want` (or 2 s pass).
    let counts = |want: (u64, u64)| {
        let deadline = Instant::now() + Duration::from_secs(2);
        loop {
            let g = shared.gen.load();
            let s = super::state::lock(&shared.workers[0]);
            let got = if s.gen.id == g.id {
                (s.counters.firewall.first().copied().unwrap_or(0), s.counters.ids.inspected)
            } else {
                (0, 0)
            };
            drop(s);
            if got == want || Instant::now() > deadline {
                return got;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    };
    let pass = |n: u8| {
        rig.wires[0].to_port.send(&frame("fc00:9::5", n)).unwrap();
        assert!(rig.recv(1).is_some(), "frame {n} forwarded");
    };
    pass(b'*');
    pass(b'+');
    assert_eq!(counts((2, 2)), (2, 2));
    {
        let mut c = rig.control.lock().unwrap();
        assert!(c.learn("eth1", "fc00:2::3".parse().unwrap(), Some([2, 0, 0, 0, 2, 3])));
        c.republish().unwrap();
        c.apply_line("route add fc00:6::/64 via fc00:2::2 dev eth1").unwrap();
    }
    pass(b'-');
    assert_eq!(counts((3, 3)), (3, 3), "counted on across two rebuilds");
    // A rule inserted before it: the rule keeps its count at its new place, the new
    // rule starts at zero (ip6tables' way); the IDS goes on.
    rig.control.lock().unwrap().apply_line("ip6tables -I FORWARD -p tcp -j DROP").unwrap();
    pass(b'.');
    let deadline = Instant::now() + Duration::from_secs(2);
    let fw = loop {
        let s = super::state::lock(&shared.workers[0]);
        let fw = s.counters.firewall.clone();
        let ids = s.counters.ids.inspected;
        drop(s);
        if (fw.get(2) == Some(&4) && ids == 4) || Instant::now() > deadline {
            break fw;
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    assert_eq!((fw[0], fw[2]), (0, 4), "the new rule at 0, the old one's 3 + 1");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `ip6tables -L`, `-S` and `-Z` through the control socket, on the counts a worker made:
/// ip6tables 1.8's layout (checked against its output for the same rules), a rule, a
/// chain and everything zeroed, and the errors ip6tables gives.
#[test]
fn firewall_is_listed_and_zeroed_at_run_time() {
    let conf = format!(
        "{CONF}ip6tables -N SERA\nip6tables -A FORWARD -d fc00:9::/64 -p udp --dport 22136 -j SERA\n\
         ip6tables -A SERA -j ACCEPT\nip6tables -A FORWARD ! -s fc00:1::/64 -i eth0 -j DROP\n\
         ip6tables -A INPUT -m srh --srh-tag 7 -j SEG6 --seg6-action go-next\n"
    );
    let rig = Rig::with(&conf);
    let ctl = |cmd: &str| rig.ctl(cmd);
    // Until the worker has published `want` as the first FORWARD rule's packets.
    let settle = |want: &str| {
        let deadline = Instant::now() + Duration::from_secs(2);
        loop {
            let s = ctl("ip6tables -S FORWARD -v").unwrap();
            if s.contains(want) || Instant::now() > deadline {
                return s;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    };
    for n in 0..3 {
        rig.wires[0].to_port.send(&frame("fc00:9::5", n)).unwrap();
        assert!(rig.recv(1).is_some(), "frame {n} forwarded");
    }
    // Three 49-byte packets (IPv6 length) through the jump and SERA's ACCEPT.
    let s = settle("-c 3 147 -j SERA");
    assert_eq!(
        s,
        "-P FORWARD ACCEPT -c 0 0\n-A FORWARD -d fc00:9::/64 -p udp -m udp --dport 22136 -c 3 147 -j SERA\n\
         -A FORWARD ! -s fc00:1::/64 -i eth0 -c 0 0 -j DROP"
    );
    let l = ctl("ip6tables -L -v -n").unwrap();
    let want = "\
Chain INPUT (policy ACCEPT 0 packets, 0 bytes)
 pkts bytes target     prot opt in     out     source               destination         
    0     0 SEG6       0    --  *      *       ::/0                 ::/0                 srh tag:7 seg6-action go-next

Chain FORWARD (policy ACCEPT 0 packets, 0 bytes)
 pkts bytes target     prot opt in     out     source               destination         
    3   147 SERA       17   --  *      *       ::/0                 fc00:9::/64          udp dpt:22136
    0     0 DROP       0    --  eth0   *      !fc00:1::/64          ::/0                

Chain SERA (1 references)
 pkts bytes target     prot opt in     out     source               destination         
    3   147 ACCEPT     0    --  *      *       ::/0                 ::/0                ";
    assert_eq!(l, want);
    assert_eq!(
        ctl("ip6tables -L SERA -n -x --line-numbers").unwrap(),
        "Chain SERA (1 references)\nnum  target     prot opt source               destination         \n\
         1    ACCEPT     0    --  ::/0                 ::/0                "
    );
    // -Z FORWARD 1: that rule only; -Z SERA: the chain; -Z: everything.
    assert_eq!(ctl("ip6tables -Z FORWARD 1").unwrap(), "zeroed 1 counter");
    let s = settle("-c 0 0 -j SERA");
    assert!(s.contains("--dport 22136 -c 0 0 -j SERA"), "{s}");
    assert!(ctl("ip6tables -S SERA -v").unwrap().contains("-A SERA -c 3 147 -j ACCEPT"));
    rig.wires[0].to_port.send(&frame("fc00:9::5", 9)).unwrap();
    assert!(rig.recv(1).is_some());
    settle("-c 1 49 -j SERA");
    assert!(ctl("ip6tables -S SERA -v").unwrap().contains("-A SERA -c 4 196 -j ACCEPT"));
    ctl("ip6tables -Z SERA").unwrap();
    ctl("ip6tables --zero").unwrap();
    let s = settle("-c 0 0 -j SERA");
    assert!(!s.contains("-c 1 "), "{s}");
    let deadline = Instant::now() + Duration::from_secs(2);
    while !ctl("ip6tables -S SERA -v").unwrap().contains("-A SERA -c 0 0 -j ACCEPT") {
        assert!(Instant::now() < deadline, "SERA zeroed");
        std::thread::sleep(Duration::from_millis(5));
    }
    // The errors ip6tables gives; a configuration line still changes the rules.
    assert!(ctl("ip6tables -Z NOPE").unwrap_err().contains("No chain/target/match by that name"));
    assert!(ctl("ip6tables -Z FORWARD 3").unwrap_err().contains("Index of deletion too big"));
    assert!(ctl("ip6tables -L -Q").unwrap_err().contains("not an option of -L, -S or -Z"));
    assert!(ctl("ip6tables -Lq").unwrap_err().contains("unknown option `-q`"));
    ctl("ip6tables -A SERA -j DROP").unwrap();
    assert!(ctl("ip6tables -S SERA").unwrap().ends_with("-A SERA -j ACCEPT\n-A SERA -j DROP"));
}

/// `ip6tables -S` and `-L -v -n` through sr6 against Linux's ip6tables for the same
/// rules, in a namespace of its own (root; the root suites run it with
/// `--include-ignored`): `-S` in every form byte for byte, `-L` line for line, sr6
/// having no OUTPUT chain.
#[test]
#[ignore = "root: compares with ip6tables in a network namespace"]
fn ip6tables_listing_matches_linux() {
    let ns = sr6_testnet::Netns::new("fwls");
    let linux = |args: &[&str]| -> String {
        let o = std::process::Command::new("ip")
            .args(["netns", "exec", ns.name(), "ip6tables"])
            .args(args)
            .output()
            .expect("ip6tables (scripts/setup.sh installs iptables)");
        assert!(o.status.success(), "ip6tables {args:?}: {}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    let rules = [
        "-N SERA",
        "-N EMPTY",
        "-A INPUT -s fc00::1 -p udp --dport 53 -j DROP",
        "-A INPUT ! -i eth0 -m srh --srh-tag 7 -j SERA",
        "-A INPUT -d fc00:2::/64 -p tcp ! --sport 1000:2000 -j REJECT --reject-with icmp6-adm-prohibited",
        "-A FORWARD -i eth+ -o eth1 -m srh --srh-segs-left-gt 1 ! --srh-last-entry-eq 3 -j ACCEPT",
        "-A FORWARD -m srh --srh-next-hdr 41 --srh-lsid fc00:9::/48 ! --srh-nsid fc00:8::1 -j SERA",
        "-A SERA ! -d fc00:1::/64 -j RETURN",
        "-P FORWARD DROP",
    ];
    let rig = Rig::new();
    let ctl = |cmd: &str| rig.ctl(cmd).unwrap_or_else(|e| panic!("{cmd}: {e}"));
    for r in rules {
        linux(&r.split_whitespace().collect::<Vec<_>>());
        ctl(&format!("ip6tables {r}"));
    }
    // Linux's output without its OUTPUT chain, and without the final newline.
    let no_output = |s: String| {
        s.split("\n\n")
            .filter(|b| !b.starts_with("Chain OUTPUT"))
            .map(|b| b.lines().filter(|l| !l.starts_with("-P OUTPUT")).collect::<Vec<_>>().join("\n"))
            .collect::<Vec<String>>()
            .join("\n\n")
            .trim_end_matches('\n')
            .to_string()
    };
    for args in [&["-S"][..], &["-S", "-v"], &["-S", "INPUT"], &["-S", "SERA", "-v"], &["-S", "EMPTY"]] {
        assert_eq!(ctl(&format!("ip6tables {}", args.join(" "))), no_output(linux(args)), "ip6tables {args:?}");
    }
    for args in [
        &["-L", "-v", "-n"][..],
        &["-L", "-n"],
        &["-L", "INPUT", "-v", "-n", "-x", "--line-numbers"],
        &["-L", "SERA", "-n"],
    ] {
        let want = no_output(linux(args));
        let got = ctl(&format!("ip6tables {}", args.join(" ")));
        for (g, w) in got.lines().zip(want.lines()) {
            assert_eq!(g, w, "ip6tables {args:?}");
        }
        assert_eq!(got.lines().count(), want.lines().count(), "ip6tables {args:?}:\n{got}\n---\n{want}");
    }
}

/// A device that goes away and comes back (`links.rs`): the worker takes the stand-in
/// port (what is routed there is dropped and counted as `tx_absent`), then a new port
/// (forwarding again, with the device's new MAC once the tables have it), and the port
/// counts of every port it had add up.
#[test]
fn a_device_replaced_under_the_worker_keeps_its_counts() {
    let rig = Rig::new();
    let port_tx = |c: &Control| c.shared.port_totals().0[1];
    let wait = |what: &str, f: &dyn Fn() -> bool| {
        let deadline = Instant::now() + Duration::from_secs(2);
        while !f() {
            assert!(Instant::now() < deadline, "timed out: {what}");
            std::thread::sleep(Duration::from_millis(5));
        }
    };
    rig.wires[0].to_port.send(&frame("fc00:9::5", 1)).unwrap();
    assert!(rig.recv(1).is_some());
    wait("one frame out", &|| port_tx(&rig.control.lock().unwrap()).tx == 1);

    let shared = rig.control.lock().unwrap().shared.clone();
    shared.links.post(1, vec![Box::new(super::absent::AbsentPort::new("eth1"))]);
    // Frames sent before the worker took the new port may still leave: wait until one
    // is counted as dropped.
    for p in 2..40 {
        rig.wires[0].to_port.send(&frame("fc00:9::5", p)).unwrap();
        std::thread::sleep(Duration::from_millis(5));
        if port_tx(&rig.control.lock().unwrap()).tx_absent > 0 {
            break;
        }
    }
    assert!(port_tx(&rig.control.lock().unwrap()).tx_absent > 0);
    while rig.recv(1).is_some() {}

    // Back, as a new port with a new MAC.
    let (p1, w1) = SocketPairPort::pair("eth1", 1).unwrap();
    w1.from_port.set_read_timeout(Some(Duration::from_millis(500))).unwrap();
    {
        let mut c = rig.control.lock().unwrap();
        c.dev_macs.insert("eth1".into(), [2, 0, 0, 0, 0, 0xb1]);
        c.republish().unwrap();
    }
    shared.links.post(1, vec![Box::new(p1)]);
    let before = port_tx(&rig.control.lock().unwrap());
    rig.wires[0].to_port.send(&frame("fc00:9::5", 99)).unwrap();
    let mut b = vec![0u8; 2048];
    let n = w1.from_port.recv(&mut b).expect("forwarded on the new port");
    let mut want = forwarded("fc00:9::5", 99, [2, 0, 0, 0, 2, 2]);
    want[6..12].copy_from_slice(&[2, 0, 0, 0, 0, 0xb1]);
    assert_eq!(b[..n], want[..]);
    wait("the new port's frame counted on top", &|| {
        let now = port_tx(&rig.control.lock().unwrap());
        now.tx == before.tx + 1 && now.tx_absent == before.tx_absent
    });
}

/// An End.BPF program's events under a worker: tagged with the worker's index (its
/// CPU, which the program also reads), read through `sr6 ctl bpf events` as the
/// client polls them.
#[test]
fn end_bpf_events_carry_the_workers_index() {
    let dir = crate::test_support::scratch_dir("live-events");
    let obj = crate::test_support::compile("events", &dir);
    let conf = format!(
        "{CONF}route add fc00:1::b/128 encap seg6local action End.BPF endpoint obj {} sec fields dev eth0\n",
        obj.display()
    );
    // Worker 1 where the perf event array has a slot for it (one per CPU).
    let id = usize::from(sr6_bpf::events::default_slots() > 1);
    let rig = Rig::worker(&conf, id);
    let a = |s: &str| s.parse::<std::net::Ipv6Addr>().unwrap().octets();
    let mut f = vec![2, 0, 0, 0, 0, 0xa0, 2, 0, 0, 0, 1, 2, 0x86, 0xdd];
    f.extend_from_slice(&[0x60, 0, 0, 0, 0, 40, 43, 64]);
    f.extend_from_slice(&a("fc00:1::2"));
    f.extend_from_slice(&a("fc00:1::b"));
    f.extend_from_slice(&[59, 4, 4, 1, 1, 0, 0x12, 0x34]);
    f.extend_from_slice(&a("fc00:9::1"));
    f.extend_from_slice(&a("fc00:1::b"));
    rig.wires[0].to_port.send(&f).unwrap();
    assert!(rig.recv(1).is_some(), "forwarded to fc00:9::1");
    let out = rig.ctl("bpf events name events max 10").unwrap();
    let recs: Vec<serde_json::Value> = serde_json::from_str(&out).unwrap();
    assert_eq!(recs.len(), 1, "{out}");
    assert_eq!((recs[0]["cpu"].as_u64(), recs[0]["index"].as_u64()), (Some(id as u64), Some(id as u64)));
    let data: Vec<u8> = serde_json::from_value(recs[0]["data"].clone()).unwrap();
    assert_eq!(&data[..16], &a("fc00:9::1"));
    assert_eq!(&data[20..28], &[0x12, 0x34, 0, 64, id as u8, 0, 0, 0], "Tag, SL, hop limit, CPU");
    assert_eq!(rig.ctl("bpf events name events").unwrap(), "[]", "drained");
    let _ = std::fs::remove_dir_all(&dir);
}
