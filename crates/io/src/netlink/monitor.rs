//! The event side: a socket subscribed to `RTNLGRP_NEIGH`, and what every subscription
//! shares ([`subscribe`], [`recv_events`], [`drain`]; the link and route events of
//! `link_monitor.rs` and `route_monitor.rs` use them too).

use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, RawFd};
use std::time::{Duration, Instant};

use netlink_sys::Socket;

use super::decode::{frames, neighbour, Frame};
use super::socket::{context, grow_rcvbuf, open_socket, recv_datagram, wait_readable, RECV_BUF};
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
        let sock = subscribe(&[libc::RTNLGRP_NEIGH], "subscribing to neighbour events")?;
        Ok(NeighMonitor { sock, buf: vec![0; RECV_BUF] })
    }

    /// The events that arrive within `timeout`: waits until at least one IPv4/IPv6
    /// neighbour event is there (or `timeout` has passed: then the vector is empty),
    /// then returns it with every other event already queued, in the kernel's order.
    /// [`NeighEvent::Overrun`], if any, is the last event of the vector: events were
    /// lost after the ones before it.
    pub fn recv(&mut self, timeout: Duration) -> io::Result<Vec<NeighEvent>> {
        recv_events(&self.sock, &mut self.buf, timeout, NeighEvent::Overrun, "neighbour events", |f| match f.ty {
            libc::RTM_NEWNEIGH => neighbour(f.payload).map(NeighEvent::New),
            libc::RTM_DELNEIGH => neighbour(f.payload).map(NeighEvent::Del),
            _ => None,
        })
    }

    /// The socket's descriptor: readable when events wait.
    pub fn fd(&self) -> RawFd {
        self.sock.as_raw_fd()
    }
}

/// A non-blocking socket subscribed to the multicast `groups` of the calling thread's
/// network namespace, with a receive buffer of [`SOCKET_RCVBUF`] (best effort: a
/// smaller one only means an earlier overrun).
pub(crate) fn subscribe(groups: &[u32], what: &str) -> io::Result<Socket> {
    subscribe_with(groups, what, SOCKET_RCVBUF)
}

/// [`subscribe`] with a receive buffer of `rcvbuf` bytes, past `net.core.rmem_max`
/// where sr6 may ([`grow_rcvbuf`]).
pub(crate) fn subscribe_with(groups: &[u32], what: &str, rcvbuf: usize) -> io::Result<Socket> {
    let sock = open_socket()?;
    for g in groups {
        sock.add_membership(*g).map_err(|e| context(e, what))?;
    }
    grow_rcvbuf(&sock, rcvbuf);
    sock.set_non_blocking(true).map_err(|e| context(e, what))?;
    Ok(sock)
}

/// The events of `what` (say, "link events") that arrive on `sock` within `timeout`:
/// waits until [`drain`] has decoded at least one (or `timeout` has passed: then the
/// vector is empty), then returns it with every other event already queued, in the
/// kernel's order; `overrun`, if events were lost, last.
pub(crate) fn recv_events<E>(
    sock: &Socket,
    buf: &mut [u8],
    timeout: Duration,
    overrun: E,
    what: &str,
    decode: impl Fn(Frame<'_>) -> Option<E>,
) -> io::Result<Vec<E>>
where
    E: Clone,
{
    let deadline = Instant::now().checked_add(timeout);
    let mut events = Vec::new();
    loop {
        let over = drain(sock, buf, &mut events, overrun.clone(), &format!("receiving {what}"), &decode)?;
        if over || !events.is_empty() {
            return Ok(events);
        }
        let left = deadline.map(|d| d.saturating_duration_since(Instant::now()));
        if left == Some(Duration::ZERO)
            || !wait_readable(sock.as_raw_fd(), left).map_err(|e| context(e, format!("waiting for {what}")))?
        {
            return Ok(events);
        }
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
