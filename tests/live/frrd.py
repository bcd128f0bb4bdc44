"""FRR daemons (Debian's frr: zebra, staticd, bgpd ...) run in a test's network
namespace, each with its configuration, sockets and log in one directory of their own
(shared by the daemons of the namespace: zebra's API socket, the vty sockets vtysh
reads). Used by test_fpm.py and test_bgp_feed.py."""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

FRR = Path("/usr/lib/frr")


def installed(*daemons: str) -> bool:
    """Whether these daemons and vtysh are installed (scripts/setup.sh installs them)."""
    return all((FRR / d).exists() for d in daemons) and shutil.which("vtysh") is not None


class Frr:
    """FRR's daemons in namespace `ns`, `confs` their configurations by daemon name."""

    def __init__(self, ns: str, confs: dict[str, str]):
        self.ns, self.procs = ns, {}
        self.d = Path(tempfile.mkdtemp(prefix="sr6-frr-"))
        os.chmod(self.d, 0o777)
        for daemon, conf in confs.items():
            (self.d / f"{daemon}.conf").write_text(conf)

    def start(self, daemon: str) -> None:
        # As Debian's user frr (whose vty group the daemons check), hence a directory
        # of its own that frr may write.
        args = ["ip", "netns", "exec", self.ns, str(FRR / daemon), "-f", str(self.d / f"{daemon}.conf"),
                "-i", str(self.d / f"{daemon}.pid"), "-z", str(self.d / "zserv.api"), "--vty_socket", str(self.d),
                "--log", f"file:{self.d / daemon}.log"]
        if daemon == "zebra" and "fpm address" in (self.d / "zebra.conf").read_text():
            args += ["-M", "dplane_fpm_nl"]
        self.procs[daemon] = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT,
                                              start_new_session=True)
        deadline = time.monotonic() + 15
        while not (self.d / f"{daemon}.vty").exists():
            if self.procs[daemon].poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"{daemon} did not start: {self.log(daemon)}")
            time.sleep(0.05)

    def stop(self, daemon: str) -> None:
        p = self.procs.pop(daemon, None)
        if p is not None and p.poll() is None:
            os.killpg(p.pid, signal.SIGTERM)
            try:
                p.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
        for f in (f"{daemon}.vty", f"{daemon}.pid"):
            (self.d / f).unlink(missing_ok=True)

    def vtysh(self, *commands: str) -> str:
        argv = ["ip", "netns", "exec", self.ns, "vtysh", "--vty_socket", str(self.d)]
        for c in commands:
            argv += ["-c", c]
        return subprocess.run(argv, capture_output=True, text=True, timeout=20, check=True).stdout

    def log(self, daemon: str) -> str:
        f = self.d / f"{daemon}.log"
        return f.read_text() if f.exists() else "(no log)"

    def close(self) -> None:
        # The protocols first, zebra last (it removes their routes from the kernel).
        for daemon in sorted(self.procs, key=lambda d: d == "zebra"):
            self.stop(daemon)
        shutil.rmtree(self.d, ignore_errors=True)
