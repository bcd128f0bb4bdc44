"""Plain GTP-U tunnels (behaviours.md "Mobile user plane", config.md "encap gtp"): the
paper's baseline functions "GTP-U encap." and "GTP-U decap.", in sr6's own grammar:

    ip route add PREFIX encap gtp teid T dst A src B [qfi Q] [via NH] dev DEV
    ip route add A/32 encap gtp decap [table N] dev DEV     (and ip -6 route ...)

Everything expected is built here with scapy's GTP-U layers (``scapy.contrib.gtp``:
GTP_U_Header, GTPPDUSessionContainer, GTPEchoRequest/GTPEchoResponse, IE_Recovery)
from 3GPP TS 29.281 (§5.1 the header: version 1, PT 1, E/S/PN; §5.2 extension headers;
§4.4.2 UDP port 2152; §7.2 Echo Request/Response with the request's sequence number and
a Recovery IE, §8.2) and TS 38.415 §5.5.2 (the PDU Session Container and its QFI), and
from behaviours.md's choices where those leave them open: the inner packet is forwarded
into the tunnel (TTL / hop limit one less) and out of it (one less again), the outer
header has TTL / hop limit 64, IPv4 identification 0 with DF, the inner DSCP/ECN or
traffic class, flow label 0, a computed UDP checksum; the container, when ``qfi`` is
given, of PDU type 0 (downlink) as End.M.GTP4.E writes it.  Every frame sr6 emits is
decoded by tshark (conftest: no malformed packet, no bad checksum), which here must also
read the TEID and QFI where TS 29.281 / TS 38.415 put them.
"""
import subprocess

import pytest
from scapy.layers.inet6 import ICMPv6PacketTooBig
from scapy.contrib.gtp import (
    GTP_U_Header, GTPEchoRequest, GTPEchoResponse, GTPPDUSessionContainer, IE_Recovery,
)

from sr6_oracle import (
    ADDR4, ADDR6, GW4, HOST_A, HOST_A4, ICMP, IP, UDP, Ether, IPv6, Raw, config, icmp6_error, l3, payload, rx,
    sid_entry, tx, wrpcap,
)

PEER4, PEER6 = "10.2.0.77", "fc00:2::77"          # the far tunnel end, behind eth1
SRC4, SRC6 = ADDR4["eth1"], ADDR6["eth1"]         # this end
NET4, NET6 = "198.18.0.0/16", "2001:db8:9::/48"   # the traffic steered into the tunnel
UPF4, UPF6 = "192.0.2.1", "fc00:99::1"            # the decap addresses
GNB4, GNB6 = HOST_A4, HOST_A                      # a gNB behind eth0
TEID = 0x12345678


def encap_line(outer, teid=TEID, qfi=None, prefix_v6=False):
    dst, src = (PEER6, SRC6) if outer == 6 else (PEER4, SRC4)
    q = f" qfi {qfi}" if qfi is not None else ""
    ip = "ip -6 route add " + NET6 if prefix_v6 else "ip route add " + NET4
    return f"{ip} encap gtp teid {teid} dst {dst} src {src}{q} dev eth1"


def decap_lines(table=None):
    t = f" table {table}" if table is not None else ""
    return (f"ip route add {UPF4}/32 encap gtp decap{t} dev eth0",
            f"ip -6 route add {UPF6}/128 encap gtp decap{t} dev eth0")


def user4(ttl=50, tos=0, n=20, flags=0):
    return IP(src=HOST_A4, dst="198.18.0.9", ttl=ttl, tos=tos, id=7, flags=flags) / UDP(
        sport=40001, dport=40002) / payload(n)


def user6(hlim=50, tc=0, n=20):
    return IPv6(src=HOST_A, dst="2001:db8:9::9", hlim=hlim, tc=tc, fl=0x12345) / UDP(
        sport=40001, dport=40002) / payload(n)


def forwarded(inner, by=1):
    """The inner packet as a router forwarding it leaves it (TTL / hop limit - ``by``)."""
    p = inner.copy()
    if IP in p and not isinstance(p, IPv6):
        p[IP].ttl -= by
        p[IP].chksum = None
    else:
        p[IPv6].hlim -= by
    return p.__class__(bytes(p))


