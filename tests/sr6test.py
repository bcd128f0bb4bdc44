"""Helpers shared by sr6's Python suites (tests/oracle, tests/kernel, tests/live,
tests/perf): one definition of each, instead of one per suite.

* :func:`binary` -- where the binary under test is (``$SR6_BIN``, else
  ``target/release/sr6`` under the repo root); :func:`binary_or_fail` for fixtures.
* :func:`config_commands` -- a config text as its commands (word lists), split exactly as
  sr6's config parser splits it (crates/config/src/lex.rs and ``parse_into`` in
  crates/config/src/lib.rs); :func:`split_ip`, :func:`is_addr_add` and
  :func:`kernel_command` -- what a config command is and its form for a Linux kernel in a
  namespace (iproute2).
* :func:`netns_problem` / :func:`require_netns` -- can this process make network
  namespaces (root, ``ip``, the kernel allows it) and has it the tools a suite needs;
  if not, the tests that need them are SKIPPED (never passed without running).
* :func:`netns_name`, :func:`netns_add`, :func:`netns_del`, :func:`cleanup_netns`,
  :func:`sweep_stale_netns` -- unique namespace names (``PREFIX<pid>-<n>-...``), every
  namespace this process made deleted at exit, and the ones of killed runs deleted at the
  next session start.
* :func:`run` / :func:`sh` -- a command, its output captured, an error that says which
  command failed.
* :func:`read_pcap` / :func:`write_pcap` -- classic pcap files, byte for byte, with the
  timestamps the caller chooses.

Standard library only (pytest is imported only by the helpers that skip or fail a test),
so that scripts outside pytest (tests/kernel/gen_docs.py) can import it too.
"""
from __future__ import annotations

import atexit
import functools
import itertools
import os
import re
import shlex
import shutil
import struct
import subprocess
import threading
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]

# ---------------------------------------------------------------------------------------
# The binary under test
# ---------------------------------------------------------------------------------------


class BinaryNotFound(RuntimeError):
    pass


def binary(name: str = "sr6") -> Path:
    """The binary ``name`` under test: ``$SR6_BIN`` for ``sr6`` (``$SR6_PERF_BIN`` for
    ``sr6-perf``: the name upper-cased, ``-`` as ``_``, then ``_BIN``), else
    ``target/release/NAME`` under the repo root. Raises :class:`BinaryNotFound`, saying
    where it looked and how to build it, when that is not an executable file."""
    var = name.upper().replace("-", "_") + "_BIN"
    env = os.environ.get(var)
    p = Path(env) if env else REPO_ROOT / "target" / "release" / name
    if not (p.is_file() and os.access(p, os.X_OK)):
        where = f"{var}={env}" if env else f"{p} ({var} is not set)"
        raise BinaryNotFound(f"{name} binary not found or not executable: {where}; build it with "
                             f"`cargo build --release --workspace --bins` or set {var}")
    return p


def binary_or_fail(name: str = "sr6") -> Path:
    """:func:`binary`, failing the test (not skipping it) when the binary is missing: a
    missing build is an error, not an environment the tests cannot run in."""
    try:
        return binary(name)
    except BinaryNotFound as e:
        import pytest

        pytest.fail(str(e), pytrace=False)


# ---------------------------------------------------------------------------------------
# Config text -> commands, as sr6's parser reads it
# ---------------------------------------------------------------------------------------


class ConfigSyntaxError(ValueError):
    def __init__(self, line: int, col: int, message: str):
        super().__init__(f"line {line}, column {col}: {message}")
        self.line, self.col = line, col


