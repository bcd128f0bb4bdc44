//! `Map::lookup_percpu` reads one value per possible CPU, and refuses a buffer of any
//! other size (the kernel would write past a shorter one). Root only (BPF_MAP_CREATE):
//! `#[ignore]`d, run with `--include-ignored`.

use sr6_io::bpf::{possible_cpus, Map};

/// BPF_MAP_TYPE_PERCPU_ARRAY.
const PERCPU_ARRAY: u32 = 6;

#[test]
#[ignore = "needs root (BPF_MAP_CREATE)"]
fn percpu_lookup_takes_exactly_one_value_per_possible_cpu() {
    let cpus = possible_cpus().unwrap();
    assert!(cpus >= 1);
    // 12-byte values: 16 per CPU (rounded up to 8).
    let m = Map::create_raw(PERCPU_ARRAY, 4, 12, 4, 0, "sr6_t_percpu").unwrap();
    let mut v = vec![0xffu8; 16 * cpus];
    m.lookup_percpu(&1u32.to_ne_bytes(), &mut v).unwrap();
    assert!(v.iter().all(|&b| b == 0), "a new per-CPU array is zeroed: {v:?}");
    for wrong in [16 * cpus - 16, 16 * cpus + 16, 12 * cpus, 0] {
        let mut v = vec![0u8; wrong];
        let e = m.lookup_percpu(&1u32.to_ne_bytes(), &mut v).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::InvalidInput, "{wrong} bytes: {e}");
    }
    // A key of the wrong size is refused too.
    assert!(m.lookup_percpu(&1u64.to_ne_bytes(), &mut vec![0u8; 16 * cpus]).is_err());
}
