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
//!  mmap of the socket (one mapping, page aligned)
//!  ┌──────────────────────── RX: TPACKET_V3 ─────────────────────────┐┌──── TX ─────┐
//!  │ block 0 (64 KiB)          │ block 1                │ … block n-1 ││ slot │ slot │…
//!  │┌────────────┬──────┬─────┬──────┬─────┬──         │             ││ hdr  │      │
//!  ││block desc  │tp3hdr│frame│tp3hdr│frame│ …          │             ││ frame│      │
//!  ││status,     │next ─┼─────┼──►   │     │            │             │└──────┴──────┘
//!  ││num_pkts,   │      │     │      │     │            │             │
//!  ││first offset│      │     │      │     │            │             │
//!  │└────────────┴──────┴─────┴──────┴─────┴──          │             │
//!  └─────────────────────────────────────────────────────────────────┘
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
//! # Errors at run time
//!
//! When the device goes down the kernel flags the socket (`ENETDOWN`), and the
//! descriptor polls `POLLERR` until the flag is taken: an idle `rx_burst` takes it (at
//! most every 10 ms) and returns it once. A `tx_flush` that fails for good (the device
//! is down or gone) drops the frames the kernel did not take, counts them in
//! [`AfPacketPort::tx_error_drops`], and returns the error; a full send buffer or
//! device queue is not an error: the frames go with the next flush.
//!
//! # Limits
//!
//! * The kernel keeps receiving every frame too (a packet socket taps, it does not
//!   steal): the host must not forward them itself. Keep `net.ipv6.conf.all.forwarding`
//!   and `net.ipv4.ip_forward` at 0 on a host where sr6 runs over AF_PACKET.
//! * The kernel taps frames after GRO/LRO: a coalesced super-frame larger than
//!   [`MAX_FRAME`] is dropped and counted in `rx_oversized`. Turn GRO/LRO off on the
//!   devices (`ethtool -K DEV gro off lro off`).
//! * Frames from a local stack with checksum offload (veth/tap peers) may arrive with a
//!   partial checksum (`TP_STATUS_CSUMNOTREADY`); they are forwarded as they are. Turn
//!   transmit checksum offload off on such peers.
//! * Frames longer than the device takes (MTU + 14, + 18 with an 802.1Q tag, read at
//!   open) are refused by `tx_queue` and counted in [`AfPacketPort::tx_oversized`]:
//!   [`PortStats`] has no field for them.
//! * Needs Linux ≥ 4.20 (`PACKET_IGNORE_OUTGOING`, `PACKET_FANOUT_FLAG_IGNORE_OUTGOING`).

mod filter;
mod rx_ring;
mod sys;
mod tx_ring;

use std::cell::Cell;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};

use sr6_core::packet::{DevId, PacketBuf, MAX_FRAME};

use crate::live::{now_ns, Port, PortSpec, PortStats};
use rx_ring::{RxFrame, RxRing};
use sys::Mapping;
pub use tx_ring::TxVersion;
use tx_ring::{TxGeometry, TxRing};

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

/// One worker's AF_PACKET queue pair on one device. See the module docs.
pub struct AfPacketPort {
    ifname: String,
    dev: DevId,
    ifindex: u32,
    fanout_group: Option<u16>,
    rx: RxRing,
    tx: TxRing,
    /// The largest untagged frame the device takes (MTU + 14).
    tx_max: usize,
    stats: PortStats,
    /// `PACKET_STATISTICS` drops so far (the kernel resets its counter on every read).
    kernel_drops: Cell<u64>,
    tx_oversized: u64,
    tx_error_drops: u64,
    /// When an idle `rx_burst` looks for a socket error next ([`now_ns`] time).
    next_err_check: u64,
    // Field order is drop order: the mappings go before the sockets they map.
    _map: Mapping,
    _tx_map: Option<Mapping>,
    sock: OwnedFd,
    /// The transmit-only socket of the TPACKET_V2 fallback.
    tx_sock: Option<OwnedFd>,
}

impl std::fmt::Debug for AfPacketPort {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AfPacketPort")
            .field("ifname", &self.ifname)
            .field("ifindex", &self.ifindex)
            .field("fanout_group", &self.fanout_group)
            .field("tx_version", &self.tx.version())
            .field("tx_slots", &self.tx.slots())
            .finish()
    }
}

