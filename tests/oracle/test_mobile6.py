"""The GTP-U over IPv6 translations of RFC 9433 (behaviours.md "Mobile user plane"):
End.M.GTP6.D (§6.3), End.M.GTP6.Di (§6.4) and End.M.GTP6.E (§6.5), sr6 extensions of
the seg6local grammar.

Everything expected is built here with scapy's GTP-U layers (``scapy.contrib.gtp``) from
the RFC's pseudocode:

* Args.Mob.Session (§6.1, Fig. 8): QFI (6) | R (1) | U (1) | TEID (32), 40 bits;
* End.M.GTP6.D (§6.3): the IPv6, UDP and GTP-U headers go (S03), a new IPv6 header from A
  (``src``, S05) to S1 (S06) with its own SRH S1..Sn, B (S04), B = ``sr-prefix`` |
  Args.Mob.Session | zeros written in SRH[0] (S08); SL != 0 at the SID: Parameter
  Problem at Segments Left (SRH processing S02-S03); what is not a T-PDU dropped (S11);
* End.M.GTP6.Di (§6.4): the same with SRH[0] = the original destination, unchanged;
* End.M.GTP6.E (§6.5): at SL 1, the IPv6 header and its extension headers go, IPv6 from A
  to SRH[0] / UDP 2152 / GTP-U with the SID's TEID (and a downlink PDU Session Container
  when QFI or R is not 0); SL != 1: Parameter Problem at Segments Left.

and from behaviours.md's choices where the RFC leaves them open: the new IPv6 header keeps
the traffic class, flow label and hop limit of the one it replaces (then decremented once
as the packet is forwarded); GTP-U signalling that cannot cross SRv6 dropped as
``gtpu_signalling`` (what can is test_mobile_signalling.py's).  Every frame
sr6 emits is decoded by tshark (conftest), which must find no malformed packet or bad
checksum; the GTP-U ones here must show the TEID and QFI the SID carried.
"""
import ipaddress
import subprocess

import pytest
from scapy.contrib.gtp import GTP_U_Header, GTPPDUSessionContainer
from scapy.layers.inet6 import IPv6ExtHdrFragment

from sr6_oracle import (
    IP, NH_IPV4, NH_IPV6, UDP, Ether, IPv6, IPv6ExtHdrSegmentRouting, Raw, config,
    icmp6_error, l3, payload, rx, sid_entry, srh, tx, wrpcap,
)

GNB = "fc00:a::5"               # a gNB behind eth0
UPF = "fc00:9::1"               # the End.M.GTP6.D SID: the UPF address the gNB sends to
UPF_DI = "fc00:9::2"            # the End.M.GTP6.Di SID
A = "fc00:5::1"                 # the SRGW's source (``src``)
SR_PREFIX = "fc00:2:0:100::/64"  # B's prefix, behind eth1 (fc00:2::/48)
E_SID = "fc00:3:0:300::/64"     # End.M.GTP6.E SIDs (the route's prefix)
E_SRC = "fc00:5::2"

D_LINE = f"ip -6 route add {UPF}/128 encap seg6local action End.M.GTP6.D sr-prefix {SR_PREFIX} src {A} dev eth1"
DI_LINE = f"ip -6 route add {UPF_DI}/128 encap seg6local action End.M.GTP6.Di src {A} segs fc00:2::a dev eth1"
E_LINE = f"ip -6 route add {E_SID} encap seg6local action End.M.GTP6.E src {E_SRC} dev eth0"


# --- the RFC's layouts, independently of sr6 ----------------------------------------------


def args_mob_session(qfi=0, r=0, u=0, teid=0) -> int:
    """RFC 9433 §6.1 Fig. 8."""
    return (qfi & 0x3F) << 34 | (r & 1) << 33 | (u & 1) << 32 | (teid & 0xFFFFFFFF)


def gtp6_sid(prefix: str, args: int) -> str:
    """§6.3 S08, §6.5: prefix | Args.Mob.Session | 0 padded."""
    net = ipaddress.IPv6Network(prefix)
    return str(ipaddress.IPv6Address(int(net.network_address) | args << (128 - net.prefixlen - 40)))


