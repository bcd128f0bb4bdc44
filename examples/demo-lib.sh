# What the live demos share (examples/*/demo.sh, examples/sfc/sr-aware.sh), sourced from
# the repository's root once the script has set P (its namespace prefix), NODES (its
# namespaces, without the prefix), RUN (its directory under /run), SR6 (the binary) and
# mode (demo, --check, --keep or down). The processes a demo starts in the background
# write their pids in *.pid files under $RUN, which down() stops.

# down: stops the processes of the *.pid files under $RUN, removes the namespaces and
# $RUN.
down() {
  local f pid pids=()
  while read -r f; do
    pid=$(cat "$f" 2>/dev/null)
    [ -n "$pid" ] && kill "$pid" 2>/dev/null && pids+=("$pid")
  done < <(find "$RUN" -name '*.pid' 2>/dev/null)
  for pid in "${pids[@]}"; do
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  done
  for n in $NODES; do ip netns del "$P$n" 2>/dev/null; done
  rm -rf "$RUN"
}

# demo_mode NAME: `down` removes a demo left running (--keep) and exits; anything but
# demo, --check and --keep is a usage error.
demo_mode() {
  case $mode in
    down) down; exit 0 ;;
    demo|--check|--keep) ;;
    *) echo "usage: $1 [--check|--keep|down]" >&2; exit 2 ;;
  esac
}

# demo_prepare NAME "TOOL...": checks root and the tools; without --check or $SR6_BIN
# brings the build up to date when cargo is at hand (under sudo it often is not: then
# target/release/sr6 as it is); checks the binary; removes what a previous run left;
# removes this run's on exit, unless --keep; makes $RUN.
demo_prepare() {
  local me=$1 t
  [ "$(id -u)" = 0 ] || { echo "$me: needs root (network namespaces, XDP)" >&2; exit 1; }
  for t in $2; do
    command -v "$t" >/dev/null || { echo "$me: needs $t (bash scripts/setup.sh installs it)" >&2; exit 1; }
  done
  if [ "$mode" != --check ] && [ -z "${SR6_BIN:-}" ] && command -v cargo >/dev/null; then
    bash "$(dirname "${BASH_SOURCE[0]}")/../scripts/setup.sh" --build || exit 1
    cargo build --release --quiet -p sr6 || exit 1
  fi
  [ -x "$SR6" ] || { echo "$me: no sr6 binary at $SR6 (cargo build --release -p sr6)" >&2; exit 1; }
  down
  [ "$mode" = --keep ] || trap down EXIT
  trap 'exit 130' INT TERM
  mkdir -p "$RUN"
}

say() { printf '\n== %s\n' "$*"; }
# ns NODE COMMAND...: the command in namespace ${P}NODE.
ns() { ip netns exec "$P$1" "${@:2}"; }
# link A A_IF B B_IF: a veth pair, both ends up, checksums complete on the wire (veth
# would leave them to an offload otherwise).
link() {
  ip link add "$2" netns "$P$1" type veth peer name "$4" netns "$P$3" || exit 1
  ns "$1" ip link set "$2" up; ns "$3" ip link set "$4" up
  ns "$1" ethtool -K "$2" tx off >/dev/null; ns "$3" ethtool -K "$4" tx off >/dev/null
}

# check DESCRIPTION TEST...: PASS or FAIL (counted in $failed) as TEST says.
failed=0
check() {
  local what=$1; shift
  if "$@"; then echo "  PASS  $what"; else echo "  FAIL  $what"; failed=$((failed + 1)); fi
}
eq() { [ "$1" = "$2" ]; }
# json FILE PYTHON-EXPRESSION-OVER-j: the expression's value, "?" if it fails.
json() {
  python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2" 2>/dev/null || echo "?"
}
