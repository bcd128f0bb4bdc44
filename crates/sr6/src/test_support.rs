//! What sr6's unit tests share: a scratch directory of each test's own, the C programs
//! of `crates/bpf/tests/progs` compiled there with clang (scripts/setup.sh installs
//! it), and the SRH frame the End.BPF tests run those programs on.

use std::net::Ipv6Addr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

/// A new directory under the system's temporary one, named after `tag`, this process
/// and a counter: one per call, so tests running at once never share one.
pub fn scratch_dir(tag: &str) -> PathBuf {
    static N: AtomicUsize = AtomicUsize::new(0);
    let n = N.fetch_add(1, Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("sr6-{tag}-{}-{n}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `crates/bpf/tests/progs/NAME.c` compiled to `dir/NAME.o`; returns that path.
pub fn compile(name: &str, dir: &Path) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../bpf/tests/progs/{name}.c"));
    let out = dir.join(format!("{name}.o"));
    sr6_bpf::clang::compile(&src, &out, &[]).unwrap();
    out
}

/// Ethernet (to 02:00:00:00:00:a0) + IPv6 fc00:1::2 -> fc00:1::b + SRH (Tag `tag`,
/// segments fc00:9::1 then the SID fc00:1::b, Segments Left 1) + 8 bytes.
pub fn srh_frame(tag: u16) -> Vec<u8> {
    let a = |s: &str| s.parse::<Ipv6Addr>().unwrap().octets();
    let mut f = vec![2, 0, 0, 0, 0, 0xa0, 2, 0, 0, 0, 1, 2, 0x86, 0xdd];
    f.extend_from_slice(&[0x60, 0, 0, 0, 0, 48, 43, 64]);
    f.extend_from_slice(&a("fc00:1::2"));
    f.extend_from_slice(&a("fc00:1::b"));
    f.extend_from_slice(&[59, 4, 4, 1, 1, 0]);
    f.extend_from_slice(&tag.to_be_bytes());
    f.extend_from_slice(&a("fc00:9::1"));
    f.extend_from_slice(&a("fc00:1::b"));
    f.extend_from_slice(&[0; 8]);
    f
}

#[test]
fn the_srh_frame_is_what_its_doc_says() {
    let f = srh_frame(0x0102);
    assert_eq!(f.len(), 14 + 40 + 40 + 8);
    assert_eq!(u16::from_be_bytes([f[18], f[19]]) as usize, f.len() - 14 - 40, "payload length");
    assert_eq!((f[14 + 40 + 1], f[14 + 40 + 3]), (4, 1), "SRH length and Segments Left");
    assert_eq!(&f[14 + 40 + 6..14 + 40 + 8], &[1, 2], "tag");
    assert_ne!(scratch_dir("t"), scratch_dir("t"));
}
