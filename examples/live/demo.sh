#!/usr/bin/env bash
# sr6 as a live router between Linux kernel SRv6 routers, in network namespaces:
#
#   h1 --- r1 (kernel: H.Encaps) --- r2 (sr6: End) --- r3 (kernel: End.DT6) --- h2
#   fc00:a::2                                                              fc00:b::2
#
# r1 encapsulates h1's traffic to fc00:b::/64 with the segments fc00:2::e (End on sr6)
# and fc00:3::d6 (End.DT6 on r3). On r2 the kernel holds the addresses (it answers
# neighbour discovery) but forwarding is off: only sr6 forwards there.
#
#   sudo bash examples/live/demo.sh          # build, ping, send UDP, show counters, clean up
#   KEEP=1 sudo bash examples/live/demo.sh   # leave it running; `bash examples/live/demo.sh down` removes it
#
# Namespaces are named sr6demo-*; the sr6 control socket is /run/sr6demo.sock
# (e.g. `sr6 ctl --socket /run/sr6demo.sock show sids`).
set -euo pipefail
cd "$(dirname "$0")/../.."
P=sr6demo-
SOCK=/run/sr6demo.sock
# sr6 run's own output (start line, warnings, the counters again when it stops).
LOG=/tmp/sr6demo-run.log
SR6=${SR6_BIN:-$PWD/target/release/sr6}

down() {
  if [ -f /run/sr6demo.pid ]; then kill "$(cat /run/sr6demo.pid)" 2>/dev/null || true; rm -f /run/sr6demo.pid; sleep 0.5; fi
  for n in h1 r1 r2 r3 h2; do ip netns del "$P$n" 2>/dev/null || true; done
}
if [ "${1:-}" = down ]; then down; exit 0; fi
[ "$(id -u)" = 0 ] || { echo "demo.sh: needs root (network namespaces, XDP)" >&2; exit 1; }
for t in ping:iputils-ping ethtool:ethtool; do
  command -v "${t%%:*}" >/dev/null || apt-get install -y -qq "${t#*:}" >/dev/null 2>&1 || true
done
[ -x "$SR6" ] || { bash scripts/setup.sh --build && cargo build --release --quiet -p sr6; }
down
[ "${KEEP:-0}" = 1 ] || trap down EXIT

ns() { ip netns exec "$P$1" "${@:2}"; }
for n in h1 r1 r2 r3 h2; do
  ip netns add "$P$n"
  ns "$n" ip link set lo up
  ns "$n" sysctl -qw net.ipv6.conf.all.accept_dad=0 net.ipv6.conf.default.accept_dad=0
done
# veth computes no checksum when the sender leaves it to "hardware" (offload); a real
# wire always carries complete checksums, so turn the offload off.
link() {
  ip link add "$2" netns "$P$1" type veth peer name "$4" netns "$P$3"
  ns "$1" ip link set "$2" up; ns "$3" ip link set "$4" up
  ns "$1" ethtool -K "$2" tx off >/dev/null; ns "$3" ethtool -K "$4" tx off >/dev/null
}
link h1 h1-r1 r1 r1-h1
link r1 r1-r2 r2 r2-r1
link r2 r2-r3 r3 r3-r2
link r3 r3-h2 h2 h2-r3

# Hosts.
ns h1 ip -6 addr add fc00:a::2/64 dev h1-r1 nodad
ns h1 ip -6 route add default via fc00:a::1
ns h2 ip -6 addr add fc00:b::2/64 dev h2-r3 nodad
ns h2 ip -6 route add default via fc00:b::1
# r1: Linux kernel ingress (H.Encaps).
ns r1 sysctl -qw net.ipv6.conf.all.forwarding=1
ns r1 ip -6 addr add fc00:a::1/64 dev r1-h1 nodad
ns r1 ip -6 addr add fc00:12::1/64 dev r1-r2 nodad
ns r1 ip -6 route add fc00:2::/48 via fc00:12::2
ns r1 ip -6 route add fc00:3::/48 via fc00:12::2
ns r1 ip -6 route add fc00:b::/64 encap seg6 mode encap segs fc00:2::e,fc00:3::d6 dev r1-r2
# r3: Linux kernel egress (End.DT6).
ns r3 sysctl -qw net.ipv6.conf.all.forwarding=1 net.ipv6.conf.all.seg6_enabled=1 net.ipv6.conf.r3-r2.seg6_enabled=1
ns r3 ip -6 addr add fc00:23::3/64 dev r3-r2 nodad
ns r3 ip -6 addr add fc00:b::1/64 dev r3-h2 nodad
ns r3 ip -6 route add fc00:a::/64 via fc00:23::2
ns r3 ip -6 route add fc00:3::d6/128 encap seg6local action End.DT6 table 254 dev r3-r2
# r2: sr6. The kernel gets the addresses only, and does not forward.
ns r2 sysctl -qw net.ipv6.conf.all.forwarding=0
ns r2 ip -6 addr add fc00:12::2/64 dev r2-r1 nodad
ns r2 ip -6 addr add fc00:23::2/64 dev r2-r3 nodad
echo "== sr6 run --config examples/live/r2.conf (in namespace ${P}r2; its log: $LOG)"
ip netns exec "${P}r2" "$SR6" run --config examples/live/r2.conf --socket "$SOCK" >"$LOG" 2>&1 &
echo $! > /run/sr6demo.pid
for _ in $(seq 100); do "$SR6" ctl --socket "$SOCK" show status >/dev/null 2>&1 && break; sleep 0.1; done
cat "$LOG"
"$SR6" ctl --socket "$SOCK" show status

echo
echo "== ping h1 -> h2 (fc00:b::2): encapsulated by r1, End on sr6, decapsulated by r3; replies forwarded by sr6"
ns h1 ping -c 3 -i 0.2 fc00:b::2
echo
echo "== 1000 UDP datagrams h1 -> h2"
"$SR6" ctl --socket "$SOCK" clear-counters
ns h2 python3 tests/live/traffic.py recv 9999 1000 2 > /tmp/sr6demo-recv.json 2>/dev/null &
RX=$!
sleep 0.3
ns h1 python3 tests/live/traffic.py send fc00:b::2 9999 1000 2000
wait $RX
echo "received at h2: $(cat /tmp/sr6demo-recv.json)"
echo
echo "== sr6 ctl show sids"
"$SR6" ctl --socket "$SOCK" show sids
echo
echo "== sr6 ctl show counters"
"$SR6" ctl --socket "$SOCK" show counters
if [ "${KEEP:-0}" = 1 ]; then
  echo "left running; remove with: bash examples/live/demo.sh down (sr6's log: $LOG)"
fi
