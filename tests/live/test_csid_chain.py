"""A chain of NEXT-C-SID nodes (RFC 9800 §4.1), with the Linux kernel as one of them in
the middle, carrying real traffic end to end:

  h1 -- r1 (head-end) -- s2 (sr6: End next-csid) -- k3 (kernel: End next-csid)
     -- s4 (sr6: End.DT6, the container's last C-SID) -- h2

F3216 (block fc00:0::/32, 16-bit C-SIDs): s2 is C-SID 2, k3 is 3, s4's End.DT6 is 4 (a
/48 SID without flavour, as a list ends at decapsulation in RFC 9800 §4.1.1). The
head-end is the kernel or sr6 (the same lines), with one policy per variant, each to a
/64 of h2:

  fc00:b::/64    encap.red segs fc00:0:2:3:4::               pure uSID: no SRH at all
  fc00:b:1::/64  encap segs fc00:0:2:3:4::                   one container in an SRH (SL 0)
  fc00:b:2::/64  encap segs fc00:0:2:3::,fc00:0:4::          the kernel (k3) exhausts the
                                                             first container: ordinary End
  fc00:b:3::/64  encap segs fc00:0:2::,fc00:0:3:4::          sr6 (s2) exhausts it
  fc00:b:4::/64  encap csid next segs fc00:0:2::,fc00:0:3::,fc00:0:4::
                 (sr6 head-end only: it compresses the full SIDs itself, RFC 9800 §7,
                 into one container and no SRH)

A datagram reaches h2 only if every node did its part: s2's and k3's shifts bring the
destination to the next node's C-SID (no other route leads there), and s4 decapsulates.
Each node's counters say it ran: sr6's per-SID counters (`show sids`, with the bytes of
what arrived, which tell the packet's shape) and the kernel's `count` on its route.
"""
from __future__ import annotations

import re
import shutil

import pytest

from livenet import Net, sh

N = 200          # datagrams per variant
RATE = 2000      # per second

# (destination in h2, bytes sr6 counts per datagram at s2: outer IPv6 40 + SRH + inner
# IPv6 40 + UDP 8 + 64-byte payload)
VARIANTS = {
    "pure-usid": ("fc00:b::2", 40 + 0 + 112),
    "srh-one-container": ("fc00:b:1::2", 40 + 24 + 112),
    "kernel-exhausts": ("fc00:b:2::2", 40 + 40 + 112),
    "sr6-exhausts": ("fc00:b:3::2", 40 + 40 + 112),
    "sr6-compresses": ("fc00:b:4::2", 40 + 0 + 112),
}
# Variants only sr6 can be the head-end of (the kernel has no `csid`).
SR6_HEADEND_ONLY = {"sr6-compresses"}

H1 = """
ip -6 addr add fc00:a::2/64 dev h1-r1
ip -6 route add default via fc00:a::1 dev h1-r1
"""
R1 = """
ip -6 addr add fc00:a::1/64 dev r1-h1
ip -6 addr add fc00:12::1/64 dev r1-s2
ip sr tunsrc set fc00:12::1
ip -6 route add fc00:0::/32 via fc00:12::2 dev r1-s2
ip -6 route add fc00:b::/64 encap seg6 mode encap.red segs fc00:0:2:3:4:: dev r1-s2
ip -6 route add fc00:b:1::/64 encap seg6 mode encap segs fc00:0:2:3:4:: dev r1-s2
ip -6 route add fc00:b:2::/64 encap seg6 mode encap segs fc00:0:2:3::,fc00:0:4:: dev r1-s2
ip -6 route add fc00:b:3::/64 encap seg6 mode encap segs fc00:0:2::,fc00:0:3:4:: dev r1-s2
"""
R1_SR6 = R1 + """\
ip -6 route add fc00:b:4::/64 encap seg6 mode encap csid next segs fc00:0:2::,fc00:0:3::,fc00:0:4:: dev r1-s2
"""
S2 = """
ip -6 addr add fc00:12::2/64 dev s2-r1
ip -6 addr add fc00:23::2/64 dev s2-k3
ip -6 route add fc00:0:2::/48 encap seg6local action End flavors next-csid lblen 32 nflen 16 count dev s2-r1
ip -6 route add fc00:0::/32 via fc00:23::3 dev s2-k3
ip -6 route add fc00:a::/64 via fc00:12::1 dev s2-r1
sysctl -w net.ipv6.conf.all.seg6_enabled=1
sysctl -w net.ipv6.conf.s2-r1.seg6_enabled=1
"""
K3 = """
ip -6 addr add fc00:23::3/64 dev k3-s2
ip -6 addr add fc00:34::3/64 dev k3-s4
ip -6 route add fc00:0:3::/48 encap seg6local action End flavors next-csid lblen 32 nflen 16 count dev k3-s2
ip -6 route add fc00:0::/32 via fc00:34::4 dev k3-s4
ip -6 route add fc00:a::/64 via fc00:23::2 dev k3-s2
sysctl -w net.ipv6.conf.all.seg6_enabled=1
sysctl -w net.ipv6.conf.k3-s2.seg6_enabled=1
"""
S4 = """
ip -6 addr add fc00:34::4/64 dev s4-k3
ip -6 addr add fc00:b::1/64 dev s4-h2
ip -6 addr add fc00:b:1::1/64 dev s4-h2
ip -6 addr add fc00:b:2::1/64 dev s4-h2
ip -6 addr add fc00:b:3::1/64 dev s4-h2
ip -6 addr add fc00:b:4::1/64 dev s4-h2
ip -6 route add fc00:0:4::/48 encap seg6local action End.DT6 table main count dev s4-k3
ip -6 route add fc00:a::/64 via fc00:34::3 dev s4-k3
sysctl -w net.ipv6.conf.all.seg6_enabled=1
sysctl -w net.ipv6.conf.s4-k3.seg6_enabled=1
"""
H2 = """
ip -6 addr add fc00:b::2/64 dev h2-s4
ip -6 addr add fc00:b:1::2/64 dev h2-s4
ip -6 addr add fc00:b:2::2/64 dev h2-s4
ip -6 addr add fc00:b:3::2/64 dev h2-s4
ip -6 addr add fc00:b:4::2/64 dev h2-s4
ip -6 route add default via fc00:b::1 dev h2-s4
"""


