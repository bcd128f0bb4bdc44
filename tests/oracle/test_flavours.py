"""PSP / USP / USD flavours and upper-layer processing at Segments Left 0
(behaviours.md "Upper layer with Segments Left == 0 / no SRH", "Flavours";
RFC 8986 §4.1.1, §4.16)."""
from sr6_oracle import (
    ADDR6, HOST_A, IP, NH_ICMPV6, NH_IPV4, NH_IPV6, NH_UDP, SEG_B, ICMPv6EchoRequest, IPv6, Raw, code4_pointer,
    config, icmp6_error, l3, rx, sr_pkt, srh, tx, udp4, udp6, udp_bytes,
)

SID = "fc00:f::1"
FINAL = "fc00:2::99"
PREV = "fc00:a::1"   # the segment before SID (already visited)


def sid(flavors="", action="End", params=""):
    fl = f" flavors {flavors}" if flavors else ""
    return config(f"ip -6 route add {SID}/128 encap seg6local action {action}{params}{fl} dev eth0")


# --- PSP ----------------------------------------------------------------------------------


def test_psp_removes_srh_when_segments_left_becomes_zero(run_sr6):
    pkt = sr_pkt(SID, [FINAL, SID], 1, hlim=64, tc=0x3C, fl=0xF00D)
    res = run_sr6(sid("psp"), [rx(pkt)])
    # RFC 8986 §4.16.1: after S16, SL == 0 -> pop the SRH; Payload Length and Next Header
    # updated (scapy recomputes plen; nh = the SRH's Next Header, UDP).
    exp = IPv6(src=HOST_A, dst=FINAL, hlim=63, tc=0x3C, fl=0xF00D, nh=NH_UDP) / Raw(udp_bytes(HOST_A, FINAL))
    res.expect(eth1=[tx(exp, "eth1")])


def test_psp_with_ipv6_payload(run_sr6):
    inner = udp6(src="fc00:a::200", dst="fc00:2::77", hlim=9)
    pkt = sr_pkt(SID, [FINAL, SID], 1, nh=NH_IPV6, inner=inner)
    res = run_sr6(sid("psp"), [rx(pkt)])
    exp = IPv6(src=HOST_A, dst=FINAL, hlim=63, nh=NH_IPV6) / inner
    res.expect(eth1=[tx(exp, "eth1")])


def test_psp_with_tlvs_still_removes_whole_srh(run_sr6):
    from sr6_oracle import IPv6ExtHdrSegmentRoutingTLVPadN
    pkt = sr_pkt(SID, [FINAL, SID], 1, tlvs=[IPv6ExtHdrSegmentRoutingTLVPadN(len=6, padding=b"\0" * 6)])
    res = run_sr6(sid("psp"), [rx(pkt)])
    exp = IPv6(src=HOST_A, dst=FINAL, hlim=63, nh=NH_UDP) / Raw(udp_bytes(HOST_A, FINAL))
    res.expect(eth1=[tx(exp, "eth1")])


def test_psp_not_applied_when_segments_left_stays_positive(run_sr6):
    segs = [FINAL, SEG_B, SID]
    pkt = sr_pkt(SID, segs, 2)
    res = run_sr6(sid("psp"), [rx(pkt)])
    res.expect(eth1=[tx(sr_pkt(SEG_B, segs, 1, hlim=63), "eth1")])


def test_psp_on_end_x(run_sr6):
    cfg = sid("psp", "End.X", " nh6 fc00:13::2")
    pkt = sr_pkt(SID, [FINAL, SID], 1)
    res = run_sr6(cfg, [rx(pkt)])
    exp = IPv6(src=HOST_A, dst=FINAL, hlim=63, nh=NH_UDP) / Raw(udp_bytes(HOST_A, FINAL))
    res.expect(eth2=[tx(exp, "eth2")])


# --- Segments Left 0 without flavours ------------------------------------------------------


