//! Every kind of error: the right line, the right column, a useful `expected`.

use sr6_config::{parse_file, parse_line, parse_str, ConfigError};
use sr6_core::behaviour::{by_keyword, Flavor};
use sr6_core::spec::RouterSpec;

fn err(src: &str) -> ConfigError {
    match parse_str(src, "t.conf") {
        Ok(s) => panic!("{src:?} parsed: {s:?}"),
        Err(e) => e,
    }
}

/// 1-based column of the first occurrence of `needle` in `line`.
fn col(line: &str, needle: &str) -> usize {
    line.find(needle).unwrap_or_else(|| panic!("{needle} not in {line}")) + 1
}

/// The error of a one-line source is at the column of `needle`; returns it.
fn err_at(src: &str, needle: &str) -> ConfigError {
    let e = err(src);
    assert_eq!((e.line, e.col), (1, col(src, needle)), "{src:?}: {e}");
    e
}

/// The error of a one-line source is at the column of the last `needle`; returns it.
fn err_last(src: &str, needle: &str) -> ConfigError {
    let e = err(src);
    assert_eq!((e.line, e.col), (1, src.rfind(needle).unwrap() + 1), "{src:?}: {e}");
    e
}

/// The error of a one-line source is just past its end.
fn err_eol(src: &str) -> ConfigError {
    let e = err(src);
    assert_eq!((e.line, e.col), (1, src.trim_end().chars().count() + 1), "{src:?}: {e}");
    e
}

fn expected(e: &ConfigError) -> &str {
    e.expected.as_deref().unwrap_or_else(|| panic!("no expected in {e}"))
}

#[test]
fn display_format() {
    let e = err("frobnicate now");
    assert_eq!((e.file.as_str(), e.line, e.col), ("t.conf", 1, 1));
    assert_eq!(e.to_string(), format!("t.conf:1:1: unknown command `frobnicate` (expected {})", expected(&e)));
    let no_exp = ConfigError { file: "f".into(), line: 2, col: 3, message: "m".into(), expected: None };
    assert_eq!(no_exp.to_string(), "f:2:3: m");
    let _: &dyn std::error::Error = &no_exp;
    // A file that cannot be read: no line, and the io error said once.
    let e = sr6_config::parse_file(std::path::Path::new("/nonexistent/sr6.conf")).unwrap_err();
    let s = e.to_string();
    assert!(s.starts_with("/nonexistent/sr6.conf: cannot read the configuration: "), "{s}");
    assert_eq!(s.matches("os error 2").count(), 1, "{s}");
}

#[test]
fn unknown_commands() {
    let e = err_at("frobnicate now", "frobnicate");
    assert!(expected(&e).contains("route add"), "{e}");
    assert!(expected(&e).contains("sysctl"), "{e}");
    let e = err_at("ip -6 tunnel add x", "tunnel");
    assert!(expected(&e).contains("route"), "{e}");
    err_at("ip -x route add fc00::/16 dev eth0", "-x");
    err_at("ip -6 -4 route add fc00::/16 dev eth0", "-4");
    err_eol("ip -6");
    let e = err_at("ip route flush fc00::/16", "flush");
    assert_eq!(expected(&e), "add, replace, append or del");
    let e = err_at("ip route del fc00::/16", "fc00::/16");
    assert!(e.message.contains("no route fc00::/16"), "{e}");
    err_eol("sudo");
}

#[test]
fn multi_line_file_reports_the_bad_line() {
    let src = "# r1\n\
               ip -6 addr add fc00::1/64 dev eth0\n\
               ip -6 route add fc00:2::/64 via fc00::2\n\
               ip -6 route add fc00:3::/64 via fc00::zz\n\
               ip -6 route add fc00:4::/64 via fc00::2\n\
               this is not a command\n";
    let e = err(src);
    assert_eq!(e.line, 4);
    assert_eq!(e.col, col("ip -6 route add fc00:3::/64 via fc00::zz", "fc00::zz"));
    assert!(e.message.contains("fc00::zz"), "{e}");
}

