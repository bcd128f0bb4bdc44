//! Route and neighbour changes applied in place ([`Tables::apply_routes`],
//! [`Tables::apply_neighbours`]) against the tables built from the changed
//! configuration ([`Tables::build`], the oracle): after every change, the same route
//! (with its adjacency's Ethernet header), the same fast-path hop and word for every
//! address tried, in the main table and a numbered one, IPv6 and IPv4, and the same
//! resolution of each policy's first segment. Changes the in-place path does not take are refused, leaving the tables as
//! they were.

use std::net::IpAddr;

use proptest::prelude::*;
use sr6_core::spec::{RouteSpec, RouterSpec};
use sr6_core::tables::{NeedsBuild, NeighChange, NextHop, Route, RouteChange, Tables};

const BASE: &str = "\
ip link set dev eth0 address 02:00:00:00:00:01
ip link set dev eth1 address 02:00:00:00:00:02
ip -6 addr add fc00:1::1/64 dev eth0
ip -6 addr add fc00:2::1/64 dev eth1
ip addr add 10.1.0.1/24 dev eth0
ip -6 neigh add fc00:1::2 lladdr 02:00:00:00:01:02 dev eth0
ip -6 neigh add fc00:2::2 lladdr 02:00:00:00:02:02 dev eth1
ip -6 neigh add fc00:2::3 lladdr 02:00:00:00:02:03 dev eth1
ip neigh add 10.1.0.2 lladdr 02:00:00:00:01:12 dev eth0
ip neigh add 10.1.0.3 lladdr 02:00:00:00:01:13 dev eth0
ip sr tunsrc set fc00:1::1
ip sr hmac set 7 sha256 s3cr3t
ip -6 route add fc00:aa::/48 encap seg6 mode encap segs fc00:77:1::1,fc00:88::1 dev eth0
ip -6 route add fc00:77::/32 via fc00:1::2 dev eth0
ip -6 route add fc00:bb::/48 via fc00:2::2 dev eth1 table 100
ip route add 10.200.0.0/16 via 10.1.0.2 dev eth0
ip -6 route add fc00:2::/64 via fc00:1::2 dev eth0
ip nexthop add id 61 via fc00:2::2 dev eth1
ip nexthop add id 62 via fc00:1::2 dev eth0
ip nexthop add id 63 group 61/62,3
ip nexthop add id 41 via 10.1.0.3 dev eth0
ip -6 route add fc00:dd::/64 nhid 63
ip -6 route add fc00:de::/64 nhid 61
ip route add 10.202.0.0/16 nhid 41
ip -6 route add fc00:b6::1/128 encap seg6local action End.B6.Encaps srh segs fc00:88::1 dev eth0
ip -6 route add fc00:e::1/128 encap seg6local action End dev eth0
";

/// The prefixes the changes pick from: nested, overlapping, one covering the policy's
/// first segment (fc00:77:1::1, a host route too), host routes, in the main table and
/// table 100.
const PREFIXES6: &[&str] = &[
    "fc00:77::/32",
    "fc00:77::/40",
    "fc00:77:1::/48",
    "fc00:77:1::/64",
    "fc00::/16",
    "fc00:bb::/48",
    "fc00:bb:1::/56",
    "::/0",
    "fc00:bb:1:1::/127",
    "fc00:77:1::1/128",
    "fc00:bb:1::5/128",
];
const PREFIXES4: &[&str] =
    &["10.200.0.0/16", "10.200.1.0/24", "10.0.0.0/8", "0.0.0.0/0", "10.200.1.128/25", "10.200.1.5/32"];
/// Nexthop objects (IPv6, IPv4) changes may name: used by the routes of BASE, and one
/// (62) that no route uses at first.
const NHIDS6: &[u32] = &[61, 63, 62];
const NHIDS4: &[u32] = &[41];
/// Gateways: with an adjacency from the start, resolved without one (a new adjacency
/// takes the neighbour's MAC), unresolved; without a device (on a connected network).
const VIAS6: &[&str] =
    &["fc00:1::2 dev eth0", "fc00:2::2 dev eth1", "fc00:2::3 dev eth1", "fc00:1::7 dev eth0", "fc00:2::3", "fc00:1::8"];
