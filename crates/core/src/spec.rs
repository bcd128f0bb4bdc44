//! The configuration model: what an operator asked for, typed but not yet validated
//! against itself.
//!
//! `sr6-config` parses the iproute2-style language into a [`RouterSpec`];
//! [`crate::tables::Tables::build`] validates it as a whole (devices, keys, required
//! behaviour parameters) and precomputes everything the hot path needs. Every item keeps
//! the `line` it came from so a build error can point at it.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use crate::behaviour::{Behaviour, Flavor};

/// The kernel's main routing table id (`ip route ... table main`).
pub const MAIN_TABLE: u32 = 254;
/// The kernel's local table id.
pub const LOCAL_TABLE: u32 = 255;

/// Where a spec item came from: 1-based line number in its file (0 = not from a file).
pub type Line = usize;

/// A device's name in a route. Shared, not copied: a full table's routes name a few
/// devices, and a configuration is copied whole at each `sr6 ctl` change (a clone of a
/// name is a count incremented, not an allocation).
pub type DevName = std::sync::Arc<str>;

/// A whole router configuration, in the order the lines were written.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RouterSpec {
    /// Devices in order of first mention anywhere in the file.
    pub devices: Vec<String>,
    /// `ip link set DEV address MAC`.
    pub links: Vec<LinkSpec>,
    /// `ip link set DEV mtu N`: the last one for a device wins.
    pub mtus: Vec<MtuSpec>,
    /// `ip [-6] addr add ADDR/LEN dev DEV`.
    pub addrs: Vec<AddrSpec>,
    /// `ip [-6] neigh add ADDR lladdr MAC dev DEV`.
    pub neighs: Vec<NeighSpec>,
    /// `ip [-6] route add ...`, including `encap seg6` and `encap seg6local`.
    pub routes: Vec<RouteSpec>,
    /// `ip sr tunsrc set ADDR`.
    pub tunsrc: Option<(Ipv6Addr, Line)>,
    /// `ip sr hmac set KEYID ALG SECRET`.
    pub hmac_keys: Vec<HmacKeySpec>,
    /// `sysctl -w KEY=VALUE` for the keys sr6 understands.
    pub sysctls: Vec<SysctlSpec>,
    /// `ip nexthop add id N ...`: nexthop objects, for routes with `nhid N`.
    pub nexthops: Vec<NexthopSpec>,
    /// `ip [-6] rule add ...`: policy routing rules of both families, in the kernel's
    /// list order (by priority; a new rule after those of its priority).
    pub rules: Vec<RuleSpec>,
    /// `ip6tables ...`: the firewall's chains and rules ([`crate::firewall`]).
    pub firewall: crate::firewall::FirewallSpec,
    /// `ids rules FILE ...`: the IDS ([`crate::ids`]).
    pub ids: Option<crate::ids::IdsSpec>,
}

