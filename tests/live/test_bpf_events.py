"""`sr6 ctl bpf events` against a running `sr6 run` (docs/bpf.md, "Events"): an End.BPF
program emits an event per packet (crates/bpf/tests/progs/events.c, `fields`), and the
client streams them as `bpftool map event_pipe` prints them, stopping after `--count`
events or `--timeout` seconds.

Topology: a (fc00:a::2, a kernel host encapsulating towards fc00:b::/64 with the SRH
[fc00:f::1, fc00:b::2]) -- r (sr6; End.BPF at fc00:f::1) -- b (fc00:b::2). The events'
bytes against the kernel's are tests/kernel/test_k_bpf_events.py's business; here the
stream itself: what the client prints, when it stops, what it refuses."""
from __future__ import annotations

import ipaddress
import json
import os
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from livenet import Net

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def net(sr6_bin, tmp_path_factory):
    clang = shutil.which("clang")
    if not clang:
        pytest.fail("clang not found: run scripts/setup.sh (clang, libbpf-dev)", pytrace=False)
    d = tmp_path_factory.mktemp("bpfev")
    obj = d / "events.o"
    inc = [f"-I{i}" for i in ("/usr/include/x86_64-linux-gnu", "/usr/include/aarch64-linux-gnu") if os.path.isdir(i)]
    subprocess.run([clang, "-O2", "-g", "-target", "bpf", *inc, "-c", str(ROOT / "crates/bpf/tests/progs/events.c"),
                    "-o", str(obj)], check=True)
    n = Net(sr6_bin, d, tag="e")
    try:
        a, r, b = n.ns("a"), n.ns("r"), n.ns("b")
        n.link(a, "a-r", r, "r-a")
        n.link(r, "r-b", b, "b-r")
        n.kernel(a, "ip -6 addr add fc00:a::2/64 dev a-r\nip -6 route add default via fc00:a::1 dev a-r\n"
                    "ip -6 route add fc00:b::/64 encap seg6 mode encap segs fc00:f::1,fc00:b::2 via fc00:a::1 dev a-r",
                 forwarding=False)
        n.kernel(b, "ip -6 addr add fc00:b::2/64 dev b-r\nip -6 route add default via fc00:b::1 dev b-r",
                 forwarding=False)
        sr6 = n.sr6(r, "ip -6 addr add fc00:a::1/64 dev r-a\nip -6 addr add fc00:b::1/64 dev r-b\n"
                       f"ip -6 route add fc00:f::1/128 encap seg6local action End.BPF endpoint obj {obj} sec fields "
                       "dev r-a\n")
        yield n, a, sr6
    finally:
        n.close()


def events(sr6, *args: str) -> subprocess.Popen:
    return subprocess.Popen([str(sr6.net.sr6_bin), "ctl", "--socket", str(sr6.sock), "bpf", "events", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def drain(sr6) -> None:
    """Empties the ring (events of an earlier test)."""
    p = events(sr6, "name", "events", "--timeout", "0.3")
    p.communicate(timeout=30)


def test_events_stream_until_count(net):
    n, a, sr6 = net
    drain(sr6)
    p = events(sr6, "name", "events", "--count", "3", "--timeout", "30", "--json")
    n.ping(a, "fc00:b::5", count=3)  # no answer: the packets end at b, which has no such address
    out, err = p.communicate(timeout=60)
    assert p.returncode == 0, err
    recs = [json.loads(ln) for ln in out.splitlines()]
    assert len(recs) == 3, out
    workers = sr6.ctl_json("show", "status")["workers"]
    for r in recs:
        assert set(r) == {"timestamp", "type", "cpu", "index", "data"} and r["type"] == 9, r
        assert r["cpu"] == r["index"] and r["cpu"] < workers, r
        data = bytes(r["data"])
        assert data[:16] == ipaddress.IPv6Address("fc00:b::2").packed, "the destination after End"
        assert data[22] == 0 and data[23] == 64, "Segments Left 0, hop limit 64 (before forwarding)"
        assert int.from_bytes(data[24:28], "little") == r["cpu"], "bpf_get_smp_processor_id is the event's CPU"
    assert [r["timestamp"] for r in recs] == sorted(r["timestamp"] for r in recs)


def test_events_as_text_and_timeout(net):
    n, a, sr6 = net
    drain(sr6)
    p = events(sr6, "id", "1", "--count", "1", "--timeout", "30")
    n.ping(a, "fc00:b::6", count=1)
    out, err = p.communicate(timeout=60)
    assert p.returncode == 0, err
    lines = out.splitlines()
    assert re.fullmatch(r"== @\d+\.\d+ CPU: (\d+) index: \1 =====", lines[0]), out
    assert lines[1] == "fc 00 00 0b 00 00 00 00  00 00 00 00 00 00 00 02", out
    # skb->len (little-endian, under 256), Tag 0, Segments Left 0, hop limit 64, the CPU.
    assert len(lines) == 3 and re.fullmatch(r"[0-9a-f]{2} 00 00 00 00 00 00 40  0[0-9] 00 00 00", lines[2]), out
    # No traffic: the timeout ends the stream, nothing printed.
    p = events(sr6, "name", "events", "--timeout", "0.5")
    out, err = p.communicate(timeout=30)
    assert (p.returncode, out) == (0, ""), err


def test_events_until_interrupted(net):
    n, a, sr6 = net
    drain(sr6)
    p = events(sr6, "--json")  # no map named: the only perf event array
    n.ping(a, "fc00:b::7", count=2)
    time.sleep(0.5)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=30)
    assert p.returncode == 0, err
    assert len(out.splitlines()) == 2 and all(json.loads(ln)["type"] == 9 for ln in out.splitlines()), out


def test_events_refusals(net):
    _, _, sr6 = net
    for args, why in ((["id", "9"], "no map with id 9"), (["name", "nope"], "no map named `nope`"),
                      (["--count", "x", "id", "1"], "--count `x`"), (["id"], "usage: bpf events")):
        p = events(sr6, *args, "--timeout", "1")
        out, err = p.communicate(timeout=30)
        assert p.returncode == 1 and why in err, (args, out, err)
