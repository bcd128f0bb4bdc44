//! The XDP tier (crates/xdp/c/fast.c, its maps filled by `sr6_xdp::Mirror` from
//! `Tables::offload6`) must equal the general path wherever it acts: every frame of the
//! fast path's corpus, and random mutations of them, run through the program in the
//! kernel (`BPF_PROG_TEST_RUN`, as received on each device) and through sr6's general
//! path (`Worker` with the fast path off, as `sr6 pcap` runs it). Where the program
//! forwards a frame (`XDP_REDIRECT`), the general path sends the same bytes out of the
//! same device (the tier's per-device counter says which); everything else it leaves
//! unchanged, to the general path (here `XDP_DROP`, the test's "no socket" action) or
//! to the kernel (`XDP_PASS`: neighbour discovery, multicast, non-IP).
//!
//! Root only (BPF programs, a network namespace of veth devices for the device map):
//! `#[ignore]`d, run with `--include-ignored`.

mod common;

use std::cell::RefCell;
use std::ffi::CString;

use common::fast_corpus::*;
use proptest::prelude::*;
use sr6_core::packet::{PacketBuf, Verdict};
use sr6_core::pipeline::Worker;
use sr6_core::tables::Tables;
use sr6_xdp::{Loaded, Mirror};

const XDP_DROP: u32 = 1;
const XDP_PASS: u32 = 2;
const XDP_REDIRECT: u32 = 4;

struct Fixture {
    t: Tables,
    mirror: Mirror,
    prog: Loaded,
    /// By device index: the veth device standing for it.
    ifindex: Vec<u32>,
}

/// This thread's own network namespace with a veth device per device of the tables
/// (the device map only takes devices that exist), the maps synced, the program loaded.
fn fixture() -> Fixture {
    // SAFETY: unshare(2) with a constant flag; it affects the calling thread only.
    assert_eq!(unsafe { libc::unshare(libc::CLONE_NEWNET) }, 0, "unshare: {}", std::io::Error::last_os_error());
    let t = tables();
    let mut ifindex = Vec::new();
    for (i, _) in t.devices.iter().enumerate() {
        let name = format!("sr6x{i}");
        let st = std::process::Command::new("ip")
            .args(["link", "add", &name, "type", "veth", "peer", "name", &format!("sr6y{i}")])
            .status()
            .unwrap();
        assert!(st.success(), "ip link add {name} type veth");
        let c = CString::new(name).unwrap();
        // SAFETY: a NUL-terminated name.
        let ix = unsafe { libc::if_nametoindex(c.as_ptr()) };
        assert_ne!(ix, 0);
        ifindex.push(ix);
    }
    let mut mirror = Mirror::new().unwrap();
    let ix: Vec<Option<u32>> = ifindex.iter().map(|&i| Some(i)).collect();
    let stats = mirror.sync(&t, &ix, &vec![true; ix.len()]).unwrap();
    assert!(stats.switched && stats.routes > 50 && stats.devices >= 3, "{stats:?}");
    let prog = mirror.load().unwrap();
    prog.map("conf").unwrap().update(&0u32.to_ne_bytes(), &XDP_DROP.to_ne_bytes()).unwrap();
    let fx = Fixture { t, mirror, prog, ifindex };
    // The HMACs the general path verifies over the corpus, handed to the tier as `sr6
    // run`'s workers hand them: until then every SRH with an HMAC is the general path's.
    let udp: &[u8] = &[0, 1, 0, 2, 0, 12, 0, 0, 9, 9, 9, 9];
    let hmac =
        with_hmac(&frame("fc00:9::1", "fc00:1::e", 64, Some((&["fc00:3::1", "fc00:1::e"], 1, 17)), udp), 7, 0, true);
    assert_eq!(xdp(&fx, &hmac, 0).0, XDP_DROP, "an HMAC taken before it was verified");
    let n = hmac_verified(&fx.t, &fx.mirror);
    assert!(n >= 20, "the general path verified only {n} HMAC texts of the corpus");
    fx
}

