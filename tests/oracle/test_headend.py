"""Head-end behaviours (behaviours.md "Head-end"; RFC 8986 §5, RFC 8754 §2.1.2).

Routes used: fc00:9::/64 (IPv6) and 10.9.0.0/16 (IPv4) are steered into a policy whose
first segment S1 = fc00:2::1 is routed out eth1 (via fc00:12::2)."""
import pytest

from sr6_oracle import (
    ADDR6, HOST_A, NH_ETHERNET, NH_IPV4, NH_IPV6, NH_UDP, SEG_B, SEG_C, SEG_C2, UDP, IPv6, Raw,
    config, hmac_tlv, icmp6_error, l3, policy, rx, srh, tx, udp4, udp6,
)

TUNSRC = "fc00:ff::1"
S1, S2, S3 = SEG_B, SEG_C, SEG_C2  # S1 on B (out eth1); S2, S3 further on
DST6 = "fc00:9::5"
DST4 = "10.9.0.5"


def route6(mode, segs, extra=""):
    return f"ip -6 route add fc00:9::/64 encap seg6 mode {mode} segs {','.join(segs)}{extra} dev eth1"


def route4(mode, segs, extra=""):
    return f"ip route add 10.9.0.0/16 encap seg6 mode {mode} segs {','.join(segs)}{extra} dev eth1"


def outer(inner_hlim=None, tc=0, fl=0, src=TUNSRC, dst=S1):
    """Outer header: hop limit = inner - 1 for an IPv6 inner, 63 for IPv4 (behaviours.md)."""
    return IPv6(src=src, dst=dst, hlim=63 if inner_hlim is None else inner_hlim - 1, tc=tc, fl=fl)


# --- H.Encaps -----------------------------------------------------------------------------


def test_encap_two_sids(run_sr6):
    inner = udp6(dst=DST6, hlim=64)
    cfg = config(f"ip sr tunsrc set {TUNSRC}", route6("encap", [S1, S2]))
    res = run_sr6(cfg, [rx(inner)])
    exp = outer(64) / srh(policy(S1, S2), segleft=1, nh=NH_IPV6) / inner  # inner untouched
    res.expect(eth1=[tx(exp, "eth1")])


def test_encap_three_sids(run_sr6):
    inner = udp6(dst=DST6, hlim=20)
    cfg = config(f"ip sr tunsrc set {TUNSRC}", route6("encap", [S1, S2, S3]))
    res = run_sr6(cfg, [rx(inner)])
    exp = outer(20) / srh([S3, S2, S1], segleft=2, nh=NH_IPV6) / inner
    res.expect(eth1=[tx(exp, "eth1")])


def test_encap_one_sid_keeps_srh(run_sr6):
    inner = udp6(dst=DST6)
    cfg = config(f"ip sr tunsrc set {TUNSRC}", route6("encap", [S1]))
    res = run_sr6(cfg, [rx(inner)])
    exp = outer(64) / srh([S1], segleft=0, nh=NH_IPV6) / inner
    res.expect(eth1=[tx(exp, "eth1")])


def test_encap_copies_traffic_class_and_flow_label(run_sr6):
    inner = udp6(dst=DST6, hlim=33, tc=0xB8, fl=0xABCDE)
    cfg = config(f"ip sr tunsrc set {TUNSRC}", route6("encap", [S1, S2]))
    res = run_sr6(cfg, [rx(inner)])
    exp = outer(33, tc=0xB8, fl=0xABCDE) / srh(policy(S1, S2), segleft=1, nh=NH_IPV6) / inner
    res.expect(eth1=[tx(exp, "eth1")])


def test_encap_ipv4_payload_outer_hop_limit_63(run_sr6):
    inner = udp4(dst=DST4, ttl=17)
    cfg = config(f"ip sr tunsrc set {TUNSRC}", route4("encap", [S1, S2]))
    res = run_sr6(cfg, [rx(inner)])
    # IPv4 inner: tc 0, flow label 0, hop limit 63; the inner packet (TTL too) untouched.
    exp = outer(None) / srh(policy(S1, S2), segleft=1, nh=NH_IPV4) / inner
    res.expect(eth1=[tx(exp, "eth1")])


