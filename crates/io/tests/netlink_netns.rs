//! `sr6_io::netlink` against the kernel, with `ip` as the oracle.
//!
//! Each test makes two network namespaces, A and B, joined by a veth pair (A's `sr6a`
//! 2001:db8:5e6::1/64 and 192.0.2.1/24, B's `sr6b` ::2 and .2), runs the code under
//! test in a thread that has entered A, and compares with what `ip` reports. Nothing
//! leaves the two namespaces, which a guard removes even when a test fails. Needs
//! root (CAP_NET_ADMIN + CAP_SYS_ADMIN): the tests are `#[ignore]`d; run them with
//! `--include-ignored`.

use std::collections::BTreeSet;
use std::io::Write;
use std::net::IpAddr;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use sr6_io::netlink::{
    self, nud, KernelError, LinkInfo, NeighEvent, NeighMonitor, Neighbour, RouteEvent, RouteMonitor,
};
use sr6_testnet::{ip, Netns};

const DEV_A: &str = "sr6a";
const DEV_B: &str = "sr6b";
const A6: &str = "2001:db8:5e6::1";
const B6: &str = "2001:db8:5e6::2";
const A4: &str = "192.0.2.1";
const B4: &str = "192.0.2.2";

fn ip_json(args: &[&str]) -> Value {
    let mut all = vec!["-j"];
    all.extend_from_slice(args);
    serde_json::from_str(&ip(&all)).expect("ip -j prints JSON")
}

fn parse_mac(s: &str) -> [u8; 6] {
    let v: Vec<u8> = s.split(':').map(|b| u8::from_str_radix(b, 16).unwrap()).collect();
    v.try_into().unwrap_or_else(|v| panic!("not a MAC: {s} ({v:?})"))
}

/// Two namespaces joined by a veth pair; removed on drop.
struct Net {
    a: Netns,
    b: Netns,
}

impl Net {
    /// Sets up the namespaces (panics without root).
    fn new() -> Net {
        let ns = Net { a: Netns::new("nl-a"), b: Netns::new("nl-b") };
        let (a, b) = (&ns.a, &ns.b);
        a.add_veth(DEV_A, b, DEV_B, None);
        a.ip(&["addr", "add", &format!("{A6}/64"), "dev", DEV_A, "nodad"]);
        b.ip(&["addr", "add", &format!("{B6}/64"), "dev", DEV_B, "nodad"]);
        a.ip(&["addr", "add", &format!("{A4}/24"), "dev", DEV_A]);
        b.ip(&["addr", "add", &format!("{B4}/24"), "dev", DEV_B]);
        a.up(DEV_A);
        b.up(DEV_B);
        ns
    }

    /// Runs `f` in a thread that has entered namespace A, and returns its result (or
    /// resumes its panic). Netlink sockets opened by `f` belong to A.
    fn in_a<T: Send>(&self, f: impl FnOnce() -> T + Send) -> T {
        self.a.run(f)
    }

    /// The MAC of `dev` in namespace `ns`, as `ip -j link show` reports it.
    fn mac(ns: &Netns, dev: &str) -> [u8; 6] {
        let j = ip_json(&["-n", ns.name(), "link", "show", "dev", dev]);
        parse_mac(j[0]["address"].as_str().expect("an address"))
    }
}

/// `NUD_FAILED` (`<linux/neighbour.h>`).
const NUD_FAILED: u16 = 0x20;

/// Reads `mon` until `done` has seen what it waits for (it returns true), for at most
/// 10 s; returns every event seen.
fn wait_events(mon: &mut NeighMonitor, what: &str, mut done: impl FnMut(&NeighEvent) -> bool) -> Vec<NeighEvent> {
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut seen = Vec::new();
    while Instant::now() < deadline {
        for e in mon.recv(Duration::from_millis(200)).expect("monitor recv") {
            let hit = done(&e);
            seen.push(e);
            if hit {
                return seen;
            }
        }
    }
    panic!("{what}: not seen within 10 s; events: {seen:?}");
}

