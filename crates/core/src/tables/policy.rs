//! SR policies with their rewrite computed once (RFC 8986 §5): the SRH bytes a head-end
//! pushes or inserts, the new destination, the outer source, and — when the HMAC text is
//! fixed (encapsulation from a fixed source) — the HMAC itself. A list written with
//! `csid ...` is compressed here first ([`super::csid_policy`]), so what follows, and
//! every packet, sees an ordinary list of 128-bit entries.

use std::net::Ipv6Addr;

use super::csid_policy;
use crate::hmac::{HmacKey, HMAC_FIELD_LEN, HMAC_TLV_LEN, SRH_FLAG_HMAC};
use crate::spec::{CsidPolicy, Seg6Mode};
use sr6_wire::{HmacTlv, HmacTlvRepr, SrhPacket, SrhRepr};

/// A head-end policy ready to apply.
#[derive(Debug, Clone)]
pub struct Policy {
    pub mode: Seg6Mode,
    /// The segments as configured: `segs[0]` is visited first.
    pub segs: Vec<Ipv6Addr>,
    /// How `segs` were compressed into the entries of `first` and `srh`, if they were.
    pub csid: Option<CsidPolicy>,
    pub hmac_key_id: Option<u32>,
    /// The SRH exactly as emitted (empty when the reduced encapsulation omits it). Its
    /// Next Header byte is patched per packet; for insertion, so is Segment List[0]
    /// (the original destination) and the HMAC.
    pub srh: Vec<u8>,
    /// The destination after the rewrite: the first segment (compressed: the first
    /// entry, a C-SID container or the first SID of a REPLACE-C-SID series).
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
        Policy::with_csid(mode, None, segs, hmac, src, line)
    }

    /// Builds a policy whose full SIDs `segs` are compressed as `csid` says, if it is
    /// set. H.Encaps and H.Encaps.L2 of a list that compresses to one entry then carry
    /// no SRH, as RFC 8754 §4.1 allows for a single segment with no flag or TLV to
    /// carry (RFC 9800 §7 encodes a compressed list that way) — unlike `mode encap`
    /// without `csid`, which, as Linux, always pushes an SRH. Insertion always has one:
    /// it carries the original destination.
    pub fn with_csid(
        mode: Seg6Mode,
        csid: Option<CsidPolicy>,
        segs: &[Ipv6Addr],
        hmac: Option<(u32, &HmacKey)>,
        src: Ipv6Addr,
        line: usize,
    ) -> Result<Policy, String> {
        let insert = matches!(mode, Seg6Mode::Inline | Seg6Mode::InlineRed);
        let entries = match csid {
            Some(c) if !segs.is_empty() => csid_policy::compress(c, segs, insert).map_err(|e| e.0)?,
            _ => segs.to_vec(),
        };
        let omit_srh = csid.is_some()
            && entries.len() == 1
            && hmac.is_none()
            && matches!(mode, Seg6Mode::Encap | Seg6Mode::L2Encap);
        let configured = segs;
        let segs = &entries[..];
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
            _ if omit_srh => Vec::new(),
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
                segs: configured.to_vec(),
                csid,
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
            segs: configured.to_vec(),
            csid,
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
    fn compressed_lists() {
        use crate::spec::{CsidLengths, CsidPolicy, CsidScheme};
        let next = Some(CsidPolicy { scheme: CsidScheme::Next, lengths: CsidLengths { lblen: 32, nflen: 16 } });
        let segs = [a("fc00:0:1::"), a("fc00:0:2::"), a("fc00:0:3::")];
        // H.Encaps: one container, no SRH; the configured SIDs are kept.
        let p = Policy::with_csid(Seg6Mode::Encap, next, &segs, None, a("::"), 1).unwrap();
        assert!(p.srh.is_empty());
        assert_eq!((p.first, p.segs.len(), p.csid), (a("fc00:0:1:2:3::").octets(), 3, next));
        let l2 = Policy::with_csid(Seg6Mode::L2Encap, next, &segs, None, a("::"), 1).unwrap();
        assert!(l2.srh.is_empty());
        // With an HMAC the SRH stays, holding the container.
        let k = HmacKey::new(HmacAlg::Sha256, b"k");
        let h = Policy::with_csid(Seg6Mode::Encap, next, &segs, Some((1, &k)), a("::"), 1).unwrap();
        assert_eq!((&h.srh[2..5], &h.srh[8..24]), (&[4u8, 0, 0][..], &a("fc00:0:1:2:3::").octets()[..]));
        // H.Insert: Segment List[0] for the original destination, [1] the container.
        let i = Policy::with_csid(Seg6Mode::Inline, next, &segs, None, a("::"), 1).unwrap();
        assert_eq!(&i.srh[..8], &[0, 4, 4, 1, 1, 0, 0, 0]);
        assert_eq!(&i.srh[24..40], &a("fc00:0:1:2:3::").octets());
        // Two containers: H.Encaps.Red keeps the second only.
        let eight: Vec<Ipv6Addr> = (1..=8).map(|n| a(&format!("fc00:0:{n}::"))).collect();
        let r = Policy::with_csid(Seg6Mode::EncapRed, next, &eight, None, a("::"), 1).unwrap();
        assert_eq!(&r.srh[..8], &[0, 2, 4, 1, 0, 0, 0, 0]);
        assert_eq!(&r.srh[8..24], &a("fc00:0:7:8::").octets());
        assert_eq!(r.first, a("fc00:0:1:2:3:4:5:6").octets());
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
