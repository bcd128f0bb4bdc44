//! The AF_PACKET port against the Linux kernel, in two network namespaces joined by a
//! veth pair: the port lives in namespace A; the oracle is a plain AF_PACKET socket in
//! namespace B (send/recvmsg, VLAN tags put back from `PACKET_AUXDATA`, as libpcap
//! does), which shares no code with the port. Traffic never leaves the two namespaces.
//!
//! Needs root (namespaces, raw sockets): those tests are `#[ignore]`d; run them with
//! `--include-ignored`.

use std::collections::BTreeSet;
use std::io;
use std::mem::size_of;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::time::{Duration, Instant};

use sr6_core::packet::{PacketBuf, MAX_FRAME};
use sr6_io::af_packet::{self, AfPacketPort, TxVersion};
use sr6_io::live::{Port, PortSpec};
use sr6_testnet::Netns;

const MAC_A: [u8; 6] = [0x02, 0, 0, 0, 0, 0x0a];
const MAC_B: [u8; 6] = [0x02, 0, 0, 0, 0, 0x0b];
const MAC_OTHER: [u8; 6] = [0x02, 0, 0, 0, 0, 0x99];
const DEV_A: &str = "va";
const DEV_B: &str = "vb";

// ---------------------------------------------------------------------------------
// Namespaces

/// Two namespaces with a veth pair `va` (in A, MAC_A) -- `vb` (in B, MAC_B), removed on
/// drop (removing a namespace removes its end of the veth, and with it the pair).
struct Net {
    a: Netns,
    b: Netns,
}

/// Sets up the namespaces (panics without root).
fn netns(tag: &str, mtu: Option<u32>) -> Net {
    let ns = Net { a: Netns::new(&format!("afp-{tag}-a")), b: Netns::new(&format!("afp-{tag}-b")) };
    for n in [&ns.a, &ns.b] {
        // No IPv6 on the veths: no router solicitations, MLD reports or DAD probes.
        n.sh("echo 1 > /proc/sys/net/ipv6/conf/all/disable_ipv6; \
              echo 1 > /proc/sys/net/ipv6/conf/default/disable_ipv6");
    }
    ns.a.add_veth(DEV_A, &ns.b, DEV_B, None);
    for (n, dev, mac) in [(&ns.a, DEV_A, MAC_A), (&ns.b, DEV_B, MAC_B)] {
        n.set_mac(dev, mac);
        if let Some(mtu) = mtu {
            n.ip(&["link", "set", dev, "mtu", &mtu.to_string()]);
        }
        n.up(dev);
    }
    ns
}

fn open_in(ns: &Netns, spec: PortSpec, tx: TxVersion) -> AfPacketPort {
    ns.run(move || af_packet::open_with_tx(&spec, tx)).expect("open the port")
}

// ---------------------------------------------------------------------------------
// The oracle: a plain packet socket

struct Raw {
    fd: OwnedFd,
}

fn check(r: libc::c_int, what: &str) {
    assert!(r >= 0, "{what}: {}", io::Error::last_os_error());
}

fn setsockopt_int(fd: RawFd, level: libc::c_int, name: libc::c_int, v: libc::c_int) {
    // SAFETY: a c_int option value that lives through the call.
    let r = unsafe {
        libc::setsockopt(fd, level, name, (&v as *const libc::c_int).cast(), size_of::<libc::c_int>() as u32)
    };
    check(r, "setsockopt");
}

fn getsockopt_u32(fd: RawFd, level: libc::c_int, name: libc::c_int) -> u32 {
    let mut v = 0u32;
    let mut len = size_of::<u32>() as libc::socklen_t;
    // SAFETY: `v` is writable for `len` bytes.
    let r = unsafe { libc::getsockopt(fd, level, name, (&mut v as *mut u32).cast(), &mut len) };
    check(r, "getsockopt");
    v
}