#[test]
fn error_inside_continued_line() {
    let e = err("ip -6 route add fc00::/16 \\\n    encap seg6 mode bogus \\\n    segs fc00::1\n");
    assert_eq!((e.line, e.col), (2, col("    encap seg6 mode bogus \\", "bogus")));
    assert!(expected(&e).contains("encap.red"), "{e}");
    let e = err("route add fc00::/16 dev eth0 \\\n");
    assert_eq!((e.line, e.col), (1, col("route add fc00::/16 dev eth0 \\", "\\")));
    let e = err("route add fc00::/16 dev eth0 \\");
    assert_eq!(e.line, 1);
}

#[test]
fn lexical_errors() {
    let e = err_at("sr hmac set 1 sha1 \"unterminated", "\"");
    assert!(e.message.contains("unterminated"), "{e}");
}

#[test]
fn prefix_errors() {
    let e = err_at("ip -6 route add fc00::1/64 dev eth0", "fc00::1/64");
    assert!(e.message.contains("invalid prefix for the given prefix length"), "{e}");
    assert_eq!(expected(&e), "fc00::/64");
    let e = err_at("route add 10.1.2.3/8 dev eth0", "10.1.2.3/8");
    assert_eq!(expected(&e), "10.0.0.0/8");
    let e = err_at("route add fc00::/129 dev eth0", "129");
    assert!(expected(&e).contains("0 to 128"), "{e}");
    err_at("route add fc00::/064 dev eth0", "064");
    err_at("route add 10/8 dev eth0", "10/8");
    err_at("route add fc00:::/16 dev eth0", "fc00");
    err_eol("ip -6 route add");
    let e = err_at("ip -4 route add fc00::/16 dev eth0", "fc00::/16");
    assert!(e.message.contains("-4"), "{e}");
    let e = err_at("ip route add default dev eth0", "default");
    assert!(e.message.contains("-6"), "{e}");
    err_at("ip route add prohibit fc00::/16", "prohibit");
}

#[test]
fn route_option_errors() {
    let e = err_at("route add fc00::/16 dev eth0 frob 1", "frob");
    assert!(expected(&e).contains("via NH"), "{e}");
    err_at("route add fc00::/16 dev eth0 dev eth1", "dev eth1");
    err_at("route add fc00::/16 via fc00::1 via fc00::2", "via fc00::2");
    err_eol("route add fc00::/16 dev");
    err_at("route add fc00::/16 dev a/b", "a/b");
    err_last("route add fc00::/16 dev eth0 table 0", "0");
    err_at("route add fc00::/16 dev eth0 table mian", "mian");
    let e = err_at("route add fc00::/16 dev eth0 metric 010", "010");
    assert!(e.message.contains("octal"), "{e}");
    err_at("route add fc00::/16 dev eth0 metric 99999999999", "99999999999");
    err_at("route add fc00::/16 dev eth0 scope host", "host");
    err_at("route add fc00::/16 dev eth0 nexthop via fc00::1", "dev");
    err_at("route add fc00::/16 nexthop via fc00::1 table 9", "table");
    let e = err_eol("ip -6 route add fc00::/16 table 10");
    assert_eq!(expected(&e), "via NH or dev DEV");
    let e = err_at("ip -6 route add fc00::/16 via 10.0.0.1", "10.0.0.1");
    assert!(e.message.contains("IPv4"), "{e}");
    err_at("ip route add 10.0.0.0/8 via inet6 fc00::1", "fc00::1");
    err_at("ip route add 10.0.0.0/8 via inet6 10.0.0.1", "10.0.0.1");
    let e = err_at("route add fc00::/16 dev eth0 nh6 fc00::1", "nh6");
    assert!(e.message.contains("seg6local"), "{e}");
    err_at("route add fc00::/16 dev eth0 segs fc00::1", "segs");
    let e = err_at("route add blackhole fc00::/16 dev eth0", "dev");
    assert!(e.message.contains("blackhole"), "{e}");
    err_at("route add unreachable fc00::/16 via fc00::1", "via");
}

