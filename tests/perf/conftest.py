"""pytest fixtures for the short real `sr6 perf run` (tests/perf).

Needs root, network namespaces and pgrep: without them every test is SKIPPED. The sr6
binary is $SR6_BIN, else target/release/sr6 (tests/sr6test.py); missing, the tests fail.
(`sr6 perf` sweeps its own stale `sr6p<pid>-` namespaces.)
"""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import sr6test  # noqa: E402


@pytest.fixture(scope="session")
def sr6_bin() -> Path:
    sr6test.require_netns("sr6 perf", "pgrep")
    return sr6test.binary_or_fail()
