//! The request side: one `NETLINK_ROUTE` socket, requests numbered by sequence, their
//! answers (a reply, an ACK, or a multi-part dump) matched by that number.

use std::fmt::Display;
use std::io;
use std::net::IpAddr;
use std::ops::ControlFlow;
use std::os::fd::{AsRawFd, RawFd};
use std::time::{Duration, Instant};

use netlink_packet_core::{
    NetlinkHeader, NetlinkMessage, NetlinkPayload, NLMSG_DONE, NLMSG_ERROR, NLM_F_ACK, NLM_F_CREATE, NLM_F_DUMP,
    NLM_F_DUMP_INTR, NLM_F_REPLACE, NLM_F_REQUEST,
};
use netlink_packet_route::link::{LinkAttribute, LinkExtentMask, LinkMessage};
use netlink_packet_route::neighbour::{NeighbourAttribute, NeighbourFlags, NeighbourMessage, NeighbourState};
use netlink_packet_route::{AddressFamily, RouteNetlinkMessage};
use netlink_sys::{protocols::NETLINK_ROUTE, Socket, SocketAddr};

use super::decode::{self, error_payload, frames, Frame};
use super::{nud, KernelError, LinkInfo, Neighbour, ANSWER_TIMEOUT};

/// Receive buffer: larger than any datagram the kernel builds for a dump (32 KiB).
pub(super) const RECV_BUF: usize = 64 * 1024;
/// A dump that the kernel marks inconsistent (`NLM_F_DUMP_INTR`: the table changed
/// while it was being dumped) is redone, at most this many times in all.
const DUMP_ATTEMPTS: usize = 5;
const RTM_NEWLINK: u16 = libc::RTM_NEWLINK;
const RTM_NEWNEIGH: u16 = libc::RTM_NEWNEIGH;
const RTM_NEWROUTE: u16 = libc::RTM_NEWROUTE;
/// `RTM_NEWNEXTHOP` and `RTM_GETNEXTHOP` of `<linux/rtnetlink.h>` (Linux 5.3).
pub(super) const RTM_NEWNEXTHOP: u16 = 104;
pub(super) const RTM_DELNEXTHOP: u16 = 105;
const RTM_GETNEXTHOP: u16 = 106;

/// A `NETLINK_ROUTE` socket for requests: keep one to avoid opening a socket per call.
/// Its requests act on the network namespace it was opened in.
#[derive(Debug)]
pub struct Rtnl {
    sock: Socket,
    seq: u32,
    buf: Vec<u8>,
}

/// `e` with `what` in front of its message, keeping its kind.
pub(super) fn context(e: io::Error, what: impl Display) -> io::Error {
    io::Error::new(e.kind(), format!("{what}: {e}"))
}

/// A bound `NETLINK_ROUTE` socket, with extended ACKs when the kernel has them.
pub(super) fn open_socket() -> io::Result<Socket> {
    let what = "opening a NETLINK_ROUTE socket";
    let mut sock = Socket::new(NETLINK_ROUTE).map_err(|e| context(e, what))?;
    sock.bind_auto().map_err(|e| context(e, what))?;
    // Best effort (kernels before 4.12 lack them): errors then carry the kernel's text,
    // and do not echo the whole request.
    let _ = sock.set_ext_ack(true);
    let _ = sock.set_cap_ack(true);
    Ok(sock)
}

/// Asks for a receive buffer of `bytes` on `sock`: past `net.core.rmem_max` too where
/// sr6 may (`SO_RCVBUFFORCE`, with `CAP_NET_ADMIN`), else as far as that cap allows.
/// Best effort: a smaller buffer only means an earlier overrun.
pub(super) fn grow_rcvbuf(sock: &Socket, bytes: usize) {
    let v = libc::c_int::try_from(bytes).unwrap_or(libc::c_int::MAX);
    let set = |opt: libc::c_int| {
        // SAFETY: the option value is a valid c_int for the whole call, and its size is
        // passed; the descriptor is the socket's own.
        unsafe {
            libc::setsockopt(
                sock.as_raw_fd(),
                libc::SOL_SOCKET,
                opt,
                (&v as *const libc::c_int).cast(),
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            )
        }
    };
    if set(libc::SO_RCVBUFFORCE) != 0 {
        set(libc::SO_RCVBUF);
    }
}

