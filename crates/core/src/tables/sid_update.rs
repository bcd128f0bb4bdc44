//! Local SIDs added, replaced and removed in place ([`Tables::apply_routes`]): an
//! IGP's or a controller's SIDs come and go by the thousand, like routes. A SID of any
//! behaviour is built by its behaviour's `build` as in a whole build
//! ([`Builder::over`]), and what it owns besides is made and retired with it:
//! - the ones that keep nothing outside their own [`Sid`]: End, End.X, End.T,
//!   End.DX2/4/6, End.DT4/6/46, End.MAP, with any flavours; End.M.GTP4.E and
//!   End.M.GTP6.E (RFC 9433 §6.6, §6.5); GTP-U.Decap, the SID an `encap gtp decap`
//!   route makes ([`sid_of`]); End.BPF, whose program (and its maps) was
//!   loaded when its line was read, and which the SID only points at;
//! - the ones that own a policy ([`OWN_POLICY`]): the binding SIDs End.B6 and
//!   End.B6.Encaps(.Red), and the GTP-U translations End.M.GTP6.D/Di and H.M.GTP4.D
//!   (RFC 9433 §6.3, §6.4, §6.7; the last on an IPv4 prefix), whose policy is made as a
//!   route's is (`policy_update.rs`) and retired with the SID;
//! - End.Limit, whose token buckets take a free index of [`Tables::limiters`] and are
//!   retired with the SID (a SID that the new tables keep takes over the old buckets
//!   at publication, `Tables::adopt_limiters`);
//! - the SR proxies End.AS (which owns a policy too), End.AD, End.EAD4/6 and End.AM:
//!   after a batch that changed SIDs while there were or will be proxies, the proxies
//!   are made again from the SIDs (`proxy::build`: each one's index, the devices'
//!   inbound policies, the devices the fast path declines), each keeping the shared
//!   state (cache, counters) of the proxy of the same prefix, behaviour and `iif`
//!   before it. A batch whose proxies would break the `iif` rule is refused whole
//!   ([`Tables::check_proxies`]), and the build says why.
//!
//! Next hops are resolved as the build could: through `oif` or on a device route of
//! the main table (the tables keep those, `Tables::onlink`). A next hop behind a
//! gateway, a table the tables do not have, or policy routing rules (which change the
//! table a SID names) make the caller build.
//!
//! A new SID takes the next index; a removed one's index is taken by the last SID
//! (swap-remove), whose FIB entry, fast-path word and hop are renumbered (and a
//! proxy's entry, made again after the batch).

use super::build::{csid_hop, fast_sid_at, Builder, PolicySpec};
use super::update::{lpm_key, NeedsBuild, RouteChange};
use super::{Policy, Route, Sid, SidBuilder, Tables};
use crate::spec::{Prefix, RouteKind, RouteSpec, RouterSpec, SidAction};

/// The behaviours whose SIDs own a policy ([`SidState::policy`](super::SidState)):
/// the binding SIDs, and the GTP-U translations that encapsulate.
const OWN_POLICY: &[&str] =
    &["End.B6", "End.B6.Encaps", "End.B6.Encaps.Red", "End.M.GTP6.D", "End.M.GTP6.Di", "H.M.GTP4.D", "End.AS"];

/// A SID's policy made in place, and whether its source is the route's to its first
/// segment.
pub(super) type SidPolicy = (Policy, bool);

/// The SID a route makes, with its `dev`: a `seg6local` route's, or GTP-U.Decap for
/// an `encap gtp decap` route (as the build makes it).
pub(super) fn sid_of(r: &RouteSpec) -> Option<(std::borrow::Cow<'_, SidAction>, Option<&str>)> {
    match &r.kind {
        RouteKind::Seg6Local { action, dev } => Some((std::borrow::Cow::Borrowed(&**action), dev.as_deref())),
        RouteKind::Gtp { tunnel: crate::spec::GtpTunnel::Decap { table }, dev, .. } => {
            Some((std::borrow::Cow::Owned(crate::behaviour::mobile::gtp_decap::action(*table)), dev.as_deref()))
        }
        _ => None,
    }
}

/// Whether a SID of `action` is an SR proxy.
fn is_proxy(action: &SidAction) -> bool {
    crate::behaviour::proxy::Kind::of(action.behaviour).is_some()
}

/// Whether `changes` add an SR proxy SID.
pub(super) fn adds_proxy(changes: &[RouteChange]) -> bool {
    changes.iter().any(|c| matches!((c, &c.spec().kind), (RouteChange::Add(_), RouteKind::Seg6Local { action, .. }) if is_proxy(action)))
}

