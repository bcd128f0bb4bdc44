//! Route lookup on FIBs of every shape (issue 25): the LPM alone ([`sr6_core::lpm`]) on
//! the workloads of [`sr6_core::fib_workload`] — an SRv6 locator plan, an IPv6 and an
//! IPv4 Internet table — with destinations spread over the table and a single-destination
//! stream, 4,096 lookups a batch. The build time, the memory per prefix and the mean
//! prefix length of each table are printed first; after the Internet tables' lookups,
//! the time of one route change ([`Lpm::insert`], [`Lpm::remove`]) over 100,000 changes
//! of [`churn`] (median, 99th percentile, maximum); last, the time of one SID change
//! made in place ([`Tables::apply_routes`]) over 10,000 adds and deletes of End, End.X
//! and End.DT6 SIDs on the locator plan's tables (10,000 routes, 1,000 SIDs).
//! `cargo bench -p sr6-core --bench fib`.

use std::time::{Duration, Instant};

use criterion::measurement::WallTime;
use criterion::{black_box, criterion_group, criterion_main, BenchmarkGroup, Criterion, Throughput};
use sr6_core::fib_workload::{churn, internet4, internet6, locator_plan, mean_len, spread, Change, Prefix};
use sr6_core::lpm::{entry_index, Lpm, Lpm4, Lpm6};
use sr6_core::tables::{RouteChange, Tables};

const SEED: u64 = 1;
const BATCH: usize = 4096;
const CHANGES: usize = 100_000;

/// Benchmarks lookups of `dsts` (left-aligned keys) in `lpm`, spread and single.
fn lookups<const N: usize>(g: &mut BenchmarkGroup<WallTime>, name: &str, lpm: &Lpm<N, u32>, dsts: &[u128]) {
    let single = vec![dsts[0]; dsts.len()];
    for (stream, dsts) in [("spread", dsts), ("single", &single[..])] {
        g.bench_function(format!("{name}/{stream}"), |b| {
            b.iter(|| {
                let mut acc = 0usize;
                for &d in dsts.iter() {
                    acc ^= entry_index(lpm.lookup_entry(black_box(d)));
                }
                acc
            })
        });
    }
}

/// Applies [`CHANGES`] changes of [`churn`] to `lpm` (prefixes' addresses in the low
/// `width` bits), timing each; prints the median, 99th percentile and maximum.
fn changes<const N: usize>(name: &str, lpm: &mut Lpm<N, u32>, table: &[Prefix], fresh: &[Prefix], width: u8) {
    let ch = churn(SEED, table, fresh, CHANGES);
    let mut took: Vec<Duration> = Vec::with_capacity(ch.len());
    let key = |a: u128| a << (128 - u32::from(width));
    for (i, c) in ch.iter().enumerate() {
        let t0 = Instant::now();
        match *c {
            Change::Add((a, l)) => {
                black_box(lpm.insert(key(a), l, i as u32, 0));
            }
            Change::Delete((a, l)) => {
                black_box(lpm.remove(key(a), l));
            }
        }
        took.push(t0.elapsed());
    }
    took.sort_unstable();
    let at = |q: f64| took[((took.len() - 1) as f64 * q) as usize].as_secs_f64() * 1e6;
    eprintln!(
        "fib/{name}: {} route changes (adds and deletes), one in median {:.2} us, p99 {:.2} us, max {:.1} us; \
         {} prefixes after, {:.1} bytes a prefix",
        took.len(),
        at(0.5),
        at(0.99),
        at(1.0),
        lpm.len(),
        lpm.heap_bytes() as f64 / lpm.len().max(1) as f64
    );
}

