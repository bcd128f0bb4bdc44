//! Forwarder drivers: each turns a behaviour into the SUT's configuration and starts and
//! stops its forwarder. Adding a forwarder (VPP, another user-space router) means one new
//! driver. The configuration is the same iproute2 text for all of them
//! ([`crate::plan::config`]): the kernel gets it line by line, sr6 as its config file.

mod linux;
mod sr6;

pub use linux::Linux;
pub use sr6::Sr6;

use crate::experiment::Experiment;
use crate::model::Behavior;
use crate::testbed::Testbed;

/// One forwarder under test.
pub trait Forwarder {
    /// `linux`, `sr6`, ...
    fn name(&self) -> &str;
    /// Configures the SUT for `b` and starts forwarding. Returns warnings (e.g. CPU
    /// placement that could not be guaranteed).
    fn start(&mut self, tb: &Testbed, b: Behavior) -> Result<Vec<String>, String>;
    /// Stops forwarding (the testbed is then discarded).
    fn stop(&mut self, tb: &Testbed) -> Result<(), String>;
    /// Checks, where the forwarder can tell, that the state behaviour `b` needs before
    /// its trials is there once the tester has set it up: a dynamic SR proxy's cache,
    /// filled by the tester's warm-up frame ([`Behavior::needs_warm_up`]). Default:
    /// nothing to check.
    fn check_warm_up(&self, _b: Behavior) -> Result<(), String> {
        Ok(())
    }
    /// The command that applies a batch of route changes (`route add|del ...` lines on
    /// its standard input) to the running forwarder ([`crate::churn`]).
    fn churn_command(&self, _tb: &Testbed) -> Result<Vec<String>, String> {
        Err(format!("the {} forwarder takes no route changes", self.name()))
    }
}

/// A driver by name; `sr6_bin` and the experiment's `sr6_*` keys configure the sr6
/// driver.
pub fn by_name(name: &str, sr6_bin: &std::path::Path, exp: &Experiment) -> Result<Box<dyn Forwarder>, String> {
    match name {
        "linux" | "kernel" => Ok(Box::new(Linux)),
        "sr6" | "sr6-afxdp" => {
            let mut s = if name == "sr6" { Sr6::new(sr6_bin) } else { Sr6::af_xdp_only(sr6_bin) };
            s.backend = exp.sr6_backend.clone();
            s.ring_frames = exp.sr6_ring_frames;
            s.overload_priority = exp.sr6_overload_priority;
            Ok(Box::new(s))
        }
        other => Err(format!("unknown forwarder `{other}` (linux, sr6 or sr6-afxdp)")),
    }
}

/// Applies configuration lines to the kernel of namespace `ns`. With `addrs_only`, only
/// the `addr add` lines (what a user-space forwarder's kernel needs to answer neighbour
/// discovery and ARP).
pub fn apply_to_kernel(tb: &Testbed, ns: &str, text: &str, addrs_only: bool) -> Result<(), String> {
    for raw in text.lines() {
        let line = raw.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let mut w: Vec<&str> = line.split_whitespace().collect();
        if w[0] == "sysctl" {
            if !addrs_only {
                tb.exec(ns, &w)?;
            }
            continue;
        }
        if w[0] == "ip" {
            w.remove(0);
        }
        let opts: Vec<&str> = w.iter().take_while(|x| x.starts_with('-')).copied().collect();
        let rest: Vec<&str> = w[opts.len()..].to_vec();
        let is_addr = rest.first().is_some_and(|o| "address".starts_with(o) && !o.is_empty());
        if addrs_only && !is_addr {
            continue;
        }
        // `sr hmac set KEYID ALG SECRET` (sr6's form): iproute2 prompts for the secret.
        if let ["sr", "hmac", "set", key, alg, secret] = rest[..] {
            let mut argv = vec!["ip", "-n", ns];
            argv.extend(opts);
            argv.extend(["sr", "hmac", "set", key, alg]);
            crate::testbed::sh_input(&argv, &format!("{secret}\n"))?;
            continue;
        }
        let mut argv = vec!["ip", "-n", ns];
        argv.extend(opts);
        argv.extend(rest.iter());
        if is_addr && rest.iter().any(|x| x.contains(':') && x.contains('/')) {
            argv.push("nodad");
        }
        crate::testbed::sh(&argv)?;
    }
    Ok(())
}
