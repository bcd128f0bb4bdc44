"""Shared oracle helpers for the sr6 scapy suite.

Everything the tests expect is built here (or in the test files) with scapy from the RFC
text (RFC 8200, 4443, 8754, 8986) and docs/behaviours.md -- never from sr6's own code.

Conventions
-----------
* ``segments`` passed to :func:`srh` are the Segment List in *header order*:
  ``segments[0]`` is Segment List[0] (the LAST segment to visit).  A policy written
  ``segs S1,S2,...,Sn`` on an iproute2 line therefore becomes ``policy(S1..Sn)`` =
  ``[Sn, ..., S1]`` (RFC 8754 §2; behaviours.md "Head-end").
* ``rx(l3, dev)`` is a frame as received on ``dev`` from the neighbour there;
  ``tx(l3, dev)`` is the frame sr6 must emit on ``dev`` towards the neighbour there.
"""
from __future__ import annotations

import difflib
import hashlib
import hmac as _hmac
import ipaddress
import os
import socket
import struct

from scapy.all import (  # noqa: F401  (re-exported for the test modules)
    ARP,
    ICMP,
    IP,
    UDP,
    TCP,
    Ether,
    Raw,
    bind_bottom_up,
    conf,
    wrpcap,
)
from scapy.fields import BitField, ByteField, FieldLenField, IntField, StrLenField

from scapy.layers.inet6 import (  # noqa: F401
    ICMPv6DestUnreach,
    ICMPv6EchoReply,
    ICMPv6EchoRequest,
    ICMPv6ParamProblem,
    ICMPv6TimeExceeded,
    IPv6,
    IPv6ExtHdrSegmentRouting,
    IPv6ExtHdrSegmentRoutingTLV,
    IPv6ExtHdrSegmentRoutingTLVPad1,
    IPv6ExtHdrSegmentRoutingTLVPadN,
)

conf.verb = 0

# IPv6 next header values (IANA).
NH_IPV4 = 4
NH_TCP = 6
NH_UDP = 17
NH_IPV6 = 41
NH_ROUTING = 43
NH_ICMPV6 = 58
NH_NONE = 59
NH_ETHERNET = 143  # RFC 8986 §10.1

# Offsets inside an IPv6 packet whose SRH directly follows the 40-byte fixed header.
OFF_IPV6_NH = 6          # Next Header of the fixed header (RFC 8200 §3)
OFF_SRH = 40
OFF_SRH_NH = OFF_SRH + 0  # SRH Next Header (RFC 8754 §2)
# RFC 8754 §2 / RFC 8200 §4.4 layout of the Routing header: Next Header (byte 0),
# Hdr Ext Len (1), Routing Type (2), Segments Left (3), then Last Entry (4), Flags (5),
# Tag (6-7).  The Segments Left field of an SRH right after the fixed header is therefore
# at offset 40 + 3 = 43 of the invoking packet (the brief said "42", which is the Routing
# Type byte; the RFC's field offset is 43, and so is Linux's
# `&hdr->segments_left - skb_network_header(skb)`).
OFF_SRH_SL = 43

# ----------------------------------------------------------------------------------------
# scapy fixes / bindings
# ----------------------------------------------------------------------------------------


class SRHTLVHMAC(IPv6ExtHdrSegmentRoutingTLV):
    """RFC 8754 §2.1.2 HMAC TLV.

    scapy's own ``IPv6ExtHdrSegmentRoutingTLVHMAC`` (2.5/2.6) encodes Length as
    ``len(hmac) + 48`` in a 2-byte field, which contradicts the RFC (Length is one octet
    and equals 6 + HMAC length, i.e. 38 for a 32-byte HMAC).  This class is the RFC's.
    """

    name = "SRH HMAC TLV (RFC 8754 2.1.2)"
    fields_desc = [
        ByteField("type", 5),
        FieldLenField("len", None, length_of="hmac", fmt="B", adjust=lambda _, x: x + 6),
        BitField("D", 0, 1),
        BitField("reserved", 0, 15),
        IntField("keyid", 0),
        StrLenField("hmac", b"", length_from=lambda p: p.len - 6),
    ]


IPv6ExtHdrSegmentRoutingTLV.registered_sr_tlv[5] = SRHTLVHMAC
# Dissect next header 143 (Ethernet, RFC 8986 §10.1) for readable diffs.
bind_bottom_up(IPv6, Ether, nh=NH_ETHERNET)
bind_bottom_up(IPv6ExtHdrSegmentRouting, Ether, nh=NH_ETHERNET)


