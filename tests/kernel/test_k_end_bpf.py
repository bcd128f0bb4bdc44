"""End.BPF as an sr6 behaviour against the kernel's: one config line, one object, two routers.

The C programs of crates/bpf/tests/progs are compiled once with clang (`-O2 -g -target
bpf`). Each scenario's configuration, with `ip -6 route add SID encap seg6local action
End.BPF endpoint obj FILE.o sec SEC dev eth0`, goes unchanged to a kernel router in a
namespace (iproute2 loads the object) and to `sr6 pcap` (sr6 loads the same object); the
same frames go in, and what each emits per device must be the same bytes
(kharness.Run.assert_identical). Frames both drop are listed in `silent=`.

test_bpf_kernel.py compares the runtime alone (sr6-bpf's example runner) with the
kernel; this file compares the router.
"""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from kcommon import *  # noqa: F403
from kcommon import FINAL, SEG_C, SID, TUNSRC, HOST_A, NH_IPV6, config, padn, rx, seg6local, sr_pkt, udp6, unknown_tlv

ROOT = Path(__file__).resolve().parents[2]
PROGS = ROOT / "crates/bpf/tests/progs"
TABLE100 = "ip -6 route add fc00:9::/64 via fc00:13::2 dev eth2 table 100"


@pytest.fixture(scope="session")
def objs(tmp_path_factory) -> Path:
    """The test programs, compiled; fails (never skips) without clang."""
    clang = shutil.which("clang")
    if not clang:
        pytest.fail("clang not found: run scripts/setup.sh (clang, libbpf-dev)", pytrace=False)
    out = tmp_path_factory.mktemp("bpfobj")
    inc = [f"-I{d}" for d in ("/usr/include/x86_64-linux-gnu", "/usr/include/aarch64-linux-gnu") if os.path.isdir(d)]
    for c in sorted(PROGS.glob("*.c")):
        subprocess.run([clang, "-O2", "-g", "-target", "bpf", *inc, "-c", str(c), "-o", str(out / (c.stem + ".o"))],
                       check=True)
    return out


def bpf_config(objs: Path, file: str, sec: str, *extra: str) -> str:
    return config(f"ip sr tunsrc set {TUNSRC}", *extra,
                  seg6local("End.BPF", f"endpoint obj {objs / (file + '.o')} sec {sec}"))


def drops(run) -> dict:
    """sr6's drop counters of a run (`sr6 pcap --json`), by reason."""
    return {k: v for rep in run.sr6_reports.values() for k, v in rep.get("drops", {}).items()}


def end_frames(tag=0, tlvs=(), hlims=(64, 9)):
    """A 2-segment and a 4-segment SRH reaching the SID, at each hop limit."""
    out = []
    for h in hlims:
        out.append(rx(sr_pkt(SID, [FINAL, SID], 1, tag=tag, tlvs=list(tlvs), hlim=h)))
        out.append(rx(sr_pkt(SID, [FINAL, SEG_C, SID, HOST_A], 2, tag=tag, tlvs=list(tlvs), hlim=h, tc=0x10,
                             fl=0x54321)))
    return out


@scenario(IDENTICAL)  # noqa: F405
def test_end_bpf_end(kernel, objs):
    """End.BPF: End in eBPF (BPF_OK), TLVs kept, the SRH after Hop-by-Hop or Destination Options; SL 0 or no SRH dropped"""
    from scapy.layers.inet6 import IPv6ExtHdrDestOpt, IPv6ExtHdrHopByHop, PadN

    from kcommon import srh

    frames = end_frames() + end_frames(tlvs=[padn(8)]) + [
        rx(sr_pkt(SID, [SID, HOST_A], 0)),  # Segments Left 0: no SRH to consume
        rx(udp6(dst=SID)),                  # no SRH
        rx(IPv6(src=HOST_A, dst=SID, nh=0) / IPv6ExtHdrHopByHop(nh=43, options=[PadN(optdata=b"\0" * 4)])  # noqa: F405
           / srh([FINAL, SID], segleft=1, nh=17) / Raw(bytes(8))),  # noqa: F405
        rx(IPv6(src=HOST_A, dst=SID, nh=60) / IPv6ExtHdrDestOpt(nh=43, options=[PadN(optdata=b"\0" * 4)])  # noqa: F405
           / srh([FINAL, SID], segleft=1, nh=17) / Raw(bytes(8))),  # noqa: F405
    ]
    run = kernel.run(bpf_config(objs, "end", "end"), frames)
    run.assert_identical(silent=(8, 9))
    assert drops(run) == {"bpf_invalid_srh": 2}


