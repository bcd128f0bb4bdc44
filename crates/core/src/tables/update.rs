//! Route changes applied to built tables in place ([`Tables::apply_routes`]), for the
//! routes a routing daemon sends by the thousand: a prefix through a gateway (on a
//! device, or without one on a device route of the main table, as the build resolves
//! it), a multipath route given by its paths (a new group), a device route, a blackhole
//! or unreachable prefix, a GTP-U encapsulation (`encap gtp teid ...`, under a retired
//! one's index, [`Tables::gtp_free`]), LWT BPF programs on a route (`encap bpf ...`,
//! loaded when the line was read; a removed one's index goes to the last, whose FIB
//! entry follows), a route through a nexthop object (single, blackhole or group) that
//! the tables were built with (zebra installs every route through one; the route is the
//! one the build made of it for the route's family, [`Tables::nhid_routes`]), in any
//! table (one the tables do not have is made, empty, first). The route replaced or
//! removed may be any of these, or a multipath one. The FIB's LPM changes a prefix at a
//! time ([`Lpm::insert`](crate::lpm::Lpm::insert)); a host route (/128, /32: an IGP's
//! loopbacks) goes to the exact table and the fast path's word map, and marks its place
//! in the trie ([`Lpm::mark`](crate::lpm::Lpm::mark)); a gateway not seen before gets an
//! adjacency, resolved from the neighbours the tables know. What a route change can
//! move elsewhere is redone: after a change to the main table, each policy's first
//! segment that the changed prefixes cover is resolved again for the fast path (and
//! the source of a policy that takes it from that route found again); a device route
//! of the main table changes the index that resolves gateways given without a device
//! (`build::OnLinkIndex`). Neighbours change in place too ([`Tables::apply_neighbours`]).
//!
//! Local SIDs of every behaviour change in place too (`sid_update.rs` says how, and
//! how their indices stay dense), and so do head-end policies, `encap seg6` routes
//! (`policy_update.rs`).
//!
//! Refused with [`NeedsBuild`], so that the caller builds the tables from the whole
//! configuration as before: a prefix that is also an address's connected route or a
//! host route to an own address; a route through a nexthop object that does not
//! resolve for its family; a SID whose next hop lies behind a gateway, and while one
//! exists, a change of the main table; a device route of the main table once a gateway
//! given without a device was resolved (on one of them, perhaps), or in a batch that
//! resolves one; a new table while there are policy routing rules. The result is the
//! tables that [`Tables::build`] makes of the changed configuration, lookup for lookup
//! (a test compares them), with adjacencies that no route uses any more left in place.

use std::net::IpAddr;

use super::{eth_addrs, neigh_key, Adjacency, FastSid, NextHop, Rewrite, Route, Tables};
use crate::behaviour::mobile::gtp_encap::GtpEncap;
use crate::packet::DevId;
use crate::spec::{GtpTunnel, Prefix, RouteKind, RouteSpec, MAIN_TABLE};

/// A route change: [`Add`](RouteChange::Add) also replaces the route of the same table
/// and prefix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RouteChange {
    Add(RouteSpec),
    Delete(RouteSpec),
}

/// A neighbour learned (`mac`), changed, or forgotten (`None`) on device `dev`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NeighChange {
    pub dev: String,
    pub addr: IpAddr,
    pub mac: Option<[u8; 6]>,
}

/// Why [`Tables::apply_routes`] did not apply a change: build the tables instead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NeedsBuild(pub String);

impl RouteChange {
    pub(super) fn spec(&self) -> &RouteSpec {
        match self {
            RouteChange::Add(r) | RouteChange::Delete(r) => r,
        }
    }
}

