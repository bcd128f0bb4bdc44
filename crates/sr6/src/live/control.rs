//! The control side of a live router: the configuration as written (a
//! [`RouterSpec`]), the neighbours learned from the kernel, and the one way to change
//! the data plane — build complete new tables and publish them ([`Shared::publish`]).
//!
//! Every change is all-or-nothing. A `sr6 ctl` command or batch is applied to the spec
//! itself, its route edits recorded, and undone if the parser or the tables refuse it
//! (a spec may hold a full table: no copy of it per command); a file (`reload`) is
//! parsed into a spec of its own. Only if the tables take the change do they go live.
//! A refused change leaves everything as it was.

use std::cell::Cell;
use std::collections::BTreeMap;
use std::net::IpAddr;
use std::path::Path;
use std::sync::Arc;

use sr6_config::RouteEdit;
use sr6_core::spec::{MtuSpec, NeighSpec, RouteSpec, RouterSpec};
use sr6_core::tables::Tables;

use super::outside::KernelLines;
use super::state::Shared;

/// The live configuration. See the module docs.
pub struct Control {
    pub spec: RouterSpec,
    /// The configuration as its file last gave it (at start, or `reload`): a route of
    /// `spec` it has is the configuration's, any other `sr6 ctl`'s (`show routes`).
    pub config: RouterSpec,
    pub shared: Arc<Shared>,
    /// Device MACs of the real Linux devices, by name (they override `link set ...
    /// address`: the kernel answers neighbour discovery with the real one).
    pub dev_macs: BTreeMap<String, [u8; 6]>,
    /// Device MTUs of the real Linux devices, by name (capped at what sr6's buffers
    /// carry): the MTU sr6 checks. An `mtu` line that disagrees is refused (sr6 does
    /// not change the kernel's devices, and could not send past their MTU anyway).
    pub dev_mtus: BTreeMap<String, u16>,
    /// Neighbours learned at run time: (device, address) -> MAC.
    pub learned: BTreeMap<(String, IpAddr), [u8; 6]>,
    /// Number of `ctl` commands applied (their "line numbers" in error messages).
    pub commands: usize,
    /// Routes mirrored from the kernel's tables (`sr6 run --mirror-kernel-routes`,
    /// `kernel_routes.rs`), as the lines that make them: merged under the
    /// configuration's at every build ([`Control::build`]), changed a prefix at a time
    /// ([`super::outside`]).
    pub kernel_routes: KernelLines,
    /// Routes from zebra's FPM stream (`sr6 run --fpm-listen`, `fpm.rs`), as the lines
    /// that make them: merged under the configuration's, before the kernel's.
    pub fpm_routes: KernelLines,
    /// The generation before the published one, for route changes made in place
    /// ([`super::in_place`]); `None` after a build.
    pub spare: Option<super::in_place::Spare>,
    /// The configuration the published tables were built from, merges included
    /// ([`assemble`](Self::assemble)); `None` until the first publication.
    pub merged: Option<RouterSpec>,
    /// Whether the last build had to leave the outside routes out (the tables refused
    /// them): [`merged`](Self::merged) then has none of them.
    pub outside_left_out: Cell<bool>,
    /// Where each route of [`spec`](Self::spec) sits, kept up to date by `sr6 ctl`
    /// lines ([`apply_line`](Self::apply_line)); `None` after any other change of the
    /// configuration (made again at the next line).
    pub route_index: Option<sr6_config::RouteIndex>,
    /// Where each route of [`merged`](Self::merged) sits, kept up to date by changes of
    /// the outside routes ([`super::outside`]); `None` after any other change of it
    /// ([`Control::set_merged`]; made again at the next such change).
    pub merged_index: Option<sr6_config::RouteIndex>,
}

impl Control {
    /// The live configuration of a router started with `spec`, publishing to `shared`:
    /// no neighbours learned, no outside routes, the devices' MACs and MTUs as `spec`
    /// has them (`sr6 run` then fills in the kernel's).
    pub fn new(spec: RouterSpec, shared: Arc<Shared>) -> Control {
        Control {
            config: spec.clone(),
            spec,
            shared,
            dev_macs: BTreeMap::new(),
            dev_mtus: BTreeMap::new(),
            learned: BTreeMap::new(),
            commands: 0,
            kernel_routes: KernelLines::default(),
            fpm_routes: KernelLines::default(),
            spare: None,
            merged: None,
            outside_left_out: Cell::new(false),
            route_index: None,
            merged_index: None,
        }
    }

