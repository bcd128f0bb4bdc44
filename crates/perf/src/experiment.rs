//! The experiment file (YAML): which forwarders and behaviours, packet size, trial
//! duration, repetitions, loss threshold, search precision, CPU placement. Every field
//! has a default, so an empty file — or no file — is the built-in default experiment:
//! the SRPerf paper's table (Table I), the NEXT-C-SID rows for both forwarders, and the
//! SR proxies End.AD and End.AM in both directions (sr6 only).
//! Unknown keys are errors (`serde(deny_unknown_fields)`); [`Experiment::validate`]
//! checks values once.
//! Documented with an example in `examples/perf/experiment.yaml`.

use serde::{Deserialize, Serialize};

use crate::model::Behavior;
use crate::testbed::Cpus;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Experiment {
    /// Forwarder drivers, in order: `linux`, `sr6`.
    pub forwarders: Vec<String>,
    /// Behaviours, by name (`ipv6`, `T.Encaps`, `End.DX6`, ...).
    pub behaviors: Vec<String>,
    /// Size of the (inner) IP packet in bytes — SRPerf's "64-byte packets"; endpoint
    /// behaviours add their 80 bytes of outer IPv6 + SRH on top (the NEXT-C-SID rows
    /// 40, an outer IPv6 header without SRH). Each behaviour takes a range
    /// (`traffic::inner_len_range`): at least its headers and the telemetry (64 with
    /// an IPv6 inner packet, 44 with IPv4), at most what keeps its frames within the
    /// testbed's MTU (1460 for the mobile rows, the GTP-U/SRv6 paper's long packets).
    pub packet_bytes: usize,
    /// Seconds each trial sends for.
    pub trial_duration_s: f64,
    /// Searches per (forwarder, behaviour); mean, std, CV and CI95 are over these.
    pub repetitions: usize,
    /// PDR loss thresholds as fractions (0.005 = 0.5%); the first is reported as
    /// `pdr_pps`.
    pub pdr_loss_thresholds: Vec<f64>,
    /// Relative width at which the binary search stops (0.01 = 1%).
    pub precision: f64,
    /// First rate of the exponential phase (packets/s), known to be lossless.
    pub start_pps: f64,
    /// Highest rate to offer (packets/s); 0 = what the generator can do.
    pub max_pps: f64,
    /// Latency is measured at this fraction of the NDR (0 = not measured).
    pub latency_fraction: f64,
    /// Latency is measured at this rate (packets/s) instead, the same for every
    /// behaviour, as the GTP-U/SRv6 paper compares its functions (0 = use
    /// `latency_fraction`). A rate above a behaviour's NDR measures its queues too.
    pub latency_pps: f64,
    /// Where the tester and the SUT run.
    pub cpus: Cpus,
    /// `sr6 run --backend` for the sr6 forwarder.
    pub sr6_backend: String,
    /// `sr6 run --ring` for the sr6 forwarder: slots per AF_XDP ring. sr6's worker is an
    /// ordinary thread, which a kernel thread can keep off the SUT CPU for milliseconds
    /// (seen: the memory-monitoring `kdamond` for 3.6 ms, with kernel preemption off);
    /// the ring must hold what arrives meanwhile (16384: 14 ms at 1.15 Mpps). The
    /// kernel forwarder's receive work runs in a SCHED_FIFO NAPI thread instead.
    pub sr6_ring_frames: u32,
    /// `sr6 run --overload-priority` for the sr6 forwarder (0: off): while sr6's
    /// receive ring is over 3/4 full its worker runs SCHED_FIFO at this priority,
    /// until the ring is under 1/16. One above the testbed's NAPI threads (the
    /// default), it keeps sr6 forwarding when offered more than it can forward
    /// instead of losing its CPU to dut0's NAPI thread taking frames it must drop.
    pub sr6_overload_priority: u32,
    /// How the tester sends: `xdp_live` (XDP live frames, paced in the kernel: the
    /// fastest), `af_xdp`, `af_packet`, or `auto` (the first of these that works).
    pub generator: String,
    /// How the tester counts what comes back: `xdp_count` (an XDP program on tg1 counts
    /// and drops test packets where they arrive: the cheapest), `tc_count` (the same at
    /// tcx ingress), `af_xdp` or `af_packet` (a receiving thread), or `auto` (the first
    /// of these that works).
    pub receiver: String,
    /// A trial that loses packets is run again up to this many times, and the best one
    /// counts (RFC 2544 §24 lets a trial be repeated): on a shared machine a stray
    /// process can cost a trial a few packets, and one such trial would otherwise end
    /// the exponential phase or steer the binary search down.
    pub retry_lossy_trials: usize,
    /// A trial in which the tester fell short of its rate (a stall of its CPU) or lost
    /// frames itself is run again up to this many times: such a trial says nothing
    /// about the SUT, and the search would take its rate as the tester's ceiling.
    pub retry_short_trials: usize,
    /// After each repetition's search, one trial at the highest rate the search may
    /// offer: the forwarding rate at maximum offered load (RFC 2285 §3.6.2), which
    /// measures a saturated SUT's capacity even where the tester bounded its PDR.
    pub max_load_trial: bool,
    /// Route changes a second sent to the forwarder while its trials run (0: none):
    /// blackhole /64s under 2001:db8:c4::/48 added and withdrawn in batches every 100 ms,
    /// by `sr6 ctl batch` or `ip -batch` ([`crate::churn`]).
    pub route_churn_per_s: u32,
}