const VIAS4: &[&str] = &["10.1.0.2 dev eth0", "10.1.0.3 dev eth0", "10.1.0.9 dev eth0", "10.1.0.3"];
/// SID actions the changes pick from (`dev eth0` added), every one built in place: the
/// binding SIDs and the GTP-U translations with their policies, End.Limit with its
/// buckets, the SR proxies with their devices (two of End.AS and End.AD on eth0 break
/// the proxies' `iif` rule: a build refuses them, and so does the in-place path). A
/// NEXT-C-SID End only on the /48s. (A next hop behind a gateway:
/// `refused_changes_change_nothing`.)
const SIDS: &[&str] = &[
    "End",
    "End.X nh6 fc00:1::2",
    "End.T table 100",
    "End.DT6 table 100",
    "End.DX6 nh6 fc00:2::3",
    "End flavors next-csid lblen 32 nflen 16",
    "End.X nh6 fc00:1::7 flavors psp",
    "End.B6.Encaps srh segs fc00:88::1",
    "End.B6 srh segs fc00:77:1::1,fc00:2::9",
    "End.B6.Encaps.Red srh segs fc00:2::9,fc00:88::1",
    "End.MAP map 2001:db8::9",
    "End.Limit rate 80 burst 3000",
    "End.M.GTP4.E v4src-position 64",
    "End.M.GTP6.E src fc00:5::2",
    "End.M.GTP6.D sr-prefix fc00:4:1::/64 src fc00:5::1 segs fc00:77:1::1",
    "End.M.GTP6.Di src fc00:5::1 segs fc00:2::9",
    "End.AM nh6 fc00:2::2 oif eth1 iif eth1",
    "End.AS src fc00:1::1 segs fc00:2::9,fc00:88::1 nh6 fc00:2::2 oif eth1 iif eth0",
    "End.AD nh6 fc00:2::3 oif eth1 iif eth0",
];
/// The SID of an IPv4 prefix: H.M.GTP4.D (RFC 9433 §6.7), with its policy.
const SID4: &str = "H.M.GTP4.D sr-prefix fc00:4::/48 src-prefix fc00:6::/64 segs fc00:77:1::1";
/// The segment lists of the policies the changes make: one routed by fc00:77::/32's
/// routes (its first segment is resolved), one on a connected network, three segments.
const POLICY_SEGS: &[&str] = &["fc00:77:1::1,fc00:88::1", "fc00:2::9", "fc00:77:1::5,fc00:88::1,fc00:cc::1"];
/// The gateways' neighbour entries the changes set and remove.
const NEIGHS: &[(&str, &str)] =
    &[("fc00:1::2", "eth0"), ("fc00:2::2", "eth1"), ("fc00:2::3", "eth1"), ("fc00:1::7", "eth0"), ("10.1.0.9", "eth0")];

fn spec(text: &str) -> RouterSpec {
    sr6_config::parse_str(text, "t.conf").unwrap_or_else(|e| panic!("{e}"))
}

fn build(s: &RouterSpec) -> Tables {
    Tables::build(s).unwrap_or_else(|e| panic!("line {}: {}", e.line, e.message)).0
}

/// A route as comparable across tables: an adjacency or a SID by what it is, not its
/// index.
fn norm(t: &Tables, r: Option<Route>) -> String {
    match r {
        Some(Route::Forward(NextHop::Adj(i))) => adjacency(t, i),
        Some(Route::Sid(i)) => sid(t, i as usize),
        Some(Route::Policy(i)) => policy(t, i as usize),
        Some(Route::GtpEncap(i)) => format!("gtp {:?}", t.gtp_encaps.get(i as usize)),
        Some(Route::Multipath(i)) => match t.groups.get(i as usize) {
            Some(g) => {
                let hops: Vec<String> = g.hops.iter().map(|h| norm(t, Some(Route::Forward(*h)))).collect();
                format!("multipath {hops:?} weights {:?}", g.weights)
            }
            None => format!("no group {i}"),
        },
        other => format!("{other:?}"),
    }
}

fn adjacency(t: &Tables, i: u32) -> String {
    match t.adjacencies.get(i as usize) {
        Some(a) => format!("via {} dev {} eth {:?}", a.nh, a.dev, a.eth),
        None => format!("no adjacency {i}"),
    }
}

/// SID `i` of `t`: its prefix, action and state, its next hop by what it is.
fn sid(t: &Tables, i: usize) -> String {
    let Some(s) = t.sids.get(i) else { return format!("no SID {i}") };
    let nh = match s.state.nh {
        Some(NextHop::Adj(a)) => adjacency(t, a),
        other => format!("{other:?}"),
    };
    // An End.Limit SID's buckets (their layout and state); a proxy's own entry.
    let limiter = match s.behaviour.keyword {
        "End.Limit" => format!(" {:?}", t.limiters.get(s.state.limiter as usize)),
        "End.AS" | "End.AD" | "End.AM" => {
            format!(" proxy {:?}", t.proxies.get(s.state.proxy as usize).map(|p| p.sid as usize == i))
        }
        _ => String::new(),
    };
    format!("SID {:?} {} nh {nh} table {} oif {}{limiter}", s.prefix, s.action, s.state.table, s.state.oif)
}

