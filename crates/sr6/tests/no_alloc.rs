//! The hot path allocates nothing: a counting global allocator (`stats_alloc`) watches
//! `Worker::process_batch` over every kind of packet of the bundled example
//! (head-end, End, PSP, End.X, decapsulation, ICMP errors, local delivery), also with
//! policy routing rules, with a firewall and with an IDS.

mod common;

use sr6_core::packet::{PacketBuf, Verdict};
use sr6_core::pipeline::Worker;
use sr6_core::tables::Tables;

use std::alloc::System;

use stats_alloc::{Region, StatsAlloc, INSTRUMENTED_SYSTEM};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

/// Allocations and reallocations made, by every thread, while `f` runs.
fn allocations(f: impl FnOnce()) -> usize {
    let region = Region::new(GLOBAL);
    f();
    let c = region.change();
    c.allocations + c.reallocations
}

/// A worker over `t` that has run `frames` once through `batch` (the warm-up), and the
/// allocations of ten more runs. `after` runs after each batch (as the callers drain
/// the IDS's alerts); what it returns over the ten is summed.
fn warm_runs(
    t: &Tables,
    frames: &[Vec<u8>],
    batch: &mut [PacketBuf],
    mut after: impl FnMut(&mut Worker) -> usize,
) -> (Worker, usize, usize) {
    let mut w = Worker::new(t);
    let mut run = |w: &mut Worker| {
        for (b, f) in batch.iter_mut().zip(frames.iter().cycle()) {
            b.load(f, 0);
        }
        w.process_batch(t, 0, batch);
        after(w)
    };
    run(&mut w);
    let mut summed = 0;
    let n = allocations(|| {
        for _ in 0..10 {
            summed += run(&mut w);
        }
    });
    (w, n, summed)
}

