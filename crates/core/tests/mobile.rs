//! The GTP-U <-> SRv6 translations of RFC 9433 (H.M.GTP4.D, End.M.GTP4.E), configured
//! from text as a user writes it. Frames are built by hand here, field by field from
//! the RFC's figures (Args.Mob.Session §6.1 Fig. 8, the SIDs and sources of Figs. 9-11)
//! and 3GPP TS 29.281 §5.1; the independent oracle is tests/oracle/test_mobile.py
//! (scapy's GTP-U layers, tshark).
//!
//! The router: eth0 (10.0.0.1/24, fc00:1::1/64) towards the gNBs at 10.0.0.2; eth1
//! (fc00:2::1/64) towards the SRv6 core at fc00:2::2, which routes fc00:4::/32 (the
//! SIDs) and fc00:e::/32 (the segments).

use std::net::{Ipv4Addr, Ipv6Addr};

use sr6_core::drop::DropReason;
use sr6_core::packet::{PacketBuf, Verdict};
use sr6_core::pipeline::Worker;
use sr6_core::tables::Tables;

const BASE: &str = "\
ip link set dev eth0 address 02:00:00:00:00:01
ip link set dev eth1 address 02:00:00:00:00:02
ip addr add 10.0.0.1/24 dev eth0
ip -6 addr add fc00:1::1/64 dev eth0
ip -6 addr add fc00:2::1/64 dev eth1
ip neigh add 10.0.0.2 lladdr 02:aa:00:00:00:01 dev eth0
ip -6 neigh add fc00:2::2 lladdr 02:bb:00:00:00:02 dev eth1
ip -6 route add fc00:4::/32 via fc00:2::2 dev eth1
ip -6 route add fc00:e::/32 via fc00:2::2 dev eth1
ip -6 route add fc00:7::/32 via fc00:2::2 dev eth1
ip route add 198.51.100.0/24 via 10.0.0.2 dev eth0
sysctl -w net.ipv6.conf.all.forwarding=1
sysctl -w net.ipv4.ip_forward=1
";

/// The UPF address 192.0.2.1: GTP-U to it becomes SRv6 to fc00:4:1::/48 + IPv4 DA +
/// Args.Mob.Session, from fc00:5::/64 + IPv4 SA.
const GTP4_D: &str = "ip route add 192.0.2.1/32 encap seg6local action H.M.GTP4.D sr-prefix fc00:4:1::/48 \
                      src-prefix fc00:5::/64 dev eth1\n";
/// The same with two segments before the last SID.
const GTP4_D_SEGS: &str = "ip route add 192.0.2.1/32 encap seg6local action H.M.GTP4.D sr-prefix fc00:4:1::/48 \
                           src-prefix fc00:5::/64 segs fc00:e::1,fc00:e::2 dev eth1\n";
/// End.M.GTP4.E SIDs fc00:6::/48: the IPv4 source at bit 64 of the IPv6 source.
const GTP4_E: &str = "ip -6 route add fc00:6::/48 encap seg6local action End.M.GTP4.E v4src-position 64 dev eth0\n";

fn v6(s: &str) -> Ipv6Addr {
    s.parse().unwrap()
}

fn v4(s: &str) -> Ipv4Addr {
    s.parse().unwrap()
}

fn tables(extra: &str) -> Tables {
    let spec = sr6_config::parse_str(&format!("{BASE}{extra}"), "t.conf").unwrap_or_else(|e| panic!("{e}"));
    Tables::build(&spec).unwrap_or_else(|e| panic!("line {}: {}", e.line, e.message)).0
}

fn parse_err(extra: &str) -> String {
    match sr6_config::parse_str(&format!("{BASE}{extra}"), "t.conf") {
        Ok(_) => panic!("parsed: {extra}"),
        Err(e) => e.to_string(),
    }
}

fn csum(b: &[u8]) -> u32 {
    b.chunks(2).map(|c| u32::from(u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)]))).sum()
}

fn fold(mut s: u32) -> u16 {
    while s > 0xffff {
        s = (s & 0xffff) + (s >> 16);
    }
    !(s as u16)
}

