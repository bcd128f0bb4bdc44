#!/usr/bin/env bash
# An SR-aware service chain, live, in network namespaces (examples/sfc/README.md, "An
# SR-aware chain"; the thesis's chapter 4): no proxy, the functions read SRv6 themselves.
#
#   A -- ing (Linux: H.Encaps) -- fw (sr6: SERA firewall) -- ids (sr6: IPS) -- eg (Linux: End.DT6) -- B
#
# ing steers A's traffic to B through fc00:6::f1 (SERA on fw), fc00:7::a1 (the IPS on
# ids) and fc00:e::d6 (End.DT6 on eg). SERA's rule, in basic mode, reads the inner
# packet and sends A's trusted flow (UDP to B's port 7000) past the IPS (skip-next);
# everything else goes to the IPS, whose Snort rules drop a payload with ATTACK in it and
# raise an alert for a probe. B's answers come back from eg straight to End.DT6 on ing
# (transit through ids and fw). Then it sends four UDP flows and pings, and checks what
# each node saw.
#
#   sudo bash examples/sfc/sr-aware.sh           build sr6 (if cargo is on the PATH), run,
#                                                check, clean up
#   sudo bash examples/sfc/sr-aware.sh --check   the same without building ($SR6_BIN or
#                                                target/release/sr6 must exist)
#   sudo bash examples/sfc/sr-aware.sh --keep    leave it running; `... sr-aware.sh down`
#                                                removes it
#
# The exit status is 0 only if every check passed. Namespaces are ${SFC_PREFIX}NAME
# (default sr6sra-); the control sockets (fw.sock, ids.sock), logs and the IPS's alerts
# file are in /run/${SFC_PREFIX}demo/; SFC_BACKEND is sr6 run's --backend (default
# auto), SFC_COUNT the datagrams per flow.
set -uo pipefail
cd "$(dirname "$0")/../.."
HERE=examples/sfc
P=${SFC_PREFIX:-sr6sra-}
RUN=/run/${P}demo
SR6=${SR6_BIN:-$PWD/target/release/sr6}
NODES="a ing fw ids eg b"
BACKEND=${SFC_BACKEND:-auto}   # sr6 run --backend
N=${SFC_COUNT:-200}            # UDP datagrams per flow
PINGS=3
mode=${1:-demo}

. examples/demo-lib.sh
demo_mode sr-aware.sh
demo_prepare sr-aware.sh "ethtool ping python3"

kernel() {  # NODE < iproute2 lines
  local n=$1 line
  while read -r line; do
    [ -z "$line" ] || ip -n "$P$n" $line || { echo "sr-aware.sh: $n: ip $line failed" >&2; exit 1; }
  done
}

say "namespaces ${P}{${NODES// /,}} and their links"
for n in $NODES; do
  ip netns add "$P$n" || exit 1
  ns "$n" ip link set lo up
  ns "$n" sysctl -qw net.ipv6.conf.all.accept_dad=0 net.ipv6.conf.default.accept_dad=0 \
    net.ipv6.conf.all.accept_ra=0 net.ipv6.conf.default.accept_ra=0
done
# veth leaves checksums to "hardware" when the sender offloads them: off, as on a wire.
link a a-ing ing ing-a
link ing ing-f fw f-ing
link fw f-ids ids i-fw
link ids i-eg eg eg-i
link eg eg-b b b-eg
for n in ing eg; do ns $n sysctl -qw net.ipv6.conf.all.forwarding=1; done

say "hosts: A fc00:a::2, B fc00:b::2"
kernel a <<'EOF'
-6 addr add fc00:a::2/64 dev a-ing nodad
-6 route add default via fc00:a::1 dev a-ing
EOF
kernel b <<'EOF'
-6 addr add fc00:b::2/64 dev b-eg nodad
-6 route add default via fc00:b::1 dev b-eg
EOF

say "ing (Linux): H.Encaps of A -> B into fc00:6::f1 (SERA), fc00:7::a1 (IPS), fc00:e::d6; End.DT6 fc00:d::d6 back"
ns ing sysctl -qw net.ipv6.conf.all.seg6_enabled=1 net.ipv6.conf.ing-f.seg6_enabled=1
kernel ing <<'EOF'
-6 addr add fc00:a::1/64 dev ing-a nodad
-6 addr add fc00:31::1/64 dev ing-f nodad
sr tunsrc set fc00:31::1
-6 route add fc00:6::/64 via fc00:31::2 dev ing-f
-6 route add fc00:7::/64 via fc00:31::2 dev ing-f
-6 route add fc00:e::/64 via fc00:31::2 dev ing-f
-6 route add fc00:b::/64 encap seg6 mode encap segs fc00:6::f1,fc00:7::a1,fc00:e::d6 dev ing-f
-6 route add fc00:d::d6/128 encap seg6local action End.DT6 table main count dev ing-f
EOF
ns ing ip -6 route show | grep -v '^fe80' | sed 's/^/   /'

