#!/usr/bin/env bash
# The whole test suite: Rust unit/property/integration tests, then the scapy oracle
# suite (with tshark decoding every emitted frame) against the release binary.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
echo "== cargo test (workspace)"
cargo test --workspace --quiet 2>&1 | tail -n +1
echo "== build release binary"
cargo build --release --quiet -p sr6
echo "== oracle suite (scapy + tshark)"
SR6_BIN="$PWD/target/release/sr6" python3 -m pytest tests/oracle -q
