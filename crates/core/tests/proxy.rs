//! The SR proxies (End.AS, End.AD, End.EAD4/6, End.AM; draft-ietf-spring-sr-service-
//! programming §6), both parts, configured from text as a user writes it. Frames are
//! built by hand here, field by field from the draft's pseudocode; the independent
//! oracle is tests/oracle/test_proxy.py (scapy).
//!
//! The router: eth0 (fc00:1::1/64) towards the rest of the chain, the next segments
//! fc00:e::/64 via fc00:1::2; eth1 (fc00:2::1/64, 10.0.2.1/24) towards the service
//! function at fc00:2::2 / 10.0.2.2; eth2 a second function link.

use std::net::{Ipv4Addr, Ipv6Addr};

use proptest::prelude::*;
use sr6_core::behaviour::proxy::cache::Entry;
use sr6_core::behaviour::proxy::ProxyCounters;
use sr6_core::drop::DropReason;
use sr6_core::packet::{PacketBuf, Verdict};
use sr6_core::pipeline::Worker;
use sr6_core::tables::Tables;

const BASE: &str = "\
ip link set dev eth0 address 02:00:00:00:00:01
ip link set dev eth1 address 02:00:00:00:00:02
ip link set dev eth2 address 02:00:00:00:00:03
ip -6 addr add fc00:1::1/64 dev eth0
ip -6 addr add fc00:2::1/64 dev eth1
ip addr add 10.0.2.1/24 dev eth1
ip -6 addr add fc00:3::1/64 dev eth2
ip -6 neigh add fc00:1::2 lladdr 02:aa:00:00:00:01 dev eth0
ip -6 neigh add fc00:2::2 lladdr 02:bb:00:00:00:02 dev eth1
ip neigh add 10.0.2.2 lladdr 02:bb:00:00:00:02 dev eth1
ip -6 neigh add fc00:3::2 lladdr 02:cc:00:00:00:03 dev eth2
ip -6 route add fc00:e::/64 via fc00:1::2 dev eth0
ip -6 route add fc00:9::/64 via fc00:1::2 dev eth0
ip route add 10.9.0.0/16 via 10.0.2.2 dev eth1
";

const ETH0: u16 = 0;
const ETH1: u16 = 1;
const FUNCTION_MAC: [u8; 6] = [2, 0xbb, 0, 0, 0, 2];
const NEXT_MAC: [u8; 6] = [2, 0xaa, 0, 0, 0, 1];

fn v6(s: &str) -> Ipv6Addr {
    s.parse().unwrap()
}

fn tables(extra: &str) -> Tables {
    let spec = sr6_config::parse_str(&format!("{BASE}{extra}"), "t.conf").unwrap_or_else(|e| panic!("{e}"));
    Tables::build(&spec).unwrap_or_else(|e| panic!("line {}: {}", e.line, e.message)).0
}

fn build_err(extra: &str) -> String {
    let spec = sr6_config::parse_str(&format!("{BASE}{extra}"), "t.conf").unwrap_or_else(|e| panic!("{e}"));
    match Tables::build(&spec) {
        Ok(_) => panic!("built: {extra}"),
        Err(e) => format!("line {}: {}", e.line, e.message),
    }
}

/// An IPv6 header (payload length from `payload`).
fn ip6(src: &str, dst: &str, nh: u8, hl: u8, payload: &[u8]) -> Vec<u8> {
    let mut h = vec![0x60, 0, 0, 0];
    h.extend_from_slice(&(payload.len() as u16).to_be_bytes());
    h.extend_from_slice(&[nh, hl]);
    h.extend_from_slice(&v6(src).octets());
    h.extend_from_slice(&v6(dst).octets());
    h.extend_from_slice(payload);
    h
}

/// An SRH with `segs` in header order (Segment List[0] first), then `payload`.
fn srh(nh: u8, sl: u8, segs: &[&str], payload: &[u8]) -> Vec<u8> {
    let mut s = vec![nh, (segs.len() * 2) as u8, 4, sl, (segs.len() - 1) as u8, 0, 0, 0];
    for a in segs {
        s.extend_from_slice(&v6(a).octets());
    }
    s.extend_from_slice(payload);
    s
}

/// An IPv4 header with a correct checksum, then `payload` (UDP-ish bytes).
fn ip4(src: &str, dst: &str, ttl: u8, payload: &[u8]) -> Vec<u8> {
    let len = 20 + payload.len();
    let mut h = vec![0x45, 0, (len >> 8) as u8, len as u8, 0, 1, 0x40, 0, ttl, 17, 0, 0];
    h.extend_from_slice(&src.parse::<Ipv4Addr>().unwrap().octets());
    h.extend_from_slice(&dst.parse::<Ipv4Addr>().unwrap().octets());
    let sum = checksum(&h);
    h[10..12].copy_from_slice(&sum.to_be_bytes());
    h.extend_from_slice(payload);
    h
}

