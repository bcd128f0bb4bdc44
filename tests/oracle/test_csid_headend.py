"""Head-ends that compress their segment list (behaviours.md "Compressed SIDs"; RFC 9800 §7,
sr6's `csid next|replace [lblen L] [nflen N]` before `segs`).

Two oracles, both written from RFC 9800 (draft-ietf-spring-srv6-srh-compression), not
from sr6's code:

* ``next_model`` / ``replace_model``: the SR source node's compression (§7: the NEXT-C-SID
  method step by step; the REPLACE-C-SID method: first SID whole, C-SIDs in containers),
  giving the exact frames expected (the encoding is then RFC 8754 §4.1's, as §7 says).
* ``walk``: the endpoint pseudocode (§4.1.1 End with NEXT-C-SID, §4.2.1 End with
  REPLACE-C-SID, RFC 8986 §4.1 End) run over the frame sr6 emitted: the destinations it
  visits must be the full SIDs as written, in order, and the list must end where it
  should (encapsulation: at the last SID; insertion: at the original destination, SL 0).
"""
import ipaddress
import random

import pytest

from scapy.layers.inet6 import IPv6ExtHdrSegmentRouting

from sr6_oracle import (
    HOST_A, NH_ETHERNET, NH_IPV6, NH_UDP, IPv6, Raw, config, hmac_tlv, rx, srh, tx, udp6,
)

TUNSRC = "fc00:ff::1"
ROUTES = ("ip -6 route add fc00:0::/32 via fc00:12::2 dev eth1",       # NEXT-C-SID block, F3216
          "ip -6 route add 2001:db8::/32 via fc00:12::2 dev eth1")     # REPLACE-C-SID blocks


# --- the SR source node's compression (RFC 9800 §7) -------------------------------------


def v(a: str) -> int:
    return int(ipaddress.IPv6Address(a))


def s(x: int) -> str:
    return str(ipaddress.IPv6Address(x))


def field(x: int, start: int, length: int) -> int:
    """Bits [start..start+length-1] of a 128-bit value, bit 0 the most significant (the
    RFC's numbering)."""
    return (x >> (128 - start - length)) & ((1 << length) - 1)


def parts(sid: int, lb: int, nf: int):
    """(block, C-SID, bits after the C-SID) of a SID under lengths lb/nf."""
    return field(sid, 0, lb), field(sid, lb, nf), field(sid, lb + nf, 128 - lb - nf)


def is_csid(sid: int, lb: int, nf: int) -> bool:
    """A C-SID: not the reserved value 0 (§5), and nothing after it (§3: trailing bits
    zero)."""
    _, c, rest = parts(sid, lb, nf)
    return c != 0 and rest == 0


def significant(sid: int, lb: int) -> int:
    """How many bits after the block a SID uses (up to its last one bit)."""
    after = field(sid, lb, 128 - lb)
    if after == 0:
        return 0
    zeros = (after & -after).bit_length() - 1  # trailing zero bits
    return 128 - lb - zeros


def next_model(segs, lb, nf):
    """§7, NEXT-C-SID: "Initialize a C-SID container as the first segment ... remaining
    capacity to AL; for each subsequent segment: if its Locator-Block matches that of the
    container and its LNFL is lower than or equal to the remaining capacity, copy its
    Locator-Node and Function to the most significant remaining argument bits; else push
    the container and initialize a new one". sr6's reading (behaviours.md): a SID that is
    not a C-SID is written whole and never starts a container; one with a non-zero C-SID
    but bits after it may be copied whole (all its significant bits) as the last of a
    container."""
    out, cont = [], None  # cont: [value, block, remaining capacity]
    for x in map(v, segs):
        blk, c, _ = parts(x, lb, nf)
        csid = is_csid(x, lb, nf)
        longer = c != 0 and not csid
        if cont is not None and (csid or longer) and blk == cont[1]:
            need = nf if csid else significant(x, lb)
            if need <= cont[2]:
                used = 128 - lb - cont[2]
                cont[0] |= field(x, lb, need) << (128 - lb - used - need)
                cont[2] -= need
                if longer:
                    out.append(cont[0])
                    cont = None
                continue
        if cont is not None:
            out.append(cont[0])
            cont = None
        if csid:
            cont = [x, blk, 128 - lb - nf]
        else:
            out.append(x)
    if cont is not None:
        out.append(cont[0])
    return [s(e) for e in out]


