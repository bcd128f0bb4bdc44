#!/usr/bin/env bash
# A routed SRv6 network, live, in network namespaces: four routers with FRR (zebra,
# isisd, staticd) as their control plane, three with sr6 as their data plane and one a
# plain Linux kernel router (the figure and the addresses: examples/frr/README.md):
#
#              r2 (sr6 + FRR)
#            /                \
#   h1 -- r1 (sr6 + FRR)        r4 (sr6 + FRR) -- h2
#            \                /
#              r3 (Linux + FRR)
#
# IS-IS spreads the link prefixes and the locators (each router's /48, a blackhole
# static redistributed); zebra installs what isisd computes in the router's kernel, and
# sr6 (`sr6 run --mirror-kernel-routes`) forwards by it, the kernel forwarding nothing
# (forwarding off); r3's kernel forwards by it itself. r1 encapsulates h1's traffic to
# h2 towards r4's End.DT6 (fc00:4::d6) and r4 h2's towards r1's (fc00:1::d6): r1's SID
# and policy are in its sr6 configuration, r4's reach its sr6 through its kernel's
# table (installed with iproute2, standing in for zebra). The outer packets take
# IS-IS's two equal-cost paths, flow by flow. Then the link r1-r2 fails under traffic:
# the flows on it are lost until IS-IS has converged and sr6 has the new routes, and
# the script measures how long that took.
#
#   sudo bash examples/frr/demo.sh           build sr6 (if cargo is on the PATH), run,
#                                            check, clean up
#   sudo bash examples/frr/demo.sh --check   the same without building ($SR6_BIN or
#                                            target/release/sr6 must exist)
#   sudo bash examples/frr/demo.sh --keep    leave it running; `... demo.sh down` removes it
#
# The exit status is 0 only if every check passed. Namespaces are ${FRR_PREFIX}NAME
# (default sr6frr-); sr6's and FRR's sockets, configurations and logs are in
# /run/${FRR_PREFIX}demo/NODE/. FRR_BACKEND is sr6 run's --backend (default auto),
# FRR_FLOWS the UDP flows (default 16), FRR_RATE their rate each (default 250/s).
set -uo pipefail
cd "$(dirname "$0")/../.."
HERE=examples/frr
P=${FRR_PREFIX:-sr6frr-}
RUN=/run/${P}demo
SR6=${SR6_BIN:-$PWD/target/release/sr6}
FRRD=/usr/lib/frr
ROUTERS="r1 r2 r3 r4"
SR6_ROUTERS="r1 r2 r4"      # r3 is a Linux kernel router
NODES="h1 h2 $ROUTERS"
BACKEND=${FRR_BACKEND:-auto}  # sr6 run --backend
# Each flow takes one of r1's two paths by its hash, which no one here chooses (the
# sender's source port and flow label are random): with 16 flows, the chance that all
# take one path and the "both paths" check fails is 2^-15 (with 8 it was 1 in 128).
FLOWS=${FRR_FLOWS:-16}        # UDP flows h1 -> h2 (one port each)
RATE=${FRR_RATE:-250}         # datagrams per second, per flow
mode=${1:-demo}

. examples/demo-lib.sh
demo_mode demo.sh
for d in zebra isisd staticd; do
  [ -x "$FRRD/$d" ] || { echo "demo.sh: needs FRR's $d in $FRRD (bash scripts/setup.sh installs frr)" >&2; exit 1; }
done
demo_prepare demo.sh "ethtool ping python3 vtysh"

say "namespaces ${P}{${NODES// /,}} and their links"
for n in $NODES; do
  ip netns add "$P$n" || exit 1
  ns "$n" ip link set lo up
  ns "$n" sysctl -qw net.ipv6.conf.all.accept_dad=0 net.ipv6.conf.default.accept_dad=0
  mkdir -p "$RUN/$n"
