//! eBPF maps as the kernel's helpers see them (kernel/bpf/arraymap.c, hashtab.c,
//! lpm_trie.c): array and hash maps, their per-CPU variants kept as one copy (sr6 runs a
//! program on one worker at a time per map set), longest-prefix-match tries, and global
//! data (`.rodata`, `.data`, `.bss`) as one-element arrays, and perf event arrays, whose
//! slots are not values but the ring of [`crate::events`]. Values live in one flat byte vector per map so that a value is addressed by
//! `(map, offset)`, which is what the interpreter's pointers hold.

use std::collections::HashMap;

use crate::events::EventRing;

/// `enum bpf_map_type` values sr6 knows by number (include/uapi/linux/bpf.h).
pub mod map_type {
    pub const HASH: u32 = 1;
    pub const ARRAY: u32 = 2;
    pub const PERF_EVENT_ARRAY: u32 = 4;
    pub const PERCPU_HASH: u32 = 5;
    pub const PERCPU_ARRAY: u32 = 6;
    pub const LRU_HASH: u32 = 9;
    pub const LPM_TRIE: u32 = 11;
}

/// `BPF_F_NO_PREALLOC`, which the kernel requires of an LPM trie.
pub const F_NO_PREALLOC: u32 = 1;
/// An LPM key: a u32 prefix length, then up to 256 bytes of data (lpm_trie.c).
const LPM_KEY_MAX: usize = 4 + 256;

/// Largest value storage one map may take (`max_entries * value_size`).
pub const MAX_MAP_BYTES: u64 = 64 << 20;

// Errno values the map helpers return (negated), as the kernel's.
pub const ENOENT: i64 = 2;
pub const E2BIG: i64 = 7;
pub const EEXIST: i64 = 17;
pub const EINVAL: i64 = 22;
pub const ENOSPC: i64 = 28;

// Update flags (BPF_ANY, BPF_NOEXIST, BPF_EXIST).
const NOEXIST: u64 = 1;
const EXIST: u64 = 2;

/// What a map is, as the object declared it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MapDef {
    pub name: String,
    pub map_type: u32,
    pub key_size: u32,
    pub value_size: u32,
    pub max_entries: u32,
    pub flags: u32,
}

/// The storage of one map.
#[derive(Clone, Debug)]
pub struct Map {
    pub def: MapDef,
    /// Program writes refused (`.rodata`, as the kernel's BPF_F_RDONLY_PROG).
    pub read_only: bool,
    /// An LPM trie: a hash store keyed by (prefix length, data masked to it), looked up
    /// from the longest length down.
    lpm: bool,
    store: Store,
}

#[derive(Clone, Debug)]
enum Store {
    Array(Vec<u8>),
    Hash {
        values: Vec<u8>,
        index: HashMap<Vec<u8>, u32>,
        free: Vec<u32>,
    },
    /// A perf event array: no values a program or an operator can address, the events.
    Events(Box<EventRing>),
}

/// Why a map definition is refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MapDefError {
    UnsupportedType(u32),
    BadSizes,
    TooBig(u64),
}

impl std::fmt::Display for MapDefError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MapDefError::UnsupportedType(t) => {
                let name = match *t {
                    map_type::LRU_HASH => "lru_hash",
                    _ => "",
                };
                if name.is_empty() {
                    write!(f, "map type {t} is not supported (sr6 has array, hash, percpu_array, percpu_hash, lpm_trie, perf_event_array)")
                } else {
                    write!(f, "map type {name} ({t}) is not supported yet")
                }
            }
            MapDefError::BadSizes => write!(
                f,
                "key_size, value_size and max_entries must be non-zero (array: key_size 4; lpm_trie: \
                 key_size 5..=260 and map_flags BPF_F_NO_PREALLOC; \
                 perf_event_array: key_size and value_size 4)"
            ),
            MapDefError::TooBig(n) => write!(f, "map needs {n} bytes of values, more than {MAX_MAP_BYTES}"),
        }
    }
}

