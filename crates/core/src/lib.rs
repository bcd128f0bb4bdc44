//! sr6-core: the SRv6 data plane.
//!
//! Tables built once from a [`spec::RouterSpec`], behaviours as a data-driven table, and a
//! pipeline that processes packets in batches: classify -> behaviour -> rewrite. No I/O,
//! no serde, no allocation per packet.

#![forbid(unsafe_code)]

pub mod behaviour;
pub mod bpf_prog;
pub mod counters;
pub mod drop;
pub mod exact;
pub mod fib_workload;
pub mod firewall;
pub mod hmac;
pub mod ids;
pub mod lpm;
mod multiplier;
pub mod packet;
pub mod packet_bytes;
pub mod pipeline;
pub mod spec;
pub mod tables;
pub mod words;
