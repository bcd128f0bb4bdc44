//! FIB workloads for measuring route lookup and table builds (issue 25): generators with a
//! seed, so that every figure can be reproduced without a downloaded table.
//!
//! - [`locator_plan`]: an SRv6 operator's numbering — several /16s, each holding /32
//!   regions, /40 sites, /48 locators, /56 and /64 links and /128 loopbacks together —
//!   10,000 routes, and 1,000 SIDs (/128s under the /48 locators).
//! - [`internet6`]: an IPv6 table of the global BGP table's size and shape, ~250,000
//!   prefixes.
//! - [`internet4`]: an IPv4 table of the global BGP table's size and shape, ~1,000,000
//!   prefixes, /24-heavy.
//! - [`spread`]: destinations spread over a table (one under a prefix drawn at random,
//!   its host bits random); a single-destination stream is one of them, repeated.
//! - [`churn`]: route changes on a table, as a BGP feed sends them — withdrawals of
//!   prefixes it holds and announcements of new ones.
//!
//! **The Internet tables' shape.** The prefix-length shares below are sr6's
//! approximation of the published shape of the global tables: for IPv6, /48s about half
//! the entries and /32s the next largest share (RIPE Labs, "Visibility of prefix lengths
//! in IPv4 and IPv6", RIS data 2011 and 2019); for IPv4, /24s about 60 % (same source).
//! They are scaled so that the mean prefix length matches what bgp.potaroo.net reports
//! for AS6447's FIB: 43.24 for IPv6 (226,415 entries, October 2024) and 22.92 for IPv4
//! (1,034,991 entries, April 2025); the tests check the means. About 58 % of the IPv6
//! entries (potaroo's "more specifics") and as many of the IPv4 ones lie under a shorter
//! prefix of the table: each prefix is either a more specific of a shorter one already
//! drawn or fresh bits in the unicast space (2000::/3; 1.0.0.0-223.255.255.255 for IPv4).

use std::collections::HashSet;

/// A prefix: its address as a 128-bit (IPv6) or 32-bit (IPv4, in the low bits) number,
/// host bits clear, and its length.
pub type Prefix = (u128, u8);

/// IPv6 prefix lengths and their shares (per mille) of [`internet6`]'s entries.
pub const INTERNET6_LENGTHS: &[(u8, u32)] = &[
    (28, 10),
    (29, 30),
    (32, 140),
    (33, 10),
    (34, 10),
    (36, 40),
    (40, 70),
    (42, 10),
    (44, 90),
    (45, 10),
    (46, 30),
    (47, 20),
    (48, 530),
];

/// IPv4 prefix lengths and their shares (per mille) of [`internet4`]'s entries.
pub const INTERNET4_LENGTHS: &[(u8, u32)] =
    &[(16, 13), (17, 8), (18, 14), (19, 26), (20, 44), (21, 46), (22, 110), (23, 100), (24, 639)];

/// The share of entries drawn under a shorter prefix of the table (potaroo's "more
/// specifics", IPv6, October 2024: 58 %).
const MORE_SPECIFIC_PER_MILLE: u64 = 580;

/// xorshift64*: small, fast, and the same numbers everywhere for a seed.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        // Never 0 (xorshift's fixed point); mixed so that nearby seeds differ.
        Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1)
    }

    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    pub fn next_u128(&mut self) -> u128 {
        (u128::from(self.next_u64()) << 64) | u128::from(self.next_u64())
    }

    /// A number in `0..n` (`n` > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }
}

/// The mask of a `len`-bit prefix of a `width`-bit address, in the low `width` bits.
fn mask(width: u8, len: u8) -> u128 {
    let all = if width >= 128 { u128::MAX } else { (1u128 << width) - 1 };
    match len {
        0 => 0,
        l if l >= width => all,
        l => all & !(all >> l),
    }
}