impl RouterSpec {
    /// A copy of everything but the routes, which are left empty: what a change to a
    /// configuration that may hold a full table keeps to put the rest back with,
    /// instead of a copy of every route.
    pub fn clone_without_routes(&self) -> RouterSpec {
        // (Every field named: a new one is copied too, or this does not compile.)
        let RouterSpec {
            devices,
            links,
            mtus,
            addrs,
            neighs,
            routes: _,
            tunsrc,
            hmac_keys,
            sysctls,
            nexthops,
            rules,
            firewall,
            ids,
        } = self;
        RouterSpec {
            devices: devices.clone(),
            links: links.clone(),
            mtus: mtus.clone(),
            addrs: addrs.clone(),
            neighs: neighs.clone(),
            routes: Vec::new(),
            tunsrc: *tunsrc,
            hmac_keys: hmac_keys.clone(),
            sysctls: sysctls.clone(),
            nexthops: nexthops.clone(),
            rules: rules.clone(),
            firewall: firewall.clone(),
            ids: ids.clone(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkSpec {
    pub line: Line,
    pub dev: String,
    pub mac: [u8; 6],
}

/// A device's MTU (`ip link set DEV mtu N`): the largest IPv6 or IPv4 packet it sends,
/// Ethernet header excluded (the kernel's meaning).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MtuSpec {
    pub line: Line,
    pub dev: String,
    pub mtu: u16,
}

/// A device's MTU when no line sets it (Ethernet's, as the kernel's veth and most NICs).
pub const DEFAULT_MTU: u16 = 1500;
/// The smallest MTU sr6 accepts: IPv6's minimum link MTU (RFC 8200 §5). The kernel
/// accepts less but then turns IPv6 off on the device.
pub const MIN_MTU: u16 = 1280;
/// The largest MTU sr6 accepts: its packet buffers hold frames of up to
/// [`crate::packet::MAX_FRAME`] bytes, Ethernet header included.
pub const MAX_MTU: u16 = (crate::packet::MAX_FRAME - 14) as u16;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AddrSpec {
    pub line: Line,
    pub dev: String,
    pub addr: IpAddr,
    pub prefix_len: u8,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NeighSpec {
    pub line: Line,
    pub dev: String,
    pub addr: IpAddr,
    pub mac: [u8; 6],
}

/// An IPv4 or IPv6 prefix. Host bits beyond `len` must be zero (the parser rejects them,
/// as `ip route` does with "Invalid prefix for given prefix length").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Prefix {
    V6(Ipv6Addr, u8),
    V4(Ipv4Addr, u8),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RouteSpec {
    pub line: Line,
    /// Routing table id; [`MAIN_TABLE`] when the line names none.
    pub table: u32,
    pub prefix: Prefix,
    pub kind: RouteKind,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RouteKind {
    /// `via NH dev DEV`, `via NH`, or `dev DEV` (on-link).
    Forward { via: Option<IpAddr>, dev: Option<DevName> },
    /// `blackhole PREFIX`: silently discarded (counted).
    Blackhole,
    /// `unreachable PREFIX`: ICMP Destination Unreachable (no route).
    Unreachable,
    /// `encap seg6 mode M segs S1,S2 [hmac K] [via NH] dev DEV` (RFC 8986 §5).
    Seg6 { encap: Seg6Encap, via: Option<IpAddr>, dev: Option<DevName> },
    /// `encap seg6local action B ... dev DEV` (RFC 8986 §4).
    Seg6Local { action: Box<SidAction>, dev: Option<DevName> },
    /// `nexthop via A dev D weight W nexthop ...`: equal- or weighted-cost multipath
    /// (one path per `nexthop`).
    Multipath { paths: Vec<PathSpec> },
    /// `nhid N`: through nexthop object N (`ip nexthop add id N ...`).
    Nhid { id: u32 },
    /// `encap gtp teid T dst A src B [qfi Q] [via NH] dev DEV` or `encap gtp decap
    /// [table N] dev DEV`: a plain GTP-U tunnel end (sr6's grammar,
    /// `behaviour::mobile::gtp_encap` and `gtp_decap`).
    Gtp { tunnel: GtpTunnel, via: Option<IpAddr>, dev: Option<DevName> },
    /// `encap bpf [in PROG] [out PROG] [xmit PROG] [headroom N] [via NH] dev DEV`: LWT
    /// BPF programs on a route (Linux's net/core/lwt_bpf.c; `pipeline::lwt_bpf`).
    /// (Boxed: the programs are seven times the size of the other kinds, and every
    /// route, a full table's too, is as large as the largest kind.)
    Bpf { bpf: Box<crate::pipeline::lwt_bpf::LwtBpf>, via: Option<IpAddr>, dev: Option<DevName> },
}

/// What `encap gtp` does (3GPP TS 29.281).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GtpTunnel {
    /// `teid T dst A src B [qfi Q]`: GTP-U encapsulation toward the peer `dst`.
    Encap { teid: u32, dst: IpAddr, src: IpAddr, qfi: Option<u8> },
    /// `decap [table N]`: GTP-U decapsulation at the route's addresses, the inner
    /// packet looked up in table N (main by default).
    Decap { table: Option<u32> },
}

impl std::fmt::Display for GtpTunnel {
    /// The words after `encap gtp`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            GtpTunnel::Encap { teid, dst, src, qfi } => {
                write!(f, "teid {teid} dst {dst} src {src}")?;
                match qfi {
                    Some(q) => write!(f, " qfi {q}"),
                    None => Ok(()),
                }
            }
            GtpTunnel::Decap { table: None } => f.write_str("decap"),
            GtpTunnel::Decap { table: Some(t) } => write!(f, "decap table {t}"),
        }
    }
}

/// One path of a multipath route or of a nexthop object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathSpec {
    pub via: Option<IpAddr>,
    pub dev: Option<DevName>,
    /// 1 to 256, as the kernel's (`rtnh_hops` + 1).
    pub weight: u16,
}

