//! What an experiment measures and produces. Every other module of the crate speaks
//! these types; `results.json` is a list of [`BehaviorResult`] serialized with serde.

use std::cmp::Ordering;
use std::hash::{Hash, Hasher};
use std::sync::LazyLock;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use sr6_core::behaviour::proxy::Kind;
use sr6_core::behaviour::{Behaviour, Inner, Param, Takes, TABLE};

/// The behaviours the framework measures, named as the SRPerf paper names them
/// (Table I): the head-end scenarios with their `T.` names (modes of `encap seg6`, and
/// plain forwarding as the baseline), and every endpoint behaviour of sr6-core's
/// behaviour table ([`TABLE`], what `sr6 behaviours` lists) by its RFC 8986 keyword.
///
/// Then the SR proxies measured in the direction from the service function
/// ([`PROXY_RETURN`]: End.AD-return, End.AM-return; the table's rows measure the
/// direction to it), the compressed-SID rows ([`CSID_ROWS`]): End, End.X and End.T
/// with the NEXT-C-SID flavour (RFC 9800 §4.1) on pure uSID packets, End with the
/// REPLACE-C-SID flavour (§4.2) on a packet whose SRH holds a C-SID container, and the End.BPF
/// rows ([`END_BPF`]): the End.BPF paper's functions, one eBPF object for both
/// forwarders; the HMAC rows ([`HMAC_ROWS`]): H.Encaps adding an HMAC TLV and End
/// verifying one (RFC 8754 §2.1.2).
///
/// Ordered as [`Behavior::all`] lists them; written to files and read back by
/// [`Behavior::name`] and [`Behavior::parse`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Behavior {
    /// Plain IPv6 forwarding (the baseline).
    Ipv6,
    /// Plain IPv4 forwarding.
    Ipv4,
    /// H.Insert (`encap seg6 mode inline`).
    TInsert,
    /// H.Encaps (`encap seg6 mode encap`).
    TEncaps,
    /// H.Encaps.L2 (`encap seg6 mode l2encap`).
    TEncapsL2,
    /// An endpoint behaviour: a row of the behaviour table. Its SUT configuration, SID
    /// and traffic are derived from the row (`plan.rs`, `traffic/template.rs`).
    Endpoint(Endpoint),
    /// An endpoint behaviour with a compressed-SID flavour (RFC 9800): NEXT-C-SID
    /// (§4.1), sent pure uSID packets (no SRH: the C-SIDs to come are in the
    /// destination address), or REPLACE-C-SID (§4.2), sent a C-SID container in the
    /// SRH.
    Csid(&'static CsidFlavour),
    /// An SR proxy's second part (draft-ietf-spring-sr-service-programming §6): the
    /// packets its service function sends back, received on the proxy's `iif`. The
    /// tester plays the function: its frames arrive on dut0, the proxy's `iif` here.
    ProxyReturn(&'static ProxyReturn),
    /// A function of the mobile experiment ([`MOBILE`]): the six the GTP-U/SRv6 paper
    /// measures side by side (Lee et al. 2019, Table I), on IPv4 user traffic.
    Mobile(&'static MobileFn),
    /// An End.BPF SID running one of the End.BPF paper's functions ([`END_BPF`]).
    Bpf(&'static BpfFn),
    /// A row with an HMAC TLV (RFC 8754 §2.1.2) ([`HMAC_ROWS`]): H.Encaps adding one,
    /// or End verifying one on a device that requires it.
    Hmac(&'static HmacRow),
}

/// An HMAC row: the Lebrun paper's H.Encaps with an HMAC (its §5, measured at 240-290
/// kpps against about 1 Mpps without) and End verifying one (`seg6_require_hmac=1` on
/// the receiving device), with the key `ip sr hmac set KEYID ALG SECRET` gives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct HmacRow {
    /// The row's name in files and reports (`H.Encaps-hmac-sha256`).
    pub name: &'static str,
    /// The algorithm: `sha1` or `sha256` (iproute2's names).
    pub alg: &'static str,
    /// The key id (`hmac KEYID`), one per algorithm.
    pub key_id: u32,
    /// End verifying the tester's HMAC (else H.Encaps computing one).
    pub verify: bool,
}

/// The HMAC rows' secret (RFC 8754 §2.1.2.1: a pre-shared key; any bytes).
pub const HMAC_SECRET: &str = "sr6-perf-hmac-secret";

/// The HMAC rows, in report order: H.Encaps (2 SIDs) adding an HMAC TLV, then End
/// verifying the tester's.
pub static HMAC_ROWS: [HmacRow; 4] = [
    HmacRow { name: "H.Encaps-hmac-sha256", alg: "sha256", key_id: 256, verify: false },
    HmacRow { name: "H.Encaps-hmac-sha1", alg: "sha1", key_id: 1, verify: false },
    HmacRow { name: "End-hmac-sha256", alg: "sha256", key_id: 256, verify: true },
    HmacRow { name: "End-hmac-sha1", alg: "sha1", key_id: 1, verify: true },
];

/// An End.BPF row: a function of the End.BPF paper (Xhonneux et al., CoNEXT'18, §5),
/// written in C, compiled with clang into one object that both forwarders load with
/// the same line (`endpoint obj FILE sec SECTION`). The sources are sr6-bpf's test
/// programs (`crates/bpf/tests/progs`), compiled when the experiment starts
/// (`bpf_objects.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct BpfFn {
    /// The row's name in files and reports (`End.BPF-end`).
    pub name: &'static str,
    /// The source file, one of [`crate::bpf_objects::SOURCES`] (`end.c`).
    pub source: &'static str,
    /// The ELF section of the program.
    pub section: &'static str,
    /// What it does, as the paper names it.
    pub paper: &'static str,
}

impl BpfFn {
    /// The object's file name (`end.o`).
    pub fn object(&self) -> String {
        format!("{}.o", self.source.trim_end_matches(".c"))
    }
}

/// The End.BPF rows, in the order of the paper's Fig. 5: End in eBPF, Tag++ (through
/// `bpf_lwt_seg6_store_bytes`), Add TLV (an 8-byte TLV through
/// `bpf_lwt_seg6_adjust_srh`), End.T through `bpf_lwt_seg6_action` (table 100).
pub static END_BPF: [BpfFn; 4] = [
    BpfFn { name: "End.BPF-end", source: "end.c", section: "end", paper: "End (eBPF)" },
    BpfFn { name: "End.BPF-tag", source: "tag.c", section: "tag_inc", paper: "Tag++" },
    BpfFn { name: "End.BPF-tlv", source: "tlv.c", section: "add_tlv", paper: "Add TLV" },
    BpfFn { name: "End.BPF-end_t", source: "action.c", section: "end_t", paper: "End.T (eBPF)" },
];

/// A function of the mobile user plane measured as the GTP-U/SRv6 paper does: GTP-U
/// encapsulation and decapsulation, SRv6 encapsulation and decapsulation of IPv4, and
/// the RFC 9433 translations H.M.GTP4.D (the paper's T.M.Tmap) and End.M.GTP4.E. The
/// SRv6 packets carry no SRH (one segment, in the destination), as in the paper's
/// Fig. 4, so every frame fits a 1500-byte MTU at the paper's long size too.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct MobileFn {
    /// The row's name in files and reports.
    pub name: &'static str,
    /// What the function does, in the paper's words.
    pub paper: &'static str,
    /// Which function it is.
    pub kind: MobileKind,
}

/// The six functions of [`MOBILE`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MobileKind {
    /// Plain IPv4 in, GTP-U/UDP/IPv4 out (`encap gtp`).
    GtpEncap,
    /// GTP-U/UDP/IPv4 to a local UPF address in, the inner IPv4 packet out
    /// (`encap gtp decap`).
    GtpDecap,
    /// Plain IPv4 in, IPv6 to one SID out (H.Encaps.Red: no SRH).
    SrEncap,
    /// IPv6 to an End.DX4 SID (no SRH) in, the inner IPv4 packet out.
    SrDecap,
    /// GTP-U/UDP/IPv4 in, IPv6 to the SID that carries the session out (RFC 9433
    /// §6.7, no SRH).
    Gtp4D,
    /// IPv6 to an End.M.GTP4.E SID in, GTP-U/UDP/IPv4 out (RFC 9433 §6.6).
    Gtp4E,
}

