//! The fast path (crates/core/src/pipeline/fast.rs) must be invisible: for every frame,
//! the general path and the fast path produce the same verdict, the same bytes and the
//! same counters. Frames: the bundled example's, variants built to hit each fast case
//! (End/End.X/End.T/End.DX6/End.DT6, H.Encaps/.Red, H.Insert/.Red, transit), and random
//! mutations of all of them.

mod common;

use proptest::prelude::*;
use sr6_core::packet::PacketBuf;
use sr6_core::pipeline::Worker;
use sr6_core::tables::Tables;

const CONFIG: &str = "\
ip link set eth0 address 02:00:00:00:00:a0
ip -6 addr add fc00:a::1/64 dev eth0
ip -6 addr add fc00:12::1/64 dev eth1
ip -6 addr add fc00:23::1/64 dev eth2
ip -6 neigh add fc00:a::2 lladdr 02:00:00:00:0a:02 dev eth0
ip -6 neigh add fc00:12::2 lladdr 02:00:00:00:12:02 dev eth1
ip -6 neigh add fc00:23::3 lladdr 02:00:00:00:23:03 dev eth2
ip -6 neigh add fc00:23::77 lladdr 02:00:00:00:23:77 dev eth2
ip -6 route add fc00:2::/32 via fc00:12::2 dev eth1
ip -6 route add fc00:3::/32 via fc00:23::3 dev eth2
ip -6 route add fc00:3::/32 via fc00:12::2 dev eth1 table 100
ip -6 route add fc00:5::/64 encap seg6 mode encap segs fc00:2::e,fc00:3::d6 dev eth1
ip -6 route add fc00:6::/64 encap seg6 mode encap.red segs fc00:2::e,fc00:3::d6 dev eth1
ip -6 route add fc00:7::/64 encap seg6 mode inline segs fc00:2::e,fc00:3::d6 dev eth1
ip -6 route add fc00:8::/64 encap seg6 mode inline.red segs fc00:2::e dev eth1
ip -6 route add fc00:9::/64 encap seg6 mode encap.red segs fc00:3::1 dev eth1
ip -6 route add fc00:1::e/128 encap seg6local action End dev eth1
ip -6 route add fc00:1::e7/128 encap seg6local action End flavors psp dev eth1
ip -6 route add fc00:1::c3/128 encap seg6local action End.X nh6 fc00:23::3 dev eth2
ip -6 route add fc00:1::7/128 encap seg6local action End.T table 100 dev eth1
ip -6 route add fc00:1::d6/128 encap seg6local action End.DX6 nh6 fc00:a::2 dev eth0
ip -6 route add fc00:1::d7/128 encap seg6local action End.DT6 table 100 dev eth0
sysctl -w net.ipv6.conf.eth0.seg6_require_hmac=0
";

fn tables() -> Tables {
    Tables::build(&sr6_config::parse_str(CONFIG, "fast.conf").unwrap()).unwrap().0
}

fn a(s: &str) -> [u8; 16] {
    s.parse::<std::net::Ipv6Addr>().unwrap().octets()
}

/// Ethernet + IPv6 (+ SRH with `segs` in header order) + `payload`.
fn frame(src: &str, dst: &str, hl: u8, srh: Option<(&[&str], u8, u8)>, payload: &[u8]) -> Vec<u8> {
    let mut f = vec![0x02, 0, 0, 0, 0, 0xa0, 0x02, 0, 0, 0, 0x0a, 0x02, 0x86, 0xdd];
    let srh_bytes = srh.map(|(segs, sl, nh)| {
        let mut s = vec![nh, (segs.len() * 2) as u8, 4, sl, (segs.len() - 1) as u8, 0, 0, 0];
        for x in segs {
            s.extend_from_slice(&a(x));
        }
        s
    });
    let srh_len = srh_bytes.as_ref().map_or(0, |s| s.len());
    let plen = (srh_len + payload.len()) as u16;
    f.extend_from_slice(&[0x60, 0x12, 0x34, 0x56]);
    f.extend_from_slice(&plen.to_be_bytes());
    f.push(if srh_bytes.is_some() { 43 } else { 17 });
    f.push(hl);
    f.extend_from_slice(&a(src));
    f.extend_from_slice(&a(dst));
    if let Some(s) = srh_bytes {
        f.extend_from_slice(&s);
    }
    f.extend_from_slice(payload);
    f
}

