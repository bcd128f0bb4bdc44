"""The SR-aware IDS/IPS (issue 28 item 4, docs/ids.md): Snort rules run on the inner
packet of SRv6 traffic (SR-Snort, thesis §4.4) and on plain packets.

The oracle is tshark, not Snort: Debian 12 packages neither snort nor suricata. Each
rule is translated into a Wireshark display filter over the fields tshark decodes
itself — the inner packet's addresses with the layer operator (`ipv6.src#2` of an
encapsulation, `ip.src` of IPv4 inside), the last segment of an inserted SRH as the
bytes of Segment List[0], `udp.srcport`, `tcp.dstport`, `udp.payload contains ..`,
`matches "(?i)..."` for nocase, slices `[offset:depth]`, a content `distance`/`within`
after another as one regular expression — and tshark says which frames match; sr6 (`sr6 pcap`) must alert on exactly those. The packets and rules are random
(the seed is printed; SR6_IDS_SEED replays one). Hand-written scapy cases cover IDS
vs IPS mode, `pass`, INPUT at a SID, malformed packets and malformed rules."""
import os
import random
import subprocess

import pytest

from sr6_oracle import (HOST_A, IP, SEG_B, SEG_C, TCP, UDP, IPv6, Raw, config, rx)
from scapy.layers.inet import ICMP
from scapy.layers.inet6 import ICMPv6EchoRequest, IPv6ExtHdrSegmentRouting
from scapy.utils import wrpcap

PAYLOAD_LEN = 24
V6 = ["fc00:a::1", "fc00:a::2", "fc00:b::1", "fc00:b:0:1::5", "fc00:2::7", "fc00:3::9"]
V6_DST = ["fc00:2::7", "fc00:3::9", "fc00:2::8"]    # routed: plain packets go out
V4 = ["10.1.0.1", "10.1.2.3", "10.2.0.5", "192.0.2.1"]
V6_NETS = ["fc00:a::/64", "fc00:b::/32", "fc00:2::/48", "fc00:3::9/128", "fc00::/16", "fc00:a::1"]
V4_NETS = ["10.1.0.0/16", "10.2.0.5/32", "10.0.0.0/8", "192.0.2.0/24", "10.1.2.3"]
PORTS = [1000, 5000, 7000, 7001, 9000, 40000]
SHAPES = ["plain", "encap6", "encap6_nosrh", "encap4", "insert"]


def srh(last, nh):
    return IPv6ExtHdrSegmentRouting(addresses=[last, SEG_B], segleft=1, nh=nh)


def l4(kind, v4, sport, dport, data):
    if kind == "udp":
        return UDP(sport=sport, dport=dport) / Raw(data)
    if kind == "tcp":
        return TCP(sport=sport, dport=dport, flags="PA", seq=1, ack=1) / Raw(data)
    return (ICMP(type=8, id=1, seq=1) if v4 else ICMPv6EchoRequest(id=1, seq=1)) / Raw(data)


def build(shape, kind, src, dst, sport, dport, data):
    """A frame of `shape` whose inspected packet is src -> dst."""
    if shape == "plain":
        return rx(IPv6(src=src, dst=dst, hlim=64) / l4(kind, False, sport, dport, data))
    if shape == "insert":
        nh = {"udp": 17, "tcp": 6, "icmp": 58}[kind]
        return rx(IPv6(src=src, dst=SEG_B, hlim=64) / srh(dst, nh) / l4(kind, False, sport, dport, data))
    outer = IPv6(src=HOST_A, dst=SEG_B, hlim=64)
    if shape == "encap4":
        inner = IP(src=src, dst=dst) / l4(kind, True, sport, dport, data)
        return rx(outer / srh(SEG_C, 4) / inner)
    inner = IPv6(src=src, dst=dst) / l4(kind, False, sport, dport, data)
    if shape == "encap6_nosrh":
        return rx(outer / inner)
    return rx(outer / srh(SEG_C, 41) / inner)


# ---------------------------------------------------------------------------------------
# Rules, and their translation into display filters
# ---------------------------------------------------------------------------------------

