"""The SR-aware firewall (issue 28, docs/firewall.md): SERA's SEG6 target and the
INPUT chain, built from the thesis (Abdelsalam 2020, §4.3.2 and Listing 4.5) and
SERA's `ip6t_SEG6`:

- go-next: "similar to the SRv6 End behavior ... sends packets towards the next SID":
  Segments Left - 1, the destination Segment List[SL - 1]; none left: dropped;
- skip-next: "skip the next SID in the SRH": Segments Left - 2; fewer than 2: dropped;
- go-last: "skip the remaining part of the segment list and process the last
  segment": Segments Left 0, the destination Segment List[0]; none left: dropped;
- eval-args: the action from the ARGS bits of the active SID (`ip6t_seg6_args` of
  them; sr6's mapping 0 ACCEPT, 1 DROP, 2 go-next, 3 skip-next, 4 go-last), any other
  value answered with "an ICMP Parameter Problem message point[ing] to the active SID".

Then the packet is forwarded toward its new destination (hop limit - 1). INPUT sees
packets for the router's SIDs and addresses before the SID's behaviour; a packet no
rule takes meets the SID's behaviour (End here). REJECT answers as ip6tables does
(ICMPv6 Destination Unreachable, icmp6-port-unreachable by default) when the packet's
transport checksum verifies against its current addresses, else drops silently. The
kernel comparison of the matches is tests/kernel/test_k_firewall.py."""
from sr6_oracle import (ADDR6, HOST_A, HOST_B, HOST_C, IP, NH_UDP, SEG_B, SEG_C, IPv6, Raw, UDP,
                        config, icmp6_error, l3, rx, sr_pkt, srh, tx, udp6)

SID = "fc00:f::1"
SEGS = ["fc00:3::1", "fc00:2::1", "fc00:2::2", SID]   # header order: [0] is the last
END = f"ip -6 route add {SID}/128 encap seg6local action End dev eth0"


def rule(line: str) -> str:
    return "ip6tables " + line


CFG = config(
    END,
    rule(f"-A INPUT -d {SID} -m srh --srh-tag 1 -j SEG6 --seg6-action go-next"),
    rule(f"-A INPUT -d {SID} -m srh --srh-tag 2 -j SEG6 --seg6-action skip-next"),
    rule(f"-A INPUT -d {SID} -m srh --srh-tag 3 -j SEG6 --seg6-action seg6-go-last"),
    rule(f"-A INPUT -d {SID} -m srh --srh-tag 4 -j DROP"),
    rule(f"-A INPUT -d {SID} -m srh --srh-tag 5 -j REJECT --reject-with icmp6-adm-prohibited"),
    rule(f"-A INPUT -d {ADDR6['eth0']} -p udp --dport 7 -j REJECT"),
)


def pkt(sl, tag, segs=SEGS):
    return sr_pkt(segs[sl], segs, sl, tag=tag, hlim=64)


def fw_rows(res):
    return {r["rule"]: (r["packets"], r["bytes"]) for r in res.json["firewall"]}


def test_go_next_skip_next_go_last(run_sr6):
    res = run_sr6(CFG, [rx(pkt(3, 1)), rx(pkt(3, 2)), rx(pkt(3, 3))])
    res.expect(eth1=[tx(sr_pkt("fc00:2::2", SEGS, 2, tag=1, hlim=63), "eth1"),
                     tx(sr_pkt("fc00:2::1", SEGS, 1, tag=2, hlim=63), "eth1")],
               eth2=[tx(sr_pkt("fc00:3::1", SEGS, 0, tag=3, hlim=63), "eth2")])
    rows = fw_rows(res)
    n = len(l3(rx(pkt(3, 1))))
    assert rows[f"-A INPUT -d {SID}/128 -m srh --srh-tag 1 -j SEG6 --seg6-action go-next"] == (1, n)
    assert rows[f"-A INPUT -d {SID}/128 -m srh --srh-tag 3 -j SEG6 --seg6-action go-last"] == (1, n)
    assert rows["-P INPUT ACCEPT"] == (0, 0)


