"""HMAC verification at an End SID by the ingress device's seg6_require_hmac
(RFC 8754 §2.1.2; kernel seg6_hmac_validate_skb). Packet: [FINAL, SEG_B, SID], SL 2."""
from kcommon import *  # noqa: F403

SEGS = [FINAL, SEG_B, SID]
KEYS = {"sha1": (7, b"secret-one"), "sha256": (8, b"secret-two")}


def cfg(require):
    return config("ip sr hmac set 7 sha1 secret-one", "ip sr hmac set 8 sha256 secret-two", seg6local("End"),
                  f"sysctl -w net.ipv6.conf.eth0.seg6_require_hmac={require}")


def packet(case, alg):
    keyid, secret = KEYS[alg]
    if case == "missing":
        return sr_pkt(SID, SEGS, 2)
    if case == "valid":
        tlv = hmac_tlv(alg, secret, HOST_A, SEGS, keyid=keyid, flags=0x08)
    elif case == "invalid":
        good = srh_hmac(alg, secret, HOST_A, len(SEGS) - 1, 0x08, keyid, SEGS)
        tlv = SRHTLVHMAC(keyid=keyid, hmac=bytes([good[0] ^ 1]) + good[1:])
    elif case == "unknown_key":
        tlv = hmac_tlv(alg, secret, HOST_A, SEGS, keyid=99, flags=0x08)
    return sr_pkt(SID, SEGS, 2, flags=0x08, tlvs=[tlv])


def frames():
    return [rx(packet(c, a)) for a in KEYS for c in ("valid", "invalid", "missing", "unknown_key")]


@scenario(IDENTICAL)
def test_hmac_require_minus1(kernel):
    """HMAC at End, seg6_require_hmac=-1: valid/invalid/missing/unknown key all forwarded"""
    kernel.run(cfg(-1), frames()).assert_identical()


@scenario(IDENTICAL)
def test_hmac_require_0(kernel):
    """HMAC at End, seg6_require_hmac=0: invalid and unknown key dropped, missing forwarded"""
    kernel.run(cfg(0), frames()).assert_identical(silent=[1, 3, 5, 7])


@scenario(IDENTICAL)
def test_hmac_require_1(kernel):
    """HMAC at End, seg6_require_hmac=1: only valid forwarded"""
    kernel.run(cfg(1), frames()).assert_identical(silent=[1, 2, 3, 5, 6, 7])
