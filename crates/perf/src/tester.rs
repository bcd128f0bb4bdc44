//! The tester of a testbed ([`crate::run::Tester`]): the generator on tg0 and the
//! receiver on tg1, with the frames of one behaviour addressed by [`crate::plan`].
//!
//! The generator runs on a thread of its own that enters the tester's namespace, sets up
//! both sides there (sockets and XDP attachments belong to the namespace they were made
//! in), pins itself to the tester CPU and then serves trial requests; the receiver
//! counts in tg1's NAPI thread on the same CPU (or runs a thread of its own there).
//!
//! The generator is chosen by the experiment's `generator`: XDP live frames
//! ([`traffic::LiveGenerator`], the fastest, paced in the kernel) where they work, else
//! AF_XDP, else AF_PACKET (`auto`); the receiver by its `receiver`: an XDP program that
//! counts on tg1 ([`XdpReceiver`]), else a receiving thread on AF_XDP, else on AF_PACKET.
//! The choices and why are in the run's notes. The orchestrator's thread is never pinned, so the
//! forwarders it starts (`sr6 run`) inherit every CPU and can pin themselves to theirs.
//!
//! A behaviour whose SUT state must be filled before the trials (a dynamic SR proxy's
//! cache, for End.AD-return) gets its warm-up frame ([`traffic::warm_up_frame`]) sent
//! from tg1 to dut1 first, before the generator and the receiver are set up ([`warm_up`]).

use std::net::Ipv6Addr;
use std::sync::mpsc::{channel, Receiver as Rx, Sender};
use std::thread::JoinHandle;
use std::time::Duration;

use crate::bpf::{CountHook, IngressDrop};
use crate::experiment::Experiment;
use crate::model::{Behavior, Latency, Trial};
use crate::plan::{self, TG0, TG0_6, TG1, TG1_6};
use crate::run::Tester;
use crate::testbed::Testbed;
use crate::traffic::{
    self, Addressing, Backend, GenConfig, Generator, LiveGenerator, Receiver, RecvConfig, Sink, Source, XdpReceiver,
};

/// Slots per ring of the tester's ports.
const RING: u32 = 4096;

/// A trial request to the tester thread.
struct Req {
    offered_pps: f64,
    duration: Duration,
    latency: bool,
}

type Reply = Result<(Trial, Option<Latency>), String>;

/// The tester thread of one testbed, for one behaviour.
pub struct NetTester {
    req: Option<Sender<Req>>,
    reply: Rx<Reply>,
    thread: Option<JoinHandle<()>>,
    max_pps: f64,
    frame_bytes: usize,
    generator: String,
}

fn mac(s: &str) -> Result<[u8; 6], String> {
    let v: Vec<u8> = s.split(':').filter_map(|x| u8::from_str_radix(x, 16).ok()).collect();
    v.try_into().map_err(|_| format!("not a MAC address: {s}"))
}

/// The template addresses of behaviour `b` on testbed `tb`, with innermost packets of
/// `inner_len` bytes.
pub fn addressing(tb: &Testbed, b: Behavior, inner_len: usize) -> Result<Addressing, String> {
    let macs = [mac(&tb.tg0_mac)?, mac(&tb.dut0_mac)?, mac(&tb.dut1_mac)?, mac(&tb.tg1_mac)?];
    Ok(Addressing { inner_len, ..addressing_with(macs, b) })
}

/// The template addresses of behaviour `b` given the MACs of tg0, dut0, dut1 and tg1.
pub fn addressing_with(macs: [[u8; 6]; 4], b: Behavior) -> Addressing {
    let f = plan::flow(b);
    let transit = b.is_transit();
    let [tg0_mac, dut0_mac, dut1_mac, tg1_mac] = macs;
    Addressing {
        tg0_mac,
        dut0_mac,
        dut1_mac,
        tg1_mac,
        src6: f.src6.unwrap_or(TG0_6),
        src4: plan::TG0_4,
        dst6: if transit { f.dst6.unwrap_or(plan::DST6) } else { f.inner6 },
        dst4: f.inner4,
        sid: f.dst6.unwrap_or(Ipv6Addr::UNSPECIFIED),
        next_sid: f.next_sid.unwrap_or(plan::SEG2),
        upf4: f.upf4.unwrap_or(plan::DUT0_4),
        teid: plan::MOB_TEID,
        inner_len: traffic::INNER_IP_LEN,
    }
}

