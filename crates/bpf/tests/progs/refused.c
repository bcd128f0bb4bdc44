/* Programs sr6's loader refuses: a loop it cannot prove bounded, a helper the kernel has
 * but sr6 does not provide, a helper lwt_seg6local programs may not call, an unknown
 * helper id. */
#include "seg6.h"

SEC("loop")
int do_loop(struct __sk_buff *skb)
{
	__u8 b, sum = 0;
	int i;

#pragma clang loop unroll(disable)
	for (i = 0; i < 64; i++) {
		if (bpf_skb_load_bytes(skb, i, &b, 1))
			break;
		sum ^= b;
	}
	return sum & 1;
}

SEC("pull")
int do_pull(struct __sk_buff *skb)
{
	return bpf_skb_pull_data(skb, 64);
}

SEC("push_encap")
int do_push_encap(struct __sk_buff *skb)
{
	__u64 x = 1;

	return bpf_lwt_push_encap(skb, 0, &x, sizeof(x));
}

static long (*const no_such_helper)(void) = (void *)9999;

SEC("unknown")
int do_unknown(struct __sk_buff *skb)
{
	return no_such_helper();
}

char _license[] SEC("license") = "GPL";