/// Whether `c` adds a SID.
pub(super) fn adds_sid(c: &RouteChange) -> bool {
    matches!(c, RouteChange::Add(r) if sid_of(r).is_some())
}

/// A proxy's SID prefix, behaviour and `iif`, and its shared state.
pub(super) type ProxyKey =
    (Prefix, &'static str, crate::packet::DevId, std::sync::Arc<crate::behaviour::proxy::ProxyState>);

/// Whether SID `s` owns a policy.
fn owns_policy(s: &Sid) -> bool {
    OWN_POLICY.contains(&s.behaviour.keyword)
}

/// Whether SID `s` owns token buckets ([`SidState::limiter`](super::SidState)).
fn owns_limiter(s: &Sid) -> bool {
    s.behaviour.keyword == "End.Limit"
}

impl Tables {
    /// Whether the SID route `r` (`action`, `dev`) can be built in place.
    pub(super) fn check_sid(&self, r: &RouteSpec, action: &SidAction, dev: Option<&str>) -> Result<(), NeedsBuild> {
        let no = |why: &str| Err(NeedsBuild(format!("{why}: the tables are built again")));
        let gtp_decap = std::ptr::eq(action.behaviour, &crate::behaviour::mobile::gtp_decap::GTP_U_DECAP);
        if !gtp_decap && crate::behaviour::mobile::check_route(action, &r.prefix).is_err() {
            // The build's error says why.
            return no("a SID whose prefix does not fit its behaviour");
        }
        if !self.rules.v6.is_empty() || !self.rules.v4.is_empty() {
            return no("a SID with policy routing rules");
        }
        if dev.is_some_and(|d| self.device_id(d).is_none())
            || action.params.oif.as_ref().is_some_and(|d| self.device_id(d).is_none())
        {
            return no("an unknown device");
        }
        Ok(())
    }

    /// Whether SID `i`, now in a FIB, may be replaced or removed in place.
    pub(super) fn sid_removable(&self, i: u32) -> bool {
        self.rules.v6.is_empty() && self.rules.v4.is_empty() && (i as usize) < self.sids.len()
    }

    /// Whether the SR proxies the tables would have after `changes` keep the `iif`
    /// rules (`proxy::plan`): the proxies now that no change replaces or removes, and
    /// the ones the changes add and no later change removes. Otherwise the build says
    /// what is wrong.
    pub(super) fn check_proxies(&self, changes: &[RouteChange]) -> Result<(), NeedsBuild> {
        if !adds_proxy(changes) {
            // Removing proxies breaks no rule.
            return Ok(());
        }
        // (Kernel table id, prefix, SID) of each proxy, now and after each change.
        let mut after: Vec<(u32, Prefix, std::borrow::Cow<Sid>)> = Vec::new();
        for p in &self.proxies {
            let Some(s) = self.sids.get(p.sid as usize) else { continue };
            let Some(t) = (0..self.fibs.len()).find(|&t| self.route_at(t, s.prefix) == Some(Route::Sid(p.sid))) else {
                continue;
            };
            after.push((self.table_ids[t], s.prefix, std::borrow::Cow::Borrowed(s)));
        }
        for c in changes {
            let r = c.spec();
            after.retain(|(t, p, _)| (*t, *p) != (r.table, r.prefix));
            if let (RouteChange::Add(_), RouteKind::Seg6Local { action, .. }) = (c, &r.kind) {
                if is_proxy(action) {
                    let behaviour = action.behaviour;
                    let state = super::SidState::default();
                    let s = Sid { prefix: r.prefix, behaviour, action: (**action).clone(), state, line: r.line };
                    after.push((r.table, r.prefix, std::borrow::Cow::Owned(s)));
                }
            }
        }
        match crate::behaviour::proxy::plan(self, after.iter().map(|(.., s)| (0, s.as_ref()))) {
            Ok(_) => Ok(()),
            Err(e) => Err(NeedsBuild(format!("{}: the tables are built again", e.message))),
        }
    }

    /// Each proxy's SID prefix, behaviour and `iif`, with its shared state.
    pub(super) fn proxy_states(&self) -> Vec<ProxyKey> {
        self.proxies
            .iter()
            .filter_map(|p| {
                let s = self.sids.get(p.sid as usize)?;
                Some((s.prefix, s.behaviour.keyword, p.iif, p.state.clone()))
            })
            .collect()
    }

    /// Makes the proxies again (`proxy::build`) after SID changes, which may have
    /// added, removed or moved proxy SIDs: the devices the fast path declines are the
    /// new proxies' `iif`s, and a proxy the changes kept (the same prefix, behaviour and
    /// `iif`, as [`Tables::adopt_proxies`] matches them) keeps its `old` state.
    pub(super) fn remake_proxies(&mut self, old: Vec<ProxyKey>) -> Result<(), NeedsBuild> {
        self.fast_devs = super::FastDevs::of(&self.devices);
        // (check_proxies made sure this holds.)
        crate::behaviour::proxy::build(self).map_err(|e| NeedsBuild(e.message))?;
        for k in 0..self.proxies.len() {
            let p = &self.proxies[k];
            let Some(s) = self.sids.get(p.sid as usize) else { continue };
            let key = (s.prefix, s.behaviour.keyword, p.iif);
            if let Some((.., st)) = old.iter().find(|(a, b, c, _)| (*a, *b, *c) == key) {
                self.proxies[k].state = st.clone();
            }
        }
        Ok(())
    }

    /// The SIDs of the SID routes `changes` add, in order, built by their behaviours;
    /// an error (a next hop behind a gateway, say) asks for a build. Only adjacencies
    /// are added to the tables then (as a build that failed would leave them unused).
    pub(super) fn build_sids(&mut self, changes: &[RouteChange]) -> Result<Vec<(Sid, Option<SidPolicy>)>, NeedsBuild> {
        let mut out = Vec::new();
        if !changes.iter().any(adds_sid) {
            return Ok(Vec::new());
        }
        let spec = RouterSpec::default();
        // (Taken out and put back: a default index would allocate its LPMs' roots.)
        let Some(onlink) = self.onlink.take() else {
            return Err(NeedsBuild("tables without their device routes: they are built again".into()));
        };
        // (Put back if a SID fails: the limiters it took stay unused.)
        let limiter_free = self.limiter_free.clone();
        let mut b = Builder::over(&spec, self);
        let mut res = Ok(());
        for c in changes {
            let RouteChange::Add(r) = c else { continue };
            let Some((action, dev)) = sid_of(r) else { continue };
            match build_one(&mut b, &onlink, r, &action, dev) {
                Ok(s) => out.push(s),
                Err(e) => {
                    res = Err(e);
                    break;
                }
            }
        }
        b.give_back(self);
        self.onlink = Some(onlink);
        if res.is_err() {
            self.limiter_free = limiter_free;
        }
        res?;
        // A binding SID's policy, made as the build makes it; put in the tables (and
        // the SID pointed at it) when the SID is placed.
        out.into_iter()
            .map(|(s, spec)| match spec {
                Some((enc, dev, line, src)) => match self.make_policy(&enc, dev, line, src) {
                    Ok(p) => Ok((s, Some((p, self.src_routed(dev, src))))),
                    Err(m) => Err(NeedsBuild(format!("a binding SID's policy ({m}): the tables are built again"))),
                },
                None => Ok((s, None)),
            })
            .collect()
    }

    /// Places SID `s`'s policy `p` (from [`build_sids`](Self::build_sids)) and points
    /// the SID at it (a binding SID's fast-path word too: its argument is the policy).
    pub(super) fn adopt_policy(&mut self, s: &mut Sid, (p, routed): SidPolicy) {
        let i = self.add_policy(p, routed);
        s.state.policy = i;
        if s.behaviour.keyword.starts_with("End.B6") {
            s.state.fast = s.state.fast.with_arg(i);
        }
    }

    /// Puts SID `s` in FIB `t` at its prefix: in the place of the SID there now, or as a
    /// new one.
    pub(super) fn place_sid(&mut self, t: usize, s: Sid) {
        let i = match self.route_at(t, s.prefix) {
            Some(Route::Sid(j)) if (j as usize) < self.sids.len() => {
                let j = j as usize;
                self.fast_sids[j] = fast_sid_at(&s, j);
                let old = std::mem::replace(&mut self.sids[j], s);
                self.release(&old);
                j
            }
            _ => {
                self.fast_sids.push(fast_sid_at(&s, self.sids.len()));
                self.sids.push(s);
                self.sids.len() - 1
            }
        };
        self.set_sid_entry(t, i);
    }

    /// Removes SID `i`, whose FIB entry is gone: the last SID takes its index.
    pub(super) fn drop_sid(&mut self, i: u32) {
        let (i, last) = (i as usize, self.sids.len().wrapping_sub(1));
        if i > last {
            return;
        }
        let gone = self.sids.swap_remove(i);
        self.release(&gone);
        self.fast_sids.swap_remove(i);
        if i == last {
            return;
        }
        self.fast_sids[i] = fast_sid_at(&self.sids[i], i);
        let prefix = self.sids[i].prefix;
        if let Some(t) = (0..self.fibs.len()).find(|&t| self.route_at(t, prefix) == Some(Route::Sid(last as u32))) {
            self.set_sid_entry(t, i);
        }
    }

    /// Retires what SID `s`, replaced or removed, owned: a binding SID's policy, an
    /// End.Limit SID's buckets (its index then holds an empty limiter; the workers
    /// still reading the old tables keep the buckets they had).
    fn release(&mut self, s: &Sid) {
        if owns_policy(s) {
            self.retire_policy(s.state.policy);
        }
        if owns_limiter(s) {
            if let Some(l) = self.limiters.get_mut(s.state.limiter as usize) {
                *l = std::sync::Arc::new(crate::behaviour::end_limit::Limiter::retired());
                self.limiter_free.push(s.state.limiter);
            }
        }
    }

    /// Sets the FIB entry of SID `i` in FIB `t`: a /128 in the exact table, with its
    /// fast-path word, marked in the trie; a shorter prefix in the trie, with its hop.
    fn set_sid_entry(&mut self, t: usize, i: usize) {
        let (Some(s), Some(&f)) = (self.sids.get(i), self.fast_sids.get(i)) else { return };
        let hop = csid_hop(s, f, i);
        let prefix = s.prefix;
        let Some(fib) = self.fibs.get_mut(t) else { return };
        let route = Route::Sid(i as u32);
        match prefix {
            Prefix::V6(a, 128) => {
                fib.exact6.set(u128::from(a), route);
                fib.words6.set(u128::from(a), f.pack(i as u32));
                fib.lpm6.mark(u128::from(a));
            }
            Prefix::V6(..) => {
                let (key, len) = lpm_key(prefix);
                fib.lpm6.insert(key, len, route, hop);
            }
            // H.M.GTP4.D's (RFC 9433 §6.7): the UPF's IPv4 address or prefix.
            Prefix::V4(a, 32) => {
                fib.exact4.set(u128::from(u32::from(a)), route);
                fib.lpm4.mark(u128::from(u32::from(a)) << 96);
            }
            Prefix::V4(..) => {
                let (key, len) = lpm_key(prefix);
                fib.lpm4.insert(key, len, route, hop);
            }
        }
    }

    /// The route FIB `t` has for exactly `p` (a host route's is in the exact table).
    pub(super) fn route_at(&self, t: usize, p: Prefix) -> Option<Route> {
        let f = self.fibs.get(t)?;
        let (key, len) = lpm_key(p);
        match p {
            Prefix::V6(a, 128) => f.exact6.get(u128::from(a)),
            Prefix::V4(a, 32) => f.exact4.get(u128::from(u32::from(a))),
            Prefix::V6(..) => f.lpm6.get(key, len).copied(),
            Prefix::V4(..) => f.lpm4.get(key, len).copied(),
        }
    }
}

/// SID route `r` built by its behaviour, as [`Tables::build`] builds it.
fn build_one(
    b: &mut Builder,
    onlink: &super::build::OnLinkIndex,
    r: &RouteSpec,
    action: &SidAction,
    dev: Option<&str>,
) -> Result<(Sid, Option<PolicySpec>), NeedsBuild> {
    let failed = |m: String| NeedsBuild(format!("a SID the tables cannot build in place ({m}): they are built again"));
    let route_dev = match dev {
        Some(d) => Some(b.dev(d, r.line).map_err(|e| failed(e.message))?),
        None => None,
    };
    let beh = action.behaviour;
    if let Some(p) = beh.required.iter().find(|p| !p.is_set(&action.params)) {
        return Err(failed(format!("{} requires `{}`", beh.keyword, p.keyword())));
    }
    let mut policies = Vec::new();
    let mut sb = SidBuilder { b, onlink, policies: &mut policies, route_dev, prefix: r.prefix, line: r.line };
    let state = (beh.build)(&mut sb, action).map_err(|e| failed(e.message))?;
    if policies.len() > 1 {
        return Err(failed("it has more than one policy".into()));
    }
    Ok((Sid { prefix: r.prefix, behaviour: beh, action: action.clone(), state, line: r.line }, policies.pop()))
}
