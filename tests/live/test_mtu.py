"""`sr6 run` takes each device's MTU from the kernel (docs/config.md, "MTU"): `ctl show
devices` shows it, a ping over it through sr6 is answered with the Packet Too Big sr6
sends (the kernel of the sender, an independent ICMPv6 parser, reports it), and a
configuration line that disagrees with the kernel is refused at start.

Topology: a (fc00:a::2) -- r (sr6; r-b has MTU 1400 in the kernel) -- b (fc00:b::2)."""
from __future__ import annotations

import subprocess

import pytest

from livenet import Net, sh

MTU = 1400
R_CONF = """
ip -6 addr add fc00:a::1/64 dev r-a
ip -6 addr add fc00:b::1/64 dev r-b
"""


@pytest.fixture(scope="module")
def net(sr6_bin, tmp_path_factory):
    n = Net(sr6_bin, tmp_path_factory.mktemp("mtu"), tag="m")
    try:
        a, r, b = n.ns("a"), n.ns("r"), n.ns("b")
        n.link(a, "a-r", r, "r-a")
        n.link(r, "r-b", b, "b-r")
        sh(["ip", "-n", r, "link", "set", "r-b", "mtu", str(MTU)])
        n.kernel(a, "ip -6 addr add fc00:a::2/64 dev a-r\nip -6 route add default via fc00:a::1 dev a-r",
                 forwarding=False)
        n.kernel(b, "ip -6 addr add fc00:b::2/64 dev b-r\nip -6 route add default via fc00:b::1 dev b-r",
                 forwarding=False)
        yield n, a, r, b
    finally:
        n.close()


def test_device_mtus_come_from_the_kernel_and_are_enforced(net):
    n, a, r, _ = net
    sr6 = n.sr6(r, R_CONF, backend="af_packet")
    try:
        devs = {d["name"]: d["mtu"] for d in sr6.ctl_json("show", "devices")}
        assert devs == {"r-a": 1500, "r-b": MTU}, devs
        assert n.ping(a, "fc00:b::2"), "no connectivity through sr6"
        # One byte over the MTU with fragmentation forbidden: sr6's Packet Too Big
        # reaches the sender, whose kernel reports the MTU.
        p = subprocess.run(["ip", "netns", "exec", a, "ping", "-6", "-c", "2", "-i", "0.3", "-W", "2", "-M", "do",
                            "-s", str(MTU - 48 + 1), "fc00:b::2"], capture_output=True, text=True)
        assert f"mtu={MTU}" in p.stdout + p.stderr, p.stdout + p.stderr
        c = sr6.ctl_json("show", "counters")
        assert c["drops"].get("mtu_exceeded", 0) >= 1 and c["icmp"]["sent"] >= 1, c
    finally:
        sr6.stop()
        n.sr6s.remove(sr6)


def test_a_config_mtu_that_disagrees_with_the_kernel_is_refused(sr6_bin, tmp_path):
    n = Net(sr6_bin, tmp_path, tag="n")
    try:
        q, p = n.ns("q"), n.ns("p")
        n.link(q, "q-p", p, "p-q")
        sh(["ip", "-n", q, "link", "set", "q-p", "mtu", str(MTU)])
        with pytest.raises(RuntimeError, match=f"q-p has MTU {MTU} in the kernel, not 1500"):
            n.sr6(q, "ip -6 addr add fc00:c::1/64 dev q-p\nip link set dev q-p mtu 1500\n", backend="af_packet")
    finally:
        n.close()
