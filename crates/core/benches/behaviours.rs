//! One criterion benchmark per behaviour: `Worker::process_batch` over a batch of 256
//! frames, each reloaded with `PacketBuf::load` every iteration (the copy of the frame
//! into the buffer stands for the receive). Throughput is reported per packet
//! (elements = 256).
//!
//! The tables come from a configuration string (`sr6_config::parse_str` +
//! `Tables::build`); the frames are written by hand below (Ethernet + IPv6 + SRH +
//! UDP). Before measuring, every benchmark checks that all 256 packets are transmitted
//! out of the expected device: a benchmark of a packet that is dropped measures nothing.
//!
//! The End.BPF cases need clang (their programs are compiled at start; without it they
//! are skipped, with a message).
//!
//! Run: `cargo bench -p sr6-core --bench behaviours -- --warm-up-time 1 --measurement-time 2`
//! (docs/performance.md).

use std::net::{Ipv4Addr, Ipv6Addr};

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use sr6_core::hmac::HmacKey;
use sr6_core::packet::{PacketBuf, Verdict};
use sr6_core::pipeline::Worker;
use sr6_core::spec::HmacAlg;
use sr6_core::tables::Tables;

const BATCH: usize = 256;
const HMAC_SECRET: &str = "bench-secret";

/// One router with a SID or route for every behaviour. eth0 receives; eth1 is the
/// uplink for SR traffic; eth2 the decapsulation side (IPv6 and IPv4 next hops); eth3 the
/// L2 cross-connect; hm0 receives with `seg6_require_hmac=1`.
const CONFIG: &str = r#"
sysctl -w net.ipv6.conf.all.forwarding=1
sysctl -w net.ipv4.ip_forward=1
sysctl -w net.ipv6.conf.all.seg6_enabled=1
sysctl -w net.ipv6.conf.eth0.seg6_enabled=1
sysctl -w net.ipv6.conf.hm0.seg6_enabled=1
sysctl -w net.ipv6.conf.hm0.seg6_require_hmac=1

ip link set dev eth0 address 02:00:00:00:00:01
ip link set dev eth1 address 02:00:00:00:00:02
ip link set dev eth2 address 02:00:00:00:00:03
ip link set dev eth3 address 02:00:00:00:00:04
ip link set dev hm0 address 02:00:00:00:00:05
ip -6 addr add fc00:1::1/64 dev eth0
ip -6 addr add fc00:2::1/64 dev eth1
ip -6 addr add fc00:3::1/64 dev eth2
ip -6 addr add fc00:9::1/64 dev hm0
ip addr add 10.0.1.1/24 dev eth0
ip addr add 10.0.3.1/24 dev eth2
ip -6 neigh add fc00:1::2 lladdr 02:00:00:00:01:02 dev eth0
ip -6 neigh add fc00:2::2 lladdr 02:00:00:00:02:02 dev eth1
ip -6 neigh add fc00:3::2 lladdr 02:00:00:00:03:02 dev eth2
ip neigh add 10.0.3.2 lladdr 02:00:00:00:03:04 dev eth2

ip sr tunsrc set fc00:1::1
ip sr hmac set 1 sha256 bench-secret

ip -6 route add default via fc00:1::2 dev eth0
ip -6 route add fc00:20::/48 via fc00:2::2 dev eth1
ip -6 route add fc00:a::/32 via fc00:2::2 dev eth1
ip -6 route add fc00:20::/48 via fc00:2::2 dev eth1 table 100
ip -6 route add fc00:20::/48 via fc00:2::2 dev eth1 table 300
ip route add 10.20.0.0/16 via 10.0.3.2 dev eth2
ip route add 10.20.0.0/16 via 10.0.3.2 dev eth2 table 200
ip route add 10.20.0.0/16 via 10.0.3.2 dev eth2 table 300

