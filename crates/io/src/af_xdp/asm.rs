//! A tiny eBPF assembler: the opcodes sr6's XDP programs use, with forward jumps to
//! labels. Encodings from the kernel's `Documentation/bpf/standardization/instruction-set.rst`.

use super::bpf::Insn;

// Opcodes: class | size/op | mode/source.
pub(crate) const LDX_W: u8 = 0x61; // BPF_LDX | BPF_MEM | BPF_W
pub(crate) const LDX_H: u8 = 0x69; // BPF_LDX | BPF_MEM | BPF_H
pub(crate) const LDX_B: u8 = 0x71; // BPF_LDX | BPF_MEM | BPF_B
pub(crate) const MOV64_REG: u8 = 0xbf; // BPF_ALU64 | BPF_MOV | BPF_X
pub(crate) const MOV64_IMM: u8 = 0xb7; // BPF_ALU64 | BPF_MOV | BPF_K
pub(crate) const ADD64_IMM: u8 = 0x07; // BPF_ALU64 | BPF_ADD | BPF_K
pub(crate) const LD_IMM64: u8 = 0x18; // BPF_LD | BPF_IMM | BPF_DW
pub(crate) const JA: u8 = 0x05; // BPF_JMP | BPF_JA
pub(crate) const JEQ_IMM: u8 = 0x15; // BPF_JMP | BPF_JEQ | BPF_K
pub(crate) const JGT_REG: u8 = 0x2d; // BPF_JMP | BPF_JGT | BPF_X
pub(crate) const JSET_IMM: u8 = 0x45; // BPF_JMP | BPF_JSET | BPF_K
pub(crate) const JNE_IMM: u8 = 0x55; // BPF_JMP | BPF_JNE | BPF_K
pub(crate) const JLT_IMM: u8 = 0xa5; // BPF_JMP | BPF_JLT | BPF_K
pub(crate) const JLE_IMM: u8 = 0xb5; // BPF_JMP | BPF_JLE | BPF_K
pub(crate) const CALL: u8 = 0x85; // BPF_JMP | BPF_CALL
pub(crate) const EXIT: u8 = 0x95; // BPF_JMP | BPF_EXIT
/// `src_reg` of a `LD_IMM64` whose immediate is a map file descriptor.
pub(crate) const BPF_PSEUDO_MAP_FD: u8 = 1;

// Helpers (enum bpf_func_id).
pub(crate) const BPF_FUNC_MAP_LOOKUP_ELEM: i32 = 1;
pub(crate) const BPF_FUNC_REDIRECT_MAP: i32 = 51;

// `struct xdp_md` offsets.
pub(crate) const MD_DATA: i16 = 0;
pub(crate) const MD_DATA_END: i16 = 4;
pub(crate) const MD_RX_QUEUE_INDEX: i16 = 16;

/// Registers: r0 return value, r1-r5 arguments (clobbered by calls), r6-r9 kept across
/// calls, r10 the read-only frame pointer.
pub(crate) const R0: u8 = 0;
pub(crate) const R1: u8 = 1;
pub(crate) const R2: u8 = 2;
pub(crate) const R3: u8 = 3;
pub(crate) const R4: u8 = 4;
pub(crate) const R5: u8 = 5;
pub(crate) const R6: u8 = 6;
pub(crate) const R7: u8 = 7;
pub(crate) const R8: u8 = 8;
pub(crate) const R9: u8 = 9;
pub(crate) const R10: u8 = 10;

/// A jump target, bound to an instruction index by [`Asm::bind`].
#[derive(Clone, Copy)]
pub(crate) struct Label(usize);

/// A tiny assembler: the opcodes above, with forward jumps to labels.
pub(crate) struct Asm {
    insns: Vec<Insn>,
    labels: Vec<Option<usize>>,
    fixups: Vec<(usize, Label)>,
}