impl Default for Experiment {
    fn default() -> Self {
        Experiment {
            forwarders: vec!["linux".into(), "sr6".into()],
            behaviors: [
                "ipv6",
                "T.Insert",
                "T.Encaps",
                "T.Encaps.L2",
                "End",
                "End.T",
                "End.X",
                "End.DX2",
                "End.DX4",
                "End.DX6",
                "End.DT6",
                "End.DT4",
                "End.DT46",
                "End-next-csid",
                "End.X-next-csid",
                "End-replace-csid",
                "End.AD",
                "End.AD-return",
                "End.AM",
                "End.AM-return",
                "End.BPF-end",
            ]
            .iter()
            .map(|s| s.to_string())
            .collect(),
            packet_bytes: 64,
            trial_duration_s: 1.0,
            repetitions: 3,
            pdr_loss_thresholds: vec![0.005],
            precision: 0.02,
            start_pps: 20_000.0,
            max_pps: 0.0,
            latency_fraction: 0.5,
            latency_pps: 0.0,
            cpus: Cpus::default(),
            sr6_backend: "af_xdp".into(),
            sr6_ring_frames: 16384,
            sr6_overload_priority: crate::testbed::NAPI_RT_PRIO + 1,
            generator: "auto".into(),
            receiver: "auto".into(),
            retry_lossy_trials: 1,
            retry_short_trials: 3,
            max_load_trial: true,
            route_churn_per_s: 0,
        }
    }
}

/// The rows of [`Experiment::xdp`].
pub const XDP_ROWS: [&str; 19] = [
    "ipv6",
    "ipv4",
    "End",
    "End.X",
    "End.T",
    "End.DX6",
    "End.DT6",
    "End.DX4",
    "End.DT4",
    "End.DT46",
    "T.Encaps",
    "T.Insert",
    "T.Encaps.L2",
    "End-next-csid",
    "End.X-next-csid",
    "H.Encaps-hmac-sha256",
    "H.Encaps-hmac-sha1",
    "End-hmac-sha256",
    "End-hmac-sha1",
];

/// The mobile experiment's latency rate: 100 kpps, the paper's light condition (100
/// Mbit/s) at its short frames, well under every function's NDR here.
pub const MOBILE_LATENCY_PPS: f64 = 100_000.0;

impl Experiment {
    /// The built-in mobile experiment (`sr6 perf run --preset mobile`): the GTP-U/SRv6
    /// paper's six functions (`crate::model::MOBILE`) next to plain IPv4 forwarding,
    /// the baseline their latency is normalised to (the paper's L2 forwarding), on its
    /// short packets (a 46-byte IPv4 packet; 1460 for its long ones). Both forwarders:
    /// the kernel runs the SRv6 rows and plain forwarding, and skips the others.
    pub fn mobile() -> Experiment {
        let behaviors = ["ipv4"].into_iter().chain(crate::model::MOBILE.iter().map(|m| m.name));
        Experiment {
            behaviors: behaviors.map(String::from).collect(),
            packet_bytes: 46,
            latency_pps: MOBILE_LATENCY_PPS,
            ..Experiment::default()
        }
    }

