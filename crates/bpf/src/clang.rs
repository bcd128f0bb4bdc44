//! Compiling C programs to eBPF objects with clang, as iproute2's documentation and the
//! kernel's samples do (`clang -O2 -g -target bpf -c`): what `sr6 perf` does for its
//! End.BPF rows and what the tests do with their programs. Debian keeps `asm/types.h`
//! under the multiarch include directory, which `-target bpf` does not search: it is
//! added when present. The headers come from `libbpf-dev` (`bpf/bpf_helpers.h`) and the
//! kernel's UAPI (`linux-libc-dev`); `scripts/setup.sh` installs both and clang.

use std::path::Path;
use std::process::Command;

/// The multiarch include directories added to clang's search path where they exist.
const MULTIARCH: [&str; 2] = ["/usr/include/x86_64-linux-gnu", "/usr/include/aarch64-linux-gnu"];

/// Compiles the C file `src` into the eBPF object `out`, with `-I` for each of
/// `include` (besides the source's own directory, which clang searches for `"..."`).
/// The error says what failed: clang missing (and how to install it), or its
/// diagnostics.
pub fn compile(src: &Path, out: &Path, include: &[&Path]) -> Result<(), String> {
    let mut cmd = Command::new("clang");
    cmd.args(["-O2", "-g", "-target", "bpf", "-c"]).arg(src).arg("-o").arg(out);
    for dir in include {
        cmd.arg("-I").arg(dir);
    }
    for dir in MULTIARCH {
        if Path::new(dir).exists() {
            cmd.arg(format!("-I{dir}"));
        }
    }
    let res = cmd.output().map_err(|e| {
        format!("cannot run clang ({e}): eBPF objects need clang and libbpf-dev (scripts/setup.sh installs them)")
    })?;
    if !res.status.success() {
        return Err(format!("clang failed on {}:\n{}", src.display(), String::from_utf8_lossy(&res.stderr).trim_end()));
    }
    Ok(())
}

/// Whether clang can be run at all (`clang --version` succeeds).
pub fn available() -> bool {
    Command::new("clang").arg("--version").output().is_ok_and(|o| o.status.success())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bad_source_is_an_error_with_clangs_words() {
        if !available() {
            // The message a user without clang gets is the other branch; the tests of
            // this crate need clang anyway (tests/common).
            let e = compile(Path::new("/nonexistent.c"), Path::new("/tmp/x.o"), &[]).unwrap_err();
            assert!(e.contains("scripts/setup.sh"), "{e}");
            return;
        }
        let dir = std::env::temp_dir().join(format!("sr6-clang-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let src = dir.join("bad.c");
        std::fs::write(&src, "int f(void) { return undeclared; }\n").unwrap();
        let e = compile(&src, &dir.join("bad.o"), &[]).unwrap_err();
        assert!(e.starts_with("clang failed on ") && e.contains("undeclared"), "{e}");
        std::fs::write(&src, "int f(void) { return 2; }\n").unwrap();
        compile(&src, &dir.join("ok.o"), &[]).unwrap();
        let o = std::fs::read(dir.join("ok.o")).unwrap();
        assert_eq!(&o[..4], b"\x7fELF");
        assert_eq!(u16::from_le_bytes([o[18], o[19]]), 247, "e_machine EM_BPF");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
