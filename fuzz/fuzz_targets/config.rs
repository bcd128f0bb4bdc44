//! The configuration parser on arbitrary text, as `sr6 run --config` reads a file
//! (`parse_config_in`); a configuration that parses is compiled into the forwarding
//! tables (`Tables::build`). Errors must be `Err`, never panics, and a parse error must
//! name a position (`FILE:LINE:COL`) inside the input, or be an I/O error (line 0).
//!
//! Relative paths (`ids rules FILE`, End.BPF's `obj FILE`) are relative to a directory
//! made for the run holding one rules file, `ids.rules`, so the parser's file reading is
//! exercised. An input naming anything outside it (`..`, or an absolute path under
//! `/dev`, `/proc`, `/sys` or `/run`, which could block or never end) is skipped: the
//! check is on the text without quotes and backslashes, a superset of what the lexer
//! would make of it.
#![no_main]

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use sr6_core::tables::Tables;

const RULES: &str = "alert tcp any any -> any 80 (msg:\"web\"; content:\"GET\"; depth:3; sid:1;)\n\
drop udp any any -> any 53 (msg:\"dns\"; content:\"evil\"; nocase; sid:2; rev:1;)\n";

fn base() -> &'static Path {
    static B: OnceLock<PathBuf> = OnceLock::new();
    B.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("sr6-fuzz-config-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        std::fs::write(dir.join("ids.rules"), RULES).expect("rules file");
        dir
    })
}

/// Whether the text may name a file outside the run's directory, or a special file.
fn unsafe_path(src: &str) -> bool {
    let plain: String = src.chars().filter(|c| !matches!(c, '"' | '\'' | '\\')).collect();
    plain.contains("..") || ["/dev", "/proc", "/sys", "/run"].iter().any(|d| plain.contains(d))
}

fuzz_target!(|data: &[u8]| {
    let Ok(src) = std::str::from_utf8(data) else { return };
    if unsafe_path(src) {
        return;
    }
    let spec = match sr6_config::parse_config_in(src, "fuzz.conf", base()) {
        Ok(s) => s,
        Err(e) => {
            let shown = e.to_string();
            if e.line == 0 {
                assert!(shown.starts_with("fuzz.conf: "), "{shown}");
            } else {
                let lines = src.split('\n').count();
                assert!(e.line <= lines, "error line {} of {lines}: {shown}", e.line);
                assert!(e.col >= 1, "error column 0: {shown}");
                let at = format!("fuzz.conf:{}:{}: ", e.line, e.col);
                assert!(shown.starts_with(&at), "{shown}");
            }
            return;
        }
    };
    let _ = Tables::build(&spec);
});
