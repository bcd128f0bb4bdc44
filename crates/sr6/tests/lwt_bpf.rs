//! Routes with LWT BPF programs through the whole pipeline (`encap bpf in|out|xmit`):
//! the programs of crates/bpf/tests/progs/lwt_in.c and lwt_xmit.c, compiled by clang,
//! on frames built byte by byte; the expected bytes from the helpers' semantics
//! (net/core/filter.c's bpf_push_seg6_encap and bpf_lwt_push_ip_encap, RFC 8754 §2)
//! and the hooks' order (net/core/lwt_bpf.c). tests/kernel/test_k_lwt_bpf.py compares
//! the same programs with the kernel.

mod common;

use std::net::Ipv6Addr;
use std::path::PathBuf;

use sr6_core::drop::DropReason;
use sr6_core::packet::{PacketBuf, Verdict};
use sr6_core::pipeline::Worker;
use sr6_core::tables::Tables;

fn objs() -> PathBuf {
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| common::bpf_objects("lwt-bpf-pipeline", &["lwt_in", "lwt_xmit"])).clone()
}

/// The tables with `ip -6 route add fc00:9::/64 encap bpf HOOKS via fc00:12::2 dev eth1`,
/// `@` in HOOKS standing for the objects' directory.
fn tables(hooks: &str) -> Tables {
    let hooks = hooks.replace('@', &format!("{}/", objs().display()));
    let conf = format!("{}ip -6 route add fc00:9::/64 encap bpf {hooks} via fc00:12::2 dev eth1\n", common::BPF_ROUTER);
    Tables::build(&sr6_config::parse_str(&conf, "t.conf").unwrap()).unwrap().0
}

fn a(s: &str) -> [u8; 16] {
    s.parse::<Ipv6Addr>().unwrap().octets()
}

/// Ethernet + IPv6 (fc00:a::1 -> fc00:9::5, hop limit `hlim`, Next Header `nh`) + 8 bytes.
fn frame(nh: u8, hlim: u8) -> Vec<u8> {
    let mut f = vec![2, 0, 0, 0, 0, 1, 2, 0xaa, 0, 0, 0, 1, 0x86, 0xdd];
    f.extend_from_slice(&[0x60, 0, 0, 0, 0, 8, nh, hlim]);
    f.extend_from_slice(&a("fc00:a::1"));
    f.extend_from_slice(&a("fc00:9::5"));
    f.extend_from_slice(&[1, 2, 3, 4, 5, 6, 7, 8]);
    f
}

/// The frame through the pipeline: its verdict and the IPv6 packet out (no Ethernet).
fn run(t: &Tables, f: &[u8]) -> (Verdict, Vec<u8>) {
    let mut w = Worker::new(t);
    let mut batch = vec![PacketBuf::new()];
    assert!(batch[0].load(f, 0));
    w.process_batch(t, 0, &mut batch);
    let d = batch[0].data();
    (batch[0].verdict, d.get(14..).unwrap_or_default().to_vec())
}

#[test]
fn in_seg6_encap_forwards_on_the_new_destination() {
    let t = tables("in obj @lwt_in.o sec in_encap");
    let inner = frame(17, 64)[14..].to_vec();
    let (v, p) = run(&t, &frame(17, 64));
    assert_eq!(v, Verdict::Tx(2), "fc00:3::5 is behind eth2");
    assert_eq!(p.len(), 40 + 40 + inner.len());
    assert_eq!((p[6], p[7]), (43, 63), "an SRH; the inner hop limit, less the forwarding step");
    assert_eq!(&p[8..24], &a("fc00:ff::1"), "ip sr tunsrc");
    assert_eq!(&p[24..40], &a("fc00:3::5"), "the first segment");
    assert_eq!(&p[40..44], &[41, 4, 4, 1], "Next Header IPv6, 40 bytes, type 4, Segments Left 1");
    assert_eq!(&p[48..64], &a("fc00:2::99"));
    assert_eq!(&p[80..], &inner[..], "the inner packet untouched");
}

#[test]
fn in_seg6_inline_inserts_the_srh() {
    let t = tables("in obj @lwt_in.o sec in_inline");
    let (v, p) = run(&t, &frame(17, 64));
    assert_eq!(v, Verdict::Tx(2));
    assert_eq!(p.len(), 40 + 40 + 8);
    assert_eq!(u16::from_be_bytes([p[4], p[5]]), 48);
    assert_eq!((p[6], p[7]), (43, 63));
    assert_eq!(&p[24..40], &a("fc00:3::5"));
    assert_eq!(p[40], 17, "the old Next Header");
    assert_eq!(&p[48..64], &a("fc00:9::5"), "segment 0: the old destination");
}