fn checksum(b: &[u8]) -> u16 {
    let mut s: u32 = b.chunks(2).map(|c| u32::from(u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)]))).sum();
    while s > 0xffff {
        s = (s & 0xffff) + (s >> 16);
    }
    !(s as u16)
}

fn eth(dst: [u8; 6], src: [u8; 6], ethertype: u16, payload: &[u8]) -> Vec<u8> {
    let mut f = dst.to_vec();
    f.extend_from_slice(&src);
    f.extend_from_slice(&ethertype.to_be_bytes());
    f.extend_from_slice(payload);
    f
}

/// A frame arriving on eth0 from the previous hop.
fn from_chain(ip: &[u8]) -> Vec<u8> {
    eth([2, 0, 0, 0, 0, 1], NEXT_MAC, 0x86dd, ip)
}

/// A frame the function sends back on eth1.
fn from_function(ethertype: u16, ip: &[u8]) -> Vec<u8> {
    eth([2, 0, 0, 0, 0, 2], FUNCTION_MAC, ethertype, ip)
}

/// The inner IPv6 packet of the chain: fc00:9::5 -> fc00:9::6, hop limit 50.
fn inner6(hl: u8) -> Vec<u8> {
    ip6("fc00:9::5", "fc00:9::6", 59, hl, &[0xa5; 12])
}

fn inner4(ttl: u8) -> Vec<u8> {
    ip4("10.9.0.5", "10.9.0.6", ttl, &[0x5a; 16])
}

/// A packet to the proxy SID fc00:f::1 with the next segment fc00:e::9 (SL 1).
fn to_sid(inner_nh: u8, inner: &[u8]) -> Vec<u8> {
    ip6("fc00:1::2", "fc00:f::1", 43, 64, &srh(inner_nh, 1, &["fc00:e::9", "fc00:f::1"], inner))
}

fn run(t: &Tables, w: &mut Worker, dev: u16, frame: &[u8]) -> (Verdict, Vec<u8>) {
    let mut p = PacketBuf::new();
    assert!(p.load(frame, dev));
    w.process(t, &mut p);
    (p.verdict, p.data().to_vec())
}

fn counters(t: &Tables, i: usize) -> &ProxyCounters {
    &t.proxies[i].state.counters
}

fn n(c: &std::sync::atomic::AtomicU64) -> u64 {
    ProxyCounters::get(c)
}

fn drops(t: &Tables, i: usize, r: DropReason) -> u64 {
    counters(t, i).drops().iter().find(|(x, _)| *x == r).map_or(0, |x| x.1)
}

fn cached(t: &Tables, i: usize) -> (Entry, Vec<u8>) {
    let mut b = [0u8; 384];
    let e = t.proxies[i].state.cache.read(&mut b).unwrap();
    let n = if let Entry::Headers(n) = e { n } else { 0 };
    (e, b[..n].to_vec())
}

const AD6: &str =
    "ip -6 route add fc00:f::1/128 encap seg6local action End.AD nh6 fc00:2::2 oif eth1 iif eth1 dev eth0\n";
const AD4: &str =
    "ip -6 route add fc00:f::1/128 encap seg6local action End.AD nh4 10.0.2.2 oif eth1 iif eth1 dev eth0\n";

