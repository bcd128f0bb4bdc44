//! Live backends: the interface between a Linux network device and one worker.
//!
//! A [`Port`] is one worker's view of one device: its own receive queue (an AF_XDP
//! socket bound to one hardware queue, or an AF_PACKET socket in a fanout group) and its
//! own transmit ring. Data flows one way: `rx_burst` fills [`PacketBuf`]s, the pipeline
//! decides, `tx_queue` + `tx_flush` send. A port never blocks: the worker polls
//! [`Port::fd`] when every port is idle.
//!
//! Backends: [`crate::af_xdp`] (primary) and [`crate::af_packet`] (fallback).

use std::os::fd::RawFd;

use sr6_core::packet::{DevId, PacketBuf};

/// Counters a port keeps about what it could not do (never raised per packet).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PortStats {
    /// Frames received.
    pub rx: u64,
    /// Frames the kernel dropped because the receive ring was full (as reported by the
    /// kernel, e.g. `PACKET_STATISTICS` or `XDP_STATISTICS`).
    pub rx_ring_full: u64,
    /// Frames larger than a [`PacketBuf`] can carry, dropped on receive.
    pub rx_oversized: u64,
    /// Frames handed to the kernel for transmission.
    pub tx: u64,
    /// Frames that found the transmit ring full and were dropped.
    pub tx_ring_full: u64,
    /// Received frames whose partial checksum (a sender's transmit checksum offload)
    /// the port completed (AF_PACKET, from the kernel's virtio-net header).
    pub rx_csum_completed: u64,
    /// Segmentation offload super-frames (several segments in one, from a sender's
    /// TSO/USO), dropped on receive (AF_PACKET).
    pub rx_gso: u64,
    /// Frames whose virtio-net header points outside them, dropped on receive
    /// (AF_PACKET; the kernel never writes one).
    pub rx_bad_vnet: u64,
    /// Frames for a device that is absent (deleted, or renamed away) while it is,
    /// dropped (`sr6 run`'s stand-in port counts them; a real port never does).
    pub tx_absent: u64,
}

impl PortStats {
    /// Adds `o`'s counters to these.
    pub fn add(&mut self, o: &PortStats) {
        self.rx += o.rx;
        self.rx_ring_full += o.rx_ring_full;
        self.rx_oversized += o.rx_oversized;
        self.tx += o.tx;
        self.tx_ring_full += o.tx_ring_full;
        self.rx_csum_completed += o.rx_csum_completed;
        self.rx_gso += o.rx_gso;
        self.rx_bad_vnet += o.rx_bad_vnet;
        self.tx_absent += o.tx_absent;
    }

    /// What was counted since `before` (each counter at least 0).
    pub fn since(&self, before: &PortStats) -> PortStats {
        PortStats {
            rx: self.rx.saturating_sub(before.rx),
            rx_ring_full: self.rx_ring_full.saturating_sub(before.rx_ring_full),
            rx_oversized: self.rx_oversized.saturating_sub(before.rx_oversized),
            tx: self.tx.saturating_sub(before.tx),
            tx_ring_full: self.tx_ring_full.saturating_sub(before.tx_ring_full),
            rx_csum_completed: self.rx_csum_completed.saturating_sub(before.rx_csum_completed),
            rx_gso: self.rx_gso.saturating_sub(before.rx_gso),
            rx_bad_vnet: self.rx_bad_vnet.saturating_sub(before.rx_bad_vnet),
            tx_absent: self.tx_absent.saturating_sub(before.tx_absent),
        }
    }
}

/// One worker's queue pair on one device. See the module docs.
pub trait Port: Send {
    /// The device name (`eth0`).
    fn ifname(&self) -> &str;

    /// Receives up to `bufs.len()` frames into the front of `bufs`, each loaded with
    /// [`PacketBuf::load`] (so `in_dev` is this port's device) and `ts_ns` set from a
    /// monotonic clock. Returns how many; 0 when nothing waits. Never blocks. A frame
    /// too large for a buffer is dropped and counted in [`PortStats::rx_oversized`].
    fn rx_burst(&mut self, bufs: &mut [PacketBuf]) -> std::io::Result<usize>;

