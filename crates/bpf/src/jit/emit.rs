//! A small x86-64 encoder: exactly the instructions the JIT emits, over host register
//! numbers (0 = rax .. 15 = r15), with forward and backward labels patched at the end.
//! Memory operands are always `[base + disp32]` (mod 10, with a SIB byte for rsp/r12), so
//! no base register needs a special case.

pub const RAX: u8 = 0;
pub const RCX: u8 = 1;
pub const RDX: u8 = 2;
pub const RBX: u8 = 3;
pub const RSP: u8 = 4;
pub const RBP: u8 = 5;
pub const RSI: u8 = 6;
pub const RDI: u8 = 7;
pub const R8: u8 = 8;
pub const R9: u8 = 9;
pub const R10: u8 = 10;
pub const R11: u8 = 11;
pub const R12: u8 = 12;
pub const R13: u8 = 13;
pub const R14: u8 = 14;
pub const R15: u8 = 15;

/// ALU operations of the `op r/m, r` (opcode) and `81 /ext` (ext) forms.
#[derive(Clone, Copy)]
pub enum Alu {
    Add,
    Or,
    And,
    Sub,
    Xor,
    Cmp,
}

impl Alu {
    fn opcode(self) -> u8 {
        match self {
            Alu::Add => 0x01,
            Alu::Or => 0x09,
            Alu::And => 0x21,
            Alu::Sub => 0x29,
            Alu::Xor => 0x31,
            Alu::Cmp => 0x39,
        }
    }

    fn ext(self) -> u8 {
        match self {
            Alu::Add => 0,
            Alu::Or => 1,
            Alu::And => 4,
            Alu::Sub => 5,
            Alu::Xor => 6,
            Alu::Cmp => 7,
        }
    }
}

/// Shift and rotate operations (the /ext of C1 and D3).
pub const ROR: u8 = 1;
pub const SHL: u8 = 4;
pub const SHR: u8 = 5;
pub const SAR: u8 = 7;

/// Condition codes (the low nibble of `0F 8x` jcc).
pub const CC_B: u8 = 0x2;
pub const CC_AE: u8 = 0x3;
pub const CC_E: u8 = 0x4;
pub const CC_NE: u8 = 0x5;
pub const CC_BE: u8 = 0x6;
pub const CC_A: u8 = 0x7;
pub const CC_L: u8 = 0xc;
pub const CC_GE: u8 = 0xd;
pub const CC_LE: u8 = 0xe;
pub const CC_G: u8 = 0xf;

/// An operand: a register or `[base + disp32]`.
#[derive(Clone, Copy)]
enum Rm {
    Reg(u8),
    Mem(u8, i32),
}

/// A label: an index into [`Asm`]'s label table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Label(usize);

#[derive(Default)]
pub struct Asm {
    pub code: Vec<u8>,
    labels: Vec<Option<usize>>,
    /// (position of a rel32, label it points to).
    fixups: Vec<(usize, Label)>,
}

impl Asm {
    pub fn label(&mut self) -> Label {
        self.labels.push(None);
        Label(self.labels.len() - 1)
    }

    pub fn bind(&mut self, l: Label) {
        self.labels[l.0] = Some(self.code.len());
    }

    /// Patches every rel32; `None` when a label was never bound or is out of reach.
    pub fn finish(mut self) -> Option<Vec<u8>> {
        for &(pos, l) in &self.fixups {
            let target = self.labels[l.0]? as i64;
            let rel = i32::try_from(target - (pos as i64 + 4)).ok()?;
            self.code[pos..pos + 4].copy_from_slice(&rel.to_le_bytes());
        }
        Some(self.code)
    }

    fn b(&mut self, x: u8) {
        self.code.push(x);
    }

    fn d32(&mut self, x: i32) {
        self.code.extend_from_slice(&x.to_le_bytes());
    }

    fn rel(&mut self, l: Label) {
        self.fixups.push((self.code.len(), l));
        self.d32(0);
    }

