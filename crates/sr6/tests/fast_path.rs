//! The fast path (crates/core/src/pipeline/fast.rs) must be invisible: for every frame,
//! the general path and the fast path produce the same verdict, the same bytes and the
//! same counters. Frames: the bundled example's, variants built to hit each fast case
//! (End/End.X/End.T/End.DX6/End.DT6/End.DX4/End.DT4/End.DT46/End.DX2/End.B6/End.B6.Encaps(.Red),
//! End/End.X/End.T with NEXT-C-SID, H.Encaps/.Red, H.Insert/.Red, also of compressed lists,
//! IPv6 and IPv4 transit), the
//! same with a Hop-by-Hop Options header, and random mutations of all of them.

mod common;

use common::fast_corpus::*;

use proptest::prelude::*;
use sr6_core::packet::{PacketBuf, Verdict};
use sr6_core::pipeline::Worker;
use sr6_core::tables::Tables;

fn run(t: &Tables, fast: bool, f: &[u8], dev: u16) -> (PacketBuf, Worker) {
    let mut w = Worker::new(t);
    w.fast_path = fast;
    let mut b = PacketBuf::new();
    b.load(f, dev);
    w.process_batch(t, dev, std::slice::from_mut(&mut b));
    (b, w)
}

fn same(t: &Tables, f: &[u8], dev: u16) -> Result<(), TestCaseError> {
    let (b1, w1) = run(t, true, f, dev);
    let (b2, w2) = run(t, false, f, dev);
    prop_assert_eq!(b1.verdict, b2.verdict, "verdict for {:02x?}", f);
    prop_assert_eq!(b1.data(), b2.data(), "bytes for {:02x?}", f);
    prop_assert_eq!(&w1.counters, &w2.counters, "counters for {:02x?}", f);
    // IPv4 fragments (the general path's; the fast path declines what it would fragment).
    let outs = |b: &PacketBuf, w: &Worker| -> Vec<(sr6_core::packet::Verdict, Vec<u8>)> {
        w.extra.outputs(std::slice::from_ref(b)).map(|o| (o.verdict, o.data.to_vec())).collect()
    };
    prop_assert_eq!(outs(&b1, &w1), outs(&b2, &w2), "frames out for {:02x?}", f);
    Ok(())
}

#[test]
fn fast_path_equals_general_path_on_crafted_frames() {
    let t = tables();
    let fs = frames();
    // scripts/fuzz.sh seeds the `fast_path` fuzz target with these frames: its first
    // input byte is the ingress device.
    if let Some(dir) = std::env::var_os("SR6_FAST_PATH_SEEDS") {
        let dir = std::path::PathBuf::from(dir);
        std::fs::create_dir_all(&dir).unwrap();
        for (i, f) in fs.iter().enumerate() {
            for dev in 0..DEVS as u8 {
                let seed: Vec<u8> = std::iter::once(dev).chain(f.iter().copied()).collect();
                std::fs::write(dir.join(format!("crafted-{i:03}-{dev}")), seed).unwrap();
            }
        }
    }
    let mut fast_hits = 0;
    for f in &fs {
        for dev in 0..DEVS {
            same(&t, f, dev).unwrap();
        }
        // The fast path must really be taken for many of them, or this proves nothing.
        fast_hits += run(&t, true, f, 0).1.fast_hits;
        assert_eq!(run(&t, false, f, 0).1.fast_hits, 0);
    }
    assert!(fast_hits >= 40, "the fast path handled only {fast_hits} of {} frames", fs.len());
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 4000, ..ProptestConfig::default() })]

    #[test]
    fn fast_path_equals_general_path_on_mutations(which in 0usize..1000,
            flips in prop::collection::vec((0usize..120, any::<u8>()), 0..4), cut in 0usize..300, dev in 0u16..DEVS) {
        let t = tables();
        let fs = frames();
        let f = common::mutated(&fs[which % fs.len()], &flips, cut);
        same(&t, &f, dev)?;
    }

    /// The same mutations with policy routing rules (every frame on the general path,
    /// whose rule walk reads the mutated headers): both paths agree, nothing panics.
    #[test]
    fn rules_on_mutations(which in 0usize..1000,
            flips in prop::collection::vec((0usize..120, any::<u8>()), 0..4), cut in 0usize..300, dev in 0u16..DEVS) {
        let t = rules_tables();
        let fs = frames();
        let f = common::mutated(&fs[which % fs.len()], &flips, cut);
        same(&t, &f, dev)?;
    }
}

/// The fast path looks at the ingress device (its per-device bits): no SRH for one that
/// requires an HMAC (eth3), nothing for a device that does not exist, nothing at all
/// when IPv6 forwarding is off (`all`: Linux ignores the per-device setting for
/// forwarding); and the frames it does take on eth3, it takes as on eth0.
#[test]
fn ingress_device_settings_keep_frames_off_the_fast_path() {
    let t = tables();
    let off = Tables::build(
        &sr6_config::parse_str(&format!("{CONFIG}sysctl -w net.ipv6.conf.all.forwarding=0\n"), "off.conf").unwrap(),
    )
    .unwrap()
    .0;
    let hits = |t: &Tables, f: &[u8], dev| run(t, true, f, dev).1.fast_hits;
    let (mut on_eth0, mut srh_on_eth0, mut on_eth3) = (0, 0, 0);
    for f in &frames() {
        let srh = f.len() > 20 && f[12..14] == [0x86, 0xdd] && f[20] == 43;
        on_eth0 += hits(&t, f, 0);
        srh_on_eth0 += if srh { hits(&t, f, 0) } else { 0 };
        assert_eq!(hits(&t, f, 4), 0, "no such device: {f:02x?}");
        if srh {
            assert_eq!(hits(&t, f, 3), 0, "HMAC required: {f:02x?}");
        } else {
            assert_eq!(hits(&t, f, 3), hits(&t, f, 0), "{f:02x?}");
            on_eth3 += hits(&t, f, 3);
        }
        if f[12..14] == [0x86, 0xdd] {
            assert_eq!(hits(&off, f, 0), 0, "forwarding off: {f:02x?}");
        }
        same(&off, f, 0).unwrap();
    }
    assert!(srh_on_eth0 >= 20 && on_eth3 >= 5 && on_eth0 > srh_on_eth0, "{on_eth0} {srh_on_eth0} {on_eth3}");
}

