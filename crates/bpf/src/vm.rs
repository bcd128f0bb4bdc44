//! The interpreter: the eBPF ISA (RFC 9669) over tagged addresses, trusting nothing.
//!
//! A pointer is a u64 whose bits 40.. name a region and whose low 40 bits are an offset
//! in it: the context (`struct __sk_buff`), the stack frames (512 bytes each, up to the
//! kernel's 8 frames), the packet, a map handle (not dereferenceable) or a map's values.
//! Programs add and compare pointers as plain integers, as they do in the kernel; every
//! load, store, atomic and helper argument is then checked against the region its address
//! names, and anything else (a null or forged pointer, an offset past the end, a write to
//! the packet or `.rodata`, a context field the program type may not touch) aborts the
//! program with a [`Fault`]: its packet is dropped with that reason. A budget of executed
//! instructions bounds every run on top of the verifier's refusal of loops.

use crate::helpers::*;
use crate::insn::*;
pub use crate::jit::Jit;
use crate::maps::Map;
use crate::skb::{errno, Skb};

pub(crate) const TAG_SHIFT: u32 = 40;
pub(crate) const OFF_MASK: u64 = (1 << TAG_SHIFT) - 1;
pub(crate) const TAG_CTX: u64 = 1;
pub(crate) const TAG_PKT: u64 = 0x10;
pub(crate) const TAG_MAP_HANDLE: u64 = 0x12;
/// Frame `i`'s tag is `TAG_STACK + 2 * i`: the tag below each region is no region, so an
/// offset below 0 never lands in another region.
pub(crate) const TAG_STACK: u64 = 0x20;
pub(crate) const TAG_MAP: u64 = 0x100;

/// Bytes of one stack frame (the kernel's MAX_BPF_STACK).
pub const STACK_SIZE: usize = 512;
/// Frames: the main function and nested BPF-to-BPF calls (MAX_CALL_FRAMES).
pub const FRAMES: usize = crate::verifier::MAX_CALL_FRAMES;
/// Default budget of executed instructions per run.
pub const DEFAULT_BUDGET: u64 = 1 << 20;
/// Size of `struct __sk_buff`.
pub const CTX_SIZE: u64 = 192;

/// Why a run was aborted (the packet is dropped with this reason).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Fault {
    #[error("insn {pc}: {kind} of {len} bytes at {addr:#x} is out of bounds")]
    OutOfBounds { pc: usize, addr: u64, len: u64, kind: &'static str },
    #[error("insn {pc}: write of {len} bytes at {addr:#x} to read-only memory")]
    ReadOnly { pc: usize, addr: u64, len: u64 },
    #[error("insn {pc}: context access of {size} bytes at offset {off} is not allowed")]
    BadContext { pc: usize, off: u64, size: u64 },
    #[error("insn {pc}: helper {helper}: {what}")]
    BadHelperArg { pc: usize, helper: &'static str, what: &'static str },
    #[error("insn {pc}: BPF-to-BPF calls nest deeper than {FRAMES} frames")]
    CallTooDeep { pc: usize },
    #[error("instruction budget of {0} exhausted")]
    Budget(u64),
    #[error("insn {pc}: invalid instruction {code:#04x}")]
    BadInsn { pc: usize, code: u8 },
    #[error("program counter {0} out of range")]
    PcOutOfRange(usize),
}

/// A verified program, ready to run.
#[derive(Clone, Debug)]
pub struct Program {
    pub name: String,
    pub prog_type: ProgType,
    pub insns: Vec<Insn>,
    /// The machine code [`run_with`] runs in place of the interpreter, if any (made by
    /// [`Program::new`] from `insns`; after changing `insns`, make the program again).
    pub jit: Jit,
    /// Whether any instruction names r10, the frame pointer: a program that does not can
    /// touch no stack, which then needs no clearing before a run.
    uses_stack: bool,
}

impl Program {
    /// A program of `insns` (verified by the caller), compiled by the JIT when it can.
    pub fn new(name: impl Into<String>, prog_type: ProgType, insns: Vec<Insn>) -> Program {
        let jit = Jit::compile(&insns, prog_type);
        let uses_stack = insns.iter().any(|i| i.dst == 10 || i.src == 10);
        Program { name: name.into(), prog_type, insns, jit, uses_stack }
    }

    /// Clears frame 0 of `stack` for a run, if the program can read it: every run starts
    /// on a zeroed stack (the kernel leaves it as it was; sr6 makes runs reproducible).
    #[inline]
    pub(crate) fn clear_stack(&self, stack: &mut [u8]) {
        if self.uses_stack {
            if let Some(f) = stack.get_mut(..STACK_SIZE) {
                f.fill(0);
            }
        }
    }

    /// The same program, always interpreted.
    pub fn without_jit(mut self) -> Program {
        self.jit = Jit::none();
        self
    }

