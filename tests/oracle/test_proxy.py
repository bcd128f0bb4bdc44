"""SR proxies for SR-unaware service functions (issue 27): End.AS, End.AD, End.EAD4/6,
End.AM, built from draft-ietf-spring-sr-service-programming §6 (SRv6 pseudocode of the
static §6.1, dynamic §6.2 and masquerading §6.4 proxies), the thesis (Abdelsalam 2020)
§3.5 for SREXT's End.EAD* and the "univocally mappable" iif rule, and the VPP srv6-as /
srv6-ad / srv6-am plugin documentation.

Part 1 of each proxy: a packet whose active segment is the proxy SID arrives from the
network (on eth0) and goes to the function (out of the proxy's oif, to nh's MAC).
Part 2: the function sends traffic back on the proxy's iif; the proxy restores the SR
information (or, End.AM, de-masquerades) and the packet goes on by the main table.
Both parts run in one `sr6 pcap` with inputs on several devices (conftest ``run_sr6``
with ``[(dev, frame), ...]``), so a dynamic proxy's cache learned from one frame applies
to the frames after it.

Topology: sr6_oracle's eth0 (A: sources fc00:a::/64), eth1 (B: fc00:2::/48), eth2 (C:
fc00:3::/48), plus the function's links eth3 (fc00:f0::/64, 10.0.240.0/24; the function
is fc00:f0::2 / 10.0.240.2) and eth4 (fc00:f1::/64; a second link back from it)."""
import json
import re

import pytest
from scapy.layers.inet6 import ICMPv6ND_NS, IPv6ExtHdrDestOpt, PadN

from sr6_oracle import (
    ADDR6, ARP, HOST_A, IP, MAC, NH_ETHERNET, NH_IPV4, NH_IPV6, NH_UDP, OFF_SRH_SL, SEG_B, SEG_C,
    UDP, Ether, IPv6, IPv6ExtHdrSegmentRouting, IPv6ExtHdrSegmentRoutingTLV, IPv6ExtHdrSegmentRoutingTLVPadN, Raw, config, icmp6_error, l3,
    policy, rx, sid_entry, srh, tx, udp4, udp6, udp_bytes,
)

# --- topology ------------------------------------------------------------------------------

MACS = {**MAC, "eth3": "02:00:00:00:00:04", "eth4": "02:00:00:00:00:05"}
ADDR6_FN = {"eth3": "fc00:f0::1", "eth4": "fc00:f1::1"}
FN6, FN6_MAC = "fc00:f0::2", "02:ff:00:00:00:02"     # the function (IPv6), on eth3
FN4, FN4_MAC = "10.0.240.2", "02:ff:00:00:00:42"     # the function (IPv4), on eth3
FN_MAC_ETH4 = "02:ff:00:00:01:02"                    # the function's side of eth4

PROXY_BASE = [
    "ip link set eth3 address 02:00:00:00:00:04",
    "ip link set eth4 address 02:00:00:00:00:05",
    "ip -6 addr add fc00:f0::1/64 dev eth3",
    "ip -6 addr add fc00:f1::1/64 dev eth4",
    "ip addr add 10.0.240.1/24 dev eth3",
    "ip addr add 10.0.241.1/24 dev eth4",
    f"ip -6 neigh add {FN6} lladdr {FN6_MAC} dev eth3",
    f"ip neigh add {FN4} lladdr {FN4_MAC} dev eth3",
    f"ip -6 route add {FN6}/128 dev eth3",
    f"ip route add {FN4}/32 dev eth3",
]

AS6, AS4, AS2 = "fc00:f::a6", "fc00:f::a4", "fc00:f::a2"
AD6, AD4 = "fc00:f::d6", "fc00:f::d4"
EAD6, EAD4 = "fc00:f::e6", "fc00:f::e4"
AM, AM2 = "fc00:f::a3", "fc00:f::a8"
END = "fc00:f::1"

OUT_SRC = "fc00:a::e1"       # the chain's head-end (behind eth0)
FINAL = "fc00:2::99"         # the chain's last segment, behind B
FINAL_C = "fc00:3::99"       # another chain's last segment, behind C
AS_SRC = "fc00:e::a5"        # End.AS's CACHE.SA
AS_SEGS = [SEG_B, SEG_C, FINAL]  # End.AS's CACHE.LIST in travel order (S1 out eth1)


def cfg(*lines):
    return config(*PROXY_BASE, *lines)


def as_line(sid, nh, oif="eth3", iif="eth3", src=AS_SRC, segs=AS_SEGS):
    nh = f"{nh} " if nh else ""
    return (f"ip -6 route add {sid}/128 encap seg6local action End.AS {nh}oif {oif} iif {iif} "
            f"src {src} segs {','.join(segs)} dev eth0")


def proxy_line(action, sid, nh, oif="eth3", iif="eth3", flavors=None):
    fl = f" flavors {flavors}" if flavors else ""
    return f"ip -6 route add {sid}/128 encap seg6local action {action} {nh} oif {oif} iif {iif}{fl} dev eth0"


AS6_LINE = as_line(AS6, f"nh6 {FN6}")
AS4_LINE = as_line(AS4, f"nh4 {FN4}")
AS2_LINE = as_line(AS2, None)
AD6_LINE = proxy_line("End.AD", AD6, f"nh6 {FN6}")
AD4_LINE = proxy_line("End.AD", AD4, f"nh4 {FN4}")
EAD6_LINE = proxy_line("End.EAD6", EAD6, f"nh6 {FN6}")
EAD4_LINE = proxy_line("End.EAD4", EAD4, f"nh4 {FN4}")
AM_LINE = proxy_line("End.AM", AM, f"nh6 {FN6}")
END_LINE = f"ip -6 route add {END}/128 encap seg6local action End dev eth0"

# --- packets -------------------------------------------------------------------------------


def inner6(hlim=40, n=16, tc=0x20, fl=0x12345, src="fc00:a::200", dst="fc00:b::5"):
    return udp6(src=src, dst=dst, hlim=hlim, tc=tc, fl=fl, n=n)


def inner4(ttl=30, n=16, src="10.1.0.7", dst="10.9.0.9"):
    return udp4(src=src, dst=dst, ttl=ttl, n=n)


def chain(sid, inner, nh, segs=None, sl=2, hlim=64, tc=0, fl=0, src=OUT_SRC, **kw):
    """An encapsulated packet of a chain whose active segment is ``sid``: IPv6(src, sid) /
    SRH(segs in header order, default [FINAL, SEG_B, sid], SL) / inner."""
    if segs is None:
        segs = [FINAL, SEG_B, sid]
    return IPv6(src=src, dst=sid, hlim=hlim, tc=tc, fl=fl) / srh(segs, segleft=sl, nh=nh, **kw) / inner


def from_fn(l3pkt, dev="eth3"):
    """A frame the function sends back to sr6 on ``dev``."""
    src = FN_MAC_ETH4 if dev == "eth4" else (FN4_MAC if isinstance(l3pkt, IP) else FN6_MAC)
    return Ether(src=src, dst=MACS[dev]) / l3pkt


def to_fn6(l3pkt):
    """The frame sr6 sends to the IPv6 function (out of eth3, to its neighbour entry)."""
    return Ether(src=MACS["eth3"], dst=FN6_MAC) / l3pkt


def to_fn4(l3pkt):
    return Ether(src=MACS["eth3"], dst=FN4_MAC) / l3pkt


def dec6(p, by=1):
    q = p.copy()
    q[IPv6].hlim = p[IPv6].hlim - by
    return IPv6(bytes(q))


