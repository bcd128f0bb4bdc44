//! The fast generator: XDP live frames (`crate::bpf::LiveFrames`), paced and stamped
//! by an XDP program inside the kernel, on the calling thread.
//!
//! Per packet nothing crosses the user/kernel boundary: the kernel runs the program in
//! a loop, and each run either transmits a frame out of tg0 with the driver's XDP
//! transmit (the stream's template, with its sequence number, a `CLOCK_MONOTONIC`
//! timestamp and its UDP checksum patched in) or, when the next packet is not due,
//! recycles the frame. The telemetry block and checksum are exactly those of
//! [`super::gen`], so the receiver cannot tell the two generators apart.
//!
//! The differences from the AF_XDP generator, in the [`GenReport`]:
//! * there is no transmit ring, so `ring_full` is 0; a frame the peer device cannot
//!   take (its receive ring full — on veth the SUT's) is the SUT's loss, as on a NIC;
//! * the schedule is never caught up with a burst: a generator behind it (between two
//!   system calls, some tens of microseconds every [`crate::bpf::SLICE`], or
//!   preempted by the receiver) sends at up to [`crate::bpf::CATCH_UP`] times the
//!   rate until it is back on time; more than [`MAX_LAG`] behind, the slots it missed
//!   are given up and counted (`late`), as the socket generator does, so that a trial
//!   that could not offer its rate says so.
//!
//! Capacity: 6.3-6.7 Mpps unpaced on this project's 2-core VM (78-byte frames, the
//! peer veth's NAPI thread on the other CPU); see `docs/perf.md`.

use std::time::Duration;

use crate::bpf::{LiveFrames, LiveTemplate};
use sr6_io::live::{pin_to_cpu, PortStats};

use super::gen::GenReport;
use super::telemetry::{SEQ_OFFSET, TELEMETRY_LEN};
use super::template::Template;
use super::{Source, TrafficError};

/// The longest a packet may be late before its slot is given up. The generator shares
/// its CPU with the receiver and the tester's kernel; it catches up with what they take
/// (a little faster than the rate), so that a trial offers its rate on average.
pub const MAX_LAG: Duration = Duration::from_millis(5);

/// Set (to anything) in the environment, each run prints its counters to stderr: how
/// many slots were sent and given up, when the first was given up, and how long the
/// kernel's loop was held up between two runs of the program (see `docs/perf.md`).
pub const TRACE_ENV: &str = "SR6_GEN_TRACE";

/// One line of [`TRACE_ENV`] output.
fn trace_line(offered_pps: f64, r: &crate::bpf::LiveRun) -> String {
    let ms = |ns: u64| ns as f64 / 1e6;
    format!(
        "sr6 live frames: rate {offered_pps:.0} pps, slots {}, sent {}, late {}, first late at {:.2} ms, last sent at {:.2} ms, \
         runs {}, calls {}, stalled {:.2} ms (longest {:.3} ms)",
        r.slots,
        r.sent,
        r.late,
        ms(r.first_late_ns),
        ms(r.last_sent_ns),
        r.iterations,
        r.calls,
        ms(r.stalled_ns),
        ms(r.max_stall_ns),
    )
}

/// Sends templates out of a device with XDP live frames. See the module docs.
#[derive(Debug)]
pub struct LiveGenerator {
    frames: LiveFrames,
    ids: Vec<u16>,
    cpu: Option<usize>,
}

impl LiveGenerator {
    /// Loads and attaches the generator's XDP program to `ifname` (in the caller's
    /// network namespace) for `templates` (one stream each, ids distinct, one frame
    /// length), to run pinned to `cpu`.
    pub fn new(ifname: &str, templates: &[Template], cpu: Option<usize>) -> Result<LiveGenerator, TrafficError> {
        let mut ids: Vec<u16> = Vec::with_capacity(templates.len());
        let mut lt = Vec::with_capacity(templates.len());
        for t in templates {
            if ids.contains(&t.stream) {
                return Err(TrafficError::Template(format!("stream {} appears twice", t.stream)));
            }
            ids.push(t.stream);
            let seq_at = t
                .frame
                .len()
                .checked_sub(TELEMETRY_LEN)
                .ok_or_else(|| TrafficError::Template("frame shorter than its telemetry".into()))?
                + SEQ_OFFSET;
            lt.push(LiveTemplate { frame: t.frame.clone(), seq_at, csum_at: t.udp_csum_at });
        }
        let frames = LiveFrames::new(ifname, &lt)
            .map_err(|e| TrafficError::Port(format!("XDP live frames on {ifname}: {e}")))?;
        Ok(LiveGenerator { frames, ids, cpu })
    }
}

impl Source for LiveGenerator {
    fn streams(&self) -> Vec<u16> {
        self.ids.clone()
    }

    fn describe(&self) -> String {
        format!("XDP live frames out of {}", self.frames.ifname())
    }

    fn run(&mut self, offered_pps: f64, duration: Duration) -> GenReport {
        let mut first_error = None;
        if let Some(cpu) = self.cpu {
            if let Err(e) = pin_to_cpu(cpu) {
                first_error = Some(format!("cannot pin the generator to CPU {cpu}: {e}"));
            }
        }
        let empty = |first_error| GenReport {
            offered_pps,
            duration_s: duration.as_secs_f64(),
            slots: 0,
            sent: 0,
            ring_full: 0,
            late: 0,
            tx_errors: 1,
            first_error,
            start_ns: 0,
            end_ns: 0,
            per_stream: self.ids.iter().map(|&id| (id, 0)).collect(),
            port: PortStats::default(),
        };
        match self.frames.run(offered_pps, duration, MAX_LAG) {
            Ok(r) => {
                if std::env::var_os(TRACE_ENV).is_some() {
                    eprintln!("{}", trace_line(offered_pps, &r));
                }
                GenReport {
                    offered_pps,
                    duration_s: duration.as_secs_f64(),
                    slots: r.slots,
                    sent: r.sent,
                    ring_full: 0,
                    late: r.late,
                    tx_errors: 0,
                    first_error,
                    start_ns: r.start_ns,
                    end_ns: r.end_ns,
                    per_stream: self.ids.iter().copied().zip(r.per_stream).collect(),
                    port: PortStats { tx: r.sent, ..PortStats::default() },
                }
            }
            Err(e) => empty(Some(first_error.map_or(e.to_string(), |f| format!("{f}; {e}")))),
        }
    }
}
