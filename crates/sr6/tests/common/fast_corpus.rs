//! The fast path's corpus: the tables of `fast_path.conf` and frames built to hit each
//! fast case and its neighbours (crates/sr6/tests/fast_path.rs, the XDP tier's
//! differential test crates/sr6/tests/xdp_path.rs).

use sr6_core::hmac::HmacKey;
use sr6_core::spec::HmacAlg;
use sr6_core::tables::Tables;

/// Shared with the `fast_path` fuzz target (fuzz/fuzz_targets/fast_path.rs).
pub const CONFIG: &str = include_str!("../fast_path.conf");
/// Ingress devices tried: those of the config (eth0..eth3) and one that does not exist.
pub const DEVS: u16 = 5;

pub fn tables() -> Tables {
    Tables::build(&sr6_config::parse_str(CONFIG, "fast.conf").unwrap()).unwrap().0
}

pub fn a(s: &str) -> [u8; 16] {
    s.parse::<std::net::Ipv6Addr>().unwrap().octets()
}

/// Ethernet + IPv6 (+ SRH with `segs` in header order) + `payload`.
pub fn frame(src: &str, dst: &str, hl: u8, srh: Option<(&[&str], u8, u8)>, payload: &[u8]) -> Vec<u8> {
    let mut f = vec![0x02, 0, 0, 0, 0, 0xa0, 0x02, 0, 0, 0, 0x0a, 0x02, 0x86, 0xdd];
    let srh_bytes = srh.map(|(segs, sl, nh)| {
        let mut s = vec![nh, (segs.len() * 2) as u8, 4, sl, (segs.len() - 1) as u8, 0, 0, 0];
        for x in segs {
            s.extend_from_slice(&a(x));
        }
        s
    });
    let srh_len = srh_bytes.as_ref().map_or(0, |s| s.len());
    let plen = (srh_len + payload.len()) as u16;
    f.extend_from_slice(&[0x60, 0x12, 0x34, 0x56]);
    f.extend_from_slice(&plen.to_be_bytes());
    f.push(if srh_bytes.is_some() { 43 } else { 17 });
    f.push(hl);
    f.extend_from_slice(&a(src));
    f.extend_from_slice(&a(dst));
    if let Some(s) = srh_bytes {
        f.extend_from_slice(&s);
    }
    f.extend_from_slice(payload);
    f
}

/// `f` (Ethernet + IPv6) with a Hop-by-Hop Options header of 8 bytes holding `opts`
/// (6 bytes) inserted after the IPv6 header.
pub fn with_hbh(f: &[u8], opts: [u8; 6]) -> Vec<u8> {
    let mut g = f[..54].to_vec();
    let plen = u16::from_be_bytes([g[18], g[19]]) + 8;
    g[18..20].copy_from_slice(&plen.to_be_bytes());
    g.extend_from_slice(&[g[20], 0]);
    g[20] = 0;
    g.extend_from_slice(&opts);
    g.extend_from_slice(&f[54..]);
    g
}

/// `f` (an IPv6 frame of [`frame`]) with a Hop-by-Hop Options header of `units` * 8
/// bytes in front of what followed the IPv6 header, holding one option of an unknown
/// type whose action is "skip" (0x1e): valid for `pipeline::hbh` and the kernel, which
/// refuse more than 7 bytes of padding.
pub fn with_skip_hbh(f: &[u8], units: usize) -> Vec<u8> {
    let len = units * 8;
    let mut hbh = vec![f[20], (units - 1) as u8, 0x1e, (len - 4) as u8];
    hbh.resize(len, 0);
    let mut g = f[..54].to_vec();
    g[20] = 0;
    let plen = u16::from_be_bytes([g[18], g[19]]) + len as u16;
    g[18..20].copy_from_slice(&plen.to_be_bytes());
    g.extend_from_slice(&hbh);
    g.extend_from_slice(&f[54..]);
    g
}

/// Hop-by-Hop options of each kind `pipeline::hbh` tells apart: PadN, Router Alert,
/// unknown types of action 00, 01, 10 and 11, a PadN with data, an overrun.
pub const HBH_OPTS: [[u8; 6]; 8] = [
    [1, 4, 0, 0, 0, 0],
    [5, 2, 0, 0, 1, 0],
    [0x1e, 0, 1, 2, 0, 0],
    [0x7e, 0, 1, 2, 0, 0],
    [0x9e, 0, 1, 2, 0, 0],
    [0xde, 0, 1, 2, 0, 0],
    [1, 4, 0, 9, 0, 0],
    [0x1e, 5, 0, 0, 0, 0],
];

