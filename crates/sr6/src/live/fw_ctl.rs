//! The firewall's run-time commands that are not configuration (docs/firewall.md,
//! "At run time"): `ip6tables -L`, `-S` and `-Z` through `sr6 ctl`, printed as
//! ip6tables 1.8 prints them (`-L -v -n` columns, `-S -v` with `-c PACKETS BYTES`),
//! the counters summed over the workers. Every other `ip6tables` line is a
//! configuration change (`Control::apply_line`).

use std::fmt::Write as _;

use serde_json::Value;
use sr6_core::firewall::spec::{AddrMatch, FwMatch, FwRule, FwTarget, Neg, BUILTIN, REJECT_WITH};
use sr6_core::firewall::Firewall;

use super::state::{lock, Shared};

const USAGE: &str = "usage: ip6tables -L [CHAIN] [-v] [-n] [-x] [--line-numbers] | ip6tables -S [CHAIN] [-v] | \
ip6tables -Z [CHAIN [N]] (every other ip6tables line changes the configuration)";

/// What a listing shows.
#[derive(Default)]
struct Opts {
    verbose: bool,
    exact: bool,
    numbers: bool,
}

/// Whether `ip6tables ARGS` lists, prints or zeroes (for [`command`]) rather than
/// changes the configuration.
pub fn command_kind(args: &[&str]) -> bool {
    args.iter().any(|a| {
        matches!(*a, "-L" | "--list" | "-S" | "--list-rules" | "-Z" | "--zero")
            || (a.len() > 2 && a.starts_with('-') && !a.starts_with("--") && a[1..].contains(['L', 'S', 'Z']))
    })
}

/// `ip6tables ARGS` if ARGS list, print or zero (`-L`, `-S`, `-Z`, alone or with
/// `-v`, `-n`, `-x`, `--line-numbers`, `-t filter`); `None` for a configuration line.
pub fn command(shared: &Shared, args: &[&str], json: bool) -> Option<Result<String, String>> {
    if !command_kind(args) {
        return None;
    }
    Some(run(shared, args, json))
}

fn run(shared: &Shared, args: &[&str], json: bool) -> Result<String, String> {
    let mut o = Opts::default();
    let mut which = None;
    let mut operands: Vec<&str> = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let a = args[i];
        match a {
            "-t" | "--table" => {
                i += 1;
                if args.get(i) != Some(&"filter") {
                    return Err("sr6 has only the filter table".into());
                }
            }
            "-v" | "--verbose" => o.verbose = true,
            "-n" | "--numeric" => {}
            "-x" | "--exact" => o.exact = true,
            "--line-numbers" => o.numbers = true,
            "-L" | "--list" | "-S" | "--list-rules" | "-Z" | "--zero" => {
                if which.is_some() {
                    return Err(format!("one of -L, -S, -Z at a time\n{USAGE}"));
                }
                which = Some(match a {
                    "--list" => "-L",
                    "--list-rules" => "-S",
                    "--zero" => "-Z",
                    x => x,
                });
            }
            // Combined short options, as `-Lnv`.
            s if s.starts_with('-') && !s.starts_with("--") && s.len() > 2 => {
                for c in s[1..].chars() {
                    match c {
                        'L' => which = Some("-L"),
                        'S' => which = Some("-S"),
                        'Z' => which = Some("-Z"),
                        'v' => o.verbose = true,
                        'n' => {}
                        'x' => o.exact = true,
                        _ => return Err(format!("`{s}`: unknown option `-{c}`\n{USAGE}")),
                    }
                }
            }
            s if s.starts_with('-') => return Err(format!("`{s}`: not an option of -L, -S or -Z\n{USAGE}")),
            s => operands.push(s),
        }
        i += 1;
    }
    let g = shared.gen.load();
    let fw = g.tables.firewall.as_deref();
    let chain = operands.first().copied();
    if let (Some(c), Some(f)) = (chain, fw) {
        if !f.spec.chains.iter().any(|x| x.name == c) {
            return Err(format!("ip6tables: No chain/target/match by that name (`{c}`)"));
        }
    } else if let (Some(c), None) = (chain, fw) {
        if !BUILTIN.contains(&c) {
            return Err(format!("ip6tables: No chain/target/match by that name (`{c}`)"));
        }
    }
    match which.unwrap_or("-L") {
        "-Z" => {
            let Some(f) = fw else { return Ok("no firewall rules: nothing to zero".into()) };
            let rule = match operands.get(1) {
                None => None,
                Some(n) => match n.parse::<usize>() {
                    Ok(n) if n >= 1 => Some(n),
                    _ => return Err(format!("`{n}`: expected a rule number (1 or more)")),
                },
            };
            if operands.len() > 2 {
                return Err(USAGE.into());
            }
            let mut counters = Vec::new();
            for c in f.spec.chains.iter().filter(|c| chain.is_none_or(|n| c.name == n)) {
                let listed = f.list();
                let of_chain: Vec<_> = listed.iter().filter(|l| l.chain == c.name).collect();
                match rule {
                    None => counters.extend(of_chain.iter().map(|l| l.counter)),
                    Some(n) => {
                        let rules: Vec<_> = of_chain.iter().filter(|l| l.rule.is_some()).collect();
                        let l = rules.get(n - 1).ok_or_else(|| {
                            format!("ip6tables: Index of deletion too big (chain {} has {} rules)", c.name, rules.len())
                        })?;
                        counters.push(l.counter);
                    }
                }
            }
            let n = counters.len();
            shared.zero_firewall(g.id, counters);
            Ok(format!("zeroed {n} counter{}", if n == 1 { "" } else { "s" }))
        }
        "-S" => {
            if operands.len() > 1 {
                return Err(USAGE.into());
            }
            let sums = sums(shared, fw);
            if json {
                return Ok(serde_json::to_string_pretty(&filtered(&g.tables, &sums, chain)).unwrap_or_default());
            }
            Ok(list_rules(fw, &sums, chain, o.verbose))
        }
        _ => {
            if operands.len() > 1 {
                return Err(USAGE.into());
            }
            let sums = sums(shared, fw);
            if json {
                return Ok(serde_json::to_string_pretty(&filtered(&g.tables, &sums, chain)).unwrap_or_default());
            }
            Ok(list(fw, &sums, chain, &o))
        }
    }
}

