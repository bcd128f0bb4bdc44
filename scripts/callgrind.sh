#!/usr/bin/env bash
# Instructions per packet of each sr6 behaviour, counted by callgrind (docs/performance.md).
#
#   bash scripts/callgrind.sh            # all workloads, table on stdout
#   ONLY="End H.Encaps" bash scripts/callgrind.sh
#
# Builds the release `sr6` (debug line tables are on in the release profile), generates
# the workload (scripts/gen_bench_workload.py: a 10,000-prefix FIB, 1,000 SIDs, one pcap
# per behaviour) into a temporary directory, and runs
#   valgrind --tool=callgrind sr6 bench --config C --in P --packets N --batch 256
# for N = N1 and N = N2, counting only inside `Worker::process_batch` (the pipeline) and
# `rx_batch` (the receive copy into the buffers) with --toggle-collect, so start-up,
# config parsing and the table build are not counted at all. Instructions/packet =
# (I(N2) - I(N1)) / (N2 - N1) (the difference also cancels the per-batch constant). Callgrind counts are exact and deterministic, so one run each is
# enough.
#
# Environment:
#   N1, N2      packet counts (default 20000 and 120000)
#   ONLY        space-separated workload names (default: all of workloads.tsv)
#   MIXED       set (e.g. MIXED=1): a /40 under every /24 of the FIBs, so that every
#               lookup walks the LPM's trie instead of probing its hash table (the
#               generator's --mixed-roots; same frames, goals judged the same way)
#   FRAMES      distinct frames per workload (default 64, the generator's). With 256 each
#               workload visits (nearly) every SID of its behaviour, so the figures are
#               the average over the table rather than over a sample of 64 keys (how
#               many slots a hash lookup reads depends on the key)
#   PAYLOAD     UDP payload bytes of the user packets (the generator's --payload-bytes;
#               default 18; 1432 gives the GTP-U/SRv6 paper's 1460-byte inner packets)
#   ANNOTATE    over (default: per-packet top functions for workloads over their goal),
#               all, or none
#   TOP         functions shown per annotated workload (default 12)
#   JOBS        valgrind runs in parallel (default 1)
#   KEEP        1: keep the work directory (workload + callgrind.out files) and print it
#   CARGO_TARGET_DIR  as for cargo (default: target/)
# Exit status 1 if any workload had packets that were not transmitted (dropped, delivered
# locally, or answered with an ICMP error).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
N1=${N1:-20000}
N2=${N2:-120000}
ANNOTATE=${ANNOTATE:-over}
TOP=${TOP:-12}
JOBS=${JOBS:-1}
TARGET_DIR=${CARGO_TARGET_DIR:-$ROOT/target}
BIN=$TARGET_DIR/release/sr6

log() { echo "callgrind.sh: $*" >&2; }

# --- prerequisites (fresh Debian/Ubuntu machine with Rust) ---------------------------
if ! command -v valgrind >/dev/null || ! command -v callgrind_annotate >/dev/null; then
  log "installing valgrind (apt)"
  SUDO=""
  [ "$(id -u)" = 0 ] || SUDO=sudo
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq valgrind >/dev/null
fi
# scapy (the workload generator) from the repo's .venv (scripts/setup.sh makes it).
PY=$ROOT/.venv/bin/python
if ! "$PY" -c 'import scapy' 2>/dev/null; then
  log "making .venv (scapy)"
  bash "$ROOT/scripts/setup.sh" --venv
fi

# --- build and generate ------------------------------------------------------------------
log "building $BIN"
(cd "$ROOT" && cargo build --release -q -p sr6)

WORK=$(mktemp -d "${TMPDIR:-/tmp}/sr6-callgrind.XXXXXX")
if [ "${KEEP:-0}" = 1 ]; then
  log "work directory kept: $WORK"
else
  trap 'rm -rf "$WORK"' EXIT
fi
"$PY" "$ROOT/scripts/gen_bench_workload.py" "$WORK" ${MIXED:+--mixed-roots} ${FRAMES:+--frames "$FRAMES"} \
  ${PAYLOAD:+--payload-bytes "$PAYLOAD"}
# End.BPF's programs (crates/bpf/tests/progs) for the End.BPF-* workloads, compiled as the
# kernel comparison does; without clang those workloads are left out.
if command -v clang >/dev/null; then
  mkdir -p "$WORK/bpf"
  for c in end tag tlv action; do
    clang -O2 -g -target bpf -I/usr/include/"$(uname -m)"-linux-gnu \
      -c "$ROOT/crates/bpf/tests/progs/$c.c" -o "$WORK/bpf/$c.o"
  done
else
  log "no clang: the End.BPF workloads are left out (scripts/setup.sh installs clang)"
  sed -i '/\trouter-bpf\.conf$/d' "$WORK/workloads.tsv"
fi

