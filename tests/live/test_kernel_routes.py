"""`sr6 run --mirror-kernel-routes` (docs/frr.md): a route installed with `ip route` in the
kernel of sr6's namespace — as a routing daemon's zebra would — is forwarded by sr6 at
once, one withdrawn stops being, and a route of sr6's own configuration wins over the
kernel's for the same prefix. `show routes` lists the mirrored routes after the
configuration's.

Topology: a (fc00:a::2) -- a-r | r-a  r (sr6)  r-b | b-r -- b (fc00:b::2, and
fc00:77::7 and fc00:78::8 on its loopback). sr6's configuration has its two addresses and
a route to fc00:78::/64 through a gateway that does not exist; the kernel of r is given
routes to both prefixes through b."""
from __future__ import annotations

import os
import subprocess
import time

import pytest

from livenet import Net, sh
from topologies import build_arb

R_CONF = """
ip -6 addr add fc00:a::1/64 dev r-a
ip -6 addr add fc00:b::1/64 dev r-b
ip -6 route add fc00:78::/64 via fc00:b::99 dev r-b
"""


def reaches(n: Net, ns: str, dst: str, want: bool, timeout: float = 5.0) -> bool:
    """Whether `ns` reaches (or, `want` False, stops reaching) `dst` within `timeout`."""
    deadline = time.monotonic() + timeout
    while True:
        ok = n.ping(ns, dst, count=1)
        if ok == want or time.monotonic() > deadline:
            return ok
        time.sleep(0.1)


@pytest.fixture(scope="module")
def net(sr6_bin, tmp_path_factory):
    n = Net(sr6_bin, tmp_path_factory.mktemp("kroutes"), tag="kr")
    try:
        a, r, b = build_arb(n, "ip -6 addr add fc00:77::7/128 dev lo\nip -6 addr add fc00:78::8/128 dev lo")
        sr6 = n.sr6(r, R_CONF, extra=["--mirror-kernel-routes"])
        assert n.ping(a, "fc00:b::2"), "no connectivity through sr6:\n" + sr6.log_text()
        yield n, a, r, b, sr6
    finally:
        n.close()


def test_a_kernel_route_is_forwarded_then_withdrawn(net):
    n, a, r, _, sr6 = net
    assert not n.ping(a, "fc00:77::7", count=1), "fc00:77::7 reachable before any route to it"
    sh(["ip", "-n", r, "-6", "route", "add", "fc00:77::/64", "via", "fc00:b::2", "dev", "r-b"])
    assert reaches(n, a, "fc00:77::7", True), "the kernel's new route is not forwarded:\n" + sr6.log_text()
    listing = sr6.ctl("show", "routes")
    assert "# mirrored from the kernel" in listing and "fc00:77::/64 via fc00:b::2 dev r-b" in listing, listing
    sh(["ip", "-n", r, "-6", "route", "del", "fc00:77::/64"])
    assert not reaches(n, a, "fc00:77::7", False), "the withdrawn route is still forwarded"
    assert "fc00:77::/64" not in sr6.ctl("show", "routes")


def test_a_route_through_a_nexthop_object(net):
    """As FRR's zebra installs routes: through a nexthop object; deleting the object
    takes the route with it."""
    n, a, r, _, sr6 = net
    sh(["ip", "-n", r, "-6", "nexthop", "add", "id", "77", "via", "fc00:b::2", "dev", "r-b"])
    sh(["ip", "-n", r, "-6", "route", "add", "fc00:77::/64", "nhid", "77"])
    assert reaches(n, a, "fc00:77::7", True), "the route through nexthop 77 is not forwarded:\n" + sr6.log_text()
    listing = sr6.ctl("show", "routes")
    assert "nexthop add id 77 via fc00:b::2 dev r-b" in listing and "fc00:77::/64 nhid 77" in listing, listing
    sh(["ip", "-n", r, "nexthop", "del", "id", "77"])
    assert not reaches(n, a, "fc00:77::7", False), "the route is still forwarded after its nexthop went"
    assert "nhid 77" not in sr6.ctl("show", "routes")


def test_the_configuration_wins_its_prefix(net):
    n, a, r, _, sr6 = net
    sh(["ip", "-n", r, "-6", "route", "add", "fc00:78::/64", "via", "fc00:b::2", "dev", "r-b"])
    try:
        # sr6's own route (through a gateway nobody answers for) stays in force.
        time.sleep(0.5)
        assert not n.ping(a, "fc00:78::8", count=1), "the kernel's route replaced the configuration's"
        assert "fc00:78::/64 via fc00:b::2" not in sr6.ctl("show", "routes")
    finally:
        sh(["ip", "-n", r, "-6", "route", "del", "fc00:78::/64", "via", "fc00:b::2"])


