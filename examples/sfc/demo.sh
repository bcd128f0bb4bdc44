#!/usr/bin/env bash
# A service function chain through SR-unaware functions, live, in network namespaces
# (the figure and the addresses: examples/sfc/README.md):
#
#   A -- ing (Linux: H.Encaps) -- sr6 (End.AD -> fw, End.AM -> mon) -- eg (Linux: End.DT6) -- B
#                                  |  |                |  |
#                                  fw (nftables)       mon (nftables counters)
#
# ing steers A's traffic to B's prefix through fc00:5::f1 (End.AD: the firewall gets the
# inner packet), fc00:5::c1 (End.AM: the monitor gets the SRv6 packet, destination set
# to the last segment) and fc00:e::d6 (End.DT6 on eg); eg steers B's answers back the
# same way through fc00:5::f2, fc00:5::c2 and fc00:d::d6 (End.DT6 on ing). IPv4 takes
# End.AD nh4 proxies of its own (fc00:5::f3/f4, on two more firewall links), the same
# End.AM, and End.DX4 at the ends. Then it sends traffic both ways in both families and
# checks what each node saw.
#
#   sudo bash examples/sfc/demo.sh           build sr6 (if cargo is on the PATH), run,
#                                            check, clean up
#   sudo bash examples/sfc/demo.sh --check   the same without building ($SR6_BIN or
#                                            target/release/sr6 must exist)
#   sudo bash examples/sfc/demo.sh --keep    leave it running; `... demo.sh down` removes it
#
# The exit status is 0 only if every check passed. Namespaces are ${SFC_PREFIX}NAME
# (default sr6sfc-), sr6's control socket and log are in /run/${SFC_PREFIX}demo/;
# SFC_BACKEND is sr6 run's --backend (default auto), SFC_COUNT the datagrams per flow.
set -uo pipefail
cd "$(dirname "$0")/../.."
HERE=examples/sfc
P=${SFC_PREFIX:-sr6sfc-}
RUN=/run/${P}demo
SR6=${SR6_BIN:-$PWD/target/release/sr6}
NODES="a ing sr6 fw mon eg b"
BACKEND=${SFC_BACKEND:-auto}   # sr6 run --backend
N=${SFC_COUNT:-200}            # UDP datagrams per flow
PINGS=3
mode=${1:-demo}

. examples/demo-lib.sh
demo_mode demo.sh
demo_prepare demo.sh "nft ethtool ping python3"

# Applies iproute2 lines to the kernel of a namespace.
kernel() {
  local n=$1 line
  while read -r line; do
    [ -z "$line" ] || ip -n "$P$n" $line || { echo "demo.sh: $n: ip $line failed" >&2; exit 1; }
  done
}

say "namespaces ${P}{${NODES// /,}} and their links"
for n in $NODES; do
  ip netns add "$P$n" || exit 1
  ns "$n" ip link set lo up
  ns "$n" sysctl -qw net.ipv6.conf.all.accept_dad=0 net.ipv6.conf.default.accept_dad=0 \
    net.ipv6.conf.all.accept_ra=0 net.ipv6.conf.default.accept_ra=0 \
    net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.default.rp_filter=0
done
# veth leaves checksums to "hardware" when the sender offloads them; a real wire always
# carries complete ones, so the offload is off.
link a a-ing ing ing-a
link ing ing-s sr6 s-ing
link sr6 s-fw1 fw fw-s1
link sr6 s-fw2 fw fw-s2
link sr6 s-mon1 mon mon-s1
link sr6 s-mon2 mon mon-s2
link sr6 s-fw3 fw fw-s3
link sr6 s-fw4 fw fw-s4
link sr6 s-eg eg eg-s
link eg eg-b b b-eg
for n in ing fw mon eg; do ns $n sysctl -qw net.ipv6.conf.all.forwarding=1 net.ipv4.ip_forward=1; done

