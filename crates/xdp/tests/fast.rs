//! The fast-path program (`c/fast.c`) with its maps filled by [`sr6_xdp::Mirror`], run
//! by the kernel with `BPF_PROG_TEST_RUN` (root: `#[ignore]`d, run with
//! `--include-ignored`), in a network namespace of this test's own whose veth devices
//! stand for the configuration's: a route's frames leave rewritten as worked out here,
//! a change to the route is seen whole after the generation switch, both generations
//! end up equal, and a sync that changes nothing switches nothing. (The differential
//! test against sr6's general path is crates/sr6/tests/xdp_path.rs.)

use std::ffi::CString;

use sr6_core::tables::Tables;
use sr6_xdp::{Loaded, Mirror};

const XDP_DROP: u32 = 1;
const XDP_REDIRECT: u32 = 4;

const BASE: &str = "
ip link set eth0 address 02:00:00:00:00:a0
ip link set eth1 address 02:00:00:00:00:a1
ip link set eth2 address 02:00:00:00:00:a2
ip -6 addr add fc00:a::1/64 dev eth0
ip -6 addr add fc00:12::1/64 dev eth1
ip -6 addr add fc00:23::1/64 dev eth2
ip -6 neigh add fc00:12::2 lladdr 02:00:00:00:12:02 dev eth1
ip -6 neigh add fc00:23::3 lladdr 02:00:00:00:23:03 dev eth2
";

fn tables(routes: &str) -> Tables {
    let src = format!("{BASE}{routes}");
    Tables::build(&sr6_config::parse_str(&src, "test.conf").unwrap()).unwrap().0
}

/// Ethernet + IPv6 + 8 bytes of UDP-less payload, to `dst`.
fn frame(dst: &str) -> Vec<u8> {
    let mut f = vec![0x02, 0, 0, 0, 0, 0xa0, 0x02, 0, 0, 0, 0x0a, 0x02, 0x86, 0xdd];
    f.extend_from_slice(&[0x60, 0, 0, 0, 0, 8, 59, 64]);
    f.extend_from_slice(&"fc00:a::2".parse::<std::net::Ipv6Addr>().unwrap().octets());
    f.extend_from_slice(&dst.parse::<std::net::Ipv6Addr>().unwrap().octets());
    f.extend_from_slice(&[0xab; 8]);
    f
}

/// This thread's own network namespace with veth devices sr6m0..2 for eth0..eth2.
fn namespace() -> Vec<Option<u32>> {
    // SAFETY: unshare(2) with a constant flag; it affects the calling thread only.
    assert_eq!(unsafe { libc::unshare(libc::CLONE_NEWNET) }, 0, "unshare: {}", std::io::Error::last_os_error());
    (0..3)
        .map(|i| {
            let name = format!("sr6m{i}");
            let st = std::process::Command::new("ip")
                .args(["link", "add", &name, "type", "veth", "peer", "name", &format!("sr6n{i}")])
                .status()
                .unwrap();
            assert!(st.success());
            let c = CString::new(name).unwrap();
            // SAFETY: a NUL-terminated name.
            Some(unsafe { libc::if_nametoindex(c.as_ptr()) })
        })
        .collect()
}

/// [`namespace`], the shared maps (empty) and the program loaded with them, which hands
/// what it does not take to the general path as `XDP_DROP`.
fn loaded() -> (Vec<Option<u32>>, Mirror, Loaded) {
    let ix = namespace();
    let m = Mirror::new().unwrap();
    let prog = m.load().unwrap();
    prog.map("conf").unwrap().update(&0u32.to_ne_bytes(), &XDP_DROP.to_ne_bytes()).unwrap();
    (ix, m, prog)
}

