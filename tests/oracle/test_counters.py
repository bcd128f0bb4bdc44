"""Counters in the --json report (brief: packets_in, tx, local, sids[], drops{}).

Per-SID bytes = the L3 packet length as received (frame length minus the 14-byte
Ethernet header).  behaviours.md: "Success counts the packet and its bytes on the SID; an
error counts on the SID's errors and in the drop reasons."""
import re

from sr6_oracle import (
    ADDR6, HOST_A, ICMPv6EchoRequest, IPv6, config, l3, rx, sid_entry, sr_pkt, udp_bytes,
    udp6,
)
from sr6_oracle import Raw

SID = "fc00:f::1"
SID_X = "fc00:f::2"
SID_DX6 = "fc00:f::3"
FINAL = "fc00:2::99"
CFG = config(
    f"ip -6 route add {SID}/128 encap seg6local action End dev eth0",
    f"ip -6 route add {SID_X}/128 encap seg6local action End.X nh6 fc00:13::2 dev eth0",
    f"ip -6 route add {SID_DX6}/128 encap seg6local action End.DX6 nh6 fc00:13::2 dev eth0",
)


def end_pkt(n):
    return sr_pkt(SID, [FINAL, SID], 1, inner=Raw(udp_bytes(HOST_A, FINAL, n=n)))


def test_report_has_the_documented_keys(run_sr6):
    res = run_sr6(CFG, [])
    js = res.json
    for k in ("packets_in", "tx", "local", "sids", "drops"):
        assert k in js, f"--json lacks {k!r}: {js}"
    assert js["packets_in"] == 0
    assert isinstance(js["tx"], dict) and isinstance(js["sids"], list) and isinstance(js["drops"], dict)
    for e in js["sids"]:
        for k in ("sid", "action", "packets", "bytes", "errors"):
            assert k in e, f"sid entry lacks {k!r}: {e}"


def test_every_configured_sid_is_listed_with_its_action(run_sr6):
    res = run_sr6(CFG, [])
    for sid, action in ((SID, "End"), (SID_X, "End.X"), (SID_DX6, "End.DX6")):
        e = sid_entry(res.json, sid)
        assert e["action"] == action
        assert (e["packets"], e["bytes"], e["errors"]) == (0, 0, 0)
    assert re.fullmatch(r"fc00:f::1/128", sid_entry(res.json, SID)["sid"]), "sid is written ADDR/LEN"


def test_sid_packets_and_bytes(run_sr6):
    frames = [rx(end_pkt(n)) for n in (10, 100, 1000)]
    res = run_sr6(CFG, frames)
    e = sid_entry(res.json, SID)
    assert e["packets"] == 3
    assert e["bytes"] == sum(len(l3(f)) for f in frames)
    assert e["errors"] == 0
    other = sid_entry(res.json, SID_X)
    assert (other["packets"], other["bytes"]) == (0, 0)


def test_sid_counts_are_per_sid(run_sr6):
    a = rx(end_pkt(10))
    b = rx(sr_pkt(SID_X, [FINAL, SID_X], 1))
    res = run_sr6(CFG, [a, b, b])
    assert (sid_entry(res.json, SID)["packets"], sid_entry(res.json, SID)["bytes"]) == (1, len(l3(a)))
    assert (sid_entry(res.json, SID_X)["packets"], sid_entry(res.json, SID_X)["bytes"]) == (2, 2 * len(l3(b)))


def test_sid_errors_are_counted_and_not_as_packets(run_sr6):
    ok = rx(end_pkt(10))
    bad_sl = rx(sr_pkt(SID, [FINAL, SID], 3))            # SL > LE + 1 -> Parameter Problem
    bad_hl = rx(sr_pkt(SID, [FINAL, SID], 1, hlim=1))    # Time Exceeded
    res = run_sr6(CFG, [ok, bad_sl, bad_hl])
    e = sid_entry(res.json, SID)
    assert e["packets"] == 1 and e["bytes"] == len(l3(ok))
    assert e["errors"] == 2
    assert res.drop_total() >= 2, f"errors must also appear in drops: {res.drops()}"
    assert len(res.frames("eth0")) == 2  # the two ICMP errors