# ----------------------------------------------------------------------------------------
# The test topology
# ----------------------------------------------------------------------------------------
#
#            hosts fc00:a::/64, 10.1.0.0/16            B: fc00:2::/48, 10.2.0.0/16
#   A (fc00:1::2) ---- eth0 [ sr6 ] eth1 ---- (fc00:12::2)
#                             eth2 ---- C (fc00:13::2): fc00:3::/48
#
# Devices are first mentioned in the order eth0, eth1, eth2, so without `ip link set`
# their MACs are 02:00:00:00:00:01/02/03 (behaviours.md "Frames in, frames out").

DEVS = ("eth0", "eth1", "eth2")
MAC = {"eth0": "02:00:00:00:00:01", "eth1": "02:00:00:00:00:02", "eth2": "02:00:00:00:00:03"}
ADDR6 = {"eth0": "fc00:1::1", "eth1": "fc00:12::1", "eth2": "fc00:13::1"}
GW6 = {"eth0": "fc00:1::2", "eth1": "fc00:12::2", "eth2": "fc00:13::2"}
GW6_MAC = {"eth0": "02:aa:00:00:00:01", "eth1": "02:aa:00:00:00:02", "eth2": "02:aa:00:00:00:03"}
ADDR4 = {"eth0": "10.0.1.1", "eth1": "10.0.12.1", "eth2": "10.0.13.1"}
GW4 = {"eth0": "10.0.1.2", "eth1": "10.0.12.2", "eth2": "10.0.13.2"}
GW4_MAC = {"eth0": "02:aa:00:00:00:41", "eth1": "02:aa:00:00:00:42", "eth2": "02:aa:00:00:00:43"}

HOST_A = "fc00:a::100"     # a source behind eth0 (route fc00:a::/64 via A)
HOST_A4 = "10.1.0.5"       # IPv4 source behind eth0
HOST_B = "fc00:2::5"       # a destination behind eth1
HOST_B4 = "10.2.0.9"
HOST_C = "fc00:3::7"       # a destination behind eth2
SEG_B = "fc00:2::1"        # a SID on B (routed out eth1)
SEG_B2 = "fc00:2::2"
SEG_C = "fc00:3::1"        # a SID on C (routed out eth2)
SEG_C2 = "fc00:3::2"

# No comments in the base config: only test_config_cli relies on `#` comments.
# Forwarding sysctls are explicit because behaviours.md does not say their default.
# On-link host routes to the neighbours are explicit because behaviours.md does not say
# whether `addr add X/64` also installs the connected /64 (the kernel does); End.X / DX6 /
# DX4 next hops are then reachable either way.
BASE_CONFIG = """\
ip -6 addr add fc00:1::1/64 dev eth0
ip -6 addr add fc00:12::1/64 dev eth1
ip -6 addr add fc00:13::1/64 dev eth2
ip addr add 10.0.1.1/24 dev eth0
ip addr add 10.0.12.1/24 dev eth1
ip addr add 10.0.13.1/24 dev eth2
ip -6 neigh add fc00:1::2 lladdr 02:aa:00:00:00:01 dev eth0
ip -6 neigh add fc00:12::2 lladdr 02:aa:00:00:00:02 dev eth1
ip -6 neigh add fc00:13::2 lladdr 02:aa:00:00:00:03 dev eth2
ip neigh add 10.0.1.2 lladdr 02:aa:00:00:00:41 dev eth0
ip neigh add 10.0.12.2 lladdr 02:aa:00:00:00:42 dev eth1
ip neigh add 10.0.13.2 lladdr 02:aa:00:00:00:43 dev eth2
ip -6 route add fc00:1::2/128 dev eth0
ip -6 route add fc00:12::2/128 dev eth1
ip -6 route add fc00:13::2/128 dev eth2
ip route add 10.0.1.2/32 dev eth0
ip route add 10.0.12.2/32 dev eth1
ip route add 10.0.13.2/32 dev eth2
ip -6 route add fc00:a::/64 via fc00:1::2 dev eth0
ip -6 route add fc00:2::/48 via fc00:12::2 dev eth1
ip -6 route add fc00:3::/48 via fc00:13::2 dev eth2
ip route add 10.1.0.0/16 via 10.0.1.2 dev eth0
ip route add 10.2.0.0/16 via 10.0.12.2 dev eth1
ip route add 10.3.0.0/16 via 10.0.13.2 dev eth2
sysctl -w net.ipv6.conf.all.forwarding=1
sysctl -w net.ipv4.ip_forward=1
"""


def config(*lines: str, base: str = BASE_CONFIG) -> str:
    """The base topology plus ``lines`` (appended, so device order is unchanged)."""
    return base + "".join(line.rstrip("\n") + "\n" for line in lines)


# ----------------------------------------------------------------------------------------
# Frame builders
# ----------------------------------------------------------------------------------------


def rx(l3, dev: str = "eth0", src_mac: str | None = None):
    """A frame as received on ``dev`` from its neighbour."""
    if isinstance(l3, IP):
        src_mac = src_mac or GW4_MAC[dev]
    return Ether(src=src_mac or GW6_MAC[dev], dst=MAC[dev]) / l3


