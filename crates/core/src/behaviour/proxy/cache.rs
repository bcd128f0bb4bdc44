//! The End.AD / End.EAD* cache (draft-ietf-spring-sr-service-programming §6.2: "the
//! cache entry associated with IFACE-IN"): the outer IPv6 header and its extension
//! headers of the last packet sent to the function, shared by every worker and read
//! without a lock on the per-packet path.
//!
//! A sequence lock over atomic words (no `unsafe`: the crate forbids it): the headers
//! live in [`WORDS`] `AtomicU64`s, with their length in one more, all read and written
//! with relaxed loads and stores, ordered by a sequence number that is odd while a writer
//! is at work. A reader copies the words and retries if the sequence moved meanwhile
//! (at most [`READ_TRIES`] times: then the packet is dropped, `proxy_cache_busy`). A
//! writer takes the lock by moving the sequence from even to odd with one
//! compare-and-swap; if another writer holds it, the update is skipped (it is a learning
//! cache: the next packet tries again). A writer first compares: an entry that already
//! holds the same bytes is not rewritten, so the steady state is reads only.

use std::sync::atomic::{fence, AtomicU64, Ordering};

/// The most header bytes an entry holds: a buffer's headroom in front of a received
/// IPv6 packet (`packet::HEADROOM` + the 14 bytes of its Ethernet header, less the 14
/// of the Ethernet header it leaves with), so whatever is cached can be restored.
pub const MAX_LEN: usize = crate::packet::HEADROOM;
/// 64-bit words of an entry.
pub const WORDS: usize = MAX_LEN / 8;
/// Reads of an entry that a writer keeps changing before the reader gives up.
pub const READ_TRIES: usize = 64;

/// The length word of "end of chain" (End.EAD4/End.EAD6 at Segments Left 0): packets
/// returning from the function leave as plain IP.
const END_OF_CHAIN: u64 = u64::MAX;

/// What an entry holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Entry {
    /// Nothing learned yet.
    Empty,
    /// The function was the chain's last segment (End.EAD*).
    EndOfChain,
    /// Headers of this many bytes (in the buffer the reader gave).
    Headers(usize),
}

/// The outcome of [`Cache::store`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stored {
    /// The entry already held these bytes.
    Same,
    /// The entry was rewritten.
    Updated,
    /// Another writer held the entry: left as it was.
    Skipped,
    /// More than [`MAX_LEN`] bytes: left as it was.
    TooLong,
}

/// One cache entry.
pub struct Cache {
    seq: AtomicU64,
    len: AtomicU64,
    words: [AtomicU64; WORDS],
}

impl Default for Cache {
    fn default() -> Self {
        Cache { seq: AtomicU64::new(0), len: AtomicU64::new(0), words: std::array::from_fn(|_| AtomicU64::new(0)) }
    }
}

impl std::fmt::Debug for Cache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut b = [0u8; MAX_LEN];
        f.debug_struct("Cache").field("entry", &self.read(&mut b)).finish()
    }
}

/// The number of the length word of an entry of `e`.
fn len_word(e: &Entry) -> u64 {
    match e {
        Entry::Empty => 0,
        Entry::EndOfChain => END_OF_CHAIN,
        Entry::Headers(n) => *n as u64,
    }
}

impl Cache {
    /// Copies the entry into `out`; `None` when writers kept changing it for
    /// [`READ_TRIES`] reads.
    pub fn read(&self, out: &mut [u8; MAX_LEN]) -> Option<Entry> {
        for _ in 0..READ_TRIES {
            let s = self.seq.load(Ordering::Acquire);
            if s & 1 == 1 {
                std::hint::spin_loop();
                continue;
            }
            let len = self.len.load(Ordering::Relaxed);
            let entry = match len {
                0 => Entry::Empty,
                END_OF_CHAIN => Entry::EndOfChain,
                n => Entry::Headers((n as usize).min(MAX_LEN)),
            };
            if let Entry::Headers(n) = entry {
                for (w, chunk) in self.words.iter().zip(out.chunks_exact_mut(8)).take(n.div_ceil(8)) {
                    chunk.copy_from_slice(&w.load(Ordering::Relaxed).to_ne_bytes());
                }
            }
            // Every load above happens before the sequence is read again.
            fence(Ordering::Acquire);
            if self.seq.load(Ordering::Relaxed) == s {
                return Some(entry);
            }
        }
        None
    }

    /// Whether the entry holds exactly `e` with bytes `h` (for [`Entry::Headers`]),
    /// read consistently; `false` when it cannot be read.
    fn holds(&self, e: &Entry, h: &[u8]) -> bool {
        let mut b = [0u8; MAX_LEN];
        match self.read(&mut b) {
            Some(Entry::Headers(n)) => matches!(e, Entry::Headers(_)) && b.get(..n) == Some(h),
            Some(x) => x == *e,
            None => false,
        }
    }

    /// Stores headers `h` (RFC 8754 / the draft's "store the IPv6 header and all its
    /// extension headers"), unless the entry already holds them.
    pub fn store(&self, h: &[u8]) -> Stored {
        if h.len() > MAX_LEN {
            return Stored::TooLong;
        }
        if h.is_empty() {
            return Stored::Skipped;
        }
        self.put(Entry::Headers(h.len()), h)
    }