say "hosts: A fc00:a::2 and 10.1.0.2, B fc00:b::2 and 10.2.0.2"
kernel a <<'EOF'
-6 addr add fc00:a::2/64 dev a-ing nodad
-6 route add default via fc00:a::1 dev a-ing
addr add 10.1.0.2/24 dev a-ing
route add default via 10.1.0.1 dev a-ing
EOF
kernel b <<'EOF'
-6 addr add fc00:b::2/64 dev b-eg nodad
-6 route add default via fc00:b::1 dev b-eg
addr add 10.2.0.2/24 dev b-eg
route add default via 10.2.0.1 dev b-eg
EOF

say "ing (Linux): H.Encaps of A -> B into f1,c1,e::d6 (IPv4: f3,c1,e::d4); End.DT6 fc00:d::d6, End.DX4 fc00:d::d4 for B -> A"
ns ing sysctl -qw net.ipv6.conf.all.seg6_enabled=1 net.ipv6.conf.ing-s.seg6_enabled=1
kernel ing <<'EOF'
-6 addr add fc00:a::1/64 dev ing-a nodad
-6 addr add fc00:1::1/64 dev ing-s nodad
sr tunsrc set fc00:1::1
-6 route add fc00:5::/64 via fc00:1::2 dev ing-s
-6 route add fc00:b::/64 encap seg6 mode encap segs fc00:5::f1,fc00:5::c1,fc00:e::d6 dev ing-s
-6 route add fc00:d::d6/128 encap seg6local action End.DT6 table main dev ing-s
addr add 10.1.0.1/24 dev ing-a
route add 10.2.0.0/24 encap seg6 mode encap segs fc00:5::f3,fc00:5::c1,fc00:e::d4 dev ing-s
-6 route add fc00:d::d4/128 encap seg6local action End.DX4 nh4 10.1.0.2 dev ing-s
EOF
{ ns ing ip -6 route show; ns ing ip -4 route show; } | grep -v '^fe80' | sed 's/^/   /'

say "eg (Linux): End.DT6 fc00:e::d6, End.DX4 fc00:e::d4 for A -> B; H.Encaps of B -> A into f2,c2,d::d6 (IPv4: f4,c2,d::d4)"
ns eg sysctl -qw net.ipv6.conf.all.seg6_enabled=1 net.ipv6.conf.eg-s.seg6_enabled=1
kernel eg <<'EOF'
-6 addr add fc00:2::2/64 dev eg-s nodad
-6 addr add fc00:b::1/64 dev eg-b nodad
sr tunsrc set fc00:2::2
-6 route add fc00:5::/64 via fc00:2::1 dev eg-s
-6 route add fc00:e::d6/128 encap seg6local action End.DT6 table main count dev eg-s
-6 route add fc00:a::/64 encap seg6 mode encap segs fc00:5::f2,fc00:5::c2,fc00:d::d6 dev eg-s
addr add 10.2.0.1/24 dev eg-b
-6 route add fc00:e::d4/128 encap seg6local action End.DX4 nh4 10.2.0.2 count dev eg-s
route add 10.1.0.0/24 encap seg6 mode encap segs fc00:5::f4,fc00:5::c2,fc00:d::d4 dev eg-s
EOF
{ ns eg ip -6 route show; ns eg ip -4 route show; } | grep -v '^fe80' | sed 's/^/   /'

say "fw (SR-unaware firewall, nftables $HERE/firewall.nft): routes A <-> B, IPv6 and IPv4, no SRv6"
kernel fw <<'EOF'
-6 addr add fc00:11::2/64 dev fw-s1 nodad
-6 addr add fc00:12::2/64 dev fw-s2 nodad
-6 route add fc00:b::/64 via fc00:12::1 dev fw-s2
-6 route add fc00:a::/64 via fc00:11::1 dev fw-s1
addr add 10.0.3.2/24 dev fw-s3
addr add 10.0.4.2/24 dev fw-s4
route add 10.2.0.0/24 via 10.0.4.1 dev fw-s4
route add 10.1.0.0/24 via 10.0.3.1 dev fw-s3
EOF
ns fw nft -f "$HERE/firewall.nft" || exit 1
ns fw nft list chain inet sfc forward | sed 's/^/   /'

