//! Longest-prefix match: a multibit trie, 24 bits at the root then 8 bits per level,
//! with leaf pushing (controlled prefix expansion), built once and changed in place
//! ([`update`]) — and, under a root entry whose longer prefixes all have one length `L`
//! in 33..=64 (a /24 holding only /48s, say), a hash table of those prefixes instead of
//! trie nodes.
//!
//! Each entry is a `u32`. With bit 31 (`LEAF`) clear it is a child node: the offset of the
//! node's first entry, so a step of the walk is an OR with the next key byte. With `LEAF`
//! set it is a value: the index of the value plus one (0: no route) in the low 29 bits,
//! bit 30 (`EXACT`) flagging some of them (see [`Lpm::mark`]). A root entry with bit 29
//! (`HASH`) set as well sends the lookup to the hash table: bits 6..29 hold the value
//! for keys that match none of the /L prefixes (the shorter prefixes pushed down) and
//! the low 6 bits `64 - L` (the entry is the shift count as it is: x86 shifts take
//! only those bits). A lookup reads the root entry of the first three address bytes,
//! then either one entry per further byte until it meets a value — a /32 costs 2
//! dependent loads, a /48 4, a /64 6 — or one hash-table slot (two on a collision).
//!
//! The root has 2^24 entries (64 MiB), allocated zeroed and touched only where a prefix
//! longer than /16 lies: a root entry of 0 (no node can sit at offset 0: node 0 is never
//! handed out) means "no prefix longer than /16 covers this /24", and the lookup takes
//! the value from `short`, a 2^16-entry table of the prefixes up to /16 alone. So a
//! default route, or a /8, costs 256 KiB, not the whole root; the prefixes up to /16
//! are pushed into the root entries (and nodes) that are not 0, as any shorter prefix
//! is pushed into a longer one's entries. For IPv4 this is DIR-24-8.
//!
//! Prefixes are inserted shortest first, so a longer prefix simply overwrites the
//! entries it covers, and a new child node inherits its parent entry's value (that is
//! the leaf pushing). The control state kept beside the lookup structure (each prefix's
//! value index, each value's prefix length) tells an update which entries a new prefix
//! may overwrite and what a deleted one's entries fall back to.

use rustc_hash::FxHashMap;

use crate::multiplier;

mod update;

const LEAF: u32 = 1 << 31;
/// On a value entry: some key of the companion exact-match table (the /128s, which
/// are not in the trie) ends its walk here; see [`Lpm::mark`].
const EXACT: u32 = 1 << 30;
/// On a root value entry: look the key up in the hash table.
const HASH: u32 = 1 << 29;
/// Bits of a value entry holding the value index + 1.
const VALUE: u32 = HASH - 1;
/// The fallback value index + 1 of a hash-mode root entry, in its bits from
/// `HASH_VALUE_AT` up.
const HASH_VALUE: u32 = (1 << 23) - 1;
const HASH_VALUE_AT: u32 = 6;
/// The bits of a hash-mode root entry holding `64 - L`.
const HASH_SHIFT: u32 = 63;
const STRIDE: usize = 256;
/// Address bits the root indexes.
pub(crate) const ROOT_BITS: usize = 24;
const ROOT_LEN: usize = 1 << ROOT_BITS;
/// Prefixes up to this length live in `short` (and in the root entries that are not 0).
const SHORT_BITS: usize = 16;
const SHORT_LEN: usize = 1 << SHORT_BITS;
/// Root entries per `short` entry.
const PER_SHORT: usize = 1 << (ROOT_BITS - SHORT_BITS);

/// The value index + 1 (0: no route) of an entry returned by [`Lpm::lookup_entry`].
#[inline(always)]
pub fn entry_index(e: u32) -> usize {
    (e & VALUE) as usize
}

/// Whether an entry returned by [`Lpm::lookup_entry`] is [marked](Lpm::mark).
#[inline(always)]
pub fn entry_marked(e: u32) -> bool {
    e & EXACT != 0
}

