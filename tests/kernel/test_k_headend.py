"""Head-ends (RFC 8986 §5; kernel seg6_iptunnel): encap, encap.red, inline, l2encap,
l2encap.red, with IPv6 and IPv4 payloads.  Steered prefixes: fc00:9::/64 and
10.9.0.0/16; S1 = fc00:2::1 is routed out eth1."""
from kcommon import *  # noqa: F403

DST6 = "fc00:9::5"
DST4 = "10.9.0.5"
S1, S2, S3 = SEG_B, SEG_C, SEG_C2


def route6(mode, segs, extra="", dev="eth1"):
    return f"ip -6 route add fc00:9::/64 encap seg6 mode {mode} segs {','.join(segs)}{extra} dev {dev}"


def route4(mode, segs, extra="", dev="eth1"):
    return f"ip route add 10.9.0.0/16 encap seg6 mode {mode} segs {','.join(segs)}{extra} dev {dev}"


def v6frames():
    return [rx(udp6(dst=DST6, hlim=64)), rx(udp6(dst=DST6, hlim=20, tc=0xB8, fl=0xABCDE)),
            rx(udp6(dst=DST6, hlim=2, n=300))]


def v4frames():
    return [rx(udp4(dst=DST4, ttl=64)), rx(udp4(dst=DST4, ttl=2, n=200))]


@scenario(IDENTICAL)
def test_encap_ipv6(kernel):
    """H.Encaps, IPv6 payload, 1/2/3 SIDs, tunsrc set"""
    for segs in ([S1], [S1, S2], [S1, S2, S3]):
        cfg = config(f"ip sr tunsrc set {TUNSRC}", route6("encap", segs))
        kernel.run(cfg, v6frames()).assert_identical()


@scenario(IDENTICAL)
def test_encap_ipv6_no_tunsrc(kernel):
    """H.Encaps without tunsrc, S1 out the encap route's device: source = its address"""
    kernel.run(config(route6("encap", [S1, S2])), v6frames()).assert_identical()


@scenario(IDENTICAL)
def test_encap_no_tunsrc_s1_elsewhere(kernel):
    """H.Encaps without tunsrc, route dev eth1 but S1 routed out eth2: outer source"""
    kernel.run(config(route6("encap", [S2, S1])), v6frames()).assert_identical()


@scenario(IDENTICAL)
def test_encap_ipv4(kernel):
    """H.Encaps, IPv4 payload, 1 and 2 SIDs"""
    for segs in ([S1], [S1, S2]):
        cfg = config(f"ip sr tunsrc set {TUNSRC}", route4("encap", segs))
        kernel.run(cfg, v4frames()).assert_identical()


@scenario(IDENTICAL)
def test_encap_red_ipv6(kernel):
    """H.Encaps.Red, IPv6 payload, 1/2/3 SIDs (1 SID: no SRH)"""
    for segs in ([S1], [S1, S2], [S1, S2, S3]):
        cfg = config(f"ip sr tunsrc set {TUNSRC}", route6("encap.red", segs))
        kernel.run(cfg, v6frames()).assert_identical()


@scenario(IDENTICAL)
def test_encap_red_ipv4(kernel):
    """H.Encaps.Red, IPv4 payload, 1 and 2 SIDs"""
    for segs in ([S1], [S1, S2]):
        cfg = config(f"ip sr tunsrc set {TUNSRC}", route4("encap.red", segs))
        kernel.run(cfg, v4frames()).assert_identical()


@scenario(IDENTICAL)
def test_inline(kernel):
    """H.Insert (inline), 1 and 2 SIDs"""
    for segs in ([S1], [S1, S2]):
        cfg = config(f"ip sr tunsrc set {TUNSRC}", route6("inline", segs))
        kernel.run(cfg, v6frames()).assert_identical()


@scenario(IDENTICAL)
def test_l2encap(kernel):
    """H.Encaps.L2: Ethernet frames carrying IPv6 and IPv4, 1 and 2 SIDs"""
    for segs in ([S1], [S1, S2]):
        cfg = config(f"ip sr tunsrc set {TUNSRC}", route6("l2encap", segs), route4("l2encap", segs))
        kernel.run(cfg, v6frames() + v4frames()).assert_identical()


@scenario(IDENTICAL)
def test_l2encap_red(kernel):
    """H.Encaps.L2.Red: Ethernet frames carrying IPv6 and IPv4, 1 and 2 SIDs"""
    for segs in ([S1], [S1, S2]):
        cfg = config(f"ip sr tunsrc set {TUNSRC}", route6("l2encap.red", segs), route4("l2encap.red", segs))
        kernel.run(cfg, v6frames() + v4frames()).assert_identical()


