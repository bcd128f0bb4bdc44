"""pytest fixtures for the kernel comparison suite (tests/kernel/README.md).

* ``kernel`` -- a :class:`kharness.Harness`: ``kernel.run(config, [(dev, frame), ...])``.
  At teardown it removes any namespace still alive and checks that the test asserted what
  its ``@scenario`` mark says (IDENTICAL -> only ``assert_identical``; DIFFERENCE -> at
  least one ``expect_kernel``/``expect_sr6``; PER_FLOW -> the per-flow checks).
* Needs root and network namespaces: without them every test is SKIPPED. The sr6 binary
  is ``$SR6_BIN``, else target/release/sr6 (tests/sr6test.py); missing, the tests fail.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path[:0] = [str(Path(__file__).resolve().parent), str(Path(__file__).resolve().parents[1])]

import kharness  # noqa: E402
import sr6test  # noqa: E402


def pytest_sessionstart(session):
    # Namespaces left by a run that was killed (its PID is gone).
    sr6test.sweep_at_session_start(kharness.NS_PREFIX, "sr6k")


def pytest_sessionfinish(session, exitstatus):
    sr6test.cleanup_netns()


@pytest.fixture(scope="session")
def sr6_bin() -> Path:
    sr6test.require_netns("the kernel comparison suite")
    return sr6test.binary_or_fail()


@pytest.fixture
def kernel(sr6_bin, tmp_path, request):
    h = kharness.Harness(sr6_bin, tmp_path)
    request.addfinalizer(sr6test.cleanup_netns)
    yield h
    mark = getattr(request.node.function, "_sr6k_mark", None)
    asserted = {a for r in h.runs for a in r.asserted}
    if mark is None:
        return
    if mark.kind == "per-flow":
        assert asserted == {"per-flow"}, f"PER_FLOW scenario must assert per flow only (did: {asserted})"
    elif mark.kind in ("identical", "sr6-bug"):
        assert asserted == {"identical"}, f"IDENTICAL scenario must call assert_identical() only (did: {asserted})"
    else:
        assert "difference" in asserted, "DIFFERENCE scenario must assert the kernel's and sr6's outputs"


def pytest_report_header(config):
    seed = os.environ.get("SR6K_SEED", "20240601 (default)")
    return [f"sr6k: random seed {seed} (set SR6K_SEED to change; SR6K_ONLY=B:I replays one packet)",
            f"sr6k: sr6 binary {_describe_binary()}"]


def _describe_binary() -> str:
    try:
        return str(sr6test.binary())
    except sr6test.BinaryNotFound as e:
        return str(e)