/// A longest-prefix-match table from `N`-byte keys (`N` >= 2) to values of type `V`,
/// with an aux record of type `A` per value ([`set_aux`](Self::set_aux)).
#[derive(Debug, Clone)]
pub struct Lpm<const N: usize, V, A = u32> {
    /// Indexed by the first 24 bits: a fixed-size array, so the index needs no check.
    /// 0: take the entry of `short` (see the module docs). `short`, indexed by the first
    /// 16 bits, holds the value entries of the prefixes up to /16; it is the array's
    /// last `SHORT_LEN` entries (one base address for the lookup to keep in a register).
    root: Box<[u32; ROOT_LEN + SHORT_LEN]>,
    /// By `short` entry: whether some root entry under it may be other than 0 (set when
    /// one becomes so; cleared by an update of a short prefix that finds all 0).
    used: Vec<bool>,
    /// Nodes below the root, flat: node `i` is `nodes[i * 256..][..256]`.
    nodes: Vec<u32>,
    values: Vec<V>,
    /// The prefixes under hash-mode root entries: open addressing at load <= 1/4,
    /// (the prefix's first 64 bits with the host bits cleared, its value entry, the
    /// value's aux record); an entry of 0 marks an empty slot.
    slots: Vec<(u64, u32, A)>,
    shift: u32,
    /// The hash multiplier: the one that displaces these prefixes least
    /// ([`multiplier`](crate::multiplier)).
    mul: u64,
    /// By value entry (index + 1; `aux[0]` for no route): a record the user attaches to
    /// each value with [`set_aux`](Self::set_aux), returned by
    /// [`lookup_aux`](Self::lookup_aux) (a FIB keeps there what the fast path needs).
    aux: Vec<A>,
    /// The aux record returned when there is none.
    no_aux: A,
    /// The key of an empty hash slot: one under a root entry that is not in hash mode
    /// and never will be (only [`build`](Self::build) chooses hash mode).
    empty_key: u64,
    /// How many hash slots are taken.
    hashed: usize,
    // Control state, read by the updates only ([`update`]).
    /// Every prefix (left-aligned, host bits clear; its length) and its value entry
    /// (index + 1).
    prefixes: FxHashMap<(u128, u8), u32>,
    /// By value entry: the length of the prefix it belongs to (`plen[0]` unused).
    plen: Vec<u8>,
    /// How many prefixes of each length the table holds.
    per_len: [u32; 129],
    /// Value entries (index + 1) of deleted prefixes, free for reuse.
    free_values: Vec<u32>,
    /// Offsets of nodes no entry points to any more, free for reuse.
    free_nodes: Vec<u32>,
    /// By node (offset / 256): its default, the value entry of the longest prefix
    /// covering the node's whole range (0: none) — what every entry of the node holds
    /// unless a longer prefix owns it.
    node_default: Vec<u32>,
    /// By hash-mode root entry: the keys of its prefixes in the hash table (to turn it
    /// back into a trie without scanning the table).
    hash_members: FxHashMap<u32, rustc_hash::FxHashSet<u64>>,
}

/// IPv6 LPM.
pub type Lpm6<V> = Lpm<16, V>;
/// IPv4 LPM.
pub type Lpm4<V> = Lpm<4, V>;

impl<const N: usize, V, A: Copy + Default> Default for Lpm<N, V, A> {
    fn default() -> Self {
        Lpm {
            root: {
                let mut r: Box<[u32; ROOT_LEN + SHORT_LEN]> = boxed_array(0);
                r[ROOT_LEN..].fill(LEAF);
                r
            },
            used: vec![false; SHORT_LEN],
            // Node 0 is never used (a root entry of 0 is "see `short`", not a child).
            nodes: vec![LEAF; STRIDE],
            values: Vec::new(),
            slots: vec![(0, 0, A::default())],
            shift: 63,
            mul: multiplier::DEFAULT,
            aux: vec![A::default()],
            no_aux: A::default(),
            empty_key: 0,
            hashed: 0,
            prefixes: FxHashMap::default(),
            plen: vec![0],
            per_len: [0; 129],
            free_values: Vec::new(),
            free_nodes: Vec::new(),
            node_default: vec![0],
            hash_members: FxHashMap::default(),
        }
    }
}

/// A boxed array of `L` entries `fill`, made on the heap (zeroed pages for 0: the
/// allocator maps them untouched).
fn boxed_array<const L: usize>(fill: u32) -> Box<[u32; L]> {
    let v: Box<[u32]> = vec![fill; L].into_boxed_slice();
    match v.try_into() {
        Ok(a) => a,
        // The length is L by construction.
        Err(_) => unreachable!("a slice of {L} entries"),
    }
}

/// The root index of a key's first 64 bits.
#[inline(always)]
fn root_of(hi: u64) -> usize {
    (hi >> (64 - ROOT_BITS)) as usize
}

/// The `short` index of a key's first 64 bits.
#[inline(always)]
fn short_of(hi: u64) -> usize {
    (hi >> (64 - SHORT_BITS)) as usize
}

/// The key as a left-aligned big-endian integer (the form [`Lpm::lookup_key`] takes).
#[inline(always)]
fn key_of<const N: usize>(key: &[u8; N]) -> u128 {
    let mut k = [0u8; 16];
    k[..N.min(16)].copy_from_slice(&key[..N.min(16)]);
    u128::from_be_bytes(k)
}

/// The key's first 64 bits (left-aligned) and its root index.
#[inline(always)]
fn hi_of<const N: usize>(key: &[u8; N]) -> u64 {
    let mut k = [0u8; 8];
    k[..N.min(8)].copy_from_slice(&key[..N.min(8)]);
    u64::from_be_bytes(k)
}

