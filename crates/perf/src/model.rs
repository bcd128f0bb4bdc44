//! What an experiment measures and produces. Every other module of the crate speaks
//! these types; `results.json` is a list of [`BehaviorResult`] serialized with serde.

use serde::{Deserialize, Serialize};

/// The behaviours the framework measures, named as the SRPerf paper names them
/// (Table I): transit behaviours with their `T.` names, endpoint behaviours as in
/// RFC 8986.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Behavior {
    /// Plain IPv6 forwarding (the baseline).
    #[serde(rename = "ipv6")]
    Ipv6,
    /// Plain IPv4 forwarding.
    #[serde(rename = "ipv4")]
    Ipv4,
    /// H.Insert (`encap seg6 mode inline`).
    #[serde(rename = "T.Insert")]
    TInsert,
    /// H.Encaps (`encap seg6 mode encap`).
    #[serde(rename = "T.Encaps")]
    TEncaps,
    /// H.Encaps.L2 (`encap seg6 mode l2encap`).
    #[serde(rename = "T.Encaps.L2")]
    TEncapsL2,
    #[serde(rename = "End")]
    End,
    #[serde(rename = "End.T")]
    EndT,
    #[serde(rename = "End.X")]
    EndX,
    #[serde(rename = "End.DX2")]
    EndDx2,
    #[serde(rename = "End.DX4")]
    EndDx4,
    #[serde(rename = "End.DX6")]
    EndDx6,
    #[serde(rename = "End.DT4")]
    EndDt4,
    #[serde(rename = "End.DT6")]
    EndDt6,
    #[serde(rename = "End.DT46")]
    EndDt46,
}

impl Behavior {
    pub const ALL: [Behavior; 14] = [
        Behavior::Ipv6,
        Behavior::Ipv4,
        Behavior::TInsert,
        Behavior::TEncaps,
        Behavior::TEncapsL2,
        Behavior::End,
        Behavior::EndT,
        Behavior::EndX,
        Behavior::EndDx2,
        Behavior::EndDx4,
        Behavior::EndDx6,
        Behavior::EndDt4,
        Behavior::EndDt6,
        Behavior::EndDt46,
    ];

    /// The name used in files, on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Behavior::Ipv6 => "ipv6",
            Behavior::Ipv4 => "ipv4",
            Behavior::TInsert => "T.Insert",
            Behavior::TEncaps => "T.Encaps",
            Behavior::TEncapsL2 => "T.Encaps.L2",
            Behavior::End => "End",
            Behavior::EndT => "End.T",
            Behavior::EndX => "End.X",
            Behavior::EndDx2 => "End.DX2",
            Behavior::EndDx4 => "End.DX4",
            Behavior::EndDx6 => "End.DX6",
            Behavior::EndDt4 => "End.DT4",
            Behavior::EndDt6 => "End.DT6",
            Behavior::EndDt46 => "End.DT46",
        }
    }

    /// Parses a name (case-insensitive; `H.Encaps`-style RFC names accepted too).
    pub fn parse(s: &str) -> Option<Behavior> {
        let l = s.to_ascii_lowercase();
        let alias = match l.as_str() {
            "h.insert" => "t.insert",
            "h.encaps" => "t.encaps",
            "h.encaps.l2" => "t.encaps.l2",
            "ipv6-forward" => "ipv6",
            "ipv4-forward" => "ipv4",
            x => x,
        };
        Behavior::ALL.into_iter().find(|b| b.name().to_ascii_lowercase() == alias)
    }
}

/// One trial: traffic offered at one rate for a fixed duration.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Trial {
    /// The rate the generator was asked for (packets/s).
    pub offered_pps: f64,
    /// Packets the generator sent (may fall short of the offered rate; see `tx_dropped`).
    pub sent: u64,
    /// Packets the generator could not send (its ring was full): never counted as the
    /// SUT's loss.
    pub tx_dropped: u64,
    /// Packets received back from the SUT (of this trial's stream).
    pub received: u64,
    /// Seconds the trial sent for.
    pub duration_s: f64,
    /// `received / duration_s`.
    pub delivered_pps: f64,
    /// Delivery ratio `received / sent` (1.0 when nothing was sent).
    pub delivery_ratio: f64,
    /// Of `sent - received`: frames the SUT's receiving link (dut0) dropped because
    /// its ring was full — the SUT did not take them in time (0 where not measured).
    #[serde(default)]
    pub sut_rx_dropped: u64,
    /// Of `sent - received`: frames the tester's receiving link dropped (tg1's ring
    /// full: dut1's transmit drops, and tg1's receive drops) — the tester's loss,
    /// not the SUT's (0 where not measured).
    #[serde(default)]
    pub tester_rx_dropped: u64,
}

