#!/usr/bin/env bash
# A 5G user plane over SRv6, live, in network namespaces (RFC 9433; examples/mobile/README.md):
#
#   gNB -- sra (sr6: H.M.GTP4.D / End.M.GTP4.E) -- core (Linux: End) -- srb (sr6) -- UPF
#   10.0.1.2                                     fc00:c::e                          10.0.2.2
#
# The gNB sends GTP-U T-PDUs (TEID, QFI in a PDU Session Container) to the UPF over real
# UDP sockets (tests/live/gtpu.py); sra translates them statelessly into SRv6 (the IPv4
# addresses, TEID and QFI go into the IPv6 source and the last SID), the Linux core router
# does End, and srb translates them back into GTP-U, which the UPF receives on port 2152
# and checks: TEID, QFI, the inner packet. Downlink the other way: UPF -> srb (H.M.GTP4.D)
# -> core -> sra (End.M.GTP4.E) -> gNB. Then a GTP-U Echo Request from the gNB crosses to
# the UPF and its Echo Response back, carried in SRH tag bits (behaviours.md).
#
#   sudo bash examples/mobile/demo.sh           build sr6 (if cargo is on the PATH), run,
#                                               check, clean up
#   sudo bash examples/mobile/demo.sh --check   the same without building ($SR6_BIN or
#                                               target/release/sr6 must exist)
#   sudo bash examples/mobile/demo.sh --keep    leave it running; `... demo.sh down` removes it
#
# The exit status is 0 only if every check passed. Namespaces are ${MOBILE_PREFIX}NAME
# (default sr6mob-), the sr6 control sockets and logs are in /run/${MOBILE_PREFIX}demo/;
# MOBILE_BACKEND is sr6 run's --backend (default auto), MOBILE_COUNT the T-PDUs per flow.
set -uo pipefail
cd "$(dirname "$0")/../.."
HERE=examples/mobile
P=${MOBILE_PREFIX:-sr6mob-}
RUN=/run/${P}demo
SR6=${SR6_BIN:-$PWD/target/release/sr6}
NODES="gnb sra core srb upf"
BACKEND=${MOBILE_BACKEND:-auto}   # sr6 run --backend
N=${MOBILE_COUNT:-200}            # T-PDUs per direction
mode=${1:-demo}

. examples/demo-lib.sh
demo_mode demo.sh
demo_prepare demo.sh "ethtool python3"

