#!/usr/bin/env bash
# Instructions per route lookup, LPM alone, on each FIB workload (issue 25;
# docs/performance.md, "Route lookup on every FIB shape"), counted by callgrind inside
# `lookups` of crates/core/examples/fib_lookups.rs (the table build is not counted):
# (I(N2) - I(N1)) / (N2 - N1) for destinations spread over the table and for one
# destination repeated, less the same loop's with no lookup (`none`: index, modulo, xor).
#
#   bash scripts/fib_callgrind.sh            # every workload and stream
#   ONLY="internet6" bash scripts/fib_callgrind.sh
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
N1=${N1:-20000}
N2=${N2:-120000}
TARGET_DIR=${CARGO_TARGET_DIR:-$ROOT/target}
command -v valgrind >/dev/null || { echo "fib_callgrind.sh: valgrind is needed (apt-get install valgrind)" >&2; exit 1; }
cargo build -q --release -p sr6-core --example fib_lookups
BIN=$TARGET_DIR/release/examples/fib_lookups
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
count() { # table stream n -> instructions inside `lookups`
  valgrind --tool=callgrind --collect-atstart=no --toggle-collect='*fib_lookups*lookups*' \
    --callgrind-out-file="$WORK/cg.$1.$2.$3" "$BIN" "$1" "$2" "$3" >/dev/null 2>"$WORK/log"
  awk '/^summary:/ {print $2}' "$WORK/cg.$1.$2.$3"
}
per() { awk -v a="$1" -v b="$2" -v n1="$N1" -v n2="$N2" 'BEGIN {printf "%.2f", (b - a) / (n2 - n1)}'; }
loop=$(per "$(count none spread "$N1")" "$(count none spread "$N2")")
printf '%-10s %-7s %s\n' table stream instructions/lookup
for t in ${ONLY:-locators6 internet6 internet4}; do
  for s in spread single; do
    x=$(per "$(count "$t" "$s" "$N1")" "$(count "$t" "$s" "$N2")")
    printf '%-10s %-7s %s\n' "$t" "$s" "$(awk -v x="$x" -v l="$loop" 'BEGIN {printf "%.1f", x - l}')"
  done
done
echo "(the loop alone: $loop instructions a lookup, subtracted)"
