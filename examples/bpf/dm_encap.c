/* One-way delay measurement, the head-end (Xhonneux et al., CoNEXT'18, §4.1).
 *
 * An `encap bpf in` program (BPF_PROG_TYPE_LWT_IN) on the route towards the monitored
 * destination. It encapsulates every packet (H.Encaps through bpf_lwt_push_encap,
 * BPF_LWT_ENCAP_SEG6) with an SRH of two segments, [End.DM SID, the packet's own
 * destination], so that all of the flow takes the monitored path; 1 packet in `ratio`
 * also carries a DM TLV with a sequence number and the time it was encapsulated
 * (bpf_ktime_get_ns). At the far end, end_dm.c reads the TLV, reports the delay and
 * decapsulates.
 *
 *   ip -6 route add fc00:3::/64 encap bpf in obj dm_encap.o sec dm_in via fc00:2::2 dev e-r
 *
 * The DM TLV (16 bytes, type TLV_DM = 124, from RFC 8754's experimental range):
 *
 *    0                   1                   2                   3
 *   |  Type (124)   |  Length (14)  |          Reserved (0)         |
 *   |                    Sequence number (probe count)              |
 *   |          Transmit timestamp, ns of CLOCK_MONOTONIC            |
 *   |                       (64 bits, big-endian)                   |
 *
 * Both timestamps are the monotonic clock's, so the delay means something when both ends
 * share that clock (one machine, or hosts whose monotonic clocks are synchronised);
 * under sr6, bpf_ktime_get_ns is the time the packet was received. */
#include "srv6.h"

/* Configuration, in .data: change it with `bpftool map update` in the kernel, `sr6 ctl
 * bpf map update` in sr6 (README.md, "Limits"). */
__u32 ratio = 4;                                        /* 1 in `ratio` packets is a probe */
__u8 dm_sid[16] = { 0xfc, 0, 0, 0x0f, [15] = 0x0d };   /* fc00:f::d, the End.DM SID */

/* State, in .bss. */
__u64 packets; /* packets encapsulated */
__u32 probes;  /* of which carried a DM TLV (the next sequence number) */

struct dm_tlv {
	__u8 type;
	__u8 len;
	__u16 reserved;
	__u32 seq;
	__u64 tx_ns;
} __attribute__((packed));

/* The SRH pushed: 8 + 2 x 16 bytes, then the optional TLV. */
struct dm_srh {
	struct srh h;
	__u8 segs[2][16];
	struct dm_tlv tlv;
} __attribute__((packed));

SEC("dm_in")
int do_dm_in(struct __sk_buff *skb)
{
	struct dm_srh s;
	/* Not atomic: enough for an example (sr6 runs a program on one packet at a time;
	 * two CPUs of the kernel may count one packet twice). */
	__u64 n = packets++;
	__u32 r = ratio;
	int i;

	__builtin_memset(&s, 0, sizeof(s));
	s.h.type = SRH_TYPE;
	s.h.segments_left = 1;
	s.h.last_entry = 1;
	/* Segment 0 (the last): the packet's destination, read from its IPv6 header. */
	if (bpf_skb_load_bytes(skb, 24, s.segs[0], 16))
		return BPF_DROP;
	/* Segment 1 (the first): the End.DM SID. */
	for (i = 0; i < 16; i++)
		s.segs[1][i] = dm_sid[i];

	if (r == 0 || n % r != 0) {
		s.h.hdrlen = (sizeof(s) - sizeof(s.tlv) - 8) / 8;
		if (bpf_lwt_push_encap(skb, BPF_LWT_ENCAP_SEG6, &s, sizeof(s) - sizeof(s.tlv)))
			return BPF_DROP;
		return BPF_OK;
	}
	s.h.hdrlen = (sizeof(s) - 8) / 8;
	s.tlv.type = TLV_DM;
	s.tlv.len = sizeof(s.tlv) - 2;
	s.tlv.seq = bpf_htonl(probes++);
	s.tlv.tx_ns = bpf_cpu_to_be64(bpf_ktime_get_ns());
	if (bpf_lwt_push_encap(skb, BPF_LWT_ENCAP_SEG6, &s, sizeof(s)))
		return BPF_DROP;
	/* BPF_OK after the push: the new destination (the End.DM SID) is routed. */
	return BPF_OK;
}

char _license[] SEC("license") = "GPL";
