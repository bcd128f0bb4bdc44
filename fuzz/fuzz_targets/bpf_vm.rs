//! Fuzz target: an eBPF program sr6-bpf never trusts. The input is an instruction stream
//! (8-byte slots) and, after the first 0xff 0xff 0xff 0xff 0xff 0xff 0xff 0xff slot, a
//! packet. The stream goes through the verifier (which must not panic), then without it
//! through the JIT (when it takes the program) and the interpreter, as End.BPF on the
//! packet (which must not panic either, and must end: the instruction budget), with an
//! array, a hash, an LPM trie and `.rodata`: both engines give the same verdict and
//! packet, but for a budget fault (the JIT charges whole functions).
//!
//! Run: `cargo fuzz run bpf_vm` from this directory (scripts/fuzz.sh).
#![no_main]

use libfuzzer_sys::fuzz_target;
use sr6_bpf::helpers::ProgType;
use sr6_bpf::insn::Insn;
use sr6_bpf::maps::{map_type, Map, MapDef, F_NO_PREALLOC};
use sr6_bpf::seg6::{end_bpf, Drop, Seg6Packet, Verdict};
use sr6_bpf::verifier::verify;
use sr6_bpf::{Engine, Fault, Program, RunOpts};

fn maps() -> Vec<Map> {
    let d = |t, ks, vs, n, flags| MapDef { name: "m".into(), map_type: t, key_size: ks, value_size: vs, max_entries: n, flags };
    vec![
        Map::new(d(map_type::ARRAY, 4, 8, 4, 0)).unwrap(),
        Map::new(d(map_type::HASH, 2, 4, 4, 0)).unwrap(),
        Map::new(d(map_type::LPM_TRIE, 20, 2, 4, F_NO_PREALLOC)).unwrap(),
        Map::global_data(".rodata", &[1, 2, 3], true),
    ]
}

fuzz_target!(|data: &[u8]| {
    let split = data.chunks(8).position(|c| c == [0xff; 8]).map(|i| i * 8);
    let (code, packet) = match split {
        Some(at) => (&data[..at], &data[at + 8..]),
        None => (data, &[][..]),
    };
    let insns: Vec<Insn> = code
        .chunks_exact(8)
        .map(|c| {
            let mut b = [0u8; 8];
            b.copy_from_slice(c);
            Insn::decode(b)
        })
        .collect();
    if insns.is_empty() {
        return;
    }
    let _ = verify(&insns, ProgType::LwtSeg6local, 4);
    let prog = Program::new("fuzz", ProgType::LwtSeg6local, insns);
    let mut outs = Vec::new();
    for engine in [Engine::Auto, Engine::Interp] {
        let mut m = maps();
        let mut pkt = Seg6Packet::new(packet.to_vec());
        let v = end_bpf(&prog, &mut m, &mut pkt, RunOpts { budget: 20_000, engine });
        let storage: Vec<Vec<u8>> = m.iter().map(|m| m.storage().to_vec()).collect();
        outs.push((v, pkt.buf, storage));
    }
    let budget = |v: &Verdict| matches!(v, Verdict::Drop(Drop::Fault(Fault::Budget(_))));
    if prog.is_jitted() && !budget(&outs[0].0) && !budget(&outs[1].0) {
        assert_eq!(outs[0], outs[1], "the JIT differs from the interpreter");
    }
});
