//! What an in-kernel tier (sr6-xdp's XDP program) may do with the FIBs: the tables'
//! IPv6 prefixes, each with the one action such a tier takes for packets whose longest
//! match it is, decided here by the same tests the fast path makes
//! (`pipeline::fast`), so that the tier forwards only what the fast path would, with
//! the same bytes (End, End.T and End.X with or without PSP, End.DX4, End.DX6,
//! End.DT4, End.DT6 and End.DT46, NEXT-C-SID End, End.T and End.X, H.Encaps(.Red),
//! H.Encaps.L2(.Red) and H.Insert(.Red) of IPv6 packets, IPv6 and IPv4 transit).
//! Every prefix is listed, also those the tier leaves to sr6
//! ([`OffloadAct::General`]): left out, a shorter prefix would match in its place.

use super::{FastKind, NextHop, Rewrite, RewriteKind, Route, Tables};
use crate::packet::DevId;

/// What the in-kernel tier does with a packet whose longest match is a prefix.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum OffloadAct {
    /// Hand it to sr6 (the AF_XDP path) unchanged.
    General,
    /// Forward it (RFC 8200 §3): hop limit minus one, these Ethernet addresses
    /// (destination first), out of device `dev`. An on-link /128 route whose neighbour
    /// is known.
    Forward { dev: DevId, eth: [u8; 12] },
    /// Forward it through adjacency `adj` ([`Tables::adjacencies`]): a route through a
    /// gateway. Its device and Ethernet addresses are the adjacency's
    /// ([`Tables::offload_adjacency`]); while its neighbour is not known, the general
    /// path's. (The prefix's entry names the adjacency, so a neighbour's change is the
    /// adjacency's alone, not every route's through it.)
    ForwardAdj { adj: u32 },
    /// Local SID `sid`, End (RFC 8986 §4.1) or End.T (§4.3), the next segment looked
    /// up in FIB `table` (dense index, 0 for main): on an SRH that directly follows the
    /// IPv6 header and carries no TLV, with 1 <= Segments Left <= Last Entry + 1. With
    /// `psp` (§4.16.1), the SRH is removed when Segments Left reaches 0.
    End { sid: u32, table: usize, psp: bool },
    /// Local SID `sid`, End.X (§4.2), to adjacency `adj` (as for
    /// [`ForwardAdj`](OffloadAct::ForwardAdj)), on such an SRH; `psp` as for End.
    EndX { sid: u32, adj: u32, psp: bool },
    /// Local SID `sid`, End.DT6 (RFC 8986 §4.6): on such an SRH with Segments Left 0
    /// and an inner IPv6 packet (Next Header 41) whose Payload Length is the rest of the
    /// packet and whose hop limit is over 1, the outer header and SRH removed, the inner
    /// hop limit minus one, its destination routed in FIB `table`. Without an SRH, the
    /// general path's (as on the fast path).
    Dt6 { sid: u32, table: usize },
    /// Local SID `sid`, End.DX6 (§4.4) to adjacency `adj`: the same decapsulation, sent
    /// to the adjacency.
    Dx6 { sid: u32, adj: u32 },
    /// Local SID `sid`, End.DT4 (§4.7): on such an SRH with Segments Left 0 and an inner
    /// IPv4 packet (Next Header 4) without options, whose Total Length is the rest of
    /// the packet, TTL over 1 and header checksum right, received on a device that
    /// forwards IPv4: the outer header and SRH removed, TTL minus one (the checksum
    /// updated), the destination (below 224.0.0.0) routed in FIB `table`.
    Dt4 { sid: u32, table: usize },
    /// Local SID `sid`, End.DT46 (§4.8): End.DT4's step for an inner IPv4 packet,
    /// End.DT6's for an inner IPv6 one, both in FIB `table`.
    Dt46 { sid: u32, table: usize },
    /// Local SID `sid`, End.DX4 (§4.5) to adjacency `adj`: End.DT4's decapsulation (any
    /// destination), sent to the adjacency.
    Dx4 { sid: u32, adj: u32 },
    /// Local SID `sid`, End or End.T with NEXT-C-SID (RFC 9800 §4.1) and no PSP, on a
    /// C-SID container of a `lblen`-bit Locator-Block and `nflen`-bit C-SIDs, with or
    /// without an SRH (which is not touched): if the destination carries an argument
    /// (S01), the bits after the block shifted left by `nflen` (S05-S06), the hop limit
    /// minus one (S07), the new destination routed in FIB `table` (S08).
    EndCsid { sid: u32, table: usize, lblen: u8, nflen: u8 },
    /// Local SID `sid`, End.X with NEXT-C-SID and no PSP, to adjacency `adj`: the same
    /// shift, sent to the adjacency.
    EndXCsid { sid: u32, adj: u32, lblen: u8, nflen: u8 },
    /// Head-end policy `policy`, applied to an IPv6 packet without a Hop-by-Hop Options
    /// header if it is one whose headers the fast path prepares
    /// ([`Tables::offload_policies`]; while it is not — its first segment's neighbour
    /// not known, say — the general path's).
    Policy { policy: u32 },
}