say "mon (SR-unaware monitor, nftables $HERE/monitor.nft): routes the chain's last segments"
kernel mon <<'EOF'
-6 addr add fc00:21::2/64 dev mon-s1 nodad
-6 addr add fc00:22::2/64 dev mon-s2 nodad
-6 route add fc00:e::/64 via fc00:22::1 dev mon-s2
-6 route add fc00:d::/64 via fc00:21::1 dev mon-s1
EOF
ns mon nft -f "$HERE/monitor.nft" || exit 1
ns mon nft list chain ip6 sfc forward | sed 's/^/   /'

say "sr6 run --config $HERE/sr6.conf (in ${P}sr6; its kernel holds the addresses, forwarding off)"
ns sr6 sysctl -qw net.ipv6.conf.all.forwarding=0 net.ipv4.ip_forward=0
grep -E '^ip (-6 )?addr add ' "$HERE/sr6.conf" | sed 's/^ip //; s/^-6 .*/& nodad/' | kernel sr6 || exit 1
# `ip netns exec` execs sr6: $! is sr6's own pid (what `down` stops).
ip netns exec "${P}sr6" "$SR6" run --config "$HERE/sr6.conf" --socket "$RUN/sr6.sock" --backend "$BACKEND" --verbose >"$RUN/sr6.log" 2>&1 &
echo $! >"$RUN/sr6.pid"
ctl() { "$SR6" ctl --socket "$RUN/sr6.sock" "$@"; }
up=0
for _ in $(seq 200); do
  ctl show status >/dev/null 2>&1 && { up=1; break; }
  kill -0 "$(cat "$RUN/sr6.pid")" 2>/dev/null || break
  sleep 0.1
done
sed 's/^/   /' "$RUN/sr6.log"
[ $up = 1 ] || { echo "demo.sh: sr6 run did not come up" >&2; exit 1; }
grep -E '^ip .*End\.A[DM]' "$HERE/sr6.conf" | sed 's/^/   /'

# ---- traffic -------------------------------------------------------------------------
# traffic.py (tests/live): numbered UDP datagrams, counted by sequence number at the
# receiver, which reports JSON once it has COUNT of them or nothing came for 2 s.
recv_start() {  # NODE PORT OUTFILE -> a receiver, bound when this returns
  ns "$1" python3 tests/live/traffic.py recv "$2" "$N" 2 >"$3" 2>"$3.err" &
  for _ in $(seq 100); do grep -q ready "$3.err" 2>/dev/null && return; sleep 0.05; done
}
send() { ns "$1" python3 tests/live/traffic.py send "$2" "$3" "$N" 1000 >/dev/null; }
field() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get(sys.argv[2], -1))' "$1" "$2" 2>/dev/null || echo -1; }
addr_a() { if [ "$1" = 6 ]; then echo fc00:a::2; else echo 10.1.0.2; fi; }
addr_b() { if [ "$1" = 6 ]; then echo fc00:b::2; else echo 10.2.0.2; fi; }

