//! End.BPF programs compiled by clang from tests/progs and run by sr6-bpf on hand-built
//! packets, by the JIT and by the interpreter (the same results). The expected packets
//! are built independently, field by field, from the helpers' documented semantics
//! (net/core/filter.c, net/ipv6/seg6_local.c) and the headers' layouts (RFC 8200 §3,
//! RFC 8754 §2), never from sr6-bpf's output.

mod common;

use common::*;
use sr6_bpf::elf::{load_object, LoadError};
use sr6_bpf::helpers::ProgType;
use sr6_bpf::seg6::{end_bpf, Drop, Route, Seg6Packet, Verdict};
use sr6_bpf::verifier::VerifyError;
use sr6_bpf::{Fault, Object, RunOpts};

fn load(file: &str, sec: &str) -> Object {
    let o = compile(file);
    load_object(&o, sec, ProgType::LwtSeg6local).unwrap_or_else(|e| panic!("{file}/{sec}: {e}"))
}

/// End.BPF on `buf` (the JIT's code), checked against the interpreter run from the same
/// state: the same verdict, packet and maps.
fn run(obj: &mut Object, buf: Vec<u8>) -> (Verdict, Seg6Packet) {
    let mut p = Seg6Packet::new(buf);
    p.encap_src = addr(0xee);
    let (mut ip, mut im) = (p.clone(), obj.maps.clone());
    let iv = end_bpf(&obj.program, &mut im, &mut ip, RunOpts::interp());
    let v = end_bpf(&obj.program, &mut obj.maps, &mut p, RunOpts::default());
    assert!(obj.program.is_jitted(), "{} is not compiled", obj.program.name);
    assert_eq!((&v, format!("{p:?}")), (&iv, format!("{ip:?}")), "the JIT differs from the interpreter");
    for (a, b) in obj.maps.iter().zip(&im) {
        assert_eq!((a.storage(), a.entries().len()), (b.storage(), b.entries().len()), "map {}", a.def.name);
    }
    (v, p)
}

/// fc00:3::N, the segments the End.B6 programs push.
fn c3(n: u8) -> [u8; 16] {
    let mut a = addr(n);
    a[3] = 3;
    a
}

fn main_route(da: [u8; 16]) -> Verdict {
    Verdict::Forward(Route { daddr: da, nexthop: None, table: 0 })
}

#[test]
fn end_consumes_the_srh_and_routes_on_the_next_segment() {
    let mut o = load("end", "end");
    let (v, p) = run(&mut o, packet(2, 0, 0x1234, &[], 17));
    assert_eq!(v, main_route(addr(2)));
    assert_eq!(p.buf, packet(1, 0, 0x1234, &[], 17));
}

#[test]
fn tag_and_flags_through_store_bytes() {
    let mut o = load("tag", "tag_inc");
    let (v, p) = run(&mut o, packet(2, 0, 0x1234, &[], 17));
    assert_eq!(v, main_route(addr(2)));
    assert_eq!(p.buf, packet(1, 0x20, 0x1235, &[], 17));
}

#[test]
fn add_and_remove_a_tlv() {
    let tlv = [0x7e, 6, 1, 2, 3, 4, 5, 6];
    let mut o = load("tlv", "add_tlv");
    let (v, p) = run(&mut o, packet(2, 0, 7, &[], 17));
    assert_eq!(v, main_route(addr(2)));
    assert_eq!(p.buf, packet(1, 0, 7, &tlv, 17));

    let mut o = load("tlv", "del_tlv");
    let (v, p) = run(&mut o, packet(2, 0, 7, &tlv, 17));
    assert_eq!(v, main_route(addr(2)));
    assert_eq!(p.buf, packet(1, 0, 7, &[], 17));
}

#[test]
fn an_srh_left_invalid_is_dropped() {
    for sec in ["grow_4", "bad_tlv"] {
        let mut o = load("tlv", sec);
        let (v, _) = run(&mut o, packet(2, 0, 7, &[], 17));
        assert_eq!(v, Verdict::Drop(Drop::InvalidSrh), "{sec}");
    }
}

#[test]
fn store_bytes_refuses_the_segment_list() {
    let mut o = load("tlv", "write_segment");
    let (v, p) = run(&mut o, packet(2, 0, 7, &[], 17));
    // -EFAULT returned as the program's result: not a valid return code.
    assert_eq!(v, Verdict::Drop(Drop::IllegalReturn(-14i32 as u32)));
    assert_eq!(p.buf, packet(1, 0, 7, &[], 17));
}

#[test]
fn store_bytes_reaches_the_last_segments_second_half_as_the_kernels() {
    let mut o = load("tlv", "write_seg_tail");
    let (v, p) = run(&mut o, packet(2, 0, 7, &[], 17));
    assert_eq!(v, main_route(addr(2)));
    // Segment List[2] (Last Entry 2) is at 40 + 8 + 32; its bytes 8..16 rewritten.
    let mut want = packet(1, 0, 7, &[], 17);
    want[40 + 8 + 32 + 8..40 + 8 + 48].copy_from_slice(&0x1122_3344_5566_7788u64.to_le_bytes());
    assert_eq!(p.buf, want);
}

