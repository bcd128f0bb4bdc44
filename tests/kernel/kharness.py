"""Kernel comparison harness: the same config and the same frames through a Linux kernel
router (network namespaces + veth) and through `sr6 pcap`, compared byte for byte.

Public API (see tests/kernel/README.md):

* ``Harness(sr6_bin, workdir)``; ``h.run(config_text, [(dev, frame), ...]) -> Run``
  (``probe=`` / ``watch=``: look at the kernel router after the frames, or read it
  while they go through; ``Run.kernel_probe`` holds the result).
* ``Run.kernel[i]`` / ``Run.sr6[i]``: per input frame ``i``, ``{dev: [frame bytes]}``
  (``sr6[i]`` also has ``"local"``), after the filtering and normalisations below.
* ``Run.assert_identical()``, ``Run.expect_kernel(i, **per_dev)``,
  ``Run.expect_sr6(i, **per_dev)``.
* ``IDENTICAL`` / ``DIFFERENCE(reason, rfc)`` and the ``@scenario(...)`` mark.

What the kernel emits is filtered (``is_noise``) and both sides are normalised
(``normalise``); each rule is listed, with its reason, in ``NORMALISATIONS`` and in
docs/conformance.md "Kernel comparison harness".
"""
from __future__ import annotations

import json
import os
import shlex
import struct
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parents[1]
sys.path[:0] = [str(REPO_ROOT / "tests"), str(REPO_ROOT / "tests" / "oracle")]

import sr6_oracle as O  # noqa: E402  (scapy builders shared with the oracle suite)
import sr6test as T  # noqa: E402  (config splitting, namespaces: shared with the other suites)

NS_PREFIX = "sr6k-"
HELPER = HERE / "knet_helper.py"
QUIET_MS = int(os.environ.get("SR6K_QUIET_MS", "30"))

# ---------------------------------------------------------------------------------------
# Scenario marks
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Mark:
    kind: str            # "identical" | "difference"
    reason: str = ""
    rfc: str = ""

    def docs_cell(self) -> str:
        if self.kind == "identical":
            return "identical"
        if self.kind == "sr6-bug":
            return f"**sr6 bug** (strict xfail): {self.reason}"
        if self.kind == "per-flow":
            return f"same per flow: {self.reason}"
        return f"difference: {self.reason} ({self.rfc})"


IDENTICAL = Mark("identical")


def DIFFERENCE(reason: str, rfc: str) -> Mark:  # noqa: N802 (reads like a constant)
    assert reason and rfc, "a DIFFERENCE needs a reason and an RFC section"
    return Mark("difference", reason, rfc)


def SR6_BUG(description: str) -> Mark:  # noqa: N802
    """The kernel defines the output, sr6 claims to produce the same bytes and does not:
    the scenario asserts identity and is a strict xfail until sr6 is fixed."""
    return Mark("sr6-bug", description, "")


def PER_FLOW(reason: str) -> Mark:  # noqa: N802
    """The kernel's choice is one of several valid outputs (a multipath route's path,
    picked by a hash with a seed chosen at boot): the scenario asserts what is fixed --
    per flow the same bytes up to the path, which fields choose the path, the split --
    with ``Run.asserted`` holding "per-flow"."""
    assert reason
    return Mark("per-flow", reason, "")


SCENARIOS: dict[str, tuple[Mark, str]] = {}


def scenario(mark: Mark):
    """Decorator for a scenario test: records its mark (IDENTICAL or DIFFERENCE) and the
    first line of its docstring, for the docs table and for the fixture's check that the
    test asserts what its mark says."""

    def deco(fn):
        doc = (fn.__doc__ or "").strip().splitlines()
        SCENARIOS[fn.__name__] = (mark, doc[0].strip() if doc else fn.__name__)
        fn._sr6k_mark = mark
        if mark.kind == "sr6-bug":
            import pytest

            fn = pytest.mark.xfail(strict=True, raises=AssertionError, reason="sr6 bug: " + mark.reason)(fn)
        return fn

    return deco


