//! The RFC 2544 testbed on one machine: a tester namespace and a SUT namespace joined by
//! two veth links, `tg0 -> dut0` and `dut1 -> tg1` (addresses in [`crate::plan`]).
//!
//! Namespace names carry the process id (`sr6p<pid>-tg`, `sr6p<pid>-sut`) so runs never
//! collide, and [`Testbed`] removes them when dropped; [`sweep_stale`] removes those of
//! runs whose process is gone.
//!
//! CPU placement (SRPerf §IV: one core for the SUT's packet processing): the generator
//! and receiver threads are pinned to `cpus.tester`; the SUT's work goes to `cpus.sut` —
//! sr6 pins its worker there (`--cpus`), and for the kernel the receive processing of
//! dut0 is steered there with RPS (`rps_cpus`), since a veth has no IRQ to steer. On
//! veth, the receive-side driver work of a frame runs on the CPU that sent it (for sr6
//! the XDP program and the copy into the AF_XDP ring run on the generator's CPU; for the
//! kernel only the enqueue to the RPS backlog does). [`Testbed::check_placement`] says
//! what could not be guaranteed.

use std::process::Command;

use crate::plan::{DUT0, DUT1, TG0, TG1};

/// Which CPUs do what.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Cpus {
    /// Generator and receiver threads.
    pub tester: usize,
    /// The SUT's forwarding work.
    pub sut: usize,
}

impl Default for Cpus {
    fn default() -> Self {
        Cpus { tester: 0, sut: 1 }
    }
}

