/* Add and remove an 8-byte TLV at the end of the SRH (bpf_lwt_seg6_adjust_srh, then
 * bpf_lwt_seg6_store_bytes to fill the new space), and two bad variants: growing by 4
 * bytes (the SRH's length is then not a multiple of 8) and growing without filling with
 * a valid TLV. */
#include "seg6.h"

struct tlv8 {
	__u8 type;
	__u8 len;
	__u8 value[6];
};

static __always_inline int srh_end(struct __sk_buff *skb)
{
	struct sr6_srh *srh = sr6_srh(skb);

	if (!srh)
		return -1;
	return sizeof(struct sr6_ip6) + ((srh->hdrlen + 1) << 3);
}

SEC("add_tlv")
int do_add_tlv(struct __sk_buff *skb)
{
	struct tlv8 tlv = { .type = 0x7e, .len = 6, .value = { 1, 2, 3, 4, 5, 6 } };
	int end = srh_end(skb);

	if (end < 0)
		return BPF_DROP;
	if (bpf_lwt_seg6_adjust_srh(skb, end, sizeof(tlv)))
		return BPF_DROP;
	if (bpf_lwt_seg6_store_bytes(skb, end, &tlv, sizeof(tlv)))
		return BPF_DROP;
	return BPF_OK;
}

SEC("del_tlv")
int do_del_tlv(struct __sk_buff *skb)
{
	int end = srh_end(skb);

	if (end < 0)
		return BPF_DROP;
	if (bpf_lwt_seg6_adjust_srh(skb, end - 8, -8))
		return BPF_DROP;
	return BPF_OK;
}

SEC("grow_4")
int do_grow_4(struct __sk_buff *skb)
{
	int end = srh_end(skb);

	if (end < 0)
		return BPF_DROP;
	if (bpf_lwt_seg6_adjust_srh(skb, end, 4))
		return BPF_DROP;
	return BPF_OK;
}

SEC("bad_tlv")
int do_bad_tlv(struct __sk_buff *skb)
{
	struct tlv8 tlv = { .type = 0x7e, .len = 200 };
	int end = srh_end(skb);

	if (end < 0)
		return BPF_DROP;
	if (bpf_lwt_seg6_adjust_srh(skb, end, sizeof(tlv)))
		return BPF_DROP;
	if (bpf_lwt_seg6_store_bytes(skb, end, &tlv, sizeof(tlv)))
		return BPF_DROP;
	return BPF_OK;
}

/* Writes into the segment list: the helper refuses (-EFAULT); the result is returned so
 * the test sees it as an illegal return code. */
SEC("write_segment")
int do_write_segment(struct __sk_buff *skb)
{
	__u32 zero = 0;

	return bpf_lwt_seg6_store_bytes(skb, sizeof(struct sr6_ip6) + 8, &zero, sizeof(zero));
}

/* The kernel's store_bytes takes the TLV area to start at SRH + (Last Entry + 1) * 16,
 * 8 bytes before the end of the segment list: the second half of the last segment in
 * memory (Segment List[Last Entry]) is writable too. */
SEC("write_seg_tail")
int do_write_seg_tail(struct __sk_buff *skb)
{
	struct sr6_srh *srh = sr6_srh(skb);
	__u64 v = 0x1122334455667788ULL;

	if (!srh)
		return BPF_DROP;
	if (bpf_lwt_seg6_store_bytes(skb, sizeof(struct sr6_ip6) + ((srh->first_segment + 1) << 4), &v, sizeof(v)))
		return BPF_DROP;
	return BPF_OK;
}

char _license[] SEC("license") = "GPL";
