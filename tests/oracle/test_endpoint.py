"""Endpoint behaviours (behaviours.md "Endpoint behaviours"; RFC 8986 §4, RFC 8754 §4.3).

Packets come in on eth0 from A (source fc00:a::100).  The local SIDs live in fc00:f::/64;
the next segment after a SID is normally fc00:2::1 (routed out eth1), so a behaviour that
steers elsewhere (End.X, End.T, decapsulation to eth2) is visible on the output device."""
import pytest

from sr6_oracle import (
    GW4_MAC, HOST_A, IP, NH_ETHERNET, NH_IPV4, NH_IPV6, SEG_B, SEG_C, UDP, Ether, IPv6,
    IPv6ExtHdrSegmentRoutingTLV, IPv6ExtHdrSegmentRoutingTLVPad1, IPv6ExtHdrSegmentRoutingTLVPadN, Raw, config,
    payload, rx, sr_pkt, srh, tx, udp4, udp6,
)

SID = "fc00:f::1"
TUNSRC = "fc00:ff::1"
FINAL = "fc00:2::99"  # a last segment behind B


def end_cfg(*lines):
    return config(*lines)


# --- End --------------------------------------------------------------------------------


@pytest.mark.parametrize("n,sl", [(2, 1), (3, 2), (3, 1), (5, 4), (5, 2)])
def test_end_advances_to_next_segment(run_sr6, n, sl):
    # Segment List in header order; the SID sits at index sl, the next one (sl-1) is on B.
    segs = [f"fc00:2::{0x10 + i:x}" for i in range(n)]
    segs[sl] = SID
    cfg = end_cfg(f"ip -6 route add {SID}/128 encap seg6local action End dev eth0")
    pkt = sr_pkt(SID, segs, sl, hlim=64, tc=0x28, fl=0x9)
    res = run_sr6(cfg, [rx(pkt)])
    # RFC 8986 §4.1 S14-S16: hop limit - 1, SL - 1, DA = Segment List[SL].
    exp = sr_pkt(segs[sl - 1], segs, sl - 1, hlim=63, tc=0x28, fl=0x9)
    res.expect(eth1=[tx(exp, "eth1")])


def test_end_with_reduced_srh(run_sr6):
    # H.Encaps.Red output: S1 only in the DA, Segment List = [S2], LE 0, SL 1.
    cfg = end_cfg(f"ip -6 route add {SID}/128 encap seg6local action End dev eth0")
    pkt = sr_pkt(SID, [FINAL], 1, lastentry=0)
    res = run_sr6(cfg, [rx(pkt)])
    exp = sr_pkt(FINAL, [FINAL], 0, lastentry=0, hlim=63)
    res.expect(eth1=[tx(exp, "eth1")])


TLV_SETS = {
    "padn_and_unknown": [
        IPv6ExtHdrSegmentRoutingTLV(type=0x7E, len=6, value=b"\xde\xad\xbe\xef\x01\x02"),
        IPv6ExtHdrSegmentRoutingTLVPadN(len=6, padding=b"\0" * 6),
    ],
    "pad1_padn": [
        IPv6ExtHdrSegmentRoutingTLV(type=0x80, len=3, value=b"XYZ"),
        IPv6ExtHdrSegmentRoutingTLVPad1(),
        IPv6ExtHdrSegmentRoutingTLVPadN(len=0, padding=b""),
    ],
}


@pytest.mark.parametrize("tlvs", TLV_SETS.values(), ids=TLV_SETS.keys())
def test_end_preserves_tlvs_byte_for_byte(run_sr6, tlvs):
    segs = [FINAL, SEG_B, SID]
    cfg = end_cfg(f"ip -6 route add {SID}/128 encap seg6local action End dev eth0")
    pkt = sr_pkt(SID, segs, 2, tlvs=tlvs)
    res = run_sr6(cfg, [rx(pkt)])
    exp = sr_pkt(SEG_B, segs, 1, tlvs=tlvs, hlim=63)
    res.expect(eth1=[tx(exp, "eth1")])


