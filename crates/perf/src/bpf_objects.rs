//! The End.BPF rows' eBPF objects ([`crate::model::END_BPF`]): the End.BPF paper's
//! functions, whose C sources are sr6-bpf's test programs (`crates/bpf/tests/progs`,
//! built into this binary), compiled with clang into a directory when an experiment
//! needs them. Both forwarders load the same object with the same line: the kernel
//! through iproute2 (`endpoint obj DIR/end.o sec end`), sr6 from its configuration file,
//! written into the same directory.

use std::path::Path;

use crate::model::BpfFn;

/// The sources, by file name: the header the programs share, then one file per
/// [`BpfFn::source`].
pub const SOURCES: [(&str, &str); 5] = [
    ("seg6.h", include_str!("../../bpf/tests/progs/seg6.h")),
    ("end.c", include_str!("../../bpf/tests/progs/end.c")),
    ("tag.c", include_str!("../../bpf/tests/progs/tag.c")),
    ("tlv.c", include_str!("../../bpf/tests/progs/tlv.c")),
    ("action.c", include_str!("../../bpf/tests/progs/action.c")),
];

/// Writes the sources into `dir` and compiles `f`'s (`dir/end.c` -> `dir/end.o`). The
/// error names what failed: clang missing (`scripts/setup.sh` installs it) or its
/// diagnostics.
pub fn build(dir: &Path, f: &BpfFn) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for (name, text) in SOURCES {
        let p = dir.join(name);
        std::fs::write(&p, text).map_err(|e| format!("{}: {e}", p.display()))?;
    }
    let src = dir.join(f.source);
    if !SOURCES.iter().any(|(n, _)| *n == f.source) {
        return Err(format!("{}: no source {} in this build", f.name, f.source));
    }
    sr6_bpf::clang::compile(&src, &dir.join(f.object()), &[])
        .map_err(|e| format!("{}: compiling its eBPF object: {e}", f.name))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::END_BPF;

    /// Every row's object builds and holds its section as an `lwt_seg6local` program
    /// sr6-bpf loads (needs clang: scripts/setup.sh installs it).
    #[test]
    fn every_rows_object_builds_and_loads() {
        let dir = std::env::temp_dir().join(format!("sr6-perf-objects-{}", std::process::id()));
        for f in &END_BPF {
            build(&dir, f).unwrap();
            let o = sr6_bpf::load_object(&dir.join(f.object()), f.section, sr6_bpf::helpers::ProgType::LwtSeg6local)
                .unwrap_or_else(|e| panic!("{}: {e}", f.name));
            assert!(!o.program.insns.is_empty(), "{}", f.name);
        }
        let missing = BpfFn { name: "x", source: "missing.c", section: "s", paper: "" };
        assert!(build(&dir, &missing).unwrap_err().contains("no source missing.c"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