/// How a head-end policy's headers go on a packet (RFC 8986 §5.1-§5.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum OffloadRewrite {
    /// H.Encaps(.Red): the headers replace the Ethernet header; the outer version,
    /// traffic class and flow label are the inner packet's, its hop limit one less.
    Encap,
    /// H.Insert(.Red): the headers replace the Ethernet and IPv6 headers; the source,
    /// traffic class and flow label stay, the hop limit is one less, the SRH's Next
    /// Header is the old one and Segment List[0] the old destination.
    Insert,
    /// H.Encaps.L2(.Red): the headers go in front of the frame as received; the outer
    /// fields as for H.Encaps, from the frame's IPv6 header.
    EncapL2,
}

/// A head-end policy as the in-kernel tier applies it: its index, how, the device its
/// first segment is sent out of, and its headers (Ethernet towards that segment, IPv6,
/// the SRH, an HMAC TLV precomputed when the policy's HMAC does not depend on the
/// packet), at most [`OffloadPolicy::MAX_HEADERS`] bytes.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct OffloadPolicy {
    pub index: u32,
    pub rewrite: OffloadRewrite,
    pub out: DevId,
    pub headers: Vec<u8>,
}

impl OffloadPolicy {
    /// The longest headers a policy's rewrite has (the fast path's block).
    pub const MAX_HEADERS: usize = Rewrite::BLOCK;
}

/// One prefix of a FIB: the FIB (dense index, 0 for main), the address (left-aligned,
/// host bits clear), its length and what the in-kernel tier does with it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Offload6 {
    pub table: usize,
    pub addr: u128,
    pub len: u8,
    pub act: OffloadAct,
}

/// One IPv4 prefix of a FIB (dense index, 0 for main) and what the in-kernel tier
/// does with it ([`OffloadAct::Forward`] or [`OffloadAct::General`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Offload4 {
    pub table: usize,
    pub addr: u32,
    pub len: u8,
    pub act: OffloadAct,
}

impl Tables {
    /// Every IPv6 prefix of every FIB with its [`OffloadAct`], the /128s (local
    /// addresses, SIDs, host routes) included.
    pub fn offload6(&self) -> Vec<Offload6> {
        // (Sized at once: a full table's prefixes are not copied as the vector grows.)
        let mut v = Vec::with_capacity(self.fibs.iter().map(|f| f.lpm6.len() + f.exact6.len()).sum());
        for table in 0..self.fibs.len() {
            let Some(fib) = self.fibs.get(table) else { continue };
            let start = v.len();
            v.extend(fib.lpm6.entries().map(|(addr, len, r, _)| Offload6 { table, addr, len, act: self.trie_act6(r) }));
            // The /128s of the exact table win over a /128 of the trie, as in
            // `Fib::lookup6_key`.
            let mut i = start;
            while i < v.len() {
                if v[i].len == 128 && fib.exact6.get(v[i].addr).is_some() {
                    v.swap_remove(i);
                } else {
                    i += 1;
                }
            }
            v.extend(fib.exact6.iter().map(|(addr, r)| Offload6 {
                table,
                addr,
                len: 128,
                act: self.offload_route(r, Some(addr)),
            }));
        }
        v.sort_unstable();
        v
    }

    /// The [`Offload6`] of FIB `table`'s prefix `addr`/`len` itself (`addr` left-aligned,
    /// host bits clear), as [`offload6`](Self::offload6) lists it; `None` if the FIB
    /// has no such prefix. For a route change, without listing every prefix.
    pub fn offload6_at(&self, table: usize, addr: u128, len: u8) -> Option<Offload6> {
        let fib = self.fibs.get(table)?;
        let act = match fib.exact6.get(addr) {
            // (The exact table's /128 wins over the trie's, as in the list.)
            Some(r) if len == 128 => self.offload_route(r, Some(addr)),
            _ => fib.lpm6.entry(addr, len).map(|(r, _)| self.trie_act6(r))?,
        };
        Some(Offload6 { table, addr, len, act })
    }

