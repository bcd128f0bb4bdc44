"""Compressed SIDs: the NEXT-C-SID flavour of End, End.X and End.T (RFC 9800 §4.1; Linux
`flavors next-csid [lblen L] [nflen N]`), on packets without an SRH (pure uSID), with one
(argument exhausted -> ordinary End), at hop limit 1, and for every length Linux accepts."""
import ipaddress
import random

from kcommon import *  # noqa: F403
from scapy.layers.inet6 import IPv6ExtHdrSegmentRouting

# F3216 (Linux's default lengths): block fc00:0::/32, 16-bit C-SIDs. This router is
# C-SID 0f00; 0b00 is routed out eth1 (B) and 0c00 out eth2 (C).
BLOCK_ROUTES = ("ip -6 route add fc00:0:b00::/48 via fc00:12::2 dev eth1",
                "ip -6 route add fc00:0:c00::/48 via fc00:13::2 dev eth2")


def csid_route(action: str, flavors: str = "next-csid", prefix: str = "fc00:0:f00::/48") -> str:
    return f"ip -6 route add {prefix} encap seg6local action {action} flavors {flavors} dev eth0"


def usid(dst: str, hlim: int = 64, n: int = 16):
    """A pure uSID packet: no SRH, UDP to a C-SID container."""
    return rx(udp6(dst=dst, hlim=hlim, n=n))


@scenario(IDENTICAL)
def test_next_csid_end_without_srh(kernel):
    """End next-csid (F3216), no SRH: argument shifted one C-SID left, hop limit - 1, routed

    Arguments of one to five C-SIDs, and bits at the very end of the address."""
    frames = [usid("fc00:0:f00:b00::"), usid("fc00:0:f00:c00::", hlim=2),
              usid("fc00:0:f00:b00:c00:b00:c00:b00"), usid("fc00:0:f00:c00:b00:c00::"),
              usid("fc00:0:f00:b00::1"), usid("fc00:0:f00:c00:0:0:0:1")]
    kernel.run(config(*BLOCK_ROUTES, csid_route("End")), frames).assert_identical()


@scenario(IDENTICAL)
def test_next_csid_end_with_srh(kernel):
    """End next-csid with an SRH: untouched while the argument is not zero, then ordinary End

    The SRH is not checked while the argument is not zero (SL 0, SL > Last Entry + 1 pass);
    once it is zero, SL - 1 and DA = the next segment, itself a container."""
    sid = "fc00:0:f00::"
    frames = [
        rx(sr_pkt("fc00:0:f00:b00::", ["fc00:2::99", "fc00:0:f00:b00::"], 1)),
        rx(sr_pkt("fc00:0:f00:c00::", ["fc00:0:f00:c00::"], 0)),
        rx(sr_pkt("fc00:0:f00:b00::", ["fc00:2::99", "fc00:0:f00:b00::"], 7)),  # SL > LE + 1
        rx(sr_pkt(sid, ["fc00:0:c00:b00::", sid], 1)),
        rx(sr_pkt(sid, [FINAL, "fc00:0:b00::", sid], 2, hlim=9)),
    ]
    kernel.run(config(*BLOCK_ROUTES, csid_route("End")), frames).assert_identical()


@scenario(IDENTICAL)
def test_next_csid_end_x(kernel):
    """End.X nh6 next-csid: shifted, then to the adjacency; argument zero: ordinary End.X"""
    sid = "fc00:0:f00::"
    frames = [usid("fc00:0:f00:b00::"), usid("fc00:0:f00:c00:b00::"),
              rx(sr_pkt("fc00:0:f00:b00::", ["fc00:2::99", "fc00:0:f00:b00::"], 1)),
              rx(sr_pkt(sid, [FINAL, sid], 1))]
    kernel.run(config(*BLOCK_ROUTES, csid_route("End.X", prefix="fc00:0:f00::/48").replace(
        "action End.X", "action End.X nh6 fc00:13::2")), frames).assert_identical()