    /// Where each route of [`spec`](Self::spec) comes from, in its order: `"config"`
    /// when the configuration file has it (the same table, prefix and route), else
    /// `"ctl"`. (The file's routes hashed once: a full table is listed in linear time.)
    pub fn route_origins(&self) -> Vec<&'static str> {
        let config: rustc_hash::FxHashMap<_, _> =
            self.config.routes.iter().map(|c| ((c.table, c.prefix), &c.kind)).collect();
        let origin = |r: &RouteSpec| match config.get(&(r.table, r.prefix)) {
            Some(k) if **k == r.kind => "config",
            _ => "ctl",
        };
        self.spec.routes.iter().map(origin).collect()
    }

    /// Builds the tables a live router runs from `spec` + the learned neighbours:
    /// static `neigh` lines win over learned ones, the devices' real MACs are used,
    /// and packets with an unresolved next hop wait for resolution.
    #[cfg(test)]
    pub fn build(&self, spec: &RouterSpec) -> Result<(Tables, Vec<String>), String> {
        self.build_merged(spec).map(|(t, w, _)| (t, w))
    }

    /// [`build`](Self::build), also returning the configuration the tables were built
    /// from (`spec` with the devices, neighbours and outside routes merged in: what
    /// later changes are compared with, [`super::in_place`]).
    pub fn build_merged(&self, spec: &RouterSpec) -> Result<(Tables, Vec<String>, RouterSpec), String> {
        let (s, plain) = self.assemble(spec)?;
        self.outside_left_out.set(false);
        let (mut t, warnings, built) = match (Tables::build(&s), plain) {
            (Ok((t, w)), _) => (t, w, s),
            // A mirrored route the tables refuse does not stop the configuration's.
            (Err(e), Some(plain)) => {
                let (t, mut w) = Tables::build(&plain).map_err(|e| format!("line {}: {}", e.line, e.message))?;
                let from =
                    if self.fpm_routes.is_empty() { "mirrored from the kernel" } else { "from zebra and the kernel" };
                w.push(format!("the routes {from} are left out: {}", e.message));
                self.outside_left_out.set(true);
                (t, w, plain)
            }
            (Err(e), None) => return Err(format!("line {}: {}", e.line, e.message)),
        };
        t.resolve_neighbours = true;
        Ok((t, warnings, built))
    }

    /// The configuration tables are built from: `spec` with the devices' real MACs and
    /// MTUs, the learned neighbours and the outside routes merged in; and if any outside
    /// route was merged, the same without them.
    pub fn assemble(&self, spec: &RouterSpec) -> Result<(RouterSpec, Option<RouterSpec>), String> {
        let mut s = self.assemble_local(spec)?;
        let outside = self.outside_routes();
        if outside.is_empty() {
            // (No copy of a configuration that may hold a full table.)
            return Ok((s, None));
        }
        let plain = s.clone();
        let mirrored = !merge_kernel_routes(&mut s, &outside).is_empty();
        Ok((s, mirrored.then_some(plain)))
    }

    /// [`assemble`](Self::assemble) without the outside routes: `spec` with the
    /// devices' real MACs and MTUs and the learned neighbours.
    pub fn assemble_local(&self, spec: &RouterSpec) -> Result<RouterSpec, String> {
        let mut s = spec.clone();
        for l in s.links.iter_mut() {
            if let Some(m) = self.dev_macs.get(&l.dev) {
                l.mac = *m;
            }
        }
        for (dev, mac) in &self.dev_macs {
            if s.devices.contains(dev) && !s.links.iter().any(|l| &l.dev == dev) {
                s.links.push(sr6_core::spec::LinkSpec { line: 0, dev: dev.clone(), mac: *mac });
            }
        }
        for (dev, mtu) in &self.dev_mtus {
            match s.mtus.iter_mut().find(|m| &m.dev == dev) {
                Some(m) if m.mtu != *mtu => {
                    return Err(format!(
                        "line {}: {dev} has MTU {mtu} in the kernel, not {}; sr6 does not change a device's MTU \
                         (set it with `ip link set dev {dev} mtu {}` first, or drop the line)",
                        m.line, m.mtu, m.mtu
                    ))
                }
                Some(_) => {}
                None if s.devices.contains(dev) => {
                    s.mtus.push(MtuSpec { line: 0, dev: dev.clone(), mtu: *mtu });
                }
                None => {}
            }
        }
        for ((dev, addr), mac) in &self.learned {
            if s.devices.contains(dev) && !s.neighs.iter().any(|n| &n.dev == dev && n.addr == *addr) {
                s.neighs.push(NeighSpec { line: 0, dev: dev.clone(), addr: *addr, mac: *mac });
            }
        }
        Ok(s)
    }

    /// The lines of the routes from outside the configuration, in the order they are
    /// merged (the first for a prefix wins): zebra's FPM stream's, then the kernel's.
    pub fn outside_routes(&self) -> Vec<String> {
        self.fpm_routes.lines().chain(self.kernel_routes.lines()).cloned().collect()
    }

    /// Puts `lines` in the place of one source's route lines (`slot`: the kernel's or
    /// zebra's) and publishes the tables built with them, printing the build's
    /// warnings: `None` when the lines are those already in place, `Some(Ok(id))` with
    /// the new generation's id, `Some(Err(why))` when the tables refuse them (the old
    /// lines then stay, and so do the tables).
    pub fn replace_outside_routes<T: PartialEq>(
        &mut self,
        slot: fn(&mut Control) -> &mut T,
        lines: T,
    ) -> Option<Result<u64, String>> {
        if *slot(self) == lines {
            return None;
        }
        let old = std::mem::replace(slot(self), lines);
        if let Some(id) = self.try_in_place_current() {
            return Some(Ok(id));
        }
        match self.build_merged(&self.spec) {
            Ok((t, warnings, merged)) => {
                for w in warnings {
                    eprintln!("sr6: warning: {w}");
                }
                Some(Ok(self.publish_built(t, merged)))
            }
            Err(e) => {
                *slot(self) = old;
                Some(Err(e))
            }
        }
    }

    /// Publishes the tables of the current spec (after a neighbour change: in place
    /// when that is all that changed).
    pub fn republish(&mut self) -> Result<u64, String> {
        if let Some(id) = self.try_in_place_edits(&[], None).or_else(|| self.try_in_place_current()) {
            return Ok(id);
        }
        let (t, _, merged) = self.build_merged(&self.spec)?;
        Ok(self.publish_built(t, merged))
    }

    /// Publishes tables built from the whole configuration, `merged` (the generation
    /// they replace can no longer catch up by route changes).
    fn publish_built(&mut self, t: Tables, merged: RouterSpec) -> u64 {
        self.spare = None;
        self.set_merged(merged);
        self.shared.publish(t)
    }

    /// Makes `merged` the configuration the published tables were built from (its
    /// route index then made again when needed).
    pub(super) fn set_merged(&mut self, merged: RouterSpec) {
        self.merged = Some(merged);
        self.merged_index = None;
    }

    /// [`try_in_place`](Self::try_in_place) with the current configuration (set aside
    /// meanwhile, not copied: it may hold a full table).
    fn try_in_place_current(&mut self) -> Option<u64> {
        let spec = std::mem::take(&mut self.spec);
        let id = self.try_in_place(&spec);
        self.spec = spec;
        id
    }

    /// Applies one configuration command (`route add ...`, `route del ...`, any line
    /// of the configuration language) atomically. The line is applied to the
    /// configuration itself, not to a copy (it may hold a full table), and undone if it
    /// is refused: its route changes undone, the rest put back from a copy of it.
    pub fn apply_line(&mut self, line: &str) -> Result<String, String> {
        self.commands += 1;
        let n = self.commands;
        self.apply_logged(&format!("ctl:{n}"), |spec, index| {
            let (r, edits) = sr6_config::parse_line_logged(line, "ctl", n, spec, index);
            (r.map_err(|e| e.to_string()), edits)
        })
    }

    /// Applies the configuration lines of `text` (`sr6 ctl batch`: one per line, `#`
    /// comments and blank lines skipped) as one change: all of them, published once,
    /// or none (the error names the first line refused). As a line is, to the
    /// configuration itself.
    pub fn apply_batch(&mut self, text: &str) -> Result<String, String> {
        self.commands += 1;
        let origin = format!("batch (ctl:{})", self.commands);
        let mut lines = 0;
        let out = self.apply_logged(&origin, |spec, index| {
            let (n, error, edits) = sr6_config::parse_lines_logged(text.lines(), "batch", spec, index);
            lines = n;
            (error.map_or(Ok(()), |e| Err(e.to_string())), edits)
        })?;
        Ok(format!("{lines} line(s) {out}"))
    }

    /// Changes the configuration by `parse` (one command or a batch, from `origin`),
    /// which applies it to the configuration itself with the route index and returns
    /// its route edits, and publishes the result: by the edits in place where it can
    /// ([`try_in_place_edits`](Self::try_in_place_edits)), else the whole way. If
    /// anything refuses it, the edits are undone and the rest of the configuration put
    /// back from a copy without the routes taken before.
    fn apply_logged(
        &mut self,
        origin: &str,
        parse: impl FnOnce(&mut RouterSpec, &mut sr6_config::RouteIndex) -> (Result<(), String>, Vec<RouteEdit>),
    ) -> Result<String, String> {
        let rest = self.spec.clone_without_routes();
        self.index_routes();
        let (parsed, edits) = parse(&mut self.spec, self.route_index.get_or_insert_default());
        let res = match parsed {
            Err(e) => Err(e),
            Ok(()) if edits.iter().all(|e| e.unchanged()) && self.spec.clone_without_routes() == rest => {
                return Ok("nothing to change".into())
            }
            Ok(()) => new_devices(&rest.devices, &self.spec, origin).and_then(|()| {
                if let Some(id) = self.try_in_place_edits(&edits, Some(&rest)) {
                    return Ok(format!("applied (tables generation {id}, in place)"));
                }
                let s = std::mem::take(&mut self.spec);
                let r = self.publish(&s, origin);
                self.spec = s;
                r
            }),
        };
        if res.is_err() {
            let index = self.route_index.get_or_insert_default();
            for e in edits.into_iter().rev() {
                e.undo(&mut self.spec.routes, index);
            }
            let routes = std::mem::take(&mut self.spec.routes);
            self.spec = RouterSpec { routes, ..rest };
        }
        res
    }

    /// Makes [`route_index`](Self::route_index) the configuration's, if it is not.
    pub(super) fn index_routes(&mut self) {
        if !self.route_index.as_ref().is_some_and(|i| i.fits(&self.spec)) {
            self.route_index = Some(sr6_config::RouteIndex::of(&self.spec));
        }
    }

    /// Publishes the tables of configuration `s` (changed by a command from `origin`):
    /// in place where they can be, else built; the answer to the command. Does not
    /// read [`spec`](Self::spec), which the caller sets to `s` if this succeeds.
    fn publish(&mut self, s: &RouterSpec, origin: &str) -> Result<String, String> {
        if let Some(id) = self.try_in_place(s) {
            return Ok(format!("applied (tables generation {id}, in place)"));
        }
        let (t, warnings, merged) = self.build_merged(s).map_err(|e| format!("{origin}: {e}"))?;
        let id = self.publish_built(t, merged);
        let mut out = format!("applied (tables generation {id})");
        for w in warnings {
            out.push_str(&format!("\nwarning: {w}"));
        }
        Ok(out)
    }

    /// Replaces the whole configuration with the file at `path`, atomically.
    pub fn reload(&mut self, path: &Path) -> Result<String, String> {
        let s = sr6_config::parse_file(path).map_err(|e| e.to_string())?;
        let missing: Vec<&String> = s.devices.iter().filter(|d| !self.spec.devices.contains(d)).collect();
        if !missing.is_empty() {
            return Err(format!(
                "{}: device {} is not attached; a running sr6 serves the devices of its start-up configuration (restart it to change devices)",
                path.display(),
                missing.iter().map(|d| d.as_str()).collect::<Vec<_>>().join(", ")
            ));
        }
        // Keep the device order (device indices are fixed while running).
        let mut s = s;
        s.devices = self.spec.devices.clone();
        let (t, warnings, merged) = self.build_merged(&s).map_err(|e| format!("{}:{e}", path.display()))?;
        let id = self.publish_built(t, merged);
        self.config = s.clone();
        self.spec = s;
        self.route_index = None;
        let mut out = format!("reloaded {} (tables generation {id})", path.display());
        for w in warnings {
            out.push_str(&format!("\nwarning: {w}"));
        }
        Ok(out)
    }

    /// Forgets the neighbours learned on device `dev` (it is gone: the kernel's entries
    /// went with it, and a device re-created under its name may face new neighbours);
    /// `true` if there were any.
    pub fn forget_device(&mut self, dev: &str) -> bool {
        let before = self.learned.len();
        self.learned.retain(|(d, _), _| d != dev);
        self.learned.len() != before
    }

    /// Records a neighbour learned from the kernel; `true` if anything changed.
    pub fn learn(&mut self, dev: &str, addr: IpAddr, mac: Option<[u8; 6]>) -> bool {
        let k = (dev.to_string(), addr);
        match mac {
            Some(m) => self.learned.insert(k, m) != Some(m),
            None => self.learned.remove(&k).is_some(),
        }
    }
}

