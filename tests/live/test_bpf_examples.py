"""The End.BPF examples of examples/bpf (README there), end to end in network namespaces:
built with examples/bpf/build.sh, run by `sr6 run` and, where the kernel can run the same
object, by the kernel as a peer.

- One-way delay (dm_encap.c, end_dm.c). h -- e -- r -- b: e is the head-end (`encap bpf
  in obj dm_encap.o` on the route to b's prefix), r has the End.DM SID fc00:f::d
  (End.BPF, end_dm.o); kernel -> sr6, sr6 -> sr6 and sr6 -> kernel. 1 packet in 4
  carries a DM TLV; r reports each probe's delay as an event (`sr6 ctl bpf events
  --json`, `bpftool map event_pipe`) and decapsulates every packet (End.DT6 through the
  action helper), so b gets the plain datagrams.
- Link aggregation (link_agg.c). a -- r ==(two paths: m1, m2)== b: r is sr6 (or, as the
  oracle, the kernel) with the End.BPF SID fc00:f::a, which sends each packet along path
  1 or 2 (End.T to table 101 or 102) by weighted round robin; the weights are in the map
  `weights`, changed live with `sr6 ctl bpf map update`. The paths' routers count what
  they forward.
- Multipath traceroute (end_oamp.c, sr6's extension helper). p -- r -- {x, y}: r is sr6
  with End.OAMP at fc00:f::3 and a route to fc00:d::/64 over two next hops (x and y); a
  probe to [fc00:f::3, fc00:d::1] comes back to p with an answer TLV listing exactly
  those next hops. The kernel refuses the object (unknown helper).
"""
from __future__ import annotations

import ipaddress
import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from livenet import Net

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "bpf"


@pytest.fixture(scope="module")
def objs(tmp_path_factory) -> Path:
    """The examples built by their own script."""
    out = tmp_path_factory.mktemp("bpfex") / "build"
    r = subprocess.run(["bash", str(EXAMPLES / "build.sh"), str(out)], capture_output=True, text=True)
    assert r.returncode == 0, f"build.sh failed:\n{r.stdout}\n{r.stderr}"
    for src in EXAMPLES.glob("*.c"):
        assert (out / f"{src.stem}.o").is_file(), f"build.sh made no {src.stem}.o:\n{r.stdout}"
    return out


def test_build_script_says_when_clang_is_missing(tmp_path):
    r = subprocess.run(["bash", str(EXAMPLES / "build.sh"), str(tmp_path / "out")], capture_output=True, text=True,
                       env={"PATH": "/usr/bin:/bin", "CLANG": "no-such-clang"})
    assert r.returncode == 1 and "clang not found" in r.stderr and "scripts/setup.sh" in r.stderr, r.stderr
    assert not (tmp_path / "out").exists(), "nothing built"


