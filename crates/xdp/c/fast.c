/* sr6's in-kernel tier: an XDP program that forwards the hot cases where the frame
 * already is, and hands everything else unchanged to sr6's AF_XDP socket of the
 * receive queue (the general path, which stays the reference).
 *
 * First, what the AF_XDP tier's program (crates/io/src/af_xdp/prog.rs) leaves to the
 * kernel goes to the kernel here too: frames too short for their Ethernet or IP header,
 * multicast and broadcast, non-IP frames, IPv6 neighbour discovery, and packets for the
 * host's own addresses (host6, host4). Then, for a frame received on a device the
 * tables let this tier take (devs), what sr6's fast path (crates/core/src/pipeline/
 * fast.rs) would do, from the main FIB that sr6 mirrors into routes6
 * (crates/core/src/tables/offload.rs says what each prefix does):
 *   - IPv6 transit (RFC 8200 §3): hop limit minus one, the route's Ethernet header;
 *   - End (RFC 8986 §4.1) and End.T (§4.3) on an SRH right after the IPv6 header,
 *     without TLVs or with one HMAC TLV the general path verified (srh_auth): the
 *     destination from Segment List[Segments Left - 1], Segments Left and hop limit
 *     minus one, routed as transit in the main table (End) or the SID's (End.T);
 *   - End.X (§4.2) on such an SRH: the same rewrite, sent to the SID's adjacency;
 *   - with PSP (§4.16.1), the SRH removed when Segments Left reaches 0;
 *   - End.DX6 (§4.4), End.DT6 (§4.6) and End.DT46 (§4.8) on such an SRH with Segments
 *     Left 0 and an inner IPv6 packet: the outer header and SRH removed, the inner hop
 *     limit minus one, sent to the SID's adjacency (End.DX6) or as the SID's FIB routes
 *     the inner destination (End.DT6, End.DT46);
 *   - End.DX4 (§4.5), End.DT4 (§4.7) and End.DT46 with an inner IPv4 packet: the same,
 *     the inner TTL minus one with its checksum updated;
 *   - End, End.T and End.X with NEXT-C-SID (RFC 9800 §4.1) on a C-SID container with
 *     an argument, with or without an SRH: the next C-SID shifted into place, the hop
 *     limit minus one, routed as End, End.T or End.X;
 *   - H.Encaps(.Red), H.Encaps.L2(.Red) and H.Insert(.Red) (§5.1-§5.3) of an IPv6
 *     packet whose destination's route is a policy: the headers sr6 prepared for it
 *     (policies) written in front, the fields that come from the packet patched;
 *   - IPv4 transit (RFC 1812 §5.2.2): TTL minus one, the checksum updated.
 * Each checks what the fast path checks, and anything else is the general path's.
 *
 * One source of truth, switched atomically: every key of routes6 and devs holds a
 * generation (0 or 1) and `cur` says which one is read. sr6 writes a change into the
 * other generation, switches `cur`, waits for the programs that may still read the old
 * one, and writes the change there too (sr6_xdp::Mirror). A packet reads `cur` once.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

/* routes6: the generation, the FIB (sr6's dense index, 0 for main), then the address;
 * prefixlen counts all three (16 + length). */
struct route_key {
	__u32 prefixlen;
	__u8 gen;
	__u8 table;
	__u8 addr[16];
} __attribute__((packed));

enum {
	ACT_GENERAL = 0,
	ACT_FORWARD = 1,
	ACT_END = 2,
	ACT_END_X = 3,
	ACT_DT6 = 4,
	ACT_DX6 = 5,
	ACT_END_PSP = 6,
	ACT_END_X_PSP = 7,
	ACT_DT4 = 8,
	ACT_DT46 = 9,
	ACT_DX4 = 10,
	ACT_POLICY = 11,
	ACT_END_CSID = 12,
	ACT_END_X_CSID = 13,
	ACT_FORWARD_ADJ = 14,
};

/* ACT_FORWARD: out of device `arg` (sr6's index: its slot in tx) with these Ethernet
 * addresses, destination first. ACT_FORWARD_ADJ: to adjacency `arg` (adjs: a route
 * through a gateway). ACT_END: local SID `arg` (its counter's index), the next segment
 * looked up in FIB `arg2`. ACT_END_X: local SID `arg`, to adjacency `arg2`. ACT_DT6:
 * local SID `arg`, the inner destination looked up in FIB `arg2`. ACT_DX6: local SID
 * `arg`, to adjacency `arg2`. ACT_END_PSP, ACT_END_X_PSP: as ACT_END and ACT_END_X,
 * with PSP. ACT_DT4, ACT_DT46: as ACT_DT6, for an inner IPv4 packet (in routes4) or
 * either. ACT_DX4: as ACT_DX6, for an inner IPv4 packet. ACT_POLICY: head-end policy
 * `arg`. ACT_END_CSID, ACT_END_X_CSID: as ACT_END and ACT_END_X with NEXT-C-SID, `arg`
 * holding the SID (bits 0-15), the Locator-Block's length (16-23) and the C-SIDs'
 * (24-31). */
struct act {
	__u32 kind;
	__u32 arg;
	__u32 arg2;
	__u8 eth[12];
};

