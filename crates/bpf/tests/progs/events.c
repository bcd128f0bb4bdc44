/* Events through bpf_perf_event_output into a perf event array (BTF-defined, sizes and
 * slots left to the loader: one slot per CPU): the packet's fields after the segment was
 * consumed, the same with the packet's first 64 bytes appended (flags' upper 32 bits),
 * the whole packet, and the helper's run-time errors. Read in the kernel with `bpftool
 * map event_pipe`, in sr6 with `sr6 ctl bpf events` or at the end of `sr6 pcap`.
 * Every record's size + 4 is a multiple of 8 but the whole packet's, so that the
 * kernel adds no padding to the others. */
#include "seg6.h"

struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
} events SEC(".maps");

/* 28 bytes. */
struct fields {
	__u8 daddr[16];     /* the new destination */
	__u32 len;          /* skb->len */
	__u16 tag;          /* the SRH's Tag, as on the wire */
	__u8 segments_left;
	__u8 hop_limit;
	__u32 cpu;          /* bpf_get_smp_processor_id() == the event's CPU */
} __attribute__((packed));

static __always_inline int fill(struct __sk_buff *skb, struct fields *f)
{
	struct sr6_srh *srh = sr6_srh(skb);
	void *data = (void *)(long)skb->data;
	struct sr6_ip6 *ip6 = data;

	if (!srh)
		return -1;
	__builtin_memcpy(f->daddr, ip6->daddr, 16);
	f->len = skb->len;
	f->tag = srh->tag;
	f->segments_left = srh->segments_left;
	f->hop_limit = ip6->hop_limit;
	f->cpu = bpf_get_smp_processor_id();
	return 0;
}

SEC("fields")
int do_fields(struct __sk_buff *skb)
{
	struct fields f = {};

	if (fill(skb, &f))
		return BPF_DROP;
	if (bpf_perf_event_output(skb, &events, BPF_F_CURRENT_CPU, &f, sizeof(f)))
		return BPF_DROP;
	return BPF_OK;
}

SEC("with_packet")
int do_with_packet(struct __sk_buff *skb)
{
	struct fields f = {};
	__u64 whole = (__u64)skb->len << 32;

	if (fill(skb, &f))
		return BPF_DROP;
	/* 28 + 64 bytes of packet, then the whole packet alone (no bytes of the program's). */
	if (bpf_perf_event_output(skb, &events, BPF_F_CURRENT_CPU | (64ULL << 32), &f, sizeof(f)))
		return BPF_DROP;
	if (bpf_perf_event_output(skb, &events, BPF_F_CURRENT_CPU | whole, &f, 0))
		return BPF_DROP;
	return BPF_OK;
}

/* 20 bytes: what the helper returns for bad flags. */
struct errors {
	__s32 bad_flags;    /* a bit above BPF_F_CTXLEN_MASK: -EINVAL */
	__s32 too_long;     /* one byte more than the packet: -EFAULT */
	__s32 bad_index;    /* slot 4096, past max_entries: -E2BIG */
	__s32 ok;           /* 0 */
	__u32 len;
} __attribute__((packed));

SEC("errors")
int do_errors(struct __sk_buff *skb)
{
	struct errors e = {};
	__u64 x = 0x1122334455667788ULL;

	e.len = skb->len;
	e.bad_flags = bpf_perf_event_output(skb, &events, BPF_F_CURRENT_CPU | (1ULL << 52), &x, sizeof(x));
	e.too_long = bpf_perf_event_output(skb, &events, BPF_F_CURRENT_CPU | ((__u64)(skb->len + 1) << 32), &x,
					   sizeof(x));
	e.bad_index = bpf_perf_event_output(skb, &events, 4096, &x, sizeof(x));
	e.ok = 0;
	return bpf_perf_event_output(skb, &events, BPF_F_CURRENT_CPU, &e, sizeof(e)) ? BPF_DROP : BPF_OK;
}

char _license[] SEC("license") = "GPL";
