//! [`ById`]: counters indexed by a 16-bit id (a device), laid out so that the fast
//! path's increment needs no bounds check.

/// The ids a [`ById`] holds without a bounds check: every `u16`.
pub const FIXED: usize = 1 << 16;

/// One counter per id `0..len`. The first [`FIXED`] live in an array of that fixed
/// size, so that indexing it with a `u16` ([`ById::at`]) cannot be out of bounds and
/// compiles to no check at all: on the fast path that is two instructions fewer per
/// counter (docs/performance.md). Ids from [`FIXED`] on (which a [`DevId`](crate::packet::DevId)
/// cannot be, but a `len` can ask for) live in a vector of their own, which only
/// [`get`](Self::get) and [`get_mut`](Self::get_mut) reach.
///
/// Ids at or past `len` inside the fixed array exist but are never reported: the
/// iterators, [`len`](Self::len), equality and clones see `0..len` only, and a clone
/// copies just those (the live router publishes its counters every millisecond).
pub struct ById<T> {
    fixed: Box<[T; FIXED]>,
    more: Vec<T>,
    len: usize,
}

impl<T: Copy + Default + bytemuck::Zeroable> ById<T> {
    /// `len` counters, all zero. The fixed array is allocated zeroed (`calloc`), so
    /// that a new worker does not write it (a fresh allocation's pages are not even
    /// touched until counted in).
    pub fn new(len: usize) -> Self {
        ById { fixed: bytemuck::zeroed_box(), more: vec![T::zeroed(); len.saturating_sub(FIXED)], len }
    }

    /// Sets every counter back to its default.
    pub fn clear(&mut self) {
        self.head_mut().fill(T::default());
        self.more.fill(T::default());
    }
}

impl<T> ById<T> {
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The counter of id `i`, for the fast path: `i` is always in the fixed array. The
    /// caller passes only ids below [`len`](Self::len) (a larger one would count in a
    /// slot nothing reports).
    #[inline(always)]
    pub fn at(&mut self, i: u16) -> &mut T {
        &mut self.fixed[usize::from(i)]
    }

    /// The counter of id `i`, if `i < len`.
    #[inline]
    pub fn get(&self, i: usize) -> Option<&T> {
        if i >= self.len {
            return None;
        }
        match i.checked_sub(FIXED) {
            None => self.fixed.get(i),
            Some(j) => self.more.get(j),
        }
    }

    /// The counter of id `i`, if `i < len`.
    #[inline]
    pub fn get_mut(&mut self, i: usize) -> Option<&mut T> {
        if i >= self.len {
            return None;
        }
        match i.checked_sub(FIXED) {
            None => self.fixed.get_mut(i),
            Some(j) => self.more.get_mut(j),
        }
    }

    fn head(&self) -> &[T] {
        &self.fixed[..self.len.min(FIXED)]
    }

    fn head_mut(&mut self) -> &mut [T] {
        &mut self.fixed[..self.len.min(FIXED)]
    }

    /// The counters of ids `0..len`, in order.
    pub fn iter(&self) -> impl Iterator<Item = &T> + '_ {
        self.head().iter().chain(&self.more)
    }

    /// The counters of ids `0..len`, in order.
    pub fn iter_mut(&mut self) -> impl Iterator<Item = &mut T> + '_ {
        let (fixed, more, len) = (&mut self.fixed, &mut self.more, self.len);
        fixed[..len.min(FIXED)].iter_mut().chain(more.iter_mut())
    }
}

impl<'a, T> IntoIterator for &'a ById<T> {
    type Item = &'a T;
    type IntoIter = std::iter::Chain<std::slice::Iter<'a, T>, std::slice::Iter<'a, T>>;

    fn into_iter(self) -> Self::IntoIter {
        self.head().iter().chain(self.more.iter())
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
            *self = ById::new(source.len);
        }
        self.head_mut().copy_from_slice(source.head());
        self.more.copy_from_slice(&source.more);
    }
}

impl<T: PartialEq> PartialEq for ById<T> {
    fn eq(&self, other: &Self) -> bool {
        self.len == other.len && self.iter().eq(other.iter())
    }
}

impl<T: Eq> Eq for ById<T> {}

impl<T: std::fmt::Debug> std::fmt::Debug for ById<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_past_the_fixed_array_have_counters_of_their_own() {
        let mut c = ById::<u64>::new(FIXED + 2);
        *c.at(7) += 1;
        *c.get_mut(FIXED - 1).unwrap() += 2;
        *c.get_mut(FIXED).unwrap() += 3;
        *c.get_mut(FIXED + 1).unwrap() += 4;
        assert!(c.get_mut(FIXED + 2).is_none() && c.get(FIXED + 2).is_none());
        assert_eq!(c.iter().sum::<u64>(), 10);
        assert_eq!(c.iter().count(), FIXED + 2);
        assert_eq!((c.get(7), c.get(FIXED), c.get(FIXED + 1)), (Some(&1), Some(&3), Some(&4)));
        let d = c.clone();
        assert_eq!(d, c);
        c.clear();
        assert_eq!(c.iter().sum::<u64>(), 0);
        assert_ne!(d, c);
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
