/* sr6's XDP tier (work in progress), IPv6 transit only so far: the route of the destination from an
 * LPM trie the user-space tables mirror, the Ethernet header from the next hop's entry,
 * the hop limit decremented, the frame redirected through a devmap. Anything else goes
 * to the AF_XDP socket of the queue (the general path). */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/ipv6.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

struct lpm6_key {
	__u32 prefixlen;
	__u8 addr[16];
};

/* What a route gives: the output device's index in `tx` and the 12 bytes of the
 * Ethernet addresses (destination first). kind 0: leave to the general path. */
struct hop {
	__u32 kind;
	__u32 tx;
	__u8 eth[12];
};

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 1 << 20);
	__type(key, struct lpm6_key);
	__type(value, struct hop);
} routes6 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_DEVMAP);
	__uint(max_entries, 256);
	__type(key, __u32);
	__type(value, __u32);
} tx SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_XSKMAP);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, __u32);
} xsks SEC(".maps");

static __always_inline int slow(struct xdp_md *ctx)
{
	return bpf_redirect_map(&xsks, ctx->rx_queue_index, XDP_PASS);
}

SEC("xdp")
int sr6_fast(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct ipv6hdr *ip6 = (void *)(eth + 1);

	if ((void *)(ip6 + 1) > end)
		return slow(ctx);
	if (eth->h_proto != bpf_htons(ETH_P_IPV6) || ip6->version != 6 || ip6->hop_limit <= 1)
		return slow(ctx);
	struct lpm6_key k = { .prefixlen = 128 };
	__builtin_memcpy(k.addr, &ip6->daddr, 16);
	struct hop *h = bpf_map_lookup_elem(&routes6, &k);
	if (!h || h->kind != 1)
		return slow(ctx);
	ip6->hop_limit--;
	__builtin_memcpy(eth, h->eth, 12);
	return bpf_redirect_map(&tx, h->tx, 0);
}

char _license[] SEC("license") = "GPL";
