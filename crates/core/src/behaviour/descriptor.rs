//! The behaviour table: one [`Descriptor`] per seg6local action, modelled on Linux
//! `seg6_local.c`'s `seg6_action_table`.
//!
//! A descriptor names the keyword (`"End.DX6"`), the parameters the action requires and
//! those it accepts, and the flavours RFC 8986 §4.16 allows on it. The config parser, the
//! table builder, `--help` text and `show` output all read this one table.

use super::BehaviorKind;

/// A parameter of a seg6local action, as written on the `ip route` line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Param {
    /// `nh6 ADDR`: IPv6 next hop.
    Nh6,
    /// `nh4 ADDR`: IPv4 next hop.
    Nh4,
    /// `oif DEV`: output interface.
    Oif,
    /// `table N`: IPv6 routing table for the lookup.
    Table,
    /// `vrftable N`: routing table of the VRF for the lookup.
    VrfTable,
    /// `srh segs S1,..,Sn [hmac K]`: the SR policy a binding SID applies.
    Srh,
}

impl Param {
    pub const ALL: [Param; 6] = [Param::Nh6, Param::Nh4, Param::Oif, Param::Table, Param::VrfTable, Param::Srh];

    /// The keyword introducing the parameter.
    pub fn keyword(self) -> &'static str {
        match self {
            Param::Nh6 => "nh6",
            Param::Nh4 => "nh4",
            Param::Oif => "oif",
            Param::Table => "table",
            Param::VrfTable => "vrftable",
            Param::Srh => "srh",
        }
    }

    /// What the value looks like, for error messages and help.
    pub fn value_hint(self) -> &'static str {
        match self {
            Param::Nh6 => "an IPv6 address",
            Param::Nh4 => "an IPv4 address",
            Param::Oif => "a device name",
            Param::Table | Param::VrfTable => "a table id (number, or main/local)",
            Param::Srh => "`segs S1,S2,... [hmac KEYID]`",
        }
    }

    pub fn from_keyword(s: &str) -> Option<Param> {
        Self::ALL.into_iter().find(|p| p.keyword() == s)
    }
}

/// A flavour of RFC 8986 §4.16.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Flavor {
    Psp,
    Usp,
    Usd,
}

impl Flavor {
    pub fn keyword(self) -> &'static str {
        match self {
            Flavor::Psp => "psp",
            Flavor::Usp => "usp",
            Flavor::Usd => "usd",
        }
    }
}

/// One row of the behaviour table.
#[derive(Debug, Clone, Copy)]
pub struct Descriptor {
    pub kind: BehaviorKind,
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
    /// False when the Linux kernel has no such action (sr6 extension).
    pub in_kernel: bool,
}

impl Descriptor {
    pub fn accepts(&self, p: Param) -> bool {
        self.required.contains(&p) || self.optional.contains(&p)
    }
    pub fn allows_flavor(&self, f: Flavor) -> bool {
        self.flavors.contains(&f)
    }
}

const PUU: &[Flavor] = &[Flavor::Psp, Flavor::Usp, Flavor::Usd];