    /// The [`Offload4`] of FIB `table`'s prefix `addr`/`len` itself (host bits clear),
    /// as [`offload4`](Self::offload4) lists it; `None` if the FIB has no such prefix.
    pub fn offload4_at(&self, table: usize, addr: u32, len: u8) -> Option<Offload4> {
        let fib = self.fibs.get(table)?;
        let act = match fib.exact4.get(u128::from(addr)) {
            Some(_) if len == 32 => OffloadAct::General,
            _ => fib.lpm4.entry(u128::from(addr) << 96, len).map(|(r, _)| self.trie_act4(r))?,
        };
        Some(Offload4 { table, addr, len, act })
    }

    /// The action of a prefix of an IPv6 trie.
    fn trie_act6(&self, r: &Route) -> OffloadAct {
        self.offload_route(*r, None)
    }

    /// The action of a prefix of an IPv4 trie.
    fn trie_act4(&self, r: &Route) -> OffloadAct {
        match *r {
            Route::Forward(NextHop::Adj(adj)) => OffloadAct::ForwardAdj { adj },
            _ => OffloadAct::General,
        }
    }

    /// The action of a route; `host` is the /128's address (an on-link /128 is
    /// resolved to its neighbour).
    fn offload_route(&self, r: Route, host: Option<u128>) -> OffloadAct {
        match r {
            Route::Forward(NextHop::Adj(adj)) => OffloadAct::ForwardAdj { adj },
            Route::Forward(nh @ NextHop::OnLink(_)) => host.map_or(OffloadAct::General, |a| self.resolved(nh, a)),
            Route::Sid(i) => match self.fast_sids.get(i as usize) {
                Some(s) if s.is(FastKind::End) => OffloadAct::End { sid: i, table: 0, psp: false },
                Some(s) if s.is(FastKind::EndT) => OffloadAct::End { sid: i, table: s.arg as usize, psp: false },
                // (End and End.T with PSP: one kind, its argument the FIB.)
                Some(s) if s.is(FastKind::EndPsp) => OffloadAct::End { sid: i, table: s.arg as usize, psp: true },
                Some(s) if s.is(FastKind::EndX) || s.is(FastKind::EndXPsp) => match s.next_hop() {
                    NextHop::Adj(adj) => OffloadAct::EndX { sid: i, adj, psp: s.is(FastKind::EndXPsp) },
                    NextHop::OnLink(_) => OffloadAct::General,
                },
                Some(s) if s.is(FastKind::Dt6) => OffloadAct::Dt6 { sid: i, table: s.arg as usize },
                // (An on-link End.DX6 resolves the inner destination: the general path's.)
                Some(s) if s.is(FastKind::Dx6) => match s.next_hop() {
                    NextHop::Adj(adj) => OffloadAct::Dx6 { sid: i, adj },
                    NextHop::OnLink(_) => OffloadAct::General,
                },
                Some(s) if s.is(FastKind::Dt4) => OffloadAct::Dt4 { sid: i, table: s.arg as usize },
                Some(s) if s.is(FastKind::Dt46) => OffloadAct::Dt46 { sid: i, table: s.arg as usize },
                Some(s) if s.is(FastKind::Dx4) => match s.next_hop() {
                    NextHop::Adj(adj) => OffloadAct::Dx4 { sid: i, adj },
                    NextHop::OnLink(_) => OffloadAct::General,
                },
                Some(s) if s.is(FastKind::EndCsid) || s.is(FastKind::EndXCsid) => {
                    let Some(c) = self.sids.get(i as usize).and_then(|x| x.action.flavors.next_csid) else {
                        return OffloadAct::General;
                    };
                    let (lblen, nflen) = (c.lblen, c.nflen);
                    if s.is(FastKind::EndCsid) {
                        return OffloadAct::EndCsid { sid: i, table: s.arg as usize, lblen, nflen };
                    }
                    match s.next_hop() {
                        NextHop::Adj(adj) => OffloadAct::EndXCsid { sid: i, adj, lblen, nflen },
                        NextHop::OnLink(_) => OffloadAct::General,
                    }
                }
                _ => OffloadAct::General,
            },
            Route::Policy(i) => OffloadAct::Policy { policy: i },
            _ => OffloadAct::General,
        }
    }

