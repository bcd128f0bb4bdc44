//! sr6-core: the SRv6 data plane.
//!
//! Tables built once from a [`spec::RouterSpec`], behaviours as a data-driven table, and a
//! pipeline that processes packets in batches: classify -> behaviour -> rewrite. No I/O,
//! no serde, no allocation per packet.

pub mod behaviour;
pub mod spec;
pub mod counters;
pub mod drop;
pub mod lpm;
pub mod packet;
pub mod hmac;
pub mod tables;
pub mod pipeline;
pub mod exact;
pub mod words;
mod multiplier;