# ---------------------------------------------------------------------------------------
# Config -> devices, MACs (commands split and translated by tests/sr6test.py)
# ---------------------------------------------------------------------------------------

def devices_and_macs(text: str) -> tuple[list[str], dict[str, str]]:
    """Devices in order of first mention (word order, as sr6's parser records them) and
    their MACs: the `link set X address MAC` value, else sr6's default
    02:00:00:00:00:NN (NN = 1-based index, hex; docs/behaviours.md)."""
    devs: list[str] = []
    macs: dict[str, str] = {}

    def note(d):
        if d not in devs:
            devs.append(d)

    for words in T.config_commands(text):
        if words[0] in ("ip6tables", "nft"):
            continue
        if words[0] == "sysctl":
            for w in words[1:]:
                if w.startswith("-"):
                    continue
                key = w.split("=", 1)[0]
                if "/" in key and "." not in key.split("/")[0]:
                    parts = key.split("/")          # net/ipv6/conf/eth0.100/x
                    dev = "/".join(parts[3:-1])
                else:
                    parts = key.split(".")          # net.ipv6.conf.eth0/100.x
                    dev = ".".join(parts[3:-1]).replace("/", ".")
                if len(parts) >= 5 and parts[2] == "conf" and dev not in ("all", "default"):
                    note(dev)
            continue
        _, rest = T.split_ip(words)
        if len(rest) >= 3 and "link".startswith(rest[0]) and rest[1] in ("set", "s"):
            i = 2
            if rest[i] == "dev":
                i += 1
            note(rest[i])
            for j, w in enumerate(rest):
                if w in ("address", "addr") and j + 1 < len(rest):
                    macs[rest[i]] = rest[j + 1].lower()
            continue
        for j, w in enumerate(rest[:-1]):
            if w in ("dev", "oif"):
                note(rest[j + 1])
    for n, d in enumerate(devs, 1):
        macs.setdefault(d, f"02:00:00:00:00:{n:02x}")
    return devs, macs


# Kernel-only knobs of the router namespace, each with its reason (also in the docs).
ROUTER_SYSCTLS = [
    ("net.ipv6.conf.all.accept_dad", "0", "no Duplicate Address Detection: addresses usable at once, no DAD probes on the wire"),
    ("net.ipv6.conf.default.accept_dad", "0", "same, for the veths created afterwards"),
    ("net.ipv6.conf.all.accept_ra", "0", "no router advertisements processed (sr6 has none)"),
    ("net.ipv6.conf.default.accept_ra", "0", "same, for the veths"),
    ("net.ipv6.conf.default.addr_gen_mode", "1", "no automatic link-local address: no router solicitations, MLD reports or ND from the router, and no link-local candidate for source selection (sr6 has none)"),
    ("net.ipv6.auto_flowlabels", "0", "ICMPv6 errors and locally generated packets get flow label 0, as sr6's"),
    ("net.ipv6.icmp.ratelimit", "0", "no per-destination ICMPv6 rate limit (sr6's bucket of 100 is never reached per run)"),
    ("net.ipv4.icmp_ratelimit", "0", "same for ICMPv4"),
    ("net.ipv4.icmp_msgs_per_sec", "1000000", "global ICMP budget out of the way (per namespace)"),
    ("net.ipv4.icmp_msgs_burst", "1000000", "same"),
    ("net.ipv6.conf.all.forwarding", "1", "sr6 forwards by default (docs/conformance.md); a config line can still set 0"),
    ("net.ipv4.ip_forward", "1", "same for IPv4"),
    ("net.ipv4.conf.all.rp_filter", "0", "a new namespace inherits the host's IPv4 rp_filter; sr6 has none"),
    ("net.ipv4.conf.default.rp_filter", "0", "same, for the veths"),
]
TESTER_SYSCTLS = [
    ("net.ipv6.conf.all.disable_ipv6", "1", "the tester side is a wire: no IPv6 stack, so it sends nothing of its own"),
    ("net.ipv6.conf.default.disable_ipv6", "1", "same, for the veth ends moved in"),
]


