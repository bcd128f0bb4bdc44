//! SR policies with their rewrite computed once (RFC 8986 §5): the SRH bytes a head-end
//! pushes or inserts, the new destination, the outer source, and — when the HMAC text is
//! fixed (encapsulation from a fixed source) — the HMAC itself.

use std::net::Ipv6Addr;

use crate::hmac::{HmacKey, HMAC_FIELD_LEN, HMAC_TLV_LEN, SRH_FLAG_HMAC};
use crate::spec::Seg6Mode;
use sr6_wire::{HmacTlv, HmacTlvRepr, SrhPacket, SrhRepr};

/// A head-end policy ready to apply.
#[derive(Debug, Clone)]
pub struct Policy {
    pub mode: Seg6Mode,
    /// The segments as configured: `segs[0]` is visited first.
    pub segs: Vec<Ipv6Addr>,
    pub hmac_key_id: Option<u32>,
    /// The SRH exactly as emitted (empty when the reduced encapsulation omits it). Its
    /// Next Header byte is patched per packet; for insertion, so is Segment List[0]
    /// (the original destination) and the HMAC.
    pub srh: Vec<u8>,
    /// The destination after the rewrite: the first segment.
    pub first: [u8; 16],
    /// Outer source address of the encapsulating modes.
    pub src: [u8; 16],
    /// True when `srh` already holds the final HMAC (encapsulation: the text is fixed).
    pub hmac_ready: bool,
    pub line: usize,
}

impl Policy {
    /// True for the modes that push an outer IPv6 header.
    pub fn encapsulates(&self) -> bool {
        !matches!(self.mode, Seg6Mode::Inline | Seg6Mode::InlineRed)
    }

    /// Offset of the HMAC TLV in `srh`, if any.
    pub fn hmac_tlv_offset(&self) -> Option<usize> {
        self.hmac_key_id.map(|_| self.srh.len() - HMAC_TLV_LEN)
    }

