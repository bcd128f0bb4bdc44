"""The two interoperability topologies of tests/live (drawn in tests/live/README.md).

T1  h1 --- r1 (kernel: H.Encaps, HMAC signing) --- r2 (sr6: End) --- r3 (kernel: End.DT6) --- h2
T2  h1 --- s1 (sr6: H.Encaps / H.Insert, HMAC signing; End.DX4 back) --- k2 (kernel: End,
           HMAC required) --- s3 (sr6: End.DT6, End.DX6, End.DX4, HMAC required; H.Encaps
           of IPv4 back) --- h2
"""
from __future__ import annotations

from livenet import Net

# ---- a -- r -- b ----------------------------------------------------------------------------
def build_arb(net: Net, b_extra: str = "") -> tuple[str, str, str]:
    """a (fc00:a::2) -- a-r | r-a  r  r-b | b-r -- b (fc00:b::2): two hosts whose kernels
    route everything through r (fc00:a::1 and fc00:b::1, r's to configure), and
    `b_extra` lines for b. Returns the three namespaces."""
    a, r, b = net.ns("a"), net.ns("r"), net.ns("b")
    net.link(a, "a-r", r, "r-a")
    net.link(r, "r-b", b, "b-r")
    net.kernel(a, "ip -6 addr add fc00:a::2/64 dev a-r\nip -6 route add default via fc00:a::1 dev a-r",
               forwarding=False)
    net.kernel(b, "ip -6 addr add fc00:b::2/64 dev b-r\nip -6 route add default via fc00:b::1 dev b-r\n"
               + b_extra, forwarding=False)
    return a, r, b


# ---- T1 ------------------------------------------------------------------------------------
T1_H1 = """
ip -6 addr add fc00:a::2/64 dev h1-r1
ip -6 route add default via fc00:a::1 dev h1-r1
"""
T1_R1 = """
ip -6 addr add fc00:a::1/64 dev r1-h1
ip -6 addr add fc00:12::1/64 dev r1-r2
ip sr hmac set 7 sha256 s3cret
ip sr hmac set 8 sha256 wrong
ip -6 route add fc00:2::/48 via fc00:12::2 dev r1-r2
ip -6 route add fc00:3::/48 via fc00:12::2 dev r1-r2
ip -6 route add fc00:b::/64 encap seg6 mode encap segs fc00:2::e,fc00:3::d6 dev r1-r2
ip -6 route add fc00:b:1::/64 encap seg6 mode encap segs fc00:2::e7,fc00:3::d6 hmac 7 dev r1-r2
ip -6 route add fc00:b:2::/64 encap seg6 mode encap segs fc00:2::e7,fc00:3::d6 hmac 8 dev r1-r2
"""
# The sr6 node: the same lines an operator would give a kernel router.
T1_R2 = """
ip -6 addr add fc00:12::2/64 dev r2-r1
ip -6 addr add fc00:23::2/64 dev r2-r3
ip sr hmac set 7 sha256 s3cret
ip sr hmac set 8 sha256 other
ip -6 route add fc00:3::/48 via fc00:23::3 dev r2-r3
ip -6 route add fc00:b::/48 via fc00:23::3 dev r2-r3
ip -6 route add fc00:a::/64 via fc00:12::1 dev r2-r1
ip -6 route add fc00:2::e/128 encap seg6local action End count dev r2-r1
ip -6 route add fc00:2::e7/128 encap seg6local action End count dev r2-r1
sysctl -w net.ipv6.conf.all.seg6_enabled=1
sysctl -w net.ipv6.conf.r2-r1.seg6_enabled=1
"""
T1_R3 = """
ip -6 addr add fc00:23::3/64 dev r3-r2
ip -6 addr add fc00:b::1/64 dev r3-h2
ip -6 addr add fc00:b:1::1/64 dev r3-h2
ip -6 addr add fc00:b:2::1/64 dev r3-h2
ip sr hmac set 7 sha256 s3cret
ip -6 route add fc00:a::/64 via fc00:23::2 dev r3-r2
ip -6 route add fc00:3::d6/128 encap seg6local action End.DT6 table 254 dev r3-r2
sysctl -w net.ipv6.conf.all.seg6_enabled=1
sysctl -w net.ipv6.conf.r3-r2.seg6_enabled=1
"""
T1_H2 = """
ip -6 addr add fc00:b::2/64 dev h2-r3
ip -6 addr add fc00:b:1::2/64 dev h2-r3
ip -6 addr add fc00:b:2::2/64 dev h2-r3
ip -6 route add default via fc00:b::1 dev h2-r3
"""


def build_t1(net: Net, backend: str):
    ns = {n: net.ns(n) for n in ("h1", "r1", "r2", "r3", "h2")}
    net.link(ns["h1"], "h1-r1", ns["r1"], "r1-h1")
    net.link(ns["r1"], "r1-r2", ns["r2"], "r2-r1")
    net.link(ns["r2"], "r2-r3", ns["r3"], "r3-r2")
    net.link(ns["r3"], "r3-h2", ns["h2"], "h2-r3")
    net.kernel(ns["h1"], T1_H1, forwarding=False)
    net.kernel(ns["r1"], T1_R1)
    net.kernel(ns["r3"], T1_R3)
    net.kernel(ns["h2"], T1_H2, forwarding=False)
    sr6 = net.sr6(ns["r2"], T1_R2, backend=backend)
    return ns, sr6


