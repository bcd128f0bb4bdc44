//! Routes with LWT BPF programs: `encap bpf [in PROG] [out PROG] [xmit PROG] [headroom
//! N]` (iproute2's syntax; Linux's net/core/lwt_bpf.c), each `PROG` an `obj FILE [sec
//! SECTION]` of type `lwt_in`, `lwt_out` or `lwt_xmit`. The runtime is
//! [`sr6_bpf::lwt`]; this module holds the loaded programs and carries out what they
//! decide, in the kernel's order:
//!
//! 1. **`in`** (`bpf_input`, the route's `dst->input`): when the route is found for a
//!    packet, before the forwarding step. `BPF_OK`: on along the route (`orig_input`,
//!    `ip6_forward`/`ip_forward`); after `bpf_lwt_push_encap` pushed an SRH: forwarded on
//!    the route of the new destination in the main table (`seg6_lookup_nexthop`; a
//!    local one is dropped `blackhole`, none answered as no route), that route's own `in`
//!    program not run; `BPF_LWT_REROUTE`: routed again as a received packet
//!    (`bpf_lwt_input_reroute`, [`Next::Lookup6`]/[`Next::Lookup4`], so its `in` runs).
//! 2. **The forwarding step** (`ip6_forward`: forwarding enabled, hop limit checked and
//!    decremented, the MTU — less `headroom` when the route has `out` or `xmit`, as the
//!    kernel's `lwtunnel_headroom` — the firewall's FORWARD chain and the IDS; IPv4's TTL
//!    and DF). Not on the output path (a packet routed with `forward` false).
//! 3. **`out`** (`bpf_output`, `dst->output`): read-only; `BPF_DROP` drops, anything
//!    else the kernel passes goes on.
//! 4. **`xmit`** (`bpf_xmit`, in `ip6_finish_output2`): `BPF_OK` goes to the route's next
//!    hop (the neighbour the destination before the program chose); `BPF_LWT_REROUTE`:
//!    the new header routed as the router's own packet (`bpf_lwt_xmit_reroute`: no
//!    forwarding step; through another LWT route, its `out` and `xmit` run, at most
//!    [`MAX_REROUTES`] deep).
//!
//! Drops: `lwt_bpf_drop` (`BPF_DROP`, an illegal return code), `lwt_bpf_error` (a
//! fault, `BPF_OK` from `xmit` with another protocol, `BPF_REDIRECT` from `xmit`:
//! sr6 has no `bpf_redirect`, so there is no target). Each hook's program is a
//! [`BpfProg`] (maps and scratch with it, one run at a time), run on the packet in place
//! ([`crate::packet_bytes`]), as End.BPF's; the clock is the packet's receive time.
//!
//! Routes without programs pay one arm of the FIB dispatch ([`crate::tables::Route::Lwt`]);
//! the fast path declines these routes.

use std::path::Path;
use std::sync::Arc;

pub use sr6_bpf::helpers::ProgType;
pub use sr6_bpf::lwt::MAX_HEADROOM;
use sr6_bpf::lwt::{self, LwtPacket, Outcome};
use sr6_bpf::skb::SkbMeta;
pub use sr6_bpf::LoadError;
use sr6_bpf::{Program, RunOpts};

use super::{forward, icmp, mtu, Next, Worker};
use crate::behaviour::end_bpf;
use crate::bpf_prog::BpfProg;
use crate::drop::DropReason;
use crate::firewall::Hook;
use crate::packet::{DevId, PacketBuf};
use crate::packet_bytes::BufBytes;
use crate::tables::rules::{self, Rules};
use crate::tables::{NextHop, Route, Tables};
use sr6_wire::{Ipv4Packet, Ipv6Packet, ETHERTYPE_IPV4, ETHERTYPE_IPV6};

/// The section iproute2 loads when a hook names none (as End.BPF's).
pub const DEFAULT_SECTION: &str = end_bpf::DEFAULT_SECTION;
/// How many `xmit` reroutes through further LWT routes a packet may take.
pub const MAX_REROUTES: u8 = 4;

/// One hook's program: `obj FILE sec SECTION`, loaded. Two are equal when they name the
/// same file and section.
#[derive(Clone)]
pub struct LwtProg {
    /// `FILE` as written on the line.
    pub obj: String,
    pub section: String,
    pub prog: Arc<BpfProg>,
}

impl PartialEq for LwtProg {
    fn eq(&self, other: &Self) -> bool {
        self.obj == other.obj && self.section == other.section
    }
}

impl Eq for LwtProg {}

impl std::fmt::Debug for LwtProg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "obj {} sec {}", self.obj, self.section)
    }
}

impl std::fmt::Display for LwtProg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "obj {} sec {}", self.obj, self.section)
    }
}

