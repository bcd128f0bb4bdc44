"""Source and destination validation of received packets (RFC 4291 §2.5.3, §2.5.6, §2.7;
RFC 1812 §5.3.7): what the kernel drops silently before routing (ipv6_rcv, ip6_forward,
ip_route_input_slow, fib_validate_source), sr6 drops too, counted as martian_source,
martian_destination or scope_source. Default routes make every such packet routable, so
a router that skipped a check would forward it."""
from kcommon import *  # noqa: F403

DEFAULTS = ("ip -6 route add default via fc00:12::2 dev eth1", "ip route add default via 10.0.12.2 dev eth1")


@scenario(IDENTICAL)
def test_ipv6_martian_source(kernel):
    """IPv6 source ::1 or multicast: dropped silently, hop limit 1 included (no Time Exceeded)"""
    frames = [rx(udp6(src=s, hlim=h)) for s in ("::1", "ff02::1", "ff0e::5") for h in (64, 1)]
    kernel.run(config(*DEFAULTS), frames).assert_identical(silent="all")


@scenario(IDENTICAL)
def test_ipv6_martian_destination(kernel):
    """IPv6 destination ::1 or multicast of scope 0 / 1: dropped silently; :: and ::ffff:0:0/96 are routed"""
    frames = [rx(udp6(dst="::1")), rx(udp6(dst="ff00::1")), rx(udp6(dst="ff01::1")),
              rx(udp6(dst="::")), rx(udp6(dst="::ffff:10.2.0.9"))]
    kernel.run(config(*DEFAULTS), frames).assert_identical(silent=[0, 1, 2])


@scenario(IDENTICAL)
def test_ipv6_scope_source(kernel):
    """IPv6 link-local or unspecified source: dropped toward another link, forwarded back out of its own"""
    frames = [rx(udp6(src="fe80::5")), rx(udp6(src="::")), rx(udp6(src="fe80::5", dst=HOST_C)),
              rx(udp6(src="fe80::5", dst="fc00:a::7")), rx(udp6(src="::", dst="fc00:a::7")),
              rx(udp6(src="::ffff:10.1.0.5")), rx(udp6(src="fe80::5", hlim=1))]
    kernel.run(config(*DEFAULTS), frames).assert_identical(silent=[0, 1, 2, 6])


@scenario(IDENTICAL)
def test_ipv4_martian_source(kernel):
    """IPv4 source 0.0.0.0, 127/8, 224/4, 255.255.255.255 or our own: dropped silently, TTL 1 included"""
    srcs = ("0.0.0.0", "127.0.0.1", "127.9.9.9", "224.0.0.5", "239.1.1.1", "255.255.255.255", ADDR4["eth1"],
            ADDR4["eth0"])
    frames = [rx(udp4(src=s, ttl=t)) for s in srcs for t in (64, 1)]
    kernel.run(config(*DEFAULTS), frames).assert_identical(silent="all")


@scenario(IDENTICAL)
def test_ipv4_unicast_edges(kernel):
    """IPv4 sources 0.1.2.3, 240.0.0.5, 169.254.1.1 and a subnet broadcast are forwarded; 240/4 destinations routed"""
    frames = [rx(udp4(src="0.1.2.3")), rx(udp4(src="240.0.0.5")), rx(udp4(src="169.254.1.1")),
              rx(udp4(src="10.0.12.255")), rx(udp4(dst="240.0.0.1")), rx(udp4(dst="0.1.2.3"))]
    kernel.run(config(*DEFAULTS), frames).assert_identical()


@scenario(IDENTICAL)
def test_ipv4_martian_destination(kernel):
    """IPv4 destination 0.0.0.0 or in 127/8: dropped silently, no Destination Unreachable"""
    frames = [rx(udp4(dst="0.0.0.0")), rx(udp4(dst="127.0.0.1")), rx(udp4(dst="127.1.2.3"))]
    kernel.run(config(*DEFAULTS), frames).assert_identical(silent="all")


@scenario(IDENTICAL)
def test_ipv4_same_device_source(kernel):
    """IPv4 routed back out of its device: a source that is our subnet's broadcast is dropped, a blackholed one not"""
    cfg = config("ip route add blackhole 10.1.9.0/24", "ip route add unreachable 10.1.8.0/24")
    frames = [rx(udp4(src="10.0.1.255", dst="10.1.0.7")), rx(udp4(src="10.1.9.1", dst="10.1.0.7")),
              rx(udp4(src="10.1.8.1", dst="10.1.0.7")), rx(udp4(src="10.0.1.255")), rx(udp4(src="10.1.9.1")),
              rx(udp4(src="10.9.9.9", dst="10.1.0.7"))]
    kernel.run(cfg, frames).assert_identical(silent=[0])
