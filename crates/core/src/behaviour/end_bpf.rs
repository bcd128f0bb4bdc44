//! End.BPF (Linux's seg6local action since 4.18; Xhonneux et al., CoNEXT'18): the SID
//! runs an eBPF program of type `lwt_seg6local`, compiled by clang and loaded from an
//! ELF object (`endpoint obj FILE.o sec SECTION`), on each packet, and forwards where
//! the program says. The runtime is `sr6-bpf` (docs/bpf.md); this module binds it to
//! the pipeline.
//!
//! The kernel's `input_action_end_bpf` (net/ipv6/seg6_local.c) is the specification,
//! and [`sr6_bpf::seg6::end_bpf_ext`] implements it over a packet's bytes: the SRH is
//! validated and a segment consumed (Segments Left - 1, the destination updated, RFC
//! 8754 §4.3.1.1) before the program runs; `BPF_OK` routes on the new destination,
//! `BPF_REDIRECT` takes the route an action helper chose (End.X, End.T, End.DT6,
//! End.B6, End.B6.Encaps through `bpf_lwt_seg6_action`), anything else drops. The
//! packet side here:
//!
//! - **The packet**: the program runs on the packet where it lies, in its
//!   [`PacketBuf`] ([`crate::packet_bytes`]): nothing is copied in or out; a helper that
//!   grows the packet (End.B6.Encaps, TLV space) takes the buffer's headroom, and is
//!   refused with `-ENOMEM` past it, where the kernel would reallocate.
//! - **Maps** live with the loaded program ([`BpfProg`]), which the [`SidParams`] of
//!   the configuration hold (`Arc`): shared by every worker and every generation of the
//!   tables, one run at a time for a program with maps; the stack is the worker's or
//!   the thread's (`crate::bpf_prog` says who owns what).
//! - **The fast step** ([`fast`]): a packet whose SRH the fast path can take has its
//!   program run from the batch, past its Ethernet header, and is sent straight out when
//!   the program routes it by a table to a known neighbour without resizing it; anything
//!   else continues on the general path from where the program left it.
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
use std::sync::Arc;

use sr6_bpf::helpers::ProgType;
use sr6_bpf::seg6::{self, Seg6Packet};
use sr6_bpf::skb::NextHopLookup;
pub use sr6_bpf::LoadError;
use sr6_bpf::RunOpts;

use super::{endpoint, segment, Arrival, Behaviour, Next, Param, Takes};
pub use crate::bpf_prog::BpfProg;
use crate::bpf_prog::Run;
use crate::drop::DropReason;
use crate::packet::{DevId, PacketBuf};
use crate::packet_bytes::BufBytes;
use crate::spec::{SidAction, MAIN_TABLE};
use crate::tables::fast_route::{route_into, route_to};
use crate::tables::{
    is_link_local, BuildError, Device, FastKind, FastSid, Fib, NextHop, Out, Route, Sid, SidBuilder, SidState, Tables,
};
use sr6_bpf::Scratch;
use sr6_wire::fixed::{FrameFixed, Ipv6Fixed, SrhFixed, ETH_IPV6_LEN, ETH_LEN};

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

/// Loads section `section` of the object at `path` (`obj`: the name as written) as an
/// `lwt_seg6local` program, with its maps, as iproute2 does for `endpoint obj`.
pub fn load(obj: &str, path: &Path, section: &str) -> Result<BpfEndpoint, LoadError> {
    let prog = BpfProg::load(path, section, ProgType::LwtSeg6local)?;
    Ok(BpfEndpoint { obj: obj.to_string(), section: section.to_string(), prog })
}

fn build(b: &mut SidBuilder, a: &SidAction) -> Result<SidState, BuildError> {
    if a.params.bpf.is_none() {
        return Err(b.error("End.BPF requires `endpoint obj FILE sec SECTION`"));
    }
    // The device of the SID's route: End.B6.Encaps through the helper takes the outer
    // source from it, as the kernel's set_tun_src does from the skb's route.
    let fast = FastSid::new(FastKind::Bpf, 0);
    Ok(SidState { oif: b.route_dev().unwrap_or(DevId::MAX), fast, ..SidState::default() })
}

