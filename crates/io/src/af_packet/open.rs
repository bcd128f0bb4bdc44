//! Opening a port: the sockets, their options, the rings and the mapping, in the order
//! the kernel demands.

use std::cell::Cell;
use std::io;

use sr6_core::packet::MAX_FRAME;

use super::port::AfPacketPort;
use super::rx_ring::RxRing;
use super::sys::{self, Mapping};
use super::tx_ring::{TxGeometry, TxRing, TxVersion};
use super::vnet::VNET_HDR_LEN;
use super::{filter, ETH_HLEN, ETH_P_ALL, RX_BLOCK_SIZE, RX_FRAME_NOMINAL, RX_MIN_BLOCKS, RX_RETIRE_MS};
use super::{TX_BLOCK_SIZE, TX_MIN_SLOT, VLAN_HLEN};
use crate::live::{PortSpec, PortStats};

/// Opens one worker's port on `spec.ifname` (a TPACKET_V3 transmit ring if the kernel
/// takes one, else the TPACKET_V2 fallback). The socket is created in the calling
/// thread's network namespace and stays there.
pub fn open(spec: &PortSpec) -> io::Result<AfPacketPort> {
    open_with_tx(spec, TxVersion::V3)
}

/// [`open`], asking for a transmit ring format: [`TxVersion::V2`] forces the fallback
/// (tests use it to keep that path exercised); [`TxVersion::V3`] falls back by itself.
pub fn open_with_tx(spec: &PortSpec, tx_version: TxVersion) -> io::Result<AfPacketPort> {
    open_with(spec, tx_version, true)
}

/// [`open_with_tx`], choosing whether the socket takes the kernel's virtio-net header
/// (`PACKET_VNET_HDR`) and so completes partial checksums (see the module docs); without
/// it (tests compare), frames go on as the kernel tapped them.
pub fn open_with(spec: &PortSpec, tx_version: TxVersion, vnet_hdr: bool) -> io::Result<AfPacketPort> {
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

    // Receive socket: version, loss mode, virtio-net header and filter before any ring
    // (the kernel refuses them after, EBUSY), rings before bind (nothing is received
    // before bind).
    let v3 = TxVersion::V3.sockopt();
    sys::set_opt(&sock, libc::SOL_PACKET, libc::PACKET_VERSION, &v3, ifname, "PACKET_VERSION V3")?;
    sys::set_opt(&sock, libc::SOL_PACKET, libc::PACKET_LOSS, &one, ifname, "PACKET_LOSS")?;
    if vnet_hdr {
        sys::set_opt(&sock, libc::SOL_PACKET, libc::PACKET_VNET_HDR, &one, ifname, "PACKET_VNET_HDR")?;
    }
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
    // A transmit ring on the receiving socket (V3) carries the virtio-net header too.
    let geometry = |v: TxVersion| {
        let vnet = if v == TxVersion::V3 && vnet_hdr { VNET_HDR_LEN } else { 0 };
        let need = v.data_offset() + vnet + (tx_max + VLAN_HLEN).min(MAX_FRAME);
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
                (RxRing::new(base, rx_block, rx_blocks, vnet_hdr), TxRing::new(tx_base, geo, TxVersion::V3, vnet_hdr))
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
            // Protocol 0: the transmit socket never receives. No PACKET_VNET_HDR on it:
            // its frames need no header.
            sys::bind(&tx_sock, ifindex, 0, ifname)?;
            // SAFETY: each mapping holds exactly the ring requested on its socket; both
            // are stored in the port next to the rings and outlive them.
            let (rx, tx) = unsafe {
                (
                    RxRing::new(map.base(), rx_block, rx_blocks, vnet_hdr),
                    TxRing::new(tx_map.base(), geo, TxVersion::V2, false),
                )
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
        vnet_hdr,
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
