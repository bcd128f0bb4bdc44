//! rtnetlink: what a live router needs from the kernel's link and neighbour tables.
//!
//! `sr6 run` forwards with its own tables but borrows the kernel's neighbour
//! discovery: the kernel's ARP/NDP state machine (probing, reachability timers, router
//! advertisements) is authoritative, and sr6 only reads its results. This module gives:
//!
//! * [`link_by_name`] / [`links`]: a device's index, MAC, MTU and state
//!   (`RTM_GETLINK`);
//! * [`neighbours`]: a dump of the IPv4 and IPv6 neighbour tables (`RTM_GETNEIGH`);
//! * [`NeighMonitor`]: the neighbour events that follow (`RTNLGRP_NEIGH`), with
//!   [`NeighEvent::Overrun`] when the kernel dropped some (the caller then re-dumps);
//! * [`LinkMonitor`]: the link events (`RTNLGRP_LINK`: devices created, deleted,
//!   renamed, up/down, new MAC or MTU), with [`LinkEvent::Overrun`] likewise;
//! * [`neighbour`]: one entry (`ip neigh get`);
//! * [`routes`]: a dump of the IPv4 and IPv6 routes of every table (`RTM_GETROUTE`),
//!   each a [`KernelRoute`] that writes itself as the `ip route add` line sr6's
//!   configuration reads ([`route`]: the decoder kernel-route mirroring and zebra's
//!   FPM stream share);
//! * [`nexthops`]: a dump of the nexthop objects (`RTM_GETNEXTHOP`) those routes may
//!   name, each a [`KernelNexthop`] that writes itself as its `ip nexthop add` line;
//! * [`addresses`]: a dump of the devices' IPv4 and IPv6 addresses (`RTM_GETADDR`),
//!   each a [`KernelAddr`] that writes itself as its `ip addr add` line;
//! * [`RouteMonitor`]: the route, nexthop and address events that follow
//!   (`RTNLGRP_IPV4_ROUTE`, `RTNLGRP_IPV6_ROUTE`, `RTNLGRP_NEXTHOP`,
//!   `RTNLGRP_IPV4_IFADDR`, `RTNLGRP_IPV6_IFADDR`), and the devices going down, whose
//!   nexthops the kernel flushes silently (`RTNLGRP_LINK`), with
//!   [`RouteEvent::Overrun`] likewise;
//! * [`request_resolution`]: ask the kernel to resolve a neighbour now (`RTM_NEWNEIGH`
//!   with `NTF_USE`, as `ip neigh replace ADDR dev DEV nud none use`, but leaving
//!   static entries alone), whose result arrives through the monitor.
//!
//! The free functions open a socket per call; [`Rtnl`] keeps one for repeated
//! requests. Everything is synchronous: a request waits for the kernel's answer (at
//! most [`ANSWER_TIMEOUT`]), and [`NeighMonitor::recv`] waits at most the time it is
//! given; [`NeighMonitor::fd`] lets an event loop poll it with its other descriptors.
//!
//! A netlink socket belongs to the network namespace of the thread that opened it, for
//! its whole life.
//!
//! # Usage pattern for a neighbour cache
//!
//! Open the [`NeighMonitor`] first, then dump with [`neighbours`], then apply events
//! from the monitor: no change can fall between the two. On [`NeighEvent::Overrun`],
//! dump again and replace the cache.
//!
//! # Robustness
//!
//! Every message from the kernel is decoded without panicking. Of a link only the
//! header, `IFLA_IFNAME`, `IFLA_ADDRESS` and `IFLA_MTU` are decoded, of a neighbour
//! only the header, `NDA_DST` and `NDA_LLADDR`, of a route what [`route`] lists: any
//! other attribute — unknown, new, or
//! one that the parsing library would reject — is skipped without being parsed, so a
//! kernel newer than the library cannot make a link or neighbour disappear. Errors are
//! [`std::io::Error`]s whose message says what was being done; an error the kernel
//! reported carries a [`KernelError`] (errno and the kernel's extended-ACK message).
//!
//! # Dependencies and why
//!
//! * `netlink-sys` (0.9): the `AF_NETLINK` socket itself (socket, bind, send, recv,
//!   group membership, socket options), so that this module's only `unsafe` is one
//!   `poll(2)`.
//! * `netlink-packet-core` (0.9): netlink framing — the message header, the
//!   `NLMSG_ERROR`/`NLMSG_DONE` layouts, the attribute (NLA) iterator — both to build
//!   requests and to walk what the kernel sends back.
//! * `netlink-packet-route` (0.34): the rtnetlink message types (`ifinfomsg`,
//!   `ndmsg`, their attributes) used to encode every request and to decode the few
//!   attributes listed above. Its whole-message decoders are deliberately not used,
//!   for the reason given under *Robustness*.
//! * `libc`: `poll(2)` for the receive timeouts, and kernel constants (`NUD_*`,
//!   `NTF_*`, `RTM_*`, errno values).