    /// `[66] [REX] op.. modrm [sib] [disp32]` with `reg` in modrm.reg. `byte_reg`: the
    /// reg field names a byte register (sil/dil/spl/bpl need a REX prefix).
    fn enc(&mut self, p66: bool, w: bool, byte_reg: bool, op: &[u8], reg: u8, rm: Rm) {
        if p66 {
            self.b(0x66);
        }
        let (rmr, _) = match rm {
            Rm::Reg(r) => (r, 0),
            Rm::Mem(b, d) => (b, d),
        };
        let rex = 0x40 | (u8::from(w) << 3) | ((reg >> 3) & 1) << 2 | ((rmr >> 3) & 1);
        let force = byte_reg && (4..8).contains(&reg);
        if rex != 0x40 || force {
            self.b(rex);
        }
        self.code.extend_from_slice(op);
        match rm {
            Rm::Reg(r) => self.b(0xc0 | (reg & 7) << 3 | (r & 7)),
            Rm::Mem(base, disp) => {
                self.b(0x80 | (reg & 7) << 3 | (base & 7));
                if base & 7 == 4 {
                    self.b(0x24);
                }
                self.d32(disp);
            }
        }
    }

    /// `mov dst, src` (32-bit: zero-extends).
    pub fn mov_rr(&mut self, w: bool, dst: u8, src: u8) {
        self.enc(false, w, false, &[0x89], src, Rm::Reg(dst));
    }

    pub fn alu_rr(&mut self, op: Alu, w: bool, dst: u8, src: u8) {
        self.enc(false, w, false, &[op.opcode()], src, Rm::Reg(dst));
    }

    /// `op dst, imm32` (64-bit: the immediate sign-extended).
    pub fn alu_ri(&mut self, op: Alu, w: bool, dst: u8, imm: i32) {
        self.enc(false, w, false, &[0x81], op.ext(), Rm::Reg(dst));
        self.d32(imm);
    }

    /// `op qword [base + disp], imm32`.
    pub fn alu_mi(&mut self, op: Alu, base: u8, disp: i32, imm: i32) {
        self.enc(false, true, false, &[0x81], op.ext(), Rm::Mem(base, disp));
        self.d32(imm);
    }

    /// `op qword [base + disp], src`.
    pub fn alu_mr(&mut self, op: Alu, base: u8, disp: i32, src: u8) {
        self.enc(false, true, false, &[op.opcode()], src, Rm::Mem(base, disp));
    }

    /// `op dst, qword [base + disp]` (add: 03, cmp: 3B).
    pub fn alu_rm(&mut self, op: Alu, dst: u8, base: u8, disp: i32) {
        self.enc(false, true, false, &[op.opcode() + 2], dst, Rm::Mem(base, disp));
    }

    pub fn test_rr(&mut self, w: bool, a: u8, b: u8) {
        self.enc(false, w, false, &[0x85], b, Rm::Reg(a));
    }

    pub fn test_ri(&mut self, w: bool, a: u8, imm: i32) {
        self.enc(false, w, false, &[0xf7], 0, Rm::Reg(a));
        self.d32(imm);
    }

    pub fn imul_rr(&mut self, w: bool, dst: u8, src: u8) {
        self.enc(false, w, false, &[0x0f, 0xaf], dst, Rm::Reg(src));
    }

    pub fn imul_ri(&mut self, w: bool, dst: u8, imm: i32) {
        self.enc(false, w, false, &[0x69], dst, Rm::Reg(dst));
        self.d32(imm);
    }

    pub fn neg(&mut self, w: bool, r: u8) {
        self.enc(false, w, false, &[0xf7], 3, Rm::Reg(r));
    }

    /// `div r` / `idiv r`: rdx:rax (edx:eax) by r.
    pub fn div(&mut self, w: bool, signed: bool, r: u8) {
        self.enc(false, w, false, &[0xf7], if signed { 7 } else { 6 }, Rm::Reg(r));
    }

    /// `cqo` (64) / `cdq` (32): sign-extends rax into rdx.
    pub fn cqo(&mut self, w: bool) {
        if w {
            self.b(0x48);
        }
        self.b(0x99);
    }

    pub fn shift_cl(&mut self, w: bool, ext: u8, r: u8) {
        self.enc(false, w, false, &[0xd3], ext, Rm::Reg(r));
    }

