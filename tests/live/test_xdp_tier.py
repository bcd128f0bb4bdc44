"""sr6 run's XDP tier (`--fast-path xdp`, the default with AF_XDP) live, on topology T1:
h1 --- r1 (kernel: H.Encaps) --- r2 (sr6: End, transit) --- r3 (kernel: End.DT6) --- h2.

The kernel routers' ends of sr6's links run GRO, so a veth there takes frames redirected
by XDP (`sr6_io::veth`): sr6 says in `show status` that both its devices receive into
and send from the XDP tier, and the traffic is forwarded there, not by the workers: the
tier's own counters (`rx_xdp`, `tx_xdp` of `show counters`) account for it, and the
SID's counter (merged from the tier's per-CPU map) equals the packets sent. The kernels
at both ends (End.DT6 at r3, the receiving host) are the oracle of the bytes: a wrong
hop limit, Segments Left or destination would not arrive. With `--fast-path off` the
same traffic takes the AF_XDP tier alone. SRHs with an HMAC that sr6's general path
verified are the tier's too (the kernels at r1 and r3 sign and verify). With GRO off at a peer, sr6 does not send
there from XDP and says why; the traffic still arrives.
"""
from __future__ import annotations

import shutil

import pytest

from livenet import Net, sh
from topologies import T1_H1, T1_H2, T1_R1, T1_R2, T1_R3

N = 400
RATE = 2000


def build(net: Net, gro: bool, extra: list[str]):
    ns = {n: net.ns(n) for n in ("h1", "r1", "r2", "r3", "h2")}
    net.link(ns["h1"], "h1-r1", ns["r1"], "r1-h1")
    net.link(ns["r1"], "r1-r2", ns["r2"], "r2-r1")
    net.link(ns["r2"], "r2-r3", ns["r3"], "r3-r2")
    net.link(ns["r3"], "r3-h2", ns["h2"], "h2-r3")
    if gro:
        for n, dev in (("r1", "r1-r2"), ("r3", "r3-r2")):
            sh(["ip", "netns", "exec", ns[n], "ethtool", "-K", dev, "gro", "on"])
    net.kernel(ns["h1"], T1_H1, forwarding=False)
    net.kernel(ns["r1"], T1_R1)
    net.kernel(ns["r3"], T1_R3)
    net.kernel(ns["h2"], T1_H2, forwarding=False)
    sr6 = net.sr6(ns["r2"], T1_R2, backend="af_xdp", extra=extra)
    return ns, sr6


@pytest.fixture(scope="module")
def tier(sr6_bin, tmp_path_factory):
    net = Net(sr6_bin, tmp_path_factory.mktemp("xdp-tier"), tag="x1")
    try:
        ns, r2 = build(net, gro=True, extra=[])
        yield net, ns, r2
    finally:
        net.close()


def xdp_counts(sr6, dev: str) -> tuple[int, int]:
    d = sr6.ctl_json("show", "counters")["devices"][dev]
    return d["rx_xdp"], d["tx_xdp"]


def warm(net, ns):
    """Neighbours resolved (the general path learns them; the tier takes over once
    the tables know them)."""
    for _ in range(20):
        if net.ping(ns["h1"], "fc00:b::2", count=2):
            return
    pytest.fail("no ping through sr6")


def test_status_says_both_devices_run_the_xdp_tier(tier):
    net, ns, r2 = tier
    st = r2.ctl_json("show", "status")
    assert "xdp tier" in st["backend"], st
    for dev in ("r2-r1", "r2-r3"):
        t = st["tiers"][dev]
        assert t.startswith("xdp (") and "receives into the XDP tier" in t and "sends from the XDP tier" in t, t
    assert "tier r2-r1: xdp (" in r2.ctl("show", "status")


def test_end_and_transit_are_forwarded_by_the_xdp_tier(tier):
    net, ns, r2 = tier
    warm(net, ns)
    r2.ctl("clear-counters")
    # h1 -> h2: r1 encapsulates, sr6 runs End on fc00:2::e, r3 decapsulates.
    res = net.udp(ns["h1"], ns["h2"], "fc00:b::2", N, RATE)
    assert res["unique"] == N and res["dups"] == 0, res
    s = r2.sid("fc00:2::e/128")
    assert (s["packets"], s["errors"]) == (N, 0), s
    assert s["bytes"] == N * (40 + 40 + 40 + 8 + 64), s
    rx, _ = xdp_counts(r2, "r2-r1")
    _, tx = xdp_counts(r2, "r2-r3")
    assert rx >= N and tx >= N, (rx, tx)
    # h2 -> h1: plain IPv6 transit through sr6.
    r2.ctl("clear-counters")
    res = net.udp(ns["h2"], ns["h1"], "fc00:a::2", N, RATE)
    assert res["unique"] == N and res["dups"] == 0, res
    rx, _ = xdp_counts(r2, "r2-r3")
    _, tx = xdp_counts(r2, "r2-r1")
    assert rx >= N and tx >= N, (rx, tx)
    c = r2.ctl_json("show", "counters")
    assert c["packets_in"] >= N and c["devices"]["r2-r1"]["tx"] >= N, c