#[test]
fn end_ad_ipv6_both_parts() {
    let t = tables(AD6);
    let mut w = Worker::new(&t);
    // Part 2 before any packet went through: the cache is empty.
    let back = from_function(0x86dd, &inner6(49));
    assert_eq!(run(&t, &mut w, ETH1, &back).0, Verdict::Drop(DropReason::ProxyCacheEmpty));
    assert_eq!((n(&counters(&t, 0).misses), drops(&t, 0, DropReason::ProxyCacheEmpty)), (1, 1));

    // Part 1: End step, headers cached, inner packet to the function (hop limit - 1).
    let (v, out) = run(&t, &mut w, ETH0, &from_chain(&to_sid(41, &inner6(50))));
    assert_eq!(v, Verdict::Tx(ETH1));
    assert_eq!(out, eth(FUNCTION_MAC, [2, 0, 0, 0, 0, 2], 0x86dd, &inner6(49)));
    let want_cache = {
        // The hop limit as received: only the forwarding step of part 2 decrements it.
        let mut h = ip6("fc00:1::2", "fc00:e::9", 43, 64, &srh(41, 0, &["fc00:e::9", "fc00:f::1"], &inner6(50)));
        h.truncate(40 + 40);
        h
    };
    let (e, c) = cached(&t, 0);
    assert_eq!(e, Entry::Headers(80));
    // The payload length is whatever the packet had: restored per packet.
    assert_eq!((&c[..4], &c[6..]), (&want_cache[..4], &want_cache[6..]));
    assert_eq!((n(&counters(&t, 0).to_function), n(&counters(&t, 0).updates)), (1, 1));

    // The same headers again: no update.
    run(&t, &mut w, ETH0, &from_chain(&to_sid(41, &inner6(50))));
    assert_eq!(n(&counters(&t, 0).updates), 1);

    // Part 2: the function's packet (another payload length) gets the headers back and
    // is forwarded to fc00:e::9 (hop limit 64 - 1).
    let returned = ip6("fc00:9::5", "fc00:9::6", 59, 48, &[0x11; 30]);
    let (v, out) = run(&t, &mut w, ETH1, &from_function(0x86dd, &returned));
    assert_eq!(v, Verdict::Tx(ETH0));
    let want = ip6("fc00:1::2", "fc00:e::9", 43, 63, &srh(41, 0, &["fc00:e::9", "fc00:f::1"], &returned));
    assert_eq!(out, eth(NEXT_MAC, [2, 0, 0, 0, 0, 1], 0x86dd, &want));
    let c = counters(&t, 0);
    assert_eq!((n(&c.from_function), n(&c.hits), n(&c.misses)), (1, 1, 1));
    // Nothing of this on the fast path.
    assert_eq!(w.fast_hits, 0);

    // A different SRH (another next segment) replaces the entry.
    let other = ip6("fc00:1::2", "fc00:f::1", 43, 64, &srh(41, 1, &["fc00:e::7", "fc00:f::1"], &inner6(50)));
    run(&t, &mut w, ETH0, &from_chain(&other));
    assert_eq!(n(&counters(&t, 0).updates), 2);
    assert_eq!(&cached(&t, 0).1[24..40], &v6("fc00:e::7").octets());
}

#[test]
fn end_ad_wrong_types_and_last_segment() {
    let t = tables(AD6);
    let mut w = Worker::new(&t);
    // Part 1: an IPv4 inner packet at an IPv6 proxy.
    let (v, _) = run(&t, &mut w, ETH0, &from_chain(&to_sid(4, &inner4(50))));
    assert_eq!(v, Verdict::Drop(DropReason::WrongNextHeader));
    assert_eq!(cached(&t, 0).0, Entry::Empty);
    // Part 2: an IPv4 packet back at an IPv6 proxy.
    run(&t, &mut w, ETH0, &from_chain(&to_sid(41, &inner6(50))));
    let (v, _) = run(&t, &mut w, ETH1, &from_function(0x0800, &inner4(50)));
    assert_eq!(v, Verdict::Drop(DropReason::WrongNextHeader));
    assert_eq!(drops(&t, 0, DropReason::WrongNextHeader), 2);
    // Segments Left 0: the draft's "ELSE Drop", counted as End counts it (End would
    // answer with a Parameter Problem), no ICMP error.
    let last = ip6("fc00:1::2", "fc00:f::1", 43, 64, &srh(41, 0, &["fc00:f::1"], &inner6(50)));
    assert_eq!(run(&t, &mut w, ETH0, &from_chain(&last)).0, Verdict::Drop(DropReason::ParamProblem));
    // No SRH at all: the same.
    let bare = ip6("fc00:1::2", "fc00:f::1", 41, 64, &inner6(50));
    assert_eq!(run(&t, &mut w, ETH0, &from_chain(&bare)).0, Verdict::Drop(DropReason::ParamProblem));
    assert_eq!(w.counters.icmp_sent, 0);
    assert_eq!(drops(&t, 0, DropReason::ParamProblem), 2);
    assert_eq!(n(&counters(&t, 0).to_function), 1);
}