@pytest.mark.parametrize("hlim", [1, 0])
def test_encap_inner_hop_limit_exhausted_sends_time_exceeded(run_sr6, hlim):
    inner = udp6(dst=DST6, hlim=hlim)
    frame = rx(inner)
    cfg = config(f"ip sr tunsrc set {TUNSRC}", route6("encap", [S1, S2]))
    res = run_sr6(cfg, [frame])
    err = icmp6_error("time_exceeded", l3(frame), src=ADDR6["eth0"], dst=HOST_A)
    res.expect(eth0=[tx(err, "eth0")])


# --- H.Encaps.Red -------------------------------------------------------------------------


def test_encap_red_three_sids(run_sr6):
    inner = udp6(dst=DST6, hlim=64)
    cfg = config(f"ip sr tunsrc set {TUNSRC}", route6("encap.red", [S1, S2, S3]))
    res = run_sr6(cfg, [rx(inner)])
    # Segment List without S1: [S3, S2]; Last Entry = n-2 = 1; Segments Left = n-1 = 2.
    exp = outer(64) / srh([S3, S2], segleft=2, lastentry=1, nh=NH_IPV6) / inner
    res.expect(eth1=[tx(exp, "eth1")])


def test_encap_red_two_sids(run_sr6):
    inner = udp6(dst=DST6, hlim=64)
    cfg = config(f"ip sr tunsrc set {TUNSRC}", route6("encap.red", [S1, S2]))
    res = run_sr6(cfg, [rx(inner)])
    exp = outer(64) / srh([S2], segleft=1, lastentry=0, nh=NH_IPV6) / inner
    res.expect(eth1=[tx(exp, "eth1")])


def test_encap_red_one_sid_omits_srh(run_sr6):
    inner = udp6(dst=DST6, hlim=64, tc=0x04, fl=0x1)
    cfg = config(f"ip sr tunsrc set {TUNSRC}", route6("encap.red", [S1]))
    res = run_sr6(cfg, [rx(inner)])
    exp = IPv6(src=TUNSRC, dst=S1, hlim=63, tc=0x04, fl=0x1, nh=NH_IPV6) / inner
    res.expect(eth1=[tx(exp, "eth1")])


def test_encap_red_ipv4_payload_outer_hop_limit_63(run_sr6):
    inner = udp4(dst=DST4, ttl=200)
    cfg = config(f"ip sr tunsrc set {TUNSRC}", route4("encap.red", [S1, S2]))
    res = run_sr6(cfg, [rx(inner)])
    exp = outer(None) / srh([S2], segleft=1, lastentry=0, nh=NH_IPV4) / inner
    res.expect(eth1=[tx(exp, "eth1")])


def test_encap_red_one_sid_ipv4_payload_omits_srh(run_sr6):
    inner = udp4(dst=DST4)
    cfg = config(f"ip sr tunsrc set {TUNSRC}", route4("encap.red", [S1]))
    res = run_sr6(cfg, [rx(inner)])
    exp = IPv6(src=TUNSRC, dst=S1, hlim=63, nh=NH_IPV4) / inner
    res.expect(eth1=[tx(exp, "eth1")])


# --- H.Insert -----------------------------------------------------------------------------


def test_inline_two_sids(run_sr6):
    pkt = udp6(dst=DST6, hlim=64, tc=0x20, fl=0x777)
    cfg = config(route6("inline", [S1, S2]))
    res = run_sr6(cfg, [rx(pkt)])
    # Segment List[0] = original destination, then S2, S1; SL = LE = n = 2; DA = S1;
    # hop limit - 1; the UDP bytes (checksum over the final destination) unchanged.
    exp = IPv6(src=HOST_A, dst=S1, hlim=63, tc=0x20, fl=0x777) / \
        srh([DST6, S2, S1], segleft=2, nh=NH_UDP) / Raw(bytes(pkt[UDP]))
    res.expect(eth1=[tx(exp, "eth1")])


def test_inline_one_sid(run_sr6):
    pkt = udp6(dst=DST6, hlim=5)
    cfg = config(route6("inline", [S1]))
    res = run_sr6(cfg, [rx(pkt)])
    exp = IPv6(src=HOST_A, dst=S1, hlim=4) / srh([DST6, S1], segleft=1, nh=NH_UDP) / Raw(bytes(pkt[UDP]))
    res.expect(eth1=[tx(exp, "eth1")])


def test_inline_red_two_sids(run_sr6):
    pkt = udp6(dst=DST6, hlim=64)
    cfg = config(route6("inline.red", [S1, S2]))
    res = run_sr6(cfg, [rx(pkt)])
    # As inline without S1: [D, S2]; Last Entry = n-1 = 1; Segments Left = n = 2.
    exp = IPv6(src=HOST_A, dst=S1, hlim=63) / srh([DST6, S2], segleft=2, lastentry=1, nh=NH_UDP) / \
        Raw(bytes(pkt[UDP]))
    res.expect(eth1=[tx(exp, "eth1")])