def user6(n=20):
    return IPv6(src="2001:db8:1::5", dst="2001:db8:2::9", hlim=50) / UDP(sport=40001, dport=40002) / payload(n)


def user4(n=20):
    return IP(src="100.64.0.5", dst="198.18.0.9", ttl=50, id=7) / UDP(sport=40001, dport=40002) / payload(n)


def gtpu(teid, inner, psc=None):
    """A GTP-U T-PDU (TS 29.281 §5.1), with a PDU Session Container ``psc`` = (PDU type,
    QFI, RQI) if given (TS 38.415 §5.5.2)."""
    if psc is None:
        return GTP_U_Header(gtp_type=255, teid=teid) / inner
    ty, qfi, rqi = psc
    pc = GTPPDUSessionContainer(type=ty, QFI=qfi, RQI=rqi) if ty == 0 else GTPPDUSessionContainer(type=ty, QFI=qfi)
    return GTP_U_Header(gtp_type=255, teid=teid, E=1, next_ex=0x85) / pc / inner


def gtp6_pkt(src, dst, teid, inner, psc=None, hlim=64, tc=0, fl=0):
    return IPv6(src=src, dst=dst, hlim=hlim, tc=tc, fl=fl) / UDP(sport=2152, dport=2152) / gtpu(teid, inner, psc)


def nh_of(inner):
    return NH_IPV6 if isinstance(inner, IPv6) else NH_IPV4


def tshark_teid_qfi(tshark_bin, tmp_path, frame):
    pcap = tmp_path / "gtp.pcap"
    wrpcap(str(pcap), [Ether(frame)])
    out = subprocess.run([tshark_bin, "-n", "-r", str(pcap), "-T", "fields", "-E", "separator=|",
                          "-e", "gtp.teid", "-e", "gtp.ext_hdr.pdu_ses_con.qos_flow_id"],
                         capture_output=True, text=True, check=True).stdout.strip()
    teid, qfi = out.split("|")
    return int(teid, 0), (int(qfi, 0) if qfi else None)


# --- End.M.GTP6.D -------------------------------------------------------------------------


@pytest.mark.parametrize("psc,args", [
    (None, dict()),
    ((1, 9, 0), dict(qfi=9)),               # uplink container: QFI
    ((0, 63, 1), dict(qfi=63, r=1)),        # downlink container: RQI -> R
], ids=["no_container", "ul_qfi9", "dl_qfi63_rqi"])
@pytest.mark.parametrize("inner", [user6, user4], ids=["ipv6", "ipv4"])
def test_gtp6_d_without_segments(run_sr6, psc, args, inner):
    pkt = gtp6_pkt(GNB, UPF, 0x12345678, inner(), psc=psc, hlim=30, tc=0xB8, fl=0x12345)
    res = run_sr6(config(D_LINE), [rx(pkt)])
    # S04-S08: from A to B, its own SRH holding B alone; the T-PDU as it was.
    b = gtp6_sid(SR_PREFIX, args_mob_session(teid=0x12345678, **args))
    exp = (IPv6(src=A, dst=b, hlim=29, tc=0xB8, fl=0x12345, nh=43)
           / srh([b], segleft=0, nh=nh_of(inner())) / inner())
    res.expect(eth1=[tx(exp, "eth1")])
    assert sid_entry(res.json, UPF + "/128")["packets"] == 1


def test_gtp6_d_with_segments(run_sr6):
    line = D_LINE.replace("dev eth1", "segs fc00:2::a,fc00:2::b dev eth1")
    pkt = gtp6_pkt(GNB, UPF, 200, user6(), psc=(1, 5, 0))
    res = run_sr6(config(line), [rx(pkt)])
    b = gtp6_sid(SR_PREFIX, args_mob_session(qfi=5, teid=200))
    # S04-S06: to S1, Segment List [B, S2, S1], Segments Left 2.
    exp = (IPv6(src=A, dst="fc00:2::a", hlim=63, nh=43)
           / srh([b, "fc00:2::b", "fc00:2::a"], segleft=2, nh=NH_IPV6) / user6())
    res.expect(eth1=[tx(exp, "eth1")])


