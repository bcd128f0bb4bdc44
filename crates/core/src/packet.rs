//! Packet buffers with headroom.
//!
//! A [`PacketBuf`] owns one fixed-size buffer allocated once and reused for every packet
//! it ever carries. The frame is the `len` bytes from `start`, with [`HEADROOM`] bytes free in front
//! when it is loaded, so pushing an outer IPv6 header + SRH (RFC 8986 §5.1) is a move of
//! `start` and a header write: the payload is never copied.

/// Bytes kept free in front of a received frame: an Ethernet header with one VLAN tag
/// (18) + outer IPv6 (40) + an SRH with 16 segments (8 + 256) + an HMAC TLV (40) = 362.
pub const HEADROOM: usize = 384;
/// Largest frame a buffer carries (jumbo frames included).
pub const MAX_FRAME: usize = 9216;
/// Total size of a buffer.
pub const BUF_LEN: usize = HEADROOM + MAX_FRAME;
// A frame's start and length are kept in 16 bits.
const _: () = assert!(BUF_LEN <= u16::MAX as usize);

/// Copies `s` to `d` (the first `K` bytes; `d` is `K` long), 32 bytes at a time through
/// registers (two 16-byte moves each, one where the caller is compiled with AVX), then
/// 16, then the bytes left: LLVM keeps these as inline moves, where a plain block copy
/// would become a call to `memcpy`.
#[inline(always)]
pub(crate) fn copy_block<const K: usize>(d: &mut [u8], s: &[u8; K]) {
    let whole = K / 32 * 32;
    let (d, d_rest) = d.split_at_mut(whole.min(d.len()));
    let (s, s_rest) = s.split_at(whole);
    for (d, s) in d.chunks_exact_mut(32).zip(s.chunks_exact(32)) {
        let v: [u8; 32] = s.try_into().unwrap_or([0; 32]);
        d.copy_from_slice(&v);
    }
    for (d, s) in d_rest.chunks_exact_mut(16).zip(s_rest.chunks_exact(16)) {
        let v = u128::from_ne_bytes(s.try_into().unwrap_or_default());
        d.copy_from_slice(&v.to_ne_bytes());
    }
    for (d, s) in d_rest.chunks_exact_mut(16).into_remainder().iter_mut().zip(s_rest.chunks_exact(16).remainder()) {
        *d = *s;
    }
}

/// Identifies a device: its index in [`crate::tables::Tables::devices`].
pub type DevId = u16;

/// Where the pipeline sends a packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Not yet decided (fresh from the receive path).
    Pending,
    /// Transmit the frame out of this device.
    Tx(DevId),
    /// For the host itself (unchanged frame).
    Local,
    /// Dropped, with the reason.
    Drop(crate::drop::DropReason),
    /// Ready to leave by this device, but the next hop's link-layer address is not known
    /// yet: the buffer holds the L3 packet (no Ethernet header) and
    /// [`PacketBuf::nh_key`] the neighbour to resolve. Only produced when the tables ask
    /// for run-time resolution ([`crate::tables::Tables::resolve_neighbours`]); offline,
    /// a missing neighbour is a drop.
    Resolve(DevId),
    /// Not sent itself: replaced by its IPv4 fragments, which the worker holds
    /// ([`crate::pipeline::extra::ExtraFrames`]), each with its own verdict.
    Fragmented,
}

/// One packet buffer. See the module docs.
pub struct PacketBuf {
    /// Fixed size, so accesses at constant offsets (the receive copy) need no check.
    buf: Box<[u8; BUF_LEN]>,
    /// Where the frame starts in `buf` and its length ([`Span`]).
    span: Span,
    /// The device the frame was received on: set by [`load`](Self::load), and by
    /// [`Worker::process_batch`](crate::pipeline::Worker::process_batch) (to the batch's
    /// device) before the general path reads it.
    pub in_dev: DevId,
    /// What the pipeline decided.
    pub verdict: Verdict,
    /// Receive timestamp in nanoseconds (pcap time offline, clock time live).
    pub ts_ns: u64,
    /// With [`Verdict::Resolve`]: the neighbour to resolve, as
    /// [`crate::tables::neigh_key`] makes it (IPv4 as IPv4-mapped IPv6).
    pub nh_key: u128,
    /// Where in the buffer the packet an encapsulation (H.Encaps, End.B6.Encaps) carries
    /// starts, set when the outer headers are pushed: if the result is too big for its
    /// egress device, the ICMP error is about that packet, to its source (RFC 2473
    /// §7.1). 0 (a start no frame has) when nothing was encapsulated; the general path
    /// clears it for each frame.
    pub inner_at: u16,
}

