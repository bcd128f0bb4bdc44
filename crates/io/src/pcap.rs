//! pcap files in and out (readable by tcpdump, tshark and scapy). Input is pcap or
//! pcapng, and must be Ethernet; output is Ethernet with microsecond timestamps, one file per device plus
//! `local.pcap` for frames delivered to the host.

use std::borrow::Cow;
use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter};
use std::path::{Path, PathBuf};
use std::time::Duration;

use pcap_file::pcap::{PcapPacket, PcapReader, PcapWriter};
use pcap_file::pcapng::blocks::interface_description::InterfaceDescriptionOption;
use pcap_file::pcapng::{Block, PcapNgReader};
use pcap_file::{DataLink, TsResolution};

use super::{IoError, RxBackend, TxBackend};
use sr6_core::drop::DropReason;
use sr6_core::packet::{DevId, PacketBuf, Verdict};
use sr6_core::pipeline::extra::Out;

/// The frames of a capture file: classic pcap (tcpdump's format) or pcapng (Wireshark's
/// and tshark's default), told apart by the first four bytes.
///
/// pcap is read as libpcap (tcpdump, tshark) reads it: a record's fraction of a second is
/// not checked against one second (writers that round 999,999.6 µs up write 1,000,000;
/// it carries into the seconds), and its original length is not checked (a capture with
/// a snap length has frames shorter than it; sr6 gets what was captured). The
/// `pcap-file` crate's own packet check refuses both, so records are read raw and
/// converted here.
///
/// pcapng: the Enhanced and Simple Packet Blocks are the frames, in file order; every
/// other block (interface statistics, name resolution, comments) is skipped. A packet
/// of an interface whose link type is not Ethernet is an error; timestamps honour the
/// interface's `if_tsresol` (microseconds when absent).
pub struct PcapFile {
    path: String,
    kind: Kind,
}

enum Kind {
    Pcap { reader: PcapReader<BufReader<File>>, nanos: bool },
    Ng { reader: PcapNgReader<BufReader<File>>, ifaces: Vec<NgIface> },
}

/// What a pcapng Interface Description Block says about its packets.
struct NgIface {
    linktype: DataLink,
    /// `if_tsresol`: units per second as 10^n, or 2^n when the top bit is set.
    tsresol: u8,
}

/// The first four bytes of a pcapng file (its Section Header Block's type), in either
/// byte order.
const PCAPNG_MAGIC: [u8; 4] = [0x0a, 0x0d, 0x0d, 0x0a];

/// A frame of a pcap file: its timestamp in nanoseconds and its bytes.
pub type Frame<'a> = (u64, Cow<'a, [u8]>);

/// libpcap's largest snap length: a record claiming more is corrupt.
pub const MAX_RECORD: u32 = 262_144;

impl PcapFile {
    pub fn open(path: &Path) -> Result<Self, IoError> {
        let p = path.display().to_string();
        let f = File::open(path).map_err(|e| IoError::File { path: p.clone(), error: e })?;
        let mut br = BufReader::new(f);
        let head = br.fill_buf().map_err(|e| IoError::File { path: p.clone(), error: e })?;
        let kind = if head.starts_with(&PCAPNG_MAGIC) {
            let reader = PcapNgReader::new(br)
                .map_err(|e| IoError::Pcap { path: p.clone(), message: format!("pcapng: {e}") })?;
            Kind::Ng { reader, ifaces: Vec::new() }
        } else {
            let reader = PcapReader::new(br).map_err(|e| IoError::Pcap {
                path: p.clone(),
                message: format!("{e} (sr6 reads pcap and pcapng files)"),
            })?;
            let nanos = reader.header().ts_resolution == TsResolution::NanoSecond;
            Kind::Pcap { reader, nanos }
        };
        Ok(PcapFile { path: p, kind })
    }

    /// The link type of a classic pcap file; `None` for pcapng, whose link type is per
    /// interface (checked on each packet: only Ethernet is read).
    pub fn datalink(&self) -> Option<DataLink> {
        match &self.kind {
            Kind::Pcap { reader, .. } => Some(reader.header().datalink),
            Kind::Ng { .. } => None,
        }
    }