def test_gtp6_d_prefix_not_byte_aligned(run_sr6):
    line = D_LINE.replace(SR_PREFIX, "fc00:2:0:100::/61")
    pkt = gtp6_pkt(GNB, UPF, 0xA5A5A5A5, user4(), psc=(0, 33, 1))
    res = run_sr6(config(line), [rx(pkt)])
    b = gtp6_sid("fc00:2:0:100::/61", args_mob_session(qfi=33, r=1, teid=0xA5A5A5A5))
    exp = IPv6(src=A, dst=b, hlim=63, nh=43) / srh([b], segleft=0, nh=NH_IPV4) / user4()
    res.expect(eth1=[tx(exp, "eth1")])


def test_gtp6_d_segments_left_param_problem(run_sr6):
    pkt = (IPv6(src=GNB, dst=UPF) / srh(["fc00:2::9", UPF], segleft=1, nh=17)
           / UDP(sport=2152, dport=2152) / gtpu(1, user6()))
    res = run_sr6(config(D_LINE), [rx(pkt)])
    # §6.3 SRH processing S02-S03: code 0, pointer at Segments Left (40 + 3).
    err = icmp6_error("param_problem", bytes(pkt), src="fc00:1::1", dst=GNB, code=0, ptr=43)
    res.expect(eth0=[tx(err, "eth0")])


def test_gtp6_d_srh_segments_left_0_translated(run_sr6):
    # An SRH whose Segments Left is 0 is processed (S05) and goes with the IPv6 header.
    pkt = (IPv6(src=GNB, dst=UPF, hlim=9) / srh([UPF], segleft=0, nh=17)
           / UDP(sport=2152, dport=2152) / gtpu(3, user6()))
    res = run_sr6(config(D_LINE), [rx(pkt)])
    b = gtp6_sid(SR_PREFIX, args_mob_session(teid=3))
    exp = IPv6(src=A, dst=b, hlim=8, nh=43) / srh([b], segleft=0, nh=NH_IPV6) / user6()
    res.expect(eth1=[tx(exp, "eth1")])


def test_gtp6_d_hop_limit_1_time_exceeded(run_sr6):
    # The hop limit carried, then forwarded: 1 is answered as forwarding answers the
    # packet made (behaviours.md "ICMPv6 errors"): Time Exceeded to its source A, from the
    # arrival device's address, quoting it.
    cfg = config(D_LINE, "ip -6 route add fc00:5::/64 via fc00:12::2 dev eth1")
    pkt = gtp6_pkt(GNB, UPF, 9, user6(), hlim=1)
    res = run_sr6(cfg, [rx(pkt)])
    b = gtp6_sid(SR_PREFIX, args_mob_session(teid=9))
    made = IPv6(src=A, dst=b, hlim=1, nh=43) / srh([b], segleft=0, nh=NH_IPV6) / user6()
    err = icmp6_error("time_exceeded", bytes(made), src="fc00:1::1", dst=A)
    res.expect(eth1=[tx(err, "eth1")])


def _raw(b: bytes, dst=UPF, chksum=None):
    return IPv6(src=GNB, dst=dst) / UDP(sport=2152, dport=2152, chksum=chksum) / Raw(b)


GOOD = bytes(gtpu(1, user6()))


def _bad_udp_checksum(dst=UPF):
    p = IPv6(bytes(gtp6_pkt(GNB, dst, 1, user6())))
    p[UDP].chksum ^= 0x0101
    return p