/// Policy `i` of `t` by what it is: its mode, segments, SRH bytes, first segment,
/// source, and the fast path's resolution of its first segment.
fn policy(t: &Tables, i: usize) -> String {
    let Some(p) = t.policies.get(i) else { return format!("no policy {i}") };
    format!(
        "policy {:?} segs {:?} hmac {:?} srh {:?} first {:?} src {:?} out {:?}",
        p.mode,
        p.segs,
        p.hmac_key_id,
        p.srh,
        p.first,
        p.src,
        t.policy_out.get(i)
    )
}

/// A next hop as the fast path packs it in 24 bits (an adjacency, or on-link with bit 23).
fn packed_hop(t: &Tables, arg: u32) -> String {
    if arg & (1 << 23) == 0 {
        adjacency(t, arg)
    } else {
        format!("on-link {}", arg & 0xffff)
    }
}

/// A fast-path word (`FastSid::pack`): the kind, its argument (a next hop by what it
/// is, for the kinds that go to one: End.X, End.DX6, End.DX4, End.X with PSP or
/// NEXT-C-SID; a binding SID's policy by what it is) and the SID; kind None by itself.
fn word(t: &Tables, w: u64) -> String {
    let (i, kind, arg) = ((w >> 48) as usize, w as u8, (w as u32) >> 8);
    if kind == 0 {
        return format!("none {}", w == 0);
    }
    let arg = match kind {
        0x83 | 0x82 | 1 | 6 | 10 => packed_hop(t, arg),
        // End.B6.Encaps, End.B6: their policy.
        7 | 8 => policy(t, arg as usize),
        _ => arg.to_string(),
    };
    format!("kind {kind:#x} arg {arg} {}", sid(t, i))
}

/// An LPM hop: a NEXT-C-SID one's SID (its `dev`) and End.X's next hop (its last three
/// bytes) by what they are.
fn hop(t: &Tables, h: sr6_core::tables::Hop) -> String {
    if h.code >> 28 == 2 {
        return format!("to {}", policy(t, (h.code & ((1 << 28) - 1)) as usize));
    }
    if h.code < 3 << 28 {
        return format!("{h:?}");
    }
    let [.., a0, a1, a2] = h.eth;
    let arg = u32::from_le_bytes([a0, a1, a2, 0]);
    let arg = if h.code == 4 << 28 { packed_hop(t, arg) } else { arg.to_string() };
    format!("csid {:#x} {} eth {:?} arg {arg}", h.code, sid(t, usize::from(h.dev)), &h.eth[..9])
}

/// The addresses compared: under every prefix of the lists (first, last, a middle
/// one), and the policy's segments.
fn addresses() -> Vec<IpAddr> {
    let mut v: Vec<IpAddr> = Vec::new();
    for p in PREFIXES6 {
        let (a, l) = p.split_once('/').unwrap();
        let (a, l): (u128, u32) = (a.parse::<std::net::Ipv6Addr>().unwrap().into(), l.parse().unwrap());
        let host = u128::MAX.checked_shr(l).unwrap_or(0);
        for x in [a, a | host, a | (host / 3), a | ((host >> 1) + 1)] {
            v.push(IpAddr::V6(x.into()));
        }
    }
    for p in PREFIXES4 {
        let (a, l) = p.split_once('/').unwrap();
        let (a, l): (u32, u32) = (a.parse::<std::net::Ipv4Addr>().unwrap().into(), l.parse().unwrap());
        let host = u32::MAX.checked_shr(l).unwrap_or(0);
        for x in [a, a | host, a | (host / 3)] {
            v.push(IpAddr::V4(x.into()));
        }
    }
    v.extend(
        [
            "fc00:77:1::1",
            "fc00:88::1",
            "fc00:cc::1",
            "fc00:2::9",
            "2001:db8::1",
            "192.0.2.1",
            "fc00:b6::1",
            "fc00:e::1",
        ]
        .map(|a| a.parse::<IpAddr>().unwrap()),
    );
    v
}

