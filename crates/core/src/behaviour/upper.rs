//! Upper-layer processing at a local SID: the packet arrived with Segments Left 0 or
//! without an SRH. Decapsulating behaviours (RFC 8986 §4.4-§4.9) expose and forward the
//! inner packet; End, End.X, End.T (§4.1.1) deliver ICMPv6 locally, decapsulate with the
//! USD flavour (§4.16.3), remove the SRH first with USP (§4.16.2), and otherwise answer
//! with a Parameter Problem code 4 (SR Upper-layer Header Error).

use super::srh_ops;
use crate::drop::DropReason;
use crate::packet::{PacketBuf, Verdict};
use crate::pipeline::{forward, icmp, output, Next, Worker};
use crate::tables::{NextHop, Sid, SidOp, Tables};
use sr6_wire::{
    walk_chain, ChainInfo, Ipv4Packet, Ipv6Packet, RoutingInfo, ETHERTYPE_IPV6, IPPROTO_ETHERNET, IPPROTO_ICMPV6,
};

const IPV6: u8 = 41;
const IPV4: u8 = 4;

/// The ICMPv6 Parameter Problem code for "SR Upper-layer Header Error" (RFC 8986 §4.1.1).
pub const PP_SR_UPPER_LAYER: u8 = 4;

pub fn process(
    t: &Tables,
    w: &mut Worker,
    p: &mut PacketBuf,
    sid: &Sid,
    chain: &ChainInfo,
    srh: Option<&RoutingInfo>,
) -> Next {
    let up = chain.upper_proto;
    let wrong =
        |t: &Tables, w: &mut Worker, p: &mut PacketBuf| icmp::param_problem6(t, w, p, PP_SR_UPPER_LAYER, chain.upper);
    if chain.fragment.is_some() && !matches!(sid.op, SidOp::End | SidOp::EndX { .. } | SidOp::EndT { .. }) {
        return Next::drop(DropReason::Fragment);
    }
    match sid.op {
        SidOp::EndDx6 { nh } if up == IPV6 => decap(p, chain).map_or_else(malformed, |_| dx6(t, w, p, nh)),
        SidOp::EndDx4 { nh } if up == IPV4 => decap(p, chain).map_or_else(malformed, |_| dx4(t, w, p, nh)),
        SidOp::EndDt6 { table } if up == IPV6 => {
            decap(p, chain).map_or_else(malformed, |_| Next::Lookup6 { table, forward: true })
        }
        SidOp::EndDt4 { table } if up == IPV4 => {
            decap(p, chain).map_or_else(malformed, |_| Next::Lookup4 { table, forward: true })
        }
        SidOp::EndDt46 { table } if up == IPV6 || up == IPV4 => decap(p, chain).map_or_else(malformed, |_| {
            if up == IPV6 {
                Next::Lookup6 { table, forward: true }
            } else {
                Next::Lookup4 { table, forward: true }
            }
        }),
        SidOp::EndDx2 { oif } if up == IPPROTO_ETHERNET => match decap(p, chain) {
            // The inner frame leaves unchanged (RFC 8986 §4.9 S03).
            Some(()) if p.len() >= 14 => Next::Done(Verdict::Tx(oif)),
            _ => Next::drop(DropReason::Malformed),
        },
        SidOp::EndDx6 { .. }
        | SidOp::EndDx4 { .. }
        | SidOp::EndDt6 { .. }
        | SidOp::EndDt4 { .. }
        | SidOp::EndDt46 { .. }
        | SidOp::EndDx2 { .. } => wrong(t, w, p),
        SidOp::End | SidOp::EndX { .. } | SidOp::EndT { .. } | SidOp::EndB6 { .. } | SidOp::EndB6Encaps { .. } => {
            end_upper(t, w, p, sid, chain, srh)
        }
    }
}

fn malformed() -> Next {
    Next::drop(DropReason::Malformed)
}

/// Removes the outer IPv6 header and all its extension headers.
fn decap(p: &mut PacketBuf, chain: &ChainInfo) -> Option<()> {
    p.pull_front(chain.upper).then_some(())
}

/// RFC 8986 §4.1.1 and the USP/USD flavours.
fn end_upper(
    t: &Tables,
    w: &mut Worker,
    p: &mut PacketBuf,
    sid: &Sid,
    chain: &ChainInfo,
    srh: Option<&RoutingInfo>,
) -> Next {
    let mut chain = *chain;
    if let (Some(r), true) = (srh, sid.flavors.usp) {
        if !srh_ops::remove(p, r) {
            return malformed();
        }
        chain = match walk_chain(p.data()) {
            Ok(c) => c,
            Err(_) => return malformed(),
        };
    }
    let up = chain.upper_proto;
    if sid.flavors.usd && (up == IPV6 || up == IPV4) && chain.fragment.is_none() {
        if decap(p, &chain).is_none() {
            return malformed();
        }
        return match (sid.op, up) {
            (SidOp::EndX { nh }, IPV6) => dx6(t, w, p, nh),
            (SidOp::EndX { nh }, _) => dx4(t, w, p, nh),
            (SidOp::EndT { table }, IPV6) => Next::Lookup6 { table, forward: true },
            (SidOp::EndT { table }, _) => Next::Lookup4 { table, forward: true },
            (_, IPV6) => Next::Lookup6 { table: Tables::MAIN, forward: true },
            _ => Next::Lookup4 { table: Tables::MAIN, forward: true },
        };
    }
    if up == IPPROTO_ICMPV6 {
        return Next::Done(output::local(p, &w.rx_macs, ETHERTYPE_IPV6));
    }
    icmp::param_problem6(t, w, p, PP_SR_UPPER_LAYER, chain.upper)
}

/// Forwards the exposed IPv6 packet to the adjacency (RFC 8986 §4.4 S03).
fn dx6(t: &Tables, w: &mut Worker, p: &mut PacketBuf, nh: NextHop) -> Next {
    match Ipv6Packet::new_checked(p.data()) {
        Ok(ip) => {
            let n = ip.total_len();
            p.truncate(n);
        }
        Err(_) => return malformed(),
    }
    forward::forward6(t, w, p, nh, true)
}

/// Forwards the exposed IPv4 packet to the adjacency (RFC 8986 §4.5 S03).
fn dx4(t: &Tables, w: &mut Worker, p: &mut PacketBuf, nh: NextHop) -> Next {
    match Ipv4Packet::new_checked(p.data()) {
        Ok(ip) if ip.verify_checksum() => {
            let n = ip.total_len() as usize;
            p.truncate(n);
        }
        _ => return malformed(),
    }
    forward::forward4(t, w, p, nh, true)
}
