//! The fast path (crates/core/src/pipeline/fast.rs) against the general path, on
//! arbitrary frames: the same verdict, the same bytes and the same counters, or the
//! fast path has a bug. The tables are those of the differential test
//! (crates/sr6/tests/fast_path.conf: a case of every kind the fast path handles); the
//! first input byte picks the ingress device. Like that test, but with libFuzzer's
//! coverage-guided mutations instead of a fixed set of frames and random flips.
#![no_main]

use std::cell::RefCell;
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use sr6_core::packet::PacketBuf;
use sr6_core::pipeline::Worker;
use sr6_core::tables::Tables;

fn tables() -> &'static Tables {
    static T: OnceLock<Tables> = OnceLock::new();
    T.get_or_init(|| {
        let conf = include_str!("../../crates/sr6/tests/fast_path.conf");
        let spec = sr6_config::parse_str(conf, "fast_path.conf").expect("config");
        Tables::build(&spec).expect("tables").0
    })
}

thread_local! {
    /// The two workers (fast path on, off), reset for every input (`Worker::new`
    /// allocates their counters).
    static W: RefCell<Option<[Worker; 2]>> = const { RefCell::new(None) };
}

fn run(t: &Tables, w: &mut Worker, fast: bool, frame: &[u8], dev: u16) -> PacketBuf {
    w.reset();
    w.fast_path = fast;
    let mut b = PacketBuf::new();
    b.load(frame, dev);
    w.process_batch(t, dev, std::slice::from_mut(&mut b));
    b
}

fuzz_target!(|data: &[u8]| {
    let Some((&dev, frame)) = data.split_first() else { return };
    let t = tables();
    // eth0..eth3 of the config, and a device that does not exist.
    let dev = u16::from(dev % 5);
    W.with_borrow_mut(|w| {
        let [w1, w2] = w.get_or_insert_with(|| [Worker::new(t), Worker::new(t)]);
        let b1 = run(t, w1, true, frame, dev);
        let b2 = run(t, w2, false, frame, dev);
        assert_eq!(b1.verdict, b2.verdict, "verdict");
        assert_eq!(b1.data(), b2.data(), "bytes");
        assert_eq!(w1.counters, w2.counters, "counters");
    });
});
