//! Choosing and opening the I/O backend of `sr6 run`: AF_XDP first (an XDP program
//! steers to sr6 only what it must handle), AF_PACKET when AF_XDP cannot work here.

use std::net::{Ipv4Addr, Ipv6Addr};

use std::sync::Mutex;

use sr6_core::tables::Tables;
use sr6_io::af_xdp::{self, XdpAttachment, XdpMode};
use sr6_io::live::{Port, PortSpec};

use super::fast_tier::FastTier;
use super::state::lock;

/// The XDP tier if it runs ([`super::state::Shared::fast`]).
pub type Tier = Mutex<Option<FastTier>>;

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

/// Which backend is open, and how to open it again on one device (the link follower
/// re-attaches a device that was deleted and re-created).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    AfPacket,
    AfXdp(XdpModeChoice),
}

/// The open backend: its ports by worker, then by device; and what must stay alive
/// while they run (the XDP attachments by device, detached when dropped).
pub struct Opened {
    pub name: String,
    pub kind: Kind,
    pub ports: Vec<Vec<Box<dyn Port>>>,
    pub attachments: Vec<Option<XdpAttachment>>,
}

/// One device's ports, one per worker, and its XDP attachment (AF_XDP).
pub type DevicePorts = (Option<XdpAttachment>, Vec<Box<dyn Port>>);

/// The host's own addresses on device `dev` that are not SIDs: traffic to them is the
/// kernel's (ping, ssh, routing daemons), so the XDP program passes it.
pub fn host_addrs(t: &Tables, dev: usize) -> (Vec<Ipv6Addr>, Vec<Ipv4Addr>) {
    let Some(d) = t.devices.get(dev) else { return (Vec::new(), Vec::new()) };
    let v6 = d.addrs6.iter().copied().filter(|a| t.is_local6(&a.octets())).collect();
    let v4 = d.addrs4.clone();
    (v6, v4)
}

/// Opens `workers` ports on every device of `t` with the chosen backend.
/// With AF_XDP, the XDP tier's program goes on each device where it loads if `tier`
/// holds one (`--fast-path xdp`); the AF_XDP tier's program otherwise.
pub fn open(
    choice: BackendChoice,
    xdp_mode: XdpModeChoice,
    t: &Tables,
    workers: u32,
    ring_frames: u32,
    tier: &Tier,
) -> Result<Opened, String> {
    let xdp = Kind::AfXdp(xdp_mode);
    let packet = |tier: &Tier| {
        // No XDP program: no XDP tier.
        *lock(tier) = None;
        open_all(Kind::AfPacket, t, workers, ring_frames, tier)
    };
    match choice {
        BackendChoice::AfPacket => packet(tier),
        BackendChoice::AfXdp => open_all(xdp, t, workers, ring_frames, tier),
        BackendChoice::Auto => match af_xdp::probe() {
            Ok(()) => match open_all(xdp, t, workers, ring_frames, tier) {
                Ok(o) => Ok(o),
                Err(e) => {
                    eprintln!("sr6: AF_XDP failed ({e}); falling back to AF_PACKET");
                    packet(tier)
                }
            },
            Err(why) => {
                eprintln!("sr6: AF_XDP unavailable ({why}); using AF_PACKET");
                packet(tier)
            }
        },
    }
}

fn open_all(kind: Kind, t: &Tables, workers: u32, ring_frames: u32, tier: &Tier) -> Result<Opened, String> {
    let mut ports: Vec<Vec<Box<dyn Port>>> = (0..workers).map(|_| Vec::new()).collect();
    let mut attachments = Vec::new();
    let mut modes = Vec::new();
    for dev in 0..t.devices.len() {
        let (a, mine) = open_device(kind, t, dev, workers, ring_frames, tier)?;
        if let Some(a) = &a {
            modes.push(format!("{} {}", t.devices[dev].name, a.mode()));
        }
        attachments.push(a);
        for (w, p) in ports.iter_mut().zip(mine) {
            w.push(p);
        }
    }
    let name = match kind {
        Kind::AfPacket => "af_packet".to_string(),
        Kind::AfXdp(_) if lock(tier).is_some() => format!("af_xdp with the xdp tier ({})", modes.join(", ")),
        Kind::AfXdp(_) => format!("af_xdp ({})", modes.join(", ")),
    };
    Ok(Opened { name, kind, ports, attachments })
}

/// Opens device `dev` of `t` (by its name, in the calling thread's namespace): one port
/// per worker, and for AF_XDP the XDP program first: the XDP tier's if `tier` holds
/// one and it attaches, else the AF_XDP tier's.
pub fn open_device(
    kind: Kind,
    t: &Tables,
    dev: usize,
    workers: u32,
    ring_frames: u32,
    tier: &Tier,
) -> Result<DevicePorts, String> {
    let Some(d) = t.devices.get(dev) else { return Err(format!("no device {dev}")) };
    let spec = |w: u32| {
        let mut s = PortSpec::new(&d.name, dev as u16, w, workers);
        s.ring_frames = ring_frames;
        s
    };
    let mut mine: Vec<Box<dyn Port>> = Vec::new();
    let xdp_mode = match kind {
        Kind::AfPacket => {
            for w in 0..workers {
                let p = sr6_io::af_packet::open(&spec(w)).map_err(|e| format!("AF_PACKET on {}: {e}", d.name))?;
                mine.push(Box::new(p));
            }
            return Ok((None, mine));
        }
        Kind::AfXdp(m) => m,
    };
    let (h6, h4) = host_addrs(t, dev);
    let mode = match xdp_mode {
        XdpModeChoice::Auto => None,
        XdpModeChoice::Native => Some(XdpMode::Native),
        XdpModeChoice::Generic => Some(XdpMode::Generic),
    };
    let mut fast = lock(tier);
    let tiered = fast.as_mut().and_then(|f| {
        match f.program().and_then(|p| XdpAttachment::attach_program(&d.name, &h6, &h4, mode, p)) {
            Ok(a) => {
                f.attached(t, dev, &d.name, a.ifindex(), a.mode());
                Some(a)
            }
            Err(e) => {
                eprintln!("sr6: warning: the XDP tier on {}: {e}; the AF_XDP tier alone there", d.name);
                f.detached(t, dev);
                None
            }
        }
    });
    drop(fast);
    let a = match tiered {
        Some(a) => a,
        None => match mode {
            None => XdpAttachment::attach(&d.name, &h6, &h4),
            Some(m) => XdpAttachment::attach_mode(&d.name, &h6, &h4, m),
        }
        .map_err(|e| format!("XDP on {}: {e}", d.name))?,
    };
    if a.rx_queues() < workers {
        return Err(format!(
            "{} has {} receive queue(s): AF_XDP gives each worker its own queue, so at most {} worker(s) (--workers)",
            d.name,
            a.rx_queues(),
            a.rx_queues()
        ));
    }
    for w in 0..workers {
        let p = a.open_port(&spec(w)).map_err(|e| format!("AF_XDP socket on {} queue {w}: {e}", d.name))?;
        mine.push(Box::new(p));
    }
    Ok((Some(a), mine))
}
