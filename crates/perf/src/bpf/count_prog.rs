//! The tester's counting program: an XDP program that counts the test packets a device
//! receives where they arrive, in the receive path, and drops them — no copy to user
//! space, no receiving thread, no wake-up per burst (see `xdp_counter.rs`).
//!
//! Every test packet ends with a 16-byte telemetry block (`traffic/telemetry.rs`): magic (u16), stream id (u16), sequence number (u32), TX timestamp
//! (u64, ns of `CLOCK_MONOTONIC`), all big-endian. The equivalent C:
//!
//! ```c
//! SEC("xdp") int sr6_count(struct xdp_md *ctx)
//! {
//!     __u64 *s = bpf_map_lookup_elem(&stats, &zero);
//!     if (!s) return XDP_PASS;
//!     if (ctx->rx_queue_index != 0) { s[OTHER_QUEUE]++; return XDP_PASS; }
//!     s[FRAMES]++;
//!     void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
//!     __u64 len = end - data;
//!     if (len < 16 || len > MAX_LEN) goto other;
//!     struct block *b = data + len - 16;                  /* the last 16 bytes */
//!     if ((void *)(b + 1) > end || ntohs(b->magic) != MAGIC) goto other;
//!     __u64 now = bpf_ktime_get_ns(), tx = be64toh(b->ts);
//!     if (tx < s[START] || tx > now || now - tx > s[MAX_AGE]) { s[STALE]++; return XDP_DROP; }
//!     __u64 lat = now - tx;
//!     __u32 id = ntohs(b->stream), seq = ntohl(b->seq);
//!     if (id >= STREAMS) { s[UNKNOWN]++; return XDP_DROP; }
//!     __u64 *st = &s[STREAM_AT + 4 * id], *bits = bpf_map_lookup_elem(&seen, &id);
//!     st[RECEIVED]++;
//!     __u64 *w = bits ? &bits[(seq >> 6) & (WORDS - 1)] : NULL, bit = 1ull << (seq & 63);
//!     if (w && (*w & bit)) st[DUPLICATES]++;
//!     else {
//!         if (w) *w |= bit;
//!         if (seq + 1 < st[TOP1]) st[REORDERED]++;      /* below the highest seen */
//!         else st[TOP1] = seq + 1;
//!     }
//!     s[LAT_N]++; s[LAT_SUM] += lat;
//!     if (lat < s[LAT_MIN]) s[LAT_MIN] = lat;
//!     if (lat > s[LAT_MAX]) s[LAT_MAX] = lat;
//!     s[BUCKETS_AT + bucket(lat)]++;                      /* log-linear, as latency.rs */
//!     return XDP_DROP;
//! other:
//!     s[OTHER]++;
//!     return XDP_PASS;                                    /* ND and the like: the kernel's */
//! }
//! ```
//!
//! `bucket(v)` is `v` below 64, else `64 + 32 (e - 6) + ((v >> (e - 5)) & 31)` with
//! `e = floor(log2 v)` (a binary search of six shifts: eBPF has no count-leading-zeros).
//!
//! The counters are plain loads and stores, not atomics: one receive queue is polled by
//! one NAPI instance at a time, so the program never runs twice at once on one
//! device's queue 0; frames on another queue are not counted but passed and flagged
//! (`OTHER_QUEUE`). The sequence bitmaps keep [`SEQ_BITS`] bits per stream; sequence
//! numbers are taken modulo that (a trial sends fewer packets per stream).

use sr6_io::bpf::asm::*;
use sr6_io::bpf::Insn;

/// Streams with counters (ids `0..MAX_COUNT_STREAMS`).
pub const MAX_COUNT_STREAMS: usize = 16;
/// Sequence numbers remembered per stream: 2^24 (2 MiB of bitmap per stream).
pub const SEQ_BITS: u32 = 24;
/// u64 words of one stream's bitmap.
pub(crate) const WORDS: u32 = 1 << (SEQ_BITS - 6);
/// Latency buckets: 64 of 1 ns, then 32 per power of two from 2^6 to 2^63.
pub const LAT_BUCKETS: usize = 64 + (64 - 6) * 32;
/// Frames longer than this are not looked at (passed as "other").
pub(crate) const MAX_LEN: i32 = 9216;

