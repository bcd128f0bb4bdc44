//! The AF_XDP backend against the Linux kernel, in two network namespaces joined by a
//! veth pair (root: the tests are `#[ignore]`d; run them with `--include-ignored`).
//!
//! Namespace A holds the device sr6 attaches to; namespace B sends and captures with a
//! plain AF_PACKET socket. The oracle is the kernel itself: frames the XDP program must
//! leave to the kernel are checked by the kernel's own answers (ARP reply, neighbour
//! advertisement, echo replies) captured in B, and frames sr6 sends are checked as B's
//! kernel hands them to the capture socket. No traffic leaves the two namespaces.

use std::ffi::CString;
use std::net::{Ipv4Addr, Ipv6Addr};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::time::{Duration, Instant};

use sr6_core::packet::PacketBuf;
use sr6_io::af_xdp::{probe, XdpAttachment, XdpMode, XskPort};
use sr6_io::live::{Port, PortSpec};
use sr6_testnet::Netns;

const MAC_A: [u8; 6] = [0x02, 0x53, 0x52, 0x36, 0x00, 0x0a];
const MAC_B: [u8; 6] = [0x02, 0x53, 0x52, 0x36, 0x00, 0x0b];
const DEV_A: &str = "sr6xa";
const DEV_B: &str = "sr6xb";

fn v6(s: &str) -> Ipv6Addr {
    s.parse().unwrap()
}

/// A6: A's global address (a host address, in `host6`); LL_A: A's link-local (not in
/// `host6`); B6: B's address; FAR6/FAR4: addresses of neither (transit traffic, sr6's).
fn a6() -> Ipv6Addr {
    v6("2001:db8:a::1")
}
fn b6() -> Ipv6Addr {
    v6("2001:db8:a::2")
}
fn ll_a() -> Ipv6Addr {
    v6("fe80::a")
}
fn ll_b() -> Ipv6Addr {
    v6("fe80::b")
}
fn far6() -> Ipv6Addr {
    v6("2001:db8:ff::1")
}
const A4: Ipv4Addr = Ipv4Addr::new(192, 0, 2, 1);
const B4: Ipv4Addr = Ipv4Addr::new(192, 0, 2, 2);
const FAR4: Ipv4Addr = Ipv4Addr::new(198, 51, 100, 1);

// ---- environment ------------------------------------------------------------------

/// Two namespaces and a veth pair; removed on drop (also when the test fails).
struct Net {
    a: Netns,
    b: Netns,
}

impl Net {
    fn new(tag: &str, queues: u32) -> Net {
        let n = Net { a: Netns::new(&format!("af-{tag}-a")), b: Netns::new(&format!("af-{tag}-b")) };
        probe().expect("AF_XDP works here");
        n.a.add_veth(DEV_A, &n.b, DEV_B, Some(queues));
        for (ns, dev, mac, g6, ll, a4) in [
            (&n.a, DEV_A, MAC_A, "2001:db8:a::1/64", "fe80::a/64", "192.0.2.1/24"),
            (&n.b, DEV_B, MAC_B, "2001:db8:a::2/64", "fe80::b/64", "192.0.2.2/24"),
        ] {
            ns.set_mac(dev, mac);
            ns.ip(&["addr", "add", g6, "dev", dev, "nodad"]);
            ns.ip(&["addr", "add", ll, "dev", dev, "nodad"]);
            ns.ip(&["addr", "add", a4, "dev", dev]);
            ns.up("lo");
            ns.up(dev);
        }
        n
    }
}

/// The tests run one at a time, so that the process's descriptors and mappings can be
/// counted before and after.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Open descriptors and socket mappings (AF_XDP rings) of this process.
fn resources() -> (usize, usize) {
    let fds = std::fs::read_dir("/proc/self/fd").unwrap().count();
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap().lines().filter(|l| l.contains("socket:[")).count();
    (fds, maps)
}

// ---- a raw AF_PACKET socket in B --------------------------------------------------

struct Raw {
    fd: OwnedFd,
}