fn input(t: &Tables, p: &mut PacketBuf, sid: &Sid, a: &Arrival) -> Next {
    let Some(ep) = &sid.action.params.bpf else { return Next::drop(DropReason::BpfError) };
    // input_action_end_bpf: no SRH with Segments Left > 0, a drop (the SRH itself is
    // validated again, as the kernel's get_and_validate_srh does, by end_bpf_with).
    if !matches!(a, Arrival::Segments(_)) {
        return Next::drop(DropReason::BpfInvalidSrh);
    }
    // The IPv6 packet without link-layer padding (the kernel trims it on receive).
    let plen = p.data().get(4..6).map_or(0, |b| usize::from(u16::from_be_bytes([b[0], b[1]])));
    p.truncate(40 + plen);
    let mut route = None;
    match run(t, p, 0, ep, sid, None, None, &mut route) {
        Ok(()) => match route {
            Some(route) => route_next(t, &route),
            None => Next::Lookup6 { table: Tables::MAIN, forward: true },
        },
        Err(d) => Next::drop(d),
    }
}

/// Runs the program of `ep` (SID `sid`'s) on the IPv6 packet `l2` bytes into `p`'s
/// frame, in place ([`BufBytes`]): `Ok` with the route an action helper chose in
/// `route` (left `None`: the main table's route to the packet's destination, `BPF_OK`;
/// an out-parameter, written only when there is one, so that the usual case moves no
/// route around), or why it dropped the packet.
/// `srh`: where the caller found a valid SRH with Segments Left over 0 (the fast step);
/// `None`: found and validated here, as the kernel does. `scratch`: the caller's (the
/// worker's), else the thread's.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn run(
    t: &Tables,
    p: &mut PacketBuf,
    l2: usize,
    ep: &BpfEndpoint,
    sid: &Sid,
    srh: Option<usize>,
    mut scratch: Option<&mut Scratch>,
    route: &mut Option<seg6::Route>,
) -> Result<(), DropReason> {
    let (prog, opts) = (ep.prog.program(), RunOpts::default());
    // input_action_end_bpf: the SRH (found and validated, unless the caller did) and
    // its segment consumed before the program runs.
    let consumed = {
        let bytes = p.data_mut().get_mut(l2..).unwrap_or_default();
        let off = match srh {
            Some(off) => off,
            None => seg6::find_valid_srh(bytes).map_err(|d| drop_reason(&d))?,
        };
        seg6::consume(bytes, off).map_err(|d| drop_reason(&d))?
    };
    // Its compiled code alone first, on the bytes: the whole run for a program that
    // calls no helper (`BpfProg::run_lean`).
    match ep.prog.run_lean(scratch.as_deref_mut(), p.data().get(l2..).unwrap_or_default()) {
        Some(Ok(r0)) => return seg6::lean_verdict(r0).map_err(|d| drop_reason(&d)),
        Some(Err(f)) => return Err(drop_reason(&seg6::Drop::Fault(f))),
        None => {}
    }
    let ifindex = u32::from(p.in_dev) + 1;
    let now_ns = p.ts_ns;
    let mut pkt = Seg6Packet::new(BufBytes::new(p, l2));
    pkt.meta.ingress_ifindex = ifindex;
    pkt.meta.ifindex = ifindex;
    pkt.now_ns = now_ns;
    pkt.cpu = CPU.with(Cell::get);
    pkt.encap_src = encap_src(t, sid.state.oif);
    let fib = Routes(t);
    let step = |r: &mut Run<'_>| {
        pkt.prandom = r.prandom;
        let res = seg6::end_bpf_consumed(r.scratch, prog, r.maps, &mut pkt, opts, Some(&fib), consumed);
        r.prandom = pkt.prandom;
        res
    };
    let res = match scratch {
        Some(s) => ep.prog.run_in(s, step),
        None => ep.prog.run(step),
    };
    match res {
        Ok(()) => {
            if let Some(r) = pkt.route.take() {
                *route = Some(r);
            }
            Ok(())
        }
        Err(d) => Err(drop_reason(&d)),
    }
}