def gtpu(teid, inner, qfi=None, pdu_type=0):
    """TS 29.281 §5.1 T-PDU header, with a PDU Session Container (TS 38.415) if ``qfi``."""
    if qfi is None:
        return GTP_U_Header(gtp_type=255, teid=teid) / inner
    return GTP_U_Header(gtp_type=255, teid=teid, E=1, next_ex=0x85) / GTPPDUSessionContainer(
        type=pdu_type, QFI=qfi) / inner


def outer(v, src, dst, body, tos=0, sport=2152, dport=2152):
    """IP (TTL / hop limit 64; IPv4 ID 0 + DF) + UDP (scapy computes the checksum)."""
    udp = UDP(sport=sport, dport=dport) / body
    if v == 6:
        return IPv6(src=src, dst=dst, hlim=64, tc=tos, fl=0) / udp
    return IP(src=src, dst=dst, ttl=64, tos=tos, id=0, flags="DF") / udp


def tshark_fields(tshark_bin, tmp_path, frame, *fields):
    pcap = tmp_path / "f.pcap"
    wrpcap(str(pcap), [Ether(frame)])
    args = [a for f in fields for a in ("-e", f)]
    out = subprocess.run([tshark_bin, "-n", "-r", str(pcap), "-T", "fields", "-E", "separator=|", *args],
                         capture_output=True, text=True, check=True).stdout.strip()
    return out.split("|")


# --- GTP-U encapsulation ------------------------------------------------------------------


@pytest.mark.parametrize("qfi", [None, 9, 0, 63], ids=["no_qfi", "qfi9", "qfi0", "qfi63"])
@pytest.mark.parametrize("outer_v", [4, 6], ids=["over_v4", "over_v6"])
@pytest.mark.parametrize("inner_v", [4, 6], ids=["v4", "v6"])
def test_encap(run_sr6, tshark_bin, tmp_path, inner_v, outer_v, qfi):
    inner = user4(tos=0xB8) if inner_v == 4 else user6(tc=0xB8)
    res = run_sr6(config(encap_line(outer_v, qfi=qfi, prefix_v6=inner_v == 6)), [rx(inner)])
    src, dst = (SRC6, PEER6) if outer_v == 6 else (SRC4, PEER4)
    exp = outer(outer_v, src, dst, gtpu(TEID, forwarded(inner), qfi=qfi), tos=0xB8)
    res.expect(eth1=[tx(exp, "eth1")])
    teid, q, ty = tshark_fields(tshark_bin, tmp_path, res.frames("eth1")[0], "gtp.teid",
                                "gtp.ext_hdr.pdu_ses_con.qos_flow_id", "gtp.ext_hdr.pdu_ses_con.pdu_type")
    assert int(teid, 0) == TEID
    assert (int(q, 0) if q else None) == qfi
    assert (int(ty, 0) if ty else None) == (0 if qfi is not None else None)


def test_encap_teid_extremes_and_via(run_sr6):
    # TEID 0 and 2^32 - 1; `via` is accepted and the outer packet is routed toward dst.
    for teid in (0, 0xFFFFFFFF):
        line = encap_line(4, teid=teid).replace(" dev eth1", " via 10.0.12.2 dev eth1")
        res = run_sr6(config(line), [rx(user4())])
        res.expect(eth1=[tx(outer(4, SRC4, PEER4, gtpu(teid, forwarded(user4()))), "eth1")])


def test_encap_outer_follows_the_route_to_dst(run_sr6):
    # The peer routed out eth2: the tunnel follows (as encap seg6 follows its first SID).
    line = encap_line(4).replace(PEER4, "10.3.0.77")
    res = run_sr6(config(line), [rx(user4())])
    res.expect(eth2=[tx(outer(4, SRC4, "10.3.0.77", gtpu(TEID, forwarded(user4()))), "eth2")])


