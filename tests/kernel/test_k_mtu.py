"""The MTU model (RFC 8200 §5, RFC 4443 §3.2, RFC 1191 §4): a packet that, as forwarded,
encapsulated or with an SRH inserted, exceeds the MTU of the device it leaves by is not
sent.  eth1 (and eth2 for the binding SIDs) has MTU 1300; every scenario also sends a
packet exactly at the MTU, which must pass.  Steered prefixes as in test_k_headend.py:
fc00:9::/64 and 10.9.0.0/16 (S1 = fc00:2::1, routed out eth1)."""
from kcommon import *  # noqa: F403
from scapy.layers.inet6 import ICMPv6PacketTooBig
from sr6_oracle import NH_ROUTING, payload

MTU = 1300
SET_MTU = f"ip link set dev eth1 mtu {MTU}"
DST6 = "fc00:9::5"
DST4 = "10.9.0.5"
S1, S2 = SEG_B, SEG_C


def v6(dst, total, hlim=64):
    """An IPv6/UDP packet from A of `total` bytes (IPv6 header included)."""
    return IPv6(src=HOST_A, dst=dst, hlim=hlim) / UDP(sport=40001, dport=40002) / payload(total - 48)


def v4(dst, total, df, ttl=64):
    """An IPv4/UDP packet from A of `total` bytes, Don't Fragment set or not."""
    return IP(src=HOST_A4, dst=dst, ttl=ttl, id=0x1234, flags="DF" if df else 0) / UDP(sport=40001, dport=40002) \
        / payload(total - 28)


def too_big6(invoking, mtu):
    """The Packet Too Big from eth0's address to A about `invoking` (RFC 4443 §3.2)."""
    quote = bytes(invoking)[:1280 - 48]
    return tx(IPv6(src=ADDR6["eth0"], dst=HOST_A, hlim=64) / ICMPv6PacketTooBig(mtu=mtu) / Raw(quote), "eth0")


def frag_needed4(invoking, mtu):
    """Destination Unreachable, Fragmentation Needed, from eth0's address to A (RFC 1191 §4);
    IP id 0 and TOS 0xc0 as the harness and Linux have them."""
    quote = bytes(invoking)[:576 - 28]
    icmp = ICMP(type=3, code=4, nexthopmtu=mtu)
    return tx(IP(src=ADDR4["eth0"], dst=HOST_A4, ttl=64, tos=0xc0, id=0) / icmp / Raw(quote), "eth0")


@scenario(IDENTICAL)
def test_forward6_over_mtu(kernel):
    """IPv6 forwarding: at the MTU forwarded, one byte over -> Packet Too Big with the MTU"""
    frames = [rx(v6(HOST_B, MTU)), rx(v6(HOST_B, MTU + 1)), rx(v6(HOST_B, 1500, hlim=9))]
    kernel.run(config(SET_MTU), frames).assert_identical()


@scenario(IDENTICAL)
def test_forward4_df_over_mtu(kernel):
    """IPv4 forwarding with DF: at the MTU forwarded, over -> Fragmentation Needed with the MTU"""
    frames = [rx(v4(HOST_B4, MTU, True)), rx(v4(HOST_B4, MTU + 1, True)), rx(v4(HOST_B4, 1500, True, ttl=5))]
    kernel.run(config(SET_MTU), frames).assert_identical()


@scenario(SR6_BUG("sr6 does not fragment IPv4: a packet without DF over the egress MTU is dropped "
                  "(needs_fragmentation) where Linux sends fragments"))
def test_forward4_no_df_over_mtu(kernel):
    """IPv4 forwarding without DF over the MTU: the kernel fragments"""
    kernel.run(config(SET_MTU), [rx(v4(HOST_B4, MTU + 1, False))]).assert_identical()


ENCAP_REASON = ("Linux's seg6 tunnel sends the Packet Too Big about the encapsulated packet to its own "
                "tunnel source, so nothing reaches the sender; sr6 answers the sender about its packet "
                "with the MTU less the headers the encapsulation adds")


@scenario(DIFFERENCE(ENCAP_REASON, "RFC 2473 §7.1, RFC 4443 §3.2"))
def test_encap6_over_mtu(kernel):
    """H.Encaps of IPv6 (2 SIDs: 80 bytes added): at the MTU sent, over -> PTB to the source, MTU - 80"""
    cfg = config(SET_MTU, f"ip sr tunsrc set {TUNSRC}",
                 f"ip -6 route add fc00:9::/64 encap seg6 mode encap segs {S1},{S2} dev eth1")
    frames = [rx(v6(DST6, MTU - 80)), rx(v6(DST6, MTU - 80 + 1)), rx(v6(DST6, 1500))]
    r = kernel.run(cfg, frames)
    r.assert_identical(indices=[0])
    for i in (1, 2):
        r.expect_kernel(i)
        r.expect_sr6(i, eth0=[too_big6(l3(frames[i]), MTU - 80)])


@scenario(DIFFERENCE(ENCAP_REASON, "RFC 2473 §7.1, RFC 1191 §4"))
def test_encap4_df_over_mtu(kernel):
    """H.Encaps of IPv4 with DF (1 SID: 64 bytes added): over -> Fragmentation Needed to the source, MTU - 64"""
    cfg = config(SET_MTU, f"ip sr tunsrc set {TUNSRC}",
                 f"ip route add 10.9.0.0/16 encap seg6 mode encap segs {S1} dev eth1")
    frames = [rx(v4(DST4, MTU - 64, True)), rx(v4(DST4, MTU - 64 + 1, True))]
    r = kernel.run(cfg, frames)
    r.assert_identical(indices=[0])
    r.expect_kernel(1)
    r.expect_sr6(1, eth0=[frag_needed4(l3(frames[1]), MTU - 64)])


