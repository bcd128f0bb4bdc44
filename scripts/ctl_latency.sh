#!/usr/bin/env bash
# How long one `sr6 ctl route add` / `route del` / `neigh replace` takes, end to end
# (the command's process, the change applied in place, the tables published, the XDP
# tier's maps switched), on a running `sr6 run` whose FIB holds ROUTES routes — in each
# tier. Neighbours: one no route uses (`neigh new`), and the gateway every route goes
# through given a new MAC (`neigh gw`: every route's Ethernet header changes).
# Then the same routes in the kernel's table, mirrored (`--mirror-kernel-routes`, both
# tiers), and a route added and deleted with `ip route` in the kernel: from the `ip`
# command to sr6's next tables generation (`show status`, polled every millisecond);
# and `sr6 ctl` routes (on prefixes the kernel has: they win them) and neighbours beside
# them.
#
#   sudo bash scripts/ctl_latency.sh [ROUTES] [CHANGES]    # defaults 400000 and 10
#
# Needs root (a network namespace of its own, removed on exit) and the release binary
# (`cargo build --release -p sr6`; $SR6_BIN overrides it). Prints, per tier, the median
# and the slowest of CHANGES of each kind, in milliseconds. Nothing is sent
# on any link: the namespace's one veth pair only carries sr6's XDP programs.
set -euo pipefail

ROUTES=${1:-400000}
CHANGES=${2:-10}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SR6=${SR6_BIN:-${CARGO_TARGET_DIR:-$ROOT/target}/release/sr6}
if [ ! -x "$SR6" ]; then
    echo "ctl_latency: no sr6 binary at $SR6 (cargo build --release -p sr6, or set SR6_BIN)" >&2
    exit 1
fi
if [ "$(id -u)" != 0 ]; then
    echo "ctl_latency: needs root (a network namespace)" >&2
    exit 1
fi

NS=sr6ctl$$
DIR=$(mktemp -d)
PID=
cleanup() {
    [ -n "$PID" ] && kill "$PID" 2>/dev/null && wait "$PID" 2>/dev/null || true
    ip netns del "$NS" 2>/dev/null || true
    rm -rf "$DIR"
}
trap cleanup EXIT

# ROUTES IPv6 /32s through one neighbour (distinct prefixes: 2001::/32, 2001:1::/32, ...).
{
    echo "ip link set a0 address 02:00:00:00:00:a0"
    echo "ip -6 addr add fc00:a::1/64 dev a0"
    echo "ip -6 neigh add fc00:a::2 lladdr 02:00:00:00:0a:02 dev a0"
    awk -v n="$ROUTES" 'BEGIN { for (i = 0; i < n; i++)
        printf "ip -6 route add %x:%x::/32 via fc00:a::2 dev a0\n", 8193 + int(i / 65536), i % 65536 }'
} > "$DIR/fib.conf"

ip netns add "$NS"
ip netns exec "$NS" ip link add a0 type veth peer name a1
ip netns exec "$NS" ip link set a0 up
ip netns exec "$NS" ip link set a1 up
# The peer runs NAPI, so the XDP tier may send out of a0 too (`show status`).
ip netns exec "$NS" ethtool -K a1 gro on >/dev/null

now_ms() { date +%s%N | awk '{ printf "%.1f", $1 / 1e6 }'; }
# Median and maximum of the numbers on stdin.
summary() { sort -n | awk '{ v[NR] = $1 } END { printf "median %.0f ms, slowest %.0f ms", v[int((NR + 1) / 2)], v[NR] }'; }
# Times CHANGES `sr6 ctl` commands at $sock, change i's words printed by function $2 i,
# into file $1 (ms, one a line).
time_changes() {
    local out=$1 args=$2 i t0
    : > "$out"
    for i in $(seq 1 "$CHANGES"); do
        t0=$(now_ms)
        # shellcheck disable=SC2046 # (the words of the command)
        "$SR6" ctl --socket "$sock" $("$args" "$i") > /dev/null
        echo "$t0 $(now_ms)" | awk '{ print $2 - $1 }' >> "$out"
    done
}
# The changes: a route added and deleted, a neighbour no route uses, the gateway of
# every route given a new MAC; routes on prefixes the kernel's routes have.
add_args() { echo "route add 3001:$1::/48 via fc00:a::2 dev a0"; }
del_args() { echo "route del 3001:$1::/48"; }
nnew_args() { echo "neigh replace fc00:a::$(($1 + 16)) lladdr 02:00:00:00:0b:$(($1 % 100)) dev a0"; }
ngw_args() { echo "neigh replace fc00:a::2 lladdr 02:00:00:00:0c:$(($1 % 100)) dev a0"; }
over_add_args() { echo "route add 2001:$1::/32 via fc00:a::3 dev a0"; }
over_del_args() { echo "route del 2001:$1::/32"; }

