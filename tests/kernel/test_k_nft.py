"""nftables rules with the `srh` and `rt` expressions (the thesis's SR-nftables, §4.4)
through the kernel and sr6: the same `nft add table|chain|rule` lines in a kernel
router (Debian's nft, the kernel's nft_exthdr) and in sr6, transit frames through both,
the accept/drop decision compared frame by frame.

As in test_k_firewall.py, each rule selects its own destination (`ip6 daddr
fc00:2::1XX`), so a frame meets one rule; every field, each operator, and frames on
both sides of each comparison, with SRHs cut short, Routing headers of another type,
and none at all (nft reads the first Routing header whatever its type, and a field
past the packet's end matches neither way)."""
import os
import random

from scapy.all import IPv6ExtHdrRouting

from kcommon import *  # noqa: F403
from test_k_firewall import POOL, TAG, assert_decisions, da, srv6

T = "sr6t"
CHAIN = f"nft add chain ip6 {T} transit '{{ type filter hook forward priority 0 ; policy accept ; }}'"
# (expression) of each rule: the values read from the SRHs of the frames below.
EXPRS = [
    f"srh tag {TAG}",
    f"srh tag != {TAG}",
    "srh flags 0",
    "srh last-entry 2",
    "srh last-entry > 1",
    "srh last-entry < 2",
    "rt seg-left 1",
    "rt seg-left >= 2",
    "rt seg-left <= 0",
    "rt type 4",
    "rt type != 4",
    "rt nexthdr 17",
    "srh sid[1] fc00:2::99",
    "srh sid[2] != fc00:3::5",
    "srh sid[2] fc00:3::5",
    "srh tag 1799 rt seg-left > 0",
]


def rules() -> list[str]:
    out = [f"nft add table ip6 {T}", CHAIN]
    for k, e in enumerate(EXPRS):
        out.append(f"nft add rule ip6 {T} transit ip6 daddr {da(k)} {e} counter drop")
    n = len(EXPRS)
    out += [
        f"nft add rule ip6 {T} transit ip6 daddr {da(n)} meta l4proto udp udp dport 5000-5999 drop",
        f"nft add rule ip6 {T} transit ip6 daddr {da(n + 1)} ip6 saddr != fc00:a::/64 drop",
        f"nft add rule ip6 {T} transit ip6 daddr {da(n + 2)} reject with icmpv6 type admin-prohibited",
    ]
    return out


def cover_frames() -> list:
    variants = [
        (["fc00:2::99", "fc00:3::5", "fc00:a::1"], 1, NH_UDP, TAG, None),
        (["fc00:2::99", "fc00:3::5", "fc00:a::1"], 2, 59, 8, None),
        (["fc00:b::7", "fc00:a::1"], 1, NH_UDP, TAG, None),
        (["fc00:b::7", "fc00:a::1"], 0, NH_UDP, 0, None),
        (["fc00:2::99", "fc00:b::7", "fc00:a::1", "fc00:3::5"], 2, NH_UDP, TAG, None),
        (["fc00:2::99", "fc00:3::5"], 1, NH_UDP, TAG, 20),          # Hdr Ext Len past the packet
    ]
    frames = []
    for k in range(len(EXPRS)):
        for segs, sl, nh, tag, hdrlen in variants:
            frames.append(srv6(da(k), segs, sl, nh=nh, tag=tag, hdrlen=hdrlen))
        frames.append(rx(IPv6(src=HOST_A, dst=da(k), hlim=64) / UDP(sport=1, dport=2) / Raw(b"y" * 8)))
        frames.append(rx(IPv6(src=HOST_A, dst=da(k), hlim=64) / IPv6ExtHdrRouting(addresses=["fc00:2::99"], segleft=1)
                         / UDP(sport=1, dport=2)))
    n = len(EXPRS)
    udp = lambda dst, dport, src=HOST_A: rx(IPv6(src=src, dst=dst, hlim=64) / UDP(sport=4, dport=dport) / Raw(b"z" * 8))  # noqa: E731
    frames += [udp(da(n), 5000), udp(da(n), 5999), udp(da(n), 6000), srv6(da(n), ["fc00:2::99"], 0),
               udp(da(n + 1), 1), udp(da(n + 1), 1, src="fc00:b::1"), udp(da(n + 2), 1)]
    return frames


def random_frames(seed: int, count: int) -> list:
    rnd = random.Random(seed)
    frames = []
    for _ in range(count):
        k = rnd.randrange(len(EXPRS))
        n = rnd.randint(1, 4)
        segs = [rnd.choice(POOL) for _ in range(n)]
        sl = rnd.randint(0, n)
        le = n - 1 if rnd.random() < 0.85 else rnd.randint(0, 4)
        hdrlen = None if rnd.random() < 0.85 else rnd.choice([2 * n - 2, 2 * n + 2, 30])
        frames.append(srv6(da(k), segs, sl, nh=rnd.choice([NH_UDP, 59]), tag=rnd.choice([0, TAG, 7]),
                           hdrlen=hdrlen or None, lastentry=le))
    return frames


@scenario(IDENTICAL)
def test_nft_srh_expressions(kernel):
    """nft FORWARD rules with every srh and rt field, ==, !=, <, >, <=, >=, sid[N], ip6 saddr/daddr, meta l4proto, udp dport ranges and reject, over SRHs on both sides of each comparison, a Type 0 Routing header, none, and SRHs cut short"""
    assert_decisions(kernel.run(config(*rules()), cover_frames()))


@scenario(IDENTICAL)
def test_nft_srh_random(kernel):
    """The same rules over a randomised set of SRHs (seed SR6K_SEED)"""
    seed = int(os.environ.get("SR6K_SEED", "2028"))
    print(f"nft random seed {seed}")
    assert_decisions(kernel.run(config(*rules()), random_frames(seed, 120)))
