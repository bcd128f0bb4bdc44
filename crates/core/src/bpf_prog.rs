//! A loaded eBPF program and what its runs share: End.BPF's SIDs
//! ([`crate::behaviour::end_bpf`]) and the LWT hooks of routes
//! ([`crate::pipeline::lwt_bpf`]) hold one each, behind an `Arc`, so that every worker and
//! every generation of the tables shares it: a table rebuild keeps a map's contents.
//!
//! One `Mutex` per program guards its maps, its scratch (stack, JIT map table) and its
//! `bpf_get_prandom_u32` state for the length of a run: simple and sound with several
//! workers (a program runs on one worker at a time; workers sending packets to the same
//! program take turns). Per-CPU maps are therefore one copy. The operator's map
//! commands (`sr6 ctl bpf map ...`) take the program's turn as a worker's run does.

use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use sr6_bpf::helpers::ProgType;
use sr6_bpf::maps::Map;
use sr6_bpf::{LoadError, Program, Scratch};

/// A loaded program with its maps.
pub struct BpfProg {
    program: Program,
    run: Mutex<Runner>,
}

/// What one run of a program takes for itself.
pub(crate) struct Runner {
    pub(crate) maps: Vec<Map>,
    pub(crate) scratch: Scratch,
    /// `bpf_get_prandom_u32`'s state, kept from one packet to the next.
    pub(crate) prandom: u32,
}

impl BpfProg {
    /// Loads section `section` of the object at `path` as a program of type `ty`, with
    /// its maps, as iproute2 does.
    pub fn load(path: &Path, section: &str, ty: ProgType) -> Result<Arc<BpfProg>, LoadError> {
        let o = sr6_bpf::load_object(path, section, ty)?;
        let runner = Runner { maps: o.maps, scratch: Scratch::default(), prandom: sr6_bpf::skb::PRANDOM_SEED };
        Ok(Arc::new(BpfProg { program: o.program, run: Mutex::new(runner) }))
    }

    /// The program as loaded: its section's name, type and eBPF instructions.
    pub fn program(&self) -> &Program {
        &self.program
    }

    /// A copy of the maps as they are now (names, definitions, contents).
    pub fn maps(&self) -> Vec<Map> {
        self.runner().maps.clone()
    }

    /// `f` on the maps themselves, between two runs of the program (`sr6 ctl bpf map
    /// update`: the operator's writes take the program's turn, as a worker's run does).
    pub fn with_maps<R>(&self, f: impl FnOnce(&mut [Map]) -> R) -> R {
        f(&mut self.runner().maps)
    }

    /// The program's turn: its maps, scratch and random state, for one run.
    pub(crate) fn runner(&self) -> MutexGuard<'_, Runner> {
        self.run.lock().unwrap_or_else(PoisonError::into_inner)
    }
}
