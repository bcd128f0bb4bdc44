"""`sr6 run --fpm-listen` (docs/frr.md) against FRR's own zebra: zebra, with its
`dplane_fpm_nl` module, connects to sr6 and streams the routes its daemons give it
(here staticd's); sr6 forwards by them without mirroring the kernel, stops when one is
withdrawn, and keeps them while zebra restarts, then takes its replay.

Topology: a (fc00:a::2) -- a-r | r-a  r (sr6, zebra, staticd)  r-b | b-r -- b
(fc00:b::2, and fc00:77::7 on its loopback). Needs FRR (zebra, staticd, vtysh:
scripts/setup.sh installs Debian's frr); skipped without it."""
from __future__ import annotations

import time

import pytest

from frrd import Frr, installed
from livenet import Net
from topologies import build_arb

PORT = 2626

R_CONF = """
ip -6 addr add fc00:a::1/64 dev r-a
ip -6 addr add fc00:b::1/64 dev r-b
"""

ZEBRA_CONF = f"""hostname r
fpm address 127.0.0.1 port {PORT}
"""

STATIC_CONF = """hostname r
ipv6 route fc00:77::/64 fc00:b::2
"""

pytestmark = pytest.mark.skipif(not installed("zebra", "staticd"),
                                reason="FRR is not installed (scripts/setup.sh installs it)")


def wait_for(cond, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(0.1)
    return cond()


@pytest.fixture(scope="module")
def net(sr6_bin, tmp_path_factory):
    d = tmp_path_factory.mktemp("fpm")
    n = Net(sr6_bin, d, tag="fpm")
    frr = None
    try:
        a, r, b = build_arb(n, "ip -6 addr add fc00:77::7/128 dev lo")
        sr6 = n.sr6(r, R_CONF, extra=["--fpm-listen", f"127.0.0.1:{PORT}"])
        assert n.ping(a, "fc00:b::2"), "no connectivity through sr6:\n" + sr6.log_text()
        frr = Frr(r, {"zebra": ZEBRA_CONF, "staticd": STATIC_CONF})
        frr.start("zebra")
        frr.start("staticd")
        yield n, a, r, sr6, frr
    finally:
        if frr is not None:
            frr.close()
        n.close()


def fpm_routes(sr6) -> str:
    listing = sr6.ctl("show", "routes")
    return listing.split("# from zebra's FPM stream", 1)[1] if "# from zebra's FPM stream" in listing else ""


def test_zebra_routes_are_forwarded(net):
    n, a, _, sr6, frr = net
    assert wait_for(lambda: "fc00:77::/64" in fpm_routes(sr6)), (
        f"no route from zebra:\n{sr6.log_text()}\n{frr.log('zebra')}")
    assert "FPM: zebra connected" in sr6.log_text()
    assert n.ping(a, "fc00:77::7"), "zebra's route is not forwarded:\n" + sr6.log_text()


def test_a_withdrawn_route_stops(net):
    n, a, _, sr6, frr = net
    assert wait_for(lambda: "fc00:77::/64" in fpm_routes(sr6))
    frr.vtysh("configure terminal", "ipv6 route fc00:78::/64 fc00:b::2")
    assert wait_for(lambda: "fc00:78::/64" in fpm_routes(sr6)), sr6.log_text()
    frr.vtysh("configure terminal", "no ipv6 route fc00:78::/64 fc00:b::2")
    assert wait_for(lambda: "fc00:78::/64" not in fpm_routes(sr6)), sr6.ctl("show", "routes")
    assert "fc00:77::/64" in fpm_routes(sr6), "the other route went too"


def test_routes_stay_while_zebra_restarts(net):
    n, a, _, sr6, frr = net
    assert wait_for(lambda: "fc00:77::/64" in fpm_routes(sr6))
    frr.stop("staticd")
    frr.stop("zebra")
    assert wait_for(lambda: "ended" in sr6.log_text().split("FPM: zebra connected")[-1]), sr6.log_text()
    assert "fc00:77::/64" in fpm_routes(sr6), "the routes went with the connection"
    assert n.ping(a, "fc00:77::7"), "not forwarded while zebra is away"
    frr.start("zebra")
    frr.start("staticd")
    assert wait_for(lambda: sr6.log_text().count("FPM: zebra connected") >= 2), sr6.log_text()
    time.sleep(1.0)
    assert "fc00:77::/64" in fpm_routes(sr6), "the replay lost the route:\n" + sr6.log_text()
    assert n.ping(a, "fc00:77::7")