def rand_set(r, items):
    k = r.random()
    if k < 0.45:
        return "any", [], []
    pick = r.sample(items, r.randint(1, 3))
    if k < 0.6:
        return pick[0], [pick[0]], []
    if k < 0.7:
        return "!" + pick[0], [], [pick[0]]
    if k < 0.85:
        return "[" + ",".join(pick) + "]", pick, []
    if k < 0.92 and len(pick) > 1:
        return "[" + pick[0] + "," + ",".join("!" + p for p in pick[1:]) + "]", pick[:1], pick[1:]
    return "![" + ",".join(pick) + "]", [], pick


def rand_ports(r):
    k = r.random()
    if k < 0.5:
        return "any", [], []
    a, b = sorted(r.sample(PORTS, 2))
    forms = [(str(a), [(a, a)], []), (f"{a}:{b}", [(a, b)], []), (f"{a}:", [(a, 65535)], []),
             (f":{b}", [(0, b)], []), (f"!{a}", [], [(a, a)]), (f"[{a},{b}]", [(a, a), (b, b)], []),
             (f"[{a}:{b},!{a}]", [(a, b)], [(a, a)])]
    return r.choice(forms)


def rand_content(r):
    text = "".join(r.choice("abAB") for _ in range(r.randint(1, 3)))
    c = {"bytes": text.encode(), "neg": r.random() < 0.15, "nocase": r.random() < 0.3}
    written = f'"{text}"' if r.random() < 0.7 else '"|' + " ".join(f"{b:02x}" for b in text.encode()) + '|"'
    opts = f"content:{'!' if c['neg'] else ''}{written};" + (" nocase;" if c["nocase"] else "")
    if r.random() < 0.35:
        o = r.randint(0, 12)
        d = r.randint(len(text), PAYLOAD_LEN - o)
        c["offset"], c["depth"] = o, d
        opts += f" offset:{o}; depth:{d};"
    return c, opts


def content_opts(c):
    text = c["bytes"].decode()
    o = f"content:{'!' if c['neg'] else ''}\"{text}\";" + (" nocase;" if c["nocase"] else "")
    for k in ("offset", "depth", "distance", "within"):
        if k in c:
            o += f" {k}:{c[k]};"
    return o


def rand_rule(r, sid):
    proto = r.choice(["ip", "udp", "tcp", "icmp", "udp"])
    src = rand_set(r, V6_NETS + V4_NETS)
    dst = rand_set(r, V6_NETS + V4_NETS)
    sport = rand_ports(r) if proto in ("udp", "tcp") else ("any", [], [])
    dport = rand_ports(r) if proto in ("udp", "tcp") else ("any", [], [])
    bidir = r.random() < 0.2
    contents, opts = [], []
    for _ in range(r.choice([0, 1, 1, 1, 2, 2])):
        c, o = rand_content(r)
        contents.append(c)
        opts.append(o)
    if len(contents) == 2 and r.random() < 0.5:
        # The second content relative to the first (both positive, the second with no
        # offset/depth): distance, and within or not.
        c1, c2 = contents
        c1["neg"] = c2["neg"] = False
        c2.pop("offset", None), c2.pop("depth", None)
        c2["distance"] = r.randint(0, 4)
        if r.random() < 0.7:
            c2["within"] = r.randint(len(c2["bytes"]), len(c2["bytes"]) + 6)
        opts = [content_opts(c) for c in contents]
    text = (f"alert {proto} {src[0]} {sport[0]} {'<>' if bidir else '->'} {dst[0]} {dport[0]} "
            f"(msg:\"rule {sid}\"; {' '.join(opts)} sid:{sid};)")
    return {"text": text, "proto": proto, "src": src, "dst": dst, "sport": sport, "dport": dport,
            "bidir": bidir, "contents": contents, "sid": sid}


FALSE = "frame.number == 0"
TRUE = "frame"


def addr_fields(shape, v4):
    """The display-filter fields of the inspected source and destination."""
    if shape == "encap4":
        return "ip.src", "ip.dst"
    if shape in ("encap6", "encap6_nosrh"):
        return "ipv6.src#2", "ipv6.dst#2"
    if shape == "insert":
        return "ipv6.src", None        # the destination: Segment List[0]'s bytes
    return "ipv6.src", "ipv6.dst"


