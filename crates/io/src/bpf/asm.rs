//! A tiny eBPF assembler: the opcodes sr6's programs use (the router's XDP program and
//! the tester's programs of `sr6 perf`), with forward jumps to labels. Encodings from
//! the kernel's `Documentation/bpf/standardization/instruction-set.rst`.
//!
//! ```
//! use sr6_io::bpf::asm::*;
//! let mut a = Asm::new();
//! let out = a.label();
//! a.emit(MOV64_IMM, R0, 0, 0, XDP_PASS as i32);
//! a.jump(JA, 0, 0, 0, out);
//! a.emit(MOV64_IMM, R0, 0, 0, XDP_DROP as i32); // skipped
//! a.bind(out);
//! a.emit(EXIT, 0, 0, 0, 0);
//! let insns = a.finish();
//! assert_eq!(insns[1].off, 1);
//! ```

use super::Insn;

/// XDP actions (`enum xdp_action`).
pub const XDP_ABORTED: u32 = 0;
pub const XDP_DROP: u32 = 1;
pub const XDP_PASS: u32 = 2;
pub const XDP_TX: u32 = 3;
pub const XDP_REDIRECT: u32 = 4;

// Opcodes: class | size/op | mode/source.
pub const LDX_W: u8 = 0x61; // BPF_LDX | BPF_MEM | BPF_W
pub const LDX_H: u8 = 0x69; // BPF_LDX | BPF_MEM | BPF_H
pub const LDX_B: u8 = 0x71; // BPF_LDX | BPF_MEM | BPF_B
pub const MOV64_REG: u8 = 0xbf; // BPF_ALU64 | BPF_MOV | BPF_X
pub const MOV64_IMM: u8 = 0xb7; // BPF_ALU64 | BPF_MOV | BPF_K
pub const ADD64_IMM: u8 = 0x07; // BPF_ALU64 | BPF_ADD | BPF_K
pub const LD_IMM64: u8 = 0x18; // BPF_LD | BPF_IMM | BPF_DW
pub const JA: u8 = 0x05; // BPF_JMP | BPF_JA
pub const JEQ_IMM: u8 = 0x15; // BPF_JMP | BPF_JEQ | BPF_K
pub const JGT_REG: u8 = 0x2d; // BPF_JMP | BPF_JGT | BPF_X
pub const JSET_IMM: u8 = 0x45; // BPF_JMP | BPF_JSET | BPF_K
pub const JNE_IMM: u8 = 0x55; // BPF_JMP | BPF_JNE | BPF_K
pub const JLT_IMM: u8 = 0xa5; // BPF_JMP | BPF_JLT | BPF_K
pub const JLE_IMM: u8 = 0xb5; // BPF_JMP | BPF_JLE | BPF_K
pub const CALL: u8 = 0x85; // BPF_JMP | BPF_CALL
pub const EXIT: u8 = 0x95; // BPF_JMP | BPF_EXIT
/// `src_reg` of a `LD_IMM64` whose immediate is a map file descriptor.
pub const BPF_PSEUDO_MAP_FD: u8 = 1;

// Helpers (enum bpf_func_id).
pub const BPF_FUNC_MAP_LOOKUP_ELEM: i32 = 1;
pub const BPF_FUNC_REDIRECT_MAP: i32 = 51;

// `struct xdp_md` offsets.
pub const MD_DATA: i16 = 0;
pub const MD_DATA_END: i16 = 4;
pub const MD_RX_QUEUE_INDEX: i16 = 16;

/// Registers: r0 return value, r1-r5 arguments (clobbered by calls), r6-r9 kept across
/// calls, r10 the read-only frame pointer.
pub const R0: u8 = 0;
pub const R1: u8 = 1;
pub const R2: u8 = 2;
pub const R3: u8 = 3;
pub const R4: u8 = 4;
pub const R5: u8 = 5;
pub const R6: u8 = 6;
pub const R7: u8 = 7;
pub const R8: u8 = 8;
pub const R9: u8 = 9;
pub const R10: u8 = 10;

/// A jump target, bound to an instruction index by [`Asm::bind`].
#[derive(Debug, Clone, Copy)]
pub struct Label(usize);

/// A tiny assembler: the opcodes above, with forward jumps to labels.
#[derive(Debug, Default)]
pub struct Asm {
    insns: Vec<Insn>,
    labels: Vec<Option<usize>>,
    fixups: Vec<(usize, Label)>,
}

