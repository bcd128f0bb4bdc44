"""Policy routing (`ip rule`) through the kernel and sr6: selectors (from, to, iif,
ipproto, sport, dport ranges, not), priorities given and chosen by default, the
fall-through past a table without a route (or without any route at all) to main, the
actions blackhole, unreachable and prohibit, IPv6 and IPv4, and a rule steering a class
of flows onto an SRv6 chain (a table whose default route is `encap seg6`)."""
from scapy.all import TCP, IPv6ExtHdrDestOpt, IPv6ExtHdrFragment, PadN

from kcommon import *  # noqa: F403


def udp6p(src=HOST_A, dst=HOST_B, sport=40001, dport=40002, ext=None):
    """IPv6/UDP with chosen ports (and an extension header `ext` before UDP)."""
    ip = IPv6(src=src, dst=dst, hlim=64)
    if ext is not None:
        ip = ip / ext
    return ip / UDP(sport=sport, dport=dport) / Raw(bytes(range(16)))


def tcp6p(src, dst, sport, dport=40002):
    return IPv6(src=src, dst=dst, hlim=64) / TCP(sport=sport, dport=dport, flags="S", seq=1) / Raw(b"x" * 8)


def udp4p(src=HOST_A4, dst=HOST_B4, sport=40001, dport=40002, flags=0):
    return IP(src=src, dst=dst, ttl=64, id=0x1234, flags=flags) / UDP(sport=sport, dport=dport) \
        / Raw(bytes(range(16)))


def tcp4p(src, dst, sport, dport=40002):
    return IP(src=src, dst=dst, ttl=64, id=0x1234) / TCP(sport=sport, dport=dport, flags="S", seq=1) / Raw(b"x" * 8)


@scenario(IDENTICAL)
def test_rules_ipv6_selectors(kernel):
    """IPv6 rules: from/to/iif/ipproto/sport/dport ranges, not, a default priority, past an empty table and a table without the route to main"""
    cfg = config(
        # Table 100: B's prefix by C's link; 200: A's by B's link; 250: A's by C's link.
        "ip -6 route add fc00:2::/48 via fc00:13::2 dev eth2 table 100",
        "ip -6 route add fc00:a::/64 via fc00:12::2 dev eth1 table 200",
        "ip -6 route add fc00:a::/64 via fc00:13::2 dev eth2 table 250",
        "ip -6 rule add to fc00:3::/48 ipproto udp dport 7000 priority 50 lookup 300",
        "ip -6 rule add from fc00:a::/64 to fc00:2::/48 ipproto udp dport 5000-5999 priority 100 lookup 100",
        "ip -6 rule add iif eth2 ipproto tcp sport 80 pref 200 table 200",
        "ip -6 rule add not from fc00:3::/48 iif eth1 order 300 lookup 250",
        "ip -6 rule add to fc00:3::/48 priority 400 lookup 100",
        # No priority: 49, one less than the lowest.
        "ip -6 rule add from fc00:3::/48 to fc00:a::/64 ipproto ipv6-icmp lookup 200",
    )
    frames = [
        rx(udp6p(dport=5000)),                                   # 0: table 100 -> eth2
        rx(udp6p(dport=5999)),                                   # 1: eth2
        rx(udp6p(dport=6000)),                                   # 2: main -> eth1
        rx(udp6p(dport=4999)),                                   # 3: main -> eth1
        rx(tcp6p(HOST_A, HOST_B, 40001, 5000)),                  # 4: not UDP: main -> eth1
        rx(udp6p(dst=HOST_C, dport=7000)),                       # 5: 300 empty, 100 no route: main -> eth2
        ("eth2", rx(tcp6p(HOST_C, HOST_A, 80), "eth2")),         # 6: table 200 -> eth1
        ("eth2", rx(tcp6p(HOST_C, HOST_A, 81), "eth2")),         # 7: main -> eth0
        ("eth1", rx(udp6p(src=HOST_B, dst=HOST_A), "eth1")),     # 8: not from C on eth1: 250 -> eth2
        ("eth1", rx(udp6p(src=HOST_C, dst=HOST_A), "eth1")),     # 9: from C: main -> eth0
        ("eth2", rx(IPv6(src=HOST_C, dst=HOST_A) / ICMPv6EchoRequest(id=7, seq=1), "eth2")),  # 10: 200 -> eth1
        # 11: the protocol and port after a Destination Options header: table 100.
        rx(udp6p(dport=5000, ext=IPv6ExtHdrDestOpt(options=[PadN(optdata=b"\x00" * 4)]))),
        # 12: a first fragment: protocol UDP but no ports for the rules: main -> eth1.
        rx(udp6p(dport=5000, ext=IPv6ExtHdrFragment(id=9, m=1, offset=0))),
    ]
    kernel.run(cfg, frames).assert_identical()


