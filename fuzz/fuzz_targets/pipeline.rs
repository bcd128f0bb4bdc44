//! The whole data plane on arbitrary frames: tables of the bundled example (every kind
//! of behaviour), the first input byte picks the ingress device. Nothing may panic, and
//! a transmitted IPv6 frame must be length-consistent.
#![no_main]

use std::cell::RefCell;
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use sr6_core::packet::{PacketBuf, Verdict};
use sr6_core::pipeline::Worker;
use sr6_core::tables::Tables;

fn tables() -> &'static Tables {
    static T: OnceLock<Tables> = OnceLock::new();
    T.get_or_init(|| {
        let spec = sr6_config::parse_str(include_str!("../../examples/example.conf"), "example.conf").expect("config");
        Tables::build(&spec).expect("tables").0
    })
}

thread_local! {
    /// One worker, reset for every input (`Worker::new` allocates its counters).
    static W: RefCell<Option<Worker>> = const { RefCell::new(None) };
}

fuzz_target!(|data: &[u8]| {
    let Some((&dev, frame)) = data.split_first() else { return };
    let t = tables();
    W.with_borrow_mut(|w| run(t, w.get_or_insert_with(|| Worker::new(t)), dev, frame));
});

fn run(t: &Tables, w: &mut Worker, dev: u8, frame: &[u8]) {
    w.reset();
    let mut b = PacketBuf::new();
    let dev = u16::from(dev % 4);
    b.load(frame, dev);
    w.process_batch(t, dev, std::slice::from_mut(&mut b));
    assert!(b.verdict != Verdict::Pending);
    if let Verdict::Tx(_) = b.verdict {
        let d = b.data();
        if d.len() >= 54 && d[12..14] == [0x86, 0xdd] {
            let plen = usize::from(u16::from_be_bytes([d[18], d[19]]));
            assert_eq!(plen + 54, d.len());
        }
    }
}