impl Raw {
    /// A socket bound to `dev` in the calling thread's namespace, receiving everything.
    fn new(dev: &str) -> Raw {
        // SAFETY: plain system calls; results checked.
        unsafe {
            let fd = libc::socket(libc::AF_PACKET, libc::SOCK_RAW, i32::from(0x0003u16.to_be()));
            check(fd, "socket");
            let fd = OwnedFd::from_raw_fd(fd);
            let name = std::ffi::CString::new(dev).unwrap();
            let ifindex = libc::if_nametoindex(name.as_ptr());
            assert_ne!(ifindex, 0, "{dev}");
            let mut sll: libc::sockaddr_ll = std::mem::zeroed();
            sll.sll_family = libc::AF_PACKET as u16;
            sll.sll_protocol = 0x0003u16.to_be();
            sll.sll_ifindex = ifindex as i32;
            let r = libc::bind(
                fd.as_raw_fd(),
                (&sll as *const libc::sockaddr_ll).cast(),
                size_of::<libc::sockaddr_ll>() as u32,
            );
            check(r, "bind");
            setsockopt_int(fd.as_raw_fd(), libc::SOL_PACKET, libc::PACKET_AUXDATA, 1);
            setsockopt_int(fd.as_raw_fd(), libc::SOL_SOCKET, libc::SO_RCVBUF, 8 << 20);
            let tv = libc::timeval { tv_sec: 0, tv_usec: 50_000 };
            let r = libc::setsockopt(
                fd.as_raw_fd(),
                libc::SOL_SOCKET,
                libc::SO_RCVTIMEO,
                (&tv as *const libc::timeval).cast(),
                size_of::<libc::timeval>() as u32,
            );
            check(r, "SO_RCVTIMEO");
            Raw { fd }
        }
    }

    fn send(&self, frame: &[u8]) {
        // SAFETY: `frame` is readable for its length.
        let r = unsafe { libc::send(self.fd.as_raw_fd(), frame.as_ptr().cast(), frame.len(), 0) };
        assert_eq!(r, frame.len() as isize, "send: {}", io::Error::last_os_error());
    }

    /// One received frame with its packet type, the VLAN tag put back; `None` on timeout.
    fn recv(&self) -> Option<(u8, Vec<u8>)> {
        let mut buf = vec![0u8; 65536];
        let mut cmsg = [0u64; 64];
        // SAFETY: zeroed plain data.
        let mut sll: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
        let mut iov = libc::iovec { iov_base: buf.as_mut_ptr().cast(), iov_len: buf.len() };
        // SAFETY: zeroed plain data, then every pointer set to a live buffer.
        let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
        msg.msg_name = (&mut sll as *mut libc::sockaddr_ll).cast();
        msg.msg_namelen = size_of::<libc::sockaddr_ll>() as u32;
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = cmsg.as_mut_ptr().cast();
        msg.msg_controllen = size_of::<[u64; 64]>();
        // SAFETY: `msg` describes live, writable buffers.
        let n = unsafe { libc::recvmsg(self.fd.as_raw_fd(), &mut msg, libc::MSG_TRUNC) };
        if n < 0 {
            let e = io::Error::last_os_error();
            assert!(matches!(e.raw_os_error(), Some(libc::EAGAIN | libc::EINTR)), "recvmsg: {e}");
            return None;
        }
        assert!((n as usize) <= buf.len(), "frame of {n} bytes truncated");
        buf.truncate(n as usize);
        // SAFETY: walking the control messages the kernel wrote into `msg`.
        unsafe {
            let mut c = libc::CMSG_FIRSTHDR(&msg);
            while !c.is_null() {
                if (*c).cmsg_level == libc::SOL_PACKET && (*c).cmsg_type == libc::PACKET_AUXDATA {
                    let aux: libc::tpacket_auxdata = std::ptr::read_unaligned(libc::CMSG_DATA(c).cast());
                    if aux.tp_status & libc::TP_STATUS_VLAN_VALID != 0 {
                        let tpid = if aux.tp_status & libc::TP_STATUS_VLAN_TPID_VALID != 0 {
                            aux.tp_vlan_tpid
                        } else {
                            0x8100
                        };
                        let tag = [tpid.to_be_bytes(), aux.tp_vlan_tci.to_be_bytes()].concat();
                        buf.splice(12..12, tag);
                    }
                }
                c = libc::CMSG_NXTHDR(&msg, c);
            }
        }
        Some((sll.sll_pkttype, buf))
    }

    /// Frames received until `want` of them pass `keep` or `timeout` passes.
    fn collect(&self, want: usize, timeout: Duration, keep: impl Fn(u8, &[u8]) -> bool) -> Vec<Vec<u8>> {
        let deadline = Instant::now() + timeout;
        let mut got = Vec::new();
        while got.len() < want && Instant::now() < deadline {
            if let Some((t, f)) = self.recv() {
                if keep(t, &f) {
                    got.push(f);
                }
            }
        }
        got
    }
}