def replace_runs(segs, lb, nf):
    """The REPLACE-C-SID series of a list: maximal runs of C-SIDs of one block; a run of
    one is no series (§7.2 rule 2: at least two elements)."""
    runs, i = [], 0
    xs = list(map(v, segs))
    while i < len(xs):
        j = i + 1
        if is_csid(xs[i], lb, nf):
            while j < len(xs) and is_csid(xs[j], lb, nf) and parts(xs[j], lb, nf)[0] == parts(xs[i], lb, nf)[0]:
                j += 1
        runs.append(xs[i:j])
        i = j
    return runs


def containers(csids, nf):
    """§4.2.1: S25 starts a container at index 128/NF - 1 and S13 counts down; entry
    position i is bits [i*NF..(i+1)*NF-1]. So the first C-SID takes the last NF bits."""
    per = 128 // nf
    out = []
    for k in range(0, len(csids), per):
        val = 0
        for j, c in enumerate(csids[k:k + per]):
            idx = per - 1 - j
            val |= c << (128 - (idx + 1) * nf)
        out.append(val)
    return out


def replace_model(segs, lb, nf, then_more):
    """§7, REPLACE-C-SID: "the first segment is not compressed ... inserts consecutive
    C-SIDs ... into the container. When the container is full, it is pushed". §7.2
    rule 3: a series ends at a C-SID of index > 0 (or at a SID without the flavour): so
    a series whose C-SIDs fill its last container and after which something follows
    (insertion: the original destination) ends instead with its last two SIDs as a
    series of their own (sr6's choice, behaviours.md)."""
    per = 128 // nf
    out = []
    runs = replace_runs(segs, lb, nf)
    for n, run in enumerate(runs):
        if len(run) < 2:
            out += run
            continue
        followed = n + 1 < len(runs) or then_more
        csids = [parts(x, lb, nf)[1] for x in run[1:]]
        out.append(run[0])
        if followed and len(csids) % per == 0:
            out += containers(csids[:-2], nf) + [run[-2]] + containers(csids[-1:], nf)
        else:
            out += containers(csids, nf)
    return [s(e) for e in out]


# --- the endpoints (RFC 9800 §4.1.1, §4.2.1; RFC 8986 §4.1) -------------------------------


def roles(segs, scheme, lb, nf):
    """Which behaviour each SID's node runs: NEXT-C-SID End for a C-SID; REPLACE-C-SID
    End for a SID in a series; otherwise End without a flavour."""
    if scheme == "next":
        return ["next" if is_csid(v(x), lb, nf) else "end" for x in segs]
    out = []
    for run in replace_runs(segs, lb, nf):
        out += ["replace" if len(run) > 1 else "end"] * len(run)
    return out


