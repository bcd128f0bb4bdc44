//! Opening the tester's ports: AF_XDP by default (its transmit ring is the fastest
//! path sr6-io has), AF_PACKET where AF_XDP cannot work.
//!
//! An AF_XDP port needs sr6-io's XDP program attached to its device (the socket takes
//! what the program redirects); the [`Port`] returned here owns the attachment, so the
//! program lives exactly as long as the port. The program leaves neighbour discovery,
//! ARP, multicast and the host's own addresses (`host6`/`host4`) to the kernel and
//! steers everything else — the test packets — to the socket.
//!
//! The tester uses one queue per device: a device with several receive queues is
//! refused (AF_XDP would only see queue 0); create the veth with one queue (the
//! default) or `ethtool -L DEV combined 1`.
//!
//! Ports are opened in the calling thread's network namespace and can then be used
//! from any thread.

use std::io;
use std::net::{Ipv4Addr, Ipv6Addr};
use std::os::fd::RawFd;

use sr6_core::packet::PacketBuf;
use sr6_io::af_xdp::{self, XdpAttachment, XskPort};
use sr6_io::live::{Port, PortSpec, PortStats};

use super::TrafficError;

/// Which live backend.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// AF_XDP if it works here, else AF_PACKET.
    Auto,
    AfXdp,
    AfPacket,
}

/// An open port and what it is.
pub struct TesterPort {
    pub port: Box<dyn Port>,
    /// "af_xdp (native)", "af_xdp (generic)" or "af_packet", with the reason for a
    /// fallback.
    pub backend: String,
}

impl std::fmt::Debug for TesterPort {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TesterPort").field("ifname", &self.port.ifname()).field("backend", &self.backend).finish()
    }
}

/// An AF_XDP socket with the program attachment it depends on.
struct XdpPort {
    // Dropped first: the socket before the program and maps.
    port: XskPort,
    _attachment: XdpAttachment,
}

impl Port for XdpPort {
    fn ifname(&self) -> &str {
        self.port.ifname()
    }
    fn rx_burst(&mut self, bufs: &mut [PacketBuf]) -> io::Result<usize> {
        self.port.rx_burst(bufs)
    }
    fn tx_queue(&mut self, frame: &[u8]) -> bool {
        self.port.tx_queue(frame)
    }
    fn tx_flush(&mut self) -> io::Result<()> {
        self.port.tx_flush()
    }
    fn fd(&self) -> RawFd {
        self.port.fd()
    }
    fn stats(&self) -> PortStats {
        self.port.stats()
    }
}

/// Opens the tester's port on `ifname` with `ring_frames` slots per ring. `host6` and
/// `host4` are the device's own addresses (AF_XDP leaves traffic to them to the
/// kernel); the test traffic's destinations must not be among them.
pub fn open_port(
    ifname: &str,
    backend: Backend,
    ring_frames: u32,
    host6: &[Ipv6Addr],
    host4: &[Ipv4Addr],
) -> Result<TesterPort, TrafficError> {
    let mut spec = PortSpec::new(ifname, 0, 0, 1);
    spec.ring_frames = ring_frames;
    match backend {
        Backend::AfPacket => open_af_packet(&spec, String::new()),
        Backend::AfXdp => open_af_xdp(&spec, host6, host4),
        Backend::Auto => match af_xdp::probe() {
            Ok(()) => match open_af_xdp(&spec, host6, host4) {
                Ok(p) => Ok(p),
                Err(e) => open_af_packet(&spec, format!(" (AF_XDP failed: {e})")),
            },
            Err(why) => open_af_packet(&spec, format!(" (AF_XDP unavailable: {why})")),
        },
    }
}

fn open_af_packet(spec: &PortSpec, why: String) -> Result<TesterPort, TrafficError> {
    let p =
        sr6_io::af_packet::open(spec).map_err(|e| TrafficError::Port(format!("AF_PACKET on {}: {e}", spec.ifname)))?;
    Ok(TesterPort { port: Box::new(p), backend: format!("af_packet{why}") })
}

fn open_af_xdp(spec: &PortSpec, host6: &[Ipv6Addr], host4: &[Ipv4Addr]) -> Result<TesterPort, TrafficError> {
    let err = |e: io::Error| TrafficError::Port(format!("AF_XDP on {}: {e}", spec.ifname));
    let a = XdpAttachment::attach(&spec.ifname, host6, host4).map_err(err)?;
    if a.rx_queues() > 1 {
        return Err(TrafficError::Port(format!(
            "{} has {} receive queues; the tester uses one (create the veth with one queue, or `ethtool -L {} combined 1`)",
            spec.ifname,
            a.rx_queues(),
            spec.ifname
        )));
    }
    let port = a.open_port(spec).map_err(err)?;
    let backend = format!("af_xdp ({})", a.mode());
    Ok(TesterPort { port: Box::new(XdpPort { port, _attachment: a }), backend })
}