/// Opens the tester for `b` on `tb` (the [`crate::run::TesterFactory`] of `sr6 perf`).
pub fn open(tb: &Testbed, b: Behavior, exp: &Experiment) -> Result<Box<dyn Tester>, String> {
    let a = addressing(tb, b, exp.packet_bytes)?;
    let tg = tb.tg.clone();
    let cpu = Some(exp.cpus.tester);
    let (req_tx, req_rx) = channel::<Req>();
    let (rep_tx, rep_rx) = channel::<Reply>();
    let (ready_tx, ready_rx) = channel::<Result<(f64, usize, String), String>>();
    let kind = exp.generator.clone();
    let rx_kind = exp.receiver.clone();
    let thread = std::thread::Builder::new()
        .name("sr6-perf-tester".into())
        .spawn(move || {
            let (mut gen, recv, frame_bytes) = match setup(&tg, b, &a, cpu, &kind, &rx_kind) {
                Ok(x) => x,
                Err(e) => {
                    let _ = ready_tx.send(Err(e));
                    return;
                }
            };
            // The generator's own ceiling: short unpaced runs (what the SUT does with
            // the frames does not matter here).
            let ceiling = best_of(PROBES, || {
                let pps = gen.run(f64::INFINITY, PROBE_RUN).achieved_pps();
                std::thread::sleep(PROBE_PAUSE);
                pps
            });
            let what = format!("{}; receiver {}", gen.describe(), recv.backend);
            let _ = ready_tx.send(Ok((ceiling.max(1.0), frame_bytes, what)));
            while let Ok(r) = req_rx.recv() {
                let out = traffic::run_trial_report(
                    gen.as_mut(),
                    recv.recv.as_ref(),
                    r.offered_pps,
                    r.duration,
                    traffic::DEFAULT_SETTLE,
                )
                .map(|rep| {
                    let lat = if r.latency { rep.recv.latency.to_model(r.offered_pps) } else { None };
                    (rep.trial, lat)
                })
                .map_err(|e| e.to_string());
                if rep_tx.send(out).is_err() {
                    break;
                }
            }
        })
        .map_err(|e| format!("starting the tester thread: {e}"))?;
    let (max_pps, frame_bytes, generator) =
        ready_rx.recv().map_err(|_| "the tester thread died while starting".to_string())??;
    Ok(Box::new(NetTester { req: Some(req_tx), reply: rep_rx, thread: Some(thread), max_pps, frame_bytes, generator }))
}

/// On the tester thread: enter the namespace, open the ports, build the generator
/// (`kind`: the experiment's `generator`) and the receiver.
fn setup(
    tg: &str,
    b: Behavior,
    a: &Addressing,
    cpu: Option<usize>,
    kind: &str,
    rx_kind: &str,
) -> Result<(Box<dyn Source>, RxSide, usize), String> {
    sr6_io::live::enter_netns(tg).map_err(|e| e.to_string())?;
    if let Some(f) = traffic::warm_up_frame(b, a) {
        warm_up(&f).map_err(|e| format!("{}: the warm-up frame on {TG1}: {e}", b.name()))?;
    }
    // One template per stream: two where the traffic is mixed (even streams carry IPv6,
    // odd ones IPv4: End.DT46's).
    let templates = traffic::templates(b, a);
    let frame_bytes = templates[0].frame.len();
    let templates_n = templates.len() as u16;
    let gen = generator(kind, templates, cpu)?;
    let rx = receiver(rx_kind, templates_n, cpu)?;
    Ok((gen, rx, frame_bytes))
}

