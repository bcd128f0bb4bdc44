//! `sr6 run`: the live router. Loads the configuration, checks the devices exist,
//! learns their MACs and the kernel's neighbours, opens the backend (AF_XDP or
//! AF_PACKET), starts the workers, the neighbour follower and the control socket, and
//! runs until SIGINT/SIGTERM; then stops the workers, detaches everything and prints
//! the counters.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::sync_channel;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{anyhow, bail, Context, Result};
use sr6_io::live::pin_to_cpus;
use sr6_io::netlink;

use crate::live::backend::{self, BackendChoice};
use crate::live::control::Control;
use crate::live::ctl::{self, Status};
use crate::live::fast_tier::{FastPathChoice, FastTier};
use crate::live::link_state::DevState;
use crate::live::neigh::{self, DevMap};
use crate::live::overload::{self, OverloadGuard};
use crate::live::state::{lock, Shared};
use crate::live::{fpm, kernel_routes, links, show, worker};

/// Options of `sr6 run`.
pub struct RunOpts {
    pub config: PathBuf,
    pub workers: u32,
    pub backend: BackendChoice,
    pub xdp_mode: backend::XdpModeChoice,
    /// `--fast-path` (`live::fast_tier`).
    pub fast_path: FastPathChoice,
    pub socket: PathBuf,
    pub cpus: Vec<usize>,
    pub batch: usize,
    pub ring_frames: u32,
    /// SCHED_FIFO priority of the overload guard (`live::overload`); `None`: off.
    pub overload_priority: Option<i32>,
    pub verbose: bool,
    /// `--mirror-kernel-routes` (`live::kernel_routes`).
    pub mirror_kernel_routes: bool,
    /// `--fpm-listen ADDR:PORT` (`live::fpm`).
    pub fpm_listen: Option<std::net::SocketAddr>,
    /// `--ids-rules FILE --ids-mode MODE`.
    pub ids: Option<(PathBuf, String)>,
}