/* devs: by (ifindex << 1 | generation), for ifindex < 65536 (an array: its lookup is
 * inlined). A receiving device: its sr6 index and the longest IPv6 and IPv4 frame the
 * fast path takes from it (what no rewrite can take past an MTU); 0: the tables do not
 * let this tier take that family there. */
#define DEVS_IFINDEX_MAX 65536
struct dev_conf {
	__u32 dev;
	__u32 max_len;
	__u32 max_len4;
	/* net.ipv6.conf.DEV.seg6_require_hmac: -1 ignore, 0 verify if present, 1 require. */
	__s32 require_hmac;
};

/* routes4: as routes6, IPv4 (prefixlen 16 + length). */
struct route4_key {
	__u32 prefixlen;
	__u8 gen;
	__u8 table;
	__u8 addr[4];
} __attribute__((packed));

/* adjs: by (adjacency << 1 | generation), for sr6's adjacencies under ADJ_SLOTS (a
 * gateway on a device): an ACT_FORWARD (device, Ethernet addresses) while its
 * neighbour is known and this tier may send out of its device; else zeros
 * (ACT_GENERAL). Routes and SIDs name their adjacency, so a neighbour's change is one
 * entry's, not every route's through it. */
#define ADJ_SLOTS 65536

/* policies: by (index << 1 | generation), a head-end policy as sr6's fast path applies
 * it (crates/core/src/tables/rewrite.rs): how, the device its first segment is sent out
 * of, and its `len` bytes of headers (Ethernet towards that segment, IPv6, SRH),
 * right-aligned in `block` (crates/core's Rewrite::BLOCK); zeros for a policy this
 * tier leaves to the general path. */
#define POLICY_SLOTS 16384
enum { POLICY_ENCAP = 1, POLICY_INSERT = 2, POLICY_ENCAP_L2 = 3 };
struct policy {
	__u32 kind;
	__u32 out;
	__u32 len;
	__u8 block[160];
};

/* hmac_keys: by (Key ID as the HMAC TLV holds it, generation), the key sr6's tables have
 * for it: the id no other key ever gets (sr6_core::hmac::HmacKey::uid). */
struct hmac_key_ref {
	__u8 id[4];
	__u32 gen;
};

/* hmac_ok: texts whose HMAC sr6's general path computed and found equal to a packet's
 * (RFC 8754 §2.1.2.1: source, Last Entry, Flags, Key ID, Segment List), by key, source
 * and HMAC field; what the text holds besides is the value, compared here whole. */
#define HMAC_SEGS 8
struct hmac_seen {
	__u64 uid;
	__u8 id[4];
	__u8 src[16];
	__u8 mac[32];
	__u32 zero;
};

struct hmac_text {
	__u8 last_entry;
	__u8 flags;
	__u8 pad[2];
	__u8 segs[16 * HMAC_SEGS];
};

struct count {
	__u64 packets;
	__u64 bytes;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} cur SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 1 << 21);
	__type(key, struct route_key);
	__type(value, struct act);
} routes6 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 1 << 21);
	__type(key, struct route4_key);
	__type(value, struct act);
} routes4 SEC(".maps");

/* The router's own IPv4 addresses: a packet from one is the general path's. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, __u8);
} local4 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2 * DEVS_IFINDEX_MAX);
	__type(key, __u32);
	__type(value, struct dev_conf);
} devs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2 * ADJ_SLOTS);
	__type(key, __u32);
	__type(value, struct act);
} adjs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2 * POLICY_SLOTS);
	__type(key, __u32);
	__type(value, struct policy);
} policies SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 2 * 1024);
	__type(key, struct hmac_key_ref);
	__type(value, __u64);
} hmac_keys SEC(".maps");

/* Filled by sr6's workers as they verify (least recently used out first). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, struct hmac_seen);
	__type(value, struct hmac_text);
} hmac_ok SEC(".maps");

/* By sr6's device index: the device's ifindex. */
struct {
	__uint(type, BPF_MAP_TYPE_DEVMAP);
	__uint(max_entries, 256);
	__type(key, __u32);
	__type(value, __u32);
} tx SEC(".maps");

/* Per CPU, summed by sr6 into `show counters`: by local SID, by device sent out of,
 * by device received on. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, struct count);
} sid_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 256);
	__type(key, __u32);
	__type(value, struct count);
} tx_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 256);
	__type(key, __u32);
	__type(value, struct count);
} rx_stats SEC(".maps");

/* Each device's own (this program is loaded once per device). */
struct {
	__uint(type, BPF_MAP_TYPE_XSKMAP);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, __u32);
} xsks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, struct in6_addr);
	__type(value, __u8);
} host6 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, __u8);
} host4 SEC(".maps");

/* conf[0]: the action when the queue has no socket (XDP_PASS; tests set XDP_DROP to
 * tell "to the general path" from "to the kernel"). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} conf SEC(".maps");

static __always_inline int general(struct xdp_md *ctx)
{
	__u32 z = 0;
	__u32 *miss = bpf_map_lookup_elem(&conf, &z);
	return bpf_redirect_map(&xsks, ctx->rx_queue_index, miss ? *miss : XDP_PASS);
}

static __always_inline void count(void *map, __u32 i, __u64 len)
{
	struct count *c = bpf_map_lookup_elem(map, &i);
	if (c) {
		c->packets++;
		c->bytes += len;
	}
}

/* What the tier does not forward: the host's own addresses to the kernel (checked only
 * here: a host address is a local /128 of the tables, whose action is never to forward),
 * the rest to sr6. */
