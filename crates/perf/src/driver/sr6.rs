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
use crate::plan;
use crate::testbed::Testbed;

pub struct Sr6 {
    bin: PathBuf,
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
    pub fn new(bin: &Path) -> Sr6 {
        Sr6 {
            bin: bin.to_path_buf(),
            backend: "af_xdp".into(),
            batch: 64,
            ring_frames: 16384,
            overload_priority: 0,
            child: None,
            dir: None,
        }
    }
}

impl Forwarder for Sr6 {
    fn name(&self) -> &str {
        "sr6"
    }

    fn start(&mut self, tb: &Testbed, b: Behavior) -> Result<Vec<String>, String> {
        let text = plan::config(b, &tb.tg1_mac);
        apply_to_kernel(tb, &tb.sut, &text, true)?;
        let warnings = tb.steer_sut_rx();
        let dir = std::env::temp_dir().join(format!("{}-sr6", tb.sut));
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let conf = dir.join("sut.conf");
        let sock = dir.join("sut.sock");
        let log = dir.join("sut.log");
        std::fs::write(&conf, &text).map_err(|e| format!("{}: {e}", conf.display()))?;
        let logf = std::fs::File::create(&log).map_err(|e| format!("{}: {e}", log.display()))?;
        let cpu = tb.cpus.sut.to_string();
        let batch = self.batch.to_string();
        let ring = self.ring_frames.to_string();
        let overload = (self.overload_priority > 0).then(|| self.overload_priority.to_string());
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
        Ok(warnings)
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

impl Drop for Sr6 {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}
