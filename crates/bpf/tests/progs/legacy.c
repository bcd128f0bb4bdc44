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

/* A perf event array the legacy way: 4-byte keys and values, two slots. */
struct legacy_map_def legacy_events SEC("maps") = {
	.type = BPF_MAP_TYPE_PERF_EVENT_ARRAY,
	.key_size = 4,
	.value_size = 4,
	.max_entries = 2,
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

SEC("emit_legacy")
int do_emit_legacy(struct __sk_buff *skb)
{
	__u32 len = skb->len;

	return bpf_perf_event_output(skb, &legacy_events, BPF_F_CURRENT_CPU | (8ULL << 32), &len, sizeof(len));
}

char _license[] SEC("license") = "GPL";
