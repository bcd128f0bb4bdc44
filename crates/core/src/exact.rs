//! Exact-match tables for /128 (and /32) keys: open addressing with linear probing over
//! a power-of-two array, a multiplicative hash, built once and never modified. A lookup
//! is one multiply, one shift and (almost always) one or two key compares — several
//! times cheaper than a general-purpose hash map on the hot path.

/// An immutable map from `u128` keys to `V`.
#[derive(Debug, Clone)]
pub struct ExactMap<V> {
    /// (key, value, aux word); `None` marks an empty slot. The value sits next to its
    /// key, so a hit reads one slot and nothing else; so does its aux word
    /// ([`set_aux`](Self::set_aux)).
    slots: Vec<(u128, Option<V>, u32)>,
    len: usize,
    shift: u32,
}

impl<V: Copy> Default for ExactMap<V> {
    fn default() -> Self {
        Self::build(Vec::new())
    }
}

#[inline]
fn hash(k: u128, shift: u32) -> usize {
    let x = (k as u64) ^ ((k >> 64) as u64).rotate_left(29);
    (x.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> shift) as usize
}

impl<V: Copy> ExactMap<V> {
    /// Builds the map; a later duplicate key replaces an earlier one.
    pub fn build(entries: Vec<(u128, V)>) -> Self {
        // Load factor <= 1/4: a miss (the common case on transit) probes ~1.2 slots.
        let cap = (entries.len() * 4).next_power_of_two().max(8);
        let bits = cap.trailing_zeros();
        let mut m = ExactMap { slots: vec![(0, None, 0); cap], len: 0, shift: 64 - bits };
        for (k, v) in entries {
            let mut i = hash(k, m.shift);
            loop {
                let slot = &mut m.slots[i];
                if slot.1.is_none() {
                    *slot = (k, Some(v), 0);
                    m.len += 1;
                    break;
                }
                if slot.0 == k {
                    slot.1 = Some(v);
                    break;
                }
                i = (i + 1) & (cap - 1);
            }
        }
        m
    }

    /// The value of `k`.
    #[inline(always)]
    pub fn get(&self, k: u128) -> Option<V> {
        self.get_aux(k).map(|(v, _)| v)
    }

    /// The value of `k` and its [aux word](Self::set_aux).
    #[inline(always)]
    pub fn get_aux(&self, k: u128) -> Option<(V, u32)> {
        let mask = self.slots.len() - 1;
        let mut i = hash(k, self.shift);
        // At least 3/4 of the slots are empty, so the probe always ends.
        loop {
            let &(key, v, aux) = self.slots.get(i)?;
            let v = v?;
            if key == k {
                return Some((v, aux));
            }
            i = (i + 1) & mask;
        }
    }

    /// Attaches `f(value)` to every entry, for [`get_aux`](Self::get_aux) (a FIB keeps
    /// there what the fast path needs to know about a SID).
    pub fn set_aux(&mut self, f: impl Fn(&V) -> u32) {
        for s in self.slots.iter_mut() {
            s.2 = s.1.as_ref().map_or(0, &f);
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
        self.slots.iter().filter_map(|&(k, v, _)| Some((k, v?)))
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
            let mut m = m;
            m.set_aux(|v| v.wrapping_mul(3));
            for (k, v) in &oracle {
                prop_assert_eq!(m.get_aux(*k), Some((*v, v.wrapping_mul(3))));
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
