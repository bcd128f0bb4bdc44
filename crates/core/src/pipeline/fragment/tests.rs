//! The fragmenter against RFC 791 §3.2's invariants, over every size around the
//! boundaries: each fragment fits the MTU, carries a multiple of 8 bytes unless it is the
//! last, has a valid header whose fields say where its data goes, and the pieces put
//! back by their offsets give the original data; options as the module says.

use super::split;
use proptest::prelude::*;
use sr6_wire::ipv4::{FLAG_DF, FLAG_MF, FRAG_OFFSET_MASK};
use sr6_wire::Ipv4Packet;

/// An IPv4 packet of `total` bytes with `options` (a multiple of 4 bytes), flags and
/// offset word `flags_frag`, TTL 63; the data bytes count up from 0.
fn packet(total: usize, options: &[u8], flags_frag: u16) -> Vec<u8> {
    let hlen = 20 + options.len();
    let mut b = vec![0u8; total];
    b[..20].copy_from_slice(&[0x45, 0x10, 0, 0, 0x12, 0x34, 0, 0, 63, 17, 0, 0, 10, 1, 0, 5, 10, 2, 0, 7]);
    b[20..hlen].copy_from_slice(options);
    for (i, x) in b[hlen..].iter_mut().enumerate() {
        *x = i as u8;
    }
    let mut ip = Ipv4Packet::new_unchecked(&mut b[..]);
    ip.set_header_len(hlen);
    ip.set_total_len(total as u16);
    ip.set_flags_frag(flags_frag);
    ip.fill_checksum();
    b
}

/// The fragments of `p` for `mtu` (header and data joined).
fn fragments(p: &[u8], mtu: usize) -> Option<Vec<Vec<u8>>> {
    let mut out = Vec::new();
    split(p, mtu, |h, d| {
        out.push([h, d].concat());
        true
    })
    .map(|n| {
        assert_eq!(n, out.len());
        out
    })
}

/// The options of `opts` with those whose copied flag is clear overwritten by NOPs.
fn reduced(opts: &[u8]) -> Vec<u8> {
    let mut o = opts.to_vec();
    let mut i = 0;
    while i < o.len() && o[i] != 0 {
        if o[i] == 1 {
            i += 1;
            continue;
        }
        let len = usize::from(o[i + 1]);
        if o[i] & 0x80 == 0 {
            o[i..i + len].fill(1);
        }
        i += len;
    }
    o
}

/// Checks the fragments `frags` of `p` for `mtu` against RFC 791 §3.2.
fn check(p: &[u8], mtu: usize, frags: &[Vec<u8>]) {
    let orig = Ipv4Packet::new_checked(p).unwrap();
    let hlen = orig.header_len();
    let off0 = orig.frag_offset();
    let mf0 = orig.flags_frag() & FLAG_MF != 0;
    let data = orig.payload();
    let mut got = vec![None; data.len()];
    let mut next = off0;
    for (k, f) in frags.iter().enumerate() {
        let ip = Ipv4Packet::new_checked(&f[..]).unwrap();
        assert!(f.len() <= mtu, "fragment {k} of {} bytes over MTU {mtu}", f.len());
        assert_eq!(usize::from(ip.total_len()), f.len());
        assert!(ip.verify_checksum(), "fragment {k}: bad checksum");
        assert_eq!(ip.header_len(), hlen);
        assert_eq!(ip.ident(), orig.ident());
        assert_eq!((ip.ttl(), ip.protocol(), ip.src_addr(), ip.dst_addr()), (63, 17, orig.src_addr(), orig.dst_addr()));
        assert_eq!(ip.flags_frag() & FLAG_DF, 0);
        let last = k + 1 == frags.len();
        let len = ip.payload().len();
        assert_eq!(ip.flags_frag() & FLAG_MF != 0, !last || mf0, "fragment {k}: MF");
        if !last {
            assert_eq!(len % 8, 0, "fragment {k}: {len} bytes, not a multiple of 8");
            assert_eq!(len, (mtu - hlen) & !7, "fragment {k}: not as large as the MTU allows");
        }
        let off = usize::from(ip.flags_frag() & FRAG_OFFSET_MASK) * 8;
        assert_eq!(off, next, "fragment {k}: offset");
        next += len;
        for (i, b) in ip.payload().iter().enumerate() {
            assert!(got[off - off0 + i].replace(*b).is_none(), "byte {} twice", off - off0 + i);
        }
        let opts = &orig.header()[20..];
        let want = if k > 0 && off0 == 0 { reduced(opts) } else { opts.to_vec() };
        assert_eq!(&ip.header()[20..], &want[..], "fragment {k}: options");
    }
    let back: Vec<u8> = got.into_iter().map(|b| b.expect("a byte no fragment carries")).collect();
    assert_eq!(back, data);
}