    /// The next frame, `None` at the end of the file.
    pub fn next_frame(&mut self) -> Option<Result<Frame<'_>, IoError>> {
        let path = &self.path;
        let bad = |message: String| Some(Err(IoError::Pcap { path: path.clone(), message }));
        let too_big = |n: usize| format!("a record of {n} bytes, over libpcap's maximum of {MAX_RECORD}");
        match &mut self.kind {
            Kind::Pcap { reader, nanos } => {
                let r = match reader.next_raw_packet()? {
                    Ok(r) => r,
                    Err(e) => return bad(e.to_string()),
                };
                if r.incl_len > MAX_RECORD {
                    return bad(too_big(r.incl_len as usize));
                }
                let frac_ns = u64::from(r.ts_frac) * if *nanos { 1 } else { 1000 };
                let ts = u64::from(r.ts_sec) * 1_000_000_000 + frac_ns;
                Some(Ok((ts, r.data)))
            }
            Kind::Ng { reader, ifaces } => loop {
                let block = match reader.next_block()? {
                    Ok(b) => b,
                    Err(e) => return bad(format!("pcapng: {e}")),
                };
                let (iface, units, data) = match block {
                    Block::SectionHeader(_) => {
                        // A new section starts its own interface numbering.
                        ifaces.clear();
                        continue;
                    }
                    Block::InterfaceDescription(idb) => {
                        let tsresol = idb
                            .options
                            .iter()
                            .find_map(|o| match o {
                                InterfaceDescriptionOption::IfTsResol(r) => Some(*r),
                                _ => None,
                            })
                            .unwrap_or(6);
                        ifaces.push(NgIface { linktype: idb.linktype, tsresol });
                        continue;
                    }
                    // The crate keeps the raw timestamp units in a Duration's nanoseconds.
                    Block::EnhancedPacket(p) => (p.interface_id, p.timestamp.as_nanos(), p.data),
                    // No timestamp; the interface is the first one. The crate keeps the
                    // block's padding: the frame is `original_len` bytes (at most).
                    Block::SimplePacket(p) => {
                        let n = p.data.len().min(p.original_len as usize);
                        (0, 0, Cow::Owned(p.data[..n].to_vec()))
                    }
                    _ => continue,
                };
                let Some(ifc) = ifaces.get(iface as usize) else {
                    return bad(format!("pcapng: a packet of interface {iface}, which is not described"));
                };
                if ifc.linktype != DataLink::ETHERNET {
                    return Some(Err(IoError::LinkType {
                        path: path.clone(),
                        linktype: format!("{:?} (pcapng interface {iface})", ifc.linktype),
                    }));
                }
                if data.len() > MAX_RECORD as usize {
                    return bad(too_big(data.len()));
                }
                // Owned: a borrow from `reader` cannot outlive this loop's next turn (a
                // limit of today's borrow checker); pcapng input is not a fast path.
                return Some(Ok((ng_ns(units, ifc.tsresol), Cow::Owned(data.into_owned()))));
            },
        }
    }
}

/// A pcapng timestamp of `units` at resolution `tsresol`, in nanoseconds (saturating).
fn ng_ns(units: u128, tsresol: u8) -> u64 {
    let exp = u32::from(tsresol & 0x7f);
    let per_sec: Option<u128> = if tsresol & 0x80 != 0 { 2u128.checked_pow(exp) } else { 10u128.checked_pow(exp) };
    match per_sec {
        Some(0) | None => 0,
        Some(d) => u64::try_from(units.saturating_mul(1_000_000_000) / d).unwrap_or(u64::MAX),
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
        if let Some(dl) = file.datalink().filter(|dl| *dl != DataLink::ETHERNET) {
            return Err(IoError::LinkType { path: file.path, linktype: format!("{dl:?}") });
        }
        Ok(PcapSource { file, in_dev, last_ts_ns: 0, oversized: 0 })
    }

    /// The next frame, `None` at the end of the file: for a caller that merges several
    /// captures (`sr6 pcap` with several `--in`) and loads the buffers itself.
    pub fn next_frame(&mut self) -> Option<Result<Frame<'_>, IoError>> {
        self.file.next_frame()
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
    let f = File::create(path).map_err(|e| IoError::File { path: p.clone(), error: e })?;
    PcapWriter::new(BufWriter::new(f)).map_err(|e| IoError::Pcap { path: p, message: e.to_string() })
}

impl PcapSinks {
    /// Creates one (empty) file per device name, plus `local.pcap`, in `dir`.
    pub fn create(dir: &Path, devices: &[String]) -> Result<Self, IoError> {
        std::fs::create_dir_all(dir).map_err(|e| IoError::File { path: dir.display().to_string(), error: e })?;
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
            std::io::Write::flush(&mut inner).map_err(|e| IoError::File { path: p.display().to_string(), error: e })?;
        }
        Ok(())
    }
}

impl PcapSinks {
    /// Writes every frame a processed batch leaves, the fragments of a fragmented
    /// packet included ([`ExtraFrames::outputs`](sr6_core::pipeline::extra::ExtraFrames::outputs)).
    pub fn tx_outputs<'a>(&mut self, outs: impl Iterator<Item = Out<'a>>) -> Result<(), IoError> {
        for o in outs {
            self.tx_one(o.verdict, o.ts_ns, o.data)?;
        }
        Ok(())
    }

    fn tx_one(&mut self, verdict: Verdict, ts_ns: u64, data: &[u8]) -> Result<(), IoError> {
        match verdict {
            Verdict::Tx(d) => {
                if let Some((p, w)) = self.devs.get_mut(d as usize) {
                    Self::write(p, w, ts_ns, data)?;
                }
            }
            Verdict::Local => Self::write(&self.local.0, &mut self.local.1, ts_ns, data)?,
            // A fragmented packet's fragments are in its worker ([`Self::tx_outputs`]).
            Verdict::Drop(_) | Verdict::Pending | Verdict::Resolve(_) | Verdict::Fragmented => {}
        }
        Ok(())
    }
}

