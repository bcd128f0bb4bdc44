//! The AF_PACKET live backend: the fallback for `sr6 run` where AF_XDP is unavailable.
//!
//! One [`AfPacketPort`] is one worker's view of one Ethernet device: a packet socket
//! bound to the device (by ifindex, `ETH_P_ALL`) with a memory-mapped receive ring and a
//! memory-mapped transmit ring. Frames are copied once each way: from the receive ring
//! into a [`PacketBuf`] (which needs its headroom anyway), and from a `PacketBuf` into a
//! transmit slot. Nothing is allocated per packet and the hot path makes no system call
//! except the one `sendto` per [`Port::tx_flush`].
//!
//! # Ring layout
//!
//! ```text
//!  one mmap of the socket
//!  |<-------- RX ring: n blocks of 64 KiB (TPACKET_V3) -------->|<--- TX ring: slots --->|
//!  +----------------------------+----------+-----+--------------+------+------+-----+
//!  | block 0                    | block 1  | ... | block n-1    | slot | slot | ... |
//!  +----------------------------+----------+-----+--------------+------+------+-----+
//!     |
//!     v  frames packed back to back, each found from the previous by tp_next_offset
//!  +------------------+---------+-------+---------+-------+----
//!  | block descriptor | tp3 hdr | frame | tp3 hdr | frame | ...
//!  | status, num_pkts |  next --+-------+-->      |       |
//!  | first offset     |         |       |         |       |
//!  +------------------+---------+-------+---------+-------+----
//!
//!  RX frame: tpacket3_hdr | sockaddr_ll | virtio_net_hdr (10) | frame (at tp_mac)
//!  TX slot (a fixed size, whole slots per block): header (status, len) | frame
//!  V3: tpacket3_hdr, zeroed virtio_net_hdr at 48, frame at 58. V2 fallback: a mapping
//!  of its own on the transmit socket, tpacket2_hdr, frame at 32.
//! ```
//!
//! **Receive (TPACKET_V3).** The kernel packs frames of any size back to back into a
//! block and hands the block over whole (`TP_STATUS_USER`) when it is full or after the
//! block retire timeout ([`RX_RETIRE_MS`], 1 ms: a lone frame waits at most that long —
//! the price of V3's batching; at high rates blocks fill long before). [`Port::rx_burst`]
//! walks the blocks in order, copies each frame into a `PacketBuf`, and hands a block
//! back (`TP_STATUS_KERNEL`) as soon as its last frame is copied, so the ring only holds
//! frames the pipeline has not seen yet. A burst may stop in the middle of a block; the
//! next one resumes there. The socket polls readable when a block is waiting.
//!
//! **Transmit.** Fixed-size slots (a power of two that holds the device's MTU plus an
//! Ethernet header with one VLAN tag). [`Port::tx_queue`] copies a frame into the next
//! slot whose status is `TP_STATUS_AVAILABLE` and marks it `TP_STATUS_SEND_REQUEST`;
//! [`Port::tx_flush`] makes one `sendto(MSG_DONTWAIT)` and the kernel sends every
//! requested slot in order, straight to the driver (`PACKET_QDISC_BYPASS`). The kernel
//! sets a slot back to AVAILABLE once the device has let go of the frame, so reclaiming
//! costs nothing. The ring is TPACKET_V3 on the receiving socket itself when the kernel
//! accepts it (Linux ≥ 4.11: V3 transmit rings are fixed-size slots like V2's); if it
//! refuses (`EINVAL`), a second socket — bound with protocol 0, so it receives nothing —
//! carries a TPACKET_V2 transmit ring ([`TxVersion`] says which). `PACKET_LOSS` is set, so
//! a frame the kernel rejects is skipped instead of stalling the ring.
//!
//! # What the socket receives
//!
//! A classic BPF filter (see `filter.rs` for the program and its pseudo-code) passes
//! only unicast IPv4 and IPv6 frames addressed to this host, minus ICMPv6 neighbour
//! discovery: ARP, NDP, multicast, LLDP and the rest stay with the kernel, which still
//! sees every frame (a packet socket only taps). `PACKET_IGNORE_OUTGOING` keeps our own
//! and the kernel's transmissions out. With `workers > 1`, each worker's socket joins a
//! `PACKET_FANOUT` group with `PACKET_FANOUT_HASH` (flows stay on one worker, in order);
//! the group id is the ifindex xor the process id (low 16 bits), so every device has its
//! own group and two processes do not join each other's by accident.
//!
//! An 802.1Q tag the kernel stripped into metadata (`TP_STATUS_VLAN_VALID`) is put
//! back, so the pipeline sees the frame as it was on the wire.
//!
//! # Partial checksums (`PACKET_VNET_HDR`)
//!
//! A local sender with transmit checksum offload (a veth or tap peer: a veth's default)
//! hands over UDP and TCP whose checksum only the kernel's metadata completes
//! (`TP_STATUS_CSUMNOTREADY`). The receiving socket sets `PACKET_VNET_HDR` (before its
//! rings: the kernel refuses it after), so the kernel writes a `struct virtio_net_hdr`
//! right before every frame (`tp_mac - 10`; `tp_mac` and `tp_net` already leave room for
//! it) and the port completes the checksum from it (`vnet.rs`), counted in
//! [`PortStats::rx_csum_completed`]; segmentation offload super-frames (`gso_type` set)
//! are dropped and counted in [`PortStats::rx_gso`], a header pointing outside its frame
//! in [`PortStats::rx_bad_vnet`]. A super-frame whose segmentation the header cannot
//! express (tunnel or SCTP GSO) the kernel drops itself, counted with the ring's drops
//! (`rx_ring_full`). A frame whose header asks for nothing costs one branch.
//! The option applies to the socket's transmit ring as well: each V3 transmit slot
//! starts with a zeroed header (no offload; the kernel then skips its own MTU check,
//! which `tx_queue` makes). The V2 fallback's transmit socket has no header.
//! [`open_with`] opens a port without it (tests compare the two).
//!
//! # Errors at run time
//!
//! When the device goes down the kernel flags the socket (`ENETDOWN`), and the
//! descriptor polls `POLLERR` until the flag is taken: an idle `rx_burst` takes it (at
//! most every 10 ms) and returns it once. A `tx_flush` that fails for good (the device
//! is down or gone) drops the frames the kernel did not take, counts them in
//! [`AfPacketPort::tx_error_drops`], and returns the error; a full send buffer or
//! device queue is not an error: the frames go with the next flush. A hard error may be
//! stale — the socket's `ENETDOWN` from a flap since, which `sendto` returns once instead
//! of sending — so the flush tries once more before dropping: the only case where it
//! makes a second system call.
//!
//! # Limits
//!
//! * The kernel keeps receiving every frame too (a packet socket taps, it does not
//!   steal): the host must not forward them itself. Keep `net.ipv6.conf.all.forwarding`
//!   and `net.ipv4.ip_forward` at 0 on a host where sr6 runs over AF_PACKET.
//! * The kernel taps frames after GRO/LRO: a coalesced super-frame larger than
//!   [`MAX_FRAME`] is dropped and counted in `rx_oversized`. Turn GRO/LRO off on the
//!   devices (`ethtool -K DEV gro off lro off`).
//! * Segmentation offload super-frames from a local sender with TSO (veth/tap peers)
//!   are dropped and counted in `rx_gso` (see below): turn TSO off on such peers
//!   (`ethtool -K PEER tso off`).
//! * Frames longer than the device takes (MTU + 14, + 18 with an 802.1Q tag, read at
//!   open) are refused by `tx_queue` and counted in [`AfPacketPort::tx_oversized`]:
//!   [`PortStats`] has no field for them. The MTU is read at open: reopen the port after
//!   changing it.
//! * Needs Linux ≥ 4.20 (`PACKET_IGNORE_OUTGOING`, `PACKET_FANOUT_FLAG_IGNORE_OUTGOING`).
//!
//! [`PacketBuf`]: sr6_core::packet::PacketBuf
//! [`MAX_FRAME`]: sr6_core::packet::MAX_FRAME
//! [`Port::rx_burst`]: crate::live::Port::rx_burst
//! [`Port::tx_queue`]: crate::live::Port::tx_queue
//! [`Port::tx_flush`]: crate::live::Port::tx_flush
//! [`PortStats`]: crate::live::PortStats
//! [`PortStats::rx_csum_completed`]: crate::live::PortStats::rx_csum_completed
//! [`PortStats::rx_gso`]: crate::live::PortStats::rx_gso
//! [`PortStats::rx_bad_vnet`]: crate::live::PortStats::rx_bad_vnet

