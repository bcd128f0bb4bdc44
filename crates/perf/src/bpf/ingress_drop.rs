//! Dropping everything a device receives at tc ingress: a two-instruction tcx program
//! (`return TCX_DROP;`, Linux 6.6+).
//!
//! Packet sockets bound with `ETH_P_ALL` see every frame before tc ingress does, so a
//! tester that counts with AF_PACKET still gets its copy; what is saved is the rest of
//! the receiving kernel's work (IP input, a route lookup, an ICMP error or a blackhole),
//! about a third of the cost of receiving on the tester's CPU.

use std::io;
use std::os::fd::OwnedFd;

use sr6_io::bpf::asm::{EXIT, MOV64_IMM};
use sr6_io::bpf::{self, Insn};
use sr6_io::live::ifindex;

use super::context;

/// `TCX_DROP` (`enum tcx_action_base`).
const TCX_DROP: i32 = 2;

/// The program attached to one device's ingress; dropping it detaches the program.
#[derive(Debug)]
pub struct IngressDrop {
    _link: OwnedFd,
    _prog: OwnedFd,
    ifname: String,
}

impl IngressDrop {
    /// Attaches the program to `ifname` (in the caller's network namespace).
    pub fn attach(ifname: &str) -> io::Result<IngressDrop> {
        let insns = [Insn::new(MOV64_IMM, 0, 0, 0, TCX_DROP), Insn::new(EXIT, 0, 0, 0, 0)];
        let prog = bpf::prog_load_tcx_ingress(&insns, "sr6_in_drop")?;
        let ifindex = ifindex(ifname)?;
        let link = bpf::link_create_tcx_ingress(&prog, ifindex)
            .map_err(|e| context(e, &format!("attaching a tcx ingress program to {ifname}")))?;
        Ok(IngressDrop { _link: link, _prog: prog, ifname: ifname.to_string() })
    }

    /// The device.
    pub fn ifname(&self) -> &str {
        &self.ifname
    }
}
