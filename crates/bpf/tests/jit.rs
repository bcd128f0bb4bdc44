//! The JIT against the interpreter, its reference: every test program on a set of
//! packets, random straight-line programs (ALU, forward jumps, stack, packet and context
//! accesses in and out of bounds, 64-bit immediates, helpers, BPF-to-BPF calls) and random
//! instruction words, run by both engines from the same state, must give the same r0 or
//! fault, the same packet, metadata and maps.

mod common;

use proptest::prelude::*;
use sr6_bpf::elf::load_object;
use sr6_bpf::helpers::{
    ProgType, GET_PRANDOM_U32, GET_SMP_PROCESSOR_ID, KTIME_GET_NS, MAP_DELETE_ELEM, MAP_LOOKUP_ELEM, MAP_UPDATE_ELEM,
};
use sr6_bpf::insn::*;
use sr6_bpf::lwt::{run_lwt, LwtPacket};
use sr6_bpf::maps::{map_type, Map, MapDef};
use sr6_bpf::seg6::{end_bpf_with, Seg6Packet};
use sr6_bpf::skb::Skb;
use sr6_bpf::verifier::verify;
use sr6_bpf::vm::run_lean;
use sr6_bpf::{run_with, Engine, Fault, Program, RunOpts, Scratch};

const JIT: RunOpts = RunOpts { budget: 1 << 20, engine: Engine::Auto };
const INTERP: RunOpts = RunOpts { budget: 1 << 20, engine: Engine::Interp };

/// What the maps hold, comparable between two sets (a hash map's `Debug` follows its
/// index's random order): each map's storage, sorted entries and events.
fn state(maps: &[Map]) -> String {
    maps.iter()
        .map(|m| {
            let mut e = m.entries();
            e.sort();
            format!("{:?} {:?} {:?} {:?}\n", m.def, m.storage(), e, m.events())
        })
        .collect()
}

/// The program sections of tests/progs/NAME.c.
fn sections(name: &str) -> Vec<String> {
    let src = std::fs::read_to_string(format!("{}/tests/progs/{name}.c", env!("CARGO_MANIFEST_DIR"))).unwrap();
    src.split("SEC(\"")
        .skip(1)
        .filter_map(|s| s.split('"').next())
        .filter(|s| !matches!(*s, "license" | ".maps" | "maps"))
        .map(String::from)
        .collect()
}

fn seg6_packets() -> Vec<Vec<u8>> {
    let tlv = [5u8, 6, 1, 2, 3, 4, 5, 6];
    let mut short = common::packet(2, 0, 7, &[], 17);
    short.truncate(50);
    vec![
        common::packet(2, 0, 7, &[], 17),
        common::packet(1, 0, 0xffff, &[], 6),
        common::packet(2, 0x80, 1, &tlv, 58),
        common::packet(1, 0, 3, &tlv, 17),
        common::inner(17),
        short,
    ]
}

fn lwt_packets() -> Vec<Vec<u8>> {
    let mut v4 = vec![0x45, 0, 0, 28, 0, 0, 0, 0, 64, 17, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2];
    v4.extend_from_slice(&[0x30, 0x39, 0x00, 0x35, 0x00, 0x08, 0x00, 0x00]);
    vec![common::inner(17), common::inner(6), common::packet(2, 0, 7, &[], 17), v4, vec![0x60; 10]]
}