@scenario(IDENTICAL)
def test_rules_ipv6_actions(kernel):
    """IPv6 rule actions: prohibit (Destination Unreachable code 1), unreachable (code 0), blackhole (silent)"""
    cfg = config(
        "ip -6 rule add to fc00:2:99::/64 prohibit",
        "ip -6 rule add to fc00:2:98::/64 unreachable",
        "ip -6 rule add to fc00:2:97::/64 ipproto udp blackhole",
    )
    frames = [rx(udp6p(dst="fc00:2:99::1")), rx(udp6p(dst="fc00:2:98::1")), rx(udp6p(dst="fc00:2:97::1")),
              rx(tcp6p(HOST_A, "fc00:2:97::1", 40001)), rx(udp6p())]
    kernel.run(cfg, frames).assert_identical(silent=[2])


@scenario(IDENTICAL)
def test_rules_ipv4(kernel):
    """IPv4 rules: from/to/iif/ipproto/sport/dport, not, fall-through to main, blackhole, unreachable, prohibit (ICMP code 13)"""
    cfg = config(
        "ip route add 10.2.0.0/16 via 10.0.13.2 dev eth2 table 100",
        "ip route add 10.1.0.0/16 via 10.0.12.2 dev eth1 table 200",
        "ip rule add from 10.1.0.0/16 to 10.2.0.0/16 ipproto udp dport 5000-5999 pref 100 lookup 100",
        "ip rule add iif eth2 ipproto tcp sport 80 pref 200 lookup 200",
        "ip rule add not to 10.0.0.0/8 pref 300 prohibit",
        "ip rule add to 10.3.0.0/16 pref 400 lookup 100",
        "ip rule add to 10.9.0.0/16 blackhole",
        "ip rule add to 10.8.0.0/16 unreachable",
    )
    frames = [
        rx(udp4p(dport=5000)),                                   # 0: table 100 -> eth2
        rx(udp4p(dport=6000)),                                   # 1: main -> eth1
        ("eth2", rx(tcp4p("10.3.0.7", HOST_A4, 80), "eth2")),    # 2: table 200 -> eth1
        ("eth2", rx(tcp4p("10.3.0.7", HOST_A4, 443), "eth2")),   # 3: main -> eth0
        rx(udp4p(dst="20.0.0.1")),                               # 4: prohibit: ICMP code 13
        rx(udp4p(dst="10.3.0.7", dport=5000)),                   # 5: 100 has no route: main -> eth2
        rx(udp4p(dst="10.9.0.1")),                               # 6: blackhole
        rx(udp4p(dst="10.8.0.1")),                               # 7: unreachable: net unreachable
        rx(udp4p(dport=5000, flags="MF")),                       # 8: a fragment: no ports: main -> eth1
    ]
    kernel.run(cfg, frames).assert_identical(silent=[6])


