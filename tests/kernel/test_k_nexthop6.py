"""End.X and End.DX6 whose nh6 is not on a connected network (RFC 8986 §4.2, §4.4; kernel
seg6_lookup_nexthop): nh6 reached through a gateway route, and End.DX6 `nh6 ::`."""
from kcommon import *  # noqa: F403

# fc00:3::/48 is routed via fc00:13::2 on eth2 in the base topology.
BEHIND_C = "fc00:3::5"


@scenario(IDENTICAL)
def test_end_x_nh6_behind_gateway(kernel):
    """End.X nh6 behind a gateway route: forwarded to that route's gateway, whatever the new destination"""
    pkts = [rx(sr_pkt(SID, [FINAL, SID], 1)),
            rx(sr_pkt(SID, [FINAL, SEG_C, SID, PREV], 2, hlim=9))]
    kernel.run(config(seg6local("End.X", f"nh6 {BEHIND_C}")), pkts).assert_identical()


@scenario(IDENTICAL)
def test_end_dx6_nh6_behind_gateway(kernel):
    """End.DX6 nh6 behind a gateway route: decapsulated, to that route's gateway"""
    inner = udp6(src="fc00:a::200", dst="fc00:2::5", hlim=30, tc=4, fl=7)
    pkts = [rx(sr_pkt(SID, [SID, PREV], 0, nh=NH_IPV6, inner=inner)), rx(IPv6(src=HOST_A, dst=SID) / inner)]
    kernel.run(config(seg6local("End.DX6", f"nh6 {BEHIND_C}")), pkts).assert_identical()


@scenario(IDENTICAL)
def test_end_dx6_nh6_any(kernel):
    """End.DX6 nh6 ::: the inner destination looked up in the main table; a local one dropped"""
    pkts = [rx(sr_pkt(SID, [SID, PREV], 0, nh=NH_IPV6, inner=udp6(src="fc00:a::200", dst=dst, hlim=30)))
            for dst in ("fc00:2::5", "fc00:3::7", "fc00:a::9")]
    pkts.append(rx(IPv6(src=HOST_A, dst=SID) / udp6(src="fc00:a::200", dst="fc00:2::6", hlim=5)))
    pkts.append(rx(sr_pkt(SID, [SID], 0, nh=NH_IPV6, inner=udp6(src="fc00:a::200", dst=ADDR6["eth2"]))))
    # the last one: to a local address, dropped by both (a lookup without local delivery)
    kernel.run(config(seg6local("End.DX6", "nh6 ::")), pkts).assert_identical(silent=[4])
