//! Hostile input never panics: random instruction streams run by the JIT and the
//! interpreter (without the verifier, so both must hold on their own, with the same
//! results) and checked by the verifier, random and mutated ELF objects given to the
//! loader.

mod common;

use proptest::prelude::*;
use sr6_bpf::elf::load_bytes;
use sr6_bpf::helpers::ProgType;
use sr6_bpf::insn::Insn;
use sr6_bpf::maps::{map_type, Map, MapDef};
use sr6_bpf::seg6::{end_bpf, Drop, Seg6Packet, Verdict};
use sr6_bpf::verifier::verify;
use sr6_bpf::{run, Engine, Fault, Program, RunOpts};

/// Opcodes worth trying: every valid one and a few invalid.
const CODES: &[u8] = &[
    0x07, 0x0f, 0x17, 0x1f, 0x27, 0x2f, 0x37, 0x3f, 0x47, 0x4f, 0x57, 0x5f, 0x67, 0x6f, 0x77, 0x7f, 0x87, 0x97, 0x9f,
    0xa7, 0xaf, 0xb7, 0xbf, 0xc7, 0xcf, 0xd7, 0xd4, 0xdc, 0x04, 0x0c, 0x14, 0x24, 0x34, 0x3c, 0x44, 0x54, 0x64, 0x74,
    0x84, 0x94, 0x9c, 0xa4, 0xb4, 0xbc, 0xc4, 0x05, 0x06, 0x15, 0x1d, 0x25, 0x2d, 0x35, 0x45, 0x55, 0x5d, 0x65, 0x6d,
    0x75, 0xa5, 0xad, 0xb5, 0xc5, 0xd5, 0x16, 0x1e, 0x26, 0x56, 0x85, 0x95, 0x18, 0x61, 0x69, 0x71, 0x79, 0x81, 0x89,
    0x91, 0x62, 0x6a, 0x72, 0x7a, 0x63, 0x6b, 0x73, 0x7b, 0xc3, 0xdb, 0x20, 0xff, 0x00,
];

fn insn() -> impl Strategy<Value = Insn> {
    (
        prop::sample::select(CODES),
        0u8..12,
        0u8..12,
        prop_oneof![-600i16..600, any::<i16>()],
        prop_oneof![-600i32..600, Just(1), Just(2), Just(3), Just(26), Just(74), Just(75), Just(76), any::<i32>()],
    )
        .prop_map(|(code, dst, src, off, imm)| Insn { code, dst, src, off, imm })
}

fn maps() -> Vec<Map> {
    let d =
        |t, ks, vs, n| MapDef { name: "m".into(), map_type: t, key_size: ks, value_size: vs, max_entries: n, flags: 0 };
    vec![
        Map::new(d(map_type::ARRAY, 4, 8, 4)).unwrap(),
        Map::new(d(map_type::HASH, 2, 4, 4)).unwrap(),
        Map::global_data(".rodata", &[1, 2, 3], true),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 4000, ..ProptestConfig::default() })]

    #[test]
    fn random_programs_never_panic(prog in prop::collection::vec(insn(), 1..48), raw in any::<bool>()) {
        let _ = verify(&prog, ProgType::LwtSeg6local, 3);
        let p = Program::new("p", ProgType::LwtSeg6local, prog);
        // The JIT's code when it takes the program, then the interpreter: the same result
        // (but for a budget fault: the JIT charges whole functions).
        let mut outs = Vec::new();
        for engine in [Engine::Auto, Engine::Interp] {
            let opts = RunOpts { budget: 5_000, engine };
            let mut m = maps();
            let mut pkt = Seg6Packet::new(common::packet(2, 0, 7, &[], 17));
            let r = if raw {
                format!("{:?}", run(&p, &mut m, &mut pkt, opts))
            } else {
                format!("{:?}", end_bpf(&p, &mut m, &mut pkt, opts))
            };
            let maps: Vec<_> = m.iter().map(|m| (m.storage().to_vec(), m.events().map(|e| format!("{e:?}")))).collect();
            outs.push((r, format!("{pkt:?}"), format!("{maps:?}")));
        }
        if p.is_jitted() && !outs.iter().any(|o| o.0.contains("Budget")) {
            prop_assert_eq!(&outs[0], &outs[1], "{:?}", p.insns);
        }
    }

    #[test]
    fn random_bytes_never_panic_the_loader(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        let _ = load_bytes(&bytes, "end", ProgType::LwtSeg6local);
    }
}

/// Real objects with bytes flipped: the loader refuses or loads them, and what it loads
/// runs without panicking, with the same results under the JIT and the interpreter. `SR6_BPF_MUTATIONS=N[:SEED]` runs longer (default 3000 from a
/// fixed seed).
#[test]
fn mutated_objects_never_panic() {
    let env = std::env::var("SR6_BPF_MUTATIONS").unwrap_or_default();
    let mut parts = env.split(':');
    let rounds: usize = parts.next().and_then(|n| n.parse().ok()).unwrap_or(3000);
    let seed0: u32 = parts.next().and_then(|n| n.parse().ok()).unwrap_or(0x9e37_79b9);
    let objs: Vec<(Vec<u8>, &str)> = [("maps", "count"), ("tlv", "add_tlv"), ("misc", "drop_udp")]
        .iter()
        .map(|(f, s)| (std::fs::read(common::compile(f)).unwrap(), *s))
        .collect();
    let mut seed = seed0.max(1);
    let mut rnd = move || {
        seed ^= seed << 13;
        seed ^= seed >> 17;
        seed ^= seed << 5;
        seed
    };
    for round in 0..rounds {
        let (orig, sec) = &objs[round % objs.len()];
        let mut b = orig.clone();
        for _ in 0..1 + rnd() % 4 {
            let at = rnd() as usize % b.len();
            b[at] = rnd() as u8;
        }
        if let Ok(mut o) = load_bytes(&b, sec, ProgType::LwtSeg6local) {
            // The JIT's run (when it takes the program) and the interpreter's agree.
            let mut im = o.maps.clone();
            let mut pkt = Seg6Packet::new(common::packet(2, 0, 7, &[], 17));
            let mut ipkt = pkt.clone();
            let v = end_bpf(&o.program, &mut o.maps, &mut pkt, RunOpts { budget: 5_000, ..RunOpts::default() });
            let iv = end_bpf(&o.program, &mut im, &mut ipkt, RunOpts { budget: 5_000, engine: Engine::Interp });
            let budget = |v: &Verdict| matches!(v, Verdict::Drop(Drop::Fault(Fault::Budget(_))));
            if o.program.is_jitted() && !budget(&v) && !budget(&iv) {
                assert_eq!((&v, &pkt.buf), (&iv, &ipkt.buf), "round {round}");
                for (a, b) in o.maps.iter().zip(&im) {
                    assert_eq!(a.storage(), b.storage(), "round {round}");
                }
            }
        }
    }
}
