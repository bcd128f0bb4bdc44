#!/usr/bin/env bash
# Runs sr6's root-only BPF test binaries under another Linux kernel, in QEMU: by default
# Debian 12's stock kernel (the 6.1 series, the package `linux-image-amd64` depends
# on), so that the XDP tier, the AF_XDP tier's redirect program and the per-CPU
# counters are checked by that kernel's verifier and BPF_PROG_TEST_RUN, not only by the
# kernel this machine runs (docs/testing.md, "On Debian 12's kernel").
#
#   bash scripts/kernel-vm.sh                 the default tests on Debian 12's kernel
#   SR6_VM_KERNEL=linux-image-6.1.0-56-amd64 bash scripts/kernel-vm.sh   another package
#   bash scripts/kernel-vm.sh -p sr6 --test xdp_path   other tests (cargo test's options)
#
# The kernel package is downloaded with apt into target/kernel-vm/ (kept there); the
# test binaries are built with `cargo test --release --no-run`; an initramfs holds them,
# their shared libraries, busybox, iproute2's `ip` and the kernel's veth module; QEMU
# boots it (software emulation: no KVM needed; SR6_VM_ACCEL=kvm to use it), each binary
# runs with `--include-ignored`, and the machine powers off. With the default tests a
# short live `sr6 perf run` (linux and sr6, IPv6 and End) follows them in the machine,
# its sr6 rows required to run the XDP tier (SR6_VM_PERF=0 leaves it out, =1 adds it to
# tests given on the command line). The output is in target/kernel-vm/console.log
# (console.txt: the same without carriage returns); the script fails when a binary
# fails, when the machine ends without saying how each binary ended, or after
# SR6_VM_TIMEOUT seconds (default 1500; QEMU's emulation is slow).
# Needs: apt-get (Debian's archive), qemu-system-x86 and busybox (scripts/setup.sh
# installs both). Not root: the tests run as root inside the virtual machine.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
DIR=$ROOT/target/kernel-vm
mkdir -p "$DIR"
log() { echo "kernel-vm: $*"; }
die() { echo "kernel-vm: $*" >&2; exit 1; }

for tool in qemu-system-x86_64 busybox apt-get ip; do
  PATH="$PATH:/usr/sbin:/sbin" command -v "$tool" >/dev/null \
    || die "$tool is missing (bash scripts/setup.sh installs qemu-system-x86 and busybox-static)"
done
IP=$(PATH="$PATH:/usr/sbin:/sbin" command -v ip)

# --- the kernel ------------------------------------------------------------------------
pkg=${SR6_VM_KERNEL:-}
if [ -z "$pkg" ]; then
  pkg=$(apt-cache depends linux-image-amd64 2>/dev/null | sed -n 's/^ *Depends: \(linux-image-[0-9].*\)$/\1/p' | head -n1)
  [ -n "$pkg" ] || die "cannot tell which kernel package linux-image-amd64 depends on (apt-cache depends linux-image-amd64)"
fi
deb=$(ls "$DIR"/"${pkg}"_*.deb 2>/dev/null | head -n1 || true)
if [ -z "$deb" ]; then
  log "apt-get download $pkg"
  (cd "$DIR" && apt-get download -q "$pkg" 2>&1 | grep -v "^W: Download is performed unsandboxed" || true)
  deb=$(ls "$DIR"/"${pkg}"_*.deb 2>/dev/null | head -n1 || true)
  [ -n "$deb" ] || die "apt-get download $pkg got nothing (is Debian's archive reachable?)"
fi
kroot=$DIR/${pkg}
if [ ! -d "$kroot/boot" ]; then
  rm -rf "$kroot.tmp"
  dpkg-deb -x "$deb" "$kroot.tmp"
  mv "$kroot.tmp" "$kroot"
fi
vmlinuz=$(ls "$kroot"/boot/vmlinuz-* | head -n1)
veth=$(find "$kroot/lib/modules" -name 'veth.ko*' | head -n1)
[ -n "$veth" ] || die "$pkg has no veth module"
case "$veth" in
  *.ko) ;;
  *) die "$veth: compressed modules are not supported here" ;;
