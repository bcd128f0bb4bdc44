//! sr6 as the forwarder: `sr6 run` in the SUT namespace on the behaviour's lines, AF_XDP,
//! one worker pinned to the SUT CPU; the SUT kernel keeps only the addresses (it answers
//! neighbour discovery) with forwarding off.
//!
//! The XDP program runs in native (driver) mode: on dut0 it runs in the device's NAPI
//! thread, which the testbed pins to the SUT CPU ([`Testbed::steer_sut_rx`]), exactly
//! where the kernel forwarder's receive work runs. (Without that thread a veth runs a
//! receiver's XDP on the sender's CPU, and the tester would pay for part of sr6's work.)

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::{apply_to_kernel, Forwarder};
use crate::model::Behavior;
use crate::plan::{self, DUT0};
use crate::testbed::Testbed;

pub struct Sr6 {
    bin: PathBuf,
    /// `sr6` (the XDP tier on: `--fast-path xdp`) or `sr6-afxdp` (`--fast-path off`).
    name: &'static str,
    /// `--backend` of `sr6 run`.
    pub backend: String,
    pub batch: usize,
    /// `--ring`: slots per AF_XDP ring (the experiment's `sr6_ring_frames`).
    pub ring_frames: u32,
    /// `--overload-priority` (0: not given; the experiment's `sr6_overload_priority`).
    pub overload_priority: u32,
    child: Option<Child>,
    dir: Option<PathBuf>,
}

impl Sr6 {
    /// `sr6 run` with its default tiers: the XDP tier, and the AF_XDP tier behind it.
    pub fn new(bin: &Path) -> Sr6 {
        Sr6 {
            bin: bin.to_path_buf(),
            name: "sr6",
            backend: "af_xdp".into(),
            batch: 64,
            ring_frames: 16384,
            overload_priority: 0,
            child: None,
            dir: None,
        }
    }
}

impl Sr6 {
    /// `sr6 run --fast-path off`: the AF_XDP tier alone (forwarder `sr6-afxdp`).
    pub fn af_xdp_only(bin: &Path) -> Sr6 {
        let mut s = Sr6::new(bin);
        s.name = "sr6-afxdp";
        s
    }

    /// The output of `sr6 ctl show WHAT --json` from the running `sr6 run`.
    fn show_json(&self, what: &str) -> Result<String, String> {
        let sock = self.dir.as_ref().ok_or("sr6 is not running")?.join("sut.sock");
        let o = Command::new(&self.bin)
            .args(["ctl", "--socket"])
            .arg(&sock)
            .args(["show", what, "--json"])
            .output()
            .map_err(|e| format!("sr6 ctl show {what}: {e}"))?;
        if !o.status.success() {
            return Err(format!("sr6 ctl show {what}: {}", String::from_utf8_lossy(&o.stderr).trim()));
        }
        Ok(String::from_utf8_lossy(&o.stdout).into_owned())
    }
}

impl Forwarder for Sr6 {
    fn name(&self) -> &str {
        self.name
    }