def test_decap_sid_error_counted(run_sr6):
    bad = rx(sr_pkt(SID_DX6, [FINAL, SID_DX6], 1, nh=41, inner=udp6()))  # SL != 0
    res = run_sr6(CFG, [bad])
    assert sid_entry(res.json, SID_DX6)["errors"] == 1
    assert sid_entry(res.json, SID_DX6)["packets"] == 0


def test_hmac_failure_counts_as_sid_error(run_sr6):
    cfg = CFG + "sysctl -w net.ipv6.conf.eth0.seg6_require_hmac=1\n"
    res = run_sr6(cfg, [rx(end_pkt(10))])  # no HMAC TLV, required
    assert res.drops().get("hmac_invalid") == 1
    assert sid_entry(res.json, SID)["errors"] == 1


def test_packets_in_tx_local_and_drops_add_up(run_sr6):
    fwd = rx(udp6(dst="fc00:2::5"))
    local = rx(IPv6(src=HOST_A, dst=ADDR6["eth0"]) / ICMPv6EchoRequest())
    noroute = rx(udp6(dst="fc00:99::1"))  # -> ICMP error out eth0 + drop no_route
    blackhole = rx(udp6(dst="fc00:97::1"))
    cfg = CFG + "ip -6 route add blackhole fc00:97::/64\n"
    res = run_sr6(cfg, [fwd, fwd, local, noroute, blackhole])
    js = res.json
    assert js["packets_in"] == 5
    assert js["tx"].get("eth1") == 2 and js["tx"].get("eth0") == 1
    assert js["tx"].get("eth2", 0) == 0
    assert js["local"] == 1
    assert res.drops().get("no_route") == 1 and res.drops().get("blackhole") == 1
    for dev, n in js["tx"].items():
        assert len(res.frames(dev)) == n, f"tx[{dev}] = {n} but {dev}.pcap has {len(res.frames(dev))}"
    assert len(res.frames("local")) == js["local"]


def test_no_neighbour_drop_counted(run_sr6):
    cfg = CFG + "ip -6 route add fc00:5::/64 dev eth2\n"
    res = run_sr6(cfg, [rx(udp6(dst="fc00:5::1"))] * 3)
    assert res.drops().get("no_neighbour") == 3


def test_config_error_exit_status_and_position(sr6_cli):
    text = CFG + "ip -6 route add fc00:e::1/128 encap seg6local action End.Bogus dev eth0\n"
    line = text.count("\n")
    r = sr6_cli(text, [])
    assert r.returncode != 0
    col = text.splitlines()[-1].index("End.Bogus") + 1
    m = re.search(rf"{re.escape(r.config_path.name)}:{line}:(\d+)", r.stderr)
    assert m, f"stderr does not name {r.config_path.name}:{line}:COL:\n{r.stderr}"
    assert col <= int(m.group(1)) <= col + len("End.Bogus"), f"column {m.group(1)} is not at End.Bogus ({col})"


def test_frame_larger_than_a_buffer_is_dropped_not_truncated(run_sr6):
    """A frame longer than sr6's largest (9216 bytes) is dropped as too_big, even when
    its first 9216 bytes hold a complete IPv6 packet that could be forwarded (the rest
    read as padding): sr6 drops the frame, it does not forward a truncation of it."""
    max_frame = 9216
    plen = max_frame - 14 - 40
    big = rx(IPv6(src=HOST_A, dst=FINAL, nh=59, plen=plen) / Raw(bytes(plen + 84)))
    assert len(bytes(big)) == max_frame + 84
    small = rx(udp6(dst=FINAL))
    res = run_sr6(CFG, [big, small, big])
    assert res.drops().get("too_big") == 2, res.drops()
    out = res.frames("eth1")
    assert len(out) == 1 and l3(out[0])[8:] == l3(small)[8:], "only the small frame leaves"