impl Asm {
    /// An empty program.
    pub fn new() -> Asm {
        Asm { insns: Vec::with_capacity(64), labels: Vec::new(), fixups: Vec::new() }
    }
    /// A new jump target, not bound yet.
    pub fn label(&mut self) -> Label {
        self.labels.push(None);
        Label(self.labels.len() - 1)
    }
    /// Binds `l` to the next instruction emitted.
    pub fn bind(&mut self, l: Label) {
        self.labels[l.0] = Some(self.insns.len());
    }
    /// Appends one instruction.
    pub fn emit(&mut self, code: u8, dst: u8, src: u8, off: i16, imm: i32) {
        self.insns.push(Insn::new(code, dst, src, off, imm));
    }
    /// Appends a jump (`code`: a `J*` opcode) to `to`, whose offset [`Asm::finish`] sets.
    pub fn jump(&mut self, code: u8, dst: u8, src: u8, imm: i32, to: Label) {
        self.fixups.push((self.insns.len(), to));
        self.emit(code, dst, src, 0, imm);
    }
    /// Loads the map with descriptor `fd` into `dst` (two instruction slots; the
    /// kernel replaces the descriptor with the map when it loads the program).
    pub fn ld_map_fd(&mut self, dst: u8, fd: i32) {
        // Two slots: the low 32 bits, then the high 32 bits (0).
        self.emit(LD_IMM64, dst, BPF_PSEUDO_MAP_FD, 0, fd);
        self.emit(0, 0, 0, 0, 0);
    }
    /// The program, every jump's offset set.
    ///
    /// # Panics
    /// If a label jumped to was never bound: a bug of the program's assembly code,
    /// which its unit tests (assembling it) catch before any use.
    pub fn finish(mut self) -> Vec<Insn> {
        for &(at, l) in &self.fixups {
            let target = self.labels[l.0].expect("label bound");
            // Offsets count from the instruction after the jump.
            self.insns[at].off = (target as isize - at as isize - 1) as i16;
        }
        self.insns
    }
}

// More opcodes, for the tester's programs of `sr6 perf`.
pub const STX_H: u8 = 0x6b; // BPF_STX | BPF_MEM | BPF_H
pub const STX_W: u8 = 0x63; // BPF_STX | BPF_MEM | BPF_W
pub const STX_DW: u8 = 0x7b; // BPF_STX | BPF_MEM | BPF_DW
pub const ST_W: u8 = 0x62; // BPF_ST | BPF_MEM | BPF_W
pub const ADD64_REG: u8 = 0x0f; // BPF_ALU64 | BPF_ADD | BPF_X
pub const AND64_IMM: u8 = 0x57; // BPF_ALU64 | BPF_AND | BPF_K
pub const XOR64_IMM: u8 = 0xa7; // BPF_ALU64 | BPF_XOR | BPF_K
pub const RSH64_IMM: u8 = 0x77; // BPF_ALU64 | BPF_RSH | BPF_K
pub const ADD32_IMM: u8 = 0x04; // BPF_ALU | BPF_ADD | BPF_K
/// Byte swap to big-endian (BPF_ALU | BPF_END | BPF_TO_BE); `imm` is the width in bits.
pub const TO_BE: u8 = 0xdc;
pub const BPF_FUNC_KTIME_GET_NS: i32 = 5;
pub const LDX_DW: u8 = 0x79; // BPF_LDX | BPF_MEM | BPF_DW
pub const STX_B: u8 = 0x73; // BPF_STX | BPF_MEM | BPF_B
pub const SUB64_REG: u8 = 0x1f; // BPF_ALU64 | BPF_SUB | BPF_X
pub const MUL64_REG: u8 = 0x2f; // BPF_ALU64 | BPF_MUL | BPF_X
pub const DIV64_REG: u8 = 0x3f; // BPF_ALU64 | BPF_DIV | BPF_X (unsigned)
pub const LSH64_IMM: u8 = 0x67; // BPF_ALU64 | BPF_LSH | BPF_K
pub const JGE_REG: u8 = 0x3d; // BPF_JMP | BPF_JGE | BPF_X
pub const JLT_REG: u8 = 0xad; // BPF_JMP | BPF_JLT | BPF_X
pub const JLE_REG: u8 = 0xbd; // BPF_JMP | BPF_JLE | BPF_X
pub const JLT_IMM32: u8 = 0xa6; // BPF_JMP32 | BPF_JLT | BPF_K
pub const LSH64_REG: u8 = 0x6f; // BPF_ALU64 | BPF_LSH | BPF_X
pub const RSH64_REG: u8 = 0x7f; // BPF_ALU64 | BPF_RSH | BPF_X
pub const OR64_REG: u8 = 0x4f; // BPF_ALU64 | BPF_OR | BPF_X
pub const JSET_REG: u8 = 0x4d; // BPF_JMP | BPF_JSET | BPF_X
pub const JGT_IMM: u8 = 0x25; // BPF_JMP | BPF_JGT | BPF_K
pub const JGE_IMM: u8 = 0x35; // BPF_JMP | BPF_JGE | BPF_K
/// `bpf_redirect(ifindex, flags)`.
pub const BPF_FUNC_REDIRECT: i32 = 23;
/// `bpf_skb_pull_data(skb, len)`.
pub const BPF_FUNC_SKB_PULL_DATA: i32 = 39;
/// `struct xdp_md`'s `ingress_ifindex`.
pub const MD_INGRESS_IFINDEX: i16 = 12;