impl Default for PacketBuf {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for PacketBuf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PacketBuf")
            .field("len", &self.len())
            .field("headroom", &self.headroom())
            .field("in_dev", &self.in_dev)
            .field("verdict", &self.verdict)
            .finish()
    }
}

impl PacketBuf {
    /// Allocates one buffer (the only allocation a buffer ever makes).
    pub fn new() -> Self {
        PacketBuf {
            // Allocated on the heap directly (a `Box::new` of the array could go through
            // the stack); the length is right by construction.
            buf: vec![0u8; BUF_LEN].into_boxed_slice().try_into().unwrap_or_else(|_| Box::new([0; BUF_LEN])),
            span: Span::new(HEADROOM, 0),
            in_dev: 0,
            verdict: Verdict::Pending,
            ts_ns: 0,
            nh_key: 0,
            inner_at: 0,
        }
    }

    /// Loads a received frame after the headroom. Frames longer than [`MAX_FRAME`] are
    /// truncated to it and `false` is returned (the caller counts the drop).
    pub fn load(&mut self, frame: &[u8], in_dev: DevId) -> bool {
        let n = frame.len().min(MAX_FRAME);
        self.buf[HEADROOM..HEADROOM + n].copy_from_slice(&frame[..n]);
        self.span = Span::new(HEADROOM, n);
        self.in_dev = in_dev;
        self.verdict = Verdict::Pending;
        n == frame.len()
    }

    /// [`load`](Self::load) of a frame stored as a [`Block`]: the copy is the whole block
    /// in inline moves (no call to `memcpy`, no tail handling), and the frame's start and
    /// length were worked out when the block was made. `in_dev` is left as it was: a
    /// batch's device is [`Worker::process_batch`](crate::pipeline::Worker::process_batch)'s
    /// to know.
    #[inline(always)]
    pub fn load_block<const K: usize>(&mut self, block: &Block<K>) {
        if let Some(d) = self.buf.get_mut(HEADROOM..HEADROOM + K) {
            copy_block(d, &block.bytes);
        } else {
            let n = block.span.len().min(K);
            self.buf[HEADROOM..HEADROOM + n].copy_from_slice(&block.bytes[..n]);
        }
        self.span = block.span;
        self.verdict = Verdict::Pending;
    }

    /// The current frame.
    #[inline]
    pub fn data(&self) -> &[u8] {
        &self.buf[self.span.start()..self.end()]
    }

    /// The current frame, mutable.
    #[inline]
    pub fn data_mut(&mut self) -> &mut [u8] {
        let (start, end) = (self.span.start(), self.end());
        &mut self.buf[start..end]
    }

    /// The current frame, mutable, and its [`Front`], with which bytes can be removed at
    /// the front afterwards: a rewrite that decapsulates writes the new headers in the
    /// frame first, then moves its start, without a second look at the buffer.
    #[inline(always)]
    pub fn data_and_front(&mut self) -> (&mut [u8], Front<'_>) {
        let (start, end) = (self.span.start(), self.end());
        (&mut self.buf[start..end], Front { span: &mut self.span, len: end - start })
    }

    /// Where the frame ends in the buffer.
    #[inline(always)]
    fn end(&self) -> usize {
        self.span.start() + self.span.len()
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.span.len()
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.span.len() == 0
    }

    /// Free bytes in front of the frame.
    #[inline]
    pub fn headroom(&self) -> usize {
        self.span.start()
    }

    /// Grows the frame at the front by `n` bytes (contents unspecified); `false` if the
    /// headroom is too small (nothing changes).
    #[inline]
    #[must_use]
    pub fn push_front(&mut self, n: usize) -> bool {
        if n > self.headroom() {
            return false;
        }
        self.span.advance(0usize.wrapping_sub(n));
        true
    }

