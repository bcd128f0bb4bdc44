//! End.BPF (Linux's seg6local action since 4.18; Xhonneux et al., CoNEXT'18): the SID
//! runs an eBPF program of type `lwt_seg6local`, compiled by clang and loaded from an
//! ELF object (`endpoint obj FILE.o sec SECTION`), on each packet, and forwards where
//! the program says. The runtime is `sr6-bpf` (docs/bpf.md); this module binds it to
//! the pipeline.
//!
//! The kernel's `input_action_end_bpf` (net/ipv6/seg6_local.c) is the specification,
//! and [`sr6_bpf::seg6::end_bpf_with`] implements it over a plain packet: the SRH is
//! validated and a segment consumed (Segments Left - 1, the destination updated, RFC
//! 8754 §4.3.1.1) before the program runs; `BPF_OK` routes on the new destination,
//! `BPF_REDIRECT` takes the route an action helper chose (End.X, End.T, End.DT6,
//! End.B6, End.B6.Encaps through `bpf_lwt_seg6_action`), anything else drops. The
//! packet side here:
//!
//! - **The packet**: the IPv6 packet is copied into the program's byte vector, and the
//!   result copied back into the [`PacketBuf`] (grown or shrunk at the front, so an
//!   End.B6.Encaps result needs the headroom any encapsulation needs). The vector is
//!   kept with the program and reused, so the steady state allocates nothing but what
//!   a helper that resizes the packet does.
//! - **Maps and scratch** live with the loaded program, which the [`SidParams`] of the
//!   configuration hold (`Arc`), so every worker and every generation of the tables
//!   shares them: a table rebuild keeps a map's contents. One `Mutex` per program guards
//!   its maps, its stack and its packet vector for the length of a run: simple and
//!   sound with several workers (a program runs on one worker at a time; workers
//!   sending packets to the same End.BPF SID take turns). Per-CPU maps are therefore
//!   one copy.
//! - **The clock** of `bpf_ktime_get_ns` is the packet's receive time ([`PacketBuf`]'s
//!   `ts_ns`: the monotonic clock under `sr6 run`, the capture's timestamps under `sr6
//!   pcap`, so offline runs are deterministic).
//! - **The CPU** of `bpf_get_smp_processor_id` and of the events `bpf_perf_event_output`
//!   emits is the worker's index, which `sr6 run`'s workers set once ([`set_cpu`]); 0
//!   elsewhere (`sr6 pcap`). The events stay in their map's ring (`sr6_bpf::events`)
//!   until a reader drains it.
//! - **The route**: [`Next::Lookup6`] with the forwarding step (hop limit checked and
//!   decremented after the program, as the kernel's `ip6_forward` does after
//!   `seg6_lookup_nexthop`), in the main table (`BPF_OK`, End.B6, End.B6.Encaps, table
//!   0), the table End.T/End.DT6 named (an unknown table: `no_route`, the kernel's
//!   blackhole), or for End.X the next hop the program gave, reached as the kernel's
//!   `FLOWI_FLAG_KNOWN_NH` lookup does: the main table's route to it, its gateway if it
//!   has one, else the address itself on the route's device (an address the tables know
//!   no adjacency for is dropped `no_neighbour`).
//!
//! [`SidParams`]: crate::spec::SidParams

use std::cell::Cell;
use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};

use sr6_bpf::helpers::ProgType;
use sr6_bpf::maps::Map;
use sr6_bpf::seg6::{self, Seg6Packet, Verdict};
use sr6_bpf::skb::NextHopLookup;
use sr6_bpf::skb::SkbMeta;
pub use sr6_bpf::LoadError;
use sr6_bpf::{Program, RunOpts, Scratch};

use super::{Arrival, Behaviour, Next, Param, Takes};
use crate::drop::DropReason;
use crate::packet::{DevId, PacketBuf};
use crate::spec::{SidAction, MAIN_TABLE};
use crate::tables::{is_link_local, BuildError, NextHop, Route, Sid, SidBuilder, SidState, Tables};

pub static END_BPF: Behaviour = Behaviour {
    keyword: "End.BPF",
    required: &[Param::Endpoint],
    optional: &[],
    flavors: &[],
    rfc: "Linux seg6local End.BPF (CoNEXT'18); RFC 8986 §4.1 for the segment",
    summary: "consume a segment, run an eBPF program (lwt_seg6local) on the packet, forward where it says",
    in_kernel: true,
    takes: Takes::Segment,
    build,
    input,
};

