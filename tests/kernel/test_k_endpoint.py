"""Endpoint behaviours (RFC 8986 §4; kernel seg6local) with valid packets."""
from kcommon import *  # noqa: F403

TABLE100 = ("ip -6 route add fc00:9::/64 via fc00:13::2 dev eth2 table 100",)


def end_pkts(sid=SID, hlims=(64, 2)):
    """Valid SRv6 packets reaching `sid` with SL > 0: 2 and 4 SIDs, with and without TLVs."""
    out = []
    for h in hlims:
        out.append(rx(sr_pkt(sid, [FINAL, sid], 1, hlim=h)))
        out.append(rx(sr_pkt(sid, [FINAL, SEG_C, SEG_B2, sid, PREV], 3, hlim=h, tc=0x10, fl=0x54321)))
    out.append(rx(sr_pkt(sid, [FINAL, sid], 1, tlvs=[padn(8)])))
    out.append(rx(sr_pkt(sid, [FINAL, sid], 1, tlvs=[unknown_tlv(0x80, 6), padn(2)])))
    out.append(rx(sr_pkt(sid, [FINAL, sid], 1, tlvs=[unknown_tlv(0x81, 4), unknown_tlv(0x1F, 12)])))
    # Reduced SRH: SL = LE + 1 (RFC 8986 §5.2)
    out.append(rx(sr_pkt(sid, [FINAL], 1)))
    return out


@scenario(IDENTICAL)
def test_end_one_sid(kernel):
    """End: a 1-entry SRH (reduced) and SL 1 -> 0"""
    kernel.run(config(seg6local("End")), [rx(sr_pkt(SID, [FINAL], 1)), rx(sr_pkt(SID, [FINAL, SID], 1))]).assert_identical()


@scenario(IDENTICAL)
def test_end_several_sids_and_tlvs(kernel):
    """End: 2 and 5 SIDs, PadN and unknown-type TLVs, tc/flow label kept"""
    kernel.run(config(seg6local("End")), end_pkts()).assert_identical()


@scenario(IDENTICAL)
def test_end_psp(kernel):
    """End with PSP: SRH removed when SL becomes 0; kept otherwise"""
    frames = end_pkts() + [rx(sr_pkt(SID, [FINAL, SID], 1, nh=NH_IPV6, inner=udp6(dst="fc00:2::77")))]
    kernel.run(config(seg6local("End", "flavors psp")), frames).assert_identical()


@scenario(IDENTICAL)
def test_end_x(kernel):
    """End.X nh6: forwarded to the adjacency (eth2) whatever the new destination"""
    kernel.run(config(seg6local("End.X", "nh6 fc00:13::2")), end_pkts()).assert_identical()


@scenario(IDENTICAL)
def test_end_x_oif(kernel):
    """End.X nh6 with oif: out the given device"""
    kernel.run(config(seg6local("End.X", "nh6 fc00:13::2 oif eth2")), end_pkts()).assert_identical()


@scenario(IDENTICAL)
def test_end_t(kernel):
    """End.T: the new destination looked up in table 100"""
    pkts = [rx(sr_pkt(SID, ["fc00:9::5", SID], 1)), rx(sr_pkt(SID, ["fc00:9::5", "fc00:9::6", SID], 2, hlim=9))]
    kernel.run(config(*TABLE100, seg6local("End.T", "table 100")), pkts).assert_identical()


@scenario(IDENTICAL)
def test_end_dx6(kernel):
    """End.DX6: decapsulated, inner IPv6 forwarded to nh6 (hop limit - 1)"""
    inner = udp6(src="fc00:a::200", dst="fc00:9::5", hlim=30, tc=4, fl=7)
    pkts = [rx(sr_pkt(SID, [SID, PREV], 0, nh=NH_IPV6, inner=inner)),
            rx(IPv6(src=HOST_A, dst=SID) / inner),  # no SRH
            rx(sr_pkt(SID, [SID], 0, nh=NH_IPV6, inner=inner, tlvs=[padn(8)]))]
    kernel.run(config(seg6local("End.DX6", "nh6 fc00:13::2")), pkts).assert_identical()


