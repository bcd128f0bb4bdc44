//! The load-time checks ("verifier-lite"): what the kernel's verifier (kernel/bpf/verifier.c)
//! refuses on the instruction stream alone. Every slot decodes to a known opcode with
//! registers in range, r10 is never written, jumps land inside the program and never in
//! the second slot of a 64-bit load, calls name helpers the program type may call and sr6
//! provides, BPF-to-BPF calls land inside the program without recursion, the last
//! instruction cannot fall off the end, every instruction is reachable, and there is no
//! backward jump: this first slice refuses loops (the kernel accepts bounded loops since
//! 5.3 by exploring them; sr6 would need the same to know them bounded). Memory safety is
//! not proven here: the interpreter checks every access at run time.

use crate::helpers::{helper_name, kernel_allows, provided, ProgType};
use crate::insn::*;

/// The kernel's limit on a privileged program's length (BPF_COMPLEXITY_LIMIT_INSNS).
pub const MAX_INSNS: usize = 1_000_000;
/// The kernel's limit on nested BPF-to-BPF calls (MAX_CALL_FRAMES).
pub const MAX_CALL_FRAMES: usize = 8;

/// Why the program was refused, and at which instruction (slot index).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum VerifyError {
    #[error("program is empty")]
    Empty,
    #[error("program has {0} instructions, more than {MAX_INSNS}")]
    TooLong(usize),
    #[error("insn {pc}: unknown opcode {code:#04x}")]
    BadOpcode { pc: usize, code: u8 },
    #[error("insn {pc}: invalid register r{reg}")]
    BadRegister { pc: usize, reg: u8 },
    #[error("insn {pc}: r10 (the frame pointer) is read-only")]
    FramePointerWrite { pc: usize },
    #[error("insn {pc}: reserved field is not zero")]
    Reserved { pc: usize },
    #[error("insn {pc}: jump to {target} is out of range")]
    JumpOutOfRange { pc: usize, target: i64 },
    #[error("insn {pc}: jump into the middle of a 64-bit immediate load at {target}")]
    JumpIntoLdImm64 { pc: usize, target: usize },
    #[error("insn {pc}: back-edge to {target}: loops are not supported (yet) by sr6's verifier")]
    BackEdge { pc: usize, target: usize },
    #[error("insn {pc}: 64-bit immediate load has no second slot")]
    IncompleteLdImm64 { pc: usize },
    #[error("insn {pc}: 64-bit immediate load names map {map}, the object has {maps}")]
    BadMapRef { pc: usize, map: i32, maps: usize },
    #[error("insn {pc}: unknown helper id {id}")]
    UnknownHelper { pc: usize, id: i32 },
    #[error("insn {pc}: helper {name} (id {id}) is not available to {prog} programs")]
    HelperNotAllowed { pc: usize, id: i32, name: String, prog: &'static str },
    #[error("insn {pc}: helper {name} (id {id}) is not provided by sr6 yet")]
    HelperNotProvided { pc: usize, id: i32, name: String },
    #[error("insn {pc}: division by constant zero")]
    DivByZero { pc: usize },
    #[error("insn {pc}: shift by {imm} is out of range")]
    BadShift { pc: usize, imm: i32 },
    #[error("insn {pc}: byte swap width {imm} (must be 16, 32 or 64)")]
    BadEndian { pc: usize, imm: i32 },
    #[error("insn {pc}: legacy packet load (LD_ABS/LD_IND) is not available to {prog} programs")]
    LegacyLoad { pc: usize, prog: &'static str },
    #[error("insn {pc}: recursive BPF-to-BPF call")]
    Recursion { pc: usize },
    #[error("insn {pc}: BPF-to-BPF calls nest deeper than {MAX_CALL_FRAMES} frames")]
    CallTooDeep { pc: usize },
    #[error("insn {pc}: execution can fall off the end of the program")]
    FallsOffEnd { pc: usize },
    #[error("insn {pc}: unreachable instruction")]
    Unreachable { pc: usize },
}

/// Checks a program (all its functions, main first at slot 0). `nmaps`: how many maps the
/// loader resolved (the 64-bit loads of map references carry their index).
pub fn verify(insns: &[Insn], prog: ProgType, nmaps: usize) -> Result<(), VerifyError> {
    verify_with_funcs(insns, prog, nmaps, &[])
}

/// [`verify`] with the starts of functions the loader knows from symbols (the appended
/// `.text`), which need not all be called.
pub fn verify_with_funcs(insns: &[Insn], prog: ProgType, nmaps: usize, funcs: &[usize]) -> Result<(), VerifyError> {
    if insns.is_empty() {
        return Err(VerifyError::Empty);
    }
    if insns.len() > MAX_INSNS {
        return Err(VerifyError::TooLong(insns.len()));
    }
    // Which slots are second halves of a 64-bit load.
    let mut second = vec![false; insns.len()];
    let mut pc = 0;
    while pc < insns.len() {
        if insns[pc].is_ld_imm64() {
            if pc + 1 >= insns.len() {
                return Err(VerifyError::IncompleteLdImm64 { pc });
            }
            second[pc + 1] = true;
            pc += 2;
        } else {
            pc += 1;
        }
    }
    let mut func_starts = vec![0usize];
    func_starts.extend(funcs.iter().copied().filter(|&f| f < insns.len() && !second[f]));
    for (pc, i) in insns.iter().enumerate() {
        if second[pc] {
            if i.code != 0 || i.dst != 0 || i.src != 0 || i.off != 0 {
                return Err(VerifyError::Reserved { pc });
            }
            continue;
        }
        check_insn(insns, &second, pc, prog, nmaps)?;
        if i.code == JMP | CALL && i.src == PSEUDO_CALL {
            let t = pc as i64 + 1 + i64::from(i.imm);
            func_starts.push(t as usize);
        }
    }
    func_starts.sort_unstable();
    func_starts.dedup();
    check_calls(insns, &func_starts)?;
    check_flow(insns, &second, &func_starts)
}

fn target(insns: &[Insn], second: &[bool], pc: usize, rel: i64) -> Result<usize, VerifyError> {
    let t = pc as i64 + 1 + rel;
    if t < 0 || t >= insns.len() as i64 {
        return Err(VerifyError::JumpOutOfRange { pc, target: t });
    }
    let t = t as usize;
    if second[t] {
        return Err(VerifyError::JumpIntoLdImm64 { pc, target: t });
    }
    Ok(t)
}

fn check_insn(insns: &[Insn], second: &[bool], pc: usize, prog: ProgType, nmaps: usize) -> Result<(), VerifyError> {
    let i = insns[pc];
    let bad = || VerifyError::BadOpcode { pc, code: i.code };
    for reg in [i.dst, i.src] {
        if reg as usize >= NREGS {
            return Err(VerifyError::BadRegister { pc, reg });
        }
    }
    let writes_dst = |i: &Insn| -> Result<(), VerifyError> {
        if i.dst == FP {
            Err(VerifyError::FramePointerWrite { pc })
        } else {
            Ok(())
        }
    };
    match i.class() {
        ALU | ALU64 => {
            let op = i.code & 0xf0;
            let wide = i.class() == ALU64;
            let x = i.code & X != 0;
            writes_dst(&i)?;
            match op {
                ADD | SUB | MUL | OR | AND | XOR | LSH | RSH | ARSH => {
                    if i.off != 0 || (x && i.imm != 0) {
                        return Err(VerifyError::Reserved { pc });
                    }
                    let width = if wide { 64 } else { 32 };
                    if !x && matches!(op, LSH | RSH | ARSH) && !(0..width).contains(&i.imm) {
                        return Err(VerifyError::BadShift { pc, imm: i.imm });
                    }
                }
                DIV | MOD => {
                    // off 1: signed (cpu v4).
                    if !(i.off == 0 || i.off == 1) || (x && i.imm != 0) {
                        return Err(VerifyError::Reserved { pc });
                    }
                    if !x && i.imm == 0 {
                        return Err(VerifyError::DivByZero { pc });
                    }
                }
                MOV => {
                    // off 8/16/32: sign-extending move (cpu v4; 32 only on ALU64).
                    let ok_off = matches!(i.off, 0 | 8 | 16) || (wide && i.off == 32);
                    if !ok_off || (x && i.imm != 0) || (!x && i.off != 0) {
                        return Err(VerifyError::Reserved { pc });
                    }
                }
                NEG => {
                    if x || i.src != 0 || i.off != 0 || i.imm != 0 {
                        return Err(VerifyError::Reserved { pc });
                    }
                }
                END => {
                    // ALU64 END is the unconditional bswap (cpu v4), source bit must be 0.
                    if wide && x {
                        return Err(bad());
                    }
                    if !matches!(i.imm, 16 | 32 | 64) {
                        return Err(VerifyError::BadEndian { pc, imm: i.imm });
                    }
                    if i.src != 0 || i.off != 0 {
                        return Err(VerifyError::Reserved { pc });
                    }
                }
                _ => return Err(bad()),
            }
        }
        JMP | JMP32 => {
            let op = i.code & 0xf0;
            let j32 = i.class() == JMP32;
            let x = i.code & X != 0;
            match op {
                JA => {
                    if x || i.src != 0 || i.dst != 0 {
                        return Err(VerifyError::Reserved { pc });
                    }
                    // JMP32 JA ("gotol", cpu v4) takes its offset from imm.
                    let rel = if j32 { i64::from(i.imm) } else { i64::from(i.off) };
                    if (!j32 && i.imm != 0) || (j32 && i.off != 0) {
                        return Err(VerifyError::Reserved { pc });
                    }
                    target(insns, second, pc, rel)?;
                }
                JEQ | JGT | JGE | JSET | JNE | JSGT | JSGE | JLT | JLE | JSLT | JSLE => {
                    if x && i.imm != 0 {
                        return Err(VerifyError::Reserved { pc });
                    }
                    target(insns, second, pc, i64::from(i.off))?;
                }
                CALL if !j32 && !x => {
                    if i.dst != 0 || i.off != 0 {
                        return Err(VerifyError::Reserved { pc });
                    }
                    match i.src {
                        0 => check_helper(pc, i.imm, prog)?,
                        PSEUDO_CALL => {
                            target(insns, second, pc, i64::from(i.imm))?;
                        }
                        _ => return Err(VerifyError::Reserved { pc }),
                    }
                }
                EXIT if !j32 && !x => {
                    if i.dst != 0 || i.src != 0 || i.off != 0 || i.imm != 0 {
                        return Err(VerifyError::Reserved { pc });
                    }
                }
                _ => return Err(bad()),
            }
        }
        LD => {
            if i.code == LD | IMM | DW {
                writes_dst(&i)?;
                if i.off != 0 {
                    return Err(VerifyError::Reserved { pc });
                }
                match i.src {
                    0 => {}
                    PSEUDO_MAP_FD | PSEUDO_MAP_VALUE => {
                        if i.imm < 0 || i.imm as usize >= nmaps {
                            return Err(VerifyError::BadMapRef { pc, map: i.imm, maps: nmaps });
                        }
                    }
                    _ => return Err(VerifyError::Reserved { pc }),
                }
            } else if matches!(i.code & 0xe0, ABS | IND) {
                return Err(VerifyError::LegacyLoad { pc, prog: prog.name() });
            } else {
                return Err(bad());
            }
        }
        LDX => {
            writes_dst(&i)?;
            let mode = i.code & 0xe0;
            let size = i.code & 0x18;
            if !(mode == MEM || (mode == MEMSX && size != DW)) || i.imm != 0 {
                return Err(bad());
            }
        }
        ST => {
            if i.code & 0xe0 != MEM || i.src != 0 {
                return Err(bad());
            }
        }
        STX => {
            let mode = i.code & 0xe0;
            let size = i.code & 0x18;
            if mode == MEM {
                if i.imm != 0 {
                    return Err(VerifyError::Reserved { pc });
                }
            } else if mode == ATOMIC && (size == W || size == DW) {
                let op = i.imm & !FETCH;
                let ok = matches!(op, 0x00 | 0x40 | 0x50 | 0xa0) || i.imm == XCHG || i.imm == CMPXCHG;
                if !ok {
                    return Err(bad());
                }
                // A fetching atomic writes its source register.
                if i.imm & FETCH != 0 && i.src == FP {
                    return Err(VerifyError::FramePointerWrite { pc });
                }
            } else {
                return Err(bad());
            }
        }
        _ => return Err(bad()),
    }
    Ok(())
}

fn check_helper(pc: usize, id: i32, prog: ProgType) -> Result<(), VerifyError> {
    let Some(name) = helper_name(id) else {
        return Err(VerifyError::UnknownHelper { pc, id });
    };
    if !kernel_allows(prog, id) {
        return Err(VerifyError::HelperNotAllowed { pc, id, name, prog: prog.name() });
    }
    if !provided(prog, id) {
        return Err(VerifyError::HelperNotProvided { pc, id, name });
    }
    Ok(())
}

/// The function a slot belongs to: the last start at or before it.
fn func_of(starts: &[usize], pc: usize) -> usize {
    match starts.binary_search(&pc) {
        Ok(i) => i,
        Err(i) => i.saturating_sub(1),
    }
}

/// No recursion and no nesting deeper than the kernel's frames: the call graph between
/// functions is a DAG whose longest path has at most `MAX_CALL_FRAMES` functions.
fn check_calls(insns: &[Insn], starts: &[usize]) -> Result<(), VerifyError> {
    let n = starts.len();
    let mut edges: Vec<Vec<(usize, usize)>> = vec![Vec::new(); n];
    for (pc, i) in insns.iter().enumerate() {
        if i.code == JMP | CALL && i.src == PSEUDO_CALL {
            let t = (pc as i64 + 1 + i64::from(i.imm)) as usize;
            let callee = starts.binary_search(&t).unwrap_or(0);
            edges[func_of(starts, pc)].push((callee, pc));
        }
    }
    // Depth-first with colours; depth[f] = frames of the deepest chain from f.
    let mut state = vec![0u8; n];
    let mut depth = vec![0usize; n];
    fn visit(
        f: usize,
        edges: &[Vec<(usize, usize)>],
        state: &mut [u8],
        depth: &mut [usize],
    ) -> Result<usize, VerifyError> {
        state[f] = 1;
        let mut d = 1;
        for &(c, pc) in &edges[f] {
            let cd = match state[c] {
                1 => return Err(VerifyError::Recursion { pc }),
                2 => depth[c],
                _ => visit(c, edges, state, depth)?,
            };
            if cd + 1 > MAX_CALL_FRAMES {
                return Err(VerifyError::CallTooDeep { pc });
            }
            d = d.max(cd + 1);
        }
        state[f] = 2;
        depth[f] = d;
        Ok(d)
    }
    visit(0, &edges, &mut state, &mut depth)?;
    Ok(())
}

/// The instructions control may go to after `pc` (a call returns to the next one).
fn successors(insns: &[Insn], pc: usize) -> [Option<usize>; 2] {
    let i = insns[pc];
    let rel = |r: i64| Some((pc as i64 + 1 + r) as usize);
    match (i.class(), i.code & 0xf0) {
        (JMP, EXIT) => [None, None],
        (JMP, JA) => [rel(i64::from(i.off)), None],
        (JMP32, JA) => [rel(i64::from(i.imm)), None],
        (JMP | JMP32, CALL) => [Some(pc + 1), None],
        (JMP | JMP32, _) => [Some(pc + 1), rel(i64::from(i.off))],
        _ if i.is_ld_imm64() => [Some(pc + 2), None],
        _ => [Some(pc + 1), None],
    }
}

/// Every function ends in EXIT or an unconditional jump (nothing falls into the next
/// function or off the end), and every slot is reachable from a function start.
fn check_flow(insns: &[Insn], second: &[bool], starts: &[usize]) -> Result<(), VerifyError> {
    for (k, &s) in starts.iter().enumerate() {
        let end = starts.get(k + 1).copied().unwrap_or(insns.len());
        let mut last = end.saturating_sub(1);
        if second[last] && last > s {
            last -= 1;
        }
        let i = insns[last];
        let ends = i.code == JMP | EXIT || i.code == JMP | JA || i.code == JMP32 | JA;
        if !ends {
            return Err(VerifyError::FallsOffEnd { pc: last });
        }
        // A jump may not leave its function.
        for pc in s..end {
            let i = insns[pc];
            if second[pc] || !matches!(i.class(), JMP | JMP32) {
                continue;
            }
            let op = i.code & 0xf0;
            if op == CALL || op == EXIT {
                continue;
            }
            let rel = if i.code == JMP32 | JA { i64::from(i.imm) } else { i64::from(i.off) };
            let t = (pc as i64 + 1 + rel) as usize;
            if t >= end {
                return Err(VerifyError::JumpOutOfRange { pc, target: t as i64 });
            }
        }
    }
    // Depth-first from every function start (the kernel's check_cfg): an edge to an
    // instruction still on the path is a loop.
    let mut state = vec![0u8; insns.len()];
    for &f in starts {
        if state[f] != 0 {
            continue;
        }
        state[f] = 1;
        let mut path: Vec<(usize, usize)> = vec![(f, 0)];
        while let Some(top) = path.last_mut() {
            let (pc, k) = *top;
            let succ = successors(insns, pc);
            match succ.get(k).copied().flatten() {
                Some(t) => {
                    top.1 += 1;
                    match state.get(t) {
                        Some(1) => return Err(VerifyError::BackEdge { pc, target: t }),
                        Some(0) => {
                            state[t] = 1;
                            path.push((t, 0));
                        }
                        _ => {}
                    }
                }
                None if k < succ.len() && succ[k].is_none() => top.1 += 1,
                None => {
                    state[pc] = 2;
                    path.pop();
                }
            }
        }
    }
    let seen: Vec<bool> =
        (0..insns.len()).map(|pc| state[pc] == 2 || (second[pc] && pc > 0 && state[pc - 1] == 2)).collect();
    match seen.iter().position(|s| !s) {
        Some(pc) => Err(VerifyError::Unreachable { pc }),
        None => Ok(()),
    }
}