/// Runs every frame of the corpus through the general path on every device, handing
/// the HMAC texts it verifies to the tier's map; how many.
fn hmac_verified(t: &Tables, mirror: &Mirror) -> usize {
    let export = mirror.hmac_export().unwrap();
    sr6_core::hmac::export_verified(true);
    let mut n = 0;
    for f in frames() {
        for dev in 0..DEVS {
            general(t, &f, dev);
            sr6_core::hmac::drain_verified(|v| {
                export.insert(v).unwrap();
                n += 1;
            });
        }
    }
    sr6_core::hmac::export_verified(false);
    n
}

thread_local! {
    static FIXTURE: RefCell<Option<Fixture>> = const { RefCell::new(None) };
}

fn with_fixture<R>(f: impl FnOnce(&Fixture) -> R) -> R {
    FIXTURE.with(|c| {
        let mut c = c.borrow_mut();
        f(c.get_or_insert_with(fixture))
    })
}

/// The general path's verdict and bytes for frame `f` received on `dev`.
fn general(t: &Tables, f: &[u8], dev: u16) -> (Verdict, Vec<u8>) {
    let mut w = Worker::new(t);
    w.fast_path = false;
    let mut b = PacketBuf::new();
    b.load(f, dev);
    w.process_batch(t, dev, std::slice::from_mut(&mut b));
    (b.verdict, b.data().to_vec())
}

/// What the program did with `f` received on `dev`: its verdict, the frame after it,
/// and the device it was sent out of (by the tier's counters).
fn xdp(fx: &Fixture, f: &[u8], dev: u16) -> (u32, Vec<u8>, Option<u16>) {
    let n = fx.t.devices.len();
    let before = fx.mirror.counts(0, n).unwrap().tx;
    let ingress = fx.ifindex.get(usize::from(dev)).copied().unwrap_or(1);
    let (v, out) = sr6_io::bpf::test_run_on(&fx.prog.prog, f, ingress).unwrap();
    let after = fx.mirror.counts(0, n).unwrap().tx;
    let sent: Vec<u16> = (0..n).filter(|&d| after[d].0 != before[d].0).map(|d| d as u16).collect();
    assert!(sent.len() <= 1, "counted out of {sent:?}");
    (v, out, sent.first().copied())
}

/// Whether the program forwarded `f`; fails where it differs from the general path.
fn same(fx: &Fixture, f: &[u8], dev: u16) -> Result<bool, TestCaseError> {
    // (The kernel runs no program on a frame shorter than an Ethernet header.)
    if f.len() < 14 {
        return Ok(false);
    }
    let (v, out, sent) = xdp(fx, f, dev);
    match v {
        XDP_REDIRECT => {
            let (gv, gout) = general(&fx.t, f, dev);
            let sent = sent.expect("a redirect is counted");
            prop_assert_eq!(gv, Verdict::Tx(sent), "verdict for {:02x?} on {}", f, dev);
            prop_assert_eq!(out, gout, "bytes for {:02x?} on {}", f, dev);
            Ok(true)
        }
        XDP_DROP | XDP_PASS => {
            prop_assert_eq!(&out[..], f, "a frame left to sr6 or the kernel changed");
            prop_assert_eq!(sent, None);
            Ok(false)
        }
        v => Err(TestCaseError::fail(format!("XDP verdict {v} for {f:02x?} on {dev}"))),
    }
}

#[test]
#[ignore = "needs root (BPF_PROG_LOAD, a network namespace)"]
fn xdp_tier_equals_general_path_on_crafted_frames() {
    with_fixture(|fx| {
        let fs = frames();
        let mut forwarded = 0;
        for f in &fs {
            for dev in 0..DEVS {
                forwarded += usize::from(same(fx, f, dev).unwrap());
            }
        }
        // The tier must really act on many of them, or this proves nothing.
        assert!(forwarded >= 20, "the XDP tier forwarded only {forwarded} of {} frames", fs.len() * DEVS as usize);
    });
}