/// The mobile experiment's functions, in the paper's order (Table I, Fig. 5).
pub static MOBILE: [MobileFn; 6] = [
    MobileFn { name: "GTP-U.Encap", paper: "GTP-U encap.", kind: MobileKind::GtpEncap },
    MobileFn { name: "GTP-U.Decap", paper: "GTP-U decap.", kind: MobileKind::GtpDecap },
    MobileFn { name: "SRv6.Encap", paper: "SRv6 encap.", kind: MobileKind::SrEncap },
    MobileFn { name: "SRv6.Decap", paper: "SRv6 decap.", kind: MobileKind::SrDecap },
    MobileFn { name: "H.M.GTP4.D", paper: "T.M.Tmap", kind: MobileKind::Gtp4D },
    MobileFn { name: "End.M.GTP4.E", paper: "End.M.GTP4.E", kind: MobileKind::Gtp4E },
];

impl MobileFn {
    /// The behaviour-table row it runs, where it is one (GTP-U.Decap, End.DX4,
    /// H.M.GTP4.D, End.M.GTP4.E); the encapsulations are route kinds.
    pub fn row(&self) -> Option<&'static Behaviour> {
        let kw = match self.kind {
            MobileKind::SrDecap => "End.DX4",
            MobileKind::Gtp4D => "H.M.GTP4.D",
            MobileKind::Gtp4E => "End.M.GTP4.E",
            MobileKind::GtpDecap => "GTP-U.Decap",
            MobileKind::GtpEncap | MobileKind::SrEncap => return None,
        };
        sr6_core::behaviour::by_keyword(kw)
    }

    /// Whether the Linux kernel runs it with iproute2 lines (the SRv6 ones; its GTP-U
    /// lives in the `gtp` device, configured with libgtpnl, and it has no RFC 9433
    /// behaviour).
    pub fn in_kernel(&self) -> bool {
        matches!(self.kind, MobileKind::SrEncap | MobileKind::SrDecap)
    }

    /// Whether the tester sends GTP-U (else plain IPv4 or SRv6).
    pub fn sends_gtpu(&self) -> bool {
        matches!(self.kind, MobileKind::GtpDecap | MobileKind::Gtp4D)
    }
}

/// A row measuring an SR proxy in the direction from its service function (the
/// function is emulated by the tester; `plan.rs`, `traffic/template.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ProxyReturn {
    /// The proxy's behaviour-table keyword (`End.AD`).
    pub keyword: &'static str,
    /// The row's name in files and reports (`End.AD-return`).
    pub name: &'static str,
}

impl ProxyReturn {
    /// The proxy's kind (dynamic, masquerading, ...).
    pub fn kind(&self) -> Option<Kind> {
        sr6_core::behaviour::by_keyword(self.keyword).and_then(Kind::of)
    }

    /// Whether the proxy restores headers it learned from the traffic to the function
    /// (End.AD): its cache must be filled before the trials (the tester's warm-up).
    pub fn caches(&self) -> bool {
        self.kind().is_some_and(Kind::caches)
    }
}

/// The proxy rows of the direction from the function, in report order (after the
/// behaviour table's rows, which are the direction to the function).
pub static PROXY_RETURN: [ProxyReturn; 2] = [
    ProxyReturn { keyword: "End.AD", name: "End.AD-return" },
    ProxyReturn { keyword: "End.AM", name: "End.AM-return" },
];

