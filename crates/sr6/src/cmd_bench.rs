//! `sr6 bench`: the pipeline alone, in memory: frames are replayed from RAM into the
//! batch, processed, and discarded. Measures the data plane, not I/O.
//!
//! `--warmup` frames go through the same worker once before the replay, so that what a
//! behaviour learns from traffic (an End.AD proxy's cache) is in place, and are not
//! counted.

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Result};
use sr6_core::packet::PacketBuf;
use sr6_core::pipeline::Worker;
use sr6_io::memory::Replay;
use sr6_io::pcap::PcapSource;
use sr6_io::RxBackend;

use crate::load;

/// What `sr6 bench` reads: the capture it replays, received on `in_dev` (else the
/// config's first device), and the `[DEV=]FILE` captures processed once before.
pub struct Inputs<'a> {
    pub replay: &'a Path,
    pub in_dev: Option<&'a str>,
    pub warmup: &'a [PathBuf],
}

pub fn run(config: &Path, inputs: Inputs<'_>, packets: u64, batch: usize, json: bool) -> Result<()> {
    if batch == 0 || batch > 4096 {
        bail!("--batch must be between 1 and 4096");
    }
    let t = load::tables(config)?;
    let dev = load::in_dev(&t, inputs.in_dev)?;
    let frames = PcapSource::open(inputs.replay, dev)?.read_all()?;
    if frames.is_empty() {
        bail!("{}: no frames to replay", inputs.replay.display());
    }
    let mut rx = Replay::new(frames);
    let mut w = Worker::new(&t);
    let mut bufs: Vec<PacketBuf> = (0..batch).map(|_| PacketBuf::new()).collect();
    for arg in inputs.warmup {
        let (wdev, path) = load::input(&t, "--warmup", arg, inputs.in_dev)?;
        for chunk in PcapSource::open(&path, wdev)?.read_all()?.chunks(batch) {
            for (b, f) in bufs.iter_mut().zip(chunk) {
                if !b.load(f, wdev) {
                    bail!("{}: a frame of {} bytes does not fit a buffer", path.display(), f.len());
                }
            }
            w.process_batch(&t, wdev, &mut bufs[..chunk.len()]);
        }
    }
    w.reset();
    let mut done = 0u64;
    let start = Instant::now();
    while done < packets {
        let n = ((packets - done) as usize).min(batch);
        rx.rx_batch(&mut bufs[..n])?;
        w.process_batch(&t, dev, &mut bufs[..n]);
        done += n as u64;
    }
    let secs = start.elapsed().as_secs_f64();
    let pps = done as f64 / secs;
    let c = &w.counters;
    let tx: u64 = c.tx.iter().sum();
    if json {
        let v = serde_json::json!({
            "packets": done, "seconds": secs, "pps": pps, "ns_per_packet": secs * 1e9 / done as f64,
            "batch": batch, "tx": tx, "local": c.local, "dropped": c.dropped(), "icmp_sent": c.icmp_sent,
            "proxies": crate::report::proxies(&t),
        });
        println!("{v}");
    } else {
        println!(
            "{done} packets in {secs:.3} s: {:.0} packets/s, {:.1} ns/packet (batch {batch}; tx {tx}, local {}, dropped {})",
            pps,
            secs * 1e9 / done as f64,
            c.local,
            c.dropped()
        );
    }
    Ok(())
}