    /// Whether [`run_with`] runs machine code for this program.
    pub fn is_jitted(&self) -> bool {
        self.jit.code_len().is_some()
    }
}

/// Which engine runs a program.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Engine {
    /// The JIT's code when the program has some, else the interpreter.
    #[default]
    Auto,
    /// Always the interpreter (the reference the JIT is tested against).
    Interp,
}

/// Options of a run.
#[derive(Clone, Copy, Debug)]
pub struct RunOpts {
    pub budget: u64,
    pub engine: Engine,
}

impl RunOpts {
    /// The default options with the interpreter forced.
    pub fn interp() -> RunOpts {
        RunOpts { engine: Engine::Interp, ..RunOpts::default() }
    }
}

impl Default for RunOpts {
    fn default() -> Self {
        RunOpts { budget: DEFAULT_BUDGET, engine: Engine::Auto }
    }
}

#[derive(Clone, Copy, Default)]
struct Frame {
    ret_pc: usize,
    saved: [u64; 4],
}

/// The memory a run needs besides the packet and the maps: the stack frames. Kept by the
/// caller and reused, so a run allocates nothing (each frame is zeroed when entered, so
/// nothing leaks from one packet to the next).
pub struct Scratch {
    stack: Box<[u8; STACK_SIZE * FRAMES]>,
    /// The JIT's table of map values (address, readable and writable length), one per
    /// map; grown on the first run with more maps than before, then reused.
    map_tab: Vec<[u64; 3]>,
}

impl Scratch {
    /// The stack frames alone.
    #[cfg_attr(not(all(target_arch = "x86_64", unix)), allow(dead_code))]
    pub(crate) fn stack_mut(&mut self) -> &mut [u8; STACK_SIZE * FRAMES] {
        &mut self.stack
    }

    /// The stack and the JIT's map table, the table sized for `maps` maps.
    #[cfg_attr(not(all(target_arch = "x86_64", unix)), allow(dead_code))]
    pub(crate) fn jit_parts(&mut self, maps: usize) -> (&mut [u8; STACK_SIZE * FRAMES], &mut [[u64; 3]]) {
        self.map_tab.resize(maps, [0; 3]);
        (&mut self.stack, &mut self.map_tab)
    }
}

impl std::fmt::Debug for Scratch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scratch").field("maps", &self.map_tab.len()).finish_non_exhaustive()
    }
}

impl Default for Scratch {
    fn default() -> Self {
        Scratch { stack: Box::new([0; STACK_SIZE * FRAMES]), map_tab: Vec::new() }
    }
}

pub(crate) struct Vm<'a> {
    pub(crate) prog: &'a Program,
    pub(crate) maps: &'a mut [Map],
    pub(crate) skb: &'a mut dyn Skb,
    pub(crate) stack: &'a mut [u8; STACK_SIZE * FRAMES],
    pub(crate) pc: usize,
}

/// Bytes copied out of program memory for a helper that then needs `&mut` access to
/// the packet or a map: inline up to 512 bytes (a stack frame), else on the heap.
struct Copied {
    inline: [u8; STACK_SIZE],
    len: usize,
    heap: Vec<u8>,
}

impl Copied {
    fn of(b: &[u8]) -> Copied {
        let mut c = Copied { inline: [0; STACK_SIZE], len: b.len(), heap: Vec::new() };
        match c.inline.get_mut(..b.len()) {
            Some(dst) => dst.copy_from_slice(b),
            None => c.heap = b.to_vec(),
        }
        c
    }

    fn bytes(&self) -> &[u8] {
        self.inline.get(..self.len).unwrap_or(&self.heap)
    }
}

fn tag(addr: u64) -> u64 {
    addr >> TAG_SHIFT
}

pub(crate) fn make(tag: u64, off: u64) -> u64 {
    (tag << TAG_SHIFT) | (off & OFF_MASK)
}

/// The frame pointer of frame `depth`: the top of its 512 bytes.
pub(crate) fn stack_top(depth: usize) -> u64 {
    make(TAG_STACK + 2 * depth as u64, STACK_SIZE as u64)
}

/// The address of byte `off` of the packet, as programs see `skb->data + off`.
pub fn packet_addr(off: u64) -> u64 {
    make(TAG_PKT, off)
}

/// The address of the context, as programs get it in r1.
pub fn ctx_addr() -> u64 {
    make(TAG_CTX, 0)
}

/// Runs `prog` on `skb` with its maps; returns r0 or the fault that aborted it.
/// (A convenience that allocates its [`Scratch`]; the data plane uses [`run_with`].)
pub fn run(prog: &Program, maps: &mut [Map], skb: &mut dyn Skb, opts: RunOpts) -> Result<u64, Fault> {
    run_with(&mut Scratch::default(), prog, maps, skb, opts)
}

