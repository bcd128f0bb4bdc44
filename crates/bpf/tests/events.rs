//! `bpf_perf_event_output` from End.BPF programs compiled by clang (tests/progs/events.c,
//! legacy.c): the events' bytes built independently from the programs' sources and the
//! packets' layouts (RFC 8200 §3, RFC 8754 §2), the helper's run-time errors as the
//! kernel's `bpf_skb_event_output` returns them, the CPU and slot, and a full ring.

mod common;

use common::*;
use sr6_bpf::elf::load_object;
use sr6_bpf::events::{Drained, EventRing};
use sr6_bpf::helpers::ProgType;
use sr6_bpf::maps::map_type;
use sr6_bpf::seg6::{end_bpf, Drop, Seg6Packet, Verdict};
use sr6_bpf::{Fault, Object, RunOpts};

fn load(file: &str, sec: &str) -> Object {
    let o = compile(file);
    load_object(&o, sec, ProgType::LwtSeg6local).unwrap_or_else(|e| panic!("{file}/{sec}: {e}"))
}

/// Runs `o` on `buf` as worker `cpu` at time `ts`; the verdict and the packet after. The
/// JIT's run, checked against the interpreter's from the same state (the same verdict,
/// packet, maps and events).
fn run_on(o: &mut Object, buf: Vec<u8>, cpu: u32, ts: u64) -> (Verdict, Vec<u8>) {
    let mut p = Seg6Packet::new(buf);
    p.cpu = cpu;
    p.now_ns = ts;
    let (mut ip, mut im) = (p.clone(), o.maps.clone());
    let iv = end_bpf(&o.program, &mut im, &mut ip, RunOpts::interp());
    let v = end_bpf(&o.program, &mut o.maps, &mut p, RunOpts::default());
    assert!(o.program.is_jitted(), "{} is not compiled", o.program.name);
    assert_eq!((&v, &p.buf), (&iv, &ip.buf), "the JIT differs from the interpreter");
    for (a, b) in o.maps.iter().zip(&im) {
        assert_eq!(a.storage(), b.storage(), "map {}", a.def.name);
        assert_eq!(format!("{:?}", a.events()), format!("{:?}", b.events()), "events of {}", a.def.name);
    }
    (v, p.buf)
}

fn drain(o: &mut Object, map: &str) -> Drained {
    let i = o.map_index(map).unwrap();
    o.maps[i].events_mut().expect("a perf event array").drain()
}

/// `struct fields` of events.c for a packet after End: the new destination, skb->len,
/// the Tag as on the wire, Segments Left, the hop limit, the CPU.
fn fields(after: &[u8], cpu: u32) -> Vec<u8> {
    let mut f = after[24..40].to_vec();
    f.extend_from_slice(&(after.len() as u32).to_le_bytes());
    f.extend_from_slice(&after[46..48]);
    f.push(after[43]);
    f.push(after[7]);
    f.extend_from_slice(&cpu.to_le_bytes());
    f
}

#[test]
fn the_loader_takes_a_btf_perf_event_array() {
    let o = load("events", "fields");
    let m = &o.maps[o.map_index("events").unwrap()];
    assert_eq!(m.def.map_type, map_type::PERF_EVENT_ARRAY);
    assert_eq!((m.def.key_size, m.def.value_size), (4, 4));
    assert_eq!(m.def.max_entries, sr6_bpf::events::default_slots(), "one slot per CPU, as libbpf");
}

#[test]
fn an_event_carries_the_programs_bytes_with_cpu_slot_and_time() {
    let mut o = load("events", "fields");
    let (v, after) = run_on(&mut o, packet(2, 0, 0x1234, &[], 17), 0, 77);
    assert!(matches!(v, Verdict::Forward(_)), "{v:?}");
    let d = drain(&mut o, "events");
    assert_eq!(d.lost, 0);
    assert_eq!(d.events.len(), 1);
    let e = &d.events[0];
    assert_eq!((e.cpu, e.index, e.ts_ns), (0, 0, 77));
    assert_eq!(e.data, fields(&after, 0));
    assert_eq!(&e.data[..16], &addr(2), "the destination after the segment was consumed");
    assert_eq!(e.data[22], 1, "Segments Left after End");
    // A drained ring is empty.
    assert!(drain(&mut o, "events").events.is_empty());
}

#[test]
fn the_current_cpu_is_the_workers_index() {
    let mut o = load("events", "fields");
    let slots = o.maps[o.map_index("events").unwrap()].def.max_entries;
    if slots > 1 {
        let (_, after) = run_on(&mut o, packet(2, 0, 7, &[], 17), 1, 0);
        let d = drain(&mut o, "events");
        assert_eq!((d.events[0].cpu, d.events[0].index), (1, 1));
        assert_eq!(d.events[0].data, fields(&after, 1));
    }
    // A worker past the slots: -E2BIG, which the program turns into a drop.
    let (v, _) = run_on(&mut o, packet(2, 0, 7, &[], 17), slots, 0);
    assert_eq!(v, Verdict::Drop(Drop::ProgramDrop));
    assert!(drain(&mut o, "events").events.is_empty());
}

#[test]
fn packet_bytes_follow_when_the_flags_ask() {
    let mut o = load("events", "with_packet");
    let (_, after) = run_on(&mut o, packet(1, 0, 9, &[], 6), 0, 5);
    let d = drain(&mut o, "events");
    assert_eq!(d.events.len(), 2);
    let mut want = fields(&after, 0);
    want.extend_from_slice(&after[..64]);
    assert_eq!(d.events[0].data, want, "28 bytes of the program's, then 64 of the packet");
    assert_eq!(d.events[1].data, after, "size 0 and the whole packet");
}

