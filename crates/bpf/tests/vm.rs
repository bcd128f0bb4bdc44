//! The interpreter, one instruction class at a time, on hand-assembled programs whose
//! results follow from RFC 9669 (BPF ISA): ALU/ALU64, byte swaps, JMP/JMP32, 64-bit
//! immediates, loads and stores of every size, atomics, BPF-to-BPF calls, the context;
//! and every way a program can try to escape its memory, each aborted with a Fault.

use sr6_bpf::helpers::ProgType;
use sr6_bpf::insn::*;
use sr6_bpf::maps::{map_type, Map, MapDef};
use sr6_bpf::seg6::Seg6Packet;
use sr6_bpf::verifier::{verify, VerifyError};
use sr6_bpf::{run, Engine, Fault, Program, RunOpts};

fn i(code: u8, dst: u8, src: u8, off: i16, imm: i32) -> Insn {
    Insn { code, dst, src, off, imm }
}
fn mov64(d: u8, imm: i32) -> Insn {
    i(ALU64 | MOV | K, d, 0, 0, imm)
}
fn exit() -> Insn {
    i(JMP | EXIT, 0, 0, 0, 0)
}
fn lddw(d: u8, v: u64) -> [Insn; 2] {
    [i(LD | IMM | DW, d, 0, 0, v as u32 as i32), i(0, 0, 0, 0, (v >> 32) as u32 as i32)]
}

fn maps() -> Vec<Map> {
    let arr =
        MapDef { name: "a".into(), map_type: map_type::ARRAY, key_size: 4, value_size: 8, max_entries: 2, flags: 0 };
    vec![Map::new(arr).unwrap(), Map::global_data(".rodata", &[1, 2, 3, 4], true)]
}

/// Runs without the verifier (the interpreter must hold on its own).
fn exec(insns: &[Insn]) -> Result<u64, Fault> {
    exec_on(insns, &mut Seg6Packet::new(vec![0xab; 64]))
}

/// Runs `insns` with the interpreter and, when the JIT takes the program, with the JIT
/// too: the same r0 or fault, packet and maps, or the test fails.
fn exec_on(insns: &[Insn], pkt: &mut Seg6Packet) -> Result<u64, Fault> {
    let prog = Program::new("t", ProgType::LwtSeg6local, insns.to_vec());
    let mut jit_pkt = pkt.clone();
    let (mut m, mut jit_m) = (maps(), maps());
    let r = run(&prog, &mut m, pkt, RunOpts { budget: 10_000, engine: Engine::Interp });
    if prog.is_jitted() {
        let j = run(&prog, &mut jit_m, &mut jit_pkt, RunOpts { budget: 10_000, engine: Engine::Auto });
        assert_eq!(j, r, "the JIT differs from the interpreter on {insns:?}");
        assert_eq!(jit_pkt.buf, pkt.buf, "packet");
        assert_eq!(jit_pkt.meta, pkt.meta, "meta");
        for (a, b) in m.iter().zip(&jit_m) {
            assert_eq!(a.storage(), b.storage(), "map {}", a.def.name);
        }
    }
    r
}

/// r0 = a; r0 OP= b (64-bit or 32-bit); exit.
fn alu(class: u8, op: u8, a: u64, b: i32, off: i16) -> u64 {
    let mut p: Vec<Insn> = lddw(0, a).to_vec();
    p.push(i(class | op | K, 0, 0, off, b));
    p.push(exit());
    let r = exec(&p).unwrap();
    // Also through a register operand.
    let mut q: Vec<Insn> = lddw(0, a).to_vec();
    q.push(mov64(1, b));
    q.push(i(class | op | X, 0, 1, off, 0));
    q.push(exit());
    assert_eq!(exec(&q).unwrap(), r, "K and X differ for op {op:#x}");
    r
}

