//! A run allocates nothing once warmed up: a counting global allocator watches End.BPF
//! (`end_bpf_with` and a reused `Scratch`) over programs that use the stack, maps, calls
//! and the helpers that copy from program memory (store_bytes, action, skb_load_bytes).

mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};

use sr6_bpf::elf::load_object;
use sr6_bpf::helpers::ProgType;
use sr6_bpf::seg6::{end_bpf_with, Seg6Packet, Verdict};
use sr6_bpf::{RunOpts, Scratch};

struct Counting;

static ALLOCS: AtomicU64 = AtomicU64::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::SeqCst);
        // SAFETY: forwarding the caller's layout to the system allocator.
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        // SAFETY: `p` was allocated by `System` with this layout.
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::SeqCst);
        // SAFETY: as for `alloc` and `dealloc`.
        unsafe { System.realloc(p, l, n) }
    }
}

#[global_allocator]
static A: Counting = Counting;

#[test]
fn a_warm_run_allocates_nothing() {
    let mut objs: Vec<_> = [("tag", "tag_inc"), ("maps", "count"), ("misc", "drop_udp"), ("action", "end_x")]
        .iter()
        .map(|(f, s)| load_object(&common::compile(f), s, ProgType::LwtSeg6local).unwrap())
        .collect();
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
    let before = ALLOCS.load(Ordering::SeqCst);
    for _ in 0..10 {
        run_all(&mut pkt, &mut scratch);
    }
    let after = ALLOCS.load(Ordering::SeqCst);
    assert_eq!(after - before, 0, "End.BPF allocated {} times", after - before);
}