/// How many times the warm-up frame is sent, and the pause after each.
const WARM_UP_FRAMES: usize = 3;
const WARM_UP_PAUSE: Duration = Duration::from_millis(20);

/// Sends `frame` out of tg1 (to dut1) on an AF_PACKET socket of its own, closed after:
/// a dynamic proxy learns its cache from it. Not on tg0: there the SUT's dut0 is the
/// proxy's `iif`, and the frame would be taken for the function's. A few times, in
/// case one is lost; the proxy caches the same headers once.
fn warm_up(frame: &[u8]) -> Result<(), String> {
    let mut p = traffic::open_port(TG1, Backend::AfPacket, 64, &[TG1_6], &[plan::TG1_4]).map_err(|e| e.to_string())?;
    for _ in 0..WARM_UP_FRAMES {
        if !p.port.tx_queue(frame) {
            return Err("the transmit ring is full".into());
        }
        p.port.tx_flush().map_err(|e| e.to_string())?;
        std::thread::sleep(WARM_UP_PAUSE);
    }
    Ok(())
}

/// Unpaced runs that measure the generator's ceiling, how long each lasts, and the pause
/// after each (the SUT drains what it queued).
const PROBES: usize = 3;
const PROBE_RUN: Duration = Duration::from_millis(200);
const PROBE_PAUSE: Duration = Duration::from_millis(100);

/// The best of `n` probes (`probe` returns the rate one reached). The best, not the
/// first: the search never offers more than the ceiling, and a stall of the tester's CPU
/// during a single 300 ms probe once capped a whole row (sr6's T.Insert: a ceiling of
/// 674 kpps, the PDR of all three repetitions 674 kpps, CV 0).
fn best_of(n: usize, mut probe: impl FnMut() -> f64) -> f64 {
    (0..n).map(|_| probe()).filter(|r| r.is_finite()).fold(0.0, f64::max)
}

/// The receiver on tg1, as the experiment's `receiver` says (`kind`). `auto` takes the
/// first that works of:
///
/// * `xdp_count`: an XDP program on tg1 counts and drops the test packets in tg1's NAPI
///   thread on the tester's CPU (the testbed put it there): no copy to user space, no
///   receiving thread, no wake-up. The tester's one CPU both generates and receives,
///   and this is the cheapest way to receive (`docs/perf.md`: what it changed);
/// * `tc_count`: the same program at tcx ingress (Linux 6.6+; where tg1 has no
///   driver-mode XDP), the receive work steered to the tester's CPU with RPS;
/// * `af_xdp`: a receiving thread on an AF_XDP socket (the XDP program copies each frame
///   into its ring);
/// * `af_packet`: a receiving thread on a packet socket (its receive work steered to the
///   tester's CPU with RPS), with the tcx program that spares the tester's kernel the
///   frames after the socket has its copy.
fn receiver(kind: &str, streams: u16, cpu: Option<usize>) -> Result<RxSide, String> {
    let mut why = String::new();
    for (name, hook) in [("xdp_count", CountHook::Xdp), ("tc_count", CountHook::TcxIngress)] {
        if kind != "auto" && kind != name {
            continue;
        }
        match XdpReceiver::attach(TG1, streams, hook) {
            Ok(r) => {
                let backend = format!("{}{why}", r.describe());
                return Ok(RxSide { recv: Box::new(r), backend, _drop: None });
            }
            Err(e) if kind == "auto" => why = format!("{why}; {name} failed: {e}"),
            Err(e) => return Err(e.to_string()),
        }
    }
    let spawn = |p: traffic::TesterPort, extra: String, drop: Option<IngressDrop>| {
        let backend = format!("{} on {TG1}{extra}", p.backend);
        let recv = Receiver::spawn(p.port, RecvConfig { cpu, ..RecvConfig::default() }).map_err(|e| e.to_string())?;
        Ok::<_, String>(RxSide { recv: Box::new(recv), backend, _drop: drop })
    };
    if matches!(kind, "auto" | "af_xdp") {
        match traffic::open_port(TG1, Backend::AfXdp, RING, &[TG1_6], &[plan::TG1_4]) {
            Ok(p) => return spawn(p, why, None),
            Err(e) if kind == "auto" => why = format!("{why}; AF_XDP failed: {e}"),
            Err(e) => return Err(e.to_string()),
        }
    }
    let p = traffic::open_port(TG1, Backend::AfPacket, RING, &[TG1_6], &[plan::TG1_4]).map_err(|e| e.to_string())?;
    // Where tcx is missing (Linux < 6.6) the blackhole routes do the job, slower.
    spawn(p, why, IngressDrop::attach(TG1).ok())
}