thread_local! {
    /// The worker this thread is (see [`set_cpu`]).
    static CPU: Cell<u32> = const { Cell::new(0) };
}

/// Makes `cpu` the CPU End.BPF programs see on this thread (`bpf_get_smp_processor_id`,
/// `BPF_F_CURRENT_CPU`): a worker calls it once with its index.
pub fn set_cpu(cpu: u32) {
    CPU.with(|c| c.set(cpu));
}

/// The section iproute2 loads when the line names none (`ELF_SECTION_PROG`).
pub const DEFAULT_SECTION: &str = "prog";

/// `endpoint obj FILE sec SECTION`: the object as written and the program loaded from
/// it. Two are equal when they name the same file and section (a configuration read
/// again loads its objects again).
#[derive(Clone)]
pub struct BpfEndpoint {
    /// `FILE` as written on the line.
    pub obj: String,
    pub section: String,
    pub prog: Arc<BpfProg>,
}

impl PartialEq for BpfEndpoint {
    fn eq(&self, other: &Self) -> bool {
        self.obj == other.obj && self.section == other.section
    }
}

impl Eq for BpfEndpoint {}

impl std::fmt::Debug for BpfEndpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "obj {} sec {}", self.obj, self.section)
    }
}

impl std::fmt::Display for BpfEndpoint {
    /// As after `endpoint`: `obj FILE sec SECTION`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "obj {} sec {}", self.obj, self.section)
    }
}

/// A loaded program and what its runs share (see the module docs).
pub struct BpfProg {
    program: Program,
    run: Mutex<Runner>,
}

struct Runner {
    maps: Vec<Map>,
    scratch: Scratch,
    pkt: Seg6Packet,
}

/// Loads section `section` of the object at `path` (`obj`: the name as written) as an
/// `lwt_seg6local` program, with its maps, as iproute2 does for `endpoint obj`.
pub fn load(obj: &str, path: &Path, section: &str) -> Result<BpfEndpoint, LoadError> {
    let o = sr6_bpf::load_object(path, section, ProgType::LwtSeg6local)?;
    let runner = Runner { maps: o.maps, scratch: Scratch::default(), pkt: Seg6Packet::new(Vec::new()) };
    let prog = Arc::new(BpfProg { program: o.program, run: Mutex::new(runner) });
    Ok(BpfEndpoint { obj: obj.to_string(), section: section.to_string(), prog })
}

impl BpfProg {
    /// A copy of the maps as they are now (names, definitions, contents).
    pub fn maps(&self) -> Vec<Map> {
        self.run.lock().unwrap_or_else(PoisonError::into_inner).maps.clone()
    }

    /// `f` on the maps themselves, between two runs of the program (`sr6 ctl bpf map
    /// update`: the operator's writes take the program's turn, as a worker's run does).
    pub fn with_maps<R>(&self, f: impl FnOnce(&mut [Map]) -> R) -> R {
        f(&mut self.run.lock().unwrap_or_else(PoisonError::into_inner).maps)
    }

    /// The program as loaded: its section's name and its eBPF instructions.
    pub fn program(&self) -> &Program {
        &self.program
    }
}

fn build(b: &mut SidBuilder, a: &SidAction) -> Result<SidState, BuildError> {
    if a.params.bpf.is_none() {
        return Err(b.error("End.BPF requires `endpoint obj FILE sec SECTION`"));
    }
    // The device of the SID's route: End.B6.Encaps through the helper takes the outer
    // source from it, as the kernel's set_tun_src does from the skb's route.
    Ok(SidState { oif: b.route_dev().unwrap_or(DevId::MAX), ..SidState::default() })
}

