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
}

impl BehaviorResult {
    /// Repetitions whose PDR the tester bounded, not the SUT: with any, `pdr_pps` is a
    /// lower bound of the SUT's.
    pub fn tester_bound_repetitions(&self) -> usize {
        self.repetitions.iter().filter(|x| x.pdr_tester_bound()).count()
    }
}