def _drop_cases(dst):
    return [
        # Signalling that does not cross SRv6 (test_mobile_signalling.py has what does):
        # a Supported Extension Headers Notification, an Error Indication whose 252
        # bytes of IEs do not fit the SRH TLV.
        (IPv6(src=GNB, dst=dst) / UDP(sport=2152, dport=2152) / GTP_U_Header(gtp_type=31, teid=0), "gtpu_signalling"),
        (IPv6(src=GNB, dst=dst) / UDP(sport=2152, dport=2152) / GTP_U_Header(gtp_type=26, teid=0)
         / Raw(b"\x10" * 252), "gtpu_signalling"),
        (_raw(GOOD[:7], dst), "gtpu_malformed"),                                    # short
        (_raw(bytes([0x50]) + GOOD[1:], dst), "gtpu_malformed"),                    # version 2
        (_raw(bytes([0x20]) + GOOD[1:], dst), "gtpu_malformed"),                    # PT 0 (GTP')
        (_raw(GOOD[:3] + bytes([GOOD[3] + 1]) + GOOD[4:], dst), "gtpu_malformed"),  # Length too long
        (_raw(GOOD[:3] + bytes([GOOD[3] - 1]) + GOOD[4:], dst), "gtpu_malformed"),  # Length too short
        (_bad_udp_checksum(dst), "gtpu_malformed"),
        (_raw(GOOD, dst, chksum=0), "gtpu_malformed"),                              # RFC 8200 §8.1
        (IPv6(src=GNB, dst=dst) / UDP(sport=2152, dport=2152) / GTP_U_Header(gtp_type=255, teid=1)
         / Raw(b"\x11" * 20), "wrong_next_header"),                                 # T-PDU not IP
        (IPv6(src=GNB, dst=dst) / UDP(sport=2152, dport=2153) / Raw(GOOD), "not_gtpu"),
        (IPv6(src=GNB, dst=dst, nh=6) / Raw(GOOD), "not_gtpu"),
        (IPv6(src=GNB, dst=dst) / IPv6ExtHdrFragment(offset=0, m=1, nh=17) / UDP(sport=2152, dport=2152)
         / Raw(GOOD), "fragment"),
    ]


DROP_IDS = ["ext_hdr_notification", "error_indication_too_long", "short", "version2", "gtp_prime", "length_long",
            "length_short", "udp_checksum", "udp_checksum_0", "tpdu_not_ip", "port_2153", "not_udp", "fragment"]


@pytest.mark.parametrize("case", range(len(DROP_IDS)), ids=DROP_IDS)
@pytest.mark.parametrize("which", ["d", "di"])
def test_gtp6_d_and_di_drops(run_sr6, case, which):
    dst, line = (UPF, D_LINE) if which == "d" else (UPF_DI, DI_LINE)
    pkt, reason = _drop_cases(dst)[case]
    res = run_sr6(config(line), [rx(pkt)])
    res.expect_nothing()
    assert res.drops() == {reason: 1}
    e = sid_entry(res.json, dst + "/128")
    assert (e["packets"], e["errors"]) == (0, 1)


# --- End.M.GTP6.Di ------------------------------------------------------------------------


@pytest.mark.parametrize("psc", [None, (1, 5, 0)], ids=["no_container", "ul_qfi5"])
def test_gtp6_di_keeps_the_destination(run_sr6, psc):
    pkt = gtp6_pkt(GNB, UPF_DI, 0x123, user6(), psc=psc, hlim=20, tc=4, fl=7)
    res = run_sr6(config(DI_LINE), [rx(pkt)])
    # §6.4: SRH S1, D with D the original destination unchanged (no Args.Mob.Session).
    exp = (IPv6(src=A, dst="fc00:2::a", hlim=19, tc=4, fl=7, nh=43)
           / srh([UPF_DI, "fc00:2::a"], segleft=1, nh=NH_IPV6) / user6())
    res.expect(eth1=[tx(exp, "eth1")])


def test_gtp6_di_vpp_vector(run_sr6):
    # VPP srv6-mobile TestSRv6EndMGTP6D (end.m.gtp6.d ... drop-in): 2002::1 -> 2001::1,
    # TEID 200, T-PDU B::1 -> A::1 UDP 1000 -> 23, encaps source A1::1, policy D2::, D3::;
    # VPP checks Segment List[0] == 2001::1, the original destination, as §6.4 says. (VPP
    # also writes d4::c800:0, a D4::/64 SID with the session, in Segment List[1]; §6.4
    # writes no Args.Mob.Session, and sr6 follows it: the list is the policy's.)
    cfg = config("ip -6 route add 2001::1/128 encap seg6local action End.M.GTP6.Di src a1::1 segs d2::,d3:: dev eth1",
                 "ip -6 route add d2::/64 via fc00:12::2 dev eth1")
    inner = IPv6(dst="a::1", src="b::1") / UDP(sport=1000, dport=23)
    pkt = IPv6(dst="2001::1", src="2002::1") / UDP(sport=2152, dport=2152) / GTP_U_Header(gtp_type="g_pdu",
                                                                                          teid=200) / inner
    res = run_sr6(cfg, [rx(pkt)])
    out = res.pkts("eth1")
    assert len(out) == 1
    assert str(out[0][IPv6ExtHdrSegmentRouting].addresses[0]) == "2001::1"
    exp = IPv6(src="a1::1", dst="d2::", hlim=63, nh=43) / srh(["2001::1", "d3::", "d2::"], segleft=2,
                                                              nh=NH_IPV6) / inner
    res.expect(eth1=[tx(exp, "eth1")])