def test_end_preserves_udp_checksum(run_sr6):
    segs = [FINAL, SID]
    cfg = end_cfg(f"ip -6 route add {SID}/128 encap seg6local action End dev eth0")
    pkt = sr_pkt(SID, segs, 1)
    res = run_sr6(cfg, [rx(pkt)])
    exp = sr_pkt(FINAL, segs, 0, hlim=63)
    res.expect(eth1=[tx(exp, "eth1")])
    got = Ether(res.frames("eth1")[0])
    assert bytes(got[UDP]) == bytes(IPv6(bytes(pkt))[UDP]), "UDP header/checksum changed"
    # The checksum is right for the final destination (RFC 8200 §8.1) -- recompute it.
    redo = IPv6(src=HOST_A, dst=FINAL) / UDP(sport=40001, dport=40002) / payload(24)
    assert got[UDP].chksum == IPv6(bytes(redo))[UDP].chksum


def test_end_preserves_inner_ipv6_packet(run_sr6):
    inner = udp6(src="fc00:a::200", dst="fc00:2::77", hlim=9)
    segs = [FINAL, SID]
    cfg = end_cfg(f"ip -6 route add {SID}/128 encap seg6local action End dev eth0")
    pkt = sr_pkt(SID, segs, 1, nh=NH_IPV6, inner=inner)
    res = run_sr6(cfg, [rx(pkt)])
    res.expect(eth1=[tx(sr_pkt(FINAL, segs, 0, nh=NH_IPV6, inner=inner, hlim=63), "eth1")])


# --- End.X / End.T ------------------------------------------------------------------------


@pytest.mark.parametrize("oif", ["", " oif eth2"], ids=["route_to_nh6", "oif"])
def test_end_x_forwards_to_nh6(run_sr6, oif):
    cfg = end_cfg(f"ip -6 route add {SID}/128 encap seg6local action End.X nh6 fc00:13::2{oif} dev eth0")
    segs = [FINAL, SEG_B, SID]  # main table would send SEG_B out eth1
    pkt = sr_pkt(SID, segs, 2)
    res = run_sr6(cfg, [rx(pkt)])
    res.expect(eth2=[tx(sr_pkt(SEG_B, segs, 1, hlim=63), "eth2")])


# "table main" is the main FIB: the next segment goes where the main table sends it
# (eth1 for SEG_B), as for End; table 100 sends it out eth2.
@pytest.mark.parametrize("table,out", [("100", "eth2"), ("main", "eth1")], ids=["table_100", "table_main"])
def test_end_t_looks_up_in_table(run_sr6, table, out):
    cfg = end_cfg(
        "ip -6 route add fc00:2::/48 via fc00:13::2 dev eth2 table 100",
        f"ip -6 route add {SID}/128 encap seg6local action End.T table {table} dev eth0",
    )
    segs = [FINAL, SEG_B, SID]
    pkt = sr_pkt(SID, segs, 2)
    res = run_sr6(cfg, [rx(pkt)])
    res.expect(**{out: [tx(sr_pkt(SEG_B, segs, 1, hlim=63), out)]})


# --- decapsulation ------------------------------------------------------------------------

INNER_SRC = "fc00:a::200"


def test_end_dx2_sends_inner_frame_unchanged(run_sr6):
    cfg = end_cfg(f"ip -6 route add {SID}/128 encap seg6local action End.DX2 oif eth2 dev eth0")
    inner = Ether(src="02:bb:00:00:00:01", dst="02:bb:00:00:00:02") / udp4(src="192.0.2.1", dst="192.0.2.2", ttl=7)
    pkt = sr_pkt(SID, [SID, "fc00:a::1"], 0, nh=NH_ETHERNET, inner=Raw(bytes(inner)))
    res = run_sr6(cfg, [rx(pkt)])
    res.expect(eth2=[inner])


