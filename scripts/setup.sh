#!/usr/bin/env bash
# Installs what sr6's tests and tools need on a fresh Debian 12 machine (idempotent):
# tshark (the decoder oracle), valgrind (instruction counts), ping, ethtool and nftables
# (the live tests), iptables (ip6tables, the kernel suite's firewall oracle),
# fonts-dejavu-core (the text of sr6 perf's PNG plots), qemu-system-x86 and
# busybox-static (scripts/kernel-vm.sh: the BPF tests on Debian 12's kernel), clang,
# libbpf-dev and linux-libc-dev (the build compiles the XDP tier's program, and
# sr6-bpf's tests their eBPF C programs, with `clang -target bpf`, which needs
# bpf/bpf_helpers.h and linux/bpf.h) with apt; rustfmt and clippy (rustup components,
# for test.sh's checks); and scapy + pytest (the packet oracle,
# tests/oracle/requirements.txt) into a virtual environment,
# .venv at the repo root: Debian's own Python refuses `pip install` (PEP 668), so every
# script runs pytest and scapy as .venv/bin/python. Rust itself is expected (rustup).
#
# Runs as root (CI: CI=true, no stdin) or as a user with sudo for the apt part.
#   bash scripts/setup.sh          everything
#   bash scripts/setup.sh --venv   only the virtual environment (and python3-venv)
#   bash scripts/setup.sh --build  only what `cargo build` needs besides Rust: clang,
#                                  libbpf-dev and linux-libc-dev (sr6-xdp's build script
#                                  compiles the XDP tier's C program; examples/demo.sh)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
VENV=$ROOT/.venv
REQ=$ROOT/tests/oracle/requirements.txt
only_venv=0
only_build=0
case "${1:-}" in
  --venv) only_venv=1 ;;
  --build) only_build=1 ;;
  "") ;;
  *) echo "usage: bash scripts/setup.sh [--venv | --build]" >&2; exit 2 ;;
esac

log() { echo "setup: $*"; }

apt_updated=0
apt_install() {
  local as=()
  if [ "$(id -u)" != 0 ]; then
    if ! command -v sudo >/dev/null; then
      echo "setup: need root or sudo to apt-get install $*" >&2
      exit 1
    fi
    as=(sudo)
  fi
  log "apt-get install $*"
  echo "wireshark-common wireshark-common/install-setuid boolean false" \
    | "${as[@]}" debconf-set-selections 2>/dev/null || true
  if [ $apt_updated = 0 ]; then
    "${as[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    apt_updated=1
  fi
  "${as[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

# --- system packages -----------------------------------------------------------------
# A user's PATH on Debian lacks the sbin directories, where ip and ethtool live.
have() { PATH="$PATH:/usr/sbin:/sbin" command -v "$1" >/dev/null; }
need_apt=()
if [ $only_build = 1 ]; then
  have clang || need_apt+=(clang)
  [ -f /usr/include/bpf/bpf_helpers.h ] || need_apt+=(libbpf-dev)
  [ -f /usr/include/linux/bpf.h ] || need_apt+=(linux-libc-dev)
  if [ ${#need_apt[@]} -gt 0 ]; then
    apt_install "${need_apt[@]}"
  fi
  exit 0
fi
have python3 || need_apt+=(python3)
# Debian splits ensurepip (what `python3 -m venv` needs for pip) into python3-venv.
python3 -c 'import ensurepip, venv' 2>/dev/null || need_apt+=(python3-venv)
if [ $only_venv = 0 ]; then
  have tshark || need_apt+=(tshark)
  have valgrind || need_apt+=(valgrind)
  have ip || need_apt+=(iproute2)
  have ping || need_apt+=(iputils-ping)
  have ethtool || need_apt+=(ethtool)
  have nft || need_apt+=(nftables)
  have ip6tables || need_apt+=(iptables)
  [ -f /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ] || need_apt+=(fonts-dejavu-core)
  have clang || need_apt+=(clang)
  have bpftool || need_apt+=(bpftool)
  [ -f /usr/include/bpf/bpf_helpers.h ] || need_apt+=(libbpf-dev)
  [ -f /usr/include/linux/bpf.h ] || need_apt+=(linux-libc-dev)
  # FRR's zebra and staticd: the FPM stream's live test (tests/live/test_fpm.py).
  [ -x /usr/lib/frr/zebra ] || need_apt+=(frr)
  # QEMU and a static busybox: scripts/kernel-vm.sh boots Debian 12's kernel with them.
  have qemu-system-x86_64 || need_apt+=(qemu-system-x86)
  [ -x /bin/busybox ] || need_apt+=(busybox-static)
fi
if [ ${#need_apt[@]} -gt 0 ]; then
  apt_install "${need_apt[@]}"
fi

# --- rustfmt and clippy (scripts/test.sh checks with both) ------------------------------
if [ $only_venv = 0 ] && command -v rustup >/dev/null; then
  for c in rustfmt clippy; do
    if ! cargo "${c/rustfmt/fmt}" --version >/dev/null 2>&1; then
      log "rustup component add $c"
      rustup component add "$c"
    fi
  done
fi

# --- the virtual environment -----------------------------------------------------------
# Made anew when missing or broken (a half-made one, or one whose python3 is gone);
# requirements (re)installed when they changed since the last install (a stamp with
# their hash) or do not import.
if ! "$VENV/bin/python" -c 'import sys' 2>/dev/null; then
  log "python3 -m venv $VENV"
  rm -rf "$VENV"
  python3 -m venv "$VENV"
fi
stamp=$VENV/.sr6-requirements.sha256
want=$(sha256sum "$REQ" | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ] || ! "$VENV/bin/python" -c 'import scapy, pytest' 2>/dev/null; then
  log "pip install -r tests/oracle/requirements.txt (into .venv)"
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check -r "$REQ"
  echo "$want" >"$stamp"
fi
