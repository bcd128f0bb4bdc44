//! The veth peer of a device and its transmit offloads, wherever the peer is: in this
//! network namespace, or in one of the named ones (`/run/netns/*`, `ip netns add`),
//! found as the device whose `IFLA_LINK` points back at ours. `sr6 run` warns with it:
//!
//! * a veth peer with tx checksum offload on sends UDP and TCP with a partial checksum
//!   (CHECKSUM_PARTIAL) that only the kernel's metadata completes. AF_XDP receives the
//!   bytes alone: sr6 forwards a wrong checksum and the far host drops the packet. The
//!   AF_PACKET backend reads the metadata (`PACKET_VNET_HDR`) and completes them.
//! * a veth peer with TCP segmentation offload on sends TCP in bulk as super-frames of
//!   several segments (up to 64 KiB): the AF_PACKET backend drops them (`rx_gso`; sr6
//!   does not segment). Under AF_XDP they do not arrive at all (too large for a frame).

use std::io;
use std::os::fd::AsRawFd;

use crate::ethtool::{generic_receive_offload, tcp_segmentation_offload, tx_checksum_offload};
use crate::netlink::{self, LinkPeer};

/// A veth peer and whether its transmit checksum and TCP segmentation offloads are on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VethPeer {
    pub name: String,
    /// The named namespace it is in; `None`: this one.
    pub netns: Option<String>,
    pub tx_csum: bool,
    pub tso: bool,
    /// Generic receive offload on: the peer runs NAPI.
    pub gro: bool,
    /// An XDP program is attached to the peer (it runs NAPI too).
    pub xdp: bool,
}

impl VethPeer {
    /// Whether frames redirected by XDP into our end reach the peer: the kernel's
    /// `veth_xdp_xmit` drops them unless the peer's receive queue runs NAPI, which it
    /// does with an XDP program attached or with GRO on.
    pub fn takes_xdp_redirects(&self) -> bool {
        self.gro || self.xdp
    }
}

/// The offloads of `dev` in the calling thread's namespace: (tx checksum, TSO, GRO).
fn offloads(dev: &str) -> io::Result<(bool, bool, bool)> {
    Ok((tx_checksum_offload(dev)?, tcp_segmentation_offload(dev)?, generic_receive_offload(dev)?))
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
        let (tx_csum, tso, gro) = offloads(&p.name)?;
        return Ok(Some(VethPeer { name: p.name.clone(), netns: None, tx_csum, tso, gro, xdp: p.xdp }));
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
        #[allow(clippy::type_complexity)]
        let found = std::thread::spawn(move || -> io::Result<Option<(String, (bool, bool, bool), bool)>> {
            // SAFETY: setns(2) on a namespace file we hold open; it moves this thread
            // only, which ends right after.
            if unsafe { libc::setns(f.as_raw_fd(), libc::CLONE_NEWNET) } != 0 {
                return Err(io::Error::last_os_error());
            }
            let links = netlink::link_peers()?;
            match links.iter().find(|l: &&LinkPeer| l.ifindex == peer_ifindex) {
                Some(l) => Ok(Some((l.name.clone(), offloads(&l.name)?, l.xdp))),
                None => Ok(None),
            }
        })
        .join()
        .map_err(|_| io::Error::other("a namespace lookup thread panicked"))??;
        if let Some((name, (tx_csum, tso, gro), xdp)) = found {
            return Ok(Some(VethPeer { name, netns: Some(ns), tx_csum, tso, gro, xdp }));
        }
    }
    Err(io::Error::other(format!(
        "{dev}: its veth peer (ifindex {peer_ifindex}) is in a namespace with no name in /run/netns"
    )))
}

/// A warning for `dev` when its veth peer sends what sr6 cannot forward right, or may (a
/// peer sr6 cannot see); `None` when all is well or `dev` is no veth. `completes`: the
/// backend completes partial checksums (AF_PACKET); then only the peer's TCP
/// segmentation offload matters (which works only with checksum offload on: the
/// kernel segments in software without it, whatever `ethtool -k` says), else its
/// transmit checksum offload.
pub fn offload_warning(dev: &str, completes: bool) -> Option<String> {
    let cmd = |p: &VethPeer, what: &str| match &p.netns {
        Some(ns) => format!("ip netns exec {ns} ethtool -K {} {what} off", p.name),
        None => format!("ethtool -K {} {what} off", p.name),
    };
    let peer_name =
        |p: &VethPeer| format!("{}{}", p.name, p.netns.as_ref().map_or(String::new(), |n| format!(" (namespace {n})")));
    match peer(dev) {
        Ok(Some(p)) if completes && p.tx_csum && p.tso => Some(format!(
            "{dev}: its veth peer {} has TCP segmentation offload on: TCP it sends in bulk arrives as \
             super-frames of several segments, which sr6 drops (counted rx_gso; the partial checksums it \
             sends, sr6 completes); turn it off: {}",
            peer_name(&p),
            cmd(&p, "tso")
        )),
        Ok(Some(p)) if !completes && p.tx_csum => Some(format!(
            "{dev}: its veth peer {} has transmit checksum offload on: UDP and TCP it sends arrive with \
             partial checksums, which sr6 forwards as they are (AF_XDP has no checksum metadata; the \
             AF_PACKET backend completes them) and the far host drops; turn it off: {}",
            peer_name(&p),
            cmd(&p, "tx")
        )),
        Ok(_) => None,
        Err(e) if completes => Some(format!(
            "{e}: if the peer has TCP segmentation offload on (a veth's default), TCP it sends in bulk \
             arrives as super-frames, which sr6 drops (counted rx_gso); turn it off there (ethtool -K PEER tso off)"
        )),
        Err(e) => Some(format!(
            "{e}: if the peer has transmit checksum offload on (a veth's default), UDP and TCP it sends \
             arrive with partial checksums that sr6 forwards as they are; turn it off there (ethtool -K PEER tx off)"
        )),
    }
}
