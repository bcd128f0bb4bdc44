//! sr6-testnet: network namespaces for sr6's root tests (a dev-dependency only).
//!
//! The tests that need the kernel — AF_XDP and AF_PACKET ports, netlink, the tester's
//! generator and receivers — build their own small networks: namespaces joined by veth
//! pairs. This crate holds what they share:
//!
//! - [`Netns::new`]: a namespace with a unique name (`sr6t-<pid>-<n>-<tag>`) (`lo`
//!   down, as the kernel makes it), deleted when the guard is dropped — also when the test fails, since a panic
//!   unwinds through it. Namespaces of earlier test processes that were killed before
//!   their guards ran (their pid is gone) are deleted first.
//! - [`Netns::add_veth`]: a veth pair between two namespaces (or inside one).
//! - [`Netns::run`]: runs a closure on a thread that has entered the namespace; sockets,
//!   BPF links and netlink requests made there belong to it and can be used from any
//!   thread afterwards.
//! - [`ip`], [`Netns::ip`], [`Netns::sh`]: iproute2 and shell commands that panic with
//!   their stderr when they fail.
//!
//! The tests using it are `#[ignore = "needs root and network namespaces"]`: run them as
//! root with `cargo test -- --include-ignored`. Run without root, they fail loudly
//! ([`require_root`]) instead of passing without having run.

#![forbid(unsafe_code)]

use std::fs::File;
use std::os::fd::AsFd;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};

/// The prefix of every namespace this crate makes.
const PREFIX: &str = "sr6t-";

/// Whether this process runs as root (effective uid 0).
pub fn is_root() -> bool {
    rustix::process::geteuid().is_root()
}

/// Panics, saying what to do, unless this process is root and `ip` (iproute2) runs.
pub fn require_root() {
    assert!(
        is_root(),
        "this test needs root and network namespaces: run it as root (`cargo test -- --include-ignored`)"
    );
    let ok = Command::new("ip").arg("-V").output().is_ok_and(|o| o.status.success());
    assert!(ok, "this test needs the `ip` command (iproute2): scripts/setup.sh installs it");
}