def icmp_to_sid(sl_segs=(SID, PREV)):
    echo = ICMPv6EchoRequest(id=7, seq=1, data=b"ping")
    # ICMPv6 checksum over the final destination Segment List[0] == SID (RFC 8200 §8.1).
    return IPv6(src=HOST_A, dst=SID, hlim=64) / srh(list(sl_segs), segleft=0, nh=NH_ICMPV6) / echo


def test_end_sl0_icmpv6_goes_to_local_unchanged(run_sr6):
    f = rx(icmp_to_sid())
    res = run_sr6(sid(), [f])
    res.expect(local=[f])


def test_end_no_srh_icmpv6_goes_to_local_unchanged(run_sr6):
    f = rx(IPv6(src=HOST_A, dst=SID, hlim=64) / ICMPv6EchoRequest(id=7, seq=2))
    res = run_sr6(sid(), [f])
    res.expect(local=[f])


def test_end_sl0_ipv6_inner_without_usd_is_param_problem_code_4(run_sr6):
    inner = udp6(src="fc00:a::200", dst="fc00:2::77")
    pkt = sr_pkt(SID, [SID, PREV], 0, nh=NH_IPV6, inner=inner)
    f = rx(pkt)
    res = run_sr6(sid(), [f])
    # Pointer at the SRH's Next Header field (offset 40), behaviours.md; see code4_pointer.
    err = icmp6_error("param_problem", l3(f), src=ADDR6["eth0"], dst=HOST_A, code=4, ptr=code4_pointer(pkt))
    res.expect(eth0=[tx(err, "eth0")])
    assert code4_pointer(pkt) in (40, 40 + 8 * 5)


def test_end_sl0_udp_upper_layer_is_param_problem_code_4(run_sr6):
    pkt = sr_pkt(SID, [SID, PREV], 0)
    f = rx(pkt)
    res = run_sr6(sid(), [f])
    err = icmp6_error("param_problem", l3(f), src=ADDR6["eth0"], dst=HOST_A, code=4, ptr=code4_pointer(pkt))
    res.expect(eth0=[tx(err, "eth0")])


def test_end_no_srh_ipv6_inner_without_usd_is_param_problem_code_4(run_sr6):
    pkt = IPv6(src=HOST_A, dst=SID, hlim=64, nh=NH_IPV6) / udp6(src="fc00:a::200", dst="fc00:2::77")
    f = rx(pkt)
    res = run_sr6(sid(), [f])
    # No SRH: the Next Header field naming the upper layer is the fixed header's (offset 6).
    err = icmp6_error("param_problem", l3(f), src=ADDR6["eth0"], dst=HOST_A, code=4, ptr=code4_pointer(pkt))
    res.expect(eth0=[tx(err, "eth0")])


# --- USP ----------------------------------------------------------------------------------


def test_usp_removes_srh_then_icmpv6_goes_to_local(run_sr6):
    pkt = icmp_to_sid()
    f = rx(pkt)
    res = run_sr6(sid("usp"), [f])
    # RFC 8986 §4.16.2: pop the SRH, then process the upper layer (ICMPv6 -> local).
    # The host stack gets the packet without the SRH (Next Header 58, Payload Length
    # fixed, hop limit unchanged, same Ethernet header).  [ambiguity: behaviours.md says
    # "goes to local, unchanged" for frames for the router itself; USP modifies first.]
    stripped = IPv6(src=HOST_A, dst=SID, hlim=64, nh=NH_ICMPV6) / Raw(bytes(pkt[ICMPv6EchoRequest]))
    exp = f.copy()
    exp.remove_payload()
    exp = exp / stripped
    res.expect(local=[exp])


def test_usp_does_not_touch_packets_with_segments_left(run_sr6):
    segs = [FINAL, SEG_B, SID]
    pkt = sr_pkt(SID, segs, 2)
    res = run_sr6(sid("usp"), [rx(pkt)])
    res.expect(eth1=[tx(sr_pkt(SEG_B, segs, 1, hlim=63), "eth1")])


