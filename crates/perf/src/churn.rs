//! Route churn during the trials (`route_churn_per_s`, `sr6 perf run --route-churn N`):
//! the FIB-scale question of whether a forwarder keeps its rate while a routing daemon
//! changes its table. A thread sends the forwarder a batch of route changes every
//! [`PERIOD`] — blackhole /64s under 2001:db8:c4::/48 (a documentation prefix no trial
//! sends to) added by one batch and withdrawn by the next — through the forwarder's own
//! interface ([`Forwarder::churn_command`]: `sr6 ctl batch -`, `ip -batch -` in the
//! SUT's namespace), for as long as the behaviour's trials run; what it achieved goes
//! into the run's notes. The thread is not pinned: it competes for the testbed's two
//! CPUs as a routing daemon would.

use std::io::Write;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::driver::Forwarder;
use crate::testbed::Testbed;

/// How often a batch is sent.
pub const PERIOD: Duration = Duration::from_millis(100);

/// A running churn; [`Churn::stop`] ends it and says what it did.
pub struct Churn {
    stop: Arc<AtomicBool>,
    thread: JoinHandle<Result<(u64, Duration), String>>,
    per_s: u32,
}

/// Batch `i` of `n` changes: the adds of /64s number `i/2 * n ..` (even `i`), or the
/// withdrawals of the ones the batch before added (odd `i`).
pub fn batch(i: u64, n: u32) -> String {
    let mut s = String::new();
    for j in 0..u64::from(n) {
        let k = (i / 2 * u64::from(n) + j) % 0x1_0000;
        let p = format!("2001:db8:c4:{k:x}::/64");
        if i.is_multiple_of(2) {
            s += &format!("route add blackhole {p}\n");
        } else {
            s += &format!("route del {p}\n");
        }
    }
    s
}

impl Churn {
    /// Starts sending `per_s` route changes a second to `fwd` on `tb`.
    pub fn start(fwd: &dyn Forwarder, tb: &Testbed, per_s: u32) -> Result<Churn, String> {
        let cmd = fwd.churn_command(tb)?;
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let n = (u64::from(per_s) * PERIOD.as_millis() as u64 / 1000).max(1) as u32;
        let thread = std::thread::spawn(move || {
            let t0 = Instant::now();
            let mut sent = 0u64;
            let mut i = 0u64;
            // An even number of batches leaves the table as it was.
            while !flag.load(Ordering::Relaxed) || !i.is_multiple_of(2) {
                let due = t0 + PERIOD * (i as u32);
                if let Some(wait) = due.checked_duration_since(Instant::now()) {
                    std::thread::sleep(wait);
                }
                let mut c = std::process::Command::new(&cmd[0]);
                c.args(&cmd[1..]).stdin(Stdio::piped()).stdout(Stdio::null()).stderr(Stdio::piped());
                let mut child = c.spawn().map_err(|e| format!("route churn: {}: {e}", cmd[0]))?;
                if let Some(mut stdin) = child.stdin.take() {
                    stdin.write_all(batch(i, n).as_bytes()).map_err(|e| format!("route churn: {e}"))?;
                }
                let out = child.wait_with_output().map_err(|e| format!("route churn: {e}"))?;
                if !out.status.success() {
                    return Err(format!(
                        "route churn: `{}` failed on batch {i}: {}",
                        cmd.join(" "),
                        String::from_utf8_lossy(&out.stderr).trim()
                    ));
                }
                sent += u64::from(n);
                i += 1;
            }
            Ok((sent, t0.elapsed()))
        });
        Ok(Churn { stop, thread, per_s })
    }

    /// Stops the churn (after the batch that withdraws the last one's routes); the note
    /// for the run: the rate asked for and the rate achieved.
    pub fn stop(self) -> Result<String, String> {
        self.stop.store(true, Ordering::Relaxed);
        let (sent, took) = self.thread.join().map_err(|_| "route churn: the thread panicked".to_string())??;
        let rate = sent as f64 / took.as_secs_f64().max(1e-9);
        Ok(format!(
            "route churn: {} changes/s asked, {rate:.0} achieved ({sent} changes in {:.1} s)",
            self.per_s,
            took.as_secs_f64()
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_add_then_withdraw_the_same_routes() {
        let add = batch(4, 3);
        let del = batch(5, 3);
        assert_eq!(add.lines().count(), 3);
        assert!(add.starts_with("route add blackhole 2001:db8:c4:6::/64\n"), "{add}");
        let added: Vec<&str> = add.lines().map(|l| l.rsplit(' ').next().unwrap()).collect();
        let gone: Vec<&str> = del.lines().map(|l| l.strip_prefix("route del ").unwrap()).collect();
        assert_eq!(added, gone);
    }
}