done
link h1 h1-r1 r1 r1-h1
link r1 r1-r2 r2 r2-r1
link r1 r1-r3 r3 r3-r1
link r2 r2-r4 r4 r4-r2
link r3 r3-r4 r4 r4-r3
link r4 r4-h2 h2 h2-r4
ns h1 ip -6 addr add fc00:a::2/64 dev h1-r1 nodad
ns h1 ip -6 route add default via fc00:a::1 dev h1-r1
ns h2 ip -6 addr add fc00:b::2/64 dev h2-r4 nodad
ns h2 ip -6 route add default via fc00:b::1 dev h2-r4

# ---- sr6 ------------------------------------------------------------------------------
ctl() { "$SR6" ctl --socket "$RUN/$1/sr6.sock" "${@:2}"; }
start_sr6() {  # NODE: sr6 run --config $HERE/NODE.conf --mirror-kernel-routes in ${P}NODE
  local n=$1 up=0
  ns "$n" sysctl -qw net.ipv6.conf.all.forwarding=0 net.ipv4.ip_forward=0
  grep -E '^ip -6 addr add ' "$HERE/$n.conf" | sed 's/^ip //; s/$/ nodad/' | while read -r line; do
    ip -n "$P$n" $line || exit 1
  done || exit 1
  ip netns exec "$P$n" "$SR6" run --config "$HERE/$n.conf" --socket "$RUN/$n/sr6.sock" --backend "$BACKEND" \
    --mirror-kernel-routes --verbose >"$RUN/$n/sr6.log" 2>&1 &
  echo $! >"$RUN/$n/sr6.pid"
  for _ in $(seq 200); do
    ctl "$n" show status >/dev/null 2>&1 && { up=1; break; }
    kill -0 "$(cat "$RUN/$n/sr6.pid")" 2>/dev/null || break
    sleep 0.1
  done
  [ $up = 1 ] || { sed 's/^/   /' "$RUN/$n/sr6.log"; echo "demo.sh: sr6 run in $n did not come up" >&2; exit 1; }
  echo "   $n: $(grep -c '^ip' "$HERE/$n.conf") lines of $HERE/$n.conf, sr6 up"
}
say "sr6 run --config $HERE/rN.conf --mirror-kernel-routes on r1, r2, r4 (kernel forwarding off)"
for r in $SR6_ROUTERS; do start_sr6 "$r"; done
ip_lines() {  # NODE FILE: the file's `ip ...` lines given to NODE's kernel
  grep -E '^ip ' "$2" | sed 's/^ip //' | while read -r line; do
    ip -n "$P$1" $line || { echo "demo.sh: $1: ip $line failed" >&2; exit 1; }
  done
}
say "r3: a Linux kernel router ($HERE/r3.conf to its kernel; forwarding and seg6 on)"
ns r3 sysctl -qw net.ipv6.conf.all.forwarding=1 net.ipv6.conf.all.seg6_enabled=1 \
  net.ipv6.conf.r3-r1.seg6_enabled=1 net.ipv6.conf.r3-r4.seg6_enabled=1
ip_lines r3 "$HERE/r3.conf" || exit 1
say "r4's SID and policy into r4's kernel ($HERE/r4.kernel), standing in for zebra"
ip_lines r4 "$HERE/r4.kernel" || exit 1
grep -E '^ip ' "$HERE/r4.kernel" | sed 's/^/   /'