def dec4(p, by=1):
    """IPv4 packet with TTL - by and its header checksum recomputed (RFC 791)."""
    q = p.copy()
    q.ttl = p.ttl - by
    q.chksum = None
    return IP(bytes(q))


def h_encaps(inner, src=AS_SRC, segs=AS_SEGS, nh=NH_IPV6, eth_frame=None):
    """What `encap seg6 mode encap segs S1,..,Sn` builds for a received ``inner`` and the
    forwarding step after it (test_headend.py, behaviours.md "Head-end"): outer hop limit =
    inner's - 1 for IPv6 (traffic class and flow label copied), 63 for IPv4 (0, 0);
    DA = S1; SRH with the list in header order, SL = n - 1; the inner packet untouched.
    Ethernet (``eth_frame``): the frame as received is the payload (next header 143), the
    outer fields from the IP packet it carries (as l2encap)."""
    ipp = inner
    if IPv6 in ipp:
        ip6 = ipp[IPv6]
        outer = IPv6(src=src, dst=segs[0], hlim=ip6.hlim - 1, tc=ip6.tc, fl=ip6.fl)
    else:
        outer = IPv6(src=src, dst=segs[0], hlim=63, tc=0, fl=0)
    payload = Raw(bytes(eth_frame)) if eth_frame is not None else inner
    return outer / srh(policy(*segs), segleft=len(segs) - 1, nh=nh) / payload


@pytest.mark.parametrize("kind", ["ipv6", "ipv4", "ethernet"])
def test_h_encaps_oracle_is_sr6_head_end(run_sr6, kind):
    """The oracle's H.Encaps (above) against sr6's own head-end route on the same
    received packet (itself checked against scapy in test_headend.py and against the
    kernel in tests/kernel): End.AS's inbound policy must build these bytes."""
    segs = ",".join(AS_SEGS)
    if kind == "ipv6":
        ipp = inner6(hlim=38, tc=0xB8, fl=0xABCDE)
        frame, exp = from_fn(ipp), h_encaps(ipp)
        route = f"ip -6 route add fc00:b::/64 encap seg6 mode encap segs {segs} dev eth1"
    elif kind == "ipv4":
        ipp = inner4(ttl=17)
        frame, exp = from_fn(ipp), h_encaps(ipp, nh=NH_IPV4)
        route = f"ip route add 10.9.0.0/16 encap seg6 mode encap segs {segs} dev eth1"
    else:
        ipp = inner6(hlim=20, tc=0x08, fl=0x55)
        frame = Ether(src="02:bb:00:00:00:02", dst="02:bb:00:00:00:01") / ipp
        exp = h_encaps(ipp, nh=NH_ETHERNET, eth_frame=frame)
        route = f"ip -6 route add fc00:b::/64 encap seg6 mode l2encap segs {segs} dev eth1"
    res = run_sr6(cfg(f"ip sr tunsrc set {AS_SRC}", route), [("eth3", frame)])
    res.expect(eth1=[tx(exp, "eth1")])


# --- JSON ----------------------------------------------------------------------------------


def proxy_entry(js, sid):
    """The ``proxies`` entry of ``sid`` (docs: one per proxy SID)."""
    assert "proxies" in js, f"no 'proxies' array in the JSON report: {sorted(js)}"
    for e in js["proxies"]:
        s = str(e.get("sid", ""))
        if s == sid or s == f"{sid}/128":
            return e
    raise AssertionError(f"proxy {sid} not in the JSON proxies: {js['proxies']}")


def counter(entry, name):
    """A proxy counter: at the top of the entry or under ``counters``."""
    if name in entry:
        return entry[name]
    c = entry.get("counters", {})
    assert name in c, f"proxy counter {name!r} missing in {entry}"
    return c[name]


def counters(js, sid, **want):
    e = proxy_entry(js, sid)
    got = {k: counter(e, k) for k in want}
    assert got == want, f"proxy {sid} counters: got {got}, expected {want}\n{e}"


def end_reason(run_sr6, pkt):
    """The drop reason End counts for ``pkt`` (its destination rewritten to an End SID):
    the spec makes the proxies count SL = 0 / no SRH as End does."""
    p = pkt.copy()
    p[IPv6].dst = END
    res = run_sr6(cfg(END_LINE), [rx(IPv6(bytes(p)))])
    assert len(res.drops()) == 1, res.drops()
    return next(iter(res.drops()))


# ============================================================================================
# End.AS: static proxy (draft §6.1)
# ============================================================================================


def test_as_ipv6_to_function_decapsulates(run_sr6):
    inner = inner6()
    res = run_sr6(cfg(AS6_LINE), [rx(chain(AS6, inner, NH_IPV6))])
    # §6.1 SRv6 pseudocode: End step, remove the outer header and its extension headers,
    # forward the inner packet on IFACE-OUT to S-ADDR (as End.DX6: inner hop limit - 1).
    res.expect(eth3=[to_fn6(dec6(inner))])
    assert sid_entry(res.json, AS6)["packets"] == 1
    counters(res.json, AS6, to_function=1, from_function=0)


def test_as_ipv6_from_function_is_encapsulated_as_h_encaps(run_sr6):
    back = inner6(hlim=38, n=40, tc=0xB8, fl=0xABCDE)
    res = run_sr6(cfg(AS6_LINE), [("eth3", from_fn(back))])
    # §6.1 inbound policy: IPv6 header SA = CACHE.SA, DA = S1, SRH = CACHE.LIST, SL = n-1,
    # then forwarded by the lookup of S1 (SEG_B: out of eth1).
    res.expect(eth1=[tx(h_encaps(back), "eth1")])
    counters(res.json, AS6, to_function=0, from_function=1)


def test_as_both_directions_in_one_run(run_sr6):
    inner, back = inner6(), inner6(hlim=38, dst="fc00:a::201")
    res = run_sr6(cfg(AS6_LINE), [("eth0", rx(chain(AS6, inner, NH_IPV6))), ("eth3", from_fn(back))])
    res.expect(eth3=[to_fn6(dec6(inner))], eth1=[tx(h_encaps(back), "eth1")])
    counters(res.json, AS6, to_function=1, from_function=1)


def test_as_ipv4_to_function_decapsulates(run_sr6):
    inner = inner4(ttl=30)
    res = run_sr6(cfg(AS4_LINE), [rx(chain(AS4, inner, NH_IPV4))])
    # As End.DX4: TTL - 1, checksum updated, to nh4's MAC.
    res.expect(eth3=[to_fn4(dec4(inner))])


def test_as_ipv4_from_function_is_encapsulated_as_h_encaps(run_sr6):
    back = inner4(ttl=17, n=33)
    res = run_sr6(cfg(AS4_LINE), [("eth3", from_fn(back))])
    res.expect(eth1=[tx(h_encaps(back, nh=NH_IPV4), "eth1")])


def test_as_ethernet_to_function_sends_the_frame_unchanged(run_sr6):
    frame = Ether(src="02:bb:00:00:00:01", dst="02:bb:00:00:00:02") / inner6(dst="fc00:b::2")
    res = run_sr6(cfg(AS2_LINE), [rx(chain(AS2, Raw(bytes(frame)), NH_ETHERNET))])
    # Inner type Ethernet (no nh): like End.DX2, the frame goes out of oif as it is.
    res.expect(eth3=[frame])


