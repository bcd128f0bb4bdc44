//! `sr6`: the command-line front end of the sr6 SRv6 data plane.
//!
//! Subcommands: `pcap` (process a capture offline), `bench` (in-memory throughput),
//! `dump` (decode a capture, SRH included), `behaviours` (the behaviour table).

mod cmd_bench;
mod cmd_dump;
mod cmd_pcap;
mod live;
mod load;
mod report;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(name = "sr6", version, about = "A software SRv6 network-programming data plane (RFC 8754 / RFC 8986)")]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Process the Ethernet frames of a pcap file as if received on a device; write what
    /// each device sends to DIR/DEV.pcap and what is for the router to DIR/local.pcap.
    Pcap {
        /// Configuration file (iproute2 lines; see docs/config.md).
        #[arg(long, short)]
        config: PathBuf,
        /// Input capture (Ethernet).
        #[arg(long = "in", short)]
        input: PathBuf,
        /// Device the frames arrive on (default: the first device the config names).
        #[arg(long)]
        in_dev: Option<String>,
        /// Directory for the output captures (created if missing).
        #[arg(long, short)]
        out_dir: PathBuf,
        /// Print counters as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Push the frames of a pcap file through the pipeline in memory (no I/O), repeated
    /// until N packets, and print packets/s and ns/packet.
    Bench {
        #[arg(long, short)]
        config: PathBuf,
        #[arg(long = "in", short)]
        input: PathBuf,
        #[arg(long)]
        in_dev: Option<String>,
        /// Packets to process.
        #[arg(long, short, default_value_t = 10_000_000)]
        packets: u64,
        /// Batch size.
        #[arg(long, short, default_value_t = 256)]
        batch: usize,
        /// Print the result as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Print one line per frame of a capture, with the SRH decoded (SR-tcpdump).
    Dump {
        file: PathBuf,
        /// Also print every TLV, the HMAC value and the inner packet's headers.
        #[arg(short, long)]
        verbose: bool,
    },
    /// List the SRv6 behaviours sr6 implements, with their parameters.
    Behaviours,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let r = match cli.cmd {
        Cmd::Pcap { config, input, in_dev, out_dir, json } => cmd_pcap::run(&config, &input, in_dev.as_deref(), &out_dir, json),
        Cmd::Bench { config, input, in_dev, packets, batch, json } => {
            cmd_bench::run(&config, &input, in_dev.as_deref(), packets, batch, json)
        }
        Cmd::Dump { file, verbose } => cmd_dump::run(&file, verbose),
        Cmd::Behaviours => {
            report::print_behaviours();
            Ok(())
        }
    };
    match r {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("sr6: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
