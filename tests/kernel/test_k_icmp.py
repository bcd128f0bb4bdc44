"""ICMP errors a router originates: Destination Unreachable codes and the source address
(RFC 4443 §3.1, RFC 792, RFC 1812 §4.3.2.4, §5.2.7.1), as the kernel chooses them."""
from kcommon import *  # noqa: F403
from sr6_oracle import BASE_CONFIG


@scenario(IDENTICAL)
def test_unreachable_route_codes(kernel):
    """`unreachable` route: ICMPv6 Destination Unreachable code 0, ICMPv4 code 1 (host); no route: code 0 both"""
    cfg = config("ip -6 route add unreachable fc00:77::/32", "ip route add unreachable 10.77.0.0/16")
    frames = [rx(udp6(dst="fc00:77::1")), rx(udp4(dst="10.77.0.1")), rx(udp6(dst="fc00:78::1")),
              rx(udp4(dst="10.78.0.1"))]
    kernel.run(cfg, frames).assert_identical()


@scenario(IDENTICAL)
def test_icmp6_source_longest_match(kernel):
    """ICMPv6 error source: an address of the arrival device, longest prefix shared with the source (RFC 6724 rules 5, 8), newest on a tie"""
    cfg = config("ip -6 addr add fc00:a:0:1::1/48 dev eth0", "ip -6 addr add fc00:a:0:2::1/48 dev eth0",
                 "ip -6 addr add fc00:77::1/64 dev eth0",
                 "ip -6 addr add fc00:78::1/64 dev eth0", "ip -6 route add fc00:b::/64 via fc00:12::2 dev eth1")
    frames = [rx(udp6(hlim=1)), rx(udp6(dst="fc00:99::1")), rx(udp6(src="fc00:b::5", hlim=1))]
    kernel.run(cfg, frames).assert_identical()


@scenario(IDENTICAL)
def test_icmp4_source_gateway_subnet(kernel):
    """ICMPv4 error source with several addresses on the way back: the one on the gateway's subnet"""
    base = BASE_CONFIG.replace("ip addr add 10.0.1.1/24 dev eth0\n",
                               "ip addr add 10.9.0.1/24 dev eth0\nip addr add 10.0.1.1/24 dev eth0\n")
    cfg = config("ip addr add 10.8.0.1/24 dev eth0", "ip route add 10.8.5.0/24 via 10.8.0.2 dev eth0",
                 "ip neigh add 10.8.0.2 lladdr 02:aa:00:00:00:44 dev eth0", base=base)
    frames = [rx(udp4(ttl=1)), rx(udp4(src="10.8.5.5", ttl=1))]
    kernel.run(cfg, frames).assert_identical()