@scenario(IDENTICAL)
def test_end_dx4(kernel):
    """End.DX4 whose inner destination is nh4 itself: decapsulated, TTL - 1, to nh4"""
    inner = udp4(src="10.1.0.7", dst="10.0.13.2", ttl=30)
    pkts = [rx(sr_pkt(SID, [SID, PREV], 0, nh=NH_IPV4, inner=inner)), rx(IPv6(src=HOST_A, dst=SID) / inner)]
    kernel.run(config(seg6local("End.DX4", "nh4 10.0.13.2")), pkts).assert_identical()


@scenario(DIFFERENCE("Linux looks nh4 up but, the route to it having no gateway, resolves the INNER "
                     "destination on eth2 (ARP for it, no answer: dropped); sr6 sends to nh4's MAC",
                     "RFC 8986 §4.6"))
def test_end_dx4_remote_inner(kernel):
    """End.DX4, inner destination beyond nh4: forwarded to the adjacency nh4"""
    inner = udp4(src="10.1.0.7", dst="10.9.0.5", ttl=30)
    pkts = [rx(sr_pkt(SID, [SID, PREV], 0, nh=NH_IPV4, inner=inner)), rx(IPv6(src=HOST_A, dst=SID) / inner)]
    r = kernel.run(config(seg6local("End.DX4", "nh4 10.0.13.2")), pkts)
    out = udp4(src="10.1.0.7", dst="10.9.0.5", ttl=29)
    assert any(d == "eth2" for ig in r.ignored for d, _ in ig), f"expected the kernel's ARP request:\n{r.summary()}"
    for i in range(2):
        r.expect_kernel(i)
        r.expect_sr6(i, eth2=[tx(out, "eth2")])


@scenario(IDENTICAL)
def test_end_dx2(kernel):
    """End.DX2: the inner Ethernet frame goes out oif unchanged"""
    inner = Ether(src="02:bb:00:00:00:01", dst="02:bb:00:00:00:02") / udp4()
    inner6 = Ether(src="02:bb:00:00:00:01", dst="02:bb:00:00:00:02") / udp6()
    pkts = [rx(sr_pkt(SID, [SID, PREV], 0, nh=NH_ETHERNET, inner=Raw(bytes(inner)))),
            rx(sr_pkt(SID, [SID, PREV], 0, nh=NH_ETHERNET, inner=Raw(bytes(inner6))))]
    kernel.run(config(seg6local("End.DX2", "oif eth2")), pkts).assert_identical()


@scenario(IDENTICAL)
def test_end_dt6(kernel):
    """End.DT6 (table mode): inner IPv6 looked up in table 100"""
    inner = udp6(src="fc00:a::200", dst="fc00:9::5", hlim=30)
    pkts = [rx(sr_pkt(SID, [SID, PREV], 0, nh=NH_IPV6, inner=inner)), rx(IPv6(src=HOST_A, dst=SID) / inner)]
    kernel.run(config(*TABLE100, seg6local("End.DT6", "table 100")), pkts).assert_identical()


@scenario(IDENTICAL)
def test_end_b6(kernel):
    """End.B6: the policy's SRH inserted, destination = its first segment"""
    pkts = [rx(sr_pkt(SID, [FINAL, SID], 1)), rx(sr_pkt(SID, [FINAL, SEG_B2, SID], 2, hlim=7))]
    for segs in ("fc00:3::1", "fc00:3::1,fc00:3::2"):
        kernel.run(config(seg6local("End.B6", f"srh segs {segs}")), pkts).assert_identical()


@scenario(DIFFERENCE("Linux does not decrement the inner hop limit (only the outer, by forwarding); "
                     "the outer hop limit is the same on both", "RFC 8986 §4.13"))
