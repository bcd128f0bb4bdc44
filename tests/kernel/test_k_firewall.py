"""The firewall (ip6tables, `-m srh`) through the kernel and sr6: the same rules in the
FORWARD chain of a kernel router (Debian's ip6tables, nft backend, the kernel's
ip6t_srh) and of sr6, transit frames through both, the accept/drop decision (and the
frame forwarded, or the REJECT answer) compared frame by frame.

Each rule selects its own destination (`-d fc00:2::1XX`), so one run checks many rules:
a frame to rule k's destination meets rule k alone. Every `-m srh` option is there,
plain and negated, and frames on both sides of each comparison; then a randomised set
(seed `SR6K_SEED`, printed) of SRHs with random fields, segment lists and lengths, some
malformed (Segments Left > Last Entry, Hdr Ext Len past the packet, not an SRH)."""
import os
import random
import sys

import pytest

from scapy.all import IPv6ExtHdrRouting, TCP

from kcommon import *  # noqa: F403

# (option, value) of each `-m srh` rule: the value read from the SRH of the frames below.
SRH_OPTIONS = [
    ("--srh-next-hdr", "17"),
    ("--srh-hdr-len-eq", "6"),
    ("--srh-hdr-len-gt", "4"),
    ("--srh-hdr-len-lt", "6"),
    ("--srh-segs-left-eq", "1"),
    ("--srh-segs-left-gt", "1"),
    ("--srh-segs-left-lt", "2"),
    ("--srh-last-entry-eq", "2"),
    ("--srh-last-entry-gt", "1"),
    ("--srh-last-entry-lt", "2"),
    ("--srh-tag", "1799"),
    ("--srh-psid", "fc00:a::/64"),
    ("--srh-nsid", "fc00:3::/48"),
    ("--srh-lsid", "fc00:2::99/128"),
]
# The tag of the rules and frames: 0x0707, the same in either byte order, since the
# kernel compares `--srh-tag` with the SRH's Tag in network byte order against the
# value in host byte order (docs/firewall.md, "Differences from Linux").
TAG = 0x0707
# Segment pools: each SID is in or out of each option's prefix.
POOL = ["fc00:a::1", "fc00:3::5", "fc00:2::99", "fc00:2::1", "fc00:b::7"]


def da(k: int) -> str:
    return f"fc00:2::{0x100 + k:x}"


def rules() -> list[str]:
    """Rule 2i: option i; rule 2i+1: `! option i`; then the generic matches."""
    out = []
    for i, (opt, val) in enumerate(SRH_OPTIONS):
        out.append(f"ip6tables -A FORWARD -d {da(2 * i)} -m srh {opt} {val} -j DROP")
        out.append(f"ip6tables -A FORWARD -d {da(2 * i + 1)} -m srh ! {opt} {val} -j DROP")
    n = 2 * len(SRH_OPTIONS)
    out += [
        f"ip6tables -A FORWARD -d {da(n)} -m srh -j DROP",                                        # any SRH
        f"ip6tables -A FORWARD -d {da(n + 1)} -p udp --dport 5000:5999 -j DROP",
        f"ip6tables -A FORWARD -d {da(n + 2)} ! -s fc00:a::/64 -j DROP",
        f"ip6tables -A FORWARD -d {da(n + 3)} -i eth0 -o eth1 ! -p udp -j DROP",
        f"ip6tables -A FORWARD -d {da(n + 4)} -p tcp ! --sport 80 -j DROP",
        f"ip6tables -A FORWARD -d {da(n + 5)} -m srh --srh-tag 1799 --srh-segs-left-gt 0 ! --srh-lsid fc00:2::99 -j DROP",
        f"ip6tables -A FORWARD -d {da(n + 6)} -j REJECT",
        f"ip6tables -A FORWARD -d {da(n + 7)} -j REJECT --reject-with icmp6-adm-prohibited",
        # Host bits under the mask, which ip6tables clears.
        f"ip6tables -A FORWARD -d {da(n + 8)} -m srh --srh-psid fc00:a::1/64 -j DROP",
        f"ip6tables -A FORWARD -d {da(n + 9)}/ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff -s fc00:a::1/64 -j DROP",
    ]
    return out


N_RULES = 2 * len(SRH_OPTIONS) + 10


def srv6(dst, segs, sl, nh=NH_UDP, tag=0, hdrlen=None, lastentry=None, inner=None):
    """An SRv6 frame from A to `dst` (a transit destination behind B)."""
    if inner is None:
        inner = UDP(sport=40000, dport=40001) / Raw(b"x" * 8) if nh == NH_UDP else Raw(b"\x00" * 16)
    h = srh(segs, segleft=sl, nh=nh, tag=tag, hdrlen=hdrlen, lastentry=lastentry)
    return rx(IPv6(src=HOST_A, dst=dst, hlim=64) / h / inner)


