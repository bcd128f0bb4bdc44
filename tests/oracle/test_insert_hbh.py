"""H.Insert and End.B6 into a packet that carries a Hop-by-Hop Options header.

RFC 8200 §4.1: "The Hop-by-Hop Options header, when present, must immediately follow the
IPv6 header", so the inserted SRH goes after it: IPv6 (Next Header 0) / Hop-by-Hop (its
Next Header now 43, its options unchanged) / SRH (Next Header what the Hop-by-Hop header
named) / the rest unchanged; Payload Length grown by the SRH; the Segment List and the
destination as without a Hop-by-Hop header (RFC 8986 §5.2). Linux puts the SRH before
the Hop-by-Hop header (tests/kernel/test_k_insert_hbh.py, docs/conformance.md).

Routes as in test_headend.py: fc00:9::/64 steered into the policy, S1 routed out eth1."""
import pytest
from scapy.layers.inet6 import HBHOptUnknown, ICMPv6PacketTooBig, IPv6ExtHdrHopByHop, Pad1, PadN

from sr6_oracle import (
    ICMP6_ERROR_MAX, HOST_A, NH_ROUTING, NH_UDP, SEG_B, SEG_C, SEG_C2, IPv6, Raw, config, hmac_tlv, rx, sr_pkt,
    srh, tx, udp6,
)

S1, S2, S3 = SEG_B, SEG_C, SEG_C2
DST6 = "fc00:9::5"
NH_HOPOPTS = 0


def route6(mode, segs, extra=""):
    return f"ip -6 route add fc00:9::/64 encap seg6 mode {mode} segs {','.join(segs)}{extra} dev eth1"


def hbh(nh, size):
    """A Hop-by-Hop Options header of `size` bytes (RFC 8200 §4.3): Pad1, a PadN of 3
    bytes and an option of type 0x1e (RFC 4727 experiment; action bits 00: skipped by a
    node that does not know it) filling the rest. (No more than 7 bytes of padding in a
    row: Linux drops a header with more, ip6_parse_tlv.)"""
    assert size % 8 == 0 and size >= 8
    return IPv6ExtHdrHopByHop(nh=nh, len=size // 8 - 1, autopad=0,
                              options=[Pad1(), PadN(optdata=b"\x00"),
                                       HBHOptUnknown(otype=0x1E, optdata=b"\xab" * (size - 8))])


def with_hbh(pkt, size):
    """`pkt` (IPv6 / rest) with a Hop-by-Hop header of `size` bytes after the IPv6 header."""
    ip = pkt[IPv6]
    rest = bytes(ip.payload)
    return IPv6(src=ip.src, dst=ip.dst, hlim=ip.hlim, tc=ip.tc, fl=ip.fl, nh=NH_HOPOPTS) / \
        hbh(ip.nh, size) / Raw(rest)


def after_hbh(pkt):
    """What follows the Hop-by-Hop header of `pkt` (built by `with_hbh`)."""
    return bytes(pkt[IPv6ExtHdrHopByHop].payload)


@pytest.mark.parametrize("size", [8, 16, 64])
def test_inline_srh_after_hop_by_hop(run_sr6, size):
    pkt = with_hbh(udp6(dst=DST6, hlim=64, tc=0x20, fl=0x777), size)
    res = run_sr6(config(route6("inline", [S1, S2])), [rx(pkt)])
    exp = IPv6(src=HOST_A, dst=S1, hlim=63, tc=0x20, fl=0x777, nh=NH_HOPOPTS) / hbh(NH_ROUTING, size) / \
        srh([DST6, S2, S1], segleft=2, nh=NH_UDP) / Raw(after_hbh(pkt))
    res.expect(eth1=[tx(exp, "eth1")])


@pytest.mark.parametrize("size", [8, 24])
def test_inline_red_srh_after_hop_by_hop(run_sr6, size):
    pkt = with_hbh(udp6(dst=DST6, hlim=9), size)
    res = run_sr6(config(route6("inline.red", [S1, S2, S3])), [rx(pkt)])
    # Reduced: S1 only in the destination; Last Entry = n - 1 = 2, Segments Left = n = 3.
    exp = IPv6(src=HOST_A, dst=S1, hlim=8, nh=NH_HOPOPTS) / hbh(NH_ROUTING, size) / \
        srh([DST6, S3, S2], segleft=3, lastentry=2, nh=NH_UDP) / Raw(after_hbh(pkt))
    res.expect(eth1=[tx(exp, "eth1")])


@pytest.mark.parametrize("size", [8, 32])
def test_inline_before_an_existing_srh(run_sr6, size):
    # A packet already carrying an SRH (its destination, DST6, the active segment):
    # the policy's SRH is inserted in front of the received one, as without a
    # Hop-by-Hop header (Linux seg6_do_srh_inline); the received SRH is unchanged.
    inner = sr_pkt(DST6, ["fc00:2::99", DST6], 1)
    pkt = with_hbh(inner, size)
    res = run_sr6(config(route6("inline", [S1])), [rx(pkt)])
    exp = IPv6(src=HOST_A, dst=S1, hlim=63, nh=NH_HOPOPTS) / hbh(NH_ROUTING, size) / \
        srh([DST6, S1], segleft=1, nh=NH_ROUTING) / Raw(bytes(inner[IPv6].payload))
    res.expect(eth1=[tx(exp, "eth1")])


