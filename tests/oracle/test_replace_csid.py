"""REPLACE-C-SID on End, End.X and End.T (RFC 9800 §4.2; docs/behaviours.md "Compressed
SIDs").

No kernel has REPLACE-C-SID, so the oracle is a model of the RFC's pseudocode written in
this file from the RFC text alone (RFC 9800 §4.2.1 and its appendix rendering "End with
REPLACE-C-SID", S01-S30; §4.2.2 End.X and §4.2.3 End.T, which change only S18/S29's
lookup; "Combination with PSP, USP, and USD flavors"), in the RFC's own notation: bit
ranges ``[a..b]`` with bit 0 the most significant, ``Segment List[SL][I]`` the bits
``[I*LNFL..(I+1)*LNFL-1]`` of entry SL.  Segment lists are built as the RFC's SR source
node section describes (the first SID uncompressed, then containers filled with
consecutive C-SIDs) in the order the pseudocode reads them (the index starts at
128/LNFL - 1 and goes down).  The model walks a packet from node to node; sr6 plays each
node in turn and must emit, byte for byte, what the model says.

What the model does not decide is the upper layer (S02-S04 hand the packet to RFC 8986
§4.1.1, unchanged): those expectations are written per test from RFC 8986 §4.1.1 and
§4.16 as tests/oracle/test_flavours.py writes them for plain End.

With 16- and 32-bit C-SIDs the index has exactly enough bits for the slots of a
container (3 bits for 8 slots, 2 for 4), so no index is out of range; the malformed
cases are the SRH checks of S10 and S21 (Parameter Problem code 0 at Segments Left).
"""
import ipaddress
import math

import pytest

from sr6_oracle import (
    ADDR6, GW6_MAC, HOST_A, MAC, NH_ICMPV6, NH_IPV6, NH_NONE, NH_UDP, OFF_SRH_SL, Ether, ICMPv6EchoRequest, IPv6,
    Raw, code4_pointer, config, icmp6_error, l3, payload, rx, sid_entry, srh, tx, udp6, udp_bytes,
)
from sr6_oracle import IPv6ExtHdrSegmentRouting as IPv6ExtHdr

NH_ROUTING = 43


# ----------------------------------------------------------------------------------------
# The model: RFC 9800 §4.2 in the RFC's notation
# ----------------------------------------------------------------------------------------


def a2i(s: str) -> int:
    return int(ipaddress.IPv6Address(s))


def i2a(v: int) -> str:
    return str(ipaddress.IPv6Address(v))


def bits(x: int, first: int, last: int) -> int:
    """Bits [first..last] of a 128-bit value (bit 0 the most significant)."""
    return (x >> (127 - last)) & ((1 << (last - first + 1)) - 1)


def with_bits(x: int, first: int, last: int, v: int) -> int:
    """``x`` with bits [first..last] set to ``v``."""
    shift = 127 - last
    mask = ((1 << (last - first + 1)) - 1) << shift
    return (x & ~mask) | ((v << shift) & mask)


class Lengths:
    def __init__(self, lbl: int, lnfl: int):
        self.lbl, self.lnfl = lbl, lnfl
        self.k = 128 // lnfl                                  # C-SIDs per container
        self.ib = math.ceil(math.log2(128 / lnfl))            # §4.2: the index's length

    def index(self, da: int) -> int:
        """DA.Arg.Index: bits [(128-ceil(log_2(128/LNFL)))..127]."""
        return bits(da, 128 - self.ib, 127)

    def set_index(self, da: int, i: int) -> int:
        return with_bits(da, 128 - self.ib, 127, i)

    def csid(self, entry: int, i: int) -> int:
        """Segment List[..][I]: bits [I*LNFL..(I+1)*LNFL-1] of the entry."""
        return bits(entry, i * self.lnfl, (i + 1) * self.lnfl - 1)

    def sid(self, block: int, csid: int) -> int:
        """The SID of C-SID ``csid`` under ``block``, argument 0."""
        return with_bits(block, self.lbl, self.lbl + self.lnfl - 1, csid)