impl<const N: usize, V, A: Copy + Default> Lpm<N, V, A> {
    /// Builds the table. Later duplicates of the same prefix replace earlier ones
    /// (as `ip route replace` would); host bits beyond the length are ignored.
    pub fn build(mut prefixes: Vec<([u8; N], u8, V)>) -> Self {
        // Stable sort: equal lengths keep file order, so the last duplicate wins.
        prefixes.sort_by_key(|p| p.1);
        // Per root entry with longer prefixes under it, their length: L if they all
        // have the same L in 33..=64 (hash mode: the trie would need 2 to 5 levels;
        // one level, for /25../32, is cheaper than a hash probe), 255 otherwise (trie).
        let hash_ok = prefixes.len() < HASH_VALUE as usize;
        let mut lens: FxHashMap<u32, u8> = FxHashMap::default();
        for (key, len, _) in &prefixes {
            let len = (*len as usize).min(N * 8);
            if len <= ROOT_BITS {
                continue;
            }
            let hashable = (33..=64).contains(&len) && hash_ok;
            lens.entry(root_of(hi_of(key)) as u32)
                .and_modify(|l| {
                    if usize::from(*l) != len {
                        *l = 255;
                    }
                })
                .or_insert(if hashable { len as u8 } else { 255 });
        }
        // An empty hash slot holds a key no probe can ask for: one under a root entry
        // that is not in hash mode (a probe's key starts with its hash-mode /24), so
        // that a hit is decided by the key compare alone.
        let hashed_len = |r: u32| lens.get(&r).copied().filter(|&l| l != 255);
        let free = (0..ROOT_LEN as u32).find(|&r| hashed_len(r).is_none()).unwrap_or(0);
        let empty_key = u64::from(free) << (64 - ROOT_BITS);
        let mut t = Lpm::default();
        let mut hashed: Vec<(u64, u32)> = Vec::new();
        t.prefixes.reserve(prefixes.len());
        t.plen.reserve(prefixes.len());
        for (key, len, v) in prefixes {
            let len = (len as usize).min(N * 8);
            t.values.push(v);
            let val = t.values.len() as u32; // index + 1
            debug_assert!(val <= VALUE);
            t.plen.push(len as u8);
            let k = update::masked(key_of(&key), len as u8);
            if let Some(old) = t.prefixes.insert((k, len as u8), val) {
                // A duplicate: the earlier value is unreachable once this one is in.
                t.free_values.push(old);
            } else {
                t.per_len[len] += 1;
            }
            let hi = hi_of(&key);
            let r = root_of(hi) as u32;
            if len > ROOT_BITS && hashed_len(r).is_some() {
                let k = hi & (u64::MAX << (64 - len));
                t.hash_members.entry(r).or_default().insert(k);
                hashed.push((k, LEAF | val));
            } else {
                t.insert_sorted(&key, len, LEAF | val);
            }
        }
        for (&r, &l) in &lens {
            if l != 255 {
                // No trie node under it: the entry is the value of the shorter prefixes.
                let fallback = t.root_value(r as usize) & HASH_VALUE;
                t.set_root(r as usize, LEAF | HASH | fallback << HASH_VALUE_AT | (64 - u32::from(l)));
            }
        }
        let cap = (hashed.len() * 4).next_power_of_two().max(8);
        t.empty_key = empty_key;
        t.slots = vec![(empty_key, 0, A::default()); cap];
        t.shift = 64 - cap.trailing_zeros();
        // Distinct prefixes (a later duplicate replaces an earlier one below).
        let mut keys: Vec<u64> = hashed.iter().map(|&(k, _)| k).collect();
        keys.sort_unstable();
        keys.dedup();
        t.mul = multiplier::best(&keys, t.shift, cap);
        for (k, val) in hashed {
            let mut i = multiplier::home(k, t.mul, t.shift);
            loop {
                let s = &mut t.slots[i];
                if s.1 == 0 || s.0 == k {
                    t.hashed += usize::from(s.1 == 0);
                    *s = (k, val, A::default());
                    break;
                }
                i = (i + 1) & (cap - 1);
            }
        }
        t.aux = vec![A::default(); t.values.len() + 1];
        t
    }

    /// The value entry root entry `r` stands for: its own, or `short`'s if it is 0.
    #[inline]
    fn root_value(&self, r: usize) -> u32 {
        match self.root[r % ROOT_LEN] {
            0 => self.short(r / PER_SHORT),
            x => x,
        }
    }

    /// Entry `s` of `short`.
    #[inline]
    fn short(&self, s: usize) -> u32 {
        self.root[ROOT_LEN + s % SHORT_LEN]
    }

    fn set_short(&mut self, s: usize, x: u32) {
        self.root[ROOT_LEN + s % SHORT_LEN] = x;
    }

    /// Sets root entry `r` to `x`; a root entry that ends up standing for `short`'s own
    /// value (no longer prefix, no mark) goes back to 0, leaving the page alone.
    fn set_root(&mut self, r: usize, x: u32) {
        let s = r / PER_SHORT % SHORT_LEN;
        let x = if x == self.short(s) { 0 } else { x };
        if x != 0 {
            self.used[s] = true;
        }
        self.root[r % ROOT_LEN] = x;
    }

    /// Attaches `f(value)` to every value, for [`lookup_aux`](Self::lookup_aux).
    pub fn set_aux(&mut self, f: impl Fn(&V) -> A) {
        self.aux = std::iter::once(A::default()).chain(self.values.iter().map(f)).collect();
        for s in self.slots.iter_mut() {
            if s.1 != 0 {
                s.2 = self.aux.get(entry_index(s.1)).copied().unwrap_or_default();
            }
        }
    }