/// `n` lengths drawn with the shares of `table`, shortest first (so that a prefix's
/// shorter covering prefixes are drawn before it).
fn lengths(rng: &mut Rng, table: &[(u8, u32)], n: usize) -> Vec<u8> {
    let total: u32 = table.iter().map(|&(_, w)| w).sum();
    let mut v: Vec<u8> = (0..n)
        .map(|_| {
            let mut r = rng.below(u64::from(total)) as u32;
            for &(len, w) in table {
                if r < w {
                    return len;
                }
                r -= w;
            }
            table.last().map_or(0, |&(l, _)| l)
        })
        .collect();
    v.sort_unstable();
    v
}

/// A table of `n` distinct prefixes of a `width`-bit space with the length shares of
/// `table`, in the unicast space `base/base_len`.
fn internet(seed: u64, n: usize, width: u8, table: &[(u8, u32)], base: u128, base_len: u8) -> Vec<Prefix> {
    let mut rng = Rng::new(seed);
    let mut out: Vec<Prefix> = Vec::with_capacity(n);
    let mut taken: HashSet<Prefix> = HashSet::with_capacity(n);
    // `out` grows shortest first: its first `shorter` entries are shorter than `len`.
    let (mut shorter, mut cur) = (0, 0);
    for len in lengths(&mut rng, table, n) {
        if len != cur {
            (shorter, cur) = (out.len(), len);
        }
        let m = mask(width, len);
        // Tries: a draw may land on a prefix already taken (then draw again).
        for _ in 0..64 {
            let bits = rng.next_u128() & mask(width, width);
            let under = if shorter > 0 && rng.below(1000) < MORE_SPECIFIC_PER_MILLE {
                // A more specific of a shorter prefix already in the table.
                let (a, l) = out[rng.below(shorter as u64) as usize];
                Some((a, l))
            } else {
                None
            };
            let (a, l) = under.unwrap_or((base, base_len));
            let p = ((a & mask(width, l)) | (bits & !mask(width, l))) & m;
            if taken.insert((p, len)) {
                out.push((p, len));
                break;
            }
        }
    }
    out
}

/// An IPv6 Internet table of about `n` prefixes (the global table: 250,000).
pub fn internet6(seed: u64, n: usize) -> Vec<Prefix> {
    internet(seed, n, 128, INTERNET6_LENGTHS, 0x2000 << 112, 3)
}

/// An IPv4 Internet table of about `n` prefixes (the global table: 1,000,000), in
/// 1.0.0.0-223.255.255.255 (0/8 and the multicast and reserved space above left out).
pub fn internet4(seed: u64, n: usize) -> Vec<Prefix> {
    let mut v = internet(seed, n, 32, INTERNET4_LENGTHS, 0, 0);
    // Fold the first octet into 1..=223.
    for p in &mut v {
        let first = (p.0 >> 24) as u32;
        let folded = 1 + first % 223;
        p.0 = (u128::from(folded) << 24) | (p.0 & 0x00ff_ffff);
    }
    v.sort_unstable_by_key(|p| p.1);
    let mut seen = HashSet::new();
    v.retain(|p| seen.insert(*p));
    v
}

/// An SRv6 locator plan: `routes` routes in `slash16s` /16s of fc00::/8 (each mixing
/// /32 regions, /40 sites, /48 locators, /56 and /64 links, /128 loopbacks; every longer
/// prefix under a shorter one of its /16), and `sids` /128 SIDs under the /48 locators.
/// Returns (routes, SIDs).
pub fn locator_plan(seed: u64, slash16s: u16, routes: usize, sids: usize) -> (Vec<Prefix>, Vec<Prefix>) {
    const SHARES: &[(u8, u32)] = &[(32, 20), (40, 80), (48, 300), (56, 100), (64, 300), (128, 200)];
    let mut rng = Rng::new(seed);
    let roots: Vec<u128> = (0..slash16s.max(1)).map(|i| (0xfc00u128 + u128::from(i)) << 112).collect();
    let mut out: Vec<Prefix> = Vec::with_capacity(routes);
    let mut taken = HashSet::new();
    let (mut shorter, mut cur) = (0, 0);
    for len in lengths(&mut rng, SHARES, routes) {
        if len != cur {
            (shorter, cur) = (out.len(), len);
        }
        for _ in 0..64 {
            // Under a shorter prefix of the plan if there is one, else under a /16.
            let (a, l) = if shorter > 0 {
                out[rng.below(shorter as u64) as usize]
            } else {
                (roots[rng.below(roots.len() as u64) as usize], 16)
            };
            let p = ((a & mask(128, l)) | (rng.next_u128() & !mask(128, l))) & mask(128, len);
            if taken.insert((p, len)) {
                out.push((p, len));
                break;
            }
        }
    }
    let locators: Vec<u128> = out.iter().filter(|p| p.1 == 48).map(|p| p.0).collect();
    let mut sid_list = Vec::with_capacity(sids);
    for _ in 0..sids * 4 {
        if sid_list.len() == sids || locators.is_empty() {
            break;
        }
        let loc = locators[rng.below(locators.len() as u64) as usize];
        // The function in the next 16 bits, as the SIDs of RFC 8986 §3.1 with a /48
        // locator and a 16-bit function.
        let sid = loc | (u128::from(rng.next_u64() as u16) << 64);
        if taken.insert((sid, 128)) {
            sid_list.push((sid, 128));
        }
    }
    (out, sid_list)
}