/// A compressed-SID row: a behaviour of the table with the NEXT-C-SID flavour
/// (`flavors next-csid lblen 32 nflen 16`) or the REPLACE-C-SID one (`flavors
/// replace-csid lblen 32 nflen 16`), measured under its own name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CsidFlavour {
    /// The behaviour-table keyword (`End.X`).
    pub keyword: &'static str,
    /// The row's name in files and reports (`End.X-next-csid`).
    pub name: &'static str,
    /// Whether the Linux kernel applies the flavour to this behaviour (it has
    /// NEXT-C-SID on End and End.X; on End.T it accepts `flavors` and ignores them; it
    /// has no REPLACE-C-SID).
    pub in_kernel: bool,
    /// REPLACE-C-SID (an sr6 extension of the kernel's grammar) rather than NEXT-C-SID.
    pub replace: bool,
}

/// The compressed-SID rows, in report order: NEXT-C-SID, then REPLACE-C-SID (End, the
/// row the kernel's NEXT-C-SID End stands beside).
pub static CSID_ROWS: [CsidFlavour; 4] = [
    CsidFlavour { keyword: "End", name: "End-next-csid", in_kernel: true, replace: false },
    CsidFlavour { keyword: "End.X", name: "End.X-next-csid", in_kernel: true, replace: false },
    CsidFlavour { keyword: "End.T", name: "End.T-next-csid", in_kernel: false, replace: false },
    CsidFlavour { keyword: "End", name: "End-replace-csid", in_kernel: false, replace: true },
];

/// A row of sr6-core's behaviour table ([`TABLE`]), compared and hashed by its keyword
/// and ordered as the table is. Made only from the table's rows.
/// A row whose line names an eBPF object (End.BPF's `endpoint obj FILE`): measured
/// by the [`END_BPF`] rows, one per program, not as a row of the table.
pub fn needs_object(r: &Behaviour) -> bool {
    r.required.contains(&Param::Endpoint)
}

#[derive(Clone, Copy)]
pub struct Endpoint(&'static Behaviour);

impl Endpoint {
    /// The row of `keyword` (case-sensitive, as the table's lookup is).
    pub fn by_keyword(keyword: &str) -> Option<Endpoint> {
        sr6_core::behaviour::by_keyword(keyword).map(Endpoint)
    }

    /// Every row, in table order, but the GTP-U translations of RFC 9433 (H.M.GTP4.D
    /// and End.M.GTP4.E are measured as functions of the mobile experiment,
    /// [`MOBILE`]; the GTP-U over IPv6 ones not yet) and End.BPF ([`needs_object`]).
    pub fn all() -> impl Iterator<Item = Endpoint> {
        TABLE.iter().copied().filter(|r| !sr6_core::behaviour::mobile::is_gtp(r) && !needs_object(r)).map(Endpoint)
    }

    /// The row.
    pub fn row(self) -> &'static Behaviour {
        self.0
    }

    /// The iproute2 keyword (`End.DX4`).
    pub fn keyword(self) -> &'static str {
        self.0.keyword
    }

    /// The row's position in [`TABLE`].
    pub fn index(self) -> usize {
        TABLE.iter().position(|r| r.keyword == self.0.keyword).expect("an Endpoint is a row of the table")
    }
}

impl PartialEq for Endpoint {
    fn eq(&self, other: &Self) -> bool {
        self.0.keyword == other.0.keyword
    }
}

impl Eq for Endpoint {}

impl Hash for Endpoint {
    fn hash<H: Hasher>(&self, h: &mut H) {
        self.0.keyword.hash(h);
    }
}

impl PartialOrd for Endpoint {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Endpoint {
    fn cmp(&self, other: &Self) -> Ordering {
        self.index().cmp(&other.index())
    }
}

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0.keyword)
    }
}

/// The head-end scenarios, in their order.
const TRANSIT: [Behavior; 5] =
    [Behavior::Ipv6, Behavior::Ipv4, Behavior::TInsert, Behavior::TEncaps, Behavior::TEncapsL2];

static ALL: LazyLock<Vec<Behavior>> = LazyLock::new(|| {
    TRANSIT
        .into_iter()
        .chain(Endpoint::all().map(Behavior::Endpoint))
        .chain(PROXY_RETURN.iter().map(Behavior::ProxyReturn))
        .chain(CSID_ROWS.iter().map(Behavior::Csid))
        .chain(MOBILE.iter().map(Behavior::Mobile))
        .chain(END_BPF.iter().map(Behavior::Bpf))
        .chain(HMAC_ROWS.iter().map(Behavior::Hmac))
        .collect()
});

