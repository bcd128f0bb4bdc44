//! Ending another thread's blocking system call: a signal whose handler does nothing,
//! so that the call fails with `EINTR`.
//!
//! What it is for: a `BPF_PROG_TEST_RUN` in live-frame mode (`sr6 perf`'s traffic
//! generator) runs the program up to 2^30 times in one call and checks for a pending
//! signal between runs; ending it with a signal once its work is done is much cheaper
//! than many short calls (each call's teardown waits for an RCU grace period).
//!
//! [`Interrupter::arm`] starts a helper thread that first runs the caller's `wait`
//! function (until it is time), then sends the arming thread `SIGURG` every `every`
//! until the `Interrupter` is dropped; dropping it stops and joins the helper. `SIGURG`
//! is ignored by default; a handler that does nothing, installed once per process
//! without `SA_RESTART`, makes it interrupt system calls instead. The standard library
//! retries its own calls on `EINTR`, so other threads that happen to receive it are not
//! disturbed.
//!
//! The signal goes to the arming thread by its kernel thread id (`tgkill`): should that
//! thread have ended (an `Interrupter` leaked with `mem::forget`), the signal finds no
//! thread, or another thread of this process that reuses the id, which sees one
//! harmless `EINTR` — never undefined behaviour.

use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::thread::JoinHandle;
use std::time::Duration;

/// The signal: SIGURG, whose default action is to be ignored.
const STOP_SIGNAL: libc::c_int = libc::SIGURG;

extern "C" fn on_stop_signal(_: libc::c_int) {}

/// Installs the no-op handler for [`STOP_SIGNAL`] (once per process).
fn install_handler() -> io::Result<()> {
    static DONE: OnceLock<Result<(), i32>> = OnceLock::new();
    let r = DONE.get_or_init(|| {
        // SAFETY: a zeroed sigaction is valid; the handler is an `extern "C"` function
        // that does nothing (async-signal-safe); no SA_RESTART, so an interrupted system
        // call returns EINTR.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_stop_signal as extern "C" fn(libc::c_int) as usize;
            libc::sigemptyset(&mut sa.sa_mask);
            if libc::sigaction(STOP_SIGNAL, &sa, std::ptr::null_mut()) == 0 {
                Ok(())
            } else {
                Err(io::Error::last_os_error().raw_os_error().unwrap_or(0))
            }
        }
    });
    r.map_err(io::Error::from_raw_os_error)
}

/// Sends [`STOP_SIGNAL`] to thread `tid` of this process.
fn signal_thread(pid: libc::pid_t, tid: libc::pid_t) {
    // SAFETY: tgkill only queues a signal (no memory is passed); a thread id that no
    // longer exists fails with ESRCH, which is ignored.
    unsafe { libc::syscall(libc::SYS_tgkill, pid, tid, STOP_SIGNAL) };
}

/// Interrupts the blocking system calls of the thread that armed it (see the module
/// docs); dropping it stops the signals and joins the helper thread.
#[derive(Debug)]
pub struct Interrupter {
    done: Arc<AtomicBool>,
    helper: Option<JoinHandle<()>>,
}

impl Interrupter {
    /// Starts the helper thread: it runs `wait` (given a flag that is set when the
    /// `Interrupter` is dropped: `wait` should then return soon), then signals the
    /// calling thread every `every` until dropped. A signal sent before the calling
    /// thread enters its system call is not lost work: the next one comes `every`
    /// later.
    pub fn arm<W>(wait: W, every: Duration) -> io::Result<Interrupter>
    where
        W: FnOnce(&AtomicBool) + Send + 'static,
    {
        install_handler()?;
        // SAFETY: getpid and gettid have no preconditions and cannot fail.
        let (pid, tid) = unsafe { (libc::getpid(), libc::gettid()) };
        let done = Arc::new(AtomicBool::new(false));
        let d = done.clone();
        let helper = std::thread::Builder::new().name("sr6-interrupt".into()).spawn(move || {
            wait(&d);
            while !d.load(Ordering::Acquire) {
                signal_thread(pid, tid);
                std::thread::sleep(every);
            }
        })?;
        Ok(Interrupter { done, helper: Some(helper) })
    }
}

impl Drop for Interrupter {
    fn drop(&mut self) {
        self.done.store(true, Ordering::Release);
        if let Some(h) = self.helper.take() {
            let _ = h.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    /// A blocking read of a pipe nobody writes to ends with EINTR once the wait is over.
    #[test]
    fn interrupts_a_blocking_call() {
        let mut fds = [0; 2];
        // SAFETY: `fds` has room for the two descriptors pipe2 writes.
        assert_eq!(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) }, 0);
        let t0 = Instant::now();
        let alarm =
            Interrupter::arm(|_| std::thread::sleep(Duration::from_millis(50)), Duration::from_millis(5)).expect("arm");
        let mut b = [0u8; 1];
        // SAFETY: `b` is writable for one byte; fds[0] is the pipe's read end.
        let r = unsafe { libc::read(fds[0], b.as_mut_ptr().cast(), 1) };
        let e = io::Error::last_os_error();
        drop(alarm);
        assert_eq!((r, e.kind()), (-1, io::ErrorKind::Interrupted));
        assert!(t0.elapsed() >= Duration::from_millis(50));
        for fd in fds {
            // SAFETY: closing the two descriptors this test opened, once.
            unsafe { libc::close(fd) };
        }
    }

    /// Dropped before its wait is over: no signal, and the drop returns.
    #[test]
    fn drop_ends_the_wait() {
        let alarm = Interrupter::arm(
            |done| {
                while !done.load(Ordering::Acquire) {
                    std::thread::sleep(Duration::from_millis(1));
                }
            },
            Duration::from_millis(1),
        )
        .unwrap();
        drop(alarm);
    }
}
