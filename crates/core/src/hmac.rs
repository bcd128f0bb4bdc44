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
//!
//! A thread may also ask for the texts it verifies to be handed on ([`export_verified`],
//! [`drain_verified`]): each text hashed for a packet whose HMAC then matched, with the
//! key's id, as a [`Verified`]. `sr6 run`'s XDP tier keeps them in a map and forwards
//! a packet whose text and HMAC field equal one of them without hashing (docs/xdp.md).

use std::cell::{Cell, RefCell};
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

/// Verified texts a thread keeps for [`drain_verified`] at most (more are not kept:
/// they are found again when their next packet misses the XDP tier's map).
const EXPORT_MAX: usize = 64;

/// A text of at most 8 segments that sr6 hashed with a key and found equal to a
/// packet's HMAC field (RFC 8754 §2.1.2.1): source, Last Entry, Flags, Key ID, the
/// segments (`segments[..16 * (last_entry + 1)]`), and the HMAC field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verified {
    /// The key's [`HmacKey::uid`].
    pub key_uid: u64,
    pub key_id: u32,
    pub src: [u8; 16],
    pub last_entry: u8,
    pub flags: u8,
    pub segments: [u8; 128],
    pub mac: [u8; HMAC_FIELD_LEN],
}

/// One cached text and the HMAC field computed for it with key `uid` (0: empty).
struct Entry {
    uid: u64,
    len: usize,
    text: [u8; CACHE_TEXT],
    mac: [u8; HMAC_FIELD_LEN],
    /// Handed to [`drain_verified`] since it was taken.
    exported: bool,
}

thread_local! {
    static CACHE: RefCell<Vec<Entry>> = const { RefCell::new(Vec::new()) };
    /// `Some` while this thread hands its verified texts on.
    static EXPORT: RefCell<Option<Vec<Verified>>> = const { RefCell::new(None) };
    /// Whether `EXPORT` is `Some`: read per verified packet, so a thread that does not
    /// export builds no [`Verified`].
    static EXPORTING: Cell<bool> = const { Cell::new(false) };
}

/// From now on this thread keeps the texts it verifies by hashing for
/// [`drain_verified`] (`on`), or stops (and forgets those not drained).
pub fn export_verified(on: bool) {
    EXPORT.with(|e| {
        if let Ok(mut e) = e.try_borrow_mut() {
            *e = on.then(|| Vec::with_capacity(EXPORT_MAX));
            EXPORTING.with(|x| x.set(on));
        }
    });
}

/// Hands each text this thread verified since the last call to `f`, once.
pub fn drain_verified(mut f: impl FnMut(&Verified)) {
    EXPORT.with(|e| {
        if let Ok(mut e) = e.try_borrow_mut() {
            if let Some(v) = e.as_mut() {
                v.iter().for_each(&mut f);
                v.clear();
            }
        }
    });
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

    /// This key's id, unique to the [`new`](Self::new) that made it (never 0; clones
    /// share it): a text verified with one key is not taken for another's.
    pub fn uid(&self) -> u64 {
        self.uid
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
    /// one this thread computed last for the same text and key, or computed now. A
    /// text that matches for the first time since the cache took it is kept for
    /// [`drain_verified`] if this thread [exports](export_verified).
    pub fn verify(&self, src: &[u8; 16], last_entry: u8, flags: u8, key_id: u32, segments: &[u8], got: &[u8]) -> bool {
        let same = |want: &[u8; HMAC_FIELD_LEN]| got.len() == HMAC_FIELD_LEN && bool::from(want.ct_eq(got));
        let len = 22 + segments.len();
        if len > CACHE_TEXT {
            return same(&self.compute(src, last_entry, flags, key_id, segments));
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
                return same(&self.compute(src, last_entry, flags, key_id, segments));
            };
            if c.is_empty() {
                c.extend((0..CACHE_SLOTS).map(|_| Entry {
                    uid: 0,
                    len: 0,
                    text: [0; CACHE_TEXT],
                    mac: [0; 32],
                    exported: false,
                }));
            }
            let Some(e) = c.get_mut(slot) else {
                return same(&self.compute(src, last_entry, flags, key_id, segments));
            };
            if e.uid != self.uid || e.len != len || e.text[..len] != text[..len] {
                let mac = self.compute(src, last_entry, flags, key_id, segments);
                *e = Entry { uid: self.uid, len, text, mac, exported: false };
            }
            let ok = same(&e.mac);
            if ok && !e.exported && EXPORTING.with(Cell::get) && segments.len() == 16 * (usize::from(last_entry) + 1) {
                e.exported = export(Verified {
                    key_uid: self.uid,
                    key_id,
                    src: *src,
                    last_entry,
                    flags,
                    segments: {
                        let mut s = [0u8; 128];
                        s[..segments.len()].copy_from_slice(segments);
                        s
                    },
                    mac: e.mac,
                });
            }
            ok
        })
    }
}

/// Keeps `v` for [`drain_verified`] if this thread exports and has room.
fn export(v: Verified) -> bool {
    EXPORT.with(|e| {
        let Ok(mut e) = e.try_borrow_mut() else { return false };
        match e.as_mut() {
            Some(q) if q.len() < EXPORT_MAX => {
                q.push(v);
                true
            }
            _ => false,
        }
    })
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

    #[test]
    fn a_thread_that_exports_hands_on_what_it_verified_by_hashing() {
        let k = HmacKey::new(HmacAlg::Sha1, b"secret");
        let segs = [7u8; 32];
        let mac = k.compute(&[2; 16], 1, 0, 9, &segs);
        let drained = || {
            let mut v = Vec::new();
            drain_verified(|x| v.push(x.clone()));
            v
        };
        // Not exporting: nothing kept.
        assert!(k.verify(&[2; 16], 1, 0, 9, &segs, &mac));
        assert!(drained().is_empty());
        export_verified(true);
        // A text the cache holds is handed on at its first match since.
        assert!(k.verify(&[2; 16], 1, 0, 9, &segs, &mac));
        assert_eq!(drained().len(), 1);
        let k = HmacKey::new(HmacAlg::Sha1, b"secret");
        assert_ne!(k.uid(), 0);
        // A wrong HMAC: not kept; the right one after it: kept once.
        assert!(!k.verify(&[2; 16], 1, 0, 9, &segs, &[0; 32]));
        assert!(drained().is_empty());
        assert!(k.verify(&[2; 16], 1, 0, 9, &segs, &mac));
        assert!(k.verify(&[2; 16], 1, 0, 9, &segs, &mac));
        let v = drained();
        assert_eq!(v.len(), 1, "{v:?}");
        let mut want_segs = [0u8; 128];
        want_segs[..32].copy_from_slice(&segs);
        assert_eq!(
            v[0],
            Verified { key_uid: k.uid(), key_id: 9, src: [2; 16], last_entry: 1, flags: 0, segments: want_segs, mac }
        );
        assert!(drained().is_empty());
        // A Segment List that is not Last Entry's, or longer than 8 segments: not kept.
        let long = [3u8; 16 * 9];
        let m2 = k.compute(&[1; 16], 8, 0, 9, &long);
        assert!(k.verify(&[1; 16], 8, 0, 9, &long, &m2));
        let m3 = k.compute(&[1; 16], 0, 0, 9, &segs);
        assert!(k.verify(&[1; 16], 0, 0, 9, &segs, &m3));
        assert!(drained().is_empty());
        export_verified(false);
    }

    const KAT_SHA256: &str = include_str!("../testdata/hmac_sha256.hex").trim_ascii();
    const KAT_SHA1: &str = include_str!("../testdata/hmac_sha1.hex").trim_ascii();
}
