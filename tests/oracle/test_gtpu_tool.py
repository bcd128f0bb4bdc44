"""tests/live/gtpu.py, the GTP-U endpoint of the mobile demo and live tests, checked
against scapy's GTP-U layers (scapy.contrib.gtp) over loopback UDP: what it sends is what
scapy decodes as the T-PDU, TEID, QFI and inner packet asked for, and what scapy builds
(T-PDUs with and without a PDU Session Container, an Echo Request, malformed messages)
it counts, answers or refuses as TS 29.281 says."""
import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from scapy.contrib.gtp import GTP_U_Header, GTPEchoRequest, GTPEchoResponse, GTPPDUSessionContainer
from scapy.layers.inet import IP, UDP
from scapy.packet import Raw, raw

TOOL = str(Path(__file__).resolve().parents[1] / "live" / "gtpu.py")


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run(*args, port):
    r = subprocess.run([sys.executable, TOOL, *map(str, args), "--port", str(port)],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def start_recv(*args, port):
    p = subprocess.Popen([sys.executable, TOOL, "recv", *map(str, args), "--port", str(port)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert p.stderr.readline().strip() == "ready"
    return p


def finish(p):
    out, err = p.communicate(timeout=30)
    assert p.returncode == 0, err
    return json.loads(out)


def capture(port, timeout=10):
    """A plain UDP socket on 127.0.0.2:port standing for the peer."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.2", port))
    s.settimeout(timeout)
    return s


@pytest.mark.parametrize("qfi,ul", [(0, False), (9, False), (33, True)])
def test_send_is_what_scapy_decodes(qfi, ul):
    port = free_port()
    s = capture(port)
    flags = ["--ul"] if ul else []
    out = run("send", "127.0.0.1", "127.0.0.2", "0x1234abcd", qfi, 3, 0, "10.1.0.7", "10.9.0.9", *flags, port=port)
    assert out == {"sent": 3}
    for i in range(3):
        d, frm = s.recvfrom(65535)
        assert frm == ("127.0.0.1", port)
        g = GTP_U_Header(d)
        assert g.version == 1 and g.PT == 1 and g.gtp_type == 255 and g.teid == 0x1234ABCD
        assert g.length == len(d) - 8
        if qfi:
            c = g[GTPPDUSessionContainer]
            assert g.E == 1 and g.next_ex == 0x85 and c.QFI == qfi and c.type == (1 if ul else 0)
        else:
            assert g.E == 0 and GTPPDUSessionContainer not in g
        inner = g[IP]
        assert (inner.src, inner.dst, inner.proto) == ("10.1.0.7", "10.9.0.9", 17)
        # Checksums as scapy computes them.
        want = IP(raw(inner))
        want.chksum = None
        want[UDP].chksum = None
        assert raw(IP(raw(want))) == raw(inner)
        assert int.from_bytes(raw(inner[UDP].payload)[:8], "big") == i
    s.close()


def tpdu(teid, seq, qfi=None, src="10.2.0.1", dst="10.3.0.1"):
    inner = IP(src=src, dst=dst, id=seq) / UDP(sport=5, dport=6) / Raw(seq.to_bytes(8, "big") + bytes(8))
    if qfi is None:
        return raw(GTP_U_Header(teid=teid) / inner)
    return raw(GTP_U_Header(teid=teid, E=1, next_ex=0x85) / GTPPDUSessionContainer(type=1, QFI=qfi) / inner)


def test_recv_counts_scapy_tpdus_and_refuses_malformed():
    port = free_port()
    p = start_recv("127.0.0.2", 4, 2, port=port)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        good = [tpdu(7, 0), tpdu(7, 1, qfi=5), tpdu(8, 2, qfi=5), tpdu(8, 2, qfi=5)]
        bad_len = bytearray(tpdu(7, 9))
        bad_len[3] += 1                                  # Length field past the datagram
        bad_ver = bytearray(tpdu(7, 9))
        bad_ver[0] = 0x50                                # version 2
        bad_csum = bytearray(tpdu(7, 9))
        bad_csum[8 + 10] ^= 0xFF                         # inner IPv4 header checksum
        for d in [bytes(bad_len), bytes(bad_ver), bytes(bad_csum), b"\x30\xff", *good, tpdu(9, 3)]:
            s.sendto(d, ("127.0.0.2", port))
    out = finish(p)
    assert out["bad"] == 4, out
    assert out["received"] == 5 and out["unique"] == 4, out
    assert out["teids"] == {"7": 2, "8": 2, "9": 1}, out
    assert out["qfis"] == {"0": 2, "5": 3}, out
    assert out["inner"] == {"10.2.0.1>10.3.0.1": 5}, out
    assert list(out["from"].values()) == [5] and list(out["from"])[0].startswith("127.0.0.1:"), out


def test_recv_answers_a_scapy_echo_request():
    port = free_port()
    p = start_recv("127.0.0.2", 1, 2, "--answer-echo", port=port)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        s.settimeout(5)
        s.sendto(raw(GTP_U_Header(teid=0, S=1, seq=0x4242) / GTPEchoRequest()), ("127.0.0.2", port))
        d, _ = s.recvfrom(65535)
        s.sendto(tpdu(1, 0), ("127.0.0.2", port))
    g = GTP_U_Header(d)
    assert g.gtp_type == 2 and g.S == 1 and g.seq == 0x4242 and g.teid == 0 and GTPEchoResponse in g
    assert raw(g[GTPEchoResponse])[:2] == bytes([14, 0]), "Recovery IE (TS 29.281 §7.2.2)"
    out = finish(p)
    assert out["echo_requests"] == 1 and out["received"] == 1


def test_echo_against_the_tool_itself():
    port = free_port()
    p = start_recv("127.0.0.2", 1, 3, "--answer-echo", port=port)
    out = run("echo", "127.0.0.1", "127.0.0.2", 5, port=port)
    assert out["answered"] is True, out
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.sendto(tpdu(1, 0), ("127.0.0.2", port))
    assert finish(p)["echo_requests"] == 1


def test_echo_without_an_answer():
    port = free_port()
    out = run("echo", "127.0.0.1", "127.0.0.2", 0.3, port=port)
    assert out["answered"] is False
