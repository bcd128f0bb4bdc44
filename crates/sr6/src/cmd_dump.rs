//! `sr6 dump`: one line per frame with the SRH decoded (the thesis's SR-tcpdump), and,
//! given a locator plan (`--csid` or the NEXT-C-SID and REPLACE-C-SID SIDs of
//! `--config`), the C-SIDs of each compressed address (RFC 9800 §4.1, §4.2).

use std::fmt::Write as _;
use std::io::Write as _;
use std::net::Ipv6Addr;
use std::path::Path;

use anyhow::{Context, Result};
use sr6_io::pcap::PcapFile;

use crate::icmp_names;
use sr6_core::behaviour::next_csid::split;
use sr6_core::spec::{CsidLengths, Prefix, RouteKind};
use sr6_wire::icmpv6::{DST_UNREACH, PARAM_PROBLEM, PKT_TOO_BIG, TIME_EXCEEDED};
use sr6_wire::{
    walk_chain, EthernetFrame, HmacTlv, Icmpv6Packet, Ipv4Packet, Ipv6Packet, SrhPacket, UdpPacket, ETHERTYPE_ARP,
    ETHERTYPE_IPV4, ETHERTYPE_IPV6, IPPROTO_ETHERNET, IPPROTO_ICMP, IPPROTO_ICMPV6, IPPROTO_IPV4, IPPROTO_IPV6,
    IPPROTO_NONE, IPPROTO_UDP, TLV_HMAC,
};

/// How to split addresses into C-SID containers: the blocks of the NEXT-C-SID and
/// REPLACE-C-SID SIDs (from a configuration), longest first, else one pair of lengths
/// for every address.
#[derive(Debug, Default)]
pub struct CsidPlan {
    blocks: Vec<(u128, CsidLengths)>,
    all: Option<CsidLengths>,
}

impl CsidPlan {
    /// `--csid LBLEN,NFLEN` (Linux's length rules) and the compressed-SID SIDs of `config`.
    pub fn new(csid: Option<&str>, config: Option<&Path>) -> Result<CsidPlan> {
        let mut plan = CsidPlan::default();
        if let Some(s) = csid {
            let bad = || anyhow::anyhow!("--csid {s}: expected LBLEN,NFLEN (bits, e.g. 32,16)");
            let (l, n) = s.split_once(',').ok_or_else(bad)?;
            let (l, n) = (l.trim().parse::<u8>().map_err(|_| bad())?, n.trim().parse::<u8>().map_err(|_| bad())?);
            plan.all = Some(CsidLengths::new(l, n).map_err(|e| anyhow::anyhow!("--csid {s}: {e}"))?);
        }
        if let Some(path) = config {
            let spec = sr6_config::parse_file(path).map_err(|e| anyhow::anyhow!("{e}"))?;
            for r in &spec.routes {
                if let (RouteKind::Seg6Local { action, .. }, Prefix::V6(a, _)) = (&r.kind, &r.prefix) {
                    // A REPLACE-C-SID destination is a block, the active C-SID and an
                    // argument whose last bits are the index (RFC 9800 §4.2): shown alike.
                    if let Some(c) = action.flavors.next_csid.or(action.flavors.replace_csid) {
                        let block = u128::from(*a) & !(u128::MAX >> c.lblen);
                        plan.blocks.push((block, c));
                    }
                }
            }
            plan.blocks.sort_by_key(|(_, c)| std::cmp::Reverse(c.lblen));
        }
        Ok(plan)
    }

    fn lengths(&self, a: u128) -> Option<CsidLengths> {
        let by_block = self.blocks.iter().find(|(b, c)| a & !(u128::MAX >> c.lblen) == *b);
        by_block.map(|(_, c)| *c).or(self.all)
    }