#[test]
fn seg6_errors() {
    let e = err_at("route add fc00::/16 encap mpls 100 dev eth0", "mpls");
    assert_eq!(expected(&e), "seg6, seg6local, gtp or bpf");
    let e = err_at("route add fc00::/16 encap seg6 mode tunnel segs fc00::1", "tunnel");
    for m in ["encap", "encap.red", "inline", "inline.red", "l2encap", "l2encap.red"] {
        assert!(expected(&e).contains(m), "{e}");
    }
    err_at("route add fc00::/16 encap seg6 segs fc00::1 mode encap", "segs");
    let e = err_at("route add fc00::/16 encap seg6 mode encap dev eth0", "seg6");
    assert!(expected(&e).contains("segs"), "{e}");
    err_at("route add fc00::/16 encap seg6 hmac 1 dev eth0", "seg6");
    let src = "route add fc00::/16 encap seg6 mode encap segs fc00::1,10.0.0.1 dev eth0";
    let e = err_at(src, "10.0.0.1");
    assert!(e.message.contains("IPv4"), "{e}");
    err_at("route add fc00::/16 encap seg6 mode encap segs fc00::1,,fc00::2", ",fc00::2");
    let seventeen = vec!["fc00::1"; 17].join(",");
    let src = format!("route add fc00::/16 encap seg6 mode encap segs {seventeen} dev eth0");
    let e = err_at(&src, &seventeen);
    assert!(expected(&e).contains("16"), "{e}");
    err_last("route add fc00::/16 encap seg6 mode encap segs fc00::1 hmac 0", "0");
    err_at("route add fc00::/16 encap seg6 mode encap mode inline segs fc00::1", "mode inline");
    err_last("route add fc00::/16 encap seg6 mode encap segs fc00::1 hmac 1 hmac 2", "hmac");
    err_last("route add fc00::/16 encap seg6 mode encap segs fc00::1 segs fc00::2", "segs");
    // A binding SID's `srh` reads its list the same way, in any order.
    let b6 = "route add fc00::9/128 encap seg6local action End.B6.Encaps srh";
    err_last(&format!("{b6} segs fc00::1 hmac 1 segs fc00::2 dev eth0"), "segs");
    err_last(&format!("{b6} hmac 1 segs fc00::1 hmac 2 dev eth0"), "hmac");
    err_last(&format!("{b6} hmac 1 dev eth0"), "srh");
    parse_str(&format!("{b6} hmac 1 segs fc00::1 dev eth0"), "t.conf").unwrap();
    let e = err_at("ip route add 10.0.0.0/8 encap seg6 mode inline segs fc00::1 dev eth0", "inline");
    assert!(e.message.contains("IPv4"), "{e}");
    err_at("ip route add 10.0.0.0/8 encap seg6 mode inline.red segs fc00::1 dev eth0", "inline.red");
    err_at(
        "route add fc00::/16 encap seg6 mode encap segs fc00::1 encap seg6 mode encap segs fc00::2",
        "encap seg6 mode encap segs fc00::2",
    );
}

