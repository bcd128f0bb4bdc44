//! The overload guard (`sr6 run --overload-priority`): while a worker's receive
//! backlog is above 3/4 of its ring, the worker runs SCHED_FIFO at the given priority,
//! above the kernel's receive work for its devices; once the backlog is below 1/16 it
//! is an ordinary thread again.
//!
//! Why. In copy-mode AF_XDP (veth, drivers without zero copy) the kernel's receive work
//! for sr6 — run the XDP program, copy the frame into the UMEM — is cheap next to
//! sr6's own work per frame, and nothing stops it when sr6's ring is full: it goes on
//! taking frames from the device and dropping them. Where that work runs at a higher
//! priority than the worker (a SCHED_FIFO NAPI thread, softirqs), offered more than it
//! can forward sr6 forwards less and less, down to a tenth of its capacity: receive
//! livelock (Mogul and Ramakrishnan, "Eliminating receive livelock in an
//! interrupt-driven kernel", 1997). Their remedy is to stop taking input while the
//! queue to the consumer is full, until it has drained; the guard does that with
//! priorities. Above the high mark the worker preempts the kernel's receive work: the
//! device's own queue fills and drops what arrives (at the sender's cost, not this
//! CPU's) while the worker drains its backlog; below the low mark the kernel takes
//! input again. Below overload the backlog never reaches the high mark and nothing
//! changes: the kernel still moves bursts into sr6's deep ring as soon as they arrive.
//! The gap between the marks keeps the switches few: two system calls per half a ring
//! of frames at most.
//!
//! A worker cannot raise itself while the kernel's receive work holds its CPU — which,
//! under overload, is all the time once it has lowered itself. So a watchdog thread
//! ([`watchdog`]), SCHED_FIFO at the same priority on the workers' CPUs, wakes every
//! [`WATCH_PERIOD`] and raises any worker that is not raised, has not finished a round
//! for that long and is not asleep — or is, by its own account, but the kernel says it
//! is runnable: woken by the frames the kernel's receive work put in its ring, and
//! starved by that same work before it could say so. (Without that last case the guard
//! missed many of its chances: a worker goes to sleep whenever its ring is empty for a
//! moment. In `sr6 perf` trials of End.DT46 offered 8 Mpps, sr6 forwarded 750-885 kpps
//! without this case and 769-1284 with it, three runs each; `docs/perf.md`.) That is a
//! worker with work that has not run for a millisecond (the kernel moves several
//! thousand frames into its ring meanwhile).
//! The worker lowers itself at the low mark, as above. Under overload each cycle of
//! raise, drain and lower loses the time the starved worker waits for the watchdog
//! (1-2 ms), so the low mark is low: the longer the drain, the smaller that share. With
//! the mark at 1/4 instead of 1/16, sr6 forwarded 8-20% less offered 6 Mpps; with a
//! closer look after each lowering (every 100 µs, a stall being 300 µs without a
//! round) it forwarded less than with the 1 ms look (`docs/perf.md`).
//!
//! Busy polling (`SO_PREFER_BUSY_POLL`), which would move the kernel's receive work
//! into the worker, is not available there: a copy-mode socket on veth has no NAPI id
//! (Linux 6.18), so the kernel never busy-polls for it.

use std::io;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// How often the watchdog looks at the workers, and how long a worker that is awake
/// may go without finishing a round before it is raised.
pub const WATCH_PERIOD: Duration = Duration::from_millis(1);
/// The watchdog's period while every worker sleeps.
const WATCH_IDLE_PERIOD: Duration = Duration::from_millis(10);

/// How full a receive ring is, against the guard's marks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// At most a sixteenth of the ring waits.
    Low,
    Mid,
    /// At least three quarters of the ring wait.
    High,
}

