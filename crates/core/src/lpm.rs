//! Longest-prefix match: a multibit trie with 8-bit strides and leaf pushing
//! (controlled prefix expansion), built once and never modified.
//!
//! Each node is 256 `u32` entries: 0 = no route, `CHILD | i` = node `i`, otherwise a
//! value index + 1. A lookup reads one entry per byte of the address until it meets a
//! non-child entry: at most 16 dependent loads for IPv6, 4 for IPv4, no branches on
//! prefix lengths. Prefixes are inserted shortest first, so a longer prefix simply
//! overwrites the entries it covers, and a new child node inherits its parent entry's
//! value (that is the leaf pushing).

const CHILD: u32 = 1 << 31;
const STRIDE: usize = 256;

/// A longest-prefix-match table from `N`-byte keys to values of type `V`.
#[derive(Debug, Clone)]
pub struct Lpm<const N: usize, V> {
    nodes: Vec<[u32; STRIDE]>,
    values: Vec<V>,
}

/// IPv6 LPM.
pub type Lpm6<V> = Lpm<16, V>;
/// IPv4 LPM.
pub type Lpm4<V> = Lpm<4, V>;

impl<const N: usize, V> Default for Lpm<N, V> {
    fn default() -> Self {
        Lpm { nodes: vec![[0; STRIDE]], values: Vec::new() }
    }
}

impl<const N: usize, V> Lpm<N, V> {
    /// Builds the table. Later duplicates of the same prefix replace earlier ones
    /// (as `ip route replace` would); host bits beyond the length are ignored.
    pub fn build(mut prefixes: Vec<([u8; N], u8, V)>) -> Self {
        // Stable sort: equal lengths keep file order, so the last duplicate wins.
        prefixes.sort_by_key(|p| p.1);
        let mut t = Lpm::default();
        for (key, len, v) in prefixes {
            let len = (len as usize).min(N * 8);
            t.values.push(v);
            let val = t.values.len() as u32; // index + 1
            t.insert(&key, len, val);
        }
        t
    }

    fn insert(&mut self, key: &[u8; N], len: usize, val: u32) {
        let mut node = 0usize;
        let mut depth = 0usize;
        // Walk full strides, creating children with the parent's value pushed down.
        while len > (depth + 1) * 8 {
            let e = self.nodes[node][key[depth] as usize];
            node = if e & CHILD != 0 {
                (e & !CHILD) as usize
            } else {
                self.nodes.push([e; STRIDE]);
                let child = self.nodes.len() - 1;
                self.nodes[node][key[depth] as usize] = CHILD | child as u32;
                child
            };
            depth += 1;
        }
        // Expand the remaining bits over a range of entries at this level.
        let rem = len - depth * 8; // 0..=8
        if rem == 0 && depth == 0 {
            // Default route: every empty entry of the root, pushed into existing children.
            self.fill(0, 0, STRIDE, val);
            return;
        }
        let (first, count) = if rem == 0 {
            (0, STRIDE)
        } else {
            let b = key[depth] as usize;
            let mask = 0xFFusize << (8 - rem) & 0xFF;
            (b & mask, 1usize << (8 - rem))
        };
        self.fill(node, first, count, val);
    }

    /// Sets `count` entries from `first` of `node` to `val`; entries that are children
    /// get `val` pushed into them (everything there is from longer-or-equal prefixes
    /// only when inserted later, so only empty/value entries are overwritten below).
    fn fill(&mut self, node: usize, first: usize, count: usize, val: u32) {
        for i in first..first + count {
            let e = self.nodes[node][i];
            if e & CHILD != 0 {
                // A child exists only if a longer prefix was inserted; with shortest-first
                // insertion that cannot happen for a prefix ending at this level, except
                // for equal-length re-insertion paths. Push down to be safe.
                let c = (e & !CHILD) as usize;
                self.fill_under(c, val);
            } else {
                self.nodes[node][i] = val;
            }
        }
    }

    fn fill_under(&mut self, node: usize, val: u32) {
        for i in 0..STRIDE {
            let e = self.nodes[node][i];
            if e & CHILD != 0 {
                self.fill_under((e & !CHILD) as usize, val);
            } else {
                self.nodes[node][i] = val;
            }
        }
    }

    /// The value of the longest prefix covering `key`.
    #[inline]
    pub fn lookup(&self, key: &[u8; N]) -> Option<&V> {
        let mut node = 0usize;
        let mut e = 0u32;
        for &b in key.iter() {
            // `node` always comes from a CHILD entry we created, so it is in bounds;
            // `get` keeps the hot path panic-free all the same.
            e = match self.nodes.get(node) {
                Some(n) => n[b as usize],
                None => return None,
            };
            if e & CHILD == 0 {
                break;
            }
            node = (e & !CHILD) as usize;
        }
        if e == 0 || e & CHILD != 0 {
            return None;
        }
        self.values.get(e as usize - 1)
    }

    /// Number of trie nodes (1 KiB each).
    pub fn node_count(&self) -> usize {
        self.nodes.len()
    }

    pub fn values(&self) -> &[V] {
        &self.values
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

    #[test]
    fn empty_table_finds_nothing() {
        let t: Lpm4<u8> = Lpm4::build(vec![]);
        assert_eq!(t.lookup(&[10, 0, 0, 1]), None);
        let t = Lpm4::build(vec![([10, 0, 0, 0], 8, 1u8)]);
        assert_eq!(t.lookup(&[11, 0, 0, 1]), None);
        assert_eq!(t.lookup(&[10, 9, 9, 9]), Some(&1));
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