@pytest.mark.parametrize("payload", ["ipv6", "ipv4"])
def test_as_ethernet_from_function_is_encapsulated_with_the_frame(run_sr6, payload):
    ipp = inner6(hlim=20, tc=0x08, fl=0x55) if payload == "ipv6" else inner4(ttl=9)
    frame = Ether(src="02:bb:00:00:00:02", dst="02:bb:00:00:00:01") / ipp
    res = run_sr6(cfg(AS2_LINE), [("eth3", frame)])
    # Next header 143, the frame as received (no FCS) the payload; outer fields as
    # sr6's l2encap takes them from the IP packet in the frame.
    res.expect(eth1=[tx(h_encaps(ipp, nh=NH_ETHERNET, eth_frame=frame), "eth1")])


def test_as_return_on_a_separate_iif(run_sr6):
    back = inner6(hlim=12)
    line = as_line(AS6, f"nh6 {FN6}", oif="eth3", iif="eth4")
    res = run_sr6(cfg(line), [("eth4", from_fn(back, "eth4")), ("eth3", from_fn(inner6(hlim=11), "eth3"))])
    # Only eth4 is the proxy's iif: the same kind of packet on eth3 is plain forwarding
    # (fc00:b::5 has no route: Destination Unreachable back toward the source).
    got = res.frames("eth1")
    assert got == [bytes(tx(h_encaps(back), "eth1"))], res.emitted()
    assert res.drops().get("no_route") == 1, res.drops()


def test_as_return_inner_hop_limit_exhausted_is_time_exceeded(run_sr6):
    # The inbound policy builds what H.Encaps builds for the packet, then forwards it:
    # as for a head-end route (test_headend), an IPv6 packet arriving with hop limit 1
    # cannot be forwarded: Time Exceeded quoting it as received, from the arrival
    # device's address (RFC 6724 rule 5), toward its source (behind eth0).
    back = inner6(hlim=1)
    f = from_fn(back)
    res = run_sr6(cfg(AS6_LINE), [("eth3", f)])
    err = icmp6_error("time_exceeded", l3(f), src=ADDR6_FN["eth3"], dst="fc00:a::200")
    res.expect(eth0=[tx(err, "eth0")])


# --- End.AS errors --------------------------------------------------------------------------


def test_as_wrong_inner_type_to_function_is_dropped(run_sr6):
    # Configured for IPv6 (nh6), the inner packet is IPv4.
    res = run_sr6(cfg(AS6_LINE), [rx(chain(AS6, inner4(), NH_IPV4))])
    res.expect_nothing()
    assert res.drops() == {"wrong_next_header": 1}, res.drops()


def test_as_ethernet_proxy_refuses_an_ip_inner(run_sr6):
    res = run_sr6(cfg(AS2_LINE), [rx(chain(AS2, inner6(), NH_IPV6))])
    res.expect_nothing()
    assert res.drops() == {"wrong_next_header": 1}, res.drops()


def test_as_wrong_type_from_function_is_dropped(run_sr6):
    res = run_sr6(cfg(AS6_LINE), [("eth3", from_fn(inner4()))])
    res.expect_nothing()
    assert res.drops() == {"wrong_next_header": 1}, res.drops()


def test_as_segments_left_0_is_dropped(run_sr6):
    pkt = chain(AS6, inner6(), NH_IPV6, segs=[AS6, FINAL], sl=0)
    reason = end_reason(run_sr6, pkt)
    res = run_sr6(cfg(AS6_LINE), [rx(pkt)])
    # §6.1: "IF NH=SRH and SL > 0 ... ELSE Drop the packet" -- dropped, no ICMP error.
    res.expect_nothing()
    assert res.drops() == {reason: 1}, res.drops()


def test_as_without_srh_is_dropped(run_sr6):
    pkt = IPv6(src=OUT_SRC, dst=AS6, hlim=64) / inner6()
    reason = end_reason(run_sr6, pkt)
    res = run_sr6(cfg(AS6_LINE), [rx(pkt)])
    res.expect_nothing()
    assert res.drops() == {reason: 1}, res.drops()


# ============================================================================================
# End.AD: dynamic proxy (draft §6.2)
# ============================================================================================


def learned(sid, segs, inner_nh, hlim=64, tc=0, fl=0, src=OUT_SRC, new_sl=1):
    """The headers End.AD caches: the outer header and SRH after the End step (SL - 1,
    DA = Segment List[SL]); the hop limit as received (the forwarding step decrements
    it when the headers go back on a packet)."""
    return IPv6(src=src, dst=segs[new_sl], hlim=hlim, tc=tc, fl=fl) / srh(segs, segleft=new_sl, nh=inner_nh)


def restored(cache, inner):
    """A returning packet with the cached headers pushed back: payload length for this
    packet, forwarded (hop limit - 1)."""
    p = cache.copy() / inner
    p[IPv6].hlim = cache[IPv6].hlim - 1
    p[IPv6].plen = None
    return IPv6(bytes(p))


def test_ad_ipv6_to_function_decapsulates(run_sr6):
    inner = inner6()
    res = run_sr6(cfg(AD6_LINE), [rx(chain(AD6, inner, NH_IPV6))])
    res.expect(eth3=[to_fn6(dec6(inner))])
    assert sid_entry(res.json, AD6)["packets"] == 1
    counters(res.json, AD6, to_function=1, updates=1)


def test_ad_ipv6_cache_is_applied_to_the_returning_packet(run_sr6):
    segs = [FINAL, SEG_B, AD6]
    inner = inner6()
    back = inner6(hlim=38, n=57, src="fc00:b::5", dst="fc00:a::200")  # another size
    pkt = chain(AD6, inner, NH_IPV6, segs=segs, hlim=50, tc=0x28, fl=0x9)
    res = run_sr6(cfg(AD6_LINE), [("eth0", rx(pkt)), ("eth3", from_fn(back))])
    cache = learned(AD6, segs, NH_IPV6, hlim=50, tc=0x28, fl=0x9)
    # §6.2: the cached headers go back on; DA = SEG_B is behind eth1.
    res.expect(eth3=[to_fn6(dec6(inner))], eth1=[tx(restored(cache, back), "eth1")])
    counters(res.json, AD6, to_function=1, from_function=1, hits=1, misses=0, updates=1)


def test_ad_cache_is_shown_in_json(run_sr6):
    res = run_sr6(cfg(AD6_LINE), [rx(chain(AD6, inner6(), NH_IPV6))])
    text = json.dumps(proxy_entry(res.json, AD6).get("cache"))
    for want in (OUT_SRC, SEG_B, FINAL):  # src, the new DA, the segments
        assert want in text, f"{want} not in the shown cache: {text}"


def test_ad_identical_packets_write_the_cache_once(run_sr6):
    pkt = chain(AD6, inner6(), NH_IPV6)
    res = run_sr6(cfg(AD6_LINE), [rx(pkt), rx(pkt)])
    res.expect(eth3=[to_fn6(dec6(inner6()))] * 2)
    counters(res.json, AD6, to_function=2, updates=1)


def test_ad_cache_is_replaced_by_a_packet_with_another_srh(run_sr6):
    segs1 = [FINAL, SEG_B, AD6]        # next segment behind eth1
    segs2 = [FINAL_C, SEG_C, AD6]      # next segment behind eth2
    b1, b2 = inner6(hlim=30, n=20), inner6(hlim=31, n=21)
    frames = [
        ("eth0", rx(chain(AD6, inner6(), NH_IPV6, segs=segs1))),
        ("eth3", from_fn(b1)),
        ("eth0", rx(chain(AD6, inner6(), NH_IPV6, segs=segs2))),
        ("eth3", from_fn(b2)),
    ]
    res = run_sr6(cfg(AD6_LINE), frames)
    res.expect(eth3=[to_fn6(dec6(inner6()))] * 2,
               eth1=[tx(restored(learned(AD6, segs1, NH_IPV6), b1), "eth1")],
               eth2=[tx(restored(learned(AD6, segs2, NH_IPV6), b2), "eth2")])
    counters(res.json, AD6, to_function=2, from_function=2, hits=2, updates=2)


