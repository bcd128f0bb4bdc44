//! `sr6-wire`: zero-copy views and parse/emit representations of every header
//! the sr6 SRv6 data plane touches.
//!
//! Layout follows smoltcp's `wire` module: each header has a view
//! `Xxx<T: AsRef<[u8]>>` (`new_unchecked`, `new_checked`, `check_len`,
//! `into_inner`, getters named after the fields, `set_*` setters when
//! `T: AsMut<[u8]>`) and, where it makes sense, an owned/borrowing `XxxRepr`
//! with `parse`, `buffer_len` and `emit`.
//!
//! Rules kept by every module:
//! - `#![forbid(unsafe_code)]`, no allocation, no I/O.
//! - No accessor panics, whatever the bytes: reads that fall outside the buffer
//!   return 0 (or an empty slice), writes outside the buffer are dropped. After
//!   `check_len`/`new_checked` succeeded every fixed field is inside the buffer,
//!   so the values are the real ones.
//! - Errors are one small `Copy` enum, [`Error`], carrying numbers.
//!
//! Modules and the RFCs they implement:
//! - [`ethernet`]: Ethernet II + 802.1Q tag (RFC 894, IEEE 802.1Q).
//! - [`ipv4`]: IPv4 header (RFC 791 §3.1), incremental checksum (RFC 1624).
//! - [`ipv6`]: IPv6 header (RFC 8200 §3).
//! - [`ext`]: the extension-header chain (RFC 8200 §4).
//! - [`opt`]: IPv6 options of Hop-by-Hop / Destination Options headers (RFC 8200 §4.2).
//! - [`srh`]: the Segment Routing Header (RFC 8754 §2).
//! - [`tlv`]: SRH TLVs, Pad1/PadN/HMAC (RFC 8754 §2.1).
//! - [`udp`]: the UDP header (RFC 768).
//! - [`gtpu`]: the GTP-U header and its PDU Session Container (3GPP TS 29.281 §5,
//!   TS 38.415 §5.5.2), for RFC 9433's translation.
//! - [`icmpv6`]: ICMPv6 (RFC 4443), incl. the SRv6 error codes (RFC 8754, RFC 8986).
//! - [`icmpv4`]: the ICMP (IPv4) error header (RFC 792, RFC 1812 §4.3.2).
//! - [`checksum`]: the Internet checksum (RFC 1071, RFC 1624).
//! - [`fixed`]: the same headers as fixed-size arrays, for the fast path.
//! - [`proto`]: IP protocol numbers (IANA).
#![forbid(unsafe_code)]
#![warn(missing_docs)]
// The no-panic rule, checked by clippy outside tests: all access goes through
// the bounds-checked helpers of `bytes`.
#![cfg_attr(not(test), deny(clippy::indexing_slicing, clippy::unwrap_used, clippy::expect_used, clippy::panic))]

mod bytes;
pub mod checksum;
mod error;
pub mod ethernet;
pub mod ext;
pub mod fixed;
pub mod gtpu;
pub mod icmpv4;
pub mod icmpv6;
pub mod ipv4;
pub mod ipv6;
pub mod opt;
pub mod proto;
pub mod srh;
pub mod tlv;
pub mod udp;

pub use error::{Error, Result};
pub use ethernet::{EthernetFrame, ETHERTYPE_ARP, ETHERTYPE_IPV4, ETHERTYPE_IPV6, ETHERTYPE_VLAN};
pub use ext::{walk_chain, ChainInfo, ExtHeader, FragmentHeader, RoutingInfo};
pub use gtpu::{GtpuPacket, GtpuRepr, PduSession};
pub use icmpv4::{Icmpv4Packet, Icmpv4Repr};
pub use icmpv6::{Icmpv6Packet, Icmpv6Repr};
pub use ipv4::{Ipv4Packet, Ipv4Repr};
pub use ipv6::{Ipv6Packet, Ipv6Repr};
pub use proto::*;
pub use srh::{SrhPacket, SrhRepr};
pub use tlv::{find_hmac, HmacAt, HmacTlv, HmacTlvRepr, Tlv, TlvIter, TLV_HMAC, TLV_PAD1, TLV_PADN};
pub use udp::UdpPacket;

#[cfg(test)]
mod fuzz_tests;