/// An SR proxy's `iif` (here eth2) is the general path's alone: its IP packets go
/// through the proxy's inbound policy, which the fast path does not know — IPv4 ones
/// included (the cold fast cases are not tried for that device). Every other device
/// keeps every fast case it had, and both paths agree everywhere.
#[test]
fn an_sr_proxy_iif_stays_off_the_fast_path() {
    let t = tables();
    let line =
        "ip -6 route add fc00:1::ad/128 encap seg6local action End.AD nh6 fc00:23::3 oif eth2 iif eth2 dev eth0\n";
    let tp = Tables::build(&sr6_config::parse_str(&format!("{CONFIG}{line}"), "proxy.conf").unwrap()).unwrap().0;
    let hits = |t: &Tables, f: &[u8], dev| run(t, true, f, dev).1.fast_hits;
    let (mut on_eth2_before, mut ipv4_on_eth2_before) = (0, 0);
    for f in &frames() {
        let before = hits(&t, f, 2);
        on_eth2_before += before;
        ipv4_on_eth2_before += if f[12..14] == [0x08, 0x00] { before } else { 0 };
        assert_eq!(hits(&tp, f, 2), 0, "the proxy's iif: {f:02x?}");
        for dev in [0, 1, 3] {
            assert_eq!(hits(&tp, f, dev), hits(&t, f, dev), "dev {dev}: {f:02x?}");
        }
        for dev in 0..DEVS {
            same(&tp, f, dev).unwrap();
        }
    }
    // The frames do take the fast path on eth2 without the proxy, IPv4 ones too.
    assert!(on_eth2_before >= 20 && ipv4_on_eth2_before >= 3, "{on_eth2_before} {ipv4_on_eth2_before}");
}

/// A batch is processed as received on the device `process_batch` is given, whatever
/// the frames' `in_dev` said, by both paths (the fast path reads the device's bits once
/// per batch; the general path sets `in_dev` to it): here eth0, eth3 (which requires an
/// HMAC) and a device that does not exist, each with frames claiming one of the others.
#[test]
fn a_batch_is_processed_as_received_on_its_device() {
    let t = tables();
    let batch = |fast: bool, f: &[u8], dev: u16, claimed: &[u16]| {
        let mut w = Worker::new(&t);
        w.fast_path = fast;
        let mut bs: Vec<PacketBuf> = claimed
            .iter()
            .map(|&d| {
                let mut b = PacketBuf::new();
                b.load(f, d);
                b
            })
            .collect();
        w.process_batch(&t, dev, &mut bs);
        if !fast {
            assert!(bs.iter().all(|b| b.in_dev == dev), "the general path records the batch's device");
        }
        let out: Vec<(sr6_core::packet::Verdict, Vec<u8>)> =
            bs.iter().map(|b| (b.verdict, b.data().to_vec())).collect();
        (out, w)
    };
    let mut hits = 0;
    for f in &frames() {
        for dev in [0, 3, 4] {
            let (honest, wh) = batch(false, f, dev, &[dev; 3]);
            for claimed in [[0, 3, 4], [3, 4, 0], [4, 0, 3]] {
                let (fast, wf) = batch(true, f, dev, &claimed);
                let (general, wg) = batch(false, f, dev, &claimed);
                assert_eq!(fast, general, "{dev} {claimed:?} {f:02x?}");
                assert_eq!(general, honest, "{dev} {claimed:?} {f:02x?}");
                assert_eq!(wf.counters, wg.counters, "{dev} {claimed:?} {f:02x?}");
                assert_eq!(wg.counters, wh.counters, "{dev} {claimed:?} {f:02x?}");
                hits += wf.fast_hits;
            }
        }
    }
    assert!(hits >= 100, "the fast path handled only {hits} frames");
}

/// End, End.T of another table and End.T of the main table (which the fast path runs as
/// End) are taken by the fast path for a plain packet with a routed next segment, in
/// the main table, table 100 and the main table respectively.
#[test]
fn end_and_end_t_fast_paths_are_taken() {
    let t = tables();
    let udp: &[u8] = &[0, 1, 0, 2, 0, 12, 0, 0, 9, 9, 9, 9];
    for sid in ["fc00:1::e", "fc00:1::7", "fc00:1::70"] {
        let f = frame("fc00:9::1", sid, 64, Some((&["fc00:3::1", sid], 1, 17)), udp);
        let (b, w) = run(&t, true, &f, 0);
        assert_eq!(w.fast_hits, 1, "{sid}");
        assert!(matches!(b.verdict, sr6_core::packet::Verdict::Tx(_)), "{sid}: {:?}", b.verdict);
        same(&t, &f, 0).unwrap();
    }
}

/// NEXT-C-SID End, End.X and End.T (and the 16/16 and 112/8 containers) are taken by
/// the fast path for a container with a routed next C-SID, with and without an SRH;
/// an argument of zero and PSP are not.
#[test]
fn next_csid_fast_paths_are_taken() {
    let t = tables();
    let udp: &[u8] = &[0, 1, 0, 2, 0, 12, 0, 0, 9, 9, 9, 9];
    for (d, taken) in [
        ("fc00:60:e:2::", true),
        ("fc00:60:c3:2::", true),
        ("fc00:60:7e:3::", true),
        ("fc61:e:2::", true),
        ("fc62::ee02", true),
        ("fc63::e:2:0:0", true),
        ("fc64:6500::", true),
        ("fc66:0:e:2::", true),
        ("fc66:0:e:2:e:2::", true),
        ("fc63::e:0:0:0", false),
        ("fc00:60:e::", false),
        ("fc00:60:e7:2::", false),
    ] {
        for f in
            [frame("fc00:a::2", d, 64, None, udp), frame("fc00:9::1", d, 64, Some((&["fc00:3::1", d], 1, 17)), udp)]
        {
            let (b, w) = run(&t, true, &f, 0);
            assert_eq!(w.fast_hits, u64::from(taken), "{d}");
            if taken {
                assert!(matches!(b.verdict, sr6_core::packet::Verdict::Tx(_)), "{d}: {:?}", b.verdict);
            }
            same(&t, &f, 0).unwrap();
        }
    }
}