@pytest.mark.skipif(shutil.which("ping") is None, reason="ping (iputils-ping) not installed")
def test_what_the_tier_leaves_still_works(tier):
    """Ping of sr6's own address (the kernel's), neighbour discovery, and a packet whose
    hop limit runs out at sr6 (the general path's: dropped, counted, an ICMP error
    sent): not the tier's, still handled."""
    net, ns, r2 = tier
    assert net.ping(ns["r1"], "fc00:12::2")
    r2.ctl("clear-counters")
    sh(["ip", "netns", "exec", ns["h2"], "ping", "-c", "1", "-t", "2", "-W", "1", "fc00:a::2"], check=False)
    c = r2.ctl_json("show", "counters")
    assert c["drops"].get("hop_limit") == 1 and c["icmp"]["sent"] == 1, c
    assert xdp_counts(r2, "r2-r3") == (0, 0)


def test_srhs_with_a_verified_hmac_are_forwarded_by_the_xdp_tier(tier):
    """r1's kernel signs its SRHs for fc00:b:1::/64 with key 7, whose secret sr6 has,
    and for fc00:b:2::/64 with key 8, whose secret differs. sr6's general path verifies
    the first packet of a text and hands it to the tier, which forwards the rest (its
    counters); the kernel at r3 verifies the HMAC again (key 7) and decapsulates. With
    the wrong key nothing passes, and the tier takes none; with an HMAC required on
    r2-r1 (`sr6 ctl sysctl`, at run time), signed traffic stays in the tier and
    unsigned traffic is dropped."""
    net, ns, r2 = tier
    warm(net, ns)

    def send(dst: str) -> tuple[dict, dict, int]:
        r2.ctl("clear-counters")
        res = net.udp(ns["h1"], ns["h2"], dst, N, RATE)
        return res, r2.ctl_json("show", "counters"), xdp_counts(r2, "r2-r1")[0]

    res, c, rx = send("fc00:b:1::2")
    assert res["unique"] == N and res["dups"] == 0, res
    assert r2.sid("fc00:2::e7/128")["packets"] == N
    assert rx >= N * 9 // 10, (rx, c)
    res, c, rx = send("fc00:b:2::2")
    assert res["unique"] == 0 and c["drops"].get("hmac_invalid") == N and rx == 0, (res, c, rx)
    r2.ctl("sysctl", "-w", "net.ipv6.conf.r2-r1.seg6_require_hmac=1")
    try:
        assert "receives into the XDP tier" in r2.ctl_json("show", "status")["tiers"]["r2-r1"]
        res, c, rx = send("fc00:b:1::2")
        assert res["unique"] == N and rx >= N * 9 // 10, (res, rx)
        res, c, rx = send("fc00:b::2")
        assert res["unique"] == 0 and c["drops"].get("hmac_invalid") == N and rx == 0, (res, c, rx)
    finally:
        r2.ctl("sysctl", "-w", "net.ipv6.conf.r2-r1.seg6_require_hmac=0")


def test_fast_path_off_uses_the_af_xdp_tier_alone(sr6_bin, tmp_path_factory):
    net = Net(sr6_bin, tmp_path_factory.mktemp("xdp-off"), tag="x2")
    try:
        ns, r2 = build(net, gro=True, extra=["--fast-path", "off"])
        st = r2.ctl_json("show", "status")
        assert "xdp tier" not in st["backend"] and st["tiers"]["r2-r1"].startswith("af_xdp:"), st
        warm(net, ns)
        r2.ctl("clear-counters")
        res = net.udp(ns["h1"], ns["h2"], "fc00:b::2", N, RATE)
        assert res["unique"] == N, res
        assert r2.sid("fc00:2::e/128")["packets"] == N
        assert xdp_counts(r2, "r2-r1") == (0, 0)
    finally:
        net.close()


def test_a_peer_without_napi_is_sent_to_by_the_general_path(sr6_bin, tmp_path_factory):
    net = Net(sr6_bin, tmp_path_factory.mktemp("xdp-nogro"), tag="x3")
    try:
        ns, r2 = build(net, gro=False, extra=[])
        st = r2.ctl_json("show", "status")
        t = st["tiers"]["r2-r3"]
        assert "receives into the XDP tier" in t and "sends from the AF_XDP tier only" in t and "gro on" in t, t
        warm(net, ns)
        r2.ctl("clear-counters")
        res = net.udp(ns["h1"], ns["h2"], "fc00:b::2", N, RATE)
        assert res["unique"] == N and res["dups"] == 0, res
        assert r2.sid("fc00:2::e/128")["packets"] == N
        assert xdp_counts(r2, "r2-r3")[1] == 0
    finally:
        net.close()
