//! The flow hash of a multipath route (Linux `rt6_multipath_hash`,
//! `fib_multipath_hash`), per `net.ipv{6,4}.fib_multipath_hash_policy`:
//!
//! - policy 0 (L3): IPv6 source, destination, flow label and Next Header (of the IPv6
//!   header itself); IPv4 source and destination. An ICMP error is hashed on the packet
//!   it quotes, so that it follows the flow it is about.
//! - policy 1 (L4): source, destination, protocol (IPv6: past Hop-by-Hop, Routing and
//!   Destination Options headers) and the ports of TCP, UDP, UDP-Lite, SCTP and DCCP
//!   (ESP: the SPI; AH: its SPI); no ports for a fragment, as the kernel's dissector.
//!
//! The kernel mixes these with jhash and a seed chosen at boot, so which path a flow
//! takes differs between kernels; what is fixed, and what sr6 keeps, is which fields
//! count: packets of one flow take one path, flows differing only in other fields take
//! the same path. sr6's mixer has a fixed seed, so a run is reproducible.

/// A 31-bit flow hash of the IPv6 packet `d` (starting at its header).
pub fn hash6(d: &[u8], policy: u8) -> u32 {
    let Some(h) = d.get(..40) else { return 0 };
    let mut m = Mix::new(6);
    if policy == 1 {
        m.bytes(&h[8..40]);
        let (proto, ports) = l4_of6(d);
        m.word(u64::from(proto) << 32 | u64::from(ports));
        return m.finish();
    }
    let mut key = h;
    if h[6] == ICMPV6 && d.get(40).is_some_and(|t| (1..=4).contains(t)) {
        if let Some(inner) = d.get(48..88) {
            key = inner;
        }
    }
    m.bytes(&key[8..40]);
    let label = u32::from_be_bytes([0, key[1] & 0x0f, key[2], key[3]]);
    m.word(u64::from(label) << 8 | u64::from(key[6]));
    m.finish()
}

/// A 31-bit flow hash of the IPv4 packet `d` (starting at its header).
pub fn hash4(d: &[u8], policy: u8) -> u32 {
    let Some(h) = d.get(..20) else { return 0 };
    let ihl = usize::from(h[0] & 0x0f) * 4;
    let proto = h[9];
    let fragment = u16::from_be_bytes([h[6], h[7]]) & 0x3fff != 0;
    let mut m = Mix::new(4);
    if policy == 1 {
        m.bytes(&h[12..20]);
        let ports = if fragment { 0 } else { ports_at(d, ihl, proto) };
        m.word(u64::from(proto) << 32 | u64::from(ports));
        return m.finish();
    }
    let mut key = &h[12..20];
    // ICMP Destination Unreachable, Redirect, Time Exceeded, Parameter Problem.
    if proto == ICMP && !fragment && d.get(ihl).is_some_and(|t| matches!(t, 3 | 5 | 11 | 12)) {
        if let Some(inner) = d.get(ihl + 8 + 12..ihl + 8 + 20) {
            key = inner;
        }
    }
    m.bytes(key);
    m.finish()
}

const ICMP: u8 = 1;
const ICMPV6: u8 = 58;

/// The upper-layer protocol of an IPv6 packet past the extension headers the kernel's
/// flow dissector skips, and its ports (0 for none or a fragment).
fn l4_of6(d: &[u8]) -> (u8, u32) {
    let mut nh = d[6];
    let mut off = 40;
    for _ in 0..8 {
        match nh {
            // Hop-by-Hop, Routing, Destination Options: length in 8-octet units.
            0 | 43 | 60 => {
                let (Some(n), Some(l)) = (d.get(off), d.get(off + 1)) else { return (nh, 0) };
                nh = *n;
                off += (usize::from(*l) + 1) * 8;
            }
            // Fragment: the protocol is the fragment's, with no ports.
            44 => return (d.get(off).copied().unwrap_or(nh), 0),
            _ => return (nh, ports_at(d, off, nh)),
        }
    }
    (nh, 0)
}

/// The 4 bytes the kernel's dissector takes as ports of `proto` at `off`.
fn ports_at(d: &[u8], off: usize, proto: u8) -> u32 {
    let at = match proto {
        6 | 17 | 33 | 132 | 136 | 50 => off,
        51 => off + 4,
        _ => return 0,
    };
    d.get(at..at + 4).map_or(0, |p| u32::from_be_bytes([p[0], p[1], p[2], p[3]]))
}

/// A 64-bit multiply-xorshift mixer with a fixed seed.
struct Mix(u64);

impl Mix {
    fn new(seed: u64) -> Mix {
        Mix(0x9e37_79b9_7f4a_7c15 ^ seed)
    }
    fn word(&mut self, w: u64) {
        self.0 = (self.0 ^ w).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        self.0 ^= self.0 >> 31;
    }
    fn bytes(&mut self, b: &[u8]) {
        for c in b.chunks(8) {
            let mut w = [0u8; 8];
            w[..c.len()].copy_from_slice(c);
            self.word(u64::from_be_bytes(w));
        }
    }
    fn finish(self) -> u32 {
        let mut h = self.0;
        h ^= h >> 33;
        h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
        h ^= h >> 33;
        h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
        h ^= h >> 33;
        (h >> 33) as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v6(nh: u8, label: u32, payload: &[u8]) -> Vec<u8> {
        let mut d = vec![0u8; 40];
        d[0] = 0x60;
        d[1] = (label >> 16) as u8 & 0x0f;
        d[2] = (label >> 8) as u8;
        d[3] = label as u8;
        d[6] = nh;
        d[7] = 64;
        d[8] = 0xfc;
        d[23] = 1;
        d[24] = 0xfc;
        d[39] = 2;
        d.extend_from_slice(payload);
        d
    }

    #[test]
    fn l3_ignores_ports_and_l4_ignores_the_flow_label() {
        let a = v6(17, 5, &[0, 1, 0, 2, 0, 8, 0, 0]);
        let b = v6(17, 5, &[0, 3, 0, 4, 0, 8, 0, 0]);
        let c = v6(17, 6, &[0, 1, 0, 2, 0, 8, 0, 0]);
        assert_eq!(hash6(&a, 0), hash6(&b, 0));
        assert_ne!(hash6(&a, 0), hash6(&c, 0));
        assert_ne!(hash6(&a, 1), hash6(&b, 1));
        assert_eq!(hash6(&a, 1), hash6(&c, 1));
        assert!(hash6(&a, 0) < 1 << 31);
    }

    #[test]
    fn short_packets_hash_without_panicking() {
        for n in 0..60 {
            let d = vec![0x60u8; n];
            let _ = (hash6(&d, 0), hash6(&d, 1), hash4(&d, 0), hash4(&d, 1));
        }
    }
}
