//! Frames the pipeline sends beyond one per received frame: the fragments of an IPv4
//! packet the general path fragmented (`pipeline/fragment.rs`). A received
//! buffer whose verdict is [`Verdict::Fragmented`] is not sent itself; its fragments
//! are, in order, from the worker's [`ExtraFrames`] — one byte store, cleared at the
//! start of each batch and grown only when a batch needs more than any before it (at
//! most [`MAX_BYTES`]), so a worker that fragments nothing allocates nothing.
//!
//! Data still flows one way: whoever sends a batch's frames takes them from
//! [`ExtraFrames::outputs`], which yields every frame to send or hand on, in batch
//! order, each fragment right after the ones before it.

use crate::packet::{PacketBuf, Verdict};
use sr6_wire::{EthernetFrame, ETHERTYPE_IPV4};

/// The most bytes of fragments one batch may make (the fragments of some 400 packets of
/// 9,000 bytes): past it a packet is not fragmented but dropped.
pub const MAX_BYTES: usize = 4 << 20;

/// Ethernet header length.
const ETH: usize = EthernetFrame::<&[u8]>::HEADER_LEN;

/// One frame in the store.
#[derive(Debug, Clone, Copy)]
struct Frame {
    verdict: Verdict,
    nh_key: u128,
    start: u32,
    end: u32,
}

/// The extra frames of one batch, grouped by the received buffer they replace.
#[derive(Debug, Default)]
pub struct ExtraFrames {
    bytes: Vec<u8>,
    frames: Vec<Frame>,
    /// Per group (in batch order), the index in `frames` after its last frame.
    groups: Vec<u32>,
}

/// Where the store stood before a group was started (`ExtraFrames::mark`).
#[derive(Debug, Clone, Copy)]
pub struct Mark {
    bytes: usize,
    frames: usize,
}

/// One frame to send or hand on: as a [`PacketBuf`] says it (`verdict`, `nh_key`,
/// `ts_ns`, the frame) — with [`Verdict::Tx`] an Ethernet frame, with
/// [`Verdict::Resolve`] the L3 packet waiting for its next hop's address.
#[derive(Debug, Clone, Copy)]
pub struct Out<'a> {
    pub verdict: Verdict,
    pub nh_key: u128,
    pub ts_ns: u64,
    pub data: &'a [u8],
}

impl ExtraFrames {
    /// No extra frames (nothing was fragmented since the last clear).
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.groups.is_empty()
    }

    /// Forgets every frame, keeping the memory.
    #[inline]
    pub fn clear(&mut self) {
        self.bytes.clear();
        self.frames.clear();
        self.groups.clear();
    }

    /// The state to [`rollback`](Self::rollback) to if a group cannot be completed.
    pub(crate) fn mark(&self) -> Mark {
        Mark { bytes: self.bytes.len(), frames: self.frames.len() }
    }

    /// Drops the frames pushed since `m`.
    pub(crate) fn rollback(&mut self, m: Mark) {
        self.bytes.truncate(m.bytes);
        self.frames.truncate(m.frames);
    }

    /// Ends the group of frames pushed since the last one ended.
    pub(crate) fn close_group(&mut self) {
        self.groups.push(self.frames.len() as u32);
    }

    /// Appends an IPv4 frame made of `header` and `data`: with the Ethernet addresses
    /// `eth` in front when given (`verdict` [`Verdict::Tx`]), else the L3 packet alone.
    /// False (nothing appended) when the store would pass [`MAX_BYTES`].
    pub(crate) fn push(
        &mut self,
        verdict: Verdict,
        nh_key: u128,
        eth: Option<&[u8; 12]>,
        header: &[u8],
        data: &[u8],
    ) -> bool {
        let start = self.bytes.len();
        let len = eth.map_or(0, |_| ETH) + header.len() + data.len();
        if start + len > MAX_BYTES {
            return false;
        }
        if let Some(eth) = eth {
            self.bytes.extend_from_slice(eth);
            self.bytes.extend_from_slice(&ETHERTYPE_IPV4.to_be_bytes());
        }
        self.bytes.extend_from_slice(header);
        self.bytes.extend_from_slice(data);
        self.frames.push(Frame { verdict, nh_key, start: start as u32, end: self.bytes.len() as u32 });
        true
    }

    /// The frames of group `g`.
    fn group(&self, g: usize) -> &[Frame] {
        let start = g.checked_sub(1).and_then(|i| self.groups.get(i)).map_or(0, |&e| e as usize);
        let end = self.groups.get(g).map_or(start, |&e| e as usize);
        self.frames.get(start..end).unwrap_or_default()
    }

    /// Every frame `batch` (just processed by the worker this store belongs to) leaves
    /// to its caller, in order: each buffer as it is, except that one
    /// [`Verdict::Fragmented`] is replaced by its fragments.
    pub fn outputs<'a>(&'a self, batch: &'a [PacketBuf]) -> impl Iterator<Item = Out<'a>> + 'a {
        let mut g = 0;
        batch.iter().flat_map(move |b| {
            let (own, frames) = if b.verdict == Verdict::Fragmented {
                g += 1;
                (None, self.group(g - 1))
            } else {
                (Some(Out { verdict: b.verdict, nh_key: b.nh_key, ts_ns: b.ts_ns, data: b.data() }), &[][..])
            };
            own.into_iter().chain(frames.iter().map(move |f| Out {
                verdict: f.verdict,
                nh_key: f.nh_key,
                ts_ns: b.ts_ns,
                data: self.bytes.get(f.start as usize..f.end as usize).unwrap_or_default(),
            }))
        })
    }
}
