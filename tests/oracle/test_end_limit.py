"""End.Limit (RFC 9433 §6.8; behaviours.md "End.Limit"): an sr6 extension,
``action End.Limit [group-bits I] [rate KBPS] [burst BYTES]``.

RFC 9433 §6.8, Figure 12: the SID is LOC+FUNC, then a group-id of i bits, then a
limit-rate of j bits; flows of one AMBR group share the group id; a limit-rate of zero
means no rate limiting unless static configuration gives one. sr6 reads the limit-rate
in kbit/s and limits each group with a token bucket of ``burst`` bytes.

The oracle for the decisions is a token bucket written here from that definition (a
bucket of ``burst`` bytes that fills at the rate; a packet passes if the bucket holds
its IPv6 length, which it then takes out; a packet larger than the bucket passes a full
bucket), fed with the pcap timestamps; and, whatever the model, the envelope every rate
limiter must keep: over any interval, no more than ``burst + rate × interval`` bytes of a
group pass. Conforming packets must come out exactly as End makes them (RFC 8986 §4.1).

Topology (sr6_oracle): A on eth0, B on eth1 (fc00:2::/48, SEG_B), C on eth2."""
import ipaddress
import random
import re

import pytest

from sr6_oracle import HOST_A, SEG_B, Raw, config, rx, sid_entry, sr_pkt, tx, udp_bytes

PREFIX = "fc00:7::"          # the End.Limit SID, a /64
FINAL = "fc00:2::99"         # behind B


def limit_line(extra="", prefix=f"{PREFIX}/64"):
    return f"ip -6 route add {prefix} encap seg6local action End.Limit {extra} dev eth0".replace("  ", " ")


def sid(group=0, kbps=0, gbits=16):
    """The SID with its argument: the /64, then ``gbits`` of group id, then the
    limit-rate in the remaining bits (Figure 12)."""
    rbits = 64 - gbits
    arg = (group << rbits) | kbps
    return str(ipaddress.IPv6Address(int(ipaddress.IPv6Address(PREFIX)) | arg))


def pkt(dst, n, hlim=64):
    """IPv6 / SRH [FINAL, SEG_B, dst] at SL 2 / UDP with n payload bytes."""
    segs = [FINAL, SEG_B, dst]
    return sr_pkt(dst, segs, 2, hlim=hlim, inner=Raw(udp_bytes(HOST_A, FINAL, n)))


def ended(p):
    """What End (RFC 8986 §4.1) makes of ``pkt``: SL 1, destination SEG_B, hop limit - 1."""
    segs = [FINAL, SEG_B, p.dst]
    return sr_pkt(SEG_B, segs, 1, hlim=p.hlim - 1, inner=Raw(bytes(p.payload.payload)))