impl Tables {
    /// Applies `changes`, in order, to the tables in place — all of them, or none if
    /// one needs a build (see the module docs; the tables are then unchanged).
    pub fn apply_routes(&mut self, changes: &[RouteChange]) -> Result<(), NeedsBuild> {
        for c in changes {
            self.check_incremental(c)?;
        }
        self.check_proxies(changes)?;
        self.check_device_routes(changes)?;
        // The proxies' shared state, kept by those the changes keep.
        let proxies = self.proxy_states();
        let proxy_added = super::sid_update::adds_proxy(changes);
        let mut sid_changed = false;
        // The tables the changes name that do not exist yet (a route's, a SID's `table`
        // or `vrftable`) are made, empty, in the order a build would make them; taken
        // away again if a SID cannot be built in place.
        let (fibs, ids) = (self.fibs.len(), self.table_ids.len());
        self.add_tables(changes);
        let built = self.build_sids(changes);
        if built.is_err() {
            while self.fibs.len() > fibs {
                self.fibs.pop();
            }
            self.table_ids.truncate(ids);
        }
        let mut sids = built?.into_iter();
        // The main-table prefixes changed: the policies whose first segment they cover
        // are resolved again.
        let mut main_changed = Vec::new();
        // The largest growth of the policies added and of those retired.
        let (mut added, mut retired): (usize, Option<usize>) = (0, None);
        for c in changes {
            let r = c.spec();
            let t = self.fib_of_table(r.table).ok_or_else(|| NeedsBuild("a new table".into()))?;
            if t == Tables::MAIN as usize {
                main_changed.push(r.prefix);
            }
            let (key, len) = lpm_key(r.prefix);
            // A SID there now goes (unless a SID takes its place); so does a policy.
            let now = self.route_at(t, r.prefix);
            let (was_sid, was_policy) = match now {
                Some(Route::Sid(j)) => (Some(j), None),
                Some(Route::Policy(j)) => (None, Some(j)),
                _ => (None, None),
            };
            sid_changed |= was_sid.is_some() || super::sid_update::adds_sid(c);
            match c {
                RouteChange::Add(_) if super::sid_update::adds_sid(c) => {
                    if let Some((mut s, p)) = sids.next() {
                        if let Some(p) = p {
                            added = added.max(super::policy_growth(&p.0).max(1));
                            self.adopt_policy(&mut s, p);
                        }
                        self.place_sid(t, s);
                    }
                    if let Some(j) = was_policy {
                        retired = retired.max(Some(self.growth_of(j)));
                        self.retire_policy(j);
                    }
                    continue;
                }
                RouteChange::Add(r) => {
                    let route = self.incremental_route(r)?;
                    if let Route::Policy(j) = route {
                        // (At least 1: an added policy always reaches the bound's update.)
                        added = added.max(self.growth_of(j).max(1));
                    }
                    self.put_route(t, r.prefix, route);
                }
                RouteChange::Delete(r) => {
                    let Some(fib) = self.fibs.get_mut(t) else { continue };
                    // A mark left behind only costs a probe of the exact table.
                    match r.prefix {
                        Prefix::V6(a, 128) => {
                            fib.exact6.remove(u128::from(a));
                            fib.words6.remove(u128::from(a));
                        }
                        Prefix::V4(a, 32) => drop(fib.exact4.remove(u128::from(u32::from(a)))),
                        Prefix::V6(..) => drop(fib.lpm6.remove(key, len)),
                        Prefix::V4(..) => drop(fib.lpm4.remove(key, len)),
                    }
                }
            }
            // The main table's device routes resolve gateways given without a device.
            if t == Tables::MAIN as usize {
                let dev = match c {
                    RouteChange::Add(RouteSpec { kind: RouteKind::Forward { via: None, dev: Some(d) }, .. }) => {
                        self.device_id(d)
                    }
                    _ => None,
                };
                if dev.is_some() || matches!(now, Some(Route::Forward(NextHop::OnLink(_)))) {
                    if let Some(o) = self.onlink.as_mut() {
                        o.set(r.prefix, dev);
                    }
                }
            }
            match now {
                Some(Route::Lwt(j)) => self.drop_lwt(j),
                Some(Route::GtpEncap(j)) => self.gtp_free.push(j),
                _ => {}
            }
            if let Some(j) = was_sid {
                self.drop_sid(j);
            }
            if let Some(j) = was_policy {
                retired = retired.max(Some(self.growth_of(j)));
                self.retire_policy(j);
            }
        }
        if proxy_added || (sid_changed && !proxies.is_empty()) {
            self.remake_proxies(proxies)?;
        }
        if !main_changed.is_empty() && !self.policies.is_empty() {
            self.resolve_policies_under(&main_changed);
        }
        if added > 0 || retired.is_some() {
            self.update_fast_max_len(added, retired);
        }
        Ok(())
    }

