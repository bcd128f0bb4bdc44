//! Property test: every parser, view getter, chain walk and TLV iteration
//! accepts arbitrary bytes without panicking (the in-tree twin of
//! `fuzz/fuzz_targets/parse_headers.rs`).

use proptest::prelude::*;

use crate::*;

/// Runs every parser and getter over `data`, as the fuzz target does.
fn exercise(data: &[u8]) {
    // Views built unchecked must not panic either.
    let f = EthernetFrame::new_unchecked(data);
    let _ = (f.dst_addr(), f.src_addr(), f.ethertype(), f.vlan(), f.header_len());
    let _ = (f.payload_ethertype(), f.payload().len(), f.addrs());

    let ip4 = Ipv4Packet::new_unchecked(data);
    let _ = (ip4.version(), ip4.header_len(), ip4.dscp_ecn(), ip4.total_len(), ip4.ident());
    let _ = (ip4.flags_frag(), ip4.ttl(), ip4.protocol(), ip4.checksum());
    let _ = (ip4.src_addr(), ip4.dst_addr(), ip4.verify_checksum(), ip4.payload().len());
    let _ = ip4.frag_offset();
    let _ = Ipv4Repr::parse(&ip4);

    let ip6 = Ipv6Packet::new_unchecked(data);
    let _ = (ip6.version(), ip6.traffic_class(), ip6.flow_label(), ip6.payload_len());
    let _ = (ip6.next_header(), ip6.hop_limit(), ip6.src_addr(), ip6.dst_addr());
    let _ = ip6.payload().len();
    let _ = Ipv6Repr::parse(&ip6);
    let _ = walk_chain(data);

    let srh = SrhPacket::new_unchecked(data);
    let _ = (srh.check_len(), srh.check_segments(), srh.check_segments_left());
    let _ = (srh.next_header(), srh.hdr_ext_len(), srh.header_len(), srh.routing_type());
    let _ = (srh.segments_left(), srh.last_entry(), srh.flags(), srh.tag());
    for i in 0..=255u8 {
        let _ = (srh.segment(i), srh.segment_offset(i));
    }
    let _ = srh.segments().count();
    let _ = (srh.tlv_offset(), srh.tlv_area().len(), srh.segment_list().len());
    for t in srh.tlvs() {
        let _ = t;
    }
    let _ = SrhRepr::parse(&srh);
    let _ = find_hmac(data);
    for t in TlvIter::new(data) {
        let _ = t;
    }
    let h = HmacTlv::new_unchecked(data);
    let _ = (h.d_flag(), h.key_id(), h.hmac().len(), h.length(), h.reserved());
    let _ = HmacTlvRepr::parse(&h);

    let u = UdpPacket::new_unchecked(data);
    let _ = (u.check_len(), u.src_port(), u.dst_port(), u.len(), u.checksum());
    let g = GtpuPacket::new_unchecked(data);
    let _ = (g.check_len(), g.version(), g.msg_type(), g.length(), g.teid(), g.seq(), g.npdu());
    let _ = (g.header_len(), g.pdu_session(), g.payload().len());
    let _ = GtpuRepr::parse(&g);
    let a6 = std::net::Ipv6Addr::LOCALHOST;

    let i = Icmpv6Packet::new_unchecked(data);
    let _ = (i.msg_type(), i.code(), i.checksum(), i.param(), i.payload().len());
    let _ = (i.check_len(), i.is_error());
    let _ = Icmpv6Repr::parse(&i);
    let i4 = Icmpv4Packet::new_unchecked(data);
    let _ = (i4.check_len(), i4.msg_type(), i4.is_error());

    let e = ExtHeader::new_unchecked(data);
    let _ = (e.check_len(), e.next_header(), e.header_len(), e.routing_type(), e.segments_left());
    let fr = FragmentHeader::new_unchecked(data);
    let _ = (fr.frag_offset(), fr.more_frags(), fr.ident(), fr.next_header());

    // Setters on a copy of arbitrary bytes must not panic either.
    let mut m = data.to_vec();
    let mut s = SrhPacket::new_unchecked(&mut m[..]);
    s.set_segment(200, &a6);
    s.set_tag(1);
    let _ = s.tlv_area_mut().len();
    let mut p4 = Ipv4Packet::new_unchecked(&mut m[..]);
    p4.decrement_ttl();
    p4.fill_checksum();
    let _ = p4.payload_mut().len();
    Icmpv4Repr::ttl_exceeded().emit(&mut Icmpv4Packet::new_unchecked(&mut m[..]));
    Icmpv6Repr::hop_limit_exceeded().emit(&a6, &a6, &mut Icmpv6Packet::new_unchecked(&mut m[..]));
    let mut p6 = Ipv6Packet::new_unchecked(&mut m[..]);
    p6.set_flow_label(u32::MAX);
    let _ = p6.payload_mut().len();
    let mut u = UdpPacket::new_unchecked(&mut m[..]);
    u.set_len(u16::MAX);
    u.set_checksum(1);
    let mut ic = Icmpv6Packet::new_unchecked(&mut m[..]);
    ic.fill_checksum(&a6, &a6);

    // The layered path of the fuzz target.
    if let Ok(f) = EthernetFrame::new_checked(data) {
        let payload = f.payload();
        match f.payload_ethertype() {
            ETHERTYPE_IPV4 => {
                if let Ok(p) = Ipv4Packet::new_checked(payload) {
                    let _ = UdpPacket::new_checked(p.payload());
                }
            }
            _ => {
                if let Ok(info) = walk_chain(payload) {
                    if let Some(r) = info.routing {
                        let bytes = payload.get(r.offset..r.offset + r.len).unwrap_or_default();
                        if let Ok(s) = SrhPacket::new_checked(bytes) {
                            for t in s.tlvs() {
                                let _ = t;
                            }
                            let _ = find_hmac(s.tlv_area());
                        }
                    }
                    let upper = payload.get(info.upper..).unwrap_or_default();
                    let _ = UdpPacket::new_checked(upper);
                    let _ = Icmpv6Packet::new_checked(upper);
                }
            }
        }
    }
}

/// Bytes that look like Ethernet + IPv6 + a chain, so the deep paths are hit.
fn plausible() -> impl Strategy<Value = Vec<u8>> {
    (
        proptest::collection::vec(any::<u8>(), 0..300),
        prop::sample::select(vec![0u8, 43, 44, 51, 60, 17, 58, 59]),
        any::<u16>(),
    )
        .prop_map(|(mut tail, nh, plen)| {
            let mut v = vec![2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2, 0x86, 0xdd, 0x60, 0, 0, 0];
            let plen = if tail.is_empty() { 0 } else { plen % (tail.len() as u16 + 8) };
            v.extend_from_slice(&plen.to_be_bytes());
            v.push(nh);
            v.push(64);
            v.extend_from_slice(&[0u8; 32]);
            v.append(&mut tail);
            v
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn arbitrary_bytes_never_panic(data in proptest::collection::vec(any::<u8>(), 0..400)) {
        exercise(&data);
        // The same bytes seen past an Ethernet header and as an IPv6 packet body.
        if data.len() > 14 {
            exercise(&data[14..]);
        }
    }

    #[test]
    fn plausible_packets_never_panic(data in plausible()) {
        exercise(&data);
        exercise(&data[14..]);
    }
}