/// The IPv4, End.DX4, End.DT4, End.DT46 and End.DX2 fast paths (tried out of the batch loop)
/// are really taken for the plain cases, gateway and on-link, and declined for the odd
/// ones.
#[test]
fn ipv4_and_end_dx4_dt4_dt46_dx2_fast_paths_are_taken() {
    let t = tables();
    let udp: &[u8] = &[0, 1, 0, 2, 0, 12, 0, 0, 9, 9, 9, 9];
    let hits = |f: &[u8]| run(&t, true, f, 0).1.fast_hits;
    for dst in [[20, 5, 5, 5], [20, 1, 9, 9], [10, 0, 23, 9]] {
        assert_eq!(hits(&frame4(&ip4(dst, 64, 0, false, udp))), 1, "{dst:?}");
    }
    for dst in [[20, 1, 2, 3], [20, 2, 0, 1], [10, 0, 12, 1], [224, 0, 0, 5]] {
        assert_eq!(hits(&frame4(&ip4(dst, 64, 0, false, udp))), 0, "{dst:?}");
    }
    assert_eq!(hits(&frame4(&ip4([20, 5, 5, 5], 1, 0, false, udp))), 0);
    assert_eq!(hits(&frame4(&ip4([20, 5, 5, 5], 64, 4, false, udp))), 0);
    assert_eq!(hits(&frame4(&ip4([20, 5, 5, 5], 64, 0, true, udp))), 0);
    let dx4 =
        |sid: &str, ttl| frame("fc00:9::1", sid, 64, Some((&[sid], 0, 4)), &ip4([20, 5, 5, 5], ttl, 0, false, udp));
    assert_eq!(hits(&dx4("fc00:1::d4", 64)), 1);
    assert_eq!(hits(&dx4("fc00:1::d4", 1)), 0);
    assert_eq!(hits(&dx4("fc00:1::d5", 64)), 0, "no neighbour: general path");
    // End.DT4 and End.DT46 look the inner destination up in their VRF (table 200).
    let dt = |sid: &str, dst: [u8; 4]| frame("fc00:9::1", sid, 64, Some((&[sid], 0, 4)), &ip4(dst, 64, 0, false, udp));
    for sid in ["fc00:1::a4", "fc00:1::a6"] {
        assert_eq!(hits(&dt(sid, [20, 9, 9, 9])), 1, "{sid}");
        assert_eq!(hits(&dt(sid, [20, 5, 5, 9])), 1, "{sid}");
        assert_eq!(hits(&dt(sid, [20, 5, 5, 7])), 0, "{sid}: /32, general path");
        assert_eq!(hits(&dt(sid, [20, 6, 1, 1])), 0, "{sid}: no neighbour, general path");
        assert_eq!(hits(&dt(sid, [30, 0, 0, 1])), 0, "{sid}: no route, general path");
    }
    // End.DT46 with an inner IPv6 packet; End.DT4 declines it.
    let dt6 = |sid: &str| frame("fc00:9::1", sid, 64, Some((&[sid], 0, 41)), &inner6("fc00:3::4", 9));
    assert_eq!(hits(&dt6("fc00:1::a6")), 1);
    assert_eq!(hits(&dt6("fc00:1::a4")), 0);
    // End.DX2: the inner frame leaves unchanged out of eth2 (device 2).
    let l2 = frame4(&ip4([20, 5, 5, 5], 64, 0, false, udp));
    let dx2 = frame("fc00:9::1", "fc00:1::d2", 64, Some((&["fc00:1::d2"], 0, 143)), &l2);
    let (b, w) = run(&t, true, &dx2, 0);
    assert_eq!(w.fast_hits, 1);
    assert_eq!(b.verdict, sr6_core::packet::Verdict::Tx(2));
    assert_eq!(b.data(), &l2[..]);
    let short = frame("fc00:9::1", "fc00:1::d2", 64, Some((&["fc00:1::d2"], 0, 143)), &l2[..13]);
    assert_eq!(hits(&short), 0, "inner frame shorter than an Ethernet header: general path");
}

/// End.B6.Encaps(.Red) and End.B6 (tried out of the batch loop) are really taken when its policy's
/// first segment is routed plainly, and declined when that segment is local, on a
/// decapsulating SRH or on an SRH with Segments Left 0.
#[test]
fn end_b6_encaps_and_end_b6_fast_paths_are_taken() {
    let t = tables();
    let udp: &[u8] = &[0, 1, 0, 2, 0, 12, 0, 0, 9, 9, 9, 9];
    let hits = |f: &[u8]| run(&t, true, f, 0).1.fast_hits;
    let b6 = |sid: &str, sl| frame("fc00:9::1", sid, 64, Some((&["fc00:3::1", sid], sl, 17)), udp);
    assert_eq!(hits(&b6("fc00:1::b6", 1)), 1);
    assert_eq!(hits(&b6("fc00:1::b7", 1)), 1);
    assert_eq!(hits(&b6("fc00:1::b8", 1)), 0, "first segment local: general path");
    assert_eq!(hits(&b6("fc00:1::b6", 0)), 0, "Segments Left 0: general path");
    assert_eq!(hits(&b6("fc00:1::b6", 3)), 0, "Segments Left > Last Entry + 1: general path");
    // End.B6 (insertion), the same way.
    assert_eq!(hits(&b6("fc00:1::b1", 1)), 1);
    assert_eq!(hits(&b6("fc00:1::b2", 1)), 0, "first segment local: general path");
    assert_eq!(hits(&b6("fc00:1::b1", 0)), 0, "Segments Left 0: general path");
    assert_eq!(hits(&b6("fc00:1::b1", 3)), 0, "Segments Left > Last Entry + 1: general path");
    for f in [b6("fc00:1::b1", 1), b6("fc00:1::b1", 2)] {
        same(&t, &f, 0).unwrap();
    }
    // And the bytes are the general path's.
    for f in [b6("fc00:1::b6", 1), b6("fc00:1::b7", 1), b6("fc00:1::b6", 2)] {
        same(&t, &f, 0).unwrap();
    }
}

/// Policies of compressed lists (`csid next|replace`, fast_path.conf) are taken by the
/// fast path as the uncompressed ones are: H.Encaps of one container (no SRH),
/// H.Insert of two containers, H.Encaps.Red of a REPLACE-C-SID series, End.B6.Encaps
/// and End.B6 with a container.
#[test]
fn compressed_policies_take_the_fast_path() {
    let t = tables();
    let udp: &[u8] = &[0, 1, 0, 2, 0, 12, 0, 0, 9, 9, 9, 9];
    for d in ["fc00:42::1", "fc00:43::1", "fc00:44::1"] {
        let f = frame("fc00:a::2", d, 64, None, udp);
        let (b, w) = run(&t, true, &f, 0);
        assert_eq!(w.fast_hits, 1, "{d}");
        assert!(matches!(b.verdict, sr6_core::packet::Verdict::Tx(_)), "{d}: {:?}", b.verdict);
        same(&t, &f, 0).unwrap();
    }
    // H.Encaps of one container: the outer header straight after Ethernet, UDP inside.
    let (b, _) = run(&t, true, &frame("fc00:a::2", "fc00:42::1", 64, None, udp), 0);
    assert_eq!((b.data()[20], &b.data()[38..54]), (41, &a("fc00:2:1:2:3::")[..]));
    for sid in ["fc00:1::b9", "fc00:1::ba"] {
        let f = frame("fc00:9::1", sid, 64, Some((&["fc00:3::1", sid], 1, 17)), udp);
        assert_eq!(run(&t, true, &f, 0).1.fast_hits, 1, "{sid}");
        same(&t, &f, 0).unwrap();
    }
}

