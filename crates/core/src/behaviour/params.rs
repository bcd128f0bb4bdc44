//! The kinds of parameter a seg6local action takes ([`Param`]) and its flavours
//! ([`Flavor`]): shared by the config parser, `--help` and `show` output, so that a
//! parameter is written, read and displayed the same way whatever the behaviour.

use std::fmt::Write;

use crate::spec::{SidAction, SidParams};

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
    /// `srh [csid ...] segs S1,..,Sn [hmac K]`: the SR policy a binding SID applies.
    Srh,
    /// `map SID`: the mapped SID End.MAP replaces the destination with (RFC 9433 §6.2).
    Map,
    /// `iif DEV`: the device an SR proxy receives the function's packets on
    /// (draft-ietf-spring-sr-service-programming §6).
    Iif,
    /// `src ADDR`: the outer source End.AS restores (the draft's CACHE.SA); the source
    /// A of the packets End.M.GTP6.D/.Di/.E make (RFC 9433 §6.3-§6.5).
    Src,
    /// `segs S1,...,Sn`: the segment list End.AS restores, in travel order (CACHE.LIST);
    /// the segments H.M.GTP4.D and End.M.GTP6.D/.Di visit before their last SID.
    Segs,
    /// `group-bits I`: End.Limit's group-id length in the argument (RFC 9433 §6.8).
    GroupBits,
    /// `rate KBPS`: End.Limit's static rate, kbit/s.
    Rate,
    /// `burst BYTES`: End.Limit's bucket depth.
    Burst,
    /// `v4src-position N`: the bit of the IPv6 source where End.M.GTP4.E finds the
    /// IPv4 source (RFC 9433 §6.6 Fig. 10: the Source UPF Prefix's length; VPP's
    /// `v4src_position`).
    V4SrcPosition,
    /// `sr-prefix P/LEN`: the prefix H.M.GTP4.D's last SID starts with, the IPv4
    /// destination and Args.Mob.Session after it (RFC 9433 §6.7 Fig. 11); End.M.GTP6.D's,
    /// Args.Mob.Session after it (§6.3).
    SrPrefix,
    /// `src-prefix P/LEN`: the prefix H.M.GTP4.D's IPv6 source starts with, the IPv4
    /// source after it (RFC 9433 §6.6 Fig. 10; VPP's `v6src_prefix`).
    SrcPrefix,
    /// `endpoint obj FILE [sec SECTION]`: End.BPF's program (iproute2's `lwt_parse_bpf`).
    Endpoint,
}

impl Param {
    /// Every kind, in the order they are displayed.
    pub const ALL: [Param; 17] = [
        Param::Nh6,
        Param::Nh4,
        Param::Oif,
        Param::Iif,
        Param::Src,
        Param::Segs,
        Param::Table,
        Param::VrfTable,
        Param::Srh,
        Param::Map,
        Param::GroupBits,
        Param::Rate,
        Param::Burst,
        Param::SrPrefix,
        Param::SrcPrefix,
        Param::V4SrcPosition,
        Param::Endpoint,
    ];

