#!/usr/bin/env python3
"""A minimal BGP-4 speaker for the live tests (the feed of tests/live/test_bgp_feed.py):
one session (RFC 4271) with IPv4 and IPv6 unicast (RFC 4760) and four-octet AS numbers
(RFC 6793) advertised, which announces the prefixes of a file as fast as TCP takes
them, packed into UPDATE messages of at most 4,096 bytes sharing one path (ORIGIN IGP,
AS_PATH of its own AS, the next hop given per family), then keeps the session up with
KEEPALIVEs until its standard input closes.

    bgp_speaker.py PEER LOCAL_AS PEER_AS ROUTER_ID NH4 NH6 PREFIX_FILE

It connects to PEER port 179 and prints, on standard output, `established T` once the
peer's KEEPALIVE came, waits for a line on standard input, sends every UPDATE, and
prints `sent T0 T1` (the first and the last UPDATE's send, CLOCK_MONOTONIC seconds, the
clock Python's time.monotonic reads in every namespace). A NOTIFICATION from the peer is
printed on standard error and ends it with status 1."""
from __future__ import annotations

import ipaddress
import socket
import struct
import sys
import threading
import time

MARKER = b"\xff" * 16
OPEN, UPDATE, NOTIFICATION, KEEPALIVE = 1, 2, 3, 4
MAX_MESSAGE = 4096
HOLD_TIME = 90


def message(kind: int, body: bytes) -> bytes:
    return MARKER + struct.pack("!HB", 19 + len(body), kind) + body


def open_message(local_as: int, router_id: str) -> bytes:
    caps = [
        struct.pack("!BBHBB", 1, 4, 1, 0, 1),  # multiprotocol: IPv4 unicast
        struct.pack("!BBHBB", 1, 4, 2, 0, 1),  # multiprotocol: IPv6 unicast
        struct.pack("!BBI", 65, 4, local_as),  # four-octet AS number
    ]
    params = b"".join(struct.pack("!BB", 2, len(c)) + c for c in caps)
    my_as = local_as if local_as < 65536 else 23456  # AS_TRANS
    return message(OPEN, struct.pack("!BHH4sB", 4, my_as, HOLD_TIME, socket.inet_aton(router_id), len(params))
                   + params)


def nlri(net: ipaddress.IPv4Network | ipaddress.IPv6Network) -> bytes:
    n = net.prefixlen
    return bytes([n]) + net.network_address.packed[:(n + 7) // 8]


def attr(flags: int, kind: int, value: bytes) -> bytes:
    if len(value) > 255:
        return struct.pack("!BBH", flags | 0x10, kind, len(value)) + value
    return struct.pack("!BBB", flags, kind, len(value)) + value


def packed(items: list[bytes], room: int) -> list[bytes]:
    """`items` joined into as few runs of at most `room` bytes as they fit in, in order."""
    out, chunk, size = [], [], 0
    for it in items:
        if chunk and size + len(it) > room:
            out.append(b"".join(chunk))
            chunk, size = [], 0
        chunk.append(it)
        size += len(it)
    if chunk:
        out.append(b"".join(chunk))
    return out


def updates(prefixes: list, local_as: int, nh4: str, nh6: str) -> list[bytes]:
    """The UPDATE messages announcing `prefixes`, IPv4 ones in the NLRI field, IPv6 ones
    in MP_REACH_NLRI, as many per message as fit."""
    origin = attr(0x40, 1, b"\x00")
    as_path = attr(0x40, 2, struct.pack("!BBI", 2, 1, local_as))  # AS_SEQUENCE of one
    v4 = [nlri(p) for p in prefixes if p.version == 4]
    v6 = [nlri(p) for p in prefixes if p.version == 6]
    attrs4 = origin + as_path + attr(0x40, 3, socket.inet_aton(nh4))
    out = [message(UPDATE, struct.pack("!HH", 0, len(attrs4)) + attrs4 + n)
           for n in packed(v4, MAX_MESSAGE - 19 - 4 - len(attrs4))]
    head = struct.pack("!HBB", 2, 1, 16) + socket.inet_pton(socket.AF_INET6, nh6) + b"\x00"
    fixed = len(origin) + len(as_path) + 4 + len(head)  # MP_REACH_NLRI, extended length
    for n in packed(v6, MAX_MESSAGE - 19 - 4 - fixed):
        attrs = origin + as_path + attr(0x80, 14, head + n)
        out.append(message(UPDATE, struct.pack("!HH", 0, len(attrs)) + attrs))
    return out


def read_message(sock: socket.socket) -> tuple[int, bytes]:
    def exactly(n: int) -> bytes:
        buf = b""
        while len(buf) < n:
            part = sock.recv(n - len(buf))
            if not part:
                raise ConnectionError("the peer closed the session")
            buf += part
        return buf
    head = exactly(19)
    if head[:16] != MARKER:
        raise ConnectionError("not a BGP message")
    length, kind = struct.unpack("!HB", head[16:])
    return kind, exactly(length - 19)


def main() -> int:
    if len(sys.argv) != 8:
        print(__doc__, file=sys.stderr)
        return 2
    peer, local_as, _peer_as, router_id, nh4, nh6, path = sys.argv[1:]
    local_as = int(local_as)
    with open(path) as f:
        prefixes = [ipaddress.ip_network(line.strip()) for line in f if line.strip()]
    msgs = updates(prefixes, local_as, nh4, nh6)
    sock = socket.create_connection((peer, 179), timeout=30)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.sendall(open_message(local_as, router_id))
    kind, body = read_message(sock)
    if kind != OPEN:
        print(f"expected OPEN, got type {kind}: {body.hex()}", file=sys.stderr)
        return 1
    sock.sendall(message(KEEPALIVE, b""))
    while True:
        kind, body = read_message(sock)
        if kind == KEEPALIVE:
            break
        if kind == NOTIFICATION:
            print(f"NOTIFICATION {body.hex()}", file=sys.stderr)
            return 1
    sock.settimeout(None)
    print(f"established {time.monotonic():.6f}", flush=True)
    failed = threading.Event()

    def drain() -> None:
        # Whatever the peer sends (its UPDATEs, End-of-RIB, KEEPALIVEs) is read and
        # dropped; a NOTIFICATION ends the session.
        try:
            while True:
                kind, body = read_message(sock)
                if kind == NOTIFICATION:
                    print(f"NOTIFICATION {body.hex()}", file=sys.stderr, flush=True)
                    failed.set()
                    return
        except (ConnectionError, OSError):
            failed.set()

    threading.Thread(target=drain, daemon=True).start()
    sys.stdin.readline()
    t0 = time.monotonic()
    sock.sendall(msgs[0])
    sock.sendall(b"".join(msgs[1:]))
    print(f"sent {t0:.6f} {time.monotonic():.6f}", flush=True)
    # KEEPALIVEs until standard input closes.
    stop = threading.Event()
    threading.Thread(target=lambda: (sys.stdin.read(), stop.set()), daemon=True).start()
    while not stop.wait(HOLD_TIME / 3):
        if failed.is_set():
            return 1
        sock.sendall(message(KEEPALIVE, b""))
    return 1 if failed.is_set() else 0


if __name__ == "__main__":
    sys.exit(main())
