"""Error handling (behaviours.md "Endpoint behaviours" SRH checks, "Local address that is
not a SID", "ICMPv6 errors"; RFC 8754 §4.3, RFC 8986 §4.1, RFC 4443)."""
import pytest

from sr6_oracle import (
    ADDR6, GW6_MAC, HOST_A, ICMP6_ERROR_MAX, MAC, NH_ETHERNET, NH_ICMPV6, NH_IPV4, NH_IPV6, NH_UDP, OFF_SRH_SL,
    SEG_B, Ether, ICMPv6DestUnreach, ICMPv6EchoRequest, IPv6, Raw, code4_pointer, config, icmp6_error, l3, rx, sr_pkt, srh, tx, udp4, udp6, udp_bytes,
)

SID = "fc00:f::1"
FINAL = "fc00:2::99"
PREV = "fc00:a::1"
END = f"ip -6 route add {SID}/128 encap seg6local action End dev eth0"


def pp(frame, code, ptr, src=ADDR6["eth0"]):
    return tx(icmp6_error("param_problem", l3(frame), src=src, dst=HOST_A, code=code, ptr=ptr), "eth0")


# --- SRH checks -----------------------------------------------------------------------------


def test_segments_left_greater_than_last_entry_plus_one(run_sr6):
    f = rx(sr_pkt(SID, [FINAL, SID], 3))  # LE = 1, SL = 3 > LE + 1
    res = run_sr6(config(END), [f])
    # Pointer = offset of Segments Left = 40 + 3 (RFC 8754 §2 layout; see OFF_SRH_SL).
    res.expect(eth0=[pp(f, 0, OFF_SRH_SL)])
    assert OFF_SRH_SL == 43


def test_segments_left_equal_last_entry_plus_one_is_valid(run_sr6):
    # Reduced SRH: SL = LE + 1 is legal.
    res = run_sr6(config(END), [rx(sr_pkt(SID, [FINAL], 1))])
    res.expect(eth1=[tx(sr_pkt(FINAL, [FINAL], 0, hlim=63), "eth1")])


def test_last_entry_beyond_header_length(run_sr6):
    # Hdr Ext Len 4 holds 2 segments (max_LE = 4/2 - 1 = 1), Last Entry says 3.
    f = rx(sr_pkt(SID, [FINAL, SID], 1, lastentry=3))
    res = run_sr6(config(END), [f])
    res.expect(eth0=[pp(f, 0, OFF_SRH_SL)])


@pytest.mark.parametrize("hlim", [1, 0])
def test_hop_limit_exhausted_at_end_quotes_unmodified_packet(run_sr6, hlim):
    pkt = sr_pkt(SID, [FINAL, SEG_B, SID], 2, hlim=hlim)
    f = rx(pkt)
    res = run_sr6(config(END), [f])
    # The quote is the packet as received: DA = SID, SL = 2, hop limit unchanged.
    err = icmp6_error("time_exceeded", l3(f), src=ADDR6["eth0"], dst=HOST_A)
    res.expect(eth0=[tx(err, "eth0")])


def test_hop_limit_1_at_sl0_is_not_an_error(run_sr6):
    # SL == 0 is checked before the hop limit: ICMPv6 upper layer -> local.
    pkt = IPv6(src=HOST_A, dst=SID, hlim=1) / srh([SID, PREV], segleft=0, nh=NH_ICMPV6) / ICMPv6EchoRequest()
    f = rx(pkt)
    res = run_sr6(config(END), [f])
    res.expect(local=[f])


# --- decapsulation behaviours -------------------------------------------------------------

DECAP = {
    "End.DX6": (" nh6 fc00:13::2", NH_IPV6),
    "End.DX4": (" nh4 10.0.13.2", NH_IPV4),
    "End.DX2": (" oif eth2", NH_ETHERNET),
    "End.DT6": (" table 100", NH_IPV6),
    "End.DT4": (" vrftable 100", NH_IPV4),
    "End.DT46": (" vrftable 100", NH_IPV6),
}
TABLE100 = (
    "ip -6 route add fc00:9::/64 via fc00:13::2 dev eth2 table 100",
    "ip route add 10.9.0.0/16 via 10.0.13.2 dev eth2 table 100",
)


def decap_cfg(action):
    params, _ = DECAP[action]
    return config(*TABLE100, f"ip -6 route add {SID}/128 encap seg6local action {action}{params} dev eth0")


def inner_for(nh):
    if nh == NH_IPV6:
        return udp6(src="fc00:a::200", dst="fc00:9::5")
    if nh == NH_IPV4:
        return udp4(src="10.1.0.7", dst="10.9.0.5")
    if nh == NH_ETHERNET:
        return Raw(bytes(Ether(src="02:bb:00:00:00:01", dst="02:bb:00:00:00:02") / udp4()))
    return Raw(udp_bytes(HOST_A, SID))