# --- H.Encaps.L2 --------------------------------------------------------------------------


def test_l2encap_ipv6_frame(run_sr6):
    inner = udp6(dst=DST6, hlim=64, tc=0x08, fl=0x55)
    frame = rx(inner)
    cfg = config(f"ip sr tunsrc set {TUNSRC}", route6("l2encap", [S1, S2]))
    res = run_sr6(cfg, [frame])
    # The received Ethernet frame (own header, no FCS) is the payload, next header 143.
    # Outer tc/fl/hop limit from the IPv6 packet in the frame, as seg6_do_srh_encap does
    # (behaviours.md: "hop limit = inner hop limit - 1 for an IPv6 inner"). [ambiguity]
    exp = outer(64, tc=0x08, fl=0x55) / srh(policy(S1, S2), segleft=1, nh=NH_ETHERNET) / Raw(bytes(frame))
    res.expect(eth1=[tx(exp, "eth1")])


def test_l2encap_ipv4_frame(run_sr6):
    inner = udp4(dst=DST4, ttl=64)
    frame = rx(inner)
    cfg = config(f"ip sr tunsrc set {TUNSRC}", route4("l2encap", [S1, S2]))
    res = run_sr6(cfg, [frame])
    exp = outer(None) / srh(policy(S1, S2), segleft=1, nh=NH_ETHERNET) / Raw(bytes(frame))
    res.expect(eth1=[tx(exp, "eth1")])


def test_l2encap_red_ipv6_frame(run_sr6):
    inner = udp6(dst=DST6, hlim=64)
    frame = rx(inner)
    cfg = config(f"ip sr tunsrc set {TUNSRC}", route6("l2encap.red", [S1, S2, S3]))
    res = run_sr6(cfg, [frame])
    exp = outer(64) / srh([S3, S2], segleft=2, lastentry=1, nh=NH_ETHERNET) / Raw(bytes(frame))
    res.expect(eth1=[tx(exp, "eth1")])


def test_l2encap_red_one_sid_omits_srh(run_sr6):
    inner = udp6(dst=DST6, hlim=64)
    frame = rx(inner)
    cfg = config(f"ip sr tunsrc set {TUNSRC}", route6("l2encap.red", [S1]))
    res = run_sr6(cfg, [frame])
    exp = IPv6(src=TUNSRC, dst=S1, hlim=63, nh=NH_ETHERNET) / Raw(bytes(frame))
    res.expect(eth1=[tx(exp, "eth1")])


# --- outer source address -----------------------------------------------------------------


def test_encap_source_is_tunsrc(run_sr6):
    inner = udp6(dst=DST6)
    cfg = config("ip sr tunsrc set fc00:ee::7", route6("encap", [S1, S2]))
    res = run_sr6(cfg, [rx(inner)])
    exp = outer(64, src="fc00:ee::7") / srh(policy(S1, S2), segleft=1, nh=NH_IPV6) / inner
    res.expect(eth1=[tx(exp, "eth1")])


def test_encap_source_falls_back_to_output_device_address(run_sr6):
    inner = udp6(dst=DST6)
    cfg = config(route6("encap", [S1, S2]))  # no tunsrc; eth1's first address is fc00:12::1
    res = run_sr6(cfg, [rx(inner)])
    exp = outer(64, src=ADDR6["eth1"]) / srh(policy(S1, S2), segleft=1, nh=NH_IPV6) / inner
    res.expect(eth1=[tx(exp, "eth1")])


NO_ETH1_ADDR = """\
ip link set eth0 address 02:00:00:00:00:01
ip link set eth1 address 02:00:00:00:00:02
ip link set eth2 address 02:00:00:00:00:03
ip -6 addr add fc00:13::1/64 dev eth2
ip -6 addr add fc00:1::1/64 dev eth0
ip -6 neigh add fc00:1::2 lladdr 02:aa:00:00:00:01 dev eth0
ip -6 neigh add fc00:12::2 lladdr 02:aa:00:00:00:02 dev eth1
ip -6 route add fc00:a::/64 via fc00:1::2 dev eth0
ip -6 route add fc00:2::/48 via fc00:12::2 dev eth1
sysctl -w net.ipv6.conf.all.forwarding=1
"""