impl LwtProg {
    /// The program as loaded.
    pub fn program(&self) -> &Program {
        self.prog.program()
    }
}

/// Loads section `section` of the object at `path` (`obj`: the name as written) as a
/// program of the hook's type (`LwtIn`, `LwtOut`, `LwtXmit`), with its maps.
pub fn load(obj: &str, path: &Path, section: &str, hook: ProgType) -> Result<LwtProg, LoadError> {
    let prog = BpfProg::load(path, section, hook)?;
    Ok(LwtProg { obj: obj.to_string(), section: section.to_string(), prog })
}

/// The words after `encap bpf`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LwtBpf {
    pub input: Option<LwtProg>,
    pub output: Option<LwtProg>,
    pub xmit: Option<LwtProg>,
    /// `headroom N` (at most [`lwt::MAX_HEADROOM`]): taken off the route's MTU when it
    /// has `out` or `xmit`.
    pub headroom: u32,
}

impl std::fmt::Display for LwtBpf {
    /// As iproute2 takes them: `in obj F sec S out ... xmit ... headroom N`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut sep = "";
        for (kw, p) in [("in", &self.input), ("out", &self.output), ("xmit", &self.xmit)] {
            if let Some(p) = p {
                write!(f, "{sep}{kw} {p}")?;
                sep = " ";
            }
        }
        if self.headroom != 0 {
            write!(f, "{sep}headroom {}", self.headroom)?;
        }
        Ok(())
    }
}

/// An LWT route in the tables ([`Route::Lwt`]): its programs and the next hop of its
/// `via`/`dev`.
#[derive(Clone, Debug)]
pub struct LwtRoute {
    /// The route's prefix and kernel table id (what `sr6 ctl bpf list` names it by).
    pub prefix: crate::spec::Prefix,
    pub table: u32,
    pub bpf: LwtBpf,
    pub nh: NextHop,
    /// The route's device (the outer source of an SRH the `in` program pushes).
    pub dev: DevId,
}

/// What is known of a packet on its way through an LWT route.
#[derive(Clone, Copy)]
struct Way {
    /// IPv6 (else IPv4).
    v6: bool,
    /// Apply the forwarding step.
    forward: bool,
    /// Run the `in` program.
    input: bool,
    /// `xmit` reroutes so far.
    depth: u8,
}

/// A packet whose IPv6 route is LWT route `i`.
pub(crate) fn route6(t: &Tables, w: &mut Worker, p: &mut PacketBuf, i: u32, forward: bool) -> Next {
    path(t, w, p, i, Way { v6: true, forward, input: true, depth: 0 })
}

/// A packet whose IPv4 route is LWT route `i`.
pub(crate) fn route4(t: &Tables, w: &mut Worker, p: &mut PacketBuf, i: u32, forward: bool) -> Next {
    path(t, w, p, i, Way { v6: false, forward, input: true, depth: 0 })
}

fn path(t: &Tables, w: &mut Worker, p: &mut PacketBuf, i: u32, way: Way) -> Next {
    let Some(r) = t.lwts.get(i as usize) else { return Next::drop(DropReason::NoRoute) };
    if let Some(prog) = r.bpf.input.as_ref().filter(|_| way.input) {
        match run(t, p, prog, r) {
            Outcome::Continue => {}
            Outcome::Lookup => return seg6_lookup(t, w, p),
            Outcome::Reroute => return reroute_input(p),
            Outcome::Drop(d) => return Next::drop(reason(&d)),
        }
    }
    let nh = r.nh;
    let cut = if r.bpf.output.is_some() || r.bpf.xmit.is_some() { r.bpf.headroom as usize } else { 0 };
    let step = if way.v6 {
        forward_step6(t, w, p, nh, way.forward, cut)
    } else {
        forward_step4(t, w, p, nh, way.forward, cut)
    };
    if let Some(next) = step {
        return next;
    }
    if let Some(prog) = &r.bpf.output {
        if let Outcome::Drop(d) = run(t, p, prog, r) {
            return Next::drop(reason(&d));
        }
    }
    // The neighbour is chosen by the destination before `xmit` runs (ip6_finish_output2).
    let Some(dst) = dst_key(p, way.v6) else { return Next::drop(DropReason::Malformed) };
    if let Some(prog) = &r.bpf.xmit {
        match run(t, p, prog, r) {
            Outcome::Continue | Outcome::Lookup => {}
            Outcome::Reroute => return reroute_output(t, w, p, way.depth),
            Outcome::Drop(d) => return Next::drop(reason(&d)),
        }
    }
    let ethertype = if way.v6 { ETHERTYPE_IPV6 } else { ETHERTYPE_IPV4 };
    Next::Done(super::output::emit(t, p, nh, dst, ethertype))
}

