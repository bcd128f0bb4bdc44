"""End.BPF's events (bpf_perf_event_output) against the kernel's: one object, two readers.

crates/bpf/tests/progs/events.c emits, per packet, the packet's fields after the segment
was consumed (`fields`), the same with the packet's first 64 bytes and then the whole
packet appended through the flags' upper 32 bits (`with_packet`), and the helper's
run-time errors (`errors`). The configuration, with its End.BPF line, goes to a kernel
router namespace (iproute2 loads the object) where `bpftool map event_pipe` reads the
perf event array while the frames go through, and to `sr6 pcap` (its `--json` report
has each perf event array's `events`, as `bpftool -j map event_pipe` prints them). The
packets out must be the same bytes (Run.assert_identical), and so must the events:

* each event's data, byte for byte, but for the CPU the program read with
  bpf_get_smp_processor_id (the kernel's CPU against sr6's worker 0), which must be the
  event's own CPU and slot on both sides;
* the kernel pads a record so that its size + 4 is a multiple of 8 (perf_prepare_sample)
  and bpftool prints the padding; sr6 keeps the program's bytes: the kernel's size must
  be sr6's rounded up that way, and its first bytes sr6's.

The events are compared as a multiset: the kernel's come from one ring per CPU, which
bpftool reads in turn.
"""
from __future__ import annotations

import json
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from kcommon import *  # noqa: F403
from kcommon import FINAL, SEG_C, SID, HOST_A, rx, sr_pkt
from test_k_end_bpf import bpf_config, objs  # noqa: F401  (the compiled programs, a fixture)

import sr6test as T

# How long bpftool gets to open its rings before the first frame, and to read the last.
SETTLE_S = 1.0


def need_bpftool() -> None:
    if not shutil.which("bpftool"):
        pytest.fail("bpftool not found: run scripts/setup.sh", pytrace=False)


def event_pipe(prog_name: str, plain: bool = False):
    """A watch for Harness.run: `bpftool [-j] map event_pipe` on the perf event array
    `events` of the newest program named `prog_name`, started before the frames and
    stopped (SIGINT, as an operator would) after them; returns its records (JSON) or
    its text."""
    def start(ns: str):
        def tool(*args):
            out = subprocess.run(["ip", "netns", "exec", ns, "bpftool", "-j", *args], check=True,
                                 capture_output=True, text=True).stdout
            return json.loads(out)
        progs = [p for p in tool("prog", "show") if p.get("name") == prog_name]
        assert progs, f"no program {prog_name} loaded in the kernel"
        newest = max(progs, key=lambda p: p["id"])
        mid = next(m for m in newest.get("map_ids", []) if tool("map", "show", "id", str(m))["name"] == "events")
        argv = ["ip", "netns", "exec", ns, "bpftool", *([] if plain else ["-j"]), "map", "event_pipe", "id", str(mid)]
        p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(SETTLE_S)

        def stop():
            time.sleep(SETTLE_S)
            p.send_signal(signal.SIGINT)
            out, err = p.communicate(timeout=20)
            assert p.returncode == 0, f"bpftool map event_pipe: {err}"
            return out if plain else json.loads(out)
        return stop
    return start


def sr6_events(run) -> list[dict]:
    """The events of sr6's run (`sr6 pcap --json`: `bpf`, the map `events`)."""
    out = []
    for rep in run.sr6_reports.values():
        for p in rep["bpf"]:
            for m in p["maps"]:
                if m["name"] == "events":
                    assert m["type"] == "perf_event_array" and m["lost"] == 0, m
                    out += m["events"]
    return out


def padded(n: int) -> int:
    """The size the kernel gives n bytes of raw data: n + 4 rounded up to 8, less 4."""
    return (n + 4 + 7) // 8 * 8 - 4


def samples(records: list[dict]) -> list[dict]:
    assert all(r["type"] == 9 for r in records), f"records other than samples: {records}"
    return records


def masked(ev: dict, cpu_at) -> bytes:
    """An event's data with the CPU the program read (at `cpu_at`, or where
    `cpu_at(data)` says; None: nowhere) checked against the event's CPU and slot, then
    zeroed."""
    data = bytes(ev["data"])
    assert ev["cpu"] == ev["index"], ev
    if callable(cpu_at):
        cpu_at = cpu_at(data)
    if cpu_at is not None and len(data) >= cpu_at + 4:
        assert int.from_bytes(data[cpu_at:cpu_at + 4], "little") == ev["cpu"], ev
        data = data[:cpu_at] + bytes(4) + data[cpu_at + 4:]
    return data


def compare(kernel: list[dict], ours: list[dict], cpu_at=24) -> None:
    """The kernel's events equal sr6's, byte for byte up to the kernel's padding."""
    theirs = [masked(e, cpu_at) for e in samples(kernel)]
    mine = [masked(e, cpu_at) for e in samples(ours)]
    assert all(e["cpu"] == 0 for e in ours), "sr6 pcap runs one worker: CPU 0"
    assert len(theirs) == len(mine), f"kernel {len(theirs)} events, sr6 {len(mine)}"
    for k in theirs:
        same = [m for m in mine if len(k) == padded(len(m)) and k[:len(m)] == m]
        assert same, f"kernel event {k.hex()} has no equal in sr6's: {[m.hex() for m in mine]}"
        mine.remove(same[0])