/// IPv4 (ID 0, DF) + UDP 2152 -> 2152 (checksum computed) + `gtp` + `tpdu`.
fn gtp_packet(src: &str, dst: &str, ttl: u8, tos: u8, gtp: &[u8], tpdu: &[u8]) -> Vec<u8> {
    let udp_len = 8 + gtp.len() + tpdu.len();
    let len = 20 + udp_len;
    let mut h = vec![0x45, tos, (len >> 8) as u8, len as u8, 0, 0, 0x40, 0, ttl, 17, 0, 0];
    h.extend_from_slice(&v4(src).octets());
    h.extend_from_slice(&v4(dst).octets());
    let c = fold(csum(&h));
    h[10..12].copy_from_slice(&c.to_be_bytes());
    let mut u = vec![0x08, 0x68, 0x08, 0x68, (udp_len >> 8) as u8, udp_len as u8, 0, 0];
    u.extend_from_slice(gtp);
    u.extend_from_slice(tpdu);
    let mut pseudo = v4(src).octets().to_vec();
    pseudo.extend_from_slice(&v4(dst).octets());
    pseudo.extend_from_slice(&[0, 17, (udp_len >> 8) as u8, udp_len as u8]);
    let c = fold(csum(&pseudo) + csum(&u));
    u[6..8].copy_from_slice(&if c == 0 { 0xffff } else { c }.to_be_bytes());
    h.extend_from_slice(&u);
    h
}

/// A GTP-U T-PDU header (TS 29.281 §5.1) for `len` bytes of T-PDU, with a PDU Session
/// Container (PDU type, QFI, RQI) if `psc`.
fn gtp_hdr(teid: u32, psc: Option<(u8, u8, bool)>, len: usize) -> Vec<u8> {
    let ext = if psc.is_some() { 8 } else { 0 };
    let mut g = vec![if psc.is_some() { 0x34 } else { 0x30 }, 0xff];
    g.extend_from_slice(&((len + ext) as u16).to_be_bytes());
    g.extend_from_slice(&teid.to_be_bytes());
    if let Some((ty, qfi, rqi)) = psc {
        g.extend_from_slice(&[0, 0, 0, 0x85, 1, ty << 4, u8::from(rqi) << 6 | qfi, 0]);
    }
    g
}

/// The user's packet: IPv6 (next header 59) or IPv4 (protocol 253), 24 bytes.
fn tpdu(v6_inner: bool) -> Vec<u8> {
    if v6_inner {
        let mut p = vec![0x60, 0, 0, 0, 0, 0, 59, 64];
        p.extend_from_slice(&v6("2001:db8::1").octets());
        p.extend_from_slice(&v6("2001:db8::2").octets());
        p
    } else {
        let mut p = vec![0x45, 0, 0, 24, 0, 1, 0, 0, 64, 253, 0, 0, 10, 1, 0, 1, 10, 2, 0, 2, 1, 2, 3, 4];
        let c = fold(csum(&p[..20]));
        p[10..12].copy_from_slice(&c.to_be_bytes());
        p
    }
}

fn eth(ethertype: u16, ip: &[u8]) -> Vec<u8> {
    let mut f = vec![2, 0, 0, 0, 0, 1, 2, 0xaa, 0, 0, 0, 1];
    f.extend_from_slice(&ethertype.to_be_bytes());
    f.extend_from_slice(ip);
    f
}

fn run(t: &Tables, w: &mut Worker, dev: u16, frame: &[u8]) -> (Verdict, Vec<u8>) {
    let mut p = PacketBuf::new();
    assert!(p.load(frame, dev));
    w.process(t, &mut p);
    (p.verdict, p.data().to_vec())
}

fn drops(w: &Worker, r: DropReason) -> u64 {
    w.counters.drops[r as usize]
}

/// Args.Mob.Session (Fig. 8) as bits: QFI, R, U, TEID.
fn args(qfi: u8, r: bool, teid: u32) -> u128 {
    u128::from(qfi) << 34 | u128::from(r) << 33 | u128::from(teid)
}

#[test]
fn gtp4_d_without_segments() {
    let t = tables(GTP4_D);
    let mut w = Worker::new(&t);
    for v6_inner in [true, false] {
        let inner = tpdu(v6_inner);
        let ip = gtp_packet("203.0.113.7", "192.0.2.1", 30, 0xb8, &gtp_hdr(0x1234_5678, None, inner.len()), &inner);
        let (v, out) = run(&t, &mut w, 0, &eth(0x0800, &ip));
        assert_eq!(v, Verdict::Tx(1), "to the core on eth1");
        let o = &out[14..];
        assert_eq!(&out[12..14], &[0x86, 0xdd]);
        assert_eq!(o[0] >> 4, 6);
        assert_eq!((o[0] & 0xf) << 4 | o[1] >> 4, 0xb8, "traffic class = the IPv4 DSCP/ECN");
        assert_eq!(usize::from(u16::from_be_bytes([o[4], o[5]])), inner.len());
        assert_eq!(o[6], if v6_inner { 41 } else { 4 }, "no SRH: the T-PDU's type");
        assert_eq!(o[7], 29, "hop limit: the TTL, less the forwarding decrement");
        // Fig. 10: src-prefix fc00:5::/64, the IPv4 SA, zeros.
        let src = u128::from(v6("fc00:5::")) | u128::from(u32::from(v4("203.0.113.7"))) << 32;
        assert_eq!(&o[8..24], &src.to_be_bytes());
        // Fig. 11: sr-prefix fc00:4:1::/48, the IPv4 DA, Args.Mob.Session, zeros.
        let b = u128::from(v6("fc00:4:1::"))
            | u128::from(u32::from(v4("192.0.2.1"))) << 48
            | args(0, false, 0x1234_5678) << 8;
        assert_eq!(&o[24..40], &b.to_be_bytes());
        assert_eq!(&o[40..], &inner[..]);
    }
    assert_eq!(w.counters.sids.get(0).map(|c| c.packets), Some(2));
}