impl Raw {
    fn open(dev: &str) -> Raw {
        let proto = (libc::ETH_P_ALL as u16).to_be();
        // SAFETY: plain socket(2), checked below.
        let fd = unsafe { libc::socket(libc::AF_PACKET, libc::SOCK_RAW | libc::SOCK_CLOEXEC, proto as i32) };
        assert!(fd >= 0, "socket(AF_PACKET): {}", std::io::Error::last_os_error());
        // SAFETY: `fd` is a new descriptor nothing else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        let name = CString::new(dev).unwrap();
        // SAFETY: valid NUL-terminated name.
        let ifindex = unsafe { libc::if_nametoindex(name.as_ptr()) };
        assert!(ifindex > 0, "{dev}: no such device");
        // SAFETY: all-zero is a valid sockaddr_ll.
        let mut sll: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
        sll.sll_family = libc::AF_PACKET as u16;
        sll.sll_protocol = proto;
        sll.sll_ifindex = ifindex as i32;
        // SAFETY: `sll` is a valid sockaddr_ll and its size is passed.
        let r = unsafe {
            libc::bind(
                fd.as_raw_fd(),
                &sll as *const libc::sockaddr_ll as *const libc::sockaddr,
                std::mem::size_of::<libc::sockaddr_ll>() as u32,
            )
        };
        assert_eq!(r, 0, "bind AF_PACKET: {}", std::io::Error::last_os_error());
        // The oracle must not drop: a 256-frame burst overflowed the default receive
        // buffer (~200 KiB) now and then. FORCE passes `rmem_max` (root only; else the
        // plain option, capped there).
        let big: libc::c_int = 8 << 20;
        for opt in [libc::SO_RCVBUFFORCE, libc::SO_RCVBUF] {
            // SAFETY: `big` is a valid int and its size is passed.
            let r = unsafe {
                libc::setsockopt(
                    fd.as_raw_fd(),
                    libc::SOL_SOCKET,
                    opt,
                    &big as *const libc::c_int as *const libc::c_void,
                    std::mem::size_of::<libc::c_int>() as u32,
                )
            };
            if r == 0 {
                break;
            }
        }
        Raw { fd }
    }

    fn send(&self, frame: &[u8]) {
        // SAFETY: `frame` is valid for reads of its length.
        let r = unsafe { libc::send(self.fd.as_raw_fd(), frame.as_ptr() as *const libc::c_void, frame.len(), 0) };
        assert_eq!(r, frame.len() as isize, "send: {}", std::io::Error::last_os_error());
    }

    /// The next frame received (not sent) on the device, or None after `timeout`.
    fn recv(&self, timeout: Duration) -> Option<Vec<u8>> {
        let deadline = Instant::now() + timeout;
        let mut buf = vec![0u8; 16384];
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return None;
            }
            if !wait_readable(self.fd.as_raw_fd(), left) {
                return None;
            }
            // SAFETY: all-zero is a valid sockaddr_ll.
            let mut sll: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
            let mut len = std::mem::size_of::<libc::sockaddr_ll>() as u32;
            // SAFETY: `buf` and `sll` are writable for the lengths passed.
            let n = unsafe {
                libc::recvfrom(
                    self.fd.as_raw_fd(),
                    buf.as_mut_ptr() as *mut libc::c_void,
                    buf.len(),
                    libc::MSG_DONTWAIT,
                    &mut sll as *mut libc::sockaddr_ll as *mut libc::sockaddr,
                    &mut len,
                )
            };
            if n > 0 && sll.sll_pkttype != libc::PACKET_OUTGOING {
                return Some(buf[..n as usize].to_vec());
            }
        }
    }

    /// Collects received frames until `done` holds for the collection or `timeout`.
    fn collect(&self, timeout: Duration, mut done: impl FnMut(&[Vec<u8>]) -> bool) -> Vec<Vec<u8>> {
        let deadline = Instant::now() + timeout;
        let mut got = Vec::new();
        while !done(&got) {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.recv(left) {
                Some(f) => got.push(f),
                None => break,
            }
        }
        got
    }
}

fn wait_readable(fd: i32, timeout: Duration) -> bool {
    let mut p = libc::pollfd { fd, events: libc::POLLIN, revents: 0 };
    let ms = timeout.as_millis().clamp(1, 10_000) as i32;
    // SAFETY: one valid pollfd.
    unsafe { libc::poll(&mut p, 1, ms) > 0 }
}

