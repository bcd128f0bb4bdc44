"""UDP traffic for the live tests; runs INSIDE a namespace (`ip netns exec NS python3 traffic.py ...`).

  traffic.py send DST PORT COUNT RATE [TEXT]
                                        -- COUNT datagrams at RATE per second (0: as fast
                                           as possible); payload = 8-byte sequence number
                                           + padding to 64 bytes (TEXT repeated, default
                                           "sr6-live"). Prints {"sent": N}.
  traffic.py recv PORT COUNT IDLE_S     -- counts datagrams until COUNT distinct sequence
                                           numbers arrived or nothing came for IDLE_S
                                           seconds. Prints {"received", "unique", "dups",
                                           "missing_first" (the first 10 missing numbers),
                                           "missing_last" (the last one, -1 if none)} as JSON. Writes "ready" to
                                           stderr once bound.

Standard library only.
"""
import json
import socket
import struct
import sys
import time


def send(dst: str, port: int, count: int, rate: float, text: str = "sr6-live") -> None:
    fam = socket.AF_INET6 if ":" in dst else socket.AF_INET
    s = socket.socket(fam, socket.SOCK_DGRAM)
    t0 = time.monotonic()
    sent = 0
    pad = (text.encode() * 56)[:56]
    for i in range(count):
        if rate > 0:
            due = t0 + i / rate
            while True:
                now = time.monotonic()
                if now >= due:
                    break
                time.sleep(min(due - now, 0.001))
        payload = struct.pack("!Q", i) + pad
        while True:
            try:
                s.sendto(payload, (dst, port))
                break
            except BlockingIOError:
                time.sleep(0.0005)
            except OSError as e:  # e.g. ENOBUFS, or no route yet: retry once later
                if e.errno in (105,):
                    time.sleep(0.001)
                    continue
                raise
        sent += 1
    print(json.dumps({"sent": sent}), flush=True)


def recv(port: int, count: int, idle: float) -> None:
    s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
    s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 22)
    s.bind(("::", port))
    s.settimeout(idle)
    print("ready", file=sys.stderr, flush=True)
    seen = set()
    received = 0
    while len(seen) < count:
        try:
            data, _ = s.recvfrom(2048)
        except socket.timeout:
            break
        if len(data) >= 8:
            received += 1
            seen.add(struct.unpack("!Q", data[:8])[0])
    missing = sorted(set(range(count)) - seen)
    print(json.dumps({"received": received, "unique": len(seen), "dups": received - len(seen),
                      "missing_first": missing[:10], "missing_last": missing[-1] if missing else -1}),
          flush=True)


if __name__ == "__main__":
    if sys.argv[1] == "send":
        send(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5]), *sys.argv[6:7])
    elif sys.argv[1] == "recv":
        recv(int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]))
    else:
        sys.exit(f"unknown mode {sys.argv[1]}")
