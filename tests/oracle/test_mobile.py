"""The GTP-U <-> SRv6 translations of RFC 9433 (behaviours.md "Mobile user plane"):
H.M.GTP4.D (§6.7) and End.M.GTP4.E (§6.6), sr6 extensions of the seg6local grammar.

Everything expected is built here with scapy's GTP-U layers (``scapy.contrib.gtp``:
GTP_U_Header, GTPPDUSessionContainer) from the RFC's figures:

* Args.Mob.Session (§6.1, Fig. 8): QFI (6 bits) | R (1) | U (1) | PDU Session ID = TEID
  (32), 40 bits;
* the End.M.GTP4.E SID (Fig. 9) and H.M.GTP4.D's last SID (Fig. 11): prefix | IPv4
  destination (32) | Args.Mob.Session (40) | zeros;
* the IPv6 source (Fig. 10): prefix | IPv4 source (32) | anything (zeros when sr6 makes
  it);

and from behaviours.md's choices where the RFC leaves them open: the outer hop limit is
the TTL and the TTL the hop limit, each router decrementing once as it forwards; traffic
class <-> DSCP/ECN; the rebuilt IPv4 header has identification 0 and DF; UDP from port
2152 with its checksum; a PDU Session Container (downlink, RQI = R) when QFI or R is not
0; GTP-U signalling that cannot cross SRv6 dropped as ``gtpu_signalling`` (what can is
test_mobile_signalling.py's).  The published vectors of VPP's
srv6-mobile tests (test_srv6_mobile.py) are reproduced as cases.  Every frame sr6 emits is
also decoded by tshark (conftest), which must find no malformed packet or bad checksum,
and here must read the TEID and QFI the RFC layout puts in the SID.
"""
import ipaddress
import subprocess

import pytest
from scapy.contrib.gtp import GTP_U_Header, GTPPDUSessionContainer
from scapy.layers.inet import IPOption_RR

from sr6_oracle import (
    ICMP, IP, NH_IPV4, NH_IPV6, UDP, Ether, IPv6, IPv6ExtHdrSegmentRouting, Raw, config, icmp6_error, l3, payload, rx,
    sid_entry, srh, tx, wrpcap,
)

UPF = "192.0.2.1"            # the UPF address H.M.GTP4.D is routed on
GNB = "10.1.0.5"             # a gNB behind eth0
SR_PREFIX = "fc00:2:0:100::/56"   # within fc00:2::/48 (B, eth1): 56 + 32 + 40 = 128
SRC_PREFIX = "fc00:5::/64"
E_SID = "fc00:3:0:200::/56"       # End.M.GTP4.E SIDs (the route's prefix)
E_SRC_PREFIX = "fc00:7::/64"      # sources of packets to End.M.GTP4.E: IPv4 SA at bit 64

D_LINE = (f"ip route add {UPF}/32 encap seg6local action H.M.GTP4.D sr-prefix {SR_PREFIX} "
          f"src-prefix {SRC_PREFIX} dev eth1")
E_LINE = f"ip -6 route add {E_SID} encap seg6local action End.M.GTP4.E v4src-position 64 dev eth0"


# --- the RFC's layouts, independently of sr6 ----------------------------------------------


def args_mob_session(qfi=0, r=0, u=0, teid=0) -> int:
    """RFC 9433 §6.1 Fig. 8."""
    return (qfi & 0x3F) << 34 | (r & 1) << 33 | (u & 1) << 32 | (teid & 0xFFFFFFFF)


def gtp4_sid(prefix: str, v4: str, args: int) -> str:
    """Figs. 9 and 11: prefix | IPv4 address | Args.Mob.Session | 0 padded."""
    net = ipaddress.IPv6Network(prefix)
    plen = net.prefixlen
    v = int(net.network_address) | int(ipaddress.IPv4Address(v4)) << (128 - plen - 32) | args << (128 - plen - 72)
    return str(ipaddress.IPv6Address(v))


def v4_in_src(prefix: str, v4: str, rest: int = 0) -> str:
    """Fig. 10: prefix | IPv4 SA | anything (``rest`` in the bits after it)."""
    net = ipaddress.IPv6Network(prefix)
    shift = 128 - net.prefixlen - 32
    return str(ipaddress.IPv6Address(int(net.network_address) | int(ipaddress.IPv4Address(v4)) << shift | rest))