def tx(l3, dev: str, dst_mac: str | None = None, src_mac: str | None = None):
    """The frame sr6 must send out ``dev``: to the neighbour's MAC, from dev's MAC."""
    if dst_mac is None:
        dst_mac = GW4_MAC[dev] if isinstance(l3, IP) else GW6_MAC[dev]
    return Ether(src=src_mac or MAC[dev], dst=dst_mac) / l3


def payload(n: int = 16, seed: int = 0) -> bytes:
    return bytes((seed + i) & 0xFF for i in range(n))


def udp6(src=HOST_A, dst=HOST_B, hlim=64, tc=0, fl=0, n=16):
    """A plain IPv6/UDP packet (ports chosen so no dissector misreads the payload)."""
    return IPv6(src=src, dst=dst, hlim=hlim, tc=tc, fl=fl) / UDP(sport=40001, dport=40002) / payload(n)


def udp4(src=HOST_A4, dst=HOST_B4, ttl=64, n=16, ident=0x1234):
    return IP(src=src, dst=dst, ttl=ttl, id=ident) / UDP(sport=40001, dport=40002) / payload(n)


def policy(*segs: str) -> list[str]:
    """``segs S1,...,Sn`` -> Segment List in header order [Sn, ..., S1]."""
    return list(reversed(segs))


def flag_bits(flags: int) -> dict:
    return dict(
        unused1=(flags >> 7) & 1,
        protected=(flags >> 6) & 1,
        oam=(flags >> 5) & 1,
        alert=(flags >> 4) & 1,
        hmac=(flags >> 3) & 1,
        unused2=flags & 7,
    )


def srh(segments, segleft, nh, lastentry=None, tlvs=(), flags=0, tag=0, hdrlen=None):
    """An SRH (RFC 8754 §2) with every field pinned (no scapy auto-padding)."""
    segments = list(segments)
    tlvs = list(tlvs)
    if lastentry is None:
        lastentry = len(segments) - 1
    if hdrlen is None:
        tlv_bytes = sum(len(bytes(t)) for t in tlvs)
        total = 16 * len(segments) + tlv_bytes
        assert total % 8 == 0, "SRH TLVs must keep the header a multiple of 8 octets"
        hdrlen = total // 8
    return IPv6ExtHdrSegmentRouting(
        nh=nh, len=hdrlen, type=4, segleft=segleft, lastentry=lastentry, tag=tag,
        addresses=segments, tlv_objects=tlvs, **flag_bits(flags),
    )


def a2b(addr: str) -> bytes:
    return socket.inet_pton(socket.AF_INET6, addr)


def srh_hmac(alg: str, secret: bytes, src: str, lastentry: int, flags: int, keyid: int, segments) -> bytes:
    """RFC 8754 §2.1.2.1: HMAC over source address || Last Entry || Flags || HMAC Key ID
    || Segment List[0..n] (header order); the 32-byte field is the digest zero-padded
    (SHA-1's 20 bytes -> 32)."""
    text = a2b(src) + bytes([lastentry, flags]) + struct.pack("!I", keyid)
    text += b"".join(a2b(s) for s in segments)
    digest = _hmac.new(secret, text, getattr(hashlib, alg)).digest()
    return digest.ljust(32, b"\0")


def hmac_tlv(alg, secret, src, segments, keyid, lastentry=None, flags=0x08):
    if lastentry is None:
        lastentry = len(segments) - 1
    return SRHTLVHMAC(keyid=keyid, hmac=srh_hmac(alg, secret, src, lastentry, flags, keyid, segments))


ICMP6_ERROR_MAX = 1280  # RFC 4443 §2.4 (c): the error must not exceed the minimum MTU


def icmp6_error(kind: str, invoking: bytes, src: str, dst: str, code: int = 0, ptr: int = 0):
    """ICMPv6 error per behaviours.md "ICMPv6 errors": hop limit 64, traffic class 0,
    flow label 0, as much of the invoking packet as fits in 1280 bytes."""
    invoking = bytes(invoking)
    quote = invoking[: ICMP6_ERROR_MAX - 40 - 8]
    if kind == "time_exceeded":
        icmp = ICMPv6TimeExceeded(code=code)
    elif kind == "param_problem":
        icmp = ICMPv6ParamProblem(code=code, ptr=ptr)
    elif kind == "dest_unreach":
        icmp = ICMPv6DestUnreach(code=code)
    else:
        raise ValueError(kind)
    return IPv6(src=src, dst=dst, hlim=64, tc=0, fl=0) / icmp / Raw(quote)


def l3(frame) -> bytes:
    """The L3 packet of an Ethernet frame (frame minus the 14-byte header)."""
    return bytes(frame)[14:]


