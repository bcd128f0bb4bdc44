"""The `sr6 pcap` command line and config errors (brief: interface of the binary)."""
import json
import re

import pytest

from sr6_oracle import config, rx, tx, udp6, with_hlim

GOOD = config()

# (bad line, offending token) -- each appended to a valid config.
BAD_LINES = {
    "unknown_action": ("ip -6 route add fc00:e::1/128 encap seg6local action End.Bogus dev eth0", "End.Bogus"),
    "unknown_mode": ("ip -6 route add fc00:9::/64 encap seg6 mode sideways segs fc00:2::1 dev eth1", "sideways"),
    "bad_ipv6_address": ("ip -6 route add fc00:9::/64 via fc00::zz dev eth1", "fc00::zz"),
    "bad_segment": ("ip -6 route add fc00:9::/64 encap seg6 mode encap segs fc00:2::1,nope dev eth1", "nope"),
    "host_bits_in_prefix": ("ip -6 route add fc00:9::1/64 via fc00:12::2 dev eth1", "fc00:9::1/64"),
    "bad_mac": ("ip link set eth1 address 02:00:00:00:zz:01", "02:00:00:00:zz:01"),
    "unknown_command": ("ip -6 frobnicate fc00::1", "frobnicate"),
    "flavour_not_allowed": ("ip -6 route add fc00:e::1/128 encap seg6local action End.DX6 nh6 fc00:13::2 "
                            "flavors psp dev eth0", "flavors psp"),
    "bad_require_hmac": ("sysctl -w net.ipv6.conf.eth0.seg6_require_hmac=7", "7"),
    # A device no line declares (a typo): the kernel says "Cannot find device".
    "undeclared_device": ("ip -6 route add fc00:9::/64 via fc00:12::2 dev eht1", "eht1"),
    "undeclared_oif": ("ip -6 route add fc00:e::1/128 encap seg6local action End.X nh6 fc00:12::2 oif eth7 "
                       "dev eth0", "eth7"),
}

# Lines that only a whole-config validation can reject (behaviours "Tables::build"): the
# line is named; the column is not checked.
SEMANTIC_BAD = {
    "missing_required_param": "ip -6 route add fc00:e::1/128 encap seg6local action End.DX6 dev eth0",
    "unknown_hmac_key": "ip -6 route add fc00:9::/64 encap seg6 mode encap segs fc00:2::1 hmac 42 dev eth1",
}


def _pos_re(r, line):
    return re.compile(rf"{re.escape(r.config_path.name)}:{line}:(\d+)")


def _no_outputs(r):
    return not r.out_dir.exists() or not list(r.out_dir.glob("*.pcap"))


@pytest.mark.parametrize("case", BAD_LINES.keys())
def test_bad_config_line_names_file_line_col(sr6_cli, case):
    bad, token = BAD_LINES[case]
    text = GOOD + bad + "\n"
    line = text.count("\n")
    r = sr6_cli(text, [rx(udp6())])
    assert r.returncode != 0, f"exit status 0 for a bad line ({case})"
    m = _pos_re(r, line).search(r.stderr)
    assert m, f"stderr does not contain {r.config_path.name}:{line}:COL\n{r.stderr}"
    col = bad.index(token) + 1
    assert col <= int(m.group(1)) <= col + len(token), (
        f"column {m.group(1)} does not point into {token!r} (1-based columns {col}..{col + len(token) - 1})\n{r.stderr}")
    assert _no_outputs(r), f"output pcaps written despite the config error: {list(r.out_dir.glob('*'))}"


@pytest.mark.parametrize("case", SEMANTIC_BAD.keys())
def test_invalid_config_names_the_line(sr6_cli, case):
    text = GOOD + SEMANTIC_BAD[case] + "\n"
    line = text.count("\n")
    r = sr6_cli(text, [rx(udp6())])
    assert r.returncode != 0
    assert _pos_re(r, line).search(r.stderr), f"stderr does not name {r.config_path.name}:{line}:COL\n{r.stderr}"
    assert _no_outputs(r)


