//! One AF_XDP socket with its own UMEM, and the [`Port`] implementation on top.
//!
//! Each port owns a UMEM of `2 × ring` frames of [`FRAME_SIZE`] bytes: the first half
//! circulates between the fill ring, the kernel and the RX ring (a received frame is
//! copied into a [`PacketBuf`] and its UMEM frame goes straight back to the fill ring);
//! the second half is the transmit pool (a stack of free frames, filled from the
//! completion ring). Nothing is allocated per packet.
//!
//! The socket is bound with `XDP_USE_NEED_WAKEUP`, so a system call is made only when
//! the kernel asks for one (always for TX in copy mode: one `sendto` per flush). In copy
//! mode the kernel's per-call transmit budget (32 frames by default) is raised to the
//! ring size with `XDP_MAX_TX_SKB_BUDGET` where the kernel has it (6.17+), so that one
//! flush sends everything queued.

use std::io;
use std::mem::size_of;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

use sr6_core::packet::{DevId, PacketBuf};

use super::ring::{ConsRing, Mmap, ProdRing, RingOffsets};
use crate::bpf::{self, Map};
use crate::live::{now_ns, Port, PortStats};

/// Size of one UMEM frame (one page: the largest the kernel accepts in aligned mode).
pub const FRAME_SIZE: u32 = 4096;
/// Bytes the kernel keeps in front of a received frame (`XDP_PACKET_HEADROOM`).
const XDP_PACKET_HEADROOM: u32 = 256;
/// The largest frame a port receives (larger ones are dropped by the kernel and counted
/// in its `rx_dropped`) or transmits.
pub const MAX_RX_FRAME: usize = (FRAME_SIZE - XDP_PACKET_HEADROOM) as usize;
pub const MAX_TX_FRAME: usize = FRAME_SIZE as usize;
/// `setsockopt(SOL_XDP, XDP_MAX_TX_SKB_BUDGET)` (Linux 6.17+; older kernels refuse it).
const XDP_MAX_TX_SKB_BUDGET: libc::c_int = 9;
/// Largest ring accepted (UMEM = 2 × ring × 4 KiB = 256 MiB at this size).
const MAX_RING: u32 = 1 << 15;

/// The kernel's `XDP_STATISTICS` for one socket.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct XskStatistics {
    /// Dropped for other reasons than a full RX ring: no free fill-ring frame, or a
    /// frame larger than a UMEM frame.
    pub rx_dropped: u64,
    pub rx_invalid_descs: u64,
    pub tx_invalid_descs: u64,
    /// Dropped because the RX ring was full.
    pub rx_ring_full: u64,
    /// Times the kernel found the fill ring empty.
    pub rx_fill_ring_empty_descs: u64,
    pub tx_ring_empty_descs: u64,
}

/// One worker's AF_XDP socket on one device queue. See the module docs.
pub struct XskPort {
    // Rings first, so that they are unmapped before the socket closes; the UMEM last.
    fill: ProdRing<u64>,
    comp: ConsRing<u64>,
    rx: ConsRing<libc::xdp_desc>,
    tx: ProdRing<libc::xdp_desc>,
    fd: OwnedFd,
    umem: Mmap,
    /// Free transmit frames (UMEM offsets); capacity fixed at the ring size.
    tx_free: Vec<u64>,
    ifname: String,
    dev: DevId,
    queue: u32,
    zero_copy: bool,
    stats: PortStats,
}

fn setsockopt<T>(fd: &OwnedFd, name: libc::c_int, v: &T) -> io::Result<()> {
    // SAFETY: `v` points to a valid `T` for the duration of the call and its exact size
    // is passed; the kernel only reads it.
    let r = unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            libc::SOL_XDP,
            name,
            v as *const T as *const libc::c_void,
            size_of::<T>() as libc::socklen_t,
        )
    };
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// `getsockopt(SOL_XDP, name)` into a zeroed `T`; returns it and the length written.
fn getsockopt<T: Copy>(fd: RawFd, name: libc::c_int, mut v: T) -> io::Result<(T, usize)> {
    let mut len = size_of::<T>() as libc::socklen_t;
    // SAFETY: `v` is a valid, writable `T` and `len` its size; the kernel writes at most
    // `len` bytes and updates `len`.
    let r = unsafe { libc::getsockopt(fd, libc::SOL_XDP, name, &mut v as *mut T as *mut libc::c_void, &mut len) };
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok((v, len as usize))
    }
}

