//! The batch pipeline: Ethernet in -> classify -> behaviour -> rewrite -> Ethernet out.
//!
//! [`Worker::process_batch`] takes received frames and leaves in each buffer the frame to
//! transmit with its [`Verdict`]. Per packet it allocates nothing, logs nothing and
//! returns no error: every drop is a [`DropReason`] counted in the worker's
//! [`Counters`]. Each frame first meets the fast path ([`fast::try6`]), whose decision is
//! a returned value ([`fast::Fast`]: transmit, try the cold fast cases for this SID, or
//! take the general path). On the general path a behaviour never forwards or answers
//! itself: it returns a [`Next`], which [`Worker`] carries out. A packet handed back to
//! the FIB (RFC 8986 "submit the packet to the egress IPv6 FIB lookup",
//! [`Next::Lookup6`]) is looked up again, at most [`MAX_PASSES`] times. A packet the
//! general path fragments (`fragment.rs`) leaves as several frames: the buffer says
//! [`Verdict::Fragmented`] and the frames are in [`Worker::extra`]; the batch's caller
//! sends what [`ExtraFrames::outputs`] yields.

pub mod extra;
pub(crate) mod fast;
pub(crate) mod forward;
pub(crate) mod fragment;
pub mod hbh;
pub(crate) mod icmp;
pub mod lwt_bpf;
pub(crate) mod mtu;
pub(crate) mod multipath;
pub(crate) mod output;
mod ratelimit;
pub mod validate;

pub use ratelimit::TokenBucket;

pub use crate::behaviour::Next;
use crate::counters::Counters;
use crate::drop::DropReason;
use crate::packet::{DevId, PacketBuf, Verdict};
use crate::tables::{FastDevs, FastKind, FastSid, Tables};
use extra::ExtraFrames;
use fast::{Cold, Fast};
use sr6_wire::{EthernetFrame, ETHERTYPE_IPV4, ETHERTYPE_IPV6};

/// Ethernet header length of the frames sr6 routes (untagged).
pub const ETH_LEN: usize = EthernetFrame::<&[u8]>::HEADER_LEN;
/// How many times one packet may go through the FIB (End then End.T then ...).
pub const MAX_PASSES: u8 = 8;

/// One worker's mutable state: counters and the ICMP rate limiter. Tables are shared
/// and read-only.
#[derive(Debug)]
pub struct Worker {
    pub counters: Counters,
    pub icmp_limit: TokenBucket,
    /// Current time in nanoseconds: the latest receive timestamp the general path saw
    /// (pcap timestamps offline, the monotonic clock live), so rate limiting is
    /// deterministic offline. The fast path, which never reads it, leaves it alone.
    pub now_ns: u64,
    /// Destination and source MAC of the frame being processed, for local delivery and
    /// for H.Encaps.L2, which carries the frame as received.
    pub rx_macs: [u8; 12],
    /// Use the fast path for the common cases (see `fast.rs`); false forces the general
    /// path, which the differential test compares against.
    pub fast_path: bool,
    /// Packets the fast path handled (for tests and `sr6 bench`).
    pub fast_hits: u64,
    /// The frames of the last batch beyond one per received frame (IPv4 fragments):
    /// cleared when a batch starts.
    pub extra: ExtraFrames,
    /// The IDS's scratch memory and the alerts of the last batches, which the caller
    /// takes ([`crate::ids::alert`]).
    pub ids: crate::ids::WorkerIds,
    /// Packets that took the general path ([`process_batch`](Self::process_batch)
    /// derives its fast-path hits from this count, off the per-packet path).
    general: u64,
    /// The device of the batch being processed: kept here rather than in a register
    /// of the batch loop, since only the general path reads it (to set `in_dev`).
    from: DevId,
    /// The stack End.BPF's fast step runs programs on ([`crate::bpf_prog`]).
    bpf_scratch: sr6_bpf::Scratch,
}