ip -6 route add fc00:ff::1/128 encap seg6local action End dev eth0
ip -6 route add fc00:ff::2/128 encap seg6local action End flavors psp dev eth0
ip -6 route add fc00:ff::3/128 encap seg6local action End dev hm0
ip -6 route add fc00:ff::10/128 encap seg6local action End.X nh6 fc00:2::2 oif eth1 dev eth0
ip -6 route add fc00:ff::20/128 encap seg6local action End.T table 100 dev eth0
ip -6 route add fc00:ff::30/128 encap seg6local action End.DX2 oif eth3 dev eth0
ip -6 route add fc00:ff::40/128 encap seg6local action End.DX6 nh6 fc00:3::2 dev eth2
ip -6 route add fc00:ff::41/128 encap seg6local action End.DX4 nh4 10.0.3.2 dev eth2
ip -6 route add fc00:ff::50/128 encap seg6local action End.DT6 table 100 dev eth0
ip -6 route add fc00:ff::51/128 encap seg6local action End.DT4 vrftable 200 dev eth0
ip -6 route add fc00:ff::52/128 encap seg6local action End.DT46 vrftable 300 dev eth0
ip -6 route add fc00:ff::60/128 encap seg6local action End.B6 srh segs fc00:a::1,fc00:b::1 dev eth0
ip -6 route add fc00:ff::61/128 encap seg6local action End.B6.Encaps srh segs fc00:a::1,fc00:b::1 dev eth0

ip -6 route add fc00:100::/48 encap seg6 mode encap segs fc00:a::1,fc00:b::1 dev eth1
ip -6 route add fc00:101::/48 encap seg6 mode encap.red segs fc00:a::1,fc00:b::1 dev eth1
ip -6 route add fc00:104::/48 encap seg6 mode l2encap segs fc00:a::1,fc00:b::1 dev eth1
ip -6 route add fc00:102::/48 encap seg6 mode inline segs fc00:a::1,fc00:b::1 dev eth1
"#;

// ---------------------------------------------------------------- frame writing ----

fn v6(s: &str) -> Ipv6Addr {
    s.parse().expect("IPv6 literal")
}

fn csum_add(mut sum: u32, data: &[u8]) -> u32 {
    for c in data.chunks(2) {
        sum += u32::from(u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)]));
    }
    sum
}

