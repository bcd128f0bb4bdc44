//! A printing command whose reader has gone (`sr6 ctl show routes | head -1`, `sr6
//! behaviours | head`) ends as other Unix tools do — quietly, by SIGPIPE — and does not
//! panic on its next line of output.

use std::io::Read;
use std::os::unix::process::ExitStatusExt;
use std::process::{Command, Stdio};

#[test]
fn a_closed_standard_output_is_no_panic() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_sr6"))
        .arg("behaviours")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The reader goes before the command has printed anything.
    drop(child.stdout.take());
    let mut err = String::new();
    child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
    let status = child.wait().unwrap();
    assert!(!err.contains("panicked"), "{err}");
    assert!(status.success() || status.signal() == Some(libc::SIGPIPE), "{status:?}: {err}");
}