    fn start(&mut self, tb: &Testbed, b: Behavior) -> Result<Vec<String>, String> {
        let dir = std::env::temp_dir().join(format!("{}-sr6", tb.sut));
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        // An End.BPF row's object, beside the configuration that names it.
        if let Some(f) = b.bpf() {
            crate::bpf_objects::build(&dir, f)?;
        }
        let text = plan::config(b, &tb.tg1_mac);
        apply_to_kernel(tb, &tb.sut, &text, true)?;
        let mut warnings = tb.steer_sut_rx();
        let conf = dir.join("sut.conf");
        let sock = dir.join("sut.sock");
        let log = dir.join("sut.log");
        std::fs::write(&conf, &text).map_err(|e| format!("{}: {e}", conf.display()))?;
        let logf = std::fs::File::create(&log).map_err(|e| format!("{}: {e}", log.display()))?;
        let cpu = tb.cpus.sut.to_string();
        let batch = self.batch.to_string();
        let ring = self.ring_frames.to_string();
        let overload = (self.overload_priority > 0).then(|| self.overload_priority.to_string());
        let fast_path = if self.name == "sr6-afxdp" { "off" } else { "xdp" };
        let child = Command::new("ip")
            .args(["netns", "exec", &tb.sut])
            .arg(&self.bin)
            .args(["run", "--config"])
            .arg(&conf)
            .arg("--socket")
            .arg(&sock)
            .args([
                "--backend",
                &self.backend,
                "--xdp-mode",
                "native",
                "--cpus",
                &cpu,
                "--batch",
                &batch,
                "--ring",
                &ring,
                "--fast-path",
                fast_path,
            ])
            .args(overload.iter().flat_map(|p| ["--overload-priority", p.as_str()]))
            .stdin(Stdio::null())
            .stdout(logf.try_clone().map_err(|e| e.to_string())?)
            .stderr(logf)
            .spawn()
            .map_err(|e| format!("starting {}: {e}", self.bin.display()))?;
        self.child = Some(child);
        self.dir = Some(dir);
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Some(c) = self.child.as_mut() {
                if let Ok(Some(st)) = c.try_wait() {
                    let l = std::fs::read_to_string(&log).unwrap_or_default();
                    return Err(format!("sr6 run exited ({st}):\n{l}"));
                }
            }
            let ok = Command::new(&self.bin)
                .args(["ctl", "--socket"])
                .arg(&sock)
                .args(["show", "status"])
                .output()
                .is_ok_and(|o| o.status.success());
            if ok {
                break;
            }
            if Instant::now() > deadline {
                let _ = self.stop(tb);
                return Err("sr6 run did not start within 20 s".into());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        if fast_path == "xdp" {
            let status = self.show_json("status")?;
            warnings.extend(tier_warning(&status, DUT0));
        }
        Ok(warnings)
    }

    /// `sr6 ctl show proxies --json`: the proxy of the row's SID must hold headers.
    fn check_warm_up(&self, b: Behavior) -> Result<(), String> {
        if !b.needs_warm_up() {
            return Ok(());
        }
        let proxies = self.show_json("proxies")?;
        let sid = plan::flow(b).dst6.map(|d| format!("{d}/128")).unwrap_or_default();
        cache_state(&proxies, &sid).and_then(|state| match state.as_str() {
            "headers" => Ok(()),
            s => Err(format!(
                "the cache of the proxy {sid} is `{s}` after the tester's warm-up frame (tg1 -> dut1): \
                 the frame did not reach it"
            )),
        })
    }

    /// `sr6 ctl batch -`: one change of the running tables a batch.
    fn churn_command(&self, _tb: &Testbed) -> Result<Vec<String>, String> {
        let sock = self.dir.as_ref().ok_or("sr6 is not running")?.join("sut.sock");
        Ok(vec![
            self.bin.display().to_string(),
            "ctl".into(),
            "--socket".into(),
            sock.display().to_string(),
            "batch".into(),
            "-".into(),
        ])
    }

    fn stop(&mut self, _tb: &Testbed) -> Result<(), String> {
        if let Some(mut c) = self.child.take() {
            // SIGTERM (sr6 run detaches its XDP programs and exits); kill(1) keeps
            // this crate free of unsafe code.
            let _ = Command::new("kill").args(["-TERM", &c.id().to_string()]).status();
            let deadline = Instant::now() + Duration::from_secs(10);
            loop {
                match c.try_wait() {
                    Ok(Some(_)) => break,
                    _ if Instant::now() > deadline => {
                        let _ = c.kill();
                        let _ = c.wait();
                        break;
                    }
                    _ => std::thread::sleep(Duration::from_millis(20)),
                }
            }
        }
        if let Some(d) = self.dir.take() {
            let _ = std::fs::remove_dir_all(d);
        }
        Ok(())
    }
}

/// The `cache.state` of the proxy of SID `sid` (`fc00::1/128`) in the output of `sr6 ctl
/// show proxies --json`.
fn cache_state(json: &str, sid: &str) -> Result<String, String> {
    let v: serde_json::Value = serde_json::from_str(json).map_err(|e| format!("sr6 ctl show proxies --json: {e}"))?;
    let p = v
        .as_array()
        .and_then(|a| a.iter().find(|p| p["sid"] == sid))
        .ok_or_else(|| format!("sr6 ctl show proxies lists no proxy {sid}"))?;
    p["cache"]["state"].as_str().map(str::to_string).ok_or_else(|| format!("the proxy {sid} has no cache"))
}

/// A warning when `sr6 run`'s XDP tier is not attached to `dev` (`sr6 ctl show status
/// --json`, its `tiers`): where the program did not load or attach (a kernel whose
/// verifier rejects it, a driver without XDP), `sr6 run` forwards in the AF_XDP tier
/// alone, and the row measures that tier, not both.
fn tier_warning(json: &str, dev: &str) -> Option<String> {
    let v: serde_json::Value = match serde_json::from_str(json) {
        Ok(v) => v,
        Err(e) => return Some(format!("sr6 ctl show status --json: {e}: which tier sr6 runs on {dev} is unknown")),
    };
    match v["tiers"][dev].as_str() {
        Some(s) if s.starts_with("xdp") => None,
        Some(s) => Some(format!("sr6 run's XDP tier is not on {dev} ({s}): this row measures the AF_XDP tier alone")),
        None => Some(format!("sr6 ctl show status names no tier for {dev}")),
    }
}

impl Drop for Sr6 {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cache_state_of_a_proxy() {
        // As sr6 ctl show proxies --json prints it (crates/sr6/src/report.rs).
        let json = r#"[
            {"sid": "fc00:2::1:11/128", "behaviour": "End.AM", "cache": null},
            {"sid": "fc00:2::2:e/128", "behaviour": "End.AD", "cache": {"state": "headers", "length": 80}},
            {"sid": "fc00:2::1:e/128", "behaviour": "End.AD", "cache": {"state": "empty"}}
        ]"#;
        assert_eq!(cache_state(json, "fc00:2::2:e/128").unwrap(), "headers");
        assert_eq!(cache_state(json, "fc00:2::1:e/128").unwrap(), "empty");
        assert!(cache_state(json, "fc00:2::1:11/128").unwrap_err().contains("no cache"));
        assert!(cache_state(json, "fc00::1/128").unwrap_err().contains("lists no proxy fc00::1/128"));
        assert!(cache_state("not json", "fc00::1/128").is_err());
        // The SID the driver asks for is the row's.
        let b = Behavior::parse("End.AD-return").unwrap();
        assert_eq!(plan::flow(b).dst6.unwrap().to_string(), "fc00:2::2:e");
    }

