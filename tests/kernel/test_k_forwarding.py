"""Plain forwarding through the kernel and sr6 (RFC 8200 §3, RFC 791, RFC 4443)."""
from kcommon import *  # noqa: F403


@scenario(IDENTICAL)
def test_ipv6_forwarding(kernel):
    """IPv6 forwarding: hop limit 64, 2 and 255 out eth1/eth2; hop limit - 1"""
    frames = [rx(udp6(hlim=64)), rx(udp6(hlim=2, tc=0x28, fl=0x12345)), rx(udp6(dst=HOST_C, hlim=255)),
              ("eth1", rx(udp6(src=HOST_B, dst=HOST_A), "eth1"))]
    kernel.run(config(), frames).assert_identical()


@scenario(IDENTICAL)
def test_ipv6_hop_limit_exhausted(kernel):
    """IPv6 forwarding with hop limit 1 and 0: ICMPv6 Time Exceeded to the source"""
    kernel.run(config(), [rx(udp6(hlim=1)), rx(udp6(hlim=0))]).assert_identical()


@scenario(IDENTICAL)
def test_ipv6_no_route(kernel):
    """IPv6 without a route: Destination Unreachable code 0; blackhole: silent drop"""
    cfg = config("ip -6 route add blackhole fc00:dead::/32")
    kernel.run(cfg, [rx(udp6(dst="fc00:77::1")), rx(udp6(dst="fc00:dead::1"))]).assert_identical(silent=[1])


@scenario(IDENTICAL)
def test_ipv4_forwarding(kernel):
    """IPv4 forwarding: TTL - 1, header checksum updated"""
    frames = [rx(udp4()), rx(udp4(ttl=2)), ("eth1", rx(udp4(src=HOST_B4, dst=HOST_A4), "eth1"))]
    kernel.run(config(), frames).assert_identical()


@scenario(IDENTICAL)
def test_ipv4_ttl_exhausted(kernel):
    """IPv4 with TTL 1 and 0: ICMPv4 Time Exceeded (IP ID normalised)"""
    kernel.run(config(), [rx(udp4(ttl=1)), rx(udp4(ttl=0))]).assert_identical()


@scenario(IDENTICAL)
def test_forwarding_disabled(kernel):
    """net.ipv6.conf.all.forwarding=0: a transit IPv6 packet is not forwarded"""
    cfg = config("sysctl -w net.ipv6.conf.all.forwarding=0")
    kernel.run(cfg, [rx(udp6())]).assert_identical(silent="all")
