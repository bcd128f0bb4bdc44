"""The MTU model (RFC 8200 §5, RFC 4443 §3.2, RFC 1191 §4): a packet that, as forwarded,
encapsulated or with an SRH inserted, exceeds the MTU of the device it leaves by is not
sent -- except a forwarded or decapsulated IPv4 packet without DF, which is fragmented
(RFC 791 §3.2) as the kernel's ip_do_fragment does.  eth1 (and eth2 for the binding SIDs
and End.DX4) has MTU 1300; every scenario also sends a packet exactly at the MTU, which
must pass.  Steered prefixes as in test_k_headend.py: fc00:9::/64 and 10.9.0.0/16 (S1 =
fc00:2::1, routed out eth1)."""
from kcommon import *  # noqa: F403
from scapy.layers.inet import IPOption
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


@scenario(IDENTICAL)
def test_forward4_no_df_over_mtu(kernel):
    """IPv4 forwarding without DF over the MTU: fragmented (offsets in 8 bytes, MF, TTL - 1, checksums)"""
    frames = [rx(v4(HOST_B4, MTU, False)), rx(v4(HOST_B4, MTU + 1, False)), rx(v4(HOST_B4, 1500, False, ttl=2)),
              rx(v4(HOST_B4, 1500, False, ttl=1))]
    kernel.run(config(SET_MTU), frames).assert_identical()


def v4opts(total, options, flags=0, frag=0, ttl=64, dst=HOST_B4):
    """An IPv4/UDP packet from A of `total` bytes with IP `options` (raw bytes, a
    multiple of 4) and the given flags / fragment offset (in 8-byte units)."""
    ip = IP(src=HOST_A4, dst=dst, ttl=ttl, id=0x1234, flags=flags, frag=frag, options=[IPOption(options)] if options
            else [])
    return ip / UDP(sport=40001, dport=40002) / payload(total - len(bytes(ip)) - 8)


# Options the kernel forwards unchanged (ip_options_compile accepts unknown types): a
# copied one (type 0x88, Stream ID) and one not copied (0x1e, unassigned).
COPIED = b"\x88\x04\x12\x34"
NOT_COPIED = b"\x1e\x04\xaa\xbb"


@scenario(IDENTICAL)
def test_forward4_fragment_options(kernel):
    """IPv4 fragmentation with options: all in the first fragment; later ones keep the copied, NOPs for the rest"""
    frames = [rx(v4opts(MTU + 1, COPIED + NOT_COPIED)), rx(v4opts(1500, NOT_COPIED + COPIED)),
              rx(v4opts(1500, NOT_COPIED)), rx(v4opts(1500, COPIED + b"\x00" * 4)),
              rx(v4opts(1500, b"\x01" + NOT_COPIED + b"\x00\x00\x00"))]
    kernel.run(config(SET_MTU), frames).assert_identical()


@scenario(IDENTICAL)
def test_forward4_fragment_a_fragment(kernel):
    """IPv4 fragmentation of a fragment: offsets continue from its own, MF kept on every piece unless it was the last"""
    frames = [rx(v4opts(1500, b"", flags="MF", frag=100)), rx(v4opts(1500, b"", frag=100)),
              rx(v4opts(1500, NOT_COPIED, flags="MF")), rx(v4opts(1500, NOT_COPIED, frag=10)),
              rx(v4opts(1500, NOT_COPIED, flags="MF", frag=7))]
    kernel.run(config(SET_MTU), frames).assert_identical()


@scenario(IDENTICAL)
def test_forward4_fragment_sizes(kernel):
    """IPv4 fragment sizes: MTU - header rounded down to 8 bytes, the last as small as 1 byte or as large as MTU - header"""
    # With a 24-byte header the first fragment carries 1272 bytes (1276 rounded down),
    # so a last fragment of 1273..1276 bytes still fits.
    frames = [rx(v4opts(t, b"", flags=0)) for t in (MTU + 1, MTU + 7, MTU + 8, MTU + 9, 1500)]
    frames += [rx(v4opts(24 + n, NOT_COPIED)) for n in (1277, 1272 + 1276, 1272 + 1277) if 24 + n <= 1500]
    frames += [rx(v4opts(24 + 1272 + 1, NOT_COPIED)), rx(v4opts(60 + 1241, b"\x01" * 40))]
    kernel.run(config(SET_MTU), frames).assert_identical()


DX4_MTU = "ip link set dev eth2 mtu 1300"


