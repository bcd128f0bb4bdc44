"""Send-and-capture helper; runs INSIDE the tester namespace (`ip netns exec NS python3 ...`).

Usage: python3 knet_helper.py JOB.json OUT.json

JOB.json = {"devs": [tester-side device names], "quiet_ms": 30, "max_ms": 1000,
            "frames": [[tester_dev, hex_frame], ...]}

For every frame, in order: read (and keep, as "noise") whatever is already queued on the
tester-side sockets, send the frame on its device with an AF_PACKET socket, then read
every device until nothing has arrived for `quiet_ms` (at most `max_ms`).  Frames the
tester itself sent (PACKET_OUTGOING) are not recorded.  Nothing is filtered here: the
harness decides what is neighbour-discovery / MLD noise.

OUT.json = {"results": [[[tester_dev, hex], ...] per frame], "noise": [[dev, hex], ...]}

Standard library only (it starts in a few milliseconds and needs no scapy).
"""
import json
import select
import socket
import sys
import time

ETH_P_ALL = 0x0003
PACKET_OUTGOING = 4


def main() -> None:
    job = json.load(open(sys.argv[1]))
    quiet = job.get("quiet_ms", 30) / 1000.0
    max_wait = job.get("max_ms", 1000) / 1000.0
    socks = {}
    for dev in job["devs"]:
        s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 22)
        s.bind((dev, 0))
        s.setblocking(False)
        socks[dev] = s
    by_fd = {s.fileno(): d for d, s in socks.items()}

    def read_ready(timeout):
        got = []
        r, _, _ = select.select(list(socks.values()), [], [], timeout)
        for s in r:
            dev = by_fd[s.fileno()]
            while True:
                try:
                    data, addr = s.recvfrom(65535)
                except BlockingIOError:
                    break
                if addr[2] == PACKET_OUTGOING:
                    continue
                got.append([dev, data.hex()])
        return got

    noise, results = [], []
    for dev, hexframe in job["frames"]:
        noise += read_ready(0)
        socks[dev].send(bytes.fromhex(hexframe))
        out = []
        start = last = time.monotonic()
        while True:
            now = time.monotonic()
            if now - last >= quiet or now - start >= max_wait:
                break
            got = read_ready(max(0.0, min(quiet - (now - last), max_wait - (now - start))))
            if got:
                out += got
                last = time.monotonic()
        results.append(out)
    json.dump({"results": results, "noise": noise}, open(sys.argv[2], "w"))


if __name__ == "__main__":
    main()