/// Runs a command; its stderr in the error.
pub fn sh(argv: &[&str]) -> Result<String, String> {
    let out = Command::new(argv[0]).args(&argv[1..]).output().map_err(|e| format!("{}: {e}", argv[0]))?;
    if !out.status.success() {
        return Err(format!("`{}` failed: {}", argv.join(" "), String::from_utf8_lossy(&out.stderr).trim()));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Removes testbed namespaces left by runs whose process is gone.
pub fn sweep_stale() -> Vec<String> {
    let mut removed = Vec::new();
    let Ok(list) = sh(&["ip", "netns", "list"]) else { return removed };
    for line in list.lines() {
        let name = line.split_whitespace().next().unwrap_or("");
        let Some(rest) = name.strip_prefix("sr6p") else { continue };
        let pid: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
        if !pid.is_empty() && !std::path::Path::new(&format!("/proc/{pid}")).exists() && sh(&["ip", "netns", "del", name]).is_ok() {
            removed.push(name.to_string());
        }
    }
    removed
}

/// The two namespaces and their links. Dropping it removes them.
#[derive(Debug)]
pub struct Testbed {
    pub tg: String,
    pub sut: String,
    pub cpus: Cpus,
    /// MAC addresses of tg0, tg1, dut0, dut1.
    pub tg0_mac: String,
    pub tg1_mac: String,
    pub dut0_mac: String,
    pub dut1_mac: String,
}

impl Testbed {
    /// Creates the namespaces and links, up, with checksum offload off (a veth sender
    /// that leaves checksums to "hardware" would emit incomplete ones). `tag`
    /// distinguishes several testbeds of one process.
    pub fn create(tag: &str, cpus: Cpus) -> Result<Testbed, String> {
        let pid = std::process::id();
        let tg = format!("sr6p{pid}-{tag}tg");
        let sut = format!("sr6p{pid}-{tag}sut");
        for n in [&tg, &sut] {
            let _ = sh(&["ip", "netns", "del", n]);
        }
        sh(&["ip", "netns", "add", &tg])?;
        let mut tb = Testbed {
            tg: tg.clone(),
            sut: sut.clone(),
            cpus,
            tg0_mac: String::new(),
            tg1_mac: String::new(),
            dut0_mac: String::new(),
            dut1_mac: String::new(),
        };
        sh(&["ip", "netns", "add", &sut])?;
        for (a, b) in [(TG0, DUT0), (DUT1, TG1)] {
            let (na, nb) = if a == TG0 { (&tg, &sut) } else { (&sut, &tg) };
            sh(&["ip", "link", "add", a, "netns", na, "type", "veth", "peer", "name", b, "netns", nb])?;
        }
        for (ns, devs) in [(&tg, [TG0, TG1]), (&sut, [DUT0, DUT1])] {
            sh(&["ip", "-n", ns, "link", "set", "lo", "up"])?;
            sh(&[
                "ip", "netns", "exec", ns, "sysctl", "-qw", "net.ipv6.conf.all.accept_dad=0", "net.ipv6.conf.default.accept_dad=0",
                "net.ipv6.conf.all.accept_ra=0", "net.ipv6.conf.default.accept_ra=0", "net.ipv4.conf.all.rp_filter=0",
                "net.ipv4.conf.default.rp_filter=0", "net.ipv6.conf.all.forwarding=0", "net.ipv4.ip_forward=0",
            ])?;
            for d in devs {
                sh(&["ip", "-n", ns, "link", "set", d, "up"])?;
                sh(&["ip", "netns", "exec", ns, "ethtool", "-K", d, "tx", "off"])
                    .map_err(|e| format!("{e} (is ethtool installed?)"))?;
            }
        }
        // The tester's own addresses (not needed to send or count; they let a human
        // ping across the testbed when debugging).
        sh(&["ip", "-n", &tg, "-6", "addr", "add", "fc00:a::2/64", "dev", TG0, "nodad"])?;
        sh(&["ip", "-n", &tg, "-6", "addr", "add", "fc00:b::2/64", "dev", TG1, "nodad"])?;
        // The tester's kernel also sees what comes back on tg1 (the receiver reads
        // copies with AF_PACKET): the test destinations are blackholed there, or it
        // would answer every packet with an ICMP error — towards the SUT.
        for (fam, pfx) in [("-6", "fc00:100::/30"), ("-6", "fc00:200::/64"), ("-4", "10.100.0.0/24")] {
            sh(&["ip", "-n", &tg, fam, "route", "add", "blackhole", pfx])?;
        }
        if let Some(w) = tb.steer_tester_rx() {
            return Err(w);
        }
        tb.tg0_mac = mac(&tg, TG0)?;
        tb.tg1_mac = mac(&tg, TG1)?;
        tb.dut0_mac = mac(&sut, DUT0)?;
        tb.dut1_mac = mac(&sut, DUT1)?;
        Ok(tb)
    }

    /// Runs `argv` inside namespace `ns`.
    pub fn exec(&self, ns: &str, argv: &[&str]) -> Result<String, String> {
        let mut v = vec!["ip", "netns", "exec", ns];
        v.extend_from_slice(argv);
        sh(&v)
    }

    /// Steers the SUT's receive processing of dut0 to `cpus.sut` with RPS (for the
    /// kernel forwarder). Returns a warning if it could not.
    pub fn steer_kernel_rx(&self) -> Option<String> {
        let mask = format!("{:x}", 1u64 << self.cpus.sut.min(63));
        let path = format!("/sys/class/net/{DUT0}/queues/rx-0/rps_cpus");
        match self.exec(&self.sut, &["sh", "-c", &format!("echo {mask} > {path} && cat {path}")]) {
            Ok(out) if out.trim().trim_start_matches('0').trim_start_matches(',') == mask.trim_start_matches('0') => None,
            Ok(out) => Some(format!("RPS on {DUT0} reads back `{}`, not `{mask}`: the kernel's forwarding may run on the tester's CPU", out.trim())),
            Err(e) => Some(format!("cannot steer {DUT0}'s receive work to CPU {} with RPS: {e}", self.cpus.sut)),
        }
    }

    /// Steers tg1's receive processing (the tester's receiver) to `cpus.tester` with RPS,
    /// so the SUT's CPU only transmits. Returns a warning if it could not.
    pub fn steer_tester_rx(&self) -> Option<String> {
        let mask = format!("{:x}", 1u64 << self.cpus.tester.min(63));
        let path = format!("/sys/class/net/{TG1}/queues/rx-0/rps_cpus");
        match self.exec(&self.tg, &["sh", "-c", &format!("echo {mask} > {path}")]) {
            Ok(_) => None,
            Err(e) => Some(format!("cannot steer {TG1}'s receive work to CPU {} with RPS: {e}", self.cpus.tester)),
        }
    }

    /// What cannot be guaranteed about CPU placement on this machine.
    pub fn check_placement(&self) -> Vec<String> {
        let mut w = Vec::new();
        let n = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
        if n < 2 {
            w.push(format!("{n} CPU available: the generator and the SUT share it; rates are not comparable with the papers'"));
        }
        if self.cpus.tester == self.cpus.sut {
            w.push("the tester and the SUT are placed on the same CPU".into());
        }
        for c in [self.cpus.tester, self.cpus.sut] {
            if c >= n {
                w.push(format!("CPU {c} does not exist here ({n} CPUs)"));
            }
        }
        w
    }
}

fn mac(ns: &str, dev: &str) -> Result<String, String> {
    let out = sh(&["ip", "netns", "exec", ns, "cat", &format!("/sys/class/net/{dev}/address")])?;
    Ok(out.trim().to_string())
}

impl Drop for Testbed {
    fn drop(&mut self) {
        for n in [&self.sut, &self.tg] {
            let _ = sh(&["ip", "netns", "del", n]);
        }
    }
}
