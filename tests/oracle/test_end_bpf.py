"""End.BPF (docs/bpf.md; Linux's seg6local End.BPF): what the router does with a program,
expected packets built with scapy from RFC 8754 §4.3.1.1 (the segment consumed before the
program runs: Segments Left - 1, the destination that segment, hop limit - 1 when
forwarded) and from what each test program's C source says it writes; and the
configuration line's load errors, at their line and column.

The C programs are those of crates/bpf/tests/progs, compiled with clang (`-O2 -g -target
bpf`); the kernel comparison of the same programs is tests/kernel/test_k_end_bpf.py.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from sr6_oracle import (
    HOST_A, IPv6ExtHdrSegmentRoutingTLV, IPv6ExtHdrSegmentRoutingTLVPadN, config, rx, sr_pkt, tx,
)

ROOT = Path(__file__).resolve().parents[2]
PROGS = ROOT / "crates/bpf/tests/progs"
SID = "fc00:f::1"
FINAL = "fc00:2::99"
SEG_C = "fc00:3::5"


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


def line(endpoint: str) -> str:
    return f"ip -6 route add {SID}/128 encap seg6local action End.BPF {endpoint} dev eth0"


def ended(segs, sl, hlim=64, **kw):
    """RFC 8754 §4.3.1.1 on sr_pkt(SID, segs, sl): the packet forwarded out of eth1."""
    return tx(sr_pkt(segs[sl - 1], segs, sl - 1, hlim=hlim - 1, **kw), "eth1")


# --- the packet side ----------------------------------------------------------------------


def test_end_in_ebpf_is_end(run_sr6, objs):
    frames = [rx(sr_pkt(SID, [FINAL, SID], 1)), rx(sr_pkt(SID, [FINAL, SEG_C, SID, HOST_A], 2, hlim=9))]
    res = run_sr6(config(line(f"endpoint obj {objs / 'end.o'} sec end")), frames)
    res.expect(eth1=[ended([FINAL, SID], 1)], eth2=[tx(sr_pkt(SEG_C, [FINAL, SEG_C, SID, HOST_A], 1, hlim=8), "eth2")])


def test_tag_incremented_and_flags_set(run_sr6, objs):
    """tag.c: Tag + 1 (network order) and Flags 0x20, through bpf_lwt_seg6_store_bytes."""
    frames = [rx(sr_pkt(SID, [FINAL, SID], 1, tag=0x1234)), rx(sr_pkt(SID, [FINAL, SID], 1, tag=0xffff))]
    res = run_sr6(config(line(f"endpoint obj {objs / 'tag.o'} sec tag_inc")), frames)
    res.expect(eth1=[ended([FINAL, SID], 1, tag=0x1235, flags=0x20), ended([FINAL, SID], 1, tag=0, flags=0x20)])


def test_tlv_added_at_the_end_of_the_srh(run_sr6, objs):
    """tlv.c add_tlv: 8 bytes (type 0x7e, length 6, value 1..6) after the existing TLVs."""
    pad = IPv6ExtHdrSegmentRoutingTLVPadN(len=6, padding=b"\0" * 6)
    tlv = IPv6ExtHdrSegmentRoutingTLV(type=0x7E, len=6, value=bytes([1, 2, 3, 4, 5, 6]))
    frames = [rx(sr_pkt(SID, [FINAL, SID], 1)), rx(sr_pkt(SID, [FINAL, SID], 1, tlvs=[pad]))]
    res = run_sr6(config(line(f"endpoint obj {objs / 'tlv.o'} sec add_tlv")), frames)
    res.expect(eth1=[ended([FINAL, SID], 1, tlvs=[tlv]), ended([FINAL, SID], 1, tlvs=[pad, tlv])])


def test_drops_are_counted_with_their_reason(run_sr6, objs):
    """docs/bpf.md "Drops": no SRH to consume, an SRH left invalid, BPF_DROP, an aborted
    program (an out-of-bounds read the kernel's verifier would have refused at load)."""
    f = rx(sr_pkt(SID, [FINAL, SID], 1))
    cases = [
        (f"obj {objs / 'end.o'} sec end", [rx(sr_pkt(SID, [SID, HOST_A], 0))], "bpf_invalid_srh"),
        (f"obj {objs / 'tlv.o'} sec grow_4", [f], "bpf_invalid_srh"),
        (f"obj {objs / 'tlv.o'} sec write_segment", [f], "bpf_drop"),
        (f"obj {objs / 'misc.o'} sec oob_read", [f], "bpf_error"),
        (f"obj {objs / 'action.o'} sec redirect_alone", [f], "bpf_error"),
    ]
    for endpoint, frames, reason in cases:
        res = run_sr6(config(line(f"endpoint {endpoint}")), frames)
        res.expect_nothing()
        assert res.json["drops"] == {reason: 1}, (endpoint, res.json["drops"])


def test_maps_live_across_packets(run_sr6, objs):
    """maps.c: a 2-entry hash keyed by Tag; a third Tag cannot be added (BPF_DROP)."""
    frames = [rx(sr_pkt(SID, [FINAL, SID], 1, tag=t)) for t in (5, 6, 7, 5)]
    res = run_sr6(config(line(f"endpoint obj {objs / 'maps.o'} sec count")), frames)
    res.expect(eth1=[ended([FINAL, SID], 1, tag=t) for t in (5, 6, 5)])
    assert res.json["drops"] == {"bpf_drop": 1}


# --- the configuration line ---------------------------------------------------------------


def pos(r):
    m = re.search(rf"{re.escape(r.config_path.name)}:(\d+):(\d+): (.*)", r.stderr)
    assert m, r.stderr
    return int(m.group(1)), int(m.group(2)), m.group(3)


def refused_at(sr6_cli, endpoint: str, word: str, why: str):
    """The line is refused at the column of `word` (in the endpoint) with `why`."""
    text = config(line(endpoint))
    r = sr6_cli(text, [])
    assert r.returncode != 0, r.stderr
    ln, col, msg = pos(r)
    full = line(endpoint)
    assert ln == text.count("\n"), r.stderr
    assert col == full.index(f" {word} ", full.index("endpoint") - 1) + 2, r.stderr
    assert why in msg, r.stderr


def test_load_errors_point_at_the_object_or_the_section(sr6_cli, objs, tmp_path):
    not_elf = tmp_path / "not_elf.o"
    not_elf.write_bytes(b"not an object at all")
    x86 = tmp_path / "x86.o"
    subprocess.run(["clang", "-O2", "-c", "-x", "c", "-", "-o", str(x86)], input=b"int f(void){return 1;}",
                   check=True)
    refused_at(sr6_cli, f"endpoint obj {tmp_path / 'missing.o'} sec end", "obj", "cannot read")
    refused_at(sr6_cli, f"endpoint obj {not_elf} sec end", "obj", "not an ELF object")
    refused_at(sr6_cli, f"endpoint obj {x86} sec end", "obj", "not an eBPF object")
    refused_at(sr6_cli, f"endpoint obj {objs / 'end.o'} sec nosuch", "sec", 'no section "nosuch"')
    refused_at(sr6_cli, f"endpoint obj {objs / 'refused.o'} sec unknown", "sec", "unknown helper")
    refused_at(sr6_cli, f"endpoint obj {objs / 'refused.o'} sec pull", "sec", "bpf_skb_pull_data")
    refused_at(sr6_cli, f"endpoint obj {objs / 'refused.o'} sec push_encap", "sec", "lwt_seg6local")
    refused_at(sr6_cli, f"endpoint obj {objs / 'refused.o'} sec loop", "sec", "loop")
    # No `sec`: iproute2's default section, `prog`; the error is the object's.
    refused_at(sr6_cli, f"endpoint obj {objs / 'end.o'}", "obj", 'no section "prog"')
    refused_at(sr6_cli, "endpoint pinned /sys/fs/bpf/p", "pinned", "object files")
    refused_at(sr6_cli, "endpoint fd 3", "fd", "object files")
    refused_at(sr6_cli, f"endpoint obj {objs / 'end.o'} sec end program x", "program", "not supported")


def test_endpoint_is_required(sr6_cli):
    text = config(f"ip -6 route add {SID}/128 encap seg6local action End.BPF dev eth0")
    r = sr6_cli(text, [])
    assert r.returncode != 0 and "End.BPF requires endpoint" in r.stderr, r.stderr


def test_iproute2_abbreviations_are_accepted(run_sr6, objs):
    """`object-file` and `section` in full, `o`/`s` abbreviated, `verbose` after them."""
    f = rx(sr_pkt(SID, [FINAL, SID], 1))
    for endpoint in (f"object-file {objs / 'end.o'} section end", f"o {objs / 'end.o'} s end verbose"):
        res = run_sr6(config(line(f"endpoint {endpoint}")), [f])
        res.expect(eth1=[ended([FINAL, SID], 1)])


def test_relative_object_is_relative_to_the_config_file(sr6_bin, objs, tmp_path):
    """A relative FILE is looked for next to the configuration, not in the working directory."""
    conf_dir = tmp_path / "conf"
    conf_dir.mkdir()
    shutil.copy(objs / "end.o", conf_dir / "prog.o")
    cfg = conf_dir / "sr6.conf"
    cfg.write_text(config(line("endpoint obj prog.o sec end")))
    from sr6test import write_pcap

    inp = tmp_path / "in.pcap"
    write_pcap(inp, [rx(sr_pkt(SID, [FINAL, SID], 1))])
    cwd = tmp_path / "elsewhere"
    cwd.mkdir()
    p = subprocess.run([str(sr6_bin), "pcap", "--config", str(cfg), "--in", str(inp), "--out-dir",
                        str(tmp_path / "out"), "--json"], capture_output=True, text=True, cwd=cwd, timeout=60)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["dropped"] == 0
    assert (tmp_path / "out" / "eth1.pcap").exists()