/// Everything a packet to each address would be forwarded by, in both tables (a table
/// whose last route went is empty in place, and gone from a build: the same lookups).
fn view(t: &Tables) -> Vec<String> {
    let mut out = Vec::new();
    let empty = sr6_core::tables::Fib::empty();
    for fib in [0usize, 1] {
        let f = t.fibs.get(fib).unwrap_or(&empty);
        for a in addresses() {
            // The route, the LPM's hop and the fast path's word (what its one probe finds).
            let (r, h, w) = match a {
                IpAddr::V6(x) => (f.lookup6(&x.octets()), *f.lpm6.lookup_aux(u128::from(x)).1, f.words6.get(x.into())),
                IpAddr::V4(x) => (f.lookup4(&x.octets()), *f.lpm4.lookup_aux(u128::from(u32::from(x)) << 96).1, 0),
            };
            out.push(format!("table {fib} {a}: {} hop {} word {}", norm(t, r), hop(t, h), word(t, w)));
        }
    }
    // The proxies, each by its SID, and each device's inbound policy.
    let mut proxies: Vec<String> = t
        .proxies
        .iter()
        .map(|p| format!("proxy {:?} {:?} iif {} {}", p.kind, p.inner, p.iif, sid(t, p.sid as usize)))
        .collect();
    proxies.sort();
    out.extend(proxies);
    for d in 0..t.devices.len() {
        let pin = t.proxy_in.get(d).and_then(|p| p.as_ref());
        let mut of: Vec<String> = pin
            .iter()
            .flat_map(|p| &p.proxies)
            .map(|&k| match t.proxies.get(k as usize) {
                Some(p) => sid(t, p.sid as usize),
                None => format!("no proxy {k}"),
            })
            .collect();
        of.sort();
        out.push(format!("proxy_in {d} {of:?} fast path declines {}", t.fast_path_declines(d as u16)));
    }
    // Every policy in use (binding SIDs' too), by what it is; the fast path's bound.
    let mut live: Vec<String> = t.live_policies().map(|(i, _)| policy(t, i)).collect();
    live.sort();
    out.extend(live);
    out.push(format!("fast_max_len {}", t.fast_max_len()));
    out
}