for v in 6 4; do
  a=$(addr_a $v) b=$(addr_b $v)
  say "IPv$v, A -> B: $N UDP datagrams to [$b]:7000 (the firewall lets them pass)"
  recv_start b 7000 "$RUN/allowed$v.json"; send a "$b" 7000; wait $!
  echo "   B received: $(cat "$RUN/allowed$v.json")"
  say "IPv$v, A -> B: $N UDP datagrams to [$b]:7001 (the firewall drops them)"
  recv_start b 7001 "$RUN/blocked$v.json"; send a "$b" 7001; wait $!
  echo "   B received: $(cat "$RUN/blocked$v.json")"
  say "IPv$v, B -> A: $N UDP datagrams to [$a]:7000"
  recv_start a 7000 "$RUN/back$v.json"; send b "$a" 7000; wait $!
  echo "   A received: $(cat "$RUN/back$v.json")"
  say "IPv$v, A -> B: $PINGS pings to $b; B's answers come back through the B -> A chain"
  ns a ping -c $PINGS -i 0.2 -W 2 "$b" >"$RUN/ping$v.txt" 2>&1
  sed 's/^/   /' "$RUN/ping$v.txt"
done

# ---- what each node saw ----------------------------------------------------------------
nftc() {  # NODE FAMILY COUNTER -> packets
  ns "$1" nft list counter "$2" sfc "$3" | sed -n 's/.*packets \([0-9]*\).*/\1/p'
}
say "the firewall's counters"
ns fw nft list counters table inet sfc | grep -E 'counter|packets' | paste - - | sed 's/[{}]//g; s/^/  /'
say "the monitor's counters"
ns mon nft list counters table ip6 sfc | grep -E 'counter|packets' | paste - - | sed 's/[{}]//g; s/^/  /'
say "the egress's End.DT6 and End.DX4"
ns eg ip -s -6 route show table main | grep -E 'End\.D' | sed 's/^/   /'
say "sr6 ctl show proxies"
ctl show proxies | sed 's/^/   /'
ctl show proxies --json >"$RUN/proxies.json"

say "checks"
route_count() { ns "$1" ip -s -6 route show "$2" | sed -n 's/.*packets \([0-9]*\).*/\1/p'; }
for v in 6 4; do
  got=$(field "$RUN/allowed$v.json" unique)
  check "IPv$v: B received all $N datagrams to port 7000 (got $got)" eq "$got" "$N"
  got=$(field "$RUN/blocked$v.json" received)
  check "IPv$v: B received none of the $N datagrams to port 7001 (got $got)" eq "$got" 0
  got=$(field "$RUN/back$v.json" unique)
  check "IPv$v: A received all $N datagrams from B (got $got)" eq "$got" "$N"
  got=$(sed -n 's/.* \([0-9]*\) received.*/\1/p' "$RUN/ping$v.txt")
  check "IPv$v: A got all $PINGS ping answers (got ${got:-0})" eq "$got" "$PINGS"
done
# Per family: N allowed + N blocked A -> B, N B -> A, PINGS requests and answers.
got=$(nftc fw inet blocked)
check "the firewall dropped all $((2 * N)) datagrams to port 7001 (counter blocked: $got)" eq "$got" $((2 * N))
got=$(nftc fw inet allowed)
check "the firewall passed the $((4 * N)) datagrams to port 7000, both ways (counter allowed: $got)" eq "$got" $((4 * N))
got=$(nftc fw inet plain)
check "the firewall forwarded $((3 * N + 2 * PINGS)) plain IPv6 packets (counter plain: $got)" eq "$got" $((3 * N + 2 * PINGS))
got=$(nftc fw inet ipv4)
check "the firewall forwarded $((3 * N + 2 * PINGS)) IPv4 packets (counter ipv4: $got)" eq "$got" $((3 * N + 2 * PINGS))
got=$(nftc fw inet routing_header)
check "the firewall saw no routing header (counter routing_header: $got)" eq "$got" 0
got=$(route_count eg fc00:e::d6/128)
check "eg's End.DT6 decapsulated $((N + PINGS)) packets: the allowed ones and the pings (count: $got)" eq "$got" $((N + PINGS))
got=$(route_count eg fc00:e::d4/128)
check "eg's End.DX4 decapsulated $((N + PINGS)) packets: the allowed ones and the pings (count: $got)" eq "$got" $((N + PINGS))
got=$(nftc mon ip6 srh_a_to_b)
check "the monitor forwarded $((2 * (N + PINGS))) A -> B packets with the SRH, SL 1, DA = fc00:e::d6/d4 (got $got)" eq "$got" $((2 * (N + PINGS)))
got=$(nftc mon ip6 srh_b_to_a)
check "the monitor forwarded $((2 * (N + PINGS))) B -> A packets with the SRH, SL 1, DA = fc00:d::d6/d4 (got $got)" eq "$got" $((2 * (N + PINGS)))
got=$(nftc mon ip6 other)
check "the monitor saw nothing else (counter other: $got)" eq "$got" 0
# sr6's proxies: the packets each one handed to its function and took back; each
# End.AD's cache holds the outer header and SRH of its direction as they leave it
# (source: the head-end's; destination: the End.AM SID that follows, Segments Left 1);
# every packet back from the firewall found it (hits, no misses); no drops.
while read -r ok what; do
  check "sr6: $what" eq "$ok" 1