/// Frames sent out of this socket are seen by it too: the oracle keeps only what came in.
fn incoming_from(src: [u8; 6]) -> impl Fn(u8, &[u8]) -> bool {
    move |t, f| t != libc::PACKET_OUTGOING && f.len() >= 12 && f[6..12] == src
}

// ---------------------------------------------------------------------------------
// Frames

fn eth(dst: [u8; 6], src: [u8; 6], ethertype: u16, payload: &[u8]) -> Vec<u8> {
    let mut f = Vec::with_capacity(14 + payload.len());
    f.extend_from_slice(&dst);
    f.extend_from_slice(&src);
    f.extend_from_slice(&ethertype.to_be_bytes());
    f.extend_from_slice(payload);
    f
}

/// An IPv6 packet (2001:db8::b -> 2001:db8::a) whose payload is `next` + `body`.
fn ipv6(next_header: u8, body: &[u8]) -> Vec<u8> {
    let mut p = vec![0x60, 0, 0, 0];
    p.extend_from_slice(&(body.len() as u16).to_be_bytes());
    p.extend_from_slice(&[next_header, 64]);
    p.extend_from_slice(&[0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x0b]);
    p.extend_from_slice(&[0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x0a]);
    p.extend_from_slice(body);
    p
}

/// A UDP datagram from port `sport` whose payload is `len` bytes counting from `seed`.
fn udp(sport: u16, len: usize, seed: u8) -> Vec<u8> {
    let mut u = Vec::with_capacity(8 + len);
    u.extend_from_slice(&sport.to_be_bytes());
    u.extend_from_slice(&4789u16.to_be_bytes());
    u.extend_from_slice(&((8 + len) as u16).to_be_bytes());
    u.extend_from_slice(&[0, 0]); // no checksum check anywhere on this path
    u.extend((0..len).map(|i| seed.wrapping_add(i as u8)));
    u
}

fn ipv6_udp_to(dst: [u8; 6], sport: u16, len: usize, seed: u8) -> Vec<u8> {
    eth(dst, MAC_B, 0x86dd, &ipv6(17, &udp(sport, len, seed)))
}

fn icmpv6(icmp_type: u8) -> Vec<u8> {
    let mut body = vec![icmp_type, 0, 0, 0, 0, 0, 0, 0];
    body.extend_from_slice(&[0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x0a]);
    eth(MAC_A, MAC_B, 0x86dd, &ipv6(58, &body))
}

fn ipv4_to(dst: [u8; 6], seed: u8) -> Vec<u8> {
    let mut h = vec![0x45, 0, 0, 48, 0, 1, 0, 0, 64, 17, 0, 0, 192, 0, 2, 2, 192, 0, 2, 1];
    h.extend(udp(1000, 20, seed));
    eth(dst, MAC_B, 0x0800, &h)
}

fn arp(dst: [u8; 6], op: u8) -> Vec<u8> {
    let mut a = vec![0, 1, 8, 0, 6, 4, 0, op];
    a.extend_from_slice(&MAC_B);
    a.extend_from_slice(&[192, 0, 2, 2]);
    a.extend_from_slice(&if op == 2 { MAC_A } else { [0; 6] });
    a.extend_from_slice(&[192, 0, 2, 1]);
    eth(dst, MAC_B, 0x0806, &a)
}

fn vlan(frame: &[u8], tci: u16) -> Vec<u8> {
    let mut f = frame[..12].to_vec();
    f.extend_from_slice(&[0x81, 0x00]);
    f.extend_from_slice(&tci.to_be_bytes());
    f.extend_from_slice(&frame[12..]);
    f
}

// ---------------------------------------------------------------------------------
// The port side

fn bufs(n: usize) -> Vec<PacketBuf> {
    (0..n).map(|_| PacketBuf::new()).collect()
}

