//! Changing an [`Lpm`] in place, a prefix at a time: [`Lpm::insert`] and [`Lpm::remove`].
//!
//! With leaf pushing, a prefix's value sits in every entry of its range that no longer
//! prefix owns. So an insert overwrites, over the new prefix's range, exactly the value
//! entries whose prefix is not longer than the new one (each value's prefix length is
//! kept in `plen`), descending into the child nodes there. A remove puts back, in the
//! entries holding the removed value, the value of the longest shorter prefix covering
//! it — found in `prefixes`, one probe per shorter length the table holds. A node that
//! a remove leaves holding one value throughout is folded into its parent entry and
//! reused by a later insert.
//!
//! Under a hash-mode root entry (a /24), a prefix of the hashed length goes to the hash table
//! (which doubles when more than a quarter full; a removed slot is filled by shifting
//! its probe chain back, so no tombstone is left); a prefix of any other length turns
//! the root entry back into a trie first. Only [`build`](Lpm::build) chooses hash mode.
//!
//! Each node's default — the longest prefix covering its whole range — is kept too
//! (`node_default`): it is the removed prefix's fallback when no prefix ends in the same
//! node above it, and it bounds the descent into child nodes, which an update enters
//! only where it changes the default (a prefix at least as long as the default comes,
//! or the default goes).
//!
//! The cost of an update is the entries of its range — `2^(8 - len % 8)` in the node
//! where the prefix ends, `2^(24 - len)` at the root for /17 to /24, and for a prefix
//! up to /16 its `2^(16 - len)` short-table entries and the root entries under them
//! that are not 0 — and the entries of the child nodes under them whose default it is
//! or becomes; the walk to that node creates at most one node a byte. A bulk change is
//! still faster as a [`build`](Lpm::build).
//!
//! A root entry of 0 stands for the short table's value (no prefix longer than /16
//! covers its /24): an update that leaves a root entry equal to that value, unmarked,
//! sets it back to 0.
//!
//! Marks ([`Lpm::mark`]) are kept: an entry a prefix overwrites keeps its mark, and a
//! node made under a marked entry is marked throughout (a mark only ever costs the FIB
//! a probe of its exact table that finds nothing).

use super::*;

/// `key` (left-aligned) with the bits past `len` cleared.
#[inline]
pub(super) fn masked(key: u128, len: u8) -> u128 {
    match len {
        0 => 0,
        l => key & (u128::MAX << (128 - u32::from(l.min(128)))),
    }
}

/// Byte `i` of a left-aligned key.
#[inline]
fn byte(k: u128, i: usize) -> usize {
    usize::from((k >> (120 - 8 * i)) as u8)
}

impl<const N: usize, V, A: Copy + Default> Lpm<N, V, A> {
    /// Adds the prefix `key`/`len` (`key` left-aligned as in
    /// [`lookup_key`](Self::lookup_key), host bits ignored, `len` capped at the key's
    /// width) with the value `v` and the aux record `aux`; if the prefix is there
    /// already, replaces its value and aux record instead (the entries stay as they are)
    /// and returns the value replaced.
    pub fn insert(&mut self, key: u128, len: u8, v: V, aux: A) -> Option<V> {
        let len = len.min((N * 8) as u8);
        let k = masked(key, len);
        if let Some(&e) = self.prefixes.get(&(k, len)) {
            let old = self.values.get_mut(e as usize - 1).map(|x| std::mem::replace(x, v));
            self.set_value_aux(e, aux, k, len);
            return old;
        }
        let e = self.new_value(v, len, aux);
        self.prefixes.insert((k, len), e);
        self.per_len[usize::from(len)] += 1;
        self.place(k, len, e);
        None
    }

    /// Removes the prefix `key`/`len`; returns its value, `None` if the table does not
    /// hold it (then nothing changes).
    pub fn remove(&mut self, key: u128, len: u8) -> Option<V>
    where
        V: Clone,
    {
        let len = len.min((N * 8) as u8);
        let k = masked(key, len);
        let e = self.prefixes.remove(&(k, len))?;
        self.per_len[usize::from(len)] -= 1;
        let p = self.covering(k, len);
        self.unplace(k, len, e, p);
        self.free_values.push(e);
        self.values.get(e as usize - 1).cloned()
    }