#[test]
fn in_invalid_srh_refused_then_own_route() {
    let t = tables("in obj @lwt_in.o sec in_bad_srh");
    let (v, p) = run(&t, &frame(17, 64));
    assert_eq!(v, Verdict::Tx(1), "the route's own next hop (eth1)");
    assert_eq!(p.len(), 48);
    assert_eq!(p[7], 63);
}

#[test]
fn xmit_ip6_reroute_and_ok() {
    let t = tables("xmit obj @lwt_xmit.o sec xmit_ip6");
    let (v, p) = run(&t, &frame(17, 64));
    assert_eq!(v, Verdict::Tx(2), "rerouted to fc00:3::7");
    assert_eq!((p[6], p[7]), (41, 60), "IPv6 in IPv6; the program's hop limit, not decremented");
    assert_eq!(u16::from_be_bytes([p[4], p[5]]), 48);
    assert_eq!(p[40 + 7], 63, "the inner hop limit: the forwarding step before xmit");
    let t = tables("xmit obj @lwt_xmit.o sec xmit_ip6_ok headroom 40");
    let (v, p) = run(&t, &frame(17, 64));
    assert_eq!(v, Verdict::Tx(1), "BPF_OK: the route's own next hop");
    assert_eq!(&p[24..40], &a("fc00:3::7"));
}

#[test]
fn drops_are_counted() {
    for hooks in
        ["in obj @lwt_in.o sec drop_udp", "out obj @lwt_xmit.o sec drop_udp", "xmit obj @lwt_xmit.o sec drop_udp"]
    {
        let t = tables(hooks);
        assert_eq!(run(&t, &frame(17, 64)).0, Verdict::Drop(DropReason::LwtBpfDrop), "{hooks}");
        assert_eq!(run(&t, &frame(59, 64)).0, Verdict::Tx(1), "{hooks}");
    }
    // `in` runs before the hop limit is checked: UDP at hop limit 1 is the program's drop.
    let t = tables("in obj @lwt_in.o sec drop_udp");
    assert_eq!(run(&t, &frame(17, 1)).0, Verdict::Drop(DropReason::LwtBpfDrop));
}

#[test]
fn headroom_lowers_the_mtu() {
    // 1500 - 256: a 1300-byte packet is too big for an xmit route with headroom 256.
    let t = tables("xmit obj @lwt_xmit.o sec drop_udp headroom 256");
    let mut f = frame(59, 64);
    f.resize(14 + 1300, 0);
    let plen = (1300u16 - 40).to_be_bytes();
    f[18..20].copy_from_slice(&plen);
    let (v, p) = run(&t, &f);
    assert_eq!(v, Verdict::Tx(0), "Packet Too Big back to the source");
    assert_eq!((p[6], p[40]), (58, 2), "ICMPv6 Packet Too Big");
    assert_eq!(u32::from_be_bytes([p[44], p[45], p[46], p[47]]), 1500 - 256);
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]
    /// No input makes an LWT route panic: random bytes after a valid start, truncated or
    /// with any Next Header and hop limit, through every program.
    #[test]
    fn any_packet_through_every_program(nh in 0u8..=255, hlim in 0u8..=255, tail in proptest::collection::vec(0u8..=255, 0..200), cut in 0usize..80) {
        static TABLES: std::sync::OnceLock<Vec<Tables>> = std::sync::OnceLock::new();
        let all = TABLES.get_or_init(|| {
            ["in obj @lwt_in.o sec in_encap", "in obj @lwt_in.o sec in_inline", "in obj @lwt_in.o sec in_ip6",
             "xmit obj @lwt_xmit.o sec xmit_ip6 out obj @lwt_xmit.o sec drop_udp",
             "in obj @lwt_in.o sec in_bad_srh xmit obj @lwt_xmit.o sec xmit_ip6_ok"]
                .iter().map(|h| tables(h)).collect()
        });
        let mut f = frame(nh, hlim);
        f.truncate(14 + 40);
        f.extend_from_slice(&tail);
        let plen = (tail.len() as u16).to_be_bytes();
        f[18..20].copy_from_slice(&plen);
        f.truncate(f.len().saturating_sub(cut).max(14));
        for t in all {
            let _ = run(t, &f);
        }
    }
}