    /// Applies neighbour changes in place: the neighbour table, the Ethernet header of
    /// every adjacency towards each neighbour, the fast path's hops (every FIB value's,
    /// as the build sets them last) and each policy's first segment resolved again. All
    /// of them, or none if one names a device the tables do not have.
    pub fn apply_neighbours(&mut self, changes: &[NeighChange]) -> Result<(), NeedsBuild> {
        let devs = changes
            .iter()
            .map(|c| self.device_id(&c.dev).ok_or_else(|| NeedsBuild(format!("unknown device {}", c.dev))))
            .collect::<Result<Vec<_>, _>>()?;
        if changes.is_empty() {
            return Ok(());
        }
        // Whether an adjacency's Ethernet header changed: the routes' hops then do.
        let mut hops_changed = false;
        for (c, &d) in changes.iter().zip(&devs) {
            let key = neigh_key(c.addr);
            match c.mac {
                Some(m) => drop(self.neighbours.insert((d, key), m)),
                None => drop(self.neighbours.remove(&(d, key))),
            }
            let own = self.devices.get(usize::from(d)).map_or([0; 6], |x| x.mac);
            for a in self.adjacencies.iter_mut().filter(|a| a.dev == d && neigh_key(a.nh) == key) {
                let eth = c.mac.map(|m| eth_addrs(m, own));
                hops_changed |= a.eth != eth;
                a.eth = eth;
            }
        }
        // (Every route's hop is set again, a pass over the FIBs: not for a neighbour no
        // gateway is.)
        if hops_changed {
            let sid_hops = super::build::csid_hops(&self.sids, &self.fast_sids);
            for fib in self.fibs.iter_mut() {
                fib.set_hops(&self.adjacencies, &sid_hops);
            }
        }
        if !self.policies.is_empty() {
            self.resolve_policies();
        }
        Ok(())
    }

    /// Makes an empty FIB for each table that `changes` add a route to, or that a SID
    /// they add names, and that the tables do not have.
    fn add_tables(&mut self, changes: &[RouteChange]) {
        for c in changes {
            let RouteChange::Add(r) = c else { continue };
            let named = super::sid_update::sid_of(r).and_then(|(a, _)| a.params.table.or(a.params.vrftable));
            for id in std::iter::once(r.table).chain(named) {
                if self.fib_of_table(id).is_none() {
                    self.table_ids.push(id);
                    self.fibs.push_empty();
                }
            }
        }
    }

    /// Puts `route` (not a SID: `sid_update.rs` puts those) in FIB `t` at `prefix`, in
    /// the place of the route there if any.
    fn put_route(&mut self, t: usize, prefix: Prefix, route: Route) {
        let adjacencies = &self.adjacencies;
        let Some(fib) = self.fibs.get_mut(t) else { return };
        let hop = super::Fib::hop(&route, adjacencies);
        let (key, len) = lpm_key(prefix);
        match prefix {
            // Host routes: the exact table, the fast path's word (no SID), and the
            // trie's mark that sends lookups there.
            Prefix::V6(a, 128) => {
                fib.exact6.set(u128::from(a), route);
                fib.words6.set(u128::from(a), FastSid::NOT_SID);
                fib.lpm6.mark(u128::from(a));
            }
            Prefix::V4(a, 32) => {
                fib.exact4.set(u128::from(u32::from(a)), route);
                fib.lpm4.mark(u128::from(u32::from(a)) << 96);
            }
            Prefix::V6(..) => drop(fib.lpm6.insert(key, len, route, hop)),
            Prefix::V4(..) => drop(fib.lpm4.insert(key, len, route, hop)),
        }
    }

