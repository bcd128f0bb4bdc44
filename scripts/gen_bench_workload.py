#!/usr/bin/env python3
"""Generates the sr6 benchmark workload into a directory (docs/performance.md).

    .venv/bin/python scripts/gen_bench_workload.py OUTDIR [--seed N] [--frames 64] [--mixed-roots]

Writes:
  OUTDIR/router.conf      a router with a 10,000-prefix FIB (5,000 IPv6 /48, 4,000 IPv6
                          /64, 700 IPv4 /24, 300 head-end /48 policies), 1,000 local
                          /128 SIDs (End, End.X, End.T, End.DX6, End.DX4, End.DT6,
                          End.DT4, End.DT46, End.B6.Encaps), a VRF table 100 (1,000 /48)
                          and table 200 (200 IPv4 /24), neighbours, tunsrc, an HMAC key;
                          NEXT-C-SID End and End.X SIDs (F3216, 100 each) and 200
                          routed C-SIDs of other nodes;
  OUTDIR/router-proxies.conf  router.conf and SR proxies (End.AD and End.AS on 4 function
                          links each, 100 End.AM on a fifth), for the proxies' workloads;
  OUTDIR/router-mobile.conf   router.conf and RFC 9433's GTP-U translations (100
                          H.M.GTP4.D UPF addresses, 100 End.M.GTP4.E SIDs) and the
                          GTP-U/SRv6 paper's baselines (100 GTP-U tunnels, 100 UPF
                          addresses decapsulating GTP-U, 100 IPv4 /24s into
                          H.Encaps.Red);
  OUTDIR/router-bpf.conf  router.conf and four End.BPF SIDs running the End.BPF paper's
                          functions (crates/bpf/tests/progs: End, Tag++, Add TLV, End.T
                          through bpf_lwt_seg6_action) from OUTDIR/bpf/*.o, which
                          scripts/callgrind.sh compiles with clang;
  OUTDIR/router-fwN.conf  router.conf and N ip6tables INPUT rules (N = 0, 10, 100,
                          1,000), none matching End's frames but the last, which
                          accepts them: the End+fwN workloads replay End.pcap on them;
  OUTDIR/router-fwN-basic.conf  the same rules in SERA's basic mode (ip6t_seg6=1),
                          the last accepting End's source (N = 10, 100, 1,000);
  OUTDIR/router-idsN.conf router.conf and an IPS (docs/ids.md) of N Snort rules,
                          OUTDIR/ids-N.rules (N = 10, 100, 1,000), none matching End's
                          frames: the End+idsN workloads replay End.pcap on them;
  OUTDIR/<behaviour>.pcap one capture per behaviour, FRAMES frames each, every frame
                          hitting a different SID / prefix of that behaviour;
  OUTDIR/workloads.tsv    name, pcap, ingress device, goal (instructions/packet or -),
                          warm-up (`DEV=PCAP` for sr6 bench --warmup, or -), config
                          file, one line per behaviour: what scripts/callgrind.sh iterates.

--mixed-roots adds one /40 under each /24 the FIBs use (main and table 100; a /24 is
one entry of the LPM's root), so that no /24 holds prefixes of a single length: every
lookup walks the LPM's trie instead of probing its hash table (lpm.rs), as in a FIB of
mixed prefix lengths. The /40s match
none of the frames' destinations, and the frames are the same either way.

Every frame must be transmitted by sr6 (none dropped, none local): scripts/callgrind.sh
checks the counters sr6 bench prints.

Deterministic for a given seed. Needs scapy (pip install scapy).
"""

import argparse
import hashlib
import hmac
import ipaddress
import os
import random
import struct
import sys

from scapy.all import Ether, IP, IPv6, UDP, Raw, wrpcap  # noqa: E402

HMAC_KEY_ID = 1
HMAC_SECRET = b"bench-hmac-secret"
PAYLOAD = bytes(range(18))  # UDP payload: an IPv6/UDP packet of 66 bytes

# Devices: eth0 receives, eth1 is the SR uplink, eth2 the decapsulation side, eth3 a
# third uplink; hm0 receives with seg6_require_hmac=1.
DEVICES = ["eth0", "eth1", "eth2", "eth3", "hm0"]


def mac(i):
    return "02:00:00:00:00:%02x" % (i + 1)


def a6(n):
    return str(ipaddress.IPv6Address(n))


def a4(n):
    return str(ipaddress.IPv4Address(n))