def test_a_kernel_address_is_sr6s_too(net):
    """An address given to r-b in r's kernel, not in sr6's configuration (as a routing
    daemon's or an operator's would be), is sr6's too: its prefix is connected, so a
    reaches b's address on it through sr6; removed, it stops being."""
    n, a, r, b, sr6 = net
    sh(["ip", "-n", b, "-6", "addr", "add", "fc00:c::2/64", "dev", "b-r", "nodad"])
    try:
        assert not n.ping(a, "fc00:c::2", count=1), "fc00:c::2 reachable before r has an address on its prefix"
        sh(["ip", "-n", r, "-6", "addr", "add", "fc00:c::1/64", "dev", "r-b", "nodad"])
        assert reaches(n, a, "fc00:c::2", True), "the kernel's new address is not sr6's:\n" + sr6.log_text()
        listing = sr6.ctl("show", "routes")
        assert "ip -6 addr add fc00:c::1/64 dev r-b" in listing, listing
        sh(["ip", "-n", r, "-6", "addr", "del", "fc00:c::1/64", "dev", "r-b"])
        assert not reaches(n, a, "fc00:c::2", False), "the removed address's prefix is still routed"
    finally:
        sh(["ip", "-n", r, "-6", "addr", "del", "fc00:c::1/64", "dev", "r-b"], check=False)
        sh(["ip", "-n", b, "-6", "addr", "del", "fc00:c::2/64", "dev", "b-r"], check=False)


def test_a_burst_of_routes(net, tmp_path):
    """A routing daemon installing a table as FRR's zebra does, through nexthop objects:
    BURST routes (default 20,000; BURST=200000 for a full feed), half IPv4 /24s and half
    IPv6 /48s, added with `ip -batch` in r's kernel, IPv4 first, the last one to
    fc00:77::/48. sr6 must forward it, and a stream of UDP datagrams a -> b (RATE a
    second, default 5,000), which a route already there carries, must lose none while
    sr6 mirrors. Times and rates are printed, not asserted (docs/frr.md, "Limits", has
    the measured ones); deleting the two nexthop objects withdraws every route after."""
    n, a, r, b, sr6 = net
    count = int(os.environ.get("BURST", "20000"))
    rate = int(os.environ.get("RATE", "5000"))
    # Traffic for the burst (about 3 s for 200,000 routes) and a margin either side.
    datagrams = int(rate * (3 + count * 6 / 200_000))
    v4, v6 = count // 2, count - count // 2
    b4, b6 = tmp_path / "burst4", tmp_path / "burst6"
    p4 = [f"{10 + (i >> 16)}.{i >> 8 & 0xff}.{i & 0xff}.0/24" for i in range(v4)]
    p6 = [f"2a00:{i >> 16:x}:{i & 0xffff:x}::/48" for i in range(v6 - 1)] + ["fc00:77::/48"]
    b4.write_text("".join(f"route add {p} nhid 4\n" for p in p4))
    b6.write_text("".join(f"route add {p} nhid 6\n" for p in p6))
    sh(["ip", "-n", r, "addr", "add", "192.0.2.1/24", "dev", "r-b"])
    sh(["ip", "-n", r, "nexthop", "add", "id", "4", "via", "192.0.2.2", "dev", "r-b"])
    sh(["ip", "-n", r, "nexthop", "add", "id", "6", "via", "fc00:b::2", "dev", "r-b"])
    times: dict[str, float] = {}

    def burst(tx: subprocess.Popen) -> None:
        time.sleep(0.5)
        t0 = time.monotonic()
        sh(["ip", "-n", r, "-4", "-batch", str(b4)])
        sh(["ip", "-n", r, "-6", "-batch", str(b6)])
        times["installed"] = time.monotonic() - t0
        assert reaches(n, a, "fc00:77::7", True, timeout=300), "the burst's last route is not forwarded:\n" \
                                                              + sr6.log_text()
        times["forwarded"] = time.monotonic() - t0
        times["v4"] = sum(1 for line in sr6.ctl("show", "routes").splitlines()
                          if line.startswith("ip route add ") and " nhid 4" in line)
        assert tx.poll() is None, "the traffic ended before the burst was forwarded: raise the count"

    try:
        t = time.monotonic()
        res = n.udp(a, b, "fc00:b::2", datagrams, rate=rate, during=burst)
        took = time.monotonic() - t
    finally:
        sh(["ip", "-n", r, "nexthop", "del", "id", "4"], check=False)
        sh(["ip", "-n", r, "nexthop", "del", "id", "6"], check=False)
        sh(["ip", "-n", r, "addr", "del", "192.0.2.1/24", "dev", "r-b"])
    print(f"{v4} IPv4 + {v6} IPv6 routes: in r's kernel after {times['installed']:.2f} s, the last forwarded by sr6 "
          f"after {times['forwarded']:.2f} s; UDP a -> b meanwhile at {rate}/s: {res['unique']}/{res['sent']} "
          f"datagrams ({took:.1f} s with the receiver's wait)")
    assert res["sent"] == datagrams
    assert res["unique"] == datagrams, f"lost {datagrams - res['unique']} datagrams during the burst " \
                                       f"(first {res['missing_first']}):\n{sr6.log_text()}"
    assert times["v4"] == v4, f"{times['v4']} of the {v4} IPv4 routes mirrored:\n{sr6.log_text()}"
    assert not reaches(n, a, "fc00:77::7", False, timeout=60), "the burst's routes are still forwarded"