#[test]
fn processing_a_batch_allocates_nothing() {
    let t = common::example_tables();
    let frames = common::example_frames();
    assert!(frames.len() >= 10);
    let mut batch: Vec<PacketBuf> = (0..frames.len() * 3).map(|_| PacketBuf::new()).collect();
    let (w, n, _) = warm_runs(&t, &frames, &mut batch, |_| 0);
    assert_eq!(n, 0, "the pipeline allocated {n} times");
    // And the packets really went through every path.
    let c = &w.counters;
    assert!(c.tx.iter().sum::<u64>() > 0 && c.local > 0 && c.icmp_sent > 0, "{c:?}");
    assert!(batch.iter().all(|b| b.verdict != Verdict::Pending));

    // The same with policy routing rules (every frame on the general path, each lookup
    // walking them). In this one test: the allocator counts every thread.
    let conf = std::fs::read_to_string(common::repo().join("examples/example.conf")).unwrap();
    let rules = "ip -6 rule add ipproto udp dport 1-65534 lookup 100\nip -6 rule add not iif eth0 lookup 101\n\
                 ip rule add ipproto udp lookup 100\n";
    let t = sr6_core::tables::Tables::build(&sr6_config::parse_str(&format!("{conf}{rules}"), "r.conf").unwrap())
        .unwrap()
        .0;
    let (w, n, _) = warm_runs(&t, &frames, &mut batch, |_| 0);
    assert_eq!(n, 0, "the pipeline with rules allocated {n} times");
    assert_eq!(w.fast_hits, 0);
    assert!(w.counters.tx.iter().sum::<u64>() > 0, "{:?}", w.counters);

    // The same with a firewall: INPUT and FORWARD rules, a user chain, SEG6 actions,
    // REJECT.
    let fw = "ip6tables -N C\nip6tables -A INPUT -m srh --srh-segs-left-gt 1 -j SEG6 --seg6-action go-last\n\
              ip6tables -A INPUT -j C\nip6tables -A C -m srh ! --srh-tag 9 -j RETURN\n\
              ip6tables -A FORWARD -p tcp -j REJECT\nip6tables -A FORWARD -m srh --srh-lsid ::/0 -j ACCEPT\n";
    let t =
        sr6_core::tables::Tables::build(&sr6_config::parse_str(&format!("{conf}{fw}"), "f.conf").unwrap()).unwrap().0;
    let (w, n, _) = warm_runs(&t, &frames, &mut batch, |_| 0);
    assert_eq!(n, 0, "the pipeline with a firewall allocated {n} times");
    assert_eq!(w.fast_hits, 0);
    assert!(w.counters.firewall.iter().sum::<u64>() > 0, "{:?}", w.counters.firewall);

    // The same with an IDS at INPUT and FORWARD, IPS mode: header-only rules, contents
    // through the automaton, alerts drained after each batch as the callers do.
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("no-alloc-ids");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("rules.txt"),
        "alert ip any any -> any any (sid:1;)\nalert udp any any -> any any (content:\"|00|\"; sid:2;)\n\
         drop udp any any -> any any (content:\"|00 00|\"; content:!\"zz\"; sid:3;)\n\
         alert ip any any -> any any (content:\"a\"; nocase; content:\"b\"; distance:0; within:8; sid:4;)\n",
    )
    .unwrap();
    let ids = format!("ids rules {}/rules.txt mode ips on input,forward\n", dir.display());
    let t =
        sr6_core::tables::Tables::build(&sr6_config::parse_str(&format!("{conf}{ids}"), "i.conf").unwrap()).unwrap().0;
    let (w, n, alerts) = warm_runs(&t, &frames, &mut batch, |w| w.ids.alerts.drain().count());
    assert_eq!(n, 0, "the pipeline with an IDS allocated {n} times");
    assert_eq!(w.fast_hits, 0);
    assert!(alerts > 0 && w.counters.ids.inspected > 0, "{:?}", w.counters.ids);

    // The same with End.BPF SIDs in place of the example's End and End with PSP: Tag++
    // (bpf_lwt_seg6_store_bytes) and an added TLV (bpf_lwt_seg6_adjust_srh): the
    // program's packet vector, stack and maps are reused.
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("no-alloc-bpf");
    std::fs::create_dir_all(&dir).unwrap();
    for name in ["tag", "tlv"] {
        let src = common::repo().join(format!("crates/bpf/tests/progs/{name}.c"));
        sr6_bpf::clang::compile(&src, &dir.join(format!("{name}.o")), &[]).unwrap();
    }
    let bpf = conf
        .replace(
            "fc00:1::e/128 encap seg6local action End dev",
            &format!(
                "fc00:1::e/128 encap seg6local action End.BPF endpoint obj {}/tag.o sec tag_inc dev",
                dir.display()
            ),
        )
        .replace(
            "fc00:1::e7/128 encap seg6local action End flavors psp dev",
            &format!(
                "fc00:1::e7/128 encap seg6local action End.BPF endpoint obj {}/tlv.o sec add_tlv dev",
                dir.display()
            ),
        );
    assert!(bpf.matches("End.BPF").count() == 2, "the example's End SIDs moved");
    let t = sr6_core::tables::Tables::build(&sr6_config::parse_str(&bpf, "b.conf").unwrap()).unwrap().0;
    let (w, n, _) = warm_runs(&t, &frames, &mut batch, |_| 0);
    assert_eq!(n, 0, "the pipeline with End.BPF allocated {n} times");
    let bpf_sids: Vec<usize> =
        t.sids.iter().enumerate().filter(|(_, s)| s.behaviour.keyword == "End.BPF").map(|(i, _)| i).collect();
    let c = &w.counters;
    assert!(
        bpf_sids.iter().all(|&i| c.sids.get(i).is_some_and(|s| s.packets > 0)),
        "both End.BPF SIDs forwarded packets"
    );
    // (The example sends some packets at Segments Left 0 too: `bpf_invalid_srh`.)
    for r in ["bpf_drop", "bpf_error"] {
        let i = sr6_core::drop::DropReason::ALL.iter().position(|d| d.name() == r).unwrap();
        assert_eq!(c.drops[i], 0, "{r}");
    }

    // Routes with LWT BPF programs: an SRH pushed by `in` (bpf_lwt_push_encap SEG6, the
    // new destination routed), an IPv6 header pushed by `xmit` and rerouted.
    for name in ["lwt_in", "lwt_xmit"] {
        let src = common::repo().join(format!("crates/bpf/tests/progs/{name}.c"));
        sr6_bpf::clang::compile(&src, &dir.join(format!("{name}.o")), &[]).unwrap();
    }
    let d = dir.display();
    let lwt = format!(
        "{conf}ip -6 route add fc00:3::/48 via fc00:23::3 dev eth2\n\
         ip -6 route add fc00:9::/64 encap bpf in obj {d}/lwt_in.o sec in_encap via fc00:12::2 dev eth1\n\
         ip -6 route add fc00:8::/64 encap bpf xmit obj {d}/lwt_xmit.o sec xmit_ip6 via fc00:12::2 dev eth1\n"
    );
    let t = sr6_core::tables::Tables::build(&sr6_config::parse_str(&lwt, "l.conf").unwrap()).unwrap().0;
    let lwt_frames: Vec<Vec<u8>> = ["fc00:9::5", "fc00:8::5"]
        .iter()
        .map(|dst| {
            let mut f = vec![2, 0, 0, 0, 0, 0xa0, 2, 0, 0, 0, 0x0a, 2, 0x86, 0xdd, 0x60, 0, 0, 0, 0, 16, 17, 64];
            f.extend_from_slice(&"fc00:a::2".parse::<std::net::Ipv6Addr>().unwrap().octets());
            f.extend_from_slice(&dst.parse::<std::net::Ipv6Addr>().unwrap().octets());
            f.extend_from_slice(&[0x9c, 0x41, 0x9c, 0x42, 0, 16, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8]);
            f
        })
        .collect();
    let (w, n, _) = warm_runs(&t, &lwt_frames, &mut batch, |_| 0);
    assert_eq!(n, 0, "the pipeline with LWT BPF routes allocated {n} times");
    assert!(batch.iter().all(|b| b.verdict == Verdict::Tx(2)), "{:?}", w.counters);
}