static __always_inline int slow6(struct xdp_md *ctx, struct ipv6hdr *ip6)
{
	if (bpf_map_lookup_elem(&host6, &ip6->daddr))
		return XDP_PASS;
	return general(ctx);
}

/* Multicast (ff00::/8), link-local (fe80::/10) and ::/16: the general path's (the
 * fast path's host_dst, which also forwards fec0::/10 itself; here it goes to sr6). */
static __always_inline int host_dst(const __u8 *a)
{
	return (a[0] == 0 && a[1] == 0) || (a[0] == 0xfe && a[1] >= 0x80) || a[0] == 0xff;
}

/* Sends the frame out of device `out` with the Ethernet addresses `mac`, counted. */
static __always_inline int forward(struct ethhdr *eth, const __u8 *mac, __u32 out, __u32 rx, __u64 len)
{
	__builtin_memcpy(eth, mac, 12);
	count(&rx_stats, rx, len);
	count(&tx_stats, out, len);
	return bpf_redirect_map(&tx, out, 0);
}

/* Adjacency `adj` as an ACT_FORWARD (device `arg`, Ethernet addresses), if this tier
 * sends to it; NULL if not (its neighbour not known, say). */
static __always_inline const struct act *adjacency(__u32 gen, __u32 adj)
{
	if (adj >= ADJ_SLOTS)
		return 0;
	__u32 k = adj << 1 | (gen & 1);
	const struct act *h = bpf_map_lookup_elem(&adjs, &k);
	return h && h->kind == ACT_FORWARD ? h : 0;
}

/* Where route entry `b` forwards, as an ACT_FORWARD: its own (an on-link /128) or its
 * adjacency's; NULL if it is no route this tier forwards along. */
static __always_inline const struct act *hop_of(__u32 gen, const struct act *b)
{
	if (!b)
		return 0;
	if (b->kind == ACT_FORWARD)
		return b;
	if (b->kind == ACT_FORWARD_ADJ)
		return adjacency(gen, b->arg);
	return 0;
}

/* The route FIB `table` (sr6's dense index: those from 256 on are the general path's)
 * has for the IPv6 address `addr`, as hop_of: where it forwards, if it is one this tier
 * forwards along; NULL if not. The next lookup of End, End.T, End.DT6, End.DT46 and
 * NEXT-C-SID. */
static __always_inline const struct act *route6(__u32 gen, __u32 table, const void *addr)
{
	if (table > 255)
		return 0;
	struct route_key k = { .prefixlen = 16 + 128, .gen = gen, .table = (__u8)table };
	__builtin_memcpy(k.addr, addr, 16);
	return hop_of(gen, bpf_map_lookup_elem(&routes6, &k));
}

/* The SRH at `srh` (Last Entry + 1 = `le1` segments) against the receiving device's
 * seg6_require_hmac, as sr6's hmac_check::verify (RFC 8754 §2.1.2.1, Linux
 * seg6_hmac_validate_skb): the bytes of TLVs after the Segment List this tier takes
 * (0, or 40 for one HMAC TLV), or -1 for the general path's. Without TLVs it passes
 * unless an HMAC is required; with exactly one HMAC TLV (type 5, length 38) it passes
 * on a device that ignores HMACs, and elsewhere if its key, source, HMAC field and the
 * rest of its text are one the general path verified under the key these tables have
 * for that Key ID (hmac_ok); any other TLVs are the general path's. */
static __always_inline int srh_auth(const __u8 *srh, const void *end, __u32 le1, __u32 gen,
				    const struct dev_conf *dc, const struct ipv6hdr *ip6)
{
	if (srh[1] == 2 * le1)
		return dc->require_hmac > 0 ? -1 : 0;
	if (srh[1] != 2 * le1 + 5 || le1 > HMAC_SEGS)
		return -1;
	const __u8 *tlv = srh + 8 + 16 * le1;
	if ((void *)(tlv + 40) > end || tlv[0] != 5 || tlv[1] != 38)
		return -1;
	if (dc->require_hmac < 0)
		return 40;
	struct hmac_key_ref r = { .gen = gen };
	__builtin_memcpy(r.id, tlv + 4, 4);
	const __u64 *uid = bpf_map_lookup_elem(&hmac_keys, &r);
	if (!uid)
		return -1;
	struct hmac_seen k = { .uid = *uid, .zero = 0 };
	__builtin_memcpy(k.id, tlv + 4, 4);
	__builtin_memcpy(k.src, &ip6->saddr, 16);
	__builtin_memcpy(k.mac, tlv + 8, 32);
	const struct hmac_text *t = bpf_map_lookup_elem(&hmac_ok, &k);
	if (!t || t->last_entry != srh[4] || t->flags != srh[5])
		return -1;
	const __u64 *seg = (const __u64 *)(srh + 8);
	const __u64 *want = (const __u64 *)t->segs;
#pragma unroll
	for (int i = 0; i < HMAC_SEGS; i++) {
		if ((__u32)i >= le1)
			break;
		if ((void *)(seg + 2 * i + 2) > end)
			return -1;
		if (seg[2 * i] != want[2 * i] || seg[2 * i + 1] != want[2 * i + 1])
			return -1;
	}
	return 40;
}