    /// Removes LWT route `i` ([`Tables::lwts`]), whose FIB entry is gone: the last one
    /// takes its index, and its FIB entry (found by its table and prefix) points there.
    fn drop_lwt(&mut self, i: u32) {
        let i = i as usize;
        if i >= self.lwts.len() {
            return;
        }
        self.lwts.swap_remove(i);
        let Some(moved) = self.lwts.get(i) else { return };
        let (table, prefix) = (moved.table, moved.prefix);
        if let Some(t) = self.fib_of_table(table) {
            self.put_route(t, prefix, Route::Lwt(i as u32));
        }
    }

    /// Whether `c` can be applied in place (the module docs list what cannot).
    fn check_incremental(&self, c: &RouteChange) -> Result<(), NeedsBuild> {
        let r = c.spec();
        let no = |why: &str| Err(NeedsBuild(format!("{why}: the tables are built again")));
        let rules = !self.rules.v6.is_empty() || !self.rules.v4.is_empty();
        if self.fib_of_table(r.table).is_none() && (matches!(c, RouteChange::Delete(_)) || rules) {
            return no("a route in a table the tables do not have");
        }
        let connected = match r.prefix {
            Prefix::V6(a, l) => self.devices.iter().any(|d| covers6(&d.addrs6, &d.plens6, a.octets(), l)),
            Prefix::V4(a, l) => self.devices.iter().any(|d| covers4(&d.addrs4, &d.plens4, a.octets(), l)),
        };
        if matches!(r.prefix, Prefix::V6(_, l) if l > 128) || matches!(r.prefix, Prefix::V4(_, l) if l > 32) {
            return no("a prefix longer than an address");
        }
        if connected && r.table == MAIN_TABLE {
            return no("the prefix of an address's connected route");
        }
        if r.table == MAIN_TABLE && self.sid_via_routes {
            return no("a main-table route while a SID's next hop is resolved through one");
        }
        // The route replaced or removed must be one of these kinds too.
        let t = self.fib_of_table(r.table).and_then(|t| self.fibs.get(t));
        let (key, len) = lpm_key(r.prefix);
        // (A host route's place is the exact table: an own address's Local is there.)
        let now = match r.prefix {
            Prefix::V6(a, 128) => t.and_then(|f| f.exact6.get(u128::from(a))),
            Prefix::V4(a, 32) => t.and_then(|f| f.exact4.get(u128::from(u32::from(a)))),
            Prefix::V6(..) => t.and_then(|f| f.lpm6.get(key, len)).copied(),
            Prefix::V4(..) => t.and_then(|f| f.lpm4.get(key, len)).copied(),
        };
        match now {
            None
            | Some(
                Route::Forward(NextHop::Adj(_))
                | Route::Blackhole
                | Route::Unreachable
                | Route::Multipath(_)
                | Route::Policy(_),
            ) => {}
            Some(Route::Sid(j)) if self.sid_removable(j) => {}
            Some(Route::Lwt(_) | Route::GtpEncap(_)) => {}
            // (A main-table one: `check_device_routes`.)
            Some(Route::Forward(NextHop::OnLink(_))) => {}
            Some(_) => return no("a route of another kind there now"),
        }
        {
            match &r.kind {
                RouteKind::Forward { via: Some(v), dev: Some(d) } => {
                    if self.device_id(d).is_none() {
                        return no("an unknown device");
                    }
                    if matches!((r.prefix, v), (Prefix::V6(..), IpAddr::V4(_)) | (Prefix::V4(..), IpAddr::V6(_))) {
                        return no("a gateway of the other family");
                    }
                }
                RouteKind::Forward { via: None, dev: Some(d) } => {
                    if self.device_id(d).is_none() {
                        return no("an unknown device");
                    }
                }
                RouteKind::Forward { via: Some(v), dev: None } => self.check_path(r.prefix, Some(*v), None)?,
                RouteKind::Multipath { paths } if !paths.is_empty() => {
                    for p in paths {
                        self.check_path(r.prefix, p.via, p.dev.as_deref())?;
                    }
                }
                RouteKind::Blackhole | RouteKind::Unreachable => {}
                RouteKind::Seg6Local { .. } | RouteKind::Gtp { tunnel: GtpTunnel::Decap { .. }, .. } => {
                    if let Some((action, dev)) = super::sid_update::sid_of(r) {
                        self.check_sid(r, &action, dev)?;
                    }
                }
                RouteKind::Gtp { tunnel, .. } => {
                    if let Err(m) = GtpEncap::build(tunnel, r.line) {
                        return no(&m);
                    }
                }
                RouteKind::Bpf { via, dev, .. } => self.check_path(r.prefix, *via, dev.as_deref())?,
                RouteKind::Seg6 { encap, dev, .. } => self.check_policy(r, encap, dev.as_deref())?,
                RouteKind::Nhid { id } => {
                    if !self.nhid_routes.contains_key(&(*id, matches!(r.prefix, Prefix::V6(..)))) {
                        return no("a route through a nexthop object the build did not resolve for its family");
                    }
                }
                _ => return no("a route of this kind"),
            }
        }
        Ok(())
    }

