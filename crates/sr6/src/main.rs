//! `sr6`: the command-line front end of the sr6 SRv6 data plane.
//!
//! Subcommands: `run` (the live router), `ctl` (control a running router), `pcap`
//! (process a capture offline), `bench` (in-memory throughput), `dump` (decode a
//! capture, SRH included), `behaviours` (the behaviour table), `perf` (runs the
//! `sr6-perf` binary).

mod bpf_events;
mod bpf_maps;
mod cmd_bench;
mod cmd_ctl;
mod cmd_dump;
mod cmd_pcap;
mod cmd_perf;
mod cmd_run;
mod icmp_names;
mod ids_alerts;
mod live;
mod load;
mod report;
#[cfg(test)]
mod test_support;
mod xdp_offline;

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
    /// Run sr6 as a router on the Linux devices the configuration names, until
    /// SIGINT/SIGTERM. Needs root (or CAP_NET_ADMIN + CAP_NET_RAW + CAP_BPF).
    Run {
        /// Configuration file (iproute2 lines; see docs/config.md).
        #[arg(long, short)]
        config: PathBuf,
        /// Forwarding threads; each has its own queue on every device.
        #[arg(long, short, default_value_t = 1)]
        workers: u32,
        /// I/O backend: AF_XDP (an XDP program steers to sr6 only what it must
        /// handle), AF_PACKET, or auto (AF_XDP if it works here).
        #[arg(long, value_enum, default_value = "auto")]
        backend: live::backend::BackendChoice,
        /// Where the XDP program runs (AF_XDP): in the driver (native), in the generic
        /// receive path (generic), or native when the device supports it (auto).
        #[arg(long, value_enum, default_value = "auto")]
        xdp_mode: live::backend::XdpModeChoice,
        /// With AF_XDP, the XDP tier (xdp): an XDP program on each device forwards IPv6
        /// and IPv4 transit, End, End.X, End.T (PSP, NEXT-C-SID), End.DX4/DX6, End.DT4/DT6/DT46 and
        /// head-end policies in the kernel's receive path (SRHs with an HMAC the
        /// AF_XDP tier verified too) and hands the rest to the AF_XDP tier; off: the
        /// AF_XDP tier alone. `show status` says which tier
        /// each device runs and why.
        #[arg(long, value_enum, default_value = "xdp")]
        fast_path: live::fast_tier::FastPathChoice,
        /// Control socket for `sr6 ctl`.
        #[arg(long, default_value = live::ctl::DEFAULT_SOCKET)]
        socket: PathBuf,
        /// Pin worker i to the i-th CPU of this list (e.g. `--cpus 1` or `--cpus 2,3`).
        #[arg(long, value_delimiter = ',')]
        cpus: Vec<usize>,
        /// Packets per batch.
        #[arg(long, default_value_t = 64)]
        batch: usize,
        /// Slots per receive and transmit ring.
        #[arg(long, default_value_t = 2048)]
        ring: u32,
        /// Overload guard (AF_XDP): while a worker's receive ring is more than 3/4
        /// full, the worker runs SCHED_FIFO at this priority (1-99), until the ring
        /// is less than 1/16 full. Give a priority above the kernel's receive work for
        /// the devices (e.g. one above a SCHED_FIFO NAPI thread's) so that, offered
        /// more than it can forward, sr6 keeps forwarding at its capacity instead of
        /// losing the CPU to the kernel taking frames it must drop (receive livelock).
        /// Needs CAP_SYS_NICE. Off by default.
        #[arg(long, value_parser = clap::value_parser!(i32).range(1..=99))]
        overload_priority: Option<i32>,
        /// Say more: neighbour resolution, table rebuilds.
        #[arg(long, short)]
        verbose: bool,
        /// Forward by the routes of the kernel's tables too, as a routing daemon (FRR's
        /// zebra) or `ip route` installs them in sr6's network namespace, following
        /// their changes; the configuration's and `sr6 ctl`'s routes win for the same
        /// prefix and table (docs/frr.md). Off by default.
        #[arg(long)]
        mirror_kernel_routes: bool,
        /// Take routes from FRR's zebra over its FPM stream too (`dplane_fpm_nl`; in
        /// zebra's configuration: `fpm address ADDR port PORT`), listening on
        /// ADDR:PORT (`:2620`: 127.0.0.1 port 2620, zebra's default); they win over the
        /// kernel's, the configuration's and `sr6 ctl`'s win over them (docs/frr.md).
        #[arg(long, value_name = "[ADDR]:PORT", value_parser = crate::live::fpm::parse_listen)]
        fpm_listen: Option<std::net::SocketAddr>,
        /// IDS rules (Snort syntax, docs/ids.md), as the configuration line `ids rules
        /// FILE` at INPUT; a configuration file's own `ids` line wins.
        #[arg(long, value_name = "FILE")]
        ids_rules: Option<PathBuf>,
        /// The IDS's mode with --ids-rules: ids (alert) or ips (drop rules drop).
        #[arg(long, value_name = "ids|ips", default_value = "ids", requires = "ids_rules")]
        ids_mode: String,
    },
    /// Send a command to a running `sr6 run`: `route add ...`, `route del ...`,
    /// `show sids|routes|proxies|counters|devices|neighbours|status [--json]`, `clear-counters`,
    /// `reload FILE`, `help`.
    Ctl {
        /// The daemon's control socket.
        #[arg(long, default_value = live::ctl::DEFAULT_SOCKET)]
        socket: PathBuf,
        /// The command and its words.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, required = true, num_args = 1..)]
        command: Vec<String>,
    },
    /// Process the Ethernet frames of pcap files as if received on devices; write what
    /// each device sends to DIR/DEV.pcap and what is for the router to DIR/local.pcap.
    Pcap {
        /// Configuration file (iproute2 lines; see docs/config.md).
        #[arg(long, short)]
        config: PathBuf,
        /// Input capture (Ethernet), as `FILE` or `DEV=FILE` (its frames arrive on DEV).
        /// Repeatable: the frames of all inputs are processed in timestamp order (ties:
        /// the input named first, then file order).
        #[arg(long = "in", short, value_name = "[DEV=]FILE", required = true)]
        input: Vec<PathBuf>,
        /// Device the frames of an input without `DEV=` arrive on (default: the first
        /// device the config names).
        #[arg(long)]
        in_dev: Option<String>,
        /// Directory for the output captures (created if missing).
        #[arg(long, short)]
        out_dir: PathBuf,
        /// Print counters as JSON.
        #[arg(long)]
        json: bool,
        /// xdp: each frame first through the XDP tier's program in the kernel
        /// (BPF_PROG_TEST_RUN; needs root), the rest through the pipeline, as `sr6 run`
        /// does; off (default): the pipeline alone.
        #[arg(long, value_enum, default_value = "off")]
        fast_path: live::fast_tier::FastPathChoice,
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
        /// Frames processed once before the measured replay, as `FILE` or `DEV=FILE`
        /// (repeatable, in the order given): state a behaviour learns from traffic —
        /// an End.AD proxy's cache — is set up and not measured.
        #[arg(long, value_name = "[DEV=]FILE")]
        warmup: Vec<PathBuf>,
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
        /// Show every address as a NEXT-C-SID container (RFC 9800) of these lengths in
        /// bits: `ADDR<BLOCK/LBLEN: C-SID ...>`.
        #[arg(long, value_name = "LBLEN,NFLEN")]
        csid: Option<String>,
        /// Show the addresses in the blocks of this configuration's NEXT-C-SID and
        /// REPLACE-C-SID SIDs as containers, with each SID's lengths (before `--csid`'s).
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
    },
    /// List the SRv6 behaviours sr6 implements, with their parameters.
    Behaviours,
    /// The SRPerf evaluation framework: measure forwarders (sr6, the Linux kernel) on a
    /// namespace testbed by NDR/PDR search, and write results, report and plots.
    ///
    /// Runs the sr6-perf binary next to sr6 (or $SR6_PERF_BIN) with the arguments that
    /// follow: `sr6 perf --help`, `sr6 perf run --help`.
    #[command(disable_help_flag = true)]
    Perf {
        /// Arguments for sr6-perf (`run [EXPERIMENT.yaml] [--forwarder ...] ...`).
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0..)]
        args: Vec<String>,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    // A printing command whose reader has gone (`sr6 ctl show routes | head -1`) ends
    // by SIGPIPE as other Unix tools do, instead of panicking on its next line (Rust
    // ignores the signal, so printing fails). `sr6 run` and `sr6 perf` keep it
    // ignored: a control client that hangs up must not stop them.
    if !matches!(cli.cmd, Cmd::Run { .. } | Cmd::Perf { .. }) {
        // SAFETY: restores the default disposition of one signal; no handler runs.
        unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
    }
    let r = match cli.cmd {
        Cmd::Run {
            config,
            workers,
            backend,
            xdp_mode,
            fast_path,
            socket,
            cpus,
            batch,
            ring,
            overload_priority,
            verbose,
            mirror_kernel_routes,
            fpm_listen,
            ids_rules,
            ids_mode,
        } => cmd_run::run(cmd_run::RunOpts {
            config,
            workers,
            backend,
            xdp_mode,
            fast_path,
            socket,
            cpus,
            batch,
            ring_frames: ring,
            overload_priority,
            verbose,
            mirror_kernel_routes,
            fpm_listen,
            ids: ids_rules.map(|f| (f, ids_mode)),
        }),
        Cmd::Ctl { socket, command } => cmd_ctl::run(&socket, &command),
        Cmd::Pcap { config, input, in_dev, out_dir, json, fast_path } => {
            let xdp = fast_path == live::fast_tier::FastPathChoice::Xdp;
            cmd_pcap::run(&config, &input, in_dev.as_deref(), &out_dir, json, xdp)
        }
        Cmd::Bench { config, input, in_dev, warmup, packets, batch, json } => {
            let inputs = cmd_bench::Inputs { replay: &input, in_dev: in_dev.as_deref(), warmup: &warmup };
            cmd_bench::run(&config, inputs, packets, batch, json)
        }
        Cmd::Dump { file, verbose, csid, config } => cmd_dump::CsidPlan::new(csid.as_deref(), config.as_deref())
            .and_then(|plan| cmd_dump::run(&file, cmd_dump::View { verbose, csid: &plan })),
        Cmd::Perf { args } => cmd_perf::exec(&args),
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
