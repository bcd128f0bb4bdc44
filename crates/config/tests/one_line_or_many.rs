//! A command applied alone (`parse_line`, as `sr6 ctl` applies one: its route found by
//! a scan) and the same commands applied as a batch (`parse_lines`: one hashed index
//! of the routes) leave the same configuration and refuse the same lines; applied
//! with its route changes recorded (`parse_line_logged`, as `sr6 ctl` applies one), it
//! does what `parse_line` does, what its edits put in place is there, and undone they
//! put the configuration back.

use proptest::prelude::*;
use sr6_core::spec::RouterSpec;

fn command(verb: u8, p: u8, via: u8) -> String {
    let prefix = format!("fc00:{p:x}::/64");
    match verb {
        0 => format!("ip -6 route add {prefix} via fc00::{via:x} dev eth0"),
        1 => format!("ip -6 route replace {prefix} via fc00::{via:x} dev eth0"),
        2 => format!("ip -6 route append {prefix} via fc00::{via:x} dev eth0"),
        3 => format!("ip -6 route del {prefix}"),
        _ => format!("ip -6 route add {prefix} table 100 via fc00::{via:x} dev eth0"),
    }
}

proptest! {
    #[test]
    fn one_at_a_time_is_the_batch(cmds in proptest::collection::vec((0u8..5, 1u8..12, 2u8..5), 0..40)) {
        let lines: Vec<String> = cmds.iter().map(|&(v, p, via)| command(v, p, via)).collect();
        let base = "ip -6 addr add fc00::1/64 dev eth0\nip -6 route add fc00:99::/64 via fc00::2 dev eth0\n";
        let start = sr6_config::parse_str(base, "t").unwrap();

        let mut alone: RouterSpec = start.clone();
        let mut refused_alone = Vec::new();
        for (i, l) in lines.iter().enumerate() {
            if let Err(e) = sr6_config::parse_line(l, "t", i + 1, &mut alone) {
                refused_alone.push(e.to_string());
            }
        }
        let mut batch = start;
        let (_, errors) = sr6_config::parse_lines(lines.iter().map(String::as_str), "t", &mut batch, true);
        let refused_batch: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
        prop_assert_eq!(refused_alone, refused_batch);
        prop_assert_eq!(alone, batch);
    }

    #[test]
    fn a_logged_line_is_the_line_and_undoes(cmds in proptest::collection::vec((0u8..5, 1u8..12, 2u8..5), 1..40)) {
        let base = "ip -6 addr add fc00::1/64 dev eth0\nip -6 route add fc00:99::/64 via fc00::2 dev eth0\n";
        let mut spec = sr6_config::parse_str(base, "t").unwrap();
        for (i, &(v, p, via)) in cmds.iter().enumerate() {
            let line = command(v, p, via);
            let before = spec.clone();
            let mut plain = spec.clone();
            let want = sr6_config::parse_line(&line, "t", i + 1, &mut plain).map_err(|e| e.to_string());
            let rest = spec.clone_without_routes();
            let mut index = sr6_config::RouteIndex::of(&spec);
            let (got, edits) = sr6_config::parse_line_logged(&line, "t", i + 1, &mut spec, &mut index);
            prop_assert_eq!(got.map_err(|e| e.to_string()), want);
            prop_assert_eq!(&spec, &plain);
            prop_assert_eq!(&index, &sr6_config::RouteIndex::of(&spec), "the index follows");
            // What each edit put in place is in the routes after, unless a later edit
            // took it away.
            for (i, e) in edits.iter().enumerate() {
                let (_, new) = e.before_after();
                let later = |r: &sr6_core::spec::RouteSpec| edits[i + 1..].iter().any(|l| {
                    l.before_after().0.is_some_and(|o| o.table == r.table && o.prefix == r.prefix)
                });
                if let Some(n) = new.filter(|n| !later(n)) {
                    prop_assert!(spec.routes.contains(n), "{:?} not in the routes", n);
                }
            }
            // Undone: as before the line, whatever it did.
            let mut undone = spec.clone();
            for e in edits.into_iter().rev() {
                e.undo(&mut undone.routes, &mut index);
            }
            let routes = std::mem::take(&mut undone.routes);
            prop_assert_eq!(RouterSpec { routes, ..rest }, before.clone());
            prop_assert_eq!(&index, &sr6_config::RouteIndex::of(&before), "the index is put back");
        }
    }
}
