#!/usr/bin/env bash
# Builds the End.BPF examples (examples/bpf/README.md) with clang:
#   bash examples/bpf/build.sh [OUT_DIR]      (default: examples/bpf/build)
# One object a C file, OUT_DIR/NAME.o. Needs clang, libbpf-dev (bpf/bpf_helpers.h) and
# linux-libc-dev (linux/bpf.h): scripts/setup.sh installs them.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="${1:-$here/build}"
clang="${CLANG:-clang}"
if ! command -v "$clang" >/dev/null 2>&1; then
	echo "build.sh: clang not found (set CLANG, or install clang, libbpf-dev and linux-libc-dev: bash scripts/setup.sh)" >&2
	exit 1
fi
inc=()
for d in /usr/include/x86_64-linux-gnu /usr/include/aarch64-linux-gnu; do
	[ -d "$d" ] && inc+=("-I$d")
done
mkdir -p "$out"
for src in "$here"/*.c; do
	obj="$out/$(basename "${src%.c}").o"
	"$clang" -O2 -g -target bpf -Wall "${inc[@]}" -c "$src" -o "$obj"
	echo "$obj"
done