def cover_frames() -> list:
    """For every srh rule pair, frames on both sides of its comparison."""
    frames = []
    variants = [
        # segs (header order), sl, nh, tag, hdrlen
        (["fc00:2::99", "fc00:3::5", "fc00:a::1"], 1, NH_UDP, TAG, None),    # hdrlen 6, le 2
        (["fc00:2::99", "fc00:3::5", "fc00:a::1"], 2, 59, 8, None),        # sl = le: no psid
        (["fc00:b::7", "fc00:a::1"], 1, NH_UDP, TAG, None),                  # hdrlen 4, le 1
        (["fc00:b::7", "fc00:a::1"], 0, NH_UDP, 0, None),                  # sl 0: no nsid
        (["fc00:2::99", "fc00:b::7", "fc00:a::1", "fc00:3::5"], 2, NH_IPV6, TAG, None),  # hdrlen 8
        (["fc00:2::99", "fc00:3::5", "fc00:a::1"], 3, NH_UDP, TAG, None),    # sl > le: never
        (["fc00:2::99", "fc00:3::5"], 1, NH_UDP, TAG, 20),                   # hdrlen past the packet
    ]
    for k in range(2 * len(SRH_OPTIONS) + 1):
        for segs, sl, nh, tag, hdrlen in variants:
            inner = IPv6(src=HOST_A, dst=HOST_B) / UDP(sport=1, dport=2) if nh == NH_IPV6 else None
            frames.append(srv6(da(k), segs, sl, nh=nh, tag=tag, hdrlen=hdrlen, inner=inner))
        # No Routing header, and a Routing header that is not an SRH.
        frames.append(rx(IPv6(src=HOST_A, dst=da(k), hlim=64) / UDP(sport=1, dport=2) / Raw(b"y" * 8)))
        frames.append(rx(IPv6(src=HOST_A, dst=da(k), hlim=64) / IPv6ExtHdrRouting(addresses=["fc00:a::1"], segleft=0)
                         / UDP(sport=1, dport=2)))
    n = 2 * len(SRH_OPTIONS)
    udp = lambda dst, dport, src=HOST_A: rx(IPv6(src=src, dst=dst, hlim=64) / UDP(sport=4, dport=dport) / Raw(b"z" * 8))  # noqa: E731
    frames += [
        udp(da(n + 1), 5000), udp(da(n + 1), 5999), udp(da(n + 1), 6000),
        srv6(da(n + 1), ["fc00:2::99"], 0),                                       # UDP after an SRH: dport 40001
        udp(da(n + 2), 1), udp(da(n + 2), 1, src="fc00:b::1"),
        udp(da(n + 3), 1), srv6(da(n + 3), ["fc00:2::99"], 0, nh=59), srv6(da(n + 3), ["fc00:2::99"], 0),
        rx(IPv6(src=HOST_A, dst=da(n + 4), hlim=64) / TCP(sport=80, dport=9, flags="S")),
        rx(IPv6(src=HOST_A, dst=da(n + 4), hlim=64) / TCP(sport=81, dport=9, flags="S")),
        srv6(da(n + 5), ["fc00:2::99", "fc00:3::5"], 1, tag=TAG), srv6(da(n + 5), ["fc00:2::98", "fc00:3::5"], 1, tag=TAG),
        srv6(da(n + 5), ["fc00:2::98", "fc00:3::5"], 0, tag=TAG),
        udp(da(n + 6), 1), udp(da(n + 7), 1),
        # With an SRH, the UDP checksum is over the last segment, not the destination the
        # REJECT sees: no answer (reject6_csum_ok).
        srv6(da(n + 6), ["fc00:2::99", "fc00:3::5"], 1),
        srv6(da(n + 6), ["fc00:2::99", "fc00:3::5"], 1, nh=59),
        srv6(da(n + 8), ["fc00:2::99", da(n + 8), "fc00:a::5"], 1), srv6(da(n + 8), ["fc00:2::99", da(n + 8), "fc00:b::5"], 1),
        udp(da(n + 9), 1), udp(da(n + 9), 1, src="fc00:b::1"),
    ]
    return frames