def test_ad_every_returning_packet_gets_the_headers(run_sr6):
    segs = [FINAL, SEG_B, AD6]
    backs = [inner6(hlim=20 + i, n=10 + 7 * i) for i in range(3)]
    frames = [("eth0", rx(chain(AD6, inner6(), NH_IPV6, segs=segs)))] + [("eth3", from_fn(b)) for b in backs]
    res = run_sr6(cfg(AD6_LINE), frames)
    cache = learned(AD6, segs, NH_IPV6)
    res.expect(eth3=[to_fn6(dec6(inner6()))], eth1=[tx(restored(cache, b), "eth1") for b in backs])
    counters(res.json, AD6, hits=3, updates=1)


def test_ad_ipv4(run_sr6):
    segs = [FINAL, SEG_B, AD4]
    inner, back = inner4(ttl=30), inner4(ttl=28, n=40, src="10.9.0.9", dst="10.1.0.7")
    res = run_sr6(cfg(AD4_LINE), [("eth0", rx(chain(AD4, inner, NH_IPV4, segs=segs))), ("eth3", from_fn(back))])
    # Part 1 as End.DX4 (TTL - 1); part 2: the cached headers (next header 4) on the
    # IPv4 packet, which is not changed.
    res.expect(eth3=[to_fn4(dec4(inner))], eth1=[tx(restored(learned(AD4, segs, NH_IPV4), back), "eth1")])


def test_ad_keeps_every_extension_header(run_sr6):
    # "Copy the IPv6 encapsulation": the outer header and all its extension headers, here a
    # Destination Options header before the SRH.
    segs = [FINAL, SEG_B, AD6]
    dopt = IPv6ExtHdrDestOpt(options=[PadN(optdata=b"\x00" * 4)])
    pkt = IPv6(src=OUT_SRC, dst=AD6, hlim=64) / dopt / srh(segs, segleft=2, nh=NH_IPV6) / inner6()
    back = inner6(hlim=33, n=29)
    res = run_sr6(cfg(AD6_LINE), [("eth0", rx(pkt)), ("eth3", from_fn(back))])
    cache = IPv6(src=OUT_SRC, dst=SEG_B, hlim=64) / dopt / srh(segs, segleft=1, nh=NH_IPV6)
    res.expect(eth3=[to_fn6(dec6(inner6()))], eth1=[tx(restored(cache, back), "eth1")])


def test_ad_keeps_srh_tlvs_and_tag_byte_for_byte(run_sr6):
    segs = [FINAL, SEG_B, AD6]
    tlvs = [IPv6ExtHdrSegmentRoutingTLV(type=0x7E, len=6, value=b"\xde\xad\xbe\xef\x01\x02"),
            IPv6ExtHdrSegmentRoutingTLVPadN(len=6, padding=b"\0" * 6)]
    pkt = chain(AD6, inner6(), NH_IPV6, segs=segs, tlvs=tlvs, tag=0x1234, flags=0x01)
    back = inner6(hlim=33, n=29)
    res = run_sr6(cfg(AD6_LINE), [("eth0", rx(pkt)), ("eth3", from_fn(back))])
    cache = IPv6(src=OUT_SRC, dst=SEG_B, hlim=64) / srh(segs, segleft=1, nh=NH_IPV6, tlvs=tlvs, tag=0x1234,
                                                         flags=0x01)
    res.expect(eth3=[to_fn6(dec6(inner6()))], eth1=[tx(restored(cache, back), "eth1")])


def test_ad_return_on_a_separate_iif(run_sr6):
    segs = [FINAL, SEG_B, AD6]
    line = proxy_line("End.AD", AD6, f"nh6 {FN6}", oif="eth3", iif="eth4")
    back = inner6(hlim=21)
    res = run_sr6(cfg(line), [("eth0", rx(chain(AD6, inner6(), NH_IPV6, segs=segs))),
                              ("eth4", from_fn(back, "eth4"))])
    res.expect(eth3=[to_fn6(dec6(inner6()))], eth1=[tx(restored(learned(AD6, segs, NH_IPV6), back), "eth1")])


def test_ad_link_local_and_non_ip_on_iif_go_to_the_host(run_sr6):
    # Inbound policy applies to non-link-local IP traffic only: neighbour discovery (to a
    # solicited-node multicast address) and ARP reach the host (local.pcap), unchanged,
    # even with a cache in place.
    ns = Ether(src=FN6_MAC, dst="33:33:ff:00:00:01") / IPv6(src="fe80::ff:2", dst="ff02::1:ff00:1", hlim=255) / \
        ICMPv6ND_NS(tgt=ADDR6_FN["eth3"])
    arp = Ether(src=FN4_MAC, dst="ff:ff:ff:ff:ff:ff") / ARP(op=1, hwsrc=FN4_MAC, psrc=FN4, pdst="10.0.240.1")
    res = run_sr6(cfg(AD6_LINE), [("eth0", rx(chain(AD6, inner6(), NH_IPV6))), ("eth3", ns), ("eth3", arp)])
    res.expect(eth3=[to_fn6(dec6(inner6()))], local=[ns, arp])
    counters(res.json, AD6, from_function=0)


@pytest.mark.parametrize("line,sid,behaviour,nh,oif,iif", [
    (AS6_LINE, AS6, "End.AS", FN6, "eth3", "eth3"),
    (AS2_LINE, AS2, "End.AS", None, "eth3", "eth3"),
    (proxy_line("End.AD", AD4, f"nh4 {FN4}", iif="eth4"), AD4, "End.AD", FN4, "eth3", "eth4"),
    (EAD6_LINE, EAD6, "End.EAD6", FN6, "eth3", "eth3"),
    (AM_LINE, AM, "End.AM", FN6, "eth3", "eth3"),
], ids=["as6", "as_ethernet", "ad4", "ead6", "am"])
def test_proxies_json_describes_each_proxy(run_sr6, line, sid, behaviour, nh, oif, iif):
    e = proxy_entry(run_sr6(cfg(line), []).json, sid)
    got = {k: e.get(k) for k in ("behaviour", "oif", "iif")}
    assert got == {"behaviour": behaviour, "oif": oif, "iif": iif}, e
    if nh is not None:
        assert e.get("nh") == nh, e
    zero = {k: counter(e, k) for k in ("to_function", "from_function")}
    assert zero == {"to_function": 0, "from_function": 0}, e


EXEMPT = {
    "ipv6_link_local_dst": lambda: Ether(src=FN6_MAC, dst=MACS["eth3"]) / IPv6(src="fe80::ff:2", dst="fe80::1") /
    UDP(sport=5000, dport=5001) / Raw(b"x" * 8),
    "ipv6_multicast": lambda: Ether(src=FN6_MAC, dst="33:33:00:00:00:05") / IPv6(src="fc00:f0::2", dst="ff02::5") /
    UDP(sport=5000, dport=5001) / Raw(b"x" * 8),
    "ipv4_multicast": lambda: Ether(src=FN4_MAC, dst="01:00:5e:00:00:05") / IP(src=FN4, dst="224.0.0.5", ttl=1) /
    UDP(sport=5000, dport=5001) / Raw(b"x" * 8),
    "ipv4_broadcast": lambda: Ether(src=FN4_MAC, dst="ff:ff:ff:ff:ff:ff") / IP(src=FN4, dst="255.255.255.255") /
    UDP(sport=5000, dport=5001) / Raw(b"x" * 8),
    "arp": lambda: Ether(src=FN4_MAC, dst="ff:ff:ff:ff:ff:ff") / ARP(op=1, hwsrc=FN4_MAC, psrc=FN4, pdst="10.0.240.1"),
}