/// H.Insert(.Red) and End.B6 leave a packet with a Hop-by-Hop header to the general
/// path, which puts the SRH after it (RFC 8200 §4.1): IPv6, Hop-by-Hop (now naming the
/// SRH, 43), SRH (naming what the Hop-by-Hop header named), the rest unchanged.
#[test]
fn insertion_with_hop_by_hop_takes_the_general_path() {
    let t = tables();
    let udp: &[u8] = &[0, 1, 0, 2, 0, 12, 0, 0, 9, 9, 9, 9];
    for (d, srh_len, fast) in [("fc00:7::1", 56, 1), ("fc00:8::1", 24, 1), ("fc00:d::1", 72, 1), ("fc00:e::1", 88, 1)] {
        let plain = frame("fc00:a::2", d, 64, None, udp);
        assert_eq!(run(&t, true, &plain, 0).1.fast_hits, fast, "{d}: without Hop-by-Hop");
        for units in [1, 2, 5] {
            let f = with_skip_hbh(&plain, units);
            let (b, w) = run(&t, true, &f, 0);
            assert_eq!(w.fast_hits, 0, "{d}");
            same(&t, &f, 0).unwrap();
            let o = b.data();
            let hbh = units * 8;
            assert_eq!(o.len(), f.len() + srh_len, "{d}");
            assert_eq!(o[20], 0, "{d}: Hop-by-Hop first");
            assert_eq!(o[54], 43, "{d}: then the SRH");
            assert_eq!(&o[55..54 + hbh], &f[55..54 + hbh], "{d}: Hop-by-Hop unchanged");
            assert_eq!(o[54 + hbh], 17, "{d}: the SRH names UDP");
            assert_eq!(&o[54 + hbh + 8..54 + hbh + 24], &a(d), "{d}: Segment List[0]");
            assert_eq!(&o[54 + hbh + srh_len..], udp, "{d}");
        }
    }
    let b6 = frame("fc00:9::1", "fc00:1::b1", 64, Some((&["fc00:3::1", "fc00:1::b1"], 1, 17)), udp);
    let f = with_skip_hbh(&b6, 1);
    assert_eq!(run(&t, true, &f, 0).1.fast_hits, 0);
    same(&t, &f, 0).unwrap();
    let o = run(&t, true, &f, 0).0.data().to_vec();
    assert_eq!((o[20], o[54], o[62], o[64]), (0, 43, 43, 4), "IPv6, HBH, the policy's SRH, the received SRH");
}

/// End, End.X and End.T with PSP (tried out of the batch loop) are really taken, with
/// the SRH removed when Segments Left reaches 0 and kept before; without PSP, USP and
/// USD change nothing while Segments Left > 0, so such a SID takes the fast path in the
/// loop.
#[test]
fn psp_fast_path_is_taken() {
    let t = tables();
    let udp: &[u8] = &[0, 1, 0, 2, 0, 12, 0, 0, 9, 9, 9, 9];
    let hits = |f: &[u8]| run(&t, true, f, 0).1.fast_hits;
    for sid in ["fc00:1::7", "fc00:1::e7", "fc00:1::c4", "fc00:1::78", "fc00:1::e8"] {
        let penultimate = frame("fc00:9::1", sid, 64, Some((&["fc00:3::1", sid], 1, 17)), udp);
        let earlier = frame("fc00:9::1", sid, 64, Some((&["fc00:2::1", "fc00:3::1", sid], 2, 17)), udp);
        for f in [&penultimate, &earlier] {
            assert_eq!(hits(f), 1, "{sid}");
            same(&t, f, 0).unwrap();
        }
        let (b, _) = run(&t, true, &penultimate, 0);
        let srh_gone = b.len() == penultimate.len() - 40;
        assert_eq!(srh_gone, sid != "fc00:1::e8" && sid != "fc00:1::7", "{sid}: SRH removed only with PSP");
    }
}

/// H.Encaps.L2 of IPv6 packets is really taken for the header lengths with code of their
/// own, the frame as received kept whole behind the new headers.
#[test]
fn encap_l2_fast_path_is_taken() {
    let t = tables();
    let udp: &[u8] = &[0, 1, 0, 2, 0, 12, 0, 0, 9, 9, 9, 9];
    for (dst, fast, n) in [("fc00:31::1", 1, 94), ("fc00:33::1", 1, 126), ("fc00:34::1", 1, 94), ("fc00:32::1", 0, 54)]
    {
        let f = frame("fc00:a::2", dst, 64, None, udp);
        let (b, w) = run(&t, true, &f, 0);
        assert_eq!(w.fast_hits, fast, "{dst}");
        assert_eq!(&b.data()[n..], &f[..], "{dst}: the frame as received follows the new headers");
        same(&t, &f, 0).unwrap();
    }
}

/// Multicast and link-local destinations are the host's before any lookup, even when a
/// SID (or a SID prefix) matches them: the fast path, which tests the destination only
/// for packets that are not for a SID, must leave those SIDs alone.
#[test]
fn sids_on_host_destinations_stay_off_the_fast_path() {
    let t = tables();
    let udp: &[u8] = &[0, 1, 0, 2, 0, 12, 0, 0, 9, 9, 9, 9];
    for dst in ["fe80::e", "ff0e::e", "fe80::1"] {
        let f = frame("fc00:9::1", dst, 64, Some((&["fc00:3::1", dst], 1, 17)), udp);
        let (b, w) = run(&t, true, &f, 0);
        assert_eq!(w.fast_hits, 0, "{dst}");
        assert_eq!(b.verdict, sr6_core::packet::Verdict::Local, "{dst}");
        same(&t, &f, 0).unwrap();
    }
    // The rest of the SID prefix fe00::/7 (fec0::/10, fe00::/9) is not the host's: the
    // End behaviour, on the general path.
    for dst in ["fec0::1", "fe01::1"] {
        let f = frame("fc00:9::1", dst, 64, Some((&["fc00:3::1", dst], 1, 17)), udp);
        let (b, w) = run(&t, true, &f, 0);
        assert_eq!(w.fast_hits, 0, "{dst}");
        assert!(matches!(b.verdict, sr6_core::packet::Verdict::Tx(_)), "{dst}: {:?}", b.verdict);
        same(&t, &f, 0).unwrap();
    }
}