esac
log "kernel: $(basename "$vmlinuz") from $(basename "$deb")"

# --- the test binaries -----------------------------------------------------------------
default_perf=0
if [ $# = 0 ]; then
  default_perf=1
  # The XDP tier (program and maps; its differential test against the general path),
  # the AF_XDP tier's sockets and redirect program, the per-CPU counter maps, and
  # sr6 perf's tester: its generator (XDP live frames) and its counting program.
  # (--workspace: the features test.sh's cargo test built them with, nothing rebuilt.)
  set -- --workspace --test xdp_path --test fast --test af_xdp_netns --test bpf_percpu \
    --test traffic_netns --test xdp_counter
fi
log "cargo test --release --no-run $*"
bins=$(cd "$ROOT" && cargo test --release --no-run "$@" 2>&1 | tee "$DIR/build.log" \
  | sed -n 's/^ *Executable .*(\(.*\))$/\1/p')
[ -n "$bins" ] || { tail -n 20 "$DIR/build.log" >&2; die "cargo built no test binary"; }
perf=0
if [ "${SR6_VM_PERF:-$default_perf}" = 1 ]; then
  # And a short live `sr6 perf run`: both forwarders, sr6 with its XDP tier attached to
  # real veth devices (a row measured without it is a failure here).
  log "cargo build --release --workspace --bins"
  (cd "$ROOT" && cargo build --release -q --workspace --bins) || die "cargo build failed"
  perf=1
fi

# --- the initramfs ---------------------------------------------------------------------
img=$DIR/initrd
rm -rf "$img"
mkdir -p "$img"/{bin,proc,sys,dev,tmp,run,var,tests,mod}
ln -s ../run "$img/var/run"
cp "$(command -v busybox)" "$img/bin/busybox"
for a in sh mount insmod poweroff sync uname cat; do ln -s busybox "$img/bin/$a"; done
cp "$IP" "$img/bin/ip"
# ethtool: sr6 perf's tester turns GRO on with it (veth's NAPI).
ETHTOOL=$(PATH="$PATH:/usr/sbin:/sbin" command -v ethtool || true)
[ -n "$ETHTOOL" ] && cp "$ETHTOOL" "$img/bin/ethtool"
cp "$veth" "$img/mod/"
# The tests read the repository's examples at its path (CARGO_MANIFEST_DIR/../..).
for c in "$ROOT"/crates/*/; do mkdir -p "$img$c"; done
cp -r "$ROOT/examples" "$img$ROOT/"
if [ $perf = 1 ]; then
  tdir=$(cd "$ROOT" && cargo metadata --format-version 1 --no-deps | sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')
  cp "$tdir/release/sr6" "$tdir/release/sr6-perf" "$img/bin/"
  for a in kill sysctl grep; do ln -s busybox "$img/bin/$a"; done
  # util-linux's: busybox has no chrt (the testbed's real-time NAPI thread).
  for a in chrt taskset setsid; do cp "$(command -v $a)" "$img/bin/$a"; done
  printf '%s\n' "forwarders: [linux, sr6]" "behaviors: [ipv6, End]" "trial_duration_s: 0.2" \
    "repetitions: 1" "precision: 0.2" "latency_fraction: 0" "max_pps: 50000" >"$img/perf.yaml"
fi
for b in $bins; do case $b in /*) cp "$b" "$img/tests/" ;; *) cp "$ROOT/$b" "$img/tests/" ;; esac; done
# Every shared library they load, at its own path.
for f in "$img"/bin/busybox "$img"/bin/ip "$img"/bin/ethtool "$img"/bin/sr6* "$img"/bin/chrt "$img"/bin/taskset "$img"/bin/setsid "$img"/tests/*; do
  ldd "$f" 2>/dev/null | grep -o '/[^ ]*' || true
done | sort -u | while read -r lib; do
  mkdir -p "$img$(dirname "$lib")"
  cp -L "$lib" "$img$lib"
done
cat >"$img/init" <<'EOF'
#!/bin/sh
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mount -t tmpfs tmp /tmp
mount -t tmpfs run /run
mount -t bpf bpf /sys/fs/bpf 2>/dev/null
insmod /mod/veth.ko* || echo "SR6VM cannot load veth"
ip link set lo up
echo
echo "SR6VM kernel $(uname -r)"
cd /tmp
for t in /tests/*; do
  echo "SR6VM run ${t#/tests/}"
  "$t" --include-ignored 2>&1
  echo "SR6VM result ${t#/tests/} $?"
done
if [ -x /bin/sr6 ]; then
  echo "SR6VM run perf"
  /bin/sr6 perf run /perf.yaml --out /tmp/perf 2>&1
  echo "SR6VM result perf $?"
  echo "SR6VM perf notes: $(grep -c "XDP tier is not on" /tmp/perf/meta.json) rows without the XDP tier"
  cat /tmp/perf/meta.json
fi
echo "SR6VM done"
sync
poweroff -f
EOF
chmod +x "$img/init"
(cd "$img" && find . | busybox cpio -o -H newc 2>/dev/null | gzip -1 >"$DIR/initrd.gz")

# --- the machine -----------------------------------------------------------------------
accel=(-accel tcg -cpu max)
[ "${SR6_VM_ACCEL:-tcg}" = kvm ] && accel=(-accel kvm -cpu host)
log "qemu-system-x86_64 ${accel[*]}: $(echo "$bins" | wc -l) test binaries (console: $DIR/console.log)"
rc=0
timeout "${SR6_VM_TIMEOUT:-1500}" qemu-system-x86_64 "${accel[@]}" -m 2048 -smp 2 -nographic -no-reboot \
  -kernel "$vmlinuz" -initrd "$DIR/initrd.gz" -append "console=ttyS0 quiet panic=-1" \
  </dev/null >"$DIR/console.log" 2>&1 || rc=$?
tr -d '\r' <"$DIR/console.log" >"$DIR/console.txt"
grep -a -E '^(SR6VM |test result:|test .* FAILED$)' "$DIR/console.txt" | sed 's/^/  /' || true
[ $rc = 0 ] || die "qemu ended with status $rc (124: timed out): see $DIR/console.log"
grep -q -a '^SR6VM kernel ' "$DIR/console.txt" || die "the machine did not start its tests: see $DIR/console.log"
fail=0
for b in $bins; do
  name=$(basename "$b")
  r=$(sed -n "s/^SR6VM result $name \([0-9]*\)$/\1/p" "$DIR/console.txt" | head -n1)
  if [ "$r" != 0 ]; then
    if [ -z "$r" ]; then r="no result"; else r="exit status $r"; fi
    echo "kernel-vm: $name: $r" >&2
    fail=1
  fi
done
if [ $perf = 1 ]; then
  r=$(sed -n "s/^SR6VM result perf \([0-9]*\)$/\1/p" "$DIR/console.txt" | head -n1)
  n=$(sed -n "s/^SR6VM perf notes: \([0-9]*\) rows without the XDP tier$/\1/p" "$DIR/console.txt" | head -n1)
  if [ "$r" != 0 ]; then
    echo "kernel-vm: sr6 perf run: ${r:-no result}" >&2
    fail=1
  elif [ "$n" != 0 ]; then
    echo "kernel-vm: sr6 perf run: ${n:-?} rows measured without sr6's XDP tier" >&2
    fail=1
  fi
fi
if [ $fail = 1 ]; then
  echo "--- the failures (the whole output: $DIR/console.txt)" >&2
  awk '/^failures:$/ { on = 1 } on { print } /^test result:/ { on = 0 }' "$DIR/console.txt" \
    | sed 's/\\n/\n/g' | tail -n 80 >&2
  exit 1
fi
log "every test binary passed on $(sed -n 's/^SR6VM kernel //p' "$DIR/console.txt")"