    /// The value of the prefix `key`/`len` itself (not of a lookup).
    pub fn get(&self, key: u128, len: u8) -> Option<&V> {
        let len = len.min((N * 8) as u8);
        let e = *self.prefixes.get(&(masked(key, len), len))?;
        self.values.get(e as usize - 1)
    }

    /// Sets the aux record of the prefix `key`/`len`'s value (a FIB's hop changes when
    /// a neighbour is resolved); false if the table does not hold the prefix.
    pub fn set_aux_of(&mut self, key: u128, len: u8, aux: A) -> bool {
        let len = len.min((N * 8) as u8);
        let k = masked(key, len);
        match self.prefixes.get(&(k, len)) {
            Some(&e) => {
                self.set_value_aux(e, aux, k, len);
                true
            }
            None => false,
        }
    }

    /// Every prefix the table holds (left-aligned key, length) with its value, in no
    /// particular order.
    pub fn prefixes(&self) -> impl Iterator<Item = (u128, u8, &V)> + '_ {
        self.prefixes.iter().filter_map(|(&(k, l), &e)| Some((k, l, self.values.get(e as usize - 1)?)))
    }

    /// A value entry for `v`: a freed one, or a new one.
    fn new_value(&mut self, v: V, len: u8, aux: A) -> u32 {
        if let Some(e) = self.free_values.pop() {
            let i = e as usize;
            if let (Some(x), Some(l), Some(a)) = (self.values.get_mut(i - 1), self.plen.get_mut(i), self.aux.get_mut(i))
            {
                (*x, *l, *a) = (v, len, aux);
                return e;
            }
        }
        // `aux` and `plen` are indexed by value entry (index + 1): one longer than `values`.
        self.aux.resize(self.values.len() + 1, A::default());
        self.plen.resize(self.values.len() + 1, 0);
        self.values.push(v);
        self.plen.push(len);
        self.aux.push(aux);
        self.values.len() as u32
    }

    fn set_value_aux(&mut self, e: u32, aux: A, k: u128, len: u8) {
        if let Some(a) = self.aux.get_mut(e as usize) {
            *a = aux;
        }
        let re = self.root[root_of((k >> 64) as u64)];
        if re & (LEAF | HASH) == LEAF | HASH && u32::from(len) == 64 - (re & HASH_SHIFT) {
            if let Some(i) = self.slot_index((k >> 64) as u64) {
                self.slots[i].2 = aux;
            }
        }
    }

    /// Whether a prefix of length `len` takes the place of value entry `f` in an entry
    /// of its range: `f` is no route or a prefix no longer than it.
    #[inline]
    fn yields(&self, f: u32, len: u8) -> bool {
        f & VALUE == 0 || self.plen.get((f & VALUE) as usize).is_none_or(|&l| l <= len)
    }

    /// The value entry of the longest prefix shorter than `len` covering `k`; 0 if none.
    /// For a prefix that ends in a node, that is the longest of the node's default and
    /// the prefixes ending in the same node above it (one probe per such length the
    /// table holds); under a hash-mode root entry, the entry's fallback.
    fn covering(&self, k: u128, len: u8) -> u32 {
        let probe = |lens: std::ops::Range<u8>, base: u32| {
            lens.rev()
                .filter(|&l| self.per_len[usize::from(l)] > 0)
                .find_map(|l| self.prefixes.get(&(masked(k, l), l)).copied())
                .unwrap_or(base)
        };
        let len_ = usize::from(len);
        if len_ <= ROOT_BITS {
            return probe(0..len, 0);
        }
        let re = self.root[root_of((k >> 64) as u64)];
        if re & LEAF != 0 || re == 0 {
            // Hash mode: every longer prefix under the entry has the same length.
            return if re & HASH != 0 { re >> HASH_VALUE_AT & HASH_VALUE } else { probe(0..len, 0) };
        }
        let (mut node, mut depth) = (re as usize, ROOT_BITS / 8);
        while len_ > (depth + 1) * 8 {
            let x = self.nodes[node + byte(k, depth)];
            if x & LEAF != 0 {
                return probe(0..len, 0); // not in the trie (cannot happen: it was placed)
            }
            (node, depth) = (x as usize, depth + 1);
        }
        let default = self.node_default.get(node / STRIDE).copied().unwrap_or(0);
        probe((depth * 8 + 1) as u8..len, default)
    }

    /// The node a walk to byte `depth` of `k` continues in: the child of entry `at`
    /// (`None`: a root entry), made (inheriting the entry's value and mark) if the entry
    /// is a value.
    fn child_of(&mut self, at: Option<usize>, r: usize) -> usize {
        let x = match at {
            Some(at) => self.nodes[at],
            None => self.root_value(r),
        };
        if x & LEAF == 0 {
            return x as usize;
        }
        let c = self.new_node(x);
        match at {
            Some(at) => self.nodes[at] = c,
            None => self.set_root(r, c),
        }
        c as usize
    }

    /// Puts the new value entry `e` of prefix `k`/`len` in the entries of its range.
    fn place(&mut self, k: u128, len: u8, e: u32) {
        let r = root_of((k >> 64) as u64);
        let len_ = usize::from(len);
        if len_ <= SHORT_BITS {
            // `short` first, so that root entries left holding its value go back to 0.
            let count = 1usize << (SHORT_BITS - len_);
            let first = (r / PER_SHORT) & !(count - 1);
            for s in first..first + count {
                if self.yields(self.short(s), len) {
                    self.set_short(s, LEAF | e);
                }
                self.over_used(s, |t, i| t.cover_root(i, e, len));
            }
            return;
        }
        if len_ <= ROOT_BITS {
            let count = 1usize << (ROOT_BITS - len_);
            for i in (r & !(count - 1))..(r & !(count - 1)) + count {
                self.cover_root(i, e, len);
            }
            return;
        }
        let re = self.root[r];
        if re & (LEAF | HASH) == LEAF | HASH {
            if u32::from(len) == 64 - (re & HASH_SHIFT) {
                self.slot_insert((k >> 64) as u64, e);
                return;
            }
            self.unhash(r);
        }
        let mut node = self.child_of(None, r);
        let mut depth = ROOT_BITS / 8;
        while len_ > (depth + 1) * 8 {
            node = self.child_of(Some(node + byte(k, depth)), r);
            depth += 1;
        }
        let rem = len_ - depth * 8;
        let first = byte(k, depth) & (0xFF << (8 - rem)) & 0xFF;
        for i in node + first..node + first + (1 << (8 - rem)) {
            self.cover(i, e, len);
        }
    }

    /// Calls `f` on each root entry under `short` entry `s` that is not 0 (a short
    /// prefix's value is pushed into those); clears `used` if there is none.
    fn over_used(&mut self, s: usize, mut f: impl FnMut(&mut Self, usize)) {
        if !self.used.get(s).copied().unwrap_or(false) {
            return;
        }
        let mut any = false;
        for i in s * PER_SHORT..(s + 1) * PER_SHORT {
            if self.root[i % ROOT_LEN] != 0 {
                f(self, i);
                any |= self.root[i % ROOT_LEN] != 0;
            }
        }
        if !any {
            self.used[s] = false;
        }
    }

    /// [`cover`](Self::cover) at root entry `i`; an entry of 0 stands for `short`'s
    /// value, which a prefix longer than /16 always takes the place of.
    fn cover_root(&mut self, i: usize, e: u32, len: u8) {
        let x = self.root[i % ROOT_LEN];
        if x == 0 {
            if usize::from(len) > SHORT_BITS {
                self.set_root(i, LEAF | e);
            }
        } else if x & LEAF == 0 {
            self.cover_under(x as usize, e, len);
        } else if x & HASH != 0 {
            if self.yields(x >> HASH_VALUE_AT & HASH_VALUE, len) {
                if e > HASH_VALUE {
                    // The fallback field cannot hold it: a trie again, then as any.
                    self.unhash(i);
                    self.cover_root(i, e, len);
                } else {
                    self.set_root(i, x & !(HASH_VALUE << HASH_VALUE_AT) | e << HASH_VALUE_AT);
                }
            }
        } else if self.yields(x, len) {
            self.set_root(i, LEAF | (x & EXACT) | e);
        }
    }

    fn cover(&mut self, i: usize, e: u32, len: u8) {
        let x = self.nodes[i];
        if x & LEAF == 0 {
            self.cover_under(x as usize, e, len);
        } else if self.yields(x, len) {
            self.nodes[i] = LEAF | (x & EXACT) | e;
        }
    }

    /// [`cover`](Self::cover) over a node that the new prefix covers whole: nothing to
    /// do unless the prefix is at least as long as the node's default.
    fn cover_under(&mut self, node: usize, e: u32, len: u8) {
        match self.node_default.get(node / STRIDE) {
            Some(&d) if self.yields(d, len) => self.node_default[node / STRIDE] = e,
            _ => return,
        }
        for i in node..node + STRIDE {
            self.cover(i, e, len);
        }
    }

    /// Replaces value entry `e` (prefix `k`/`len`, being removed) by `p` wherever it is.
    fn unplace(&mut self, k: u128, len: u8, e: u32, p: u32) {
        let r = root_of((k >> 64) as u64);
        let len_ = usize::from(len);
        if len_ <= SHORT_BITS {
            let count = 1usize << (SHORT_BITS - len_);
            let first = (r / PER_SHORT) & !(count - 1);
            for s in first..first + count {
                if self.short(s) & VALUE == e {
                    self.set_short(s, LEAF | p);
                }
                self.over_used(s, |t, i| t.uncover_root(i, e, p));
            }
            return;
        }
        if len_ <= ROOT_BITS {
            let count = 1usize << (ROOT_BITS - len_);
            for i in (r & !(count - 1))..(r & !(count - 1)) + count {
                self.uncover_root(i, e, p);
            }
            return;
        }
        let re = self.root[r];
        if re & LEAF != 0 || re == 0 {
            if re & HASH != 0 {
                self.slot_remove((k >> 64) as u64);
            }
            return;
        }
        // The entries walked through, for folding nodes back on the way up.
        let mut path = [0usize; 16];
        let mut node = re as usize;
        let mut depth = ROOT_BITS / 8;
        while len_ > (depth + 1) * 8 {
            let at = node + byte(k, depth);
            let x = self.nodes[at];
            if x & LEAF != 0 {
                return; // not in the trie (cannot happen: it was placed)
            }
            path[depth] = at;
            node = x as usize;
            depth += 1;
        }
        let rem = len_ - depth * 8;
        let first = byte(k, depth) & (0xFF << (8 - rem)) & 0xFF;
        for i in node + first..node + first + (1 << (8 - rem)) {
            self.uncover(i, e, p);
        }
        // Fold the nodes of the walk that now hold one value throughout.
        loop {
            let x = self.nodes[node];
            if x & LEAF == 0 || self.nodes[node..node + STRIDE].iter().any(|&y| y != x) {
                return;
            }
            self.free_nodes.push(node as u32);
            depth -= 1;
            if depth < ROOT_BITS / 8 {
                self.set_root(r, x);
                return;
            }
            self.nodes[path[depth]] = x;
            node = path[depth] & !(STRIDE - 1);
        }
    }

    fn uncover_root(&mut self, i: usize, e: u32, p: u32) {
        let x = self.root[i % ROOT_LEN];
        if x == 0 {
            // `short`'s value: not `e` unless `e` is a short prefix, done there.
        } else if x & LEAF == 0 {
            self.uncover_under(x as usize, e, p);
        } else if x & HASH != 0 {
            if x >> HASH_VALUE_AT & HASH_VALUE == e {
                if p > HASH_VALUE {
                    self.unhash(i);
                    self.uncover_root(i, e, p);
                } else {
                    self.set_root(i, x & !(HASH_VALUE << HASH_VALUE_AT) | p << HASH_VALUE_AT);
                }
            }
        } else if x & VALUE == e {
            self.set_root(i, LEAF | (x & EXACT) | p);
        }
    }

    fn uncover(&mut self, i: usize, e: u32, p: u32) {
        let x = self.nodes[i];
        if x & LEAF == 0 {
            self.uncover_under(x as usize, e, p);
        } else if x & VALUE == e {
            self.nodes[i] = LEAF | (x & EXACT) | p;
        }
    }

    /// [`uncover`](Self::uncover) over a node that the removed prefix covers whole:
    /// nothing to do unless it is the node's default (else a longer prefix covers the
    /// node, and no entry of it or of the nodes under it holds `e`).
    fn uncover_under(&mut self, node: usize, e: u32, p: u32) {
        match self.node_default.get_mut(node / STRIDE) {
            Some(d) if *d == e => *d = p,
            _ => return,
        }
        for i in node..node + STRIDE {
            self.uncover(i, e, p);
        }
    }

    /// Turns the hash-mode root entry `r` back into a trie holding the same prefixes.
    fn unhash(&mut self, r: usize) {
        let x = self.root[r % ROOT_LEN];
        let members = self.hash_members.remove(&(r as u32)).unwrap_or_default();
        let moved: Vec<(u64, u32)> =
            members.into_iter().filter_map(|hk| Some((hk, self.slots.get(self.slot_index(hk)?)?.1 & VALUE))).collect();
        for &(hk, _) in &moved {
            self.slot_remove(hk);
        }
        self.set_root(r, LEAF | (x & EXACT) | (x >> HASH_VALUE_AT & HASH_VALUE));
        for (hk, e) in moved {
            let len = self.plen.get(e as usize).copied().unwrap_or(64);
            self.place(u128::from(hk) << 64, len, e);
        }
    }

    /// The slot holding the hash key `hk`.
    fn slot_index(&self, hk: u64) -> Option<usize> {
        let mask = self.slots.len().checked_sub(1)?;
        let mut i = multiplier::home(hk, self.mul, self.shift) & mask;
        loop {
            let s = self.slots.get(i)?;
            if s.1 == 0 {
                return None;
            }
            if s.0 == hk {
                return Some(i);
            }
            i = (i + 1) & mask;
        }
    }

    fn slot_insert(&mut self, hk: u64, e: u32) {
        if (self.hashed + 1) * 4 > self.slots.len() {
            self.rehash((self.slots.len() * 2).max(8));
        }
        let mask = self.slots.len() - 1;
        let aux = self.aux.get(e as usize).copied().unwrap_or_default();
        let mut i = multiplier::home(hk, self.mul, self.shift) & mask;
        loop {
            let s = &mut self.slots[i];
            if s.1 == 0 || s.0 == hk {
                if s.1 == 0 {
                    self.hashed += 1;
                    self.hash_members.entry(root_of(hk) as u32).or_default().insert(hk);
                }
                *s = (hk, LEAF | e, aux);
                return;
            }
            i = (i + 1) & mask;
        }
    }

    /// Removes the slot of `hk`, moving back the entries after it in its probe chain
    /// that may sit nearer their home.
    fn slot_remove(&mut self, hk: u64) {
        let Some(hole) = self.slot_index(hk) else { return };
        let (mul, shift) = (self.mul, self.shift);
        let hole = multiplier::close_hole(&mut self.slots, hole, |s| s.1 == 0, |s| multiplier::home(s.0, mul, shift));
        self.slots[hole] = (self.empty_key, 0, A::default());
        self.hashed -= 1;
        if let Some(m) = self.hash_members.get_mut(&(root_of(hk) as u32)) {
            m.remove(&hk);
        }
    }

    /// Moves the taken slots into a table of `cap` slots (a power of two).
    fn rehash(&mut self, cap: usize) {
        let taken: Vec<_> = self.slots.iter().filter(|s| s.1 != 0).copied().collect();
        self.slots = vec![(self.empty_key, 0, A::default()); cap];
        self.shift = 64 - cap.trailing_zeros();
        for s in taken {
            let mut i = multiplier::home(s.0, self.mul, self.shift);
            while self.slots[i].1 != 0 {
                i = (i + 1) & (cap - 1);
            }
            self.slots[i] = s;
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use proptest::prelude::*;

    use super::super::{Lpm4, Lpm6};
    use super::masked;

    /// The reference: every prefix, scanned longest first.
    fn reference(ps: &BTreeMap<(u128, u8), u32>, key: u128) -> Option<u32> {
        let mut best: Option<(u8, u32)> = None;
        for (&(k, l), &v) in ps {
            if masked(key, l) == k && best.is_none_or(|(bl, _)| l > bl) {
                best = Some((l, v));
            }
        }
        best.map(|b| b.1)
    }

    /// An IPv6 key of few distinct leading bytes (so prefixes nest and share nodes).
    fn key6(raw: [u8; 16], r: u8) -> u128 {
        let mut k = raw;
        k[0] = 0x2a;
        k[1] = r % 4;
        k[2] %= 4;
        k[3] %= 3;
        k[4] %= 2;
        u128::from_be_bytes(k)
    }

    /// Lengths that make hash mode (48) and the root (8, 16) and every trie depth.
    const LENS6: [u8; 12] = [0, 8, 16, 17, 24, 33, 40, 48, 48, 48, 64, 127];

    fn check6(t: &Lpm6<u32>, ps: &BTreeMap<(u128, u8), u32>, keys: &[u128]) -> Result<(), TestCaseError> {
        for &k in keys.iter().chain(ps.keys().map(|(k, _)| k)) {
            prop_assert_eq!(t.lookup_key(k).copied(), reference(ps, k), "key {:#x}", k);
            // The aux record follows the value.
            let (e, aux) = t.lookup_aux(k);
            prop_assert_eq!(*aux, t.value(e).map_or(0, |v| v + 1000), "aux of {:#x}", k);
        }
        prop_assert_eq!(t.len(), ps.len());
        Ok(())
    }

    proptest! {
        /// A table built from `initial` and then changed by `ops` (insert, replace,
        /// remove, interleaved) finds what the reference finds after every change, and
        /// what a table built from the final prefixes finds.
        #[test]
        fn updates_match_reference_v6(
            initial in proptest::collection::vec((any::<[u8; 16]>(), any::<u8>(), 0usize..LENS6.len()), 0..30),
            ops in proptest::collection::vec((any::<bool>(), any::<[u8; 16]>(), any::<u8>(), 0usize..LENS6.len(), any::<u8>()), 1..40),
            keys in proptest::collection::vec((any::<[u8; 16]>(), any::<u8>()), 1..20),
        ) {
            let mut ps = BTreeMap::new();
            let mut built = Vec::new();
            for (i, (raw, r, l)) in initial.into_iter().enumerate() {
                let (k, l) = (key6(raw, r), LENS6[l]);
                ps.insert((masked(k, l), l), i as u32);
                built.push((k.to_be_bytes(), l, i as u32));
            }
            let mut t = Lpm6::build(built);
            t.set_aux(|v| v + 1000);
            let keys: Vec<u128> = keys.into_iter().map(|(raw, r)| key6(raw, r)).collect();
            check6(&t, &ps, &keys)?;
            let mut next = 10_000u32;
            for (add, raw, r, l, pick) in ops {
                let (k, l) = (key6(raw, r), LENS6[l]);
                // Removes pick a prefix present more often than not.
                let (k, l) = match ps.keys().nth(usize::from(pick) % (ps.len() + 1)) {
                    Some(&(pk, pl)) if !add => (pk, pl),
                    _ => (k, l),
                };
                if add {
                    next += 1;
                    let old = t.insert(k, l, next, next + 1000);
                    prop_assert_eq!(old, ps.insert((masked(k, l), l), next));
                } else {
                    prop_assert_eq!(t.remove(k, l), ps.remove(&(masked(k, l), l)));
                }
                check6(&t, &ps, &keys)?;
            }
            let rebuilt = Lpm6::build(ps.iter().map(|(&(k, l), &v)| (k.to_be_bytes(), l, v)).collect());
            for &k in keys.iter().chain(ps.keys().map(|(k, _)| k)) {
                prop_assert_eq!(t.lookup_key(k), rebuilt.lookup_key(k));
            }
        }

        /// The same for IPv4 (no hash mode; /0 to /32, nested under few /16s).
        #[test]
        fn updates_match_reference_v4(
            initial in proptest::collection::vec((any::<[u8; 4]>(), 0u8..=32), 0..30),
            ops in proptest::collection::vec((any::<bool>(), any::<[u8; 4]>(), 0u8..=32, any::<u8>()), 1..40),
            keys in proptest::collection::vec(any::<[u8; 4]>(), 1..20),
        ) {
            let key4 = |mut a: [u8; 4]| { a[0] = 10; a[1] %= 3; a[2] %= 4; u128::from(u32::from_be_bytes(a)) << 96 };
            let mut ps = BTreeMap::new();
            let mut built = Vec::new();
            for (i, (a, l)) in initial.into_iter().enumerate() {
                let k = key4(a);
                ps.insert((masked(k, l), l), i as u32);
                built.push((((k >> 96) as u32).to_be_bytes(), l, i as u32));
            }
            let mut t = Lpm4::build(built);
            let keys: Vec<u128> = keys.into_iter().map(key4).collect();
            let mut next = 10_000u32;
            for (add, a, l, pick) in ops {
                let k = key4(a);
                let (k, l) = match ps.keys().nth(usize::from(pick) % (ps.len() + 1)) {
                    Some(&(pk, pl)) if !add => (pk, pl),
                    _ => (k, l),
                };
                if add {
                    next += 1;
                    prop_assert_eq!(t.insert(k, l, next, 0), ps.insert((masked(k, l), l), next));
                } else {
                    prop_assert_eq!(t.remove(k, l), ps.remove(&(masked(k, l), l)));
                }
                for &k in keys.iter().chain(ps.keys().map(|(k, _)| k)) {
                    prop_assert_eq!(t.lookup_key(k).copied(), reference(&ps, k), "key {:#x}", k);
                }
            }
        }
    }

    /// Removing every prefix folds every node away: the table is back to its root alone,
    /// and the nodes are reused by the next inserts.
    #[test]
    fn removes_fold_nodes_for_reuse() {
        let mut t = Lpm6::<u32>::build(vec![]);
        let ps: Vec<(u128, u8)> = (0..200u128).map(|i| ((0x2a00_0001u128 << 96) | (i * 0x1_0203) << 60, 64)).collect();
        for (i, &(k, l)) in ps.iter().enumerate() {
            t.insert(k, l, i as u32, 0);
        }
        let nodes = t.nodes.len();
        assert!(nodes > 0);
        for &(k, l) in &ps {
            assert!(t.remove(k, l).is_some());
        }
        assert!(t.root[..super::ROOT_LEN].iter().all(|&e| e == 0), "every node folded");
        assert_eq!(t.free_nodes.len() * super::STRIDE, nodes - super::STRIDE, "all but node 0, never used");
        for (i, &(k, l)) in ps.iter().enumerate() {
            t.insert(k, l, i as u32, 0);
        }
        assert_eq!(t.nodes.len(), nodes, "the freed nodes were reused");
        assert_eq!(t.lookup_key(ps[7].0 | 1), Some(&7));
    }

    /// A hash-mode /24 takes prefixes of its length into the hash table (growing it),
    /// loses them by backward shifting, and turns into a trie for another length.
    #[test]
    fn hash_mode_grows_shrinks_and_turns_into_a_trie() {
        let base = 0x2a0001u128 << 104;
        let p48 = |i: u128| base | ((i * 0x9e37_79b9) & 0xff_ffff) << 80;
        let mut t = Lpm6::<u32>::build((0..4).map(|i| (p48(i).to_be_bytes(), 48, i as u32)).collect());
        let hashed = |t: &Lpm6<u32>| t.root[0x2a0001] & (super::LEAF | super::HASH) == super::LEAF | super::HASH;
        assert!(hashed(&t));
        for i in 4..1000 {
            t.insert(p48(i), 48, i as u32, 0);
        }
        assert!(hashed(&t) && t.slots.len() >= 4000, "grown: {}", t.slots.len());
        for i in (0..1000).step_by(2) {
            assert_eq!(t.remove(p48(i), 48), Some(i as u32));
        }
        for i in 0..1000 {
            let want = (i % 2 == 1).then_some(i as u32);
            assert_eq!(t.lookup_key(p48(i) | 9).copied(), want, "{i}");
        }
        t.insert(base, 20, 7777, 0);
        t.insert(base, 16, 8888, 0);
        assert!(hashed(&t), "a /20 is the fallback, not a trie");
        assert_eq!(t.lookup_key(p48(0)).copied(), Some(7777));
        t.insert(p48(3) | 1 << 74, 56, 5555, 0);
        assert!(!hashed(&t), "a /56 turns the /24 into a trie");
        assert_eq!(t.lookup_key(p48(3) | 1 << 74).copied(), Some(5555));
        for i in 0..1000 {
            let want = if i % 2 == 1 { i as u32 } else { 7777 };
            assert_eq!(t.lookup_key(p48(i) | 9).copied(), Some(want), "{i}");
        }
        t.remove(base, 20);
        assert_eq!(t.lookup_key(p48(0) | 9).copied(), Some(8888));
    }
}