fn input(t: &Tables, p: &mut PacketBuf, sid: &Sid, a: &Arrival) -> Next {
    let Some(ep) = &sid.action.params.bpf else { return Next::drop(DropReason::BpfError) };
    // input_action_end_bpf: no SRH with Segments Left > 0, a drop (the SRH itself is
    // validated again, as the kernel's get_and_validate_srh does, by end_bpf_with).
    if !matches!(a, Arrival::Segments(_)) {
        return Next::drop(DropReason::BpfInvalidSrh);
    }
    let mut guard = ep.prog.run.lock().unwrap_or_else(PoisonError::into_inner);
    let r = &mut *guard;
    let data = p.data();
    // The IPv6 packet without link-layer padding (the kernel trims it on receive).
    let plen = data.get(4..6).map_or(0, |b| usize::from(u16::from_be_bytes([b[0], b[1]])));
    let ip = data.get(..40 + plen).unwrap_or(data);
    r.pkt.buf.clear();
    r.pkt.buf.extend_from_slice(ip);
    let ifindex = u32::from(p.in_dev) + 1;
    r.pkt.meta = SkbMeta { protocol: SkbMeta::PROTO_IPV6, ingress_ifindex: ifindex, ifindex, ..SkbMeta::default() };
    r.pkt.now_ns = p.ts_ns;
    r.pkt.cpu = CPU.with(Cell::get);
    r.pkt.encap_src = encap_src(t, sid.state.oif);
    r.pkt.traces.clear();
    let fib = Routes(t);
    let verdict =
        seg6::end_bpf_ext(&mut r.scratch, &ep.prog.program, &mut r.maps, &mut r.pkt, RunOpts::default(), Some(&fib));
    let route = match verdict {
        Verdict::Forward(route) => route,
        Verdict::Drop(d) => return Next::drop(drop_reason(&d)),
    };
    if !write_back(p, &r.pkt.buf) {
        return Next::drop(DropReason::NoHeadroom);
    }
    drop(guard);
    match route.nexthop {
        Some(nh) => end_x(t, nh),
        None => match table(t, route.table) {
            Some(table) => Next::Lookup6 { table, forward: true },
            None => Next::drop(DropReason::NoRoute),
        },
    }
}

/// The counter a drop of End.BPF goes to.
fn drop_reason(d: &seg6::Drop) -> DropReason {
    match d {
        seg6::Drop::NoSrh | seg6::Drop::InvalidSrh => DropReason::BpfInvalidSrh,
        seg6::Drop::ProgramDrop | seg6::Drop::IllegalReturn(_) => DropReason::BpfDrop,
        seg6::Drop::Fault(_) | seg6::Drop::RedirectWithoutRoute => DropReason::BpfError,
    }
}

/// The program's packet into the buffer: the frame grown or shrunk at the front to its
/// length, then overwritten. `false` (nothing written) if the headroom is short.
pub(crate) fn write_back(p: &mut PacketBuf, bytes: &[u8]) -> bool {
    let (n, m) = (bytes.len(), p.len());
    let resized = if n >= m { p.push_front(n - m) } else { p.pull_front(m - n) };
    match p.data_mut() {
        d if resized && d.len() == n => {
            d.copy_from_slice(bytes);
            true
        }
        _ => false,
    }
}

/// The dense FIB index of kernel table `id` as the action helper names it: 0 is the
/// ordinary lookup (rules included), the main table by id is looked up past the rules
/// (`seg6_lookup_any_nexthop` with a table id), a table the tables do not have: `None`.
fn table(t: &Tables, id: u32) -> Option<u32> {
    if id == 0 {
        return Some(Tables::MAIN);
    }
    let i = t.table_ids.iter().position(|x| *x == id)? as u32;
    if id == MAIN_TABLE && i == Tables::MAIN && t.rules_fib6 == Tables::MAIN {
        return Some(Tables::MAIN_BY_NAME);
    }
    Some(i)
}

/// The tables as sr6's extension helper `sr6_ecmp_nexthops` sees them.
struct Routes<'a>(&'a Tables);

impl NextHopLookup for Routes<'_> {
    fn ecmp_nexthops(&self, dst: &[u8; 16], table: u32, out: &mut [[u8; 16]]) -> i64 {
        ecmp_nexthops(self.0, dst, table, out)
    }
}

