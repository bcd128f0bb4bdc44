"""`sr6 dump` against tshark's decoding of the same frames, and `sr6 bench` end to end.

The oracle for dump is tshark: for every frame of a capture that carries an SRH, the
Segments Left, Last Entry, flags, tag, segment list and HMAC key id that sr6 prints must
be those tshark decodes.
"""
import json
import re
import struct
import subprocess

import pytest
from scapy.all import UDP, Ether, IPv6, IPv6ExtHdrSegmentRouting, Raw, wrpcap

from sr6_oracle import SRHTLVHMAC

REPO_EXAMPLE = "examples/example.pcap"


def frames_with_srh():
    src, dst = "02:00:00:00:00:01", "02:00:00:00:00:02"
    out = []
    for i, segs in enumerate([["fc00::1"], ["fc00::3", "fc00::2", "fc00::1"], ["fc00:9::%x" % k for k in range(1, 7)]]):
        srh = IPv6ExtHdrSegmentRouting(addresses=segs, segleft=len(segs) - 1, lastentry=len(segs) - 1, tag=i * 7)
        out.append(Ether(src=src, dst=dst) / IPv6(src="fc00:a::1", dst=segs[-1]) / srh / UDP(sport=1, dport=2) / Raw(b"x" * 8))
    # One with an HMAC TLV (key id 7) and the 0x08 flag.
    segs = ["fc00::2", "fc00::1"]
    srh = IPv6ExtHdrSegmentRouting(addresses=segs, segleft=1, lastentry=1, nh=17, hmac=1)
    raw = bytes(srh)
    tlv = bytes(SRHTLVHMAC(keyid=7, hmac=b"\x11" * 32))
    hdr = bytearray(raw[: 8 + 32]) + tlv
    hdr[1] = len(hdr) // 8 - 1
    out.append(Ether(src=src, dst=dst) / IPv6(src="fc00:a::1", dst="fc00::1", nh=43) / Raw(bytes(hdr)) / UDP(sport=1, dport=2))
    return out


def tshark_srh(tshark, pcap):
    fields = ["frame.number", "ipv6.routing.segleft", "ipv6.routing.srh.last_entry", "ipv6.routing.srh.flags",
              "ipv6.routing.srh.tag", "ipv6.routing.srh.addr"]
    r = subprocess.run([tshark, "-r", str(pcap), "-T", "fields", "-E", "separator=|", "-E", "occurrence=a",
                        "-E", "aggregator=,"] + sum([["-e", f] for f in fields], []),
                       capture_output=True, text=True, check=True)
    rows = {}
    for line in r.stdout.splitlines():
        n, sl, le, flags, tag, addrs = line.split("|")
        if sl == "":
            continue
        num = lambda v: int(v.split(",")[0], 16 if v.startswith("0x") else 10)  # noqa: E731
        # tshark prints the tag as bare hex digits.
        rows[int(n)] = dict(sl=num(sl), le=num(le), flags=num(flags), tag=int(tag.split(",")[0], 16),
                            addrs=addrs.split(","))
    return rows


def test_dump_matches_tshark(sr6_bin, tshark_bin, tmp_path):
    tshark = tshark_bin
    pcap = tmp_path / "srh.pcap"
    wrpcap(str(pcap), frames_with_srh())
    out = subprocess.run([str(sr6_bin), "dump", str(pcap)], capture_output=True, text=True, check=True).stdout
    lines = out.strip().splitlines()
    want = tshark_srh(tshark, pcap)
    assert len(want) == 4 and len(lines) == 4
    for n, w in want.items():
        m = re.search(r"SRH\(sl (\d+) le (\d+) flags 0x([0-9a-f]+) tag (\d+) segs \[([^\]]*)\]", lines[n - 1])
        assert m, lines[n - 1]
        assert int(m.group(1)) == w["sl"] and int(m.group(2)) == w["le"], (lines[n - 1], w)
        assert int(m.group(3), 16) == w["flags"] and int(m.group(4)) == w["tag"], (lines[n - 1], w)
        assert [s.strip() for s in m.group(5).split(",")] == w["addrs"], (lines[n - 1], w)
    assert "HMAC key 7" in lines[3]