class Workload:
    def __init__(self, seed):
        self.r = random.Random(seed)
        self.lines = []
        # Neighbours per egress device: (device, IPv6 next hops, IPv4 next hops).
        self.nh6 = {
            "eth1": ["fc00:2::%x" % i for i in range(2, 10)],
            "eth2": ["fc00:3::%x" % i for i in range(2, 10)],
            "eth3": ["fc00:4::%x" % i for i in range(2, 10)],
        }
        self.nh4 = {
            "eth1": ["10.0.2.%d" % i for i in range(2, 10)],
            "eth2": ["10.0.3.%d" % i for i in range(2, 10)],
        }
        self.p48 = []  # main-table IPv6 /48 (int network)
        self.p64 = []
        self.p24 = []  # main-table IPv4 /24 (int network)
        self.t100 = []  # table 100 /48s
        self.t200 = []  # table 200 /24s
        self.sids = {}  # behaviour -> list of SID ints
        self.heads = {}  # mode -> list of /48 ints

    def out(self, s):
        self.lines.append(s)

    def uniq(self, gen, n, taken):
        res = []
        while len(res) < n:
            v = gen()
            if v not in taken:
                taken.add(v)
                res.append(v)
        return res

    def any_nh6(self):
        d = self.r.choice(["eth1", "eth2", "eth3"])
        return d, self.r.choice(self.nh6[d])

    def build_config(self):
        r = self.r
        o = self.out
        o("# sr6 benchmark router, generated by scripts/gen_bench_workload.py")
        o("sysctl -w net.ipv6.conf.all.forwarding=1")
        o("sysctl -w net.ipv4.ip_forward=1")
        o("sysctl -w net.ipv6.conf.all.seg6_enabled=1")
        for d in DEVICES:
            o("sysctl -w net.ipv6.conf.%s.seg6_enabled=1" % d)
        o("sysctl -w net.ipv6.conf.hm0.seg6_require_hmac=1")
        for i, d in enumerate(DEVICES):
            o("ip link set dev %s address %s up" % (d, mac(i)))
        o("ip -6 addr add fc00:1::1/64 dev eth0")
        o("ip -6 addr add fc00:2::1/64 dev eth1")
        o("ip -6 addr add fc00:3::1/64 dev eth2")
        o("ip -6 addr add fc00:4::1/64 dev eth3")
        o("ip -6 addr add fc00:9::1/64 dev hm0")
        o("ip addr add 10.0.1.1/24 dev eth0")
        o("ip addr add 10.0.2.1/24 dev eth1")
        o("ip addr add 10.0.3.1/24 dev eth2")
        o("ip -6 neigh add fc00:1::2 lladdr 02:00:00:01:00:02 dev eth0")
        for di, (d, hs) in enumerate(self.nh6.items()):
            for hi, h in enumerate(hs):
                o("ip -6 neigh add %s lladdr 02:00:00:%02x:%02x:%02x dev %s" % (h, di + 2, 6, hi + 2, d))
        for di, (d, hs) in enumerate(self.nh4.items()):
            for hi, h in enumerate(hs):
                o("ip neigh add %s lladdr 02:00:00:%02x:%02x:%02x dev %s" % (h, di + 2, 4, hi + 2, d))
        o("ip sr tunsrc set fc00:1::1")
        o("ip sr hmac set %d sha256 %s" % (HMAC_KEY_ID, HMAC_SECRET.decode()))

        # --- the FIB: 10,000 prefixes -------------------------------------------------
        o("ip -6 route add default via fc00:1::2 dev eth0")
        taken = set()
        # 5,000 /48s spread over 16 /16s (2a00::/16 .. 2a0f::/16), random below.
        self.p48 = self.uniq(lambda: (0x2A00 + r.randrange(16)) << 112 | r.getrandbits(32) << 80, 5000, taken)
        # 4,000 /64s: 500 sites (/48) of 8 subnets each, under 2a10::/16.
        sites = self.uniq(lambda: 0x2A10 << 112 | r.getrandbits(32) << 80, 500, taken)
        for s in sites:
            for sub in r.sample(range(65536), 8):
                self.p64.append(s | sub << 64)
        # 700 IPv4 /24s in 20.0.0.0/8 .. 29.0.0.0/8.
        t4 = set()
        self.p24 = self.uniq(lambda: (20 + r.randrange(10)) << 24 | r.getrandbits(16) << 8, 700, t4)
        for p in self.p48:
            d, h = self.any_nh6()
            o("ip -6 route add %s/48 via %s dev %s" % (a6(p), h, d))
        for p in self.p64:
            d, h = self.any_nh6()
            o("ip -6 route add %s/64 via %s dev %s" % (a6(p), h, d))
        for p in self.p24:
            d = r.choice(["eth1", "eth2"])
            o("ip route add %s/24 via %s dev %s" % (a4(p), r.choice(self.nh4[d]), d))
        # 300 head-end /48s under fd00::/16: H.Encaps, H.Encaps.Red (2 SIDs), H.Insert (2 SIDs).
        for k, mode in enumerate(["encap", "encap.red", "inline"]):
            self.heads[mode] = [(0xFD00 << 112) | (k + 1) << 96 | (i + 1) << 80 for i in range(100)]
            for p in self.heads[mode]:
                s1, s2 = self.host48(), self.host48()
                o("ip -6 route add %s/48 encap seg6 mode %s segs %s,%s dev eth1" % (a6(p), mode, a6(s1), a6(s2)))

        # --- VRF tables ------------------------------------------------------------------
        self.t100 = self.uniq(lambda: 0x2B00 << 112 | r.getrandbits(32) << 80, 1000, taken)
        for p in self.t100:
            d, h = self.any_nh6()
            o("ip -6 route add %s/48 via %s dev %s table 100" % (a6(p), h, d))
        self.t200 = self.uniq(lambda: 30 << 24 | r.getrandbits(16) << 8, 200, t4)
        for p in self.t200:
            o("ip route add %s/24 via %s dev eth2 table 200" % (a4(p), r.choice(self.nh4["eth2"])))
        o("ip -6 route add %s/48 via fc00:2::2 dev eth1 table 300" % a6(self.t100[0]))
        o("ip route add %s/24 via 10.0.3.2 dev eth2 table 300" % a4(self.t200[0]))

        # --- 1,000 local SIDs (/128) under fc00:5::/32, one /64 locator per behaviour ---
        spread = [
            ("End", 250),
            ("End.X", 150),
            ("End.T", 100),
            ("End.DX6", 100),
            ("End.DX4", 100),
            ("End.DT6", 100),
            ("End.DT4", 50),
            ("End.DT46", 50),
            ("End.B6.Encaps", 100),
        ]
        assert sum(n for _, n in spread) == 1000
        for k, (beh, n) in enumerate(spread):
            loc = 0xFC000005 << 96 | (k + 1) << 64
            sids = [loc | r.getrandbits(32) << 16 | i for i in range(n)]
            self.sids[beh] = sids
            for s in sids:
                if beh == "End":
                    params = ""
                elif beh == "End.X":
                    d, h = self.any_nh6()
                    params = " nh6 %s oif %s" % (h, d)
                elif beh == "End.T":
                    params = " table 100"
                elif beh == "End.DX6":
                    params = " nh6 %s" % r.choice(self.nh6["eth2"])
                elif beh == "End.DX4":
                    params = " nh4 %s" % r.choice(self.nh4["eth2"])
                elif beh == "End.DT6":
                    params = " table 100"
                elif beh in ("End.DT4", "End.DT46"):
                    params = " vrftable %s" % ("200" if beh == "End.DT4" else "300")
                else:
                    params = " srh segs %s,%s" % (a6(self.host48()), a6(self.host48()))
                o("ip -6 route add %s/128 encap seg6local action %s%s dev eth0" % (a6(s), beh, params))

    # --- addresses inside prefixes ---------------------------------------------------------
    def host48(self, pool=None):
        p = self.r.choice(pool if pool is not None else self.p48)
        return p | self.r.getrandbits(64) | 1

    def host64(self):
        return self.r.choice(self.p64) | self.r.getrandbits(48) | 1

    def host_main6(self):
        return self.host48() if self.r.random() < 0.5 else self.host64()

    def host24(self, pool=None):
        return self.r.choice(pool if pool is not None else self.p24) | self.r.randrange(1, 255)