echo "sr6 ctl latency: $ROUTES routes in the FIB, $CHANGES adds and $CHANGES deletes per tier ($SR6)"
for tier in xdp off; do
    sock=$DIR/$tier.sock
    ip netns exec "$NS" "$SR6" run --config "$DIR/fib.conf" --socket "$sock" --fast-path "$tier" \
        > "$DIR/$tier.log" 2>&1 &
    PID=$!
    for _ in $(seq 1 240); do
        "$SR6" ctl --socket "$sock" show status > /dev/null 2>&1 && break
        kill -0 "$PID" 2>/dev/null || { cat "$DIR/$tier.log" >&2; exit 1; }
        sleep 0.5
    done
    time_changes "$DIR/add" add_args
    time_changes "$DIR/del" del_args
    time_changes "$DIR/nnew" nnew_args
    time_changes "$DIR/ngw" ngw_args
    status=$("$SR6" ctl --socket "$sock" show status)
    what=$(grep -m1 "^tier a0" <<< "$status" || echo "tier a0: ?")
    printf '%-6s add: %s; del: %s  (%s)\n' "$tier" "$(summary < "$DIR/add")" "$(summary < "$DIR/del")" "$what"
    printf '%-6s neigh new: %s; neigh gw: %s\n' "$tier" "$(summary < "$DIR/nnew")" "$(summary < "$DIR/ngw")"
    kill "$PID" && wait "$PID" 2>/dev/null || true
    PID=
done

# The routes in the kernel, mirrored: a change made with `ip route` reaches sr6 through
# the netlink monitor (live/kernel_routes.rs, live/outside.rs).
{
    echo "ip link set a0 address 02:00:00:00:00:a0"
    echo "ip -6 addr add fc00:a::1/64 dev a0"
    echo "ip -6 neigh add fc00:a::2 lladdr 02:00:00:00:0a:02 dev a0"
} > "$DIR/mirror.conf"
ip netns exec "$NS" ip -6 addr add fc00:a::1/64 dev a0 nodad
awk -v n="$ROUTES" 'BEGIN { for (i = 0; i < n; i++)
    printf "route add %x:%x::/32 via fc00:a::2 dev a0\n", 8193 + int(i / 65536), i % 65536 }' > "$DIR/kernel.batch"
ip netns exec "$NS" ip -batch "$DIR/kernel.batch"
sock=$DIR/mirror.sock
ip netns exec "$NS" "$SR6" run --config "$DIR/mirror.conf" --socket "$sock" --mirror-kernel-routes \
    > "$DIR/mirror.log" 2>&1 &
PID=$!
# The tables' generation and routes, from `show status` ("tables generation G: N routes").
status_field() {
    "$SR6" ctl --socket "$sock" show status 2>/dev/null |
        sed -n "s/.*tables generation \([0-9]*\): \([0-9]*\) routes.*/\\$1/p"
}
for _ in $(seq 1 600); do
    n=$(status_field 2 || true)
    [ "${n:-0}" -ge "$ROUTES" ] && break
    kill -0 "$PID" 2>/dev/null || { cat "$DIR/mirror.log" >&2; exit 1; }
    sleep 0.5
done
# Times `ip route` command "$@" in the kernel until sr6 publishes a new generation.
kernel_change() {
    local gen t0
    gen=$(status_field 1)
    t0=$(now_ms)
    ip netns exec "$NS" ip "$@"
    for _ in $(seq 1 10000); do
        [ "$(status_field 1)" != "$gen" ] && break
        sleep 0.001
    done
    echo "$t0 $(now_ms)" | awk '{ print $2 - $1 }'
}
: > "$DIR/kadd" && : > "$DIR/kdel"
for i in $(seq 1 "$CHANGES"); do
    kernel_change -6 route add "3001:$i::/48" via fc00:a::2 dev a0 >> "$DIR/kadd"
done
for i in $(seq 1 "$CHANGES"); do
    kernel_change -6 route del "3001:$i::/48" >> "$DIR/kdel"
done
printf '%-6s add: %s; del: %s  (%s routes mirrored from the kernel)\n' kernel "$(summary < "$DIR/kadd")" \
    "$(summary < "$DIR/kdel")" "$(status_field 2)"
# `sr6 ctl` beside them: its routes win their prefixes over the kernel's.
time_changes "$DIR/cadd" over_add_args
time_changes "$DIR/cdel" over_del_args
time_changes "$DIR/cnew" nnew_args
printf '%-6s ctl add: %s; ctl del: %s; neigh new: %s  (over the kernel'"'"'s routes)\n' kernel \
    "$(summary < "$DIR/cadd")" "$(summary < "$DIR/cdel")" "$(summary < "$DIR/cnew")"
kill "$PID" && wait "$PID" 2>/dev/null || true
PID=
