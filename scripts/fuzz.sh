#!/usr/bin/env bash
# Runs sr6's cargo-fuzz targets (fuzz/fuzz_targets/) for a while each, seeded with the
# frames of the bundled example capture (docs/testing.md, "Fuzzing").
#
#   bash scripts/fuzz.sh                         # every target, 60 s each
#   SECONDS_EACH=1200 TARGETS=pipeline bash scripts/fuzz.sh
#
# The corpus of each target lives in fuzz/corpus/TARGET/ (not committed; libFuzzer adds
# every input that reaches new code, so later runs start where earlier ones stopped).
# Seeds: every frame of examples/example.pcap — for `pipeline` and `fast_path` once per
# ingress device (their first input byte picks the device) — and for `fast_path` the
# crafted frames of its differential test (crates/sr6/tests/fast_path.rs), so the fuzzer
# starts from packets that hit SIDs and routes instead of having to find a valid SRH by
# chance. `bpf_load` is seeded with the eBPF test programs (crates/bpf/tests/progs)
# compiled by clang; `bpf_vm` starts from nothing (any 8 bytes are an instruction).
# The text targets: `snort_rules` is seeded with every Snort rule written in docs/ids.md,
# the IDS's tests (crates/core/src/ids/tests.rs, tests/oracle/test_ids.py) and the rules
# files of the benchmark workload (scripts/gen_bench_workload.py, if scapy is there),
# one rule a file and each source's rules together; `config` with examples/**/*.conf,
# the benchmark's configurations and every code block of docs/config.md.
# A crash stops the run with its input in fuzz/artifacts/TARGET/ and a non-zero exit.
#
# Needs a nightly Rust toolchain (`rustup toolchain install nightly`: libFuzzer's
# instrumentation is nightly-only) and cargo-fuzz (installed here if missing).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
SECONDS_EACH=${SECONDS_EACH:-60}
TARGETS=${TARGETS:-"parse_headers pipeline fast_path bpf_vm bpf_load snort_rules config"}

log() { echo "fuzz.sh: $*" >&2; }

if ! cargo +nightly --version >/dev/null 2>&1; then
  log "a nightly toolchain is needed: rustup toolchain install nightly"
  exit 2
fi
if ! cargo fuzz --help >/dev/null 2>&1; then
  log "installing cargo-fuzz"
  cargo install -q cargo-fuzz
fi

# The seeds: one file per (device byte +) frame, named by content.
seed() { # target device-bytes...
  local dir=$ROOT/fuzz/corpus/$1
  shift
  mkdir -p "$dir"
  python3 - "$ROOT/examples/example.pcap" "$dir" "$@" <<'PY'
import hashlib, struct, sys
pcap, out, devs = sys.argv[1], sys.argv[2], [int(d) for d in sys.argv[3:]]
data = open(pcap, "rb").read()
magic = data[:4]
end = "<" if magic in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1") else ">"
off, n = 24, 0
while off + 16 <= len(data):
    _, _, incl, _ = struct.unpack(end + "IIII", data[off:off + 16])
    frame = data[off + 16:off + 16 + incl]
    off += 16 + incl
    for prefix in ([bytes([d]) for d in devs] or [b""]):
        x = prefix + frame
        open("%s/seed-%s" % (out, hashlib.sha1(x).hexdigest()[:16]), "wb").write(x)
        n += 1
print(n)
PY
}

# The text seeds (rules or configurations), one file per text, named by content.
seed_text() { # target
  local dir=$ROOT/fuzz/corpus/$1 gen
  mkdir -p "$dir"
  gen=$(mktemp -d)
  timeout 300 python3 "$ROOT/scripts/gen_bench_workload.py" --frames 1 "$gen" >/dev/null 2>&1 ||
    log "no benchmark workload for the $1 seeds (scripts/gen_bench_workload.py failed)"
  python3 -W ignore - "$1" "$ROOT" "$gen" "$dir" <<'PY'
import glob, hashlib, os, re, sys
target, root, gen, out = sys.argv[1:]
texts = []
if target == "snort_rules":
    rule = re.compile(r"(?:alert|drop|pass)\s+(?:tcp|udp|icmp|ip)\s[^\n]*?\)(?=[\"'\s]|$)", re.M)
    for f in ["docs/ids.md", "crates/core/src/ids/tests.rs", "tests/oracle/test_ids.py"]:
        found = rule.findall(open(os.path.join(root, f)).read())
        found = [r.encode().decode("unicode_escape") if f.endswith(".rs") or f.endswith(".py") else r for r in found]
        texts += found + ["\n".join(found) + "\n"]
    texts += [open(p).read() for p in sorted(glob.glob(os.path.join(gen, "*.rules")))]
else:
    confs = glob.glob(os.path.join(root, "examples/**/*.conf"), recursive=True)
    confs += glob.glob(os.path.join(root, "bench/**/*.conf"), recursive=True)
    confs += glob.glob(os.path.join(gen, "*.conf"))
    texts += [open(p).read() for p in sorted(confs)]
    doc = open(os.path.join(root, "docs/config.md")).read()
    texts += re.findall(r"^```[a-z]*\n(.*?)^```", doc, re.M | re.S)
for x in texts:
    b = x.encode()
    open("%s/seed-%s" % (out, hashlib.sha1(b).hexdigest()[:16]), "wb").write(b)
print(len(set(texts)))
PY
  rm -rf "$gen"
}

cd "$ROOT/fuzz"
for t in $TARGETS; do
  case "$t" in
    pipeline) n=$(seed "$t" 0 1 2 3) ;;
    fast_path)
      # Also the differential test's crafted frames (a case of every fast-path kind).
      (cd "$ROOT" && SR6_FAST_PATH_SEEDS="$ROOT/fuzz/corpus/$t" \
        cargo test -q -p sr6 --test fast_path crafted >/dev/null)
      n=$(($(seed "$t" 0 1 2) + $(ls "$ROOT/fuzz/corpus/$t" | grep -c '^crafted-')))
      ;;
    bpf_load)
      mkdir -p "$ROOT/fuzz/corpus/$t"
      inc=()
      for d in /usr/include/x86_64-linux-gnu /usr/include/aarch64-linux-gnu; do
        [ -d "$d" ] && inc+=("-I$d")
      done
      for c in "$ROOT"/crates/bpf/tests/progs/*.c; do
        clang -O2 -g -target bpf "${inc[@]}" -c "$c" -o "$ROOT/fuzz/corpus/$t/seed-$(basename "$c" .c).o"
      done
      n=$(ls "$ROOT/fuzz/corpus/$t" | grep -c '^seed-')
      ;;
    bpf_vm) mkdir -p "$ROOT/fuzz/corpus/$t"; n=0 ;;
    snort_rules | config) n=$(seed_text "$t") ;;
    *) n=$(seed "$t") ;;
  esac
  log "$t: $n seed inputs, ${SECONDS_EACH} s"
  cargo +nightly fuzz run "$t" "corpus/$t" -- -max_total_time="$SECONDS_EACH" -print_final_stats=1
done
log "no crash"