/* The IPv4 header's checksum is right: its ones' complement sum is 0xffff (RFC 1071). */
static __always_inline int ip4_csum_ok(const struct iphdr *ip)
{
	const __u16 *w = (const __u16 *)ip;
	__u32 s = 0;
#pragma unroll
	for (int i = 0; i < 10; i++)
		s += w[i];
	s = (s & 0xffff) + (s >> 16);
	s = (s & 0xffff) + (s >> 16);
	return s == 0xffff;
}

/* The fast path's screen of an IPv4 address (host order): 0.0.0.0/8, 127.0.0.0/8 and
 * 224.0.0.0/3 are the general path's. */
static __always_inline int screen4(__u32 a)
{
	return a - 0x01000000u >= 0xdf000000u || (a >> 24) == 127;
}

/* The checksum of IPv4 header `ip` once its TTL is one less (RFC 1624 eq. 3, as sr6's
 * `checksum::update16`), in network order. */
static __always_inline __u16 ttl_dec_check(const struct iphdr *ip)
{
	__u32 old = (__u32)ip->ttl << 8 | ip->protocol;
	__u32 s = (__u16)~bpf_ntohs(ip->check) + (__u16)~old + (old - 0x100);
	s = (s & 0xffff) + (s >> 16);
	s = (s & 0xffff) + (s >> 16);
	return bpf_htons((__u16)~s);
}

/* End.DX6 (RFC 8986 §4.4), End.DT6 (§4.6), End.DX4 (§4.5), End.DT4 (§4.7) and End.DT46
 * (§4.8), as the fast path's decap::fast6 and decap::fast4: an SRH right after the
 * IPv6 header (RFC 8754 §2), without TLVs or with a verified HMAC TLV (srh_auth), with
 * Segments Left 0 and Next Header 41 (an inner IPv6 packet: End.DX6, End.DT6, End.DT46)
 * or 4 (IPv4: End.DX4, End.DT4, End.DT46, on a device that forwards IPv4) (S01-S02,
 * §4.4 S01-S04 and the upper-layer step). An inner
 * IPv6 packet's Payload Length is the rest of the frame, its hop limit over 1; an inner
 * IPv4 packet has no options, its Total Length is the rest of the frame, TTL over 1, its
 * header checksum right. End.DT*'s lookup of the inner destination in the SID's FIB is a
 * route this tier forwards (for IPv4 a destination below 224.0.0.0; no screen of the
 * inner addresses, as the fast path). The outer header and SRH go (S03-S05): the head
 * moved to 14 bytes before the inner packet, where the new Ethernet header is written;
 * the inner hop limit or TTL minus one. */
static __always_inline int decap(struct xdp_md *ctx, struct ipv6hdr *ip6, void *end, const struct act *a,
				 __u32 gen, const struct dev_conf *dc, __u64 len)
{
	__u8 *srh = (__u8 *)(ip6 + 1);
	if (ip6->nexthdr != IPPROTO_ROUTING || (void *)(srh + 8) > end)
		return slow6(ctx, ip6);
	__u32 kind = a->kind;
	int v4 = srh[0] == IPPROTO_IPIP;
	if (v4 ? (kind == ACT_DT6 || kind == ACT_DX6 || dc->max_len4 == 0)
	       : (srh[0] != IPPROTO_IPV6 || kind == ACT_DT4 || kind == ACT_DX4))
		return slow6(ctx, ip6);
	__u32 le1 = (__u32)srh[4] + 1;
	__u32 segs_len = 8 * (__u32)srh[1];
	if (srh[2] != 4 || segs_len > len - 62 || srh[3] != 0 || srh_auth(srh, end, le1, gen, dc, ip6) < 0)
		return slow6(ctx, ip6);
	if (segs_len > 8 * 254)
		return slow6(ctx, ip6);
	__u8 *inner = srh + 8 + segs_len;
	__u64 ilen = len - 62 - segs_len;
	int lookup = kind == ACT_DT6 || kind == ACT_DT4 || kind == ACT_DT46;
	if (lookup && a->arg2 > 255)
		return slow6(ctx, ip6);
	/* End.DX4, End.DX6: the SID's adjacency; End.DT*: the inner destination's route. */
	const struct act *h = lookup ? 0 : adjacency(gen, a->arg2);
	__u16 check = 0;
	if (!v4) {
		struct ipv6hdr *in = (void *)inner;
		if ((void *)(in + 1) > end)
			return slow6(ctx, ip6);
		if (in->version != 6 || bpf_ntohs(in->payload_len) != ilen - 40 || in->hop_limit <= 1)
			return slow6(ctx, ip6);
		if (lookup)
			h = route6(gen, a->arg2, &in->daddr);
	} else {
		struct iphdr *in = (void *)inner;
		if ((void *)(in + 1) > end)
			return slow6(ctx, ip6);
		if (inner[0] != 0x45 || bpf_ntohs(in->tot_len) != ilen || in->ttl <= 1 || !ip4_csum_ok(in))
			return slow6(ctx, ip6);
		if (lookup) {
			if (bpf_ntohl(in->daddr) >= 0xe0000000u)
				return slow6(ctx, ip6);
			struct route4_key k = { .prefixlen = 16 + 32, .gen = gen, .table = (__u8)a->arg2 };
			__builtin_memcpy(k.addr, &in->daddr, 4);
			h = hop_of(gen, bpf_map_lookup_elem(&routes4, &k));
		}
		check = ttl_dec_check(in);
	}
	if (!h)
		return slow6(ctx, ip6);
	__u8 eh[12];
	__builtin_memcpy(eh, h->eth, 12);
	__u32 out = h->arg;
	__u32 sid = a->arg;
	/* Every check done: from here the frame is changed. */
	int pull = 48 + (int)segs_len;
	if (bpf_xdp_adjust_head(ctx, pull))
		return general(ctx);
	/* The helper invalidates every packet pointer: derived again, and bounded. */
	__u8 *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	if ((void *)(data + 14 + 20) > data_end) {
		/* (Cannot be: the inner header was within the frame.) Undone, for sr6. */
		if (bpf_xdp_adjust_head(ctx, -pull))
			return XDP_DROP;
		return general(ctx);
	}
	__builtin_memcpy(data, eh, 12);
	if (v4) {
		data[12] = 0x08;
		data[13] = 0x00;
		data[14 + 8]--;
		__builtin_memcpy(data + 14 + 10, &check, 2);
	} else {
		data[12] = 0x86;
		data[13] = 0xdd;
		data[14 + 7]--;
	}
	count(&sid_stats, sid, len);
	count(&rx_stats, dc->dev, len);
	count(&tx_stats, out, len - pull);
	return bpf_redirect_map(&tx, out, 0);
}

