//! Route and neighbour changes published without building the tables (issue 25): two
//! copies of the tables take turns, as in a left-right scheme. The workers read the
//! published generation; the one it replaced (the *spare*) is taken back once every
//! worker has let go of it — each picks up a new generation at its next batch, and an
//! idle one is woken for it ([`Shared::wake`](super::state::Shared::wake)) — brought up
//! to date with the changes it missed, changed, and published in turn. Workers never
//! wait for the control side; the control side waits (briefly) for the workers.
//!
//! What is compared is the configuration the tables are built from, with the routes
//! mirrored from the kernel and from zebra and the neighbours learned from the kernel
//! merged in ([`Control::assemble`]): so a `sr6 ctl` command or batch, a change of the
//! kernel's or zebra's routes and a neighbour all take the same path. The changes are
//! those [`Tables::apply_routes`] takes in place (plain and multipath routes through gateways,
//! blackholes, unreachables, host routes, routes through known nexthop objects, the
//! SIDs of stateless behaviours; its docs say which) and neighbours
//! ([`Tables::apply_neighbours`]). Anything else, or a spare the workers do not let go
//! of in time, makes the caller build as before; the first change after a build builds
//! a second copy, once.

use std::collections::HashMap;
use std::net::{IpAddr, Ipv6Addr};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rustc_hash::FxHashMap;

use sr6_config::RouteEdit;
use sr6_core::spec::{Prefix, RouteKind, RouteSpec, RouterSpec};
use sr6_core::tables::{neigh_key, NeighChange, RouteChange, Tables};

use super::control::Control;
use super::state::Generation;

/// How long the control side waits for the workers to let go of the spare.
const RECLAIM_WAIT: Duration = Duration::from_millis(200);

/// The generation before the published one, and the changes it lacks.
pub struct Spare {
    gen: Arc<Generation>,
    lag: Changes,
}

/// What turns `old` into `new`, if routes and neighbours are all that differ (the other
/// parts of the configuration compared as they are): the routes added, replaced (an
/// `Add`) and deleted, and the neighbours set and removed; `None` otherwise.
pub fn changes(old: &mut RouterSpec, new: &mut RouterSpec) -> Option<Changes> {
    let (old_routes, new_routes) = (std::mem::take(&mut old.routes), std::mem::take(&mut new.routes));
    let (old_neighs, new_neighs) = (std::mem::take(&mut old.neighs), std::mem::take(&mut new.neighs));
    let same_rest = old == new;
    (old.routes, new.routes, old.neighs, new.neighs) = (old_routes, new_routes, old_neighs, new_neighs);
    if !same_rest {
        return None;
    }
    let (routes, plain) = route_changes(&old.routes, &new.routes)?;
    // Neighbours: the last line of a device and address is the one in force.
    let macs = |s: &RouterSpec| -> HashMap<(String, IpAddr), [u8; 6]> {
        s.neighs.iter().map(|n| ((n.dev.clone(), n.addr), n.mac)).collect()
    };
    let (nb, na) = (macs(old), macs(new));
    let mut neighs: Vec<NeighChange> = nb
        .keys()
        .filter(|k| !na.contains_key(*k))
        .map(|(dev, addr)| NeighChange { dev: dev.clone(), addr: *addr, mac: None })
        .collect();
    neighs.extend(na.iter().filter(|(k, m)| nb.get(*k) != Some(*m)).map(|((dev, addr), m)| NeighChange {
        dev: dev.clone(),
        addr: *addr,
        mac: Some(*m),
    }));
    Some(Changes { routes, neighs, plain })
}