def test_unmatched_meets_the_sid_behaviour(run_sr6):
    # Tag 0: no rule; End (RFC 8986 §4.1) processes it; the policy counts it.
    res = run_sr6(CFG, [rx(pkt(3, 0))])
    res.expect(eth1=[tx(sr_pkt("fc00:2::2", SEGS, 2, tag=0, hlim=63), "eth1")])
    assert fw_rows(res)["-P INPUT ACCEPT"][0] == 1


def test_too_few_segments_left_dropped(run_sr6):
    # go-next and go-last with Segments Left 0, skip-next with 1.
    res = run_sr6(CFG, [rx(pkt(0, 1, [SID])), rx(pkt(0, 3, [SID])), rx(pkt(1, 2, ["fc00:2::1", SID]))])
    res.expect_nothing()
    assert res.drops() == {"firewall": 3}


def test_drop_and_reject(run_sr6):
    sl0 = sr_pkt(SID, [SID], 0, tag=5, hlim=64)         # UDP checksum over SID: it verifies
    plain = IPv6(src=HOST_A, dst=ADDR6["eth0"], hlim=64) / UDP(sport=9, dport=7) / Raw(b"q" * 8)
    bad = IPv6(src=HOST_A, dst=ADDR6["eth0"], hlim=64) / UDP(sport=9, dport=7, chksum=0x1234) / Raw(b"q" * 8)
    res = run_sr6(CFG, [rx(pkt(3, 4)), rx(sl0), rx(pkt(3, 5)), rx(plain), rx(bad)])
    res.expect(eth0=[
        tx(icmp6_error("dest_unreach", l3(rx(sl0)), src=ADDR6["eth0"], dst=HOST_A, code=1), "eth0"),
        tx(icmp6_error("dest_unreach", l3(rx(plain)), src=ADDR6["eth0"], dst=HOST_A, code=4), "eth0"),
    ])
    # The DROP, the REJECT of a packet whose UDP checksum is over another destination
    # (Segment List[0] while Segments Left is 3), the bad checksum: dropped silently.
    assert res.drops() == {"firewall": 5}


EVAL_SIDS = [f"fc00:f::1{a:02x}" for a in range(6)]
EVAL_CFG = config(
    *[f"ip -6 route add {s}/128 encap seg6local action End dev eth0" for s in EVAL_SIDS],
    "sysctl -w net.ipv6.ip6t_seg6_args=8",
    rule("-A INPUT -d fc00:f::100/120 -j SEG6 --seg6-action eval-args"),
)


def test_eval_args(run_sr6):
    def p(a):
        segs = ["fc00:3::1", "fc00:2::1", "fc00:2::2", EVAL_SIDS[a]]
        return segs, sr_pkt(EVAL_SIDS[a], segs, 3, hlim=64)

    frames = [rx(p(a)[1]) for a in range(6)]
    res = run_sr6(EVAL_CFG, frames)
    s = lambda a: p(a)[0]  # noqa: E731
    res.expect(
        eth1=[tx(sr_pkt("fc00:2::2", s(0), 2, hlim=63), "eth1"),     # 0: ACCEPT, then End
              tx(sr_pkt("fc00:2::2", s(2), 2, hlim=63), "eth1"),     # 2: go-next
              tx(sr_pkt("fc00:2::1", s(3), 1, hlim=63), "eth1")],    # 3: skip-next
        eth2=[tx(sr_pkt("fc00:3::1", s(4), 0, hlim=63), "eth2")],    # 4: go-last
        # 5: no such action: Parameter Problem at the active SID, Segment List[3].
        eth0=[tx(icmp6_error("param_problem", l3(frames[5]), src=ADDR6["eth0"], dst=HOST_A, code=0,
                             ptr=40 + 8 + 16 * 3), "eth0")],
    )
    assert res.drops() == {"firewall": 1, "param_problem": 1}


