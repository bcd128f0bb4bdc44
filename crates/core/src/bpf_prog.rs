//! A loaded eBPF program and what its runs share: End.BPF's SIDs
//! ([`crate::behaviour::end_bpf`]) and the LWT hooks of routes
//! ([`crate::pipeline::lwt_bpf`]) hold one each, behind an `Arc`, so that every worker and
//! every generation of the tables shares it: a table rebuild keeps a map's contents.
//!
//! What a run needs, and who owns it:
//!
//! - **The scratch** (the stack frames, the JIT's map table) is the caller's: End.BPF's
//!   fast step runs on its worker's ([`crate::pipeline::Worker`]), everything else on
//!   its thread's, reused by every program it runs ([`Run`]): no lock is taken for it.
//! - **The maps** are the program's, behind one `Mutex`, held for the length of a run —
//!   taken only by programs that have maps: a program with none runs without a lock.
//!   Sound with several workers: a program with maps runs on one worker at a time, so
//!   per-CPU maps are one copy. The operator's map commands (`sr6 ctl bpf map ...`)
//!   take the maps' turn as a worker's run does.
//! - **A lean run first**: a program runs its compiled code alone on the packet's bytes
//!   ([`BpfProg::run_lean`]) until the first time it calls out of it (a helper, a map,
//!   a context field); then, and for that program from then on, in full.
//! - **The state of `bpf_get_prandom_u32`** is the program's, read before and written
//!   after a run without a lock (two workers running the same program at once may draw
//!   the same numbers, as two CPUs may in the kernel, whose state is per CPU).

use std::cell::RefCell;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use sr6_bpf::helpers::ProgType;
use sr6_bpf::maps::Map;
use sr6_bpf::{LoadError, Program, Scratch};

/// A loaded program with its maps.
pub struct BpfProg {
    program: Program,
    maps: Mutex<Vec<Map>>,
    /// Whether `maps` holds any (fixed at load: the lock is skipped when not).
    has_maps: bool,
    /// `bpf_get_prandom_u32`'s state, kept from one packet to the next.
    prandom: AtomicU32,
    /// Set once a lean run of the program called out of its compiled code: from then on
    /// it runs in full only ([`run_lean`](Self::run_lean)).
    calls_out: AtomicBool,
}

thread_local! {
    /// The thread's scratch for the programs it runs (allocated on its first run).
    static SCRATCH: RefCell<Option<Scratch>> = const { RefCell::new(None) };
}

/// What one run of a program works with: its maps (empty for a program without), the
/// thread's scratch, and the random state to start from and leave.
pub(crate) struct Run<'a> {
    pub(crate) maps: &'a mut [Map],
    pub(crate) scratch: &'a mut Scratch,
    pub(crate) prandom: u32,
}

impl BpfProg {
    /// Loads section `section` of the object at `path` as a program of type `ty`, with
    /// its maps, as iproute2 does.
    pub fn load(path: &Path, section: &str, ty: ProgType) -> Result<Arc<BpfProg>, LoadError> {
        let o = sr6_bpf::load_object(path, section, ty)?;
        Ok(Arc::new(BpfProg {
            program: o.program,
            has_maps: !o.maps.is_empty(),
            maps: Mutex::new(o.maps),
            prandom: AtomicU32::new(sr6_bpf::skb::PRANDOM_SEED),
            calls_out: AtomicBool::new(false),
        }))
    }

    /// The program as loaded: its section's name, type and eBPF instructions.
    pub fn program(&self) -> &Program {
        &self.program
    }

    /// A copy of the maps as they are now (names, definitions, contents).
    pub fn maps(&self) -> Vec<Map> {
        self.lock_maps().clone()
    }

    /// `f` on the maps themselves, between two runs of the program (`sr6 ctl bpf map
    /// update`: the operator's writes take the maps' turn, as a worker's run does).
    pub fn with_maps<R>(&self, f: impl FnOnce(&mut [Map]) -> R) -> R {
        f(&mut self.lock_maps())
    }

