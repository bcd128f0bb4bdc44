//! Pacing: when to send how many packets, against `CLOCK_MONOTONIC`.
//!
//! A trial at `R` packets/s for `D` seconds has `round(R × D)` **slots**; slot `k` is
//! due at `t0 + k / R`. The [`Pacer`] is a token bucket counted in slots: asked at time
//! `now`, it releases every slot due by then (at most one batch at a time), and says
//! how long to wait when none is. The generator busy-waits short waits (no sleep
//! granularity in the way) and sleeps only for long ones, so pacing is exact on
//! average and bursty only at batch scale: a batch goes out when its first slot is due,
//! at a rate below the generator's maximum most batches hold one or two packets.
//!
//! Every slot ends up either handed to the port (sent, or refused by a full ring) or
//! **late**: when the generator falls more than `max_lag` behind the schedule (it was
//! descheduled, or `R` is more than it can do), the slots beyond that lag are given up
//! instead of being sent in one burst later, and counted. So `sent + ring_full + late`
//! is always the trial's slot count, and the traffic the SUT sees never exceeds `R`
//! for longer than `max_lag`.
//!
//! `R = ∞` means "as fast as possible": batches back to back until the deadline, no
//! slot is ever late (used to measure the generator's own maximum rate).

/// The most slots a run catches up on at once, whatever `max_lag_ns` says (so an
/// absurd rate ends soon after its deadline).
pub const MAX_LAG_SLOTS: u64 = 1 << 16;

/// What the generator should do now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Send this many packets now (1 ..= batch); their slots are taken.
    Send(u32),
    /// Nothing is due for this many nanoseconds.
    Wait(u64),
    /// Every slot is taken: the run is over.
    Done,
}

/// The schedule of one run. See the module docs.
#[derive(Debug, Clone)]
pub struct Pacer {
    t0: u64,
    deadline: u64,
    /// Packets per nanosecond; infinite when unpaced.
    rate_per_ns: f64,
    /// Slots in the run (`u64::MAX` when unpaced).
    slots: u64,
    /// Slots taken so far (sent, refused, or late).
    taken: u64,
    late: u64,
    batch: u32,
    max_lag_slots: u64,
}

impl Pacer {
    /// A run starting at `t0` (ns) at `rate_pps` (`f64::INFINITY`: unpaced) for
    /// `duration_ns`, in batches of at most `batch`, giving up slots more than
    /// `max_lag_ns` behind (never fewer than one batch, nor more than
    /// [`MAX_LAG_SLOTS`]). A rate that is not positive
    /// (or NaN) makes an empty run.
    pub fn new(t0: u64, rate_pps: f64, duration_ns: u64, batch: u32, max_lag_ns: u64) -> Pacer {
        let batch = batch.max(1);
        let (slots, rate_per_ns) = if rate_pps.is_infinite() && rate_pps > 0.0 {
            (u64::MAX, f64::INFINITY)
        } else if rate_pps > 0.0 {
            // `as` saturates: an absurd rate gives u64::MAX slots, all but a few late.
            ((rate_pps * duration_ns as f64 / 1e9).round() as u64, rate_pps / 1e9)
        } else {
            (0, 0.0)
        };
        let max_lag_slots = ((max_lag_ns as f64 * rate_per_ns) as u64).clamp(u64::from(batch), MAX_LAG_SLOTS);
        Pacer {
            t0,
            deadline: t0.saturating_add(duration_ns),
            rate_per_ns,
            slots,
            taken: 0,
            late: 0,
            batch,
            max_lag_slots,
        }
    }

    /// Whether the run is unpaced.
    pub fn unpaced(&self) -> bool {
        self.rate_per_ns.is_infinite()
    }

    /// Slots in the run (`u64::MAX` when unpaced).
    pub fn slots(&self) -> u64 {
        self.slots
    }

    /// Slots taken so far.
    pub fn taken(&self) -> u64 {
        self.taken
    }

    /// Slots given up because the generator was too far behind.
    pub fn late(&self) -> u64 {
        self.late
    }

