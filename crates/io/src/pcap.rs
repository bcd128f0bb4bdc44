//! pcap files in and out (readable by tcpdump, tshark and scapy). Input must be
//! Ethernet; output is Ethernet with microsecond timestamps, one file per device plus
//! `local.pcap` for frames delivered to the host.

use std::borrow::Cow;
use std::fs::File;
use std::io::{BufReader, BufWriter};
use std::path::{Path, PathBuf};
use std::time::Duration;

use pcap_file::pcap::{PcapPacket, PcapReader, PcapWriter};
use pcap_file::{DataLink, TsResolution};

use super::{IoError, RxBackend, TxBackend};
use sr6_core::drop::DropReason;
use sr6_core::packet::{DevId, PacketBuf, Verdict};

/// The frames of a pcap file, read as libpcap (tcpdump, tshark) reads them: a record's
/// fraction of a second is not checked against one second (writers that round
/// 999,999.6 µs up write 1,000,000; it carries into the seconds), and its original
/// length is not checked (a capture with a snap length has frames shorter than it; sr6
/// gets what was captured). The `pcap-file` crate's own packet check refuses both, so
/// records are read raw and converted here.
pub struct PcapFile {
    path: String,
    reader: PcapReader<BufReader<File>>,
    nanos: bool,
}

/// A frame of a pcap file: its timestamp in nanoseconds and its bytes.
pub type Frame<'a> = (u64, Cow<'a, [u8]>);

/// libpcap's largest snap length: a record claiming more is corrupt.
pub const MAX_RECORD: u32 = 262_144;

impl PcapFile {
    pub fn open(path: &Path) -> Result<Self, IoError> {
        let p = path.display().to_string();
        let f = File::open(path).map_err(|e| IoError::File { path: p.clone(), source: e })?;
        let reader = PcapReader::new(BufReader::new(f))
            .map_err(|e| IoError::Pcap { path: p.clone(), message: e.to_string() })?;
        let nanos = reader.header().ts_resolution == TsResolution::NanoSecond;
        Ok(PcapFile { path: p, reader, nanos })
    }

    pub fn datalink(&self) -> DataLink {
        self.reader.header().datalink
    }

    /// The next frame, `None` at the end of the file.
    pub fn next_frame(&mut self) -> Option<Result<Frame<'_>, IoError>> {
        let r = match self.reader.next_raw_packet()? {
            Ok(r) => r,
            Err(e) => return Some(Err(IoError::Pcap { path: self.path.clone(), message: e.to_string() })),
        };
        if r.incl_len > MAX_RECORD {
            let message = format!("a record of {} bytes, over libpcap's maximum of {MAX_RECORD}", r.incl_len);
            return Some(Err(IoError::Pcap { path: self.path.clone(), message }));
        }
        let frac_ns = u64::from(r.ts_frac) * if self.nanos { 1 } else { 1000 };
        let ts = u64::from(r.ts_sec) * 1_000_000_000 + frac_ns;
        Some(Ok((ts, r.data)))
    }
}

/// Reads Ethernet frames from a pcap file as if received on one device.
pub struct PcapSource {
    file: PcapFile,
    in_dev: DevId,
    /// Timestamp of the last frame read, in nanoseconds.
    pub last_ts_ns: u64,
    /// Frames that did not fit a buffer (truncated and counted by the caller).
    pub oversized: u64,
}

impl PcapSource {
    pub fn open(path: &Path, in_dev: DevId) -> Result<Self, IoError> {
        let file = PcapFile::open(path)?;
        let dl = file.datalink();
        if dl != DataLink::ETHERNET {
            return Err(IoError::LinkType { path: file.path, linktype: format!("{dl:?}") });
        }
        Ok(PcapSource { file, in_dev, last_ts_ns: 0, oversized: 0 })
    }

    /// Reads every frame (for `sr6 bench`, which replays them from memory).
    pub fn read_all(mut self) -> Result<Vec<Vec<u8>>, IoError> {
        let mut v = Vec::new();
        while let Some(p) = self.file.next_frame() {
            v.push(p?.1.into_owned());
        }
        Ok(v)
    }
}

