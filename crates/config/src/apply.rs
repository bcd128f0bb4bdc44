//! Applying a parsed command to the spec: checks first, then changes, so a refused
//! command leaves the spec as it was.

use rustc_hash::FxHashMap as HashMap;
use std::net::IpAddr;

use sr6_core::spec::{LinkSpec, MtuSpec, NexthopKind, PathSpec, Prefix, RouteKind, RouteSpec, RouterSpec};

use crate::cmd::{Cmd, Item};
use crate::route::Verb;
use crate::value::fmt_prefix;
use crate::PErr;

/// Record `dev` in `spec.devices` unless it is already there (devices are kept in order
/// of first mention).
pub fn note_dev(spec: &mut RouterSpec, dev: &str) {
    if !spec.devices.iter().any(|d| d == dev) {
        spec.devices.push(dev.to_string());
    }
}

/// A change a command made to `spec.routes`, with what undoes it
/// ([`parse_line_logged`](crate::parse_line_logged)) and what it put in place.
#[derive(Debug, Clone, PartialEq)]
pub enum RouteEdit {
    /// The route at index `at` was replaced (by one of the same table and prefix).
    Replaced { at: usize, old: RouteSpec, new: RouteSpec },
    /// A route was pushed at the end.
    Pushed(RouteSpec),
    /// The route at index `at` was removed, and the last route put in its place.
    Removed { at: usize, old: RouteSpec },
}

impl RouteEdit {
    /// Puts `routes` and their `index` back as they were before this edit (edits are
    /// undone last first).
    pub fn undo(self, routes: &mut Vec<RouteSpec>, index: &mut RouteIndex) {
        match self {
            RouteEdit::Replaced { at, old, .. } => {
                if let Some(x) = routes.get_mut(at) {
                    *x = old;
                }
            }
            RouteEdit::Pushed(new) => {
                routes.pop();
                index.0.remove(&(new.table, new.prefix));
            }
            // (Removed by a swap with the last route, which goes back to the end.)
            RouteEdit::Removed { at, old } => {
                index.0.insert((old.table, old.prefix), at);
                if at < routes.len() {
                    let moved = std::mem::replace(&mut routes[at], old);
                    index.0.insert((moved.table, moved.prefix), routes.len());
                    routes.push(moved);
                } else {
                    routes.push(old);
                }
            }
        }
    }

    /// Whether the edit left the routes as they were (a route replaced by an equal one).
    pub fn unchanged(&self) -> bool {
        matches!(self, RouteEdit::Replaced { old, new, .. } if old == new)
    }

    /// The route it took away and the one it put in place, either may be none.
    pub fn before_after(&self) -> (Option<&RouteSpec>, Option<&RouteSpec>) {
        match self {
            RouteEdit::Replaced { old, new, .. } => (Some(old), Some(new)),
            RouteEdit::Pushed(new) => (None, Some(new)),
            RouteEdit::Removed { old, .. } => (Some(old), None),
        }
    }
}

/// Where each route of a configuration sits in `spec.routes`, by table and prefix: kept
/// beside a configuration that takes one command at a time
/// ([`parse_line_logged`](crate::parse_line_logged)), so that finding a command's route
/// costs the same in a full table as in an empty one.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RouteIndex(pub(crate) HashMap<(u32, Prefix), usize>);

impl RouteIndex {
    /// The index of `spec`'s routes.
    pub fn of(spec: &RouterSpec) -> RouteIndex {
        RouteIndex(spec.routes.iter().enumerate().map(|(i, r)| ((r.table, r.prefix), i)).collect())
    }

    /// Whether it may be `spec`'s: as many routes (an index of another configuration
    /// is rebuilt, not trusted).
    pub fn fits(&self, spec: &RouterSpec) -> bool {
        self.0.len() == spec.routes.len()
    }

    /// Where the route of `table` and `prefix` sits.
    pub fn get(&self, table: u32, prefix: Prefix) -> Option<usize> {
        self.0.get(&(table, prefix)).copied()
    }

    /// Pushes `r` at the end of `routes`, the list this indexes (its table and prefix
    /// not in it yet).
    pub fn push(&mut self, routes: &mut Vec<RouteSpec>, r: RouteSpec) {
        self.0.insert((r.table, r.prefix), routes.len());
        routes.push(r);
    }

    /// Removes the route at `at` from `routes`, the list this indexes: the last one
    /// takes its place.
    pub fn swap_remove(&mut self, routes: &mut Vec<RouteSpec>, at: usize) -> RouteSpec {
        let old = routes.swap_remove(at);
        self.0.remove(&(old.table, old.prefix));
        if let Some(m) = routes.get(at) {
            self.0.insert((m.table, m.prefix), at);
        }
        old
    }
}