/// The firewall counters of the current generation, summed over the workers.
fn sums(shared: &Shared, fw: Option<&Firewall>) -> Vec<u64> {
    let g = shared.gen.load();
    let mut sum = vec![0u64; 2 * fw.map_or(0, Firewall::counter_count)];
    for w in &shared.workers {
        let s = lock(w);
        if s.gen.id == g.id {
            sum.iter_mut().zip(&s.counters.firewall).for_each(|(a, b)| *a += b);
        }
    }
    sum
}

/// `show firewall --json`'s rows, of `chain` only if given.
fn filtered(t: &sr6_core::tables::Tables, sums: &[u64], chain: Option<&str>) -> Value {
    let v = crate::report::firewall(t, sums);
    Value::Array(
        v.as_array()
            .into_iter()
            .flatten()
            .filter(|r| chain.is_none_or(|c| r["chain"].as_str() == Some(c)))
            .cloned()
            .collect(),
    )
}

fn get(sums: &[u64], i: usize) -> (u64, u64) {
    (sums.get(2 * i).copied().unwrap_or(0), sums.get(2 * i + 1).copied().unwrap_or(0))
}

/// The chains in ip6tables' order: the built-in ones, then the user chains by name.
fn chains_in_order(f: &Firewall) -> Vec<&sr6_core::firewall::spec::ChainSpec> {
    let mut user: Vec<_> = f.spec.chains.iter().skip(BUILTIN.len()).collect();
    user.sort_by(|a, b| a.name.cmp(&b.name));
    f.spec.chains.iter().take(BUILTIN.len()).chain(user).collect()
}

/// `ip6tables -S [CHAIN] [-v]`: the policies, the user chains, the rules (an nft rule
/// as it was written, after a `#`), `-c PACKETS BYTES` before the target with `-v`.
fn list_rules(fw: Option<&Firewall>, sums: &[u64], chain: Option<&str>, verbose: bool) -> String {
    let mut out = Vec::new();
    let Some(f) = fw else {
        for c in BUILTIN.iter().filter(|c| chain.is_none_or(|n| n == **c)) {
            out.push(format!("-P {c} ACCEPT{}", if verbose { " -c 0 0" } else { "" }));
        }
        return out.join("\n");
    };
    let listed = f.list();
    let want = |name: &str| chain.is_none_or(|n| n == name);
    for l in listed.iter().filter(|l| l.rule.is_none() && want(l.chain)) {
        let (p, b) = get(sums, l.counter);
        let pol = if l.policy == Some(false) { "DROP" } else { "ACCEPT" };
        out.push(format!("-P {} {pol}{}", l.chain, if verbose { format!(" -c {p} {b}") } else { String::new() }));
    }
    let order = chains_in_order(f);
    for c in order.iter().skip(BUILTIN.len()).filter(|c| want(&c.name)) {
        out.push(format!("-N {}", c.name));
    }
    let rules = order.iter().flat_map(|c| listed.iter().filter(move |l| l.chain == c.name));
    for l in rules.filter(|l| want(l.chain)) {
        let Some(r) = l.rule else { continue };
        let (p, b) = get(sums, l.counter);
        let c = if verbose { format!(" -c {p} {b}") } else { String::new() };
        match &r.nft {
            Some(n) => out.push(format!("# {} (nft){c}", n)),
            None => out.push(format!("-A {}{}{c} {}", l.chain, r.m, r.target)),
        }
    }
    out.join("\n")
}

