//! The verifier-lite refusals, each on the smallest stream that shows it (what the
//! kernel's verifier refuses on the instruction stream alone), and what it accepts.

use sr6_bpf::helpers::ProgType;
use sr6_bpf::insn::*;
use sr6_bpf::verifier::{verify, VerifyError as E};

fn i(code: u8, dst: u8, src: u8, off: i16, imm: i32) -> Insn {
    Insn { code, dst, src, off, imm }
}
fn mov(d: u8, imm: i32) -> Insn {
    i(ALU64 | MOV | K, d, 0, 0, imm)
}
fn exit() -> Insn {
    i(JMP | EXIT, 0, 0, 0, 0)
}
fn v(p: &[Insn]) -> Result<(), E> {
    verify(p, ProgType::LwtSeg6local, 1)
}

#[test]
fn accepted() {
    assert_eq!(v(&[mov(0, 0), exit()]), Ok(()));
    // A forward branch to a shared exit reached backwards: no loop.
    let p = [mov(0, 0), i(JMP | JA, 0, 0, 1, 0), exit(), i(JMP | JEQ | K, 0, 0, -2, 0), exit()];
    assert_eq!(v(&p), Ok(()));
    // A map load and a helper call.
    let p = [i(LD | IMM | DW, 1, PSEUDO_MAP_FD, 0, 0), i(0, 0, 0, 0, 0), i(JMP | CALL, 0, 0, 0, 1), exit()];
    assert_eq!(v(&p), Ok(()));
}

#[test]
fn refused() {
    assert_eq!(v(&[]), Err(E::Empty));
    assert_eq!(v(&[i(0xff, 0, 0, 0, 0), exit()]), Err(E::BadOpcode { pc: 0, code: 0xff }));
    assert_eq!(v(&[i(ALU64 | MOV | X, 0, 11, 0, 0), exit()]), Err(E::BadRegister { pc: 0, reg: 11 }));
    assert_eq!(v(&[mov(10, 0), exit()]), Err(E::FramePointerWrite { pc: 0 }));
    assert_eq!(v(&[i(STX | ATOMIC | DW, 1, 10, 0, XCHG), exit()]), Err(E::FramePointerWrite { pc: 0 }));
    assert_eq!(v(&[i(JMP | JA, 0, 0, 5, 0), exit()]), Err(E::JumpOutOfRange { pc: 0, target: 6 }));
    let p = [i(JMP | JA, 0, 0, 1, 0), i(LD | IMM | DW, 0, 0, 0, 0), i(0, 0, 0, 0, 0), exit()];
    assert_eq!(v(&p), Err(E::JumpIntoLdImm64 { pc: 0, target: 2 }));
    assert_eq!(v(&[i(LD | IMM | DW, 0, 0, 0, 0)]), Err(E::IncompleteLdImm64 { pc: 0 }));
    let p = [i(LD | IMM | DW, 1, PSEUDO_MAP_FD, 0, 3), i(0, 0, 0, 0, 0), exit()];
    assert_eq!(v(&p), Err(E::BadMapRef { pc: 0, map: 3, maps: 1 }));
    assert_eq!(v(&[mov(0, 0), i(JMP | JA, 0, 0, -2, 0)]), Err(E::BackEdge { pc: 1, target: 0 }));
    assert_eq!(v(&[i(JMP | JA, 0, 0, -1, 0), exit()]), Err(E::BackEdge { pc: 0, target: 0 }));
    assert_eq!(v(&[i(JMP | CALL, 0, 0, 0, 9999), exit()]), Err(E::UnknownHelper { pc: 0, id: 9999 }));
    assert!(matches!(v(&[i(JMP | CALL, 0, 0, 0, 73), exit()]), Err(E::HelperNotAllowed { id: 73, .. })));
    assert!(matches!(v(&[i(JMP | CALL, 0, 0, 0, 39), exit()]), Err(E::HelperNotProvided { id: 39, .. })));
    assert_eq!(v(&[i(ALU64 | MOD | K, 0, 0, 0, 0), exit()]), Err(E::DivByZero { pc: 0 }));
    assert_eq!(v(&[i(ALU | LSH | K, 0, 0, 0, 32), exit()]), Err(E::BadShift { pc: 0, imm: 32 }));
    assert_eq!(v(&[i(ALU | END | X, 0, 0, 0, 8), exit()]), Err(E::BadEndian { pc: 0, imm: 8 }));
    assert!(matches!(v(&[i(LD | ABS | W, 0, 0, 0, 0), exit()]), Err(E::LegacyLoad { pc: 0, .. })));
    let rec = [i(JMP | CALL, 0, PSEUDO_CALL, 0, 1), exit(), i(JMP | CALL, 0, PSEUDO_CALL, 0, -1), exit()];
    assert_eq!(v(&rec), Err(E::Recursion { pc: 2 }));
    // Nine nested functions: one more than the kernel's 8 frames.
    let mut deep = Vec::new();
    for _ in 0..9 {
        deep.push(i(JMP | CALL, 0, PSEUDO_CALL, 0, 1));
        deep.push(exit());
    }
    deep.push(exit());
    assert!(matches!(v(&deep), Err(E::CallTooDeep { .. })));
    assert_eq!(v(&[mov(0, 0)]), Err(E::FallsOffEnd { pc: 0 }));
    assert_eq!(v(&[exit(), mov(0, 0), exit()]), Err(E::Unreachable { pc: 1 }));
    assert_eq!(v(&[i(ALU64 | ADD | K, 0, 0, 3, 0), exit()]), Err(E::Reserved { pc: 0 }));
}

#[test]
fn messages_name_the_instruction() {
    let e = v(&[i(JMP | CALL, 0, 0, 0, 39), exit()]).unwrap_err();
    assert_eq!(e.to_string(), "insn 0: helper bpf_skb_pull_data (id 39) is not provided by sr6 yet");
    let e = v(&[mov(0, 0), i(JMP | JA, 0, 0, -2, 0)]).unwrap_err();
    assert_eq!(e.to_string(), "insn 1: back-edge to 0: loops are not supported (yet) by sr6's verifier");
}