def encode(L: Lengths, first: int, csids, tail=()) -> list:
    """An SR policy's Segment List in header order (Segment List[0] first): the first
    SID uncompressed, then the C-SIDs in containers filled from slot K-1 down, a new
    container when one is full, then the uncompressed SIDs of ``tail``."""
    containers, c, slot = [], 0, L.k - 1
    for v in csids:
        c = with_bits(c, slot * L.lnfl, (slot + 1) * L.lnfl - 1, v)
        slot -= 1
        if slot < 0:
            containers.append(c)
            c, slot = 0, L.k - 1
    if slot != L.k - 1:
        containers.append(c)
    order = [first] + containers + list(tail)
    return [i2a(v) for v in reversed(order)]


class Out:
    """What the model says: ``kind`` is forward / upper / time_exceeded / param_problem;
    ``pkt`` the IPv6 packet as it leaves (forward)."""

    def __init__(self, kind, pkt=b""):
        self.kind, self.pkt = kind, pkt


def remove_srh(b: bytearray) -> bytearray:
    """RFC 8986 §4.16.1.2 S14.2-S14.4 for an SRH right after the fixed header."""
    hlen = 8 * (b[41] + 1)
    b[6] = b[40]
    plen = int.from_bytes(b[4:6], "big") - hlen
    b[4:6] = plen.to_bytes(2, "big")
    return b[:40] + b[40 + hlen:]


def model(pkt: bytes, L: Lengths, psp=False) -> Out:
    """RFC 9800 §4.2.1 S01-S30 at a REPLACE-C-SID End (End.X and End.T differ only in
    the lookup), for an IPv6 packet whose SRH, if any, directly follows the fixed
    header; with PSP, RFC 8986 §4.16.1.2 after S17 and after S28 (as S28.1)."""
    b = bytearray(pkt)
    hop_limit = b[7]
    da = int.from_bytes(b[24:40], "big")
    if b[6] != NH_ROUTING:
        return Out("upper")  # no SRH: RFC 8986 §4.1.1, unchanged
    hdr_ext_len, segments_left, last_entry = b[41], b[43], b[44]
    srh_end = 40 + 8 * (hdr_ext_len + 1)

    def seg(n):
        """Segment List[n], None when it is not within the header."""
        at = 48 + 16 * n
        return int.from_bytes(b[at:at + 16], "big") if at + 16 <= srh_end else None

    index = L.index(da)
    # S02-S04.
    if segments_left == 0 and (index == 0 or (seg(0) is not None and L.csid(seg(0), index - 1) == 0)):
        return Out("upper")
    # S05-S07.
    if hop_limit <= 1:
        return Out("time_exceeded")
    # S08.
    max_le = hdr_ext_len // 2 - 1
    if index != 0:                                                      # S09
        if last_entry > max_le or segments_left > last_entry:           # S10-S12
            return Out("param_problem")
        index -= 1                                                      # S13
        if L.csid(seg(segments_left), index) == 0:                      # S14
            segments_left -= 1                                          # S15
            hop_limit -= 1                                              # S16
            da = seg(segments_left)                                     # S17
            b[43], b[7], b[24:40] = segments_left, hop_limit, da.to_bytes(16, "big")
            if psp and segments_left == 0:                              # PSP after S17
                b = remove_srh(b)
            return Out("forward", bytes(b))                             # S18
    else:                                                               # S20
        if last_entry > max_le or segments_left > last_entry + 1:       # S21-S23
            return Out("param_problem")
        segments_left -= 1                                              # S24
        index = L.k - 1                                                 # S25
    hop_limit -= 1                                                      # S27
    da = with_bits(da, L.lbl, L.lbl + L.lnfl - 1, L.csid(seg(segments_left), index))  # S28
    da = L.set_index(da, index)                       # (S13 / S25 act on the DA's bits)
    b[43], b[7], b[24:40] = segments_left, hop_limit, da.to_bytes(16, "big")
    # PSP after S28, first line S28.1.
    if psp and segments_left == 0 and (index == 0 or L.csid(seg(0), index - 1) == 0):
        b = remove_srh(b)
    return Out("forward", bytes(b))                                     # S29


def walk(pkt: bytes, L: Lengths, hops: int) -> list:
    """The packet as it reaches each of ``hops`` REPLACE-C-SID End nodes in turn."""
    seen = [pkt]
    for _ in range(hops - 1):
        o = model(seen[-1], L)
        assert o.kind == "forward", o.kind
        seen.append(o.pkt)
    return seen


# ----------------------------------------------------------------------------------------
# The router: blocks 2001:db8::/32 routed out eth1 (table 100: out eth2)
# ----------------------------------------------------------------------------------------

