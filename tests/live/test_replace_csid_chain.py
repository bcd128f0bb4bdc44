"""A chain of REPLACE-C-SID nodes (RFC 9800 §4.2) carrying real traffic end to end:

  h1 -- r1 (head-end) -- s2 (sr6: End replace-csid) -- s3 (sr6: End.X replace-csid)
     -- s4 (sr6: End.DT6, the list's last C-SID) -- h2

No kernel has the flavour, so every C-SID node is sr6; the head-end is the kernel or sr6
(the same lines), which needs no knowledge of the flavour: the containers are written
as its segments. The list is the RFC's layout: the destination is the first SID,
uncompressed, with index 0 (Segment List[1]), and Segment List[0] is a container whose
slots are read from the last (least significant) down. s2, at index 0, moves to the
container (Segments Left 0) and writes its last slot, s3's C-SID, with index K-1; s3
writes the slot below, s4's End.DT6 C-SID; s4 is at Segments Left 0 and decapsulates.

  variant   scheme                   r1's segments                    s3's SID
  c32       block 48, C-SID 32 (K=4) fc00:c:0:2:1::,::4:1:3:1         End.X
  c16       block 48, C-SID 16 (K=8) fc00:d:0:2::,::4:3               End.X
  c32-psp   block 48, C-SID 32       fc00:c:0:2:1::,::4:1:3:2         End.X with PSP
  c32-csid  as c32, the sr6 head-end only, written as full SIDs with `csid replace`
  c16-csid  as c16, the same (`csid replace lblen 48 nflen 16`): sr6 compresses them
            itself (RFC 9800 §7) into the lists above

A datagram reaches h2 only if each node did its part: no route but the shifted
destinations leads on (s2 routes the block to s3, and s3 forwards to s4 only as End.X),
and s4 decapsulates. sr6's per-SID counters (`show sids`) say each SID ran, and the bytes
s4 counted tell whether the SRH arrived there (PSP at s3 removes it).
"""
from __future__ import annotations

import shutil

import pytest

from livenet import Net

N = 200          # datagrams per variant
RATE = 2000      # per second
INNER = 40 + 8 + 64  # inner IPv6 + UDP + payload

# (h2's destination, s2's SID, s3's SID, s4's SID, bytes s4 counts per datagram: outer
# IPv6 + SRH of two entries (40 bytes) unless PSP removed it + the inner packet)
VARIANTS = {
    "c32": ("fc00:b::2", "fc00:c:0:2:1::/80", "fc00:c:0:3:1::/80", "fc00:c:0:4:1::/80", 40 + 40 + INNER),
    "c16": ("fc00:b:1::2", "fc00:d:0:2::/64", "fc00:d:0:3::/64", "fc00:d:0:4::/64", 40 + 40 + INNER),
    "c32-psp": ("fc00:b:2::2", "fc00:c:0:2:1::/80", "fc00:c:0:3:2::/80", "fc00:c:0:4:1::/80", 40 + INNER),
    "c32-csid": ("fc00:b:3::2", "fc00:c:0:2:1::/80", "fc00:c:0:3:1::/80", "fc00:c:0:4:1::/80", 40 + 40 + INNER),
    "c16-csid": ("fc00:b:4::2", "fc00:d:0:2::/64", "fc00:d:0:3::/64", "fc00:d:0:4::/64", 40 + 40 + INNER),
}
# Variants only sr6 can be the head-end of (the kernel has no `csid`).
SR6_HEADEND_ONLY = {"c32-csid", "c16-csid"}