    /// `ADDR` or, for a C-SID container, `ADDR<BLOCK/LBLEN: C1 C2 ...>` (C-SIDs in hex,
    /// `+ARG` for bits after the last whole C-SID).
    fn addr(&self, a: Ipv6Addr) -> String {
        let Some(c) = self.lengths(u128::from(a)) else { return a.to_string() };
        let (block, csids, rest) = split(u128::from(a), c);
        let mut s = format!("{a}<{}/{}:", Ipv6Addr::from(block), c.lblen);
        for x in csids {
            let _ = write!(s, " {x:x}");
        }
        if let Some(r) = rest {
            let _ = write!(s, " +{r:x}");
        }
        s.push('>');
        s
    }
}

/// What `sr6 dump` shows of each frame.
#[derive(Clone, Copy)]
pub struct View<'a> {
    pub verbose: bool,
    pub csid: &'a CsidPlan,
}

pub fn run(path: &Path, v: View) -> Result<()> {
    let mut r = PcapFile::open(path)?;
    let mut i = 0u64;
    let mut first_ts = None;
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    while let Some(p) = r.next_frame() {
        let (ts_ns, data) = p.with_context(|| format!("frame {}", i + 1))?;
        i += 1;
        let t0 = *first_ts.get_or_insert(ts_ns);
        // Relative time in seconds, microseconds shown.
        let rel = (i128::from(ts_ns) - i128::from(t0)) as f64 / 1e9;
        if let Err(e) = writeln!(out, "{i:>5} {rel:>10.6} {}", frame(&data, v)) {
            // `sr6 dump f.pcap | head` closes the pipe: stop quietly, like tcpdump.
            return if e.kind() == std::io::ErrorKind::BrokenPipe { Ok(()) } else { Err(e.into()) };
        }
    }
    match out.flush() {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e.into()),
        _ => Ok(()),
    }
}

fn mac(m: &[u8]) -> String {
    m.iter().map(|b| format!("{b:02x}")).collect::<Vec<_>>().join(":")
}

/// Describes an Ethernet frame.
pub fn frame(d: &[u8], v: View) -> String {
    let verbose = v.verbose;
    let Ok(eth) = EthernetFrame::new_checked(d) else {
        return format!("[truncated Ethernet frame, {} bytes]", d.len());
    };
    let mut s = String::new();
    if verbose {
        let _ = write!(s, "{} > {} ", mac(&eth.src_addr()), mac(&eth.dst_addr()));
    }
    if let Some(v) = eth.vlan() {
        let _ = write!(s, "vlan {} ", v & 0x0fff);
    }
    let pl = eth.payload();
    match eth.payload_ethertype() {
        ETHERTYPE_IPV6 => s.push_str(&ipv6(pl, v, 0)),
        ETHERTYPE_IPV4 => s.push_str(&ipv4(pl)),
        ETHERTYPE_ARP => s.push_str("ARP"),
        t => {
            let _ = write!(s, "ethertype 0x{t:04x}, {} bytes", pl.len());
        }
    }
    s
}

fn ipv4(d: &[u8]) -> String {
    match Ipv4Packet::new_checked(d) {
        Ok(ip) => {
            let mut s = format!(
                "IP {} > {} ttl {} proto {} len {}",
                ip.src_addr(),
                ip.dst_addr(),
                ip.ttl(),
                ip.protocol(),
                ip.total_len()
            );
            if !ip.verify_checksum() {
                s.push_str(" [bad checksum]");
            }
            let hl = ip.header_len();
            if ip.protocol() == IPPROTO_ICMP && d.len() >= hl + 4 {
                let _ = write!(s, " {}", icmp_names::icmpv4(d[hl], d[hl + 1]));
            }
            s
        }
        Err(e) => format!("IP [malformed: {e}]"),
    }
}