#[test]
fn every_size_and_mtu_reassembles_to_the_packet() {
    // A copied option (Stream ID), one not copied, NOP + End of list.
    let option_sets: [&[u8]; 4] =
        [&[], &[0x88, 4, 0x12, 0x34], &[0x1e, 4, 0xaa, 0xbb, 0x88, 4, 1, 2], &[1, 0x1e, 3, 9, 0x88, 2, 0, 0]];
    let mut forty = vec![0x1e, 6, 1, 2, 3, 4];
    forty.extend_from_slice(&[1; 34]);
    for opts in option_sets.iter().copied().chain([&forty[..]]) {
        let hlen = 20 + opts.len();
        for flags in [0, FLAG_MF, 3, FLAG_MF | 100] {
            for mtu in (hlen + 8..hlen + 40).chain([576, 1279, 1280, 1281, 1300, 1500]) {
                let big: &[usize] = if mtu >= 576 { &[1500, 3000, 9000] } else { &[1500] };
                for total in (hlen..hlen + 100).chain(mtu.saturating_sub(9)..mtu + 20).chain(big.iter().copied()) {
                    if total < hlen {
                        continue;
                    }
                    let p = packet(total, opts, flags);
                    let frags = fragments(&p, mtu).unwrap();
                    check(&p, mtu, &frags);
                    assert_eq!(frags.len() == 1, total <= mtu);
                }
            }
        }
    }
}

#[test]
fn the_first_fragment_is_as_large_as_the_mtu_allows_and_the_last_takes_the_rest() {
    // 1301 bytes, MTU 1300: 1280 + 1 byte (the kernel's 1300 + 21).
    let f = fragments(&packet(1301, &[], 0), 1300).unwrap();
    assert_eq!(f.iter().map(Vec::len).collect::<Vec<_>>(), [1300, 21]);
    // A 24-byte header: 1272 bytes in the first, up to 1276 in the last.
    let f = fragments(&packet(24 + 1272 + 1276, &[0x1e, 4, 0, 0], 0), 1300).unwrap();
    assert_eq!(f.iter().map(Vec::len).collect::<Vec<_>>(), [1296, 1300]);
}

#[test]
fn refuses_an_mtu_without_room_for_8_bytes_and_a_bad_header() {
    let p = packet(100, &[0x88, 4, 0, 0], 0);
    assert!(fragments(&p, 31).is_none());
    assert!(fragments(&p, 32).is_some());
    assert!(fragments(&p, 0).is_none());
    assert!(fragments(&p[..50], 60).is_none());
    assert!(fragments(&[0x46; 40], 30).is_none());
}

#[test]
fn stops_when_the_output_refuses() {
    let p = packet(3000, &[], 0);
    let mut n = 0;
    assert!(split(&p, 1300, |_, _| {
        n += 1;
        n < 2
    })
    .is_none());
    assert_eq!(n, 2);
}

#[test]
fn bytes_after_total_length_are_not_sent() {
    let mut p = packet(1400, &[], 0);
    p.extend_from_slice(&[0xee; 30]);
    let f = fragments(&p, 1300).unwrap();
    check(&p[..1400], 1300, &f);
}

proptest! {
    /// Never a panic, whatever the bytes and the MTU; when it splits, the fragments are right.
    #[test]
    fn never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..3000), mtu in 0usize..2000) {
        if let Some(f) = fragments(&bytes, mtu) {
            prop_assert!(!f.is_empty());
            let ip = Ipv4Packet::new_checked(&bytes[..]).unwrap();
            let total = usize::from(ip.total_len());
            // A received offset near the top of the range wraps as the kernel's does;
            // the invariants hold below it.
            if ip.frag_offset() + total < 65_536 && options_well_formed(&bytes) {
                check_loose(&bytes[..total], mtu, &f);
            }
        }
    }

    /// Well-formed packets of any size, options, flags and MTU.
    #[test]
    fn well_formed_packets_reassemble(
        total in 20usize..4000,
        nopts in 0usize..=10,
        copied in any::<bool>(),
        flags in prop_oneof![Just(0u16), Just(FLAG_MF), 1u16..200, (1u16..200).prop_map(|o| o | FLAG_MF)],
        mtu in 68usize..2000,
    ) {
        let mut opts = vec![if copied { 0x88 } else { 0x1e }, (nopts * 4).min(40) as u8];
        opts.resize((nopts * 4).min(40), 1);
        if nopts == 0 {
            opts.clear();
        }
        let hlen = 20 + opts.len();
        prop_assume!(total >= hlen);
        let p = packet(total, &opts, flags);
        let f = fragments(&p, mtu).unwrap();
        check(&p, mtu, &f);
    }
}

/// The option list parses to its end (or an End of list) without a bad length.
fn options_well_formed(p: &[u8]) -> bool {
    let ip = Ipv4Packet::new_unchecked(p);
    let o = &ip.header()[20..];
    let mut i = 0;
    while i < o.len() && o[i] != 0 {
        if o[i] == 1 {
            i += 1;
            continue;
        }
        match o.get(i + 1) {
            Some(&l) if l >= 2 && i + usize::from(l) <= o.len() => i += usize::from(l),
            _ => return false,
        }
    }
    true
}

/// [`check`] for a packet of any bytes: each fragment's checksum is verified, then
/// TTL, protocol and checksums are made what `check` expects of every packet.
fn check_loose(p: &[u8], mtu: usize, frags: &[Vec<u8>]) {
    assert!(frags.iter().all(|f| Ipv4Packet::new_checked(&f[..]).unwrap().verify_checksum()));
    let mut p = p.to_vec();
    let mut frags = frags.to_vec();
    for b in std::iter::once(&mut p).chain(frags.iter_mut()) {
        let mut ip = Ipv4Packet::new_unchecked(&mut b[..]);
        ip.set_protocol(17);
        ip.set_ttl(63);
        ip.fill_checksum();
    }
    check(&p, mtu, &frags);
}