/// The result of one NDR/PDR search (one repetition).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchResult {
    /// Highest rate found with no loss (delivery ratio 1.0), packets/s.
    pub ndr_pps: f64,
    /// Highest rate found with a loss ratio <= the threshold, packets/s.
    pub pdr_pps: f64,
    /// Every trial, in the order run.
    pub trials: Vec<Trial>,
    /// What stopped the NDR search from going higher ([`Limit::Sut`] unless the
    /// tester did: then `ndr_pps` is only a lower bound of the SUT's).
    #[serde(default)]
    pub ndr_limit: Limit,
    /// The same for the PDR.
    #[serde(default)]
    pub pdr_limit: Limit,
}

impl SearchResult {
    /// Whether the PDR was bounded by the tester (its ceiling, or a rate it could not
    /// produce), not by the SUT's loss: a lower bound.
    pub fn pdr_tester_bound(&self) -> bool {
        matches!(self.pdr_limit, Limit::Generator | Limit::MaxRate)
    }
}

/// What bounded a target's bracket from above when the search ended.
/// Serialized in snake case (`sut`, `generator`, `max_rate`, `not_found`); results
/// written before it was recorded read as `sut`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Limit {
    /// The SUT: `hi` is the lowest rate measured to fail the criterion.
    #[default]
    Sut,
    /// The generator: `hi` is the lowest rate it could not produce; `lo` is only a lower
    /// bound of the SUT's capacity.
    Generator,
    /// `max_pps` itself satisfied the criterion (`lo = hi = max_pps`): the generator's
    /// configured ceiling was the limit.
    MaxRate,
    /// No rate satisfied the criterion down to the absolute floor: `lo = 0`.
    NotFound,
}

/// Mean, standard deviation, coefficient of variation and the 95% confidence interval
/// of the mean (Student's t) over repetitions — the paper's Table I.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub n: usize,
    pub mean: f64,
    /// Sample standard deviation (n - 1).
    pub std: f64,
    /// `std / mean`, as a fraction (0.01 = 1%).
    pub cv: f64,
    /// Half-width of the 95% confidence interval of the mean.
    pub ci95: f64,
}

/// One-way latency measured at a fraction of the NDR (timestamps written into each
/// packet's payload by the generator and read at the receiver), microseconds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Latency {
    pub rate_pps: f64,
    pub samples: u64,
    pub min_us: f64,
    pub avg_us: f64,
    pub p50_us: f64,
    pub p99_us: f64,
    pub max_us: f64,
}

/// Everything measured for one forwarder and one behaviour.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BehaviorResult {
    /// Driver name: `linux`, `sr6`, ...
    pub forwarder: String,
    pub behavior: Behavior,
    /// Frame size on the wire towards the SUT (bytes, without FCS).
    pub frame_bytes: usize,
    /// Mean NDR over the repetitions (packets/s).
    pub ndr_pps: f64,
    /// Mean PDR over the repetitions (packets/s).
    pub pdr_pps: f64,
    /// The PDR's loss threshold, as a fraction (0.005 = 0.5%).
    pub pdr_loss_threshold: f64,
    pub ndr: Summary,
    pub pdr: Summary,
    /// One search per repetition.
    pub repetitions: Vec<SearchResult>,
    pub latency: Option<Latency>,
    /// The forwarding rate at maximum offered load (absent where not measured, and in
    /// results written before it was).
    #[serde(default)]
    pub max_load: Option<MaxLoad>,
}