# --- End.M.GTP6.E -------------------------------------------------------------------------


def to_e(args, inner, dst=GNB, hlim=40, tc=0xB8, fl=0x54321, sl=1, src="fc00:3::77"):
    sid = gtp6_sid(E_SID, args)
    return IPv6(src=src, dst=sid, hlim=hlim, tc=tc, fl=fl) / srh([dst, sid], segleft=sl, nh=nh_of(inner)) / inner


@pytest.mark.parametrize("args,psc", [
    (dict(teid=0xBBBBBBBB), None),
    (dict(qfi=9, teid=7), (0, 9, 0)),
    (dict(qfi=1, r=1, teid=1), (0, 1, 1)),
    (dict(r=1, teid=2), (0, 0, 1)),
    (dict(qfi=5, u=1, teid=3), (0, 5, 0)),     # U ignored on receipt (§6.1)
], ids=["no_qfi", "qfi9", "qfi1_r", "r_only", "u_ignored"])
@pytest.mark.parametrize("inner", [user4, user6], ids=["ipv4", "ipv6"])
def test_gtp6_e(run_sr6, tshark_bin, tmp_path, args, psc, inner):
    pkt = to_e(args_mob_session(**args), inner())
    res = run_sr6(config(E_LINE), [rx(pkt, "eth2")], in_dev="eth2")
    # §6.5: from A to SRH[0], the traffic class, flow label and hop limit carried.
    exp = gtp6_pkt(E_SRC, GNB, args["teid"], inner(), psc=psc, hlim=39, tc=0xB8, fl=0x54321)
    res.expect(eth0=[tx(exp, "eth0")])
    assert tshark_teid_qfi(tshark_bin, tmp_path, res.frames("eth0")[0]) == (args["teid"], psc[1] if psc else None)


def test_gtp6_e_vpp_vector(run_sr6):
    # VPP srv6-mobile TestSRv6EndMGTP6E: SID aa*8 (the /64) | 00 (QFI 0, R 0, U 0) |
    # bb*4 (TEID) | 00*3, from cc*8 dd*4 11*4, a reduced SRH [a1::1] with Segments Left 1;
    # VPP checks DA a1::1, SA (its source is the packet's; sr6's is `src`, set to it
    # here) and TEID 0xbbbbbbbb.
    da = str(ipaddress.IPv6Address(b"\xaa" * 8 + b"\x00" + b"\xbb" * 4 + b"\x00" * 3))
    sa = str(ipaddress.IPv6Address(b"\xcc" * 8 + b"\xdd" * 4 + b"\x11" * 4))
    cfg = config(f"ip -6 route add aaaa:aaaa:aaaa:aaaa::/64 encap seg6local action End.M.GTP6.E src {sa} dev eth0",
                 "ip -6 route add a1::/64 via fc00:12::2 dev eth1")
    inner = IPv6(dst="a::1", src="b::1") / UDP(sport=1000, dport=23)
    pkt = IPv6(dst=da, src=sa) / srh(["a1::1"], segleft=1, lastentry=0, nh=NH_IPV6) / inner
    res = run_sr6(cfg, [rx(pkt, "eth2")], in_dev="eth2")
    out = res.pkts("eth1")
    assert len(out) == 1
    assert (out[0][IPv6].dst, out[0][IPv6].src, out[0][GTP_U_Header].teid) == ("a1::1", sa, 0xBBBBBBBB)
    res.expect(eth1=[tx(gtp6_pkt(sa, "a1::1", 0xBBBBBBBB, inner, hlim=63), "eth1")])