#[test]
fn end_ad_ipv4_both_parts() {
    let t = tables(AD4);
    let mut w = Worker::new(&t);
    let (v, out) = run(&t, &mut w, ETH0, &from_chain(&to_sid(4, &inner4(50))));
    assert_eq!(v, Verdict::Tx(ETH1));
    let mut sent = inner4(49);
    // TTL - 1, checksum updated.
    sent[10..12].copy_from_slice(&[0, 0]);
    let sum = checksum(&sent[..20]);
    sent[10..12].copy_from_slice(&sum.to_be_bytes());
    assert_eq!(out, eth(FUNCTION_MAC, [2, 0, 0, 0, 0, 2], 0x0800, &sent));
    // Back: the cached headers, Next Header 4 in the SRH, forwarded to fc00:e::9.
    let (v, out) = run(&t, &mut w, ETH1, &from_function(0x0800, &sent));
    assert_eq!(v, Verdict::Tx(ETH0));
    let want = ip6("fc00:1::2", "fc00:e::9", 43, 63, &srh(4, 0, &["fc00:e::9", "fc00:f::1"], &sent));
    assert_eq!(out, eth(NEXT_MAC, [2, 0, 0, 0, 0, 1], 0x86dd, &want));
    // An IPv6 packet back at an IPv4 proxy.
    let (v, _) = run(&t, &mut w, ETH1, &from_function(0x86dd, &inner6(50)));
    assert_eq!(v, Verdict::Drop(DropReason::WrongNextHeader));
    // The function's own traffic to the router, its neighbour discovery and ARP are
    // the router's, as on any device.
    let ping = ip6("fc00:2::2", "fc00:2::1", 58, 64, &[128, 0, 0, 0, 0, 1, 0, 1]);
    assert_eq!(run(&t, &mut w, ETH1, &from_function(0x86dd, &ping)).0, Verdict::Local);
    let ns = ip6("fe80::2", "ff02::1:ff00:1", 58, 255, &[135, 0, 0, 0]);
    assert_eq!(run(&t, &mut w, ETH1, &from_function(0x86dd, &ns)).0, Verdict::Local);
    assert_eq!(run(&t, &mut w, ETH1, &from_function(0x0806, &[0; 28])).0, Verdict::Local);
    assert_eq!(
        run(&t, &mut w, ETH1, &from_function(0x0800, &ip4("10.0.2.2", "10.0.2.1", 64, &[0; 8]))).0,
        Verdict::Local
    );
}

#[test]
fn end_ead6_end_of_chain() {
    let t = tables(
        "ip -6 route add fc00:f::1/128 encap seg6local action End.EAD6 nh6 fc00:2::2 oif eth1 iif eth1 dev eth0\n",
    );
    let mut w = Worker::new(&t);
    // Segments Left 0: no End step, to the function, cache "end of chain".
    let last = ip6("fc00:1::2", "fc00:f::1", 43, 64, &srh(41, 0, &["fc00:f::1"], &inner6(50)));
    let (v, out) = run(&t, &mut w, ETH0, &from_chain(&last));
    assert_eq!(v, Verdict::Tx(ETH1));
    assert_eq!(&out[14..], &inner6(49)[..]);
    assert_eq!(cached(&t, 0).0, Entry::EndOfChain);
    // Back: plain IPv6, forwarded to fc00:9::6 by the main table (via eth0).
    let (v, out) = run(&t, &mut w, ETH1, &from_function(0x86dd, &inner6(49)));
    assert_eq!(v, Verdict::Tx(ETH0));
    assert_eq!(&out[14..], &inner6(48)[..]);
    assert_eq!((n(&counters(&t, 0).hits), n(&counters(&t, 0).from_function)), (1, 1));
    // Segments Left 1 again: headers cached, restored on the way back.
    run(&t, &mut w, ETH0, &from_chain(&to_sid(41, &inner6(50))));
    assert_eq!(cached(&t, 0).0, Entry::Headers(80));
    let (_, out) = run(&t, &mut w, ETH1, &from_function(0x86dd, &inner6(49)));
    assert_eq!(&out[14 + 24..14 + 40], &v6("fc00:e::9").octets());
    assert_eq!(n(&counters(&t, 0).updates), 2);
}

#[test]
fn end_ead4_end_of_chain() {
    let t = tables(
        "ip -6 route add fc00:f::1/128 encap seg6local action End.EAD4 nh4 10.0.2.2 oif eth1 iif eth1 dev eth0\n",
    );
    let mut w = Worker::new(&t);
    let bare = ip6("fc00:1::2", "fc00:f::1", 4, 64, &inner4(50));
    let (v, out) = run(&t, &mut w, ETH0, &from_chain(&bare));
    assert_eq!(v, Verdict::Tx(ETH1));
    assert_eq!(out[14 + 8], 49);
    assert_eq!(cached(&t, 0).0, Entry::EndOfChain);
    // Back as plain IPv4: 10.9.0.6 is routed via 10.0.2.2 (eth1).
    let (v, out) = run(&t, &mut w, ETH1, &from_function(0x0800, &out[14..]));
    assert_eq!((v, out[14 + 8]), (Verdict::Tx(ETH1), 48));
    // The wrong inner type at the last segment.
    let wrong = ip6("fc00:1::2", "fc00:f::1", 41, 64, &inner6(50));
    assert_eq!(run(&t, &mut w, ETH0, &from_chain(&wrong)).0, Verdict::Drop(DropReason::WrongNextHeader));
}

