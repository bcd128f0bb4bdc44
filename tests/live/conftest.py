"""pytest fixtures for the live interoperability suite (tests/live/README.md).

Needs root, network namespaces and ethtool: without them every test is SKIPPED. The sr6
binary is $SR6_BIN, else target/release/sr6 (tests/sr6test.py); missing, the tests fail.
Topologies are built once per module and removed at its end.
"""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path[:0] = [str(Path(__file__).resolve().parent), str(Path(__file__).resolve().parents[1])]

import livenet  # noqa: E402
import sr6test  # noqa: E402


def pytest_sessionstart(session):
    sr6test.sweep_at_session_start(livenet.NS_PREFIX, "sr6 live")


@pytest.fixture(scope="session")
def sr6_bin() -> Path:
    sr6test.require_netns("the live suite", "ethtool")
    return sr6test.binary_or_fail()