# ---- FRR -------------------------------------------------------------------------------
# Each router's daemons run as Debian's user frr, with their files in $RUN/NODE/frr.
frr_conf() {  # NODE NUMBER IFACE...: zebra.conf, staticd.conf, isisd.conf
  local n=$1 k=$2 d=$RUN/$1/frr i
  shift 2
  mkdir -p "$d" && chmod 777 "$d"
  printf 'hostname %s\n' "$n" >"$d/zebra.conf"
  # The locator: announced by IS-IS as the blackhole that catches what no SID takes.
  printf 'hostname %s\nipv6 route fc00:%s::/48 blackhole\n' "$n" "$k" >"$d/staticd.conf"
  {
    printf 'hostname %s\n' "$n"
    for i in "$@"; do
      printf 'interface %s\n ipv6 router isis core\n isis network point-to-point\n' "$i"
      printf ' isis hello-interval 1\n isis hello-multiplier 3\n!\n'
    done
    printf 'router isis core\n net 49.0001.0000.0000.000%s.00\n is-type level-2-only\n' "$k"
    printf ' metric-style wide\n redistribute ipv6 static level-2\n'
    printf ' spf-interval 1\n lsp-gen-interval 1\n!\n'
  } >"$d/isisd.conf"
}
frr_conf r1 1 r1-r2 r1-r3
frr_conf r2 2 r2-r1 r2-r4
frr_conf r3 3 r3-r1 r3-r4
frr_conf r4 4 r4-r2 r4-r3
frr_start() {  # NODE DAEMON (in the background, in this script's process group)
  local n=$1 daemon=$2 d=$RUN/$1/frr
  ip netns exec "$P$n" "$FRRD/$daemon" -f "$d/$daemon.conf" -i "$d/$daemon.pid" -z "$d/zserv.api" \
    --vty_socket "$d" --log "file:$d/$daemon.log" >/dev/null 2>&1 &
  echo $! >"$RUN/$n/$daemon.pid"
  for _ in $(seq 150); do [ -e "$d/$daemon.vty" ] && break; sleep 0.1; done
  [ -e "$d/$daemon.vty" ] || { echo "demo.sh: $daemon did not start in $n:" >&2; cat "$d/$daemon.log" >&2; exit 1; }
}
vty() { ip netns exec "$P$1" vtysh --vty_socket "$RUN/$1/frr" "${@:2}"; }
say "FRR on each router: zebra, staticd (the locator), isisd (area 49.0001, level 2)"
for r in $ROUTERS; do
  for d in zebra staticd isisd; do frr_start "$r" "$d"; done
  echo "   $r: zebra, staticd, isisd up"
done

say "IS-IS converging (every router learns the other three locators)"
mirrored() {  # NODE: the routes its sr6 mirrors from the kernel
  ctl "$1" show routes 2>/dev/null | sed -n '/# mirrored from the kernel/,$p' | grep -v '^#'
}
learned() {  # NODE: how many of the other routers' locators it has (sr6's, or r3's kernel's)
  if [ "$1" = r3 ]; then
    ip -n "${P}r3" -6 route show proto isis | grep -cE '^fc00:[1-4]::/48'
  else
    mirrored "$1" | grep -cE 'fc00:[1-4]::/48 (nhid|via)'
  fi
}
converged=0
for _ in $(seq 300); do
  all=1
  for r in $ROUTERS; do [ "$(learned "$r")" -ge 3 ] || { all=0; break; }; done
  [ $all = 1 ] && { converged=1; break; }
  sleep 0.1
done
for r in $ROUTERS; do
  echo "   $r: $(vty "$r" -c 'show isis neighbor' 2>/dev/null | grep -c Up) IS-IS neighbours up; $(learned "$r") locators learned"
done
echo "   r4's sr6 mirrors from its kernel:"
mirrored r4 | sed 's/^/     /'

