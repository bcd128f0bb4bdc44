"""An SR-aware service chain (issue 28; examples/sfc/README.md, "An SR-aware chain"):

  A -- ing (kernel: H.Encaps; End.DT6 back) -- fw (sr6: SERA, End behind INPUT rules in
     basic mode) -- ids (sr6: End behind an IPS) -- eg (kernel: End.DT6; H.Encaps back) -- B

SERA sends A's trusted flow past the IPS (SEG6 skip-next); the IPS drops a payload and
raises alerts on another, reading the inner packet with unchanged Snort rules.

The topology, the traffic and the checks are examples/sfc/sr-aware.sh's: this runs it
with ``--check`` (no build; the binary under test is handed over as $SR6_BIN), once per
backend, in namespaces named like the live suite's, so that those of a killed run are
swept at the next start. The oracles are the Linux kernel: B's and A's sockets (what
arrived: the trusted flow's ATTACK payloads too, which the IPS would have dropped), the
egress's and the ingress's End.DT6 counts; and sr6's own firewall counters, IDS counters
and alerts file against the packets sent.
"""
from __future__ import annotations

import pytest
from livenet import NS_PREFIX, run_demo_check
from sr6test import REPO_ROOT, netns_name, require_netns

DEMO = REPO_ROOT / "examples" / "sfc" / "sr-aware.sh"
# The checks sr-aware.sh prints (PASS or FAIL): 7 on the hosts' sockets and the kernels'
# End.DT6 counts, 5 on sr6's firewall and IDS counters and alerts.
CHECKS = 12


@pytest.mark.parametrize("backend", ["af_xdp", "af_packet"])
def test_sera_skips_the_ips_for_the_trusted_flow_and_the_ips_drops_an_attack(sr6_bin, backend):
    require_netns("the SR-aware chain", "ping", "ethtool")
    prefix = netns_name(NS_PREFIX) + "sra-"
    run_demo_check(DEMO, {"SR6_BIN": str(sr6_bin), "SFC_PREFIX": prefix, "SFC_BACKEND": backend}, prefix, CHECKS)
