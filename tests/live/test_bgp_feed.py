"""A BGP feed into an sr6 router (issue 31, docs/frr.md "A BGP feed"): FRR's bgpd and
zebra run in r's namespace beside `sr6 run --mirror-kernel-routes`; a BGP speaker in b
(bgp_speaker.py, eBGP, AS 65002 to r's 65001) announces FEED prefixes (default 20,000;
FEED=200000 for a full feed), half IPv4 /24s and half IPv6 /48s, IPv4 first, the last
one fc00:77::/48, whose address fc00:77::7 is on b's loopback. bgpd takes them, zebra
installs them in r's kernel, sr6 mirrors them. sr6 must forward the last one, hold every
IPv4 one, and lose none of the UDP datagrams a -> b (RATE a second, default 5,000) that
a route already there carries meanwhile. The times are printed, not asserted (a
wall-clock figure; docs/frr.md has the measured ones): from the first UPDATE sent to
the last route in r's kernel, and to the last route forwarded by sr6.

Topology: a (fc00:a::2) -- a-r | r-a  r (sr6, zebra, bgpd)  r-b | b-r -- b (fc00:b::2,
192.0.2.2; the speaker). Needs FRR (zebra, bgpd, vtysh: scripts/setup.sh installs
Debian's frr); skipped without it."""
from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from frrd import Frr, installed
from livenet import Net, sh
from topologies import build_arb

SPEAKER = Path(__file__).with_name("bgp_speaker.py")

R_CONF = """
ip -6 addr add fc00:a::1/64 dev r-a
ip -6 addr add fc00:b::1/64 dev r-b
ip addr add 192.0.2.1/24 dev r-b
"""

ZEBRA_CONF = "hostname r\n"

BGPD_CONF = """hostname r
router bgp 65001
 bgp router-id 192.0.2.1
 no bgp ebgp-requires-policy
 neighbor 192.0.2.2 remote-as 65002
 address-family ipv6 unicast
  neighbor 192.0.2.2 activate
 exit-address-family
"""

pytestmark = pytest.mark.skipif(not installed("zebra", "bgpd"),
                                reason="FRR is not installed (scripts/setup.sh installs it)")


def reaches(n: Net, ns: str, dst: str, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while not n.ping(ns, dst, count=1):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


@pytest.fixture
def net(sr6_bin, tmp_path):
    n = Net(sr6_bin, tmp_path, tag="bgp")
    frr = None
    try:
        a, r, b = build_arb(n, "ip -6 addr add fc00:77::7/128 dev lo\nip addr add 192.0.2.2/24 dev b-r")
        sr6 = n.sr6(r, R_CONF, extra=["--mirror-kernel-routes"])
        assert n.ping(a, "fc00:b::2"), "no connectivity through sr6:\n" + sr6.log_text()
        frr = Frr(r, {"zebra": ZEBRA_CONF, "bgpd": BGPD_CONF})
        frr.start("zebra")
        frr.start("bgpd")
        yield n, a, r, b, sr6, frr
    finally:
        if frr is not None:
            frr.close()
        n.close()


def test_a_bgp_feed_is_forwarded(net, tmp_path):
    n, a, r, b, sr6, frr = net
    count = int(os.environ.get("FEED", "20000"))
    rate = int(os.environ.get("RATE", "5000"))
    v4, v6 = count // 2, count - count // 2
    prefixes = tmp_path / "feed"
    prefixes.write_text("".join(f"{10 + (i >> 16)}.{i >> 8 & 0xff}.{i & 0xff}.0/24\n" for i in range(v4))
                        + "".join(f"2a00:{i >> 16:x}:{i & 0xffff:x}::/48\n" for i in range(v6 - 1))
                        + "fc00:77::/48\n")
    speaker = subprocess.Popen(["ip", "netns", "exec", b, sys.executable, str(SPEAKER), "192.0.2.1", "65002", "65001",
                                "192.0.2.2", "192.0.2.2", "fc00:b::2", str(prefixes)],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = speaker.stdout.readline()
        assert line.startswith("established"), \
            f"no BGP session: {line}{speaker.stderr.read() if speaker.poll() is not None else ''}\n{frr.log('bgpd')}"
        # Traffic for the feed and a margin either side (about 2 s of BGP and zebra for
        # 20,000 routes; scaled).
        datagrams = int(rate * (4 + count * 20 / 200_000))
        times: dict[str, float] = {}

        def in_kernel() -> None:
            while sh(["ip", "-n", r, "-6", "route", "show", "fc00:77::/48"]).strip() == "":
                if time.monotonic() - times["t0"] > 300:
                    return
                time.sleep(0.02)
            times["kernel"] = time.monotonic() - times["t0"]

        def feed(tx: subprocess.Popen) -> None:
            time.sleep(0.5)
            speaker.stdin.write("go\n")
            speaker.stdin.flush()
            sent = speaker.stdout.readline().split()
            assert sent and sent[0] == "sent", f"the speaker did not send: {sent} {speaker.stderr.read()}"
            times["t0"], times["sent"] = float(sent[1]), float(sent[2]) - float(sent[1])
            k = threading.Thread(target=in_kernel)
            k.start()
            assert reaches(n, a, "fc00:77::7", timeout=300), "the feed's last route is not forwarded:\n" \
                + sr6.log_text()[-3000:] + frr.log("zebra")[-2000:]
            times["forwarded"] = time.monotonic() - times["t0"]
            k.join()
            assert tx.poll() is None, "the traffic ended before the feed was forwarded: raise the count"

        res = n.udp(a, b, "fc00:b::2", datagrams, rate=rate, during=feed)
        mirrored4 = sum(1 for x in sr6.ctl("show", "routes").splitlines()
                        if x.startswith("ip route add ") and " proto bgp" in x)
        print(f"{v4} IPv4 + {v6} IPv6 routes over BGP: sent in {times['sent']:.3f} s, the last in r's kernel after "
              f"{times.get('kernel', float('nan')):.2f} s, forwarded by sr6 after {times['forwarded']:.2f} s; "
              f"UDP a -> b meanwhile at {rate}/s: {res['unique']}/{res['sent']} datagrams")
        assert res["sent"] == datagrams
        assert res["unique"] == datagrams, f"lost {datagrams - res['unique']} datagrams during the feed " \
                                           f"(first {res['missing_first']}):\n{sr6.log_text()[-3000:]}"
        assert mirrored4 == v4, f"{mirrored4} of the {v4} IPv4 routes mirrored"
    finally:
        if speaker.poll() is None:
            speaker.stdin.close()
            speaker.terminate()
            speaker.wait(10)