def user6(n=20):
    """The UE's IPv6 packet: a UDP datagram (ports no dissector claims)."""
    return IPv6(src="2001:db8:1::5", dst="2001:db8:2::9", hlim=50) / UDP(sport=40001, dport=40002) / payload(n)


def user4(n=20):
    return IP(src="100.64.0.5", dst="198.18.0.9", ttl=50, id=7) / UDP(sport=40001, dport=40002) / payload(n)


def gtpu(teid, inner, psc=None):
    """A GTP-U T-PDU header (TS 29.281 §5.1), with a PDU Session Container ``psc`` =
    (PDU type, QFI, RQI) if given (TS 38.415 §5.5.2)."""
    if psc is None:
        return GTP_U_Header(gtp_type=255, teid=teid) / inner
    ty, qfi, rqi = psc
    pc = GTPPDUSessionContainer(type=ty, QFI=qfi, RQI=rqi) if ty == 0 else GTPPDUSessionContainer(type=ty, QFI=qfi)
    return GTP_U_Header(gtp_type=255, teid=teid, E=1, next_ex=0x85) / pc / inner


def gtp_pkt(src, dst, teid, inner, psc=None, ttl=64, tos=0, ident=0, flags="DF", sport=2152):
    return IP(src=src, dst=dst, ttl=ttl, tos=tos, id=ident, flags=flags) / UDP(sport=sport, dport=2152) / gtpu(
        teid, inner, psc)


def nh_of(inner):
    return NH_IPV6 if isinstance(inner, IPv6) else NH_IPV4


# --- H.M.GTP4.D ---------------------------------------------------------------------------


@pytest.mark.parametrize("psc,args", [
    (None, dict()),
    ((1, 9, 0), dict(qfi=9)),               # uplink container: QFI, no RQI
    ((0, 63, 1), dict(qfi=63, r=1)),        # downlink container: RQI -> R
], ids=["no_container", "ul_qfi9", "dl_qfi63_rqi"])
@pytest.mark.parametrize("inner", [user6, user4], ids=["ipv6", "ipv4"])
def test_gtp4_d_without_segments(run_sr6, psc, args, inner):
    pkt = gtp_pkt(GNB, UPF, 0x12345678, inner(), psc=psc, ttl=30, tos=0xB8)
    res = run_sr6(config(D_LINE), [rx(pkt)])
    # §6.7: SA from src-prefix + IPv4 SA (Fig. 10), DA = B (Fig. 11), no SRH; the T-PDU
    # as it was; hop limit = TTL less this router's decrement, traffic class = DSCP/ECN.
    b = gtp4_sid(SR_PREFIX, UPF, args_mob_session(teid=0x12345678, **args))
    exp = IPv6(src=v4_in_src(SRC_PREFIX, GNB), dst=b, hlim=29, tc=0xB8, fl=0, nh=nh_of(inner())) / inner()
    res.expect(eth1=[tx(exp, "eth1")])
    assert sid_entry(res.json, UPF + "/32")["packets"] == 1


def test_gtp4_d_with_segments(run_sr6):
    line = D_LINE.replace("dev eth1", "segs fc00:2::a,fc00:2::b dev eth1")
    pkt = gtp_pkt(GNB, UPF, 200, user6(), psc=(1, 5, 0))
    res = run_sr6(config(line), [rx(pkt)])
    b = gtp4_sid(SR_PREFIX, UPF, args_mob_session(qfi=5, teid=200))
    # H.Encaps of S1, S2, B: to S1, Segment List [B, S2, S1], Segments Left 2.
    exp = (IPv6(src=v4_in_src(SRC_PREFIX, GNB), dst="fc00:2::a", hlim=63, nh=43)
           / srh([b, "fc00:2::b", "fc00:2::a"], segleft=2, nh=NH_IPV6) / user6())
    res.expect(eth1=[tx(exp, "eth1")])


