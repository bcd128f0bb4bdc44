"""A short real `sr6 perf run` (root): the whole path — testbed namespaces, both drivers
(the Linux kernel and sr6 run), the generator and receiver, the NDR/PDR search, the
report and the plots — on two behaviours with short trials.

The numbers are not judged (no timing in tests); the test checks that every file is
there and consistent: each forwarder and behaviour has a result, searches kept their
trials, NDR <= PDR, the rates are positive, and the plots are real PNG/SVG files.
"""
from __future__ import annotations

import csv
import json
import subprocess

import pytest


@pytest.fixture(scope="module")
def run(sr6_bin, tmp_path_factory):
    sr6 = sr6_bin
    out = tmp_path_factory.mktemp("perf")
    exp = out / "exp.yaml"
    exp.write_text("forwarders: [linux, sr6]\nbehaviors: [ipv6, End]\ntrial_duration_s: 0.2\n"
                   "repetitions: 2\nprecision: 0.1\nlatency_fraction: 0.5\n")
    p = subprocess.run([str(sr6), "perf", "run", str(exp), "--out", str(out / "res")],
                       capture_output=True, text=True, timeout=900)
    assert p.returncode == 0, p.stderr[-4000:]
    return out / "res", p


def test_every_file_is_written(run):
    res, _ = run
    for name in ["results.json", "results.csv", "trials.csv", "report.md", "meta.json",
                 "pdr-boxplot.png", "pdr-boxplot.svg", "sweep-ipv6.png", "sweep-End.svg"]:
        assert (res / name).is_file() and (res / name).stat().st_size > 0, name
    assert (res / "pdr-boxplot.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert b"<svg" in (res / "sweep-End.svg").read_bytes()[:500]


def test_results_are_consistent(run):
    res, _ = run
    results = json.loads((res / "results.json").read_text())
    got = {(r["forwarder"], r["behavior"]) for r in results}
    assert got == {("linux", "ipv6"), ("linux", "End"), ("sr6", "ipv6"), ("sr6", "End")}
    for r in results:
        assert r["pdr_loss_threshold"] == 0.005
        assert len(r["repetitions"]) == 2
        for rep in r["repetitions"]:
            assert rep["trials"], "a search keeps its trials"
            assert 0 < rep["ndr_pps"] <= rep["pdr_pps"] * 1.0000001
            for t in rep["trials"]:
                assert t["received"] <= t["sent"] + 0, t
        assert r["ndr"]["n"] == 2 and r["ndr"]["mean"] > 0
        assert r["frame_bytes"] == (78 if r["behavior"] == "ipv6" else 158)
        # One trial at the search's highest rate after each repetition (the forwarding
        # rate at maximum offered load): the summaries are those of its trials, and no
        # more can come back than was sent (a little slack for the counters' timing).
        m = r["max_load"]
        assert len(m["trials"]) == 2 and m["offered"]["n"] == 2 and 0 <= m["saturated"] <= 2
        sent = [t["sent"] / t["duration_s"] for t in m["trials"]]
        assert abs(m["offered"]["mean"] - sum(sent) / 2) <= 1e-6 * max(sent)
        assert 0 < m["forwarded"]["mean"] <= m["offered"]["mean"] * 1.001
        # Saturated: lost more than the PDR threshold, at most a tenth at the tester.
        assert m["saturated"] == sum(
            1 for t in m["trials"]
            if t["sent"] > 0 and (t["sent"] - t["received"]) > 0.005 * t["sent"]
            and 10 * t["tester_rx_dropped"] <= t["sent"] - t["received"])
        # The SUT's CPU was busy during each max-load trial, at most for its length
        # (a little slack: /proc/stat is read around the trial, in 10 ms ticks).
        for t in m["trials"]:
            assert 0 < t["sut_cpu_s"] <= t["duration_s"] + 0.3, t
            # What the host took from each CPU, from /proc/stat's steal (0 on bare
            # metal): never more than the trial lasted, and written for every trial.
            for k in ["sut_steal_s", "tester_steal_s"]:
                assert 0 <= t[k] <= t["duration_s"] + 0.3, (k, t)
    rows = list(csv.DictReader((res / "results.csv").open()))
    assert len(rows) == 4
    trials = list(csv.DictReader((res / "trials.csv").open()))
    assert len(trials) == sum(len(rep["trials"]) for r in results for rep in r["repetitions"])
    # Where the lost frames went, from the links' kernel counters: never more than
    # were lost (a few frames of slack: the counters are read around the trial).
    for t in trials:
        lost = int(t["sent"]) - int(t["received"])
        sut, tester = int(t["sut_rx_dropped"]), int(t["tester_rx_dropped"])
        assert sut >= 0 and tester >= 0
        assert sut + tester <= max(lost, 0) + 100, t
        assert float(t["sut_steal_s"]) >= 0 and float(t["tester_steal_s"]) >= 0, t


def test_report_has_the_ratio_table(run):
    res, p = run
    md = (res / "report.md").read_text()
    assert "sr6" in md and "linux" in md and "End" in md
    assert "ratio" in md.lower()
    assert "## Forwarding rate at maximum offered load" in md
    assert "### SUT CPU per packet: linux / sr6" in md
    # The summary table on stdout, and progress on stderr.
    assert "NDR kpps" in p.stdout
    assert "[1/4] linux ipv6" in p.stderr


def test_the_generator_is_xdp_live_frames(run):
    """This machine's kernel has live frames (5.18+) and veth has driver-mode XDP: the
    tester must be using them to send and to count, and say so with its ceiling for
    every testbed."""
    res, _ = run
    notes = json.loads((res / "meta.json").read_text())["notes"]
    ceilings = [n for n in notes if "generator ceiling" in n]
    assert len(ceilings) == 4, notes
    for n in ceilings:
        assert "XDP live frames out of tg0" in n, n
        # ... and counts in an XDP program on tg1 (driver-mode XDP on veth).
        assert "receiver xdp_count (native XDP) on tg1" in n, n


def test_sigint_stops_cleanly(sr6_bin, tmp_path):
    """Ctrl-C mid-run: the run stops before its next trial, stops sr6 run, removes its
    namespaces, and exits non-zero saying why."""
    import signal
    import time

    sr6 = sr6_bin
    exp = tmp_path / "exp.yaml"
    exp.write_text("forwarders: [sr6]\nbehaviors: [ipv6]\ntrial_duration_s: 0.2\nrepetitions: 5\n")
    p = subprocess.Popen([str(sr6), "perf", "run", str(exp), "--out", str(tmp_path / "res")],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # Wait until trials run (the testbed and sr6 run exist), then interrupt.
    ns = f"sr6p{p.pid}-sut"
    deadline = time.time() + 120
    while time.time() < deadline:
        names = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
        if ns in names and subprocess.run(["pgrep", "-f", f"{ns}-sr6/sut.conf"]).returncode == 0:
            break
        time.sleep(0.2)
    else:
        p.kill()
        pytest.fail("the run never started its sr6 testbed")
    time.sleep(2)
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=120)
    assert p.returncode != 0
    assert "interrupted" in err, err[-2000:]
    names = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    assert f"sr6p{p.pid}-" not in names, names
    assert subprocess.run(["pgrep", "-f", f"{ns}-sr6/sut.conf"]).returncode != 0, "sr6 run still running"
    assert not (tmp_path / "res" / "results.json").exists()


def test_next_csid_rows(sr6_bin, tmp_path):
    """The NEXT-C-SID rows (pure uSID frames, `flavors next-csid lblen 32 nflen 16`): the
    SUT shifts the destination to the next C-SID, routed back to the tester, so frames
    come back from both forwarders (nothing would: the unshifted container has no route
    out). The kernel skips End.T-next-csid (it ignores flavours on End.T), saying so."""
    exp = tmp_path / "exp.yaml"
    exp.write_text("forwarders: [linux, sr6]\nbehaviors: [End-next-csid, End.X-next-csid, End.T-next-csid]\n"
                   "trial_duration_s: 0.2\nrepetitions: 1\nprecision: 0.2\nlatency_fraction: 0\n"
                   "max_load_trial: false\n")
    p = subprocess.run([str(sr6_bin), "perf", "run", str(exp), "--out", str(tmp_path / "res")],
                       capture_output=True, text=True, timeout=900)
    assert p.returncode == 0, p.stderr[-4000:]
    assert "linux End.T-next-csid: skipped — the kernel accepts flavours on End.T but ignores them" in p.stderr
    results = json.loads((tmp_path / "res" / "results.json").read_text())
    got = {(r["forwarder"], r["behavior"]) for r in results}
    assert got == {("linux", "End-next-csid"), ("linux", "End.X-next-csid"), ("sr6", "End-next-csid"),
                   ("sr6", "End.X-next-csid"), ("sr6", "End.T-next-csid")}
    for r in results:
        # Ethernet 14 + outer IPv6 40 (no SRH) + the 64-byte inner packet.
        assert r["frame_bytes"] == 118, r["behavior"]
        rep = r["repetitions"][0]
        assert 0 < rep["ndr_pps"] <= rep["pdr_pps"] * 1.0000001, (r["forwarder"], r["behavior"])
        assert any(t["received"] == t["sent"] > 0 for t in rep["trials"]), (r["forwarder"], r["behavior"])


def test_replace_csid_row(sr6_bin, tmp_path):
    """The REPLACE-C-SID row (`flavors replace-csid lblen 32 nflen 16`, an SRH of one
    C-SID container): the SUT writes the container's next C-SID over its own, routed
    back to the tester, so frames come back (nothing would otherwise: the SUT's own
    C-SID has no route out). The kernel has no REPLACE-C-SID and skips it, saying so."""
    exp = tmp_path / "exp.yaml"
    exp.write_text("forwarders: [linux, sr6]\nbehaviors: [End-replace-csid]\n"
                   "trial_duration_s: 0.2\nrepetitions: 1\nprecision: 0.2\nlatency_fraction: 0\n"
                   "max_load_trial: false\n")
    p = subprocess.run([str(sr6_bin), "perf", "run", str(exp), "--out", str(tmp_path / "res")],
                       capture_output=True, text=True, timeout=900)
    assert p.returncode == 0, p.stderr[-4000:]
    assert "linux End-replace-csid: skipped — the kernel has no REPLACE-C-SID" in p.stderr, p.stderr[-2000:]
    results = json.loads((tmp_path / "res" / "results.json").read_text())
    assert [(r["forwarder"], r["behavior"]) for r in results] == [("sr6", "End-replace-csid")]
    r = results[0]
    # Ethernet 14 + outer IPv6 40 + SRH 8 + one container 16 + the 64-byte inner packet.
    assert r["frame_bytes"] == 142
    rep = r["repetitions"][0]
    assert 0 < rep["ndr_pps"] <= rep["pdr_pps"] * 1.0000001
    assert any(t["received"] == t["sent"] > 0 for t in rep["trials"])


def test_sr_proxy_rows(sr6_bin, tmp_path):
    """The SR proxies in both directions, the tester playing the service function: End.AD
    and End.AM to the function (tg1), End.AD-return and End.AM-return from it (frames
    on the proxy's iif, dut0, sent on to the next segment). Frames come back on every
    row — End.AD-return's only with the cache the tester's warm-up frame (tg1 -> dut1)
    filled: an empty cache drops them all, and the run would fail saying so. The kernel
    has no proxy and skips them, saying so."""
    exp = tmp_path / "exp.yaml"
    exp.write_text("forwarders: [linux, sr6]\n"
                   "behaviors: [ipv6, End.AD, End.AD-return, End.AM, End.AM-return]\n"
                   "trial_duration_s: 0.2\nrepetitions: 1\nprecision: 0.2\nlatency_fraction: 0\n"
                   "max_load_trial: false\n")
    p = subprocess.run([str(sr6_bin), "perf", "run", str(exp), "--out", str(tmp_path / "res")],
                       capture_output=True, text=True, timeout=900)
    assert p.returncode == 0, p.stderr[-4000:]
    for b, kw in [("End.AD", "End.AD"), ("End.AD-return", "End.AD"), ("End.AM", "End.AM"),
                  ("End.AM-return", "End.AM")]:
        assert f"linux {b}: skipped — the kernel has no {kw}" in p.stderr, p.stderr[-4000:]
    results = json.loads((tmp_path / "res" / "results.json").read_text())
    got = {(r["forwarder"], r["behavior"]) for r in results}
    assert got == {("linux", "ipv6"), ("sr6", "ipv6"), ("sr6", "End.AD"), ("sr6", "End.AD-return"),
                   ("sr6", "End.AM"), ("sr6", "End.AM-return")}
    frame = {"ipv6": 78, "End.AD": 158, "End.AD-return": 78, "End.AM": 158, "End.AM-return": 158}
    for r in results:
        assert r["frame_bytes"] == frame[r["behavior"]], r["behavior"]
        rep = r["repetitions"][0]
        assert 0 < rep["ndr_pps"] <= rep["pdr_pps"] * 1.0000001, (r["forwarder"], r["behavior"])
        assert any(t["received"] == t["sent"] > 0 for t in rep["trials"]), (r["forwarder"], r["behavior"])
    md = (tmp_path / "res" / "report.md").read_text()
    section = md.split("## SR proxies / plain IPv6")[1].split("\n## ")[0]
    for b in ["End.AD", "End.AD-return", "End.AM", "End.AM-return"]:
        assert f"| {b} | " in section, section


def short_run_of(sr6_bin, tmp_path, rows):
    """One short search per row on both forwarders, none skipped; the results (the report
    is in tmp_path/res)."""
    exp = tmp_path / "exp.yaml"
    exp.write_text("forwarders: [linux, sr6]\n"
                   f"behaviors: [{', '.join(rows)}]\n"
                   "trial_duration_s: 0.2\nrepetitions: 1\nprecision: 0.2\nlatency_fraction: 0\n"
                   "max_load_trial: false\n")
    p = subprocess.run([str(sr6_bin), "perf", "run", str(exp), "--out", str(tmp_path / "res")],
                       capture_output=True, text=True, timeout=900)
    assert p.returncode == 0, p.stderr[-4000:]
    assert "skipped" not in p.stderr, p.stderr[-4000:]
    results = json.loads((tmp_path / "res" / "results.json").read_text())
    got = {(r["forwarder"], r["behavior"]) for r in results}
    assert got == {(f, b) for f in ("linux", "sr6") for b in rows}
    return results


def test_end_bpf_rows(sr6_bin, tmp_path):
    """The End.BPF rows: the End.BPF paper's programs compiled with clang into one object
    per row, loaded by the kernel (iproute2's `endpoint obj`) and by sr6 from the same
    source. Frames come back from both forwarders on every row — none would if the program
    were not loaded (no route for the SID's packets to follow) or dropped them; Add TLV's
    frames are 8 bytes longer on the way out, which the receiver does not mind. The report
    puts each beside what the paper compares it with."""
    rows = ["End", "End.T", "End.BPF-end", "End.BPF-tag", "End.BPF-tlv", "End.BPF-end_t"]
    results = short_run_of(sr6_bin, tmp_path, rows)
    for r in results:
        assert r["frame_bytes"] == 158, r["behavior"]
        rep = r["repetitions"][0]
        assert 0 < rep["ndr_pps"] <= rep["pdr_pps"] * 1.0000001, (r["forwarder"], r["behavior"])
        assert any(t["received"] == t["sent"] > 0 for t in rep["trials"]), (r["forwarder"], r["behavior"])
    md = (tmp_path / "res" / "report.md").read_text()
    section = md.split("## End.BPF / native")[1].split("\n## ")[0]
    for fw in ("linux", "sr6"):
        assert f"### {fw}\n" in section, section
    for b in rows[2:]:
        assert sum(1 for line in section.splitlines() if line.startswith(f"| {b} | ")) == 2, section


def test_hmac_rows(sr6_bin, tmp_path):
    """The HMAC rows: H.Encaps adding an HMAC TLV and End verifying the tester's on a dut0
    that requires one (seg6_require_hmac=1), with the key given to the kernel through
    iproute2's prompt and to sr6 on its line. Frames come back from both forwarders on
    every row — none would on the End rows if the tester's HMAC did not verify (the kernel
    also needs the SRH's 0x08 flag to find it), nor on the H.Encaps rows if the key were
    missing (the route is refused). The report puts each beside its row without HMAC."""
    rows = ["T.Encaps", "End", "H.Encaps-hmac-sha256", "H.Encaps-hmac-sha1", "End-hmac-sha256",
            "End-hmac-sha1"]
    results = short_run_of(sr6_bin, tmp_path, rows)
    for r in results:
        # End's frame with a 40-byte HMAC TLV in its SRH; plain IPv6 to the head-ends.
        want = {"End": 158, "T.Encaps": 78}.get(r["behavior"], 198 if r["behavior"].startswith("End") else 78)
        assert r["frame_bytes"] == want, r["behavior"]
        rep = r["repetitions"][0]
        assert 0 < rep["ndr_pps"] <= rep["pdr_pps"] * 1.0000001, (r["forwarder"], r["behavior"])
        assert any(t["received"] == t["sent"] > 0 for t in rep["trials"]), (r["forwarder"], r["behavior"])
    md = (tmp_path / "res" / "report.md").read_text()
    section = md.split("## HMAC / without")[1].split("\n## ")[0]
    for fw in ("linux", "sr6"):
        assert f"### {fw}\n" in section, section
    for b in rows[2:]:
        assert sum(1 for line in section.splitlines() if line.startswith(f"| {b} | ")) == 2, section