/// Runs `prog` with a reused [`Scratch`], by its JIT code unless `opts.engine` is
/// [`Engine::Interp`] or it has none: no allocation unless a helper copies more than
/// 512 bytes or a hash map gets a new key.
pub fn run_with(
    scratch: &mut Scratch,
    prog: &Program,
    maps: &mut [Map],
    skb: &mut dyn Skb,
    opts: RunOpts,
) -> Result<u64, Fault> {
    if opts.engine == Engine::Auto {
        if let Some(res) = prog.jit.run(scratch, prog, maps, skb, opts.budget) {
            return res;
        }
    }
    prog.clear_stack(&mut scratch.stack[..]);
    let mut vm = Vm { prog, maps, skb, stack: &mut scratch.stack, pc: 0 };
    vm.exec(opts.budget)
}

/// A lean run of `prog`'s machine code on the packet bytes `pkt`, read only, with no
/// map and no packet view: `None` if the program has no machine code, `opts` ask for the
/// interpreter, or the program called out of its code (a helper, a context field other
/// than `data`, `data_end` and `len`, a map, an access it cannot check inline) — it
/// has then changed nothing but its registers and stack, and the caller runs it in full
/// ([`run_with`]) with the same outcome as if it had from the start. Otherwise what
/// [`run_with`] returns. For a program that only reads the packet (an End.BPF that
/// inspects and forwards), this is the whole cost of running it.
#[inline]
pub fn run_lean(scratch: &mut Scratch, prog: &Program, pkt: &[u8], opts: RunOpts) -> Option<Result<u64, Fault>> {
    if opts.engine != Engine::Auto {
        return None;
    }
    prog.jit.run_lean(scratch, prog, pkt, opts.budget)
}

