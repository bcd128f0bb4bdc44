//! [`SidCounters`]: the counters of every local SID, laid out for the fast path's two
//! additions.

use super::{SidCounter, ETH_HEADER, FIXED};

/// Which of the fixed arrays holds what.
const PACKETS: usize = 0;
const FRAME_BYTES: usize = 1;
const ERRORS: usize = 2;

/// The [`SidCounter`] of every SID `0..len`. Those of SIDs 0..65,535 live in three
/// fixed arrays of 2^16 entries each, one per field, in one allocation: the fast path
/// counts SID `i` (a `u16`) with two additions at constant offsets from one base
/// address, and with no bounds check. SIDs from
/// 65,536 on (which the fast path leaves to the general path) are in a vector of their
/// own.
///
/// The arrays are allocated zeroed (`calloc`: the pages no packet counts in are never
/// touched); clones, [`clear`](Self::clear) and equality see only the SIDs that exist.
pub struct SidCounters {
    fixed: Box<[[u64; FIXED]; 3]>,
    more: Vec<SidCounter>,
    len: usize,
}

impl SidCounters {
    /// `len` SIDs' counters, all zero.
    pub fn new(len: usize) -> Self {
        SidCounters { fixed: bytemuck::zeroed_box(), more: vec![SidCounter::default(); len.saturating_sub(FIXED)], len }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// How many of the SIDs are in the fixed arrays.
    fn head(&self) -> usize {
        self.len.min(FIXED)
    }

    /// Counts a packet the fast path processed for SID `i` (below `len`, and so in the
    /// fixed arrays), adding its frame's length as it is
    /// ([`SidCounter::frame_bytes`]).
    #[inline(always)]
    pub(crate) fn count_frame(&mut self, i: u16, frame_len: u64) {
        let i = usize::from(i);
        self.fixed[PACKETS][i] += 1;
        self.fixed[FRAME_BYTES][i] += frame_len;
    }

    /// Counts a packet of `ipv6_len` bytes processed successfully for SID `i`
    /// (nothing if there is no SID `i`).
    pub fn count(&mut self, i: usize, ipv6_len: u64) {
        self.add(i, SidCounter { packets: 1, errors: 0, frame_bytes: ipv6_len + ETH_HEADER });
    }

    /// Counts an error (a drop or an ICMP error) of SID `i` (nothing if there is no
    /// SID `i`).
    pub fn error(&mut self, i: usize) {
        self.add(i, SidCounter { packets: 0, errors: 1, frame_bytes: 0 });
    }

    /// Adds `c` to SID `i`'s counters (nothing if there is no SID `i`).
    pub fn add(&mut self, i: usize, c: SidCounter) {
        if i >= self.len {
            return;
        }
        match i.checked_sub(FIXED) {
            None => {
                let f = &mut *self.fixed;
                f[PACKETS][i] += c.packets;
                f[FRAME_BYTES][i] += c.frame_bytes;
                f[ERRORS][i] += c.errors;
            }
            Some(j) => {
                if let Some(m) = self.more.get_mut(j) {
                    m.packets += c.packets;
                    m.frame_bytes += c.frame_bytes;
                    m.errors += c.errors;
                }
            }
        }
    }

    /// SID `i`'s counters, if there is a SID `i`.
    pub fn get(&self, i: usize) -> Option<SidCounter> {
        if i >= self.len {
            return None;
        }
        match i.checked_sub(FIXED) {
            None => {
                let f = &*self.fixed;
                Some(SidCounter { packets: f[PACKETS][i], errors: f[ERRORS][i], frame_bytes: f[FRAME_BYTES][i] })
            }
            Some(j) => self.more.get(j).copied(),
        }
    }

    /// The counters of SIDs `0..len`, in order.
    pub fn iter(&self) -> impl Iterator<Item = SidCounter> + '_ {
        (0..self.len).filter_map(|i| self.get(i))
    }

    /// `len` SIDs' counters, all zero, in the memory these have (the fixed arrays are
    /// not allocated again).
    pub fn reshape(&mut self, len: usize) {
        let n = self.head().max(len.min(FIXED));
        for a in self.fixed.iter_mut() {
            a[..n].fill(0);
        }
        self.more.clear();
        self.more.resize(len.saturating_sub(FIXED), SidCounter::default());
        self.len = len;
    }

    /// Zeroes every SID's counters.
    pub fn clear(&mut self) {
        let n = self.head();
        for a in self.fixed.iter_mut() {
            a[..n].fill(0);
        }
        self.more.fill(SidCounter::default());
    }
}

impl Clone for SidCounters {
    fn clone(&self) -> Self {
        let mut c = SidCounters::new(self.len);
        c.clone_from(self);
        c
    }

    /// Copies SIDs `0..len` only (into fresh arrays if the lengths differ).
    fn clone_from(&mut self, source: &Self) {
        if self.len != source.len {
            self.reshape(source.len);
        }
        let n = self.head();
        for (a, b) in self.fixed.iter_mut().zip(source.fixed.iter()) {
            a[..n].copy_from_slice(&b[..n]);
        }
        self.more.copy_from_slice(&source.more);
    }
}

impl PartialEq for SidCounters {
    fn eq(&self, other: &Self) -> bool {
        self.len == other.len && self.iter().eq(other.iter())
    }
}

impl Eq for SidCounters {}

impl std::fmt::Debug for SidCounters {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_field_of_every_sid_is_its_own_on_both_sides_of_the_fixed_arrays() {
        let mut c = SidCounters::new(FIXED + 2);
        c.count_frame(7, 100);
        c.count(7, 86);
        c.error(7);
        c.count(FIXED - 1, 10);
        c.count(FIXED, 20);
        c.error(FIXED + 1);
        // No SID there: nothing counted, nothing lost.
        c.count(FIXED + 2, 30);
        c.error(FIXED + 2);
        assert!(c.get(FIXED + 2).is_none());
        let s7 = c.get(7).unwrap();
        assert_eq!((s7.packets, s7.errors, s7.bytes()), (2, 1, 172));
        assert_eq!(c.get(FIXED - 1).map(|s| (s.packets, s.bytes())), Some((1, 10)));
        assert_eq!(c.get(FIXED).map(|s| (s.packets, s.bytes())), Some((1, 20)));
        assert_eq!(c.get(FIXED + 1).map(|s| (s.packets, s.errors)), Some((0, 1)));
        assert_eq!(c.iter().count(), FIXED + 2);
        assert_eq!(c.iter().map(|s| s.packets + s.errors).sum::<u64>(), 6);
        let d = c.clone();
        assert_eq!(d, c);
        c.clear();
        assert_eq!(c, SidCounters::new(FIXED + 2));
        assert_ne!(d, c);
    }

    #[test]
    fn clones_copy_only_the_sids_that_exist() {
        let mut a = SidCounters::new(3);
        a.count(2, 50);
        let mut b = SidCounters::new(1);
        b.clone_from(&a);
        assert_eq!(b, a);
        assert_eq!(b.iter().map(|s| s.packets).collect::<Vec<_>>(), vec![0, 0, 1]);
        // A counted slot past `len` (no caller does that) is not part of the counters.
        a.count_frame(5, 1);
        assert_eq!(b, a);
        assert!(a.get(5).is_none());
        assert!(SidCounters::new(0).is_empty());
    }
}
