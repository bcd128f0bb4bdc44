//! The traffic generator and receiver end to end.
//!
//! * `templates_decode_with_scapy` (no privilege): the generator stamps every template
//!   into a capturing port; the frames go to a pcap file that scapy (an independent
//!   decoder) reads back: lengths, checksums, SRH fields, telemetry; with them End.AD's
//!   warm-up frame (End's frame to its SID, tg1 -> dut1).
//! * The `veth_*` tests (root, `#[ignore]`d: run them with `--include-ignored`): one
//!   network namespace per test (`sr6_testnet`: a unique name, removed on drop, also
//!   when the test fails) holding a veth pair `tg0 <-> tg1` looped back: the generator
//!   sends on tg0, the receiver counts on tg1. No traffic leaves the namespace.
//! * `veth_xdp_live_frames` (root): the live-frame generator (an XDP program paced in
//!   the kernel) through the same looped pair: exact counts and sequence numbers for
//!   every behaviour, and its frames captured on tg1 and decoded by scapy (checksums,
//!   telemetry).
//! * `veth_max_rate` (ignored, a benchmark): the generator's maximum rate on a veth pair,
//!   printed; run it with `cargo test --release -p sr6-perf --test traffic_netns --
//!   --ignored --nocapture veth_max_rate`.
//!
//! No assertion depends on wall-clock speed.

use std::io::Write;
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use sr6_core::behaviour::proxy::Kind;
use sr6_core::packet::PacketBuf;
use sr6_io::live::{Port, PortStats};
use sr6_perf::bpf::{CountHook, CATCH_UP};
use sr6_perf::model::{Behavior, MobileKind, HMAC_ROWS, HMAC_SECRET};
use sr6_perf::traffic::{
    build, frame_len, open_port, run_trial_report, warm_up_frame, Addressing, Backend, GenConfig, Generator, Idle,
    LiveGenerator, Receiver, RecvConfig, Sink, Source, Template, TrialReport, XdpReceiver, INNER_IP_LEN,
};
use sr6_testnet::{in_netns, Netns};

// ---- a port that keeps what it is given --------------------------------------------

struct Capture {
    frames: Arc<Mutex<Vec<Vec<u8>>>>,
}

impl Port for Capture {
    fn ifname(&self) -> &str {
        "capture"
    }
    fn rx_burst(&mut self, _: &mut [PacketBuf]) -> std::io::Result<usize> {
        Ok(0)
    }
    fn tx_queue(&mut self, frame: &[u8]) -> bool {
        self.frames.lock().unwrap().push(frame.to_vec());
        true
    }
    fn tx_flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
    fn fd(&self) -> std::os::fd::RawFd {
        -1
    }
    fn stats(&self) -> PortStats {
        PortStats::default()
    }
}

fn write_pcap(path: &std::path::Path, frames: &[Vec<u8>]) {
    let mut f = std::fs::File::create(path).unwrap();
    // Global header: magic, v2.4, zone 0, sigfigs 0, snaplen, LINKTYPE_ETHERNET.
    let mut h = Vec::new();
    h.extend_from_slice(&0xa1b2_c3d4u32.to_le_bytes());
    h.extend_from_slice(&2u16.to_le_bytes());
    h.extend_from_slice(&4u16.to_le_bytes());
    for w in [0u32, 0, 65535, 1] {
        h.extend_from_slice(&w.to_le_bytes());
    }
    f.write_all(&h).unwrap();
    for (i, fr) in frames.iter().enumerate() {
        for w in [1u32, i as u32, fr.len() as u32, fr.len() as u32] {
            f.write_all(&w.to_le_bytes()).unwrap();
        }
        f.write_all(fr).unwrap();
    }
}

/// Decodes every frame of a pcap with scapy; one JSON object per frame.
const DECODE: &str = r#"
import sys, json, hashlib, hmac, socket
from scapy.all import rdpcap, raw, Ether, IP, IPv6, UDP
from scapy.layers.inet6 import IPv6ExtHdrSegmentRouting

def udp_ok(ip):
    # Rebuild with the checksum left to scapy; compare with what is on the wire.
    again = ip.__class__(raw(ip))
    del again[UDP].chksum
    again = ip.__class__(raw(again))
    return again[UDP].chksum == ip[UDP].chksum and ip[UDP].chksum != 0

def ip_info(ip):
    d = {"udp_ok": udp_ok(ip), "sport": ip[UDP].sport, "dport": ip[UDP].dport, "udp_len": ip[UDP].len}
    if isinstance(ip, IPv6):
        d.update(version=6, size=40 + ip.plen, src=ip.src, dst=ip.dst, nh=ip.nh, hlim=ip.hlim)
    else:
        again = IP(raw(ip)); del again.chksum; again = IP(raw(again))
        d.update(version=4, size=ip.len, src=ip.src, dst=ip.dst, ttl=ip.ttl, ip_ok=again.chksum == ip.chksum)
    return d

