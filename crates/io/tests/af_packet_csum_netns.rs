//! Partial checksums through the AF_PACKET port, with the Linux kernel as the oracle.
//!
//! Three namespaces: a sender S whose veth keeps transmit checksum offload on (a veth's
//! default, checked with `ethtool -k`), a router R where two ports forward between the
//! two veths (Ethernet addresses rewritten, nothing else), and a destination D whose
//! kernel UDP stack verifies every checksum and drops a wrong one:
//!
//! ```text
//!  S  s-r ---- r-s  R  r-d ---- d-r  D
//!  10.9.0.2           (ports)          10.9.1.2
//!  fd00:9::2                           fd00:9:1::2
//! ```
//!
//! With the virtio-net header (`PACKET_VNET_HDR`, the port's default) every datagram
//! reaches D's UDP sockets and the port counts each completed checksum; without it, the
//! very same datagrams arrive at D with the partial checksums S left, and D drops all
//! of them — what `sr6 run` warns about. A bulk TCP stream from S (segmentation offload
//! on) arrives at the port as super-frames, which are dropped and counted.
//!
//! Needs root: `#[ignore]`d; run with `--include-ignored`.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use sr6_core::packet::PacketBuf;
use sr6_io::af_packet::{self, AfPacketPort, TxVersion};
use sr6_io::live::{Port, PortSpec, PortStats};
use sr6_testnet::{mac_str, Netns};

const MAC_S: [u8; 6] = [0x02, 0, 0, 0, 0x09, 0x01];
const MAC_RS: [u8; 6] = [0x02, 0, 0, 0, 0x09, 0x02];
const MAC_RD: [u8; 6] = [0x02, 0, 0, 0, 0x09, 0x03];
const MAC_D: [u8; 6] = [0x02, 0, 0, 0, 0x09, 0x04];
const DATAGRAMS: usize = 20;

struct Lab {
    s: Netns,
    r: Netns,
    d: Netns,
}

fn lab(tag: &str) -> Lab {
    let l = Lab {
        s: Netns::new(&format!("csum-{tag}-s")),
        r: Netns::new(&format!("csum-{tag}-r")),
        d: Netns::new(&format!("csum-{tag}-d")),
    };
    l.s.add_veth("s-r", &l.r, "r-s", None);
    l.r.add_veth("r-d", &l.d, "d-r", None);
    for (n, dev, mac) in [(&l.s, "s-r", MAC_S), (&l.r, "r-s", MAC_RS), (&l.r, "r-d", MAC_RD), (&l.d, "d-r", MAC_D)] {
        n.set_mac(dev, mac);
        n.up(dev);
    }
    // R has no addresses and forwards nothing itself: only the ports move frames.
    l.r.sh("echo 1 > /proc/sys/net/ipv6/conf/all/disable_ipv6; echo 0 > /proc/sys/net/ipv4/ip_forward");
    for (n, dev, me, gw, gw_mac, net4, me6, gw6, net6) in [
        (&l.s, "s-r", "10.9.0.2/24", "10.9.0.1", MAC_RS, "10.9.1.0/24", "fd00:9::2/64", "fd00:9::1", "fd00:9:1::/64"),
        (&l.d, "d-r", "10.9.1.2/24", "10.9.1.1", MAC_RD, "10.9.0.0/24", "fd00:9:1::2/64", "fd00:9:1::1", "fd00:9::/64"),
    ] {
        n.up("lo");
        n.sh(&format!(
            "ip addr add {me} dev {dev} && ip -6 addr add {me6} dev {dev} nodad && \
             ip neigh add {gw} lladdr {m} dev {dev} nud permanent && \
             ip -6 neigh add {gw6} lladdr {m} dev {dev} nud permanent && \
             ip route add {net4} via {gw} dev {dev} && ip -6 route add {net6} via {gw6} dev {dev}",
            m = mac_str(gw_mac)
        ));
    }
    let tx = l.s.sh("ethtool -k s-r");
    assert!(tx.lines().any(|x| x == "tx-checksumming: on"), "the sender offloads checksums:\n{tx}");
    l
}

fn open(ns: &Netns, dev: &str, id: u16, vnet: bool) -> AfPacketPort {
    let spec = PortSpec { ring_frames: 256, ..PortSpec::new(dev, id, 0, 1) };
    let p = ns.run(move || af_packet::open_with(&spec, TxVersion::V3, vnet)).expect("open the port");
    assert_eq!(p.vnet_hdr(), vnet);
    p
}