    /// Appends a node whose 256 entries are `fill`; returns its offset.
    fn new_node(&mut self, fill: u32) -> u32 {
        if let Some(at) = self.free_nodes.pop() {
            if let Some(node) = self.nodes.get_mut(at as usize..at as usize + STRIDE) {
                node.fill(fill);
                if let Some(d) = self.node_default.get_mut(at as usize / STRIDE) {
                    *d = fill & VALUE;
                }
                return at;
            }
        }
        let at = self.nodes.len();
        self.node_default.push(fill & VALUE);
        self.nodes.extend(std::iter::repeat_n(fill, STRIDE));
        at as u32
    }

    fn insert_sorted(&mut self, key: &[u8; N], len: usize, val: u32) {
        let hi = hi_of(key);
        let r = root_of(hi);
        if len <= SHORT_BITS {
            // Shortest first: no root entry is taken yet (a duplicate overwrites).
            let count = 1usize << (SHORT_BITS - len);
            let first = short_of(hi) & !(count - 1);
            for i in first..first + count {
                self.set_short(i, val);
            }
            return;
        }
        if len <= ROOT_BITS {
            let count = 1usize << (ROOT_BITS - len);
            let first = r & !(count - 1);
            for i in first..first + count {
                let e = self.root[i % ROOT_LEN];
                if e != 0 && e & LEAF == 0 {
                    self.fill_under(e as usize, val);
                } else {
                    self.set_root(i, val);
                }
            }
            return;
        }
        let e = self.root_value(r);
        let mut node = if e & LEAF == 0 {
            e as usize
        } else {
            let c = self.new_node(e);
            self.set_root(r, c);
            c as usize
        };
        let mut depth = ROOT_BITS / 8; // byte index of `node`'s stride
                                       // Walk full strides, creating children with the parent's value pushed down.
        while len > (depth + 1) * 8 {
            let at = node + key[depth] as usize;
            let e = self.nodes[at];
            node = if e & LEAF == 0 {
                e as usize
            } else {
                let child = self.new_node(e);
                self.nodes[at] = child;
                child as usize
            };
            depth += 1;
        }
        // Expand the remaining 1..=8 bits over a range of entries at this level.
        let rem = len - depth * 8;
        let b = key[depth] as usize;
        let mask = (0xFFusize << (8 - rem)) & 0xFF;
        let (first, count) = (b & mask, 1usize << (8 - rem));
        for i in node + first..node + first + count {
            let e = self.nodes[i];
            if e & LEAF == 0 {
                self.fill_under(e as usize, val);
            } else {
                self.nodes[i] = val;
            }
        }
    }

    /// Pushes `val` into every value entry below the node at `node` (children exist
    /// only for longer prefixes inserted earlier at equal length; shortest-first order
    /// keeps this rare).
    fn fill_under(&mut self, node: usize, val: u32) {
        if let Some(d) = self.node_default.get_mut(node / STRIDE) {
            *d = val & VALUE;
        }
        for i in node..node + STRIDE {
            let e = self.nodes[i];
            if e & LEAF == 0 {
                self.fill_under(e as usize, val);
            } else {
                self.nodes[i] = val;
            }
        }
    }

    /// Flags the entry where the walk for `key` (left-aligned, as in
    /// [`lookup_key`](Self::lookup_key)) ends, so that [`lookup_marked`](Self::lookup_marked)
    /// reports it: a FIB marks every /128 it holds in its exact table, and a lookup then
    /// consults that table only when the walk ends on a marked entry — a destination
    /// with no /128 under its longest prefix (every transit packet) skips the probe. A
    /// hash-mode root entry is marked as a whole.
    pub fn mark(&mut self, key: u128) {
        let (hi, lo) = ((key >> 64) as u64, key as u64);
        let r = root_of(hi);
        let mut e = self.root_value(r);
        if e & LEAF != 0 {
            self.set_root(r, e | EXACT);
            return;
        }
        for i in ROOT_BITS / 8..N.min(16) {
            let b = if i < 8 { (hi >> (56 - 8 * i)) as u8 } else { (lo >> (120 - 8 * i)) as u8 };
            let at = e as usize | b as usize;
            e = self.nodes[at];
            if e & LEAF != 0 {
                self.nodes[at] = e | EXACT;
                return;
            }
        }
    }

    /// The bytes the table holds on the heap: the root's pages that are touched (an
    /// entry other than 0 in them), `short`, nodes, values, hash slots and aux records
    /// (capacities, not lengths), and the control state the updates read.
    pub fn heap_bytes(&self) -> usize {
        use std::mem::size_of;
        const PAGE: usize = 4096 / size_of::<u32>();
        let root_pages = self.root[..ROOT_LEN].chunks(PAGE).filter(|p| p.iter().any(|&e| e != 0)).count();
        root_pages * PAGE * size_of::<u32>()
            + size_of::<[u32; SHORT_LEN]>()
            + self.used.capacity()
            + self.nodes.capacity() * size_of::<u32>()
            + self.values.capacity() * size_of::<V>()
            + self.slots.capacity() * size_of::<(u64, u32, A)>()
            + self.aux.capacity() * size_of::<A>()
            + self.prefixes.capacity() * (size_of::<((u128, u8), u32)>() + 1)
            + self.plen.capacity()
            + (self.free_values.capacity() + self.free_nodes.capacity() + self.node_default.capacity())
                * size_of::<u32>()
    }

    /// How many prefixes the table holds.
    pub fn len(&self) -> usize {
        self.prefixes.len()
    }

