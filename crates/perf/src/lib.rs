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
//! [`traffic`] (the tester's frames, generator, receiver and trial).

pub mod model;
pub mod traffic;
