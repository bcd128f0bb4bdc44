"""Random (seeded) configs and valid SRv6 packets for the kernel comparison.

``batch(rng, b) -> Batch``: one router config and a list of ``Case``s sent through one
namespace setup.  Everything derives from ``random.Random(f"{seed}:{b}")``, so batch b of
a seed is the same whatever the other batches or the number of packets asked.

A case is checked as IDENTICAL, except the two kinds of packets whose outcome is a
documented difference (tests/kernel/test_k_errors.py, test_k_headend.py):
  * hop limit <= 1 at an End / End.X / End.T SID with SL > 0 -> the kernel quotes the
    modified packet, sr6 the received one (RFC 8986 §4.1 S05-S06);
  * an IPv6 payload of hop limit <= 1 steered into an encap / encap.red / l2encap(.red)
    policy -> the kernel emits nothing, sr6 sends Time Exceeded (RFC 4443 §3.3);
for which both outputs are predicted with scapy.
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field

from kcommon import (  # noqa: F401
    ADDR6, GW4_MAC, HOST_A, IPv6, NH_ETHERNET, NH_IPV4, NH_IPV6, NH_UDP, UDP, Raw, config, icmp6_error,
    l3, padn, rx, sr_pkt, tx, udp4, udp6, udp_bytes, unknown_tlv, time_exceeded,
)

END_LIKE = ("End", "End.X", "End.T")
REMOTE6 = ("fc00:2::{:x}:{:x}", "fc00:3::{:x}:{:x}")


@dataclass
class Case:
    frame: object
    label: str
    # None: identical; else (kernel expectation {dev: [frames]}, sr6 expectation {dev: [frames]})
    difference: tuple | None = None


@dataclass
class Batch:
    config: str
    cases: list[Case] = field(default_factory=list)
    sids: dict = field(default_factory=dict)      # sid -> (action, params)
    policies6: list = field(default_factory=list)  # (prefix base, mode, segs)
    policies4: list = field(default_factory=list)


def _remote(rng) -> str:
    return rng.choice(REMOTE6).format(rng.randrange(1, 0xFFFF), rng.randrange(1, 0xFFFF))


def _tlvs(rng) -> list:
    """0-3 PadN / unknown-type TLVs (no Pad1, no HMAC: see test_pad1_tlv), total % 8 == 0."""
    out, total = [], 0
    for _ in range(rng.choice((0, 0, 1, 2, 3))):
        n = rng.choice((2, 4, 6, 8, 10, 14))
        if rng.random() < 0.5:
            out.append(padn(n))
        else:
            out.append(unknown_tlv(rng.choice((0x80, 0x81, 0x9a, 0x1e, 0x7f)), n))
        total += n
    if total % 8:
        pad = 8 - total % 8
        out.append(padn(pad) if pad >= 2 else padn(pad + 8))
    return out


def make_config(rng) -> tuple[str, dict, list, list]:
    lines = [
        "ip sr tunsrc set fc00:ff::1",
        "ip sr hmac set 7 sha1 secret-one",
        "ip sr hmac set 8 sha256 secret-two",
        "ip -6 route add fc00:77::/64 via fc00:13::2 dev eth2 table 100",
        "ip -6 route add fc00:2::/48 via fc00:12::2 dev eth1 table 100",
        "ip -6 route add fc00:3::/48 via fc00:13::2 dev eth2 table 100",
    ]
    sids = {}
    n = 1
    actions = ["End", "End", "End.X", "End.T", "End.DX6", "End.DT6", "End.DX4", "End"]
    for action in actions[: rng.randint(5, len(actions))]:
        sid = f"fc00:f::{n:x}"
        n += 1
        if action == "End":
            params = rng.choice(("", "", "flavors psp"))
        elif action == "End.X":
            params = "nh6 " + rng.choice(("fc00:12::2", "fc00:13::2")) + rng.choice(("", " oif eth1"))
            if params.endswith("oif eth1"):
                params = "nh6 fc00:12::2 oif eth1"
        elif action == "End.T":
            params = "table 100"
        elif action == "End.DX6":
            params = "nh6 " + rng.choice(("fc00:12::2", "fc00:13::2"))
        elif action == "End.DT6":
            params = "table 100"
        else:
            params = "nh4 10.0.13.2"
        sids[sid] = (action, params)
        lines.append(f"ip -6 route add {sid}/128 encap seg6local action {action}{' ' + params if params else ''} "
                     f"dev {rng.choice(('eth0', 'eth1', 'eth2'))}")
    end_sids = [s for s, (a, _) in sids.items() if a in END_LIKE]
    pol6, pol4 = [], []
    for k in range(1, rng.randint(2, 4) + 1):
        mode = rng.choice(("encap", "encap.red", "inline", "l2encap", "l2encap.red"))
        segs = [rng.choice(end_sids) if rng.random() < 0.2 else _remote(rng) for _ in range(rng.randint(1, 4))]
        segs[0] = _remote(rng)   # a local S1 would chain into a local SID: see test_chained_local_sids
        hmac = rng.choice(("", "", " hmac 7", " hmac 8")) if mode in ("encap", "inline") else ""
        dev = "eth1" if segs[0].startswith("fc00:2:") else "eth2"
        lines.append(f"ip -6 route add fc00:9:{k:x}::/64 encap seg6 mode {mode} segs {','.join(segs)}{hmac} dev {dev}")
        pol6.append((f"fc00:9:{k:x}::", mode, segs))
    for k in range(1, rng.randint(1, 2) + 1):
        mode = rng.choice(("encap", "encap.red", "l2encap", "l2encap.red"))
        segs = [_remote(rng) for _ in range(rng.randint(1, 3))]
        dev = "eth1" if segs[0].startswith("fc00:2:") else "eth2"
        lines.append(f"ip route add 10.9.{k}.0/24 encap seg6 mode {mode} segs {','.join(segs)} dev {dev}")
        pol4.append((f"10.9.{k}.", mode, segs))
    return config(*lines), sids, pol6, pol4


def _hlim(rng) -> int:
    return 1 if rng.random() < 0.1 else rng.choice((2, 3, rng.randint(2, 255), 64, 255))


def _src(rng) -> str:
    return f"fc00:a::{rng.randrange(1, 0xFFFF):x}"


def _inner(rng, kind, src_hint=None):
    """(next header, payload scapy/bytes, description)."""
    if kind == "ipv6":
        return NH_IPV6, udp6(src=src_hint or _src(rng), dst=_remote(rng), hlim=rng.randint(2, 255),
                             tc=rng.choice((0, 0x20)), fl=rng.choice((0, rng.randrange(1 << 20))),
                             n=rng.randint(0, 200)), "ipv6"
    if kind == "ipv4":
        return NH_IPV4, udp4(src=f"10.1.0.{rng.randint(1, 254)}", dst="10.0.13.2", ttl=rng.randint(2, 255),
                             n=rng.randint(0, 200), ident=rng.randrange(65536)), "ipv4"
    return NH_UDP, None, "udp"


def case_end(rng, b: Batch) -> Case:
    """A valid SRv6 packet whose DA is a local End / End.X / End.T SID with SL > 0."""
    end_sids = [s for s, (a, _) in b.sids.items() if a in END_LIKE]
    sid = rng.choice(end_sids)
    action, params = b.sids[sid]
    L = rng.randint(2, 6)
    sl = rng.randint(1, L - 1)
    reduced = rng.random() < 0.15 and sl == L - 1
    payload_kind = rng.choice(("udp", "ipv6", "ipv4"))
    nh, inner, desc = _inner(rng, payload_kind)
    # Segment List[0]: where the packet ends; must process the payload the same way on both.
    dx = [s for s, (a, _) in b.sids.items() if (a in ("End.DX6", "End.DT6") and nh == NH_IPV6)
          or (a == "End.DX4" and nh == NH_IPV4)]
    last = rng.choice(dx) if dx and rng.random() < 0.5 else _remote(rng)
    segs = [last] + [rng.choice(end_sids) if rng.random() < 0.25 else _remote(rng) for _ in range(L - 1)]
    segs[sl] = sid
    hlim = _hlim(rng)
    if hlim <= 1 and "psp" in params:
        hlim = 2
    if segs[sl - 1] in b.sids and (sl > 1 or hlim <= 1 or action == "End.T" or rng.random() < 0.5):
        # The next SID is local: the kernel would process it in the same pass without
        # decrementing the hop limit (see test_chained_local_sids). Only a local final
        # End.DX*/DT6 SID (SL 1 -> 0) is kept, half of the time, and not after End.T
        # (table 100 has no route to it: test_end_t_no_route).
        segs[sl - 1] = _remote(rng)
    src = _src(rng)
    if reduced:   # RFC 8986 §5.2: S1 not in the list, SL = LE + 1
        segs = segs[:sl]
    pkt = sr_pkt(sid, segs, sl, nh=nh, inner=inner, hlim=hlim, src=src, tc=rng.choice((0, 0x48)),
                 fl=rng.choice((0, rng.randrange(1 << 20))), tlvs=_tlvs(rng))
    f = rx(pkt)
    label = f"{action} {params or ''} SL={sl} LE={len(segs) - 1} hlim={hlim} {desc}"
    diff = None
    if hlim <= 1:
        mod = pkt.copy()
        mod[IPv6].dst = segs[sl - 1]
        mod[IPv6].payload.segleft = sl - 1
        err = lambda q: icmp6_error("time_exceeded", bytes(q), src=ADDR6["eth0"], dst=src)  # noqa: E731
        diff = ({"eth0": [tx(err(mod), "eth0")]}, {"eth0": [tx(err(pkt), "eth0")]})
    return Case(f, label, diff)


def case_decap(rng, b: Batch) -> Case | None:
    dx = [s for s, (a, _) in b.sids.items() if a in ("End.DX6", "End.DT6", "End.DX4")]
    if not dx:
        return None
    sid = rng.choice(dx)
    action, _ = b.sids[sid]
    nh, inner, desc = _inner(rng, "ipv4" if action == "End.DX4" else "ipv6")
    if action == "End.DT6" and rng.random() < 0.5:
        inner[IPv6].dst = f"fc00:77::{rng.randrange(1, 0xFFFF):x}"
    src = _src(rng)
    hlim = rng.choice((1, 2, 64, 255))
    if rng.random() < 0.25:
        pkt = IPv6(src=src, dst=sid, hlim=hlim) / inner
    else:
        segs = [sid] + [_remote(rng) for _ in range(rng.randint(0, 4))]
        pkt = sr_pkt(sid, segs, 0, nh=nh, inner=inner, hlim=hlim, src=src, tlvs=_tlvs(rng))
    return Case(rx(pkt), f"{action} hlim={hlim} {desc}")


def case_headend6(rng, b: Batch) -> Case:
    base, mode, segs = rng.choice(b.policies6)
    hlim = _hlim(rng)
    if mode == "inline" and hlim <= 1:
        hlim = 2
    src = _src(rng)
    pkt = udp6(src=src, dst=f"{base}{rng.randrange(1, 0xFFFF):x}", hlim=hlim, tc=rng.choice((0, 0xB8)),
               fl=rng.choice((0, rng.randrange(1 << 20))), n=rng.randint(0, 300))
    diff = None
    if hlim <= 1:
        diff = ({}, {"eth0": [tx(icmp6_error("time_exceeded", bytes(pkt), src=ADDR6["eth0"], dst=src), "eth0")]})
    return Case(rx(pkt), f"head-end {mode} segs={len(segs)} hlim={hlim}", diff)


def case_headend4(rng, b: Batch) -> Case:
    base, mode, segs = rng.choice(b.policies4)
    ttl = rng.choice((1, 2, 64, 255))
    pkt = udp4(src=f"10.1.0.{rng.randint(1, 254)}", dst=f"{base}{rng.randint(1, 254)}", ttl=ttl,
               n=rng.randint(0, 300), ident=rng.randrange(65536))
    return Case(rx(pkt), f"head-end IPv4 {mode} segs={len(segs)} ttl={ttl}")


def case_forward(rng, b: Batch) -> Case:
    if rng.random() < 0.6:
        pkt = udp6(src=_src(rng), dst=_remote(rng), hlim=_hlim(rng), n=rng.randint(0, 300))
    else:
        pkt = udp4(src=f"10.1.0.{rng.randint(1, 254)}", dst=f"10.{rng.choice((2, 3))}.0.{rng.randint(1, 254)}",
                   ttl=rng.choice((1, 2, 64)), n=rng.randint(0, 300))
    return Case(rx(pkt), f"forward {pkt.summary()}")


def batch(seed: int, b: int, n_packets: int) -> Batch:
    rng = random.Random(f"{seed}:{b}")
    cfg, sids, pol6, pol4 = make_config(rng)
    bt = Batch(cfg, sids=sids, policies6=pol6, policies4=pol4)
    kinds = [(case_end, 45), (case_decap, 15), (case_headend6, 20), (case_headend4, 8), (case_forward, 12)]
    while len(bt.cases) < n_packets:
        fn = rng.choices([k for k, _ in kinds], weights=[w for _, w in kinds])[0]
        c = fn(rng, bt)
        if c is not None:
            bt.cases.append(c)
    return bt