#[test]
fn alu64() {
    assert_eq!(alu(ALU64, ADD, u64::MAX, 2, 0), 1);
    assert_eq!(alu(ALU64, SUB, 1, 2, 0), u64::MAX);
    assert_eq!(alu(ALU64, MUL, 1 << 40, 1 << 30, 0), 0);
    assert_eq!(alu(ALU64, DIV, 100, 7, 0), 14);
    assert_eq!(alu(ALU64, DIV, 100, -1, 0), 0); // unsigned: 100 / 2^64-1
    assert_eq!(alu(ALU64, DIV, -100i64 as u64, 7, 1), -14i64 as u64); // sdiv
    assert_eq!(alu(ALU64, MOD, 100, 7, 0), 2);
    assert_eq!(alu(ALU64, MOD, -100i64 as u64, 7, 1), -2i64 as u64); // smod
    assert_eq!(alu(ALU64, OR, 0xf0, 0x0f, 0), 0xff);
    assert_eq!(alu(ALU64, AND, 0xf0, 0x3c, 0), 0x30);
    assert_eq!(alu(ALU64, XOR, 0xff, 0x0f, 0), 0xf0);
    assert_eq!(alu(ALU64, LSH, 1, 63, 0), 1 << 63);
    assert_eq!(alu(ALU64, RSH, 1 << 63, 63, 0), 1);
    assert_eq!(alu(ALU64, ARSH, 1 << 63, 63, 0), u64::MAX);
    assert_eq!(alu(ALU64, MOV, 7, -1, 0), u64::MAX); // imm sign-extended
    let neg = exec(&[mov64(0, 5), i(ALU64 | NEG, 0, 0, 0, 0), exit()]).unwrap();
    assert_eq!(neg, -5i64 as u64);
    // movsx: r0 = (s8) r1.
    let sx = exec(&[mov64(1, 0x80), i(ALU64 | MOV | X, 0, 1, 8, 0), exit()]).unwrap();
    assert_eq!(sx, -128i64 as u64);
}

#[test]
fn division_by_zero_at_run_time() {
    // RFC 9669 §4.1: x / 0 = 0, x % 0 = x (a register operand; a constant 0 is refused).
    let div = [mov64(0, 9), mov64(1, 0), i(ALU64 | DIV | X, 0, 1, 0, 0), exit()];
    assert_eq!(exec(&div).unwrap(), 0);
    let m = [mov64(0, 9), mov64(1, 0), i(ALU64 | MOD | X, 0, 1, 0, 0), exit()];
    assert_eq!(exec(&m).unwrap(), 9);
    let k = [mov64(0, 9), i(ALU64 | DIV | K, 0, 0, 0, 0), exit()];
    assert_eq!(verify(&k, ProgType::LwtSeg6local, 0), Err(VerifyError::DivByZero { pc: 1 }));
}

#[test]
fn alu32_zero_extends() {
    assert_eq!(alu(ALU, MOV, 0, -1, 0), 0xffff_ffff);
    assert_eq!(alu(ALU, ADD, 0xffff_ffff_ffff_ffff, 1, 0), 0);
    assert_eq!(alu(ALU, SUB, 0x1_0000_0000, 1, 0), 0xffff_ffff);
    assert_eq!(alu(ALU, ARSH, 0x8000_0000, 31, 0), 0xffff_ffff);
    assert_eq!(alu(ALU, LSH, 1, 31, 0), 0x8000_0000);
    assert_eq!(alu(ALU, DIV, 0xffff_ffff, 2, 0), 0x7fff_ffff);
    assert_eq!(alu(ALU, MOD, 0x1_0000_0007, 4, 0), 3);
}

#[test]
fn byte_swaps() {
    let v = 0x1122_3344_5566_7788u64;
    let end = |code: u8, imm: i32| {
        let mut p = lddw(0, v).to_vec();
        p.push(i(code, 0, 0, 0, imm));
        p.push(exit());
        exec(&p).unwrap()
    };
    assert_eq!(end(ALU | END | K, 16), 0x7788); // to le: truncate
    assert_eq!(end(ALU | END | K, 32), 0x5566_7788);
    assert_eq!(end(ALU | END | K, 64), v);
    assert_eq!(end(ALU | END | X, 16), 0x8877); // to be: swap
    assert_eq!(end(ALU | END | X, 32), 0x8877_6655);
    assert_eq!(end(ALU | END | X, 64), 0x8877_6655_4433_2211);
    assert_eq!(end(ALU64 | END | K, 16), 0x8877); // bswap (cpu v4)
}

/// r0 = 0; r1 = a; if r1 OP b goto +1; r0 = 1 ... returns whether the jump was taken.
fn jumps(class: u8, op: u8, a: u64, b: i32) -> bool {
    let mut p = vec![mov64(0, 0)];
    p.extend(lddw(1, a));
    p.push(mov64(2, b));
    p.push(i(class | op | X, 1, 2, 1, 0));
    p.push(exit());
    p.push(mov64(0, 1));
    p.push(exit());
    let x = exec(&p).unwrap() == 1;
    let mut q = vec![mov64(0, 0)];
    q.extend(lddw(1, a));
    q.push(i(class | op | K, 1, 0, 1, b));
    q.push(exit());
    q.push(mov64(0, 1));
    q.push(exit());
    assert_eq!(exec(&q).unwrap() == 1, x, "K and X differ for {op:#x}");
    x
}