/// The routes that turn `old` into `new`: deleted, and added or replaced (an `Add`),
/// and whether every route changed, before and after, is [`plain`]; `None` if a table
/// and prefix has two routes in either, where it matters.
///
/// A change leaves most of a large configuration as it was, so the lines the two
/// share at their start and at their end are set aside by comparing them in order,
/// and only those between are compared by key: a `sr6 ctl route add` on a FIB of
/// 400,000 routes hashes a few routes, not 800,000. A table and prefix with two
/// routes among those set aside has them in both, unchanged; it only matters if one
/// of the routes between has that key too, which is checked.
fn route_changes(old: &[RouteSpec], new: &[RouteSpec]) -> Option<(Vec<RouteChange>, bool)> {
    let head = old.iter().zip(new).take_while(|(a, b)| a == b).count();
    let tail = old[head..].iter().rev().zip(new[head..].iter().rev()).take_while(|(a, b)| a == b).count();
    let (old_mid, new_mid) = (&old[head..old.len() - tail], &new[head..new.len() - tail]);
    let key = |r: &RouteSpec| (r.table, r.prefix);
    let before: FxHashMap<_, &RouteSpec> = old_mid.iter().map(|r| (key(r), r)).collect();
    let after: FxHashMap<_, &RouteSpec> = new_mid.iter().map(|r| (key(r), r)).collect();
    // One route per table and prefix among those compared, or the diff says nothing.
    if before.len() != old_mid.len() || after.len() != new_mid.len() {
        return None;
    }
    // ... and none of them also among those set aside.
    if !(before.is_empty() && after.is_empty()) {
        let shared = old[..head].iter().chain(&old[old.len() - tail..]);
        if shared.map(key).any(|k| before.contains_key(&k) || after.contains_key(&k)) {
            return None;
        }
    }
    let mut routes: Vec<RouteChange> =
        old_mid.iter().filter(|r| !after.contains_key(&key(r))).map(|r| RouteChange::Delete(r.clone())).collect();
    routes.extend(
        new_mid
            .iter()
            .filter(|r| before.get(&key(r)).is_none_or(|o| !same_route(o, r)))
            .map(|r| RouteChange::Add(r.clone())),
    );
    // (Those between the shared lines: every route changed, and perhaps a few more.)
    Some((routes, old_mid.iter().chain(new_mid).all(plain)))
}

/// The tables and prefixes a `sr6 ctl` line's edits of the configuration's routes
/// touch ([`sr6_config::parse_line_logged`]), in the order first touched, each with the
/// route the configuration has there after the last edit (`None`: none). What the
/// line left alone is not looked at: it costs the line's routes, not the table's.
pub fn edited_routes(edits: &[RouteEdit]) -> Vec<((u32, Prefix), Option<&RouteSpec>)> {
    let mut order: Vec<((u32, Prefix), Option<&RouteSpec>)> = Vec::new();
    let mut at: FxHashMap<(u32, Prefix), usize> = FxHashMap::default();
    for e in edits {
        let (old, new) = e.before_after();
        let Some(r) = old.or(new) else { continue };
        let key = (r.table, r.prefix);
        match at.get(&key) {
            Some(&i) => order[i].1 = new,
            None => {
                at.insert(key, order.len());
                order.push((key, new));
            }
        }
    }
    order
}

/// Whether a route is its prefix's alone in the tables: a route through gateways or a
/// nexthop object, on-link, a blackhole or unreachable — not a SID, a policy, a tunnel
/// or a program, whose change may move what other prefixes' entries hold (a SID's
/// index, a policy's). Changes of such routes alone reach the XDP tier's maps
/// prefix by prefix ([`sr6_xdp::Mirror::sync_prefixes`]).
pub(super) fn plain(r: &RouteSpec) -> bool {
    matches!(
        r.kind,
        RouteKind::Forward { .. }
            | RouteKind::Multipath { .. }
            | RouteKind::Nhid { .. }
            | RouteKind::Blackhole
            | RouteKind::Unreachable
    )
}

/// Route and neighbour changes ([`changes`]).
#[derive(Debug, Clone, Default)]
pub struct Changes {
    pub routes: Vec<RouteChange>,
    pub neighs: Vec<NeighChange>,
    /// Every route changed is [`plain`].
    pub plain: bool,
}

