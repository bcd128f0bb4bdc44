//! What the fast path knows of a local SID ([`FastSid`]): a [`FastKind`] and its
//! argument, chosen by the SID's behaviour when the tables are built and packed into the
//! word of the SID's /128 in [`Fib::words6`](super::Fib::words6), so that one probe of a
//! packet's destination tells the fast path what to do.

use super::NextHop;
use crate::packet::DevId;

/// The bit of a [`FastKind`] that marks the kinds handled in the batch loop itself
/// (`pipeline::fast::try6`); the others are tried out of the loop, after it declined
/// (`pipeline::fast::try_cold`).
const IN_LOOP: u8 = 0x80;
/// The bit of End.BPF's kind, which `pipeline::fast::try_bpf` takes rather than
/// `try_cold`: one test tells it and None from the rest ([`FastSid::is_none_or_bpf`]).
const BPF: u8 = 0x40;

/// The kinds of fast step, stored as this byte in a SID's word. Each names the
/// behaviour step that handles it (`crate::behaviour`).
#[repr(u8)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FastKind {
    /// Not handled by the fast path.
    None = 0,
    /// End, and End.T of the main table, without PSP: the next segment is looked up in
    /// the main FIB, which the fast path has at hand. (USP and USD act only on a packet
    /// that arrives with Segments Left 0, which the fast path leaves to the general path.)
    End = IN_LOOP | 5,
    /// End.T of another table without PSP: the next segment is looked up in FIB `arg`.
    EndT = IN_LOOP | 4,
    /// End.X without PSP, to next hop `arg` ([`FastSid::next_hop`]).
    EndX = IN_LOOP | 3,
    /// End.DX6 to next hop `arg`.
    Dx6 = IN_LOOP | 2,
    /// End.DT6: the inner destination is looked up in FIB `arg`.
    Dt6 = IN_LOOP | 1,
    /// End.DX4 to next hop `arg`.
    Dx4 = 1,
    /// End.DT4 with FIB `arg`.
    Dt4 = 2,
    /// End.DT46 with FIB `arg`.
    Dt46 = 3,
    /// End.DX2 out of device `arg`.
    Dx2 = 4,
    /// End and End.T with PSP: the next segment is looked up in FIB `arg`.
    EndPsp = 5,
    /// End.X with PSP, to next hop `arg`.
    EndXPsp = 6,
    /// End.B6.Encaps(.Red) without flavours, with policy `arg`.
    B6Encaps = 7,
    /// End.B6 without flavours, with policy `arg`.
    B6Insert = 8,
    /// End or End.T with NEXT-C-SID (and no PSP): the shifted destination is looked up
    /// in FIB `arg`; the container's lengths are the SID's flavour's.
    EndCsid = 9,
    /// End.X with NEXT-C-SID, to next hop `arg`.
    EndXCsid = 10,
    /// H.M.GTP4.D (RFC 9433 §6.7) on an IPv4 route: tried for IPv4 frames the plain IPv4
    /// step declined (its policy is the SID's).
    Gtp4D = 11,
    /// End.M.GTP4.E (RFC 9433 §6.6) on a packet with no extension header.
    Gtp4E = 12,
    /// End.BPF: its program run on the packet in place (`end_bpf::fast`).
    Bpf = BPF,
}

/// A local SID as the fast path sees it: a [`FastKind`] (as its byte, the form the
/// packed word holds) and its argument, 8 bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FastSid {
    kind: u8,
    /// A FIB index, a next hop ([`FastSid::next_hop`]), a device or a policy, by kind.
    pub arg: u32,
}

impl Default for FastSid {
    fn default() -> FastSid {
        FastSid::NO
    }
}

impl FastSid {
    /// A SID the fast path does not handle.
    pub const NO: FastSid = FastSid { kind: FastKind::None as u8, arg: 0 };
    /// Arguments must fit in 24 bits (the word's bits 8..32); a larger one makes the SID
    /// kind [`None`](FastKind::None).
    const ARG_BITS: u32 = 24;
    /// In the argument of a next hop: on-link on device `arg & 0xffff` (else adjacency
    /// `arg`).
    const ON_LINK: u32 = 1 << (Self::ARG_BITS - 1);

    pub const fn new(kind: FastKind, arg: u32) -> FastSid {
        FastSid { kind: kind as u8, arg }
    }

    /// A kind whose argument is the next hop `nh`.
    pub fn to(kind: FastKind, nh: NextHop) -> FastSid {
        match nh {
            NextHop::Adj(a) if a < Self::ON_LINK => FastSid::new(kind, a),
            NextHop::Adj(_) => FastSid::NO,
            NextHop::OnLink(d) => FastSid::new(kind, Self::ON_LINK | u32::from(d)),
        }
    }

    /// The same kind with argument `arg` (a binding SID's policy, renumbered); kind
    /// None stays as it is.
    pub(crate) fn with_arg(self, arg: u32) -> FastSid {
        if self.is(FastKind::None) {
            self
        } else {
            FastSid { kind: self.kind, arg }
        }
    }