#[test]
#[ignore = "needs root (BPF_PROG_LOAD, a network namespace)"]
fn xdp_tier_forwards_transit_and_srv6_endpoints() {
    with_fixture(|fx| {
        let udp: &[u8] = &[0, 1, 0, 2, 0, 12, 0, 0, 9, 9, 9, 9];
        // Transit to fc00:2::/32 via eth1; End at fc00:1::e to fc00:3::/32 via eth2;
        // End.T at fc00:1::7, table 100, where fc00:3::/32 is via eth1; End.X at
        // fc00:1::c3 to fc00:23::3 on eth2.
        let transit = frame("fc00:a::2", "fc00:2::9", 64, None, udp);
        let end = frame("fc00:a::2", "fc00:1::e", 64, Some((&["fc00:3::9", "fc00:1::e"], 1, 17)), udp);
        let end_t = frame("fc00:a::2", "fc00:1::7", 64, Some((&["fc00:3::9", "fc00:1::7"], 1, 17)), udp);
        let end_x = frame("fc00:a::2", "fc00:1::c3", 64, Some((&["fc00:3::9", "fc00:1::c3"], 1, 17)), udp);
        // IPv4 transit: 20.1.0.0/16 via 10.0.23.9 on eth2.
        let transit4 = frame4(&ip4([20, 1, 0, 5], 64, 0, false, udp));
        // End.DX6 at fc00:1::d6 to fc00:a::2 on eth0; End.DT6 at fc00:1::d7, table 100.
        let dx6 = frame("fc00:9::1", "fc00:1::d6", 64, Some((&["fc00:1::d6"], 0, 41)), &inner6("fc00:3::4", 9));
        let dt6 = frame("fc00:9::1", "fc00:1::d7", 64, Some((&["fc00:1::d7"], 0, 41)), &inner6("fc00:3::4", 9));
        // PSP (fc00:1::e7 End, fc00:1::c4 End.X, fc00:1::78 End.T of table 100): with
        // Segments Left 1 the SRH goes; with 2, the rewrite of End.
        let psp = |sid: &str, sl: u8| {
            let segs: &[&str] = if sl == 1 { &["fc00:3::9", sid] } else { &["fc00:3::9", "fc00:3::8", sid] };
            frame("fc00:a::2", sid, 64, Some((segs, sl, 17)), udp)
        };
        let (end_psp, end_x_psp, end_t_psp) = (psp("fc00:1::e7", 1), psp("fc00:1::c4", 1), psp("fc00:1::78", 1));
        let end_psp2 = psp("fc00:1::e7", 2);
        // End.DX4 at fc00:1::d4 to 10.0.12.2 on eth1; End.DT4 at fc00:1::a4 and End.DT46
        // at fc00:1::a6, table 200 (20.0.0.0/8 via 10.0.23.9 on eth2, fc00:3::/32 via
        // fc00:23::3 on eth2).
        let v4 = |sid: &str| frame("fc00:9::1", sid, 64, Some((&[sid], 0, 4)), &ip4([20, 9, 9, 9], 9, 0, false, udp));
        let (dx4, dt4, dt46_4) = (v4("fc00:1::d4"), v4("fc00:1::a4"), v4("fc00:1::a6"));
        // Head-end policies (fc00:5::/64 H.Encaps, 6 H.Encaps.Red, 7 H.Insert, 8
        // H.Insert.Red, 9 H.Encaps.Red with no SRH, 31 H.Encaps.L2, 45 H.Encaps with an
        // HMAC TLV, 46 of two segments with one, 47 of six segments): out of eth1 towards fc00:2::e, fc00:9's out of eth2 to fc00:3::1.
        let heads: Vec<(Vec<u8>, u16)> = [
            ("fc00:5::1", 1),
            ("fc00:6::1", 1),
            ("fc00:7::1", 1),
            ("fc00:8::1", 1),
            ("fc00:9::1", 2),
            ("fc00:31::1", 1),
            ("fc00:45::1", 1),
            ("fc00:46::1", 1),
            ("fc00:47::1", 1),
        ]
        .iter()
        .map(|(d, out)| (frame("fc00:a::2", d, 64, None, udp), *out))
        .collect();
        // NEXT-C-SID (fast_path.conf): End F3216 under fc00:60::/32 to C-SID 2 (via eth1),
        // End.X to fc00:23::3 (eth2), End.T of table 100 to C-SID 3 (via eth1 there);
        // 16/16 under fc61::/16 and 112/8 under fc62::/16 (via eth1); End with an SRH.
        let csids: Vec<(Vec<u8>, u16)> =
            [("fc00:60:e:2::", 1), ("fc00:60:c3:2::", 2), ("fc00:60:7e:3::", 1), ("fc61:e:2::", 1), ("fc62::ee02", 1)]
                .iter()
                .map(|(d, out)| (frame("fc00:a::2", d, 64, None, udp), *out))
                .chain([(
                    frame("fc00:9::1", "fc00:60:e:2::", 64, Some((&["fc00:3::1", "fc00:60:e:2::"], 1, 17)), udp),
                    1,
                )])
                .collect();
        let dt46_6 = frame("fc00:9::1", "fc00:1::a6", 64, Some((&["fc00:1::a6"], 0, 41)), &inner6("fc00:3::4", 9));
        for (f, out) in [
            (&transit, 1u16),
            (&end, 2),
            (&end_t, 1),
            (&end_x, 2),
            (&transit4, 2),
            (&dx6, 0),
            (&dt6, 1),
            (&end_psp, 2),
            (&end_x_psp, 2),
            (&end_t_psp, 1),
            (&end_psp2, 2),
            (&dx4, 1),
            (&dt4, 2),
            (&dt46_4, 2),
            (&dt46_6, 2),
        ]
        .into_iter()
        .chain(heads.iter().map(|(f, out)| (f, *out)))
        .chain(csids.iter().map(|(f, out)| (f, *out)))
        {
            assert!(same(fx, f, 0).unwrap(), "not forwarded: {f:02x?}");
            assert_eq!(xdp(fx, f, 0).2, Some(out));
        }
        // The headers in front: H.Encaps of two segments 94 - 14 bytes, of one with the
        // HMAC TLV 118 - 14, of two with it 134 - 14, of six 158 - 14.
        for (f, grow) in [(&heads[0].0, 80), (&heads[6].0, 104), (&heads[7].0, 120), (&heads[8].0, 144)] {
            assert_eq!(xdp(fx, f, 0).1.len(), f.len() + grow);
        }
        // The SRH popped: 40 bytes shorter (8 + 2 segments), Next Header UDP.
        let (_, popped, _) = xdp(fx, &end_psp, 0);
        assert_eq!((popped.len(), popped[20]), (end_psp.len() - 40, 17));
        // The next C-SID in place: fc00:60:2::, hop limit 63.
        let (_, shifted, _) = xdp(fx, &csids[0].0, 0);
        assert_eq!((&shifted[38..54], shifted[21]), (&a("fc00:60:2::")[..], 63));
        // The IPv4 packet exposed: EtherType IPv4, TTL 8, a right checksum.
        let (_, inner, _) = xdp(fx, &dt4, 0);
        assert_eq!((&inner[12..14], inner[14 + 8]), (&[8u8, 0][..], 8));
        let sum: u32 = inner[14..34].chunks(2).map(|w| u32::from(u16::from_be_bytes([w[0], w[1]]))).sum();
        assert_eq!((sum & 0xffff) + (sum >> 16), 0xffff, "checksum of {:02x?}", &inner[14..34]);
        // SRHs with an HMAC the general path verified (the fixture): End, End.X, End.T,
        // PSP and End.DX6, on eth0 (verify if present) and eth3 (required), SHA-256 and
        // SHA-1; the PSP frame leaves without its SRH, HMAC TLV included.
        let seg2 = |sid: &str| frame("fc00:9::1", sid, 64, Some((&["fc00:3::1", sid], 1, 17)), udp);
        let hmac_end = with_hmac(&seg2("fc00:1::e"), 7, 0, true);
        for (f, out) in [
            (hmac_end.clone(), 2u16),
            (with_hmac(&seg2("fc00:1::c3"), 8, 0, true), 2),
            (with_hmac(&seg2("fc00:1::7"), 7, 8, true), 1),
            (with_hmac(&seg2("fc00:1::e7"), 7, 0, true), 2),
            (
                with_hmac(
                    &frame("fc00:9::1", "fc00:1::d6", 64, Some((&["fc00:1::d6"], 0, 41)), &inner6("fc00:3::4", 9)),
                    7,
                    8,
                    true,
                ),
                0,
            ),
        ] {
            for dev in [0, 3] {
                assert!(same(fx, &f, dev).unwrap(), "not forwarded on {dev}: {f:02x?}");
                assert_eq!(xdp(fx, &f, dev).2, Some(out));
            }
        }
        let (_, popped, _) = xdp(fx, &with_hmac(&seg2("fc00:1::e7"), 7, 0, true), 0);
        assert_eq!((popped.len(), popped[20]), (end_psp.len() - 40, 17));
        // Left to the general path: a wrong HMAC, a key that does not exist, a text
        // not verified (another source), a PadN TLV after the HMAC TLV; on eth3, an
        // SRH without one.
        let mut other_src = hmac_end.clone();
        other_src[37] ^= 1;
        let mut padded = hmac_end.clone();
        padded.splice(134..134, [1, 6, 0, 0, 0, 0, 0, 0]);
        padded[55] += 1;
        padded[19] += 8;
        for f in
            [with_hmac(&seg2("fc00:1::e"), 7, 0, false), with_hmac(&seg2("fc00:1::e"), 9, 0, true), other_src, padded]
        {
            for dev in [0, 3] {
                assert_eq!(xdp(fx, &f, dev).0, XDP_DROP, "taken on {dev}: {f:02x?}");
                assert!(!same(fx, &f, dev).unwrap());
            }
        }
        // On eth2, which ignores HMACs, a wrong one is taken.
        assert!(same(fx, &with_hmac(&seg2("fc00:1::e"), 7, 0, false), 2).unwrap());
        assert_eq!(xdp(fx, &end, 3).0, XDP_DROP, "an SRH without an HMAC taken where one is required");
        assert_eq!(xdp(fx, &transit, 3).0, XDP_REDIRECT, "transit is no SID's: no HMAC asked");
        // Seven segments (174 bytes of headers): the general path's.
        assert_eq!(xdp(fx, &frame("fc00:a::2", "fc00:48::1", 64, None, udp), 0).0, XDP_DROP);
        // Hop limit 1: the general path's (an ICMP error).
        let (v, _, _) = xdp(fx, &frame("fc00:a::2", "fc00:2::9", 1, None, udp), 0);
        assert_eq!(v, XDP_DROP);
        // Each SID's counter: the frame as received, once.
        for (s, f) in [
            ("fc00:1::e", &end),
            ("fc00:1::d6", &dx6),
            ("fc00:1::d7", &dt6),
            ("fc00:1::e7", &end_psp),
            ("fc00:1::a4", &dt4),
        ] {
            let e: std::net::Ipv6Addr = s.parse().unwrap();
            let sid = fx.t.sids.iter().position(|s| s.prefix == sr6_core::spec::Prefix::V6(e, 128)).unwrap();
            let before = fx.mirror.counts(fx.t.sids.len(), 0).unwrap().sids[sid];
            assert_eq!(xdp(fx, f, 0).0, XDP_REDIRECT, "{s}");
            let after = fx.mirror.counts(fx.t.sids.len(), 0).unwrap().sids[sid];
            assert_eq!((after.0 - before.0, after.1 - before.1), (1, f.len() as u64), "{s}");
        }
    });
}

