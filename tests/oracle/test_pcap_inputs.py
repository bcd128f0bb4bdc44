"""`sr6 pcap` with several inputs (docs/cli.md "sr6 pcap"): `--in DEV=FILE` repeatable,
the frames of all inputs processed in timestamp order (ties: the input named first,
then file order), each as received on its own device."""
import subprocess
import sys
from pathlib import Path

from conftest import read_pcap_raw, write_pcap, write_pcap_us
from sr6_oracle import ADDR6, HOST_A, HOST_C, config, icmp6_error, l3, rx, tx, udp6, with_hlim

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import sr6test  # noqa: E402


def pkt(seed, hlim=64, dst=HOST_C):
    return udp6(dst=dst, hlim=hlim, n=16 + seed)


def test_frames_of_two_devices_interleave_in_timestamp_order(run_sr6):
    a1, b1, a2, b2 = pkt(1), pkt(2), pkt(3), pkt(4)
    res = run_sr6(config(), [("eth0", rx(a1, "eth0")), ("eth1", rx(b1, "eth1")),
                             ("eth0", rx(a2, "eth0")), ("eth1", rx(b2, "eth1"))])
    res.expect(eth2=[tx(with_hlim(p, 63), "eth2") for p in (a1, b1, a2, b2)])
    # Each output frame carries the timestamp of the frame that caused it (0..3 µs).
    _, recs = sr6test.read_pcap(res.out_dir / "eth2.pcap")
    assert [(r.sec, r.frac) for r in recs] == [(0, 0), (0, 1), (0, 2), (0, 3)]


def test_each_frame_is_processed_as_received_on_its_device(run_sr6):
    # Hop limit 1: the Time Exceeded is sent from an address of the arrival device
    # (RFC 6724 rule 5, as Linux's icmp6_send), so the device each frame was received
    # on shows in the error's source. Both errors go back toward HOST_A, out of eth0.
    x, y = pkt(5, hlim=1), pkt(6, hlim=1)
    fx, fy = rx(x, "eth1"), rx(y, "eth0")
    res = run_sr6(config(), [("eth1", fx), ("eth0", fy)])
    res.expect(eth0=[tx(icmp6_error("time_exceeded", l3(fx), src=ADDR6["eth1"], dst=HOST_A), "eth0"),
                     tx(icmp6_error("time_exceeded", l3(fy), src=ADDR6["eth0"], dst=HOST_A), "eth0")])
    assert res.json["packets_in"] == 2


def run(sr6_bin, tmp_path, cfg, *args):
    c = tmp_path / "sr6.conf"
    c.write_text(cfg)
    out = tmp_path / "out"
    p = subprocess.run([str(sr6_bin), "pcap", "--config", str(c), *args, "--out-dir", str(out), "--json"],
                       capture_output=True, text=True, timeout=60, cwd=tmp_path)
    return p, out


def test_equal_timestamps_go_by_argument_order_then_file_order(sr6_bin, tmp_path):
    a = [pkt(i) for i in range(3)]
    b = [pkt(10 + i) for i in range(2)]
    # All stamped 0: the second input named first comes first, each file in its order.
    write_pcap(tmp_path / "a.pcap", [rx(p, "eth0") for p in a])
    write_pcap(tmp_path / "b.pcap", [rx(p, "eth1") for p in b])
    p, out = run(sr6_bin, tmp_path, config(), "--in", f"eth1={tmp_path / 'b.pcap'}",
                 "--in", f"eth0={tmp_path / 'a.pcap'}")
    assert p.returncode == 0, p.stderr
    want = [bytes(tx(with_hlim(q, 63), "eth2")) for q in b + a]
    assert read_pcap_raw(out / "eth2.pcap") == want