    /// Whether the device routes of the main table that `changes` add, replace or
    /// delete can change in place: only while no gateway given without a device was
    /// resolved on one (`onlink_used`), and with no change in the batch that could
    /// resolve one (a build resolves them all after every device route).
    fn check_device_routes(&self, changes: &[RouteChange]) -> Result<(), NeedsBuild> {
        let main = self.fib_of_table(MAIN_TABLE);
        let device_route = |c: &RouteChange| {
            let r = c.spec();
            r.table == MAIN_TABLE
                && (matches!((c, &r.kind), (RouteChange::Add(_), RouteKind::Forward { via: None, dev: Some(_) }))
                    || matches!(
                        main.and_then(|t| self.route_at(t, r.prefix)),
                        Some(Route::Forward(NextHop::OnLink(_)))
                    ))
        };
        if !changes.iter().any(device_route) {
            return Ok(());
        }
        let resolves = |c: &RouteChange| {
            let RouteChange::Add(r) = c else { return false };
            match &r.kind {
                RouteKind::Forward { via: Some(_), dev: None } | RouteKind::Bpf { via: Some(_), dev: None, .. } => true,
                RouteKind::Multipath { paths } => paths.iter().any(|p| p.via.is_some() && p.dev.is_none()),
                RouteKind::Seg6Local { action, .. } => {
                    let p = &action.params;
                    (p.nh6.is_some() || p.nh4.is_some()) && p.oif.is_none()
                }
                _ => false,
            }
        };
        if self.onlink_used || changes.iter().any(resolves) {
            return Err(NeedsBuild(
                "a device route of the main table while a gateway without a device is resolved on one: the tables \
                 are built again"
                    .into(),
            ));
        }
        Ok(())
    }

    /// Whether a path through `via` and/or `dev` can be made in place: a gateway of the
    /// prefix's family on a known device, or without one on a device route of the main
    /// table (as the build resolves it), or a known device.
    fn check_path(&self, prefix: Prefix, via: Option<IpAddr>, dev: Option<&str>) -> Result<(), NeedsBuild> {
        let no = |why: &str| Err(NeedsBuild(format!("{why}: the tables are built again")));
        if dev.is_some_and(|d| self.device_id(d).is_none()) {
            return no("an unknown device");
        }
        match (via, dev) {
            (Some(v), _)
                if matches!((prefix, v), (Prefix::V6(..), IpAddr::V4(_)) | (Prefix::V4(..), IpAddr::V6(_))) =>
            {
                no("a gateway of the other family")
            }
            (Some(v), None) if self.onlink_dev(v).is_none() => no("a gateway not on a connected network"),
            (None, None) => no("a path with neither gateway nor device"),
            _ => Ok(()),
        }
    }

    /// The device of the main table's device route `nh` lies on (the build's
    /// resolution of a gateway given without a device).
    fn onlink_dev(&self, nh: IpAddr) -> Option<DevId> {
        self.onlink.as_ref()?.lookup(nh)
    }