    pub fn shift_i(&mut self, w: bool, ext: u8, r: u8, n: u8) {
        self.enc(false, w, false, &[0xc1], ext, Rm::Reg(r));
        self.b(n);
    }

    /// `ror r16, 8`: swaps the two low bytes.
    pub fn ror16_8(&mut self, r: u8) {
        self.enc(true, false, false, &[0xc1], ROR, Rm::Reg(r));
        self.b(8);
    }

    pub fn bswap(&mut self, w: bool, r: u8) {
        let rex = 0x40 | (u8::from(w) << 3) | ((r >> 3) & 1);
        if rex != 0x40 {
            self.b(rex);
        }
        self.b(0x0f);
        self.b(0xc8 + (r & 7));
    }

    /// `movzx dst32, src16`.
    pub fn movzx16_rr(&mut self, dst: u8, src: u8) {
        self.enc(false, false, false, &[0x0f, 0xb7], dst, Rm::Reg(src));
    }

    /// `movsx dst, src` of `bits` 8, 16 or 32 (into 64 bits when `w`, else 32).
    pub fn movsx_rr(&mut self, w: bool, bits: u32, dst: u8, src: u8) {
        match bits {
            8 => {
                // The byte register is in modrm.rm: sil/dil need a REX prefix.
                if !w && (4..8).contains(&src) {
                    self.b(0x40 | ((dst >> 3) & 1) << 2);
                    self.code.extend_from_slice(&[0x0f, 0xbe]);
                    self.b(0xc0 | (dst & 7) << 3 | (src & 7));
                } else {
                    self.enc(false, w, false, &[0x0f, 0xbe], dst, Rm::Reg(src));
                }
            }
            16 => self.enc(false, w, false, &[0x0f, 0xbf], dst, Rm::Reg(src)),
            _ => self.enc(false, true, false, &[0x63], dst, Rm::Reg(src)),
        }
    }

    /// `mov dst32, imm32` (zero-extends).
    pub fn mov_ri32(&mut self, dst: u8, imm: u32) {
        if dst >= 8 {
            self.b(0x41);
        }
        self.b(0xb8 + (dst & 7));
        self.code.extend_from_slice(&imm.to_le_bytes());
    }

    /// `mov dst, v`: the shortest of the three forms.
    pub fn mov_ri(&mut self, dst: u8, v: u64) {
        if let Ok(u) = u32::try_from(v) {
            self.mov_ri32(dst, u);
        } else if let Ok(i) = i32::try_from(v as i64) {
            self.enc(false, true, false, &[0xc7], 0, Rm::Reg(dst));
            self.d32(i);
        } else {
            self.b(0x48 | ((dst >> 3) & 1));
            self.b(0xb8 + (dst & 7));
            self.code.extend_from_slice(&v.to_le_bytes());
        }
    }

    /// A load of `size` bytes at `[base + disp]` into `dst`, zero- or sign-extended to 64.
    pub fn load(&mut self, size: u64, signed: bool, dst: u8, base: u8, disp: i32) {
        let m = Rm::Mem(base, disp);
        match (size, signed) {
            (1, false) => self.enc(false, false, false, &[0x0f, 0xb6], dst, m),
            (2, false) => self.enc(false, false, false, &[0x0f, 0xb7], dst, m),
            (4, false) => self.enc(false, false, false, &[0x8b], dst, m),
            (1, true) => self.enc(false, true, false, &[0x0f, 0xbe], dst, m),
            (2, true) => self.enc(false, true, false, &[0x0f, 0xbf], dst, m),
            (4, true) => self.enc(false, true, false, &[0x63], dst, m),
            _ => self.enc(false, true, false, &[0x8b], dst, m),
        }
    }

    /// A store of the low `size` bytes of `src` at `[base + disp]`.
    pub fn store(&mut self, size: u64, src: u8, base: u8, disp: i32) {
        let m = Rm::Mem(base, disp);
        match size {
            1 => self.enc(false, false, true, &[0x88], src, m),
            2 => self.enc(true, false, false, &[0x89], src, m),
            4 => self.enc(false, false, false, &[0x89], src, m),
            _ => self.enc(false, true, false, &[0x89], src, m),
        }
    }