impl Behavior {
    /// Every behaviour, in the order of reports: the head-end scenarios, every row of
    /// the behaviour table in table order, the [`PROXY_RETURN`] rows, the
    /// [`CSID_ROWS`] rows, the mobile functions ([`MOBILE`]), the End.BPF rows
    /// ([`END_BPF`]), then the HMAC rows ([`HMAC_ROWS`]).
    pub fn all() -> &'static [Behavior] {
        &ALL
    }

    /// The name used in files, on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Behavior::Ipv6 => "ipv6",
            Behavior::Ipv4 => "ipv4",
            Behavior::TInsert => "T.Insert",
            Behavior::TEncaps => "T.Encaps",
            Behavior::TEncapsL2 => "T.Encaps.L2",
            Behavior::Endpoint(e) => e.keyword(),
            Behavior::Csid(c) => c.name,
            Behavior::ProxyReturn(r) => r.name,
            Behavior::Mobile(m) => m.name,
            Behavior::Bpf(f) => f.name,
            Behavior::Hmac(h) => h.name,
        }
    }

    /// Parses a name (case-insensitive; `H.Encaps`-style RFC names accepted too).
    pub fn parse(s: &str) -> Option<Behavior> {
        let l = s.to_ascii_lowercase();
        let alias = match l.as_str() {
            "h.insert" => "t.insert",
            "h.encaps" => "t.encaps",
            "h.encaps.l2" => "t.encaps.l2",
            "ipv6-forward" => "ipv6",
            "ipv4-forward" => "ipv4",
            x => x,
        };
        Behavior::all().iter().copied().find(|b| b.name().eq_ignore_ascii_case(alias))
    }

    /// The behaviour-table row of an endpoint behaviour, flavoured or not, or of the
    /// proxy a [`ProxyReturn`] row measures (`None`: a head-end scenario).
    pub fn endpoint(self) -> Option<&'static Behaviour> {
        match self {
            Behavior::Endpoint(e) => Some(e.row()),
            Behavior::Csid(c) => sr6_core::behaviour::by_keyword(c.keyword),
            Behavior::ProxyReturn(r) => sr6_core::behaviour::by_keyword(r.keyword),
            Behavior::Mobile(m) => m.row(),
            Behavior::Bpf(_) => sr6_core::behaviour::by_keyword("End.BPF"),
            Behavior::Hmac(h) if h.verify => sr6_core::behaviour::by_keyword("End"),
            _ => None,
        }
    }

    /// The function of an End.BPF row (`None`: any other behaviour).
    pub fn bpf(self) -> Option<&'static BpfFn> {
        match self {
            Behavior::Bpf(f) => Some(f),
            _ => None,
        }
    }

    /// The HMAC row (`None`: any other behaviour).
    pub fn hmac(self) -> Option<&'static HmacRow> {
        match self {
            Behavior::Hmac(h) => Some(h),
            _ => None,
        }
    }

    /// The function of a mobile row (`None`: any other behaviour).
    pub fn mobile(self) -> Option<&'static MobileFn> {
        match self {
            Behavior::Mobile(m) => Some(m),
            _ => None,
        }
    }

    /// The proxy of a row measuring the direction from its function (`None`: any
    /// other behaviour).
    pub fn proxy_return(self) -> Option<&'static ProxyReturn> {
        match self {
            Behavior::ProxyReturn(r) => Some(r),
            _ => None,
        }
    }

    /// Whether this row measures an SR proxy, in either direction.
    pub fn is_proxy(self) -> bool {
        self.endpoint().is_some_and(|r| Kind::of(r).is_some())
    }

    /// Whether the tester must fill the SUT's state before the trials: a dynamic
    /// proxy's cache, from a packet of the direction to the function (`tester.rs`).
    pub fn needs_warm_up(self) -> bool {
        self.proxy_return().is_some_and(ProxyReturn::caches)
    }

    /// The flavour of a compressed-SID row (`None`: any other behaviour).
    pub fn csid(self) -> Option<&'static CsidFlavour> {
        match self {
            Behavior::Csid(c) => Some(c),
            _ => None,
        }
    }

    /// Whether this is a head-end scenario (plain packets to a destination the SUT
    /// forwards or steers), not an endpoint behaviour (packets to the SUT's SID). A
    /// mobile function is neither: its traffic has a shape of its own.
    pub fn is_transit(self) -> bool {
        self.endpoint().is_none() && self.mobile().is_none()
    }

    /// What traffic an endpoint behaviour takes (`None`: a head-end scenario or a
    /// mobile function).
    pub fn takes(self) -> Option<Takes> {
        if self.mobile().is_some() {
            return None;
        }
        self.endpoint().map(|r| r.takes)
    }

    /// Whether its traffic is mixed: IPv6 on even streams, IPv4 on odd ones (a
    /// behaviour decapsulating either, End.DT46).
    pub fn mixed(self) -> bool {
        self.takes() == Some(Takes::Inner(Inner::Ip))
    }

    /// How many streams its traffic has: two for [`mixed`](Self::mixed) traffic (0 and
    /// 1), else one (0).
    pub fn streams(self) -> u16 {
        if self.mixed() {
            2
        } else {
            1
        }
    }

    /// Whether the innermost packet of `stream` is IPv4 (else IPv6).
    pub fn inner_ipv4(self, stream: u16) -> bool {
        if self.mobile().is_some() {
            // The paper's user traffic is IPv4 (Fig. 4).
            return true;
        }
        match self.takes() {
            None => self == Behavior::Ipv4,
            Some(Takes::Inner(Inner::Ipv4)) => true,
            Some(Takes::Inner(Inner::Ip)) => stream & 1 == 1,
            // A segment for an SR proxy in front of an IPv4 function (End.EAD4).
            Some(Takes::Segment) => self.endpoint().is_some_and(|r| r.required.contains(&Param::Nh4)),
            Some(_) => false,
        }
    }

    /// Position in [`Behavior::all`] (the measured rows come first in the table, so a
    /// row's index is its position among them).
    fn rank(self) -> usize {
        fn rows() -> usize {
            Endpoint::all().count()
        }
        match self {
            Behavior::Endpoint(e) => TRANSIT.len() + e.index(),
            Behavior::ProxyReturn(r) => {
                TRANSIT.len() + rows() + PROXY_RETURN.iter().position(|x| x == r).unwrap_or(PROXY_RETURN.len())
            }
            Behavior::Csid(c) => {
                let i = CSID_ROWS.iter().position(|x| x == c).unwrap_or(CSID_ROWS.len());
                TRANSIT.len() + rows() + PROXY_RETURN.len() + i
            }
            Behavior::Mobile(m) => {
                let i = MOBILE.iter().position(|x| x == m).unwrap_or(MOBILE.len());
                TRANSIT.len() + rows() + PROXY_RETURN.len() + CSID_ROWS.len() + i
            }
            Behavior::Bpf(f) => {
                let i = END_BPF.iter().position(|x| x == f).unwrap_or(END_BPF.len());
                TRANSIT.len() + rows() + PROXY_RETURN.len() + CSID_ROWS.len() + MOBILE.len() + i
            }
            Behavior::Hmac(h) => {
                let i = HMAC_ROWS.iter().position(|x| x == h).unwrap_or(HMAC_ROWS.len());
                TRANSIT.len() + rows() + PROXY_RETURN.len() + CSID_ROWS.len() + MOBILE.len() + END_BPF.len() + i
            }
            t => TRANSIT.iter().position(|x| *x == t).expect("every other variant is a head-end scenario"),
        }
    }
}

