//! The mobile user plane over SRv6 (RFC 9433): stateless translation between GTP-U —
//! the 5G user-plane tunnel (3GPP TS 29.281) — and SRv6, the GTP-U session carried in
//! the SIDs.
//!
//! - [`gtp4_d`]: H.M.GTP4.D (§6.7), GTP-U/UDP/IPv4 in, SRv6 out: a row of the behaviour
//!   table written on an IPv4 route (the UPF's address), the one row that takes IPv4
//!   packets ([`Takes::Gtpu4`]); the IPv4 FIB hands them to [`input4`].
//! - [`gtp4_e`]: End.M.GTP4.E (§6.6), SRv6 in, GTP-U/UDP/IPv4 out: a local SID.
//! - [`gtp6_d`]: End.M.GTP6.D (§6.3), GTP-U/UDP/IPv6 to a local SID in, SRv6 out, the
//!   session in the last SID; [`gtp6_di`]: End.M.GTP6.Di (§6.4), its drop-in mode, the
//!   original destination kept as the last SID.
//! - [`gtp6_e`]: End.M.GTP6.E (§6.5), SRv6 in, GTP-U/UDP/IPv6 out toward the last
//!   segment.
//!
//! What they share lives here: Args.Mob.Session (§6.1, [`ArgsMobSession`]), the bit
//! fields of the SIDs and sources (Figs. 9-11: [`get_bits`], [`set_bits`]), the route
//! checks the parser and the builder both make ([`check_route`]).
//!
//! Plain GTP-U tunnels sit beside them (sr6's `encap gtp` grammar): [`gtp_encap`], a
//! head-end route kind (GTP-U encapsulation toward a peer), and [`gtp_decap`], the row
//! GTP-U.Decap (decapsulation at a UPF address, IPv4 or IPv6, Echo Requests answered).
//!
//! **GTP-U messages other than T-PDUs** (Echo Request/Response, Error Indication, End
//! Marker: TS 29.281 §7) cross SRv6 as VPP's srv6-mobile carries them
//! (draft-murakami-dmm-user-plane-message-encoding): [`signalling`] — the message type
//! in SRH Tag bits, the Sequence Number in the SID in place of the TEID, Error
//! Indication's IEs in an SRH TLV. H.M.GTP4.D, End.M.GTP6.D and End.M.GTP6.Di encode
//! them, End.M.GTP4.E and End.M.GTP6.E rebuild them; the T-PDU path is untouched (a
//! Tag without those bits is a T-PDU). Other messages are dropped, counted as
//! `gtpu_signalling`.

pub mod gtp4_d;
pub mod gtp4_e;
pub mod gtp6_d;
pub mod gtp6_di;
pub mod gtp6_e;
pub mod gtp_decap;
pub mod gtp_encap;
pub mod signalling;

use std::net::Ipv4Addr;

use super::{Next, Takes};
use crate::drop::DropReason;
use crate::packet::PacketBuf;
use crate::spec::{Prefix, SidAction};
use crate::tables::{Sid, Tables};

/// Args.Mob.Session (RFC 9433 §6.1, Fig. 8): QFI (6 bits), R (1), U (1), PDU Session
/// ID (32) — the GTP-U TEID — 40 bits in all.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ArgsMobSession {
    /// QoS Flow Identifier.
    pub qfi: u8,
    /// Reflective QoS Indication (the RQI of a downlink PDU Session Container).
    pub r: bool,
    /// Unused: 0 on transmission, ignored on receipt (§6.1).
    pub u: bool,
    /// PDU Session ID: the TEID.
    pub teid: u32,
}

/// The bits of Args.Mob.Session.
pub const ARGS_BITS: u8 = 40;
/// The bits of an IPv4 address.
pub const V4_BITS: u8 = 32;
/// The longest prefix that leaves room for an IPv4 address and Args.Mob.Session in a
/// SID (Figs. 9 and 11): 128 - 32 - 40.
pub const MAX_SID_PREFIX: u8 = 128 - V4_BITS - ARGS_BITS;
/// The longest prefix that leaves room for an IPv4 address in a source (Fig. 10).
pub const MAX_SRC_PREFIX: u8 = 128 - V4_BITS;
/// The longest prefix that leaves room for Args.Mob.Session in a SID of the GTP-U over
/// IPv6 behaviours (§6.3, §6.5): 128 - 40.
pub const MAX_SID6_PREFIX: u8 = 128 - ARGS_BITS;

