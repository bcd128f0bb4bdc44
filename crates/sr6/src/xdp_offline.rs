//! `sr6 pcap --fast-path xdp`: each frame goes first through the XDP tier's program
//! (crates/xdp/c/fast.c), loaded into the kernel with its maps synced from the tables
//! and run with `BPF_PROG_TEST_RUN` as received on its device. What the program
//! forwards is written as it left the program, out of the device its counter names; the
//! rest goes through the pipeline as without it. The output files are then those of
//! the two tiers together, to compare with the kernel's (tests/kernel) and with
//! `sr6 pcap` alone.
//!
//! The device map only takes devices that exist, so this runs in a network namespace
//! of the calling thread's own, with a veth device standing for each device of the
//! configuration. Needs root (CAP_SYS_ADMIN for the namespace, CAP_BPF).

use std::ffi::CString;
use std::os::fd::OwnedFd;

use anyhow::{bail, Context, Result};
use sr6_core::packet::DevId;
use sr6_core::tables::Tables;
use sr6_xdp::Mirror;

const XDP_DROP: u32 = 1;
const XDP_REDIRECT: u32 = 4;

/// The program and its maps, ready to run frames.
pub struct Offline {
    mirror: Mirror,
    prog: OwnedFd,
    /// By device index: the veth device standing for it.
    ifindex: Vec<u32>,
    devices: usize,
    sids: usize,
}

/// What the XDP tier did with a frame it forwarded.
pub struct Forwarded {
    pub out: DevId,
    pub frame: Vec<u8>,
    /// The SID it ran, if any.
    pub sid: Option<usize>,
}

impl Offline {
    /// Moves this thread into a new network namespace with a veth device per device of
    /// `t`, and loads the program with its maps synced from `t`.
    pub fn new(t: &Tables) -> Result<Offline> {
        // SAFETY: unshare(2) with a constant flag; it moves the calling thread only.
        if unsafe { libc::unshare(libc::CLONE_NEWNET) } != 0 {
            bail!(
                "--fast-path xdp: cannot make a network namespace ({}); it needs root",
                std::io::Error::last_os_error()
            );
        }
        let mut ifindex = Vec::new();
        for i in 0..t.devices.len() {
            let (a, b) = (format!("sr6o{i}"), format!("sr6q{i}"));
            let st = std::process::Command::new("ip")
                .args(["link", "add", &a, "type", "veth", "peer", "name", &b])
                .status()
                .context("--fast-path xdp: running ip (iproute2)")?;
            if !st.success() {
                bail!("--fast-path xdp: `ip link add {a} type veth peer name {b}` failed");
            }
            let c = CString::new(a.as_str())?;
            // SAFETY: a NUL-terminated name.
            let ix = unsafe { libc::if_nametoindex(c.as_ptr()) };
            if ix == 0 {
                bail!("--fast-path xdp: {a} has no index");
            }
            ifindex.push(ix);
        }
        let mut mirror = Mirror::new().context("--fast-path xdp: the XDP tier's maps")?;
        let ix: Vec<Option<u32>> = ifindex.iter().map(|&i| Some(i)).collect();
        mirror.sync(t, &ix, &vec![true; ix.len()]).context("--fast-path xdp: filling the maps")?;
        let l = mirror.load().context("--fast-path xdp: loading the program")?;
        // Not forwarded: a drop, to tell it from a frame the program changed.
        if let Some(conf) = l.map("conf") {
            conf.update(&0u32.to_ne_bytes(), &XDP_DROP.to_ne_bytes())?;
        }
        Ok(Offline { mirror, prog: l.prog, ifindex, devices: t.devices.len(), sids: t.sids.len() })
    }

    /// Runs `f`, received on device `dev`, through the program: `Some` if it forwarded
    /// it (what left, where, for which SID); `None` if it left it to the pipeline (or to
    /// the kernel: the pipeline has the host's part too).
    pub fn run(&self, f: &[u8], dev: DevId) -> Result<Option<Forwarded>> {
        // The kernel runs no program on a frame shorter than an Ethernet header.
        let Some(&ingress) = self.ifindex.get(usize::from(dev)) else { return Ok(None) };
        if f.len() < 14 {
            return Ok(None);
        }
        let before = self.mirror.counts(self.sids, self.devices)?;
        let (v, out) = sr6_io::bpf::test_run_on(&self.prog, f, ingress)?;
        if v != XDP_REDIRECT {
            return Ok(None);
        }
        let after = self.mirror.counts(self.sids, self.devices)?;
        let moved = |a: &[(u64, u64)], b: &[(u64, u64)]| a.iter().zip(b).position(|(x, y)| x.0 != y.0);
        let Some(d) = moved(&before.tx, &after.tx) else {
            bail!("the XDP tier redirected a frame but counted it out of no device");
        };
        Ok(Some(Forwarded { out: d as DevId, frame: out, sid: moved(&before.sids, &after.sids) }))
    }
}