    /// Every head-end policy the fast path applies ([`Rewrite`]), with its headers.
    pub fn offload_policies(&self) -> Vec<OffloadPolicy> {
        self.rewrites
            .iter()
            .enumerate()
            .filter_map(|(i, r)| {
                let rewrite = match r.kind {
                    RewriteKind::Encap => OffloadRewrite::Encap,
                    RewriteKind::Insert => OffloadRewrite::Insert,
                    RewriteKind::EncapL2 => OffloadRewrite::EncapL2,
                    RewriteKind::None => return None,
                };
                let headers = r.block.get(Rewrite::BLOCK - usize::from(r.len)..)?.to_vec();
                Some(OffloadPolicy { index: u32::try_from(i).ok()?, rewrite, out: r.out, headers })
            })
            .collect()
    }

    /// Adjacency `adj`'s device and Ethernet addresses, if its neighbour is known
    /// (what [`OffloadAct::ForwardAdj`] and the SIDs to an adjacency send with).
    pub fn offload_adjacency(&self, adj: u32) -> Option<(DevId, [u8; 12])> {
        self.resolve(NextHop::Adj(adj), 0)
    }

    fn resolved(&self, nh: NextHop, dst: u128) -> OffloadAct {
        match self.resolve(nh, dst) {
            Some((dev, eth)) => OffloadAct::Forward { dev, eth },
            None => OffloadAct::General,
        }
    }

    /// Every IPv4 prefix of every FIB with its action, as the fast path's IPv4 step
    /// (`pipeline::fast::ipv4`, RFC 1812 §5.2.2) and End.DT4's lookup
    /// (`tables::fast_route::route4_to`) decide: a route through a gateway is forwarded
    /// to its adjacency (while its neighbour is known); every /32 of the exact table (local addresses,
    /// host routes, SIDs) and every other route is the general path's.
    pub fn offload4(&self) -> Vec<Offload4> {
        let mut v: Vec<Offload4> = Vec::with_capacity(self.fibs.iter().map(|f| f.lpm4.len() + f.exact4.len()).sum());
        for table in 0..self.fibs.len() {
            let Some(fib) = self.fibs.get(table) else { continue };
            let start = v.len();
            v.extend(fib.lpm4.entries().map(|(key, len, r, _)| Offload4 {
                table,
                addr: (key >> 96) as u32,
                len,
                act: self.trie_act4(r),
            }));
            let mut i = start;
            while i < v.len() {
                if v[i].len == 32 && fib.exact4.get(u128::from(v[i].addr)).is_some() {
                    v.swap_remove(i);
                } else {
                    i += 1;
                }
            }
            v.extend(fib.exact4.iter().map(|(a, _)| Offload4 {
                table,
                addr: a as u32,
                len: 32,
                act: OffloadAct::General,
            }));
        }
        v.sort_unstable();
        v
    }

    /// The router's own IPv4 addresses: a packet from one of them is the general
    /// path's (the fast path's source screen, `Tables::local4_filter`).
    pub fn local_addrs4(&self) -> Vec<u32> {
        let mut v: Vec<u32> = self.devices.iter().flat_map(|d| d.addrs4.iter().map(|a| u32::from(*a))).collect();
        v.sort_unstable();
        v.dedup();
        v
    }

    /// Whether the in-kernel tier may forward IPv4 frames received on device `dev`: it
    /// forwards IPv4, is no SR proxy's `iif`, and no firewall or IDS sees its frames.
    pub fn offload_device4(&self, dev: DevId) -> bool {
        let Some(d) = self.devices.get(usize::from(dev)) else { return false };
        d.forwarding4 && !self.fast_devs.proxy_in(dev) && self.firewall.is_none() && self.ids.is_none()
    }

    /// Whether the in-kernel tier may take frames received on device `dev` at all: it
    /// forwards IPv6, is no SR proxy's `iif`, and no firewall or IDS sees its frames
    /// (the fast path's conditions, `Worker::process_batch`). A device that requires
    /// HMACs is taken too: the tier passes an SRH only with an HMAC the general path
    /// verified (`seg6_require_hmac` is in its device map).
    pub fn offload_device(&self, dev: DevId) -> bool {
        let Some(d) = self.devices.get(usize::from(dev)) else { return false };
        d.forwarding6 && !self.fast_devs.proxy_in(dev) && self.firewall.is_none() && self.ids.is_none()
    }
}
