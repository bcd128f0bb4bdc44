//! Shared by the integration tests: the bundled example's tables and frames.

#![allow(dead_code)]

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