def test_end_dx2_without_srh(run_sr6):
    cfg = end_cfg(f"ip -6 route add {SID}/128 encap seg6local action End.DX2 oif eth2 dev eth0")
    inner = Ether(src="02:bb:00:00:00:01", dst="ff:ff:ff:ff:ff:ff") / udp6(src="fc00:b::1", dst="fc00:b::2")
    pkt = IPv6(src=HOST_A, dst=SID, hlim=64, nh=NH_ETHERNET) / Raw(bytes(inner))
    res = run_sr6(cfg, [rx(pkt)])
    res.expect(eth2=[inner])


def test_end_dx6_decapsulates_to_nh6(run_sr6):
    cfg = end_cfg(f"ip -6 route add {SID}/128 encap seg6local action End.DX6 nh6 fc00:13::2 dev eth0")
    inner = udp6(src=INNER_SRC, dst="fc00:2::77", hlim=30, tc=0x10, fl=0x3)
    pkt = sr_pkt(SID, [SID, SEG_C], 0, nh=NH_IPV6, inner=inner)
    res = run_sr6(cfg, [rx(pkt)])
    out = inner.copy(); out.hlim = 29
    res.expect(eth2=[tx(out, "eth2")])


def test_end_dx6_without_srh(run_sr6):
    cfg = end_cfg(f"ip -6 route add {SID}/128 encap seg6local action End.DX6 nh6 fc00:13::2 dev eth0")
    inner = udp6(src=INNER_SRC, dst="fc00:2::77", hlim=30)
    pkt = IPv6(src=HOST_A, dst=SID, hlim=64, nh=NH_IPV6) / inner
    res = run_sr6(cfg, [rx(pkt)])
    out = inner.copy(); out.hlim = 29
    res.expect(eth2=[tx(out, "eth2")])


def test_end_dx4_decapsulates_to_nh4(run_sr6):
    cfg = end_cfg(f"ip -6 route add {SID}/128 encap seg6local action End.DX4 nh4 10.0.13.2 dev eth0")
    inner = udp4(src="10.1.0.7", dst="10.2.0.9", ttl=30)
    pkt = sr_pkt(SID, [SID, SEG_C], 0, nh=NH_IPV4, inner=inner)
    res = run_sr6(cfg, [rx(pkt)])
    out = inner.copy(); out.ttl = 29; out.chksum = None
    res.expect(eth2=[tx(IP(bytes(out)), "eth2", dst_mac=GW4_MAC["eth2"])])


def test_end_dt6_looks_up_inner_in_table(run_sr6):
    cfg = end_cfg(
        "ip -6 route add fc00:9::/64 via fc00:13::2 dev eth2 table 100",
        f"ip -6 route add {SID}/128 encap seg6local action End.DT6 table 100 dev eth0",
    )
    inner = udp6(src=INNER_SRC, dst="fc00:9::5", hlim=12)
    pkt = sr_pkt(SID, [SID, SEG_C], 0, nh=NH_IPV6, inner=inner)
    res = run_sr6(cfg, [rx(pkt)])
    out = inner.copy(); out.hlim = 11
    res.expect(eth2=[tx(out, "eth2")])


def test_end_dt4_looks_up_inner_in_vrf_table(run_sr6):
    cfg = end_cfg(
        "ip route add 10.9.0.0/16 via 10.0.13.2 dev eth2 table 100",
        f"ip -6 route add {SID}/128 encap seg6local action End.DT4 vrftable 100 dev eth0",
    )
    inner = udp4(src="10.1.0.7", dst="10.9.0.5", ttl=12)
    pkt = sr_pkt(SID, [SID, SEG_C], 0, nh=NH_IPV4, inner=inner)
    res = run_sr6(cfg, [rx(pkt)])
    out = inner.copy(); out.ttl = 11; out.chksum = None
    res.expect(eth2=[tx(IP(bytes(out)), "eth2")])


DT46_CFG = (
    "ip -6 route add fc00:9::/64 via fc00:13::2 dev eth2 table 100",
    "ip route add 10.9.0.0/16 via 10.0.13.2 dev eth2 table 100",
    f"ip -6 route add {SID}/128 encap seg6local action End.DT46 vrftable 100 dev eth0",
)