impl Level {
    /// The level of a ring of `capacity` slots with `waiting` frames in it.
    pub fn of(waiting: u32, capacity: u32) -> Level {
        if capacity == 0 {
            return Level::Low;
        }
        let (w, c) = (u64::from(waiting), u64::from(capacity));
        if 4 * w >= 3 * c {
            Level::High
        } else if 16 * w <= c {
            Level::Low
        } else {
            Level::Mid
        }
    }
}

/// What the guard has done (published with the worker's counters).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OverloadStats {
    /// Times the worker went SCHED_FIFO (by itself or by the watchdog).
    pub raised: u64,
    /// Nanoseconds spent SCHED_FIFO (finished periods and the current one).
    pub raised_ns: u64,
}

impl OverloadStats {
    /// The counts since `base` (an earlier reading of the same guard).
    pub fn since(self, base: OverloadStats) -> OverloadStats {
        OverloadStats {
            raised: self.raised.saturating_sub(base.raised),
            raised_ns: self.raised_ns.saturating_sub(base.raised_ns),
        }
    }
}

/// The part of a worker's guard the watchdog sees.
#[derive(Debug)]
pub struct Watched {
    /// The worker thread's id (0 until it runs).
    tid: AtomicI32,
    /// The clock (`now_ns`) when the worker last finished a round.
    round_ns: AtomicU64,
    /// The worker sleeps in poll(2) (nothing to do).
    asleep: AtomicBool,
    /// The worker is SCHED_FIFO; the clock (`now_ns`) when it went.
    raised_at: AtomicU64,
    raised: AtomicBool,
    raises: AtomicU64,
}

/// One worker's guard. See the module docs.
#[derive(Debug)]
pub struct OverloadGuard {
    /// SCHED_FIFO priority while raised; `None`: the guard is off.
    prio: Option<i32>,
    shared: Arc<Watched>,
    done_ns: u64,
}

impl OverloadGuard {
    /// A guard that raises its worker to SCHED_FIFO `prio` (1-99), or does nothing
    /// (`None`).
    pub fn new(prio: Option<i32>) -> OverloadGuard {
        let shared = Arc::new(Watched {
            tid: AtomicI32::new(0),
            round_ns: AtomicU64::new(0),
            asleep: AtomicBool::new(false),
            raised_at: AtomicU64::new(0),
            raised: AtomicBool::new(false),
            raises: AtomicU64::new(0),
        });
        OverloadGuard { prio, shared, done_ns: 0 }
    }

    /// What the watchdog needs (give it before the worker starts).
    pub fn watched(&self) -> Arc<Watched> {
        self.shared.clone()
    }

    /// Whether the guard does anything.
    pub fn enabled(&self) -> bool {
        self.prio.is_some()
    }

    /// Whether the worker is SCHED_FIFO now.
    pub fn is_raised(&self) -> bool {
        self.shared.raised.load(Ordering::Acquire)
    }

    /// Called by the worker thread before its first round.
    pub fn start(&self) {
        self.shared.round_ns.store(sr6_io::live::now_ns(), Ordering::Release);
        self.shared.tid.store(gettid(), Ordering::Release);
    }

    /// Called by the worker around a sleep in poll(2).
    pub fn asleep(&self, yes: bool) {
        if !yes {
            // Its time asleep is not time without a round.
            self.shared.round_ns.store(sr6_io::live::now_ns(), Ordering::Release);
        }
        self.shared.asleep.store(yes, Ordering::Release);
    }

    /// At the end of each round, with the fullest receive ring's level: raises or
    /// lowers the calling (worker) thread. If the kernel refuses (no CAP_SYS_NICE, or
    /// a cgroup without real-time runtime), the guard turns itself off and says why,
    /// once.
    pub fn update(&mut self, level: Level, now_ns: u64) {
        self.update_with(level, now_ns, set_policy);
    }

