/* Maps and global data: a BTF-defined array counter (slot from .rodata), a hash counter
 * per SRH Tag, .bss/.data globals. (legacy.c has the legacy `maps` section, which
 * iproute2 with libbpf 1.x no longer loads.) */
#include "seg6.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, __u64);
} pkts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 2);
	__type(key, __u16);
	__type(value, __u64);
} by_tag SEC(".maps");

const volatile __u32 slot = 2;
__u64 bytes;
__u64 runs = 100;

SEC("count")
int do_count(struct __sk_buff *skb)
{
	__u32 k = slot;
	__u64 *v, *c, one = 1;
	struct sr6_srh *srh;
	__u16 tag;

	v = bpf_map_lookup_elem(&pkts, &k);
	if (v)
		__sync_fetch_and_add(v, 1);
	srh = sr6_srh(skb);
	if (!srh)
		return BPF_DROP;
	tag = srh->tag;
	c = bpf_map_lookup_elem(&by_tag, &tag);
	if (c)
		*c += 1;
	else if (bpf_map_update_elem(&by_tag, &tag, &one, BPF_NOEXIST))
		return BPF_DROP;
	bytes += skb->len;
	runs++;
	return BPF_OK;
}

char _license[] SEC("license") = "GPL";