/// The fast path counts a SID in a fixed array of 65,536 (`counters::ById`): SIDs past
/// it are left to the general path, which counts them where they are. Both paths agree
/// on either side of the boundary.
#[test]
fn sids_past_the_fixed_counter_array_take_the_general_path() {
    use sr6_core::counters::FIXED;
    let n = FIXED + 2;
    let mut conf = String::from(
        "ip -6 addr add fc00:12::1/64 dev eth1\n\
         ip -6 neigh add fc00:12::2 lladdr 02:00:00:00:12:02 dev eth1\n\
         ip -6 route add fc00:3::/32 via fc00:12::2 dev eth1\n",
    );
    let sid = |i: usize| format!("fc00:1::{:x}:{:x}", i >> 16, i & 0xffff);
    for i in 0..n {
        conf += &format!("ip -6 route add {} encap seg6local action End dev eth1\n", sid(i));
    }
    let t = Tables::build(&sr6_config::parse_str(&conf, "many.conf").unwrap()).unwrap().0;
    assert_eq!(t.sids.len(), n);
    let udp: &[u8] = &[0, 1, 0, 2, 0, 12, 0, 0, 9, 9, 9, 9];
    for (i, fast) in [(0, true), (FIXED - 1, true), (FIXED, false), (FIXED + 1, false)] {
        let s = sid(i);
        assert_eq!(t.sids[i].prefix, sr6_core::spec::Prefix::V6(s.parse().unwrap(), 128));
        let f = frame("fc00:9::1", &s, 64, Some((&["fc00:3::1", &s], 1, 17)), udp);
        let (b, w) = run(&t, true, &f, 0);
        assert_eq!(w.fast_hits, u64::from(fast), "SID {i}");
        assert!(matches!(b.verdict, sr6_core::packet::Verdict::Tx(_)), "SID {i}: {:?}", b.verdict);
        let c = w.counters.sids.get(i).unwrap_or_default();
        assert_eq!((c.packets, c.bytes()), (1, f.len() as u64 - 14), "SID {i}");
        assert_eq!(w.counters.sids.iter().map(|c| c.packets).sum::<u64>(), 1);
        same(&t, &f, 0).unwrap();
    }
}

/// `Worker::reset` (the fuzz targets' way to reuse a worker) leaves the worker as
/// `Worker::new` makes it, whatever it processed, on either path.
#[test]
fn a_reset_worker_is_a_new_worker() {
    let t = tables();
    let fresh = format!("{:?}", Worker::new(&t));
    for fast in [true, false] {
        let mut w = Worker::new(&t);
        w.fast_path = fast;
        for f in frames() {
            let mut b = PacketBuf::new();
            b.load(&f, 0);
            w.process_batch(&t, 0, std::slice::from_mut(&mut b));
        }
        assert!(w.counters.rx > 0 && w.counters.sids.iter().any(|c| c.packets > 0));
        assert_ne!(format!("{w:?}"), fresh);
        w.reset();
        assert_eq!(format!("{w:?}"), fresh, "fast path {fast}");
    }
}

/// `f` grown to `to` bytes by appending to its end, with its IPv6 Payload Length or IPv4
/// Total Length (and header checksum) grown to match; `None` if it is not an IP frame
/// or already longer.
fn grown(f: &[u8], to: usize) -> Option<Vec<u8>> {
    let n = to.checked_sub(f.len())?;
    let mut g = f.to_vec();
    g.resize(to, 0x5a);
    let field = |g: &mut [u8], at: usize| {
        let v = u16::from_be_bytes([g[at], g[at + 1]]) as usize + n;
        g[at..at + 2].copy_from_slice(&(v as u16).to_be_bytes());
    };
    match (g.get(12..14)?, g.len() >= 34) {
        ([0x86, 0xdd], _) if g.len() >= 54 => field(&mut g, 18),
        ([0x08, 0x00], true) => {
            field(&mut g, 16);
            let hl = usize::from(g[14] & 0xf) * 4;
            g[24..26].copy_from_slice(&[0, 0]);
            let mut sum: u32 = g.get(14..14 + hl)?.chunks(2).map(|w| u32::from(u16::from_be_bytes([w[0], w[1]]))).sum();
            while sum > 0xffff {
                sum = (sum & 0xffff) + (sum >> 16);
            }
            g[24..26].copy_from_slice(&(!(sum as u16)).to_be_bytes());
        }
        _ => return None,
    }
    Some(g)
}

/// With eth1 and eth2 at an MTU of 1280 (eth0 at the default 1500), every crafted frame
/// grown to lengths from well under to over it gives the same verdict, bytes and
/// counters on both paths; the fast path takes some of them (those no rewrite can take
/// past the MTU), no frame ever leaves longer than its device's MTU + the Ethernet
/// header, and the frames that would are answered (ICMP Packet Too Big / Fragmentation
/// Needed) or, IPv4 without DF, fragmented rather than sent.
#[test]
fn frames_around_the_mtu_agree_and_never_exceed_it() {
    let cfg = format!("{CONFIG}ip link set dev eth1 mtu 1280\nip link set dev eth2 mtu 1280\n");
    let t = Tables::build(&sr6_config::parse_str(&cfg, "mtu.conf").unwrap()).unwrap().0;
    assert_eq!(t.devices.iter().map(|d| d.mtu).collect::<Vec<_>>()[..3], [1500, 1280, 1280]);
    let (mut fast_hits, mut answered, mut over, mut fragmented) = (0, 0, 0, 0);
    // The crafted IPv4 packets have DF; each also without it (grown() fixes the checksum).
    let no_df = frames().into_iter().filter(|f| f.len() >= 34 && f[12..14] == [8, 0]).map(|mut f| {
        f[20] &= !0x40;
        f
    });
    for f in frames().into_iter().chain(no_df) {
        for to in [1000, 1180, 1200, 1226, 1240, 1254, 1270, 1294, 1295, 1320, 1400, 1514] {
            let Some(g) = grown(&f, to) else { continue };
            same(&t, &g, 0).unwrap();
            let (b, w) = run(&t, true, &g, 0);
            for o in w.extra.outputs(std::slice::from_ref(&b)) {
                if let sr6_core::packet::Verdict::Tx(d) = o.verdict {
                    let mtu = usize::from(t.devices[usize::from(d)].mtu);
                    assert!(o.data.len() <= mtu + 14, "{} bytes out of {d}", o.data.len());
                }
            }
            fragmented += w.counters.fragmented;
            fast_hits += w.fast_hits;
            over += u64::from(to > 1294);
            answered += w.counters.icmp_sent;
        }
    }
    assert!(fast_hits >= 100, "the fast path handled only {fast_hits} frames");
    assert!(answered >= 100, "only {answered} ICMP errors for {over} frames over the MTU");
    assert!(fragmented >= 10, "only {fragmented} IPv4 packets fragmented");
}