    /// [`OverloadGuard::update`] with `set` in place of `sched_setscheduler`.
    fn update_with(
        &mut self,
        level: Level,
        now_ns: u64,
        set: impl FnOnce(libc::pid_t, libc::c_int, i32) -> io::Result<()>,
    ) {
        let Some(prio) = self.prio else { return };
        self.shared.round_ns.store(now_ns, Ordering::Release);
        let r = match (self.is_raised(), level) {
            (false, Level::High) => raise_with(&self.shared, 0, prio, now_ns, set),
            (true, Level::Low) => {
                // Lowered before the call: the call itself hands the CPU to the
                // kernel's receive work under overload, and the worker runs again only
                // once the watchdog raises it, which it does to a worker it sees as
                // not raised. Marked after the call, a worker preempted inside it
                // stayed "raised" to the watchdog, and starved until the kernel's
                // share for ordinary threads ran it (tens of ms at a time, 5% of the
                // CPU): under overload it was raised 16 times a second, not hundreds.
                let at = self.shared.raised_at.load(Ordering::Acquire);
                self.shared.raised.store(false, Ordering::Release);
                let r = set(0, libc::SCHED_OTHER, 0);
                match r {
                    Ok(()) => self.done_ns += now_ns.saturating_sub(at),
                    Err(_) => self.shared.raised.store(true, Ordering::Release),
                }
                r
            }
            _ => Ok(()),
        };
        if let Err(e) = r {
            eprintln!("sr6: warning: overload guard off: cannot change the worker's scheduling policy: {e}");
            self.prio = None;
        }
    }

    /// Back to SCHED_OTHER if raised, and out of the watchdog's sight (when the worker
    /// stops: its thread id must not be raised once the thread is gone).
    pub fn release(&mut self, now_ns: u64) {
        if self.is_raised() {
            self.update(Level::Low, now_ns);
        }
        self.shared.asleep.store(true, Ordering::Release);
        self.shared.tid.store(0, Ordering::Release);
    }

    /// What the guard has done up to `now_ns`.
    pub fn stats(&self, now_ns: u64) -> OverloadStats {
        let current =
            if self.is_raised() { now_ns.saturating_sub(self.shared.raised_at.load(Ordering::Acquire)) } else { 0 };
        OverloadStats { raised: self.shared.raises.load(Ordering::Relaxed), raised_ns: self.done_ns + current }
    }
}

/// Raises thread `tid` (0: the calling thread) and records it.
fn raise(w: &Watched, tid: libc::pid_t, prio: i32, now_ns: u64) -> io::Result<()> {
    raise_with(w, tid, prio, now_ns, set_policy)
}

/// [`raise`] with `set` in place of `sched_setscheduler`. Marked after the call: a
/// thread going up is not preempted by what it goes above.
fn raise_with(
    w: &Watched,
    tid: libc::pid_t,
    prio: i32,
    now_ns: u64,
    set: impl FnOnce(libc::pid_t, libc::c_int, i32) -> io::Result<()>,
) -> io::Result<()> {
    set(tid, libc::SCHED_FIFO, prio)?;
    w.raised_at.store(now_ns, Ordering::Release);
    w.raised.store(true, Ordering::Release);
    w.raises.fetch_add(1, Ordering::Relaxed);
    Ok(())
}

/// Whether the watchdog should raise `w` at `now` (ns): started, not raised, no round
/// finished for [`WATCH_PERIOD`], and awake — or asleep by its flag but `runnable(tid)`
/// by the kernel's account (asked only then).
fn stalled(w: &Watched, now: u64, runnable: impl FnOnce(libc::pid_t) -> bool) -> bool {
    let idle = now.saturating_sub(w.round_ns.load(Ordering::Acquire));
    let tid = w.tid.load(Ordering::Acquire);
    tid != 0
        && !w.raised.load(Ordering::Acquire)
        && idle >= WATCH_PERIOD.as_nanos() as u64
        && (!w.asleep.load(Ordering::Acquire) || runnable(tid))
}

/// Reads threads' scheduler states from `/proc/self/task/TID/stat` (one open file per
/// thread, re-read from the start each time).
#[derive(Default)]
struct TaskStates {
    files: Vec<(libc::pid_t, std::fs::File)>,
}

