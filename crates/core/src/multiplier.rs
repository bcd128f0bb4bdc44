//! The hash multiplier of the open-addressing tables ([`ExactMap`](crate::exact::ExactMap)
//! and the hash slots of [`Lpm`](crate::lpm::Lpm)).
//!
//! Both tables hash a 64-bit key by one multiplication, keep the top bits as the home
//! slot and probe linearly from there. They are built once (and then changed a key at a
//! time with the same multiplier), so the build can afford to try a few multipliers and
//! keep the one under which linear probing displaces the keys least: every hit on a key that sits `d` slots past its home reads
//! `d` more slots, on every packet for that key. A lookup costs the same whichever
//! multiplier was chosen (it is read from the table instead of being an immediate).

/// The odd constants tried, in order: the golden-ratio constant of Fibonacci hashing
/// first (kept when nothing is better), then the multipliers of well-known 64-bit
/// mixers (SplitMix64, MurmurHash3's finaliser, xorshift*, wyhash, and others).
const CANDIDATES: [u64; 8] = [
    0x9E37_79B9_7F4A_7C15,
    0xBF58_476D_1CE4_E5B9,
    0x94D0_49BB_1331_11EB,
    0xFF51_AFD7_ED55_8CCD,
    0xC4CE_B9FE_1A85_EC53,
    0x2545_F491_4F6C_DD1D,
    0xA076_1D64_78BD_642F,
    0xD6E8_FEB8_6659_FD93,
];

/// The default multiplier (an empty table, or nothing better found).
pub(crate) const DEFAULT: u64 = CANDIDATES[0];

/// The home slot of the 64-bit key `x` in a table of `2^(64 - shift)` slots.
#[inline(always)]
pub(crate) fn home(x: u64, mul: u64, shift: u32) -> usize {
    (x.wrapping_mul(mul) >> shift) as usize
}

/// Linear probing's deletion without tombstones: with slot `hole` (of a power-of-two
/// table) just vacated, moves back each entry after it in its probe chain that may sit
/// nearer its home (`home_of`), up to the first empty slot (`is_empty`); returns the
/// slot left empty at the end, for the caller to clear.
pub(crate) fn close_hole<S: Copy>(
    slots: &mut [S],
    mut hole: usize,
    is_empty: impl Fn(&S) -> bool,
    home_of: impl Fn(&S) -> usize,
) -> usize {
    let mask = slots.len() - 1;
    let mut j = hole;
    loop {
        j = (j + 1) & mask;
        let Some(&s) = slots.get(j) else { return hole };
        if is_empty(&s) {
            return hole;
        }
        // It may move to the hole unless its home lies after the hole (cyclically).
        if j.wrapping_sub(home_of(&s)) & mask >= j.wrapping_sub(hole) & mask {
            slots[hole] = s;
            hole = j;
        }
    }
}

/// Total displacement of `keys`, inserted in this order by linear probing into `cap`
/// (a power of two, more than `keys.len()`) slots under `mul`.
fn displacement(keys: &[u64], mul: u64, shift: u32, cap: usize, taken: &mut [bool]) -> u64 {
    taken.iter_mut().for_each(|t| *t = false);
    let mut total = 0u64;
    for &k in keys {
        let mut i = home(k, mul, shift) & (cap - 1);
        while taken[i] {
            i = (i + 1) & (cap - 1);
            total += 1;
        }
        taken[i] = true;
    }
    total
}

/// The candidate under which the distinct keys `keys`, inserted into `cap` slots (a
/// power of two, more than `keys.len()`; `shift` = 64 - log2(cap)), are displaced least
/// in total; the first such candidate on a tie, so the default when nothing is better.
pub(crate) fn best(keys: &[u64], shift: u32, cap: usize) -> u64 {
    if keys.len() < 2 || keys.len() >= cap {
        return DEFAULT;
    }
    let mut taken = vec![false; cap];
    let mut best = (u64::MAX, DEFAULT);
    for mul in CANDIDATES {
        let d = displacement(keys, mul, shift, cap, &mut taken);
        if d < best.0 {
            best = (d, mul);
        }
        if d == 0 {
            break;
        }
    }
    best.1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn candidates_are_odd_and_distinct() {
        for (i, m) in CANDIDATES.iter().enumerate() {
            assert_eq!(m & 1, 1, "{m:#x}");
            assert!(!CANDIDATES[..i].contains(m));
        }
    }

    #[test]
    fn picks_the_least_displacement() {
        let cap = 64;
        let shift = 64 - 6;
        let mut taken = vec![false; cap];
        // Keys that all share one home slot under the default multiplier...
        let keys: Vec<u64> = (0u64..).filter(|&k| home(k, DEFAULT, shift) == 5).take(16).collect();
        let d0 = displacement(&keys, DEFAULT, shift, cap, &mut taken);
        assert_eq!(d0, (0..16).sum::<u64>(), "a single cluster: 0 + 1 + ... + 15");
        // ...get a multiplier that spreads them better, and never a worse one.
        let m = best(&keys, shift, cap);
        let d = displacement(&keys, m, shift, cap, &mut taken);
        assert!(d < d0, "{d} >= {d0}");
        for c in CANDIDATES {
            assert!(d <= displacement(&keys, c, shift, cap, &mut taken));
        }
        // Keys already without collisions keep the default.
        let mut homes = Vec::new();
        let spread: Vec<u64> = (0u64..)
            .filter(|&k| {
                let h = home(k, DEFAULT, shift);
                !homes.contains(&h) && {
                    homes.push(h);
                    true
                }
            })
            .take(20)
            .collect();
        assert_eq!(displacement(&spread, DEFAULT, shift, cap, &mut taken), 0);
        assert_eq!(best(&spread, shift, cap), DEFAULT);
        assert_eq!(best(&[], shift, cap), DEFAULT);
    }
}