    /// The built-in End.BPF experiment (`sr6 perf run --preset bpf`): the End.BPF
    /// paper's functions (`crate::model::END_BPF`: End, Tag++, Add TLV and End.T written
    /// in eBPF) next to native End and End.T, for both forwarders, which load the same
    /// objects.
    pub fn bpf() -> Experiment {
        let behaviors = ["End", "End.T"].into_iter().chain(crate::model::END_BPF.iter().map(|f| f.name));
        Experiment { behaviors: behaviors.map(String::from).collect(), ..Experiment::default() }
    }

    /// sr6's two tiers beside the kernel: the behaviours the XDP tier forwards (plain
    /// IPv6 and End) by `linux`, `sr6` (the XDP tier, the AF_XDP tier behind it) and
    /// `sr6-afxdp` (the AF_XDP tier alone).
    pub fn tiers() -> Experiment {
        Experiment {
            forwarders: ["linux", "sr6", "sr6-afxdp"].map(String::from).to_vec(),
            behaviors: ["ipv6", "End"].map(String::from).to_vec(),
            ..Experiment::default()
        }
    }

    /// Every behaviour the XDP tier forwards (`sr6 perf run --preset xdp`), by the
    /// kernel, sr6 (both tiers) and sr6's AF_XDP tier alone, in 2 repetitions: transit,
    /// End, End.X, End.T, the decapsulating SIDs, the head-end policies (T.Encaps,
    /// T.Insert, T.Encaps.L2), NEXT-C-SID End and End.X, and the HMAC rows (H.Encaps
    /// adding an HMAC TLV, End verifying one; SHA-256 and SHA-1): the XDP tier's whole
    /// table in one run.
    pub fn xdp() -> Experiment {
        Experiment {
            forwarders: ["linux", "sr6", "sr6-afxdp"].map(String::from).to_vec(),
            behaviors: XDP_ROWS.map(String::from).to_vec(),
            repetitions: 2,
            ..Experiment::default()
        }
    }

    /// HMAC at speed (`sr6 perf run --preset hmac`): H.Encaps adding an HMAC TLV and End
    /// verifying one (`crate::model::HMAC_ROWS`, SHA-256 and SHA-1) next to the same
    /// behaviours without, for both forwarders. The Lebrun paper measured the kernel's
    /// H.Encaps at 240-290 kpps with an HMAC against about 1 Mpps without.
    pub fn hmac() -> Experiment {
        let behaviors = ["T.Encaps", "End"].into_iter().chain(crate::model::HMAC_ROWS.iter().map(|h| h.name));
        Experiment { behaviors: behaviors.map(String::from).collect(), ..Experiment::default() }
    }

    /// Parses a YAML experiment; `file` only names it in errors.
    pub fn from_yaml(text: &str, file: &str) -> Result<Experiment, String> {
        let e: Experiment = if text.trim().is_empty() {
            Experiment::default()
        } else {
            serde_yaml::from_str(text).map_err(|e| match e.location() {
                Some(l) => format!("{file}:{}:{}: {e}", l.line(), l.column()),
                None => format!("{file}: {e}"),
            })?
        };
        e.validate().map_err(|m| format!("{file}: {m}"))?;
        Ok(e)
    }

    /// The behaviours, parsed.
    pub fn behaviors(&self) -> Result<Vec<Behavior>, String> {
        self.behaviors
            .iter()
            .map(|b| {
                Behavior::parse(b).ok_or_else(|| {
                    let names: Vec<&str> = Behavior::all().iter().map(|b| b.name()).collect();
                    format!("unknown behaviour `{b}` (known: {})", names.join(", "))
                })
            })
            .collect()
    }

