"""Route churn while forwarding (issue 25): `sr6 run` forwards UDP a -> sr6 -> b to a
destination its configuration covers throughout (fc00:bb::/48 via b), while `sr6 ctl
batch` adds and withdraws thousands of other routes — more specifics beside the
destination under the same /48 and prefixes elsewhere, all pointing back towards a, so
that a change applied to the wrong prefix sends the traffic the wrong way, multipath
routes, End SIDs and head-end policies (which change in place too,
tables/sid_update.rs, tables/policy_update.rs, with `ip sr tunsrc` set). No datagram
may be lost, every batch must be applied in place (tables/update.rs, live/in_place.rs:
no build per change), and the routes must be what the last batch left. The rate reached
is printed, not asserted (a wall-clock figure; docs/performance.md has the measured one).

Topology: a (fc00:a::2) -- a-r | r-a  r (sr6)  r-b | b-r -- b (fc00:b::2, fc00:bb::2)."""
from __future__ import annotations

import os
import subprocess
import time

import pytest

from livenet import Net
from topologies import build_arb

R_CONF = """
ip -6 addr add fc00:a::1/64 dev r-a
ip -6 addr add fc00:b::1/64 dev r-b
ip -6 route add fc00:bb::/48 via fc00:b::2 dev r-b
ip sr tunsrc set fc00:a::1
"""
BATCHES = 40
PER_BATCH = 500  # routes added by one batch and withdrawn by the next
# The traffic: RATE datagrams a second (environment RATE, default 2,000), for about
# four seconds, which the churn takes at this machine's pace.
RATE = int(os.environ.get("RATE", "2000"))
COUNT = 4 * RATE


def batch_lines(i: int) -> str:
    """Batch i: adds 500 routes (even i) or withdraws the 500 the previous batch added."""
    k = i // 2
    lines = []
    for j in range(PER_BATCH):
        n = k * PER_BATCH + j
        # Beside the destination (fc00:bb:0::/64 holds it; these are fc00:bb:N::/64, N > 0),
        # elsewhere (fc00:cc::/32, half of them multipath), an eighth End SIDs
        # (fc00:dd::/64) and an eighth policies (fc00:ee::/32, towards a).
        if j % 2 == 0:
            p, how = f"fc00:bb:{1 + n % 0xfffe:x}::/64", "via fc00:a::2 dev r-a"
        elif j % 8 == 1:
            p, how = f"fc00:cc:{n // 0x10000:x}:{n % 0x10000:x}::/64", "via fc00:a::2 dev r-a"
        elif j % 8 == 5:  # multipath, a gateway without its device
            p, how = f"fc00:cc:{n // 0x10000:x}:{n % 0x10000:x}::/64", \
                "nexthop via fc00:a::2 dev r-a nexthop via fc00:a::3 weight 2"
        elif j % 8 == 3:
            p, how = f"fc00:dd::{n:x}/128", "encap seg6local action End dev r-a"
        else:
            p, how = f"fc00:ee:{n // 0x10000:x}:{n % 0x10000:x}::/64", \
                f"encap seg6 mode encap segs fc00:a::{2 + n % 2:x},fc00:a::9 dev r-a"
        lines.append(f"route add {p} {how}" if i % 2 == 0 else f"route del {p}")
    return "\n".join(lines) + "\n"


@pytest.fixture
def net(sr6_bin, tmp_path):
    n = Net(sr6_bin, tmp_path, tag="churn")
    try:
        a, r, b = build_arb(n, b_extra="ip -6 addr add fc00:bb::2/64 dev b-r")
        sr6 = n.sr6(r, R_CONF)
        assert n.ping(a, "fc00:bb::2"), "no connectivity through sr6:\n" + sr6.log_text()
        yield n, a, r, b, sr6
    finally:
        n.close()


def test_route_churn_loses_nothing(net):
    n, a, _, b, sr6 = net
    answers: list[str] = []
    took: list[float] = []

    def churn(tx: subprocess.Popen) -> None:
        time.sleep(0.5)
        for i in range(BATCHES):
            t0 = time.monotonic()
            r = subprocess.run([str(n.sr6_bin), "ctl", "--socket", str(sr6.sock), "batch", "-"],
                               input=batch_lines(i), capture_output=True, text=True, timeout=60)
            took.append(time.monotonic() - t0)
            assert r.returncode == 0, f"batch {i}: {r.stderr}\n{sr6.log_text()}"
            answers.append(r.stdout.strip())
        assert tx.poll() is None, "the traffic ended before the churn: make COUNT larger"

    res = n.udp(a, b, "fc00:bb::2", COUNT, rate=RATE, during=churn)
    changes = BATCHES * PER_BATCH
    print(f"{changes} route changes in {sum(took):.2f} s of batches ({changes / sum(took):,.0f} a second), "
          f"{res['unique']}/{res['sent']} datagrams")
    assert res["sent"] == COUNT
    assert res["unique"] == COUNT, f"lost {COUNT - res['unique']} datagrams (first {res['missing_first']}):\n" \
                                   + sr6.log_text()
    assert all(f"{PER_BATCH} line(s) applied" in x for x in answers), answers[:3]
    assert all("in place" in x for x in answers), answers
    # An even number of batches: every route added was withdrawn; the configuration's
    # route is all that is left.
    routes = sr6.ctl("show", "routes")
    assert "fc00:bb::/48" in routes and "fc00:cc:" not in routes and "fc00:bb:1::" not in routes, routes
    assert "fc00:dd:" not in routes and "fc00:dd:" not in sr6.ctl("show", "sids"), routes
    assert "fc00:ee:" not in routes, routes
