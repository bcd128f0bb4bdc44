//! sr6-io: where packets come from and go to.
//!
//! A backend fills [`PacketBuf`]s on receive and consumes them, by verdict, on
//! transmit: the pipeline in between never does I/O. This crate holds the offline
//! backends — pcap files ([`pcap`]) and memory ([`memory`], for benchmarks and tests) —
//! and the live ones behind the [`live::Port`] trait. It is the only crate with
//! `unsafe` code (each block with a `// SAFETY:` comment).
//!
//! Besides the router's backends it offers two small safe APIs that the tester of
//! `sr6 perf` (the `sr6-perf` crate) builds its eBPF programs on, so that crate needs no
//! `unsafe`: [`bpf`] (bpf(2) wrappers and the eBPF assembler) and [`interrupt`]
//! (ending another thread's blocking system call with `EINTR`).

pub mod af_packet;
pub mod af_xdp;
pub mod bpf;
pub mod ethtool;
pub mod interrupt;
pub mod live;
pub mod memory;
pub mod netlink;
pub mod pcap;
pub mod socketpair;
pub mod veth;

use sr6_core::packet::PacketBuf;

/// Errors of the I/O backends.
#[derive(Debug, thiserror::Error)]
pub enum IoError {
    /// The io error is part of the message, not a `source`: anyhow's `{:#}` would print
    /// it a second time.
    #[error("{path}: {error}")]
    File { path: String, error: std::io::Error },
    #[error("{path}: not a readable pcap file: {message}")]
    Pcap { path: String, message: String },
    #[error("{path}: link type {linktype} is not Ethernet; sr6 reads Ethernet captures")]
    LinkType { path: String, linktype: String },
}

/// A source of received frames.
pub trait RxBackend {
    /// Fills the front of `batch` with received frames; returns how many (0 = no more).
    fn rx_batch(&mut self, batch: &mut [PacketBuf]) -> Result<usize, IoError>;
}

/// A sink for processed frames.
pub trait TxBackend {
    /// Consumes the first `n` buffers of `batch` according to their verdicts.
    fn tx_batch(&mut self, batch: &[PacketBuf]) -> Result<(), IoError>;
}
