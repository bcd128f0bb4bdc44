/* Tag++ (the End.BPF paper's second function): read the SRH's Tag, write Tag + 1
 * through bpf_lwt_seg6_store_bytes, and set Flags to 0x20 the same way. */
#include "seg6.h"

SEC("tag_inc")
int do_tag_inc(struct __sk_buff *skb)
{
	struct sr6_srh *srh = sr6_srh(skb);
	__u16 tag;
	__u8 flags = 0x20;

	if (!srh)
		return BPF_DROP;
	tag = bpf_htons(bpf_ntohs(srh->tag) + 1);
	if (bpf_lwt_seg6_store_bytes(skb, sizeof(struct sr6_ip6) + 6, &tag, sizeof(tag)))
		return BPF_DROP;
	if (bpf_lwt_seg6_store_bytes(skb, sizeof(struct sr6_ip6) + 5, &flags, sizeof(flags)))
		return BPF_DROP;
	return BPF_OK;
}

char _license[] SEC("license") = "GPL";
