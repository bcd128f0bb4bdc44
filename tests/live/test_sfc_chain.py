"""A service function chain through SR-unaware functions (issue 27; examples/sfc/README.md):

  A -- ing (kernel: H.Encaps; End.DT6/End.DX4 back) -- sr6 (End.AD -> firewall, End.AM ->
     monitor, per direction; End.AD nh4 for IPv4) -- eg (kernel: End.DT6/End.DX4; H.Encaps
     back) -- B

IPv6 and IPv4 traffic both ways: allowed and blocked UDP flows, and pings.

The topology, the traffic and the checks are examples/sfc/demo.sh's: this runs it with
``--check`` (no build; the binary under test is handed over as $SR6_BIN), once per
backend, in namespaces named like the live suite's, so that those of a killed run are
swept at the next start. The oracles are the Linux kernel and nftables: B's and A's
sockets (what arrived), the firewall's counters (the blocked flows dropped there; only
plain IPv6 and IPv4 forwarded), the monitor's (the SRH intact, destination = the last
segment), the egress's End.DT6 and End.DX4 counts; and sr6's own `show proxies` against
the packets sent.
"""
from __future__ import annotations

import pytest
from livenet import NS_PREFIX, run_demo_check
from sr6test import REPO_ROOT, netns_name, require_netns

DEMO = REPO_ROOT / "examples" / "sfc" / "demo.sh"
# The checks demo.sh prints (PASS or FAIL): 18 on the hosts' sockets (IPv6 and IPv4)
# and the kernels' and nftables' counters, 14 on sr6's proxies (4 End.AD x 3, 2 End.AM).
CHECKS = 32


@pytest.mark.parametrize("backend", ["af_xdp", "af_packet"])
def test_traffic_both_ways_through_the_firewall_and_the_monitor(sr6_bin, backend):
    require_netns("the SFC chain", "nft", "ping", "ethtool")
    prefix = netns_name(NS_PREFIX) + "sfc-"
    run_demo_check(DEMO, {"SR6_BIN": str(sr6_bin), "SFC_PREFIX": prefix, "SFC_BACKEND": backend}, prefix, CHECKS)