# ---------------------------------------------------------------------------------------
# Filtering and normalisation
# ---------------------------------------------------------------------------------------

NOISE_ICMP6 = {130, 131, 132, 133, 134, 135, 136, 137, 143}


def _icmp6_type(frame: bytes) -> int | None:
    """ICMPv6 type of an Ethernet/IPv6 frame (walking Hop-by-Hop / Destination Options /
    Routing headers), else None."""
    if len(frame) < 54 or frame[12:14] != b"\x86\xdd":
        return None
    nh, off = frame[20], 54
    while nh in (0, 43, 60) and off + 2 <= len(frame):
        nh, off = frame[off], off + 8 * (frame[off + 1] + 1)
    if nh == 58 and off < len(frame):
        return frame[off]
    return None


def is_noise(frame: bytes) -> str | None:
    """Why a frame the kernel emitted is not compared, or None."""
    if frame[0] & 1:
        return "multicast/broadcast destination MAC"
    if frame[12:14] == b"\x08\x06":
        return "ARP"
    t = _icmp6_type(frame)
    if t in NOISE_ICMP6:
        return f"ICMPv6 type {t} (ND/RS/RA/MLD)"
    return None


def _ip4_csum(hdr: bytes) -> int:
    s = sum(struct.unpack(f"!{len(hdr) // 2}H", hdr))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def normalise(frame: bytes) -> bytes:
    """Rules applied to kernel AND sr6 frames before comparing (NORMALISATIONS)."""
    f = bytearray(frame)
    # IPv4 ICMP error: identification := 0, header checksum recomputed.
    if len(f) >= 34 and f[12:14] == b"\x08\x00" and f[23] == 1:
        ihl = (f[14] & 0x0F) * 4
        if len(f) >= 14 + ihl + 1 and f[14 + ihl] in (3, 4, 5, 11, 12):
            f[18:20] = b"\0\0"
            f[24:26] = b"\0\0"
            f[24:26] = struct.pack("!H", _ip4_csum(bytes(f[14:14 + ihl])))
    return bytes(f)


NORMALISATIONS = [
    ("IPv4 ICMP errors: Identification set to 0 (header checksum recomputed)",
     "Linux picks an IP ID per destination (ip_select_ident); sr6 sends 0 (docs/conformance.md ICMP errors). The field has no meaning for an unfragmented DF=0 error"),
]
FILTERS = [
    ("frames to a multicast or broadcast MAC", "neighbour discovery, MLD, ARP requests: the kernel's own control traffic"),
    ("ARP", "sr6 has no ARP (static neighbours only)"),
    ("ICMPv6 types 130-137 and 143 to a unicast MAC", "MLD / RS / RA / NS / NA / Redirect: control traffic, not data-plane output"),
]
# When sr6 hands a frame to `local` (the host stack's business), the kernel's host stack
# may answer it: these answers are not compared (sr6 has no host stack).
HOST_REPLY_NOTE = ("when sr6 delivers a frame to local.pcap, the kernel may answer from its host stack "
                   "(ICMPv6 Echo Reply, Destination Unreachable code 4 port unreachable, ICMPv4 port "
                   "unreachable); those answers are ignored and the rest must be empty")


def _is_host_reply(frame: bytes) -> bool:
    t = _icmp6_type(frame)
    if t == 129:
        return True
    if t == 1:
        nh, off = frame[20], 54
        while nh in (0, 43, 60):
            nh, off = frame[off], off + 8 * (frame[off + 1] + 1)
        return frame[off + 1] == 4
    if frame[12:14] == b"\x08\x00" and frame[23] == 1:
        ihl = (frame[14] & 0x0F) * 4
        return frame[14 + ihl] == 0 or (frame[14 + ihl] == 3 and frame[15 + ihl] == 3)
    return False


# ---------------------------------------------------------------------------------------
# The kernel router
# ---------------------------------------------------------------------------------------