/// Polls the port's descriptor and bursts until `want` frames came or `timeout`
/// passed; returns the frames and whether `poll` ever reported the descriptor readable.
fn port_collect(port: &mut AfPacketPort, want: usize, timeout: Duration) -> (Vec<Vec<u8>>, bool) {
    let mut b = bufs(32);
    let mut got = Vec::new();
    let mut woke = false;
    let deadline = Instant::now() + timeout;
    let mut last_ts = 0;
    while got.len() < want && Instant::now() < deadline {
        let mut pfd = libc::pollfd { fd: port.fd(), events: libc::POLLIN, revents: 0 };
        // SAFETY: one valid pollfd.
        let r = unsafe { libc::poll(&mut pfd, 1, 20) };
        woke |= r == 1 && pfd.revents & libc::POLLIN != 0;
        let n = port.rx_burst(&mut b).expect("rx_burst");
        for p in &b[..n] {
            assert_eq!(p.in_dev, 7, "in_dev is the spec's dev");
            assert!(p.ts_ns >= last_ts, "timestamps go forward");
            last_ts = p.ts_ns;
            got.push(p.data().to_vec());
        }
    }
    (got, woke)
}

fn spec(workers: u32, worker: u32, ring_frames: u32) -> PortSpec {
    PortSpec { ring_frames, ..PortSpec::new(DEV_A, 7, worker, workers) }
}

fn hex_diff(a: &[Vec<u8>], b: &[Vec<u8>]) -> String {
    format!(
        "{} vs {} frames; first lengths {:?} vs {:?}",
        a.len(),
        b.len(),
        a.iter().map(Vec::len).take(20).collect::<Vec<_>>(),
        b.iter().map(Vec::len).take(20).collect::<Vec<_>>()
    )
}

// ---------------------------------------------------------------------------------
// Tests

#[test]
#[ignore = "needs root and network namespaces"]
fn receives_exactly_what_the_filter_admits_byte_for_byte() {
    let ns = netns("rx", None);
    let mut port = open_in(&ns.a, spec(1, 0, 256), TxVersion::V3);
    let tx = ns.b.run(|| Raw::new(DEV_B));

    let admitted = vec![
        ipv6_udp_to(MAC_A, 1, 50, 1),
        ipv4_to(MAC_A, 2),
        icmpv6(128), // echo request
        icmpv6(132), // just below the NDP range
        icmpv6(138), // just above it
        vlan(&ipv6_udp_to(MAC_A, 2, 100, 3), 0x2064),
        eth(MAC_A, MAC_B, 0x86dd, &ipv6(43, &[0; 40])), // routing header
        ipv6_udp_to(MAC_A, 3, 1500 - 48, 4),            // a full-size frame
    ];
    let refused = vec![
        arp([0xff; 6], 1),                                            // ARP request, broadcast
        arp(MAC_A, 2),                                                // ARP reply, unicast
        icmpv6(133),                                                  // RS
        icmpv6(134),                                                  // RA
        icmpv6(135),                                                  // NS
        icmpv6(136),                                                  // NA
        icmpv6(137),                                                  // Redirect
        ipv6_udp_to([0x33, 0x33, 0, 0, 0, 1], 4, 20, 5),              // IPv6 multicast
        ipv4_to([0xff; 6], 6),                                        // IPv4 broadcast
        ipv4_to([0x01, 0, 0x5e, 0, 0, 1], 7),                         // IPv4 multicast
        eth([0x01, 0x80, 0xc2, 0, 0, 0x0e], MAC_B, 0x88cc, &[0; 46]), // LLDP
        ipv6_udp_to(MAC_OTHER, 5, 20, 8),                             // another host's
        eth(MAC_A, MAC_B, 0x8847, &[0; 46]),                          // MPLS
    ];
    // Interleaved, so a refused frame between two admitted ones would show.
    for (i, f) in admitted.iter().enumerate() {
        tx.send(f);
        for r in refused.iter().skip(i * 2).take(2) {
            tx.send(r);
        }
    }
    for r in refused.iter().skip(admitted.len() * 2) {
        tx.send(r);
    }
    let marker = ipv6_udp_to(MAC_A, 9, 10, 0xee);
    tx.send(&marker);

    let mut expected = admitted.clone();
    expected.push(marker);
    let (got, woke) = port_collect(&mut port, expected.len(), Duration::from_secs(3));
    // Anything else still on its way would come within a few retire timeouts.
    let (extra, _) = port_collect(&mut port, 1, Duration::from_millis(50));
    assert!(got == expected, "{}", hex_diff(&got, &expected));
    assert!(extra.is_empty(), "{} unexpected frames: {:02x?}", extra.len(), extra);
    assert!(woke, "poll() reported the descriptor readable");
    let st = port.stats();
    assert_eq!((st.rx, st.rx_oversized, st.rx_ring_full), (expected.len() as u64, 0, 0));
}

