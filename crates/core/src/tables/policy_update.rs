//! Head-end policies (`encap seg6` routes) changed in place, for
//! [`Tables::apply_routes`]: a route's policy is built as [`Tables::build`] builds it
//! (RFC 8986 §5: its SRH, its first segment, its outer source; the HMAC when it is
//! fixed), its first segment resolved for the fast path, its rewrite made, and the
//! route points at it.
//!
//! Policy indices are not renumbered: the policy of a route replaced or deleted is
//! retired — left where it is, no route pointing at it — and its index is the next new
//! policy's ([`Tables::policy_free`]). The fast path's length bound
//! ([`Tables::fast_max_len`]) is computed again over the policies in use.
//!
//! The policy's source is `ip sr tunsrc`, or else the address of its route's device,
//! as the build takes it. A route with neither takes the address of the device its
//! first segment is routed by (`build::tunnel_source`), which a main-table change can
//! move: such a policy is listed ([`Tables::policy_src_routed`]), and after a batch
//! that changed a main-table prefix covering its first segment its source is found
//! again — and the policy made again with it, when it moved (its SRH's HMAC covers
//! the source).

use std::net::Ipv6Addr;

use super::update::NeedsBuild;
use super::{Policy, Rewrite, Route, Tables};
use crate::packet::DevId;
use crate::spec::{Prefix, RouteSpec, Seg6Encap, Seg6Mode};

impl Tables {
    /// Whether the policy of route `r` (`encap`, on `dev`) can be made in place.
    pub(super) fn check_policy(&self, r: &RouteSpec, encap: &Seg6Encap, dev: Option<&str>) -> Result<(), NeedsBuild> {
        let no = |why: &str| Err(NeedsBuild(format!("{why}: the tables are built again")));
        if dev.is_some_and(|d| self.device_id(d).is_none()) {
            return no("an unknown device");
        }
        if matches!(r.prefix, Prefix::V4(..)) && matches!(encap.mode, Seg6Mode::Inline | Seg6Mode::InlineRed) {
            // The build's error says why.
            return no("an insertion for an IPv4 prefix");
        }
        match self.policy_of(r, encap, dev) {
            Ok(_) => Ok(()),
            Err(why) => no(&why),
        }
    }

    /// The policy of route `r`, as the build makes it (its line is the route's).
    fn policy_of(&self, r: &RouteSpec, encap: &Seg6Encap, dev: Option<&str>) -> Result<Policy, String> {
        self.make_policy(encap, dev.and_then(|d| self.device_id(d)), r.line, None)
    }

    /// Whether a policy on device `dev` from source `src` takes its source from the
    /// route to its first segment.
    pub(super) fn src_routed(&self, dev: Option<DevId>, src: Option<Ipv6Addr>) -> bool {
        src.is_none() && self.tunsrc.is_none() && dev.is_none()
    }

    /// The policy of `encap` on device `dev` from source `src`, as the build makes one
    /// (a route's, or a binding SID's, `PolicySpec`): the source is `src`, else `ip sr
    /// tunsrc`, else the address of `dev`, else that of the device the route to the
    /// first segment leaves by.
    pub(super) fn make_policy(
        &self,
        encap: &Seg6Encap,
        dev: Option<DevId>,
        line: usize,
        src: Option<Ipv6Addr>,
    ) -> Result<Policy, String> {
        let Some(&first) = encap.segs.first() else { return Err("a policy without segments".into()) };
        let src = src.or(self.tunsrc).unwrap_or_else(|| super::build::tunnel_source(self, dev, &first));
        let key = match encap.hmac {
            Some(id) => Some((id, self.hmac.keys.get(&id).ok_or("an HMAC key id that is not defined")?)),
            None => None,
        };
        Policy::with_csid(encap.mode, encap.csid, &encap.segs, key, src, line)
    }

    /// Makes the policy of route `r` (checked by [`check_policy`](Self::check_policy))
    /// and returns the route to it.
    pub(super) fn new_policy(
        &mut self,
        r: &RouteSpec,
        encap: &Seg6Encap,
        dev: Option<&str>,
    ) -> Result<Route, NeedsBuild> {
        let p = self.policy_of(r, encap, dev).map_err(NeedsBuild)?;
        let routed = self.src_routed(dev.and_then(|d| self.device_id(d)), None);
        Ok(Route::Policy(self.add_policy(p, routed)))
    }