@scenario(DIFFERENCE("Linux encapsulates first (outer hop limit = inner's) and its Time Exceeded goes to "
                     "the outer source, tunsrc, a local address: nothing on the wire; sr6 sends Time "
                     "Exceeded for the inner packet to its source, as forwarding it would",
                     "RFC 8200 §3, RFC 4443 §3.3"))
def test_encap_inner_hop_limit_exhausted(kernel):
    """H.Encaps / H.Encaps.Red with an IPv6 payload of hop limit 1 and 0: Time Exceeded"""
    for mode in ("encap", "encap.red"):
        frames = [rx(udp6(dst=DST6, hlim=1)), rx(udp6(dst=DST6, hlim=0))]
        r = kernel.run(config(f"ip sr tunsrc set {TUNSRC}", route6(mode, [S1, S2])), frames, labels=[mode] * 2)
        for i, f in enumerate(frames):
            r.expect_kernel(i)
            r.expect_sr6(i, eth0=[time_exceeded(l3(f))])


@scenario(DIFFERENCE("Linux copies the inner IPv6 hop limit into the outer header even for L2 "
                     "encapsulation, so the outer is exhausted and its Time Exceeded goes to the local "
                     "tunsrc; sr6 sends Time Exceeded for the inner packet (see the report: the RFC has "
                     "no L3 check for an L2 payload)", "RFC 8986 §5.3, RFC 4443 §3.3"))
def test_l2encap_inner_hop_limit_exhausted(kernel):
    """H.Encaps.L2(.Red) of an Ethernet frame carrying IPv6 with hop limit 1 and 0"""
    for mode in ("l2encap", "l2encap.red"):
        frames = [rx(udp6(dst=DST6, hlim=1)), rx(udp6(dst=DST6, hlim=0))]
        r = kernel.run(config(f"ip sr tunsrc set {TUNSRC}", route6(mode, [S1, S2])), frames, labels=[mode] * 2)
        for i, f in enumerate(frames):
            r.expect_kernel(i)
            r.expect_sr6(i, eth0=[time_exceeded(l3(f))])


@scenario(DIFFERENCE("Linux inserts the SRH first, so its Time Exceeded quotes the packet with the "
                     "inserted SRH and the new destination; sr6 quotes the packet as received",
                     "RFC 4443 §3.3, RFC 8200 §3"))
def test_inline_hop_limit_exhausted(kernel):
    """H.Insert with hop limit 1 and 0: Time Exceeded"""
    frames = [rx(udp6(dst=DST6, hlim=1)), rx(udp6(dst=DST6, hlim=0))]
    r = kernel.run(config(f"ip sr tunsrc set {TUNSRC}", route6("inline", [S1, S2])), frames)
    for i, f in enumerate(frames):
        inserted = IPv6(src=HOST_A, dst=S1, hlim=f[IPv6].hlim) / srh([DST6, S2, S1], 2, NH_UDP) / f[UDP]
        r.expect_kernel(i, eth0=[time_exceeded(inserted)])
        r.expect_sr6(i, eth0=[time_exceeded(l3(f))])


@scenario(IDENTICAL)
def test_encap_ipv4_ttl_exhausted(kernel):
    """H.Encaps with an IPv4 payload of TTL 1 and 0"""
    cfg = config(f"ip sr tunsrc set {TUNSRC}", route4("encap", [S1, S2]))
    kernel.run(cfg, [rx(udp4(dst=DST4, ttl=1)), rx(udp4(dst=DST4, ttl=0))]).assert_identical()


@scenario(IDENTICAL)
def test_encap_hmac_sha1(kernel):
    """H.Encaps with an HMAC TLV, SHA-1 (IPv6 and IPv4 payloads)"""
    cfg = config(f"ip sr tunsrc set {TUNSRC}", "ip sr hmac set 7 sha1 secret-one",
                 route6("encap", [S1, S2], " hmac 7"), route4("encap", [S1], " hmac 7"))
    kernel.run(cfg, v6frames() + v4frames()).assert_identical()


@scenario(IDENTICAL)
def test_encap_hmac_sha256(kernel):
    """H.Encaps / encap.red / inline with an HMAC TLV, SHA-256"""
    for mode in ("encap", "encap.red", "inline"):
        cfg = config(f"ip sr tunsrc set {TUNSRC}", "ip sr hmac set 8 sha256 secret-two",
                     route6(mode, [S1, S2, S3], " hmac 8"))
        kernel.run(cfg, v6frames()).assert_identical()