@scenario(IDENTICAL)
def test_rules_steer_onto_srv6_chain(kernel):
    """UDP dport 5000-5999 steered by rules to a table whose default route is encap seg6 (IPv6 and IPv4): H.Encaps, then main for the outer packet; other flows plain"""
    cfg = config(
        f"ip sr tunsrc set {TUNSRC}",
        f"ip -6 route add default encap seg6 mode encap segs {SEG_B},{SEG_C} dev eth1 table 100",
        f"ip route add 0.0.0.0/0 encap seg6 mode encap segs {SEG_B},{SEG_C} dev eth1 table 100",
        "ip -6 rule add from fc00:a::/64 ipproto udp dport 5000-5999 priority 1000 lookup 100",
        "ip rule add iif eth0 ipproto udp dport 5000-5999 priority 1000 lookup 100",
    )
    frames = [
        rx(udp6p(dst=HOST_C, dport=5000)),   # 0: encapsulated toward fc00:2::1, out eth1
        rx(udp6p(dst=HOST_B, dport=5999)),   # 1: encapsulated
        rx(udp6p(dst=HOST_C, dport=6000)),   # 2: main: plain out eth2
        rx(udp4p(dst="10.3.0.7", dport=5500)),  # 3: IPv4 in IPv6, out eth1
        rx(udp4p(dst="10.3.0.7", dport=80)),    # 4: main: plain out eth2
    ]
    kernel.run(cfg, frames).assert_identical()


@scenario(IDENTICAL)
def test_rules_and_seg6local_tables(kernel):
    """With a rule steering fc00:2::/48 to table 100: End's next lookup walks the rules; End.T and End.DT6 naming table main look there past them"""
    sid3 = "fc00:f::3"
    cfg = config(
        "ip -6 route add fc00:2::/48 via fc00:13::2 dev eth2 table 100",
        "ip -6 rule add to fc00:2::/48 priority 100 lookup 100",
        seg6local("End"),
        seg6local("End.T", "table main", sid=SID2),
        seg6local("End.DT6", "table main", sid=sid3),
    )
    inner = udp6(src="fc00:a::200", dst=HOST_B, hlim=30)
    frames = [
        rx(sr_pkt(SID, [FINAL, SID], 1)),                           # End: the rule -> table 100 -> eth2
        rx(sr_pkt(SID2, [FINAL, SID2], 1)),                         # End.T main: main -> eth1
        rx(sr_pkt(sid3, [sid3, PREV], 0, nh=NH_IPV6, inner=inner)),  # End.DT6 main: main -> eth1
        rx(IPv6(src=HOST_A, dst=sid3) / inner),                     # the same without an SRH
        rx(udp6()),                                                 # transit: the rule -> eth2
    ]
    kernel.run(cfg, frames).assert_identical()


@scenario(DIFFERENCE("after End the kernel looks the next segment up with the SRH's Next Header (43) as the "
                     "protocol and no ports (seg6_lookup_any_nexthop fills the flow from the IPv6 header, "
                     "without the early flow dissection); sr6 reads the protocol and ports past the SRH, as "
                     "for every other lookup", "RFC 8986 §4.1: the egress IPv6 FIB lookup, whose policy the RFC leaves to the node"))
def test_rules_after_end_see_the_upper_layer(kernel):
    """A rule on the upper-layer protocol, met again after End: the kernel sees Next Header 43, sr6 UDP"""
    cfg = config(
        "ip -6 route add fc00:2::/48 via fc00:13::2 dev eth2 table 100",
        "ip -6 rule add ipproto udp priority 100 lookup 100",
        seg6local("End"),
    )
    pkt = sr_pkt(SID, [FINAL, SID], 1)
    run = kernel.run(cfg, [rx(pkt)])
    out = sr_pkt(FINAL, [FINAL, SID], 0, hlim=63)
    # On arrival both see UDP past the SRH: table 100 has no route to the SID, main does.
    run.expect_kernel(0, eth1=[tx(out, "eth1")])
    run.expect_sr6(0, eth2=[tx(out, "eth2")])