#[test]
#[ignore = "needs root and network namespaces"]
fn links_match_ip() {
    let ns = Net::new();
    let (sr6a, lo, all, missing, too_long) = ns.in_a(|| {
        (
            netlink::link_by_name(DEV_A).unwrap(),
            netlink::link_by_name("lo").unwrap(),
            netlink::links().unwrap(),
            netlink::link_by_name("nosuch0").unwrap_err(),
            netlink::link_by_name("a-name-longer-than-15").unwrap_err(),
        )
    });

    let j = &ip_json(&["-n", ns.a.name(), "link", "show", "dev", DEV_A])[0];
    let flags: Vec<&str> = j["flags"].as_array().unwrap().iter().map(|f| f.as_str().unwrap()).collect();
    assert_eq!(
        sr6a,
        LinkInfo {
            ifindex: j["ifindex"].as_u64().unwrap() as u32,
            name: DEV_A.into(),
            mac: parse_mac(j["address"].as_str().unwrap()),
            up: flags.contains(&"UP"),
            carrier: flags.contains(&"LOWER_UP"),
            mtu: j["mtu"].as_u64().unwrap() as u32,
            link_type: netlink::ARPHRD_ETHER,
        }
    );
    assert!(sr6a.up && sr6a.is_ethernet());
    // Loopback: down in a new namespace, an all-zero address, ARPHRD_LOOPBACK.
    assert_eq!((lo.name.as_str(), lo.up, lo.mac, lo.link_type), ("lo", false, [0; 6], 772));

    let want: BTreeSet<(u32, String)> = ip_json(&["-n", ns.a.name(), "link", "show"])
        .as_array()
        .unwrap()
        .iter()
        .map(|l| (l["ifindex"].as_u64().unwrap() as u32, l["ifname"].as_str().unwrap().to_string()))
        .collect();
    let got: BTreeSet<(u32, String)> = all.iter().map(|l| (l.ifindex, l.name.clone())).collect();
    assert_eq!(got, want);
    assert!(all.contains(&sr6a) && all.contains(&lo));

    for e in [missing, too_long] {
        assert_eq!(e.kind(), std::io::ErrorKind::NotFound, "{e}");
        assert!(e.to_string().starts_with("no such device "), "{e}");
    }
}

#[test]
#[ignore = "needs root and network namespaces"]
fn static_neighbours_are_dumped_and_left_alone() {
    let ns = Net::new();
    ip(&["-n", ns.a.name(), "neigh", "add", "2001:db8:5e6::99", "lladdr", "02:00:5e:00:00:99", "dev", DEV_A]);
    ip(&["-n", ns.a.name(), "neigh", "add", "192.0.2.99", "lladdr", "02:00:5e:00:00:98", "dev", DEV_A]);
    let (before, after, one, none) = ns.in_a(|| {
        let mut rtnl = netlink::Rtnl::open().unwrap();
        let before = rtnl.neighbours().unwrap();
        let ifindex = rtnl.link_by_name(DEV_A).unwrap().ifindex;
        let one = rtnl.neighbour(ifindex, "192.0.2.99".parse().unwrap()).unwrap();
        let none = rtnl.neighbour(ifindex, "192.0.2.98".parse().unwrap()).unwrap();
        // NTF_USE on a static entry must not change it.
        rtnl.request_resolution(ifindex, "2001:db8:5e6::99".parse().unwrap()).unwrap();
        rtnl.request_resolution(ifindex, "192.0.2.99".parse().unwrap()).unwrap();
        (before, rtnl.neighbours().unwrap(), one, none)
    });
    let ifindex = netlink_ifindex(&ns);
    for (addr, mac) in [("2001:db8:5e6::99", [2, 0, 0x5e, 0, 0, 0x99]), ("192.0.2.99", [2, 0, 0x5e, 0, 0, 0x98])] {
        let want = Neighbour { ifindex, addr: addr.parse().unwrap(), mac: Some(mac), state: nud::PERMANENT, flags: 0 };
        assert!(want.usable());
        assert!(before.contains(&want), "{want:?} not in {before:?}");
        assert!(after.contains(&want), "{want:?} changed: {after:?}");
        if addr == "192.0.2.99" {
            assert_eq!(one.as_ref(), Some(&want));
        }
    }
    assert_eq!(none, None);
    // Every entry `ip neigh show` lists (it hides NONE entries) is in the dump.
    for e in ip_json(&["-n", ns.a.name(), "neigh", "show"]).as_array().unwrap() {
        let addr: IpAddr = e["dst"].as_str().unwrap().parse().unwrap();
        let n = after.iter().find(|n| n.addr == addr).unwrap_or_else(|| panic!("{e} not dumped"));
        assert_eq!(n.mac, e["lladdr"].as_str().map(parse_mac), "{e}");
    }
}