def test_a_later_frame_waits_for_the_other_inputs(sr6_bin, tmp_path):
    # Input 1 holds frames at 5 and 6 µs, input 2 at 1, 5 and 9: merged 1, 5 (input 1
    # first on the tie), 5, 6, 9.
    one = [pkt(1), pkt(2)]
    two = [pkt(3), pkt(4), pkt(5)]
    write_pcap_us(tmp_path / "one.pcap", [rx(p, "eth0") for p in one], [5, 6])
    write_pcap_us(tmp_path / "two.pcap", [rx(p, "eth1") for p in two], [1, 5, 9])
    p, out = run(sr6_bin, tmp_path, config(), "--in", f"eth0={tmp_path / 'one.pcap'}",
                 "--in", f"eth1={tmp_path / 'two.pcap'}")
    assert p.returncode == 0, p.stderr
    order = [two[0], one[0], two[1], one[1], two[2]]
    assert read_pcap_raw(out / "eth2.pcap") == [bytes(tx(with_hlim(q, 63), "eth2")) for q in order]


def test_input_without_device_arrives_on_in_dev(sr6_bin, tmp_path):
    x, y = pkt(1, hlim=1), pkt(2, hlim=1)
    write_pcap(tmp_path / "x.pcap", [rx(x, "eth1")])
    write_pcap_us(tmp_path / "y.pcap", [rx(y, "eth2")], [1])
    p, out = run(sr6_bin, tmp_path, config(), "--in", str(tmp_path / "x.pcap"), "--in-dev", "eth1",
                 "--in", f"eth2={tmp_path / 'y.pcap'}")
    assert p.returncode == 0, p.stderr
    want = [tx(icmp6_error("time_exceeded", l3(rx(x, "eth1")), src=ADDR6["eth1"], dst=HOST_A), "eth0"),
            tx(icmp6_error("time_exceeded", l3(rx(y, "eth2")), src=ADDR6["eth2"], dst=HOST_A), "eth0")]
    assert read_pcap_raw(out / "eth0.pcap") == [bytes(w) for w in want]


def test_unknown_device_names_the_devices(sr6_bin, tmp_path):
    write_pcap(tmp_path / "x.pcap", [rx(pkt(1))])
    p, out = run(sr6_bin, tmp_path, config(), "--in", "eth9=x.pcap")
    assert p.returncode != 0
    assert "eth9" in p.stderr and "eth0, eth1, eth2" in p.stderr, p.stderr
    assert not (out / "eth2.pcap").exists(), "nothing is written when an input is refused"


def test_a_file_name_with_an_equals_sign_is_a_file(sr6_bin, tmp_path):
    # `x=1.pcap`: `x` is no device and the file exists, so it is a file, received on
    # the first device (eth0).
    a = pkt(1)
    write_pcap(tmp_path / "x=1.pcap", [rx(a, "eth0")])
    p, out = run(sr6_bin, tmp_path, config(), "--in", "x=1.pcap")
    assert p.returncode == 0, p.stderr
    assert read_pcap_raw(out / "eth2.pcap") == [bytes(tx(with_hlim(a, 63), "eth2"))]


def test_a_device_name_may_hold_an_equals_sign(sr6_bin, tmp_path):
    # Linux device names may contain '=' (dev_valid_name refuses only '/', ':' and
    # white space): `--in a=b=f.pcap` names device `a=b` when the config has one.
    cfg = config(
        "ip -6 addr add fc00:77::1/64 dev a=b",
        "ip -6 neigh add fc00:77::2 lladdr 02:aa:00:00:00:77 dev a=b",
        "ip -6 route add fc00:7::/48 via fc00:77::2 dev a=b",
    )
    x = pkt(1, hlim=1)
    f = rx(x, "eth0", src_mac="02:aa:00:00:00:99")
    f.dst = "02:00:00:00:00:04"  # the 4th device named: a=b
    write_pcap(tmp_path / "f.pcap", [f])
    p, out = run(sr6_bin, tmp_path, cfg, "--in", "a=b=f.pcap")
    assert p.returncode == 0, p.stderr
    err = icmp6_error("time_exceeded", l3(f), src="fc00:77::1", dst=HOST_A)
    assert read_pcap_raw(out / "eth0.pcap") == [bytes(tx(err, "eth0"))]