#[test]
#[ignore = "needs root and network namespaces"]
fn oversized_frames_are_dropped_and_counted() {
    let ns = netns("big", Some(9500));
    let mut port = open_in(&ns.a, spec(1, 0, 256), TxVersion::V3);
    let tx = ns.b.run(|| Raw::new(DEV_B));
    let largest = ipv6_udp_to(MAC_A, 1, MAX_FRAME - 14 - 48, 1);
    assert_eq!(largest.len(), MAX_FRAME);
    let too_big = ipv6_udp_to(MAC_A, 2, MAX_FRAME - 14 - 48 + 1, 2);
    let tagged_too_big = vlan(&largest, 5);
    let marker = ipv6_udp_to(MAC_A, 3, 10, 3);
    for f in [&too_big, &largest, &tagged_too_big, &marker] {
        tx.send(f);
    }
    let (got, _) = port_collect(&mut port, 2, Duration::from_secs(3));
    assert!(
        got == vec![largest, marker],
        "{}",
        got.iter().map(Vec::len).map(|l| l.to_string()).collect::<Vec<_>>().join(",")
    );
    let st = port.stats();
    assert_eq!((st.rx, st.rx_oversized), (2, 2));
}

#[test]
#[ignore = "needs root and network namespaces"]
fn transmits_byte_for_byte_and_never_sees_its_own_or_the_kernels_frames() {
    let ns = netns("tx", None);
    let mut port = open_in(&ns.a, spec(1, 0, 256), TxVersion::V3);
    let oracle = ns.b.run(|| Raw::new(DEV_B));
    let fd = port.fd();
    assert_eq!(getsockopt_u32(fd, libc::SOL_PACKET, libc::PACKET_VERSION), 2, "TPACKET_V3");
    assert_eq!(getsockopt_u32(fd, libc::SOL_PACKET, libc::PACKET_IGNORE_OUTGOING), 1);
    assert_eq!(getsockopt_u32(fd, libc::SOL_PACKET, libc::PACKET_QDISC_BYPASS), 1);
    eprintln!("transmit ring: {:?}", port.tx_version());

    let frame = |len: usize, seed: u8| {
        let mut f = eth(MAC_B, MAC_A, 0x86dd, &ipv6(17, &udp(7, len - 14 - 48, seed)));
        f.truncate(len);
        f
    };
    let mut sent = vec![frame(62, 1), frame(63, 2), frame(128, 3), frame(1000, 4), frame(1514, 5)];
    sent.push(vlan(&frame(1514, 6), 0x0fff)); // the largest tagged frame
    sent.push(eth(MAC_B, MAC_A, 0x0800, &ipv4_to(MAC_B, 7)[14..]));
    for f in &sent {
        assert!(port.tx_queue(f));
    }
    // Too long for the device: refused and counted, not queued.
    assert!(!port.tx_queue(&frame(1515, 8)));
    assert!(!port.tx_queue(&vlan(&frame(1515, 9), 1)));
    assert_eq!(port.tx_oversized(), 2);
    port.tx_flush().expect("tx_flush");
    let got = oracle.collect(sent.len(), Duration::from_secs(3), incoming_from(MAC_A));
    assert!(got == sent, "{}", hex_diff(&got, &sent));
    assert_eq!(port.stats().tx, sent.len() as u64);

    // The kernel's transmissions out of A (another socket there) go out too...
    let kernel = ns.a.run(|| Raw::new(DEV_A));
    let others = vec![ipv6_udp_to(MAC_B, 11, 30, 11), ipv6_udp_to(MAC_A, 12, 30, 12), ipv4_to(MAC_B, 13)];
    for f in &others {
        kernel.send(f);
    }
    let got =
        oracle.collect(others.len(), Duration::from_secs(3), |t, f| t != libc::PACKET_OUTGOING && f[6..12] == MAC_B);
    assert_eq!(got.len(), others.len(), "the other socket's frames reached B");
    // ... and neither they nor ours came back in through the port.
    let (back, _) = port_collect(&mut port, 1, Duration::from_millis(100));
    assert!(back.is_empty(), "looped back: {:02x?}", back);
    assert_eq!(port.stats().rx, 0);
}