/// `ip nexthop add id N ...`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NexthopSpec {
    pub line: Line,
    pub id: u32,
    pub kind: NexthopKind,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NexthopKind {
    /// `via A dev D` or `dev D`; `v6` is the family (of `via`, or `-6`/`-4`).
    Single { via: Option<IpAddr>, dev: String, v6: bool },
    /// `blackhole`: routes through it discard silently. Its family is `-6`'s, else
    /// IPv4 (as the kernel's).
    Blackhole { v6: bool },
    /// `group N1[,W1]/N2[,W2]/...`: members (single nexthops) with weights 1 to 256.
    Group { members: Vec<(u32, u16)> },
}

/// The head-end modes of `encap seg6 mode ...`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Seg6Mode {
    /// H.Encaps (RFC 8986 §5.1) — `encap`.
    Encap,
    /// H.Encaps.Red (§5.2) — `encap.red`.
    EncapRed,
    /// H.Insert (RFC 8986 §5, draft-filsfils-spring-srv6-net-pgm-insertion) — `inline`.
    Inline,
    /// H.Insert.Red — `inline.red` (sr6 extension; the kernel lacks it).
    InlineRed,
    /// H.Encaps.L2 (§5.3) — `l2encap`.
    L2Encap,
    /// H.Encaps.L2.Red (§5.4) — `l2encap.red`.
    L2EncapRed,
}

impl Seg6Mode {
    pub const ALL: [Seg6Mode; 6] = [
        Seg6Mode::Encap,
        Seg6Mode::EncapRed,
        Seg6Mode::Inline,
        Seg6Mode::InlineRed,
        Seg6Mode::L2Encap,
        Seg6Mode::L2EncapRed,
    ];
    /// The iproute2 keyword.
    pub fn keyword(self) -> &'static str {
        match self {
            Seg6Mode::Encap => "encap",
            Seg6Mode::EncapRed => "encap.red",
            Seg6Mode::Inline => "inline",
            Seg6Mode::InlineRed => "inline.red",
            Seg6Mode::L2Encap => "l2encap",
            Seg6Mode::L2EncapRed => "l2encap.red",
        }
    }
    /// The RFC 8986 name of the behaviour.
    pub fn rfc_name(self) -> &'static str {
        match self {
            Seg6Mode::Encap => "H.Encaps",
            Seg6Mode::EncapRed => "H.Encaps.Red",
            Seg6Mode::Inline => "H.Insert",
            Seg6Mode::InlineRed => "H.Insert.Red",
            Seg6Mode::L2Encap => "H.Encaps.L2",
            Seg6Mode::L2EncapRed => "H.Encaps.L2.Red",
        }
    }
    pub fn from_keyword(s: &str) -> Option<Seg6Mode> {
        Self::ALL.into_iter().find(|m| m.keyword() == s)
    }
}

/// A segment list to push, as written: `segs S1,S2,...,Sn` where S1 is the first
/// segment to visit (the kernel's order).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seg6Encap {
    pub mode: Seg6Mode,
    /// The full SIDs as written (compressed when the tables are built if `csid` is set).
    pub segs: Vec<Ipv6Addr>,
    /// HMAC key id (`hmac KEYID`), RFC 8754 §2.1.2.
    pub hmac: Option<u32>,
    /// `csid next|replace [lblen L] [nflen N]` (sr6 extension): compress `segs`.
    pub csid: Option<CsidPolicy>,
}