    pub fn lea(&mut self, dst: u8, base: u8, disp: i32) {
        self.enc(false, true, false, &[0x8d], dst, Rm::Mem(base, disp));
    }

    pub fn push(&mut self, r: u8) {
        if r >= 8 {
            self.b(0x41);
        }
        self.b(0x50 + (r & 7));
    }

    pub fn pop(&mut self, r: u8) {
        if r >= 8 {
            self.b(0x41);
        }
        self.b(0x58 + (r & 7));
    }

    pub fn ret(&mut self) {
        self.b(0xc3);
    }

    /// `call r`.
    pub fn call_r(&mut self, r: u8) {
        self.enc(false, false, false, &[0xff], 2, Rm::Reg(r));
    }

    pub fn call(&mut self, l: Label) {
        self.b(0xe8);
        self.rel(l);
    }

    pub fn jmp(&mut self, l: Label) {
        self.b(0xe9);
        self.rel(l);
    }

    pub fn jcc(&mut self, cc: u8, l: Label) {
        self.b(0x0f);
        self.b(0x80 | cc);
        self.rel(l);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enc(f: impl FnOnce(&mut Asm)) -> Vec<u8> {
        let mut a = Asm::default();
        f(&mut a);
        a.code
    }

    /// Encodings checked against GNU as (`as --64`, `objdump -d`).
    #[test]
    fn encodings() {
        assert_eq!(enc(|a| a.mov_rr(true, RBX, R12)), [0x4c, 0x89, 0xe3]);
        assert_eq!(enc(|a| a.mov_rr(false, R8, RSI)), [0x41, 0x89, 0xf0]);
        assert_eq!(enc(|a| a.alu_ri(Alu::Sub, true, R13, -1)), [0x49, 0x81, 0xed, 0xff, 0xff, 0xff, 0xff]);
        assert_eq!(enc(|a| a.load(8, false, RAX, R12, 8)), [0x49, 0x8b, 0x84, 0x24, 8, 0, 0, 0]);
        assert_eq!(enc(|a| a.load(1, false, RDI, R13, -1)), [0x41, 0x0f, 0xb6, 0xbd, 0xff, 0xff, 0xff, 0xff]);
        assert_eq!(enc(|a| a.store(1, RSI, R11, 0)), [0x41, 0x88, 0xb3, 0, 0, 0, 0]);
        assert_eq!(enc(|a| a.store(2, R9, RBP, 16)), [0x66, 0x44, 0x89, 0x8d, 16, 0, 0, 0]);
        assert_eq!(enc(|a| a.movsx_rr(false, 8, RBX, RSI)), [0x40, 0x0f, 0xbe, 0xde]);
        assert_eq!(enc(|a| a.movsx_rr(true, 32, R15, RDI)), [0x4c, 0x63, 0xff]);
        assert_eq!(enc(|a| a.bswap(true, R14)), [0x49, 0x0f, 0xce]);
        assert_eq!(enc(|a| a.ror16_8(R9)), [0x66, 0x41, 0xc1, 0xc9, 8]);
        assert_eq!(enc(|a| a.mov_ri(RAX, u64::MAX)), [0x48, 0xc7, 0xc0, 0xff, 0xff, 0xff, 0xff]);
        assert_eq!(enc(|a| a.mov_ri(R10, 1 << 40)), [0x49, 0xba, 0, 0, 0, 0, 0, 1, 0, 0]);
        assert_eq!(enc(|a| a.shift_cl(false, SAR, R8)), [0x41, 0xd3, 0xf8]);
        assert_eq!(enc(|a| a.div(true, true, RCX)), [0x48, 0xf7, 0xf9]);
        assert_eq!(enc(|a| a.push(R15)), [0x41, 0x57]);
        assert_eq!(enc(|a| a.call_r(RAX)), [0xff, 0xd0]);
        assert_eq!(enc(|a| a.alu_rm(Alu::Cmp, RAX, RBP, 8)), [0x48, 0x3b, 0x85, 8, 0, 0, 0]);
    }
}
