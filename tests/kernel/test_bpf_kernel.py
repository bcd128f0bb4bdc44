"""End.BPF: the same clang-compiled object through the Linux kernel and through sr6-bpf.

The C programs of crates/bpf/tests/progs are compiled once with clang (`-O2 -g -target
bpf`). The kernel side: a router namespace of the oracle topology with `ip -6 route add
SID encap seg6local action End.BPF endpoint obj FILE.o sec SEC dev eth0` (iproute2 loads
the object), frames sent on eth0, what it forwards captured per device
(kharness.KernelRouter). The sr6 side: sr6-bpf's interpreter on the same object and the
same packets (the example `end_bpf`, crates/bpf/examples/end_bpf.rs). Per frame, the
kernel's output must be exactly sr6-bpf's packet (hop limit - 1, the kernel's forwarding)
on the device the route sr6-bpf reports leads to, or nothing when sr6-bpf drops.

This compares the runtime alone; test_k_end_bpf.py compares the router (`sr6 pcap`).
"""
from __future__ import annotations

import os
import shutil
import subprocess
from ipaddress import IPv6Address, IPv6Network
from pathlib import Path

import pytest

import kharness
import sr6test
from kcommon import (  # noqa: F401
    FINAL, GW6, HOST_A, IPv6, NH_IPV6, SEG_B, SEG_C, SID, TUNSRC, Raw, config, padn, rx, seg6local, sr_pkt, udp6,
    unknown_tlv,
)

ROOT = Path(__file__).resolve().parents[2]
PROGS = ROOT / "crates/bpf/tests/progs"
TABLE100 = "ip -6 route add fc00:9::/64 via fc00:13::2 dev eth2 table 100"

# Where the oracle topology routes (tests/oracle/sr6_oracle.py): (table, prefix) -> device.
ROUTES = [(0, "fc00:2::/48", "eth1"), (0, "fc00:3::/48", "eth2"), (0, "fc00:13::/64", "eth2"),
          (0, "fc00:12::/64", "eth1"), (100, "fc00:9::/64", "eth2")]


def egress(daddr: str, nexthop: str, table: int) -> str:
    addr = IPv6Address(daddr if nexthop == "-" else nexthop)
    for t, prefix, dev in ROUTES:
        if (t == table or nexthop != "-") and addr in IPv6Network(prefix):
            return dev
    raise AssertionError(f"no route for {daddr} / {nexthop} in table {table} in the test topology")


@pytest.fixture(scope="session")
def bpf(tmp_path_factory):
    """(objects directory, end_bpf runner); fails (never skips) without clang or cargo."""
    sr6test.require_netns("the End.BPF kernel comparison")
    clang = shutil.which("clang")
    if not clang:
        pytest.fail("clang not found: run scripts/setup.sh (clang, libbpf-dev)", pytrace=False)
    out = tmp_path_factory.mktemp("bpf")
    inc = [f"-I{d}" for d in ("/usr/include/x86_64-linux-gnu", "/usr/include/aarch64-linux-gnu") if os.path.isdir(d)]
    for c in sorted(PROGS.glob("*.c")):
        subprocess.run([clang, "-O2", "-g", "-target", "bpf", *inc, "-c", str(c), "-o", str(out / (c.stem + ".o"))],
                       check=True)
    runner = os.environ.get("SR6_BPF_RUN")
    if not runner:
        subprocess.run(["cargo", "build", "--release", "-q", "-p", "sr6-bpf", "--example", "end_bpf"], cwd=ROOT,
                       check=True)
        target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
        runner = str(target / "release/examples/end_bpf")
    return out, runner


def sr6_bpf(runner: str, obj: Path, sec: str, l3s: list[bytes]) -> list[list[str]]:
    p = subprocess.run([runner, str(obj), sec, TUNSRC], input="".join(b.hex() + "\n" for b in l3s),
                       capture_output=True, text=True, check=True)
    return [line.split() for line in p.stdout.splitlines()]