L32 = Lengths(48, 32)     # sr6's defaults: `flavors replace-csid`
L16 = Lengths(64, 16)     # `flavors replace-csid lblen 64 nflen 16`
B32 = a2i("2001:db8:b2::")
B16 = a2i("2001:db8:16:0::")
ROUTES = (
    "ip -6 route add 2001:db8::/32 via fc00:12::2 dev eth1",
    "ip -6 route add 2001:db8::/32 via fc00:13::2 dev eth2 table 100",
    "ip -6 route add fc00:2::/48 via fc00:13::2 dev eth2 table 100",
)


def lens_words(L: Lengths) -> str:
    return "" if (L.lbl, L.lnfl) == (48, 32) else f" lblen {L.lbl} nflen {L.lnfl}"


def prefix(L: Lengths, sid: int) -> str:
    return f"{i2a(sid)}/{L.lbl + L.lnfl}"


def node(L: Lengths, sid: int, action="End", flavors="replace-csid") -> str:
    """The config of a router whose SID ``sid`` has the REPLACE-C-SID flavour."""
    return config(*ROUTES, f"ip -6 route add {prefix(L, sid)} encap seg6local action {action} "
                           f"flavors {flavors}{lens_words(L)} dev eth0")


def txb(pkt: bytes, dev: str):
    """The frame sr6 must send out ``dev`` with IPv6 packet ``pkt``."""
    return Ether(src=MAC[dev], dst=GW6_MAC[dev], type=0x86DD) / Raw(pkt)


def packet(segs, sl, da=None, hlim=64, final=None, nh=NH_UDP, inner=None):
    """An IPv6 packet from HOST_A with an SRH of ``segs`` (header order), Segments Left
    ``sl``, destination ``da`` (default: the uncompressed Segment List[Last Entry]). Its
    UDP checksum is over ``final`` (default Segment List[0]). tshark takes Segment
    List[0] for the final destination while Segments Left > 0 and the destination
    address at 0, neither of which is the last C-SID's address in general: the lists
    walked through several nodes carry No Next Header instead (``walk_cases``)."""
    if inner is None:
        inner = Raw(udp_bytes(HOST_A, final or segs[0]))
    da = da or segs[-1]
    return IPv6(src=HOST_A, dst=da, hlim=hlim) / srh(segs, segleft=sl, nh=nh) / inner


def icmp_error(f, kind, **kw):
    return tx(icmp6_error(kind, l3(f), src=ADDR6["eth0"], dst=HOST_A, **kw), "eth0")


def csid_at(L: Lengths, pkt: bytes) -> int:
    return bits(int.from_bytes(pkt[24:40], "big"), L.lbl, L.lbl + L.lnfl - 1)


# ----------------------------------------------------------------------------------------
# A list walked node by node
# ----------------------------------------------------------------------------------------

# The draft's interoperability report, scenario 3: S1..S6 End with REPLACE-C-SID, S7 the
# receiver, "a compressed segment list encoding of 3 SIDs": S1 in the destination, then
# with 32-bit C-SIDs a full container (S2..S5) and one holding S6 and S7.
S32 = [0x00100001, 0x00200002, 0x00300003, 0x00400004, 0x00500005, 0x00600006, 0x00700007]


def walk_cases(L: Lengths, block: int, csids, tail=()):
    first = L.sid(block, csids[0])
    segs = encode(L, first, csids[1:], tail)
    start = bytes(packet(segs, len(segs) - 1, nh=NH_NONE, inner=Raw(payload(20))))
    return segs, walk(start, L, len(csids))


def test_interop_scenario_3_encodes_in_three_sids():
    segs, _ = walk_cases(L32, B32, S32)
    # Slot 3 (the least significant bits) first: S2 .. S5, then S6, S7 and two empty slots.
    assert segs == ["::70:7:60:6", "50:5:40:4:30:3:20:2", "2001:db8:b2:10:1::"]