impl ArgsMobSession {
    /// The 40 bits, QFI first.
    pub fn to_bits(self) -> u128 {
        u128::from(self.qfi & 0x3f) << 34 | u128::from(self.r) << 33 | u128::from(self.u) << 32 | u128::from(self.teid)
    }

    /// From the 40 low bits of `v`.
    pub fn from_bits(v: u128) -> ArgsMobSession {
        ArgsMobSession { qfi: (v >> 34) as u8 & 0x3f, r: v >> 33 & 1 == 1, u: v >> 32 & 1 == 1, teid: v as u32 }
    }
}

/// A mask of the `n` low bits (`n` <= 128).
fn low(n: u8) -> u128 {
    u128::MAX.checked_shr(128u32.saturating_sub(u32::from(n))).filter(|_| n > 0).unwrap_or(0)
}

/// The `n` bits of `a` from bit `pos` (0 the most significant), as a number; 0 if they
/// do not fit in 128 bits.
pub fn get_bits(a: u128, pos: u8, n: u8) -> u128 {
    let end = u32::from(pos) + u32::from(n);
    if end > 128 {
        return 0;
    }
    a.checked_shr(128 - end).unwrap_or(0) & low(n)
}

/// `a` with its `n` bits from bit `pos` replaced by the low bits of `v`; `a` unchanged
/// if they do not fit in 128 bits.
pub fn set_bits(a: u128, pos: u8, n: u8, v: u128) -> u128 {
    let end = u32::from(pos) + u32::from(n);
    if end > 128 {
        return a;
    }
    let shift = 128 - end;
    let mask = low(n).checked_shl(shift).unwrap_or(0);
    a & !mask | v.checked_shl(shift).unwrap_or(0) & mask
}

/// A GTP4 SID (Figs. 9 and 11): `prefix` (its first `plen` bits), the IPv4 address,
/// Args.Mob.Session, zeros.
pub fn gtp4_sid(prefix: u128, plen: u8, v4: Ipv4Addr, args: ArgsMobSession) -> u128 {
    // The usual case, the 72 bits fitting after the prefix: one shift of them.
    if plen <= MAX_SID_PREFIX {
        let carried = u128::from(u32::from(v4)) << ARGS_BITS | args.to_bits();
        return prefix & !(u128::MAX >> plen) | carried << (MAX_SID_PREFIX - plen);
    }
    let s = set_bits(prefix & !low(128 - plen.min(128)), plen, V4_BITS, u128::from(u32::from(v4)));
    set_bits(s, plen.saturating_add(V4_BITS), ARGS_BITS, args.to_bits())
}

/// What a GTP4 SID of prefix length `plen` carries: the IPv4 address and
/// Args.Mob.Session.
pub fn parse_gtp4_sid(sid: u128, plen: u8) -> (Ipv4Addr, ArgsMobSession) {
    let v4 = Ipv4Addr::from(get_bits(sid, plen, V4_BITS) as u32);
    (v4, ArgsMobSession::from_bits(get_bits(sid, plen.saturating_add(V4_BITS), ARGS_BITS)))
}

/// A GTP6 SID (§6.3 S08, §6.5): `prefix` (its first `plen` bits), Args.Mob.Session,
/// zeros.
pub fn gtp6_sid(prefix: u128, plen: u8, args: ArgsMobSession) -> u128 {
    set_bits(prefix & !low(128 - plen.min(128)), plen, ARGS_BITS, args.to_bits())
}

/// The Args.Mob.Session a GTP6 SID of prefix length `plen` carries.
pub fn parse_gtp6_sid(sid: u128, plen: u8) -> ArgsMobSession {
    ArgsMobSession::from_bits(get_bits(sid, plen, ARGS_BITS))
}

/// The longest `sr-prefix` behaviour `b` takes, and why: room for the IPv4 destination
/// and Args.Mob.Session (H.M.GTP4.D, Fig. 11) or for Args.Mob.Session alone
/// (End.M.GTP6.D, §6.3).
pub fn max_sr_prefix(b: &super::Behaviour) -> (u8, &'static str) {
    if b == &gtp6_d::END_M_GTP6_D {
        (MAX_SID6_PREFIX, "Args.Mob.Session needs 40")
    } else {
        (MAX_SID_PREFIX, "the IPv4 destination and Args.Mob.Session need 72")
    }
}