/// Receives from the port until `want` frames arrived (then `linger` more, for strays)
/// or `timeout`.
fn port_collect(port: &mut XskPort, want: usize, timeout: Duration, linger: Duration) -> Vec<Vec<u8>> {
    let mut bufs: Vec<PacketBuf> = (0..64).map(|_| PacketBuf::new()).collect();
    let mut got = Vec::new();
    let deadline = Instant::now() + timeout;
    let mut until = deadline;
    while Instant::now() < until {
        let n = port.rx_burst(&mut bufs).expect("rx_burst");
        for b in &bufs[..n] {
            assert!(b.ts_ns > 0);
            assert_eq!(b.in_dev, 3);
            got.push(b.data().to_vec());
        }
        if got.len() >= want && until == deadline {
            until = Instant::now() + linger;
        }
        if n == 0 {
            wait_readable(port.fd(), Duration::from_millis(20));
        }
    }
    got
}

/// Captures in B the frames `port` transmits that `keep` selects, flushing again while
/// B sees nothing (a kernel without XDP_MAX_TX_SKB_BUDGET sends 32 frames per kick),
/// until `n` arrived or 5 s passed.
fn capture_tx(port: &mut XskPort, raw: &Raw, n: usize, keep: impl Fn(&[u8]) -> bool) -> Vec<Vec<u8>> {
    let mut seen = Vec::new();
    let mut reflushes = 0;
    let deadline = Instant::now() + Duration::from_secs(5);
    while seen.len() < n && Instant::now() < deadline {
        match raw.recv(Duration::from_millis(50)) {
            Some(f) if keep(&f) => seen.push(f),
            Some(_) => {}
            None => {
                reflushes += 1;
                port.tx_flush().expect("tx_flush");
            }
        }
    }
    eprintln!("captured {} of {n} transmitted frames ({reflushes} extra flushes)", seen.len());
    seen
}

// ---- frames -----------------------------------------------------------------------

fn checksum(parts: &[&[u8]]) -> u16 {
    let mut sum = 0u32;
    for p in parts {
        for c in p.chunks(2) {
            sum += u32::from(u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)]));
        }
    }
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

fn ether(dst: [u8; 6], src: [u8; 6], ethertype: u16, payload: &[u8]) -> Vec<u8> {
    let mut f = dst.to_vec();
    f.extend_from_slice(&src);
    f.extend_from_slice(&ethertype.to_be_bytes());
    f.extend_from_slice(payload);
    f
}

/// An IPv6 packet whose upper layer (`nh` = 17 or 58) gets its checksum at `ck_at`.
fn ipv6(src: Ipv6Addr, dst: Ipv6Addr, nh: u8, hop: u8, mut l4: Vec<u8>, ck_at: Option<usize>) -> Vec<u8> {
    if let Some(at) = ck_at {
        let len = (l4.len() as u32).to_be_bytes();
        let c = checksum(&[&src.octets(), &dst.octets(), &len, &[0, 0, 0, nh], &l4]);
        l4[at..at + 2].copy_from_slice(&c.to_be_bytes());
    }
    let mut p = vec![0x60, 0, 0, 0];
    p.extend_from_slice(&(l4.len() as u16).to_be_bytes());
    p.extend_from_slice(&[nh, hop]);
    p.extend_from_slice(&src.octets());
    p.extend_from_slice(&dst.octets());
    p.extend_from_slice(&l4);
    p
}

fn udp6(src: Ipv6Addr, dst: Ipv6Addr, payload: &[u8]) -> Vec<u8> {
    udp6_from(src, dst, 12345, payload)
}

fn udp6_from(src: Ipv6Addr, dst: Ipv6Addr, sport: u16, payload: &[u8]) -> Vec<u8> {
    let mut u = sport.to_be_bytes().to_vec();
    u.extend_from_slice(&[0, 9]);
    u.extend_from_slice(&((8 + payload.len()) as u16).to_be_bytes());
    u.extend_from_slice(&[0, 0]);
    u.extend_from_slice(payload);
    ipv6(src, dst, 17, 64, u, Some(6))
}

fn icmp6(src: Ipv6Addr, dst: Ipv6Addr, hop: u8, typ: u8, body: &[u8]) -> Vec<u8> {
    let mut m = vec![typ, 0, 0, 0];
    m.extend_from_slice(body);
    ipv6(src, dst, 58, hop, m, Some(2))
}

