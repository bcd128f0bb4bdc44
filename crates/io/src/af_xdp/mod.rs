//! AF_XDP: sr6's primary live backend.
//!
//! An [`XdpAttachment`] loads a small XDP program (`prog.rs`) on one device and keeps it
//! attached while it lives (a bpf link: closing it, or the process dying, detaches the
//! program). The program leaves to the kernel whatever is not sr6's business — ARP,
//! VLAN-tagged and other non-IP frames, multicast and broadcast, IPv6 neighbour
//! discovery, and packets for the host's own addresses (the `host6`/`host4` maps, which
//! user space fills with the addresses that are not SIDs) — and redirects everything else
//! into an XSKMAP, indexed by receive queue. [`XdpAttachment::open_port`] creates one
//! worker's AF_XDP socket ([`XskPort`], a [`crate::live::Port`]) on queue `worker` and puts
//! it in that map.
//!
//! No clang, libbpf or libxdp: the program is assembled in Rust and loaded with bpf(2)
//! ([`crate::bpf`]); the rings are mapped and driven by hand (`ring.rs`, about 250 lines; the
//! `xdpilone` crate would do it too, but its licence, EUPL-1.2, is copyleft and this
//! project is Apache-2.0).
//!
//! Mode: driver (native) XDP is tried first, then generic (SKB) XDP. Sockets use zero-copy
//! where the driver supports it and copy mode otherwise (veth: copy).

mod prog;
mod ring;
mod xsk;

use std::io;
use std::net::{Ipv4Addr, Ipv6Addr};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

pub use xsk::{XskPort, XskStatistics, FRAME_SIZE, MAX_RX_FRAME, MAX_TX_FRAME};

use crate::bpf::asm::XDP_PASS;
use crate::bpf::{self, Map, MapKind};
use crate::live::{ifindex, PortSpec};

/// Entries in each of the `host6` and `host4` maps.
pub const MAX_HOST_ADDRS: u32 = 1024;

/// How the program is attached.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum XdpMode {
    /// In the driver (`XDP_FLAGS_DRV_MODE`), before any socket buffer exists.
    Native,
    /// In the generic receive path (`XDP_FLAGS_SKB_MODE`), on any device.
    Generic,
}

impl XdpMode {
    /// "native" or "generic".
    pub fn as_str(self) -> &'static str {
        match self {
            XdpMode::Native => "native",
            XdpMode::Generic => "generic",
        }
    }
}

/// The XDP program attached to one device, with its maps. Dropping it detaches the
/// program and closes the maps (sockets already opened keep working but receive
/// nothing more).
#[derive(Debug)]
pub struct XdpAttachment {
    // Held, never read: closing it detaches the program. Declared (and so dropped) first.
    _link: OwnedFd,
    prog: OwnedFd,
    xsks: Map,
    host6: Map,
    host4: Map,
    ifname: String,
    ifindex: u32,
    mode: XdpMode,
    rx_queues: u32,
}

/// A program of the caller's to attach ([`XdpAttachment::attach_program`]), with the
/// maps of it that the attachment fills: the XSK map (by receive queue, at most
/// `max_queues`) and the host's own addresses (`host6`: 16-byte keys, `host4`: 4-byte
/// keys, 1-byte values).
#[derive(Debug)]
pub struct Program {
    pub prog: OwnedFd,
    pub xsks: Map,
    pub host6: Map,
    pub host4: Map,
    pub max_queues: u32,
}

/// The three maps the program uses.
struct Maps {
    xsks: Map,
    host6: Map,
    host4: Map,
}

impl Maps {
    fn create(queues: u32) -> io::Result<Maps> {
        Ok(Maps {
            xsks: Map::create(MapKind::XskMap, 4, 4, queues.max(1), "sr6_xsks")?,
            host6: Map::create(MapKind::Hash, 16, 1, MAX_HOST_ADDRS, "sr6_host6")?,
            host4: Map::create(MapKind::Hash, 4, 1, MAX_HOST_ADDRS, "sr6_host4")?,
        })
    }

    fn fds(&self) -> prog::MapFds {
        prog::MapFds { host6: self.host6.as_raw_fd(), host4: self.host4.as_raw_fd(), xsks: self.xsks.as_raw_fd() }
    }

    fn load(&self, miss: u32) -> io::Result<OwnedFd> {
        bpf::prog_load_xdp(&prog::xdp_program(self.fds(), miss), "sr6_xdp")
    }
}