impl Vm<'_> {
    fn oob(&self, addr: u64, len: u64, kind: &'static str) -> Fault {
        Fault::OutOfBounds { pc: self.pc, addr, len, kind }
    }

    /// The region slice and offset range an access of `len` bytes at `addr` falls in.
    fn range(&self, addr: u64, len: u64, kind: &'static str) -> Result<(u64, usize, usize), Fault> {
        let t = tag(addr);
        let off = addr & OFF_MASK;
        let size = match t {
            TAG_PKT => self.skb.data().len() as u64,
            t if (TAG_STACK..TAG_STACK + 2 * FRAMES as u64).contains(&t) && (t - TAG_STACK).is_multiple_of(2) => {
                STACK_SIZE as u64
            }
            t if t >= TAG_MAP => match self.maps.get((t - TAG_MAP) as usize) {
                Some(m) => m.storage().len() as u64,
                None => return Err(self.oob(addr, len, kind)),
            },
            _ => return Err(self.oob(addr, len, kind)),
        };
        match off.checked_add(len) {
            Some(end) if len > 0 && end <= size => Ok((t, off as usize, end as usize)),
            _ => Err(self.oob(addr, len, kind)),
        }
    }

    /// Bytes readable at `addr` (packet, stack, map values; not the context).
    fn read(&self, addr: u64, len: u64, kind: &'static str) -> Result<&[u8], Fault> {
        let (t, a, b) = self.range(addr, len, kind)?;
        let s: &[u8] = match t {
            TAG_PKT => self.skb.data(),
            t if t >= TAG_MAP => self.maps[(t - TAG_MAP) as usize].storage(),
            t => {
                let f = ((t - TAG_STACK) / 2) as usize * STACK_SIZE;
                &self.stack[f..f + STACK_SIZE]
            }
        };
        s.get(a..b).ok_or_else(|| self.oob(addr, len, kind))
    }

    /// `f` on the packet and the `len` bytes of program memory at `addr` (a helper's
    /// input, such as `bpf_lwt_seg6_store_bytes`'s source): borrowed in place from the
    /// stack or a map, which the packet cannot alias; copied first when they are the
    /// packet's own.
    fn with_bytes<R>(
        &mut self,
        addr: u64,
        len: u64,
        kind: &'static str,
        f: impl FnOnce(&mut dyn Skb, &[u8]) -> R,
    ) -> Result<R, Fault> {
        let (t, a, b) = self.range(addr, len, kind)?;
        let pc = self.pc;
        let oob = move || Fault::OutOfBounds { pc, addr, len, kind };
        match t {
            TAG_PKT => {
                let c = Copied::of(self.skb.data().get(a..b).ok_or_else(oob)?);
                Ok(f(&mut *self.skb, c.bytes()))
            }
            t if t >= TAG_MAP => {
                let m = self.maps.get((t - TAG_MAP) as usize).ok_or_else(oob)?;
                Ok(f(&mut *self.skb, m.storage().get(a..b).ok_or_else(oob)?))
            }
            t => {
                let fr = ((t - TAG_STACK) / 2) as usize * STACK_SIZE;
                Ok(f(&mut *self.skb, self.stack.get(fr + a..fr + b).ok_or_else(oob)?))
            }
        }
    }

    /// Bytes writable at `addr` (stack, writable map values, packet only when allowed).
    fn write(&mut self, addr: u64, len: u64, kind: &'static str) -> Result<&mut [u8], Fault> {
        let (t, a, b) = self.range(addr, len, kind)?;
        let pc = self.pc;
        let ro = Fault::ReadOnly { pc, addr, len };
        let s: &mut [u8] = match t {
            TAG_PKT => {
                if !self.prog.prog_type.packet_writable() {
                    return Err(ro);
                }
                self.skb.data_mut().ok_or(ro)?
            }
            t if t >= TAG_MAP => {
                let m = &mut self.maps[(t - TAG_MAP) as usize];
                if m.read_only {
                    return Err(ro);
                }
                m.storage_mut()
            }
            t => {
                let f = ((t - TAG_STACK) / 2) as usize * STACK_SIZE;
                &mut self.stack[f..f + STACK_SIZE]
            }
        };
        s.get_mut(a..b).ok_or(Fault::OutOfBounds { pc, addr, len, kind })
    }

    fn load(&self, addr: u64, size: u64) -> Result<u64, Fault> {
        if tag(addr) == TAG_CTX {
            return self.ctx_load(addr & OFF_MASK, size);
        }
        let b = self.read(addr, size, "load")?;
        let mut v = [0u8; 8];
        v[..b.len()].copy_from_slice(b);
        Ok(u64::from_le_bytes(v))
    }

    fn store(&mut self, addr: u64, size: u64, val: u64) -> Result<(), Fault> {
        if tag(addr) == TAG_CTX {
            return self.ctx_store(addr & OFF_MASK, size, val);
        }
        let b = self.write(addr, size, "store")?;
        let n = b.len();
        b.copy_from_slice(&val.to_le_bytes()[..n]);
        Ok(())
    }

    /// `lwt_is_valid_access` + `bpf_skb_is_valid_access` (net/core/filter.c): aligned,
    /// inside the struct, not a field LWT programs may not read; `data`/`data_end` whole
    /// u32 loads only, returning the packet pointers.
    fn ctx_load(&self, off: u64, size: u64) -> Result<u64, Fault> {
        let bad = Fault::BadContext { pc: self.pc, off, size };
        if off >= CTX_SIZE || !off.is_multiple_of(size) || size > 4 {
            return Err(bad);
        }
        let field = off & !3;
        // tc_classid, family..local_port, data_meta, flow_keys, tstamp, wire_len, the sk
        // pointer, tstamp_type, hwtstamp: not for LWT programs here (gso_segs and gso_size
        // read as 0: sr6 has no GSO).
        if field == 72 || (88..=136).contains(&field) || (field >= 140 && field != 164 && field != 176) {
            return Err(bad);
        }
        if field == 76 || field == 80 {
            if size != 4 {
                return Err(bad);
            }
            let len = self.skb.data().len() as u64;
            return Ok(packet_addr(if field == 76 { 0 } else { len }));
        }
        let m = self.skb.meta();
        let v: u32 = match field {
            0 => self.skb.data().len() as u32,
            4 => m.pkt_type,
            8 => m.mark,
            12 => m.queue_mapping,
            16 => m.protocol,
            32 => m.priority,
            36 => m.ingress_ifindex,
            40 => m.ifindex,
            44 => m.tc_index,
            48..=64 => m.cb[((field - 48) / 4) as usize],
            68 => m.hash,
            84 => m.napi_id,
            _ => 0,
        };
        let shift = (off - field) * 8;
        let mask = if size == 4 { u64::from(u32::MAX) } else { (1u64 << (size * 8)) - 1 };
        Ok((u64::from(v) >> shift) & mask)
    }

    /// LWT programs may write `mark`, `priority` (whole u32) and `cb[]`.
    fn ctx_store(&mut self, off: u64, size: u64, val: u64) -> Result<(), Fault> {
        let bad = Fault::BadContext { pc: self.pc, off, size };
        let field = off & !3;
        let m = self.skb.meta_mut();
        match field {
            8 | 32 if size == 4 && off == field => {
                if field == 8 {
                    m.mark = val as u32;
                } else {
                    m.priority = val as u32;
                }
                Ok(())
            }
            48..=64 if size <= 4 && off.is_multiple_of(size) => {
                let i = ((field - 48) / 4) as usize;
                let shift = (off - field) * 8;
                let mask = if size == 4 { u32::MAX } else { ((1u32 << (size * 8)) - 1) << shift };
                m.cb[i] = (m.cb[i] & !mask) | (((val as u32) << shift) & mask);
                Ok(())
            }
            _ => Err(bad),
        }
    }

    fn exec(&mut self, budget: u64) -> Result<u64, Fault> {
        let insns = &self.prog.insns;
        let mut r = [0u64; NREGS];
        r[1] = ctx_addr();
        r[10] = stack_top(0);
        let mut frames = [Frame::default(); FRAMES];
        let mut depth = 0usize;
        let mut left = budget;
        loop {
            let pc = self.pc;
            let i = *insns.get(pc).ok_or(Fault::PcOutOfRange(pc))?;
            if left == 0 {
                return Err(Fault::Budget(budget));
            }
            left -= 1;
            let bad = Fault::BadInsn { pc, code: i.code };
            let d = i.dst as usize & 0xf;
            let s = i.src as usize & 0xf;
            if d >= NREGS || s >= NREGS {
                return Err(bad);
            }
            let mut next = pc + 1;
            match i.class() {
                ALU64 => {
                    let src = if i.code & X != 0 { r[s] } else { i.imm as i64 as u64 };
                    r[d] = alu64(i, r[d], src).ok_or(bad)?;
                }
                ALU if i.code & 0xf0 == END => r[d] = endian(i, r[d]).ok_or(bad)?,
                ALU => {
                    let src = if i.code & X != 0 { r[s] as u32 } else { i.imm as u32 };
                    r[d] = u64::from(alu32(i, r[d] as u32, src).ok_or(bad)?);
                }
                JMP | JMP32 => {
                    let op = i.code & 0xf0;
                    match op {
                        JA => {
                            let rel = if i.class() == JMP32 { i64::from(i.imm) } else { i64::from(i.off) };
                            next = (pc as i64 + 1 + rel) as usize;
                        }
                        CALL if i.src == PSEUDO_CALL => {
                            if depth + 1 >= FRAMES {
                                return Err(Fault::CallTooDeep { pc });
                            }
                            frames[depth] = Frame { ret_pc: pc + 1, saved: [r[6], r[7], r[8], r[9]] };
                            depth += 1;
                            let f = depth * STACK_SIZE;
                            self.stack[f..f + STACK_SIZE].fill(0);
                            r[10] = stack_top(depth);
                            next = (pc as i64 + 1 + i64::from(i.imm)) as usize;
                        }
                        CALL => self.helper(i, &mut r)?,
                        EXIT => {
                            if depth == 0 {
                                return Ok(r[0]);
                            }
                            depth -= 1;
                            let f = frames[depth];
                            r[6..10].copy_from_slice(&f.saved);
                            r[10] = stack_top(depth);
                            next = f.ret_pc;
                        }
                        _ => {
                            let taken = if i.class() == JMP {
                                let b = if i.code & X != 0 { r[s] } else { i.imm as i64 as u64 };
                                cond64(op, r[d], b).ok_or(bad)?
                            } else {
                                let b = if i.code & X != 0 { r[s] as u32 } else { i.imm as u32 };
                                cond32(op, r[d] as u32, b).ok_or(bad)?
                            };
                            if taken {
                                next = (pc as i64 + 1 + i64::from(i.off)) as usize;
                            }
                        }
                    }
                }
                LD => {
                    if !i.is_ld_imm64() {
                        return Err(bad);
                    }
                    let hi = insns.get(pc + 1).ok_or(bad.clone())?;
                    r[d] = match i.src {
                        0 => u64::from(i.imm as u32) | (u64::from(hi.imm as u32) << 32),
                        PSEUDO_MAP_FD => make(TAG_MAP_HANDLE, i.imm as u32 as u64),
                        PSEUDO_MAP_VALUE => make(TAG_MAP + u64::from(i.imm as u32), u64::from(hi.imm as u32)),
                        _ => return Err(bad),
                    };
                    next = pc + 2;
                }
                LDX | ST | STX => self.mem(i, &mut r)?,
                _ => return Err(bad),
            }
            self.pc = next;
        }
    }

    /// LDX, ST and STX (with atomics) at `self.pc`: the interpreter's and the JIT's slow
    /// path.
    pub(crate) fn mem(&mut self, i: Insn, r: &mut [u64; NREGS]) -> Result<(), Fault> {
        let (d, s) = (i.dst as usize & 0xf, i.src as usize & 0xf);
        if d >= NREGS || s >= NREGS {
            return Err(Fault::BadInsn { pc: self.pc, code: i.code });
        }
        let size = size_bytes(i.code);
        match i.class() {
            LDX => {
                let addr = r[s].wrapping_add(i.off as i64 as u64);
                let v = self.load(addr, size)?;
                r[d] = if i.code & 0xe0 == MEMSX { sign_extend(v, size * 8) } else { v };
            }
            ST => {
                let addr = r[d].wrapping_add(i.off as i64 as u64);
                self.store(addr, size, i.imm as i64 as u64)?;
            }
            STX => {
                let addr = r[d].wrapping_add(i.off as i64 as u64);
                if i.code & 0xe0 == ATOMIC {
                    self.atomic(i, addr, size, r)?;
                } else {
                    self.store(addr, size, r[s])?;
                }
            }
            _ => return Err(Fault::BadInsn { pc: self.pc, code: i.code }),
        }
        Ok(())
    }

    /// A helper call (`CALL imm` without `PSEUDO_CALL`) at `self.pc`: r0 = its result.
    pub(crate) fn helper(&mut self, i: Insn, r: &mut [u64; NREGS]) -> Result<(), Fault> {
        r[0] = self.call(i.imm, r)? as u64;
        Ok(())
    }

    fn atomic(&mut self, i: Insn, addr: u64, size: u64, r: &mut [u64; NREGS]) -> Result<(), Fault> {
        let pc = self.pc;
        let bad = Fault::BadInsn { pc, code: i.code };
        // The kernel allows atomics on the stack and map values only.
        let t = tag(addr);
        if t == TAG_CTX || t == TAG_PKT {
            return Err(Fault::ReadOnly { pc, addr, len: size });
        }
        let old = self.load(addr, size)?;
        let s = i.src as usize;
        let d = r[s];
        let mask = if size == 8 { u64::MAX } else { u64::from(u32::MAX) };
        let (new, fetch_into) = match i.imm {
            XCHG => (d, Some(s)),
            CMPXCHG => (if (old & mask) == (r[0] & mask) { d } else { old }, Some(0)),
            op => {
                let v = match op & !FETCH {
                    0x00 => old.wrapping_add(d),
                    0x40 => old | d,
                    0x50 => old & d,
                    0xa0 => old ^ d,
                    _ => return Err(bad),
                };
                (v, (op & FETCH != 0).then_some(s))
            }
        };
        self.store(addr, size, new & mask)?;
        if let Some(reg) = fetch_into {
            r[reg] = old & mask;
        }
        Ok(())
    }

    fn ctx_arg(&self, r1: u64, helper: &'static str) -> Result<(), Fault> {
        if r1 != ctx_addr() {
            return Err(Fault::BadHelperArg { pc: self.pc, helper, what: "r1 is not the context" });
        }
        Ok(())
    }

    fn map_arg(&self, r1: u64, helper: &'static str) -> Result<usize, Fault> {
        let i = (r1 & OFF_MASK) as usize;
        if tag(r1) != TAG_MAP_HANDLE || i >= self.maps.len() {
            return Err(Fault::BadHelperArg { pc: self.pc, helper, what: "r1 is not a map" });
        }
        Ok(i)
    }

    /// `bpf_perf_event_output(ctx, map, flags, data, size)` for skb programs: the
    /// kernel's `bpf_skb_event_output` (net/core/filter.c) through `bpf_event_output`
    /// and `__bpf_perf_event_output` (kernel/trace/bpf_trace.c), into the map's ring
    /// ([`crate::events`]). What the verifier would refuse (no context, no perf event
    /// array, `data` not readable for `size` bytes) aborts the run; the kernel's run-time
    /// errors are returned.
    fn perf_event_output(&mut self, r: &[u64; NREGS]) -> Result<i64, Fault> {
        const NAME: &str = "bpf_perf_event_output";
        self.ctx_arg(r[1], NAME)?;
        let m = self.map_arg(r[2], NAME)?;
        let max_entries = self.maps[m].def.max_entries;
        if self.maps[m].events().is_none() {
            return Err(Fault::BadHelperArg { pc: self.pc, helper: NAME, what: "r2 is not a perf event array" });
        }
        let meta: &[u8] = if r[5] == 0 { &[] } else { self.read(r[4], r[5], "perf_event_output data read")? };
        let meta_len = meta.len();
        let cpu = self.skb.cpu();
        let (index, ctx_len) = match crate::events::check_flags(r[3], max_entries, cpu, self.skb.data().len()) {
            Ok(v) => v,
            Err(e) => return Ok(e),
        };
        let len = meta_len.saturating_add(ctx_len);
        if let Some(Err(e)) = self.maps[m].events_mut().map(|ring| ring.reserve(len, cpu, index)) {
            return Ok(e);
        }
        let mut data = Vec::with_capacity(len);
        if meta_len > 0 {
            data.extend_from_slice(self.read(r[4], r[5], "perf_event_output data read")?);
        }
        data.extend_from_slice(self.skb.data().get(..ctx_len).unwrap_or_default());
        let ts_ns = self.skb.ktime_get_ns();
        let ev = crate::events::Event { cpu, index, ts_ns, data };
        Ok(self.maps[m].events_mut().map_or(-crate::events::EINVAL, |ring| ring.push(ev)))
    }

    fn call(&mut self, id: i32, r: &[u64; NREGS]) -> Result<i64, Fault> {
        let pc = self.pc;
        Ok(match id {
            MAP_LOOKUP_ELEM => {
                let m = self.map_arg(r[1], "bpf_map_lookup_elem")?;
                let ks = u64::from(self.maps[m].def.key_size);
                let key = self.read(r[2], ks, "map key read")?;
                match self.maps[m].lookup(key) {
                    Some(off) => make(TAG_MAP + m as u64, off as u64) as i64,
                    None => 0,
                }
            }
            MAP_UPDATE_ELEM => {
                let m = self.map_arg(r[1], "bpf_map_update_elem")?;
                let (ks, vs) = (u64::from(self.maps[m].def.key_size), u64::from(self.maps[m].def.value_size));
                let key = Copied::of(self.read(r[2], ks, "map key read")?);
                let val = Copied::of(self.read(r[3], vs, "map value read")?);
                if self.maps[m].read_only {
                    return Err(Fault::ReadOnly { pc, addr: r[1], len: vs });
                }
                self.maps[m].update(key.bytes(), val.bytes(), r[4])
            }
            MAP_DELETE_ELEM => {
                let m = self.map_arg(r[1], "bpf_map_delete_elem")?;
                let ks = u64::from(self.maps[m].def.key_size);
                let key = Copied::of(self.read(r[2], ks, "map key read")?);
                self.maps[m].delete(key.bytes())
            }
            KTIME_GET_NS | KTIME_GET_BOOT_NS => self.skb.ktime_get_ns() as i64,
            GET_PRANDOM_U32 => i64::from(self.skb.prandom_u32()),
            GET_SMP_PROCESSOR_ID => i64::from(self.skb.cpu()),
            GET_NUMA_NODE_ID => 0,
            PERF_EVENT_OUTPUT => self.perf_event_output(r)?,
            TRACE_PRINTK => {
                self.with_bytes(r[1], r[2], "trace_printk format read", |skb, fmt| skb.trace_printk(fmt))?;
                r[2] as i64
            }
            SKB_LOAD_BYTES => {
                self.ctx_arg(r[1], "bpf_skb_load_bytes")?;
                let (off, len) = (r[2] as u32, r[4] as u32);
                let src = self.skb.data().get(off as usize..).and_then(|d| d.get(..len as usize)).map(Copied::of);
                let dst = self.write(r[3], u64::from(len), "skb_load_bytes destination")?;
                match src {
                    Some(b) if off <= i32::MAX as u32 => {
                        dst.copy_from_slice(b.bytes());
                        0
                    }
                    _ => {
                        dst.fill(0);
                        -errno::EFAULT
                    }
                }
            }
            LWT_SEG6_STORE_BYTES => {
                self.ctx_arg(r[1], "bpf_lwt_seg6_store_bytes")?;
                let off = r[2] as u32;
                let len = u64::from(r[4] as u32);
                self.with_bytes(r[3], len, "store_bytes source read", |skb, b| skb.lwt_seg6_store_bytes(off, b))?
            }
            LWT_SEG6_ADJUST_SRH => {
                self.ctx_arg(r[1], "bpf_lwt_seg6_adjust_srh")?;
                self.skb.lwt_seg6_adjust_srh(r[2] as u32, r[3] as i32)
            }
            LWT_SEG6_ACTION => {
                self.ctx_arg(r[1], "bpf_lwt_seg6_action")?;
                let act = r[2] as u32;
                self.with_bytes(r[3], u64::from(r[4] as u32), "action parameter read", |skb, b| {
                    skb.lwt_seg6_action(act, b)
                })?
            }
            LWT_PUSH_ENCAP => {
                self.ctx_arg(r[1], "bpf_lwt_push_encap")?;
                let ty = r[2] as u32;
                self.with_bytes(r[3], u64::from(r[4] as u32), "push_encap header read", |skb, b| {
                    skb.lwt_push_encap(ty, b)
                })?
            }
            SR6_ECMP_NEXTHOPS => {
                self.ctx_arg(r[1], "sr6_ecmp_nexthops")?;
                let dst: [u8; 16] =
                    self.read(r[2], 16, "ecmp_nexthops destination read")?.try_into().unwrap_or([0; 16]);
                let mut hops = [[0u8; 16]; crate::skb::MAX_NEXTHOPS];
                let room = ((r[5] as u32 / 16) as usize).min(hops.len());
                let n = self.skb.ecmp_nexthops(&dst, r[3] as u32, &mut hops[..room]);
                if r[5] as u32 > 0 {
                    let out = self.write(r[4], u64::from(r[5] as u32), "ecmp_nexthops output")?;
                    for (o, h) in out.chunks_exact_mut(16).zip(&hops[..(n.max(0) as usize).min(room)]) {
                        o.copy_from_slice(h);
                    }
                }
                n
            }
            _ => return Err(Fault::BadHelperArg { pc, helper: "unknown", what: "helper not provided" }),
        })
    }
}

