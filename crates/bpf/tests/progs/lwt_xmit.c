/* `encap bpf xmit` programs (BPF_PROG_TYPE_LWT_XMIT) and an `out` one: an IPv6 or IPv4
 * header pushed by bpf_lwt_push_encap (BPF_LWT_ENCAP_IP), then BPF_LWT_REROUTE or
 * BPF_OK; a drop on UDP. */
#include "seg6.h"

struct sr6_ip4 {
	__u8 vihl;
	__u8 tos;
	__u16 tot_len;
	__u16 id;
	__u16 frag;
	__u8 ttl;
	__u8 proto;
	__u16 check;
	__u8 saddr[4];
	__u8 daddr[4];
} __attribute__((packed));

static __always_inline void ip6_to(struct sr6_ip6 *h, struct __sk_buff *skb, __u8 net)
{
	__builtin_memset(h, 0, sizeof(*h));
	h->vtc = 0x60;
	h->payload_len = bpf_htons(skb->len);
	h->nexthdr = SR6_IPV6;
	h->hop_limit = 60;
	h->saddr[0] = 0xfc;
	h->saddr[3] = 0xff;
	h->saddr[15] = 0x01;
	h->daddr[0] = 0xfc;
	h->daddr[3] = net;
	h->daddr[15] = 0x07;
}

/* IPv6-in-IPv6 toward fc00:3::7: routed again (bpf_lwt_xmit_reroute). */
SEC("xmit_ip6")
int do_xmit_ip6(struct __sk_buff *skb)
{
	struct sr6_ip6 h;

	ip6_to(&h, skb, 0x03);
	if (bpf_lwt_push_encap(skb, BPF_LWT_ENCAP_IP, &h, sizeof(h)))
		return BPF_DROP;
	return BPF_LWT_REROUTE;
}

/* The same header with BPF_OK: sent to the route's own next hop. */
SEC("xmit_ip6_ok")
int do_xmit_ip6_ok(struct __sk_buff *skb)
{
	struct sr6_ip6 h;

	ip6_to(&h, skb, 0x03);
	if (bpf_lwt_push_encap(skb, BPF_LWT_ENCAP_IP, &h, sizeof(h)))
		return BPF_DROP;
	return BPF_OK;
}

/* IPv4-in-IPv4 (protocol 4) toward 10.3.0.7, checksum left 0 for the kernel: rerouted. */
SEC("xmit_ip4")
int do_xmit_ip4(struct __sk_buff *skb)
{
	struct sr6_ip4 h;

	__builtin_memset(&h, 0, sizeof(h));
	h.vihl = 0x45;
	h.tot_len = bpf_htons(skb->len + sizeof(h));
	h.frag = bpf_htons(0x4000);
	h.ttl = 33;
	h.proto = 4;
	h.saddr[0] = 10;
	h.saddr[2] = 13;
	h.saddr[3] = 1;
	h.daddr[0] = 10;
	h.daddr[1] = 3;
	h.daddr[3] = 7;
	if (bpf_lwt_push_encap(skb, BPF_LWT_ENCAP_IP, &h, sizeof(h)))
		return BPF_DROP;
	return BPF_LWT_REROUTE;
}

/* UDP dropped (IPv6 Next Header or IPv4 protocol 17), the rest goes on. */
SEC("drop_udp")
int do_drop_udp(struct __sk_buff *skb)
{
	__u8 v, nh;

	if (bpf_skb_load_bytes(skb, 0, &v, 1))
		return BPF_DROP;
	if (bpf_skb_load_bytes(skb, (v >> 4) == 4 ? 9 : 6, &nh, 1))
		return BPF_DROP;
	return nh == 17 ? BPF_DROP : BPF_OK;
}

char _license[] SEC("license") = "GPL";
