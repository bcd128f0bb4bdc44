//! The firewall's configuration model: chains of ip6tables rules as written
//! (`ip6tables -A|-I CHAIN ...`, `-P`, `-N`), before [`super::Firewall::build`] resolves
//! them. `Display` writes a rule back as `ip6tables -S` does (`-A CHAIN ...`).

use std::fmt;
use std::net::Ipv6Addr;

use crate::spec::Line;

/// The built-in chains sr6 has: packets for the router itself, and transit.
pub const BUILTIN: [&str; 2] = ["INPUT", "FORWARD"];

/// A match option with its `!`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Neg<T> {
    pub v: T,
    pub inv: bool,
}

/// `ADDR[/LEN|/MASK]`: the address as given, already masked (as ip6tables stores it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AddrMatch {
    pub addr: Ipv6Addr,
    pub mask: Ipv6Addr,
    pub inv: bool,
}

impl AddrMatch {
    /// `addr` masked by `mask`.
    pub fn new(addr: Ipv6Addr, mask: Ipv6Addr, inv: bool) -> AddrMatch {
        AddrMatch { addr: Ipv6Addr::from(u128::from(addr) & u128::from(mask)), mask, inv }
    }
    /// Whether `a` is inside (ignoring `inv`).
    #[inline]
    pub fn contains(&self, a: u128) -> bool {
        a & u128::from(self.mask) == u128::from(self.addr)
    }
}

impl fmt::Display for AddrMatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let m = u128::from(self.mask);
        if m.leading_ones() + m.trailing_zeros() == 128 {
            write!(f, "{}/{}", self.addr, m.leading_ones())
        } else {
            write!(f, "{}/{}", self.addr, self.mask)
        }
    }
}

/// A comparison of an SRH field (`--srh-...-eq|gt|lt`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cmp {
    Eq,
    Gt,
    Lt,
}

/// The options of `-m srh` (Linux's `ip6t_srh` revision 1, each negatable).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SrhMatch {
    pub next_hdr: Option<Neg<u8>>,
    /// Hdr Ext Len, Segments Left, Last Entry: by [`Cmp`] (`[eq, gt, lt]`).
    pub hdr_len: [Option<Neg<u8>>; 3],
    pub segs_left: [Option<Neg<u8>>; 3],
    pub last_entry: [Option<Neg<u8>>; 3],
    pub tag: Option<Neg<u16>>,
    /// The previous SID (Segment List[SL + 1]), the next (`[SL - 1]`), the last (`[0]`).
    pub psid: Option<AddrMatch>,
    pub nsid: Option<AddrMatch>,
    pub lsid: Option<AddrMatch>,
    /// SERA's `--inner-src`/`--inner-dst` (thesis Listing 4.4): the original packet's
    /// source and destination (`Fields::original`); a packet without one matches
    /// neither way.
    pub inner_src: Option<AddrMatch>,
    pub inner_dst: Option<AddrMatch>,
}

/// `--sport`/`--dport` with `-p tcp|udp` (`-m tcp|udp`): inclusive ranges.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PortMatch {
    /// 6 (TCP) or 17 (UDP).
    pub proto: u8,
    pub sport: Option<Neg<(u16, u16)>>,
    pub dport: Option<Neg<(u16, u16)>>,
}

/// What a rule selects; every field present must match.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FwMatch {
    pub src: Option<AddrMatch>,
    pub dst: Option<AddrMatch>,
    /// `-i`/`-o`: a device name, or a prefix of one ending in `+`.
    pub iif: Option<Neg<String>>,
    pub oif: Option<Neg<String>>,
    /// `-p`: the upper-layer protocol after the extension headers.
    pub proto: Option<Neg<u8>>,
    pub ports: Option<PortMatch>,
    pub srh: Option<SrhMatch>,
    /// nftables `srh ...`/`rt ...` expressions (`nft add rule`), all of which must hold.
    pub exthdr: Vec<ExthdrMatch>,
}

/// The SRv6 actions of the SEG6 target (thesis §4.3.2, Listing 4.5).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Seg6Action {
    GoNext,
    SkipNext,
    GoLast,
    EvalArgs,
}

