//! Fuzz target: feeds the input to every `sr6-wire` parser, layer by layer
//! (Ethernet -> IPv4/IPv6 -> extension chain -> SRH -> TLVs/HMAC ->
//! UDP/GTP-U/ICMPv6), calls every getter, and also parses the raw input directly
//! with each view. Any panic is a bug: after `new_checked` no accessor may
//! panic, and unchecked views must not panic either.
//!
//! Run: `cargo fuzz run parse_headers` from this directory.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sr6_wire::*;

/// Keeps a value alive for the optimiser without a `must_use` warning.
fn sink<T>(t: T) {
    std::hint::black_box(t);
}

fn srh(bytes: &[u8]) {
    let s = SrhPacket::new_unchecked(bytes);
    sink((s.check_len(), s.check_segments(), s.check_segments_left()));
    sink((s.next_header(), s.hdr_ext_len(), s.header_len(), s.routing_type()));
    sink((s.segments_left(), s.last_entry(), s.flags(), s.tag(), s.segment_count()));
    for i in 0..=u8::MAX {
        sink((s.segment(i), s.segment_offset(i)));
    }
    sink(s.segments().count());
    sink((s.tlv_offset(), s.tlv_area(), s.segment_list()));
    for t in s.tlvs() {
        if let Ok(t) = t {
            sink((t.offset, t.kind, t.value, t.total_len(), t.is_padding()));
        }
    }
    if let Ok(Some((off, h))) = find_hmac(s.tlv_area()) {
        sink((off, h.d_flag(), h.key_id(), h.hmac(), h.reserved(), h.total_len()));
        sink(HmacTlvRepr::parse(&h));
    }
    if let Ok(r) = SrhRepr::parse(&s) {
        sink(r.buffer_len());
        let mut out = vec![0u8; r.buffer_len()];
        r.emit(&mut SrhPacket::new_unchecked(&mut out[..]));
        let back = SrhPacket::new_checked(&out[..]).expect("emitted SRH must parse");
        assert_eq!(SrhRepr::parse(&back).map(|b| b.segments), Ok(r.segments));
    }
}

fn udp_icmp(upper: &[u8]) {
    let u = UdpPacket::new_unchecked(upper);
    sink((u.check_len(), u.src_port(), u.dst_port(), u.len(), u.checksum()));
    // GTP-U (3GPP TS 29.281) over the UDP payload, and over the bytes as they are.
    for b in [upper.get(8..).unwrap_or_default(), upper] {
        let g = GtpuPacket::new_unchecked(b);
        sink((g.check_len(), g.version(), g.msg_type(), g.length(), g.teid(), g.seq(), g.npdu()));
        sink((g.header_len(), g.pdu_session(), g.payload().len(), GtpuRepr::parse(&g)));
    }
    let i = Icmpv6Packet::new_unchecked(upper);
    sink((i.check_len(), i.msg_type(), i.code(), i.checksum(), i.param()));
    sink((i.payload(), i.is_error()));
    sink(Icmpv6Repr::parse(&i));
}

fn ipv6(bytes: &[u8]) {
    let p = Ipv6Packet::new_unchecked(bytes);
    sink((p.check_len(), p.version(), p.traffic_class(), p.flow_label()));
    sink((p.payload_len(), p.next_header(), p.hop_limit(), p.payload(), p.total_len()));
    sink(Ipv6Repr::parse(&p));
    sink((p.src_addr(), p.dst_addr()));
    let Ok(info) = walk_chain(bytes) else { return };
    sink((info.fragment, info.upper, info.upper_proto, info.upper_nh_field));
    if let Some(r) = info.routing {
        sink((r.nh_field, r.routing_type, r.segments_left));
        let rh = bytes.get(r.offset..r.offset + r.len).expect("walk_chain offsets are in range");
        let e = ExtHeader::new_checked(rh).expect("walk_chain checked the header");
        sink((e.next_header(), e.hdr_ext_len(), e.header_len(), e.routing_type(), e.segments_left()));
        srh(rh);
    }
    if let Some(f) = info.fragment {
        let fh = FragmentHeader::new_checked(&bytes[f..]).expect("walk_chain checked it");
        sink((fh.next_header(), fh.frag_offset(), fh.more_frags(), fh.ident()));
    }
    let end = p.total_len();
    let upper = bytes.get(info.upper..end).expect("upper is inside the packet");
    udp_icmp(upper);
}

fn ipv4(bytes: &[u8]) {
    let p = Ipv4Packet::new_unchecked(bytes);
    sink((p.check_len(), p.version(), p.header_len(), p.dscp_ecn(), p.total_len()));
    sink((p.ident(), p.flags_frag(), p.ttl(), p.protocol(), p.checksum()));
    sink((p.src_addr(), p.dst_addr(), p.verify_checksum(), p.payload(), p.header()));
    sink(p.frag_offset());
    sink(Ipv4Repr::parse(&p));
    if let Ok(p) = Ipv4Packet::new_checked(bytes) {
        let i = Icmpv4Packet::new_unchecked(p.payload());
        sink((i.check_len(), i.msg_type(), i.is_error()));
        let u = UdpPacket::new_unchecked(p.payload());
        sink((u.check_len(), u.src_port(), u.dst_port()));
        let mut copy = bytes.to_vec();
        let mut m = Ipv4Packet::new_unchecked(&mut copy[..]);
        if m.verify_checksum() {
            m.decrement_ttl();
            assert!(m.verify_checksum(), "RFC 1624 update broke the checksum");
        }
    }
}

fuzz_target!(|data: &[u8]| {
    // Layered, as the data plane sees a frame.
    let f = EthernetFrame::new_unchecked(data);
    sink((f.check_len(), f.dst_addr(), f.src_addr(), f.ethertype(), f.vlan()));
    sink((f.header_len(), f.payload_ethertype(), f.payload(), f.addrs()));
    if let Ok(f) = EthernetFrame::new_checked(data) {
        match f.payload_ethertype() {
            ETHERTYPE_IPV4 => ipv4(f.payload()),
            ETHERTYPE_IPV6 => ipv6(f.payload()),
            _ => {}
        }
    }
    // Every view straight over the raw input.
    ipv4(data);
    ipv6(data);
    srh(data);
    udp_icmp(data);
    for t in TlvIter::new(data) {
        sink(t);
    }
    sink(find_hmac(data));
    let h = HmacTlv::new_unchecked(data);
    sink((h.check_len(), h.kind(), h.length(), h.d_flag(), h.key_id(), h.hmac()));
    let fr = FragmentHeader::new_unchecked(data);
    sink((fr.check_len(), fr.next_header(), fr.frag_offset(), fr.ident()));
});
