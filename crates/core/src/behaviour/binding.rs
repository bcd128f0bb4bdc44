//! Binding SIDs (RFC 8986 §4.13-§4.14): End.B6 with Linux's semantics (insert the
//! policy's SRH), End.B6.Encaps and End.B6.Encaps.Red (consume a segment, then
//! encapsulate with the policy). The policy itself is applied by [`headend`].

use super::{end, endpoint, headend, segment, Arrival, Behaviour, Next, Param, Takes};
use crate::drop::DropReason;
use crate::packet::PacketBuf;
use crate::spec::{Seg6Mode, SidAction};
use crate::tables::{
    BuildError, Device, FastKind, FastSid, Out, Rewrite, RewriteKind, Sid, SidBuilder, SidState, Tables,
};
use sr6_wire::fixed::{Ipv6Fixed, SrhFixed, ETH_IPV6_LEN};
use sr6_wire::{Ipv6Packet, IPPROTO_IPV6};

pub static END_B6: Behaviour = Behaviour {
    keyword: "End.B6",
    required: &[Param::Srh],
    optional: &[],
    flavors: &[],
    rfc: "RFC 8986 §4.13 (insertion variant, kernel End.B6)",
    summary: "binding SID: insert an SRH for the bound policy",
    in_kernel: true,
    takes: Takes::Segment,
    build: build_b6,
    input: input_b6,
};

pub static END_B6_ENCAPS: Behaviour = Behaviour {
    keyword: "End.B6.Encaps",
    required: &[Param::Srh],
    optional: &[],
    flavors: &[],
    rfc: "RFC 8986 §4.13",
    summary: "binding SID: encapsulate in an outer IPv6 header with the bound policy's SRH",
    in_kernel: true,
    takes: Takes::Segment,
    build: build_b6_encaps,
    input: input_b6_encaps,
};

pub static END_B6_ENCAPS_RED: Behaviour = Behaviour {
    keyword: "End.B6.Encaps.Red",
    required: &[Param::Srh],
    optional: &[],
    flavors: &[],
    rfc: "RFC 8986 §4.14",
    summary: "binding SID: reduced encapsulation (first SID only in the DA)",
    in_kernel: false,
    takes: Takes::Segment,
    build: build_b6_encaps_red,
    input: input_b6_encaps,
};

/// Linux End.B6 inserts the policy's SRH (kernel `seg6_do_srh_inline`).
fn build_b6(b: &mut SidBuilder, a: &SidAction) -> Result<SidState, BuildError> {
    bind(b, a, Seg6Mode::Inline, FastKind::B6Insert)
}

fn build_b6_encaps(b: &mut SidBuilder, a: &SidAction) -> Result<SidState, BuildError> {
    bind(b, a, Seg6Mode::Encap, FastKind::B6Encaps)
}

fn build_b6_encaps_red(b: &mut SidBuilder, a: &SidAction) -> Result<SidState, BuildError> {
    bind(b, a, Seg6Mode::EncapRed, FastKind::B6Encaps)
}

fn bind(b: &mut SidBuilder, a: &SidAction, mode: Seg6Mode, kind: FastKind) -> Result<SidState, BuildError> {
    let policy = b.policy(a, mode)?;
    let fast = if a.flavors.is_empty() { FastSid::new(kind, policy) } else { FastSid::NO };
    Ok(SidState { policy, fast, ..SidState::default() })
}

/// End.B6 as Linux `input_action_end_b6`: the received SRH is left as it is; the
/// policy's SRH is inserted in front of it with Segment List[0] = the current
/// destination; the destination becomes the policy's first segment; hop limit - 1.
fn input_b6(t: &Tables, p: &mut PacketBuf, sid: &Sid, a: &Arrival) -> Next {
    match a {
        Arrival::Segments(r) => {
            if let Err(n) = segment::check(p, r) {
                return n;
            }
            let Some(pol) = t.policies.get(sid.state.policy as usize) else {
                return Next::drop(DropReason::NoRoute);
            };
            if let Err(r) = headend::insert_srh(t, p, pol) {
                return Next::drop(r);
            }
            let mut ip = Ipv6Packet::new_unchecked(p.data_mut());
            let hl = ip.hop_limit();
            ip.set_hop_limit(hl.wrapping_sub(1));
            Next::Lookup6 { table: Tables::MAIN, forward: false }
        }
        // (No binding SID has the NEXT-C-SID flavour: `last` drops that arrival.)
        Arrival::Last { .. } | Arrival::NextCsid(_) => last(p, sid, a),
    }
}