class KernelRouter:
    """A router namespace configured with the config's lines, each device a veth whose
    peer sits in a tester namespace. Use as a context manager (always deleted)."""

    def __init__(self, config_text: str, workdir: Path):
        self.config_text = config_text
        self.workdir = workdir
        self.devs, self.macs = devices_and_macs(config_text)
        base = T.netns_name(NS_PREFIX)                  # sr6k-PID-N-
        self.r, self.t = base + "r", base + "t"
        self.tdev = {}
        for i, d in enumerate(self.devs, 1):
            name = f"t-{d}"
            self.tdev[d] = name if len(name) <= 15 else f"t-{i}"
        self.applied: list[str] = []

    def __enter__(self):
        try:
            self._setup()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        T.netns_del(self.r)
        T.netns_del(self.t)

    def _setup(self):
        for ns in (self.r, self.t):
            T.netns_add(ns)
        T.run(["ip", "netns", "exec", self.r, "sysctl", "-qw", *[f"{k}={v}" for k, v, _ in ROUTER_SYSCTLS]])
        T.run(["ip", "netns", "exec", self.t, "sysctl", "-qw", *[f"{k}={v}" for k, v, _ in TESTER_SYSCTLS]])
        T.run(["ip", "-n", self.r, "link", "set", "lo", "up"])
        for i, d in enumerate(self.devs, 1):
            T.run(["ip", "-n", self.r, "link", "add", d, "address", self.macs[d], "type", "veth",
                 "peer", "name", self.tdev[d], "address", f"02:fe:00:00:00:{i:02x}", "netns", self.t])
            T.run(["ip", "-n", self.t, "link", "set", self.tdev[d], "up", "promisc", "on"])
            T.run(["ip", "-n", self.r, "link", "set", d, "up"])
        for words in T.config_commands(self.config_text):
            argv, stdin = T.kernel_command(words, self.r)
            p = T.run(argv, stdin=stdin, check=False)
            if p.returncode != 0:
                raise RuntimeError(f"kernel refused config line {shlex.join(words)!r}: "
                                   f"{shlex.join(argv)}\n{p.stderr.strip()}")
            self.applied.append(shlex.join(argv))

    def send(self, frames: list[tuple[str, bytes]]) -> tuple[list[dict[str, list[bytes]]], list]:
        """Send each frame from the tester side of its device; per frame, what the router
        emitted on each device (raw, unfiltered), and the noise seen between frames."""
        job = self.workdir / "kjob.json"
        out = self.workdir / "kout.json"
        json.dump({"devs": [self.tdev[d] for d in self.devs], "quiet_ms": QUIET_MS, "max_ms": 2000,
                   "frames": [[self.tdev[d], bytes(f).hex()] for d, f in frames]}, open(job, "w"))
        T.run(["ip", "netns", "exec", self.t, sys.executable, str(HELPER), str(job), str(out)])
        res = json.load(open(out))
        back = {t: d for d, t in self.tdev.items()}
        per_frame = []
        for outs in res["results"]:
            dd: dict[str, list[bytes]] = {}
            for tdev, hx in outs:
                dd.setdefault(back[tdev], []).append(bytes.fromhex(hx))
            per_frame.append(dd)
        return per_frame, res["noise"]


# ---------------------------------------------------------------------------------------
# sr6
# ---------------------------------------------------------------------------------------