/// The change a configuration line makes to `s`'s routes (applied to `s`); `None` if
/// the line changes nothing.
fn change(s: &mut RouterSpec, line: &str) -> Option<RouteChange> {
    let before = s.routes.clone();
    sr6_config::parse_line(line, "ctl", 1, s).unwrap_or_else(|e| panic!("{line}: {e}"));
    let key = |r: &RouteSpec| (r.table, r.prefix);
    if let Some(added) = s.routes.iter().find(|r| !before.contains(r)) {
        return Some(RouteChange::Add(added.clone()));
    }
    let gone = before.iter().find(|r| !s.routes.iter().any(|x| key(x) == key(r)))?;
    Some(RouteChange::Delete(gone.clone()))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn in_place_changes_match_a_build(
        ops in proptest::collection::vec((0u8..12, any::<usize>(), any::<usize>(), any::<bool>()), 1..25),
        tunsrc in any::<bool>(),
    ) {
        // Without `ip sr tunsrc`, a policy takes its route's device's address, or with
        // no device, that of the device the route to its first segment leaves by.
        let mut s = if tunsrc { spec(BASE) } else { spec(&BASE.replace("ip sr tunsrc set fc00:1::1\n", "")) };
        let mut t = build(&s);
        for (op, p, via, table100) in ops {
            // Neighbours learned, changed and forgotten: the gateways' (with an adjacency
            // or not, resolved or not), as the kernel reports them.
            if op == 4 || op == 5 {
                let (addr, dev) = NEIGHS[p % NEIGHS.len()];
                let addr: IpAddr = addr.parse().unwrap();
                let mac = (op == 4).then_some([2, 0, 0, 0, 0x77, via as u8]);
                s.neighs.retain(|n| !(n.dev == dev && n.addr == addr));
                if let Some(mac) = mac {
                    s.neighs.push(sr6_core::spec::NeighSpec { line: 0, dev: dev.into(), addr, mac });
                }
                let c = NeighChange { dev: dev.into(), addr, mac };
                prop_assert!(t.apply_neighbours(std::slice::from_ref(&c)).is_ok());
                prop_assert_eq!(view(&t), view(&build(&s)), "after {:?}", c);
                continue;
            }
            let v6 = p % 3 != 0;
            let n = via;
            let (prefix, via) = if v6 {
                (PREFIXES6[(p / 3) % PREFIXES6.len()], VIAS6[via % VIAS6.len()])
            } else {
                (PREFIXES4[(p / 3) % PREFIXES4.len()], VIAS4[via % VIAS4.len()])
            };
            let fam = if v6 { "-6 " } else { "" };
            let table = if table100 { " table 100" } else { "" };
            let line = match op {
                7 if v6 => {
                    let mut k = n % SIDS.len();
                    let plen: u32 = prefix.rsplit('/').next().and_then(|l| l.parse().ok()).unwrap_or(0);
                    let a = SIDS[k];
                    // NEXT-C-SID on the /48s; End.Limit's rate takes the bits after the
                    // prefix, at most 64; End.MAP's mapped SID must lie outside its
                    // prefix; the GTP-U encapsulations carry the session after it.
                    if (a.contains("next-csid") && !prefix.ends_with("/48"))
                        || (a.starts_with("End.Limit") && plen < 64)
                        || (a.starts_with("End.MAP") && plen == 0)
                        || (a.starts_with("End.M.GTP4.E") && plen > 56)
                        || (a.starts_with("End.M.GTP6.E") && plen > 88)
                    {
                        k = 0;
                    }
                    format!("ip -6 route replace {prefix} encap seg6local action {} dev eth0{table}", SIDS[k])
                }
                7 => {
                    format!("ip route replace {prefix} encap seg6local action {SID4} dev eth0{table}")
                }
                // A multipath route given by its paths (one path: a plain route).
                8 => {
                    let vias = if v6 { VIAS6 } else { VIAS4 };
                    let paths: Vec<String> = (0..1 + n % 3)
                        .map(|k| format!("nexthop via {} weight {}", vias[(n / 3 + k) % vias.len()], 1 + k * 2))
                        .collect();
                    format!("ip {fam}route replace {prefix}{table} {}", paths.join(" "))
                }
                // A head-end policy: each mode, one to three segments, with an HMAC or
                // not (insertion only for IPv6).
                9 => {
                    let modes: &[&str] = if v6 { &["encap", "encap.red", "inline", "inline.red"] } else { &["encap", "encap.red"] };
                    let segs = POLICY_SEGS[(n / 4) % POLICY_SEGS.len()];
                    // (A single segment's reduced SRH is none: no HMAC then.)
                    let hmac = if n % 5 == 0 && segs.contains(',') { " hmac 7" } else { "" };
                    // On a device, or through a gateway only.
                    let dev = match (n % 3, v6) { (0, true) => "via fc00:1::2", (0, false) => "via 10.1.0.2", _ => "dev eth0" };
                    format!("ip {fam}route replace {prefix} encap seg6 mode {} segs {segs}{hmac} {dev}{table}", modes[n % modes.len()])
                }
                // A GTP-U tunnel's end (GTP-U.Decap, a SID) or start (over IPv4 or IPv6).
                10 => {
                    let tunnel = match n % 3 {
                        0 => "decap table 100".to_string(),
                        1 => format!("teid {} dst 10.2.0.77 src 10.1.0.1", n as u32),
                        _ => format!("teid {} dst fc00:2::9 src fc00:1::1 qfi 5", n % 1000),
                    };
                    format!("ip {fam}route replace {prefix} encap gtp {tunnel} dev eth0{table}")
                }
                // A device route (in the main table, the gateways given without a device
                // resolve on those).
                11 => format!("ip {fam}route replace {prefix} dev eth{}{table}", n % 2),
                0 => format!("ip {fam}route replace {prefix} via {via}{table}"),
                1 => format!("ip {fam}route replace blackhole {prefix}{table}"),
                2 => format!("ip {fam}route replace unreachable {prefix}{table}"),
                6 => {
                    let ids = if v6 { NHIDS6 } else { NHIDS4 };
                    format!("ip {fam}route replace {prefix} nhid {}{table}", ids[(p / 37) % ids.len()])
                }
                _ => {
                    let line = format!("ip {fam}route del {prefix}{table}");
                    // Only a route the configuration has.
                    if sr6_config::parse_line(&line, "ctl", 1, &mut s.clone()).is_err() {
                        continue;
                    }
                    line
                }
            };
            let unchanged = s.clone();
            let Some(c) = change(&mut s, &line) else { continue };
            // A configuration the build refuses (two proxies on one `iif`): refused in
            // place too, changing nothing.
            let before = view(&t);
            if Tables::build(&s).is_err() {
                prop_assert!(t.apply_routes(std::slice::from_ref(&c)).is_err(), "{}: taken in place", line);
                prop_assert_eq!(view(&t), before, "{} refused", line);
                s = unchanged;
                continue;
            }
            // Every other change here is one the in-place path takes (table 100 too
            // after its last route went, when a build has no table 100: it is made), but
            // a change of a main-table device route once a gateway given without a device
            // was resolved (on one of them, maybe).
            if let Err(NeedsBuild(why)) = t.apply_routes(std::slice::from_ref(&c)) {
                prop_assert!(why.contains("a device route of the main table"), "{}: refused: {}", line, why);
                prop_assert_eq!(view(&t), before, "{} refused", line);
                t = build(&s);
            }
            let (a, b) = (view(&t), view(&build(&s)));
            prop_assert!(a == b, "after {}: {}", line, diff(&a, &b));
        }
    }
}

