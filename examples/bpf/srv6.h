/* Definitions shared by the End.BPF examples: the IPv6 header and the Segment Routing
 * Header as RFC 8200 and RFC 8754 lay them out, the TLV types these examples use, and
 * sr6's extension helper. The eBPF types, return codes and helpers come from the
 * kernel's UAPI (linux/bpf.h, linux/seg6_local.h) and libbpf's bpf_helpers.h. */
#ifndef SR6_EXAMPLES_SRV6_H
#define SR6_EXAMPLES_SRV6_H

#include <linux/bpf.h>
#include <linux/seg6_local.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#define NEXTHDR_ROUTING 43
#define NEXTHDR_IPV6 41
#define SRH_TYPE 4

/* RFC 8200 §3, 40 bytes. */
struct ip6 {
	__u8 vtc;            /* version (6) and the traffic class's high nibble */
	__u8 tcfl;
	__u16 flow;
	__u16 payload_len;   /* network byte order */
	__u8 nexthdr;
	__u8 hop_limit;
	__u8 saddr[16];
	__u8 daddr[16];
} __attribute__((packed));

/* RFC 8754 §2: the SRH's fixed 8 bytes; the segment list (16 bytes a segment, segment 0
 * the last to be visited) and the TLVs follow. */
struct srh {
	__u8 nexthdr;
	__u8 hdrlen;         /* in 8-byte units, not counting the first 8 bytes */
	__u8 type;           /* 4 */
	__u8 segments_left;
	__u8 last_entry;     /* index of the first segment to visit */
	__u8 flags;
	__u16 tag;
} __attribute__((packed));

/* SRH TLV types of these examples, from RFC 8754's range for experiments (124-126;
 * IANA "Segment Routing Header TLVs"): they mean something only between the programs
 * below. */
#define TLV_DM 124           /* dm_encap.c -> end_dm.c: a delay measurement */
#define TLV_OAMP_ANSWER 125  /* end_oamp.c: the ECMP next hops it found */

/* sr6's extension helper (docs/bpf.md, "sr6's extension helper"): the next hops of the
 * route `table` (0: the main table) has for `dst`, written to `out` (`out_len` bytes,
 * room for out_len / 16 addresses). Returns how many next hops the route has (0 for a
 * route without any: local, on-link, a blackhole, an SRv6 policy), -ENOENT (-2) when
 * no route matches, -EINVAL (-22) for a table sr6 does not have. The kernel has no such
 * helper and refuses a program that calls it ("invalid func unknown#32595"). */
#define SR6_FUNC_ECMP_NEXTHOPS 0x7f53
static long (*sr6_ecmp_nexthops)(struct __sk_buff *skb, const void *dst, __u32 table, void *out,
				 __u32 out_len) = (void *)SR6_FUNC_ECMP_NEXTHOPS;

#endif
