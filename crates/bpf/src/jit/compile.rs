//! eBPF instructions to x86-64 machine code.
//!
//! First a structural check ([`functions`]): the code is generated only for programs whose
//! control flow it can take for granted (no loop, every jump inside its function, no
//! falling off a function's end, no call to the main function, no write to r10, only
//! encodings it knows); anything else returns `None` and the program is interpreted.
//!
//! Registers: r0..r9 live in host registers ([`REG`]), r10 in `Env::regs[10]` (the tagged
//! top of the current frame, as the interpreter's); rbp holds the `Env`; rax, rcx, rdx and
//! r11 are scratch. Only the registers a program names (and r0) are loaded at entry,
//! saved and reloaded around a call out, and — the callee-saved host registers among
//! them — pushed and popped: `return BPF_OK` costs a handful of host instructions. The registers hold the interpreter's tagged addresses, so pointer
//! arithmetic and comparisons are the interpreter's. Inline: loads and stores at
//! `r10 + off` inside the frame (checked here); through other registers to a stack frame,
//! the packet or a map's values (checked at run time against the frame's 512 bytes, the
//! packet's length, the values' length; packet stores only for `lwt_xmit`, map stores
//! only to writable maps); the u32 loads of `skb->len`, `skb->data` and `skb->data_end`.
//! Every other access, atomics and helper calls go through [`super::runtime::step`], the
//! interpreter's code.
//!
//! BPF-to-BPF calls are host calls: r6..r9 pushed, the depth checked and counted, the new
//! frame zeroed, r10 and the frame pointer moved; EXIT of a called function is `ret`.
//! Each function entered charges its length to the budget.

use super::emit::*;
use super::runtime::{step, Env, BUDGET, DONE, TOO_DEEP};
use crate::insn::*;
use crate::vm::{
    make, size_bytes, FRAMES, STACK_SIZE, TAG_CTX, TAG_MAP, TAG_MAP_HANDLE, TAG_PKT, TAG_SHIFT, TAG_STACK,
};
use std::mem::offset_of;

/// Host register of r0..r9.
const REG: [u8; 10] = [RBX, RDI, RSI, R8, R9, R10, R12, R13, R14, R15];
const ENV: u8 = RBP;

fn off(o: usize) -> i32 {
    o as i32
}

fn reg_off(r: usize) -> i32 {
    off(offset_of!(Env<'static, 'static>, regs) + 8 * r)
}

/// The functions of a program (`[start, end)`, the main one first) and which slots are
/// the second half of a 64-bit load; `None` when the program is not one the compiler takes.
/// Functions as `[start, end)`, the main one first.
type Funcs = Vec<(usize, usize)>;

fn functions(insns: &[Insn]) -> Option<(Funcs, Vec<bool>)> {
    let n = insns.len();
    let mut second = vec![false; n];
    let mut starts = vec![0usize];
    let mut pc = 0;
    while pc < n {
        let i = insns[pc];
        if i.dst as usize >= NREGS || i.src as usize >= NREGS {
            return None;
        }
        if i.is_ld_imm64() {
            *second.get_mut(pc + 1)? = true;
            pc += 2;
            continue;
        }
        if i.code == JMP | CALL && i.src == PSEUDO_CALL {
            let t = usize::try_from(pc as i64 + 1 + i64::from(i.imm)).ok()?;
            if t == 0 || t >= n {
                return None;
            }
            starts.push(t);
        }
        pc += 1;
    }
    starts.sort_unstable();
    starts.dedup();
    if starts.iter().any(|&s| second[s]) {
        return None;
    }
    let funcs: Vec<(usize, usize)> =
        starts.iter().enumerate().map(|(k, &s)| (s, starts.get(k + 1).copied().unwrap_or(n))).collect();
    // No way out of a function but EXIT: every successor inside it, never the second
    // half of a 64-bit load (nor past the end of the program).
    for &(s, e) in &funcs {
        for pc in (s..e).filter(|&pc| !second[pc]) {
            for t in successors(insns, pc).into_iter().flatten() {
                if t < s || t >= e || second[t] {
                    return None;
                }
            }
        }
    }
    if has_cycle(insns, &second) {
        return None;
    }
    Some((funcs, second))
}