impl XdpAttachment {
    /// Attaches the program to `ifname`, native mode first, then generic, with the host's
    /// own (non-SID) addresses. The caller's network namespace is the device's.
    pub fn attach(ifname: &str, host6: &[Ipv6Addr], host4: &[Ipv4Addr]) -> io::Result<XdpAttachment> {
        Self::attach_inner(ifname, host6, host4, None)
    }

    /// As [`XdpAttachment::attach`], in the given mode only.
    pub fn attach_mode(
        ifname: &str,
        host6: &[Ipv6Addr],
        host4: &[Ipv4Addr],
        mode: XdpMode,
    ) -> io::Result<XdpAttachment> {
        Self::attach_inner(ifname, host6, host4, Some(mode))
    }

    fn attach_inner(
        ifname: &str,
        host6: &[Ipv6Addr],
        host4: &[Ipv4Addr],
        mode: Option<XdpMode>,
    ) -> io::Result<XdpAttachment> {
        let ifindex = ifindex(ifname)?;
        let rx_queues = rx_queue_count(ifname, ifindex);
        let maps = Maps::create(rx_queues)?;
        let prog = maps.load(XDP_PASS)?;
        Self::attach_loaded(ifname, ifindex, rx_queues, host6, host4, mode, prog, maps)
    }

