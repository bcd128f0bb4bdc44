//! The RFC 2544 testbed on one machine: a tester namespace and a SUT namespace joined by
//! two veth links, `tg0 -> dut0` and `dut1 -> tg1` (addresses in [`crate::plan`]).
//!
//! Namespace names carry the process id (`sr6p<pid>-tg`, `sr6p<pid>-sut`) so runs never
//! collide, and [`Testbed`] removes them when dropped; [`sweep_stale`] removes those of
//! runs whose process is gone.
//!
//! CPU placement (SRPerf §IV: one core for the SUT's packet processing): the generator
//! and receiver threads are pinned to `cpus.tester`; the SUT's work goes to `cpus.sut`.
//! dut0 polls its receive ring in a NAPI thread of its own (`gro on` gives a veth a
//! NAPI instance, `threaded` a kernel thread to run it), and that thread is pinned to
//! the SUT CPU ([`Testbed::steer_sut_rx`]) — a veth has no IRQ to steer, and without
//! the thread its receive work would run in the softirq of the sending CPU, the
//! tester's. So everything the SUT does with a packet, from taking it off dut0's ring
//! (building the socket buffer for the kernel, running sr6's XDP program) to handing
//! it to dut1, runs on the SUT CPU, as with a NIC whose queue's interrupt is pinned
//! there. The thread runs SCHED_FIFO: like softirq work on a NIC, it preempts the
//! forwarder's user-space threads (sr6's worker) as soon as frames arrive — with an
//! ordinary priority it would wait for the worker's time slice while dut0's 256-frame
//! ring overflows. sr6 pins its worker there too (`--cpus`). Where threaded NAPI cannot be set
//! up, dut0's receive work is steered with RPS instead (then its first steps run on
//! the tester's CPU) and a warning says so. The tester's tg1 is steered to the tester
//! CPU with RPS. [`Testbed::check_placement`] says what could not be guaranteed.
//!
//! The live-frame generator hands XDP frames to dut0 (`ndo_xdp_xmit`), which a veth
//! accepts only with NAPI enabled: `gro on` is needed for that too.

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

    /// Makes dut0 poll its receive ring in a NAPI thread pinned to `cpus.sut` (see the
    /// module docs); if that fails, steers its receive work there with RPS. Returns
    /// what could not be done.
    pub fn steer_sut_rx(&self) -> Vec<String> {
        let mut w = Vec::new();
        if let Err(e) = self.napi_thread(&self.sut, DUT0, self.cpus.sut) {
            let sut = self.cpus.sut;
            w.push(format!("cannot poll {DUT0} in a NAPI thread on CPU {sut} ({e}); steering its receive work with RPS"));
            w.extend(self.steer_rps(&self.sut, DUT0, sut));
        }
        w
    }

    /// Makes `dev` (in namespace `ns`) poll its receive ring in a NAPI thread of its
    /// own (`gro on` gives a veth a NAPI instance, `threaded` a kernel thread to run
    /// it), pinned to `cpu` and SCHED_FIFO: like softirq work on a NIC, it preempts
    /// the user-space threads there the moment frames arrive, instead of waiting for a
    /// time slice while a 256-frame ring overflows.
    fn napi_thread(&self, ns: &str, dev: &str, cpu: usize) -> Result<(), String> {
        let before = napi_threads(dev);
        self.exec(ns, &["ethtool", "-K", dev, "gro", "on"])?;
        let path = format!("/sys/class/net/{dev}/threaded");
        let out = self.exec(ns, &["sh", "-c", &format!("echo 1 > {path} && cat {path}")])?;
        // Ours: the threads that appeared (all of that name if none did).
        let after = napi_threads(dev);
        let mine: Vec<u32> = after.iter().copied().filter(|p| !before.contains(p)).collect();
        let mine = if mine.is_empty() { after } else { mine };
        if out.trim() != "1" || mine.is_empty() {
            return Err(format!("{dev} has no NAPI thread (threaded reads `{}`)", out.trim()));
        }
        for pid in mine {
            sh(&["taskset", "-pc", &cpu.to_string(), &pid.to_string()])?;
            sh(&["chrt", "-f", "-p", NAPI_RT_PRIO, &pid.to_string()])?;
        }
        Ok(())
    }

    /// Sets `dev`'s RPS mask to `cpu` in namespace `ns`. Returns a warning if it could not.
    fn steer_rps(&self, ns: &str, dev: &str, cpu: usize) -> Option<String> {
        let mask = format!("{:x}", 1u64 << cpu.min(63));
        let path = format!("/sys/class/net/{dev}/queues/rx-0/rps_cpus");
        match self.exec(ns, &["sh", "-c", &format!("echo {mask} > {path} && cat {path}")]) {
            Ok(out) if out.trim().trim_start_matches('0').trim_start_matches(',') == mask.trim_start_matches('0') => None,
            Ok(out) => Some(format!("RPS on {dev} reads back `{}`, not `{mask}`", out.trim())),
            Err(e) => Some(format!("cannot steer {dev}'s receive work to CPU {cpu} with RPS: {e}")),
        }
    }

    /// Moves tg1's receive processing (the tester's receiver) to `cpus.tester`, so the
    /// SUT's CPU only transmits: a NAPI thread there, as for dut0 — the receiver's XDP
    /// program then runs on the tester's CPU, not in the softirq of the SUT's — and RPS
    /// to that CPU too, for the frames a veth hands to the stack without its NAPI
    /// instance (no XDP program on tg1: the tcx counter, an AF_PACKET receiver).
    /// Returns a warning if neither could be set up.
    pub fn steer_tester_rx(&self) -> Option<String> {
        let tester = self.cpus.tester;
        let napi = self.napi_thread(&self.tg, TG1, tester);
        let rps = self.steer_rps(&self.tg, TG1, tester);
        match (napi, rps) {
            (Ok(()), _) => self.defer_tester_rx(),
            (Err(_), None) => None,
            (Err(e), Some(w)) => Some(format!("cannot poll {TG1} in a NAPI thread on CPU {tester} ({e}); {w}")),
        }
    }

    /// Makes tg1's NAPI thread poll on a timer while frames keep coming, instead of being
    /// woken for each burst by the sender (`napi_defer_hard_irqs`, `gro_flush_timeout`:
    /// interrupt moderation, as a NIC's receive coalescing does). On veth the *sending*
    /// side wakes the receiver's NAPI thread: an inter-processor interrupt and a wake-up
    /// paid on the SUT's CPU, for every burst the tester takes faster than the SUT sends
    /// — the cheaper the tester's receive, the more often. Measured: the kernel's End PDR
    /// 523 -> 740 kpps with the timer (docs/perf.md). Returns a warning if it cannot be set.
    fn defer_tester_rx(&self) -> Option<String> {
        let dir = format!("/sys/class/net/{TG1}");
        let cmd = format!(
            "echo {TG1_DEFER_POLLS} > {dir}/napi_defer_hard_irqs && echo {TG1_POLL_NS} > {dir}/gro_flush_timeout \
             && cat {dir}/napi_defer_hard_irqs {dir}/gro_flush_timeout"
        );
        match self.exec(&self.tg, &["sh", "-c", &cmd]) {
            Ok(out) if out.split_whitespace().eq([TG1_DEFER_POLLS, TG1_POLL_NS]) => None,
            Ok(out) => Some(format!(
                "{TG1}'s NAPI timer reads back `{}`",
                out.split_whitespace().collect::<Vec<_>>().join(" ")
            )),
            Err(e) => Some(format!(
                "cannot set {TG1}'s NAPI timer ({e}): the SUT pays a wake-up of the tester's receive thread per burst"
            )),
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

/// tg1's NAPI thread, while frames keep coming, polls every `TG1_POLL_NS` (50 µs: at
/// 1.3 Mpps 65 frames, a quarter of veth's 256-frame ring) instead of waiting to be woken,
/// for up to `TG1_DEFER_POLLS` empty polls in a row (5 ms).
const TG1_POLL_NS: &str = "50000";
const TG1_DEFER_POLLS: &str = "100";

/// The SCHED_FIFO priority of dut0's and tg1's NAPI threads (as `chrt -f` takes it).
const NAPI_RT_PRIO: &str = "50";

/// The process ids of the kernel threads polling `dev` (`napi/DEV-ID`), in any
/// namespace.
fn napi_threads(dev: &str) -> Vec<u32> {
    let prefix = format!("napi/{dev}-");
    let Ok(dir) = std::fs::read_dir("/proc") else { return Vec::new() };
    dir.filter_map(|e| e.ok())
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| std::fs::read_to_string(format!("/proc/{pid}/comm")).is_ok_and(|c| c.starts_with(&prefix)))
        .collect()
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