/// A neighbour solicitation for `target` with B's link-layer address.
fn ns(src: Ipv6Addr, dst: Ipv6Addr, target: Ipv6Addr) -> Vec<u8> {
    let mut body = vec![0, 0, 0, 0];
    body.extend_from_slice(&target.octets());
    body.extend_from_slice(&[1, 1]);
    body.extend_from_slice(&MAC_B);
    icmp6(src, dst, 255, 135, &body)
}

fn ipv4(src: Ipv4Addr, dst: Ipv4Addr, proto: u8, l4: &[u8]) -> Vec<u8> {
    let mut h = vec![0x45, 0];
    h.extend_from_slice(&((20 + l4.len()) as u16).to_be_bytes());
    h.extend_from_slice(&[0x12, 0x34, 0x40, 0, 64, proto, 0, 0]);
    h.extend_from_slice(&src.octets());
    h.extend_from_slice(&dst.octets());
    let c = checksum(&[&h]);
    h[10..12].copy_from_slice(&c.to_be_bytes());
    h.extend_from_slice(l4);
    h
}

fn udp4(src: Ipv4Addr, dst: Ipv4Addr, payload: &[u8]) -> Vec<u8> {
    let mut u = vec![0x30, 0x39, 0, 9];
    u.extend_from_slice(&((8 + payload.len()) as u16).to_be_bytes());
    u.extend_from_slice(&[0, 0]); // no UDP checksum (allowed over IPv4)
    u.extend_from_slice(payload);
    ipv4(src, dst, 17, &u)
}

fn echo4(src: Ipv4Addr, dst: Ipv4Addr, id: u16) -> Vec<u8> {
    let mut m = vec![8, 0, 0, 0];
    m.extend_from_slice(&id.to_be_bytes());
    m.extend_from_slice(&[0, 1]);
    m.extend_from_slice(b"sr6 echo");
    let c = checksum(&[&m]);
    m[2..4].copy_from_slice(&c.to_be_bytes());
    ipv4(src, dst, 1, &m)
}

fn arp_request(target: Ipv4Addr) -> Vec<u8> {
    let mut a = vec![0, 1, 0x08, 0, 6, 4, 0, 1];
    a.extend_from_slice(&MAC_B);
    a.extend_from_slice(&B4.octets());
    a.extend_from_slice(&[0; 6]);
    a.extend_from_slice(&target.octets());
    ether([0xff; 6], MAC_B, 0x0806, &a)
}

// What B captures from A's kernel.
fn is_arp_reply_from_a(f: &[u8]) -> bool {
    f.len() >= 42 && f[12..14] == [0x08, 0x06] && f[20..22] == [0, 2] && f[28..32] == A4.octets()
}
fn is_na_for(f: &[u8], target: Ipv6Addr) -> bool {
    f.len() >= 78 && f[12..14] == [0x86, 0xdd] && f[20] == 58 && f[54] == 136 && f[62..78] == target.octets()
}
fn is_echo6_reply(f: &[u8], id: u16) -> bool {
    f.len() >= 62 && f[12..14] == [0x86, 0xdd] && f[20] == 58 && f[54] == 129 && f[58..60] == id.to_be_bytes()
}
fn is_echo4_reply(f: &[u8], id: u16) -> bool {
    f.len() >= 42 && f[12..14] == [0x08, 0x00] && f[23] == 1 && f[34] == 0 && f[38..40] == id.to_be_bytes()
}

fn xdp_shown(ns: &Netns) -> String {
    ns.ip(&["-d", "link", "show", DEV_A])
}

/// Whether `ip -d link show` output shows an XDP program (" xdp " or " xdpgeneric "
/// after the MTU, and a "prog/xdp id N" line).
fn has_xdp(shown: &str) -> bool {
    shown.contains(" xdp") || shown.contains("prog/xdp")
}

// ---- the scenario -----------------------------------------------------------------

