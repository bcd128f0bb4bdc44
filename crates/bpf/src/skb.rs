//! What a program runs against: the packet and its metadata (the kernel's `struct
//! sk_buff` as `struct __sk_buff` shows it, include/uapi/linux/bpf.h) and the helpers that
//! touch them. The packet side implements [`Skb`]; [`crate::seg6::Seg6Packet`] is this
//! crate's own implementation of the End.BPF helpers over a packet's bytes
//! ([`crate::bytes::PacketBytes`]).

/// Errno values (negated) the packet helpers return, as the kernel's.
pub mod errno {
    pub const EFAULT: i64 = 14;
    pub const ENOMEM: i64 = 12;
    pub const EINVAL: i64 = 22;
    pub const ENOENT: i64 = 2;
    pub const EBADMSG: i64 = 74;
    pub const ENOTSUPP: i64 = 524;
}

/// The metadata fields of `struct __sk_buff` that an LWT program may read (and the few it
/// may write: `mark`, `priority`, `cb[]`). Others read as 0.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SkbMeta {
    pub pkt_type: u32,
    pub mark: u32,
    pub queue_mapping: u32,
    /// `skb->protocol` as the kernel stores it: a big-endian 16-bit value in a u32 (IPv6:
    /// bytes 0x86 0xdd, so 0xdd86 read little-endian).
    pub protocol: u32,
    pub priority: u32,
    pub ingress_ifindex: u32,
    pub ifindex: u32,
    pub tc_index: u32,
    pub cb: [u32; 5],
    pub hash: u32,
    pub napi_id: u32,
}

impl SkbMeta {
    /// `protocol` for IPv6 (ETH_P_IPV6 in network byte order).
    pub const PROTO_IPV6: u32 = u16::from_ne_bytes(0x86ddu16.to_be_bytes()) as u32;
}

/// The packet a program runs on, with the helpers that act on it. Every method has a
/// default that refuses (`-ENOTSUPP`), so a packet type implements what its program types
/// need. The interpreter has already bounds-checked every argument taken from program
/// memory.
pub trait Skb {
    /// Packet data from the network header (the outer IPv6 header).
    fn data(&self) -> &[u8];
    /// Packet data for direct writes, when the program type allows them (`lwt_xmit`).
    fn data_mut(&mut self) -> Option<&mut [u8]> {
        None
    }
    fn meta(&self) -> &SkbMeta;
    fn meta_mut(&mut self) -> &mut SkbMeta;
    /// `bpf_ktime_get_ns`: a monotonic clock in nanoseconds.
    fn ktime_get_ns(&mut self) -> u64 {
        0
    }
    /// The CPU the program runs on (`bpf_get_smp_processor_id`, `BPF_F_CURRENT_CPU`):
    /// sr6's worker index.
    fn cpu(&self) -> u32 {
        0
    }
    /// `bpf_get_prandom_u32`.
    fn prandom_u32(&mut self) -> u32 {
        0
    }
    /// `bpf_trace_printk`: the format string (its bytes as the program passed them).
    fn trace_printk(&mut self, _fmt: &[u8]) {}
    /// `bpf_lwt_seg6_store_bytes(skb, offset, from, len)`.
    fn lwt_seg6_store_bytes(&mut self, _offset: u32, _from: &[u8]) -> i64 {
        -errno::ENOTSUPP
    }
    /// `bpf_lwt_seg6_adjust_srh(skb, offset, delta)`.
    fn lwt_seg6_adjust_srh(&mut self, _offset: u32, _delta: i32) -> i64 {
        -errno::ENOTSUPP
    }
    /// `bpf_lwt_seg6_action(skb, action, param, param_len)`.
    fn lwt_seg6_action(&mut self, _action: u32, _param: &[u8]) -> i64 {
        -errno::ENOTSUPP
    }
    /// `bpf_lwt_push_encap(skb, type, hdr, len)` (`lwt_in`, `lwt_xmit`).
    fn lwt_push_encap(&mut self, _encap_type: u32, _hdr: &[u8]) -> i64 {
        -errno::ENOTSUPP
    }
    /// `sr6_ecmp_nexthops(skb, dst, table, out, out_len)`, sr6's extension helper
    /// ([`crate::helpers::SR6_ECMP_NEXTHOPS`]): the gateways of the route `table` (0: the
    /// main table) has for `dst`, as many as `out` holds. Returns how many the route has
    /// (0: a route without gateways), `-ENOENT` without a route, `-EINVAL` for a table
    /// the router does not have.
    fn ecmp_nexthops(&mut self, _dst: &[u8; 16], _table: u32, _out: &mut [[u8; 16]]) -> i64 {
        -errno::ENOTSUPP
    }
}

/// The most next hops `sr6_ecmp_nexthops` writes in one call.
pub const MAX_NEXTHOPS: usize = 32;

/// The router side of [`Skb::ecmp_nexthops`], for a packet view that has no routes of
/// its own ([`crate::seg6::end_bpf_ext`]).
pub trait NextHopLookup {
    /// As [`Skb::ecmp_nexthops`].
    fn ecmp_nexthops(&self, dst: &[u8; 16], table: u32, out: &mut [[u8; 16]]) -> i64;
}

/// The state `bpf_get_prandom_u32` starts from in a new packet view.
pub const PRANDOM_SEED: u32 = 0x2545_f491;

/// `bpf_get_prandom_u32` of the packet views: xorshift32 over `state`, deterministic so
/// that tests and replays give the same numbers.
pub(crate) fn xorshift32(state: &mut u32) -> u32 {
    let mut x = *state;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    *state = x;
    x
}

/// `bpf_trace_printk` of the packet views: the format kept, at most 1,024 a run.
pub(crate) fn keep_trace(traces: &mut Vec<Vec<u8>>, fmt: &[u8]) {
    if traces.len() < 1024 {
        traces.push(fmt.to_vec());
    }
}
