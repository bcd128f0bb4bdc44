//! The classifier against the linear walk ([`super::classify`]'s claim): random rule
//! sets — every kind of option, negated or not, user chains with jumps and RETURN,
//! nft expressions, both modes — and random packets, some malformed; each packet's
//! verdict and every counter must be the same with every chain indexed as with the
//! plain walk over all rules.

use super::spec::*;
use super::{Firewall, Hook};
use crate::firewall::fields::Fields;
use crate::tables::Device;
use proptest::prelude::*;
use std::net::Ipv6Addr;

/// The addresses both rules and packets take theirs from, so that they meet often.
const ADDRS: [u128; 4] = [
    0xfc00_0000_0000_0000_0000_0000_0000_0001,
    0xfc00_0000_0000_0000_0000_0000_0000_0002,
    0xfc00_0000_0000_0001_0000_0000_0000_0001,
    0x2001_0db8_0000_0000_0000_0000_0000_0001,
];
const PORTS: [u16; 3] = [53, 1024, 5000];
const PROTOS: [u8; 5] = [6, 17, 58, 41, 43];
const USER: usize = 3;

fn addr_match() -> impl Strategy<Value = AddrMatch> {
    let mask = prop_oneof![
        Just(u128::MAX),
        Just(u128::MAX << 64),
        Just(u128::MAX << 80),
        Just(u128::MAX << 1),
        Just(0u128),
        Just(0xffff_0000_ffff_0000_0000_0000_0000_ffffu128),
    ];
    (0..ADDRS.len(), mask, any::<bool>())
        .prop_map(|(a, m, inv)| AddrMatch::new(Ipv6Addr::from(ADDRS[a]), Ipv6Addr::from(m), inv))
}

fn neg<T: std::fmt::Debug + Clone + 'static>(v: impl Strategy<Value = T>) -> impl Strategy<Value = Neg<T>> {
    (v, prop::bool::weighted(0.2)).prop_map(|(v, inv)| Neg { v, inv })
}

fn opt<T: std::fmt::Debug>(s: impl Strategy<Value = T>) -> impl Strategy<Value = Option<T>> {
    prop::option::weighted(0.35, s)
}

fn port_sel() -> impl Strategy<Value = Neg<(u16, u16)>> {
    neg(prop_oneof![(0..PORTS.len()).prop_map(|i| (PORTS[i], PORTS[i])), Just((1000u16, 6000u16)),])
}

fn small() -> impl Strategy<Value = u8> {
    0u8..4
}

fn srh_match() -> impl Strategy<Value = SrhMatch> {
    (
        opt(neg(prop_oneof![Just(17u8), Just(41u8)])),
        [opt(neg(small())), opt(neg(small())), opt(neg(small()))],
        [opt(neg(small())), opt(neg(small())), opt(neg(small()))],
        opt(neg(prop_oneof![Just(0u16), Just(7u16)])),
        [opt(addr_match()), opt(addr_match()), opt(addr_match())],
        opt(addr_match()),
    )
        .prop_map(|(next_hdr, segs_left, last_entry, tag, [psid, nsid, lsid], inner_src)| SrhMatch {
            next_hdr,
            hdr_len: [None; 3],
            segs_left,
            last_entry,
            tag,
            psid,
            nsid,
            lsid,
            inner_src,
            inner_dst: None,
        })
}

fn exthdr() -> impl Strategy<Value = ExthdrMatch> {
    let op = prop_oneof![
        Just(NftOp::Eq),
        Just(NftOp::Eq),
        Just(NftOp::Ne),
        Just(NftOp::Lt),
        Just(NftOp::Gt),
        Just(NftOp::Le),
        Just(NftOp::Ge)
    ];
    let at = prop_oneof![
        (Just((6u16, 2u8)), prop_oneof![Just(0u128), Just(7u128)]),
        (Just((3u16, 1u8)), (0u128..4)),
        (Just((4u16, 1u8)), (0u128..4)),
        (Just((8u16, 16u8)), (0..ADDRS.len()).prop_map(|i| ADDRS[i])),
        (Just((0u16, 1u8)), prop_oneof![Just(17u128), Just(41u128)]),
    ];
    (at, op).prop_map(|(((offset, len), value), op)| ExthdrMatch { offset, len, op, value })
}

fn dev() -> impl Strategy<Value = Option<Neg<String>>> {
    opt(neg(prop_oneof![Just("eth0".to_string()), Just("eth1".to_string()), Just("eth+".to_string())]))
}