def events_proc(sr6, *args: str) -> subprocess.Popen:
    return subprocess.Popen([str(sr6.net.sr6_bin), "ctl", "--socket", str(sr6.sock), "bpf", "events", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def map_values(sr6, name: str) -> list[bytes]:
    """The values of map `name` (`sr6 ctl bpf map dump name NAME --json`), by key order."""
    recs = json.loads(sr6.ctl("bpf", "map", "dump", "name", name, "--json"))
    return [bytes(int(b, 16) for b in r["value"]) for r in recs]


# --- one-way delay ------------------------------------------------------------------------

DM_SID = "fc00:f::d"
H, B = "fc00:1::2", "fc00:3::2"


def dm_net(n: Net, objs: Path, head: str, tail: str):
    """h -- e (head-end: `head`) -- r (End.DM: `tail`) -- b; returns h, b, and r's `Sr6`
    or, for the kernel, its namespace."""
    h, e, r, b = n.ns("h"), n.ns("e"), n.ns("r"), n.ns("b")
    n.link(h, "h-e", e, "e-h")
    n.link(e, "e-r", r, "r-e")
    n.link(r, "r-b", b, "b-r")
    n.kernel(h, f"ip -6 addr add {H}/64 dev h-e\nip -6 route add default via fc00:1::1 dev h-e", forwarding=False)
    n.kernel(b, f"ip -6 addr add {B}/64 dev b-r\nip -6 route add default via fc00:3::1 dev b-r", forwarding=False)
    head_conf = ("ip -6 addr add fc00:1::1/64 dev e-h\nip -6 addr add fc00:2::1/64 dev e-r\n"
                 "ip sr tunsrc set fc00:2::1\n"
                 "ip -6 route add fc00:f::/64 via fc00:2::2 dev e-r\n"
                 f"ip -6 route add fc00:3::/64 encap bpf in obj {objs}/dm_encap.o sec dm_in via fc00:2::2 dev e-r\n")
    tail_conf = ("ip -6 addr add fc00:2::2/64 dev r-e\nip -6 addr add fc00:3::1/64 dev r-b\n"
                 "ip -6 route add fc00:1::/64 via fc00:2::1 dev r-e\n"
                 f"ip -6 route add {DM_SID}/128 encap seg6local action End.BPF endpoint obj {objs}/end_dm.o "
                 "sec end_dm dev r-e\n")
    if head == "kernel":
        n.kernel(e, head_conf)
    else:
        n.sr6(e, head_conf)
    if tail == "kernel":
        n.kernel(r, tail_conf)
        return h, b, r
    return h, b, n.sr6(r, tail_conf)


class KernelDm:
    """End.DM in the kernel of namespace `ns`: its events through `bpftool map event_pipe`,
    its `.bss` through `bpftool map dump` (the maps of the newest program do_end_dm)."""

    def __init__(self, ns: str):
        self.ns = ns
        prog = max((p for p in self.tool("prog", "show") if p.get("name") == "do_end_dm"), key=lambda p: p["id"])
        self.maps = {self.tool("map", "show", "id", str(m))["name"]: m for m in prog["map_ids"]}
        self.pipe = None

    def tool(self, *args: str):
        return json.loads(subprocess.run(["ip", "netns", "exec", self.ns, "bpftool", "-j", *args], check=True,
                                         capture_output=True, text=True).stdout)

    def start(self) -> None:
        self.pipe = subprocess.Popen(["ip", "netns", "exec", self.ns, "bpftool", "-j", "map", "event_pipe", "id",
                                      str(self.maps["events"])], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True)
        time.sleep(0.5)

    def stop(self) -> list[dict]:
        time.sleep(0.5)
        self.pipe.send_signal(signal.SIGINT)
        out, err = self.pipe.communicate(timeout=20)
        assert self.pipe.returncode == 0, err
        return json.loads(out) if out.strip() else []

    def bss(self) -> bytes:
        recs = self.tool("map", "dump", "id", str(self.maps[next(k for k in self.maps if k.endswith(".bss"))]))
        return bytes(int(x, 16) for x in recs[0]["value"])


@pytest.mark.parametrize("head,tail", [("kernel", "sr6"), ("sr6", "sr6"), ("sr6", "kernel")])
def test_one_way_delay(sr6_bin, tmp_path, objs, head, tail):
    with Net(sr6_bin, tmp_path, tag="d") as n:
        h, b, r = dm_net(n, objs, head, tail)
        k = KernelDm(r) if tail == "kernel" else None
        # Four pings through the monitored path (encapsulated 0..3: the first a probe, seq
        # 0) resolve the neighbours; their events are read and set aside.
        if k:
            k.start()
        assert n.ping(h, B, count=4), "ping h -> b through the head-end and End.DM"
        if k:
            warm = k.stop()
        else:
            p = events_proc(r, "name", "events", "--timeout", "1", "--json")
            warm = [json.loads(ln) for ln in p.communicate(timeout=30)[0].splitlines()]
        assert len(warm) == 1, warm
        # 200 datagrams: encapsulated 4..203, of which 4, 8, ..., 200 carry a DM TLV.
        if k:
            k.start()
        else:
            p = events_proc(r, "name", "events", "--count", "60", "--timeout", "8", "--json")
        res = n.udp(h, b, B, 200, rate=400)
        if k:
            recs = k.stop()
        else:
            out, err = p.communicate(timeout=60)
            assert p.returncode == 0, err
            recs = [json.loads(ln) for ln in out.splitlines()]
        assert res["unique"] == 200 and res["dups"] == 0, f"End.DM decapsulated every packet to b: {res}"
        assert all(r["type"] == 9 for r in recs), recs
        evs = []
        for rec in recs:
            d = bytes(rec["data"])
            assert len(d) == 60, d.hex()
            delay, tx, rx, seq = (int.from_bytes(d[i:i + w], "little") for i, w in ((0, 8), (8, 8), (16, 8), (24, 4)))
            evs.append((delay, tx, rx, seq, str(ipaddress.IPv6Address(d[28:44])), str(ipaddress.IPv6Address(d[44:60]))))
            if not k:
                assert rx == rec["timestamp"], "under sr6, bpf_ktime_get_ns is the packet's receive time"
        # The kernel's events come from one ring per CPU: in order within each.
        assert sorted(e[3] for e in evs) == list(range(1, 51)), f"1 in 4 of 200 packets measured: {evs}"
        for delay, tx, rx, _, src, dst in evs:
            assert (src, dst) == (H, B), "the flow measured: the inner packet's addresses"
            assert delay == rx - tx
            # Both ends read CLOCK_MONOTONIC on this host: a one-way delay over three veths
            # is positive and well under a second.
            assert 0 < delay < 500_000_000, f"delay {delay} ns"
        bss = k.bss() if k else map_values(r, ".bss")[0]
        decap, measured = int.from_bytes(bss[:8], "little"), int.from_bytes(bss[8:16], "little")
        assert (decap, measured) == (204, 51), "the program's counters: every packet decapsulated, 51 measured"


# --- link aggregation ---------------------------------------------------------------------

AGG_SID, DST = "fc00:f::a", "fc00:b::2"


def agg_net(n: Net, objs: Path, node: str):
    """a -- r -- {m1, m2} -- b; r (sr6 or the kernel) runs link_agg.o at fc00:f::a."""
    a, r, m1, m2, b = n.ns("a"), n.ns("r"), n.ns("m1"), n.ns("m2"), n.ns("b")
    n.link(a, "a-r", r, "r-a")
    n.link(r, "r-m1", m1, "m1-r")
    n.link(r, "r-m2", m2, "m2-r")
    n.link(m1, "m1-b", b, "b-m1")
    n.link(m2, "m2-b", b, "b-m2")
    n.kernel(a, "ip -6 addr add fc00:a::2/64 dev a-r\nip -6 route add default via fc00:a::1 dev a-r\n"
                f"ip -6 route add fc00:b::/64 encap seg6 mode inline segs {AGG_SID} via fc00:a::1 dev a-r",
             forwarding=False)
    for i, m in ((1, m1), (2, m2)):
        n.kernel(m, f"ip -6 addr add fc00:1{i}::2/64 dev m{i}-r\nip -6 addr add fc00:2{i}::1/64 dev m{i}-b\n"
                    f"ip -6 route add fc00:b::/64 via fc00:2{i}::2 dev m{i}-b\n"
                    "nft add table ip6 agg\n"
                    "nft add chain ip6 agg cnt { type filter hook forward priority 0 ; }\n"
                    f"nft add rule ip6 agg cnt ip6 daddr {DST} counter")
    n.kernel(b, f"ip -6 addr add {DST}/128 dev lo\nip -6 addr add fc00:21::2/64 dev b-m1\n"
                "ip -6 addr add fc00:22::2/64 dev b-m2\n"
                "sysctl -qw net.ipv6.conf.all.seg6_enabled=1 net.ipv6.conf.b-m1.seg6_enabled=1 "
                "net.ipv6.conf.b-m2.seg6_enabled=1", forwarding=False)
    conf = ("ip -6 addr add fc00:a::1/64 dev r-a\nip -6 addr add fc00:11::1/64 dev r-m1\n"
            "ip -6 addr add fc00:12::1/64 dev r-m2\n"
            "ip -6 route add default via fc00:11::2 dev r-m1 table 101\n"
            "ip -6 route add default via fc00:12::2 dev r-m2 table 102\n"
            f"ip -6 route add {AGG_SID}/128 encap seg6local action End.BPF endpoint obj {objs}/link_agg.o "
            "sec link_agg dev r-a\n")
    if node == "sr6":
        return a, b, (m1, m2), n.sr6(r, conf)
    before = max((m["id"] for m in bpftool_maps()), default=0)
    n.kernel(r, conf)
    ids = {m["name"]: m["id"] for m in bpftool_maps() if m["id"] > before and m["name"] in ("weights", "sent")}
    assert set(ids) == {"weights", "sent"}, f"the kernel's maps of link_agg.o: {ids}"
    return a, b, (m1, m2), ids


def bpftool_maps() -> list[dict]:
    return json.loads(subprocess.run(["bpftool", "-j", "map", "show"], capture_output=True, text=True,
                                     check=True).stdout)


def forwarded(m: str) -> int:
    """Packets to DST that router m forwarded (its nft counter)."""
    out = subprocess.run(["ip", "netns", "exec", m, "nft", "-j", "list", "table", "ip6", "agg"],
                         capture_output=True, text=True, check=True).stdout
    for item in json.loads(out)["nftables"]:
        for e in item.get("rule", {}).get("expr", []):
            if "counter" in e:
                return e["counter"]["packets"]
    raise AssertionError(f"no counter in {out}")


@pytest.mark.parametrize("node", ["sr6", "kernel"])
def test_link_aggregation(sr6_bin, tmp_path, objs, node):
    with Net(sr6_bin, tmp_path, tag="g") as n:
        a, b, (m1, m2), r = agg_net(n, objs, node)

        def set_weights(w1: int, w2: int) -> None:
            for key, w in ((0, w1), (1, w2)):
                v = [str(x) for x in w.to_bytes(4, "little")]
                if node == "sr6":
                    r.ctl("bpf", "map", "update", "name", "weights", "key", str(key), "0", "0", "0", "value", *v)
                else:
                    subprocess.run(["bpftool", "map", "update", "id", str(r["weights"]), "key", str(key), "0", "0",
                                    "0", "value", *v], check=True, capture_output=True)

        def sent() -> list[int]:
            if node == "sr6":
                vals = map_values(r, "sent")
            else:
                recs = json.loads(subprocess.run(["bpftool", "-j", "map", "dump", "id", str(r["sent"])],
                                                 capture_output=True, text=True, check=True).stdout)
                vals = [bytes(int(x, 16) for x in rec["value"]) for rec in recs]
            return [int.from_bytes(v, "little") for v in vals]

        def split(count: int, port: int) -> tuple[int, int]:
            c0, s0 = (forwarded(m1), forwarded(m2)), sent()
            res = n.udp(a, b, DST, count, rate=500, port=port)
            assert res["unique"] == count, f"every packet reached b over one path or the other: {res}"
            c1, s1 = (forwarded(m1), forwarded(m2)), sent()
            got = (c1[0] - c0[0], c1[1] - c0[1])
            assert got == (s1[0] - s0[0], s1[1] - s0[1]), "the program's `sent` map agrees with the paths' routers"
            return got

        # Loaded with both weights 0: 1 and 1. Warm-up (neighbours), then the splits.
        assert sum(split(8, 9001)) == 8
        assert split(200, 9002) == (100, 100)
        set_weights(3, 1)
        p1, p2 = split(200, 9003)
        assert abs(p1 - 150) <= 1 and p1 + p2 == 200, (p1, p2)
        assert split(200, 9004) == (150, 50), "3:1 exactly over whole rounds"
        set_weights(1, 4)
        p1, p2 = split(200, 9005)
        assert abs(p1 - 40) <= 3 and p1 + p2 == 200, (p1, p2)
        assert split(200, 9006) == (40, 160), "1:4 exactly over whole rounds"
        set_weights(1, 0)
        assert split(100, 9007) == (100, 0), "a path of weight 0 is not used"


# --- multipath traceroute -----------------------------------------------------------------

OAMP_SID, PROBER = "fc00:f::3", "fc00:e::2"

# Runs in the prober's namespace: sends one probe per target (UDP in an SRH [target, the
# End.OAMP SID]) and prints, one a line in hex, the IPv6 packets with an SRH that come
# back to the prober.
PROBE = r"""
import sys, time
from scapy.all import AsyncSniffer, IPv6, IPv6ExtHdrSegmentRouting, UDP, Raw, send
me, oamp, targets = sys.argv[1], sys.argv[2], sys.argv[3:]
s = AsyncSniffer(iface="p-r", store=True,
                 lfilter=lambda p: IPv6 in p and p[IPv6].dst == me and p[IPv6].nh == 43)
s.start()
time.sleep(0.5)
for t in targets:
    send(IPv6(src=me, dst=oamp) / IPv6ExtHdrSegmentRouting(addresses=[t, oamp], segleft=1)
         / UDP(sport=33434, dport=33434) / Raw(b"oamp probe"), verbose=False)
    time.sleep(0.3)
time.sleep(1.0)
s.stop()
for p in s.results:
    print(bytes(p[IPv6]).hex(), flush=True)
"""


def parse_answer(pkt: bytes) -> tuple[str, list[str], int, int]:
    """(the probe's target, the next hops listed, total, status) of an answer: IPv6 / SRH
    [prober] / IPv6 (prober -> target) / SRH [target, OAMP] + the answer TLV."""
    a6 = lambda b: str(ipaddress.IPv6Address(b))  # noqa: E731
    assert pkt[6] == 43 and a6(pkt[24:40]) == PROBER, pkt.hex()
    outer_srh = (pkt[41] + 1) * 8
    assert pkt[40] == 41 and pkt[43] == 0 and a6(pkt[48:64]) == PROBER, "End.B6.Encaps with the SRH [prober]"
    inner = pkt[40 + outer_srh:]
    assert a6(inner[8:24]) == PROBER and inner[6] == 43, inner.hex()
    target = a6(inner[24:40])
    srh = inner[40:40 + (inner[41] + 1) * 8]
    assert srh[3] == 0 and srh[4] == 1 and a6(srh[24:40]) == OAMP_SID, "the probe's SRH, its segment consumed"
    tlv = srh[8 + 32:]
    assert len(tlv) == 136 and tlv[0] == 125 and tlv[1] == 134, tlv.hex()
    count, total, status = tlv[2], tlv[3], tlv[4]
    hops = [a6(tlv[8 + 16 * i:24 + 16 * i]) for i in range(count)]
    assert tlv[8 + 16 * count:] == bytes(136 - 8 - 16 * count), "unused slots are zero"
    assert inner[40 + len(srh) + 8:] == b"oamp probe", "the probe's payload comes back"
    return target, hops, total, status


def test_oamp_multipath_traceroute(sr6_bin, tmp_path, objs):
    with Net(sr6_bin, tmp_path, tag="o") as n:
        p, r, x, y = n.ns("p"), n.ns("r"), n.ns("x"), n.ns("y")
        n.link(p, "p-r", r, "r-p")
        n.link(r, "r-x", x, "x-r")
        n.link(r, "r-y", y, "y-r")
        n.kernel(p, f"ip -6 addr add {PROBER}/64 dev p-r\nip -6 route add default via fc00:e::1 dev p-r",
                 forwarding=False)
        n.kernel(x, "ip -6 addr add fc00:31::2/64 dev x-r")
        n.kernel(y, "ip -6 addr add fc00:32::2/64 dev y-r")
        # The kernel refuses the object: it has no helper 0x7f53.
        k = subprocess.run(["ip", "-n", x, "-6", "route", "add", OAMP_SID + "/128", "encap", "seg6local", "action",
                            "End.BPF", "endpoint", "obj", str(objs / "end_oamp.o"), "sec", "end_oamp", "dev", "x-r"],
                           capture_output=True, text=True)
        assert k.returncode != 0 and "unknown#32595" in k.stderr, k.stderr
        sr6 = n.sr6(r, "ip -6 addr add fc00:e::1/64 dev r-p\nip -6 addr add fc00:31::1/64 dev r-x\n"
                       "ip -6 addr add fc00:32::1/64 dev r-y\n"
                       "ip -6 route add fc00:d::/64 nexthop via fc00:31::2 dev r-x nexthop via fc00:32::2 dev r-y\n"
                       "ip -6 route add fc00:c::/64 via fc00:32::2 dev r-y\n"
                       f"ip -6 route add {OAMP_SID}/128 encap seg6local action End.BPF endpoint obj "
                       f"{objs}/end_oamp.o sec end_oamp dev r-p\n")
        assert n.ping(p, "fc00:e::1", count=1), "p reaches r (neighbours)"
        targets = ["fc00:d::1", "fc00:c::7", "2001:db8::1", "fc00:e::1"]
        out = subprocess.run(["ip", "netns", "exec", p, sys.executable, "-c", PROBE, PROBER, OAMP_SID, *targets],
                             capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, out.stderr
        answers = {}
        for line in out.stdout.split():
            target, hops, total, status = parse_answer(bytes.fromhex(line))
            answers[target] = (hops, total, status)
        assert answers == {
            "fc00:d::1": (["fc00:31::2", "fc00:32::2"], 2, 0),  # the multipath route: both, in order
            "fc00:c::7": (["fc00:32::2"], 1, 0),                # one gateway
            "2001:db8::1": ([], 0, 2),                          # no route: ENOENT
            "fc00:e::1": ([], 0, 0),                            # a local address: no gateway
        }, answers
        assert len(out.stdout.split()) == 4, "one answer per probe"
        bss = map_values(sr6, ".bss")
        assert int.from_bytes(bss[0], "little") == 4
