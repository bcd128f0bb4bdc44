/* BPF-to-BPF calls, bpf_skb_load_bytes, time and trace helpers; a drop on the inner
 * header (UDP inside); an out-of-bounds packet read. */
#include "seg6.h"

static __noinline int inner_proto(struct __sk_buff *skb, int at)
{
	__u8 nh;

	if (bpf_skb_load_bytes(skb, at + 6, &nh, 1))
		return -1;
	return nh;
}

static __noinline int srh_len(struct __sk_buff *skb)
{
	struct sr6_srh *srh = sr6_srh(skb);

	if (!srh)
		return -1;
	return (srh->hdrlen + 1) << 3;
}

SEC("drop_udp")
int do_drop_udp(struct __sk_buff *skb)
{
	int len = srh_len(skb);

	if (len < 0)
		return BPF_DROP;
	if (inner_proto(skb, sizeof(struct sr6_ip6) + len) == 17)
		return BPF_DROP;
	return BPF_OK;
}

SEC("stamp")
int do_stamp(struct __sk_buff *skb)
{
	char fmt[] = "hello %d";

	skb->cb[0] = (__u32)bpf_ktime_get_ns();
	skb->mark = 7;
	bpf_trace_printk(fmt, sizeof(fmt), 1);
	return BPF_OK;
}

SEC("oob_read")
int do_oob_read(struct __sk_buff *skb)
{
	unsigned char *data = (unsigned char *)(long)skb->data;

	return data[4000] == 1 ? BPF_DROP : BPF_OK;
}

char _license[] SEC("license") = "GPL";