fn fw_match() -> impl Strategy<Value = FwMatch> {
    (
        opt(addr_match()),
        opt(addr_match()),
        dev(),
        dev(),
        opt(neg((0..PROTOS.len()).prop_map(|i| PROTOS[i]))),
        (prop_oneof![Just(6u8), Just(17u8)], opt(port_sel()), opt(port_sel()), any::<bool>()),
        opt(srh_match()),
        prop::collection::vec(exthdr(), 0..2),
    )
        .prop_map(|(src, dst, iif, oif, mut proto, (pp, sport, dport, with_ports), srh, exthdr)| {
            // `--sport`/`--dport` come with `-p tcp|udp`, as the parser requires.
            let ports = (with_ports && (sport.is_some() || dport.is_some())).then(|| {
                proto = Some(Neg { v: pp, inv: false });
                PortMatch { proto: pp, sport, dport }
            });
            FwMatch { src, dst, iif, oif, proto, ports, srh, exthdr }
        })
}

/// A target for a rule of chain `c` (built-ins first): a jump only forward to a user
/// chain, so that no chain reaches itself.
fn target(c: usize) -> impl Strategy<Value = FwTarget> {
    let first = (c + 1).max(BUILTIN.len());
    let jumps = BUILTIN.len() + USER - first;
    prop_oneof![
        3 => Just(FwTarget::Accept),
        3 => Just(FwTarget::Drop),
        1 => Just(FwTarget::Reject(1)),
        1 => Just(FwTarget::Seg6(Seg6Action::GoNext)),
        2 => Just(FwTarget::Return),
        3 => (0..jumps.max(1)).prop_map(move |k| if jumps == 0 {
            FwTarget::Drop
        } else {
            FwTarget::Jump(format!("U{}", first + k - BUILTIN.len()))
        }),
    ]
}

fn chain(c: usize) -> impl Strategy<Value = Vec<FwRule>> {
    prop::collection::vec((fw_match(), target(c)), 0..24)
        .prop_map(|rs| rs.into_iter().map(|(m, target)| FwRule { line: 1, m, target, nft: None }).collect())
}

fn spec() -> impl Strategy<Value = FirewallSpec> {
    (chain(0), chain(1), chain(2), chain(3), chain(4), any::<[bool; 2]>()).prop_map(|(a, b, c, d, e, pol)| {
        let mut s = FirewallSpec::default();
        for (ch, rules) in s.chains.iter_mut().zip([a, b]) {
            ch.rules = rules;
        }
        s.chains[0].policy = Some(pol[0]);
        s.chains[1].policy = Some(pol[1]);
        for (k, rules) in [c, d, e].into_iter().enumerate() {
            s.chains.push(ChainSpec { name: format!("U{k}"), line: 1, policy: None, rules });
        }
        s
    })
}

/// An IPv6 packet from the same values: maybe an SRH (Routing Type 4, sometimes 0; its
/// Segments Left possibly beyond Last Entry), then UDP, TCP, ICMPv6 or an inner IPv6
/// packet with UDP; cut anywhere after the IPv6 header, its Payload Length saying so.
#[derive(Debug, Clone)]
struct Pkt {
    src: usize,
    dst: usize,
    /// Segments Left, Tag, the segments, whether Routing Type 4.
    srh: Option<(u8, u16, Vec<usize>, bool)>,
    upper: u8,
    ports: (usize, usize),
    inner: (usize, usize),
    cut: Option<usize>,
}

fn pkt() -> impl Strategy<Value = Pkt> {
    (
        0..ADDRS.len(),
        0..ADDRS.len(),
        opt((
            small(),
            prop_oneof![Just(0u16), Just(7u16)],
            prop::collection::vec(0..ADDRS.len(), 1..4),
            prop::bool::weighted(0.9),
        )),
        (0..PROTOS.len() - 1).prop_map(|i| PROTOS[i]),
        (0..PORTS.len(), 0..PORTS.len()),
        (0..ADDRS.len(), 0..ADDRS.len()),
        prop::option::weighted(0.15, 0usize..120),
    )
        .prop_map(|(src, dst, srh, upper, ports, inner, cut)| Pkt { src, dst, srh, upper, ports, inner, cut })
}

fn ipv6(src: u128, dst: u128, nh: u8, rest: &[u8]) -> Vec<u8> {
    let mut v = vec![0x60, 0, 0, 0];
    v.extend_from_slice(&(rest.len() as u16).to_be_bytes());
    v.extend_from_slice(&[nh, 64]);
    v.extend_from_slice(&src.to_be_bytes());
    v.extend_from_slice(&dst.to_be_bytes());
    v.extend_from_slice(rest);
    v
}

