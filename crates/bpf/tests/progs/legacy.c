/* A map in the legacy `maps` section (struct bpf_map_def's layout: type, key_size,
 * value_size, max_entries, map_flags), as older iproute2 and libbpf objects have. */
#include "seg6.h"

struct legacy_map_def {
	unsigned int type;
	unsigned int key_size;
	unsigned int value_size;
	unsigned int max_entries;
	unsigned int map_flags;
};

struct legacy_map_def legacy SEC("maps") = {
	.type = BPF_MAP_TYPE_ARRAY,
	.key_size = 4,
	.value_size = 8,
	.max_entries = 1,
};

SEC("count_legacy")
int do_count_legacy(struct __sk_buff *skb)
{
	__u32 zero = 0;
	__u64 *v = bpf_map_lookup_elem(&legacy, &zero);

	if (v)
		*v += 3;
	return BPF_OK;
}

char _license[] SEC("license") = "GPL";