#[test]
fn conditional_jumps() {
    assert!(jumps(JMP, JEQ, 5, 5) && !jumps(JMP, JEQ, 5, 6));
    assert!(jumps(JMP, JNE, 5, 6) && !jumps(JMP, JNE, 5, 5));
    assert!(jumps(JMP, JGT, u64::MAX, 1) && !jumps(JMP, JGT, 1, 1));
    assert!(jumps(JMP, JGE, 1, 1) && !jumps(JMP, JGE, 0, 1));
    assert!(jumps(JMP, JLT, 0, 1) && !jumps(JMP, JLT, u64::MAX, 1));
    assert!(jumps(JMP, JLE, 1, 1) && !jumps(JMP, JLE, 2, 1));
    assert!(jumps(JMP, JSET, 6, 2) && !jumps(JMP, JSET, 4, 2));
    assert!(jumps(JMP, JSGT, 1, -1) && !jumps(JMP, JSGT, u64::MAX, 1));
    assert!(jumps(JMP, JSGE, u64::MAX, -1) && !jumps(JMP, JSGE, u64::MAX, 0));
    assert!(jumps(JMP, JSLT, u64::MAX, 0) && !jumps(JMP, JSLT, 0, -1));
    assert!(jumps(JMP, JSLE, u64::MAX, -1) && !jumps(JMP, JSLE, 1, 0));
    // JMP32 looks at the low 32 bits only.
    assert!(jumps(JMP32, JEQ, 0x1_0000_0005, 5) && !jumps(JMP, JEQ, 0x1_0000_0005, 5));
    assert!(jumps(JMP32, JSLT, 0xffff_ffff, 0) && !jumps(JMP, JSLT, 0xffff_ffff, 0));
}

#[test]
fn immediate_loads_and_memory() {
    let mut p = lddw(0, 0xdead_beef_cafe_f00d).to_vec();
    p.push(exit());
    assert_eq!(exec(&p).unwrap(), 0xdead_beef_cafe_f00d);
    // Store every size on the stack, load back (and sign-extending loads).
    let mut p = lddw(1, 0x8182_8384_8586_8788).to_vec();
    p.extend([
        i(STX | MEM | DW, 10, 1, -8, 0),
        i(LDX | MEM | B, 0, 10, -8, 0),
        i(LDX | MEM | H, 2, 10, -8, 0),
        i(LDX | MEM | W, 3, 10, -8, 0),
        i(LDX | MEMSX | B, 4, 10, -8, 0),
        i(ST | MEM | H, 10, 0, -16, -2),
        i(LDX | MEM | DW, 5, 10, -16, 0),
        i(ALU64 | ADD | X, 0, 2, 0, 0),
        i(ALU64 | ADD | X, 0, 3, 0, 0),
        i(ALU64 | ADD | X, 0, 4, 0, 0),
        i(ALU64 | ADD | X, 0, 5, 0, 0),
        exit(),
    ]);
    let want = (0x88u64 + 0x8788 + 0x8586_8788 + 0xfffe).wrapping_sub(0x78);
    assert_eq!(exec(&p).unwrap(), want);
}

#[test]
fn atomics() {
    let prog = |op: i32, size: u8| {
        vec![
            mov64(1, 10),
            i(STX | MEM | size, 10, 1, -8, 0),
            mov64(2, 6),
            mov64(0, 10),
            i(STX | ATOMIC | size, 10, 2, -8, op),
            i(LDX | MEM | size, 3, 10, -8, 0),
            // r0 = memory * 1000 + fetched (r2) * 10 + r0 % 10 (cmpxchg's r0)
            i(ALU64 | MUL | K, 3, 0, 0, 1000),
            i(ALU64 | MUL | K, 2, 0, 0, 10),
            i(ALU64 | MOD | K, 0, 0, 0, 10),
            i(ALU64 | ADD | X, 0, 3, 0, 0),
            i(ALU64 | ADD | X, 0, 2, 0, 0),
            exit(),
        ]
    };
    assert_eq!(exec(&prog(0x00, DW)).unwrap(), 16_000 + 60); // add
    assert_eq!(exec(&prog(0x01, W)).unwrap(), 16_000 + 100); // fetch add: r2 = old 10
    assert_eq!(exec(&prog(0x40, DW)).unwrap(), 14_000 + 60); // or
    assert_eq!(exec(&prog(0x50, DW)).unwrap(), 2_000 + 60); // and
    assert_eq!(exec(&prog(0xa1, DW)).unwrap(), 12_000 + 100); // fetch xor
    assert_eq!(exec(&prog(XCHG, DW)).unwrap(), 6_000 + 100);
    // cmpxchg: r0 (10) == memory (10): memory = r2 (6), r0 = old (10 % 10 = 0).
    assert_eq!(exec(&prog(CMPXCHG, DW)).unwrap(), 6_000 + 60);
}

