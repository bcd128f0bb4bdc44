//! Counters: per SID (RFC 8986 §6: packets and bytes processed successfully, plus
//! errors), per drop reason, per output device. Each worker owns one [`Counters`];
//! readers sum them ([`Counters::merge`]).

mod by_id;
mod sid_counters;

pub use by_id::{ById, FIXED};
pub use sid_counters::SidCounters;

use crate::drop::DropReason;

/// Counters of one local SID (kept by [`SidCounters`], a field at a time).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SidCounter {
    /// Packets processed successfully.
    pub packets: u64,
    /// Packets that matched the SID but were dropped or answered with an ICMP error.
    pub errors: u64,
    /// Bytes of those packets counted with an Ethernet header each: their IPv6 length as
    /// received plus [`ETH_HEADER`] per packet. The fast path adds the frame's length as
    /// it is, one read-modify-write of memory (`len - 14` would take more instructions);
    /// [`bytes`](Self::bytes) is what is reported.
    pub frame_bytes: u64,
}

/// The Ethernet header counted per packet in [`SidCounter::frame_bytes`].
pub const ETH_HEADER: u64 = 14;

impl SidCounter {
    /// Bytes of the packets processed successfully: their IPv6 length as received
    /// (RFC 8986 §6).
    #[inline]
    pub fn bytes(&self) -> u64 {
        self.frame_bytes.wrapping_sub(ETH_HEADER.wrapping_mul(self.packets))
    }
}

/// All counters of one worker. Its clones copy the counters that exist, not the whole
/// of the fixed arrays of [`ById`] and [`SidCounters`], and `clone_from` reuses the
/// memory it has.
#[derive(Debug, PartialEq, Eq)]
pub struct Counters {
    pub rx: u64,
    pub local: u64,
    /// Packets handed to run-time neighbour resolution ([`crate::packet::Verdict::Resolve`]).
    pub unresolved: u64,
    /// Frames sent, by output device.
    pub tx: ById<u64>,
    pub icmp_sent: u64,
    /// ICMP errors refused by the rate limiter.
    pub icmp_ratelimited: u64,
    /// ICMP errors not sent because RFC 4443 §2.4(e) forbids them.
    pub icmp_suppressed: u64,
    /// IPv4 packets sent as fragments (RFC 791 §3.2; Linux's `FragOKs`).
    pub fragmented: u64,
    /// The fragments made of them (Linux's `FragCreates`), also counted in `tx`.
    pub fragments: u64,
    pub drops: [u64; DropReason::COUNT],
    /// By SID index.
    pub sids: SidCounters,
    pub policies: Vec<u64>,
    /// Per firewall rule, then per built-in chain's policy: packets and bytes (IPv6
    /// length), interleaved ([`crate::firewall::Firewall::counter_count`] pairs).
    pub firewall: Vec<u64>,
    /// The IDS's ([`crate::ids`]).
    pub ids: crate::ids::IdsCounters,
}

impl Clone for Counters {
    fn clone(&self) -> Self {
        Counters {
            tx: self.tx.clone(),
            sids: self.sids.clone(),
            policies: self.policies.clone(),
            firewall: self.firewall.clone(),
            ..*self
        }
    }

    fn clone_from(&mut self, source: &Self) {
        let Counters {
            rx,
            local,
            unresolved,
            ref tx,
            icmp_sent,
            icmp_ratelimited,
            icmp_suppressed,
            fragmented,
            fragments,
            drops,
            ref sids,
            ref policies,
            ref firewall,
            ids,
        } = *source;
        self.ids = ids;
        (self.rx, self.local, self.unresolved) = (rx, local, unresolved);
        (self.icmp_sent, self.icmp_ratelimited, self.icmp_suppressed, self.drops) =
            (icmp_sent, icmp_ratelimited, icmp_suppressed, drops);
        (self.fragmented, self.fragments) = (fragmented, fragments);
        self.tx.clone_from(tx);
        self.sids.clone_from(sids);
        self.policies.clone_from(policies);
        self.firewall.clone_from(firewall);
    }
}

impl Counters {
    pub fn new(devices: usize, sids: usize, policies: usize) -> Self {
        Counters {
            rx: 0,
            local: 0,
            unresolved: 0,
            tx: ById::new(devices),
            icmp_sent: 0,
            icmp_ratelimited: 0,
            icmp_suppressed: 0,
            fragmented: 0,
            fragments: 0,
            drops: [0; DropReason::COUNT],
            sids: SidCounters::new(sids),
            policies: vec![0; policies],
            firewall: Vec::new(),
            ids: crate::ids::IdsCounters::default(),
        }
    }

    #[inline]
    pub fn drop(&mut self, r: DropReason) {
        self.drops[r as usize] += 1;
    }

    pub fn dropped(&self) -> u64 {
        self.drops.iter().sum()
    }