#[test]
fn end_x_and_end_t_choose_the_route() {
    let mut o = load("action", "end_x");
    let (v, p) = run(&mut o, packet(2, 0, 7, &[], 17));
    let nh = [0xfc, 0, 0, 0x13, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2];
    assert_eq!(v, Verdict::Forward(Route { daddr: addr(2), nexthop: Some(nh), table: 0 }));
    assert_eq!(p.buf, packet(1, 0, 7, &[], 17));

    let mut o = load("action", "end_t");
    let (v, _) = run(&mut o, packet(2, 0, 7, &[], 17));
    assert_eq!(v, Verdict::Forward(Route { daddr: addr(2), nexthop: None, table: 100 }));
}

#[test]
fn end_dt6_decapsulates() {
    let mut o = load("action", "end_dt6");
    let (v, p) = run(&mut o, packet(2, 0, 7, &[], 17));
    assert_eq!(v, Verdict::Forward(Route { daddr: addr(0x99), nexthop: None, table: 100 }));
    assert_eq!(p.buf, inner(17));
}

#[test]
fn end_b6_encaps_pushes_an_outer_header() {
    let mut o = load("action", "b6_encap");
    let (v, p) = run(&mut o, packet(2, 0, 7, &[], 17));
    assert_eq!(v, main_route(c3(0xb1)));
    let orig = packet(1, 0, 7, &[], 17);
    let s = srh(41, 1, 0, 0, &[c3(0xb2), c3(0xb1)], &[]);
    // RFC 8986 §4.14 / Linux: the outer header copies the inner's traffic class, flow
    // label and hop limit; its source is the router's, its destination the first segment.
    let mut want = ipv6(43, s.len() + orig.len(), addr(0xee), c3(0xb1));
    want.extend_from_slice(&s);
    want.extend_from_slice(&orig);
    assert_eq!(p.buf, want);
}

#[test]
fn end_b6_inserts_an_srh() {
    let mut o = load("action", "b6_inline");
    let (v, p) = run(&mut o, packet(2, 0, 7, &[], 17));
    assert_eq!(v, main_route(c3(0xb1)));
    // The new SRH after the IPv6 header, its Segment List[0] the old destination (fc00::2).
    let new = srh(43, 1, 0, 0, &[addr(2), c3(0xb1)], &[]);
    let old = srh(41, 1, 0, 7, &segs(), &[]);
    let i = inner(17);
    let mut want = ipv6(43, new.len() + old.len() + i.len(), SRC, c3(0xb1));
    want.extend_from_slice(&new);
    want.extend_from_slice(&old);
    want.extend_from_slice(&i);
    assert_eq!(p.buf, want);
}

#[test]
fn redirect_without_an_action_is_dropped() {
    let mut o = load("action", "redirect_alone");
    assert_eq!(run(&mut o, packet(2, 0, 7, &[], 17)).0, Verdict::Drop(Drop::RedirectWithoutRoute));
}

#[test]
fn packets_without_an_active_srh_are_dropped() {
    let mut o = load("end", "end");
    assert_eq!(run(&mut o, packet(0, 0, 7, &[], 17)).0, Verdict::Drop(Drop::NoSrh));
    assert_eq!(run(&mut o, inner(17)).0, Verdict::Drop(Drop::NoSrh));
    // Hdr Ext Len saying more than the packet has.
    let mut p = packet(2, 0, 7, &[], 17);
    p[41] = 200;
    assert_eq!(run(&mut o, p).0, Verdict::Drop(Drop::NoSrh));
}

fn u64_of(b: &[u8]) -> u64 {
    u64::from_le_bytes(b[..8].try_into().unwrap())
}

#[test]
fn maps_and_global_data() {
    let mut o = load("maps", "count");
    let names: Vec<_> = o.maps.iter().map(|m| m.def.name.clone()).collect();
    assert_eq!(names, ["pkts", "by_tag", ".rodata", ".data", ".bss"]);
    let mut total = 0u64;
    for tag in [5u16, 5, 6] {
        let buf = packet(2, 0, tag, &[], 17);
        total += buf.len() as u64;
        assert_eq!(run(&mut o, buf).0, main_route(addr(2)));
    }
    let pkts = &o.maps[o.map_index("pkts").unwrap()];
    assert_eq!(u64_of(&pkts.entries()[2].1), 3);
    assert_eq!(u64_of(&pkts.entries()[0].1), 0);
    let by_tag = &o.maps[o.map_index("by_tag").unwrap()];
    // Keys are the Tag as it sits in the packet (network byte order).
    let e = by_tag.entries();
    assert_eq!(e.len(), 2);
    assert_eq!((e[0].0.clone(), u64_of(&e[0].1)), (5u16.to_be_bytes().to_vec(), 2));
    assert_eq!((e[1].0.clone(), u64_of(&e[1].1)), (6u16.to_be_bytes().to_vec(), 1));
    assert_eq!(u64_of(o.maps[o.map_index(".bss").unwrap()].storage()), total);
    assert_eq!(u64_of(o.maps[o.map_index(".data").unwrap()].storage()), 103);
    // A third tag: the hash map (max_entries 2) is full, the update fails, BPF_DROP.
    assert_eq!(run(&mut o, packet(2, 0, 9, &[], 17)).0, Verdict::Drop(Drop::ProgramDrop));
}