def test_dump_rejects_a_non_pcap(sr6_bin, tmp_path):
    bad = tmp_path / "bad.pcap"
    bad.write_bytes(b"not a capture")
    r = subprocess.run([str(sr6_bin), "dump", str(bad)], capture_output=True, text=True)
    assert r.returncode != 0 and "pcap" in r.stderr


def test_bench_processes_the_requested_packets(sr6_bin):
    r = subprocess.run([str(sr6_bin), "bench", "--config", "examples/example.conf", "--in", REPO_EXAMPLE,
                        "--packets", "5000", "--batch", "32", "--json"], capture_output=True, text=True, check=True)
    res = json.loads(r.stdout)
    assert res["packets"] == 5000
    # The example is 10 frames: 7 forwarded, 1 local, 2 answered with ICMP errors (sent too,
    # until the rate limiter's burst of 100 is spent: bench time stands still).
    assert res["local"] == 500
    # A packet answered by an ICMP error counts as dropped (its reason) and the error as tx.
    assert res["tx"] + res["local"] + res["dropped"] - res["icmp_sent"] == 5000
    assert res["icmp_sent"] == 100
    assert res["pps"] > 0 and res["ns_per_packet"] > 0


def test_bench_warmup_is_processed_and_not_counted(sr6_bin):
    """`--warmup` frames go through the tables before the replay; the counts are the
    replay's alone (the example's 10 frames, 5000 packets, as above)."""
    base = [str(sr6_bin), "bench", "--config", "examples/example.conf", "--in", REPO_EXAMPLE,
            "--packets", "5000", "--batch", "32", "--json"]
    warm = base + ["--warmup", REPO_EXAMPLE, "--warmup", "eth1=" + REPO_EXAMPLE]
    r = subprocess.run(warm, capture_output=True, text=True, check=True)
    res = json.loads(r.stdout)
    assert (res["packets"], res["local"], res["icmp_sent"]) == (5000, 500, 100)
    bad = subprocess.run(base + ["--warmup", "nosuchdev=" + REPO_EXAMPLE], capture_output=True, text=True)
    assert bad.returncode != 0
    assert "--warmup nosuchdev=" in bad.stderr and "devices: eth0" in bad.stderr, bad.stderr


def test_bench_rejects_batch_zero(sr6_bin):
    r = subprocess.run([str(sr6_bin), "bench", "--config", "examples/example.conf", "--in", REPO_EXAMPLE, "--batch", "0"],
                       capture_output=True, text=True)
    assert r.returncode != 0 and "--batch" in r.stderr


