"""IPv4 fragmentation (RFC 791 §3.2) of the packets End.DT4 and End.DT46 decapsulate, which
the kernel comparison cannot drive (the kernel needs a VRF device for them): an inner
IPv4 packet without DF over the MTU of eth2 (1300) leaves as the fragments scapy's
`fragment()` makes of it (data of MTU - header rounded down to 8 bytes, the last taking
the rest), TTL - 1; with DF it is answered with Fragmentation Needed.  Plain forwarding
and End.DX4 are compared with the kernel in tests/kernel/test_k_mtu.py."""
import pytest
from scapy.layers.inet import fragment

from sr6_oracle import ADDR4, ICMP, IP, NH_IPV4, SEG_C, UDP, Raw, config, payload, rx, sr_pkt, tx

SID = "fc00:f::1"
MTU = 1300
TABLE100 = "ip route add 10.9.0.0/16 via 10.0.13.2 dev eth2 table 100"
CONFIGS = {
    "End.DT4": config("ip link set dev eth2 mtu 1300", TABLE100,
                      f"ip -6 route add {SID}/128 encap seg6local action End.DT4 vrftable 100 dev eth0"),
    "End.DT46": config("ip link set dev eth2 mtu 1300", TABLE100,
                       f"ip -6 route add {SID}/128 encap seg6local action End.DT46 vrftable 100 dev eth0"),
}


def inner4(total, df=False, flags=0, frag=0):
    return IP(src="10.1.0.7", dst="10.9.0.5", ttl=12, id=0x4321, flags=("DF" if df else flags), frag=frag) \
        / UDP(sport=40001, dport=40002) / payload(total - 28)


def forwarded(pkt):
    """`pkt` as forwarded: TTL - 1, checksum recomputed."""
    out = IP(bytes(pkt))
    out.ttl -= 1
    out.chksum = None
    return IP(bytes(out))


@pytest.mark.parametrize("behaviour", sorted(CONFIGS))
@pytest.mark.parametrize("total", [MTU, MTU + 1, MTU + 8, 1500, 2 * 1280 + 20, 2 * 1280 + 21, 4000])
def test_decapsulated_ipv4_over_mtu_is_fragmented(run_sr6, behaviour, total):
    inner = inner4(total)
    res = run_sr6(CONFIGS[behaviour], [rx(sr_pkt(SID, [SID, SEG_C], 0, nh=NH_IPV4, inner=inner))])
    want = fragment(forwarded(inner), MTU - 20)
    assert (len(want) > 1) == (total > MTU)
    res.expect(eth2=[tx(f, "eth2") for f in want])
    n = len(want) if total > MTU else 0
    assert res.json["fragmentation"] == {"packets": int(n > 0), "fragments": n}
    assert res.json["tx"]["eth2"] == len(want)


@pytest.mark.parametrize("behaviour", sorted(CONFIGS))
def test_decapsulated_fragment_keeps_its_offset_and_mf(run_sr6, behaviour):
    inner = inner4(1500, flags="MF", frag=20)
    res = run_sr6(CONFIGS[behaviour], [rx(sr_pkt(SID, [SID, SEG_C], 0, nh=NH_IPV4, inner=inner))])
    want = fragment(forwarded(inner), MTU - 20)
    for f in want:
        f.flags = "MF"          # a fragment that was not the last: every piece has MF
        f.chksum = None
    res.expect(eth2=[tx(IP(bytes(f)), "eth2") for f in want])


@pytest.mark.parametrize("behaviour", sorted(CONFIGS))
def test_decapsulated_ipv4_with_df_over_mtu_gets_fragmentation_needed(run_sr6, behaviour):
    inner = inner4(1400, df=True)
    res = run_sr6(CONFIGS[behaviour], [rx(sr_pkt(SID, [SID, SEG_C], 0, nh=NH_IPV4, inner=inner))])
    # RFC 1191 §4 to the inner source, quoting the packet as it was decapsulated.
    quote = bytes(inner)[:576 - 28]
    err = IP(src=ADDR4["eth0"], dst="10.1.0.7", ttl=64, tos=0xc0, id=0) / ICMP(type=3, code=4, nexthopmtu=MTU) \
        / Raw(quote)
    res.expect(eth0=[tx(err, "eth0")])
    assert res.json["fragmentation"] == {"packets": 0, "fragments": 0}
    assert res.json["drops"] == {"mtu_exceeded": 1}
