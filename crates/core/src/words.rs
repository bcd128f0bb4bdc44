//! [`WordMap`]: an immutable exact-match map from `u128` keys to 64-bit words, for the
//! fast path's one probe of a packet's destination (the words say what the fast path
//! needs to know about a /128 SID: [`FastSid::pack`](crate::tables::FastSid::pack)).
//!
//! The layout of [`ExactMap`](crate::exact::ExactMap) (open addressing, linear probing,
//! load <= 1/8, a multiplier chosen at build time), with slots of just a key and a word:
//! the empty slot is the word [`WordMap::MISS`], so a hit is decided by one key compare,
//! with no separate test of whether the slot is in use.

use crate::exact::fold;
use crate::multiplier;
use std::collections::BTreeMap;

/// A map from `u128` keys to `u64` words other than [`MISS`](Self::MISS), built once
/// and changed a key at a time as [`ExactMap`](crate::exact::ExactMap) is.
#[derive(Debug, Clone)]
pub struct WordMap {
    /// (key, word); an empty slot is (0, MISS).
    slots: Vec<(u128, u64)>,
    shift: u32,
    mul: u64,
    /// Slots taken.
    taken: usize,
}

impl Default for WordMap {
    fn default() -> Self {
        Self::build(Vec::new())
    }
}

impl WordMap {
    /// What [`get`](Self::get) returns for a key that is not in the map.
    pub const MISS: u64 = 0;

    /// Builds the map; a later duplicate key replaces an earlier one. A word equal to
    /// [`MISS`](Self::MISS) is not stored (its key reads as absent).
    pub fn build(entries: Vec<(u128, u64)>) -> Self {
        // As ExactMap::build: load <= 1/8, the keys choose the multiplier. The last
        // word of each key, in key order (so the build is deterministic).
        let last: BTreeMap<u128, u64> = entries.into_iter().collect();
        let last: Vec<(u128, u64)> = last.into_iter().filter(|&(_, w)| w != Self::MISS).collect();
        let cap = (last.len() * 8).next_power_of_two().max(8);
        let bits = cap.trailing_zeros();
        let folded: Vec<u64> = last.iter().map(|&(k, _)| fold(k)).collect();
        let mul = multiplier::best(&folded, 64 - bits, cap);
        let mut m = WordMap { slots: vec![(0, Self::MISS); cap], shift: 64 - bits, mul, taken: 0 };
        for (k, w) in last {
            m.put(k, w);
        }
        m
    }

    /// Puts `k` with `w` (not MISS) in its slot; the map has room.
    fn put(&mut self, k: u128, w: u64) {
        let mask = self.slots.len() - 1;
        let mut i = multiplier::home(fold(k), self.mul, self.shift);
        loop {
            let slot = &mut self.slots[i];
            if slot.1 == Self::MISS || slot.0 == k {
                self.taken += usize::from(slot.1 == Self::MISS);
                *slot = (k, w);
                return;
            }
            i = (i + 1) & mask;
        }
    }

    /// Sets the word of `k` ([`MISS`](Self::MISS): removes it).
    pub fn set(&mut self, k: u128, w: u64) {
        if w == Self::MISS {
            self.remove(k);
            return;
        }
        if (self.taken + 1) * 8 > self.slots.len() {
            let entries: Vec<(u128, u64)> = self.slots.iter().copied().filter(|s| s.1 != Self::MISS).collect();
            let cap = self.slots.len() * 2;
            (self.slots, self.shift, self.taken) = (vec![(0, Self::MISS); cap], 64 - cap.trailing_zeros(), 0);
            for (k, w) in entries {
                self.put(k, w);
            }
        }
        self.put(k, w);
    }

    /// Removes `k` (its probe chain shifted back, as [`ExactMap::remove`](crate::exact::ExactMap::remove)).
    pub fn remove(&mut self, k: u128) {
        let mask = self.slots.len() - 1;
        let mut hole = multiplier::home(fold(k), self.mul, self.shift);
        loop {
            let Some(&(key, w)) = self.slots.get(hole) else { return };
            if w == Self::MISS {
                return;
            }
            if key == k {
                break;
            }
            hole = (hole + 1) & mask;
        }
        let (mul, shift) = (self.mul, self.shift);
        let is_empty = |s: &(u128, u64)| s.1 == Self::MISS;
        let hole = multiplier::close_hole(&mut self.slots, hole, is_empty, |s| multiplier::home(fold(s.0), mul, shift));
        self.slots[hole] = (0, Self::MISS);
        self.taken -= 1;
    }

    /// The word of `k`, [`MISS`](Self::MISS) if `k` is not in the map. An empty slot
    /// that matches the key (0) answers with its word, `MISS`: a key compare decides.
    #[inline(always)]
    pub fn get(&self, k: u128) -> u64 {
        let mask = self.slots.len() - 1;
        let mut i = multiplier::home(fold(k), self.mul, self.shift);
        // At least 7/8 of the slots are empty, so the probe always ends.
        loop {
            let Some(&(key, w)) = self.slots.get(i) else { return Self::MISS };
            if key == k {
                return w;
            }
            if w == Self::MISS {
                return Self::MISS;
            }
            i = (i + 1) & mask;
        }
    }

    /// How many keys the map holds.
    pub fn len(&self) -> usize {
        self.taken
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::HashMap;

    proptest! {
        #[test]
        fn agrees_with_hashmap(entries in prop::collection::vec((any::<u128>(), any::<u64>()), 0..300),
                               probes in prop::collection::vec(any::<u128>(), 0..50)) {
            // Keys sharing high or low halves stress the hash; key 0 and word MISS occur.
            let entries: Vec<(u128, u64)> = entries.into_iter().enumerate()
                .map(|(i, (k, w))| match i % 4 {
                    0 => (k & 0xffff, w),
                    1 => (k << 100, w),
                    2 => (k & 3, w & 1),
                    _ => (k, w),
                }).collect();
            let m = WordMap::build(entries.clone());
            let oracle: HashMap<u128, u64> = entries.iter().copied().collect();
            let stored = |k: &u128| oracle.get(k).copied().unwrap_or(WordMap::MISS);
            prop_assert_eq!(m.len(), oracle.values().filter(|&&w| w != WordMap::MISS).count());
            for k in oracle.keys().chain(&probes).chain(&[0, 1, u128::MAX]) {
                prop_assert_eq!(m.get(*k), stored(k));
            }
        }
    }

    proptest! {
        /// Words set and removed one at a time (growing from empty; key 0 included)
        /// against a HashMap after every change.
        #[test]
        fn changes_agree_with_hashmap(ops in prop::collection::vec((any::<bool>(), 0u128..40, 1u64..5), 0..400)) {
            let mut m = WordMap::default();
            let mut oracle: HashMap<u128, u64> = HashMap::new();
            for (set, k, w) in ops {
                let k = if k % 2 == 0 { k << 64 } else { k };
                if set {
                    m.set(k, w);
                    oracle.insert(k, w);
                } else {
                    m.remove(k);
                    oracle.remove(&k);
                }
                prop_assert_eq!(m.len(), oracle.len());
                for k in 0..40u128 {
                    for k in [k, k << 64] {
                        prop_assert_eq!(m.get(k), oracle.get(&k).copied().unwrap_or(WordMap::MISS));
                    }
                }
            }
        }
    }

    #[test]
    fn empty_map() {
        let m = WordMap::default();
        assert_eq!(m.get(0), WordMap::MISS);
        assert!(m.is_empty());
    }
}