/// Waits until `fd` is readable (`Ok(true)`) or `timeout` has passed (`Ok(false)`);
/// `None` waits for ever.
pub(super) fn wait_readable(fd: RawFd, timeout: Option<Duration>) -> io::Result<bool> {
    let deadline = timeout.and_then(|t| Instant::now().checked_add(t));
    loop {
        let ms = match deadline {
            None => -1,
            Some(d) => {
                let left = d.saturating_duration_since(Instant::now());
                // Rounded up, so that a wake-up means the time has passed.
                let ms = left.as_nanos().div_ceil(1_000_000);
                ms.min(i32::MAX as u128) as libc::c_int
            }
        };
        let mut pfd = libc::pollfd { fd, events: libc::POLLIN, revents: 0 };
        // SAFETY: `pfd` is a valid, exclusively borrowed pollfd for the whole call, and
        // the count passed is 1.
        let r = unsafe { libc::poll(&mut pfd, 1, ms) };
        match r {
            0 => return Ok(false),
            1.. => return Ok(true),
            _ => {
                let e = io::Error::last_os_error();
                if e.kind() != io::ErrorKind::Interrupted {
                    return Err(e);
                }
            }
        }
    }
}

/// Receives one datagram into `buf`; a datagram larger than `buf` is an error (its
/// tail is lost).
pub(super) fn recv_datagram(sock: &Socket, buf: &mut [u8]) -> io::Result<usize> {
    let n = sock.recv(&mut &mut buf[..], libc::MSG_TRUNC)?;
    if n > buf.len() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("a {n}-byte netlink datagram did not fit the {}-byte buffer", buf.len()),
        ));
    }
    Ok(n)
}

/// The request bytes: `msg` with a header carrying `flags` and `seq`.
fn encode(msg: RouteNetlinkMessage, flags: u16, seq: u32) -> Vec<u8> {
    let mut header = NetlinkHeader::default();
    header.flags = flags;
    header.sequence_number = seq;
    let mut m = NetlinkMessage::new(header, NetlinkPayload::from(msg));
    m.finalize();
    let mut bytes = vec![0; m.buffer_len()];
    m.serialize(&mut bytes);
    bytes
}

/// An `ndmsg` for `addr` on `ifindex` with state `NONE` and `flags`, and `NDA_DST`. In
/// an `RTM_NEWNEIGH` with `NTF_USE` the kernel starts resolution (or re-probes) and
/// ignores the state, except to decide whether a new entry is exempt from its forced
/// garbage collection: `NONE`, not `ip`'s default `PERMANENT`, keeps it an ordinary
/// entry.
fn neighbour_message(ifindex: u32, addr: IpAddr, flags: NeighbourFlags) -> NeighbourMessage {
    let mut m = NeighbourMessage::default();
    m.header.family = match addr {
        IpAddr::V4(_) => AddressFamily::Inet,
        IpAddr::V6(_) => AddressFamily::Inet6,
    };
    m.header.ifindex = ifindex;
    m.header.state = NeighbourState::None;
    m.header.flags = flags;
    m.attributes = vec![NeighbourAttribute::Destination(addr.into())];
    m
}

/// The error an `NLMSG_ERROR`/`NLMSG_DONE` message carries, if any.
fn kernel_error(f: &Frame, what: &str) -> io::Result<()> {
    match error_payload(f.flags, f.payload) {
        Some((0, _)) => Ok(()),
        Some((errno, message)) => Err(KernelError { context: what.to_string(), errno, message }.into_io()),
        None => Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{what}: a truncated error message from the kernel"),
        )),
    }
}