@scenario(IDENTICAL)  # noqa: F405
def test_end_bpf_hop_limit(kernel, objs):
    """End.BPF: hop limit 2 forwarded with 1, hop limit 1 answered with Time Exceeded after the program"""
    frames = end_frames(hlims=(2, 1)) + [rx(sr_pkt(SID, [FINAL, SID], 1, tag=0x1234, hlim=1))]
    kernel.run(bpf_config(objs, "end", "end"), frames[:4]).assert_identical()
    kernel.run(bpf_config(objs, "tag", "tag_inc"), frames[4:]).assert_identical()


@scenario(IDENTICAL)  # noqa: F405
def test_end_bpf_tag_and_flags(kernel, objs):
    """End.BPF: Tag++ and Flags through bpf_lwt_seg6_store_bytes (Tag wraps at 0xffff)"""
    frames = end_frames(tag=0x1234) + end_frames(tag=0xffff)
    kernel.run(bpf_config(objs, "tag", "tag_inc"), frames).assert_identical()


@scenario(IDENTICAL)  # noqa: F405
def test_end_bpf_tlvs(kernel, objs):
    """End.BPF: add an 8-byte TLV, remove one (bpf_lwt_seg6_adjust_srh), write the last segment's tail"""
    tlv = unknown_tlv(0x80, 8)
    kernel.run(bpf_config(objs, "tlv", "add_tlv"), end_frames() + end_frames(tlvs=[tlv])).assert_identical()
    frames = end_frames(tlvs=[tlv]) + end_frames(tlvs=[padn(8), tlv])
    kernel.run(bpf_config(objs, "tlv", "del_tlv"), frames).assert_identical()
    kernel.run(bpf_config(objs, "tlv", "write_seg_tail"), end_frames() + end_frames(tlvs=[tlv])).assert_identical()


@scenario(IDENTICAL)  # noqa: F405
def test_end_bpf_bad_programs(kernel, objs):
    """End.BPF: an SRH left invalid (a 4-byte TLV area, a TLV overrunning it), a write into the segment list: dropped"""
    for sec, reason in (("grow_4", "bpf_invalid_srh"), ("bad_tlv", "bpf_invalid_srh"), ("write_segment", "bpf_drop")):
        run = kernel.run(bpf_config(objs, "tlv", sec), end_frames())
        run.assert_identical(silent="all")
        assert drops(run) == {reason: 4}, sec


@scenario(IDENTICAL)  # noqa: F405
def test_end_bpf_actions(kernel, objs):
    """End.BPF: End.X, End.T, End.DT6, End.B6, End.B6.Encaps through bpf_lwt_seg6_action"""
    kernel.run(bpf_config(objs, "action", "end_x"), end_frames()).assert_identical()
    frames = [rx(sr_pkt(SID, ["fc00:9::5", SID], 1)), rx(sr_pkt(SID, ["fc00:9::5", "fc00:9::6", SID], 2, hlim=9))]
    kernel.run(bpf_config(objs, "action", "end_t", TABLE100), frames).assert_identical()
    inner = udp6(src="fc00:a::200", dst="fc00:9::5", hlim=30)
    frames = [rx(sr_pkt(SID, [SID, HOST_A], 1, nh=NH_IPV6, inner=inner)),
              rx(sr_pkt(SID, [FINAL, SID, HOST_A], 2, nh=NH_IPV6, inner=inner))]
    kernel.run(bpf_config(objs, "action", "end_dt6", TABLE100), frames).assert_identical()
    for sec in ("b6_encap", "b6_inline"):
        kernel.run(bpf_config(objs, "action", sec), end_frames()).assert_identical()


@scenario(IDENTICAL)  # noqa: F405
def test_end_bpf_redirect_without_action(kernel, objs):
    """End.BPF: BPF_REDIRECT with no action helper called: nothing forwarded"""
    run = kernel.run(bpf_config(objs, "action", "redirect_alone"), end_frames())
    run.assert_identical(silent="all")
    assert drops(run) == {"bpf_error": 4}