def test_gtp4_d_vpp_vector(run_sr6):
    # VPP srv6-mobile TestSRv6TMGTP4D: IPv4 2.2.2.2 -> 1.1.1.1, TEID 200, T-PDU IPv6
    # B::1 -> A::1 UDP 1000 -> 23; sr-prefix D4::/32, v6src_prefix C1::/64, policy D2::,
    # D3::; VPP checks Segment List[0] == d4:0:101:101::c800:0.
    cfg = config(
        "ip route add 1.1.1.1/32 encap seg6local action H.M.GTP4.D sr-prefix d4::/32 src-prefix c1::/64 "
        "segs d2::,d3:: dev eth1",
        "ip -6 route add d2::/16 via fc00:12::2 dev eth1",
    )
    inner = IPv6(src="b::1", dst="a::1") / UDP(sport=1000, dport=23)
    pkt = IP(src="2.2.2.2", dst="1.1.1.1", flags="DF") / UDP(sport=2152, dport=2152) / GTP_U_Header(
        gtp_type="g_pdu", teid=200) / inner
    res = run_sr6(cfg, [rx(pkt)])
    out = res.pkts("eth1")
    assert len(out) == 1
    s = out[0][IPv6ExtHdrSegmentRouting]
    assert str(s.addresses[0]) == "d4:0:101:101::c800:0"
    assert out[0][IPv6].src == "c1::202:202:0:0"
    exp = (IPv6(src="c1::202:202:0:0", dst="d2::", hlim=63, nh=43)
           / srh(["d4:0:101:101::c800:0", "d3::", "d2::"], segleft=2, nh=NH_IPV6) / inner)
    res.expect(eth1=[tx(exp, "eth1")])


def test_gtp4_d_sequence_number_and_ipv4_options(run_sr6):
    # The optional fields (S set: a sequence number) and IPv4 options are headers like
    # the others: they go, and nothing of them is carried (§6.7 S02).
    g = GTP_U_Header(gtp_type=255, teid=77, S=1, seq=0x1234) / user4()
    pkt = IP(src=GNB, dst=UPF, ttl=9, flags="DF", options=[IPOption_RR(routers=["0.0.0.0"])]) / UDP(
        sport=2152, dport=2152) / g
    assert pkt[IP].ihl is None and len(bytes(pkt[IP])) - len(bytes(pkt[UDP])) > 20
    res = run_sr6(config(D_LINE), [rx(pkt)])
    b = gtp4_sid(SR_PREFIX, UPF, args_mob_session(teid=77))
    exp = IPv6(src=v4_in_src(SRC_PREFIX, GNB), dst=b, hlim=8, nh=NH_IPV4) / user4()
    res.expect(eth1=[tx(exp, "eth1")])


def test_gtp4_d_ttl_1_time_exceeded(run_sr6):
    # Hop limit = TTL, then forwarded: a TTL of 1 is answered as forwarding answers the
    # IPv6 packet (behaviours.md "ICMPv6 errors"): Time Exceeded to its source, from the
    # arrival device's address (rule 5), quoting the packet as made.
    cfg = config(D_LINE, "ip -6 route add fc00:5::/64 via fc00:12::2 dev eth1")
    pkt = gtp_pkt(GNB, UPF, 9, user6(), ttl=1)
    res = run_sr6(cfg, [rx(pkt)])
    made = IPv6(src=v4_in_src(SRC_PREFIX, GNB), dst=gtp4_sid(SR_PREFIX, UPF, args_mob_session(teid=9)), hlim=1,
                nh=NH_IPV6) / user6()
    err = icmp6_error("time_exceeded", bytes(made), src="fc00:1::1", dst=made.src)
    res.expect(eth1=[tx(err, "eth1")])


# Non-T-PDU messages and malformed GTP-U: dropped with a counted reason, nothing sent.
def _raw_gtp(b: bytes, **kw):
    return IP(src=GNB, dst=UPF, flags="DF", **kw) / UDP(sport=2152, dport=2152) / Raw(b)


# Signalling that does not cross SRv6 (test_mobile_signalling.py has what does): a
# Supported Extension Headers Notification (TS 29.281 §7.2.3), an Error Indication whose
# 252 bytes of IEs do not fit the SRH TLV.
SEHN = GTP_U_Header(gtp_type=31, teid=0)
LONG_ERROR_INDICATION = GTP_U_Header(gtp_type=26, teid=0) / Raw(b"\x10" * 252)
GOOD = bytes(gtpu(1, user6()))


def _bad_udp_checksum():
    p = IP(bytes(gtp_pkt(GNB, UPF, 1, user6())))
    p[UDP].chksum ^= 0x0101
    return p


