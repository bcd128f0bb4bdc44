/* The actions of bpf_lwt_seg6_action: End.X to fc00:13::2, End.T and End.DT6 in table
 * 100, End.B6 and End.B6.Encaps with the SRH <fc00:3::b1, fc00:3::b2> (addresses of the
 * kernel comparison's topology, tests/oracle/sr6_oracle.py). */
#include "seg6.h"

SEC("end_x")
int do_end_x(struct __sk_buff *skb)
{
	__u8 nh[16] = { 0xfc, 0, 0, 0x13, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2 };

	if (bpf_lwt_seg6_action(skb, SEG6_LOCAL_ACTION_END_X, nh, sizeof(nh)))
		return BPF_DROP;
	return BPF_REDIRECT;
}

SEC("end_t")
int do_end_t(struct __sk_buff *skb)
{
	int table = 100;

	if (bpf_lwt_seg6_action(skb, SEG6_LOCAL_ACTION_END_T, &table, sizeof(table)))
		return BPF_DROP;
	return BPF_REDIRECT;
}

SEC("end_dt6")
int do_end_dt6(struct __sk_buff *skb)
{
	int table = 100;

	if (bpf_lwt_seg6_action(skb, SEG6_LOCAL_ACTION_END_DT6, &table, sizeof(table)))
		return BPF_DROP;
	return BPF_REDIRECT;
}

struct srh2 {
	struct sr6_srh h;
	__u8 segs[2][16];
};

static __always_inline void fill(struct srh2 *s)
{
	__builtin_memset(s, 0, sizeof(*s));
	s->h.hdrlen = 4;
	s->h.type = 4;
	s->h.segments_left = 1;
	s->h.first_segment = 1;
	/* Segment List[0] is the last segment: fc00:3::b2; [1] the first: fc00:3::b1. */
	s->segs[0][0] = 0xfc;
	s->segs[0][3] = 3;
	s->segs[0][15] = 0xb2;
	s->segs[1][0] = 0xfc;
	s->segs[1][3] = 3;
	s->segs[1][15] = 0xb1;
}

SEC("b6_encap")
int do_b6_encap(struct __sk_buff *skb)
{
	struct srh2 s;

	fill(&s);
	if (bpf_lwt_seg6_action(skb, SEG6_LOCAL_ACTION_END_B6_ENCAP, &s, sizeof(s)))
		return BPF_DROP;
	return BPF_REDIRECT;
}

SEC("b6_inline")
int do_b6_inline(struct __sk_buff *skb)
{
	struct srh2 s;

	fill(&s);
	if (bpf_lwt_seg6_action(skb, SEG6_LOCAL_ACTION_END_B6, &s, sizeof(s)))
		return BPF_DROP;
	return BPF_REDIRECT;
}

/* A redirect with no action called. */
SEC("redirect_alone")
int do_redirect_alone(struct __sk_buff *skb)
{
	return BPF_REDIRECT;
}

char _license[] SEC("license") = "GPL";
