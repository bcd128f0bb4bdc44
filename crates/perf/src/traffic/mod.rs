//! The tester's traffic: the frames it sends, the generator that sends them at a
//! controlled rate, the receiver that counts them back, and one trial.
//!
//! ```text
//!   Generator (caller's thread)                           Receiver (own thread)
//!   template ─ stamp seq + ts + UDP csum ─> Port tg0 ──> SUT ──> Port tg1 ─> telemetry
//!              paced by rate::Pacer                                at frame end: count,
//!                                                                  seq check, latency
//! ```
//!
//! * [`template`](mod@template): one Ethernet frame per behaviour, SRPerf's packet sizes (64-byte
//!   inner IP packet, + 80 bytes of SRv6 encapsulation for endpoint behaviours), with
//!   the address plan in [`Addressing`].
//! * [`telemetry`]: the 16-byte block at the end of every frame (magic, stream,
//!   sequence number, TX timestamp) and the clock.
//! * [`rate`]: the pacing schedule. [`gen`]: the AF_XDP/AF_PACKET generator;
//!   [`live_gen`]: the XDP live-frame generator (paced in the kernel; the default where
//!   it works); both are a [`Source`]. [`recv`]: the receiving thread;
//!   [`xdp_recv`]: counting in an XDP program instead (the default where it works); both
//!   are a [`Sink`].
//!   [`latency`]: the latency histogram. [`port`]: opening AF_XDP / AF_PACKET ports.
//! * [`trial`]: [`run_trial`], one RFC 2544 trial as a [`crate::model::Trial`].

pub mod gen;
pub mod latency;
pub mod live_gen;
pub mod port;
pub mod rate;
pub mod recv;
pub mod telemetry;
pub mod template;
pub mod trial;
pub mod xdp_recv;

pub use gen::{GenConfig, GenReport, Generator};
pub use latency::{Histogram, LatencyStats};
pub use live_gen::LiveGenerator;
pub use port::{open_port, Backend, TesterPort};
pub use recv::{Idle, Receiver, RecvConfig, RecvReport, StreamCounts};
pub use telemetry::{mono_ns, Telemetry, MAGIC, TELEMETRY_LEN};
pub use template::{
    build, frame_len, inner_len_range, min_inner_len, template, templates, warm_up_frame, Addressing, Template,
    INNER_IP_LEN,
};
pub use trial::{run_trial, run_trial_report, Losses, TrialReport, DEFAULT_SETTLE};
pub use xdp_recv::XdpReceiver;

/// A generator: sends its streams at a rate for a duration, on the calling thread, and
/// says what it did.
pub trait Source: Send {
    /// Sends at `offered_pps` (`f64::INFINITY`: as fast as it can) for `duration`.
    /// Never fails: what went wrong is counted in the report.
    fn run(&mut self, offered_pps: f64, duration: std::time::Duration) -> GenReport;
    /// The stream ids, in sending order.
    fn streams(&self) -> Vec<u16>;
    /// What it is, for logs ("AF_XDP (generic) on tg0", "XDP live frames out of tg0").
    fn describe(&self) -> String;
}

/// A receiver: counts the test packets that come back between [`Sink::start`] and
/// [`Sink::stop`]. The thread [`Receiver`] (AF_XDP or AF_PACKET port) and the
/// [`XdpReceiver`] (counting in an XDP program) are both one.
pub trait Sink: Send {
    /// Clears every counter and counts packets stamped from now on; returns the start
    /// time ([`mono_ns`]).
    fn start(&self) -> Result<u64, TrafficError>;
    /// Stops counting and returns the counts since [`Sink::start`].
    fn stop(&self) -> Result<RecvReport, TrafficError>;
    /// What it is, for logs ("xdp_count (native) on tg1").
    fn describe(&self) -> String;
}

/// What can go wrong in the traffic module.
#[derive(Debug, thiserror::Error)]
pub enum TrafficError {
    /// A template the generator cannot stamp.
    #[error("bad template: {0}")]
    Template(String),
    /// A port could not be opened.
    #[error("{0}")]
    Port(String),
    /// The receiving thread does not answer (it panicked or was stopped).
    #[error("the receiver on {0} does not answer")]
    ReceiverGone(String),
    #[error("{0}")]
    Io(#[from] std::io::Error),
}
