"""End.MAP (RFC 9433 §6.2; behaviours.md "End.MAP"): an sr6 extension,
``action End.MAP map SID``.

RFC 9433 §6.2, for a packet whose destination is a local End.MAP SID:
  S01. Decrement the IPv6 Hop Limit by 1.
  S02. Update the IPv6 DA with the new mapped SID.
  S03. Submit the packet to the egress IPv6 FIB lookup for transmission to the new
       destination.
The SRH, if any, is not touched (Segments Left and the Segment List stay as received).
Hop limit and route failures are those of plain forwarding (behaviours.md "Forwarding",
"ICMPv6 errors"), about the packet as it is being forwarded: with the mapped SID as its
destination.

Topology (sr6_oracle): A on eth0 (sources fc00:a::/64), B on eth1 (fc00:2::/48), C on
eth2 (fc00:3::/48).  The mapped SID is behind C, while the next segment of the SRH
(fc00:2::1) is behind B, so a packet leaving on eth2 was sent by the mapped SID, not by
the Segment List."""
import pytest

from sr6_oracle import (
    ADDR6, HOST_A, NH_IPV6, SEG_B, IPv6, Raw, config, icmp6_error, l3, rx, sid_entry, sr_pkt, tx, udp6, udp_bytes,
)

SID = "fc00:f::1"
MAP = "fc00:3::99"        # behind C (eth2)
SID2 = "fc00:f::2"
MAP2 = "fc00:2::98"       # behind B (eth1)
UNROUTED = "fc00:99::1"   # no route in the base topology
FAR = "fc00:a::9"         # another segment, behind A


def map_line(sid=SID, mapped=MAP):
    return f"ip -6 route add {sid}/128 encap seg6local action End.MAP map {mapped} dev eth0"


CFG = config(map_line(), map_line(SID2, MAP2))


def inner6(hlim=30):
    return udp6(src="fc00:a::200", dst="fc00:2::77", hlim=hlim)


# --- S01-S03 ------------------------------------------------------------------------------


@pytest.mark.parametrize("n,sl", [(2, 1), (3, 1), (3, 2), (4, 3)])
def test_segments_left_above_zero(run_sr6, n, sl):
    # The SID at index sl of the Segment List (header order), next segment on B.
    segs = [FAR if i != sl - 1 else SEG_B for i in range(n)]
    segs[sl] = SID
    pkt = sr_pkt(SID, segs, sl, hlim=64, tc=0x28, fl=0x9)
    res = run_sr6(CFG, [rx(pkt)])
    # Only the hop limit and the destination change; SL and the Segment List do not.
    exp = sr_pkt(MAP, segs, sl, hlim=63, tc=0x28, fl=0x9)
    res.expect(eth2=[tx(exp, "eth2")])


def test_segments_left_zero(run_sr6):
    segs = [SID, FAR]
    pkt = sr_pkt(SID, segs, 0, nh=NH_IPV6, inner=inner6())
    res = run_sr6(CFG, [rx(pkt)])
    # No upper-layer processing (RFC 8986 §4.1.1 is End's, not End.MAP's): the inner
    # packet is carried unchanged, SL stays 0.
    res.expect(eth2=[tx(sr_pkt(MAP, segs, 0, nh=NH_IPV6, inner=inner6(), hlim=63), "eth2")])


def test_without_srh(run_sr6):
    pkt = IPv6(src=HOST_A, dst=SID, hlim=64, tc=0x10, fl=0xabcde, nh=NH_IPV6) / inner6()
    res = run_sr6(CFG, [rx(pkt)])
    exp = IPv6(src=HOST_A, dst=MAP, hlim=63, tc=0x10, fl=0xabcde, nh=NH_IPV6) / inner6()
    res.expect(eth2=[tx(exp, "eth2")])


def test_each_sid_its_own_mapped_sid(run_sr6):
    segs = [FAR, SID2]
    pkt = sr_pkt(SID2, segs, 1)
    res = run_sr6(CFG, [rx(pkt)])
    res.expect(eth1=[tx(sr_pkt(MAP2, segs, 1, hlim=63), "eth1")])


def test_hop_limit_2_leaves_with_1(run_sr6):
    segs = [FAR, SID]
    res = run_sr6(CFG, [rx(sr_pkt(SID, segs, 1, hlim=2))])
    res.expect(eth2=[tx(sr_pkt(MAP, segs, 1, hlim=1), "eth2")])


