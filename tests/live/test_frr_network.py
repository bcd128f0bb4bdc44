"""A routed SRv6 network, live (issue 31's item 4; examples/frr/README.md):

  h1 -- r1 --(r2 | r3)-- r4 -- h2, every router with FRR (zebra, staticd, isisd) as its
  control plane; r1, r2 and r4 with sr6 as their data plane, r3 a Linux kernel router

IS-IS spreads the links and the locators, zebra installs its routes in each router's
kernel, and sr6 forwards by them (`--mirror-kernel-routes`), those kernels forwarding
nothing; r1 and r4 encapsulate the hosts' traffic to each other's End.DT6 (r1's SID
and policy from its sr6 configuration, r4's from its kernel's table, installed with
iproute2 in zebra's stead). The topology,
the traffic and the checks are examples/frr/demo.sh's: this runs it with ``--check`` (no
build; the binary under test is handed over as $SR6_BIN), once per backend, in
namespaces named like the live suite's, so that those of a killed run are swept at the
next start. The oracles are FRR's own (isisd computes the routes; the kernel holds them)
and the receiving host's sockets: every datagram of every flow counted by sequence
number, both paths used (r2's sr6 and r3's kernel counting what they received), and
after the link r1-r2 fails under traffic, the flows back within 3 s and r1's sr6 with
the one path left, then with what zebra installs in the kernel when the link returns.
Needs FRR (scripts/setup.sh installs Debian's frr); skipped without it.
"""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from livenet import NS_PREFIX, run_demo_check
from sr6test import REPO_ROOT, netns_name, require_netns

DEMO = REPO_ROOT / "examples" / "frr" / "demo.sh"
FRR = Path("/usr/lib/frr")
# The checks demo.sh prints: IS-IS converged, r4's SID and policy mirrored from its
# kernel, the two paths in r1's sr6, the ping, all datagrams of the flows, both paths
# used, the loss window, nothing lost once converged, one path after the failure, the
# kernel's paths after the repair.
CHECKS = 10


@pytest.mark.skipif(not all((FRR / d).exists() for d in ("zebra", "isisd", "staticd")) or shutil.which("vtysh") is None,
                    reason="FRR is not installed (scripts/setup.sh installs it)")
@pytest.mark.parametrize("backend", ["af_xdp", "af_packet"])
def test_an_is_is_network_with_sr6_as_its_data_plane(sr6_bin, backend):
    require_netns("the FRR network", "ethtool")
    prefix = netns_name(NS_PREFIX) + "frr-"
    run_demo_check(DEMO, {"SR6_BIN": str(sr6_bin), "FRR_PREFIX": prefix, "FRR_BACKEND": backend}, prefix, CHECKS)
