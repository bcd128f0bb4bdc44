"""sr6 run interoperating with Linux kernel SRv6 routers, with real traffic end to end.

On the sr6 nodes the kernel has the device addresses (for neighbour discovery and ARP)
but IPv6 and IPv4 forwarding are off: every packet that crosses an sr6 node was
forwarded by sr6. Counters read with `sr6 ctl show sids --json` must equal the packets
sent; the kernel's own counters (`count` on its seg6local routes) say which path
packets took.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import threading
import time
from pathlib import Path

import pytest

from livenet import Net, sh
from topologies import build_t1, build_t2

N = 400          # packets per flow
RATE = 2000      # packets per second

BACKENDS = ["af_xdp", "af_packet"]


def sysctl(ns: str, key: str) -> str:
    return sh(["ip", "netns", "exec", ns, "sysctl", "-n", key]).strip()


def kernel_sid_packets(ns: str, sid: str) -> int:
    """Packets a kernel seg6local route with `count` processed (`ip -s -6 route`)."""
    out = sh(["ip", "-n", ns, "-s", "-6", "route", "show", sid])
    m = re.search(r"packets (\d+)", out)
    assert m, f"no counter on the kernel's {sid} route: {out!r}"
    return int(m.group(1))


def drops(sr6, reason: str) -> int:
    return sr6.ctl_json("show", "counters")["drops"].get(reason, 0)


# ---- T1: kernel H.Encaps -> sr6 End -> kernel End.DT6 ---------------------------------------

@pytest.fixture(scope="module", params=BACKENDS)
def t1(request, sr6_bin, tmp_path_factory):
    net = Net(sr6_bin, tmp_path_factory.mktemp(f"t1-{request.param}"), tag=f"1{request.param[3]}")
    try:
        ns, r2 = build_t1(net, request.param)
        status = r2.ctl_json("show", "status")
        assert status["backend"].startswith(request.param), status
        yield net, ns, r2
    finally:
        net.close()


def test_t1_sr6_node_kernel_does_not_forward(t1):
    net, ns, r2 = t1
    assert sysctl(ns["r2"], "net.ipv6.conf.all.forwarding") == "0"
    assert sysctl(ns["r2"], "net.ipv4.ip_forward") == "0"


def test_t1_kernel_encaps_sr6_end_kernel_dt6(t1):
    net, ns, r2 = t1
    r2.ctl("clear-counters")
    res = net.udp(ns["h1"], ns["h2"], "fc00:b::2", N, RATE)
    assert res["unique"] == N and res["dups"] == 0, res
    s = r2.sid("fc00:2::e/128")
    assert (s["packets"], s["errors"]) == (N, 0), s
    # IPv6 (40) + SRH with 2 SIDs (40) + inner IPv6 (40) + UDP (8) + 64-byte payload.
    assert s["bytes"] == N * (40 + 40 + 40 + 8 + 64), s


@pytest.mark.skipif(shutil.which("ping") is None, reason="ping (iputils-ping) not installed")
def test_t1_ping_through_sr6_both_ways(t1):
    # h1 -> h2: encapsulated by r1, End at sr6; h2 -> h1: plain IPv6 forwarding by sr6.
    net, ns, r2 = t1
    assert net.ping(ns["h1"], "fc00:b::2"), r2.log_text()


def test_t1_hmac_kernel_signs_sr6_verifies(t1):
    net, ns, r2 = t1
    r2.ctl("clear-counters")
    # Key 7: the same secret on both sides -> verified and forwarded.
    res = net.udp(ns["h1"], ns["h2"], "fc00:b:1::2", N, RATE)
    assert res["unique"] == N, res
    assert r2.sid("fc00:2::e7/128")["packets"] == N
    # Key 8: the kernel's secret differs from sr6's -> every packet dropped by sr6.
    res = net.udp(ns["h1"], ns["h2"], "fc00:b:2::2", 50, RATE, idle=1.0)
    assert res["unique"] == 0, res
    assert drops(r2, "hmac_invalid") == 50
    assert r2.sid("fc00:2::e7/128")["errors"] == 50


def test_t1_require_hmac_set_at_run_time(t1):
    net, ns, r2 = t1
    r2.ctl("sysctl", "-w", "net.ipv6.conf.r2-r1.seg6_require_hmac=1")
    try:
        r2.ctl("clear-counters")
        res = net.udp(ns["h1"], ns["h2"], "fc00:b::2", 50, RATE, idle=1.0)   # no HMAC: refused
        assert res["unique"] == 0, res
        assert drops(r2, "hmac_invalid") == 50
        res = net.udp(ns["h1"], ns["h2"], "fc00:b:1::2", 50, RATE)            # HMAC: accepted
        assert res["unique"] == 50, res
    finally:
        r2.ctl("sysctl", "-w", "net.ipv6.conf.r2-r1.seg6_require_hmac=0")
    res = net.udp(ns["h1"], ns["h2"], "fc00:b::2", 50, RATE)
    assert res["unique"] == 50, res


def test_t1_counters_match_and_clear(t1):
    net, ns, r2 = t1
    r2.ctl("clear-counters")
    assert r2.sid("fc00:2::e/128")["packets"] == 0
    net.udp(ns["h1"], ns["h2"], "fc00:b::2", 123, RATE)
    c = r2.ctl_json("show", "counters")
    assert r2.sid("fc00:2::e/128")["packets"] == 123
    assert c["devices"]["r2-r3"]["tx"] >= 123, c
    text = r2.ctl("show", "sids")
    assert "fc00:2::e/128" in text and "End" in text


# ---- T2: sr6 H.Encaps/H.Insert -> kernel End -> sr6 End.DT6/DX6/DX4 -------------------------

@pytest.fixture(scope="module")
def t2(sr6_bin, tmp_path_factory):
    net = Net(sr6_bin, tmp_path_factory.mktemp("t2"), tag="2")
    try:
        ns, s1, s3 = build_t2(net, "auto")
        yield net, ns, s1, s3
    finally:
        net.close()


@pytest.mark.parametrize("dst,sid", [
    ("fc00:b::2", "fc00:3::d6/128"),   # H.Encaps -> End (kernel) -> End.DT6
    ("fc00:d::2", "fc00:3::a6/128"),   # H.Encaps -> End (kernel) -> End.DX6
    ("10.2.0.2", "fc00:3::a4/128"),    # H.Encaps of IPv4 -> End (kernel) -> End.DX4
])
def test_t2_sr6_ingress_kernel_end_sr6_egress(t2, dst, sid):
    net, ns, s1, s3 = t2
    s3.ctl("clear-counters")
    k_before = kernel_sid_packets(ns["k2"], "fc00:2::e")
    res = net.udp(ns["h1"], ns["h2"], dst, N, RATE)
    assert res["unique"] == N and res["dups"] == 0, res
    # The kernel verified sr6's HMAC (require_hmac=1 on k2-s1) and ran End on every packet.
    assert kernel_sid_packets(ns["k2"], "fc00:2::e") - k_before == N
    s = s3.sid(sid)
    assert (s["packets"], s["errors"]) == (N, 0), s


def test_t2_sr6_insert_kernel_end(t2):
    # H.Insert (inline) at sr6 -> End at the kernel -> plain forwarding by sr6 -> h2
    # (which accepts the SRH with Segments Left 0).
    net, ns, s1, s3 = t2
    k_before = kernel_sid_packets(ns["k2"], "fc00:2::e")
    res = net.udp(ns["h1"], ns["h2"], "fc00:c::2", N, RATE)
    assert res["unique"] == N, res
    assert kernel_sid_packets(ns["k2"], "fc00:2::e") - k_before == N


def test_t2_hmac_sr6_signs_kernel_rejects_a_wrong_key(t2):
    net, ns, s1, s3 = t2
    s1.ctl("ip", "sr", "hmac", "set", "7", "sha256", "not-the-kernels")
    try:
        res = net.udp(ns["h1"], ns["h2"], "fc00:b::2", 50, RATE, idle=1.0)
        assert res["unique"] == 0, "the kernel must refuse an HMAC made with another secret"
    finally:
        s1.ctl("ip", "sr", "hmac", "set", "7", "sha256", "s3cret")
    res = net.udp(ns["h1"], ns["h2"], "fc00:b::2", 50, RATE)
    assert res["unique"] == 50, res


@pytest.mark.skipif(shutil.which("ping") is None, reason="ping (iputils-ping) not installed")
def test_t2_ping(t2):
    net, ns, s1, s3 = t2
    assert net.ping(ns["h1"], "fc00:b::2"), s1.log_text() + s3.log_text()
    assert net.ping(ns["h1"], "10.2.0.2"), s1.log_text() + s3.log_text()


def test_t2_route_change_during_a_stream_loses_nothing(t2):
    net, ns, s1, s3 = t2
    count, rate = 4000, 2000
    s3.ctl("clear-counters")
    k_before = kernel_sid_packets(ns["k2"], "fc00:2::e")

    def switch(sender):
        time.sleep(count / rate / 2)
        # `route add` of a more specific route for h2: straight to the egress SID,
        # skipping the kernel's End. The stream moves to it mid-flight.
        s1.ctl("route", "add", "fc00:b::2/128", "encap", "seg6", "mode", "encap", "segs", "fc00:3::d6",
               "hmac", "7", "dev", "s1-k2")

    try:
        res = net.udp(ns["h1"], ns["h2"], "fc00:b::2", count, rate, during=switch)
        routes = s1.ctl("show", "routes")
    finally:
        s1.ctl("route", "del", "fc00:b::2/128", check=False)
    assert res["unique"] == count and res["dups"] == 0, res
    via_k2 = kernel_sid_packets(ns["k2"], "fc00:2::e") - k_before
    assert 0 < via_k2 < count, f"the path changed mid-stream ({via_k2} of {count} through the kernel's End)"
    assert s3.sid("fc00:3::d6/128")["packets"] == count
    assert "fc00:b::2/128 encap seg6 mode encap segs fc00:3::d6 hmac 7 dev s1-k2" in routes, routes
    assert "fc00:b::2/128" not in s1.ctl("show", "routes")


def test_t2_route_replace_and_back(t2):
    net, ns, s1, s3 = t2
    s1.ctl("route", "replace", "fc00:b::/64", "encap", "seg6", "mode", "encap", "segs", "fc00:3::d6",
           "hmac", "7", "dev", "s1-k2")
    try:
        k_before = kernel_sid_packets(ns["k2"], "fc00:2::e")
        res = net.udp(ns["h1"], ns["h2"], "fc00:b::2", 100, RATE)
        assert res["unique"] == 100, res
        assert kernel_sid_packets(ns["k2"], "fc00:2::e") == k_before, "the replaced policy skips the kernel's End"
    finally:
        s1.ctl("route", "replace", "fc00:b::/64", "encap", "seg6", "mode", "encap", "segs",
               "fc00:2::e,fc00:3::d6", "hmac", "7", "dev", "s1-k2")


def test_t2_ctl_errors_keep_the_daemon_running(t2):
    net, ns, s1, s3 = t2
    bad = s1.ctl("route", "add", "fc00:e::/64", "via", "zz", "dev", "s1-k2", check=False)
    assert "ctl:" in bad and "zz" in bad, bad
    bad = s1.ctl("frobnicate", check=False)
    assert "unknown command" in bad
    conf = s1.conf.parent / "broken.conf"
    conf.write_text(s1.conf.read_text() + "ip -6 route add fc00:e::/64 via fc00:12::2 dev nosuchdev\n")
    bad = s1.ctl("reload", str(conf), check=False)
    assert "nosuchdev" in bad, bad
    # Still forwarding, state unchanged.
    res = net.udp(ns["h1"], ns["h2"], "fc00:b::2", 50, RATE)
    assert res["unique"] == 50, res
    assert s1.proc.poll() is None


def test_t2_reload_applies_a_new_file(t2):
    net, ns, s1, s3 = t2
    conf = s1.conf.parent / "s1-reload.conf"
    conf.write_text(s1.conf.read_text() + "ip -6 route add fc00:e::/64 via fc00:12::2 dev s1-k2\n")
    out = s1.ctl("reload", str(conf))
    assert "reloaded" in out
    assert "fc00:e::/64 via fc00:12::2 dev s1-k2" in s1.ctl("show", "routes")
    s1.ctl("reload", str(s1.conf))
    assert "fc00:e::/64" not in s1.ctl("show", "routes")



# ---- the overload guard: the threads as the kernel's scheduler sees them ------------------

R_PLAIN = """
ip -6 addr add fc00:a::1/64 dev r-h1
ip -6 addr add fc00:b::1/64 dev r-h2
"""


def sr6_threads(pid: int) -> dict[str, int]:
    """Thread name -> thread id, from /proc."""
    return {(t / "comm").read_text().strip(): int(t.name) for t in Path(f"/proc/{pid}/task").iterdir()}


@pytest.mark.parametrize("prio", [7, None])
def test_overload_priority_threads(sr6_bin, tmp_path, prio):
    """`sr6 run --overload-priority 7`: the kernel reports the watchdog thread SCHED_FIFO
    at priority 7 on the worker's CPU, and the idle worker SCHED_OTHER (the guard raises
    it only with a backlog; its decisions and the raising itself are tested against the
    kernel in crates/sr6/src/live/overload.rs). Without the option there is no
    watchdog. Either way traffic crosses and `show counters` has the guard's counts."""
    with Net(sr6_bin, tmp_path, tag=f"o{prio or 0}") as net:
        h1, r, h2 = net.ns("h1"), net.ns("r"), net.ns("h2")
        net.link(h1, "h1-r", r, "r-h1")
        net.link(r, "r-h2", h2, "h2-r")
        net.kernel(h1, "ip -6 addr add fc00:a::2/64 dev h1-r\nip -6 route add default via fc00:a::1 dev h1-r",
                   forwarding=False)
        net.kernel(h2, "ip -6 addr add fc00:b::2/64 dev h2-r\nip -6 route add default via fc00:b::1 dev h2-r",
                   forwarding=False)
        extra = ["--cpus", "1"] + (["--overload-priority", str(prio)] if prio else [])
        s = net.sr6(r, R_PLAIN, backend="af_xdp", extra=extra)
        pid = s.ctl_json("show", "status")["pid"]
        th = sr6_threads(pid)
        worker = th["sr6-worker-0"]
        assert os.sched_getscheduler(worker) == os.SCHED_OTHER
        if prio:
            dog = th.get("sr6-watchdog")
            assert dog, th
            assert os.sched_getscheduler(dog) == os.SCHED_FIFO
            assert os.sched_getparam(dog).sched_priority == prio
            assert os.sched_getaffinity(dog) == {1} == os.sched_getaffinity(worker)
        else:
            assert "sr6-watchdog" not in th, th
        res = net.udp(h1, h2, "fc00:b::2", 200, RATE)
        assert res["unique"] == 200, res
        c = s.ctl_json("show", "counters")
        assert set(c["overload"]) == {"raised", "raised_ms"}, c
        assert os.sched_getscheduler(worker) == os.SCHED_OTHER