NO_ADDR = """\
ip link set eth0 address 02:00:00:00:00:01
ip link set eth1 address 02:00:00:00:00:02
ip -6 neigh add fc00:1::2 lladdr 02:aa:00:00:00:01 dev eth0
ip -6 neigh add fc00:12::2 lladdr 02:aa:00:00:00:02 dev eth1
ip -6 route add fc00:a::/64 via fc00:1::2 dev eth0
ip -6 route add fc00:2::/48 via fc00:12::2 dev eth1
sysctl -w net.ipv6.conf.all.forwarding=1
"""


def test_encap_source_falls_back_to_first_configured_address(run_sr6):
    inner = udp6(dst=DST6)
    cfg = NO_ETH1_ADDR + route6("encap", [S1, S2]) + "\n"
    res = run_sr6(cfg, [rx(inner)], in_dev="eth0")
    # eth1 has no IPv6 address: the first one configured (fc00:13::1, on eth2).
    exp = outer(64, src="fc00:13::1") / srh(policy(S1, S2), segleft=1, nh=NH_IPV6) / inner
    res.expect(eth1=[tx(exp, "eth1")])


def test_encap_source_is_unspecified_without_any_address(run_sr6):
    inner = udp6(dst=DST6)
    cfg = NO_ADDR + route6("encap", [S1, S2]) + "\n"
    res = run_sr6(cfg, [rx(inner)], in_dev="eth0")
    exp = outer(64, src="::") / srh(policy(S1, S2), segleft=1, nh=NH_IPV6) / inner
    res.expect(eth1=[tx(exp, "eth1")])


# --- HMAC generation ----------------------------------------------------------------------


@pytest.mark.parametrize("alg", ["sha1", "sha256"])
def test_encap_hmac_tlv_and_flag(run_sr6, alg):
    secret = b"mysecret"
    inner = udp6(dst=DST6)
    cfg = config(f"ip sr tunsrc set {TUNSRC}", f"ip sr hmac set 7 {alg} mysecret",
                 route6("encap", [S1, S2], " hmac 7"))
    res = run_sr6(cfg, [rx(inner)])
    segs = policy(S1, S2)
    tlv = hmac_tlv(alg, secret, TUNSRC, segs, keyid=7, flags=0x08)
    exp = outer(64) / srh(segs, segleft=1, nh=NH_IPV6, flags=0x08, tlvs=[tlv]) / inner
    res.expect(eth1=[tx(exp, "eth1")])


def test_encap_red_hmac_covers_reduced_list(run_sr6):
    secret = b"k3y"
    inner = udp6(dst=DST6)
    cfg = config(f"ip sr tunsrc set {TUNSRC}", "ip sr hmac set 9 sha256 k3y",
                 route6("encap.red", [S1, S2, S3], " hmac 9"))
    res = run_sr6(cfg, [rx(inner)])
    segs = [S3, S2]
    tlv = hmac_tlv("sha256", secret, TUNSRC, segs, keyid=9, lastentry=1, flags=0x08)
    exp = outer(64) / srh(segs, segleft=2, lastentry=1, nh=NH_IPV6, flags=0x08, tlvs=[tlv]) / inner
    res.expect(eth1=[tx(exp, "eth1")])


def test_inline_hmac_uses_packet_source(run_sr6):
    secret = b"mysecret"
    pkt = udp6(dst=DST6, hlim=64)
    cfg = config("ip sr hmac set 7 sha256 mysecret", route6("inline", [S1, S2], " hmac 7"))
    res = run_sr6(cfg, [rx(pkt)])
    segs = [DST6, S2, S1]
    tlv = hmac_tlv("sha256", secret, HOST_A, segs, keyid=7, flags=0x08)
    exp = IPv6(src=HOST_A, dst=S1, hlim=63) / srh(segs, segleft=2, nh=NH_UDP, flags=0x08, tlvs=[tlv]) / \
        Raw(bytes(pkt[UDP]))
    res.expect(eth1=[tx(exp, "eth1")])


def test_encap_counts_tx(run_sr6):
    inner = [udp6(dst=DST6, n=i) for i in (1, 2, 3)]
    cfg = config(f"ip sr tunsrc set {TUNSRC}", route6("encap", [S1, S2]))
    res = run_sr6(cfg, [rx(p) for p in inner])
    assert res.json["packets_in"] == 3
    assert res.json["tx"].get("eth1") == 3
    assert len(res.frames("eth1")) == 3
