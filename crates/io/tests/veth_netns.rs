//! `sr6_io::veth` (where a device's veth peer is, and its transmit checksum offload)
//! against the kernel, with `ethtool -k` as the oracle: a veth pair across two
//! namespaces and one inside a namespace, offload on (a veth's default) then off.
//! Root only: `#[ignore]`d, run with `--include-ignored`.

use sr6_io::veth::{self, VethPeer};
use sr6_testnet::Netns;

/// `ethtool -k DEV`'s "tx-checksumming" in `ns`.
fn ethtool_tx(ns: &Netns, dev: &str) -> bool {
    let out = ns.sh(&format!("ethtool -k {dev}"));
    let line = out.lines().find(|l| l.starts_with("tx-checksumming:")).expect("ethtool -k prints tx-checksumming");
    line.contains(": on")
}

#[test]
#[ignore = "needs root (network namespaces)"]
fn a_veth_peer_and_its_tx_checksum_offload_are_found_in_any_named_namespace() {
    let (a, b) = (Netns::new("csum-a"), Netns::new("csum-b"));
    a.add_veth("cs-a", &b, "cs-b", None);
    a.add_veth("cs-x", &a, "cs-y", None);
    a.sh("ip link set lo up");
    let peer = |dev: &'static str| a.run(move || veth::peer(dev).unwrap());
    let on = ethtool_tx(&b, "cs-b");
    assert!(on, "a veth starts with tx checksum offload on");
    assert_eq!(peer("cs-a"), Some(VethPeer { name: "cs-b".into(), netns: Some(b.name().to_string()), tx_csum: on }));
    assert_eq!(peer("cs-x"), Some(VethPeer { name: "cs-y".into(), netns: None, tx_csum: ethtool_tx(&a, "cs-y") }));
    let w = a.run(|| veth::checksum_warning("cs-a")).expect("a warning while the peer offloads");
    assert!(w.contains(&format!("ip netns exec {} ethtool -K cs-b tx off", b.name())), "{w}");

    b.sh("ethtool -K cs-b tx off >/dev/null");
    a.sh("ethtool -K cs-y tx off >/dev/null");
    assert!(!ethtool_tx(&b, "cs-b"));
    assert!(!peer("cs-a").unwrap().tx_csum);
    assert!(!peer("cs-x").unwrap().tx_csum);
    assert_eq!(a.run(|| veth::checksum_warning("cs-a")), None);
    // Not a veth: nothing to say.
    assert_eq!(a.run(|| veth::peer("lo").unwrap()), None);
}
