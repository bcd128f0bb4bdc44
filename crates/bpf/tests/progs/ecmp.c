/* sr6's extension helper sr6_ecmp_nexthops (id 0x7f53, docs/bpf.md): the next hops of the
 * packet's new destination, asked three ways, the answers kept in .bss for the test to
 * read; `ecmp_bad_out` passes an output area larger than the buffer (the run aborts). */
#include "seg6.h"

static long (*sr6_ecmp_nexthops)(struct __sk_buff *skb, const void *dst, __u32 table, void *out,
				 __u32 out_len) = (void *)0x7f53;

struct {
	long all;      /* room for 3 */
	long one;      /* room for 1 (and 15 bytes that hold no address) */
	long table;    /* table 100, room for none */
	__u8 hops[3][16];
	__u8 first[31];
	__u8 pad;
} result;

SEC("ecmp")
int do_ecmp(struct __sk_buff *skb)
{
	__u8 dst[16];

	if (bpf_skb_load_bytes(skb, 24, dst, 16))
		return BPF_DROP;
	result.all = sr6_ecmp_nexthops(skb, dst, 0, result.hops, sizeof(result.hops));
	result.one = sr6_ecmp_nexthops(skb, dst, 0, result.first, sizeof(result.first));
	result.table = sr6_ecmp_nexthops(skb, dst, 100, result.hops, 0);
	return BPF_OK;
}

SEC("ecmp_bad_out")
int do_ecmp_bad_out(struct __sk_buff *skb)
{
	__u8 dst[16] = {};
	__u8 out[16];

	return sr6_ecmp_nexthops(skb, dst, 0, out, 64) ? BPF_DROP : BPF_OK;
}

char _license[] SEC("license") = "GPL";