    pub fn validate(&self) -> Result<(), String> {
        self.behaviors()?;
        if self.forwarders.is_empty() {
            return Err("forwarders: give at least one (linux, sr6, sr6-afxdp)".into());
        }
        for f in &self.forwarders {
            if !matches!(f.as_str(), "linux" | "sr6" | "sr6-afxdp") {
                return Err(format!("forwarders: unknown `{f}` (linux, sr6 or sr6-afxdp)"));
            }
        }
        for b in self.behaviors()? {
            let (lo, hi) = crate::traffic::inner_len_range(b);
            if !(lo..=hi).contains(&self.packet_bytes) {
                return Err(format!(
                    "packet_bytes: {}: {} takes {lo} to {hi} bytes (its IP, UDP and telemetry headers at \
                     least; its frames in and out within the testbed's 1500-byte MTU at most)",
                    self.packet_bytes,
                    b.name()
                ));
            }
        }
        if !(self.trial_duration_s > 0.0 && self.trial_duration_s <= 600.0) {
            return Err(format!("trial_duration_s: {} must be in (0, 600]", self.trial_duration_s));
        }
        if self.repetitions == 0 {
            return Err("repetitions: at least 1".into());
        }
        if !(self.latency_pps >= 0.0 && self.latency_pps.is_finite()) {
            return Err(format!("latency_pps: {}: a rate in packets/s, or 0", self.latency_pps));
        }
        if self.pdr_loss_thresholds.is_empty() || self.pdr_loss_thresholds.iter().any(|t| !(*t > 0.0 && *t < 1.0)) {
            return Err("pdr_loss_thresholds: fractions in (0, 1), e.g. [0.005]".into());
        }
        if !(self.precision > 0.0 && self.precision < 1.0) {
            return Err(format!("precision: {} must be in (0, 1)", self.precision));
        }
        // `!(x >= 1.0)` and not `x < 1.0`: a NaN start is refused too.
        #[allow(clippy::neg_cmp_op_on_partial_ord)]
        if !(self.start_pps >= 1.0) || self.max_pps < 0.0 || (self.max_pps > 0.0 && self.max_pps < self.start_pps) {
            return Err("start_pps must be >= 1 and max_pps 0 (auto) or >= start_pps".into());
        }
        if !(0.0..1.0).contains(&self.latency_fraction) {
            return Err("latency_fraction: in [0, 1)".into());
        }
        if self.retry_lossy_trials > 5 {
            return Err("retry_lossy_trials: at most 5".into());
        }
        if self.retry_short_trials > 5 {
            return Err("retry_short_trials: at most 5".into());
        }
        if self.route_churn_per_s > 1_000_000 {
            return Err(format!("route_churn_per_s: {} must be at most 1000000", self.route_churn_per_s));
        }
        if !matches!(self.sr6_backend.as_str(), "af_xdp" | "af_packet" | "auto") {
            return Err("sr6_backend: af_xdp, af_packet or auto".into());
        }
        if !(64..=32768).contains(&self.sr6_ring_frames) {
            return Err(format!("sr6_ring_frames: {} must be in 64..=32768", self.sr6_ring_frames));
        }
        if self.sr6_overload_priority > 99 {
            return Err(format!("sr6_overload_priority: {} must be in 0..=99 (0: off)", self.sr6_overload_priority));
        }
        if !matches!(self.generator.as_str(), "auto" | "xdp_live" | "af_xdp" | "af_packet") {
            return Err("generator: auto, xdp_live, af_xdp or af_packet".into());
        }
        if !matches!(self.receiver.as_str(), "auto" | "xdp_count" | "tc_count" | "af_xdp" | "af_packet") {
            return Err("receiver: auto, xdp_count, tc_count, af_xdp or af_packet".into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_file_is_the_default_experiment() {
        let e = Experiment::from_yaml("", "x.yaml").unwrap();
        assert_eq!(e, Experiment::default());
        assert_eq!(e.behaviors().unwrap().len(), 21);
        let proxies: Vec<&str> = e.behaviors().unwrap().iter().filter(|b| b.is_proxy()).map(|b| b.name()).collect();
        assert_eq!(proxies, ["End.AD", "End.AD-return", "End.AM", "End.AM-return"]);
    }

    #[test]
    fn fields_override_and_errors_name_the_place() {
        let e = Experiment::from_yaml("forwarders: [sr6]\nbehaviors: [ipv6, End]\nrepetitions: 5\n", "x.yaml").unwrap();
        assert_eq!(e.forwarders, vec!["sr6"]);
        assert_eq!(e.repetitions, 5);
        assert_eq!(e.trial_duration_s, 1.0);
        let err = Experiment::from_yaml("repetitons: 5\n", "x.yaml").unwrap_err();
        assert!(err.starts_with("x.yaml:1:") && err.contains("repetitons"), "{err}");
        let err = Experiment::from_yaml("behaviors: [End.Q]\n", "x.yaml").unwrap_err();
        assert!(err.contains("unknown behaviour `End.Q`"), "{err}");
        let err = Experiment::from_yaml("precision: 2\n", "x.yaml").unwrap_err();
        assert!(err.contains("precision"), "{err}");
        let err = Experiment::from_yaml("receiver: pcap\n", "x.yaml").unwrap_err();
        assert!(err.contains("receiver: auto, xdp_count, tc_count"), "{err}");
        assert_eq!(Experiment::from_yaml("receiver: tc_count\n", "x.yaml").unwrap().receiver, "tc_count");
        let err = Experiment::from_yaml("sr6_overload_priority: 100\n", "x.yaml").unwrap_err();
        assert!(err.contains("sr6_overload_priority: 100 must be in 0..=99"), "{err}");
        assert_eq!(Experiment::from_yaml("sr6_overload_priority: 0\n", "x.yaml").unwrap().sr6_overload_priority, 0);
        let err = Experiment::from_yaml("sr6_ring_frames: 16\n", "x.yaml").unwrap_err();
        assert!(err.contains("sr6_ring_frames: 16 must be in 64..=32768"), "{err}");
    }

    #[test]
    fn the_example_file_parses() {
        let text = include_str!("../../../examples/perf/experiment.yaml");
        let e = Experiment::from_yaml(text, "examples/perf/experiment.yaml").unwrap();
        assert!(!e.behaviors().unwrap().is_empty());
        // It lists every key with its default.
        assert_eq!(e, Experiment::default());
    }

    #[test]
    fn the_bpf_experiment_is_the_papers_functions_beside_native() {
        let b = Experiment::bpf();
        b.validate().unwrap();
        let names: Vec<&str> = b.behaviors().unwrap().iter().map(|b| b.name()).collect();
        assert_eq!(names, ["End", "End.T", "End.BPF-end", "End.BPF-tag", "End.BPF-tlv", "End.BPF-end_t"]);
        assert_eq!(b.forwarders, ["linux", "sr6"]);
        assert!(Experiment::default().behaviors().unwrap().contains(&Behavior::parse("End.BPF-end").unwrap()));
    }

    #[test]
    fn the_xdp_experiment_is_every_behaviour_the_tier_forwards() {
        let x = Experiment::xdp();
        x.validate().unwrap();
        let names: Vec<&str> = x.behaviors().unwrap().iter().map(|b| b.name()).collect();
        assert_eq!(names, XDP_ROWS, "each row parses to itself");
        assert_eq!((x.forwarders.as_slice(), x.repetitions), (&["linux", "sr6", "sr6-afxdp"].map(String::from)[..], 2));
        for h in &crate::model::HMAC_ROWS {
            assert!(names.contains(&h.name), "the HMAC row {} is in the XDP tier's table", h.name);
        }
    }

    #[test]
    fn the_mobile_experiment_takes_the_papers_sizes() {
        let m = Experiment::mobile();
        m.validate().unwrap();
        let text = include_str!("../../../examples/perf/mobile.yaml");
        assert_eq!(Experiment::from_yaml(text, "examples/perf/mobile.yaml").unwrap(), m);
        let names: Vec<&str> = m.behaviors().unwrap().iter().map(|b| b.name()).collect();
        assert_eq!(
            names,
            ["ipv4", "GTP-U.Encap", "GTP-U.Decap", "SRv6.Encap", "SRv6.Decap", "H.M.GTP4.D", "End.M.GTP4.E"]
        );
        assert_eq!(m.packet_bytes, 46);
        Experiment { packet_bytes: 1460, ..m.clone() }.validate().unwrap();
        let e = Experiment { packet_bytes: 1461, ..m.clone() }.validate().unwrap_err();
        assert!(e.contains("GTP-U.Encap takes 44 to 1460 bytes"), "{e}");
        let e = Experiment { packet_bytes: 43, ..m }.validate().unwrap_err();
        assert!(e.contains("packet_bytes: 43"), "{e}");
        // IPv6 packets need 64 bytes; the SRPerf table's encapsulations, room for their
        // headers.
        let e = Experiment { packet_bytes: 46, ..Experiment::default() }.validate().unwrap_err();
        assert!(e.contains("ipv6 takes 64 to 1500 bytes"), "{e}");
        assert!(Experiment { packet_bytes: 1460, ..Experiment::default() }.validate().is_err());
        Experiment { packet_bytes: 1300, ..Experiment::default() }.validate().unwrap();
    }

    #[test]
    fn the_max_load_trial_can_be_switched_off() {
        assert!(Experiment::default().max_load_trial);
        assert!(!Experiment::from_yaml("max_load_trial: false\n", "x.yaml").unwrap().max_load_trial);
        let err = Experiment::from_yaml("max_load_trial: 3\n", "x.yaml").unwrap_err();
        assert!(err.starts_with("x.yaml:1:"), "{err}");
    }
}