    /// Queues one Ethernet frame for transmission. `false` if the transmit ring is full:
    /// the frame is dropped and counted in [`PortStats::tx_ring_full`].
    fn tx_queue(&mut self, frame: &[u8]) -> bool;

    /// Hands every queued frame to the kernel (at most one system call) and reclaims
    /// completed transmit slots.
    fn tx_flush(&mut self) -> std::io::Result<()>;

    /// A descriptor that polls readable (`POLLIN`) when frames wait.
    fn fd(&self) -> RawFd;

    /// The port's counters so far.
    fn stats(&self) -> PortStats;

    /// Frames the kernel has received and put in the port's receive ring, not yet
    /// taken by `rx_burst`, and the ring's size; `None` where the backend cannot tell.
    fn rx_backlog(&mut self) -> Option<(u32, u32)> {
        None
    }
}

/// What a backend needs to open one worker's port on one device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PortSpec {
    /// Linux device name.
    pub ifname: String,
    /// sr6's index of the device (set as `in_dev` on every received frame).
    pub dev: DevId,
    /// Which worker this port belongs to (0-based) and how many workers share the
    /// device: AF_XDP binds queue `worker`, AF_PACKET joins a fanout group.
    pub worker: u32,
    pub workers: u32,
    /// Slots in each of the receive and transmit rings.
    pub ring_frames: u32,
}

impl PortSpec {
    /// A spec with the default ring size (2048 frames).
    pub fn new(ifname: &str, dev: DevId, worker: u32, workers: u32) -> PortSpec {
        PortSpec { ifname: ifname.to_string(), dev, worker, workers, ring_frames: 2048 }
    }
}

/// Nanoseconds of `CLOCK_MONOTONIC`, the clock live ports stamp frames with: its
/// absolute value (the kernel's `bpf_ktime_get_ns`), so that two processes on one host,
/// or sr6 and the kernel, compare their times (End.BPF's one-way delay example).
pub fn now_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid, writable timespec; CLOCK_MONOTONIC always exists.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    (ts.tv_sec as u64).wrapping_mul(1_000_000_000).wrapping_add(ts.tv_nsec as u64)
}

/// Sleeps until one of `pfds` polls readable or `timeout_ms` passes (EINTR included).
pub fn poll_readable(pfds: &mut [libc::pollfd], timeout_ms: i32) {
    // SAFETY: `pfds` is a valid, exclusively borrowed array of `pfds.len()` pollfd
    // structs for the duration of the call; poll(2) only writes their `revents`.
    unsafe {
        libc::poll(pfds.as_mut_ptr(), pfds.len() as libc::nfds_t, timeout_ms);
    }
}

/// An eventfd(2) one thread writes to wake another asleep in [`poll_readable`] on
/// [`fd`](Self::fd) (with its ports' descriptors): a worker told of new tables at once,
/// not at the end of its sleep.
#[derive(Debug)]
pub struct Wake(std::os::fd::OwnedFd);

impl Wake {
    /// A new eventfd, non-blocking.
    pub fn new() -> std::io::Result<Wake> {
        use std::os::fd::FromRawFd;
        // SAFETY: eventfd(2) takes no pointers; a non-negative result is a descriptor
        // this process now owns.
        let fd = unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) };
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: `fd` was just opened and is owned by nothing else.
        Ok(Wake(unsafe { std::os::fd::OwnedFd::from_raw_fd(fd) }))
    }

    /// The descriptor to poll for reading.
    pub fn fd(&self) -> RawFd {
        use std::os::fd::AsRawFd;
        self.0.as_raw_fd()
    }

    /// Makes [`fd`](Self::fd) readable until [`clear`](Self::clear)ed.
    pub fn wake(&self) {
        let one = 1u64.to_ne_bytes();
        // SAFETY: writes 8 bytes from a live local buffer. (A full counter, EAGAIN,
        // is readable already.)
        unsafe { libc::write(self.fd(), one.as_ptr().cast(), one.len()) };
    }

    /// Makes [`fd`](Self::fd) not readable (after a wake-up).
    pub fn clear(&self) {
        let mut buf = [0u8; 8];
        // SAFETY: reads at most 8 bytes into a live local buffer; EAGAIN (nothing
        // written) is fine.
        unsafe { libc::read(self.fd(), buf.as_mut_ptr().cast(), buf.len()) };
    }
}