/// Whether a seg6local action fits its route's prefix, for the parser (which points at
/// the prefix) and the builder: H.M.GTP4.D on an IPv4 prefix, every other behaviour on
/// an IPv6 one; End.M.GTP4.E's prefix short enough for the IPv4 destination and
/// Args.Mob.Session after it (Fig. 9), End.M.GTP6.E's for Args.Mob.Session (§6.5).
/// The error: what is wrong, what was expected.
pub fn check_route(a: &SidAction, prefix: &Prefix) -> Result<(), (String, &'static str)> {
    let kw = a.behaviour.keyword;
    match (a.behaviour.takes, prefix) {
        (Takes::Gtpu4, Prefix::V4(..)) => Ok(()),
        (Takes::Gtpu4, Prefix::V6(..)) => Err((
            format!("{kw} takes GTP-U over IPv4: its route is an IPv4 prefix (the UPF's address)"),
            "an IPv4 prefix",
        )),
        (_, Prefix::V4(..)) => Err(("a seg6local route (a local SID) needs an IPv6 prefix".into(), "an IPv6 prefix")),
        (_, Prefix::V6(_, l)) if a.behaviour == &gtp4_e::END_M_GTP4_E && *l > MAX_SID_PREFIX => Err((
            format!(
                "{kw}: a /{l} SID leaves {} bits; the IPv4 destination and Args.Mob.Session need 72 (RFC 9433 Fig. 9)",
                128 - l
            ),
            "a prefix of at most /56",
        )),
        (_, Prefix::V6(_, l)) if a.behaviour == &gtp6_e::END_M_GTP6_E && *l > MAX_SID6_PREFIX => Err((
            format!("{kw}: a /{l} SID leaves {} bits; Args.Mob.Session needs 40 (RFC 9433 §6.5)", 128 - l),
            "a prefix of at most /88",
        )),
        _ => Ok(()),
    }
}

/// Whether `b` is one of the GTP-U translations (which `sr6 perf` does not measure
/// yet: its traffic is not GTP-U).
pub fn is_gtp(b: &super::Behaviour) -> bool {
    [&gtp4_d::H_M_GTP4_D, &gtp4_e::END_M_GTP4_E, &gtp6_d::END_M_GTP6_D, &gtp6_di::END_M_GTP6_DI, &gtp6_e::END_M_GTP6_E]
        .contains(&b)
        || b == &gtp_decap::GTP_U_DECAP
}

