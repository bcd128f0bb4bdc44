//! End.Limit (RFC 9433 §6.8): rate limiting per group of flows, the group and its rate
//! carried in the SID's argument, then what End does (RFC 8986 §4.1). An sr6 extension
//! of the seg6local grammar: `action End.Limit [group-bits I] [rate KBPS] [burst BYTES]`.
//!
//! The SID is a prefix of `L` bits, LOC+FUNC; the `128 - L` bits after it are the
//! argument of the RFC's Figure 12: a group id of `I` bits (`group-bits`, 0 to 16,
//! default 0: one group), then a limit-rate of `J = 128 - L - I` bits (at most 64). The
//! RFC gives neither the lengths nor the rate's unit: the lengths are configuration, and
//! sr6 reads the limit-rate in kbit/s (the unit of the AMBR it stands for). A limit-rate
//! of zero means the SID's static `rate` (kbit/s, default 0), and no rate at all means no
//! limiting, as the RFC asks ("the node should not do rate limiting unless static
//! configuration or control plane sets the limit rate").
//!
//! Each group has one token bucket of `burst` bytes (default 15,000: ten 1,500-byte
//! packets) refilled at the rate, kept as the Generic Cell Rate Algorithm's theoretical
//! arrival time (ITU-T I.371): one atomic word per group, updated with a
//! compare-and-swap, so the workers of `sr6 run` share the buckets without a lock. A
//! packet of `n` bytes (its IPv6 length, header included) costs `n × 8 / rate` of
//! time; it conforms when, after paying, the bucket's time is at most `burst × 8 / rate`
//! ahead of the packet's arrival (a packet larger than `burst` conforms to a full
//! bucket). A packet that does not conform is dropped (`rate_limited`) and costs
//! nothing. Arrival is the packet's receive timestamp: the monotonic clock in `sr6 run`,
//! the capture's timestamps in `sr6 pcap`, so offline runs are deterministic. Buckets
//! start full; in `sr6 run`, a SID that new tables keep (the same prefix and action)
//! keeps its buckets (`Tables::adopt_limiters`, at each publication).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use super::{end, Arrival, Behaviour, Next, Param, Takes};
use crate::drop::DropReason;
use crate::packet::PacketBuf;
use crate::spec::{Prefix, SidAction};
use crate::tables::{BuildError, Sid, SidBuilder, SidState, Tables};
use sr6_wire::Ipv6Packet;

pub static END_LIMIT: Behaviour = Behaviour {
    keyword: "End.Limit",
    required: &[],
    optional: &[Param::GroupBits, Param::Rate, Param::Burst],
    flavors: &[],
    rfc: "RFC 9433 §6.8",
    summary: "rate limit per group id carried in the SID's argument (a token bucket each), then End",
    in_kernel: false,
    takes: Takes::Segment,
    build,
    input,
};

/// The most group-id bits: 2^16 buckets (512 KiB) per SID.
pub const MAX_GROUP_BITS: u8 = 16;
/// The most limit-rate bits.
pub const MAX_RATE_BITS: u32 = 64;
/// `burst` when not given, in bytes.
pub const DEFAULT_BURST: u32 = 15_000;

/// One End.Limit SID's layout and buckets, shared by every worker.
#[derive(Debug)]
pub struct Limiter {
    /// Bits after the group id: the limit-rate's length `J`.
    rate_bits: u32,
    /// Group-id bits `I`.
    group_bits: u32,
    /// Static rate, kbit/s (0: none).
    rate: u64,
    /// Bucket depth, bytes.
    burst: u64,
    /// Theoretical arrival time (ns) of each group's bucket.
    tat: Box<[AtomicU64]>,
}

impl Limiter {
    /// A limiter no SID uses (one bucket, no rate): what a retired index holds, so that
    /// its buckets' memory goes.
    pub fn retired() -> Limiter {
        Limiter { rate_bits: 0, group_bits: 0, rate: 0, burst: 0, tat: Box::new([AtomicU64::new(0)]) }
    }

    /// The limiter of a SID of prefix length `len` with `group-bits` `i`, or why not.
    pub fn new(len: u8, i: u8, rate: u32, burst: u32) -> Result<Limiter, String> {
        if i > MAX_GROUP_BITS {
            return Err(format!("group-bits {i}: at most {MAX_GROUP_BITS} (one bucket per group id)"));
        }
        let arg = 128 - u32::from(len);
        let (i, rate_bits) = (u32::from(i), arg.checked_sub(u32::from(i)));
        let Some(j) = rate_bits else {
            return Err(format!(
                "group-bits {i} does not fit the {arg} bits after the SID's /{len} (RFC 9433 Fig. 12: LOC+FUNC, group-id, limit-rate)"
            ));
        };
        if j > MAX_RATE_BITS {
            return Err(format!(
                "the limit-rate would be {j} bits after /{len} and {i} group-id bits: at most {MAX_RATE_BITS}; \
                 give the SID a longer prefix or more group-bits"
            ));
        }
        let tat = (0..1u32 << i).map(|_| AtomicU64::new(0)).collect();
        Ok(Limiter { rate_bits: j, group_bits: i, rate: u64::from(rate), burst: u64::from(burst), tat })
    }