    /// Whether the table holds no prefix.
    pub fn is_empty(&self) -> bool {
        self.prefixes.is_empty()
    }

    /// The value of the longest prefix covering `key`.
    #[inline(always)]
    pub fn lookup(&self, key: &[u8; N]) -> Option<&V> {
        let mut k = [0u8; 16];
        k[..N.min(16)].copy_from_slice(&key[..N.min(16)]);
        self.lookup_key(u128::from_be_bytes(k))
    }

    /// [`lookup`](Self::lookup) with the key as a big-endian integer, left-aligned (an
    /// IPv6 address as is, an IPv4 address shifted up by 96 bits).
    #[inline(always)]
    pub fn lookup_key(&self, key: u128) -> Option<&V> {
        self.lookup_marked(key).0
    }

    /// [`lookup_key`](Self::lookup_key), and whether the entry found was
    /// [marked](Self::mark).
    #[inline(always)]
    pub fn lookup_marked(&self, key: u128) -> (Option<&V>, bool) {
        let e = self.lookup_entry(key);
        (self.value(e), e & EXACT != 0)
    }

    /// The value of an entry returned by [`lookup_entry`](Self::lookup_entry).
    #[inline(always)]
    pub fn value(&self, e: u32) -> Option<&V> {
        ((e & VALUE) as usize).checked_sub(1).and_then(|i| self.values.get(i))
    }

    /// The value entry the lookup of `key` ends on: the value's index + 1 in the bits
    /// of `VALUE` (0: no route), [`EXACT`] if marked. The bytes of the key are taken by
    /// shifts of two 64-bit halves instead of being spilled one by one, and the walk is
    /// unrolled (`N` is a constant).
    #[inline(always)]
    pub fn lookup_entry(&self, key: u128) -> u32 {
        let (hi, lo) = ((key >> 64) as u64, key as u64);
        let mut e = self.root[root_of(hi)];
        if e & LEAF != 0 {
            if e & HASH != 0 {
                return self.probe(hi, e);
            }
            return e;
        }
        if e == 0 {
            return self.root[ROOT_LEN + short_of(hi)];
        }
        for i in ROOT_BITS / 8..N.min(16) {
            let b = if i < 8 { (hi >> (56 - 8 * i)) as u8 } else { (lo >> (120 - 8 * i)) as u8 };
            // `e` is a child entry we created, so the node exists; `get` keeps the hot
            // path panic-free all the same.
            match self.nodes.get(e as usize | b as usize) {
                Some(&x) => e = x,
                None => return LEAF,
            }
            if e & LEAF != 0 {
                return e;
            }
        }
        LEAF
    }

    /// [`lookup_entry`](Self::lookup_entry) and the [aux record](Self::set_aux) of the
    /// value found (the default if none) — read from the hash slot itself when the
    /// lookup ends in the hash table.
    #[inline(always)]
    pub fn lookup_aux(&self, key: u128) -> (u32, &A) {
        let e = self.root[root_of((key >> 64) as u64)];
        if e & (LEAF | HASH) == LEAF | HASH {
            let (e, aux) = self.probe_aux((key >> 64) as u64, e);
            return (e, aux);
        }
        let e = self.lookup_entry(key);
        (e, self.aux.get(entry_index(e)).unwrap_or(&self.no_aux))
    }

    /// The aux record of the hash-table prefix `key` falls under, when its lookup ends
    /// in the hash table, on an unmarked root entry, at one of the prefixes there (not
    /// at the shorter prefixes' fallback): the fast path's one-step route lookup.
    /// `None` tells nothing about the key — [`lookup_aux`](Self::lookup_aux) does.
    #[inline(always)]
    pub fn hash_hit(&self, key: u128) -> Option<&A> {
        let e = self.root[root_of((key >> 64) as u64)];
        if e & (LEAF | HASH | EXACT) != LEAF | HASH {
            return None;
        }
        self.slot((key >> 64) as u64, e).map(|s| &s.2)
    }

    /// [`hash_hit`](Self::hash_hit) and the root entry under which the hit lies, for
    /// [`hash_hit_under`](Self::hash_hit_under).
    #[inline(always)]
    pub fn hash_hit_root(&self, key: u128) -> Option<(u32, &A)> {
        let e = self.root[root_of((key >> 64) as u64)];
        if e & (LEAF | HASH | EXACT) != LEAF | HASH {
            return None;
        }
        self.slot((key >> 64) as u64, e).map(|s| (e, &s.2))
    }

    /// [`hash_hit`](Self::hash_hit) for a key with the same first 24 bits as one whose
    /// [`hash_hit_root`](Self::hash_hit_root) returned the root entry `root`, without
    /// reading that entry again.
    #[inline(always)]
    pub fn hash_hit_under(&self, root: u32, key: u128) -> Option<&A> {
        debug_assert_eq!(root & (LEAF | HASH | EXACT), LEAF | HASH);
        self.slot((key >> 64) as u64, root).map(|s| &s.2)
    }

