/* One-way delay measurement, the far end: End.DM as an End.BPF program (Xhonneux et al.,
 * CoNEXT'18, §4.1).
 *
 *   ip -6 route add fc00:f::d/128 encap seg6local action End.BPF endpoint obj end_dm.o sec end_dm dev r-e
 *
 * For a packet whose SRH carries dm_encap.c's DM TLV (type 124), it computes the delay,
 * receive time - transmit time, and reports it as an event (bpf_perf_event_output into
 * the perf event array `events`: `sr6 ctl bpf events`, or `bpftool map event_pipe` in
 * the kernel). Then, with or without a TLV, it decapsulates the packet as End.DT6 does
 * (bpf_lwt_seg6_action, SEG6_LOCAL_ACTION_END_DT6, table 0: the main table) and lets the
 * inner packet be routed to its destination.
 *
 * The time: in the kernel, bpf_ktime_get_ns is the time the program runs; under sr6 it is
 * the time the packet was received. Both are CLOCK_MONOTONIC, as dm_encap.c's. */
#include "srv6.h"

struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
} events SEC(".maps");

/* One event a probe, 60 bytes (host byte order; 60 + 4 is a multiple of 8, so the kernel
 * adds no padding to it). */
struct dm_event {
	__u64 delay_ns;   /* rx_ns - tx_ns */
	__u64 tx_ns;      /* the DM TLV's timestamp */
	__u64 rx_ns;      /* bpf_ktime_get_ns() here */
	__u32 seq;        /* the DM TLV's sequence number */
	__u8 src[16];     /* the inner packet's source and destination: the flow measured */
	__u8 dst[16];
} __attribute__((packed));

/* Counters, in .bss (`sr6 ctl bpf map dump name .bss`: 16 bytes, the two in this order). */
struct {
	__u64 decapsulated; /* packets decapsulated */
	__u64 measured;     /* of which carried a DM TLV */
} counters;

SEC("end_dm")
int do_end_dm(struct __sk_buff *skb)
{
	__u8 tlv[16];
	struct srh h;
	struct dm_event ev = {};
	__u32 table = 0, srh_len, tlv_off;

	/* The SRH directly after the IPv6 header, as the head-end pushed it. */
	if (bpf_skb_load_bytes(skb, 40, &h, sizeof(h)) || h.type != SRH_TYPE)
		return BPF_DROP;
	srh_len = ((__u32)h.hdrlen + 1) * 8;
	tlv_off = 40 + 8 + ((__u32)h.last_entry + 1) * 16;
	if (tlv_off + sizeof(tlv) <= 40 + srh_len && !bpf_skb_load_bytes(skb, tlv_off, tlv, sizeof(tlv)) &&
	    tlv[0] == TLV_DM && tlv[1] == sizeof(tlv) - 2) {
		ev.rx_ns = bpf_ktime_get_ns();
		ev.tx_ns = bpf_be64_to_cpu(*(__u64 *)&tlv[8]);
		ev.delay_ns = ev.rx_ns - ev.tx_ns;
		ev.seq = bpf_ntohl(*(__u32 *)&tlv[4]);
		/* The inner IPv6 header's addresses (the SRH's Next Header is 41 after H.Encaps). */
		if (h.nexthdr == NEXTHDR_IPV6) {
			bpf_skb_load_bytes(skb, 40 + srh_len + 8, ev.src, 16);
			bpf_skb_load_bytes(skb, 40 + srh_len + 24, ev.dst, 16);
		}
		bpf_perf_event_output(skb, &events, BPF_F_CURRENT_CPU, &ev, sizeof(ev));
		__sync_fetch_and_add(&counters.measured, 1);
	}
	if (bpf_lwt_seg6_action(skb, SEG6_LOCAL_ACTION_END_DT6, &table, sizeof(table)))
		return BPF_DROP;
	__sync_fetch_and_add(&counters.decapsulated, 1);
	return BPF_REDIRECT;
}

char _license[] SEC("license") = "GPL";
