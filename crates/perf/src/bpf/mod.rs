//! The tester's eBPF programs: the traffic generator that sends from the kernel, the
//! counter that receives there, and a drop-everything tcx program for the AF_PACKET
//! fallback. Assembled with `sr6_io::bpf::asm` and loaded through the safe bpf(2)
//! wrappers of `sr6_io::bpf` (no clang, libbpf or `unsafe` here).
//!
//! - [`LiveFrames`] (`live_frames.rs` + the program in `gen_prog.rs`) — the generator:
//!   `BPF_PROG_TEST_RUN` in live-frame mode runs an XDP program that paces against
//!   `bpf_ktime_get_ns`, copies a template, stamps sequence number and timestamp, patches
//!   the UDP checksum and redirects the frame out of the device (millions of packets a
//!   second from one core, no copy from user space); it also counts how long the
//!   kernel's loop is held up between two runs.
//! - [`XdpCounter`] (`xdp_counter.rs` + `count_prog.rs`) — the receiver: an XDP (or tcx
//!   ingress) program that reads the telemetry block at the end of each frame and counts
//!   it — per stream received, duplicates, reordered; stale, unknown-stream and other
//!   frames; a log-linear latency histogram in the buckets of `traffic/latency.rs` — in
//!   one array map that user space resets before a trial and reads after it, then drops
//!   the frame.
//! - [`IngressDrop`] (`ingress_drop.rs`) — two instructions at tcx ingress that drop what
//!   a packet socket has already counted.

mod count_prog;
mod gen_prog;
mod ingress_drop;
mod live_frames;
mod xdp_counter;

pub use ingress_drop::IngressDrop;
pub use live_frames::{LiveFrames, LiveRun, LiveTemplate, CATCH_UP, MAX_LIVE_FRAME, MAX_LIVE_STREAMS, SLICE};
pub use xdp_counter::{CountHook, CountedStream, Counts, XdpCounter, LAT_BUCKETS, MAX_COUNT_STREAMS, SEQ_BITS};

/// Adds what was being done to an error, keeping its kind.
fn context(e: std::io::Error, what: &str) -> std::io::Error {
    std::io::Error::new(e.kind(), format!("{what}: {e}"))
}