/// An IPv4 packet for a route whose local SID is `sid` (the IPv4 FIB's
/// `Route::Sid`): H.M.GTP4.D's, the only row on IPv4 routes ([`check_route`]).
pub fn input4(t: &Tables, p: &mut PacketBuf, sid: &Sid) -> Next {
    if sid.behaviour.takes == Takes::Gtpu4 {
        gtp4_d::input4(t, p, sid)
    } else if sid.behaviour == &gtp_decap::GTP_U_DECAP {
        gtp_decap::input4(p, sid)
    } else {
        Next::drop(DropReason::NoRoute)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn args_mob_session_is_40_bits_qfi_first() {
        let a = ArgsMobSession { qfi: 0x3f, r: false, u: false, teid: 0 };
        assert_eq!(a.to_bits(), 0xfc_0000_0000);
        let a = ArgsMobSession { qfi: 0, r: true, u: true, teid: 0x1234_5678 };
        assert_eq!(a.to_bits(), 0x03_1234_5678);
        for v in [0u128, 0xff_ffff_ffff, 0x11_bbbb_bbbb, 0xa5_0000_00c8] {
            assert_eq!(ArgsMobSession::from_bits(v).to_bits(), v);
        }
        // VPP's End.M.GTP4.E test: the byte 0x11 after the IPv4 address is QFI 4, U 1.
        assert_eq!(
            ArgsMobSession::from_bits(0x11_bbbb_bbbb),
            ArgsMobSession { qfi: 4, r: false, u: true, teid: 0xbbbb_bbbb }
        );
    }

    #[test]
    fn bit_fields() {
        let a = 0x0123_4567_89ab_cdef_0011_2233_4455_6677u128;
        assert_eq!(get_bits(a, 0, 16), 0x0123);
        assert_eq!(get_bits(a, 4, 8), 0x12);
        assert_eq!(get_bits(a, 120, 8), 0x77);
        assert_eq!(get_bits(a, 0, 128), a);
        assert_eq!(get_bits(a, 121, 8), 0, "out of range");
        assert_eq!(set_bits(0, 4, 8, 0xab), 0x0ab0 << 112);
        assert_eq!(set_bits(a, 0, 128, 5), 5);
        assert_eq!(set_bits(a, 127, 2, 3), a, "out of range");
        assert_eq!(set_bits(u128::MAX, 8, 8, 0), !(0xffu128 << 112));
    }

    #[test]
    fn vpp_gtp4_d_vector() {
        // VPP's srv6-mobile test (T.M.GTP4.D): sr prefix D4::/32, IPv4 DA 1.1.1.1,
        // TEID 200, no QFI: the last SID d4:0:101:101::c800:0.
        let pfx = u128::from("d4::".parse::<std::net::Ipv6Addr>().unwrap());
        let args = ArgsMobSession { teid: 200, ..ArgsMobSession::default() };
        let sid = gtp4_sid(pfx, 32, Ipv4Addr::new(1, 1, 1, 1), args);
        assert_eq!(std::net::Ipv6Addr::from(sid), "d4:0:101:101::c800:0".parse::<std::net::Ipv6Addr>().unwrap());
        assert_eq!(parse_gtp4_sid(sid, 32), (Ipv4Addr::new(1, 1, 1, 1), args));
        // Not byte-aligned: a /45 prefix.
        let sid = gtp4_sid(pfx, 45, Ipv4Addr::new(192, 0, 2, 7), ArgsMobSession { qfi: 9, r: true, u: false, teid: 7 });
        assert_eq!(get_bits(sid, 0, 45), get_bits(pfx, 0, 45));
        assert_eq!(parse_gtp4_sid(sid, 45).0, Ipv4Addr::new(192, 0, 2, 7));
        assert_eq!(parse_gtp4_sid(sid, 45).1, ArgsMobSession { qfi: 9, r: true, u: false, teid: 7 });
        assert_eq!(get_bits(sid, 45 + 72, 128 - 45 - 72), 0, "zero padded");
    }

    /// The one-shift GTP4 SID equals the bit fields written one by one (Fig. 11), at
    /// every prefix length that leaves room for them, with a prefix of stray low bits.
    #[test]
    fn gtp4_sid_by_shift_equals_the_fields() {
        let pfx = 0xfc00_0001_2345_6789_abcd_ef01_2345_6789u128;
        let v4 = Ipv4Addr::new(203, 0, 113, 9);
        let args = ArgsMobSession { qfi: 0x2a, r: true, u: false, teid: 0xdead_beef };
        for plen in 0..=MAX_SID_PREFIX {
            let fields = set_bits(
                set_bits(pfx & !low(128 - plen), plen, V4_BITS, u128::from(u32::from(v4))),
                plen + V4_BITS,
                ARGS_BITS,
                args.to_bits(),
            );
            assert_eq!(gtp4_sid(pfx, plen, v4, args), fields, "/{plen}");
            assert_eq!(parse_gtp4_sid(fields, plen), (v4, args), "/{plen}");
        }
    }

    #[test]
    fn vpp_gtp6_d_vector() {
        // VPP's srv6-mobile test (End.M.GTP6.D): sr prefix D4::/64, TEID 200, no QFI:
        // the session SID d4::c800:0.
        let pfx = u128::from("d4::".parse::<std::net::Ipv6Addr>().unwrap());
        let args = ArgsMobSession { teid: 200, ..ArgsMobSession::default() };
        let sid = gtp6_sid(pfx, 64, args);
        assert_eq!(std::net::Ipv6Addr::from(sid), "d4::c800:0".parse::<std::net::Ipv6Addr>().unwrap());
        assert_eq!(parse_gtp6_sid(sid, 64), args);
        // At /88, the last bit of the TEID is the SID's last bit; /61 is not aligned.
        let a = ArgsMobSession { qfi: 63, r: true, u: false, teid: 0xffff_fffe };
        assert_eq!(gtp6_sid(pfx, 88, a) & 0xff_ffff_ffff, a.to_bits());
        assert_eq!(parse_gtp6_sid(gtp6_sid(pfx, 61, a), 61), a);
        assert_eq!(get_bits(gtp6_sid(pfx | 0xffff, 61, a), 101, 27), 0, "zero padded");
    }
}