impl PartialOrd for Behavior {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Behavior {
    /// The order of [`Behavior::all`].
    fn cmp(&self, other: &Self) -> Ordering {
        self.rank().cmp(&other.rank())
    }
}

impl Serialize for Behavior {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for Behavior {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Behavior, D::Error> {
        let s = String::deserialize(d)?;
        Behavior::parse(&s).ok_or_else(|| serde::de::Error::custom(format!("unknown behaviour `{s}`")))
    }
}

/// One trial: traffic offered at one rate for a fixed duration.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Trial {
    /// The rate the generator was asked for (packets/s).
    pub offered_pps: f64,
    /// Packets the generator sent (may fall short of the offered rate; see `tx_dropped`).
    pub sent: u64,
    /// Packets the generator could not send (its ring was full): never counted as the
    /// SUT's loss.
    pub tx_dropped: u64,
    /// Packets received back from the SUT (of this trial's stream).
    pub received: u64,
    /// Seconds the trial sent for.
    pub duration_s: f64,
    /// `received / duration_s`.
    pub delivered_pps: f64,
    /// Delivery ratio `received / sent` (1.0 when nothing was sent).
    pub delivery_ratio: f64,
    /// Of `sent - received`: frames the SUT's receiving link (dut0) dropped because
    /// its ring was full — the SUT did not take them in time (0 where not measured).
    #[serde(default)]
    pub sut_rx_dropped: u64,
    /// Of `sent - received`: frames the tester's receiving link dropped (tg1's ring
    /// full: dut1's transmit drops, and tg1's receive drops) — the tester's loss,
    /// not the SUT's (0 where not measured).
    #[serde(default)]
    pub tester_rx_dropped: u64,
    /// Seconds the SUT's CPU (`cpus.sut`) was busy from the trial's start to its end
    /// (`/proc/stat`: not idle, waiting for I/O or stolen by the hypervisor): the work
    /// the trial cost the SUT, whatever bounded the rate (0 where not measured).
    #[serde(default)]
    pub sut_cpu_s: f64,
    /// Seconds the hypervisor took from the SUT's CPU during the trial (`/proc/stat`'s
    /// steal, in 10 ms ticks; 0 on bare metal or where not measured): time in which
    /// the SUT could not run, so a loss with steal beside it is the host's, not the
    /// SUT's.
    #[serde(default)]
    pub sut_steal_s: f64,
    /// The same for the tester's CPU (`cpus.tester`): a generator that fell short, or
    /// a receiving link that dropped, with steal beside it was held by the host.
    #[serde(default)]
    pub tester_steal_s: f64,
}

impl Trial {
    /// The SUT's CPU time per packet forwarded, in ns (`None` where not measured or
    /// nothing came back).
    pub fn sut_ns_per_packet(&self) -> Option<f64> {
        (self.sut_cpu_s > 0.0 && self.received > 0).then(|| self.sut_cpu_s * 1e9 / self.received as f64)
    }

    /// The share of the trial's duration the SUT's CPU was busy, at most 1 (`None`
    /// where not measured).
    pub fn sut_cpu_busy(&self) -> Option<f64> {
        (self.sut_cpu_s > 0.0 && self.duration_s > 0.0).then(|| (self.sut_cpu_s / self.duration_s).min(1.0))
    }
}

/// The result of one NDR/PDR search (one repetition).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchResult {
    /// Highest rate found with no loss (delivery ratio 1.0), packets/s.
    pub ndr_pps: f64,
    /// Highest rate found with a loss ratio <= the threshold, packets/s.
    pub pdr_pps: f64,
    /// Every trial, in the order run.
    pub trials: Vec<Trial>,
    /// What stopped the NDR search from going higher ([`Limit::Sut`] unless the
    /// tester did: then `ndr_pps` is only a lower bound of the SUT's).
    #[serde(default)]
    pub ndr_limit: Limit,
    /// The same for the PDR.
    #[serde(default)]
    pub pdr_limit: Limit,
}

impl SearchResult {
    /// Whether the PDR was bounded by the tester (its ceiling, or a rate it could not
    /// produce), not by the SUT's loss: a lower bound.
    pub fn pdr_tester_bound(&self) -> bool {
        matches!(self.pdr_limit, Limit::Generator | Limit::MaxRate | Limit::TesterReceive)
    }
}

/// What bounded a target's bracket from above when the search ended.
/// Serialized in snake case (`sut`, `generator`, `max_rate`, `not_found`,
/// `tester_receive`); results written before it was recorded read as `sut`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Limit {
    /// The SUT: `hi` is the lowest rate measured to fail the criterion.
    #[default]
    Sut,
    /// The generator: `hi` is the lowest rate it could not produce; `lo` is only a lower
    /// bound of the SUT's capacity.
    Generator,
    /// `max_pps` itself satisfied the criterion (`lo = hi = max_pps`): the generator's
    /// configured ceiling was the limit.
    MaxRate,
    /// No rate satisfied the criterion down to the absolute floor: `lo = 0`.
    NotFound,
    /// The tester's receive side: at `hi` the trial failed the criterion only through
    /// the frames the tester's receiving link dropped (`tester_rx_dropped`); without
    /// them it passed. `lo` is only a lower bound of the SUT's capacity.
    TesterReceive,
}

/// Mean, standard deviation, coefficient of variation and the 95% confidence interval
/// of the mean (Student's t) over repetitions — the paper's Table I.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub n: usize,
    pub mean: f64,
    /// Sample standard deviation (n - 1).
    pub std: f64,
    /// `std / mean`, as a fraction (0.01 = 1%).
    pub cv: f64,
    /// Half-width of the 95% confidence interval of the mean.
    pub ci95: f64,
}

