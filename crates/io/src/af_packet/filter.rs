//! The classic BPF socket filter: only what a router's data plane must handle reaches
//! the ring; ARP, neighbour discovery, multicast, LLDP and the rest stay with the
//! kernel alone (it still sees every frame: a packet socket only taps).
//!
//! ```text
//!     if skb->pkt_type != PACKET_HOST        drop   // multicast, broadcast, other host,
//!                                                   // our own transmissions
//!     if dst_mac[0] & 0x01                   drop   // I/G bit: a group address
//!     type = ethertype                              // (a VLAN tag the kernel stripped
//!                                                   //  into metadata is not in the frame)
//!     if type == 0x0800                      accept // IPv4
//!     if type != 0x86dd                      drop   // ARP, LLDP, MPLS, ...
//!     if ipv6.next_header != 58              accept // not ICMPv6 right after the header
//!     if 133 <= icmpv6.type <= 137           drop   // RS, RA, NS, NA, Redirect
//!     accept
//! ```
//!
//! A load past the end of the frame makes the kernel drop it (a truncated NDP message
//! is dropped, not handed over). "Accept" returns `u32::MAX`: the whole frame.

use std::os::fd::OwnedFd;

use super::sys;

// Opcodes (linux/bpf_common.h), class | size | mode or class | op | source.
const LD_W_ABS: u16 = 0x20; // BPF_LD (0x00) | BPF_W (0x00) | BPF_ABS (0x20)
const LD_H_ABS: u16 = 0x28; // BPF_LD | BPF_H (0x08) | BPF_ABS
const LD_B_ABS: u16 = 0x30; // BPF_LD | BPF_B (0x10) | BPF_ABS
const JEQ_K: u16 = 0x15; // BPF_JMP (0x05) | BPF_JEQ (0x10) | BPF_K (0x00)
const JGT_K: u16 = 0x25; // BPF_JMP | BPF_JGT (0x20) | BPF_K
const JGE_K: u16 = 0x35; // BPF_JMP | BPF_JGE (0x30) | BPF_K
const JSET_K: u16 = 0x45; // BPF_JMP | BPF_JSET (0x40) | BPF_K
const RET_K: u16 = 0x06; // BPF_RET (0x06) | BPF_K

/// `ld #pkttype`: the ancillary load of `skb->pkt_type` (SKF_AD_OFF + SKF_AD_PKTTYPE).
const AD_PKTTYPE: u32 = (libc::SKF_AD_OFF + libc::SKF_AD_PKTTYPE) as u32;
const PACKET_HOST: u32 = libc::PACKET_HOST as u32;

const fn ins(code: u16, jt: u8, jf: u8, k: u32) -> libc::sock_filter {
    libc::sock_filter { code, jt, jf, k }
}

/// Jump offsets count instructions skipped after the jump: `ACCEPT`/`DROP` are 12/13.
pub(super) const PROGRAM: [libc::sock_filter; 14] = [
    /*  0 */ ins(LD_W_ABS, 0, 0, AD_PKTTYPE), //       A = skb->pkt_type
    /*  1 */ ins(JEQ_K, 0, 11, PACKET_HOST), //        A == HOST ? next : drop
    /*  2 */ ins(LD_B_ABS, 0, 0, 0), //                A = dst_mac[0]
    /*  3 */ ins(JSET_K, 9, 0, 0x01), //               A & 1 ? drop : next
    /*  4 */ ins(LD_H_ABS, 0, 0, 12), //               A = ethertype
    /*  5 */ ins(JEQ_K, 6, 0, 0x0800), //              IPv4 ? accept : next
    /*  6 */ ins(JEQ_K, 0, 6, 0x86dd), //              IPv6 ? next : drop
    /*  7 */ ins(LD_B_ABS, 0, 0, 14 + 6), //           A = ipv6.next_header
    /*  8 */ ins(JEQ_K, 0, 3, 58), //                  ICMPv6 ? next : accept
    /*  9 */ ins(LD_B_ABS, 0, 0, 14 + 40), //          A = icmpv6.type
    /* 10 */ ins(JGE_K, 0, 1, 133), //                 A >= 133 ? next : accept
    /* 11 */ ins(JGT_K, 0, 1, 137), //                 A > 137 ? accept : drop
    /* 12 */ ins(RET_K, 0, 0, u32::MAX), //            accept: the whole frame
    /* 13 */ ins(RET_K, 0, 0, 0), //                   drop
];

