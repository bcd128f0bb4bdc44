//! What a behaviour's `build` ([`Behaviour::build`](crate::behaviour::Behaviour)) sees
//! of the table builder: its SID's parameters resolved to table indices — next hops,
//! devices, FIBs, policies — with errors that point at the SID's line.

use std::net::IpAddr;

use super::build::{mask6, Builder, OnLinkIndex, PolicySpec};
use super::{BuildError, NextHop};
use crate::packet::DevId;
use crate::spec::{Line, Prefix, RouteKind, Seg6Encap, Seg6Mode, SidAction, MAIN_TABLE};

/// The table builder, as one local SID's `build` uses it.
pub struct SidBuilder<'b, 'a> {
    pub(super) b: &'b mut Builder<'a>,
    pub(super) onlink: &'b OnLinkIndex,
    pub(super) policies: &'b mut Vec<PolicySpec>,
    /// The `dev` of the SID's route (the device a binding SID's policy takes its
    /// source address from).
    pub(super) route_dev: Option<DevId>,
    /// The SID's own prefix (the route's destination).
    pub(super) prefix: Prefix,
    pub(super) line: Line,
}

impl SidBuilder<'_, '_> {
    /// The SID itself: the prefix of its route (a behaviour that rewrites the
    /// destination checks it does not send a packet back to itself).
    pub fn prefix(&self) -> Prefix {
        self.prefix
    }

    /// Registers an End.Limit SID's buckets; returns their index in
    /// [`Tables::limiters`](super::Tables::limiters) (a free one, in place).
    pub fn add_limiter(&mut self, l: std::sync::Arc<crate::behaviour::end_limit::Limiter>) -> u32 {
        let lims = &mut self.b.limiters;
        match self.b.limiter_free.pop() {
            Some(i) if (i as usize) < lims.len() => {
                lims[i as usize] = l;
                i
            }
            _ => {
                lims.push(l);
                (lims.len() - 1) as u32
            }
        }
    }

    /// The `dev` of the SID's route, if it has one.
    pub fn route_dev(&self) -> Option<DevId> {
        self.route_dev
    }

    /// A build error at the SID's line.
    pub fn error(&self, message: impl Into<String>) -> BuildError {
        BuildError { line: self.line, message: message.into() }
    }

    /// The IPv6 next hop `nh6` (through `oif` if given, else through the connected
    /// network it lies on).
    pub fn next_hop6(&mut self, a: &SidAction) -> Result<NextHop, BuildError> {
        let nh = a.params.nh6.ok_or_else(|| self.error(format!("{} requires `nh6 ADDR`", a.behaviour.keyword)))?;
        self.next_hop(a, IpAddr::V6(nh))
    }

    /// The IPv4 next hop `nh4`, as [`next_hop6`](Self::next_hop6).
    pub fn next_hop4(&mut self, a: &SidAction) -> Result<NextHop, BuildError> {
        let nh = a.params.nh4.ok_or_else(|| self.error(format!("{} requires `nh4 ADDR`", a.behaviour.keyword)))?;
        self.next_hop(a, IpAddr::V4(nh))
    }

    fn next_hop(&mut self, a: &SidAction, nh: IpAddr) -> Result<NextHop, BuildError> {
        match &a.params.oif {
            Some(o) => {
                let d = self.b.dev(o, self.line)?;
                Ok(NextHop::Adj(self.b.adjacency(d, nh)))
            }
            None if self.onlink.lookup(nh).is_some() => self.b.gateway(nh, None, self.onlink, self.line),
            None => self.behind_gateway(a, nh),
        }
    }

    /// A next hop that is not on a connected network, reached as the kernel reaches
    /// it: through the route of the main table that holds it (Linux resolves `nh6` by
    /// a route lookup, `seg6_lookup_nexthop` in net/ipv6/seg6_local.c). A change of a
    /// main-table route then builds the tables again ([`Tables::apply_routes`] refuses
    /// it in place), so resolving here follows the routes. Only a route through one
    /// gateway is supported.
    ///
    /// [`Tables::apply_routes`]: super::Tables::apply_routes
    fn behind_gateway(&mut self, a: &SidAction, nh: IpAddr) -> Result<NextHop, BuildError> {
        let kw = a.behaviour.keyword;
        let IpAddr::V6(nh6) = nh else {
            return Err(self.error(format!("{kw}: next hop {nh} is not on a connected network; add `oif DEV`")));
        };
        let spec = self.b.spec;
        let best = spec
            .routes
            .iter()
            .filter(|r| r.table == MAIN_TABLE)
            .filter_map(|r| match r.prefix {
                Prefix::V6(p, l) if mask6(p.octets(), l) == mask6(nh6.octets(), l) => Some((l, r)),
                _ => None,
            })
            .max_by_key(|(l, _)| *l);
        match best {
            Some((_, r)) => match &r.kind {
                RouteKind::Forward { via: Some(v), dev } => {
                    let d = match dev {
                        Some(d) => Some(self.b.dev(d, r.line)?),
                        None => None,
                    };
                    self.b.sid_via_routes = true;
                    self.b.gateway(*v, d, self.onlink, self.line)
                }
                _ => Err(self.error(format!(
                    "{kw}: nh6 {nh} is reached through the route at line {}, which is not a route via one \
                     gateway; sr6 resolves nh6 only on a connected network or through a `via` route \
                     (or give `oif DEV`)",
                    r.line
                ))),
            },
            None => Err(self
                .error(format!("{kw}: nh6 {nh} has no route in the main table; add a route to it or give `oif DEV`"))),
        }
    }

    /// The output device `oif`.
    pub fn oif(&mut self, a: &SidAction) -> Result<DevId, BuildError> {
        match &a.params.oif {
            Some(o) => self.b.dev(o, self.line),
            None => Err(self.error(format!("{} requires `oif DEV`", a.behaviour.keyword))),
        }
    }

    /// The FIB (dense index) of `table` or `vrftable`; the main table if neither is
    /// given.
    pub fn table_of(&mut self, a: &SidAction) -> u32 {
        self.b.table(a.params.table.or(a.params.vrftable).unwrap_or(MAIN_TABLE)) as u32
    }

    /// Registers the policy `srh segs ...` in `mode`; returns its index, valid once the
    /// tables are built.
    pub fn policy(&mut self, a: &SidAction, mode: Seg6Mode) -> Result<u32, BuildError> {
        let srh = a
            .params
            .srh
            .as_ref()
            .ok_or_else(|| self.error(format!("{} requires `srh segs ...`", a.behaviour.keyword)))?;
        let enc = Seg6Encap { mode, segs: srh.segs.clone(), hmac: srh.hmac, csid: srh.csid };
        self.policies.push((enc, self.route_dev, self.line, None));
        Ok((self.policies.len() - 1) as u32)
    }

    /// Registers the policy `mode` of End.AS: segments `segs` (in travel order) from
    /// source `src` (draft-ietf-spring-sr-service-programming §6.1: CACHE.LIST,
    /// CACHE.SA); returns its index, valid once the tables are built.
    pub fn proxy_policy(&mut self, mode: Seg6Mode, segs: &[std::net::Ipv6Addr], src: std::net::Ipv6Addr) -> u32 {
        let enc = Seg6Encap { mode, segs: segs.to_vec(), hmac: None, csid: None };
        self.policies.push((enc, self.route_dev, self.line, Some(src)));
        (self.policies.len() - 1) as u32
    }
}
