//! Exact-match tables for /128 (and /32) keys: open addressing with linear probing over
//! a power-of-two array, a multiplicative hash, built once ([`ExactMap::build`]) and
//! changed a key at a time where it must be ([`ExactMap::set`], [`ExactMap::remove`]:
//! the table doubles to keep its load <= 1/8; a removed key's slot is refilled by
//! shifting its probe chain back, so no tombstone is ever read). A lookup
//! is one multiply, one shift and (almost always) one or two key compares — several
//! times cheaper than a general-purpose hash map on the hot path. The build picks the
//! multiplier that displaces the keys least ([`multiplier`](crate::multiplier)).

use crate::multiplier;

/// A map from `u128` keys to `V`.
#[derive(Debug, Clone)]
pub struct ExactMap<V> {
    /// (key, value); `None` marks an empty slot. The value sits next to its key, so a
    /// hit reads one slot and nothing else.
    slots: Vec<(u128, Option<V>)>,
    len: usize,
    shift: u32,
    mul: u64,
}

impl<V: Copy> Default for ExactMap<V> {
    fn default() -> Self {
        Self::build(Vec::new())
    }
}

/// The 64 bits of `k` that are hashed.
#[inline(always)]
pub(crate) fn fold(k: u128) -> u64 {
    (k as u64) ^ ((k >> 64) as u64).rotate_left(29)
}

impl<V: Copy> ExactMap<V> {
    /// Builds the map; a later duplicate key replaces an earlier one.
    pub fn build(entries: Vec<(u128, V)>) -> Self {
        // Load factor <= 1/8 (the slots a lookup touches are one per key whatever the
        // size): a hit reads ~1.07 slots, a miss ~1.15 (Knuth, linear probing).
        let cap = (entries.len() * 8).next_power_of_two().max(8);
        let bits = cap.trailing_zeros();
        // The distinct keys choose the multiplier; then everything goes in once.
        let mut keys: Vec<u128> = entries.iter().map(|&(k, _)| k).collect();
        keys.sort_unstable();
        keys.dedup();
        let folded: Vec<u64> = keys.into_iter().map(fold).collect();
        let mul = multiplier::best(&folded, 64 - bits, cap);
        let mut m = ExactMap { slots: vec![(0, None); cap], len: 0, shift: 64 - bits, mul };
        for (k, v) in entries {
            m.insert(k, v);
        }
        m
    }

    /// Build-time insertion (the map has room: its load stays <= 1/8).
    fn insert(&mut self, k: u128, v: V) {
        let mask = self.slots.len() - 1;
        let mut i = multiplier::home(fold(k), self.mul, self.shift);
        loop {
            let slot = &mut self.slots[i];
            if slot.1.is_none() {
                *slot = (k, Some(v));
                self.len += 1;
                return;
            }
            if slot.0 == k {
                slot.1 = Some(v);
                return;
            }
            i = (i + 1) & mask;
        }
    }

    /// Adds `k` with `v`, or replaces its value.
    pub fn set(&mut self, k: u128, v: V) {
        if (self.len + 1) * 8 > self.slots.len() {
            let entries: Vec<(u128, V)> = self.iter().collect();
            let cap = self.slots.len() * 2;
            *self = ExactMap { slots: vec![(0, None); cap], len: 0, shift: 64 - cap.trailing_zeros(), mul: self.mul };
            for (k, v) in entries {
                self.insert(k, v);
            }
        }
        self.insert(k, v);
    }

    /// Removes `k`; returns its value.
    pub fn remove(&mut self, k: u128) -> Option<V> {
        let mask = self.slots.len() - 1;
        let mut hole = multiplier::home(fold(k), self.mul, self.shift);
        let v = loop {
            let (key, v) = *self.slots.get(hole)?;
            let v = v?;
            if key == k {
                break v;
            }
            hole = (hole + 1) & mask;
        };
        let (mul, shift) = (self.mul, self.shift);
        let hole = multiplier::close_hole(
            &mut self.slots,
            hole,
            |s| s.1.is_none(),
            |s| multiplier::home(fold(s.0), mul, shift),
        );
        self.slots[hole] = (0, None);
        self.len -= 1;
        Some(v)
    }

    /// The value of `k`.
    #[inline(always)]
    pub fn get(&self, k: u128) -> Option<V> {
        let mask = self.slots.len() - 1;
        let mut i = multiplier::home(fold(k), self.mul, self.shift);
        // At least 7/8 of the slots are empty, so the probe always ends.
        loop {
            let &(key, v) = self.slots.get(i)?;
            let v = v?;
            if key == k {
                return Some(v);
            }
            i = (i + 1) & mask;
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Every entry (for display).
    pub fn iter(&self) -> impl Iterator<Item = (u128, V)> + '_ {
        self.slots.iter().filter_map(|&(k, v)| Some((k, v?)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::HashMap;

    proptest! {
        #[test]
        fn agrees_with_hashmap(entries in prop::collection::vec((any::<u128>(), any::<u32>()), 0..300),
                               probes in prop::collection::vec(any::<u128>(), 0..50)) {
            // Keys sharing high or low halves stress the hash.
            let entries: Vec<(u128, u32)> = entries.into_iter().enumerate()
                .map(|(i, (k, v))| (if i % 3 == 0 { k & 0xffff } else if i % 3 == 1 { k << 100 } else { k }, v)).collect();
            let m = ExactMap::build(entries.clone());
            let oracle: HashMap<u128, u32> = entries.iter().copied().collect();
            prop_assert_eq!(m.len(), oracle.len());
            for (k, v) in &oracle {
                prop_assert_eq!(m.get(*k), Some(*v));
            }
            for k in probes {
                prop_assert_eq!(m.get(k), oracle.get(&k).copied());
            }
        }
    }

    proptest! {
        /// Keys set and removed one at a time (the table growing from empty, probe
        /// chains shifted back) against a HashMap after every change.
        #[test]
        fn changes_agree_with_hashmap(ops in prop::collection::vec((any::<bool>(), 0u128..40, any::<u32>()), 0..400)) {
            let mut m: ExactMap<u32> = ExactMap::default();
            let mut oracle: HashMap<u128, u32> = HashMap::new();
            for (set, k, v) in ops {
                // Few distinct keys, some sharing halves: long chains and reuse.
                let k = if k % 2 == 0 { k << 64 } else { k };
                if set {
                    m.set(k, v);
                    oracle.insert(k, v);
                } else {
                    prop_assert_eq!(m.remove(k), oracle.remove(&k));
                }
                prop_assert_eq!(m.len(), oracle.len());
                for k in 0..40u128 {
                    for k in [k, k << 64] {
                        prop_assert_eq!(m.get(k), oracle.get(&k).copied());
                    }
                }
            }
        }
    }

    #[test]
    fn empty_map() {
        let m: ExactMap<u8> = ExactMap::default();
        assert_eq!(m.get(0), None);
        assert!(m.is_empty());
    }
}