/* PSP (RFC 8986 §4.16.1 S14.1-S14.4), as the fast path's end::fast_psp: Segments Left
 * was 1, so the SRH of `srh_len` bytes goes once the rewrite of the Ethernet + IPv6
 * headers (`mac`, the hop limit, the destination `next`) is made: its Next Header to the
 * IPv6 header, the Payload Length shortened, the 54 bytes of headers moved up over it.
 * The headers are rewritten in a copy first, so the frame is untouched until the head
 * moves (which cannot fail: what remains is longer than an Ethernet header). */
static __always_inline int psp(struct xdp_md *ctx, struct ethhdr *eth, const __u8 *srh, const __u8 *next,
			       const __u8 *mac, __u32 out, __u32 sid, __u32 rx, __u64 len, __u32 srh_len)
{
	__u8 h[54];
	__builtin_memcpy(h, eth, 54);
	__builtin_memcpy(h, mac, 12);
	__u16 plen = (__u16)(len - 54 - srh_len);
	h[14 + 4] = plen >> 8;
	h[14 + 5] = plen & 0xff;
	h[14 + 6] = srh[0];
	h[14 + 7]--;
	__builtin_memcpy(h + 14 + 24, next, 16);
	if (srh_len > 8 * 255 || bpf_xdp_adjust_head(ctx, (int)srh_len))
		return general(ctx);
	/* The helper invalidates every packet pointer: derived again, and bounded. */
	__u8 *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	if ((void *)(data + 54) > data_end) {
		/* (Cannot be: the packet was longer than its headers.) Undone, for sr6. */
		if (bpf_xdp_adjust_head(ctx, -(int)srh_len))
			return XDP_DROP;
		return general(ctx);
	}
	__builtin_memcpy(data, h, 54);
	count(&sid_stats, sid, len);
	count(&rx_stats, rx, len);
	count(&tx_stats, out, len - srh_len);
	return bpf_redirect_map(&tx, out, 0);
}

/* (hi, lo) << s, 0 <= s < 128, on the two halves of a 128-bit value. */
static __always_inline void shl128(__u64 hi, __u64 lo, __u32 s, __u64 *rh, __u64 *rl)
{
	if (s >= 64) {
		*rh = lo << (s - 64);
		*rl = 0;
	} else if (s == 0) {
		*rh = hi;
		*rl = lo;
	} else {
		*rh = hi << s | lo >> (64 - s);
		*rl = lo << s;
	}
}

/* End, End.T and End.X with NEXT-C-SID (RFC 9800 §4.1.1), as the fast path's
 * next_csid::fast and next_csid::fast_hop, for a packet fast6 checked as for transit
 * (no Hop-by-Hop Options), with or without an SRH, which is not touched: the
 * destination must carry an argument, bits after the block and the active C-SID not
 * all zero (S01; otherwise the general path's: the ordinary behaviour); those bits are
 * shifted left by the C-SID's length, zeros in at the end (S05-S06); the hop limit
 * minus one (S07); the new destination routed in the SID's FIB (End, End.T) or sent to
 * its adjacency (End.X) (S08). Every lookup before the frame is touched. */