impl Seg6Action {
    pub const ALL: [(Seg6Action, &'static str); 4] = [
        (Seg6Action::GoNext, "go-next"),
        (Seg6Action::SkipNext, "skip-next"),
        (Seg6Action::GoLast, "go-last"),
        (Seg6Action::EvalArgs, "eval-args"),
    ];
    pub fn name(self) -> &'static str {
        Self::ALL.iter().find(|(a, _)| *a == self).map_or("", |(_, n)| n)
    }
}

/// What a matching rule does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FwTarget {
    Accept,
    Drop,
    /// ICMPv6 Destination Unreachable with this code (`--reject-with`).
    Reject(u8),
    Seg6(Seg6Action),
    /// A user chain; it returns here at its end or on RETURN.
    Jump(String),
    Return,
}

/// The `--reject-with` types of ip6t_REJECT sr6 sends: name, alias, ICMPv6 code.
pub const REJECT_WITH: [(&str, &str, u8); 6] = [
    ("icmp6-no-route", "no-route", 0),
    ("icmp6-adm-prohibited", "adm-prohibited", 1),
    ("icmp6-addr-unreachable", "addr-unreach", 3),
    ("icmp6-port-unreachable", "port-unreach", 4),
    ("icmp6-policy-fail", "policy-fail", 5),
    ("icmp6-reject-route", "reject-route", 6),
];

/// ip6tables' default `--reject-with`: icmp6-port-unreachable.
pub const REJECT_DEFAULT: u8 = 4;

/// One rule of a chain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FwRule {
    pub line: Line,
    pub m: FwMatch,
    pub target: FwTarget,
    /// A rule written with `nft add rule`: its expressions and verdict as nft lists
    /// them, which `show firewall` prints instead of the ip6tables form.
    pub nft: Option<String>,
}

/// An nftables comparison operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NftOp {
    Eq,
    Ne,
    Lt,
    Gt,
    Le,
    Ge,
}

impl NftOp {
    /// Whether `a OP b`.
    pub fn holds(self, a: u128, b: u128) -> bool {
        match self {
            NftOp::Eq => a == b,
            NftOp::Ne => a != b,
            NftOp::Lt => a < b,
            NftOp::Gt => a > b,
            NftOp::Le => a <= b,
            NftOp::Ge => a >= b,
        }
    }
}

/// An nftables extension-header expression on the first Routing header (`srh tag 7`,
/// `srh sid[1] fc00::1`, `rt seg-left > 0`): `len` bytes at `offset` in the header,
/// read as a big-endian number, compared with `value` (Linux's `nft_exthdr` for IPv6).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExthdrMatch {
    pub offset: u16,
    pub len: u8,
    pub op: NftOp,
    pub value: u128,
}

/// A chain: built-in (with a policy) or made by `-N`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChainSpec {
    pub name: String,
    /// The `-N` line (0 for a built-in chain).
    pub line: Line,
    /// A built-in chain's policy: true ACCEPT, false DROP.
    pub policy: Option<bool>,
    pub rules: Vec<FwRule>,
}

/// Every chain: the built-in ones first, in [`BUILTIN`] order, then the user chains.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FirewallSpec {
    pub chains: Vec<ChainSpec>,
    /// `nft add table ip6 NAME`: the tables made.
    pub nft_tables: Vec<String>,
    /// `nft add chain ...`: the base chains made, each on its built-in chain.
    pub nft_chains: Vec<NftChain>,
}

/// An nftables base chain: its table, its name, and the built-in chain its hook is
/// (`hook input`: INPUT, `hook forward`: FORWARD), where its rules go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NftChain {
    pub table: String,
    pub name: String,
    pub builtin: &'static str,
}

impl Default for FirewallSpec {
    fn default() -> Self {
        let chains = BUILTIN
            .iter()
            .map(|n| ChainSpec { name: n.to_string(), line: 0, policy: Some(true), rules: Vec::new() })
            .collect();
        FirewallSpec { chains, nft_tables: Vec::new(), nft_chains: Vec::new() }
    }
}