/// The lines of two views that differ (in place: `-`, built: `+`).
fn diff(a: &[String], b: &[String]) -> String {
    let only = |x: &[String], y: &[String], sign: char| {
        x.iter().filter(|l| !y.contains(l)).map(|l| format!("\n{sign} {l}")).collect::<String>()
    };
    format!("{}{}", only(a, b, '-'), only(b, a, '+'))
}

/// What the in-place path refuses, it refuses whole, changing nothing.
#[test]
fn refused_changes_change_nothing() {
    let mut s = spec(BASE);
    let mut t = build(&s);
    let before = view(&t);
    for line in [
        // A host route to an own address (its Local wins in a build).
        "ip -6 route add fc00:1::1/128 via fc00:1::2 dev eth0",
        // A policy whose HMAC key is not defined (the build's error says so).
        "ip -6 route add fc00:99::/64 encap seg6 mode encap segs fc00::9 hmac 9 dev eth0",
        // A gateway given without a device, not on a connected network (the build
        // refuses it too: the change is refused whole).
        "ip -6 route add fc00:99::/64 nexthop via fc00:77::5 nexthop via fc00:2::2 dev eth1",
        "ip route add 10.1.0.0/24 via 10.1.0.2 dev eth0",
        // The configuration's route for an address's connected prefix: without it,
        // the connected route is back.
        "ip -6 route del fc00:2::/64",
    ] {
        let mut s2 = s.clone();
        let c = change(&mut s2, line).unwrap_or_else(|| panic!("{line} changes nothing"));
        // A good change first: the batch is refused whole.
        let good = change(&mut s2, "ip -6 route add fc00:cc::/48 via fc00:1::2 dev eth0").unwrap();
        let e = t.apply_routes(&[good, c]).unwrap_err();
        assert!(e.0.contains("built again"), "{line}: {e:?}");
        assert_eq!(view(&t), before, "{line}");
    }
    // A device route of the main table in place, and a gateway given without a device
    // resolved on it; after that, device routes of the main table build.
    let mut s2 = s.clone();
    let mut t2 = build(&s);
    for line in [
        "ip -6 route add fc00:99::/64 dev eth1",
        "ip -6 route add fc00:9a::/64 via fc00:99::5",
        "ip -6 route replace fc00:bb::/48 via fc00:99::7",
    ] {
        let c = change(&mut s2, line).unwrap();
        t2.apply_routes(&[c]).unwrap_or_else(|e| panic!("{line}: {e:?}"));
        assert_eq!(view(&t2), view(&build(&s2)), "{line}");
    }
    let v = view(&t2);
    for line in [
        "ip -6 route replace fc00:99::/64 dev eth0",
        "ip -6 route del fc00:99::/64",
        "ip -6 route add fc00:9b::/64 dev eth0",
    ] {
        let c = change(&mut s2.clone(), line).unwrap();
        assert!(t2.apply_routes(&[c]).unwrap_err().0.contains("device route of the main table"), "{line}");
        assert_eq!(view(&t2), v, "{line}");
    }
    // In one batch with a route that resolves on it: built.
    let mut s3 = s.clone();
    let d = change(&mut s3, "ip -6 route add fc00:99::/64 dev eth1").unwrap();
    let g = change(&mut s3, "ip -6 route add fc00:9a::/64 via fc00:99::5").unwrap();
    assert!(t.apply_routes(&[g, d]).is_err());
    assert_eq!(view(&t), before);
    // A route in a new table with a SID that only a build makes (its next hop is behind
    // a gateway): the table made for it goes again.
    let mut s2 = s.clone();
    let new = change(&mut s2, "ip -6 route add fc00:99::/64 via fc00:1::2 dev eth0 table 7").unwrap();
    let sid =
        change(&mut s2, "ip -6 route add fc00:e::2/128 encap seg6local action End.X nh6 fc00:77::5 dev eth0").unwrap();
    assert!(t.apply_routes(&[new.clone(), sid]).is_err());
    assert_eq!(view(&t), before);
    assert_eq!(t.fibs.len(), 2);
    assert!(!t.table_ids.contains(&7));
    // New tables, a route's and an End.T SID's, made in place.
    let mut s2 = s.clone();
    let endt = "ip -6 route add fc00:e::3/128 encap seg6local action End.T table 8 dev eth0 table 9";
    let _ = change(&mut s2, "ip -6 route add fc00:99::/64 via fc00:1::2 dev eth0 table 7");
    let cs = [new, change(&mut s2, endt).unwrap()];
    let mut t2 = build(&s);
    t2.apply_routes(&cs).unwrap();
    let b2 = build(&s2);
    assert_eq!(view(&t2), view(&b2));
    assert_eq!(t2.table_ids, b2.table_ids);
    let lookup7 = |t: &Tables| {
        let i = t.table_ids.iter().position(|&x| x == 7).unwrap();
        norm(t, t.fibs.get(i).unwrap().lookup6(&"fc00:99::1".parse::<std::net::Ipv6Addr>().unwrap().octets()))
    };
    assert_eq!(lookup7(&t2), lookup7(&b2));
    assert_eq!(lookup7(&t2), "via fc00:1::2 dev 0 eth Some([2, 0, 0, 0, 1, 2, 2, 0, 0, 0, 0, 1])");
    // And one it takes.
    let c = change(&mut s, "ip -6 route add fc00:cc::/48 via fc00:1::2 dev eth0").unwrap();
    t.apply_routes(&[c]).unwrap();
    assert_ne!(view(&t), before);
    assert_eq!(view(&t), view(&build(&s)));
}