    /// What to do at time `now` (ns, the clock `t0` was read from).
    #[inline]
    pub fn step(&mut self, now: u64) -> Step {
        let elapsed = now.saturating_sub(self.t0);
        if self.unpaced() {
            return if now >= self.deadline { Step::Done } else { self.take(u64::from(self.batch)) };
        }
        if self.taken >= self.slots {
            return Step::Done;
        }
        // Slots 0..=floor(elapsed × R) are due.
        let due = ((elapsed as f64 * self.rate_per_ns) as u64).saturating_add(1).min(self.slots);
        let owed = due.saturating_sub(self.taken);
        if owed == 0 {
            let next_at = (self.taken as f64 / self.rate_per_ns) as u64;
            return Step::Wait(next_at.saturating_sub(elapsed).max(1));
        }
        if owed > self.max_lag_slots {
            let skip = owed - self.max_lag_slots;
            self.late += skip;
            self.taken += skip;
            return self.take(self.max_lag_slots);
        }
        self.take(owed)
    }

    fn take(&mut self, owed: u64) -> Step {
        let n = owed.min(u64::from(self.batch));
        self.taken += n;
        // n <= batch, a u32.
        Step::Send(n as u32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    #[test]
    fn paced_run_takes_every_slot_on_time() {
        // 1000 pps for 10 ms: 10 slots, one per ms.
        let mut p = Pacer::new(0, 1000.0, 10 * MS, 32, MS);
        assert_eq!(p.slots(), 10);
        assert_eq!(p.step(0), Step::Send(1));
        assert_eq!(p.step(1), Step::Wait(MS - 1));
        assert_eq!(p.step(MS), Step::Send(1));
        // 2.5 ms later: slots 2 and 3 are due.
        assert_eq!(p.step(3 * MS + MS / 2), Step::Send(2));
        for k in 4..10 {
            assert_eq!(p.step(k * MS), Step::Send(1));
        }
        assert_eq!(p.step(100 * MS), Step::Done);
        assert_eq!(p.late(), 0);
        assert_eq!(p.taken(), 10);
    }

    #[test]
    fn batches_are_capped_and_lag_is_given_up() {
        // 1 Mpps for 10 ms, batch 32, lag 100 us = 100 slots.
        let mut p = Pacer::new(0, 1e6, 10 * MS, 32, MS / 10);
        // 50 us in: 51 due, one batch at a time.
        assert_eq!(p.step(50_000), Step::Send(32));
        assert_eq!(p.step(50_000), Step::Send(19));
        // Descheduled for 5 ms: 5001 due, 51 taken; all but 100 are late.
        assert_eq!(p.step(5_050_000), Step::Send(32));
        assert_eq!(p.late(), 5051 - 51 - 100);
        // The end: every slot accounted for.
        let mut sent = 32 + 19 + 32;
        loop {
            match p.step(20 * MS) {
                Step::Send(n) => sent += u64::from(n),
                Step::Done => break,
                Step::Wait(_) => panic!("nothing waits after the deadline"),
            }
        }
        assert_eq!(sent + p.late(), 10_000);
        assert_eq!(p.taken(), 10_000);
    }

    #[test]
    fn unpaced_runs_until_the_deadline() {
        let mut p = Pacer::new(5, f64::INFINITY, MS, 64, MS);
        assert!(p.unpaced());
        assert_eq!(p.step(5), Step::Send(64));
        assert_eq!(p.step(MS), Step::Send(64));
        assert_eq!(p.step(MS + 5), Step::Done);
        assert_eq!(p.late(), 0);
    }

    #[test]
    fn absurd_and_empty_rates() {
        let mut p = Pacer::new(0, 1e30, MS, 32, MS);
        assert_eq!(p.slots(), u64::MAX);
        assert!(matches!(p.step(10), Step::Send(_)));
        assert!(p.late() > 1_000_000);
        for r in [0.0, -1.0, f64::NAN, f64::NEG_INFINITY] {
            assert_eq!(Pacer::new(0, r, MS, 32, MS).step(0), Step::Done, "{r}");
        }
    }
}
