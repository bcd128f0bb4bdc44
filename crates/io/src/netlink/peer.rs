//! Which devices are veth pairs, and where each one's peer is: from `RTM_NEWLINK`'s
//! `IFLA_LINKINFO`/`IFLA_INFO_KIND` ("veth"), `IFLA_LINK` (the peer's ifindex) and
//! `IFLA_LINK_NETNSID` (present when the peer is in another network namespace), as
//! `ip -d link show` prints them. `sr6 run` uses it to warn about transmit checksum
//! offload on the peer (docs/cli.md).

use netlink_packet_core::NlasIterator;

const IFLA_IFNAME: u16 = 3;
const IFLA_LINK: u16 = 5;
const IFLA_LINKINFO: u16 = 18;
const IFLA_LINK_NETNSID: u16 = 37;
/// `IFLA_XDP` (linux/if_link.h), nesting `IFLA_XDP_ATTACHED` (an XDP_ATTACHED_* mode, 0: none).
const IFLA_XDP: u16 = 43;
const IFLA_XDP_ATTACHED: u16 = 2;
const IFLA_INFO_KIND: u16 = 1;
const IFINFOMSG_LEN: usize = 16;
/// The nested-attribute flag of an attribute's type.
const NLA_TYPE_MASK: u16 = 0x3fff;

/// A device and, for a veth, its peer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkPeer {
    pub ifindex: u32,
    pub name: String,
    /// `IFLA_INFO_KIND`: "veth", "bridge", ...; empty for a physical device.
    pub kind: String,
    /// `IFLA_LINK`: for a veth, the peer's ifindex (in `peer_netnsid`'s namespace).
    pub peer_ifindex: Option<u32>,
    /// `IFLA_LINK_NETNSID`: the peer is in another namespace (its id as seen from here).
    pub peer_netnsid: Option<i32>,
    /// `IFLA_XDP` / `IFLA_XDP_ATTACHED`: an XDP program is attached.
    pub xdp: bool,
}

impl LinkPeer {
    pub fn is_veth(&self) -> bool {
        self.kind == "veth"
    }
}

/// `RTM_NEWNSID` (linux/rtnetlink.h): the answer to `RTM_GETNSID`.
pub(crate) const RTM_NEWNSID: u16 = 88;
/// `NETNSA_NSID` (linux/net_namespace.h).
const NETNSA_NSID: u16 = 1;

/// The id of an `RTM_NEWNSID` payload (after its 4-byte `rtgenmsg`).
pub(crate) fn nsid(payload: &[u8]) -> Option<i32> {
    NlasIterator::new(payload.get(4..)?)
        .map_while(Result::ok)
        .find(|n| n.kind() & NLA_TYPE_MASK == NETNSA_NSID)
        .and_then(|n| u32_of(n.value()))
        .map(|x| x as i32)
}

fn u32_of(v: &[u8]) -> Option<u32> {
    Some(u32::from_ne_bytes(v.get(..4)?.try_into().ok()?))
}

/// A device from an `RTM_NEWLINK` payload; `None` if it has no name.
pub(crate) fn decode(payload: &[u8]) -> Option<LinkPeer> {
    let ifindex = u32_of(payload.get(4..8)?)?;
    let (mut name, mut kind, mut link, mut netnsid, mut xdp) = (None, String::new(), None, None, false);
    for nla in NlasIterator::new(payload.get(IFINFOMSG_LEN..)?).map_while(Result::ok) {
        let v = nla.value();
        match nla.kind() & NLA_TYPE_MASK {
            IFLA_IFNAME => name = Some(String::from_utf8_lossy(v).trim_end_matches('\0').to_string()),
            IFLA_LINK => link = u32_of(v),
            IFLA_LINK_NETNSID => netnsid = u32_of(v).map(|x| x as i32),
            IFLA_XDP => {
                for a in NlasIterator::new(v).map_while(Result::ok) {
                    if a.kind() & NLA_TYPE_MASK == IFLA_XDP_ATTACHED {
                        xdp = a.value().first().is_some_and(|m| *m != 0);
                    }
                }
            }
            IFLA_LINKINFO => {
                for info in NlasIterator::new(v).map_while(Result::ok) {
                    if info.kind() & NLA_TYPE_MASK == IFLA_INFO_KIND {
                        kind = String::from_utf8_lossy(info.value()).trim_end_matches('\0').to_string();
                    }
                }
            }
            _ => {}
        }
    }
    // A device is its own IFLA_LINK when it has no lower device; in another namespace
    // the same number is another device.
    let peer_ifindex = link.filter(|l| *l != 0 && (*l != ifindex || netnsid.is_some()));
    Some(LinkPeer { ifindex, name: name?, kind, peer_ifindex, peer_netnsid: netnsid, xdp })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nla(kind: u16, v: &[u8]) -> Vec<u8> {
        let mut b = ((4 + v.len()) as u16).to_ne_bytes().to_vec();
        b.extend_from_slice(&kind.to_ne_bytes());
        b.extend_from_slice(v);
        b.resize(b.len().div_ceil(4) * 4, 0);
        b
    }

    #[test]
    fn a_veth_with_its_peer_in_another_namespace() {
        // struct ifinfomsg (rtnetlink(7)): family, pad, type, index 9, flags, change.
        let mut p = vec![0u8; IFINFOMSG_LEN];
        p[4..8].copy_from_slice(&9u32.to_ne_bytes());
        p.extend(nla(IFLA_IFNAME, b"r2-r1\0"));
        p.extend(nla(IFLA_LINK, &4u32.to_ne_bytes()));
        p.extend(nla(IFLA_LINK_NETNSID, &0i32.to_ne_bytes()));
        p.extend(nla(IFLA_LINKINFO | 0x8000, &nla(IFLA_INFO_KIND, b"veth\0")));
        let l = decode(&p).unwrap();
        assert_eq!(
            l,
            LinkPeer {
                ifindex: 9,
                name: "r2-r1".into(),
                kind: "veth".into(),
                peer_ifindex: Some(4),
                peer_netnsid: Some(0),
                xdp: false,
            }
        );
        assert!(l.is_veth());
        // Loopback: its own link, no kind.
        let mut p = vec![0u8; IFINFOMSG_LEN];
        p[4..8].copy_from_slice(&1u32.to_ne_bytes());
        p.extend(nla(IFLA_IFNAME, b"lo\0"));
        p.extend(nla(IFLA_LINK, &1u32.to_ne_bytes()));
        let l = decode(&p).unwrap();
        assert_eq!((l.peer_ifindex, l.is_veth()), (None, false));
    }
}