def frames():
    """2- and 4-segment SRHs, two Tags and hop limits: every event distinct."""
    return [rx(sr_pkt(SID, [FINAL, SID], 1, tag=0x1234, hlim=64)),
            rx(sr_pkt(SID, [FINAL, SEG_C, SID, HOST_A], 2, tag=0xbeef, hlim=9, tc=0x10, fl=0x54321)),
            rx(sr_pkt(SID, [FINAL, SID], 1, tag=7, hlim=33))]


@scenario(IDENTICAL)  # noqa: F405
def test_bpf_events_fields(kernel, objs):  # noqa: F811
    """End.BPF events: the packet's fields after End (destination, length, Tag, Segments Left, hop limit, CPU), BPF_F_CURRENT_CPU"""
    need_bpftool()
    run = kernel.run(bpf_config(objs, "events", "fields"), frames(), watch=event_pipe("do_fields"))
    run.assert_identical()
    theirs, ours = run.kernel_probe, sr6_events(run)
    assert len(ours) == 3 and all(len(e["data"]) == 28 for e in ours)
    compare(theirs, ours)
    # The timestamps are the packets' (frame i: i s).
    assert [e["timestamp"] for e in ours] == [0, 1_000_000_000, 2_000_000_000]


@scenario(IDENTICAL)  # noqa: F405
def test_bpf_events_with_packet_bytes(kernel, objs):  # noqa: F811
    """End.BPF events: 64 packet bytes appended (flags' upper 32 bits), then the whole packet with no bytes of the program's"""
    need_bpftool()
    run = kernel.run(bpf_config(objs, "events", "with_packet"), frames(), watch=event_pipe("do_with_packet"))
    run.assert_identical()
    theirs, ours = run.kernel_probe, sr6_events(run)
    assert len(ours) == 6
    for e in ours:
        d = bytes(e["data"])
        if len(d) != 28 + 64:
            assert len(d) == 40 + int.from_bytes(d[4:6], "big"), "the whole packet"
    # `struct fields` first, or the packet alone (an IPv6 header: no CPU in it).
    compare(theirs, ours, cpu_at=lambda d: None if d[0] >> 4 == 6 else 24)


@scenario(IDENTICAL)  # noqa: F405
def test_bpf_events_errors(kernel, objs):  # noqa: F811
    """End.BPF events: the helper's run-time errors (bad flags -EINVAL, too many packet bytes -EFAULT, a slot past max_entries -E2BIG)"""
    need_bpftool()
    run = kernel.run(bpf_config(objs, "events", "errors"), frames(), watch=event_pipe("do_errors"))
    run.assert_identical()
    theirs, ours = run.kernel_probe, sr6_events(run)
    for e in ours:
        vals = [int.from_bytes(bytes(e["data"][i:i + 4]), "little", signed=True) for i in range(0, 20, 4)]
        assert vals[:4] == [-22, -14, -7, 0], vals
    compare(theirs, ours, cpu_at=None)


def bpftool_text(out: str) -> list[str]:
    """`bpftool map event_pipe`'s text with the time, CPU and slot of each header
    replaced (they are the reader's clock and the kernel's CPU)."""
    lines = []
    for ln in out.splitlines():
        m = re.fullmatch(r"== @\d+\.\d+ CPU: (\d+) index: (\d+) =====", ln)
        if m:
            assert m.group(1) == m.group(2), ln
            ln = "== @T CPU: C index: C ====="
        lines.append(ln)
    return lines


@scenario(IDENTICAL)  # noqa: F405
def test_bpf_events_text_as_bpftool_prints_it(kernel, objs, sr6_bin, tmp_path):  # noqa: F811
    """End.BPF events as text: `sr6 pcap`'s equal `bpftool map event_pipe`'s (16 bytes a line, a gap after 8)"""
    need_bpftool()
    conf_text = bpf_config(objs, "events", "errors")
    fr = frames()[:1]
    run = kernel.run(conf_text, fr, watch=event_pipe("do_errors", plain=True))
    run.assert_identical()
    theirs = bpftool_text(run.kernel_probe)
    conf, pcap = tmp_path / "sr6.conf", tmp_path / "in.pcap"
    conf.write_text(conf_text)
    T.write_pcap(pcap, [bytes(f[1] if isinstance(f, tuple) else f) for f in fr], times=[0])
    p = subprocess.run([str(sr6_bin), "pcap", "--config", str(conf), "--in", str(pcap), "--in-dev", "eth0",
                        "--out-dir", str(tmp_path / "out")], capture_output=True, text=True, timeout=120, check=True)
    text = p.stdout.split("eBPF events:\n", 1)[1].splitlines()
    assert text[0].startswith("map ") and text[0].endswith(": 1 event(s), 0 lost"), text
    ours = bpftool_text("\n".join(text[1:]))
    # The kernel's event has 20 bytes, no padding: the same two lines.
    assert theirs == ours, f"kernel:\n{theirs}\nsr6:\n{ours}"