#[test]
fn every_test_program_runs_the_same_under_both_engines() {
    let mut jitted = 0;
    for file in
        ["action", "end", "events", "legacy", "lpm", "lwt_in", "lwt_xmit", "maps", "misc", "refused", "tag", "tlv"]
    {
        let obj = common::compile(file);
        let prog_type = match file {
            "lwt_in" => ProgType::LwtIn,
            "lwt_xmit" => ProgType::LwtXmit,
            _ => ProgType::LwtSeg6local,
        };
        for sec in sections(file) {
            let Ok(o) = load_object(&obj, &sec, prog_type) else { continue };
            assert!(o.program.is_jitted(), "{file}/{sec} is not compiled");
            jitted += 1;
            let (mut jm, mut im) = (o.maps.clone(), o.maps.clone());
            let (mut js, mut is) = (Scratch::default(), Scratch::default());
            // Each packet twice: the maps' state carries over.
            for round in 0..2 {
                if prog_type == ProgType::LwtSeg6local {
                    for buf in seg6_packets() {
                        let (mut jp, mut ip) = (Seg6Packet::new(buf.clone()), Seg6Packet::new(buf));
                        let j = end_bpf_with(&mut js, &o.program, &mut jm, &mut jp, JIT);
                        let i = end_bpf_with(&mut is, &o.program, &mut im, &mut ip, INTERP);
                        assert_eq!(j, i, "{file}/{sec} round {round}");
                        assert_eq!(format!("{jp:?}"), format!("{ip:?}"), "{file}/{sec}: packet");
                    }
                } else {
                    for buf in lwt_packets() {
                        let (mut jp, mut ip) = (LwtPacket::new(buf.clone()), LwtPacket::new(buf));
                        let j = run_lwt(&mut js, &o.program, &mut jm, &mut jp, JIT);
                        let i = run_lwt(&mut is, &o.program, &mut im, &mut ip, INTERP);
                        assert_eq!(j, i, "{file}/{sec} round {round}");
                        assert_eq!(format!("{jp:?}"), format!("{ip:?}"), "{file}/{sec}: packet");
                    }
                }
                assert_eq!(state(&jm), state(&im), "{file}/{sec}: maps");
            }
        }
    }
    assert!(jitted >= 30, "only {jitted} programs loaded");
}

fn maps() -> Vec<Map> {
    let d =
        |t, ks, vs, n| MapDef { name: "m".into(), map_type: t, key_size: ks, value_size: vs, max_entries: n, flags: 0 };
    vec![
        Map::new(d(map_type::ARRAY, 4, 8, 4)).unwrap(),
        Map::new(d(map_type::HASH, 4, 8, 4)).unwrap(),
        Map::global_data(".rodata", &[1, 2, 3, 4, 5, 6, 7, 8], true),
        Map::global_data(".data", &[0; 16], false),
    ]
}

/// Runs `p` with both engines from the same state; `Some(r0 or fault)` when they agree
/// (`None` when the JIT does not take the program). A budget fault of either (the JIT
/// charges whole functions, so it may stop earlier) is not compared.
fn both(p: &Program, xmit: bool, budget: u64) -> Option<Result<u64, Fault>> {
    if !p.is_jitted() {
        return None;
    }
    let buf: Vec<u8> = (0..64u8).map(|b| b.wrapping_mul(37)).collect();
    let mut out = Vec::new();
    for engine in [Engine::Interp, Engine::Auto] {
        let mut m = maps();
        let opts = RunOpts { budget, engine };
        let mut s = Scratch::default();
        let (r, state) = if xmit {
            let mut pkt = LwtPacket::new(buf.clone());
            pkt.meta.mark = 7;
            (run_with(&mut s, p, &mut m, &mut pkt, opts), format!("{pkt:?}"))
        } else {
            let mut pkt = Seg6Packet::new(buf.clone());
            pkt.meta.cb = [1, 2, 3, 4, 5];
            let r = run_with(&mut s, p, &mut m, &mut pkt as &mut dyn Skb, opts);
            (r, format!("{pkt:?}"))
        };
        out.push((r, state, self::state(&m)));
    }
    let (j, i) = (out.pop().unwrap(), out.pop().unwrap());
    if matches!(j.0, Err(Fault::Budget(_))) || matches!(i.0, Err(Fault::Budget(_))) {
        return None;
    }
    assert_eq!(j.0, i.0, "r0 or fault of {:?}", p.insns);
    assert_eq!(j.1, i.1, "packet of {:?}", p.insns);
    assert_eq!(j.2, i.2, "maps of {:?}", p.insns);
    if !xmit {
        lean_agrees(p, &buf, budget, &i);
    }
    Some(i.0)
}

