"""pytest fixtures for the sr6 scapy oracle suite.

* ``sr6_bin``  -- path of the binary: $SR6_BIN, else target/release/sr6 under the repo
  root (tests/sr6test.py).  Missing -> the test FAILS.
* ``run_sr6(config_text, frames, in_dev=None)`` -- runs
  ``sr6 pcap --config C --in IN.pcap [--in-dev D] --out-dir OUT --json`` in a tmp dir,
  requires exit status 0, parses the JSON and every ``OUT/*.pcap``, and runs tshark on
  every frame sr6 emitted (no malformed packet, no error-level expert info, no bad
  checksum).  Returns a :class:`Result`.  ``frames`` may also be ``[(dev, frame), ...]``:
  frames received on several devices, in that order -- one input file per device
  (``--in DEV=in-K.pcap``), frame i stamped i microseconds, so sr6's timestamp merge
  processes them in list order.
* ``sr6_cli(args, ...)`` -- raw invocation for the CLI / config-error tests.
"""
from __future__ import annotations

import json
import shutil
import struct
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

sys.path[:0] = [str(Path(__file__).resolve().parent), str(Path(__file__).resolve().parents[1])]

import sr6test  # noqa: E402
from sr6_oracle import Ether  # noqa: E402

RUN_TIMEOUT = 60

# tshark: validate checksums too (IPv4 header, UDP/TCP over the final destination of a
# Routing header, RFC 8200 §8.1); ICMPv6 checksums are always checked (warning level).
TSHARK_PREFS = [
    "-o", "ip.check_checksum:TRUE",
    "-o", "udp.check_checksum:TRUE",
    "-o", "tcp.check_checksum:TRUE",
]
PI_ERROR = 0x00800000  # wireshark expert severity "Error" (Malformed is Error too)


@pytest.fixture(scope="session")
def sr6_bin() -> Path:
    return sr6test.binary_or_fail()


@pytest.fixture(scope="session")
def tshark_bin() -> str:
    t = shutil.which("tshark")
    if t is None:
        pytest.fail(
            "tshark is required by the oracle (every emitted frame must decode cleanly): "
            "bash scripts/setup.sh installs it",
            pytrace=False,
        )
    return t


# ----------------------------------------------------------------------------------------
# pcap I/O
# ----------------------------------------------------------------------------------------


write_pcap = sr6test.write_pcap  # byte for byte, garbage included; timestamps 0


def read_pcap_raw(path: Path) -> list[bytes]:
    """Frames of a classic pcap file, as bytes; asserts LINKTYPE_ETHERNET and that no
    frame was cut by a snap length."""
    try:
        linktype, recs = sr6test.read_pcap(path)
    except ValueError as e:
        raise AssertionError(str(e)) from None
    assert linktype == 1, f"{path.name}: link type {linktype}, expected 1 (Ethernet)"
    for i, r in enumerate(recs):
        assert len(r.data) == r.orig_len, (
            f"{path.name}: frame {i} truncated by snaplen ({len(r.data)} of {r.orig_len})")
    return [r.data for r in recs]


# ----------------------------------------------------------------------------------------
# tshark check
# ----------------------------------------------------------------------------------------


ICMP4_ERROR_TYPES = {3, 4, 5, 11, 12}