static __always_inline int next_csid(struct xdp_md *ctx, struct ethhdr *eth, struct ipv6hdr *ip6,
				     const struct act *a, __u32 gen, __u32 rx, __u64 len)
{
	__u32 sid = a->arg & 0xffff, lb = (a->arg >> 16) & 0xff, nf = a->arg >> 24;
	if (lb == 0 || nf == 0 || lb + nf >= 128)
		return slow6(ctx, ip6);
	__u64 hi, lo;
	__builtin_memcpy(&hi, &ip6->daddr, 8);
	__builtin_memcpy(&lo, (__u8 *)&ip6->daddr + 8, 8);
	hi = bpf_be64_to_cpu(hi);
	lo = bpf_be64_to_cpu(lo);
	__u64 ah, al, sh, sl;
	shl128(hi, lo, lb + nf, &ah, &al);
	if ((ah | al) == 0)
		return slow6(ctx, ip6);
	shl128(hi, lo, nf, &sh, &sl);
	/* The block's mask (8 <= lb <= 119). */
	__u64 mh = lb >= 64 ? ~0ULL : ~(~0ULL >> lb);
	__u64 ml = lb > 64 ? ~(~0ULL >> (lb - 64)) : 0;
	__u64 nh = bpf_cpu_to_be64((hi & mh) | (sh & ~mh));
	__u64 nl = bpf_cpu_to_be64((lo & ml) | (sl & ~ml));
	__u8 next[16];
	__builtin_memcpy(next, &nh, 8);
	__builtin_memcpy(next + 8, &nl, 8);
	if (host_dst(next))
		return slow6(ctx, ip6);
	/* End, End.T: the new destination's route; End.X: the SID's adjacency. */
	const struct act *h = a->kind == ACT_END_CSID ? route6(gen, a->arg2, next) : adjacency(gen, a->arg2);
	if (!h)
		return slow6(ctx, ip6);
	ip6->hop_limit--;
	__builtin_memcpy(&ip6->daddr, next, 16);
	count(&sid_stats, sid, len);
	return forward(eth, h->eth, h->arg, rx, len);
}

/* Writes the policy's `n` bytes of headers at the frame's new start (a constant length
 * per case, for the verifier). */
#define PUT_HEADERS(n)                                                   \
	case n:                                                          \
		if ((void *)(data + n) > data_end)                       \
			goto undo;                                       \
		__builtin_memcpy(data, p->block + 160 - n, n);           \
		break;

/* A head-end policy (RFC 8986 §5.1-§5.3), as the fast path's rewrite::encap and
 * rewrite::insert (with Linux's outer fields, as seg6_do_srh_encap and
 * seg6_do_srh_inline set them), for an IPv6 packet fast6 checked as for transit:
 *   - H.Encaps(.Red): the headers replace the Ethernet header; the outer version,
 *     traffic class and flow label are the inner packet's, the outer hop limit the
 *     inner one minus one (the inner packet is not changed);
 *   - H.Encaps.L2(.Red): the headers go in front of the frame as received, the outer
 *     fields as for H.Encaps;
 *   - H.Insert(.Red): the headers replace the Ethernet and IPv6 headers; source, traffic
 *     class and flow label stay, the hop limit is one less, the SRH's Next Header is
 *     the old one and Segment List[0] the old destination.
 * Header lengths of an SRH of 1 to 6 segments, or none, or 1 to 3 segments with an
 * HMAC TLV (precomputed: it covers nothing of the packet); others are the general
 * path's. */
static __always_inline int head_end(struct xdp_md *ctx, struct ipv6hdr *ip6, __u32 idx, __u32 gen, __u32 rx,
				    __u64 len)
{
	if (idx >= POLICY_SLOTS)
		return slow6(ctx, ip6);
	__u32 k = idx << 1 | (gen & 1);
	struct policy *p = bpf_map_lookup_elem(&policies, &k);
	if (!p)
		return slow6(ctx, ip6);
	__u32 n = p->len, out = p->out;
	int grow;
	if (p->kind == POLICY_ENCAP)
		grow = (int)n - 14;
	else if (p->kind == POLICY_ENCAP_L2)
		grow = (int)n;
	else if (p->kind == POLICY_INSERT && n >= 54 + 24)
		grow = (int)n - 54;
	else
		return slow6(ctx, ip6);
	if (n != 54 && n != 78 && n != 94 && n != 110 && n != 126 && n != 142 && n != 158 && n != 118 && n != 134 &&
	    n != 150)
		return slow6(ctx, ip6);
	/* What the rewrite keeps of the packet's IPv6 header, read before it moves. */
	__u8 old[40];
	__builtin_memcpy(old, ip6, 40);
	__u32 kind = p->kind;
	if (bpf_xdp_adjust_head(ctx, -grow))
		return general(ctx);
	/* The helper invalidates every packet pointer: derived again, and bounded. */
	__u8 *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	switch (n) {
		PUT_HEADERS(54)
		PUT_HEADERS(78)
		PUT_HEADERS(94)
		PUT_HEADERS(110)
		PUT_HEADERS(126)
		PUT_HEADERS(142)
		PUT_HEADERS(158)
		PUT_HEADERS(118)
		PUT_HEADERS(134)
		PUT_HEADERS(150)
	default:
		goto undo;
	}
	if ((void *)(data + 54) > data_end)
		goto undo;
	__u8 *o = data + 14;
	__u16 plen;
	__builtin_memcpy(o, old, 4);
	o[7] = old[7] - 1;
	if (kind == POLICY_INSERT) {
		if ((void *)(data + 54 + 24) > data_end)
			goto undo;
		plen = (__u16)(len - 54 + (n - 54));
		__builtin_memcpy(o + 8, old + 8, 16);
		data[54] = old[6];
		__builtin_memcpy(data + 54 + 8, old + 24, 16);
	} else {
		plen = (__u16)(len - 14 + (kind == POLICY_ENCAP_L2 ? 14 : 0) + (n - 54));
	}
	o[4] = plen >> 8;
	o[5] = plen & 0xff;
	count(&rx_stats, rx, len);
	count(&tx_stats, out, len + grow);
	return bpf_redirect_map(&tx, out, 0);
undo:
	/* (Cannot be: the policy's headers fit the frame grown for them.) Undone, for sr6:
	 * the received frame is still there, after the room made. */
	if (bpf_xdp_adjust_head(ctx, grow))
		return XDP_DROP;
	return general(ctx);
}