def test_error_on_first_line(sr6_cli):
    r = sr6_cli("bogus line here\n" + GOOD, [rx(udp6())])
    assert r.returncode != 0
    assert _pos_re(r, 1).search(r.stderr), r.stderr


def test_missing_input_file(sr6_cli):
    r = sr6_cli(GOOD, [], write_input=False)
    assert r.returncode != 0
    assert "in.pcap" in r.stderr, f"the message should name the missing file:\n{r.stderr}"
    assert r.stderr.count("No such file or directory") == 1, f"the reason, said once:\n{r.stderr}"
    assert _no_outputs(r)


def test_missing_config_file(sr6_cli):
    r = sr6_cli(None, [rx(udp6())], config_name="does-not-exist.conf")
    assert r.returncode != 0
    assert "does-not-exist.conf: cannot read" in r.stderr, r.stderr
    assert r.stderr.count("No such file or directory") == 1, f"the reason, said once:\n{r.stderr}"


def test_input_not_a_pcap(sr6_bin, tmp_path):
    import subprocess
    cfg = tmp_path / "sr6.conf"
    cfg.write_text(GOOD)
    bad = tmp_path / "in.pcap"
    bad.write_bytes(b"this is not a pcap file at all")
    p = subprocess.run([str(sr6_bin), "pcap", "--config", str(cfg), "--in", str(bad),
                        "--out-dir", str(tmp_path / "out"), "--json"], capture_output=True, text=True, timeout=60)
    assert p.returncode != 0, "a non-pcap input must be an error"
    assert p.stderr.strip(), "with a message"


def _pcap_outputs(out):
    return {f.name: f.read_bytes() for f in sorted(out.glob("*.pcap"))}


@pytest.mark.parametrize("writer", ["scapy", "editcap"])
def test_pcapng_input_is_read_like_pcap(sr6_bin, tmp_path, writer):
    """Wireshark's default format: the same frames as pcapng (written by scapy's
    wrpcapng, or converted by Wireshark's editcap -F pcapng) give the
    same outputs, timestamps included, as the pcap that scapy writes."""
    import shutil
    import subprocess

    from scapy.all import wrpcap, wrpcapng
    frames = [rx(udp6()), rx(with_hlim(udp6(), 1)), rx(udp6(dst="fc00:9::1"))]
    for i, f in enumerate(frames):
        f.time = 1700000000 + i * 0.25
    pcap, ng = tmp_path / "in.pcap", tmp_path / "in.pcapng"
    wrpcap(str(pcap), frames)
    if writer == "scapy":
        wrpcapng(str(ng), frames)
    else:
        editcap = shutil.which("editcap")
        if editcap is None:
            pytest.fail("editcap (package tshark/wireshark-common) is needed", pytrace=False)
        subprocess.run([editcap, "-F", "pcapng", str(pcap), str(ng)], check=True, capture_output=True)
    cfg = tmp_path / "sr6.conf"
    cfg.write_text(GOOD)
    outs = []
    for name, inp in (("pcap", pcap), ("ng", ng)):
        out = tmp_path / name
        p = subprocess.run([str(sr6_bin), "pcap", "--config", str(cfg), "--in", str(inp), "--out-dir", str(out)],
                           capture_output=True, text=True, timeout=60)
        assert p.returncode == 0, p.stderr
        outs.append(_pcap_outputs(out))
    assert outs[0] == outs[1]
    assert sum(len(b) for b in outs[0].values()) > 24 * len(outs[0]), "some frames went out"


def test_not_a_capture_says_which_formats(sr6_bin, tmp_path):
    import subprocess
    bad = tmp_path / "x.cap"
    bad.write_bytes(b"\x00" * 64)
    p = subprocess.run([str(sr6_bin), "dump", str(bad)], capture_output=True, text=True, timeout=60)
    assert p.returncode != 0 and "pcap and pcapng" in p.stderr, p.stderr


