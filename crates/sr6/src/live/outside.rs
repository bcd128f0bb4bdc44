//! The routes from outside the configuration — the kernel's, as the mirror keeps them,
//! and zebra's FPM stream's ([`KernelLines`]) — and their changes merged into the
//! published tables a prefix at a time (issue 31, item 5: a routing daemon installing
//! a full table).
//!
//! A batch of route events from either source touches some prefixes; each has the
//! lines of its routes in metric order, zebra's before the kernel's (the first one sr6
//! can read is the route in force, as in
//! [`merge_outside_routes`](super::control::merge_outside_routes)). What those prefixes'
//! routes were in the configuration the published tables were built from
//! ([`Control::merged`]) and what they become give route changes, made in place
//! ([`super::in_place`]): the cost of a batch is that of its own routes, not of the
//! whole table's lines parsed and merged again. Whatever the fast way cannot say (a
//! change of nexthop objects or addresses, outside routes the last build had to leave
//! out, a change the tables refuse in place) takes the whole way: every line merged
//! again, then in place or built.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::net::IpAddr;

use sr6_core::spec::{Prefix, RouteSpec, RouterSpec};
use sr6_core::tables::RouteChange;

use super::control::{served, Control};
use super::in_place::{self, Changes};

/// A prefix of the kernel's: table, destination, length.
pub type PrefixKey = (u32, IpAddr, u8);

/// The kernel's addresses, routes and nexthop objects sr6 takes, as the lines that
/// make them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KernelLines {
    /// The devices' global addresses' lines.
    pub addrs: Vec<String>,
    /// The nexthop objects' lines, single ones before the groups that name them.
    pub nexthops: Vec<String>,
    /// By prefix, the lines of its routes, the lowest metric first (never empty).
    pub routes: BTreeMap<PrefixKey, Vec<String>>,
}

impl KernelLines {
    /// Every line, addresses and nexthop objects first (the order they are merged in).
    pub fn lines(&self) -> impl Iterator<Item = &String> {
        self.addrs.iter().chain(&self.nexthops).chain(self.routes.values().flatten())
    }

    /// Whether there is no line.
    pub fn is_empty(&self) -> bool {
        self.addrs.is_empty() && self.nexthops.is_empty() && self.routes.is_empty()
    }

    /// How many lines there are.
    pub fn len(&self) -> usize {
        self.addrs.len() + self.nexthops.len() + self.routes.values().map(Vec::len).sum::<usize>()
    }
}

#[cfg(test)]
impl KernelLines {
    /// `lines` merged in the order given, under no prefix (for tests of whole lists).
    pub fn listed(lines: Vec<String>) -> Self {
        KernelLines { addrs: Vec::new(), nexthops: lines, routes: BTreeMap::new() }
    }
}

/// The key a prefix of the kernel's has in a configuration.
fn spec_key((table, dst, len): PrefixKey) -> (u32, Prefix) {
    match dst {
        IpAddr::V6(a) => (table, Prefix::V6(a, len)),
        IpAddr::V4(a) => (table, Prefix::V4(a, len)),
    }
}

/// The kernel's prefix of a configuration's key ([`spec_key`] undone).
pub(super) fn prefix_key((table, prefix): (u32, Prefix)) -> PrefixKey {
    match prefix {
        Prefix::V6(a, len) => (table, IpAddr::V6(a), len),
        Prefix::V4(a, len) => (table, IpAddr::V4(a), len),
    }
}

/// Gives each table and prefix of `now` its route in `routes` (indexed by `at`, kept):
/// replaced in its place, added at the end, or removed (`None`; the last route then
/// takes its place).
pub(super) fn set_routes(
    routes: &mut Vec<RouteSpec>,
    at: &mut sr6_config::RouteIndex,
    now: impl IntoIterator<Item = ((u32, Prefix), Option<RouteSpec>)>,
) {
    for (key, n) in now {
        match (at.get(key.0, key.1), n) {
            (Some(i), Some(n)) => routes[i] = n,
            (Some(i), None) => drop(at.swap_remove(routes, i)),
            (None, Some(n)) => at.push(routes, n),
            (None, None) => {}
        }
    }
}

