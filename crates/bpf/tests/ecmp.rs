//! sr6's extension helper `sr6_ecmp_nexthops` (docs/bpf.md, "sr6's extension helper") in
//! the interpreter: tests/progs/ecmp.c asks for the next hops of the packet's new
//! destination through `seg6::end_bpf_ext` with a stand-in for the router's routes; the
//! answers, what is written where, the refusal without routes, an output area past the
//! program's memory, and the program types that may not call it.

mod common;

use common::*;
use sr6_bpf::elf::load_object;
use sr6_bpf::helpers::ProgType;
use sr6_bpf::seg6::{end_bpf, end_bpf_ext, Drop, Seg6Packet, Verdict};
use sr6_bpf::skb::NextHopLookup;
use sr6_bpf::{Fault, Object, RunOpts, Scratch};

/// Two next hops, fc00::31 and fc00::32, for fc00::2 in the main table; no route for
/// anything else; table 100 unknown.
struct Routes;

impl NextHopLookup for Routes {
    fn ecmp_nexthops(&self, dst: &[u8; 16], table: u32, out: &mut [[u8; 16]]) -> i64 {
        if table == 100 {
            return -22;
        }
        if *dst != addr(2) {
            return -2;
        }
        for (o, h) in out.iter_mut().zip([addr(0x31), addr(0x32)]) {
            *o = h;
        }
        2
    }
}

fn load(sec: &str) -> Object {
    load_object(&compile("ecmp"), sec, ProgType::LwtSeg6local).unwrap_or_else(|e| panic!("{sec}: {e}"))
}

fn i64_at(b: &[u8], at: usize) -> i64 {
    i64::from_le_bytes(b[at..at + 8].try_into().unwrap())
}

#[test]
fn answers_written_as_far_as_they_fit() {
    let mut o = load("ecmp");
    let mut p = Seg6Packet::new(packet(2, 0, 7, &[], 17));
    let v = end_bpf_ext(&mut Scratch::default(), &o.program, &mut o.maps, &mut p, RunOpts::default(), Some(&Routes));
    assert!(matches!(v, Verdict::Forward(_)), "{v:?}");
    let r = o.maps[o.map_index(".bss").unwrap()].storage();
    assert_eq!((i64_at(r, 0), i64_at(r, 8), i64_at(r, 16)), (2, 2, -22));
    assert_eq!(&r[24..40], &addr(0x31));
    assert_eq!(&r[40..56], &addr(0x32));
    assert_eq!(&r[56..72], &[0; 16], "the third slot untouched");
    assert_eq!(&r[72..88], &addr(0x31), "room for one: the first");
    assert_eq!(&r[88..103], &[0; 15], "bytes short of an address untouched");
}

#[test]
fn refused_without_the_routers_routes() {
    let mut o = load("ecmp");
    let mut p = Seg6Packet::new(packet(2, 0, 7, &[], 17));
    let v = end_bpf(&o.program, &mut o.maps, &mut p, RunOpts::default());
    assert!(matches!(v, Verdict::Forward(_)), "{v:?}");
    let r = o.maps[o.map_index(".bss").unwrap()].storage();
    assert_eq!((i64_at(r, 0), i64_at(r, 8), i64_at(r, 16)), (-524, -524, -524), "-ENOTSUPP");
    assert_eq!(&r[24..], &[0; 80][..]);
}

#[test]
fn an_output_area_past_the_stack_aborts_the_run() {
    let mut o = load("ecmp_bad_out");
    let mut p = Seg6Packet::new(packet(2, 0, 7, &[], 17));
    let v = end_bpf_ext(&mut Scratch::default(), &o.program, &mut o.maps, &mut p, RunOpts::default(), Some(&Routes));
    assert!(matches!(v, Verdict::Drop(Drop::Fault(Fault::OutOfBounds { .. }))), "{v:?}");
}

#[test]
fn for_end_bpf_only() {
    let obj = compile("ecmp");
    for t in [ProgType::LwtIn, ProgType::LwtOut, ProgType::LwtXmit] {
        let e = load_object(&obj, "ecmp", t).err().unwrap_or_else(|| panic!("{t:?} loaded"));
        let want = format!("helper sr6_ecmp_nexthops (id 32595) is not available to {} programs", t.name());
        assert!(e.to_string().contains(&want), "{t:?}: {e}");
    }
}