/// A's `sr6a` index, from `ip`.
fn netlink_ifindex(ns: &Net) -> u32 {
    ip_json(&["-n", ns.a.name(), "link", "show", "dev", DEV_A])[0]["ifindex"].as_u64().unwrap() as u32
}

#[test]
#[ignore = "needs root and network namespaces"]
fn resolution_events_and_deletion() {
    let ns = Net::new();
    let peer_mac = Net::mac(&ns.b, DEV_B);
    let ifindex = netlink_ifindex(&ns);
    let b6: IpAddr = B6.parse().unwrap();
    let b4: IpAddr = B4.parse().unwrap();
    let a = ns.a.name().to_string();
    let (events, dumped, deletions) = ns.in_a(move || {
        let mut mon = NeighMonitor::open().unwrap();
        assert!(mon.fd() >= 0);
        netlink::request_resolution(ifindex, b6).unwrap();
        netlink::request_resolution(ifindex, b4).unwrap();
        let mut pending: BTreeSet<IpAddr> = [b6, b4].into();
        let events = wait_events(&mut mon, "both peers resolved", |e| {
            if let NeighEvent::New(n) = e {
                if n.ifindex == ifindex && n.usable() && n.mac == Some(peer_mac) {
                    pending.remove(&n.addr);
                } else if n.ifindex == ifindex && n.state == NUD_FAILED && pending.contains(&n.addr) {
                    // Rarely (once in many CI runs) all three solicitations of a fresh
                    // veth go unanswered; ask again, as a router would on the next packet.
                    netlink::request_resolution(ifindex, n.addr).unwrap();
                }
            }
            pending.is_empty()
        });
        let dumped = netlink::neighbours().unwrap();
        let mut deletions = Vec::new();
        for addr in [b6, b4] {
            ip(&["-n", &a, "neigh", "del", &addr.to_string(), "dev", DEV_A]);
            deletions.extend(wait_events(
                &mut mon,
                "a Del event",
                |e| matches!(e, NeighEvent::Del(n) if n.addr == addr && n.ifindex == ifindex),
            ));
        }
        (events, dumped, deletions)
    });
    assert!(!events.contains(&NeighEvent::Overrun));
    for addr in [b6, b4] {
        let n = dumped.iter().find(|n| n.addr == addr).unwrap_or_else(|| panic!("{addr} not in {dumped:?}"));
        assert!(n.usable() && n.mac == Some(peer_mac) && n.ifindex == ifindex, "{n:?}");
    }
    // And `ip` agrees with what was dumped.
    let shown = ip_json(&["-n", ns.a.name(), "neigh", "show", "dev", DEV_A]);
    assert!(shown.as_array().unwrap().iter().all(|e| e["dst"] != B6 && e["dst"] != B4), "{shown}");
    assert!(deletions.iter().any(|e| matches!(e, NeighEvent::Del(n) if n.addr == b6)));
}