/// `n` destinations spread over `table` (`width`-bit addresses): each under a prefix
/// drawn at random, its host bits random.
pub fn spread(seed: u64, table: &[Prefix], width: u8, n: usize) -> Vec<u128> {
    let mut rng = Rng::new(seed ^ 0x5eed);
    if table.is_empty() {
        return vec![0; n];
    }
    (0..n)
        .map(|_| {
            let (a, l) = table[rng.below(table.len() as u64) as usize];
            (a | (rng.next_u128() & !mask(width, l))) & mask(width, width)
        })
        .collect()
}

/// A route change of [`churn`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Change {
    /// Announce a prefix (a new one: the table does not hold it at that point).
    Add(Prefix),
    /// Withdraw a prefix the table holds at that point.
    Delete(Prefix),
}

/// `n` route changes on `table`, each an [`Add`](Change::Add) or a
/// [`Delete`](Change::Delete) at random (half each): a delete withdraws a prefix drawn at
/// random from what the table holds at that point (the table as changed so far), an add
/// announces a prefix of `fresh` the table does not hold, drawn at random (`fresh`: a
/// table drawn with another seed, new prefixes of the same shape). When either runs out, the other kind
/// is made.
pub fn churn(seed: u64, table: &[Prefix], fresh: &[Prefix], n: usize) -> Vec<Change> {
    let mut rng = Rng::new(seed ^ 0xc4a7);
    let mut held: Vec<Prefix> = table.to_vec();
    let mut have: HashSet<Prefix> = table.iter().copied().collect();
    // `fresh` in a random order (a generated table comes shortest first).
    let mut order: Vec<Prefix> = fresh.iter().filter(|p| !have.contains(p)).copied().collect();
    for i in (1..order.len()).rev() {
        order.swap(i, rng.below(i as u64 + 1) as usize);
    }
    let mut fresh = order.into_iter();
    let mut out = Vec::with_capacity(n);
    let mut pending = fresh.next();
    while out.len() < n {
        let add = held.is_empty() || (rng.below(2) == 0 && pending.is_some());
        if add {
            let Some(p) = pending else { break };
            pending = fresh.find(|p| !have.contains(p));
            have.insert(p);
            held.push(p);
            out.push(Change::Add(p));
        } else {
            let p = held.swap_remove(rng.below(held.len() as u64) as usize);
            have.remove(&p);
            out.push(Change::Delete(p));
        }
    }
    out
}

