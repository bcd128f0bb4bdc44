//! `ids rules FILE ...` (docs/ids.md): the rules file read relative to the
//! configuration's directory, options, and errors at the right place — the rules
//! file's own line and column inside the configuration's.

use sr6_config::{parse_file, parse_line, parse_str};
use sr6_core::ids::Mode;
use sr6_core::spec::RouterSpec;

fn dir(name: &str) -> std::path::PathBuf {
    let d = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    std::fs::create_dir_all(&d).unwrap();
    d
}

const RULES: &str = "# two rules\nalert udp any any -> fc00::/16 53 (msg:\"dns\"; sid:1;)\n\
                     drop tcp any any -> any 80 (content:\"GET\"; sid:2;)\n";

#[test]
fn reads_the_rules_relative_to_the_configuration() {
    let d = dir("ids-relative");
    std::fs::write(d.join("r.rules"), RULES).unwrap();
    std::fs::write(d.join("sr6.conf"), "ids rules r.rules mode ips on input,forward alerts a.json\n").unwrap();
    let spec = parse_file(&d.join("sr6.conf")).unwrap();
    let ids = spec.ids.unwrap();
    assert_eq!(ids.rules.iter().map(|r| r.sid).collect::<Vec<_>>(), vec![1, 2]);
    assert_eq!((ids.mode, ids.input, ids.forward, ids.line), (Mode::Ips, true, true, 1));
    assert_eq!((ids.file, ids.alerts), (d.join("r.rules"), Some(d.join("a.json"))));
    // Defaults: IDS mode, INPUT only, no alerts file.
    let d2 = dir("ids-defaults");
    std::fs::write(d2.join("r.rules"), RULES).unwrap();
    let spec = parse_str(&format!("ids rules {}\n", d2.join("r.rules").display()), "t.conf").unwrap();
    let ids = spec.ids.unwrap();
    assert_eq!((ids.mode, ids.input, ids.forward, ids.alerts), (Mode::Ids, true, false, None));
}

#[test]
fn errors_point_at_the_rules_file_and_change_nothing() {
    let d = dir("ids-errors");
    let bad = d.join("bad.rules");
    std::fs::write(&bad, "alert ip any any -> any any (sid:1;)\nalert ip any any -> any any (sid:2; bogus;)\n")
        .unwrap();
    let line = format!("ids rules {}", bad.display());
    let mut spec = RouterSpec::default();
    let e = parse_line(&line, "ctl", 7, &mut spec).unwrap_err();
    assert_eq!((e.line, e.col), (7, 11), "{e}");
    assert!(e.message.starts_with(&format!("{}:2:37: unknown option `bogus`", bad.display())), "{e}");
    assert_eq!(spec, RouterSpec::default());
    let good = d.join("good.rules");
    std::fs::write(&good, RULES).unwrap();
    for (tail, at, what) in [
        ("mode idps", "idps", "unknown mode"),
        ("on output", "output", "unknown or repeated point"),
        ("on input,input", "input,input", "unknown or repeated point"),
        ("mode ids mode ips", "mode ips", "duplicate `mode`"),
        ("alerts", "alerts", "`alerts` needs a value"),
        ("verbose", "verbose", "unexpected `verbose`"),
    ] {
        let src = format!("ids rules {} {tail}", good.display());
        let e = parse_str(&src, "t.conf").unwrap_err();
        let col = src.rfind(at).unwrap() + 1;
        let col = if tail == "alerts" { src.len() + 1 } else { col };
        assert_eq!((e.line, e.col), (1, col), "{src}: {e}");
        assert!(e.message.contains(what), "{src}: {e}");
    }
    let e = parse_str("ids rules /nonexistent/x.rules", "t.conf").unwrap_err();
    assert!(e.message.contains("cannot read the IDS rules"), "{e}");
    let e = parse_str("ids filter x", "t.conf").unwrap_err();
    assert_eq!((e.line, e.col), (1, 5), "{e}");
}