#[test]
fn the_helpers_errors_are_the_kernels() {
    let mut o = load("events", "errors");
    let (v, after) = run_on(&mut o, packet(2, 0, 7, &[], 17), 0, 0);
    assert!(matches!(v, Verdict::Forward(_)), "{v:?}");
    let d = drain(&mut o, "events");
    assert_eq!(d.events.len(), 1, "only the last call emits");
    let i32s: Vec<i32> = d.events[0].data.chunks(4).map(|c| i32::from_le_bytes(c.try_into().unwrap())).collect();
    assert_eq!(i32s, vec![-22, -14, -7, 0, after.len() as i32]);
}

#[test]
fn a_full_ring_loses_events_and_counts_them() {
    let mut o = load("events", "fields");
    let i = o.map_index("events").unwrap();
    // Room for two 28-byte events (40 bytes each in a perf ring).
    *o.maps[i].events_mut().unwrap() = EventRing::with_capacity(80);
    for _ in 0..2 {
        assert!(matches!(run_on(&mut o, packet(2, 0, 7, &[], 17), 0, 0).0, Verdict::Forward(_)));
    }
    // The third: -ENOSPC, which this program turns into a drop.
    assert_eq!(run_on(&mut o, packet(2, 0, 7, &[], 17), 0, 0).0, Verdict::Drop(Drop::ProgramDrop));
    let d = drain(&mut o, "events");
    assert_eq!((d.events.len(), d.lost), (2, 1));
    assert_eq!(o.maps[i].events().unwrap().lost_total(), 1);
    assert!(matches!(run_on(&mut o, packet(2, 0, 7, &[], 17), 0, 0).0, Verdict::Forward(_)), "room again");
}

#[test]
fn a_legacy_perf_event_array() {
    let mut o = load("legacy", "emit_legacy");
    let (v, after) = run_on(&mut o, packet(2, 0, 7, &[], 17), 1, 3);
    assert!(matches!(v, Verdict::Forward(_)), "{v:?}");
    let d = drain(&mut o, "legacy_events");
    let mut want = (after.len() as u32).to_le_bytes().to_vec();
    want.extend_from_slice(&after[..8]);
    assert_eq!(d.events.len(), 1);
    assert_eq!((d.events[0].cpu, d.events[0].index, &d.events[0].data), (1, 1, &want));
    // Two slots: worker 2 has none.
    let (v, _) = run_on(&mut o, packet(2, 0, 7, &[], 17), 2, 3);
    assert!(matches!(v, Verdict::Drop(Drop::IllegalReturn(_))), "-E2BIG returned: {v:?}");
}

/// Hand-assembled: the helper's arguments checked as the kernel's verifier would at
/// load — a map that is not a perf event array, a data pointer out of bounds, a size
/// past the stack — abort the run instead of emitting anything.
#[test]
fn bad_arguments_abort_the_run() {
    use sr6_bpf::insn::*;
    use sr6_bpf::maps::{Map, MapDef};
    use sr6_bpf::vm::Program;
    let i = |code: u8, dst: u8, src: u8, off: i16, imm: i32| Insn { code, dst, src, off, imm };
    let ld_map = |reg: u8, m: i32| [i(LD | DW | IMM, reg, PSEUDO_MAP_FD, 0, m), i(0, 0, 0, 0, 0)];
    let mk = |map: i32, data_off: i32, size: i32| {
        let mut v = vec![i(ALU64 | MOV | X, 6, 1, 0, 0)];
        v.extend(ld_map(2, map));
        v.push(i(ALU | MOV | K, 3, 0, 0, -1)); // BPF_F_CURRENT_CPU: 0xffff_ffff
        v.push(i(ALU64 | MOV | X, 4, 10, 0, 0));
        v.push(i(ALU64 | ADD | K, 4, 0, 0, data_off));
        v.push(i(ALU64 | MOV | K, 5, 0, 0, size));
        v.push(i(ALU64 | MOV | X, 1, 6, 0, 0));
        v.push(i(JMP | CALL, 0, 0, 0, 25));
        v.push(i(JMP | EXIT, 0, 0, 0, 0));
        Program::new("t", ProgType::LwtSeg6local, v)
    };
    let def = |t: u32| MapDef { name: "m".into(), map_type: t, key_size: 4, value_size: 4, max_entries: 1, flags: 0 };
    let mut maps = vec![Map::new(def(map_type::PERF_EVENT_ARRAY)).unwrap(), Map::new(def(map_type::ARRAY)).unwrap()];
    let go = |p: &Program, maps: &mut Vec<Map>| {
        let mut pkt = Seg6Packet::new(packet(2, 0, 7, &[], 17));
        sr6_bpf::run(p, maps, &mut pkt, RunOpts::default())
    };
    assert_eq!(go(&mk(0, -8, 8), &mut maps), Ok(0));
    assert_eq!(maps[0].events_mut().unwrap().drain().events[0].data, vec![0; 8]);
    assert!(matches!(go(&mk(1, -8, 8), &mut maps), Err(Fault::BadHelperArg { .. })), "an array map");
    assert!(matches!(go(&mk(0, 0, 8), &mut maps), Err(Fault::OutOfBounds { .. })), "past the frame");
    assert!(matches!(go(&mk(0, -8, 600), &mut maps), Err(Fault::OutOfBounds { .. })), "size past the stack");
    assert!(matches!(go(&mk(0, -8, -1), &mut maps), Err(Fault::OutOfBounds { .. })), "size 2^64 - 1");
    // Size 0: no bytes read, wherever the pointer points (ARG_CONST_SIZE_OR_ZERO).
    assert_eq!(go(&mk(0, 4096, 0), &mut maps), Ok(0));
    assert!(maps[0].events_mut().unwrap().drain().events[0].data.is_empty());
}