impl Changes {
    /// The prefixes (kernel table id, prefix) whose entries in the XDP tier's maps
    /// these changes may change, if the changed routes are all [`plain`]: theirs, and
    /// for each neighbour the /128 of its address in every table of `table_ids` (an
    /// on-link host route resolved to it; a route through a gateway names the
    /// adjacency, whose entry is not a prefix's: [`sr6_xdp::Mirror::sync_prefixes`]).
    fn prefixes(&self, table_ids: &[u32]) -> Option<Vec<(u32, Prefix)>> {
        if !self.plain {
            return None;
        }
        let routes = self.routes.iter().map(|c| match c {
            RouteChange::Add(r) | RouteChange::Delete(r) => (r.table, r.prefix),
        });
        let hosts = self.neighs.iter().flat_map(|n| {
            let host = Prefix::V6(Ipv6Addr::from(neigh_key(n.addr)), 128);
            table_ids.iter().map(move |&id| (id, host))
        });
        Some(routes.chain(hosts).collect())
    }

    fn is_empty(&self) -> bool {
        self.routes.is_empty() && self.neighs.is_empty()
    }

    /// Applies them to `t`, routes first (a new gateway's adjacency then takes the new
    /// neighbours too): all, or nothing if `t` must be built instead.
    fn apply(&self, t: &mut Tables) -> bool {
        t.apply_routes(&self.routes).is_ok() && t.apply_neighbours(&self.neighs).is_ok()
    }
}

/// The same route, whatever line it came from.
fn same_route(a: &RouteSpec, b: &RouteSpec) -> bool {
    a.table == b.table && a.prefix == b.prefix && a.kind == b.kind
}

impl Control {
    /// Publishes the tables of configuration `spec` in place if what the tables are
    /// built from ([`Control::assemble`]) differs from what the published ones were
    /// built from by route changes alone, and those can be made in place; the new
    /// generation's id (the current one's if nothing the tables hold changed), or
    /// `None` (nothing published: the caller builds).
    pub fn try_in_place(&mut self, spec: &RouterSpec) -> Option<u64> {
        let mut old = self.merged.take()?;
        let res = self.assemble(spec).ok().and_then(|(mut new, _)| {
            let ch = changes(&mut old, &mut new)?;
            let id = if ch.is_empty() { self.shared.gen.load().id } else { self.publish_in_place(&old, ch)? };
            Some((id, new))
        });
        match res {
            Some((id, new)) => {
                self.set_merged(new);
                Some(id)
            }
            None => {
                self.merged = Some(old);
                None
            }
        }
    }

    /// [`try_in_place`](Self::try_in_place) after a `sr6 ctl` line changed the
    /// configuration by `edits` (none: a neighbour learned or forgotten), without
    /// assembling and comparing every route. The rest of the configuration is `before`
    /// as it was before the line (`None`: unchanged); if it changed otherwise than by
    /// neighbours, or the devices' MACs or MTUs did, `None` (nothing published: the
    /// caller takes the whole way), as when the changes cannot be made in place.
    ///
    /// The route of each table and prefix the edits touch ([`edited_routes`]) in the
    /// merged configuration becomes the configuration's, or if it has none there, the
    /// one the merge takes from outside ([`Control::outside_routes_for`]): compared with
    /// what the merged configuration had (found by its index), they give the route
    /// changes. The neighbours', the merged configuration's against the neighbours
    /// assembled afresh without any route ([`Control::assemble_local`]). The merged
    /// routes and their index take the changes.
    pub fn try_in_place_edits(&mut self, edits: &[RouteEdit], before: Option<&RouterSpec>) -> Option<u64> {
        if self.outside_left_out.get() {
            return None;
        }
        let local = self.assemble_local(&self.spec.clone_without_routes()).ok()?;
        if let Some(b) = before {
            // (The line's other changes: none but neighbours.)
            let b = RouterSpec { neighs: Vec::new(), ..b.clone() };
            if b != (RouterSpec { neighs: Vec::new(), ..self.spec.clone_without_routes() }) {
                return None;
            }
        }
        self.index_merged()?;
        let mut old = self.merged.take()?;
        let res = self.in_place_edits(&old, local, edits);
        match res {
            Some((id, mut new, now)) => {
                new.routes = std::mem::take(&mut old.routes);
                super::outside::set_routes(&mut new.routes, self.merged_index.get_or_insert_default(), now);
                self.merged = Some(new);
                Some(id)
            }
            None => {
                self.merged = Some(old);
                None
            }
        }
    }