/// A counter as ip6tables prints it: exact in 8 columns with `-x`, else at most 5
/// characters with K, M, G or T (rounded, as `xtables_print_num`).
fn num(n: u64, exact: bool) -> String {
    if exact {
        return format!("{n:8}");
    }
    if n <= 99_999 {
        return format!("{n:5}");
    }
    let mut v = n;
    for unit in ["K", "M", "G", "T"] {
        v = (v + 500) / 1000;
        if v <= 9_999 || unit == "T" {
            return format!("{v:4}{unit}");
        }
    }
    format!("{v:4}T")
}

fn addr_col(a: &Option<AddrMatch>) -> (char, String) {
    match a {
        None => (' ', "::/0".into()),
        Some(a) => {
            let m = u128::from(a.mask);
            let text = if m == u128::MAX { a.addr.to_string() } else { a.to_string() };
            (if a.inv { '!' } else { ' ' }, text)
        }
    }
}

fn dev_col(d: &Option<Neg<String>>) -> String {
    match d {
        None => "*".into(),
        Some(d) => format!("{}{}", if d.inv { "!" } else { "" }, d.v),
    }
}

/// The options after the destination, as the kernel's match and target extensions
/// print them (`udp dpt:7000`, `srh tag:7`, `reject-with ...`); SERA's options and
/// nft expressions in sr6's words.
fn extras(m: &FwMatch, t: &FwTarget) -> String {
    let mut s = String::new();
    let inv = |b: bool| if b { "!" } else { "" };
    if let Some(pm) = &m.ports {
        s.push_str(if pm.proto == 6 { " tcp" } else { " udp" });
        for (name, r) in [("spt", pm.sport), ("dpt", pm.dport)] {
            if let Some(r) = r {
                let (a, b) = r.v;
                if a == b {
                    let _ = write!(s, " {name}:{}{a}", inv(r.inv));
                } else {
                    let _ = write!(s, " {name}s:{}{a}:{b}", inv(r.inv));
                }
            }
        }
    }
    if let Some(h) = &m.srh {
        s.push_str(" srh");
        if let Some(n) = h.next_hdr {
            let _ = write!(s, " next-hdr:{}{}", inv(n.inv), n.v);
        }
        for (name, arr) in [("hdr-len", &h.hdr_len), ("segs-left", &h.segs_left), ("last-entry", &h.last_entry)] {
            for (c, v) in ["eq", "gt", "lt"].iter().zip(arr.iter()) {
                if let Some(v) = v {
                    let _ = write!(s, " {name}-{c}:{}{}", inv(v.inv), v.v);
                }
            }
        }
        if let Some(tag) = h.tag {
            let _ = write!(s, " tag:{}{}", inv(tag.inv), tag.v);
        }
        for (name, a) in [("psid", &h.psid), ("nsid", &h.nsid), ("lsid", &h.lsid)] {
            if let Some(a) = a {
                let _ = write!(s, " {name} {} {a}", inv(a.inv));
            }
        }
        for (name, a) in [("inner-src", &h.inner_src), ("inner-dst", &h.inner_dst)] {
            if let Some(a) = a {
                let _ = write!(s, " {name} {} {a}", inv(a.inv));
            }
        }
    }
    match t {
        FwTarget::Reject(code) => {
            let name = REJECT_WITH.iter().find(|r| r.2 == *code).map_or("icmp6-port-unreachable", |r| r.0);
            let _ = write!(s, " reject-with {name}");
        }
        FwTarget::Seg6(a) => {
            let _ = write!(s, " seg6-action {}", a.name());
        }
        _ => {}
    }
    s
}

