//! Packets waiting for their next hop's link-layer address.
//!
//! When the pipeline finds no neighbour entry for a next hop it returns
//! [`Verdict::Resolve`](sr6_core::packet::Verdict::Resolve) with the L3 packet in the
//! buffer. The worker copies it here — a bounded queue allocated once, as RFC 4861 §7.2.2
//! lets a node queue packets while address resolution runs — and asks the control side
//! to resolve the neighbour. When new tables arrive (a neighbour learned), the queue is
//! retried: what can now be sent gets its Ethernet header and leaves; what is older than
//! [`MAX_WAIT_NS`] is dropped and counted. A full queue refuses the packet (counted as
//! overflow).

use sr6_core::packet::{DevId, MAX_FRAME};
use sr6_core::tables::Tables;
use sr6_wire::{ETHERTYPE_IPV4, ETHERTYPE_IPV6};

use super::state::PendingStats;

/// How long a packet may wait for resolution (the kernel gives up after
/// `mcast_solicit` = 3 probes one second apart).
pub const MAX_WAIT_NS: u64 = 3_000_000_000;

struct Entry {
    dev: DevId,
    key: u128,
    since_ns: u64,
    len: usize,
    /// Ethernet header room (14) + the L3 packet.
    buf: Box<[u8]>,
}

/// The queue of one worker. See the module docs.
pub struct Pending {
    entries: Vec<Entry>,
    used: usize,
    pub stats: PendingStats,
}

impl Pending {
    /// A queue of `capacity` packets of up to [`MAX_FRAME`] bytes each, allocated now.
    pub fn new(capacity: usize) -> Pending {
        let entries = (0..capacity)
            .map(|_| Entry { dev: 0, key: 0, since_ns: 0, len: 0, buf: vec![0u8; 14 + MAX_FRAME].into_boxed_slice() })
            .collect();
        Pending { entries, used: 0, stats: PendingStats::default() }
    }

    pub fn is_empty(&self) -> bool {
        self.used == 0
    }

    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.used
    }

    /// Queues the L3 packet `l3` for `dev` / neighbour `key`. `false`: the queue is full
    /// (the packet is dropped, counted as overflow).
    pub fn push(&mut self, dev: DevId, key: u128, l3: &[u8], now_ns: u64) -> bool {
        let Some(e) = self.entries.get_mut(self.used) else {
            self.stats.overflow += 1;
            return false;
        };
        let n = l3.len().min(MAX_FRAME);
        e.buf[14..14 + n].copy_from_slice(&l3[..n]);
        e.len = 14 + n;
        e.dev = dev;
        e.key = key;
        e.since_ns = now_ns;
        self.used += 1;
        self.stats.queued += 1;
        true
    }

    /// Sends (through `send(dev, frame)`) every queued packet whose neighbour `t` now
    /// knows, drops those waiting longer than [`MAX_WAIT_NS`], keeps the rest in order.
    pub fn retry(&mut self, t: &Tables, now_ns: u64, mut send: impl FnMut(DevId, &[u8])) {
        let mut keep = 0;
        for i in 0..self.used {
            let e = &mut self.entries[i];
            if let Some(eth) = t.neighbour_eth(e.dev, e.key) {
                let ethertype =
                    if e.buf.get(14).is_some_and(|b| b >> 4 == 4) { ETHERTYPE_IPV4 } else { ETHERTYPE_IPV6 };
                e.buf[..12].copy_from_slice(&eth);
                e.buf[12..14].copy_from_slice(&ethertype.to_be_bytes());
                send(e.dev, &e.buf[..e.len]);
                self.stats.sent += 1;
            } else if now_ns.saturating_sub(e.since_ns) > MAX_WAIT_NS {
                self.stats.timeout += 1;
            } else {
                self.entries.swap(keep, i);
                keep += 1;
            }
        }
        self.used = keep;
    }

    /// The neighbours still awaited, for re-requesting resolution.
    pub fn awaited(&self) -> impl Iterator<Item = (DevId, u128)> + '_ {
        self.entries[..self.used].iter().map(|e| (e.dev, e.key))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sr6_core::tables::neigh_key;

    fn tables(src: &str) -> Tables {
        let spec = sr6_config::parse_str(src, "t").unwrap();
        Tables::build(&spec).unwrap().0
    }

    #[test]
    fn queued_packets_leave_once_resolved_and_expire_otherwise() {
        let conf = "link set eth0 address 02:00:00:00:00:01\naddr add fc00::1/64 dev eth0\n";
        let t0 = tables(conf);
        let t1 = tables(&format!("{conf}neigh add fc00::2 lladdr 02:00:00:00:00:02 dev eth0\n"));
        let k2 = neigh_key("fc00::2".parse().unwrap());
        let k3 = neigh_key("fc00::3".parse().unwrap());
        let mut q = Pending::new(2);
        let pkt6 = [0x60u8, 0, 0, 0, 0, 0, 59, 64];
        assert!(q.push(0, k2, &pkt6, 0));
        assert!(q.push(0, k3, &pkt6, 10));
        assert!(!q.push(0, k3, &pkt6, 10), "capacity 2");
        let mut out = Vec::new();
        q.retry(&t0, 20, |d, f| out.push((d, f.to_vec())));
        assert!(out.is_empty());
        assert_eq!(q.len(), 2);
        q.retry(&t1, 30, |d, f| out.push((d, f.to_vec())));
        assert_eq!(out.len(), 1);
        let f = &out[0].1;
        assert_eq!(&f[..6], &[2, 0, 0, 0, 0, 2]);
        assert_eq!(&f[6..12], &[2, 0, 0, 0, 0, 1]);
        assert_eq!(&f[12..14], &[0x86, 0xdd]);
        assert_eq!(&f[14..], &pkt6);
        assert_eq!(q.awaited().collect::<Vec<_>>(), vec![(0, k3)]);
        q.retry(&t1, 10 + MAX_WAIT_NS + 1, |_, _| panic!("nothing to send"));
        assert!(q.is_empty());
        assert_eq!(q.stats, PendingStats { queued: 2, sent: 1, overflow: 1, timeout: 1 });
    }
}
