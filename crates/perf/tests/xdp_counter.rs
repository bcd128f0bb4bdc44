//! The XDP counting program, run by the kernel on hand-made frames with
//! `BPF_PROG_TEST_RUN` (root: `#[ignore]`d, run with `--include-ignored`): every
//! counter against counts worked out by hand, and the latency bucket against an
//! independent computation.

use sr6_perf::bpf::{CountHook, XdpCounter, LAT_BUCKETS};
use sr6_perf::traffic::mono_ns;

const MAGIC: u16 = 0x5336;

/// The verdicts of each hook: (test packet, anything else).
fn verdicts(hook: CountHook) -> (u32, u32) {
    match hook {
        CountHook::Xdp => (1, 2),        // XDP_DROP, XDP_PASS
        CountHook::TcxIngress => (2, 0), // TCX_DROP, TCX_PASS
    }
}

/// A 78-byte frame whose last 16 bytes are a telemetry block.
fn frame(magic: u16, stream: u16, seq: u32, ts: u64) -> Vec<u8> {
    let mut f = vec![0xa5u8; 62];
    f.extend_from_slice(&magic.to_be_bytes());
    f.extend_from_slice(&stream.to_be_bytes());
    f.extend_from_slice(&seq.to_be_bytes());
    f.extend_from_slice(&ts.to_be_bytes());
    f
}

/// The bucket of `v` ns, written independently of the program and of the perf crate:
/// one bucket per ns below 64; above, 32 equal parts of each power of two.
fn expected_bucket(v: u64) -> usize {
    if v < 64 {
        return v as usize;
    }
    let e = 63 - v.leading_zeros() as usize;
    let lo = 1u64 << e;
    let part = ((v - lo) * 32 / lo) as usize;
    64 + (e - 6) * 32 + part
}

#[test]
#[ignore = "needs root (bpf(2))"]
fn counts_streams_duplicates_reordering_and_the_rest() {
    for hook in [CountHook::Xdp, CountHook::TcxIngress] {
        counts_in(hook);
    }
}

fn counts_in(hook: CountHook) {
    let (dropped, passed) = verdicts(hook);
    let mut c = XdpCounter::new(hook, MAGIC, 2).expect("load the counting program");
    let start = mono_ns();
    c.reset(start, 10_000_000_000).unwrap();
    let ts = mono_ns();
    // Stream 0: 0 1 2, 1 again, 5, 4 (new but below 5), 4 again.
    for seq in [0, 1, 2, 1, 5, 4, 4] {
        assert_eq!(c.run_on(&frame(MAGIC, 0, seq, ts)).unwrap(), dropped);
    }
    // Stream 1: one packet, sequence 2^24 + 3 (beyond the bitmap: taken modulo it).
    assert_eq!(c.run_on(&frame(MAGIC, 1, (1 << 24) + 3, ts)).unwrap(), dropped);
    // Stale: before the reset, and in the future.
    assert_eq!(c.run_on(&frame(MAGIC, 0, 9, start - 1)).unwrap(), dropped);
    assert_eq!(c.run_on(&frame(MAGIC, 0, 9, mono_ns() + 3_600_000_000_000)).unwrap(), dropped);
    // A stream the counter does not have.
    assert_eq!(c.run_on(&frame(MAGIC, 2, 0, ts)).unwrap(), dropped);
    // Not test packets: another magic, a frame too short for a block.
    assert_eq!(c.run_on(&frame(0x5337, 0, 0, ts)).unwrap(), passed);
    assert_eq!(c.run_on(&[0x53, 0x36, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]).unwrap(), passed);

    let n = c.read().unwrap();
    assert_eq!(n.frames, 13);
    assert_eq!((n.other, n.stale, n.unknown_stream, n.other_queue), (2, 2, 1, 0));
    let s0 = n.streams[0];
    assert_eq!((s0.received, s0.duplicates, s0.reordered, s0.max_seq), (7, 2, 1, Some(5)));
    let s1 = n.streams[1];
    assert_eq!((s1.received, s1.duplicates, s1.reordered, s1.max_seq), (1, 0, 0, Some((1 << 24) + 3)));
    // Latency: one sample per counted packet, all in the histogram, min <= max.
    assert_eq!(n.lat_n, 8);
    assert_eq!(n.lat_buckets.len(), LAT_BUCKETS);
    assert_eq!(n.lat_buckets.iter().sum::<u64>(), 8);
    assert!(n.lat_min <= n.lat_max && n.lat_sum >= 8 * n.lat_min && n.lat_sum <= 8 * n.lat_max);

    // A reset clears everything, the bitmaps included: the same numbers are new again.
    c.reset(mono_ns() - 1_000_000, 10_000_000_000).unwrap();
    let ts = mono_ns();
    for seq in [1, 2] {
        c.run_on(&frame(MAGIC, 0, seq, ts)).unwrap();
    }
    let n = c.read().unwrap();
    assert_eq!(n.frames, 2);
    assert_eq!((n.streams[0].received, n.streams[0].duplicates, n.streams[0].reordered), (2, 0, 0));
    assert_eq!(n.streams[1].received, 0);
    assert_eq!(n.lat_n, 2);

    // Too old: the maximum age.
    c.reset(0, 1_000).unwrap();
    c.run_on(&frame(MAGIC, 0, 0, mono_ns() - 1_000_000)).unwrap();
    assert_eq!(c.read().unwrap().stale, 1);
}

#[test]
#[ignore = "needs root (bpf(2))"]
fn latency_buckets_over_the_whole_range() {
    for hook in [CountHook::Xdp, CountHook::TcxIngress] {
        buckets_in(hook);
    }
}

fn buckets_in(hook: CountHook) {
    let (dropped, _) = verdicts(hook);
    let mut c = XdpCounter::new(hook, MAGIC, 1).expect("load the counting program");
    // Ages from 2^10 ns to 2^45 ns (10 h), at several points of each power of two: the
    // program's bucket must lie between those of the ages before and after the call.
    for e in 10..46u32 {
        for part in [0u64, 7, 31] {
            let age = (1u64 << e) + part * ((1u64 << e) / 32);
            c.reset(0, u64::MAX).unwrap();
            let before = mono_ns();
            if age >= before {
                continue; // the clock counts from boot: no stamp that old
            }
            let tx = before - age;
            assert_eq!(c.run_on(&frame(MAGIC, 0, 0, tx)).unwrap(), dropped);
            let after = mono_ns();
            let n = c.read().unwrap();
            let got = n.lat_buckets.iter().position(|&x| x == 1).expect("one sample");
            let (lo, hi) = (expected_bucket(before - tx), expected_bucket(after - tx));
            assert!(lo <= got && got <= hi, "age 2^{e} + {part}/32: bucket {got}, expected {lo}..={hi}");
            assert!(n.lat_min >= before - tx && n.lat_min <= after - tx && n.lat_min == n.lat_max);
        }
    }
}