#[test]
#[ignore = "needs root and network namespaces"]
fn unanswered_resolution_fails() {
    let ns = Net::new();
    let ifindex = netlink_ifindex(&ns);
    let nobody: IpAddr = "2001:db8:5e6::77".parse().unwrap();
    let events = ns.in_a(move || {
        let mut mon = NeighMonitor::open().unwrap();
        netlink::request_resolution(ifindex, nobody).unwrap();
        // Three solicitations a second apart, then FAILED.
        wait_events(
            &mut mon,
            "FAILED",
            |e| matches!(e, NeighEvent::New(n) if n.addr == nobody && n.state == nud::FAILED),
        )
    });
    let mine: Vec<&Neighbour> = events
        .iter()
        .filter_map(|e| match e {
            NeighEvent::New(n) if n.addr == nobody => Some(n),
            _ => None,
        })
        .collect();
    // (The kernel does not announce the entry while it is INCOMPLETE: only FAILED.)
    assert_eq!(mine.last().map(|n| n.state), Some(nud::FAILED), "{events:?}");
    assert!(mine.iter().all(|n| !n.usable() && n.mac.is_none()), "{events:?}");
}

#[test]
#[ignore = "needs root and network namespaces"]
fn resolution_errors_come_from_the_kernel() {
    let ns = Net::new();
    let (bad_index, no_index) = ns.in_a(|| {
        let addr: IpAddr = B6.parse().unwrap();
        (netlink::request_resolution(999_999, addr).unwrap_err(), netlink::request_resolution(0, addr).unwrap_err())
    });
    let k = bad_index.get_ref().and_then(|e| e.downcast_ref::<KernelError>()).expect("a KernelError");
    assert_eq!(k.errno, libc::ENODEV, "{bad_index}");
    assert!(bad_index.to_string().contains("resolve 2001:db8:5e6::2 on ifindex 999999"), "{bad_index}");
    let k = no_index.get_ref().and_then(|e| e.downcast_ref::<KernelError>()).expect("a KernelError");
    assert_eq!(k.errno, libc::EINVAL, "{no_index}");
    eprintln!("kernel errors: {bad_index} / {no_index}");
}

#[test]
#[ignore = "needs root and network namespaces"]
fn overrun_is_reported_and_the_monitor_goes_on() {
    let ns = Net::new();
    let a = ns.a.name().to_string();
    let (overrun, after) = ns.in_a(move || {
        let mut mon = NeighMonitor::open().unwrap();
        // 10,000 events that nobody reads meanwhile: more than the socket can queue.
        let mut batch = String::new();
        for i in 0..5000 {
            let addr = format!("2001:db8:5e6::1:{i:x}");
            batch.push_str(&format!("neigh add {addr} lladdr 02:00:00:00:00:01 dev {DEV_A}\n"));
            batch.push_str(&format!("neigh del {addr} dev {DEV_A}\n"));
        }
        let mut child = Command::new("ip").args(["-n", &a, "-batch", "-"]).stdin(Stdio::piped()).spawn().unwrap();
        child.stdin.take().unwrap().write_all(batch.as_bytes()).unwrap();
        assert!(child.wait().unwrap().success());
        let mut overrun = false;
        loop {
            let events = mon.recv(Duration::from_millis(200)).unwrap();
            if events.is_empty() {
                break;
            }
            overrun |= events.contains(&NeighEvent::Overrun);
        }
        // Still subscribed: a new entry is reported.
        ip(&["-n", &a, "neigh", "add", "2001:db8:5e6::7777", "lladdr", "02:00:00:00:00:77", "dev", DEV_A]);
        let after = wait_events(
            &mut mon,
            "an event after the overrun",
            |e| matches!(e, NeighEvent::New(n) if n.addr.to_string() == "2001:db8:5e6::7777"),
        );
        (overrun, after)
    });
    assert!(overrun, "10,000 unread events did not overrun the monitor");
    assert!(!after.is_empty());
}

