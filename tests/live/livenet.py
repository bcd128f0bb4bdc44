"""Network-namespace topologies for the live interoperability tests (tests/live/README.md).

``Net`` creates namespaces (unique names: ``sr6l<pid>-<n>-<tag><name>``), veth links between
them, configures Linux kernel routers and hosts with iproute2 lines, and starts
``sr6 run`` on the sr6 nodes. Everything it made is removed by ``close()`` (also at
interpreter exit, and stale namespaces of dead runs at the next session start).

A kernel router gets its config lines applied to the kernel as they are. An sr6 node
gets the same lines as a file for ``sr6 run``; its kernel only gets the device
addresses (so the kernel answers neighbour discovery and ARP for them) and keeps IPv6
and IPv4 forwarding **off**: only sr6 can be forwarding there.
"""
from __future__ import annotations

import atexit
import json
import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sr6test import (  # noqa: E402  (shared with the other suites)
    config_commands, is_addr_add, kernel_command, netns_add, netns_del, netns_list, netns_name, sh,
)

HERE = Path(__file__).resolve().parent
TRAFFIC = HERE / "traffic.py"
NS_PREFIX = "sr6l"
_LIVE: list["Net"] = []


KERNEL_SYSCTLS = [
    "net.ipv6.conf.all.accept_dad=0", "net.ipv6.conf.default.accept_dad=0",
    "net.ipv6.conf.all.accept_ra=0", "net.ipv6.conf.default.accept_ra=0",
    "net.ipv4.conf.all.rp_filter=0", "net.ipv4.conf.default.rp_filter=0",
]


class Sr6:
    """A running `sr6 run` in a namespace."""

    def __init__(self, net: "Net", ns: str, conf: Path, sock: Path, log: Path, proc: subprocess.Popen):
        self.net, self.ns, self.conf, self.sock, self.log, self.proc = net, ns, conf, sock, log, proc

    def ctl(self, *args: str, check: bool = True) -> str:
        r = subprocess.run([str(self.net.sr6_bin), "ctl", "--socket", str(self.sock), *args],
                           capture_output=True, text=True, timeout=30)
        if check and r.returncode != 0:
            raise RuntimeError(f"sr6 ctl {' '.join(args)}: {r.stderr.strip()}\n--- sr6 log:\n{self.log_text()}")
        return r.stdout if r.returncode == 0 else r.stderr

    def ctl_json(self, *args: str):
        return json.loads(self.ctl(*args, "--json"))

    def sid(self, sid: str) -> dict:
        for s in self.ctl_json("show", "sids"):
            if s["sid"] == sid:
                return s
        raise KeyError(f"SID {sid} not in `show sids`")

    def log_text(self) -> str:
        try:
            return self.log.read_text()
        except OSError:
            return ""

    def stop(self) -> str:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.log_text()