impl std::fmt::Display for Seg6Encap {
    /// `MODE [csid ...] segs S1,...,Sn [hmac K]`, as after `encap seg6 mode`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ", self.mode.keyword())?;
        write_seg_list(f, self.csid, &self.segs, self.hmac)
    }
}

/// `[csid ... ]segs S1,...,Sn[ hmac K]`: a head-end's or a binding SID's segment list as
/// written in a config line.
pub fn write_seg_list(
    f: &mut impl std::fmt::Write,
    csid: Option<CsidPolicy>,
    segs: &[Ipv6Addr],
    hmac: Option<u32>,
) -> std::fmt::Result {
    if let Some(c) = csid {
        write!(f, "{c} ")?;
    }
    let segs: Vec<String> = segs.iter().map(|s| s.to_string()).collect();
    write!(f, "segs {}", segs.join(","))?;
    match hmac {
        Some(k) => write!(f, " hmac {k}"),
        None => Ok(()),
    }
}

/// How a head-end compresses its segment list (RFC 9800 §7; sr6's `csid` words).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CsidScheme {
    /// NEXT-C-SID (§4.1): C-SIDs packed after the block, the first container the DA.
    Next,
    /// REPLACE-C-SID (§4.2): containers of C-SIDs in the SRH, indexed by the DA.
    Replace,
}

impl CsidScheme {
    pub fn keyword(self) -> &'static str {
        match self {
            CsidScheme::Next => "next",
            CsidScheme::Replace => "replace",
        }
    }

    /// The lengths when the line gives none: those of the flavour, `flavors next-csid`
    /// (Linux's, 32/16) or `flavors replace-csid` (48/32).
    pub fn default_lengths(self) -> CsidLengths {
        match self {
            CsidScheme::Next => CsidLengths::default(),
            CsidScheme::Replace => crate::behaviour::replace_csid::DEFAULT_LENGTHS,
        }
    }
}

/// `csid next|replace lblen L nflen N`: the scheme and the lengths that split every SID
/// of the list into Locator-Block, C-SID and the rest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CsidPolicy {
    pub scheme: CsidScheme,
    pub lengths: CsidLengths,
}

impl std::fmt::Display for CsidPolicy {
    /// `csid next lblen L nflen N` (the lengths always written, defaults included).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "csid {} lblen {} nflen {}", self.scheme.keyword(), self.lengths.lblen, self.lengths.nflen)
    }
}

/// `flavors psp,usp,usd,next-csid|replace-csid [lblen L] [nflen N]` (RFC 8986 §4.16,
/// RFC 9800 §4.1, §4.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Flavors {
    pub psp: bool,
    pub usp: bool,
    pub usd: bool,
    /// NEXT-C-SID and the lengths that split its C-SID container.
    pub next_csid: Option<CsidLengths>,
    /// REPLACE-C-SID (an sr6 extension of the grammar) and its lengths; never together
    /// with `next_csid` (`behaviour::replace_csid`).
    pub replace_csid: Option<CsidLengths>,
}

/// The lengths of a NEXT-C-SID container (RFC 9800 §4.1): the Locator-Block (`lblen`)
/// and the Locator-Node Function (`nflen`), in bits; what follows them in the
/// destination address is the argument, the C-SIDs still to come.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CsidLengths {
    pub lblen: u8,
    pub nflen: u8,
}

impl Default for CsidLengths {
    /// Linux's defaults: a 32-bit block and 16-bit C-SIDs (uSID "F3216").
    fn default() -> CsidLengths {
        CsidLengths { lblen: 32, nflen: 16 }
    }
}

impl CsidLengths {
    /// The lengths Linux accepts (`seg6_chk_next_csid_cfg`): both non-zero multiples of
    /// 8, together at most 128 bits. The error says which rule failed.
    pub fn new(lblen: u8, nflen: u8) -> Result<CsidLengths, &'static str> {
        if lblen == 0 || !lblen.is_multiple_of(8) {
            return Err("lblen must be a non-zero multiple of 8");
        }
        if nflen == 0 || !nflen.is_multiple_of(8) {
            return Err("nflen must be a non-zero multiple of 8");
        }
        if u16::from(lblen) + u16::from(nflen) > 128 {
            return Err("lblen + nflen must not exceed 128");
        }
        Ok(CsidLengths { lblen, nflen })
    }
}

