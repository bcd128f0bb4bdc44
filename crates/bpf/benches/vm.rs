//! The JIT against the interpreter: End.BPF (`seg6::end_bpf_with`, a reused `Scratch`)
//! running end.c, tag.c's tag_inc, tlv.c's add_tlv and action.c's end_t on one packet
//! (the packet restored before each run). `cargo bench -p sr6-bpf --bench vm`.

#[path = "../tests/common/mod.rs"]
mod common;

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use sr6_bpf::elf::load_object;
use sr6_bpf::helpers::ProgType;
use sr6_bpf::seg6::{end_bpf_with, Seg6Packet, Verdict};
use sr6_bpf::{Engine, RunOpts, Scratch};

fn vm(c: &mut Criterion) {
    let input = common::packet(2, 0, 7, &[], 17);
    for (file, sec) in [("end", "end"), ("tag", "tag_inc"), ("tlv", "add_tlv"), ("action", "end_t")] {
        let mut o = load_object(&common::compile(file), sec, ProgType::LwtSeg6local).expect("load");
        assert!(o.program.is_jitted(), "{sec} is not compiled");
        let mut g = c.benchmark_group(format!("end_bpf/{sec}"));
        for (name, engine) in [("interp", Engine::Interp), ("jit", Engine::Auto)] {
            let opts = RunOpts { engine, ..RunOpts::default() };
            let mut pkt = Seg6Packet::new(input.clone());
            let mut scratch = Scratch::default();
            g.bench_function(name, |b| {
                b.iter(|| {
                    pkt.buf.clear();
                    pkt.buf.extend_from_slice(&input);
                    let v = end_bpf_with(&mut scratch, &o.program, &mut o.maps, &mut pkt, opts);
                    assert!(matches!(v, Verdict::Forward(_)), "{sec}: {v:?}");
                    black_box(v)
                })
            });
        }
        g.finish();
    }
}

criterion_group!(benches, vm);
criterion_main!(benches);
