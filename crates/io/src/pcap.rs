//! pcap files in and out (readable by tcpdump, tshark and scapy). Input must be
//! Ethernet; output is Ethernet with microsecond timestamps, one file per device plus
//! `local.pcap` for frames delivered to the host.

use std::fs::File;
use std::io::{BufReader, BufWriter};
use std::path::{Path, PathBuf};
use std::time::Duration;

use pcap_file::pcap::{PcapPacket, PcapReader, PcapWriter};
use pcap_file::DataLink;

use super::{IoError, RxBackend, TxBackend};
use sr6_core::drop::DropReason;
use sr6_core::packet::{DevId, PacketBuf, Verdict};

/// Reads Ethernet frames from a pcap file as if received on one device.
pub struct PcapSource {
    path: String,
    reader: PcapReader<BufReader<File>>,
    in_dev: DevId,
    /// Timestamp of the last frame read, in nanoseconds.
    pub last_ts_ns: u64,
    /// Frames that did not fit a buffer (truncated and counted by the caller).
    pub oversized: u64,
}

impl PcapSource {
    pub fn open(path: &Path, in_dev: DevId) -> Result<Self, IoError> {
        let p = path.display().to_string();
        let f = File::open(path).map_err(|e| IoError::File { path: p.clone(), source: e })?;
        let reader = PcapReader::new(BufReader::new(f)).map_err(|e| IoError::Pcap { path: p.clone(), message: e.to_string() })?;
        let dl = reader.header().datalink;
        if dl != DataLink::ETHERNET {
            return Err(IoError::LinkType { path: p, linktype: format!("{dl:?}") });
        }
        Ok(PcapSource { path: p, reader, in_dev, last_ts_ns: 0, oversized: 0 })
    }

    /// Reads every frame (for `sr6 bench`, which replays them from memory).
    pub fn read_all(mut self) -> Result<Vec<Vec<u8>>, IoError> {
        let mut v = Vec::new();
        while let Some(p) = self.reader.next_packet() {
            let p = p.map_err(|e| IoError::Pcap { path: self.path.clone(), message: e.to_string() })?;
            v.push(p.data.into_owned());
        }
        Ok(v)
    }
}

impl RxBackend for PcapSource {
    fn rx_batch(&mut self, batch: &mut [PacketBuf]) -> Result<usize, IoError> {
        let mut n = 0;
        for b in batch.iter_mut() {
            match self.reader.next_packet() {
                None => break,
                Some(Err(e)) => return Err(IoError::Pcap { path: self.path.clone(), message: e.to_string() }),
                Some(Ok(p)) => {
                    self.last_ts_ns = p.timestamp.as_nanos() as u64;
                    if !b.load(&p.data, self.in_dev) {
                        // Larger than a buffer: dropped, not processed truncated.
                        self.oversized += 1;
                        b.condemn(DropReason::TooBig);
                    }
                    b.ts_ns = self.last_ts_ns;
                    n += 1;
                }
            }
        }
        Ok(n)
    }
}

/// Writes transmitted frames to `DIR/DEV.pcap` and local ones to `DIR/local.pcap`.
pub struct PcapSinks {
    devs: Vec<(PathBuf, PcapWriter<BufWriter<File>>)>,
    local: (PathBuf, PcapWriter<BufWriter<File>>),
}

fn writer(path: &Path) -> Result<PcapWriter<BufWriter<File>>, IoError> {
    let p = path.display().to_string();
    let f = File::create(path).map_err(|e| IoError::File { path: p.clone(), source: e })?;
    PcapWriter::new(BufWriter::new(f)).map_err(|e| IoError::Pcap { path: p, message: e.to_string() })
}

impl PcapSinks {
    /// Creates one (empty) file per device name, plus `local.pcap`, in `dir`.
    pub fn create(dir: &Path, devices: &[String]) -> Result<Self, IoError> {
        std::fs::create_dir_all(dir).map_err(|e| IoError::File { path: dir.display().to_string(), source: e })?;
        let mut devs = Vec::new();
        for d in devices {
            let p = dir.join(format!("{d}.pcap"));
            devs.push((p.clone(), writer(&p)?));
        }
        let lp = dir.join("local.pcap");
        let local = (lp.clone(), writer(&lp)?);
        Ok(PcapSinks { devs, local })
    }

    fn write(path: &Path, w: &mut PcapWriter<BufWriter<File>>, ts_ns: u64, data: &[u8]) -> Result<(), IoError> {
        let pkt = PcapPacket::new(Duration::from_nanos(ts_ns), data.len() as u32, data);
        w.write_packet(&pkt).map(|_| ()).map_err(|e| IoError::Pcap { path: path.display().to_string(), message: e.to_string() })
    }

    /// Flushes every file.
    pub fn finish(self) -> Result<(), IoError> {
        for (p, w) in self.devs.into_iter().chain(std::iter::once(self.local)) {
            let mut inner = w.into_writer();
            std::io::Write::flush(&mut inner).map_err(|e| IoError::File { path: p.display().to_string(), source: e })?;
        }
        Ok(())
    }
}

impl TxBackend for PcapSinks {
    fn tx_batch(&mut self, batch: &[PacketBuf]) -> Result<(), IoError> {
        for b in batch {
            match b.verdict {
                Verdict::Tx(d) => {
                    if let Some((p, w)) = self.devs.get_mut(d as usize) {
                        Self::write(p, w, b.ts_ns, b.data())?;
                    }
                }
                Verdict::Local => Self::write(&self.local.0, &mut self.local.1, b.ts_ns, b.data())?,
                Verdict::Drop(_) | Verdict::Pending | Verdict::Resolve(_) => {}
            }
        }
        Ok(())
    }
}
