//! Runs End.BPF from an object on packets, for the kernel comparison
//! (tests/kernel/test_bpf_kernel.py): `end_bpf OBJ SECTION [ENCAP_SRC]`, then one packet
//! per line on stdin (hex, from the IPv6 header); one line out per packet:
//! `forward DADDR NEXTHOP|- TABLE HEX` or `drop REASON`. Maps persist across packets.

use std::io::BufRead;
use std::net::Ipv6Addr;
use std::path::Path;

use sr6_bpf::helpers::ProgType;
use sr6_bpf::seg6::{end_bpf, Seg6Packet, Verdict};
use sr6_bpf::{load_object, RunOpts};

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    let s = s.trim();
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok()).collect()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 3 {
        eprintln!("usage: end_bpf OBJ SECTION [ENCAP_SRC] < hex packets");
        std::process::exit(2);
    }
    let encap_src: Ipv6Addr = args.get(3).map_or(Ipv6Addr::UNSPECIFIED, |a| a.parse().expect("ENCAP_SRC"));
    let mut obj = match load_object(Path::new(&args[1]), &args[2], ProgType::LwtSeg6local) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("end_bpf: {e}");
            std::process::exit(1);
        }
    };
    for line in std::io::stdin().lock().lines() {
        let line = line.expect("stdin");
        let Some(buf) = unhex(&line) else {
            eprintln!("end_bpf: bad hex line");
            std::process::exit(2);
        };
        let mut p = Seg6Packet::new(buf);
        p.encap_src = encap_src.octets();
        match end_bpf(&obj.program, &mut obj.maps, &mut p, RunOpts::default()) {
            Verdict::Forward(r) => {
                let nh = r.nexthop.map_or("-".to_string(), |n| Ipv6Addr::from(n).to_string());
                println!("forward {} {nh} {} {}", Ipv6Addr::from(r.daddr), r.table, hex(&p.buf));
            }
            Verdict::Drop(d) => println!("drop {d}"),
        }
    }
}
