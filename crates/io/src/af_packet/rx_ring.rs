//! The TPACKET_V3 receive ring: blocks the kernel fills with variable-size frames and
//! hands over whole (status `TP_STATUS_USER`), read in order and handed back
//! (`TP_STATUS_KERNEL`) once every frame in them has been copied out.

use std::ptr::{addr_of, addr_of_mut, NonNull};
use std::sync::atomic::{AtomicU32, Ordering};

use super::vnet::{needs_work, VnetHdr, VNET_HDR_LEN};

/// One frame in a user-owned block, valid until [`RxRing::consume`].
pub(super) struct RxFrame<'a> {
    /// The captured bytes (the whole frame unless `wire_len` is larger).
    pub data: &'a [u8],
    /// The frame's length on the wire.
    pub wire_len: usize,
    /// The 802.1Q tag the kernel stripped into metadata (TPID, TCI), to be put back.
    pub vlan: Option<(u16, u16)>,
    /// The virtio-net header right before the frame in the ring (with `PACKET_VNET_HDR`).
    pub vnet: Option<&'a [u8; VNET_HDR_LEN]>,
}

impl RxFrame<'_> {
    /// Whether the virtio-net header asks for anything: one test of two bytes, one
    /// branch when there is no header.
    #[inline(always)]
    pub(super) fn vnet_work(&self) -> bool {
        self.vnet.is_some_and(needs_work)
    }

    /// The virtio-net header decoded (all zero without one).
    pub(super) fn vnet_hdr(&self) -> VnetHdr {
        self.vnet.map_or_else(VnetHdr::default, |h| VnetHdr::parse(*h))
    }
}

/// Reader of the receive ring. See the module docs.
pub(super) struct RxRing {
    /// Block 0 (page aligned, inside the port's mapping).
    base: NonNull<u8>,
    block_size: usize,
    block_nr: usize,
    /// The block being read (or waited for).
    block: usize,
    /// Frames of `block` not yet consumed; 0 when `block` has not been opened yet.
    left: u32,
    /// Offset of the next frame's `tpacket3_hdr` in `block`.
    offset: usize,
    /// `PACKET_VNET_HDR` is set: a `struct virtio_net_hdr` precedes every frame.
    vnet: bool,
}

// SAFETY: `base` points into a mapping owned by the same port; the ring is used by one
// thread at a time (`&mut self`), and the kernel's side is synchronised by the block
// status words, so moving the ring to another thread is sound.
unsafe impl Send for RxRing {}

impl RxRing {
    /// # Safety
    /// `base` must point to `block_nr` blocks of `block_size` bytes of a TPACKET_V3
    /// receive ring, mapped for as long as the ring is used. `vnet`: the socket has
    /// `PACKET_VNET_HDR` set.
    pub(super) unsafe fn new(base: NonNull<u8>, block_size: usize, block_nr: usize, vnet: bool) -> RxRing {
        RxRing { base, block_size, block_nr, block: 0, left: 0, offset: 0, vnet }
    }

    fn block_desc(&self) -> *mut libc::tpacket_block_desc {
        // SAFETY: `block < block_nr`, so the offset stays inside the mapping.
        unsafe { self.base.as_ptr().add(self.block * self.block_size).cast() }
    }

    fn status(&self) -> &AtomicU32 {
        // SAFETY: the block descriptor starts every block (page aligned, so the u32 is
        // aligned); the kernel and we access `block_status` only atomically-by-protocol,
        // and the mapping outlives `&self`.
        unsafe { &*addr_of_mut!((*self.block_desc()).hdr.bh1.block_status).cast::<AtomicU32>() }
    }

    /// Hands the current block back to the kernel and moves to the next one.
    fn release(&mut self) {
        self.status().store(libc::TP_STATUS_KERNEL, Ordering::Release);
        self.block = (self.block + 1) % self.block_nr;
        self.left = 0;
    }