#[test]
#[ignore = "needs root (BPF_PROG_LOAD, a network namespace)"]
fn routes_reach_the_program_whole_and_both_generations_agree() {
    let (ix, mut m, prog) = loaded();
    let f = frame("fc00:2::7");
    let run = |f: &[u8]| sr6_io::bpf::test_run_on(&prog.prog, f, ix[0].unwrap()).unwrap();

    // Before the first sync: everything to the general path.
    assert_eq!(run(&f).0, XDP_DROP);

    let t1 = tables("ip -6 route add fc00:2::/32 via fc00:12::2 dev eth1\n");
    let s = m.sync(&t1, &ix, &[true; 3]).unwrap();
    assert!(s.switched && s.devices == 3, "{s:?}");
    let (v, out) = run(&f);
    assert_eq!(v, XDP_REDIRECT);
    let mut want = f.clone();
    want[..12].copy_from_slice(&[2, 0, 0, 0, 0x12, 2, 2, 0, 0, 0, 0, 0xa1]);
    want[21] = 63;
    assert_eq!(out, want);
    // Out of eth1: its counter, not eth2's.
    let c = m.counts(0, 3).unwrap();
    assert_eq!((c.tx[1].0, c.tx[2].0, c.rx[0].0), (1, 0, 1));

    // Nothing changed: nothing switched.
    assert!(!m.sync(&t1, &ix, &[true; 3]).unwrap().switched);

    // The route moves to eth2. (Built afresh, both tables number the one gateway 0:
    // the route's entry, which names it, stays; the adjacency's changes.)
    let t2 = tables("ip -6 route add fc00:2::/32 via fc00:23::3 dev eth2\n");
    let s = m.sync(&t2, &ix, &[true; 3]).unwrap();
    assert!(s.switched && s.route_changes == 0, "{s:?}");
    let (v, out) = run(&f);
    assert_eq!(v, XDP_REDIRECT);
    assert_eq!(&out[..12], &[2, 0, 0, 0, 0x23, 3, 2, 0, 0, 0, 0, 0xa2]);
    let c = m.counts(0, 3).unwrap();
    assert_eq!((c.tx[1].0, c.tx[2].0), (1, 1));

    // eth2 no longer a target: the route is the general path's.
    let s = m.sync(&t2, &ix, &[true, true, false]).unwrap();
    assert!(s.switched);
    assert_eq!(run(&f).0, XDP_DROP);

    // Both generations hold the same prefixes with the same actions, once the one the
    // programs left has caught up.
    m.settle().unwrap();
    let routes = m.map("routes6");
    let keys = routes.keys::<22>().unwrap();
    let mut by_gen: [Vec<(Vec<u8>, Vec<u8>)>; 2] = [Vec::new(), Vec::new()];
    for k in &keys {
        let mut v = [0u8; 24];
        routes.lookup(k, &mut v).unwrap();
        let mut key = k.to_vec();
        key[4] = 0;
        by_gen[usize::from(k[4])].push((key, v.to_vec()));
    }
    by_gen[0].sort();
    by_gen[1].sort();
    assert!(!by_gen[0].is_empty());
    assert_eq!(by_gen[0], by_gen[1]);
    assert_eq!(by_gen[0].len(), s.routes);
}

#[test]
#[ignore = "needs root (BPF_PROG_LOAD, a network namespace)"]
fn a_policy_changed_in_place_is_seen_whole() {
    let (ix, mut m, prog) = loaded();
    let f = frame("fc00:5::7");
    let run = |f: &[u8]| sr6_io::bpf::test_run_on(&prog.prog, f, ix[0].unwrap()).unwrap();
    let policy = |seg: &str| {
        tables(&format!(
            "ip -6 route add fc00:2::/32 via fc00:12::2 dev eth1\n\
             ip -6 route add fc00:5::/64 encap seg6 mode encap segs {seg} dev eth1\n"
        ))
    };
    // H.Encaps with one segment: Ethernet, IPv6 to the segment, an SRH of one segment,
    // then the packet as received (hop limit kept; the outer one is one less).
    m.sync(&policy("fc00:2::e"), &ix, &[true; 3]).unwrap();
    let (v, out) = run(&f);
    assert_eq!(v, XDP_REDIRECT);
    assert_eq!(out.len(), f.len() + 40 + 24);
    assert_eq!(&out[..12], &[2, 0, 0, 0, 0x12, 2, 2, 0, 0, 0, 0, 0xa1]);
    let seg = |s: &str| s.parse::<std::net::Ipv6Addr>().unwrap().octets();
    assert_eq!((&out[38..54], out[20], out[21]), (&seg("fc00:2::e")[..], 43, 63));
    assert_eq!(&out[78..], &f[14..]);

    // Its segment changes, the route to it does not: the program writes the new one.
    let s = m.sync(&policy("fc00:2::f"), &ix, &[true; 3]).unwrap();
    assert!(s.switched && s.route_changes == 0, "{s:?}");
    let (v, out) = run(&f);
    assert_eq!(v, XDP_REDIRECT);
    assert_eq!((&out[38..54], &out[62..78]), (&seg("fc00:2::f")[..], &seg("fc00:2::f")[..]));
}