impl Asm {
    pub(crate) fn new() -> Asm {
        Asm { insns: Vec::with_capacity(64), labels: Vec::new(), fixups: Vec::new() }
    }
    pub(crate) fn label(&mut self) -> Label {
        self.labels.push(None);
        Label(self.labels.len() - 1)
    }
    pub(crate) fn bind(&mut self, l: Label) {
        self.labels[l.0] = Some(self.insns.len());
    }
    pub(crate) fn emit(&mut self, code: u8, dst: u8, src: u8, off: i16, imm: i32) {
        self.insns.push(Insn::new(code, dst, src, off, imm));
    }
    pub(crate) fn jump(&mut self, code: u8, dst: u8, src: u8, imm: i32, to: Label) {
        self.fixups.push((self.insns.len(), to));
        self.emit(code, dst, src, 0, imm);
    }
    pub(crate) fn ld_map_fd(&mut self, dst: u8, fd: i32) {
        // Two slots: the low 32 bits, then the high 32 bits (0).
        self.emit(LD_IMM64, dst, BPF_PSEUDO_MAP_FD, 0, fd);
        self.emit(0, 0, 0, 0, 0);
    }
    pub(crate) fn finish(mut self) -> Vec<Insn> {
        for &(at, l) in &self.fixups {
            // Every label of the (fixed) program is bound before `finish`; the unit
            // tests assemble it, so a missing bind fails them, never a live router.
            let target = self.labels[l.0].expect("label bound");
            // Offsets count from the instruction after the jump.
            self.insns[at].off = (target as isize - at as isize - 1) as i16;
        }
        self.insns
    }
}

// More opcodes, for the traffic generator's program (`gen_prog.rs`).
pub(crate) const STX_H: u8 = 0x6b; // BPF_STX | BPF_MEM | BPF_H
pub(crate) const STX_W: u8 = 0x63; // BPF_STX | BPF_MEM | BPF_W
pub(crate) const STX_DW: u8 = 0x7b; // BPF_STX | BPF_MEM | BPF_DW
pub(crate) const ST_W: u8 = 0x62; // BPF_ST | BPF_MEM | BPF_W
pub(crate) const ADD64_REG: u8 = 0x0f; // BPF_ALU64 | BPF_ADD | BPF_X
pub(crate) const AND64_IMM: u8 = 0x57; // BPF_ALU64 | BPF_AND | BPF_K
pub(crate) const XOR64_IMM: u8 = 0xa7; // BPF_ALU64 | BPF_XOR | BPF_K
pub(crate) const RSH64_IMM: u8 = 0x77; // BPF_ALU64 | BPF_RSH | BPF_K
pub(crate) const ADD32_IMM: u8 = 0x04; // BPF_ALU | BPF_ADD | BPF_K
/// Byte swap to big-endian (BPF_ALU | BPF_END | BPF_TO_BE); `imm` is the width in bits.
pub(crate) const TO_BE: u8 = 0xdc;
pub(crate) const BPF_FUNC_KTIME_GET_NS: i32 = 5;
pub(crate) const LDX_DW: u8 = 0x79; // BPF_LDX | BPF_MEM | BPF_DW
pub(crate) const STX_B: u8 = 0x73; // BPF_STX | BPF_MEM | BPF_B
pub(crate) const SUB64_REG: u8 = 0x1f; // BPF_ALU64 | BPF_SUB | BPF_X
pub(crate) const MUL64_REG: u8 = 0x2f; // BPF_ALU64 | BPF_MUL | BPF_X
pub(crate) const DIV64_REG: u8 = 0x3f; // BPF_ALU64 | BPF_DIV | BPF_X (unsigned)
pub(crate) const LSH64_IMM: u8 = 0x67; // BPF_ALU64 | BPF_LSH | BPF_K
pub(crate) const JGE_REG: u8 = 0x3d; // BPF_JMP | BPF_JGE | BPF_X
pub(crate) const JLT_REG: u8 = 0xad; // BPF_JMP | BPF_JLT | BPF_X
pub(crate) const JLE_REG: u8 = 0xbd; // BPF_JMP | BPF_JLE | BPF_X
pub(crate) const JLT_IMM32: u8 = 0xa6; // BPF_JMP32 | BPF_JLT | BPF_K
