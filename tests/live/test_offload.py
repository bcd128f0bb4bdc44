"""A veth peer with transmit checksum offload on (docs/cli.md, "Offloads on veth"): what
`sr6 run` says at start and what then happens, with the far host's kernel as the oracle
(its UDP stack verifies every checksum and drops a wrong one).

Topology: a (fc00:a::2, 10.0.1.2; a-r with tx checksum and TCP segmentation offload ON)
-- r (sr6) -- b (fc00:b::2, 10.0.2.2).

* AF_PACKET completes the partial checksums from the kernel's virtio-net header: every
  datagram arrives, `show counters` counts them in `rx_csum_completed`; the warning
  names only the peer's TSO (whose super-frames it drops), with its command.
* AF_XDP has no such metadata: it forwards the bytes as they came and b drops them, as
  its warning (with `tx off`) says."""
from __future__ import annotations

import pytest

from livenet import Net, sh

R_CONF = """
ip -6 addr add fc00:a::1/64 dev r-a
ip -6 addr add fc00:b::1/64 dev r-b
ip addr add 10.0.1.1/24 dev r-a
ip addr add 10.0.2.1/24 dev r-b
"""
COUNT = 200


@pytest.fixture(scope="module")
def net(sr6_bin, tmp_path_factory):
    n = Net(sr6_bin, tmp_path_factory.mktemp("offload"), tag="o")
    try:
        a, r, b = n.ns("a"), n.ns("r"), n.ns("b")
        n.link(a, "a-r", r, "r-a")
        n.link(r, "r-b", b, "b-r")
        # `link` turned the offloads off everywhere; the sender's go back on.
        sh(["ip", "netns", "exec", a, "ethtool", "-K", "a-r", "tx", "on", "tso", "on"])
        k = sh(["ip", "netns", "exec", a, "ethtool", "-k", "a-r"])
        assert "tx-checksumming: on" in k and "tcp-segmentation-offload: on" in k, k
        n.kernel(a, "ip -6 addr add fc00:a::2/64 dev a-r\nip -6 route add default via fc00:a::1 dev a-r\n"
                    "ip addr add 10.0.1.2/24 dev a-r\nip route add default via 10.0.1.1 dev a-r", forwarding=False)
        n.kernel(b, "ip -6 addr add fc00:b::2/64 dev b-r\nip -6 route add default via fc00:b::1 dev b-r\n"
                    "ip addr add 10.0.2.2/24 dev b-r\nip route add default via 10.0.2.1 dev b-r", forwarding=False)
        yield n, a, r, b
    finally:
        n.close()


def start(n, r, backend):
    """`sr6 run` in r; the addresses a previous test gave r's kernel are taken back
    first (`Net.sr6` adds them)."""
    for dev in ("r-a", "r-b"):
        sh(["ip", "-n", r, "addr", "flush", "dev", dev, "scope", "global"])
    return n.sr6(r, R_CONF, backend=backend)


def run_udp(n, a, b):
    """COUNT datagrams over IPv6 then over IPv4; the receiver's counts of each."""
    return [n.udp(a, b, dst, COUNT, rate=1000, port=port, idle=1.5)
            for dst, port in (("fc00:b::2", 9101), ("10.0.2.2", 9102))]


def test_af_packet_completes_partial_checksums(net):
    n, a, r, b = net
    sr6 = start(n, r, "af_packet")
    try:
        log = sr6.log_text()
        assert "r-a: its veth peer a-r" in log and f"ip netns exec {a} ethtool -K a-r tso off" in log, log
        assert "transmit checksum offload" not in log, log
        status = sr6.ctl_json("show", "status")
        assert any("tso off" in w for w in status["warnings"]), status
        for res in run_udp(n, a, b):
            assert res["unique"] == COUNT, res
        dev = sr6.ctl_json("show", "counters")["devices"]["r-a"]
        # Each datagram's checksum was partial: the oracle (b's UDP) would have dropped
        # it otherwise, as the AF_XDP test shows.
        assert dev["rx_csum_completed"] >= 2 * COUNT and dev["rx_gso"] == 0 and dev["rx_bad_vnet"] == 0, dev
    finally:
        sr6.stop()
        n.sr6s.remove(sr6)


def test_af_xdp_forwards_them_partial_and_warns(net):
    n, a, r, b = net
    sr6 = start(n, r, "af_xdp")
    try:
        log = sr6.log_text()
        assert f"ip netns exec {a} ethtool -K a-r tx off" in log and "AF_XDP has no checksum metadata" in log, log
        for res in run_udp(n, a, b):
            # b drops what carries the partial sum. (Only a datagram whose bytes happen
            # to sum to the partial value would pass: at most one of 200 sequence numbers,
            # 1 in 65535 per datagram.)
            assert res["unique"] <= 1, res
        c = sr6.ctl_json("show", "counters")
        assert c["devices"]["r-b"]["tx"] >= 2 * COUNT, c
        assert c["devices"]["r-a"]["rx_csum_completed"] == 0, c
    finally:
        sr6.stop()
        n.sr6s.remove(sr6)