    /// The next received frame, or `None` when the kernel has handed over nothing more.
    /// Never blocks; a block whose headers do not make sense is handed back whole.
    #[inline(always)]
    pub(super) fn peek(&mut self) -> Option<RxFrame<'_>> {
        // At most one pass over the ring: released blocks belong to the kernel again.
        for _ in 0..=self.block_nr {
            if self.left == 0 {
                if self.status().load(Ordering::Acquire) & libc::TP_STATUS_USER == 0 {
                    return None;
                }
                // SAFETY: the block is ours (status USER, read with Acquire, so the
                // kernel's writes to it are visible); the header is inside the block.
                let (num, first) = unsafe {
                    let h = addr_of!((*self.block_desc()).hdr.bh1);
                    ((*h).num_pkts, (*h).offset_to_first_pkt as usize)
                };
                if num == 0 {
                    self.release();
                    continue;
                }
                self.left = num;
                self.offset = first;
            }
            match self.frame_at(self.offset) {
                Some(f) => {
                    // Re-borrow with the right lifetime (frame_at borrows `self` shortly).
                    let (start, len, wire_len, vlan, vnet) = f;
                    // SAFETY: `start..start + len` was checked inside the current block,
                    // which stays ours until `consume` hands it back (that needs `&mut
                    // self`, which the returned borrow prevents); with `vnet`, so were
                    // the VNET_HDR_LEN bytes before `start` (after the frame's header).
                    let (data, vnet) = unsafe {
                        let p = self.base.as_ptr().add(start);
                        let h = if vnet { Some(&*p.sub(VNET_HDR_LEN).cast::<[u8; VNET_HDR_LEN]>()) } else { None };
                        (std::slice::from_raw_parts(p, len), h)
                    };
                    return Some(RxFrame { data, wire_len, vlan, vnet });
                }
                None => self.release(),
            }
        }
        None
    }

    /// Validates the frame header at `offset` of the current block: (ring offset of the
    /// data, captured length, wire length, VLAN tag, whether a virtio-net header precedes
    /// the data).
    #[allow(clippy::type_complexity)]
    fn frame_at(&self, offset: usize) -> Option<(usize, usize, usize, Option<(u16, u16)>, bool)> {
        if offset & 3 != 0 || offset + std::mem::size_of::<libc::tpacket3_hdr>() > self.block_size {
            return None;
        }
        // SAFETY: inside the current, user-owned block (checked above), 4-byte aligned
        // as tpacket3_hdr needs; the kernel does not write a block it handed over.
        let h: libc::tpacket3_hdr = unsafe { std::ptr::read(self.block_desc().cast::<u8>().add(offset).cast()) };
        let start = offset + usize::from(h.tp_mac);
        let len = h.tp_snaplen as usize;
        if start + len > self.block_size {
            return None;
        }
        let vlan = (h.tp_status & libc::TP_STATUS_VLAN_VALID != 0).then(|| {
            let tpid = if h.tp_status & libc::TP_STATUS_VLAN_TPID_VALID != 0 { h.hv1.tp_vlan_tpid } else { 0x8100 };
            (tpid, h.hv1.tp_vlan_tci as u16)
        });
        // With PACKET_VNET_HDR the kernel writes the virtio-net header right before the
        // frame (at tp_mac - 10, after the tpacket3_hdr and the sockaddr_ll). It always
        // leaves that room; a frame without it (none the kernel makes) is taken as
        // having no header.
        let vnet = self.vnet && usize::from(h.tp_mac) >= std::mem::size_of::<libc::tpacket3_hdr>() + VNET_HDR_LEN;
        Some((self.block * self.block_size + start, len, h.tp_len as usize, vlan, vnet))
    }

    /// Moves past the frame [`peek`](Self::peek) returned, handing its block back to the
    /// kernel when it was the block's last.
    pub(super) fn consume(&mut self) {
        if self.left == 0 {
            return;
        }
        self.left -= 1;
        if self.left == 0 {
            self.release();
            return;
        }
        // SAFETY: the current frame's header was validated by `peek`.
        let next = unsafe {
            let h = self.block_desc().cast::<u8>().add(self.offset).cast::<libc::tpacket3_hdr>();
            (*h).tp_next_offset as usize
        };
        if next == 0 {
            // The kernel says there is no next frame although `num_pkts` did: give up
            // on the block rather than read the same frame twice.
            self.release();
        } else {
            self.offset += next;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_status_is_where_the_kernel_puts_it() {
        // struct tpacket_block_desc { __u32 version; __u32 offset_to_priv;
        //   union { struct tpacket_hdr_v1 { __u32 block_status; __u32 num_pkts; ... } } }
        let d = std::mem::MaybeUninit::<libc::tpacket_block_desc>::uninit();
        let p = d.as_ptr();
        // SAFETY: only field addresses are computed; nothing is read.
        let (status, num) =
            unsafe { (addr_of!((*p).hdr.bh1.block_status) as usize, addr_of!((*p).hdr.bh1.num_pkts) as usize) };
        assert_eq!(status - p as usize, 8);
        assert_eq!(num - p as usize, 12);
        assert_eq!(std::mem::size_of::<libc::tpacket3_hdr>(), 48);
    }

    /// A fake two-block ring laid out as the kernel would: the reader walks it in order,
    /// puts back VLAN tags' metadata, and hands blocks back.
    #[test]
    fn walks_frames_across_blocks_and_releases() {
        const BS: usize = 4096;
        #[repr(C, align(4096))]
        struct Ring([u8; 2 * BS]);
        let mut ring = Box::new(Ring([0; 2 * BS]));
        let put_u32 = |r: &mut Ring, at: usize, v: u32| r.0[at..at + 4].copy_from_slice(&v.to_ne_bytes());
        let put_u16 = |r: &mut Ring, at: usize, v: u16| r.0[at..at + 2].copy_from_slice(&v.to_ne_bytes());
        // Block 0: two frames at offsets 48 and 176 (the second VLAN-tagged); block 1:
        // one frame at 48. Each: (offset, tp_next_offset, fill byte).
        let layout: [Vec<(usize, u32, u8)>; 2] = [vec![(48, 128, 3), (176, 0, 5)], vec![(48, 0, 7)]];
        for (block, frames) in layout.iter().enumerate() {
            let b = block * BS;
            put_u32(&mut ring, b + 8, libc::TP_STATUS_USER);
            put_u32(&mut ring, b + 12, frames.len() as u32);
            put_u32(&mut ring, b + 16, 48);
            for &(off, next, fill) in frames {
                let h = b + off;
                put_u32(&mut ring, h, next);
                put_u32(&mut ring, h + 12, 20); // snaplen
                put_u32(&mut ring, h + 16, 20); // len
                let vlan = if fill == 5 { libc::TP_STATUS_VLAN_VALID } else { 0 };
                put_u32(&mut ring, h + 20, libc::TP_STATUS_USER | vlan);
                put_u16(&mut ring, h + 24, 80); // tp_mac
                put_u32(&mut ring, h + 32, 0x2064); // hv1.tp_vlan_tci
                ring.0[h + 80..h + 100].fill(fill);
            }
        }
        let base = NonNull::new(ring.0.as_mut_ptr()).unwrap();
        // SAFETY: `ring` is two blocks of BS bytes laid out as above and outlives `rx`.
        let mut rx = unsafe { RxRing::new(base, BS, 2, false) };
        let mut seen = Vec::new();
        while let Some(f) = rx.peek() {
            seen.push((f.data[0], f.data.len(), f.wire_len, f.vlan));
            rx.consume();
        }
        assert_eq!(seen, vec![(3, 20, 20, None), (5, 20, 20, Some((0x8100, 0x2064))), (7, 20, 20, None)]);
        assert_eq!(ring.0[8], 0, "block 0 handed back");
        assert_eq!(ring.0[BS + 8], 0, "block 1 handed back");
    }

    /// With `PACKET_VNET_HDR` the header is read from the 10 bytes before the frame; a
    /// frame with no room for it (tp_mac too small) has none.
    #[test]
    fn reads_the_virtio_net_header_before_the_frame() {
        const BS: usize = 4096;
        #[repr(C, align(4096))]
        struct Ring([u8; BS]);
        let mut ring = Box::new(Ring([0; BS]));
        let put_u32 = |r: &mut Ring, at: usize, v: u32| r.0[at..at + 4].copy_from_slice(&v.to_ne_bytes());
        let put_u16 = |r: &mut Ring, at: usize, v: u16| r.0[at..at + 2].copy_from_slice(&v.to_ne_bytes());
        put_u32(&mut ring, 8, libc::TP_STATUS_USER);
        put_u32(&mut ring, 12, 2);
        put_u32(&mut ring, 16, 48);
        // Frame 1 at 48: tp_mac 90, virtio-net header at 48 + 80: NEEDS_CSUM, start 54,
        // offset 6. Frame 2 at 256: tp_mac 52 (no room).
        for (h, next, mac) in [(48usize, 208u32, 90u16), (256, 0, 52)] {
            put_u32(&mut ring, h, next);
            put_u32(&mut ring, h + 12, 20);
            put_u32(&mut ring, h + 16, 20);
            put_u32(&mut ring, h + 20, libc::TP_STATUS_USER);
            put_u16(&mut ring, h + 24, mac);
        }
        ring.0[48 + 80] = 1;
        put_u16(&mut ring, 48 + 86, 54);
        put_u16(&mut ring, 48 + 88, 6);
        let base = NonNull::new(ring.0.as_mut_ptr()).unwrap();
        // SAFETY: `ring` is one block of BS bytes laid out as above and outlives `rx`.
        let mut rx = unsafe { RxRing::new(base, BS, 1, true) };
        let f = rx.peek().unwrap();
        assert_eq!(f.vnet_hdr(), VnetHdr { flags: 1, gso_type: 0, csum_start: 54, csum_offset: 6 });
        assert!(f.vnet_work());
        rx.consume();
        let f = rx.peek().unwrap();
        assert_eq!((f.vnet, f.vnet_work(), f.vnet_hdr()), (None, false, VnetHdr::default()));
        rx.consume();
        assert!(rx.peek().is_none());
    }
}