/// The HMAC keys of `fast_path.conf`: Key ID 7 (SHA-256) and 8 (SHA-1).
pub fn hmac_key(key_id: u32) -> Option<HmacKey> {
    match key_id {
        7 => Some(HmacKey::new(HmacAlg::Sha256, b"fast-path-secret")),
        8 => Some(HmacKey::new(HmacAlg::Sha1, b"fast-path-sha1")),
        _ => None,
    }
}

/// `f` (a frame of [`frame`] with an SRH) with SRH flags `flags` and an HMAC TLV after
/// the Segment List (RFC 8754 §2.1.2): Key ID `key_id`, the HMAC of `fast_path.conf`'s
/// key of that id over the text, or one bit off it if `!right` (zeros without a key).
pub fn with_hmac(f: &[u8], key_id: u32, flags: u8, right: bool) -> Vec<u8> {
    let mut g = f.to_vec();
    g[59] = flags;
    let le1 = usize::from(g[58]) + 1;
    let at = 62 + 16 * le1;
    let src: [u8; 16] = g[22..38].try_into().unwrap();
    let mut mac = hmac_key(key_id).map_or([0; 32], |k| k.compute(&src, g[58], flags, key_id, &g[62..at]));
    mac[0] ^= u8::from(!right);
    let mut tlv = vec![5, 38, 0, 0];
    tlv.extend_from_slice(&key_id.to_be_bytes());
    tlv.extend_from_slice(&mac);
    g.splice(at..at, tlv);
    g[55] += 5;
    let plen = u16::from_be_bytes([g[18], g[19]]) + 40;
    g[18..20].copy_from_slice(&plen.to_be_bytes());
    g
}

pub fn inner6(dst: &str, hl: u8) -> Vec<u8> {
    let f = frame("fc00:b::5", dst, hl, None, &[0, 1, 0, 2, 0, 12, 0, 0, 1, 2, 3, 4]);
    f[14..].to_vec()
}

/// An IPv4 header (with `opts` bytes of options, checksum right unless `bad_sum`) +
/// `payload`.
pub fn ip4(dst: [u8; 4], ttl: u8, opts: usize, bad_sum: bool, payload: &[u8]) -> Vec<u8> {
    let hl = 20 + opts;
    let total = (hl + payload.len()) as u16;
    let mut h = vec![0x40 | (hl / 4) as u8, 0, 0, 0, 0x12, 0x34, 0x40, 0, ttl, 17, 0, 0, 10, 0, 1, 2];
    h[2..4].copy_from_slice(&total.to_be_bytes());
    h.extend_from_slice(&dst);
    h.resize(hl, 1);
    let mut sum: u32 = h.chunks(2).map(|w| u32::from(u16::from_be_bytes([w[0], w[1]]))).sum();
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    let c = !(sum as u16) ^ u16::from(bad_sum);
    h[10..12].copy_from_slice(&c.to_be_bytes());
    h.extend_from_slice(payload);
    h
}

/// [`ip4`] from `src`, a plain TTL-64 packet with a valid checksum.
pub fn ip4_from(src: [u8; 4], dst: [u8; 4], payload: &[u8]) -> Vec<u8> {
    let mut h = ip4(dst, 64, 0, false, payload);
    h[12..16].copy_from_slice(&src);
    h[10..12].fill(0);
    let mut sum: u32 = h[..20].chunks(2).map(|w| u32::from(u16::from_be_bytes([w[0], w[1]]))).sum();
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    h[10..12].copy_from_slice(&(!(sum as u16)).to_be_bytes());
    h
}

/// Ethernet (IPv4) + `l3`.
pub fn frame4(l3: &[u8]) -> Vec<u8> {
    let mut f = vec![0x02, 0, 0, 0, 0, 0xa0, 0x02, 0, 0, 0, 0x0a, 0x02, 0x08, 0x00];
    f.extend_from_slice(l3);
    f
}