impl TxBackend for PcapSinks {
    fn tx_batch(&mut self, batch: &[PacketBuf]) -> Result<(), IoError> {
        for b in batch {
            self.tx_one(b.verdict, b.ts_ns, b.data())?;
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

    /// A little-endian pcapng block of `type_` with `body`, padded to 32 bits.
    fn ng_block(type_: u32, body: &[u8]) -> Vec<u8> {
        let mut body = body.to_vec();
        body.resize(body.len().div_ceil(4) * 4, 0);
        let len = (body.len() + 12) as u32;
        let mut b = type_.to_le_bytes().to_vec();
        b.extend_from_slice(&len.to_le_bytes());
        b.extend_from_slice(&body);
        b.extend_from_slice(&len.to_le_bytes());
        b
    }

    /// A pcapng file written from the format's specification (draft-ietf-opsawg-pcapng):
    /// a Section Header, interfaces of (link type, if_tsresol option), then the packets
    /// as Enhanced Packet Blocks (interface, timestamp units, data) and, for interface
    /// `u32::MAX`, a Simple Packet Block.
    fn ng_file(name: &str, ifaces: &[(u16, Option<u8>)], packets: &[(u32, u64, &[u8])]) -> PathBuf {
        let mut shb = 0x1a2b_3c4d_u32.to_le_bytes().to_vec();
        shb.extend_from_slice(&[1, 0, 0, 0]);
        shb.extend_from_slice(&(-1i64).to_le_bytes());
        let mut b = ng_block(0x0a0d_0d0a, &shb);
        for (lt, res) in ifaces {
            let mut idb = lt.to_le_bytes().to_vec();
            idb.extend_from_slice(&[0, 0]);
            idb.extend_from_slice(&65535u32.to_le_bytes());
            if let Some(r) = res {
                idb.extend_from_slice(&[9, 0, 1, 0, *r, 0, 0, 0, 0, 0, 0, 0]);
            }
            b.extend(ng_block(1, &idb));
        }
        // A block sr6 has no use for, between them: skipped.
        b.extend(ng_block(5, &[0; 20]));
        for (ifc, ts, data) in packets {
            if *ifc == u32::MAX {
                let mut spb = (data.len() as u32).to_le_bytes().to_vec();
                spb.extend_from_slice(data);
                b.extend(ng_block(3, &spb));
                continue;
            }
            let mut epb = ifc.to_le_bytes().to_vec();
            epb.extend_from_slice(&((ts >> 32) as u32).to_le_bytes());
            epb.extend_from_slice(&(*ts as u32).to_le_bytes());
            epb.extend_from_slice(&(data.len() as u32).to_le_bytes());
            epb.extend_from_slice(&(data.len() as u32).to_le_bytes());
            epb.extend_from_slice(data);
            b.extend(ng_block(6, &epb));
        }
        let p = std::env::temp_dir().join(format!("sr6-pcap-test-{}-{name}.pcapng", std::process::id()));
        std::fs::write(&p, b).unwrap();
        p
    }

    #[test]
    fn pcapng_packets_are_read_with_their_interfaces_resolution() {
        // Interface 0: microseconds (no option); 1: nanoseconds (10^9); 2: 2^10 per second.
        let p = ng_file(
            "ng",
            &[(1, None), (1, Some(9)), (1, Some(0x8a))],
            &[(0, 1_500_000, &[1, 2, 3]), (1, 7_000_000_001, &[4]), (2, 2048, &[5, 6, 7, 8, 9]), (u32::MAX, 0, &[10])],
        );
        assert_eq!(
            frames(&p),
            vec![
                Ok((1_500_000_000, vec![1, 2, 3])),
                Ok((7_000_000_001, vec![4])),
                Ok((2_000_000_000, vec![5, 6, 7, 8, 9])),
                Ok((0, vec![10])),
            ]
        );
        // The link type is checked per interface: a Linux cooked capture is refused.
        let p = ng_file("sll", &[(1, None), (113, None)], &[(0, 1, &[1]), (1, 2, &[2])]);
        let v = frames(&p);
        assert_eq!(v[0], Ok((1000, vec![1])));
        let e = v[1].as_ref().unwrap_err();
        assert!(e.contains("not Ethernet") && e.contains("pcapng interface 1"), "{e}");
        // A packet of an interface never described.
        let p = ng_file("noif", &[(1, None)], &[(3, 1, &[1])]);
        assert!(frames(&p)[0].as_ref().unwrap_err().contains("interface 3"));
    }
}