# ---- traffic ---------------------------------------------------------------------------
# traffic.py (tests/live): numbered datagrams, counted at the receiver by sequence number.
T=tests/live/traffic.py
flows() {  # TAG COUNT: FLOWS flows h1 -> h2 at RATE each, ports 9000.., results in $RUN/TAG.N.json
  local tag=$1 count=$2 i pids=()
  for i in $(seq 0 $((FLOWS - 1))); do
    ns h2 python3 $T recv $((9000 + i)) "$count" 3 >"$RUN/$tag.$i.json" 2>"$RUN/$tag.$i.err" &
    pids+=($!)
  done
  for i in $(seq 0 $((FLOWS - 1))); do
    for _ in $(seq 100); do grep -q ready "$RUN/$tag.$i.err" 2>/dev/null && break; sleep 0.05; done
  done
  for i in $(seq 0 $((FLOWS - 1))); do
    ns h1 python3 $T send fc00:b::2 $((9000 + i)) "$count" "$RATE" >/dev/null &
    pids+=($!)
  done
  [ -z "${3:-}" ] || { sleep "$3"; $4; }
  wait "${pids[@]}"
}
total() {  # TAG FIELD: the field summed over the flows
  local s=0 i v
  for i in $(seq 0 $((FLOWS - 1))); do v=$(json "$RUN/$1.$i.json" "j['$2']"); [ "$v" = "?" ] && v=0; s=$((s + v)); done
  echo $s
}
rx() {  # NODE DEV: frames sr6 received on DEV (r3: the kernel's count)
  if [ "$1" = r3 ]; then
    ns r3 cat "/sys/class/net/$2/statistics/rx_packets"
    return
  fi
  ctl "$1" show counters --json 2>/dev/null |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["devices"][sys.argv[1]]["rx"])' "$2" 2>/dev/null || echo 0
}
# The devices of the paths sr6 on NODE has for PREFIX, from `show routes` (through the
# route's nexthop object, and the members of a group), sorted: "r1-r2 r1-r3".
paths() {  # NODE PREFIX
  ctl "$1" show routes 2>/dev/null | python3 -c '
import re, sys
prefix, lines = sys.argv[1], sys.stdin.read().splitlines()
nh = {}
for l in lines:
    m = re.match(r"ip (?:-6 )?nexthop add id (\d+) (.*)", l)
    if m:
        nh[m.group(1)] = m.group(2)
def devs(i):
    spec = nh.get(i, "")
    g = re.search(r"group (\S+)", spec)
    if g:
        return [d for m in g.group(1).split("/") for d in devs(m.split(",")[0])]
    d = re.search(r"dev (\S+)", spec)
    return [d.group(1)] if d else []
for l in lines:
    w = l.split()
    if prefix in w:
        m = re.search(r"nhid (\d+)", l)
        d = devs(m.group(1)) if m else re.findall(r"dev (\S+)", l)
        print(" ".join(sorted(d)))
        break' "$2"
}

say "ping h1 -> h2 and back (r1 H.Encaps -> r4 End.DT6; r4 H.Encaps -> r1 End.DT6)"
ping_ok=0
ns h1 ping -c 3 -i 0.2 -W 2 fc00:b::2 | sed 's/^/   /' && ping_ok=1

N=$((RATE * 2))
say "$FLOWS UDP flows h1 -> h2, $N datagrams each at $RATE/s: IS-IS's two paths share them"
before=$(paths r1 fc00:4::/48)
echo "   r1's paths to fc00:4::/48 (sr6's tables): $before"
r2_before=$(rx r2 r2-r1); r3_before=$(rx r3 r3-r1)
flows ecmp $N
N_ECMP=$N
r2_got=$(( $(rx r2 r2-r1) - r2_before )); r3_got=$(( $(rx r3 r3-r1) - r3_before ))
echo "   h2 received $(total ecmp unique) of $((FLOWS * N)); r2 (sr6) received $r2_got frames from r1, r3 (Linux) $r3_got"

N=$((RATE * 6))
fail_link() { ip -n "${P}r2" link set r2-r1 down; date +%s.%N >"$RUN/failed-at"; }
say "the link r1-r2 fails 2 s into $FLOWS flows of $N datagrams each at $RATE/s"
flows fail $N 2 fail_link
lost_max=0
for i in $(seq 0 $((FLOWS - 1))); do
  m=$(( N - $(json "$RUN/fail.$i.json" "j['unique']") ))
  [ "$m" -gt "$lost_max" ] && lost_max=$m
  echo "   flow $i: $(json "$RUN/fail.$i.json" "j['unique']") of $N received"
done
window_ms=$((lost_max * 1000 / RATE))
echo "   the longest loss: $lost_max datagrams, ${window_ms} ms"
after=$(paths r1 fc00:4::/48)
echo "   r1's paths to fc00:4::/48 now: $after"