# --- USD ----------------------------------------------------------------------------------


def test_usd_decapsulates_ipv6_inner_at_sl0(run_sr6):
    inner = udp6(src="fc00:a::200", dst="fc00:2::77", hlim=30, tc=0x14, fl=0x77)
    pkt = sr_pkt(SID, [SID, PREV], 0, nh=NH_IPV6, inner=inner)
    res = run_sr6(sid("usd"), [rx(pkt)])
    out = inner.copy(); out.hlim = 29  # forwarded by the main table: hop limit - 1
    res.expect(eth1=[tx(out, "eth1")])


def test_usd_decapsulates_ipv4_inner_at_sl0(run_sr6):
    inner = udp4(src="10.1.0.7", dst="10.2.0.9", ttl=30)
    pkt = sr_pkt(SID, [SID, PREV], 0, nh=NH_IPV4, inner=inner)
    res = run_sr6(sid("usd"), [rx(pkt)])
    out = inner.copy(); out.ttl = 29; out.chksum = None
    res.expect(eth1=[tx(IP(bytes(out)), "eth1")])


def test_usd_decapsulates_without_srh(run_sr6):
    inner = udp6(src="fc00:a::200", dst="fc00:3::77", hlim=30)
    pkt = IPv6(src=HOST_A, dst=SID, hlim=64, nh=NH_IPV6) / inner
    res = run_sr6(sid("usd"), [rx(pkt)])
    out = inner.copy(); out.hlim = 29
    res.expect(eth2=[tx(out, "eth2")])


def test_usd_on_end_t_uses_its_table(run_sr6):
    cfg = config(
        "ip -6 route add fc00:2::/48 via fc00:13::2 dev eth2 table 100",
        f"ip -6 route add {SID}/128 encap seg6local action End.T table 100 flavors usd dev eth0",
    )
    inner = udp6(src="fc00:a::200", dst="fc00:2::77", hlim=30)
    pkt = sr_pkt(SID, [SID, PREV], 0, nh=NH_IPV6, inner=inner)
    res = run_sr6(cfg, [rx(pkt)])
    out = inner.copy(); out.hlim = 29
    res.expect(eth2=[tx(out, "eth2")])


def test_usd_on_end_x_uses_nh6_adjacency(run_sr6):
    cfg = sid("usd", "End.X", " nh6 fc00:13::2")
    inner = udp6(src="fc00:a::200", dst="fc00:2::77", hlim=30)
    pkt = sr_pkt(SID, [SID, PREV], 0, nh=NH_IPV6, inner=inner)
    res = run_sr6(cfg, [rx(pkt)])
    out = inner.copy(); out.hlim = 29
    res.expect(eth2=[tx(out, "eth2")])


def test_usd_with_udp_upper_layer_is_param_problem_code_4(run_sr6):
    pkt = sr_pkt(SID, [SID, PREV], 0)
    f = rx(pkt)
    res = run_sr6(sid("usd"), [f])
    err = icmp6_error("param_problem", l3(f), src=ADDR6["eth0"], dst=HOST_A, code=4, ptr=code4_pointer(pkt))
    res.expect(eth0=[tx(err, "eth0")])


def test_psp_usd_combined_behaves_per_segments_left(run_sr6):
    inner = udp6(src="fc00:a::200", dst="fc00:3::77", hlim=30)
    at_penultimate = sr_pkt(SID, [FINAL, SID], 1)
    at_last = sr_pkt(SID, [SID, PREV], 0, nh=NH_IPV6, inner=inner)
    res = run_sr6(sid("psp,usd"), [rx(at_penultimate), rx(at_last)])
    out = inner.copy(); out.hlim = 29
    res.expect(
        eth1=[tx(IPv6(src=HOST_A, dst=FINAL, hlim=63, nh=NH_UDP) / Raw(udp_bytes(HOST_A, FINAL)), "eth1")],
        eth2=[tx(out, "eth2")],
    )
