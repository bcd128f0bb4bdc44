"""Insertion (H.Insert, End.B6) into a packet that carries a Hop-by-Hop Options header.

Linux (seg6_do_srh_inline) puts the SRH right after the IPv6 header, so the Hop-by-Hop
header ends up behind it; RFC 8200 §4.1 requires the Hop-by-Hop header to follow the
IPv6 header immediately, and sr6 inserts the SRH after it. The SRH's bytes (Segment
List, HMAC) are the same on both sides: only where it lies and which header names it
differ. Routes as in test_k_headend.py: fc00:9::/64 steered, S1 routed out eth1."""
from scapy.layers.inet6 import HBHOptUnknown, IPv6ExtHdrHopByHop, Pad1, PadN

from kcommon import *  # noqa: F403

DST6 = "fc00:9::5"
S1, S2 = SEG_B, SEG_C
NH_HOPOPTS, NH_ROUTING = 0, 43
REASON = ("Linux inserts the SRH right after the IPv6 header (seg6_do_srh_inline), in front of the "
          "Hop-by-Hop header; sr6 keeps the Hop-by-Hop header first and inserts the SRH after it")


def hbh(nh, size):
    """A Hop-by-Hop Options header of `size` bytes, as in tests/oracle/test_insert_hbh.py:
    Pad1, a PadN of 3 bytes and an option of type 0x1e (action bits 00: skipped) filling
    the rest (no more than 7 bytes of padding in a row: Linux drops a header with more)."""
    assert size % 8 == 0 and size >= 8
    return IPv6ExtHdrHopByHop(nh=nh, len=size // 8 - 1, autopad=0,
                              options=[Pad1(), PadN(optdata=b"\x00"),
                                       HBHOptUnknown(otype=0x1E, optdata=b"\xab" * (size - 8))])


def with_hbh(pkt, size):
    ip = pkt[IPv6]
    return IPv6(src=ip.src, dst=ip.dst, hlim=ip.hlim, tc=ip.tc, fl=ip.fl, nh=NH_HOPOPTS) / \
        hbh(ip.nh, size) / Raw(bytes(ip.payload))


def both(r, i, pkt, size, new_srh, hlim, dev="eth1"):
    """Frame i: `pkt` (IPv6 / Hop-by-Hop of `size` / rest) with `new_srh` (an SRH whose
    Next Header is patched per side) inserted, destination S1, hop limit `hlim`."""
    rest = bytes(pkt[IPv6ExtHdrHopByHop].payload)
    orig_nh = pkt[IPv6ExtHdrHopByHop].nh
    ip = IPv6(src=HOST_A, dst=S1, hlim=hlim)
    kernel_srh, sr6_srh = new_srh.copy(), new_srh.copy()
    kernel_srh.nh, sr6_srh.nh = NH_HOPOPTS, orig_nh
    r.expect_kernel(i, **{dev: [tx(ip / kernel_srh / hbh(orig_nh, size) / Raw(rest), dev)]})
    ip.nh = NH_HOPOPTS
    r.expect_sr6(i, **{dev: [tx(ip / hbh(NH_ROUTING, size) / sr6_srh / Raw(rest), dev)]})


@scenario(DIFFERENCE(REASON, "RFC 8200 §4.1"))
def test_inline_hop_by_hop(kernel):
    """H.Insert of packets with a Hop-by-Hop header (8, 16, 40 bytes; UDP or an SRH after it; HMAC)"""
    plain = [with_hbh(udp6(dst=DST6, hlim=64), n) for n in (8, 16, 40)]
    with_srh = with_hbh(sr_pkt(DST6, ["fc00:2::99", DST6], 1, hlim=30), 8)
    frames = [rx(p) for p in plain + [with_srh]]
    r = kernel.run(config(f"ip -6 route add fc00:9::/64 encap seg6 mode inline segs {S1},{S2} dev eth1"),
                   frames)
    for i, (p, n) in enumerate(zip(plain, (8, 16, 40))):
        both(r, i, p, n, srh([DST6, S2, S1], 2, 0), 63)
    both(r, 3, with_srh, 8, srh([DST6, S2, S1], 2, 0), 29)

    # With an HMAC TLV: the same bytes on both sides, wherever the SRH lies.
    p = with_hbh(udp6(dst=DST6, hlim=64), 16)
    segs = [DST6, S2, S1]
    tlv = hmac_tlv("sha256", b"secret-two", HOST_A, segs, keyid=8, flags=0x08)
    cfg = config("ip sr hmac set 8 sha256 secret-two",
                 f"ip -6 route add fc00:9::/64 encap seg6 mode inline segs {S1},{S2} hmac 8 dev eth1")
    r = kernel.run(cfg, [rx(p)], labels=["hmac"])
    both(r, 0, p, 16, srh(segs, 2, 0, flags=0x08, tlvs=[tlv]), 63)


BSID = SID


@scenario(DIFFERENCE(REASON, "RFC 8200 §4.1"))
def test_end_b6_hop_by_hop(kernel):
    """End.B6 on an SRH behind a Hop-by-Hop header: the policy's SRH inserted"""
    inner = sr_pkt(BSID, [FINAL, BSID], 1)
    p = with_hbh(inner, 8)
    r = kernel.run(config(seg6local("End.B6", f"srh segs {S1},{S2}")), [rx(p)])
    both(r, 0, p, 8, srh([BSID, S2, S1], 2, 0), 63)
