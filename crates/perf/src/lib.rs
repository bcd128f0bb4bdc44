//! sr6-perf: the evaluation framework behind `sr6 perf` — SRPerf (Abdelsalam et al.,
//! 2018) on one Linux machine.
//!
//! An RFC 2544 testbed: a tester and a system under test (SUT) in network namespaces
//! joined by two veth links (tester -> SUT -> tester). The orchestrator configures a
//! forwarder on the SUT through its driver, offers traffic of one SRv6 behaviour at a
//! controlled rate, counts what comes back, and searches the No-Drop Rate and the
//! Partial-Drop Rate; repetitions give mean, standard deviation, CV and CI95; the
//! report writes JSON, CSV, Markdown and plots.
//!
//! Modules: [`model`] (what an experiment produces; shared by all the others),
//! [`plan`] (the testbed's addresses and each behaviour's SUT configuration),
//! [`testbed`] (namespaces, links, CPU placement), [`driver`] (one per forwarder),
//! [`experiment`] (the YAML experiment file and its defaults),
//! [`search`] (the NDR/PDR search over trials), [`stats`] (mean, CV, CI95, percentiles),
//! [`run`] (the orchestrator), [`report`] (results.json, CSV, report.md and the plots),
//! [`traffic`] (the tester's frames, generator, receiver and trial), [`bpf`] (the tester's
//! eBPF programs: the generator and counter that run in the kernel), [`tester`] (them on
//! a testbed), [`bpf_objects`] (the End.BPF rows' programs, compiled for the SUT).
//!
//! No `unsafe` code: system calls go through `sr6_io`'s safe APIs (`sr6_io::bpf`,
//! `sr6_io::interrupt`, `sr6_io::live`) and `rustix`.

#![forbid(unsafe_code)]

pub mod bpf;
pub mod bpf_objects;
pub mod churn;
pub mod driver;
pub mod experiment;
pub mod model;
pub mod plan;
pub mod report;
pub mod run;
pub mod search;
pub mod stats;
pub mod testbed;
pub mod tester;
pub mod traffic;