impl XskPort {
    /// Creates the socket and its UMEM, binds it to queue `queue` of `ifindex` and puts
    /// it in the XSKMAP `xsks` at index `queue`. `copy` forces copy mode; otherwise the
    /// kernel uses zero-copy where the driver supports it.
    pub(crate) fn open(
        ifname: &str,
        ifindex: u32,
        queue: u32,
        dev: DevId,
        ring_frames: u32,
        copy: bool,
        xsks: &Map,
    ) -> io::Result<XskPort> {
        let ctx = |what: &str| format!("AF_XDP socket on {ifname} queue {queue}: {what}");
        if ring_frames == 0 {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, ctx("ring_frames is 0")));
        }
        let ring = ring_frames.min(MAX_RING).next_power_of_two();

        // SAFETY: plain socket(2); the result is checked and owned at once.
        let raw = unsafe { libc::socket(libc::AF_XDP, libc::SOCK_RAW | libc::SOCK_CLOEXEC, 0) };
        if raw < 0 {
            return Err(bpf::context(io::Error::last_os_error(), &ctx("socket(AF_XDP)")));
        }
        // SAFETY: `raw` is a new descriptor nothing else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };

        let umem_len = 2 * ring as usize * FRAME_SIZE as usize;
        let umem = Mmap::anonymous(umem_len).map_err(|e| bpf::context(e, &ctx("mmap UMEM")))?;
        let reg = libc::xdp_umem_reg {
            addr: umem.as_ptr() as u64,
            len: umem_len as u64,
            chunk_size: FRAME_SIZE,
            headroom: 0,
            flags: 0,
            tx_metadata_len: 0,
        };
        setsockopt(&fd, libc::XDP_UMEM_REG, &reg).map_err(|e| bpf::context(e, &ctx("XDP_UMEM_REG")))?;
        for (opt, name) in [
            (libc::XDP_UMEM_FILL_RING, "XDP_UMEM_FILL_RING"),
            (libc::XDP_UMEM_COMPLETION_RING, "XDP_UMEM_COMPLETION_RING"),
            (libc::XDP_RX_RING, "XDP_RX_RING"),
            (libc::XDP_TX_RING, "XDP_TX_RING"),
        ] {
            setsockopt(&fd, opt, &ring).map_err(|e| bpf::context(e, &ctx(name)))?;
        }
        // SAFETY: `xdp_mmap_offsets` is plain integers: all-zero is a valid value.
        let zero: libc::xdp_mmap_offsets = unsafe { std::mem::zeroed() };
        let (off, len) = getsockopt(fd.as_raw_fd(), libc::XDP_MMAP_OFFSETS, zero)
            .map_err(|e| bpf::context(e, &ctx("XDP_MMAP_OFFSETS")))?;
        if len != size_of::<libc::xdp_mmap_offsets>() {
            return Err(io::Error::new(io::ErrorKind::Unsupported, ctx("kernel too old (no ring flags; needs 5.4+)")));
        }
        let map_err = |name: &'static str| move |e| bpf::context(e, &ctx(&format!("mmap {name} ring")));
        let mut fill = ProdRing::<u64>::map(&fd, ring, RingOffsets::from(off.fr), libc::XDP_UMEM_PGOFF_FILL_RING)
            .map_err(map_err("fill"))?;
        let comp = ConsRing::<u64>::map(&fd, ring, RingOffsets::from(off.cr), libc::XDP_UMEM_PGOFF_COMPLETION_RING)
            .map_err(map_err("completion"))?;
        let rx = ConsRing::map(&fd, ring, RingOffsets::from(off.rx), libc::XDP_PGOFF_RX_RING as u64)
            .map_err(map_err("RX"))?;
        let tx = ProdRing::map(&fd, ring, RingOffsets::from(off.tx), libc::XDP_PGOFF_TX_RING as u64)
            .map_err(map_err("TX"))?;

        // The receive half of the UMEM goes to the fill ring before binding, so that the
        // first frames find buffers.
        let have = fill.free(ring);
        for i in 0..ring.min(have) {
            fill.push(i as u64 * FRAME_SIZE as u64);
        }
        fill.publish();
        let mut tx_free = Vec::with_capacity(ring as usize);
        tx_free.extend((ring..2 * ring).rev().map(|i| i as u64 * FRAME_SIZE as u64));

        let flags = libc::XDP_USE_NEED_WAKEUP | if copy { libc::XDP_COPY } else { 0 };
        let sa = libc::sockaddr_xdp {
            sxdp_family: libc::AF_XDP as u16,
            sxdp_flags: flags,
            sxdp_ifindex: ifindex,
            sxdp_queue_id: queue,
            sxdp_shared_umem_fd: 0,
        };
        // SAFETY: `sa` is a valid `sockaddr_xdp` and its exact size is passed.
        let r = unsafe {
            libc::bind(
                fd.as_raw_fd(),
                &sa as *const libc::sockaddr_xdp as *const libc::sockaddr,
                size_of::<libc::sockaddr_xdp>() as libc::socklen_t,
            )
        };
        if r < 0 {
            let e = io::Error::last_os_error();
            let why = match e.raw_os_error() {
                Some(libc::EBUSY) => "bind: the queue already has an AF_XDP socket",
                Some(libc::EINVAL) => "bind: no such queue on this device (or the device refused AF_XDP)",
                _ => "bind",
            };
            return Err(bpf::context(e, &ctx(why)));
        }
        // SAFETY: `xdp_options` is a plain integer: zero is valid.
        let opts: libc::xdp_options = unsafe { std::mem::zeroed() };
        let zero_copy = getsockopt(fd.as_raw_fd(), libc::XDP_OPTIONS, opts)
            .map(|(o, _)| o.flags & libc::XDP_OPTIONS_ZEROCOPY != 0)
            .unwrap_or(false);
        if !zero_copy {
            // Best effort (Linux 6.17+): one sendto sends the whole ring, not 32 frames.
            let _ = setsockopt(&fd, XDP_MAX_TX_SKB_BUDGET, &ring);
        }
        xsks.update(&queue.to_ne_bytes(), &fd.as_raw_fd().to_ne_bytes())
            .map_err(|e| bpf::context(e, &ctx("insert into the XSKMAP")))?;

        Ok(XskPort {
            fill,
            comp,
            rx,
            tx,
            fd,
            umem,
            tx_free,
            ifname: ifname.to_string(),
            dev,
            queue,
            zero_copy,
            stats: PortStats::default(),
        })
    }

    /// The device queue this socket is bound to.
    pub fn queue(&self) -> u32 {
        self.queue
    }

    /// Whether the kernel runs this socket in zero-copy mode (else copy mode).
    pub fn zero_copy(&self) -> bool {
        self.zero_copy
    }

    /// The kernel's `XDP_STATISTICS` for this socket (fields a kernel does not report
    /// stay 0).
    pub fn xdp_statistics(&self) -> io::Result<XskStatistics> {
        // SAFETY: `xdp_statistics` is plain integers: all-zero is a valid value.
        let zero: libc::xdp_statistics = unsafe { std::mem::zeroed() };
        let (s, _) = getsockopt(self.fd.as_raw_fd(), libc::XDP_STATISTICS, zero)?;
        Ok(XskStatistics {
            rx_dropped: s.rx_dropped,
            rx_invalid_descs: s.rx_invalid_descs,
            tx_invalid_descs: s.tx_invalid_descs,
            rx_ring_full: s.rx_ring_full,
            rx_fill_ring_empty_descs: s.rx_fill_ring_empty_descs,
            tx_ring_empty_descs: s.tx_ring_empty_descs,
        })
    }

    /// The received frame of a descriptor, if it lies inside the receive half.
    fn rx_frame(&self, d: libc::xdp_desc) -> Option<&[u8]> {
        let start = usize::try_from(d.addr).ok()?;
        let end = start.checked_add(d.len as usize)?;
        if end > self.umem.len() / 2 {
            return None;
        }
        // SAFETY: `start..end` lies inside the UMEM mapping (checked above), which lives
        // as long as `self`; the kernel wrote this frame before publishing its descriptor
        // and does not touch it again until we return it to the fill ring.
        Some(unsafe { std::slice::from_raw_parts(self.umem.as_ptr().add(start), end - start) })
    }

    /// Moves completed transmit frames back to the free stack.
    fn reap(&mut self) {
        let n = self.comp.available(u32::MAX);
        let tx_half = (self.umem.len() / 2) as u64..self.umem.len() as u64;
        for i in 0..n {
            let a = self.comp.get(i) & !(FRAME_SIZE as u64 - 1);
            // Never grows the vector (it holds at most the ring size).
            if tx_half.contains(&a) && self.tx_free.len() < self.tx_free.capacity() {
                self.tx_free.push(a);
            }
        }
        self.comp.release(n);
    }

    /// `sendto(MSG_DONTWAIT)`: tells the kernel the TX ring has work.
    fn kick_tx(&self) -> io::Result<()> {
        // SAFETY: a zero-length sendto with no buffer and no address; nothing is read.
        let r =
            unsafe { libc::sendto(self.fd.as_raw_fd(), std::ptr::null(), 0, libc::MSG_DONTWAIT, std::ptr::null(), 0) };
        if r >= 0 {
            return Ok(());
        }
        let e = io::Error::last_os_error();
        match e.raw_os_error() {
            // Transient: the budget ran out, the driver is busy, the device is down.
            // The descriptors stay in the ring for the next flush.
            Some(libc::EAGAIN | libc::EBUSY | libc::ENOBUFS | libc::ENETDOWN | libc::ENXIO) => Ok(()),
            _ => Err(e),
        }
    }

    /// `recvfrom(MSG_DONTWAIT)`: tells the kernel the fill ring has buffers.
    fn kick_rx(&self) {
        // SAFETY: a zero-length recvfrom with no buffer and no address; nothing is written.
        unsafe {
            libc::recvfrom(
                self.fd.as_raw_fd(),
                std::ptr::null_mut(),
                0,
                libc::MSG_DONTWAIT,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
            )
        };
    }
}