say "eg (Linux): End.DT6 fc00:e::d6; H.Encaps of B -> A straight to fc00:d::d6"
ns eg sysctl -qw net.ipv6.conf.all.seg6_enabled=1 net.ipv6.conf.eg-i.seg6_enabled=1
kernel eg <<'EOF'
-6 addr add fc00:33::2/64 dev eg-i nodad
-6 addr add fc00:b::1/64 dev eg-b nodad
sr tunsrc set fc00:33::2
-6 route add fc00:6::/64 via fc00:33::1 dev eg-i
-6 route add fc00:7::/64 via fc00:33::1 dev eg-i
-6 route add fc00:d::/64 via fc00:33::1 dev eg-i
-6 route add fc00:e::d6/128 encap seg6local action End.DT6 table main count dev eg-i
-6 route add fc00:a::/64 encap seg6 mode encap segs fc00:d::d6 dev eg-i
EOF
ns eg ip -6 route show | grep -v '^fe80' | sed 's/^/   /'

# The IPS writes its alerts next to its configuration: a copy of it in $RUN, with the
# alerts file added, so that the repository's directory stays clean.
sed 's|^ids rules ips.rules .*|& alerts alerts.jsonl|' "$HERE/ips.conf" >"$RUN/ips.conf"
cp "$HERE/ips.rules" "$RUN/ips.rules"
start() {  # ROUTER CONFIG: sr6 run in the router's namespace, its kernel holding the addresses
  local r=$1 conf=$2 up=0
  ns "$r" sysctl -qw net.ipv6.conf.all.forwarding=0
  grep -E '^ip -6 addr add ' "$conf" | sed 's/^ip //; s/$/ nodad/' | kernel "$r" || exit 1
  # `ip netns exec` execs sr6: $! is sr6's own pid (what `down` stops).
  ip netns exec "$P$r" "$SR6" run --config "$conf" --socket "$RUN/$r.sock" --backend "$BACKEND" \
    --verbose >"$RUN/$r.log" 2>&1 &
  echo $! >"$RUN/$r.pid"
  for _ in $(seq 200); do
    "$SR6" ctl --socket "$RUN/$r.sock" show status >/dev/null 2>&1 && { up=1; break; }
    kill -0 "$(cat "$RUN/$r.pid")" 2>/dev/null || break
    sleep 0.1
  done
  sed 's/^/   /' "$RUN/$r.log"
  [ $up = 1 ] || { echo "sr-aware.sh: sr6 run in $P$r did not come up" >&2; exit 1; }
}
fw() { "$SR6" ctl --socket "$RUN/fw.sock" "$@"; }
ids() { "$SR6" ctl --socket "$RUN/ids.sock" "$@"; }

say "fw: sr6 run --config $HERE/sera.conf (SERA: End fc00:6::f1 behind the firewall's INPUT chain, basic mode)"
start fw "$HERE/sera.conf"
fw show firewall | sed 's/^/   /'
say "ids: sr6 run --config $HERE/ips.conf (End fc00:7::a1 behind the IPS, rules $HERE/ips.rules)"
start ids "$RUN/ips.conf"
ids ids stats | sed 's/^/   /'
grep -v '^#' "$HERE/ips.rules" | sed 's/^/   /'

# ---- traffic -------------------------------------------------------------------------
# traffic.py (tests/live): numbered UDP datagrams (payload: an 8-byte sequence number and
# TEXT repeated to 64 bytes), counted by sequence number at the receiver.
recv_start() {  # PORT OUTFILE -> a receiver on B, bound when this returns
  ns b python3 tests/live/traffic.py recv "$1" "$N" 2 >"$2" 2>"$2.err" &
  for _ in $(seq 100); do grep -q ready "$2.err" 2>/dev/null && return; sleep 0.05; done
}
send() { ns a python3 tests/live/traffic.py send fc00:b::2 "$1" "$N" 1000 "$2" >/dev/null; }
field() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get(sys.argv[2], -1))' "$1" "$2" 2>/dev/null || echo -1; }
flow() {  # NAME PORT TEXT WHAT
  say "A -> B: $N UDP datagrams to [fc00:b::2]:$2 with \"$3\" in them ($4)"
  recv_start "$2" "$RUN/$1.json"; send "$2" "$3"; wait $!
  echo "   B received: $(cat "$RUN/$1.json")"
}
flow trusted 7000 ATTACK- "trusted: SERA skips the IPS, so even this payload passes"
flow clean 7001 hello- "through the IPS, nothing to find"
flow attack 7001 ATTACK- "through the IPS, which drops them"
flow probe 7002 Probe- "through the IPS, which raises an alert and lets them pass"
say "A -> B: $PINGS pings to fc00:b::2 (through the IPS); B's answers come back through fw and ids in transit"
ns a ping -c $PINGS -i 0.2 -W 2 fc00:b::2 >"$RUN/ping.txt" 2>&1
sed 's/^/   /' "$RUN/ping.txt"