/// End.AS's part 2 builds what `encap seg6 mode encap segs` builds on a route.
#[test]
fn end_as_ipv6_matches_h_encaps() {
    let t = tables(
        "ip -6 route add fc00:f::1/128 encap seg6local action End.AS nh6 fc00:2::2 oif eth1 iif eth1 src fc00:1::77 segs fc00:e::1,fc00:e::2 dev eth0\n",
    );
    let mut w = Worker::new(&t);
    let (v, out) = run(&t, &mut w, ETH0, &from_chain(&to_sid(41, &inner6(50))));
    assert_eq!((v, &out[14..]), (Verdict::Tx(ETH1), &inner6(49)[..]));
    // Part 1 learned nothing: the return path is configured.
    let mut inner = inner6(49);
    inner[1] = 0xab; // traffic class and flow label bits
    inner[3] = 0x42;
    let (v, out) = run(&t, &mut w, ETH1, &from_function(0x86dd, &inner));
    assert_eq!(v, Verdict::Tx(ETH0));
    // The reference: H.Encaps on a route, same source, same packet from another device.
    let r = tables("sr tunsrc set fc00:1::77\nip -6 route add fc00:9::6/128 encap seg6 mode encap segs fc00:e::1,fc00:e::2 dev eth0\n");
    let mut rw = Worker::new(&r);
    let (rv, rout) = run(&r, &mut rw, 2, &eth([2, 0, 0, 0, 0, 3], [2, 0xcc, 0, 0, 0, 3], 0x86dd, &inner));
    assert_eq!(rv, Verdict::Tx(ETH0));
    assert_eq!(out, rout);
    // Checked field by field too: SA src, DA S1, SL 1, list [S2, S1], the outer hop
    // limit the inner one less one, the inner packet untouched.
    let want = ip6("fc00:1::77", "fc00:e::1", 43, 48, &srh(41, 1, &["fc00:e::2", "fc00:e::1"], &inner));
    assert_eq!((&out[14 + 4..], &out[14 + 8..14 + 40]), (&want[4..], &want[8..40]));
    assert_eq!(n(&counters(&t, 0).from_function), 1);
    // IPv4 back at an IPv6 End.AS.
    assert_eq!(run(&t, &mut w, ETH1, &from_function(0x0800, &inner4(5))).0, Verdict::Drop(DropReason::WrongNextHeader));
}

#[test]
fn end_as_ipv4_and_ethernet_match_h_encaps() {
    let t = tables(
        "ip -6 route add fc00:f::1/128 encap seg6local action End.AS nh4 10.0.2.2 oif eth1 iif eth1 src fc00:1::77 segs fc00:e::1 dev eth0\n",
    );
    let mut w = Worker::new(&t);
    let (v, _) = run(&t, &mut w, ETH0, &from_chain(&to_sid(4, &inner4(50))));
    assert_eq!(v, Verdict::Tx(ETH1));
    let (v, out) = run(&t, &mut w, ETH1, &from_function(0x0800, &inner4(30)));
    let r =
        tables("sr tunsrc set fc00:1::77\nip route add 10.9.0.6/32 encap seg6 mode encap segs fc00:e::1 dev eth0\n");
    let mut rw = Worker::new(&r);
    let (rv, rout) = run(&r, &mut rw, 2, &eth([2, 0, 0, 0, 0, 3], [2, 0xcc, 0, 0, 0, 3], 0x0800, &inner4(30)));
    assert_eq!((v, out), (rv, rout));

    // Ethernet: part 1 sends the inner frame unchanged out of oif; part 2 carries the
    // frame as H.Encaps.L2 does.
    let t = tables(
        "ip -6 route add fc00:f::1/128 encap seg6local action End.AS oif eth2 iif eth2 src fc00:1::77 segs fc00:e::1 dev eth0\n",
    );
    let mut w = Worker::new(&t);
    let frame = eth([2, 0xdd, 0, 0, 0, 4], [2, 0xee, 0, 0, 0, 5], 0x86dd, &inner6(50));
    let (v, out) = run(&t, &mut w, ETH0, &from_chain(&to_sid(143, &frame)));
    assert_eq!((v, out), (Verdict::Tx(2), frame.clone()));
    let (v, out) = run(&t, &mut w, 2, &frame);
    let r = tables(
        "sr tunsrc set fc00:1::77\nip -6 route add fc00:9::6/128 encap seg6 mode l2encap segs fc00:e::1 dev eth0\n",
    );
    let mut rw = Worker::new(&r);
    let (rv, rout) = run(&r, &mut rw, ETH1, &frame);
    assert_eq!(v, Verdict::Tx(ETH0));
    assert_eq!((v, out), (rv, rout));
    // An IPv6 inner packet at an Ethernet End.AS.
    assert_eq!(
        run(&t, &mut w, ETH0, &from_chain(&to_sid(41, &inner6(50)))).0,
        Verdict::Drop(DropReason::WrongNextHeader)
    );
}