class Bucket:
    """Token buckets per group, kept (as docs/behaviours.md states the arithmetic) as the
    time at which each would be full again: a packet of ``size`` bytes at ``kbps`` costs
    ``size * 8e6 // kbps`` ns of refill; it passes if, paid, the bucket is refilled at
    most ``burst * 8e6 // kbps`` ns after ``now`` (or, larger than the bucket, finds it
    full)."""

    def __init__(self, burst):
        self.burst, self.full_at = burst, {}

    def admit(self, group, size, kbps, now):
        cost = size * 8_000_000 // kbps
        depth = max(self.burst * 8_000_000 // kbps, cost)
        paid = max(self.full_at.get(group, 0), now) + cost
        if paid - now > depth:
            return False
        self.full_at[group] = paid
        return True


def ipv6_len(p):
    return len(bytes(p))


def run_schedule(run_sr6, line, frames, times_us):
    return run_sr6(config(line), [rx(f) for f in frames], times_us=times_us)


HEADERS = 40 + 8 + 3 * 16 + 8   # IPv6, SRH of 3 segments, UDP: a packet is HEADERS + n


def expect_model(res, frames, times_us, groups, kbps, burst):
    """The frames the token buckets pass, End-processed on eth1; the rest rate_limited."""
    model = Bucket(burst)
    passed = [f for f, t, g in zip(frames, times_us, groups) if model.admit(g, ipv6_len(f), kbps, t * 1000)]
    res.expect(eth1=[tx(ended(f), "eth1") for f in passed])
    dropped = len(frames) - len(passed)
    assert res.drops() == ({"rate_limited": dropped} if dropped else {}), res.drops()
    return passed


def test_burst_then_the_rate(run_sr6):
    # 8 kbit/s = one byte per ms; a 1,000-byte bucket; 200-byte packets every 40 ms.
    dst = sid(group=7, kbps=8)
    frames = [pkt(dst, 200 - HEADERS) for _ in range(40)]
    assert all(ipv6_len(f) == 200 for f in frames)
    times = [40_000 * i for i in range(40)]
    res = run_schedule(run_sr6, limit_line("group-bits 16 burst 1000"), frames, times)
    passed = expect_model(res, frames, times, [7] * 40, 8, 1000)
    # Five empty the bucket in the first 160 ms (it refills 160 bytes meanwhile); from
    # then on one in five (200 bytes per 200 ms).
    assert frames[:6] == passed[:6] and 10 < len(passed) < 16


def test_groups_have_buckets_of_their_own(run_sr6):
    a, b = sid(group=1, kbps=8), sid(group=2, kbps=8)
    frames = [pkt(a, 200 - HEADERS)] * 8 + [pkt(b, 200 - HEADERS)] * 3     # all at t = 0
    res = run_schedule(run_sr6, limit_line("group-bits 16 burst 1000"), frames, [0] * 11)
    # Five of group 1 fit its bucket; group 2's three all pass.
    passed = expect_model(res, frames, [0] * 11, [1] * 8 + [2] * 3, 8, 1000)
    assert passed == frames[:5] + frames[8:]


def test_limit_rate_zero_takes_the_static_rate(run_sr6):
    dst = sid(group=3, kbps=0)
    frames = [pkt(dst, 100 - HEADERS + 4)] * 6        # 104 bytes
    res = run_schedule(run_sr6, limit_line("group-bits 16 rate 8 burst 320"), frames, [0] * 6)
    passed = expect_model(res, frames, [0] * 6, [3] * 6, 8, 320)
    assert passed == frames[:3]


def test_no_rate_at_all_does_not_limit(run_sr6):
    dst = sid(group=3, kbps=0)
    frames = [pkt(dst, 200)] * 50
    res = run_schedule(run_sr6, limit_line("group-bits 16 burst 100"), frames, [0] * 50)
    res.expect(eth1=[tx(ended(f), "eth1") for f in frames])
    assert sid_entry(res.json, f"{PREFIX}/64")["packets"] == 50


def test_a_packet_over_the_burst_passes_a_full_bucket(run_sr6):
    dst = sid(group=0, kbps=8)
    big, small = pkt(dst, 1000), pkt(dst, 20)
    res = run_schedule(run_sr6, limit_line("group-bits 16 burst 500"), [big, small, small], [0, 0, 2_000_000])
    # 1,072 bytes (over the 500-byte bucket) pass a full bucket; the next 100 bytes find
    # it 1,072 ms in debt at one byte per ms: refused at 0, passed 2 s later.
    model = Bucket(500)
    want = [f for f, t in zip([big, small, small], [0, 0, 2_000_000_000]) if model.admit(0, ipv6_len(f), 8, t)]
    assert want == [big, small]
    res.expect(eth1=[tx(ended(f), "eth1") for f in want])


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_traffic_follows_the_bucket_and_its_envelope(run_sr6, seed):
    rng = random.Random(seed)
    kbps, burst = 80, 2000                       # 10 bytes per ms, 2,000-byte bucket
    groups = {g: sid(group=g, kbps=kbps, gbits=8) for g in (5, 200)}
    frames, times, gs = [], [], []
    t = 0
    for _ in range(160):
        t += rng.randrange(0, 8_000)             # microseconds
        g = rng.choice(list(groups))
        frames.append(pkt(groups[g], rng.randrange(8, 400)))
        times.append(t)
        gs.append(g)
    res = run_schedule(run_sr6, limit_line(f"group-bits 8 burst {burst}"), frames, times)
    model = Bucket(burst)
    passed = [i for i, (f, t, g) in enumerate(zip(frames, times, gs)) if model.admit(g, ipv6_len(f), kbps, t * 1000)]
    assert 0 < len(passed) < len(frames), "the schedule must exercise both outcomes"
    expect_model(res, frames, times, gs, kbps, burst)
    # The envelope, whatever the model: bytes passed in [t_i, t_j] <= burst + rate x span.
    for g in groups:
        mine = [(times[i], ipv6_len(frames[i])) for i in passed if gs[i] == g]
        for a in range(len(mine)):
            total = 0
            for b in range(a, len(mine)):
                total += mine[b][1]
                span_ms = (mine[b][0] - mine[a][0]) / 1000
                assert total <= burst + 10 * span_ms + 1, (g, a, b, total, span_ms)


# --- configuration --------------------------------------------------------------------


def pos(r):
    m = re.search(rf"{re.escape(r.config_path.name)}:(\d+):(\d+)", r.stderr)
    assert m, r.stderr
    return int(m.group(1)), int(m.group(2))


@pytest.mark.parametrize("line,token,words", [
    (limit_line("group-bits 17"), "17", "group-bits"),
    (limit_line("burst 0"), "0", "burst"),
    (limit_line("rate fast"), "fast", "rate"),
])
def test_bad_parameter_is_refused_at_its_column(sr6_cli, line, token, words):
    text = config(line)
    r = sr6_cli(text, [])
    assert r.returncode != 0
    ln, col = pos(r)
    assert ln == text.count("\n") and col == line.index(f" {token}", line.index(words)) + 2, r.stderr


@pytest.mark.parametrize("prefix,extra,why", [
    ("fc00:7::1/128", "group-bits 1", "does not fit"),
    ("fc00:7::/48", "group-bits 8", "72 bits"),
])
def test_a_layout_that_does_not_fit_is_refused_with_its_line(sr6_cli, prefix, extra, why):
    text = config(limit_line(extra, prefix=prefix))
    r = sr6_cli(text, [])
    assert r.returncode != 0 and why in r.stderr, r.stderr
    assert pos(r)[0] == text.count("\n"), r.stderr