# --- frame writing -------------------------------------------------------------------------


def srh(nh, sl, segs, hmac_src=None):
    """An SRH (RFC 8754): `segs` in visiting order (S1 first), so Segment List[0] is the
    last; with hmac_src, an HMAC TLV (key HMAC_KEY_ID, SHA-256) over RFC 8754
    §2.1.2.1's text with that source, and flags 0x08 as sr6 and Linux emit them."""
    n = len(segs)
    seglist = b"".join(ipaddress.IPv6Address(s).packed for s in reversed(segs))
    flags = 0x08 if hmac_src is not None else 0
    tlv = b""
    if hmac_src is not None:
        text = ipaddress.IPv6Address(hmac_src).packed + struct.pack("!BBI", n - 1, flags, HMAC_KEY_ID) + seglist
        mac = hmac.new(HMAC_SECRET, text, hashlib.sha256).digest()
        tlv = struct.pack("!BBHI", 5, 38, 0, HMAC_KEY_ID) + mac
    length = 8 + len(seglist) + len(tlv)
    assert length % 8 == 0
    return struct.pack("!BBBBBBH", nh, length // 8 - 1, 4, sl, n - 1, flags, 0) + seglist + tlv


def udp6_bytes(src, final_dst):
    """UDP header + payload with the checksum over the final destination (RFC 8200 §8.1)."""
    return bytes(IPv6(src=src, dst=final_dst) / UDP(sport=1024, dport=5000) / Raw(PAYLOAD))[40:]


def eth(dev_index, l3):
    return Ether(dst=mac(dev_index), src="02:00:00:01:00:02") / l3


def plain6(src, dst):
    return eth(0, IPv6(src=src, dst=dst, hlim=64, fl=0x12345) / UDP(sport=1024, dport=5000) / Raw(PAYLOAD))


def sr6_frame(src, segs, sl, hmac_src=None, dev_index=0):
    """IPv6 + SRH + UDP; `segs` in visiting order, Segments Left `sl`: the destination is
    Segment List[sl], the UDP checksum is over the last segment."""
    active = list(reversed(segs))[sl]
    body = srh(17, sl, segs, hmac_src) + udp6_bytes(src, segs[-1])
    return eth(dev_index, IPv6(src=src, dst=active, nh=43, hlim=64, fl=0x12345) / Raw(body))


def encap_frame(prev, sid, nh, inner):
    """What an H.Encaps with segments (prev, sid) delivers to `sid`: Segments Left 0."""
    body = srh(nh, 0, [prev, sid]) + bytes(inner)
    return eth(0, IPv6(src="fc00:1::2", dst=sid, nh=43, hlim=64) / Raw(body))


def write_frames(path, frames):
    for i, fr in enumerate(frames):
        fr.time = 1_700_000_000 + i / 1e6  # fixed timestamps: byte-identical output
    wrpcap(path, frames)


# --- End.BPF (the End.BPF paper's functions, CoNEXT'18 §5) -----------------------------------
# (workload, object, section, SID): the SIDs /128s under fc00:bf::/64, which no other route
# of router.conf covers more specifically.
BPF_FUNCS = [("End.BPF-end", "end", "end", 0xFC0000BF << 96 | 1),
             ("End.BPF-tag", "tag", "tag_inc", 0xFC0000BF << 96 | 2),
             ("End.BPF-tlv", "tlv", "add_tlv", 0xFC0000BF << 96 | 3),
             ("End.BPF-end_t", "action", "end_t", 0xFC0000BF << 96 | 4)]


def bpf_lines():
    """The End.BPF SIDs, each binding one program (objects relative to the config)."""
    return ["ip -6 route add %s/128 encap seg6local action End.BPF endpoint obj bpf/%s.o sec %s dev eth0"
            % (a6(sid), obj, sec) for _, obj, sec, sid in BPF_FUNCS]


def bpf_workloads(w, rb, n):
    """Frames as End's and End.T's (two segments, Segments Left 1) to each End.BPF SID:
    the next segment in a main /64, or, for the End.T program, in a /48 of table 100."""
    out = []
    for name, _, sec, sid in BPF_FUNCS:
        nxt = (lambda: w.host48(w.t100)) if sec == "end_t" else w.host_main6
        orig, w.r = w.r, rb  # the workload's own generator: the others' draws unchanged
        frames = [sr6_frame("fc00:1::2", [a6(sid), a6(nxt())], 1) for _ in range(n)]
        w.r = orig
        out.append((name, frames, "eth0", "-", "-", "router-bpf.conf"))
    return out


# --- SR proxies (draft-ietf-spring-sr-service-programming §6) -------------------------------
# Each on a function link of its own: End.AD and End.AS need an iif of their own (one
# proxy per iif), End.AM SIDs share one. The function is at ::2 of the link.
PROXY_LINKS = {"End.AD": ["pa0", "pa1", "pa2", "pa3"], "End.AS": ["ps0", "ps1", "ps2", "ps3"], "End.AM": ["pm0"]}


def host(w, rp):
    """An address in a main-table /48, drawn with `rp` (not the workload's generator)."""
    return a6(rp.choice(w.p48) | rp.getrandbits(64) | 1)


def add_proxies(w, rp):
    """Appends the proxies' devices and SIDs to the config (after everything else, with
    their own random generator `rp`: the lines and frames above do not change). Returns
    {behaviour: [(sid, device index, device, function address)]}."""
    out = {}
    links = [d for ds in PROXY_LINKS.values() for d in ds]
    for k, d in enumerate(links):
        i = len(DEVICES) + k
        w.out("ip link set dev %s address %s up" % (d, mac(i)))
        w.out("ip -6 addr add fc00:%x::1/64 dev %s" % (0x70 + k, d))
        w.out("ip -6 neigh add fc00:%x::2 lladdr 02:00:00:%02x:06:02 dev %s" % (0x70 + k, i, d))
    k = 0
    for beh, devs in PROXY_LINKS.items():
        n = 100 if beh == "End.AM" else len(devs)
        loc = 0xFC000005 << 96 | (0x20 + len(out)) << 64
        out[beh] = []
        for j in range(n):
            d = devs[j % len(devs)]
            i = len(DEVICES) + links.index(d)
            fa = "fc00:%x::2" % (0x70 + links.index(d))
            sid = a6(loc | rp.getrandbits(32) << 16 | j)
            params = " nh6 %s oif %s iif %s" % (fa, d, d)
            if beh == "End.AS":
                params += " src fc00:1::1 segs %s,%s" % (host(w, rp), host(w, rp))
            w.out("ip -6 route add %s/128 encap seg6local action %s%s dev eth0" % (sid, beh, params))
            out[beh].append((sid, i, d, fa))
            k += 1
    return out


def proxy_workloads(w, proxies, rp, n):
    """The proxies' workloads, each direction (name, frames, in_dev, goal, warm-up):
    to the function (part 1: SRv6 for the proxy SID on eth0) and back from it (part 2:
    what the function returns, on the proxy's iif). End.AD's cache is filled by a
    warm-up frame for each of its SIDs; End.AM's returning packets are masqueraded
    (DA = Segment List[0], Segments Left 1)."""
    SRC = "fc00:1::2"
    out = []

    def inner6():
        return IPv6(src="2a0f::1", dst=host(w, rp), hlim=64) / UDP(sport=1024, dport=5000) / Raw(PAYLOAD)

    def to_sid(sid, nxt, inner):
        # IPv6 + SRH (Segments Left 1: the proxy SID then `nxt`) + the inner packet.
        body = srh(41, 1, [sid, nxt]) + bytes(inner)
        return eth(0, IPv6(src=SRC, dst=sid, nh=43, hlim=64, fl=0x12345) / Raw(body))

    ad = proxies["End.AD"]
    nexts = {sid: host(w, rp) for sid, _, _, _ in ad}
    out.append(("End.AD", [to_sid(s, nexts[s], inner6()) for s, _, _, _ in (rp.choice(ad) for _ in range(n))], "eth0", "-", "-"))
    sid, i, d, _ = ad[0]
    back = [eth(i, inner6()) for _ in range(n)]
    out.append(("End.AD-return", back, d, "-", ("eth0", [to_sid(sid, nexts[sid], inner6())])))
    am = proxies["End.AM"]
    out.append(("End.AM", [sr6_frame(SRC, [s, host(w, rp)], 1) for s, _, _, _ in (rp.choice(am) for _ in range(n))], "eth0", "-", "-"))
    _, i, d, _ = am[0]
    masq = []
    for s, _, _, _ in (rp.choice(am) for _ in range(n)):
        fr = sr6_frame(SRC, [s, host(w, rp)], 1, dev_index=i)
        ip = fr[IPv6]
        ip.dst = a6(ipaddress.IPv6Address(bytes(ip)[48:64]))  # Segment List[0]
        masq.append(fr)
    out.append(("End.AM-return", masq, d, "-", "-"))
    ast = proxies["End.AS"]
    out.append(("End.AS", [to_sid(s, host(w, rp), inner6()) for s, _, _, _ in (rp.choice(ast) for _ in range(n))], "eth0", "-", "-"))
    _, i, d, _ = ast[0]
    out.append(("End.AS-return", [eth(i, inner6()) for _ in range(n)], d, "-", "-"))
    return out


# --- The mobile user plane (RFC 9433 §6.6, §6.7) ----------------------------------------------
GTP_SR_PREFIX = 0xFC000006 << 96      # H.M.GTP4.D's sr-prefix fc00:6::/48 (routed to eth1)
GTP_SRC_PREFIX = 0xFC00000A0005 << 80  # its src-prefix fc00:a:5::/64
GTP4E_LOC = 0xFC00000E << 96           # End.M.GTP4.E SIDs fc00:e:K::/48
GTP_ENCAP4 = 0x0AD20000                # GTP-U tunnels: 10.210.K.0/24
GTP_DECAP4 = 0x0ADC0001                # local UPF addresses 10.220.K.1
SR_ENCAP4 = 0x0AE60000                 # IPv4 into H.Encaps.Red: 10.230.K.0/24


def add_mobile(w, rm):
    """Appends 100 H.M.GTP4.D UPF addresses (10.200.K.1/32) and 100 End.M.GTP4.E SIDs to
    the config, with their own generator `rm`. Returns (UPF addresses, E SIDs)."""
    d = "eth1"
    w.out("ip -6 route add %s/48 via %s dev %s" % (a6(GTP_SR_PREFIX), rm.choice(w.nh6[d]), d))
    upfs, sids = [], []
    for k in range(100):
        upf = 0x0AC80001 | k << 8
        segs = a6(w.host_main6())
        w.out("ip route add %s/32 encap seg6local action H.M.GTP4.D sr-prefix %s/48 src-prefix %s/64 segs %s dev eth1"
              % (a4(upf), a6(GTP_SR_PREFIX), a6(GTP_SRC_PREFIX), segs))
        upfs.append(upf)
        sid = GTP4E_LOC | (0x100 + k) << 80
        w.out("ip -6 route add %s/48 encap seg6local action End.M.GTP4.E v4src-position 64 dev eth0" % a6(sid))
        sids.append(sid)
    # The GTP-U/SRv6 paper's baselines (issue 29), with a generator of their own so the
    # lines above stay as they were: 100 GTP-U tunnels (plain IPv4 /24s encapsulated
    # toward a peer on eth1), 100 local UPF addresses decapsulating GTP-U, and 100 IPv4
    # /24s steered into H.Encaps.Red of one SID (no SRH).
    rg = random.Random(rm.getrandbits(32))
    for k in range(100):
        w.out("ip route add %s/24 encap gtp teid %d dst %s src 10.0.2.1 dev eth1"
              % (a4(GTP_ENCAP4 | k << 8), rg.getrandbits(32), rg.choice(w.nh4["eth1"])))
        w.out("ip route add %s/32 encap gtp decap dev eth0" % a4(GTP_DECAP4 | k << 8))
        w.out("ip route add %s/24 encap seg6 mode encap.red segs %s dev eth1"
              % (a4(SR_ENCAP4 | k << 8), a6(w.host_main6())))
    return upfs, sids


def gtpu_tpdu(teid, qfi, inner):
    """GTP-U T-PDU (TS 29.281 §5.1) with an uplink PDU Session Container (TS 38.415)."""
    body = bytes(inner)
    ext = bytes([1, 0x10, qfi, 0])
    return struct.pack("!BBHIHBB", 0x34, 255, 4 + len(ext) + len(body), teid, 0, 0, 0x85) + ext + body


def mobile_workloads(w, upfs, sids, rm, n):
    """H.M.GTP4.D: GTP-U/UDP/IPv4 from a gNB on eth0 to a UPF address; End.M.GTP4.E: the
    SRv6 packet H.M.GTP4.D makes (no SRH, at the last SID) for an IPv4 UPF in a main /24."""
    def inner():
        return IP(src="20.0.0.1", dst=a4(w.host24()), ttl=64) / UDP(sport=1024, dport=5000) / Raw(PAYLOAD)

    d = []
    for _ in range(n):
        g = gtpu_tpdu(rm.getrandbits(32), 9, inner())
        d.append(eth(0, IP(src="10.0.1.2", dst=a4(rm.choice(upfs)), ttl=64) / UDP(sport=2152, dport=2152) / Raw(g)))
    e = []
    for _ in range(n):
        v4dst = w.host24()
        args = 9 << 34 | rm.getrandbits(32)  # QFI 9, R 0, U 0, TEID (RFC 9433 §6.1)
        dst = rm.choice(sids) | v4dst << 48 | args << 8
        src = GTP_SRC_PREFIX | 0x0A000102 << 32
        e.append(eth(0, IPv6(src=a6(src), dst=a6(dst), nh=4, hlim=64) / inner()))
    out = [("H.M.GTP4.D", d, "eth0", "-", "-"), ("End.M.GTP4.E", e, "eth0", "-", "-")]
    # The paper's baselines, from a generator of their own (the frames above unchanged):
    # plain IPv4 into a GTP-U tunnel and into H.Encaps.Red; a GTP-U T-PDU (no extension
    # header, as the paper's) to a UPF address; IPv6 with no SRH to an End.DX4 SID.
    rb = random.Random(rm.getrandbits(32))

    def user(dst):
        return IP(src="20.0.0.1", dst=a4(dst), ttl=64) / UDP(sport=1024, dport=5000) / Raw(PAYLOAD)

    def host(base):
        return base | rb.randrange(100) << 8 | rb.randrange(1, 255)

    ge = [eth(0, user(host(GTP_ENCAP4))) for _ in range(n)]
    gd = []
    for _ in range(n):
        t = bytes(user(w.host24()))
        g = struct.pack("!BBHI", 0x30, 255, len(t), rb.getrandbits(32)) + t
        upf = GTP_DECAP4 | rb.randrange(100) << 8
        gd.append(eth(0, IP(src="10.0.1.2", dst=a4(upf), ttl=64) / UDP(sport=2152, dport=2152) / Raw(g)))
    se = [eth(0, user(host(SR_ENCAP4))) for _ in range(n)]
    sd = [eth(0, IPv6(src="fc00:1::2", dst=a6(rb.choice(w.sids["End.DX4"])), nh=4, hlim=64) / user(w.host24()))
          for _ in range(n)]
    out += [("GTP-U.Encap", ge, "eth0", "-", "-"), ("GTP-U.Decap", gd, "eth0", "-", "-"),
            ("SRv6.Encap", se, "eth0", "-", "-"), ("SRv6.Decap", sd, "eth0", "-", "-")]
    return out


# --- The IDS (issue 28): End behind N Snort rules of one content each ----------------------
IDS_RULES = [10, 100, 1000]


def ids_rules(n, ri):
    """`n` Snort rules (docs/ids.md), each with one content of 6-12 lowercase letters
    drawn with `ri` (UDP and TCP, some with a port, some `nocase`, alert or drop):
    none matches an End frame, whose UDP payload is bytes 0-17."""
    out = []
    for k in range(1, n + 1):
        pat = "".join(ri.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(ri.randrange(6, 13)))
        proto, port = ri.choice([("udp", "any"), ("udp", "any"), ("tcp", "any"), ("tcp", str(ri.choice([80, 443, 8080])))])
        act = "drop" if ri.random() < 0.3 else "alert"
        mods = " nocase;" if ri.random() < 0.3 else ""
        out.append('%s %s any any -> any %s (msg:"pattern %d"; content:"%s";%s sid:%d; rev:1;)'
                   % (act, proto, port, k, pat, mods, 1000000 + k))
    return out


# --- The firewall (issue 28): End behind N INPUT rules -------------------------------------
FW_RULES = [0, 10, 100, 1000]
END_LOCATOR = "fc00:5:0:1::/64"  # every End SID (the End frames' destinations)


def firewall_lines(n, rf, accept="-d " + END_LOCATOR):
    """`n` ip6tables INPUT rules of the shapes a rule set has (exact /128 and /64
    sources, a /128 destination, TCP/UDP ports, SRH tag, Segments Left and last SID),
    drawn with `rf`; none matches an End frame (source fc00:1::2, to an End SID,
    UDP 1024 -> 5000, SRH tag 0, Segments Left 1, last SID in 2a00::/12) but the
    last, which accepts the End locator; INPUT's policy DROP. With n = 0, no rule: the
    firewall exists by FORWARD's DROP policy alone, which End's packets never meet.
    `accept`: the last rule's match."""
    if n == 0:
        return ["ip6tables -P FORWARD DROP"]
    out = ["ip6tables -P INPUT DROP"]
    tcp = [22, 23, 25, 53, 80, 110, 143, 179, 443, 445, 830, 3389, 8080]
    for _ in range(n - 1):
        shape = rf.random()
        tgt = rf.choice(["DROP", "DROP", "REJECT", "ACCEPT"])
        if shape < 0.25:
            m = "-s %s" % a6(0x2A00 << 112 | rf.getrandbits(112))
        elif shape < 0.45:
            m = "-s %s/64" % a6((0x2A00 << 112 | rf.getrandbits(112)) >> 64 << 64)
        elif shape < 0.55:
            m = "-d %s" % a6(0xFC000005 << 96 | 0xB << 64 | rf.getrandbits(64))
        elif shape < 0.67:
            m = "-p tcp --dport %d" % rf.choice(tcp + [rf.randrange(1024, 65536)])
        elif shape < 0.75:
            m = "-p udp --dport %d" % rf.choice([53, 123, 161, 500, 4500, rf.randrange(5001, 65536)])
        elif shape < 0.80:
            m = "-p udp --sport %d" % rf.randrange(1025, 65536)
        elif shape < 0.90:
            m = "-m srh --srh-tag %d" % rf.randrange(1, 65536)
        elif shape < 0.95:
            m = "-m srh --srh-segs-left-eq %d" % rf.randrange(2, 16)
        else:
            m = "-m srh --srh-lsid fc00:bad:%x::/48" % rf.randrange(1, 65536)
        out.append("ip6tables -A INPUT %s -j %s" % (m, tgt))
    out.append("ip6tables -A INPUT %s -j ACCEPT" % accept)
    return out


def main():
    global PAYLOAD
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("outdir")
    ap.add_argument("--seed", type=int, default=8986)
    ap.add_argument("--frames", type=int, default=64)
    ap.add_argument("--mixed-roots", action="store_true", help="a /40 under every /24 of the FIBs: trie lookups")
    ap.add_argument("--payload-bytes", type=int, default=len(PAYLOAD),
                    help="UDP payload of every user packet (default %(default)s; 1432 makes the "
                         "GTP-U/SRv6 paper's 1460-byte inner IPv4 packets)")
    a = ap.parse_args()
    if not 0 <= a.payload_bytes <= 8900:
        ap.error("--payload-bytes: 0 to 8900")
    PAYLOAD = bytes(i & 0xFF for i in range(a.payload_bytes))
    os.makedirs(a.outdir, exist_ok=True)
    w = Workload(a.seed)
    w.build_config()
    if a.mixed_roots:
        # After everything else and without the random generator: the frames stay the same.
        roots = sorted({p >> 104 for p in w.p48 + w.p64} | {p >> 104 for ps in w.heads.values() for p in ps})
        for r24 in roots:
            w.out("ip -6 route add %s/40 via fc00:1::2 dev eth0" % a6(r24 << 104 | 0xFFFF << 88))
        for r24 in sorted({p >> 104 for p in w.t100}):
            w.out("ip -6 route add %s/40 via fc00:1::2 dev eth0 table 100" % a6(r24 << 104 | 0xFFFF << 88))
    # NEXT-C-SID (RFC 9800 §4.1), F3216 under the block 2c00:0::/32, with its own random
    # generator so that nothing above changes: 100 End and 100 End.X C-SIDs of this router
    # and 200 C-SIDs of other nodes, routed (all /48s, one /16: one hash probe each).
    rc = random.Random(a.seed + 9800)
    block = 0x2C000000 << 96
    csid = {"End": [0x1000 + i for i in range(100)], "End.X": [0x2000 + i for i in range(100)]}
    others = [0x3000 + i for i in range(200)]
    for v in csid["End"]:
        w.out("ip -6 route add %s/48 encap seg6local action End flavors next-csid dev eth0" % a6(block | v << 80))
    for v in csid["End.X"]:
        d = rc.choice(["eth1", "eth2", "eth3"])
        w.out("ip -6 route add %s/48 encap seg6local action End.X nh6 %s oif %s flavors next-csid dev eth0"
              % (a6(block | v << 80), rc.choice(w.nh6[d]), d))
    for v in others:
        d = rc.choice(["eth1", "eth2", "eth3"])
        w.out("ip -6 route add %s/48 via %s dev %s" % (a6(block | v << 80), rc.choice(w.nh6[d]), d))
    with open(os.path.join(a.outdir, "router.conf"), "w") as f:
        f.write("\n".join(w.lines) + "\n")
    # The proxies in a config of their own, router.conf + their lines: adding routes to
    # the FIB every other workload looks up in would change those workloads' figures.
    base = len(w.lines)
    proxies = add_proxies(w, random.Random(a.seed + 27))
    with open(os.path.join(a.outdir, "router-proxies.conf"), "w") as f:
        f.write("\n".join(w.lines) + "\n")
    del w.lines[base:]
    with open(os.path.join(a.outdir, "router-bpf.conf"), "w") as f:
        f.write("\n".join(w.lines + bpf_lines()) + "\n")
    # The same for the mobile user plane.
    saved = w.r.getstate()
    w.r = random.Random(a.seed + 9433)
    upfs, gtp4e = add_mobile(w, random.Random(a.seed + 9434))
    with open(os.path.join(a.outdir, "router-mobile.conf"), "w") as f:
        f.write("\n".join(w.lines) + "\n")
    del w.lines[base:]
    w.r.setstate(saved)
    # The firewall's configs, router.conf + N rules, each from its own generator: the
    # End frames are the ones of the End workload (End.pcap).
    for n in FW_RULES:
        with open(os.path.join(a.outdir, "router-fw%d.conf" % n), "w") as f:
            f.write("\n".join(w.lines + firewall_lines(n, random.Random(a.seed + 2800 + n))) + "\n")
    # The same rules in SERA's basic mode (the addresses, protocol and ports of the
    # original packet: End's frames carry an inserted SRH, so the source and the last
    # segment), the last rule accepting End's source instead.
    for n in FW_RULES[1:]:
        with open(os.path.join(a.outdir, "router-fw%d-basic.conf" % n), "w") as f:
            rules = firewall_lines(n, random.Random(a.seed + 2800 + n), accept="-s fc00:1::2")
            f.write("\n".join(w.lines + ["sysctl -w net.ipv6.ip6t_seg6=1"] + rules) + "\n")
    # The IDS's: router.conf + an IPS whose N rules none of End's frames match.
    for n in IDS_RULES:
        with open(os.path.join(a.outdir, "ids-%d.rules" % n), "w") as f:
            f.write("\n".join(ids_rules(n, random.Random(a.seed + 2900 + n))) + "\n")
        with open(os.path.join(a.outdir, "router-ids%d.conf" % n), "w") as f:
            f.write("\n".join(w.lines + ["ids rules ids-%d.rules mode ips" % n]) + "\n")

    r = w.r
    N = a.frames
    SRC = "fc00:1::2"

    def pick(lst):
        # Distinct SIDs/prefixes while there are enough, then wrap around.
        idx = r.sample(range(len(lst)), min(N, len(lst)))
        return [lst[idx[i % len(idx)]] for i in range(N)]

    def inner6(pool=None):
        return IPv6(src="2a0f::1", dst=a6(w.host48(pool)), hlim=64) / UDP(sport=1024, dport=5000) / Raw(PAYLOAD)

    def inner4(pool=None):
        return IP(src="20.0.0.1", dst=a4(w.host24(pool)), ttl=64) / UDP(sport=1024, dport=5000) / Raw(PAYLOAD)

    wl = []  # (name, frames, in_dev, goal)
    wl.append(("ipv6", [plain6(SRC, a6(w.host_main6())) for _ in range(N)], "eth0", "-"))
    wl.append(
        (
            "ipv4",
            [eth(0, IP(src="10.0.1.2", dst=a4(w.host24()), ttl=64) / UDP(sport=1024, dport=5000) / Raw(PAYLOAD)) for _ in range(N)],
            "eth0",
            "-",
        )
    )
    wl.append(("End", [sr6_frame(SRC, [a6(s), a6(w.host_main6())], 1) for s in pick(w.sids["End"])], "eth0", "150"))
    wl.append(("End.T", [sr6_frame(SRC, [a6(s), a6(w.host48(w.t100))], 1) for s in pick(w.sids["End.T"])], "eth0", "150"))
    wl.append(("End.X", [sr6_frame(SRC, [a6(s), a6(w.host_main6())], 1) for s in pick(w.sids["End.X"])], "eth0", "-"))
    prev = lambda: a6(w.host48())  # noqa: E731
    wl.append(("End.DX6", [encap_frame(prev(), a6(s), 41, inner6()) for s in pick(w.sids["End.DX6"])], "eth0", "150"))
    wl.append(("End.DX4", [encap_frame(prev(), a6(s), 4, inner4()) for s in pick(w.sids["End.DX4"])], "eth0", "-"))
    wl.append(("End.DT6", [encap_frame(prev(), a6(s), 41, inner6(w.t100)) for s in pick(w.sids["End.DT6"])], "eth0", "200"))
    for name, mode, goal in [("H.Encaps", "encap", "200"), ("H.Encaps.Red", "encap.red", "-"), ("H.Insert", "inline", "200")]:
        wl.append((name, [plain6(SRC, a6(p | r.getrandbits(64) | 1)) for p in pick(w.heads[mode])], "eth0", goal))
    wl.append(
        ("End.B6.Encaps", [sr6_frame(SRC, [a6(s), a6(w.host_main6())], 1) for s in pick(w.sids["End.B6.Encaps"])], "eth0", "-")
    )
    hsrc = "fc00:9::2"
    wl.append(
        (
            "End-HMAC-SHA256",
            [
                sr6_frame(hsrc, [a6(s), a6(w.host_main6()), a6(w.host_main6())], 2, hmac_src=hsrc, dev_index=4)
                for s in pick(w.sids["End"])
            ],
            "hm0",
            "-",
        )
    )
    # Appended last, so that the frames above stay what they were before these were added.
    wl.append(("End.DT4", [encap_frame(prev(), a6(s), 4, inner4(w.t200)) for s in pick(w.sids["End.DT4"])], "eth0", "-"))
    # End.DT46's VRF (table 300) holds one /48 and one /24.
    dt46 = pick(w.sids["End.DT46"])
    wl.append(("End.DT46-v4", [encap_frame(prev(), a6(s), 4, inner4(w.t200[:1])) for s in dt46], "eth0", "-"))
    wl.append(("End.DT46-v6", [encap_frame(prev(), a6(s), 41, inner6(w.t100[:1])) for s in dt46], "eth0", "-"))
    # Pure uSID packets (no SRH): a container of this router's C-SID and two more.
    for name in ("End", "End.X"):
        frames = [
            plain6(SRC, a6(block | rc.choice(csid[name]) << 80 | rc.choice(others) << 64 | rc.choice(others) << 48))
            for _ in range(N)
        ]
        # RFC 9800's goal for sr6 (issue 26): within 10 instructions of plain End's 150.
        wl.append((name + "-next-csid", frames, "eth0", "160"))
    wl = [x + ("-", "router.conf") for x in wl]
    wl += [x + ("router-proxies.conf",) for x in proxy_workloads(w, proxies, random.Random(a.seed + 28), N)]
    w.r = random.Random(a.seed + 9435)
    wl += [x + ("router-mobile.conf",) for x in mobile_workloads(w, upfs, gtp4e, random.Random(a.seed + 9436), N)]
    wl += bpf_workloads(w, random.Random(a.seed + 1818), N)
    with open(os.path.join(a.outdir, "workloads.tsv"), "w") as f:
        f.write("# name\tpcap\tin_dev\tgoal (instructions/packet)\twarm-up\tconfig\n")
        for name, frames, dev, goal, warm, conf in wl:
            pcap = name + ".pcap"
            write_frames(os.path.join(a.outdir, pcap), frames)
            if warm != "-":
                wdev, wframes = warm
                write_frames(os.path.join(a.outdir, name + ".warmup.pcap"), wframes)
                warm = "%s=%s.warmup.pcap" % (wdev, name)
            f.write("%s\t%s\t%s\t%s\t%s\t%s\n" % (name, pcap, dev, goal, warm, conf))
        for n in FW_RULES:
            f.write("End+fw%d\tEnd.pcap\teth0\t-\t-\trouter-fw%d.conf\n" % (n, n))
        for n in FW_RULES[1:]:
            f.write("End+fw%d-basic\tEnd.pcap\teth0\t-\t-\trouter-fw%d-basic.conf\n" % (n, n))
        for n in IDS_RULES:
            f.write("End+ids%d\tEnd.pcap\teth0\t-\t-\trouter-ids%d.conf\n" % (n, n))
    print("%s: router.conf (%d lines), %d workloads of %d frames" % (a.outdir, len(w.lines), len(wl), N), file=sys.stderr)


if __name__ == "__main__":
    main()