# ---- what each node saw ----------------------------------------------------------------
say "fw: sr6 ctl show firewall"
fw show firewall | sed 's/^/   /'
fw show firewall --json >"$RUN/firewall.json"
say "ids: sr6 ctl ids stats, the last alerts"
ids ids stats | sed 's/^/   /'
ids ids stats --json >"$RUN/ids.json"
ids ids alerts -n 2 | sed 's/^/   /'
say "the kernels' End.DT6"
{ ns eg ip -s -6 route show fc00:e::d6/128; ns ing ip -s -6 route show fc00:d::d6/128; } | sed 's/^/   /'
# The writer thread appends alerts within moments: wait for them (at most 5 s).
for _ in $(seq 50); do
  [ "$(wc -l <"$RUN/alerts.jsonl" 2>/dev/null || echo 0)" -ge $((2 * N)) ] && break
  sleep 0.1
done

say "checks"
route_count() { ns "$1" ip -s -6 route show "$2" | sed -n 's/.*packets \([0-9]*\).*/\1/p'; }
got=$(field "$RUN/trusted.json" unique)
check "B received all $N datagrams of the trusted flow, ATTACK inside (got $got)" eq "$got" "$N"
got=$(field "$RUN/clean.json" unique)
check "B received all $N clean datagrams to port 7001 (got $got)" eq "$got" "$N"
got=$(field "$RUN/attack.json" received)
check "B received none of the $N ATTACK datagrams to port 7001 (got $got)" eq "$got" 0
got=$(field "$RUN/probe.json" unique)
check "B received all $N probes to port 7002 (got $got)" eq "$got" "$N"
got=$(sed -n 's/.* \([0-9]*\) received.*/\1/p' "$RUN/ping.txt")
check "A got all $PINGS ping answers (got ${got:-0})" eq "$got" "$PINGS"
got=$(route_count eg fc00:e::d6/128)
check "eg's End.DT6 decapsulated $((3 * N + PINGS)) packets: all but the dropped flow (count: $got)" eq "$got" $((3 * N + PINGS))
got=$(route_count ing fc00:d::d6/128)
check "ing's End.DT6 decapsulated the $PINGS ping answers (count: $got)" eq "$got" "$PINGS"
# sr6's own accounts: SERA's rule counted the trusted flow and nothing else; the IPS
# inspected everything else A sent and nothing of the trusted flow; its alerts name the
# rule, the inner packet, the outer one and the active SID.
while read -r ok what; do
  check "sr6: $what" eq "$ok" 1
done < <(python3 - "$RUN" "$N" "$PINGS" <<'EOF'
import json, sys
run, n, pings = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
def load(name):
    try:
        with open(f"{run}/{name}") as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        print(0, f"{name}: readable JSON ({e})")
        sys.exit()
fw = load("firewall.json")
rules = [r for r in fw if r.get("rule", "").startswith("-A INPUT")]
got = [(r.get("packets"), "skip-next" in r.get("rule", "")) for r in rules]
print(int(got == [(n, True)]), f"fw: the SEG6 skip-next rule matched the {n} trusted datagrams and only them (rules: {got})")
pol = [r.get("packets") for r in fw if r.get("rule") == "-P INPUT ACCEPT"]
print(int(pol == [3 * n + pings]), f"fw: INPUT's policy accepted the other {3 * n + pings} packets to fc00:6::f1 (got {pol})")
s = load("ids.json")
got = (s.get("mode"), s.get("inspected"), s.get("dropped"), s.get("alerts"), s.get("malformed"), s.get("alerts_lost"))
want = ("ips", 3 * n + pings, n, 2 * n, 0, 0)
print(int(got == want), "ids: mode, inspected, dropped, alerts, malformed, lost "
      f"{got} (expected {want}: the trusted flow never reached the IPS)")
alerts = []
try:
    with open(f"{run}/alerts.jsonl") as f:
        alerts = [json.loads(line) for line in f if line.strip()]
except (OSError, ValueError) as e:
    print(0, f"alerts.jsonl: JSON lines ({e})")
by = {}
for a in alerts:
    key = (a.get("sid"), a.get("action"), a.get("dport"))
    by[key] = by.get(key, 0) + 1
want = {(1000001, "drop", 7001): n, (1000002, "alert", 7002): n}
print(int(by == want), f"alerts.jsonl: {n} drops of sid 1000001 (port 7001) and {n} alerts of sid 1000002 "
      f"(port 7002), none for the trusted flow (got {by})")
same = {(a.get("src"), a.get("dst"), a.get("outer_src"), a.get("outer_dst"), a.get("active_sid"), a.get("point"),
         a.get("proto")) for a in alerts}
want = {("fc00:a::2", "fc00:b::2", "fc00:31::1", "fc00:7::a1", "fc00:7::a1", "input", 17)}
print(int(same == want), f"alerts.jsonl: inner A -> B, outer ing -> the IPS's SID, at input (got {same})")
EOF
)

echo
if [ $failed = 0 ]; then echo "== all checks passed"; else echo "== $failed check(s) FAILED"; fi
if [ "$mode" = --keep ]; then
  echo "left running: sr6 ctl --socket $RUN/fw.sock|ids.sock ...; remove with: bash $HERE/sr-aware.sh down"
fi
[ $failed = 0 ]
