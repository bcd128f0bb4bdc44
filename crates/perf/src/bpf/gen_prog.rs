//! The traffic generator's XDP program ([`super::LiveFrames`]), assembled like the
//! router's (`sr6_io::af_xdp`) with `sr6_io::bpf::asm`. It runs under
//! `BPF_PROG_TEST_RUN` in live-frame mode, many times per call, and each run either
//! sends one packet (`XDP_TX`) or, when the next packet is not due yet, does nothing (`XDP_DROP`, the page is recycled at once): the pacing is done here,
//! against `bpf_ktime_get_ns`, to a fraction of a nanosecond — not by the system call
//! rate, since each call costs tens of microseconds of page-pool setup.
//!
//! The calls run the program as if the frames arrived on another device (`lo`), and it
//! redirects them out of the device it is attached to (see `live_frames.rs` for why it
//! is attached); a frame that really arrived on that device is passed to the kernel
//! untouched. (XDP metadata would be a weaker mark: a kernel forwarder writes into the
//! headroom of the pages it forwards, and the pages come back to the generator's pool.)
//!
//! ```c
//! struct ctl {                 /* one array-map entry, written by user space */
//!     __u64 next;              /* when the next slot is due, ns << FP_SHIFT */
//!     __u64 interval;          /* between slots, ns << FP_SHIFT (0: unpaced) */
//!     __u64 sent;              /* slots sent */
//!     __u64 late;              /* slots given up: the generator was too far behind */
//!     __u64 target;            /* slots of the run */
//!     __u64 lag;               /* how late a packet may be, ns << FP_SHIFT */
//!     __u64 iters;             /* runs of the program */
//!     __u64 last;              /* when the last packet went, ns << FP_SHIFT */
//!     __u64 gap;               /* the least time between two packets, ns << FP_SHIFT */
//!     __u64 start;             /* when the first slot was, ns << FP_SHIFT */
//!     __u64 first_late;        /* when slots were first given up, ns << FP_SHIFT */
//!     __u32 rr, pad;           /* the next stream */
//!     __u64 prev;              /* when the program last ran, ns << FP_SHIFT */
//!     __u64 max_stall;         /* the longest time between two runs */
//!     __u64 stalled;           /* the sum of those times of 20 µs or more */
//!     __u64 tcache;            /* the last clock reading, ns << FP_SHIFT */
//!     __u64 reuse;             /* sends that may still use it */
//!     __u64 reuse_max;         /* REUSE, or 0 where it would break the gap rule */
//!     __u32 seq[N];            /* each stream's next sequence number */
//! };
//! SEC("xdp") int sr6_gen(struct xdp_md *ctx)
//! {
//!     void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
//!     if (ctx->ingress_ifindex == OUT) return XDP_PASS;           /* really received */
//!     if (data + LEN > end) return XDP_DROP;
//!     struct ctl *c = bpf_map_lookup_elem(&ctl, &zero);
//!     if (!c) return XDP_DROP;
//!     c->iters++;
//!     if (c->sent + c->late >= c->target) return XDP_DROP;       /* done */
//!     __u64 now, t, next = c->next;
//!     if (c->reuse && c->tcache >= next + c->interval) {   /* a slot behind: due */
//!         c->reuse--; t = c->tcache; now = t >> FP_SHIFT;
//!         goto send;                  /* no gap check: at most REUSE + 1 in a row */
//!     }
//!     now = bpf_ktime_get_ns(); t = now << FP_SHIFT;
//!     c->tcache = t; c->reuse = c->reuse_max;
//!     __u64 d = t - c->prev;              /* the loop's stalls: softirqs, preemption */
//!     if (c->prev && d >= STALL_FLOOR) { c->stalled += d; c->max_stall = max(c->max_stall, d); }
//!     c->prev = t;
//!     if (!next) next = c->start = t;     /* the schedule starts with the first run */
//!     if (t < next) return XDP_DROP;                              /* not yet */
//!     if (t - c->last < c->gap) return XDP_DROP;   /* catching up, but not in one burst */
//!     c->last = t;
//! send:
//!     if (t - next > c->lag && c->interval) {     /* too far behind: give slots up */
//!         if (!c->first_late) c->first_late = t;
//!         __u64 skip = min((t - next) / c->interval, c->target - c->sent - c->late);
//!         c->late += skip; next += skip * c->interval;
//!         if (c->sent + c->late >= c->target) return XDP_DROP;
//!     }
//!     c->next = next + c->interval;
//!     c->sent++;
//!     __u32 i = c->rr; c->rr = i + 1 < N ? i + 1 : 0;
//!     switch (i) {                                                /* one case per stream */
//!     case i: {
//!         void *tmpl = bpf_map_lookup_elem(&templates, &i);
//!         if (!tmpl) return XDP_DROP;
//!         memcpy(data, tmpl, LEN);
//!         __u32 s = c->seq[i]++;
//!         *(__be32 *)(data + SEQ_AT) = htonl(s);
//!         *(__be64 *)(data + SEQ_AT + 4) = cpu_to_be64(now);
//!         /* RFC 1624: the template's checksum (sequence and time zero) plus the six
//!            16-bit words just written */
//!         __u64 sum = BASE_i;                                     /* ~template checksum */
//!         for (int k = 0; k < 12; k += 2) sum += *(__u16 *)(data + SEQ_AT + k);
//!         sum = (sum & 0xffff) + (sum >> 16);
//!         sum = (sum & 0xffff) + (sum >> 16);
//!         __u16 x = ~sum;
//!         *(__u16 *)(data + CSUM_AT_i) = x ? x : 0xffff;          /* UDP: 0 is "none" */
//!         return bpf_redirect(OUT, 0);
//!     }
//!     }
//!     return XDP_DROP;
//! }
//! ```
//!
//! `OUT`, `LEN`, `SEQ_AT`, `CSUM_AT_i` and `BASE_i` are immediates: the program is assembled
//! for its templates, which all have one length (the frame the kernel hands the program
//! is that long; each run overwrites it with the stream's template). The 16-bit loads
//! read wire bytes in host order, and `BASE_i` is taken the same way; the
//! ones'-complement sum does not depend on byte order (RFC 1071 §2(B)), so the stored
//! checksum is right on either endianness.