/// A lean run of `p` (`run_lean`: the compiled code on the bytes alone, ended by its
/// first call out) on `buf`, against the interpreter's full run `full` (its result, the
/// packet view's state, the maps'): when the lean run completes, it has the same result,
/// and the full run changed nothing of the view nor of a map — what lets End.BPF skip
/// them.
fn lean_agrees(p: &Program, buf: &[u8], budget: u64, full: &(Result<u64, Fault>, String, String)) {
    let mut s = Scratch::default();
    let Some(lean) = run_lean(&mut s, p, buf, RunOpts { budget, engine: Engine::Auto }) else { return };
    assert_eq!(lean, full.0, "lean run of {:?}", p.insns);
    let mut untouched = Seg6Packet::new(buf.to_vec());
    untouched.meta.cb = [1, 2, 3, 4, 5];
    assert_eq!(full.1, format!("{untouched:?}"), "a lean run of {:?} skipped a change to the packet view", p.insns);
    assert_eq!(full.2, state(&maps()), "a lean run of {:?} skipped a change to the maps", p.insns);
}

fn ins(code: u8, dst: u8, src: u8, off: i16, imm: i32) -> Insn {
    Insn { code, dst, src, off, imm }
}

fn imm() -> impl Strategy<Value = i32> {
    prop_oneof![-3i32..3, Just(i32::MIN), Just(i32::MAX), Just(-1), 0i32..64, any::<i32>()]
}

/// A destination register: r1 (the context) rarely, so that runs go on.
fn reg() -> impl Strategy<Value = u8> {
    prop_oneof![9 => prop::sample::select(&[0u8, 2, 3, 4, 5, 6, 7, 8, 9][..]), 1 => Just(1u8)]
}

const ALU_OPS: &[u8] = &[ADD, SUB, MUL, DIV, OR, AND, LSH, RSH, NEG, MOD, XOR, MOV, ARSH];
const JMP_OPS: &[u8] = &[JEQ, JGT, JGE, JSET, JNE, JSGT, JSGE, JLT, JLE, JSLT, JSLE];
const SIZES: &[u8] = &[B, H, W, DW];

/// One group of instructions; jumps are fixed up to skip whole groups.
#[derive(Clone, Debug)]
enum G {
    Insns(Vec<Insn>),
    /// A conditional jump over the next `n` groups.
    Jump(Insn, usize),
    /// A call of the second function.
    Call,
}