pub(crate) fn size_bytes(code: u8) -> u64 {
    match code & 0x18 {
        W => 4,
        H => 2,
        B => 1,
        _ => 8,
    }
}

fn sign_extend(v: u64, bits: u64) -> u64 {
    let sh = 64 - bits;
    (((v << sh) as i64) >> sh) as u64
}

/// ALU64 (RFC 9669 §4.1): division by zero gives 0, modulo by zero leaves dst.
pub(crate) fn alu64(i: Insn, a: u64, b: u64) -> Option<u64> {
    let signed = i.off == 1;
    Some(match i.code & 0xf0 {
        ADD => a.wrapping_add(b),
        SUB => a.wrapping_sub(b),
        MUL => a.wrapping_mul(b),
        DIV if b == 0 => 0,
        DIV if signed => (a as i64).wrapping_div(b as i64) as u64,
        DIV => a / b,
        MOD if b == 0 => a,
        MOD if signed => (a as i64).wrapping_rem(b as i64) as u64,
        MOD => a % b,
        OR => a | b,
        AND => a & b,
        XOR => a ^ b,
        LSH => a << (b & 63),
        RSH => a >> (b & 63),
        ARSH => ((a as i64) >> (b & 63)) as u64,
        NEG => a.wrapping_neg(),
        MOV => match i.off {
            0 => b,
            8 | 16 | 32 => sign_extend(b, i.off as u64),
            _ => return None,
        },
        // ALU64 END: unconditional byte swap (cpu v4).
        END => match i.imm {
            16 => u64::from((a as u16).swap_bytes()),
            32 => u64::from((a as u32).swap_bytes()),
            64 => a.swap_bytes(),
            _ => return None,
        },
        _ => return None,
    })
}