class Net:
    def __init__(self, sr6_bin: Path, workdir: Path, tag: str = ""):
        self.sr6_bin = Path(sr6_bin)
        self.dir = Path(workdir)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.prefix = netns_name(NS_PREFIX) + tag
        self.namespaces: list[str] = []
        self.sr6s: list[Sr6] = []
        _LIVE.append(self)

    # -- building -------------------------------------------------------------------------
    def ns(self, name: str) -> str:
        full = netns_add(f"{self.prefix}{name}")
        self.namespaces.append(full)
        sh(["ip", "-n", full, "link", "set", "lo", "up"])
        sh(["ip", "netns", "exec", full, "sysctl", "-qw", *KERNEL_SYSCTLS])
        return full

    def link(self, a: str, a_if: str, b: str, b_if: str) -> None:
        sh(["ip", "link", "add", a_if, "netns", a, "type", "veth", "peer", "name", b_if, "netns", b])
        sh(["ip", "-n", a, "link", "set", a_if, "up"])
        sh(["ip", "-n", b, "link", "set", b_if, "up"])
        # A veth sender that leaves the checksum to "hardware" sends it incomplete; a
        # real wire always carries complete checksums, so the offload is turned off.
        for ns, dev in ((a, a_if), (b, b_if)):
            sh(["ip", "netns", "exec", ns, "ethtool", "-K", dev, "tx", "off"])

    def kernel(self, ns: str, config: str, forwarding: bool = True) -> None:
        """Applies iproute2/sysctl lines to the kernel of `ns` (a kernel router or host)."""
        fwd = "1" if forwarding else "0"
        sh(["ip", "netns", "exec", ns, "sysctl", "-qw", f"net.ipv6.conf.all.forwarding={fwd}", f"net.ipv4.ip_forward={fwd}"])
        for w in config_commands(config):
            argv, stdin = kernel_command(w, ns)
            sh(argv, stdin=stdin)

    def sr6(self, ns: str, config: str, backend: str = "auto", extra: list[str] | None = None) -> Sr6:
        """Starts `sr6 run` in `ns` on `config`; the kernel of `ns` gets the addresses
        only, with forwarding off."""
        name = ns[len(self.prefix):]
        conf = self.dir / f"{name}.conf"
        conf.write_text(config)
        addr_lines = "\n".join(shlex.join(w) for w in config_commands(config) if is_addr_add(w))
        self.kernel(ns, addr_lines, forwarding=False)
        sock = self.dir / f"{name}.sock"
        log = self.dir / f"{name}.log"
        extra = list(extra or [])
        # SR6_LIVE_FAST_PATH=off (scripts/test.sh's second pass): the AF_XDP tier alone,
        # unless the test chose a tier itself.
        tier = os.environ.get("SR6_LIVE_FAST_PATH")
        if tier and "--fast-path" not in extra:
            extra += ["--fast-path", tier]
        argv = ["ip", "netns", "exec", ns, str(self.sr6_bin), "run", "--config", str(conf),
                "--socket", str(sock), "--backend", backend, "--verbose", *extra]
        proc = subprocess.Popen(argv, stdout=open(log, "w"), stderr=subprocess.STDOUT, start_new_session=True)
        s = Sr6(self, ns, conf, sock, log, proc)
        self.sr6s.append(s)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise RuntimeError(f"sr6 run exited with {proc.returncode}:\n{s.log_text()}")
            if sock.exists():
                try:
                    status = s.ctl_json("show", "status")
                except RuntimeError:
                    status = None
                if status is not None:
                    if "--fast-path" in extra and extra[extra.index("--fast-path") + 1] == "off":
                        # The pass is about the AF_XDP tier: no device may run the other.
                        on = {d: t for d, t in status["tiers"].items() if t.startswith("xdp")}
                        assert not on, f"--fast-path off, yet the XDP tier runs: {on}"
                    return s
            time.sleep(0.05)
        raise RuntimeError(f"sr6 run did not come up in 20 s:\n{s.log_text()}")

    # -- traffic --------------------------------------------------------------------------
    def udp(self, src_ns: str, dst_ns: str, dst: str, count: int, rate: float = 2000, port: int = 9999,
            idle: float = 3.0, during=None) -> dict:
        """Sends `count` UDP datagrams from `src_ns` to `dst` (in `dst_ns`); returns the
        receiver's counts. `during(sender_proc)` runs while the sender is sending."""
        rx = subprocess.Popen(["ip", "netns", "exec", dst_ns, sys.executable, str(TRAFFIC), "recv", str(port),
                               str(count), str(idle)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert rx.stderr.readline().strip() == "ready", "receiver did not start"
        tx = subprocess.Popen(["ip", "netns", "exec", src_ns, sys.executable, str(TRAFFIC), "send", dst, str(port),
                               str(count), str(rate)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if during is not None:
            during(tx)
        out, err = tx.communicate(timeout=120)
        if tx.returncode != 0:
            rx.kill()
            raise RuntimeError(f"sender failed: {err}")
        rout, rerr = rx.communicate(timeout=120)
        res = json.loads(rout)
        res["sent"] = json.loads(out)["sent"]
        return res

    def ping(self, ns: str, dst: str, count: int = 3) -> bool:
        r = subprocess.run(["ip", "netns", "exec", ns, "ping", "-c", str(count), "-i", "0.2", "-W", "2", dst],
                           capture_output=True, text=True)
        return r.returncode == 0

    # -- teardown -------------------------------------------------------------------------
    def close(self) -> None:
        for s in self.sr6s:
            s.stop()
        self.sr6s = []
        for n in self.namespaces:
            netns_del(n)
        self.namespaces = []
        if self in _LIVE:
            _LIVE.remove(self)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


@atexit.register
def _cleanup_all() -> None:
    for n in list(_LIVE):
        n.close()


def run_demo_check(script: Path, env: dict, prefix: str, checks: int, timeout: int = 300) -> None:
    """Runs an example's demo script with ``--check`` (environment `env` on top of ours:
    the binary under test, the namespace prefix, the backend), removes the namespaces
    named `prefix` it left if it was killed, and asserts that it passed and printed
    exactly `checks` PASS lines."""
    proc = subprocess.Popen(["bash", str(script), "--check"], env={**os.environ, **env}, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        out += f"\n(timed out after {timeout} s)"
    finally:
        for n in netns_list():  # the script removes them itself unless it was killed
            if n.startswith(prefix):
                netns_del(n)
    passed = out.count("\n  PASS  ")
    assert proc.returncode == 0 and passed == checks, f"{passed} of {checks} checks passed:\n{out}"
