//! Route events: a socket subscribed to `RTNLGRP_IPV4_ROUTE`, `RTNLGRP_IPV6_ROUTE`,
//! `RTNLGRP_NEXTHOP`, `RTNLGRP_LINK` and the two address groups (`ip monitor route
//! nexthop link address`), so that a live router can follow the kernel's routing tables
//! — what a routing daemon (FRR's zebra) or an operator's `ip route` installs and
//! withdraws, the addresses they give the devices, and what the kernel removes by
//! itself when a device goes down.
//!
//! The kernel sends an `RTM_NEWROUTE` for a route added or replaced and an
//! `RTM_DELROUTE` for one removed, each with the whole route; both decode with
//! [`super::route::decode`]. As with links and neighbours: open the monitor first, then
//! dump ([`super::routes`]), then apply events; on [`RouteEvent::Overrun`], dump again.

use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::time::Duration;

use netlink_sys::Socket;

use super::address::KernelAddr;
use super::decode::Frame;
use super::link_monitor::LinkEvent;
use super::monitor::{recv_events, subscribe_with};
use super::nexthop::KernelNexthop;
use super::route::{decode, KernelRoute};
use super::socket::{RECV_BUF, RTM_DELNEXTHOP, RTM_NEWNEXTHOP};

/// `RTNLGRP_IPV4_ROUTE` and `RTNLGRP_IPV6_ROUTE` of `<linux/rtnetlink.h>`.
const RTNLGRP_IPV4_ROUTE: u32 = 7;
const RTNLGRP_IPV6_ROUTE: u32 = 11;
/// `RTNLGRP_NEXTHOP` (Linux 5.3).
const RTNLGRP_NEXTHOP: u32 = 32;
/// `RTNLGRP_LINK`.
const RTNLGRP_LINK: u32 = 1;
/// `RTNLGRP_IPV4_IFADDR` and `RTNLGRP_IPV6_IFADDR`.
const RTNLGRP_IPV4_IFADDR: u32 = 5;
const RTNLGRP_IPV6_IFADDR: u32 = 9;

/// A change of the kernel's routing tables.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RouteEvent {
    /// A route was added or replaced.
    New(KernelRoute),
    /// A route was removed.
    Del(KernelRoute),
    /// A nexthop object was added or replaced.
    NewNexthop(KernelNexthop),
    /// A nexthop object was removed (the kernel removes the routes through it too,
    /// without a message for each).
    DelNexthop(KernelNexthop),
    /// Device `ifindex` is down, has lost its carrier or is gone. The kernel has then
    /// deleted the nexthop objects through it (net/ipv4/nexthop.c, `nh_netdev_event`:
    /// `NETDEV_DOWN`, `NETDEV_UNREGISTER`, and `NETDEV_CHANGE` without `IFF_RUNNING` or
    /// `IFF_LOWER_UP`) with no message of their own; the routes through them get their
    /// `RTM_DELROUTE`s, the groups they were members of nothing.
    LinkDown(u32),
    /// An address was added to a device (or changed).
    NewAddr(KernelAddr),
    /// An address was removed from a device.
    DelAddr(KernelAddr),
    /// A route or nexthop message the decoder could not read, and why (the route it was about
    /// is unknown: the caller may dump again to be sure).
    Undecodable(String),
    /// Events were lost: dump [`super::routes`] again. The monitor stays subscribed.
    Overrun,
}

/// One route event from one netlink message (`None` for other messages).
pub(crate) fn route_event(f: Frame<'_>) -> Option<RouteEvent> {
    let new = match f.ty {
        libc::RTM_NEWROUTE => true,
        libc::RTM_DELROUTE => false,
        RTM_NEWNEXTHOP | RTM_DELNEXTHOP => {
            return Some(match super::nexthop::decode(f.payload) {
                Ok(n) if f.ty == RTM_NEWNEXTHOP => RouteEvent::NewNexthop(n),
                Ok(n) => RouteEvent::DelNexthop(n),
                Err(e) => RouteEvent::Undecodable(e),
            })
        }
        libc::RTM_NEWADDR | libc::RTM_DELADDR => {
            return Some(match super::address::decode(f.payload) {
                Ok(a) if f.ty == libc::RTM_NEWADDR => RouteEvent::NewAddr(a),
                Ok(a) => RouteEvent::DelAddr(a),
                Err(e) => RouteEvent::Undecodable(e),
            })
        }
        libc::RTM_NEWLINK | libc::RTM_DELLINK => {
            return match super::link_monitor::link_event(f)? {
                LinkEvent::New(l) if l.up && l.carrier => None,
                LinkEvent::New(l) | LinkEvent::Del(l) => Some(RouteEvent::LinkDown(l.ifindex)),
                LinkEvent::Overrun => None,
            };
        }
        _ => return None,
    };
    Some(match decode(f.payload) {
        Ok(r) if new => RouteEvent::New(r),
        Ok(r) => RouteEvent::Del(r),
        Err(e) => RouteEvent::Undecodable(e),
    })
}

/// The receive buffer the route events get: a routing daemon installing a full table
/// sends some hundreds of thousands of events within seconds (about 1 KB each in the
/// socket's account), and one lost means a dump of every table, which costs far more
/// than the events — and slows the kernel's own installs while it walks its tables.
/// The memory is taken only while events wait.
const ROUTE_RCVBUF: usize = 256 << 20;

/// IPv4 and IPv6 route events of the network namespace it was opened in.
/// Non-blocking, as [`super::NeighMonitor`].
#[derive(Debug)]
pub struct RouteMonitor {
    sock: Socket,
    buf: Vec<u8>,
}

impl RouteMonitor {
    /// Subscribes to the route events of the calling thread's network namespace.
    pub fn open() -> io::Result<RouteMonitor> {
        let what = "subscribing to route events";
        let groups = [RTNLGRP_IPV4_ROUTE, RTNLGRP_IPV6_ROUTE, RTNLGRP_LINK, RTNLGRP_IPV4_IFADDR, RTNLGRP_IPV6_IFADDR];
        let sock = subscribe_with(&groups, what, ROUTE_RCVBUF)?;
        // Best effort: a kernel before 5.3 has no nexthop objects to follow.
        let _ = sock.add_membership(RTNLGRP_NEXTHOP);
        Ok(RouteMonitor { sock, buf: vec![0; RECV_BUF] })
    }

    /// The events that arrive within `timeout` (empty if none), with every event
    /// already queued, in the kernel's order; [`RouteEvent::Overrun`], if any, last.
    pub fn recv(&mut self, timeout: Duration) -> io::Result<Vec<RouteEvent>> {
        recv_events(&self.sock, &mut self.buf, timeout, RouteEvent::Overrun, "route events", route_event)
    }

    /// The socket's descriptor: readable when events wait.
    pub fn fd(&self) -> RawFd {
        self.sock.as_raw_fd()
    }
}

#[cfg(test)]
mod tests {
    //! The link messages are link_monitor.rs's captured fixtures (a veth created down,
    //! then deleted).
    use super::*;
    use crate::netlink::decode::frames;

    fn event(bytes: &[u8]) -> Option<RouteEvent> {
        route_event(frames(bytes).next().expect("one message").expect("framed"))
    }

    #[test]
    fn a_device_down_or_gone_is_a_link_down() {
        assert_eq!(event(include_bytes!("fixtures/newlink_veth_created.bin")), Some(RouteEvent::LinkDown(3)));
        assert_eq!(event(include_bytes!("fixtures/dellink_deleted.bin")), Some(RouteEvent::LinkDown(3)));
    }
}