@pytest.mark.parametrize("proxy", ["ad6", "ad4", "as6", "as4"])
@pytest.mark.parametrize("kind", EXEMPT.keys())
def test_exempt_traffic_on_iif_is_processed_as_without_the_proxy(run_sr6, proxy, kind):
    # The inbound policy takes non-link-local, non-multicast IP only (draft §6.1/§6.2:
    # "non-link-local IPv4/IPv6 traffic"; thesis §3.5.2): anything else on iif is processed
    # exactly as it is without the proxy -- the same outputs byte for byte, nothing
    # encapsulated. The cache of an End.AD is filled first, so a miss cannot hide it.
    line, sid, nh, first = {
        "ad6": (AD6_LINE, AD6, NH_IPV6, inner6()), "ad4": (AD4_LINE, AD4, NH_IPV4, inner4()),
        "as6": (AS6_LINE, AS6, NH_IPV6, inner6()), "as4": (AS4_LINE, AS4, NH_IPV4, inner4()),
    }[proxy]
    f = EXEMPT[kind]()
    warm = ("eth0", rx(chain(sid, first, nh)))
    with_proxy = run_sr6(cfg(line), [warm, ("eth3", f)])
    without = run_sr6(cfg(), [("eth3", f)])
    assert {k: v for k, v in with_proxy.raw.items() if k != "eth3"} == \
        {k: v for k, v in without.raw.items() if k != "eth3"}, (with_proxy.emitted(), without.emitted())
    assert with_proxy.frames("eth3")[1:] == without.frames("eth3"), "eth3 beyond the frame to the function"
    counters(with_proxy.json, sid, from_function=0)


# --- End.AD errors --------------------------------------------------------------------------


def test_ad_empty_cache_drops_returning_packet(run_sr6):
    res = run_sr6(cfg(AD6_LINE), [("eth3", from_fn(inner6()))])
    res.expect_nothing()
    assert res.drops() == {"proxy_cache_empty": 1}, res.drops()
    counters(res.json, AD6, misses=1, hits=0, from_function=0, drops={"proxy_cache_empty": 1})


def test_ad_segments_left_0_is_dropped_and_learns_nothing(run_sr6):
    pkt = chain(AD6, inner6(), NH_IPV6, segs=[AD6, FINAL], sl=0)
    reason = end_reason(run_sr6, pkt)
    res = run_sr6(cfg(AD6_LINE), [("eth0", rx(pkt)), ("eth3", from_fn(inner6()))])
    # §6.2: End.AD cannot be the last segment ("ELSE Drop"); the cache stays empty.
    res.expect_nothing()
    assert res.drops() == {reason: 1, "proxy_cache_empty": 1}, res.drops()
    counters(res.json, AD6, updates=0)


def test_ad_without_srh_is_dropped(run_sr6):
    pkt = IPv6(src=OUT_SRC, dst=AD6, hlim=64) / inner6()
    reason = end_reason(run_sr6, pkt)
    res = run_sr6(cfg(AD6_LINE), [rx(pkt)])
    res.expect_nothing()
    assert res.drops() == {reason: 1}, res.drops()


def test_ad_wrong_inner_type_is_dropped_and_learns_nothing(run_sr6):
    res = run_sr6(cfg(AD6_LINE), [("eth0", rx(chain(AD6, inner4(), NH_IPV4))), ("eth3", from_fn(inner6()))])
    res.expect_nothing()
    assert res.drops() == {"wrong_next_header": 1, "proxy_cache_empty": 1}, res.drops()


def test_ad_headers_too_long_to_cache_are_dropped_and_keep_the_cache(run_sr6):
    # behaviours.md (SR proxies): headers over 384 bytes cannot be cached -- dropped,
    # counted `proxy_headers_too_long`, the cache unchanged (bad input leaves no state).
    segs = [FINAL, SEG_B, AD6]
    big = [FINAL_C] + [f"fc00:3::{i:x}" for i in range(1, 24)] + [SEG_C, AD6]   # 26 segments: 456 bytes
    back = inner6(hlim=30, n=20)
    res = run_sr6(cfg(AD6_LINE), [("eth0", rx(chain(AD6, inner6(), NH_IPV6, segs=segs))),
                                  ("eth0", rx(chain(AD6, inner6(), NH_IPV6, segs=big, sl=len(big) - 1))),
                                  ("eth3", from_fn(back))])
    res.expect(eth3=[to_fn6(dec6(inner6()))], eth1=[tx(restored(learned(AD6, segs, NH_IPV6), back), "eth1")])
    assert res.drops() == {"proxy_headers_too_long": 1}, res.drops()
    counters(res.json, AD6, updates=1)


def test_ad_wrong_type_from_function_is_dropped(run_sr6):
    res = run_sr6(cfg(AD6_LINE), [("eth0", rx(chain(AD6, inner6(), NH_IPV6))), ("eth3", from_fn(inner4()))])
    res.expect(eth3=[to_fn6(dec6(inner6()))])
    assert res.drops() == {"wrong_next_header": 1}, res.drops()
    counters(res.json, AD6, drops={"wrong_next_header": 1})


def test_ad_hop_limit_exhausted_is_time_exceeded(run_sr6):
    # RFC 8754 §4.3.1.1 checks as for End: Segments Left > 0 and hop limit <= 1.
    pkt = chain(AD6, inner6(), NH_IPV6, hlim=1)
    f = rx(pkt)
    res = run_sr6(cfg(AD6_LINE), [f])
    res.expect(eth0=[tx(icmp6_error("time_exceeded", l3(f), src=ADDR6["eth0"], dst=OUT_SRC), "eth0")])


def test_ad_segments_left_beyond_last_entry_is_param_problem(run_sr6):
    pkt = chain(AD6, inner6(), NH_IPV6, segs=[FINAL, AD6], sl=3)
    f = rx(pkt)
    res = run_sr6(cfg(AD6_LINE), [f])
    err = icmp6_error("param_problem", l3(f), src=ADDR6["eth0"], dst=OUT_SRC, code=0, ptr=OFF_SRH_SL)
    res.expect(eth0=[tx(err, "eth0")])


# ============================================================================================
# End.EAD6 / End.EAD4: SREXT's extended dynamic proxy (thesis §3.6.1, Table 3.1)
# ============================================================================================


def test_ead6_with_segments_left_acts_as_end_ad(run_sr6):
    segs = [FINAL, SEG_B, EAD6]
    back = inner6(hlim=25, n=31)
    res = run_sr6(cfg(EAD6_LINE), [("eth0", rx(chain(EAD6, inner6(), NH_IPV6, segs=segs))), ("eth3", from_fn(back))])
    res.expect(eth3=[to_fn6(dec6(inner6()))], eth1=[tx(restored(learned(EAD6, segs, NH_IPV6), back), "eth1")])


def test_ead6_last_segment_goes_to_function_and_returning_traffic_is_plain(run_sr6):
    # SL = 0 is allowed: no End step; the inner packet goes to the function and the
    # chain ends there, so what comes back is forwarded as plain IPv6 (hop limit - 1).
    inner = inner6(hlim=40)
    back = inner6(hlim=39, dst="fc00:3::77")   # behind C
    res = run_sr6(cfg(EAD6_LINE), [("eth0", rx(chain(EAD6, inner, NH_IPV6, segs=[EAD6, FINAL], sl=0))),
                                   ("eth3", from_fn(back))])
    res.expect(eth3=[to_fn6(dec6(inner))], eth2=[tx(dec6(back), "eth2")])
    assert res.drop_total() == 0, res.drops()