/// Opens one worker's port on `spec.ifname` (a TPACKET_V3 transmit ring if the kernel
/// takes one, else the TPACKET_V2 fallback). The socket is created in the calling
/// thread's network namespace and stays there.
pub fn open(spec: &PortSpec) -> io::Result<AfPacketPort> {
    open_with_tx(spec, TxVersion::V3)
}

/// [`open`], asking for a transmit ring format: [`TxVersion::V2`] forces the fallback
/// (tests use it to keep that path exercised); [`TxVersion::V3`] falls back by itself.
pub fn open_with_tx(spec: &PortSpec, tx_version: TxVersion) -> io::Result<AfPacketPort> {
    let ifname = spec.ifname.as_str();
    if spec.workers == 0 || spec.worker >= spec.workers || spec.ring_frames == 0 {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "AF_PACKET on {ifname}: worker {} of {} with {} ring frames is not a valid port",
                spec.worker, spec.workers, spec.ring_frames
            ),
        ));
    }
    let ifindex = sys::ifindex(ifname)?;
    let sock = sys::packet_socket(ifname)?;
    let info = sys::dev_info(&sock, ifname)?;
    if info.arphrd != libc::ARPHRD_ETHER {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("AF_PACKET on {ifname}: not an Ethernet device (link type {})", info.arphrd),
        ));
    }
    let page = sys::page_size();
    let one: libc::c_int = 1;

    // Receive socket: version, loss mode and filter before any ring (the kernel refuses
    // them after), rings before bind (nothing is received before bind).
    let v3 = TxVersion::V3.sockopt();
    sys::set_opt(&sock, libc::SOL_PACKET, libc::PACKET_VERSION, &v3, ifname, "PACKET_VERSION V3")?;
    sys::set_opt(&sock, libc::SOL_PACKET, libc::PACKET_LOSS, &one, ifname, "PACKET_LOSS")?;
    filter::attach(&sock, ifname)?;

    let rx_block = RX_BLOCK_SIZE.max(page);
    let rx_blocks = (spec.ring_frames as usize * RX_FRAME_NOMINAL).div_ceil(rx_block).max(RX_MIN_BLOCKS);
    let rx_req = libc::tpacket_req3 {
        tp_block_size: rx_block as u32,
        tp_block_nr: rx_blocks as u32,
        tp_frame_size: RX_FRAME_NOMINAL as u32,
        tp_frame_nr: (rx_blocks * (rx_block / RX_FRAME_NOMINAL)) as u32,
        tp_retire_blk_tov: RX_RETIRE_MS,
        tp_sizeof_priv: 0,
        tp_feature_req_word: 0,
    };
    sys::set_opt(&sock, libc::SOL_PACKET, libc::PACKET_RX_RING, &rx_req, ifname, "PACKET_RX_RING")?;
    let rx_bytes = rx_block * rx_blocks;

    let tx_max = info.mtu + ETH_HLEN;
    let geometry = |v: TxVersion| {
        let need = v.data_offset() + (tx_max + VLAN_HLEN).min(MAX_FRAME);
        let frame_size = need.next_power_of_two().max(TX_MIN_SLOT);
        let block_size = TX_BLOCK_SIZE.max(page).max(frame_size);
        let per_block = block_size / frame_size;
        TxGeometry { frame_size, block_size, block_nr: (spec.ring_frames as usize).div_ceil(per_block) }
    };

    // The transmit ring: V3 on this socket if the kernel takes it.
    let mut tx_v3 = None;
    if tx_version == TxVersion::V3 {
        let geo = geometry(TxVersion::V3);
        let req = libc::tpacket_req3 {
            tp_block_size: geo.block_size as u32,
            tp_block_nr: geo.block_nr as u32,
            tp_frame_size: geo.frame_size as u32,
            tp_frame_nr: geo.frame_nr() as u32,
            tp_retire_blk_tov: 0,
            tp_sizeof_priv: 0,
            tp_feature_req_word: 0,
        };
        match sys::set_opt(&sock, libc::SOL_PACKET, libc::PACKET_TX_RING, &req, ifname, "PACKET_TX_RING V3") {
            Ok(()) => tx_v3 = Some(geo),
            Err(e) if e.kind() == io::ErrorKind::InvalidInput => {} // fall back to V2
            Err(e) => return Err(e),
        }
    }

    let (map, tx_map, tx_sock, rx, tx) = match tx_v3 {
        Some(geo) => {
            let map = Mapping::new(&sock, rx_bytes + geo.bytes(), ifname)?;
            let base = map.base();
            // SAFETY: the mapping holds the receive ring (rx_blocks blocks of rx_block
            // bytes) then the transmit ring (`geo`), as requested above; it is stored
            // in the port next to the rings and outlives them.
            let (rx, tx) = unsafe {
                let tx_base = std::ptr::NonNull::new_unchecked(base.as_ptr().add(rx_bytes));
                (RxRing::new(base, rx_block, rx_blocks), TxRing::new(tx_base, geo, TxVersion::V3))
            };
            (map, None, None, rx, tx)
        }
        None => {
            let map = Mapping::new(&sock, rx_bytes, ifname)?;
            let geo = geometry(TxVersion::V2);
            let tx_sock = sys::packet_socket(ifname)?;
            let v2 = TxVersion::V2.sockopt();
            sys::set_opt(&tx_sock, libc::SOL_PACKET, libc::PACKET_VERSION, &v2, ifname, "PACKET_VERSION V2")?;
            sys::set_opt(&tx_sock, libc::SOL_PACKET, libc::PACKET_LOSS, &one, ifname, "PACKET_LOSS")?;
            let req = libc::tpacket_req {
                tp_block_size: geo.block_size as u32,
                tp_block_nr: geo.block_nr as u32,
                tp_frame_size: geo.frame_size as u32,
                tp_frame_nr: geo.frame_nr() as u32,
            };
            sys::set_opt(&tx_sock, libc::SOL_PACKET, libc::PACKET_TX_RING, &req, ifname, "PACKET_TX_RING V2")?;
            let tx_map = Mapping::new(&tx_sock, geo.bytes(), ifname)?;
            sys::set_opt(&tx_sock, libc::SOL_PACKET, libc::PACKET_QDISC_BYPASS, &one, ifname, "PACKET_QDISC_BYPASS")?;
            // Protocol 0: the transmit socket never receives.
            sys::bind(&tx_sock, ifindex, 0, ifname)?;
            // SAFETY: each mapping holds exactly the ring requested on its socket; both
            // are stored in the port next to the rings and outlive them.
            let (rx, tx) = unsafe {
                (RxRing::new(map.base(), rx_block, rx_blocks), TxRing::new(tx_map.base(), geo, TxVersion::V2))
            };
            (map, Some(tx_map), Some(tx_sock), rx, tx)
        }
    };

    sys::set_opt(&sock, libc::SOL_PACKET, libc::PACKET_IGNORE_OUTGOING, &one, ifname, "PACKET_IGNORE_OUTGOING")?;
    sys::set_opt(&sock, libc::SOL_PACKET, libc::PACKET_QDISC_BYPASS, &one, ifname, "PACKET_QDISC_BYPASS")?;
    // Room in the send buffer for a full ring in flight; best effort (SO_SNDBUFFORCE
    // needs CAP_NET_ADMIN, SO_SNDBUF is capped by net.core.wmem_max).
    let sndbuf = (tx.slots() * tx.capacity()).min(i32::MAX as usize) as libc::c_int;
    let tx_fd = tx_sock.as_ref().unwrap_or(&sock);
    if sys::set_opt(tx_fd, libc::SOL_SOCKET, libc::SO_SNDBUFFORCE, &sndbuf, ifname, "SO_SNDBUFFORCE").is_err() {
        let _ = sys::set_opt(tx_fd, libc::SOL_SOCKET, libc::SO_SNDBUF, &sndbuf, ifname, "SO_SNDBUF");
    }

    sys::bind(&sock, ifindex, ETH_P_ALL, ifname)?;

    let mut fanout_group = None;
    if spec.workers > 1 {
        let group = fanout_group_id(ifindex);
        let mode = libc::PACKET_FANOUT_HASH | libc::PACKET_FANOUT_FLAG_IGNORE_OUTGOING;
        let arg = u32::from(group) | (mode << 16);
        sys::set_opt(&sock, libc::SOL_PACKET, libc::PACKET_FANOUT, &arg, ifname, "PACKET_FANOUT").map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("{e} (fanout group {group:#06x}: is another program using it with other settings?)"),
            )
        })?;
        fanout_group = Some(group);
    }

    Ok(AfPacketPort {
        ifname: spec.ifname.clone(),
        dev: spec.dev,
        ifindex,
        fanout_group,
        rx,
        tx,
        tx_max,
        stats: PortStats::default(),
        kernel_drops: Cell::new(0),
        tx_oversized: 0,
        tx_error_drops: 0,
        next_err_check: 0,
        _map: map,
        _tx_map: tx_map,
        sock,
        tx_sock,
    })
}

