//! Helper ids, the program types sr6 runs, and which helpers each may call: the kernel's
//! `lwt_seg6local_func_proto`, `lwt_in/out/xmit_func_proto` and `bpf_base_func_proto`
//! (net/core/filter.c), and which of those sr6 provides.

use crate::helper_names::HELPER_NAMES;

// `enum bpf_func_id` values (include/uapi/linux/bpf.h).
pub const MAP_LOOKUP_ELEM: i32 = 1;
pub const MAP_UPDATE_ELEM: i32 = 2;
pub const MAP_DELETE_ELEM: i32 = 3;
pub const KTIME_GET_NS: i32 = 5;
pub const TRACE_PRINTK: i32 = 6;
pub const GET_PRANDOM_U32: i32 = 7;
pub const GET_SMP_PROCESSOR_ID: i32 = 8;
pub const TAIL_CALL: i32 = 12;
pub const GET_CGROUP_CLASSID: i32 = 17;
pub const GET_ROUTE_REALM: i32 = 24;
pub const PERF_EVENT_OUTPUT: i32 = 25;
pub const SKB_LOAD_BYTES: i32 = 26;
pub const CSUM_DIFF: i32 = 28;
pub const SKB_UNDER_CGROUP: i32 = 33;
pub const GET_HASH_RECALC: i32 = 34;
pub const SKB_PULL_DATA: i32 = 39;
pub const GET_NUMA_NODE_ID: i32 = 42;
pub const LWT_PUSH_ENCAP: i32 = 73;
pub const LWT_SEG6_STORE_BYTES: i32 = 74;
pub const LWT_SEG6_ADJUST_SRH: i32 = 75;
pub const LWT_SEG6_ACTION: i32 = 76;
pub const KTIME_GET_BOOT_NS: i32 = 125;

/// sr6's extension helper `sr6_ecmp_nexthops(skb, dst, table, out, out_len)`, for
/// `lwt_seg6local` programs: the next hops of a destination's route (docs/bpf.md, "sr6's
/// extension helper"). Far above the kernel's ids (the last, `cgrp_storage_delete`, is
/// 211), so that no kernel helper takes it; the kernel refuses a program calling it.
pub const SR6_ECMP_NEXTHOPS: i32 = 0x7f53;

/// The program types of the LWT family (`enum bpf_prog_type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProgType {
    /// `BPF_PROG_TYPE_LWT_SEG6LOCAL`: End.BPF.
    LwtSeg6local,
    /// `BPF_PROG_TYPE_LWT_IN`: `encap bpf in`.
    LwtIn,
    /// `BPF_PROG_TYPE_LWT_OUT`: `encap bpf out`.
    LwtOut,
    /// `BPF_PROG_TYPE_LWT_XMIT`: `encap bpf xmit`.
    LwtXmit,
}

impl ProgType {
    pub fn name(self) -> &'static str {
        match self {
            ProgType::LwtSeg6local => "lwt_seg6local",
            ProgType::LwtIn => "lwt_in",
            ProgType::LwtOut => "lwt_out",
            ProgType::LwtXmit => "lwt_xmit",
        }
    }

    /// Whether the program may write packet data directly (the verifier's
    /// `may_access_direct_pkt_data`: only `lwt_xmit` of these).
    pub fn packet_writable(self) -> bool {
        self == ProgType::LwtXmit
    }
}

/// The helper's name (`bpf_` + the uapi name), or `None` for an id the kernel does not have.
pub fn helper_name(id: i32) -> Option<String> {
    if id == SR6_ECMP_NEXTHOPS {
        return Some("sr6_ecmp_nexthops".to_string());
    }
    let i = usize::try_from(id).ok().filter(|&i| i > 0)?;
    HELPER_NAMES.get(i).map(|n| format!("bpf_{n}"))
}

/// The base helpers every networking program type gets (`bpf_base_func_proto`, Linux 6.x,
/// some only with CAP_BPF or CAP_PERFMON): the map helpers, time, random numbers, traces,
/// and also queues and stacks (87-89), spin locks (93-94), probe reads (112-115),
/// `jiffies64` (118), ring buffers (130-134, 198-200, 209), `snprintf` (149, 165),
/// per-CPU pointers (153-154), `for_each_map_elem` (164), timers (169-172),
/// `trace_vprintk` (177), `loop` (181), `strncmp` (182), `kptr_xchg` (194), dynptrs
/// (197, 201-203), `ktime_get_tai_ns` (208), which sr6 reports as not provided.
const BASE: &[i32] = &[
    MAP_LOOKUP_ELEM,
    MAP_UPDATE_ELEM,
    MAP_DELETE_ELEM,
    GET_PRANDOM_U32,
    GET_SMP_PROCESSOR_ID,
    GET_NUMA_NODE_ID,
    TAIL_CALL,
    KTIME_GET_NS,
    KTIME_GET_BOOT_NS,
    TRACE_PRINTK,
    87,
    88,
    89,
    93,
    94,
    112,
    113,
    114,
    115,
    118,
    130,
    131,
    132,
    133,
    134,
    149,
    153,
    154,
    164,
    165,
    169,
    170,
    171,
    172,
    177,
    181,
    182,
    194,
    197,
    198,
    199,
    200,
    201,
    202,
    203,
    208,
    209,
];

/// `lwt_out_func_proto`'s own helpers.
const LWT_OUT: &[i32] = &[
    SKB_LOAD_BYTES,
    SKB_PULL_DATA,
    CSUM_DIFF,
    GET_CGROUP_CLASSID,
    GET_ROUTE_REALM,
    GET_HASH_RECALC,
    PERF_EVENT_OUTPUT,
    SKB_UNDER_CGROUP,
];