use sr6_io::bpf::asm::*;
use sr6_io::bpf::Insn;
/// Times in the control block are nanoseconds times 2^FP_SHIFT (good for 36 years of
/// uptime; intervals to 1/16 ns).
pub(crate) const FP_SHIFT: u32 = 4;
/// Gaps between two runs of at least this long (20 µs, in ns << FP_SHIFT) count as
/// stalls of the loop.
pub(crate) const STALL_FLOOR_FP: i32 = 20_000 << FP_SHIFT;
/// Sends that may follow one clock reading without another, while that reading shows
/// the generator a whole slot behind (so every such slot is due): reading the clock
/// costs ~35 ns on this project's VM, a tenth of a packet at full speed. The packets
/// they send carry that reading as their timestamp, at most this many packet times
/// (~1 µs at 2.5 Mpps) early; a generator on schedule reads the clock every time.
/// Such sends go back to back, ignoring the catch-up gap: user space allows them
/// (`reuse_max`) only at rates where that gap is shorter than a send anyway
/// ([`super::live_frames`]), so a generator behind its schedule at the rates SUTs are
/// measured at still catches up evenly.
pub(crate) const REUSE: u64 = 3;

/// Offsets in the control block (`struct ctl` above).
pub(crate) mod ctl {
    pub(crate) const NEXT: usize = 0;
    pub(crate) const INTERVAL: usize = 8;
    pub(crate) const SENT: usize = 16;
    pub(crate) const LATE: usize = 24;
    pub(crate) const TARGET: usize = 32;
    pub(crate) const LAG: usize = 40;
    pub(crate) const ITERS: usize = 48;
    pub(crate) const LAST: usize = 56;
    pub(crate) const GAP: usize = 64;
    pub(crate) const START: usize = 72;
    pub(crate) const FIRST_LATE: usize = 80;
    pub(crate) const RR: usize = 88;
    pub(crate) const PREV: usize = 96;
    pub(crate) const MAX_STALL: usize = 104;
    pub(crate) const STALLED: usize = 112;
    pub(crate) const TCACHE: usize = 120;
    pub(crate) const REUSE: usize = 128;
    pub(crate) const REUSE_MAX: usize = 136;
    pub(crate) const SEQ: usize = 144;
    /// Bytes of the block for `n` streams.
    pub(crate) fn len(n: usize) -> usize {
        SEQ + 4 * n
    }
}