/// A neighbour's change is its adjacency's entry alone: no prefix's entry is rewritten,
/// yet the program sends with the new MAC at once, hands the route's frames to the
/// general path while the neighbour is not known, and takes them back once it is.
#[test]
#[ignore = "needs root (BPF_PROG_LOAD, a network namespace)"]
fn a_neighbours_change_reaches_the_program_by_its_adjacency() {
    use sr6_core::spec::Prefix;
    use sr6_core::tables::{neigh_key, NeighChange};
    let (ix, mut m, prog) = loaded();
    let f = frame("fc00:2::7");
    let run = |f: &[u8]| sr6_io::bpf::test_run_on(&prog.prog, f, ix[0].unwrap()).unwrap();
    let mut t = tables("ip -6 route add fc00:2::/32 via fc00:12::2 dev eth1\n");
    m.sync(&t, &ix, &[true; 3]).unwrap();
    let gw: std::net::IpAddr = "fc00:12::2".parse().unwrap();
    let host = [(0, Prefix::V6(neigh_key(gw).into(), 128))];
    let mut change = |t: &mut Tables, mac: Option<[u8; 6]>| {
        t.apply_neighbours(&[NeighChange { dev: "eth1".into(), addr: gw, mac }]).unwrap();
        m.sync_prefixes(t, &ix, &[true; 3], &host).unwrap()
    };
    let s = change(&mut t, Some([2, 0, 0, 0, 0x12, 0x99]));
    assert!(s.switched && s.route_changes == 0, "{s:?}");
    let (v, out) = run(&f);
    assert_eq!(v, XDP_REDIRECT);
    assert_eq!(&out[..12], &[2, 0, 0, 0, 0x12, 0x99, 2, 0, 0, 0, 0, 0xa1]);
    let s = change(&mut t, None);
    assert!(s.switched && s.route_changes == 0, "{s:?}");
    assert_eq!(run(&f).0, XDP_DROP);
    change(&mut t, Some([2, 0, 0, 0, 0x12, 0x98]));
    let (v, out) = run(&f);
    assert_eq!(v, XDP_REDIRECT);
    assert_eq!(&out[..6], &[2, 0, 0, 0, 0x12, 0x98]);
}

/// A map entry: the map (6: `routes6`, 4: `routes4`, b'a': `adjs`, b'p': `policies`),
/// the key, the value.
type Entry = (u8, Vec<u8>, Vec<u8>);

/// Every entry of `routes6` and `routes4`, and those of the first slots of `adjs` and
/// `policies` that are not zeros, generation by generation (the generation cleared).
fn entries(m: &Mirror) -> [Vec<Entry>; 2] {
    let mut by_gen: [Vec<Entry>; 2] = [Vec::new(), Vec::new()];
    let mut add = |fam: u8, k: &[u8], v: &[u8]| {
        let mut key = k.to_vec();
        key[4] = 0;
        by_gen[usize::from(k[4] & 1)].push((fam, key, v.to_vec()));
    };
    let r6 = m.map("routes6");
    for k in r6.keys::<22>().unwrap() {
        let mut v = [0u8; 24];
        r6.lookup(&k, &mut v).unwrap();
        add(6, &k, &v);
    }
    let r4 = m.map("routes4");
    for k in r4.keys::<10>().unwrap() {
        let mut v = [0u8; 24];
        r4.lookup(&k, &mut v).unwrap();
        add(4, &k, &v);
    }
    for (name, tag, size) in [("adjs", b'a', 24), ("policies", b'p', 172)] {
        let map = m.map(name);
        for k in 0u32..64 {
            let mut v = vec![0u8; size];
            map.lookup(&k.to_ne_bytes(), &mut v).unwrap();
            if v.iter().any(|&b| b != 0) {
                by_gen[(k & 1) as usize].push((tag, (k >> 1).to_ne_bytes().to_vec(), v));
            }
        }
    }
    by_gen.iter_mut().for_each(|g| g.sort());
    by_gen
}

