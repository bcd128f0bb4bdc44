//! End.BPF's fast step (`behaviour::end_bpf::fast`, run from `pipeline::fast::try_cold`)
//! must be invisible, as every fast step: for every frame, the fast and the general path
//! give the same verdict, bytes and counters, and leave the programs' maps the same. A
//! program runs once per packet either way, so each path has its own tables (its own
//! loaded objects, its own maps), fed the same frames in the same order. The programs
//! are crates/bpf/tests/progs/*.c, compiled by clang: End in eBPF, Tag++ (store_bytes),
//! a TLV added and removed (adjust_srh: the packet resized in place), the action helper
//! (End.X, End.T, End.DT6, End.B6, End.B6.Encaps), map counters, a drop on the inner
//! header, an out-of-bounds read. tests/kernel/test_k_end_bpf.py compares the same
//! programs with the kernel (through `sr6 pcap`, whose fast path is on).

mod common;

use std::net::Ipv6Addr;
use std::path::PathBuf;

use proptest::prelude::*;
use sr6_core::packet::{PacketBuf, Verdict};
use sr6_core::pipeline::Worker;
use sr6_core::tables::Tables;

/// (SID, object, section) of the SIDs under test.
const SIDS: &[(&str, &str, &str)] = &[
    ("fc00:e::1", "end", "end"),
    ("fc00:e::2", "tag", "tag_inc"),
    ("fc00:e::3", "tlv", "add_tlv"),
    ("fc00:e::4", "tlv", "del_tlv"),
    ("fc00:e::5", "action", "end_x"),
    ("fc00:e::6", "action", "end_t"),
    ("fc00:e::7", "action", "end_dt6"),
    ("fc00:e::8", "action", "b6_encap"),
    ("fc00:e::9", "action", "b6_inline"),
    ("fc00:e::a", "maps", "count"),
    ("fc00:e::b", "misc", "drop_udp"),
    ("fc00:e::c", "misc", "oob_read"),
    ("fc00:e::d", "tlv", "bad_tlv"),
];

fn objs() -> PathBuf {
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    let names = ["end", "tag", "tlv", "action", "maps", "misc"];
    DIR.get_or_init(|| common::bpf_objects("fast-path-bpf", &names)).clone()
}

/// [`common::BPF_ROUTER`] with routes for the next segments the frames carry: by a
/// gateway in the main table and in table 100, on link without a neighbour, multipath.
const ROUTES: &str = "\
ip -6 route add fc00:9::/64 via fc00:12::2 dev eth1
ip -6 route add fc00:9::/64 via fc00:13::2 dev eth2 table 100
ip -6 route add fc00:44::/64 dev eth1
ip -6 route add fc00:45::/64 nexthop via fc00:12::2 dev eth1 nexthop via fc00:13::2 dev eth2
";

/// The configuration with every SID of [`SIDS`], loaded (a fresh copy of each object,
/// with its own maps).
fn tables() -> Tables {
    let dir = objs();
    let mut conf = format!("{}{ROUTES}", common::BPF_ROUTER);
    for (sid, obj, sec) in SIDS {
        conf.push_str(&format!(
            "ip -6 route add {sid}/128 encap seg6local action End.BPF endpoint obj {}/{obj}.o sec {sec} dev eth0\n",
            dir.display()
        ));
    }
    Tables::build(&sr6_config::parse_str(&conf, "t.conf").unwrap()).unwrap().0
}

fn a(s: &str) -> [u8; 16] {
    s.parse::<Ipv6Addr>().unwrap().octets()
}

/// Ethernet + IPv6 (fc00:a::1 -> `segs[sl]`, hop limit `hl`) + an SRH with `segs` in
/// header order (Segment List[0] first), Segments Left `sl`, `tlvs` after the segments
/// + an upper layer `nh` with `payload`.
fn frame(segs: &[&str], sl: u8, hl: u8, tlvs: &[u8], nh: u8, payload: &[u8]) -> Vec<u8> {
    let mut srh = vec![nh, ((segs.len() * 16 + tlvs.len()) / 8) as u8, 4, sl, (segs.len() - 1) as u8, 0, 0, 7];
    for s in segs {
        srh.extend_from_slice(&a(s));
    }
    srh.extend_from_slice(tlvs);
    let mut f = vec![2, 0, 0, 0, 0, 1, 2, 0xaa, 0, 0, 0, 1, 0x86, 0xdd];
    f.extend_from_slice(&[0x60, 0, 0, 0]);
    f.extend_from_slice(&((srh.len() + payload.len()) as u16).to_be_bytes());
    f.extend_from_slice(&[43, hl]);
    f.extend_from_slice(&a("fc00:a::1"));
    f.extend_from_slice(&a(segs[usize::from(sl)]));
    f.extend_from_slice(&srh);
    f.extend_from_slice(payload);
    f
}

/// An inner IPv6 packet to `dst` (for End.DT6 through the helper).
fn inner6(dst: &str) -> Vec<u8> {
    let mut p = vec![0x60, 0, 0, 0, 0, 8, 17, 64];
    p.extend_from_slice(&a("fc00:a::7"));
    p.extend_from_slice(&a(dst));
    p.extend_from_slice(&[0, 1, 0, 2, 0, 8, 0, 0]);
    p
}

