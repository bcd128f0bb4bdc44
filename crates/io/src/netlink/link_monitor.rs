//! Link events: a socket subscribed to `RTNLGRP_LINK` (`ip monitor link`), so that a
//! live router can follow its devices — created, deleted, renamed, brought up or down,
//! given a new MAC or MTU.
//!
//! The kernel sends an `RTM_NEWLINK` with the whole device (name, index, flags, MAC,
//! MTU) for a new device and for every change of one, and an `RTM_DELLINK` when it goes
//! away; a rename is an `RTM_NEWLINK` of the same index under its new name. Both decode
//! to a [`LinkInfo`] ([`super::decode::link`], which reads only the header, the name, the
//! MAC and the MTU). As with neighbours, open the monitor first, then dump
//! ([`super::links`]), then apply events; on [`LinkEvent::Overrun`], dump again.

use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::time::Duration;

use netlink_sys::Socket;

use super::decode::{link, Frame};
use super::monitor::{recv_events, subscribe};
use super::socket::RECV_BUF;
use super::LinkInfo;

/// `RTNLGRP_LINK` of `<linux/rtnetlink.h>`.
const RTNLGRP_LINK: u32 = 1;

/// A change of the kernel's devices.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LinkEvent {
    /// A device appeared or changed (state, name, MAC, MTU...): its whole new state.
    New(LinkInfo),
    /// A device was deleted (its last state).
    Del(LinkInfo),
    /// Events were lost: dump [`super::links`] again. The monitor stays subscribed.
    Overrun,
}

/// One link event from one netlink message (`None` for other messages and for a link
/// message that cannot be decoded).
pub(crate) fn link_event(f: Frame<'_>) -> Option<LinkEvent> {
    match f.ty {
        libc::RTM_NEWLINK => link(f.payload).map(LinkEvent::New),
        libc::RTM_DELLINK => link(f.payload).map(LinkEvent::Del),
        _ => None,
    }
}

/// Link events of the network namespace it was opened in. Non-blocking, as
/// [`super::NeighMonitor`].
#[derive(Debug)]
pub struct LinkMonitor {
    sock: Socket,
    buf: Vec<u8>,
}

impl LinkMonitor {
    /// Subscribes to the link events of the calling thread's network namespace.
    pub fn open() -> io::Result<LinkMonitor> {
        let sock = subscribe(&[RTNLGRP_LINK], "subscribing to link events")?;
        Ok(LinkMonitor { sock, buf: vec![0; RECV_BUF] })
    }

    /// The events that arrive within `timeout` (empty if none), with every event
    /// already queued, in the kernel's order; [`LinkEvent::Overrun`], if any, last.
    pub fn recv(&mut self, timeout: Duration) -> io::Result<Vec<LinkEvent>> {
        recv_events(&self.sock, &mut self.buf, timeout, LinkEvent::Overrun, "link events", link_event)
    }

    /// The socket's descriptor: readable when events wait.
    pub fn fd(&self) -> RawFd {
        self.sock.as_raw_fd()
    }
}

#[cfg(test)]
mod tests {
    //! Fixtures: real messages of a 6.x kernel, captured with a socket subscribed to
    //! `RTNLGRP_LINK` in a scratch namespace while running `ip link add sr6t0 type veth
    //! peer name sr6t1`, `ip link set sr6t0 address 02:00:00:00:00:aa`, `... mtu 1400`,
    //! `... up`, `... name sr6t9` and `ip link del sr6t9`.
    use super::*;
    use crate::netlink::decode::frames;

    fn event(bytes: &[u8]) -> LinkEvent {
        let f = frames(bytes).next().expect("one message").expect("framed");
        link_event(f).expect("a link event")
    }

    fn info(e: LinkEvent) -> LinkInfo {
        match e {
            LinkEvent::New(l) | LinkEvent::Del(l) => l,
            LinkEvent::Overrun => panic!("not a link"),
        }
    }

