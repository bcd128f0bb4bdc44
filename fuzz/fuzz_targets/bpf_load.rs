//! Fuzz target: the ELF loader of sr6-bpf on any bytes (seeded with the clang-compiled
//! test programs of crates/bpf/tests/progs by scripts/fuzz.sh): it refuses or loads, and
//! what it loads runs as End.BPF on a packet without panicking.
//!
//! Run: `cargo fuzz run bpf_load` from this directory (scripts/fuzz.sh).
#![no_main]

use libfuzzer_sys::fuzz_target;
use sr6_bpf::elf::load_bytes;
use sr6_bpf::helpers::ProgType;
use sr6_bpf::seg6::{end_bpf, Seg6Packet};
use sr6_bpf::RunOpts;

/// An IPv6 packet with an SRH of two segments, Segments Left 1.
fn packet() -> Vec<u8> {
    let mut p = vec![0x60, 0, 0, 0, 0, 40, 43, 64];
    p.extend_from_slice(&[0x20, 1, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]);
    p.extend_from_slice(&[0xfc, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]);
    p.extend_from_slice(&[17, 4, 4, 1, 1, 0, 0, 7]);
    p.extend_from_slice(&[0xfc, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x99]);
    p.extend_from_slice(&[0xfc, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]);
    p
}

const SECTIONS: &[&str] =
    &["end", "tag_inc", "add_tlv", "del_tlv", "end_x", "end_dt6", "b6_encap", "count", "drop_udp", "lpm_tag"];

fuzz_target!(|data: &[u8]| {
    for sec in SECTIONS {
        if let Ok(mut o) = load_bytes(data, sec, ProgType::LwtSeg6local) {
            let mut pkt = Seg6Packet::new(packet());
            let _ = end_bpf(&o.program, &mut o.maps, &mut pkt, RunOpts { budget: 20_000, ..RunOpts::default() });
        }
    }
});
