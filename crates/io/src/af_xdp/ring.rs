//! The four AF_XDP rings (fill, completion, RX, TX) as user space sees them: a
//! single-producer/single-consumer ring of `T` in memory shared with the kernel, with
//! free-running 32-bit producer and consumer indices (`<linux/if_xdp.h>`).
//!
//! User space produces into the fill and TX rings ([`ProdRing`]) and consumes the
//! completion and RX rings ([`ConsRing`]). As in the kernel and libxdp, an index is read
//! with acquire and published with release ordering, and each side keeps a cached copy of
//! the other side's index so that most calls touch no shared cache line.

use std::io;
use std::marker::PhantomData;
use std::os::fd::{AsRawFd, OwnedFd};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU32, Ordering};

/// An owned memory mapping, unmapped on drop.
pub(crate) struct Mmap {
    ptr: NonNull<u8>,
    len: usize,
}

// SAFETY: a `Mmap` is the sole owner of its mapping; moving it to another thread moves
// that ownership (nothing else refers to the mapping through a `Mmap`).
unsafe impl Send for Mmap {}

impl Mmap {
    /// Anonymous private read/write memory (the UMEM), zeroed by the kernel.
    pub(crate) fn anonymous(len: usize) -> io::Result<Mmap> {
        // SAFETY: a fresh anonymous mapping at an address the kernel chooses; no existing
        // memory is affected. The result is checked before use.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_POPULATE,
                -1,
                0,
            )
        };
        Mmap::checked(p, len)
    }

    /// A ring of socket `fd` at page offset `pgoff` (shared with the kernel).
    fn ring(fd: &OwnedFd, len: usize, pgoff: u64) -> io::Result<Mmap> {
        // SAFETY: maps `len` bytes of the socket's ring at an address the kernel chooses;
        // no existing memory is affected. The result is checked before use.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_POPULATE,
                fd.as_raw_fd(),
                pgoff as libc::off_t,
            )
        };
        Mmap::checked(p, len)
    }

    fn checked(p: *mut libc::c_void, len: usize) -> io::Result<Mmap> {
        if p == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        NonNull::new(p as *mut u8).map(|ptr| Mmap { ptr, len }).ok_or_else(|| io::Error::other("mmap returned null"))
    }

    pub(crate) fn as_ptr(&self) -> *mut u8 {
        self.ptr.as_ptr()
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }
}

impl Drop for Mmap {
    fn drop(&mut self) {
        // SAFETY: `ptr`/`len` are exactly a mapping this value created and still owns;
        // no reference into it outlives `self` (rings and ports borrow it only within
        // their own lifetime, and they drop it last).
        unsafe { libc::munmap(self.ptr.as_ptr() as *mut libc::c_void, self.len) };
    }
}

/// Where a ring's parts sit in its mapping (`struct xdp_ring_offset`).
#[derive(Clone, Copy)]
pub(crate) struct RingOffsets {
    pub producer: u64,
    pub consumer: u64,
    pub desc: u64,
    pub flags: u64,
}

impl From<libc::xdp_ring_offset> for RingOffsets {
    fn from(o: libc::xdp_ring_offset) -> Self {
        RingOffsets { producer: o.producer, consumer: o.consumer, desc: o.desc, flags: o.flags }
    }
}

/// The state both ring kinds share.
struct Ring<T> {
    producer: NonNull<AtomicU32>,
    consumer: NonNull<AtomicU32>,
    flags: NonNull<AtomicU32>,
    descs: NonNull<T>,
    mask: u32,
    size: u32,
    /// Dropped last: the pointers above point into it.
    _map: Mmap,
    _t: PhantomData<T>,
}

// SAFETY: a `Ring` exclusively owns its mapping (`_map`) and its pointers point only into
// it; the kernel is the only other party, and it synchronises through the atomic indices
// whichever thread user space runs on.
unsafe impl<T: Send> Send for Ring<T> {}

impl<T: Copy> Ring<T> {
    /// Maps the ring of `size` entries (a power of two) at `pgoff` of socket `fd`.
    fn map(fd: &OwnedFd, size: u32, off: RingOffsets, pgoff: u64) -> io::Result<Ring<T>> {
        debug_assert!(size.is_power_of_two());
        let len = off.desc as usize + size as usize * std::mem::size_of::<T>();
        let map = Mmap::ring(fd, len, pgoff)?;
        let base = map.as_ptr();
        let at = |o: u64| -> io::Result<*mut u8> {
            if (o as usize) < len {
                // SAFETY: `o < len`, so the result stays inside the mapping.
                Ok(unsafe { base.add(o as usize) })
            } else {
                Err(io::Error::other("XDP_MMAP_OFFSETS points outside the ring"))
            }
        };
        let producer = at(off.producer)?;
        let consumer = at(off.consumer)?;
        let flags = at(off.flags)?;
        let descs = at(off.desc)?;
        for p in [producer, consumer, flags] {
            if p as usize & (std::mem::align_of::<AtomicU32>() - 1) != 0 {
                return Err(io::Error::other("misaligned ring index"));
            }
        }
        if descs as usize & (std::mem::align_of::<T>() - 1) != 0 {
            return Err(io::Error::other("misaligned ring entries"));
        }
        // The kernel hands out non-null, aligned pointers inside `map` (checked above).
        let nn = |p: *mut u8| NonNull::new(p).ok_or_else(|| io::Error::other("null ring pointer"));
        Ok(Ring {
            producer: nn(producer)?.cast(),
            consumer: nn(consumer)?.cast(),
            flags: nn(flags)?.cast(),
            descs: nn(descs)?.cast(),
            mask: size - 1,
            size,
            _map: map,
            _t: PhantomData,
        })
    }

