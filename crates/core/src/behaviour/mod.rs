//! SRv6 endpoint behaviours (RFC 8986 §4) and head-end behaviours (§5).
//!
//! **The behaviour table**, [`TABLE`], modelled on Linux `seg6_local.c`'s
//! `seg6_action_table`: one [`Behaviour`] row per seg6local action, with its keyword,
//! the parameters it requires and accepts, the flavours it allows, its RFC section, what
//! traffic it takes, and the functions that build a SID of it and process its packets.
//! The config parser, the table builder, `sr6 behaviours`, `show`, the counters and
//! `sr6 perf` all read the table; nothing else names a behaviour. Each behaviour (or
//! family) lives in one module that owns its rows and everything about them:
//!
//! - [`end`]: End, End.X, End.T and their flavours PSP, USP, USD (§4.1-§4.3, §4.16)
//!   NEXT-C-SID ([`next_csid`], RFC 9800 §4.1) and REPLACE-C-SID ([`replace_csid`],
//!   §4.2);
//! - [`end_dx2`], [`end_dx4`], [`end_dx6`], [`end_dt4`], [`end_dt6`], [`end_dt46`]: the
//!   decapsulating behaviours (§4.4-§4.9);
//! - [`binding`]: End.B6 (Linux's insertion), End.B6.Encaps, End.B6.Encaps.Red (§4.13,
//!   §4.14);
//! - [`end_map`]: End.MAP (RFC 9433 §6.2);
//! - [`end_limit`]: End.Limit (RFC 9433 §6.8);
//! - [`end_bpf`]: End.BPF (Linux's seg6local action; an eBPF program, `sr6-bpf`);
//! - [`mobile`]: the GTP-U translations of RFC 9433, H.M.GTP4.D (on IPv4 routes),
//!   End.M.GTP4.E, End.M.GTP6.D, End.M.GTP6.Di and End.M.GTP6.E; and plain GTP-U
//!   tunnels: GTP-U.Decap (`encap gtp decap`) and the `encap gtp` head-end;
//! - [`proxy`]: the SR proxies End.AS, End.AD, End.EAD4/End.EAD6 and End.AM
//!   (draft-ietf-spring-sr-service-programming §6), whose second part — packets coming
//!   back from the service function — is an inbound policy of a device.
//!
//! What they share: [`endpoint`] (the steps before any behaviour: the SRH, its HMAC,
//! [`Arrival`]), [`segment`] (consuming a segment, RFC 8754 §4.3.1), [`decap`]
//! (removing the outer header, RFC 8986 §4.4 S01-S05), [`next`] (what a behaviour asks
//! the pipeline to do, [`Next`]). [`headend`] applies SR policies (§5), for routes and
//! for the binding SIDs. A behaviour's fast step, where it has one, is a `fast..`
//! function of its module (over `sr6_wire::fixed` views and `tables::fast_route`
//! lookups), called from `pipeline/fast.rs` for the
//! `FastKind` its build chose.
//!
//! docs/architecture.md, "Adding a behaviour", walks through adding one.

pub mod binding;
pub mod decap;
pub mod end;
pub mod end_bpf;
pub mod end_dt4;
pub mod end_dt46;
pub mod end_dt6;
pub mod end_dx2;
pub mod end_dx4;
pub mod end_dx6;
pub mod end_limit;
pub mod end_map;
pub mod endpoint;
pub mod headend;
pub mod hmac_check;
pub mod mobile;
pub mod next;
pub mod next_csid;
mod params;
pub mod proxy;
pub mod replace_csid;
pub mod segment;

pub use endpoint::Arrival;
pub use next::{Icmp6Error, Next};
pub use params::{Flavor, Param};

use crate::packet::PacketBuf;
use crate::tables::{BuildError, Sid, SidBuilder, SidState, Tables};

/// One row of the behaviour table: everything about one seg6local action.
pub struct Behaviour {
    /// The iproute2 keyword (`action End.DX6`).
    pub keyword: &'static str,
    /// Parameters that must be present.
    pub required: &'static [Param],
    /// Parameters that may be present.
    pub optional: &'static [Param],
    /// Flavours RFC 8986 §4.16 allows on this behaviour.
    pub flavors: &'static [Flavor],
    /// RFC section that defines it.
    pub rfc: &'static str,
    /// One line for help output.
    pub summary: &'static str,
    /// False when the Linux kernel has no such action (an sr6 extension).
    pub in_kernel: bool,
    /// What traffic it processes.
    pub takes: Takes,
    /// Validates a SID's parameters and resolves them to table indices (next hops,
    /// FIBs, policies), choosing its fast step.
    pub build: fn(&mut SidBuilder<'_, '_>, &crate::spec::SidAction) -> Result<SidState, BuildError>,
    /// Processes a packet for a SID of this behaviour, as the [`endpoint`] steps found
    /// it: the general path, which is the reference for every fast step.
    pub input: fn(&Tables, &mut PacketBuf, &Sid, &Arrival) -> Next,
}