#[test]
fn bpf_to_bpf_calls_keep_callee_saved_registers_and_frames() {
    let p = [
        mov64(6, 1),
        i(ST | MEM | DW, 10, 0, -8, 100),
        i(JMP | CALL, 0, PSEUDO_CALL, 0, 3), // -> 6
        i(LDX | MEM | DW, 1, 10, -8, 0),
        i(ALU64 | ADD | X, 0, 1, 0, 0),
        i(ALU64 | ADD | X, 0, 6, 0, 0),
        // 6: the callee clobbers r6 and its own stack slot.
        mov64(6, 50),
        i(ST | MEM | DW, 10, 0, -8, 7),
        i(LDX | MEM | DW, 0, 10, -8, 0),
        exit(),
    ];
    // Wrong layout on purpose? No: insert the main's exit before the callee.
    let mut q = p[..6].to_vec();
    q.push(exit());
    q.extend_from_slice(&p[6..]);
    q[2].imm = 4;
    assert_eq!(verify(&q, ProgType::LwtSeg6local, 0), Ok(()));
    assert_eq!(exec(&q).unwrap(), 7 + 100 + 1);
}

#[test]
fn the_context() {
    let p = [
        i(LDX | MEM | W, 2, 1, 76, 0), // data
        i(LDX | MEM | W, 3, 1, 80, 0), // data_end
        i(ALU64 | SUB | X, 3, 2, 0, 0),
        i(LDX | MEM | W, 0, 1, 0, 0), // len
        i(ALU64 | LSH | K, 0, 0, 0, 16),
        i(ALU64 | OR | X, 0, 3, 0, 0),
        i(LDX | MEM | B, 4, 1, 16, 0), // first byte of protocol (0x86)
        i(ALU64 | LSH | K, 4, 0, 0, 32),
        i(ALU64 | OR | X, 0, 4, 0, 0),
        i(LDX | MEM | B, 5, 2, 1, 0), // packet byte 1
        i(ALU64 | LSH | K, 5, 0, 0, 40),
        i(ALU64 | OR | X, 0, 5, 0, 0),
        exit(),
    ];
    assert_eq!(exec(&p).unwrap(), (0xab << 40) | (0x86 << 32) | (64 << 16) | 64);
}

fn fault(p: &[Insn]) -> Fault {
    match exec(p) {
        Err(f) => f,
        Ok(r) => panic!("ran to completion: {r}"),
    }
}