/// RFC 8986 §4.13 S11-S18: consume a segment of the received SRH, then encapsulate with
/// the policy; the outer hop limit is the inner's after its decrement.
fn input_b6_encaps(t: &Tables, p: &mut PacketBuf, sid: &Sid, a: &Arrival) -> Next {
    match a {
        Arrival::Segments(r) => {
            if let Err(n) = segment::check(p, r) {
                return n;
            }
            let Some(pol) = t.policies.get(sid.state.policy as usize) else {
                return Next::drop(DropReason::NoRoute);
            };
            segment::advance(p, r);
            let ip = Ipv6Packet::new_unchecked(p.data());
            let (tc, fl, hl) = (ip.traffic_class(), ip.flow_label(), ip.hop_limit());
            match headend::push_encap(t, p, pol, IPPROTO_IPV6, tc, fl, hl) {
                Ok(()) => Next::Lookup6 { table: Tables::MAIN, forward: false },
                Err(r) => Next::drop(r),
            }
        }
        Arrival::Last { .. } | Arrival::NextCsid(_) => last(p, sid, a),
    }
}

/// At the last segment a binding SID is an End (RFC 8986 §4.1.1), fragments excepted.
fn last(p: &mut PacketBuf, sid: &Sid, a: &Arrival) -> Next {
    let Arrival::Last { chain, srh } = a else { return Next::drop(DropReason::Malformed) };
    if chain.fragment.is_some() {
        return Next::drop(DropReason::Fragment);
    }
    end::upper_layer(p, sid, chain, srh.as_ref(), end::Deliver::Lookup(Tables::MAIN))
}

/// The fast form of a binding SID's policy, if the fast path applies it with a rewrite
/// of `kind`.
#[inline(always)]
fn fast_rewrite(t: &Tables, policy: u32, kind: RewriteKind) -> Option<&Rewrite> {
    t.rewrites.get(policy as usize).filter(|fp| fp.kind == kind)
}

/// The fast step of End.B6.Encaps(.Red) (kind B6Encaps; RFC 8986 §4.14) with policy
/// `policy` on a frame received on `dev` ([`endpoint::fast_srh_frame`]), as
/// [`input_b6_encaps`] does it: S10-S12 on the received packet (Segments Left minus
/// one, the destination from the Segment List), then S13-S16, the policy's headers in
/// front, the outer hop limit the inner's after its decrement, towards the device and
/// neighbour the policy's first segment is routed to (S17, precomputed). The frame is
/// untouched when this returns `None`.
#[inline(always)]
pub(crate) fn fast_encaps(t: &Tables, dev: &Device, p: &mut PacketBuf, policy: u32) -> Option<Out> {
    let fp = fast_rewrite(t, policy, RewriteKind::Encap)?;
    let (h, srh, tail) = endpoint::fast_srh_frame(dev, p.data_mut())?;
    let sl = srh.segments_left();
    let nda = segment::fast_segment(tail, srh.next_index()?)?;
    let sid = h.dst_bytes();
    srh.set_segments_left(sl - 1);
    h.set_dst_bytes(&nda);
    // The rewrite sets the outer hop limit to the packet's minus one: what the inner
    // one is about to become.
    if (fp.apply)(fp, p).is_none() {
        // Put the packet back as it was (the rewrite itself changed nothing).
        if let Some((h, rest)) = p.data_mut().split_first_chunk_mut::<ETH_IPV6_LEN>() {
            if let Some(srh) = rest.first_chunk_mut::<8>() {
                srh.set_segments_left(sl);
            }
            h.set_dst_bytes(&sid);
        }
        return None;
    }
    // The inner hop limit, now behind the policy's headers (`fp.len` bytes, Ethernet
    // included, in place of the Ethernet header).
    if let Some(ih) = p.data_mut().get_mut(usize::from(fp.len)..).and_then(|b| b.first_chunk_mut::<40>()) {
        ih.decrement_hop_limit();
    }
    Some(fp.out.into())
}

/// The fast step of End.B6 (kind B6Insert) with policy `policy`, as [`input_b6`] does
/// it (kernel `input_action_end_b6`): the received SRH is left as it is (after the
/// checks of RFC 8754 §4.3.1: Segments Left between 1 and Last Entry + 1); the
/// policy's SRH goes in front of it, Segment List[0] the current destination, the
/// destination the policy's first segment, hop limit minus one — what H.Insert's
/// rewrite does — towards the first segment's precomputed adjacency. The frame is
/// untouched when this returns `None`.
#[inline(never)]
pub(crate) fn fast_insert(t: &Tables, dev: &Device, p: &mut PacketBuf, policy: u32) -> Option<Out> {
    let fp = fast_rewrite(t, policy, RewriteKind::Insert)?;
    let (_, srh, _) = endpoint::fast_srh_frame(dev, p.data_mut())?;
    srh.next_index()?;
    (fp.apply)(fp, p)?;
    Some(fp.out.into())
}
