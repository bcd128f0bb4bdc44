"""Error cases at SIDs and local addresses (RFC 8754 §4.3, RFC 8986 §4.1, RFC 4443).

Where the kernel deviates from the RFC, the scenario asserts both: the kernel's output is
the documented one (expect_kernel) and sr6's is the RFC's, built with scapy (expect_sr6)."""
from kcommon import *  # noqa: F403

END = seg6local("End")
SEGS3 = [FINAL, SEG_B, SID]


@scenario(DIFFERENCE("Linux updates SL and DA before the hop-limit check, so its Time Exceeded quotes the "
                     "modified packet; sr6 quotes the packet as received", "RFC 8986 §4.1 S05-S06"))
def test_end_hop_limit_1_and_0(kernel):
    """End with SL > 0 and hop limit 1 / 0: Time Exceeded"""
    frames = [rx(sr_pkt(SID, SEGS3, 2, hlim=h)) for h in (1, 0)]
    r = kernel.run(config(END), frames)
    for i, h in enumerate((1, 0)):
        r.expect_kernel(i, eth0=[time_exceeded(sr_pkt(SEG_B, SEGS3, 1, hlim=h))])
        r.expect_sr6(i, eth0=[time_exceeded(l3(frames[i]))])


@scenario(DIFFERENCE("Linux drops silently (seg6_validate_srh)", "RFC 8754 §4.3.1.1"))
def test_sl_beyond_last_entry(kernel):
    """End with Segments Left > Last Entry + 1: Parameter Problem code 0 at Segments Left"""
    frames = [rx(sr_pkt(SID, [FINAL, SID], 3)), rx(sr_pkt(SID, [FINAL], 2))]
    r = kernel.run(config(END), frames)
    for i, f in enumerate(frames):
        r.expect_kernel(i)
        r.expect_sr6(i, eth0=[pp(f, 0, OFF_SRH_SL)])


@scenario(DIFFERENCE("Linux drops silently (seg6_validate_srh)", "RFC 8754 §4.3.1.1"))
def test_last_entry_beyond_hdr_ext_len(kernel):
    """End with Last Entry > Hdr Ext Len / 2 - 1: Parameter Problem code 0 at Segments Left"""
    frames = [rx(sr_pkt(SID, [FINAL, SID], 1, lastentry=3)), rx(sr_pkt(SID, [FINAL, SID], 1, hdrlen=2))]
    r = kernel.run(config(END), frames)
    for i, f in enumerate(frames):
        r.expect_kernel(i)
        r.expect_sr6(i, eth0=[pp(f, 0, OFF_SRH_SL)])


@scenario(IDENTICAL)
def test_srh_longer_than_packet(kernel):
    """End with an SRH whose Hdr Ext Len runs past the end of the packet: dropped"""
    kernel.run(config(END), [rx(sr_pkt(SID, [FINAL, SID], 1, hdrlen=20))]).assert_identical(silent="all")


@scenario(DIFFERENCE("Linux processes the SRH like End and forwards", "RFC 8754 §4.3.2"))
def test_srh_to_local_address_seg6_enabled(kernel):
    """SRH to a local non-SID address, seg6_enabled=1: SL > 0 -> Parameter Problem; SL = 0 -> local"""
    me = ADDR6["eth0"]
    cfg = config("sysctl -w net.ipv6.conf.all.seg6_enabled=1", "sysctl -w net.ipv6.conf.eth0.seg6_enabled=1")
    frames = [rx(sr_pkt(me, [FINAL, me], 1)),
              rx(sr_pkt(me, [me, PREV], 0, nh=NH_ICMPV6, inner=ICMPv6EchoReply()))]
    r = kernel.run(cfg, frames)
    r.expect_kernel(0, eth1=[tx(sr_pkt(FINAL, [FINAL, me], 0, hlim=63), "eth1")])
    r.expect_sr6(0, eth0=[pp(frames[0], 0, OFF_SRH_SL, src=me)])
    r.assert_identical(silent=[1], indices=[1])
    r.expect_sr6(1, local=[frames[1]])


@scenario(IDENTICAL)
def test_srh_to_local_address_seg6_disabled(kernel):
    """SRH to a local non-SID address, seg6_enabled=0 (default): dropped, SL > 0 or SL = 0"""
    me = ADDR6["eth0"]
    frames = [rx(sr_pkt(me, [FINAL, me], 1)),
              rx(sr_pkt(me, [me, PREV], 0, nh=NH_ICMPV6, inner=ICMPv6EchoReply()))]
    kernel.run(config(), frames).assert_identical(silent="all")


@scenario(IDENTICAL)
def test_seg6_enabled_on_all_only(kernel):
    """seg6_enabled=1 on `all` but 0 on the device: min() -> SRH at a local address dropped"""
    me = ADDR6["eth0"]
    cfg = config("sysctl -w net.ipv6.conf.all.seg6_enabled=1")
    kernel.run(cfg, [rx(sr_pkt(me, [FINAL, me], 1))]).assert_identical(silent="all")


