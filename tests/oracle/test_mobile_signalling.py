"""GTP-U signalling across SRv6 (behaviours.md "Mobile user plane", "GTP-U signalling"):
Echo Request (1), Echo Response (2), Error Indication (26) and End Marker (254) carried
by H.M.GTP4.D, End.M.GTP6.D and End.M.GTP6.Di and rebuilt by End.M.GTP4.E and
End.M.GTP6.E, as draft-murakami-dmm-user-plane-message-encoding and VPP's srv6-mobile
plugin carry them.

Everything expected is built here with scapy (``scapy.contrib.gtp``: GTP_U_Header,
GTPEchoRequest, GTPEchoResponse, GTPErrorIndication, IE_Recovery, IE_TEIDI,
IE_GSNAddress) from that layout, independently of sr6:

* the SRH Tag names the message, one bit each: End Marker 0x0001, Error Indication
  0x0002, Echo Request 0x0004, Echo Response 0x0008;
* Args.Mob.Session (RFC 9433 §6.1) in the SID as for a T-PDU, but for Echo and Error
  Indication (TEID 0) the Sequence Number sits in the first 16 bits of the TEID field;
  an End Marker keeps its TEID;
* there is always an SRH (B alone, Segments Left 0, where a T-PDU gets none), whose Next
  Header is 59: nothing follows; Error Indication's IEs ride in an SRH TLV of type 0x0a
  holding a sub-TLV (type 1, length, the IEs), zero-padded to a multiple of 8 bytes;
* the rebuilt message: the type from the Tag; Echo / Error Indication with S = 1, the
  Sequence Number, TEID 0; End Marker with the TEID; a downlink PDU Session Container
  when the QFI is not 0; an Echo Response ends with Recovery (Restart Counter 0,
  TS 29.281 §7.2.2 / §8.2), an Error Indication with the carried IEs.

The round trips H.M.GTP4.D -> End.M.GTP4.E and End.M.GTP6.D -> End.M.GTP6.E give back
the message the gNB sent, field for field (TTL / hop limit one less per router).  Every
frame sr6 emits is decoded by tshark (conftest: no malformed packet, no bad checksum),
and tshark must read the message type and sequence number of the rebuilt messages.
"""
import ipaddress
import subprocess

import pytest
from scapy.contrib.gtp import (
    GTP_U_Header, GTPEchoRequest, GTPEchoResponse, GTPErrorIndication, GTPPDUSessionContainer, IE_GSNAddress,
    IE_Recovery, IE_TEIDI,
)

from sr6_oracle import IP, UDP, Ether, IPv6, IPv6ExtHdrSegmentRouting, Raw, config, l3, rx, srh, tx, wrpcap

# H.M.GTP4.D / End.M.GTP4.E (the layout of test_mobile.py).
UPF = "192.0.2.1"
GNB = "10.1.0.5"
SR_PREFIX = "fc00:2:0:100::/56"
SRC_PREFIX = "fc00:5::/64"
E_SID = "fc00:3:0:200::/56"
E_SRC_PREFIX = "fc00:7::/64"
D_LINE = (f"ip route add {UPF}/32 encap seg6local action H.M.GTP4.D sr-prefix {SR_PREFIX} "
          f"src-prefix {SRC_PREFIX} dev eth1")
E_LINE = f"ip -6 route add {E_SID} encap seg6local action End.M.GTP4.E v4src-position 64 dev eth0"
DST4, SRC4 = "10.2.0.9", "203.0.113.7"