def test_encap_ipv6_hop_limit_1_time_exceeded(run_sr6):
    inner = user6(hlim=1)
    frame = rx(inner)
    res = run_sr6(config(encap_line(4, prefix_v6=True)), [frame])
    err = icmp6_error("time_exceeded", l3(frame), src=ADDR6["eth0"], dst=HOST_A)
    res.expect(eth0=[tx(err, "eth0")])


def test_encap_ipv4_ttl_1_time_exceeded(run_sr6):
    inner = user4(ttl=1)
    res = run_sr6(config(encap_line(6)), [rx(inner)])
    # RFC 792 / RFC 1812 §4.3.2.3: the IP header + 8 bytes at least (sr6 quotes up to 576
    # bytes in all), from the arrival device's address.
    err = IP(src=ADDR4["eth0"], dst=HOST_A4, ttl=64, tos=0xC0, id=0) / ICMP(type=11, code=0) / Raw(bytes(inner))
    res.expect(eth0=[tx(err, "eth0")])


def test_encap_over_mtu_answers_about_the_carried_packet(run_sr6):
    # eth1's MTU 1280: an IPv6 packet whose GTP-U/IPv4 packet would be 1281 bytes is
    # answered with Packet Too Big about itself (as forwarded into the tunnel), the MTU
    # less the 36 bytes of IPv4 + UDP + GTP-U (RFC 4459 §3.2).
    inner = user6(n=1281 - 36 - 48)
    res = run_sr6(config(encap_line(4, prefix_v6=True), "ip link set dev eth1 mtu 1280"), [rx(inner)])
    quote = bytes(forwarded(inner))[:1280 - 48]
    err = IPv6(src=ADDR6["eth0"], dst=HOST_A, hlim=64) / ICMPv6PacketTooBig(mtu=1280 - 36) / Raw(quote)
    res.expect(eth0=[tx(err, "eth0")])
    # One byte less fits.
    inner = user6(n=1280 - 36 - 48)
    res = run_sr6(config(encap_line(4, prefix_v6=True), "ip link set dev eth1 mtu 1280"), [rx(inner)])
    assert len(l3(res.frames("eth1")[0])) == 1280


def test_encap_over_mtu_ipv4_df_frag_needed(run_sr6):
    inner = user4(n=1281 - 56 - 28, flags="DF")
    res = run_sr6(config(encap_line(6), "ip link set dev eth1 mtu 1280"), [rx(inner)])
    out = res.pkts("eth0")
    assert len(out) == 1 and out[0][ICMP].type == 3 and out[0][ICMP].code == 4, res.json
    assert out[0][ICMP].nexthopmtu == 1280 - 56


# --- GTP-U decapsulation ------------------------------------------------------------------


def to_upf(v, body, src=None, sport=2152, ttl=30, chksum=None):
    src = src or (GNB6 if v == 6 else GNB4)
    dst = UPF6 if v == 6 else UPF4
    udp = UDP(sport=sport, dport=2152, chksum=chksum) / body
    if v == 6:
        return IPv6(src=src, dst=dst, hlim=ttl) / udp
    return IP(src=src, dst=dst, ttl=ttl, flags="DF") / udp


def inner_to_b(v):
    """An inner packet for a host behind eth1."""
    if v == 6:
        return IPv6(src="2001:db8:1::5", dst="fc00:2::5", hlim=40, tc=0x20) / UDP(sport=40001, dport=40002) / payload(24)
    return IP(src="100.64.0.5", dst="10.2.0.9", ttl=40, id=9) / UDP(sport=40001, dport=40002) / payload(24)