@pytest.mark.parametrize("hop", range(len(S32)))
def test_32_bit_list_at_each_node(run_sr6, hop):
    _, seen = walk_cases(L32, B32, S32)
    at = seen[hop]
    assert csid_at(L32, at) == S32[hop]
    f = rx(IPv6(at))
    res = run_sr6(node(L32, L32.sid(B32, S32[hop])), [f])
    out = model(at, L32)
    if hop < len(S32) - 1:
        # S1 (index 0) and every C-SID but the last: the next C-SID, out eth1.
        assert out.kind == "forward" and csid_at(L32, out.pkt) == S32[hop + 1]
        res.expect(eth1=[txb(out.pkt, "eth1")])
        assert sid_entry(res.json, prefix(L32, L32.sid(B32, S32[hop])))["packets"] == 1
    else:
        # S7: Segments Left 0 and slot 1 below its index 2 empty: the end of the list
        # (S02), then RFC 8986 §4.1.1: No Next Header is no upper layer an End takes ->
        # code 4.
        assert out.kind == "upper" and at[43] == 0 and L32.index(a2i(IPv6(at).dst)) == 2
        res.expect(eth0=[icmp_error(f, "param_problem", code=4, ptr=code4_pointer(IPv6(at)))])
        assert sid_entry(res.json, prefix(L32, L32.sid(B32, S32[hop])))["errors"] == 1


def test_the_worked_example_of_behaviours_md(run_sr6):
    """docs/behaviours.md "Compressed SIDs: REPLACE-C-SID": seven nodes 2001:db8:b2:N0:1::
    (N = 1..7), three Segment List entries, the destinations as the text lists them."""
    csids = [(n << 16) | 1 for n in range(0x10, 0x80, 0x10)]
    segs, seen = walk_cases(L32, B32, csids)
    assert segs == ["::70:1:60:1", "50:1:40:1:30:1:20:1", "2001:db8:b2:10:1::"]
    assert [IPv6(p).dst for p in seen] == [
        "2001:db8:b2:10:1::", "2001:db8:b2:20:1::3", "2001:db8:b2:30:1::2", "2001:db8:b2:40:1::1",
        "2001:db8:b2:50:1::", "2001:db8:b2:60:1::3", "2001:db8:b2:70:1::2"]
    assert [p[43] for p in seen] == [2, 1, 1, 1, 1, 0, 0]
    # With PSP, node 60 removes the SRH; node 70 is the end of the list.
    assert model(seen[5], L32, psp=True).pkt[6] == NH_NONE
    assert model(seen[6], L32).kind == "upper"
    res = run_sr6(node(L32, L32.sid(B32, csids[4])), [rx(IPv6(seen[4]))])
    res.expect(eth1=[txb(seen[5], "eth1")])


# 16-bit C-SIDs (lblen 64): S1, a full container of 8 and one of 3.
S16 = [0x0101, 0x0202, 0x0303, 0x0404, 0x0505, 0x0606, 0x0707, 0x0808, 0x0909, 0x0a0a, 0x0b0b, 0x0c0c]


@pytest.mark.parametrize("hop", range(len(S16)))
def test_16_bit_list_at_each_node(run_sr6, hop):
    segs, seen = walk_cases(L16, B16, S16)
    assert len(segs) == 3
    at = seen[hop]
    f = rx(IPv6(at))
    res = run_sr6(node(L16, L16.sid(B16, S16[hop])), [f])
    out = model(at, L16)
    if hop < len(S16) - 1:
        assert out.kind == "forward" and csid_at(L16, out.pkt) == S16[hop + 1]
        res.expect(eth1=[txb(out.pkt, "eth1")])
    else:
        assert out.kind == "upper"
        res.expect(eth0=[icmp_error(f, "param_problem", code=4, ptr=code4_pointer(IPv6(at)))])


@pytest.mark.parametrize("L,block,csids", [(L32, B32, S32), (L16, B16, S16)])
def test_reduced_srh_at_the_first_sid(run_sr6, L, block, csids):
    # A reduced SRH (RFC 8754 §4.1.1, quoted by RFC 9800's SR source node section): S1
    # only in the destination, Segments Left = Last Entry + 1, which S21 allows.
    full = encode(L, L.sid(block, csids[0]), csids[1:])
    segs = full[:-1]
    pkt = bytes(packet(segs, len(segs), da=full[-1], nh=NH_NONE, inner=Raw(payload(20))))
    out = model(pkt, L)
    assert out.kind == "forward" and csid_at(L, out.pkt) == csids[1] and out.pkt[43] == len(segs) - 1
    res = run_sr6(node(L, L.sid(block, csids[0])), [rx(IPv6(pkt))])
    res.expect(eth1=[txb(out.pkt, "eth1")])