    /// The next hop of a path [`check_path`](Self::check_path) accepted.
    fn incremental_path(&mut self, via: Option<IpAddr>, dev: Option<&str>) -> Result<NextHop, NeedsBuild> {
        let dev = match (dev, via) {
            (Some(d), _) => self.device_id(d),
            (None, Some(v)) => {
                self.onlink_used = true;
                self.onlink_dev(v)
            }
            (None, None) => None,
        };
        match (via, dev) {
            (Some(v), Some(d)) => Ok(NextHop::Adj(self.adjacency_to(d, v))),
            (None, Some(d)) => Ok(NextHop::OnLink(d)),
            _ => Err(NeedsBuild("a path the tables cannot resolve".into())),
        }
    }

    /// The dense index of kernel table `id`.
    pub fn fib_of_table(&self, id: u32) -> Option<usize> {
        self.table_ids.iter().position(|&t| t == id)
    }

    /// The FIB value of a route [`check_incremental`](Self::check_incremental) accepted.
    fn incremental_route(&mut self, r: &RouteSpec) -> Result<Route, NeedsBuild> {
        let dev = |t: &Tables, d: &str| t.device_id(d).ok_or_else(|| NeedsBuild("an unknown device".into()));
        Ok(match &r.kind {
            RouteKind::Forward { via: Some(v), dev: Some(d) } => {
                let d = dev(self, d)?;
                Route::Forward(NextHop::Adj(self.adjacency_to(d, *v)))
            }
            RouteKind::Forward { via: None, dev: Some(d) } => Route::Forward(NextHop::OnLink(dev(self, d)?)),
            RouteKind::Forward { via: Some(v), dev: None } => Route::Forward(self.incremental_path(Some(*v), None)?),
            // As the build: one path is a plain route, more a new group.
            RouteKind::Multipath { paths } => {
                let hops = paths
                    .iter()
                    .map(|p| self.incremental_path(p.via, p.dev.as_deref()))
                    .collect::<Result<Vec<_>, _>>()?;
                if hops.len() == 1 {
                    Route::Forward(hops[0])
                } else {
                    self.groups.push(super::Group::new(hops, paths.iter().map(|p| p.weight.clamp(1, 256)).collect()));
                    Route::Multipath((self.groups.len() - 1) as u32)
                }
            }
            RouteKind::Blackhole => Route::Blackhole,
            RouteKind::Unreachable => Route::Unreachable,
            RouteKind::Seg6 { encap, dev, .. } => self.new_policy(r, encap, dev.as_deref())?,
            // A GTP-U encapsulation, under a retired one's index or a new one.
            RouteKind::Gtp { tunnel, .. } => {
                let e = GtpEncap::build(tunnel, r.line).map_err(NeedsBuild)?;
                match self.gtp_free.pop() {
                    Some(i) if (i as usize) < self.gtp_encaps.len() => {
                        self.gtp_encaps[i as usize] = e;
                        Route::GtpEncap(i)
                    }
                    _ => {
                        self.gtp_encaps.push(e);
                        Route::GtpEncap((self.gtp_encaps.len() - 1) as u32)
                    }
                }
            }
            // LWT BPF programs (loaded when the line was read) on a route through
            // `via`/`dev`, as the build makes one.
            RouteKind::Bpf { bpf, via, dev } => {
                let nh = self.incremental_path(*via, dev.as_deref())?;
                let dev = match nh {
                    NextHop::OnLink(d) => d,
                    NextHop::Adj(i) => self.adjacencies.get(i as usize).map_or(0, |a| a.dev),
                };
                let (prefix, table) = (r.prefix, r.table);
                self.lwts.push(crate::pipeline::lwt_bpf::LwtRoute { prefix, table, bpf: (**bpf).clone(), nh, dev });
                Route::Lwt((self.lwts.len() - 1) as u32)
            }
            RouteKind::Nhid { id } => *self
                .nhid_routes
                .get(&(*id, matches!(r.prefix, Prefix::V6(..))))
                .ok_or_else(|| NeedsBuild("an unknown nexthop object".into()))?,
            _ => return Err(NeedsBuild("a route of this kind".into())),
        })
    }