    /// The keyword introducing the parameter.
    pub fn keyword(self) -> &'static str {
        match self {
            Param::Nh6 => "nh6",
            Param::Nh4 => "nh4",
            Param::Oif => "oif",
            Param::Table => "table",
            Param::VrfTable => "vrftable",
            Param::Srh => "srh",
            Param::Map => "map",
            Param::Iif => "iif",
            Param::Src => "src",
            Param::Segs => "segs",
            Param::GroupBits => "group-bits",
            Param::Rate => "rate",
            Param::Burst => "burst",
            Param::V4SrcPosition => "v4src-position",
            Param::SrPrefix => "sr-prefix",
            Param::SrcPrefix => "src-prefix",
            Param::Endpoint => "endpoint",
        }
    }

    /// What the value looks like, for error messages and help.
    pub fn value_hint(self) -> &'static str {
        match self {
            Param::Nh6 => "an IPv6 address",
            Param::Nh4 => "an IPv4 address",
            Param::Oif | Param::Iif => "a device name",
            Param::Src => "an IPv6 address (the outer source)",
            Param::Segs => "S1,S2,...,Sn (IPv6 addresses, the first visited first)",
            Param::Table | Param::VrfTable => "a table id (number, or main/local)",
            Param::Srh => "`[csid next|replace [lblen L] [nflen N]] segs S1,S2,... [hmac KEYID]`",
            Param::Map => "an IPv6 address (the mapped SID)",
            Param::GroupBits => "a number of bits, 0 to 16 (the group id after the SID's prefix)",
            Param::Rate => "a rate in kbit/s (when the SID's limit-rate is 0)",
            Param::Burst => "a number of bytes (the token bucket's depth)",
            Param::V4SrcPosition => "a bit position, 0 to 96 (where the IPv4 source starts in the IPv6 source)",
            Param::SrPrefix => "an IPv6 prefix P/LEN (the last SID's locator and function), LEN <= 56 for H.M.GTP4.D, <= 88 for End.M.GTP6.D",
            Param::SrcPrefix => "an IPv6 prefix P/LEN, LEN <= 96 (the IPv6 source's prefix)",
            Param::Endpoint => "`obj FILE.o [sec SECTION]` (an eBPF object compiled by clang, the program's section)",
        }
    }

    /// The value in a usage line: `nh6 ADDR`.
    pub fn placeholder(self) -> &'static str {
        match self {
            Param::Nh6 | Param::Nh4 => "ADDR",
            Param::Oif | Param::Iif => "DEV",
            Param::Src => "ADDR",
            Param::Segs => "S1,...,Sn",
            Param::Table | Param::VrfTable => "TABLE",
            Param::Srh => "segs S1,...,Sn",
            Param::Map => "SID",
            Param::GroupBits => "I",
            Param::Rate => "KBPS",
            Param::Burst => "BYTES",
            Param::V4SrcPosition => "N",
            Param::SrPrefix | Param::SrcPrefix => "P/LEN",
            Param::Endpoint => "obj FILE sec SECTION",
        }
    }

    pub fn from_keyword(s: &str) -> Option<Param> {
        Self::ALL.into_iter().find(|p| p.keyword() == s)
    }

    /// Whether `p` holds this parameter.
    pub fn is_set(self, p: &SidParams) -> bool {
        match self {
            Param::Nh6 => p.nh6.is_some(),
            Param::Nh4 => p.nh4.is_some(),
            Param::Oif => p.oif.is_some(),
            Param::Table => p.table.is_some(),
            Param::VrfTable => p.vrftable.is_some(),
            Param::Srh => p.srh.is_some(),
            Param::Map => p.map.is_some(),
            Param::Iif => p.iif.is_some(),
            Param::Src => p.src.is_some(),
            Param::Segs => p.segs.is_some(),
            Param::GroupBits => p.group_bits.is_some(),
            Param::Rate => p.rate.is_some(),
            Param::Burst => p.burst.is_some(),
            Param::V4SrcPosition => p.v4src_position.is_some(),
            Param::SrPrefix => p.sr_prefix.is_some(),
            Param::SrcPrefix => p.src_prefix.is_some(),
            Param::Endpoint => p.bpf.is_some(),
        }
    }

    /// ` KEYWORD VALUE` as written in a config line, if `p` holds this parameter.
    fn write(self, p: &SidParams, o: &mut String) {
        let _ = match self {
            Param::Nh6 => p.nh6.map(|x| write!(o, " nh6 {x}")),
            Param::Nh4 => p.nh4.map(|x| write!(o, " nh4 {x}")),
            Param::Oif => p.oif.as_ref().map(|x| write!(o, " oif {x}")),
            Param::Table => p.table.map(|x| write!(o, " table {x}")),
            Param::VrfTable => p.vrftable.map(|x| write!(o, " vrftable {x}")),
            Param::Srh => p.srh.as_ref().map(|x| {
                o.push_str(" srh ");
                crate::spec::write_seg_list(o, x.csid, &x.segs, x.hmac)
            }),
            Param::Map => p.map.map(|x| write!(o, " map {x}")),
            Param::Iif => p.iif.as_ref().map(|x| write!(o, " iif {x}")),
            Param::Src => p.src.map(|x| write!(o, " src {x}")),
            Param::Segs => p.segs.as_ref().map(|x| {
                let l: Vec<String> = x.iter().map(|a| a.to_string()).collect();
                write!(o, " segs {}", l.join(","))
            }),
            Param::GroupBits => p.group_bits.map(|x| write!(o, " group-bits {x}")),
            Param::Rate => p.rate.map(|x| write!(o, " rate {x}")),
            Param::Burst => p.burst.map(|x| write!(o, " burst {x}")),
            Param::V4SrcPosition => p.v4src_position.map(|x| write!(o, " v4src-position {x}")),
            Param::SrPrefix => p.sr_prefix.map(|(a, l)| write!(o, " sr-prefix {a}/{l}")),
            Param::SrcPrefix => p.src_prefix.map(|(a, l)| write!(o, " src-prefix {a}/{l}")),
            Param::Endpoint => p.bpf.as_ref().map(|x| write!(o, " endpoint {x}")),
        };
    }
}