/// Routes of every kind sr6 mirrors, installed by `ip` in namespace A, come back from
/// the kernel's dump (`netlink::routes`) as the very lines that installed them, and
/// those lines are what sr6's configuration reads. Each line is written the way
/// `KernelRoute::to_line` orders its words, with what the kernel adds (`metric 1024`
/// on IPv6 routes).
#[test]
#[ignore = "needs root and network namespaces"]
fn routes_come_back_as_their_lines() {
    let ns = Net::new();
    let lines = [
        format!("ip -6 route add fc00:1::/48 via {B6} dev {DEV_A} metric 1024"),
        format!("ip -6 route add fc00:2::/64 via {B6} dev {DEV_A} table 100 metric 1024"),
        format!("ip route add 20.1.0.0/16 via {B4} dev {DEV_A}"),
        format!(
            "ip route add 20.2.0.0/16 nexthop via {B4} dev {DEV_A} weight 1 nexthop via 192.0.2.3 dev {DEV_A} weight 3"
        ),
        "ip -6 route add blackhole fc00:3::/64 metric 1024".to_string(),
        "ip -6 route add unreachable fc00:4::/64 metric 1024".to_string(),
        format!("ip -6 route add fc00:42::/64 encap seg6 mode encap segs fc00:2::1,fc00:3::1 dev {DEV_A} metric 1024"),
        format!("ip -6 route add fc00:43::/64 encap seg6 mode inline segs fc00:2::1 dev {DEV_A} metric 1024"),
        format!(
            "ip -6 route add fc00:44::/64 encap seg6 mode encap.red segs fc00:2::1,fc00:3::1 dev {DEV_A} metric 1024"
        ),
        format!("ip -6 route add fc00:1::e/128 encap seg6local action End count dev {DEV_A} metric 1024"),
        format!(
            "ip -6 route add fc00:0:e::/48 encap seg6local action End flavors next-csid lblen 32 nflen 16 dev {DEV_A} \
             metric 1024"
        ),
        format!("ip -6 route add fc00:1::e7/128 encap seg6local action End.T table 100 dev {DEV_A} metric 1024"),
        format!("ip -6 route add fc00:1::e8/128 encap seg6local action End.X nh6 {B6} dev {DEV_A} metric 1024"),
        format!("ip -6 route add fc00:1::d6/128 encap seg6local action End.DX6 nh6 {B6} dev {DEV_A} metric 1024"),
        format!("ip -6 route add fc00:1::d4/128 encap seg6local action End.DX4 nh4 {B4} dev {DEV_A} metric 1024"),
        format!("ip -6 route add fc00:1::dd/128 encap seg6local action End.DT6 table 100 dev {DEV_A} metric 1024"),
        format!(
            "ip -6 route add fc00:1::b6/128 encap seg6local action End.B6.Encaps srh segs fc00:2::1,fc00:3::1 \
             dev {DEV_A} metric 1024"
        ),
    ];
    for l in &lines {
        let words: Vec<&str> = l.split_whitespace().skip(1).collect();
        ns.a.ip(&words);
    }
    let (routes, links) = ns.in_a(|| (netlink::routes().unwrap(), netlink::links().unwrap()));
    let name = |i: u32| links.iter().find(|l| l.ifindex == i).map(|l| l.name.clone());
    let got: Vec<String> =
        routes.iter().filter_map(|r| r.as_ref().ok()).filter_map(|r| r.to_line(&name).ok()).collect();
    for l in &lines {
        let l = l.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(got.contains(&l), "{l}\nnot among what the dump gave:\n{}", got.join("\n"));
    }
    // What sr6 reads: every line the dump gave (the kernel's own routes too: connected
    // prefixes, local addresses), each on its own.
    for l in &got {
        if let Err(e) = sr6_config::parse_str(l, "dump") {
            panic!("{l}: {e}");
        }
    }
    // The kernel's local, multicast and broadcast routes are no lines, and say why.
    let refused: Vec<String> =
        routes.iter().filter_map(|r| r.as_ref().ok()).filter_map(|r| r.to_line(&name).err()).collect();
    assert!(refused.iter().all(|e| e.contains("of type")), "{refused:?}");
    assert!(routes.iter().all(Result::is_ok), "{routes:?}");
}