#[test]
fn martian_frames_are_dropped_with_their_reason_on_both_paths() {
    use sr6_core::drop::DropReason::{MartianDestination, MartianSource, ScopeSource};
    use sr6_core::packet::Verdict;
    let t = tables();
    let udp: &[u8] = &[0, 1, 0, 2, 0, 12, 0, 0, 9, 9, 9, 9];
    let cases = [
        (frame("::1", "fc00:2::9", 64, None, udp), MartianSource),
        (frame("ff02::1", "2a00:1:2::9", 64, None, udp), MartianSource),
        (frame("::1", "fc00:1::e", 64, Some((&["fc00:3::1", "fc00:1::e"], 1, 17)), udp), MartianSource),
        (frame("fc00:a::2", "::1", 64, None, udp), MartianDestination),
        (frame("fc00:a::2", "ff01::1", 64, None, udp), MartianDestination),
        (frame("fe80::5", "fc00:2::9", 64, None, udp), ScopeSource),
        (frame("::", "2a00:1:2::9", 64, None, udp), ScopeSource),
        (frame4(&ip4_from([127, 0, 0, 1], [20, 5, 5, 5], udp)), MartianSource),
        (frame4(&ip4_from([10, 0, 23, 1], [20, 5, 5, 5], udp)), MartianSource),
        (frame4(&ip4_from([0, 0, 0, 0], [20, 5, 5, 5], udp)), MartianSource),
        (frame4(&ip4_from([20, 5, 5, 5], [127, 0, 0, 1], udp)), MartianDestination),
        (frame4(&ip4_from([20, 5, 5, 5], [0, 0, 0, 0], udp)), MartianDestination),
    ];
    for (f, why) in &cases {
        for fast in [true, false] {
            let (b, w) = run(&t, fast, f, 0);
            assert_eq!(b.verdict, Verdict::Drop(*why), "fast {fast}: {f:02x?}");
            assert_eq!(w.counters.icmp_sent, 0);
        }
    }
    // Back out of its own device: a link-local source stays on its link; an IPv4
    // source that is the subnet's broadcast does not come back.
    let (b, _) = run(&t, true, &frame("fe80::5", "fc00:a::2", 64, None, udp), 0);
    assert!(matches!(b.verdict, Verdict::Tx(0)), "{:?}", b.verdict);
    let (b, _) = run(&t, true, &frame4(&ip4_from([10, 0, 12, 255], [20, 5, 5, 5], udp)), 1);
    assert_eq!(b.verdict, Verdict::Drop(MartianSource));
}

#[test]
fn hop_by_hop_frames_take_the_general_path_and_are_judged_by_their_options() {
    use sr6_core::drop::DropReason::{HbhMalformed, HbhUnknownOption};
    use sr6_core::packet::Verdict;
    let t = tables();
    let udp: &[u8] = &[0, 1, 0, 2, 0, 12, 0, 0, 9, 9, 9, 9];
    let transit = frame("fc00:a::2", "fc00:2::9", 64, None, udp);
    let end = frame("fc00:9::1", "fc00:1::e", 64, Some((&["fc00:3::1", "fc00:1::e"], 1, 17)), udp);
    let encap = frame("fc00:a::2", "fc00:5::1", 64, None, udp);
    // (frame, the device it leaves by when accepted, the one its ICMP errors leave by:
    // toward fc00:9::1, a head-end policy's prefix, they are encapsulated toward eth2)
    for (f, out, back) in [(&transit, 1, 0), (&end, 2, 2), (&encap, 1, 0)] {
        // (options, verdict, ICMP errors sent)
        let cases = [
            (HBH_OPTS[0], Verdict::Tx(out), 0),
            (HBH_OPTS[1], Verdict::Tx(out), 0),
            (HBH_OPTS[2], Verdict::Tx(out), 0),
            (HBH_OPTS[3], Verdict::Drop(HbhUnknownOption), 0),
            (HBH_OPTS[4], Verdict::Tx(back), 1),
            (HBH_OPTS[5], Verdict::Tx(back), 1),
            (HBH_OPTS[6], Verdict::Drop(HbhMalformed), 0),
            (HBH_OPTS[7], Verdict::Drop(HbhMalformed), 0),
        ];
        for (o, verdict, icmp) in cases {
            let g = with_hbh(f, o);
            for fast in [true, false] {
                let (b, w) = run(&t, fast, &g, 0);
                assert_eq!((b.verdict, w.counters.icmp_sent), (verdict, icmp), "fast {fast}: {g:02x?}");
                assert_eq!(w.fast_hits, 0, "{g:02x?}");
            }
        }
    }
    // Payload Length 0 (RFC 2675 §3): with no Jumbo Payload option, Parameter Problem
    // about the frame as received, Ethernet padding included.
    let mut g = with_hbh(&transit, HBH_OPTS[0]);
    g[18..20].copy_from_slice(&[0, 0]);
    g.extend_from_slice(&[0xee; 6]);
    for fast in [true, false] {
        let (b, w) = run(&t, fast, &g, 0);
        assert_eq!((b.verdict, w.counters.icmp_sent), (Verdict::Tx(0), 1), "fast {fast}");
        // Ethernet + IPv6 + ICMPv6 headers, then the quote: all of it.
        assert_eq!(&b.data()[14 + 48..], &g[14..]);
        let icmp = &b.data()[14 + 40..14 + 48];
        assert_eq!((&icmp[..2], &icmp[4..]), (&[4, 0][..], &[0, 0, 0, 4][..]), "type, code, pointer");
    }
    // Without the header the same frames are the fast path's: the test sees both ways.
    for f in [&transit, &end, &encap] {
        assert_eq!(run(&t, true, f, 0).1.fast_hits, 1);
    }
}