/// A flavour of RFC 8986 §4.16, or NEXT-C-SID / REPLACE-C-SID (RFC 9800 §4.1, §4.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Flavor {
    Psp,
    Usp,
    Usd,
    NextCsid,
    /// An sr6 extension of the kernel's grammar (no kernel has REPLACE-C-SID).
    ReplaceCsid,
}

impl Flavor {
    /// Every flavour, in Linux's order (its `SEG6_LOCAL_FLV_OP_*` bits), which is the
    /// order `show` lists them in; REPLACE-C-SID, which Linux lacks, last.
    pub const ALL: [Flavor; 5] = [Flavor::Psp, Flavor::Usp, Flavor::Usd, Flavor::NextCsid, Flavor::ReplaceCsid];

    pub fn keyword(self) -> &'static str {
        match self {
            Flavor::Psp => "psp",
            Flavor::Usp => "usp",
            Flavor::Usd => "usd",
            Flavor::NextCsid => "next-csid",
            Flavor::ReplaceCsid => "replace-csid",
        }
    }
}

impl SidAction {
    /// The parameters and flavours as written after the action's keyword
    /// (`nh6 fc00::1 oif eth1 flavors psp`), in [`Param::ALL`] order.
    pub fn params_text(&self) -> String {
        let mut o = String::new();
        for p in Param::ALL {
            p.write(&self.params, &mut o);
        }
        let fl: Vec<&str> = Flavor::ALL.into_iter().filter(|f| self.flavors.has(*f)).map(Flavor::keyword).collect();
        if !fl.is_empty() {
            let _ = write!(o, " flavors {}", fl.join(","));
        }
        // Linux shows the lengths whenever NEXT-C-SID is on, defaults included; so does
        // sr6 for REPLACE-C-SID (the two never go together).
        if let Some(c) = self.flavors.next_csid.or(self.flavors.replace_csid) {
            let _ = write!(o, " lblen {} nflen {}", c.lblen, c.nflen);
        }
        o.trim_start().to_string()
    }
}

impl std::fmt::Display for SidAction {
    /// `KEYWORD PARAMS...`, as after `encap seg6local action`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let p = self.params_text();
        if p.is_empty() {
            f.write_str(self.behaviour.keyword)
        } else {
            write!(f, "{} {p}", self.behaviour.keyword)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::behaviour::by_keyword;
    use crate::spec::{CsidLengths, CsidPolicy, CsidScheme, Flavors, SrhParam};

    #[test]
    fn actions_display_as_written() {
        let a = |kw: &str, params: SidParams, flavors: Flavors| SidAction {
            behaviour: by_keyword(kw).unwrap(),
            params,
            flavors,
            count: false,
        };
        assert_eq!(a("End", SidParams::default(), Flavors::default()).to_string(), "End");
        let x = SidParams { nh6: Some("fc00::1".parse().unwrap()), oif: Some("eth1".into()), ..SidParams::default() };
        let fl = Flavors { psp: true, usd: true, ..Flavors::default() };
        assert_eq!(a("End.X", x, fl).to_string(), "End.X nh6 fc00::1 oif eth1 flavors psp,usd");
        let b = SidParams {
            srh: Some(SrhParam {
                segs: vec!["fc00::2".parse().unwrap(), "fc00::3".parse().unwrap()],
                hmac: Some(7),
                csid: None,
            }),
            ..SidParams::default()
        };
        let b6 = a("End.B6.Encaps", b, Flavors::default());
        assert_eq!(b6.to_string(), "End.B6.Encaps srh segs fc00::2,fc00::3 hmac 7");
        assert_eq!(b6.params_text(), "srh segs fc00::2,fc00::3 hmac 7");
        let csid = CsidPolicy { scheme: CsidScheme::Next, lengths: CsidLengths { lblen: 32, nflen: 16 } };
        let c = SidParams {
            srh: Some(SrhParam { segs: vec!["fc00:0:1::".parse().unwrap()], hmac: None, csid: Some(csid) }),
            ..SidParams::default()
        };
        assert_eq!(a("End.B6", c, Flavors::default()).params_text(), "srh csid next lblen 32 nflen 16 segs fc00:0:1::");
        let m = SidParams { map: Some("fc00:2::99".parse().unwrap()), ..SidParams::default() };
        assert!(Param::Map.is_set(&m) && !Param::Nh6.is_set(&m));
        assert_eq!(a("End", m, Flavors::default()).params_text(), "map fc00:2::99");
        assert_eq!((Param::Map.keyword(), Param::Map.placeholder()), ("map", "SID"));
        for p in Param::ALL {
            assert_eq!(Param::from_keyword(p.keyword()), Some(p));
        }
    }
}
