#!/usr/bin/env bash
# Installs what sr6's tests and tools need on a fresh Debian 12 machine (idempotent):
# tshark (the decoder oracle), scapy + pytest (the packet oracle), valgrind (instruction
# counts), ping and ethtool (the live tests), fonts-dejavu-core (the text of sr6 perf's
# PNG plots). Rust itself is expected (rustup).
set -euo pipefail
need_apt=()
command -v tshark >/dev/null || need_apt+=(tshark)
command -v valgrind >/dev/null || need_apt+=(valgrind)
command -v ip >/dev/null || need_apt+=(iproute2)
command -v ping >/dev/null || need_apt+=(iputils-ping)
command -v ethtool >/dev/null || need_apt+=(ethtool)
[ -f /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ] || need_apt+=(fonts-dejavu-core)
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "setup: apt-get install ${need_apt[*]}"
  export DEBIAN_FRONTEND=noninteractive
  echo "wireshark-common wireshark-common/install-setuid boolean false" | debconf-set-selections 2>/dev/null || true
  apt-get update -qq
  apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi
if ! python3 -c 'import scapy, pytest' 2>/dev/null; then
  echo "setup: pip install -r tests/oracle/requirements.txt"
  python3 -m pip install -q -r "$(dirname "$0")/../tests/oracle/requirements.txt"
fi
