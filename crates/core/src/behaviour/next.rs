//! What a processing step asks the pipeline to do next: the only way a behaviour hands a
//! packet on. Behaviours never call forwarding, ICMP or output code themselves; the
//! pipeline ([`crate::pipeline::Worker`]) carries out each [`Next`] and counts it.

use crate::drop::DropReason;
use crate::packet::Verdict;
use crate::tables::{NextHop, Out};

/// The next step for a packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// Finished.
    Done(Verdict),
    /// Look the IPv6 destination up in FIB `table` (dense index): RFC 8986's "submit
    /// the packet to the egress IPv6 FIB lookup". `forward`: apply the RFC 8200
    /// forwarding step (hop limit check and decrement) if the result is a route; false
    /// when the behaviour already did (RFC 8986 §4.1 S12).
    Lookup6 { table: u32, forward: bool },
    /// The same for an IPv4 packet (RFC 1812 §5.3.1 for `forward`).
    Lookup4 { table: u32, forward: bool },
    /// Send the IPv6 packet to next hop `nh` (a cross-connect: End.X, End.DX6),
    /// with the forwarding step if `forward`.
    Xconnect6 { nh: NextHop, forward: bool },
    /// Send the IPv4 packet to next hop `nh` (End.DX4), with the forwarding step if
    /// `forward`.
    Xconnect4 { nh: NextHop, forward: bool },
    /// Deliver the IPv6 packet to the host.
    Local6,
    /// Answer with an ICMPv6 error about the packet (RFC 4443), which replaces it.
    Icmp6(Icmp6Error),
}

impl Next {
    #[inline]
    pub fn drop(r: DropReason) -> Next {
        Next::Done(Verdict::Drop(r))
    }

    /// ICMPv6 Parameter Problem with `code`, pointing at byte `pointer` of the packet
    /// (RFC 4443 §3.4).
    #[inline]
    pub fn param_problem(code: u8, pointer: usize) -> Next {
        Next::Icmp6(Icmp6Error::ParamProblem { code, pointer: pointer as u32 })
    }

    /// ICMPv6 Time Exceeded, hop limit exceeded in transit (RFC 4443 §3.3).
    #[inline]
    pub fn time_exceeded() -> Next {
        Next::Icmp6(Icmp6Error::TimeExceeded)
    }
}

/// What a behaviour's fast step did with a frame (it declines with `None`, the frame
/// untouched): the frame is ready to transmit out of a device, as it is or, once
/// decapsulated, starting further on (its new Ethernet header written in front of the
/// inner packet).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FastNext {
    /// Transmit the frame out of this device.
    Tx(Out),
    /// Transmit out of this device once the frame's first `pull` bytes are removed.
    Pull(Out, usize),
}

/// The ICMPv6 errors a behaviour may answer with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Icmp6Error {
    /// Type 3, code 0 (RFC 4443 §3.3).
    TimeExceeded,
    /// Type 4 with `code` and `pointer` (RFC 4443 §3.4; code 4, "SR Upper-layer Header
    /// Error", RFC 8986 §4.1.1).
    ParamProblem { code: u8, pointer: u32 },
}

/// The ICMPv6 Parameter Problem code for "SR Upper-layer Header Error" (RFC 8986 §4.1.1).
pub use sr6_wire::icmpv6::PP_SR_UPPER_LAYER;