    /// Marks the entry "end of chain", unless it is already.
    pub fn store_end_of_chain(&self) -> Stored {
        self.put(Entry::EndOfChain, &[])
    }

    /// Empties the entry (for tests and a reset).
    pub fn clear(&self) -> Stored {
        self.put(Entry::Empty, &[])
    }

    fn put(&self, e: Entry, h: &[u8]) -> Stored {
        if self.holds(&e, h) {
            return Stored::Same;
        }
        let s = self.seq.load(Ordering::Relaxed);
        if s & 1 == 1 || self.seq.compare_exchange(s, s + 1, Ordering::Relaxed, Ordering::Relaxed).is_err() {
            return Stored::Skipped;
        }
        // The odd sequence is visible before any word changes.
        fence(Ordering::Release);
        for (w, chunk) in self.words.iter().zip(h.chunks(8)) {
            let mut v = [0u8; 8];
            v.iter_mut().zip(chunk).for_each(|(d, s)| *d = *s);
            w.store(u64::from_ne_bytes(v), Ordering::Relaxed);
        }
        self.len.store(len_word(&e), Ordering::Relaxed);
        // Every word written before the sequence is even again.
        self.seq.store(s + 2, Ordering::Release);
        Stored::Updated
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn entry(c: &Cache) -> (Entry, Vec<u8>) {
        let mut b = [0u8; MAX_LEN];
        let e = c.read(&mut b).unwrap();
        let n = if let Entry::Headers(n) = e { n } else { 0 };
        (e, b[..n].to_vec())
    }

    #[test]
    fn starts_empty_then_stores_compares_and_replaces() {
        let c = Cache::default();
        assert_eq!(entry(&c), (Entry::Empty, vec![]));
        let h: Vec<u8> = (0..61).collect();
        assert_eq!(c.store(&h), Stored::Updated);
        assert_eq!(entry(&c), (Entry::Headers(61), h.clone()));
        assert_eq!(c.store(&h), Stored::Same);
        let mut h2 = h.clone();
        h2[60] = 0xff;
        assert_eq!(c.store(&h2), Stored::Updated);
        assert_eq!(entry(&c).1, h2);
        // A shorter entry over a longer one: only its own bytes are read back.
        assert_eq!(c.store(&h[..40]), Stored::Updated);
        assert_eq!(entry(&c), (Entry::Headers(40), h[..40].to_vec()));
        assert_eq!(c.store_end_of_chain(), Stored::Updated);
        assert_eq!(entry(&c), (Entry::EndOfChain, vec![]));
        assert_eq!(c.store_end_of_chain(), Stored::Same);
        assert_eq!(c.clear(), Stored::Updated);
        assert_eq!(entry(&c).0, Entry::Empty);
    }

    #[test]
    fn too_long_is_refused_and_the_longest_fits() {
        let c = Cache::default();
        assert_eq!(c.store(&[1; MAX_LEN + 1]), Stored::TooLong);
        assert_eq!(entry(&c).0, Entry::Empty);
        assert_eq!(c.store(&[7; MAX_LEN]), Stored::Updated);
        assert_eq!(entry(&c), (Entry::Headers(MAX_LEN), vec![7; MAX_LEN]));
    }

    #[test]
    fn a_held_lock_skips_writers_and_keeps_readers_out() {
        let c = Cache::default();
        c.store(&[1; 48]);
        c.seq.fetch_add(1, Ordering::Relaxed); // a writer at work
        assert_eq!(c.store(&[2; 48]), Stored::Skipped);
        let mut b = [0u8; MAX_LEN];
        assert_eq!(c.read(&mut b), None);
        c.seq.fetch_add(1, Ordering::Relaxed);
        assert_eq!(entry(&c), (Entry::Headers(48), vec![1; 48]));
    }

    /// Readers racing writers never see a torn entry: every entry written is 48 bytes of
    /// one value, so a read mixing two writes would show two values.
    #[test]
    fn readers_never_see_a_torn_entry() {
        let c = Arc::new(Cache::default());
        c.store(&[1; 48]);
        let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let writers: Vec<_> = (0..2u8)
            .map(|k| {
                let c = c.clone();
                std::thread::spawn(move || {
                    for i in 0..20_000u32 {
                        c.store(&[(i as u8) ^ (k * 0x80) | 1; 48]);
                    }
                })
            })
            .collect();
        let reader = {
            let (c, done) = (c.clone(), done.clone());
            std::thread::spawn(move || {
                let mut b = [0u8; MAX_LEN];
                let mut reads = 0u64;
                while !done.load(Ordering::Relaxed) || reads == 0 {
                    if let Some(e) = c.read(&mut b) {
                        assert_eq!(e, Entry::Headers(48));
                        assert!(b[..48].iter().all(|x| *x == b[0]), "torn: {:?}", &b[..48]);
                        reads += 1;
                    }
                }
            })
        };
        for w in writers {
            w.join().unwrap();
        }
        done.store(true, Ordering::Relaxed);
        reader.join().unwrap();
    }
}
