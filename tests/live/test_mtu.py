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


def test_ipv4_over_the_mtu_without_df_is_fragmented_and_reassembled(sr6_bin, tmp_path):
    """IPv4 without DF over r-b's MTU of 1400: sr6 fragments it (RFC 791 §3.2) and the
    kernel of b, an independent reassembler, answers the ping -- also when b's address is
    not resolved yet (the fragments wait for ARP) and when what arrives is itself a
    fragment (a's kernel fragments 2028 bytes at its MTU of 1500 first)."""
    n = Net(sr6_bin, tmp_path, tag="f")
    try:
        a, r, b = n.ns("a"), n.ns("r"), n.ns("b")
        n.link(a, "a-r", r, "r-a")
        n.link(r, "r-b", b, "b-r")
        # Both ends of the link (a veth drops what exceeds its receiver's MTU).
        sh(["ip", "-n", r, "link", "set", "r-b", "mtu", str(MTU)])
        sh(["ip", "-n", b, "link", "set", "b-r", "mtu", str(MTU)])
        n.kernel(a, "ip addr add 10.0.1.2/24 dev a-r\nip route add default via 10.0.1.1 dev a-r", forwarding=False)
        n.kernel(b, "ip addr add 10.0.2.2/24 dev b-r\nip route add default via 10.0.2.1 dev b-r", forwarding=False)
        sr6 = n.sr6(r, "ip addr add 10.0.1.1/24 dev r-a\nip addr add 10.0.2.1/24 dev r-b\n", backend="af_packet")
        for size in (MTU - 28 + 1, 2000):
            p = subprocess.run(["ip", "netns", "exec", a, "ping", "-c", "2", "-i", "0.3", "-W", "2", "-M", "dont",
                                "-s", str(size), "10.0.2.2"], capture_output=True, text=True)
            assert p.returncode == 0, f"ping -s {size}: {p.stdout}{p.stderr}{sr6.ctl_json('show', 'counters')}"
        c = sr6.ctl_json("show", "counters")
        assert c["fragmentation"]["packets"] >= 4 and c["fragmentation"]["fragments"] >= 8, c
        assert "needs_fragmentation" not in c["drops"], c
    finally:
        n.close()