fn target_name(t: &FwTarget) -> String {
    match t {
        FwTarget::Accept => "ACCEPT".into(),
        FwTarget::Drop => "DROP".into(),
        FwTarget::Reject(_) => "REJECT".into(),
        FwTarget::Seg6(_) => "SEG6".into(),
        FwTarget::Jump(c) => c.clone(),
        FwTarget::Return => "RETURN".into(),
    }
}

/// One `-L` row (without the trailing newline).
fn row(o: &Opts, n: usize, (p, b): (u64, u64), r: &FwRule) -> String {
    let mut s = String::new();
    if o.numbers {
        let _ = write!(s, "{n:<4} ");
    }
    if o.verbose {
        let _ = write!(s, "{} {} ", num(p, o.exact), num(b, o.exact));
    }
    let prot = r.m.proto.map_or("0".to_string(), |x| format!("{}{}", if x.inv { "!" } else { "" }, x.v));
    let _ = write!(s, "{:<10} {prot:<5}-- ", target_name(&r.target));
    if o.verbose {
        let _ = write!(s, " {:<6} {:<6} ", dev_col(&r.m.iif), dev_col(&r.m.oif));
    }
    let (si, src) = addr_col(&r.m.src);
    let (di, dst) = addr_col(&r.m.dst);
    let _ = write!(s, "{si}{src:<19} {di}{dst:<19} ");
    match &r.nft {
        Some(text) => {
            let _ = write!(s, " /* nft: {text} */");
        }
        None => s.push_str(&extras(&r.m, &r.target)),
    }
    s
}

/// `ip6tables -L [CHAIN] [-v] [-n] [-x] [--line-numbers]`.
fn list(fw: Option<&Firewall>, sums: &[u64], chain: Option<&str>, o: &Opts) -> String {
    let mut header = String::new();
    if o.numbers {
        let _ = write!(header, "{:<4} ", "num");
    }
    if o.verbose {
        if o.exact {
            let _ = write!(header, "{:>8} {:>10} ", "pkts", "bytes");
        } else {
            let _ = write!(header, "{:>5} {:>5} ", "pkts", "bytes");
        }
    }
    let _ = write!(header, "{:<10} {:<5}opt", "target", "prot");
    if o.verbose {
        let _ = write!(header, " {:<6} {:<6} ", "in", "out");
    }
    let _ = write!(header, " {:<19}  {:<19} ", "source", "destination");
    let mut blocks = Vec::new();
    let policy_line = |name: &str, accept: bool, (p, b): (u64, u64)| {
        let pol = if accept { "ACCEPT" } else { "DROP" };
        if o.verbose {
            format!("Chain {name} (policy {pol} {p} packets, {b} bytes)")
        } else {
            format!("Chain {name} (policy {pol})")
        }
    };
    let Some(f) = fw else {
        for c in BUILTIN.iter().filter(|c| chain.is_none_or(|n| n == **c)) {
            blocks.push(format!("{}\n{header}", policy_line(c, true, (0, 0))));
        }
        return blocks.join("\n\n");
    };
    let listed = f.list();
    for c in chains_in_order(f).into_iter().filter(|c| chain.is_none_or(|n| c.name == n)) {
        let mut lines = Vec::new();
        match listed.iter().find(|l| l.chain == c.name && l.rule.is_none()) {
            Some(l) => lines.push(policy_line(&c.name, l.policy != Some(false), get(sums, l.counter))),
            None => {
                let refs = f
                    .spec
                    .chains
                    .iter()
                    .flat_map(|x| &x.rules)
                    .filter(|r| matches!(&r.target, FwTarget::Jump(j) if *j == c.name))
                    .count();
                lines.push(format!("Chain {} ({refs} references)", c.name));
            }
        }
        lines.push(header.clone());
        let rules = listed.iter().filter(|l| l.chain == c.name).filter_map(|l| l.rule.map(|r| (l.counter, r)));
        for (n, (k, r)) in rules.enumerate() {
            lines.push(row(o, n + 1, get(sums, k), r));
        }
        blocks.push(lines.join("\n"));
    }
    blocks.join("\n\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_shorten_as_xtables_print_num() {
        assert_eq!(num(0, false), "    0");
        assert_eq!(num(99_999, false), "99999");
        assert_eq!(num(100_000, false), " 100K");
        assert_eq!(num(9_999_499, false), "9999K");
        assert_eq!(num(9_999_500, false), "  10M");
        assert_eq!(num(12_345_678_901, false), "  12G");
        assert_eq!(num(7, true), "       7");
    }
}
