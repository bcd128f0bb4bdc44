//! The port of a device that is gone: what a worker holds in its place while the device
//! is absent (deleted, or renamed away), until the link follower ([`super::links`])
//! re-attaches it. It receives nothing, has no descriptor to poll (so an idle worker
//! sleeps instead of spinning on a dead socket's error), and drops what is sent to it,
//! counting each frame in [`PortStats::tx_absent`].

use std::os::fd::RawFd;

use sr6_core::packet::PacketBuf;
use sr6_io::live::{Port, PortStats};

/// See the module docs.
#[derive(Debug)]
pub struct AbsentPort {
    ifname: String,
    dropped: u64,
}

impl AbsentPort {
    pub fn new(ifname: &str) -> AbsentPort {
        AbsentPort { ifname: ifname.to_string(), dropped: 0 }
    }
}

impl Port for AbsentPort {
    fn ifname(&self) -> &str {
        &self.ifname
    }

    fn rx_burst(&mut self, _bufs: &mut [PacketBuf]) -> std::io::Result<usize> {
        Ok(0)
    }

    fn tx_queue(&mut self, _frame: &[u8]) -> bool {
        self.dropped += 1;
        false
    }

    fn tx_flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }

    /// Negative: poll(2) ignores the entry.
    fn fd(&self) -> RawFd {
        -1
    }

    fn stats(&self) -> PortStats {
        PortStats { tx_absent: self.dropped, ..PortStats::default() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drops_and_counts_what_it_is_given() {
        let mut p = AbsentPort::new("eth1");
        let mut bufs = vec![PacketBuf::new()];
        assert_eq!(p.rx_burst(&mut bufs).ok(), Some(0));
        assert!(!p.tx_queue(&[0; 60]));
        assert!(!p.tx_queue(&[0; 60]));
        assert!(p.tx_flush().is_ok());
        assert_eq!((p.stats().tx_absent, p.stats().tx, p.fd(), p.ifname()), (2, 0, -1, "eth1"));
    }
}