#[test]
fn gtp4_d_with_segments_and_a_pdu_session_container() {
    let t = tables(GTP4_D_SEGS);
    let mut w = Worker::new(&t);
    let inner = tpdu(true);
    let ip = gtp_packet("203.0.113.7", "192.0.2.1", 64, 0, &gtp_hdr(200, Some((1, 9, false)), inner.len()), &inner);
    let (v, out) = run(&t, &mut w, 0, &eth(0x0800, &ip));
    assert_eq!(v, Verdict::Tx(1));
    let o = &out[14..];
    assert_eq!(o[6], 43);
    assert_eq!(&o[24..40], &v6("fc00:e::1").octets(), "to S1");
    let srh = &o[40..];
    assert_eq!(&srh[..5], &[41, 6, 4, 2, 2], "next header, length, type 4, SL 2, last entry 2");
    let b = u128::from(v6("fc00:4:1::")) | u128::from(u32::from(v4("192.0.2.1"))) << 48 | args(9, false, 200) << 8;
    assert_eq!(&srh[8..24], &b.to_be_bytes(), "Segment List[0]: B");
    assert_eq!(&srh[24..40], &v6("fc00:e::2").octets());
    assert_eq!(&srh[40..56], &v6("fc00:e::1").octets());
    assert_eq!(&srh[56..], &inner[..]);
    // A downlink container's RQI is R.
    let ip = gtp_packet("203.0.113.7", "192.0.2.1", 64, 0, &gtp_hdr(200, Some((0, 5, true)), inner.len()), &inner);
    let (_, out) = run(&t, &mut w, 0, &eth(0x0800, &ip));
    let b = u128::from(v6("fc00:4:1::")) | u128::from(u32::from(v4("192.0.2.1"))) << 48 | args(5, true, 200) << 8;
    assert_eq!(&out[14 + 48..14 + 64], &b.to_be_bytes());
}

/// An SRv6 packet to End.M.GTP4.E SID `fc00:6::/48 | 198.51.100.9 | args`, from
/// fc00:7::/64 | 203.0.113.7, with `srh` (Segments Left, header-order list) if given.
fn to_gtp4_e(a: u128, hl: u8, srh: Option<(u8, &[Ipv6Addr])>, inner: &[u8], nh: u8) -> Vec<u8> {
    let sid = u128::from(v6("fc00:6::")) | u128::from(u32::from(v4("198.51.100.9"))) << 48 | a << 8;
    let src = u128::from(v6("fc00:7::")) | u128::from(u32::from(v4("203.0.113.7"))) << 32 | 0xdd;
    let mut ext = Vec::new();
    if let Some((sl, segs)) = srh {
        ext.extend_from_slice(&[nh, (segs.len() * 2) as u8, 4, sl, segs.len() as u8 - 1, 0, 0, 0]);
        for s in segs {
            ext.extend_from_slice(&s.octets());
        }
    }
    let plen = ext.len() + inner.len();
    let mut h = vec![0x6b, 0x80, 0, 0, (plen >> 8) as u8, plen as u8, if srh.is_some() { 43 } else { nh }, hl];
    h.extend_from_slice(&src.to_be_bytes());
    h.extend_from_slice(&sid.to_be_bytes());
    h.extend_from_slice(&ext);
    h.extend_from_slice(inner);
    h
}

