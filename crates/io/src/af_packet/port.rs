//! The port itself: the [`Port`] operations over the two rings.

use std::cell::Cell;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};

use sr6_core::packet::{DevId, PacketBuf, MAX_FRAME};

use super::rx_ring::{RxFrame, RxRing};
use super::sys::{self, Mapping};
use super::tx_ring::{TxRing, TxVersion};
#[cfg(test)]
use super::vnet::VnetHdr;
use super::vnet::{self, VnetDrop};
use super::{ERR_CHECK_NS, ETH_HLEN, VLAN_HLEN};
use crate::live::{now_ns, Port, PortStats};

/// One worker's AF_PACKET queue pair on one device. See the [module docs](super).
pub struct AfPacketPort {
    pub(super) ifname: String,
    pub(super) dev: DevId,
    pub(super) ifindex: u32,
    pub(super) fanout_group: Option<u16>,
    /// `PACKET_VNET_HDR` is set on the receiving socket.
    pub(super) vnet_hdr: bool,
    pub(super) rx: RxRing,
    pub(super) tx: TxRing,
    /// The largest untagged frame the device takes (MTU + 14).
    pub(super) tx_max: usize,
    pub(super) stats: PortStats,
    /// `PACKET_STATISTICS` drops so far (the kernel resets its counter on every read).
    pub(super) kernel_drops: Cell<u64>,
    pub(super) tx_oversized: u64,
    pub(super) tx_error_drops: u64,
    /// When an idle `rx_burst` looks for a socket error next ([`now_ns`] time).
    pub(super) next_err_check: u64,
    // Field order is drop order: the mappings go before the sockets they map.
    pub(super) _map: Mapping,
    pub(super) _tx_map: Option<Mapping>,
    pub(super) sock: OwnedFd,
    /// The transmit-only socket of the TPACKET_V2 fallback.
    pub(super) tx_sock: Option<OwnedFd>,
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

impl AfPacketPort {
    /// The device's interface index (in the namespace the port was opened in).
    pub fn ifindex(&self) -> u32 {
        self.ifindex
    }

    /// The fanout group joined (`workers > 1`), if any.
    pub fn fanout_group(&self) -> Option<u16> {
        self.fanout_group
    }

