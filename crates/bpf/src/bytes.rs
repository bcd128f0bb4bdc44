//! The bytes of a packet as the helpers see them ([`PacketBytes`]): a slice to read and
//! write, and the two ways a helper resizes it — a gap opened at an offset (an SRH pushed,
//! TLV space added by `bpf_lwt_seg6_adjust_srh`) and bytes removed at an offset (TLV
//! space removed, the outer headers End.DT6 strips). A `Vec<u8>` is one (tests, tools);
//! sr6's pipeline gives its own packet buffers, so that a program runs on the packet
//! where it lies, with no copy in or out (the kernel's helpers likewise work on the skb
//! with `skb_push`/`skb_pull` and a `memmove` of the headers).

use std::ops::{Deref, DerefMut};

/// A packet's bytes (from its network header) and how they are resized.
pub trait PacketBytes: Deref<Target = [u8]> + DerefMut {
    /// Opens `n` bytes at offset `at` (`at` at most the length): what was at `at` and
    /// after now starts at `at + n`; the `n` new bytes are zero. `false` (nothing
    /// changed) if `at` is past the end or the buffer cannot grow by `n`.
    fn open_gap(&mut self, at: usize, n: usize) -> bool;
    /// Removes the `n` bytes at offset `at`. `false` (nothing changed) if they are not
    /// all inside the packet.
    fn close_gap(&mut self, at: usize, n: usize) -> bool;
}

impl PacketBytes for Vec<u8> {
    fn open_gap(&mut self, at: usize, n: usize) -> bool {
        if at > self.len() {
            return false;
        }
        self.splice(at..at, std::iter::repeat_n(0u8, n));
        true
    }

    fn close_gap(&mut self, at: usize, n: usize) -> bool {
        match at.checked_add(n) {
            Some(end) if end <= self.len() => {
                self.drain(at..end);
                true
            }
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::PacketBytes;

    #[test]
    fn vec_gaps() {
        let mut v = vec![1, 2, 3, 4];
        assert!(v.open_gap(1, 2));
        assert_eq!(v, [1, 0, 0, 2, 3, 4]);
        assert!(v.open_gap(6, 1), "at the end");
        assert_eq!(v, [1, 0, 0, 2, 3, 4, 0]);
        assert!(!v.open_gap(8, 1), "past the end");
        assert!(v.close_gap(0, 3));
        assert_eq!(v, [2, 3, 4, 0]);
        assert!(!v.close_gap(2, 3), "past the end");
        assert!(!v.close_gap(usize::MAX, 2), "overflow");
        assert_eq!(v, [2, 3, 4, 0]);
    }
}