def test_gtp6_e_hop_limit_1_time_exceeded(run_sr6):
    cfg = config(E_LINE, "ip -6 route add fc00:5::/64 via fc00:12::2 dev eth1")
    pkt = to_e(args_mob_session(teid=5), user4(), hlim=1, tc=0, fl=0)
    res = run_sr6(cfg, [rx(pkt, "eth2")], in_dev="eth2")
    made = gtp6_pkt(E_SRC, GNB, 5, user4(), hlim=1)
    err = icmp6_error("time_exceeded", bytes(made), src="fc00:13::1", dst=E_SRC)
    res.expect(eth1=[tx(err, "eth1")])


@pytest.mark.parametrize("sl", [0, 2])
def test_gtp6_e_segments_left_not_1_param_problem(run_sr6, sl):
    args = args_mob_session(teid=1)
    sid = gtp6_sid(E_SID, args)
    pkt = IPv6(src="fc00:3::77", dst=sid) / srh([GNB, sid, "fc00:3::99"], segleft=sl, nh=NH_IPV4) / user4()
    res = run_sr6(config(E_LINE), [rx(pkt, "eth2")], in_dev="eth2")
    # §6.5 SRH processing S02-S03: code 0, pointer at Segments Left (40 + 3).
    err = icmp6_error("param_problem", bytes(pkt), src="fc00:13::1", dst="fc00:3::77", code=0, ptr=43)
    res.expect(eth2=[tx(err, "eth2")])


def test_gtp6_e_without_srh_or_ip_upper_layer(run_sr6):
    sid = gtp6_sid(E_SID, args_mob_session(teid=1))
    no_srh = IPv6(src="fc00:3::77", dst=sid, nh=NH_IPV4) / user4()
    not_ip = IPv6(src="fc00:3::77", dst=sid) / srh([GNB, sid], segleft=1, nh=59) / Raw(payload(8))
    res = run_sr6(config(E_LINE), [rx(no_srh, "eth2"), rx(not_ip, "eth2")], in_dev="eth2")
    # No SRH[0] to send to, or a T-PDU that is not IP: Parameter Problem code 4 at the
    # upper layer (RFC 8986 §4.1.1).
    e1 = icmp6_error("param_problem", bytes(no_srh), src="fc00:13::1", dst="fc00:3::77", code=4, ptr=40)
    e2 = icmp6_error("param_problem", bytes(not_ip), src="fc00:13::1", dst="fc00:3::77", code=4, ptr=40 + 40)
    res.expect(eth2=[tx(e1, "eth2"), tx(e2, "eth2")])


# --- the round trips ----------------------------------------------------------------------


@pytest.mark.parametrize("psc", [None, (0, 9, 1), (0, 1, 0)], ids=["no_container", "dl_qfi9_rqi", "dl_qfi1"])
@pytest.mark.parametrize("inner", [user6, user4], ids=["ipv6", "ipv4"])
def test_round_trip_drop_in_restores_the_gtp_u_packet(run_sr6, psc, inner):
    # §5.4 drop-in: SRGW-A (End.M.GTP6.Di) steers the session into a policy whose S1 is
    # SRGW-B's End.M.GTP6.E SID carrying it; SRGW-B (End.M.GTP6.E, src = the gNB)
    # rebuilds the GTP-U packet toward SRH[0], the original destination.
    qfi, r = (psc[1], psc[2]) if psc else (0, 0)
    e_sid = gtp6_sid("fc00:3:0:300::/64", args_mob_session(qfi=qfi, r=r, teid=0xDEADBEEF))
    di = config(f"ip -6 route add {UPF_DI}/128 encap seg6local action End.M.GTP6.Di src {A} segs {e_sid} dev eth2")
    e = config(f"ip -6 route add fc00:3:0:300::/64 encap seg6local action End.M.GTP6.E src {GNB} dev eth0",
               f"ip -6 route add {UPF_DI}/128 via fc00:12::2 dev eth1")
    orig = gtp6_pkt(GNB, UPF_DI, 0xDEADBEEF, inner(), psc=psc, hlim=64, tc=0x2C, fl=0xABCDE)
    r1 = run_sr6(di, [rx(orig)])
    mid = (IPv6(src=A, dst=e_sid, hlim=63, tc=0x2C, fl=0xABCDE, nh=43)
           / srh([UPF_DI, e_sid], segleft=1, nh=nh_of(inner())) / inner())
    r1.expect(eth2=[tx(mid, "eth2")])
    r2 = run_sr6(e, [rx(IPv6(l3(r1.frames("eth2")[0])), "eth2")], in_dev="eth2")
    # Field for field but the hop limit (one less per router).
    back = orig.copy()
    back[IPv6].hlim = 62
    r2.expect(eth1=[tx(IPv6(bytes(back)), "eth1")])