/// The counter a hook's drop goes to.
fn reason(d: &lwt::Drop) -> DropReason {
    match d {
        lwt::Drop::ProgramDrop | lwt::Drop::IllegalReturn(_) => DropReason::LwtBpfDrop,
        _ => DropReason::LwtBpfError,
    }
}

/// Runs one hook's program on the packet in `p`, in place ([`BufBytes`]).
fn run(t: &Tables, p: &mut PacketBuf, prog: &LwtProg, r: &LwtRoute) -> Outcome {
    let hook = prog.prog.program().prog_type;
    let ingress = u32::from(p.in_dev) + 1;
    let ifindex = if hook == ProgType::LwtIn { ingress } else { u32::from(r.dev) + 1 };
    let now_ns = p.ts_ns;
    let mut pkt = LwtPacket::new(BufBytes::new(p, 0));
    pkt.meta = SkbMeta { ingress_ifindex: ingress, ifindex, ..SkbMeta::default() };
    pkt.now_ns = now_ns;
    pkt.encap_src = end_bpf::encap_src(t, r.dev);
    prog.prog.run(|run| {
        pkt.prandom = run.prandom;
        let o = lwt::run_lwt(run.scratch, prog.prog.program(), run.maps, &mut pkt, RunOpts::default());
        run.prandom = pkt.prandom;
        o
    })
}

/// The neighbour key of the packet's destination (IPv4: mapped), as `forward6`/`forward4`
/// give [`super::output::emit`].
fn dst_key(p: &PacketBuf, v6: bool) -> Option<u128> {
    let d = p.data();
    if v6 {
        let a: [u8; 16] = d.get(24..40)?.try_into().ok()?;
        Some(u128::from_be_bytes(a))
    } else {
        let a: [u8; 4] = d.get(16..20)?.try_into().ok()?;
        Some(u128::from(std::net::Ipv4Addr::from(a).to_ipv6_mapped()))
    }
}

/// The egress MTU of `nh`, less `cut` (the route's headroom, `lwtunnel_headroom`: only
/// when below the MTU), if the packet exceeds it.
fn exceeded(t: &Tables, p: &PacketBuf, nh: NextHop, cut: usize) -> Option<usize> {
    let dev = match nh {
        NextHop::OnLink(d) => d,
        NextHop::Adj(i) => t.adjacencies.get(i as usize)?.dev,
    };
    let mtu = t.mtu(dev);
    let mtu = if cut < mtu { mtu - cut } else { mtu };
    (p.len() > mtu).then_some(mtu)
}

/// `ip6_forward`'s steps before `dst_output` (as [`forward::forward6`]'s), with the
/// route's MTU: `Some` when the packet ends here.
fn forward_step6(
    t: &Tables,
    w: &mut Worker,
    p: &mut PacketBuf,
    nh: NextHop,
    forward: bool,
    cut: usize,
) -> Option<Next> {
    if p.len() < 40 {
        return Some(Next::drop(DropReason::Malformed));
    }
    if !forward {
        return exceeded(t, p, nh, cut).map(|m| mtu::too_big(t, w, p, m));
    }
    if !t.devices.get(p.in_dev as usize).is_some_and(|d| d.forwarding6) {
        return Some(Next::drop(DropReason::ForwardingDisabled));
    }
    let hl = Ipv6Packet::new_unchecked(p.data()).hop_limit();
    if hl <= 1 {
        return Some(icmp::time_exceeded6(t, w, p));
    }
    if let Some(m) = exceeded(t, p, nh, cut) {
        return Some(mtu::too_big(t, w, p, m));
    }
    Ipv6Packet::new_unchecked(p.data_mut()).set_hop_limit(hl - 1);
    if let Some(fw) = &t.firewall {
        if let Some(next) = fw.run(t, w, p, Hook::Forward, forward::nh_dev(t, Route::Forward(nh))) {
            return Some(next);
        }
    }
    if let Some(ids) = &t.ids {
        if let Some(next) = ids.inspect(w, p, Hook::Forward) {
            return Some(next);
        }
    }
    None
}