for p in rdpcap(sys.argv[1]):
    b = raw(p)
    e = Ether(b)
    d = {"len": len(b), "dst": e.dst, "src": e.src, "type": e.type, "tail": b[-16:].hex()}
    l3 = e.payload
    if isinstance(l3, IPv6) and l3.nh == 43:
        srh = l3[IPv6ExtHdrSegmentRouting]
        d["outer"] = {"plen": l3.plen, "src": l3.src, "dst": l3.dst, "hlim": l3.hlim, "size": 40 + l3.plen}
        d["srh"] = {"nh": srh.nh, "len": srh.len, "type": srh.type, "segleft": srh.segleft,
                    "lastentry": srh.lastentry, "tag": srh.tag,
                    "flags": raw(srh)[5],
                    "segs": [str(a) for a in srh.addresses]}
        # An HMAC TLV (RFC 8754 §2.1.2), checked with Python's hmac: the key ids and
        # the secret are argv[2] ({"KEYID": "sha1"|"sha256"}) and argv[3].
        rs = raw(srh)[:8 * (srh.len + 1)]
        segs = rs[8:8 + 16 * (srh.lastentry + 1)]
        tlv = rs[8 + len(segs):]
        if tlv[:1] == b"\x05":
            keyid = int.from_bytes(tlv[4:8], "big")
            alg = getattr(hashlib, json.loads(sys.argv[2])[str(keyid)])
            text = socket.inet_pton(socket.AF_INET6, l3.src) + rs[4:6] + tlv[4:8] + segs
            mac = hmac.new(sys.argv[3].encode(), text, alg).digest().ljust(32, b"\0")
            d["hmac"] = {"keyid": keyid, "len": tlv[1], "d": tlv[2] >> 7, "ok": mac == tlv[8:40]}
        inner = srh.payload
        if srh.nh == 143:
            ie = Ether(raw(inner))
            d["inner_eth"] = {"dst": ie.dst, "src": ie.src, "type": ie.type}
            inner = ie.payload
        d["ip"] = ip_info(inner)
    elif isinstance(l3, IPv6) and l3.nh in (41, 4):
        # Pure uSID (NEXT-C-SID rows), or one SID and no SRH (the mobile rows): outer
        # IPv6 straight over the inner packet.
        d["outer"] = {"plen": l3.plen, "src": l3.src, "dst": l3.dst, "hlim": l3.hlim, "size": 40 + l3.plen}
        d["ip"] = ip_info(l3.payload)
    elif isinstance(l3, IP) and UDP in l3 and l3[UDP].dport == 2152:
        # GTP-U (TS 29.281 §5.1): 8 bytes, then the T-PDU (the tester sets no E/S/PN).
        g = raw(l3[UDP].payload)
        d["outer4"] = {"src": l3.src, "dst": l3.dst, "ttl": l3.ttl}
        d["gtpu"] = {"flags": g[0], "type": g[1], "len": int.from_bytes(g[2:4], "big"),
                     "teid": int.from_bytes(g[4:8], "big")}
        d["ip"] = ip_info(IP(g[8:]))
    else:
        d["ip"] = ip_info(l3)
    print(json.dumps(d))
"#;

fn python_has_scapy() -> bool {
    Command::new("python3").args(["-c", "import scapy"]).output().map(|o| o.status.success()).unwrap_or(false)
}

fn mac(m: &[u8; 6]) -> String {
    m.iter().map(|b| format!("{b:02x}")).collect::<Vec<_>>().join(":")
}

