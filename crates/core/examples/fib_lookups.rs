//! Route lookups alone, for callgrind (`scripts/fib_callgrind.sh`): builds one of the
//! FIB workloads of [`sr6_core::fib_workload`] and looks up `N` destinations — spread
//! over the table, or one destination `N` times — in [`lookups`], the function the
//! script counts instructions in.
//!
//! `fib_lookups locators6|internet6|internet4|none spread|single N` — `none`: the same
//! loop with no lookup (the destination itself), the overhead the script subtracts.

use std::hint::black_box;

use sr6_core::fib_workload::{internet4, internet6, locator_plan, spread};
use sr6_core::lpm::{entry_index, Lpm};

const SEED: u64 = 1;
const DISTINCT: usize = 4096;

/// The counted part: `n` lookups `f` of `dsts`, in turn.
#[inline(never)]
fn lookups(dsts: &[u128], n: usize, f: impl Fn(u128) -> usize) -> usize {
    let mut acc = 0;
    for i in 0..n {
        acc ^= f(black_box(dsts[i % dsts.len()]));
    }
    acc
}

fn lpm_lookups<const N: usize>(lpm: &Lpm<N, u32>, dsts: &[u128], n: usize) -> usize {
    lookups(dsts, n, |d| entry_index(lpm.lookup_entry(d)))
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (Some(table), Some(stream), Some(n)) = (args.get(1), args.get(2), args.get(3).and_then(|n| n.parse().ok()))
    else {
        eprintln!("usage: fib_lookups locators6|internet6|internet4|none spread|single N");
        std::process::exit(2);
    };
    let pick = |d: Vec<u128>| if stream == "single" { vec![d[0]] } else { d };
    let keyed6 = |t: &[(u128, u8)]| -> Vec<([u8; 16], u8, u32)> {
        t.iter().enumerate().map(|(i, &(a, l))| (a.to_be_bytes(), l, i as u32)).collect()
    };
    let acc = match table.as_str() {
        "locators6" | "internet6" => {
            let t = if table == "internet6" {
                internet6(SEED, 250_000)
            } else {
                locator_plan(SEED, 8, 10_000, 1_000).0.into_iter().filter(|p| p.1 < 128).collect()
            };
            let lpm = Lpm::<16, u32>::build(keyed6(&t));
            lpm_lookups(&lpm, &pick(spread(SEED, &t, 128, DISTINCT)), n)
        }
        "internet4" => {
            let t = internet4(SEED, 1_000_000);
            let lpm = Lpm::<4, u32>::build(
                t.iter().enumerate().map(|(i, &(a, l))| ((a as u32).to_be_bytes(), l, i as u32)).collect(),
            );
            let d = spread(SEED, &t, 32, DISTINCT).into_iter().map(|d| d << 96).collect();
            lpm_lookups(&lpm, &pick(d), n)
        }
        "none" => lookups(&pick((0..DISTINCT as u128).collect()), n, |d| d as usize),
        other => {
            eprintln!("fib_lookups: unknown table `{other}` (locators6, internet6, internet4)");
            std::process::exit(2);
        }
    };
    println!("{acc}");
}