def test_end_dt46_ipv6_inner(run_sr6):
    inner = udp6(src=INNER_SRC, dst="fc00:9::5", hlim=12)
    pkt = sr_pkt(SID, [SID, SEG_C], 0, nh=NH_IPV6, inner=inner)
    res = run_sr6(end_cfg(*DT46_CFG), [rx(pkt)])
    out = inner.copy(); out.hlim = 11
    res.expect(eth2=[tx(out, "eth2")])


def test_end_dt46_ipv4_inner(run_sr6):
    inner = udp4(src="10.1.0.7", dst="10.9.0.5", ttl=12)
    pkt = sr_pkt(SID, [SID, SEG_C], 0, nh=NH_IPV4, inner=inner)
    res = run_sr6(end_cfg(*DT46_CFG), [rx(pkt)])
    out = inner.copy(); out.ttl = 11; out.chksum = None
    res.expect(eth2=[tx(IP(bytes(out)), "eth2")])


# --- binding SIDs -------------------------------------------------------------------------

BSID = "fc00:f::b6"
P1, P2 = SEG_B, SEG_C  # policy segs P1,P2: P1 out eth1


def b6_input(hlim=64, tc=0, fl=0):
    inner = udp6(src=INNER_SRC, dst="fc00:2::77", hlim=40)
    return inner, sr_pkt(BSID, [FINAL, BSID], 1, nh=NH_IPV6, inner=inner, hlim=hlim, tc=tc, fl=fl)


def test_end_b6_inserts_policy_srh(run_sr6):
    cfg = end_cfg(f"ip -6 route add {BSID}/128 encap seg6local action End.B6 srh segs {P1},{P2} dev eth0")
    inner, pkt = b6_input()
    res = run_sr6(cfg, [rx(pkt)])
    # Kernel End.B6 (behaviours.md): new SRH inserted before the received one, Segment
    # List[0] = the current destination (the BSID), then P2, P1; SL = LE = 2; DA = P1;
    # hop limit - 1; the received SRH is not modified.
    exp = IPv6(src=HOST_A, dst=P1, hlim=63) / srh([BSID, P2, P1], segleft=2, nh=43) / \
        srh([FINAL, BSID], segleft=1, nh=NH_IPV6) / inner
    res.expect(eth1=[tx(exp, "eth1")])


def test_end_b6_encaps(run_sr6):
    cfg = end_cfg(f"ip sr tunsrc set {TUNSRC}",
                  f"ip -6 route add {BSID}/128 encap seg6local action End.B6.Encaps srh segs {P1},{P2} dev eth0")
    inner, pkt = b6_input(hlim=64, tc=0x48, fl=0x4242)
    res = run_sr6(cfg, [rx(pkt)])
    # RFC 8986 §4.13: inner hop limit - 1, SL - 1, DA updated; then H.Encaps with the
    # policy: outer hop limit = the new inner hop limit, tc/fl copied.
    new_inner = sr_pkt(FINAL, [FINAL, BSID], 0, nh=NH_IPV6, inner=inner, hlim=63, tc=0x48, fl=0x4242)
    exp = IPv6(src=TUNSRC, dst=P1, hlim=63, tc=0x48, fl=0x4242) / srh([P2, P1], segleft=1, nh=NH_IPV6) / new_inner
    res.expect(eth1=[tx(exp, "eth1")])


def test_end_b6_encaps_red(run_sr6):
    cfg = end_cfg(f"ip sr tunsrc set {TUNSRC}",
                  f"ip -6 route add {BSID}/128 encap seg6local action End.B6.Encaps.Red srh segs {P1},{P2} dev eth0")
    inner, pkt = b6_input(hlim=64)
    res = run_sr6(cfg, [rx(pkt)])
    new_inner = sr_pkt(FINAL, [FINAL, BSID], 0, nh=NH_IPV6, inner=inner, hlim=63)
    exp = IPv6(src=TUNSRC, dst=P1, hlim=63) / srh([P2], segleft=1, lastentry=0, nh=NH_IPV6) / new_inner
    res.expect(eth1=[tx(exp, "eth1")])