/// Forwards S -> D (and D -> S) through the two ports, rewriting the Ethernet
/// addresses, until `stop` says so (given the S side's counters) or 10 s passed;
/// returns the S side's counters.
fn forward(from_s: &mut AfPacketPort, from_d: &mut AfPacketPort, stop: impl Fn(&PortStats) -> bool) -> PortStats {
    let mut bufs: Vec<PacketBuf> = (0..32).map(|_| PacketBuf::new()).collect();
    let deadline = Instant::now() + Duration::from_secs(10);
    while !stop(&from_s.stats()) && Instant::now() < deadline {
        hop(from_s, from_d, &mut bufs, MAC_D, MAC_RD);
        hop(from_d, from_s, &mut bufs, MAC_S, MAC_RS);
        std::thread::sleep(Duration::from_millis(1));
    }
    from_s.stats()
}

/// One burst from `inp` to `out`, the Ethernet addresses set to `dst` and `src`.
fn hop(inp: &mut AfPacketPort, out: &mut AfPacketPort, bufs: &mut [PacketBuf], dst: [u8; 6], src: [u8; 6]) {
    let n = inp.rx_burst(bufs).expect("rx_burst");
    for b in &mut bufs[..n] {
        let d = b.data_mut();
        d[..6].copy_from_slice(&dst);
        d[6..12].copy_from_slice(&src);
        assert!(out.tx_queue(b.data()), "tx_queue");
    }
    out.tx_flush().expect("tx_flush");
}

/// Sends DATAGRAMS UDP datagrams S -> D over IPv4 and over IPv6 through the ports
/// (`vnet` on or off); returns how many D's sockets received, and the port counters.
fn udp_through(l: &Lab, vnet: bool) -> (usize, PortStats) {
    let mut ps = open(&l.r, "r-s", 0, vnet);
    let mut pd = open(&l.r, "r-d", 1, vnet);
    let (rx4, rx6) = l.d.run(|| {
        let a = UdpSocket::bind("10.9.1.2:9999").unwrap();
        let b = UdpSocket::bind("[fd00:9:1::2]:9999").unwrap();
        for s in [&a, &b] {
            s.set_read_timeout(Some(Duration::from_millis(300))).unwrap();
        }
        (a, b)
    });
    l.s.run(|| {
        // Fixed ports and payloads: the same bytes in every run.
        let a = UdpSocket::bind("10.9.0.2:40000").unwrap();
        let b = UdpSocket::bind("[fd00:9::2]:40000").unwrap();
        for i in 0..DATAGRAMS {
            let payload = format!("sr6 vnet datagram {i:04}");
            a.send_to(payload.as_bytes(), "10.9.1.2:9999").unwrap();
            b.send_to(payload.as_bytes(), "[fd00:9:1::2]:9999").unwrap();
        }
    });
    let want = 2 * DATAGRAMS as u64;
    let st = forward(&mut ps, &mut pd, |st| st.rx + st.rx_bad_vnet + st.rx_gso + st.rx_oversized >= want);
    let mut got = 0;
    let mut buf = [0u8; 256];
    for s in [&rx4, &rx6] {
        while let Ok(n) = s.recv(&mut buf) {
            assert!(buf[..n].starts_with(b"sr6 vnet datagram "));
            got += 1;
        }
    }
    (got, st)
}

#[test]
#[ignore = "needs root (network namespaces)"]
fn partial_udp_checksums_are_completed_and_the_far_kernel_accepts_them() {
    let l = lab("on");
    let (got, st) = udp_through(&l, true);
    assert_eq!(got, 2 * DATAGRAMS, "every datagram passes D's checksum check ({st:?})");
    assert_eq!(st.rx_csum_completed, 2 * DATAGRAMS as u64, "{st:?}");
    assert_eq!((st.rx_gso, st.rx_bad_vnet), (0, 0));
}

#[test]
#[ignore = "needs root (network namespaces)"]
fn without_the_vnet_header_the_far_kernel_drops_them_as_the_warning_says() {
    let l = lab("off");
    let (got, st) = udp_through(&l, false);
    assert_eq!(st.rx, 2 * DATAGRAMS as u64, "the port forwarded them all ({st:?})");
    assert_eq!(got, 0, "D dropped every datagram: its checksum was left partial");
    assert_eq!(st.rx_csum_completed, 0);
}

