//! The x86-64 JIT: a verified program compiled to machine code when it is loaded
//! ([`Jit::compile`]), run by [`crate::vm::run_with`] in place of the interpreter.
//!
//! The code keeps the interpreter's semantics by construction: registers hold the same
//! tagged addresses, ALU and jumps are one or a few host instructions each, and whatever
//! is not inline (context and map accesses, anything out of bounds, atomics, helpers) is
//! the interpreter's own code ([`runtime::step`]). A program the compiler does not take
//! (see [`compile`]) is interpreted. Only on x86-64 Unix; elsewhere every program is
//! interpreted. `SR6_BPF_JIT=0` in the environment turns the JIT off at load time.

#[cfg(all(target_arch = "x86_64", unix))]
mod compile;
#[cfg(all(target_arch = "x86_64", unix))]
mod emit;
#[cfg(all(target_arch = "x86_64", unix))]
mod mem;
#[cfg(all(target_arch = "x86_64", unix))]
mod runtime;

use crate::helpers::ProgType;
use crate::insn::Insn;
use crate::maps::Map;
use crate::skb::Skb;
use crate::vm::{Fault, Program, Scratch};
use std::sync::Arc;

/// A program's machine code (shared by the clones of its [`Program`]).
#[cfg_attr(not(all(target_arch = "x86_64", unix)), allow(dead_code))]
struct Code {
    #[cfg(all(target_arch = "x86_64", unix))]
    mem: mem::ExecMem,
    /// What it was compiled from: `run` checks the program still matches, and calls out
    /// run these instructions.
    insns: Vec<Insn>,
    prog_type: ProgType,
}

/// The compiled form of a program, if any.
#[derive(Clone, Default)]
pub struct Jit(Option<Arc<Code>>);

impl std::fmt::Debug for Jit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.code_len() {
            Some(n) => write!(f, "Jit({n} bytes of x86-64)"),
            None => f.write_str("Jit(none)"),
        }
    }
}

impl Jit {
    /// Compiles `insns` (already verified); `Jit::none()` when the compiler does not take
    /// them, the platform is not x86-64 Unix, or `SR6_BPF_JIT=0`.
    pub fn compile(insns: &[Insn], prog_type: ProgType) -> Jit {
        if std::env::var_os("SR6_BPF_JIT").is_some_and(|v| v == "0") {
            return Jit::none();
        }
        Self::compile_always(insns, prog_type)
    }

    #[cfg(all(target_arch = "x86_64", unix))]
    fn compile_always(insns: &[Insn], prog_type: ProgType) -> Jit {
        let Some(code) = compile::compile(insns) else { return Jit::none() };
        match mem::ExecMem::new(&code) {
            Some(mem) => Jit(Some(Arc::new(Code { mem, insns: insns.to_vec(), prog_type }))),
            None => Jit::none(),
        }
    }

    #[cfg(not(all(target_arch = "x86_64", unix)))]
    fn compile_always(_insns: &[Insn], _prog_type: ProgType) -> Jit {
        Jit::none()
    }

    /// No machine code: the program is interpreted.
    pub fn none() -> Jit {
        Jit(None)
    }

    /// Bytes of machine code, or `None` when the program is interpreted.
    pub fn code_len(&self) -> Option<usize> {
        #[cfg(all(target_arch = "x86_64", unix))]
        return self.0.as_ref().map(|c| c.mem.len());
        #[cfg(not(all(target_arch = "x86_64", unix)))]
        None
    }

    /// The machine code, if it was compiled from `prog`'s instructions (the fields are
    /// public: a program changed since is interpreted).
    #[inline(always)]
    fn code_for(&self, prog: &Program) -> Option<&Code> {
        let code = self.0.as_deref()?;
        (code.prog_type == prog.prog_type && code.insns.len() == prog.insns.len()).then_some(code)
    }

    /// A lean run of the machine code on the packet bytes `pkt` alone (`runtime::run_lean`):
    /// `None` when there is no code for `prog` or the program called out.
    #[inline(always)]
    pub(crate) fn run_lean(
        &self,
        scratch: &mut Scratch,
        prog: &Program,
        pkt: &[u8],
        budget: u64,
    ) -> Option<Result<u64, Fault>> {
        let code = self.code_for(prog)?;
        #[cfg(all(target_arch = "x86_64", unix))]
        return runtime::run_lean(&code.mem, scratch, prog, pkt, budget);
        #[cfg(not(all(target_arch = "x86_64", unix)))]
        {
            let _ = (scratch, pkt, budget);
            None
        }
    }

    /// Runs the machine code on `prog`, or `None` when there is none for it (then the
    /// caller interprets).
    pub(crate) fn run(
        &self,
        scratch: &mut Scratch,
        prog: &Program,
        maps: &mut [Map],
        skb: &mut dyn Skb,
        budget: u64,
    ) -> Option<Result<u64, Fault>> {
        let code = self.code_for(prog)?;
        #[cfg(all(target_arch = "x86_64", unix))]
        return Some(runtime::run(&code.mem, &code.insns, scratch, prog, maps, skb, budget));
        #[cfg(not(all(target_arch = "x86_64", unix)))]
        {
            let _ = (scratch, maps, skb, budget);
            None
        }
    }
}