impl Worker {
    pub fn new(t: &Tables) -> Worker {
        let mut counters = Counters::new(t.devices.len(), t.sids.len(), t.policies.len());
        counters.firewall = vec![0; 2 * t.firewall.as_ref().map_or(0, |f| f.counter_count())];
        Worker {
            counters,
            icmp_limit: Self::icmp_limit(),
            now_ns: 0,
            rx_macs: [0; 12],
            fast_path: true,
            fast_hits: 0,
            extra: ExtraFrames::default(),
            bpf_scratch: sr6_bpf::Scratch::default(),
            ids: crate::ids::WorkerIds::new(t.ids.as_deref()),
            general: 0,
            from: 0,
        }
    }

    /// The state [`new`](Self::new) gives for tables `t`, but for the ICMP rate limit
    /// and the End.BPF stack, kept, in the memory this worker has: what a live worker
    /// does at every new generation of the tables (a route change), which must not
    /// free and allocate its 2 MiB of counters each time.
    pub fn renew(&mut self, t: &Tables) {
        let Worker {
            counters,
            icmp_limit: _,
            now_ns,
            rx_macs,
            fast_path,
            fast_hits,
            extra,
            ids,
            general,
            from,
            bpf_scratch: _,
        } = self;
        counters.reshape(t.devices.len(), t.sids.len(), t.policies.len());
        counters.firewall.resize(2 * t.firewall.as_ref().map_or(0, |f| f.counter_count()), 0);
        *ids = crate::ids::WorkerIds::new(t.ids.as_deref());
        extra.clear();
        (*now_ns, *rx_macs, *fast_path, *fast_hits) = (0, [0; 12], true, 0);
        (*general, *from) = (0, 0);
    }

    /// The ICMP error rate limit of a new worker: 1,000 a second, bursts of 100.
    fn icmp_limit() -> TokenBucket {
        TokenBucket::new(1000, 100)
    }

    /// Back to the state [`new`](Self::new) gives, for the same tables, keeping the
    /// counters' memory (a new worker allocates 2 MiB of them, see
    /// [`ById`](crate::counters::ById)): for callers that process one frame at a time
    /// with a fresh worker each, such as the fuzz targets.
    pub fn reset(&mut self) {
        // Every field named, so that a new one cannot be forgotten here.
        let Worker {
            counters,
            icmp_limit,
            now_ns,
            rx_macs,
            fast_path,
            fast_hits,
            extra,
            ids,
            general,
            from,
            bpf_scratch: _,
        } = self;
        counters.clear();
        ids.alerts.clear();
        extra.clear();
        *icmp_limit = Self::icmp_limit();
        (*now_ns, *rx_macs, *fast_path, *fast_hits) = (0, [0; 12], true, 0);
        (*general, *from) = (0, 0);
    }

    /// Processes a batch of frames received on device `from` in place; each buffer ends
    /// with its verdict set. Never inlined: one call per batch costs nothing, and
    /// profilers (scripts/callgrind.sh) can count exactly the instructions spent in here.
    ///
    /// A batch is what one receive queue delivered: every frame of it is processed as
    /// received on `from`, whatever its `in_dev` said (the general path sets `in_dev`
    /// to `from` before it reads it; the fast path reads what it needs to know of the
    /// device — `forwarding`, `seg6_require_hmac` — once per batch).
    #[inline(never)]
    pub fn process_batch(&mut self, t: &Tables, from: DevId, batch: &mut [PacketBuf]) {
        // Received packets and fast-path hits are counted once per batch.
        let n = batch.len() as u64;
        let general = self.general;
        self.counters.rx += n;
        self.from = from;
        self.clear_extra();
        // The fast-path switch and the device tested once per batch, not per packet.
        match self.fast_device(t, from) {
            Some(false) => {
                for p in batch.iter_mut() {
                    self.process_one::<false>(t, p);
                }
            }
            Some(true) => {
                for p in batch.iter_mut() {
                    self.process_one::<true>(t, p);
                }
            }
            None => self.process_declined(t, from, batch),
        }
        self.fast_hits += n - (self.general - general);
    }