pub mod address;
mod decode;
pub mod fpm;
mod link_monitor;
mod monitor;
pub mod nexthop;
mod peer;
pub mod route;
mod route_monitor;
mod socket;

use std::fmt;
use std::io;
use std::net::IpAddr;
use std::time::Duration;

pub use address::KernelAddr;
pub use fpm::FpmStream;
pub use link_monitor::{LinkEvent, LinkMonitor};
pub use monitor::NeighMonitor;
pub use nexthop::KernelNexthop;
pub use peer::LinkPeer;
pub use route::{Encap, KernelNextHop, KernelRoute, RouteKind, Seg6Encap, Seg6Local};
pub use route_monitor::{RouteEvent, RouteMonitor};
pub use socket::Rtnl;

/// How long a request waits for the kernel's answer (between two datagrams of a dump).
pub const ANSWER_TIMEOUT: Duration = Duration::from_secs(5);

/// `ARPHRD_ETHER`, the [`LinkInfo::link_type`] of Ethernet devices (veth included).
pub const ARPHRD_ETHER: u16 = 1;

/// Neighbour states (`NUD_*` of `<linux/neighbour.h>`): [`Neighbour::state`] is one.
pub mod nud {
    pub const INCOMPLETE: u16 = 0x01;
    pub const REACHABLE: u16 = 0x02;
    pub const STALE: u16 = 0x04;
    pub const DELAY: u16 = 0x08;
    pub const PROBE: u16 = 0x10;
    pub const FAILED: u16 = 0x20;
    pub const NOARP: u16 = 0x40;
    pub const PERMANENT: u16 = 0x80;
    pub const NONE: u16 = 0x00;
    /// The states in which the entry's link-layer address may be used to send.
    pub const USABLE: u16 = REACHABLE | STALE | DELAY | PROBE | PERMANENT | NOARP;
}

/// A network device, as `ip link show` reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkInfo {
    pub ifindex: u32,
    pub name: String,
    /// The hardware address; all zeros when the device has no 6-byte address (a tun
    /// or IP tunnel device, say: see [`LinkInfo::link_type`]).
    pub mac: [u8; 6],
    /// Administratively up (`IFF_UP`).
    pub up: bool,
    /// The lower layer is up (`IFF_LOWER_UP`: carrier, or the veth peer is up).
    pub carrier: bool,
    pub mtu: u32,
    /// `ARPHRD_*` ([`ARPHRD_ETHER`] for Ethernet).
    pub link_type: u16,
}

impl LinkInfo {
    /// An Ethernet device with a 6-byte hardware address.
    pub fn is_ethernet(&self) -> bool {
        self.link_type == ARPHRD_ETHER
    }
}

/// One entry of the kernel's IPv4 (ARP) or IPv6 (NDP) neighbour table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Neighbour {
    pub ifindex: u32,
    pub addr: IpAddr,
    /// The link-layer address, when the entry has one of 6 bytes (none while
    /// `INCOMPLETE` or `FAILED`, nor on devices without Ethernet addresses).
    pub mac: Option<[u8; 6]>,
    /// One of the [`nud`] states.
    pub state: u16,
    /// `NTF_*` flags (`NTF_ROUTER` = 0x80: the neighbour is an IPv6 router).
    pub flags: u8,
}

impl Neighbour {
    /// Whether packets can be sent to this neighbour with [`Neighbour::mac`]: it has a
    /// MAC and its state is one of [`nud::USABLE`].
    pub fn usable(&self) -> bool {
        self.mac.is_some() && self.state & nud::USABLE != 0
    }
}

/// A change in the kernel's neighbour tables.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NeighEvent {
    /// An entry was created or changed (including to `INCOMPLETE` or `FAILED`).
    New(Neighbour),
    /// An entry was removed.
    Del(Neighbour),
    /// The kernel dropped events because the monitor was not read fast enough (or an
    /// event could not be read): the caller's view may be stale, so it must dump
    /// [`neighbours`] again. The monitor stays subscribed.
    Overrun,
}