/// REPLACE-C-SID (RFC 9800 §4.2) is the general path's: End, End.X and End.T with the
/// flavour (PSP too) are never taken by the fast path, whose results are the same.
/// The RFC 9433 translations other than H.M.GTP4.D's T-PDUs and End.M.GTP4.E without
/// an SRH have no fast step: their frames, which the general path translates, the fast
/// path declines (H.M.GTP4.D's four T-PDUs, frames 0, 1, 3 and 4, and End.M.GTP4.E's
/// four frames with no SRH, 17 to 20, it takes: `h_m_gtp4_d_fast_path_is_taken`,
/// `end_m_gtp4_e_fast_path_is_taken`).
#[test]
fn gtp_translations_stay_on_the_general_path() {
    let t = tables();
    let udp: &[u8] = &[0, 1, 0, 2, 0, 12, 0, 0, 9, 9, 9, 9];
    let fs = gtp_frames(64, udp);
    assert_eq!(fs.len(), 21);
    for (i, f) in fs.iter().enumerate() {
        let (p, w) = run(&t, true, f, 0);
        assert_eq!(w.fast_hits, u64::from([0, 1, 3, 4, 17, 18, 19, 20].contains(&i)), "frame {i}");
        same(&t, f, 0).unwrap();
        // Translated and sent out eth1 (the Echo Requests too, in a tagged SRH), but
        // the frame with Segments Left 1 (an ICMPv6 error to fc00:9::1, whose route is
        // a policy towards eth2).
        // Then End.M.GTP6.D/.Di: out eth1; End.M.GTP6.E: the GTP-U packet to
        // fc00:3::4 (eth2), and with Segments Left 0 an ICMPv6 error to fc00:9::1
        // (eth2).
        let want = match i {
            8 | 15 | 16 => Verdict::Tx(2),
            _ => Verdict::Tx(1),
        };
        assert_eq!(p.verdict, want, "frame {i}");
    }
}

/// Plain GTP-U tunnels (`encap gtp`) have no fast step either: the encapsulation's route
/// kind and the GTP-U.Decap SIDs are declined, the general path's bytes the same.
#[test]
fn gtp_tunnels_stay_on_the_general_path() {
    let extra = "ip route add 20.9.0.0/16 encap gtp teid 7 dst 20.5.5.5 src 10.0.12.1 dev eth1\n\
        ip -6 route add fc00:1:d::/48 encap gtp teid 8 dst fc00:3::4 src fc00:1::a qfi 5 dev eth2\n\
        ip route add 20.7.0.9/32 encap gtp decap dev eth0\n\
        ip -6 route add fc00:1:e::1/128 encap gtp decap dev eth0\n";
    let t = Tables::build(&sr6_config::parse_str(&format!("{CONFIG}{extra}"), "fast.conf").unwrap()).unwrap().0;
    let udp: &[u8] = &[0, 1, 0, 2, 0, 12, 0, 0, 9, 9, 9, 9];
    let t4 = ip4([20, 5, 5, 5], 9, 0, false, udp);
    let fs = [
        frame4(&ip4([20, 9, 1, 1], 64, 0, false, udp)),
        frame("fc00:a::2", "fc00:1:d::5", 64, None, udp),
        frame4(&ip4([20, 7, 0, 9], 64, 0, false, &gtpu(255, &t4))),
        frame4(&ip4([20, 7, 0, 9], 64, 0, false, &gtpu(255, &inner6("fc00:3::4", 9)))),
        frame("fc00:a::2", "fc00:1:e::1", 64, None, &gtpu6("fc00:a::2", "fc00:1:e::1", 255, &t4)),
        frame("fc00:a::2", "fc00:1:e::1", 64, None, &gtpu6("fc00:a::2", "fc00:1:e::1", 1, &[])),
    ];
    for (i, f) in fs.iter().enumerate() {
        let (p, w) = run(&t, true, f, 0);
        assert_eq!(w.fast_hits, 0, "frame {i}");
        assert!(matches!(p.verdict, Verdict::Tx(_)), "frame {i}: {:?}", p.verdict);
        same(&t, f, 0).unwrap();
    }
}

#[test]
fn replace_csid_stays_on_the_general_path() {
    let extra = "ip -6 route add 2001:db8::/32 via fc00:12::2 dev eth1\n\
        ip -6 route add 2001:db8:b2:10:1::/80 encap seg6local action End flavors replace-csid dev eth1\n\
        ip -6 route add 2001:db8:b2:10:2::/80 encap seg6local action End.X nh6 fc00:23::3 flavors replace-csid dev eth2\n\
        ip -6 route add 2001:db8:b2:10:3::/80 encap seg6local action End.T table 100 flavors replace-csid dev eth1\n\
        ip -6 route add 2001:db8:b2:10:4::/80 encap seg6local action End flavors psp,replace-csid dev eth1\n";
    let t = Tables::build(&sr6_config::parse_str(&format!("{CONFIG}{extra}"), "fast.conf").unwrap()).unwrap().0;
    let udp: &[u8] = &[0, 1, 0, 2, 0, 12, 0, 0, 9, 9, 9, 9];
    for n in 1..=4 {
        for index in 0..4 {
            let d = format!("2001:db8:b2:10:{n}::{index}");
            let container = "0:0:0:0:30:3:20:2";
            for sl in [0, 1] {
                let f = frame("fc00:9::1", &d, 64, Some((&[container, &d], sl, 17)), udp);
                let (b, w) = run(&t, true, &f, 0);
                assert_eq!(w.fast_hits, 0, "{d} SL {sl}");
                assert!(!matches!(b.verdict, sr6_core::packet::Verdict::Pending), "{d}");
                same(&t, &f, 0).unwrap();
            }
        }
    }
}

/// The differential test's tables with policy routing rules of both families.
fn rules_tables() -> Tables {
    let extra = "ip -6 rule add from fc00:a::/64 to fc00:3::/32 ipproto udp dport 2 lookup 100\n\
        ip -6 rule add not iif eth0 lookup 300\n\
        ip -6 rule add to fc00:40::/32 ipproto 17 sport 1-100 prohibit\n\
        ip rule add to 30.0.0.0/8 ipproto udp lookup 300\n\
        ip rule add to 31.0.0.0/8 prohibit\n";
    Tables::build(&sr6_config::parse_str(&format!("{CONFIG}{extra}"), "fast.conf").unwrap()).unwrap().0
}

