//! Choosing and opening the I/O backend of `sr6 run`: AF_XDP first (an XDP program
//! steers to sr6 only what it must handle), AF_PACKET when AF_XDP cannot work here.

use std::net::{Ipv4Addr, Ipv6Addr};

use sr6_core::tables::Tables;
use sr6_io::af_xdp::{self, XdpAttachment, XdpMode};
use sr6_io::live::{Port, PortSpec};

/// `--backend`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum BackendChoice {
    /// AF_XDP if it works here, else AF_PACKET.
    Auto,
    #[value(name = "af_xdp")]
    AfXdp,
    #[value(name = "af_packet")]
    AfPacket,
}

/// `--xdp-mode`: where the XDP program runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum XdpModeChoice {
    /// Driver mode if the device supports it, else generic.
    Auto,
    /// In the driver, before a socket buffer exists (fastest on real NICs).
    Native,
    /// In the generic receive path, after RPS: on veth, this runs the receive work on the
    /// CPU RPS chooses instead of the sender's.
    Generic,
}

/// The open backend: its ports by worker, then by device; and what must stay alive
/// while they run (the XDP attachments, detached when dropped).
pub struct Opened {
    pub name: String,
    pub ports: Vec<Vec<Box<dyn Port>>>,
    pub attachments: Vec<XdpAttachment>,
}

/// The host's own addresses on device `dev` that are not SIDs: traffic to them is the
/// kernel's (ping, ssh, routing daemons), so the XDP program passes it.
pub fn host_addrs(t: &Tables, dev: usize) -> (Vec<Ipv6Addr>, Vec<Ipv4Addr>) {
    let Some(d) = t.devices.get(dev) else { return (Vec::new(), Vec::new()) };
    let v6 = d.addrs6.iter().copied().filter(|a| t.is_local6(&a.octets())).collect();
    let v4 = d.addrs4.clone();
    (v6, v4)
}

/// Opens `workers` ports on every device of `t` with the chosen backend.
pub fn open(
    choice: BackendChoice,
    xdp_mode: XdpModeChoice,
    t: &Tables,
    workers: u32,
    ring_frames: u32,
) -> Result<Opened, String> {
    match choice {
        BackendChoice::AfPacket => open_af_packet(t, workers, ring_frames),
        BackendChoice::AfXdp => open_af_xdp(t, xdp_mode, workers, ring_frames),
        BackendChoice::Auto => match af_xdp::probe() {
            Ok(()) => match open_af_xdp(t, xdp_mode, workers, ring_frames) {
                Ok(o) => Ok(o),
                Err(e) => {
                    eprintln!("sr6: AF_XDP failed ({e}); falling back to AF_PACKET");
                    open_af_packet(t, workers, ring_frames)
                }
            },
            Err(why) => {
                eprintln!("sr6: AF_XDP unavailable ({why}); using AF_PACKET");
                open_af_packet(t, workers, ring_frames)
            }
        },
    }
}

fn specs(t: &Tables, worker: u32, workers: u32, ring_frames: u32) -> Vec<PortSpec> {
    t.devices
        .iter()
        .enumerate()
        .map(|(i, d)| {
            let mut s = PortSpec::new(&d.name, i as u16, worker, workers);
            s.ring_frames = ring_frames;
            s
        })
        .collect()
}

fn open_af_packet(t: &Tables, workers: u32, ring_frames: u32) -> Result<Opened, String> {
    let mut ports = Vec::new();
    for w in 0..workers {
        let mut mine: Vec<Box<dyn Port>> = Vec::new();
        for s in specs(t, w, workers, ring_frames) {
            let p = sr6_io::af_packet::open(&s).map_err(|e| format!("AF_PACKET on {}: {e}", s.ifname))?;
            mine.push(Box::new(p));
        }
        ports.push(mine);
    }
    Ok(Opened { name: "af_packet".into(), ports, attachments: Vec::new() })
}

fn open_af_xdp(t: &Tables, xdp_mode: XdpModeChoice, workers: u32, ring_frames: u32) -> Result<Opened, String> {
    let mut attachments = Vec::new();
    let mut modes = Vec::new();
    for (i, d) in t.devices.iter().enumerate() {
        let (h6, h4) = host_addrs(t, i);
        let a = match xdp_mode {
            XdpModeChoice::Auto => XdpAttachment::attach(&d.name, &h6, &h4),
            XdpModeChoice::Native => XdpAttachment::attach_mode(&d.name, &h6, &h4, XdpMode::Native),
            XdpModeChoice::Generic => XdpAttachment::attach_mode(&d.name, &h6, &h4, XdpMode::Generic),
        }
        .map_err(|e| format!("XDP on {}: {e}", d.name))?;
        if a.rx_queues() < workers {
            return Err(format!(
                "{} has {} receive queue(s): AF_XDP gives each worker its own queue, so at most {} worker(s) (--workers)",
                d.name,
                a.rx_queues(),
                a.rx_queues()
            ));
        }
        modes.push(format!("{} {}", d.name, a.mode()));
        attachments.push(a);
    }
    let mut ports = Vec::new();
    for w in 0..workers {
        let mut mine: Vec<Box<dyn Port>> = Vec::new();
        for (s, a) in specs(t, w, workers, ring_frames).into_iter().zip(&attachments) {
            let p = a.open_port(&s).map_err(|e| format!("AF_XDP socket on {} queue {w}: {e}", s.ifname))?;
            mine.push(Box::new(p));
        }
        ports.push(mine);
    }
    Ok(Opened { name: format!("af_xdp ({})", modes.join(", ")), ports, attachments })
}
