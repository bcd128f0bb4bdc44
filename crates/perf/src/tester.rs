//! The tester of a testbed ([`crate::run::Tester`]): the generator on tg0 and the
//! receiver on tg1, with the frames of one behaviour addressed by [`crate::plan`].
//!
//! The generator runs on a thread of its own that enters the tester's namespace, opens
//! both ports there (sockets and XDP attachments belong to the namespace they were made
//! in), pins itself to the tester CPU and then serves trial requests; the receiver runs
//! on its own thread on the same CPU. The orchestrator's thread is never pinned, so the
//! forwarders it starts (`sr6 run`) inherit every CPU and can pin themselves to theirs.

use std::net::Ipv6Addr;
use std::sync::mpsc::{channel, Receiver as Rx, Sender};
use std::thread::JoinHandle;
use std::time::Duration;

use crate::experiment::Experiment;
use crate::model::{Behavior, Latency, Trial};
use crate::plan::{self, TG0, TG0_6, TG1, TG1_6};
use crate::run::Tester;
use crate::testbed::Testbed;
use crate::traffic::{self, Addressing, Backend, GenConfig, Generator, RecvConfig, Receiver};

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
}

fn mac(s: &str) -> Result<[u8; 6], String> {
    let v: Vec<u8> = s.split(':').filter_map(|x| u8::from_str_radix(x, 16).ok()).collect();
    v.try_into().map_err(|_| format!("not a MAC address: {s}"))
}

/// The template addresses of behaviour `b` on testbed `tb`.
pub fn addressing(tb: &Testbed, b: Behavior) -> Result<Addressing, String> {
    let f = plan::flow(b);
    let transit = matches!(b, Behavior::Ipv6 | Behavior::Ipv4 | Behavior::TInsert | Behavior::TEncaps | Behavior::TEncapsL2);
    Ok(Addressing {
        tg0_mac: mac(&tb.tg0_mac)?,
        dut0_mac: mac(&tb.dut0_mac)?,
        dut1_mac: mac(&tb.dut1_mac)?,
        tg1_mac: mac(&tb.tg1_mac)?,
        src6: TG0_6,
        src4: plan::TG0_4,
        dst6: if transit { f.dst6.unwrap_or(plan::DST6) } else { f.inner6 },
        dst4: f.inner4,
        sid: f.dst6.unwrap_or(Ipv6Addr::UNSPECIFIED),
        next_sid: f.next_sid.unwrap_or(plan::SEG2),
    })
}

/// Opens the tester for `b` on `tb` (the [`crate::run::TesterFactory`] of `sr6 perf`).
pub fn open(tb: &Testbed, b: Behavior, exp: &Experiment) -> Result<Box<dyn Tester>, String> {
    let a = addressing(tb, b)?;
    let tg = tb.tg.clone();
    let cpu = Some(exp.cpus.tester);
    let (req_tx, req_rx) = channel::<Req>();
    let (rep_tx, rep_rx) = channel::<Reply>();
    let (ready_tx, ready_rx) = channel::<Result<(f64, usize), String>>();
    let thread = std::thread::Builder::new()
        .name("sr6-perf-tester".into())
        .spawn(move || {
            let (mut gen, recv, frame_bytes) = match setup(&tg, b, &a, cpu) {
                Ok(x) => x,
                Err(e) => {
                    let _ = ready_tx.send(Err(e));
                    return;
                }
            };
            // The generator's own ceiling: a short unpaced run (what the SUT does with
            // it does not matter here).
            let probe = gen.run(f64::INFINITY, Duration::from_millis(300));
            std::thread::sleep(Duration::from_millis(200));
            let _ = ready_tx.send(Ok((probe.achieved_pps().max(1.0), frame_bytes)));
            while let Ok(r) = req_rx.recv() {
                let out = traffic::run_trial_report(&mut gen, &recv, r.offered_pps, r.duration, traffic::DEFAULT_SETTLE)
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
    let (max_pps, frame_bytes) = ready_rx.recv().map_err(|_| "the tester thread died while starting".to_string())??;
    Ok(Box::new(NetTester { req: Some(req_tx), reply: rep_rx, thread: Some(thread), max_pps, frame_bytes }))
}

/// On the tester thread: enter the namespace, open the ports, build the generator and
/// the receiver.
fn setup(tg: &str, b: Behavior, a: &Addressing, cpu: Option<usize>) -> Result<(Generator, Receiver, usize), String> {
    sr6_io::live::enter_netns(tg).map_err(|e| e.to_string())?;
    let tx = traffic::open_port(TG0, Backend::Auto, RING, &[TG0_6], &[plan::TG0_4]).map_err(|e| e.to_string())?;
    // The receiver reads with AF_PACKET, and tg1's receive work is steered to the
    // tester CPU (RPS): with an XDP program on tg1, veth would run it on the CPU that
    // transmits — the SUT's — and charge the tester's work to the forwarder.
    let rx = traffic::open_port(TG1, Backend::AfPacket, RING, &[TG1_6], &[plan::TG1_4]).map_err(|e| e.to_string())?;
    let mut templates = vec![traffic::build(b, a, 0)];
    if b == Behavior::EndDt46 {
        // Even streams carry IPv6, odd ones IPv4: the behaviour's mixed traffic.
        templates.push(traffic::build(b, a, 1));
    }
    let frame_bytes = templates[0].frame.len();
    let gen = Generator::new(tx.port, templates, GenConfig { cpu, ..GenConfig::default() }).map_err(|e| e.to_string())?;
    let recv = Receiver::spawn(rx.port, RecvConfig { cpu, ..RecvConfig::default() }).map_err(|e| e.to_string())?;
    Ok((gen, recv, frame_bytes))
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
    fn trial(&mut self, offered_pps: f64, duration: Duration, latency: bool) -> Result<(Trial, Option<Latency>), String> {
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
}