fn scenario(tag: &str, mode: XdpMode) {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let before = resources();
    let n = Net::new(tag, 1);
    let (att, mut port) = n.a.run(|| {
        let att = XdpAttachment::attach_mode(DEV_A, &[a6()], &[A4], mode).expect("attach");
        let mut spec = PortSpec::new(DEV_A, 3, 0, 1);
        spec.ring_frames = 256;
        let port = att.open_port(&spec).expect("open_port");
        (att, port)
    });
    eprintln!("{tag}: mode {}, {} rx queue(s), zero-copy {}", att.mode(), att.rx_queues(), port.zero_copy());
    assert_eq!(att.mode(), mode.as_str());
    assert_eq!(att.rx_queues(), 1);
    assert_eq!(port.ifname(), DEV_A);
    let shown = xdp_shown(&n.a);
    let keyword = if mode == XdpMode::Native { " xdp " } else { " xdpgeneric " };
    let id = format!("prog/xdp id {} ", att.prog_id().unwrap());
    assert!(shown.contains(keyword) && shown.contains(&id), "ip link shows no {keyword:?} or {id:?}: {shown}");
    // Only one queue: worker 1 has none.
    let spec1 = PortSpec::new(DEV_A, 3, 1, 2);
    assert!(att.open_port(&spec1).is_err());
    // The queue is taken.
    assert!(n.a.run(|| att.open_port(&PortSpec::new(DEV_A, 3, 0, 1))).is_err());

    let raw = n.b.run(|| Raw::open(DEV_B));

    // -- what must reach sr6, interleaved with what must not.
    let mut steered = Vec::new();
    let mut send_steered = |f: Vec<u8>| {
        raw.send(&f);
        steered.push(f);
    };
    for i in 0..40u32 {
        send_steered(ether(MAC_A, MAC_B, 0x86dd, &udp6(b6(), far6(), format!("v6 transit {i}").as_bytes())));
        send_steered(ether(MAC_A, MAC_B, 0x0800, &udp4(B4, FAR4, format!("v4 transit {i}").as_bytes())));
    }
    // ICMPv6 that is not neighbour discovery (echo request) to a transit address.
    send_steered(ether(MAC_A, MAC_B, 0x86dd, &icmp6(b6(), far6(), 64, 128, &[0, 7, 0, 1])));
    // IPv6 with a routing header (SRH) to a transit address.
    let srh = [17, 2, 4, 0, 0, 0, 0, 0].iter().copied().chain(far6().octets()).collect::<Vec<u8>>();
    send_steered(ether(MAC_A, MAC_B, 0x86dd, &ipv6(b6(), far6(), 43, 64, srh, None)));

    // Not sr6's: the kernel's.
    raw.send(&arp_request(A4));
    let sol = v6("ff02::1:ff00:1");
    raw.send(&ether([0x33, 0x33, 0xff, 0, 0, 1], MAC_B, 0x86dd, &ns(b6(), sol, a6())));
    // Unicast NS to A's link-local (not a host6 address): only the ND rule passes it.
    raw.send(&ether(MAC_A, MAC_B, 0x86dd, &ns(ll_b(), ll_a(), ll_a())));
    // Unicast NS to a transit address: not sr6's either (the kernel drops it).
    raw.send(&ether(MAC_A, MAC_B, 0x86dd, &ns(b6(), far6(), far6())));
    raw.send(&ether(MAC_A, MAC_B, 0x86dd, &icmp6(b6(), a6(), 64, 128, &[0x51, 0x06, 0, 1, 1, 2, 3, 4])));
    raw.send(&ether(MAC_A, MAC_B, 0x0800, &echo4(B4, A4, 0x5104)));
    raw.send(&ether(MAC_A, MAC_B, 0x86dd, &udp6(b6(), a6(), b"to a host address")));
    raw.send(&ether(MAC_A, MAC_B, 0x0800, &udp4(B4, A4, b"to a host address")));
    raw.send(&ether([0x33, 0x33, 0, 0, 0, 1], MAC_B, 0x86dd, &udp6(b6(), v6("ff02::1"), b"multicast")));
    raw.send(&ether([1, 0, 0x5e, 0, 0, 1], MAC_B, 0x0800, &udp4(B4, Ipv4Addr::new(224, 0, 0, 1), b"multicast")));
    raw.send(&ether([0xff; 6], MAC_B, 0x0800, &udp4(B4, FAR4, b"broadcast")));
    let mut vlan = vec![0, 5, 0x86, 0xdd];
    vlan.extend_from_slice(&udp6(b6(), far6(), b"tagged"));
    raw.send(&ether(MAC_A, MAC_B, 0x8100, &vlan));
    // A last transit frame: everything before it has been through the program.
    send_steered(ether(MAC_A, MAC_B, 0x86dd, &udp6(b6(), far6(), b"last")));

    let got = port_collect(&mut port, steered.len(), Duration::from_secs(5), Duration::from_millis(300));
    assert_eq!(got.len(), steered.len(), "frames at the port");
    for (i, (g, s)) in got.iter().zip(&steered).enumerate() {
        assert_eq!(g, s, "frame {i} differs");
    }
    let st = port.stats();
    assert_eq!(st.rx, steered.len() as u64);
    assert_eq!((st.rx_oversized, st.rx_ring_full), (0, 0));

    // The kernel in A saw what the program left to it: its answers arrive in B.
    let answers = raw.collect(Duration::from_secs(5), |fs| {
        fs.iter().any(|f| is_arp_reply_from_a(f))
            && fs.iter().any(|f| is_na_for(f, a6()))
            && fs.iter().any(|f| is_na_for(f, ll_a()))
            && fs.iter().any(|f| is_echo6_reply(f, 0x5106))
            && fs.iter().any(|f| is_echo4_reply(f, 0x5104))
    });
    assert!(answers.iter().any(|f| is_arp_reply_from_a(f)), "no ARP reply from A");
    assert!(answers.iter().any(|f| is_na_for(f, a6())), "no NA for the multicast NS");
    assert!(answers.iter().any(|f| is_na_for(f, ll_a())), "no NA for the unicast NS");
    assert!(answers.iter().any(|f| is_echo6_reply(f, 0x5106)), "no echo reply from the host6 address");
    assert!(answers.iter().any(|f| is_echo4_reply(f, 0x5104)), "no echo reply from the host4 address");

    // -- transmit: byte for byte, in order, into B.
    let sent: Vec<Vec<u8>> = (0..100u32)
        .map(|i| ether(MAC_B, MAC_A, 0x86dd, &udp6(far6(), b6(), format!("sr6 tx {i}").as_bytes())))
        .collect();
    for f in &sent {
        assert!(port.tx_queue(f));
    }
    port.tx_flush().expect("tx_flush");
    let seen = capture_tx(&mut port, &raw, sent.len(), |f| f[6..12] == MAC_A && f.windows(6).any(|w| w == b"sr6 tx"));
    assert_eq!(seen.len(), sent.len(), "frames sent by the port");
    assert_eq!(seen, sent);

    // A full ring refuses and counts.
    let big = ether(MAC_B, MAC_A, 0x86dd, &udp6(far6(), b6(), b"sr6 fill"));
    let accepted = (0..300).filter(|_| port.tx_queue(&big)).count();
    assert_eq!(accepted, 256);
    assert_eq!(port.stats().tx_ring_full, 300 - 256);
    assert!(!port.tx_queue(&[0u8; 5000]), "a frame larger than a UMEM frame");
    port.tx_flush().unwrap();
    let seen = capture_tx(&mut port, &raw, 256, |f| f == big.as_slice());
    assert_eq!(seen.len(), 256);
    assert_eq!(port.stats().tx, 100 + 256);
    // Every transmit frame comes back through the completion ring: a full ring's worth
    // can be queued again (without a flush, only the earlier frames can free slots).
    let mut again = 0;
    let deadline = Instant::now() + Duration::from_secs(2);
    while again < 256 && Instant::now() < deadline {
        if port.tx_queue(&big) {
            again += 1;
        } else {
            std::thread::sleep(Duration::from_millis(1));
        }
    }
    assert_eq!(again, 256, "transmit frames leaked");
    port.tx_flush().unwrap();
    assert_eq!(capture_tx(&mut port, &raw, 256, |f| f == big.as_slice()).len(), 256);

    // -- host addresses can change at run time.
    att.set_host_addrs(&[], &[A4]).unwrap();
    let now_sr6 = ether(MAC_A, MAC_B, 0x86dd, &udp6(b6(), a6(), b"no longer a host address"));
    raw.send(&now_sr6);
    let got = port_collect(&mut port, 1, Duration::from_secs(5), Duration::from_millis(100));
    assert_eq!(got, vec![now_sr6]);
    att.set_host_addrs(&[a6()], &[A4]).unwrap();
    raw.send(&ether(MAC_A, MAC_B, 0x86dd, &udp6(b6(), a6(), b"a host address again")));
    assert!(port_collect(&mut port, 1, Duration::from_millis(300), Duration::ZERO).is_empty());

    // -- a frame larger than a UMEM frame: the kernel drops it before the RX ring and
    // says so in XDP_STATISTICS, which the port reports as rx_ring_full. (Generic mode
    // only: with native XDP, veth refuses an MTU that large.)
    if mode == XdpMode::Generic {
        n.a.ip(&["link", "set", DEV_A, "mtu", "9000"]);
        n.b.ip(&["link", "set", DEV_B, "mtu", "9000"]);
        let before = port.stats().rx_ring_full;
        let jumbo = ether(MAC_A, MAC_B, 0x86dd, &udp6(b6(), far6(), &[0x5a; 5000]));
        raw.send(&jumbo);
        let marker = ether(MAC_A, MAC_B, 0x86dd, &udp6(b6(), far6(), b"after the jumbo frame"));
        raw.send(&marker);
        let got = port_collect(&mut port, 1, Duration::from_secs(5), Duration::from_millis(100));
        assert_eq!(got, vec![marker]);
        assert_eq!(port.stats().rx_ring_full, before + 1);
        assert_eq!(port.xdp_statistics().unwrap().rx_dropped, 1);
    }

    // -- detach.
    drop(att);
    let shown = xdp_shown(&n.a);
    assert!(!has_xdp(&shown), "XDP still attached after drop: {shown}");
    drop(port);
    drop(raw);
    assert_eq!(resources(), before, "descriptors or ring mappings leaked");
}