/// SIDs in place: a removed SID's index goes to the last SID, an SR proxy too, which
/// keeps its shared state (its cache) when it moves; a proxy that would break the
/// `iif` rule is refused whole, as the build refuses it; a next hop behind a gateway
/// is resolved by a build, and while a SID has one, so is every main-table route
/// change.
#[test]
fn sid_changes_that_need_a_build() {
    let proxy =
        "ip -6 route add fc00:f::1/128 encap seg6local action End.AD nh6 fc00:2::2 oif eth1 iif eth1 dev eth0\n";
    let s = spec(&format!("{BASE}{proxy}"));
    let mut t = build(&s);
    let before = view(&t);
    let state = |t: &Tables| t.proxies[0].state.clone();
    let first = state(&t);
    for line in [
        // A second End.AD on eth1, the proxy's SID replaced by another behaviour's while
        // one is added: both break the rule or need no build only as a whole.
        "ip -6 route add fc00:f::2/128 encap seg6local action End.AD nh6 fc00:2::3 oif eth1 iif eth1 dev eth0",
        "ip -6 route add fc00:f::2/128 encap seg6local action End.AM nh6 fc00:2::3 oif eth1 iif eth1 dev eth0",
        // A next hop behind a gateway.
        "ip -6 route add fc00:e::2/128 encap seg6local action End.X nh6 fc00:77::5 dev eth0",
    ] {
        let c = change(&mut s.clone(), line).unwrap_or_else(|| panic!("{line} changes nothing"));
        let e = t.apply_routes(&[c]).unwrap_err();
        assert!(e.0.contains("built again"), "{line}: {e:?}");
        assert_eq!(view(&t), before, "{line}");
    }
    // The proxy (the last SID) moves into the End SID's index, with its state.
    let mut s2 = s.clone();
    let del = change(&mut s2, "ip -6 route del fc00:e::1/128").unwrap();
    t.apply_routes(&[del]).unwrap();
    assert_eq!(view(&t), view(&build(&s2)));
    assert!(std::sync::Arc::ptr_eq(&state(&t), &first), "the moved proxy lost its state");
    // Replaced by End.AM on the same device, then End.AD again: a new state.
    for line in [
        "ip -6 route replace fc00:f::1/128 encap seg6local action End.AM nh6 fc00:2::2 oif eth1 iif eth1 dev eth0",
        "ip -6 route add fc00:f::3/128 encap seg6local action End.AM nh6 fc00:2::3 oif eth1 iif eth1 dev eth0",
        "ip -6 route del fc00:f::1/128",
        "ip -6 route del fc00:f::3/128",
        "ip -6 route add fc00:f::1/128 encap seg6local action End.AD nh6 fc00:2::2 oif eth1 iif eth1 dev eth0",
    ] {
        let c = change(&mut s2, line).unwrap();
        t.apply_routes(&[c]).unwrap_or_else(|e| panic!("{line}: {e:?}"));
        let (a, b) = (view(&t), view(&build(&s2)));
        assert!(a == b, "after {line}: {}", diff(&a, &b));
    }
    assert!(!std::sync::Arc::ptr_eq(&state(&t), &first));

    // With End.X behind a gateway, a main-table route change builds; another table's not.
    let s =
        spec(&format!("{BASE}ip -6 route add fc00:e::2/128 encap seg6local action End.X nh6 fc00:77::5 dev eth0\n"));
    let mut t = build(&s);
    let mut s2 = s.clone();
    let c = change(&mut s.clone(), "ip -6 route replace fc00:77::/32 via fc00:2::2 dev eth1").unwrap();
    assert!(t.apply_routes(&[c]).unwrap_err().0.contains("SID's next hop"));
    let c = change(&mut s2, "ip -6 route replace fc00:77::/32 via fc00:2::2 dev eth1 table 100").unwrap();
    t.apply_routes(&[c]).unwrap();
    assert_eq!(view(&t), view(&build(&s2)));
}