impl Rtnl {
    /// Opens a socket in the calling thread's network namespace.
    pub fn open() -> io::Result<Rtnl> {
        Ok(Rtnl { sock: open_socket()?, seq: 0, buf: vec![0; RECV_BUF] })
    }

    /// The socket's descriptor.
    pub fn fd(&self) -> RawFd {
        self.sock.as_raw_fd()
    }

    /// See [`super::link_by_name`].
    pub fn link_by_name(&mut self, name: &str) -> io::Result<LinkInfo> {
        let no_such = || io::Error::new(io::ErrorKind::NotFound, format!("no such device {name}"));
        // IFNAMSIZ is 16 with the NUL; the kernel would answer EINVAL, not ENODEV.
        if name.is_empty() || name.len() > 15 || name.contains(['\0', '/']) {
            return Err(no_such());
        }
        let mut m = LinkMessage::default();
        m.attributes =
            vec![LinkAttribute::IfName(name.to_string()), LinkAttribute::ExtMask(vec![LinkExtentMask::SkipStats])];
        let what = format!("looking up device {name}");
        let seq = self.send(RouteNetlinkMessage::GetLink(m), NLM_F_REQUEST, &what)?;
        let mut found = None;
        self.answers(seq, &what, |f| match f.ty {
            RTM_NEWLINK => {
                found = decode::link(f.payload);
                Ok(ControlFlow::Break(()))
            }
            NLMSG_ERROR => match kernel_error(&f, &what) {
                Err(e) if errno_of(&e) == Some(libc::ENODEV) => Err(no_such()),
                Err(e) => Err(e),
                Ok(()) => Ok(ControlFlow::Break(())),
            },
            _ => Ok(ControlFlow::Continue(())),
        })?;
        found.ok_or_else(|| {
            io::Error::new(io::ErrorKind::InvalidData, format!("{what}: the kernel's answer holds no usable link"))
        })
    }

    /// See [`super::links`].
    pub fn links(&mut self) -> io::Result<Vec<LinkInfo>> {
        let mut m = LinkMessage::default();
        m.attributes = vec![LinkAttribute::ExtMask(vec![LinkExtentMask::SkipStats])];
        self.dump(RouteNetlinkMessage::GetLink(m), "listing devices", RTM_NEWLINK, decode::link)
    }

    /// See [`super::link_peers`].
    pub fn link_peers(&mut self) -> io::Result<Vec<super::LinkPeer>> {
        let mut m = LinkMessage::default();
        m.attributes = vec![LinkAttribute::ExtMask(vec![LinkExtentMask::SkipStats])];
        self.dump(RouteNetlinkMessage::GetLink(m), "listing devices", RTM_NEWLINK, super::peer::decode)
    }

    /// The id this namespace gives the network namespace of `fd` (`ip netns list-id`),
    /// `None` when it has none.
    pub fn nsid_of(&mut self, fd: RawFd) -> io::Result<Option<i32>> {
        use netlink_packet_route::nsid::{NsidAttribute, NsidMessage};
        let mut m = NsidMessage::default();
        m.attributes = vec![NsidAttribute::Fd(fd as u32)];
        let what = "looking up a namespace id";
        let seq = self.send(RouteNetlinkMessage::GetNsId(m), NLM_F_REQUEST, what)?;
        let mut id = None;
        self.answers(seq, what, |f| match f.ty {
            super::peer::RTM_NEWNSID => {
                id = super::peer::nsid(f.payload);
                Ok(ControlFlow::Break(()))
            }
            NLMSG_ERROR => kernel_error(&f, what).map(|()| ControlFlow::Break(())),
            _ => Ok(ControlFlow::Continue(())),
        })?;
        Ok(id.filter(|i| *i >= 0))
    }

    /// See [`super::neighbours`].
    pub fn neighbours(&mut self) -> io::Result<Vec<Neighbour>> {
        let m = RouteNetlinkMessage::GetNeighbour(NeighbourMessage::default());
        self.dump(m, "listing neighbours", RTM_NEWNEIGH, decode::neighbour)
    }