fn group() -> impl Strategy<Value = G> {
    let alu = (
        prop::sample::select(ALU_OPS),
        any::<bool>(),
        any::<bool>(),
        reg(),
        0u8..11,
        prop_oneof![Just(0i16), Just(1), Just(8), Just(16), Just(32)],
        imm(),
    )
        .prop_map(|(op, w, x, d, s, off, imm)| {
            let off = if matches!(op, DIV | MOD | MOV) { off } else { 0 };
            let off = if op == MOV && (off == 1 || (!w && off == 32)) { 0 } else { off };
            let off = if matches!(op, DIV | MOD) { off & 1 } else { off };
            G::Insns(vec![ins(if w { ALU64 } else { ALU } | op | if x { X } else { K }, d, s, off, imm)])
        });
    let end =
        (any::<bool>(), any::<bool>(), reg(), prop::sample::select(&[16, 32, 64][..])).prop_map(|(w, be, d, n)| {
            G::Insns(vec![ins(if w { ALU64 } else { ALU } | END | if be { X } else { K }, d, 0, 0, n)])
        });
    let jmp = (prop::sample::select(JMP_OPS), any::<bool>(), any::<bool>(), 0u8..11, 0u8..11, imm(), 0usize..4)
        .prop_map(|(op, w, x, d, s, imm, n)| {
            G::Jump(ins(if w { JMP } else { JMP32 } | op | if x { X } else { K }, d, s, 0, imm), n)
        });
    let lddw = (reg(), any::<u64>(), 0u8..3, 0i32..5, 0i32..20).prop_map(|(d, v, kind, m, o)| {
        G::Insns(match kind {
            0 => vec![ins(LD | IMM | DW, d, 0, 0, v as i32), ins(0, 0, 0, 0, (v >> 32) as i32)],
            1 => vec![ins(LD | IMM | DW, d, PSEUDO_MAP_FD, 0, m), ins(0, 0, 0, 0, 0)],
            _ => vec![ins(LD | IMM | DW, d, PSEUDO_MAP_VALUE, 0, m), ins(0, 0, 0, 0, o)],
        })
    });
    // The stack through r10, in and out of the frame.
    let stack = (0u8..3, prop::sample::select(SIZES), reg(), prop_oneof![1 => -520i16..8, 6 => -64i16..-8], imm())
        .prop_map(|(k, sz, r, off, imm)| {
            G::Insns(vec![match k {
                0 => ins(LDX | MEM | sz, r, 10, off, 0),
                1 => ins(STX | MEM | sz, 10, r, off, 0),
                _ => ins(ST | MEM | sz, 10, 0, off, imm),
            }])
        });
    // Memory through a register: the packet (data or data_end from the context, the
    // context itself), the stack, a map value, or whatever the register holds.
    let via = (
        0u8..5,
        0u8..4,
        prop::sample::select(SIZES),
        6u8..10,
        reg(),
        prop_oneof![1 => -8i16..72, 6 => 0i16..56],
        imm(),
        any::<bool>(),
    )
        .prop_map(|(base, k, sz, p, r, off, imm, sx)| {
            let mut v = match base {
                0 => vec![ins(LDX | MEM | W, p, 1, 0, 76), ins(ALU64 | MOV | X, 1, 1, 0, 0)],
                1 => vec![ins(LDX | MEM | W, p, 1, 0, 80)],
                2 => vec![ins(ALU64 | MOV | X, p, 10, 0, 0), ins(ALU64 | ADD | K, p, 0, 0, -64)],
                // .data, or .rodata (stores refused).
                3 => vec![ins(LD | IMM | DW, p, PSEUDO_MAP_VALUE, 0, 2 + (imm & 1)), ins(0, 0, 0, 0, 0)],
                _ => vec![ins(ALU64 | MOV | X, p, 1, 0, 0)],
            };
            let sz = if base == 4 { W } else { sz };
            // Mostly in bounds: below data_end, inside the 8 bytes of .rodata, 16 of .data.
            let off = match base {
                1 => off - 64,
                3 if off >= 0 => off & 7,
                _ => off,
            };
            v.push(match k {
                0 => ins(LDX | MEM | sz, r, p, off, 0),
                1 if sx && sz != DW => ins(LDX | MEMSX | sz, r, p, off, 0),
                1 => ins(ST | MEM | sz, p, 0, off, imm),
                _ => ins(STX | MEM | sz, p, r, off, 0),
            });
            G::Insns(v)
        });
    let helper = (0u8..6, imm()).prop_map(|(k, key)| {
        let mut v = vec![ins(ST | MEM | W, 10, 0, -8, key & 7), ins(ST | MEM | DW, 10, 0, -16, key)];
        let id = match k {
            0 => KTIME_GET_NS,
            1 => GET_PRANDOM_U32,
            2 => GET_SMP_PROCESSOR_ID,
            3 => MAP_LOOKUP_ELEM,
            4 => MAP_UPDATE_ELEM,
            _ => MAP_DELETE_ELEM,
        };
        if k >= 3 {
            v.extend([ins(LD | IMM | DW, 1, PSEUDO_MAP_FD, 0, key & 1), ins(0, 0, 0, 0, 0)]);
            v.extend([ins(ALU64 | MOV | X, 2, 10, 0, 0), ins(ALU64 | ADD | K, 2, 0, 0, -8)]);
            v.extend([
                ins(ALU64 | MOV | X, 3, 10, 0, 0),
                ins(ALU64 | ADD | K, 3, 0, 0, -16),
                ins(ALU64 | MOV | K, 4, 0, 0, 0),
            ]);
        }
        v.push(ins(JMP | CALL, 0, 0, 0, id));
        if k == 3 {
            // A hit: add to the value through the pointer (a map value access).
            v.push(ins(JMP | JEQ | K, 0, 0, 2, 0));
            v.push(ins(LDX | MEM | DW, 6, 0, 0, 0));
            v.push(ins(STX | MEM | DW, 0, 6, 0, 0));
        }
        G::Insns(v)
    });
    let atomic =
        (prop::sample::select(&[0x00, 0x01, 0x40, 0x41, 0x50, 0xa0, XCHG, CMPXCHG][..]), any::<bool>(), 1u8..10)
            .prop_map(|(op, w, r)| G::Insns(vec![ins(STX | ATOMIC | if w { DW } else { W }, 10, r, -24, op)]));
    prop_oneof![
        6 => alu,
        1 => end,
        3 => jmp,
        1 => lddw,
        3 => stack,
        3 => via,
        1 => helper,
        1 => atomic,
        1 => Just(G::Call),
    ]
}

