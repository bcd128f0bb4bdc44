//! Building [`Tables`] from a [`RouterSpec`]: validation of the configuration as a whole
//! (devices, keys, next hops, required parameters) and every precomputation the hot
//! path relies on. Either everything is built or nothing is.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use rustc_hash::FxHashMap;

use super::{
    eth_addrs, neigh_key, Adjacency, Device, FastDevs, FastKind, FastSid, Fib, Group, HmacKeys, Hop, NextHop, Policy,
    Rewrite, Route, Sid, SidBuilder, Tables,
};
use crate::behaviour::mobile::gtp_encap::GtpEncap;
use crate::exact::ExactMap;
use crate::hmac::HmacKey;
use crate::lpm::{Lpm, Lpm4, Lpm6};
use crate::packet::DevId;
use crate::spec::{
    DevSel, GtpTunnel, Line, NexthopKind, PathSpec, Prefix, RouteKind, RouterSpec, Seg6Encap, Seg6Mode, SysctlSpec,
    DEFAULT_MTU, MAIN_TABLE,
};

/// A configuration that cannot be built, with the line it came from.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {message}")]
pub struct BuildError {
    pub line: Line,
    pub message: String,
}

fn err<T>(line: Line, message: impl Into<String>) -> Result<T, BuildError> {
    Err(BuildError { line, message: message.into() })
}

/// The deterministic MAC of the `i`-th device (0-based) when the config sets none.
pub fn default_mac(i: usize) -> [u8; 6] {
    [0x02, 0, 0, 0, (i >> 8) as u8, (i + 1) as u8]
}

pub(super) struct Builder<'a> {
    pub(super) spec: &'a RouterSpec,
    devices: Vec<Device>,
    table_ids: Vec<u32>,
    /// Per dense table: IPv6 and IPv4 entries before the LPMs are built.
    routes6: Vec<Vec<([u8; 16], u8, Route)>>,
    routes4: Vec<Vec<([u8; 4], u8, Route)>>,
    adjacencies: Vec<Adjacency>,
    adj_index: FxHashMap<(DevId, u128), u32>,
    neighbours: FxHashMap<(DevId, u128), [u8; 6]>,
    hmac: HmacKeys,
    warnings: Vec<String>,
    groups: Vec<Group>,
    /// Group index of each nexthop-object group already built, by id.
    group_of_id: FxHashMap<(u32, bool), u32>,
    /// The route each nexthop object gave routes of each family ([`Tables::nhid_routes`]).
    nhid_routes: FxHashMap<(u32, bool), Route>,
    multipath_hash: (u8, u8),
    /// End.Limit SIDs' buckets ([`Tables::limiters`]).
    pub(super) limiters: Vec<std::sync::Arc<crate::behaviour::end_limit::Limiter>>,
    /// Indices of `limiters` free to take ([`Tables::limiter_free`]).
    pub(super) limiter_free: Vec<u32>,
    /// A SID's next hop was resolved through a route of the main table
    /// ([`Tables::sid_via_routes`]).
    pub(super) sid_via_routes: bool,
    /// A gateway given without a device was resolved on a device route of the main
    /// table ([`Tables::onlink_used`]).
    pub(super) onlink_used: bool,
}

impl Tables {
    /// Validates `spec` and builds the tables. Returns the tables and warnings (settings
    /// accepted but without effect, as in Linux).
    pub fn build(spec: &RouterSpec) -> Result<(Tables, Vec<String>), BuildError> {
        let mut b = Builder::new(spec);
        b.devices()?;
        b.sysctls()?;
        for k in &spec.hmac_keys {
            b.hmac.keys.insert(k.key_id, HmacKey::new(k.alg, &k.secret));
        }
        for n in &spec.neighs {
            let d = b.dev(&n.dev, n.line)?;
            b.neighbours.insert((d, neigh_key(n.addr)), n.mac);
        }
        b.addresses()?;
        b.tables(b.table_ids.len());
        let tables = b.finish()?;
        Ok((tables, b.warnings))
    }
}