fn ipv6(d: &[u8], v: View, depth: usize) -> String {
    let verbose = v.verbose;
    let ip = match Ipv6Packet::new_checked(d) {
        Ok(ip) => ip,
        Err(e) => return format!("IP6 [malformed: {e}]"),
    };
    let mut s = format!("IP6 {} > {} hlim {}", ip.src_addr(), v.csid.addr(ip.dst_addr()), ip.hop_limit());
    if verbose {
        let _ = write!(s, " tc 0x{:02x} flow 0x{:05x} plen {}", ip.traffic_class(), ip.flow_label(), ip.payload_len());
    }
    let chain = match walk_chain(d) {
        Ok(c) => c,
        Err(e) => return format!("{s} [bad extension headers: {e}]"),
    };
    if let Some(r) = chain.routing {
        if r.routing_type == sr6_wire::srh::ROUTING_TYPE_SRH {
            s.push_str(&srh(&d[r.offset..r.offset + r.len], v));
        } else {
            let _ = write!(s, " RH(type {} sl {})", r.routing_type, r.segments_left);
        }
    }
    let up = &d[chain.upper.min(d.len())..ip.total_len().min(d.len())];
    match chain.upper_proto {
        IPPROTO_IPV6 if depth < 3 => {
            let _ = write!(s, " | {}", ipv6(up, v, depth + 1));
        }
        IPPROTO_IPV4 => {
            let _ = write!(s, " | {}", ipv4(up));
        }
        IPPROTO_ETHERNET if depth < 3 => {
            let _ = write!(s, " | {}", frame(up, v));
        }
        IPPROTO_UDP if up.len() >= UdpPacket::<&[u8]>::HEADER_LEN => {
            let u = UdpPacket::new_unchecked(up);
            let data = up.len() - UdpPacket::<&[u8]>::HEADER_LEN;
            let _ = write!(s, " UDP {} > {} len {data}", u.src_port(), u.dst_port());
        }
        IPPROTO_ICMPV6 if up.len() >= 4 => {
            let m = Icmpv6Packet::new_unchecked(up);
            let _ = write!(s, " {}", icmp_names::icmpv6(m.msg_type(), m.code()));
            let error = matches!(m.msg_type(), DST_UNREACH | PKT_TOO_BIG | TIME_EXCEEDED | PARAM_PROBLEM);
            if error && m.check_len().is_ok() {
                if m.msg_type() == PARAM_PROBLEM {
                    let _ = write!(s, " pointer {}", m.param());
                }
                if m.msg_type() == PKT_TOO_BIG {
                    let _ = write!(s, " mtu {}", m.param());
                }
                if verbose {
                    let _ = write!(s, " [ {} ]", ipv6(m.payload(), View { verbose: false, ..v }, depth + 1));
                }
            }
        }
        IPPROTO_NONE => s.push_str(" no next header"),
        p => {
            let _ = write!(s, " proto {p} len {}", up.len());
        }
    }
    s
}

fn srh(d: &[u8], v: View) -> String {
    let verbose = v.verbose;
    let h = match SrhPacket::new_checked(d) {
        Ok(h) => h,
        Err(e) => return format!(" SRH [malformed: {e}]"),
    };
    let segs: Vec<String> = h.segments().map(|a: Ipv6Addr| v.csid.addr(a)).collect();
    let mut s = format!(
        " SRH(sl {} le {} flags 0x{:02x} tag {} segs [{}]",
        h.segments_left(),
        h.last_entry(),
        h.flags(),
        h.tag(),
        segs.join(", ")
    );
    let mut tl = Vec::new();
    for t in h.tlvs() {
        match t {
            Ok(t) if t.kind == TLV_HMAC && t.value.len() >= 6 => {
                // Read as an HMAC TLV whatever its length (a malformed one is shown too).
                let bytes = h.tlv_area().get(t.offset..t.offset + t.total_len()).unwrap_or_default();
                let tlv = HmacTlv::new_unchecked(bytes);
                let mut x = format!("HMAC key {}", tlv.key_id());
                if verbose {
                    let hex: String = tlv.hmac().iter().map(|b| format!("{b:02x}")).collect();
                    let _ = write!(x, " {hex}");
                }
                tl.push(x);
            }
            Ok(t) if t.is_padding() => {
                if verbose {
                    tl.push(format!("Pad({})", t.total_len()));
                }
            }
            Ok(t) => tl.push(format!("TLV type {} len {}", t.kind, t.value.len())),
            Err(e) => {
                tl.push(format!("[bad TLV: {e}]"));
                break;
            }
        }
    }
    if !tl.is_empty() {
        let _ = write!(s, " tlv [{}]", tl.join(", "));
    }
    s.push(')');
    s
}