/// Without `ip sr tunsrc`, a policy on a device takes that device's address, in place as
/// in a build, and one with no device that of the device its first segment is routed
/// by: in place too, and found again (the policy made again, its HMAC with it) when a
/// main-table route moves that segment to another device.
#[test]
fn policies_without_a_tunnel_source() {
    let base = BASE.replace("ip sr tunsrc set fc00:1::1\n", "");
    let mut s = spec(&base);
    let mut t = build(&s);
    for line in [
        "ip -6 route add fc00:cc::/48 encap seg6 mode encap segs fc00:77:1::1,fc00:88::1 dev eth1",
        "ip -6 route replace fc00:77::/32 via fc00:2::2 dev eth1",
        "ip -6 route add fc00:cd::/48 encap seg6 mode inline segs fc00:2::9 dev eth0 table 100",
        "ip -6 route del fc00:aa::/48",
        // No device: the source is eth1's (fc00:77::/32 leaves by it), with an HMAC.
        "ip -6 route add fc00:ce::/48 encap seg6 mode encap segs fc00:77:1::1,fc00:88::1 hmac 7 via fc00:1::2",
        "ip -6 route add fc00:cf::/48 encap seg6 mode encap segs fc00:77:1::1 via fc00:1::2 table 100",
        // The segment moves to eth0, then to a longer prefix on eth1, then back.
        "ip -6 route replace fc00:77::/32 via fc00:1::2 dev eth0",
        "ip -6 route add fc00:77:1::/48 via fc00:2::3 dev eth1",
        "ip -6 route del fc00:77:1::/48",
        "ip -6 route replace fc00:bb::/48 via fc00:2::3 dev eth1 table 100",
        "ip -6 route del fc00:ce::/48",
        "ip -6 route replace fc00:77::/32 via fc00:2::2 dev eth1",
    ] {
        let c = change(&mut s, line).unwrap_or_else(|| panic!("{line} changes nothing"));
        t.apply_routes(&[c]).unwrap_or_else(|e| panic!("{line}: {e:?}"));
        let (a, b) = (view(&t), view(&build(&s)));
        assert!(a == b, "after {line}: {}", diff(&a, &b));
    }
    // The source did move: eth1's address, not eth0's.
    let src = |t: &Tables| t.live_policies().find(|(_, p)| p.hmac_key_id.is_some()).map(|(_, p)| p.src);
    let mut s2 = s.clone();
    let c =
        change(&mut s2, "ip -6 route add fc00:ce::/48 encap seg6 mode encap segs fc00:77:1::1 hmac 7 via fc00:1::2")
            .unwrap();
    t.apply_routes(&[c]).unwrap();
    assert_eq!(src(&t), Some("fc00:2::1".parse::<std::net::Ipv6Addr>().unwrap().octets()));
    let c = change(&mut s2, "ip -6 route replace fc00:77::/32 via fc00:1::2 dev eth0").unwrap();
    t.apply_routes(&[c]).unwrap();
    assert_eq!(src(&t), Some("fc00:1::1".parse::<std::net::Ipv6Addr>().unwrap().octets()));
    assert_eq!(view(&t), view(&build(&s2)));
}
