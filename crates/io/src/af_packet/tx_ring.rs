//! The transmit ring: fixed-size slots, each a frame header, then the frame. A slot is
//! ours while its status is `TP_STATUS_AVAILABLE`; we copy a frame in and set
//! `TP_STATUS_SEND_REQUEST`; `sendto` makes the kernel send every requested slot in
//! order (`TP_STATUS_SENDING` while the device still holds the frame, then AVAILABLE
//! again). Reclaiming is therefore free: a slot is reusable as soon as its status says so.
//!
//! On a socket with `PACKET_VNET_HDR` the kernel reads a `struct virtio_net_hdr` before
//! every frame it sends (counted in `tp_len`): the slot carries 10 zero bytes first
//! (`VIRTIO_NET_HDR_F_NEEDS_CSUM` clear, `VIRTIO_NET_HDR_GSO_NONE`: a finished frame).

use std::ptr::NonNull;
use std::sync::atomic::{AtomicU32, Ordering};

use super::vnet::VNET_HDR_LEN;

/// The frame header format of the transmit ring.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TxVersion {
    /// `tpacket3_hdr` slots on the receiving socket itself (one socket, one mapping).
    V3,
    /// `tpacket2_hdr` slots on a second, transmit-only socket: the fallback for kernels
    /// that refuse a TPACKET_V3 transmit ring.
    V2,
}

impl TxVersion {
    /// Offset of `tp_status` in the slot header.
    const fn status_offset(self) -> usize {
        match self {
            // tpacket3_hdr: next_offset, sec, nsec, snaplen, len, status
            TxVersion::V3 => 20,
            // tpacket2_hdr: status, len, snaplen, ...
            TxVersion::V2 => 0,
        }
    }

    /// Offset of `tp_len` in the slot header.
    const fn len_offset(self) -> usize {
        match self {
            TxVersion::V3 => 16,
            TxVersion::V2 => 4,
        }
    }

    /// Where the frame starts in a slot: the header, aligned to TPACKET_ALIGNMENT
    /// (what the kernel reads as `tp_hdrlen - sizeof(struct sockaddr_ll)`).
    pub(super) const fn data_offset(self) -> usize {
        match self {
            TxVersion::V3 => 48,
            TxVersion::V2 => 32,
        }
    }

    /// The value `PACKET_VERSION` takes.
    pub(super) const fn sockopt(self) -> libc::c_int {
        match self {
            TxVersion::V3 => libc::tpacket_versions::TPACKET_V3 as libc::c_int,
            TxVersion::V2 => libc::tpacket_versions::TPACKET_V2 as libc::c_int,
        }
    }
}

/// Geometry of the transmit ring, as requested from the kernel.
#[derive(Debug, Clone, Copy)]
pub(super) struct TxGeometry {
    pub frame_size: usize,
    pub block_size: usize,
    pub block_nr: usize,
}

impl TxGeometry {
    pub(super) fn frames_per_block(&self) -> usize {
        self.block_size / self.frame_size
    }

    pub(super) fn frame_nr(&self) -> usize {
        self.block_nr * self.frames_per_block()
    }

    pub(super) fn bytes(&self) -> usize {
        self.block_size * self.block_nr
    }
}

/// Writer of the transmit ring. See the module docs.
pub(super) struct TxRing {
    base: NonNull<u8>,
    geo: TxGeometry,
    version: TxVersion,
    /// Bytes of virtio-net header before each frame: 0, or 10 with `PACKET_VNET_HDR`.
    vnet_len: usize,
    /// The next slot to fill (the kernel sends from the same position on).
    head: usize,
    /// Slots set to SEND_REQUEST since the last successful `sendto`.
    pub(super) pending: usize,
}

// SAFETY: `base` points into a mapping owned by the same port; the ring is used by one
// thread at a time (`&mut self`), and the kernel's side is synchronised by the slot
// status words, so moving the ring to another thread is sound.
unsafe impl Send for TxRing {}

impl TxRing {
    /// # Safety
    /// `base` must point to a mapped transmit ring of geometry `geo` and header format
    /// `version`, mapped for as long as the ring is used. `vnet`: the socket has
    /// `PACKET_VNET_HDR` set.
    pub(super) unsafe fn new(base: NonNull<u8>, geo: TxGeometry, version: TxVersion, vnet: bool) -> TxRing {
        TxRing { base, geo, version, vnet_len: if vnet { VNET_HDR_LEN } else { 0 }, head: 0, pending: 0 }
    }

    pub(super) fn version(&self) -> TxVersion {
        self.version
    }