/// One-way latency measured at a fraction of the NDR (timestamps written into each
/// packet's payload by the generator and read at the receiver), microseconds: the
/// distribution's summary, read from the receiver's histogram (`traffic/latency.rs`;
/// quartiles and the standard deviation within ±1.6%, min, max and mean exact).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Latency {
    pub rate_pps: f64,
    pub samples: u64,
    pub min_us: f64,
    pub avg_us: f64,
    pub p50_us: f64,
    pub p99_us: f64,
    pub max_us: f64,
    /// First and third quartiles (0 in results written before they were recorded).
    #[serde(default)]
    pub p25_us: f64,
    #[serde(default)]
    pub p75_us: f64,
    /// Standard deviation (the latency's deviation from its mean: the GTP-U/SRv6
    /// paper's Fig. 6).
    #[serde(default)]
    pub std_us: f64,
}

/// Everything measured for one forwarder and one behaviour.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BehaviorResult {
    /// Driver name: `linux`, `sr6`, ...
    pub forwarder: String,
    pub behavior: Behavior,
    /// Frame size on the wire towards the SUT (bytes, without FCS).
    pub frame_bytes: usize,
    /// Mean NDR over the repetitions (packets/s).
    pub ndr_pps: f64,
    /// Mean PDR over the repetitions (packets/s).
    pub pdr_pps: f64,
    /// The PDR's loss threshold, as a fraction (0.005 = 0.5%).
    pub pdr_loss_threshold: f64,
    pub ndr: Summary,
    pub pdr: Summary,
    /// One search per repetition.
    pub repetitions: Vec<SearchResult>,
    pub latency: Option<Latency>,
    /// The forwarding rate at maximum offered load (absent where not measured, and in
    /// results written before it was).
    #[serde(default)]
    pub max_load: Option<MaxLoad>,
}

/// The forwarding rate at maximum offered load (RFC 2285 §3.6.2, "FRMOL"; RFC 2889
/// §5.3): after each repetition's search, one trial at the highest rate the search may
/// offer (the generator's ceiling, or the experiment's `max_pps`). Where the SUT was
/// *saturated* — it lost more than the PDR threshold of what the tester sent, and not at
/// the tester's own receiving link — the rate it forwarded is what it can do under
/// overload, measured even when its PDR search was bounded by the tester: an SUT that
/// drops at its own receiving link leaves the tester less to receive, so the tester can
/// offer more than the SUT forwards.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MaxLoad {
    /// One trial per repetition, in order.
    pub trials: Vec<Trial>,
    /// Packets/s the tester actually sent (`sent / duration_s`), over the trials.
    pub offered: Summary,
    /// Packets/s that came back (`received / duration_s`), over the trials.
    pub forwarded: Summary,
    /// How many of the trials found the SUT saturated ([`MaxLoad::sut_saturated`]).
    pub saturated: usize,
}

impl MaxLoad {
    /// Whether `t` found the SUT saturated: it lost more than `threshold` (a fraction of
    /// what was sent), and the tester's receiving link dropped at most a tenth of the
    /// lost frames (else the loss may be the tester's).
    pub fn sut_saturated(t: &Trial, threshold: f64) -> bool {
        let lost = t.sent.saturating_sub(t.received);
        t.sent > 0 && lost as f64 > threshold * t.sent as f64 && t.tester_rx_dropped.saturating_mul(10) <= lost
    }
}