impl Port for XskPort {
    fn ifname(&self) -> &str {
        &self.ifname
    }

    fn rx_burst(&mut self, bufs: &mut [PacketBuf]) -> io::Result<usize> {
        let want = u32::try_from(bufs.len()).unwrap_or(u32::MAX);
        let avail = self.rx.available(want);
        if avail == 0 {
            if self.fill.needs_wakeup() {
                self.kick_rx();
            }
            return Ok(0);
        }
        // Every frame read goes back to the fill ring; it has room for all of them (it
        // is as large as the receive half), but never take more than it can hold.
        let n = avail.min(self.fill.free(avail));
        let ts = now_ns();
        let mut got = 0usize;
        for i in 0..n {
            let d = self.rx.get(i);
            if let Some(frame) = self.rx_frame(d) {
                let b = &mut bufs[got];
                if b.load(frame, self.dev) {
                    b.ts_ns = ts;
                    got += 1;
                } else {
                    self.stats.rx_oversized += 1;
                }
            }
            self.fill.push(d.addr & !(FRAME_SIZE as u64 - 1));
        }
        self.rx.release(n);
        self.fill.publish();
        if self.fill.needs_wakeup() {
            self.kick_rx();
        }
        self.stats.rx += got as u64;
        Ok(got)
    }