mod filter;
mod open;
mod port;
mod rx_ring;
mod sys;
mod tx_ring;
mod vnet;

pub use open::{fanout_group_id, open, open_with, open_with_tx};
pub use port::AfPacketPort;
pub use tx_ring::TxVersion;

/// Bytes in one receive block (at least a page): holds a jumbo frame.
pub const RX_BLOCK_SIZE: usize = 1 << 16;
/// `PortSpec::ring_frames` counts receive frames of this nominal size: the receive ring
/// has `ring_frames * 2048` bytes (at least [`RX_MIN_BLOCKS`] blocks).
pub const RX_FRAME_NOMINAL: usize = 2048;
/// The fewest receive blocks.
pub const RX_MIN_BLOCKS: usize = 4;
/// The receive block retire timeout in milliseconds.
pub const RX_RETIRE_MS: u32 = 1;
/// Bytes in one transmit block (at least a page and one slot).
pub const TX_BLOCK_SIZE: usize = 1 << 16;
/// The smallest transmit slot.
pub const TX_MIN_SLOT: usize = 2048;

/// How often an idle `rx_burst` looks for a socket error, in nanoseconds.
const ERR_CHECK_NS: u64 = 10_000_000;

const ETH_HLEN: usize = 14;
const VLAN_HLEN: usize = 4;
const ETH_P_ALL: u16 = 0x0003;
