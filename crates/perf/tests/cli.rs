//! The `sr6-perf` binary's command line (no privilege needed): help, and a missing sr6
//! binary named before anything is set up.

use std::process::Command;

fn sr6_perf() -> Command {
    Command::new(env!("CARGO_BIN_EXE_sr6-perf"))
}

#[test]
fn help_lists_run_and_its_options() {
    let out = sr6_perf().arg("--help").output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("run"), "{text}");
    let out = sr6_perf().args(["run", "--help"]).output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    for opt in ["--forwarder", "--behavior", "--duration", "--repetitions", "--out"] {
        assert!(text.contains(opt), "{opt}: {text}");
    }
}

#[test]
fn a_missing_sr6_binary_is_named() {
    let out = sr6_perf()
        .args(["run", "--forwarder", "sr6", "--behavior", "End"])
        .env("SR6_BIN", "/nonexistent/sr6")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("/nonexistent/sr6") && err.contains("SR6_BIN"), "{err}");
}

#[test]
fn a_bad_experiment_is_refused() {
    let out = sr6_perf().args(["run", "--behavior", "End.Nonsense"]).output().unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("error"));
}