/// The `PACKET_FANOUT` group of a device: its ifindex xor the process id (low 16 bits).
pub fn fanout_group_id(ifindex: u32) -> u16 {
    (ifindex as u16) ^ (std::process::id() as u16)
}

impl AfPacketPort {
    /// The device's interface index (in the namespace the port was opened in).
    pub fn ifindex(&self) -> u32 {
        self.ifindex
    }

    /// The fanout group joined (`workers > 1`), if any.
    pub fn fanout_group(&self) -> Option<u16> {
        self.fanout_group
    }

    /// Which transmit ring format the kernel took.
    pub fn tx_version(&self) -> TxVersion {
        self.tx.version()
    }

    /// Slots in the transmit ring (`ring_frames` rounded up to whole blocks).
    pub fn tx_slots(&self) -> usize {
        self.tx.slots()
    }

    /// Frames `tx_queue` refused because the device cannot send them (longer than
    /// MTU + 14, + 18 with an 802.1Q tag, or shorter than an Ethernet header).
    pub fn tx_oversized(&self) -> u64 {
        self.tx_oversized
    }

    /// Queued frames dropped because `tx_flush` failed for good (the device is down or
    /// gone; the error itself is returned once, by that flush).
    pub fn tx_error_drops(&self) -> u64 {
        self.tx_error_drops
    }
}