/// UDP 2152 -> 2152 (no checksum) + a GTP-U header of message type `ty` (255: a T-PDU)
/// + `tpdu`.
pub fn gtpu(ty: u8, tpdu: &[u8]) -> Vec<u8> {
    let ulen = (16 + tpdu.len()) as u16;
    let mut u = vec![0x08, 0x68, 0x08, 0x68];
    u.extend_from_slice(&ulen.to_be_bytes());
    u.extend_from_slice(&[0, 0, 0x30, ty]);
    u.extend_from_slice(&(tpdu.len() as u16).to_be_bytes());
    u.extend_from_slice(&[0, 0, 0, 1]);
    u.extend_from_slice(tpdu);
    u
}

/// [`gtpu`] from `src` to `dst` over IPv6, its UDP checksum computed (RFC 8200 §8.1).
pub fn gtpu6(src: &str, dst: &str, ty: u8, tpdu: &[u8]) -> Vec<u8> {
    use sr6_wire::checksum;
    let mut u = gtpu(ty, tpdu);
    let (s, d) = (src.parse().unwrap(), dst.parse().unwrap());
    let c = checksum::fold(checksum::pseudo_header_v6(&s, &d, u.len() as u32, 17) + checksum::sum(&u));
    u[6..8].copy_from_slice(&c.to_be_bytes());
    u
}

/// The GTP-U frames of the RFC 9433 routes of fast_path.conf, at TTL / hop limit `hl`:
/// T-PDUs (IPv6, IPv4) and an Echo Request to the H.M.GTP4.D addresses, and SRv6 to an
/// End.M.GTP4.E SID carrying 20.5.5.5, QFI 9 and TEID 1 (with Segments Left 0 and 1);
/// then the same T-PDUs and Echo Request over IPv6 to End.M.GTP6.D and End.M.GTP6.Di,
/// and SRv6 to an End.M.GTP6.E SID (TEID 1) with Segments Left 1 and 0.
pub fn gtp_frames(hl: u8, udp: &[u8]) -> Vec<Vec<u8>> {
    let mut v = Vec::new();
    for dst in [[20, 7, 0, 1], [20, 8, 1, 1]] {
        for g in [gtpu(255, &inner6("fc00:3::4", 9)), gtpu(255, &ip4([20, 5, 5, 5], 9, 0, false, udp)), gtpu(1, &[])] {
            v.push(frame4(&ip4(dst, hl, 0, false, &g)));
        }
    }
    let sid = "fc00:1:9:1405:505:2400:0:100";
    v.push(frame("fc00:9::1", sid, hl, Some((&[sid], 0, 4)), &ip4([20, 5, 5, 5], 9, 0, false, udp)));
    v.push(frame("fc00:9::1", sid, hl, Some((&[sid], 0, 41)), &inner6("fc00:3::4", 9)));
    v.push(frame("fc00:9::1", sid, hl, Some((&["fc00:3::1", sid], 1, 41)), &inner6("fc00:3::4", 9)));
    for dst in ["fc00:1:a::1", "fc00:1:b::1"] {
        for t in [inner6("fc00:3::4", 9), ip4([20, 5, 5, 5], 9, 0, false, udp)] {
            v.push(frame("fc00:a::2", dst, hl, None, &gtpu6("fc00:a::2", dst, 255, &t)));
        }
        v.push(frame("fc00:a::2", dst, hl, None, &gtpu6("fc00:a::2", dst, 1, &[])));
    }
    let sid = "fc00:1:c::1:0:0";
    v.push(frame("fc00:9::1", sid, hl, Some((&["fc00:3::4", sid], 1, 41)), &inner6("fc00:3::4", 9)));
    v.push(frame("fc00:9::1", sid, hl, Some((&[sid], 0, 4)), &ip4([20, 5, 5, 5], 9, 0, false, udp)));
    // End.M.GTP4.E with no SRH (the SID alone in the destination), from a source that
    // carries 10.0.1.2 at bit 64, with a PDU Session Container (QFI 9) and without.
    for sid in ["fc00:1:9:1405:505:2400:0:100", "fc00:1:9:1405:505:0:0:100"] {
        v.push(bare("fc00:9::a00:102:0:0", sid, hl, 4, &ip4([20, 5, 5, 5], 9, 0, false, udp)));
        v.push(bare("fc00:9::a00:102:0:0", sid, hl, 41, &inner6("fc00:3::4", 9)));
    }
    v
}