#[test]
fn gtp4_e_rebuilds_gtp_u() {
    let t = tables(GTP4_E);
    let mut w = Worker::new(&t);
    let inner = tpdu(false);
    for (a, psc) in [(args(0, false, 0xbbbb_bbbb), None), (args(9, true, 7), Some((0, 9, true)))] {
        let sid = Ipv6Addr::from(u128::from(v6("fc00:6::")) | 0xc633_6409u128 << 48 | a << 8);
        let ip = to_gtp4_e(a, 40, Some((0, &[sid])), &inner, 4);
        let (v, out) = run(&t, &mut w, 1, &eth(0x86dd, &ip));
        assert_eq!(v, Verdict::Tx(0), "to the gNB side on eth0");
        assert_eq!(&out[..6], &[2, 0xaa, 0, 0, 0, 1]);
        let want = gtp_packet(
            "203.0.113.7",
            "198.51.100.9",
            39,
            0xb8,
            &gtp_hdr((a & 0xffff_ffff) as u32, psc, inner.len()),
            &inner,
        );
        assert_eq!(&out[14..], &want[..], "psc {psc:?}");
    }
    // VPP's End.M.GTP4.E vector: after the IPv4 DA, 0x11 (QFI 4, U 1) and TEID
    // 0xbbbbbbbb; U is ignored on receipt.
    let a = 0x11_bbbb_bbbbu128;
    let (v, out) = run(&t, &mut w, 1, &eth(0x86dd, &to_gtp4_e(a, 40, None, &inner, 4)));
    assert_eq!(v, Verdict::Tx(0));
    let want = gtp_packet(
        "203.0.113.7",
        "198.51.100.9",
        39,
        0xb8,
        &gtp_hdr(0xbbbb_bbbb, Some((0, 4, false)), inner.len()),
        &inner,
    );
    assert_eq!(&out[14..], &want[..]);
}

#[test]
fn gtp4_e_errors() {
    let t = tables(GTP4_E);
    let mut w = Worker::new(&t);
    let a = args(0, false, 1);
    let sid = Ipv6Addr::from(u128::from(v6("fc00:6::")) | 0xc633_6409u128 << 48 | a << 8);
    // Segments Left 1: Parameter Problem, pointer at Segments Left (40 + 3).
    let ip = to_gtp4_e(a, 40, Some((1, &[v6("fc00:e::9"), sid])), &tpdu(false), 4);
    let (v, out) = run(&t, &mut w, 1, &eth(0x86dd, &ip));
    assert_eq!(v, Verdict::Tx(1));
    assert_eq!((out[14 + 40], out[14 + 41]), (4, 0));
    assert_eq!(&out[14 + 44..14 + 48], &43u32.to_be_bytes());
    // An upper layer that is not IP (59): Parameter Problem code 4.
    let ip = to_gtp4_e(a, 40, None, &[0; 8], 59);
    let (v, out) = run(&t, &mut w, 1, &eth(0x86dd, &ip));
    assert_eq!(v, Verdict::Tx(1));
    assert_eq!((out[14 + 40], out[14 + 41]), (4, 4));
}

#[test]
fn round_trip_restores_the_gtp_u_packet() {
    let d = tables(
        "ip route add 192.0.2.1/32 encap seg6local action H.M.GTP4.D sr-prefix fc00:6::/48 \
                    src-prefix fc00:7::/64 dev eth1\nip -6 route add fc00:6::/32 via fc00:2::2 dev eth1\n",
    );
    let e = tables(&format!("{GTP4_E}ip route add 192.0.2.0/24 via 10.0.0.2 dev eth0\n"));
    let (mut wd, mut we) = (Worker::new(&d), Worker::new(&e));
    for (psc, v6_inner) in [(None, true), (Some((0, 63, true)), false), (Some((0, 1, false)), true)] {
        let inner = tpdu(v6_inner);
        // The IPv4 DA comes back from the SID, the SA from the IPv6 source.
        let orig = gtp_packet("198.51.100.9", "192.0.2.1", 64, 0x2c, &gtp_hdr(0xdead_beef, psc, inner.len()), &inner);
        let (_, srv6) = run(&d, &mut wd, 0, &eth(0x0800, &orig));
        let (v, back) = run(&e, &mut we, 1, &eth(0x86dd, &srv6[14..]));
        assert_eq!(v, Verdict::Tx(0), "{:02x?}\n{:02x?}", &srv6, &back);
        // Field for field, but the TTL: one less per router.
        let mut want = orig.clone();
        want[8] = 62;
        want[10..12].copy_from_slice(&[0, 0]);
        let c = fold(csum(&want[..20]));
        want[10..12].copy_from_slice(&c.to_be_bytes());
        assert_eq!(&back[14..], &want[..], "psc {psc:?}");
    }
}