def _lex_line(s: str, line_no: int) -> tuple[list[str], bool]:
    """One physical line as words, and whether it ends with a continuation `\\`.

    A port of ``lex_line`` (crates/config/src/lex.rs): words are separated by whitespace;
    ``#`` at the START of a word begins a comment to the end of the line (``key#1`` is one
    word, and a ``\\`` inside a comment continues nothing); ``"..."`` (with ``\\"`` and
    ``\\\\`` escapes) and ``'...'`` quote, on one line, and may be empty; outside quotes
    ``\\x`` is ``x``; ``\\`` followed only by whitespace ends the word and continues the
    command on the next line."""
    n, i, toks = len(s), 0, []
    while True:
        while i < n and s[i].isspace():
            i += 1
        if i >= n or s[i] == "#":
            return toks, False
        start, text, quoted, continues, end = i, [], False, False, None
        while i < n and not s[i].isspace():
            c = s[i]
            if c in "\"'":
                quoted, opening = True, i
                i += 1
                while True:
                    if i >= n:
                        raise ConfigSyntaxError(line_no, opening + 1, "unterminated quote")
                    d = s[i]
                    if d == c:
                        i += 1
                        break
                    if c == '"' and d == "\\" and i + 1 < n and s[i + 1] in "\"\\":
                        text.append(s[i + 1])
                        i += 2
                    else:
                        text.append(d)
                        i += 1
            elif c == "\\":
                if s[i + 1:].strip() == "":
                    continues, end, i = True, i, n
                    break
                text.append(s[i + 1])
                i += 2
            else:
                text.append(c)
                i += 1
        end = i if end is None else end
        if end > start and (quoted or text):
            toks.append("".join(text))
        if continues:
            return toks, True


def _physical_lines(text: str) -> list[str]:
    """Rust's ``str::lines``: split at ``\\n``, one trailing ``\\r`` dropped from each
    line, no empty line after a final newline (a leading byte-order mark is dropped first,
    as ``parse_into`` does)."""
    text = text.removeprefix("\ufeff")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [ln[:-1] if ln.endswith("\r") else ln for ln in lines]


def config_commands(text: str) -> list[list[str]]:
    """The commands of a config text as word lists, as sr6 reads them.

    Each physical line is split by :func:`_lex_line`; a line ending in a continuation
    ``\\`` joins the next (the words of both form one command); lines with no words (blank,
    comment only) are skipped; a leading ``sudo`` word is dropped (crates/config/src/cmd.rs
    ``parse_command``). Raises :class:`ConfigSyntaxError` for an unterminated quote, a
    continuation with nothing after it, or a lone ``sudo`` -- where sr6 refuses the config
    too. (Whitespace is Python's ``str.isspace``; Rust's ``char::is_whitespace`` differs
    only for the control characters U+001C..U+001F.)"""
    out: list[list[str]] = []
    pending: list[str] = []
    continued: tuple[int, int] | None = None
    for no, raw in enumerate(_physical_lines(text), 1):
        toks, cont = _lex_line(raw, no)
        pending += toks
        if cont:
            continued = (no, raw.rstrip().rindex("\\") + 1)
            continue
        continued = None
        if not pending:
            continue
        if pending[0] == "sudo":
            if len(pending) == 1:
                raise ConfigSyntaxError(no, 1, "`sudo` and no command")
            pending = pending[1:]
        out.append(pending)
        pending = []
    if continued:
        raise ConfigSyntaxError(*continued, "`\\` continues the command but nothing follows")
    return out


def split_ip(words: list[str]) -> tuple[list[str], list[str]] | None:
    """``(ip options, object words)`` of an ``ip`` command (sr6 accepts it without the
    leading ``ip``), or None for a ``sysctl`` command. ``-f``/``-family`` take a value."""
    if words[0] in ("sysctl", "ip6tables", "nft"):
        return None
    if words[0] != "ip":
        return [], list(words)
    opts, i = [], 1
    while i < len(words) and words[i].startswith("-"):
        opts.append(words[i])
        if words[i] in ("-f", "-family") and i + 1 < len(words):
            opts.append(words[i + 1])
            i += 1
        i += 1
    return opts, words[i:]


def is_addr_add(words: list[str]) -> bool:
    """Is this an ``[ip [OPTIONS]] address add|replace ...`` command (any abbreviation of
    ``address``, as iproute2 accepts: ``a``, ``addr``...)?"""
    sp = split_ip(words)
    if sp is None:
        return False
    rest = sp[1]
    return len(rest) >= 2 and bool(rest[0]) and "address".startswith(rest[0]) and rest[1] in ("add", "replace", "a")


