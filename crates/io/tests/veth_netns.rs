//! `sr6_io::veth` (where a device's veth peer is, and its transmit checksum and TCP
//! segmentation offloads) against the kernel, with `ethtool -k` as the oracle: a veth
//! pair across two namespaces and one inside a namespace, offloads on (a veth's
//! default) then off, and the warnings each backend gets.
//! Root only: `#[ignore]`d, run with `--include-ignored`.

use sr6_io::veth::{self, VethPeer};
use sr6_testnet::Netns;

/// `ethtool -k DEV`'s `feature` ("tx-checksumming", ...) in `ns`.
fn ethtool_k(ns: &Netns, dev: &str, feature: &str) -> bool {
    let out = ns.sh(&format!("ethtool -k {dev}"));
    let line = out.lines().find(|l| l.starts_with(&format!("{feature}:"))).expect("ethtool -k prints it");
    line.contains(": on")
}

fn ethtool_tx(ns: &Netns, dev: &str) -> bool {
    ethtool_k(ns, dev, "tx-checksumming")
}

fn ethtool_tso(ns: &Netns, dev: &str) -> bool {
    ethtool_k(ns, dev, "tcp-segmentation-offload")
}

#[test]
#[ignore = "needs root (network namespaces)"]
fn a_veth_peer_and_its_tx_checksum_offload_are_found_in_any_named_namespace() {
    let (a, b) = (Netns::new("csum-a"), Netns::new("csum-b"));
    a.add_veth("cs-a", &b, "cs-b", None);
    a.add_veth("cs-x", &a, "cs-y", None);
    a.sh("ip link set lo up");
    let peer = |dev: &'static str| a.run(move || veth::peer(dev).unwrap());
    let (on, tso) = (ethtool_tx(&b, "cs-b"), ethtool_tso(&b, "cs-b"));
    assert!(on && tso, "a veth starts with tx checksum and TCP segmentation offload on");
    assert_eq!(
        peer("cs-a"),
        Some(VethPeer {
            name: "cs-b".into(),
            netns: Some(b.name().to_string()),
            tx_csum: on,
            tso,
            gro: ethtool_k(&b, "cs-b", "generic-receive-offload"),
            xdp: false
        })
    );
    assert_eq!(
        peer("cs-x"),
        Some(VethPeer {
            name: "cs-y".into(),
            netns: None,
            tx_csum: ethtool_tx(&a, "cs-y"),
            tso: ethtool_tso(&a, "cs-y"),
            gro: ethtool_k(&a, "cs-y", "generic-receive-offload"),
            xdp: false
        })
    );
    // GRO (a veth's default: off) decides whether XDP may redirect into our end.
    assert!(!peer("cs-a").unwrap().takes_xdp_redirects());
    b.sh("ethtool -K cs-b gro on >/dev/null");
    assert!(ethtool_k(&b, "cs-b", "generic-receive-offload"));
    assert!(peer("cs-a").unwrap().gro && peer("cs-a").unwrap().takes_xdp_redirects());
    b.sh("ethtool -K cs-b gro off >/dev/null");
    assert!(!peer("cs-a").unwrap().takes_xdp_redirects());

    // AF_XDP: the partial checksums; AF_PACKET (completes them): the super-frames.
    let w = a.run(|| veth::offload_warning("cs-a", false)).expect("a warning while the peer offloads");
    assert!(w.contains(&format!("ip netns exec {} ethtool -K cs-b tx off", b.name())), "{w}");
    let w = a.run(|| veth::offload_warning("cs-a", true)).expect("a warning while the peer segments");
    assert!(w.contains(&format!("ip netns exec {} ethtool -K cs-b tso off", b.name())), "{w}");

    // TSO off, checksum offload still on: only AF_XDP has something to say.
    b.sh("ethtool -K cs-b tso off >/dev/null");
    assert!(!ethtool_tso(&b, "cs-b") && ethtool_tx(&b, "cs-b"));
    assert!(!peer("cs-a").unwrap().tso);
    assert_eq!(a.run(|| veth::offload_warning("cs-a", true)), None);
    assert!(a.run(|| veth::offload_warning("cs-a", false)).is_some());

    // Checksum offload off (the kernel segments in software then; `ethtool -k` may
    // still say TSO on: 6.18 keeps tx-tcp-accecn-segmentation): nothing to say.
    b.sh("ethtool -K cs-b tso on tx off >/dev/null");
    a.sh("ethtool -K cs-y tx off >/dev/null");
    assert!(!ethtool_tx(&b, "cs-b"));
    assert!(!peer("cs-a").unwrap().tx_csum);
    assert!(!peer("cs-x").unwrap().tx_csum);
    assert_eq!(a.run(|| veth::offload_warning("cs-a", false)), None);
    assert_eq!(a.run(|| veth::offload_warning("cs-a", true)), None);
    // Not a veth: nothing to say.
    assert_eq!(a.run(|| veth::peer("lo").unwrap()), None);
}
