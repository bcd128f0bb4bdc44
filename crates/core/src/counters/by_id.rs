//! [`ById`]: counters indexed by a 16-bit id (a device), laid out so that the fast
//! path's increment needs no bounds check.

use std::ops::{Deref, DerefMut};

/// The ids a [`ById`] holds without a bounds check: every `u16`.
pub const FIXED: usize = 1 << 16;

/// One counter per id `0..len`, in an array of [`FIXED`] entries, so that indexing it
/// with a `u16` ([`ById::at`]) cannot be out of bounds and compiles to no check at all:
/// on the fast path that is two instructions fewer per counter.
/// Ids are [`DevId`](crate::packet::DevId)s, of which the table build allows fewer than
/// [`FIXED`].
///
/// It derefs to the counters of ids `0..len` (a slice): ids at or past `len` inside the
/// array exist but are never reported, compared or cloned (the live router publishes its
/// counters every millisecond).
pub struct ById<T> {
    fixed: Box<[T; FIXED]>,
    len: usize,
}

impl<T: Copy + Default + bytemuck::Zeroable> ById<T> {
    /// `len` counters (at most [`FIXED`]), all zero. The array is allocated zeroed
    /// (`calloc`), so that a new worker does not write it (a fresh allocation's pages
    /// are not even touched until counted in).
    pub fn new(len: usize) -> Self {
        ById { fixed: bytemuck::zeroed_box(), len: len.min(FIXED) }
    }

    /// Sets every counter back to its default.
    pub fn clear(&mut self) {
        self.fill(T::default());
    }

    /// `len` counters, all zero, in the memory these have (no allocation: a worker
    /// reshapes its counters for every new generation of the tables).
    pub fn reshape(&mut self, len: usize) {
        let len = len.min(FIXED);
        self.fixed[..self.len.max(len)].fill(T::default());
        self.len = len;
    }
}

impl<T> ById<T> {
    /// The counter of id `i`, for the fast path. The caller passes only ids below
    /// `len` (a larger one would count in a slot nothing reports).
    #[inline(always)]
    pub fn at(&mut self, i: u16) -> &mut T {
        &mut self.fixed[usize::from(i)]
    }
}

impl<T> Deref for ById<T> {
    type Target = [T];

    fn deref(&self) -> &[T] {
        &self.fixed[..self.len]
    }
}

impl<T> DerefMut for ById<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        &mut self.fixed[..self.len]
    }
}

impl<'a, T> IntoIterator for &'a ById<T> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl<T: Copy + Default + bytemuck::Zeroable> Clone for ById<T> {
    fn clone(&self) -> Self {
        let mut c = ById::new(self.len);
        c.clone_from(self);
        c
    }

    /// Copies ids `0..len` only (into a fresh array if the lengths differ).
    fn clone_from(&mut self, source: &Self) {
        if self.len != source.len {
            self.reshape(source.len);
        }
        self.copy_from_slice(source);
    }
}

impl<T: PartialEq> PartialEq for ById<T> {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl<T: Eq> Eq for ById<T> {}

impl<T: std::fmt::Debug> std::fmt::Debug for ById<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        (**self).fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_u16_id_has_a_counter_of_its_own() {
        let mut c = ById::<u64>::new(FIXED);
        *c.at(7) += 1;
        *c.get_mut(FIXED - 1).unwrap() += 2;
        *c.at(u16::MAX) += 3;
        assert!(c.get_mut(FIXED).is_none() && c.get(FIXED).is_none());
        assert_eq!(c.iter().sum::<u64>(), 6);
        assert_eq!(c.iter().count(), FIXED);
        assert_eq!((c.get(7), c.get(FIXED - 1)), (Some(&1), Some(&5)));
        let d = c.clone();
        assert_eq!(d, c);
        c.clear();
        assert_eq!(c.iter().sum::<u64>(), 0);
        assert_ne!(d, c);
        // More ids than a u16 can name are not asked for (the table build refuses them).
        assert_eq!(ById::<u64>::new(FIXED + 5).len(), FIXED);
    }

    #[test]
    fn only_ids_below_len_are_seen_cloned_and_compared() {
        let mut a = ById::<u64>::new(3);
        let b = ById::<u64>::new(3);
        // A slot past `len` (never written by a caller that keeps to the contract) is
        // not part of the counters.
        *a.at(5) += 1;
        assert_eq!(a, b);
        assert_eq!(a.iter().copied().collect::<Vec<_>>(), vec![0, 0, 0]);
        assert!(a.get(5).is_none());
        *a.at(2) += 9;
        let mut c = ById::<u64>::new(1);
        c.clone_from(&a);
        assert_eq!(c, a);
        assert_eq!((&c).into_iter().copied().collect::<Vec<_>>(), vec![0, 0, 9]);
        assert!(ById::<u64>::new(0).is_empty());
    }
}