#[test]
#[ignore = "needs root (network namespaces)"]
fn segmentation_offload_super_frames_are_dropped_and_counted() {
    let l = lab("gso");
    let tso = l.s.sh("ethtool -k s-r");
    assert!(tso.lines().any(|x| x == "tcp-segmentation-offload: on"), "{tso}");
    let mut ps = open(&l.r, "r-s", 0, true);
    let mut pd = open(&l.r, "r-d", 1, true);
    let listener = l.d.run(|| TcpListener::bind("10.9.1.2:9998").unwrap());
    let done = AtomicBool::new(false);
    let st = std::thread::scope(|sc| {
        sc.spawn(|| {
            if let Ok((mut c, _)) = listener.accept() {
                c.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
                let mut buf = vec![0u8; 65536];
                while let Ok(1..) = c.read(&mut buf) {}
            }
        });
        sc.spawn(|| {
            let stream = l.s.run(|| {
                let addr: SocketAddr = "10.9.1.2:9998".parse().unwrap();
                TcpStream::connect_timeout(&addr, Duration::from_secs(5))
            });
            // The handshake crossed the ports (small segments, their sums completed);
            // the bulk that follows leaves S as super-frames.
            if let Ok(mut s) = stream {
                s.set_write_timeout(Some(Duration::from_secs(2))).unwrap();
                let _ = s.write_all(&vec![0x5a; 256 * 1024]);
            }
            std::thread::sleep(Duration::from_millis(300));
            done.store(true, Ordering::Relaxed);
        });
        let st = forward(&mut ps, &mut pd, |_| done.load(Ordering::Relaxed));
        // Unblock the server: nothing more will come through.
        let _ = l.d.run(|| TcpStream::connect("10.9.1.2:9998"));
        st
    });
    assert!(st.rx_gso > 0, "super-frames from S's TSO were counted: {st:?}");
    assert!(st.rx_csum_completed > 0, "the small segments (SYN, ACKs) were completed: {st:?}");
    assert_eq!(st.rx_bad_vnet, 0);
}

/// What the AF_PACKET warning tells the user to do: TCP segmentation offload off on
/// the peer (checksum offload still on). A bulk TCP stream then crosses whole: every
/// segment's checksum completed by the port, D's TCP verifying each one.
#[test]
#[ignore = "needs root (network namespaces)"]
fn with_tso_off_on_the_peer_a_tcp_stream_crosses_whole() {
    const BYTES: usize = 512 * 1024;
    let l = lab("tso");
    l.s.sh("ethtool -K s-r tso off");
    assert!(l.s.sh("ethtool -k s-r").lines().any(|x| x == "tx-checksumming: on"));
    let mut ps = open(&l.r, "r-s", 0, true);
    let mut pd = open(&l.r, "r-d", 1, true);
    let listener = l.d.run(|| TcpListener::bind("10.9.1.2:9997").unwrap());
    let done = AtomicBool::new(false);
    let (st, received) = std::thread::scope(|sc| {
        let server = sc.spawn(|| {
            let mut total = 0;
            if let Ok((mut c, _)) = listener.accept() {
                c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
                let mut buf = vec![0u8; 65536];
                while let Ok(n @ 1..) = c.read(&mut buf) {
                    assert!(buf[..n].iter().all(|&b| b == 0xa5));
                    total += n;
                }
            }
            done.store(true, Ordering::Relaxed);
            total
        });
        sc.spawn(|| {
            let stream = l.s.run(|| {
                let addr: SocketAddr = "10.9.1.2:9997".parse().unwrap();
                TcpStream::connect_timeout(&addr, Duration::from_secs(5))
            });
            if let Ok(mut s) = stream {
                s.set_write_timeout(Some(Duration::from_secs(5))).unwrap();
                let _ = s.write_all(&vec![0xa5; BYTES]);
                let _ = s.shutdown(std::net::Shutdown::Write);
                // Stay open until D has read everything (its ACKs come back through R).
                while !done.load(Ordering::Relaxed) {
                    std::thread::sleep(Duration::from_millis(10));
                }
            }
        });
        let st = forward(&mut ps, &mut pd, |_| done.load(Ordering::Relaxed));
        // If the handshake never crossed, the server still waits in accept: end it.
        if !done.load(Ordering::Relaxed) {
            let _ = l.d.run(|| TcpStream::connect("10.9.1.2:9997"));
        }
        (st, server.join().unwrap())
    });
    assert_eq!(received, BYTES, "{st:?}");
    assert_eq!((st.rx_gso, st.rx_bad_vnet), (0, 0), "{st:?}");
    assert!(st.rx_csum_completed >= (BYTES / 1500) as u64, "every data segment completed: {st:?}");
}
