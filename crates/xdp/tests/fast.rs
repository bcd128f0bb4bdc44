//! The fast-path XDP program (`c/fast.c`), loaded by [`sr6_xdp::load_xdp`] and run by
//! the kernel with `BPF_PROG_TEST_RUN` (root: `#[ignore]`d, run with
//! `--include-ignored`): an IPv6 frame to a routed prefix leaves redirected, its hop
//! limit one lower and its Ethernet addresses the route's; anything else goes to the
//! general path (`bpf_redirect_map` of the XSK map, which falls back to `XDP_PASS`
//! when the queue has no socket, as here). The expected bytes are worked out here,
//! independently of the program.

const XDP_PASS: u32 = 2;
const XDP_REDIRECT: u32 = 4;

/// An Ethernet + IPv6 + 8-byte payload frame to `dst` with hop limit `hl`.
fn frame(dst: [u8; 16], hl: u8) -> Vec<u8> {
    let mut f = vec![0x02, 0, 0, 0, 0, 1, 0x02, 0, 0, 0, 0, 2, 0x86, 0xdd];
    f.extend_from_slice(&[0x60, 0, 0, 0, 0, 8, 59, hl]);
    f.extend_from_slice(&[0xfc, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]);
    f.extend_from_slice(&dst);
    f.extend_from_slice(&[0xab; 8]);
    f
}

fn addr(s: &str) -> [u8; 16] {
    s.parse::<std::net::Ipv6Addr>().unwrap().octets()
}

#[test]
#[ignore = "needs root (BPF_PROG_LOAD)"]
fn ipv6_transit_is_redirected_with_the_routes_header() {
    let l = sr6_xdp::load_xdp(sr6_xdp::FAST_OBJECT, "xdp").unwrap();
    let routes = l.map("routes6").unwrap();
    // fc00:2::/32 -> tx slot 3, Ethernet 02:..:aa <- 02:..:bb.
    let mut key = 32u32.to_ne_bytes().to_vec();
    key.extend_from_slice(&addr("fc00:2::"));
    let eth = [0x02, 0, 0, 0, 0, 0xaa, 0x02, 0, 0, 0, 0, 0xbb];
    let mut hop = 1u32.to_ne_bytes().to_vec();
    hop.extend_from_slice(&3u32.to_ne_bytes());
    hop.extend_from_slice(&eth);
    routes.update(&key, &hop).unwrap();
    // Slot 3 of the device map: the loopback device (ifindex 1; the test run redirects
    // nothing, but the program's redirect needs a device there).
    l.map("tx").unwrap().update(&3u32.to_ne_bytes(), &1u32.to_ne_bytes()).unwrap();

    let f = frame(addr("fc00:2::7"), 64);
    let (verdict, out) = sr6_io::bpf::test_run_out(&l.prog, &f).unwrap();
    assert_eq!(verdict, XDP_REDIRECT);
    let mut want = f.clone();
    want[..12].copy_from_slice(&eth);
    want[21] = 63;
    assert_eq!(out, want);

    // Not routed here, hop limit 1, not IPv6: the general path, unchanged.
    for f in [frame(addr("fc00:3::7"), 64), frame(addr("fc00:2::7"), 1), {
        let mut v = frame(addr("fc00:2::7"), 64);
        v[12..14].copy_from_slice(&[0x08, 0x00]);
        v
    }] {
        let (verdict, out) = sr6_io::bpf::test_run_out(&l.prog, &f).unwrap();
        assert_eq!((verdict, out), (XDP_PASS, f));
    }
}