def random_frames(seed: int, count: int) -> list:
    rnd = random.Random(seed)
    frames = []
    for _ in range(count):
        k = rnd.randrange(2 * len(SRH_OPTIONS) + 1)
        n = rnd.randint(1, 4)
        segs = [rnd.choice(POOL) for _ in range(n)]
        sl = rnd.randint(0, n)                          # n: Segments Left > Last Entry
        le = n - 1 if rnd.random() < 0.85 else rnd.randint(0, 4)
        hdrlen = None if rnd.random() < 0.85 else rnd.choice([2 * n - 2, 2 * n + 2, 30])
        nh = rnd.choice([NH_UDP, 59, NH_UDP])
        frames.append(srv6(da(k), segs, sl, nh=nh, tag=rnd.choice([0, TAG, 7]), hdrlen=hdrlen or None, lastentry=le))
    return frames


def assert_decisions(run) -> None:
    """Identical outputs for every frame; the frames the kernel dropped (it emitted
    nothing) are the silent ones, and there must be many of both kinds, so that the
    comparison is of decisions and not of one outcome."""
    dropped = [i for i in range(len(run.frames)) if not any(run.kernel[i].values())]
    assert 0.2 * len(run.frames) < len(dropped) < 0.8 * len(run.frames), f"{len(dropped)} of {len(run.frames)} dropped"
    run.assert_identical(silent=dropped)


@scenario(IDENTICAL)
def test_firewall_srh_match(kernel):
    """ip6tables FORWARD rules with every -m srh option, plain and negated, -s/-d/-i/-o/-p/--sport/--dport, REJECT (icmp6-port-unreachable and adm-prohibited), over SRHs on both sides of each comparison and malformed ones"""
    cfg = config(*rules())
    assert_decisions(kernel.run(cfg, cover_frames()))


@scenario(IDENTICAL)
def test_firewall_srh_random(kernel):
    """The same rules over a randomised set of SRHs (seed SR6K_SEED): random fields, segment lists, Last Entry and Hdr Ext Len"""
    seed = int(os.environ.get("SR6K_SEED", "2028"))
    print(f"firewall random seed {seed}")
    cfg = config(*rules())
    assert_decisions(kernel.run(cfg, random_frames(seed, 150)))


@scenario(IDENTICAL)
def test_firewall_input_reject(kernel):
    """INPUT rules for the router's own address: REJECT by protocol and port, by -m srh (an SRH whose last segment is the router), the reject types, the ICMP error from the address the packet was for"""
    me = ADDR6["eth0"]
    cfg = config(
        f"ip6tables -A INPUT -d {me} -p udp --dport 7 -j REJECT --reject-with icmp6-adm-prohibited",
        f"ip6tables -A INPUT -d {me} -m srh --srh-tag {TAG} --srh-lsid {me} -j REJECT",
        f"ip6tables -A INPUT -d {me} -p tcp ! --dport 22 -j REJECT --reject-with icmp6-addr-unreachable",
        f"ip6tables -A INPUT -d {me} -j REJECT --reject-with no-route",
    )
    frames = [
        rx(IPv6(src=HOST_A, dst=me, hlim=64) / UDP(sport=9, dport=7) / Raw(b"u" * 8)),
        rx(sr_pkt(me, [me], 0, tag=TAG)),                                    # UDP over the last segment
        rx(IPv6(src=HOST_A, dst=me, hlim=64) / TCP(sport=4000, dport=23, flags="S")),
        rx(IPv6(src=HOST_A, dst=me, hlim=64) / UDP(sport=9, dport=8) / Raw(b"v" * 8)),
        rx(sr_pkt(me, [me], 0, tag=8)),                                      # the last rule
    ]
    kernel.run(cfg, frames).assert_identical()


@scenario(DIFFERENCE("Linux compares --srh-tag with the SRH's Tag in network byte order against the value "
                     "ip6tables stored in host byte order: on x86, --srh-tag 7 matches Tag 0x0700; sr6 "
                     "compares the values as written (docs/firewall.md)",
                     "RFC 8754 §2 (Tag); thesis §4.3.3, Listing 4.4"))
def test_firewall_srh_tag_byte_order(kernel):
    """-m srh --srh-tag 7 over SRHs with Tag 7 and Tag 0x0700"""
    if sys.byteorder != "little":
        pytest.skip("the kernel's comparison is byte-swapped only on little-endian hosts")
    cfg = config("ip6tables -A FORWARD -m srh --srh-tag 7 -j DROP")
    frames = [srv6(SEG_B, ["fc00:2::99", SEG_B], 1, tag=7), srv6(SEG_B, ["fc00:2::99", SEG_B], 1, tag=0x0700)]
    run = kernel.run(cfg, frames)
    fwd = [tx(IPv6(l3(f)), "eth1") for f in frames]
    for x in fwd:
        x[IPv6].hlim -= 1
    run.expect_kernel(0, eth1=[fwd[0]])
    run.expect_kernel(1)
    run.expect_sr6(0)
    run.expect_sr6(1, eth1=[fwd[1]])