@pytest.mark.parametrize("L,block,csids", [
    (L32, B32, S32[:5]),          # S1 + exactly one full container of 32-bit C-SIDs
    (L16, B16, S16[:9]),          # S1 + exactly one full container of 16-bit C-SIDs
])
def test_list_ending_at_slot_0_of_a_full_container(run_sr6, L, block, csids):
    # The last C-SID has index 0 at Segments Left 0: S02's "DA.Arg.Index == 0".
    segs, seen = walk_cases(L, block, csids)
    last = seen[-1]
    assert last[43] == 0 and L.index(a2i(IPv6(last).dst)) == 0
    assert model(last, L).kind == "upper"
    # The node before it moves from slot 1 to slot 0 (S13, S27-S29).
    before = seen[-2]
    res = run_sr6(node(L, L.sid(block, csids[-2])), [rx(IPv6(before))])
    res.expect(eth1=[txb(model(before, L).pkt, "eth1")])
    # The last one: an ICMPv6 Echo Request goes to the host (RFC 8986 §4.1.1).
    # Its checksum over the ultimate destination (RFC 9800 §9.2): the last C-SID's address.
    echo = IPv6(src=HOST_A, dst=IPv6(last).dst, hlim=3) / srh(segs, segleft=0, nh=NH_ICMPV6) / Raw(
        bytes((IPv6(src=HOST_A, dst=IPv6(last).dst) / ICMPv6EchoRequest(id=5, seq=1))[ICMPv6EchoRequest]))
    f = rx(echo)
    res = run_sr6(node(L, L.sid(block, csids[-1])), [f])
    res.expect(local=[f])


# The draft's interoperability report, scenario 1: S1, S2 End with REPLACE-C-SID, S3 a
# regular End, S4-S6 End with NEXT-C-SID, "a compressed segment list encoding of 3 SIDs".
# S3 ends the REPLACE-C-SID sequence as a C-SID without the flavour ("regardless of the
# index", same block and LNFL); S4..S7 share one NEXT-C-SID container (block
# 2001:db8:c0::/48, 16-bit C-SIDs).
NEXT_BLOCK, NEXT_LBL, NEXT_NF = a2i("2001:db8:c0::"), 48, 16


def end_model(pkt: bytes) -> bytes:
    """RFC 8986 §4.1 S14-S16 (Segments Left > 0): hop limit, Segments Left - 1, the
    destination Segment List[Segments Left]."""
    b = bytearray(pkt)
    b[7] -= 1
    b[43] -= 1
    at = 48 + 16 * b[43]
    b[24:40] = b[at:at + 16]
    return bytes(b)


def next_csid_model(pkt: bytes) -> bytes:
    """RFC 9800 §4.1.1 S05-S07 (argument not zero): the argument copied into bits
    [LBL..LBL+AL-1], bits [LBL+AL..127] zeroed, hop limit - 1."""
    b = bytearray(pkt)
    da = int.from_bytes(b[24:40], "big")
    al = 128 - NEXT_LBL - NEXT_NF
    da = with_bits(da, NEXT_LBL, NEXT_LBL + al - 1, bits(da, NEXT_LBL + NEXT_NF, 127))
    da = with_bits(da, NEXT_LBL + al, 127, 0)
    b[24:40], b[7] = da.to_bytes(16, "big"), b[7] - 1
    return bytes(b)


def scenario_1():
    s1, s2, s3 = (L32.sid(B32, c) for c in S32[:3])
    usids = a2i("2001:db8:c0:400:500:600:700::")     # the NEXT-C-SID container
    segs = [i2a(usids)] + encode(L32, s1, S32[1:3])
    assert segs == ["2001:db8:c0:400:500:600:700:0", "::30:3:20:2", "2001:db8:b2:10:1::"]
    nodes = [
        (prefix(L32, s1), "End flavors replace-csid", lambda p: model(p, L32).pkt),
        (prefix(L32, s2), "End flavors replace-csid", lambda p: model(p, L32).pkt),
        (prefix(L32, s3), "End", end_model),
    ] + [
        (f"{i2a(with_bits(NEXT_BLOCK, 48, 63, n))}/64", "End flavors next-csid lblen 48 nflen 16", next_csid_model)
        for n in (0x400, 0x500, 0x600)
    ]
    pkt = bytes(packet(segs, 2, nh=NH_NONE, inner=Raw(payload(20))))
    hops = []
    for pfx, action, step in nodes:
        out = step(pkt)
        hops.append((pfx, action, pkt, out))
        pkt = out
    return hops