    /// Builds a policy. `key` must be the key of `hmac_key_id` if that is set.
    pub fn new(
        mode: Seg6Mode,
        segs: &[Ipv6Addr],
        hmac: Option<(u32, &HmacKey)>,
        src: Ipv6Addr,
        line: usize,
    ) -> Result<Policy, String> {
        let n = segs.len();
        if n == 0 {
            return Err("a policy needs at least one segment".into());
        }
        if n > 16 {
            return Err(format!("{n} segments: sr6 pushes at most 16"));
        }
        // Entries of the Segment List in header order (RFC 8754 §2: [0] is the last
        // segment), with a placeholder `None` for the original destination of insertion.
        let reversed = segs.iter().rev().copied().map(Some);
        let list: Vec<Option<Ipv6Addr>> = match mode {
            Seg6Mode::Encap | Seg6Mode::L2Encap => reversed.collect(),
            // Reduced (RFC 8986 §5.2): the first SID is only in the destination.
            Seg6Mode::EncapRed | Seg6Mode::L2EncapRed => reversed.take(n - 1).collect(),
            Seg6Mode::Inline => std::iter::once(None).chain(reversed).collect(),
            Seg6Mode::InlineRed => std::iter::once(None).chain(reversed.take(n - 1)).collect(),
        };
        let sl = match mode {
            Seg6Mode::Encap | Seg6Mode::L2Encap | Seg6Mode::EncapRed | Seg6Mode::L2EncapRed => n - 1,
            Seg6Mode::Inline | Seg6Mode::InlineRed => n,
        };
        let first = segs[0].octets();
        if list.is_empty() {
            if hmac.is_some() {
                return Err(format!(
                    "{} with a single segment carries no SRH, so it cannot carry an HMAC; use mode {}",
                    mode.keyword(),
                    if mode == Seg6Mode::EncapRed { "encap" } else { "l2encap" }
                ));
            }
            return Ok(Policy {
                mode,
                segs: segs.to_vec(),
                hmac_key_id: None,
                srh: Vec::new(),
                first,
                src: src.octets(),
                hmac_ready: false,
                line,
            });
        }
        // The Segment List bytes; the placeholder is zeros.
        let segments: Vec<u8> = list.iter().flat_map(|s| s.map_or([0; 16], |a| a.octets())).collect();
        // The HMAC TLV closes the SRH (RFC 8754 §2.1.2), its HMAC zero until computed.
        let mut tlv = [0u8; HMAC_TLV_LEN];
        if let Some((key_id, _)) = hmac {
            let repr = HmacTlvRepr { d_flag: false, key_id, hmac_len: HMAC_FIELD_LEN as u8 };
            repr.emit(&mut HmacTlv::new_unchecked(&mut tlv[..]));
        }
        let repr = SrhRepr {
            next_header: 0, // patched per packet
            segments_left: sl as u8,
            last_entry: (list.len() - 1) as u8,
            flags: if hmac.is_some() { SRH_FLAG_HMAC } else { 0 },
            tag: 0,
            segments: &segments,
            tlvs: if hmac.is_some() { &tlv } else { &[] },
        };
        let mut srh = vec![0u8; repr.buffer_len()];
        let mut view = SrhPacket::new_unchecked(&mut srh[..]);
        repr.emit(&mut view);
        let mut hmac_ready = false;
        if let Some((key_id, key)) = hmac {
            if !matches!(mode, Seg6Mode::Inline | Seg6Mode::InlineRed) {
                let mac = key.compute(&src.octets(), repr.last_entry, repr.flags, key_id, repr.segments);
                HmacTlv::new_unchecked(view.tlv_area_mut()).hmac_mut().copy_from_slice(&mac);
                hmac_ready = true;
            }
        }
        Ok(Policy {
            mode,
            segs: segs.to_vec(),
            hmac_key_id: hmac.map(|h| h.0),
            srh,
            first,
            src: src.octets(),
            hmac_ready,
            line,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::HmacAlg;

    fn a(s: &str) -> Ipv6Addr {
        s.parse().unwrap()
    }

    #[test]
    fn encap_reverses_the_list() {
        let p = Policy::new(Seg6Mode::Encap, &[a("fc00::1"), a("fc00::2")], None, a("fc00::9"), 1).unwrap();
        assert_eq!(p.srh.len(), 40);
        assert_eq!(&p.srh[..8], &[0, 4, 4, 1, 1, 0, 0, 0]);
        assert_eq!(&p.srh[8..24], &a("fc00::2").octets());
        assert_eq!(&p.srh[24..40], &a("fc00::1").octets());
        assert_eq!(p.first, a("fc00::1").octets());
    }

    #[test]
    fn reduced_drops_the_first_sid() {
        let p = Policy::new(Seg6Mode::EncapRed, &[a("fc00::1"), a("fc00::2"), a("fc00::3")], None, a("::"), 1).unwrap();
        assert_eq!(&p.srh[..8], &[0, 4, 4, 2, 1, 0, 0, 0]);
        assert_eq!(&p.srh[8..24], &a("fc00::3").octets());
        assert_eq!(&p.srh[24..40], &a("fc00::2").octets());
        let one = Policy::new(Seg6Mode::EncapRed, &[a("fc00::1")], None, a("::"), 1).unwrap();
        assert!(one.srh.is_empty());
        let k = HmacKey::new(HmacAlg::Sha256, b"k");
        assert!(Policy::new(Seg6Mode::EncapRed, &[a("fc00::1")], Some((1, &k)), a("::"), 1).is_err());
    }

    #[test]
    fn insert_reserves_slot_zero() {
        let p = Policy::new(Seg6Mode::Inline, &[a("fc00::1"), a("fc00::2")], None, a("::"), 1).unwrap();
        assert_eq!(&p.srh[..8], &[0, 6, 4, 2, 2, 0, 0, 0]);
        assert_eq!(&p.srh[8..24], &[0; 16]);
        assert_eq!(&p.srh[24..40], &a("fc00::2").octets());
        let r = Policy::new(Seg6Mode::InlineRed, &[a("fc00::1"), a("fc00::2")], None, a("::"), 1).unwrap();
        assert_eq!(&r.srh[..8], &[0, 4, 4, 2, 1, 0, 0, 0]);
    }

    #[test]
    fn hmac_tlv_closes_the_srh() {
        let k = HmacKey::new(HmacAlg::Sha256, b"secret");
        let p = Policy::new(Seg6Mode::Encap, &[a("fc00::1"), a("fc00::2")], Some((7, &k)), a("fc00::9"), 1).unwrap();
        assert_eq!(p.srh.len(), 80);
        assert_eq!(p.srh[1], 9);
        assert_eq!(p.srh[5], SRH_FLAG_HMAC);
        assert_eq!(&p.srh[40..48], &[5, 38, 0, 0, 0, 0, 0, 7]);
        assert!(p.hmac_ready);
        let want = k.compute(&a("fc00::9").octets(), 1, SRH_FLAG_HMAC, 7, &p.srh[8..40]);
        assert_eq!(&p.srh[48..80], &want);
    }
}
