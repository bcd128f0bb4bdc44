//! Nothing in the data plane panics on any input, and what it emits is well-formed:
//! random bytes, and mutations (bit flips, truncations, byte overwrites) of every frame
//! of the bundled example, go through the pipeline; every transmitted frame must be an
//! Ethernet frame whose IPv6/IPv4 header is consistent with its length.

mod common;

use proptest::prelude::*;
use sr6_core::packet::{PacketBuf, Verdict};
use sr6_core::pipeline::Worker;
use sr6_wire::{Ipv4Packet, Ipv6Packet};

/// Every frame `b` leaves (its IPv4 fragments in its place) is well-formed.
fn check_outputs(b: &PacketBuf, w: &Worker) -> Result<(), TestCaseError> {
    for o in w.extra.outputs(std::slice::from_ref(b)) {
        check_output(o.verdict, o.data)?;
    }
    Ok(())
}

fn check_output(verdict: Verdict, d: &[u8]) -> Result<(), TestCaseError> {
    if let Verdict::Tx(_) = verdict {
        prop_assert!(d.len() >= 14, "short frame out");
        match u16::from_be_bytes([d[12], d[13]]) {
            0x86dd => {
                let ip = Ipv6Packet::new_checked(&d[14..]);
                prop_assert!(ip.is_ok(), "bad IPv6 out: {:?}", ip.err());
                prop_assert_eq!(ip.unwrap().total_len(), d.len() - 14);
            }
            0x0800 => {
                let ip = Ipv4Packet::new_checked(&d[14..]);
                prop_assert!(ip.is_ok(), "bad IPv4 out");
                let ip = ip.unwrap();
                prop_assert!(ip.verify_checksum());
            }
            // End.DX2 forwards inner frames as they are.
            _ => {}
        }
    }
    Ok(())
}

/// Firewall rules over the example: every target, SEG6 actions in both chains (FORWARD's
/// re-forwarding them again), a user chain, REJECT.
const FIREWALL: &str = "
ip6tables -N C
ip6tables -A INPUT -m srh --srh-segs-left-gt 2 -j SEG6 --seg6-action skip-next
ip6tables -A INPUT -m srh --srh-segs-left-eq 2 -j SEG6 --seg6-action go-last
ip6tables -A INPUT -m srh --srh-last-entry-gt 3 -j SEG6 --seg6-action eval-args
ip6tables -A INPUT -p udp --dport 0:100 -j REJECT
ip6tables -A INPUT -j C
ip6tables -A C -m srh --srh-psid ::/1 --srh-nsid ::/1 --srh-lsid ::/1 -j SEG6 --seg6-action go-next
ip6tables -A C -m srh ! --srh-tag 5 -j RETURN
ip6tables -A C -p 59 -j DROP
ip6tables -A FORWARD -m srh --srh-hdr-len-gt 4 -j SEG6 --seg6-action go-next
ip6tables -A FORWARD -p tcp -j REJECT --reject-with adm-prohibited
sysctl -w net.ipv6.ip6t_seg6_args=3
";

fn firewall_tables() -> sr6_core::tables::Tables {
    let text = std::fs::read_to_string(common::repo().join("examples/example.conf")).unwrap() + FIREWALL;
    let spec = sr6_config::parse_config(&text, "example+firewall").unwrap();
    sr6_core::tables::Tables::build(&spec).unwrap().0
}

/// `frame` with the bytes at `flips`' offsets (modulo its length) XORed with their
/// values and cut to `cut` bytes (at least one), run alone through a new worker on
/// `t` as received on `dev`: the buffer and the worker after it.
fn run_mutated(
    t: &sr6_core::tables::Tables,
    frame: &[u8],
    flips: &[(usize, u8)],
    cut: usize,
    dev: u16,
) -> (PacketBuf, Worker) {
    let mut f = frame.to_vec();
    for &(at, v) in flips {
        if !f.is_empty() {
            let i = at % f.len();
            f[i] ^= v;
        }
    }
    f.truncate(cut.max(1));
    let mut w = Worker::new(t);
    let mut b = PacketBuf::new();
    b.load(&f, dev);
    w.process_batch(t, dev, std::slice::from_mut(&mut b));
    (b, w)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

    #[test]
    fn mutated_frames_through_a_firewall(which in 0usize..64,
                                         flips in prop::collection::vec((0usize..200, any::<u8>()), 0..6),
                                         cut in 0usize..400, dev in 0u16..3) {
        let t = firewall_tables();
        let frames = common::example_frames();
        let (b, w) = run_mutated(&t, &frames[which % frames.len()], &flips, cut, dev);
        prop_assert!(b.verdict != Verdict::Pending);
        prop_assert_eq!(w.fast_hits, 0);
        check_outputs(&b, &w)?;
    }

    #[test]
    fn mutated_example_frames(which in 0usize..64, flips in prop::collection::vec((0usize..200, any::<u8>()), 0..6),
                              cut in 0usize..400, dev in 0u16..3) {
        let t = common::example_tables();
        let frames = common::example_frames();
        let (b, w) = run_mutated(&t, &frames[which % frames.len()], &flips, cut, dev);
        prop_assert!(b.verdict != Verdict::Pending);
        check_outputs(&b, &w)?;
    }

    #[test]
    fn random_bytes(f in prop::collection::vec(any::<u8>(), 0..300), v6 in any::<bool>()) {
        let t = common::example_tables();
        let mut f = f;
        if f.len() >= 14 {
            // Make it IPv6/IPv4 most of the time so the deep paths are reached.
            f[12..14].copy_from_slice(if v6 { &[0x86, 0xdd] } else { &[0x08, 0x00] });
            if f.len() > 14 { f[14] = if v6 { 0x60 } else { 0x45 }; }
        }
        let mut w = Worker::new(&t);
        let mut b = PacketBuf::new();
        b.load(&f, 0);
        w.process_batch(&t, 0, std::slice::from_mut(&mut b));
        check_outputs(&b, &w)?;
    }
}