#[test]
#[ignore = "needs root and network namespaces"]
fn a_full_ring_refuses_then_reclaims_its_slots() {
    let ns = netns("full", None);
    let mut port = open_in(&ns.a, spec(1, 0, 64), TxVersion::V3);
    let oracle = ns.b.run(|| Raw::new(DEV_B));
    let slots = port.tx_slots();
    assert!(slots >= 64, "{slots}");
    let frames: Vec<Vec<u8>> = (0..slots).map(|i| ipv6_udp_to(MAC_B, i as u16, 20, i as u8)).collect();
    for f in &frames {
        assert!(port.tx_queue(f));
    }
    assert!(!port.tx_queue(&frames[0]), "every slot is waiting");
    assert_eq!(port.stats().tx_ring_full, 1);
    port.tx_flush().expect("tx_flush");
    let got = oracle.collect(slots, Duration::from_secs(3), |t, f| t != libc::PACKET_OUTGOING && f[..6] == MAC_B);
    assert!(got == frames, "{}", hex_diff(&got, &frames));
    // The kernel hands the slots back once the device let go of the frames.
    let deadline = Instant::now() + Duration::from_secs(2);
    let mut requeued = 0;
    while requeued < slots && Instant::now() < deadline {
        if port.tx_queue(&frames[requeued]) {
            requeued += 1;
        } else {
            std::thread::sleep(Duration::from_millis(1));
        }
    }
    assert_eq!(requeued, slots, "slots reclaimed");
    port.tx_flush().expect("tx_flush");
    let again = oracle.collect(slots, Duration::from_secs(3), |t, f| t != libc::PACKET_OUTGOING && f[..6] == MAC_B);
    assert_eq!(again.len(), slots);
    assert_eq!(port.stats().tx, 2 * slots as u64);
}

#[test]
#[ignore = "needs root and network namespaces"]
fn the_v2_transmit_fallback_works_and_receives_nothing() {
    let ns = netns("v2", None);
    let mut port = open_in(&ns.a, spec(1, 0, 128), TxVersion::V2);
    assert_eq!(port.tx_version(), TxVersion::V2);
    let oracle = ns.b.run(|| Raw::new(DEV_B));
    let sent: Vec<Vec<u8>> = (0..20).map(|i| ipv6_udp_to(MAC_B, i, 40 + usize::from(i) * 50, i as u8)).collect();
    for f in &sent {
        assert!(port.tx_queue(f));
    }
    port.tx_flush().expect("tx_flush");
    let got = oracle.collect(sent.len(), Duration::from_secs(3), |t, f| t != libc::PACKET_OUTGOING && f[..6] == MAC_B);
    assert!(got == sent, "{}", hex_diff(&got, &sent));
    // Receiving still goes through the V3 ring, and our frames did not come back.
    let f = ipv6_udp_to(MAC_A, 1, 64, 0x42);
    oracle.send(&f);
    let (rx, _) = port_collect(&mut port, 2, Duration::from_millis(300));
    assert_eq!(rx, vec![f]);
}

#[test]
#[ignore = "needs root and network namespaces"]
fn two_workers_share_the_device_through_a_hash_fanout_group() {
    let ns = netns("fanout", None);
    let mut w0 = open_in(&ns.a, spec(2, 0, 256), TxVersion::V3);
    let mut w1 = open_in(&ns.a, spec(2, 1, 256), TxVersion::V3);
    // The kernel's own account of the group: id | type << 16 | flags << 24.
    let f0 = getsockopt_u32(w0.fd(), libc::SOL_PACKET, libc::PACKET_FANOUT);
    let f1 = getsockopt_u32(w1.fd(), libc::SOL_PACKET, libc::PACKET_FANOUT);
    assert_eq!(f0, f1, "one group");
    assert_eq!(f0 & 0xffff, u32::from(af_packet::fanout_group_id(w0.ifindex())));
    assert_eq!(Some(f0 as u16), w0.fanout_group());
    assert_eq!((f0 >> 16) & 0xff, libc::PACKET_FANOUT_HASH);
    assert_eq!(f0 >> 24, libc::PACKET_FANOUT_FLAG_IGNORE_OUTGOING >> 8);

    let tx = ns.b.run(|| Raw::new(DEV_B));
    let sent: Vec<Vec<u8>> = (0..64).map(|i| ipv6_udp_to(MAC_A, 10_000 + i, 30, i as u8)).collect();
    for f in &sent {
        tx.send(f);
    }
    let deadline = Instant::now() + Duration::from_secs(3);
    let (mut g0, mut g1) = (Vec::new(), Vec::new());
    while g0.len() + g1.len() < sent.len() && Instant::now() < deadline {
        g0.extend(port_collect(&mut w0, 1, Duration::from_millis(5)).0);
        g1.extend(port_collect(&mut w1, 1, Duration::from_millis(5)).0);
    }
    g0.extend(port_collect(&mut w0, usize::MAX, Duration::from_millis(30)).0);
    g1.extend(port_collect(&mut w1, usize::MAX, Duration::from_millis(30)).0);
    assert_eq!(g0.len() + g1.len(), sent.len(), "each frame once");
    let all: BTreeSet<Vec<u8>> = g0.iter().chain(&g1).cloned().collect();
    assert_eq!(all, sent.iter().cloned().collect::<BTreeSet<_>>());
    assert!(!g0.is_empty() && !g1.is_empty(), "64 flows all hashed to one worker: {} / {}", g0.len(), g1.len());
}

