#!/usr/bin/env python3
"""Writes examples/example.pcap: the frames `examples/example.conf` is demonstrated with.

Run: python3 examples/make_example_pcap.py   (needs scapy)
"""
import os

from scapy.all import UDP, Ether, ICMPv6EchoRequest, IP, IPv6, IPv6ExtHdrSegmentRouting, Raw, wrpcap

R0 = "02:00:00:00:00:a0"  # the router's eth0
CUST = "02:00:00:00:0a:02"


def srv6(dst, segs, sl, inner, hlim=64):
    return (Ether(src=CUST, dst=R0) / IPv6(src="fc00:2:9::1", dst=dst, hlim=hlim)
            / IPv6ExtHdrSegmentRouting(addresses=segs, segleft=sl, lastentry=len(segs) - 1) / inner)


payload = Raw(b"sr6 example payload")
frames = [
    # H.Encaps: customer IPv6 towards fc00:b:1::/64.
    Ether(src=CUST, dst=R0) / IPv6(src="fc00:a::2", dst="fc00:b:1::5", hlim=64) / UDP(sport=1000, dport=2000) / payload,
    # H.Encaps.Red: customer IPv4 towards 192.168.2.0/24.
    Ether(src=CUST, dst=R0) / IP(src="10.0.0.2", dst="192.168.2.7", ttl=64) / UDP(sport=1000, dport=2000) / payload,
    # End: SID list fc00:1::e -> fc00:2:2::1 (Segment List[0] is the last segment).
    srv6("fc00:1::e", ["fc00:2:2::1", "fc00:1::e"], 1, UDP(sport=1, dport=2) / payload),
    # End with PSP at the penultimate SID: the SRH is removed.
    srv6("fc00:1::e7", ["fc00:2:2::1", "fc00:1::e7"], 1, UDP(sport=1, dport=2) / payload),
    # End.X towards the service site.
    srv6("fc00:1::c3", ["fc00:2:2::1", "fc00:1::c3"], 1, UDP(sport=1, dport=2) / payload),
    # End.DX6: decapsulate, the inner packet goes to the customer.
    srv6("fc00:1::d6", ["fc00:1::d6"], 0, IPv6(src="fc00:b::5", dst="fc00:a::2") / UDP(sport=2000, dport=1000) / payload),
    # End.DX4: decapsulate an IPv4 packet.
    srv6("fc00:1::d4", ["fc00:1::d4"], 0, IP(src="192.168.2.7", dst="10.0.0.2") / UDP(sport=2000, dport=1000) / payload),
    # Hop limit 1 at End: ICMPv6 Time Exceeded back to the source.
    srv6("fc00:1::e", ["fc00:2:2::1", "fc00:1::e"], 1, UDP(sport=1, dport=2) / payload, hlim=1),
    # Segments Left beyond Last Entry + 1: ICMPv6 Parameter Problem (RFC 8754 §4.3.1.1).
    srv6("fc00:1::e", ["fc00:2:2::1", "fc00:1::e"], 5, UDP(sport=1, dport=2) / payload),
    # A ping to the router.
    Ether(src=CUST, dst=R0) / IPv6(src="fc00:a::2", dst="fc00:a::1") / ICMPv6EchoRequest(),
]
for i, f in enumerate(frames):
    f.time = 1700000000 + i / 1000
out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "example.pcap")
wrpcap(out, frames)
print(f"wrote {len(frames)} frames to {out}")