/// Runs `ip ARGS`; panics with its stderr if it fails; returns its stdout.
pub fn ip(args: &[&str]) -> String {
    let out = Command::new("ip").args(args).output().expect("running ip");
    assert!(out.status.success(), "ip {}: {}", args.join(" "), String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `aa:bb:cc:dd:ee:ff`.
pub fn mac_str(mac: [u8; 6]) -> String {
    mac.iter().map(|b| format!("{b:02x}")).collect::<Vec<_>>().join(":")
}

/// Runs `f` on a new thread that has entered the network namespace called `name`
/// (`/var/run/netns/NAME`, as `ip netns add` makes it) and returns its result, or
/// resumes its panic.
pub fn in_netns<T: Send>(name: &str, f: impl FnOnce() -> T + Send) -> T {
    let path = format!("/var/run/netns/{name}");
    std::thread::scope(|s| {
        s.spawn(|| {
            let file = File::open(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
            rustix::thread::move_into_link_name_space(file.as_fd(), Some(rustix::thread::LinkNameSpaceType::Network))
                .unwrap_or_else(|e| panic!("setns {path}: {e}"));
            f()
        })
        .join()
        .unwrap_or_else(|p| std::panic::resume_unwind(p))
    })
}

/// A network namespace, deleted (with the devices in it, and so the veth pairs that
/// have an end there) when dropped.
#[derive(Debug)]
pub struct Netns {
    name: String,
}

impl Netns {
    /// A new namespace named `sr6t-<pid>-<n>-<tag>` (its `lo` down, as the kernel makes
    /// it: [`Netns::up`] it if needed). Panics (saying what is missing) if this process
    /// is not root.
    pub fn new(tag: &str) -> Netns {
        require_root();
        remove_orphans();
        static SEQ: AtomicU32 = AtomicU32::new(0);
        let n = SEQ.fetch_add(1, Ordering::Relaxed);
        let name = format!("{PREFIX}{}-{n}-{tag}", std::process::id());
        ip(&["netns", "add", &name]);
        Netns { name }
    }

    /// Its name (for `ip -n NAME`, `ip netns exec NAME`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Runs `ip -n NAME ARGS` (see [`ip`]).
    pub fn ip(&self, args: &[&str]) -> String {
        let mut all = vec!["-n", self.name.as_str()];
        all.extend_from_slice(args);
        ip(&all)
    }

    /// Runs `sh -c CMD` in the namespace (`ip netns exec`); panics if it fails.
    pub fn sh(&self, cmd: &str) -> String {
        ip(&["netns", "exec", &self.name, "sh", "-c", cmd])
    }

    /// Runs `f` on a thread in this namespace (see [`in_netns`]).
    pub fn run<T: Send>(&self, f: impl FnOnce() -> T + Send) -> T {
        in_netns(&self.name, f)
    }

    /// Adds a veth pair: `dev` here, `peer_dev` in `peer` (which may be this namespace
    /// too), each with `queues` transmit and receive queues when given. Both ends are
    /// left down (set addresses first, then [`Netns::up`]).
    pub fn add_veth(&self, dev: &str, peer: &Netns, peer_dev: &str, queues: Option<u32>) {
        let q = queues.map(|q| q.to_string());
        let mut args = vec!["link", "add", dev];
        if let Some(q) = &q {
            args.extend_from_slice(&["numtxqueues", q, "numrxqueues", q]);
        }
        args.extend_from_slice(&["type", "veth", "peer", "name", peer_dev]);
        if let Some(q) = &q {
            args.extend_from_slice(&["numtxqueues", q, "numrxqueues", q]);
        }
        args.extend_from_slice(&["netns", peer.name()]);
        self.ip(&args);
    }

    /// Sets the MAC address of `dev`.
    pub fn set_mac(&self, dev: &str, mac: [u8; 6]) {
        self.ip(&["link", "set", dev, "address", &mac_str(mac)]);
    }

    /// Brings `dev` up.
    pub fn up(&self, dev: &str) {
        self.ip(&["link", "set", dev, "up"]);
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        let _ = Command::new("ip").args(["netns", "del", &self.name]).stderr(Stdio::null()).status();
    }
}

/// Deletes the namespaces of earlier test processes that were killed before their
/// guards could run: `sr6t-<pid>-...` whose pid is no longer alive.
fn remove_orphans() {
    let Ok(out) = Command::new("ip").args(["netns", "list"]).output() else {
        return;
    };
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let name = line.split_whitespace().next().unwrap_or("");
        let Some(pid) = name.strip_prefix(PREFIX).and_then(|r| r.split('-').next()) else {
            continue;
        };
        if pid.parse::<u32>().is_ok() && !std::path::Path::new(&format!("/proc/{pid}")).exists() {
            let _ = Command::new("ip").args(["netns", "del", name]).stderr(Stdio::null()).status();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mac_strings() {
        assert_eq!(mac_str([0x02, 0, 0xab, 0x10, 0xff, 1]), "02:00:ab:10:ff:01");
    }

    /// Two namespaces, a pair between them, a thread in each sees only its end; both are
    /// gone after the guards drop.
    #[test]
    #[ignore = "needs root and network namespaces"]
    fn namespaces_veth_and_cleanup() {
        let a = Netns::new("selftest-a");
        let b = Netns::new("selftest-b");
        assert_ne!(a.name(), b.name());
        a.add_veth("t0", &b, "t1", Some(2));
        a.set_mac("t0", [2, 0, 0, 0, 0, 1]);
        a.up("t0");
        b.up("t1");
        // The devices of the calling thread's namespace.
        let here =
            |dev: &str| std::fs::read_to_string("/proc/thread-self/net/dev").unwrap().contains(&format!("{dev}:"));
        assert!(a.run(|| here("t0") && !here("t1")));
        assert!(b.run(|| here("t1") && !here("t0")));
        assert!(a.ip(&["link", "show", "t0"]).contains("02:00:00:00:00:01"));
        assert!(a.sh("cat /sys/class/net/t0/address").contains("02:00:00:00:00:01"));
        let names = [a.name().to_string(), b.name().to_string()];
        drop(a);
        drop(b);
        let list = ip(&["netns", "list"]);
        for n in names {
            assert!(!list.contains(&n), "{n} left behind: {list}");
        }
    }
}
