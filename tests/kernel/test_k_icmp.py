"""ICMP errors a router originates: Destination Unreachable codes and the source address
(RFC 4443 §3.1, RFC 792, RFC 1812 §4.3.2.4, §5.2.7.1), as the kernel chooses them."""
from kcommon import *  # noqa: F403


@scenario(IDENTICAL)
def test_unreachable_route_codes(kernel):
    """`unreachable` route: ICMPv6 Destination Unreachable code 0, ICMPv4 code 1 (host); no route: code 0 both"""
    cfg = config("ip -6 route add unreachable fc00:77::/32", "ip route add unreachable 10.77.0.0/16")
    frames = [rx(udp6(dst="fc00:77::1")), rx(udp4(dst="10.77.0.1")), rx(udp6(dst="fc00:78::1")),
              rx(udp4(dst="10.78.0.1"))]
    kernel.run(cfg, frames).assert_identical()
