//! The XDP program, assembled in Rust as raw eBPF instructions (no clang, no libbpf).
//!
//! It steers to the AF_XDP sockets only what sr6 must handle and leaves everything else
//! to the kernel (`XDP_PASS`). The equivalent C:
//!
//! ```c
//! SEC("xdp") int sr6_xdp(struct xdp_md *ctx)
//! {
//!     void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
//!     struct ethhdr *eth = data;
//!     if (data + 14 > end) return XDP_PASS;
//!     if (eth->h_dest[0] & 1) return XDP_PASS;          /* multicast / broadcast */
//!     if (eth->h_proto == htons(ETH_P_IPV6)) {
//!         struct ipv6hdr *ip6 = data + 14;
//!         if (data + 54 > end) return XDP_PASS;
//!         if (ip6->nexthdr == IPPROTO_ICMPV6 && data + 55 <= end) {
//!             __u8 type = *(__u8 *)(data + 54);
//!             if (type >= 133 && type <= 137) return XDP_PASS; /* RS RA NS NA Redirect */
//!         }
//!         if (bpf_map_lookup_elem(&host6, &ip6->daddr)) return XDP_PASS;
//!     } else if (eth->h_proto == htons(ETH_P_IP)) {
//!         struct iphdr *ip = data + 14;
//!         if (data + 34 > end) return XDP_PASS;
//!         if (bpf_map_lookup_elem(&host4, &ip->daddr)) return XDP_PASS;
//!     } else {
//!         return XDP_PASS;                                 /* ARP, LLDP, VLAN, ... */
//!     }
//!     /* XDP_PASS when no socket is bound to this queue */
//!     return bpf_redirect_map(&xsks, ctx->rx_queue_index, XDP_PASS);
//! }
//! ```
//!
//! A frame too short for the header it claims goes to the kernel, which drops it. The
//! map keys are read straight from the packet (the verifier accepts packet pointers as
//! map keys once their range is checked).

use crate::bpf::asm::*;
use crate::bpf::Insn;

/// The map file descriptors the program refers to.
#[derive(Debug, Clone, Copy)]
pub(crate) struct MapFds {
    pub host6: i32,
    pub host4: i32,
    pub xsks: i32,
}