pub fn run(o: RunOpts) -> Result<()> {
    if o.workers == 0 {
        bail!("--workers must be at least 1");
    }
    if !o.cpus.is_empty() && o.cpus.len() < o.workers as usize {
        bail!("--cpus names {} CPU(s) for {} worker(s): give one per worker", o.cpus.len(), o.workers);
    }
    let mut spec = sr6_config::parse_file(&o.config).map_err(|e| anyhow!("{e}"))?;
    // `--ids-rules`: the line `ids rules FILE mode MODE`, unless the file has one.
    if let (Some((file, mode)), None) = (&o.ids, &spec.ids) {
        let line = format!("ids rules {} mode {mode}", file.display());
        sr6_config::parse_line(&line, "--ids-rules", 1, &mut spec).map_err(|e| anyhow!("{e}"))?;
    }
    let (t0, warnings) = sr6_core::tables::Tables::build(&spec)
        .map_err(|e| anyhow!("{}:{}:1: {}", o.config.display(), e.line, e.message))?;
    for w in warnings {
        eprintln!("sr6: warning: {}: {w}", o.config.display());
    }
    if t0.devices.is_empty() {
        bail!("{}: the configuration names no device; sr6 run attaches to the devices it names", o.config.display());
    }

    // The devices must exist; their real MACs are the ones sr6 sends with.
    let mut devs: DevMap = HashMap::new();
    let mut dev_macs = BTreeMap::new();
    let mut dev_mtus = BTreeMap::new();
    let mut start_links: HashMap<u32, netlink::LinkInfo> = HashMap::new();
    for (i, d) in t0.devices.iter().enumerate() {
        let l = netlink::link_by_name(&d.name)
            .with_context(|| format!("device {} (named in {}) is not usable", d.name, o.config.display()))?;
        if !l.up {
            eprintln!("sr6: warning: {} is down; bring it up (ip link set {} up)", d.name, d.name);
        }
        if let Some(ls) = spec.links.iter().rev().find(|x| x.dev == d.name) {
            if ls.mac != l.mac {
                eprintln!(
                    "sr6: warning: {}:{}: {} has MAC {} in the kernel; sr6 uses that one (the kernel answers neighbour discovery with it)",
                    o.config.display(),
                    ls.line,
                    d.name,
                    fmt_mac(&l.mac)
                );
            }
        }
        dev_macs.insert(d.name.clone(), l.mac);
        // The kernel's MTU is the one frames can leave with (sr6's buffers cap it).
        dev_mtus.insert(d.name.clone(), l.mtu.min(u32::from(sr6_core::spec::MAX_MTU)) as u16);
        devs.insert(l.ifindex, (i as u16, d.name.clone()));
        start_links.insert(l.ifindex, l);
    }

    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(sig, stop.clone()).context("installing the signal handlers")?;
    }
    let shared = Arc::new(Shared::new(t0, o.workers as usize, stop.clone()));
    for (ifindex, (i, _)) in &devs {
        let Some(l) = start_links.get(ifindex) else { continue };
        shared.links.update(usize::from(*i), |d| {
            d.ifindex = l.ifindex;
            d.mac = l.mac;
            d.mtu = l.mtu;
            d.state = if l.up { DevState::Up } else { DevState::Down };
        });
    }
    let mut control = Control::new(spec, shared.clone());
    control.dev_macs = dev_macs;
    control.dev_mtus = dev_mtus;
    match neigh::load_all(&mut control, &devs) {
        Ok(n) if o.verbose => eprintln!("sr6: {n} neighbour(s) from the kernel"),
        Ok(_) => {}
        Err(e) => eprintln!("sr6: warning: cannot read the kernel's neighbour table: {e}"),
    }
    control.republish().map_err(|e| anyhow!("{}: {e}", o.config.display()))?;
    let tables = shared.gen.load_full();

    if o.fast_path == FastPathChoice::Xdp && o.backend != BackendChoice::AfPacket {
        match FastTier::new(tables.tables.devices.len()) {
            Ok(f) => *lock(&shared.fast) = Some(f),
            Err(e) => eprintln!("sr6: warning: the XDP tier cannot start ({e}); the AF_XDP tier alone"),
        }
    }
    let opened = backend::open(o.backend, o.xdp_mode, &tables.tables, o.workers, o.ring_frames, &shared.fast)
        .map_err(|e| anyhow!(e))?;
    // A veth peer whose offloads make it send what this backend cannot forward right
    // (AF_XDP: partial checksums; AF_PACKET completes those, but not TSO super-frames):
    // said now and by `show status`.
    let completes = opened.name == "af_packet";
    let dev_warnings: Vec<String> =
        tables.tables.devices.iter().filter_map(|d| sr6_io::veth::offload_warning(&d.name, completes)).collect();
    for w in &dev_warnings {
        eprintln!("sr6: warning: {w}");
    }
    if opened.name == "af_packet" {
        check_kernel_forwarding();
        if o.overload_priority.is_some() {
            eprintln!(
                "sr6: warning: --overload-priority has no effect with AF_PACKET (its receive backlog is not visible)"
            );
        }
    }
    let listener = ctl::bind(&o.socket).map_err(|e| anyhow!(e))?;
    let fpm_listener = match o.fpm_listen {
        Some(a) => Some(fpm::listen(a).map_err(|e| anyhow!("cannot listen for zebra's FPM stream on {a}: {e}"))?),
        None => None,
    };

    let (req_tx, req_rx) = sync_channel(1024);
    // The IDS's alerts: one writer thread behind a bounded queue (docs/ids.md).
    let (alert_tx, alert_rx) = sync_channel(crate::live::ids::QUEUE);
    let wall = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64);
    let offset = wall.wrapping_sub(sr6_io::live::now_ns());
    let recent = shared.ids_recent.clone();
    std::thread::Builder::new()
        .name("sr6-ids-alerts".into())
        .spawn(move || crate::live::ids::writer(alert_rx, recent, offset))?;
    let mut handles = Vec::new();
    let mut watched = Vec::new();
    for (i, ports) in opened.ports.into_iter().enumerate() {
        let overload = OverloadGuard::new(o.overload_priority);
        watched.push(overload.watched());
        let ctx = worker::WorkerCtx {
            id: i,
            shared: shared.clone(),
            batch: o.batch,
            resolve: req_tx.clone(),
            cpu: o.cpus.get(i).copied(),
            overload,
            alerts: alert_tx.clone(),
        };
        let h = std::thread::Builder::new().name(format!("sr6-worker-{i}")).spawn(move || worker::run(ctx, ports))?;
        handles.push(h);
    }
    drop(req_tx);
    drop(alert_tx);
    // The control side (`sr6 ctl`, the kernel's and zebra's routes, neighbour
    // resolution: the threads spawned from here on) keeps off the workers' CPUs when
    // there are others: a batch of route changes must not take a worker's CPU from it.
    let pinned: Vec<usize> = o.cpus.iter().take(o.workers as usize).copied().collect();
    let others = control_cpus(&pinned);
    if !others.is_empty() {
        if let Err(e) = pin_to_cpus(&others) {
            eprintln!("sr6: warning: cannot keep the control threads on CPUs {others:?}: {e}");
        }
    }
    if let Some(prio) = o.overload_priority {
        // The watchdog runs where the workers run.
        let cpus: Vec<usize> = o.cpus.iter().take(o.workers as usize).copied().collect();
        let stop = stop.clone();
        std::thread::Builder::new().name("sr6-watchdog".into()).spawn(move || {
            if let Err(e) = pin_to_cpus(&cpus) {
                eprintln!("sr6: warning: overload watchdog: cannot pin to CPUs {cpus:?}: {e}");
            }
            overload::watchdog(prio, watched, &stop)
        })?;
    }
    let control = Arc::new(Mutex::new(control));
    let status = Status {
        backend: opened.name.clone(),
        workers: o.workers as usize,
        devices: tables.tables.devices.iter().map(|d| d.name.clone()).collect(),
        config: o.config.display().to_string(),
        pid: std::process::id(),
        warnings: dev_warnings,
    };
    {
        let c = control.clone();
        let st = status.clone();
        std::thread::Builder::new().name("sr6-ctl".into()).spawn(move || ctl::serve(listener, c, st))?;
    }
    let neigh_handle = {
        let c = control.clone();
        let verbose = o.verbose;
        std::thread::Builder::new().name("sr6-neigh".into()).spawn(move || neigh::run(c, req_rx, verbose))?
    };
    // The link follower owns the XDP attachments from now on (it replaces a device's
    // when the device is re-created); they are detached when it returns.
    let links_handle = {
        let f = links::Follower {
            control: control.clone(),
            kind: opened.kind,
            workers: o.workers,
            ring_frames: o.ring_frames,
            attachments: opened.attachments,
        };
        std::thread::Builder::new().name("sr6-links".into()).spawn(move || links::run(f))?
    };
    let routes_handle = if o.mirror_kernel_routes {
        let c = control.clone();
        let verbose = o.verbose;
        Some(std::thread::Builder::new().name("sr6-routes".into()).spawn(move || kernel_routes::run(c, verbose))?)
    } else {
        None
    };
    let fpm_handle = match fpm_listener {
        Some(l) => {
            let c = control.clone();
            let verbose = o.verbose;
            if let Some(a) = o.fpm_listen {
                eprintln!("sr6: listening for zebra's FPM stream on {a}");
            }
            Some(std::thread::Builder::new().name("sr6-fpm".into()).spawn(move || fpm::run(c, l, verbose))?)
        }
        None => None,
    };
    eprintln!(
        "sr6: running on {} with {}, {} worker(s){}; control socket {} (Ctrl-C to stop)",
        status.devices.join(", "),
        opened.name,
        o.workers,
        if o.cpus.is_empty() { String::new() } else { format!(" pinned to CPU {:?}", &o.cpus[..o.workers as usize]) },
        o.socket.display()
    );
    drop(tables);

    while !stop.load(Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(100));
        if !stop.load(Ordering::Relaxed) && handles.iter().any(|h| h.is_finished()) {
            eprintln!("sr6: error: a worker stopped unexpectedly; shutting down");
            stop.store(true, Ordering::Relaxed);
        }
    }
    eprintln!("sr6: stopping");
    for h in handles {
        let _ = h.join();
    }
    let _ = neigh_handle.join();
    let _ = links_handle.join();
    if let Some(h) = routes_handle {
        let _ = h.join();
    }
    if let Some(h) = fpm_handle {
        let _ = h.join();
    }
    let _ = std::fs::remove_file(&o.socket);
    let c = lock(&control);
    let g = c.shared.gen.load();
    eprint!("{}", show::counters_text(&show::counters(&c.shared, &g.tables)));
    Ok(())
}

fn fmt_mac(m: &[u8; 6]) -> String {
    m.iter().map(|b| format!("{b:02x}")).collect::<Vec<_>>().join(":")
}

/// With AF_PACKET the kernel receives a copy of every frame: if it forwards too, each
/// packet leaves twice.
fn check_kernel_forwarding() {
    for (path, what) in [
        ("/proc/sys/net/ipv6/conf/all/forwarding", "net.ipv6.conf.all.forwarding"),
        ("/proc/sys/net/ipv4/ip_forward", "net.ipv4.ip_forward"),
    ] {
        if std::fs::read_to_string(Path::new(path)).map(|s| s.trim() == "1").unwrap_or(false) {
            eprintln!(
                "sr6: warning: {what}=1: with AF_PACKET the kernel sees every frame too and would forward it as well; set it to 0"
            );
        }
    }
}

/// The CPUs the control threads may use: every CPU of the machine the workers are not
/// pinned to (none when the workers are not pinned, or take every CPU).
fn control_cpus(workers: &[usize]) -> Vec<usize> {
    if workers.is_empty() {
        return Vec::new();
    }
    let n = std::thread::available_parallelism().map_or(1, |n| n.get());
    (0..n).filter(|c| !workers.contains(c)).collect()
}
