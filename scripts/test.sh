#!/usr/bin/env bash
# The whole test suite: Rust unit/property/integration tests, the scapy oracle suite
# (with tshark decoding every emitted frame), and the byte-for-byte comparison with the
# Linux kernel in network namespaces (root), and `sr6 run` interoperating with kernel
# SRv6 routers in namespaces (root), all against the release binary.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
PY=$PWD/.venv/bin/python
if [ ! -x "$PY" ]; then
  echo "test.sh: $PY is missing: run bash scripts/setup.sh (it makes .venv)" >&2
  exit 1
fi
echo "== cargo test (workspace)"
cargo test --workspace --quiet 2>&1 | tail -n +1
echo "== build release binary"
cargo build --release --quiet -p sr6
echo "== oracle suite (scapy + tshark)"
SR6_BIN="$PWD/target/release/sr6" "$PY" -m pytest tests/oracle -q
echo "== kernel comparison suite (network namespaces; needs root)"
if [ "$(id -u)" = 0 ]; then
  SR6_BIN="$PWD/target/release/sr6" "$PY" -m pytest tests/kernel -q
  echo "== live interoperability suite (sr6 run with Linux kernel routers in namespaces)"
  SR6_BIN="$PWD/target/release/sr6" "$PY" -m pytest tests/live -q
  echo "== sr6 perf: a short real run (testbed, both drivers, traffic, search, report)"
  SR6_BIN="$PWD/target/release/sr6" "$PY" -m pytest tests/perf -q
else
  echo "not root: the kernel comparison suite needs network namespaces; run as root" >&2
  exit 1
fi