/// Main: the groups then EXIT; a second function: some groups (it may call itself: too
/// deep), EXIT.
fn assemble(main: &[G], sub: &[G]) -> Vec<Insn> {
    let lens = |gs: &[G]| -> Vec<usize> {
        gs.iter()
            .map(|g| match g {
                G::Insns(v) => v.len(),
                _ => 1,
            })
            .collect()
    };
    let (ml, sl) = (lens(main), lens(sub));
    let sub_start = ml.iter().sum::<usize>() + 1;
    let mut out = Vec::new();
    for (gs, ls) in [(main, &ml), (sub, &sl)] {
        for (k, g) in gs.iter().enumerate() {
            match g {
                G::Insns(v) => out.extend_from_slice(v),
                G::Jump(j, n) => {
                    let skip: usize = ls[k + 1..].iter().take(*n).sum();
                    out.push(Insn { off: skip as i16, ..*j });
                }
                G::Call => {
                    let pc = out.len() as i32;
                    out.push(ins(JMP | CALL, 0, PSEUDO_CALL, 0, sub_start as i32 - pc - 1));
                }
            }
        }
        out.push(ins(JMP | EXIT, 0, 0, 0, 0));
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

    #[test]
    fn random_programs_agree(
        main in prop::collection::vec(group(), 0..24),
        sub in prop::collection::vec(group(), 0..6),
        xmit in any::<bool>(),
    ) {
        let insns = assemble(&main, &sub);
        let t = if xmit { ProgType::LwtXmit } else { ProgType::LwtSeg6local };
        let p = Program::new("p", t, insns);
        prop_assert!(p.is_jitted(), "not compiled: {:?}", p.insns);
        both(&p, xmit, 1 << 20);
    }

    /// Random instruction words (unverified, as hostile.rs runs them): when the JIT takes
    /// them, it agrees with the interpreter; whatever the verifier passes is loaded and
    /// run by both engines too.
    #[test]
    fn random_words_never_crash_and_agree(words in prop::collection::vec(any::<u64>(), 1..40), budget in 1u64..200) {
        let insns: Vec<Insn> = words.iter().map(|w| {
            let mut i = Insn::decode(w.to_le_bytes());
            // Mostly known opcodes with small offsets, so that some survive.
            if w & 0x3 != 0 {
                i.off &= 0x7;
                i.dst %= 11;
                i.src %= 2;
            }
            i
        }).collect();
        let p = Program::new("p", ProgType::LwtSeg6local, insns.clone());
        both(&p, false, budget);
        both(&p, false, 1 << 20);
        if verify(&insns, ProgType::LwtSeg6local, 4).is_ok() {
            both(&p, false, 1 << 20);
        }
        let x = Program::new("p", ProgType::LwtXmit, insns);
        both(&x, true, 1 << 20);
    }
}

/// The JIT's corner cases, each against the interpreter.
#[test]
fn corner_cases_agree() {
    let exit = ins(JMP | EXIT, 0, 0, 0, 0);
    let lddw = |d: u8, v: u64| [ins(LD | IMM | DW, d, 0, 0, v as i32), ins(0, 0, 0, 0, (v >> 32) as i32)];
    let mut progs: Vec<Vec<Insn>> = Vec::new();
    for (a, b) in [(i64::MIN as u64, -1i32), (5, 0), (u64::MAX, 3), (0x8000_0000, -1), (7, -2)] {
        for class in [ALU64, ALU] {
            for op in [DIV, MOD] {
                for off in [0, 1] {
                    for x in [K, X] {
                        let mut p = lddw(0, a).to_vec();
                        p.push(ins(ALU64 | MOV | K, 3, 0, 0, b));
                        p.push(ins(class | op | x, 0, 3, off, b));
                        p.push(exit);
                        progs.push(p);
                    }
                }
            }
        }
    }
    for class in [ALU64, ALU] {
        for op in [LSH, RSH, ARSH] {
            for n in [0, 1, 31, 32, 63, 64, 65] {
                let mut p = lddw(0, 0x8000_0000_8000_0001).to_vec();
                p.push(ins(ALU64 | MOV | K, 4, 0, 0, n));
                p.push(ins(class | op | X, 0, 4, 0, 0));
                progs.push([p.clone(), vec![exit]].concat());
                p.push(ins(class | op | K, 0, 0, 0, n));
                progs.push([p, vec![exit]].concat());
            }
        }
    }
    // Calls nested past the frames: too deep.
    progs.push(vec![ins(JMP | CALL, 0, PSEUDO_CALL, 0, 1), exit, ins(JMP | CALL, 0, PSEUDO_CALL, 0, -1), exit]);
    // r6..r9 kept across a call; the callee's frame zeroed and its own.
    progs.push(vec![
        ins(ALU64 | MOV | K, 6, 0, 0, 66),
        ins(ST | MEM | DW, 10, 0, -8, 5),
        ins(JMP | CALL, 0, PSEUDO_CALL, 0, 4),
        ins(LDX | MEM | DW, 1, 10, -8, 0),
        ins(ALU64 | ADD | X, 0, 6, 0, 0),
        ins(ALU64 | ADD | X, 0, 1, 0, 0),
        exit,
        ins(LDX | MEM | DW, 0, 10, -8, 0),
        ins(ALU64 | MOV | K, 6, 0, 0, 1),
        ins(ST | MEM | DW, 10, 0, -8, 9),
        ins(ALU64 | MOV | X, 0, 10, 0, 0),
        exit,
    ]);
    // Stack pointers in registers across frames: main passes r10 - 8 to f (depth 1),
    // which passes its own r10 - 16 to g (depth 2); each writes through the pointer it got
    // and its own, and the values read back through r10 and the pointers.
    progs.push(vec![
        ins(ALU64 | MOV | X, 1, 10, 0, 0),
        ins(ALU64 | ADD | K, 1, 0, 0, -8),
        ins(JMP | CALL, 0, PSEUDO_CALL, 0, 4),
        ins(LDX | MEM | DW, 2, 10, -8, 0),
        ins(ALU64 | ADD | X, 0, 2, 0, 0),
        exit,
        exit,
        // f: *r1 = 0x100; r6 = r10 - 16; *r6 = 0x20; g(r6); r0 = *(r10 - 16) + *r6.
        ins(ST | MEM | DW, 1, 0, 0, 0x100),
        ins(ALU64 | MOV | X, 6, 10, 0, 0),
        ins(ALU64 | ADD | K, 6, 0, 0, -16),
        ins(ST | MEM | DW, 6, 0, 0, 0x20),
        ins(ALU64 | MOV | X, 1, 6, 0, 0),
        ins(JMP | CALL, 0, PSEUDO_CALL, 0, 4),
        ins(LDX | MEM | DW, 0, 10, -16, 0),
        ins(LDX | MEM | DW, 3, 6, 0, 0),
        ins(ALU64 | ADD | X, 0, 3, 0, 0),
        exit,
        // g: *r1 += 3 (its caller's frame); *(r10 - 8) = 7 through a pointer; r0 = it.
        ins(LDX | MEM | DW, 2, 1, 0, 0),
        ins(ALU64 | ADD | K, 2, 0, 0, 3),
        ins(STX | MEM | DW, 1, 2, 0, 0),
        ins(ALU64 | MOV | X, 4, 10, 0, 0),
        ins(ST | MEM | W, 4, 0, -8, 7),
        ins(LDX | MEM | W, 0, 10, -8, 0),
        exit,
    ]);
    let (mut n, total) = (0, progs.len());
    let last = progs.len() - 1;
    for (k, insns) in progs.into_iter().enumerate() {
        let p = Program::new("p", ProgType::LwtSeg6local, insns);
        assert!(p.is_jitted(), "{:?}", p.insns);
        let r = both(&p, false, 1 << 20);
        if k == last {
            // f: 0x23 + 0x23 (g: 7); main: 0x46 + 0x100.
            assert_eq!(r, Some(Ok(0x146)));
        }
        if r.is_some() {
            n += 1;
        }
    }
    assert_eq!(n, total, "every one compared");
}

/// Budget: the JIT charges each function's length when it is entered, so a run that
/// needs more than the budget always ends with `Fault::Budget`.
#[test]
fn the_budget_bounds_the_jit() {
    let exit = ins(JMP | EXIT, 0, 0, 0, 0);
    // Main calls f 3 times, f calls g 3 times, ... 7 levels: 3^7 runs of the leaf.
    let mut p = Vec::new();
    for level in 0..7 {
        let start = p.len();
        for k in 0..3 {
            let pc = start + k;
            p.push(ins(JMP | CALL, 0, PSEUDO_CALL, 0, (start + 4 - pc - 1) as i32));
        }
        p.push(exit);
        let _ = level;
    }
    p.push(ins(ALU64 | ADD | K, 0, 0, 0, 1));
    p.push(exit);
    let prog = Program::new("p", ProgType::LwtSeg6local, p);
    assert!(prog.is_jitted());
    let run = |budget, engine| {
        let mut pkt = Seg6Packet::new(vec![0; 40]);
        sr6_bpf::run(&prog, &mut maps(), &mut pkt, RunOpts { budget, engine })
    };
    assert_eq!(run(1 << 20, Engine::Auto), Ok(2187));
    assert_eq!(run(1 << 20, Engine::Interp), Ok(2187));
    assert_eq!(run(1000, Engine::Auto), Err(Fault::Budget(1000)));
    assert_eq!(run(1000, Engine::Interp), Err(Fault::Budget(1000)));
}

/// A program (with its machine code) can be shared between workers.
#[test]
fn programs_are_send_and_sync() {
    fn check<T: Send + Sync + Clone + std::fmt::Debug>() {}
    check::<Program>();
    let p =
        Program::new("p", ProgType::LwtSeg6local, vec![ins(ALU64 | MOV | K, 0, 0, 0, 1), ins(JMP | EXIT, 0, 0, 0, 0)]);
    assert!(format!("{p:?}").contains("bytes of x86-64") || !cfg!(all(target_arch = "x86_64", unix)));
    let q = p.clone().without_jit();
    assert!(!q.is_jitted());
    let t = std::thread::spawn(move || {
        let mut pkt = Seg6Packet::new(vec![0; 40]);
        sr6_bpf::run(&p, &mut maps(), &mut pkt, JIT)
    });
    assert_eq!(t.join().unwrap(), Ok(1));
}