@pytest.mark.parametrize("plen", [64, 61])
def test_round_trip_d_then_e(run_sr6, plen):
    # End.M.GTP6.D's B carries the session to the SRv6 side; the downlink toward the gNB
    # (§5.3.1.2) carries it back in an End.M.GTP6.E SID whose prefix is the same: the
    # packet the UPF sends is built here from B as sr6 made it (SRH[0] = the gNB), and
    # End.M.GTP6.E must give back the session the gNB sent, field for field.
    pfx = f"fc00:3:0:300::/{plen}"
    d = config(f"ip -6 route add {UPF}/128 encap seg6local action End.M.GTP6.D sr-prefix {pfx} src {A} dev eth2")
    e = config(f"ip -6 route add {pfx} encap seg6local action End.M.GTP6.E src {UPF} dev eth0")
    orig = gtp6_pkt(GNB, UPF, 0x01020304, user6(), psc=(0, 17, 1), hlim=64, tc=0x10, fl=3)
    r1 = run_sr6(d, [rx(orig)])
    out = r1.pkts("eth2")
    assert len(out) == 1
    b = str(out[0][IPv6ExtHdrSegmentRouting].addresses[0])
    assert b == gtp6_sid(pfx, args_mob_session(qfi=17, r=1, teid=0x01020304))
    down = IPv6(src="fc00:3::77", dst=b, hlim=64, tc=0x10, fl=3) / srh([GNB, b], segleft=1, nh=NH_IPV6) / user6()
    r2 = run_sr6(e, [rx(down, "eth2")], in_dev="eth2")
    exp = gtp6_pkt(UPF, GNB, 0x01020304, user6(), psc=(0, 17, 1), hlim=63, tc=0x10, fl=3)
    r2.expect(eth0=[tx(exp, "eth0")])


# --- configuration ------------------------------------------------------------------------


@pytest.mark.parametrize("line,token,why", [
    (D_LINE.replace(SR_PREFIX, "fc00:2:0:100::/89"), "fc00:2:0:100::/89", "leaves 39 bits"),
    (E_LINE.replace(E_SID, "fc00:3:0:300::/89"), "fc00:3:0:300::/89", "a /89 SID leaves 39 bits"),
    (D_LINE.replace(f" src {A}", ""), "End.M.GTP6.D", "requires src ADDR"),
    (DI_LINE.replace(" segs fc00:2::a", ""), "End.M.GTP6.Di", "requires segs"),
    (E_LINE.replace(f" src {E_SRC}", ""), "End.M.GTP6.E", "requires src ADDR"),
    (DI_LINE.replace(f"{UPF_DI}/128", "192.0.2.1/32").replace("ip -6 route", "ip route"), "192.0.2.1/32",
     "needs an IPv6 prefix"),
    (E_LINE.replace(" dev eth0", " v4src-position 64 dev eth0"), "v4src-position", "does not take"),
])
def test_config_errors_name_file_line_col(sr6_cli, line, token, why):
    text = config(line)
    n = text.count("\n")
    r = sr6_cli(text, [rx(IPv6(src=GNB, dst=UPF))])
    assert r.returncode != 0
    assert f"{r.config_path.name}:{n}:{line.index(token) + 1}:" in r.stderr, r.stderr
    assert why in r.stderr, r.stderr


def test_behaviours_lists_the_rfc_names(sr6_bin):
    out = subprocess.run([str(sr6_bin), "behaviours"], capture_output=True, text=True, check=True).stdout
    for kw, rfc in [("End.M.GTP6.D", "RFC 9433 §6.3"), ("End.M.GTP6.Di", "RFC 9433 §6.4"),
                    ("End.M.GTP6.E", "RFC 9433 §6.5")]:
        assert any(l.startswith(kw + " ") for l in out.splitlines()), out
        assert rfc in out, out