/// The receiver, and the tcx program that spares the tester's kernel the frames after
/// a receiving thread has counted them (detached when this is dropped).
struct RxSide {
    recv: Box<dyn Sink>,
    /// What the receiver is.
    backend: String,
    _drop: Option<IngressDrop>,
}

/// The generator on tg0: XDP live frames, AF_XDP or AF_PACKET (see the module docs).
fn generator(kind: &str, templates: Vec<traffic::Template>, cpu: Option<usize>) -> Result<Box<dyn Source>, String> {
    let mut why = String::new();
    if matches!(kind, "auto" | "xdp_live") {
        match LiveGenerator::new(TG0, &templates, cpu) {
            Ok(g) => return Ok(Box::new(g)),
            Err(e) if kind == "auto" => why = format!(" (XDP live frames unavailable: {e})"),
            Err(e) => return Err(e.to_string()),
        }
    }
    let backend = match kind {
        "af_packet" => Backend::AfPacket,
        "af_xdp" => Backend::AfXdp,
        _ => Backend::Auto,
    };
    let tx = traffic::open_port(TG0, backend, RING, &[TG0_6], &[plan::TG0_4]).map_err(|e| e.to_string())?;
    let what = format!("{} on {TG0}{why}", tx.backend);
    let gen =
        Generator::new(tx.port, templates, GenConfig { cpu, ..GenConfig::default() }).map_err(|e| e.to_string())?;
    Ok(Box::new(Described { gen, what }))
}

/// A socket generator with a description of how it was opened.
struct Described {
    gen: Generator,
    what: String,
}

impl Source for Described {
    fn run(&mut self, offered_pps: f64, duration: Duration) -> traffic::GenReport {
        self.gen.run(offered_pps, duration)
    }
    fn streams(&self) -> Vec<u16> {
        self.gen.streams()
    }
    fn describe(&self) -> String {
        self.what.clone()
    }
}

impl Drop for NetTester {
    fn drop(&mut self) {
        self.req.take();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Tester for NetTester {
    fn trial(
        &mut self,
        offered_pps: f64,
        duration: Duration,
        latency: bool,
    ) -> Result<(Trial, Option<Latency>), String> {
        let tx = self.req.as_ref().ok_or("the tester is closed")?;
        tx.send(Req { offered_pps, duration, latency }).map_err(|_| "the tester thread is gone".to_string())?;
        self.reply.recv().map_err(|_| "the tester thread is gone".to_string())?
    }

    fn max_pps(&self) -> f64 {
        self.max_pps
    }

    fn frame_bytes(&self) -> usize {
        self.frame_bytes
    }

    fn generator(&self) -> String {
        self.generator.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ceiling_is_the_best_probe_not_the_first() {
        // A stall in the first probe (674 kpps) must not cap the search.
        let mut rates = [674e3, 8.6e6, 8.1e6].into_iter();
        let mut calls = 0;
        let c = best_of(3, || {
            calls += 1;
            rates.next().unwrap_or(0.0)
        });
        assert_eq!(c, 8.6e6);
        assert_eq!(calls, 3);
        // A probe that yields no number is ignored.
        assert_eq!(best_of(2, || f64::NAN), 0.0);
        assert_eq!(best_of(0, || 1.0), 0.0);
    }
}