def test_interop_scenario_1_destinations():
    hops = scenario_1()
    dsts = [IPv6(h[2]).dst for h in hops] + [IPv6(hops[-1][3]).dst]
    assert dsts == ["2001:db8:b2:10:1::", "2001:db8:b2:20:2::3", "2001:db8:b2:30:3::2",
                    "2001:db8:c0:400:500:600:700:0", "2001:db8:c0:500:600:700::", "2001:db8:c0:600:700::",
                    "2001:db8:c0:700::"]


@pytest.mark.parametrize("hop", range(6))
def test_interop_scenario_1_at_each_node(run_sr6, hop):
    pfx, action, at, out = scenario_1()[hop]
    res = run_sr6(config(*ROUTES, f"ip -6 route add {pfx} encap seg6local action {action} dev eth0"), [rx(IPv6(at))])
    res.expect(eth1=[txb(out, "eth1")])


# ----------------------------------------------------------------------------------------
# The end of a C-SID sequence followed by an uncompressed SID (S14-S18)
# ----------------------------------------------------------------------------------------

FINAL = "fc00:2::99"


@pytest.mark.parametrize("L,block,csids", [(L32, B32, S32[:4]), (L16, B16, S16[:5])])
@pytest.mark.parametrize("psp", [False, True])
def test_empty_slot_hands_over_to_the_next_uncompressed_sid(run_sr6, L, block, csids, psp):
    segs = encode(L, L.sid(block, csids[0]), csids[1:], tail=[a2i(FINAL)])
    assert segs[0] == FINAL and len(segs) == 3
    # PSP removes the SRH at the last C-SID: the UDP checksum is over FINAL then.
    start = bytes(packet(segs, 2, final=FINAL if psp else None))
    at = walk(start, L, len(csids))[-1]
    out = model(at, L, psp=psp)
    assert out.kind == "forward" and out.pkt[24:40] == ipaddress.IPv6Address(FINAL).packed
    assert (out.pkt[6] == NH_ROUTING) != psp
    flavors = "psp,replace-csid" if psp else "replace-csid"
    res = run_sr6(node(L, L.sid(block, csids[-1]), flavors=flavors), [rx(IPv6(at))])
    res.expect(eth1=[txb(out.pkt, "eth1")])


# ----------------------------------------------------------------------------------------
# Hop limit (S05-S07), SRH errors (S10-S12, S21-S23)
# ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("hop", [0, 2, 4])   # index 0 (S1), inside a container, last slot
@pytest.mark.parametrize("hlim", [1, 0])
def test_hop_limit_exhausted_is_time_exceeded_quoting_the_packet_as_received(run_sr6, hop, hlim):
    _, seen = walk_cases(L32, B32, S32)
    at = IPv6(seen[hop])
    at.hlim = hlim
    assert model(bytes(at), L32).kind == "time_exceeded"
    f = rx(at)
    sid = L32.sid(B32, S32[hop])
    res = run_sr6(node(L32, sid), [f])
    res.expect(eth0=[icmp_error(f, "time_exceeded")])
    assert sid_entry(res.json, prefix(L32, sid))["errors"] == 1


def test_hop_limit_1_at_the_end_of_the_list_is_not_an_error(run_sr6):
    # S02 comes before S05: the upper layer (ICMPv6 -> the host).
    segs, seen = walk_cases(L32, B32, S32)
    last = IPv6(seen[-1])
    echo = IPv6(src=HOST_A, dst=last.dst, hlim=1) / srh(segs, segleft=0, nh=NH_ICMPV6) / Raw(
        bytes((IPv6(src=HOST_A, dst=last.dst) / ICMPv6EchoRequest(id=6, seq=2))[ICMPv6EchoRequest]))
    f = rx(echo)
    res = run_sr6(node(L32, L32.sid(B32, S32[-1])), [f])
    res.expect(local=[f])