/// `sr6_ecmp_nexthops` (docs/bpf.md, "sr6's extension helper"): the gateways of the route
/// `table` (the kernel's id; 0: the main table, without the rules) has for `dst`, as many
/// as `out` holds: one for a route `via` a gateway, each member's for a multipath route
/// (in its order; on-link members have none), none for any other route (local, a SID, an
/// SR policy, on-link, a blackhole, ...). Returns how many the route has, `-ENOENT`
/// without a route, `-EINVAL` for a table the configuration does not have.
pub fn ecmp_nexthops(t: &Tables, dst: &[u8; 16], table: u32, out: &mut [[u8; 16]]) -> i64 {
    let fib = match table {
        0 => t.fibs.get(Tables::MAIN as usize),
        id => t.table_ids.iter().position(|x| *x == id).and_then(|i| t.fibs.get(i)),
    };
    let Some(fib) = fib else { return -sr6_bpf::skb::errno::EINVAL };
    let hops: &[NextHop] = match fib.lookup6(dst) {
        None => return -sr6_bpf::skb::errno::ENOENT,
        Some(Route::Forward(nh)) => &[nh][..],
        Some(Route::Multipath(g)) => t.groups.get(g as usize).map_or(&[][..], |g| &g.hops),
        Some(_) => &[],
    };
    let gateways = hops.iter().filter_map(|h| match h {
        NextHop::Adj(i) => match t.adjacencies.get(*i as usize).map(|a| a.nh) {
            Some(std::net::IpAddr::V6(a)) => Some(a.octets()),
            _ => None,
        },
        NextHop::OnLink(_) => None,
    });
    let mut n = 0;
    for g in gateways {
        if let Some(o) = out.get_mut(n) {
            *o = g;
        }
        n += 1;
    }
    n as i64
}

/// End.X through the helper: the main table's route to `nh`; through its gateway, or
/// to `nh` itself on the route's device (the kernel's FLOWI_FLAG_KNOWN_NH).
fn end_x(t: &Tables, nh: [u8; 16]) -> Next {
    let route = t.fibs.first().and_then(|f| f.lookup6(&nh));
    let nh = match route {
        Some(Route::Forward(NextHop::Adj(i))) => NextHop::Adj(i),
        Some(Route::Forward(NextHop::OnLink(dev))) => {
            let addr = std::net::IpAddr::V6(nh.into());
            match t.adjacencies.iter().position(|a| a.dev == dev && a.nh == addr) {
                Some(i) => NextHop::Adj(i as u32),
                None => return Next::drop(DropReason::NoNeighbour),
            }
        }
        _ => return Next::drop(DropReason::NoRoute),
    };
    Next::Xconnect6 { nh, forward: true }
}

/// The outer source End.B6.Encaps pushes: `ip sr tunsrc`, else the first global address
/// of the SID route's device, else the first address configured (as
/// `tables::build::tunnel_source` for the policies).
pub(crate) fn encap_src(t: &Tables, dev: DevId) -> [u8; 16] {
    t.tunsrc
        .or_else(|| t.devices.get(usize::from(dev)).and_then(|d| d.addrs6.iter().find(|a| !is_link_local(a)).copied()))
        .or(t.first_addr6)
        .map_or([0; 16], |a| a.octets())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn buf(bytes: &[u8]) -> PacketBuf {
        let mut p = PacketBuf::new();
        assert!(p.load(bytes, 0));
        p
    }

    #[test]
    fn write_back_grows_shrinks_and_refuses_past_the_headroom() {
        let mut p = buf(&[1; 100]);
        assert!(write_back(&mut p, &[2; 140]));
        assert_eq!(p.data(), &[2; 140][..]);
        assert!(write_back(&mut p, &[3; 60]));
        assert_eq!(p.data(), &[3; 60][..]);
        let room = p.headroom() + p.len();
        assert!(!write_back(&mut p, &vec![4; room + 1]), "more than the headroom can take");
        assert_eq!(p.data(), &[3; 60][..], "nothing written");
    }

    #[test]
    fn tables_by_kernel_id() {
        let spec = one_device_spec();
        let t = Tables::build(&spec).unwrap().0;
        assert_eq!(table(&t, 0), Some(Tables::MAIN));
        assert_eq!(table(&t, MAIN_TABLE), Some(Tables::MAIN), "no rules: main by id is the main table");
        assert_eq!(table(&t, 4242), None, "a table the configuration does not have");
    }

    /// A spec with one device and no routes.
    fn one_device_spec() -> crate::spec::RouterSpec {
        crate::spec::RouterSpec { devices: vec!["eth0".into()], ..Default::default() }
    }
}