def dx4_pkt(total, options=b"", **kw):
    """An SRv6 packet for End.DX4 (SL 0) carrying an IPv4/UDP packet of `total` bytes to nh4."""
    inner = v4opts(total, options, dst="10.0.13.2", ttl=30, **kw)
    return rx(sr_pkt(SID, [SID, PREV], 0, nh=NH_IPV4, inner=inner))


@scenario(IDENTICAL)
def test_end_dx4_fragment(kernel):
    """End.DX4 whose decapsulated IPv4 packet (DF clear) exceeds the MTU of nh4's device: fragmented, TTL - 1"""
    frames = [dx4_pkt(MTU), dx4_pkt(MTU + 1), dx4_pkt(1400), dx4_pkt(1400, flags="MF", frag=3),
              rx(IPv6(src=HOST_A, dst=SID) / v4opts(1400, b"", dst="10.0.13.2", ttl=30))]
    kernel.run(config(DX4_MTU, seg6local("End.DX4", "nh4 10.0.13.2")), frames).assert_identical()


def fragments4(ip: bytes, mtu: int, reduce_options: bool) -> list[bytes]:
    """RFC 791 §3.2 fragmentation of the IPv4 packet `ip` (written here from the RFC, as
    the oracle): data in multiples of 8 bytes but the last, the header copied with Total
    Length, MF, Fragment Offset and checksum set; in the fragments after the first,
    options whose copied flag is clear become NOPs if `reduce_options`."""
    hl = (ip[0] & 15) * 4
    head, data = bytearray(ip[:hl]), ip[hl:]
    flags = int.from_bytes(ip[6:8], "big")
    off0, mf0 = (flags & 0x1FFF) * 8, flags & 0x2000
    step = (mtu - hl) & ~7
    out, ptr = [], 0
    while True:
        n = len(data) - ptr if len(data) - ptr <= mtu - hl else step
        more = ptr + n < len(data) or mf0
        h = bytearray(head)
        h[2:4] = (hl + n).to_bytes(2, "big")
        h[6:8] = (((off0 + ptr) >> 3) | (0x2000 if more else 0)).to_bytes(2, "big")
        h[10:12] = b"\0\0"
        s = sum(int.from_bytes(h[i:i + 2], "big") for i in range(0, hl, 2))
        while s >> 16:
            s = (s & 0xFFFF) + (s >> 16)
        h[10:12] = (~s & 0xFFFF).to_bytes(2, "big")
        out.append(bytes(h) + data[ptr:ptr + n])
        ptr += n
        if ptr >= len(data):
            return out
        if reduce_options and off0 == 0 and ptr == n:
            i = 20
            while i < hl and head[i] != 0:
                if head[i] == 1:
                    i += 1
                    continue
                ln = head[i + 1]
                if ln < 2 or i + ln > hl:
                    break
                if not head[i] & 0x80:
                    head[i:i + ln] = b"\x01" * ln
                i += ln


@scenario(DIFFERENCE("Linux reduces the options of later fragments from the option state its IPv4 input "
                     "parsed; a packet End.DX4 decapsulated never went through that input, so every "
                     "fragment carries every option; sr6 reduces them as for any other packet",
                     "RFC 791 §3.2"))
def test_end_dx4_fragment_options(kernel):
    """End.DX4 fragmenting an inner packet with options: later fragments keep only the copied ones"""
    frames = [dx4_pkt(MTU + 1, COPIED + NOT_COPIED), dx4_pkt(1400, NOT_COPIED)]
    r = kernel.run(config(DX4_MTU, seg6local("End.DX4", "nh4 10.0.13.2")), frames)
    for i, f in enumerate(frames):
        inner = bytearray(bytes(l3(f))[80:])
        inner[8] -= 1                                   # TTL - 1 (the checksum is recomputed per fragment)
        mac = Ether(src=MAC["eth2"], dst=GW4_MAC["eth2"], type=0x0800)
        r.expect_kernel(i, eth2=[mac / Raw(x) for x in fragments4(bytes(inner), MTU, False)])
        r.expect_sr6(i, eth2=[mac / Raw(x) for x in fragments4(bytes(inner), MTU, True)])


@scenario(IDENTICAL)
def test_end_dx4_df_over_mtu(kernel):
    """End.DX4 whose decapsulated IPv4 packet with DF exceeds the MTU: dropped, no error (as the kernel)"""
    def pkt(total):
        inner = v4(dst="10.0.13.2", total=total, df=True, ttl=30)
        return rx(sr_pkt(SID, [SID, PREV], 0, nh=NH_IPV4, inner=inner))
    frames = [pkt(MTU), pkt(MTU + 1)]
    kernel.run(config(DX4_MTU, seg6local("End.DX4", "nh4 10.0.13.2")), frames).assert_identical(silent=[1])


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
