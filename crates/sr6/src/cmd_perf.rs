//! `sr6 perf ...`: runs the `sr6-perf` binary (crates/perf), which holds the SRPerf
//! evaluation framework and its plotting stack, so that the router binary links neither.
//! It is found in $SR6_PERF_BIN, else next to this executable; every argument after
//! `perf` is passed on, and $SR6_BIN is set to this executable (unless already set) so
//! that the sr6 forwarder measured is this very binary.

use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::Command;

use anyhow::{anyhow, bail, Result};

/// Where `sr6-perf` is: $SR6_PERF_BIN, else `sr6-perf` next to this executable.
fn perf_bin(exe: &std::path::Path) -> PathBuf {
    match std::env::var_os("SR6_PERF_BIN").filter(|p| !p.is_empty()) {
        Some(p) => PathBuf::from(p),
        None => exe.with_file_name("sr6-perf"),
    }
}

/// Replaces this process with `sr6-perf ARGS` (returns only on failure).
pub fn exec(args: &[String]) -> Result<()> {
    let exe = std::env::current_exe().map_err(|e| anyhow!("cannot find this executable: {e}"))?;
    let bin = perf_bin(&exe);
    if !bin.is_file() {
        bail!(
            "`sr6 perf` runs the sr6-perf binary, which is not at {}: build it with \
             `cargo build --release --workspace --bins` (it goes next to sr6), or set SR6_PERF_BIN",
            bin.display()
        );
    }
    let mut cmd = Command::new(&bin);
    // Its usage and results.json say `sr6 perf`, as typed.
    let argv0 = std::env::args_os().next().map(PathBuf::from).unwrap_or_else(|| exe.clone());
    cmd.arg0(format!("{} perf", argv0.display())).args(args);
    if std::env::var_os("SR6_BIN").is_none_or(|v| v.is_empty()) {
        cmd.env("SR6_BIN", &exe);
    }
    let e = cmd.exec();
    Err(anyhow!("running {}: {e}", bin.display()))
}
