"""Head-ends that compress (sr6's `csid next`, RFC 9800 §7) with the Linux kernel as the
NEXT-C-SID consumer: sr6 encapsulates (or inserts) a list of full SIDs, compressed; the
frame it emits is then carried hop by hop through kernel routers, each configured as the
next node of the list (End `flavors next-csid`, a plain End, End.DX6 at the end), and sr6
configured the same way must forward it identically at every hop. The packet must reach
the nodes in the order of the list (each hop's destination is that node's SID, its
C-SID under the block) and leave the last one decapsulated (or, inserted, towards the
original destination with Segments Left 0)."""
import ipaddress

from kcommon import *  # noqa: F403
from kharness import run_sr6
from scapy.layers.inet6 import IPv6ExtHdrSegmentRouting

# F3216 (Linux's next-csid defaults), block fc00:0::/32; every C-SID of the block is
# routed out eth1 (towards the next node), the original destinations out eth2.
BLOCK_ROUTE = "ip -6 route add fc00:0::/32 via fc00:12::2 dev eth1"
ORIG_ROUTE = "ip -6 route add fc00:9::/64 via fc00:13::2 dev eth2"
LB, NF = 32, 16
DX6 = "fc00:0:d6::"  # End.DX6 nh6 fc00:13::2, a C-SID of the block (no flavour needed)


def prefix_bits(a: str, n: int) -> int:
    return int(ipaddress.IPv6Address(a)) >> (128 - n)


def node_line(sid: str) -> str:
    """The kernel config line of the node owning ``sid``."""
    if sid == DX6:
        return f"ip -6 route add {DX6}/48 encap seg6local action End.DX6 nh6 fc00:13::2 dev eth0"
    if prefix_bits(sid, 32) == prefix_bits("fc00:0::", 32):
        return f"ip -6 route add {sid}/48 encap seg6local action End flavors next-csid dev eth0"
    return f"ip -6 route add {sid}/128 encap seg6local action End dev eth0"


def headend(kernel, mode: str, segs, inner):
    """sr6 as the head-end: the frame it sends out eth1 for ``inner``."""
    cfg = config("ip sr tunsrc set fc00:ff::1", BLOCK_ROUTE,
                 f"ip -6 route add fc00:9::/64 encap seg6 mode {mode} csid next segs {','.join(segs)} dev eth1")
    wd = kernel.workdir / f"headend{len(kernel.runs)}"
    wd.mkdir(parents=True, exist_ok=True)
    out, _ = run_sr6(kernel.sr6_bin, cfg, [("eth0", bytes(rx(inner)))], wd, ["eth0", "eth1", "eth2"])
    assert list(out[0]) == ["eth1"] and len(out[0]["eth1"]) == 1, out
    return out[0]["eth1"][0]


def through_nodes(kernel, frame: bytes, segs, orig_dst=None) -> bytes:
    """Feeds ``frame`` to a kernel router (and sr6) configured as each node of ``segs`` in
    turn; returns what the last one emits."""
    for i, sid in enumerate(segs):
        pkt = IPv6(frame[14:])
        n = 128 if node_line(sid).split()[4].endswith("/128") else LB + NF
        assert prefix_bits(pkt.dst, n) == prefix_bits(sid, n), \
            f"hop {i}: destination {pkt.dst} is not node {sid}'s SID"
        run = kernel.run(config(BLOCK_ROUTE, ORIG_ROUTE, node_line(sid)), [rx(IPv6(frame[14:]))],
                         labels=[f"node {i} {sid}"])
        run.assert_identical()
        outs = run.kernel[0]
        assert len(outs) == 1 and sum(len(v) for v in outs.values()) == 1, f"hop {i}: {outs}"
        last = i == len(segs) - 1
        dev = "eth2" if last else "eth1"
        assert dev in outs, f"hop {i} ({sid}): sent out {list(outs)}, expected {dev}"
        frame = outs[dev][0]
    if orig_dst is not None:
        out = IPv6(frame[14:])
        assert out.dst == orig_dst and out[IPv6ExtHdrSegmentRouting].segleft == 0, out.show2(dump=True)
    return frame


def inner_pkt():
    return udp6(src=HOST_A, dst="fc00:9::5", hlim=40)


def check_decapsulated(frame: bytes, inner):
    got = IPv6(frame[14:])
    assert (got.src, got.dst, bytes(got.payload)) == (inner.src, inner.dst, bytes(inner.payload)), \
        got.show2(dump=True)


@scenario(IDENTICAL)
def test_compressed_encap_through_kernel_nodes(kernel):
    """sr6's compressed H.Encaps (one container, no SRH) through kernel End next-csid nodes

    fc00:0:1::,fc00:0:2::,fc00:0:3::,fc00:0:d6:: is one container, fc00:0:1:2:3:d6::;
    kernel and sr6 nodes shift it hop by hop; End.DX6 decapsulates."""
    segs = ["fc00:0:1::", "fc00:0:2::", "fc00:0:3::", DX6]
    inner = inner_pkt()
    frame = headend(kernel, "encap", segs, inner)
    assert IPv6(frame[14:]).dst == "fc00:0:1:2:3:d6::" and IPv6(frame[14:]).nh == 41
    check_decapsulated(through_nodes(kernel, frame, segs), inner)


@scenario(IDENTICAL)
def test_compressed_encap_two_containers_through_kernel_nodes(kernel):
    """sr6's compressed H.Encaps and H.Encaps.Red of two containers (SRH) through kernel nodes

    Nine SIDs: the first container's last End (argument zero) takes the SRH's next entry,
    the second container; a plain End of another block in the middle of a third list."""
    segs = [f"fc00:0:{i}::" for i in range(1, 9)] + [DX6]
    inner = inner_pkt()
    for mode in ("encap", "encap.red"):
        frame = headend(kernel, mode, segs, inner)
        assert IPv6(frame[14:]).dst == "fc00:0:1:2:3:4:5:6"
        check_decapsulated(through_nodes(kernel, frame, segs), inner)
    mixed = ["fc00:0:1::", "fc00:0:2::", "fc00:2::e", "fc00:0:4::", DX6]
    frame = headend(kernel, "encap", mixed, inner)
    check_decapsulated(through_nodes(kernel, frame, mixed), inner)


@scenario(IDENTICAL)
def test_compressed_insert_through_kernel_nodes(kernel):
    """sr6's compressed H.Insert through kernel End next-csid nodes, back to the destination

    The last End, its argument zero, takes Segment List[0]: the original destination."""
    segs = ["fc00:0:1::", "fc00:0:2::", "fc00:0:3::"]
    inner = inner_pkt()
    frame = headend(kernel, "inline", segs, inner)
    through_nodes(kernel, frame, segs, orig_dst="fc00:9::5")