/// The time of one SID or policy change made in place: the tables of the locator plan
/// (its routes through a gateway, its SIDs End), then 10,000 changes of [`churn`] on
/// the SIDs' addresses, one `apply_routes` each: with `policies` false each added as
/// End, End.X or End.DT6 in turn; with `policies` true each an `encap seg6` route of
/// 1 to 3 segments in turn (`ip sr tunsrc` set), the plan's SIDs then policies too.
fn sid_changes(policies: bool) {
    let (plan, sids) = locator_plan(SEED, 8, 10_000, 1_000);
    let (_, fresh) = locator_plan(SEED, 8, 10_000, 20_000);
    let addr = |a: u128| std::net::Ipv6Addr::from(a);
    let mut conf = String::from(
        "ip -6 addr add fc00::1/64 dev eth0\nip -6 neigh add fc00::2 lladdr 02:00:00:00:00:02 dev eth0\n\
         ip sr tunsrc set fc00::1\n",
    );
    for &(a, l) in &plan {
        conf += &format!("ip -6 route add {}/{l} via fc00::2 dev eth0\n", addr(a));
    }
    // Segment lists into the plan's prefixes (their first segment routed by the plan).
    let segs = |i: usize| -> String {
        (0..1 + i % 3)
            .map(|k| addr(plan[(i * 7 + k * 13) % plan.len()].0 | 1).to_string())
            .collect::<Vec<_>>()
            .join(",")
    };
    let action = |i: usize| -> String {
        if policies {
            format!("encap seg6 mode encap segs {}", segs(i))
        } else {
            [
                "encap seg6local action End",
                "encap seg6local action End.X nh6 fc00::2",
                "encap seg6local action End.DT6 table 254",
            ][i % 3]
                .to_string()
        }
    };
    for (i, &(a, _)) in sids.iter().enumerate() {
        conf += &format!("ip -6 route add {}/128 {} dev eth0\n", addr(a), if policies { action(i) } else { action(0) });
    }
    let spec = sr6_config::parse_str(&conf, "bench.conf").unwrap_or_else(|e| panic!("{e}"));
    let Ok((mut t, _)) = Tables::build(&spec) else { panic!("the plan does not build") };
    let mut scratch = spec.clone();
    let ch: Vec<RouteChange> = churn(SEED, &sids, &fresh, 10_000)
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let (p, line) = match *c {
                Change::Add((a, _)) => (a, format!("ip -6 route replace {}/128 {} dev eth0", addr(a), action(i))),
                Change::Delete((a, _)) => (a, format!("ip -6 route add {}/128 {} dev eth0", addr(a), action(i))),
            };
            scratch.routes.clear();
            sr6_config::parse_line(&line, "bench", 1, &mut scratch).unwrap_or_else(|e| panic!("{line}: {e}"));
            let r = scratch.routes.pop().unwrap_or_else(|| panic!("{line}: no route"));
            debug_assert_eq!(r.prefix, sr6_core::spec::Prefix::V6(addr(p), 128));
            match c {
                Change::Add(_) => RouteChange::Add(r),
                Change::Delete(_) => RouteChange::Delete(r),
            }
        })
        .collect();
    let mut took: Vec<Duration> = Vec::with_capacity(ch.len());
    for c in &ch {
        let t0 = Instant::now();
        let res = t.apply_routes(std::slice::from_ref(c));
        took.push(t0.elapsed());
        if let Err(e) = res {
            panic!("{c:?}: {e:?}");
        }
    }
    took.sort_unstable();
    let at = |q: f64| took[((took.len() - 1) as f64 * q) as usize].as_secs_f64() * 1e6;
    let (what, left) = if policies {
        ("policy", format!("{} policies in use", t.live_policies().count()))
    } else {
        ("SID", format!("{} SIDs", t.sids.len()))
    };
    eprintln!(
        "fib/locators6: {} {what} changes in place (adds and deletes), one in median {:.2} us, p99 {:.2} us, \
         max {:.1} us; {left} after",
        took.len(),
        at(0.5),
        at(0.99),
        at(1.0),
    );
}

/// Builds the table of `t`, reporting its build time and size.
fn report(name: &str, t: &[Prefix], build: impl FnOnce() -> usize) {
    let t0 = Instant::now();
    let bytes = build();
    let took = t0.elapsed();
    eprintln!(
        "fib/{name}: {} prefixes (mean length {:.2}), built in {:.3} s, {} bytes ({:.1} a prefix)",
        t.len(),
        mean_len(t),
        took.as_secs_f64(),
        bytes,
        bytes as f64 / t.len().max(1) as f64
    );
}

fn fib(c: &mut Criterion) {
    let mut g = c.benchmark_group("fib");
    g.throughput(Throughput::Elements(BATCH as u64));
    // The /128s (loopbacks, SIDs) live in sr6's exact-match table, not in the LPM.
    let (plan, _sids) = locator_plan(SEED, 8, 10_000, 1_000);
    let plan: Vec<Prefix> = plan.into_iter().filter(|p| p.1 < 128).collect();
    for (name, t) in [("locators6", plan), ("internet6", internet6(SEED, 250_000))] {
        let keyed = || t.iter().enumerate().map(|(i, &(a, l))| (a.to_be_bytes(), l, i as u32)).collect();
        let mut lpm = None;
        report(name, &t, || {
            let l = Lpm6::<u32>::build(keyed());
            let b = l.heap_bytes();
            lpm = Some(l);
            b
        });
        let Some(mut lpm) = lpm else { return };
        lookups(&mut g, &format!("lookup6/{name}"), &lpm, &spread(SEED, &t, 128, BATCH));
        if name == "internet6" {
            changes(name, &mut lpm, &t, &internet6(SEED + 1, CHANGES), 128);
        }
    }
    let t = internet4(SEED, 1_000_000);
    let mut lpm = None;
    report("internet4", &t, || {
        let l = Lpm4::<u32>::build(
            t.iter().enumerate().map(|(i, &(a, l))| ((a as u32).to_be_bytes(), l, i as u32)).collect(),
        );
        let b = l.heap_bytes();
        lpm = Some(l);
        b
    });
    let Some(mut lpm) = lpm else { return };
    // IPv4 keys left-aligned, as the FIB looks them up.
    let dsts: Vec<u128> = spread(SEED, &t, 32, BATCH).into_iter().map(|d| d << 96).collect();
    lookups(&mut g, "lookup4/internet4", &lpm, &dsts);
    changes("internet4", &mut lpm, &t, &internet4(SEED + 1, CHANGES), 32);
    g.finish();
    sid_changes(false);
    sid_changes(true);
}

criterion_group!(benches, fib);
criterion_main!(benches);
