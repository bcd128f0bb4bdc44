//! What compiled code runs against: the [`Env`] it gets in a register (the registers'
//! home when it calls out, the packet's, the stack's and the maps' addresses and lengths,
//! the current frame, the call depth, the budget left) and [`step`], the one function it
//! calls: the interpreter's own code for a load, store, atomic or helper call it does not
//! do inline ([`StepCx`]). Two ways in: [`run`], a full run with the step's context, and
//! [`run_lean`], the code alone on the packet's bytes, which its first call out ends.

use super::mem::ExecMem;
use crate::insn::{Insn, CALL, JMP, NREGS};
use crate::maps::Map;
use crate::skb::Skb;
use crate::vm::{ctx_addr, stack_top, Fault, Program, Scratch, Vm, STACK_SIZE};

/// Status codes the compiled code returns.
pub(crate) const DONE: u64 = 0;
pub(crate) const FAULTED: u64 = 1;
pub(crate) const TOO_DEEP: u64 = 2;
pub(crate) const BUDGET: u64 = 3;
/// A lean run ([`run_lean`]) reached a call out, which it cannot serve.
pub(crate) const CALLED_OUT: u64 = 4;

/// The state of a run shared with the compiled code, which reads and writes the
/// `repr(C)` fields before `cx` at fixed offsets (`offset_of!`).
#[repr(C)]
pub(crate) struct Env<'e, 'a> {
    /// r0..r10 when the code calls out (r10 always: the code keeps it here only).
    pub regs: [u64; NREGS],
    /// The instruction a call out is for (or a fault is at).
    pub pc: u64,
    /// The packet for loads: `skb.data()`.
    pub pkt_ptr: u64,
    pub pkt_len: u64,
    /// The packet for stores: `skb.data_mut()` when the program type may write it (same
    /// memory as `pkt_ptr`), else length 0 (every store goes through `step`, which refuses).
    pub pkt_wlen: u64,
    /// Host address of the top of the current frame (byte 512 of it).
    pub frame_host: u64,
    /// Host address of frame 0 (the frames follow each other).
    pub stack_base: u64,
    /// Host address of `map_tab` and its length (the number of maps).
    pub map_tab_ptr: u64,
    pub nmaps: u64,
    /// BPF-to-BPF call depth (0: the main function).
    pub depth: u64,
    /// Instructions left in the budget (charged per function entered).
    pub left: u64,
    /// The host stack pointer of the main function's body, restored on a fault.
    pub saved_rsp: u64,
    /// What a call out works with; `None` in a lean run, which a call out ends.
    pub cx: Option<&'e mut StepCx<'a>>,
}

/// The interpreter's side of a run, for [`step`].
pub(crate) struct StepCx<'a> {
    pub vm: Vm<'a>,
    /// The compiled program's own instructions (what `step` executes).
    pub insns: &'a [Insn],
    /// Per map: its values' host address, the length loads may read (0: no values), the
    /// length stores may write (0 when read-only).
    pub map_tab: &'a mut [[u64; 3]],
    pub fault: Option<Fault>,
}

impl Env<'_, '_> {
    /// Re-reads what may have moved: the packet (a helper may have resized it), the maps'
    /// values (an update may move a hash map's) and the stack's address (reborrowed, so
    /// the code's pointers derive from the latest borrows).
    fn refresh(&mut self) {
        let Some(cx) = self.cx.as_deref_mut() else { return };
        let data = cx.vm.skb.data();
        let (rptr, rlen) = (data.as_ptr(), data.len());
        self.pkt_ptr = rptr as u64;
        self.pkt_len = rlen as u64;
        self.pkt_wlen = 0;
        if cx.vm.prog.prog_type.packet_writable() {
            if let Some(w) = cx.vm.skb.data_mut() {
                if w.as_ptr() == rptr && w.len() == rlen {
                    self.pkt_ptr = w.as_mut_ptr() as u64;
                    self.pkt_wlen = rlen as u64;
                }
            }
        }
        let top = (self.depth as usize + 1) * STACK_SIZE;
        let base = cx.vm.stack.as_mut_ptr();
        self.stack_base = base as u64;
        self.frame_host = base.wrapping_add(top) as u64;
        for (m, e) in cx.vm.maps.iter_mut().zip(cx.map_tab.iter_mut()) {
            let ro = m.read_only;
            let v = m.storage_mut();
            *e = [v.as_mut_ptr() as u64, v.len() as u64, if ro { 0 } else { v.len() as u64 }];
        }
        self.map_tab_ptr = cx.map_tab.as_mut_ptr() as u64;
        self.nmaps = cx.map_tab.len() as u64;
    }
}

/// The compiled code's entry: `fn(env) -> status`, System V ABI.
type Entry = unsafe extern "sysv64" fn(*mut Env<'_, '_>) -> u64;