    #[test]
    fn a_device_outside_the_xdp_tier_is_warned_of() {
        // As sr6 ctl show status --json prints its tiers (crates/sr6/src/live/ctl.rs).
        let json = |dut0: &str| {
            format!(
                r#"{{"backend": "af_xdp", "tiers": {{"dut0": "{dut0}", "dut1": "xdp (native): receives into the XDP tier; sends from the XDP tier"}}}}"#
            )
        };
        let on = json("xdp (native): receives into the XDP tier; sends from the XDP tier");
        assert_eq!(tier_warning(&on, "dut0"), None);
        // An SR proxy's iif receives into the AF_XDP tier, the program still attached.
        let proxy = json("xdp (native): receives into the AF_XDP tier (the device's settings: an SR proxy's iif)");
        assert_eq!(tier_warning(&proxy, "dut0"), None);
        let off = json("af_xdp: the XDP tier's program is not attached");
        let w = tier_warning(&off, "dut0").unwrap();
        assert!(w.contains("not on dut0") && w.contains("AF_XDP tier alone") && w.contains("not attached"), "{w}");
        assert!(tier_warning(&on, "dut9").unwrap().contains("names no tier for dut9"));
        assert!(tier_warning("not json", "dut0").unwrap().contains("unknown"));
    }
}