/// Loads `f` into `buf`, putting back a stripped VLAN tag; `false` if it does not fit.
fn load_frame(buf: &mut PacketBuf, f: &RxFrame<'_>, dev: DevId) -> bool {
    let tag = if f.vlan.is_some() { VLAN_HLEN } else { 0 };
    if f.data.len() < f.wire_len || f.wire_len + tag > MAX_FRAME || !buf.load(f.data, dev) {
        return false;
    }
    if let Some((tpid, tci)) = f.vlan {
        if f.data.len() >= 12 && buf.open_gap(12, VLAN_HLEN) {
            let d = buf.data_mut();
            d[12..14].copy_from_slice(&tpid.to_be_bytes());
            d[14..16].copy_from_slice(&tci.to_be_bytes());
        }
    }
    true
}

impl Port for AfPacketPort {
    fn ifname(&self) -> &str {
        &self.ifname
    }

    fn rx_burst(&mut self, bufs: &mut [PacketBuf]) -> io::Result<usize> {
        let mut n = 0;
        let mut ts = None;
        while n < bufs.len() {
            let Some(f) = self.rx.peek() else { break };
            let ok = load_frame(&mut bufs[n], &f, self.dev);
            self.rx.consume();
            if ok {
                bufs[n].ts_ns = *ts.get_or_insert_with(now_ns);
                n += 1;
            } else {
                self.stats.rx_oversized += 1;
            }
        }
        self.stats.rx += n as u64;
        if n == 0 {
            // Idle: now and then, take the socket's pending error (ENETDOWN after the
            // device went down), reported once; left there, it would keep the
            // descriptor polling POLLERR and the worker awake.
            let now = now_ns();
            if now >= self.next_err_check {
                self.next_err_check = now + ERR_CHECK_NS;
                if let Ok(err @ 1..) = sys::get_opt::<libc::c_int>(&self.sock, libc::SOL_SOCKET, libc::SO_ERROR) {
                    return Err(io::Error::from_raw_os_error(err));
                }
            }
        }
        Ok(n)
    }