declare -a NAMES=()
declare -A PCAP=() DEV=() GOAL=() WARM=() CONF=()
while IFS=$'\t' read -r name pcap dev goal warm conf; do
  case "$name" in "#"* | "") continue ;; esac
  if [ -n "${ONLY:-}" ] && [[ " $ONLY " != *" $name "* ]]; then continue; fi
  NAMES+=("$name")
  PCAP[$name]=$pcap
  DEV[$name]=$dev
  GOAL[$name]=$goal
  CONF[$name]=${conf:-router.conf}
  # DEV=PCAP: frames sr6 bench processes once before the replay (an End.AD cache).
  case "${warm:--}" in -) WARM[$name]="" ;; *) WARM[$name]="${warm%%=*}=$WORK/${warm#*=}" ;; esac
done <"$WORK/workloads.tsv"
[ ${#NAMES[@]} -gt 0 ] || { log "no workload selected (ONLY=$ONLY)"; exit 2; }

# --- the runs -----------------------------------------------------------------------------
run_one() { # name N
  local name=$1 n=$2
  valgrind --tool=callgrind --callgrind-out-file="$WORK/cg.$name.$n.out" \
    --toggle-collect='*Worker::process_batch*' --toggle-collect='*rx_batch*' \
    "$BIN" bench --config "$WORK/${CONF[$name]}" --in "$WORK/${PCAP[$name]}" --in-dev "${DEV[$name]}" \
    ${WARM[$name]:+--warmup "${WARM[$name]}"} --packets "$n" --batch 256 --json >"$WORK/bench.$name.$n.json" 2>"$WORK/valgrind.$name.$n.log" ||
    { log "valgrind failed for $name N=$n:"; tail -20 "$WORK/valgrind.$name.$n.log" >&2; return 1; }
}

start=$(date +%s)
log "${#NAMES[@]} workloads x 2 runs (N=$N1, N=$N2), $JOBS at a time"
running=0
for name in "${NAMES[@]}"; do
  for n in "$N1" "$N2"; do
    run_one "$name" "$n" &
    running=$((running + 1))
    if [ "$running" -ge "$JOBS" ]; then
      wait -n
      running=$((running - 1))
    fi
  done
done
wait
for name in "${NAMES[@]}"; do
  for n in "$N1" "$N2"; do
    [ -s "$WORK/bench.$name.$n.json" ] || { log "run $name N=$n failed (see $WORK/valgrind.$name.$n.log)"; exit 1; }
  done
done
log "runs done in $(($(date +%s) - start)) s"

# --- report -------------------------------------------------------------------------------
export WORK N1 N2 ANNOTATE TOP
export ROOT_PREFIX="$ROOT/"
printf '%s\n' "${NAMES[@]}" >"$WORK/names"
for name in "${NAMES[@]}"; do printf '%s\t%s\n' "$name" "${GOAL[$name]}"; done >"$WORK/goals"
python3 - <<'PY'
import json, os, re, subprocess, sys

work, n1, n2 = os.environ["WORK"], int(os.environ["N1"]), int(os.environ["N2"])
annotate, top = os.environ["ANNOTATE"], int(os.environ["TOP"])
goals = dict(l.rstrip("\n").split("\t") for l in open(os.path.join(work, "goals")))
names = [l.strip() for l in open(os.path.join(work, "names")) if l.strip()]


def total(path):
    for line in open(path):
        if line.startswith("summary:") or line.startswith("totals:"):
            return int(line.split()[1])
    raise SystemExit("no totals in " + path)


def functions(path, inclusive, by):
    """Costs from callgrind_annotate, keyed by compiled function (by="fn": the symbol,
    inlined code included) or by source file (by="file": where inlined code was
    written)."""
    out = subprocess.run(
        ["callgrind_annotate", "--auto=no", "--threshold=100", "--inclusive=" + ("yes" if inclusive else "no"), path],
        capture_output=True, text=True, check=True, cwd=work).stdout
    res = {}
    for line in out.splitlines():
        m = re.match(r"^\s*([\d,]+)\s+(?:\(\s*[\d.]+%\)\s+)?(\S.*)$", line)
        if not m or "PROGRAM TOTALS" in line:
            continue
        name = re.sub(r" \[[^\]]*\]$", "", m.group(2))
        name = re.sub(r"/rustc/[0-9a-f]+/library/", "<std>/", name)
        name = name.replace(os.environ["ROOT_PREFIX"], "")
        file, _, fn = name.partition(":")
        key = fn if by == "fn" else file
        v = int(m.group(1).replace(",", ""))
        # callgrind splits a function by the source file of its inlined code. Self costs
        # add up; an inclusive cost of the function's own piece already covers its other
        # pieces, so take the largest piece (summing would count callees twice).
        res[key] = max(res.get(key, 0), v) if inclusive else res.get(key, 0) + v
    return res


def source_lines(path):
    """Self cost per source line of sr6's own crates, from callgrind_annotate's
    auto-annotation: {(file, line): (cost, text)}."""
    out = subprocess.run(
        ["callgrind_annotate", "--auto=yes", "--show-percs=no", "--context=0", "--threshold=100", path],
        capture_output=True, text=True, check=True, cwd=work).stdout
    res, file, lineno = {}, None, 1
    for line in out.splitlines():
        m = re.match(r"^-- Auto-annotated source: (.*)$", line)
        if m:
            f = m.group(1).strip()
            file = f.replace(os.environ["ROOT_PREFIX"], "") if f.startswith(os.environ["ROOT_PREFIX"] + "crates/") else None
            lineno = 1
            continue
        if file is None:
            continue
        m = re.match(r"^-- line (\d+) -+$", line)
        if m:
            lineno = int(m.group(1))
            continue
        m = re.match(r"^\s*([\d,]+|\.) (.*)$", line)
        if not m:
            continue
        text = m.group(2)
        if text.lstrip().startswith(("=>", "<counts for")) or text.strip() == "events annotated":
            continue
        if m.group(1) != ".":
            res[(file, lineno)] = (int(m.group(1).replace(",", "")), text.strip())
        lineno += 1
    return res


# Inclusive costs are shown for the data plane and libc's copies only (not main & co).
INCL = r"^(sr6_core::|sr6_io::|sr6_wire::|__mem|mem(cpy|move|set))"

rows, bad, over = [], [], []
for name in names:
    a, b = (os.path.join(work, "cg.%s.%d.out" % (name, n)) for n in (n1, n2))
    ipp = (total(b) - total(a)) / (n2 - n1)
    # The pipeline alone: the inclusive cost of Worker::process_batch, without the
    # receive copy (rx_batch), which stands for the NIC writing the frame.
    pb = lambda path: max(v for k, v in functions(path, True, "fn").items() if re.search(r"Worker::process_batch$", k))
    pipe = (pb(b) - pb(a)) / (n2 - n1)
    j = json.load(open(os.path.join(work, "bench.%s.%d.json" % (name, n2))))
    # Every packet transmitted, none as an ICMP error (older sr6 versions have no icmp_sent).
    ok = j["tx"] == j["packets"] and j["dropped"] == 0 and j["local"] == 0 and j.get("icmp_sent", 0) == 0
    if not ok:
        bad.append("%s: %d packets, tx %d, local %d, dropped %d, ICMP errors sent %s"
                   % (name, j["packets"], j["tx"], j["local"], j["dropped"], j.get("icmp_sent", "?")))
    goal = goals.get(name, "-")
    if goal == "-":
        mark = "-"
    elif ipp <= float(goal):
        mark = "<= %s (met)" % goal
    else:
        mark = "<= %s (**NOT met**)" % goal
        over.append(name)
    rows.append((name, ipp, pipe, mark, "" if ok else " (packets not transmitted!)"))

print("| behaviour | instructions/packet | of which the pipeline | goal |")
print("|---|---:|---:|---|")
for name, ipp, pipe, mark, note in rows:
    print("| %s | %.1f%s | %.1f | %s |" % (name, ipp, note, pipe, mark))
print()
print("instructions/packet = (I(N=%d) - I(N=%d)) / %d, sr6 bench --batch 256, callgrind;" % (n2, n1, n2 - n1))
print("the pipeline: Worker::process_batch alone (the rest is the receive copy, rx_batch)")

todo = names if annotate == "all" else over if annotate == "over" else []
for name in todo:
    a, b = (os.path.join(work, "cg.%s.%d.out" % (name, n)) for n in (n1, n2))
    print()
    print("### %s: where the instructions go (per packet, two-N difference)" % name)
    for inclusive, by, title in (
        (True, "fn", "inclusive, by function"),
        (False, "fn", "self, by function (inlined code included)"),
        (False, "file", "self, by source file of the (inlined) code"),
    ):
        fa, fb = functions(a, inclusive, by), functions(b, inclusive, by)
        diff = sorted(((fb.get(k, 0) - fa.get(k, 0)) / (n2 - n1), k) for k in set(fa) | set(fb))
        diff = [d for d in reversed(diff) if d[0] >= 0.5 and (not inclusive or re.search(INCL, d[1]))][:top]
        print()
        print("%s (instructions/packet):" % title)
        print("```")
        for v, k in diff:
            print("%8.1f  %s" % (v, k))
        print("```")
    la, lb = source_lines(a), source_lines(b)
    diff = sorted(((lb[k][0] - la.get(k, (0, ""))[0]) / (n2 - n1), k) for k in lb)
    diff = [d for d in reversed(diff) if d[0] >= 0.5][:top]
    print()
    print("hottest source lines of sr6's crates (self instructions/packet, inlined std code not included):")
    print("```")
    for v, (f, n) in diff:
        print("%8.1f  %s:%d  %s" % (v, f, n, lb[(f, n)][1][:90]))
    print("```")

if bad:
    print()
    print("NOT ALL PACKETS TRANSMITTED:")
    for b in bad:
        print("  " + b)
    sys.exit(1)
PY