/// Ethernet + IPv6 with Next Header `nh` and no extension header + `payload`.
pub fn bare(src: &str, dst: &str, hl: u8, nh: u8, payload: &[u8]) -> Vec<u8> {
    let mut f = frame(src, dst, hl, None, payload);
    f[20] = nh;
    f
}

pub fn frames() -> Vec<Vec<u8>> {
    let udp: &[u8] = &[0, 1, 0, 2, 0, 12, 0, 0, 9, 9, 9, 9];
    let mut v = super::example_frames();
    for hl in [64, 2, 1] {
        v.extend(gtp_frames(hl, udp));
        v.push(frame("fc00:a::2", "fc00:2::9", hl, None, udp));
        v.push(frame("fc00:a::2", "fc00:3::9", hl, None, udp));
        v.push(frame("fc00:a::2", "fc00:23::77", hl, None, udp));
        for d in ["fc00:40::9", "fc00:40::a", "fc00:40::1:b", "fc00:41::1"] {
            v.push(frame("fc00:a::2", d, hl, None, udp));
        }
        v.push(frame("fc00:9::1", "fc00:1::e", hl, Some((&["fc00:40::5", "fc00:1::e"], 1, 17)), udp));
        v.push(frame4(&ip4([30, 1, 2, 3], hl, 0, false, udp)));
        // Head-end policies: encap, inline and l2encap with 1 to 5 segments (every
        // header length `fast::rewrite_for` has code for, and others).
        for d in [
            "fc00:5::1",
            "fc00:6::1",
            "fc00:7::1",
            "fc00:8::1",
            "fc00:9::1",
            "fc00:b::1",
            "fc00:c::1",
            "fc00:d::1",
            "fc00:e::1",
            "fc00:f::1",
            "fc00:10::1",
            "fc00:31::1",
            "fc00:32::1",
            "fc00:33::1",
            "fc00:34::1",
            "fc00:42::1",
            "fc00:43::1",
            "fc00:44::1",
            "fc00:45::1",
            "fc00:46::1",
            "fc00:47::1",
            "fc00:48::1",
        ] {
            v.push(frame("fc00:a::2", d, hl, None, udp));
        }
        // H.Insert(.Red) of packets with a Hop-by-Hop header (the SRH goes after it,
        // on the general path), with and without an SRH already; End.B6 on an SRH
        // behind a Hop-by-Hop header.
        for d in ["fc00:7::1", "fc00:8::1", "fc00:d::1", "fc00:10::1"] {
            for units in [1, 3] {
                v.push(with_skip_hbh(&frame("fc00:a::2", d, hl, None, udp), units));
                v.push(with_skip_hbh(&frame("fc00:a::2", d, hl, Some((&["fc00:3::1", d], 1, 17)), udp), units));
            }
        }
        v.push(with_skip_hbh(
            &frame("fc00:9::1", "fc00:1::b1", hl, Some((&["fc00:3::1", "fc00:1::b1"], 1, 17)), udp),
            1,
        ));
        for sid in [
            "fc00:1::e",
            "fc00:1::e7",
            "fc00:1::e8",
            "fc00:1::c3",
            "fc00:1::c4",
            "fc00:1::c5",
            "fc00:1::c6",
            "fc00:1::7",
            "fc00:1::70",
            "fc00:1::78",
            "fc00:1::b1",
            "fc00:1::b2",
            "fc00:1::b6",
            "fc00:1::b7",
            "fc00:1::b8",
            "fc00:1::b9",
            "fc00:1::ba",
        ] {
            v.push(frame("fc00:9::1", sid, hl, Some((&["fc00:3::1", "fc00:2::1", sid], 2, 17)), udp));
            v.push(frame("fc00:9::1", sid, hl, Some((&["fc00:3::1", sid], 1, 17)), udp));
            v.push(frame("fc00:9::1", sid, hl, Some((&["fc00:3::1", sid], 3, 17)), udp));
            v.push(frame("fc00:9::1", sid, hl, Some((&["fc00:3::1", sid], 0, 17)), udp));
        }
        // Under the LPM's hash-mode root entries (fast_path.conf): transit, End and
        // End.T towards them, End.DT6 of packets for them.
        for d in [
            "2a00:1:2::9",
            "2a00:1:3::9",
            "2a00:1:4::9",
            "2a00:1:5::1",
            "2a00:1:6::1",
            "2a01:1:2::9",
            "2a01:1:3::1",
            "2a01:1:7::e",
        ] {
            v.push(frame("fc00:a::2", d, hl, None, udp));
            for sid in ["fc00:1::e", "fc00:1::7", "fc00:1::70"] {
                v.push(frame("fc00:9::1", sid, hl, Some((&[d, sid], 1, 17)), udp));
            }
            v.push(frame("fc00:9::1", "fc00:1::d7", hl, Some((&["fc00:1::d7"], 0, 41)), &inner6(d, 9)));
        }
        // Destinations the host takes before any SID: a link-local and a multicast SID,
        // and addresses under a SID prefix that holds fe80::/10 (and fec0::/10).
        for sid in ["fe80::e", "ff0e::e", "fe80::1", "fec0::1", "fe01::1"] {
            v.push(frame("fc00:9::1", sid, hl, Some((&["fc00:3::1", sid], 1, 17)), udp));
        }
        for sid in ["fc00:1::d6", "fc00:1::d7", "fc00:1::d8", "fc00:1::d9"] {
            v.push(frame("fc00:9::1", sid, hl, Some((&[sid], 0, 41)), &inner6("fc00:3::4", 9)));
            v.push(frame("fc00:9::1", sid, hl, Some((&[sid], 0, 41)), &inner6("fc00:3::4", 1)));
            v.push(frame("fc00:9::1", sid, hl, Some((&[sid, "fc00:2::1"], 1, 41)), &inner6("fc00:3::4", 9)));
            // Decapsulation's neighbours: the SRH's Next Header not 41, a PadN TLV after
            // the Segment List, no SRH, an inner packet that is no IPv6 one, an inner
            // Payload Length short of the rest.
            v.push(frame("fc00:9::1", sid, hl, Some((&[sid], 0, 17)), &inner6("fc00:3::4", 9)));
            let mut tlv = [4, 6, 0, 0, 0, 0, 0, 0].to_vec();
            tlv.extend_from_slice(&inner6("fc00:3::4", 9));
            let mut f = frame("fc00:9::1", sid, hl, Some((&[sid], 0, 41)), &tlv);
            f[55] += 1;
            v.push(f);
            v.push(frame("fc00:9::1", sid, hl, None, &inner6("fc00:3::4", 9)));
            let mut not6 = inner6("fc00:3::4", 9);
            not6[0] = 0x40;
            v.push(frame("fc00:9::1", sid, hl, Some((&[sid], 0, 41)), &not6));
            let mut longer = inner6("fc00:3::4", 9);
            longer.push(0);
            v.push(frame("fc00:9::1", sid, hl, Some((&[sid], 0, 41)), &longer));
        }
        // End.DX2: an inner Ethernet frame, a too short one, and an IPv6 packet.
        let l2 = frame4(&ip4([20, 5, 5, 5], 64, 0, false, udp));
        v.push(frame("fc00:9::1", "fc00:1::d2", hl, Some((&["fc00:1::d2"], 0, 143)), &l2));
        v.push(frame("fc00:9::1", "fc00:1::d2", hl, Some((&["fc00:1::d2"], 0, 143)), &l2[..13]));
        v.push(frame("fc00:9::1", "fc00:1::d2", hl, Some((&["fc00:1::d2", "fc00:2::1"], 1, 143)), &l2));
        v.push(frame("fc00:9::1", "fc00:1::d2", hl, Some((&["fc00:1::d2"], 0, 41)), &inner6("fc00:3::4", 9)));
        for sid in ["fc00:1::d4", "fc00:1::d5", "fc00:1::a4", "fc00:1::a6"] {
            for (ttl, opts, bad) in [(64, 0, false), (2, 0, false), (1, 0, false), (64, 4, false), (64, 0, true)] {
                let inner = ip4([20, 5, 5, 5], ttl, opts, bad, udp);
                v.push(frame("fc00:9::1", sid, hl, Some((&[sid], 0, 4)), &inner));
            }
            // End.DT4/DT46's VRF: gateway, /32, no neighbour, no route, multicast.
            for dst in [[20, 9, 9, 9], [20, 5, 5, 7], [20, 6, 1, 1], [30, 0, 0, 1], [224, 0, 0, 5]] {
                v.push(frame("fc00:9::1", sid, hl, Some((&[sid], 0, 4)), &ip4(dst, 64, 0, false, udp)));
            }
            v.push(frame(
                "fc00:9::1",
                sid,
                hl,
                Some((&[sid, "fc00:2::1"], 1, 4)),
                &ip4([20, 5, 5, 5], 9, 0, false, udp),
            ));
            v.push(frame("fc00:9::1", sid, hl, Some((&[sid], 0, 41)), &inner6("fc00:3::4", 9)));
        }
    }
    // A Hop-by-Hop Options header (pipeline::hbh) on transit, head-end, SID and
    // multicast frames: the fast path leaves them all to the general path.
    let plain = [
        frame("fc00:a::2", "fc00:2::9", 64, None, udp),
        frame("fc00:a::2", "2a00:1:2::9", 64, None, udp),
        frame("fc00:a::2", "fc00:5::1", 64, None, udp),
        frame("fc00:a::2", "fc00:7::1", 64, None, udp),
        frame("fc00:a::2", "ff0e::1", 64, None, udp),
        frame("fc00:9::1", "fc00:1::e", 64, Some((&["fc00:3::1", "fc00:1::e"], 1, 17)), udp),
        frame("fc00:9::1", "fc00:1::d6", 64, Some((&["fc00:1::d6"], 0, 41)), &inner6("fc00:3::4", 9)),
    ];
    for f in &plain {
        for o in HBH_OPTS {
            v.push(with_hbh(f, o));
        }
    }
    // NEXT-C-SID containers, with and without an SRH: shifted and forwarded; an
    // argument of zero (ordinary End), no route for the next C-SID, PSP, hop limits.
    for hl in [64, 2, 1, 0] {
        for d in [
            "fc00:60:e:2::",
            "fc00:60:e:3:2:7::",
            "fc00:60:e:7::",
            "fc00:60:e:9::",
            "fc00:60:e::",
            "fc00:60:e:0:0:0:0:2",
            "fc00:60:c3:2::",
            "fc00:60:c3::",
            "fc00:60:7e:3::",
            "fc00:60:7e:2::",
            "fc00:60:e7:2::",
            "fc61:e:2::",
            "fc62::ee02",
            "fc62::ee00",
        ] {
            v.push(frame("fc00:a::2", d, hl, None, udp));
            v.push(frame("fc00:9::1", d, hl, Some((&["fc00:3::1", d], 1, 17)), udp));
            v.push(frame("fc00:9::1", d, hl, Some((&[d], 0, 17)), udp));
        }
    }
    // Source and destination validation (pipeline::validate): martian and scoped
    // sources in transit, at SIDs, at head-ends and inside decapsulated packets; martian
    // destinations; and the unicast neighbours of those ranges.
    for src in ["::1", "::", "fe80::5", "ff02::1", "ff0e::1", "::ffff:10.0.0.1", "fec0::1", "fe7f::1", "1::1"] {
        for d in ["fc00:2::9", "fc00:a::9", "fc00:5::1", "fc00:7::1", "2a00:1:2::9"] {
            v.push(frame(src, d, 64, None, udp));
        }
        v.push(frame(src, "fc00:1::e", 64, Some((&["fc00:3::1", "fc00:1::e"], 1, 17)), udp));
        v.push(frame(src, "fc00:1::c3", 64, Some((&["fc00:3::1", "fc00:1::c3"], 1, 17)), udp));
        let mut inner = inner6("fc00:3::4", 9);
        inner[8..24].copy_from_slice(&a(src));
        for sid in ["fc00:1::d6", "fc00:1::d7", "fc00:1::a6"] {
            v.push(frame("fc00:9::1", sid, 64, Some((&[sid], 0, 41)), &inner));
        }
    }
    for dst in ["::1", "::", "::2", "ff00::1", "ff01::1", "ff02::1", "::ffff:10.0.0.1", "1::1"] {
        v.push(frame("fc00:a::2", dst, 64, None, udp));
    }
    // SRHs with an HMAC TLV (SHA-256 key 7, SHA-1 key 8; right, one bit off, a key
    // that does not exist; the H flag or none), at End, End.X, End.T, with PSP and at
    // decapsulating SIDs; with a PadN TLV after it; on eth3, which requires one, every
    // SID with none.
    for sid in ["fc00:1::e", "fc00:1::c3", "fc00:1::7", "fc00:1::e7", "fc00:1::c4", "fc00:1::78"] {
        let plain = [
            frame("fc00:9::1", sid, 64, Some((&["fc00:3::1", sid], 1, 17)), udp),
            frame("fc00:9::1", sid, 64, Some((&["fc00:3::1", "fc00:2::1", sid], 2, 17)), udp),
            frame("fc00:9::1", sid, 64, Some((&["fc00:3::1", sid], 1, 17)), &[1; 700]),
        ];
        for f in &plain {
            for (key, flags, right) in
                [(7, 0, true), (7, 8, true), (8, 0, true), (7, 0, false), (8, 8, false), (9, 0, true)]
            {
                v.push(with_hmac(f, key, flags, right));
            }
        }
        // Forged: a segment (the first, the last) or the flags changed under a right
        // HMAC; the TLV's type not HMAC's (PadN).
        for f in &plain {
            let le1 = usize::from(f[58]) + 1;
            for at in [62 + 15, 62 + 16 * le1 - 1] {
                let mut forged = with_hmac(f, 7, 0, true);
                forged[at] ^= 2;
                v.push(forged);
            }
            let mut forged = with_hmac(f, 7, 8, true);
            forged[59] = 0;
            v.push(forged);
            let mut padn = with_hmac(f, 7, 0, true);
            padn[62 + 16 * le1] = 4;
            v.push(padn);
        }
        let mut padded = with_hmac(&plain[0], 7, 0, true);
        let end = padded.len() - udp.len();
        padded.splice(end..end, [1, 6, 0, 0, 0, 0, 0, 0]);
        padded[55] += 1;
        let plen = u16::from_be_bytes([padded[18], padded[19]]) + 8;
        padded[18..20].copy_from_slice(&plen.to_be_bytes());
        v.push(padded);
    }
    for sid in ["fc00:1::d6", "fc00:1::d7", "fc00:1::a6"] {
        let f = frame("fc00:9::1", sid, 64, Some((&[sid], 0, 41)), &inner6("fc00:3::4", 9));
        for (key, right) in [(7, true), (8, true), (7, false)] {
            v.push(with_hmac(&f, key, 8, right));
        }
    }
    for sid in ["fc00:1::a4", "fc00:1::d4"] {
        let f = frame("fc00:9::1", sid, 64, Some((&[sid], 0, 4)), &ip4([20, 9, 9, 9], 9, 0, false, udp));
        for (key, right) in [(7, true), (7, false)] {
            v.push(with_hmac(&f, key, 8, right));
        }
    }
    let martians4 = [[0, 0, 0, 0], [0, 1, 2, 3], [127, 0, 0, 1], [224, 0, 0, 5], [240, 0, 0, 1], [255, 255, 255, 255]];
    let others4 = [[10, 0, 12, 1], [10, 0, 12, 255], [10, 0, 23, 255], [10, 0, 12, 0], [20, 5, 5, 5], [169, 254, 0, 1]];
    for src in martians4.iter().chain(&others4) {
        for dst in martians4.iter().chain(&others4).chain(&[[20, 1, 9, 9], [10, 0, 12, 2], [10, 0, 23, 9]]) {
            v.push(frame4(&ip4_from(*src, *dst, udp)));
        }
    }
    for dst in [
        [20, 5, 5, 5],
        [20, 1, 9, 9],
        [20, 1, 2, 3],
        [20, 2, 0, 1],
        [10, 0, 23, 9],
        [10, 0, 23, 50],
        [10, 0, 12, 1],
        [224, 0, 0, 5],
        [99, 0, 0, 1],
    ] {
        for (ttl, opts, bad) in
            [(64, 0, false), (2, 0, false), (1, 0, false), (0, 0, false), (64, 4, false), (64, 0, true)]
        {
            v.push(frame4(&ip4(dst, ttl, opts, bad, udp)));
        }
        // Ethernet padding.
        let mut f = frame4(&ip4(dst, 64, 0, false, &[1, 2]));
        f.resize(60, 0);
        v.push(f);
    }
    v
}
