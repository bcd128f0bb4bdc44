"""Multipath routes through the kernel and sr6: `nexthop ... nexthop ...` routes, nexthop
objects and groups, `net.ipv{6,4}.fib_multipath_hash_policy` 0 and 1.

The kernel picks a path by a jhash of the flow's fields with a seed chosen at boot, so
which path one flow takes differs from kernel to kernel; sr6 uses its own mixer. What is
fixed, and asserted here on both sides: each frame leaves on one path with the same bytes
as the other side's up to the Ethernet header of that path; frames of one flow, and frames
differing only in fields the policy does not hash, take one path; frames differing only in
a hashed field spread over the paths; over many flows the split follows the weights
within 5 standard deviations of the binomial (a false failure about once in 10^6 runs of
the kernel's random seed; sr6's split, deterministic for the fixed flows, is checked
against the same bound)."""
import math
import random

from kcommon import *  # noqa: F403

MP6 = "fc00:50::"        # multipath IPv6 prefix fc00:50::/48, out eth1 and eth2
MP4 = "10.50."           # multipath IPv4 prefix 10.50.0.0/16
PATHS = ("eth1", "eth2")


def v6(i: int, host: int) -> str:
    return f"fc00:{i}::{host:x}"


def per_flow(run, same=(), spread=(), split=None, sr6_spread=()):
    """The per-flow assertions, on the kernel's output and on sr6's (module docstring).

    same: groups of frame indices that must each take one path; spread: groups that must
    use more than one path; split: (indices, {dev: weight}) checked against the weights;
    sr6_spread: groups that must use more than one path in sr6 (not in the kernel)."""
    run.asserted.append("per-flow")
    hdr = {}
    for i in range(len(run.frames)):
        for dev, fl in run.kernel[i].items():
            hdr.setdefault(dev, fl[0][:14])
    sides = {}
    for side, outs in (("kernel", run.kernel), ("sr6", run.sr6)):
        path = []
        for i, o in enumerate(outs):
            devs = [d for d, fl in o.items() if fl]
            assert len(devs) == 1 and len(o[devs[0]]) == 1 and devs[0] in PATHS, \
                f"{side}: frame {i} should leave on one path, got {({d: len(f) for d, f in o.items()})}"
            path.append(devs[0])
        sides[side] = path
    for i in range(len(run.frames)):
        k, s = sides["kernel"][i], sides["sr6"][i]
        kf, sf = run.kernel[i][k][0], run.sr6[i][s][0]
        assert sf[14:] == kf[14:], f"frame {i}: the packet sr6 forwards differs from the kernel's\n" \
            + O.frame_diff(kf, sf)
        assert s not in hdr or sf[:14] == hdr[s], f"frame {i}: sr6's Ethernet header on {s} is not the kernel's"
    for side, path in sides.items():
        for g in same:
            got = {path[i] for i in g}
            assert len(got) == 1, f"{side}: frames {list(g)} (one flow as the policy hashes) took paths {got}"
        for g in list(spread) + (list(sr6_spread) if side == "sr6" else []):
            got = {path[i] for i in g}
            assert len(got) > 1, f"{side}: frames {list(g)} differ in a hashed field but all took {got}"
        if split:
            idx, weights = split
            n, total = len(idx), sum(weights.values())
            for dev, w in weights.items():
                p = w / total
                c = sum(1 for i in idx if path[i] == dev)
                mean, sd = n * p, math.sqrt(n * p * (1 - p))
                assert abs(c - mean) <= 5 * sd, \
                    f"{side}: {c} of {n} flows on {dev}, expected {mean:.0f} +- {5 * sd:.0f} (weights {weights})"


def flows6(rng, n, **kw):
    """n UDP flows from A's prefix to fc00:50::/48 with random addresses, ports, labels."""
    out = []
    for _ in range(n):
        f = dict(src=v6("a", rng.randrange(1, 1 << 16)), dst=f"{MP6}{rng.randrange(1, 1 << 16):x}",
                 fl=rng.randrange(1 << 20), sport=rng.randrange(1024, 65536), dport=rng.randrange(1024, 65536))
        f.update(kw)
        out.append(f)
    return out