/// Adds to `s` the routes and nexthop objects of the kernel's `lines` that sr6 can
/// forward by (docs/frr.md, "What wins"): a route of the configuration or of `sr6 ctl`
/// for the same prefix in the same table wins; a nexthop id the configuration uses is
/// the configuration's, and the kernel's routes through it are left out; a route or
/// nexthop through a device sr6 does not serve is left out, and so are the routes and
/// groups that need it. The kernel's addresses on devices sr6 serves are added too,
/// unless the configuration has the same address on the device. Returns the lines of
/// what was added.
pub fn merge_kernel_routes<'a>(s: &mut RouterSpec, lines: &'a [String]) -> Vec<&'a str> {
    merge_outside_routes(s, lines).into_iter().filter_map(|i| lines.get(i).map(String::as_str)).collect()
}

/// [`merge_kernel_routes`], returning the indices in `lines` of what was added, in order.
pub fn merge_outside_routes(s: &mut RouterSpec, lines: &[String]) -> Vec<usize> {
    // One spec for all the kernel's lines, in order (nexthops first), so that routes
    // and groups find the nexthops they name; a line it refuses is left out alone.
    let mut k = RouterSpec::default();
    // (Line numbers are the lines' indices + 1: how what was added is found again.)
    let _ = sr6_config::parse_lines(lines.iter().map(String::as_str), "kernel", &mut k, true);
    let mut added: Vec<usize> = Vec::new();
    // An address of a device sr6 serves is taken unless the configuration has it (on
    // that device, whatever its length).
    for a in &k.addrs {
        if s.devices.contains(&a.dev) && !s.addrs.iter().any(|x| x.dev == a.dev && x.addr == a.addr) {
            s.addrs.push(a.clone());
            added.push(a.line);
        }
    }
    let ours: Vec<u32> = s.nexthops.iter().map(|n| n.id).collect();
    let mut taken_nh: Vec<u32> = Vec::new();
    for n in &k.nexthops {
        use sr6_core::spec::NexthopKind as N;
        let ok = !ours.contains(&n.id)
            && match &n.kind {
                N::Single { dev, .. } => s.devices.contains(dev),
                N::Blackhole { .. } => true,
                N::Group { members } => members.iter().all(|(m, _)| taken_nh.contains(m)),
            };
        if ok {
            taken_nh.push(n.id);
            s.nexthops.push(n.clone());
            added.push(n.line);
        }
    }
    let mut taken_routes: std::collections::HashSet<(u32, sr6_core::spec::Prefix)> =
        s.routes.iter().map(|x| (x.table, x.prefix)).collect();
    for r in k.routes {
        let taken = !taken_routes.insert((r.table, r.prefix));
        let usable = match &r.kind {
            sr6_core::spec::RouteKind::Nhid { id } => taken_nh.contains(id),
            kind => served(kind, &s.devices),
        };
        if !taken && usable {
            added.push(r.line);
            s.routes.push(r);
        }
    }
    added.sort_unstable();
    added.dedup();
    added.iter().map(|l| l.wrapping_sub(1)).filter(|i| *i < lines.len()).collect()
}