# End.M.GTP6.D/.Di / End.M.GTP6.E (the layout of test_mobile6.py).
GNB6 = "fc00:a::5"
UPF6 = "fc00:9::1"
UPF6_DI = "fc00:9::2"
A = "fc00:5::1"
SR6_PREFIX = "fc00:2:0:100::/64"
E6_SID = "fc00:3:0:300::/64"
E6_SRC = "fc00:5::2"
D6_LINE = f"ip -6 route add {UPF6}/128 encap seg6local action End.M.GTP6.D sr-prefix {SR6_PREFIX} src {A} dev eth1"
DI6_LINE = f"ip -6 route add {UPF6_DI}/128 encap seg6local action End.M.GTP6.Di src {A} segs fc00:2::a dev eth1"
E6_LINE = f"ip -6 route add {E6_SID} encap seg6local action End.M.GTP6.E src {E6_SRC} dev eth0"

NH_NONE = 59
TAG = {1: 0x0004, 2: 0x0008, 26: 0x0002, 254: 0x0001}
# Error Indication's IEs (TS 29.281 §7.3.1): TEID Data I, GTP-U Peer Address (IPv4).
EI_IES = [IE_TEIDI(TEIDI=0x11223344), IE_GSNAddress(length=4, ipv4_address="192.0.2.9")]


def args_mob_session(qfi=0, r=0, u=0, teid=0) -> int:
    """RFC 9433 §6.1 Fig. 8."""
    return (qfi & 0x3F) << 34 | (r & 1) << 33 | (u & 1) << 32 | (teid & 0xFFFFFFFF)


def gtp4_sid(prefix: str, v4: str, args: int) -> str:
    """RFC 9433 Figs. 9 and 11: prefix | IPv4 address | Args.Mob.Session | zeros."""
    net = ipaddress.IPv6Network(prefix)
    plen = net.prefixlen
    v = int(net.network_address) | int(ipaddress.IPv4Address(v4)) << (128 - plen - 32) | args << (128 - plen - 72)
    return str(ipaddress.IPv6Address(v))


def gtp6_sid(prefix: str, args: int) -> str:
    """RFC 9433 §6.3 S08, §6.5: prefix | Args.Mob.Session | zeros."""
    net = ipaddress.IPv6Network(prefix)
    return str(ipaddress.IPv6Address(int(net.network_address) | args << (128 - net.prefixlen - 40)))


def v4_in_src(prefix: str, v4: str) -> str:
    net = ipaddress.IPv6Network(prefix)
    return str(ipaddress.IPv6Address(int(net.network_address) | int(ipaddress.IPv4Address(v4)) << (96 - net.prefixlen)))


# The messages: (name, GTP-U message as the gNB sends it, its type, sequence number or
# TEID, QFI).
def message(kind, qfi=0):
    psc = dict(E=1, next_ex=0x85) if qfi else {}
    tail = [GTPPDUSessionContainer(type=0, QFI=qfi)] if qfi else []

    def build(hdr, body):
        p = hdr
        for t in tail:
            p = p / t
        return p / body if body is not None else p

    if kind == "echo_request":
        return build(GTP_U_Header(gtp_type=1, S=1, seq=0x1234, teid=0, **psc), GTPEchoRequest()), 1, 0x1234
    if kind == "echo_response":
        return (build(GTP_U_Header(gtp_type=2, S=1, seq=0xBEEF, teid=0, **psc),
                      GTPEchoResponse(IE_list=[IE_Recovery(restart_counter=0)])), 2, 0xBEEF)
    if kind == "error_indication":
        return build(GTP_U_Header(gtp_type=26, S=1, seq=5, teid=0, **psc), GTPErrorIndication(IE_list=EI_IES)), 26, 5
    return build(GTP_U_Header(gtp_type=254, teid=0x0A0B0C0D, **psc), None), 254, 0x0A0B0C0D


KINDS = ["echo_request", "echo_response", "error_indication", "end_marker"]


def sid_teid(t, n):
    """The 32 bits of Args.Mob.Session's TEID field: the Sequence Number in the first 16
    (Echo, Error Indication), the TEID (End Marker)."""
    return n << 16 if t != 254 else n


