//! The veth peer of a device and its transmit checksum offload, wherever the peer is:
//! in this network namespace, or in one of the named ones (`/run/netns/*`, `ip netns
//! add`), found as the device whose `IFLA_LINK` points back at ours. `sr6 run` warns with
//! it: a veth peer with tx checksum offload on sends UDP and TCP with a partial checksum
//! (CHECKSUM_PARTIAL) that only the kernel's metadata completes, so the bytes sr6
//! forwards carry a wrong checksum and the far host drops them.

use std::io;
use std::os::fd::AsRawFd;

use crate::ethtool::tx_checksum_offload;
use crate::netlink::{self, LinkPeer};

/// A veth peer and whether its transmit checksum offload is on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VethPeer {
    pub name: String,
    /// The named namespace it is in; `None`: this one.
    pub netns: Option<String>,
    pub tx_csum: bool,
}

/// What is known of `dev`'s peer: `Ok(None)` when `dev` is not a veth; an error when it
/// is but its peer cannot be found (a namespace without a name, say).
pub fn peer(dev: &str) -> io::Result<Option<VethPeer>> {
    let links = netlink::link_peers()?;
    let Some(me) = links.iter().find(|l| l.name == dev) else {
        return Err(io::Error::new(io::ErrorKind::NotFound, format!("no such device {dev}")));
    };
    if !me.is_veth() {
        return Ok(None);
    }
    let Some(peer_ifindex) = me.peer_ifindex else {
        return Err(io::Error::other(format!("{dev}: the kernel does not say where its veth peer is")));
    };
    if me.peer_netnsid.is_none() {
        let p = links
            .iter()
            .find(|l| l.ifindex == peer_ifindex)
            .ok_or_else(|| io::Error::other(format!("{dev}: its veth peer {peer_ifindex} is not listed")))?;
        return Ok(Some(VethPeer { name: p.name.clone(), netns: None, tx_csum: tx_checksum_offload(&p.name)? }));
    }
    // In another namespace: the named one to which this one gives the peer's netnsid.
    let want = me.peer_netnsid;
    let mut rtnl = netlink::Rtnl::open()?;
    let names = std::fs::read_dir("/run/netns").map(|d| d.flatten().collect::<Vec<_>>()).unwrap_or_default();
    for e in names {
        let Ok(f) = std::fs::File::open(e.path()) else { continue };
        if rtnl.nsid_of(f.as_raw_fd()).ok().flatten() != want {
            continue;
        }
        let ns = e.file_name().to_string_lossy().to_string();
        let found = std::thread::spawn(move || -> io::Result<Option<(String, bool)>> {
            // SAFETY: setns(2) on a namespace file we hold open; it moves this thread
            // only, which ends right after.
            if unsafe { libc::setns(f.as_raw_fd(), libc::CLONE_NEWNET) } != 0 {
                return Err(io::Error::last_os_error());
            }
            let links = netlink::link_peers()?;
            match links.iter().find(|l: &&LinkPeer| l.ifindex == peer_ifindex) {
                Some(l) => Ok(Some((l.name.clone(), tx_checksum_offload(&l.name)?))),
                None => Ok(None),
            }
        })
        .join()
        .map_err(|_| io::Error::other("a namespace lookup thread panicked"))??;
        if let Some((name, tx_csum)) = found {
            return Ok(Some(VethPeer { name, netns: Some(ns), tx_csum }));
        }
    }
    Err(io::Error::other(format!(
        "{dev}: its veth peer (ifindex {peer_ifindex}) is in a namespace with no name in /run/netns"
    )))
}

/// A warning for `dev` when its veth peer has transmit checksum offload on, or may
/// have it (a peer sr6 cannot see); `None` when all is well or `dev` is no veth.
pub fn checksum_warning(dev: &str) -> Option<String> {
    let cmd = |p: &VethPeer| match &p.netns {
        Some(ns) => format!("ip netns exec {ns} ethtool -K {} tx off", p.name),
        None => format!("ethtool -K {} tx off", p.name),
    };
    match peer(dev) {
        Ok(Some(p)) if p.tx_csum => Some(format!(
            "{dev}: its veth peer {}{} has transmit checksum offload on: UDP and TCP it sends arrive with \
             partial checksums, which sr6 forwards as they are and the far host drops; turn it off: {}",
            p.name,
            p.netns.as_ref().map_or(String::new(), |n| format!(" (namespace {n})")),
            cmd(&p)
        )),
        Ok(_) => None,
        Err(e) => Some(format!(
            "{e}: if the peer has transmit checksum offload on (a veth's default), UDP and TCP it sends \
             arrive with partial checksums that sr6 forwards as they are; turn it off there (ethtool -K PEER tx off)"
        )),
    }
}
