//! Applying a parsed command to the spec: checks first, then changes, so a refused
//! command leaves the spec as it was.

use sr6_core::spec::{LinkSpec, RouterSpec};

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

pub(crate) fn commit(spec: &mut RouterSpec, cmd: Cmd) -> Result<(), PErr> {
    // Checks: nothing below may fail once the first change is made.
    match &cmd.item {
        Item::Route { spec: r, verb, at } if *verb != Verb::Replace => {
            if let Some(old) = spec
                .routes
                .iter()
                .find(|o| o.table == r.table && o.prefix == r.prefix)
            {
                let what = format!(
                    "route {} in table {} already exists (line {})",
                    fmt_prefix(&r.prefix),
                    r.table,
                    old.line
                );
                return Err(if *verb == Verb::Append {
                    PErr::at(at, format!("{what}; sr6 has no multipath routes"))
                        .exp("`route replace` to change it")
                } else {
                    PErr::at(at, what).exp("`route replace` to change it")
                });
            }
        }
        Item::Addr {
            spec: a,
            replace: false,
            at,
        } => {
            if let Some(old) = spec
                .addrs
                .iter()
                .find(|o| o.dev == a.dev && o.addr == a.addr)
            {
                return Err(PErr::at(
                    at,
                    format!(
                        "address {} is already on {} (line {})",
                        a.addr, a.dev, old.line
                    ),
                )
                .exp("`addr replace` to change it"));
            }
        }
        Item::Neigh {
            spec: n,
            replace: false,
            at,
        } => {
            if let Some(old) = spec
                .neighs
                .iter()
                .find(|o| o.dev == n.dev && o.addr == n.addr)
            {
                return Err(PErr::at(
                    at,
                    format!(
                        "neighbour {} on {} already exists (line {})",
                        n.addr, n.dev, old.line
                    ),
                )
                .exp("`neigh replace` to change it"));
            }
        }
        Item::Hmac { key, at }
            if key.secret.is_empty() && !spec.hmac_keys.iter().any(|k| k.key_id == key.key_id) =>
        {
            return Err(PErr::at(
                at,
                format!(
                    "an empty secret deletes a key, but there is no HMAC key {}",
                    key.key_id
                ),
            )
            .exp("a non-empty secret"));
        }
        _ => {}
    }

    for d in &cmd.devs {
        note_dev(spec, d);
    }
    match cmd.item {
        Item::Nothing => {}
        Item::Link { line, dev, mac } => match spec.links.iter_mut().find(|l| l.dev == dev) {
            Some(l) => {
                l.mac = mac;
                l.line = line;
            }
            None => spec.links.push(LinkSpec { line, dev, mac }),
        },
        Item::Addr { spec: a, .. } => match spec
            .addrs
            .iter_mut()
            .find(|o| o.dev == a.dev && o.addr == a.addr)
        {
            Some(o) => *o = a,
            None => spec.addrs.push(a),
        },
        Item::Neigh { spec: n, .. } => match spec
            .neighs
            .iter_mut()
            .find(|o| o.dev == n.dev && o.addr == n.addr)
        {
            Some(o) => *o = n,
            None => spec.neighs.push(n),
        },
        Item::Route { spec: r, .. } => match spec
            .routes
            .iter_mut()
            .find(|o| o.table == r.table && o.prefix == r.prefix)
        {
            Some(o) => *o = r,
            None => spec.routes.push(r),
        },
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
    }
    Ok(())
}