    /// See [`super::routes`].
    pub fn routes(&mut self) -> io::Result<Vec<Result<super::KernelRoute, String>>> {
        use netlink_packet_route::route::RouteMessage;
        // Family unspecified: every IPv4 and IPv6 route of every table.
        let m = RouteNetlinkMessage::GetRoute(RouteMessage::default());
        self.dump(m, "listing routes", RTM_NEWROUTE, |p| Some(super::route::decode(p)))
    }

    /// See [`super::addresses`].
    pub fn addresses(&mut self) -> io::Result<Vec<Result<super::KernelAddr, String>>> {
        let what = "listing addresses";
        // An `ifaddrmsg` of family unspecified: every IPv4 and IPv6 address.
        let req = |r: &mut Self| r.send_raw(libc::RTM_GETADDR, &[0; 8], NLM_F_REQUEST | NLM_F_DUMP, what);
        self.dump_with(req, what, libc::RTM_NEWADDR, |p| Some(super::address::decode(p)))
    }

    /// See [`super::nexthops`].
    pub fn nexthops(&mut self) -> io::Result<Vec<Result<super::KernelNexthop, String>>> {
        let what = "listing nexthop objects";
        // An `nhmsg` of family unspecified: every nexthop object.
        let req = |r: &mut Self| r.send_raw(RTM_GETNEXTHOP, &[0; 8], NLM_F_REQUEST | NLM_F_DUMP, what);
        match self.dump_with(req, what, RTM_NEWNEXTHOP, |p| Some(super::nexthop::decode(p))) {
            // A kernel before 5.3 has no nexthop objects.
            Err(e) if errno_of(&e) == Some(libc::EOPNOTSUPP) || errno_of(&e) == Some(libc::EINVAL) => Ok(Vec::new()),
            r => r,
        }
    }

    /// See [`super::neighbour`].
    pub fn neighbour(&mut self, ifindex: u32, addr: IpAddr) -> io::Result<Option<Neighbour>> {
        let what = format!("looking up neighbour {addr} on ifindex {ifindex}");
        self.get_neighbour(ifindex, addr, &what)
    }

    /// See [`super::request_resolution`].
    pub fn request_resolution(&mut self, ifindex: u32, addr: IpAddr) -> io::Result<()> {
        let what = format!("asking the kernel to resolve {addr} on ifindex {ifindex}");
        // Since Linux 5.16 NTF_USE strips NUD_PERMANENT from an existing entry, which
        // then loses its address and is probed like any other: leave static entries be.
        match self.get_neighbour(ifindex, addr, &what) {
            Ok(Some(n)) if n.state & nud::PERMANENT != 0 => return Ok(()),
            Ok(_) => {}
            // Before 5.0 there is no RTM_GETNEIGH for one entry (nor the quirk above).
            Err(e) if errno_of(&e) == Some(libc::EOPNOTSUPP) => {}
            Err(e) => return Err(e),
        }
        let flags = NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_REPLACE;
        let m = neighbour_message(ifindex, addr, NeighbourFlags::Use);
        let seq = self.send(RouteNetlinkMessage::NewNeighbour(m), flags, &what)?;
        self.answers(seq, &what, |f| match f.ty {
            NLMSG_ERROR => kernel_error(&f, &what).map(ControlFlow::Break),
            _ => Ok(ControlFlow::Continue(())),
        })
    }

    /// `RTM_GETNEIGH` for one entry: `None` if the kernel has none (ENOENT).
    fn get_neighbour(&mut self, ifindex: u32, addr: IpAddr, what: &str) -> io::Result<Option<Neighbour>> {
        let m = neighbour_message(ifindex, addr, NeighbourFlags::empty());
        let seq = self.send(RouteNetlinkMessage::GetNeighbour(m), NLM_F_REQUEST, what)?;
        let mut found = None;
        self.answers(seq, what, |f| match f.ty {
            RTM_NEWNEIGH => {
                found = decode::neighbour(f.payload);
                Ok(ControlFlow::Break(()))
            }
            NLMSG_ERROR => match kernel_error(&f, what) {
                Err(e) if errno_of(&e) == Some(libc::ENOENT) => Ok(ControlFlow::Break(())),
                r => r.map(ControlFlow::Break),
            },
            _ => Ok(ControlFlow::Continue(())),
        })?;
        Ok(found)
    }