    /// The hash-table slot of the prefix that the key with first 64 bits `hi` falls
    /// under, below the hash-mode root entry `e`; `None` if there is none (the shorter
    /// prefixes' fallback applies).
    #[inline(always)]
    fn slot(&self, hi: u64, e: u32) -> Option<&(u64, u32, A)> {
        let k = hi & (u64::MAX << (e & HASH_SHIFT));
        let mask = self.slots.len() - 1;
        let mut i = multiplier::home(k, self.mul, self.shift);
        // At least 3/4 of the slots are empty, so the probe always ends. No empty slot
        // has a key a probe asks for (`build`): the key compare comes first.
        loop {
            let s = self.slots.get(i)?;
            if s.0 == k {
                return Some(s);
            }
            if s.1 == 0 {
                return None;
            }
            i = (i + 1) & mask;
        }
    }

    /// The hash-table part of a lookup under the hash-mode root entry `e`.
    #[inline(always)]
    fn probe(&self, hi: u64, e: u32) -> u32 {
        self.probe_aux(hi, e).0
    }

    /// [`probe`](Self::probe) and the aux record of the value found.
    #[inline(always)]
    fn probe_aux(&self, hi: u64, e: u32) -> (u32, &A) {
        match self.slot(hi, e) {
            Some((_, sv, aux)) => (sv | (e & EXACT), aux),
            None => {
                let f = LEAF | (e & EXACT) | (e >> HASH_VALUE_AT & HASH_VALUE);
                (f, self.aux.get(entry_index(f)).unwrap_or(&self.no_aux))
            }
        }
    }

    pub fn values(&self) -> &[V] {
        &self.values
    }

    /// The value and aux record of the prefix `key`/`len` itself (not of a lookup), as
    /// [`entries`](Self::entries) lists them.
    pub fn entry(&self, key: u128, len: u8) -> Option<(&V, &A)> {
        let len = len.min((N * 8) as u8);
        let e = *self.prefixes.get(&(update::masked(key, len), len))?;
        let v = self.values.get((e as usize).checked_sub(1)?)?;
        Some((v, self.aux.get(e as usize).unwrap_or(&self.no_aux)))
    }

