//! The port itself: the [`Port`] operations over the two rings.

use std::cell::Cell;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};

use sr6_core::packet::{DevId, PacketBuf, MAX_FRAME};

use super::rx_ring::{RxFrame, RxRing};
use super::sys::{self, Mapping};
use super::tx_ring::{TxRing, TxVersion};
use super::{ERR_CHECK_NS, ETH_HLEN, VLAN_HLEN};
use crate::live::{now_ns, Port, PortStats};

/// One worker's AF_PACKET queue pair on one device. See the [module docs](super).
pub struct AfPacketPort {
    pub(super) ifname: String,
    pub(super) dev: DevId,
    pub(super) ifindex: u32,
    pub(super) fanout_group: Option<u16>,
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