def net_filter(field, shape, net, v4_packet):
    is_v4 = ":" not in net
    if is_v4 != v4_packet:
        return FALSE
    if field is not None:
        return f"{field} == {net}"
    # Inserted SRH: Segment List[0] at 14 + 40 + 8 in the frame (byte-aligned prefixes).
    import ipaddress
    n = ipaddress.ip_network(net, strict=False)
    nbytes = n.prefixlen // 8
    assert n.prefixlen % 8 == 0
    hexb = ":".join(f"{b:02x}" for b in n.network_address.packed[:nbytes])
    return f"frame[62:{nbytes}] == {hexb}"


def set_filter(s, field, shape, v4):
    _, pos, neg = s
    parts = []
    if pos:
        parts.append("(" + " || ".join(net_filter(field, shape, n, v4) for n in pos) + ")")
    for n in neg:
        parts.append(f"!({net_filter(field, shape, n, v4)})")
    return " && ".join(parts) or TRUE


def port_filter(p, field):
    _, pos, neg = p
    rng = lambda a, b: f"({field} >= {a} && {field} <= {b})"  # noqa: E731
    parts = []
    if pos:
        parts.append("(" + " || ".join(rng(a, b) for a, b in pos) + ")")
    for a, b in neg:
        parts.append(f"!{rng(a, b)}")
    return " && ".join(parts) or TRUE


def content_filter(c, field):
    expr = field
    if "offset" in c:
        expr = f"{field}[{c['offset']}:{c['depth']}]"
    if c["nocase"]:
        f = f'{expr} matches "(?i){c["bytes"].decode()}"'
    else:
        f = f"{expr} contains " + ":".join(f"{b:02x}" for b in c["bytes"])
    return f"!({f})" if c["neg"] else f


def rule_filter(rule, shape, kind):
    """The rule's filter for frames of one shape and transport, or None: none match."""
    if rule["proto"] not in ("ip", kind):
        return None
    v4 = shape == "encap4"
    fs, fd = addr_fields(shape, v4)
    payload = {"udp": "udp.payload", "tcp": "tcp.payload", "icmp": "data.data"}[kind]

    def one(src, dst, sport, dport, fsrc, fdst):
        parts = [set_filter(src, fsrc, shape, v4), set_filter(dst, fdst, shape, v4)]
        if kind in ("udp", "tcp"):
            parts += [port_filter(sport, f"{kind}.srcport"), port_filter(dport, f"{kind}.dstport")]
        return "(" + " && ".join(parts) + ")"

    head = one(rule["src"], rule["dst"], rule["sport"], rule["dport"], fs, fd)
    if rule["bidir"]:
        head = f"({head} || {one(rule['dst'], rule['src'], rule['dport'], rule['sport'], fs, fd)})"
    cs = rule["contents"]
    if len(cs) == 2 and "distance" in cs[1]:
        body = [relative_filter(cs[0], cs[1], payload)]
    else:
        body = [content_filter(c, payload) for c in cs]
    return " && ".join([head] + body)


def relative_filter(a, b, field):
    """Content b `distance`/`within` after content a, as one regular expression: a at
    any place its offset/depth allow, then b in the window after it (PCRE backtracks
    over every place of a, as Snort retries a relative content)."""
    lit = lambda c: f"(?i:{c['bytes'].decode()})" if c["nocase"] else c["bytes"].decode()  # noqa: E731
    pre = ""
    if "offset" in a:
        pre = f"^(?s:.){{{a['offset']},{a['offset'] + a['depth'] - len(a['bytes'])}}}"
    d = b["distance"]
    gap = f"(?s:.){{{d},}}" if "within" not in b else f"(?s:.){{{d},{d + b['within'] - len(b['bytes'])}}}"
    return f'{field} matches "(?-i){pre}{lit(a)}{gap}{lit(b)}"'