def walk(frame: bytes, segs, scheme, lb, nf, orig_dst=None):
    """Runs the pseudocode of each SID's node over the IPv6 header (and SRH) of ``frame``
    (the first is the head-end's output). Asserts the nodes are reached in the order of
    ``segs`` and the list ends at the last one (or, ``orig_dst``: the last one hands the
    packet to the original destination with Segments Left 0)."""
    ip = IPv6(frame[14:])
    da = v(ip.dst)
    sr = ip.getlayer(IPv6ExtHdrSegmentRouting)
    seglist = [v(a) for a in sr.addresses] if sr is not None else []
    sl = sr.segleft if sr is not None else 0
    idx_bits = (128 // nf - 1).bit_length()
    per = 128 // nf
    kinds = roles(segs, scheme, lb, nf)

    def entry(i):
        assert 0 <= i < len(seglist), f"Segment List[{i}] does not exist (Last Entry {len(seglist) - 1})"
        return seglist[i]

    trace = []
    for k, (sid, kind) in enumerate(zip(map(v, segs), kinds)):
        if kind == "end":
            assert da == sid, f"node {k} ({s(sid)}) not reached: DA {s(da)}; visited {trace}"
        else:
            assert field(da, 0, lb + nf) == field(sid, 0, lb + nf), \
                f"node {k} ({s(sid)}) not reached: DA {s(da)}; visited {trace}"
        trace.append(s(da))
        last = k == len(segs) - 1
        ended = False
        if kind == "next":
            arg_len = 128 - lb - nf
            arg = field(da, lb + nf, arg_len)
            if arg:  # S01-S08: the argument moves up by one C-SID
                da = (field(da, 0, lb) << (128 - lb)) | (arg << (128 - lb - arg_len))
            elif sr is None or sl == 0:
                ended = True
            else:  # RFC 8986 §4.1 S14-S15
                sl -= 1
                da = entry(sl)
        elif kind == "replace":
            idx = da & ((1 << idx_bits) - 1)
            if sr is None or (sl == 0 and (idx == 0 or field(entry(0), (idx - 1) * nf, nf) == 0)):
                ended = True  # S02-S03
            else:
                write = True
                if idx != 0:  # S09-S19
                    assert sl <= len(seglist) - 1, "S10: Segments Left > Last Entry"
                    idx -= 1
                    if field(entry(sl), idx * nf, nf) == 0:
                        sl -= 1
                        da = entry(sl)
                        write = False
                else:  # S21-S25
                    assert sl <= len(seglist), "S21: Segments Left > Last Entry + 1"
                    sl -= 1
                    idx = per - 1
                if write:  # S28, the index with it
                    c = field(entry(sl), idx * nf, nf)
                    da = (field(da, 0, lb) << (128 - lb)) | (c << (128 - lb - nf)) | idx
        else:
            if sr is None or sl == 0:
                ended = True
            else:
                sl -= 1
                da = entry(sl)
        if orig_dst is None:
            assert ended == last, f"node {k} ({s(sid)}): list ended {ended}, last {last}; visited {trace}"
        else:
            assert not ended, f"node {k} ({s(sid)}) ended the list before the original destination"
    if orig_dst is not None:
        assert (s(da), sl) == (orig_dst, 0), f"after the last node: DA {s(da)}, SL {sl}; visited {trace}"
    return trace


# --- expected frames ------------------------------------------------------------------------


def route6(mode, csid, segs, prefix="fc00:9::/64", extra=""):
    return f"ip -6 route add {prefix} encap seg6 mode {mode} {csid} segs {','.join(segs)}{extra} dev eth1"


def encap_expected(inner, entries, mode, nh=NH_IPV6, tlvs=(), flags=0):
    """H.Encaps / .Red (RFC 8986 §5.1-5.2 with the compressed list, RFC 8754 §4.1): the SRH
    left out for one entry with nothing else to carry (mode encap with csid too)."""
    lst = list(reversed(entries))
    if mode.endswith(".red") or (len(entries) == 1 and not tlvs):
        lst = lst[:-1]
    out = IPv6(src=TUNSRC, dst=entries[0], hlim=inner.hlim - 1, tc=inner.tc, fl=inner.fl, nh=43 if lst else nh)
    if not lst:
        return out / Raw(bytes(inner))
    return out / srh(lst, segleft=len(entries) - 1, lastentry=len(lst) - 1, nh=nh, tlvs=tlvs, flags=flags) / \
        Raw(bytes(inner))


def insert_expected(pkt, entries, mode):
    lst = [pkt.dst] + list(reversed(entries))
    if mode.endswith(".red"):
        lst = lst[:-1]
    return IPv6(src=pkt.src, dst=entries[0], hlim=pkt.hlim - 1, tc=pkt.tc, fl=pkt.fl) / \
        srh(lst, segleft=len(entries), lastentry=len(lst) - 1, nh=NH_UDP) / Raw(bytes(pkt.payload))


F3216 = [f"fc00:0:{i:x}::" for i in range(1, 10)]
F6432 = [f"2001:db8:0:1:0:{i:x}::" for i in range(1, 11)]
F6416 = [f"2001:db8:0:2:{i:x}::" for i in range(1, 12)]


def test_models_reproduce_the_rfc_shapes():
    """The models themselves, on lists whose encoding RFC 9800's text fixes."""
    assert next_model(F3216[:3], 32, 16) == ["fc00:0:1:2:3::"]
    assert next_model(F3216[:8], 32, 16) == ["fc00:0:1:2:3:4:5:6", "fc00:0:7:8::"]
    assert replace_model(F6432[:4], 64, 32, False) == ["2001:db8:0:1:0:1::", "::4:0:3:0:2"]
    assert replace_model(F6432[:5], 64, 32, True) == \
        ["2001:db8:0:1:0:1::", "::3:0:2", "2001:db8:0:1:0:4::", "::5"]


# --- NEXT-C-SID ---------------------------------------------------------------------------


@pytest.mark.parametrize("n", [1, 3, 6])
def test_next_encap_one_container_no_srh(run_sr6, n):
    """Up to six 16-bit C-SIDs of a /32 block fit the destination: H.Encaps pushes no SRH."""
    segs = F3216[:n]
    inner = udp6(dst="fc00:9::5", hlim=30, tc=0x28, fl=0x12345)
    res = run_sr6(config(f"ip sr tunsrc set {TUNSRC}", *ROUTES, route6("encap", "csid next", segs)), [rx(inner)])
    entries = next_model(segs, 32, 16)
    assert len(entries) == 1
    res.expect(eth1=[tx(encap_expected(inner, entries, "encap"), "eth1")])
    walk(res.frames("eth1")[0], segs, "next", 32, 16)


@pytest.mark.parametrize("mode", ["encap", "encap.red"])
def test_next_encap_two_containers(run_sr6, mode):
    segs = F3216[:9]
    inner = udp6(dst="fc00:9::5")
    res = run_sr6(config(f"ip sr tunsrc set {TUNSRC}", *ROUTES, route6(mode, "csid next", segs)), [rx(inner)])
    entries = next_model(segs, 32, 16)
    assert entries == ["fc00:0:1:2:3:4:5:6", "fc00:0:7:8:9::"]
    res.expect(eth1=[tx(encap_expected(inner, entries, mode), "eth1")])
    walk(res.frames("eth1")[0], segs, "next", 32, 16)


@pytest.mark.parametrize("mode", ["inline", "inline.red"])
def test_next_insert(run_sr6, mode):
    """H.Insert: Segment List[0] is the original destination, even for one container."""
    for segs in (F3216[:3], F3216[:7]):
        pkt = udp6(dst="fc00:9::5", hlim=20)
        res = run_sr6(config(*ROUTES, route6(mode, "csid next", segs)), [rx(pkt)])
        entries = next_model(segs, 32, 16)
        res.expect(eth1=[tx(insert_expected(pkt, entries, mode), "eth1")])
        walk(res.frames("eth1")[0], segs, "next", 32, 16, orig_dst="fc00:9::5")


def test_next_mixed_list(run_sr6):
    """Another block's SID (written whole) splits the list; a SID with a function after its
    C-SID (fc00:0:3:d6::, say End.DT6) ends its container."""
    segs = ["fc00:0:1::", "fc00:0:2::", "fc00:2::1", "fc00:0:4::", "fc00:0:3:d6::"]
    inner = udp6(dst="fc00:9::5")
    res = run_sr6(config(f"ip sr tunsrc set {TUNSRC}", *ROUTES, route6("encap", "csid next", segs)), [rx(inner)])
    entries = next_model(segs, 32, 16)
    assert entries == ["fc00:0:1:2::", "fc00:2::1", "fc00:0:4:3:d6::"]
    res.expect(eth1=[tx(encap_expected(inner, entries, "encap"), "eth1")])
    walk(res.frames("eth1")[0], segs, "next", 32, 16)


def test_next_other_lengths_and_l2encap(run_sr6):
    """lblen 48 nflen 32 (two C-SIDs per container); H.Encaps.L2 of one container: no SRH."""
    segs = ["2001:db8:b1:1:2::", "2001:db8:b1:3:4::", "2001:db8:b1:5:6::"]
    inner = udp6(dst="fc00:9::5")
    frame = rx(inner)
    cfg = config(f"ip sr tunsrc set {TUNSRC}", *ROUTES,
                 route6("encap", "csid next lblen 48 nflen 32", segs),
                 route6("l2encap", "csid next lblen 48 nflen 32", segs[:2], prefix="fc00:8::/64"))
    res = run_sr6(cfg, [frame, rx(udp6(dst="fc00:8::5"))])
    entries = next_model(segs, 48, 32)
    assert entries == ["2001:db8:b1:1:2:3:4:0", "2001:db8:b1:5:6::"]
    l2 = rx(udp6(dst="fc00:8::5"))
    l2_exp = IPv6(src=TUNSRC, dst="2001:db8:b1:1:2:3:4:0", hlim=63, nh=NH_ETHERNET) / Raw(bytes(l2))
    res.expect(eth1=[tx(encap_expected(inner, entries, "encap"), "eth1"), tx(l2_exp, "eth1")])
    walk(res.frames("eth1")[0], segs, "next", 48, 32)


def test_next_encap_with_hmac_keeps_the_srh(run_sr6):
    """An HMAC needs the SRH, so one container is then a one-entry SRH with the TLV."""
    segs = F3216[:3]
    inner = udp6(dst="fc00:9::5")
    cfg = config(f"ip sr tunsrc set {TUNSRC}", "ip sr hmac set 5 sha256 s3cret", *ROUTES,
                 route6("encap", "csid next", segs, extra=" hmac 5"))
    res = run_sr6(cfg, [rx(inner)])
    entries = next_model(segs, 32, 16)
    tlv = hmac_tlv("sha256", b"s3cret", TUNSRC, entries, keyid=5, flags=0x08)
    res.expect(eth1=[tx(encap_expected(inner, entries, "encap", tlvs=[tlv], flags=0x08), "eth1")])


def test_next_binding_sid(run_sr6):
    """End.B6.Encaps with `srh csid next ...`: the received SRH consumed, then the
    compressed policy pushed (here one container, no SRH); End.B6 inserts it."""
    segs = F3216[:4]
    bsid, b6 = "fc00:1::b6", "fc00:1::b1"
    cfg = config(f"ip sr tunsrc set {TUNSRC}", *ROUTES,
                 f"ip -6 route add {bsid}/128 encap seg6local action End.B6.Encaps srh csid next "
                 f"segs {','.join(segs)} dev eth1",
                 f"ip -6 route add {b6}/128 encap seg6local action End.B6 srh csid next segs {','.join(segs)} dev eth1")
    inner = udp6(dst="fc00:3::1", hlim=40)  # UDP checksum over the final destination
    pkt = IPv6(src=HOST_A, dst=bsid, hlim=40) / srh(["fc00:3::1", bsid], segleft=1, nh=NH_UDP) / \
        Raw(bytes(inner.payload))
    pkt2 = IPv6(src=HOST_A, dst=b6, hlim=40) / srh(["fc00:3::1", b6], segleft=1, nh=NH_UDP) / \
        Raw(bytes(inner.payload))
    res = run_sr6(cfg, [rx(pkt), rx(pkt2)])
    entries = next_model(segs, 32, 16)
    consumed = IPv6(bytes(pkt))
    consumed.dst, consumed.hlim = "fc00:3::1", 39
    consumed[IPv6ExtHdrSegmentRouting].segleft = 0
    exp1 = IPv6(src=TUNSRC, dst=entries[0], hlim=39, nh=NH_IPV6) / Raw(bytes(consumed))
    # End.B6 (Linux's): the policy's SRH in front of the received one, hop limit - 1.
    exp2 = IPv6(src=HOST_A, dst=entries[0], hlim=39) / \
        srh([b6] + list(reversed(entries)), segleft=1, nh=43) / Raw(bytes(pkt2.payload))
    res.expect(eth1=[tx(exp1, "eth1"), tx(exp2, "eth1")])
    walk(res.frames("eth1")[0], segs, "next", 32, 16)


# --- REPLACE-C-SID ------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["encap", "encap.red"])
@pytest.mark.parametrize("n", [2, 5, 6, 10])
def test_replace_encap(run_sr6, mode, n):
    """F6432: the first SID whole (index 0), then four C-SIDs per
    container from the least significant end."""
    segs = F6432[:n]
    inner = udp6(dst="fc00:9::5")
    res = run_sr6(config(f"ip sr tunsrc set {TUNSRC}", *ROUTES, route6(mode, "csid replace lblen 64 nflen 32", segs)), [rx(inner)])
    entries = replace_model(segs, 64, 32, False)
    res.expect(eth1=[tx(encap_expected(inner, entries, mode), "eth1")])
    walk(res.frames("eth1")[0], segs, "replace", 64, 32)


@pytest.mark.parametrize("n", [3, 9, 10, 11])
def test_replace_16bit_insert(run_sr6, n):
    """lblen 64 nflen 16, H.Insert: eight C-SIDs a container; with nine (8 + the first
    SID) the last container would end at index 0 before the original destination."""
    segs = F6416[:n]
    pkt = udp6(dst="fc00:9::5", hlim=9)
    res = run_sr6(config(*ROUTES, route6("inline", "csid replace lblen 64 nflen 16", segs)), [rx(pkt)])
    entries = replace_model(segs, 64, 16, True)
    res.expect(eth1=[tx(insert_expected(pkt, entries, "inline"), "eth1")])
    walk(res.frames("eth1")[0], segs, "replace", 64, 16, orig_dst="fc00:9::5")


def test_replace_mixed_list(run_sr6):
    """Series of two blocks, a SID of another block and a lone C-SID (written whole: no
    series); the first series fills its container and is followed, so it is split."""
    segs = ["fc00:2::1"] + F6432[:5] + ["fc00:3::1", "2001:db8:0:7:0:1::"] + \
        [f"2001:db8:0:9:0:{i}::" for i in (1, 2, 3)]
    inner = udp6(dst="fc00:9::5")
    res = run_sr6(config(f"ip sr tunsrc set {TUNSRC}", *ROUTES, route6("encap", "csid replace lblen 64 nflen 32", segs)), [rx(inner)])
    entries = replace_model(segs, 64, 32, False)
    assert len(entries) == 9
    res.expect(eth1=[tx(encap_expected(inner, entries, "encap"), "eth1")])
    walk(res.frames("eth1")[0], segs, "replace", 64, 32)


def test_replace_default_lengths(run_sr6):
    """`csid replace` alone: lblen 48, nflen 32 (the defaults of `flavors replace-csid`)."""
    segs = [f"2001:db8:5:{i}::" for i in (1, 2, 3)]
    inner = udp6(dst="fc00:9::5")
    res = run_sr6(config(f"ip sr tunsrc set {TUNSRC}", *ROUTES, route6("encap", "csid replace", segs)), [rx(inner)])
    entries = replace_model(segs, 48, 32, False)
    assert entries == ["2001:db8:5:1::", "::3:0:2:0"]
    res.expect(eth1=[tx(encap_expected(inner, entries, "encap"), "eth1")])
    walk(res.frames("eth1")[0], segs, "replace", 48, 32)


def node_line(sid, role, lb, nf, decap):
    """An sr6 node for ``sid``: End with `flavors replace-csid` on its C-SID prefix for a
    SID of a series, a plain End on the /128 otherwise; End.DX6 (no flavour: it ends
    the sequence, §7.2 rule 3) where the list ends in a decapsulation."""
    plen = lb + nf if role == "replace" else 128
    if decap:
        return f"ip -6 route add {sid}/{plen} encap seg6local action End.DX6 nh6 fc00:13::2 dev eth0"
    if role == "replace":
        return f"ip -6 route add {sid}/{plen} encap seg6local action End flavors replace-csid lblen {lb} nflen {nf} dev eth0"
    return f"ip -6 route add {sid}/128 encap seg6local action End dev eth0"


@pytest.mark.parametrize("mode,lb,nf,segs", [
    ("encap", 64, 32, F6432[:5]),
    ("encap.red", 64, 16, F6416[:10]),
    ("inline", 64, 32, F6432[:5]),
    ("inline.red", 64, 16, F6416[:9]),
    ("encap", 64, 32, ["2001:db8:0:9::1"] + F6432[:5] + ["2001:db8:0:8::e", "2001:db8:0:7:0:1::",
                                                        "2001:db8:0:9:0:1::", "2001:db8:0:9:0:2::"]),
])
def test_replace_through_sr6_replace_nodes(run_sr6, mode, lb, nf, segs):
    """The head-end's REPLACE-C-SID frames carried hop by hop through sr6 nodes with
    `flavors replace-csid` (and plain End, End.DX6): each hop's destination is the one
    the §4.2.1 pseudocode (``walk``) predicts, the last hop decapsulates (or, inserted,
    hands the packet to the original destination)."""
    insert = mode.startswith("inline")
    inner = udp6(dst="fc00:9::5", hlim=60)
    cfg = config(f"ip sr tunsrc set {TUNSRC}", *ROUTES,
                 route6(mode, f"csid replace lblen {lb} nflen {nf}", segs))
    frame = run_sr6(cfg, [rx(inner)]).frames("eth1")[0]
    trace = walk(frame, segs, "replace", lb, nf, orig_dst="fc00:9::5" if insert else None)
    for i, (sid, role) in enumerate(zip(segs, roles(segs, "replace", lb, nf))):
        last = i == len(segs) - 1
        assert IPv6(frame[14:]).dst == trace[i], f"hop {i}"
        line = node_line(sid, role, lb, nf, decap=last and not insert)
        res = run_sr6(config(*ROUTES, "ip -6 route add fc00:9::/64 via fc00:13::2 dev eth2", line),
                      [rx(IPv6(frame[14:]))])
        out = "eth2" if last else "eth1"
        assert [d for d in ("eth0", "eth1", "eth2") if res.frames(d)] == [out], f"hop {i} ({sid}): {res.tx}"
        frame = res.frames(out)[0]
    got = IPv6(frame[14:])
    if insert:
        assert (got.dst, got[IPv6ExtHdrSegmentRouting].segleft) == ("fc00:9::5", 0)
    else:
        assert (got.src, got.dst, bytes(got.payload)) == (inner.src, inner.dst, bytes(inner.payload))


# --- randomised -----------------------------------------------------------------------------

NEXT_LENGTHS = [(32, 16), (16, 16), (48, 16), (32, 32), (48, 32), (24, 8)]
REPLACE_LENGTHS = [(64, 32), (48, 16), (64, 16), (80, 32), (56, 32)]
MODES = ["encap", "encap.red", "inline", "inline.red"]


def random_sid(rng, blocks, lb, nf):
    """A SID of one of ``blocks`` with a random C-SID; now and then another block's SID,
    a zero C-SID, or bits after the C-SID."""
    r = rng.random()
    blk = rng.choice(blocks)
    c = rng.randrange(1, 1 << min(nf, 16))
    x = (blk << (128 - lb)) | (c << (128 - lb - nf))
    if r < 0.08:
        return s((0x2001_0db8_0099 << 80) | rng.randrange(1, 1 << 16))  # another domain
    if r < 0.12 and lb + nf < 128:
        return s(x | (rng.randrange(1, 256) << (128 - lb - nf - 8)))  # function after the C-SID
    if r < 0.15:
        return s(blk << (128 - lb))  # zero C-SID
    return s(x)


def random_case(rng):
    scheme = rng.choice(["next", "replace"])
    lb, nf = rng.choice(NEXT_LENGTHS if scheme == "next" else REPLACE_LENGTHS)
    # Blocks whose first 16 bits are fc00 or 2001 (routed by ROUTES' parents below).
    top = rng.choice([0xFC01, 0x2002])
    blocks = [(top << (lb - 16)) | rng.randrange(0, 1 << min(lb - 16, 12)) if lb > 16 else top
              for _ in range(2)]
    segs = [random_sid(rng, blocks, lb, nf) for _ in range(rng.randrange(1, 12))]
    mode = rng.choice(MODES)
    return scheme, lb, nf, mode, segs


@pytest.mark.parametrize("seed", [9800, 9801, 9802])
def test_random_lists(run_sr6, seed):
    """Seeded random lists, schemes, lengths and modes: the frame is the model's and the
    endpoints' pseudocode walks the full SIDs in order. Lists of which nothing compresses
    are left out (a config error: test_compression_errors)."""
    rng = random.Random(seed)
    cases = []
    while len(cases) < 40:
        scheme, lb, nf, mode, segs = random_case(rng)
        insert = mode.startswith("inline")
        model = next_model(segs, lb, nf) if scheme == "next" else replace_model(segs, lb, nf, insert)
        packed = len(model) < len(segs) or (scheme == "replace" and any(len(r) > 1 for r in replace_runs(segs, lb, nf)))
        if (len(segs) > 1 and not packed) or len(model) > 16:
            continue
        cases.append((scheme, lb, nf, mode, segs, model))
    lines, frames = [], []
    for i, (scheme, lb, nf, mode, segs, _) in enumerate(cases):
        lines.append(route6(mode, f"csid {scheme} lblen {lb} nflen {nf}", segs, prefix=f"fc00:9:{i:x}::/64"))
        frames.append(rx(udp6(dst=f"fc00:9:{i:x}::5", hlim=50)))
    cfg = config(f"ip sr tunsrc set {TUNSRC}", "ip -6 route add fc00::/8 via fc00:12::2 dev eth1",
                 "ip -6 route add 2000::/8 via fc00:12::2 dev eth1", *lines)
    res = run_sr6(cfg, frames)
    got = res.frames("eth1")
    assert len(got) == len(cases)
    exp = []
    for i, ((scheme, lb, nf, mode, segs, model), f) in enumerate(zip(cases, frames)):
        pkt = f[IPv6]
        if mode.startswith("inline"):
            exp.append(tx(insert_expected(pkt, model, mode), "eth1"))
            orig = pkt.dst
        else:
            exp.append(tx(encap_expected(pkt, model, mode), "eth1"))
            orig = None
        try:
            walk(got[i], segs, scheme, lb, nf, orig_dst=orig)
        except AssertionError as e:
            raise AssertionError(f"case {i}: csid {scheme} {lb}/{nf} {mode} segs {','.join(segs)}: {e}")
    res.expect(eth1=exp)


# --- configuration errors -------------------------------------------------------------------


def test_compression_errors(sr6_cli):
    """A list the lengths do not describe, and lengths a scheme cannot take: the config is
    refused with file:line:col and what was expected."""
    base = config(*ROUTES)
    nl = base.count("\n")
    bad = [
        ("encap csid next segs fc00:0:0:1::,fc00:0:0:2::", "csid", "no two of these segments"),
        ("encap csid replace nflen 24 segs 2001:db8:0:1:0:1::", "24", "16 or 32"),
        ("inline csid replace segs 2001:db8:0:1:0:1::,2001:db8:0:2:0:1::", "csid", "two or more in a row"),
        ("encap csid next lblen 120 segs fc00:0:1::", "120", "128"),
    ]
    for words, at, msg in bad:
        line = f"ip -6 route add fc00:9::/64 encap seg6 mode {words} dev eth1"
        r = sr6_cli(base + line + "\n")
        assert r.returncode != 0, line
        col = line.index(f" {at} ") + 2
        assert f"sr6.conf:{nl + 1}:{col}: " in r.stderr, (line, r.stderr)
        assert msg in r.stderr and "expected" in r.stderr, r.stderr