def tshark_problems(tshark: str, pcap: Path) -> list[str]:
    """Frame-level problems tshark reports: malformed packets, error-level expert info,
    bad checksums (any level).

    Exception: checksum complaints inside ICMP *error* messages are ignored -- the quoted
    packet may be truncated, and wireshark 4.0 validates a quoted UDP checksum against
    the quoted IPv6 destination instead of the SRH's final destination.  The ICMP
    checksums themselves are covered by the byte-exact comparison with scapy."""
    cmd = [tshark, "-n", "-r", str(pcap), *TSHARK_PREFS, "-T", "fields", "-E", "separator=|",
           "-E", "occurrence=a", "-E", "aggregator=~",
           "-e", "frame.number", "-e", "_ws.expert.severity", "-e", "_ws.expert.message", "-e", "_ws.malformed",
           "-e", "icmpv6.type", "-e", "icmp.type"]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        return [f"tshark failed ({p.returncode}): {p.stderr.strip()}"]
    out = []
    for line in p.stdout.splitlines():
        parts = line.split("|")
        if len(parts) < 6:
            continue
        num, sev, msg, malformed, t6, t4 = parts[:6]
        t6s = [int(x) for x in t6.split("~") if x.strip()]
        t4s = [int(x) for x in t4.split("~") if x.strip()]
        is_error_msg = (t6s and t6s[0] < 128) or (t4s and t4s[0] in ICMP4_ERROR_TYPES)
        sevs = [int(x, 0) for x in sev.split("~") if x.strip()]
        msgs = msg.split("~") if msg else []
        msgs += [""] * (len(sevs) - len(msgs))
        bad = bool(malformed.strip())
        for sv, m in zip(sevs, msgs):
            if "Bad checksum" in m:
                bad = bad or not is_error_msg
            elif sv >= PI_ERROR:
                bad = True
        if bad:
            out.append(f"frame {num}: severity={sev} expert={msg!r} malformed={malformed!r}")
    return out


def assert_tshark_clean(tshark: str, frames_by_file: dict[str, list[bytes]], workdir: Path) -> None:
    allframes, origin = [], []
    for name, frames in frames_by_file.items():
        for i, f in enumerate(frames):
            allframes.append(f)
            origin.append(f"{name}[{i}]")
    if not allframes:
        return
    pcap = workdir / "tshark-check.pcap"
    write_pcap(pcap, allframes)
    problems = tshark_problems(tshark, pcap)
    if problems:
        detail = []
        for pr in problems:
            try:
                n = int(pr.split()[1].rstrip(":"))
                detail.append(f"{origin[n - 1]}: {pr}")
            except (ValueError, IndexError):
                detail.append(pr)
        raise AssertionError("tshark does not decode sr6's output cleanly:\n  " + "\n  ".join(detail))


# ----------------------------------------------------------------------------------------
# Running sr6
# ----------------------------------------------------------------------------------------


@dataclass
class Result:
    json: dict
    raw: dict  # file stem ("eth1", "local") -> list of frame bytes
    stdout: str = ""
    stderr: str = ""
    out_dir: Path | None = None
    files: set = field(default_factory=set)

    def frames(self, dev: str) -> list[bytes]:
        return self.raw.get(dev, [])

    def pkts(self, dev: str) -> list:
        return [Ether(b) for b in self.frames(dev)]

    @property
    def tx(self) -> dict:
        return {k: [Ether(b) for b in v] for k, v in self.raw.items() if k != "local"}

    @property
    def local(self) -> list:
        return self.pkts("local")

    def drops(self) -> dict:
        return self.json.get("drops", {}) or {}

    def drop_total(self) -> int:
        return sum(self.drops().values())

    def emitted(self) -> dict:
        """Non-empty outputs other than local."""
        return {k: len(v) for k, v in self.raw.items() if k != "local" and v}

    def expect(self, **outputs):
        """Assert the exact frames per output (dev name or ``local``) and that every other
        output is empty.  ``res.expect(eth1=[frame], local=[])``."""
        from sr6_oracle import assert_frames

        for name in sorted(set(self.raw) | set(outputs)):
            assert_frames(self.frames(name), outputs.get(name, []), f"{name}.pcap")

    def expect_nothing(self):
        """No frame out of any device nor to local."""
        self.expect()


@dataclass
class CliRun:
    returncode: int
    stdout: str
    stderr: str
    out_dir: Path
    config_path: Path
    in_path: Path


def is_multi_dev(frames) -> bool:
    """Is ``frames`` of the form ``[(dev, frame), ...]``?"""
    return bool(frames) and all(isinstance(f, tuple) and len(f) == 2 and isinstance(f[0], str) for f in frames)


