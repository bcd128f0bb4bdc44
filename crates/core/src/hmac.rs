//! SRH HMAC (RFC 8754 §2.1.2; Lebrun 2017 §2.4): keys with their pads computed once,
//! HMAC generation and constant-time verification.
//!
//! The HMAC text is: IPv6 source address || Last Entry || Flags || HMAC Key ID || every
//! Segment List entry (RFC 8754 §2.1.2.1). The 32-byte HMAC field carries the full
//! SHA-256 output, or the 20-byte SHA-1 output followed by zeros (as Linux does).
//!
//! The text does not cover the payload, so every packet of one SR policy from one
//! head-end carries the same HMAC: verification keeps, per thread, the HMACs it last
//! computed ([`HmacKey::verify`], a direct-mapped cache of [`CACHE_SLOTS`] texts), and
//! a packet whose text was seen is checked against the stored HMAC without hashing.
//! An entry is the HMAC sr6 computed with the key, never one a packet brought, and it
//! names the key by an id no other key ever gets, so a new key (a reload) misses.

use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};

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
pub struct HmacKey {
    state: State,
    /// Names this key in the verification cache: unique to the [`HmacKey::new`] that
    /// made it (clones share it, and the key).
    uid: u64,
}

#[derive(Clone)]
enum State {
    Sha1(Hmac<Sha1>),
    Sha256(Hmac<Sha256>),
}

impl std::fmt::Debug for HmacKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self.state {
            State::Sha1(_) => "HmacKey(sha1)",
            State::Sha256(_) => "HmacKey(sha256)",
        })
    }
}

/// Texts the verification cache keeps per thread (a power of two).
pub const CACHE_SLOTS: usize = 256;
/// The longest text the cache keeps: the fixed 22 bytes and 8 segments.
const CACHE_TEXT: usize = 22 + 8 * 16;

/// One cached text and the HMAC field computed for it with key `uid` (0: empty).
struct Entry {
    uid: u64,
    len: usize,
    text: [u8; CACHE_TEXT],
    mac: [u8; HMAC_FIELD_LEN],
}

thread_local! {
    static CACHE: RefCell<Vec<Entry>> = const { RefCell::new(Vec::new()) };
}

static NEXT_UID: AtomicU64 = AtomicU64::new(1);

/// The text's first 22 bytes (RFC 8754 §2.1.2.1): source address, Last Entry, Flags,
/// HMAC Key ID; the Segment List follows.
fn text_head(src: &[u8; 16], last_entry: u8, flags: u8, key_id: u32) -> [u8; 22] {
    let mut head = [0u8; 22];
    head[..16].copy_from_slice(src);
    head[16] = last_entry;
    head[17] = flags;
    head[18..22].copy_from_slice(&key_id.to_be_bytes());
    head
}

impl HmacKey {
    pub fn new(alg: HmacAlg, secret: &[u8]) -> Self {
        // HMAC accepts keys of any length (RFC 2104 §2), so these cannot fail.
        let state = match alg {
            HmacAlg::Sha1 => State::Sha1(
                <Hmac<Sha1> as Mac>::new_from_slice(secret)
                    .unwrap_or_else(|_| unreachable!("hmac takes any key length")),
            ),
            HmacAlg::Sha256 => State::Sha256(
                <Hmac<Sha256> as Mac>::new_from_slice(secret)
                    .unwrap_or_else(|_| unreachable!("hmac takes any key length")),
            ),
        };
        HmacKey { state, uid: NEXT_UID.fetch_add(1, Ordering::Relaxed) }
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
        let head = text_head(src, last_entry, flags, key_id);
        match &self.state {
            State::Sha1(k) => {
                let mut m = k.clone();
                m.update(&head);
                m.update(segments);
                out[..20].copy_from_slice(&m.finalize().into_bytes());
            }
            State::Sha256(k) => {
                let mut m = k.clone();
                m.update(&head);
                m.update(segments);
                out.copy_from_slice(&m.finalize().into_bytes());
            }
        }
        out
    }

    /// Constant-time comparison of a received HMAC field with the expected one: the
    /// one this thread computed last for the same text and key, or computed now.
    pub fn verify(&self, src: &[u8; 16], last_entry: u8, flags: u8, key_id: u32, segments: &[u8], got: &[u8]) -> bool {
        let want = self.expected(src, last_entry, flags, key_id, segments);
        got.len() == HMAC_FIELD_LEN && bool::from(want.ct_eq(got))
    }