impl RxBackend for PcapSource {
    fn rx_batch(&mut self, batch: &mut [PacketBuf]) -> Result<usize, IoError> {
        let mut n = 0;
        for b in batch.iter_mut() {
            match self.file.next_frame() {
                None => break,
                Some(Err(e)) => return Err(e),
                Some(Ok((ts, data))) => {
                    self.last_ts_ns = ts;
                    if !b.load(&data, self.in_dev) {
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
        w.write_packet(&pkt)
            .map(|_| ())
            .map_err(|e| IoError::Pcap { path: path.display().to_string(), message: e.to_string() })
    }

    /// Flushes every file.
    pub fn finish(self) -> Result<(), IoError> {
        for (p, w) in self.devs.into_iter().chain(std::iter::once(self.local)) {
            let mut inner = w.into_writer();
            std::io::Write::flush(&mut inner)
                .map_err(|e| IoError::File { path: p.display().to_string(), source: e })?;
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A classic little-endian pcap file (`nanos`: the nanosecond magic) of `records`
    /// (ts_sec, ts_frac, incl_len, orig_len, data), written byte by byte.
    fn file(name: &str, nanos: bool, records: &[(u32, u32, u32, u32, &[u8])]) -> PathBuf {
        let mut b = Vec::new();
        b.extend_from_slice(&(if nanos { 0xa1b2_3c4d_u32 } else { 0xa1b2_c3d4 }).to_le_bytes());
        b.extend_from_slice(&[2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
        b.extend_from_slice(&65535u32.to_le_bytes());
        b.extend_from_slice(&1u32.to_le_bytes());
        for (s, f, i, o, d) in records {
            for v in [s, f, i, o] {
                b.extend_from_slice(&v.to_le_bytes());
            }
            b.extend_from_slice(d);
        }
        let p = std::env::temp_dir().join(format!("sr6-pcap-test-{}-{name}.pcap", std::process::id()));
        std::fs::write(&p, b).unwrap();
        p
    }

    fn frames(p: &Path) -> Vec<Result<(u64, Vec<u8>), String>> {
        let mut f = PcapFile::open(p).unwrap();
        let mut v = Vec::new();
        while let Some(r) = f.next_frame() {
            let stop = r.is_err();
            v.push(r.map(|(t, d)| (t, d.into_owned())).map_err(|e| e.to_string()));
            if stop {
                break;
            }
        }
        let _ = std::fs::remove_file(p);
        v
    }

    #[test]
    fn a_fraction_of_a_whole_second_carries_and_short_records_are_read() {
        let p = file("us", false, &[(7, 1_000_000, 2, 2, &[1, 2]), (7, 999_999, 1, 60, &[3])]);
        assert_eq!(frames(&p), vec![Ok((8_000_000_000, vec![1, 2])), Ok((7_999_999_000, vec![3]))]);
        let p = file("ns", true, &[(5, 1_000_000_000, 1, 1, &[9]), (5, 1, 1, 1, &[8])]);
        assert_eq!(frames(&p), vec![Ok((6_000_000_000, vec![9])), Ok((5_000_000_001, vec![8]))]);
    }

    #[test]
    fn a_record_over_libpcaps_maximum_is_an_error() {
        let big = vec![0u8; MAX_RECORD as usize + 1];
        let p = file("big", false, &[(1, 0, 1, 1, &[0]), (1, 0, MAX_RECORD + 1, MAX_RECORD + 1, &big)]);
        let v = frames(&p);
        assert_eq!(v[0], Ok((1_000_000_000, vec![0])));
        let e = v[1].as_ref().unwrap_err();
        assert!(e.contains("262145 bytes") && e.contains("not a readable pcap file"), "{e}");
        // One cut short is an error too (the reader's own).
        let p = file("short", false, &[(1, 0, 10, 10, &[0; 4])]);
        assert!(frames(&p)[0].is_err());
    }
}