@pytest.mark.parametrize("hdr", ["plain", "ul_container", "dl_container", "seq", "two_extensions"])
@pytest.mark.parametrize("outer_v", [4, 6], ids=["over_v4", "over_v6"])
@pytest.mark.parametrize("inner_v", [4, 6], ids=["v4", "v6"])
def test_decap(run_sr6, inner_v, outer_v, hdr):
    inner = inner_to_b(inner_v)
    body = {
        "plain": lambda: gtpu(7, inner),
        "ul_container": lambda: gtpu(7, inner, qfi=5, pdu_type=1),
        "dl_container": lambda: gtpu(7, inner, qfi=63, pdu_type=0),
        "seq": lambda: GTP_U_Header(gtp_type=255, teid=7, S=1, seq=0x1234, PN=1, npdu=3) / inner,
        # An extension of another type (0x40, 4 bytes) before the container: skipped by
        # its length field (TS 29.281 §5.2.1).
        "two_extensions": lambda: GTP_U_Header(gtp_type=255, teid=7, E=1, next_ex=0x40) / Raw(
            bytes([1, 0xAB, 0xCD, 0x85])) / GTPPDUSessionContainer(type=1, QFI=2) / inner,
    }[hdr]()
    res = run_sr6(config(*decap_lines()), [rx(to_upf(outer_v, body))])
    res.expect(eth1=[tx(forwarded(inner), "eth1")])
    upf = UPF6 + "/128" if outer_v == 6 else UPF4 + "/32"
    assert sid_entry(res.json, upf)["packets"] == 1


def test_decap_ipv4_udp_checksum_zero_accepted(run_sr6):
    # RFC 768: 0 means no checksum was computed -- allowed over IPv4 ...
    inner = inner_to_b(4)
    res = run_sr6(config(*decap_lines()), [rx(to_upf(4, gtpu(1, inner), chksum=0))])
    res.expect(eth1=[tx(forwarded(inner), "eth1")])


def test_decap_table(run_sr6):
    lines = decap_lines(table=100) + ("ip route add 10.2.0.0/16 via 10.0.13.2 dev eth2 table 100",
                                      "ip -6 route add fc00:2::/48 via fc00:13::2 dev eth2 table 100")
    for v in (4, 6):
        inner = inner_to_b(v)
        res = run_sr6(config(*lines), [rx(to_upf(v, gtpu(1, inner)))])
        res.expect(eth2=[tx(forwarded(inner), "eth2")])


def test_decap_inner_ttl_1_time_exceeded(run_sr6):
    inner = IP(src=HOST_A4, dst="10.2.0.9", ttl=1) / UDP(sport=40001, dport=40002) / payload(8)
    res = run_sr6(config(*decap_lines()), [rx(to_upf(4, gtpu(1, inner)))])
    err = IP(src=ADDR4["eth0"], dst=HOST_A4, ttl=64, tos=0xC0, id=0) / ICMP(type=11, code=0) / Raw(bytes(inner))
    res.expect(eth0=[tx(err, "eth0")])


@pytest.mark.parametrize("sport", [2152, 33333])
@pytest.mark.parametrize("v", [4, 6])
def test_echo_request_answered(run_sr6, tshark_bin, tmp_path, v, sport):
    req = GTP_U_Header(gtp_type=1, teid=0, S=1, seq=0xBEEF) / GTPEchoRequest()
    res = run_sr6(config(*decap_lines()), [rx(to_upf(v, req, sport=sport))])
    # TS 29.281 §7.2.2: same sequence number, Recovery IE (restart counter 0), to the
    # request's source address and port, from A and port 2152.
    rsp = GTP_U_Header(gtp_type=2, teid=0, S=1, seq=0xBEEF) / GTPEchoResponse(IE_list=[IE_Recovery(restart_counter=0)])
    src, dst = (UPF6, GNB6) if v == 6 else (UPF4, GNB4)
    res.expect(eth0=[tx(outer(v, src, dst, rsp, dport=sport), "eth0")])
    ty, seq = tshark_fields(tshark_bin, tmp_path, res.frames("eth0")[0], "gtp.message", "gtp.seq_number")
    assert (int(ty, 0), int(seq, 0)) == (2, 0xBEEF)


ECHO_RESPONSE = GTP_U_Header(gtp_type=2, teid=0, S=1, seq=1) / GTPEchoResponse(IE_list=[IE_Recovery()])
END_MARKER = GTP_U_Header(gtp_type=254, teid=7)
ERROR_INDICATION = GTP_U_Header(gtp_type=26, teid=0)
GOOD = bytes(gtpu(1, inner_to_b(4)))


