//! A [`Port`] over Unix datagram sockets: one Ethernet frame per datagram, a
//! [`Wire`] at the other end. Used to test live workers end to end without devices or
//! privileges; it has a real, pollable descriptor like the live backends. Unlike a
//! device, transmission blocks when the wire's reader lags (backpressure, never loss),
//! so tests can count every frame.

use std::io::ErrorKind;
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::net::UnixDatagram;

use sr6_core::packet::{DevId, PacketBuf, MAX_FRAME};

use crate::live::{now_ns, Port, PortStats};

/// One end of a datagram socket pair, as a port of device `dev`.
pub struct SocketPairPort {
    name: String,
    dev: DevId,
    sock: UnixDatagram,
    tx: UnixDatagram,
    stats: PortStats,
    rxbuf: Box<[u8]>,
}

impl SocketPairPort {
    /// A port named `name` for device index `dev`, and the wire at its other end.
    pub fn pair(name: &str, dev: DevId) -> std::io::Result<(SocketPairPort, Wire)> {
        let (rx, to_port) = UnixDatagram::pair()?;
        let (tx, from_port) = UnixDatagram::pair()?;
        rx.set_nonblocking(true)?;
        let p = SocketPairPort {
            name: name.to_string(),
            dev,
            sock: rx,
            tx,
            stats: PortStats::default(),
            rxbuf: vec![0u8; MAX_FRAME + 1].into_boxed_slice(),
        };
        Ok((p, Wire { to_port, from_port }))
    }
}

impl Port for SocketPairPort {
    fn ifname(&self) -> &str {
        &self.name
    }

    fn rx_burst(&mut self, bufs: &mut [PacketBuf]) -> std::io::Result<usize> {
        let mut n = 0;
        while n < bufs.len() {
            match self.sock.recv(&mut self.rxbuf) {
                Ok(len) if len > MAX_FRAME => self.stats.rx_oversized += 1,
                Ok(len) => {
                    let b = &mut bufs[n];
                    b.load(&self.rxbuf[..len], self.dev);
                    b.ts_ns = now_ns();
                    self.stats.rx += 1;
                    n += 1;
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(e) => return Err(e),
            }
        }
        Ok(n)
    }

    fn tx_queue(&mut self, frame: &[u8]) -> bool {
        match self.tx.send(frame) {
            Ok(_) => {
                self.stats.tx += 1;
                true
            }
            Err(_) => {
                self.stats.tx_ring_full += 1;
                false
            }
        }
    }

    fn tx_flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }

    fn fd(&self) -> RawFd {
        self.sock.as_raw_fd()
    }

    fn stats(&self) -> PortStats {
        self.stats
    }
}

/// The far end of a [`SocketPairPort`]: frames sent here are received by the port,
/// frames the port transmits are read here.
pub struct Wire {
    pub to_port: UnixDatagram,
    pub from_port: UnixDatagram,
}