/// One instruction the code does not do itself: the interpreter's [`Vm::mem`] or
/// [`Vm::helper`] on the registers in `env.regs`. Returns [`DONE`] or [`FAULTED`] (the
/// fault in the step context), or [`CALLED_OUT`] in a lean run.
///
/// # Safety
/// `env` is the `Env` that [`run`] or [`run_lean`] passed to the code, which is
/// suspended in this call.
pub(crate) unsafe extern "sysv64" fn step(env: *mut Env<'_, '_>) -> u64 {
    // SAFETY: `run` made `env` from a `&mut Env` it does not touch while the code runs,
    // and the code calls this with that pointer in rdi.
    let env = unsafe { &mut *env };
    let pc = env.pc as usize;
    let Some(cx) = env.cx.as_deref_mut() else { return CALLED_OUT };
    let res = match cx.insns.get(pc) {
        Some(&i) => {
            cx.vm.pc = pc;
            if i.code == JMP | CALL {
                cx.vm.helper(i, &mut env.regs)
            } else {
                cx.vm.mem(i, &mut env.regs)
            }
        }
        None => Err(Fault::PcOutOfRange(pc)),
    };
    let res = match res {
        Ok(()) => DONE,
        Err(f) => {
            cx.fault = Some(f);
            FAULTED
        }
    };
    env.refresh();
    res
}

/// Runs compiled code: the same contract as [`crate::vm::run_with`].
pub(crate) fn run(
    code: &ExecMem,
    insns: &[Insn],
    scratch: &mut Scratch,
    prog: &Program,
    maps: &mut [Map],
    skb: &mut dyn Skb,
    budget: u64,
) -> Result<u64, Fault> {
    let (stack, map_tab) = scratch.jit_parts(maps.len());
    prog.clear_stack(&mut stack[..]);
    let mut cx = StepCx { vm: Vm { prog, maps, skb, stack, pc: 0 }, insns, map_tab, fault: None };
    let mut env = entry_env(budget, Some(&mut cx));
    env.refresh();
    let status = enter(code, &mut env);
    let regs0 = env.regs[0];
    match status {
        DONE => Ok(regs0),
        TOO_DEEP => Err(Fault::CallTooDeep { pc: env.pc as usize }),
        BUDGET => Err(Fault::Budget(budget)),
        _ => {
            let pc = env.pc as usize;
            Err(cx.fault.take().unwrap_or(Fault::PcOutOfRange(pc)))
        }
    }
}

/// The `Env` a run starts with: r1 the context, r10 the top of frame 0, the budget; what
/// the packet, stack and maps are is the caller's to fill in.
#[inline(always)]
fn entry_env<'e, 'a>(budget: u64, cx: Option<&'e mut StepCx<'a>>) -> Env<'e, 'a> {
    let mut regs = [0u64; NREGS];
    regs[1] = ctx_addr();
    regs[10] = stack_top(0);
    Env {
        regs,
        pc: 0,
        pkt_ptr: 0,
        pkt_len: 0,
        pkt_wlen: 0,
        frame_host: 0,
        stack_base: 0,
        map_tab_ptr: 0,
        nmaps: 0,
        depth: 0,
        left: budget,
        saved_rsp: 0,
        cx,
    }
}

/// Calls the code with `env`.
#[inline(always)]
fn enter(code: &ExecMem, env: &mut Env<'_, '_>) -> u64 {
    // SAFETY: `code` is machine code the compiler made for the program's instructions
    // (compile.rs): it keeps the System V ABI's callee-saved registers, touches memory
    // only through `env`'s fields, the stack frames (r10-relative: checked against the
    // frame's bounds at compile time; other addresses: against the frame tags and 512
    // bytes at run time), the packet (against `pkt_len`/`pkt_wlen` at run time) and the
    // maps' values (against `map_tab`'s lengths at run time), and calls only `step`. It
    // ends after a bounded number of instructions: no loops, each function's length
    // charged to the budget when entered, calls at most FRAMES deep.
    unsafe {
        let entry: Entry = std::mem::transmute::<*const u8, Entry>(code.as_ptr());
        entry(env)
    }
}

/// A lean run of compiled code for a program without maps, on the packet `pkt` (read
/// only): no step context, so the first call out (a helper, a context field the code
/// does not read itself, any access it cannot check inline) ends the run, `None`.
/// Before its first call out a program without maps has changed nothing outside its
/// registers and stack (it cannot write the packet or a map inline), so the caller may
/// run it again in full ([`run`]) with the same outcome as if it had from the start.
/// Otherwise what [`run`] would return.
#[inline(always)]
pub(crate) fn run_lean(
    code: &ExecMem,
    scratch: &mut Scratch,
    prog: &Program,
    pkt: &[u8],
    budget: u64,
) -> Option<Result<u64, Fault>> {
    let stack = scratch.stack_mut();
    prog.clear_stack(&mut stack[..]);
    let base = stack.as_mut_ptr();
    let mut env = entry_env(budget, None);
    env.pkt_ptr = pkt.as_ptr() as u64;
    env.pkt_len = pkt.len() as u64;
    env.stack_base = base as u64;
    env.frame_host = base.wrapping_add(STACK_SIZE) as u64;
    match enter(code, &mut env) {
        DONE => Some(Ok(env.regs[0])),
        TOO_DEEP => Some(Err(Fault::CallTooDeep { pc: env.pc as usize })),
        BUDGET => Some(Err(Fault::Budget(budget))),
        _ => None,
    }
}
