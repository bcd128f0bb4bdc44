"""A 5G user plane over SRv6, live (RFC 9433; examples/mobile/README.md):

  gNB -- sra (sr6: H.M.GTP4.D, End.M.GTP4.E) -- core (kernel: End) -- srb (sr6) -- UPF

GTP-U T-PDUs both ways over real UDP sockets (tests/live/gtpu.py), with and without a
QFI, and a GTP-U Echo Request from the gNB answered by the UPF (signalling carried in SRH
tag bits through the kernel's End). The topology, the traffic and the checks are examples/mobile/demo.sh's: this runs it
with ``--check`` (no build; the binary under test is handed over as $SR6_BIN), once per
backend, in namespaces named like the live suite's, so that those of a killed run are
swept at the next start. The oracles are the receiving endpoints' sockets (every T-PDU,
its TEID, QFI, sender and inner packet; the echo's sequence number) and the Linux core
router's End counter.
"""
from __future__ import annotations

import pytest
from livenet import NS_PREFIX, run_demo_check
from sr6test import REPO_ROOT, netns_name, require_netns

DEMO = REPO_ROOT / "examples" / "mobile" / "demo.sh"
# The checks demo.sh prints: 6 on the endpoints' sockets, 1 on the GTP-U echo (the
# request reaches the UPF, the response with its sequence number the gNB), 1 on the
# core's End, 2 on sr6's End.M.GTP4.E counts.
CHECKS = 10


@pytest.mark.parametrize("backend", ["af_xdp", "af_packet"])
def test_gtpu_both_ways_through_an_srv6_core(sr6_bin, backend):
    require_netns("the mobile user plane", "ethtool")
    prefix = netns_name(NS_PREFIX) + "mob-"
    run_demo_check(DEMO, {"SR6_BIN": str(sr6_bin), "MOBILE_PREFIX": prefix, "MOBILE_BACKEND": backend}, prefix, CHECKS)