def malformed_cases():
    """(name, packet, SID) the model answers with a Parameter Problem."""
    segs = encode(L32, L32.sid(B32, S32[0]), S32[1:])            # Last Entry 2
    c2 = L32.set_index(L32.sid(B32, S32[2]), 2)                   # index 2, Segment List[1]
    yield "S10: index != 0, Segments Left > Last Entry", packet(segs, 3, da=i2a(c2)), S32[2]
    s1 = L32.sid(B32, S32[0])                                     # index 0
    yield "S21: index 0, Segments Left > Last Entry + 1", packet(segs, 4, da=i2a(s1)), S32[0]
    p = packet(segs, 1, da=i2a(c2))
    p[IPv6ExtHdr].lastentry = 3                                   # max_LE is 2
    yield "S10: Last Entry > max_LE", p, S32[2]
    p = packet(segs, 2, da=i2a(s1))
    p[IPv6ExtHdr].lastentry = 4
    yield "S21: Last Entry > max_LE", p, S32[0]
    # An SRH with no room for a segment: Segment List[0] does not exist, so S02 cannot
    # end the list, and max_LE is -1 (S10).
    p = IPv6(src=HOST_A, dst=i2a(c2), hlim=64) / srh([], segleft=0, nh=NH_UDP, lastentry=0, hdrlen=0) / Raw(
        udp_bytes(HOST_A, i2a(c2)))
    yield "S10: no Segment List at all", p, S32[2]


@pytest.mark.parametrize("case", list(malformed_cases()), ids=lambda c: c[0])
def test_srh_errors_are_parameter_problems_at_segments_left(run_sr6, case):
    _, pkt, csid = case
    assert model(bytes(pkt), L32).kind == "param_problem"
    f = rx(pkt)
    sid = L32.sid(B32, csid)
    res = run_sr6(node(L32, sid), [f])
    res.expect(eth0=[icmp_error(f, "param_problem", code=0, ptr=OFF_SRH_SL)])
    assert sid_entry(res.json, prefix(L32, sid))["errors"] == 1


# ----------------------------------------------------------------------------------------
# PSP (after S28: S28.1), USP, USD
# ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("L,block,csids", [(L32, B32, S32), (L32, B32, S32[:5]), (L16, B16, S16)])
def test_psp_at_each_node(run_sr6, L, block, csids):
    """PSP removes the SRH where the new destination is the list's last C-SID (S28.1),
    nowhere else. (No Next Header after the SRH: no checksum whose pseudo-header
    destination changes when the SRH goes.)"""
    segs = encode(L, L.sid(block, csids[0]), csids[1:])
    start = packet(segs, len(segs) - 1, nh=NH_NONE, inner=Raw(payload(20)))
    seen = walk(bytes(start), L, len(csids))
    removed = 0
    for hop in range(len(csids) - 1):
        out = model(seen[hop], L, psp=True)
        removed += out.pkt[6] != NH_ROUTING
        res = run_sr6(node(L, L.sid(block, csids[hop]), flavors="replace-csid,psp"), [rx(IPv6(seen[hop]))])
        res.expect(eth1=[txb(out.pkt, "eth1")])
    assert removed == 1, "exactly one node (the penultimate) removes the SRH"


def echo_at_end(L, block, csids, nh=NH_ICMPV6, inner=None):
    segs, seen = walk_cases(L, block, csids)
    last = IPv6(seen[-1])
    if inner is None:
        inner = Raw(bytes((IPv6(src=HOST_A, dst=last.dst) / ICMPv6EchoRequest(id=8, seq=3))[ICMPv6EchoRequest]))
    return IPv6(src=HOST_A, dst=last.dst, hlim=40) / srh(segs, segleft=0, nh=nh) / inner


def test_usp_removes_the_srh_at_the_end_of_the_list(run_sr6):
    # "Combination with PSP, USP, and USD flavors": USP's S03.1-S03.4 replace S03.
    pkt = echo_at_end(L32, B32, S32)
    f = rx(pkt)
    res = run_sr6(node(L32, L32.sid(B32, S32[-1]), flavors="usp,replace-csid"), [f])
    stripped = IPv6(src=HOST_A, dst=pkt.dst, hlim=40, nh=NH_ICMPV6) / Raw(bytes(pkt[Raw]))
    res.expect(local=[Ether(bytes(f)[:14]) / stripped])


def test_usp_leaves_packets_before_the_end_alone(run_sr6):
    _, seen = walk_cases(L32, B32, S32)
    res = run_sr6(node(L32, L32.sid(B32, S32[5]), flavors="usp,replace-csid"), [rx(IPv6(seen[5]))])
    res.expect(eth1=[txb(model(seen[5], L32).pkt, "eth1")])


