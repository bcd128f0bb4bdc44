"""tests/sr6test.py, the helpers every suite shares: its config splitting must read a
config as sr6's parser does (crates/config/src/lex.rs, whose unit tests the first cases
repeat), and refuse what sr6 refuses at the same line and column."""
import re

import pytest

import sr6test
from sr6_oracle import config, rx, udp6
from sr6test import ConfigSyntaxError, config_commands, kernel_command


def words(line):
    return config_commands(line)[0] if config_commands(line) else []


def test_columns_and_comments():
    assert words("  ip  -6 route # comment") == ["ip", "-6", "route"]
    assert config_commands("# only a comment") == []
    assert words("key#1 x") == ["key#1", "x"]
    assert words("\ta\tb") == ["a", "b"]


def test_quotes_and_escapes():
    assert words("set \"a b#c\" ''") == ["set", "a b#c", ""]
    assert words(r'"q\"x\\"') == ['q"x\\']
    assert words(r"a\ b") == ["a b"]
    assert words("'it''s'") == ["its"]
    assert words(r"'a\b'") == [r"a\b"]


def test_commands_blank_lines_continuations_sudo():
    text = ("\ufeff# header\n\n  ip -6 route add fc00::/64 \\  \n   via fc00::1 dev eth0 # c\r\n"
            "sudo ip link set eth1 up\n# comment \\\nsysctl -w a.b=1\nsegs a,b\\\nx")
    assert config_commands(text) == [
        ["ip", "-6", "route", "add", "fc00::/64", "via", "fc00::1", "dev", "eth0"],
        ["ip", "link", "set", "eth1", "up"],
        ["sysctl", "-w", "a.b=1"],
        ["segs", "a,b", "x"],
    ]


@pytest.mark.parametrize("text, pos", [
    ('ip sr hmac set 7 sha256 "open\n', (2, 25)),
    ("ip -6 route add fc00:9::/64 \\\n", (2, 29)),
])
def test_refused_where_sr6_refuses(sr6_cli, text, pos):
    base = config()
    full = base.splitlines()[0] + "\n" + text
    with pytest.raises(ConfigSyntaxError) as e:
        config_commands(full)
    assert (e.value.line, e.value.col) == pos
    r = sr6_cli(full, [rx(udp6())])
    assert r.returncode != 0
    assert re.search(rf"{re.escape(r.config_path.name)}:{pos[0]}:{pos[1]}\b", r.stderr), r.stderr


def test_kernel_command():
    assert kernel_command(["ip", "sr", "hmac", "set", "7", "sha256", "a b"], "n") == (
        ["ip", "netns", "exec", "n", "ip", "sr", "hmac", "set", "7", "sha256"], "a b\n")
    assert kernel_command(["ip", "-6", "addr", "add", "fc00::1/64", "dev", "e"], "n") == (
        ["ip", "-n", "n", "-6", "addr", "add", "fc00::1/64", "dev", "e", "nodad"], None)
    assert kernel_command(["ip", "addr", "add", "10.0.0.1/24", "dev", "e"], "n")[0][-1] == "e"
    assert kernel_command(["sysctl", "-w", "x=1"], "n") == (["ip", "netns", "exec", "n", "sysctl", "-w", "x=1"], None)
    assert kernel_command(["route", "add", "fc00::/64", "dev", "e"], "n") == (
        ["ip", "-n", "n", "route", "add", "fc00::/64", "dev", "e"], None)


def test_binary_lookup(monkeypatch, tmp_path):
    fake = tmp_path / "sr6"
    monkeypatch.setenv("SR6_BIN", str(fake))
    with pytest.raises(sr6test.BinaryNotFound, match="SR6_BIN="):
        sr6test.binary()
    fake.write_text("#!/bin/sh\n")
    fake.chmod(0o755)
    assert sr6test.binary() == fake
    monkeypatch.delenv("SR6_BIN")
    monkeypatch.delenv("SR6_PERF_BIN", raising=False)
    with pytest.raises(sr6test.BinaryNotFound, match="SR6_NO_SUCH_BIN is not set"):
        sr6test.binary("sr6-no-such")


def test_pcap_round_trip(tmp_path):
    p = tmp_path / "x.pcap"
    sr6test.write_pcap(p, [b"\x01" * 3, bytearray(70)], times=[5, 7])
    linktype, recs = sr6test.read_pcap(p)
    assert linktype == 1
    assert [(r.sec, r.orig_len, r.data) for r in recs] == [(5, 3, b"\x01" * 3), (7, 70, bytes(70))]
    p.write_bytes(p.read_bytes()[:-1])
    with pytest.raises(ValueError, match="truncated record"):
        sr6test.read_pcap(p)