    fn producer(&self) -> &AtomicU32 {
        // SAFETY: points to an aligned u32 inside `self.map`, which lives as long as
        // `self`; the kernel accesses it atomically too, so an `AtomicU32` view is right.
        unsafe { self.producer.as_ref() }
    }

    fn consumer(&self) -> &AtomicU32 {
        // SAFETY: as in `producer`.
        unsafe { self.consumer.as_ref() }
    }

    fn flags(&self) -> u32 {
        // SAFETY: as in `producer`.
        unsafe { self.flags.as_ref() }.load(Ordering::Acquire)
    }

    /// The entry slot of free-running index `i`.
    fn slot(&self, i: u32) -> *mut T {
        // SAFETY: `i & mask < size`, and the mapping holds `size` entries from `descs`.
        unsafe { self.descs.as_ptr().add((i & self.mask) as usize) }
    }
}

/// A ring user space produces into (fill, TX).
pub(crate) struct ProdRing<T> {
    ring: Ring<T>,
    /// Next index to write (entries before it are written; published up to `published`).
    prod: u32,
    published: u32,
    /// The kernel's consumer index as last read.
    cons: u32,
}

impl<T: Copy> ProdRing<T> {
    pub(crate) fn map(fd: &OwnedFd, size: u32, off: RingOffsets, pgoff: u64) -> io::Result<ProdRing<T>> {
        let ring = Ring::map(fd, size, off, pgoff)?;
        let prod = ring.producer().load(Ordering::Relaxed);
        let cons = ring.consumer().load(Ordering::Acquire);
        Ok(ProdRing { ring, prod, published: prod, cons })
    }

    /// Free slots, reading the kernel's consumer index only if fewer than `want` are
    /// known to be free.
    pub(crate) fn free(&mut self, want: u32) -> u32 {
        let free = self.ring.size - self.prod.wrapping_sub(self.cons);
        if free >= want {
            return free;
        }
        self.cons = self.ring.consumer().load(Ordering::Acquire);
        self.ring.size - self.prod.wrapping_sub(self.cons)
    }

    /// Writes one entry (the caller checked [`ProdRing::free`]); visible to the kernel
    /// after [`ProdRing::publish`].
    pub(crate) fn push(&mut self, v: T) {
        debug_assert!(self.ring.size - self.prod.wrapping_sub(self.cons) > 0);
        // SAFETY: the slot is inside the ring and, being free (the caller checked), not
        // read by the kernel until published; `T` is plain data.
        unsafe { self.ring.slot(self.prod).write(v) };
        self.prod = self.prod.wrapping_add(1);
    }

    /// Makes every pushed entry visible to the kernel. Returns how many were new.
    pub(crate) fn publish(&mut self) -> u32 {
        let n = self.prod.wrapping_sub(self.published);
        if n > 0 {
            self.ring.producer().store(self.prod, Ordering::Release);
            self.published = self.prod;
        }
        n
    }

    /// Published entries the kernel has not consumed yet.
    pub(crate) fn outstanding(&mut self) -> u32 {
        self.cons = self.ring.consumer().load(Ordering::Acquire);
        self.published.wrapping_sub(self.cons)
    }

    /// The kernel asks for a system call to make progress (`XDP_RING_NEED_WAKEUP`).
    pub(crate) fn needs_wakeup(&self) -> bool {
        self.ring.flags() & libc::XDP_RING_NEED_WAKEUP != 0
    }
}

/// A ring user space consumes from (completion, RX).
pub(crate) struct ConsRing<T> {
    ring: Ring<T>,
    /// Next index to read.
    cons: u32,
    /// The kernel's producer index as last read.
    prod: u32,
}

impl<T: Copy> ConsRing<T> {
    pub(crate) fn map(fd: &OwnedFd, size: u32, off: RingOffsets, pgoff: u64) -> io::Result<ConsRing<T>> {
        let ring = Ring::map(fd, size, off, pgoff)?;
        let cons = ring.consumer().load(Ordering::Relaxed);
        let prod = ring.producer().load(Ordering::Acquire);
        Ok(ConsRing { ring, cons, prod })
    }

    /// Entries ready to read, up to `max` (reads the kernel's producer index only when
    /// the cached one shows none).
    pub(crate) fn available(&mut self, max: u32) -> u32 {
        let mut n = self.prod.wrapping_sub(self.cons);
        if n == 0 {
            self.prod = self.ring.producer().load(Ordering::Acquire);
            n = self.prod.wrapping_sub(self.cons);
        }
        // A kernel never produces more than the ring holds; clamp anyway.
        n.min(max).min(self.ring.size)
    }

    /// Slots in the ring.
    pub(crate) fn size(&self) -> u32 {
        self.ring.size
    }

    /// Entries the kernel has published and we have not released (re-reads the
    /// producer index).
    pub(crate) fn level(&mut self) -> u32 {
        self.prod = self.ring.producer().load(Ordering::Acquire);
        self.prod.wrapping_sub(self.cons).min(self.ring.size)
    }

    /// Entry `i` (0-based) after the read position; `i` < [`ConsRing::available`].
    pub(crate) fn get(&self, i: u32) -> T {
        // SAFETY: the slot is inside the ring and was published by the kernel (acquire
        // load of its producer index in `available`), which will not rewrite it before we
        // release it; `T` is plain data.
        unsafe { self.ring.slot(self.cons.wrapping_add(i)).read() }
    }

    /// Hands `n` read entries back to the kernel.
    pub(crate) fn release(&mut self, n: u32) {
        if n > 0 {
            self.cons = self.cons.wrapping_add(n);
            self.ring.consumer().store(self.cons, Ordering::Release);
        }
    }
}