    /// Attaches `p` instead of this module's program (sr6's XDP tier, `sr6_xdp`), as
    /// [`XdpAttachment::attach`] does: the program must leave to the kernel what this
    /// module's leaves (the module docs) and redirect what it hands to sr6 into `p.xsks`
    /// by receive queue; `host6` and `host4` it must read as this module's does.
    pub fn attach_program(
        ifname: &str,
        host6: &[Ipv6Addr],
        host4: &[Ipv4Addr],
        mode: Option<XdpMode>,
        p: Program,
    ) -> io::Result<XdpAttachment> {
        let ifindex = ifindex(ifname)?;
        let rx_queues = rx_queue_count(ifname, ifindex);
        if rx_queues > p.max_queues {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{ifname} has {rx_queues} receive queues; the XDP program's socket map takes {}", p.max_queues),
            ));
        }
        let maps = Maps { xsks: p.xsks, host6: p.host6, host4: p.host4 };
        Self::attach_loaded(ifname, ifindex, rx_queues, host6, host4, mode, p.prog, maps)
    }

    #[allow(clippy::too_many_arguments)]
    fn attach_loaded(
        ifname: &str,
        ifindex: u32,
        rx_queues: u32,
        host6: &[Ipv6Addr],
        host4: &[Ipv4Addr],
        mode: Option<XdpMode>,
        prog: OwnedFd,
        maps: Maps,
    ) -> io::Result<XdpAttachment> {
        let modes: &[XdpMode] = match mode {
            None => &[XdpMode::Native, XdpMode::Generic],
            Some(XdpMode::Native) => &[XdpMode::Native],
            Some(XdpMode::Generic) => &[XdpMode::Generic],
        };
        let mut errors = Vec::new();
        let mut attached = None;
        for &m in modes {
            let flags = match m {
                XdpMode::Native => bpf::XDP_FLAGS_DRV_MODE,
                XdpMode::Generic => bpf::XDP_FLAGS_SKB_MODE,
            };
            match bpf::link_create_xdp(&prog, ifindex, flags) {
                Ok(link) => {
                    attached = Some((link, m));
                    break;
                }
                Err(e) => errors.push((m, e)),
            }
        }
        let Some((link, mode)) = attached else {
            let busy = errors.iter().any(|(_, e)| e.raw_os_error() == Some(libc::EBUSY));
            let detail: Vec<String> = errors.iter().map(|(m, e)| format!("{} mode: {e}", m.as_str())).collect();
            let hint = if busy {
                format!(" (another XDP program is attached: `ip link set dev {ifname} xdp off`?)")
            } else {
                String::new()
            };
            let kind = errors.last().map_or(io::ErrorKind::Other, |(_, e)| e.kind());
            return Err(io::Error::new(kind, format!("cannot attach XDP to {ifname}: {}{hint}", detail.join("; "))));
        };
        let a = XdpAttachment {
            _link: link,
            prog,
            xsks: maps.xsks,
            host6: maps.host6,
            host4: maps.host4,
            ifname: ifname.to_string(),
            ifindex,
            mode,
            rx_queues,
        };
        a.set_host_addrs(host6, host4)?;
        Ok(a)
    }

    /// The device name.
    pub fn ifname(&self) -> &str {
        &self.ifname
    }

    /// The device's interface index.
    pub fn ifindex(&self) -> u32 {
        self.ifindex
    }

    /// The device's receive queue count: workers `0..rx_queues()` can each open a port.
    pub fn rx_queues(&self) -> u32 {
        self.rx_queues
    }

    /// "native" (driver) or "generic" (SKB).
    pub fn mode(&self) -> &str {
        self.mode.as_str()
    }

    /// The attach mode as an enum.
    pub fn xdp_mode(&self) -> XdpMode {
        self.mode
    }

    /// Replaces the host's own addresses (those the kernel keeps; SIDs must not be
    /// among them). New addresses are added before old ones are removed, so an address
    /// in both sets is never briefly steered to sr6.
    pub fn set_host_addrs(&self, host6: &[Ipv6Addr], host4: &[Ipv4Addr]) -> io::Result<()> {
        if host6.len() > MAX_HOST_ADDRS as usize || host4.len() > MAX_HOST_ADDRS as usize {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("at most {MAX_HOST_ADDRS} host addresses per family on {}", self.ifname),
            ));
        }
        let want6: Vec<[u8; 16]> = host6.iter().map(|a| a.octets()).collect();
        let want4: Vec<[u8; 4]> = host4.iter().map(|a| a.octets()).collect();
        sync_map(&self.host6, &want6)?;
        sync_map(&self.host4, &want4)
    }

    /// Opens worker `spec.worker`'s AF_XDP socket on queue `spec.worker` of this device
    /// and steers that queue's frames to it. Uses zero-copy where the driver has it.
    ///
    /// A queue without a socket leaves its frames to the kernel (the program's fallback
    /// is `XDP_PASS`), so every one of the [`XdpAttachment::rx_queues`] queues needs a
    /// worker, or the device fewer queues (`ethtool -L DEV combined N`).
    /// `spec.ring_frames` is rounded up to a power of two (at most 32768).
    pub fn open_port(&self, spec: &PortSpec) -> io::Result<XskPort> {
        if spec.ifname != self.ifname {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("port for {} opened on the XDP attachment of {}", spec.ifname, self.ifname),
            ));
        }
        if spec.worker >= self.rx_queues {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "{} has {} receive queue(s); worker {} has none (use at most {} workers, or `ethtool -L {} combined N`)",
                    self.ifname, self.rx_queues, spec.worker, self.rx_queues, self.ifname
                ),
            ));
        }
        // Generic XDP hands the socket copies of socket buffers: never zero-copy.
        let copy = self.mode == XdpMode::Generic;
        XskPort::open(&self.ifname, self.ifindex, spec.worker, spec.dev, spec.ring_frames, copy, &self.xsks)
    }

    /// The kernel's id of the attached program (`ip -d link show` prints
    /// `prog/xdp id N`).
    pub fn prog_id(&self) -> io::Result<u32> {
        bpf::prog_id(&self.prog)
    }
}

/// Makes map `m` hold exactly the keys `want` (value 1).
fn sync_map<const N: usize>(m: &Map, want: &[[u8; N]]) -> io::Result<()> {
    for k in want {
        m.update(k, &[1])?;
    }
    for k in m.keys::<N>()? {
        if !want.contains(&k) {
            m.delete(&k)?;
        }
    }
    Ok(())
}

/// Whether AF_XDP can work here: the kernel has AF_XDP sockets and bpf(2), this process
/// may use them, and the verifier accepts sr6's program. `Err` says why not (for
/// `--backend auto` to fall back with a reason). Attaches nothing.
pub fn probe() -> Result<(), String> {
    // SAFETY: plain socket(2); the result is checked and owned at once.
    let raw = unsafe { libc::socket(libc::AF_XDP, libc::SOCK_RAW | libc::SOCK_CLOEXEC, 0) };
    if raw < 0 {
        let e = io::Error::last_os_error();
        return Err(match e.raw_os_error() {
            Some(libc::EAFNOSUPPORT) => "the kernel has no AF_XDP sockets (CONFIG_XDP_SOCKETS)".to_string(),
            Some(libc::EPERM | libc::EACCES) => format!("AF_XDP sockets need CAP_NET_RAW (or root): {e}"),
            _ => format!("socket(AF_XDP): {e}"),
        });
    }
    // SAFETY: `raw` is a new descriptor nothing else owns; dropping it closes it.
    drop(unsafe { OwnedFd::from_raw_fd(raw) });
    let maps = Maps::create(1).map_err(|e| {
        if matches!(e.raw_os_error(), Some(libc::EPERM | libc::EACCES)) {
            format!("bpf(2) is not permitted (needs CAP_BPF + CAP_NET_ADMIN, or root): {e}")
        } else {
            e.to_string()
        }
    })?;
    maps.load(XDP_PASS).map(drop).map_err(|e| e.to_string())
}