impl Map {
    /// Builds an empty map (arrays zero-filled, as the kernel's). A perf event array
    /// declared without sizes or `max_entries` gets 4, 4 and one slot per CPU, as libbpf
    /// gives it (`fd_array_map_alloc_check` wants 4-byte keys and values).
    pub fn new(mut def: MapDef) -> Result<Map, MapDefError> {
        if def.map_type == map_type::PERF_EVENT_ARRAY {
            for size in [&mut def.key_size, &mut def.value_size] {
                if *size == 0 {
                    *size = 4;
                }
            }
            if def.max_entries == 0 {
                def.max_entries = crate::events::default_slots();
            }
            if def.key_size != 4 || def.value_size != 4 {
                return Err(MapDefError::BadSizes);
            }
            return Ok(Map { def, read_only: false, lpm: false, store: Store::Events(Box::default()) });
        }
        let array = match def.map_type {
            map_type::ARRAY | map_type::PERCPU_ARRAY => true,
            map_type::HASH | map_type::PERCPU_HASH | map_type::LPM_TRIE => false,
            t => return Err(MapDefError::UnsupportedType(t)),
        };
        let lpm = def.map_type == map_type::LPM_TRIE;
        if def.value_size == 0 || def.max_entries == 0 || def.key_size == 0 || (array && def.key_size != 4) {
            return Err(MapDefError::BadSizes);
        }
        if lpm && (!(5..=LPM_KEY_MAX as u32).contains(&def.key_size) || def.flags & F_NO_PREALLOC == 0) {
            return Err(MapDefError::BadSizes);
        }
        let bytes = u64::from(def.max_entries) * u64::from(def.value_size);
        if bytes > MAX_MAP_BYTES {
            return Err(MapDefError::TooBig(bytes));
        }
        let store = if array {
            Store::Array(vec![0; bytes as usize])
        } else {
            Store::Hash { values: Vec::new(), index: HashMap::new(), free: Vec::new() }
        };
        Ok(Map { def, read_only: false, lpm, store })
    }

    /// A global-data section as a one-element array whose value is the section's bytes.
    pub fn global_data(name: &str, bytes: &[u8], read_only: bool) -> Map {
        let def = MapDef {
            name: name.to_string(),
            map_type: map_type::ARRAY,
            key_size: 4,
            value_size: bytes.len().max(1) as u32,
            max_entries: 1,
            flags: 0,
        };
        let mut v = bytes.to_vec();
        if v.is_empty() {
            v.push(0);
        }
        Map { def, read_only, lpm: false, store: Store::Array(v) }
    }

    /// The value bytes (whole flat storage), for the interpreter's pointers (none for a
    /// perf event array).
    pub fn storage(&self) -> &[u8] {
        match &self.store {
            Store::Array(v) => v,
            Store::Hash { values, .. } => values,
            Store::Events(_) => &[],
        }
    }

    pub fn storage_mut(&mut self) -> &mut [u8] {
        match &mut self.store {
            Store::Array(v) => v,
            Store::Hash { values, .. } => values,
            Store::Events(_) => &mut [],
        }
    }

    /// A perf event array's ring.
    pub fn events(&self) -> Option<&EventRing> {
        match &self.store {
            Store::Events(r) => Some(r),
            _ => None,
        }
    }

    pub fn events_mut(&mut self) -> Option<&mut EventRing> {
        match &mut self.store {
            Store::Events(r) => Some(r),
            _ => None,
        }
    }

    fn array_index(&self, key: &[u8]) -> Option<usize> {
        let k: [u8; 4] = key.get(..4)?.try_into().ok()?;
        let i = u32::from_le_bytes(k);
        (i < self.def.max_entries).then_some(i as usize)
    }