def pkt6(f):
    return rx(IPv6(src=f["src"], dst=f["dst"], fl=f["fl"], hlim=64) / UDP(sport=f["sport"], dport=f["dport"])
              / b"sr6 ecmp")


def flows4(rng, n, **kw):
    out = []
    for _ in range(n):
        f = dict(src=f"10.1.{rng.randrange(256)}.{rng.randrange(1, 255)}",
                 dst=f"{MP4}{rng.randrange(256)}.{rng.randrange(1, 255)}",
                 sport=rng.randrange(1024, 65536), dport=rng.randrange(1024, 65536), tos=0)
        f.update(kw)
        out.append(f)
    return out


def pkt4(f):
    return rx(IP(src=f["src"], dst=f["dst"], ttl=64, tos=f["tos"], id=7) / UDP(sport=f["sport"], dport=f["dport"])
              / b"sr6 ecmp")


ROUTE6 = f"ip -6 route add {MP6}/48 nexthop via fc00:12::2 dev eth1 weight 1 nexthop via fc00:13::2 dev eth2 weight 3"
ROUTE4 = f"ip route add {MP4}0.0/16 nexthop via 10.0.12.2 dev eth1 weight 1 nexthop via 10.0.13.2 dev eth2 weight 3"
WEIGHTS = {"eth1": 1, "eth2": 3}
REASON = "the kernel hashes with a seed chosen at boot; the hashed fields and the weights are the same"


def mutate(f, **kw):
    g = dict(f)
    g.update(kw)
    return g


@scenario(PER_FLOW(REASON))
def test_ecmp6_l3_policy(kernel):
    """IPv6 multipath, hash policy 0 (src, dst, flow label, next header), weights 1:3"""
    rng = random.Random(6)
    base = flows6(rng, 256)
    twins = [mutate(f, sport=f["sport"] ^ 0x5a5a, dport=f["dport"] ^ 0x1111) for f in base[:32]]
    label = flows6(rng, 1)[0]
    labels = [mutate(label, fl=x) for x in range(1, 65)]
    frames = [pkt6(f) for f in base + twins + labels]
    run = kernel.run(config(ROUTE6), frames)
    per_flow(run, same=[(i, 256 + i) for i in range(32)], spread=[range(288, 352)],
             split=(range(256), WEIGHTS))


@scenario(PER_FLOW(REASON))
def test_ecmp6_l4_policy(kernel):
    """IPv6 multipath, hash policy 1 (src, dst, protocol, ports; not the flow label)"""
    rng = random.Random(7)
    base = flows6(rng, 256)
    twins = [mutate(f, fl=f["fl"] ^ 0xabcde) for f in base[:32]]
    port = flows6(rng, 1)[0]
    ports = [mutate(port, sport=1024 + x) for x in range(64)]
    frames = [pkt6(f) for f in base + twins + ports]
    run = kernel.run(config(ROUTE6, "sysctl -w net.ipv6.fib_multipath_hash_policy=1"), frames)
    per_flow(run, same=[(i, 256 + i) for i in range(32)], spread=[range(288, 352)],
             split=(range(256), WEIGHTS))