/// Attaches [`PROGRAM`] to `fd` with `SO_ATTACH_FILTER`.
pub(super) fn attach(fd: &OwnedFd, ifname: &str) -> std::io::Result<()> {
    let prog = libc::sock_fprog { len: PROGRAM.len() as u16, filter: PROGRAM.as_ptr().cast_mut() };
    // The kernel copies the program during the call and never writes through `filter`.
    sys::set_opt(fd, libc::SOL_SOCKET, libc::SO_ATTACH_FILTER, &prog, ifname, "SO_ATTACH_FILTER")
}

#[cfg(test)]
mod tests {
    //! The jump arithmetic, checked with a tiny interpreter of the opcodes used above;
    //! the kernel itself is the oracle in `tests/af_packet_netns.rs`.
    use super::*;

    fn run(prog: &[libc::sock_filter], frame: &[u8], pkt_type: u32) -> u32 {
        let mut a = 0u32;
        let mut pc = 0usize;
        loop {
            let i = prog[pc];
            let load = |size: usize| -> Option<u32> {
                if i.k == AD_PKTTYPE {
                    return Some(pkt_type);
                }
                let off = i.k as usize;
                let b = frame.get(off..off + size)?;
                Some(b.iter().fold(0u32, |acc, &x| acc << 8 | u32::from(x)))
            };
            let jump = |cond: bool| if cond { i.jt as usize } else { i.jf as usize };
            pc += 1;
            match i.code {
                LD_W_ABS | LD_H_ABS | LD_B_ABS => {
                    let size = match i.code {
                        LD_W_ABS => 4,
                        LD_H_ABS => 2,
                        _ => 1,
                    };
                    match load(size) {
                        Some(v) => a = v,
                        None => return 0,
                    }
                }
                JEQ_K => pc += jump(a == i.k),
                JGT_K => pc += jump(a > i.k),
                JGE_K => pc += jump(a >= i.k),
                JSET_K => pc += jump(a & i.k != 0),
                RET_K => return i.k,
                c => panic!("opcode {c:#x} not interpreted"),
            }
        }
    }

    fn frame(dst0: u8, ethertype: u16, next_header: u8, icmp_type: u8) -> Vec<u8> {
        let mut f = vec![0u8; 14 + 40 + 8];
        f[0] = dst0;
        f[12..14].copy_from_slice(&ethertype.to_be_bytes());
        f[20] = next_header;
        f[54] = icmp_type;
        f
    }

    #[test]
    fn accepts_exactly_what_the_data_plane_handles() {
        let host = libc::PACKET_HOST as u32;
        let acc = |f: &[u8], t: u32| run(&PROGRAM, f, t) != 0;
        assert!(acc(&frame(0x02, 0x86dd, 17, 0), host));
        assert!(acc(&frame(0x02, 0x0800, 0, 0), host));
        assert!(acc(&frame(0x02, 0x86dd, 43, 0), host), "SRH");
        for t in [0u8, 1, 128, 129, 132, 138, 255] {
            assert!(acc(&frame(0x02, 0x86dd, 58, t), host), "ICMPv6 type {t}");
        }
        for t in 133u8..=137 {
            assert!(!acc(&frame(0x02, 0x86dd, 58, t), host), "NDP type {t}");
        }
        assert!(!acc(&frame(0x02, 0x86dd, 58, 135)[..54], host), "truncated NDP");
        assert!(!acc(&frame(0x33, 0x86dd, 17, 0), host), "I/G bit");
        assert!(!acc(&frame(0xff, 0x0806, 0, 0), host), "ARP broadcast");
        assert!(!acc(&frame(0x02, 0x0806, 0, 0), host), "ARP unicast");
        assert!(!acc(&frame(0x02, 0x88cc, 0, 0), host), "LLDP");
        assert!(!acc(&frame(0x02, 0x8100, 0, 0), host), "a tag the kernel left in");
        for t in [1u32, 2, 3, 4] {
            assert!(!acc(&frame(0x02, 0x86dd, 17, 0), t), "pkt_type {t}");
        }
        assert!(!acc(&[0x02; 13], host), "runt");
    }
}
