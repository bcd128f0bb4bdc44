//! Compiles the XDP program `c/fast.c` with clang (`-O2 -g -target bpf`), as the
//! kernel's samples and iproute2 do; `scripts/setup.sh` installs clang and libbpf-dev
//! (whose `bpf/bpf_helpers.h` the program includes). Without clang the build stops
//! here and says how to get it.

use std::path::PathBuf;

fn main() {
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let src = PathBuf::from("c/fast.c");
    println!("cargo:rerun-if-changed={}", src.display());
    if let Err(e) = sr6_bpf::clang::compile(&src, &out.join("fast.o"), &[]) {
        eprintln!("sr6-xdp: the XDP program {} does not build: {e}", src.display());
        eprintln!("sr6-xdp: install clang and libbpf-dev (bash scripts/setup.sh does)");
        std::process::exit(1);
    }
}
