"""SRH HMAC verification at an End SID (behaviours.md "Endpoint behaviours" HMAC;
RFC 8754 §2.1.2, §2.1.2.1; kernel seg6_require_hmac semantics).

Packet: 3 SIDs [FINAL, SEG_B, SID], arriving at SID with Segments Left 2.
require_hmac (ingress device eth0): -1 ignore; 0 verify only if a TLV is present; 1 TLV
required.  Failure -> dropped, reason hmac_invalid, no ICMP."""
import pytest

from sr6_oracle import HOST_A, SEG_B, SRHTLVHMAC, config, hmac_tlv, rx, sr_pkt, srh_hmac, tx

SID = "fc00:f::1"
FINAL = "fc00:2::99"
SEGS = [FINAL, SEG_B, SID]
KEYS = {"sha1": (7, b"secret-one"), "sha256": (8, b"secret-two")}


def cfg(require):
    lines = [
        "ip sr hmac set 7 sha1 secret-one",
        "ip sr hmac set 8 sha256 secret-two",
        f"ip -6 route add {SID}/128 encap seg6local action End dev eth0",
    ]
    if require is not None:
        lines.append(f"sysctl -w net.ipv6.conf.eth0.seg6_require_hmac={require}")
    return config(*lines)


def packet(case, alg, dst=SID, sl=2, hlim=64):
    """case: valid / invalid / missing / unknown_key."""
    keyid, secret = KEYS[alg]
    if case == "missing":
        return sr_pkt(dst, SEGS, sl, hlim=hlim)
    if case == "valid":
        tlv = hmac_tlv(alg, secret, HOST_A, SEGS, keyid=keyid, flags=0x08)
    elif case == "invalid":
        good = srh_hmac(alg, secret, HOST_A, len(SEGS) - 1, 0x08, keyid, SEGS)
        tlv = SRHTLVHMAC(keyid=keyid, hmac=bytes([good[0] ^ 0x01]) + good[1:])
    elif case == "unknown_key":
        tlv = hmac_tlv(alg, secret, HOST_A, SEGS, keyid=99, flags=0x08)
    else:
        raise ValueError(case)
    return sr_pkt(dst, SEGS, sl, hlim=hlim, flags=0x08, tlvs=[tlv])


def forwarded(case, alg):
    return tx(packet(case, alg, dst=SEG_B, sl=1, hlim=63), "eth1")


# (require_hmac, case) -> accepted?
MATRIX = {
    (-1, "valid"): True, (-1, "invalid"): True, (-1, "missing"): True, (-1, "unknown_key"): True,
    (0, "valid"): True, (0, "invalid"): False, (0, "missing"): True, (0, "unknown_key"): False,
    (1, "valid"): True, (1, "invalid"): False, (1, "missing"): False, (1, "unknown_key"): False,
}


@pytest.mark.parametrize("alg", ["sha1", "sha256"])
@pytest.mark.parametrize("require,case", MATRIX.keys(), ids=[f"require{r}-{c}" for r, c in MATRIX])
def test_hmac_verification(run_sr6, alg, require, case):
    res = run_sr6(cfg(require), [rx(packet(case, alg))])
    if MATRIX[(require, case)]:
        # The SRH (TLV included) is forwarded byte for byte; only DA, SL, hop limit change.
        res.expect(eth1=[forwarded(case, alg)])
    else:
        res.expect_nothing()  # no ICMP error either (RFC 8754 §2.1.2.1: MUST be dropped)
        assert res.drops().get("hmac_invalid") == 1, f"drops: {res.drops()}"


def test_require_hmac_defaults_to_0(run_sr6):
    # No sysctl line: the kernel default 0 -> missing accepted, invalid dropped.
    res = run_sr6(cfg(None), [rx(packet("missing", "sha256")), rx(packet("invalid", "sha256"))])
    res.expect(eth1=[forwarded("missing", "sha256")])
    assert res.drops().get("hmac_invalid") == 1


def test_hmac_wrong_algorithm_for_key_is_invalid(run_sr6):
    # A SHA-1 HMAC presented under the SHA-256 key id does not verify.
    keyid, secret = KEYS["sha256"]
    tlv = hmac_tlv("sha1", secret, HOST_A, SEGS, keyid=keyid, flags=0x08)
    pkt = sr_pkt(SID, SEGS, 2, flags=0x08, tlvs=[tlv])
    res = run_sr6(cfg(1), [rx(pkt)])
    res.expect_nothing()
    assert res.drops().get("hmac_invalid") == 1


def test_hmac_covers_source_address(run_sr6):
    # Same SRH, different source: the HMAC (computed for HOST_A) no longer verifies.
    pkt = packet("valid", "sha256")
    pkt.src = "fc00:a::222"
    res = run_sr6(cfg(1), [rx(pkt)])
    res.expect_nothing()
    assert res.drops().get("hmac_invalid") == 1


def test_require_hmac_is_per_ingress_device(run_sr6):
    lines = cfg(None) + "sysctl -w net.ipv6.conf.eth2.seg6_require_hmac=1\n"
    # Received on eth0 (require 0 by default): a packet without HMAC passes.
    res = run_sr6(lines, [rx(packet("missing", "sha1"))], in_dev="eth0")
    res.expect(eth1=[forwarded("missing", "sha1")])
    # Received on eth2 (require 1): the same packet is dropped.
    res = run_sr6(lines, [rx(packet("missing", "sha1"), "eth2")], in_dev="eth2")
    res.expect_nothing()
    assert res.drops().get("hmac_invalid") == 1