    /// Sends `msg` with `flags` and a new sequence number, which it returns.
    fn send(&mut self, msg: RouteNetlinkMessage, flags: u16, what: &str) -> io::Result<u32> {
        self.seq = self.seq.wrapping_add(1).max(1);
        let bytes = encode(msg, flags, self.seq);
        self.sock.send_to(&bytes, &SocketAddr::new(0, 0), 0).map_err(|e| context(e, what))?;
        Ok(self.seq)
    }

    /// [`send`](Self::send) of a message the parsing library has no type for: type `ty`
    /// with `payload` after the header.
    fn send_raw(&mut self, ty: u16, payload: &[u8], flags: u16, what: &str) -> io::Result<u32> {
        self.seq = self.seq.wrapping_add(1).max(1);
        let len = (16 + payload.len()) as u32;
        let mut bytes = Vec::with_capacity(len as usize);
        bytes.extend_from_slice(&len.to_ne_bytes());
        bytes.extend_from_slice(&ty.to_ne_bytes());
        bytes.extend_from_slice(&flags.to_ne_bytes());
        bytes.extend_from_slice(&self.seq.to_ne_bytes());
        bytes.extend_from_slice(&0u32.to_ne_bytes());
        bytes.extend_from_slice(payload);
        self.sock.send_to(&bytes, &SocketAddr::new(0, 0), 0).map_err(|e| context(e, what))?;
        Ok(self.seq)
    }

    /// Hands each message answering request `seq` to `each` until it breaks or fails.
    /// Messages of other requests (left over from one that failed) are skipped.
    fn answers(
        &mut self,
        seq: u32,
        what: &str,
        mut each: impl FnMut(Frame) -> io::Result<ControlFlow<()>>,
    ) -> io::Result<()> {
        loop {
            if !wait_readable(self.sock.as_raw_fd(), Some(ANSWER_TIMEOUT)).map_err(|e| context(e, what))? {
                return Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!("{what}: no answer from the kernel within {ANSWER_TIMEOUT:?}"),
                ));
            }
            let n = match recv_datagram(&self.sock, &mut self.buf) {
                Ok(n) => n,
                Err(e) if matches!(e.kind(), io::ErrorKind::Interrupted | io::ErrorKind::WouldBlock) => continue,
                Err(e) => return Err(context(e, what)),
            };
            for f in frames(&self.buf[..n]) {
                let f = f.map_err(|m| io::Error::new(io::ErrorKind::InvalidData, format!("{what}: {m}")))?;
                if f.seq == seq && each(f)?.is_break() {
                    return Ok(());
                }
            }
        }
    }

    /// Dumps with `msg`, decoding each message of type `ty` with `decode`; redoes an
    /// interrupted dump.
    fn dump<T>(
        &mut self,
        msg: RouteNetlinkMessage,
        what: &str,
        ty: u16,
        decode: impl Fn(&[u8]) -> Option<T>,
    ) -> io::Result<Vec<T>> {
        self.dump_with(|r| r.send(msg.clone(), NLM_F_REQUEST | NLM_F_DUMP, what), what, ty, decode)
    }

    /// [`dump`](Self::dump) with the request `request` sends (returning its sequence
    /// number).
    fn dump_with<T>(
        &mut self,
        request: impl Fn(&mut Self) -> io::Result<u32>,
        what: &str,
        ty: u16,
        decode: impl Fn(&[u8]) -> Option<T>,
    ) -> io::Result<Vec<T>> {
        for _ in 0..DUMP_ATTEMPTS {
            let seq = request(self)?;
            let mut out = Vec::new();
            let mut interrupted = false;
            self.answers(seq, what, |f| {
                interrupted |= f.flags & NLM_F_DUMP_INTR != 0;
                match f.ty {
                    NLMSG_DONE | NLMSG_ERROR => kernel_error(&f, what).map(ControlFlow::Break),
                    t if t == ty => {
                        out.extend(decode(f.payload));
                        Ok(ControlFlow::Continue(()))
                    }
                    _ => Ok(ControlFlow::Continue(())),
                }
            })?;
            if !interrupted {
                return Ok(out);
            }
        }
        Err(io::Error::other(format!("{what}: the table changed during each of {DUMP_ATTEMPTS} dumps")))
    }
}