@pytest.mark.parametrize("v", [4, 6])
@pytest.mark.parametrize("body,reason,kw", [
    (END_MARKER, "gtpu_signalling", {}),
    (ERROR_INDICATION, "gtpu_signalling", {}),
    (ECHO_RESPONSE, "gtpu_signalling", {}),
    (Raw(GOOD[:7]), "gtpu_malformed", {}),                                          # short
    (Raw(bytes([0x50]) + GOOD[1:]), "gtpu_malformed", {}),                          # version 2
    (Raw(bytes([0x20]) + GOOD[1:]), "gtpu_malformed", {}),                          # PT 0 (GTP')
    (Raw(GOOD[:3] + bytes([GOOD[3] + 1]) + GOOD[4:]), "gtpu_malformed", {}),        # Length too long
    (Raw(GOOD[:3] + bytes([GOOD[3] - 1]) + GOOD[4:]), "gtpu_malformed", {}),        # Length too short
    (GTP_U_Header(gtp_type=255, teid=1, E=1, next_ex=0x85) / Raw(bytes([0, 0, 0, 0]) + GOOD[8:]),
     "gtpu_malformed", {}),                                                         # extension length 0
    (Raw(bytes(GTP_U_Header(gtp_type=255, teid=1, E=1, next_ex=0x85) / Raw(bytes([9, 0x10, 5, 0])))),
     "gtpu_malformed", {}),                                                         # extension overruns
    (GTP_U_Header(gtp_type=255, teid=1) / Raw(b"\x11" * 20), "wrong_next_header", {}),  # T-PDU not IP
    (Raw(GOOD), "gtpu_malformed", {"chksum": 0x1234}),                              # bad UDP checksum
    (Raw(GOOD), "not_gtpu", {"dport": 2153}),
], ids=["end_marker", "error_indication", "echo_response", "short", "version2", "gtp_prime", "length_long",
        "length_short", "ext_len0", "ext_overrun", "tpdu_not_ip", "udp_checksum", "port_2153"])
def test_decap_drops(run_sr6, v, body, reason, kw):
    pkt = to_upf(v, body, chksum=kw.get("chksum"))
    if "dport" in kw:
        pkt[UDP].dport = kw["dport"]
    res = run_sr6(config(*decap_lines()), [rx(pkt)])
    res.expect_nothing()
    assert res.drops() == {reason: 1}
    e = sid_entry(res.json, UPF6 + "/128" if v == 6 else UPF4 + "/32")
    assert (e["packets"], e["errors"]) == (0, 1)


@pytest.mark.parametrize("v", [4, 6])
def test_decap_not_udp(run_sr6, v):
    pkt = (IPv6(src=GNB6, dst=UPF6, nh=6) if v == 6 else IP(src=GNB4, dst=UPF4, proto=6)) / Raw(GOOD)
    res = run_sr6(config(*decap_lines()), [rx(pkt)])
    res.expect_nothing()
    assert res.drops() == {"not_gtpu": 1}


def test_decap_ipv6_udp_checksum_zero_dropped(run_sr6):
    # ... but not over IPv6 (RFC 8200 §8.1).
    res = run_sr6(config(*decap_lines()), [rx(to_upf(6, gtpu(1, inner_to_b(6)), chksum=0))])
    res.expect_nothing()
    assert res.drops() == {"gtpu_malformed": 1}


def test_decap_ipv4_fragment_dropped(run_sr6):
    pkt = IP(src=GNB4, dst=UPF4, flags="MF", id=5) / UDP(sport=2152, dport=2152) / gtpu(1, inner_to_b(4))
    res = run_sr6(config(*decap_lines()), [rx(pkt)])
    res.expect_nothing()
    assert res.drops() == {"fragment": 1}


# --- the round trip -----------------------------------------------------------------------