    /// Every prefix (the key left-aligned in a `u128`, host bits clear; its length)
    /// with its value and aux record, in no particular order.
    pub fn entries(&self) -> impl Iterator<Item = (u128, u8, &V, &A)> + '_ {
        self.prefixes.iter().filter_map(|(&(key, len), &e)| {
            let v = self.values.get((e as usize).checked_sub(1)?)?;
            Some((key, len, v, self.aux.get(e as usize).unwrap_or(&self.no_aux)))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn v6(s: &str) -> [u8; 16] {
        s.parse::<std::net::Ipv6Addr>().unwrap().octets()
    }

    /// The obviously-correct oracle: scan every prefix.
    fn naive<const N: usize>(ps: &[([u8; N], u8, u32)], key: &[u8; N]) -> Option<u32> {
        let mut best: Option<(u8, u32)> = None;
        for (p, len, v) in ps {
            let mut ok = true;
            for bit in 0..*len as usize {
                let (byte, sh) = (bit / 8, 7 - bit % 8);
                if (p[byte] >> sh) & 1 != (key[byte] >> sh) & 1 {
                    ok = false;
                    break;
                }
            }
            if ok && best.is_none_or(|(l, _)| *len >= l) {
                best = Some((*len, *v));
            }
        }
        best.map(|b| b.1)
    }

    #[test]
    fn longest_wins() {
        let t = Lpm6::build(vec![
            (v6("::"), 0, "default"),
            (v6("fc00::"), 16, "fc00/16"),
            (v6("fc00:1::"), 32, "fc00:1/32"),
            (v6("fc00:1::1"), 128, "host"),
            (v6("fc00:1:8000::"), 33, "odd"),
        ]);
        assert_eq!(t.lookup(&v6("fc00:1::1")), Some(&"host"));
        assert_eq!(t.lookup(&v6("fc00:1::2")), Some(&"fc00:1/32"));
        assert_eq!(t.lookup(&v6("fc00:1:8000::2")), Some(&"odd"));
        assert_eq!(t.lookup(&v6("fc00:2::1")), Some(&"fc00/16"));
        assert_eq!(t.lookup(&v6("2001:db8::1")), Some(&"default"));
    }

    /// Empty hash slots hold a key under a /24 that is not in hash mode. With a /48 under
    /// every /16 (each under one of its /24s), every one of those root entries is in
    /// hash mode, the empty key lies under another, and lookups are right, including for
    /// the keys an empty slot holds (`0::/24`) and under the short prefixes' default.
    #[test]
    fn hash_mode_on_many_roots() {
        let mut ps: Vec<([u8; 16], u8, u32)> = (0..1u32 << 16)
            .map(|r| {
                let mut k = [0u8; 16];
                k[..2].copy_from_slice(&(r as u16).to_be_bytes());
                k[2] = 0x80 | (r % 97) as u8;
                (k, 48, r + 1)
            })
            .collect();
        ps.push(([0; 16], 0, 0));
        let t = Lpm6::build(ps.clone());
        let probe = |a: u128| {
            let k = a.to_be_bytes();
            assert_eq!(t.lookup(&k).copied(), naive(&ps, &k), "{a:#x}");
        };
        for r in (0..1u128 << 16).step_by(251).chain([0, 1, 0xfffe, 0xffff]) {
            let base = r << 112;
            probe(base);
            probe(base | u128::from(0x80 | (r % 97) as u8) << 104 | 5);
            probe(base | 0x7f << 104);
        }
        let hashed = t.root[..ROOT_LEN].iter().filter(|&&e| e & (LEAF | HASH) == LEAF | HASH).count();
        assert_eq!(hashed, 1 << 16, "every /24 holding a /48 in hash mode");
        assert_eq!(t.root[..ROOT_LEN].iter().filter(|&&e| e != 0).count(), 1 << 16, "no other root entry touched");
        assert_eq!(t.root[root_of(t.empty_key)], 0);
    }

    /// A default route and short prefixes live in `short`: the root stays 0 (its pages
    /// untouched) until a longer prefix comes, which the short prefixes are pushed
    /// into, and it goes back to 0 when that prefix goes.
    #[test]
    fn short_prefixes_leave_the_root_alone() {
        let mut t = Lpm6::build(vec![(v6("::"), 0, 1u32), (v6("2a00::"), 8, 2), (v6("2a01::"), 16, 3)]);
        assert!(t.root[..ROOT_LEN].iter().all(|&e| e == 0));
        let key = |a: &str| u128::from_be_bytes(v6(a));
        assert_eq!(t.lookup_key(key("2a01:ff::1")), Some(&3));
        assert_eq!(t.lookup_key(key("2a02::1")), Some(&2));
        assert_eq!(t.lookup_key(key("3000::1")), Some(&1));
        t.insert(key("2a01:100::"), 24, 4, 0);
        t.insert(key("2a01:200::"), 40, 5, 0);
        assert_eq!(t.root[..ROOT_LEN].iter().filter(|&&e| e != 0).count(), 2);
        t.insert(key("2a01::"), 12, 6, 0);
        t.remove(key("2a01::"), 16);
        assert_eq!(t.lookup_key(key("2a01:200:100::1")), Some(&6), "pushed into the /24's node");
        assert_eq!(t.lookup_key(key("2a01:200:1::1")), Some(&5));
        assert_eq!(t.lookup_key(key("2a01:300::1")), Some(&6));
        t.remove(key("2a01:100::"), 24);
        t.remove(key("2a01:200::"), 40);
        assert!(t.root[..ROOT_LEN].iter().all(|&e| e == 0), "back to 0");
        assert_eq!(t.lookup_key(key("2a01:200::1")), Some(&6));
        t.mark(key("2a01:300::1"));
        assert!(t.lookup_marked(key("2a01:300::1")).1);
        assert_eq!(t.lookup_key(key("2a01:300::1")), Some(&6));
        assert!(!t.lookup_marked(key("2a01:400::1")).1);
    }

    #[test]
    fn empty_table_finds_nothing() {
        let t: Lpm4<u8> = Lpm4::build(vec![]);
        assert_eq!(t.lookup(&[10, 0, 0, 1]), None);
        let t = Lpm4::build(vec![([10, 0, 0, 0], 8, 1u8)]);
        assert_eq!(t.lookup(&[11, 0, 0, 1]), None);
        assert_eq!(t.lookup(&[10, 9, 9, 9]), Some(&1));
    }

    #[test]
    fn aux_follows_the_value() {
        let mut t = Lpm6::build(vec![
            (v6("::"), 0, 1u32),
            (v6("2a00:1:2::"), 48, 2),
            (v6("2a00:1:3::"), 48, 3),
            (v6("2b00::"), 20, 4),
            (v6("2b00:1::"), 32, 5),
            (v6("2b00:1:0:5::"), 64, 6),
        ]);
        t.set_aux(|v| v * 10);
        for (a, v) in [
            ("2a00:1:2::9", 2),
            ("2a00:1:4::9", 1),
            ("2b00:1:0:5::1", 6),
            ("2b00:1:0:6::1", 5),
            ("2b00:2::", 4),
            ("3::", 1),
        ] {
            let k = u128::from_be_bytes(v6(a));
            let (e, aux) = t.lookup_aux(k);
            assert_eq!(e, t.lookup_entry(k), "{a}");
            assert_eq!(t.value(e), Some(&v), "{a}");
            assert_eq!(*aux, v * 10, "{a}");
            // Only 2a00::/16 is in hash mode (its longer prefixes are all /48s); the hash
            // hit is a /48 found there, not the fallback to the shorter prefixes.
            assert_eq!(t.hash_hit(k).copied(), if a == "2a00:1:2::9" { Some(20) } else { None }, "{a}");
        }
        // A marked hash-mode root: no hash hit (a /128 may match instead).
        t.mark(u128::from_be_bytes(v6("2a00:1:3::1")));
        assert_eq!(t.hash_hit(u128::from_be_bytes(v6("2a00:1:2::9"))), None);
        assert_eq!(t.lookup_aux(u128::from_be_bytes(v6("2a00:1:2::9"))).1, &20);
    }

    #[test]
    fn duplicate_prefix_last_wins() {
        let t = Lpm4::build(vec![([10, 0, 0, 0], 8, 1u8), ([10, 0, 0, 0], 8, 2u8)]);
        assert_eq!(t.lookup(&[10, 1, 2, 3]), Some(&2));
    }

    proptest! {
        #[test]
        fn matches_naive_v4(ps in proptest::collection::vec((any::<[u8; 4]>(), 0u8..=32), 0..40),
                            keys in proptest::collection::vec(any::<[u8; 4]>(), 1..40)) {
            let ps: Vec<_> = ps.into_iter().enumerate().map(|(i, (k, l))| (k, l, i as u32)).collect();
            // Make duplicates deterministic for the oracle: keep the last per (masked prefix, len).
            let t = Lpm4::build(ps.clone());
            for k in keys.iter().chain(ps.iter().map(|p| &p.0)) {
                prop_assert_eq!(t.lookup(k).copied(), naive(&ps, k));
            }
        }

        /// Marking never changes a lookup's value, and every marked key reports the mark
        /// (so a FIB never skips the /128 table for a key that is in it).
        #[test]
        fn marks_are_found(ps in proptest::collection::vec((any::<[u8; 16]>(), 0u8..=127), 0..25),
                           marks in proptest::collection::vec(any::<[u8; 16]>(), 0..20),
                           keys in proptest::collection::vec(any::<[u8; 16]>(), 1..20)) {
            let ps: Vec<_> = ps.into_iter().enumerate().map(|(i, (mut k, l))| { k[0] = 0xfc; (k, l, i as u32) }).collect();
            let plain = Lpm6::build(ps.clone());
            let mut t = Lpm6::build(ps.clone());
            let marks: Vec<u128> = marks.into_iter().map(|mut k| { k[0] = 0xfc; u128::from_be_bytes(k) }).collect();
            for m in &marks {
                t.mark(*m);
            }
            for m in &marks {
                prop_assert!(t.lookup_marked(*m).1);
            }
            for k in keys.iter().chain(ps.iter().map(|p| &p.0)) {
                let mut k = *k; k[0] = 0xfc;
                prop_assert_eq!(t.lookup(&k), plain.lookup(&k));
                prop_assert_eq!(t.lookup_key(u128::from_be_bytes(k)), plain.lookup(&k));
            }
        }

        /// Few lengths under few /16s: hash-mode root entries next to trie ones, with
        /// shorter prefixes pushed under both.
        #[test]
        fn matches_naive_v6_hash_mode(ps in proptest::collection::vec((any::<[u8; 16]>(), 0usize..9, 0u8..4), 0..60),
                                      keys in proptest::collection::vec((any::<[u8; 16]>(), 0u8..4), 1..40)) {
            const LENS: [u8; 9] = [0, 8, 16, 17, 24, 33, 48, 64, 100];
            let ps: Vec<_> = ps.into_iter().enumerate().map(|(i, (mut k, l, r))| {
                k[0] = 0x2a; k[1] = r; (k, LENS[l], i as u32)
            }).collect();
            let mut t = Lpm6::build(ps.clone());
            t.set_aux(|v| v + 1);
            for (k, r) in keys.iter().map(|(k, r)| (*k, *r)).chain(ps.iter().map(|p| (p.0, p.0[1]))) {
                let mut k = k; k[0] = 0x2a; k[1] = r;
                prop_assert_eq!(t.lookup(&k).copied(), naive(&ps, &k));
                // A hash hit, when there is one, is the lookup's value.
                let kk = u128::from_be_bytes(k);
                if let Some(a) = t.hash_hit(kk) {
                    prop_assert_eq!(Some(a - 1), naive(&ps, &k));
                }
                let root = t.hash_hit_root(kk);
                prop_assert_eq!(root.map(|r| r.1), t.hash_hit(kk));
                // A key sharing the first 6 bytes of a prefix: hits a /48 with other host bits.
                if let Some(p) = ps.get(usize::from(r) % ps.len().max(1)) {
                    let mut k2 = k; k2[..6].copy_from_slice(&p.0[..6]);
                    prop_assert_eq!(t.lookup(&k2).copied(), naive(&ps, &k2));
                    if let Some(a) = t.hash_hit(u128::from_be_bytes(k2)) {
                        prop_assert_eq!(Some(a - 1), naive(&ps, &k2));
                    }
                    // Under the root entry of a hit, any key of the same /24 probes as
                    // `hash_hit` would (what NEXT-C-SID's shifted destination does).
                    if let (Some((e, _)), true) = (root, k2[..3] == k[..3]) {
                        prop_assert_eq!(t.hash_hit_under(e, u128::from_be_bytes(k2)), t.hash_hit(u128::from_be_bytes(k2)));
                    }
                }
            }
        }

        #[test]
        fn matches_naive_v6(ps in proptest::collection::vec((any::<[u8; 16]>(), 0u8..=128), 0..25),
                            keys in proptest::collection::vec(any::<[u8; 16]>(), 1..20)) {
            let ps: Vec<_> = ps.into_iter().enumerate().map(|(i, (mut k, l))| {
                // Bias keys towards sharing leading bytes so deep nodes get exercised.
                k[0] = 0xfc; (k, l, i as u32)
            }).collect();
            let t = Lpm6::build(ps.clone());
            for k in keys.iter().chain(ps.iter().map(|p| &p.0)) {
                let mut k = *k; k[0] = 0xfc;
                prop_assert_eq!(t.lookup(&k).copied(), naive(&ps, &k));
            }
        }
    }
}
