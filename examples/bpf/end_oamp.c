/* Multipath-aware traceroute: End.OAMP as an End.BPF program (Xhonneux et al., CoNEXT'18,
 * §4.3), with sr6's extension helper sr6_ecmp_nexthops.
 *
 *   ip -6 route add fc00:f::3/128 encap seg6local action End.BPF endpoint obj end_oamp.o sec end_oamp dev r-p
 *
 * The probe: any IPv6 packet whose SRH is [target, End.OAMP SID] (Segments Left 1), sent
 * by the prober from the address that should get the answer. The question is "which next
 * hops does this router have towards target?": after the segment is consumed, the
 * destination is the target; the program asks the router's main table for its route's
 * next hops (sr6_ecmp_nexthops), writes them into an answer TLV appended to the probe's
 * SRH (bpf_lwt_seg6_adjust_srh, bpf_lwt_seg6_store_bytes), and sends the probe back to
 * its source: End.B6.Encaps through bpf_lwt_seg6_action, with the SRH [probe's source].
 * The prober receives
 *
 *   IPv6 (this router's address -> prober) / SRH [prober] /
 *     IPv6 (prober -> target) / SRH [target, OAMP SID] + answer TLV / the probe's payload
 *
 * The answer TLV (136 bytes, type TLV_OAMP_ANSWER = 125, from RFC 8754's experimental
 * range):
 *
 *   | Type (125) | Length (134) | Count | Total |
 *   | Status | Reserved (3 bytes)                |
 *   | Next hop 1 (16 bytes) ... Next hop 8       |
 *
 * Count: next hops written (at most 8); Total: how many the route has (at most 255);
 * Status: 0, or the helper's error as a positive errno (2: no route, 95: the helper is
 * not there). The unused slots are zero.
 *
 * The kernel has no helper that lists a route's next hops (the paper added one to its
 * kernel); sr6 provides sr6_ecmp_nexthops (srv6.h, docs/bpf.md) and the kernel refuses
 * this object at load ("invalid func unknown#32595"). */
#include "srv6.h"

#define MAX_HOPS 8

struct answer_tlv {
	__u8 type;
	__u8 len;
	__u8 count;
	__u8 total;
	__u8 status;
	__u8 reserved[3];
	__u8 hops[MAX_HOPS][16];
} __attribute__((packed));

/* The SRH End.B6.Encaps pushes: one segment, the prober. */
struct back_srh {
	struct srh h;
	__u8 seg[16];
} __attribute__((packed));

/* Probes answered, in .bss. */
__u64 answered;

SEC("end_oamp")
int do_end_oamp(struct __sk_buff *skb)
{
	struct answer_tlv a;
	struct back_srh back;
	struct srh h;
	__u8 target[16];
	__u32 end;
	long n;

	__builtin_memset(&a, 0, sizeof(a));
	__builtin_memset(&back, 0, sizeof(back));
	/* The target (the destination now that the segment is consumed) and the prober. */
	if (bpf_skb_load_bytes(skb, 24, target, 16) || bpf_skb_load_bytes(skb, 8, back.seg, 16))
		return BPF_DROP;
	if (bpf_skb_load_bytes(skb, 40, &h, sizeof(h)) || h.type != SRH_TYPE)
		return BPF_DROP;

	n = sr6_ecmp_nexthops(skb, target, 0, a.hops, sizeof(a.hops));
	a.type = TLV_OAMP_ANSWER;
	a.len = sizeof(a) - 2;
	if (n < 0) {
		a.status = -n;
	} else {
		a.total = n > 255 ? 255 : n;
		a.count = n > MAX_HOPS ? MAX_HOPS : n;
	}

	/* The answer at the end of the SRH's TLVs. */
	end = 40 + ((__u32)h.hdrlen + 1) * 8;
	if (bpf_lwt_seg6_adjust_srh(skb, end, sizeof(a)))
		return BPF_DROP;
	if (bpf_lwt_seg6_store_bytes(skb, end, &a, sizeof(a)))
		return BPF_DROP;

	/* Back to the prober. */
	back.h.hdrlen = (sizeof(back) - 8) / 8;
	back.h.type = SRH_TYPE;
	if (bpf_lwt_seg6_action(skb, SEG6_LOCAL_ACTION_END_B6_ENCAP, &back, sizeof(back)))
		return BPF_DROP;
	__sync_fetch_and_add(&answered, 1);
	return BPF_REDIRECT;
}

char _license[] SEC("license") = "GPL";