/// For each prefix of `prefixes`, the first route of its lines that sr6 reads (`None`:
/// none), read as a whole merge reads them: zebra's nexthop objects' and routes' lines
/// (`fpm`), then the kernel's — so that a route may name the objects before it, and the
/// first source with a route sr6 reads wins the prefix.
fn first_routes(fpm: &KernelLines, kernel: &KernelLines, prefixes: &[PrefixKey]) -> Vec<Option<RouteSpec>> {
    // Each line, and the index in `prefixes` of the prefix it is a route of.
    let mut lines: Vec<(&str, Option<usize>)> = Vec::new();
    for src in [fpm, kernel] {
        lines.extend(src.nexthops.iter().map(|l| (l.as_str(), None)));
        for (d, p) in prefixes.iter().enumerate() {
            lines.extend(src.routes.get(p).into_iter().flatten().map(|l| (l.as_str(), Some(d))));
        }
    }
    let mut k = RouterSpec::default();
    let _ = sr6_config::parse_lines(lines.iter().map(|l| l.0), "outside", &mut k, true);
    let mut first = vec![None; prefixes.len()];
    // (A route among the lines not kept by prefix, as in a test's list, by its key.)
    let by_key: HashMap<(u32, Prefix), usize> = prefixes.iter().enumerate().map(|(d, p)| (spec_key(*p), d)).collect();
    for r in k.routes {
        // (Line i + 1 is `lines[i]`.)
        let line = r.line.checked_sub(1).and_then(|i| lines.get(i));
        let owner = match line {
            Some((_, Some(d))) => Some(*d),
            _ => by_key.get(&(r.table, r.prefix)).copied(),
        };
        if let Some(f) = owner.and_then(|d| first.get_mut(d)) {
            if f.is_none() {
                *f = Some(RouteSpec { line: 0, ..r });
            }
        }
    }
    first
}

impl Control {
    /// For each prefix of `prefixes`, the route the merge takes for it from outside
    /// (zebra's lines, then the kernel's: the first sr6 reads and can use; `None`:
    /// none), as if the configuration had none there. An outside route through a nexthop
    /// object is usable if the merge took that object (it is in `merged`, the merged
    /// configuration, and not the configuration's own); one through a device, if sr6
    /// serves it.
    pub(super) fn outside_routes_for(&self, merged: &RouterSpec, prefixes: &[PrefixKey]) -> Vec<Option<RouteSpec>> {
        if prefixes.is_empty() || (self.fpm_routes.is_empty() && self.kernel_routes.is_empty()) {
            return vec![None; prefixes.len()];
        }
        let own_nh: HashSet<u32> = self.spec.nexthops.iter().map(|n| n.id).collect();
        let taken_nh: HashSet<u32> = merged.nexthops.iter().map(|n| n.id).filter(|id| !own_nh.contains(id)).collect();
        let usable = |r: &RouteSpec| match &r.kind {
            sr6_core::spec::RouteKind::Nhid { id } => taken_nh.contains(id),
            kind => served(kind, &merged.devices),
        };
        let first = first_routes(&self.fpm_routes, &self.kernel_routes, prefixes);
        first.into_iter().map(|r| r.filter(|r| usable(r))).collect()
    }

    /// Makes [`merged_index`](Self::merged_index) the merged configuration's, if it is
    /// not; `None` if there is no merged configuration.
    pub(super) fn index_merged(&mut self) -> Option<()> {
        let merged = self.merged.as_ref()?;
        if !self.merged_index.as_ref().is_some_and(|i| i.fits(merged)) {
            self.merged_index = Some(sr6_config::RouteIndex::of(merged));
        }
        Some(())
    }

    /// Puts `updates` (prefixes and their new lines; none: the prefix is gone) in the
    /// place of those prefixes' lines in one source's (`slot`: the kernel's or zebra's)
    /// and publishes the tables: by route changes in place when it can (see the module
    /// docs), else by the whole way
    /// ([`replace_outside_routes`](Self::replace_outside_routes)). `None` when nothing
    /// changed, `Some(Ok(id))` with the new generation's id, `Some(Err(why))` when the
    /// tables refuse them (the old lines then stay, and so do the tables).
    pub fn change_outside_routes(
        &mut self,
        slot: fn(&mut Control) -> &mut KernelLines,
        updates: impl IntoIterator<Item = (PrefixKey, Vec<String>)>,
    ) -> Option<Result<u64, String>> {
        // (prefix, old lines, new lines) of what differs; the last update of a prefix
        // is the one that counts.
        let updates: BTreeMap<PrefixKey, Vec<String>> = updates.into_iter().collect();
        let diff: Vec<(PrefixKey, Vec<String>, Vec<String>)> = updates
            .into_iter()
            .filter_map(|(p, new)| {
                let old = slot(self).routes.get(&p).cloned().unwrap_or_default();
                (old != new).then_some((p, old, new))
            })
            .collect();
        if diff.is_empty() {
            return None;
        }
        for (p, _, new) in &diff {
            if new.is_empty() {
                slot(self).routes.remove(p);
            } else {
                slot(self).routes.insert(*p, new.clone());
            }
        }
        let prefixes: Vec<PrefixKey> = diff.iter().map(|d| d.0).collect();
        if let Some(id) = self.outside_routes_in_place(&prefixes) {
            return Some(Ok(id));
        }
        let mut old = slot(self).clone();
        for (p, before, _) in &diff {
            if before.is_empty() {
                old.routes.remove(p);
            } else {
                old.routes.insert(*p, before.clone());
            }
        }
        // The lines are in place already: publish them the whole way, or put the old
        // ones back.
        let new = std::mem::replace(slot(self), old);
        match self.replace_outside_routes(slot, new) {
            Some(r) => Some(r),
            None => Some(Ok(self.shared.gen.load().id)),
        }
    }

