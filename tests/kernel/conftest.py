"""pytest fixtures for the kernel comparison suite (tests/kernel/README.md).

* ``kernel`` -- a :class:`kharness.Harness`: ``kernel.run(config, [(dev, frame), ...])``.
  At teardown it removes any namespace still alive and checks that the test asserted what
  its ``@scenario`` mark says (IDENTICAL -> only ``assert_identical``; DIFFERENCE -> at
  least one ``expect_kernel``/``expect_sr6``).
* Needs root (namespaces); the sr6 binary is ``$SR6_BIN``, else target/release/sr6.
"""
from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import kharness  # noqa: E402

REPO_ROOT = Path(__file__).resolve().parents[2]


_sr6_bin = kharness.O.find_binary  # the oracle suite's: one definition for both


def pytest_sessionstart(session):
    # Namespaces left by a run that was killed (its PID is gone).
    if os.geteuid() == 0 and shutil.which("ip"):
        removed = kharness.sweep_stale()
        if removed:
            print(f"sr6k: removed stale namespaces {removed}")


def pytest_sessionfinish(session, exitstatus):
    kharness.cleanup_all()


@pytest.fixture(scope="session")
def sr6_bin() -> Path:
    if os.geteuid() != 0:
        pytest.fail("the kernel comparison suite needs root (network namespaces)", pytrace=False)
    p = _sr6_bin()
    if p is None or not (p.is_file() and os.access(p, os.X_OK)):
        pytest.fail(f"sr6 binary not found (SR6_BIN={os.environ.get('SR6_BIN')}; or build target/release/sr6)",
                    pytrace=False)
    return p


@pytest.fixture
def kernel(sr6_bin, tmp_path, request):
    h = kharness.Harness(sr6_bin, tmp_path)
    request.addfinalizer(kharness.cleanup_all)
    yield h
    mark = getattr(request.node.function, "_sr6k_mark", None)
    asserted = {a for r in h.runs for a in r.asserted}
    if mark is None:
        return
    if mark.kind in ("identical", "sr6-bug"):
        assert asserted == {"identical"}, f"IDENTICAL scenario must call assert_identical() only (did: {asserted})"
    else:
        assert "difference" in asserted, "DIFFERENCE scenario must assert the kernel's and sr6's outputs"


def pytest_report_header(config):
    seed = os.environ.get("SR6K_SEED", "20240601 (default)")
    return [f"sr6k: random seed {seed} (set SR6K_SEED to change; SR6K_ONLY=B:I replays one packet)",
            f"sr6k: sr6 binary {_sr6_bin()}"]
