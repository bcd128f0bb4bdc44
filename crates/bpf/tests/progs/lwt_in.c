/* `encap bpf in` programs (BPF_PROG_TYPE_LWT_IN): an SRH pushed by bpf_lwt_push_encap in
 * encap mode (BPF_LWT_ENCAP_SEG6) and inline (BPF_LWT_ENCAP_SEG6_INLINE), an IPv6
 * header pushed (BPF_LWT_ENCAP_IP) and rerouted, an invalid SRH refused, and a drop on
 * UDP. */
#include "seg6.h"

struct srh2 {
	struct sr6_srh h;
	__u8 segs[2][16];
} __attribute__((packed));

/* fc00:2::99 (segment 0, the last) and fc00:3::5 (segment 1, the first). */
static __always_inline void srh2(struct srh2 *s)
{
	__builtin_memset(s, 0, sizeof(*s));
	s->h.hdrlen = 4;
	s->h.type = 4;
	s->h.segments_left = 1;
	s->h.first_segment = 1;
	s->segs[0][0] = 0xfc;
	s->segs[0][3] = 0x02;
	s->segs[0][15] = 0x99;
	s->segs[1][0] = 0xfc;
	s->segs[1][3] = 0x03;
	s->segs[1][15] = 0x05;
}

SEC("in_encap")
int do_in_encap(struct __sk_buff *skb)
{
	struct srh2 s;

	srh2(&s);
	if (bpf_lwt_push_encap(skb, BPF_LWT_ENCAP_SEG6, &s, sizeof(s)))
		return BPF_DROP;
	return BPF_OK;
}

SEC("in_inline")
int do_in_inline(struct __sk_buff *skb)
{
	struct srh2 s;

	srh2(&s);
	s.h.flags = 0; /* segment 0 becomes the old destination */
	if (bpf_lwt_push_encap(skb, BPF_LWT_ENCAP_SEG6_INLINE, &s, sizeof(s)))
		return BPF_DROP;
	return BPF_OK;
}

/* Segments Left above Last Entry: seg6_validate_srh refuses it; the packet goes on
 * untouched when the helper fails. */
SEC("in_bad_srh")
int do_in_bad_srh(struct __sk_buff *skb)
{
	struct srh2 s;

	srh2(&s);
	s.h.segments_left = 2;
	if (bpf_lwt_push_encap(skb, BPF_LWT_ENCAP_SEG6, &s, sizeof(s)) == 0)
		return BPF_DROP;
	return BPF_OK;
}

/* IPv6-in-IPv6 toward fc00:3::7, then rerouted (bpf_lwt_input_reroute). */
SEC("in_ip6")
int do_in_ip6(struct __sk_buff *skb)
{
	struct sr6_ip6 h;

	__builtin_memset(&h, 0, sizeof(h));
	h.vtc = 0x60;
	h.payload_len = bpf_htons(skb->len);
	h.nexthdr = SR6_IPV6;
	h.hop_limit = 50;
	h.saddr[0] = 0xfc;
	h.saddr[3] = 0xff;
	h.saddr[15] = 0x01;
	h.daddr[0] = 0xfc;
	h.daddr[3] = 0x03;
	h.daddr[15] = 0x07;
	if (bpf_lwt_push_encap(skb, BPF_LWT_ENCAP_IP, &h, sizeof(h)))
		return BPF_DROP;
	return BPF_LWT_REROUTE;
}

/* UDP (the IPv6 header's Next Header 17) dropped, the rest goes on. */
SEC("drop_udp")
int do_drop_udp(struct __sk_buff *skb)
{
	__u8 nh;

	if (bpf_skb_load_bytes(skb, 6, &nh, 1))
		return BPF_DROP;
	return nh == 17 ? BPF_DROP : BPF_OK;
}

char _license[] SEC("license") = "GPL";
