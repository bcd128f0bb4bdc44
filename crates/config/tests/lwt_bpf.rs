//! `encap bpf in|out|xmit obj FILE [sec SECTION] [headroom N]` (iproute2's syntax, LWT
//! BPF programs on a route): parsed, loaded as the hook's program type, and refused with
//! the line's file:line:col for what iproute2 or the kernel refuses. The programs are
//! crates/bpf/tests/progs' (lwt_in.c, lwt_xmit.c, tag.c, refused.c), compiled by clang.

use std::path::{Path, PathBuf};

use sr6_config::{parse_file, parse_str};
use sr6_core::pipeline::lwt_bpf::ProgType;
use sr6_core::spec::RouteKind;

/// Compiles crates/bpf/tests/progs/NAME.c into `dir` (these tests never skip: without
/// clang they fail, saying what to install).
fn compile(dir: &Path, name: &str) -> PathBuf {
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../bpf/tests/progs").join(format!("{name}.c"));
    let out = dir.join(format!("{name}.o"));
    sr6_bpf::clang::compile(&src, &out, &[]).unwrap_or_else(|e| panic!("{e}"));
    out
}

/// A directory with the objects, compiled once per test binary.
fn objs() -> PathBuf {
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("lwt-bpf-config");
        std::fs::create_dir_all(&d).unwrap();
        for n in ["lwt_in", "lwt_xmit", "tag", "refused"] {
            compile(&d, n);
        }
        std::fs::write(d.join("not_bpf.o"), b"\x7fELF but not really").unwrap();
        d
    })
    .clone()
}

fn line(hooks: &str) -> String {
    let d = objs();
    let hooks = hooks.replace("@", &format!("{}/", d.display()));
    format!("ip -6 route add fc00:9::/64 encap bpf {hooks} via fc00:12::2 dev eth1\n")
}

fn err(hooks: &str) -> String {
    match parse_str(&line(hooks), "t.conf") {
        Ok(_) => panic!("{hooks}: accepted"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn hooks_parsed_loaded_and_printed_back() {
    let s = parse_str(&line("in obj @lwt_in.o sec in_encap xmit o @lwt_xmit.o section xmit_ip6 headroom 40"), "t.conf")
        .unwrap();
    let RouteKind::Bpf { bpf, via, dev } = &s.routes[0].kind else { panic!("{:?}", s.routes[0].kind) };
    assert_eq!(dev.as_deref(), Some("eth1"));
    assert_eq!(via.map(|v| v.to_string()).as_deref(), Some("fc00:12::2"));
    let input = bpf.input.as_ref().unwrap();
    assert_eq!(input.section, "in_encap");
    assert_eq!(input.program().prog_type, ProgType::LwtIn);
    assert_eq!(bpf.xmit.as_ref().unwrap().program().prog_type, ProgType::LwtXmit);
    assert!(bpf.output.is_none());
    assert_eq!(bpf.headroom, 40);
    let d = objs().display().to_string();
    assert_eq!(
        bpf.to_string(),
        format!("in obj {d}/lwt_in.o sec in_encap xmit obj {d}/lwt_xmit.o sec xmit_ip6 headroom 40")
    );
    // `out`, and an IPv4 route.
    let s = parse_str(&line("out obj @lwt_xmit.o sec drop_udp"), "t.conf").unwrap();
    let RouteKind::Bpf { bpf, .. } = &s.routes[0].kind else { panic!() };
    assert_eq!(bpf.output.as_ref().unwrap().program().prog_type, ProgType::LwtOut);
    let v4 = format!(
        "ip route add 10.9.0.0/16 encap bpf xmit obj {}/lwt_xmit.o sec xmit_ip4 via 10.0.12.2 dev eth1\n",
        objs().display()
    );
    assert!(matches!(parse_str(&v4, "t.conf").unwrap().routes[0].kind, RouteKind::Bpf { .. }));
}

#[test]
fn relative_object_is_relative_to_the_config_file() {
    let d = objs();
    let conf = d.join("lwt.conf");
    let text = "ip link set eth1 up\nip -6 route add fc00:9::/64 encap bpf in obj lwt_in.o sec drop_udp dev eth1\n";
    std::fs::write(&conf, text).unwrap();
    let s = parse_file(&conf).unwrap();
    let RouteKind::Bpf { bpf, .. } = &s.routes[0].kind else { panic!() };
    assert_eq!(bpf.input.as_ref().unwrap().obj, "lwt_in.o");
}

#[test]
fn refusals_at_their_word() {
    // Column of a word in the line (1-based), as the errors give it.
    let col = |hooks: &str, word: &str| line(hooks).find(word).unwrap() + 1;
    let cases = [
        ("in obj @missing.o sec s", "obj", "cannot load"),
        ("in obj @not_bpf.o sec s", "obj", "cannot load"),
        ("in obj @lwt_in.o sec nosuch", "sec", "nosuch"),
        ("in obj @refused.o sec unknown", "sec", "unknown helper id 9999"),
        // The program type is the hook's: seg6local helpers are not lwt_in's, push_encap
        // is not lwt_out's.
        ("in obj @tag.o sec tag_inc", "sec", "not available to lwt_in programs"),
        ("out obj @lwt_in.o sec in_encap", "sec", "not available to lwt_out programs"),
    ];
    for (hooks, word, what) in cases {
        let e = err(hooks);
        assert!(e.starts_with(&format!("t.conf:1:{}:", col(hooks, word))), "{hooks}: {e}");
        assert!(e.contains(what), "{hooks}: {e}");
    }
    let e = err("headroom 40");
    assert!(e.contains("`encap bpf` needs a program"), "{e}");
    let e = err("in obj @lwt_in.o sec drop_udp headroom 257");
    assert!(e.contains("headroom 257 is out of range"), "{e}");
    let e = err("in obj @lwt_in.o sec drop_udp headroom 0");
    assert!(e.contains("headroom 0 is out of range"), "{e}");
    let e = err("in obj @lwt_in.o sec drop_udp in obj @lwt_in.o sec drop_udp");
    assert!(e.contains("duplicate `in`"), "{e}");
    let e = err("in pinned /sys/fs/bpf/p");
    assert!(e.contains("not programs pinned"), "{e}");
    // Nothing applied: the line is refused as a whole.
    let two = format!("ip -6 route add fc00:8::/64 dev eth1\n{}", line("in obj @lwt_in.o sec nosuch"));
    assert!(parse_str(&two, "t.conf").is_err());
}