#[test]
fn end_am_both_parts() {
    let t = tables(
        "ip -6 route add fc00:f::1/128 encap seg6local action End.AM nh6 fc00:2::2 oif eth1 iif eth1 dev eth0\n",
    );
    let mut w = Worker::new(&t);
    // Part 1: DA := Segment List[0], SL unchanged, hop limit - 1, to the function.
    let segs = ["fc00:9::6", "fc00:e::9", "fc00:f::1"];
    let pkt = ip6("fc00:1::2", "fc00:f::1", 43, 64, &srh(59, 2, &segs, &[0x77; 8]));
    let (v, out) = run(&t, &mut w, ETH0, &from_chain(&pkt));
    assert_eq!(v, Verdict::Tx(ETH1));
    let masq = ip6("fc00:1::2", "fc00:9::6", 43, 63, &srh(59, 2, &segs, &[0x77; 8]));
    assert_eq!(out, eth(FUNCTION_MAC, [2, 0, 0, 0, 0, 2], 0x86dd, &masq));
    // Part 2: SL 1, DA Segment List[1], hop limit - 1, forwarded to fc00:e::9.
    let (v, out) = run(&t, &mut w, ETH1, &from_function(0x86dd, &masq));
    assert_eq!(v, Verdict::Tx(ETH0));
    let back = ip6("fc00:1::2", "fc00:e::9", 43, 62, &srh(59, 1, &segs, &[0x77; 8]));
    assert_eq!(out, eth(NEXT_MAC, [2, 0, 0, 0, 0, 1], 0x86dd, &back));
    let c = counters(&t, 0);
    assert_eq!((n(&c.to_function), n(&c.from_function)), (1, 1));
    // A plain packet from the function: routed as on any device.
    let (v, out) = run(&t, &mut w, ETH1, &from_function(0x86dd, &inner6(9)));
    assert_eq!((v, out[14 + 7]), (Verdict::Tx(ETH0), 8));
    // Hop limit 1 at part 1: Time Exceeded, as End.X.
    let dying = ip6("fc00:1::2", "fc00:f::1", 43, 1, &srh(59, 2, &segs, &[0x77; 8]));
    let (v, out) = run(&t, &mut w, ETH0, &from_chain(&dying));
    assert_eq!((v, out[14 + 40], out[14 + 41]), (Verdict::Tx(ETH0), 3, 0));
    // Segments Left 0: dropped as End counts it.
    let last = ip6("fc00:1::2", "fc00:f::1", 43, 64, &srh(59, 0, &["fc00:f::1"], &[0x77; 8]));
    assert_eq!(run(&t, &mut w, ETH0, &from_chain(&last)).0, Verdict::Drop(DropReason::ParamProblem));
}

/// De-masquerading is an End step: the HMAC policy of the device the packet came back
/// on applies (RFC 8754 §2.1.2.1).
#[test]
fn end_am_return_obeys_the_iif_hmac_policy() {
    let t = tables(
        "ip -6 route add fc00:f::1/128 encap seg6local action End.AM nh6 fc00:2::2 oif eth1 iif eth1 dev eth0\n\
         sysctl -w net.ipv6.conf.eth1.seg6_require_hmac=1\n",
    );
    let mut w = Worker::new(&t);
    let segs = ["fc00:9::6", "fc00:e::9", "fc00:f::1"];
    let masq = ip6("fc00:1::2", "fc00:9::6", 43, 63, &srh(59, 2, &segs, &[0x77; 8]));
    let (v, _) = run(&t, &mut w, ETH1, &from_function(0x86dd, &masq));
    assert_eq!(v, Verdict::Drop(DropReason::HmacInvalid));
    assert_eq!(n(&counters(&t, 0).from_function), 0);
}