@pytest.mark.parametrize("qfi", [None, 5])
@pytest.mark.parametrize("outer_v", [4, 6], ids=["over_v4", "over_v6"])
@pytest.mark.parametrize("inner_v", [4, 6], ids=["v4", "v6"])
def test_round_trip_restores_the_inner_packet(run_sr6, inner_v, outer_v, qfi):
    # Router 1 encapsulates toward router 2's decap address, which it reaches out eth1;
    # router 2 receives that frame on eth0 and decapsulates: the inner packet comes out
    # as it went in, its TTL / hop limit one less per router.
    # (The tunnel source is not router 1's own address, which router 2 shares: the two
    # run with the same base configuration.)
    upf = UPF6 if outer_v == 6 else UPF4
    src = "fc00:a::77" if outer_v == 6 else "10.1.0.77"
    r1cfg = config(encap_line(outer_v, qfi=qfi, prefix_v6=inner_v == 6).replace(
        PEER6 if outer_v == 6 else PEER4, upf).replace(SRC6 if outer_v == 6 else SRC4, src),
        f"ip route add {UPF4}/32 via 10.0.12.2 dev eth1",
        f"ip -6 route add {UPF6}/128 via fc00:12::2 dev eth1")
    inner = user4(tos=0x2C) if inner_v == 4 else user6(tc=0x2C)
    r1 = run_sr6(r1cfg, [rx(inner)])
    assert len(r1.frames("eth1")) == 1, r1.json
    mid = l3(r1.frames("eth1")[0])
    r2cfg = config(*decap_lines(), "ip route add 198.18.0.0/16 via 10.0.12.2 dev eth1",
                   "ip -6 route add 2001:db8:9::/48 via fc00:12::2 dev eth1")
    r2 = run_sr6(r2cfg, [rx(IPv6(mid) if outer_v == 6 else IP(mid), "eth0")])
    r2.expect(eth1=[tx(forwarded(inner, by=2), "eth1")])
    assert (IPv6(mid) if outer_v == 6 else IP(mid)).src == src


# --- configuration ------------------------------------------------------------------------


ENC = encap_line(4)


@pytest.mark.parametrize("line,token,why", [
    (ENC.replace(f"src {SRC4}", f"src {SRC6}"), SRC6, "src fc00:12::1 is IPv6 but dst 10.2.0.77 is IPv4"),
    (ENC.replace(f"teid {TEID} ", ""), "gtp", "`encap gtp` needs teid T"),
    (ENC.replace(f"dst {PEER4} ", ""), "gtp", "`encap gtp` needs dst A"),
    (ENC.replace(f" src {SRC4}", ""), "gtp", "`encap gtp` needs src B"),
    (ENC.replace(str(TEID), "4294967296"), "4294967296", "teid `4294967296` is out of range"),
    (encap_line(4, qfi=64), "64", "qfi 64 does not fit in 6 bits"),
    (ENC.replace("dev eth1", "teid 5 dev eth1"), "teid 5", "duplicate `teid`"),
    (f"ip route add {UPF4}/32 encap gtp decap teid 5 dev eth0", "teid", "is for GTP-U encapsulation"),
    (f"ip route add {UPF4}/32 encap gtp decap via 10.0.1.2 dev eth0", "via", "takes no `via`"),
    (f"ip route add {UPF4}/32 encap gtp bogus dev eth0", "gtp", "`encap gtp` needs teid T and dst A and src B"),
    (f"ip -6 route add {UPF6}/128 encap seg6local action GTP-U.Decap dev eth0", "GTP-U.Decap",
     "written `encap gtp decap [table N]`"),
])
def test_config_errors_name_file_line_col(sr6_cli, line, token, why):
    text = config(line)
    n = text.count("\n")
    r = sr6_cli(text, [rx(IP(src=GNB4, dst=UPF4))])
    assert r.returncode != 0
    col = line.index(token + " ") + 1 if token + " " in line else line.index(token) + 1
    assert f"{r.config_path.name}:{n}:{col}:" in r.stderr, r.stderr
    assert why in r.stderr, r.stderr


def test_behaviours_lists_the_decap_and_the_encap(sr6_bin):
    out = subprocess.run([str(sr6_bin), "behaviours"], capture_output=True, text=True, check=True).stdout
    assert any(l.startswith("GTP-U.Decap ") for l in out.splitlines()), out
    assert "encap gtp teid T dst A src B [qfi Q]" in out, out