@scenario(IDENTICAL)  # noqa: F405
def test_end_bpf_drop_on_inner_header(kernel, objs):
    """End.BPF: BPF-to-BPF calls and bpf_skb_load_bytes: UDP inside dropped, TCP forwarded"""
    udp = udp6(src="fc00:a::200", dst=FINAL)
    tcp = IPv6(src="fc00:a::200", dst=FINAL, nh=6) / Raw(bytes(20))  # noqa: F405
    frames = [rx(sr_pkt(SID, [FINAL, SID], 1, nh=NH_IPV6, inner=udp)),
              rx(sr_pkt(SID, [FINAL, SID], 1, nh=NH_IPV6, inner=tcp))]
    run = kernel.run(bpf_config(objs, "misc", "drop_udp"), frames)
    run.assert_identical(silent=(0,))
    assert drops(run) == {"bpf_drop": 1}


@scenario(IDENTICAL)  # noqa: F405
def test_end_bpf_map_counter(kernel, objs):
    """End.BPF: maps kept across packets: a 2-entry hash counter per Tag drops the third Tag, counts the first again"""
    frames = [rx(sr_pkt(SID, [FINAL, SID], 1, tag=t)) for t in (5, 6, 7, 5, 6, 8)]
    run = kernel.run(bpf_config(objs, "maps", "count"), frames)
    run.assert_identical(silent=(2, 5))
    assert drops(run) == {"bpf_drop": 2}


@scenario(IDENTICAL)  # noqa: F405
def test_end_bpf_lpm_trie(kernel, objs):
    """End.BPF: an LPM trie the program fills; the value for the new destination lands in the Tag"""
    frames = [rx(sr_pkt(SID, [d, SID], 1)) for d in (FINAL, "fc00:2:0:1::5", SEG_C)]
    kernel.run(bpf_config(objs, "lpm", "lpm_tag"), frames).assert_identical()


def bpftool_maps(prog_name: str):
    """A probe for Harness.run: in the kernel router's namespace, the maps of the newest
    loaded program named `prog_name`, by map name, as `bpftool -j map dump` gives them:
    [(key bytes, value bytes), ...]."""
    def probe(ns: str) -> dict:
        def tool(*args):
            out = subprocess.run(["ip", "netns", "exec", ns, "bpftool", "-j", *args], check=True,
                                 capture_output=True, text=True).stdout
            return __import__("json").loads(out)
        progs = [p for p in tool("prog", "show") if p.get("name") == prog_name]
        assert progs, f"no program {prog_name} loaded in the kernel"
        newest = max(progs, key=lambda p: p["id"])
        maps = {}
        for mid in newest.get("map_ids", []):
            name = tool("map", "show", "id", str(mid))["name"]
            maps[name] = [(e["key"], e["value"]) for e in tool("map", "dump", "id", str(mid))]
        return maps
    return probe


@scenario(IDENTICAL)  # noqa: F405
def test_end_bpf_maps_read_as_bpftool_reads_the_kernels(kernel, objs):
    """End.BPF maps after the same frames: sr6's dump (`sr6 pcap --json` `bpf`, as `sr6 ctl bpf map dump --json`) equals bpftool's of the kernel's maps"""
    if not shutil.which("bpftool"):
        pytest.fail("bpftool not found: run scripts/setup.sh", pytrace=False)
    frames = [rx(sr_pkt(SID, [FINAL, SID], 1, tag=t)) for t in (5, 6, 7, 5, 6, 8, 5)]
    run = kernel.run(bpf_config(objs, "maps", "count"), frames, probe=bpftool_maps("do_count"))
    run.assert_identical(silent=(2, 5))
    theirs = run.kernel_probe
    ours = {m["name"]: [(e["key"], e["value"]) for e in m["entries"]]
            for rep in run.sr6_reports.values() for p in rep["bpf"] for m in p["maps"]}
    for name in ("pkts", "by_tag"):
        # A hash map's order is its implementation's: compared as sets.
        assert sorted(ours[name]) == sorted(theirs[name]), f"map {name}: sr6 {ours[name]} kernel {theirs[name]}"
    # Every packet counted in slot 2; Tags 5 (3 times) and 6 (twice) in the hash, 7 and 8 not (full).
    assert ours["pkts"][2][1][0] == "0x07" and len(ours["by_tag"]) == 2