    fn lock_maps(&self) -> MutexGuard<'_, Vec<Map>> {
        self.maps.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// `f`, one run of the program: its maps (locked only if it has any), the thread's
    /// scratch and the random state; `f` returns what it leaves of the random state with
    /// its result.
    #[inline(always)]
    pub(crate) fn run<R>(&self, f: impl FnOnce(&mut Run<'_>) -> R) -> R {
        SCRATCH.with(|cell| match cell.try_borrow_mut() {
            Ok(mut slot) => {
                let scratch = slot.get_or_insert_with(Scratch::default);
                self.run_in(scratch, f)
            }
            // A run inside a run on this thread (none does so today): scratch of its own.
            Err(_) => self.run_in(&mut Scratch::default(), f),
        })
    }

    /// Whether [`run_lean`](Self::run_lean) may be tried: the program has not been seen
    /// to call out.
    #[inline(always)]
    pub(crate) fn may_run_lean(&self) -> bool {
        !self.calls_out.load(Ordering::Relaxed)
    }

    /// A lean run of the program on the packet bytes `pkt` ([`sr6_bpf::vm::run_lean`]:
    /// its compiled code alone, no packet view, no maps, no lock; on the caller's scratch, else
    /// the thread's), for a program not yet
    /// seen to call out of its code: `None` if it does (it has then changed nothing, and
    /// the caller runs it in full), and from then on for every packet — a program that
    /// needs its helpers, its maps or the context pays for one wasted start, once. With
    /// the interpreter only (`SR6_BPF_JIT=0`), always `None`.
    #[inline(always)]
    pub(crate) fn run_lean(&self, scratch: Option<&mut Scratch>, pkt: &[u8]) -> Option<Result<u64, sr6_bpf::Fault>> {
        if self.calls_out.load(Ordering::Relaxed) {
            return None;
        }
        let opts = sr6_bpf::RunOpts::default();
        let r = match scratch {
            Some(s) => sr6_bpf::vm::run_lean(s, &self.program, pkt, opts),
            None => SCRATCH.with(|cell| {
                let mut slot = cell.try_borrow_mut().ok()?;
                sr6_bpf::vm::run_lean(slot.get_or_insert_with(Scratch::default), &self.program, pkt, opts)
            }),
        };
        if r.is_none() {
            self.calls_out.store(true, Ordering::Relaxed);
        }
        r
    }

    /// [`run`](Self::run) on the caller's scratch (a worker's own, which saves the
    /// look-up of the thread's).
    #[inline(always)]
    pub(crate) fn run_in<R>(&self, scratch: &mut Scratch, f: impl FnOnce(&mut Run<'_>) -> R) -> R {
        let prandom = self.prandom.load(Ordering::Relaxed);
        let (res, prandom) = if self.has_maps {
            let mut maps = self.lock_maps();
            let mut run = Run { maps: &mut maps, scratch, prandom };
            (f(&mut run), run.prandom)
        } else {
            let mut run = Run { maps: &mut [], scratch, prandom };
            (f(&mut run), run.prandom)
        };
        self.prandom.store(prandom, Ordering::Relaxed);
        res
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_inside_a_run_gets_scratch_of_its_own() {
        let p = BpfProg {
            program: Program::new("t", ProgType::LwtSeg6local, Vec::new()),
            maps: Mutex::new(Vec::new()),
            has_maps: false,
            prandom: AtomicU32::new(7),
            calls_out: AtomicBool::new(false),
        };
        let inner = p.run(|outer| {
            outer.prandom = 9;
            p.run(|inner| inner.prandom)
        });
        assert_eq!(inner, 7, "the inner run starts from the state before the outer one ends");
        assert_eq!(p.prandom.load(Ordering::Relaxed), 9, "the outer run's state is kept");
    }
}