    /// Puts policy `p` in the tables, its first segment resolved and its rewrite made,
    /// under a retired policy's index or a new one; returns the index. `routed`: its
    /// source is the route's to its first segment.
    pub(super) fn add_policy(&mut self, p: Policy, routed: bool) -> u32 {
        let out = match self.fibs.main().lookup6(&p.first) {
            Some(Route::Forward(nh)) => self.resolve(nh, u128::from_be_bytes(p.first)),
            _ => None,
        };
        let rewrite = Rewrite::of(&p, out);
        let i = match self.policy_free.pop() {
            Some(i) if (i as usize) < self.policies.len() => {
                let i = i as usize;
                (self.policies[i], self.policy_out[i], self.rewrites[i]) = (p, out, rewrite);
                i as u32
            }
            _ => {
                self.policies.push(p);
                self.policy_out.push(out);
                self.rewrites.push(rewrite);
                (self.policies.len() - 1) as u32
            }
        };
        if routed {
            self.policy_src_routed.push(i);
        }
        i
    }

    /// Retires policy `i`, which no route points at any more.
    pub(super) fn retire_policy(&mut self, i: u32) {
        if let Some(o) = self.policy_out.get_mut(i as usize) {
            *o = None;
            self.policy_free.push(i);
        }
        if let Some(k) = self.policy_src_routed.iter().position(|&j| j == i) {
            self.policy_src_routed.swap_remove(k);
        }
    }

    /// Finds the source of each policy in [`policy_src_routed`](Tables::policy_src_routed)
    /// whose first segment `covered` holds again, as the build does, and makes the
    /// policy again with it where it moved. Returns the policies made again (their first
    /// segment is to be resolved again too).
    pub(super) fn reroute_sources(&mut self, covered: impl Fn(&Ipv6Addr) -> bool) -> Vec<u32> {
        let mut changed = Vec::new();
        for k in 0..self.policy_src_routed.len() {
            let i = self.policy_src_routed[k];
            let Some(p) = self.policies.get(i as usize) else { continue };
            let Some(first) = p.segs.first().filter(|f| covered(f)) else { continue };
            let src = super::build::tunnel_source(self, None, first);
            if src.octets() == p.src {
                continue;
            }
            let key = p.hmac_key_id.and_then(|id| Some((id, self.hmac.keys.get(&id)?)));
            // (The policy was made once with these segments: it is made again.)
            if let Ok(q) = Policy::with_csid(p.mode, p.csid, &p.segs, key, src, p.line) {
                self.policies[i as usize] = q;
                changed.push(i);
            }
        }
        changed
    }

    /// The policies in use (not retired), with their indices.
    pub fn live_policies(&self) -> impl Iterator<Item = (usize, &Policy)> + '_ {
        let mut retired = vec![false; self.policies.len()];
        for &i in &self.policy_free {
            if let Some(r) = retired.get_mut(i as usize) {
                *r = true;
            }
        }
        self.policies.iter().enumerate().filter(move |(i, _)| !retired.get(*i).copied().unwrap_or(false))
    }

    /// [`fast_max_len`](super::fast_max_len) again, over the policies in use (none with
    /// policy routing rules, as the build sets it), after a batch that added policies
    /// growing a frame by at most `added` bytes and retired some growing it by at most
    /// `retired`: a retirement can only raise the bound if it was the largest growth,
    /// and only then are all policies read again.
    pub(super) fn update_fast_max_len(&mut self, added: usize, retired: Option<usize>) {
        if !self.rules.v6.is_empty() || !self.rules.v4.is_empty() {
            self.fast_max_len = 0;
            return;
        }
        let min_frame = super::min_frame(&self.devices);
        let largest = min_frame - self.fast_max_len.min(min_frame);
        match retired {
            Some(g) if self.fast_max_len == 0 || g >= largest => {
                self.fast_max_len = super::fast_max_len(&self.devices, self.live_policies().map(|(_, p)| p));
            }
            _ => self.fast_max_len = self.fast_max_len.min(min_frame.saturating_sub(added)),
        }
    }

    /// How many bytes policy `i` adds to a frame (0 if there is none).
    pub(super) fn growth_of(&self, i: u32) -> usize {
        self.policies.get(i as usize).map_or(0, super::policy_growth)
    }
}