    /// The group id and the rate (kbit/s; 0: none) for destination `dst`.
    fn group_and_rate(&self, dst: u128) -> (usize, u64) {
        let low = |bits: u32| u128::MAX.checked_shr(128 - bits).filter(|_| bits > 0).unwrap_or(0);
        let group = (dst.checked_shr(self.rate_bits).unwrap_or(0) & low(self.group_bits)) as usize;
        let carried = (dst & low(self.rate_bits)) as u64;
        (group, if carried != 0 { carried } else { self.rate })
    }

    /// Whether `bytes` arriving at `now` ns conform to `group`'s bucket at `kbps`;
    /// if so they are paid for.
    fn admit(&self, group: usize, bytes: u64, kbps: u64, now: u64) -> bool {
        let Some(tat) = self.tat.get(group) else { return false };
        // ns per byte at kbps kbit/s: 8 bits / (kbps × 1000 / 1e9 bits per ns).
        let cost = bytes.saturating_mul(8_000_000) / kbps;
        let depth = self.burst.saturating_mul(8_000_000).checked_div(kbps).unwrap_or(0).max(cost);
        let mut t = tat.load(Ordering::Relaxed);
        loop {
            let paid = t.max(now).saturating_add(cost);
            if paid - now > depth {
                return false;
            }
            match tat.compare_exchange_weak(t, paid, Ordering::Relaxed, Ordering::Relaxed) {
                Ok(_) => return true,
                Err(x) => t = x,
            }
        }
    }
}

fn build(b: &mut SidBuilder, a: &SidAction) -> Result<SidState, BuildError> {
    let Prefix::V6(_, len) = b.prefix() else { return Err(b.error("End.Limit: a SID is an IPv6 prefix")) };
    let p = &a.params;
    let l = Limiter::new(len, p.group_bits.unwrap_or(0), p.rate.unwrap_or(0), p.burst.unwrap_or(DEFAULT_BURST))
        .map_err(|e| b.error(format!("End.Limit: {e}")))?;
    let limiter = b.add_limiter(Arc::new(l));
    Ok(SidState { table: Tables::MAIN, limiter, ..SidState::default() })
}

/// RFC 9433 §6.8: the group's bucket, then End (RFC 8986 §4.1) for what conforms.
fn input(t: &Tables, p: &mut PacketBuf, sid: &Sid, a: &Arrival) -> Next {
    let Some(l) = t.limiters.get(sid.state.limiter as usize) else { return Next::drop(DropReason::NoRoute) };
    let ip = Ipv6Packet::new_unchecked(p.data());
    let dst = u128::from(ip.dst_addr());
    let bytes = 40 + u64::from(ip.payload_len());
    let (group, kbps) = l.group_and_rate(dst);
    if kbps != 0 && !l.admit(group, bytes, kbps, p.ts_ns) {
        return Next::drop(DropReason::RateLimited);
    }
    (end::END.input)(t, p, sid, a)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_errors() {
        assert!(Limiter::new(128, 1, 0, 1).unwrap_err().contains("does not fit"));
        assert!(Limiter::new(48, 17, 0, 1).unwrap_err().contains("at most 16"));
        assert!(Limiter::new(48, 8, 0, 1).unwrap_err().contains("72 bits"));
        let l = Limiter::new(64, 16, 0, 1).unwrap();
        assert_eq!((l.group_bits, l.rate_bits, l.tat.len()), (16, 48, 65536));
    }

    #[test]
    fn group_and_rate_from_the_argument() {
        let l = Limiter::new(64, 16, 500, 1).unwrap();
        let dst = 0xfc00_0000_0000_0001_u128 << 64 | 0x0007_0000_0000_03e8;
        assert_eq!(l.group_and_rate(dst), (7, 1000));
        assert_eq!(l.group_and_rate(dst & !0xffff_ffff_ffff), (7, 500), "limit-rate 0: the static rate");
        let one = Limiter::new(128, 0, 0, 1).unwrap();
        assert_eq!(one.group_and_rate(dst), (0, 0));
    }

    #[test]
    fn bucket_admits_burst_then_the_rate() {
        // 8 kbit/s = 1 byte per ms; 1,000-byte bucket.
        let l = Limiter::new(128, 0, 8, 1000).unwrap();
        let ms = 1_000_000;
        assert!((0..10).all(|_| l.admit(0, 100, 8, 0)), "ten 100-byte packets fill the bucket");
        assert!(!l.admit(0, 100, 8, 0), "the eleventh does not conform");
        assert!(!l.admit(0, 100, 8, 99 * ms));
        assert!(l.admit(0, 100, 8, 100 * ms), "100 ms later there is room for 100 bytes");
        assert!(l.admit(0, 5000, 8, 10_000 * ms), "a packet over the burst conforms to a full bucket");
        assert!(!l.admit(0, 1, 8, 10_000 * ms));
        assert!(!l.admit(1, 1, 8, 0), "no such group");
    }
}