#[test]
fn gtp4_d_drops_what_is_not_a_t_pdu() {
    let t = tables(GTP4_D);
    let mut w = Worker::new(&t);
    let inner = tpdu(true);
    let good_gtp = gtp_hdr(1, None, inner.len());
    let to = |gtp: &[u8], tp: &[u8]| eth(0x0800, &gtp_packet("203.0.113.7", "192.0.2.1", 64, 0, gtp, tp));
    // Supported Extension Headers Notification (31) and Error Indication (26) with
    // 252 bytes of IEs: signalling that does not cross SRv6; short.
    let mut cases: Vec<(Vec<u8>, DropReason)> = vec![
        (to(&[0x30, 31, 0, 0, 0, 0, 0, 0], &[]), DropReason::GtpuSignalling),
        (to(&[0x30, 26, 0, 252, 0, 0, 0, 0], &[0; 252]), DropReason::GtpuSignalling),
        (to(&good_gtp[..6], &[]), DropReason::GtpuMalformed),
    ];
    // Version 2, Length one too many or one too few.
    let mut v2 = good_gtp.clone();
    v2[0] = 0x50;
    cases.push((to(&v2, &inner), DropReason::GtpuMalformed));
    let mut long = good_gtp.clone();
    long[3] += 1;
    cases.push((to(&long, &inner), DropReason::GtpuMalformed));
    let mut short = good_gtp.clone();
    short[3] -= 1;
    cases.push((to(&short, &inner), DropReason::GtpuMalformed));
    // A T-PDU that is not IP.
    cases.push((to(&gtp_hdr(1, None, 24), &[0x11; 24]), DropReason::WrongNextHeader));
    // A bad UDP checksum.
    let mut bad = to(&good_gtp, &inner);
    bad[14 + 27] ^= 1;
    cases.push((bad, DropReason::GtpuMalformed));
    // Not port 2152; not UDP.
    let mut port = to(&good_gtp, &inner);
    port[14 + 23] = 0x69;
    cases.push((port, DropReason::NotGtpu));
    let mut tcp = gtp_packet("203.0.113.7", "192.0.2.1", 64, 0, &good_gtp, &inner);
    tcp[9] = 6;
    tcp[10..12].copy_from_slice(&[0, 0]);
    let c = fold(csum(&tcp[..20]));
    tcp[10..12].copy_from_slice(&c.to_be_bytes());
    cases.push((eth(0x0800, &tcp), DropReason::NotGtpu));
    for (i, (f, r)) in cases.iter().enumerate() {
        let before = drops(&w, *r);
        let (v, _) = run(&t, &mut w, 0, f);
        assert_eq!(v, Verdict::Drop(*r), "case {i}");
        assert_eq!(drops(&w, *r), before + 1, "case {i}");
    }
    assert_eq!(w.counters.sids.get(0).map(|c| (c.packets, c.errors)), Some((0, cases.len() as u64)));
}

#[test]
fn config_checks_the_room_in_the_sids() {
    let e = parse_err(
        "ip route add 192.0.2.1/32 encap seg6local action H.M.GTP4.D sr-prefix fc00:4::/57 \
                       src-prefix fc00:5::/64 dev eth1",
    );
    assert!(e.starts_with("t.conf:14:71: fc00:4::/57 leaves 71 bits"), "{e}");
    let e = parse_err(
        "ip route add 192.0.2.1/32 encap seg6local action H.M.GTP4.D sr-prefix fc00:4::/56 \
                       src-prefix fc00:5::/97 dev eth1",
    );
    assert!(e.contains("fc00:5::/97 leaves 31 bits; the IPv4 source needs 32"), "{e}");
    let e = parse_err("ip -6 route add fc00:6::/57 encap seg6local action End.M.GTP4.E v4src-position 64 dev eth0");
    assert!(e.starts_with("t.conf:14:17: End.M.GTP4.E: a /57 SID leaves 71 bits"), "{e}");
    let e = parse_err("ip -6 route add fc00:6::/48 encap seg6local action End.M.GTP4.E v4src-position 97 dev eth0");
    assert!(e.contains("v4src-position 97 leaves no room"), "{e}");
    let e = parse_err(
        "ip -6 route add fc00:6::/48 encap seg6local action H.M.GTP4.D sr-prefix fc00:4::/48 \
                       src-prefix fc00:5::/64 dev eth1",
    );
    assert!(e.contains("H.M.GTP4.D takes GTP-U over IPv4: its route is an IPv4 prefix"), "{e}");
    let e = parse_err("ip route add 10.9.0.0/16 encap seg6local action End.DX4 nh4 10.0.0.2 dev eth0");
    assert!(e.contains("needs an IPv6 prefix"), "{e}");
    let e = parse_err("ip route add 192.0.2.1/32 encap seg6local action H.M.GTP4.D sr-prefix fc00:4::/48 dev eth1");
    assert!(e.contains("H.M.GTP4.D requires src-prefix P/LEN"), "{e}");
    // Written back as read.
    let spec = sr6_config::parse_str(&format!("{BASE}{GTP4_D_SEGS}{GTP4_E}"), "t.conf").unwrap();
    let shown = seg6local_actions(&spec);
    assert_eq!(
        shown,
        [
            "H.M.GTP4.D segs fc00:e::1,fc00:e::2 sr-prefix fc00:4:1::/48 src-prefix fc00:5::/64",
            "End.M.GTP4.E v4src-position 64"
        ]
    );
}