    /// Processes one frame received on device `p.in_dev`.
    pub fn process(&mut self, t: &Tables, p: &mut PacketBuf) {
        self.counters.rx += 1;
        let general = self.general;
        let from = p.in_dev;
        self.from = from;
        self.clear_extra();
        match self.fast_device(t, from) {
            Some(false) => self.process_one::<false>(t, p),
            Some(true) => self.process_one::<true>(t, p),
            None => {
                let fast = self.no_cold_cases(t, from);
                self.process_general(t, p, FastSid::NOT_SID);
                self.fast_path = fast;
            }
        }
        if self.general == general {
            self.fast_hits += 1;
        }
    }

    /// A batch from device `from` that the fast path does not take, all of it to the
    /// general path. Out of line: [`process_batch`](Self::process_batch) keeps only the
    /// fast path's code and registers.
    #[inline(never)]
    #[cold]
    fn process_declined(&mut self, t: &Tables, from: DevId, batch: &mut [PacketBuf]) {
        let fast = self.no_cold_cases(t, from);
        for p in batch.iter_mut() {
            self.process_general(t, p, FastSid::NOT_SID);
        }
        self.fast_path = fast;
    }

    /// For a batch from device `from`, which the fast path does not take: if it is an SR
    /// proxy's `iif`, whose IP packets only the general path handles (part 2 of the
    /// proxy), the cold fast cases are off too ([`fast::try_cold`]'s IPv4 forwarding would
    /// bypass the proxy). Returns the switch as it was, for the caller to restore. Only
    /// batches the fast path declines pay for the test.
    #[inline(always)]
    fn no_cold_cases(&mut self, t: &Tables, from: DevId) -> bool {
        let fast = self.fast_path;
        if t.fast_devs.proxy_in(from) {
            self.fast_path = false;
        }
        fast
    }

    /// Forgets the extra frames of the last batch: one test per batch when there are
    /// none.
    #[inline(always)]
    fn clear_extra(&mut self) {
        if !self.extra.is_empty() {
            self.extra.clear();
        }
    }

    /// Whether device `dev` requires an HMAC on every SRH, if the fast path is on and the
    /// device forwards IPv6 (otherwise [`fast::try6`] would decline every frame from it).
    #[inline(always)]
    fn fast_device(&self, t: &Tables, dev: DevId) -> Option<bool> {
        let bits = t.fast_devs.get(dev);
        if !self.fast_path || bits & FastDevs::FORWARDING6 == 0 {
            return None;
        }
        Some(bits & FastDevs::REQUIRE_HMAC != 0)
    }

    /// [`process`](Self::process) without the rx and fast-hit counts, for a frame
    /// received on device `from` (which forwards IPv6 and requires an HMAC if
    /// `REQUIRE_HMAC`). Inlined into [`process_batch`](Self::process_batch) so the
    /// per-packet call and its register saves disappear.
    #[inline(always)]
    fn process_one<const REQUIRE_HMAC: bool>(&mut self, t: &Tables, p: &mut PacketBuf) {
        // The fast path only ever transmits: its verdict needs no dispatch. A frame the
        // receive path condemned (e.g. too big) is empty ([`PacketBuf::condemn`]): the
        // fast path declines it, the general path counts its drop.
        match fast::try6::<REQUIRE_HMAC>(t, &mut self.counters, p) {
            Fast::Tx(out) => {
                // A device index read as a `DevId`: the cast is exact, and the counter
                // needs no bounds check.
                *self.counters.tx.at(out as DevId) += 1;
                p.verdict = Verdict::Tx(out as DevId);
            }
            // Two calls rather than one with the word chosen first: each passes its
            // word straight, with no merge of the two ways before the call.
            Fast::Cold(w) => self.process_cold(t, p, w),
            Fast::General => self.process_general(t, p, FastSid::NOT_SID),
        }
    }

