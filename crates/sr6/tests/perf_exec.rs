//! `sr6 perf ...` runs the sr6-perf binary ($SR6_PERF_BIN here: a script that prints what
//! it was given), passing every argument on, `--help` included, and telling it which sr6
//! to measure; without the binary it fails saying where it looked and what to do.

use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::process::Command;

fn sr6() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_sr6"));
    c.env_remove("SR6_BIN");
    c
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("sr6-perf-exec-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn arguments_pass_through() {
    let dir = scratch("args");
    let script = dir.join("fake-sr6-perf");
    std::fs::write(
        &script,
        "#!/bin/sh\necho \"argv0=$0\"\nfor a in \"$@\"; do echo \"arg=$a\"; done\necho \"bin=$SR6_BIN\"\n",
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let args = ["run", "exp.yaml", "--forwarder", "linux,sr6", "--help", "--out", "a b"];
    let out = sr6().arg("perf").args(args).env("SR6_PERF_BIN", &script).output().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    let got: Vec<&str> = text.lines().filter_map(|l| l.strip_prefix("arg=")).collect();
    assert_eq!(got, args);
    // The sr6 to measure is this one.
    let bin = text.lines().find_map(|l| l.strip_prefix("bin=")).unwrap();
    assert_eq!(std::fs::canonicalize(bin).unwrap(), std::fs::canonicalize(env!("CARGO_BIN_EXE_sr6")).unwrap());

    // `sr6 perf --help` is sr6-perf's, not sr6's.
    let script = scratch("help").join("fake-sr6-perf");
    std::fs::write(&script, "#!/bin/sh\necho \"fake: $*\"\n").unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = sr6().args(["perf", "--help"]).env("SR6_PERF_BIN", &script).output().unwrap();
    let _ = std::fs::remove_dir_all(script.parent().unwrap());
    assert_eq!(String::from_utf8_lossy(&out.stdout), "fake: --help\n");
}

#[test]
fn a_missing_binary_is_an_error_that_says_what_to_do() {
    let out = sr6().args(["perf", "run"]).env("SR6_PERF_BIN", "/nonexistent/sr6-perf").output().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("/nonexistent/sr6-perf") && err.contains("cargo build") && err.contains("SR6_PERF_BIN"),
        "{err}"
    );
}