@pytest.mark.parametrize("pkt,reason", [
    (IP(src=GNB, dst=UPF) / UDP(sport=2152, dport=2152) / SEHN, "gtpu_signalling"),
    (IP(src=GNB, dst=UPF) / UDP(sport=2152, dport=2152) / LONG_ERROR_INDICATION, "gtpu_signalling"),
    (_raw_gtp(GOOD[:7]), "gtpu_malformed"),                                   # short
    (_raw_gtp(bytes([0x50]) + GOOD[1:]), "gtpu_malformed"),                   # version 2
    (_raw_gtp(bytes([0x20]) + GOOD[1:]), "gtpu_malformed"),                   # PT 0 (GTP')
    (_raw_gtp(GOOD[:3] + bytes([GOOD[3] + 1]) + GOOD[4:]), "gtpu_malformed"),  # Length too long
    (_raw_gtp(GOOD[:3] + bytes([GOOD[3] - 1]) + GOOD[4:]), "gtpu_malformed"),  # Length too short
    (_bad_udp_checksum(), "gtpu_malformed"),
    (IP(src=GNB, dst=UPF) / UDP(sport=2152, dport=2152) / GTP_U_Header(gtp_type=255, teid=1) / Raw(b"\x11" * 20),
     "wrong_next_header"),                                                    # T-PDU not IP
    (IP(src=GNB, dst=UPF) / UDP(sport=2152, dport=2153) / Raw(GOOD), "not_gtpu"),
    (IP(src=GNB, dst=UPF, proto=6) / Raw(GOOD), "not_gtpu"),
], ids=["ext_hdr_notification", "error_indication_too_long", "short", "version2", "gtp_prime", "length_long",
        "length_short", "udp_checksum", "tpdu_not_ip", "port_2153", "not_udp"])
def test_gtp4_d_drops(run_sr6, pkt, reason):
    res = run_sr6(config(D_LINE), [rx(pkt)])
    res.expect_nothing()
    assert res.drops() == {reason: 1}
    e = sid_entry(res.json, UPF + "/32")
    assert (e["packets"], e["errors"]) == (0, 1)


# --- End.M.GTP4.E -------------------------------------------------------------------------

DST4 = "10.2.0.9"     # behind B (eth1)
SRC4 = "203.0.113.7"


def to_e(args, inner, hlim=40, tc=0xB8, sl=None, segs=None, src_rest=0xDD):
    sid = gtp4_sid(E_SID, DST4, args)
    src = v4_in_src(E_SRC_PREFIX, SRC4, src_rest)
    if sl is None:
        return IPv6(src=src, dst=sid, hlim=hlim, tc=tc, nh=nh_of(inner)) / inner
    return IPv6(src=src, dst=sid, hlim=hlim, tc=tc) / srh(segs or [sid], segleft=sl, nh=nh_of(inner)) / inner


@pytest.mark.parametrize("args,psc", [
    (dict(teid=0xBBBBBBBB), None),
    (dict(qfi=9, teid=7), (0, 9, 0)),
    (dict(qfi=1, r=1, teid=1), (0, 1, 1)),
    (dict(r=1, teid=2), (0, 0, 1)),
    (dict(qfi=5, u=1, teid=3), (0, 5, 0)),     # U ignored on receipt (§6.1)
], ids=["no_qfi", "qfi9", "qfi1_r", "r_only", "u_ignored"])
@pytest.mark.parametrize("inner", [user4, user6], ids=["ipv4", "ipv6"])
@pytest.mark.parametrize("with_srh", [False, True], ids=["no_srh", "srh_sl0"])
def test_gtp4_e(run_sr6, tshark_bin, tmp_path, args, psc, inner, with_srh):
    pkt = to_e(args_mob_session(**args), inner(), sl=0 if with_srh else None)
    res = run_sr6(config(E_LINE), [rx(pkt, "eth1")], in_dev="eth1")
    exp = gtp_pkt(SRC4, DST4, args["teid"], inner(), psc=psc, ttl=39, tos=0xB8)
    res.expect(eth1=[tx(exp, "eth1")])
    # tshark reads the TEID and QFI where TS 29.281 / TS 38.415 put them.
    pcap = tmp_path / "gtp.pcap"
    wrpcap(str(pcap), [Ether(res.frames("eth1")[0])])
    out = subprocess.run([tshark_bin, "-n", "-r", str(pcap), "-T", "fields", "-E", "separator=|",
                          "-e", "gtp.teid", "-e", "gtp.ext_hdr.pdu_ses_con.qos_flow_id"],
                         capture_output=True, text=True, check=True).stdout.strip()
    teid, qfi = out.split("|")
    assert int(teid, 0) == args["teid"]
    assert (int(qfi, 0) if qfi else None) == (psc[1] if psc else None)