impl TaskStates {
    /// Whether thread `tid` of this process is runnable (running, or waiting for a CPU:
    /// state `R`). False if its state cannot be read (it has exited).
    fn runnable(&mut self, tid: libc::pid_t) -> bool {
        use std::os::unix::fs::FileExt;
        if !self.files.iter().any(|(t, _)| *t == tid) {
            match std::fs::File::open(format!("/proc/self/task/{tid}/stat")) {
                Ok(f) => self.files.push((tid, f)),
                Err(_) => return false,
            }
        }
        let Some((_, f)) = self.files.iter().find(|(t, _)| *t == tid) else { return false };
        let mut buf = [0u8; 512];
        match f.read_at(&mut buf, 0) {
            Ok(n) => task_state(&buf[..n]) == Some(b'R'),
            Err(_) => false,
        }
    }
}

/// The state letter of a `/proc/PID/stat` line: the first field after the command name,
/// which is in parentheses and may itself hold spaces and parentheses.
fn task_state(stat: &[u8]) -> Option<u8> {
    let close = stat.iter().rposition(|&c| c == b')')?;
    stat.get(close + 1..)?.iter().copied().find(|c| !c.is_ascii_whitespace())
}

/// The watchdog of the workers' guards (see the module docs): runs SCHED_FIFO at
/// `prio` until `stop`, waking every [`WATCH_PERIOD`] (every [`WATCH_IDLE_PERIOD`]
/// while every worker sleeps). Start it in a thread pinned to the workers' CPUs.
pub fn watchdog(prio: i32, workers: Vec<Arc<Watched>>, stop: &AtomicBool) {
    if let Err(e) = set_policy(0, libc::SCHED_FIFO, prio) {
        eprintln!("sr6: warning: overload watchdog off: cannot run it SCHED_FIFO: {e}");
        return;
    }
    let mut states = TaskStates::default();
    while !stop.load(Ordering::Relaxed) {
        let all_asleep = workers.iter().all(|w| w.asleep.load(Ordering::Acquire));
        std::thread::sleep(if all_asleep { WATCH_IDLE_PERIOD } else { WATCH_PERIOD });
        let now = sr6_io::live::now_ns();
        for w in &workers {
            if stalled(w, now, |tid| states.runnable(tid)) {
                // A failure (the worker just exited) changes nothing: look again next time.
                let _ = raise(w, w.tid.load(Ordering::Acquire), prio, now);
            }
        }
    }
}

fn gettid() -> libc::pid_t {
    // SAFETY: gettid(2) takes no arguments and cannot fail.
    unsafe { libc::gettid() }
}