def kernel_command(words: list[str], ns: str) -> tuple[list[str], str | None]:
    """The form of one config command for the Linux kernel of namespace ``ns``:
    ``(argv, stdin)``.

    * ``sysctl ...``, ``ip6tables ...`` and ``nft ...`` run in the namespace (``ip netns exec NS ...``);
    * ``ip sr hmac set KEYID ALG SECRET``: iproute2 reads the secret with getpass, so it
      is given on stdin (run it without a controlling terminal: :func:`run` does);
    * an IPv6 ``address add`` gets ``nodad`` (usable at once, no DAD probes on the wire);
    * everything else is ``ip -n NS [OPTIONS] ...`` as written."""
    sp = split_ip(words)
    if sp is None:
        return ["ip", "netns", "exec", ns, *words], None
    opts, rest = sp
    if rest[:3] == ["sr", "hmac", "set"] and len(rest) == 6:
        return ["ip", "netns", "exec", ns, "ip", *opts, "sr", "hmac", "set", rest[3], rest[4]], rest[5] + "\n"
    if is_addr_add(words) and "nodad" not in rest and any(":" in w and "/" in w or w.count(":") >= 2 for w in rest):
        rest = [*rest, "nodad"]
    return ["ip", "-n", ns, *opts, *rest], None


# ---------------------------------------------------------------------------------------
# Commands
# ---------------------------------------------------------------------------------------


def run(argv: list[str], stdin: str | None = None, check: bool = True, timeout: float = 60) -> subprocess.CompletedProcess:
    """Runs ``argv`` with its output captured (text). ``start_new_session``: no
    controlling terminal, so ``ip sr hmac set`` (getpass) reads its secret from stdin.
    ``check``: a non-zero exit raises RuntimeError with the command and its stderr."""
    p = subprocess.run(argv, input=stdin, capture_output=True, text=True, timeout=timeout, start_new_session=True)
    if check and p.returncode != 0:
        raise RuntimeError(f"command failed ({p.returncode}): {shlex.join(argv)}\n{p.stderr.strip()}")
    return p


def sh(argv: list[str], stdin: str | None = None, check: bool = True, timeout: float = 60) -> str:
    """:func:`run`, returning stdout."""
    return run(argv, stdin=stdin, check=check, timeout=timeout).stdout


# ---------------------------------------------------------------------------------------
# Can this process use network namespaces? Skip, never pass, when it cannot
# ---------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=None)
def netns_problem(*tools: str) -> str | None:
    """Why tests needing network namespaces (and ``tools`` on PATH) cannot run here, or
    None: not root, no ``ip`` (iproute2), the kernel refusing ``ip netns add`` (a
    container without CAP_SYS_ADMIN), a missing tool. Probed once per process."""
    if os.geteuid() != 0:
        return "needs root (network namespaces)"
    missing = [t for t in ("ip", *tools) if shutil.which(t) is None]
    if missing:
        return f"needs {', '.join(missing)} on PATH (bash scripts/setup.sh installs them)"
    probe = f"sr6probe{os.getpid()}"
    p = run(["ip", "netns", "add", probe], check=False)
    if p.returncode != 0:
        return f"cannot create a network namespace (`ip netns add`: {p.stderr.strip()})"
    run(["ip", "netns", "del", probe], check=False)
    return None


def require_netns(what: str, *tools: str) -> None:
    """Skip the calling test (or every test of a fixture that calls it) when
    :func:`netns_problem` says namespaces or ``tools`` are unavailable."""
    why = netns_problem(*tools)
    if why:
        import pytest

        pytest.skip(f"{what}: {why}")


# ---------------------------------------------------------------------------------------
# Namespaces: unique names, always removed
# ---------------------------------------------------------------------------------------

_CREATED: set[str] = set()
_COUNTER = itertools.count(1)
_LOCK = threading.Lock()


def netns_name(prefix: str) -> str:
    """A fresh name stem ``PREFIX<pid>-<n>-`` (append what you like): unique in this
    process, and the pid tells :func:`sweep_stale_netns` whether its run is still alive."""
    with _LOCK:
        n = next(_COUNTER)
    return f"{prefix}{os.getpid()}-{n}-"


