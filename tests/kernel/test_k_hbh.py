"""Hop-by-Hop Options (RFC 8200 §4.2, §4.3): examined by every router before routing, as
the kernel's ipv6_rcv does it (ipv6_parse_hopopts / ip6_parse_tlv) -- forwarded packets,
packets for a SID, for a local address and for a multicast group alike. Unknown option
types by their action bits, padding rules, the option limit (max_hbh_opts_number, 8),
Router Alert, Jumbo Payload, IOAM, CALIPSO and malformed headers. sr6 counts the drops
as hbh_malformed, hbh_too_many_options, hbh_unknown_option, hbh_jumbo, hbh_calipso."""
import struct

from kcommon import *  # noqa: F403

UNKNOWN = {"00": 0x1E, "01": 0x7E, "10": 0x9E, "11": 0xDE}   # unassigned types, by action bits
MCAST = "ff0e::1:5"
END = seg6local("End")


def hbh(opts: bytes, nh: int = NH_UDP) -> bytes:
    """A Hop-by-Hop Options header holding exactly `opts` (no padding added)."""
    assert (len(opts) + 2) % 8 == 0, "options must fill the header to a multiple of 8"
    return bytes([nh, (len(opts) + 2) // 8 - 1]) + opts


def opt(t: int, data: bytes = b"") -> bytes:
    return bytes([t, len(data)]) + data


def padn(n: int) -> bytes:
    """PadN taking n >= 2 bytes."""
    return opt(1, bytes(n - 2))


def with_hbh(opts: bytes, dst=HOST_B, src=HOST_A, hlim=64, n=16):
    """IPv6 / HBH(opts) / UDP to dst."""
    udp = udp_bytes(src, dst, n)
    return IPv6(src=src, dst=dst, hlim=hlim, nh=0) / Raw(hbh(opts) + udp)


def sr_with_hbh(opts: bytes, dst=SID, segs=(FINAL, SID), sl=1, src=HOST_A):
    """IPv6 / HBH(opts) / SRH / UDP: an SRv6 packet for a SID, the HBH header first."""
    segs = list(segs)
    return (IPv6(src=src, dst=dst, hlim=64, nh=0) / Raw(hbh(opts, nh=43))
            / srh(segs, segleft=sl, nh=NH_UDP) / Raw(udp_bytes(src, segs[0])))


def unknown(action: str) -> bytes:
    """An unknown option of the given action bits (4 bytes) after a PadN(2): at offset 4."""
    return padn(2) + opt(UNKNOWN[action], b"\x01\x02")


@scenario(IDENTICAL)
def test_unknown_option_forwarded(kernel):
    """Unknown option in transit: 00 skipped, 01 dropped, 10 and 11 Parameter Problem code 2 at the option"""
    frames = [rx(with_hbh(unknown(a))) for a in ("00", "01", "10", "11")]
    kernel.run(config(), frames).assert_identical(silent=[1])


@scenario(IDENTICAL)
def test_unknown_option_multicast(kernel):
    """Unknown option to a multicast group: 10 answered with Parameter Problem code 2, 11 and 01 dropped silently"""
    frames = [rx(with_hbh(unknown(a), dst=MCAST)) for a in ("00", "01", "10", "11")]
    kernel.run(config(), frames).assert_identical(silent=[0, 1, 3])


@scenario(IDENTICAL)
def test_unknown_option_at_sid_and_local(kernel):
    """Unknown option before the SRH of a packet for an End SID, or to a local address: same actions as in transit"""
    me = ADDR6["eth0"]
    frames = ([rx(sr_with_hbh(unknown(a))) for a in ("00", "01", "10", "11")]
              + [rx(with_hbh(unknown(a), dst=me)) for a in ("01", "10", "11")])
    kernel.run(config(END), frames).assert_identical(silent=[1, 4])


@scenario(IDENTICAL)
def test_unknown_option_pointer(kernel):
    """Parameter Problem points at the first option whose action asks for it, after skipped ones and padding"""
    frames = [rx(with_hbh(opt(0x1E, b"\x09") + bytes(1) + opt(0x9E))),                # at 46
              rx(with_hbh(bytes(3) + opt(0x3F) + opt(0xC9, bytes(9)) + padn(6))),        # at 47
              rx(with_hbh(opt(0x1E, bytes(12)) + opt(0x5E) + opt(0x9E) + padn(4))),      # 01 first
              rx(with_hbh(padn(2) + opt(0xDE, bytes(10)) + opt(0x9E) + padn(6)))]        # at 44
    kernel.run(config(), frames).assert_identical(silent=[2])


@scenario(IDENTICAL)
def test_padding(kernel):
    """Padding: up to 7 bytes in a row accepted; 8 in a row, or a non-zero PadN byte, drops the packet"""
    frames = [rx(with_hbh(bytes(6))),                                   # 6 x Pad1
              rx(with_hbh(padn(6))),                                    # PadN(6)
              rx(with_hbh(bytes(7) + opt(0x1E, bytes(5)))),             # 7 x Pad1, option
              rx(with_hbh(padn(7) + opt(0x1E, b"") + padn(5))),         # padding split by an option
              rx(with_hbh(bytes(8) + opt(0x1E, bytes(4)))),             # 8 x Pad1
              rx(with_hbh(padn(8) + padn(6))),                          # PadN(8)
              rx(with_hbh(bytes(4) + padn(3) + bytes(7))),              # Pad1s and PadN: 14 in a row
              rx(with_hbh(opt(1, b"\x00\x00\x07\x00"))),                # non-zero PadN
              rx(with_hbh(opt(1, b"\x80") + opt(0x1E, b"") + bytes(1)))]  # non-zero PadN of one byte
    kernel.run(config(), frames).assert_identical(silent=[4, 5, 6, 7, 8])


@scenario(IDENTICAL)
def test_malformed_header(kernel):
    """An option overrunning the header, a missing length byte, a header longer than the packet: dropped silently"""
    long_hdr = IPv6(src=HOST_A, dst=HOST_B, nh=0) / Raw(bytes([NH_UDP, 4]) + padn(6) + udp_bytes(HOST_A, HOST_B))
    frames = [rx(with_hbh(bytes([0x1E, 6]) + bytes(4))),                # 8 bytes where 6 fit
              rx(with_hbh(bytes(5) + bytes([0x1E]))),                   # type in the last byte, no length
              rx(with_hbh(padn(2) + bytes([0x1E, 12]) + bytes(2))),     # 14 bytes where 4 fit
              rx(long_hdr),                                             # Hdr Ext Len 4: 40 bytes, 30 there
              rx(with_hbh(bytes([0x9E, 6]) + bytes(4)))]                # action 10, but overrunning
    kernel.run(config(), frames).assert_identical(silent="all")


@scenario(IDENTICAL)
def test_option_limit(kernel):
    """8 non-padding options accepted, 9 dropped (net.ipv6.max_hbh_opts_number, default 8); padding not counted"""
    eight = opt(0x1E) * 8 + padn(6)
    nine = opt(0x1E) * 9 + padn(4)
    padded = (opt(0x1E) + bytes(1)) * 8 + padn(6)
    frames = [rx(with_hbh(eight)), rx(with_hbh(nine)), rx(with_hbh(padded)), rx(sr_with_hbh(nine))]
    kernel.run(config(END), frames).assert_identical(silent=[1, 3])


@scenario(IDENTICAL)
def test_router_alert(kernel):
    """Router Alert (RFC 2711): forwarded, also at a SID; of the wrong length, dropped"""
    ra = opt(5, b"\x00\x00") + padn(2)
    frames = [rx(with_hbh(ra)), rx(with_hbh(opt(5, b"\x00\x02") + padn(2))), rx(sr_with_hbh(ra)),
              rx(with_hbh(opt(5, b"\x00\x00\x00") + bytes(1))), rx(with_hbh(opt(5, b"\x00") + bytes(3)))]
    kernel.run(config(END), frames).assert_identical(silent=[3, 4])


@scenario(IDENTICAL)
def test_jumbo_payload(kernel):
    """Jumbo Payload (RFC 2675): length <= 65535 or Payload Length set -> Parameter Problem code 0; misaligned or wrong length dropped"""
    frames = [rx(with_hbh(opt(0xC2, struct.pack("!I", 4096)))),              # pointer at the length
              rx(with_hbh(opt(0xC2, struct.pack("!I", 70000)))),             # Payload Length not 0
              rx(with_hbh(bytes(1) + opt(0xC2, struct.pack("!I", 70000)) + bytes(7))),  # offset 3
              rx(with_hbh(opt(0xC2, struct.pack("!I", 70000)[:3]) + bytes(1)))]         # length 3
    kernel.run(config(), frames).assert_identical(silent=[2, 3])


@scenario(IDENTICAL)
def test_ioam_and_calipso(kernel):
    """IOAM aligned on 4 ignored (ioam6_enabled 0), misaligned dropped; CALIPSO dropped (no DOI configured)"""
    ioam = opt(0x31, bytes([0, 0]))       # IOAM, type 0 (pre-allocated trace) would need more: ignored
    calipso = opt(7, struct.pack("!IBB", 1, 0, 0) + bytes(2))   # DOI 1, no compartments, CRC 0
    frames = [rx(with_hbh(padn(2) + ioam)), rx(with_hbh(ioam + padn(2))), rx(with_hbh(calipso + padn(4)))]
    kernel.run(config(), frames).assert_identical(silent=[1, 2])


@scenario(IDENTICAL)
def test_hbh_with_hop_limit_1(kernel):
    """Options are examined before the hop limit: an option asking to drop wins over Time Exceeded"""
    frames = [rx(with_hbh(unknown(a), hlim=1)) for a in ("00", "01", "10")]
    kernel.run(config(), frames).assert_identical(silent=[1])



def payload_len_zero(opts: bytes, hlim=64):
    """IPv6 / HBH(opts) / UDP with Payload Length 0, as a jumbogram's (RFC 2675 §3)."""
    b = bytearray(bytes(with_hbh(opts, hlim=hlim)))
    b[4:6] = b"\x00\x00"
    return IPv6(bytes(b))


@scenario(IDENTICAL)
def test_payload_length_zero_jumbo(kernel):
    """Payload Length 0: the options are read over the whole frame; Jumbo length <= 65535 or an unknown option answered"""
    frames = [rx(payload_len_zero(opt(0xC2, struct.pack("!I", 4096)))),
              rx(payload_len_zero(opt(0xC2, struct.pack("!I", 70000)))),   # longer than the frame
              rx(payload_len_zero(unknown("10")))]
    kernel.run(config(), frames).assert_identical(silent=[1])


@scenario(DIFFERENCE("Linux forwards a packet of Payload Length 0 whose Hop-by-Hop header has no Jumbo Payload "
                     "option, the frame as it is", "RFC 2675 §3"))
def test_payload_length_zero_no_jumbo(kernel):
    """Payload Length 0 and no Jumbo Payload option: Parameter Problem code 0 at the Payload Length"""
    f = rx(payload_len_zero(padn(6)))
    r = kernel.run(config(), [f])
    r.expect_kernel(0, eth1=[tx(payload_len_zero(padn(6), hlim=63), "eth1")])
    r.expect_sr6(0, eth0=[pp(f, 0, 4)])