/// Pins the calling thread to one CPU.
pub fn pin_to_cpu(cpu: usize) -> std::io::Result<()> {
    pin_to_cpus(&[cpu])
}

/// Lets the calling thread run on these CPUs only (an empty list: no change).
pub fn pin_to_cpus(cpus: &[usize]) -> std::io::Result<()> {
    if cpus.is_empty() {
        return Ok(());
    }
    if cpus.iter().any(|&c| c >= libc::CPU_SETSIZE as usize) {
        return Err(std::io::Error::from_raw_os_error(libc::EINVAL));
    }
    // SAFETY: cpu_set_t is plain data for which all-zero is the empty set; CPU_SET
    // writes inside it (each cpu < CPU_SETSIZE, checked above); sched_setaffinity(0,
    // ...) only reads it, for the calling thread.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for &cpu in cpus {
            libc::CPU_SET(cpu, &mut set);
        }
        if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// The index of device `ifname` in the calling thread's network namespace
/// (`if_nametoindex`); `NotFound`-like errors name the device.
pub fn ifindex(ifname: &str) -> std::io::Result<u32> {
    let c = std::ffi::CString::new(ifname)
        .map_err(|_| std::io::Error::new(std::io::ErrorKind::InvalidInput, "NUL in device name"))?;
    // SAFETY: `c` is a valid NUL-terminated string for the duration of the call.
    let i = unsafe { libc::if_nametoindex(c.as_ptr()) };
    if i == 0 {
        let e = std::io::Error::last_os_error();
        return Err(std::io::Error::new(e.kind(), format!("{ifname}: no such device ({e})")));
    }
    Ok(i)
}

/// Moves the calling thread into the network namespace `name` (as `ip netns exec` does,
/// from `/var/run/netns/NAME`). Sockets, XDP attachments and netlink requests made by
/// the thread afterwards belong to that namespace; other threads are not affected.
pub fn enter_netns(name: &str) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    let path = format!("/var/run/netns/{name}");
    let f = std::fs::File::open(&path).map_err(|e| std::io::Error::new(e.kind(), format!("{path}: {e}")))?;
    // SAFETY: `f` is an open namespace file for the duration of the call; setns(2) only
    // changes the calling thread's network namespace and touches no memory of ours.
    let r = unsafe { libc::setns(f.as_raw_fd(), libc::CLONE_NEWNET) };
    if r != 0 {
        let e = std::io::Error::last_os_error();
        return Err(std::io::Error::new(e.kind(), format!("entering network namespace {name}: {e}")));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A wake-up makes the descriptor readable across threads, and a clear takes it
    /// back; a sleep on it ends at the wake-up, not at its timeout.
    #[test]
    fn a_wake_ends_a_sleep_in_poll() {
        let w = std::sync::Arc::new(Wake::new().unwrap());
        let readable = |w: &Wake, ms: i32| {
            let mut p = [libc::pollfd { fd: w.fd(), events: libc::POLLIN, revents: 0 }];
            poll_readable(&mut p, ms);
            p[0].revents & libc::POLLIN != 0
        };
        assert!(!readable(&w, 0));
        w.wake();
        w.wake();
        assert!(readable(&w, 0));
        w.clear();
        assert!(!readable(&w, 0));
        let waker = std::sync::Arc::clone(&w);
        let t = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(20));
            waker.wake();
        });
        // (An hour's timeout: only the wake-up ends it.)
        assert!(readable(&w, 3_600_000));
        t.join().unwrap();
    }
}