/// The mean prefix length of `table`.
pub fn mean_len(table: &[Prefix]) -> f64 {
    if table.is_empty() {
        return 0.0;
    }
    table.iter().map(|p| f64::from(p.1)).sum::<f64>() / table.len() as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_table() {
        assert_eq!(internet6(7, 2000), internet6(7, 2000));
        assert_ne!(internet6(7, 2000), internet6(8, 2000));
        assert_eq!(internet4(7, 2000), internet4(7, 2000));
        assert_eq!(locator_plan(7, 4, 1000, 100), locator_plan(7, 4, 1000, 100));
    }

    /// The shapes the module's documentation cites: the mean prefix lengths potaroo
    /// reports, the /48s and /24s' shares, and the more specifics.
    #[test]
    fn internet_tables_have_the_published_shape() {
        let v6 = internet6(1, 50_000);
        assert!(v6.len() >= 49_900, "{} prefixes", v6.len());
        let m6 = mean_len(&v6);
        assert!((m6 - 43.24).abs() < 0.3, "IPv6 mean length {m6}");
        let s48 = v6.iter().filter(|p| p.1 == 48).count() as f64 / v6.len() as f64;
        assert!((0.5..0.56).contains(&s48), "/48 share {s48}");
        assert!(v6.iter().all(|p| p.0 >> 125 == 1), "all in 2000::/3");
        let v4 = internet4(1, 50_000);
        assert!(v4.len() >= 49_000, "{} prefixes", v4.len());
        let m4 = mean_len(&v4);
        assert!((m4 - 22.92).abs() < 0.2, "IPv4 mean length {m4}");
        assert!(v4.iter().all(|p| (1..=223).contains(&(p.0 >> 24))), "unicast first octets");
        // A good part of the entries lie under a shorter one (a trie with real depth).
        let set: HashSet<Prefix> = v6.iter().copied().collect();
        let covered = v6.iter().filter(|p| (0..p.1).any(|l| set.contains(&(p.0 & mask(128, l), l)))).count() as f64
            / v6.len() as f64;
        assert!(covered > 0.4, "more specifics {covered}");
    }

    #[test]
    fn prefixes_are_canonical_and_distinct() {
        for (t, w) in [(internet6(3, 5000), 128), (internet4(3, 5000), 32), (locator_plan(3, 4, 5000, 500).0, 128)] {
            let set: HashSet<Prefix> = t.iter().copied().collect();
            assert_eq!(set.len(), t.len(), "duplicates");
            assert!(t.iter().all(|p| p.0 & !mask(w, p.1) == 0), "host bits set");
        }
    }

    #[test]
    fn locator_plan_mixes_lengths_under_each_slash16() {
        let (routes, sids) = locator_plan(5, 4, 10_000, 1_000);
        assert_eq!(routes.len(), 10_000);
        assert_eq!(sids.len(), 1_000);
        for root in 0xfc00u128..0xfc04 {
            let lens: HashSet<u8> = routes.iter().filter(|p| p.0 >> 112 == root).map(|p| p.1).collect();
            assert_eq!(lens.len(), 6, "/16 {root:x}: lengths {lens:?}");
        }
        let locators: HashSet<u128> = routes.iter().filter(|p| p.1 == 48).map(|p| p.0).collect();
        assert!(sids.iter().all(|s| locators.contains(&(s.0 & mask(128, 48)))), "a SID outside the locators");
    }

    /// Every delete withdraws a prefix held at that point, every add a new one, about
    /// half each.
    #[test]
    fn churn_changes_what_the_table_holds() {
        let t = internet6(2, 3000);
        let fresh = internet6(3, 3000);
        let ch = churn(2, &t, &fresh, 4000);
        assert_eq!(ch.len(), 4000);
        let mut held: HashSet<Prefix> = t.iter().copied().collect();
        let mut adds = 0;
        for c in &ch {
            match *c {
                Change::Add(p) => {
                    adds += 1;
                    assert!(held.insert(p), "add of a held prefix {p:?}");
                }
                Change::Delete(p) => assert!(held.remove(&p), "delete of a prefix not held {p:?}"),
            }
        }
        assert!((1800..2200).contains(&adds), "{adds} adds");
        assert_eq!(churn(2, &t, &fresh, 100), ch[..100]);
    }

    #[test]
    fn spread_destinations_fall_under_their_table() {
        let t = internet4(9, 3000);
        let set: HashSet<Prefix> = t.iter().copied().collect();
        for d in spread(9, &t, 32, 500) {
            assert!(d <= u128::from(u32::MAX));
            assert!((0..=32).any(|l| set.contains(&(d & mask(32, l), l))), "{d:x} matches nothing");
        }
    }
}
