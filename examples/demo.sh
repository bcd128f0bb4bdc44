#!/usr/bin/env bash
# sr6's main job on the bundled examples: build; show the input frames, process them with
# examples/example.conf, show what each device sent (offline, `sr6 pcap`); then, as root,
# run sr6 as a live router between Linux kernel SRv6 routers in network namespaces
# (examples/live/demo.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
# clang, libbpf-dev, linux-libc-dev: the build compiles the XDP tier's C program.
bash scripts/setup.sh --build
cargo build --release --quiet -p sr6
SR6=target/release/sr6
OUT=${OUT:-out/example}
echo "== input: examples/example.pcap (received on eth0)"
$SR6 dump examples/example.pcap
echo
echo "== sr6 pcap --config examples/example.conf --in examples/example.pcap --out-dir $OUT"
$SR6 pcap --config examples/example.conf --in examples/example.pcap --out-dir "$OUT"
for f in "$OUT"/*.pcap; do
  echo
  echo "== output: $f"
  $SR6 dump "$f"
done
echo
if [ "$(id -u)" = 0 ]; then
  echo "== sr6 as a live router (examples/live/demo.sh)"
  bash examples/live/demo.sh
else
  echo "== (as root, this would now run sr6 as a live router: sudo bash examples/live/demo.sh)"
fi