    /// [`try_in_place_edits`](Self::try_in_place_edits) on `old`, the merged
    /// configuration (indexed), with `local` the configuration assembled without routes
    /// or anything from outside: the new generation's id, the new merged configuration
    /// without its routes, and the route each table and prefix touched now has in it.
    #[allow(clippy::type_complexity)]
    fn in_place_edits(
        &mut self,
        old: &RouterSpec,
        local: RouterSpec,
        edits: &[RouteEdit],
    ) -> Option<(u64, RouterSpec, Vec<((u32, Prefix), Option<RouteSpec>)>)> {
        // The merged configuration but for its routes and neighbours is the local one
        // with what the merge added from outside (addresses, nexthop objects): the
        // devices' MACs and MTUs must be those it was assembled with.
        if local.links != old.links || local.mtus != old.mtus {
            return None;
        }
        let mut was = old.clone_without_routes();
        let mut new = RouterSpec { neighs: local.neighs, ..old.clone_without_routes() };
        let neighs = changes(&mut was, &mut new)?.neighs;
        // Each route touched: the configuration's, else the outside one.
        let touched = edited_routes(edits);
        let keys: Vec<_> = touched.iter().map(|(k, _)| super::outside::prefix_key(*k)).collect();
        let outside = self.outside_routes_for(old, &keys);
        let at = self.merged_index.as_ref()?;
        let mut routes = Vec::new();
        let mut all_plain = true;
        let mut now = Vec::with_capacity(touched.len());
        for ((key, ours), theirs) in touched.into_iter().zip(outside) {
            let after = ours.cloned().or(theirs);
            let had = at.get(key.0, key.1).and_then(|i| old.routes.get(i));
            let change = match (had, &after) {
                (Some(h), None) => Some(RouteChange::Delete(h.clone())),
                (h, Some(a)) if h.is_none_or(|h| !same_route(h, a)) => Some(RouteChange::Add(a.clone())),
                _ => None,
            };
            if let Some(c) = change {
                all_plain &= had.is_none_or(plain) && after.as_ref().is_none_or(plain);
                routes.push(c);
            }
            now.push((key, after));
        }
        let ch = Changes { routes, neighs, plain: all_plain };
        let id = if ch.is_empty() { self.shared.gen.load().id } else { self.publish_in_place(old, ch)? };
        Some((id, new, now))
    }

    /// Publishes the tables of `current` (what the published ones were built from)
    /// changed by `ch`, in place (see the module docs); `None` if that cannot be done
    /// (nothing is then published).
    pub(super) fn publish_in_place(&mut self, current: &RouterSpec, ch: Changes) -> Option<u64> {
        let build = || {
            Tables::build(current).ok().map(|(mut t, _)| {
                t.resolve_neighbours = true;
                t
            })
        };
        let spare = self.spare.take().and_then(|s| reclaim(s.gen).map(|t| (t, s.lag)));
        // The published tables and these, changed by `ch` alone: the XDP tier then
        // compares only `ch`'s prefixes. (Tables built afresh may number their SIDs and
        // policies otherwise than the published ones: it compares every prefix.)
        let (mut tables, prefixes) = match spare.and_then(|(mut t, lag)| lag.apply(&mut t).then_some(t)) {
            Some(t) => {
                let prefixes = ch.prefixes(&t.table_ids);
                (t, prefixes)
            }
            None => (build()?, None),
        };
        if !ch.apply(&mut tables) {
            return None;
        }
        let (id, old) = self.shared.publish_swap(tables, prefixes.as_deref());
        self.spare = Some(Spare { gen: old, lag: ch });
        Some(id)
    }
}