impl Flavors {
    pub fn is_empty(&self) -> bool {
        !(self.psp || self.usp || self.usd || self.next_csid.is_some() || self.replace_csid.is_some())
    }

    pub fn has(&self, f: Flavor) -> bool {
        match f {
            Flavor::Psp => self.psp,
            Flavor::Usp => self.usp,
            Flavor::Usd => self.usd,
            Flavor::NextCsid => self.next_csid.is_some(),
            Flavor::ReplaceCsid => self.replace_csid.is_some(),
        }
    }

    /// Sets flavour `f` (NEXT-C-SID with Linux's default lengths, REPLACE-C-SID with
    /// sr6's, if it had none).
    pub fn set(&mut self, f: Flavor) {
        match f {
            Flavor::Psp => self.psp = true,
            Flavor::Usp => self.usp = true,
            Flavor::Usd => self.usd = true,
            Flavor::NextCsid => self.next_csid = Some(self.next_csid.unwrap_or_default()),
            Flavor::ReplaceCsid => {
                self.replace_csid = Some(self.replace_csid.unwrap_or(crate::behaviour::replace_csid::DEFAULT_LENGTHS))
            }
        }
    }
}

/// `srh [csid ...] segs S1,...,Sn [hmac KEYID]`: the SR policy a binding SID applies; its mode
/// (insertion or encapsulation) is the behaviour's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SrhParam {
    pub segs: Vec<Ipv6Addr>,
    /// HMAC key id (RFC 8754 §2.1.2).
    pub hmac: Option<u32>,
    /// `csid ...`: compress `segs` (as for `encap seg6`).
    pub csid: Option<CsidPolicy>,
}

/// The parameters a seg6local action may carry; which are required or allowed depends
/// on the behaviour (see [`crate::behaviour::TABLE`]).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SidParams {
    /// `nh6 ADDR`
    pub nh6: Option<Ipv6Addr>,
    /// `nh4 ADDR`
    pub nh4: Option<Ipv4Addr>,
    /// `oif DEV`
    pub oif: Option<String>,
    /// `table N`
    pub table: Option<u32>,
    /// `vrftable N`
    pub vrftable: Option<u32>,
    /// `srh segs S1,...,Sn [hmac KEYID]` — the policy of End.B6 / End.B6.Encaps(.Red).
    pub srh: Option<SrhParam>,
    /// `map SID` — the mapped SID of End.MAP (RFC 9433 §6.2).
    pub map: Option<Ipv6Addr>,
    /// `iif DEV` — the device an SR proxy receives the function's packets on.
    pub iif: Option<String>,
    /// `src ADDR` — End.AS's outer source (the draft's CACHE.SA).
    pub src: Option<Ipv6Addr>,
    /// `segs S1,...,Sn` — End.AS's segment list in travel order (CACHE.LIST), or the
    /// segments H.M.GTP4.D visits before its last SID.
    pub segs: Option<Vec<Ipv6Addr>>,
    /// `group-bits I` — End.Limit's group-id length (RFC 9433 §6.8).
    pub group_bits: Option<u8>,
    /// `rate KBPS` — End.Limit's static rate.
    pub rate: Option<u32>,
    /// `burst BYTES` — End.Limit's bucket depth.
    pub burst: Option<u32>,
    /// `v4src-position N` — where End.M.GTP4.E finds the IPv4 source in the IPv6
    /// source, in bits (RFC 9433 §6.6).
    pub v4src_position: Option<u8>,
    /// `sr-prefix P/LEN` — H.M.GTP4.D's last SID prefix (RFC 9433 §6.7).
    pub sr_prefix: Option<(Ipv6Addr, u8)>,
    /// `src-prefix P/LEN` — H.M.GTP4.D's IPv6 source prefix (RFC 9433 §6.6 Fig. 10).
    pub src_prefix: Option<(Ipv6Addr, u8)>,
    /// `endpoint obj FILE sec SECTION` — End.BPF's program, loaded by the parser.
    pub bpf: Option<crate::behaviour::end_bpf::BpfEndpoint>,
}