// --- GTP-U over IPv6 (RFC 9433 §6.3-§6.5) -------------------------------------------------

/// IPv6 (traffic class `tc`, flow label 0) + UDP 2152 -> 2152 (checksum computed: RFC
/// 8200 §8.1) + `gtp` + `tpdu`.
fn gtp6_packet(src: &str, dst: &str, hl: u8, tc: u8, gtp: &[u8], tpdu: &[u8]) -> Vec<u8> {
    let udp_len = 8 + gtp.len() + tpdu.len();
    let mut h = vec![0x60 | tc >> 4, tc << 4, 0, 0, (udp_len >> 8) as u8, udp_len as u8, 17, hl];
    h.extend_from_slice(&v6(src).octets());
    h.extend_from_slice(&v6(dst).octets());
    let mut u = vec![0x08, 0x68, 0x08, 0x68, (udp_len >> 8) as u8, udp_len as u8, 0, 0];
    u.extend_from_slice(gtp);
    u.extend_from_slice(tpdu);
    let mut pseudo = h[8..40].to_vec();
    pseudo.extend_from_slice(&[0, 0, (udp_len >> 8) as u8, udp_len as u8, 0, 0, 0, 17]);
    let c = fold(csum(&pseudo) + csum(&u));
    u[6..8].copy_from_slice(&if c == 0 { 0xffff } else { c }.to_be_bytes());
    h.extend_from_slice(&u);
    h
}

/// IPv6 from `src` to `dst`, hop limit `hl`, with an SRH (Segments Left `sl`, `segs` in
/// header order) before `inner` of type `nh`.
fn srv6(src: &str, dst: Ipv6Addr, hl: u8, sl: u8, segs: &[Ipv6Addr], nh: u8, inner: &[u8]) -> Vec<u8> {
    let plen = 8 + 16 * segs.len() + inner.len();
    let mut h = vec![0x60, 0, 0, 0, (plen >> 8) as u8, plen as u8, 43, hl];
    h.extend_from_slice(&v6(src).octets());
    h.extend_from_slice(&dst.octets());
    h.extend_from_slice(&[nh, (segs.len() * 2) as u8, 4, sl, segs.len() as u8 - 1, 0, 0, 0]);
    for s in segs {
        h.extend_from_slice(&s.octets());
    }
    h.extend_from_slice(inner);
    h
}

/// A GTP6 SID: the /64 `prefix`, then Args.Mob.Session (§6.3 S08, §6.5), zeros.
fn gtp6_sid(prefix: &str, a: u128) -> Ipv6Addr {
    Ipv6Addr::from(u128::from(v6(prefix)) | a << 24)
}

const GTP6_D: &str = "ip -6 route add fc00:9::1/128 encap seg6local action End.M.GTP6.D sr-prefix fc00:4:1::/64 \
                      src fc00:5::1 segs fc00:e::1 dev eth1\n";
const GTP6_DI: &str =
    "ip -6 route add fc00:9::2/128 encap seg6local action End.M.GTP6.Di src fc00:5::1 segs fc00:e::1 dev eth1\n";
const GTP6_E: &str = "ip -6 route add fc00:6::/64 encap seg6local action End.M.GTP6.E src fc00:5::2 dev eth0\n";

