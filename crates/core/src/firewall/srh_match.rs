//! `-m srh`: Linux's `ip6t_srh` (net/ipv6/netfilter/ip6t_srh.c, revision 1) over the
//! first Routing header of the packet. The header must be there in full, be an SRH
//! (Routing Type 4) and have Segments Left <= Last Entry, or the match fails whatever
//! its `!`s; then each option given must hold, `!` inverting its own comparison. The
//! previous SID needs Segments Left < Last Entry and the next SID Segments Left > 0,
//! again whatever the `!`.

use super::spec::{AddrMatch, Neg, SrhMatch};
use sr6_wire::srh::ROUTING_TYPE_SRH;

/// SRH fixed-part offsets (RFC 8754 §2).
const NEXT_HEADER: usize = 0;
const HDR_EXT_LEN: usize = 1;
const ROUTING_TYPE: usize = 2;
const SEGMENTS_LEFT: usize = 3;
const LAST_ENTRY: usize = 4;
const TAG: usize = 6;
const FIXED_LEN: usize = 8;
const SID_LEN: usize = 16;

fn cmp(o: &Option<Neg<u8>>, field: u8, f: impl Fn(u8, u8) -> bool) -> bool {
    o.is_none_or(|n| f(field, n.v) != n.inv)
}

/// Segment List[i] of the SRH at `srh` in packet `d`, read where the kernel reads it
/// (past the header's end if the packet goes on), `None` beyond the packet.
fn sid(d: &[u8], srh: usize, i: usize) -> Option<u128> {
    let at = srh + FIXED_LEN + i * SID_LEN;
    let b: [u8; 16] = d.get(at..at + SID_LEN)?.try_into().ok()?;
    Some(u128::from_be_bytes(b))
}

fn sid_ok(a: &AddrMatch, s: Option<u128>) -> bool {
    s.is_some_and(|s| a.contains(s) != a.inv)
}

/// Whether packet `d`, whose first Routing header is at `srh`, matches `m`.
pub(crate) fn matches(m: &SrhMatch, d: &[u8], srh: Option<usize>) -> bool {
    let Some(off) = srh else { return false };
    let Some(h) = d.get(off..off + FIXED_LEN).and_then(|s| <[u8; FIXED_LEN]>::try_from(s).ok()) else {
        return false;
    };
    let (nh, hdrlen, rtype, sl, le) =
        (h[NEXT_HEADER], h[HDR_EXT_LEN], h[ROUTING_TYPE], h[SEGMENTS_LEFT], h[LAST_ENTRY]);
    let tag = u16::from_be_bytes([h[TAG], h[TAG + 1]]);
    if d.len() - off < (usize::from(hdrlen) + 1) * 8 || rtype != ROUTING_TYPE_SRH || sl > le {
        return false;
    }
    let [eq, gt, lt] = [|a: u8, b: u8| a == b, |a: u8, b: u8| a > b, |a: u8, b: u8| a < b];
    let fields_ok = cmp(&m.next_hdr, nh, eq)
        && cmp(&m.hdr_len[0], hdrlen, eq)
        && cmp(&m.hdr_len[1], hdrlen, gt)
        && cmp(&m.hdr_len[2], hdrlen, lt)
        && cmp(&m.segs_left[0], sl, eq)
        && cmp(&m.segs_left[1], sl, gt)
        && cmp(&m.segs_left[2], sl, lt)
        && cmp(&m.last_entry[0], le, eq)
        && cmp(&m.last_entry[1], le, gt)
        && cmp(&m.last_entry[2], le, lt)
        && m.tag.is_none_or(|t| (tag == t.v) != t.inv);
    if !fields_ok {
        return false;
    }
    let (sl, le) = (usize::from(sl), usize::from(le));
    m.psid.as_ref().is_none_or(|a| sl != le && sid_ok(a, sid(d, off, sl + 1)))
        && m.nsid.as_ref().is_none_or(|a| sl != 0 && sid_ok(a, sid(d, off, sl - 1)))
        && m.lsid.as_ref().is_none_or(|a| sid_ok(a, sid(d, off, 0)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::Ipv6Addr;

    /// An SRH (Next Header 17, tag 7) with segments [S0, S1, S2] and Segments Left 1,
    /// at offset 0 of `d`.
    fn srh() -> Vec<u8> {
        let mut d = vec![17, 6, 4, 1, 2, 0, 0, 7];
        for i in 0..3u8 {
            let mut s = [0u8; 16];
            s[0] = 0xfc;
            s[15] = i;
            d.extend_from_slice(&s);
        }
        d
    }

    fn a(s: &str, len: u32, inv: bool) -> AddrMatch {
        let mask = if len == 0 { 0 } else { u128::MAX << (128 - len) };
        AddrMatch::new(s.parse::<Ipv6Addr>().unwrap(), Ipv6Addr::from(mask), inv)
    }

    #[test]
    fn fields_and_negation() {
        let d = srh();
        let m = |f: &dyn Fn(&mut SrhMatch)| {
            let mut m = SrhMatch::default();
            f(&mut m);
            matches(&m, &d, Some(0))
        };
        assert!(m(&|_| {}));
        assert!(!matches(&SrhMatch::default(), &d, None));
        assert!(m(&|m| m.next_hdr = Some(Neg { v: 17, inv: false })));
        assert!(!m(&|m| m.next_hdr = Some(Neg { v: 17, inv: true })));
        assert!(m(&|m| m.hdr_len[1] = Some(Neg { v: 5, inv: false })));
        assert!(m(&|m| m.segs_left[2] = Some(Neg { v: 2, inv: false })));
        assert!(!m(&|m| m.last_entry[0] = Some(Neg { v: 2, inv: true })));
        assert!(m(&|m| m.tag = Some(Neg { v: 7, inv: false })));
        assert!(m(&|m| m.psid = Some(a("fc00::2", 128, false))));
        assert!(m(&|m| m.nsid = Some(a("fc00::", 120, false))));
        assert!(!m(&|m| m.lsid = Some(a("fc00::", 120, true))));
        // Segments Left == Last Entry: no previous SID, even negated.
        let mut d2 = d.clone();
        d2[3] = 2;
        let mut mm = SrhMatch { psid: Some(a("fc00::9", 128, true)), ..SrhMatch::default() };
        assert!(!matches(&mm, &d2, Some(0)));
        // Segments Left > Last Entry: never a match.
        d2[3] = 3;
        mm.psid = None;
        assert!(!matches(&mm, &d2, Some(0)));
        // Not an SRH, or shorter than its Hdr Ext Len says.
        let mut d3 = d.clone();
        d3[2] = 0;
        assert!(!matches(&SrhMatch::default(), &d3, Some(0)));
        assert!(!matches(&SrhMatch::default(), &d[..40], Some(0)));
    }
}