    /// [`compute`](Self::compute) through this thread's cache.
    fn expected(
        &self,
        src: &[u8; 16],
        last_entry: u8,
        flags: u8,
        key_id: u32,
        segments: &[u8],
    ) -> [u8; HMAC_FIELD_LEN] {
        let len = 22 + segments.len();
        if len > CACHE_TEXT {
            return self.compute(src, last_entry, flags, key_id, segments);
        }
        let mut text = [0u8; CACHE_TEXT];
        text[..22].copy_from_slice(&text_head(src, last_entry, flags, key_id));
        text[22..len].copy_from_slice(segments);
        // The slot, by the text alone (a key's successor finds the old entry and misses
        // on the id): the source's and the last 8 bytes, the key id, mixed.
        let word = |at: usize| u64::from_le_bytes(text[at..at + 8].try_into().unwrap_or_default());
        let h = (word(8) ^ word(len - 8).rotate_left(29) ^ u64::from(key_id) << 32 ^ (len as u64) << 56)
            .wrapping_mul(0x9e37_79b9_7f4a_7c15);
        let slot = (h >> 56) as usize % CACHE_SLOTS;
        CACHE.with(|c| {
            let Ok(mut c) = c.try_borrow_mut() else {
                return self.compute(src, last_entry, flags, key_id, segments);
            };
            if c.is_empty() {
                c.extend((0..CACHE_SLOTS).map(|_| Entry { uid: 0, len: 0, text: [0; CACHE_TEXT], mac: [0; 32] }));
            }
            let Some(e) = c.get_mut(slot) else {
                return self.compute(src, last_entry, flags, key_id, segments);
            };
            if e.uid == self.uid && e.len == len && e.text[..len] == text[..len] {
                return e.mac;
            }
            let mac = self.compute(src, last_entry, flags, key_id, segments);
            *e = Entry { uid: self.uid, len, text, mac };
            mac
        })
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

    #[test]
    fn the_cache_answers_what_hashing_would() {
        let k = HmacKey::new(HmacAlg::Sha256, b"secret");
        let segs: Vec<[u8; 32]> = (0..200u8).map(|i| [i; 32]).collect();
        // Twice over many texts (more than the slots: evictions), the second time from
        // the cache where it kept them: the same answers.
        for _ in 0..2 {
            for s in &segs {
                let mac = k.compute(&[s[0]; 16], 1, 0, 7, s);
                assert!(k.verify(&[s[0]; 16], 1, 0, 7, s, &mac));
                let mut bad = mac;
                bad[0] ^= 0x80;
                assert!(!k.verify(&[s[0]; 16], 1, 0, 7, s, &bad));
                // Another flag, key id or last entry is another text.
                assert!(!k.verify(&[s[0]; 16], 1, 8, 7, s, &mac));
                assert!(!k.verify(&[s[0]; 16], 1, 0, 8, s, &mac));
                assert!(!k.verify(&[s[0]; 16], 0, 0, 7, s, &mac));
            }
        }
        // The known answer, from the cache.
        let out = k.compute(&[0; 16], 1, 0, 7, &[0; 32]);
        assert!(k.verify(&[0; 16], 1, 0, 7, &[0; 32], &out));
        assert!(k.verify(&[0; 16], 1, 0, 7, &[0; 32], &out));
        // A new key with another secret does not take the old key's entries, though
        // the text is the same; a clone of a key shares them.
        let k2 = HmacKey::new(HmacAlg::Sha256, b"other");
        assert!(!k2.verify(&[0; 16], 1, 0, 7, &[0; 32], &out));
        assert!(k.clone().verify(&[0; 16], 1, 0, 7, &[0; 32], &out));
        // Texts longer than the cache keeps are hashed every time.
        let long = [3u8; 16 * 12];
        let mac = k.compute(&[1; 16], 11, 0, 7, &long);
        assert!(k.verify(&[1; 16], 11, 0, 7, &long, &mac) && k.verify(&[1; 16], 11, 0, 7, &long, &mac));
        assert!(!k.verify(&[1; 16], 11, 0, 7, &long, &[0; 32]));
    }

    const KAT_SHA256: &str = include_str!("../testdata/hmac_sha256.hex").trim_ascii();
    const KAT_SHA1: &str = include_str!("../testdata/hmac_sha1.hex").trim_ascii();
}