def write_pcap_us(path: Path, frames, times_us) -> None:
    """Like :func:`write_pcap`, frame i stamped ``times_us[i]`` microseconds."""
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 262144, 1))
        for fr, t in zip(frames, times_us):
            fr = bytes(fr)
            f.write(struct.pack("<IIII", t // 1_000_000, t % 1_000_000, len(fr), len(fr)))
            f.write(fr)


def write_inputs(workdir: Path, frames) -> list[str]:
    """``[(dev, frame), ...]`` as one file per device, frame i at i microseconds; the
    ``--in DEV=FILE`` arguments, devices in order of first appearance."""
    by_dev: dict[str, list] = {}
    for i, (dev, fr) in enumerate(frames):
        by_dev.setdefault(dev, []).append((i, fr))
    args = []
    for k, (dev, items) in enumerate(by_dev.items()):
        p = workdir / f"in-{k}.pcap"
        write_pcap_us(p, [fr for _, fr in items], [i for i, _ in items])
        args += ["--in", f"{dev}={p}"]
    return args


def _invoke(sr6_bin, workdir: Path, config_text, frames, in_dev=None, extra=(), json_flag=True,
            config_name="sr6.conf", write_input=True, times_us=None) -> CliRun:
    workdir.mkdir(parents=True, exist_ok=True)
    cfg = workdir / config_name
    if config_text is not None:
        cfg.write_text(config_text)
    inp = workdir / "in.pcap"
    if write_input and is_multi_dev(frames):
        inputs = write_inputs(workdir, frames)
    else:
        if write_input and times_us is not None:
            write_pcap_us(inp, frames, times_us)
        elif write_input:
            write_pcap(inp, frames)
        inputs = ["--in", str(inp)]
    out = workdir / "out"
    cmd = [str(sr6_bin), "pcap", "--config", str(cfg), *inputs, "--out-dir", str(out)]
    if in_dev:
        cmd += ["--in-dev", in_dev]
    if json_flag:
        cmd.append("--json")
    cmd += list(extra)
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=RUN_TIMEOUT, cwd=workdir)
    return CliRun(p.returncode, p.stdout, p.stderr, out, cfg, inp)


@pytest.fixture
def sr6_cli(sr6_bin, tmp_path):
    """Raw invocation: ``sr6_cli(config_text, frames, in_dev=None, extra=(), ...)``."""
    counter = {"n": 0}

    def call(config_text, frames=(), **kw) -> CliRun:
        counter["n"] += 1
        return _invoke(sr6_bin, tmp_path / f"cli{counter['n']}", config_text, frames, **kw)

    return call


@pytest.fixture
def run_sr6(sr6_bin, tshark_bin, tmp_path):
    """``run_sr6(config_text, frames, in_dev=None, tshark=True, times_us=None) -> Result``;
    ``frames``: a list of frames received on ``in_dev`` (frame i stamped ``times_us[i]``
    microseconds if given, else 0), or ``[(dev, frame), ...]``."""
    counter = {"n": 0}

    def call(config_text: str, frames, in_dev: str | None = None, tshark: bool = True, times_us=None) -> Result:
        counter["n"] += 1
        wd = tmp_path / f"run{counter['n']}"
        r = _invoke(sr6_bin, wd, config_text, list(frames), in_dev=in_dev, times_us=times_us)
        if r.returncode != 0:
            raise AssertionError(
                f"sr6 exited with status {r.returncode}\n--- config\n{config_text}--- stderr\n{r.stderr}"
                f"\n--- stdout\n{r.stdout}"
            )
        try:
            js = json.loads(r.stdout)
        except json.JSONDecodeError as e:
            raise AssertionError(f"sr6 --json stdout is not JSON ({e}):\n{r.stdout[:2000]}\nstderr:\n{r.stderr}")
        assert isinstance(js, dict), f"--json must print an object, got {type(js).__name__}"
        assert r.out_dir.is_dir(), f"--out-dir {r.out_dir} was not created"
        raw = {}
        for f in sorted(r.out_dir.glob("*.pcap")):
            raw[f.stem] = read_pcap_raw(f)
        res = Result(json=js, raw=raw, stdout=r.stdout, stderr=r.stderr, out_dir=r.out_dir, files=set(raw))
        # Every frame sr6 emitted must decode cleanly (DESIGN.md "Oracles": tshark).
        if tshark:
            assert_tshark_clean(tshark_bin, {f"{k}.pcap": v for k, v in raw.items() if v}, wd)
        return res

    return call