#[test]
fn gtp6_d_and_di_translate_a_t_pdu() {
    let t = tables(&format!("{GTP6_D}{GTP6_DI}"));
    let mut w = Worker::new(&t);
    let inner = tpdu(true);
    let g = gtp_hdr(0x1234, Some((1, 9, false)), inner.len());
    // End.M.GTP6.D: SRH S1, B with B = sr-prefix | QFI 9, TEID 0x1234; to S1 from src.
    let f = eth(0x86dd, &gtp6_packet("fc00:7::5", "fc00:9::1", 64, 0xb8, &g, &inner));
    let (v, out) = run(&t, &mut w, 0, &f);
    assert_eq!(v, Verdict::Tx(1));
    let b = gtp6_sid("fc00:4:1::", args(9, false, 0x1234));
    let mut want = srv6("fc00:5::1", v6("fc00:e::1"), 63, 1, &[b, v6("fc00:e::1")], 41, &inner);
    want[0..2].copy_from_slice(&[0x6b, 0x80]);
    assert_eq!(&out[14..], &want[..]);
    // End.M.GTP6.Di: SRH[0] the original destination; no session anywhere.
    let f = eth(0x86dd, &gtp6_packet("fc00:7::5", "fc00:9::2", 64, 0, &g, &inner));
    let (v, out) = run(&t, &mut w, 0, &f);
    assert_eq!(v, Verdict::Tx(1));
    let want = srv6("fc00:5::1", v6("fc00:e::1"), 63, 1, &[v6("fc00:9::2"), v6("fc00:e::1")], 41, &inner);
    assert_eq!(&out[14..], &want[..]);
    // A Supported Extension Headers Notification and a zero UDP checksum: dropped,
    // counted.
    let echo = [0x30, 31, 0, 0, 0, 0, 0, 0];
    let f = eth(0x86dd, &gtp6_packet("fc00:7::5", "fc00:9::1", 64, 0, &echo, &[]));
    assert_eq!(run(&t, &mut w, 0, &f).0, Verdict::Drop(DropReason::GtpuSignalling));
    let mut z = gtp6_packet("fc00:7::5", "fc00:9::1", 64, 0, &g, &inner);
    z[46..48].fill(0);
    assert_eq!(run(&t, &mut w, 0, &eth(0x86dd, &z)).0, Verdict::Drop(DropReason::GtpuMalformed));
}

#[test]
fn gtp6_e_rebuilds_gtp_u_toward_the_last_segment() {
    let t = tables(GTP6_E);
    let mut w = Worker::new(&t);
    let inner = tpdu(false);
    let a = args(9, true, 0xdead_beef);
    let sid = gtp6_sid("fc00:6::", a);
    let f = eth(0x86dd, &srv6("fc00:7::9", sid, 40, 1, &[v6("fc00:7::5"), sid], 4, &inner));
    let (v, out) = run(&t, &mut w, 1, &f);
    assert_eq!(v, Verdict::Tx(1), "fc00:7::/32 is behind eth1");
    let want =
        gtp6_packet("fc00:5::2", "fc00:7::5", 39, 0, &gtp_hdr(0xdead_beef, Some((0, 9, true)), inner.len()), &inner);
    assert_eq!(&out[14..], &want[..]);
    // Segments Left 0: a Parameter Problem (to fc00:7::9, behind eth1).
    let f = eth(0x86dd, &srv6("fc00:7::9", sid, 40, 0, &[sid], 4, &inner));
    let (v, out) = run(&t, &mut w, 1, &f);
    assert_eq!(v, Verdict::Tx(1));
    assert_eq!((out[14 + 6], out[14 + 40], out[14 + 41]), (58, 4, 0), "ICMPv6 Parameter Problem code 0");
    assert_eq!(&out[14 + 44..14 + 48], &43u32.to_be_bytes(), "pointer at Segments Left");
}

#[test]
fn gtp6_config_checks() {
    let e = parse_err(&GTP6_D.replace("fc00:4:1::/64", "fc00:4:1::/89"));
    assert!(e.starts_with("t.conf:14:77: fc00:4:1::/89 leaves 39 bits; Args.Mob.Session needs 40"), "{e}");
    let e = parse_err(&GTP6_E.replace("/64", "/89"));
    assert!(e.starts_with("t.conf:14:17: End.M.GTP6.E: a /89 SID leaves 39 bits"), "{e}");
    let e = parse_err(&GTP6_DI.replace(" segs fc00:e::1", ""));
    assert!(e.contains("End.M.GTP6.Di requires segs"), "{e}");
    let spec = sr6_config::parse_str(&format!("{BASE}{GTP6_D}{GTP6_DI}{GTP6_E}"), "t.conf").unwrap();
    let shown = seg6local_actions(&spec);
    assert_eq!(
        shown,
        [
            "End.M.GTP6.D src fc00:5::1 segs fc00:e::1 sr-prefix fc00:4:1::/64",
            "End.M.GTP6.Di src fc00:5::1 segs fc00:e::1",
            "End.M.GTP6.E src fc00:5::2"
        ]
    );
}