    /// Replaces the first `at` bytes of the frame with the last `n` bytes of `block`
    /// (the frame grows by `n - at`, or shrinks). The whole block is written, with
    /// inline 16-byte moves: its first `K - n` bytes land in the headroom, whose content
    /// is unspecified anyway. `false` (nothing changes) if `n > K`, `at` exceeds the
    /// frame, or the headroom cannot take the block.
    #[inline(always)]
    #[must_use]
    pub fn put_front<const K: usize>(&mut self, block: &[u8; K], n: usize, at: usize) -> bool {
        let end = self.headroom() + at;
        if n > K || at > self.len() || end < K {
            return false;
        }
        let Some(d) = self.buf.get_mut(end - K..end) else { return false };
        copy_block(d, block);
        self.span.advance(at.wrapping_sub(n));
        true
    }

    /// The `K` bytes of the buffer that end `at` bytes into the frame (the first `K - at`
    /// of them in the headroom), for the caller to rewrite; the frame then starts `n`
    /// bytes before offset `at`. One check of the range for all the rewrite's accesses:
    /// with `K` a constant, every field of the view is at a constant offset. `None`
    /// (nothing changes) if `n > K`, `at` exceeds the frame or the headroom is short.
    #[inline(always)]
    pub fn rewrite_front<const K: usize>(&mut self, at: usize, n: usize) -> Option<&mut [u8; K]> {
        let end = self.headroom() + at;
        let begin = end.checked_sub(K)?;
        if n > K || at > self.len() || end > BUF_LEN {
            return None;
        }
        self.span.advance(at.wrapping_sub(n));
        self.buf.get_mut(begin..)?.first_chunk_mut::<K>()
    }

    /// Removes `n` bytes at the front; `false` if the frame is shorter (nothing changes).
    #[inline]
    #[must_use]
    pub fn pull_front(&mut self, n: usize) -> bool {
        if n > self.len() {
            return false;
        }
        self.span.advance(n);
        true
    }

    /// Condemns the frame before processing (e.g. it was too big for the buffer): the
    /// verdict is the drop, and the frame is emptied, so that no fast path, which looks
    /// at frames and not at verdicts, takes it; the general path counts the drop.
    pub fn condemn(&mut self, reason: crate::drop::DropReason) {
        self.verdict = Verdict::Drop(reason);
        self.span = Span::new(self.span.start(), 0);
    }

    /// Shortens the frame to `len` bytes (no-op if already shorter).
    #[inline]
    pub fn truncate(&mut self, len: usize) {
        if len < self.len() {
            self.span = Span::new(self.span.start(), len);
        }
    }

    /// Moves the first `n` bytes of the frame `by` bytes towards the front, opening a gap
    /// of `by` bytes after them (used to insert an SRH after the IPv6 header: only the
    /// header moves). `false` if `n > len` or the headroom is short.
    #[inline]
    #[must_use]
    pub fn open_gap(&mut self, n: usize, by: usize) -> bool {
        if n > self.len() || by > self.headroom() {
            return false;
        }
        let s = self.headroom();
        self.buf.copy_within(s..s + n, s - by);
        self.span.advance(0usize.wrapping_sub(by));
        true
    }

    /// The reverse of [`open_gap`](Self::open_gap): removes `by` bytes at offset `n`
    /// by moving the first `n` bytes forward.
    #[inline]
    #[must_use]
    pub fn close_gap(&mut self, n: usize, by: usize) -> bool {
        if n + by > self.len() {
            return false;
        }
        let s = self.headroom();
        self.buf.copy_within(s..s + n, s + by);
        self.span.advance(by);
        true
    }
}

/// A frame kept for a fast receive copy ([`PacketBuf::load_block`]): zero-padded to `K`
/// bytes, with the start and length it has once loaded.
#[derive(Clone)]
pub struct Block<const K: usize> {
    bytes: [u8; K],
    span: Span,
}