H1 = """
ip -6 addr add fc00:a::2/64 dev h1-r1
ip -6 route add default via fc00:a::1 dev h1-r1
"""
R1 = """
ip -6 addr add fc00:a::1/64 dev r1-h1
ip -6 addr add fc00:12::1/64 dev r1-s2
ip sr tunsrc set fc00:12::1
ip -6 route add fc00:c::/48 via fc00:12::2 dev r1-s2
ip -6 route add fc00:d::/48 via fc00:12::2 dev r1-s2
ip -6 route add fc00:b::/64 encap seg6 mode encap segs fc00:c:0:2:1::,::4:1:3:1 dev r1-s2
ip -6 route add fc00:b:1::/64 encap seg6 mode encap segs fc00:d:0:2::,::4:3 dev r1-s2
ip -6 route add fc00:b:2::/64 encap seg6 mode encap segs fc00:c:0:2:1::,::4:1:3:2 dev r1-s2
"""
R1_SR6 = R1 + """\
ip -6 route add fc00:b:3::/64 encap seg6 mode encap csid replace segs fc00:c:0:2:1::,fc00:c:0:3:1::,fc00:c:0:4:1:: dev r1-s2
ip -6 route add fc00:b:4::/64 encap seg6 mode encap csid replace lblen 48 nflen 16 segs fc00:d:0:2::,fc00:d:0:3::,fc00:d:0:4:: dev r1-s2
"""
S2 = """
ip -6 addr add fc00:12::2/64 dev s2-r1
ip -6 addr add fc00:23::2/64 dev s2-s3
ip -6 route add fc00:c:0:2:1::/80 encap seg6local action End flavors replace-csid lblen 48 nflen 32 dev s2-r1
ip -6 route add fc00:d:0:2::/64 encap seg6local action End flavors replace-csid lblen 48 nflen 16 dev s2-r1
ip -6 route add fc00:c::/48 via fc00:23::3 dev s2-s3
ip -6 route add fc00:d::/48 via fc00:23::3 dev s2-s3
ip -6 route add fc00:a::/64 via fc00:12::1 dev s2-r1
"""
# s3 has no route to the block: only End.X's next hop takes a packet on to s4.
S3 = """
ip -6 addr add fc00:23::3/64 dev s3-s2
ip -6 addr add fc00:34::3/64 dev s3-s4
ip -6 route add fc00:c:0:3:1::/80 encap seg6local action End.X nh6 fc00:34::4 flavors replace-csid dev s3-s2
ip -6 route add fc00:c:0:3:2::/80 encap seg6local action End.X nh6 fc00:34::4 flavors psp,replace-csid dev s3-s2
ip -6 route add fc00:d:0:3::/64 encap seg6local action End.X nh6 fc00:34::4 flavors replace-csid lblen 48 nflen 16 dev s3-s2
ip -6 route add fc00:a::/64 via fc00:23::2 dev s3-s2
"""
S4 = """
ip -6 addr add fc00:34::4/64 dev s4-s3
ip -6 addr add fc00:b::1/64 dev s4-h2
ip -6 addr add fc00:b:1::1/64 dev s4-h2
ip -6 addr add fc00:b:2::1/64 dev s4-h2
ip -6 addr add fc00:b:3::1/64 dev s4-h2
ip -6 addr add fc00:b:4::1/64 dev s4-h2
ip -6 route add fc00:c:0:4:1::/80 encap seg6local action End.DT6 table main dev s4-s3
ip -6 route add fc00:d:0:4::/64 encap seg6local action End.DT6 table main dev s4-s3
ip -6 route add fc00:a::/64 via fc00:34::3 dev s4-s3
"""
H2 = """
ip -6 addr add fc00:b::2/64 dev h2-s4
ip -6 addr add fc00:b:1::2/64 dev h2-s4
ip -6 addr add fc00:b:2::2/64 dev h2-s4
ip -6 addr add fc00:b:3::2/64 dev h2-s4
ip -6 addr add fc00:b:4::2/64 dev h2-s4
ip -6 route add default via fc00:b::1 dev h2-s4
"""


@pytest.fixture(scope="module", params=["kernel", "sr6"], ids=["kernel-headend", "sr6-headend"])
def chain(request, sr6_bin, tmp_path_factory):
    net = Net(sr6_bin, tmp_path_factory.mktemp(f"rcsid-{request.param}"), tag=f"r{request.param[0]}")
    try:
        ns = {n: net.ns(n) for n in ("h1", "r1", "s2", "s3", "s4", "h2")}
        net.link(ns["h1"], "h1-r1", ns["r1"], "r1-h1")
        net.link(ns["r1"], "r1-s2", ns["s2"], "s2-r1")
        net.link(ns["s2"], "s2-s3", ns["s3"], "s3-s2")
        net.link(ns["s3"], "s3-s4", ns["s4"], "s4-s3")
        net.link(ns["s4"], "s4-h2", ns["h2"], "h2-s4")
        net.kernel(ns["h1"], H1, forwarding=False)
        net.kernel(ns["h2"], H2, forwarding=False)
        if request.param == "sr6":
            net.sr6(ns["r1"], R1_SR6)
        else:
            net.kernel(ns["r1"], R1)
        nodes = {n: net.sr6(ns[n], c) for n, c in (("s2", S2), ("s3", S3), ("s4", S4))}
        yield net, ns, nodes, request.param
    finally:
        net.close()


def clear(nodes):
    for n in nodes.values():
        n.ctl("clear-counters")


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_datagrams_cross_the_chain(chain, variant):
    net, ns, nodes, headend = chain
    if variant in SR6_HEADEND_ONLY and headend != "sr6":
        pytest.skip("an sr6 extension: the kernel head-end has no `csid`")
    dst, s2_sid, s3_sid, s4_sid, s4_bytes = VARIANTS[variant]
    clear(nodes)
    res = net.udp(ns["h1"], ns["h2"], dst, N, RATE)
    assert res["unique"] == N and res["dups"] == 0, res
    for node, sid in (("s2", s2_sid), ("s3", s3_sid), ("s4", s4_sid)):
        c = nodes[node].sid(sid)
        assert (c["packets"], c["errors"]) == (N, 0), (node, c)
    # What reached s4: the SRH of two entries, or (PSP at s3) none.
    assert nodes["s4"].sid(s4_sid)["bytes"] == N * s4_bytes


@pytest.mark.skipif(shutil.which("ping") is None, reason="ping (iputils-ping) not installed")
@pytest.mark.parametrize("variant", list(VARIANTS))
def test_ping_across_the_chain(chain, variant):
    """h1 -> h2 over the C-SID chain, h2 -> h1 plain IPv6 back through the same nodes."""
    net, ns, nodes, headend = chain
    if variant in SR6_HEADEND_ONLY and headend != "sr6":
        pytest.skip("an sr6 extension: the kernel head-end has no `csid`")
    dst, s2_sid, s3_sid, s4_sid, _ = VARIANTS[variant]
    clear(nodes)
    assert net.ping(ns["h1"], dst, count=3)
    for node, sid in (("s2", s2_sid), ("s3", s3_sid), ("s4", s4_sid)):
        assert nodes[node].sid(sid)["packets"] == 3, node