/// `sched_setscheduler(tid, policy, prio)`: a thread's policy (0: the calling thread;
/// Linux applies it to the thread, not the process).
fn set_policy(tid: libc::pid_t, policy: libc::c_int, prio: i32) -> io::Result<()> {
    let p = libc::sched_param { sched_priority: prio };
    // SAFETY: `p` is a valid sched_param for the duration of the call.
    if unsafe { libc::sched_setscheduler(tid, policy, &p) } == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_are_a_sixteenth_and_three_quarters_of_the_ring() {
        assert_eq!(Level::of(0, 16384), Level::Low);
        assert_eq!(Level::of(1024, 16384), Level::Low);
        assert_eq!(Level::of(1025, 16384), Level::Mid);
        assert_eq!(Level::of(4096, 16384), Level::Mid);
        assert_eq!(Level::of(12287, 16384), Level::Mid);
        assert_eq!(Level::of(12288, 16384), Level::High);
        assert_eq!(Level::of(16384, 16384), Level::High);
        assert_eq!(Level::of(u32::MAX, u32::MAX), Level::High);
        assert_eq!(Level::of(5, 0), Level::Low);
        // The fullest ring decides.
        assert_eq!([Level::Low, Level::High, Level::Mid].into_iter().max(), Some(Level::High));
    }

    #[test]
    fn a_disabled_guard_never_touches_the_thread() {
        let mut g = OverloadGuard::new(None);
        g.update(Level::High, 10);
        assert!(!g.is_raised());
        assert_eq!(g.stats(20), OverloadStats::default());
    }

    #[test]
    fn a_worker_is_stalled_after_a_millisecond_without_a_round() {
        let ms = |n: u64| n * 1_000_000;
        let g = OverloadGuard::new(Some(5));
        let w = g.watched();
        let never = |_| -> bool { panic!("the kernel is asked only about a worker that says it sleeps") };
        // Not started yet (no thread id): never.
        assert!(!stalled(&w, ms(100), never));
        w.tid.store(42, Ordering::Release);
        w.round_ns.store(ms(100), Ordering::Release);
        assert!(!stalled(&w, ms(101) - 1, never));
        assert!(stalled(&w, ms(101), never));
        // Asleep: left alone however long ago its last round was, unless the kernel
        // says it is runnable (woken, and not run since).
        w.asleep.store(true, Ordering::Release);
        assert!(!stalled(&w, ms(200), |_| false));
        assert!(stalled(&w, ms(200), |tid| tid == 42));
        assert!(!stalled(&w, ms(101) - 1, never));
        w.asleep.store(false, Ordering::Release);
        // Already raised: left alone.
        w.raised.store(true, Ordering::Release);
        assert!(!stalled(&w, ms(200), never));
        w.raised.store(false, Ordering::Release);
        assert!(stalled(&w, ms(200), never));
        // Waking up is a fresh start: its time asleep is not time without a round.
        g.asleep(true);
        g.asleep(false);
        assert!(!stalled(&w, sr6_io::live::now_ns(), never));
    }

    /// A worker preempted inside its call to lower itself (under overload the
    /// kernel's receive work takes the CPU at once) is already one the watchdog may
    /// raise: it must not stay "raised" to the watchdog while it cannot run.
    #[test]
    fn a_worker_lowering_itself_is_stalled_to_the_watchdog_during_the_call() {
        let ms = |n: u64| n * 1_000_000;
        let mut g = OverloadGuard::new(Some(5));
        let w = g.watched();
        w.tid.store(42, Ordering::Release);
        let never = |_| -> bool { panic!("the worker is awake") };
        g.update_with(Level::High, ms(100), |tid, policy, prio| {
            assert_eq!((tid, policy, prio), (0, libc::SCHED_FIFO, 5));
            Ok(())
        });
        assert!(g.is_raised());
        assert!(!stalled(&w, ms(300), never), "a raised worker is left alone");
        let mut seen = None;
        g.update_with(Level::Low, ms(110), |_, policy, _| {
            assert_eq!(policy, libc::SCHED_OTHER);
            // What the watchdog sees if the thread is preempted here for 2 ms.
            seen = Some(stalled(&w, ms(112), never));
            Ok(())
        });
        assert_eq!(seen, Some(true), "preempted while lowering itself, the worker is raised again");
        assert!(!g.is_raised());
        assert_eq!(g.stats(ms(200)), OverloadStats { raised: 1, raised_ns: ms(10) });
        // A refused call leaves it raised, and turns the guard off.
        let mut g = OverloadGuard::new(Some(5));
        g.update_with(Level::High, ms(100), |_, _, _| Ok(()));
        g.update_with(Level::Low, ms(110), |_, _, _| Err(io::Error::from_raw_os_error(libc::EPERM)));
        assert!(g.is_raised() && !g.enabled());
    }

    /// The scheduling policy the kernel reports for the calling thread.
    fn policy() -> libc::c_int {
        policy_of(0)
    }

    fn policy_of(tid: libc::pid_t) -> libc::c_int {
        // SAFETY: a plain query; the kernel reads nothing from us.
        unsafe { libc::sched_getscheduler(tid) }
    }

    /// Whether this process may use SCHED_FIFO (root, or CAP_SYS_NICE).
    fn may_use_fifo() -> bool {
        std::thread::spawn(|| set_policy(0, libc::SCHED_FIFO, 1).is_ok()).join().unwrap()
    }

    /// A guard at SCHED_FIFO 3 for a test against the kernel's scheduler, or `None`
    /// (the test is skipped, and says so) where this process may not use SCHED_FIFO.
    fn fifo_guard() -> Option<OverloadGuard> {
        if may_use_fifo() {
            Some(OverloadGuard::new(Some(3)))
        } else {
            eprintln!("skipped: no permission to use SCHED_FIFO");
            None
        }
    }

    /// A watchdog at priority 3 on its own thread, until [`Dog::stop`].
    struct Dog {
        stop: Arc<AtomicBool>,
        thread: std::thread::JoinHandle<()>,
    }

    impl Dog {
        fn start(watched: Arc<Watched>) -> Dog {
            let stop = Arc::new(AtomicBool::new(false));
            let s = stop.clone();
            Dog { stop, thread: std::thread::spawn(move || watchdog(3, vec![watched], &s)) }
        }

        fn stop(self) {
            self.stop.store(true, Ordering::Relaxed);
            self.thread.join().unwrap();
        }
    }

    /// Against the kernel: a worker that has stopped finishing rounds without being
    /// asleep is raised by the watchdog, from another thread; an asleep one is not;
    /// the worker lowers itself at the low mark.
    #[test]
    fn the_watchdog_raises_a_stalled_worker_only() {
        let Some(mut g) = fifo_guard() else { return };
        use std::sync::mpsc::channel;
        let watched = g.watched();
        let (to_worker, worker_rx) = channel::<bool>();
        let (to_test, test_rx) = channel::<libc::pid_t>();
        let worker = std::thread::spawn(move || {
            g.start();
            g.asleep(true);
            to_test.send(gettid()).unwrap();
            // Stalled: the test decides when the next round ends.
            while let Ok(asleep) = worker_rx.recv() {
                g.asleep(asleep);
                to_test.send(policy()).unwrap();
            }
            g.update(Level::Low, sr6_io::live::now_ns());
            (policy(), g.stats(sr6_io::live::now_ns()).raised)
        });
        let tid = test_rx.recv().unwrap();
        let dog = Dog::start(watched);
        // Asleep: several periods go by, and nothing happens.
        std::thread::sleep(WATCH_IDLE_PERIOD * 3);
        assert_eq!(policy_of(tid), libc::SCHED_OTHER);
        // Awake and stalled: raised within a few periods (wait for it, generously).
        to_worker.send(false).unwrap();
        test_rx.recv().unwrap();
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while policy_of(tid) != libc::SCHED_FIFO {
            assert!(std::time::Instant::now() < deadline, "the watchdog never raised the stalled worker");
            std::thread::sleep(WATCH_PERIOD);
        }
        dog.stop();
        drop(to_worker);
        let (after, raised) = worker.join().unwrap();
        assert_eq!(after, libc::SCHED_OTHER, "the worker lowers itself at the low mark");
        assert_eq!(raised, 1);
    }

    #[test]
    fn task_states_come_from_the_kernel() {
        assert_eq!(task_state(b"123 (a) b) R 1 2"), Some(b'R'));
        assert_eq!(task_state(b"123 (sr6 w) S 1"), Some(b'S'));
        assert_eq!(task_state(b"123 (cut)"), None);
        assert_eq!(task_state(b"garbage"), None);
        let mut st = TaskStates::default();
        // The asking thread is running.
        assert!(st.runnable(gettid()));
        // A thread blocked on a channel is not runnable (S), once it has blocked.
        let (to_thread, thread_rx) = std::sync::mpsc::channel::<()>();
        let (tid_tx, tid_rx) = std::sync::mpsc::channel();
        let t = std::thread::spawn(move || {
            tid_tx.send(gettid()).unwrap();
            let _ = thread_rx.recv();
        });
        let tid = tid_rx.recv().unwrap();
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while st.runnable(tid) {
            assert!(std::time::Instant::now() < deadline, "thread {tid} never blocked");
            std::thread::sleep(Duration::from_millis(1));
        }
        to_thread.send(()).unwrap();
        t.join().unwrap();
        // Gone: not runnable. `join` returns when the kernel clears the thread's tid
        // futex, which is before the exiting task leaves state R, so wait for it.
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while st.runnable(tid) {
            assert!(std::time::Instant::now() < deadline, "thread {tid} still runnable after it exited");
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    /// Against the kernel: a worker whose flag says it sleeps but which the kernel
    /// reports runnable (here: it spins; in `sr6 run`: woken by the frames in its ring
    /// and starved) is raised.
    #[test]
    fn the_watchdog_raises_a_runnable_worker_that_says_it_sleeps() {
        let Some(mut g) = fifo_guard() else { return };
        let watched = g.watched();
        let spin = Arc::new(AtomicBool::new(true));
        let (tid_tx, tid_rx) = std::sync::mpsc::channel();
        let worker = {
            let spin = spin.clone();
            std::thread::spawn(move || {
                g.start();
                g.asleep(true);
                tid_tx.send(gettid()).unwrap();
                while spin.load(Ordering::Relaxed) {
                    std::hint::spin_loop();
                }
                let raised = g.is_raised();
                g.release(sr6_io::live::now_ns());
                (raised, policy())
            })
        };
        let tid = tid_rx.recv().unwrap();
        let dog = Dog::start(watched);
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while policy_of(tid) != libc::SCHED_FIFO && std::time::Instant::now() < deadline {
            std::thread::sleep(WATCH_PERIOD);
        }
        dog.stop();
        spin.store(false, Ordering::Relaxed);
        let (raised, after) = worker.join().unwrap();
        assert!(raised, "the watchdog never raised the runnable worker");
        assert_eq!(after, libc::SCHED_OTHER, "released: back to SCHED_OTHER");
    }

    /// Against the kernel: the thread is SCHED_FIFO at the priority from the high mark
    /// until the low mark, not before and not after (hysteresis), and counted. Run in a
    /// thread of its own: the policy is per thread. Needs CAP_SYS_NICE; without it the
    /// guard must turn itself off and leave the thread as it was.
    #[test]
    fn raises_at_the_high_mark_and_lowers_at_the_low_mark() {
        std::thread::spawn(|| {
            let mut g = OverloadGuard::new(Some(7));
            g.start();
            g.update(Level::Mid, 0);
            assert!(!g.is_raised());
            assert_eq!(policy(), libc::SCHED_OTHER);
            g.update(Level::High, 1_000);
            if !g.enabled() {
                // Not permitted here (not root): the guard gave up, the thread is unchanged.
                assert_eq!(policy(), libc::SCHED_OTHER);
                eprintln!("skipped: no permission to use SCHED_FIFO");
                return;
            }
            assert!(g.is_raised());
            assert_eq!(policy(), libc::SCHED_FIFO);
            let mut p = libc::sched_param { sched_priority: 0 };
            // SAFETY: `p` is writable; pid 0 is this thread.
            assert_eq!(unsafe { libc::sched_getparam(0, &mut p) }, 0);
            assert_eq!(p.sched_priority, 7);
            // Between the marks: stays raised.
            g.update(Level::Mid, 2_000);
            g.update(Level::High, 3_000);
            assert_eq!(policy(), libc::SCHED_FIFO);
            assert_eq!(g.stats(4_000), OverloadStats { raised: 1, raised_ns: 3_000 });
            g.update(Level::Low, 5_000);
            assert!(!g.is_raised());
            assert_eq!(policy(), libc::SCHED_OTHER);
            g.update(Level::High, 6_000);
            g.release(8_000);
            assert_eq!(policy(), libc::SCHED_OTHER);
            assert_eq!(g.stats(9_000), OverloadStats { raised: 2, raised_ns: 6_000 });
        })
        .join()
        .unwrap();
    }
}