#[test]
fn seg6local_errors() {
    let e = err_at("route add fc00::1/128 encap seg6local action End.Z dev eth0", "End.Z");
    assert!(e.message.contains("End.Z"), "{e}");
    for kw in ["End", "End.X", "End.DX6", "End.B6.Encaps.Red"] {
        assert!(expected(&e).contains(kw), "{e}");
    }
    // case-sensitive, as iproute2
    err_at("route add fc00::1/128 encap seg6local action end.dx6 nh6 fc00::1", "end.dx6");
    let e = err_at("route add fc00::1/128 encap seg6local End", "End");
    assert_eq!(expected(&e), "action BEHAVIOUR");
    err_eol("route add fc00::1/128 encap seg6local action");

    let e = err_at("ip -6 route add fc00::9/128 encap seg6local action End.DX6 nh6 fc00::2 table 100", "table");
    assert_eq!(e.message, "End.DX6 does not take `table`");
    assert_eq!(expected(&e), "a parameter of End.DX6: nh6 (required), oif");
    // What it takes is said once, in the parenthesis.
    assert!(
        e.to_string().ends_with("End.DX6 does not take `table` (expected a parameter of End.DX6: nh6 (required), oif)"),
        "{e}"
    );
    let e = err_at("route add fc00::9/128 encap seg6local action End vrftable 1", "vrftable");
    assert_eq!(expected(&e), "no parameter: End takes none");
    let e = err_at("route add fc00::9/128 encap seg6local action End.X nh6 fc00::1 map fc00::2", "map");
    assert_eq!(e.message, "End.X does not take `map`");
    assert_eq!(expected(&e), "a parameter of End.X: nh6 (required), oif");
    let e = err_at("route add fc00::9/128 encap seg6local action End map fc00::2 dev eth0", "map");
    assert!(e.message.contains("does not take `map`"), "{e}");

    let src = "ip -6 route add fc00::9/128 encap seg6local action End.DX6 dev eth2";
    let e = err_at(src, "End.DX6");
    assert_eq!(e.message, "End.DX6 requires nh6 ADDR");
    assert_eq!(expected(&e), "nh6 ADDR");
    let e = err_at("route add fc00::9/128 encap seg6local action End.B6", "End.B6");
    assert!(e.message.starts_with("End.B6 requires srh"), "{e}");
    let e = err_at("route add fc00::9/128 encap seg6local action End.DT4 dev vrf0", "End.DT4");
    assert!(e.message.contains("vrftable"), "{e}");

    let e = err_at("ip -6 route add fc00::9/128 encap seg6local action End.MAP dev eth0", "End.MAP");
    assert_eq!(e.message, "End.MAP requires map SID");
    assert_eq!(expected(&e), "map SID");
    let e = err_at("route add fc00::9/128 encap seg6local action End.MAP map fc00::zz dev eth0", "fc00::zz");
    assert_eq!(e.message, "invalid IPv6 address `fc00::zz`");
    let e = err_at("route add fc00::9/128 encap seg6local action End.MAP map 10.0.0.1", "10.0.0.1");
    assert_eq!(expected(&e), "an IPv6 address");
    err_eol("route add fc00::9/128 encap seg6local action End.MAP map");
    err_at("route add fc00::9/128 encap seg6local action End.MAP map fc00::1 map fc00::2", "map fc00::2");
    let e = err_at("route add fc00::9/128 encap seg6local action End.MAP map fc00::1 nh6 fc00::2", "nh6");
    assert_eq!(e.message, "End.MAP does not take `nh6`");
    assert_eq!(expected(&e), "a parameter of End.MAP: map (required)");
    let e = err_at("route add fc00::9/128 encap seg6local action End.MAP map fc00::1 flavors psp", "psp");
    assert_eq!(expected(&e), "End.MAP allows no flavours");
    // The file and the line, as for every error.
    let e = err("ip -6 addr add fc00:1::1/64 dev eth0\nroute add fc00::9/128 encap seg6local action End.MAP");
    assert_eq!(e.to_string(), "t.conf:2:46: End.MAP requires map SID (expected map SID)");

    err_at("route add fc00::9/128 encap seg6local action End.X nh6 10.0.0.1", "10.0.0.1");
    err_at("route add fc00::9/128 encap seg6local action End.DX4 nh4 fc00::1", "fc00::1");
    err_at("route add fc00::9/128 encap seg6local action End.X nh6 fc00::1 nh6 fc00::2", "nh6 fc00::2");
    err_last("route add fc00::9/128 encap seg6local action End action End", "action End");
    err_last("route add fc00::9/128 encap seg6local action End count count", "count");
    err_at("route add fc00::9/128 encap seg6local action End.DX2 oif a:b", "a:b");
    err_at("route add fc00::9/128 encap seg6local action End.B6 srh hmac 3", "srh");
    err_at("route add fc00::9/128 encap seg6local action End.B6 srh segs fc00::1 segs fc00::2", "segs fc00::2");

    // flavours: checked against the behaviour table
    let d = by_keyword("End.DX6").unwrap();
    assert!(!d.allows_flavor(Flavor::Psp));
    let src = "route add fc00::9/128 encap seg6local action End.DX6 nh6 fc00::2 flavors psp";
    let e = err_at(src, "psp");
    assert!(e.message.contains("RFC 8986 §4.16"), "{e}");
    assert!(expected(&e).starts_with("End.DX6 allows"), "{e}");
    let src = "route add fc00::9/128 encap seg6local action End flavors psp,next-sid";
    let e = err_at(src, "next-sid");
    assert_eq!(expected(&e), "psp, usp, usd, next-csid, replace-csid separated by commas");
    // NEXT-C-SID lengths: Linux's rules, after the flavour only.
    let e = err_at("route add fc00::/48 encap seg6local action End lblen 32 flavors next-csid", "lblen");
    assert_eq!(expected(&e), "flavors next-csid|replace-csid lblen L nflen N");
    let e = err_at("route add fc00::/48 encap seg6local action End flavors psp nflen 16", "nflen");
    assert!(e.message.contains("next-csid"), "{e}");
    let e = err_at("route add fc00::/48 encap seg6local action End flavors next-csid lblen 12", "12");
    assert!(e.message.contains("multiple of 8"), "{e}");
    let e = err_last("route add fc00::/48 encap seg6local action End flavors next-csid nflen 0", "0");
    assert!(e.message.contains("nflen"), "{e}");
    let e = err_last("route add fc00::/48 encap seg6local action End flavors next-csid lblen 120 nflen 16", "16");
    assert!(e.message.contains("128"), "{e}");
    err_at("route add fc00::/48 encap seg6local action End flavors next-csid lblen 256", "256");
    err_last("route add fc00::/48 encap seg6local action End flavors next-csid lblen 16 lblen 16", "lblen");
    let e = err_at("route add fc00::/48 encap seg6local action End.DT6 table 1 flavors next-csid", "next-csid");
    assert!(expected(&e).starts_with("End.DT6 allows"), "{e}");
    // REPLACE-C-SID (RFC 9800 §4.2, sr6's grammar): never with NEXT-C-SID, 16- or
    // 32-bit C-SIDs, room for the index.
    let e =
        err_last("route add fc00::/80 encap seg6local action End flavors next-csid,psp,replace-csid", "replace-csid");
    assert!(e.message.contains("cannot go with `next-csid`"), "{e}");
    assert_eq!(expected(&e), "one of next-csid, replace-csid");
    let e = err_last(
        "route add fc00::/80 encap seg6local action End.X nh6 fc00::2 flavors replace-csid,next-csid",
        "next-csid",
    );
    assert!(e.message.contains("cannot go with `replace-csid`"), "{e}");
    let e = err_last("route add fc00::/80 encap seg6local action End flavors replace-csid nflen 24", "24");
    assert!(e.message.contains("16 or 32"), "{e}");
    assert_eq!(expected(&e), "nflen 16 or 32, lblen a non-zero multiple of 8, lblen + nflen <= 120");
    let e = err_last("route add fc00::/80 encap seg6local action End flavors replace-csid lblen 96", "96");
    assert!(e.message.contains("index"), "{e}");
    err_last("route add fc00::/80 encap seg6local action End flavors replace-csid nflen 16 lblen 112", "112");
    err_at("route add fc00::/80 encap seg6local action End flavors replace-csid lblen 44", "44");
    let e =
        err_at("route add fc00::/80 encap seg6local action End.DX6 nh6 fc00::2 flavors replace-csid", "replace-csid");
    assert!(expected(&e).starts_with("End.DX6 allows"), "{e}");
    let src = "route add fc00::9/128 encap seg6local action End flavors usd,psp,usd";
    let e = err(src);
    assert_eq!(e.col, src.rfind("usd").unwrap() + 1);

    // family / via
    let e = err_at("ip route add 10.0.0.1/32 encap seg6local action End dev eth0", "10.0.0.1/32");
    assert!(e.message.contains("IPv6"), "{e}");
    err_at("route add fc00::9/128 encap seg6local action End via fc00::1", "via");
    err_at("route add fc00::9/128 encap seg6local action End bpf obj x", "bpf");
}

