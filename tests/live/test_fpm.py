"""`sr6 run --fpm-listen` (docs/frr.md) against FRR's own zebra: zebra, with its
`dplane_fpm_nl` module, connects to sr6 and streams the routes its daemons give it
(here staticd's); sr6 forwards by them without mirroring the kernel, stops when one is
withdrawn, and keeps them while zebra restarts, then takes its replay.

Topology: a (fc00:a::2) -- a-r | r-a  r (sr6, zebra, staticd)  r-b | b-r -- b
(fc00:b::2, and fc00:77::7 on its loopback). Needs FRR (zebra, staticd, vtysh:
scripts/setup.sh installs Debian's frr); skipped without it."""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from livenet import Net
from topologies import build_arb

FRR = Path("/usr/lib/frr")
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

pytestmark = pytest.mark.skipif(
    not (FRR / "zebra").exists() or not (FRR / "staticd").exists() or shutil.which("vtysh") is None,
    reason="FRR is not installed (scripts/setup.sh installs it)")


class Frr:
    """zebra (with dplane_fpm_nl) and staticd in namespace `ns`, their files in a
    directory of their own."""

    def __init__(self, ns: str):
        self.ns, self.procs = ns, {}
        self.d = Path(tempfile.mkdtemp(prefix="sr6-fpm-"))
        os.chmod(self.d, 0o777)
        (self.d / "zebra.conf").write_text(ZEBRA_CONF)
        (self.d / "staticd.conf").write_text(STATIC_CONF)

    def start(self, daemon: str) -> None:
        # As Debian's user frr (whose vty group the daemons check), hence a directory
        # of its own that frr may write.
        args = ["ip", "netns", "exec", self.ns, str(FRR / daemon), "-f", str(self.d / f"{daemon}.conf"), "-i", str(self.d / f"{daemon}.pid"),
                "-z", str(self.d / "zserv.api"), "--vty_socket", str(self.d), "--log", f"file:{self.d / daemon}.log"]
        if daemon == "zebra":
            args += ["-M", "dplane_fpm_nl"]
        self.procs[daemon] = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT,
                                              start_new_session=True)
        deadline = time.monotonic() + 15
        while not (self.d / f"{daemon}.vty").exists():
            if self.procs[daemon].poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"{daemon} did not start: {self.log(daemon)}")
            time.sleep(0.05)

    def stop(self, daemon: str) -> None:
        p = self.procs.pop(daemon, None)
        if p is not None and p.poll() is None:
            os.killpg(p.pid, signal.SIGTERM)
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
        for f in (f"{daemon}.vty", f"{daemon}.pid"):
            (self.d / f).unlink(missing_ok=True)

    def vtysh(self, *commands: str) -> str:
        argv = ["ip", "netns", "exec", self.ns, "vtysh", "--vty_socket", str(self.d)]
        for c in commands:
            argv += ["-c", c]
        return subprocess.run(argv, capture_output=True, text=True, timeout=20, check=True).stdout

    def log(self, daemon: str) -> str:
        f = self.d / f"{daemon}.log"
        return f.read_text() if f.exists() else "(no log)"

    def close(self) -> None:
        for daemon in list(self.procs):
            self.stop(daemon)
        shutil.rmtree(self.d, ignore_errors=True)


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
        frr = Frr(r)
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
