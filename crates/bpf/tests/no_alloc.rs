//! A run (by the JIT, as the data plane runs it) allocates nothing once warmed up: a counting global allocator watches End.BPF
//! (`end_bpf_with` and a reused `Scratch`) over programs that use the stack, maps, calls
//! and the helpers that copy from program memory (store_bytes, action, skb_load_bytes).

mod common;

use sr6_bpf::elf::load_object;
use sr6_bpf::helpers::ProgType;
use sr6_bpf::seg6::{end_bpf_with, Seg6Packet, Verdict};
use sr6_bpf::{RunOpts, Scratch};

use std::alloc::System;

use stats_alloc::{Region, StatsAlloc, INSTRUMENTED_SYSTEM};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

/// Allocations and reallocations made, by every thread, while `f` runs.
fn allocations(f: impl FnOnce()) -> usize {
    let region = Region::new(GLOBAL);
    f();
    let c = region.change();
    c.allocations + c.reallocations
}

#[test]
fn a_warm_run_allocates_nothing() {
    let mut objs: Vec<_> = [("tag", "tag_inc"), ("maps", "count"), ("misc", "drop_udp"), ("action", "end_x")]
        .iter()
        .map(|(f, s)| load_object(&common::compile(f), s, ProgType::LwtSeg6local).unwrap())
        .collect();
    for o in &objs {
        assert!(o.program.is_jitted(), "{} is not compiled: this test is about the JIT's runs", o.program.name);
    }
    let input = common::packet(2, 0, 7, &[], 6);
    let mut pkt = Seg6Packet::new(input.clone());
    let mut scratch = Scratch::default();
    let mut run_all = |pkt: &mut Seg6Packet, scratch: &mut Scratch| {
        for o in objs.iter_mut() {
            pkt.buf.clear();
            pkt.buf.extend_from_slice(&input);
            let v = end_bpf_with(scratch, &o.program, &mut o.maps, pkt, RunOpts::default());
            assert!(matches!(v, Verdict::Forward(_)), "{}: {v:?}", o.program.name);
        }
    };
    run_all(&mut pkt, &mut scratch); // warm-up: the hash map's first key
    let n = allocations(|| {
        for _ in 0..10 {
            run_all(&mut pkt, &mut scratch);
        }
    });
    assert_eq!(n, 0, "End.BPF allocated {n} times");
}