/// The instructions `pc` may go on to in its function (calls return to `pc + 1`).
fn successors(insns: &[Insn], pc: usize) -> [Option<usize>; 2] {
    let i = insns[pc];
    // Before the program's start: usize::MAX, which no function contains.
    let rel = |o: i64| Some(usize::try_from(pc as i64 + 1 + o).unwrap_or(usize::MAX));
    match (i.class(), i.code & 0xf0) {
        _ if i.is_ld_imm64() => [Some(pc + 2), None],
        (JMP, EXIT) => [None, None],
        (JMP, CALL) => [Some(pc + 1), None],
        (JMP, JA) => [rel(i64::from(i.off)), None],
        (JMP32, JA) => [rel(i64::from(i.imm)), None],
        (JMP | JMP32, _) => [Some(pc + 1), rel(i64::from(i.off))],
        _ => [Some(pc + 1), None],
    }
}

/// Whether the control flow has a loop (Kahn's algorithm over the instructions): the
/// code has no budget check inside a function, so a function must run each of its
/// instructions at most once.
fn has_cycle(insns: &[Insn], second: &[bool]) -> bool {
    let n = insns.len();
    let mut indeg = vec![0u32; n];
    for pc in (0..n).filter(|&pc| !second[pc]) {
        for t in successors(insns, pc).into_iter().flatten() {
            if let Some(d) = indeg.get_mut(t) {
                *d += 1;
            }
        }
    }
    let mut ready: Vec<usize> = (0..n).filter(|&pc| !second[pc] && indeg[pc] == 0).collect();
    let mut done = 0;
    while let Some(pc) = ready.pop() {
        done += 1;
        for t in successors(insns, pc).into_iter().flatten() {
            if let Some(d) = indeg.get_mut(t) {
                *d -= 1;
                if *d == 0 {
                    ready.push(t);
                }
            }
        }
    }
    done < second.iter().filter(|&&s| !s).count()
}

struct Cx<'a> {
    a: Asm,
    insns: &'a [Insn],
    /// The eBPF registers r0..r9 the program names anywhere (r0 always): only these are
    /// loaded, saved around a call out and, for the callee-saved host registers among
    /// them, pushed at entry. The others keep the values the run gave them in `Env`.
    used: [bool; 10],
    /// The host registers the prologue pushes after rbp, and whether 8 bytes of padding
    /// follow them (the body runs at rsp = 0 mod 16).
    saved: Vec<u8>,
    pad: bool,
    labels: Vec<Label>,
    stub: Label,
    exit: Label,
    ret: Label,
    budget: Label,
}

/// Compiles `insns`; `None` for a program the compiler does not take (it is interpreted).
pub(crate) fn compile(insns: &[Insn]) -> Option<Vec<u8>> {
    if insns.is_empty() || insns.len() > i32::MAX as usize / 2 {
        return None;
    }
    let (funcs, second) = functions(insns)?;
    let mut a = Asm::default();
    let labels = (0..insns.len()).map(|_| a.label()).collect();
    let (stub, exit, ret, budget) = (a.label(), a.label(), a.label(), a.label());
    let used = used_regs(insns);
    // r0 and r6..r9 live in callee-saved host registers (rbx, r12..r15).
    let saved: Vec<u8> = [0, 6, 7, 8, 9].into_iter().filter(|&r| used[r]).map(|r| REG[r]).collect();
    // Entry: rsp = 8 mod 16; rbp and the saved registers pushed, then padding if needed.
    let pad = saved.len() % 2 == 1;
    let mut cx = Cx { a, insns, used, saved, pad, labels, stub, exit, ret, budget };
    cx.prologue(funcs[0].1 - funcs[0].0);
    for (k, &(s, e)) in funcs.iter().enumerate() {
        for (pc, &half) in second.iter().enumerate().take(e).skip(s) {
            let l = cx.labels[pc];
            cx.a.bind(l);
            if !half {
                cx.insn(pc, k == 0, &funcs)?;
            }
        }
    }
    cx.epilogue();
    cx.a.finish()
}

/// Which of r0..r9 the program names as a source or destination (r0 always: EXIT
/// returns it).
fn used_regs(insns: &[Insn]) -> [bool; 10] {
    let mut used = [false; 10];
    used[0] = true;
    for i in insns {
        for r in [i.dst, i.src] {
            if let Some(u) = used.get_mut(r as usize) {
                *u = true;
            }
        }
    }
    used
}