def test_ead6_end_of_chain_then_a_chain_again(run_sr6):
    segs = [FINAL, SEG_B, EAD6]
    b1, b2 = inner6(hlim=39, dst="fc00:3::77"), inner6(hlim=22, n=44)
    frames = [
        ("eth0", rx(chain(EAD6, inner6(), NH_IPV6, segs=[EAD6], sl=0))),
        ("eth3", from_fn(b1)),
        ("eth0", rx(chain(EAD6, inner6(), NH_IPV6, segs=segs))),
        ("eth3", from_fn(b2)),
    ]
    res = run_sr6(cfg(EAD6_LINE), frames)
    res.expect(eth3=[to_fn6(dec6(inner6()))] * 2, eth2=[tx(dec6(b1), "eth2")],
               eth1=[tx(restored(learned(EAD6, segs, NH_IPV6), b2), "eth1")])


def test_ead6_empty_cache_drops_returning_packet(run_sr6):
    res = run_sr6(cfg(EAD6_LINE), [("eth3", from_fn(inner6()))])
    res.expect_nothing()
    assert res.drops() == {"proxy_cache_empty": 1}, res.drops()


def test_ead4_last_segment_and_plain_return(run_sr6):
    inner = inner4(ttl=30)
    back = inner4(ttl=29, src="10.9.0.9", dst="10.2.0.9")   # behind B (10.2.0.0/16)
    res = run_sr6(cfg(EAD4_LINE), [("eth0", rx(chain(EAD4, inner, NH_IPV4, segs=[EAD4], sl=0))),
                                   ("eth3", from_fn(back))])
    res.expect(eth3=[to_fn4(dec4(inner))], eth1=[tx(dec4(back), "eth1")])


def test_ead4_with_segments_left_acts_as_end_ad(run_sr6):
    segs = [FINAL, SEG_B, EAD4]
    back = inner4(ttl=12, n=26)
    res = run_sr6(cfg(EAD4_LINE), [("eth0", rx(chain(EAD4, inner4(), NH_IPV4, segs=segs))), ("eth3", from_fn(back))])
    res.expect(eth3=[to_fn4(dec4(inner4()))], eth1=[tx(restored(learned(EAD4, segs, NH_IPV4), back), "eth1")])


def test_ead6_wrong_inner_type_is_dropped(run_sr6):
    res = run_sr6(cfg(EAD6_LINE), [rx(chain(EAD6, inner4(), NH_IPV4, segs=[EAD6], sl=0))])
    res.expect_nothing()
    assert res.drops() == {"wrong_next_header": 1}, res.drops()


# ============================================================================================
# End.AM: masquerading proxy (draft §6.4)
# ============================================================================================

AM_SEGS = [FINAL, SEG_B, AM]


def am_pkt(sl=2, segs=AM_SEGS, hlim=64, dst=AM):
    """IPv6 / SRH / UDP (checksum over the final destination, Segment List[0])."""
    return IPv6(src=HOST_A, dst=dst, hlim=hlim) / srh(segs, segleft=sl, nh=NH_UDP) / Raw(udp_bytes(HOST_A, segs[0]))


def test_am_masquerades_toward_the_function(run_sr6):
    res = run_sr6(cfg(AM_LINE), [rx(am_pkt())])
    # §6.4: DA := Segment List[0], SRH untouched (SL stays 2), out of oif to S-ADDR;
    # forwarded, so hop limit - 1.
    res.expect(eth3=[to_fn6(am_pkt(dst=FINAL, hlim=63))])
    assert sid_entry(res.json, AM)["packets"] == 1
    counters(res.json, AM, to_function=1, from_function=0)


def test_am_demasquerades_traffic_from_the_function(run_sr6):
    # The function forwarded the masqueraded packet (its own hop limit - 1): de-masquerading
    # is an End step -- SL - 1, DA := Segment List[SL] (SEG_B, behind eth1), hop limit - 1.
    back = am_pkt(dst=FINAL, hlim=62)
    res = run_sr6(cfg(AM_LINE), [("eth3", from_fn(back))])
    res.expect(eth1=[tx(am_pkt(sl=1, dst=SEG_B, hlim=61), "eth1")])
    counters(res.json, AM, to_function=0, from_function=1)


def test_am_both_directions_in_one_run(run_sr6):
    res = run_sr6(cfg(AM_LINE), [("eth0", rx(am_pkt())), ("eth3", from_fn(am_pkt(dst=FINAL, hlim=62)))])
    res.expect(eth3=[to_fn6(am_pkt(dst=FINAL, hlim=63))], eth1=[tx(am_pkt(sl=1, dst=SEG_B, hlim=61), "eth1")])


def test_am_demasquerade_to_the_last_segment(run_sr6):
    segs = [FINAL, AM]
    back = am_pkt(sl=1, segs=segs, dst=FINAL, hlim=50)
    res = run_sr6(cfg(AM_LINE), [("eth3", from_fn(back))])
    res.expect(eth1=[tx(am_pkt(sl=0, segs=segs, dst=FINAL, hlim=49), "eth1")])


def test_am_plain_traffic_on_iif_is_forwarded_normally(run_sr6):
    plain = udp6(src="fc00:b::1", dst="fc00:3::7", hlim=30)
    sl0 = am_pkt(sl=0, dst=FINAL, hlim=30)   # an SRH with nothing left: not de-masqueraded
    res = run_sr6(cfg(AM_LINE), [("eth3", from_fn(plain)), ("eth3", from_fn(sl0))])
    res.expect(eth2=[tx(dec6(plain), "eth2")], eth1=[tx(am_pkt(sl=0, dst=FINAL, hlim=29), "eth1")])
    counters(res.json, AM, from_function=0)


def test_am_return_on_a_separate_iif(run_sr6):
    line = proxy_line("End.AM", AM, f"nh6 {FN6}", oif="eth3", iif="eth4")
    res = run_sr6(cfg(line), [("eth4", from_fn(am_pkt(dst=FINAL, hlim=62), "eth4"))])
    res.expect(eth1=[tx(am_pkt(sl=1, dst=SEG_B, hlim=61), "eth1")])


def test_two_am_proxies_may_share_an_iif(run_sr6):
    # Thesis §3.5.4 / draft §6.4: the same interfaces can be bound to several masquerading
    # segments; de-masquerading needs no state, each packet's own SRH says where it goes.
    line2 = proxy_line("End.AM", AM2, f"nh6 {FN6}")
    segs2 = [FINAL_C, SEG_C, AM2]
    res = run_sr6(cfg(AM_LINE, line2), [
        ("eth0", rx(am_pkt(segs=segs2, dst=AM2))),
        ("eth3", from_fn(am_pkt(dst=FINAL, hlim=62))),
        ("eth3", from_fn(am_pkt(segs=segs2, dst=FINAL_C, hlim=62))),
    ])
    res.expect(eth3=[to_fn6(am_pkt(segs=segs2, dst=FINAL_C, hlim=63))],
               eth1=[tx(am_pkt(sl=1, dst=SEG_B, hlim=61), "eth1")],
               eth2=[tx(am_pkt(sl=1, segs=segs2, dst=SEG_C, hlim=61), "eth2")])


# --- End.AM errors --------------------------------------------------------------------------