/// An error the kernel answered a request with (an `NLMSG_ERROR` with a negative
/// errno), carried inside the [`io::Error`] that the request returns: get it with
/// `err.get_ref().and_then(|e| e.downcast_ref::<KernelError>())`. The `io::Error`'s
/// kind is the errno's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelError {
    /// What was being done, e.g. `resolving 2001:db8::1 on ifindex 3`.
    pub context: String,
    /// The positive errno (`libc::ENODEV`, ...).
    pub errno: i32,
    /// The kernel's extended-ACK message, when it gave one.
    pub message: Option<String>,
}

impl fmt::Display for KernelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let os = io::Error::from_raw_os_error(self.errno);
        write!(f, "{}: {os}", self.context)?;
        if let Some(m) = &self.message {
            write!(f, " (kernel: {m})")?;
        }
        Ok(())
    }
}

impl std::error::Error for KernelError {}

impl KernelError {
    pub(crate) fn into_io(self) -> io::Error {
        let kind = io::Error::from_raw_os_error(self.errno).kind();
        io::Error::new(kind, self)
    }
}

/// The device called `name` (`ip link show dev NAME`). An unknown name is an error of
/// kind [`io::ErrorKind::NotFound`] saying `no such device NAME`.
pub fn link_by_name(name: &str) -> io::Result<LinkInfo> {
    Rtnl::open()?.link_by_name(name)
}

/// Every device of the namespace with its kind and, for a veth, where its peer is
/// (`ip -d link show`).
pub fn link_peers() -> io::Result<Vec<LinkPeer>> {
    Rtnl::open()?.link_peers()
}

/// Every device of the namespace (`ip link show`).
pub fn links() -> io::Result<Vec<LinkInfo>> {
    Rtnl::open()?.links()
}

/// Every IPv4 and IPv6 neighbour entry, whatever its state (`ip neigh show nud all`).
/// Proxy entries are not neighbours and are not included.
pub fn neighbours() -> io::Result<Vec<Neighbour>> {
    Rtnl::open()?.neighbours()
}

/// Every IPv4 and IPv6 route of every table (`ip route show table all` and `ip -6 route
/// show table all`): a route the decoder could not read is an `Err` saying why, in its
/// place.
pub fn routes() -> io::Result<Vec<Result<KernelRoute, String>>> {
    Rtnl::open()?.routes()
}

/// Every IPv4 and IPv6 address of every device (`ip addr show`). An address the
/// decoder could not read is an `Err` saying why.
pub fn addresses() -> io::Result<Vec<Result<KernelAddr, String>>> {
    Rtnl::open()?.addresses()
}

/// Every nexthop object (`ip nexthop show`); empty on a kernel without them (before
/// 5.3). A nexthop the decoder could not read is an `Err` saying why.
pub fn nexthops() -> io::Result<Vec<Result<KernelNexthop, String>>> {
    Rtnl::open()?.nexthops()
}

/// The kernel's entry for `addr` on device `ifindex` (`ip neigh get ADDR dev DEV`), or
/// `None` if it has none. Needs Linux 5.0.
pub fn neighbour(ifindex: u32, addr: IpAddr) -> io::Result<Option<Neighbour>> {
    Rtnl::open()?.neighbour(ifindex, addr)
}

/// Asks the kernel to resolve `addr` on device `ifindex` now (ARP for IPv4, NDP for
/// IPv6), as `ip neigh replace ADDR dev DEV nud none use` does; the answer, if the
/// neighbour replies, arrives as a [`NeighEvent::New`]. A missing entry is created as
/// one the kernel makes for a packet, a `STALE` or `FAILED` one is probed again, and a
/// `REACHABLE` or `NOARP` one stays as it is. A static (`PERMANENT`) entry is left
/// alone: this checks for one first (`RTM_GETNEIGH`), because since Linux 5.16
/// `NTF_USE` turns a static entry into an ordinary one that has lost its address — the
/// check and the request are two messages, so an entry made static between them is not
/// protected. Returns once the kernel has acknowledged the request, not when resolution
/// is done. The kernel announces no `INCOMPLETE` state for such a request: the next
/// event is the answer (`REACHABLE`) or, with no answer, `FAILED` (after about 3 s with
/// the default probe settings).
pub fn request_resolution(ifindex: u32, addr: IpAddr) -> io::Result<()> {
    Rtnl::open()?.request_resolution(ifindex, addr)
}