#[test]
fn link_addr_neigh_errors() {
    let e = err_at("link set eth0 address 02:00:00:00:01", "02:00");
    assert!(expected(&e).contains("MAC"), "{e}");
    err_at("link set eth0 address 01:00:5e:00:00:01", "01:00");
    err_at("link set eth0 address 00:00:00:00:00:00", "00:00");
    // MTU: IPv6's minimum to what a buffer carries, once per line.
    let e = err_at("link set eth0 mtu 1279", "1279");
    assert!(e.to_string().contains("1280") && expected(&e) == "an MTU from 1280 to 9202", "{e}");
    let e = err_at("link set eth0 mtu 9203", "9203");
    assert_eq!(expected(&e), "an MTU from 1280 to 9202");
    err_last("link set eth0 mtu 0", "0");
    err_at("link set eth0 mtu 1500x", "1500x");
    err_at("link set eth0 mtu 01500", "01500");
    err_at("link set eth0 mtu 1500 mtu 1400", "mtu 1400");
    err_eol("link set eth0 mtu");
    err_at("link set eth0 mtu 1500 txqueuelen 5", "txqueuelen");
    err_at("link set eth0 up down", "down");
    err_eol("link set eth0");
    err_eol("link set");
    err_at("link add eth0 type dummy", "add");
    err_at("link set this-name-is-too-long up", "this");

    err_eol("addr add fc00::1/64");
    err_eol("addr add dev eth0");
    err_at("addr add fc00::1/64 10.0.0.1/8 dev eth0", "10.0.0.1/8");
    err_at("ip -4 addr add fc00::1/64 dev eth0", "fc00::1/64");
    err_at("addr add fc00::1/64 dev eth0 dev eth1", "dev eth1");
    err_at("addr flush dev eth0", "flush");

    let e = err_eol("neigh add fc00::2 dev eth0");
    assert_eq!(expected(&e), "lladdr MAC");
    err_eol("neigh add fc00::2 lladdr 02:00:00:00:00:01");
    err_at("neigh add fc00::2 lladdr 02:00:00:00:00:01 dev eth0 nud failed", "failed");
    err_at("neigh add fc00::zz lladdr 02:00:00:00:00:01 dev eth0", "fc00::zz");
    err_at("ip -6 neigh add 10.0.0.1 lladdr 02:00:00:00:00:01 dev eth0", "10.0.0.1");
}