# ---- T2 ------------------------------------------------------------------------------------
T2_H1 = """
ip -6 addr add fc00:a::2/64 dev h1-s1
ip addr add 10.1.0.2/24 dev h1-s1
ip -6 route add default via fc00:a::1 dev h1-s1
ip route add default via 10.1.0.1 dev h1-s1
"""
T2_S1 = """
ip -6 addr add fc00:a::1/64 dev s1-h1
ip addr add 10.1.0.1/24 dev s1-h1
ip -6 addr add fc00:12::1/64 dev s1-k2
ip sr tunsrc set fc00:12::1
ip sr hmac set 7 sha256 s3cret
ip -6 route add fc00:2::/48 via fc00:12::2 dev s1-k2
ip -6 route add fc00:3::/48 via fc00:12::2 dev s1-k2
ip -6 route add fc00:b::/64 encap seg6 mode encap segs fc00:2::e,fc00:3::d6 hmac 7 dev s1-k2
ip -6 route add fc00:c::/64 encap seg6 mode inline segs fc00:2::e hmac 7 dev s1-k2
ip -6 route add fc00:d::/64 encap seg6 mode encap segs fc00:2::e,fc00:3::a6 hmac 7 dev s1-k2
ip route add 10.2.0.0/24 encap seg6 mode encap segs fc00:2::e,fc00:3::a4 hmac 7 dev s1-k2
ip -6 route add fc00:1::a4/128 encap seg6local action End.DX4 nh4 10.1.0.2 dev s1-k2
sysctl -w net.ipv6.conf.all.seg6_enabled=1
sysctl -w net.ipv6.conf.s1-k2.seg6_enabled=1
"""
T2_K2 = """
ip -6 addr add fc00:12::2/64 dev k2-s1
ip -6 addr add fc00:23::2/64 dev k2-s3
ip sr hmac set 7 sha256 s3cret
ip -6 route add fc00:2::e/128 encap seg6local action End count dev k2-s1
ip -6 route add fc00:3::/48 via fc00:23::3 dev k2-s3
ip -6 route add fc00:b::/48 via fc00:23::3 dev k2-s3
ip -6 route add fc00:c::/64 via fc00:23::3 dev k2-s3
ip -6 route add fc00:d::/64 via fc00:23::3 dev k2-s3
ip -6 route add fc00:a::/64 via fc00:12::1 dev k2-s1
ip -6 route add fc00:1::/48 via fc00:12::1 dev k2-s1
sysctl -w net.ipv6.conf.all.seg6_enabled=1
sysctl -w net.ipv6.conf.k2-s1.seg6_enabled=1
sysctl -w net.ipv6.conf.k2-s1.seg6_require_hmac=1
"""
T2_S3 = """
ip -6 addr add fc00:23::3/64 dev s3-k2
ip -6 addr add fc00:b::1/64 dev s3-h2
ip -6 addr add fc00:c::1/64 dev s3-h2
ip -6 addr add fc00:d::1/64 dev s3-h2
ip addr add 10.2.0.1/24 dev s3-h2
ip sr hmac set 7 sha256 s3cret
ip -6 route add fc00:a::/64 via fc00:23::2 dev s3-k2
ip -6 route add fc00:3::d6/128 encap seg6local action End.DT6 table main dev s3-k2
ip -6 route add fc00:3::a6/128 encap seg6local action End.DX6 nh6 fc00:d::2 dev s3-k2
ip -6 route add fc00:3::a4/128 encap seg6local action End.DX4 nh4 10.2.0.2 dev s3-k2
ip -6 route add fc00:1::/48 via fc00:23::2 dev s3-k2
ip route add 10.1.0.0/24 encap seg6 mode encap segs fc00:1::a4 dev s3-k2
sysctl -w net.ipv6.conf.all.seg6_enabled=1
sysctl -w net.ipv6.conf.s3-k2.seg6_enabled=1
sysctl -w net.ipv6.conf.s3-k2.seg6_require_hmac=1
"""
T2_H2 = """
ip -6 addr add fc00:b::2/64 dev h2-s3
ip -6 addr add fc00:c::2/64 dev h2-s3
ip -6 addr add fc00:d::2/64 dev h2-s3
ip addr add 10.2.0.2/24 dev h2-s3
ip -6 route add default via fc00:b::1 dev h2-s3
ip route add default via 10.2.0.1 dev h2-s3
sysctl -w net.ipv6.conf.all.seg6_enabled=1
sysctl -w net.ipv6.conf.h2-s3.seg6_enabled=1
sysctl -w net.ipv6.conf.h2-s3.seg6_require_hmac=-1
"""


def build_t2(net: Net, backend: str):
    ns = {n: net.ns(n) for n in ("h1", "s1", "k2", "s3", "h2")}
    net.link(ns["h1"], "h1-s1", ns["s1"], "s1-h1")
    net.link(ns["s1"], "s1-k2", ns["k2"], "k2-s1")
    net.link(ns["k2"], "k2-s3", ns["s3"], "s3-k2")
    net.link(ns["s3"], "s3-h2", ns["h2"], "h2-s3")
    net.kernel(ns["h1"], T2_H1, forwarding=False)
    net.kernel(ns["k2"], T2_K2)
    net.kernel(ns["h2"], T2_H2, forwarding=False)
    s1 = net.sr6(ns["s1"], T2_S1, backend=backend)
    s3 = net.sr6(ns["s3"], T2_S3, backend=backend)
    return ns, s1, s3