@scenario(PER_FLOW(REASON))
def test_ecmp4_policies(kernel):
    """IPv4 multipath, policy 0 (src, dst only) then nexthop objects + group with policy 1"""
    rng = random.Random(4)
    base = flows4(rng, 256)
    twins = [mutate(f, sport=f["sport"] ^ 0x5a5a, tos=0x20) for f in base[:32]]
    dst = flows4(rng, 1)[0]
    dsts = [mutate(dst, dst=f"{MP4}7.{x}") for x in range(1, 65)]
    frames = [pkt4(f) for f in base + twins + dsts]
    run = kernel.run(config(ROUTE4), frames)
    per_flow(run, same=[(i, 256 + i) for i in range(32)], spread=[range(288, 352)],
             split=(range(256), WEIGHTS))
    # Nexthop objects, a weighted group, the L4 policy: ports now choose the path.
    objs = config("ip nexthop add id 1 via 10.0.12.2 dev eth1", "ip nexthop add id 2 via 10.0.13.2 dev eth2",
                  "ip nexthop add id 10 group 1,1/2,3", f"ip route add {MP4}0.0/16 nhid 10",
                  "sysctl -w net.ipv4.fib_multipath_hash_policy=1")
    ports = [mutate(dst, sport=1024 + x) for x in range(64)]
    frames = [pkt4(f) for f in base + [mutate(f, tos=0x20) for f in base[:32]] + ports]
    run = kernel.run(objs, frames)
    per_flow(run, same=[(i, 256 + i) for i in range(32)], spread=[range(288, 352)],
             split=(range(256), WEIGHTS))


@scenario(PER_FLOW(REASON))
def test_ecmp6_nexthop_group_end(kernel):
    """End whose next segment is behind an IPv6 nexthop group: hashed on the updated header"""
    rng = random.Random(8)
    cfg = config("ip -6 nexthop add id 1 via fc00:12::2 dev eth1", "ip -6 nexthop add id 2 via fc00:13::2 dev eth2",
                 "ip nexthop add id 5 group 1/2", f"ip -6 route add {MP6}/48 nhid 5",
                 "sysctl -w net.ipv6.conf.all.seg6_enabled=1", "sysctl -w net.ipv6.conf.eth0.seg6_enabled=1",
                 seg6local("End"))
    fl = [dict(src=v6("a", rng.randrange(1, 1 << 16)), seg=f"{MP6}{rng.randrange(1, 1 << 16):x}",
               fl=rng.randrange(1 << 20)) for _ in range(128)]
    frames = [rx(sr_pkt(SID, [f["seg"], SID], 1, src=f["src"], fl=f["fl"])) for f in fl]
    run = kernel.run(cfg, frames)
    per_flow(run, split=(range(128), {"eth1": 1, "eth2": 1}))


@scenario(PER_FLOW("the kernel caches the path an `encap seg6` route found first (`dst_cache`): all flows of "
                   "the policy take it; sr6 hashes each flow's outer header"))
def test_ecmp6_headend_first_segment(kernel):
    """H.Encaps whose first segment is behind a multipath route: same packets, sr6 spreads flows"""
    rng = random.Random(9)
    cfg = config(ROUTE6, "ip -6 route add fc00:60::/48 encap seg6 mode encap segs fc00:50::1 dev eth1")
    frames = [rx(IPv6(src=v6("a", rng.randrange(1, 1 << 16)), dst=f"fc00:60::{rng.randrange(1, 1 << 16):x}",
                      fl=rng.randrange(1 << 20)) / UDP(sport=1000 + i, dport=2000) / b"sr6 ecmp") for i in range(48)]
    run = kernel.run(cfg, frames)
    per_flow(run, sr6_spread=[range(48)])


@scenario(IDENTICAL)
def test_nexthop_objects_single(kernel):
    """Routes through a single nexthop object and a blackhole one (IPv6, IPv4)"""
    cfg = config("ip nexthop add id 1 via fc00:13::2 dev eth2", "ip -6 nexthop add id 2 blackhole",
                 "ip nexthop add id 4 blackhole",
                 "ip nexthop add id 3 via 10.0.13.2 dev eth2",
                 "ip -6 route add fc00:70::/48 nhid 1", "ip -6 route add fc00:71::/48 nhid 2",
                 "ip route add 10.70.0.0/16 nhid 3", "ip route add 10.71.0.0/16 nhid 4")
    frames = [rx(udp6(dst="fc00:70::1")), rx(udp6(dst="fc00:71::1")), rx(udp4(dst="10.70.1.1")),
              rx(udp4(dst="10.71.1.1")), rx(udp6(dst="fc00:70::1", hlim=1))]
    kernel.run(cfg, frames).assert_identical(silent=[1, 3])