/// The route monitor sees `ip` add, replace and delete a route in namespace A, each as
/// the whole route, and a seg6 route as its line.
#[test]
#[ignore = "needs root and network namespaces"]
fn route_events_follow_ip() {
    let ns = Net::new();
    let name = ns.a.name().to_string();
    let (events, links) = ns.in_a(|| {
        let mut mon = RouteMonitor::open().expect("monitor");
        let ip = |args: &[&str]| {
            let ok = Command::new("ip").args(["-n", &name]).args(args).status().map(|s| s.success());
            assert_eq!(ok.ok(), Some(true), "ip {args:?}");
        };
        ip(&["-6", "route", "add", "fc00:77::/64", "via", B6, "dev", DEV_A]);
        ip(&[
            "-6",
            "route",
            "replace",
            "fc00:77::/64",
            "encap",
            "seg6",
            "mode",
            "encap",
            "segs",
            "fc00:2::1",
            "dev",
            DEV_A,
        ]);
        ip(&["route", "add", "20.7.0.0/16", "via", B4, "dev", DEV_A]);
        ip(&["-6", "route", "del", "fc00:77::/64"]);
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut seen = Vec::new();
        while seen.len() < 4 && Instant::now() < deadline {
            seen.extend(mon.recv(Duration::from_millis(200)).expect("recv"));
        }
        (seen, netlink::links().unwrap())
    });
    let name = |i: u32| links.iter().find(|l| l.ifindex == i).map(|l| l.name.clone());
    let line = |r: &netlink::KernelRoute| r.to_line(&name).unwrap();
    let got: Vec<String> = events
        .iter()
        .map(|e| match e {
            RouteEvent::New(r) => format!("new {}", line(r)),
            RouteEvent::Del(r) => format!("del {}", line(r)),
            e => format!("{e:?}"),
        })
        .collect();
    assert_eq!(
        got,
        [
            format!("new ip -6 route add fc00:77::/64 via {B6} dev {DEV_A} metric 1024"),
            format!("new ip -6 route add fc00:77::/64 encap seg6 mode encap segs fc00:2::1 dev {DEV_A} metric 1024"),
            format!("new ip route add 20.7.0.0/16 via {B4} dev {DEV_A}"),
            format!("del ip -6 route add fc00:77::/64 encap seg6 mode encap segs fc00:2::1 dev {DEV_A} metric 1024"),
        ]
    );
}

/// Nexthop objects installed by `ip` in namespace A come back from the kernel's dump
/// (`netlink::nexthops`) as the lines that made them, routes through them as `nhid`
/// routes, and sr6's configuration reads them all, in that order.
#[test]
#[ignore = "needs root and network namespaces"]
fn nexthops_come_back_as_their_lines() {
    let ns = Net::new();
    let lines = [
        format!("ip -6 nexthop add id 7 via {B6} dev {DEV_A}"),
        format!("ip nexthop add id 8 via {B4} dev {DEV_A}"),
        format!("ip -6 nexthop add id 9 via 2001:db8:5e6::3 dev {DEV_A}"),
        "ip -6 nexthop add id 10 blackhole".to_string(),
        "ip nexthop add id 11 group 7/9,3".to_string(),
    ];
    // (A blackhole nexthop is the loopback device's.)
    ns.a.up("lo");
    for l in &lines {
        let words: Vec<&str> = l.split_whitespace().skip(1).collect();
        ns.a.ip(&words);
    }
    ns.a.ip(&["-6", "route", "add", "fc00:99::/64", "nhid", "11"]);
    let (nexthops, routes, links) =
        ns.in_a(|| (netlink::nexthops().unwrap(), netlink::routes().unwrap(), netlink::links().unwrap()));
    let name = |i: u32| links.iter().find(|l| l.ifindex == i).map(|l| l.name.clone());
    let got: Vec<String> = nexthops.iter().map(|n| n.as_ref().unwrap().to_line(&name).unwrap()).collect();
    let mut want = lines.to_vec();
    want.sort();
    let mut sorted = got.clone();
    sorted.sort();
    assert_eq!(sorted, want);
    let route = routes
        .iter()
        .filter_map(|r| r.as_ref().ok())
        .find(|r| r.dst.to_string() == "fc00:99::")
        .expect("the route through the group");
    let route_line = route.to_line(&name).unwrap();
    assert_eq!(route_line, "ip -6 route add fc00:99::/64 nhid 11 metric 1024");
    let all = format!("{}\n{route_line}", lines.join("\n"));
    if let Err(e) = sr6_config::parse_str(&all, "dump") {
        panic!("{e}");
    }
}

