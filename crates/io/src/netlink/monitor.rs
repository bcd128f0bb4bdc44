//! The event side: a socket subscribed to `RTNLGRP_NEIGH`, and the datagram reader
//! every subscription shares ([`drain`]; the link events of `link_monitor.rs` use it too).

use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, RawFd};
use std::time::{Duration, Instant};

use netlink_sys::Socket;

use super::decode::{frames, neighbour, Frame};
use super::socket::{context, open_socket, recv_datagram, wait_readable, RECV_BUF};
use super::NeighEvent;

/// The receive buffer asked for (the kernel caps it at `net.core.rmem_max`): room for
/// a burst of some thousands of events before [`NeighEvent::Overrun`].
const SOCKET_RCVBUF: usize = 1 << 20;

/// IPv4 and IPv6 neighbour events (`ip monitor neigh`), from the network namespace the
/// monitor was opened in. The socket is non-blocking: [`NeighMonitor::recv`] waits
/// with `poll(2)`, and an event loop may poll [`NeighMonitor::fd`] itself, then call
/// `recv(Duration::ZERO)`.
#[derive(Debug)]
pub struct NeighMonitor {
    sock: Socket,
    buf: Vec<u8>,
}

impl NeighMonitor {
    /// Subscribes to the neighbour events of the calling thread's network namespace.
    pub fn open() -> io::Result<NeighMonitor> {
        let what = "subscribing to neighbour events";
        let sock = open_socket()?;
        sock.add_membership(libc::RTNLGRP_NEIGH).map_err(|e| context(e, what))?;
        // Best effort: a smaller buffer only means an earlier Overrun.
        let _ = sock.set_rx_buf_sz(SOCKET_RCVBUF);
        sock.set_non_blocking(true).map_err(|e| context(e, what))?;
        Ok(NeighMonitor { sock, buf: vec![0; RECV_BUF] })
    }

    /// The events that arrive within `timeout`: waits until at least one IPv4/IPv6
    /// neighbour event is there (or `timeout` has passed: then the vector is empty),
    /// then returns it with every other event already queued, in the kernel's order.
    /// [`NeighEvent::Overrun`], if any, is the last event of the vector: events were
    /// lost after the ones before it.
    pub fn recv(&mut self, timeout: Duration) -> io::Result<Vec<NeighEvent>> {
        let deadline = Instant::now().checked_add(timeout);
        let mut events = Vec::new();
        loop {
            if self.drain(&mut events)? || !events.is_empty() {
                return Ok(events);
            }
            let left = deadline.map(|d| d.saturating_duration_since(Instant::now()));
            if left == Some(Duration::ZERO)
                || !wait_readable(self.fd(), left).map_err(|e| context(e, "waiting for neighbour events"))?
            {
                return Ok(events);
            }
        }
    }

    /// The socket's descriptor: readable when events wait.
    pub fn fd(&self) -> RawFd {
        self.sock.as_raw_fd()
    }

    /// Reads every queued datagram into `events`; `true` after an overrun (then
    /// `events` ends with [`NeighEvent::Overrun`]).
    fn drain(&mut self, events: &mut Vec<NeighEvent>) -> io::Result<bool> {
        drain(&self.sock, &mut self.buf, events, NeighEvent::Overrun, "receiving neighbour events", |f| match f.ty {
            libc::RTM_NEWNEIGH => neighbour(f.payload).map(NeighEvent::New),
            libc::RTM_DELNEIGH => neighbour(f.payload).map(NeighEvent::Del),
            _ => None,
        })
    }
}

/// Reads every datagram queued on a subscribed socket, decoding each message with
/// `decode` into `events`; `true` after an overrun (then `events` ends with `overrun`):
/// the kernel dropped events (`ENOBUFS`), a datagram was too large for `buf`, or one
/// could not be framed.
pub(crate) fn drain<E>(
    sock: &Socket,
    buf: &mut [u8],
    events: &mut Vec<E>,
    overrun: E,
    what: &str,
    decode: impl Fn(Frame<'_>) -> Option<E>,
) -> io::Result<bool> {
    loop {
        let n = match recv_datagram(sock, buf) {
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            // ENOBUFS: the kernel dropped events. InvalidData: a datagram too large
            // for the buffer, cut. Either way events were lost.
            Err(e) if e.raw_os_error() == Some(libc::ENOBUFS) || e.kind() == io::ErrorKind::InvalidData => {
                events.push(overrun);
                return Ok(true);
            }
            Err(e) => return Err(context(e, what)),
        };
        for f in frames(&buf[..n]) {
            let Ok(f) = f else {
                // The rest of the datagram cannot be framed: events lost.
                events.push(overrun);
                return Ok(true);
            };
            events.extend(decode(f));
        }
    }
}

impl AsRawFd for NeighMonitor {
    fn as_raw_fd(&self) -> RawFd {
        self.sock.as_raw_fd()
    }
}

impl AsFd for NeighMonitor {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.sock.as_fd()
    }
}