/// `lwt_xmit_func_proto`'s own helpers besides `bpf_lwt_push_encap`: `skb_store_bytes`
/// (9), checksum updates (10, 11, 40, 135), redirects (13, 23), tunnel keys and options
/// (20, 21, 29, 30), `skb_change_tail`/`_head` (38, 43), `set_hash_invalid` (41); sr6
/// provides none of them yet.
const LWT_XMIT: &[i32] = &[9, 10, 11, 13, 20, 21, 23, 29, 30, 38, 40, 41, 43, 135];

/// Whether the kernel lets a program of this type call the helper (the subset of the
/// kernel's lists that sr6 knows; a helper outside it is refused as not available), or,
/// for sr6's extension helper, whether sr6 gives it to the type (`lwt_seg6local` only).
pub fn kernel_allows(t: ProgType, id: i32) -> bool {
    let own = match t {
        ProgType::LwtSeg6local => {
            [LWT_SEG6_STORE_BYTES, LWT_SEG6_ADJUST_SRH, LWT_SEG6_ACTION, SR6_ECMP_NEXTHOPS].contains(&id)
        }
        ProgType::LwtIn => id == LWT_PUSH_ENCAP,
        ProgType::LwtXmit => id == LWT_PUSH_ENCAP || LWT_XMIT.contains(&id),
        ProgType::LwtOut => false,
    };
    own || LWT_OUT.contains(&id) || BASE.contains(&id)
}

/// Whether sr6's interpreter implements the helper.
pub fn provided(t: ProgType, id: i32) -> bool {
    let common = [
        MAP_LOOKUP_ELEM,
        MAP_UPDATE_ELEM,
        MAP_DELETE_ELEM,
        KTIME_GET_NS,
        KTIME_GET_BOOT_NS,
        TRACE_PRINTK,
        GET_PRANDOM_U32,
        GET_SMP_PROCESSOR_ID,
        GET_NUMA_NODE_ID,
        SKB_LOAD_BYTES,
        PERF_EVENT_OUTPUT,
    ];
    common.contains(&id)
        || (t == ProgType::LwtSeg6local
            && [LWT_SEG6_STORE_BYTES, LWT_SEG6_ADJUST_SRH, LWT_SEG6_ACTION, SR6_ECMP_NEXTHOPS].contains(&id))
        || (matches!(t, ProgType::LwtIn | ProgType::LwtXmit) && id == LWT_PUSH_ENCAP)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_by_id() {
        assert_eq!(helper_name(1).as_deref(), Some("bpf_map_lookup_elem"));
        assert_eq!(helper_name(26).as_deref(), Some("bpf_skb_load_bytes"));
        assert_eq!(helper_name(73).as_deref(), Some("bpf_lwt_push_encap"));
        assert_eq!(helper_name(74).as_deref(), Some("bpf_lwt_seg6_store_bytes"));
        assert_eq!(helper_name(75).as_deref(), Some("bpf_lwt_seg6_adjust_srh"));
        assert_eq!(helper_name(76).as_deref(), Some("bpf_lwt_seg6_action"));
        assert_eq!(helper_name(0), None);
        assert_eq!(helper_name(-1), None);
        assert_eq!(helper_name(100_000), None);
    }

    #[test]
    fn seg6local_set() {
        let t = ProgType::LwtSeg6local;
        assert!(kernel_allows(t, LWT_SEG6_ACTION) && provided(t, LWT_SEG6_ACTION));
        assert!(kernel_allows(t, PERF_EVENT_OUTPUT) && provided(t, PERF_EVENT_OUTPUT));
        // bpf_skb_output (111) is the tracing programs' (raw_tp_prog_func_proto).
        assert!(!kernel_allows(t, 111));
        assert!(kernel_allows(t, SKB_PULL_DATA) && !provided(t, SKB_PULL_DATA));
        assert!(!kernel_allows(t, LWT_PUSH_ENCAP));
        assert!(kernel_allows(t, 181) && !provided(t, 181)); // bpf_loop
        assert!(!kernel_allows(ProgType::LwtIn, LWT_SEG6_ACTION));
    }

    #[test]
    fn the_extension_helper() {
        assert_eq!(helper_name(SR6_ECMP_NEXTHOPS).as_deref(), Some("sr6_ecmp_nexthops"));
        assert!(helper_name(SR6_ECMP_NEXTHOPS - 1).is_none() && helper_name(212).is_none());
        let t = ProgType::LwtSeg6local;
        assert!(kernel_allows(t, SR6_ECMP_NEXTHOPS) && provided(t, SR6_ECMP_NEXTHOPS));
        for t in [ProgType::LwtIn, ProgType::LwtOut, ProgType::LwtXmit] {
            assert!(!kernel_allows(t, SR6_ECMP_NEXTHOPS) && !provided(t, SR6_ECMP_NEXTHOPS), "{t:?}");
        }
    }

    #[test]
    fn lwt_sets() {
        for t in [ProgType::LwtIn, ProgType::LwtXmit] {
            assert!(kernel_allows(t, LWT_PUSH_ENCAP) && provided(t, LWT_PUSH_ENCAP), "{t:?}");
            assert!(!kernel_allows(t, LWT_SEG6_STORE_BYTES), "{t:?}");
        }
        let out = ProgType::LwtOut;
        assert!(!kernel_allows(out, LWT_PUSH_ENCAP) && !provided(out, LWT_PUSH_ENCAP));
        assert!(kernel_allows(out, SKB_LOAD_BYTES) && provided(out, SKB_LOAD_BYTES));
        assert!(kernel_allows(ProgType::LwtXmit, 23) && !provided(ProgType::LwtXmit, 23)); // bpf_redirect
        assert!(!kernel_allows(ProgType::LwtIn, 23));
    }
}