/// One local SID: `encap seg6local action BEHAVIOUR PARAMS [flavors ...] [count]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SidAction {
    pub behaviour: &'static Behaviour,
    pub params: SidParams,
    pub flavors: Flavors,
    /// `count`: the kernel only keeps per-SID counters when asked; sr6 always keeps them
    /// and accepts the keyword for compatibility.
    pub count: bool,
}

/// HMAC algorithms of `ip sr hmac set` (RFC 8754 §2.1.2.1, Lebrun paper §2.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HmacAlg {
    Sha1,
    Sha256,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HmacKeySpec {
    pub line: Line,
    pub key_id: u32,
    pub alg: HmacAlg,
    pub secret: Vec<u8>,
}

/// Which devices a `net.ipv6.conf.X.*` sysctl applies to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DevSel {
    /// `all`
    All,
    /// `default`: devices with no value of their own.
    Default,
    Dev(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SysctlSpec {
    /// `net.ipv6.conf.X.seg6_enabled=N`
    Seg6Enabled { line: Line, dev: DevSel, value: bool },
    /// `net.ipv6.conf.X.seg6_require_hmac=-1|0|1`
    RequireHmac { line: Line, dev: DevSel, value: i8 },
    /// `net.ipv6.conf.X.forwarding=N`
    Forwarding6 { line: Line, dev: DevSel, value: bool },
    /// `net.ipv4.ip_forward=N` or `net.ipv4.conf.X.forwarding=N`
    Forwarding4 { line: Line, dev: DevSel, value: bool },
    /// `net.ipv6.fib_multipath_hash_policy=0|1` (`v6`) or
    /// `net.ipv4.fib_multipath_hash_policy=0|1`: 0 hashes L3 fields, 1 the 5-tuple.
    MultipathHash { line: Line, v6: bool, policy: u8 },
    /// `net.ipv6.ip6t_seg6_args=N`: the argument bits of the active SID that the
    /// firewall's `SEG6 --seg6-action eval-args` reads (SERA, thesis §4.3.3).
    Ip6tSeg6Args { line: Line, bits: u8 },
    /// `net.ipv6.ip6t_seg6=0|1`: SERA's basic mode (thesis §4.3.1): the firewall's
    /// rules judge the original packet of SRv6 traffic, not the outer one.
    Ip6tSeg6 { line: Line, on: bool },
}

/// The priority of the kernel's implicit rule `lookup main`.
pub const MAIN_RULE_PREF: u32 = 32766;
/// The priority of the kernel's implicit rule `lookup default`.
pub const DEFAULT_RULE_PREF: u32 = 32767;

/// `ip [-6] rule add [not] [from P] [to P] [iif DEV] [ipproto N] [sport A[-B]]
/// [dport A[-B]] [priority N] lookup TABLE | blackhole | unreachable | prohibit`: a
/// policy routing rule (the kernel's `fib_rule`), besides the implicit ones at 0
/// (`lookup local`), 32766 (`lookup main`) and 32767 (`lookup default`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleSpec {
    pub line: Line,
    pub v6: bool,
    pub pref: u32,
    /// `not`: the rule applies to packets its selectors do not match.
    pub not: bool,
    pub from: Option<Prefix>,
    pub to: Option<Prefix>,
    pub iif: Option<String>,
    /// The upper-layer protocol (0: any, as in the kernel).
    pub ipproto: u8,
    /// Inclusive port ranges; `None`: any port.
    pub sport: Option<(u16, u16)>,
    pub dport: Option<(u16, u16)>,
    pub action: RuleAction,
}

/// What a matching rule does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RuleAction {
    /// `lookup TABLE` (a table id): a route found there is the result; none found, the
    /// next rule is tried.
    Lookup(u32),
    /// The packet is discarded silently.
    Blackhole,
    /// ICMP Destination Unreachable, as for no route.
    Unreachable,
    /// ICMP Destination Unreachable, administratively prohibited.
    Prohibit,
}