/// `struct ethtool_channels` (`<linux/ethtool.h>`).
#[repr(C)]
#[derive(Default)]
struct EthtoolChannels {
    cmd: u32,
    max_rx: u32,
    max_tx: u32,
    max_other: u32,
    max_combined: u32,
    rx_count: u32,
    tx_count: u32,
    other_count: u32,
    combined_count: u32,
}

/// The device's receive queue count: `ETHTOOL_GCHANNELS` (asked in the caller's network
/// namespace), else the `queues/rx-*` entries of sysfs when sysfs shows the same device,
/// else 1.
fn rx_queue_count(ifname: &str, ifindex: u32) -> u32 {
    const SIOCETHTOOL: libc::c_ulong = 0x8946;
    const ETHTOOL_GCHANNELS: u32 = 0x3c;
    let mut ch = EthtoolChannels { cmd: ETHTOOL_GCHANNELS, ..Default::default() };
    // SAFETY: an all-zero `ifreq` is valid (name, then a union of plain data).
    let mut ifr: libc::ifreq = unsafe { std::mem::zeroed() };
    for (d, s) in ifr.ifr_name.iter_mut().zip(ifname.bytes().take(libc::IFNAMSIZ - 1)) {
        *d = s as libc::c_char;
    }
    ifr.ifr_ifru.ifru_data = &mut ch as *mut EthtoolChannels as *mut libc::c_char;
    // SAFETY: plain socket(2) for the ioctl; checked below and closed by `OwnedFd`.
    let raw = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
    if raw >= 0 {
        // SAFETY: `raw` is a new descriptor nothing else owns.
        let sock = unsafe { OwnedFd::from_raw_fd(raw) };
        // SAFETY: SIOCETHTOOL reads `ifr` and the `ethtool_channels` its data pointer
        // points to, both alive and writable for the duration of the call.
        let r = unsafe { libc::ioctl(sock.as_raw_fd(), SIOCETHTOOL as _, &mut ifr as *mut libc::ifreq) };
        let n = ch.rx_count.saturating_add(ch.combined_count);
        if r == 0 && n > 0 {
            return n;
        }
    }
    // sysfs shows the namespace it was mounted in: trust it only for the same ifindex.
    let dir = format!("/sys/class/net/{ifname}");
    let same = std::fs::read_to_string(format!("{dir}/ifindex")).ok().and_then(|s| s.trim().parse::<u32>().ok())
        == Some(ifindex);
    if same {
        if let Ok(rd) = std::fs::read_dir(format!("{dir}/queues")) {
            let n = rd.filter_map(Result::ok).filter(|e| e.file_name().to_string_lossy().starts_with("rx-")).count();
            if n > 0 {
                return n as u32;
            }
        }
    }
    1
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bpf::asm::XDP_DROP;

    /// A frame: Ethernet header then `rest`.
    fn eth(dst0: u8, ethertype: u16, rest: &[u8]) -> Vec<u8> {
        let mut f = vec![dst0, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2];
        f.extend_from_slice(&ethertype.to_be_bytes());
        f.extend_from_slice(rest);
        f
    }

    fn ipv6(nh: u8, dst: Ipv6Addr, payload: &[u8]) -> Vec<u8> {
        let mut h = vec![0x60, 0, 0, 0];
        h.extend_from_slice(&(payload.len() as u16).to_be_bytes());
        h.extend_from_slice(&[nh, 64]);
        h.extend_from_slice(&"2001:db8::2".parse::<Ipv6Addr>().unwrap().octets());
        h.extend_from_slice(&dst.octets());
        h.extend_from_slice(payload);
        eth(0x02, 0x86dd, &h)
    }

    fn ipv4(dst: Ipv4Addr) -> Vec<u8> {
        let mut h = vec![0x45, 0, 0, 28, 0, 0, 0, 0, 64, 17, 0, 0, 192, 0, 2, 2];
        h.extend_from_slice(&dst.octets());
        h.extend_from_slice(&[0; 8]);
        eth(0x02, 0x0800, &h)
    }

    /// Runs the real program (with `XDP_DROP` as the "no socket" action, so that a frame
    /// the program steers to a socket comes back as DROP) on each frame with
    /// BPF_PROG_TEST_RUN: nothing is sent anywhere.
    #[test]
    #[ignore = "needs root (bpf(2))"]
    fn program_verdicts() {
        let maps = Maps::create(1).expect("BPF maps (root?)");
        let host6: Ipv6Addr = "2001:db8::1".parse().unwrap();
        let host4 = Ipv4Addr::new(192, 0, 2, 1);
        sync_map(&maps.host6, &[host6.octets()]).unwrap();
        sync_map(&maps.host4, &[host4.octets()]).unwrap();
        let p = maps.load(XDP_DROP).expect("the verifier accepts the program");
        let run = |f: &[u8]| bpf::test_run(&p, f).unwrap();
        let steer = XDP_DROP;
        let pass = XDP_PASS;
        let other6: Ipv6Addr = "2001:db8:5::1".parse().unwrap();
        let udp = [0u8; 8];

        assert_eq!(run(&ipv6(17, other6, &udp)), steer, "unicast IPv6");
        assert_eq!(run(&ipv6(43, other6, &[17, 2, 4, 0, 0, 0, 0, 0])), steer, "IPv6 + SRH");
        assert_eq!(run(&ipv4(Ipv4Addr::new(198, 51, 100, 9))), steer, "unicast IPv4");
        assert_eq!(run(&ipv6(17, host6, &udp)), pass, "to a host6 address");
        assert_eq!(run(&ipv4(host4)), pass, "to a host4 address");
        for t in 133..=137u8 {
            assert_eq!(run(&ipv6(58, other6, &[t, 0, 0, 0])), pass, "ICMPv6 type {t}");
        }
        for t in [1u8, 128, 129, 132, 138, 143] {
            assert_eq!(run(&ipv6(58, other6, &[t, 0, 0, 0])), steer, "ICMPv6 type {t}");
        }
        // ICMPv6 without its type byte: not ND, so steered.
        assert_eq!(run(&ipv6(58, other6, &[])), steer, "ICMPv6, no type");
        let mut mc = ipv6(17, "ff02::1".parse().unwrap(), &udp);
        mc[..6].copy_from_slice(&[0x33, 0x33, 0, 0, 0, 1]);
        assert_eq!(run(&mc), pass, "multicast MAC");
        let mut bc = ipv4(Ipv4Addr::new(198, 51, 100, 9));
        bc[..6].copy_from_slice(&[0xff; 6]);
        assert_eq!(run(&bc), pass, "broadcast MAC");
        assert_eq!(run(&eth(0x02, 0x0806, &[0; 28])), pass, "ARP");
        assert_eq!(run(&eth(0x02, 0x88cc, &[0; 28])), pass, "LLDP");
        assert_eq!(run(&eth(0x02, 0x8100, &[0, 1, 0x86, 0xdd, 0, 0])), pass, "VLAN");
        // Truncated headers go to the kernel.
        assert_eq!(run(&ipv6(17, other6, &udp)[..50]), pass, "short IPv6");
        assert_eq!(run(&ipv4(Ipv4Addr::new(198, 51, 100, 9))[..30]), pass, "short IPv4");
        assert_eq!(run(&eth(0x02, 0x86dd, &[])), pass, "bare Ethernet");

        // Removing the host address steers it again.
        sync_map::<16>(&maps.host6, &[]).unwrap();
        assert_eq!(run(&ipv6(17, host6, &udp)), steer, "host6 removed");
        assert!(maps.host6.keys::<16>().unwrap().is_empty());
        assert_eq!(maps.host4.keys::<4>().unwrap(), vec![host4.octets()]);
    }

    #[test]
    fn probe_says_something() {
        // Either way it must not panic; print the reason for the log.
        match probe() {
            Ok(()) => eprintln!("AF_XDP available"),
            Err(e) => eprintln!("AF_XDP unavailable: {e}"),
        }
    }
}