/// Where the route the program chose takes the packet, on the general path.
fn route_next(t: &Tables, route: &seg6::Route) -> Next {
    match route.nexthop {
        Some(nh) => end_x(t, nh),
        None => match table(t, route.table) {
            Some(table) => Next::Lookup6 { table, forward: true },
            None => Next::drop(DropReason::NoRoute),
        },
    }
}

/// The fast step of End.BPF (kind Bpf) for SID `sid` on a frame received on `dev`: a
/// frame [`endpoint::fast_srh_frame`] takes, with Segments Left over 0 and in range, has
/// its program run in place, past the Ethernet header. `None` (frame untouched) for any
/// other frame, which the general path takes. Once the program has run, the packet is
/// this step's: it is sent out directly ([`FastBpf::Tx`]) when the program returned
/// `BPF_OK` (or routed it by a table through the action helper), left its length
/// unchanged and the FIB sends the destination to a known neighbour ([`route_to`], the
/// hop limit decremented as `ip6_forward` does); otherwise what follows is the general
/// path's [`Next`] ([`FastBpf::After`]: a drop, an End.X, a route to look up, a packet a
/// helper resized), carried out and counted on the SID as the general path would.
#[inline(always)]
pub(crate) fn fast(t: &Tables, dev: &Device, p: &mut PacketBuf, sid: &Sid, scratch: &mut Scratch) -> Option<FastBpf> {
    let ep = sid.action.params.bpf.as_ref()?;
    let f = p.data_mut();
    let len = f.len();
    let (_, srh, _) = endpoint::fast_srh_frame(dev, f)?;
    srh.next_index()?;
    // The SRH right after the IPv6 header, valid (no TLVs, Segments Left in range).
    let mut route = None;
    if let Err(d) = run(t, p, ETH_LEN, ep, sid, Some(ETH_IPV6_LEN - ETH_LEN), Some(scratch), &mut route) {
        return Some(FastBpf::After(Next::drop(d)));
    }
    if p.len() == len {
        // `BPF_OK`: the main table's route to the destination the frame has now; a
        // table an action helper named: its route to the destination it saw.
        let (fib, dst) = match &route {
            None => (Some(Tables::MAIN), fast_dst(p)),
            Some(r) if r.nexthop.is_none() => (table(t, r.table), u128::from_be_bytes(r.daddr)),
            Some(_) => (None, 0),
        };
        if let Some(fib) = fib.filter(|i| *i != Tables::MAIN_BY_NAME) {
            // (The frame still has the Ethernet + IPv6 headers it arrived with.)
            let found = route_to(t, fib, dst);
            if let (Some((out, eth)), Some(h)) = (found, p.data_mut().first_chunk_mut::<ETH_IPV6_LEN>()) {
                h.set_hop_limit(h.hop_limit() - 1);
                h.set_addrs(eth);
                return Some(FastBpf::Tx(out));
            }
        }
    }
    Some(FastBpf::After(match route {
        Some(r) => route_next(t, &r),
        None => Next::Lookup6 { table: Tables::MAIN, forward: true },
    }))
}

