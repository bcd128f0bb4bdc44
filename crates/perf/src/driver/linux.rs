//! The Linux kernel as the forwarder: the behaviour's lines applied to the SUT
//! namespace's kernel, dut0's receive work on the SUT CPU ([`Testbed::steer_sut_rx`]).

use super::{apply_to_kernel, Forwarder};
use crate::model::Behavior;
use crate::plan;
use crate::testbed::Testbed;

pub struct Linux;

impl Forwarder for Linux {
    fn name(&self) -> &str {
        "linux"
    }

    fn start(&mut self, tb: &Testbed, b: Behavior) -> Result<Vec<String>, String> {
        if let Some(why) = plan::unsupported("linux", b) {
            return Err(why.to_string());
        }
        // An End.BPF row's object, compiled for iproute2 to load (by its whole path).
        let objects = std::env::temp_dir().join(format!("{}-linux-bpf", tb.sut));
        if let Some(f) = b.bpf() {
            crate::bpf_objects::build(&objects, f)?;
        }
        let applied = apply_to_kernel(tb, &tb.sut, &plan::config_in(b, &tb.tg1_mac, &objects), false);
        // The kernel holds the program once the route is in: the file is not needed.
        let _ = std::fs::remove_dir_all(&objects);
        applied?;
        Ok(tb.steer_sut_rx())
    }

    fn stop(&mut self, _tb: &Testbed) -> Result<(), String> {
        Ok(())
    }

    /// `ip -n SUT -batch -`: the kernel's table, as a routing daemon changes it.
    fn churn_command(&self, tb: &Testbed) -> Result<Vec<String>, String> {
        Ok(["ip", "-n", &tb.sut, "-batch", "-"].map(String::from).to_vec())
    }
}