    /// A frame [`fast::try6`] found is for the SID of word `w`, of a kind it leaves to
    /// the steps out of the batch loop: End.BPF's to [`process_bpf`](Self::process_bpf),
    /// the others to [`process_general`](Self::process_general) (which tries
    /// [`fast::try_cold`] first). One call from the loop either way, so the loop's code
    /// is the same; both calls here are jumps.
    #[inline(never)]
    #[cold]
    fn process_cold(&mut self, t: &Tables, p: &mut PacketBuf, w: u64) {
        if FastSid::unpack(w).1.is(FastKind::Bpf) {
            return self.process_bpf(t, p, w);
        }
        self.process_general(t, p, w)
    }

    /// A frame for the End.BPF SID of word `w`: its fast step, else the general path.
    #[inline(never)]
    #[cold]
    fn process_bpf(&mut self, t: &Tables, p: &mut PacketBuf, w: u64) {
        if self.fast_path && !matches!(p.verdict, Verdict::Drop(_)) {
            // A program that calls no helper: sent from here, or the frame untouched.
            if let Some(out) = fast::try_bpf_lean(t, &mut self.counters, &mut self.bpf_scratch, self.from, p, w) {
                *self.counters.tx.at(out as DevId) += 1;
                p.verdict = Verdict::Tx(out as DevId);
                return;
            }
            // As `process_general` does first: the step may hand the frame on to the
            // general path's steps, which read both.
            p.in_dev = self.from;
            self.now_ns = self.now_ns.max(p.ts_ns);
            if self.bpf_step(t, p, w) {
                return;
            }
        }
        self.process_general(t, p, w)
    }

    /// Everything the fast path does not handle, verdict counters included; `w` is the
    /// word of the SID the frame is for if [`fast::try6`] said so ([`Fast::Cold`]).
    #[inline(never)]
    #[cold]
    fn process_general(&mut self, t: &Tables, p: &mut PacketBuf, w: u64) {
        p.in_dev = self.from;
        // The clock only the general path reads (the ICMP rate limiter, the neighbour
        // wait queue's timestamps): advanced here, not for every fast-path packet.
        self.now_ns = self.now_ns.max(p.ts_ns);
        // IPv4 forwarding and End.DX4 have fast paths of their own, tried here so that
        // the IPv6 cases in the batch loop keep their registers.
        if self.fast_path && !matches!(p.verdict, Verdict::Drop(_)) {
            if let Some(out) = fast::try_cold(t, &mut self.counters, p, w) {
                *self.counters.tx.at(out as DevId) += 1;
                p.verdict = Verdict::Tx(out as DevId);
                return;
            }
        }
        self.general += 1;
        let v = match p.verdict {
            Verdict::Drop(r) => Verdict::Drop(r),
            _ => self.classify_general(t, p),
        };
        self.finish(p, v);
    }

    /// End.BPF's fast step ([`fast::try_bpf`]) on a frame for the SID of word `w`:
    /// `true` if it took the frame, which it then sent or had the general path carry on
    /// from where the program left it; `false`: the frame untouched.
    #[inline(always)]
    fn bpf_step(&mut self, t: &Tables, p: &mut PacketBuf, w: u64) -> bool {
        let Some(c) = fast::try_bpf(t, &mut self.counters, &mut self.bpf_scratch, p, w) else { return false };
        match c {
            Cold::Tx(out) => {
                *self.counters.tx.at(out as DevId) += 1;
                p.verdict = Verdict::Tx(out as DevId);
            }
            Cold::After { sid, ipv6_len, next } => {
                self.general += 1;
                let v = self.after_fast_step(t, p, sid, ipv6_len, next);
                self.finish(p, v);
            }
        }
        true
    }