/// `ip_forward`'s steps (as [`forward::forward4`]'s). A packet over the MTU without DF
/// is fragmented and sent without the `out` and `xmit` programs.
fn forward_step4(
    t: &Tables,
    w: &mut Worker,
    p: &mut PacketBuf,
    nh: NextHop,
    forward: bool,
    cut: usize,
) -> Option<Next> {
    if p.len() < 20 {
        return Some(Next::drop(DropReason::Malformed));
    }
    if forward {
        if !t.devices.get(p.in_dev as usize).is_some_and(|d| d.forwarding4) {
            return Some(Next::drop(DropReason::ForwardingDisabled));
        }
        if Ipv4Packet::new_unchecked(p.data()).ttl() <= 1 {
            return Some(icmp::time_exceeded4(t, w, p));
        }
        if let Some(m) = exceeded(t, p, nh, cut) {
            if !super::fragment::allowed(p) {
                return Some(mtu::too_big(t, w, p, m));
            }
            Ipv4Packet::new_unchecked(p.data_mut()).decrement_ttl();
            return Some(super::fragment::send(t, w, p, nh, m));
        }
        Ipv4Packet::new_unchecked(p.data_mut()).decrement_ttl();
        None
    } else {
        let m = exceeded(t, p, nh, cut)?;
        Some(if super::fragment::allowed(p) { super::fragment::send(t, w, p, nh, m) } else { mtu::too_big(t, w, p, m) })
    }
}

/// The main table's route for the packet's IPv6 destination, with `ip rule`s.
fn lookup6(t: &Tables, p: &PacketBuf) -> Option<Route> {
    if t.rules_fib6 == Tables::MAIN {
        return verdict(Rules::lookup6(t, p.data(), p.in_dev));
    }
    let a: [u8; 16] = p.data().get(24..40)?.try_into().ok()?;
    t.fibs.first()?.lookup6(&a)
}

/// The main table's route for the packet's IPv4 destination, with `ip rule`s.
fn lookup4(t: &Tables, p: &PacketBuf) -> Option<Route> {
    if t.rules_fib4 == Tables::MAIN {
        return verdict(Rules::lookup4(t, p.data(), p.in_dev));
    }
    let a: [u8; 4] = p.data().get(16..20)?.try_into().ok()?;
    t.fibs.first()?.lookup4(&a)
}

fn verdict(v: rules::Verdict) -> Option<Route> {
    match v {
        rules::Verdict::Route(r) => Some(r),
        rules::Verdict::Blackhole | rules::Verdict::Prohibit => Some(Route::Blackhole),
        rules::Verdict::Unreachable | rules::Verdict::NoRoute => None,
    }
}

/// After an SRH push by `in`: the route `seg6_lookup_nexthop` found for the new
/// destination, then `ip6_forward` on it (its `out` and `xmit` programs run, its `in`
/// does not). A local destination: the kernel's blackhole.
fn seg6_lookup(t: &Tables, w: &mut Worker, p: &mut PacketBuf) -> Next {
    if p.len() < 40 {
        return Next::drop(DropReason::Malformed);
    }
    match lookup6(t, p) {
        Some(Route::Lwt(j)) => path(t, w, p, j, Way { v6: true, forward: true, input: false, depth: 0 }),
        Some(Route::Local | Route::Sid(_)) => Next::drop(DropReason::Blackhole),
        r => forward::dispatch6(t, w, p, r, true),
    }
}

/// `bpf_lwt_input_reroute`: the packet routed again as received, by its new header.
fn reroute_input(p: &PacketBuf) -> Next {
    match p.data().first().map(|b| b >> 4) {
        Some(6) => Next::Lookup6 { table: Tables::MAIN, forward: true },
        Some(4) => Next::Lookup4 { table: Tables::MAIN, forward: true },
        _ => Next::drop(DropReason::LwtBpfError),
    }
}

/// `bpf_lwt_xmit_reroute`: the packet routed again by its new header as the router's own
/// (`dst_output`: no forwarding step, no `in` program); no route is a drop.
fn reroute_output(t: &Tables, w: &mut Worker, p: &mut PacketBuf, depth: u8) -> Next {
    if depth >= MAX_REROUTES {
        return Next::drop(DropReason::LwtBpfError);
    }
    let v6 = match p.data().first().map(|b| b >> 4) {
        Some(6) if p.len() >= 40 => true,
        Some(4) if p.len() >= 20 => false,
        _ => return Next::drop(DropReason::LwtBpfError),
    };
    let route = if v6 { lookup6(t, p) } else { lookup4(t, p) };
    match route {
        Some(Route::Lwt(j)) => path(t, w, p, j, Way { v6, forward: false, input: false, depth: depth + 1 }),
        None | Some(Route::Unreachable) => Next::drop(DropReason::NoRoute),
        r if v6 => forward::dispatch6(t, w, p, r, false),
        r => forward::dispatch4(t, w, p, r, false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_is_iproute2s() {
        let b = LwtBpf::default();
        assert_eq!(b.to_string(), "");
        let b = LwtBpf { headroom: 40, ..LwtBpf::default() };
        assert_eq!(b.to_string(), "headroom 40");
    }

    #[test]
    fn default_section() {
        assert_eq!(DEFAULT_SECTION, "prog");
    }
}