def kernel_route_packets(ns: str, prefix: str) -> int:
    """Packets the kernel's seg6local route with `count` processed (`ip -s -6 route`)."""
    out = sh(["ip", "-n", ns, "-s", "-6", "route", "show", prefix])
    m = re.search(r"packets (\d+)", out)
    assert m, f"no counter on the kernel's {prefix} route: {out!r}"
    return int(m.group(1))


@pytest.fixture(scope="module", params=["kernel", "sr6"], ids=["kernel-headend", "sr6-headend"])
def chain(request, sr6_bin, tmp_path_factory):
    net = Net(sr6_bin, tmp_path_factory.mktemp(f"csid-{request.param}"), tag=f"c{request.param[0]}")
    try:
        ns = {n: net.ns(n) for n in ("h1", "r1", "s2", "k3", "s4", "h2")}
        net.link(ns["h1"], "h1-r1", ns["r1"], "r1-h1")
        net.link(ns["r1"], "r1-s2", ns["s2"], "s2-r1")
        net.link(ns["s2"], "s2-k3", ns["k3"], "k3-s2")
        net.link(ns["k3"], "k3-s4", ns["s4"], "s4-k3")
        net.link(ns["s4"], "s4-h2", ns["h2"], "h2-s4")
        net.kernel(ns["h1"], H1, forwarding=False)
        net.kernel(ns["k3"], K3)
        net.kernel(ns["h2"], H2, forwarding=False)
        if request.param == "sr6":
            net.sr6(ns["r1"], R1_SR6)
        else:
            net.kernel(ns["r1"], R1)
        s2 = net.sr6(ns["s2"], S2)
        s4 = net.sr6(ns["s4"], S4)
        yield net, ns, s2, s4, request.param
    finally:
        net.close()


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_datagrams_cross_the_chain(chain, variant):
    net, ns, s2, s4, headend = chain
    if variant in SR6_HEADEND_ONLY and headend != "sr6":
        pytest.skip("an sr6 extension: the kernel head-end has no `csid`")
    dst, s2_bytes = VARIANTS[variant]
    s2.ctl("clear-counters")
    s4.ctl("clear-counters")
    k3_before = kernel_route_packets(ns["k3"], "fc00:0:3::/48")
    res = net.udp(ns["h1"], ns["h2"], dst, N, RATE)
    assert res["unique"] == N and res["dups"] == 0, res
    a = s2.sid("fc00:0:2::/48")
    assert (a["packets"], a["errors"]) == (N, 0), a
    # The shape that arrived at s2: no SRH, an SRH of one or of two segments.
    assert a["bytes"] == N * s2_bytes, a
    assert kernel_route_packets(ns["k3"], "fc00:0:3::/48") - k3_before == N
    d = s4.sid("fc00:0:4::/48")
    assert (d["packets"], d["errors"]) == (N, 0), d


@pytest.mark.skipif(shutil.which("ping") is None, reason="ping (iputils-ping) not installed")
@pytest.mark.parametrize("variant", list(VARIANTS))
def test_ping_across_the_chain(chain, variant):
    """h1 -> h2 over the C-SID chain, h2 -> h1 plain IPv6 back through the same nodes."""
    net, ns, s2, s4, headend = chain
    if variant in SR6_HEADEND_ONLY and headend != "sr6":
        pytest.skip("an sr6 extension: the kernel head-end has no `csid`")
    dst, _ = VARIANTS[variant]
    s2.ctl("clear-counters")
    s4.ctl("clear-counters")
    k3_before = kernel_route_packets(ns["k3"], "fc00:0:3::/48")
    assert net.ping(ns["h1"], dst, count=3)
    assert s2.sid("fc00:0:2::/48")["packets"] == 3
    assert kernel_route_packets(ns["k3"], "fc00:0:3::/48") - k3_before == 3
    assert s4.sid("fc00:0:4::/48")["packets"] == 3