# The devices of the paths NODE's kernel has for PREFIX (zebra's decision), as paths().
kpaths() {  # NODE PREFIX
  python3 - "$P$1" "$2" <<'PY'
import json, subprocess, sys
ns, prefix = sys.argv[1], sys.argv[2]
ip = lambda *a: json.loads(subprocess.run(["ip", "-n", ns, "-j", *a], capture_output=True, text=True).stdout or "[]")
nhs = {n["id"]: n for n in ip("nexthop", "show")}
def devs(i):
    n = nhs.get(i, {})
    if "group" in n:
        return [d for m in n["group"] for d in devs(m["id"])]
    return [n["dev"]] if "dev" in n else []
for r in ip("-6", "route", "show", prefix):
    d = devs(r["nhid"]) if "nhid" in r else [h["dev"] for h in r.get("nexthops", [r]) if "dev" in h]
    print(" ".join(sorted(d)))
    break
PY
}

say "the link comes back"
ip -n "${P}r2" link set r2-r1 up
# IS-IS finds both paths again; zebra puts them in the kernel (FRR 8.4's zebra does not
# always manage, see README.md: what is checked is that sr6 has what the kernel has).
back=0
for _ in $(seq 100); do
  [ "$(paths r1 fc00:4::/48)" = "r1-r2 r1-r3" ] && { back=1; break; }
  sleep 0.1
done
sleep 1
echo "   r1's paths to fc00:4::/48: IS-IS: $(vty r1 -c 'show isis route' | awk '$1 == "fc00:4::/48" {p=1} p && /r1-r/ {for (i = 1; i <= NF; i++) if ($i ~ /^r1-r/) print $i} p && /^ fc00:(12|13|24|34)/ {p=0}' | sort | tr '\n' ' ')"
kernel_back=$(kpaths r1 fc00:4::/48); sr6_back=$(paths r1 fc00:4::/48)
echo "   in r1's kernel (zebra's): $kernel_back; in r1's sr6: $sr6_back"

say "checks"
check "IS-IS converged: r1's, r2's and r4's sr6 mirror the other three locators from their kernels, r3's kernel has them" \
  eq "$converged" 1
check "r4's sr6 mirrors the End.DT6 SID and the H.Encaps policy from its kernel" \
  eq "$(mirrored r4 | grep -cE 'fc00:4::d6/128 encap seg6local action End.DT6|fc00:a::/64 encap seg6 mode encap segs fc00:1::d6')" 2
check "r1's sr6 took IS-IS's two equal-cost paths to r4's locator ($before)" eq "$before" "r1-r2 r1-r3"
check "ping h1 -> h2 through the SRv6 network (encapsulated at r1 and r4)" eq "$ping_ok" 1
check "all $((FLOWS * 2 * RATE)) datagrams of $FLOWS flows arrived ($(total ecmp unique))" \
  eq "$(total ecmp unique)" $((FLOWS * 2 * RATE))
# (r3's count includes its IS-IS hellos and neighbour discovery: a few a second.)
check "the flows took both paths: r2 (sr6) received $r2_got frames, r3 (Linux) $r3_got" \
  test "$r2_got" -ge "$N_ECMP" -a "$r3_got" -ge "$N_ECMP"
check "after the link failure, the flows came back: the longest loss was ${window_ms} ms (under 3 s)" \
  test "$lost_max" -lt $((RATE * 3))
check "no flow lost anything once converged: the last second of each flow arrived" \
  eq "$(for i in $(seq 0 $((FLOWS - 1))); do json "$RUN/fail.$i.json" "j['missing_last'] < $N - $RATE"; done | sort -u)" True
check "after the failure, r1's sr6 had the path through r3 only ($after)" eq "$after" "r1-r3"
check "with the link back, r1's sr6 has the paths zebra installed in the kernel ($sr6_back)" eq "$sr6_back" "$kernel_back"

echo
if [ $failed = 0 ]; then echo "== all checks passed"; else echo "== $failed check(s) FAILED"; fi
if [ "$mode" = --keep ]; then
  echo "left running: sr6 ctl --socket $RUN/r1/sr6.sock ...; vtysh --vty_socket $RUN/r1/frr (in ${P}r1);"
  echo "remove with: bash $HERE/demo.sh down"
fi
[ $failed = 0 ]