@pytest.mark.parametrize("hlim", [1, 0])
def test_am_hop_limit_exhausted_is_time_exceeded(run_sr6, hlim):
    f = rx(am_pkt(hlim=hlim))
    res = run_sr6(cfg(AM_LINE), [f])
    # As End.X: the quote is the packet as received.
    res.expect(eth0=[tx(icmp6_error("time_exceeded", l3(f), src=ADDR6["eth0"], dst=HOST_A), "eth0")])


def test_am_demasquerade_hop_limit_exhausted_is_time_exceeded(run_sr6):
    f = from_fn(am_pkt(dst=FINAL, hlim=1))
    res = run_sr6(cfg(AM_LINE), [("eth3", f)])
    # An End step on a packet received on eth3: the error from eth3's address (rule 5).
    res.expect(eth0=[tx(icmp6_error("time_exceeded", l3(f), src=ADDR6_FN["eth3"], dst=HOST_A), "eth0")])


def test_am_segments_left_0_is_dropped(run_sr6):
    pkt = am_pkt(sl=0, segs=[AM, FINAL])
    reason = end_reason(run_sr6, pkt)
    res = run_sr6(cfg(AM_LINE), [rx(pkt)])
    # §6.4: "IF NH=SRH and SL > 0 ... ELSE Drop the packet".
    res.expect_nothing()
    assert res.drops() == {reason: 1}, res.drops()


def test_am_without_srh_is_dropped(run_sr6):
    pkt = udp6(src=HOST_A, dst=AM)
    reason = end_reason(run_sr6, pkt)
    res = run_sr6(cfg(AM_LINE), [rx(pkt)])
    res.expect_nothing()
    assert res.drops() == {reason: 1}, res.drops()


# ============================================================================================
# The PSP flavour on the proxies (RFC 8986 §4.16.1): the End step that leaves Segments
# Left at 0 pops the SRH -- End.AD's (and End.EAD*'s) on the headers it caches, End.AM's
# when it de-masquerades. USP/USD act at the last segment, where a proxy drops (draft
# "ELSE Drop"), and End.AS makes no End step on a kept SRH: they take no flavour.
# ============================================================================================


def popped(cache):
    """The cached headers with the SRH removed as PSP removes it (§4.16.1 S14.2-S14.4):
    the IPv6 header's Next Header becomes the SRH's."""
    ip = cache[IPv6]
    return IPv6(src=ip.src, dst=ip.dst, hlim=ip.hlim, tc=ip.tc, fl=ip.fl, nh=ip[IPv6ExtHdrSegmentRouting].nh)


@pytest.mark.parametrize("action,sid", [("End.AD", AD6), ("End.EAD6", EAD6)])
def test_psp_proxy_caches_headers_without_the_srh_at_the_penultimate_segment(run_sr6, action, sid):
    segs = [FINAL, sid]
    inner, back = inner6(), inner6(hlim=33, n=40, src="fc00:b::5", dst="fc00:a::200")
    line = proxy_line(action, sid, f"nh6 {FN6}", flavors="psp")
    pkt = chain(sid, inner, NH_IPV6, segs=segs, sl=1, hlim=50, tc=0x10, fl=0x77)
    res = run_sr6(cfg(line), [("eth0", rx(pkt)), ("eth3", from_fn(back))])
    cache = popped(learned(sid, segs, NH_IPV6, hlim=50, tc=0x10, fl=0x77, new_sl=0))
    assert IPv6ExtHdrSegmentRouting not in cache and cache.nh == NH_IPV6 and cache.dst == FINAL
    # The function still gets the inner packet; the returning one is IPv6 / inner to the
    # last segment FINAL (behind eth1), with no SRH.
    res.expect(eth3=[to_fn6(dec6(inner))], eth1=[tx(restored(cache, back), "eth1")])
    counters(res.json, sid, to_function=1, from_function=1, hits=1, updates=1)
    assert res.drop_total() == 0, res.drops()


def test_psp_ad_ipv4_function_at_the_penultimate_segment(run_sr6):
    segs = [FINAL, AD4]
    back = inner4(ttl=12, n=26)
    line = proxy_line("End.AD", AD4, f"nh4 {FN4}", flavors="psp")
    res = run_sr6(cfg(line), [("eth0", rx(chain(AD4, inner4(), NH_IPV4, segs=segs, sl=1))), ("eth3", from_fn(back))])
    cache = popped(learned(AD4, segs, NH_IPV4, new_sl=0))
    res.expect(eth3=[to_fn4(dec4(inner4()))], eth1=[tx(restored(cache, back), "eth1")])


def test_psp_ad_keeps_the_srh_before_the_penultimate_segment(run_sr6):
    segs = [FINAL, SEG_B, AD6]
    back = inner6(hlim=38, n=57)
    line = proxy_line("End.AD", AD6, f"nh6 {FN6}", flavors="psp")
    res = run_sr6(cfg(line), [("eth0", rx(chain(AD6, inner6(), NH_IPV6, segs=segs))), ("eth3", from_fn(back))])
    # New Segments Left 1: not the penultimate segment, the SRH stays (as without PSP).
    res.expect(eth3=[to_fn6(dec6(inner6()))], eth1=[tx(restored(learned(AD6, segs, NH_IPV6), back), "eth1")])


def test_psp_ad_keeps_extension_headers_before_the_srh(run_sr6):
    # A Destination Options header before the SRH stays; its Next Header takes the SRH's.
    segs = [FINAL, AD6]
    dopt = IPv6ExtHdrDestOpt(options=[PadN(optdata=b"\x00" * 4)])
    pkt = IPv6(src=OUT_SRC, dst=AD6, hlim=64) / dopt / srh(segs, segleft=1, nh=NH_IPV6) / inner6()
    back = inner6(hlim=20, n=12)
    line = proxy_line("End.AD", AD6, f"nh6 {FN6}", flavors="psp")
    res = run_sr6(cfg(line), [("eth0", rx(pkt)), ("eth3", from_fn(back))])
    cache = IPv6(src=OUT_SRC, dst=FINAL, hlim=64) / IPv6ExtHdrDestOpt(options=[PadN(optdata=b"\x00" * 4)], nh=NH_IPV6)
    res.expect(eth3=[to_fn6(dec6(inner6()))], eth1=[tx(restored(cache, back), "eth1")])


def test_psp_am_pops_the_srh_when_demasquerading_to_the_last_segment(run_sr6):
    segs = [FINAL, AM]
    line = proxy_line("End.AM", AM, f"nh6 {FN6}", flavors="psp")
    to_fn = am_pkt(sl=1, segs=segs)
    back = am_pkt(sl=1, segs=segs, dst=FINAL, hlim=50)
    res = run_sr6(cfg(line), [("eth0", rx(to_fn)), ("eth3", from_fn(back))])
    # Part 1 keeps the SRH (Segments Left unchanged); part 2's End step reaches SL 0 and
    # PSP pops the SRH: IPv6 / UDP to FINAL, hop limit - 1.
    out = IPv6(src=HOST_A, dst=FINAL, hlim=49, nh=NH_UDP) / Raw(udp_bytes(HOST_A, FINAL))
    res.expect(eth3=[to_fn6(am_pkt(sl=1, segs=segs, dst=FINAL, hlim=63))], eth1=[tx(out, "eth1")])
    counters(res.json, AM, to_function=1, from_function=1)


def test_psp_am_keeps_the_srh_while_segments_remain(run_sr6):
    line = proxy_line("End.AM", AM, f"nh6 {FN6}", flavors="psp")
    res = run_sr6(cfg(line), [("eth3", from_fn(am_pkt(dst=FINAL, hlim=62)))])
    res.expect(eth1=[tx(am_pkt(sl=1, dst=SEG_B, hlim=61), "eth1")])