/// Routes added, replaced and deleted in place one at a time, each synced by its prefix
/// alone (`Mirror::sync_prefixes`, as `sr6 run` syncs a `sr6 ctl route` change), and
/// neighbours learned, changed and forgotten, each synced by the /128 of its address
/// (as `sr6 run` syncs one): after each, once settled, both generations of the maps hold
/// what a sync of every prefix of the same tables puts in a fresh set of maps. The tables hold
/// routes through gateways of both families, an on-link host route, an End.X SID and
/// a policy, all resolved through the neighbours changed.
#[test]
#[ignore = "needs root (BPF maps, a network namespace)"]
fn a_sync_of_the_changed_prefixes_is_a_sync_of_all() {
    use sr6_core::spec::{NeighSpec, Prefix};
    use sr6_core::tables::{neigh_key, NeighChange, RouteChange};
    let ix = namespace();
    let base = "ip addr add 10.1.0.1/24 dev eth1\nip neigh add 10.1.0.2 lladdr 02:00:00:00:12:04 dev eth1\n\
                ip -6 route add fc00:77::/48 table 100 via fc00:12::2 dev eth1\n\
                ip -6 route add fc00:2::/32 via fc00:12::2 dev eth1\n\
                ip -6 route add fc00:12::9/128 dev eth1\n\
                ip -6 route add fc00:a::100/128 encap seg6local action End.X nh6 fc00:12::2 dev eth1\n\
                ip -6 route add fc00:5::/64 encap seg6 mode encap segs fc00:2::e dev eth1\n";
    let mut t = tables(base);
    let mut spec = sr6_config::parse_str(&format!("{BASE}{base}"), "test.conf").unwrap();
    let mut m = Mirror::new().unwrap();
    m.sync(&t, &ix, &[true; 3]).unwrap();
    // Prefixes of both families, of the main table and table 100, host routes too.
    let prefixes = [
        ("fc00:2::/32", ""),
        ("fc00:2:1::/48", ""),
        ("fc00:2:1:5::/64", ""),
        ("fc00:2:1:5::9/128", ""),
        ("fc00:9::/40", ""),
        ("fc00:77:1::/48", " table 100"),
        ("fc00:77::/48", " table 100"),
        ("192.0.2.0/24", ""),
        ("192.0.2.128/25", ""),
        ("198.51.100.7/32", ""),
    ];
    let neighbours = [("eth1", "fc00:12::2"), ("eth2", "fc00:23::3"), ("eth1", "10.1.0.2"), ("eth1", "fc00:12::9")];
    let mut seed = 0x2545_f491_u64;
    let (mut changes, mut neigh_changes) = (0, 0);
    let check = |m: &mut Mirror, t: &Tables, what: &str| {
        // The generation the programs read is whole at the switch; the one they left
        // gets the change once they let go of it.
        let mut cur = [0u8; 4];
        m.map("cur").lookup(&0u32.to_ne_bytes(), &mut cur).unwrap();
        let read = usize::from(u32::from_ne_bytes(cur) == 1);
        let at_switch = entries(m);
        m.settle().unwrap();
        assert_eq!(at_switch[read], entries(m)[read], "{what}: the generation read changed after the switch");
        let mut fresh = Mirror::new().unwrap();
        fresh.sync(t, &ix, &[true; 3]).unwrap();
        let (got, want) = (entries(m), entries(&fresh));
        assert_eq!(got[0], got[1], "{what}: the generations differ");
        let cur = want.iter().find(|g| !g.is_empty()).cloned().unwrap_or_default();
        assert_eq!(got[0], cur, "{what}");
    };
    for step in 0..90 {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        if (seed >> 50).is_multiple_of(3) {
            // A neighbour learned or changed (a MAC of 16), or forgotten.
            let (dev, addr) = neighbours[(seed >> 33) as usize % neighbours.len()];
            let addr: std::net::IpAddr = addr.parse().unwrap();
            let mac = (!(seed >> 20).is_multiple_of(5)).then_some([2, 0, 0, 0, 0x44, (seed >> 24) as u8 % 16]);
            spec.neighs.retain(|n| !(n.dev == dev && n.addr == addr));
            if let Some(mac) = mac {
                spec.neighs.push(NeighSpec { line: 0, dev: dev.into(), addr, mac });
            }
            t.apply_neighbours(&[NeighChange { dev: dev.into(), addr, mac }]).unwrap();
            let host = Prefix::V6(neigh_key(addr).into(), 128);
            let ps: Vec<_> = t.table_ids.iter().map(|&id| (t.fib_of_table(id).unwrap(), host)).collect();
            let s = m.sync_prefixes(&t, &ix, &[true; 3], &ps).unwrap();
            let what = format!("step {step}: neighbour {addr} {mac:?}");
            // (Only the on-link /128 resolves to its neighbour itself.)
            assert!(
                s.route_changes <= usize::from(addr == "fc00:12::9".parse::<std::net::IpAddr>().unwrap()),
                "{what}: {s:?}"
            );
            check(&mut m, &t, &what);
            neigh_changes += 1;
            continue;
        }
        let (prefix, table) = prefixes[(seed >> 33) as usize % prefixes.len()];
        let v4 = prefix.contains('.');
        let how = match ((seed >> 20) % 4, v4) {
            (0, _) => "blackhole".to_string(),
            (1, false) => "via fc00:23::3 dev eth2".to_string(),
            (_, false) => "via fc00:12::2 dev eth1".to_string(),
            (_, true) => "via 10.1.0.2 dev eth1".to_string(),
        };
        let ip = if v4 { "ip" } else { "ip -6" };
        let key = |s: &sr6_core::spec::RouterSpec| {
            s.routes
                .iter()
                .find(|r| {
                    sr6_core::behaviour::proxy::prefix_text(&r.prefix) == prefix
                        && (r.table == 100) == (table == " table 100")
                })
                .cloned()
        };
        let line = match (key(&spec), (seed >> 40) % 3) {
            (Some(_), 0) => format!("{ip} route del {prefix}{table}"),
            (Some(_), _) => format!("{ip} route replace {prefix}{table} {how}"),
            (None, _) => format!("{ip} route add {prefix}{table} {how}"),
        }
        .replace(&format!("{prefix}{table} blackhole"), &format!("blackhole {prefix}{table}"));
        let before = key(&spec);
        sr6_config::parse_line(&line, "step", step + 1, &mut spec).unwrap_or_else(|e| panic!("{line}: {e}"));
        let after = key(&spec);
        let change = match (before, after) {
            (Some(b), None) => RouteChange::Delete(b),
            (_, Some(a)) => RouteChange::Add(a),
            (None, None) => unreachable!("{line}"),
        };
        let (RouteChange::Add(r) | RouteChange::Delete(r)) = &change;
        let p = (t.fib_of_table(r.table).unwrap(), r.prefix);
        if t.apply_routes(std::slice::from_ref(&change)).is_err() {
            // (Not a change the tables take in place: rebuilt, and every prefix synced.)
            t = Tables::build(&spec).unwrap().0;
            m.sync(&t, &ix, &[true; 3]).unwrap();
            continue;
        }
        changes += 1;
        m.sync_prefixes(&t, &ix, &[true; 3], &[p]).unwrap();
        check(&mut m, &t, &format!("step {step} ({line})"));
    }
    assert!(changes > 30 && neigh_changes > 15, "{changes} route changes, {neigh_changes} neighbour changes in place");
}
