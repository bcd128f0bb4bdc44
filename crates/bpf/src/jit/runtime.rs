//! What compiled code runs against: the [`Env`] it gets in a register (the registers'
//! home when it calls out, the packet's, the stack's and the maps' addresses and lengths,
//! the current frame, the call depth, the budget left) and [`step`], the one function it calls: the interpreter's own
//! code for a load, store, atomic or helper call it does not do inline.

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

/// The state of a run shared with the compiled code, which reads and writes the
/// `repr(C)` fields before `vm` at fixed offsets (`offset_of!`).
#[repr(C)]
pub(crate) struct Env<'a> {
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
    pub vm: Vm<'a>,
    /// The compiled program's own instructions (what `step` executes).
    pub insns: &'a [Insn],
    /// Per map: its values' host address, the length loads may read (0: no values), the
    /// length stores may write (0 when read-only).
    pub map_tab: &'a mut [[u64; 3]],
    pub fault: Option<Fault>,
}

impl Env<'_> {
    /// Re-reads what may have moved: the packet (a helper may have resized it), the maps'
    /// values (an update may move a hash map's) and the stack's address (reborrowed, so
    /// the code's pointers derive from the latest borrows).
    fn refresh(&mut self) {
        let data = self.vm.skb.data();
        let (rptr, rlen) = (data.as_ptr(), data.len());
        self.pkt_ptr = rptr as u64;
        self.pkt_len = rlen as u64;
        self.pkt_wlen = 0;
        if self.vm.prog.prog_type.packet_writable() {
            if let Some(w) = self.vm.skb.data_mut() {
                if w.as_ptr() == rptr && w.len() == rlen {
                    self.pkt_ptr = w.as_mut_ptr() as u64;
                    self.pkt_wlen = rlen as u64;
                }
            }
        }
        let top = (self.depth as usize + 1) * STACK_SIZE;
        let base = self.vm.stack.as_mut_ptr();
        self.stack_base = base as u64;
        self.frame_host = base.wrapping_add(top) as u64;
        for (m, e) in self.vm.maps.iter_mut().zip(self.map_tab.iter_mut()) {
            let ro = m.read_only;
            let v = m.storage_mut();
            *e = [v.as_mut_ptr() as u64, v.len() as u64, if ro { 0 } else { v.len() as u64 }];
        }
        self.map_tab_ptr = self.map_tab.as_mut_ptr() as u64;
        self.nmaps = self.map_tab.len() as u64;
    }
}

/// The compiled code's entry: `fn(env) -> status`, System V ABI.
type Entry = unsafe extern "sysv64" fn(*mut Env<'_>) -> u64;

/// One instruction the code does not do itself: the interpreter's [`Vm::mem`] or
/// [`Vm::helper`] on the registers in `env.regs`. Returns [`DONE`] or [`FAULTED`] (the
/// fault in `env.fault`).
///
/// # Safety
/// `env` is the `Env` that [`run`] passed to the code, which is suspended in this call.
pub(crate) unsafe extern "sysv64" fn step(env: *mut Env<'_>) -> u64 {
    // SAFETY: `run` made `env` from a `&mut Env` it does not touch while the code runs,
    // and the code calls this with that pointer in rdi.
    let env = unsafe { &mut *env };
    let pc = env.pc as usize;
    let res = match env.insns.get(pc) {
        Some(&i) => {
            env.vm.pc = pc;
            if i.code == JMP | CALL {
                env.vm.helper(i, &mut env.regs)
            } else {
                env.vm.mem(i, &mut env.regs)
            }
        }
        None => Err(Fault::PcOutOfRange(pc)),
    };
    env.refresh();
    match res {
        Ok(()) => DONE,
        Err(f) => {
            env.fault = Some(f);
            FAULTED
        }
    }
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
    let mut regs = [0u64; NREGS];
    regs[1] = ctx_addr();
    regs[10] = stack_top(0);
    let mut env = Env {
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
        vm: Vm { prog, maps, skb, stack, pc: 0 },
        insns,
        map_tab,
        fault: None,
    };
    env.refresh();
    // SAFETY: `code` is machine code the compiler made for `insns` (compile.rs): it keeps
    // the System V ABI's callee-saved registers, touches memory only through `env`'s
    // fields, the stack frames (r10-relative: checked against the frame's bounds at
    // compile time; other addresses: against the frame tags and 512 bytes at run time),
    // the packet (against `pkt_len`/`pkt_wlen` at run time) and the maps' values
    // (against `map_tab`'s lengths at run time), and calls only `step`. It ends after a
    // bounded number of instructions: no loops, each function's length charged to the
    // budget when entered, calls at most FRAMES deep.
    let status = unsafe {
        let entry: Entry = std::mem::transmute::<*const u8, Entry>(code.as_ptr());
        entry(&mut env)
    };
    match status {
        DONE => Ok(env.regs[0]),
        TOO_DEEP => Err(Fault::CallTooDeep { pc: env.pc as usize }),
        BUDGET => Err(Fault::Budget(budget)),
        _ => Err(env.fault.take().unwrap_or(Fault::PcOutOfRange(env.pc as usize))),
    }
}