#[test]
fn sr_errors() {
    let e = err_at("ip sr tunsrc set 10.0.0.1", "10.0.0.1");
    assert_eq!(expected(&e), "an IPv6 address");
    err_at("ip sr tunsrc set fc00::1 extra", "extra");
    err_at("ip sr tunsrc show", "show");
    err_at("ip sr policy set", "policy");
    let src = "ip sr hmac set 7";
    let e = err_eol(src);
    assert!(e.message.contains("prompts"), "{e}");
    assert!(expected(&e).contains("SECRET"), "{e}");
    err_eol("ip sr hmac set 7 sha256");
    let e = err_at("ip sr hmac set 0 sha256 secret", "0");
    assert!(e.message.contains("0"), "{e}");
    err_at("ip sr hmac set -1 sha256 secret", "-1");
    err_at("ip sr hmac set 1 md5 secret", "md5");
    err_at("ip sr hmac set 1 sha1 two words", "words");
    let long = "x".repeat(65);
    err_at(&format!("ip sr hmac set 1 sha1 {long}"), &long);
    let e = err_at("ip sr hmac set 5 sha1 \"\"", "5");
    assert!(e.message.contains("no HMAC key 5"), "{e}");
}

#[test]
fn sysctl_errors() {
    let src = "sysctl -w net.ipv6.conf.all.hop_limit=64";
    let e = err_at(src, "net.");
    assert!(e.message.starts_with("unknown sysctl key"), "{e}");
    assert!(e.message.contains("seg6_enabled"), "{e}");
    err_at("sysctl -w kernel.panic=1", "kernel");
    let e = err_at("sysctl -w net.ipv6.conf.all.seg6_require_hmac=2", "2");
    assert_eq!(expected(&e), "-1, 0 or 1");
    err_at("sysctl -w net.ipv6.conf.eth0.seg6_enabled=yes", "yes");
    err_eol("sysctl -w net.ipv6.conf.eth0.seg6_enabled=");
    err_at("sysctl -w net.ipv4.ip_forward=2", "2");
    err_at("sysctl -w net.ipv6.conf.all.forwarding", "net");
    err_at("sysctl -p /etc/sysctl.conf", "-p");
    err_eol("sysctl -w");
    err_at("sysctl -w net.ipv6.conf.a:b.seg6_enabled=1", "a:b");
    err_at("ip sysctl -w net.ipv4.ip_forward=1", "sysctl");
}