/// End.BPF's lean step, for a frame `f` (Ethernet + IPv6, checked as transit by
/// `pipeline::fast::try6`: length, hop limit over 1, source) whose destination is
/// End.BPF SID `sid`'s, with an SRH right after the IPv6 header,
/// without TLVs, Segments Left over 0 and in range, on a device that requires no HMAC.
/// For a program that has never called out of its compiled code (`BpfProg::run_lean`):
/// the next segment's route is found first (a gateway or a known neighbour of the main
/// FIB, as End's fast step), the segment consumed, the program run on the packet in
/// place, and on `BPF_OK` the frame sent. Anything else — no route, a program that calls
/// out, any other return code, a fault — puts the frame back as it came (Segments Left
/// and destination restored: a lean run changes nothing else, and runs the same again),
/// `None`, for the step out of the loop ([`fast`]) to do it all.
#[inline(always)]
pub(crate) fn fast_lean(t: &Tables, main: &Fib, f: &mut [u8], sid: &Sid, scratch: &mut Scratch) -> Option<Out> {
    let prog = &sid.action.params.bpf.as_ref()?.prog;
    if !prog.may_run_lean() {
        return None;
    }
    let (h, rest) = f.split_first_chunk_mut::<ETH_IPV6_LEN>()?;
    // (The transit checks do not include this one: a SID reached by a longer prefix
    // comes here whatever follows the IPv6 header.)
    if h.next_header() != sr6_wire::IPPROTO_ROUTING {
        return None;
    }
    let (srh, tail) = rest.split_first_chunk_mut::<8>()?;
    let seg = segment::fast_next(srh, tail)?;
    let mut eth = [0; 12];
    let out = route_into(t, main, u128::from_be_bytes(seg), &mut eth)?;
    // input_action_end_bpf: the segment consumed before the program runs.
    let dst = h.dst_bytes();
    srh.decrement_segments_left();
    h.set_dst_bytes(&seg);
    let verdict = prog.run_lean(Some(scratch), f.get(ETH_LEN..).unwrap_or_default());
    let ok = matches!(verdict, Some(Ok(r0)) if r0 as u32 == seg6::ret::BPF_OK);
    // (Always there: split above.)
    let (h, srh) = f.first_chunk_mut::<{ ETH_IPV6_LEN + 8 }>()?.split_first_chunk_mut::<ETH_IPV6_LEN>()?;
    if ok {
        // ip6_forward after seg6_lookup_nexthop.
        h.decrement_hop_limit();
        h.set_addr_bytes(&eth);
        return Some(out);
    }
    let srh: &mut [u8; 8] = srh.try_into().ok()?;
    srh.set_segments_left(srh.segments_left() + 1);
    h.set_dst_bytes(&dst);
    None
}

/// The destination of the Ethernet + IPv6 frame in `p` (0 if it is too short, which a
/// frame the fast step took is not).
#[inline(always)]
fn fast_dst(p: &PacketBuf) -> u128 {
    p.data().first_chunk::<ETH_IPV6_LEN>().map_or(0, |h| h.dst())
}

/// What End.BPF's fast step did with a frame it took.
pub(crate) enum FastBpf {
    /// Transmit the frame out of this device.
    Tx(Out),
    /// The program ran; the general path carries on with this (the frame still has its
    /// Ethernet header).
    After(Next),
}

/// The counter a drop of End.BPF goes to.
fn drop_reason(d: &seg6::Drop) -> DropReason {
    match d {
        seg6::Drop::NoSrh | seg6::Drop::InvalidSrh => DropReason::BpfInvalidSrh,
        seg6::Drop::ProgramDrop | seg6::Drop::IllegalReturn(_) => DropReason::BpfDrop,
        seg6::Drop::Fault(_) | seg6::Drop::RedirectWithoutRoute => DropReason::BpfError,
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
#[inline(always)]
pub(crate) fn encap_src(t: &Tables, dev: DevId) -> [u8; 16] {
    match t.bpf_encap_src.get(usize::from(dev)).or(t.bpf_encap_src.last()) {
        Some(a) => *a,
        None => encap_src_of(t, dev),
    }
}

/// [`encap_src`] worked out (`Tables::bpf_encap_src` holds it for each device).
pub(crate) fn encap_src_of(t: &Tables, dev: DevId) -> [u8; 16] {
    t.tunsrc
        .or_else(|| t.devices.get(usize::from(dev)).and_then(|d| d.addrs6.iter().find(|a| !is_link_local(a)).copied()))
        .or(t.first_addr6)
        .map_or([0; 16], |a| a.octets())
}

#[cfg(test)]
mod tests {
    use super::*;

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
