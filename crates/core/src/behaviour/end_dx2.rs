//! End.DX2 (RFC 8986 §4.9): decapsulate and send the inner Ethernet frame, unchanged, out
//! of an interface.

use super::next::FastNext;
use super::{decap, Arrival, Behaviour, Inner, Next, Param, Takes};
use crate::drop::DropReason;
use crate::packet::{DevId, PacketBuf, Verdict};
use crate::spec::SidAction;
use crate::tables::{BuildError, FastKind, FastSid, Sid, SidBuilder, SidState, Tables};
use sr6_wire::fixed::{ETH_IPV6_LEN, ETH_LEN};
use sr6_wire::{EthernetFrame, IPPROTO_ETHERNET};

pub static END_DX2: Behaviour = Behaviour {
    keyword: "End.DX2",
    required: &[Param::Oif],
    optional: &[],
    flavors: &[],
    rfc: "RFC 8986 §4.9",
    summary: "decapsulate and cross-connect the inner Ethernet frame to an interface",
    in_kernel: true,
    takes: Takes::Inner(Inner::Ethernet),
    build,
    input,
};

fn build(b: &mut SidBuilder, a: &SidAction) -> Result<SidState, BuildError> {
    let oif = b.oif(a)?;
    Ok(SidState { oif, fast: FastSid::new(FastKind::Dx2, u32::from(oif)), ..SidState::default() })
}

fn input(t: &Tables, p: &mut PacketBuf, sid: &Sid, a: &Arrival) -> Next {
    const ETH: usize = EthernetFrame::<&[u8]>::HEADER_LEN;
    match decap::last_segment(p, a, |up| up == IPPROTO_ETHERNET) {
        // A frame over the device's MTU cannot be sent (and has no IP packet to answer
        // about: the kernel's device drops it too).
        Ok(_) if p.len() > ETH + t.mtu(sid.state.oif) => Next::drop(DropReason::MtuExceeded),
        // The inner frame leaves unchanged (RFC 8986 §4.9 S03).
        Ok(_) if p.len() >= ETH => Next::Done(Verdict::Tx(sid.state.oif)),
        Ok(_) => Next::drop(DropReason::Malformed),
        Err(n) => n,
    }
}

/// The fast step of End.DX2 (kind Dx2, device `s.arg`) on an SRH of `srh_len` bytes
/// (Segments Left 0, Next Header 143: checked by the caller) followed, from byte 8 of
/// `tail`, by the inner frame: it leaves unchanged once the outer Ethernet + IPv6
/// headers and the SRH are pulled, if it holds at least an Ethernet header.
#[inline(always)]
pub(crate) fn fast(tail: &[u8], srh_len: usize, s: FastSid) -> Option<FastNext> {
    if tail.len() < srh_len - 8 + ETH_LEN {
        return None;
    }
    Some(FastNext::Pull(usize::from(s.arg as DevId), ETH_IPV6_LEN + srh_len))
}