kernel() {  # NODE < iproute2 lines
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
link gnb gnb-sa sra sa-gnb
link sra sa-core core core-sa
link core core-sb srb sb-core
link srb sb-upf upf upf-sb

say "gNB 10.0.1.2, UPF 10.0.2.2 (plain IPv4 hosts)"
kernel gnb <<'EOF'
addr add 10.0.1.2/24 dev gnb-sa
route add default via 10.0.1.1 dev gnb-sa
EOF
kernel upf <<'EOF'
addr add 10.0.2.2/24 dev upf-sb
route add default via 10.0.2.1 dev upf-sb
EOF

say "core (Linux): End fc00:c::e; fc00:a::/32 towards sra, fc00:b::/32 towards srb"
ns core sysctl -qw net.ipv6.conf.all.forwarding=1 net.ipv6.conf.all.seg6_enabled=1 \
  net.ipv6.conf.core-sa.seg6_enabled=1 net.ipv6.conf.core-sb.seg6_enabled=1
kernel core <<'EOF'
-6 addr add fc00:1::2/64 dev core-sa nodad
-6 addr add fc00:2::2/64 dev core-sb nodad
-6 route add fc00:c::e/128 encap seg6local action End count dev core-sa
-6 route add fc00:a::/32 via fc00:1::1 dev core-sa
-6 route add fc00:b::/32 via fc00:2::1 dev core-sb
EOF
ns core ip -6 route show | grep -v '^fe80' | sed 's/^/   /'

ctl() { "$SR6" ctl --socket "$RUN/$1.sock" "${@:2}"; }
start_sr6() {  # NODE: sr6 run --config $HERE/NODE.conf in ${P}NODE
  local n=$1 up=0
  say "sr6 run --config $HERE/$n.conf (in $P$n; its kernel holds the addresses, forwarding off)"
  ns "$n" sysctl -qw net.ipv6.conf.all.forwarding=0 net.ipv4.ip_forward=0
  grep -E '^ip (-6 )?addr add ' "$HERE/$n.conf" | sed 's/^ip //; s/^-6 .*/& nodad/' | kernel "$n" || exit 1
  ip netns exec "$P$n" "$SR6" run --config "$HERE/$n.conf" --socket "$RUN/$n.sock" --backend "$BACKEND" \
    --verbose >"$RUN/$n.log" 2>&1 &
  echo $! >"$RUN/$n.pid"
  for _ in $(seq 200); do
    ctl "$n" show status >/dev/null 2>&1 && { up=1; break; }
    kill -0 "$(cat "$RUN/$n.pid")" 2>/dev/null || break
    sleep 0.1
  done
  sed 's/^/   /' "$RUN/$n.log"
  [ $up = 1 ] || { echo "demo.sh: sr6 run in $n did not come up" >&2; exit 1; }
  grep -E 'GTP4' "$HERE/$n.conf" | sed 's/^/   /'
}
start_sr6 sra
start_sr6 srb

# ---- traffic -------------------------------------------------------------------------
# gtpu.py (tests/live): numbered T-PDUs from a GTP-U endpoint on UDP 2152, counted at the
# other end by sequence number, TEID, QFI and inner addresses after checking each header.
recv_start() {  # NODE ADDR OUTFILE
  ns "$1" python3 tests/live/gtpu.py recv "$2" "$N" 2 >"$3" 2>"$3.err" &
  for _ in $(seq 100); do grep -q ready "$3.err" 2>/dev/null && return; sleep 0.05; done
}
say "uplink: the gNB sends $N T-PDUs (TEID 0x1234, QFI 9, inner 10.60.0.1 -> 10.70.0.1) to the UPF"
recv_start upf 10.0.2.2 "$RUN/uplink.json"
ns gnb python3 tests/live/gtpu.py send 10.0.1.2 10.0.2.2 0x1234 9 "$N" 1000 10.60.0.1 10.70.0.1 --ul >/dev/null
wait $!
echo "   the UPF received: $(cat "$RUN/uplink.json")"
say "uplink without a QFI: $N T-PDUs (TEID 0x77, no extension header)"
recv_start upf 10.0.2.2 "$RUN/uplink0.json"
ns gnb python3 tests/live/gtpu.py send 10.0.1.2 10.0.2.2 0x77 0 "$N" 1000 10.60.0.1 10.70.0.1 >/dev/null
wait $!
echo "   the UPF received: $(cat "$RUN/uplink0.json")"
say "downlink: the UPF sends $N T-PDUs (TEID 0xabcdef, QFI 5, inner 10.70.0.1 -> 10.60.0.1) to the gNB"
recv_start gnb 10.0.1.2 "$RUN/downlink.json"
ns upf python3 tests/live/gtpu.py send 10.0.2.2 10.0.1.2 0xabcdef 5 "$N" 1000 10.70.0.1 10.60.0.1 >/dev/null
wait $!
echo "   the gNB received: $(cat "$RUN/downlink.json")"
say "GTP-U echo: the gNB's Echo Request to the UPF, which answers (signalling in SRH tag bits)"
ns upf python3 tests/live/gtpu.py recv 10.0.2.2 1 2 --answer-echo >"$RUN/echo-upf.json" 2>"$RUN/echo-upf.err" &
for _ in $(seq 100); do grep -q ready "$RUN/echo-upf.err" 2>/dev/null && break; sleep 0.05; done
ns gnb python3 tests/live/gtpu.py echo 10.0.1.2 10.0.2.2 5 >"$RUN/echo.json"
wait $!
echo "   the gNB: $(cat "$RUN/echo.json"); the UPF: $(cat "$RUN/echo-upf.json")"

say "the core's End, and sr6's SIDs"
ns core ip -s -6 route show fc00:c::e/128 | sed 's/^/   /'
for s in sra srb; do echo "   $s:"; ctl $s show sids | sed 's/^/     /'; ctl $s show sids --json >"$RUN/$s-sids.json"; done

say "checks"
check "uplink: the UPF received all $N T-PDUs (unique: $(json "$RUN/uplink.json" 'j["unique"]'))" \
  eq "$(json "$RUN/uplink.json" 'j["unique"]')" "$N"
check "uplink: each with TEID 0x1234 and QFI 9 ($(json "$RUN/uplink.json" '(j["teids"], j["qfis"])'))" \
  eq "$(json "$RUN/uplink.json" '(j["teids"], j["qfis"], j["bad"])')" "({'4660': $N}, {'9': $N}, 0)"
check "uplink: from the gNB's address and port, the inner packet intact ($(json "$RUN/uplink.json" '(j["from"], j["inner"])'))" \
  eq "$(json "$RUN/uplink.json" '(j["from"], j["inner"])')" "({'10.0.1.2:2152': $N}, {'10.60.0.1>10.70.0.1': $N})"
check "uplink without a QFI: all $N, TEID 0x77, no QFI ($(json "$RUN/uplink0.json" '(j["unique"], j["teids"], j["qfis"])'))" \
  eq "$(json "$RUN/uplink0.json" '(j["unique"], j["teids"], j["qfis"], j["bad"])')" "($N, {'119': $N}, {'0': $N}, 0)"
check "downlink: the gNB received all $N T-PDUs (unique: $(json "$RUN/downlink.json" 'j["unique"]'))" \
  eq "$(json "$RUN/downlink.json" 'j["unique"]')" "$N"
check "downlink: each with TEID 0xabcdef and QFI 5 ($(json "$RUN/downlink.json" '(j["teids"], j["qfis"])'))" \
  eq "$(json "$RUN/downlink.json" '(j["teids"], j["qfis"], j["bad"], j["inner"], j["from"])')" \
  "({'11259375': $N}, {'5': $N}, 0, {'10.70.0.1>10.60.0.1': $N}, {'10.0.2.2:2152': $N})"
check "echo: the UPF got the gNB's Echo Request, the gNB its Echo Response with the same sequence number ($(json "$RUN/echo.json" 'j["answered"]'), $(json "$RUN/echo-upf.json" '(j["echo_requests"], j["bad"])'))" \
  eq "$(json "$RUN/echo.json" 'j["answered"]') $(json "$RUN/echo-upf.json" '(j["echo_requests"], j["bad"])')" "True (1, 0)"
got=$(ns core ip -s -6 route show fc00:c::e/128 | sed -n 's/.*packets \([0-9]*\).*/\1/p')
check "the core's End processed all $((3 * N)) T-PDUs and the 2 echo messages: SRv6 between the two translators (count: $got)" \
  eq "$got" $((3 * N + 2))
sid_packets() { json "$RUN/$1-sids.json" "[s['packets'] for s in j if s['sid'] == '$2'][0]"; }
got=$(sid_packets srb fc00:b:4::/48)
check "srb's End.M.GTP4.E translated the $((2 * N)) uplink T-PDUs and the Echo Request back to GTP-U (packets: $got)" \
  eq "$got" $((2 * N + 1))
got=$(sid_packets sra fc00:a:4::/48)
check "sra's End.M.GTP4.E translated the $N downlink T-PDUs and the Echo Response back to GTP-U (packets: $got)" \
  eq "$got" $((N + 1))

echo
if [ $failed = 0 ]; then echo "== all checks passed"; else echo "== $failed check(s) FAILED"; fi
if [ "$mode" = --keep ]; then
  echo "left running: sr6 ctl --socket $RUN/sra.sock (or srb.sock) ...; remove with: bash $HERE/demo.sh down"
fi
[ $failed = 0 ]