static __always_inline int fast6(struct xdp_md *ctx, struct ethhdr *eth, struct ipv6hdr *ip6, void *end)
{
	__u64 len = (__u64)(end - (void *)eth);
	__u32 z = 0;
	__u32 *g = bpf_map_lookup_elem(&cur, &z);
	if (!g)
		return slow6(ctx, ip6);
	__u32 gen = *g;
	__u32 ifindex = ctx->ingress_ifindex;
	if (ifindex >= DEVS_IFINDEX_MAX)
		return slow6(ctx, ip6);
	__u32 dk = ifindex << 1 | (gen & 1);
	struct dev_conf *dc = bpf_map_lookup_elem(&devs, &dk);
	/* A frame that a rewrite could take past an MTU; a frame shorter than an SRH's first
	 * 8 bytes (padded on the wire); Ethernet padding or a truncated packet. */
	if (!dc || dc->max_len == 0 || len > dc->max_len || len < 62 || ip6->version != 6 ||
	    bpf_ntohs(ip6->payload_len) != len - 54)
		return slow6(ctx, ip6);
	/* Hop limit, loopback/unspecified/link-local/multicast sources (::/8, fe00::/7),
	 * Hop-by-Hop Options: the general path's. */
	if (ip6->hop_limit <= 1 || (__u8)(ip6->saddr.s6_addr[0] - 1) >= 0xfd || ip6->nexthdr == 0)
		return slow6(ctx, ip6);
	struct route_key k = { .prefixlen = 16 + 128, .gen = gen, .table = 0 };
	__builtin_memcpy(k.addr, &ip6->daddr, 16);
	struct act *a = bpf_map_lookup_elem(&routes6, &k);
	if (!a)
		return slow6(ctx, ip6);
	if (a->kind == ACT_FORWARD || a->kind == ACT_FORWARD_ADJ) {
		const struct act *h = hop_of(gen, a);
		if (!h || host_dst(ip6->daddr.s6_addr))
			return slow6(ctx, ip6);
		ip6->hop_limit--;
		return forward(eth, h->eth, h->arg, dc->dev, len);
	}
	if (a->kind == ACT_END_CSID || a->kind == ACT_END_X_CSID)
		return next_csid(ctx, eth, ip6, a, gen, dc->dev, len);
	if (a->kind == ACT_POLICY) {
		if (host_dst(ip6->daddr.s6_addr))
			return slow6(ctx, ip6);
		return head_end(ctx, ip6, a->arg, gen, dc->dev, len);
	}
	if (a->kind == ACT_DT6 || a->kind == ACT_DX6 || a->kind == ACT_DT4 || a->kind == ACT_DT46 ||
	    a->kind == ACT_DX4)
		return decap(ctx, ip6, end, a, gen, dc, len);
	__u32 kind = a->kind;
	int with_psp = kind == ACT_END_PSP || kind == ACT_END_X_PSP;
	if (kind == ACT_END_PSP)
		kind = ACT_END;
	else if (kind == ACT_END_X_PSP)
		kind = ACT_END_X;
	if ((kind != ACT_END && kind != ACT_END_X) || ip6->nexthdr != IPPROTO_ROUTING)
		return slow6(ctx, ip6);
	/* RFC 8754 §2: an SRH (Routing Type 4) whose Hdr Ext Len is the Segment List's,
	 * or that and one HMAC TLV (srh_auth), within the packet; RFC 8986 §4.1 S02-S13:
	 * 1 <= Segments Left <= Last Entry + 1, the next segment Segment List[Segments
	 * Left - 1]. */
	__u8 *srh = (__u8 *)(ip6 + 1);
	if ((void *)(srh + 8) > end)
		return slow6(ctx, ip6);
	__u32 le1 = (__u32)srh[4] + 1;
	__u32 segs_len = 8 * (__u32)srh[1];
	__u32 sl = srh[3];
	if (srh[2] != 4 || segs_len > len - 62 || sl == 0 || sl > le1)
		return slow6(ctx, ip6);
	if (srh_auth(srh, end, le1, gen, dc, ip6) < 0)
		return slow6(ctx, ip6);
	__u32 off = 16 * (sl - 1);
	/* Kept: clang knows off <= 16 * 254 and would drop the test, but the 6.1
	 * kernel's verifier does not (Segments Left - 1 may be -1 to it). */
	barrier_var(off);
	if (off > 16 * 254)
		return slow6(ctx, ip6);
	__u8 *seg = srh + 8 + off;
	if ((void *)(seg + 16) > end)
		return slow6(ctx, ip6);
	__u8 next[16];
	__builtin_memcpy(next, seg, 16);
	if (host_dst(next))
		return slow6(ctx, ip6);
	/* End and End.T: the next segment routed in the SID's FIB; End.X: the SID's
	 * adjacency. Every lookup before the frame is touched. */
	const struct act *h = kind == ACT_END ? route6(gen, a->arg2, next) : adjacency(gen, a->arg2);
	if (!h)
		return slow6(ctx, ip6);
	const __u8 *mac = h->eth;
	__u32 out = h->arg;
	__u32 sid = a->arg;
	if (with_psp && sl == 1)
		return psp(ctx, eth, srh, next, mac, out, sid, dc->dev, len, 8 + segs_len);
	ip6->hop_limit--;
	srh[3] = sl - 1;
	__builtin_memcpy(&ip6->daddr, next, 16);
	count(&sid_stats, sid, len);
	return forward(eth, mac, out, dc->dev, len);
}