impl<const K: usize> Block<K> {
    /// `frame` as a block; `None` if it is longer than `K` or [`MAX_FRAME`].
    pub fn new(frame: &[u8]) -> Option<Block<K>> {
        if frame.len() > K || frame.len() > MAX_FRAME {
            return None;
        }
        let mut bytes = [0u8; K];
        bytes[..frame.len()].copy_from_slice(frame);
        Some(Block { bytes, span: Span::new(HEADROOM, frame.len()) })
    }

    /// The frame's length.
    pub fn len(&self) -> usize {
        self.span.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Where a frame starts in its buffer and how long it is: two 16-bit numbers (a buffer
/// is shorter than 64 KiB: `start + len` cannot wrap, so the view of the frame needs one
/// check, of its end) in native byte order, start first, kept as four bytes. Reading
/// one is a 16-bit load; moving the start ([`advance`](Self::advance): a pull, a push)
/// is one 32-bit add to memory, which the compiler cannot rewrite into arithmetic on
/// the halves it read for the frame's view and kept in registers.
#[derive(Clone, Copy)]
struct Span([u8; 4]);

impl Span {
    /// The values of a start and of a length in the four bytes read as one native
    /// `u32`.
    const START_UNIT: u32 = Span::word(1, 0);
    const LEN_UNIT: u32 = Span::word(0, 1);

    const fn word(start: u16, len: u16) -> u32 {
        let (s, l) = (start.to_ne_bytes(), len.to_ne_bytes());
        u32::from_ne_bytes([s[0], s[1], l[0], l[1]])
    }

    /// `start` and `len` (each under 64 KiB: every caller passes positions in a buffer).
    #[inline(always)]
    fn new(start: usize, len: usize) -> Span {
        debug_assert!(start + len <= BUF_LEN);
        let (s, l) = ((start as u16).to_ne_bytes(), (len as u16).to_ne_bytes());
        Span([s[0], s[1], l[0], l[1]])
    }

    #[inline(always)]
    fn start(&self) -> usize {
        usize::from(u16::from_ne_bytes([self.0[0], self.0[1]]))
    }

    #[inline(always)]
    fn len(&self) -> usize {
        usize::from(u16::from_ne_bytes([self.0[2], self.0[3]]))
    }

    /// Moves the start `d` bytes towards the end of the frame and shortens the frame by
    /// as much (`d` wrapping: a "negative" one grows it at the front). The caller has
    /// checked that both stay in range, so the two 16-bit fields, read together as one
    /// integer, change by exactly `d * (START_UNIT - LEN_UNIT)`, with no carry or borrow
    /// left over: the sum modulo 2^32 is the new pair.
    #[inline(always)]
    fn advance(&mut self, d: usize) {
        let k = (d as u32).wrapping_mul(Span::START_UNIT.wrapping_sub(Span::LEN_UNIT));
        self.0 = u32::from_ne_bytes(self.0).wrapping_add(k).to_ne_bytes();
        debug_assert!(self.start() + self.len() <= BUF_LEN);
    }
}

/// The start of a [`PacketBuf`]'s frame, apart from its bytes
/// ([`PacketBuf::data_and_front`]).
pub struct Front<'a> {
    span: &'a mut Span,
    /// The frame's length, as when the `Front` was made (it cannot change while the
    /// `Front` lives): checks against it reuse the value the frame's view was made of.
    len: usize,
}

impl Front<'_> {
    /// [`PacketBuf::pull_front`].
    #[inline(always)]
    #[must_use]
    pub fn pull(self, n: usize) -> bool {
        if n > self.len {
            return false;
        }
        // Both stay within the buffer: n <= len.
        self.span.advance(n);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn push_and_pull_keep_payload_in_place() {
        let mut p = PacketBuf::new();
        assert!(p.load(&[1, 2, 3, 4], 3));
        assert_eq!(p.in_dev, 3);
        assert!(p.push_front(2));
        p.data_mut()[..2].copy_from_slice(&[9, 9]);
        assert_eq!(p.data(), &[9, 9, 1, 2, 3, 4]);
        assert!(p.pull_front(3));
        assert_eq!(p.data(), &[2, 3, 4]);
        assert!(!p.pull_front(4));
        assert!(!p.push_front(BUF_LEN));
        // The same through the frame's Front, after a write.
        let (f, front) = p.data_and_front();
        f[1] = 7;
        assert!(front.pull(1));
        assert_eq!(p.data(), &[7, 4]);
        let (_, front) = p.data_and_front();
        assert!(!front.pull(3));
        assert_eq!((p.data(), p.headroom()), (&[7, 4][..], HEADROOM + 2));
    }

    #[test]
    fn gaps_move_only_the_head() {
        let mut p = PacketBuf::new();
        assert!(p.load(&[1, 2, 3, 4, 5], 0));
        assert!(p.open_gap(2, 3));
        assert_eq!(p.len(), 8);
        assert_eq!(&p.data()[..2], &[1, 2]);
        assert_eq!(&p.data()[5..], &[3, 4, 5]);
        assert!(p.close_gap(2, 3));
        assert_eq!(p.data(), &[1, 2, 3, 4, 5]);
        assert!(!p.close_gap(4, 3));
    }

    #[test]
    fn block_load() {
        let mut p = PacketBuf::new();
        for len in [0usize, 1, 63, 64, 65, 70, 128] {
            let g: Vec<u8> = (0..len).map(|i| (i * 7 + 1) as u8).collect();
            p.in_dev = 4;
            p.load_block(&Block::<128>::new(&g).unwrap());
            assert_eq!(p.data(), &g[..]);
            assert_eq!(p.in_dev, 4, "left as it was");
            assert_eq!(p.headroom(), HEADROOM);
            let b = Block::<135>::new(&g).unwrap();
            assert_eq!(b.len(), len);
            p.load_block(&b);
            assert_eq!(p.data(), &g[..]);
        }
        assert!(Block::<64>::new(&[1u8; 65]).is_none());
        assert!(Block::<{ MAX_FRAME + 1 }>::new(&[9u8; MAX_FRAME + 1]).is_none());
    }

    #[test]
    fn put_front_writes_the_block_end() {
        let mut p = PacketBuf::new();
        assert!(p.load(&[1, 2, 3, 4, 5, 6], 0));
        let mut b = [0xeeu8; 32];
        b[29..].copy_from_slice(&[7, 8, 9]);
        // Replace the first 2 bytes with 3.
        assert!(p.put_front(&b, 3, 2));
        assert_eq!(p.data(), &[7, 8, 9, 3, 4, 5, 6]);
        // Shrink: replace 4 bytes with 1.
        assert!(p.put_front(&b, 1, 4));
        assert_eq!(p.data(), &[9, 4, 5, 6]);
        assert!(!p.put_front(&b, 33, 0));
        assert!(!p.put_front(&b, 1, 5));
        assert!(p.push_front(p.headroom()));
        assert!(!p.put_front(&b, 3, 0), "no headroom for the block");
    }

    #[test]
    fn rewrite_front_views_the_bytes_before_an_offset() {
        let mut p = PacketBuf::new();
        assert!(p.load(&[1, 2, 3, 4, 5, 6], 0));
        // The 8 bytes ending 2 bytes into the frame; the frame then starts 3 bytes
        // before that offset.
        let d = p.rewrite_front::<8>(2, 3).unwrap();
        assert_eq!(&d[6..], &[1, 2]);
        d[5..].copy_from_slice(&[7, 8, 9]);
        assert_eq!(p.data(), &[7, 8, 9, 3, 4, 5, 6]);
        assert_eq!(p.headroom(), HEADROOM - 1);
        // Refused, nothing changed: n > K, `at` beyond the frame, headroom too short.
        assert!(p.rewrite_front::<8>(2, 9).is_none());
        assert!(p.rewrite_front::<8>(8, 1).is_none());
        assert!(p.push_front(p.headroom()));
        assert!(p.rewrite_front::<8>(2, 3).is_none());
        assert_eq!(p.len(), 7 + HEADROOM - 1);
        assert_eq!(&p.data()[HEADROOM - 1..], &[7, 8, 9, 3, 4, 5, 6]);
    }

    #[test]
    fn oversized_frames_are_reported() {
        let mut p = PacketBuf::new();
        let big = vec![0u8; MAX_FRAME + 1];
        assert!(!p.load(&big, 0));
        assert_eq!(p.len(), MAX_FRAME);
    }
}
