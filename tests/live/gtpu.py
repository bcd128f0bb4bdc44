"""GTP-U endpoints for the live tests and the mobile demo, with real UDP sockets: a gNB or
a UPF sending and receiving GTP-U (3GPP TS 29.281) on UDP port 2152. Runs INSIDE a
namespace (`ip netns exec NS python3 gtpu.py ...`). Standard library only.

  gtpu.py send LOCAL PEER TEID QFI COUNT RATE INNER_SRC INNER_DST [--ul] [--port P]
      COUNT T-PDUs (message type 255) from LOCAL:P to PEER:P, each carrying an inner
      IPv4/UDP datagram INNER_SRC -> INNER_DST whose payload is an 8-byte sequence
      number; QFI > 0 adds a PDU Session Container extension header (TS 38.415; DL PDU
      SESSION INFORMATION, or UL with --ul) carrying it. RATE per second (0: as fast as
      possible). Prints {"sent": N}.
  gtpu.py recv LOCAL COUNT IDLE_S [--answer-echo] [--port P]
      Receives on LOCAL:P until COUNT distinct sequence numbers arrived in T-PDUs or
      nothing came for IDLE_S seconds. Checks each T-PDU: version 1, PT 1, the Length
      field, the extension headers, an inner IPv4 header with a valid checksum carrying
      UDP. With --answer-echo, an Echo Request (type 1) is answered with an Echo Response
      (type 2) carrying its sequence number and a Recovery IE (TS 29.281 §7.2.2). Prints
      {"received", "unique", "teids": {TEID: n}, "qfis": {QFI: n}, "inner": {"SRC>DST":
      n}, "from": {"ADDR:PORT": n}, "bad": n, "echo_requests": n, "end_markers": n} as
      JSON (T-PDUs counted by TEID, QFI, inner addresses and sender); writes "ready" to
      stderr once bound.
  gtpu.py echo LOCAL PEER TIMEOUT_S [--port P]
      Sends one Echo Request and waits for the Echo Response with the same sequence
      number. Prints {"answered": bool, "rtt_ms": x}.
"""
import json
import socket
import struct
import sys
import time

GTPU_PORT = 2152
T_PDU, ECHO_REQUEST, ECHO_RESPONSE, END_MARKER = 255, 1, 2, 254
PDU_SESSION_CONTAINER = 0x85
RECOVERY_IE = 14


def checksum(b: bytes) -> int:
    """The Internet checksum (RFC 1071)."""
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack(f"!{len(b) // 2}H", b))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def inner_ipv4_udp(src: str, dst: str, seq: int) -> bytes:
    """IPv4 / UDP(40000 -> 40001) / 8-byte sequence number + padding to 32 bytes."""
    payload = struct.pack("!Q", seq) + bytes(24)
    s, d = socket.inet_aton(src), socket.inet_aton(dst)
    ulen = 8 + len(payload)
    pseudo = s + d + struct.pack("!BBH", 0, 17, ulen)
    udp = struct.pack("!HHHH", 40000, 40001, ulen, 0) + payload
    ucs = checksum(pseudo + udp) or 0xFFFF
    udp = udp[:6] + struct.pack("!H", ucs) + udp[8:]
    hdr = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + ulen, seq & 0xFFFF, 0, 64, 17, 0, s, d)
    hdr = hdr[:10] + struct.pack("!H", checksum(hdr)) + hdr[12:]
    return hdr + udp


def gtpu(msg_type: int, teid: int, body: bytes, seq=None, qfi=0, ul=False) -> bytes:
    """A GTP-U message: the mandatory 8 bytes; with a sequence number or a PDU Session
    Container, the optional 4 (sequence, N-PDU, next extension type) and the container."""
    ext = b""
    opt = b""
    flags = 0x30  # version 1, PT 1
    if qfi:
        flags |= 0x04  # E
        # PDU Session Container, one 4-byte unit: PDU type (0 DL, 1 UL), QFI, no next.
        ext = bytes([1, (1 if ul else 0) << 4, qfi & 0x3F, 0])
    if seq is not None:
        flags |= 0x02  # S
    if flags & 0x06:
        opt = struct.pack("!HBB", seq or 0, 0, PDU_SESSION_CONTAINER if qfi else 0)
    length = len(opt) + len(ext) + len(body)
    return struct.pack("!BBHI", flags, msg_type, length, teid) + opt + ext + body


def parse(d: bytes):
    """(type, teid, seq or None, qfi or None, body) of a GTP-U message; ValueError if it
    is not a well-formed one."""
    if len(d) < 8:
        raise ValueError("short")
    flags, mtype, length, teid = struct.unpack("!BBHI", d[:8])
    if flags >> 5 != 1 or not flags & 0x10:
        raise ValueError("not GTPv1-U")
    if 8 + length != len(d):
        raise ValueError("length field")
    off, seq, qfi = 8, None, None
    if flags & 0x07:
        if len(d) < 12:
            raise ValueError("short optional fields")
        s, _npdu, nxt = struct.unpack("!HBB", d[8:12])
        seq = s if flags & 0x02 else None
        off = 12
        while flags & 0x04 and nxt:
            if off >= len(d) or d[off] == 0 or off + 4 * d[off] > len(d):
                raise ValueError("extension header")
            n = 4 * d[off]
            if nxt == PDU_SESSION_CONTAINER:
                qfi = d[off + 2] & 0x3F
            nxt = d[off + n - 1]
            off += n
    return mtype, teid, seq, qfi, d[off:]