/// Error Indication's IEs cross in the SRH TLV (mobile/signalling.rs): every length up
/// to 251 bytes comes back byte for byte through H.M.GTP4.D then End.M.GTP4.E; longer
/// ones do not fit and are dropped `gtpu_signalling`.
#[test]
fn error_indication_ies_of_every_length_round_trip() {
    let d = tables(
        "ip route add 192.0.2.1/32 encap seg6local action H.M.GTP4.D sr-prefix fc00:6::/48 \
                    src-prefix fc00:7::/64 dev eth1\nip -6 route add fc00:6::/32 via fc00:2::2 dev eth1\n",
    );
    let e = tables(&format!("{GTP4_E}ip route add 192.0.2.0/24 via 10.0.0.2 dev eth0\n"));
    let (mut wd, mut we) = (Worker::new(&d), Worker::new(&e));
    for n in 0..=260usize {
        let ies: Vec<u8> = (0..n).map(|i| (i * 7 + n) as u8).collect();
        let len = (4 + n) as u16;
        let mut hdr = vec![0x32, 26];
        hdr.extend_from_slice(&len.to_be_bytes());
        hdr.extend_from_slice(&[0, 0, 0, 0, (n >> 8) as u8, n as u8, 0, 0]);
        let orig = gtp_packet("198.51.100.9", "192.0.2.1", 64, 0, &hdr, &ies);
        let (v, srv6) = run(&d, &mut wd, 0, &eth(0x0800, &orig));
        if n > 251 {
            assert_eq!(v, Verdict::Drop(DropReason::GtpuSignalling), "{n}");
            continue;
        }
        assert_eq!(v, Verdict::Tx(1), "{n}");
        let (v, back) = run(&e, &mut we, 1, &eth(0x86dd, &srv6[14..]));
        assert_eq!(v, Verdict::Tx(0), "{n}");
        let mut want = orig.clone();
        want[8] = 62;
        want[10..12].copy_from_slice(&[0, 0]);
        let c = fold(csum(&want[..20]));
        want[10..12].copy_from_slice(&c.to_be_bytes());
        assert_eq!(&back[14..], &want[..], "{n}");
    }
}

/// A tagged SRH whose TLV area is anything at all: End.M.GTP4.E and End.M.GTP6.E
/// rebuild the message or drop it `malformed` (or `hmac_invalid`: at Segments Left 1
/// the TLVs are checked before End.M.GTP6.E sees them), and never panic.
#[test]
fn tagged_srh_with_any_tlv_area() {
    let t = tables(&format!("{GTP4_E}{}", GTP6_E.replace("fc00:6::/64", "fc00:8::/64")));
    let mut w = Worker::new(&t);
    let sid4 = u128::from(v6("fc00:6::")) | u128::from(u32::from(v4("198.51.100.9"))) << 48 | 5 << 24;
    let sid6 = u128::from(gtp6_sid("fc00:8::", 5 << 16));
    let mut areas: Vec<Vec<u8>> = vec![vec![0; 8], vec![0x0a; 8], vec![0xff; 16]];
    for b in 0..=255u8 {
        areas.push(vec![0x0a, 6, 1, b, 1, 2, 3, 4]);
        areas.push(vec![0x0a, b, 1, 2, 0, 0, 0, 0]);
        areas.push(vec![b, 6, 1, 2, 9, 9, 0, 0]);
    }
    let mut sent = 0;
    for tag in [0x0001u16, 0x0002, 0x0004, 0x0008, 0x000f] {
        for area in &areas {
            for (dst, segs, sl) in
                [(sid4, vec![Ipv6Addr::from(sid4)], 0u8), (sid6, vec![v6("fc00:7::5"), Ipv6Addr::from(sid6)], 1)]
            {
                let mut p = srv6("fc00:7::cb00:7107", Ipv6Addr::from(dst), 64, sl, &segs, 59, &[]);
                p[40 + 1] += (area.len() / 8) as u8;
                p[40 + 6..40 + 8].copy_from_slice(&tag.to_be_bytes());
                p.extend_from_slice(area);
                let plen = (p.len() - 40) as u16;
                p[4..6].copy_from_slice(&plen.to_be_bytes());
                let (v, _) = run(&t, &mut w, 1, &eth(0x86dd, &p));
                sent += usize::from(matches!(v, Verdict::Tx(_)));
                assert!(
                    matches!(v, Verdict::Tx(_) | Verdict::Drop(DropReason::Malformed | DropReason::HmacInvalid)),
                    "tag {tag:#x} area {area:02x?}: {v:?}"
                );
            }
        }
    }
    assert!(sent > 0 && drops(&w, DropReason::Malformed) > 0);
}

/// The seg6local actions of `spec`'s routes, as they are written back.
fn seg6local_actions(spec: &sr6_core::spec::RouterSpec) -> Vec<String> {
    spec.routes
        .iter()
        .filter_map(|r| match &r.kind {
            sr6_core::spec::RouteKind::Seg6Local { action, .. } => Some(action.to_string()),
            _ => None,
        })
        .collect()
}