def tshark_frames(pcap, flt):
    p = subprocess.run(["tshark", "-r", str(pcap), "-Y", flt, "-T", "fields", "-e", "frame.number"],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, f"tshark refused the filter:\n{flt}\n{p.stderr}"
    return {int(x) for x in p.stdout.split()}


def alerts_by_frame(res, times_us):
    """{sid: {frame number}} from sr6's alerts (frames told apart by timestamp)."""
    index = {t: i + 1 for i, t in enumerate(times_us)}
    out = {}
    for a in res.json["ids_alerts"]:
        out.setdefault(a["sid"], set()).add(index[a["time_ns"] // 1000])
    return out


def ids_config(tmp_path, rules, extra=""):
    path = tmp_path / "rules.txt"
    path.write_text(rules)
    return config(f"ip -6 route add fc00:f::1/128 encap seg6local action End dev eth0",
                  f"ids rules {path} {extra}".rstrip())


def test_random_rules_match_as_tshark_decides(run_sr6, tmp_path):
    seed = int(os.environ.get("SR6_IDS_SEED", random.randrange(1 << 30)))
    print(f"SR6_IDS_SEED={seed}")
    r = random.Random(seed)
    rules = [rand_rule(r, sid) for sid in range(1, 41)]
    frames, meta = [], []
    for _ in range(200):
        shape = r.choice(SHAPES)
        kind = r.choice(["udp", "tcp", "icmp", "udp"])
        v4 = shape == "encap4"
        src = r.choice(V4 if v4 else V6)
        dst = r.choice(V4 if v4 else (V6_DST if shape == "plain" else V6))
        data = bytes(r.choice(b"abAB.") for _ in range(PAYLOAD_LEN))
        frames.append(build(shape, kind, src, dst, r.choice(PORTS), r.choice(PORTS), data))
        meta.append((shape, kind))
    times = [(i + 1) * 10 for i in range(len(frames))]
    cfg = ids_config(tmp_path, "\n".join(x["text"] for x in rules) + "\n", "on input,forward")
    res = run_sr6(cfg, frames, tshark=False, times_us=times)
    pcap = tmp_path / "oracle.pcap"
    wrpcap(str(pcap), frames)
    got = alerts_by_frame(res, times)
    groups = {}
    for i, m in enumerate(meta):
        groups.setdefault(m, []).append(i + 1)
    assert res.json["ids"]["inspected"] == len(frames), res.json["drops"]
    # Not vacuous: many rules fire, and the oracle must agree on each.
    assert len(got) >= 10, f"seed {seed}: only {len(got)} rules alerted"
    for rule in rules:
        parts = []
        for (shape, kind), nums in groups.items():
            f = rule_filter(rule, shape, kind)
            if f is not None:
                parts.append(f"(frame.number in {{{','.join(map(str, nums))}}} && {f})")
        want = tshark_frames(pcap, " || ".join(parts)) if parts else set()
        assert got.get(rule["sid"], set()) == want, (
            f"seed {seed}, rule {rule['text']}\nsr6 alerted on {sorted(got.get(rule['sid'], set()))}\n"
            f"tshark matched {sorted(want)}\nframes: {[(n, meta[n - 1]) for n in sorted(want ^ got.get(rule['sid'], set()))]}")


# ---------------------------------------------------------------------------------------
# Hand-written cases
# ---------------------------------------------------------------------------------------

EVIL = b"GET /etc/passwd HTTP/1.0"
RULES = """\
# one rule of each action
drop tcp any any -> fc00:b::/64 80 (msg:"passwd"; content:"/etc/passwd"; sid:10; rev:2;)
alert tcp any any -> any 80 (msg:"http get"; content:"get "; nocase; depth:4; sid:11;)
pass tcp fc00:a::7 any -> any any (msg:"trusted"; sid:12;)
"""


def web(src="fc00:a::1", data=EVIL):
    inner = IPv6(src=src, dst="fc00:b::2") / TCP(sport=40000, dport=80, flags="PA") / Raw(data)
    return rx(IPv6(src=HOST_A, dst=SEG_B, hlim=64) / srh(SEG_C, 41) / inner)


def test_ids_mode_alerts_and_forwards(run_sr6, tmp_path):
    res = run_sr6(ids_config(tmp_path, RULES, "mode ids on forward"), [web()], times_us=[10])
    assert sorted((a["sid"], a["action"]) for a in res.json["ids_alerts"]) == [(10, "alert"), (11, "alert")]
    a = next(a for a in res.json["ids_alerts"] if a["sid"] == 10)
    assert (a["src"], a["dst"], a["sport"], a["dport"], a["proto"]) == ("fc00:a::1", "fc00:b::2", 40000, 80, 6)
    assert (a["outer_src"], a["outer_dst"], a["active_sid"], a["rev"], a["msg"]) == (
        HOST_A, SEG_B, SEG_B, 2, "passwd")
    assert a["point"] == "forward"
    assert res.json["tx"]["eth1"] == 1 and "ids_drop" not in res.json["drops"]


def test_ips_mode_drops(run_sr6, tmp_path):
    res = run_sr6(ids_config(tmp_path, RULES, "mode ips on forward"),
                  [web(), web(data=b"GET /index.html")], times_us=[10, 20])
    assert sorted((a["sid"], a["action"], a["time_ns"]) for a in res.json["ids_alerts"]) == [
        (10, "drop", 10_000), (11, "alert", 10_000), (11, "alert", 20_000)]
    assert res.json["drops"] == {"ids_drop": 1}
    assert res.json["tx"]["eth1"] == 1
    ids = res.json["ids"]
    assert (ids["inspected"], ids["alerts"], ids["dropped"], ids["mode"]) == (2, 3, 1, "ips")


def test_pass_stops_inspection(run_sr6, tmp_path):
    res = run_sr6(ids_config(tmp_path, RULES, "mode ips on forward"), [web(src="fc00:a::7")], times_us=[10])
    assert res.json["ids_alerts"] == [] and res.json["drops"] == {}
    assert res.json["ids"]["passed"] == 1


def test_input_at_a_sid_sees_the_inner_packet(run_sr6, tmp_path):
    inner = IPv6(src="fc00:a::1", dst="fc00:b::2") / UDP(sport=1000, dport=7000) / Raw(b"xxABCxx")
    pkt = rx(IPv6(src=HOST_A, dst="fc00:f::1", hlim=64) /
             IPv6ExtHdrSegmentRouting(addresses=[SEG_C, "fc00:f::1"], segleft=1, nh=41) / inner)
    rules = 'alert udp any any -> fc00:b::2 7000 (msg:"abc"; content:"ABC"; sid:1;)\n'
    res = run_sr6(ids_config(tmp_path, rules), [pkt], times_us=[10])
    [a] = res.json["ids_alerts"]
    assert (a["point"], a["active_sid"], a["dst"]) == ("input", "fc00:f::1", "fc00:b::2")
    # Only at FORWARD: the same packet to the SID is not inspected.
    res = run_sr6(ids_config(tmp_path, rules, "on forward"), [pkt], times_us=[10])
    assert res.json["ids_alerts"] == [] and res.json["ids"]["inspected"] == 0


def test_malformed_packets_are_counted(run_sr6, tmp_path):
    cut = rx(IPv6(src=HOST_A, dst=SEG_B, hlim=64, nh=41) / Raw(b"\x60\x00\x00"))
    bad4 = rx(IPv6(src=HOST_A, dst=SEG_B, hlim=64) / srh(SEG_C, 4) / Raw(b"\x45\x00\x00\xff" + bytes(16)))
    res = run_sr6(ids_config(tmp_path, "alert ip any any -> any any (sid:1;)\n", "on forward"), [cut, bad4],
                  tshark=False)
    assert res.json["ids"]["malformed"] == 2 and res.json["ids_alerts"] == []


@pytest.mark.parametrize("rules,where,what", [
    ("alert ip any any -> any any (sid:1;)\nalert ip any any -> any any (sid:2; foo:1;)\n", "2:37",
     "unknown option `foo`"),
    ("alert udp any 1:x -> any any (sid:1;)\n", "1:15", "`1:x`"),
    ("alert tcp any any -> any any (content:\"|4g|\"; sid:1;)\n", "1:42", "`g` in hex bytes"),
    ("alert tcp any any -> any any (msg:\"x\";)\n", "1:1", "no `sid`"),
])
def test_malformed_rules_are_refused(sr6_cli, tmp_path, rules, where, what):
    path = tmp_path / "bad.rules"
    path.write_text(rules)
    r = sr6_cli(config(f"ids rules {path}"), [rx(IPv6(src=HOST_A, dst=SEG_B) / UDP())])
    assert r.returncode != 0
    assert f"{path}:{where}: " in r.stderr and what in r.stderr, r.stderr