/// With policy routing rules (`ip rule`) the fast path, which reads the main table,
/// takes no frame, and both paths agree; without them it is as before (the tests above).
/// The rules do change where frames go: the UDP frame to fc00:3::9 (dport 2) leaves by
/// table 100's route (eth1) rather than main's (eth2).
#[test]
fn rules_keep_every_frame_off_the_fast_path() {
    let t = rules_tables();
    for f in &frames() {
        for dev in 0..DEVS {
            assert_eq!(run(&t, true, f, dev).1.fast_hits, 0, "{f:02x?}");
            same(&t, f, dev).unwrap();
        }
    }
    let udp: &[u8] = &[0, 1, 0, 2, 0, 12, 0, 0, 9, 9, 9, 9];
    let f = frame("fc00:a::2", "fc00:3::9", 64, None, udp);
    assert_eq!(run(&t, true, &f, 0).0.verdict, sr6_core::packet::Verdict::Tx(1));
    assert_eq!(run(&tables(), true, &f, 0).0.verdict, sr6_core::packet::Verdict::Tx(2));
    // Another port: main's route.
    let other: &[u8] = &[0, 1, 0, 3, 0, 12, 0, 0, 9, 9, 9, 9];
    let f = frame("fc00:a::2", "fc00:3::9", 64, None, other);
    assert_eq!(run(&t, true, &f, 0).0.verdict, sr6_core::packet::Verdict::Tx(2));
}

/// H.M.GTP4.D (RFC 9433 §6.7) takes the fast path, out of the batch loop, for T-PDUs
/// to both of fast_path.conf's routes (no `segs`: B routed; `segs`: S1's prepared
/// header), with the bytes and counters of the general path; TTL 1, signalling, a bad
/// UDP checksum, a bad IPv4 header checksum, IPv4 options and Ethernet padding stay on
/// the general path.
#[test]
fn h_m_gtp4_d_fast_path_is_taken() {
    use sr6_wire::checksum;
    let t = tables();
    let udp: &[u8] = &[0, 1, 0, 2, 0, 12, 0, 0, 9, 9, 9, 9];
    let hits = |f: &[u8]| run(&t, true, f, 0).1.fast_hits;
    // UDP checksum computed (from 10.0.1.2, `ip4`'s source), or wrong.
    let summed = |dst: [u8; 4], tpdu: &[u8], wrong: bool| {
        let mut g = gtpu(255, tpdu);
        let c = checksum::fold(
            checksum::pseudo_header_v4(&[10, 0, 1, 2].into(), &dst.into(), g.len() as u16, 17) + checksum::sum(&g),
        );
        g[6..8].copy_from_slice(&(c ^ u16::from(wrong)).to_be_bytes());
        frame4(&ip4(dst, 64, 0, false, &g))
    };
    for dst in [[20, 7, 0, 1], [20, 8, 1, 1]] {
        for tpdu in [inner6("fc00:3::4", 9), ip4([20, 5, 5, 5], 9, 0, false, udp)] {
            for f in [frame4(&ip4(dst, 64, 0, false, &gtpu(255, &tpdu))), summed(dst, &tpdu, false)] {
                assert_eq!(hits(&f), 1, "{dst:?}");
                same(&t, &f, 0).unwrap();
            }
            for f in [
                frame4(&ip4(dst, 1, 0, false, &gtpu(255, &tpdu))),
                frame4(&ip4(dst, 64, 0, true, &gtpu(255, &tpdu))),
                summed(dst, &tpdu, true),
                frame4(&ip4(dst, 64, 4, false, &gtpu(1, &[]))),
            ] {
                assert_eq!(hits(&f), 0, "{dst:?}");
                same(&t, &f, 0).unwrap();
            }
            let mut padded = frame4(&ip4(dst, 64, 0, false, &gtpu(255, &tpdu)));
            padded.extend_from_slice(&[0; 6]);
            assert_eq!(hits(&padded), 0, "Ethernet padding: the general path's");
            same(&t, &padded, 0).unwrap();
        }
        // IPv4 options: the general path's, as for plain IPv4 forwarding.
        let f = frame4(&ip4(dst, 64, 8, false, &gtpu(255, &inner6("fc00:3::4", 9))));
        assert_eq!(hits(&f), 0);
        same(&t, &f, 0).unwrap();
    }
}

/// End.M.GTP4.E (RFC 9433 §6.6) takes the fast path, out of the batch loop, for packets
/// with no extension header (IPv4 and IPv6 T-PDUs, with and without a PDU Session
/// Container), with the general path's bytes and counters: IPv4 + UDP (checksum
/// computed) + GTP-U out of eth1 with TTL 64 - 1. Hop limit 1 and 2, an SRH and a
/// Hop-by-Hop header are decided as the general path decides.
#[test]
fn end_m_gtp4_e_fast_path_is_taken() {
    let t = tables();
    let udp: &[u8] = &[0, 1, 0, 2, 0, 12, 0, 0, 9, 9, 9, 9];
    let hits = |f: &[u8]| run(&t, true, f, 0).1.fast_hits;
    let src = "fc00:9::a00:102:0:0";
    for sid in ["fc00:1:9:1405:505:2400:0:100", "fc00:1:9:1405:505:0:0:100"] {
        for (nh, tpdu) in [(4, ip4([20, 5, 5, 5], 9, 0, false, udp)), (41, inner6("fc00:3::4", 9))] {
            let f = bare(src, sid, 64, nh, &tpdu);
            assert_eq!(hits(&f), 1, "{sid} {nh}");
            same(&t, &f, 0).unwrap();
            let (p, _) = run(&t, true, &f, 0);
            assert_eq!(p.verdict, Verdict::Tx(1));
            let d = p.data();
            assert_eq!((&d[12..14], d[14], d[22], d[23]), (&[8, 0][..], 0x45, 63, 17), "IPv4, TTL 63, UDP");
            assert_eq!((&d[26..30], &d[30..34]), (&[10, 0, 1, 2][..], &[20, 5, 5, 5][..]));
            assert_eq!(&d[d.len() - tpdu.len()..], &tpdu[..], "the T-PDU as sent");
            // hop limit 2 too; 1 is answered by the general path.
            let f2 = bare(src, sid, 2, nh, &tpdu);
            assert_eq!(hits(&f2), 1);
            same(&t, &f2, 0).unwrap();
            let f1 = bare(src, sid, 1, nh, &tpdu);
            assert_eq!(hits(&f1), 0);
            same(&t, &f1, 0).unwrap();
        }
        // An SRH (Segments Left 0), a Hop-by-Hop header: the general path's.
        let with_srh = frame(src, sid, 64, Some((&[sid], 0, 4)), &ip4([20, 5, 5, 5], 9, 0, false, udp));
        let hbh = with_hbh(&bare(src, sid, 64, 4, &ip4([20, 5, 5, 5], 9, 0, false, udp)), [1, 4, 0, 0, 0, 0]);
        for f in [with_srh, hbh] {
            assert_eq!(hits(&f), 0);
            same(&t, &f, 0).unwrap();
        }
    }
}
