//! Route lookup on FIBs of every shape (issue 25): the LPM alone ([`sr6_core::lpm`]) on
//! the workloads of [`sr6_core::fib_workload`] — an SRv6 locator plan, an IPv6 and an
//! IPv4 Internet table — with destinations spread over the table and a single-destination
//! stream, 4,096 lookups a batch. The build time, the memory per prefix and the mean
//! prefix length of each table are printed first. `cargo bench -p sr6-core --bench fib`.

use std::time::Instant;

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use sr6_core::fib_workload::{internet4, internet6, locator_plan, mean_len, spread, Prefix};
use sr6_core::lpm::{entry_index, Lpm4, Lpm6};

const SEED: u64 = 1;
const BATCH: usize = 4096;

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
        let Some(lpm) = lpm else { return };
        let spread_dsts = spread(SEED, &t, 128, BATCH);
        let single = vec![spread_dsts[0]; BATCH];
        for (stream, dsts) in [("spread", &spread_dsts), ("single", &single)] {
            g.bench_function(format!("lookup6/{name}/{stream}"), |b| {
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
    let Some(lpm) = lpm else { return };
    // IPv4 keys left-aligned, as the FIB looks them up.
    let spread_dsts: Vec<u128> = spread(SEED, &t, 32, BATCH).into_iter().map(|d| d << 96).collect();
    let single = vec![spread_dsts[0]; BATCH];
    for (stream, dsts) in [("spread", &spread_dsts), ("single", &single)] {
        g.bench_function(format!("lookup4/internet4/{stream}"), |b| {
            b.iter(|| {
                let mut acc = 0usize;
                for &d in dsts.iter() {
                    acc ^= entry_index(lpm.lookup_entry(black_box(d)));
                }
                acc
            })
        });
    }
    g.finish();
}

criterion_group!(benches, fib);
criterion_main!(benches);