    fn tx_queue(&mut self, frame: &[u8]) -> bool {
        let tagged = frame.get(12..14) == Some(&[0x81, 0x00][..]);
        let max = (self.tx_max + if tagged { VLAN_HLEN } else { 0 }).min(self.tx.capacity());
        if frame.len() < ETH_HLEN || frame.len() > max {
            self.tx_oversized += 1;
            return false;
        }
        if self.tx.push(frame) {
            true
        } else {
            self.stats.tx_ring_full += 1;
            false
        }
    }

    fn tx_flush(&mut self) -> io::Result<()> {
        if self.tx.pending == 0 {
            return Ok(());
        }
        let fd = self.tx_sock.as_ref().unwrap_or(&self.sock).as_raw_fd();
        let send = || {
            // SAFETY: no buffer and no address: the kernel sends the ring's requested
            // slots to the bound device; MSG_DONTWAIT makes it return without waiting.
            let r = unsafe { libc::sendto(fd, std::ptr::null(), 0, libc::MSG_DONTWAIT, std::ptr::null(), 0) };
            if r >= 0 {
                Ok(())
            } else {
                Err(io::Error::last_os_error())
            }
        };
        let transient =
            |e: &io::Error| matches!(e.raw_os_error(), Some(libc::EAGAIN | libc::ENOBUFS | libc::ENOMEM | libc::EINTR));
        // A hard error may be stale: the socket's pending error (ENETDOWN after a link
        // flap), which the call returns once instead of sending. Try once more.
        let r = match send() {
            Err(e) if !transient(&e) => send(),
            r => r,
        };
        match r {
            Ok(()) => {
                self.stats.tx += self.tx.pending as u64;
                self.tx.pending = 0;
                Ok(())
            }
            // Send buffer or device queue full: the slots stay requested and go with the
            // next flush.
            Err(e) if transient(&e) => Ok(()),
            // The device is down or gone: drop what the kernel did not take, so the ring
            // neither stalls nor sends stale frames when the device comes back.
            Err(e) => {
                let queued = self.tx.pending;
                let dropped = self.tx.discard_pending();
                self.stats.tx += (queued - dropped) as u64;
                self.tx_error_drops += dropped as u64;
                Err(e)
            }
        }
    }

    fn fd(&self) -> RawFd {
        self.sock.as_raw_fd()
    }

    fn stats(&self) -> PortStats {
        if let Ok(st) = sys::get_opt::<libc::tpacket_stats_v3>(&self.sock, libc::SOL_PACKET, libc::PACKET_STATISTICS) {
            self.kernel_drops.set(self.kernel_drops.get() + u64::from(st.tp_drops));
        }
        PortStats { rx_ring_full: self.kernel_drops.get(), ..self.stats }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_send<T: Send>() {}

    #[test]
    fn port_is_send() {
        assert_send::<AfPacketPort>();
    }

    #[test]
    fn bad_spec_is_refused_before_any_system_call() {
        let e = open(&PortSpec::new("lo", 0, 2, 2)).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
    }

    #[test]
    fn vlan_tag_is_put_back() {
        let mut buf = PacketBuf::new();
        let frame: Vec<u8> = (0..60).collect();
        let f = RxFrame { data: &frame, wire_len: 60, vlan: Some((0x8100, 0x0064)) };
        assert!(load_frame(&mut buf, &f, 3));
        let d = buf.data();
        assert_eq!(d.len(), 64);
        assert_eq!(&d[..12], &frame[..12]);
        assert_eq!(&d[12..16], &[0x81, 0x00, 0x00, 0x64]);
        assert_eq!(&d[16..], &frame[12..]);
        assert_eq!(buf.in_dev, 3);
    }

    #[test]
    fn truncated_or_jumbo_frames_are_refused() {
        let mut buf = PacketBuf::new();
        let big = vec![0u8; MAX_FRAME + 1];
        assert!(!load_frame(&mut buf, &RxFrame { data: &big, wire_len: big.len(), vlan: None }, 0));
        let cut = vec![0u8; 100];
        assert!(!load_frame(&mut buf, &RxFrame { data: &cut, wire_len: 200, vlan: None }, 0));
        let edge = vec![0u8; MAX_FRAME];
        assert!(!load_frame(&mut buf, &RxFrame { data: &edge, wire_len: MAX_FRAME, vlan: Some((0x8100, 1)) }, 0));
        assert!(load_frame(&mut buf, &RxFrame { data: &edge, wire_len: MAX_FRAME, vlan: None }, 0));
    }
}