def run_sr6(sr6_bin: Path, config_text: str, frames: list[tuple[str, bytes]], workdir: Path,
            devs: list[str]) -> tuple[list[dict[str, list[bytes]]], dict]:
    """`sr6 pcap` once per ingress device; frame i has timestamp i s, which sr6 keeps on
    what it emits for it, so outputs are attributed per input frame."""
    cfg = workdir / "sr6.conf"
    cfg.write_text(config_text)
    per_frame: list[dict[str, list[bytes]]] = [{} for _ in frames]
    reports = {}
    for dev in dict.fromkeys(d for d, _ in frames):
        inp = workdir / f"in-{dev}.pcap"
        # Frame i of the batch has timestamp i s, which sr6 keeps on what it emits for it.
        mine = [i for i, (d, _) in enumerate(frames) if d == dev]
        T.write_pcap(inp, [frames[i][1] for i in mine], times=mine)
        outd = workdir / f"sr6-out-{dev}"
        # SR6_FAST_PATH=xdp: the XDP tier's program first (scripts/test.sh runs the
        # forwarding and endpoint files so too, docs/xdp.md).
        tier = ["--fast-path", os.environ["SR6_FAST_PATH"]] if os.environ.get("SR6_FAST_PATH") else []
        p = subprocess.run([str(sr6_bin), "pcap", "--config", str(cfg), "--in", str(inp), "--in-dev", dev,
                            "--out-dir", str(outd), "--json", *tier], capture_output=True, text=True, timeout=120)
        if p.returncode != 0:
            raise RuntimeError(f"sr6 pcap failed ({p.returncode}):\n{p.stderr}\n--- config\n{config_text}")
        reports[dev] = json.loads(p.stdout)
        for f in sorted(outd.glob("*.pcap")):
            for rec in T.read_pcap(f)[1]:
                per_frame[rec.sec].setdefault(f.stem, []).append(rec.data)
    return per_frame, reports


# ---------------------------------------------------------------------------------------
# A run and its comparisons
# ---------------------------------------------------------------------------------------


def _label(i: int, run: "Run") -> str:
    s = f"frame {i}"
    if run.labels and i < len(run.labels) and run.labels[i]:
        s += f" ({run.labels[i]})"
    return s


def _diff(a_name: str, a: bytes, b_name: str, b: bytes) -> str:
    import difflib

    d = difflib.unified_diff(O._show(a).splitlines(), O._show(b).splitlines(), a_name, b_name,
                             lineterm="", n=2)
    return O._hexdump_diff(a, b).replace(" exp ", f" {a_name[:6]} ").replace(" got ", f" {b_name[:6]} ") \
        + "\n" + "\n".join(d)


def _cmp_lists(where: str, a_name: str, a: list[bytes], b_name: str, b: list[bytes]) -> str | None:
    if len(a) != len(b):
        shown = "\n".join(f"--- {a_name}[{k}]\n{O._show(x)}" for k, x in enumerate(a[:2]))
        shown += "\n" + "\n".join(f"--- {b_name}[{k}]\n{O._show(x)}" for k, x in enumerate(b[:2]))
        return f"{where}: {a_name} emitted {len(a)} frame(s), {b_name} {len(b)}\n{shown}"
    for k, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return f"{where}[{k}]: {a_name} and {b_name} differ\n{_diff(a_name, x, b_name, y)}"
    return None


