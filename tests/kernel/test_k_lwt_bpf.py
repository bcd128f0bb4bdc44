"""LWT BPF programs on routes (`encap bpf in|out|xmit obj F.o sec S`) against the kernel's.

The programs of crates/bpf/tests/progs/lwt_in.c and lwt_xmit.c are compiled once with
clang (`-O2 -g -target bpf`, the `objs` fixture of test_k_end_bpf.py). Each scenario's
configuration, with its `ip -6 route add PREFIX encap bpf ... via NH dev DEV` line, goes
unchanged to a kernel router in a namespace (iproute2 loads the object, the kernel runs
it: net/core/lwt_bpf.c) and to `sr6 pcap` (sr6 loads the same object); the same frames go
in, and what each emits per device must be the same bytes
(kharness.Run.assert_identical). Frames both drop are listed in `silent=`, and sr6's
drop reasons checked.
"""
from __future__ import annotations

from pathlib import Path

from kcommon import *  # noqa: F403
from kcommon import FINAL, HOST_A, TUNSRC, config, rx, udp6, udp4, IPv6, IP, ICMPv6EchoRequest, Raw
from test_k_end_bpf import drops, objs  # noqa: F401 (the compiled programs, a session fixture)

PFX = "fc00:9::/64"
DST = "fc00:9::5"
PFX4 = "10.9.0.0/16"
DST4 = "10.9.0.5"


def lwt_config(objs: Path, hooks: str, via: str = "via fc00:12::2 dev eth1", pfx: str = PFX, ip: str = "ip -6") -> str:
    """The base topology, `ip sr tunsrc`, and one route with `encap bpf HOOKS`, where
    HOOKS names the objects by file stem (`in lwt_in:in_encap` -> `in obj DIR/lwt_in.o
    sec in_encap`)."""
    words = []
    for w in hooks.split():
        if ":" in w:
            f, s = w.split(":")
            w = f"obj {objs / (f + '.o')} sec {s}"
        words.append(w)
    return config(f"ip sr tunsrc set {TUNSRC}", f"{ip} route add {pfx} encap bpf {' '.join(words)} {via}")


def frames6(hlims=(64, 9)):
    """UDP and ICMPv6 Echo to the LWT prefix from A, at each hop limit."""
    out = []
    for h in hlims:
        out.append(rx(udp6(dst=DST, hlim=h, tc=0x10, fl=0x12345)))
        out.append(rx(IPv6(src=HOST_A, dst=DST, hlim=h) / ICMPv6EchoRequest(id=7, seq=h, data=b"lwt-bpf!")))
    return out


@scenario(IDENTICAL)  # noqa: F405
def test_lwt_in_seg6_encap(kernel, objs):
    """encap bpf in: bpf_lwt_push_encap SEG6 pushes an outer IPv6 header + SRH (source: ip sr tunsrc), forwarded on the route of the new destination"""
    kernel.run(lwt_config(objs, "in lwt_in:in_encap"), frames6()).assert_identical()


@scenario(IDENTICAL)  # noqa: F405
def test_lwt_in_seg6_inline(kernel, objs):
    """encap bpf in: bpf_lwt_push_encap SEG6_INLINE inserts the SRH (segment 0: the old destination), forwarded toward the new one"""
    kernel.run(lwt_config(objs, "in lwt_in:in_inline"), frames6()).assert_identical()


@scenario(IDENTICAL)  # noqa: F405
def test_lwt_in_invalid_srh_refused(kernel, objs):
    """encap bpf in: an SRH with Segments Left above Last Entry is refused by the helper (seg6_validate_srh); the packet goes on along its route"""
    kernel.run(lwt_config(objs, "in lwt_in:in_bad_srh"), frames6()).assert_identical()


@scenario(IDENTICAL)  # noqa: F405
def test_lwt_in_ip_encap_reroute(kernel, objs):
    """encap bpf in: an IPv6 header pushed (BPF_LWT_ENCAP_IP), BPF_LWT_REROUTE: routed again as received, the outer hop limit decremented"""
    kernel.run(lwt_config(objs, "in lwt_in:in_ip6"), frames6()).assert_identical()


@scenario(IDENTICAL)  # noqa: F405
def test_lwt_in_drop(kernel, objs):
    """encap bpf in: UDP dropped (BPF_DROP, lwt_bpf_drop), ICMPv6 forwarded; hop limit 1 answered with Time Exceeded after the program"""
    run = kernel.run(lwt_config(objs, "in lwt_in:drop_udp"), frames6(hlims=(64, 1)))
    run.assert_identical(silent=(0, 2))
    assert drops(run) == {"lwt_bpf_drop": 2, "hop_limit": 1}


@scenario(IDENTICAL)  # noqa: F405
def test_lwt_xmit_ip6_reroute(kernel, objs):
    """encap bpf xmit: an IPv6 header pushed after the forwarding step, BPF_LWT_REROUTE: sent by the route of the new destination (no second decrement)"""
    kernel.run(lwt_config(objs, "xmit lwt_xmit:xmit_ip6"), frames6()).assert_identical()


@scenario(IDENTICAL)  # noqa: F405
def test_lwt_xmit_ip6_ok(kernel, objs):
    """encap bpf xmit: an IPv6 header pushed, BPF_OK: sent to the route's own next hop; headroom accepted"""
    kernel.run(lwt_config(objs, "xmit lwt_xmit:xmit_ip6_ok headroom 40"), frames6()).assert_identical()


@scenario(IDENTICAL)  # noqa: F405
def test_lwt_xmit_ip4_reroute(kernel, objs):
    """encap bpf xmit on an IPv4 route: an IPv4 header pushed with checksum 0 (filled in), BPF_LWT_REROUTE"""
    frames = [rx(udp4(dst=DST4, ttl=t)) for t in (64, 5)]
    cfg = lwt_config(objs, "xmit lwt_xmit:xmit_ip4", via="via 10.0.12.2 dev eth1", pfx=PFX4, ip="ip")
    kernel.run(cfg, frames).assert_identical()


@scenario(IDENTICAL)  # noqa: F405
def test_lwt_out_and_xmit_drop(kernel, objs):
    """encap bpf out / xmit: UDP dropped after the forwarding step (lwt_bpf_drop), ICMPv6 forwarded"""
    for hook in ("out", "xmit"):
        run = kernel.run(lwt_config(objs, f"{hook} lwt_xmit:drop_udp"), frames6())
        run.assert_identical(silent=(0, 2))
        assert drops(run) == {"lwt_bpf_drop": 2}, hook


@scenario(IDENTICAL)  # noqa: F405
def test_lwt_in_and_xmit(kernel, objs):
    """encap bpf in + xmit on one route: the in program drops UDP, the xmit program encapsulates the rest"""
    run = kernel.run(lwt_config(objs, "in lwt_in:drop_udp xmit lwt_xmit:xmit_ip6"), frames6())
    run.assert_identical(silent=(0, 2))
    assert drops(run) == {"lwt_bpf_drop": 2}