def ie_tlv(t):
    """The SRH TLV that carries Error Indication's IEs (none for the others)."""
    if t != 26:
        return b""
    ies = b"".join(bytes(i) for i in EI_IES)
    body = bytes([0x01, len(ies)]) + ies
    total = (2 + len(body) + 7) // 8 * 8
    return bytes([0x0A, total - 2]) + body.ljust(total - 2, b"\0")


def tagged_srh(segments, segleft, t, tlv=b"", nh=NH_NONE):
    """An SRH with the Tag of message type ``t`` and ``tlv`` after the segments."""
    s = srh(segments, segleft=segleft, nh=nh, tag=TAG[t], hdrlen=(16 * len(segments) + len(tlv)) // 8)
    return Raw(bytes(s)[:8 + 16 * len(segments)] + tlv)


def gtp4(src, dst, msg, ttl=64, tos=0):
    return IP(src=src, dst=dst, ttl=ttl, tos=tos, id=0, flags="DF") / UDP(sport=2152, dport=2152) / msg


def gtp6(src, dst, msg, hlim=64, tc=0, fl=0):
    return IPv6(src=src, dst=dst, hlim=hlim, tc=tc, fl=fl) / UDP(sport=2152, dport=2152) / msg


def tshark_type_seq(tshark_bin, tmp_path, frame):
    pcap = tmp_path / "sig.pcap"
    wrpcap(str(pcap), [Ether(frame)])
    out = subprocess.run([tshark_bin, "-n", "-r", str(pcap), "-T", "fields", "-E", "separator=|",
                          "-e", "gtp.message", "-e", "gtp.seq_number", "-e", "gtp.teid"],
                         capture_output=True, text=True, check=True).stdout.strip()
    return [int(x, 0) if x else None for x in out.split("|")]


# --- H.M.GTP4.D: encode -------------------------------------------------------------------


@pytest.mark.parametrize("qfi", [0, 9], ids=["no_qfi", "qfi9"])
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("segs", [None, ["fc00:2::a", "fc00:2::b"]], ids=["no_segs", "segs"])
def test_gtp4_d_encodes(run_sr6, kind, qfi, segs):
    msg, t, n = message(kind, qfi)
    line = D_LINE if segs is None else D_LINE.replace("dev eth1", f"segs {','.join(segs)} dev eth1")
    res = run_sr6(config(line), [rx(gtp4(GNB, UPF, msg, ttl=30, tos=0xB8))])
    b = gtp4_sid(SR_PREFIX, UPF, args_mob_session(qfi=qfi, teid=sid_teid(t, n)))
    # Without segs, B alone with Segments Left 0 (a T-PDU would get no SRH); with segs
    # S1, S2, B (header order B, S2, S1), to S1.
    seg_list, sl = ([b], 0) if segs is None else ([b] + segs[::-1], len(segs))
    dst = b if segs is None else segs[0]
    exp = (IPv6(src=v4_in_src(SRC_PREFIX, GNB), dst=dst, hlim=29, tc=0xB8, fl=0, nh=43)
           / tagged_srh(seg_list, sl, t, ie_tlv(t)))
    res.expect(eth1=[tx(exp, "eth1")])


def test_gtp4_d_echo_request_without_s_flag_carries_sequence_0(run_sr6):
    msg = GTP_U_Header(gtp_type=1, teid=0) / GTPEchoRequest()
    res = run_sr6(config(D_LINE), [rx(gtp4(GNB, UPF, msg))])
    b = gtp4_sid(SR_PREFIX, UPF, args_mob_session(teid=0))
    exp = IPv6(src=v4_in_src(SRC_PREFIX, GNB), dst=b, hlim=63, nh=43) / tagged_srh([b], 0, 1)
    res.expect(eth1=[tx(exp, "eth1")])


# --- End.M.GTP4.E: decode -----------------------------------------------------------------


def to_e4(t, n, qfi=0, tlv=b"", nh=NH_NONE, after=b"", hlim=40, tc=0xB8, tag=None):
    sid = gtp4_sid(E_SID, DST4, args_mob_session(qfi=qfi, teid=sid_teid(t, n)))
    s = tagged_srh([sid], 0, t, tlv, nh=nh)
    if tag is not None:
        raw = bytearray(bytes(s))
        raw[6:8] = tag.to_bytes(2, "big")
        s = Raw(bytes(raw))
    return IPv6(src=v4_in_src(E_SRC_PREFIX, SRC4), dst=sid, hlim=hlim, tc=tc, nh=43) / s / Raw(after)


@pytest.mark.parametrize("qfi", [0, 9], ids=["no_qfi", "qfi9"])
@pytest.mark.parametrize("kind", KINDS)
def test_gtp4_e_decodes(run_sr6, tshark_bin, tmp_path, kind, qfi):
    msg, t, n = message(kind, qfi)
    pkt = to_e4(t, n, qfi=qfi, tlv=ie_tlv(t))
    res = run_sr6(config(E_LINE), [rx(pkt, "eth1")], in_dev="eth1")
    res.expect(eth1=[tx(gtp4(SRC4, DST4, msg, ttl=39, tos=0xB8), "eth1")])
    ty, seq, teid = tshark_type_seq(tshark_bin, tmp_path, res.frames("eth1")[0])
    assert (ty, seq, teid) == (t, n if t != 254 else None, 0 if t != 254 else n)


def test_gtp4_e_reads_vpp_frames(run_sr6):
    # VPP writes Next Header 143 and leaves the rest of the message after the SRH, and
    # several tag bits pick Echo Response first: what follows the SRH is not read.
    msg, t, n = message("echo_response")
    pkt = to_e4(t, n, nh=143, after=bytes([14, 0]), tag=0x000F)
    res = run_sr6(config(E_LINE), [rx(pkt, "eth1")], in_dev="eth1")
    res.expect(eth1=[tx(gtp4(SRC4, DST4, msg, ttl=39, tos=0xB8), "eth1")])


def test_gtp4_e_malformed_ie_container_dropped(run_sr6):
    # The sub-TLV says 40 bytes of IEs; the TLV holds 14.
    tlv = bytes([0x0A, 14, 0x01, 40]) + bytes(12)
    res = run_sr6(config(E_LINE), [rx(to_e4(26, 5, tlv=tlv), "eth1")], in_dev="eth1")
    res.expect_nothing()
    assert res.drops() == {"malformed": 1}


# --- End.M.GTP6.D/.Di: encode -------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_gtp6_d_encodes(run_sr6, kind):
    msg, t, n = message(kind, 17)
    res = run_sr6(config(D6_LINE), [rx(gtp6(GNB6, UPF6, msg, hlim=30, tc=0x20, fl=0x12345))])
    b = gtp6_sid(SR6_PREFIX, args_mob_session(qfi=17, teid=sid_teid(t, n)))
    exp = IPv6(src=A, dst=b, hlim=29, tc=0x20, fl=0x12345, nh=43) / tagged_srh([b], 0, t, ie_tlv(t))
    res.expect(eth1=[tx(exp, "eth1")])


@pytest.mark.parametrize("kind", KINDS)
def test_gtp6_di_encodes_the_tag(run_sr6, kind):
    # Drop-in mode keeps the original destination as SRH[0]: no Args.Mob.Session, so
    # only the Tag (and Error Indication's IEs) cross.
    msg, t, n = message(kind)
    res = run_sr6(config(DI6_LINE), [rx(gtp6(GNB6, UPF6_DI, msg))])
    exp = IPv6(src=A, dst="fc00:2::a", hlim=63, nh=43) / tagged_srh([UPF6_DI, "fc00:2::a"], 1, t, ie_tlv(t))
    res.expect(eth1=[tx(exp, "eth1")])


# --- End.M.GTP6.E: decode -----------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_gtp6_e_decodes(run_sr6, tshark_bin, tmp_path, kind):
    msg, t, n = message(kind, 5)
    sid = gtp6_sid(E6_SID, args_mob_session(qfi=5, teid=sid_teid(t, n)))
    pkt = IPv6(src="fc00:3::77", dst=sid, hlim=40, tc=0xB8, fl=0x54321, nh=43) / tagged_srh([GNB6, sid], 1, t,
                                                                                            ie_tlv(t))
    res = run_sr6(config(E6_LINE), [rx(pkt, "eth1")], in_dev="eth1")
    res.expect(eth0=[tx(gtp6(E6_SRC, GNB6, msg, hlim=39, tc=0xB8, fl=0x54321), "eth0")])
    ty, seq, teid = tshark_type_seq(tshark_bin, tmp_path, res.frames("eth0")[0])
    assert (ty, seq, teid) == (t, n if t != 254 else None, 0 if t != 254 else n)


# --- the round trips ----------------------------------------------------------------------


@pytest.mark.parametrize("qfi", [0, 9], ids=["no_qfi", "qfi9"])
@pytest.mark.parametrize("kind", KINDS)
def test_round_trip_gtp4_d_then_e(run_sr6, kind, qfi):
    # Router 1's sr-prefix is router 2's End.M.GTP4.E SIDs; its src-prefix puts the IPv4
    # source where router 2 reads it.
    sids, srcs = "fc00:3:0:200::/56", "fc00:7::/64"
    d = config(f"ip route add {UPF}/32 encap seg6local action H.M.GTP4.D sr-prefix {sids} "
               f"src-prefix {srcs} dev eth2")
    e = config(f"ip -6 route add {sids} encap seg6local action End.M.GTP4.E v4src-position 64 dev eth0",
               f"ip route add {UPF}/32 via 10.0.12.2 dev eth1")
    msg, _, _ = message(kind, qfi)
    orig = gtp4(GNB, UPF, msg, ttl=64, tos=0x2C)
    r1 = run_sr6(d, [rx(orig)])
    r2 = run_sr6(e, [rx(IPv6(l3(r1.frames("eth2")[0])), "eth2")], in_dev="eth2")
    back = orig.copy()
    back[IP].ttl = 62
    back[IP].chksum = None
    r2.expect(eth1=[tx(IP(bytes(back)), "eth1")])


@pytest.mark.parametrize("kind", KINDS)
def test_round_trip_gtp6_d_then_e(run_sr6, kind):
    # As test_mobile6's: the UPF's downlink is built from B as sr6 made it (SRH[0] = the
    # gNB), Tag kept (what a transit End does); End.M.GTP6.E gives back the message.
    pfx = "fc00:3:0:300::/64"
    d = config(f"ip -6 route add {UPF6}/128 encap seg6local action End.M.GTP6.D sr-prefix {pfx} src {A} dev eth2")
    e = config(f"ip -6 route add {pfx} encap seg6local action End.M.GTP6.E src {UPF6} dev eth0")
    msg, t, _ = message(kind, 17)
    orig = gtp6(GNB6, UPF6, msg, hlim=64, tc=0x10, fl=3)
    r1 = run_sr6(d, [rx(orig)])
    out = r1.pkts("eth2")
    assert len(out) == 1
    s = out[0][IPv6ExtHdrSegmentRouting]
    b = str(s.addresses[0])
    tlv = bytes(s)[8 + 16:]
    assert s.tag == TAG[t]
    down = IPv6(src="fc00:3::77", dst=b, hlim=64, tc=0x10, fl=3, nh=43) / tagged_srh([GNB6, b], 1, t, tlv)
    r2 = run_sr6(e, [rx(down, "eth2")], in_dev="eth2")
    r2.expect(eth0=[tx(gtp6(UPF6, GNB6, msg, hlim=63, tc=0x10, fl=3), "eth0")])