def test_gtp4_e_hop_limit_1_time_exceeded(run_sr6):
    # TTL = hop limit, then forwarded: TTL 1 is answered with ICMP Time Exceeded to the
    # IPv4 source, quoting the GTP-U packet as made (RFC 1812 §4.3.2.3, behaviours.md
    # "ICMPv6 errors" for the ICMPv4 ones).
    cfg = config(E_LINE, "ip route add 203.0.113.0/24 via 10.0.12.2 dev eth1")
    pkt = to_e(args_mob_session(teid=5), user4(), hlim=1, tc=0)
    res = run_sr6(cfg, [rx(pkt, "eth1")], in_dev="eth1")
    made = gtp_pkt(SRC4, DST4, 5, user4(), ttl=1)
    err = IP(src="10.0.12.1", dst=SRC4, ttl=64, tos=0xC0, id=0) / ICMP(type=11, code=0) / Raw(bytes(made)[:576 - 28])
    res.expect(eth1=[tx(err, "eth1")])


def test_gtp4_e_vpp_vector(run_sr6):
    # VPP srv6-mobile TestSRv6EndMGTP4E: DA = aa*4 | IPv4 DA | 0x11 | bb*4 | 11*3 (the
    # locator a /32), SA = cc*8 | 192.168.192.10 | dd dd 11 11, v4src_position 64; VPP
    # checks IPv4 DA, SA and TEID 0xbbbbbbbb. 0x11 = QFI 4, R 0, U 1.
    dst4 = ipaddress.IPv4Address(DST4).packed
    da = str(ipaddress.IPv6Address(b"\xaa" * 4 + dst4 + b"\x11" + b"\xbb" * 4 + b"\x11" * 3))
    sa = str(ipaddress.IPv6Address(b"\xcc" * 8 + ipaddress.IPv4Address("192.168.192.10").packed + b"\xdd\xdd\x11\x11"))
    cfg = config("ip -6 route add aaaa:aaaa::/32 encap seg6local action End.M.GTP4.E v4src-position 64 dev eth0")
    inner = IPv6(dst="a::1", src="b::1") / UDP(sport=1000, dport=23)
    pkt = IPv6(dst=da, src=sa) / srh([da], segleft=0, nh=NH_IPV6) / inner
    res = run_sr6(cfg, [rx(pkt, "eth1")], in_dev="eth1")
    exp = gtp_pkt("192.168.192.10", DST4, 0xBBBBBBBB, inner, psc=(0, 4, 0), ttl=63)
    res.expect(eth1=[tx(exp, "eth1")])


def test_gtp4_e_segments_left_param_problem(run_sr6):
    args = args_mob_session(teid=1)
    sid = gtp4_sid(E_SID, DST4, args)
    pkt = to_e(args, user4(), sl=1, segs=["fc00:2::9", sid])
    cfg = config(E_LINE, "ip -6 route add fc00:7::/64 via fc00:12::2 dev eth1")
    res = run_sr6(cfg, [rx(pkt, "eth1")], in_dev="eth1")
    # §6.6 S02-S03: Parameter Problem code 0, pointer at Segments Left (40 + 3).
    err = icmp6_error("param_problem", bytes(pkt), src="fc00:12::1", dst=pkt[IPv6].src, code=0, ptr=43)
    res.expect(eth1=[tx(err, "eth1")])


def test_gtp4_e_upper_layer_not_ip(run_sr6):
    sid = gtp4_sid(E_SID, DST4, args_mob_session(teid=1))
    src = v4_in_src(E_SRC_PREFIX, SRC4)
    pkt = IPv6(src=src, dst=sid, nh=59) / Raw(payload(8))
    cfg = config(E_LINE, "ip -6 route add fc00:7::/64 via fc00:12::2 dev eth1")
    res = run_sr6(cfg, [rx(pkt, "eth1")], in_dev="eth1")
    # RFC 8986 §4.1.1: Parameter Problem code 4 at the upper-layer header.
    err = icmp6_error("param_problem", bytes(pkt), src="fc00:12::1", dst=src, code=4, ptr=40)
    res.expect(eth1=[tx(err, "eth1")])


# --- the round trip -----------------------------------------------------------------------