def inner_seq(body: bytes):
    """(src, dst, sequence number) of the inner IPv4/UDP datagram; ValueError if bad."""
    if len(body) < 28 or body[0] >> 4 != 4 or body[9] != 17:
        raise ValueError("inner not IPv4/UDP")
    ihl = 4 * (body[0] & 0xF)
    if checksum(body[:ihl]) != 0:
        raise ValueError("inner IPv4 checksum")
    if len(body) < ihl + 16:
        raise ValueError("inner payload")
    src, dst = socket.inet_ntoa(body[12:16]), socket.inet_ntoa(body[16:20])
    return src, dst, struct.unpack("!Q", body[ihl + 8:ihl + 16])[0]


def sock(local: str, port: int) -> socket.socket:
    fam = socket.AF_INET6 if ":" in local else socket.AF_INET
    s = socket.socket(fam, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((local, port))
    return s


def send(local, peer, teid, qfi, count, rate, isrc, idst, ul, port):
    s = sock(local, port)
    t0 = time.monotonic()
    for i in range(count):
        if rate > 0:
            delay = t0 + i / rate - time.monotonic()
            if delay > 0:
                time.sleep(delay)
        s.sendto(gtpu(T_PDU, teid, inner_ipv4_udp(isrc, idst, i), qfi=qfi, ul=ul), (peer, port))
    print(json.dumps({"sent": count}))


def recv(local, count, idle, answer_echo, port):
    s = sock(local, port)
    s.settimeout(idle)
    out = {"received": 0, "unique": 0, "teids": {}, "qfis": {}, "inner": {}, "from": {}, "bad": 0,
           "echo_requests": 0, "end_markers": 0}
    seen = set()
    sys.stderr.write("ready\n")
    sys.stderr.flush()
    while len(seen) < count:
        try:
            d, frm = s.recvfrom(65535)
        except socket.timeout:
            break
        try:
            mtype, teid, seq, qfi, body = parse(d)
            if mtype == ECHO_REQUEST:
                out["echo_requests"] += 1
                if answer_echo:
                    s.sendto(gtpu(ECHO_RESPONSE, 0, bytes([RECOVERY_IE, 0]), seq=seq or 0), frm)
                continue
            if mtype == END_MARKER:
                out["end_markers"] += 1
                continue
            if mtype != T_PDU:
                raise ValueError(f"message type {mtype}")
            src, dst, n = inner_seq(body)
        except ValueError:
            out["bad"] += 1
            continue
        out["received"] += 1
        sender = f"{frm[0]}:{frm[1]}"
        for k, v in (("teids", str(teid)), ("qfis", str(qfi or 0)), ("inner", f"{src}>{dst}"), ("from", sender)):
            out[k][v] = out[k].get(v, 0) + 1
        seen.add(n)
    out["unique"] = len(seen)
    print(json.dumps(out))


def echo(local, peer, timeout, port):
    s = sock(local, port)
    s.settimeout(timeout)
    seq = int(time.time()) & 0xFFFF
    t0 = time.monotonic()
    s.sendto(gtpu(ECHO_REQUEST, 0, b"", seq=seq), (peer, port))
    answered = False
    while time.monotonic() - t0 < timeout:
        try:
            d, _ = s.recvfrom(65535)
            mtype, _teid, rseq, _qfi, _body = parse(d)
        except (socket.timeout, ValueError):
            continue
        if mtype == ECHO_RESPONSE and rseq == seq:
            answered = True
            break
    print(json.dumps({"answered": answered, "rtt_ms": round((time.monotonic() - t0) * 1000, 3)}))


def main(argv):
    port = GTPU_PORT
    if "--port" in argv:
        i = argv.index("--port")
        port = int(argv[i + 1])
        del argv[i:i + 2]
    flags = {a for a in argv if a.startswith("--")}
    args = [a for a in argv if not a.startswith("--")]
    cmd = args[0] if args else ""
    if cmd == "send" and len(args) == 9:
        _, local, peer, teid, qfi, count, rate, isrc, idst = args
        send(local, peer, int(teid, 0), int(qfi), int(count), float(rate), isrc, idst, "--ul" in flags, port)
    elif cmd == "recv" and len(args) == 4:
        _, local, count, idle = args
        recv(local, int(count), float(idle), "--answer-echo" in flags, port)
    elif cmd == "echo" and len(args) == 4:
        _, local, peer, timeout = args
        echo(local, peer, float(timeout), port)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