    pub(super) fn slots(&self) -> usize {
        self.geo.frame_nr()
    }

    /// The largest frame a slot holds.
    pub(super) fn capacity(&self) -> usize {
        self.geo.frame_size - self.version.data_offset() - self.vnet_len
    }

    fn slot(&self, i: usize) -> *mut u8 {
        let fpb = self.geo.frames_per_block();
        let off = (i / fpb) * self.geo.block_size + (i % fpb) * self.geo.frame_size;
        // SAFETY: `i < frame_nr`, so the slot lies inside the ring (frames never straddle
        // blocks: the kernel lays out `frames_per_block` whole frames per block).
        unsafe { self.base.as_ptr().add(off) }
    }

    fn status(&self, slot: *mut u8) -> &AtomicU32 {
        // SAFETY: slots are 16-byte aligned (block and frame sizes are multiples of
        // 16), so the u32 status is aligned; it lives as long as the mapping, which
        // outlives `&self`.
        unsafe { &*slot.add(self.version.status_offset()).cast::<AtomicU32>() }
    }

    /// After a `sendto` that failed for good (device down or gone): hands the slots the
    /// kernel did not take back to us and rewinds `head` to the first of them, where
    /// the kernel's own position stopped (it stops at the first frame it cannot send).
    /// Returns how many frames were dropped.
    pub(super) fn discard_pending(&mut self) -> usize {
        let n = self.slots();
        let mut dropped = 0;
        while dropped < self.pending {
            let last = (self.head + n - 1) % n;
            let status = self.status(self.slot(last));
            // The kernel only reads requested slots inside sendto, which is not running.
            if status.load(Ordering::Acquire) != libc::TP_STATUS_SEND_REQUEST {
                break;
            }
            status.store(libc::TP_STATUS_AVAILABLE, Ordering::Release);
            self.head = last;
            dropped += 1;
        }
        self.pending = 0;
        dropped
    }

