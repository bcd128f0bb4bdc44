#!/usr/bin/env bash
# The whole test suite, in order, stopping at the first step that fails:
#   rustfmt and clippy (warnings are errors); the release binaries (sr6 and the others of
#   the workspace); the Rust unit/property/integration tests (as root also the root-only
#   ones, marked #[ignore]); the BPF tests again under Debian 12's kernel in QEMU; the
#   scapy oracle suite (with tshark decoding every emitted frame); the byte-for-byte
#   comparison with the Linux kernel in network namespaces (its forwarding and endpoint
#   scenarios a second time through the XDP tier); `sr6 run` interoperating with kernel
#   SRv6 routers in namespaces; a short real `sr6 perf run` -- all against the release
#   binary.
# The namespace suites need root: without it (or without namespaces) pytest reports
# their tests as SKIPPED, and this script says so at the end.
# Python is .venv/bin/python (scripts/setup.sh makes it; run first, here).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
T0=$SECONDS

# One step: "== NAME", the command, its time; on failure the step is named and the
# script stops with the command's status.
step() {
  local name=$1 t=$SECONDS rc=0
  shift
  echo "== $name"
  "$@" || rc=$?
  if [ $rc != 0 ]; then
    echo "test.sh: FAILED at \"$name\" (exit status $rc): $*" >&2
    exit $rc
  fi
  echo "   ($name: $((SECONDS - t)) s)"
}

step "setup (apt packages, .venv)" bash scripts/setup.sh
PY=$ROOT/.venv/bin/python
if [ ! -x "$PY" ]; then
  echo "test.sh: $PY is missing: run bash scripts/setup.sh (it makes .venv)" >&2
  exit 1
fi

root=0
[ "$(id -u)" = 0 ] && root=1

step "cargo fmt --all --check" cargo fmt --all --check
step "cargo clippy (warnings are errors)" cargo clippy --workspace --all-targets --quiet -- -D warnings
step "build release binaries" cargo build --release --workspace --bins --quiet
# cargo test, one line per test binary saying whose it is ("crates/io/tests/x.rs",
# "sr6_io unit tests", "sr6_io doc tests") and its result; the whole output is kept in
# target/cargo-test.log and its failures are printed when one fails.
cargo_test() {
  local log=$ROOT/target/cargo-test.log rc=0
  mkdir -p "$ROOT/target"
  cargo test --workspace --release "$@" >"$log" 2>&1 || rc=$?
  awk -v tests="$(ls crates/*/tests/*.rs | tr '\n' ' ')" '
    BEGIN { n = split(tests, t, " "); for (i = 1; i <= n; i++) { f = t[i]; sub(/^crates\/[^\/]*\//, "", f); where[f] = t[i] } }
    /^ +Running unittests / { d = $NF; sub(/.*\/deps\//, "", d); sub(/-[0-9a-f]+\)$/, "", d); name = d " unit tests (" $3 ")"; next }
    /^ +Running / { name = ($2 in where) ? where[$2] : $2; next }
    /^ +Doc-tests / { name = $2 " doc tests"; next }
    /^test result:/ { r = $0; sub(/^test result: /, "", r); sub(/; [0-9]+ measured.*finished in/, "; in", r); printf "   %-48s %s\n", name, r }
  ' "$log"
  if [ $rc != 0 ]; then
    echo "--- the failures (the whole output: $log)"
    awk '/^failures:$/ { on = 1 } on { print } /^test result:/ { on = 0 }' "$log" | tail -n 150
    grep -E "^error(\[|:)" -A12 "$log" | head -n 60 || true
  fi
  return $rc
}
if [ $root = 1 ]; then
  step "cargo test (workspace, release, root-only tests included)" cargo_test -- --include-ignored
else
  step "cargo test (workspace, release; not root: root-only tests left out)" cargo_test
fi

# The BPF tests again, and a short live sr6 perf run, under Debian 12's stock 6.1 kernel
# in QEMU (its verifier is not this machine's; docs/xdp.md, "Kernels").
step "the BPF tests on Debian 12's kernel (QEMU)" bash scripts/kernel-vm.sh

export SR6_BIN=$ROOT/target/release/sr6
run_pytest() { "$PY" -m pytest -q -rs "$@"; }
step "oracle suite (scapy + tshark)" run_pytest tests/oracle
step "kernel comparison suite (network namespaces; root)" run_pytest tests/kernel
# The same scenarios for the cases the XDP tier takes, through `sr6 pcap --fast-path xdp`
# (each frame through the XDP program in the kernel first; docs/xdp.md).
step "kernel comparison suite, XDP tier (forwarding, End, validation; root)" \
  env SR6_FAST_PATH=xdp "$PY" -m pytest -q -rs tests/kernel/test_k_forwarding.py tests/kernel/test_k_endpoint.py \
  tests/kernel/test_k_validation.py tests/kernel/test_k_hbh.py tests/kernel/test_k_random.py
step "live interoperability suite (sr6 run with Linux kernel routers in namespaces; root)" run_pytest tests/live
# T1, T2 and the C-SID chain again with the AF_XDP tier alone (`--fast-path off`): what
# the XDP tier forwards in the pass above, the pipeline forwards here.
step "live interoperability suite, AF_XDP tier alone (T1, T2, C-SID chain; root)" \
  env SR6_LIVE_FAST_PATH=off "$PY" -m pytest -q -rs tests/live/test_interop.py tests/live/test_csid_chain.py -k "not af_packet"
step "sr6 perf: a short real run (testbed, both drivers, traffic, search, report; root)" run_pytest tests/perf

echo "== all steps passed ($((SECONDS - T0)) s)"
if [ $root = 0 ]; then
  echo "test.sh: not root: the root-only Rust tests were not run and the namespace suites" \
    "(tests/kernel, tests/live, tests/perf) were SKIPPED; run as root for the whole suite" >&2
fi