    #[test]
    fn a_created_veth() {
        let e = event(include_bytes!("fixtures/newlink_veth_created.bin"));
        assert!(matches!(e, LinkEvent::New(_)));
        let l = info(e);
        assert_eq!((l.ifindex, l.name.as_str(), l.mtu, l.up, l.carrier), (3, "sr6t0", 1500, false, false));
        assert_eq!(l.mac, [0x46, 0x84, 0x3e, 0xa5, 0x96, 0xf3]);
        assert!(l.is_ethernet());
    }

    #[test]
    fn mac_mtu_and_up_changes() {
        let l = info(event(include_bytes!("fixtures/newlink_mac_changed.bin")));
        assert_eq!((l.ifindex, l.mac, l.mtu), (3, [2, 0, 0, 0, 0, 0xaa], 1500));
        let l = info(event(include_bytes!("fixtures/newlink_mtu_changed.bin")));
        assert_eq!((l.ifindex, l.mac, l.mtu, l.up), (3, [2, 0, 0, 0, 0, 0xaa], 1400, false));
        let l = info(event(include_bytes!("fixtures/newlink_set_up.bin")));
        assert_eq!((l.ifindex, l.name.as_str(), l.up), (3, "sr6t0", true));
    }

    #[test]
    fn a_rename_keeps_the_index() {
        let e = event(include_bytes!("fixtures/newlink_renamed.bin"));
        assert!(matches!(e, LinkEvent::New(_)));
        let l = info(e);
        assert_eq!((l.ifindex, l.name.as_str(), l.mtu), (3, "sr6t9", 1400));
    }

    #[test]
    fn a_deleted_device() {
        let e = event(include_bytes!("fixtures/dellink_deleted.bin"));
        assert!(matches!(e, LinkEvent::Del(_)));
        let l = info(e);
        assert_eq!((l.ifindex, l.name.as_str()), (3, "sr6t9"));
    }

    #[test]
    fn cut_or_mangled_messages_never_panic() {
        for bytes in [
            &include_bytes!("fixtures/newlink_veth_created.bin")[..],
            &include_bytes!("fixtures/dellink_deleted.bin")[..],
        ] {
            for cut in 0..bytes.len() {
                for f in frames(&bytes[..cut]).flatten() {
                    let _ = link_event(f);
                }
            }
            let mut m = bytes.to_vec();
            for i in 16..m.len() {
                m[i] ^= 0xff;
                for f in frames(&m).flatten() {
                    let _ = link_event(f);
                }
                m[i] ^= 0xff;
            }
        }
    }

    /// Follows a real device through its life (root: creates a veth in the caller's
    /// namespace, under a name no test elsewhere uses, and deletes it).
    #[test]
    #[ignore = "root: creates and deletes a veth pair"]
    fn follows_a_real_device() {
        let ip = |args: &[&str]| std::process::Command::new("ip").args(args).status().map(|s| s.success());
        let mut mon = LinkMonitor::open().expect("monitor");
        assert_eq!(ip(&["link", "add", "sr6lm0", "type", "veth", "peer", "name", "sr6lm1"]).ok(), Some(true));
        let _ = ip(&["link", "set", "sr6lm0", "address", "02:00:00:00:00:ab"]);
        let _ = ip(&["link", "del", "sr6lm0"]);
        let mut seen = Vec::new();
        for _ in 0..20 {
            seen.extend(mon.recv(Duration::from_millis(100)).expect("recv"));
        }
        let mine = |e: &LinkEvent| matches!(e, LinkEvent::New(l) | LinkEvent::Del(l) if l.name == "sr6lm0");
        let mine: Vec<&LinkEvent> = seen.iter().filter(|e| mine(e)).collect();
        assert!(matches!(mine.first(), Some(LinkEvent::New(_))), "{mine:?}");
        assert!(mine.iter().any(|e| matches!(e, LinkEvent::New(l) if l.mac == [2, 0, 0, 0, 0, 0xab])), "{mine:?}");
        assert!(matches!(mine.last(), Some(LinkEvent::Del(_))), "{mine:?}");
    }
}