def test_unknown_in_dev_is_an_error(sr6_cli):
    r = sr6_cli(GOOD, [rx(udp6())], in_dev="eth9")
    assert r.returncode != 0, "--in-dev naming a device absent from the config"


def test_one_pcap_per_device_and_local(run_sr6):
    res = run_sr6(GOOD, [rx(udp6())])
    names = {p.name for p in res.out_dir.glob("*.pcap")}
    assert {"eth0.pcap", "eth1.pcap", "eth2.pcap", "local.pcap"} <= names, names
    assert len(res.frames("eth0")) == 0 and len(res.frames("eth2")) == 0  # present, empty


def test_json_is_a_single_object_on_stdout(sr6_cli):
    r = sr6_cli(GOOD, [rx(udp6())])
    assert r.returncode == 0, r.stderr
    js = json.loads(r.stdout)
    assert js["packets_in"] == 1


def test_without_json_flag_still_writes_outputs(sr6_cli):
    from scapy.all import rdpcap  # not conftest's helper: tests/kernel has a conftest too

    r = sr6_cli(GOOD, [rx(udp6())], json_flag=False)
    assert r.returncode == 0, r.stderr
    assert len(rdpcap(str(r.out_dir / "eth1.pcap"))) == 1


def test_text_report_relates_frames_in_to_frames_out(sr6_cli):
    """The first line of the text report: N frames in -> M out (K of them ICMP errors),
    L local, D dropped: reasons. The oracle: the frames scapy wrote and the frames
    scapy reads back from the output files."""
    from scapy.all import rdpcap

    from sr6_oracle import ADDR6

    frames = [rx(udp6()), rx(udp6()), rx(with_hlim(udp6(), 1)), rx(udp6(dst=ADDR6["eth0"]))]
    r = sr6_cli(GOOD, frames, json_flag=False)
    assert r.returncode == 0, r.stderr
    out = sum(len(rdpcap(str(f))) for f in r.out_dir.glob("*.pcap") if f.name != "local.pcap")
    local = len(rdpcap(str(r.out_dir / "local.pcap")))
    assert (out, local) == (3, 1)
    first = r.stdout.splitlines()[0]
    assert first == f"4 frames in -> {out} out (1 of them ICMP errors), {local} local, 1 dropped: hop_limit 1", first
    assert "packets in:" not in r.stdout, "the counters once"


def test_default_in_dev_is_first_device_named(run_sr6):
    # require_hmac=1 on eth0 only: without --in-dev the frame is received on eth0 (the
    # first device named) and an SRv6 packet without HMAC is dropped; with --in-dev eth2
    # it passes.
    from sr6_oracle import sr_pkt
    sid = "fc00:f::1"
    cfg = config(f"ip -6 route add {sid}/128 encap seg6local action End dev eth0",
                 "sysctl -w net.ipv6.conf.eth0.seg6_require_hmac=1")
    pkt = sr_pkt(sid, ["fc00:2::99", sid], 1)
    res = run_sr6(cfg, [rx(pkt)])
    res.expect_nothing()
    assert res.drops().get("hmac_invalid") == 1
    res = run_sr6(cfg, [rx(pkt, "eth2")], in_dev="eth2")
    res.expect(eth1=[tx(sr_pkt("fc00:2::99", ["fc00:2::99", sid], 0, hlim=63), "eth1")])


def test_comments_and_blank_lines_are_ignored(run_sr6):
    text = "# leading comment\n\n" + GOOD.replace("ip -6 route add fc00:2::/48", "\n# c\nip -6 route add fc00:2::/48")
    pkt = udp6()
    res = run_sr6(text, [rx(pkt)])
    res.expect(eth1=[tx(with_hlim(pkt, 63), "eth1")])
