/* Hybrid access: link aggregation by weighted round robin (Xhonneux et al., CoNEXT'18,
 * §4.2), as an End.BPF SID.
 *
 * The paper's CPE encapsulates its upstream traffic with one of two segment lists, one
 * per access link (xDSL, LTE), chosen packet by packet by weighted round robin, with the
 * weights matching the links' capacities. Here the choice is made at an End.BPF SID
 * that the traffic is steered through: after the segment is consumed, each packet goes
 * on by path 1 or path 2 — End.T through bpf_lwt_seg6_action, looking the next segment
 * up in routing table 101 (path 1) or 102 (path 2), which send it along each link.
 *
 *   ip -6 route add default via fc00:11::2 dev r-m1 table 101
 *   ip -6 route add default via fc00:12::2 dev r-m2 table 102
 *   ip -6 route add fc00:f::a/128 encap seg6local action End.BPF endpoint obj link_agg.o sec link_agg dev r-a
 *
 * The weights are the map `weights` (array, key 0: path 1, key 1: path 2, u32 values),
 * read for every packet, so that changing them changes the split at once:
 *
 *   sr6 ctl bpf map update name weights key 0 0 0 0 value 3 0 0 0     (path 1: 3)
 *   bpftool map update name weights key 0 0 0 0 value 3 0 0 0         (the kernel)
 *
 * Both 0 (the map as loaded): 1 and 1. A path of weight 0 is not used. The scheduler's
 * state (the path in use and how many packets it may still send) is the map `wrr`, and
 * `sent` counts the packets sent on each path. */
#include "srv6.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u32);
} weights SEC(".maps");

struct wrr_state {
	__u32 path; /* 0 or 1 */
	__u32 left; /* packets the path may still send in its turn */
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct wrr_state);
} wrr SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u64);
} sent SEC(".maps");

#define TABLE_PATH1 101

static __always_inline __u32 weight(__u32 path)
{
	__u32 *w = bpf_map_lookup_elem(&weights, &path);

	return w ? *w : 0;
}

SEC("link_agg")
int do_link_agg(struct __sk_buff *skb)
{
	__u32 zero = 0, w0, w1, path, table;
	struct wrr_state *st = bpf_map_lookup_elem(&wrr, &zero);
	__u64 *count;

	if (!st)
		return BPF_DROP;
	w0 = weight(0);
	w1 = weight(1);
	if (w0 == 0 && w1 == 0)
		w0 = w1 = 1;
	path = st->path & 1;
	if (st->left > (path ? w1 : w0))
		st->left = path ? w1 : w0; /* the weight was lowered during the path's turn */
	if (st->left == 0) {
		/* The turn passes to the other path, unless its weight is 0. */
		path ^= 1;
		if ((path ? w1 : w0) == 0)
			path ^= 1;
		st->path = path;
		st->left = path ? w1 : w0;
	}
	st->left--;
	count = bpf_map_lookup_elem(&sent, &path);
	if (count)
		__sync_fetch_and_add(count, 1);
	table = TABLE_PATH1 + path;
	if (bpf_lwt_seg6_action(skb, SEG6_LOCAL_ACTION_END_T, &table, sizeof(table)))
		return BPF_DROP;
	return BPF_REDIRECT;
}

char _license[] SEC("license") = "GPL";
