/* End written in eBPF: the SRH was already consumed by End.BPF; route on the new DA. */
#include "seg6.h"

SEC("end")
int do_end(struct __sk_buff *skb)
{
	return BPF_OK;
}

char _license[] SEC("license") = "GPL";
