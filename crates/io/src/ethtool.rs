//! The ethtool settings sr6 reads, through the `SIOCETHTOOL` ioctl
//! (linux/ethtool.h): a device's transmit checksum offload (`ethtool -k DEV`
//! "tx-checksumming", `ETHTOOL_GTXCSUM`) and its TCP segmentation offload
//! ("tcp-segmentation-offload", `ETHTOOL_GTSO`); and its generic receive offload
//! (`ETHTOOL_GGRO`), which a veth needs to take frames redirected by XDP. A veth peer with the first on hands UDP
//! and TCP to its other end with a partial checksum (CHECKSUM_PARTIAL) that only the
//! kernel's metadata knows; with the second on, TCP in bulk as super-frames of several
//! segments that the "hardware" was to cut.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// `ETHTOOL_GTXCSUM` (linux/ethtool.h).
const ETHTOOL_GTXCSUM: u32 = 0x16;
/// `ETHTOOL_GTSO` (linux/ethtool.h).
const ETHTOOL_GTSO: u32 = 0x1e;
/// `ETHTOOL_GGRO` (linux/ethtool.h).
const ETHTOOL_GGRO: u32 = 0x2b;
/// `SIOCETHTOOL` (linux/sockios.h).
const SIOCETHTOOL: libc::c_ulong = 0x8946;

/// `struct ethtool_value`.
#[repr(C)]
struct EthtoolValue {
    cmd: u32,
    data: u32,
}

/// `struct ifreq` with `ifr_data`: the name, then a pointer (padded to the union's size).
#[repr(C)]
struct IfreqData {
    name: [libc::c_char; libc::IFNAMSIZ],
    data: *mut EthtoolValue,
    _pad: [u8; 16],
}

/// Whether `dev` (in the calling thread's namespace) has transmit checksum offload on.
pub fn tx_checksum_offload(dev: &str) -> io::Result<bool> {
    get_value(dev, ETHTOOL_GTXCSUM)
}

/// Whether `dev` (in the calling thread's namespace) has TCP segmentation offload on.
pub fn tcp_segmentation_offload(dev: &str) -> io::Result<bool> {
    get_value(dev, ETHTOOL_GTSO)
}

/// Whether `dev` (in the calling thread's namespace) has generic receive offload on
/// ("generic-receive-offload"): a veth with it on runs NAPI, so its peer can send it
/// frames from XDP (`XDP_REDIRECT`).
pub fn generic_receive_offload(dev: &str) -> io::Result<bool> {
    get_value(dev, ETHTOOL_GGRO)
}

/// An `ETHTOOL_G*` command answered with a `struct ethtool_value`: whether it is on.
fn get_value(dev: &str, cmd: u32) -> io::Result<bool> {
    if dev.is_empty() || dev.len() >= libc::IFNAMSIZ || dev.contains('\0') {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, format!("bad device name {dev:?}")));
    }
    // SAFETY: socket(2) with constant arguments; the descriptor is owned at once.
    let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` is a fresh descriptor nobody else owns.
    let sock = unsafe { OwnedFd::from_raw_fd(fd) };
    let mut value = EthtoolValue { cmd, data: 0 };
    let mut req = IfreqData { name: [0; libc::IFNAMSIZ], data: &mut value, _pad: [0; 16] };
    for (d, s) in req.name.iter_mut().zip(dev.bytes()) {
        *d = s as libc::c_char;
    }
    // SAFETY: SIOCETHTOOL reads `req` (a NUL-terminated name and a pointer to `value`,
    // both alive for the call) and writes `value.data`.
    let r = unsafe { libc::ioctl(sock.as_raw_fd(), SIOCETHTOOL as _, &mut req as *mut IfreqData) };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(value.data != 0)
}