/// Frames for every SID: the next segment routed by a gateway (main and table 100), on
/// link without a neighbour, by a multipath route, by no route; Segments Left 2 and 1,
/// hop limits 2 and 1; a TLV; UDP, TCP and IPv6 inside; Segments Left 0.
fn frames() -> Vec<Vec<u8>> {
    let udp: &[u8] = &[0, 1, 0, 2, 0, 12, 0, 0, 9, 9, 9, 9];
    let tcp: &[u8] = &[0; 20];
    let pad6 = [0x7e, 4, 1, 2, 3, 4, 0, 0];
    let mut v = Vec::new();
    for (sid, _, _) in SIDS {
        for next in ["fc00:3::b", "fc00:9::5", "fc00:44::5", "fc00:45::5", "fc00:77::1"] {
            v.push(frame(&[next, sid], 1, 64, &[], 17, udp));
            v.push(frame(&[next, sid], 1, 64, &[], 6, tcp));
        }
        v.push(frame(&["fc00:3::c", "fc00:3::b", sid], 2, 64, &[], 17, udp));
        v.push(frame(&["fc00:3::b", sid], 1, 2, &[], 17, udp));
        v.push(frame(&["fc00:3::b", sid], 1, 1, &[], 17, udp));
        v.push(frame(&["fc00:3::b", sid], 1, 64, &pad6, 17, udp));
        v.push(frame(&["fc00:9::5", sid], 1, 64, &[], 41, &inner6("fc00:9::5")));
        v.push(frame(&[sid, "fc00:3::b"], 0, 64, &[], 17, udp));
    }
    v
}

fn run(t: &Tables, fast: bool, f: &[u8]) -> (PacketBuf, Worker) {
    let mut w = Worker::new(t);
    w.fast_path = fast;
    let mut b = PacketBuf::new();
    b.load(f, 0);
    w.process_batch(t, 0, std::slice::from_mut(&mut b));
    (b, w)
}

/// The contents of every SID's program's maps, each map's entries sorted (a hash map's
/// order is its own).
fn maps(t: &Tables) -> Vec<Vec<(Vec<u8>, Vec<u8>)>> {
    let bpf = t.sids.iter().filter_map(|s| s.action.params.bpf.as_ref());
    let mut all = Vec::new();
    for ep in bpf {
        for m in ep.prog.maps() {
            let mut e = m.entries();
            e.sort();
            all.push(e);
        }
    }
    all
}

/// Frame `f` through `fast` (fast path on) and `general` (off): the same outcome.
fn same(fast: &Tables, general: &Tables, f: &[u8]) -> Result<bool, TestCaseError> {
    let (b1, w1) = run(fast, true, f);
    let (b2, w2) = run(general, false, f);
    prop_assert_eq!(b1.verdict, b2.verdict, "verdict for {:02x?}", f);
    prop_assert_eq!(b1.data(), b2.data(), "bytes for {:02x?}", f);
    prop_assert_eq!(&w1.counters, &w2.counters, "counters for {:02x?}", f);
    Ok(w1.fast_hits == 1)
}

#[test]
fn end_bpf_fast_step_equals_the_general_path() {
    let (fast, general) = (tables(), tables());
    let mut taken = 0;
    for f in frames() {
        taken += usize::from(same(&fast, &general, &f).unwrap());
        assert_eq!(maps(&fast), maps(&general), "maps after {f:02x?}");
    }
    assert!(taken >= 20, "the fast step forwarded only {taken} frames");
}

/// End in eBPF and Tag++ on a routed next segment are forwarded by the fast step alone
/// (no general path at all), with the kernel's bytes: Segments Left and hop limit
/// decremented, the destination the next segment, Tag++'s Tag and Flags.
#[test]
fn end_and_tag_take_the_fast_step() {
    let t = tables();
    let udp: &[u8] = &[0, 1, 0, 2, 0, 12, 0, 0, 9, 9, 9, 9];
    for (sid, flags, tag) in [("fc00:e::1", 0, 7u16), ("fc00:e::2", 0x20, 8)] {
        let f = frame(&["fc00:3::b", sid], 1, 64, &[], 17, udp);
        let (b, w) = run(&t, true, &f);
        assert_eq!(w.fast_hits, 1, "{sid}");
        assert_eq!(b.verdict, Verdict::Tx(2), "{sid}");
        let mut want = f.clone();
        want[..12].copy_from_slice(&[2, 0xaa, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0]);
        want[21] = 63;
        want[38..54].copy_from_slice(&a("fc00:3::b"));
        want[57] = 0;
        want[59] = flags;
        want[60..62].copy_from_slice(&tag.to_be_bytes());
        let d = b.data();
        assert_eq!(d[12..], want[12..], "{sid}");
        assert_eq!(d[..6], want[..6], "{sid}: the neighbour's address");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1500, ..ProptestConfig::default() })]

    /// Mutated frames: both paths agree, the maps too; nothing panics.
    #[test]
    fn end_bpf_fast_step_on_mutations(which in 0usize..10_000,
            flips in prop::collection::vec((0usize..140, any::<u8>()), 0..4), cut in 0usize..300) {
        static T: std::sync::OnceLock<std::sync::Mutex<(Tables, Tables)>> = std::sync::OnceLock::new();
        let t = T.get_or_init(|| std::sync::Mutex::new((tables(), tables()))).lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let fs = frames();
        let f = common::mutated(&fs[which % fs.len()], &flips, cut);
        same(&t.0, &t.1, &f)?;
        prop_assert_eq!(maps(&t.0), maps(&t.1));
    }
}