def test_end_b6_encaps(kernel):
    """End.B6.Encaps: hop limit - 1, SL - 1, DA updated, then H.Encaps with the policy"""
    segs_in = [FINAL, SEG_B2, SID]
    pkts = [rx(sr_pkt(SID, [FINAL, SID], 1)), rx(sr_pkt(SID, segs_in, 2, hlim=7, fl=0x777, tc=0x20))]
    for pol in (["fc00:3::1"], ["fc00:3::1", "fc00:3::2"]):
        cfg = config(f"ip sr tunsrc set {TUNSRC}", seg6local("End.B6.Encaps", f"srh segs {','.join(pol)}"))
        r = kernel.run(cfg, pkts)
        for i, (segs, sl, h, fl, tc) in enumerate(([[FINAL, SID], 1, 64, 0, 0], [segs_in, 2, 7, 0x777, 0x20])):
            new_inner = dict(dst=segs[sl - 1], segs=segs, sl=sl - 1, fl=fl, tc=tc)
            outer = IPv6(src=TUNSRC, dst=pol[0], hlim=h - 1, fl=fl, tc=tc) / srh(policy(*pol), len(pol) - 1, NH_IPV6)
            r.expect_kernel(i, eth2=[tx(outer / sr_pkt(**new_inner, hlim=h), "eth2")])
            r.expect_sr6(i, eth2=[tx(outer / sr_pkt(**new_inner, hlim=h - 1), "eth2")])


@scenario(DIFFERENCE("Linux decrements the hop limit only when it finally forwards: a SID whose next "
                     "segment is another local SID is processed in the same pass, so several local SIDs "
                     "cost one decrement; sr6 decrements once per SID", "RFC 8986 §4.1 S12"))
def test_chained_local_sids(kernel):
    """End -> End (two local SIDs in a row), and H.Encaps whose S1 is a local End SID: hop limit"""
    cfg = config(f"ip sr tunsrc set {TUNSRC}", seg6local("End"), seg6local("End", sid=SID2),
                 f"ip -6 route add fc00:9::/64 encap seg6 mode encap segs {SID},{SEG_B} dev eth1")
    segs = [FINAL, SID2, SID]
    inner = udp6(dst="fc00:9::5", hlim=40)
    frames = [rx(sr_pkt(SID, segs, 2, hlim=40)), rx(inner)]
    r = kernel.run(cfg, frames)
    r.expect_kernel(0, eth1=[tx(sr_pkt(FINAL, segs, 0, hlim=39), "eth1")])
    r.expect_sr6(0, eth1=[tx(sr_pkt(FINAL, segs, 0, hlim=38), "eth1")])
    enc = lambda h: IPv6(src=TUNSRC, dst=SEG_B, hlim=h) / srh([SEG_B, SID], 0, NH_IPV6) / inner  # noqa: E731
    r.expect_kernel(1, eth1=[tx(enc(39), "eth1")])
    r.expect_sr6(1, eth1=[tx(enc(38), "eth1")])


@scenario(DIFFERENCE("Linux decrements the hop limit in forwarding, after the lookup, so its Destination "
                     "Unreachable quotes the undecremented hop limit (with SL and DA updated); sr6 "
                     "decrements at the SID, then looks up", "RFC 8986 §4.1 S12-S15"))
def test_end_t_no_route(kernel):
    """End.T / End whose new destination has no route: Destination Unreachable quoting the updated packet"""
    cfg = config(*TABLE100, seg6local("End.T", "table 100"), seg6local("End", sid=SID2))
    segs = ["fc00:55::1", SID]
    segs2 = ["fc00:55::1", SID2]
    frames = [rx(sr_pkt(SID, segs, 1, hlim=9)), rx(sr_pkt(SID2, segs2, 1, hlim=9))]
    r = kernel.run(cfg, frames)
    for i, s in enumerate((segs, segs2)):
        unreach = lambda h: tx(icmp6_error("dest_unreach", bytes(sr_pkt(s[0], s, 0, hlim=h)),  # noqa: E731
                                           src=ADDR6["eth0"], dst=HOST_A, code=0), "eth0")
        r.expect_kernel(i, eth0=[unreach(9)])
        r.expect_sr6(i, eth0=[unreach(8)])