/// Where the program writes in one template, in bytes from the start of the frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Layout {
    /// The big-endian u32 sequence number; the big-endian u64 timestamp follows it.
    pub seq_at: u32,
    /// The 16-bit checksum that covers those 12 bytes.
    pub csum_at: u32,
    /// The complement of the checksum field as the template holds it (sequence and
    /// timestamp zero), read as a host-order u16.
    pub base: u16,
}

/// The file descriptors of the program's maps.
#[derive(Debug, Clone, Copy)]
pub(crate) struct GenMaps {
    /// One entry: the control block.
    pub ctl: i32,
    /// One entry per stream: its template (`len` bytes, rounded up to 8).
    pub templates: i32,
}

/// Assembles the program for `streams` of `len`-byte frames (stream `i` is
/// `streams[i]`), sent out of device `out`.
pub(crate) fn gen_program(out: u32, len: u32, streams: &[Layout], maps: GenMaps) -> Vec<Insn> {
    let c = |off: usize| off as i16;

    let mut a = Asm::new();
    let pass = a.label();
    let drop = a.label();
    let on_time = a.label();
    let cases: Vec<Label> = streams.iter().map(|_| a.label()).collect();

    a.emit(MOV64_REG, R6, R1, 0, 0); //                 r6 = ctx
    a.emit(LDX_W, R1, R6, MD_INGRESS_IFINDEX, 0);
    a.jump(JEQ_IMM, R1, 0, out as i32, pass); //        really received on OUT
    a.emit(LDX_W, R7, R6, MD_DATA, 0); //               r7 = data (kept across calls)
    a.emit(LDX_W, R3, R6, MD_DATA_END, 0); //           r3 = data_end
    a.emit(MOV64_REG, R4, R7, 0, 0); //                 r4 = data + LEN
    a.emit(ADD64_IMM, R4, 0, 0, len as i32);
    a.jump(JGT_REG, R4, R3, 0, drop); //                if (r4 > end) drop
    a.emit(ST_W, R10, 0, -4, 0); //                     key = 0 (on the stack)
    a.emit(MOV64_REG, R2, R10, 0, 0);
    a.emit(ADD64_IMM, R2, 0, 0, -4);
    a.ld_map_fd(R1, maps.ctl);
    a.emit(CALL, 0, 0, 0, BPF_FUNC_MAP_LOOKUP_ELEM);
    a.jump(JEQ_IMM, R0, 0, 0, drop);
    a.emit(MOV64_REG, R8, R0, 0, 0); //                 r8 = c
    a.emit(LDX_DW, R1, R8, c(ctl::ITERS), 0); //        c->iters++
    a.emit(ADD64_IMM, R1, 0, 0, 1);
    a.emit(STX_DW, R8, R1, c(ctl::ITERS), 0);
    // Done?
    a.emit(LDX_DW, R1, R8, c(ctl::SENT), 0);
    a.emit(LDX_DW, R2, R8, c(ctl::LATE), 0);
    a.emit(ADD64_REG, R1, R2, 0, 0);
    a.emit(LDX_DW, R2, R8, c(ctl::TARGET), 0);
    a.jump(JGE_REG, R1, R2, 0, drop); //                sent + late >= target
                                      // A slot behind at the last clock reading: due, without reading it again.
    let read_clock = a.label();
    let reused = a.label();
    a.emit(LDX_DW, R3, R8, c(ctl::REUSE), 0);
    a.jump(JEQ_IMM, R3, 0, 0, read_clock);
    a.emit(LDX_DW, R1, R8, c(ctl::TCACHE), 0); //       r1 = t (the last reading)
    a.emit(LDX_DW, R2, R8, c(ctl::NEXT), 0); //         r2 = next
    a.emit(LDX_DW, R4, R8, c(ctl::INTERVAL), 0);
    a.emit(ADD64_REG, R4, R2, 0, 0); //                 r4 = next + interval
    a.jump(JLT_REG, R1, R4, 0, read_clock);
    a.emit(ADD64_IMM, R3, 0, 0, -1); //                 c->reuse--
    a.emit(STX_DW, R8, R3, c(ctl::REUSE), 0);
    a.emit(MOV64_REG, R9, R1, 0, 0); //                 r9 = now (ns)
    a.emit(RSH64_IMM, R9, 0, 0, FP_SHIFT as i32);
    a.jump(JA, 0, 0, 0, reused);
    // Due?
    a.bind(read_clock);
    a.emit(CALL, 0, 0, 0, BPF_FUNC_KTIME_GET_NS);
    a.emit(MOV64_REG, R9, R0, 0, 0); //                 r9 = now (ns)
    a.emit(MOV64_REG, R1, R0, 0, 0); //                 r1 = now << FP_SHIFT
    a.emit(LSH64_IMM, R1, 0, 0, FP_SHIFT as i32);
    a.emit(STX_DW, R8, R1, c(ctl::TCACHE), 0); //       c->tcache = t, c->reuse = c->reuse_max
    a.emit(LDX_DW, R3, R8, c(ctl::REUSE_MAX), 0);
    a.emit(STX_DW, R8, R3, c(ctl::REUSE), 0);
    // How long since the previous run: the loop's stalls (softirqs, preemption).
    let no_prev = a.label();
    let not_max = a.label();
    a.emit(LDX_DW, R3, R8, c(ctl::PREV), 0);
    a.emit(STX_DW, R8, R1, c(ctl::PREV), 0);
    a.jump(JEQ_IMM, R3, 0, 0, no_prev);
    a.emit(MOV64_REG, R4, R1, 0, 0); //                 r4 = t - prev
    a.emit(SUB64_REG, R4, R3, 0, 0);
    a.jump(JLT_IMM, R4, 0, STALL_FLOOR_FP, no_prev);
    a.emit(LDX_DW, R5, R8, c(ctl::STALLED), 0); //      c->stalled += r4
    a.emit(ADD64_REG, R5, R4, 0, 0);
    a.emit(STX_DW, R8, R5, c(ctl::STALLED), 0);
    a.emit(LDX_DW, R5, R8, c(ctl::MAX_STALL), 0);
    a.jump(JLE_REG, R4, R5, 0, not_max);
    a.emit(STX_DW, R8, R4, c(ctl::MAX_STALL), 0);
    a.bind(not_max);
    a.bind(no_prev);
    a.emit(LDX_DW, R2, R8, c(ctl::NEXT), 0); //         r2 = next
    let started = a.label();
    a.jump(JNE_IMM, R2, 0, 0, started); //              the first run starts the schedule
    a.emit(MOV64_REG, R2, R1, 0, 0);
    a.emit(STX_DW, R8, R1, c(ctl::START), 0);
    a.bind(started);
    a.jump(JLT_REG, R1, R2, 0, drop); //                not yet
    a.emit(MOV64_REG, R3, R1, 0, 0); //                 r3 = t - last
    a.emit(LDX_DW, R4, R8, c(ctl::LAST), 0);
    a.emit(SUB64_REG, R3, R4, 0, 0);
    a.emit(LDX_DW, R4, R8, c(ctl::GAP), 0);
    a.jump(JLT_REG, R3, R4, 0, drop); //                too soon after the last one
    a.emit(STX_DW, R8, R1, c(ctl::LAST), 0); //         c->last = t
    a.bind(reused); //                                  r1 = t, r2 = next, r9 = now
    a.emit(MOV64_REG, R3, R1, 0, 0); //                 r3 = t - next
    a.emit(SUB64_REG, R3, R2, 0, 0);
    a.emit(LDX_DW, R5, R8, c(ctl::LAG), 0);
    a.jump(JLE_REG, R3, R5, 0, on_time); //             within the lag
    a.emit(LDX_DW, R4, R8, c(ctl::INTERVAL), 0);
    a.jump(JEQ_IMM, R4, 0, 0, on_time); //              unpaced
    a.emit(DIV64_REG, R3, R4, 0, 0); //                 r3 = slots to give up
    let seen = a.label();
    a.emit(LDX_DW, R5, R8, c(ctl::FIRST_LATE), 0); //   the first time it happened
    a.jump(JNE_IMM, R5, 0, 0, seen);
    a.emit(STX_DW, R8, R1, c(ctl::FIRST_LATE), 0);
    a.bind(seen);
    a.emit(LDX_DW, R5, R8, c(ctl::LATE), 0); //         r5 = c->late
    let clamped = a.label();
    a.emit(LDX_DW, R6, R8, c(ctl::TARGET), 0); //       r6 = slots left (ctx is not needed now)
    a.emit(LDX_DW, R0, R8, c(ctl::SENT), 0);
    a.emit(SUB64_REG, R6, R0, 0, 0);
    a.emit(SUB64_REG, R6, R5, 0, 0);
    a.jump(JLE_REG, R3, R6, 0, clamped); //             never give up more than are left
    a.emit(MOV64_REG, R3, R6, 0, 0);
    a.bind(clamped);
    a.emit(ADD64_REG, R5, R3, 0, 0); //                 c->late += r3
    a.emit(STX_DW, R8, R5, c(ctl::LATE), 0);
    a.emit(MUL64_REG, R3, R4, 0, 0); //                 next += r3 * interval
    a.emit(ADD64_REG, R2, R3, 0, 0);
    a.emit(LDX_DW, R3, R8, c(ctl::SENT), 0); //         done now?
    a.emit(ADD64_REG, R3, R5, 0, 0);
    a.emit(LDX_DW, R4, R8, c(ctl::TARGET), 0);
    a.jump(JGE_REG, R3, R4, 0, drop);
    a.bind(on_time);
    a.emit(LDX_DW, R4, R8, c(ctl::INTERVAL), 0); //     c->next = next + interval
    a.emit(ADD64_REG, R2, R4, 0, 0);
    a.emit(STX_DW, R8, R2, c(ctl::NEXT), 0);
    a.emit(LDX_DW, R1, R8, c(ctl::SENT), 0); //         c->sent++
    a.emit(ADD64_IMM, R1, 0, 0, 1);
    a.emit(STX_DW, R8, R1, c(ctl::SENT), 0);
    // The stream, round robin.
    a.emit(LDX_W, R1, R8, c(ctl::RR), 0); //            r1 = i
    a.emit(MOV64_REG, R2, R1, 0, 0);
    a.emit(ADD32_IMM, R2, 0, 0, 1);
    let stored = a.label();
    a.jump(JLT_IMM32, R2, 0, streams.len() as i32, stored);
    a.emit(MOV64_IMM, R2, 0, 0, 0);
    a.bind(stored);
    a.emit(STX_W, R8, R2, c(ctl::RR), 0);
    for (i, &l) in cases.iter().enumerate() {
        a.jump(JEQ_IMM, R1, 0, i as i32, l);
    }
    a.jump(JA, 0, 0, 0, drop);

    for (i, (l, &case)) in streams.iter().zip(&cases).enumerate() {
        let seq_at = l.seq_at as i16;
        let csum_at = l.csum_at as i16;
        let store = a.label();
        a.bind(case);
        a.emit(ST_W, R10, 0, -8, i as i32); //          key = i
        a.emit(MOV64_REG, R2, R10, 0, 0);
        a.emit(ADD64_IMM, R2, 0, 0, -8);
        a.ld_map_fd(R1, maps.templates);
        a.emit(CALL, 0, 0, 0, BPF_FUNC_MAP_LOOKUP_ELEM);
        a.jump(JEQ_IMM, R0, 0, 0, drop);
        // memcpy(data, tmpl, LEN): 8 bytes at a time, then the tail.
        let mut off = 0u32;
        for (size, ld, st) in [(8u32, LDX_DW, STX_DW), (4, LDX_W, STX_W), (2, LDX_H, STX_H), (1, LDX_B, STX_B)] {
            while len - off >= size {
                a.emit(ld, R1, R0, off as i16, 0);
                a.emit(st, R7, R1, off as i16, 0);
                off += size;
            }
        }
        let seq_off = c(ctl::SEQ + 4 * i);
        a.emit(LDX_W, R1, R8, seq_off, 0); //           r1 = c->seq[i]++
        a.emit(MOV64_REG, R2, R1, 0, 0);
        a.emit(ADD32_IMM, R2, 0, 0, 1);
        a.emit(STX_W, R8, R2, seq_off, 0);
        a.emit(TO_BE, R1, 0, 0, 32); //                 the sequence number, big-endian
        a.emit(STX_W, R7, R1, seq_at, 0);
        a.emit(MOV64_REG, R1, R9, 0, 0); //             the timestamp, big-endian
        a.emit(TO_BE, R1, 0, 0, 64);
        a.emit(STX_DW, R7, R1, seq_at + 4, 0);
        a.emit(MOV64_IMM, R1, 0, 0, i32::from(l.base)); // r1 = BASE
        for k in 0..6 {
            a.emit(LDX_H, R2, R7, seq_at + 2 * k, 0); // r1 += 16-bit word k
            a.emit(ADD64_REG, R1, R2, 0, 0);
        }
        for _ in 0..2 {
            a.emit(MOV64_REG, R2, R1, 0, 0); //         r1 = (r1 & 0xffff) + (r1 >> 16)
            a.emit(RSH64_IMM, R2, 0, 0, 16);
            a.emit(AND64_IMM, R1, 0, 0, 0xffff);
            a.emit(ADD64_REG, R1, R2, 0, 0);
        }
        a.emit(XOR64_IMM, R1, 0, 0, 0xffff); //         r1 = ~r1 (16 bits)
        a.jump(JNE_IMM, R1, 0, 0, store);
        a.emit(MOV64_IMM, R1, 0, 0, 0xffff); //         0 -> 0xffff
        a.bind(store);
        a.emit(STX_H, R7, R1, csum_at, 0);
        a.emit(MOV64_IMM, R1, 0, 0, out as i32); //     return bpf_redirect(OUT, 0)
        a.emit(MOV64_IMM, R2, 0, 0, 0);
        a.emit(CALL, 0, 0, 0, BPF_FUNC_REDIRECT);
        a.emit(EXIT, 0, 0, 0, 0);
    }
    a.bind(pass);
    a.emit(MOV64_IMM, R0, 0, 0, XDP_PASS as i32);
    a.emit(EXIT, 0, 0, 0, 0);
    a.bind(drop);
    a.emit(MOV64_IMM, R0, 0, 0, XDP_DROP as i32);
    a.emit(EXIT, 0, 0, 0, 0);
    a.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prog(n: usize) -> Vec<Insn> {
        let l = Layout { seq_at: 66, csum_at: 60, base: 0x1234 };
        gen_program(9, 78, &vec![l; n], GenMaps { ctl: 5, templates: 6 })
    }

    #[test]
    fn every_jump_lands_inside_the_program() {
        for n in 1..=3 {
            let p = prog(n);
            for (i, insn) in p.iter().enumerate() {
                let class = insn.code & 0x07;
                if (class == 0x05 || class == 0x06) && insn.code != CALL && insn.code != EXIT {
                    let t = i as isize + 1 + insn.off as isize;
                    assert!(t > i as isize && (t as usize) < p.len(), "insn {i} jumps to {t}");
                }
            }
        }
    }

    #[test]
    fn the_copy_covers_the_frame_exactly() {
        // 78 bytes = 9 x 8 + 4 + 2: stores at 0, 8, ..., 64, then 72 (u32), 76 (u16).
        let p = prog(1);
        let stores: Vec<(u8, i16)> = p
            .iter()
            .filter(|i| [STX_DW, STX_W, STX_H, STX_B].contains(&i.code) && (i.regs & 0xf) == 7)
            .map(|i| (i.code, i.off))
            .take(11)
            .collect();
        let mut want: Vec<(u8, i16)> = (0..9).map(|k| (STX_DW, 8 * k)).collect();
        want.push((STX_W, 72));
        want.push((STX_H, 76));
        if cfg!(target_endian = "little") {
            assert_eq!(stores, want);
        }
    }

    #[test]
    fn key_encodings() {
        if !cfg!(target_endian = "little") {
            return;
        }
        let p = prog(1);
        // r1 = ctx->ingress_ifindex; if r1 == 9 goto pass
        assert_eq!(p[1].to_bytes(), [0x61, 0x61, 12, 0, 0, 0, 0, 0]);
        assert_eq!(p[2].to_bytes()[..2], [0x15, 0x01]);
        assert_eq!(p[2].imm, 9);
        // *(u32 *)(r10 - 4) = 0
        assert_eq!(p[8].to_bytes(), [0x62, 0x0a, 0xfc, 0xff, 0, 0, 0, 0]);
        // The last eight: r1 = 9; r2 = 0; call bpf_redirect; exit; r0 = XDP_PASS; exit;
        // r0 = XDP_DROP; exit.
        let n = p.len();
        assert_eq!(p[n - 8].to_bytes(), [0xb7, 0x01, 0, 0, 9, 0, 0, 0]);
        assert_eq!(p[n - 6].to_bytes(), [0x85, 0, 0, 0, 23, 0, 0, 0]);
        assert_eq!(p[n - 4].to_bytes(), [0xb7, 0x00, 0, 0, 2, 0, 0, 0]);
        assert_eq!(p[n - 2].to_bytes(), [0xb7, 0x00, 0, 0, 1, 0, 0, 0]);
        // A byte swap to big-endian and a 64-bit unsigned division are in there.
        assert!(p.iter().any(|i| i.code == TO_BE && i.imm == 64));
        assert!(p.iter().any(|i| i.code == DIV64_REG));
    }
}