@scenario(DIFFERENCE("Linux drops a non-ICMPv6 upper layer at a SID with SL = 0", "RFC 8986 §4.1.1"))
def test_end_sl0_upper_layer(kernel):
    """End reached with SL = 0: UDP -> Parameter Problem code 4; ICMPv6 -> local"""
    frames = [rx(sr_pkt(SID, [SID, PREV], 0)),
              rx(sr_pkt(SID, [SID, PREV], 0, nh=NH_ICMPV6, inner=ICMPv6EchoReply())),
              rx(IPv6(src=HOST_A, dst=SID) / UDP(sport=1, dport=2) / (b"x" * 8))]
    r = kernel.run(config(END), frames)
    r.expect_kernel(0)
    r.expect_sr6(0, eth0=[pp(frames[0], 4, code4_pointer(frames[0][IPv6]))])
    r.expect_kernel(2)
    r.expect_sr6(2, eth0=[pp(frames[2], 4, code4_pointer(frames[2][IPv6]))])
    r.expect_kernel(1)
    r.expect_sr6(1, local=[frames[1]])


@scenario(DIFFERENCE("Linux drops silently", "RFC 8986 §4.4 S02-S03"))
def test_decap_sl_nonzero(kernel):
    """End.DX6 / End.DX4 / End.DT6 / End.DX2 with SL != 0: Parameter Problem code 0"""
    inner = udp6(src="fc00:a::200", dst="fc00:9::5")
    for action, params, nh, payload in (("End.DX6", "nh6 fc00:13::2", NH_IPV6, inner),
                                        ("End.DT6", "table 100", NH_IPV6, inner),
                                        ("End.DX4", "nh4 10.0.13.2", NH_IPV4, udp4()),
                                        ("End.DX2", "oif eth2", NH_ETHERNET, Raw(bytes(Ether() / udp4())))):
        f = rx(sr_pkt(SID, [FINAL, SID], 1, nh=nh, inner=payload))
        r = kernel.run(config("ip -6 route add fc00:9::/64 via fc00:13::2 dev eth2 table 100",
                              seg6local(action, params)), [f], labels=[action])
        r.expect_kernel(0)
        r.expect_sr6(0, eth0=[pp(f, 0, OFF_SRH_SL)])


@scenario(DIFFERENCE("Linux drops silently", "RFC 8986 §4.4 S07-S08"))
def test_decap_wrong_inner(kernel):
    """End.DX6 with an IPv4 payload, End.DX4 / End.DT6 with a UDP payload: Parameter Problem code 4"""
    for action, params, nh, payload in (("End.DX6", "nh6 fc00:13::2", NH_IPV4, udp4()),
                                        ("End.DX4", "nh4 10.0.13.2", NH_IPV6, udp6()),
                                        ("End.DT6", "table 100", NH_UDP, None)):
        pkt = sr_pkt(SID, [SID, PREV], 0, nh=nh, inner=payload)
        f = rx(pkt)
        r = kernel.run(config("ip -6 route add fc00:9::/64 via fc00:13::2 dev eth2 table 100",
                              seg6local(action, params)), [f], labels=[action])
        r.expect_kernel(0)
        r.expect_sr6(0, eth0=[pp(f, 4, code4_pointer(pkt))])


@scenario(DIFFERENCE("Linux parses every TLV as type+length, so a Pad1 makes it read the next byte as a "
                     "length and reject the SRH", "RFC 8754 §2.1.1.1"))
def test_pad1_tlv(kernel):
    """End with a Pad1 TLV followed by an unknown TLV: forwarded"""
    tlvs = [IPv6ExtHdrSegmentRoutingTLVPad1(), unknown_tlv(0x80, 7)]
    f = rx(sr_pkt(SID, [FINAL, SID], 1, tlvs=tlvs))
    r = kernel.run(config(END), [f])
    r.expect_kernel(0)
    r.expect_sr6(0, eth1=[tx(sr_pkt(FINAL, [FINAL, SID], 0, hlim=63, tlvs=tlvs), "eth1")])


@scenario(DIFFERENCE("Linux sees an HMAC TLV only if SRH flag 0x08 is set and the TLV is the last 40 bytes",
                     "RFC 8754 §2.1"))
def test_hmac_tlv_lookup(kernel):
    """seg6_require_hmac=1, valid HMAC TLV: flag 0x08 clear, or followed by a PadN -> forwarded"""
    a = hmac_tlv("sha256", b"secret-two", HOST_A, SEGS3, keyid=8, flags=0)
    b = hmac_tlv("sha256", b"secret-two", HOST_A, SEGS3, keyid=8, flags=0x08)
    cfg = config("ip sr hmac set 8 sha256 secret-two", END, "sysctl -w net.ipv6.conf.eth0.seg6_require_hmac=1")
    variants = [dict(flags=0, tlvs=[a]), dict(flags=0x08, tlvs=[b, padn(8)])]
    r = kernel.run(cfg, [rx(sr_pkt(SID, SEGS3, 2, **v)) for v in variants])
    for i, v in enumerate(variants):
        r.expect_kernel(i)
        r.expect_sr6(i, eth1=[tx(sr_pkt(SEG_B, SEGS3, 1, hlim=63, **v), "eth1")])