/// The address dump (`netlink::addresses`) gives what `ip -j addr show` lists in
/// namespace A, every one; the global ones write themselves as the `ip addr add` lines
/// that made them, which sr6's configuration reads; the route monitor sees an address
/// added and removed.
#[test]
#[ignore = "needs root and network namespaces"]
fn addresses_match_ip_and_follow_it() {
    let ns = Net::new();
    ns.a.ip(&["addr", "add", "2001:db8:77::1/56", "dev", DEV_A, "nodad"]);
    ns.a.ip(&["addr", "add", "198.51.100.7/25", "dev", DEV_A]);
    let name = ns.a.name().to_string();
    let (dump, links, events) = ns.in_a(|| {
        let dump = netlink::addresses().unwrap();
        let links = netlink::links().unwrap();
        let mut mon = RouteMonitor::open().expect("monitor");
        let ip = |args: &[&str]| {
            let ok = Command::new("ip").args(["-n", &name]).args(args).status().map(|s| s.success());
            assert_eq!(ok.ok(), Some(true), "ip {args:?}");
        };
        ip(&["-6", "addr", "add", "2001:db8:78::1/64", "dev", DEV_A, "nodad"]);
        ip(&["-6", "addr", "del", "2001:db8:78::1/64", "dev", DEV_A]);
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut seen = Vec::new();
        while Instant::now() < deadline
            && !seen.iter().any(|e| matches!(e, RouteEvent::DelAddr(a) if a.addr.to_string() == "2001:db8:78::1"))
        {
            seen.extend(mon.recv(Duration::from_millis(200)).expect("recv"));
        }
        (dump, links, seen)
    });
    assert!(dump.iter().all(Result::is_ok), "{dump:?}");
    let got: BTreeSet<(u32, String, u8, u8)> = dump
        .iter()
        .filter_map(|a| a.as_ref().ok())
        .map(|a| (a.ifindex, a.addr.to_string(), a.prefix_len, a.scope))
        .collect();
    // The oracle: every address `ip` lists, with its device, length and scope.
    let scope = |s: &str| match s {
        "global" => 0,
        "link" => 253,
        "host" => 254,
        _ => 255,
    };
    let mut want = BTreeSet::new();
    for l in ip_json(&["-n", ns.a.name(), "addr", "show"]).as_array().unwrap() {
        for a in l["addr_info"].as_array().unwrap() {
            want.insert((
                l["ifindex"].as_u64().unwrap() as u32,
                a["local"].as_str().unwrap().to_string(),
                a["prefixlen"].as_u64().unwrap() as u8,
                scope(a["scope"].as_str().unwrap()),
            ));
        }
    }
    assert_eq!(got, want);
    let name = |i: u32| links.iter().find(|l| l.ifindex == i).map(|l| l.name.clone());
    let lines: BTreeSet<String> = dump.iter().filter_map(|a| a.as_ref().ok()?.to_line(&name).ok()).collect();
    let expect: BTreeSet<String> = [
        format!("ip -6 addr add {A6}/64 dev {DEV_A}"),
        format!("ip -6 addr add 2001:db8:77::1/56 dev {DEV_A}"),
        format!("ip addr add {A4}/24 dev {DEV_A}"),
        format!("ip addr add 198.51.100.7/25 dev {DEV_A}"),
    ]
    .into();
    assert_eq!(lines, expect, "the global addresses, and only they, are lines");
    for l in &lines {
        if let Err(e) = sr6_config::parse_str(l, "dump") {
            panic!("{l}: {e}");
        }
    }
    let addr_events: Vec<String> = events
        .iter()
        .filter_map(|e| match e {
            RouteEvent::NewAddr(a) => Some(format!("new {}/{}", a.addr, a.prefix_len)),
            RouteEvent::DelAddr(a) => Some(format!("del {}/{}", a.addr, a.prefix_len)),
            _ => None,
        })
        .collect();
    assert_eq!(addr_events, ["new 2001:db8:78::1/64", "del 2001:db8:78::1/64"]);
}