    /// The general path's verdict `v` counted and given to the frame.
    #[inline(always)]
    fn finish(&mut self, p: &mut PacketBuf, v: Verdict) {
        match v {
            Verdict::Tx(d) => {
                if let Some(c) = self.counters.tx.get_mut(d as usize) {
                    *c += 1;
                }
            }
            Verdict::Local => self.counters.local += 1,
            Verdict::Resolve(_) => self.counters.unresolved += 1,
            Verdict::Drop(r) => self.counters.drop(r),
            // Its fragments were counted as they were made.
            Verdict::Fragmented | Verdict::Pending => {}
        }
        p.verdict = v;
    }

    /// The general path: the reference implementation of every behaviour.
    #[inline]
    fn classify_general(&mut self, t: &Tables, p: &mut PacketBuf) -> Verdict {
        p.inner_at = 0;
        let d = p.data();
        if d.len() < ETH_LEN {
            return Verdict::Drop(DropReason::Malformed);
        }
        let f = EthernetFrame::new_unchecked(d);
        let ethertype = f.ethertype();
        self.rx_macs = f.addrs();
        let next = match ethertype {
            ETHERTYPE_IPV6 => {
                let _ = p.pull_front(ETH_LEN);
                forward::ipv6_input(t, self, p)
            }
            ETHERTYPE_IPV4 => {
                let _ = p.pull_front(ETH_LEN);
                forward::ipv4_input(t, self, p)
            }
            // ARP, VLAN-tagged frames, LLDP...: the host's business.
            _ => return Verdict::Local,
        };
        self.run_general(t, p, next)
    }

    /// The general path from where a fast step of SID `sid` left a frame ([`Cold::After`]):
    /// the step's `next` carried out and counted on the SID, then whatever follows.
    #[inline(always)]
    fn after_fast_step(&mut self, t: &Tables, p: &mut PacketBuf, sid: usize, ipv6_len: u64, next: Next) -> Verdict {
        p.inner_at = 0;
        let d = p.data();
        if d.len() < ETH_LEN {
            return Verdict::Drop(DropReason::Malformed);
        }
        self.rx_macs = EthernetFrame::new_unchecked(d).addrs();
        let _ = p.pull_front(ETH_LEN);
        let next = forward::sid_step(t, self, p, sid, ipv6_len, next);
        self.run_general(t, p, next)
    }

    /// The general path's loop: `next` carried out, and each step after it, to a verdict.
    #[inline]
    fn run_general(&mut self, t: &Tables, p: &mut PacketBuf, mut next: Next) -> Verdict {
        let mut passes = 0;
        loop {
            next = match next {
                Next::Done(v) => return v,
                Next::Lookup6 { .. } | Next::Lookup4 { .. } if passes == MAX_PASSES => {
                    return Verdict::Drop(DropReason::NoRoute)
                }
                Next::Lookup6 { table, forward } => {
                    passes += 1;
                    forward::route6(t, self, p, table, forward)
                }
                Next::Lookup4 { table, forward } => {
                    passes += 1;
                    forward::route4(t, self, p, table, forward)
                }
                other => self.step(t, p, other),
            };
        }
    }

    /// Carries out a [`Next`] other than a FIB lookup: what follows is [`Next::Done`] or
    /// a lookup.
    pub(crate) fn step(&mut self, t: &Tables, p: &mut PacketBuf, next: Next) -> Next {
        match next {
            Next::Done(_) | Next::Lookup6 { .. } | Next::Lookup4 { .. } => next,
            Next::Xconnect6 { nh, forward } => forward::forward6(t, self, p, nh, forward),
            Next::Xconnect4 { nh, forward } => forward::forward4(t, self, p, nh, forward),
            Next::Local6 => Next::Done(output::local(p, &self.rx_macs, ETHERTYPE_IPV6)),
            Next::Icmp6(e) => icmp::answer6(t, self, p, e),
        }
    }
}