    /// An LPM key as stored: its prefix length (`plen`, else the key's own; `None` when
    /// longer than the data) and its data with the bits past it cleared.
    fn lpm_key(&self, key: &[u8], plen: Option<u32>) -> Option<[u8; LPM_KEY_MAX]> {
        let ks = self.def.key_size as usize;
        let data = key.get(4..ks)?;
        let plen = plen.unwrap_or(u32::from_le_bytes(key.get(..4)?.try_into().ok()?));
        if plen > (data.len() * 8) as u32 {
            return None;
        }
        let mut out = [0u8; LPM_KEY_MAX];
        out[..4].copy_from_slice(&plen.to_le_bytes());
        for (i, (o, d)) in out[4..ks].iter_mut().zip(data).enumerate() {
            let bits = plen.saturating_sub(i as u32 * 8).min(8);
            *o = if bits == 0 { 0 } else { d & (0xffu8 << (8 - bits)) };
        }
        Some(out)
    }

    /// `bpf_map_lookup_elem`: the offset of the value in [`Map::storage`]. An LPM trie:
    /// the entry with the longest prefix that covers the key's first prefix-length bits.
    pub fn lookup(&self, key: &[u8]) -> Option<usize> {
        let vs = self.def.value_size as usize;
        if self.lpm {
            let ks = self.def.key_size as usize;
            let Store::Hash { index, .. } = &self.store else { return None };
            // A lookup key longer than the trie's prefixes finds nothing (lpm_trie.c).
            let want = self.lpm_key(key, None)?;
            let top = u32::from_le_bytes(want[..4].try_into().ok()?);
            return (0..=top).rev().find_map(|plen| {
                let k = self.lpm_key(key, Some(plen))?;
                index.get(&k[..ks]).map(|&s| s as usize * vs)
            });
        }
        match &self.store {
            Store::Array(_) => self.array_index(key).map(|i| i * vs),
            Store::Hash { index, .. } => index.get(key).map(|&s| s as usize * vs),
            Store::Events(_) => None,
        }
    }

    /// `bpf_map_update_elem`: 0 or a negative errno.
    /// A perf event array's slots hold readers, not values: `-EINVAL`.
    pub fn update(&mut self, key: &[u8], value: &[u8], flags: u64) -> i64 {
        if flags > EXIST || self.events().is_some() {
            return -EINVAL;
        }
        if self.lpm {
            let Some(k) = self.lpm_key(key, None) else { return -EINVAL };
            let ks = self.def.key_size as usize;
            let full = matches!(&self.store, Store::Hash { index, .. }
                if index.len() >= self.def.max_entries as usize && !index.contains_key(&k[..ks]));
            if full {
                return -ENOSPC;
            }
            return self.update_slot(&k[..ks], value, flags);
        }
        self.update_slot(key, value, flags)
    }

    fn update_slot(&mut self, key: &[u8], value: &[u8], flags: u64) -> i64 {
        let vs = self.def.value_size as usize;
        let max = self.def.max_entries as usize;
        let slot = match &mut self.store {
            Store::Events(_) => return -EINVAL,
            Store::Array(_) => {
                if flags == NOEXIST {
                    return -EEXIST;
                }
                match self.array_index(key) {
                    Some(i) => i,
                    None => return -E2BIG,
                }
            }
            Store::Hash { values, index, free } => match index.get(key) {
                Some(&s) => {
                    if flags == NOEXIST {
                        return -EEXIST;
                    }
                    s as usize
                }
                None => {
                    if flags == EXIST {
                        return -ENOENT;
                    }
                    if index.len() >= max {
                        return -E2BIG;
                    }
                    let s = match free.pop() {
                        Some(s) => s,
                        None => {
                            let s = (values.len() / vs) as u32;
                            values.resize(values.len() + vs, 0);
                            s
                        }
                    };
                    index.insert(key.to_vec(), s);
                    s as usize
                }
            },
        };
        let st = self.storage_mut();
        match st.get_mut(slot * vs..slot * vs + vs) {
            Some(dst) if value.len() >= vs => {
                dst.copy_from_slice(&value[..vs]);
                0
            }
            _ => -EINVAL,
        }
    }