def compare(bpf, tmp_path, file: str, sec: str, frames, extra=()) -> list[list[str]]:
    """Runs both; asserts per frame; returns sr6-bpf's verdicts (for the scenario's own
    checks that it did what it is meant to)."""
    objs, runner = bpf
    obj = objs / f"{file}.o"
    cfg = config(f"ip sr tunsrc set {TUNSRC}", *extra, seg6local("End.BPF", f"endpoint obj {obj} sec {sec}"))
    with kharness.KernelRouter(cfg, tmp_path) as k:
        per_frame, _ = k.send([("eth0", bytes(f)) for f in frames])
    ours = sr6_bpf(runner, obj, sec, [bytes(f)[14:] for f in frames])
    assert len(ours) == len(frames)
    for i, (kout, v) in enumerate(zip(per_frame, ours)):
        got = {dev: [f[14:] for f in fs if not kharness.is_noise(f)] for dev, fs in kout.items()}
        got = {dev: fs for dev, fs in got.items() if fs}
        if v[0] == "drop":
            assert got == {}, f"{file}/{sec} frame {i}: sr6-bpf dropped ({' '.join(v[1:])}), the kernel sent {got}"
            continue
        _, daddr, nexthop, table, hx = v
        want = bytearray(bytes.fromhex(hx))
        want[7] -= 1
        dev = egress(daddr, nexthop, int(table))
        assert got == {dev: [bytes(want)]}, (
            f"{file}/{sec} frame {i}: sr6-bpf {dev} {bytes(want).hex()}\nkernel {({d: [f.hex() for f in fs] for d, fs in got.items()})}")
    return ours


def end_frames(tag=0, tlvs=()):
    return [rx(sr_pkt(SID, [FINAL, SID], 1, tag=tag, tlvs=list(tlvs))),
            rx(sr_pkt(SID, [FINAL, SEG_C, SID, HOST_A], 2, tag=tag, tlvs=list(tlvs), hlim=9, tc=0x10, fl=0x54321))]


def test_end(bpf, tmp_path):
    """End in eBPF (also behind Hop-by-Hop and Destination Options headers); and the
    packets End.BPF drops before the program (no active SRH)"""
    from scapy.layers.inet6 import IPv6ExtHdrDestOpt, IPv6ExtHdrHopByHop, PadN

    from kcommon import srh

    frames = end_frames() + end_frames(tlvs=[padn(8)]) + [
        rx(sr_pkt(SID, [SID, HOST_A], 0)),  # Segments Left 0
        rx(udp6(dst=SID)),                  # no SRH
        rx(IPv6(src=HOST_A, dst=SID, nh=0) / IPv6ExtHdrHopByHop(nh=43, options=[PadN(optdata=b"\0" * 4)]) /
           srh([FINAL, SID], segleft=1, nh=17) / Raw(bytes(8))),
        rx(IPv6(src=HOST_A, dst=SID, nh=60) / IPv6ExtHdrDestOpt(nh=43, options=[PadN(optdata=b"\0" * 4)]) /
           srh([FINAL, SID], segleft=1, nh=17) / Raw(bytes(8))),
    ]
    v = compare(bpf, tmp_path, "end", "end", frames)
    assert [x[0] for x in v] == ["forward"] * 4 + ["drop"] * 2 + ["forward"] * 2


def test_tag_and_flags(bpf, tmp_path):
    """Tag++ and Flags through bpf_lwt_seg6_store_bytes"""
    v = compare(bpf, tmp_path, "tag", "tag_inc", end_frames(tag=0x1234) + end_frames(tag=0xffff))
    assert all(x[0] == "forward" for x in v)


def test_tlvs(bpf, tmp_path):
    """Add an 8-byte TLV, remove one; an SRH left invalid; a write to the segment list"""
    tlv = unknown_tlv(0x80, 8)
    v = compare(bpf, tmp_path, "tlv", "add_tlv", end_frames() + end_frames(tlvs=[tlv]))
    assert all(x[0] == "forward" for x in v)
    v = compare(bpf, tmp_path, "tlv", "del_tlv", end_frames(tlvs=[tlv]) + end_frames(tlvs=[padn(8), tlv]))
    assert all(x[0] == "forward" for x in v)
    # The kernel's store_bytes quirk: the last 8 bytes of Segment List[Last Entry].
    v = compare(bpf, tmp_path, "tlv", "write_seg_tail", end_frames() + end_frames(tlvs=[tlv]))
    assert all(x[0] == "forward" for x in v)
    for sec in ("grow_4", "bad_tlv", "write_segment"):
        v = compare(bpf, tmp_path, "tlv", sec, end_frames())
        assert all(x[0] == "drop" for x in v), sec