#[test]
fn end_am_proxies_share_an_iif_and_count_their_own() {
    let t = tables(
        "ip -6 route add fc00:f::1/128 encap seg6local action End.AM nh6 fc00:2::2 oif eth1 iif eth1 dev eth0\n\
         ip -6 route add fc00:f::2/128 encap seg6local action End.AM nh6 fc00:2::2 oif eth1 iif eth1 dev eth0\n",
    );
    let mut w = Worker::new(&t);
    let segs = ["fc00:9::6", "fc00:e::9", "fc00:f::2"];
    let masq = ip6("fc00:1::2", "fc00:9::6", 43, 63, &srh(59, 2, &segs, &[0x77; 8]));
    assert_eq!(run(&t, &mut w, ETH1, &from_function(0x86dd, &masq)).0, Verdict::Tx(ETH0));
    assert_eq!((n(&counters(&t, 0).from_function), n(&counters(&t, 1).from_function)), (0, 1));
}

#[test]
fn iif_rules_and_parameters() {
    let ad = |sid: &str, dev: &str| {
        format!("ip -6 route add {sid}/128 encap seg6local action End.AD nh6 fc00:2::2 oif eth1 iif {dev} dev eth0\n")
    };
    let am = |sid: &str, dev: &str| {
        format!("ip -6 route add {sid}/128 encap seg6local action End.AM nh6 fc00:2::2 oif eth1 iif {dev} dev eth0\n")
    };
    let e = build_err(&format!("{}{}", ad("fc00:f::1", "eth1"), ad("fc00:f::2", "eth1")));
    assert!(e.starts_with("line 16: iif eth1 is already the iif of End.AD fc00:f::1/128 (line 15)"), "{e}");
    let e = build_err(&format!("{}{}", am("fc00:f::1", "eth1"), ad("fc00:f::2", "eth1")));
    assert!(e.contains("already the iif of End.AM fc00:f::1/128"), "{e}");
    let e = build_err(&format!("{}{}", ad("fc00:f::1", "eth1"), am("fc00:f::2", "eth1")));
    assert!(e.contains("already the iif of End.AD"), "{e}");
    // Different devices, and End.AM together, are fine; iif may be oif.
    let t = tables(&format!(
        "{}{}{}{}",
        ad("fc00:f::1", "eth1"),
        ad("fc00:f::2", "eth2"),
        am("fc00:f::3", "eth0"),
        am("fc00:f::4", "eth0")
    ));
    assert_eq!(t.proxies.len(), 4);
    assert_eq!(t.proxy_in[0].as_ref().unwrap().proxies, vec![2, 3]);
    // End.AD needs a next hop of one family.
    let e = build_err("ip -6 route add fc00:f::1/128 encap seg6local action End.AD oif eth1 iif eth1 dev eth0\n");
    assert!(e.contains("End.AD requires `nh6 ADDR` or `nh4 ADDR`"), "{e}");
    let e = build_err("ip -6 route add fc00:f::1/128 encap seg6local action End.AS nh6 fc00:2::2 nh4 10.0.2.2 oif eth1 iif eth1 src fc00::1 segs fc00::2 dev eth0\n");
    assert!(e.contains("not both"), "{e}");
}

#[test]
fn config_errors_point_at_the_word() {
    let parse = |l: &str| sr6_config::parse_str(&format!("{BASE}{l}"), "t.conf").err().map(|e| e.to_string());
    let e = parse(
        "ip -6 route add fc00:f::1/128 encap seg6local action End.EAD4 nh6 fc00:2::2 oif eth1 iif eth1 dev eth0\n",
    )
    .unwrap();
    assert!(e.starts_with("t.conf:15:") && e.contains("End.EAD4 does not take `nh6`"), "{e}");
    let e =
        parse("ip -6 route add fc00:f::1/128 encap seg6local action End.AM nh6 fc00:2::2 oif eth1 dev eth0\n").unwrap();
    assert!(e.contains("End.AM requires iif DEV"), "{e}");
    let e =
        parse("ip -6 route add fc00:f::1/128 encap seg6local action End.AS oif eth1 iif eth1 src fc00::1 dev eth0\n")
            .unwrap();
    assert!(e.contains("requires segs"), "{e}");
    let e = parse("ip -6 route add fc00:f::1/128 encap seg6local action End.AD nh6 fc00:2::2 oif eth1 iif eth1 src fc00::1 dev eth0\n").unwrap();
    assert!(e.contains("End.AD does not take `src`"), "{e}");
}