    /// The fast way of [`change_outside_routes`](Self::change_outside_routes): the routes
    /// the merged configuration gains, changes and loses for `prefixes`, published in
    /// place; `None` if that cannot be done (nothing is then published).
    fn outside_routes_in_place(&mut self, prefixes: &[PrefixKey]) -> Option<u64> {
        if self.outside_left_out.get() {
            return None;
        }
        self.index_routes();
        self.index_merged()?;
        let merged = self.merged.as_ref()?;
        let at = self.merged_index.as_ref()?;
        // What the configuration and `sr6 ctl` hold wins its prefix (found by the
        // configuration's route index).
        let ours = self.route_index.as_ref()?;
        // By the prefix's key in the tables: the route it now has (`None`: none).
        let mut now: HashMap<(u32, Prefix), Option<RouteSpec>> = HashMap::new();
        for (p, r) in prefixes.iter().zip(self.outside_routes_for(merged, prefixes)) {
            let key = spec_key(*p);
            if ours.get(key.0, key.1).is_none() {
                now.insert(key, r);
            }
        }
        // What becomes of the routes the prefixes had (found by the merged routes'
        // index: no pass over a table that may be full).
        let mut routes: Vec<RouteChange> = Vec::new();
        // Whether every route changed, before and after, is a plain one.
        let mut plain = true;
        for (key, n) in &now {
            let had = at.get(key.0, key.1).and_then(|i| merged.routes.get(i));
            match (had, n) {
                (None, None) => {}
                (Some(r), None) => {
                    plain &= in_place::plain(r);
                    routes.push(RouteChange::Delete(r.clone()));
                }
                (Some(r), Some(n)) if n.kind == r.kind => {}
                (r, Some(n)) => {
                    plain &= r.is_none_or(in_place::plain) && in_place::plain(n);
                    routes.push(RouteChange::Add(n.clone()));
                }
            }
        }
        if routes.is_empty() {
            return Some(self.shared.gen.load().id);
        }
        let mut merged = self.merged.take()?;
        let Some(id) = self.publish_in_place(&merged, Changes { routes, neighs: Vec::new(), plain }) else {
            self.merged = Some(merged);
            return None;
        };
        // The merged routes and their index take the same changes.
        set_routes(&mut merged.routes, self.merged_index.get_or_insert_default(), now);
        self.merged = Some(merged);
        Some(id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::live::in_place::tests::norm;
    use proptest::prelude::*;
    use sr6_core::spec::RouteKind;

    const CONF: &str = "addr add fc00::1/64 dev eth0\nroute add fc00:1::/64 via fc00::2 dev eth0\n";

    /// The routes of a configuration, whatever their lines and order.
    fn routes(s: &RouterSpec) -> Vec<String> {
        let mut v: Vec<String> = s.routes.iter().map(|r| format!("{} {:?} {:?}", r.table, r.prefix, r.kind)).collect();
        v.sort();
        v
    }

    /// A route line of prefix fc00:`p`::/64 as the mirror makes them (`k` picks the
    /// kind: gateways, a device sr6 does not serve, a blackhole, nexthop objects taken,
    /// not taken and absent, an SRv6 policy, a line sr6 cannot read, zebra's nexthop
    /// object).
    fn line(p: u8, k: u8, metric: u32) -> String {
        let dst = format!("fc00:{p:x}::/64");
        match k {
            0 => format!("ip -6 route add {dst} via fc00::2 dev eth0 metric {metric}"),
            1 => format!("ip -6 route add {dst} via fc00::9 dev eth0 metric {metric}"),
            2 => format!("ip -6 route add {dst} via fc00::2 dev eth7 metric {metric}"),
            3 => format!("ip -6 route add blackhole {dst} metric {metric}"),
            4 => format!("ip -6 route add {dst} nhid 6 metric {metric}"),
            5 => format!("ip -6 route add {dst} nhid 7 metric {metric}"),
            6 => format!("ip -6 route add {dst} nhid 5 metric {metric}"),
            7 => format!("ip -6 route add {dst} encap seg6 mode encap segs fc00::9 dev eth0 metric {metric}"),
            8 => format!("ip -6 route add {dst} encap nothing-sr6-reads metric {metric}"),
            _ => format!("ip -6 route add {dst} nhid 8 metric {metric}"),
        }
    }

    #[derive(Debug, Clone)]
    enum Step {
        /// New lines for some prefixes (none: withdrawn), from zebra's stream (`true`)
        /// or the kernel.
        Lines(bool, Vec<(u8, Vec<u8>)>),
        /// `sr6 ctl` adds or deletes fc00:2::/64.
        Ctl(bool),
    }

    fn step() -> impl Strategy<Value = Step> {
        prop_oneof![
            4 => (any::<bool>(), prop::collection::vec((1u8..=6, prop::collection::vec(0u8..=9, 0..=2)), 1..=4))
                .prop_map(|(fpm, l)| Step::Lines(fpm, l)),
            1 => any::<bool>().prop_map(Step::Ctl),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        /// Changes of the kernel's and zebra's routes a prefix at a time give the merged
        /// configuration and the tables that merging every line again and building
        /// give; plain ones are published in place. zebra's nexthop 6 is not the
        /// kernel's (zebra's wins), its 8 only zebra's.
        #[test]
        fn prefix_changes_equal_a_whole_merge(steps in prop::collection::vec(step(), 1..10)) {
            let mut c = crate::live::control::tests::control(CONF);
            let nexthops = vec![
                "ip -6 nexthop add id 6 via fc00::2 dev eth0".to_string(),
                "ip -6 nexthop add id 7 via fc00::2 dev eth7".to_string(),
            ];
            c.replace_outside_routes(|c| &mut c.kernel_routes, KernelLines::listed(nexthops))
                .unwrap()
                .unwrap();
            let zebra = vec![
                "ip -6 nexthop add id 6 via fc00::9 dev eth0".to_string(),
                "ip -6 nexthop add id 8 via fc00::3 dev eth0".to_string(),
            ];
            c.replace_outside_routes(|c| &mut c.fpm_routes, KernelLines::listed(zebra)).unwrap().unwrap();
            for (i, s) in steps.iter().enumerate() {
                match s {
                    Step::Lines(fpm, updates) => {
                        let updates: Vec<(PrefixKey, Vec<String>)> = updates
                            .iter()
                            .map(|(p, kinds)| {
                                let key = (254, format!("fc00:{p:x}::").parse().unwrap(), 64);
                                let lines = kinds.iter().enumerate().map(|(m, k)| line(*p, *k, 10 + m as u32));
                                (key, lines.collect())
                            })
                            .collect();
                        // In place unless routes before or after are kinds the
                        // tables change by a build (policies, nexthop objects), or a
                        // main-table change would have to resolve policies again.
                        let built_kind = |c: &Control| {
                            c.merged.as_ref().unwrap().routes.iter().any(|r| {
                                matches!(r.kind, RouteKind::Seg6 { .. } | RouteKind::Nhid { .. })
                            })
                        };
                        let before = built_kind(&c);
                        let gen = c.shared.gen.load().id;
                        let slot: fn(&mut Control) -> &mut KernelLines =
                            if *fpm { |c| &mut c.fpm_routes } else { |c| &mut c.kernel_routes };
                        let res = c.change_outside_routes(slot, updates);
                        prop_assert!(!matches!(res, Some(Err(_))), "{i}: {res:?}");
                        if !before && !built_kind(&c) {
                            let same = c.shared.gen.load().id == gen;
                            prop_assert!(c.spare.is_some() || same, "{i}: built, not in place");
                        }
                    }
                    Step::Ctl(add) => {
                        let l = if *add { "route replace fc00:2::/64 via fc00::3 dev eth0" } else { "route del fc00:2::/64" };
                        let _ = c.apply_line(l);
                    }
                }
                let (whole, _) = c.assemble(&c.spec).unwrap();
                prop_assert_eq!(routes(c.merged.as_ref().unwrap()), routes(&whole), "{}: {:?}", i, s);
                let (built, _) = c.build(&c.spec).unwrap();
                let g = c.shared.gen.load();
                for p in 1..=7 {
                    let a = format!("fc00:{p:x}::1");
                    prop_assert_eq!(norm(&g.tables, &a), norm(&built, &a), "{}: {:?}: {}", i, s, a);
                }
            }
        }
    }
}