/// Indices (u64 words) in the statistics block, the one element of the `stats` map.
pub(crate) mod st {
    /// Written by user space: stamps older than this are stale (a reset sets it).
    pub(crate) const START: usize = 0;
    /// Written by user space: the most a packet may have been on its way.
    pub(crate) const MAX_AGE: usize = 1;
    pub(crate) const FRAMES: usize = 2;
    pub(crate) const OTHER: usize = 3;
    pub(crate) const STALE: usize = 4;
    pub(crate) const UNKNOWN: usize = 5;
    pub(crate) const LAT_N: usize = 6;
    pub(crate) const LAT_SUM: usize = 7;
    /// Reset to `u64::MAX` by user space.
    pub(crate) const LAT_MIN: usize = 8;
    pub(crate) const LAT_MAX: usize = 9;
    pub(crate) const OTHER_QUEUE: usize = 10;
    /// Four words per stream: received, duplicates, reordered, highest sequence + 1.
    pub(crate) const STREAM_AT: usize = 16;
    pub(crate) const RECEIVED: usize = 0;
    pub(crate) const DUPLICATES: usize = 1;
    pub(crate) const REORDERED: usize = 2;
    pub(crate) const TOP1: usize = 3;
    pub(crate) const BUCKETS_AT: usize = STREAM_AT + 4 * super::MAX_COUNT_STREAMS;
    /// Words in the block.
    pub(crate) const LEN: usize = BUCKETS_AT + super::LAT_BUCKETS;
    // The fixed counters end before the streams' words.
    const _: () = assert!(OTHER_QUEUE < STREAM_AT);
}

/// Where the program runs: its context and verdicts differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CountHook {
    /// XDP (`struct xdp_md`): in the device's NAPI poll, before any socket buffer; an
    /// skb that a veth receives (from a forwarder that sends with sockets or the
    /// kernel's stack) is first copied into an XDP buffer.
    Xdp,
    /// tcx ingress (`struct __sk_buff`, Linux 6.6+): after the socket buffer is made,
    /// without that copy.
    TcxIngress,
}

/// `struct __sk_buff` offsets.
const SKB_LEN: i16 = 0;
const SKB_DATA: i16 = 76;
const SKB_DATA_END: i16 = 80;
/// tcx verdicts.
const TCX_PASS: i32 = 0;
const TCX_DROP: i32 = 2;

/// The map file descriptors the program refers to.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CountMaps {
    /// One element: the statistics block ([`st::LEN`] u64 words).
    pub stats: i32,
    /// One element per stream: its bitmap ([`WORDS`] u64 words).
    pub seen: i32,
}

