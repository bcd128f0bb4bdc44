//! Shared by the integration tests: the bundled example's tables and frames, the eBPF
//! test programs and their router, mutated frames.

#![allow(dead_code)]

pub mod fast_corpus;

use std::path::PathBuf;

use sr6_core::tables::Tables;

pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Tables of `examples/example.conf`.
pub fn example_tables() -> Tables {
    let spec = sr6_config::parse_file(&repo().join("examples/example.conf")).expect("example config parses");
    Tables::build(&spec).expect("example config builds").0
}

/// Frames of `examples/example.pcap` (every kind of behaviour of the example).
pub fn example_frames() -> Vec<Vec<u8>> {
    let f = std::fs::File::open(repo().join("examples/example.pcap")).expect("example pcap");
    let mut r = pcap_file::pcap::PcapReader::new(f).expect("pcap header");
    let mut v = Vec::new();
    while let Some(p) = r.next_packet() {
        v.push(p.expect("pcap record").data.into_owned());
    }
    v
}

/// The programs `names` of crates/bpf/tests/progs compiled with clang into the directory
/// `dir` under the test target's temporary directory, which is returned.
pub fn bpf_objects(dir: &str, names: &[&str]) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(dir);
    std::fs::create_dir_all(&dir).unwrap();
    for name in names {
        let src = repo().join(format!("crates/bpf/tests/progs/{name}.c"));
        sr6_bpf::clang::compile(&src, &dir.join(format!("{name}.o")), &[]).unwrap();
    }
    dir
}

/// The router the eBPF pipeline tests load programs into: eth0 (fc00:1::/64, towards
/// fc00:a::/64), eth1 (fc00:12::/64), eth2 (fc00:13::/64, towards fc00:3::/48), each with
/// one neighbour 02:aa:00:00:00:0N; tunnel source fc00:ff::1; IPv6 forwarding on. The
/// addresses are those of the kernel comparison's topology (tests/oracle/sr6_oracle.py),
/// which the programs of crates/bpf/tests/progs name.
pub const BPF_ROUTER: &str = "\
ip -6 addr add fc00:1::1/64 dev eth0
ip -6 addr add fc00:12::1/64 dev eth1
ip -6 addr add fc00:13::1/64 dev eth2
ip -6 neigh add fc00:1::2 lladdr 02:aa:00:00:00:01 dev eth0
ip -6 neigh add fc00:12::2 lladdr 02:aa:00:00:00:02 dev eth1
ip -6 neigh add fc00:13::2 lladdr 02:aa:00:00:00:03 dev eth2
ip -6 route add fc00:a::/64 via fc00:1::2 dev eth0
ip -6 route add fc00:3::/48 via fc00:13::2 dev eth2
ip sr tunsrc set fc00:ff::1
sysctl -w net.ipv6.conf.all.forwarding=1
";

/// `frame` with the bytes at `flips`' offsets (modulo its length) XORed with their
/// values, and cut to `cut` bytes (at least one) when `cut` is shorter and a multiple
/// of 3.
pub fn mutated(frame: &[u8], flips: &[(usize, u8)], cut: usize) -> Vec<u8> {
    let mut f = frame.to_vec();
    for &(at, v) in flips {
        let i = at % f.len();
        f[i] ^= v;
    }
    if cut < f.len() && cut.is_multiple_of(3) {
        f.truncate(cut.max(1));
    }
    f
}