def test_captures_libpcap_reads_are_read(sr6_bin, tshark_bin, tmp_path):
    """What libpcap-based tools (here tshark) read, sr6 reads: a record whose microseconds
    scapy rounded up to 1,000,000 (sr6 carries them into the seconds: the time scapy was
    given) and a record shorter than its original length (a capture with a snap
    length)."""
    tshark = tshark_bin
    frames = frames_with_srh()[:3]
    times = [100.0, 100.9999996, 101.5]
    for f, t in zip(frames, times):
        f.time = t
    frames[2].wirelen = len(frames[2]) + 100
    pcap = tmp_path / "odd.pcap"
    wrpcap(str(pcap), frames)
    # The file really holds both oddities.
    data = pcap.read_bytes()
    off1 = 24 + 16 + len(frames[0])
    _, usec1, _, _ = struct.unpack("<IIII", data[off1:off1 + 16])
    assert usec1 == 1_000_000
    off2 = off1 + 16 + len(frames[1])
    _, _, incl2, orig2 = struct.unpack("<IIII", data[off2:off2 + 16])
    assert orig2 == incl2 + 100
    # tshark reads all three records.
    r = subprocess.run([tshark, "-r", str(pcap), "-T", "fields", "-e", "frame.number"],
                       capture_output=True, text=True, check=True)
    assert r.stdout.split() == ["1", "2", "3"], r.stderr
    out = subprocess.run([str(sr6_bin), "dump", str(pcap)], capture_output=True, text=True, check=True).stdout
    got = [float(line.split()[1]) for line in out.strip().splitlines()]
    assert got == [round(t - times[0], 6) for t in times], out
    r = subprocess.run([str(sr6_bin), "pcap", "--config", "examples/example.conf", "--in", str(pcap),
                        "--out-dir", str(tmp_path / "out"), "--json"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["packets_in"] == 3


def test_dump_names_icmp_messages(sr6_bin, tshark_bin, tmp_path):
    """ICMP messages are named, not only numbered: for ICMPv6 the type and code names
    are scapy's (the RFC 4443 wording), and the numbers printed with them are those
    tshark decodes; ICMPv4 numbers against tshark, and the RFC 792 names of the two
    errors a router sends most."""
    from scapy.all import ICMP, IP, ICMPv6DestUnreach, ICMPv6EchoRequest, ICMPv6ParamProblem, ICMPv6TimeExceeded
    from scapy.layers.inet6 import icmp6types

    eth = Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")
    quoted = IPv6(src="fc00:a::2", dst="fc00:b::2") / UDP(sport=1, dport=2)
    v6, expect = [], []
    for cls in (ICMPv6DestUnreach, ICMPv6TimeExceeded, ICMPv6ParamProblem):
        codes = cls.fields_desc[1].i2s
        for code, cname in sorted(codes.items()):
            v6.append(eth / IPv6(src="fc00:12::1", dst="fc00:a::2") / cls(code=code) / quoted)
            expect.append((icmp6types[cls().type], cname))
    v6.append(eth / IPv6(src="fc00:a::2", dst="fc00:b::2") / ICMPv6EchoRequest())
    expect.append((icmp6types[128], None))
    v4 = [eth / IP(src="10.0.0.1", dst="10.0.0.2") / ICMP(type=11, code=0) / IP(src="10.0.0.2", dst="10.9.9.9") / UDP(),
          eth / IP(src="10.0.0.1", dst="10.0.0.2") / ICMP(type=3, code=1) / IP(src="10.0.0.2", dst="10.9.9.9") / UDP()]
    pcap = tmp_path / "icmp.pcap"
    wrpcap(str(pcap), v6 + v4)
    out = subprocess.run([str(sr6_bin), "dump", str(pcap)], capture_output=True, text=True, check=True).stdout
    lines = out.strip().splitlines()
    assert len(lines) == len(v6) + len(v4)
    r = subprocess.run([tshark_bin, "-r", str(pcap), "-T", "fields", "-E", "separator=|", "-e", "icmpv6.type",
                        "-e", "icmpv6.code", "-e", "icmp.type", "-e", "icmp.code"],
                       capture_output=True, text=True, check=True)
    ts = [ln.split("|") for ln in r.stdout.strip().splitlines()]
    for i, line in enumerate(lines):
        low = line.lower()
        t6, c6, t4, c4 = (v.split(",")[0] for v in ts[i])
        t, c = (t6, c6) if t6 else (t4, c4)
        assert f"(type {t} code {c})" in line, (line, ts[i])
        if i < len(v6):
            tname, cname = expect[i]
            assert f"icmp6 {tname.lower()}" in low, (line, tname)
            if cname is not None:
                assert f": {cname.lower()} (" in low, (line, cname)
    assert "ICMP time exceeded: time to live exceeded in transit" in lines[len(v6)]
    assert "ICMP destination unreachable: host unreachable" in lines[len(v6) + 1]


def csid_view(addr: str, lblen: int, nflen: int) -> str:
    """RFC 9800 §4.1 read independently of sr6: the block, the C-SIDs up to the first zero
    one, and any bits left after the last whole C-SID."""
    import ipaddress
    a = int(ipaddress.IPv6Address(addr))
    block = a >> (128 - lblen) << (128 - lblen)
    out, at = [], lblen
    while at + nflen <= 128:
        v = (a >> (128 - at - nflen)) & ((1 << nflen) - 1)
        if v == 0:
            break
        out.append("%x" % v)
        at += nflen
    rest = a & ((1 << (128 - at)) - 1) if at < 128 else 0
    if rest:
        out.append("+%x" % rest)
    return "%s<%s/%d: %s>" % (addr, ipaddress.IPv6Address(block), lblen, " ".join(out))


def test_dump_shows_csid_containers(sr6_bin, tmp_path):
    """`--csid L,N` splits every address; `--config` only those in a NEXT-C-SID SID's block,
    with that SID's lengths (RFC 9800 §4.1)."""
    src, dst = "02:00:00:00:00:01", "02:00:00:00:00:02"
    containers = ["fc00:0:f00:b00:c00::", "fc00:0:f00::1", "fc00:0:f00:b00:c00:d00:e00:f00"]
    frames = [Ether(src=src, dst=dst) / IPv6(src="fc00:a::1", dst=d) / UDP(sport=1, dport=2) for d in containers]
    srh = IPv6ExtHdrSegmentRouting(addresses=["fc00:2::99", "fc62::ee02"], segleft=1, lastentry=1)
    frames.append(Ether(src=src, dst=dst) / IPv6(src="fc00:a::1", dst="fc62::ee02") / srh / UDP(sport=1, dport=2))
    pcap = tmp_path / "csid.pcap"
    wrpcap(str(pcap), frames)
    out = subprocess.run([str(sr6_bin), "dump", str(pcap), "--csid", "32,16"], capture_output=True, text=True,
                         check=True).stdout.splitlines()
    for line, d in zip(out, containers):
        assert "> %s hlim" % csid_view(d, 32, 16) in line, line
    conf = tmp_path / "r.conf"
    conf.write_text("ip link set eth0 up\n"
                    "ip -6 route add fc00:0:f00::/48 encap seg6local action End flavors next-csid dev eth0\n"
                    "ip -6 route add fc62::ee00/120 encap seg6local action End flavors next-csid lblen 112 "
                    "nflen 8 dev eth0\n")
    out = subprocess.run([str(sr6_bin), "dump", str(pcap), "--config", str(conf)], capture_output=True, text=True,
                         check=True).stdout.splitlines()
    for line, d in zip(out, containers):
        assert "> %s hlim" % csid_view(d, 32, 16) in line, line
    # Each address by its own block: fc62:: with 112/8, fc00:2::99 (no block) as it is.
    assert "> %s hlim" % csid_view("fc62::ee02", 112, 8) in out[3], out[3]
    assert "segs [fc00:2::99, %s]" % csid_view("fc62::ee02", 112, 8) in out[3], out[3]
    # A REPLACE-C-SID destination (RFC 9800 §4.2): block, the active C-SID, the index.
    rframe = Ether(src=src, dst=dst) / IPv6(src="fc00:a::1", dst="fc00:c:0:3:1::3") / UDP(sport=1, dport=2)
    rpcap = tmp_path / "replace.pcap"
    wrpcap(str(rpcap), [rframe])
    rconf = tmp_path / "replace.conf"
    rconf.write_text("ip link set eth0 up\n"
                     "ip -6 route add fc00:c:0:3:1::/80 encap seg6local action End flavors replace-csid "
                     "lblen 48 nflen 32 dev eth0\n")
    out = subprocess.run([str(sr6_bin), "dump", str(rpcap), "--config", str(rconf)], capture_output=True,
                         text=True, check=True).stdout
    assert "> %s hlim" % csid_view("fc00:c:0:3:1::3", 48, 32) in out, out
    assert "<fc00:c::/48: 30001 +3>" in out, out
    bad = subprocess.run([str(sr6_bin), "dump", str(pcap), "--csid", "12,16"], capture_output=True, text=True)
    assert bad.returncode != 0 and "multiple of 8" in bad.stderr, bad.stderr