#[test]
fn duplicates_across_lines() {
    let e = err("ip -6 route add fc00::/16 dev eth0\nip -6 route add fc00::/16 via fc00::1");
    assert_eq!((e.line, e.col), (2, col("ip -6 route add fc00::/16 via fc00::1", "fc00::/16")));
    assert!(e.message.contains("line 1"), "{e}");
    assert!(expected(&e).contains("replace"), "{e}");
    let e = err("route add 10.0.0.0/8 dev eth0\nroute append 10.0.0.0/8 dev eth1");
    assert!(e.message.contains("IPv4"), "{e}");
    assert_eq!(e.line, 2);
    // a different table is a different route
    parse_str("route add fc00::/16 dev eth0\nroute add fc00::/16 dev eth0 table 9", "t").unwrap();
    let e = err("addr add fc00::1/64 dev eth0\naddr add fc00::1/64 dev eth0");
    assert_eq!(e.line, 2);
    let e =
        err("neigh add fc00::2 lladdr 02:00:00:00:00:01 dev eth0\nneigh add fc00::2 lladdr 02:00:00:00:00:02 dev eth0");
    assert_eq!(e.line, 2);
}

#[test]
fn parse_line_is_all_or_nothing() {
    let mut s = parse_str("ip -6 route add fc00::/16 dev eth0\nlink set eth9 up", "t").unwrap();
    let before = s.clone();
    // fails after naming a device
    let e = parse_line("route add fc00:1::/32 dev eth9 encap seg6local action End.X", "ctl", 3, &mut s).unwrap_err();
    assert_eq!((e.file.as_str(), e.line), ("ctl", 3));
    assert_eq!(s, before);
    // fails when committing (duplicate)
    parse_line("route add fc00::/16 dev eth9", "ctl", 4, &mut s).unwrap_err();
    assert_eq!(s, before);
    // two commands are refused, none applied
    let e = parse_line("route add fc00:2::/32 dev eth9\nroute add fc00:3::/32 dev eth9", "ctl", 5, &mut s).unwrap_err();
    assert_eq!(e.line, 6);
    assert_eq!(s, before);
    // a continued line is fine
    parse_line("route add fc00:2::/32 \\\n dev eth9", "ctl", 7, &mut s).unwrap();
    assert_eq!(s.routes.len(), 2);
    assert_eq!(s.routes[1].line, 7);
}

#[test]
fn io_error_is_line_zero() {
    let e = parse_file(std::path::Path::new("/nonexistent/sr6.conf")).unwrap_err();
    assert_eq!((e.line, e.col), (0, 0));
    assert_eq!(e.file, "/nonexistent/sr6.conf");
}