/// The tables of `gen` once no worker reads them any more; `None` if some still does
/// after [`RECLAIM_WAIT`].
fn reclaim(mut gen: Arc<Generation>) -> Option<Tables> {
    let deadline = Instant::now() + RECLAIM_WAIT;
    loop {
        match Arc::try_unwrap(gen) {
            Ok(g) => return Some(g.tables),
            Err(g) if Instant::now() < deadline => {
                gen = g;
                std::thread::sleep(Duration::from_micros(200));
            }
            Err(_) => return None,
        }
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use sr6_core::tables::{NextHop, Route};

    /// The route the tables give address `a`, with its adjacency, policy or SID and its
    /// fast-path hop: a policy or SID by what it is, not by its index or line, which
    /// follow the order of the routes or of the changes (the hop of a policy is the
    /// policy's index + 2 << 28).
    pub(crate) fn norm(t: &Tables, a: &str) -> String {
        let a: std::net::Ipv6Addr = a.parse().unwrap();
        let mut hop = *t.fibs.main().lpm6.lookup_aux(u128::from(a)).1;
        let r = match t.fibs.main().lookup6(&a.octets()) {
            Some(Route::Forward(NextHop::Adj(i))) => format!("{:?}", t.adjacencies[i as usize]),
            Some(Route::Policy(i)) => {
                if hop.code == (2 << 28) + i {
                    hop.code = 2 << 28;
                }
                // Its line too follows that order.
                let p = sr6_core::tables::Policy { line: 0, ..t.policies[i as usize].clone() };
                format!("{p:?}")
            }
            Some(Route::Sid(i)) => format!("SID {}", t.sids[i as usize].action),
            r => format!("{r:?}"),
        };
        format!("{r} {hop:?}")
    }

    fn spec(text: &str) -> RouterSpec {
        sr6_config::parse_str(text, "t").unwrap()
    }

    #[test]
    fn changes_are_the_routes_and_neighbours_that_differ() {
        let base = "ip -6 addr add fc00::1/64 dev eth0\nip -6 route add fc00:1::/64 via fc00::2 dev eth0\n\
                    ip -6 route add fc00:2::/64 via fc00::2 dev eth0\n";
        let mut a = spec(base);
        let mut b = spec(&format!(
            "{}ip -6 route add fc00:3::/64 via fc00::3 dev eth0\n",
            base.replace("fc00:2::/64 via fc00::2", "fc00:2::/64 via fc00::4")
                .replace("ip -6 route add fc00:1::/64 via fc00::2 dev eth0\n", "")
        ));
        let ch = changes(&mut a, &mut b).unwrap().routes;
        let text: Vec<String> = ch
            .iter()
            .map(|c| match c {
                RouteChange::Add(r) => format!("add {}", sr6_core::behaviour::proxy::prefix_text(&r.prefix)),
                RouteChange::Delete(r) => format!("del {}", sr6_core::behaviour::proxy::prefix_text(&r.prefix)),
            })
            .collect();
        assert_eq!(text, ["del fc00:1::/64", "add fc00:2::/64", "add fc00:3::/64"]);
        // Anything else that differs: no route changes.
        let mut c = spec(&format!("{base}ip -6 addr add fc00:9::1/64 dev eth0\n"));
        assert!(changes(&mut a, &mut c).is_none());
        assert_eq!(a, spec(base), "the routes are put back");
    }

    /// The XDP tier is told the changed routes' prefixes and, for each neighbour, its
    /// address's /128 in every table (IPv4 as the tables key it, mapped); none if a
    /// route changed is not plain.
    #[test]
    fn a_neighbours_prefixes_are_its_host_routes_in_every_table() {
        let mut a = spec("ip -6 addr add fc00::1/64 dev eth0\n");
        let mut b = spec(
            "ip -6 addr add fc00::1/64 dev eth0\nip -6 route add fc00:3::/64 via fc00::3 dev eth0\n\
             ip -6 neigh add fc00::3 lladdr 02:00:00:00:00:03 dev eth0\n\
             ip neigh add 10.0.0.3 lladdr 02:00:00:00:00:04 dev eth0\n",
        );
        let ch = changes(&mut a, &mut b).unwrap();
        let p = |s: &str| {
            let (a, l) = s.split_once('/').unwrap();
            Prefix::V6(a.parse().unwrap(), l.parse().unwrap())
        };
        let mut got = ch.prefixes(&[254, 100]).unwrap();
        got.sort_by_key(|(t, p)| (*t, sr6_core::behaviour::proxy::prefix_text(p)));
        let want = [
            (100, p("::ffff:10.0.0.3/128")),
            (100, p("fc00::3/128")),
            (254, p("::ffff:10.0.0.3/128")),
            (254, p("fc00:3::/64")),
            (254, p("fc00::3/128")),
        ];
        assert_eq!(got, want);
        let not_plain = Changes { plain: false, ..ch };
        assert!(not_plain.prefixes(&[254]).is_none());
    }

    /// The whole-list comparison [`route_changes`] must agree with: every route of
    /// both hashed by table and prefix.
    fn reference(old: &[RouteSpec], new: &[RouteSpec]) -> Option<Vec<RouteChange>> {
        let key = |r: &RouteSpec| (r.table, r.prefix);
        let before: HashMap<_, &RouteSpec> = old.iter().map(|r| (key(r), r)).collect();
        let after: HashMap<_, &RouteSpec> = new.iter().map(|r| (key(r), r)).collect();
        if before.len() != old.len() || after.len() != new.len() {
            return None;
        }
        let mut v: Vec<RouteChange> =
            old.iter().filter(|r| !after.contains_key(&key(r))).map(|r| RouteChange::Delete(r.clone())).collect();
        v.extend(
            new.iter()
                .filter(|r| before.get(&key(r)).is_none_or(|o| !same_route(o, r)))
                .map(|r| RouteChange::Add(r.clone())),
        );
        Some(v)
    }

    fn routes(lines: &[String]) -> Vec<RouteSpec> {
        spec(&format!("ip -6 addr add fc00::1/64 dev eth0\n{}", lines.join("\n"))).routes
    }

    fn route_line(p: u8, via: u8) -> String {
        format!("ip -6 route add fc00:{p:x}::/64 via fc00::{via:x} dev eth0")
    }

    proptest::proptest! {
        /// Routes added, removed and replaced anywhere in a list: the changes found by
        /// setting the shared start and end aside are those of the whole comparison.
        #[test]
        fn setting_the_shared_lines_aside_changes_nothing(
            base in proptest::collection::btree_map(1u8..60, 2u8..5, 0..40),
            edits in proptest::collection::vec((0usize..50, 0u8..3, 1u8..60, 2u8..5), 0..6),
        ) {
            let mut lines: Vec<(u8, u8)> = base.into_iter().collect();
            let old = routes(&lines.iter().map(|&(p, v)| route_line(p, v)).collect::<Vec<_>>());
            for (at, what, p, v) in edits {
                let at = at % (lines.len() + 1);
                match what {
                    // Add a prefix not there yet.
                    0 if !lines.iter().any(|l| l.0 == p) => lines.insert(at, (p, v)),
                    1 if at < lines.len() => { lines.remove(at); }
                    2 if at < lines.len() => lines[at].1 = v,
                    _ => {}
                }
            }
            let new = routes(&lines.iter().map(|&(p, v)| route_line(p, v)).collect::<Vec<_>>());
            let sorted = |v: Option<Vec<RouteChange>>| v.map(|mut v| { v.sort_by_key(|c| format!("{c:?}")); v });
            let found = route_changes(&old, &new).map(|(c, plain)| {
                // (Every route of these tests is plain.)
                assert!(plain);
                c
            });
            proptest::prop_assert_eq!(sorted(found), sorted(reference(&old, &new)));
        }
    }

    /// Routes as text, sorted: the same routes whatever their order.
    fn sorted(routes: &[RouteSpec]) -> Vec<String> {
        let mut v: Vec<String> = routes.iter().map(|r| format!("{r:?}")).collect();
        v.sort();
        v
    }

    /// A `sr6 ctl` line of kind `k` on prefix `p` with gateway or neighbour `v`: routes
    /// of every kind added, replaced and deleted (plain, blackholes, SIDs, policies),
    /// neighbours set and removed, and a replace the tables refuse.
    fn ctl_line(k: u8, p: u8, v: u8) -> String {
        match k {
            0 => format!("route replace fc00:{p:x}::/64 via fc00::{v:x} dev eth0"),
            1 => format!("route del fc00:{p:x}::/64"),
            2 => format!("route replace blackhole fc00:{p:x}::/64"),
            3 => format!("route replace fc00:e::{p:x}/128 encap seg6local action End dev eth0"),
            4 => format!("route del fc00:e::{p:x}/128"),
            5 => format!("route replace fc00:{p:x}::/64 encap seg6 mode encap segs fc00::{v:x}:9 dev eth0"),
            6 => format!("neigh replace fc00::{v:x} lladdr 02:00:00:00:{p:02x}:{v:02x} dev eth0"),
            7 => format!("neigh del fc00::{v:x} dev eth0"),
            // (Refused by the tables, once the configuration has the route: no key 4.)
            8 => format!("route replace fc00:{p:x}::/64 encap seg6 mode encap segs fc00::9 hmac 4 dev eth0"),
            _ => format!("route add fc00:{p:x}::/64 via fc00::{v:x} dev eth0"),
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(128))]

        /// `sr6 ctl` lines and neighbours learned and forgotten, published by their edits
        /// ([`Control::try_in_place_edits`]) or the whole way: after each, the merged
        /// configuration is the one assembled afresh from the configuration, and the
        /// published tables forward as tables built from it.
        #[test]
        fn ctl_lines_in_place_equal_a_build(
            steps in proptest::collection::vec((0u8..=11, 1u8..=5, 2u8..=4), 1..16)
        ) {
            let mut c = crate::live::control::tests::control(
                "addr add fc00::1/64 dev eth0\nsr tunsrc set fc00::1\nroute add fc00:1::/64 via fc00::2 dev eth0\n",
            );
            for (i, &(k, p, v)) in steps.iter().enumerate() {
                let what = if k >= 10 {
                    let mac = (k == 10).then_some([2, 0, 0, 0, p, v]);
                    c.learn("eth0", format!("fc00::{v:x}").parse().unwrap(), mac);
                    c.republish().map(|_| String::new())
                } else {
                    c.apply_line(&ctl_line(k, p, v))
                };
                proptest::prop_assert!(k != 8 || what.is_err());
                let (whole, _) = c.assemble(&c.spec).unwrap();
                let merged = c.merged.as_ref().unwrap();
                proptest::prop_assert_eq!(merged.clone_without_routes(), whole.clone_without_routes(), "{}: {:?}", i, what);
                proptest::prop_assert_eq!(sorted(&merged.routes), sorted(&whole.routes), "{}: {:?}", i, what);
                if let Some(index) = &c.route_index {
                    proptest::prop_assert_eq!(index, &sr6_config::RouteIndex::of(&c.spec), "{}: {:?}", i, what);
                }
                let (built, _) = c.build(&c.spec).unwrap();
                let g = c.shared.gen.load();
                for p in 1..=5 {
                    for a in [format!("fc00:{p:x}::1"), format!("fc00:e::{p:x}")] {
                        proptest::prop_assert_eq!(norm(&g.tables, &a), norm(&built, &a), "{}: {:?}: {}", i, what, a);
                    }
                }
            }
        }
    }

    /// A `sr6 ctl` line's route edits, and a neighbour learned, are made on the merged
    /// configuration's routes themselves (no copy of a table that may be full), with
    /// routes from outside merged too: a line's route shadows the kernel's for its
    /// prefix, and the kernel's comes back when the line's is deleted.
    #[test]
    fn a_lines_edits_are_made_on_the_merged_routes() {
        let mut c = crate::live::control::tests::control(
            "addr add fc00::1/64 dev eth0\nroute add fc00:1::/64 via fc00::2 dev eth0\n\
             route add fc00:2::/64 via fc00::2 dev eth0\n",
        );
        let routes = |c: &Control| c.merged.as_ref().unwrap().routes.as_ptr();
        let before = routes(&c);
        let out = c.apply_line("route replace fc00:1::/64 via fc00::3 dev eth0").unwrap();
        assert!(out.contains("in place"), "{out}");
        assert_eq!(routes(&c), before);
        c.learn("eth0", "fc00::3".parse().unwrap(), Some([2, 0, 0, 0, 0, 3]));
        c.republish().unwrap();
        assert_eq!(routes(&c), before);
        assert_eq!(norm(&c.shared.gen.load().tables, "fc00:1::1"), norm(&c.build(&c.spec).unwrap().0, "fc00:1::1"));
        c.apply_line("route del fc00:2::/64").unwrap();
        assert_eq!(routes(&c), before);
        let mut k = super::super::outside::KernelLines::default();
        k.routes.insert((254, "fc00:9::".parse().unwrap(), 64), vec!["ip -6 route add blackhole fc00:9::/64".into()]);
        c.replace_outside_routes(|c| &mut c.kernel_routes, k).unwrap().unwrap();
        let before = routes(&c);
        let at = |c: &Control| norm(&c.shared.gen.load().tables, "fc00:9::1");
        let out = c.apply_line("route add fc00:9::/64 via fc00::3 dev eth0").unwrap();
        assert!(out.contains("in place") && at(&c).contains("Adjacency"), "{out}: {}", at(&c));
        c.apply_line("route del fc00:9::/64").unwrap();
        assert!(at(&c).starts_with("Some(Blackhole)"), "{}", at(&c));
        assert_eq!(routes(&c), before, "no copy with the kernel's routes merged either");
        assert_eq!(c.merged.as_ref().unwrap().routes.len(), 2);
    }

    #[test]
    fn a_changed_prefix_that_is_also_among_the_shared_lines_is_refused() {
        let lines: Vec<String> = (1..=6).map(|p| route_line(p, 2)).collect();
        let old = routes(&lines);
        // The same prefix twice: once in the shared start, once where the lists differ.
        let mut new = old.clone();
        new.insert(3, RouteSpec { line: old[3].line, ..old[0].clone() });
        assert_eq!(route_changes(&old, &new), None);
        assert_eq!(reference(&old, &new), None);
        // The lists the same: no changes, whatever they hold.
        assert_eq!(route_changes(&new, &new), Some((Vec::new(), true)));
        // One route added in the middle: one change, found between the shared lines.
        let mut added = old.clone();
        added.insert(2, routes(&[route_line(40, 3)]).remove(0));
        assert_eq!(route_changes(&old, &added), Some((vec![RouteChange::Add(added[2].clone())], true)));
        // A SID's route is not plain: the XDP tier then compares every prefix.
        let mut sid = old.clone();
        sid.insert(2, routes(&["ip -6 route add fc00:5::e/128 encap seg6local action End dev eth0".into()]).remove(0));
        assert_eq!(route_changes(&old, &sid), Some((vec![RouteChange::Add(sid[2].clone())], false)));
    }
}