/// Refuses configuration `s` if it names a device `devices` (the running router's)
/// does not have: a running sr6 serves the devices it started with.
fn new_devices(devices: &[String], s: &RouterSpec, origin: &str) -> Result<(), String> {
    let new: Vec<&str> = s.devices.iter().filter(|d| !devices.contains(d)).map(|d| d.as_str()).collect();
    if new.is_empty() {
        return Ok(());
    }
    Err(format!(
        "{origin}: device {} is not attached; a running sr6 serves the devices of its start-up configuration",
        new.join(", ")
    ))
}

/// Whether every device route `kind` names is one of `devices` (routes through a
/// nexthop object are judged by it, in [`merge_kernel_routes`]).
pub(super) fn served(kind: &sr6_core::spec::RouteKind, devices: &[String]) -> bool {
    use sr6_core::spec::RouteKind as K;
    let known = |d: &Option<sr6_core::spec::DevName>| d.as_deref().is_none_or(|d| devices.iter().any(|x| x == d));
    match kind {
        K::Forward { dev, .. } | K::Seg6 { dev, .. } | K::Seg6Local { dev, .. } => known(dev),
        K::Multipath { paths } => paths.iter().all(|p| known(&p.dev)),
        K::Blackhole | K::Unreachable => true,
        _ => false,
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use std::sync::atomic::AtomicBool;

    /// A live router's control side started with configuration `src`.
    pub(crate) fn control(src: &str) -> Control {
        let spec = sr6_config::parse_str(src, "t").unwrap();
        let t = Tables::build(&spec).unwrap().0;
        let shared = Arc::new(Shared::new(t, 1, Arc::new(AtomicBool::new(false))));
        // As `sr6 run` starts.
        let mut c = Control::new(spec, shared);
        c.republish().unwrap();
        c
    }

    const CONF: &str = "addr add fc00::1/64 dev eth0\nroute add fc00:1::/64 via fc00::2 dev eth0\n";

    #[test]
    fn a_refused_command_changes_nothing() {
        let mut c = control(CONF);
        let before = c.spec.clone();
        let gen = c.shared.gen.load().id;
        let e = c.apply_line("route add fc00:1::/64 via fc00::3 dev eth0").unwrap_err();
        assert!(e.contains("already exists"), "{e}");
        let e = c.apply_line("route add fc00:2::/64 via fc00::3 dev eth9").unwrap_err();
        assert!(e.contains("eth9 is not attached"), "{e}");
        let e = c.apply_line("route add fc00:3::/64 encap seg6 mode encap segs fc00::9 hmac 4 dev eth0").unwrap_err();
        assert!(e.contains("HMAC key id 4"), "{e}");
        // Refused by the tables after the line changed the configuration itself: the
        // route it replaced is put back.
        let e =
            c.apply_line("route replace fc00:1::/64 encap seg6 mode encap segs fc00::9 hmac 4 dev eth0").unwrap_err();
        assert!(e.contains("HMAC key id 4"), "{e}");
        assert_eq!(c.spec, before);
        assert_eq!(c.shared.gen.load().id, gen);
        // (The undo does not stand in the way of the changes after it.)
        c.apply_line("route del fc00:1::/64").unwrap();
        c.apply_line("route add fc00:1::/64 via fc00::2 dev eth0").unwrap();
        assert_eq!(c.spec.routes.len(), before.routes.len());
        let out = c.apply_line("route replace fc00:1::/64 via fc00::2 dev eth0").unwrap();
        assert!(out.contains("in place"), "{out}");
    }

    /// Mirrored kernel routes go under the configuration's: the configuration wins a
    /// prefix, a route through a device sr6 does not serve or a nexthop object is left
    /// out, and one the tables refuse leaves the configuration's routes standing.
    #[test]
    fn kernel_routes_merge_under_the_configuration() {
        let mut c = control(CONF);
        let lines: Vec<String> = vec![
            "ip -6 route add fc00:1::/64 via fc00::9 dev eth0 metric 20".into(),
            "ip -6 route add fc00:2::/64 via fc00::2 dev eth0 metric 1024".into(),
            "ip -6 route add fc00:3::/64 via fc00::2 dev eth7 metric 1024".into(),
            "ip -6 route add fc00:4::/64 nhid 5".into(),
            "ip -6 route add blackhole fc00:5::/64 metric 1024".into(),
            "ip -6 nexthop add id 6 via fc00::2 dev eth0".into(),
            "ip -6 nexthop add id 7 via fc00::2 dev eth7".into(),
            "ip nexthop add id 8 group 6/7".into(),
            "ip -6 route add fc00:7::/64 nhid 6 metric 1024".into(),
            "ip -6 route add fc00:8::/64 nhid 8 metric 1024".into(),
        ];
        c.kernel_routes = KernelLines::listed(lines.clone());
        let mut s = c.spec.clone();
        let used = merge_kernel_routes(&mut s, &lines);
        // Nexthop 7 is through a device sr6 does not serve: it, group 8 and the route
        // through 8 are left out; nexthop 5 does not exist.
        let k = |i: usize| lines[i].as_str();
        assert_eq!(used, [k(1), k(4), k(5), k(8)]);
        let (t, w) = c.build(&c.spec).unwrap();
        assert!(w.is_empty(), "{w:?}");
        let fib = t.fibs.main();
        let route = |a: &str| fib.lookup6(&a.parse::<std::net::Ipv6Addr>().unwrap().octets());
        // fc00:1::/64 stays the configuration's (via fc00::2, not fc00::9).
        assert_eq!(route("fc00:1::1"), route("fc00:2::1"));
        assert!(matches!(route("fc00:5::1"), Some(sr6_core::tables::Route::Blackhole)));
        assert!(route("fc00:3::1").is_none() && route("fc00:4::1").is_none() && route("fc00:8::1").is_none());
        assert!(route("fc00:7::1").is_some());
        // A mirrored route the tables refuse (an HMAC key sr6 has not): left out, said.
        c.kernel_routes
            .nexthops
            .push("ip -6 route add fc00:6::/64 encap seg6 mode encap segs fc00::9 hmac 4 dev eth0".into());
        let (t, w) = c.build(&c.spec).unwrap();
        assert!(w.iter().any(|w| w.contains("mirrored from the kernel are left out") && w.contains("HMAC")), "{w:?}");
        assert!(t.fibs.main().lookup6(&"fc00:1::1".parse::<std::net::Ipv6Addr>().unwrap().octets()).is_some());
    }

    /// The kernel's global addresses on devices sr6 serves are sr6's too: their
    /// connected prefixes are routed; the configuration's own address stays as it
    /// wrote it, and an address on another device is left out.
    #[test]
    fn kernel_addresses_merge_under_the_configuration() {
        let mut c = control(CONF);
        let lines: Vec<String> = vec![
            "ip -6 addr add fc00::1/48 dev eth0".into(),
            "ip -6 addr add fc00:c::1/64 dev eth0".into(),
            "ip addr add 192.0.2.1/24 dev eth0".into(),
            "ip -6 addr add fc00:d::1/64 dev eth7".into(),
        ];
        let mut s = c.spec.clone();
        let used = merge_kernel_routes(&mut s, &lines);
        assert_eq!(used, [lines[1].as_str(), lines[2].as_str()]);
        assert_eq!(s.addrs.iter().find(|a| a.addr.to_string() == "fc00::1").map(|a| a.prefix_len), Some(64));
        c.replace_outside_routes(|c| &mut c.kernel_routes, KernelLines::listed(lines)).unwrap().unwrap();
        let g = c.shared.gen.load();
        let fib = g.tables.fibs.main();
        let on_link = fib.lookup6(&"fc00:c::2".parse::<std::net::Ipv6Addr>().unwrap().octets());
        assert!(on_link.is_some(), "the kernel address's prefix is connected");
        let connected = fib.lookup6(&"fc00::2".parse::<std::net::Ipv6Addr>().unwrap().octets());
        assert_eq!(format!("{on_link:?}"), format!("{connected:?}"), "on the link, as the configuration's prefix");
        assert!(fib.lookup6(&"fc00:d::2".parse::<std::net::Ipv6Addr>().unwrap().octets()).is_none());
        assert!(fib.lookup4(&[192, 0, 2, 9]).is_some());
        c.replace_outside_routes(|c| &mut c.kernel_routes, KernelLines::default()).unwrap().unwrap();
        let g = c.shared.gen.load();
        assert!(g.tables.fibs.main().lookup6(&"fc00:c::2".parse::<std::net::Ipv6Addr>().unwrap().octets()).is_none());
    }

    /// A source's new lines publish a generation; the same lines again publish none;
    /// zebra's lines win a prefix over the kernel's.
    #[test]
    fn outside_routes_are_replaced_by_source() {
        let mut c = control(CONF);
        let gen = c.shared.gen.load().id;
        let k = KernelLines::listed(vec!["ip -6 route add fc00:2::/64 via fc00::2 dev eth0 metric 20".to_string()]);
        let id = c.replace_outside_routes(|c| &mut c.kernel_routes, k.clone()).unwrap().unwrap();
        assert!(id > gen);
        assert!(c.replace_outside_routes(|c| &mut c.kernel_routes, k).is_none());
        assert_eq!(c.shared.gen.load().id, id);
        let f = KernelLines::listed(vec!["ip -6 route add blackhole fc00:2::/64 metric 20".to_string()]);
        c.replace_outside_routes(|c| &mut c.fpm_routes, f).unwrap().unwrap();
        let g = c.shared.gen.load();
        let route = g.tables.fibs.main().lookup6(&"fc00:2::1".parse::<std::net::Ipv6Addr>().unwrap().octets());
        assert!(matches!(route, Some(sr6_core::tables::Route::Blackhole)), "{route:?}");
        assert_eq!(c.kernel_routes.len(), 1);
    }

    /// Plain route changes are published in place, on the spare generation once the
    /// workers let go of it; what is published is what a build of the configuration
    /// gives. Other changes (a new table) build, and the spare is gone.
    #[test]
    fn route_changes_are_published_in_place() {
        let mut c = control(CONF);
        let norm = |t: &Tables, a: &str| {
            let a: std::net::Ipv6Addr = a.parse().unwrap();
            let r = t.fibs.main().lookup6(&a.octets());
            let r = match r {
                Some(sr6_core::tables::Route::Forward(sr6_core::tables::NextHop::Adj(i))) => {
                    format!("{:?}", t.adjacencies[i as usize])
                }
                r => format!("{r:?}"),
            };
            (r, *t.fibs.main().lpm6.lookup_aux(u128::from(a)).1)
        };
        let lines = [
            "route add fc00:2::/64 via fc00::3 dev eth0",
            "route replace fc00:2::/64 via fc00::4 dev eth0",
            "route add blackhole fc00:3::/64",
            "route del fc00:2::/64",
            "route add fc00:2:1::/48 via fc00::2 dev eth0",
            "route del fc00:1::/64",
        ];
        let mut gens = vec![c.shared.gen.load().id];
        for line in lines {
            let out = c.apply_line(line).unwrap();
            assert!(out.contains("in place"), "{line}: {out}");
            let g = c.shared.gen.load();
            gens.push(g.id);
            let (built, _) = c.build(&c.spec).unwrap();
            for a in ["fc00:1::1", "fc00:2::1", "fc00:2:1::1", "fc00:3::1", "fc00::9", "2001:db8::1"] {
                assert_eq!(norm(&g.tables, a), norm(&built, a), "{line}: {a}");
            }
        }
        assert!(gens.windows(2).all(|w| w[1] > w[0]), "{gens:?}");
        assert!(c.spare.is_some());
        let out = c.apply_line("route add fc00:4::/64 nexthop via fc00::2 dev eth0 nexthop via fc00::3").unwrap();
        assert!(out.contains("in place"), "{out}");
        let out = c.apply_line("route add fc00:5::/64 via fc00::2 dev eth0 table 7").unwrap();
        assert!(out.contains("in place"), "a route in a new table: {out}");
        // A device route of the main table once a gateway without a device (fc00::3,
        // above) was resolved on one builds.
        let out = c.apply_line("route add fc00:7::/64 dev eth0").unwrap();
        assert!(!out.contains("in place"), "{out}");
        assert!(c.spare.is_none());
        let out = c.apply_line("route add fc00:6::/64 via fc00::2 dev eth0").unwrap();
        assert!(out.contains("in place"), "{out}");
    }

    /// SIDs of the stateless behaviours and binding SIDs change in place too, through
    /// `sr6 ctl` as through the kernel's mirror; a SID that keeps state builds.
    #[test]
    fn sid_changes_are_published_in_place() {
        let mut c = control(CONF);
        let sid = |c: &Control, a: &str| {
            let g = c.shared.gen.load();
            let a: std::net::Ipv6Addr = a.parse().unwrap();
            match g.tables.fibs.main().lookup6(&a.octets()) {
                Some(sr6_core::tables::Route::Sid(i)) => {
                    let s = &g.tables.sids[i as usize];
                    let word = g.tables.fibs.main().words6.get(u128::from(a));
                    Some(format!("{} {} {}", s.action, (word >> 48) == u64::from(i), word as u8 != 0))
                }
                _ => None,
            }
        };
        c.apply_line("route add fc00:e::1/128 encap seg6local action End.DT6 table 254 dev eth0").unwrap();
        for (line, a, want) in [
            ("route add fc00:e::2/128 encap seg6local action End dev eth0", "fc00:e::2", Some("End true true")),
            (
                "route replace fc00:e::2/128 encap seg6local action End.X nh6 fc00::2 dev eth0",
                "fc00:e::2",
                Some("End.X nh6 fc00::2 true true"),
            ),
            // The last SID takes the deleted one's index.
            ("route del fc00:e::1/128", "fc00:e::2", Some("End.X nh6 fc00::2 true true")),
            (
                "route add fc00:f::/48 encap seg6local action End flavors next-csid dev eth0",
                "fc00:f::",
                Some("End flavors next-csid lblen 32 nflen 16 false false"),
            ),
            ("route del fc00:e::2/128", "fc00:e::2", None),
        ] {
            let out = c.apply_line(line).unwrap();
            assert!(out.contains("in place"), "{line}: {out}");
            assert_eq!(sid(&c, a).as_deref(), want, "{line}");
        }
        let g = c.shared.gen.load();
        assert_eq!(g.tables.sids.len(), 1);
        let f = g.tables.fibs.main().lookup6(&"fc00:f:0:1::".parse::<std::net::Ipv6Addr>().unwrap().octets());
        assert_eq!(f, Some(sr6_core::tables::Route::Sid(0)));
        // A binding SID with its policy, in place too, End.Limit with its buckets, an SR
        // proxy; a next hop behind a gateway builds.
        let out = c
            .apply_line("route add fc00:e::3/128 encap seg6local action End.B6.Encaps srh segs fc00::9 dev eth0")
            .unwrap();
        assert!(out.contains("in place"), "{out}");
        let g = c.shared.gen.load();
        let p = match g.tables.fibs.main().lookup6(&"fc00:e::3".parse::<std::net::Ipv6Addr>().unwrap().octets()) {
            Some(sr6_core::tables::Route::Sid(i)) => g.tables.sids[i as usize].state.policy,
            other => panic!("{other:?}"),
        };
        assert_eq!(g.tables.policies[p as usize].segs, ["fc00::9".parse::<std::net::Ipv6Addr>().unwrap()]);
        drop(g);
        let out = c.apply_line("route add fc00:e::4/128 encap seg6local action End.Limit dev eth0").unwrap();
        assert!(out.contains("in place"), "{out}");
        let out = c
            .apply_line("route add fc00:e::5/128 encap seg6local action End.AM nh6 fc00::2 oif eth0 iif eth0 dev eth0")
            .unwrap();
        assert!(out.contains("in place"), "{out}");
        let out = c.apply_line("route add fc00:e::6/128 encap seg6local action End.X nh6 fc00:1::5 dev eth0").unwrap();
        assert!(!out.contains("in place"), "{out}");
    }

    /// An End.BPF SID and LWT BPF routes change in place: their programs were loaded
    /// when their lines were read, and the tables only point at them; a deleted LWT
    /// route's index goes to the last one, whose FIB entry follows.
    #[test]
    fn bpf_routes_change_in_place() {
        let dir = crate::test_support::scratch_dir("ctl-bpf");
        let end = crate::test_support::compile("end", &dir);
        let xmit = crate::test_support::compile("lwt_xmit", &dir);
        let mut c = control(CONF);
        let lookup = |c: &Control, a: &str| {
            let g = c.shared.gen.load();
            match g.tables.fibs.main().lookup6(&a.parse::<std::net::Ipv6Addr>().unwrap().octets()) {
                Some(sr6_core::tables::Route::Sid(i)) => Some(g.tables.sids[i as usize].behaviour.keyword.to_string()),
                Some(sr6_core::tables::Route::Lwt(i)) => {
                    let r = &g.tables.lwts[i as usize];
                    Some(format!("{} {}", sr6_core::behaviour::proxy::prefix_text(&r.prefix), r.bpf))
                }
                _ => None,
            }
        };
        let x = xmit.display();
        for (line, a, want) in [
            (
                format!(
                    "route add fc00:e::7/128 encap seg6local action End.BPF endpoint obj {} sec end dev eth0",
                    end.display()
                ),
                "fc00:e::7",
                Some("End.BPF".to_string()),
            ),
            (
                format!("route add fc00:5::/64 encap bpf xmit obj {x} sec xmit_ip6_ok dev eth0"),
                "fc00:5::1",
                Some(format!("fc00:5::/64 xmit obj {x} sec xmit_ip6_ok")),
            ),
            (
                format!("route add fc00:6::/64 encap bpf xmit obj {x} sec drop_udp via fc00::2 dev eth0"),
                "fc00:6::1",
                Some(format!("fc00:6::/64 xmit obj {x} sec drop_udp")),
            ),
            // fc00:6::/64's route takes index 0.
            ("route del fc00:5::/64".to_string(), "fc00:6::1", Some(format!("fc00:6::/64 xmit obj {x} sec drop_udp"))),
            ("route del fc00:e::7/128".to_string(), "fc00:e::7", None),
        ] {
            let out = c.apply_line(&line).unwrap();
            assert!(out.contains("in place"), "{line}: {out}");
            assert_eq!(lookup(&c, a), want, "{line}");
        }
        assert_eq!(c.shared.gen.load().tables.lwts.len(), 1);
        std::fs::remove_dir_all(&dir).ok();
    }

    /// Head-end policies change in place, whatever gives their source: a replaced or
    /// deleted policy's index goes to the next new one, and `show counters` lists the
    /// policies in use.
    #[test]
    fn policy_changes_are_published_in_place() {
        let mut c = control(&format!("{CONF}sr tunsrc set fc00::1\n"));
        let policy = |c: &Control, a: &str| {
            let g = c.shared.gen.load();
            let a: std::net::Ipv6Addr = a.parse().unwrap();
            match g.tables.fibs.main().lookup6(&a.octets()) {
                Some(sr6_core::tables::Route::Policy(i)) => {
                    let p = &g.tables.policies[i as usize];
                    Some(format!("{i} {} {:?}", p.mode.keyword(), p.segs))
                }
                _ => None,
            }
        };
        for (line, a, want) in [
            (
                "route add fc00:a::/48 encap seg6 mode encap segs fc00:1::9,fc00::8 dev eth0",
                "fc00:a::1",
                Some("0 encap [fc00:1::9, fc00::8]"),
            ),
            (
                "route add fc00:b::/48 encap seg6 mode inline segs fc00:2::9 dev eth0",
                "fc00:b::1",
                Some("1 inline [fc00:2::9]"),
            ),
            (
                "route replace fc00:a::/48 encap seg6 mode encap.red segs fc00:1::7 dev eth0",
                "fc00:a::1",
                Some("2 encap.red [fc00:1::7]"),
            ),
            // The retired index 0 is the next policy's.
            (
                "route add fc00:c::/48 encap seg6 mode encap segs fc00:1::6 dev eth0",
                "fc00:c::1",
                Some("0 encap [fc00:1::6]"),
            ),
            ("route del fc00:b::/48", "fc00:b::1", None),
        ] {
            let out = c.apply_line(line).unwrap();
            assert!(out.contains("in place"), "{line}: {out}");
            assert_eq!(policy(&c, a).as_deref(), want, "{line}");
        }
        let g = c.shared.gen.load();
        let json = crate::report::json(
            &g.tables,
            &sr6_core::counters::Counters::new(g.tables.devices.len(), 0, g.tables.policies.len()),
        );
        let segs: Vec<&str> =
            json["policies"].as_array().unwrap().iter().map(|p| p["segs"][0].as_str().unwrap()).collect();
        assert_eq!(segs, ["fc00:1::6", "fc00:1::7"], "the policies in use, by index");
        drop(g);
        // Without `sr tunsrc`: the route's device gives the source; with no device, the
        // route to the first segment does; both in place, and main-table routes too.
        let mut c = control(CONF);
        for line in [
            "route add fc00:a::/48 encap seg6 mode encap segs fc00:1::9 dev eth0",
            "route add fc00:b::/48 encap seg6 mode encap segs fc00:1::9 via fc00::2",
            "route add fc00:2::/64 via fc00::2 dev eth0",
        ] {
            let out = c.apply_line(line).unwrap();
            assert!(out.contains("in place"), "{line}: {out}");
        }
    }

    /// An End.Limit SID keeps its token buckets across new tables, made in place (the
    /// two copies in-place changes alternate share them) or built; a changed action
    /// gets new ones.
    #[test]
    fn end_limit_buckets_outlive_new_tables() {
        let mut c =
            control(&format!("{CONF}route add fc00:e::1/128 encap seg6local action End.Limit rate 80 dev eth0\n"));
        let limiter = |c: &Control| {
            let g = c.shared.gen.load();
            let i = g.tables.sids.iter().find(|s| s.behaviour.keyword == "End.Limit").unwrap().state.limiter;
            g.tables.limiters[i as usize].clone()
        };
        let first = limiter(&c);
        for line in [
            "route add fc00:2::/64 via fc00::2 dev eth0",
            "route add fc00:3::/64 via fc00::2 dev eth0",
            "route add fc00:4::/64 via fc00::3 dev eth0",
            // Another End.Limit SID, in place.
            "route add fc00:e::2/128 encap seg6local action End.Limit rate 40 dev eth0",
            // A SID that builds (its next hop is behind a gateway).
            "route add fc00:e::3/128 encap seg6local action End.X nh6 fc00:1::5 dev eth0",
            "route del fc00:3::/64",
        ] {
            c.apply_line(line).unwrap();
            assert!(Arc::ptr_eq(&limiter(&c), &first), "{line}: the buckets were replaced");
        }
        c.apply_line("route replace fc00:e::1/128 encap seg6local action End.Limit rate 160 dev eth0").unwrap();
        assert!(!Arc::ptr_eq(&limiter(&c), &first), "a new rate, new buckets");
    }

    /// Routes mirrored from the kernel change in place too, and merge as a build merges
    /// them: the configuration's route wins its prefix; when `sr6 ctl` deletes it, the
    /// kernel's shows through.
    #[test]
    fn outside_routes_change_in_place_too() {
        let mut c = control(CONF);
        let via = |c: &Control, a: &str| {
            let g = c.shared.gen.load();
            match g.tables.fibs.main().lookup6(&a.parse::<std::net::Ipv6Addr>().unwrap().octets()) {
                Some(sr6_core::tables::Route::Forward(sr6_core::tables::NextHop::Adj(i))) => {
                    Some(g.tables.adjacencies[i as usize].nh.to_string())
                }
                _ => None,
            }
        };
        let k = |p: &str| format!("ip -6 route add {p} via fc00::9 dev eth0 metric 20");
        let listed = |l: Vec<String>| KernelLines::listed(l);
        c.replace_outside_routes(|c| &mut c.kernel_routes, listed(vec![k("fc00:1::/64"), k("fc00:7::/64")]))
            .unwrap()
            .unwrap();
        assert!(c.spare.is_some(), "published in place");
        assert_eq!(via(&c, "fc00:1::1").as_deref(), Some("fc00::2"), "the configuration's");
        assert_eq!(via(&c, "fc00:7::1").as_deref(), Some("fc00::9"));
        let out = c.apply_line("route del fc00:1::/64").unwrap();
        assert!(out.contains("in place"), "{out}");
        assert_eq!(via(&c, "fc00:1::1").as_deref(), Some("fc00::9"), "the kernel's shows through");
        c.replace_outside_routes(|c| &mut c.kernel_routes, listed(vec![k("fc00:1::/64")])).unwrap().unwrap();
        assert_eq!(via(&c, "fc00:7::1"), None, "withdrawn");
        assert!(c.spare.is_some(), "still in place");
        let (built, _) = c.build(&c.spec).unwrap();
        let g = c.shared.gen.load();
        for a in ["fc00:1::1", "fc00:7::1", "fc00::5"] {
            let a = a.parse::<std::net::Ipv6Addr>().unwrap().octets();
            assert_eq!(
                format!("{:?}", g.tables.fibs.main().lpm6.lookup_aux(u128::from_be_bytes(a)).1),
                format!("{:?}", built.fibs.main().lpm6.lookup_aux(u128::from_be_bytes(a)).1)
            );
        }
    }

    /// A neighbour learned or forgotten is published in place: the gateway's hop takes
    /// its Ethernet header, as a build gives it.
    #[test]
    fn neighbours_change_in_place() {
        let mut c = control(CONF);
        let key = u128::from_be_bytes("fc00:1::9".parse::<std::net::Ipv6Addr>().unwrap().octets());
        let hop = |c: &Control| *c.shared.gen.load().tables.fibs.main().lpm6.lookup_aux(key).1;
        assert_eq!(hop(&c).code, 0, "no neighbour yet: no gateway hop");
        assert!(c.learn("eth0", "fc00::2".parse().unwrap(), Some([2, 0, 0, 0, 0, 0x22])));
        c.republish().unwrap();
        assert!(c.spare.is_some(), "published in place");
        assert_eq!(hop(&c).code, 1 << 28, "a gateway hop (Fib::GATEWAY)");
        assert_eq!(hop(&c).eth[..6], [2, 0, 0, 0, 0, 0x22]);
        let (built, _) = c.build(&c.spec).unwrap();
        assert_eq!(hop(&c), *built.fibs.main().lpm6.lookup_aux(key).1);
        assert!(c.learn("eth0", "fc00::2".parse().unwrap(), None));
        c.republish().unwrap();
        assert!(c.spare.is_some());
        assert_eq!(hop(&c).code, 0, "forgotten");
    }

    /// A batch is one change: published once, or refused whole at its first bad line.
    #[test]
    fn a_batch_is_one_change() {
        let mut c = control(CONF);
        let gen = c.shared.gen.load().id;
        let before = c.spec.clone();
        let e = c.apply_batch("route add fc00:2::/64 via fc00::3 dev eth0\n# x\nroute add fc00:3::/64 via nowhere\n");
        assert!(e.as_ref().is_err_and(|e| e.contains("batch:3")), "{e:?}");
        assert_eq!(c.shared.gen.load().id, gen);
        assert_eq!(c.spec, before, "the first line is undone");
        // Refused by the tables, after every line was applied to the configuration.
        let e = c.apply_batch(
            "route del fc00:1::/64\naddr add fc00:9::1/64 dev eth0\n\
             route add fc00:3::/64 encap seg6 mode encap segs fc00::9 hmac 4 dev eth0\n",
        );
        assert!(e.as_ref().is_err_and(|e| e.contains("HMAC key id 4")), "{e:?}");
        assert_eq!(c.shared.gen.load().id, gen);
        assert_eq!(c.spec, before, "every line is undone");
        let batch: String =
            (0..300).map(|i| format!("route add fc00:{:x}::/64 via fc00::2 dev eth0\n", 0x100 + i)).collect();
        let out = c.apply_batch(&batch).unwrap();
        assert!(out.starts_with("300 line(s) applied"), "{out}");
        assert_eq!(c.shared.gen.load().id, gen + 1, "published once");
        let g = c.shared.gen.load();
        assert!(g.tables.fibs.main().lookup6(&"fc00:1ff::1".parse::<std::net::Ipv6Addr>().unwrap().octets()).is_some());
        let dels: String = (0..300).map(|i| format!("route del fc00:{:x}::/64\n", 0x100 + i)).collect();
        let out = c.apply_batch(&dels).unwrap();
        assert!(out.contains("in place"), "{out}");
        let g = c.shared.gen.load();
        assert!(g.tables.fibs.main().lookup6(&"fc00:1ff::1".parse::<std::net::Ipv6Addr>().unwrap().octets()).is_none());
    }

    #[test]
    fn commands_publish_new_tables() {
        let mut c = control(CONF);
        let out = c.apply_line("route add fc00:2::/64 via fc00::3 dev eth0").unwrap();
        assert!(out.starts_with("applied"), "{out}");
        let g = c.shared.gen.load();
        assert!(g.id > 0);
        assert!(g.tables.resolve_neighbours);
        assert!(g.tables.fibs[0].lookup6(&"fc00:2::5".parse::<std::net::Ipv6Addr>().unwrap().octets()).is_some());
        c.apply_line("route del fc00:2::/64").unwrap();
        let g = c.shared.gen.load();
        assert!(g.tables.fibs[0].lookup6(&"fc00:2::5".parse::<std::net::Ipv6Addr>().unwrap().octets()).is_none());
    }

    /// The kernel's MTU is the one checked; a line that agrees is fine, one that
    /// disagrees (at start or by `ctl`) is refused and changes nothing.
    #[test]
    fn device_mtus_come_from_the_kernel() {
        let mut c = control(CONF);
        c.dev_mtus.insert("eth0".into(), 1400);
        c.republish().unwrap();
        assert_eq!(c.shared.gen.load().tables.devices[0].mtu, 1400);
        let out = c.apply_line("link set dev eth0 mtu 1400").unwrap();
        assert!(out.starts_with("applied"), "{out}");
        let gen = c.shared.gen.load().id;
        let e = c.apply_line("link set dev eth0 mtu 1500").unwrap_err();
        assert!(e.contains("eth0 has MTU 1400 in the kernel, not 1500"), "{e}");
        assert_eq!(c.shared.gen.load().id, gen);
        let mut c = control(&format!("{CONF}link set eth0 mtu 9000\n"));
        c.dev_mtus.insert("eth0".into(), 1500);
        let e = c.republish().unwrap_err();
        assert!(e.contains("has MTU 1500 in the kernel, not 9000"), "{e}");
    }

    #[test]
    fn learned_neighbours_yield_to_static_ones() {
        let mut c = control(&format!("{CONF}neigh add fc00::2 lladdr 02:00:00:00:00:02 dev eth0\n"));
        c.dev_macs.insert("eth0".into(), [2, 0, 0, 0, 0, 0xaa]);
        assert!(c.learn("eth0", "fc00::2".parse().unwrap(), Some([2, 0, 0, 0, 0, 0x99])));
        assert!(c.learn("eth0", "fc00::3".parse().unwrap(), Some([2, 0, 0, 0, 0, 3])));
        assert!(!c.learn("eth0", "fc00::3".parse().unwrap(), Some([2, 0, 0, 0, 0, 3])));
        c.republish().unwrap();
        let g = c.shared.gen.load();
        let t = &g.tables;
        let k = |a: &str| sr6_core::tables::neigh_key(a.parse().unwrap());
        assert_eq!(t.neighbour_eth(0, k("fc00::2")).unwrap(), [2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 0xaa]);
        assert_eq!(t.neighbour_eth(0, k("fc00::3")).unwrap()[..6], [2, 0, 0, 0, 0, 3]);
        assert!(c.learn("eth0", "fc00::3".parse().unwrap(), None));
        c.republish().unwrap();
        assert!(c.shared.gen.load().tables.neighbour_eth(0, k("fc00::3")).is_none());
        // A device that goes away takes its learned neighbours along, not the static ones.
        assert!(c.learn("eth0", "fc00::4".parse().unwrap(), Some([2, 0, 0, 0, 0, 4])));
        assert!(c.forget_device("eth0"));
        assert!(!c.forget_device("eth0"));
        c.republish().unwrap();
        let g = c.shared.gen.load();
        assert!(g.tables.neighbour_eth(0, k("fc00::4")).is_none());
        assert!(g.tables.neighbour_eth(0, k("fc00::2")).is_some());
    }
}
