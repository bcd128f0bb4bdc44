//! `sr6 pcap`: offline processing of a capture.

use std::path::Path;

use anyhow::Result;
use sr6_core::packet::PacketBuf;
use sr6_core::pipeline::Worker;
use sr6_io::pcap::{PcapSinks, PcapSource};
use sr6_io::RxBackend;

use crate::{load, report};

const BATCH: usize = 64;

pub fn run(config: &Path, input: &Path, in_dev: Option<&str>, out_dir: &Path, json: bool) -> Result<()> {
    let t = load::tables(config)?;
    let dev = load::in_dev(&t, in_dev)?;
    let mut src = PcapSource::open(input, dev)?;
    let names: Vec<String> = t.devices.iter().map(|d| d.name.clone()).collect();
    let mut sinks = PcapSinks::create(out_dir, &names)?;
    let mut w = Worker::new(&t);
    let mut batch: Vec<PacketBuf> = (0..BATCH).map(|_| PacketBuf::new()).collect();
    loop {
        let n = src.rx_batch(&mut batch)?;
        if n == 0 {
            break;
        }
        w.process_batch(&t, dev, &mut batch[..n]);
        sinks.tx_outputs(w.extra.outputs(&batch[..n]))?;
    }
    sinks.finish()?;
    if json {
        println!("{}", serde_json::to_string_pretty(&report::json(&t, &w.counters))?);
    } else {
        report::print(&t, &w.counters);
    }
    Ok(())
}