/// Assembles the program. `miss` is the action when no socket is bound to the queue
/// ([`XDP_PASS`] in production; tests use [`XDP_DROP`] to tell "steered" from "passed").
pub(crate) fn xdp_program(maps: MapFds, miss: u32) -> Vec<Insn> {
    // EtherTypes as a 16-bit load from the packet sees them (host order of wire bytes).
    let eth_p_ipv6 = u16::from_ne_bytes([0x86, 0xdd]) as i32;
    let eth_p_ip = u16::from_ne_bytes([0x08, 0x00]) as i32;

    let mut a = Asm::new();
    let pass = a.label();
    let ipv6 = a.label();
    let lookup6 = a.label();
    let redirect = a.label();

    a.emit(MOV64_REG, R6, R1, 0, 0); //              r6 = ctx (callee-saved)
    a.emit(LDX_W, R2, R6, MD_DATA, 0); //            r2 = ctx->data
    a.emit(LDX_W, R3, R6, MD_DATA_END, 0); //        r3 = ctx->data_end
    a.emit(MOV64_REG, R4, R2, 0, 0); //              r4 = data + 14
    a.emit(ADD64_IMM, R4, 0, 0, 14);
    a.jump(JGT_REG, R4, R3, 0, pass); //             if (r4 > end) pass
    a.emit(LDX_B, R4, R2, 0, 0); //                  r4 = eth->h_dest[0]
    a.jump(JSET_IMM, R4, 0, 1, pass); //             if (r4 & 1) pass
    a.emit(LDX_H, R4, R2, 12, 0); //                 r4 = eth->h_proto
    a.jump(JEQ_IMM, R4, 0, eth_p_ipv6, ipv6);
    a.jump(JNE_IMM, R4, 0, eth_p_ip, pass);
    // IPv4
    a.emit(MOV64_REG, R4, R2, 0, 0); //              r4 = data + 34
    a.emit(ADD64_IMM, R4, 0, 0, 34);
    a.jump(JGT_REG, R4, R3, 0, pass); //             if (r4 > end) pass
    a.emit(ADD64_IMM, R2, 0, 0, 30); //              r2 = &ip->daddr
    a.ld_map_fd(R1, maps.host4); //                  r1 = &host4
    a.emit(CALL, 0, 0, 0, BPF_FUNC_MAP_LOOKUP_ELEM);
    a.jump(JNE_IMM, R0, 0, 0, pass); //              if (found) pass
    a.jump(JA, 0, 0, 0, redirect);

    // IPv6
    a.bind(ipv6);
    a.emit(MOV64_REG, R4, R2, 0, 0); //              r4 = data + 54
    a.emit(ADD64_IMM, R4, 0, 0, 54);
    a.jump(JGT_REG, R4, R3, 0, pass); //             if (r4 > end) pass
    a.emit(LDX_B, R4, R2, 20, 0); //                 r4 = ip6->nexthdr
    a.jump(JNE_IMM, R4, 0, 58, lookup6); //          not ICMPv6
    a.emit(MOV64_REG, R4, R2, 0, 0); //              r4 = data + 55
    a.emit(ADD64_IMM, R4, 0, 0, 55);
    a.jump(JGT_REG, R4, R3, 0, lookup6); //          no type byte
    a.emit(LDX_B, R4, R2, 54, 0); //                 r4 = icmp6->icmp6_type
    a.jump(JLT_IMM, R4, 0, 133, lookup6);
    a.jump(JLE_IMM, R4, 0, 137, pass); //            133..=137: neighbour discovery
    a.bind(lookup6);
    a.emit(ADD64_IMM, R2, 0, 0, 38); //              r2 = &ip6->daddr
    a.ld_map_fd(R1, maps.host6); //                  r1 = &host6
    a.emit(CALL, 0, 0, 0, BPF_FUNC_MAP_LOOKUP_ELEM);
    a.jump(JNE_IMM, R0, 0, 0, pass); //              if (found) pass

    // Everything else: to the socket of this queue.
    a.bind(redirect);
    a.emit(LDX_W, R2, R6, MD_RX_QUEUE_INDEX, 0); //  r2 = ctx->rx_queue_index
    a.ld_map_fd(R1, maps.xsks); //                   r1 = &xsks
    a.emit(MOV64_IMM, R3, 0, 0, miss as i32); //     r3 = fallback action
    a.emit(CALL, 0, 0, 0, BPF_FUNC_REDIRECT_MAP);
    a.emit(EXIT, 0, 0, 0, 0); //                     return r0
    a.bind(pass);
    a.emit(MOV64_IMM, R0, 0, 0, XDP_PASS as i32); // return XDP_PASS
    a.emit(EXIT, 0, 0, 0, 0);
    a.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prog() -> Vec<Insn> {
        xdp_program(MapFds { host6: 7, host4: 8, xsks: 9 }, XDP_PASS)
    }

    #[test]
    fn instruction_count() {
        // 41 instructions, three of them LD_IMM64 taking two slots.
        assert_eq!(prog().len(), 44);
    }

    #[test]
    fn encodings_match_hand_computed_bytes() {
        let p = prog();
        let le = cfg!(target_endian = "little");
        if !le {
            return; // the expected bytes below are little-endian
        }
        // r6 = r1: MOV64_X, dst 6, src 1.
        assert_eq!(p[0].to_bytes(), [0xbf, 0x16, 0, 0, 0, 0, 0, 0]);
        // r2 = *(u32 *)(r6 + 0)
        assert_eq!(p[1].to_bytes(), [0x61, 0x62, 0, 0, 0, 0, 0, 0]);
        // r3 = *(u32 *)(r6 + 4)
        assert_eq!(p[2].to_bytes(), [0x61, 0x63, 4, 0, 0, 0, 0, 0]);
        // r4 += 14
        assert_eq!(p[4].to_bytes(), [0x07, 0x04, 0, 0, 14, 0, 0, 0]);
        // if r4 > r3 goto pass (insn 42): off = 42 - 5 - 1 = 36.
        assert_eq!(p[5].to_bytes(), [0x2d, 0x34, 36, 0, 0, 0, 0, 0]);
        // if r4 & 1 goto pass: off = 42 - 7 - 1 = 34.
        assert_eq!(p[7].to_bytes(), [0x45, 0x04, 34, 0, 1, 0, 0, 0]);
        // r4 = *(u16 *)(r2 + 12)
        assert_eq!(p[8].to_bytes(), [0x69, 0x24, 12, 0, 0, 0, 0, 0]);
        // if r4 == 0xdd86 goto ipv6 (insn 20): off = 20 - 9 - 1 = 10.
        assert_eq!(p[9].to_bytes(), [0x15, 0x04, 10, 0, 0x86, 0xdd, 0, 0]);
        // if r4 != 0x0008 goto pass: off = 42 - 10 - 1 = 31.
        assert_eq!(p[10].to_bytes(), [0x55, 0x04, 31, 0, 0x08, 0, 0, 0]);
        // r1 = map fd 8 (host4): LD_IMM64 with src = BPF_PSEUDO_MAP_FD, then a zero slot.
        assert_eq!(p[15].to_bytes(), [0x18, 0x11, 0, 0, 8, 0, 0, 0]);
        assert_eq!(p[16].to_bytes(), [0; 8]);
        // call bpf_map_lookup_elem
        assert_eq!(p[17].to_bytes(), [0x85, 0, 0, 0, 1, 0, 0, 0]);
        // goto redirect (insn 36): off = 36 - 19 - 1 = 16.
        assert_eq!(p[19].to_bytes(), [0x05, 0, 16, 0, 0, 0, 0, 0]);
        // if r4 < 133 goto lookup6 (insn 31): off = 31 - 29 - 1 = 1.
        assert_eq!(p[29].to_bytes(), [0xa5, 0x04, 1, 0, 133, 0, 0, 0]);
        // if r4 <= 137 goto pass: off = 42 - 30 - 1 = 11.
        assert_eq!(p[30].to_bytes(), [0xb5, 0x04, 11, 0, 137, 0, 0, 0]);
        // r1 = map fd 7 (host6)
        assert_eq!(p[32].to_bytes(), [0x18, 0x11, 0, 0, 7, 0, 0, 0]);
        // r2 = *(u32 *)(r6 + 16): ctx->rx_queue_index
        assert_eq!(p[36].to_bytes(), [0x61, 0x62, 16, 0, 0, 0, 0, 0]);
        // r1 = map fd 9 (xsks)
        assert_eq!(p[37].to_bytes(), [0x18, 0x11, 0, 0, 9, 0, 0, 0]);
        // r3 = XDP_PASS
        assert_eq!(p[39].to_bytes(), [0xb7, 0x03, 0, 0, 2, 0, 0, 0]);
        // call bpf_redirect_map (51)
        assert_eq!(p[40].to_bytes(), [0x85, 0, 0, 0, 51, 0, 0, 0]);
        // exit; r0 = XDP_PASS; exit
        assert_eq!(p[41].to_bytes(), [0x95, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(p[42].to_bytes(), [0xb7, 0x00, 0, 0, 2, 0, 0, 0]);
        assert_eq!(p[43].to_bytes(), [0x95, 0, 0, 0, 0, 0, 0, 0]);
    }

    #[test]
    fn every_jump_lands_inside_the_program() {
        let p = prog();
        for (i, insn) in p.iter().enumerate() {
            let class = insn.code & 0x07;
            if class == 0x05 && insn.code != CALL && insn.code != EXIT {
                let t = i as isize + 1 + insn.off as isize;
                assert!(t > i as isize && (t as usize) < p.len(), "insn {i} jumps to {t}");
            }
        }
    }
}