@pytest.mark.parametrize("action", DECAP.keys())
def test_decap_with_segments_left_nonzero_is_param_problem_code_0(run_sr6, action):
    _, nh = DECAP[action]
    pkt = sr_pkt(SID, [FINAL, SID], 1, nh=nh, inner=inner_for(nh))
    f = rx(pkt)
    res = run_sr6(decap_cfg(action), [f])
    res.expect(eth0=[pp(f, 0, OFF_SRH_SL)])


WRONG_NH = {
    "End.DX6": NH_IPV4,
    "End.DX4": NH_IPV6,
    "End.DX2": NH_IPV6,
    "End.DT6": NH_UDP,
    "End.DT4": NH_IPV6,
    "End.DT46": NH_UDP,
}


@pytest.mark.parametrize("action", WRONG_NH.keys())
def test_decap_with_wrong_next_header_is_param_problem_code_4(run_sr6, action):
    nh = WRONG_NH[action]
    pkt = sr_pkt(SID, [SID, PREV], 0, nh=nh, inner=inner_for(nh))
    f = rx(pkt)
    res = run_sr6(decap_cfg(action), [f])
    res.expect(eth0=[pp(f, 4, code4_pointer(pkt))])


# --- garbage --------------------------------------------------------------------------------


def _eth(type_, body=b""):
    return bytes(Ether(src=GW6_MAC["eth0"], dst=MAC["eth0"], type=type_)) + body


GOOD = udp6(dst="fc00:2::5")
_good_l3 = bytes(GOOD)
_srh_l3 = bytes(sr_pkt(SID, [FINAL, SID], 1))
_v4 = bytes(udp4())

GARBAGE = {
    "runt_frame": bytes(rx(GOOD))[:10],
    "ethernet_header_only_ipv6": _eth(0x86DD),
    "ipv6_truncated_header": _eth(0x86DD, _good_l3[:20]),
    "ipv6_payload_length_exceeds_frame": _eth(0x86DD, _good_l3[:4] + b"\x05\xdc" + _good_l3[6:]),
    "ipv6_wrong_version": _eth(0x86DD, b"\x40" + _good_l3[1:]),
    "srh_truncated": _eth(0x86DD, _srh_l3[:4] + (len(_srh_l3[:60]) - 40).to_bytes(2, "big") + _srh_l3[6:60]),
    "srh_hdr_ext_len_beyond_packet": _eth(0x86DD, _srh_l3[:41] + b"\x20" + _srh_l3[42:]),
    "ipv4_truncated_header": _eth(0x0800, _v4[:12]),
    "ipv4_bad_ihl": _eth(0x0800, b"\x43" + _v4[1:]),
    "ipv4_total_length_exceeds_frame": _eth(0x0800, _v4[:2] + b"\x05\xdc" + _v4[4:]),
    "random_bytes_as_ipv6": _eth(0x86DD, bytes((i * 37 + 11) & 0xFF for i in range(70))),
}


@pytest.mark.parametrize("name", GARBAGE.keys())
def test_garbage_is_dropped_and_counted(run_sr6, name):
    bad = GARBAGE[name]
    # The good packet after the garbage proves sr6 survived it.
    res = run_sr6(config(END), [bad, rx(GOOD)])
    res.expect(eth1=[tx(IPv6(bytes(GOOD)[:7] + b"\x3f" + bytes(GOOD)[8:]), "eth1")])
    assert res.json["packets_in"] == 2
    assert res.drop_total() == 1, f"drops: {res.drops()}"


def test_all_garbage_in_one_capture(run_sr6):
    frames = list(GARBAGE.values()) + [rx(GOOD)]
    res = run_sr6(config(END), frames)
    assert res.emitted() == {"eth1": 1}
    assert res.local == []
    assert res.drop_total() == len(GARBAGE), f"drops: {res.drops()}"


# --- local address that is not a SID (RFC 8754 §4.3.2) --------------------------------------

LOCAL = ADDR6["eth0"]
SEG6_ON = ("sysctl -w net.ipv6.conf.all.seg6_enabled=1", "sysctl -w net.ipv6.conf.eth0.seg6_enabled=1")


def to_local(sl, nh=NH_ICMPV6):
    inner = ICMPv6EchoRequest(id=3, seq=4) if nh == NH_ICMPV6 else None
    return IPv6(src=HOST_A, dst=LOCAL, hlim=64) / srh([LOCAL, PREV] if sl == 0 else ["fc00:2::8", LOCAL], segleft=sl,
                                                       nh=nh) / (inner if inner is not None else Raw(b""))