/// ALU (32-bit), the result zero-extended by the caller. END converts to/from little or
/// big endian (the host is little-endian, as `bpfel`).
pub(crate) fn alu32(i: Insn, a: u32, b: u32) -> Option<u32> {
    let signed = i.off == 1;
    Some(match i.code & 0xf0 {
        ADD => a.wrapping_add(b),
        SUB => a.wrapping_sub(b),
        MUL => a.wrapping_mul(b),
        DIV if b == 0 => 0,
        DIV if signed => (a as i32).wrapping_div(b as i32) as u32,
        DIV => a / b,
        MOD if b == 0 => a,
        MOD if signed => (a as i32).wrapping_rem(b as i32) as u32,
        MOD => a % b,
        OR => a | b,
        AND => a & b,
        XOR => a ^ b,
        LSH => a << (b & 31),
        RSH => a >> (b & 31),
        ARSH => ((a as i32) >> (b & 31)) as u32,
        NEG => a.wrapping_neg(),
        MOV => match i.off {
            0 => b,
            8 | 16 => sign_extend(u64::from(b), i.off as u64) as u32,
            _ => return None,
        },
        _ => return None,
    })
}

/// ALU END: to little endian truncates to the width (the host is little-endian, as
/// `bpfel`), to big endian swaps the bytes of that width.
pub(crate) fn endian(i: Insn, a: u64) -> Option<u64> {
    let be = i.code & X != 0;
    Some(match (i.imm, be) {
        (16, false) => u64::from(a as u16),
        (32, false) => u64::from(a as u32),
        (64, false) => a,
        (16, true) => u64::from((a as u16).swap_bytes()),
        (32, true) => u64::from((a as u32).swap_bytes()),
        (64, true) => a.swap_bytes(),
        _ => return None,
    })
}

fn cond64(op: u8, a: u64, b: u64) -> Option<bool> {
    Some(match op {
        JEQ => a == b,
        JNE => a != b,
        JGT => a > b,
        JGE => a >= b,
        JLT => a < b,
        JLE => a <= b,
        JSET => a & b != 0,
        JSGT => (a as i64) > (b as i64),
        JSGE => (a as i64) >= (b as i64),
        JSLT => (a as i64) < (b as i64),
        JSLE => (a as i64) <= (b as i64),
        _ => return None,
    })
}

fn cond32(op: u8, a: u32, b: u32) -> Option<bool> {
    Some(match op {
        JEQ => a == b,
        JNE => a != b,
        JGT => a > b,
        JGE => a >= b,
        JLT => a < b,
        JLE => a <= b,
        JSET => a & b != 0,
        JSGT => (a as i32) > (b as i32),
        JSGE => (a as i32) >= (b as i32),
        JSLT => (a as i32) < (b as i32),
        JSLE => (a as i32) <= (b as i32),
        _ => return None,
    })
}