/// The table. Order is the order of `--help` output.
pub static DESCRIPTORS: &[Descriptor] = &[
    Descriptor {
        kind: BehaviorKind::End,
        keyword: "End",
        required: &[],
        optional: &[],
        flavors: PUU,
        rfc: "RFC 8986 §4.1",
        summary: "endpoint: next segment, forward by the main table",
        in_kernel: true,
    },
    Descriptor {
        kind: BehaviorKind::EndX,
        keyword: "End.X",
        required: &[Param::Nh6],
        optional: &[Param::Oif],
        flavors: PUU,
        rfc: "RFC 8986 §4.2",
        summary: "endpoint with L3 cross-connect to an IPv6 next hop",
        in_kernel: true,
    },
    Descriptor {
        kind: BehaviorKind::EndT,
        keyword: "End.T",
        required: &[Param::Table],
        optional: &[],
        flavors: PUU,
        rfc: "RFC 8986 §4.3",
        summary: "endpoint with lookup in a specific IPv6 table",
        in_kernel: true,
    },
    Descriptor {
        kind: BehaviorKind::EndDx2,
        keyword: "End.DX2",
        required: &[Param::Oif],
        optional: &[],
        flavors: &[],
        rfc: "RFC 8986 §4.9",
        summary: "decapsulate and cross-connect the inner Ethernet frame to an interface",
        in_kernel: true,
    },
    Descriptor {
        kind: BehaviorKind::EndDx6,
        keyword: "End.DX6",
        required: &[Param::Nh6],
        optional: &[Param::Oif],
        flavors: &[],
        rfc: "RFC 8986 §4.4",
        summary: "decapsulate and cross-connect the inner IPv6 packet to a next hop",
        in_kernel: true,
    },
    Descriptor {
        kind: BehaviorKind::EndDx4,
        keyword: "End.DX4",
        required: &[Param::Nh4],
        optional: &[Param::Oif],
        flavors: &[],
        rfc: "RFC 8986 §4.5",
        summary: "decapsulate and cross-connect the inner IPv4 packet to a next hop",
        in_kernel: true,
    },
    Descriptor {
        kind: BehaviorKind::EndDt6,
        keyword: "End.DT6",
        required: &[],
        optional: &[Param::Table, Param::VrfTable],
        flavors: &[],
        rfc: "RFC 8986 §4.6",
        summary: "decapsulate and look the inner IPv6 packet up in a table",
        in_kernel: true,
    },
    Descriptor {
        kind: BehaviorKind::EndDt4,
        keyword: "End.DT4",
        required: &[Param::VrfTable],
        optional: &[],
        flavors: &[],
        rfc: "RFC 8986 §4.7",
        summary: "decapsulate and look the inner IPv4 packet up in a table",
        in_kernel: true,
    },
    Descriptor {
        kind: BehaviorKind::EndDt46,
        keyword: "End.DT46",
        required: &[Param::VrfTable],
        optional: &[],
        flavors: &[],
        rfc: "RFC 8986 §4.8",
        summary: "decapsulate and look the inner IPv4 or IPv6 packet up in a table",
        in_kernel: true,
    },
    Descriptor {
        kind: BehaviorKind::EndB6,
        keyword: "End.B6",
        required: &[Param::Srh],
        optional: &[],
        flavors: &[],
        rfc: "RFC 8986 §4.13 (insertion variant, kernel End.B6)",
        summary: "binding SID: insert an SRH for the bound policy",
        in_kernel: true,
    },
    Descriptor {
        kind: BehaviorKind::EndB6Encaps,
        keyword: "End.B6.Encaps",
        required: &[Param::Srh],
        optional: &[],
        flavors: &[],
        rfc: "RFC 8986 §4.13",
        summary: "binding SID: encapsulate in an outer IPv6 header with the bound policy's SRH",
        in_kernel: true,
    },
    Descriptor {
        kind: BehaviorKind::EndB6EncapsRed,
        keyword: "End.B6.Encaps.Red",
        required: &[Param::Srh],
        optional: &[],
        flavors: &[],
        rfc: "RFC 8986 §4.14",
        summary: "binding SID: reduced encapsulation (first SID only in the DA)",
        in_kernel: false,
    },
];

/// The descriptor of a behaviour.
pub fn descriptor(kind: BehaviorKind) -> &'static Descriptor {
    // Every kind has exactly one row (tested below); fall back to End defensively.
    DESCRIPTORS.iter().find(|d| d.kind == kind).unwrap_or(&DESCRIPTORS[0])
}

/// Look a behaviour up by its iproute2 keyword (case-sensitive, as iproute2 is).
pub fn by_keyword(kw: &str) -> Option<&'static Descriptor> {
    DESCRIPTORS.iter().find(|d| d.keyword == kw)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn keywords_are_unique() {
        let mut seen = HashSet::new();
        for d in DESCRIPTORS {
            assert!(seen.insert(d.keyword), "duplicate keyword {}", d.keyword);
        }
    }

    #[test]
    fn kinds_have_exactly_one_row() {
        for k in BehaviorKind::ALL {
            assert_eq!(DESCRIPTORS.iter().filter(|d| d.kind == k).count(), 1, "{k:?}");
            assert_eq!(descriptor(k).kind, k);
        }
    }

    #[test]
    fn required_and_optional_do_not_overlap() {
        for d in DESCRIPTORS {
            for p in d.required {
                assert!(!d.optional.contains(p), "{}: {:?} both required and optional", d.keyword, p);
            }
        }
    }

    #[test]
    fn flavours_follow_rfc8986_4_16() {
        // "The PSP, USP, and USD flavors are variants of the End, End.X, and End.T
        // behaviors" — and of no other.
        for d in DESCRIPTORS {
            let variant = matches!(d.kind, BehaviorKind::End | BehaviorKind::EndX | BehaviorKind::EndT);
            for f in [Flavor::Psp, Flavor::Usp, Flavor::Usd] {
                assert_eq!(d.allows_flavor(f), variant, "{} {:?}", d.keyword, f);
            }
        }
    }

    #[test]
    fn lookup_by_keyword() {
        assert_eq!(by_keyword("End.DX6").map(|d| d.kind), Some(BehaviorKind::EndDx6));
        assert!(by_keyword("end.dx6").is_none());
        assert_eq!(Param::from_keyword("vrftable"), Some(Param::VrfTable));
    }
}