#[test]
fn an_lpm_trie() {
    let mut o = load("lpm", "lpm_tag");
    let mut da = |segs: Vec<[u8; 16]>| {
        let s = srh(17, 1, 0, 0, &segs, &[]);
        let mut p = ipv6(43, s.len() + 8, SRC, segs[1]);
        p.extend_from_slice(&s);
        p.extend_from_slice(&[0; 8]);
        let (v, out) = run(&mut o, p);
        assert!(matches!(v, Verdict::Forward(_)), "{v:?}");
        u16::from_be_bytes([out.buf[46], out.buf[47]])
    };
    let mut in48 = addr(5);
    in48[3] = 2;
    in48[7] = 1; // fc00:2:0:1::5: in the /48, not the /64
    let mut in64 = addr(0x99);
    in64[3] = 2; // fc00:2::99
    assert_eq!(da(vec![in64, addr(1)]), 0x64);
    assert_eq!(da(vec![in48, addr(1)]), 0x48);
    assert_eq!(da(vec![c3(1), addr(1)]), 0);
    assert_eq!(o.maps[0].entries().len(), 2);
}

#[test]
fn a_legacy_maps_section() {
    let mut o = load("legacy", "count_legacy");
    for _ in 0..3 {
        assert_eq!(run(&mut o, packet(2, 0, 7, &[], 17)).0, main_route(addr(2)));
    }
    assert_eq!(o.maps[0].def.name, "legacy");
    assert_eq!(u64_of(&o.maps[0].entries()[0].1), 9);
}

#[test]
fn bpf_to_bpf_calls_and_skb_load_bytes() {
    let mut o = load("misc", "drop_udp");
    assert_eq!(run(&mut o, packet(2, 0, 7, &[], 17)).0, Verdict::Drop(Drop::ProgramDrop));
    assert_eq!(run(&mut o, packet(2, 0, 7, &[], 6)).0, main_route(addr(2)));
}

#[test]
fn context_writes_time_and_trace() {
    let mut o = load("misc", "stamp");
    let mut p = Seg6Packet::new(packet(2, 0, 7, &[], 17));
    p.now_ns = 0x1_0000_0005;
    let v = end_bpf(&o.program, &mut o.maps, &mut p, RunOpts::default());
    assert_eq!(v, main_route(addr(2)));
    assert_eq!(p.meta.cb[0], 5);
    assert_eq!(p.meta.mark, 7);
    assert_eq!(p.traces, vec![b"hello %d\0".to_vec()]);
}

#[test]
fn out_of_bounds_packet_read_aborts_the_program() {
    let mut o = load("misc", "oob_read");
    match run(&mut o, packet(2, 0, 7, &[], 17)).0 {
        Verdict::Drop(Drop::Fault(Fault::OutOfBounds { len: 1, .. })) => {}
        v => panic!("{v:?}"),
    }
}

fn load_err(file: &str, sec: &str) -> LoadError {
    let o = compile(file);
    match load_object(&o, sec, ProgType::LwtSeg6local) {
        Ok(_) => panic!("{file}/{sec} loaded"),
        Err(e) => e,
    }
}

#[test]
fn refused_programs_say_why() {
    let e = load_err("refused", "loop");
    assert!(matches!(e, LoadError::Verify { err: VerifyError::BackEdge { .. }, .. }), "{e}");
    assert!(e.to_string().contains("loops are not supported"), "{e}");
    let e = load_err("refused", "pull");
    assert!(e.to_string().contains("helper bpf_skb_pull_data (id 39) is not provided by sr6 yet"), "{e}");
    let e = load_err("refused", "push_encap");
    assert!(e.to_string().contains("bpf_lwt_push_encap (id 73) is not available to lwt_seg6local"), "{e}");
    let e = load_err("refused", "unknown");
    assert!(e.to_string().contains("unknown helper id 9999"), "{e}");
}

#[test]
fn load_errors_are_clear() {
    let e = load_err("end", "nope");
    assert_eq!(e.to_string(), "no section \"nope\" in the object (program sections: end)");
    let e = load_err("end", "license");
    assert!(matches!(e, LoadError::NotProgram(_)), "{e}");
    let missing = std::path::Path::new("/nonexistent/x.o");
    let e = load_object(missing, "end", ProgType::LwtSeg6local).unwrap_err();
    assert!(e.to_string().starts_with("cannot read /nonexistent/x.o: "), "{e}");
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/progs/end.c");
    let e = load_object(&src, "end", ProgType::LwtSeg6local).unwrap_err();
    assert!(matches!(e, LoadError::NotElf(_)), "{e}");
    let exe = std::env::current_exe().unwrap();
    let e = load_object(&exe, "end", ProgType::LwtSeg6local).unwrap_err();
    assert!(e.to_string().starts_with("not an eBPF object (ELF machine "), "{e}");
}
