//! The IDS's alerts under `sr6 run` (docs/ids.md): workers hand each alert, with the
//! tables generation it was raised under, to a bounded queue ([`QUEUE`]) with
//! `try_send` — a full queue counts the alert lost, a worker never waits — and one
//! writer thread formats them, appends them as JSON lines to the alerts file of their
//! generation and keeps the most recent [`RING`] for `sr6 ctl ids alerts`.

use std::collections::VecDeque;
use std::io::Write;
use std::path::PathBuf;
use std::sync::mpsc::Receiver;
use std::sync::{Arc, Mutex};

use serde_json::Value;
use sr6_core::ids::alert::Alert;

use super::state::{lock, Generation};

/// Alerts the queue from the workers to the writer holds.
pub const QUEUE: usize = 4096;
/// Alerts `sr6 ctl ids alerts` can show.
pub const RING: usize = 1000;

/// An alert and the generation whose rules raised it.
pub type AlertMsg = (Arc<Generation>, Alert);

/// The most recent alerts, as JSON.
#[derive(Default)]
pub struct Recent {
    pub ring: Mutex<VecDeque<Value>>,
}

/// The writer: runs until every worker's sender is gone. `offset_ns` turns the
/// workers' monotonic timestamps into wall-clock time.
pub fn writer(rx: Receiver<AlertMsg>, recent: Arc<Recent>, offset_ns: u64) {
    let mut file: Option<(PathBuf, std::io::BufWriter<std::fs::File>)> = None;
    while let Ok((gen, mut a)) = rx.recv() {
        a.time_ns = a.time_ns.wrapping_add(offset_ns);
        let js = crate::ids_alerts::alert_json(&gen.tables, &a);
        let path = gen.tables.ids.as_ref().and_then(|i| i.spec.alerts.clone());
        if file.as_ref().map(|f| &f.0) != path.as_ref() {
            file = path.and_then(|p| match std::fs::OpenOptions::new().create(true).append(true).open(&p) {
                Ok(f) => Some((p, std::io::BufWriter::new(f))),
                Err(e) => {
                    eprintln!("sr6: IDS alerts file {}: {e}", p.display());
                    None
                }
            });
        }
        if let Some((_, f)) = file.as_mut() {
            let _ = writeln!(f, "{js}");
        }
        {
            let mut r = lock(&recent.ring);
            if r.len() >= RING {
                r.pop_front();
            }
            r.push_back(js);
        }
        if let Some((_, f)) = file.as_mut() {
            let _ = f.flush();
        }
    }
    if let Some((_, mut f)) = file {
        let _ = f.flush();
    }
}

/// `sr6 ctl ids alerts [-n N]`: the last `n` alerts, oldest first.
pub fn last(recent: &Recent, n: usize) -> Vec<Value> {
    let r = lock(&recent.ring);
    r.iter().skip(r.len().saturating_sub(n)).cloned().collect()
}

/// The IDS counters of the current tables, summed over the workers (a change of the
/// configuration that changes the IDS's rules or settings starts them at zero; other
/// changes keep them, see `worker::carry_unchanged`).
pub fn totals(shared: &super::state::Shared) -> sr6_core::ids::IdsCounters {
    let g = shared.gen.load();
    let mut sum = sr6_core::ids::IdsCounters::default();
    for w in &shared.workers {
        let s = lock(w);
        if s.gen.id == g.id {
            sum.merge(&s.counters.ids);
        }
    }
    sum
}