def test_user_chain_return_and_policy(run_sr6):
    # FORWARD: SRv6 transit goes through chain SERA; tag 9 returns early, tag 8 is
    # accepted there; what comes back (or has no SRH) meets the DROP policy.
    cfg = config(
        rule("-P FORWARD DROP"),
        rule("-N SERA"),
        rule("-A FORWARD -m srh -j SERA"),
        rule("-A SERA -m srh --srh-tag 9 -j RETURN"),
        rule("-A SERA -m srh ! --srh-tag 8 -j DROP"),
        rule("-I SERA 2 -m srh --srh-tag 8 -j ACCEPT"),
    )
    segs = ["fc00:2::5", "fc00:2::1"]
    frames = [rx(sr_pkt("fc00:2::1", segs, 1, tag=8)), rx(sr_pkt("fc00:2::1", segs, 1, tag=9)),
              rx(sr_pkt("fc00:2::1", segs, 1, tag=7)), rx(udp6())]
    res = run_sr6(cfg, frames)
    res.expect(eth1=[tx(sr_pkt("fc00:2::1", segs, 1, tag=8, hlim=63), "eth1")])
    rows = fw_rows(res)
    assert rows["-P FORWARD DROP"][0] == 2
    assert rows["-A SERA -m srh --srh-tag 8 -j ACCEPT"][0] == 1
    assert rows["-A SERA -m srh ! --srh-tag 8 -j DROP"][0] == 1
    assert res.drops() == {"firewall": 3}


def test_no_rules_no_firewall(run_sr6):
    res = run_sr6(config(END), [rx(pkt(3, 1))])
    res.expect(eth1=[tx(sr_pkt("fc00:2::2", SEGS, 2, tag=1, hlim=63), "eth1")])
    assert res.json["firewall"] == []


# --- SERA basic mode (thesis §4.3.1, `sysctl net.ipv6.ip6t_seg6=1`) -----------------
# "the firewall ... evaluates the rules on the inner packet": in *encap* mode the
# original source and destination are the inner packet's; in *insert* mode "the original
# source information is in the source address of the IPv6 header, while the original
# destination is encoded as the last SID in the SRH" (Segment List[0]). Protocol and
# ports are the original packet's; `-m srh` (advanced mode) reads the SRH as before.
BANNED = "fc00:bad::/48"            # sources the legacy rule set drops
SVC = "fc00:3::53"                  # a destination whose UDP/49999 it drops

LEGACY = (
    rule(f"-A INPUT -s {BANNED} -j DROP"),
    rule(f"-A INPUT -d {SVC} -p udp --dport 49999 -j DROP"),
    rule(f"-A FORWARD -s {BANNED} -j DROP"),
    rule(f"-A INPUT -m srh --srh-tag 7 -j DROP"),
)
BASIC = config(END, "sysctl -w net.ipv6.ip6t_seg6=1", *LEGACY)
LEGACY_ONLY = config(END, *LEGACY)


def inner6(src, dst, dport):
    return IPv6(src=src, dst=dst, hlim=64) / UDP(sport=1000, dport=dport) / Raw(b"z" * 12)


def encap(inner, sl=1, segs=(SEG_C, SID), tag=0, nh=41):
    segs = list(segs)
    return sr_pkt(segs[sl], segs, sl, nh=nh, inner=inner, tag=tag, hlim=64)


def insert(final, dport, sl=1):
    # H.Insert: the original destination is Segment List[0]; UDP right after the SRH.
    segs = [final, SID]
    u = UDP(sport=1000, dport=dport) / Raw(b"z" * 12)
    return IPv6(src=HOST_A, dst=segs[sl], hlim=64) / srh(segs, segleft=sl, nh=17) / u


def test_basic_mode_judges_the_inner_packet_of_an_encapsulation(run_sr6):
    banned = encap(inner6("fc00:bad::7", HOST_C, 80))
    fine = encap(inner6(HOST_A, HOST_C, 80))
    res = run_sr6(BASIC, [rx(banned), rx(fine)])
    # The banned inner source is dropped although the outer source (HOST_A) is not
    # banned; the other meets End (RFC 8986 §4.1) and goes on to SEG_C.
    out = encap(inner6(HOST_A, HOST_C, 80), sl=0)
    out[IPv6].hlim = 63
    res.expect(eth2=[tx(out, "eth2")])
    assert res.drops() == {"firewall": 1}
    assert fw_rows(res)[f"-A INPUT -s {BANNED} -j DROP"][0] == 1
    # Without basic mode the rules read the outer packet: both go on.
    res = run_sr6(LEGACY_ONLY, [rx(banned), rx(fine)])
    assert len(res.frames("eth2")) == 2 and res.drops() == {}