def every_length_config_and_frames(seed: int):
    """One SID per (lblen, nflen) Linux accepts (120 pairs), each with its own block, and
    routes to two neighbouring C-SIDs under that block; a random container per SID."""
    rng = random.Random(seed)
    lines, frames = [], []
    for lb in range(8, 121, 8):
        for nf in range(8, 129 - lb, 8):
            lo, fo = lb // 8, nf // 8
            block = bytes([0x20 + lo]) + bytes(range(1, lo))  # distinct first byte per lblen
            me, b, c = bytes([0xF0 + fo]) * fo, bytes([0xB0 + fo]) * fo, bytes([0xC0 + fo]) * fo

            def addr(*parts):
                raw = b"".join(parts)[:16]
                return str(ipaddress.IPv6Address(raw + bytes(16 - len(raw))))

            plen = lb + nf
            lines.append(f"ip -6 route add {addr(block, me)}/{plen} encap seg6local action End "
                         f"flavors next-csid lblen {lb} nflen {nf} dev eth0")
            lines.append(f"ip -6 route add {addr(block, b)}/{plen} via fc00:12::2 dev eth1")
            lines.append(f"ip -6 route add {addr(block, c)}/{plen} via fc00:13::2 dev eth2")
            room = 16 - lo - fo
            if room == 0:
                # No argument: the SID is an ordinary End (SRH).
                frames.append(rx(sr_pkt(addr(block, me), [FINAL, addr(block, me)], 1)))
                continue
            # Whole C-SIDs while they fit, then the first bytes of one more.
            arg = b"".join(rng.choice([b, c]) for _ in range(room // fo + 1))[:room]
            if room < fo:
                # Not even one whole C-SID fits: route the partial one it shifts in.
                lines.append(f"ip -6 route add {addr(block, arg)}/{plen} via fc00:12::2 dev eth1")
            frames.append(usid(addr(block, me, arg)))
    return lines, frames


@scenario(IDENTICAL)
def test_next_csid_every_length(kernel):
    """Every lblen/nflen pair Linux accepts (120 SIDs), each with a random container

    Multiples of 8 with a sum <= 128, one config; the containers hold the neighbours' C-SIDs
    in a seeded random order (reproducible)."""
    lines, frames = every_length_config_and_frames(seed=9800)
    kernel.run(config(*lines), frames).assert_identical()


HOP_REASON = ("Linux shifts the argument before its forwarding path checks the hop limit, so its Time "
              "Exceeded quotes the packet with the next C-SID already in the destination; sr6 checks "
              "first and quotes the packet as received")


@scenario(DIFFERENCE(HOP_REASON, "RFC 9800 §4.1.1 S02-S05"))
def test_next_csid_hop_limit(kernel):
    """End next-csid with hop limit 1 and 0 and a non-zero argument: Time Exceeded"""
    frames = [usid("fc00:0:f00:b00::", hlim=1), usid("fc00:0:f00:b00::", hlim=0)]
    run = kernel.run(config(*BLOCK_ROUTES, csid_route("End")), frames)
    for i, f in enumerate(frames):
        shifted = bytes(l3(f))
        shifted = shifted[:24] + bytes.fromhex("fc000000" "0b00" + "00" * 10) + shifted[40:]
        run.expect_kernel(i, eth0=[time_exceeded(shifted)])
        run.expect_sr6(i, eth0=[time_exceeded(l3(f))])


@scenario(DIFFERENCE("Linux accepts flavours on End.T but ignores them: the container is treated as an "
                     "ordinary SID (no SRH: dropped); sr6 applies NEXT-C-SID as on End",
                     "RFC 9800 §4.1.3"))
def test_next_csid_end_t(kernel):
    """End.T table 100 next-csid: the shifted destination looked up in table 100"""
    lines = ("ip -6 route add fc00:0:b00::/48 via fc00:13::2 dev eth2 table 100",)
    frames = [usid("fc00:0:f00:b00::")]
    run = kernel.run(config(*BLOCK_ROUTES, *lines, csid_route("End.T", prefix="fc00:0:f00::/48").replace(
        "action End.T", "action End.T table 100")), frames)
    run.expect_kernel(0)
    out = IPv6(l3(frames[0]))
    out.dst, out.hlim = "fc00:0:b00::", out.hlim - 1
    run.expect_sr6(0, eth2=[tx(out, "eth2")])


@scenario(DIFFERENCE("Linux ignores PSP when NEXT-C-SID is set too (its End runs without flavours once the "
                     "argument is zero); sr6 removes the SRH when Segments Left becomes 0, as PSP alone does",
                     "RFC 9800 §4.1.7, RFC 8986 §4.16.1"))
def test_next_csid_with_psp(kernel):
    """End flavors psp,next-csid: argument zero, SL 1 -> 0"""
    sid = "fc00:0:f00::"
    frames = [rx(sr_pkt(sid, ["fc00:0:b00::", sid], 1))]
    run = kernel.run(config(*BLOCK_ROUTES, csid_route("End", "psp,next-csid")), frames)
    kept = IPv6(l3(frames[0]))
    kept.dst, kept.hlim = "fc00:0:b00::", kept.hlim - 1
    kept[IPv6ExtHdrSegmentRouting].segleft = 0
    run.expect_kernel(0, eth1=[tx(kept, "eth1")])
    popped = IPv6(bytes(kept))
    popped = IPv6(src=popped.src, dst=popped.dst, hlim=popped.hlim) / popped[IPv6ExtHdrSegmentRouting].payload
    run.expect_sr6(0, eth1=[tx(popped, "eth1")])


@scenario(IDENTICAL)
def test_compressed_list_ends_at_decapsulation(kernel):
    """A container whose last C-SID is End.DX6 / End.DT6 / End.DX4 (/48 SIDs, no flavour)

    RFC 9800 lets the list end at a decapsulating SID allocated from the same block: once
    the NEXT-C-SID End before it has shifted it in, the argument is zero and the packet has
    no SRH, so the SID decapsulates. Sent straight to those SIDs, and through the End."""
    lines = (*BLOCK_ROUTES,
             "ip -6 route add fc00:9::/64 via fc00:13::2 dev eth2 table 100",
             "ip -6 route add fc00:0:d6::/48 encap seg6local action End.DX6 nh6 fc00:12::2 dev eth0",
             "ip -6 route add fc00:0:d7::/48 encap seg6local action End.DT6 table 100 dev eth0",
             "ip -6 route add fc00:0:d4::/48 encap seg6local action End.DX4 nh4 10.0.12.2 dev eth0",
             csid_route("End"))
    inner6 = udp6(src="fc00:a::200", dst="fc00:9::5", hlim=30)
    inner4 = udp4(src="10.1.0.7", dst="10.0.12.2", ttl=30)  # nh4 itself: see test_end_dx4
    frames = [rx(IPv6(src=HOST_A, dst="fc00:0:d6::") / inner6),
              rx(IPv6(src=HOST_A, dst="fc00:0:d7::") / inner6),
              rx(IPv6(src=HOST_A, dst="fc00:0:d4::", nh=4) / inner4),
              rx(IPv6(src=HOST_A, dst="fc00:0:f00:d6::") / inner6),
              rx(IPv6(src=HOST_A, dst="fc00:0:f00:d7::") / inner6),
              rx(IPv6(src=HOST_A, dst="fc00:0:f00:d4::", nh=4) / inner4)]
    kernel.run(config(*lines), frames).assert_identical()