impl<'a> Builder<'a> {
    /// An empty builder for `spec`: the main table only.
    fn new(spec: &'a RouterSpec) -> Builder<'a> {
        Builder {
            spec,
            devices: Vec::new(),
            table_ids: vec![MAIN_TABLE],
            routes6: vec![Vec::new()],
            routes4: vec![Vec::new()],
            adjacencies: Vec::new(),
            adj_index: FxHashMap::default(),
            neighbours: FxHashMap::default(),
            hmac: HmacKeys::default(),
            warnings: Vec::new(),
            groups: Vec::new(),
            group_of_id: FxHashMap::default(),
            nhid_routes: FxHashMap::default(),
            multipath_hash: (0, 0),
            limiters: Vec::new(),
            limiter_free: Vec::new(),
            sid_via_routes: false,
            onlink_used: false,
        }
    }

    /// A builder over the devices, tables, adjacencies and neighbours of built tables
    /// `t` (which lend them until [`give_back`](Self::give_back)), for SIDs built in
    /// place (`sid_update.rs`). `spec` stands for the configuration: one with no routes
    /// resolves no next hop behind a gateway.
    pub(super) fn over(spec: &'a RouterSpec, t: &mut Tables) -> Builder<'a> {
        let adjacencies = std::mem::take(&mut t.adjacencies);
        let mut adj_index = FxHashMap::default();
        for (i, a) in adjacencies.iter().enumerate() {
            adj_index.entry((a.dev, neigh_key(a.nh))).or_insert(i as u32);
        }
        let n = t.table_ids.len();
        Builder {
            devices: std::mem::take(&mut t.devices),
            table_ids: std::mem::take(&mut t.table_ids),
            routes6: vec![Vec::new(); n],
            routes4: vec![Vec::new(); n],
            adjacencies,
            adj_index,
            neighbours: std::mem::take(&mut t.neighbours),
            limiters: std::mem::take(&mut t.limiters),
            limiter_free: std::mem::take(&mut t.limiter_free),
            ..Builder::new(spec)
        }
    }

    /// Returns what [`over`](Self::over) borrowed (with the adjacencies it added).
    pub(super) fn give_back(self, t: &mut Tables) {
        t.devices = self.devices;
        t.table_ids = self.table_ids;
        t.adjacencies = self.adjacencies;
        t.neighbours = self.neighbours;
        t.limiters = self.limiters;
        t.limiter_free = self.limiter_free;
        t.onlink_used |= self.onlink_used;
    }

    pub(super) fn dev(&self, name: &str, line: Line) -> Result<DevId, BuildError> {
        match self.devices.iter().position(|d| d.name == name) {
            Some(i) => Ok(i as DevId),
            None => err(line, format!("unknown device `{name}`")),
        }
    }

    fn devices(&mut self) -> Result<(), BuildError> {
        let mut names: Vec<&str> = self.spec.devices.iter().map(String::as_str).collect();
        let extra = self
            .spec
            .links
            .iter()
            .map(|l| l.dev.as_str())
            .chain(self.spec.addrs.iter().map(|a| a.dev.as_str()))
            .chain(self.spec.neighs.iter().map(|n| n.dev.as_str()));
        for n in extra {
            if !names.contains(&n) {
                names.push(n);
            }
        }
        if names.len() > DevId::MAX as usize {
            return err(0, "too many devices");
        }
        for (i, name) in names.iter().enumerate() {
            let mac = self.spec.links.iter().rev().find(|l| l.dev == *name).map_or(default_mac(i), |l| l.mac);
            let mtu = self.spec.mtus.iter().rev().find(|m| m.dev == *name).map_or(DEFAULT_MTU, |m| m.mtu);
            self.devices.push(Device {
                name: name.to_string(),
                mac,
                seg6_enabled: false,
                require_hmac: 0,
                forwarding6: true,
                forwarding4: true,
                mtu,
                addrs6: Vec::new(),
                addrs4: Vec::new(),
                plens6: Vec::new(),
                plens4: Vec::new(),
            });
        }
        Ok(())
    }

    /// Sysctls, combined as Linux combines them (see docs/config.md).
    fn sysctls(&mut self) -> Result<(), BuildError> {
        let n = self.devices.len();
        let (mut all_seg6, mut dev_seg6) = (false, vec![None; n]);
        let mut dev_hmac = vec![None; n];
        // Linux copies `conf.default` into a device when the device is created: every
        // device sr6 knows exists before its configuration is read (a live router's are
        // the kernel's; offline, a device is created where the file first names it, and
        // the kernel harness creates them all first), so it applies to none.
        let default_ignored = |line: usize, key: &str| {
            format!(
                "line {line}: net.ipv6.conf.default.{key} applies only to devices created afterwards \
                 (as in Linux); every device already exists: set it per device"
            )
        };
        let (mut fwd6, mut fwd4, mut dev_fwd4) = (true, true, vec![None; n]);
        for s in &self.spec.sysctls {
            match s {
                SysctlSpec::Seg6Enabled { line, dev, value } => match dev {
                    DevSel::All => all_seg6 = *value,
                    DevSel::Default => self.warnings.push(default_ignored(*line, "seg6_enabled")),
                    DevSel::Dev(d) => dev_seg6[self.dev(d, *line)? as usize] = Some(*value),
                },
                SysctlSpec::RequireHmac { line, dev, value } => match dev {
                    DevSel::All => self.warnings.push(format!(
                        "line {line}: net.ipv6.conf.all.seg6_require_hmac does not apply to devices \
                         (as in Linux); set it per device"
                    )),
                    DevSel::Default => self.warnings.push(default_ignored(*line, "seg6_require_hmac")),
                    DevSel::Dev(d) => dev_hmac[self.dev(d, *line)? as usize] = Some(*value),
                },
                SysctlSpec::Forwarding6 { line, dev, value } => match dev {
                    DevSel::All => fwd6 = *value,
                    DevSel::Default => {}
                    DevSel::Dev(d) => {
                        self.dev(d, *line)?;
                    }
                },
                SysctlSpec::Forwarding4 { line, dev, value } => match dev {
                    DevSel::All => {
                        fwd4 = *value;
                        dev_fwd4.iter_mut().for_each(|v| *v = None);
                    }
                    DevSel::Default => {}
                    DevSel::Dev(d) => dev_fwd4[self.dev(d, *line)? as usize] = Some(*value),
                },
                SysctlSpec::MultipathHash { v6: true, policy, .. } => self.multipath_hash.0 = *policy,
                SysctlSpec::MultipathHash { v6: false, policy, .. } => self.multipath_hash.1 = *policy,
                SysctlSpec::Ip6tSeg6Args { .. } | SysctlSpec::Ip6tSeg6 { .. } => {}
            }
        }
        for (i, d) in self.devices.iter_mut().enumerate() {
            d.seg6_enabled = all_seg6 && dev_seg6[i].unwrap_or(false);
            d.require_hmac = dev_hmac[i].unwrap_or(0);
            d.forwarding6 = fwd6;
            d.forwarding4 = dev_fwd4[i].unwrap_or(fwd4);
        }
        Ok(())
    }

    pub(super) fn table(&mut self, id: u32) -> usize {
        match self.table_ids.iter().position(|t| *t == id) {
            Some(i) => i,
            None => {
                self.table_ids.push(id);
                self.routes6.push(Vec::new());
                self.routes4.push(Vec::new());
                self.table_ids.len() - 1
            }
        }
    }

    /// Local addresses (/128, /32) and their connected routes, in the main table.
    fn addresses(&mut self) -> Result<(), BuildError> {
        for a in &self.spec.addrs {
            let d = self.dev(&a.dev, a.line)?;
            match a.addr {
                IpAddr::V6(x) => {
                    if a.prefix_len > 128 {
                        return err(a.line, "IPv6 prefix length must be at most 128");
                    }
                    self.devices[d as usize].addrs6.push(x);
                    self.devices[d as usize].plens6.push(a.prefix_len);
                    self.routes6[0].push((x.octets(), 128, Route::Local));
                    if a.prefix_len < 128 {
                        let p = mask6(x.octets(), a.prefix_len);
                        self.routes6[0].push((p, a.prefix_len, Route::Forward(NextHop::OnLink(d))));
                    }
                }
                IpAddr::V4(x) => {
                    if a.prefix_len > 32 {
                        return err(a.line, "IPv4 prefix length must be at most 32");
                    }
                    self.devices[d as usize].addrs4.push(x);
                    self.devices[d as usize].plens4.push(a.prefix_len);
                    self.routes4[0].push((x.octets(), 32, Route::Local));
                    if a.prefix_len < 32 {
                        let p = mask4(x.octets(), a.prefix_len);
                        self.routes4[0].push((p, a.prefix_len, Route::Forward(NextHop::OnLink(d))));
                    }
                }
            }
        }
        Ok(())
    }

    /// Registers every table id the config names, so dense indices are stable.
    fn tables(&mut self, _n: usize) {
        let spec = self.spec;
        for r in &spec.routes {
            self.table(r.table);
            if let RouteKind::Seg6Local { action, .. } = &r.kind {
                if let Some(t) = action.params.table.or(action.params.vrftable) {
                    self.table(t);
                }
            }
        }
    }

    /// An adjacency towards `nh` on `dev` (deduplicated).
    pub(super) fn adjacency(&mut self, dev: DevId, nh: IpAddr) -> u32 {
        let key = (dev, neigh_key(nh));
        if let Some(i) = self.adj_index.get(&key) {
            return *i;
        }
        let eth = self.neighbours.get(&key).map(|mac| eth_addrs(*mac, self.devices[dev as usize].mac));
        self.adjacencies.push(Adjacency { dev, nh, eth });
        let i = (self.adjacencies.len() - 1) as u32;
        self.adj_index.insert(key, i);
        i
    }

    /// Resolves a gateway: with a device, directly; without, through the device routes
    /// of the main table (the connected routes and `dev` routes), as the kernel does.
    pub(super) fn gateway(
        &mut self,
        via: IpAddr,
        dev: Option<DevId>,
        onlink: &OnLinkIndex,
        line: Line,
    ) -> Result<NextHop, BuildError> {
        if let Some(d) = dev {
            return Ok(NextHop::Adj(self.adjacency(d, via)));
        }
        self.onlink_used = true;
        match onlink.lookup(via) {
            Some(d) => Ok(NextHop::Adj(self.adjacency(d, via))),
            None => err(line, format!("next hop {via} is not on a connected network; add `dev DEV`")),
        }
    }

    /// One path of a multipath route or nexthop object: a gateway or a device.
    fn path(
        &mut self,
        prefix: Prefix,
        via: Option<IpAddr>,
        dev: Option<&str>,
        onlink: &OnLinkIndex,
        line: Line,
    ) -> Result<NextHop, BuildError> {
        let dev = match dev {
            Some(d) => Some(self.dev(d, line)?),
            None => None,
        };
        match (via, dev) {
            (Some(v), d) => {
                check_family(prefix, v, line)?;
                self.gateway(v, d, onlink, line)
            }
            (None, Some(d)) => Ok(NextHop::OnLink(d)),
            (None, None) => err(line, "a next hop needs `via NH` or `dev DEV`"),
        }
    }

    /// A route's group of next hops: [`Route::Forward`] for one path.
    fn group(&mut self, hops: Vec<NextHop>, weights: Vec<u16>) -> Route {
        if hops.len() == 1 {
            return Route::Forward(hops[0]);
        }
        self.groups.push(Group::new(hops, weights));
        Route::Multipath((self.groups.len() - 1) as u32)
    }

    /// `nexthop via A dev D weight W nexthop ...`.
    fn multipath(
        &mut self,
        prefix: Prefix,
        paths: &[PathSpec],
        onlink: &OnLinkIndex,
        line: Line,
    ) -> Result<Route, BuildError> {
        if paths.is_empty() {
            return err(line, "a multipath route needs at least one `nexthop`");
        }
        let mut hops = Vec::new();
        for p in paths {
            hops.push(self.path(prefix, p.via, p.dev.as_deref(), onlink, line)?);
        }
        Ok(self.group(hops, paths.iter().map(|p| p.weight.clamp(1, 256)).collect()))
    }

    /// `nhid N`: nexthop object N, a single next hop, a blackhole or a group (as the
    /// kernel: members are single next hops of the route's family).
    fn nhid(&mut self, prefix: Prefix, id: u32, onlink: &OnLinkIndex, line: Line) -> Result<Route, BuildError> {
        let spec = self.spec;
        let find = |id: u32| spec.nexthops.iter().find(|n| n.id == id);
        let Some(nh) = find(id) else { return err(line, format!("nexthop id {id} does not exist")) };
        let v6_route = matches!(prefix, Prefix::V6(..));
        let single = |b: &mut Self, k: &NexthopKind, what: u32| -> Result<NextHop, BuildError> {
            match k {
                NexthopKind::Single { via, dev, v6 } => {
                    if *v6 != v6_route {
                        let (r, n) = if v6_route { ("an IPv6", "IPv4") } else { ("an IPv4", "IPv6") };
                        return err(line, format!("{r} route cannot use nexthop {what}, an {n} nexthop"));
                    }
                    b.path(prefix, *via, Some(dev), onlink, line)
                }
                NexthopKind::Blackhole { .. } => {
                    err(line, format!("nexthop {what} is a blackhole; a group cannot hold it"))
                }
                NexthopKind::Group { .. } => err(line, format!("nexthop {what} is a group; groups do not nest")),
            }
        };
        match &nh.kind {
            NexthopKind::Blackhole { v6 } if *v6 != v6_route => err(
                line,
                format!("nexthop {id} is an {} blackhole; the route is not", if *v6 { "IPv6" } else { "IPv4" }),
            ),
            NexthopKind::Blackhole { .. } => Ok(Route::Blackhole),
            k @ NexthopKind::Single { .. } => Ok(Route::Forward(single(self, k, id)?)),
            NexthopKind::Group { members } => {
                if let Some(g) = self.group_of_id.get(&(id, v6_route)) {
                    return Ok(Route::Multipath(*g));
                }
                let mut hops = Vec::new();
                for (m, _) in members {
                    let Some(mn) = find(*m) else {
                        return err(line, format!("nexthop {m}, a member of group {id}, does not exist"));
                    };
                    hops.push(single(self, &mn.kind, *m)?);
                }
                if hops.is_empty() {
                    return err(line, format!("nexthop group {id} is empty"));
                }
                let r = self.group(hops, members.iter().map(|m| m.1.clamp(1, 256)).collect());
                if let Route::Multipath(g) = r {
                    self.group_of_id.insert((id, v6_route), g);
                }
                Ok(r)
            }
        }
    }

    fn finish(&mut self) -> Result<Tables, BuildError> {
        let spec = self.spec;
        // Device routes of the main table, to resolve gateways given without a device.
        let mut onlink = OnLinkIndex::default();
        for (p, l, r) in &self.routes6[0] {
            if let Route::Forward(NextHop::OnLink(d)) = r {
                onlink.v6.push((*p, *l, *d));
            }
        }
        for (p, l, r) in &self.routes4[0] {
            if let Route::Forward(NextHop::OnLink(d)) = r {
                onlink.v4.push((*p, *l, *d));
            }
        }
        for r in &spec.routes {
            if let (RouteKind::Forward { via: None, dev: Some(d) }, Prefix::V6(..) | Prefix::V4(..)) =
                (&r.kind, r.prefix)
            {
                let d = self.dev(d, r.line)?;
                match r.prefix {
                    Prefix::V6(a, l) if r.table == MAIN_TABLE => onlink.v6.push((mask6(a.octets(), l), l, d)),
                    Prefix::V4(a, l) if r.table == MAIN_TABLE => onlink.v4.push((mask4(a.octets(), l), l, d)),
                    _ => {}
                }
            }
        }
        let onlink = onlink.build();

        let mut sids: Vec<Sid> = Vec::new();
        // Policies are built last (their source address needs the FIB); keep their specs.
        let mut policy_specs: Vec<PolicySpec> = Vec::new();
        let mut gtp_encaps = Vec::new();
        let mut lwts = Vec::new();
        for r in &spec.routes {
            let t = self.table(r.table);
            let route = match &r.kind {
                RouteKind::Forward { via, dev } => {
                    let dev = match dev {
                        Some(d) => Some(self.dev(d, r.line)?),
                        None => None,
                    };
                    match (via, dev) {
                        (Some(v), d) => {
                            check_family(r.prefix, *v, r.line)?;
                            self.gateway(*v, d, &onlink, r.line)?
                        }
                        (None, Some(d)) => NextHop::OnLink(d),
                        (None, None) => return err(r.line, "a route needs `via NH` or `dev DEV`"),
                    }
                }
                .into(),
                RouteKind::Blackhole => Route::Blackhole,
                RouteKind::Unreachable => Route::Unreachable,
                RouteKind::Multipath { paths } => self.multipath(r.prefix, paths, &onlink, r.line)?,
                RouteKind::Nhid { id } => {
                    let route = self.nhid(r.prefix, *id, &onlink, r.line)?;
                    self.nhid_routes.insert((*id, matches!(r.prefix, Prefix::V6(..))), route);
                    route
                }
                RouteKind::Seg6 { encap, dev, .. } => {
                    let dev = match dev {
                        Some(d) => Some(self.dev(d, r.line)?),
                        None => None,
                    };
                    if matches!(r.prefix, Prefix::V4(..))
                        && matches!(encap.mode, Seg6Mode::Inline | Seg6Mode::InlineRed)
                    {
                        return err(
                            r.line,
                            "mode inline cannot apply to an IPv4 prefix (RFC 8986 §5: insertion needs an IPv6 header)",
                        );
                    }
                    policy_specs.push((encap.clone(), dev, r.line, None));
                    Route::Policy((policy_specs.len() - 1) as u32)
                }
                RouteKind::Seg6Local { action, dev } => {
                    let dev = match dev {
                        Some(d) => Some(self.dev(d, r.line)?),
                        None => None,
                    };
                    // An IPv6 prefix, or an IPv4 one for H.M.GTP4.D (RFC 9433 §6.7).
                    if let Err((m, _)) = crate::behaviour::mobile::check_route(action, &r.prefix) {
                        return err(r.line, m);
                    }
                    let b = action.behaviour;
                    // The parser checks these too; the builder must not trust its caller.
                    if let Some(p) = b.required.iter().find(|p| !p.is_set(&action.params)) {
                        return err(r.line, format!("{} requires `{}` ({})", b.keyword, p.keyword(), p.value_hint()));
                    }
                    let mut sb = SidBuilder {
                        b: self,
                        onlink: &onlink,
                        policies: &mut policy_specs,
                        route_dev: dev,
                        prefix: r.prefix,
                        line: r.line,
                    };
                    let state = (b.build)(&mut sb, action)?;
                    sids.push(Sid { prefix: r.prefix, behaviour: b, action: (**action).clone(), state, line: r.line });
                    Route::Sid((sids.len() - 1) as u32)
                }
                // LWT BPF programs (pipeline::lwt_bpf) on a route through `via`/`dev`.
                RouteKind::Bpf { bpf, via, dev } => {
                    let dev = match dev {
                        Some(d) => Some(self.dev(d, r.line)?),
                        None => None,
                    };
                    let nh = match (via, dev) {
                        (Some(v), d) => {
                            check_family(r.prefix, *v, r.line)?;
                            self.gateway(*v, d, &onlink, r.line)?
                        }
                        (None, Some(d)) => NextHop::OnLink(d),
                        (None, None) => return err(r.line, "a route needs `via NH` or `dev DEV`"),
                    };
                    let dev = match nh {
                        NextHop::OnLink(d) => d,
                        NextHop::Adj(i) => self.adjacencies.get(i as usize).map_or(0, |a| a.dev),
                    };
                    let (prefix, table) = (r.prefix, r.table);
                    lwts.push(crate::pipeline::lwt_bpf::LwtRoute { prefix, table, bpf: (**bpf).clone(), nh, dev });
                    Route::Lwt((lwts.len() - 1) as u32)
                }
                // GTP-U tunnels (behaviour::mobile::gtp_encap, gtp_decap).
                RouteKind::Gtp { tunnel, dev, .. } => {
                    let dev = match dev {
                        Some(d) => Some(self.dev(d, r.line)?),
                        None => None,
                    };
                    match tunnel {
                        GtpTunnel::Decap { table } => {
                            let action = crate::behaviour::mobile::gtp_decap::action(*table);
                            let mut sb = SidBuilder {
                                b: self,
                                onlink: &onlink,
                                policies: &mut policy_specs,
                                route_dev: dev,
                                prefix: r.prefix,
                                line: r.line,
                            };
                            let state = (action.behaviour.build)(&mut sb, &action)?;
                            sids.push(Sid {
                                prefix: r.prefix,
                                behaviour: action.behaviour,
                                action,
                                state,
                                line: r.line,
                            });
                            Route::Sid((sids.len() - 1) as u32)
                        }
                        GtpTunnel::Encap { .. } => {
                            let e =
                                GtpEncap::build(tunnel, r.line).map_err(|m| BuildError { line: r.line, message: m })?;
                            gtp_encaps.push(e);
                            Route::GtpEncap((gtp_encaps.len() - 1) as u32)
                        }
                    }
                }
            };
            match r.prefix {
                Prefix::V6(a, l) => self.routes6[t].push((mask6(a.octets(), l), l, route)),
                Prefix::V4(a, l) => self.routes4[t].push((mask4(a.octets(), l), l, route)),
            }
        }
        // The route each nexthop object no route uses yet would give one of each family,
        // where it gives one: the first route through it is then made in place
        // (`update.rs`), as zebra adds routes through the objects it made just before.
        // (An object of the other family, or one that does not resolve, gives none: a
        // route through it builds, and the build says why.)
        for n in &spec.nexthops {
            for v6 in [true, false] {
                if self.nhid_routes.contains_key(&(n.id, v6)) {
                    continue;
                }
                let any = if v6 { Prefix::V6(Ipv6Addr::UNSPECIFIED, 0) } else { Prefix::V4(Ipv4Addr::UNSPECIFIED, 0) };
                if let Ok(route) = self.nhid(any, n.id, &onlink, n.line) {
                    self.nhid_routes.insert((n.id, v6), route);
                }
            }
        }

        // Local addresses win over routes of the same /128 (the kernel's local table
        // is consulted first): put them last so they replace.
        let mut fibs = Vec::new();
        for t in 0..self.table_ids.len() {
            let mut r6 = std::mem::take(&mut self.routes6[t]);
            let mut r4 = std::mem::take(&mut self.routes4[t]);
            r6.sort_by_key(|e| (e.1, matches!(e.2, Route::Local)));
            r4.sort_by_key(|e| (e.1, matches!(e.2, Route::Local)));
            let (exact6, rest6): (Vec<_>, Vec<_>) = r6.into_iter().partition(|e| e.1 == 128);
            let (exact4, rest4): (Vec<_>, Vec<_>) = r4.into_iter().partition(|e| e.1 == 32);
            fibs.push(Fib::new(
                ExactMap::build(exact6.into_iter().map(|(a, _, r)| (u128::from_be_bytes(a), r)).collect()),
                Lpm::build(rest6),
                ExactMap::build(exact4.into_iter().map(|(a, _, r)| (u128::from(u32::from_be_bytes(a)), r)).collect()),
                Lpm::build(rest4),
            ));
        }

        let mut tables = Tables {
            fast_devs: FastDevs::of(&self.devices),
            fast_max_len: 0,
            devices: std::mem::take(&mut self.devices),
            fibs: super::Fibs::new(fibs),
            table_ids: self.table_ids.clone(),
            // Past the ids the fast path can count (`counters::FIXED`): kind None.
            fast_sids: sids.iter().enumerate().map(|(i, s)| fast_sid_at(s, i)).collect(),
            sids,
            policies: Vec::new(),
            policy_free: Vec::new(),
            policy_out: Vec::new(),
            rewrites: Vec::new(),
            adjacencies: std::mem::take(&mut self.adjacencies),
            groups: std::mem::take(&mut self.groups),
            nhid_routes: std::mem::take(&mut self.nhid_routes),
            multipath_hash6: self.multipath_hash.0,
            multipath_hash4: self.multipath_hash.1,
            neighbours: std::mem::take(&mut self.neighbours),
            hmac: std::mem::take(&mut self.hmac),
            tunsrc: spec.tunsrc.map(|t| t.0),
            first_addr6: spec.addrs.iter().find_map(|a| match a.addr {
                IpAddr::V6(x) => Some(x),
                IpAddr::V4(_) => None,
            }),
            bpf_encap_src: Vec::new(),
            bcast4: self.spec.addrs.iter().filter_map(bcast4).collect(),
            local4_filter: self.spec.addrs.iter().fold(0, |f, a| match a.addr {
                IpAddr::V4(x) => f | super::local4_bit(u32::from(x)),
                IpAddr::V6(_) => f,
            }),
            proxies: Vec::new(),
            proxy_in: Vec::new(),
            limiters: std::mem::take(&mut self.limiters),
            limiter_free: Vec::new(),
            gtp_encaps,
            gtp_free: Vec::new(),
            lwts,
            resolve_neighbours: false,
            rules: super::rules::Rules::default(),
            rules_fib6: u32::MAX,
            rules_fib4: u32::MAX,
            firewall: None,
            ids: None,
            onlink: Some(Box::new(onlink)),
            sid_via_routes: self.sid_via_routes,
            onlink_used: self.onlink_used,
            policy_src_routed: Vec::new(),
        };
        tables.rules = super::rules::Rules::build(spec, &tables)?;
        tables.bpf_encap_src =
            (0..=tables.devices.len()).map(|d| crate::behaviour::end_bpf::encap_src_of(&tables, d as DevId)).collect();
        let with_rules = |r: &[super::rules::Rule]| if r.is_empty() { u32::MAX } else { Tables::MAIN };
        (tables.rules_fib6, tables.rules_fib4) = (with_rules(&tables.rules.v6), with_rules(&tables.rules.v4));
        if !tables.rules.v6.is_empty() || !tables.rules.v4.is_empty() {
            // A SID naming the main table looks there, past the rules (the fast path,
            // which reads the table index too, takes no frame with rules).
            for s in tables.sids.iter_mut() {
                let named = s.action.params.table.or(s.action.params.vrftable);
                if s.state.table == Tables::MAIN && named == Some(MAIN_TABLE) {
                    s.state.table = Tables::MAIN_BY_NAME;
                }
            }
        }
        for (enc, dev, line, src) in policy_specs {
            let key = match enc.hmac {
                Some(id) => match tables.hmac.keys.get(&id) {
                    Some(k) => Some((id, k)),
                    None => {
                        return err(
                            line,
                            format!("HMAC key id {id} is not defined (add `ip sr hmac set {id} sha256 SECRET`)"),
                        )
                    }
                },
                None => None,
            };
            if src.is_none() && tables.tunsrc.is_none() && dev.is_none() {
                tables.policy_src_routed.push(tables.policies.len() as u32);
            }
            let src = src.or(tables.tunsrc).unwrap_or_else(|| tunnel_source(&tables, dev, &enc.segs[0]));
            let p = Policy::with_csid(enc.mode, enc.csid, &enc.segs, key, src, line)
                .map_err(|m| BuildError { line, message: m })?;
            tables.policies.push(p);
        }
        // The first segment of a policy is fixed and so are the tables: resolve it once
        // for the fast path (RFC 8986 §5.1: the packet is then forwarded to it).
        let policy_out = tables
            .policies
            .iter()
            .map(|p| match tables.fibs.first().and_then(|f| f.lookup6(&p.first)) {
                Some(Route::Forward(nh)) => tables.resolve(nh, u128::from_be_bytes(p.first)),
                _ => None,
            })
            .collect();
        tables.policy_out = policy_out;
        // The fast path reads a /128 SID's FastSid from the exact-table slot it finds.
        let fast_sids = &tables.fast_sids;
        let sid_hops = csid_hops(&tables.sids, fast_sids);
        for fib in tables.fibs.iter_mut() {
            fib.set_hops(&tables.adjacencies, &sid_hops);
            fib.set_words(|r| match r {
                Route::Sid(i) => fast_sids.get(i as usize).copied().unwrap_or(FastSid::NO).pack(i),
                _ => FastSid::NOT_SID,
            });
        }
        crate::behaviour::proxy::build(&mut tables)?;
        tables.rewrites = tables.policies.iter().zip(&tables.policy_out).map(|(p, o)| Rewrite::of(p, *o)).collect();
        tables.fast_max_len = super::fast_max_len(&tables.devices, &tables.policies);
        // Rules can send any packet elsewhere than the main table the fast path reads:
        // with rules, it takes no frame (its length test declines every one), so that
        // without them it tests nothing more.
        if !tables.rules.v6.is_empty() || !tables.rules.v4.is_empty() {
            tables.fast_max_len = 0;
        }
        // The firewall, likewise: with one, the fast path takes no frame.
        let arg_bits = spec.sysctls.iter().rev().find_map(|s| match s {
            SysctlSpec::Ip6tSeg6Args { bits, .. } => Some(*bits),
            _ => None,
        });
        let inner = spec.sysctls.iter().rev().find_map(|s| match s {
            SysctlSpec::Ip6tSeg6 { on, .. } => Some(*on),
            _ => None,
        });
        tables.firewall = crate::firewall::Firewall::build(&spec.firewall, &tables.devices, arg_bits.unwrap_or(0))
            .map_err(|(line, message)| BuildError { line, message })?
            .map(|mut f| {
                f.inner = inner.unwrap_or(false);
                Box::new(f)
            });
        if tables.firewall.is_some() {
            tables.fast_max_len = 0;
        }
        // The IDS, likewise (docs/ids.md).
        if let Some(s) = &spec.ids {
            let ids = crate::ids::Ids::build(s).map_err(|message| BuildError { line: s.line, message })?;
            tables.ids = Some(Box::new(ids));
            tables.fast_max_len = 0;
        }
        Ok(tables)
    }
}

impl From<NextHop> for Route {
    fn from(n: NextHop) -> Route {
        Route::Forward(n)
    }
}

/// The route lookup's [`Hop`] of each SID, by index: for a NEXT-C-SID End, End.T or
/// End.X the fast path handles, the lengths and its word ([`Hop::csid`]) — when an
/// argument can follow the C-SID (`lblen + nflen < 128`; otherwise the SID never shifts
/// and is an ordinary one) —, else none.
pub(super) fn csid_hops(sids: &[Sid], fast_sids: &[FastSid]) -> Vec<Hop> {
    sids.iter().zip(fast_sids).enumerate().map(|(i, (s, f))| csid_hop(s, *f, i)).collect()
}

/// [`csid_hops`] of SID `s`, index `i`, fast step `f`.
pub(super) fn csid_hop(s: &Sid, f: FastSid, i: usize) -> Hop {
    match s.action.flavors.next_csid {
        // (A fast kind only for an index under `counters::FIXED`.)
        Some(c) if f.is(FastKind::EndCsid) || f.is(FastKind::EndXCsid) => Hop::csid(f, i as u16, c).unwrap_or_default(),
        _ => Hop::default(),
    }
}

fn check_family(p: Prefix, via: IpAddr, line: Line) -> Result<(), BuildError> {
    match (p, via) {
        (Prefix::V6(..), IpAddr::V6(_)) | (Prefix::V4(..), IpAddr::V4(_)) => Ok(()),
        _ => err(line, "the gateway's address family differs from the prefix's"),
    }
}

/// A policy to build once the FIB exists: its segments, the `dev` of the route that
/// carries it, its line, and its outer source if the configuration gives it (End.AS's
/// `src`).
pub(super) type PolicySpec = (Seg6Encap, Option<DevId>, Line, Option<Ipv6Addr>);

/// The outer source of an encapsulation without tunsrc. Linux (`set_tun_src`) selects
/// it on the device of the route carrying the policy (the `dev` of the `encap seg6` or
/// `seg6local` line); sr6 takes that device's first global address, else (no `dev`) the
/// device the route to the first segment leaves by, else the first address configured.
pub(super) fn tunnel_source(t: &Tables, route_dev: Option<DevId>, first: &Ipv6Addr) -> Ipv6Addr {
    let dev = route_dev.or_else(|| match t.fibs[0].lookup6(&first.octets()) {
        Some(Route::Forward(NextHop::OnLink(d))) => Some(d),
        Some(Route::Forward(NextHop::Adj(a))) => t.adjacencies.get(a as usize).map(|a| a.dev),
        _ => None,
    });
    dev.and_then(|d| t.devices[d as usize].addrs6.iter().find(|a| !super::is_link_local(a)).copied())
        .or(t.first_addr6)
        .unwrap_or(Ipv6Addr::UNSPECIFIED)
}

/// Device routes of the main table, for resolving gateways. The tables keep the one
/// they were built with, for the routes and SIDs made in place; a device route of the
/// main table changed in place changes it too ([`set`](Self::set)), and is taken in
/// place only while no gateway was resolved through it ([`Tables::onlink_used`]).
#[derive(Debug, Default)]
pub(super) struct OnLinkIndex {
    v6: Vec<([u8; 16], u8, DevId)>,
    v4: Vec<([u8; 4], u8, DevId)>,
    lpm6: Lpm6<DevId>,
    lpm4: Lpm4<DevId>,
}

impl OnLinkIndex {
    fn build(mut self) -> Self {
        self.lpm6 = Lpm6::build(std::mem::take(&mut self.v6));
        self.lpm4 = Lpm4::build(std::mem::take(&mut self.v4));
        self
    }
    /// Makes `prefix` a device route through `dev`, or (`None`) no device route.
    pub(super) fn set(&mut self, prefix: Prefix, dev: Option<DevId>) {
        let (key, len) = super::update::lpm_key(prefix);
        match (prefix, dev) {
            (Prefix::V6(..), Some(d)) => drop(self.lpm6.insert(key, len, d, 0)),
            (Prefix::V4(..), Some(d)) => drop(self.lpm4.insert(key, len, d, 0)),
            (Prefix::V6(..), None) => drop(self.lpm6.remove(key, len)),
            (Prefix::V4(..), None) => drop(self.lpm4.remove(key, len)),
        }
    }

    pub(super) fn lookup(&self, a: IpAddr) -> Option<DevId> {
        match a {
            IpAddr::V6(a) => self.lpm6.lookup(&a.octets()).copied(),
            IpAddr::V4(a) => self.lpm4.lookup(&a.octets()).copied(),
        }
    }
}

pub(crate) fn mask6(mut a: [u8; 16], len: u8) -> [u8; 16] {
    for (i, b) in a.iter_mut().enumerate() {
        let bits = (len as usize).saturating_sub(i * 8).min(8);
        *b &= (0xFF00u16 >> bits) as u8;
    }
    a
}

pub(crate) fn mask4(mut a: [u8; 4], len: u8) -> [u8; 4] {
    for (i, b) in a.iter_mut().enumerate() {
        let bits = (len as usize).saturating_sub(i * 8).min(8);
        *b &= (0xFF00u16 >> bits) as u8;
    }
    a
}

/// What the fast path does with SID `s`: what its behaviour's build chose, unless the
/// SID could match a multicast or link-local destination or ::1. The general path
/// delivers the first two to the host and drops the last before any lookup; the fast
/// path tests that only for destinations that are not SIDs, so such a SID stays off it.
pub(super) fn fast_sid_of(s: &Sid) -> FastSid {
    if let Prefix::V6(a, len) = s.prefix {
        let a = u128::from(a);
        if meets(a, len, 0xfe80 << 112, 10) || meets(a, len, 0xff << 120, 8) || meets(a, len, 1, 128) {
            return FastSid::NO;
        }
    }
    s.state.fast
}

/// [`fast_sid_of`] SID `s` at index `i`: kind None past the ids the fast path can
/// count (`counters::FIXED`).
pub(super) fn fast_sid_at(s: &Sid, i: usize) -> FastSid {
    if i < crate::counters::FIXED {
        fast_sid_of(s)
    } else {
        FastSid::NO
    }
}

/// Whether the IPv6 prefixes `a/la` and `b/lb` have an address in common (one holds
/// the other: their first min(la, lb) bits agree).
fn meets(a: u128, la: u8, b: u128, lb: u8) -> bool {
    let l = u32::from(la.min(lb)).min(128);
    l == 0 || (a ^ b) >> (128 - l) == 0
}

/// The directed broadcast address of an IPv4 address's subnet, for prefixes shorter
/// than /31 (the kernel's `fib_add_ifaddr`).
fn bcast4(a: &crate::spec::AddrSpec) -> Option<u32> {
    match a.addr {
        IpAddr::V4(x) if a.prefix_len < 31 => Some(u32::from(x) | (u32::MAX >> a.prefix_len)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks() {
        assert_eq!(mask4([10, 1, 2, 3], 8), [10, 0, 0, 0]);
        assert_eq!(mask4([10, 255, 2, 3], 12), [10, 240, 0, 0]);
        assert_eq!(mask4([10, 1, 2, 3], 32), [10, 1, 2, 3]);
        assert_eq!(mask4([10, 1, 2, 3], 0), [0, 0, 0, 0]);
        assert_eq!(mask6([0xff; 16], 65)[8], 0x80);
    }

    #[test]
    fn default_macs_are_locally_administered_and_distinct() {
        assert_eq!(default_mac(0), [2, 0, 0, 0, 0, 1]);
        assert_ne!(default_mac(1), default_mac(2));
    }
}