    /// Copies `frame` (at most [`capacity`](Self::capacity) bytes, checked by the
    /// caller) into the next slot; `false` if that slot is still the kernel's.
    pub(super) fn push(&mut self, frame: &[u8]) -> bool {
        debug_assert!(frame.len() <= self.capacity());
        let slot = self.slot(self.head);
        let v = self.version;
        let status = self.status(slot);
        // WRONG_FORMAT cannot stay (PACKET_LOSS is set) and would be ours anyway.
        if status.load(Ordering::Acquire) & (libc::TP_STATUS_SEND_REQUEST | libc::TP_STATUS_SENDING) != 0 {
            return false;
        }
        // SAFETY: the slot is ours (status AVAILABLE, read with Acquire) and the frame
        // fits after the header (capacity checked by the caller); the source is a
        // distinct Rust slice.
        unsafe {
            let data = slot.add(v.data_offset());
            if self.vnet_len != 0 {
                std::ptr::write_bytes(data, 0, self.vnet_len);
            }
            std::ptr::copy_nonoverlapping(frame.as_ptr(), data.add(self.vnet_len), frame.len());
            slot.add(v.len_offset()).cast::<u32>().write((self.vnet_len + frame.len()) as u32);
            if v == TxVersion::V3 {
                // tp_next_offset: the kernel refuses variable-size slots.
                slot.cast::<u32>().write(0);
            }
        }
        status.store(libc::TP_STATUS_SEND_REQUEST, Ordering::Release);
        self.head = (self.head + 1) % self.slots();
        self.pending += 1;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ptr::addr_of;

    #[test]
    fn header_offsets_match_the_kernel_structs() {
        let h3 = std::mem::MaybeUninit::<libc::tpacket3_hdr>::uninit();
        let h2 = std::mem::MaybeUninit::<libc::tpacket2_hdr>::uninit();
        let (p3, p2) = (h3.as_ptr(), h2.as_ptr());
        // SAFETY: only field addresses are computed; nothing is read.
        unsafe {
            assert_eq!(addr_of!((*p3).tp_status) as usize - p3 as usize, TxVersion::V3.status_offset());
            assert_eq!(addr_of!((*p3).tp_len) as usize - p3 as usize, TxVersion::V3.len_offset());
            assert_eq!(addr_of!((*p2).tp_status) as usize - p2 as usize, TxVersion::V2.status_offset());
            assert_eq!(addr_of!((*p2).tp_len) as usize - p2 as usize, TxVersion::V2.len_offset());
        }
        let align = |n: usize| (n + 15) & !15;
        let sll = std::mem::size_of::<libc::sockaddr_ll>();
        assert_eq!(libc::TPACKET3_HDRLEN - sll, TxVersion::V3.data_offset());
        assert_eq!(libc::TPACKET2_HDRLEN - sll, TxVersion::V2.data_offset());
        assert_eq!(align(std::mem::size_of::<libc::tpacket3_hdr>()), TxVersion::V3.data_offset());
    }

    #[test]
    fn fills_slots_in_order_until_the_kernel_owns_them_all() {
        #[repr(C, align(4096))]
        struct Ring([u8; 8192]);
        let mut ring = Box::new(Ring([0; 8192]));
        let geo = TxGeometry { frame_size: 2048, block_size: 4096, block_nr: 2 };
        let base = NonNull::new(ring.0.as_mut_ptr()).unwrap();
        // SAFETY: `ring` is 8192 bytes laid out as `geo` and outlives `tx`.
        let mut tx = unsafe { TxRing::new(base, geo, TxVersion::V3, false) };
        assert_eq!(tx.slots(), 4);
        for i in 0..4u8 {
            assert!(tx.push(&[i; 60]));
        }
        assert!(!tx.push(&[9; 60]), "every slot requested");
        assert_eq!(tx.pending, 4);
        // Slot 2 is in block 1 at offset 0: status SEND_REQUEST, len 60, frame at 48.
        let s = 4096;
        assert_eq!(u32::from_ne_bytes(ring.0[s + 20..s + 24].try_into().unwrap()), 1);
        assert_eq!(u32::from_ne_bytes(ring.0[s + 16..s + 20].try_into().unwrap()), 60);
        assert_eq!(ring.0[s + 48], 2);
        // The kernel sent slot 0: it is reusable, the next push lands there.
        // SAFETY: slot 0's status word, written through the ring's own pointer.
        unsafe { base.as_ptr().add(20).cast::<u32>().write(0) };
        assert!(tx.push(&[7; 60]));
        assert_eq!(ring.0[48], 7);
    }

    #[test]
    fn a_failed_send_hands_back_the_untaken_slots_and_rewinds() {
        #[repr(C, align(4096))]
        struct Ring([u8; 8192]);
        let mut ring = Box::new(Ring([0; 8192]));
        let geo = TxGeometry { frame_size: 2048, block_size: 4096, block_nr: 2 };
        let base = NonNull::new(ring.0.as_mut_ptr()).unwrap();
        // SAFETY: `ring` is 8192 bytes laid out as `geo` and outlives `tx`.
        let mut tx = unsafe { TxRing::new(base, geo, TxVersion::V2, false) };
        for i in 0..3u8 {
            assert!(tx.push(&[i; 60]));
        }
        // The kernel took slot 0 (still SENDING), then failed: slots 1 and 2 remain.
        // SAFETY: slot 0's status word, written through the ring's own pointer.
        unsafe { base.as_ptr().cast::<u32>().write(libc::TP_STATUS_SENDING) };
        assert_eq!(tx.discard_pending(), 2);
        assert_eq!(tx.pending, 0);
        // The next frame goes where the kernel will look: slot 1.
        assert!(tx.push(&[9; 60]));
        assert_eq!(ring.0[2048 + 32], 9);
        assert_eq!(u32::from_ne_bytes(ring.0[4096..4100].try_into().unwrap()), 0, "slot 2 free");
    }

    #[test]
    fn with_a_vnet_header_each_frame_follows_ten_zero_bytes() {
        #[repr(C, align(4096))]
        struct Ring([u8; 4096]);
        let mut ring = Box::new(Ring([0xee; 4096]));
        let geo = TxGeometry { frame_size: 2048, block_size: 4096, block_nr: 1 };
        let base = NonNull::new(ring.0.as_mut_ptr()).unwrap();
        // Status words AVAILABLE (0).
        ring.0[20..24].fill(0);
        ring.0[2048 + 20..2048 + 24].fill(0);
        // SAFETY: `ring` is 4096 bytes laid out as `geo` and outlives `tx`.
        let mut tx = unsafe { TxRing::new(base, geo, TxVersion::V3, true) };
        assert_eq!(tx.capacity(), 2048 - 48 - 10);
        assert!(tx.push(&[7; 60]));
        assert_eq!(u32::from_ne_bytes(ring.0[16..20].try_into().unwrap()), 70, "tp_len counts the header");
        assert_eq!(ring.0[48..58], [0; 10]);
        assert_eq!(ring.0[58..118], [7; 60]);
    }
}