def netns_add(name: str) -> str:
    """``ip netns add NAME``, remembered for :func:`cleanup_netns` (even if adding fails
    half way)."""
    _CREATED.add(name)
    run(["ip", "netns", "add", name])
    return name


def netns_del(name: str) -> None:
    run(["ip", "netns", "del", name], check=False)
    _CREATED.discard(name)


def cleanup_netns() -> None:
    """Delete every namespace this process made and has not deleted yet (also at exit)."""
    for ns in sorted(_CREATED):
        netns_del(ns)


atexit.register(cleanup_netns)


def netns_list() -> list[str]:
    return [ln.split()[0] for ln in sh(["ip", "netns", "list"], check=False).splitlines() if ln.strip()]


def sweep_stale_netns(prefix: str) -> list[str]:
    """Delete the ``PREFIX<pid>-...`` namespaces whose process is gone (left by a run
    that was killed); those of live processes (a parallel run) are left alone."""
    pat = re.compile(rf"^{re.escape(prefix)}(\d+)-")
    removed = []
    for ns in netns_list():
        m = pat.match(ns)
        if m and not Path(f"/proc/{m.group(1)}").exists():
            netns_del(ns)
            removed.append(ns)
    return removed


def sweep_at_session_start(prefix: str, label: str) -> None:
    """For ``pytest_sessionstart``: sweep stale ``prefix`` namespaces when namespaces are
    usable here (else there is nothing to sweep, and the tests will skip)."""
    if netns_problem() is None:
        removed = sweep_stale_netns(prefix)
        if removed:
            print(f"{label}: removed stale namespaces {removed}")


# ---------------------------------------------------------------------------------------
# pcap files
# ---------------------------------------------------------------------------------------

LINKTYPE_ETHERNET = 1
_PCAP_MAGIC = {b"\xd4\xc3\xb2\xa1": "<", b"\x4d\x3c\xb2\xa1": "<",   # microseconds, nanoseconds
               b"\xa1\xb2\xc3\xd4": ">", b"\xa1\xb2\x3c\x4d": ">"}


@dataclass(frozen=True)
class PcapRecord:
    sec: int         # timestamp, seconds
    frac: int        # and its fraction (micro- or nanoseconds, as the file's magic says)
    orig_len: int    # the frame's length on the wire (> len(data) when cut by a snap length)
    data: bytes      # the bytes captured


def read_pcap(path: Path) -> tuple[int, list[PcapRecord]]:
    """``(link type, records)`` of a classic pcap file (either byte order, micro- or
    nanosecond timestamps). Raises ValueError, naming the file and the offset, for
    anything else or a truncated record."""
    path = Path(path)
    data = path.read_bytes()
    e = _PCAP_MAGIC.get(data[:4])
    if e is None or len(data) < 24:
        raise ValueError(f"{path.name}: not a classic pcap file (magic {data[:4].hex()}, {len(data)} bytes)")
    linktype = struct.unpack(e + "I", data[20:24])[0] & 0x0FFFFFFF
    out, off = [], 24
    while off < len(data):
        if off + 16 > len(data):
            raise ValueError(f"{path.name}: truncated record header at offset {off}")
        sec, frac, incl, orig = struct.unpack(e + "IIII", data[off:off + 16])
        off += 16
        if off + incl > len(data):
            raise ValueError(f"{path.name}: truncated record at offset {off}")
        out.append(PcapRecord(sec, frac, orig, data[off:off + incl]))
        off += incl
    return linktype, out


def write_pcap(path: Path, frames, times=None, linktype: int = LINKTYPE_ETHERNET) -> None:
    """Write ``frames`` (bytes, or anything ``bytes()`` accepts: scapy packets) byte for
    byte, garbage included, as a little-endian microsecond pcap. Frame i has timestamp
    ``times[i]`` whole seconds (default 0: no clock in the input)."""
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 262144, linktype))
        for i, fr in enumerate(frames):
            fr = bytes(fr)
            f.write(struct.pack("<IIII", times[i] if times is not None else 0, 0, len(fr), len(fr)))
            f.write(fr)
