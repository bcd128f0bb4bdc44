/* Shared definitions of sr6-bpf's test programs: the SRH layout (RFC 8754 §2) and the
 * End.BPF return codes and actions (include/uapi/linux/bpf.h, seg6_local.h). */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include <linux/seg6_local.h>

#define SR6_ROUTING 43
#define SR6_IPV6 41

struct sr6_ip6 {
	__u8 vtc;
	__u8 tcfl;
	__u16 flow;
	__u16 payload_len;
	__u8 nexthdr;
	__u8 hop_limit;
	__u8 saddr[16];
	__u8 daddr[16];
} __attribute__((packed));

struct sr6_srh {
	__u8 nexthdr;
	__u8 hdrlen;
	__u8 type;
	__u8 segments_left;
	__u8 first_segment;
	__u8 flags;
	__u16 tag;
} __attribute__((packed));

/* The SRH directly after the IPv6 header, or NULL: what these tests send. */
static __always_inline struct sr6_srh *sr6_srh(struct __sk_buff *skb)
{
	void *data = (void *)(long)skb->data;
	void *end = (void *)(long)skb->data_end;
	struct sr6_ip6 *ip6 = data;
	struct sr6_srh *srh = data + sizeof(*ip6);

	if ((void *)(srh + 1) > end || ip6->nexthdr != SR6_ROUTING)
		return 0;
	return srh;
}