    /// The adjacency towards `nh` on `dev`: the one the tables have, or a new one
    /// resolved from the known neighbours.
    fn adjacency_to(&mut self, dev: u16, nh: IpAddr) -> u32 {
        if let Some(i) = self.adjacencies.iter().position(|a| a.dev == dev && a.nh == nh) {
            return i as u32;
        }
        let mac = self.devices.get(usize::from(dev)).map_or([0; 6], |d| d.mac);
        let eth = self.neighbours.get(&(dev, neigh_key(nh))).map(|n| eth_addrs(*n, mac));
        self.adjacencies.push(Adjacency { dev, nh, eth });
        (self.adjacencies.len() - 1) as u32
    }

    /// Resolves each policy's first segment again (RFC 8986 §5.1) for the fast path:
    /// the device and Ethernet header its route gives, and the rewrite made with them.
    fn resolve_policies(&mut self) {
        let out: Vec<_> = self
            .policies
            .iter()
            .map(|p| match self.fibs.main().lookup6(&p.first) {
                Some(Route::Forward(nh)) => self.resolve(nh, u128::from_be_bytes(p.first)),
                _ => None,
            })
            .collect();
        self.rewrites = self.policies.iter().zip(&out).map(|(p, o)| Rewrite::of(p, *o)).collect();
        self.policy_out = out;
    }

    /// [`resolve_policies`](Self::resolve_policies) for the policies whose first
    /// segment one of the main-table prefixes `changed` covers:
    /// no other's route changed. Many prefixes: all of them. First, the sources that
    /// are the route's to the first segment are found again (`policy_update.rs`).
    fn resolve_policies_under(&mut self, changed: &[Prefix]) {
        let all = changed.len() > 64;
        let mask = |a: u128, l: u8| a & u128::MAX.checked_shl(128 - u32::from(l.min(128))).unwrap_or(0);
        // (An IPv4 prefix covers no segment: those are IPv6 addresses.)
        let covers = |first: u128| {
            all || changed.iter().any(|p| matches!(*p, Prefix::V6(a, l) if mask(first, l) == mask(u128::from(a), l)))
        };
        let remade = if self.policy_src_routed.is_empty() {
            Vec::new()
        } else {
            self.reroute_sources(|a| covers(u128::from(*a)))
        };
        if all {
            return self.resolve_policies();
        }
        for i in 0..self.policies.len() {
            let Some(p) = self.policies.get(i) else { break };
            let first = u128::from_be_bytes(p.first);
            if !covers(first) && !remade.contains(&(i as u32)) {
                continue;
            }
            let out = match self.fibs.main().lookup6(&p.first) {
                Some(Route::Forward(nh)) => self.resolve(nh, first),
                _ => None,
            };
            let rewrite = Rewrite::of(p, out);
            if let (Some(o), Some(r)) = (self.policy_out.get_mut(i), self.rewrites.get_mut(i)) {
                (*o, *r) = (out, rewrite);
            }
        }
    }
}

/// The LPM key (left-aligned) and length of a prefix.
pub(super) fn lpm_key(p: Prefix) -> (u128, u8) {
    match p {
        Prefix::V6(a, l) => (u128::from(a), l),
        Prefix::V4(a, l) => (u128::from(u32::from(a)) << 96, l),
    }
}

/// Whether `p`/`len` is the connected prefix of one of `addrs` (lengths `plens`).
fn covers6(addrs: &[std::net::Ipv6Addr], plens: &[u8], p: [u8; 16], len: u8) -> bool {
    addrs.iter().zip(plens).any(|(a, &l)| l == len && super::build::mask6(a.octets(), l) == super::build::mask6(p, len))
}

fn covers4(addrs: &[std::net::Ipv4Addr], plens: &[u8], p: [u8; 4], len: u8) -> bool {
    addrs.iter().zip(plens).any(|(a, &l)| l == len && super::build::mask4(a.octets(), l) == super::build::mask4(p, len))
}