done < <(python3 - "$RUN/proxies.json" "$N" "$PINGS" <<'EOF'
import json, sys
path, n, pings = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
try:
    proxies = {p["sid"]: p for p in json.load(open(path))}
except (OSError, ValueError, KeyError, TypeError) as e:
    print(0, f"show proxies --json: a list of proxies, each with its sid ({e})")
    sys.exit()
# SID: (behaviour, packets to the function, back from it, End.AD: the cached source and
# segment list, Segment List[0] first). Per family and direction: N + PINGS packets
# (and N blocked A -> B, which never come back).
one, both = n + pings, 2 * (n + pings)
want = {
    "fc00:5::f1/128": ("End.AD", one + n, one, "fc00:1::1", ["fc00:e::d6", "fc00:5::c1", "fc00:5::f1"]),
    "fc00:5::f3/128": ("End.AD", one + n, one, "fc00:1::1", ["fc00:e::d4", "fc00:5::c1", "fc00:5::f3"]),
    "fc00:5::c1/128": ("End.AM", both, both, None, None),
    "fc00:5::f2/128": ("End.AD", one, one, "fc00:2::2", ["fc00:d::d6", "fc00:5::c2", "fc00:5::f2"]),
    "fc00:5::f4/128": ("End.AD", one, one, "fc00:2::2", ["fc00:d::d4", "fc00:5::c2", "fc00:5::f4"]),
    "fc00:5::c2/128": ("End.AM", both, both, None, None),
}
for sid, (beh, to_fn, from_fn, src, segs) in want.items():
    p = proxies.get(sid)
    if p is None:
        print(0, f"{sid} in show proxies (it has {sorted(proxies)})")
        continue
    got = (p.get("behaviour"), p.get("to_function"), p.get("from_function"), p.get("drops"))
    print(int(got == (beh, to_fn, from_fn, {})),
          f"{sid} {got[0]}: {got[1]} packets to the function, {got[2]} back, drops {got[3]}"
          f" (expected {beh}: {to_fn}, {from_fn}, none)")
    if segs:
        c = p.get("cache") or {}
        got = (c.get("state"), c.get("src"), c.get("dst"), c.get("segments_left"), c.get("segments"))
        print(int(got == ("headers", src, segs[1], 1, segs)),
              f"{sid} cache: {got[0]}, src {got[1]}, dst {got[2]}, SL {got[3]}, segments {got[4]}")
        print(int((p.get("hits"), p.get("misses")) == (from_fn, 0)),
              f"{sid} cache hits {p.get('hits')} (expected {from_fn}), misses {p.get('misses')} (expected 0)")
EOF
)

echo
if [ $failed = 0 ]; then echo "== all checks passed"; else echo "== $failed check(s) FAILED"; fi
if [ "$mode" = --keep ]; then
  echo "left running: sr6 ctl --socket $RUN/sr6.sock ...; remove with: bash $HERE/demo.sh down"
fi
[ $failed = 0 ]