    /// Adds `other` into `self` (shapes must match: same tables).
    pub fn merge(&mut self, other: &Counters) {
        self.rx += other.rx;
        self.local += other.local;
        self.unresolved += other.unresolved;
        self.icmp_sent += other.icmp_sent;
        self.icmp_ratelimited += other.icmp_ratelimited;
        self.icmp_suppressed += other.icmp_suppressed;
        self.fragmented += other.fragmented;
        self.fragments += other.fragments;
        for (a, b) in self.tx.iter_mut().zip(other.tx.iter()) {
            *a += b;
        }
        for (a, b) in self.drops.iter_mut().zip(&other.drops) {
            *a += b;
        }
        for (i, b) in other.sids.iter().enumerate() {
            self.sids.add(i, b);
        }
        for (a, b) in self.policies.iter_mut().zip(&other.policies) {
            *a += b;
        }
        for (a, b) in self.firewall.iter_mut().zip(&other.firewall) {
            *a += b;
        }
        self.ids.merge(&other.ids);
    }

    /// Zeroes everything and takes the shape of [`new`](Self::new)`(devices, sids,
    /// policies)`, keeping the memory of the per-device and per-SID arrays; the
    /// firewall's counters are left empty (the caller sizes them).
    pub fn reshape(&mut self, devices: usize, sids: usize, policies: usize) {
        self.clear();
        self.tx.reshape(devices);
        self.sids.reshape(sids);
        self.policies.clear();
        self.policies.resize(policies, 0);
        self.firewall.clear();
    }

    /// Zeroes everything, keeping the shape (and the memory).
    pub fn clear(&mut self) {
        let Counters {
            rx,
            local,
            unresolved,
            tx,
            icmp_sent,
            icmp_ratelimited,
            icmp_suppressed,
            fragmented,
            fragments,
            drops,
            sids,
            policies,
            firewall,
            ids,
        } = self;
        *ids = crate::ids::IdsCounters::default();
        for n in [rx, local, unresolved, icmp_sent, icmp_ratelimited, icmp_suppressed, fragmented, fragments] {
            *n = 0;
        }
        tx.clear();
        sids.clear();
        drops.fill(0);
        policies.fill(0);
        firewall.fill(0);
    }

    /// Non-zero drop counters by reason.
    pub fn drop_reasons(&self) -> impl Iterator<Item = (DropReason, u64)> + '_ {
        DropReason::ALL.iter().map(|r| (*r, self.drops[*r as usize])).filter(|(_, n)| *n > 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reshaped counters are new ones of the shape, whatever was counted before and in
    /// whichever shape: growing again shows no count left behind.
    #[test]
    fn reshape_is_new() {
        let mut a = Counters::new(3, FIXED + 2, 2);
        a.rx = 9;
        *a.tx.get_mut(2).unwrap() = 5;
        a.sids.count(1, 7);
        a.sids.count(FIXED + 1, 7);
        a.policies[1] = 4;
        a.drop(DropReason::NoRoute);
        for (d, s, p) in [(1, 1, 0), (4, 3, 3), (3, FIXED + 2, 2), (0, 0, 0), (3, FIXED + 2, 2)] {
            a.reshape(d, s, p);
            assert_eq!(a, Counters::new(d, s, p), "{d} {s} {p}");
            *a.tx.get_mut(0).map_or(&mut 0, |x| x) += 1;
            a.sids.count(0, 1);
            a.reshape(d, s, p);
            assert_eq!(a, Counters::new(d, s, p), "{d} {s} {p}, counted");
        }
    }

    #[test]
    fn merge_sums_every_field() {
        let mut a = Counters::new(2, 1, 1);
        let mut b = Counters::new(2, 1, 1);
        a.rx = 1;
        b.rx = 2;
        (b.fragmented, b.fragments) = (1, 3);
        *b.tx.get_mut(1).unwrap() = 5;
        b.sids.count(0, 7);
        b.drop(DropReason::NoRoute);
        a.merge(&b);
        assert_eq!(a.rx, 3);
        assert_eq!((a.fragmented, a.fragments), (1, 3));
        assert_eq!(a.tx.iter().copied().collect::<Vec<_>>(), vec![0, 5]);
        assert_eq!(a.sids.get(0).map(|s| (s.packets, s.bytes())), Some((1, 7)));
        assert_eq!(a.dropped(), 1);
        assert_eq!(a.drop_reasons().collect::<Vec<_>>(), vec![(DropReason::NoRoute, 1)]);
        let mut c = Counters::new(1, 3, 0);
        c.clone_from(&a);
        assert_eq!(c, a);
        assert_eq!(a.clone(), a);
        a.clear();
        assert_eq!(a, Counters::new(2, 1, 1));
        assert_ne!(c, a);
    }
}