def test_psp_is_the_flavour_of_the_am_proxy_the_packet_came_through(run_sr6):
    # Two End.AM share eth3; only AM2 has PSP. A packet whose active entry is AM2 is
    # popped at SL 0, one whose active entry is AM is not.
    line1 = proxy_line("End.AM", AM, f"nh6 {FN6}")
    line2 = proxy_line("End.AM", AM2, f"nh6 {FN6}", flavors="psp")
    b1 = am_pkt(sl=1, segs=[FINAL, AM], dst=FINAL, hlim=50)
    b2 = am_pkt(sl=1, segs=[FINAL, AM2], dst=FINAL, hlim=50)
    res = run_sr6(cfg(line1, line2), [("eth3", from_fn(b1)), ("eth3", from_fn(b2))])
    out2 = IPv6(src=HOST_A, dst=FINAL, hlim=49, nh=NH_UDP) / Raw(udp_bytes(HOST_A, FINAL))
    res.expect(eth1=[tx(am_pkt(sl=0, segs=[FINAL, AM], dst=FINAL, hlim=49), "eth1"), tx(out2, "eth1")])
    counters(res.json, AM, from_function=1)
    counters(res.json, AM2, from_function=1)
    assert "psp" in json.dumps(sid_entry(res.json, AM2)) and "psp" not in json.dumps(sid_entry(res.json, AM))


# ============================================================================================
# Config errors
# ============================================================================================


def pos_re(r, line):
    return re.compile(rf"{re.escape(r.config_path.name)}:{line}:(\d+)")


def bad_config(sr6_cli, *lines):
    """Runs a config whose last line is bad; returns (result, line number)."""
    text = cfg(*lines)
    r = sr6_cli(text, [rx(udp6())])
    assert r.returncode != 0, f"exit status 0 for a bad config:\n{lines[-1]}"
    line = text.count("\n")
    assert pos_re(r, line).search(r.stderr), f"stderr does not name {r.config_path.name}:{line}:COL\n{r.stderr}"
    assert not r.out_dir.exists() or not list(r.out_dir.glob("*.pcap")), "outputs written despite the error"
    return r, line


SHARED_IIF = {
    "ad_ad": [AD6_LINE, proxy_line("End.AD", AD4, f"nh4 {FN4}")],
    "as_ad": [AS6_LINE, AD4_LINE],
    "ad_ead6": [AD6_LINE, EAD6_LINE],
    "ad_am": [AD6_LINE, AM_LINE],
    "am_as": [AM_LINE, AS6_LINE],
}


@pytest.mark.parametrize("case", SHARED_IIF.keys())
def test_an_iif_bound_to_two_proxies_is_an_error(sr6_cli, case):
    first, second = SHARED_IIF[case]
    r, _ = bad_config(sr6_cli, first, second)
    other = re.search(r"fc00:f::[0-9a-f]+", first).group(0)
    assert other in r.stderr, f"the error should name the other proxy's SID {other}:\n{r.stderr}"


def test_a_proxy_iif_may_be_its_oif_and_another_proxys_oif(run_sr6):
    # iif = oif for one proxy, and two proxies with different iifs may share an oif.
    line2 = proxy_line("End.AD", AD4, f"nh4 {FN4}", oif="eth3", iif="eth4")
    res = run_sr6(cfg(AD6_LINE, line2), [rx(chain(AD6, inner6(), NH_IPV6))])
    res.expect(eth3=[to_fn6(dec6(inner6()))])


BAD_PARAMS = {
    "ead6_nh4": (proxy_line("End.EAD6", EAD6, f"nh4 {FN4}"), "nh4"),
    "ead4_nh6": (proxy_line("End.EAD4", EAD4, f"nh6 {FN6}"), "nh6"),
    "am_nh4": (proxy_line("End.AM", AM, f"nh4 {FN4}"), "nh4"),
    "ad_unknown_oif": (proxy_line("End.AD", AD6, f"nh6 {FN6}", oif="eth9"), "eth9"),
    "ad_unknown_iif": (proxy_line("End.AD", AD6, f"nh6 {FN6}", iif="eth8"), "eth8"),
}


@pytest.mark.parametrize("case", BAD_PARAMS.keys())
def test_bad_proxy_parameter_is_an_error(sr6_cli, case):
    bad, token = BAD_PARAMS[case]
    r, line = bad_config(sr6_cli, bad)
    col = int(pos_re(r, line).search(r.stderr).group(1))
    start = bad.index(f" {token}") + 2
    assert start <= col <= start + len(token), (
        f"column {col} does not point into {token!r} (columns {start}..{start + len(token) - 1})\n{r.stderr}")


# (line, the parameter the error must ask for)
MISSING = {
    "ad_no_iif": (f"ip -6 route add {AD6}/128 encap seg6local action End.AD nh6 {FN6} oif eth3 dev eth0", "iif"),
    "ad_no_oif": (f"ip -6 route add {AD6}/128 encap seg6local action End.AD nh6 {FN6} iif eth3 dev eth0", "oif"),
    "ad_no_nh": (f"ip -6 route add {AD6}/128 encap seg6local action End.AD oif eth3 iif eth3 dev eth0", "nh"),
    "am_no_nh": (f"ip -6 route add {AM}/128 encap seg6local action End.AM oif eth3 iif eth3 dev eth0", "nh6"),
    "as_no_segs": (f"ip -6 route add {AS6}/128 encap seg6local action End.AS nh6 {FN6} oif eth3 iif eth3 "
                   f"src {AS_SRC} dev eth0", "segs"),
    "as_no_src": (f"ip -6 route add {AS6}/128 encap seg6local action End.AS nh6 {FN6} oif eth3 iif eth3 "
                  f"segs {SEG_B} dev eth0", "src"),
}


@pytest.mark.parametrize("case", MISSING.keys())
def test_missing_proxy_parameter_is_an_error(sr6_cli, case):
    bad, keyword = MISSING[case]
    r, _ = bad_config(sr6_cli, bad)
    assert re.search(rf"\b{keyword}", r.stderr.split(":", 4)[-1]), f"the error should ask for {keyword}:\n{r.stderr}"


# (line, the flavour the error must point at)
BAD_FLAVOURS = {
    "as_psp": (as_line(AS6, f"nh6 {FN6}").replace(" dev eth0", " flavors psp dev eth0"), "psp"),
    "ad_usd": (proxy_line("End.AD", AD6, f"nh6 {FN6}", flavors="usd"), "usd"),
    "ad_psp_usp": (proxy_line("End.AD", AD6, f"nh6 {FN6}", flavors="psp,usp"), "usp"),
    "ead4_usd": (proxy_line("End.EAD4", EAD4, f"nh4 {FN4}", flavors="usd"), "usd"),
    "am_usp": (proxy_line("End.AM", AM, f"nh6 {FN6}", flavors="usp"), "usp"),
    "am_next_csid": (proxy_line("End.AM", AM, f"nh6 {FN6}", flavors="next-csid"), "next-csid"),
}


@pytest.mark.parametrize("case", BAD_FLAVOURS.keys())
def test_a_flavour_a_proxy_does_not_take_is_an_error(sr6_cli, case):
    bad, flavour = BAD_FLAVOURS[case]
    r, line = bad_config(sr6_cli, bad)
    col = int(pos_re(r, line).search(r.stderr).group(1))
    start = bad.index(flavour, bad.index(" flavors ")) + 1
    assert col == start, f"column {col}, expected {start} (the flavour {flavour!r})\n{r.stderr}"
    assert "not allowed" in r.stderr, r.stderr
