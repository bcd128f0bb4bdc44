//! Multipath routes: a group of next hops with weights, and the hash-threshold
//! selection the kernel uses (RFC 2992; Linux `fib_select_multipath`,
//! `rt6_multipath_select`): each next hop owns the slice of the 31-bit hash space
//! that its weight is of the total, in order; a flow's hash picks the first next hop
//! whose upper bound it does not exceed.

use super::NextHop;

/// A multipath route's next hops and their upper bounds in the hash space.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Group {
    pub hops: Vec<NextHop>,
    /// Weights as configured (1 to 256), for display.
    pub weights: Vec<u16>,
    /// By next hop: the largest 31-bit hash it takes.
    bounds: Vec<u32>,
}

impl Group {
    /// The group of `hops` with `weights` (same length, not empty, weights >= 1). The
    /// bounds are the kernel's: round(cumulative weight * 2^31 / total) - 1.
    pub fn new(hops: Vec<NextHop>, weights: Vec<u16>) -> Group {
        let total: u64 = weights.iter().map(|w| u64::from(*w)).sum::<u64>().max(1);
        let mut cum = 0u64;
        let bounds = weights
            .iter()
            .map(|w| {
                cum += u64::from(*w);
                (((cum << 31) + total / 2) / total).saturating_sub(1) as u32
            })
            .collect();
        Group { hops, weights, bounds }
    }

    /// The next hop of a flow whose 31-bit hash is `hash`.
    #[inline]
    pub fn select(&self, hash: u32) -> Option<NextHop> {
        let i = self.bounds.iter().position(|b| hash <= *b).unwrap_or(self.hops.len().saturating_sub(1));
        self.hops.get(i).copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_split_the_space_by_weight() {
        let g = Group::new(vec![NextHop::OnLink(0), NextHop::OnLink(1)], vec![1, 3]);
        assert_eq!(g.bounds, vec![(1 << 29) - 1, (1 << 31) - 1]);
        assert_eq!(g.select(0), Some(NextHop::OnLink(0)));
        assert_eq!(g.select((1 << 29) - 1), Some(NextHop::OnLink(0)));
        assert_eq!(g.select(1 << 29), Some(NextHop::OnLink(1)));
        assert_eq!(g.select((1 << 31) - 1), Some(NextHop::OnLink(1)));
    }

    #[test]
    fn equal_weights_halve() {
        let g = Group::new(vec![NextHop::Adj(3), NextHop::Adj(4)], vec![1, 1]);
        assert_eq!(g.bounds, vec![(1 << 30) - 1, (1 << 31) - 1]);
    }
}