@pytest.mark.parametrize("action,dev", [("End", "eth1"), ("End.T table 100", "eth2"), ("End.X nh6 fc00:13::2", "eth2")])
def test_usd_decapsulates_at_the_end_of_the_list(run_sr6, action, dev):
    inner = udp6(src="fc00:a::200", dst="fc00:2::77", hlim=30)
    pkt = echo_at_end(L16, B16, S16, nh=NH_IPV6, inner=inner)
    res = run_sr6(node(L16, L16.sid(B16, S16[-1]), action=action, flavors="replace-csid,usd"), [rx(pkt)])
    out = inner.copy()
    out.hlim = 29
    res.expect(**{dev: [tx(out, dev)]})


def test_usd_without_srh_decapsulates_whatever_the_argument(run_sr6):
    # No SRH: RFC 8986 §4.1.1 (with USD) is unchanged; the index is not looked at.
    inner = udp6(src="fc00:a::200", dst="fc00:2::77", hlim=30)
    sid = L32.sid(B32, S32[3])
    pkt = IPv6(src=HOST_A, dst=i2a(L32.set_index(sid, 3)), hlim=64, nh=NH_IPV6) / inner
    res = run_sr6(node(L32, sid, flavors="usd,replace-csid"), [rx(pkt)])
    out = inner.copy()
    out.hlim = 29
    res.expect(eth1=[tx(out, "eth1")])


def test_without_srh_a_non_zero_index_is_the_upper_layer(run_sr6):
    sid = L32.sid(B32, S32[3])
    dst = i2a(L32.set_index(sid, 2))
    echo = IPv6(src=HOST_A, dst=dst, hlim=64) / ICMPv6EchoRequest(id=1, seq=1)
    udp = IPv6(src=HOST_A, dst=dst, hlim=64) / Raw(udp_bytes(HOST_A, dst))
    udp[IPv6].nh = NH_UDP
    fe, fu = rx(echo), rx(udp)
    res = run_sr6(node(L32, sid), [fe, fu])
    res.expect(local=[fe], eth0=[icmp_error(fu, "param_problem", code=4, ptr=40)])


# ----------------------------------------------------------------------------------------
# End.X and End.T: the same processing, their own S18/S29
# ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("action", ["End.X nh6 fc00:13::2", "End.T table 100"])
@pytest.mark.parametrize("hop", [0, 3, 5])
def test_end_x_and_end_t_send_the_next_csid_their_way(run_sr6, action, hop):
    _, seen = walk_cases(L32, B32, S32)
    res = run_sr6(node(L32, L32.sid(B32, S32[hop]), action=action), [rx(IPv6(seen[hop]))])
    res.expect(eth2=[txb(model(seen[hop], L32).pkt, "eth2")])


@pytest.mark.parametrize("action", ["End.X nh6 fc00:13::2", "End.T table 100"])
def test_end_x_and_end_t_hand_over_to_an_uncompressed_sid(run_sr6, action):
    csids = S16[:5]
    segs = encode(L16, L16.sid(B16, csids[0]), csids[1:], tail=[a2i(FINAL)])
    at = walk(bytes(packet(segs, 2)), L16, len(csids))[-1]
    res = run_sr6(node(L16, L16.sid(B16, csids[-1]), action=action, flavors="psp,replace-csid"), [rx(IPv6(at))])
    out = model(at, L16, psp=True)
    assert out.pkt[6] == NH_UDP, "Segments Left is 0 after S15: PSP (after S17) removes the SRH"
    res.expect(eth2=[txb(out.pkt, "eth2")])


# ----------------------------------------------------------------------------------------
# Configuration
# ----------------------------------------------------------------------------------------


def test_next_csid_with_replace_csid_is_a_config_error(sr6_cli):
    line = "ip -6 route add 2001:db8:b2:10:1::/80 encap seg6local action End flavors next-csid,replace-csid dev eth0"
    r = sr6_cli(config(line), [])
    assert r.returncode != 0
    n = config(line).count("\n")
    col = line.index("replace-csid") + 1
    assert f"sr6.conf:{n}:{col}:" in r.stderr and "next-csid" in r.stderr, r.stderr