    /// Whether this SID is of kind `k`.
    #[inline(always)]
    pub fn is(self, k: FastKind) -> bool {
        self.kind == k as u8
    }

    /// Whether this is no SID of a fast kind, or End.BPF's: neither is `try_cold`'s.
    #[inline(always)]
    pub fn is_none_or_bpf(self) -> bool {
        self.kind & !BPF == 0
    }

    /// Whether this SID is End or End.T without PSP ([`FastKind::End`],
    /// [`FastKind::EndT`]): the in-loop kinds with bit 2 set, one bit test. Which of the two
    /// is then [`is_end_main`](Self::is_end_main), another.
    #[inline(always)]
    pub fn is_end_or_t(self) -> bool {
        self.kind & 4 != 0
    }

    /// Of an [`is_end_or_t`](Self::is_end_or_t) SID: End, which looks the next segment up
    /// in the main FIB (bit 0 of the kind).
    #[inline(always)]
    pub fn is_end_main(self) -> bool {
        self.kind & 1 != 0
    }

    /// Whether the batch loop handles this SID itself (one test of the kind's top bit).
    #[inline(always)]
    pub fn in_loop(self) -> bool {
        self.kind & IN_LOOP != 0
    }

    /// The next hop of a kind that goes to one ([`FastSid::to`]).
    #[inline(always)]
    pub fn next_hop(self) -> NextHop {
        if self.arg & Self::ON_LINK == 0 {
            NextHop::Adj(self.arg)
        } else {
            NextHop::OnLink(self.arg as DevId)
        }
    }

    /// The word of [`Fib::words6`](super::Fib::words6) for a /128 entry that is SID
    /// `index`: the kind in the low byte, the argument in the next three (kind
    /// [`None`](FastKind::None) if it does not fit), the index in the top 16 bits (kind
    /// None if it does not fit: the fast path counts a SID with
    /// [`SidCounters::count_frame`](crate::counters::SidCounters), by a `u16`). A SID of
    /// kind None gets argument 1, so that no word is [`WordMap::MISS`] (0).
    ///
    /// [`WordMap::MISS`]: crate::words::WordMap::MISS
    pub(crate) fn pack(self, index: u32) -> u64 {
        let none =
            self.is(FastKind::None) || self.arg >= 1 << Self::ARG_BITS || index as usize >= crate::counters::FIXED;
        let (kind, arg) = if none { (FastKind::None as u8, 1) } else { (self.kind, self.arg) };
        u64::from(kind) | u64::from(arg) << 8 | u64::from(index as u16) << 48
    }

    /// The word of [`Fib::words6`](super::Fib::words6) for a /128 entry that is not a
    /// SID: kind None, argument 0 (no SID's), not `WordMap::MISS`.
    pub(crate) const NOT_SID: u64 = 0xffff << 48;

    /// The SID index and what [`pack`](Self::pack) packed (kind None for
    /// [`NOT_SID`](Self::NOT_SID); the index means nothing for kind None). The index
    /// is a `usize` straight away: the compiler knows it is under 2^16, and narrowing
    /// it to a `u16` at the count costs nothing (as a `u16` here, widening it there
    /// would cost an instruction).
    #[inline(always)]
    pub(crate) fn unpack(w: u64) -> (usize, FastSid) {
        ((w >> 48) as usize, FastSid { kind: w as u8, arg: (w as u32) >> 8 })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_round_trip() {
        let s = FastSid::to(FastKind::EndX, NextHop::OnLink(7));
        assert_eq!(s.next_hop(), NextHop::OnLink(7));
        assert!(s.in_loop() && s.is(FastKind::EndX));
        let (i, u) = FastSid::unpack(s.pack(42));
        assert_eq!((i, u), (42, s));
        let a = FastSid::to(FastKind::Dx4, NextHop::Adj(3));
        assert_eq!(a.next_hop(), NextHop::Adj(3));
        assert!(!a.in_loop());
        // Too large an argument, too large an index: kind None, never the miss word.
        assert_eq!(FastSid::to(FastKind::Dx6, NextHop::Adj(1 << 23)), FastSid::NO);
        for w in [FastSid::new(FastKind::Dt6, 1 << 24).pack(0), a.pack(1 << 16), FastSid::NO.pack(0)] {
            assert!(FastSid::unpack(w).1.is(FastKind::None));
            assert_ne!(w, crate::words::WordMap::MISS);
        }
        assert!(FastSid::unpack(FastSid::NOT_SID).1.is(FastKind::None));
    }

    #[test]
    fn end_and_end_t_are_told_by_bits() {
        use FastKind::*;
        let in_loop = [End, EndT, EndX, Dx6, Dt6];
        for k in in_loop {
            let s = FastSid::new(k, 0);
            assert!(s.in_loop());
            assert_eq!(s.is_end_or_t(), matches!(k, End | EndT), "{k:?}");
            if s.is_end_or_t() {
                assert_eq!(s.is_end_main(), k == End, "{k:?}");
            }
        }
    }
}