#[test]
fn escapes_are_faults() {
    // Past the top of the stack, below its bottom.
    assert!(matches!(fault(&[i(ST | MEM | DW, 10, 0, 0, 1), exit()]), Fault::OutOfBounds { .. }));
    assert!(matches!(fault(&[i(LDX | MEM | B, 0, 10, -513, 0), exit()]), Fault::OutOfBounds { .. }));
    // A null pointer (a failed lookup not checked), a forged one.
    assert!(matches!(fault(&[mov64(1, 0), i(LDX | MEM | W, 0, 1, 0, 0), exit()]), Fault::OutOfBounds { .. }));
    let mut forged = lddw(1, 0x0000_0500_0000_0000).to_vec();
    forged.extend([i(LDX | MEM | W, 0, 1, 0, 0), exit()]);
    assert!(matches!(fault(&forged), Fault::OutOfBounds { .. }));
    // Past the packet's end; writing the packet (read-only for lwt_seg6local).
    let p = [i(LDX | MEM | W, 2, 1, 76, 0), i(LDX | MEM | W, 0, 2, 62, 0), exit()];
    assert!(matches!(fault(&p), Fault::OutOfBounds { len: 4, .. }));
    let p = [i(LDX | MEM | W, 2, 1, 76, 0), i(ST | MEM | B, 2, 0, 0, 1), exit()];
    assert!(matches!(fault(&p), Fault::ReadOnly { .. }));
    // Context: an offset past the struct, a field LWT may not read, a write to len,
    // an unaligned load, an 8-byte load of data.
    for p in [
        [i(LDX | MEM | W, 0, 1, 192, 0), exit()],
        [i(LDX | MEM | W, 0, 1, 72, 0), exit()],
        [i(ST | MEM | W, 1, 0, 0, 5), exit()],
        [i(LDX | MEM | W, 0, 1, 2, 0), exit()],
        [i(LDX | MEM | DW, 0, 1, 76, 0), exit()],
    ] {
        assert!(matches!(fault(&p), Fault::BadContext { .. }), "{p:?}");
    }
    // A map handle is not memory; .rodata is not writable; a map value past its end.
    let mut p = vec![i(LD | IMM | DW, 1, PSEUDO_MAP_FD, 0, 0), i(0, 0, 0, 0, 0)];
    p.extend([i(LDX | MEM | B, 0, 1, 0, 0), exit()]);
    assert!(matches!(fault(&p), Fault::OutOfBounds { .. }));
    let mut p = vec![i(LD | IMM | DW, 1, PSEUDO_MAP_VALUE, 0, 1), i(0, 0, 0, 0, 0)];
    p.extend([i(ST | MEM | B, 1, 0, 0, 1), exit()]);
    assert!(matches!(fault(&p), Fault::ReadOnly { .. }));
    let mut p = vec![i(LD | IMM | DW, 1, PSEUDO_MAP_VALUE, 0, 0), i(0, 0, 0, 0, 12)];
    p.extend([i(LDX | MEM | DW, 0, 1, 0, 0), exit()]);
    assert!(matches!(fault(&p), Fault::OutOfBounds { .. }));
    // A helper given a forged map, a key outside memory.
    let p = [mov64(1, 0), i(JMP | CALL, 0, 0, 0, 1), exit()];
    assert!(matches!(fault(&p), Fault::BadHelperArg { .. }));
    let mut p = vec![i(LD | IMM | DW, 1, PSEUDO_MAP_FD, 0, 0), i(0, 0, 0, 0, 0)];
    p.extend([mov64(2, 0), i(JMP | CALL, 0, 0, 0, 1), exit()]);
    assert!(matches!(fault(&p), Fault::OutOfBounds { .. }));
    // A loop (refused by the verifier) runs out of budget; recursion runs out of frames.
    assert_eq!(fault(&[i(JMP | JA, 0, 0, -1, 0)]), Fault::Budget(10_000));
    assert!(matches!(fault(&[i(JMP | CALL, 0, PSEUDO_CALL, 0, -1), exit()]), Fault::CallTooDeep { .. }));
    // Falling off the end.
    assert!(matches!(fault(&[mov64(0, 1)]), Fault::PcOutOfRange(1)));
}

#[test]
fn map_helpers_from_a_program() {
    // key 1 on the stack; update the array's element 1 with 0x55..; look it up; read it.
    let mut p = vec![i(ST | MEM | W, 10, 0, -4, 1), i(ST | MEM | DW, 10, 0, -16, 0x55)];
    p.extend([i(LD | IMM | DW, 1, PSEUDO_MAP_FD, 0, 0), i(0, 0, 0, 0, 0)]);
    p.extend([
        i(ALU64 | MOV | X, 2, 10, 0, 0),
        i(ALU64 | ADD | K, 2, 0, 0, -4),
        i(ALU64 | MOV | X, 3, 10, 0, 0),
        i(ALU64 | ADD | K, 3, 0, 0, -16),
        mov64(4, 0),
        i(JMP | CALL, 0, 0, 0, 2),
        i(JMP | JNE | K, 0, 0, 7, 0),
    ]);
    p.extend([i(LD | IMM | DW, 1, PSEUDO_MAP_FD, 0, 0), i(0, 0, 0, 0, 0)]);
    p.extend([
        i(ALU64 | MOV | X, 2, 10, 0, 0),
        i(ALU64 | ADD | K, 2, 0, 0, -4),
        i(JMP | CALL, 0, 0, 0, 1),
        i(JMP | JEQ | K, 0, 0, 1, 0),
        i(LDX | MEM | DW, 0, 0, 0, 0),
        exit(),
    ]);
    assert_eq!(verify(&p, ProgType::LwtSeg6local, 2), Ok(()));
    assert_eq!(exec(&p).unwrap(), 0x55);
}

#[test]
fn a_reused_scratch_leaks_nothing_between_runs() {
    use sr6_bpf::{run_with, Scratch};
    let prog = |insns: Vec<Insn>| Program::new("t", ProgType::LwtSeg6local, insns);
    let write = prog(vec![i(ST | MEM | DW, 10, 0, -8, 0x5a5a), mov64(0, 0), exit()]);
    let read = prog(vec![i(LDX | MEM | DW, 0, 10, -8, 0), exit()]);
    let mut s = Scratch::default();
    let mut pkt = Seg6Packet::new(vec![0; 40]);
    let mut m = maps();
    assert_eq!(run_with(&mut s, &write, &mut m, &mut pkt, RunOpts::default()), Ok(0));
    assert_eq!(run_with(&mut s, &read, &mut m, &mut pkt, RunOpts::default()), Ok(0));
}