#[test]
fn the_configuration_prints_back() {
    let line = "ip -6 route add fc00:f::1/128 encap seg6local action End.AS nh6 fc00:2::2 oif eth1 iif eth1 src fc00:1::77 segs fc00:e::1,fc00:e::2 dev eth0\n";
    let t = tables(line);
    let s = &t.sids[t.proxies[0].sid as usize];
    assert_eq!(s.action.to_string(), "End.AS nh6 fc00:2::2 oif eth1 iif eth1 src fc00:1::77 segs fc00:e::1,fc00:e::2");
}

#[test]
fn a_rebuild_keeps_the_cache() {
    let t = tables(AD6);
    let mut w = Worker::new(&t);
    run(&t, &mut w, ETH0, &from_chain(&to_sid(41, &inner6(50))));
    let mut t2 = tables(&format!("{AD6}ip -6 route add fc00:77::/64 via fc00:1::2 dev eth0\n"));
    assert_eq!(cached(&t2, 0).0, Entry::Empty);
    t2.adopt_proxies(&t);
    assert_eq!(cached(&t2, 0).0, Entry::Headers(80));
    // Another iif: a different proxy, a new cache.
    let mut t3 = tables(
        "ip -6 route add fc00:f::1/128 encap seg6local action End.AD nh6 fc00:2::2 oif eth1 iif eth2 dev eth0\n",
    );
    t3.adopt_proxies(&t);
    assert_eq!(cached(&t3, 0).0, Entry::Empty);
}

#[test]
fn headers_over_the_cache_are_dropped() {
    let t = tables(AD6);
    let mut w = Worker::new(&t);
    // 40 + 8 + 16 * 22 = 400 bytes of headers.
    let mut segs = vec!["fc00:e::9"; 21];
    segs.push("fc00:f::1");
    let pkt = ip6("fc00:1::2", "fc00:f::1", 43, 64, &srh(41, 21, &segs, &inner6(50)));
    assert_eq!(run(&t, &mut w, ETH0, &from_chain(&pkt)).0, Verdict::Drop(DropReason::ProxyHeadersTooLong));
    assert_eq!(drops(&t, 0, DropReason::ProxyHeadersTooLong), 1);
    // 40 + 8 + 16 * 21 = 384: cached and restored.
    let pkt = ip6("fc00:1::2", "fc00:f::1", 43, 64, &srh(41, 20, &segs[1..], &inner6(50)));
    assert_eq!(run(&t, &mut w, ETH0, &from_chain(&pkt)).0, Verdict::Tx(ETH1));
    let (v, out) = run(&t, &mut w, ETH1, &from_function(0x86dd, &inner6(49)));
    assert_eq!((v, out.len()), (Verdict::Tx(ETH0), 14 + 384 + inner6(49).len()));
}

proptest! {
    /// Whatever arrives — on the function's device or for the SID — nothing panics.
    #[test]
    fn malformed_input_never_panics(body in proptest::collection::vec(any::<u8>(), 0..300), sl in 0u8..4, kind in 0usize..5, v4 in any::<bool>()) {
        let lines = [
            AD6,
            AD4,
            "ip -6 route add fc00:f::1/128 encap seg6local action End.EAD6 nh6 fc00:2::2 oif eth1 iif eth1 dev eth0\n",
            "ip -6 route add fc00:f::1/128 encap seg6local action End.AM nh6 fc00:2::2 oif eth1 iif eth1 dev eth0\n",
            "ip -6 route add fc00:f::1/128 encap seg6local action End.AS oif eth1 iif eth1 src fc00:1::77 segs fc00:e::1 dev eth0\n",
        ];
        let t = tables(lines[kind]);
        let mut w = Worker::new(&t);
        // Random bytes as a whole frame, as an IP packet on each device, and behind a
        // valid SRH to the SID.
        for dev in [ETH0, ETH1] {
            run(&t, &mut w, dev, &body);
            run(&t, &mut w, dev, &from_function(if v4 { 0x0800 } else { 0x86dd }, &body));
        }
        let pkt = ip6("fc00:1::2", "fc00:f::1", 43, 64, &srh(body.first().copied().unwrap_or(41), sl, &["fc00:e::9", "fc00:f::1"], &body));
        run(&t, &mut w, ETH0, &from_chain(&pkt));
        run(&t, &mut w, ETH1, &from_function(0x86dd, &body));
        let mut cut = pkt.clone();
        cut.truncate(40 + usize::from(sl) * 7);
        run(&t, &mut w, ETH0, &from_chain(&cut));
    }
}