@dataclass
class Run:
    config: str
    frames: list[tuple[str, bytes]]
    kernel: list[dict[str, list[bytes]]]
    sr6: list[dict[str, list[bytes]]]
    ignored: list[list[tuple[str, str]]]        # per frame: (dev, why) of kernel frames not compared
    devs: list[str]
    sr6_reports: dict = field(default_factory=dict)
    labels: list[str] | None = None
    asserted: list[str] = field(default_factory=list)   # "identical" / "difference"
    kernel_probe: object = None                          # what Harness.run's `probe` returned

    def sr6_local(self, i: int) -> list[bytes]:
        return self.sr6[i].get("local", [])

    def compare(self, i: int) -> str | None:
        """None if frame i gives identical output, else a description of the difference."""
        k = {d: list(v) for d, v in self.kernel[i].items()}
        s = self.sr6[i]
        if self.sr6_local(i) and not any(s.get(d) for d in self.devs):
            for d in k:
                k[d] = [f for f in k[d] if not _is_host_reply(f)]
        for d in self.devs:
            msg = _cmp_lists(f"{_label(i, self)} out {d}", "kernel", k.get(d, []), "sr6", s.get(d, []))
            if msg:
                return msg
        return None

    def assert_identical(self, silent=(), indices=None) -> None:
        """Every (or every listed) frame: kernel and sr6 emit the same bytes per device.

        Guard against vacuous passes: every frame must make both emit at least one frame
        on some device, except the indices in ``silent`` (``"all"``: none must)."""
        self.asserted.append("identical")
        idx = list(range(len(self.frames)) if indices is None else indices)
        errs = [m for i in idx if (m := self.compare(i))]
        if errs:
            raise AssertionError(f"{len(errs)} frame(s) differ between the kernel and sr6; first:\n{errs[0]}"
                                 + self._context())
        if silent != "all":
            quiet = [i for i in idx if i not in silent and not any(self.sr6[i].get(d) for d in self.devs)]
            if quiet:
                raise AssertionError(f"frames {quiet} produced no output on either side (identical, but not "
                                     f"what the scenario is for; list them in silent= if intended)"
                                     + self._context())

    def summary(self) -> str:
        rows = []
        for i in range(len(self.frames)):
            k = ",".join(f"{d}:{len(v)}" for d, v in self.kernel[i].items() if v) or "-"
            s = ",".join(f"{d}:{len(v)}" for d, v in self.sr6[i].items() if v) or "-"
            rows.append(f"  {_label(i, self)}: kernel {k}  sr6 {s}  ignored {self.ignored[i] or '-'}")
        return "\n".join(rows)

    def _expect(self, who: str, got: dict, i: int, per_dev: dict) -> None:
        for d in sorted(set(self.devs) | set(per_dev) | ({"local"} if who == "sr6" else set())):
            exp = [bytes(normalise(bytes(x))) for x in per_dev.get(d, [])]
            msg = _cmp_lists(f"{_label(i, self)} out {d}", "expected", exp, who, got.get(d, []))
            if msg:
                raise AssertionError(msg + self._context())

    def expect_kernel(self, i: int, **per_dev) -> None:
        """Documented kernel output for frame i: exact frames per device, others empty."""
        self.asserted.append("difference")
        self._expect("kernel", self.kernel[i], i, per_dev)

    def expect_sr6(self, i: int, **per_dev) -> None:
        """RFC output sr6 must give for frame i (devices and `local`; others empty)."""
        self.asserted.append("difference")
        self._expect("sr6", self.sr6[i], i, per_dev)

    def _context(self) -> str:
        return "\n--- config\n" + self.config


class Harness:
    def __init__(self, sr6_bin: Path, workdir: Path):
        self.sr6_bin = Path(sr6_bin)
        self.workdir = Path(workdir)
        self.n = 0
        self.runs: list[Run] = []

    def run(self, config_text: str, frames, labels=None, probe=None, watch=None) -> Run:
        """frames: [(ingress device, scapy frame or bytes), ...] (or bare frames: eth0).
        probe: called with the kernel router's namespace once the frames went through,
        before it is deleted; what it returns is the run's `kernel_probe`.
        watch: called with that namespace before the frames are sent (a reader that must
        be there first, e.g. `bpftool map event_pipe`); it returns a callable, called once
        the frames went through, whose result is the run's `kernel_probe`."""
        frames = [(f if isinstance(f, tuple) else ("eth0", f)) for f in frames]
        frames = [(d, bytes(f)) for d, f in frames]
        self.n += 1
        wd = self.workdir / f"run{self.n}"
        wd.mkdir(parents=True, exist_ok=True)
        with KernelRouter(config_text, wd) as kr:
            stop = watch(kr.r) if watch else None
            raw, _noise = kr.send(frames)
            devs = kr.devs
            probed = probe(kr.r) if probe else None
            if stop:
                probed = stop()
        sr6_out, reports = run_sr6(self.sr6_bin, config_text, frames, wd, devs)
        kernel, ignored = [], []
        for outs in raw:
            kd, ig = {}, []
            for d, fl in outs.items():
                for f in fl:
                    why = is_noise(f)
                    if why:
                        ig.append((d, why))
                    else:
                        kd.setdefault(d, []).append(normalise(f))
            kernel.append(kd)
            ignored.append(ig)
        sr6n = [{d: [normalise(f) for f in fl] for d, fl in o.items()} for o in sr6_out]
        run = Run(config_text, frames, kernel, sr6n, ignored, devs, reports, labels, kernel_probe=probed)
        self.runs.append(run)
        return run