#[test]
#[ignore = "needs root and network namespaces"]
fn a_full_receive_ring_is_reported_by_the_kernel() {
    let ns = netns("drops", None);
    // The smallest ring: 4 blocks of 64 KiB, about 170 frames of 1400 bytes.
    let mut port = open_in(&ns.a, spec(1, 0, 1), TxVersion::V3);
    let tx = ns.b.run(|| Raw::new(DEV_B));
    let sent = 1000u64;
    for i in 0..sent {
        tx.send(&ipv6_udp_to(MAC_A, i as u16, 1400, i as u8));
        if i % 100 == 99 {
            std::thread::sleep(Duration::from_millis(2)); // let the backlog drain into the ring
        }
    }
    std::thread::sleep(Duration::from_millis(50));
    let full = port.stats().rx_ring_full;
    assert!(full > 0, "the kernel reported no ring drops");
    let (got, _) = port_collect(&mut port, usize::MAX, Duration::from_millis(100));
    let st = port.stats();
    assert!(st.rx_ring_full >= full, "the count accumulates");
    assert!(st.rx + st.rx_ring_full <= sent && got.len() as u64 == st.rx, "{st:?}");
    assert!(st.rx < 4 * 65536 / 1400 + 10, "more frames than the ring holds: {st:?}");
    // The kernel froze the full ring; it takes frames again once blocks came back.
    let f = ipv6_udp_to(MAC_A, 1, 64, 0x42);
    tx.send(&f);
    let (got, _) = port_collect(&mut port, 1, Duration::from_secs(1));
    assert_eq!(got, vec![f]);
}

#[test]
#[ignore = "needs root and network namespaces"]
fn drop_unmaps_and_closes() {
    let ns = netns("drop", None);
    let links = || -> Vec<String> {
        std::fs::read_dir("/proc/self/fd")
            .unwrap()
            .filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
            .map(|p| p.to_string_lossy().into_owned())
            .collect()
    };
    for version in [TxVersion::V3, TxVersion::V2] {
        let port = open_in(&ns.a, spec(1, 0, 64), version);
        // The receiving socket's inode, as /proc/self/maps and /proc/self/fd name it.
        let inode = std::fs::read_link(format!("/proc/self/fd/{}", port.fd())).unwrap();
        let inode = inode.to_string_lossy().into_owned();
        assert!(inode.starts_with("socket:["), "{inode}");
        let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
        assert!(maps.contains(&inode), "{version:?}: the rings of {inode} are mapped");
        drop(port);
        let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
        assert!(!maps.contains(&inode), "{version:?}: {inode} still mapped");
        assert!(!links().contains(&inode), "{version:?}: {inode} still open");
    }
}

#[test]
fn without_cap_net_raw_the_error_says_so() {
    // Capabilities are per thread: drop CAP_NET_RAW from this thread's effective set.
    let e = std::thread::spawn(|| {
        #[repr(C)]
        struct Header {
            version: u32,
            pid: i32,
        }
        #[repr(C)]
        #[derive(Clone, Copy, Default)]
        struct Data {
            effective: u32,
            permitted: u32,
            inheritable: u32,
        }
        let mut h = Header { version: 0x2008_0522, pid: 0 };
        let mut d = [Data::default(); 2];
        // SAFETY: capget/capset with a v3 header and two data words, as the ABI wants.
        unsafe {
            assert_eq!(libc::syscall(libc::SYS_capget, &mut h, d.as_mut_ptr()), 0);
            d[0].effective &= !(1 << 13); // CAP_NET_RAW
            assert_eq!(libc::syscall(libc::SYS_capset, &h, d.as_ptr()), 0);
        }
        af_packet::open(&PortSpec::new("lo", 0, 0, 1)).unwrap_err()
    })
    .join()
    .unwrap();
    assert_eq!(e.kind(), io::ErrorKind::PermissionDenied, "{e}");
    let msg = e.to_string();
    assert!(msg.contains("CAP_NET_RAW") && msg.contains("root") && msg.contains("lo"), "{msg}");
}