def test_basic_mode_insert_mode_reads_the_last_segment(run_sr6):
    # The outer destination is the SID; the original destination SVC is the last SID.
    svc = insert(SVC, 49999)
    other_port = insert(SVC, 49998)
    res = run_sr6(BASIC, [rx(svc), rx(other_port)])
    out = IPv6(src=HOST_A, dst=SVC, hlim=63) / srh([SVC, SID], segleft=0, nh=17) / UDP(sport=1000, dport=49998) / Raw(
        b"z" * 12)
    res.expect(eth2=[tx(out, "eth2")])
    assert fw_rows(res)[f"-A INPUT -d {SVC}/128 -p udp -m udp --dport 49999 -j DROP"][0] == 1
    res = run_sr6(LEGACY_ONLY, [rx(svc)])
    assert len(res.frames("eth2")) == 1 and res.drops() == {}


def test_basic_mode_keeps_srh_matches_and_plain_traffic(run_sr6):
    # -m srh reads the outer SRH in basic mode too (tag 7); a packet without SRH is
    # judged as it is: a banned source on plain IPv6 to the router, and in transit.
    tagged = encap(inner6(HOST_A, HOST_C, 80), tag=7)
    plain_in = IPv6(src="fc00:bad::1", dst=ADDR6["eth0"], hlim=64) / UDP(sport=9, dport=9)
    plain_fwd = IPv6(src="fc00:bad::1", dst=HOST_B, hlim=64) / UDP(sport=9, dport=9)
    res = run_sr6(BASIC, [rx(tagged), rx(plain_in), rx(plain_fwd)])
    res.expect_nothing()
    assert res.drops() == {"firewall": 3}


def test_basic_mode_in_transit_and_ipv4_inside(run_sr6):
    # FORWARD: an SRv6 packet to another node's SID carrying a banned source inside.
    banned = sr_pkt(SEG_B, [SEG_C, SEG_B], 1, nh=41, inner=inner6("fc00:bad::9", HOST_C, 80), hlim=64)
    # IPv4 inside: ip6tables rules have no IPv4 address to compare; the outer packet is
    # judged (its source is not banned) and End forwards it.
    v4 = encap(IP(src="10.9.9.9", dst="10.3.0.1", ttl=64) / UDP(sport=1, dport=2), nh=4)
    res = run_sr6(BASIC, [rx(banned), rx(v4)])
    assert res.drops() == {"firewall": 1}
    assert len(res.frames("eth2")) == 1 and not res.frames("eth1")


def test_advanced_mode_inner_src_and_dst(run_sr6):
    # SERA's `-m srh --inner-src/--inner-dst` (thesis Listing 4.4), without basic mode:
    # the outer source and the original destination in one rule, and a negated inner
    # source; a packet without an original packet (no SRH) matches neither way.
    cfg = config(
        END,
        rule(f"-A INPUT -s {HOST_A} -m srh --inner-dst {SVC} -j DROP"),
        rule("-A INPUT -m srh ! --inner-src fc00:a::/64 --srh-tag 9 -j DROP"),
        rule(f"-A INPUT -d {ADDR6['eth0']} -m srh ! --inner-src fc00:a::/64 -j DROP"),
    )
    to_svc = encap(inner6("fc00:1234::1", SVC, 80))           # inner dst SVC, outer src HOST_A
    ins_svc = insert(SVC, 80)                                  # insert mode: last SID SVC
    stranger = encap(inner6("fc00:1234::1", HOST_C, 80), tag=9)  # inner source not in fc00:a::/64
    friend = encap(inner6(HOST_A, HOST_C, 80), tag=9)
    plain = IPv6(src="fc00:1234::1", dst=ADDR6["eth0"], hlim=64) / UDP(sport=9, dport=9)
    res = run_sr6(cfg, [rx(to_svc), rx(ins_svc), rx(stranger), rx(friend), rx(plain)])
    assert res.drops() == {"firewall": 3}, res.drops()
    # The friend went on (End), and the plain packet reached the router (no SRH: the
    # third rule, with its `!`, does not match it).
    assert len(res.frames("eth2")) == 1 and len(res.local) == 1
    rows = fw_rows(res)
    assert rows[f"-A INPUT -s {HOST_A}/128 -m srh --inner-dst {SVC}/128 -j DROP"][0] == 2
    assert rows["-A INPUT -m srh --srh-tag 9 ! --inner-src fc00:a::/64 -j DROP"][0] == 1