def test_inline_hmac_after_hop_by_hop(run_sr6):
    # The HMAC text (RFC 8754 §2.1.2.1: source, Last Entry, flags, key id, segments) does
    # not depend on where the SRH lies.
    pkt = with_hbh(udp6(dst=DST6, hlim=64), 16)
    cfg = config("ip sr hmac set 7 sha256 mysecret", route6("inline", [S1, S2], " hmac 7"))
    res = run_sr6(cfg, [rx(pkt)])
    segs = [DST6, S2, S1]
    tlv = hmac_tlv("sha256", b"mysecret", HOST_A, segs, keyid=7, flags=0x08)
    exp = IPv6(src=HOST_A, dst=S1, hlim=63, nh=NH_HOPOPTS) / hbh(NH_ROUTING, 16) / \
        srh(segs, segleft=2, nh=NH_UDP, flags=0x08, tlvs=[tlv]) / Raw(after_hbh(pkt))
    res.expect(eth1=[tx(exp, "eth1")])


def test_inline_with_hop_by_hop_over_mtu(run_sr6):
    # The inserted bytes count against the egress MTU (RFC 8200 §5, RFC 4443 §3.2): a
    # packet that fits only without its SRH gets a Packet Too Big with the MTU, quoting
    # it as it would have left (behaviours.md; docs/conformance.md "Insertion").
    mtu = 1280
    cfg = config("ip link set dev eth1 mtu 1280", route6("inline", [S1]))
    fits = with_hbh(udp6(dst=DST6, hlim=64, n=mtu - 40 - 16 - 40 - 8), 16)
    over = with_hbh(udp6(dst=DST6, hlim=64, n=mtu - 40 - 16 - 40 - 8 + 1), 16)
    assert len(bytes(fits)) + 40 == mtu
    res = run_sr6(cfg, [rx(fits), rx(over)])

    def inserted(p):
        return IPv6(src=HOST_A, dst=S1, hlim=63, nh=NH_HOPOPTS) / hbh(NH_ROUTING, 16) / \
            srh([DST6, S1], segleft=1, nh=NH_UDP) / Raw(after_hbh(p))
    # RFC 4443 §3.2, from the arrival device's address, as much of the packet as fits
    # in 1280 bytes (§2.4 (c)).
    quote = bytes(inserted(over))[:ICMP6_ERROR_MAX - 48]
    ptb = IPv6(src="fc00:1::1", dst=HOST_A, hlim=64) / ICMPv6PacketTooBig(mtu=mtu) / Raw(quote)
    res.expect(eth1=[tx(inserted(fits), "eth1")], eth0=[tx(ptb, "eth0")])


def test_inline_truncated_hop_by_hop_is_dropped(run_sr6):
    # A Hop-by-Hop header whose Hdr Ext Len runs past the end of the packet (32 bytes
    # claimed, 8 there): there is nowhere to insert the SRH after it. Dropped before
    # routing, as every packet with a Hop-by-Hop header that overruns the packet
    # (pipeline::hbh; RFC 8200 §4.3; Linux's ipv6_parse_hopopts drops it too).
    pkt = IPv6(src=HOST_A, dst=DST6, hlim=64, nh=NH_HOPOPTS) / Raw(bytes([NH_UDP, 3, 1, 4, 0, 0, 0, 0]))
    res = run_sr6(config(route6("inline", [S1])), [rx(pkt)])
    res.expect()
    assert res.drops().get("hbh_malformed") == 1, res.drops()


# --- End.B6 -------------------------------------------------------------------------------

BSID = "fc00:f::b6"
FINAL = "fc00:2::99"


def test_end_b6_srh_after_hop_by_hop(run_sr6):
    # Kernel End.B6 (behaviours.md): the policy's SRH inserted before the received one,
    # Segment List[0] = the BSID; both after the Hop-by-Hop header (RFC 8200 §4.1).
    inner = sr_pkt(BSID, [FINAL, BSID], 1)
    pkt = with_hbh(inner, 8)
    cfg = config(f"ip -6 route add {BSID}/128 encap seg6local action End.B6 srh segs {S1},{S2} dev eth0")
    res = run_sr6(cfg, [rx(pkt)])
    exp = IPv6(src=HOST_A, dst=S1, hlim=63, nh=NH_HOPOPTS) / hbh(NH_ROUTING, 8) / \
        srh([BSID, S2, S1], segleft=2, nh=NH_ROUTING) / Raw(bytes(inner[IPv6].payload))
    res.expect(eth1=[tx(exp, "eth1")])