/// Where each route, address and neighbour of a spec sits, so that applying a file
/// of N lines costs O(N), not O(N^2) (a 100,000-route file must load in a blink).
#[derive(Default)]
pub(crate) struct Index {
    /// By table and prefix; `None`: not indexed, found by a scan ([`Index::scanning`]).
    pub(crate) routes: Option<HashMap<(u32, Prefix), usize>>,
    addrs: HashMap<(String, IpAddr), usize>,
    neighs: HashMap<(String, IpAddr), usize>,
    /// The changes made to the routes, in order, if they are recorded.
    pub(crate) edits: Option<Vec<RouteEdit>>,
}

impl Index {
    /// The index of an existing spec.
    pub(crate) fn of(spec: &RouterSpec) -> Index {
        Index { routes: Some(RouteIndex::of(spec).0), ..Index::scanning(spec) }
    }

    /// An index for one command: its routes are found by a scan, which for one lookup
    /// costs less than hashing every route of a full table (`sr6 ctl route add`).
    pub(crate) fn scanning(spec: &RouterSpec) -> Index {
        Index {
            routes: None,
            addrs: spec.addrs.iter().enumerate().map(|(i, a)| ((a.dev.clone(), a.addr), i)).collect(),
            neighs: spec.neighs.iter().enumerate().map(|(i, n)| ((n.dev.clone(), n.addr), i)).collect(),
            edits: None,
        }
    }

    /// An index for one command with `routes`, the spec's route index (taken out of it
    /// meanwhile), recording every change made to the routes.
    pub(crate) fn logging(spec: &RouterSpec, routes: &mut RouteIndex) -> Index {
        Index { routes: Some(std::mem::take(&mut routes.0)), edits: Some(Vec::new()), ..Index::scanning(spec) }
    }

    fn edited(&mut self, e: RouteEdit) {
        if let Some(v) = &mut self.edits {
            v.push(e);
        }
    }

    /// Where the route of `table` and `prefix` sits in `spec.routes`.
    fn route(&self, spec: &RouterSpec, table: u32, prefix: Prefix) -> Option<usize> {
        match &self.routes {
            Some(m) => m.get(&(table, prefix)).copied(),
            None => spec.routes.iter().position(|r| r.table == table && r.prefix == prefix),
        }
    }

    /// A route was pushed at the end of `spec.routes` (index `i`).
    fn route_pushed(&mut self, table: u32, prefix: Prefix, i: usize) {
        if let Some(m) = &mut self.routes {
            m.insert((table, prefix), i);
        }
    }

    /// The route at index `i` was removed, and `moved` (the last one's table and
    /// prefix, if it was not the last) put in its place.
    fn route_removed(&mut self, table: u32, prefix: Prefix, i: usize, moved: Option<(u32, Prefix)>) {
        if let Some(m) = &mut self.routes {
            m.remove(&(table, prefix));
            if let Some(k) = moved {
                m.insert(k, i);
            }
        }
    }
}

/// The paths of a plain or multipath route, for `append`.
fn paths_of(k: &RouteKind) -> Option<Vec<PathSpec>> {
    match k {
        RouteKind::Forward { via, dev } => Some(vec![PathSpec { via: *via, dev: dev.clone(), weight: 1 }]),
        RouteKind::Multipath { paths } => Some(paths.clone()),
        _ => None,
    }
}