#[test]
#[ignore = "needs root and network namespaces"]
fn native_mode_on_veth() {
    scenario("nat", XdpMode::Native);
}

#[test]
#[ignore = "needs root and network namespaces"]
fn generic_mode_on_veth() {
    scenario("gen", XdpMode::Generic);
}

/// Auto mode picks native on veth; with two queues, two workers share the traffic and
/// together see every frame exactly once; the program goes away with the attachment.
#[test]
#[ignore = "needs root and network namespaces"]
fn two_queues_two_workers() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let n = Net::new("mq", 2);
    let (att, ports) = n.a.run(|| {
        let att = XdpAttachment::attach(DEV_A, &[a6()], &[A4]).expect("attach");
        let ports: Vec<XskPort> = (0..att.rx_queues())
            .map(|w| {
                let mut spec = PortSpec::new(DEV_A, 1, w, att.rx_queues());
                spec.ring_frames = 512;
                att.open_port(&spec).expect("open_port")
            })
            .collect();
        (att, ports)
    });
    eprintln!("mq: mode {}, {} rx queue(s)", att.mode(), att.rx_queues());
    assert_eq!(att.mode(), "native");
    assert_eq!(att.rx_queues(), 2);
    let mut ports = ports;
    for (w, p) in ports.iter().enumerate() {
        assert_eq!(p.queue(), w as u32);
    }
    // Many flows from several sockets in B (each socket may pick its own TX queue).
    let mut sent = Vec::new();
    for s in 0..4u16 {
        let raw = n.b.run(|| Raw::open(DEV_B));
        for i in 0..50u16 {
            let u = udp6_from(b6(), far6(), 1000 + s * 100 + i, format!("mq {s} {i}").as_bytes());
            let f = ether(MAC_A, MAC_B, 0x86dd, &u);
            raw.send(&f);
            sent.push(f);
        }
    }
    let mut got = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut bufs: Vec<PacketBuf> = (0..64).map(|_| PacketBuf::new()).collect();
    let mut counts = vec![0usize; ports.len()];
    while got.len() < sent.len() && Instant::now() < deadline {
        let mut any = 0;
        for (w, p) in ports.iter_mut().enumerate() {
            let k = p.rx_burst(&mut bufs).unwrap();
            counts[w] += k;
            any += k;
            got.extend(bufs[..k].iter().map(|b| b.data().to_vec()));
        }
        if any == 0 {
            std::thread::sleep(Duration::from_millis(10));
        }
    }
    eprintln!("mq: frames per worker {counts:?}");
    got.sort();
    sent.sort();
    assert_eq!(got, sent);
    drop(att);
    let shown = xdp_shown(&n.a);
    assert!(!has_xdp(&shown), "XDP still attached after drop: {shown}");
}
