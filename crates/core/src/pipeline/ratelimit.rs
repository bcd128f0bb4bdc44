//! A token bucket for ICMP errors (RFC 4443 §2.4(f): "an IPv6 node MUST limit the rate
//! of ICMPv6 error messages it originates").

/// Tokens refill at `rate` per second up to `burst`. Time comes from the caller.
#[derive(Debug, Clone)]
pub struct TokenBucket {
    rate: u64,
    burst: u64,
    /// Tokens scaled by 1e9 (token-nanoseconds) to avoid division per packet.
    level: u64,
    last_ns: u64,
}

impl TokenBucket {
    pub fn new(rate_per_s: u64, burst: u64) -> Self {
        TokenBucket { rate: rate_per_s, burst, level: burst * 1_000_000_000, last_ns: 0 }
    }

    /// Takes a token at time `now_ns`; false when the bucket is empty.
    pub fn take(&mut self, now_ns: u64) -> bool {
        let cap = self.burst * 1_000_000_000;
        let dt = now_ns.saturating_sub(self.last_ns);
        self.last_ns = self.last_ns.max(now_ns);
        self.level = self.level.saturating_add(dt.saturating_mul(self.rate)).min(cap);
        if self.level >= 1_000_000_000 {
            self.level -= 1_000_000_000;
            true
        } else {
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn burst_then_rate() {
        let mut b = TokenBucket::new(10, 3);
        assert!(b.take(0) && b.take(0) && b.take(0));
        assert!(!b.take(0));
        assert!(!b.take(50_000_000)); // 0.5 token
        assert!(b.take(100_000_000)); // 1 token after 100 ms
        assert!(!b.take(100_000_000));
        // Long idle refills to the burst, not beyond.
        assert!(b.take(10_000_000_000) && b.take(10_000_000_000) && b.take(10_000_000_000));
        assert!(!b.take(10_000_000_000));
    }

    #[test]
    fn time_going_backwards_is_harmless() {
        let mut b = TokenBucket::new(1, 1);
        assert!(b.take(5_000_000_000));
        assert!(!b.take(1));
    }
}