impl BehaviorResult {
    /// Repetitions whose PDR the tester bounded, not the SUT: with any, `pdr_pps` is a
    /// lower bound of the SUT's.
    pub fn tester_bound_repetitions(&self) -> usize {
        self.repetitions.iter().filter(|x| x.pdr_tester_bound()).count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trial(sent: u64, received: u64, sut: u64, tester: u64) -> Trial {
        Trial {
            offered_pps: 2e6,
            sent,
            tx_dropped: 0,
            received,
            duration_s: 1.0,
            delivered_pps: received as f64,
            delivery_ratio: received as f64 / sent.max(1) as f64,
            sut_rx_dropped: sut,
            tester_rx_dropped: tester,
            sut_cpu_s: 0.0,
            sut_steal_s: 0.0,
            tester_steal_s: 0.0,
        }
    }

    #[test]
    fn a_saturated_sut_lost_more_than_the_threshold_and_not_at_the_tester() {
        // Offered 1.5 M, forwarded 1.0 M, the loss at the SUT's link: saturated.
        assert!(MaxLoad::sut_saturated(&trial(1_500_000, 1_000_000, 499_000, 1_000), 0.005));
        // Loss within the threshold: the SUT kept up; what it forwarded is a bound.
        assert!(!MaxLoad::sut_saturated(&trial(1_000_000, 996_000, 4_000, 0), 0.005));
        assert!(!MaxLoad::sut_saturated(&trial(1_000_000, 1_000_000, 0, 0), 0.005));
        // Just over it.
        assert!(MaxLoad::sut_saturated(&trial(1_000_000, 994_000, 6_000, 0), 0.005));
        // Most of the loss at the tester's link: not the SUT's to answer for.
        assert!(!MaxLoad::sut_saturated(&trial(1_500_000, 1_000_000, 100_000, 400_000), 0.005));
        // A tenth at the tester's is still the SUT's loss.
        assert!(MaxLoad::sut_saturated(&trial(1_500_000, 1_000_000, 450_000, 50_000), 0.005));
        // Nothing sent, or more received than sent: never saturated.
        assert!(!MaxLoad::sut_saturated(&trial(0, 0, 0, 0), 0.005));
        assert!(!MaxLoad::sut_saturated(&trial(100, 120, 0, 0), 0.005));
    }

    #[test]
    fn results_without_max_load_read_back() {
        let r = BehaviorResult {
            forwarder: "sr6".into(),
            behavior: Behavior::parse("End").unwrap(),
            frame_bytes: 158,
            ndr_pps: 1.0,
            pdr_pps: 2.0,
            pdr_loss_threshold: 0.005,
            ndr: Summary { n: 1, mean: 1.0, std: 0.0, cv: 0.0, ci95: 0.0 },
            pdr: Summary { n: 1, mean: 2.0, std: 0.0, cv: 0.0, ci95: 0.0 },
            repetitions: Vec::new(),
            latency: None,
            max_load: None,
        };
        let mut v = serde_json::to_value(&r).unwrap();
        v.as_object_mut().unwrap().remove("max_load");
        let back: BehaviorResult = serde_json::from_value(v).unwrap();
        assert_eq!(back, r);
    }

    #[test]
    fn every_table_row_is_a_behaviour() {
        let all = Behavior::all();
        // The GTP-U translations are not measured yet.
        let rows: Vec<_> =
            TABLE.iter().filter(|r| !sr6_core::behaviour::mobile::is_gtp(r) && !needs_object(r)).collect();
        for row in &rows {
            let b = Behavior::parse(row.keyword).unwrap_or_else(|| panic!("{} is missing", row.keyword));
            assert!(all.contains(&b), "{}", row.keyword);
            assert_eq!(b.endpoint().map(|r| r.keyword), Some(row.keyword));
        }
        let extra = PROXY_RETURN.len() + CSID_ROWS.len() + MOBILE.len() + END_BPF.len() + HMAC_ROWS.len();
        assert_eq!(all.len(), TRANSIT.len() + rows.len() + extra);
        for f in &END_BPF {
            let b = Behavior::parse(f.name).unwrap();
            assert_eq!((b.bpf(), b.endpoint().map(|r| r.keyword)), (Some(f), Some("End.BPF")));
            assert_eq!(b.takes(), Some(Takes::Segment));
        }
        for (i, b) in all.iter().enumerate() {
            assert_eq!(b.rank(), i, "{}", b.name());
            let hmac_encaps = b.hmac().is_some_and(|h| !h.verify);
            assert_eq!(b.is_transit(), i < TRANSIT.len() || hmac_encaps, "{}", b.name());
        }
    }

    #[test]
    fn hmac_rows_are_h_encaps_and_end() {
        let names: Vec<&str> = Behavior::all().iter().filter(|b| b.hmac().is_some()).map(|b| b.name()).collect();
        assert_eq!(names, ["H.Encaps-hmac-sha256", "H.Encaps-hmac-sha1", "End-hmac-sha256", "End-hmac-sha1"]);
        for h in &HMAC_ROWS {
            let b = Behavior::parse(h.name).unwrap();
            assert_eq!(b, Behavior::Hmac(h));
            if h.verify {
                assert_eq!(b.endpoint().map(|r| r.keyword), Some("End"));
                assert_eq!(b.takes(), Some(Takes::Segment));
            } else {
                assert!(b.is_transit() && b.takes().is_none());
            }
            assert!(b.streams() == 1 && !b.inner_ipv4(0));
        }
        // One key per algorithm.
        for a in &HMAC_ROWS {
            for b in &HMAC_ROWS {
                assert_eq!(a.alg == b.alg, a.key_id == b.key_id);
            }
        }
    }

    #[test]
    fn csid_rows_are_flavoured_endpoints() {
        let names: Vec<&str> = Behavior::all().iter().filter(|b| b.csid().is_some()).map(|b| b.name()).collect();
        assert_eq!(names, ["End-next-csid", "End.X-next-csid", "End.T-next-csid", "End-replace-csid"]);
        for c in &CSID_ROWS {
            let b = Behavior::parse(c.name).unwrap();
            assert_eq!(b, Behavior::Csid(c));
            // The row it flavours: that row's traffic shape, and the table allows the flavour.
            let row = b.endpoint().unwrap();
            assert_eq!(row.keyword, c.keyword);
            let flavor = if c.replace {
                sr6_core::behaviour::Flavor::ReplaceCsid
            } else {
                sr6_core::behaviour::Flavor::NextCsid
            };
            assert!(row.flavors.contains(&flavor), "{}", c.name);
            assert_eq!(b.takes(), Some(Takes::Segment));
            assert!(!b.is_transit() && b.streams() == 1 && !b.inner_ipv4(0));
            assert_ne!(b, Behavior::parse(c.keyword).unwrap());
        }
        assert_eq!(Behavior::parse("end.x-NEXT-csid").unwrap().name(), "End.X-next-csid");
        let last = *Behavior::all().iter().rfind(|b| b.csid().is_some()).unwrap();
        assert_eq!(last.name(), "End-replace-csid");
        assert!(Behavior::parse("End.DT46").unwrap() < Behavior::parse("End-next-csid").unwrap());
    }

    #[test]
    fn proxy_return_rows_follow_the_part_1_rows() {
        let b = |n: &str| Behavior::parse(n).unwrap();
        let names: Vec<&str> =
            Behavior::all().iter().filter(|b| b.proxy_return().is_some()).map(|b| b.name()).collect();
        assert_eq!(names, ["End.AD-return", "End.AM-return"]);
        for r in &PROXY_RETURN {
            let ret = b(r.name);
            assert_eq!(ret, Behavior::ProxyReturn(r));
            // The proxy it measures, a row of the table (the direction to the function).
            let part1 = b(r.keyword);
            assert_eq!(ret.endpoint().map(|x| x.keyword), Some(r.keyword));
            assert!(ret.is_proxy() && part1.is_proxy() && !ret.is_transit());
            assert!(part1 < ret && ret < b("End-next-csid"), "{}", r.name);
            assert_ne!(ret, part1);
            assert!(!ret.inner_ipv4(0) && ret.streams() == 1);
        }
        // Every proxy row of the table comes before the first return row.
        let last_table = *Behavior::all().iter().filter(|b| matches!(b, Behavior::Endpoint(_))).max().unwrap();
        assert!(last_table < b("End.AD-return"));
        assert_eq!(b("end.ad-RETURN").name(), "End.AD-return");
        // Only the dynamic proxy's cache needs the tester's warm-up.
        assert!(b("End.AD-return").needs_warm_up());
        assert!(!b("End.AM-return").needs_warm_up() && !b("End.AD").needs_warm_up());
        for n in ["ipv6", "End", "End.DX6", "End-next-csid"] {
            assert!(!b(n).is_proxy() && b(n).proxy_return().is_none(), "{n}");
        }
        for n in ["End.AS", "End.AD", "End.EAD4", "End.EAD6", "End.AM"] {
            assert!(b(n).is_proxy() && b(n).proxy_return().is_none(), "{n}");
        }
    }

    #[test]
    fn names_round_trip() {
        for &b in Behavior::all() {
            assert_eq!(Behavior::parse(b.name()), Some(b), "{}", b.name());
            assert_eq!(Behavior::parse(&b.name().to_ascii_uppercase()), Some(b), "{}", b.name());
            let json = serde_json::to_string(&b).unwrap();
            assert_eq!(json, format!("\"{}\"", b.name()));
            assert_eq!(serde_json::from_str::<Behavior>(&json).unwrap(), b);
            let yaml: Behavior = serde_yaml::from_str(b.name()).unwrap();
            assert_eq!(yaml, b);
        }
        // The names of results files.
        for (name, b) in
            [("ipv6", Behavior::Ipv6), ("T.Encaps", Behavior::TEncaps), ("T.Encaps.L2", Behavior::TEncapsL2)]
        {
            assert_eq!(serde_json::to_string(&b).unwrap(), format!("\"{name}\""));
        }
        assert_eq!(serde_json::to_string(&Behavior::parse("end.dx4").unwrap()).unwrap(), "\"End.DX4\"");
        assert_eq!(Behavior::parse("H.Encaps"), Some(Behavior::TEncaps));
        assert_eq!(Behavior::parse("ipv4-forward"), Some(Behavior::Ipv4));
        assert_eq!(Behavior::parse("End.Q"), None);
        assert!(serde_json::from_str::<Behavior>("\"End.Q\"").unwrap_err().to_string().contains("End.Q"));
    }

    #[test]
    fn order_eq_and_hash_follow_the_table() {
        use std::collections::HashSet;
        let mut sorted = Behavior::all().to_vec();
        sorted.reverse();
        sorted.sort();
        assert_eq!(sorted, Behavior::all());
        let end = Behavior::parse("End").unwrap();
        assert!(Behavior::TEncapsL2 < end && Behavior::Ipv6 < Behavior::Ipv4);
        assert!(end < Behavior::parse("End.DT46").unwrap());
        let set: HashSet<Behavior> = Behavior::all().iter().chain(Behavior::all()).copied().collect();
        assert_eq!(set.len(), Behavior::all().len());
        assert_eq!(Endpoint::by_keyword("End.X"), Endpoint::by_keyword("End.X"));
        assert_ne!(Endpoint::by_keyword("End.X"), Endpoint::by_keyword("End.T"));
        assert_eq!(format!("{:?}", Behavior::parse("End.B6").unwrap()), "Endpoint(End.B6)");
    }

    #[test]
    fn mobile_rows_then_the_end_bpf_rows() {
        let b = |n: &str| Behavior::parse(n).unwrap();
        let names: Vec<&str> = Behavior::all().iter().filter(|b| b.mobile().is_some()).map(|b| b.name()).collect();
        assert_eq!(names, ["GTP-U.Encap", "GTP-U.Decap", "SRv6.Encap", "SRv6.Decap", "H.M.GTP4.D", "End.M.GTP4.E"]);
        assert_eq!(Behavior::all().last().map(|b| b.name()), Some("End-hmac-sha1"));
        assert!(b("End.BPF-end_t") < b("H.Encaps-hmac-sha256"));
        assert!(b("End.T-next-csid") < b("GTP-U.Encap") && b("End.M.GTP4.E") < b("End.BPF-end"));
        let bpf: Vec<&str> = Behavior::all().iter().filter(|b| b.bpf().is_some()).map(|b| b.name()).collect();
        assert_eq!(bpf, ["End.BPF-end", "End.BPF-tag", "End.BPF-tlv", "End.BPF-end_t"]);
        assert_eq!(END_BPF[3].object(), "action.o");
        // The translations are the table's rows, named by their RFC 9433 keyword.
        assert_eq!(b("h.m.gtp4.d").endpoint().map(|r| r.keyword), Some("H.M.GTP4.D"));
        assert_eq!(b("End.M.GTP4.E").endpoint().map(|r| r.keyword), Some("End.M.GTP4.E"));
        assert_eq!(b("SRv6.Decap").endpoint().map(|r| r.keyword), Some("End.DX4"));
        assert_ne!(b("SRv6.Decap"), b("End.DX4"));
        for m in &MOBILE {
            let x = b(m.name);
            assert!(!x.is_transit() && x.takes().is_none() && x.streams() == 1 && x.inner_ipv4(0), "{}", m.name);
            assert!(!x.is_proxy() && !x.needs_warm_up(), "{}", m.name);
        }
        let kernel: Vec<&str> = MOBILE.iter().filter(|m| m.in_kernel()).map(|m| m.name).collect();
        assert_eq!(kernel, ["SRv6.Encap", "SRv6.Decap"]);
    }

    #[test]
    fn traffic_shape_follows_takes() {
        let b = |n: &str| Behavior::parse(n).unwrap();
        assert!(b("End.DT46").mixed() && b("End.DT46").streams() == 2);
        assert!(!b("End.DT46").inner_ipv4(0) && b("End.DT46").inner_ipv4(1));
        assert!(b("End.DX4").inner_ipv4(0) && b("End.DT4").inner_ipv4(0) && Behavior::Ipv4.inner_ipv4(0));
        for n in ["ipv6", "T.Insert", "End", "End.B6.Encaps", "End.DX6", "End.DT6", "End.DX2"] {
            assert!(!b(n).inner_ipv4(0) && !b(n).inner_ipv4(1) && b(n).streams() == 1, "{n}");
        }
        assert_eq!(b("End.B6").takes(), Some(Takes::Segment));
        assert_eq!(Behavior::TEncaps.takes(), None);
    }
}