def test_actions(bpf, tmp_path):
    """bpf_lwt_seg6_action: End.X, End.T, End.DT6, End.B6, End.B6.Encaps"""
    v = compare(bpf, tmp_path, "action", "end_x", end_frames())
    assert all(x[0] == "forward" and x[2] == "fc00:13::2" for x in v)
    frames = [rx(sr_pkt(SID, ["fc00:9::5", SID], 1)), rx(sr_pkt(SID, ["fc00:9::5", "fc00:9::6", SID], 2))]
    v = compare(bpf, tmp_path, "action", "end_t", frames, extra=[TABLE100])
    assert all(x[0] == "forward" and x[3] == "100" for x in v)
    inner = udp6(src="fc00:a::200", dst="fc00:9::5", hlim=30)
    frames = [rx(sr_pkt(SID, [SID, HOST_A], 1, nh=NH_IPV6, inner=inner))]
    v = compare(bpf, tmp_path, "action", "end_dt6", frames, extra=[TABLE100])
    assert v[0][:2] == ["forward", "fc00:9::5"]
    for sec in ("b6_encap", "b6_inline"):
        v = compare(bpf, tmp_path, "action", sec, end_frames())
        assert all(x[:2] == ["forward", "fc00:3::b1"] for x in v), sec
    # BPF_REDIRECT without an action: the kernel forwards nothing; sr6-bpf drops.
    v = compare(bpf, tmp_path, "action", "redirect_alone", end_frames())
    assert all(x[0] == "drop" for x in v)


def test_calls_load_bytes_and_maps(bpf, tmp_path):
    """BPF-to-BPF calls and bpf_skb_load_bytes (drop UDP inside); maps and global data"""
    udp = udp6(src="fc00:a::200", dst=FINAL)
    tcp = IPv6(src="fc00:a::200", dst=FINAL, nh=6) / Raw(bytes(20))
    frames = [rx(sr_pkt(SID, [FINAL, SID], 1, nh=NH_IPV6, inner=udp)),
              rx(sr_pkt(SID, [FINAL, SID], 1, nh=NH_IPV6, inner=tcp))]
    v = compare(bpf, tmp_path, "misc", "drop_udp", frames)
    assert [x[0] for x in v] == ["drop", "forward"]
    v = compare(bpf, tmp_path, "maps", "count", end_frames(tag=5) + end_frames(tag=6))
    assert all(x[0] == "forward" for x in v)
    # An LPM trie the program fills: the value for the new destination lands in the Tag.
    frames = [rx(sr_pkt(SID, [d, SID], 1)) for d in (FINAL, "fc00:2:0:1::5", SEG_C)]
    v = compare(bpf, tmp_path, "lpm", "lpm_tag", frames)
    assert [x[4][92:96] for x in v] == ["0064", "0048", "0000"]


def test_documented_differences(bpf, tmp_path):
    """docs/bpf.md: the kernel's verifier refuses an unchecked packet read that sr6-bpf
    loads (and aborts at run time); it accepts a bounded loop that sr6-bpf refuses"""
    objs, runner = bpf
    cfg = config(seg6local("End.BPF", f"endpoint obj {objs / 'misc.o'} sec oob_read"))
    with pytest.raises(RuntimeError, match="kernel refused config line"):
        with kharness.KernelRouter(cfg, tmp_path):
            pass
    v = sr6_bpf(runner, objs / "misc.o", "oob_read", [bytes(end_frames()[0])[14:]])
    assert v[0][0] == "drop" and "out of bounds" in " ".join(v[0])
    cfg = config(seg6local("End.BPF", f"endpoint obj {objs / 'refused.o'} sec loop"))
    with kharness.KernelRouter(cfg, tmp_path):
        pass
    p = subprocess.run([runner, str(objs / "refused.o"), "loop"], input="", capture_output=True, text=True)
    assert p.returncode == 1 and "loops are not supported" in p.stderr, p.stderr


def test_random_srhs(bpf, tmp_path):
    """Random SRHs (1-6 segments, any active Segments Left, Pad1-free TLVs, random Flags
    and Tag, SRH or IPv6 inside) through the programs that edit the SRH; seed $SR6K_SEED"""
    import krandom

    seed = int(os.environ.get("SR6K_SEED", 20240601))
    rng = __import__("random").Random(f"bpf:{seed}")
    frames = []
    for _ in range(30):
        n = rng.randrange(2, 7)
        segs = [f"fc00:2::{rng.randrange(1, 0xffff):x}" for _ in range(n)]
        if rng.random() < 0.2:
            sl = n                        # reduced SRH: the SID is not in the list
        else:
            sl = rng.randrange(1, n)
            segs[sl] = SID
        nh, inner = (NH_IPV6, udp6(src="fc00:a::200", dst=FINAL)) if rng.random() < 0.5 else (17, None)
        frames.append(rx(sr_pkt(SID, segs, sl, nh=nh, inner=inner, tlvs=krandom._tlvs(rng), flags=rng.randrange(256),
                                tag=rng.randrange(65536), hlim=rng.randrange(2, 256))))
    for file, sec in (("end", "end"), ("tag", "tag_inc"), ("tlv", "add_tlv"), ("tlv", "del_tlv"),
                      ("tlv", "write_seg_tail")):
        v = compare(bpf, tmp_path, file, sec, frames)
        assert any(x[0] == "forward" for x in v), f"{file}/{sec}: nothing forwarded"