def test_local_address_with_srh_seg6_disabled_by_default_is_dropped(run_sr6):
    res = run_sr6(config(), [rx(to_local(0))])
    res.expect_nothing()
    assert res.drops().get("seg6_disabled") == 1


def test_local_address_with_srh_seg6_enabled_on_device_only_is_dropped(run_sr6):
    # min(all, dev): all = 0 (default) keeps it disabled.
    res = run_sr6(config("sysctl -w net.ipv6.conf.eth0.seg6_enabled=1"), [rx(to_local(0))])
    res.expect_nothing()
    assert res.drops().get("seg6_disabled") == 1


def test_local_address_with_srh_sl0_goes_to_local(run_sr6):
    f = rx(to_local(0))
    res = run_sr6(config(*SEG6_ON), [f])
    res.expect(local=[f])


def test_local_address_with_srh_sl_positive_is_param_problem(run_sr6):
    f = rx(to_local(1, nh=NH_ICMPV6))
    res = run_sr6(config(*SEG6_ON), [f])
    # From the offending packet's destination (a local address), RFC 8754 §4.3.2.
    res.expect(eth0=[pp(f, 0, OFF_SRH_SL, src=LOCAL)])


def test_local_address_without_srh_goes_to_local(run_sr6):
    f = rx(IPv6(src=HOST_A, dst=LOCAL, hlim=64) / ICMPv6EchoRequest(id=1))
    res = run_sr6(config(), [f])
    res.expect(local=[f])


# --- ICMPv6 error rules ---------------------------------------------------------------------


def test_no_icmp_error_about_an_icmpv6_error(run_sr6):
    err_in = IPv6(src=HOST_A, dst="fc00:2::5", hlim=1) / ICMPv6DestUnreach(code=3) / Raw(_good_l3)
    res = run_sr6(config(), [rx(err_in)])
    res.expect_nothing()
    assert res.drop_total() == 1, f"the packet is still dropped and counted: {res.drops()}"


def test_no_icmp_error_about_an_icmpv6_error_without_route(run_sr6):
    err_in = IPv6(src=HOST_A, dst="fc00:99::5", hlim=64) / ICMPv6DestUnreach(code=3) / Raw(_good_l3)
    res = run_sr6(config(), [rx(err_in)])
    res.expect_nothing()
    assert res.drop_total() == 1, f"the packet is still dropped and counted: {res.drops()}"


def test_icmp_error_is_sent_for_icmpv6_informational(run_sr6):
    # Echo Request (type 128) is not an error: Time Exceeded is due.
    pkt = IPv6(src=HOST_A, dst="fc00:2::5", hlim=1) / ICMPv6EchoRequest(id=9)
    f = rx(pkt)
    res = run_sr6(config(), [f])
    res.expect(eth0=[tx(icmp6_error("time_exceeded", l3(f), src=ADDR6["eth0"], dst=HOST_A), "eth0")])


def test_no_icmp_error_to_unspecified_source(run_sr6):
    res = run_sr6(config(), [rx(udp6(src="::", hlim=1))])
    res.expect_nothing()
    assert res.drop_total() == 1, f"the packet is still dropped and counted: {res.drops()}"


def test_no_icmp_error_to_multicast_source(run_sr6):
    res = run_sr6(config(), [rx(udp6(src="ff0e::1", hlim=1))])
    res.expect_nothing()
    assert res.drop_total() == 1, f"the packet is still dropped and counted: {res.drops()}"


def test_icmp_error_for_1500_byte_packet_is_at_most_1280_bytes(run_sr6):
    pkt = udp6(hlim=1, n=1500 - 48)
    assert len(pkt) == 1500
    f = rx(pkt)
    res = run_sr6(config(), [f])
    err = icmp6_error("time_exceeded", l3(f), src=ADDR6["eth0"], dst=HOST_A)
    assert len(err) == ICMP6_ERROR_MAX
    res.expect(eth0=[tx(err, "eth0")])
    got = res.frames("eth0")[0]
    assert len(got) - 14 <= ICMP6_ERROR_MAX


def test_icmp_error_for_1500_byte_srv6_packet_is_at_most_1280_bytes(run_sr6):
    segs = [FINAL, SEG_B, SID]
    pkt = sr_pkt(SID, segs, 2, hlim=1, inner=Raw(udp_bytes(HOST_A, FINAL, n=1500 - 40 - 56 - 8)))
    assert len(pkt) == 1500
    f = rx(pkt)
    res = run_sr6(config(END), [f])
    err = icmp6_error("time_exceeded", l3(f), src=ADDR6["eth0"], dst=HOST_A)
    res.expect(eth0=[tx(err, "eth0")])
