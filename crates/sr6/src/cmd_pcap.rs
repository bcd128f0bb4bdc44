//! `sr6 pcap`: offline processing of captures, each received on a device.
//!
//! Several inputs (`--in DEV=FILE ...`) are merged into one stream in timestamp order,
//! as `mergecap` merges them: the next frame is always the earliest of the inputs'
//! next frames, ties going to the input named first, and each file is read in its own
//! order. Frames go through one worker in batches; a batch is cut where the receiving
//! device changes, so each frame is processed as received on its device and the tables
//! (neighbours, proxy caches) live for the whole run.

use std::path::{Path, PathBuf};

use std::io::Write;

use anyhow::{Context, Result};
use sr6_core::counters::SidCounter;
use sr6_core::drop::DropReason;
use sr6_core::packet::{DevId, PacketBuf, Verdict};
use sr6_core::pipeline::Worker;
use sr6_io::pcap::{PcapSinks, PcapSource};
use sr6_io::TxBackend;

use crate::{ids_alerts, load, report};

const BATCH: usize = 64;

/// One input capture, with its next frame read ahead (timestamp in ns, bytes).
struct Input {
    src: PcapSource,
    dev: DevId,
    next: Option<(u64, Vec<u8>)>,
}

impl Input {
    fn advance(&mut self) -> Result<()> {
        self.next = match self.src.next_frame() {
            None => None,
            Some(r) => {
                let (ts, data) = r?;
                Some((ts, data.into_owned()))
            }
        };
        Ok(())
    }
}

/// The inputs merged: [`Merged::fill`] loads the next frames of one device into a batch.
struct Merged {
    inputs: Vec<Input>,
}

impl Merged {
    fn open(files: &[(DevId, PathBuf)]) -> Result<Self> {
        let mut inputs = Vec::with_capacity(files.len());
        for (dev, path) in files {
            let mut i = Input { src: PcapSource::open(path, *dev)?, dev: *dev, next: None };
            i.advance()?;
            inputs.push(i);
        }
        Ok(Merged { inputs })
    }

    /// The input whose next frame comes first (earliest timestamp, then the first named).
    fn earliest(&self) -> Option<usize> {
        let mut best: Option<(u64, usize)> = None;
        for (k, i) in self.inputs.iter().enumerate() {
            if let Some((ts, _)) = &i.next {
                if best.is_none_or(|(b, _)| *ts < b) {
                    best = Some((*ts, k));
                }
            }
        }
        best.map(|(_, k)| k)
    }

    /// Loads the next frames, all received on one device, into the front of `batch`;
    /// returns the device and how many (0 at the end of every input).
    fn fill(&mut self, batch: &mut [PacketBuf]) -> Result<(DevId, usize)> {
        let mut dev = None;
        let mut n = 0;
        while n < batch.len() {
            let Some(k) = self.earliest() else { break };
            let Some(input) = self.inputs.get_mut(k) else { break };
            if dev.is_some_and(|d| d != input.dev) {
                break;
            }
            dev = Some(input.dev);
            let (Some((ts, data)), Some(b)) = (input.next.take(), batch.get_mut(n)) else { break };
            if !b.load(&data, input.dev) {
                // Larger than a buffer: dropped, not processed truncated.
                b.condemn(DropReason::TooBig);
            }
            b.ts_ns = ts;
            n += 1;
            input.advance()?;
        }
        Ok((dev.unwrap_or(0), n))
    }
}

pub fn run(
    config: &Path,
    inputs: &[PathBuf],
    in_dev: Option<&str>,
    out_dir: &Path,
    json: bool,
    xdp: bool,
) -> Result<()> {
    let t = load::tables(config)?;
    let offline = if xdp { Some(crate::xdp_offline::Offline::new(&t)?) } else { None };
    let (mut frames, mut by_xdp) = (0u64, 0u64);
    let files = inputs.iter().map(|p| load::input(&t, "--in", p, in_dev)).collect::<Result<Vec<_>>>()?;
    let mut src = Merged::open(&files)?;
    let names: Vec<String> = t.devices.iter().map(|d| d.name.clone()).collect();
    let mut sinks = PcapSinks::create(out_dir, &names)?;
    let mut w = Worker::new(&t);
    let mut batch: Vec<PacketBuf> = (0..BATCH).map(|_| PacketBuf::new()).collect();
    // End.BPF's events, drained after each batch.
    let mut events = crate::bpf_events::Collected::default();
    // The IDS's alerts, taken after each batch (offline, written as they come).
    let mut alerts = Vec::new();
    let mut alerts_file = match t.ids.as_ref().and_then(|i| i.spec.alerts.as_ref()) {
        Some(p) => Some(std::io::BufWriter::new(
            std::fs::File::create(p).with_context(|| format!("creating the IDS alerts file {}", p.display()))?,
        )),
        None => None,
    };
    loop {
        let (dev, n) = src.fill(&mut batch)?;
        if n == 0 {
            break;
        }
        // With the XDP tier, frame by frame: what it forwards is written as it left it.
        let mut at = 0;
        while at < n {
            let mut end = n;
            if let Some(off) = &offline {
                end = at + 1;
                frames += 1;
                if let Some(x) = off.run(batch[at].data(), dev)? {
                    by_xdp += 1;
                    w.counters.rx += 1;
                    *w.counters.tx.at(x.out) += 1;
                    if let Some(i) = x.sid {
                        let frame_bytes = batch[at].len() as u64;
                        w.counters.sids.add(i, SidCounter { packets: 1, errors: 0, frame_bytes });
                    }
                    let mut p = PacketBuf::new();
                    p.load(&x.frame, dev);
                    p.ts_ns = batch[at].ts_ns;
                    p.verdict = Verdict::Tx(x.out);
                    sinks.tx_batch(std::slice::from_ref(&p))?;
                    at = end;
                    continue;
                }
            }
            w.process_batch(&t, dev, &mut batch[at..end]);
            events.drain(&t);
            sinks.tx_outputs(w.extra.outputs(&batch[at..end]))?;
            for a in w.ids.alerts.drain() {
                let js = ids_alerts::alert_json(&t, &a);
                if let Some(f) = alerts_file.as_mut() {
                    writeln!(f, "{js}")?;
                }
                alerts.push(js);
            }
            at = end;
        }
    }
    if let Some(mut f) = alerts_file {
        f.flush()?;
    }
    sinks.finish()?;
    if xdp {
        eprintln!("sr6 pcap: the XDP tier forwarded {by_xdp} of {frames} frames; the pipeline took the rest");
    }
    if json {
        let mut js = report::json(&t, &w.counters);
        if let (Some(o), true) = (js.as_object_mut(), t.ids.is_some()) {
            o.insert("ids_alerts".into(), serde_json::Value::Array(alerts));
        }
        let mut bpf = crate::bpf_maps::report_json(&t);
        events.annotate(&mut bpf);
        if let (Some(o), false) = (js.as_object_mut(), bpf.is_null()) {
            o.insert("bpf".into(), bpf);
        }
        println!("{}", serde_json::to_string_pretty(&js)?);
    } else {
        report::print(&t, &w.counters);
        if let Some(maps) = crate::bpf_maps::report_text(&t) {
            println!("{maps}");
        }
        if let Some(ev) = events.text(&t) {
            println!("{ev}");
        }
    }
    Ok(())
}