    fn tx_queue(&mut self, frame: &[u8]) -> bool {
        if frame.is_empty() || frame.len() > MAX_TX_FRAME {
            // Cannot be sent through a UMEM frame: dropped like a full ring.
            self.stats.tx_ring_full += 1;
            return false;
        }
        if self.tx_free.is_empty() {
            self.reap();
        }
        if self.tx_free.is_empty() || self.tx.free(1) == 0 {
            self.stats.tx_ring_full += 1;
            return false;
        }
        let Some(addr) = self.tx_free.pop() else { return false };
        // SAFETY: `addr` is a transmit frame taken from the free stack, so no descriptor
        // the kernel can read refers to it; `addr + FRAME_SIZE <= umem.len()` (frames of
        // the transmit half only enter the stack), and `frame.len() <= FRAME_SIZE`.
        unsafe { std::ptr::copy_nonoverlapping(frame.as_ptr(), self.umem.as_ptr().add(addr as usize), frame.len()) };
        self.tx.push(libc::xdp_desc { addr, len: frame.len() as u32, options: 0 });
        true
    }

    fn tx_flush(&mut self) -> io::Result<()> {
        let n = self.tx.publish();
        self.stats.tx += n as u64;
        // Also kick when an earlier flush left descriptors behind (a kernel budget).
        let r = if (n > 0 || self.tx.outstanding() > 0) && self.tx.needs_wakeup() { self.kick_tx() } else { Ok(()) };
        self.reap();
        r
    }

    fn fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    fn rx_backlog(&mut self) -> Option<(u32, u32)> {
        Some((self.rx.level(), self.rx.size()))
    }

    fn stats(&self) -> PortStats {
        let mut s = self.stats;
        if let Ok(k) = self.xdp_statistics() {
            s.rx_ring_full = k.rx_ring_full + k.rx_dropped;
        }
        s
    }
}

impl std::fmt::Debug for XskPort {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("XskPort")
            .field("ifname", &self.ifname)
            .field("queue", &self.queue)
            .field("fd", &self.fd.as_raw_fd())
            .field("zero_copy", &self.zero_copy)
            .finish()
    }
}
