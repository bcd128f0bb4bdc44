//! End.M.GTP6.Di (RFC 9433 §6.4; "End.M.GTP6.D.Di" in its text, End.M.GTP6.Di in the
//! IANA registry, §11): End.M.GTP6.D in drop-in mode (§5.4), where the SRv6 segment
//! between two SRGWs replaces a GTP-U one and the far end rebuilds the same GTP-U
//! packet. An sr6 extension of the seg6local grammar:
//! `action End.M.GTP6.Di src A segs S1,...,Sn`.
//!
//! The same steps as End.M.GTP6.D ([`super::gtp6_d`]), except the last SID: the SR
//! policy is S1, ..., Sn, D, D the GTP-U packet's original IPv6 destination (the UPF
//! address), kept as it was: no Args.Mob.Session is written (the TEID and QFI are not
//! carried). The new header goes from `src` A to S1. Signalling
//! ([`super::signalling`]) crosses with its SRH Tag, but without a sequence number:
//! there is no Args.Mob.Session to hold it.

use super::super::{Arrival, Behaviour, Next, Param, Takes};
use super::check_route;
use super::gtp6_d::translate;
use crate::packet::PacketBuf;
use crate::spec::{Prefix, Seg6Mode, SidAction};
use crate::tables::{BuildError, Sid, SidBuilder, SidState, Tables};

pub static END_M_GTP6_DI: Behaviour = Behaviour {
    keyword: "End.M.GTP6.Di",
    required: &[Param::Src, Param::Segs],
    optional: &[],
    flavors: &[],
    rfc: "RFC 9433 §6.4",
    summary: "GTP-U/IPv6 to SRv6, drop-in mode: the original destination kept as the last SID",
    in_kernel: false,
    takes: Takes::Gtpu6,
    build,
    input,
};

/// Registers the policy: H.Encaps of `segs` then a placeholder for D (the route's
/// address), written per packet.
fn build(b: &mut SidBuilder, a: &SidAction) -> Result<SidState, BuildError> {
    check_route(a, &b.prefix()).map_err(|(m, _)| b.error(m))?;
    let (Some(src), Some(segs), Prefix::V6(d, _)) = (a.params.src, a.params.segs.as_ref(), b.prefix()) else {
        return Err(b.error("End.M.GTP6.Di requires `src ADDR` and `segs S1,...,Sn`"));
    };
    let mut list = segs.clone();
    list.push(d);
    let policy = b.proxy_policy(Seg6Mode::Encap, &list, src);
    Ok(SidState { policy, table: Tables::MAIN, ..SidState::default() })
}

fn input(t: &Tables, p: &mut PacketBuf, sid: &Sid, a: &Arrival) -> Next {
    translate(t, p, sid, a, |d, _| d)
}
