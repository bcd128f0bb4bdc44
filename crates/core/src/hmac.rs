//! SRH HMAC (RFC 8754 §2.1.2; Lebrun 2017 §2.4): keys with their pads computed once,
//! HMAC generation and constant-time verification.
//!
//! The HMAC text is: IPv6 source address || Last Entry || Flags || HMAC Key ID || every
//! Segment List entry (RFC 8754 §2.1.2.1). The 32-byte HMAC field carries the full
//! SHA-256 output, or the 20-byte SHA-1 output followed by zeros (as Linux does).

use hmac::{Hmac, Mac};
use sha1::Sha1;
use sha2::Sha256;
use subtle::ConstantTimeEq;

use crate::spec::HmacAlg;

/// Length of the HMAC field sr6 emits and accepts (RFC 8754 §2.1.2: a multiple of 8
/// up to 32; Linux uses 32, the largest).
pub const HMAC_FIELD_LEN: usize = sr6_wire::tlv::HMAC_MAX_LEN;
/// Length of the whole HMAC TLV: type, length, D/reserved, key id, HMAC.
pub const HMAC_TLV_LEN: usize = sr6_wire::HmacTlv::<&[u8]>::HEADER_LEN + HMAC_FIELD_LEN;
/// SRH flag bit the Linux kernel requires before it looks for an HMAC TLV
/// (`SR6_FLAG1_HMAC`, from the SRH draft RFC 8754 replaced; see conformance.md).
pub const SRH_FLAG_HMAC: u8 = sr6_wire::srh::FLAG_H;

/// A keyed HMAC state: the inner and outer pads are hashed once, at build time, and the
/// state is copied (not re-keyed) for each packet.
#[derive(Clone)]
pub enum HmacKey {
    Sha1(Hmac<Sha1>),
    Sha256(Hmac<Sha256>),
}

impl std::fmt::Debug for HmacKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            HmacKey::Sha1(_) => "HmacKey(sha1)",
            HmacKey::Sha256(_) => "HmacKey(sha256)",
        })
    }
}

impl HmacKey {
    pub fn new(alg: HmacAlg, secret: &[u8]) -> Self {
        // HMAC accepts keys of any length (RFC 2104 §2), so these cannot fail.
        match alg {
            HmacAlg::Sha1 => HmacKey::Sha1(
                <Hmac<Sha1> as Mac>::new_from_slice(secret)
                    .unwrap_or_else(|_| unreachable!("hmac takes any key length")),
            ),
            HmacAlg::Sha256 => HmacKey::Sha256(
                <Hmac<Sha256> as Mac>::new_from_slice(secret)
                    .unwrap_or_else(|_| unreachable!("hmac takes any key length")),
            ),
        }
    }

    /// HMAC over the RFC 8754 §2.1.2.1 text. `segments` is the raw Segment List
    /// (16 bytes per entry, header order).
    pub fn compute(
        &self,
        src: &[u8; 16],
        last_entry: u8,
        flags: u8,
        key_id: u32,
        segments: &[u8],
    ) -> [u8; HMAC_FIELD_LEN] {
        let mut out = [0u8; HMAC_FIELD_LEN];
        let mut head = [0u8; 22];
        head[..16].copy_from_slice(src);
        head[16] = last_entry;
        head[17] = flags;
        head[18..22].copy_from_slice(&key_id.to_be_bytes());
        match self {
            HmacKey::Sha1(k) => {
                let mut m = k.clone();
                m.update(&head);
                m.update(segments);
                out[..20].copy_from_slice(&m.finalize().into_bytes());
            }
            HmacKey::Sha256(k) => {
                let mut m = k.clone();
                m.update(&head);
                m.update(segments);
                out.copy_from_slice(&m.finalize().into_bytes());
            }
        }
        out
    }

    /// Constant-time comparison of a received HMAC field with the expected one.
    pub fn verify(&self, src: &[u8; 16], last_entry: u8, flags: u8, key_id: u32, segments: &[u8], got: &[u8]) -> bool {
        let want = self.compute(src, last_entry, flags, key_id, segments);
        got.len() == HMAC_FIELD_LEN && bool::from(want.ct_eq(got))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Known answer computed independently with Python's hmac module:
    // python3 -c "import hmac,hashlib;print(hmac.new(b'secret', bytes(16)+bytes([1,0])+(7).to_bytes(4,'big')+bytes(32), hashlib.sha256).hexdigest())"
    #[test]
    fn sha256_known_answer() {
        let k = HmacKey::new(HmacAlg::Sha256, b"secret");
        let out = k.compute(&[0; 16], 1, 0, 7, &[0; 32]);
        let hex: String = out.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(hex, KAT_SHA256);
        assert!(k.verify(&[0; 16], 1, 0, 7, &[0; 32], &out));
        let mut bad = out;
        bad[31] ^= 1;
        assert!(!k.verify(&[0; 16], 1, 0, 7, &[0; 32], &bad));
        assert!(!k.verify(&[0; 16], 1, 0, 7, &[0; 32], &out[..31]));
    }

    #[test]
    fn sha1_is_zero_padded() {
        let k = HmacKey::new(HmacAlg::Sha1, b"secret");
        let out = k.compute(&[0; 16], 1, 0, 7, &[0; 32]);
        assert_eq!(&out[20..], &[0u8; 12]);
        let hex: String = out[..20].iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(hex, KAT_SHA1);
    }

    const KAT_SHA256: &str = include_str!("../testdata/hmac_sha256.hex").trim_ascii();
    const KAT_SHA1: &str = include_str!("../testdata/hmac_sha1.hex").trim_ascii();
}