#[test]
fn templates_decode_with_scapy() {
    if !python_has_scapy() {
        eprintln!("skipped: python3 with scapy is not installed");
        return;
    }
    let a = Addressing::default();
    let mut cases: Vec<(Behavior, u16)> = Behavior::all().iter().map(|&b| (b, 0u16)).collect();
    cases.extend(Behavior::all().iter().filter(|b| b.mixed()).map(|&b| (b, 1)));
    const PER: usize = 5;
    let mut frames = Vec::new();
    for &(b, stream) in &cases {
        let captured = Arc::new(Mutex::new(Vec::new()));
        let port = Capture { frames: captured.clone() };
        let mut g = Generator::new(Box::new(port), vec![build(b, &a, stream)], GenConfig::default()).unwrap();
        // 5 packets, 100 us apart: five different timestamps to patch the checksum with.
        let r = g.run(10_000.0, Duration::from_micros(500));
        assert_eq!(r.sent, PER as u64, "{}", b.name());
        frames.extend(captured.lock().unwrap().drain(..));
    }
    let dir = std::env::temp_dir().join(format!("sr6-perf-templates-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let end_ad_return = Behavior::parse("End.AD-return").unwrap();
    frames.push(warm_up_frame(end_ad_return, &a).unwrap());
    let pcap = dir.join("templates.pcap");
    write_pcap(&pcap, &frames);
    let keys: serde_json::Map<String, serde_json::Value> =
        HMAC_ROWS.iter().map(|h| (h.key_id.to_string(), h.alg.into())).collect();
    let out = Command::new("python3")
        .args(["-c", DECODE])
        .arg(&pcap)
        .arg(serde_json::Value::Object(keys).to_string())
        .arg(HMAC_SECRET)
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(out.status.success(), "scapy: {}", String::from_utf8_lossy(&out.stderr));
    let decoded: Vec<serde_json::Value> =
        String::from_utf8_lossy(&out.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(decoded.len(), frames.len());
    let (warm, decoded) = decoded.split_last().unwrap();

    // The warm-up frame: End's frame to End.AD-return's SID (Segments Left 1, the next
    // segment to come), from tg1 to dut1.
    let what = format!("warm-up frame: {warm}");
    assert_eq!((warm["dst"].as_str(), warm["src"].as_str()), (Some(&*mac(&a.dut1_mac)), Some(&*mac(&a.tg1_mac))));
    assert_eq!((warm["len"].as_u64(), warm["type"].as_u64()), (Some(158), Some(0x86dd)), "{what}");
    assert_eq!(warm["outer"]["dst"], a.sid.to_string(), "{what}");
    let s = &warm["srh"];
    assert_eq!((s["segleft"].as_u64(), s["nh"].as_u64()), (Some(1), Some(41)), "{what}");
    assert_eq!(s["segs"], serde_json::json!([a.next_sid.to_string(), a.sid.to_string()]), "{what}");
    assert_eq!((warm["ip"]["udp_ok"].as_bool(), warm["ip"]["size"].as_u64()), (Some(true), Some(64)), "{what}");

    for (i, d) in decoded.iter().enumerate() {
        let (b, stream) = cases[i / PER];
        let seq = (i % PER) as u64;
        let what = format!("{} stream {stream} packet {seq}: {d}", b.name());
        assert_eq!(d["len"], frame_len(b, INNER_IP_LEN) as u64, "{what}");
        assert_eq!(d["dst"], mac(&a.dut0_mac), "{what}");
        assert_eq!(d["src"], mac(&a.tg0_mac), "{what}");
        let v4_inner = b.inner_ipv4(stream);
        let ip = &d["ip"];
        assert_eq!(ip["size"], 64, "the innermost IP packet is 64 bytes: {what}");
        assert_eq!(ip["udp_ok"], true, "UDP checksum: {what}");
        assert_eq!(ip["sport"], 49152 + u64::from(stream), "{what}");
        assert_eq!(ip["dport"], 9, "{what}");
        if v4_inner {
            assert_eq!(ip["version"], 4, "{what}");
            assert_eq!(ip["ip_ok"], true, "IPv4 header checksum: {what}");
            assert_eq!(ip["udp_len"], 44, "{what}");
            assert_eq!(ip["src"], a.src4.to_string(), "{what}");
            assert_eq!(ip["dst"], a.dst4.to_string(), "{what}");
        } else {
            assert_eq!(ip["version"], 6, "{what}");
            assert_eq!(ip["udp_len"], 24, "{what}");
            assert_eq!(ip["src"], a.src6.to_string(), "{what}");
            assert_eq!(ip["dst"], a.dst6.to_string(), "{what}");
        }
        // Telemetry: magic "S6", stream, sequence number; a timestamp was written.
        let tail = d["tail"].as_str().unwrap();
        assert_eq!(&tail[..4], "5336", "{what}");
        assert_eq!(u16::from_str_radix(&tail[4..8], 16).unwrap(), stream, "{what}");
        assert_eq!(u64::from_str_radix(&tail[8..16], 16).unwrap(), seq, "{what}");
        assert_ne!(&tail[16..], "0000000000000000", "{what}");

        // The mobile rows: plain IPv4, GTP-U/IPv4 to the UPF with the TEID, or IPv6 to
        // the SID with no SRH (crates/perf/src/traffic/template.rs).
        if let Some(m) = b.mobile() {
            assert!(d.get("srh").is_none(), "{what}");
            match m.kind {
                MobileKind::GtpEncap | MobileKind::SrEncap => assert_eq!(d["type"], 0x0800, "{what}"),
                MobileKind::GtpDecap | MobileKind::Gtp4D => {
                    assert_eq!(d["type"], 0x0800, "{what}");
                    assert_eq!(d["outer4"]["dst"], a.upf4.to_string(), "{what}");
                    let g = &d["gtpu"];
                    assert_eq!((g["flags"].as_u64(), g["type"].as_u64()), (Some(0x30), Some(255)), "{what}");
                    assert_eq!((g["len"].as_u64(), g["teid"].as_u64()), (Some(64), Some(u64::from(a.teid))), "{what}");
                }
                MobileKind::SrDecap | MobileKind::Gtp4E => {
                    assert_eq!(d["type"], 0x86dd, "{what}");
                    assert_eq!(d["outer"]["dst"], a.sid.to_string(), "{what}");
                    assert_eq!(d["outer"]["size"], d["len"].as_u64().unwrap() - 14, "{what}");
                }
            }
            continue;
        }
        // What a proxy's function sends back: End.AD's the plain inner packet, End.AM's
        // the masqueraded packet (destination Segment List[0]).
        let masqueraded = b.proxy_return().is_some_and(|r| r.kind() == Some(Kind::Masquerade));
        let encap = !b.is_transit() && (b.proxy_return().is_none() || masqueraded);
        if !encap {
            assert!(d.get("srh").is_none(), "{what}");
            assert_eq!(d["type"], if b == Behavior::Ipv4 { 0x0800 } else { 0x86dd }, "{what}");
            continue;
        }
        assert_eq!(d["type"], 0x86dd, "{what}");
        let o = &d["outer"];
        assert_eq!(o["size"], d["len"].as_u64().unwrap() - 14, "outer payload length: {what}");
        assert_eq!(o["src"], a.src6.to_string(), "{what}");
        if masqueraded {
            assert_eq!(o["dst"], a.next_sid.to_string(), "Segment List[0]: {what}");
        } else {
            assert_eq!(o["dst"], a.sid.to_string(), "the active SID is the SUT's: {what}");
        }
        if b.csid().is_some_and(|c| c.replace) {
            let s = &d["srh"];
            assert_eq!(
                (s["type"].as_u64(), s["len"].as_u64(), s["lastentry"].as_u64(), s["segleft"].as_u64()),
                (Some(4), Some(2), Some(0), Some(0)),
                "one C-SID container: {what}"
            );
            continue;
        }
        if b.csid().is_some() {
            assert!(d.get("srh").is_none(), "pure uSID: {what}");
            assert_eq!(o["hlim"], 64, "{what}");
            continue;
        }
        let s = &d["srh"];
        // End's SRH, and an HMAC TLV for an End HMAC row (Hdr Ext Len 9).
        let hmac = b.hmac().filter(|h| h.verify);
        assert_eq!(
            (s["type"].as_u64(), s["len"].as_u64(), s["lastentry"].as_u64()),
            (Some(4), Some(if hmac.is_some() { 9 } else { 4 }), Some(1)),
            "{what}"
        );
        match hmac {
            Some(h) => {
                let t = &d["hmac"];
                assert_eq!((t["keyid"].as_u64(), t["len"].as_u64()), (Some(u64::from(h.key_id)), Some(38)), "{what}");
                assert_eq!((t["d"].as_u64(), t["ok"].as_bool()), (Some(0), Some(true)), "the HMAC: {what}");
            }
            None => assert!(d.get("hmac").is_none(), "{what}"),
        }
        let flags = if hmac.is_some() { 0x08 } else { 0 };
        assert_eq!((s["flags"].as_u64(), s["tag"].as_u64()), (Some(flags), Some(0)), "{what}");
        let (sid, next) = (a.sid.to_string(), a.next_sid.to_string());
        if b.takes() == Some(sr6_core::behaviour::Takes::Segment) {
            assert_eq!(s["segleft"], 1, "{what}");
            assert_eq!(s["segs"], serde_json::json!([next, sid]), "{what}");
        } else {
            assert_eq!(s["segleft"], 0, "{what}");
            assert_eq!(s["segs"], serde_json::json!([sid, next]), "{what}");
        }
        let inner_eth = b.takes() == Some(sr6_core::behaviour::Takes::Inner(sr6_core::behaviour::Inner::Ethernet));
        let nh = if inner_eth {
            143
        } else if v4_inner {
            4
        } else {
            41
        };
        assert_eq!(s["nh"], nh, "{what}");
        if inner_eth {
            let ie = &d["inner_eth"];
            assert_eq!(
                (ie["dst"].as_str(), ie["type"].as_u64()),
                (Some(mac(&a.tg1_mac).as_str()), Some(0x86dd)),
                "{what}"
            );
        }
    }
}

// ---- a namespace with a looped veth pair (root) -------------------------------------

const TG0_MAC: [u8; 6] = [0x02, 0x53, 0x36, 0, 0x10, 0x01];
const TG1_MAC: [u8; 6] = [0x02, 0x53, 0x36, 0, 0x10, 0x04];

/// One namespace holding `tg0 <-> tg1`; deleted on drop (also when the test fails).
fn loop_net(tag: &str) -> Netns {
    let ns = Netns::new(&format!("pt-{tag}"));
    ns.add_veth("tg0", &ns, "tg1", None);
    ns.set_mac("tg0", TG0_MAC);
    ns.set_mac("tg1", TG1_MAC);
    for d in ["lo", "tg0", "tg1"] {
        ns.up(d);
    }
    ns
}

/// The tests share the machine's two cores: one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

/// The addressing of the looped pair: tg1 stands where the SUT's dut0 would.
fn loop_addressing() -> Addressing {
    Addressing { tg0_mac: TG0_MAC, dut0_mac: TG1_MAC, tg1_mac: TG1_MAC, ..Addressing::default() }
}

/// Opens the generator on tg0 and the receiver on tg1 of `ns` with `backend`.
fn open_pair(
    ns: &str,
    (tx_backend, rx_backend): (Backend, Backend),
    templates: Vec<Template>,
    cfg: GenConfig,
    rcfg: RecvConfig,
) -> (Generator, Receiver, String) {
    let (g, r) = in_netns(ns, || {
        let g = open_port("tg0", tx_backend, 2048, &[], &[]).expect("open tg0");
        let r = open_port("tg1", rx_backend, 2048, &[], &[]).expect("open tg1");
        (g, r)
    });
    let what = format!("tx {}, rx {}", g.backend, r.backend);
    let gen = Generator::new(g.port, templates, cfg).unwrap();
    let recv = Receiver::spawn(r.port, rcfg).unwrap();
    (gen, recv, what)
}

fn check_exact(r: &TrialReport, what: &str) {
    let t = &r.trial;
    assert!(t.sent > 0, "{what}: nothing sent: {:?}", r.gen);
    assert_eq!(t.sent + t.tx_dropped, r.gen.slots, "{what}: every slot accounted for");
    assert_eq!(t.received, t.sent, "{what}: {:?}", r.recv);
    assert_eq!(t.delivery_ratio, 1.0, "{what}");
    assert_eq!(r.recv.duplicates(), 0, "{what}");
    assert_eq!(r.recv.reordered(), 0, "{what}");
    assert_eq!(r.recv.stale, 0, "{what}");
    for (id, sent) in &r.gen.per_stream {
        let s = r.recv.stream(*id).unwrap_or_else(|| panic!("{what}: stream {id} missing"));
        assert_eq!((s.received, u64::from(s.max_seq) + 1), (*sent, *sent), "{what}: stream {id}");
    }
    let l = r.recv.latency;
    assert_eq!(l.samples, t.received, "{what}");
    assert!(l.min_ns > 0, "{what}: {l:?}");
    assert!(l.min_ns <= l.p50_ns && l.p50_ns <= l.p99_ns && l.p99_ns <= l.max_ns, "{what}: {l:?}");
}

fn every_behaviour_exactly(tag: &str, backend: Backend) {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let ns = loop_net(tag);
    let a = loop_addressing();
    for &b in Behavior::all() {
        let templates = if b.mixed() { vec![build(b, &a, 0), build(b, &a, 1)] } else { vec![build(b, &a, 0)] };
        let (mut gen, recv, what) =
            open_pair(ns.name(), (backend, backend), templates, GenConfig::default(), RecvConfig::default());
        // Two trials per port pair: the second must not see the first's packets.
        for k in 0..2 {
            let r = run_trial_report(&mut gen, &recv, 20_000.0, Duration::from_millis(100), Duration::from_millis(50))
                .unwrap();
            let what = format!("{} trial {k} ({what})", b.name());
            check_exact(&r, &what);
            assert_eq!(r.gen.slots, 2000, "{what}");
            if k == 0 && b == Behavior::Ipv6 {
                eprintln!("{what}: {:?}, latency {:?}, other frames {}", r.trial, r.recv.latency, r.recv.other);
            }
        }
        drop(gen);
        drop(recv);
    }
}

#[test]
#[ignore = "needs root and network namespaces"]
fn veth_every_behaviour_af_xdp() {
    every_behaviour_exactly("xdp", Backend::AfXdp);
}

#[test]
#[ignore = "needs root and network namespaces"]
fn veth_every_behaviour_af_packet() {
    every_behaviour_exactly("pkt", Backend::AfPacket);
}

/// tg1 accepts XDP frames from tg0's XDP transmit only with NAPI enabled.
fn gro_on(ns: &str, dev: &str) -> bool {
    Command::new("ip")
        .args(["netns", "exec", ns, "ethtool", "-K", dev, "gro", "on"])
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
#[ignore = "needs root and network namespaces"]
fn veth_xdp_live_frames() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let ns = loop_net("live");
    // scripts/setup.sh installs ethtool; without it the live generator cannot work in
    // `sr6 perf` either, so this is a failure, not a skip.
    assert!(gro_on(ns.name(), "tg1"), "cannot enable GRO (NAPI) on tg1: is ethtool installed?");
    let a = loop_addressing();
    for &b in Behavior::all() {
        let templates = if b.mixed() { vec![build(b, &a, 0), build(b, &a, 1)] } else { vec![build(b, &a, 0)] };
        // The generator is used on a thread in the namespace: live frames go out of the
        // device with their ifindex there (it refuses to run from elsewhere).
        in_netns(ns.name(), || {
            let mut gen = match LiveGenerator::new("tg0", &templates, None) {
                Ok(g) => g,
                Err(e) => panic!("XDP live frames on tg0 ({}): {e}", b.name()),
            };
            let port = open_port("tg1", Backend::AfPacket, 2048, &[], &[]).expect("open tg1");
            let recv = Receiver::spawn(port.port, RecvConfig::default()).unwrap();
            for k in 0..2 {
                let r =
                    run_trial_report(&mut gen, &recv, 20_000.0, Duration::from_millis(100), Duration::from_millis(50))
                        .unwrap();
                let what = format!("{} live trial {k}", b.name());
                check_exact(&r, &what);
                // Every slot is sent or, if the host held the generator up for more than
                // MAX_LAG (a preempted VM), given up and counted: never lost, never doubled.
                assert_eq!((r.gen.slots, r.gen.sent + r.gen.late), (2000, 2000), "{what}: {:?}", r.gen);
                assert!(r.gen.sent > 0, "{what}: {:?}", r.gen);
                let per: Vec<u64> = r.gen.per_stream.iter().map(|&(_, n)| n).collect();
                assert_eq!(per.iter().sum::<u64>(), r.gen.sent, "{what}: {:?}", r.gen);
                if b.mixed() {
                    // Two streams in turn, by packet sent: 1000 each when nothing was late.
                    assert_eq!(r.gen.per_stream.iter().map(|&(s, _)| s).collect::<Vec<_>>(), vec![0, 1], "{what}");
                    assert!(per[0].abs_diff(per[1]) <= 1, "{what}: {:?}", r.gen);
                }
            }
            // Unpaced, for a moment: no error, and more than the paced rate.
            let r = gen.run(f64::INFINITY, Duration::from_millis(20));
            assert!(r.first_error.is_none() && r.sent > 400, "{}: {r:?}", b.name());
            // Far above what it can send: the slots it cannot send in time are given up
            // and counted, never more of them than there are.
            let r = gen.run(1e9, Duration::from_millis(20));
            assert!(r.first_error.is_none() && r.sent > 0 && r.late > 0, "{}: {r:?}", b.name());
            assert_eq!((r.slots, r.sent + r.late), (20_000_000, 20_000_000), "{}: {r:?}", b.name());
        });
    }
    // From outside the namespace it refuses to send (the device index means another
    // device here).
    let mut gen = in_netns(ns.name(), || LiveGenerator::new("tg0", &[build(Behavior::Ipv6, &a, 0)], None).unwrap());
    let r = gen.run(1000.0, Duration::from_millis(10));
    assert_eq!(r.sent, 0);
    assert!(r.first_error.as_deref().is_some_and(|e| e.contains("network namespace")), "{r:?}");
    drop(gen);

    // What goes on the wire, decoded by scapy: the frames of every behaviour, captured
    // on tg1 by a packet socket of the test's own.
    if !python_has_scapy() {
        eprintln!("scapy check skipped: python3 with scapy is not installed");
        return;
    }
    const PER: usize = 5;
    let mut frames: Vec<(Behavior, Vec<u8>)> = Vec::new();
    for &b in Behavior::all() {
        let (r, mut cap) = in_netns(ns.name(), || {
            let mut g = LiveGenerator::new("tg0", &[build(b, &a, 3)], None).unwrap();
            let c = open_port("tg1", Backend::AfPacket, 256, &[], &[]).expect("open tg1");
            (g.run(10_000.0, Duration::from_micros(500)), c)
        });
        assert_eq!(r.sent, PER as u64, "{}: {r:?}", b.name());
        let mut bufs: Vec<PacketBuf> = (0..64).map(|_| PacketBuf::new()).collect();
        let mut got = 0;
        for _ in 0..200 {
            let n = cap.port.rx_burst(&mut bufs).unwrap();
            for buf in &bufs[..n] {
                // Our stream only (the kernel may send router solicitations and such).
                if buf.data().len() == frame_len(b, INNER_IP_LEN) {
                    frames.push((b, buf.data().to_vec()));
                    got += 1;
                }
            }
            if got == PER {
                break;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        assert_eq!(got, PER, "{}: frames captured on tg1", b.name());
    }
    let dir = std::env::temp_dir().join(format!("sr6-perf-live-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let pcap = dir.join("live.pcap");
    write_pcap(&pcap, &frames.iter().map(|(_, f)| f.clone()).collect::<Vec<_>>());
    let out = Command::new("python3").args(["-c", DECODE]).arg(&pcap).output().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(out.status.success(), "scapy: {}", String::from_utf8_lossy(&out.stderr));
    let decoded: Vec<serde_json::Value> =
        String::from_utf8_lossy(&out.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(decoded.len(), frames.len());
    let mut last_ts = 0u64;
    for (i, d) in decoded.iter().enumerate() {
        let (b, _) = frames[i];
        let seq = (i % PER) as u64;
        let what = format!("{} live packet {seq}: {d}", b.name());
        assert_eq!(d["ip"]["udp_ok"], true, "UDP checksum: {what}");
        let tail = d["tail"].as_str().unwrap();
        assert_eq!(&tail[..8], "53360003", "magic and stream: {what}");
        assert_eq!(u64::from_str_radix(&tail[8..16], 16).unwrap(), seq, "sequence number: {what}");
        let ts = u64::from_str_radix(&tail[16..], 16).unwrap();
        if seq > 0 {
            // 100 us apart, paced in the kernel. A generator behind its schedule (the
            // test thread preempted) catches up at CATCH_UP times the rate, so the
            // program's guarantee is the interval over CATCH_UP (less 1 ns of rounding):
            // no timing assertion beyond that floor.
            let floor = (100_000.0 / CATCH_UP) as u64 - 1;
            assert!(ts >= last_ts + floor, "timestamps at least {floor} ns apart: {what}");
        }
        last_ts = ts;
    }
}

/// The receivers that count in the kernel (an XDP program on tg1, or the same at tcx
/// ingress): every behaviour's frames, sent by the live-frame generator, counted
/// exactly — the generator's own per-stream counts are the oracle — with the latency
/// histogram full; and a packet stamped before the trial is stale, not counted.
/// Whether the running kernel's release is `major.minor` or later.
fn kernel_at_least(major: u32, minor: u32) -> bool {
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap();
    let mut n = release.split(|c: char| !c.is_ascii_digit()).map(|x| x.parse::<u32>().unwrap_or(0));
    (n.next().unwrap_or(0), n.next().unwrap_or(0)) >= (major, minor)
}

#[test]
#[ignore = "needs root and network namespaces"]
fn veth_counted_in_the_kernel() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let ns = loop_net("count");
    assert!(gro_on(ns.name(), "tg1"), "cannot enable GRO (NAPI) on tg1: is ethtool installed?");
    let a = loop_addressing();
    let mut hooks = vec![CountHook::Xdp];
    // tcx came in Linux 6.6; before it (Debian 12's 6.1) sr6 perf counts with XDP only.
    if kernel_at_least(6, 6) {
        hooks.push(CountHook::TcxIngress);
    } else {
        eprintln!("veth_counted_in_the_kernel: no tcx before Linux 6.6: the XDP counter only");
    }
    for hook in hooks {
        for &b in Behavior::all() {
            let templates = if b.mixed() { vec![build(b, &a, 0), build(b, &a, 1)] } else { vec![build(b, &a, 0)] };
            in_netns(ns.name(), || {
                let mut gen = LiveGenerator::new("tg0", &templates, None).expect("live frames on tg0");
                let recv = XdpReceiver::attach("tg1", 2, hook).expect("attach the counter to tg1");
                for k in 0..2 {
                    let r = run_trial_report(
                        &mut gen,
                        &recv,
                        20_000.0,
                        Duration::from_millis(100),
                        Duration::from_millis(50),
                    )
                    .unwrap();
                    let what = format!("{} counted by {} (trial {k})", b.name(), recv.describe());
                    check_exact(&r, &what);
                    // Every frame is one of: counted, other (the kernel's router
                    // solicitations and such), stale, unknown.
                    let seen = r.trial.received + r.recv.other + r.recv.stale + r.recv.unknown_stream;
                    assert_eq!(r.recv.port_rx, seen, "{what}: frames seen: {:?}", r.recv);
                    assert_eq!((r.recv.rx_errors, r.recv.unknown_stream), (0, 0), "{what}: {:?}", r.recv);
                }
                // Sent before the next start: stale then, and not counted.
                let early = gen.run(20_000.0, Duration::from_millis(5));
                std::thread::sleep(Duration::from_millis(20));
                recv.start().unwrap();
                std::thread::sleep(Duration::from_millis(20));
                let r = recv.stop().unwrap();
                assert_eq!(r.streams.len(), 0, "{}: {r:?}", b.name());
                assert!(early.sent > 0 && r.stale == 0, "{}: nothing in flight across a start: {r:?}", b.name());
            });
        }
    }
}

#[test]
#[ignore = "needs root and network namespaces"]
fn veth_tx_dropped_at_an_absurd_rate() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let ns = loop_net("drop");
    let a = loop_addressing();
    for backend in [Backend::AfXdp, Backend::AfPacket] {
        let (mut gen, recv, what) = open_pair(
            ns.name(),
            (backend, backend),
            vec![build(Behavior::Ipv6, &a, 0)],
            GenConfig::default(),
            RecvConfig::default(),
        );
        let r =
            run_trial_report(&mut gen, &recv, 1e12, Duration::from_millis(100), Duration::from_millis(100)).unwrap();
        let t = &r.trial;
        eprintln!("{what}: {t:?}; late {}, ring full {}", r.gen.late, r.gen.ring_full);
        assert!(t.sent > 0, "{what}");
        assert!(t.tx_dropped > 0, "{what}: a generator cannot send 10^11 packets in 100 ms");
        assert_eq!(t.sent + t.tx_dropped, r.gen.slots, "{what}");
        assert_eq!(r.gen.slots, 100_000_000_000, "{what}");
        assert!(t.received <= t.sent, "{what}");
        assert_eq!(r.recv.duplicates(), 0, "{what}");
    }
}

/// Moves `dev`'s NAPI polling (the receive side of a veth with XDP attached) into a
/// kernel thread and pins it to `cpus` (a `taskset` list), so that it no longer runs in
/// the softirq of whoever sends to the peer.
fn threaded_napi(ns: &str, dev: &str, cpus: &str) {
    let cmd = format!("echo 1 > /sys/class/net/{dev}/threaded");
    let ok = Command::new("ip").args(["netns", "exec", ns, "sh", "-c", &cmd]).status();
    assert!(ok.map(|s| s.success()).unwrap_or(false), "{cmd}");
    std::thread::sleep(Duration::from_millis(50));
    // The kthreads are named napi/<dev>-<id>; several namespaces may have a `tg1`:
    // pin them all (they are idle unless a test runs).
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let comm = std::fs::read_to_string(e.path().join("comm")).unwrap_or_default();
        if comm.trim().starts_with(&format!("napi/{dev}-")) {
            let pid = e.file_name().to_string_lossy().into_owned();
            let _ = Command::new("taskset").args(["-pc", cpus, &pid]).output();
        }
    }
}

/// `ip -s` counters of `dev` in `ns`: (rx packets, rx dropped, tx packets, tx dropped).
fn link_counters(ns: &str, dev: &str) -> [u64; 4] {
    let out = Command::new("ip").args(["-n", ns, "-s", "-j", "link", "show", dev]).output().expect("run ip");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    let s = &v[0]["stats64"];
    let n = |x: &serde_json::Value| x.as_u64().unwrap_or(0);
    [n(&s["rx"]["packets"]), n(&s["rx"]["dropped"]), n(&s["tx"]["packets"]), n(&s["tx"]["dropped"])]
}

/// The generator's maximum rate on a looped veth pair: unpaced (`offered = ∞`) for 2 s
/// per backend, frame size and batch size, with the receiver counting on tg1. Prints
/// the figures; asserts nothing about speed. `#[ignore]`d because it is a benchmark, not
/// a check (seconds per configuration, and its output is for a human): run it with
/// `cargo test --release -p sr6-perf --test traffic_netns -- --ignored --nocapture
/// veth_max_rate`. Knobs (environment):
/// `SR6_PERF_MAX_RATE_SECS` (2), `SR6_PERF_MAX_RATE_BACKEND` (`af_xdp`, `af_packet`;
/// both by default), `SR6_PERF_MAX_RATE_BATCH` (`32,256`), `SR6_PERF_MAX_RATE_RX`
/// (`port`: the receiver counts on tg1; `none`: tg1 is left to the kernel, which drops
/// the packets, and only the generator's side is measured), `SR6_PERF_MAX_RATE_CPU`
/// (pin the generator), `SR6_PERF_MAX_RATE_RX_CPU` (pin the receiver),
/// `SR6_PERF_MAX_RATE_IDLE` (`nap`, `spin`, `poll`: how the receiver waits),
/// `SR6_PERF_MAX_RATE_OFFERED` (rates in pps to try instead of `inf`, e.g.
/// `500000,1000000`), `SR6_PERF_MAX_RATE_RX_BACKEND` (the receiver's, if not the generator's),
/// `SR6_PERF_MAX_RATE_NAPI_CPUS` (threaded NAPI for tg1, pinned to these CPUs, e.g.
/// `1`), `SR6_PERF_MAX_RATE_RPS` (a CPU mask for tg1's receive
/// processing, e.g. `2`: without it the kernel receives on the sender's CPU).
#[test]
#[ignore = "a benchmark, not a check (needs root; prints figures)"]
fn veth_max_rate() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let env = |k: &str| std::env::var(k).ok();
    let secs: f64 = env("SR6_PERF_MAX_RATE_SECS").and_then(|s| s.parse().ok()).unwrap_or(2.0);
    let backends: Vec<Backend> = match env("SR6_PERF_MAX_RATE_BACKEND").as_deref() {
        Some("af_xdp") => vec![Backend::AfXdp],
        Some("af_packet") => vec![Backend::AfPacket],
        _ => vec![Backend::AfXdp, Backend::AfPacket],
    };
    let batches: Vec<u32> = env("SR6_PERF_MAX_RATE_BATCH")
        .map(|s| s.split(',').filter_map(|x| x.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![32, 256]);
    let offered: Vec<f64> = env("SR6_PERF_MAX_RATE_OFFERED")
        .map(|s| s.split(',').filter_map(|x| x.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![f64::INFINITY]);
    let with_rx = env("SR6_PERF_MAX_RATE_RX").as_deref() != Some("none");
    let cpu = env("SR6_PERF_MAX_RATE_CPU").and_then(|s| s.parse().ok());
    let idle = match env("SR6_PERF_MAX_RATE_IDLE").as_deref() {
        Some("spin") => Idle::Spin,
        Some("poll") => Idle::Poll(Duration::from_millis(1)),
        _ => RecvConfig::default().idle,
    };
    let rx_cpu = env("SR6_PERF_MAX_RATE_RX_CPU").and_then(|s| s.parse().ok());
    let rcfg = RecvConfig { idle, cpu: rx_cpu, ..RecvConfig::default() };
    let napi_cpus = env("SR6_PERF_MAX_RATE_NAPI_CPUS");
    let rx_backend = match env("SR6_PERF_MAX_RATE_RX_BACKEND").as_deref() {
        Some("af_xdp") => Some(Backend::AfXdp),
        Some("af_packet") => Some(Backend::AfPacket),
        _ => None,
    };
    let ns = loop_net("max");
    if let Some(mask) = env("SR6_PERF_MAX_RATE_RPS") {
        // Receive processing of tg1 on these CPUs (hex mask), not on the sender's.
        let cmd = format!("echo {mask} > /sys/class/net/tg1/queues/rx-0/rps_cpus");
        let ok = Command::new("ip").args(["netns", "exec", ns.name(), "sh", "-c", &cmd]).status();
        assert!(ok.map(|s| s.success()).unwrap_or(false), "{cmd}");
    }
    let a = loop_addressing();
    for &backend in &backends {
        for b in [Behavior::Ipv6, Behavior::parse("End").unwrap()] {
            for (&batch, &offered) in batches.iter().flat_map(|b| offered.iter().map(move |o| (b, o))) {
                let cfg = GenConfig { batch, cpu, ..GenConfig::default() };
                let t = vec![build(b, &a, 0)];
                let rx0 = link_counters(ns.name(), "tg1");
                let tx0 = link_counters(ns.name(), "tg0");
                let (line, rx_line) = if with_rx {
                    let (mut gen, recv, what) =
                        open_pair(ns.name(), (backend, rx_backend.unwrap_or(backend)), t, cfg, rcfg.clone());
                    if let Some(cpus) = &napi_cpus {
                        threaded_napi(ns.name(), "tg1", cpus);
                    }
                    let r = run_trial_report(
                        &mut gen,
                        &recv,
                        offered,
                        Duration::from_secs_f64(secs),
                        Duration::from_millis(200),
                    )
                    .unwrap();
                    let e = r.gen.elapsed_s();
                    (
                        format!(
                            "{what}: sent {:.3} Mpps ({} in {e:.2} s, late {}, ring full {}, flush errors {})",
                            r.gen.achieved_pps() / 1e6,
                            r.gen.sent,
                            r.gen.late,
                            r.gen.ring_full,
                            r.gen.tx_errors
                        ),
                        format!(
                            "receiver counted {:.3} Mpps ({}), its ring dropped {}, latency us min/p50/p99/max {:.1}/{:.1}/{:.1}/{:.1}",
                            r.trial.received as f64 / e / 1e6,
                            r.trial.received,
                            r.recv.port_rx_ring_full,
                            r.recv.latency.min_ns as f64 / 1e3,
                            r.recv.latency.p50_ns as f64 / 1e3,
                            r.recv.latency.p99_ns as f64 / 1e3,
                            r.recv.latency.max_ns as f64 / 1e3
                        ),
                    )
                } else {
                    let g = in_netns(ns.name(), || open_port("tg0", backend, 2048, &[], &[]).expect("open tg0"));
                    let what = format!("tx {}, rx kernel", g.backend);
                    let mut gen = Generator::new(g.port, t, cfg).unwrap();
                    let r = gen.run(offered, Duration::from_secs_f64(secs));
                    std::thread::sleep(Duration::from_millis(200));
                    (
                        format!(
                            "{what}: sent {:.3} Mpps ({} in {:.2} s, late {}, ring full {}, flush errors {})",
                            r.achieved_pps() / 1e6,
                            r.sent,
                            r.elapsed_s(),
                            r.late,
                            r.ring_full,
                            r.tx_errors
                        ),
                        String::new(),
                    )
                };
                let rx1 = link_counters(ns.name(), "tg1");
                let tx1 = link_counters(ns.name(), "tg0");
                println!(
                    "max rate, {} ({} B frames), batch {batch}, offered {offered:.0} pps: {line}; tg0 tx {} dropped {}, tg1 rx {} dropped {}; {rx_line}",
                    b.name(),
                    frame_len(b, INNER_IP_LEN),
                    tx1[2] - tx0[2],
                    tx1[3] - tx0[3],
                    rx1[0] - rx0[0],
                    rx1[1] - rx0[1],
                );
            }
        }
    }
}