#[test]
fn a_missing_device_is_named() {
    let e = af_packet::open(&PortSpec::new("sr6-nope0", 0, 0, 1)).unwrap_err();
    assert_eq!(e.kind(), io::ErrorKind::NotFound);
    assert!(e.to_string().contains("sr6-nope0"), "{e}");
}

#[test]
#[ignore = "needs root and network namespaces"]
fn a_device_going_down_drops_the_queue_and_the_ring_goes_on() {
    let ns = netns("flap", None);
    let mut port = open_in(&ns.a, spec(1, 0, 64), TxVersion::V3);
    let oracle = ns.b.run(|| Raw::new(DEV_B));
    let revents = |fd: RawFd| {
        let mut pfd = libc::pollfd { fd, events: libc::POLLIN, revents: 0 };
        // SAFETY: one valid pollfd.
        unsafe { libc::poll(&mut pfd, 1, 0) };
        pfd.revents
    };
    ns.a.ip(&["link", "set", DEV_A, "down"]);
    let stale: Vec<Vec<u8>> = (0..3).map(|i| ipv6_udp_to(MAC_B, 100 + i, 30, i as u8)).collect();
    for f in &stale {
        assert!(port.tx_queue(f));
    }
    let e = port.tx_flush().unwrap_err();
    assert_eq!(e.raw_os_error(), Some(libc::ENETDOWN), "{e}");
    assert_eq!(port.tx_error_drops(), 3);
    ns.a.ip(&["link", "set", DEV_A, "up"]);
    // The kernel flagged the socket (ENETDOWN): the descriptor polls POLLERR until an
    // idle rx_burst takes the error, once.
    assert_ne!(revents(port.fd()) & libc::POLLERR, 0, "the kernel's flag");
    let mut b = bufs(4);
    let e = port.rx_burst(&mut b).unwrap_err();
    assert_eq!(e.raw_os_error(), Some(libc::ENETDOWN), "{e}");
    assert_eq!(revents(port.fd()) & libc::POLLERR, 0, "taken");
    assert_eq!(port.rx_burst(&mut b).unwrap(), 0);
    let fresh: Vec<Vec<u8>> = (0..2).map(|i| ipv6_udp_to(MAC_B, 200 + i, 30, 0x80 + i as u8)).collect();
    for f in &fresh {
        assert!(port.tx_queue(f));
    }
    port.tx_flush().expect("flush after up");
    let got = oracle.collect(5, Duration::from_millis(500), |t, f| t != libc::PACKET_OUTGOING && f[..6] == MAC_B);
    assert!(got == fresh, "the stale frames stayed dropped: {}", hex_diff(&got, &fresh));

    // Down and up again with no receive in between: the first flush meets the stale
    // error, and still sends.
    ns.a.ip(&["link", "set", DEV_A, "down"]);
    ns.a.ip(&["link", "set", DEV_A, "up"]);
    let more: Vec<Vec<u8>> = (0..2).map(|i| ipv6_udp_to(MAC_B, 300 + i, 30, 0x90 + i as u8)).collect();
    for f in &more {
        assert!(port.tx_queue(f));
    }
    port.tx_flush().expect("flush after a flap");
    let got = oracle.collect(5, Duration::from_millis(500), |t, f| t != libc::PACKET_OUTGOING && f[..6] == MAC_B);
    assert!(got == more, "{}", hex_diff(&got, &more));
    assert_eq!(revents(port.fd()) & libc::POLLERR, 0, "the flush took the error");
    assert_eq!(port.tx_error_drops(), 3);

    // Receiving resumed too.
    let f = ipv6_udp_to(MAC_A, 1, 64, 0x42);
    oracle.send(&f);
    let (rx, _) = port_collect(&mut port, 1, Duration::from_secs(1));
    assert_eq!(rx, vec![f]);
    assert_eq!(port.stats().tx, 4);
}
