//! The eBPF instruction encoding (include/uapi/linux/bpf_common.h and bpf.h; RFC 9669,
//! "BPF Instruction Set Architecture"): 8-byte slots, little-endian, `code:8 dst:4 src:4
//! off:16 imm:32`; a 64-bit immediate load takes two slots.

/// One decoded 8-byte instruction slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Insn {
    pub code: u8,
    pub dst: u8,
    pub src: u8,
    pub off: i16,
    pub imm: i32,
}

impl Insn {
    /// Decodes one slot (little-endian, as clang `-target bpf` emits: `bpfel`).
    pub fn decode(b: [u8; 8]) -> Insn {
        Insn {
            code: b[0],
            dst: b[1] & 0x0f,
            src: b[1] >> 4,
            off: i16::from_le_bytes([b[2], b[3]]),
            imm: i32::from_le_bytes([b[4], b[5], b[6], b[7]]),
        }
    }

    /// Encodes one slot.
    pub fn encode(&self) -> [u8; 8] {
        let o = self.off.to_le_bytes();
        let i = self.imm.to_le_bytes();
        [self.code, (self.dst & 0x0f) | (self.src << 4), o[0], o[1], i[0], i[1], i[2], i[3]]
    }

    /// A whole byte stream as slots; a trailing partial slot is an error (its length).
    pub fn decode_all(bytes: &[u8]) -> Result<Vec<Insn>, usize> {
        if !bytes.len().is_multiple_of(8) {
            return Err(bytes.len());
        }
        Ok(bytes
            .chunks_exact(8)
            .map(|c| {
                let mut b = [0u8; 8];
                b.copy_from_slice(c);
                Insn::decode(b)
            })
            .collect())
    }

    pub fn class(&self) -> u8 {
        self.code & 0x07
    }

    /// Whether this slot is the first half of a 64-bit immediate load.
    pub fn is_ld_imm64(&self) -> bool {
        self.code == LD | IMM | DW
    }
}

// Classes.
pub const LD: u8 = 0x00;
pub const LDX: u8 = 0x01;
pub const ST: u8 = 0x02;
pub const STX: u8 = 0x03;
pub const ALU: u8 = 0x04;
pub const JMP: u8 = 0x05;
pub const JMP32: u8 = 0x06;
pub const ALU64: u8 = 0x07;

// Sizes (LD/LDX/ST/STX).
pub const W: u8 = 0x00;
pub const H: u8 = 0x08;
pub const B: u8 = 0x10;
pub const DW: u8 = 0x18;

// Modes.
pub const IMM: u8 = 0x00;
pub const ABS: u8 = 0x20;
pub const IND: u8 = 0x40;
pub const MEM: u8 = 0x60;
/// Sign-extending load (cpu v4).
pub const MEMSX: u8 = 0x80;
pub const ATOMIC: u8 = 0xc0;

// Source operand.
pub const K: u8 = 0x00;
pub const X: u8 = 0x08;

// ALU operations.
pub const ADD: u8 = 0x00;
pub const SUB: u8 = 0x10;
pub const MUL: u8 = 0x20;
pub const DIV: u8 = 0x30;
pub const OR: u8 = 0x40;
pub const AND: u8 = 0x50;
pub const LSH: u8 = 0x60;
pub const RSH: u8 = 0x70;
pub const NEG: u8 = 0x80;
pub const MOD: u8 = 0x90;
pub const XOR: u8 = 0xa0;
pub const MOV: u8 = 0xb0;
pub const ARSH: u8 = 0xc0;
pub const END: u8 = 0xd0;

// Jump operations.
pub const JA: u8 = 0x00;
pub const JEQ: u8 = 0x10;
pub const JGT: u8 = 0x20;
pub const JGE: u8 = 0x30;
pub const JSET: u8 = 0x40;
pub const JNE: u8 = 0x50;
pub const JSGT: u8 = 0x60;
pub const JSGE: u8 = 0x70;
pub const CALL: u8 = 0x80;
pub const EXIT: u8 = 0x90;
pub const JLT: u8 = 0xa0;
pub const JLE: u8 = 0xb0;
pub const JSLT: u8 = 0xc0;
pub const JSLE: u8 = 0xd0;

// Atomic operations (the imm of an ATOMIC STX).
pub const FETCH: i32 = 0x01;
pub const XCHG: i32 = 0xe0 | FETCH;
pub const CMPXCHG: i32 = 0xf0 | FETCH;

// src of a 64-bit immediate load (BPF_PSEUDO_*).
pub const PSEUDO_MAP_FD: u8 = 1;
pub const PSEUDO_MAP_VALUE: u8 = 2;
/// src of a CALL to a BPF-to-BPF function (imm = target - pc - 1).
pub const PSEUDO_CALL: u8 = 1;

/// Register count: r0..r9 and the read-only frame pointer r10.
pub const NREGS: usize = 11;
/// The frame pointer.
pub const FP: u8 = 10;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encode_decode_roundtrip() {
        let i = Insn { code: ALU64 | MOV | K, dst: 3, src: 7, off: -2, imm: -5 };
        assert_eq!(Insn::decode(i.encode()), i);
        assert_eq!(i.encode(), [0xb7, 0x73, 0xfe, 0xff, 0xfb, 0xff, 0xff, 0xff]);
        assert_eq!(Insn::decode_all(&[0; 9]), Err(9));
    }
}