fn inner6(dst: &str, hl: u8) -> Vec<u8> {
    let f = frame("fc00:b::5", dst, hl, None, &[0, 1, 0, 2, 0, 12, 0, 0, 1, 2, 3, 4]);
    f[14..].to_vec()
}

fn frames() -> Vec<Vec<u8>> {
    let udp: &[u8] = &[0, 1, 0, 2, 0, 12, 0, 0, 9, 9, 9, 9];
    let mut v = common::example_frames();
    for hl in [64, 2, 1] {
        v.push(frame("fc00:a::2", "fc00:2::9", hl, None, udp));
        v.push(frame("fc00:a::2", "fc00:3::9", hl, None, udp));
        v.push(frame("fc00:a::2", "fc00:23::77", hl, None, udp));
        for d in ["fc00:5::1", "fc00:6::1", "fc00:7::1", "fc00:8::1", "fc00:9::1"] {
            v.push(frame("fc00:a::2", d, hl, None, udp));
        }
        for sid in ["fc00:1::e", "fc00:1::e7", "fc00:1::c3", "fc00:1::7"] {
            v.push(frame("fc00:9::1", sid, hl, Some((&["fc00:3::1", "fc00:2::1", sid], 2, 17)), udp));
            v.push(frame("fc00:9::1", sid, hl, Some((&["fc00:3::1", sid], 1, 17)), udp));
            v.push(frame("fc00:9::1", sid, hl, Some((&["fc00:3::1", sid], 3, 17)), udp));
            v.push(frame("fc00:9::1", sid, hl, Some((&["fc00:3::1", sid], 0, 17)), udp));
        }
        for sid in ["fc00:1::d6", "fc00:1::d7"] {
            v.push(frame("fc00:9::1", sid, hl, Some((&[sid], 0, 41)), &inner6("fc00:3::4", 9)));
            v.push(frame("fc00:9::1", sid, hl, Some((&[sid], 0, 41)), &inner6("fc00:3::4", 1)));
            v.push(frame("fc00:9::1", sid, hl, Some((&[sid, "fc00:2::1"], 1, 41)), &inner6("fc00:3::4", 9)));
        }
    }
    v
}

fn run(t: &Tables, fast: bool, f: &[u8], dev: u16) -> (PacketBuf, Worker) {
    let mut w = Worker::new(t);
    w.fast_path = fast;
    let mut b = PacketBuf::new();
    b.load(f, dev);
    w.process_batch(t, std::slice::from_mut(&mut b));
    (b, w)
}

fn same(t: &Tables, f: &[u8], dev: u16) -> Result<(), TestCaseError> {
    let (b1, w1) = run(t, true, f, dev);
    let (b2, w2) = run(t, false, f, dev);
    prop_assert_eq!(b1.verdict, b2.verdict, "verdict for {:02x?}", f);
    prop_assert_eq!(b1.data(), b2.data(), "bytes for {:02x?}", f);
    prop_assert_eq!(&w1.counters, &w2.counters, "counters for {:02x?}", f);
    Ok(())
}

#[test]
fn fast_path_equals_general_path_on_crafted_frames() {
    let t = tables();
    let fs = frames();
    let mut fast_hits = 0;
    for f in &fs {
        for dev in 0..3 {
            same(&t, f, dev).unwrap();
        }
        // The fast path must really be taken for many of them, or this proves nothing.
        fast_hits += run(&t, true, f, 0).1.fast_hits;
        assert_eq!(run(&t, false, f, 0).1.fast_hits, 0);
    }
    assert!(fast_hits >= 30, "the fast path handled only {fast_hits} of {} frames", fs.len());
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 4000, ..ProptestConfig::default() })]

    #[test]
    fn fast_path_equals_general_path_on_mutations(which in 0usize..1000,
            flips in prop::collection::vec((0usize..120, any::<u8>()), 0..4), cut in 0usize..300, dev in 0u16..3) {
        let t = tables();
        let fs = frames();
        let mut f = fs[which % fs.len()].clone();
        for (at, v) in flips {
            let i = at % f.len();
            f[i] ^= v;
        }
        if cut < f.len() && cut % 3 == 0 {
            f.truncate(cut.max(1));
        }
        same(&t, &f, dev)?;
    }
}