impl Pkt {
    fn bytes(&self) -> Vec<u8> {
        let l4 = |p: u8, (s, d): (usize, usize)| {
            let mut v = PORTS[s].to_be_bytes().to_vec();
            v.extend_from_slice(&PORTS[d].to_be_bytes());
            v.extend_from_slice(&[0, 8, 0, 0]);
            if p == 6 {
                v.extend_from_slice(&[0; 12]);
            }
            v
        };
        let upper = match self.upper {
            41 => ipv6(ADDRS[self.inner.0], ADDRS[self.inner.1], 17, &l4(17, self.ports)),
            p => l4(p, self.ports),
        };
        let (nh, rest) = match &self.srh {
            None => (self.upper, upper),
            Some((sl, tag, segs, srh_type)) => {
                let le = segs.len() as u8 - 1;
                let mut v = vec![self.upper, 2 * segs.len() as u8, if *srh_type { 4 } else { 0 }, *sl, le, 0];
                v.extend_from_slice(&tag.to_be_bytes());
                for s in segs {
                    v.extend_from_slice(&ADDRS[*s].to_be_bytes());
                }
                v.extend_from_slice(&upper);
                (43, v)
            }
        };
        let mut d = ipv6(ADDRS[self.src], ADDRS[self.dst], nh, &rest);
        if let Some(cut) = self.cut {
            d.truncate(40 + cut.min(d.len() - 40));
            let plen = (d.len() - 40) as u16;
            d[4..6].copy_from_slice(&plen.to_be_bytes());
        }
        d
    }
}

fn devices() -> Vec<Device> {
    ["eth0", "eth1", "lo9"]
        .iter()
        .map(|n| Device {
            name: n.to_string(),
            mac: [0; 6],
            seg6_enabled: true,
            require_hmac: 0,
            forwarding6: true,
            forwarding4: true,
            mtu: 1500,
            addrs6: Vec::new(),
            addrs4: Vec::new(),
            plens6: Vec::new(),
            plens4: Vec::new(),
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1500, ..ProptestConfig::default() })]
    #[test]
    fn classifier_equals_the_linear_walk(
        s in spec(),
        pkts in prop::collection::vec((pkt(), 0u16..3, prop::option::of(0u16..3), any::<bool>()), 1..12),
        inner in any::<bool>(),
    ) {
        let Ok(Some(mut fw)) = Firewall::build_indexed(&s, &devices(), 0, 0) else { return Ok(()) };
        fw.inner = inner;
        let n = 2 * fw.counter_count();
        let (mut a, mut b) = (vec![0u64; n], vec![0u64; n]);
        for (p, iif, oif, fwd) in &pkts {
            let d = p.bytes();
            let Some(f) = Fields::of(&d) else { continue };
            let hook = if *fwd { Hook::Forward } else { Hook::Input };
            let x = fw.decide(&f, &d, Some(*iif), *oif, hook, &mut a);
            let y = fw.decide_linear(&f, &d, Some(*iif), *oif, hook, &mut b);
            prop_assert_eq!(x, y, "{:?}", p);
            prop_assert_eq!(&a, &b, "{:?}", p);
        }
    }
}

/// The test above is not vacuous: its rule sets and packets match, jump and index.
#[test]
fn the_classifier_indexes_and_the_rules_match() {
    let m = |f: &dyn Fn(&mut FwMatch)| {
        let mut m = FwMatch::default();
        f(&mut m);
        m
    };
    let a = |i: usize, len: u32| {
        AddrMatch::new(Ipv6Addr::from(ADDRS[i]), Ipv6Addr::from(u128::MAX.checked_shl(128 - len).unwrap_or(0)), false)
    };
    let mut s = FirewallSpec::default();
    let rules = [
        m(&|m| m.src = Some(a(3, 128))),
        m(&|m| m.dst = Some(a(2, 64))),
        m(&|m| {
            m.proto = Some(Neg { v: 17, inv: false });
            m.ports = Some(PortMatch { proto: 17, sport: None, dport: Some(Neg { v: (53, 53), inv: false }) })
        }),
        m(&|m| m.srh = Some(SrhMatch { tag: Some(Neg { v: 7, inv: false }), ..SrhMatch::default() })),
        m(&|m| m.src = Some(AddrMatch { inv: true, ..a(0, 128) })),
    ];
    s.chains[0].rules =
        rules.iter().map(|m| FwRule { line: 1, m: m.clone(), target: FwTarget::Drop, nft: None }).collect();
    let fw = Firewall::build_indexed(&s, &devices(), 0, 0).unwrap().unwrap();
    // Four groups and one wildcard (the negated source).
    let ix = &fw.chains[0].index;
    assert_eq!(format!("{ix:?}").matches("Group").count(), 4, "{ix:?}");
    let p = Pkt { src: 0, dst: 0, srh: None, upper: 17, ports: (0, 0), inner: (0, 0), cut: None };
    let d = p.bytes();
    let f = Fields::of(&d).unwrap();
    let v = super::classify::View { orig: (&f, &d), outer: (&f, &d) };
    // Source fc00::1, UDP 53 -> 53: the dport rule and the wildcard only.
    assert_eq!(ix.candidates(&v).collect::<Vec<_>>(), vec![2, 4]);
    let mut c = vec![0u64; 2 * fw.counter_count()];
    assert_eq!(fw.decide(&f, &d, Some(0), None, Hook::Input, &mut c), super::Target::Drop);
    assert_eq!(c[4], 1);
}
