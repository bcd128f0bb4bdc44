"""A Type 0 Routing header (deprecated by RFC 5095) arriving at a SID.

RFC 5095 §3: a Type 0 header is processed as an unrecognised Routing Type, so with
Segments Left != 0 RFC 8200 §4.4 applies: discard the packet and send a Parameter
Problem code 0 pointing to the Routing Type. At a SID the kernel's seg6local input
looks only for an SRH (seg6_get_srh) and drops the packet without a word; at a local
address that is not a SID it answers as the RFC says (ipv6_rthdr_rcv)."""
from scapy.layers.inet6 import IPv6ExtHdrRouting

from kcommon import *  # noqa: F403

ROUTING_TYPE_PTR = 40 + 2  # the Routing Type of a Routing header after the IPv6 header


def rh0(dst, addresses, segleft, nh=NH_UDP):
    return IPv6(src=HOST_A, dst=dst, hlim=64) / \
        IPv6ExtHdrRouting(type=0, segleft=segleft, addresses=addresses, nh=nh) / Raw(udp_bytes(HOST_A, FINAL))


@scenario(DIFFERENCE("Linux drops a Routing header other than an SRH at a SID silently (seg6_get_srh finds "
                     "no SRH); sr6 sends the Parameter Problem of RFC 8200 §4.4", "RFC 5095 §3, RFC 8200 §4.4"))
def test_type0_routing_header_at_sid(kernel):
    """Type 0 Routing header, Segments Left 1 or 2, at End / End.X SIDs: Parameter Problem at the Routing Type"""
    cfg = config(seg6local("End"), seg6local("End.X", "nh6 fc00:13::2", sid=SID2))
    frames = [rx(rh0(SID, [FINAL], 1)), rx(rh0(SID, [SEG_B, FINAL], 2)), rx(rh0(SID2, [FINAL], 1))]
    r = kernel.run(cfg, frames)
    for i, f in enumerate(frames):
        r.expect_kernel(i)
        r.expect_sr6(i, eth0=[pp(f, 0, ROUTING_TYPE_PTR)])


@scenario(IDENTICAL)
def test_type0_routing_header_at_local_address(kernel):
    """Type 0 Routing header, Segments Left 1, to a local address (no SID): Parameter Problem at the Routing Type"""
    kernel.run(config(), [rx(rh0(ADDR6["eth0"], [FINAL], 1))]).assert_identical()
