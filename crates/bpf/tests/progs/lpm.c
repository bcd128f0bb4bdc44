/* An LPM trie: the program installs fc00:2::/48 -> 0x48 and fc00:2::/64 -> 0x64, looks
 * the packet's new destination up and writes the value found (0 for none) into the Tag. */
#include "seg6.h"

struct lpm_key6 {
	__u32 prefixlen;
	__u8 addr[16];
};

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, 8);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct lpm_key6);
	__type(value, __u16);
} prefixes SEC(".maps");

SEC("lpm_tag")
int do_lpm_tag(struct __sk_buff *skb)
{
	void *end = (void *)(long)skb->data_end;
	struct sr6_ip6 *ip6 = (void *)(long)skb->data;
	struct lpm_key6 k = {};
	__u16 w48 = bpf_htons(0x48), w64 = bpf_htons(0x64), tag = 0, *v;

	if ((void *)(ip6 + 1) > end)
		return BPF_DROP;
	k.addr[0] = 0xfc;
	k.addr[3] = 2;
	k.prefixlen = 48;
	bpf_map_update_elem(&prefixes, &k, &w48, BPF_ANY);
	k.prefixlen = 64;
	bpf_map_update_elem(&prefixes, &k, &w64, BPF_ANY);
	__builtin_memcpy(k.addr, ip6->daddr, 16);
	k.prefixlen = 128;
	v = bpf_map_lookup_elem(&prefixes, &k);
	if (v)
		tag = *v;
	if (bpf_lwt_seg6_store_bytes(skb, sizeof(*ip6) + 6, &tag, sizeof(tag)))
		return BPF_DROP;
	return BPF_OK;
}

char _license[] SEC("license") = "GPL";