@pytest.mark.parametrize("psc", [None, (0, 9, 1), (0, 1, 0)], ids=["no_container", "dl_qfi9_rqi", "dl_qfi1"])
@pytest.mark.parametrize("inner", [user6, user4], ids=["ipv6", "ipv4"])
@pytest.mark.parametrize("sids,srcs", [(E_SID, E_SRC_PREFIX), ("fc00:3:0:2000::/52", "fc00:7::/61")],
                         ids=["56_64", "52_61"])
def test_round_trip_restores_the_gtp_u_packet(run_sr6, psc, inner, sids, srcs):
    # Router 1: H.M.GTP4.D whose sr-prefix is router 2's End.M.GTP4.E SIDs and whose
    # src-prefix puts the IPv4 source where router 2 looks for it (v4src-position = its
    # length); lengths that are not multiples of 8 too.
    d = config(f"ip route add {UPF}/32 encap seg6local action H.M.GTP4.D sr-prefix {sids} "
               f"src-prefix {srcs} dev eth2")
    pos = ipaddress.IPv6Network(srcs).prefixlen
    e = config(f"ip -6 route add {sids} encap seg6local action End.M.GTP4.E v4src-position {pos} dev eth0",
               f"ip route add {UPF}/32 via 10.0.12.2 dev eth1")
    orig = gtp_pkt(GNB, UPF, 0xDEADBEEF, inner(), psc=psc, ttl=64, tos=0x2C)
    r1 = run_sr6(d, [rx(orig)])
    # The SIDs are behind C (fc00:3::/48, eth2); the layouts are the RFC's (a
    # mistake both routers made alike would not show in the round trip).
    qfi, r = (psc[1], psc[2]) if psc else (0, 0)
    mid = IPv6(src=v4_in_src(srcs, GNB), dst=gtp4_sid(sids, UPF, args_mob_session(qfi=qfi, r=r, teid=0xDEADBEEF)),
               hlim=63, tc=0x2C, nh=nh_of(inner())) / inner()
    r1.expect(eth2=[tx(mid, "eth2")])
    srv6 = r1.frames("eth2")
    r2 = run_sr6(e, [rx(IPv6(l3(srv6[0])), "eth2")], in_dev="eth2")
    # Field for field but the TTL (one less per router) and the header checksum.
    back = orig.copy()
    back[IP].ttl = 62
    back[IP].chksum = None
    r2.expect(eth1=[tx(IP(bytes(back)), "eth1")])


# --- configuration ------------------------------------------------------------------------


@pytest.mark.parametrize("line,token,why", [
    (D_LINE.replace(SR_PREFIX, "fc00:2:0:180::/57"), "fc00:2:0:180::/57", "leaves 71 bits"),
    (D_LINE.replace(SRC_PREFIX, "fc00:5::/97"), "fc00:5::/97", "the IPv4 source needs 32"),
    (E_LINE.replace(E_SID, "fc00:3:0:280::/57"), "fc00:3:0:280::/57", "a /57 SID leaves 71 bits"),
    (E_LINE.replace("64", "97"), "97", "leaves no room"),
    (D_LINE.replace(f"{UPF}/32", "fc00:9::/64").replace("ip route", "ip -6 route"), "fc00:9::/64",
     "its route is an IPv4 prefix"),
    (D_LINE.replace(f" src-prefix {SRC_PREFIX}", ""), "H.M.GTP4.D", "requires src-prefix P/LEN"),
    (E_LINE.replace(" v4src-position 64", ""), "End.M.GTP4.E", "requires v4src-position N"),
])
def test_config_errors_name_file_line_col(sr6_cli, line, token, why):
    text = config(line)
    n = text.count("\n")
    r = sr6_cli(text, [rx(IP(src=GNB, dst=UPF))])
    assert r.returncode != 0
    assert f"{r.config_path.name}:{n}:{line.index(token) + 1}:" in r.stderr, r.stderr
    assert why in r.stderr, r.stderr


def test_behaviours_lists_the_rfc_names(sr6_bin):
    out = subprocess.run([str(sr6_bin), "behaviours"], capture_output=True, text=True, check=True).stdout
    for kw, rfc in [("H.M.GTP4.D", "RFC 9433 §6.7"), ("End.M.GTP4.E", "RFC 9433 §6.6")]:
        assert any(l.startswith(kw + " ") for l in out.splitlines()), out
        assert rfc in out, out
