//! Binding SIDs (RFC 8986 §4.13-§4.14): End.B6 with Linux's semantics (insert the
//! policy's SRH), End.B6.Encaps and End.B6.Encaps.Red (consume a segment, then
//! encapsulate with the policy). The policy itself is applied by [`headend`].

use super::{end, headend, segment, Arrival, Behaviour, Next, Param, Takes};
use crate::drop::DropReason;
use crate::packet::PacketBuf;
use crate::spec::{Seg6Mode, SidAction};
use crate::tables::{BuildError, FastKind, FastSid, Sid, SidBuilder, SidState, Tables};
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
            if !headend::insert_srh(t, p, pol) {
                return Next::drop(DropReason::NoHeadroom);
            }
            let mut ip = Ipv6Packet::new_unchecked(p.data_mut());
            let hl = ip.hop_limit();
            ip.set_hop_limit(hl.wrapping_sub(1));
            Next::Lookup6 { table: Tables::MAIN, forward: false }
        }
        Arrival::Last { .. } => last(p, sid, a),
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
        Arrival::Last { .. } => last(p, sid, a),
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
