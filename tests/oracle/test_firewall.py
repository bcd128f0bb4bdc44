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
from sr6_oracle import ADDR6, HOST_A, NH_UDP, IPv6, Raw, UDP, config, icmp6_error, l3, rx, sr_pkt, tx, udp6

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