impl FirewallSpec {
    /// No rule and every policy ACCEPT: the data plane skips the firewall entirely.
    pub fn is_empty(&self) -> bool {
        self.chains.iter().all(|c| c.rules.is_empty() && c.policy != Some(false))
    }
    pub fn chain(&self, name: &str) -> Option<&ChainSpec> {
        self.chains.iter().find(|c| c.name == name)
    }
    pub fn chain_mut(&mut self, name: &str) -> Option<&mut ChainSpec> {
        self.chains.iter_mut().find(|c| c.name == name)
    }
}

fn neg(f: &mut fmt::Formatter<'_>, inv: bool) -> fmt::Result {
    if inv {
        f.write_str(" !")?;
    }
    Ok(())
}

fn range(r: (u16, u16)) -> String {
    if r.0 == r.1 {
        r.0.to_string()
    } else {
        format!("{}:{}", r.0, r.1)
    }
}

impl fmt::Display for FwMatch {
    /// The match as `ip6tables -S` writes it, each option after a space.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (o, a) in [("-s", &self.src), ("-d", &self.dst)] {
            if let Some(a) = a {
                neg(f, a.inv)?;
                write!(f, " {o} {a}")?;
            }
        }
        for (o, d) in [("-i", &self.iif), ("-o", &self.oif)] {
            if let Some(d) = d {
                neg(f, d.inv)?;
                write!(f, " {o} {}", d.v)?;
            }
        }
        if let Some(p) = self.proto {
            neg(f, p.inv)?;
            match p.v {
                6 => write!(f, " -p tcp")?,
                17 => write!(f, " -p udp")?,
                58 => write!(f, " -p ipv6-icmp")?,
                n => write!(f, " -p {n}")?,
            }
        }
        if let Some(pm) = &self.ports {
            write!(f, " -m {}", if pm.proto == 6 { "tcp" } else { "udp" })?;
            for (o, r) in [("--sport", pm.sport), ("--dport", pm.dport)] {
                if let Some(r) = r {
                    neg(f, r.inv)?;
                    write!(f, " {o} {}", range(r.v))?;
                }
            }
        }
        if let Some(s) = &self.srh {
            f.write_str(" -m srh")?;
            if let Some(n) = s.next_hdr {
                neg(f, n.inv)?;
                write!(f, " --srh-next-hdr {}", n.v)?;
            }
            for (name, arr) in [("hdr-len", &s.hdr_len), ("segs-left", &s.segs_left), ("last-entry", &s.last_entry)] {
                for (c, v) in ["eq", "gt", "lt"].iter().zip(arr.iter()) {
                    if let Some(v) = v {
                        neg(f, v.inv)?;
                        write!(f, " --srh-{name}-{c} {}", v.v)?;
                    }
                }
            }
            if let Some(t) = s.tag {
                neg(f, t.inv)?;
                write!(f, " --srh-tag {}", t.v)?;
            }
            for (o, a) in [("psid", &s.psid), ("nsid", &s.nsid), ("lsid", &s.lsid)] {
                if let Some(a) = a {
                    neg(f, a.inv)?;
                    write!(f, " --srh-{o} {a}")?;
                }
            }
            for (o, a) in [("src", &s.inner_src), ("dst", &s.inner_dst)] {
                if let Some(a) = a {
                    neg(f, a.inv)?;
                    write!(f, " --inner-{o} {a}")?;
                }
            }
        }
        Ok(())
    }
}

impl fmt::Display for FwTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FwTarget::Accept => f.write_str("-j ACCEPT"),
            FwTarget::Drop => f.write_str("-j DROP"),
            FwTarget::Reject(code) => {
                let name = REJECT_WITH.iter().find(|r| r.2 == *code).map_or("icmp6-port-unreachable", |r| r.0);
                write!(f, "-j REJECT --reject-with {name}")
            }
            FwTarget::Seg6(a) => write!(f, "-j SEG6 --seg6-action {}", a.name()),
            FwTarget::Jump(c) => write!(f, "-j {c}"),
            FwTarget::Return => f.write_str("-j RETURN"),
        }
    }
}