/// The errno of a [`KernelError`] inside `e`.
fn errno_of(e: &io::Error) -> Option<i32> {
    e.get_ref()?.downcast_ref::<KernelError>().map(|k| k.errno)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn use_request(ifindex: u32, addr: IpAddr) -> RouteNetlinkMessage {
        RouteNetlinkMessage::NewNeighbour(neighbour_message(ifindex, addr, NeighbourFlags::Use))
    }

    #[test]
    fn resolution_request_bytes() {
        // What `ip neigh replace 2001:db8::2 dev IF nud none use` sends (<linux/neighbour.h>).
        let addr: IpAddr = "2001:db8::2".parse().unwrap();
        let flags = NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_REPLACE;
        let got = encode(use_request(0x0102_0304, addr), flags, 9);
        let mut want = Vec::new();
        want.extend_from_slice(&48u32.to_ne_bytes()); // nlmsg_len
        want.extend_from_slice(&28u16.to_ne_bytes()); // RTM_NEWNEIGH
        want.extend_from_slice(&0x505u16.to_ne_bytes()); // REQUEST|ACK|REPLACE|CREATE
        want.extend_from_slice(&9u32.to_ne_bytes()); // seq
        want.extend_from_slice(&0u32.to_ne_bytes()); // pid
        want.extend_from_slice(&[10, 0, 0, 0]); // AF_INET6, padding
        want.extend_from_slice(&0x0102_0304u32.to_ne_bytes()); // ifindex
        want.extend_from_slice(&0u16.to_ne_bytes()); // NUD_NONE
        want.extend_from_slice(&[1, 0]); // NTF_USE, type
        want.extend_from_slice(&20u16.to_ne_bytes()); // nla_len
        want.extend_from_slice(&1u16.to_ne_bytes()); // NDA_DST
        if let IpAddr::V6(a) = addr {
            want.extend_from_slice(&a.octets());
        }
        assert_eq!(got, want);

        let v4 = encode(use_request(2, "192.0.2.1".parse().unwrap()), flags, 1);
        assert_eq!(v4.len(), 16 + 12 + 8);
        assert_eq!(v4[16], 2); // AF_INET
        assert_eq!(&v4[32..36], &[192, 0, 2, 1]);
    }

    #[test]
    fn kernel_error_keeps_errno_and_message() {
        let mut p = (-libc::ENODEV).to_ne_bytes().to_vec();
        p.extend_from_slice(&[0; 16]);
        let f = Frame { ty: NLMSG_ERROR, flags: 0, seq: 1, payload: &p };
        let e = kernel_error(&f, "doing X").unwrap_err();
        assert_eq!(errno_of(&e), Some(libc::ENODEV));
        assert!(e.to_string().starts_with("doing X: "), "{e}");
        let ok = 0i32.to_ne_bytes();
        assert!(kernel_error(&Frame { payload: &ok, ..f }, "x").is_ok());
    }

    #[test]
    fn wait_readable_times_out() {
        let sock = open_socket().unwrap();
        let t = Instant::now();
        assert!(!wait_readable(sock.as_raw_fd(), Some(Duration::from_millis(30))).unwrap());
        assert!(t.elapsed() >= Duration::from_millis(30));
        assert!(!wait_readable(sock.as_raw_fd(), Some(Duration::ZERO)).unwrap());
    }
}
