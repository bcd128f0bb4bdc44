//! A [`PacketBuf`] as the bytes an eBPF program runs on ([`PacketBytes`]): End.BPF's
//! programs and their helpers work on the packet where it lies, with no copy in or out.
//! The view starts at the network header, `l2` bytes into the frame (the fast path's
//! frames still have their Ethernet header, the general path's do not). A helper that
//! grows the packet (an SRH pushed, TLV space opened) moves what lies in front of the
//! gap — the headers, the Ethernet header with them — towards the front, into the
//! headroom, as the kernel's `skb_push` and `memmove` do; one that shrinks it moves them
//! back. A gap the headroom cannot take is refused (the helper returns `-ENOMEM`).

use std::ops::{Deref, DerefMut};

use sr6_bpf::bytes::PacketBytes;

use crate::packet::PacketBuf;

/// The frame of `p` from byte `l2` on.
pub struct BufBytes<'a> {
    p: &'a mut PacketBuf,
    l2: usize,
}

impl<'a> BufBytes<'a> {
    /// The view of `p` from byte `l2` on (empty if the frame is shorter).
    pub fn new(p: &'a mut PacketBuf, l2: usize) -> BufBytes<'a> {
        BufBytes { p, l2 }
    }
}

impl Deref for BufBytes<'_> {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        self.p.data().get(self.l2..).unwrap_or_default()
    }
}

impl DerefMut for BufBytes<'_> {
    fn deref_mut(&mut self) -> &mut [u8] {
        self.p.data_mut().get_mut(self.l2..).unwrap_or_default()
    }
}

impl PacketBytes for BufBytes<'_> {
    fn open_gap(&mut self, at: usize, n: usize) -> bool {
        let Some(before) = self.l2.checked_add(at) else { return false };
        if before > self.p.len() || !self.p.open_gap(before, n) {
            return false;
        }
        match self.p.data_mut().get_mut(before..before + n) {
            Some(gap) => {
                gap.fill(0);
                true
            }
            None => false,
        }
    }

    fn close_gap(&mut self, at: usize, n: usize) -> bool {
        match self.l2.checked_add(at).zip(at.checked_add(n)) {
            Some((before, end)) if end <= self.len() => self.p.close_gap(before, n),
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn buf(bytes: &[u8]) -> PacketBuf {
        let mut p = PacketBuf::new();
        assert!(p.load(bytes, 0));
        p
    }

    /// The same gaps opened and closed in a vector and in a buffer past a 14-byte
    /// link-layer header give the same bytes, the header kept in front.
    #[test]
    fn gaps_as_in_a_vector() {
        let l2: Vec<u8> = (100..114).collect();
        let ip: Vec<u8> = (0..60).collect();
        let mut p = buf(&[l2.clone(), ip.clone()].concat());
        let mut v = ip;
        for (open, at, n) in [(true, 40, 16), (true, 0, 48), (false, 40, 8), (false, 0, 30), (true, 86, 4)] {
            let mut b = BufBytes::new(&mut p, 14);
            let (x, y) =
                if open { (b.open_gap(at, n), v.open_gap(at, n)) } else { (b.close_gap(at, n), v.close_gap(at, n)) };
            assert_eq!((x, y), (true, true), "{open} {at} {n}");
            assert_eq!(&*b, &v[..]);
            assert_eq!(&p.data()[..14], &l2[..], "the link-layer header stays in front");
        }
    }

    #[test]
    fn refuses_what_the_buffer_cannot_take() {
        let mut p = buf(&[7; 80]);
        let room = p.headroom();
        let mut b = BufBytes::new(&mut p, 14);
        assert!(!b.open_gap(67, 1), "past the end");
        assert!(!b.open_gap(0, room + 1), "more than the headroom");
        assert!(!b.close_gap(60, 7), "past the end");
        assert!(!b.close_gap(usize::MAX, 1), "overflow");
        assert_eq!(b.len(), 66);
        assert_eq!(p.data(), &[7; 80][..], "nothing changed");
        let mut short = buf(&[1; 10]);
        assert!(BufBytes::new(&mut short, 14).is_empty(), "a frame shorter than l2");
    }
}