#[test]
fn parse_file_reads() {
    let dir = std::env::temp_dir().join(format!("sr6-config-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("ok.conf");
    std::fs::write(&p, "ip -6 route add fc00::/16 dev eth0\nbogus\n").unwrap();
    let e = parse_file(&p).unwrap_err();
    assert_eq!(e.line, 2);
    assert!(e.to_string().starts_with(&format!("{}:2:1: ", p.display())));
    std::fs::write(&p, "ip -6 route add fc00::/16 dev eth0\nlink set eth0 up\n").unwrap();
    let s: RouterSpec = parse_file(&p).unwrap();
    assert_eq!(s.routes.len(), 1);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The examples of docs/config.md, verbatim.
#[test]
fn documented_examples() {
    let doc = include_str!("../../../docs/config.md");
    let start = doc.find("Examples (each line given alone").unwrap();
    let block = &doc[start..];
    let block = &block[block.find("```\n").unwrap() + 4..];
    let block = &block[..block.find("```").unwrap()];
    let mut n = 0;
    for pair in block.trim().split("\n\n") {
        let (src, want) = pair.split_once('\n').unwrap();
        let got = parse_str(src, "r1.conf").unwrap_err().to_string();
        if let Some(prefix) = want.strip_suffix("...)") {
            assert!(got.starts_with(prefix), "{got}\n{want}");
        } else {
            assert_eq!(got, want);
        }
        n += 1;
    }
    assert_eq!(n, 6);
}

#[test]
fn a_device_only_routes_name_is_refused_in_a_file() {
    use sr6_config::parse_config;
    // Declared by an address, a link line, a neighbour or a sysctl: accepted, in any order.
    for decl in [
        "ip -6 addr add fc00:12::1/64 dev eth1",
        "ip link set eth1 up",
        "ip -6 neigh add fc00:12::2 lladdr 02:00:00:00:12:02 dev eth1",
        "sysctl -w net.ipv6.conf.eth1.seg6_enabled=1",
    ] {
        let src = format!("ip -6 route add fc00:2::/32 dev eth1\n{decl}\n");
        parse_config(&src, "r.conf").unwrap_or_else(|e| panic!("{decl}: {e}"));
    }
    // A typo in a `dev` (here eht1): the kernel would say `Cannot find device`.
    let src = "ip -6 addr add fc00:12::1/64 dev eth1\nip -6 route add fc00:2::/32 via fc00:12::2 dev eht1\n\
               ip -6 route add fc00:3::/32 dev eht1\n";
    let e = parse_config(src, "r.conf").unwrap_err();
    assert_eq!((e.line, e.col), (2, 48), "{e}");
    assert_eq!(e.message, "device `eht1` is only named by routes");
    assert!(expected(&e).contains("ip link set eht1 up"), "{e}");
    // End.X's oif too.
    let src = "ip -6 addr add fc00:12::1/64 dev eth1\n\
               ip -6 route add fc00:1::c/128 encap seg6local action End.X nh6 fc00:12::2 oif eth2 dev eth1\n";
    let e = parse_config(src, "r.conf").unwrap_err();
    assert_eq!((e.line, e.col, e.message.as_str()), (2, 79, "device `eth2` is only named by routes"), "{e}");
    // parse_str takes fragments: accepted there.
    assert!(sr6_config::parse_str(src, "r.conf").is_ok());
}

#[test]
fn seg6_csid_errors() {
    let e = err_at("route add fc00::/16 encap seg6 mode encap csid fast segs fc00:0:1::", "fast");
    assert!(expected(&e).contains("csid next|replace"), "{e}");
    err_at("route add fc00::/16 encap seg6 csid next mode encap segs fc00:0:1::", "csid");
    err_last("route add fc00::/16 encap seg6 mode encap csid next lblen 12 segs fc00:0:1::", "12");
    let e = err_last("route add fc00::/16 encap seg6 mode encap csid next lblen 120 nflen 16 segs fc00:0:1::", "16");
    assert!(e.message.contains("128"), "{e}");
    let e = err_last("route add fc00::/16 encap seg6 mode encap csid replace nflen 24 segs fc00:0:1::", "24");
    assert!(e.message.contains("16 or 32"), "{e}");
    err_last("route add fc00::/16 encap seg6 mode encap csid replace lblen 96 segs fc00:0:1::", "96");
    err_at("route add fc00::/16 encap seg6 mode encap csid next csid next segs fc00:0:1::", "csid next segs");
    // lblen 32 for SIDs of a /48 block: nothing compresses.
    let e =
        err_at("route add fc00::/16 encap seg6 mode encap csid next segs fc00:0:0:1::,fc00:0:0:2:: dev eth0", "csid");
    assert!(e.message.contains("no two of these segments"), "{e}");
    // A REPLACE-C-SID series needs two C-SIDs of one block in a row.
    err_at("route add fc00::/16 encap seg6 mode encap csid replace segs 2001:db8:0:1:0:1::,2001:db8:0:2:0:1::", "csid");
    err_at("route add fc00::a/128 encap seg6local action End.B6 srh csid next segs fc00::1,fc00::2 dev eth0", "csid");
}
