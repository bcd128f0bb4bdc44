"""Constants and builders shared by the kernel scenarios (topology: tests/oracle/sr6_oracle.py).

The oracle's topology is reused as is: eth0 (A, sources fc00:a::/64 and 10.1.0.0/16),
eth1 (B, fc00:2::/48, 10.2.0.0/16), eth2 (C, fc00:3::/48, 10.3.0.0/16); every seg6local
route carries `dev` because the kernel requires it."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from kharness import DIFFERENCE, IDENTICAL, O, PER_FLOW, SR6_BUG, scenario  # noqa: E402,F401
from sr6_oracle import (  # noqa: E402,F401
    ADDR6, ADDR4, GW6, GW4_MAC, HOST_A, HOST_A4, HOST_B, HOST_B4, HOST_C, ICMP, IP, MAC, NH_ETHERNET, NH_ICMPV6,
    NH_IPV4, NH_IPV6, NH_UDP, OFF_SRH_SL, SEG_B, SEG_B2, SEG_C, SEG_C2, SRHTLVHMAC, UDP, Ether,
    ICMPv6EchoRequest, ICMPv6EchoReply, IPv6, IPv6ExtHdrSegmentRoutingTLV, IPv6ExtHdrSegmentRoutingTLVPad1,
    IPv6ExtHdrSegmentRoutingTLVPadN, Raw, code4_pointer, config, hmac_tlv, icmp6_error, l3, policy, rx,
    sr_pkt, srh, srh_hmac, tx, udp4, udp6, udp_bytes,
)

SID = "fc00:f::1"        # the local SID under test
SID2 = "fc00:f::2"       # a second local SID
FINAL = "fc00:2::99"     # final destination behind eth1
PREV = "fc00:a::1"       # an already visited segment
TUNSRC = "fc00:ff::1"


def seg6local(action: str, params: str = "", sid: str = SID, dev: str = "eth0") -> str:
    return f"ip -6 route add {sid}/128 encap seg6local action {action}{(' ' + params) if params else ''} dev {dev}"


def padn(n_bytes: int):
    """A PadN TLV occupying n_bytes (>= 2) in total (RFC 8754 §2.1.1.2)."""
    return IPv6ExtHdrSegmentRoutingTLVPadN(len=n_bytes - 2, padding=b"\0" * (n_bytes - 2))


def unknown_tlv(t: int, n_bytes: int):
    """A TLV of an unassigned type (RFC 8754 §2.1: ignored by a SID) occupying n_bytes."""
    return IPv6ExtHdrSegmentRoutingTLV(type=t, len=n_bytes - 2, value=bytes(range(1, n_bytes - 1)))


def pp(frame, code, ptr, src=None, dev="eth0"):
    """The Parameter Problem the RFC requires for `frame` (received on eth0 from A)."""
    return tx(icmp6_error("param_problem", l3(frame), src=src or ADDR6["eth0"], dst=HOST_A, code=code, ptr=ptr), dev)


def time_exceeded(invoking_l3, src=None, dev="eth0"):
    """Time Exceeded code 0 for an invoking IPv6 packet (bytes or scapy, L3) from A."""
    return tx(icmp6_error("time_exceeded", bytes(invoking_l3), src=src or ADDR6["eth0"], dst=HOST_A), dev)