/// The forwarding rate at maximum offered load (RFC 2285 §3.6.2, "FRMOL"; RFC 2889
/// §5.3): after each repetition's search, one trial at the highest rate the search may
/// offer (the generator's ceiling, or the experiment's `max_pps`). Where the SUT was
/// *saturated* — it lost more than the PDR threshold of what the tester sent, and not at
/// the tester's own receiving link — the rate it forwarded is what it can do under
/// overload, measured even when its PDR search was bounded by the tester: an SUT that
/// drops at its own receiving link leaves the tester less to receive, so the tester can
/// offer more than the SUT forwards.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MaxLoad {
    /// One trial per repetition, in order.
    pub trials: Vec<Trial>,
    /// Packets/s the tester actually sent (`sent / duration_s`), over the trials.
    pub offered: Summary,
    /// Packets/s that came back (`received / duration_s`), over the trials.
    pub forwarded: Summary,
    /// How many of the trials found the SUT saturated ([`MaxLoad::sut_saturated`]).
    pub saturated: usize,
}

impl MaxLoad {
    /// Whether `t` found the SUT saturated: it lost more than `threshold` (a fraction of
    /// what was sent), and the tester's receiving link dropped at most a tenth of the
    /// lost frames (else the loss may be the tester's).
    pub fn sut_saturated(t: &Trial, threshold: f64) -> bool {
        let lost = t.sent.saturating_sub(t.received);
        t.sent > 0 && lost as f64 > threshold * t.sent as f64 && t.tester_rx_dropped.saturating_mul(10) <= lost
    }
}

impl BehaviorResult {
    /// Repetitions whose PDR the tester bounded, not the SUT: with any, `pdr_pps` is a
    /// lower bound of the SUT's.
    pub fn tester_bound_repetitions(&self) -> usize {
        self.repetitions.iter().filter(|x| x.pdr_tester_bound()).count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trial(sent: u64, received: u64, sut: u64, tester: u64) -> Trial {
        Trial {
            offered_pps: 2e6,
            sent,
            tx_dropped: 0,
            received,
            duration_s: 1.0,
            delivered_pps: received as f64,
            delivery_ratio: received as f64 / sent.max(1) as f64,
            sut_rx_dropped: sut,
            tester_rx_dropped: tester,
        }
    }

    #[test]
    fn a_saturated_sut_lost_more_than_the_threshold_and_not_at_the_tester() {
        // Offered 1.5 M, forwarded 1.0 M, the loss at the SUT's link: saturated.
        assert!(MaxLoad::sut_saturated(&trial(1_500_000, 1_000_000, 499_000, 1_000), 0.005));
        // Loss within the threshold: the SUT kept up; what it forwarded is a bound.
        assert!(!MaxLoad::sut_saturated(&trial(1_000_000, 996_000, 4_000, 0), 0.005));
        assert!(!MaxLoad::sut_saturated(&trial(1_000_000, 1_000_000, 0, 0), 0.005));
        // Just over it.
        assert!(MaxLoad::sut_saturated(&trial(1_000_000, 994_000, 6_000, 0), 0.005));
        // Most of the loss at the tester's link: not the SUT's to answer for.
        assert!(!MaxLoad::sut_saturated(&trial(1_500_000, 1_000_000, 100_000, 400_000), 0.005));
        // A tenth at the tester's is still the SUT's loss.
        assert!(MaxLoad::sut_saturated(&trial(1_500_000, 1_000_000, 450_000, 50_000), 0.005));
        // Nothing sent, or more received than sent: never saturated.
        assert!(!MaxLoad::sut_saturated(&trial(0, 0, 0, 0), 0.005));
        assert!(!MaxLoad::sut_saturated(&trial(100, 120, 0, 0), 0.005));
    }

    #[test]
    fn results_without_max_load_read_back() {
        let r = BehaviorResult {
            forwarder: "sr6".into(),
            behavior: Behavior::End,
            frame_bytes: 158,
            ndr_pps: 1.0,
            pdr_pps: 2.0,
            pdr_loss_threshold: 0.005,
            ndr: Summary { n: 1, mean: 1.0, std: 0.0, cv: 0.0, ci95: 0.0 },
            pdr: Summary { n: 1, mean: 2.0, std: 0.0, cv: 0.0, ci95: 0.0 },
            repetitions: Vec::new(),
            latency: None,
            max_load: None,
        };
        let mut v = serde_json::to_value(&r).unwrap();
        v.as_object_mut().unwrap().remove("max_load");
        let back: BehaviorResult = serde_json::from_value(v).unwrap();
        assert_eq!(back, r);
    }
}
