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

/// [`sh`] with `input` on the command's standard input, in a session of its own
/// (util-linux's `setsid --wait`): no controlling terminal, so a prompt that reads the
/// terminal (`ip sr hmac set`'s getpass) reads the input instead.
pub fn sh_input(argv: &[&str], input: &str) -> Result<String, String> {
    use std::io::Write;
    use std::process::Stdio;
    let mut child = Command::new("setsid")
        .arg("--wait")
        .args(argv)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("setsid {}: {e}", argv[0]))?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin.write_all(input.as_bytes()).map_err(|e| format!("{}: {e}", argv[0]))?;
    }
    let out = child.wait_with_output().map_err(|e| format!("{}: {e}", argv[0]))?;
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
        if !pid.is_empty()
            && !std::path::Path::new(&format!("/proc/{pid}")).exists()
            && sh(&["ip", "netns", "del", name]).is_ok()
        {
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
                "ip",
                "netns",
                "exec",
                ns,
                "sysctl",
                "-qw",
                "net.ipv6.conf.all.accept_dad=0",
                "net.ipv6.conf.default.accept_dad=0",
                "net.ipv6.conf.all.accept_ra=0",
                "net.ipv6.conf.default.accept_ra=0",
                "net.ipv4.conf.all.rp_filter=0",
                "net.ipv4.conf.default.rp_filter=0",
                "net.ipv6.conf.all.forwarding=0",
                "net.ipv4.ip_forward=0",
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
            w.push(format!(
                "cannot poll {DUT0} in a NAPI thread on CPU {sut} ({e}); steering its receive work with RPS"
            ));
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
            sh(&["chrt", "-f", "-p", &NAPI_RT_PRIO.to_string(), &pid.to_string()])?;
        }
        Ok(())
    }

    /// Sets `dev`'s RPS mask to `cpu` in namespace `ns`. Returns a warning if it could not.
    fn steer_rps(&self, ns: &str, dev: &str, cpu: usize) -> Option<String> {
        let mask = format!("{:x}", 1u64 << cpu.min(63));
        let path = format!("/sys/class/net/{dev}/queues/rx-0/rps_cpus");
        match self.exec(ns, &["sh", "-c", &format!("echo {mask} > {path} && cat {path}")]) {
            Ok(out) if out.trim().trim_start_matches('0').trim_start_matches(',') == mask.trim_start_matches('0') => {
                None
            }
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

    /// The testbed's CPU times now, from one read of `/proc/stat` (`None` if it cannot
    /// be read or lacks a CPU).
    pub fn cpu_times(&self) -> Option<CpuTimes> {
        let stat = std::fs::read_to_string("/proc/stat").ok()?;
        Some(CpuTimes {
            sut_busy_s: cpu_busy_s(&stat, self.cpus.sut, USER_HZ)?,
            sut_steal_s: cpu_steal_s(&stat, self.cpus.sut, USER_HZ)?,
            tester_steal_s: cpu_steal_s(&stat, self.cpus.tester, USER_HZ)?,
        })
    }

    /// What cannot be guaranteed about CPU placement on this machine.
    pub fn check_placement(&self) -> Vec<String> {
        let mut w = Vec::new();
        let n = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
        if n < 2 {
            w.push(format!(
                "{n} CPU available: the generator and the SUT share it; rates are not comparable with the papers'"
            ));
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

/// The ticks a second of `/proc/stat` (`USER_HZ`, `sysconf(_SC_CLK_TCK)`: 100 on every
/// architecture Linux runs this on).
const USER_HZ: f64 = 100.0;

/// The seconds CPU `cpu` has been busy since boot, from `/proc/stat`'s text `stat`:
/// user, nice, system, irq and softirq time (guest time is inside user and nice; idle,
/// iowait and the time the hypervisor stole are not counted), at `hz` ticks a second.
pub fn cpu_busy_s(stat: &str, cpu: usize, hz: f64) -> Option<f64> {
    let v = cpu_ticks(stat, cpu)?;
    // user nice system idle iowait irq softirq steal ...
    let busy = v.first()? + v.get(1)? + v.get(2)? + v.get(5).unwrap_or(&0) + v.get(6).unwrap_or(&0);
    (hz > 0.0).then(|| busy as f64 / hz)
}

/// The seconds the hypervisor has taken from CPU `cpu` since boot (steal time, the
/// eighth figure of its line in `/proc/stat`), at `hz` ticks a second; 0 where the
/// line has no such figure (bare metal, old kernels).
pub fn cpu_steal_s(stat: &str, cpu: usize, hz: f64) -> Option<f64> {
    let v = cpu_ticks(stat, cpu)?;
    (hz > 0.0).then(|| *v.get(7).unwrap_or(&0) as f64 / hz)
}

/// The figures of CPU `cpu`'s line of `/proc/stat`'s text `stat`, in ticks (`None`
/// without such a line, or with a figure that is not a number).
fn cpu_ticks(stat: &str, cpu: usize) -> Option<Vec<u64>> {
    let name = format!("cpu{cpu}");
    let line = stat.lines().find(|l| l.split_whitespace().next() == Some(name.as_str()))?;
    line.split_whitespace().skip(1).map(|x| x.parse().ok()).collect()
}

/// What [`Testbed::cpu_times`] reads: seconds since boot.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CpuTimes {
    /// The SUT's CPU busy ([`cpu_busy_s`]).
    pub sut_busy_s: f64,
    /// Taken from the SUT's CPU by the hypervisor ([`cpu_steal_s`]).
    pub sut_steal_s: f64,
    /// Taken from the tester's CPU by the hypervisor.
    pub tester_steal_s: f64,
}

/// tg1's NAPI thread, while frames keep coming, polls every `TG1_POLL_NS` (50 µs: at
/// 1.3 Mpps 65 frames, a quarter of veth's 256-frame ring) instead of waiting to be woken,
/// for up to `TG1_DEFER_POLLS` empty polls in a row (5 ms).
const TG1_POLL_NS: &str = "50000";
const TG1_DEFER_POLLS: &str = "100";

/// The SCHED_FIFO priority of dut0's and tg1's NAPI threads (as `chrt -f` takes it).
pub const NAPI_RT_PRIO: u32 = 50;

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

/// Where frames were dropped on the testbed's links, from the kernel's own counters:
/// read before and after a trial, the difference says whose loss a trial's loss was.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LinkDrops {
    /// Frames dut0 dropped on receive: on veth, frames its 256-frame ring had no room
    /// for because the SUT did not take them off in time (the SUT's loss).
    pub dut0_rx: u64,
    /// Frames the SUT sent out of dut1 that tg1's ring had no room for (counted as
    /// dut1's transmit drops on veth) plus tg1's own receive drops: the tester's loss.
    pub tester_rx: u64,
}

impl LinkDrops {
    /// The drops between `self` (before) and `after`.
    pub fn since(self, after: LinkDrops) -> LinkDrops {
        LinkDrops {
            dut0_rx: after.dut0_rx.saturating_sub(self.dut0_rx),
            tester_rx: after.tester_rx.saturating_sub(self.tester_rx),
        }
    }
}

impl Testbed {
    /// The links' drop counters now (`ip -s -j link` in both namespaces).
    pub fn link_drops(&self) -> Result<LinkDrops, String> {
        let sut = link_stats(&sh(&["ip", "-n", &self.sut, "-s", "-j", "link", "show"])?)?;
        let tg = link_stats(&sh(&["ip", "-n", &self.tg, "-s", "-j", "link", "show"])?)?;
        let get = |v: &[(String, LinkStats)], dev: &str| {
            v.iter()
                .find(|(n, _)| n == dev)
                .map(|(_, s)| *s)
                .ok_or_else(|| format!("no device {dev} in `ip -s -j link`"))
        };
        let (dut0, dut1, tg1) = (get(&sut, DUT0)?, get(&sut, DUT1)?, get(&tg, TG1)?);
        // Frames redirected by XDP into dut1 that tg1's ring could not take are counted
        // twice: by veth as tg1's rx_dropped and as dut1's tx_dropped (its peer's); ethtool
        // names them once, dut1's `tx_queue_N_xdp_xmit_errors`.
        let twice = self.exec(&self.sut, &["ethtool", "-S", DUT1]).map_or(0, |s| xdp_xmit_errors(&s));
        let tester_rx = (dut1.tx_dropped + tg1.rx_dropped).saturating_sub(twice);
        Ok(LinkDrops { dut0_rx: dut0.rx_dropped, tester_rx })
    }
}

/// The sum of the `tx_queue_N_xdp_xmit_errors` counters in `ethtool -S` output of a
/// veth: frames sent to it from XDP (`ndo_xdp_xmit`) that its peer's ring could not take.
pub fn xdp_xmit_errors(ethtool_s: &str) -> u64 {
    ethtool_s
        .lines()
        .filter_map(|l| l.trim().split_once(':'))
        .filter(|(k, _)| k.starts_with("tx_queue_") && k.ends_with("_xdp_xmit_errors"))
        .filter_map(|(_, v)| v.trim().parse::<u64>().ok())
        .sum()
}

/// The drop counters of one device in `ip -s -j link` output.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LinkStats {
    pub rx_dropped: u64,
    pub tx_dropped: u64,
}

/// Parses `ip -s -j link show` (a JSON array of devices, each with `ifname` and
/// `stats64.rx` / `stats64.tx` objects holding `dropped`).
pub fn link_stats(json: &str) -> Result<Vec<(String, LinkStats)>, String> {
    let v: serde_json::Value = serde_json::from_str(json).map_err(|e| format!("`ip -s -j link`: {e}"))?;
    let devs = v.as_array().ok_or("`ip -s -j link`: not a JSON array")?;
    let mut out = Vec::with_capacity(devs.len());
    for d in devs {
        let name = d["ifname"].as_str().ok_or("`ip -s -j link`: a device without ifname")?;
        let dropped = |dir: &str| {
            d["stats64"][dir]["dropped"]
                .as_u64()
                .ok_or_else(|| format!("`ip -s -j link`: {name} has no stats64.{dir}.dropped"))
        };
        out.push((name.to_string(), LinkStats { rx_dropped: dropped("rx")?, tx_dropped: dropped("tx")? }));
    }
    Ok(out)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cpus_busy_time_is_its_user_system_and_interrupt_ticks() {
        // user nice system idle iowait irq softirq steal guest guest_nice
        let stat = "cpu  9 9 9 9 9 9 9 9 0 0\ncpu0 100 1 50 9000 7 3 40 500 20 0\ncpu1 10 0 5 100 0 0 2 0 0 0\n";
        assert_eq!(cpu_busy_s(stat, 0, 100.0), Some(1.94));
        assert_eq!(cpu_busy_s(stat, 1, 100.0), Some(0.17));
        assert_eq!(cpu_busy_s(stat, 2, 100.0), None);
        assert_eq!(cpu_busy_s("cpu1 x y\n", 1, 100.0), None);
        // Steal is the eighth figure; a line without one has none.
        assert_eq!(cpu_steal_s(stat, 0, 100.0), Some(5.0));
        assert_eq!(cpu_steal_s(stat, 1, 100.0), Some(0.0));
        assert_eq!(cpu_steal_s("cpu0 1 2 3 4\n", 0, 100.0), Some(0.0));
        assert_eq!(cpu_steal_s(stat, 2, 100.0), None);
    }

    #[test]
    fn xdp_xmit_errors_are_summed_over_the_queues() {
        let out = "NIC statistics:\n     peer_ifindex: 39\n     rx_queue_0_xdp_tx_errors: 7\n     \
                   tx_queue_0_xdp_xmit: 100\n     tx_queue_0_xdp_xmit_errors: 12\n     \
                   tx_queue_1_xdp_xmit_errors: 3\n";
        assert_eq!(xdp_xmit_errors(out), 15);
        assert_eq!(xdp_xmit_errors("no such device"), 0);
    }

    /// `ip -s -j link show` as iproute2 6.1 prints it (a veth pair in a new namespace),
    /// with drop counters set by hand.
    const IP_JSON: &str = r#"[{"ifindex":1,"ifname":"lo","flags":["LOOPBACK"],"mtu":65536,"stats64":{"rx":{"bytes":0,"packets":0,"errors":0,"dropped":0,"over_errors":0,"multicast":0},"tx":{"bytes":0,"packets":0,"errors":0,"dropped":0,"carrier_errors":0,"collisions":0}}},{"ifindex":2,"link":"dut0","ifname":"dut1","flags":["BROADCAST","MULTICAST","M-DOWN"],"mtu":1500,"stats64":{"rx":{"bytes":0,"packets":0,"errors":0,"dropped":3,"over_errors":0,"multicast":0},"tx":{"bytes":10,"packets":1,"errors":0,"dropped":316,"carrier_errors":0,"collisions":0}}},{"ifindex":3,"ifname":"dut0","stats64":{"rx":{"bytes":0,"packets":0,"errors":0,"dropped":1791409,"over_errors":0,"multicast":0},"tx":{"bytes":0,"packets":0,"errors":0,"dropped":0,"carrier_errors":0,"collisions":0}}}]"#;

    #[test]
    fn link_stats_reads_each_devices_drops() {
        let v = link_stats(IP_JSON).unwrap();
        let names: Vec<&str> = v.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["lo", "dut1", "dut0"]);
        assert_eq!(v[1].1, LinkStats { rx_dropped: 3, tx_dropped: 316 });
        assert_eq!(v[2].1, LinkStats { rx_dropped: 1_791_409, tx_dropped: 0 });
    }

    #[test]
    fn link_stats_errors_name_what_is_missing() {
        assert!(link_stats("{}").unwrap_err().contains("not a JSON array"));
        let e = link_stats(r#"[{"ifname":"x","stats64":{"rx":{"dropped":1}}}]"#).unwrap_err();
        assert!(e.contains("x has no stats64.tx.dropped"), "{e}");
        assert!(link_stats("[").is_err());
    }

    #[test]
    fn drops_since_is_the_difference() {
        let a = LinkDrops { dut0_rx: 10, tester_rx: 5 };
        let b = LinkDrops { dut0_rx: 25, tester_rx: 5 };
        assert_eq!(a.since(b), LinkDrops { dut0_rx: 15, tester_rx: 0 });
        // A counter that went backwards (a device re-created) is no negative loss.
        assert_eq!(b.since(a), LinkDrops { dut0_rx: 0, tester_rx: 0 });
    }
}