#[test]
#[ignore = "needs root (BPF_PROG_LOAD, a network namespace)"]
fn an_hmac_verified_under_a_key_that_is_gone_is_not_taken() {
    let mut fx = fixture();
    let udp: &[u8] = &[0, 1, 0, 2, 0, 12, 0, 0, 9, 9, 9, 9];
    let f =
        with_hmac(&frame("fc00:9::1", "fc00:1::e", 64, Some((&["fc00:3::1", "fc00:1::e"], 1, 17)), udp), 7, 0, true);
    assert_eq!(xdp(&fx, &f, 0).0, XDP_REDIRECT);
    // Key 7 set again (the same secret: a new key all the same, as after a reload), then
    // to another secret: the text verified under the old key is not taken.
    let ix: Vec<Option<u32>> = fx.ifindex.iter().map(|&i| Some(i)).collect();
    let all = vec![true; ix.len()];
    for secret in ["fast-path-secret", "another-secret"] {
        let conf = CONFIG.replace("hmac set 7 sha256 fast-path-secret", &format!("hmac set 7 sha256 {secret}"));
        let t2 = Tables::build(&sr6_config::parse_str(&conf, "fast.conf").unwrap()).unwrap().0;
        assert!(fx.mirror.sync(&t2, &ix, &all).unwrap().switched);
        assert_eq!(xdp(&fx, &f, 0).0, XDP_DROP, "taken under a new key ({secret})");
    }
    // The old tables back, their key with them: taken again.
    fx.mirror.sync(&fx.t, &ix, &all).unwrap();
    assert_eq!(xdp(&fx, &f, 0).0, XDP_REDIRECT);
    // Under the new key, its HMACs are taken once the general path verified them, and
    // the old key's are not.
    let conf = CONFIG.replace("hmac set 7 sha256 fast-path-secret", "hmac set 7 sha256 another-secret");
    fx.t = Tables::build(&sr6_config::parse_str(&conf, "fast.conf").unwrap()).unwrap().0;
    fx.mirror.sync(&fx.t, &ix, &all).unwrap();
    let mut g = f.clone();
    let new = sr6_core::hmac::HmacKey::new(sr6_core::spec::HmacAlg::Sha256, b"another-secret");
    let mac = new.compute(&g[22..38].try_into().unwrap(), 1, 0, 7, &g[62..94]);
    g[102..134].copy_from_slice(&mac);
    assert_eq!(xdp(&fx, &g, 0).0, XDP_DROP);
    sr6_core::hmac::export_verified(true);
    general(&fx.t, &g, 0);
    general(&fx.t, &f, 0);
    let export = fx.mirror.hmac_export().unwrap();
    sr6_core::hmac::drain_verified(|v| export.insert(v).unwrap());
    sr6_core::hmac::export_verified(false);
    assert_eq!(xdp(&fx, &g, 0).0, XDP_REDIRECT);
    assert_eq!(xdp(&fx, &f, 0).0, XDP_DROP, "an HMAC of the old secret taken under the new one");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1500, ..ProptestConfig::default() })]

    #[test]
    #[ignore = "needs root (BPF_PROG_LOAD, a network namespace)"]
    fn xdp_tier_equals_general_path_on_mutations(which in 0usize..1000,
            flips in prop::collection::vec((0usize..120, any::<u8>()), 0..4), cut in 0usize..300, dev in 0u16..DEVS) {
        let fs = frames();
        let f = common::mutated(&fs[which % fs.len()], &flips, cut);
        with_fixture(|fx| same(fx, &f, dev).map(|_| ()))?;
    }
}