def with_hlim(pkt, hlim):
    """A copy of an IPv6 packet with another hop limit (everything else byte-identical)."""
    p = pkt.copy()
    p[IPv6].hlim = hlim
    return p


# ----------------------------------------------------------------------------------------
# Comparisons
# ----------------------------------------------------------------------------------------


def _show(b: bytes) -> str:
    try:
        return Ether(b).show2(dump=True)
    except Exception as e:  # pragma: no cover - scapy dissection failure
        return f"<scapy cannot dissect: {e}>\n{b.hex()}"


def _hexdump_diff(exp: bytes, got: bytes) -> str:
    first = next((i for i in range(min(len(exp), len(got))) if exp[i] != got[i]), min(len(exp), len(got)))
    lines = [f"lengths: expected {len(exp)} got {len(got)}; first differing byte at offset {first}"
             f" (L3 offset {first - 14})"]
    lo = max(0, first - 16) // 16 * 16
    for off in range(lo, min(max(len(exp), len(got)), lo + 64), 16):
        lines.append(f"  {off:04x} exp {exp[off:off + 16].hex(' '):<47}  got {got[off:off + 16].hex(' ')}")
    return "\n".join(lines)


def frame_diff(expected: bytes, got: bytes) -> str:
    d = difflib.unified_diff(
        _show(expected).splitlines(), _show(got).splitlines(), "expected (scapy oracle)", "got (sr6)", lineterm="", n=2
    )
    return _hexdump_diff(expected, got) + "\n" + "\n".join(d)


def _dump_expected(frames):
    path = os.environ.get("SR6_ORACLE_DUMP_EXPECTED")
    if path and frames:
        wrpcap(path, [Ether(bytes(f)) for f in frames], append=True, linktype=1)


def assert_frames(got_raw, expected, where: str):
    """``got_raw``: list of frame bytes sr6 wrote; ``expected``: scapy frames."""
    exp = [bytes(e) for e in expected]
    _dump_expected(exp)
    if len(got_raw) != len(exp):
        shown = "\n".join(f"--- got[{i}]\n{_show(g)}" for i, g in enumerate(got_raw[:3]))
        raise AssertionError(f"{where}: expected {len(exp)} frame(s), sr6 wrote {len(got_raw)}\n{shown}")
    for i, (e, g) in enumerate(zip(exp, got_raw)):
        if e != g:
            raise AssertionError(f"{where}[{i}] differs from the oracle:\n{frame_diff(e, g)}")


def sid_entry(json_obj, sid: str) -> dict:
    """The ``sids`` entry for ``sid`` (e.g. 'fc00:f::1' or 'fc00:f::1/128')."""
    want = ipaddress.ip_network(sid if "/" in sid else sid + "/128", strict=False)
    for e in json_obj.get("sids", []):
        try:
            if ipaddress.ip_network(e["sid"], strict=False) == want:
                return e
        except (KeyError, ValueError):
            continue
    raise AssertionError(f"SID {sid} not in the JSON sids list: {json_obj.get('sids')}")


# ----------------------------------------------------------------------------------------
# Parameter Problem code 4 (SR Upper-layer Header Error) pointer
# ----------------------------------------------------------------------------------------
#
# RFC 8754 §4.3.1.2 and RFC 8986 §4.1.1: "Pointer set to the offset of the upper-layer
# header" -- 40 + SRH length when an SRH directly follows the fixed header, 40 without.


def code4_pointer(pkt) -> int:
    """Pointer of a code 4 Parameter Problem for ``pkt`` (an IPv6 packet whose SRH, if
    any, directly follows the fixed header)."""
    if IPv6ExtHdrSegmentRouting in pkt:
        h = pkt[IPv6ExtHdrSegmentRouting]
        return 40 + 8 * (h.len + 1)
    return 40


def udp_bytes(src: str, final_dst: str, n: int = 24) -> bytes:
    """UDP header+payload whose checksum is over ``final_dst`` (RFC 8200 §8.1: the final
    destination, i.e. Segment List[0] when a Routing header is present)."""
    return bytes((IPv6(src=src, dst=final_dst) / UDP(sport=40001, dport=40002) / payload(n))[UDP])


def sr_pkt(dst, segs, sl, nh=NH_UDP, inner=None, hlim=64, src=HOST_A, tc=0, fl=0, **srh_kw):
    """IPv6(src, dst) / SRH(segs in header order, SL=sl) / inner (default: UDP whose
    checksum is over Segment List[0])."""
    if inner is None:
        inner = Raw(udp_bytes(src, segs[0]))
    return IPv6(src=src, dst=dst, hlim=hlim, tc=tc, fl=fl) / srh(segs, segleft=sl, nh=nh, **srh_kw) / inner