/// Assembles the program for test packets whose telemetry starts with `magic`, with
/// `streams` streams (ids at or above it count as unknown).
pub(crate) fn count_program(hook: CountHook, magic: u16, streams: u16, maps: CountMaps) -> Vec<Insn> {
    let w = |i: usize| (8 * i) as i16;

    let mut a = Asm::new();
    let pass = a.label();
    let other = a.label();
    let wrong_queue = a.label();
    let stale = a.label();
    let unknown = a.label();
    let drop = a.label();
    let new_seq = a.label();
    let new_top = a.label();
    let dup = a.label();
    let latency = a.label();
    let have_idx = a.label();

    // Increments the word at `off` from the pointer in `base` (clobbers r1).
    let inc = |a: &mut Asm, base: u8, off: i16| {
        a.emit(LDX_DW, R1, base, off, 0);
        a.emit(ADD64_IMM, R1, 0, 0, 1);
        a.emit(STX_DW, base, R1, off, 0);
    };

    a.emit(MOV64_REG, R6, R1, 0, 0); //                 r6 = ctx
    a.emit(ST_W, R10, 0, -4, 0); //                     key = 0
    a.emit(MOV64_REG, R2, R10, 0, 0);
    a.emit(ADD64_IMM, R2, 0, 0, -4);
    a.ld_map_fd(R1, maps.stats);
    a.emit(CALL, 0, 0, 0, BPF_FUNC_MAP_LOOKUP_ELEM);
    a.jump(JEQ_IMM, R0, 0, 0, pass);
    a.emit(MOV64_REG, R9, R0, 0, 0); //                 r9 = s
    let (data, data_end) = match hook {
        CountHook::Xdp => {
            a.emit(LDX_W, R1, R6, MD_RX_QUEUE_INDEX, 0);
            a.jump(JNE_IMM, R1, 0, 0, wrong_queue);
            (MD_DATA, MD_DATA_END)
        }
        CountHook::TcxIngress => {
            // The block is at the end of the whole packet: make it all linear first
            // (a no-op for the small frames of a test).
            let linear = a.label();
            a.emit(LDX_W, R7, R6, SKB_DATA, 0);
            a.emit(LDX_W, R3, R6, SKB_DATA_END, 0);
            a.emit(SUB64_REG, R3, R7, 0, 0);
            a.emit(LDX_W, R2, R6, SKB_LEN, 0);
            a.jump(JLE_REG, R2, R3, 0, linear);
            a.emit(MOV64_REG, R1, R6, 0, 0);
            a.emit(CALL, 0, 0, 0, BPF_FUNC_SKB_PULL_DATA);
            a.bind(linear);
            (SKB_DATA, SKB_DATA_END)
        }
    };
    inc(&mut a, R9, w(st::FRAMES));
    a.emit(LDX_W, R7, R6, data, 0); //                  r7 = data
    a.emit(LDX_W, R3, R6, data_end, 0); //              r3 = end
    a.emit(MOV64_REG, R2, R3, 0, 0); //                 r2 = end - data
    a.emit(SUB64_REG, R2, R7, 0, 0);
    a.jump(JGT_IMM, R2, 0, MAX_LEN, other);
    a.jump(JLT_IMM, R2, 0, 16, other);
    a.emit(ADD64_IMM, R2, 0, 0, -16);
    a.emit(ADD64_REG, R7, R2, 0, 0); //                 r7 = the block
    a.emit(MOV64_REG, R1, R7, 0, 0);
    a.emit(ADD64_IMM, R1, 0, 0, 16);
    a.jump(JGT_REG, R1, R3, 0, other);
    a.emit(LDX_H, R1, R7, 0, 0);
    a.emit(TO_BE, R1, 0, 0, 16);
    a.jump(JNE_IMM, R1, 0, i32::from(magic), other);
    a.emit(CALL, 0, 0, 0, BPF_FUNC_KTIME_GET_NS); //   r0 = now
    a.emit(LDX_DW, R1, R7, 8, 0); //                    r1 = tx
    a.emit(TO_BE, R1, 0, 0, 64);
    a.emit(LDX_DW, R2, R9, w(st::START), 0);
    a.jump(JLT_REG, R1, R2, 0, stale);
    a.jump(JGT_REG, R1, R0, 0, stale);
    a.emit(SUB64_REG, R0, R1, 0, 0); //                 r0 = lat
    a.emit(LDX_DW, R2, R9, w(st::MAX_AGE), 0);
    a.jump(JGT_REG, R0, R2, 0, stale);
    a.emit(MOV64_REG, R8, R0, 0, 0); //                 r8 = lat
    a.emit(LDX_H, R1, R7, 2, 0); //                     r1 = stream
    a.emit(TO_BE, R1, 0, 0, 16);
    a.jump(JGE_IMM, R1, 0, i32::from(streams), unknown);
    a.emit(STX_W, R10, R1, -8, 0); //                  key = stream
    a.emit(LDX_W, R6, R7, 4, 0); //                     r6 = seq (ctx is done with)
    a.emit(TO_BE, R6, 0, 0, 32);
    a.emit(MOV64_REG, R7, R1, 0, 0); //                 r7 = stream (the block is done with)
    a.emit(MOV64_REG, R2, R10, 0, 0);
    a.emit(ADD64_IMM, R2, 0, 0, -8);
    a.ld_map_fd(R1, maps.seen);
    a.emit(CALL, 0, 0, 0, BPF_FUNC_MAP_LOOKUP_ELEM); // r0 = bits (or null)
    a.emit(MOV64_REG, R5, R7, 0, 0); //                 r5 = &s[STREAM_AT + 4 * stream]
    a.emit(LSH64_IMM, R5, 0, 0, 5);
    a.emit(ADD64_REG, R5, R9, 0, 0);
    let sw = |k: usize| w(st::STREAM_AT + k);
    inc(&mut a, R5, sw(st::RECEIVED));
    a.jump(JEQ_IMM, R0, 0, 0, new_seq);
    a.emit(MOV64_REG, R1, R6, 0, 0); //                 r0 = &bits[(seq >> 6) & (WORDS - 1)]
    a.emit(RSH64_IMM, R1, 0, 0, 6);
    a.emit(AND64_IMM, R1, 0, 0, (WORDS - 1) as i32);
    a.emit(LSH64_IMM, R1, 0, 0, 3);
    a.emit(ADD64_REG, R0, R1, 0, 0);
    a.emit(MOV64_REG, R2, R6, 0, 0); //                 r3 = 1 << (seq & 63)
    a.emit(AND64_IMM, R2, 0, 0, 63);
    a.emit(MOV64_IMM, R3, 0, 0, 1);
    a.emit(LSH64_REG, R3, R2, 0, 0);
    a.emit(LDX_DW, R1, R0, 0, 0);
    a.jump(JSET_REG, R1, R3, 0, dup);
    a.emit(OR64_REG, R1, R3, 0, 0);
    a.emit(STX_DW, R0, R1, 0, 0);
    a.bind(new_seq);
    a.emit(MOV64_REG, R1, R6, 0, 0); //                 r1 = seq + 1
    a.emit(ADD64_IMM, R1, 0, 0, 1);
    a.emit(LDX_DW, R2, R5, sw(st::TOP1), 0);
    a.jump(JGE_REG, R1, R2, 0, new_top);
    inc(&mut a, R5, sw(st::REORDERED));
    a.jump(JA, 0, 0, 0, latency);
    a.bind(new_top);
    a.emit(STX_DW, R5, R1, sw(st::TOP1), 0);
    a.jump(JA, 0, 0, 0, latency);
    a.bind(dup);
    inc(&mut a, R5, sw(st::DUPLICATES));
    a.bind(latency);
    inc(&mut a, R9, w(st::LAT_N));
    a.emit(LDX_DW, R1, R9, w(st::LAT_SUM), 0);
    a.emit(ADD64_REG, R1, R8, 0, 0);
    a.emit(STX_DW, R9, R1, w(st::LAT_SUM), 0);
    let not_min = a.label();
    a.emit(LDX_DW, R1, R9, w(st::LAT_MIN), 0);
    a.jump(JGE_REG, R8, R1, 0, not_min);
    a.emit(STX_DW, R9, R8, w(st::LAT_MIN), 0);
    a.bind(not_min);
    let not_max = a.label();
    a.emit(LDX_DW, R1, R9, w(st::LAT_MAX), 0);
    a.jump(JLE_REG, R8, R1, 0, not_max);
    a.emit(STX_DW, R9, R8, w(st::LAT_MAX), 0);
    a.bind(not_max);
    // The bucket (see the module docs).
    a.emit(MOV64_REG, R1, R8, 0, 0);
    a.jump(JLT_IMM, R8, 0, 64, have_idx);
    a.emit(MOV64_REG, R2, R8, 0, 0); //                 r2 = x, r3 = e
    a.emit(MOV64_IMM, R3, 0, 0, 0);
    for k in [32, 16, 8, 4, 2, 1] {
        let skip = a.label();
        a.emit(MOV64_REG, R4, R2, 0, 0);
        a.emit(RSH64_IMM, R4, 0, 0, k);
        a.jump(JEQ_IMM, R4, 0, 0, skip);
        a.emit(MOV64_REG, R2, R4, 0, 0);
        a.emit(ADD64_IMM, R3, 0, 0, k);
        a.bind(skip);
    }
    a.emit(MOV64_REG, R4, R3, 0, 0); //                 r1 = (lat >> (e - 5)) & 31
    a.emit(ADD64_IMM, R4, 0, 0, -5);
    a.emit(RSH64_REG, R1, R4, 0, 0);
    a.emit(AND64_IMM, R1, 0, 0, 31);
    a.emit(ADD64_IMM, R3, 0, 0, -6); //                 r1 += 64 + 32 (e - 6)
    a.emit(LSH64_IMM, R3, 0, 0, 5);
    a.emit(ADD64_REG, R1, R3, 0, 0);
    a.emit(ADD64_IMM, R1, 0, 0, 64);
    a.bind(have_idx);
    a.jump(JGE_IMM, R1, 0, LAT_BUCKETS as i32, drop);
    a.emit(LSH64_IMM, R1, 0, 0, 3);
    a.emit(ADD64_REG, R1, R9, 0, 0);
    a.emit(LDX_DW, R2, R1, w(st::BUCKETS_AT), 0);
    a.emit(ADD64_IMM, R2, 0, 0, 1);
    a.emit(STX_DW, R1, R2, w(st::BUCKETS_AT), 0);
    let (drop_code, pass_code) = match hook {
        CountHook::Xdp => (XDP_DROP as i32, XDP_PASS as i32),
        CountHook::TcxIngress => (TCX_DROP, TCX_PASS),
    };
    a.bind(drop);
    a.emit(MOV64_IMM, R0, 0, 0, drop_code);
    a.emit(EXIT, 0, 0, 0, 0);

    a.bind(stale);
    inc(&mut a, R9, w(st::STALE));
    a.jump(JA, 0, 0, 0, drop);
    a.bind(unknown);
    inc(&mut a, R9, w(st::UNKNOWN));
    a.jump(JA, 0, 0, 0, drop);
    if hook == CountHook::Xdp {
        a.bind(wrong_queue);
        inc(&mut a, R9, w(st::OTHER_QUEUE));
        a.jump(JA, 0, 0, 0, pass);
    }
    a.bind(other);
    inc(&mut a, R9, w(st::OTHER));
    a.bind(pass);
    a.emit(MOV64_IMM, R0, 0, 0, pass_code);
    a.emit(EXIT, 0, 0, 0, 0);
    a.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        let maps = CountMaps { stats: 3, seen: 4 };
        let xdp = count_program(CountHook::Xdp, 0x5336, 2, maps);
        let tcx = count_program(CountHook::TcxIngress, 0x5336, 2, maps);
        // Two map loads take two slots each; tcx has no queue check but may pull.
        assert_eq!(xdp.len(), 162);
        assert_eq!(tcx.len(), 163);
        // The magic and the stream count are immediates of the program.
        assert!(xdp.iter().any(|i| i.imm == 0x5336));
    }
}