pub(crate) fn commit(spec: &mut RouterSpec, idx: &mut Index, cmd: Cmd) -> Result<(), PErr> {
    // Checks: nothing below may fail once the first change is made.
    let mut cmd = cmd;
    if let Item::Route { spec: r, at, .. } = &cmd.item {
        if let RouteKind::Nhid { id } = r.kind {
            let find = |id: u32| spec.nexthops.iter().find(|n| n.id == id).map(|n| &n.kind);
            let Some(k) = find(id) else {
                return Err(PErr::at(at, format!("nexthop id {id} does not exist"))
                    .exp("an id given to `ip nexthop add` on an earlier line"));
            };
            // The family of a single or blackhole nexthop, or of a group's members.
            let fam = |k: &NexthopKind| match k {
                NexthopKind::Single { v6, .. } | NexthopKind::Blackhole { v6 } => Some(*v6),
                NexthopKind::Group { .. } => None,
            };
            let fams: Vec<bool> = match k {
                NexthopKind::Group { members } => members.iter().filter_map(|m| find(m.0).and_then(fam)).collect(),
                _ => fam(k).into_iter().collect(),
            };
            let v6 = matches!(r.prefix, Prefix::V6(..));
            if fams.iter().any(|f| *f != v6) {
                let (rf, nf) = if v6 { ("an IPv6", "IPv4") } else { ("an IPv4", "IPv6") };
                return Err(PErr::at(
                    at,
                    format!("{rf} route cannot use nexthop {id}: it is (or holds) an {nf} nexthop"),
                )
                .exp(format!(
                    "a nexthop of the route's family (ip {} nexthop add ...)",
                    if v6 { "-6" } else { "-4" }
                )));
            }
        }
    }
    if let Item::Route { spec: r, verb: Verb::Append, at } = &mut cmd.item {
        // IPv6 (as the kernel): appending a path to a route makes it multipath.
        if let Some(old) = idx.route(spec, r.table, r.prefix).and_then(|i| spec.routes.get(i)) {
            match (paths_of(&old.kind), paths_of(&r.kind), r.prefix) {
                (Some(mut a), Some(b), Prefix::V6(..)) => {
                    if let Some(x) = b.iter().find(|x| a.iter().any(|y| y.via == x.via && y.dev == x.dev)) {
                        let via = x.via.map_or(String::new(), |v| format!(" via {v}"));
                        let dev = x.dev.as_ref().map_or(String::new(), |d| format!(" dev {d}"));
                        return Err(PErr::at(
                            at,
                            format!(
                                "route {} already has the path{via}{dev} (line {})",
                                fmt_prefix(&r.prefix),
                                old.line
                            ),
                        )
                        .exp("a path the route does not have"));
                    }
                    a.extend(b);
                    r.kind = RouteKind::Multipath { paths: a };
                    r.line = old.line;
                }
                _ => {
                    let what = format!(
                        "route {} in table {} already exists (line {})",
                        fmt_prefix(&r.prefix),
                        r.table,
                        old.line
                    );
                    return Err(PErr::at(
                        at,
                        format!(
                            "{what}; `append` adds a path only to a plain IPv6 route (an IPv4 route appended \
                             in the kernel is a second route it never uses)"
                        ),
                    )
                    .exp("`route replace`, or one route with `nexthop ... nexthop ...`"));
                }
            }
            // Now a replacement of the route it extends.
            if let Item::Route { verb, .. } = &mut cmd.item {
                *verb = Verb::Replace;
            }
        }
    }
    // A rule change is worked out on a copy of the rules, taken once nothing can fail.
    let mut new_rules = None;
    if let Item::Rule { rule, at } | Item::RuleDel { rule, at } = &cmd.item {
        let mut rules = spec.rules.clone();
        match &cmd.item {
            Item::Rule { .. } => crate::rule::add(&mut rules, rule.clone(), at)?,
            _ => crate::rule::del(&mut rules, rule.clone(), at)?,
        }
        new_rules = Some(rules);
    }
    // A firewall change, likewise, on a copy of the firewall.
    let mut new_firewall = None;
    if let Item::Firewall { cmd: c } = &cmd.item {
        let mut fw = spec.firewall.clone();
        crate::firewall::apply(&mut fw, c.clone())?;
        new_firewall = Some(fw);
    }
    if let Item::Nft { cmd: c } = &cmd.item {
        let mut fw = spec.firewall.clone();
        crate::nft::apply(&mut fw, c.clone())?;
        new_firewall = Some(fw);
    }
    match &cmd.item {
        Item::Route { spec: r, verb, at } if *verb != Verb::Replace => {
            if let Some(old) = idx.route(spec, r.table, r.prefix).and_then(|i| spec.routes.get(i)) {
                let what =
                    format!("route {} in table {} already exists (line {})", fmt_prefix(&r.prefix), r.table, old.line);
                return Err(PErr::at(at, what).exp("`route replace` to change it, or `route append` to add a path"));
            }
        }
        Item::Nexthop { spec: n, replace, at } => {
            if let (false, Some(old)) = (*replace, spec.nexthops.iter().find(|x| x.id == n.id)) {
                return Err(PErr::at(at, format!("nexthop id {} already exists (line {})", n.id, old.line))
                    .exp("`nexthop replace` to change it"));
            }
            if let NexthopKind::Group { members } = &n.kind {
                for (m, _) in members {
                    match spec.nexthops.iter().find(|x| x.id == *m).map(|x| &x.kind) {
                        None => {
                            return Err(PErr::at(at, format!("nexthop {m}, a member of the group, does not exist"))
                                .exp("members added by `ip nexthop add` on earlier lines"))
                        }
                        Some(NexthopKind::Group { .. }) => {
                            return Err(PErr::at(at, format!("nexthop {m} is a group; groups do not nest"))
                                .exp("single nexthops as members"))
                        }
                        Some(NexthopKind::Blackhole { .. }) if members.len() > 1 => {
                            return Err(PErr::at(
                                at,
                                format!(
                                "nexthop {m} is a blackhole; as in the kernel, it can only be a group's sole member"
                            ),
                            )
                            .exp("single nexthops as members"))
                        }
                        _ => {}
                    }
                }
            }
        }
        Item::Addr { spec: a, replace: false, at } => {
            if let Some(old) = idx.addrs.get(&(a.dev.clone(), a.addr)).and_then(|i| spec.addrs.get(*i)) {
                return Err(PErr::at(at, format!("address {} is already on {} (line {})", a.addr, a.dev, old.line))
                    .exp("`addr replace` to change it"));
            }
        }
        Item::Neigh { spec: n, replace: false, at } => {
            if let Some(old) = idx.neighs.get(&(n.dev.clone(), n.addr)).and_then(|i| spec.neighs.get(*i)) {
                return Err(PErr::at(
                    at,
                    format!("neighbour {} on {} already exists (line {})", n.addr, n.dev, old.line),
                )
                .exp("`neigh replace` to change it"));
            }
        }
        Item::Hmac { key, at } if key.secret.is_empty() && !spec.hmac_keys.iter().any(|k| k.key_id == key.key_id) => {
            return Err(PErr::at(
                at,
                format!("an empty secret deletes a key, but there is no HMAC key {}", key.key_id),
            )
            .exp("a non-empty secret"));
        }
        Item::RouteDel { table, prefix, at } if idx.route(spec, *table, *prefix).is_none() => {
            return Err(PErr::at(at, format!("no route {} in table {table} to delete", fmt_prefix(prefix)))
                .exp("a prefix that has a route (`show routes` lists them)"));
        }
        _ => {}
    }

    for d in &cmd.devs {
        note_dev(spec, d);
    }
    match cmd.item {
        Item::Nothing => {}
        Item::Link { line, dev, mac, mtu } => {
            if let Some(mac) = mac {
                match spec.links.iter_mut().find(|l| l.dev == dev) {
                    Some(l) => {
                        l.mac = mac;
                        l.line = line;
                    }
                    None => spec.links.push(LinkSpec { line, dev: dev.clone(), mac }),
                }
            }
            if let Some(mtu) = mtu {
                match spec.mtus.iter_mut().find(|m| m.dev == dev) {
                    Some(m) => *m = MtuSpec { line, dev, mtu },
                    None => spec.mtus.push(MtuSpec { line, dev, mtu }),
                }
            }
        }
        Item::Addr { spec: a, .. } => match idx.addrs.get(&(a.dev.clone(), a.addr)).copied() {
            Some(i) => spec.addrs[i] = a,
            None => {
                idx.addrs.insert((a.dev.clone(), a.addr), spec.addrs.len());
                spec.addrs.push(a);
            }
        },
        Item::Neigh { spec: n, .. } => match idx.neighs.get(&(n.dev.clone(), n.addr)).copied() {
            Some(i) => spec.neighs[i] = n,
            None => {
                idx.neighs.insert((n.dev.clone(), n.addr), spec.neighs.len());
                spec.neighs.push(n);
            }
        },
        Item::Route { spec: r, .. } => match idx.route(spec, r.table, r.prefix) {
            Some(i) => {
                let new = idx.edits.is_some().then(|| r.clone());
                let old = std::mem::replace(&mut spec.routes[i], r);
                if let Some(new) = new {
                    idx.edited(RouteEdit::Replaced { at: i, old, new });
                }
            }
            None => {
                idx.route_pushed(r.table, r.prefix, spec.routes.len());
                let new = idx.edits.is_some().then(|| r.clone());
                spec.routes.push(r);
                if let Some(new) = new {
                    idx.edited(RouteEdit::Pushed(new));
                }
            }
        },
        Item::RouteDel { table, prefix, .. } => {
            if let Some(i) = idx.route(spec, table, prefix) {
                // The last route takes its place: O(1) in a full table.
                let old = spec.routes.swap_remove(i);
                idx.route_removed(table, prefix, i, spec.routes.get(i).map(|r| (r.table, r.prefix)));
                idx.edited(RouteEdit::Removed { at: i, old });
            }
        }
        Item::Tunsrc { addr, line } => spec.tunsrc = addr.map(|a| (a, line)),
        Item::Hmac { key, .. } => {
            if key.secret.is_empty() {
                spec.hmac_keys.retain(|k| k.key_id != key.key_id);
            } else {
                match spec.hmac_keys.iter_mut().find(|k| k.key_id == key.key_id) {
                    Some(k) => *k = key,
                    None => spec.hmac_keys.push(key),
                }
            }
        }
        Item::Sysctls(s) => spec.sysctls.extend(s),
        Item::Rule { .. } | Item::RuleDel { .. } => {
            if let Some(r) = new_rules {
                spec.rules = r;
            }
        }
        Item::Firewall { .. } | Item::Nft { .. } => {
            if let Some(fw) = new_firewall {
                spec.firewall = fw;
            }
        }
        Item::Ids { spec: s } => spec.ids = Some(s),
        Item::Nexthop { spec: n, .. } => match spec.nexthops.iter_mut().find(|x| x.id == n.id) {
            Some(x) => *x = n,
            None => spec.nexthops.push(n),
        },
    }
    Ok(())
}
