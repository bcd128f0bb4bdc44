"""pytest fixtures for the live interoperability suite (tests/live/README.md).

Needs root (namespaces, XDP, raw sockets). The sr6 binary is $SR6_BIN, else
target/release/sr6. Topologies are built once per module and removed at its end.
"""
from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import livenet  # noqa: E402

REPO_ROOT = Path(__file__).resolve().parents[2]


def pytest_sessionstart(session):
    if os.geteuid() == 0 and shutil.which("ip"):
        removed = livenet.sweep_stale()
        if removed:
            print(f"sr6 live: removed stale namespaces {removed}")


@pytest.fixture(scope="session")
def sr6_bin() -> Path:
    if os.geteuid() != 0:
        pytest.fail("the live suite needs root (network namespaces, XDP)", pytrace=False)
    p = Path(os.environ.get("SR6_BIN", REPO_ROOT / "target" / "release" / "sr6"))
    if not (p.is_file() and os.access(p, os.X_OK)):
        pytest.fail(f"sr6 binary not found at {p} (set SR6_BIN or build target/release/sr6)", pytrace=False)
    return p