impl Cx<'_> {
    fn load_regs(&mut self) {
        for (r, &h) in REG.iter().enumerate() {
            if self.used[r] {
                self.a.load(8, false, h, ENV, reg_off(r));
            }
        }
    }

    fn save_regs(&mut self) {
        for (r, &h) in REG.iter().enumerate() {
            if self.used[r] {
                self.a.store(8, h, ENV, reg_off(r));
            }
        }
    }

    /// Charges `len` instructions to the budget, or ends the run with [`BUDGET`].
    fn charge(&mut self, len: usize) {
        let left = off(offset_of!(Env<'static, 'static>, left));
        self.a.load(8, false, RAX, ENV, left);
        self.a.alu_ri(Alu::Sub, true, RAX, len as i32);
        self.a.jcc(CC_B, self.budget);
        self.a.store(8, RAX, ENV, left);
    }

    fn prologue(&mut self, main_len: usize) {
        // Entry: rsp = 8 mod 16. rbp, the callee-saved registers the program uses and
        // padding to an odd count of 8 bytes: the body runs at rsp = 0 mod 16.
        self.a.push(RBP);
        for i in 0..self.saved.len() {
            self.a.push(self.saved[i]);
        }
        if self.pad {
            self.a.alu_ri(Alu::Sub, true, RSP, 8);
        }
        self.a.mov_rr(true, ENV, RDI);
        self.a.store(8, RSP, ENV, off(offset_of!(Env<'static, 'static>, saved_rsp)));
        self.charge(main_len);
        self.load_regs();
    }

    fn epilogue(&mut self) {
        let a = &mut self.a;
        // EXIT of the main function.
        a.bind(self.exit);
        a.store(8, REG[0], ENV, reg_off(0));
        a.mov_ri(RAX, DONE);
        a.jmp(self.ret);
        a.bind(self.budget);
        a.mov_ri(RAX, BUDGET);
        // Every way out: rax = status; rsp back to the main body's, whatever the depth.
        a.bind(self.ret);
        a.load(8, false, RSP, ENV, off(offset_of!(Env<'static, 'static>, saved_rsp)));
        if self.pad {
            a.alu_ri(Alu::Add, true, RSP, 8);
        }
        for &r in self.saved.iter().rev() {
            a.pop(r);
        }
        a.pop(RBP);
        a.ret();
        // The call out: rax = pc. Called from a body (rsp = 0 mod 16), so rsp = 8 here.
        a.bind(self.stub);
        a.store(8, RAX, ENV, off(offset_of!(Env<'static, 'static>, pc)));
        self.save_regs();
        let a = &mut self.a;
        a.mov_rr(true, RDI, ENV);
        a.alu_ri(Alu::Sub, true, RSP, 8);
        let f: unsafe extern "sysv64" fn(*mut Env<'_, '_>) -> u64 = step;
        a.mov_ri(RAX, f as usize as u64);
        a.call_r(RAX);
        a.alu_ri(Alu::Add, true, RSP, 8);
        a.test_rr(true, RAX, RAX);
        a.jcc(CC_NE, self.ret);
        self.load_regs();
        self.a.ret();
    }

    /// The call out for instruction `pc`.
    fn slow(&mut self, pc: usize) {
        self.a.mov_ri(RAX, pc as u64);
        self.a.call(self.stub);
    }

    /// A register's value for reading: its host register, or r10 loaded into `tmp`.
    fn read(&mut self, r: u8, tmp: u8) -> u8 {
        if r == FP {
            self.a.load(8, false, tmp, ENV, reg_off(10));
            tmp
        } else {
            REG[r as usize]
        }
    }

    fn insn(&mut self, pc: usize, main: bool, funcs: &[(usize, usize)]) -> Option<()> {
        let i = self.insns[pc];
        let x = i.code & X != 0;
        let op = i.code & 0xf0;
        match i.class() {
            ALU64 | ALU => {
                if i.dst == FP {
                    return None;
                }
                self.alu(i)
            }
            JMP | JMP32 => {
                let w = i.class() == JMP;
                match op {
                    JA => {
                        let t = if w { pc as i64 + 1 + i64::from(i.off) } else { pc as i64 + 1 + i64::from(i.imm) };
                        if i.code & !0xf0 != JMP && i.code != JMP32 {
                            return None;
                        }
                        self.a.jmp(self.labels[t as usize]);
                    }
                    EXIT if i.code == JMP | EXIT => {
                        if main {
                            self.a.jmp(self.exit);
                        } else {
                            self.a.ret();
                        }
                    }
                    CALL if i.code == JMP | CALL && i.src == PSEUDO_CALL => {
                        let t = (pc as i64 + 1 + i64::from(i.imm)) as usize;
                        let len = funcs.iter().find(|f| f.0 == t).map(|f| f.1 - f.0)?;
                        self.bpf_call(pc, t, len);
                    }
                    CALL if i.code == JMP | CALL && i.src == 0 => self.slow(pc),
                    CALL | EXIT => return None,
                    _ => {
                        let cc = match op {
                            JEQ => CC_E,
                            JNE | JSET => CC_NE,
                            JGT => CC_A,
                            JGE => CC_AE,
                            JLT => CC_B,
                            JLE => CC_BE,
                            JSGT => CC_G,
                            JSGE => CC_GE,
                            JSLT => CC_L,
                            JSLE => CC_LE,
                            _ => return None,
                        };
                        let d = self.read(i.dst, RAX);
                        match (x, op == JSET) {
                            (true, false) => {
                                let s = self.read(i.src, R11);
                                self.a.alu_rr(Alu::Cmp, w, d, s);
                            }
                            (true, true) => {
                                let s = self.read(i.src, R11);
                                self.a.test_rr(w, d, s);
                            }
                            (false, false) => self.a.alu_ri(Alu::Cmp, w, d, i.imm),
                            (false, true) => self.a.test_ri(w, d, i.imm),
                        }
                        let t = (pc as i64 + 1 + i64::from(i.off)) as usize;
                        self.a.jcc(cc, self.labels[t]);
                    }
                }
                Some(())
            }
            LD => {
                if !i.is_ld_imm64() || i.dst == FP {
                    return None;
                }
                let hi = self.insns[pc + 1];
                let v = match i.src {
                    0 => u64::from(i.imm as u32) | (u64::from(hi.imm as u32) << 32),
                    PSEUDO_MAP_FD => make(TAG_MAP_HANDLE, i.imm as u32 as u64),
                    PSEUDO_MAP_VALUE => make(TAG_MAP + u64::from(i.imm as u32), u64::from(hi.imm as u32)),
                    _ => return None,
                };
                self.a.mov_ri(REG[i.dst as usize], v);
                Some(())
            }
            LDX => {
                let mode = i.code & 0xe0;
                let size = size_bytes(i.code);
                if i.dst == FP || !(mode == MEM || (mode == MEMSX && size < 8)) {
                    return None;
                }
                self.load(pc, i, size, mode == MEMSX);
                Some(())
            }
            ST | STX => {
                let mode = i.code & 0xe0;
                if i.class() == STX && mode == ATOMIC {
                    // The fetching forms write r0 or the source register.
                    if i.src == FP {
                        return None;
                    }
                    self.slow(pc);
                } else if mode == MEM {
                    self.store(pc, i, size_bytes(i.code));
                } else {
                    return None;
                }
                Some(())
            }
            _ => None,
        }
    }

    /// `dst` (a host register) = the 64-bit address `[base_reg + off]` of `i`.
    fn address(&mut self, r: u8, offset: i16) {
        let base = self.read(r, R11);
        self.a.lea(R11, base, i32::from(offset));
    }

    /// The check of an access of `size` bytes at the tagged address in r11: a packet
    /// address with `off + size` at most the `Env` field at `limit` (the packet's length
    /// for loads, its writable length for stores), a stack frame's with `off + size <=
    /// 512`, or a map's values' with `off + size` at most their readable (`store`: their
    /// writable) length; then r11 = the host address, else a jump to `slow` (the
    /// interpreter's code).
    fn mem_check(&mut self, size: u64, limit: usize, store: bool, slow: Label) {
        let a = &mut self.a;
        let (not_pkt, map, ok) = (a.label(), a.label(), a.label());
        a.mov_rr(true, RAX, R11);
        a.shift_i(true, SHR, RAX, TAG_SHIFT as u8);
        // The offset: the low 40 bits.
        a.shift_i(true, SHL, R11, 64 - TAG_SHIFT as u8);
        a.shift_i(true, SHR, R11, 64 - TAG_SHIFT as u8);
        a.lea(RDX, R11, size as i32);
        a.alu_ri(Alu::Cmp, true, RAX, TAG_PKT as i32);
        a.jcc(CC_NE, not_pkt);
        a.alu_rm(Alu::Cmp, RDX, ENV, off(limit));
        a.jcc(CC_A, slow);
        a.alu_rm(Alu::Add, R11, ENV, off(offset_of!(Env<'static, 'static>, pkt_ptr)));
        a.jmp(ok);
        a.bind(not_pkt);
        a.alu_ri(Alu::Cmp, true, RAX, TAG_MAP as i32);
        a.jcc(CC_AE, map);
        // Frame i's tag is TAG_STACK + 2i, i < FRAMES: (tag - TAG_STACK) even and below
        // 2 * FRAMES, and the frame's bytes at (tag - TAG_STACK) * 256.
        a.alu_ri(Alu::Sub, true, RAX, TAG_STACK as i32);
        a.test_ri(true, RAX, !(2 * FRAMES as i32 - 2));
        a.jcc(CC_NE, slow);
        a.alu_ri(Alu::Cmp, true, RDX, STACK_SIZE as i32);
        a.jcc(CC_A, slow);
        a.shift_i(true, SHL, RAX, 8);
        a.alu_rr(Alu::Add, true, R11, RAX);
        a.alu_rm(Alu::Add, R11, ENV, off(offset_of!(Env<'static, 'static>, stack_base)));
        a.jmp(ok);
        // Map i's values: tag TAG_MAP + i, i < the number of maps; its entry in map_tab.
        a.bind(map);
        a.alu_ri(Alu::Sub, true, RAX, TAG_MAP as i32);
        a.alu_rm(Alu::Cmp, RAX, ENV, off(offset_of!(Env<'static, 'static>, nmaps)));
        a.jcc(CC_AE, slow);
        a.imul_ri(true, RAX, 24);
        a.alu_rm(Alu::Add, RAX, ENV, off(offset_of!(Env<'static, 'static>, map_tab_ptr)));
        a.alu_rm(Alu::Cmp, RDX, RAX, if store { 16 } else { 8 });
        a.jcc(CC_A, slow);
        a.alu_rm(Alu::Add, R11, RAX, 0);
        a.bind(ok);
    }

    /// Whether `r10 + off` for `size` bytes is inside the frame (checked at compile time).
    fn in_frame(offset: i16, size: u64) -> bool {
        let o = i64::from(offset);
        o >= -(STACK_SIZE as i64) && o + size as i64 <= 0
    }

    fn load(&mut self, pc: usize, i: Insn, size: u64, signed: bool) {
        let d = REG[i.dst as usize];
        if i.src == FP {
            if Self::in_frame(i.off, size) {
                self.a.load(8, false, R11, ENV, off(offset_of!(Env<'static, 'static>, frame_host)));
                self.a.load(size, signed, d, R11, i32::from(i.off));
            } else {
                self.slow(pc);
            }
            return;
        }
        let (slow, done) = (self.a.label(), self.a.label());
        self.address(i.src, i.off);
        if i.code == LDX | MEM | W && matches!(i.off, 0 | 76 | 80) {
            self.ctx_packet_field(d, i.off as u64, done);
        }
        self.mem_check(size, offset_of!(Env<'static, 'static>, pkt_len), false, slow);
        self.a.load(size, signed, d, R11, 0);
        self.a.jmp(done);
        self.a.bind(slow);
        self.slow(pc);
        self.a.bind(done);
    }

    /// `skb->len`, `skb->data`, `skb->data_end` (a u32 load at context offset `field`, the
    /// address in r11): when the address is exactly that field's, `d` = the interpreter's
    /// value (the packet's length, its start's and end's tagged addresses) and a jump to
    /// `done`; else on to the general check.
    fn ctx_packet_field(&mut self, d: u8, field: u64, done: Label) {
        let len = off(offset_of!(Env<'static, 'static>, pkt_len));
        let a = &mut self.a;
        let other = a.label();
        a.mov_ri(RAX, make(TAG_CTX, field));
        a.alu_rr(Alu::Cmp, true, R11, RAX);
        a.jcc(CC_NE, other);
        match field {
            // The length as a u32 (the interpreter's `len() as u32`).
            0 => a.load(4, false, d, ENV, len),
            76 => a.mov_ri(d, make(TAG_PKT, 0)),
            _ => {
                a.load(8, false, d, ENV, len);
                a.mov_ri(RAX, make(TAG_PKT, 0));
                a.alu_rr(Alu::Or, true, d, RAX);
            }
        }
        a.jmp(done);
        a.bind(other);
    }

    /// The value to store into rax or a host register (after the address is in r11).
    fn store_value(&mut self, i: Insn) -> u8 {
        if i.class() == ST {
            self.a.mov_ri(RAX, i.imm as i64 as u64);
            RAX
        } else {
            self.read(i.src, RAX)
        }
    }

    fn store(&mut self, pc: usize, i: Insn, size: u64) {
        if i.dst == FP {
            if Self::in_frame(i.off, size) {
                self.a.load(8, false, R11, ENV, off(offset_of!(Env<'static, 'static>, frame_host)));
                let v = self.store_value(i);
                self.a.store(size, v, R11, i32::from(i.off));
            } else {
                self.slow(pc);
            }
            return;
        }
        let (slow, done) = (self.a.label(), self.a.label());
        self.address(i.dst, i.off);
        // Packet stores: pkt_wlen is 0 unless the program type may write the packet.
        self.mem_check(size, offset_of!(Env<'static, 'static>, pkt_wlen), true, slow);
        let v = self.store_value(i);
        self.a.store(size, v, R11, 0);
        self.a.jmp(done);
        self.a.bind(slow);
        self.slow(pc);
        self.a.bind(done);
    }

    fn bpf_call(&mut self, pc: usize, target: usize, len: usize) {
        let depth = off(offset_of!(Env<'static, 'static>, depth));
        let frame = off(offset_of!(Env<'static, 'static>, frame_host));
        let ok = self.a.label();
        let a = &mut self.a;
        a.load(8, false, RAX, ENV, depth);
        a.alu_ri(Alu::Cmp, true, RAX, FRAMES as i32 - 1);
        a.jcc(CC_B, ok);
        a.mov_ri(RAX, pc as u64);
        a.store(8, RAX, ENV, off(offset_of!(Env<'static, 'static>, pc)));
        a.mov_ri(RAX, TOO_DEEP);
        a.jmp(self.ret);
        a.bind(ok);
        self.charge(len);
        let a = &mut self.a;
        a.alu_mi(Alu::Add, ENV, depth, 1);
        // Zero the new frame: the 512 bytes above the current frame's top.
        a.load(8, false, R11, ENV, frame);
        a.alu_rr(Alu::Xor, false, RDX, RDX);
        a.mov_ri(RCX, (STACK_SIZE / 8) as u64);
        let lp = a.label();
        a.bind(lp);
        a.store(8, RDX, R11, 0);
        a.alu_ri(Alu::Add, true, R11, 8);
        a.alu_ri(Alu::Sub, false, RCX, 1);
        a.jcc(CC_NE, lp);
        a.store(8, R11, ENV, frame);
        a.mov_ri(RAX, make(2, 0));
        a.alu_mr(Alu::Add, ENV, reg_off(10), RAX);
        // r6..r9 and 8 bytes: the callee's body runs at rsp = 0 mod 16 too.
        for &r in &REG[6..10] {
            a.push(r);
        }
        a.alu_ri(Alu::Sub, true, RSP, 8);
        a.call(self.labels[target]);
        a.alu_ri(Alu::Add, true, RSP, 8);
        for &r in REG[6..10].iter().rev() {
            a.pop(r);
        }
        a.alu_mi(Alu::Sub, ENV, depth, 1);
        a.alu_mi(Alu::Sub, ENV, frame, STACK_SIZE as i32);
        a.mov_ri(RAX, make(2, 0));
        a.alu_mr(Alu::Sub, ENV, reg_off(10), RAX);
    }

    fn alu(&mut self, i: Insn) -> Option<()> {
        let w = i.class() == ALU64;
        let x = i.code & X != 0;
        let op = i.code & 0xf0;
        let d = REG[i.dst as usize];
        // The source: a host register, or the immediate (sign-extended to 64 bits).
        let src = if x && !matches!(op, NEG | END) { Some(self.read(i.src, R11)) } else { None };
        let a = &mut self.a;
        match op {
            ADD | SUB | OR | AND | XOR => {
                let alu = match op {
                    ADD => Alu::Add,
                    SUB => Alu::Sub,
                    OR => Alu::Or,
                    AND => Alu::And,
                    _ => Alu::Xor,
                };
                match src {
                    Some(s) => a.alu_rr(alu, w, d, s),
                    None => a.alu_ri(alu, w, d, i.imm),
                }
            }
            MUL => match src {
                Some(s) => a.imul_rr(w, d, s),
                None => a.imul_ri(w, d, i.imm),
            },
            DIV | MOD => self.divmod(i, w, src),
            LSH | RSH | ARSH => {
                let ext = match op {
                    LSH => SHL,
                    RSH => SHR,
                    _ => SAR,
                };
                match src {
                    Some(s) => {
                        a.mov_rr(false, RCX, s);
                        a.shift_cl(w, ext, d);
                    }
                    None => a.shift_i(w, ext, d, (i.imm & if w { 63 } else { 31 }) as u8),
                }
                if !w {
                    a.mov_rr(false, d, d);
                }
            }
            NEG => a.neg(w, d),
            MOV => match (i.off, src) {
                (0, Some(s)) => a.mov_rr(w, d, s),
                (0, None) if w => a.mov_ri(d, i.imm as i64 as u64),
                (0, None) => a.mov_ri(d, u64::from(i.imm as u32)),
                (8 | 16 | 32, Some(s)) if w => a.movsx_rr(true, i.off as u32, d, s),
                (8 | 16, Some(s)) => a.movsx_rr(false, i.off as u32, d, s),
                (8 | 16 | 32, None) if w => {
                    let sh = 64 - i.off as u32;
                    a.mov_ri(d, (((i.imm as i64 as u64) << sh) as i64 >> sh) as u64);
                }
                (8 | 16, None) => {
                    let sh = 64 - i.off as u32;
                    a.mov_ri(d, u64::from(((((i.imm as u32 as u64) << sh) as i64 >> sh) as u64) as u32));
                }
                _ => return None,
            },
            END => {
                // ALU64 END and ALU END to big endian swap; ALU END to little endian truncates.
                let swap = w || x;
                match (i.imm, swap) {
                    (16, true) => {
                        a.ror16_8(d);
                        a.movzx16_rr(d, d);
                    }
                    (32, true) => a.bswap(false, d),
                    (64, true) => a.bswap(true, d),
                    (16, false) => a.movzx16_rr(d, d),
                    (32, false) => a.mov_rr(false, d, d),
                    (64, false) => {}
                    _ => return None,
                }
            }
            _ => return None,
        }
        Some(())
    }

    /// DIV and MOD (unsigned; signed when `off == 1`): by zero, DIV gives 0 and MOD leaves
    /// dst (truncated to 32 bits in ALU); signed by -1, DIV negates (wrapping) and MOD gives
    /// 0, where x86's idiv would trap on the minimum.
    fn divmod(&mut self, i: Insn, w: bool, src: Option<u8>) {
        let d = REG[i.dst as usize];
        let is_div = i.code & 0xf0 == DIV;
        let signed = i.off == 1;
        let a = &mut self.a;
        let (zero, minus1, done) = (a.label(), a.label(), a.label());
        match src {
            Some(s) => a.mov_rr(w, RCX, s),
            None if w => a.mov_ri(RCX, i.imm as i64 as u64),
            None => a.mov_ri(RCX, u64::from(i.imm as u32)),
        }
        a.test_rr(w, RCX, RCX);
        a.jcc(CC_E, zero);
        if signed {
            a.alu_ri(Alu::Cmp, w, RCX, -1);
            a.jcc(CC_E, minus1);
        }
        a.mov_rr(w, RAX, d);
        if signed {
            a.cqo(w);
        } else {
            a.alu_rr(Alu::Xor, false, RDX, RDX);
        }
        a.div(w, signed, RCX);
        a.mov_rr(w, d, if is_div { RAX } else { RDX });
        a.jmp(done);
        a.bind(zero);
        if is_div {
            a.alu_rr(Alu::Xor, false, d, d);
        } else if !w {
            a.mov_rr(false, d, d);
        }
        if signed {
            a.jmp(done);
            a.bind(minus1);
            if is_div {
                a.neg(w, d);
            } else {
                a.alu_rr(Alu::Xor, false, d, d);
            }
        }
        a.bind(done);
    }
}