fn csum_fold(mut sum: u32) -> u16 {
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// UDP header + payload; the checksum is filled by [`ipv6`]/[`ipv4`].
fn udp(sport: u16, dport: u16, payload_len: usize) -> Vec<u8> {
    let len = 8 + payload_len;
    let mut u = Vec::with_capacity(len);
    u.extend_from_slice(&sport.to_be_bytes());
    u.extend_from_slice(&dport.to_be_bytes());
    u.extend_from_slice(&(len as u16).to_be_bytes());
    u.extend_from_slice(&[0, 0]);
    u.extend((0..payload_len).map(|i| i as u8));
    u
}

/// An IPv6 header (hop limit 64, traffic class 0, flow label 0x12345) + `payload`
/// whose first header is `nh`. A UDP checksum (nh 17, or the UDP header at the end of
/// the chain of an SRH) is not needed by sr6; it is filled for UDP directly after the
/// IPv6 header so the frames are valid on a wire.
fn ipv6(src: Ipv6Addr, dst: Ipv6Addr, nh: u8, mut payload: Vec<u8>) -> Vec<u8> {
    if nh == 17 {
        let mut s = csum_add(0, &src.octets());
        s = csum_add(s, &dst.octets());
        s = csum_add(s, &(payload.len() as u32).to_be_bytes());
        s = csum_add(s, &[0, 0, 0, 17]);
        s = csum_add(s, &payload);
        let c = csum_fold(s);
        payload[6..8].copy_from_slice(&(if c == 0 { 0xffff } else { c }).to_be_bytes());
    }
    let mut h = Vec::with_capacity(40 + payload.len());
    h.extend_from_slice(&(6u32 << 28 | 0x12345).to_be_bytes());
    h.extend_from_slice(&(payload.len() as u16).to_be_bytes());
    h.push(nh);
    h.push(64);
    h.extend_from_slice(&src.octets());
    h.extend_from_slice(&dst.octets());
    h.extend_from_slice(&payload);
    h
}

/// An IPv4 header (TTL 64, header checksum set) + a UDP `payload`.
fn ipv4(src: Ipv4Addr, dst: Ipv4Addr, mut payload: Vec<u8>) -> Vec<u8> {
    let total = 20 + payload.len();
    let mut s = csum_add(0, &src.octets());
    s = csum_add(s, &dst.octets());
    s = csum_add(s, &[0, 17]);
    s = csum_add(s, &(payload.len() as u16).to_be_bytes());
    s = csum_add(s, &payload);
    payload[6..8].copy_from_slice(&csum_fold(s).to_be_bytes());
    let mut h = vec![0x45, 0, 0, 0, 0x12, 0x34, 0x40, 0, 64, 17, 0, 0];
    h[2..4].copy_from_slice(&(total as u16).to_be_bytes());
    h.extend_from_slice(&src.octets());
    h.extend_from_slice(&dst.octets());
    let c = csum_fold(csum_add(0, &h));
    h[10..12].copy_from_slice(&c.to_be_bytes());
    h.extend_from_slice(&payload);
    h
}

/// An SRH (RFC 8754) before `payload` (whose protocol is `nh`). `segs` is in visiting
/// order (S1 first), so Segment List[0] is the last one; Segments Left = `sl`. With
/// `hmac`, an HMAC TLV (key 1) is appended, computed over `src` (RFC 8754 §2.1.2.1), and
/// the SRH flags carry 0x08 as sr6 and Linux emit them.
fn srh(nh: u8, sl: u8, segs: &[Ipv6Addr], hmac: Option<(&HmacKey, Ipv6Addr)>, payload: &[u8]) -> Vec<u8> {
    let n = segs.len();
    let tlv_len = if hmac.is_some() { 40 } else { 0 };
    let len = 8 + 16 * n + tlv_len;
    let mut h = vec![nh, (len / 8 - 1) as u8, 4, sl, (n - 1) as u8, 0, 0, 0];
    for s in segs.iter().rev() {
        h.extend_from_slice(&s.octets());
    }
    if let Some((key, src)) = hmac {
        h[5] = 0x08;
        let mac = key.compute(&src.octets(), h[4], h[5], 1, &h[8..8 + 16 * n]);
        h.extend_from_slice(&[5, 38, 0, 0]);
        h.extend_from_slice(&1u32.to_be_bytes());
        h.extend_from_slice(&mac);
    }
    h.extend_from_slice(payload);
    h
}

/// Ethernet to the router's eth0 MAC from a neighbour.
fn eth(ethertype: u16, l3: &[u8]) -> Vec<u8> {
    let mut f = vec![0x02, 0, 0, 0, 0, 0x01, 0x02, 0, 0, 0, 0x01, 0x02];
    f.extend_from_slice(&ethertype.to_be_bytes());
    f.extend_from_slice(l3);
    f
}

const SRC: &str = "fc00:1::2";
const PAYLOAD: usize = 18; // inner UDP payload: an IPv6/UDP packet of 66 bytes, 80 on the wire

fn udp6(dst: &str) -> Vec<u8> {
    ipv6(v6(SRC), v6(dst), 17, udp(1024, 5000, PAYLOAD))
}

fn udp4(dst: [u8; 4]) -> Vec<u8> {
    ipv4(Ipv4Addr::new(10, 0, 1, 2), Ipv4Addr::from(dst), udp(1024, 5000, PAYLOAD))
}

/// IPv6 + SRH (Segments Left `sl`, segments in visiting order) + UDP.
fn sr_udp(dst: &str, sl: u8, segs: &[&str]) -> Vec<u8> {
    let segs: Vec<Ipv6Addr> = segs.iter().map(|s| v6(s)).collect();
    let inner = udp(1024, 5000, PAYLOAD);
    ipv6(v6(SRC), v6(dst), 43, srh(17, sl, &segs, None, &inner))
}

/// IPv6 + SRH (Segments Left 0, the SID last) + an inner packet of protocol `nh`: what an
/// H.Encaps with two segments delivers to a decapsulating SID.
fn sr_encap(sid: &str, nh: u8, inner: &[u8]) -> Vec<u8> {
    let segs = [v6("fc00:20::9"), v6(sid)];
    ipv6(v6("fc00:1::2"), v6(sid), 43, srh(nh, 0, &segs, None, inner))
}

struct Case {
    name: &'static str,
    frame: Vec<u8>,
    in_dev: &'static str,
    out_dev: &'static str,
}

fn cases() -> Vec<Case> {
    let key = HmacKey::new(HmacAlg::Sha256, HMAC_SECRET.as_bytes());
    let c = |name, frame, in_dev, out_dev| Case { name, frame, in_dev, out_dev };
    let inner6 = udp6("fc00:20::7");
    let inner4 = udp4([10, 20, 1, 7]);
    let mut inner_eth = vec![0x02, 0, 0, 0, 0xaa, 0x01, 0x02, 0, 0, 0, 0xaa, 0x02, 0x86, 0xdd];
    inner_eth.extend_from_slice(&inner6);
    let hmac_frame = {
        // 3 SIDs: S1 = fc00:ff::3 (End, active), then fc00:20::8, fc00:20::9.
        let src = v6("fc00:9::2");
        let segs = [v6("fc00:ff::3"), v6("fc00:20::8"), v6("fc00:20::9")];
        let l3 = ipv6(src, segs[0], 43, srh(17, 2, &segs, Some((&key, src)), &udp(1024, 5000, PAYLOAD)));
        eth(0x86dd, &l3)
    };
    vec![
        c("IPv6-forward", eth(0x86dd, &udp6("fc00:20::5")), "eth0", "eth1"),
        c("IPv4-forward", eth(0x0800, &udp4([10, 20, 3, 4])), "eth0", "eth2"),
        c("End", eth(0x86dd, &sr_udp("fc00:ff::1", 1, &["fc00:ff::1", "fc00:20::9"])), "eth0", "eth1"),
        c("End-PSP", eth(0x86dd, &sr_udp("fc00:ff::2", 1, &["fc00:ff::2", "fc00:20::9"])), "eth0", "eth1"),
        c("End.X", eth(0x86dd, &sr_udp("fc00:ff::10", 1, &["fc00:ff::10", "fc00:30::9"])), "eth0", "eth1"),
        c("End.T", eth(0x86dd, &sr_udp("fc00:ff::20", 1, &["fc00:ff::20", "fc00:20::9"])), "eth0", "eth1"),
        c("End.DX2", eth(0x86dd, &sr_encap("fc00:ff::30", 143, &inner_eth)), "eth0", "eth3"),
        c("End.DX4", eth(0x86dd, &sr_encap("fc00:ff::41", 4, &inner4)), "eth0", "eth2"),
        c("End.DX6", eth(0x86dd, &sr_encap("fc00:ff::40", 41, &inner6)), "eth0", "eth2"),
        c("End.DT4", eth(0x86dd, &sr_encap("fc00:ff::51", 4, &inner4)), "eth0", "eth2"),
        c("End.DT6", eth(0x86dd, &sr_encap("fc00:ff::50", 41, &inner6)), "eth0", "eth1"),
        c("End.DT46", eth(0x86dd, &sr_encap("fc00:ff::52", 41, &inner6)), "eth0", "eth1"),
        c("End.B6", eth(0x86dd, &sr_udp("fc00:ff::60", 1, &["fc00:ff::60", "fc00:20::9"])), "eth0", "eth1"),
        c("End.B6.Encaps", eth(0x86dd, &sr_udp("fc00:ff::61", 1, &["fc00:ff::61", "fc00:20::9"])), "eth0", "eth1"),
        c("H.Encaps", eth(0x86dd, &udp6("fc00:100::5")), "eth0", "eth1"),
        c("H.Encaps.Red", eth(0x86dd, &udp6("fc00:101::5")), "eth0", "eth1"),
        c("H.Encaps.L2", eth(0x86dd, &udp6("fc00:104::5")), "eth0", "eth1"),
        c("H.Insert", eth(0x86dd, &udp6("fc00:102::5")), "eth0", "eth1"),
        c("End-HMAC-SHA256", hmac_frame, "hm0", "eth1"),
        c("End.BPF-end", eth(0x86dd, &sr_udp("fc00:ff::70", 1, &["fc00:ff::70", "fc00:20::9"])), "eth0", "eth1"),
        c("End.BPF-tag", eth(0x86dd, &sr_udp("fc00:ff::71", 1, &["fc00:ff::71", "fc00:20::9"])), "eth0", "eth1"),
        c("End.BPF-tlv", eth(0x86dd, &sr_udp("fc00:ff::72", 1, &["fc00:ff::72", "fc00:20::9"])), "eth0", "eth1"),
        c("End.BPF-end_t", eth(0x86dd, &sr_udp("fc00:ff::73", 1, &["fc00:ff::73", "fc00:20::9"])), "eth0", "eth1"),
    ]
}

/// End.BPF SIDs fc00:ff::70-73 running the End.BPF paper's functions (End in eBPF,
/// Tag++, Add TLV, End.T through the action helper), compiled by clang from
/// crates/bpf/tests/progs; `None` (with the reason) if clang cannot build them.
fn bpf_config() -> Result<String, String> {
    let progs = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../bpf/tests/progs");
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("bench-bpf");
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let mut conf = String::new();
    for (sid, file, sec) in
        [("70", "end", "end"), ("71", "tag", "tag_inc"), ("72", "tlv", "add_tlv"), ("73", "action", "end_t")]
    {
        let obj = dir.join(format!("{file}.o"));
        sr6_bpf::clang::compile(&progs.join(format!("{file}.c")), &obj, &[]).map_err(|e| e.to_string())?;
        conf.push_str(&format!(
            "ip -6 route add fc00:ff::{sid}/128 encap seg6local action End.BPF endpoint obj {} sec {sec} dev eth0\n",
            obj.display()
        ));
    }
    Ok(conf)
}

fn tables() -> (Tables, bool) {
    let (conf, bpf) = match bpf_config() {
        Ok(b) => (format!("{CONFIG}{b}"), true),
        Err(e) => {
            eprintln!("End.BPF cases skipped: {e}");
            (CONFIG.to_string(), false)
        }
    };
    let spec = sr6_config::parse_str(&conf, "bench.conf").unwrap_or_else(|e| panic!("{e}"));
    let (t, _warnings) = Tables::build(&spec).unwrap_or_else(|e| panic!("line {}: {}", e.line, e.message));
    (t, bpf)
}

fn behaviours(c: &mut Criterion) {
    let (t, bpf) = tables();
    let mut g = c.benchmark_group("behaviour");
    g.throughput(Throughput::Elements(BATCH as u64));
    for case in cases().into_iter().filter(|c| bpf || !c.name.starts_with("End.BPF")) {
        let dev = t.device_id(case.in_dev).expect("ingress device");
        let out = t.device_id(case.out_dev).expect("egress device");
        let mut w = Worker::new(&t);
        let mut bufs: Vec<PacketBuf> = (0..BATCH).map(|_| PacketBuf::new()).collect();
        // Sanity: every packet must leave by the expected device.
        for b in bufs.iter_mut() {
            b.load(&case.frame, dev);
        }
        w.process_batch(&t, dev, &mut bufs);
        for b in &bufs {
            assert_eq!(
                b.verdict,
                Verdict::Tx(out),
                "{}: expected transmission on {}, got {:?}",
                case.name,
                case.out_dev,
                b.verdict
            );
        }
        assert_eq!(w.counters.icmp_sent, 0, "{}: ICMP errors were sent", case.name);
        let frame = case.frame.as_slice();
        g.bench_function(case.name, |bch| {
            bch.iter(|| {
                for b in bufs.iter_mut() {
                    b.load(black_box(frame), dev);
                }
                w.process_batch(&t, dev, black_box(&mut bufs));
            })
        });
        black_box(&w.counters);
    }
    g.finish();
}

criterion_group!(benches, behaviours);
criterion_main!(benches);