@pytest.mark.parametrize("hlim", [1, 0])
@pytest.mark.parametrize("with_srh", [True, False], ids=["srh", "no_srh"])
def test_hop_limit_exhausted_time_exceeded(run_sr6, hlim, with_srh):
    segs = [FAR, SID]
    if with_srh:
        pkt, forwarded = sr_pkt(SID, segs, 1, hlim=hlim), sr_pkt(MAP, segs, 1, hlim=hlim)
    else:
        pkt = IPv6(src=HOST_A, dst=SID, hlim=hlim, nh=NH_IPV6) / inner6()
        forwarded = IPv6(src=HOST_A, dst=MAP, hlim=hlim, nh=NH_IPV6) / inner6()
    res = run_sr6(CFG, [rx(pkt)])
    # As forwarding a packet to the mapped SID with that hop limit: Time Exceeded code 0
    # from eth0's address, by the route to the source, quoting the packet as forwarded.
    err = icmp6_error("time_exceeded", bytes(forwarded), src=ADDR6["eth0"], dst=HOST_A)
    res.expect(eth0=[tx(err, "eth0")])
    # The SID did its part (S02); the error is forwarding's (behaviours.md "End.MAP").
    e = sid_entry(res.json, SID)
    assert (e["packets"], e["errors"]) == (1, 0)


def test_mapped_sid_without_route(run_sr6):
    cfg = config(map_line(mapped=UNROUTED))
    segs = [FAR, SID]
    res = run_sr6(cfg, [rx(sr_pkt(SID, segs, 1))])
    # As forwarding to an address with no route: Destination Unreachable code 0 (no
    # route), counted as the no_route drop; the quote carries the mapped SID.
    err = icmp6_error("dest_unreach", bytes(sr_pkt(UNROUTED, segs, 1)), src=ADDR6["eth0"], dst=HOST_A, code=0)
    res.expect(eth0=[tx(err, "eth0")])
    assert res.drops() == {"no_route": 1}
    e = sid_entry(res.json, SID)
    assert (e["packets"], e["errors"]) == (1, 0)


def test_mapped_sid_to_a_blackhole(run_sr6):
    cfg = config("ip -6 route add blackhole fc00:97::/64", map_line(mapped="fc00:97::1"))
    res = run_sr6(cfg, [rx(sr_pkt(SID, [FAR, SID], 1))])
    res.expect_nothing()
    assert res.drops() == {"blackhole": 1}


# --- counters -----------------------------------------------------------------------------


def test_counters_per_sid(run_sr6):
    ok1 = [rx(sr_pkt(SID, [FAR, SID], 1, inner=Raw(udp_bytes(HOST_A, FAR, n=n)))) for n in (10, 200)]
    ok2 = [rx(sr_pkt(SID2, [FAR, SID2], 1, inner=Raw(udp_bytes(HOST_A, FAR, n=50))))]
    res = run_sr6(CFG, ok1 + ok2)
    e1, e2 = sid_entry(res.json, SID), sid_entry(res.json, SID2)
    assert e1["action"] == e2["action"] == "End.MAP"
    assert e1["params"] == f"map {MAP}"
    # Bytes: the IPv6 packets as received (frame - 14).
    assert (e1["packets"], e1["bytes"], e1["errors"]) == (2, sum(len(l3(f)) for f in ok1), 0)
    assert (e2["packets"], e2["bytes"], e2["errors"]) == (1, len(l3(ok2[0])), 0)
    assert (len(res.frames("eth2")), len(res.frames("eth1"))) == (2, 1)


def test_sid_error_when_refused_before_end_map(run_sr6):
    # seg6_require_hmac=1 on eth0: an SRH without HMAC is dropped by the steps every
    # endpoint shares (behaviours.md "HMAC"), counted as the SID's error.
    cfg = config(map_line(), "sysctl -w net.ipv6.conf.eth0.seg6_require_hmac=1")
    res = run_sr6(cfg, [rx(sr_pkt(SID, [FAR, SID], 1))])
    res.expect_nothing()
    e = sid_entry(res.json, SID)
    assert (e["packets"], e["bytes"], e["errors"]) == (0, 0, 1)


# --- configuration ------------------------------------------------------------------------


# Mapped SIDs Tables::build refuses: the SID's line is named.
@pytest.mark.parametrize("mapped,why", [
    (SID, "within the SID's own prefix"),
    ("ff0e::1", "multicast"),
    ("::", "unspecified"),
    ("::1", "loopback"),
])
def test_bad_mapped_sid_names_the_line(sr6_cli, mapped, why):
    text = config(map_line(mapped=mapped))
    line = text.count("\n")
    r = sr6_cli(text, [rx(udp6())])
    assert r.returncode != 0
    assert f"{r.config_path.name}:{line}:" in r.stderr, r.stderr
    assert why in r.stderr, r.stderr


@pytest.mark.parametrize("tail,token", [
    ("dev eth0", "End.MAP"),               # `map` missing: at the action
    ("map fc00::zz dev eth0", "fc00::zz"),  # not an address
    ("map 10.0.0.1 dev eth0", "10.0.0.1"),  # not IPv6
    ("nh6 fc00:3::1 dev eth0", "nh6"),      # End.MAP takes `map` only
])
def test_parse_errors_name_file_line_col(sr6_cli, tail, token):
    bad = f"ip -6 route add {SID}/128 encap seg6local action End.MAP {tail}"
    text = config(bad)
    line = text.count("\n")
    r = sr6_cli(text, [rx(udp6())])
    assert r.returncode != 0
    assert f"{r.config_path.name}:{line}:{bad.index(token) + 1}:" in r.stderr, r.stderr
