//! The steps every endpoint behaviour shares, before its own (RFC 8986 §4, RFC 8754
//! §4.3.1): find the SRH, answer an unrecognised Routing header, apply the ingress
//! device's HMAC policy, and tell the behaviour how the packet arrived ([`Arrival`]);
//! before all of them, for a SID with the NEXT-C-SID flavour, whether the destination
//! still holds C-SIDs (RFC 9800 §4.1.1 S01), in which case none of them applies.

use super::{hmac_check, Next};
use crate::drop::DropReason;
use crate::packet::PacketBuf;
use crate::spec::CsidLengths;
use crate::tables::{Device, Tables};
use sr6_wire::fixed::{Ipv6Fixed, SrhFixed, ETH_IPV6_LEN};
use sr6_wire::{walk_chain, ChainInfo, Ipv6Packet, RoutingInfo, SrhPacket};

/// How a packet for a local SID arrived.
#[derive(Debug, Clone, Copy)]
pub enum Arrival {
    /// With an SRH whose Segments Left is above 0 (RFC 8986 §4.1 S02: a segment to
    /// consume).
    Segments(RoutingInfo),
    /// With Segments Left 0 or no SRH (§4.1.1: the upper layer): the header chain, and
    /// the SRH if there is one.
    Last { chain: ChainInfo, srh: Option<RoutingInfo> },
    /// For a SID with the NEXT-C-SID flavour of these lengths: a destination whose
    /// argument is not zero (RFC 9800 §4.1.1 S01), whatever headers follow — the SRH, if
    /// any, is neither checked nor touched ([`super::next_csid::advance`]).
    NextCsid(CsidLengths),
}

/// How the IPv6 packet in `p` arrived at a local SID with NEXT-C-SID lengths `csid`
/// (if it has the flavour), or what to do with it when no behaviour may see it.
pub fn arrival(t: &Tables, p: &PacketBuf, csid: Option<CsidLengths>) -> Result<Arrival, Next> {
    if let Some(c) = csid {
        let dst = p.data().first_chunk::<40>().map(|h| h.dst());
        if dst.is_some_and(|d| super::next_csid::has_argument(d, c)) {
            return Ok(Arrival::NextCsid(c));
        }
    }
    // With Segments Left > 0 only the SRH matters (RFC 8986 §4.1 S01-S15), so when it
    // directly follows the IPv6 header the rest of the chain need not be walked.
    if let Some(r) = srh_after_ipv6(p.data()) {
        if r.segments_left > 0 {
            if !hmac_check::verify(t, p, &r) {
                return Err(Next::drop(DropReason::HmacInvalid));
            }
            return Ok(Arrival::Segments(r));
        }
    }
    let chain = walk_chain(p.data()).map_err(|_| Next::drop(DropReason::Malformed))?;
    let srh = match chain.routing {
        Some(r) if r.routing_type == sr6_wire::srh::ROUTING_TYPE_SRH => Some(r),
        // RFC 8200 §4.4: an unrecognised Routing Type (Type 0 included, RFC 5095 §3)
        // with Segments Left != 0: Parameter Problem pointing to the Routing Type.
        // (Linux drops it silently at a SID: docs/conformance.md.)
        Some(r) if r.segments_left > 0 => {
            return Err(Next::param_problem(0, r.offset + sr6_wire::ext::ROUTING_TYPE_OFFSET))
        }
        _ => None,
    };
    if let Some(r) = &srh {
        if !hmac_check::verify(t, p, r) {
            return Err(Next::drop(DropReason::HmacInvalid));
        }
        if r.segments_left > 0 {
            return Ok(Arrival::Segments(*r));
        }
    }
    Ok(Arrival::Last { chain, srh })
}

/// The SRH when it directly follows the IPv6 header (the common case), read without
/// walking the chain. `None` sends the packet to the general walk.
#[inline]
fn srh_after_ipv6(d: &[u8]) -> Option<RoutingInfo> {
    let ip = Ipv6Packet::new_unchecked(d.get(..Ipv6Packet::<&[u8]>::HEADER_LEN)?);
    if ip.next_header() != sr6_wire::IPPROTO_ROUTING {
        return None;
    }
    let srh = SrhPacket::new_unchecked(d.get(Ipv6Packet::<&[u8]>::HEADER_LEN..)?);
    if srh.check_len().is_err() || srh.routing_type() != sr6_wire::srh::ROUTING_TYPE_SRH {
        return None;
    }
    Some(RoutingInfo {
        offset: Ipv6Packet::<&[u8]>::HEADER_LEN,
        nh_field: sr6_wire::ipv6::NEXT_HEADER_OFFSET,
        routing_type: srh.routing_type(),
        segments_left: srh.segments_left(),
        len: srh.header_len(),
    })
}

/// The fast path's view of a frame for a SID with Segments Left to consume or a last
/// segment to decapsulate, on device `dev`: an IPv6 frame with the SRH right after the
/// IPv6 header, no Ethernet padding, a hop limit that survives forwarding, an SRH
/// without TLVs (so no HMAC) that fits, on a device that forwards IPv6 and requires no
/// HMAC. Returns the Ethernet + IPv6 headers, the SRH's first 8 bytes and what follows
/// them; `None` leaves the frame to the general path.
#[inline(always)]
#[allow(clippy::type_complexity)]
pub(crate) fn fast_srh_frame<'a>(
    dev: &Device,
    f: &'a mut [u8],
) -> Option<(&'a mut [u8; ETH_IPV6_LEN], &'a mut [u8; 8], &'a mut [u8])> {
    let (h, rest) = f.split_first_chunk_mut::<ETH_IPV6_LEN>()?;
    if !h.is_version6()
        || !h.payload_len_is(rest.len())
        || h.next_header() != sr6_wire::IPPROTO_ROUTING
        || h.hop_limit() <= 1
        || dev.require_hmac > 0
        || !dev.forwarding6
    {
        return None;
    }
    let (srh, tail) = rest.split_first_chunk_mut::<8>()?;
    srh.plain_segments_len(tail.len())?;
    Some((h, srh, tail))
}