    /// Whether the port reads the kernel's virtio-net header and completes partial
    /// checksums (`PACKET_VNET_HDR`).
    pub fn vnet_hdr(&self) -> bool {
        self.vnet_hdr
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

/// Loads `f` into `buf`, putting back a stripped VLAN tag; `false` if it is dropped
/// (counted in `st`). Frames with a virtio-net header that asks for work take
/// [`load_offloaded`]: one branch on the common path.
fn load_frame(buf: &mut PacketBuf, f: &RxFrame<'_>, dev: DevId, st: &mut PortStats) -> bool {
    if f.vnet_work() {
        return load_offloaded(buf, f, dev, st);
    }
    let tag = if f.vlan.is_some() { VLAN_HLEN } else { 0 };
    if f.data.len() < f.wire_len || f.wire_len + tag > MAX_FRAME || !buf.load(f.data, dev) {
        st.rx_oversized += 1;
        return false;
    }
    put_back_vlan(buf, f);
    true
}

/// Whether `f` was captured whole and fits a buffer with its VLAN tag put back.
fn fits(f: &RxFrame<'_>) -> bool {
    let tag = if f.vlan.is_some() { VLAN_HLEN } else { 0 };
    f.data.len() >= f.wire_len && f.wire_len + tag <= MAX_FRAME
}

/// A frame whose virtio-net header asks for work: a segmentation offload super-frame is
/// dropped (`rx_gso`), a partial checksum completed (`rx_csum_completed`), a header
/// that points outside the frame drops it (`rx_bad_vnet`). See `vnet.rs`.
#[cold]
fn load_offloaded(buf: &mut PacketBuf, f: &RxFrame<'_>, dev: DevId, st: &mut PortStats) -> bool {
    let h = f.vnet_hdr();
    // First: a super-frame is usually too large too, and is counted as what it is.
    if h.gso_type != 0 {
        st.rx_gso += 1;
        return false;
    }
    if !fits(f) || !buf.load(f.data, dev) {
        st.rx_oversized += 1;
        return false;
    }
    // Before the tag goes back: csum_start counts from the untagged frame.
    match vnet::complete(buf.data_mut(), h) {
        Ok(true) => st.rx_csum_completed += 1,
        Ok(false) => {}
        Err(VnetDrop::Gso) => {
            st.rx_gso += 1;
            return false;
        }
        Err(VnetDrop::Bad) => {
            st.rx_bad_vnet += 1;
            return false;
        }
    }
    put_back_vlan(buf, f);
    true
}

/// Puts back the 802.1Q tag the kernel stripped into metadata.
#[inline(always)]
fn put_back_vlan(buf: &mut PacketBuf, f: &RxFrame<'_>) {
    if let Some((tpid, tci)) = f.vlan {
        if f.data.len() >= 12 && buf.open_gap(12, VLAN_HLEN) {
            let d = buf.data_mut();
            d[12..14].copy_from_slice(&tpid.to_be_bytes());
            d[14..16].copy_from_slice(&tci.to_be_bytes());
        }
    }
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
            let ok = load_frame(&mut bufs[n], &f, self.dev, &mut self.stats);
            self.rx.consume();
            if ok {
                bufs[n].ts_ns = *ts.get_or_insert_with(now_ns);
                n += 1;
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
    use crate::af_packet::open;
    use crate::live::PortSpec;

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

    fn frame<'a>(data: &'a [u8], wire_len: usize, vlan: Option<(u16, u16)>) -> RxFrame<'a> {
        RxFrame { data, wire_len, vlan, vnet: None }
    }

    #[test]
    fn vlan_tag_is_put_back() {
        let mut buf = PacketBuf::new();
        let data: Vec<u8> = (0..60).collect();
        let mut st = PortStats::default();
        assert!(load_frame(&mut buf, &frame(&data, 60, Some((0x8100, 0x0064))), 3, &mut st));
        let d = buf.data();
        assert_eq!(d.len(), 64);
        assert_eq!(&d[..12], &data[..12]);
        assert_eq!(&d[12..16], &[0x81, 0x00, 0x00, 0x64]);
        assert_eq!(&d[16..], &data[12..]);
        assert_eq!(buf.in_dev, 3);
        assert_eq!(st, PortStats::default());
    }

    #[test]
    fn truncated_or_jumbo_frames_are_refused() {
        let mut buf = PacketBuf::new();
        let mut st = PortStats::default();
        let big = vec![0u8; MAX_FRAME + 1];
        assert!(!load_frame(&mut buf, &frame(&big, big.len(), None), 0, &mut st));
        let cut = vec![0u8; 100];
        assert!(!load_frame(&mut buf, &frame(&cut, 200, None), 0, &mut st));
        let edge = vec![0u8; MAX_FRAME];
        assert!(!load_frame(&mut buf, &frame(&edge, MAX_FRAME, Some((0x8100, 1))), 0, &mut st));
        assert!(load_frame(&mut buf, &frame(&edge, MAX_FRAME, None), 0, &mut st));
        assert_eq!(st.rx_oversized, 3);
    }

    /// A partial checksum is completed on the frame as the kernel tapped it, then the
    /// VLAN tag goes back in front of it; super-frames and bad headers are dropped with
    /// their own counters, never written.
    #[test]
    fn offloaded_frames_are_completed_or_dropped_and_counted() {
        // 14 + 8 bytes of UDP header + 2 of data; checksum field at 20.
        let mut data = vec![0u8; 24];
        data[14..22].copy_from_slice(&[0x12, 0x34, 0x56, 0x78, 0x00, 0x0a, 0x00, 0x00]);
        let needs = VnetHdr { flags: 1, gso_type: 0, csum_start: 14, csum_offset: 6 };
        let (h_needs, h_gso, h_bad) = (
            needs.to_bytes(),
            VnetHdr { gso_type: 1, ..needs }.to_bytes(),
            VnetHdr { csum_offset: 9, ..needs }.to_bytes(),
        );
        let mut st = PortStats::default();
        let mut buf = PacketBuf::new();
        let f = RxFrame { data: &data, wire_len: 24, vlan: Some((0x8100, 5)), vnet: Some(&h_needs) };
        assert!(load_frame(&mut buf, &f, 0, &mut st));
        let d = buf.data();
        assert_eq!(d.len(), 28);
        assert_eq!(&d[12..16], &[0x81, 0x00, 0x00, 0x05]);
        // RFC 1071 by hand: 0x1234 + 0x5678 + 0x000a = 0x68b6, complemented 0x9749.
        assert_eq!(&d[24..26], &[0x97, 0x49]);
        assert_eq!(st.rx_csum_completed, 1);

        let gso = RxFrame { vnet: Some(&h_gso), ..f };
        assert!(!load_frame(&mut buf, &gso, 0, &mut st));
        let bad = RxFrame { vnet: Some(&h_bad), ..f };
        assert!(!load_frame(&mut buf, &bad, 0, &mut st));
        assert_eq!((st.rx, st.rx_csum_completed, st.rx_gso, st.rx_bad_vnet, st.rx_oversized), (0, 1, 1, 1, 0));
    }
}