    /// `bpf_map_delete_elem`: 0 or a negative errno (arrays: -EINVAL, as the kernel's).
    /// An LPM trie deletes the exact prefix.
    pub fn delete(&mut self, key: &[u8]) -> i64 {
        if self.lpm {
            let ks = self.def.key_size as usize;
            let Some(k) = self.lpm_key(key, None) else { return -EINVAL };
            return match &mut self.store {
                Store::Hash { index, free, .. } => match index.remove(&k[..ks]) {
                    Some(s) => {
                        free.push(s);
                        0
                    }
                    None => -ENOENT,
                },
                Store::Array(_) | Store::Events(_) => -EINVAL,
            };
        }
        match &mut self.store {
            Store::Array(_) | Store::Events(_) => -EINVAL,
            Store::Hash { index, free, .. } => match index.remove(key) {
                Some(s) => {
                    free.push(s);
                    0
                }
                None => -ENOENT,
            },
        }
    }

    /// Every (key, value) pair, for dumps and tests (arrays: every index; a perf event
    /// array: none).
    pub fn entries(&self) -> Vec<(Vec<u8>, Vec<u8>)> {
        let vs = self.def.value_size as usize;
        let st = self.storage();
        let mut out = Vec::new();
        match &self.store {
            Store::Array(_) => {
                for i in 0..self.def.max_entries as usize {
                    let v = st.get(i * vs..i * vs + vs).unwrap_or_default();
                    out.push(((i as u32).to_le_bytes().to_vec(), v.to_vec()));
                }
            }
            Store::Hash { index, .. } => {
                let mut keys: Vec<_> = index.iter().collect();
                keys.sort();
                for (k, &s) in keys {
                    let s = s as usize;
                    out.push((k.clone(), st.get(s * vs..s * vs + vs).unwrap_or_default().to_vec()));
                }
            }
            Store::Events(_) => {}
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn def(t: u32, ks: u32, vs: u32, n: u32) -> MapDef {
        MapDef { name: "m".into(), map_type: t, key_size: ks, value_size: vs, max_entries: n, flags: 0 }
    }

    #[test]
    fn array_semantics() {
        let mut m = Map::new(def(map_type::ARRAY, 4, 8, 2)).unwrap();
        assert_eq!(m.lookup(&1u32.to_le_bytes()), Some(8));
        assert_eq!(m.lookup(&2u32.to_le_bytes()), None);
        assert_eq!(m.update(&1u32.to_le_bytes(), &[7; 8], 0), 0);
        assert_eq!(&m.storage()[8..16], &[7; 8]);
        assert_eq!(m.update(&1u32.to_le_bytes(), &[7; 8], 1), -EEXIST);
        assert_eq!(m.update(&5u32.to_le_bytes(), &[7; 8], 0), -E2BIG);
        assert_eq!(m.delete(&1u32.to_le_bytes()), -EINVAL);
        assert_eq!(m.update(&1u32.to_le_bytes(), &[7; 8], 3), -EINVAL);
    }

    #[test]
    fn hash_semantics() {
        let mut m = Map::new(def(map_type::HASH, 2, 4, 2)).unwrap();
        assert_eq!(m.lookup(b"ab"), None);
        assert_eq!(m.update(b"ab", &[1, 2, 3, 4], 2), -ENOENT);
        assert_eq!(m.update(b"ab", &[1, 2, 3, 4], 1), 0);
        assert_eq!(m.update(b"ab", &[1, 2, 3, 4], 1), -EEXIST);
        assert_eq!(m.update(b"cd", &[5; 4], 0), 0);
        assert_eq!(m.update(b"ef", &[5; 4], 0), -E2BIG);
        assert_eq!(m.delete(b"ab"), 0);
        assert_eq!(m.delete(b"ab"), -ENOENT);
        assert_eq!(m.update(b"ef", &[9; 4], 0), 0);
        let off = m.lookup(b"ef").unwrap();
        assert_eq!(&m.storage()[off..off + 4], &[9; 4]);
        assert_eq!(m.entries().len(), 2);
    }

    fn lpm_key(plen: u32, data: [u8; 4]) -> Vec<u8> {
        [&plen.to_le_bytes()[..], &data].concat()
    }

    #[test]
    fn lpm_trie_semantics() {
        let mut d = def(map_type::LPM_TRIE, 8, 4, 3);
        assert_eq!(Map::new(d.clone()).unwrap_err(), MapDefError::BadSizes); // needs NO_PREALLOC
        d.flags = F_NO_PREALLOC;
        let mut m = Map::new(d).unwrap();
        assert_eq!(m.update(&lpm_key(8, [10, 0, 0, 0]), &[8; 4], 0), 0);
        // Bits past the prefix do not matter: the same /16 twice.
        assert_eq!(m.update(&lpm_key(16, [10, 1, 0, 0]), &[16; 4], 0), 0);
        assert_eq!(m.update(&lpm_key(16, [10, 1, 9, 9]), &[17; 4], 1), -EEXIST);
        assert_eq!(m.update(&lpm_key(33, [10, 1, 0, 0]), &[1; 4], 0), -EINVAL);
        assert_eq!(m.update(&lpm_key(0, [0; 4]), &[0; 4], 0), 0);
        assert_eq!(m.update(&lpm_key(24, [10, 1, 2, 0]), &[24; 4], 0), -ENOSPC);
        let val = |m: &Map, k: Vec<u8>| m.lookup(&k).map(|o| m.storage()[o]);
        assert_eq!(val(&m, lpm_key(32, [10, 1, 2, 3])), Some(16));
        assert_eq!(val(&m, lpm_key(32, [10, 2, 2, 3])), Some(8));
        assert_eq!(val(&m, lpm_key(32, [11, 2, 2, 3])), Some(0));
        // The lookup key's own prefix length bounds the match; longer than 32: nothing.
        assert_eq!(val(&m, lpm_key(12, [10, 1, 2, 3])), Some(8));
        assert_eq!(val(&m, lpm_key(33, [10, 1, 2, 3])), None);
        assert_eq!(m.delete(&lpm_key(16, [10, 1, 0, 0])), 0);
        assert_eq!(m.delete(&lpm_key(16, [10, 1, 0, 0])), -ENOENT);
        assert_eq!(val(&m, lpm_key(32, [10, 1, 2, 3])), Some(8));
    }

    #[test]
    fn perf_event_arrays() {
        let mut m = Map::new(def(map_type::PERF_EVENT_ARRAY, 0, 0, 0)).unwrap();
        assert_eq!((m.def.key_size, m.def.value_size), (4, 4));
        assert_eq!(m.def.max_entries, crate::events::default_slots());
        assert!(m.storage().is_empty() && m.entries().is_empty());
        assert_eq!(m.lookup(&0u32.to_le_bytes()), None);
        assert_eq!(m.update(&0u32.to_le_bytes(), &[0; 4], 0), -EINVAL);
        assert_eq!(m.delete(&0u32.to_le_bytes()), -EINVAL);
        assert!(m.events_mut().is_some());
        assert_eq!(Map::new(def(map_type::PERF_EVENT_ARRAY, 4, 8, 2)).unwrap_err(), MapDefError::BadSizes);
        assert!(Map::new(def(map_type::ARRAY, 4, 4, 1)).unwrap().events().is_none());
    }

    #[test]
    fn refused_definitions() {
        assert_eq!(Map::new(def(map_type::LRU_HASH, 8, 4, 1)).unwrap_err(), MapDefError::UnsupportedType(9));
        assert_eq!(Map::new(def(map_type::ARRAY, 8, 4, 1)).unwrap_err(), MapDefError::BadSizes);
        assert!(matches!(Map::new(def(map_type::ARRAY, 4, 1 << 20, 1 << 10)), Err(MapDefError::TooBig(_))));
    }
}