/// What traffic a behaviour processes: what a packet for one of its SIDs must look like.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Takes {
    /// An SRH with Segments Left > 0: it consumes a segment.
    Segment,
    /// The last segment (Segments Left 0, or no SRH) and an inner packet of this type,
    /// which it decapsulates.
    Inner(Inner),
    /// GTP-U (UDP to port 2152) over IPv4, to an address of the route's IPv4 prefix
    /// (H.M.GTP4.D, RFC 9433 §6.7): the one kind of row written on an IPv4 route.
    Gtpu4,
    /// GTP-U (UDP to port 2152) over IPv6 to the SID, at its last segment
    /// (End.M.GTP6.D/.Di, RFC 9433 §6.3-§6.4).
    Gtpu6,
}

/// The inner packet of a decapsulating behaviour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Inner {
    Ipv6,
    Ipv4,
    /// IPv4 or IPv6.
    Ip,
    /// An Ethernet frame.
    Ethernet,
}

impl Behaviour {
    pub fn accepts(&self, p: Param) -> bool {
        self.required.contains(&p) || self.optional.contains(&p)
    }

    pub fn allows_flavor(&self, f: Flavor) -> bool {
        self.flavors.contains(&f)
    }
}

impl PartialEq for Behaviour {
    /// Rows are told apart by their keyword (unique: tested below).
    fn eq(&self, other: &Self) -> bool {
        self.keyword == other.keyword
    }
}

impl Eq for Behaviour {}

impl std::fmt::Debug for Behaviour {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.keyword)
    }
}

/// The flavours of the End family: PSP, USP, USD (RFC 8986 §4.16), NEXT-C-SID and
/// REPLACE-C-SID (RFC 9800 §4.1, §4.2).
const END_FLAVORS: &[Flavor] = &[Flavor::Psp, Flavor::Usp, Flavor::Usd, Flavor::NextCsid, Flavor::ReplaceCsid];

/// The table. Order is the order of `sr6 behaviours` output.
pub static TABLE: &[&Behaviour] = &[
    &end::END,
    &end::END_X,
    &end::END_T,
    &end_dx2::END_DX2,
    &end_dx6::END_DX6,
    &end_dx4::END_DX4,
    &end_dt6::END_DT6,
    &end_dt4::END_DT4,
    &end_dt46::END_DT46,
    &binding::END_B6,
    &binding::END_B6_ENCAPS,
    &binding::END_B6_ENCAPS_RED,
    &end_map::END_MAP,
    &proxy::static_proxy::END_AS,
    &proxy::dynamic::END_AD,
    &proxy::dynamic::END_EAD4,
    &proxy::dynamic::END_EAD6,
    &proxy::masquerade::END_AM,
    &end_limit::END_LIMIT,
    &end_bpf::END_BPF,
    &mobile::gtp4_d::H_M_GTP4_D,
    &mobile::gtp4_e::END_M_GTP4_E,
    &mobile::gtp6_d::END_M_GTP6_D,
    &mobile::gtp6_di::END_M_GTP6_DI,
    &mobile::gtp6_e::END_M_GTP6_E,
    &mobile::gtp_decap::GTP_U_DECAP,
];

/// Looks a behaviour up by its iproute2 keyword (case-sensitive, as iproute2 is).
pub fn by_keyword(kw: &str) -> Option<&'static Behaviour> {
    TABLE.iter().copied().find(|b| b.keyword == kw)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn keywords_are_unique() {
        let mut seen = HashSet::new();
        for b in TABLE {
            assert!(seen.insert(b.keyword), "duplicate keyword {}", b.keyword);
        }
    }

    #[test]
    fn required_and_optional_do_not_overlap() {
        for b in TABLE {
            for p in b.required {
                assert!(!b.optional.contains(p), "{}: {:?} both required and optional", b.keyword, p);
            }
        }
    }

    #[test]
    fn flavours_follow_rfc8986_4_16() {
        // "The PSP, USP, and USD flavors are variants of the End, End.X, and End.T
        // behaviors" — and of no other; so are NEXT-C-SID and REPLACE-C-SID here (RFC
        // 9800 §4.1, §4.2 define them on End.B6.Encaps and others too; sr6 has them on
        // the End family only). The one exception: PSP on the proxies that make an End
        // step on an SRH that goes on (End.AD, End.EAD*, End.AM; proxy::PROXY_FLAVORS).
        let psp_proxies = ["End.AD", "End.EAD4", "End.EAD6", "End.AM"];
        for b in TABLE {
            let variant = ["End", "End.X", "End.T"].contains(&b.keyword);
            for f in Flavor::ALL {
                let psp_proxy = f == Flavor::Psp && psp_proxies.contains(&b.keyword);
                assert_eq!(b.allows_flavor(f), variant || psp_proxy, "{} {:?}", b.keyword, f);
            }
        }
    }

    #[test]
    fn lookup_by_keyword() {
        assert_eq!(by_keyword("End.DX6").map(|b| b.keyword), Some("End.DX6"));
        assert!(by_keyword("end.dx6").is_none());
        assert_eq!(Param::from_keyword("vrftable"), Some(Param::VrfTable));
    }
}