static __always_inline int slow4(struct xdp_md *ctx, struct iphdr *ip)
{
	if (bpf_map_lookup_elem(&host4, &ip->daddr))
		return XDP_PASS;
	return general(ctx);
}

/* IPv4 forwarding as the fast path does it (RFC 1812 §5.2.2, §5.3.1): a header without
 * options whose Total Length is the frame's, TTL over 1, a right checksum, no odd
 * address, a route through a gateway out of another device; TTL minus one with the
 * checksum updated (RFC 1624 eq. 3, as sr6's `checksum::update16`). */
static __always_inline int fast4(struct xdp_md *ctx, struct ethhdr *eth, struct iphdr *ip, void *end)
{
	__u64 len = (__u64)(end - (void *)eth);
	__u32 z = 0;
	__u32 *g = bpf_map_lookup_elem(&cur, &z);
	if (!g)
		return slow4(ctx, ip);
	__u32 gen = *g;
	__u32 ifindex = ctx->ingress_ifindex;
	if (ifindex >= DEVS_IFINDEX_MAX)
		return slow4(ctx, ip);
	__u32 dk = ifindex << 1 | (gen & 1);
	struct dev_conf *dc = bpf_map_lookup_elem(&devs, &dk);
	if (!dc || dc->max_len4 == 0 || len > dc->max_len4)
		return slow4(ctx, ip);
	__u8 *b = (__u8 *)ip;
	if (b[0] != 0x45 || bpf_ntohs(ip->tot_len) != len - 14 || ip->ttl <= 1 || !ip4_csum_ok(ip))
		return slow4(ctx, ip);
	__u32 dst = bpf_ntohl(ip->daddr), src = bpf_ntohl(ip->saddr);
	if (screen4(dst) || screen4(src) || bpf_map_lookup_elem(&local4, &ip->saddr))
		return slow4(ctx, ip);
	struct route4_key k = { .prefixlen = 16 + 32, .gen = gen, .table = 0 };
	__builtin_memcpy(k.addr, &ip->daddr, 4);
	const struct act *h = hop_of(gen, bpf_map_lookup_elem(&routes4, &k));
	if (!h || h->arg == dc->dev)
		return slow4(ctx, ip);
	__u16 check = ttl_dec_check(ip);
	ip->ttl--;
	ip->check = check;
	return forward(eth, h->eth, h->arg, dc->dev, len);
}

SEC("xdp")
int sr6_fast(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;

	if ((void *)(eth + 1) > end || (eth->h_dest[0] & 1))
		return XDP_PASS;
	if (eth->h_proto == bpf_htons(ETH_P_IPV6)) {
		struct ipv6hdr *ip6 = (void *)(eth + 1);
		if ((void *)(ip6 + 1) > end)
			return XDP_PASS;
		if (ip6->nexthdr == IPPROTO_ICMPV6 && (void *)(ip6 + 1) + 1 <= end) {
			__u8 type = *(__u8 *)(ip6 + 1);
			if (type >= 133 && type <= 137)
				return XDP_PASS; /* RS RA NS NA Redirect */
		}
		return fast6(ctx, eth, ip6, end);
	}
	if (eth->h_proto == bpf_htons(ETH_P_IP)) {
		struct iphdr *ip = (void *)(eth + 1);
		if ((void *)(ip + 1) > end)
			return XDP_PASS;
		return fast4(ctx, eth, ip, end);
	}
	return XDP_PASS; /* ARP, LLDP, VLAN, ... */
}

char _license[] SEC("license") = "GPL";