@scenario(IDENTICAL)
def test_encap4_no_df_over_mtu(kernel):
    """H.Encaps of IPv4 without DF over the MTU: dropped (neither fragments)"""
    cfg = config(SET_MTU, f"ip sr tunsrc set {TUNSRC}",
                 f"ip route add 10.9.0.0/16 encap seg6 mode encap segs {S1} dev eth1")
    frames = [rx(v4(DST4, MTU - 64, False)), rx(v4(DST4, MTU - 64 + 1, False))]
    kernel.run(cfg, frames).assert_identical(silent=[1])


INSERT_REASON = ("Linux decrements the hop limit in ip6_forward, after its MTU check, so its Packet Too Big "
                 "quotes the packet with the SRH inserted but the hop limit as received; sr6 quotes the packet "
                 "as it would have left (hop limit decremented)")


def inserted(pkt, segs, hlim):
    """`pkt` (IPv6/UDP from A) with an SRH of `segs` (header order) inserted, SL at the last
    entry, destination the first segment, hop limit `hlim`."""
    return IPv6(src=HOST_A, dst=segs[-1], hlim=hlim) / srh(segs, len(segs) - 1, NH_UDP) / Raw(bytes(pkt)[40:])


@scenario(DIFFERENCE(INSERT_REASON, "RFC 4443 §3.2"))
def test_insert_over_mtu(kernel):
    """H.Insert (1 SID: a 40-byte SRH): at the MTU sent, over -> PTB about the packet with its SRH, the MTU"""
    cfg = config(SET_MTU, f"ip -6 route add fc00:9::/64 encap seg6 mode inline segs {S1} dev eth1")
    frames = [rx(v6(DST6, MTU - 40)), rx(v6(DST6, MTU - 40 + 1)), rx(v6(DST6, 1500))]
    r = kernel.run(cfg, frames)
    r.assert_identical(indices=[0])
    for i in (1, 2):
        r.expect_kernel(i, eth0=[too_big6(inserted(l3(frames[i]), [DST6, S1], 64), MTU)])
        r.expect_sr6(i, eth0=[too_big6(inserted(l3(frames[i]), [DST6, S1], 63), MTU)])


B6_MTU = "ip link set dev eth2 mtu 1300"


@scenario(DIFFERENCE(ENCAP_REASON + " (the quoted packet has the inner hop limit decremented, "
                     "see test_end_b6_encaps)", "RFC 2473 §7.1, RFC 4443 §3.2"))
def test_end_b6_encaps_over_mtu(kernel):
    """End.B6.Encaps (policy of 1 SID: 64 bytes added): at the MTU sent, over -> PTB to the source, MTU - 64"""
    cfg = config(B6_MTU, f"ip sr tunsrc set {TUNSRC}", seg6local("End.B6.Encaps", f"srh segs {SEG_C}"))

    # IPv6 + SRH of 2 segments (40) + payload: the packet is `total` bytes.
    def pkt(total):
        return sr_pkt(SID, [FINAL, SID], 1, inner=Raw(payload(total - 80)))
    frames = [rx(pkt(MTU - 64)), rx(pkt(MTU - 64 + 1))]
    r = kernel.run(cfg, frames)
    # At the MTU: sent (the inner hop limit differs as in test_end_b6_encaps).
    outer = IPv6(src=TUNSRC, dst=SEG_C, hlim=63) / srh(policy(SEG_C), 0, NH_IPV6)
    for who, h in ((r.expect_kernel, 64), (r.expect_sr6, 63)):
        who(0, eth2=[tx(outer / sr_pkt(FINAL, [FINAL, SID], 0, inner=Raw(payload(MTU - 64 - 80)), hlim=h), "eth2")])
    r.expect_kernel(1)
    new_inner = sr_pkt(FINAL, [FINAL, SID], 0, inner=Raw(payload(MTU - 64 + 1 - 80)), hlim=63)
    r.expect_sr6(1, eth0=[too_big6(new_inner, MTU - 64)])


@scenario(DIFFERENCE(INSERT_REASON, "RFC 4443 §3.2"))
def test_end_b6_over_mtu(kernel):
    """End.B6 (an SRH of 2 segments, 40 bytes, inserted): over -> PTB about the packet with its SRH, the MTU"""
    cfg = config(B6_MTU, seg6local("End.B6", f"srh segs {SEG_C}"))

    def pkt(total):
        return sr_pkt(SID, [FINAL, SID], 1, inner=Raw(payload(total - 80)))
    frames = [rx(pkt(MTU - 40)), rx(pkt(MTU - 40 + 1))]
    r = kernel.run(cfg, frames)
    r.assert_identical(indices=[0])
    # The packet as End.B6 made it (as in test_end_b6): the policy's SRH, whose Segment
    # List[0] is the SID, inserted before the received SRH, which is unchanged.
    tail = Raw(bytes(l3(frames[1]))[40:])
    for who, h in ((r.expect_kernel, 64), (r.expect_sr6, 63)):
        made = IPv6(src=HOST_A, dst=SEG_C, hlim=h) / srh([SID, SEG_C], 1, NH_ROUTING) / tail
        who(1, eth0=[too_big6(made, MTU)])


@scenario(IDENTICAL)
def test_l2encap_over_mtu(kernel):
    """H.Encaps.L2 (1 SID: 78 bytes added, the frame's Ethernet header included): over -> dropped, no ICMP"""
    cfg = config(SET_MTU, f"ip sr tunsrc set {TUNSRC}",
                 f"ip -6 route add fc00:9::/64 encap seg6 mode l2encap segs {S1} dev eth1")
    frames = [rx(v6(DST6, MTU - 78)), rx(v6(DST6, MTU - 78 + 1))]
    kernel.run(cfg, frames).assert_identical(silent=[1])
