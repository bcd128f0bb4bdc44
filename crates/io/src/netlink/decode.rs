//! Decoding what the kernel sends: datagrams into messages, and the few fields sr6
//! uses of link and neighbour messages. Pure functions over bytes; none panics on any
//! input (the property tests below feed them random and mutated messages).

use std::net::IpAddr;

use netlink_packet_core::{
    NetlinkBuffer, NlaBuffer, NlasIterator, ParseableParametrized, NLM_F_ACK_TLVS, NLM_F_CAPPED,
};
use netlink_packet_route::link::{LinkAttribute, LinkFlags, LinkHeader};
use netlink_packet_route::neighbour::{NeighbourAddress, NeighbourAttribute, NeighbourFlags, NeighbourHeader};
use netlink_packet_route::AddressFamily;

use super::{LinkInfo, Neighbour};

/// Attribute types we decode (`<linux/if_link.h>`, `<linux/neighbour.h>`).
const IFLA_ADDRESS: u16 = 1;
const IFLA_IFNAME: u16 = 3;
const IFLA_MTU: u16 = 4;
const NDA_DST: u16 = 1;
const NDA_LLADDR: u16 = 2;
/// `NLMSGERR_ATTR_MSG` of `<linux/netlink.h>`: the extended-ACK text.
const NLMSGERR_ATTR_MSG: u16 = 1;
/// Lengths of `struct ifinfomsg`, `struct ndmsg`, `struct nlmsghdr`.
const IFINFOMSG_LEN: usize = 16;
const NDMSG_LEN: usize = 12;
const NLMSGHDR_LEN: usize = 16;

/// One netlink message of a datagram.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Frame<'a> {
    pub ty: u16,
    pub flags: u16,
    pub seq: u32,
    pub payload: &'a [u8],
}

/// The messages of one datagram, in order. A malformed header yields one `Err` (what
/// is wrong) and ends the iteration: the rest of the datagram cannot be framed.
pub(crate) fn frames(datagram: &[u8]) -> Frames<'_> {
    Frames { rest: datagram }
}

pub(crate) struct Frames<'a> {
    rest: &'a [u8],
}

impl<'a> Iterator for Frames<'a> {
    type Item = Result<Frame<'a>, String>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.rest.is_empty() {
            return None;
        }
        let rest = self.rest;
        match NetlinkBuffer::new_checked(rest) {
            Ok(buf) => {
                let len = buf.length() as usize;
                let frame = Frame {
                    ty: buf.message_type(),
                    flags: buf.flags(),
                    seq: buf.sequence_number(),
                    payload: buf.payload(),
                };
                // Messages are padded to 4 bytes; the last one may end unpadded.
                let next = len.saturating_add(3) & !3;
                self.rest = rest.get(next..).unwrap_or(&[]);
                Some(Ok(frame))
            }
            Err(e) => {
                self.rest = &[];
                Some(Err(format!("malformed netlink message from the kernel: {e}")))
            }
        }
    }
}

/// The `NLMSG_ERROR` (or `NLMSG_DONE`) payload: the errno (positive; 0 for an ACK) and
/// the extended-ACK message if any. `flags` are the message's own header flags. `None`
/// if the payload is too short to hold the error code.
pub(crate) fn error_payload(flags: u16, payload: &[u8]) -> Option<(i32, Option<String>)> {
    let code = i32::from_ne_bytes(payload.get(..4)?.try_into().ok()?);
    let errno = code.checked_neg().unwrap_or(i32::MAX).max(0);
    if flags & NLM_F_ACK_TLVS == 0 {
        return Some((errno, None));
    }
    // After the code: the request's header (capped) or the whole request, then TLVs.
    let tlvs_at = if flags & NLM_F_CAPPED != 0 {
        4 + NLMSGHDR_LEN
    } else {
        let orig_len = payload.get(4..8).and_then(|b| b.try_into().ok()).map(u32::from_ne_bytes).unwrap_or(0) as usize;
        4usize.saturating_add(orig_len.saturating_add(3) & !3)
    };
    let mut message = None;
    for nla in NlasIterator::new(payload.get(tlvs_at..).unwrap_or(&[])) {
        let Ok(nla) = nla else { break };
        if nla.kind() == NLMSGERR_ATTR_MSG {
            let text = nla.value().split(|&b| b == 0).next().unwrap_or(&[]);
            message = Some(String::from_utf8_lossy(text).into_owned());
        }
    }
    Some((errno, message))
}

/// The attributes after a fixed header, those that can be framed (the walk stops at the
/// first malformed one, keeping those before it).
fn attributes(payload: &[u8], header_len: usize) -> impl Iterator<Item = NlaBuffer<&[u8]>> {
    NlasIterator::new(payload.get(header_len..).unwrap_or(&[])).map_while(Result::ok)
}

/// A link from an `RTM_NEWLINK` payload; `None` if the header is short or the message
/// has no name.
pub(crate) fn link(payload: &[u8]) -> Option<LinkInfo> {
    let header = LinkHeader::parse(payload).ok()?;
    let family = header.interface_family;
    let mut name = None;
    let mut mac = [0u8; 6];
    let mut mtu = 0;
    for nla in attributes(payload, IFINFOMSG_LEN) {
        if !matches!(nla.kind(), IFLA_IFNAME | IFLA_ADDRESS | IFLA_MTU) {
            continue;
        }
        match LinkAttribute::parse_with_param(&nla, family) {
            Ok(LinkAttribute::IfName(n)) => name = Some(n),
            Ok(LinkAttribute::Address(a)) => {
                if let Ok(a) = <[u8; 6]>::try_from(a.as_slice()) {
                    mac = a;
                }
            }
            Ok(LinkAttribute::Mtu(m)) => mtu = m,
            _ => {}
        }
    }
    Some(LinkInfo {
        ifindex: header.index,
        name: name?,
        mac,
        up: header.flags.contains(LinkFlags::Up),
        carrier: header.flags.contains(LinkFlags::LowerUp),
        mtu,
        link_type: header.link_layer_type.into(),
    })
}

/// A neighbour from an `RTM_NEWNEIGH`/`RTM_DELNEIGH` payload; `None` unless it is an
/// IPv4 or IPv6 entry with a destination, or if it is a proxy entry.
pub(crate) fn neighbour(payload: &[u8]) -> Option<Neighbour> {
    let header = NeighbourHeader::parse(payload).ok()?;
    let family = header.family;
    if !matches!(family, AddressFamily::Inet | AddressFamily::Inet6) || header.flags.contains(NeighbourFlags::Proxy) {
        return None;
    }
    let mut addr = None;
    let mut mac = None;
    for nla in attributes(payload, NDMSG_LEN) {
        if !matches!(nla.kind(), NDA_DST | NDA_LLADDR) {
            continue;
        }
        match NeighbourAttribute::parse_with_param(&nla, family) {
            Ok(NeighbourAttribute::Destination(NeighbourAddress::Inet(a))) => addr = Some(IpAddr::V4(a)),
            Ok(NeighbourAttribute::Destination(NeighbourAddress::Inet6(a))) => addr = Some(IpAddr::V6(a)),
            Ok(NeighbourAttribute::LinkLayerAddress(l)) => mac = <[u8; 6]>::try_from(l.as_slice()).ok(),
            _ => {}
        }
    }
    Some(Neighbour {
        ifindex: header.ifindex,
        addr: addr?,
        mac,
        state: header.state.into(),
        flags: header.flags.bits(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::netlink::nud;
    use netlink_packet_core::{DefaultNla, Emitable, NLM_F_MULTIPART};
    use netlink_packet_route::link::{LinkLayerType, LinkMessage};
    use netlink_packet_route::neighbour::{NeighbourMessage, NeighbourState};
    use proptest::prelude::*;
    use std::net::{Ipv4Addr, Ipv6Addr};

    /// Wraps `payload` in a netlink header.
    fn message(ty: u16, flags: u16, seq: u32, payload: &[u8]) -> Vec<u8> {
        let len = 16 + payload.len();
        let mut v = Vec::with_capacity(len + 3);
        v.extend_from_slice(&(len as u32).to_ne_bytes());
        v.extend_from_slice(&ty.to_ne_bytes());
        v.extend_from_slice(&flags.to_ne_bytes());
        v.extend_from_slice(&seq.to_ne_bytes());
        v.extend_from_slice(&0u32.to_ne_bytes());
        v.extend_from_slice(payload);
        while v.len() % 4 != 0 {
            v.push(0);
        }
        v
    }

    fn nla(kind: u16, value: &[u8]) -> Vec<u8> {
        let mut v = Vec::new();
        v.extend_from_slice(&((4 + value.len()) as u16).to_ne_bytes());
        v.extend_from_slice(&kind.to_ne_bytes());
        v.extend_from_slice(value);
        while v.len() % 4 != 0 {
            v.push(0);
        }
        v
    }

    fn emit<T: Emitable>(m: &T) -> Vec<u8> {
        let mut v = vec![0; m.buffer_len()];
        m.emit(&mut v);
        v
    }

    fn link_payload() -> Vec<u8> {
        let mut m = LinkMessage::default();
        m.header.index = 7;
        m.header.link_layer_type = LinkLayerType::Ether;
        m.header.flags = LinkFlags::Up | LinkFlags::LowerUp | LinkFlags::Broadcast;
        m.attributes = vec![
            LinkAttribute::Other(DefaultNla::new(0x7ff0, vec![1, 2, 3])),
            LinkAttribute::IfName("eth7".into()),
            LinkAttribute::Address(vec![2, 0, 0, 0, 0, 7]),
            LinkAttribute::Mtu(9000),
        ];
        emit(&m)
    }

    fn neigh_payload(family: AddressFamily, dst: NeighbourAddress, ll: &[u8]) -> Vec<u8> {
        let mut m = NeighbourMessage::default();
        m.header.family = family;
        m.header.ifindex = 3;
        m.header.state = NeighbourState::Reachable;
        m.header.flags = NeighbourFlags::Router;
        m.attributes = vec![
            NeighbourAttribute::Other(DefaultNla::new(0x7ff1, vec![9; 5])),
            NeighbourAttribute::Destination(dst),
            NeighbourAttribute::LinkLayerAddress(ll.to_vec()),
        ];
        emit(&m)
    }

    #[test]
    fn link_fields_and_unknown_attributes() {
        let l = link(&link_payload()).unwrap();
        assert_eq!(
            l,
            LinkInfo {
                ifindex: 7,
                name: "eth7".into(),
                mac: [2, 0, 0, 0, 0, 7],
                up: true,
                carrier: true,
                mtu: 9000,
                link_type: crate::netlink::ARPHRD_ETHER,
            }
        );
        assert!(l.is_ethernet());
    }

    #[test]
    fn link_with_malformed_known_attribute_keeps_the_rest() {
        // An IFLA_MTU of 2 bytes (the library rejects it) and a 4-byte address.
        let mut p = link_payload()[..IFINFOMSG_LEN].to_vec();
        p.extend(nla(IFLA_MTU, &[1, 2]));
        p.extend(nla(IFLA_ADDRESS, &[1, 2, 3, 4]));
        p.extend(nla(IFLA_IFNAME, b"tun0\0"));
        let l = link(&p).unwrap();
        assert_eq!((l.name.as_str(), l.mtu, l.mac), ("tun0", 0, [0; 6]));
        // A truncated attribute ends the walk; what came before is kept.
        let mut q = p.clone();
        q.extend_from_slice(&[200, 0, 1, 0]);
        assert_eq!(link(&q).unwrap().name, "tun0");
        // No name: not a link we can use.
        assert_eq!(link(&p[..IFINFOMSG_LEN]), None);
        assert_eq!(link(&p[..5]), None);
    }

    #[test]
    fn neighbour_v4_v6_and_filters() {
        let v6: Ipv6Addr = "2001:db8::1".parse().unwrap();
        let p = neigh_payload(AddressFamily::Inet6, v6.into(), &[2, 1, 2, 3, 4, 5]);
        let n = neighbour(&p).unwrap();
        assert_eq!(
            n,
            Neighbour {
                ifindex: 3,
                addr: IpAddr::V6(v6),
                mac: Some([2, 1, 2, 3, 4, 5]),
                state: nud::REACHABLE,
                flags: 0x80,
            }
        );
        assert!(n.usable());
        let v4 = Ipv4Addr::new(192, 0, 2, 1);
        let n = neighbour(&neigh_payload(AddressFamily::Inet, v4.into(), &[1; 6])).unwrap();
        assert_eq!((n.addr, n.mac), (IpAddr::V4(v4), Some([1; 6])));
        // A link-layer address that is not 6 bytes (ip6gre, say): no MAC, not usable.
        let n = neighbour(&neigh_payload(AddressFamily::Inet, v4.into(), &[1; 4])).unwrap();
        assert_eq!(n.mac, None);
        assert!(!n.usable());
        // Bridge FDB entries share the neighbour messages: not ours.
        let fdb = neigh_payload(AddressFamily::Bridge, NeighbourAddress::Other(vec![1; 6]), &[1; 6]);
        assert_eq!(neighbour(&fdb), None);
        // A proxy entry.
        let mut m = NeighbourMessage::default();
        m.header.family = AddressFamily::Inet6;
        m.header.flags = NeighbourFlags::Proxy;
        m.attributes = vec![NeighbourAttribute::Destination(v6.into())];
        assert_eq!(neighbour(&emit(&m)), None);
        // No destination.
        assert_eq!(neighbour(&p[..NDMSG_LEN]), None);
        // A destination of the wrong length is skipped: no destination.
        let mut q = p[..NDMSG_LEN].to_vec();
        q.extend(nla(NDA_DST, &[1, 2, 3]));
        assert_eq!(neighbour(&q), None);
    }

    #[test]
    fn usable_states() {
        let mut n =
            Neighbour { ifindex: 1, addr: IpAddr::V4(Ipv4Addr::LOCALHOST), mac: Some([0; 6]), state: 0, flags: 0 };
        for (state, ok) in [
            (nud::NONE, false),
            (nud::INCOMPLETE, false),
            (nud::FAILED, false),
            (nud::REACHABLE, true),
            (nud::STALE, true),
            (nud::DELAY, true),
            (nud::PROBE, true),
            (nud::PERMANENT, true),
            (nud::NOARP, true),
        ] {
            n.state = state;
            assert_eq!(n.usable(), ok, "state {state:#x}");
        }
        n.mac = None;
        assert!(!n.usable());
    }

    #[test]
    fn frames_split_a_datagram() {
        let mut d = message(16, NLM_F_MULTIPART, 5, &link_payload());
        d.extend(message(3, NLM_F_MULTIPART, 5, &0i32.to_ne_bytes()));
        let f: Vec<_> = frames(&d).collect::<Result<_, _>>().unwrap();
        assert_eq!(f.len(), 2);
        assert_eq!((f[0].ty, f[0].seq, f[0].payload), (16, 5, &link_payload()[..]));
        assert_eq!((f[1].ty, f[1].payload.len()), (3, 4));
        // A length field beyond the datagram: one error, then nothing.
        let mut bad = d.clone();
        bad[0] = 0xff;
        bad[1] = 0xff;
        let r: Vec<_> = frames(&bad).collect();
        assert_eq!(r.len(), 1);
        assert!(r[0].as_ref().unwrap_err().contains("malformed"));
    }

    #[test]
    fn error_payload_with_and_without_extack() {
        assert_eq!(error_payload(0, &0i32.to_ne_bytes()), Some((0, None)));
        assert_eq!(error_payload(0, &(-19i32).to_ne_bytes()), Some((19, None)));
        assert_eq!(error_payload(0, &[1, 2]), None);
        // Capped: code, the request's 16-byte header, then the TLVs.
        let mut p = (-22i32).to_ne_bytes().to_vec();
        p.extend_from_slice(&[0; 16]);
        p.extend(nla(NLMSGERR_ATTR_MSG, b"Invalid ifindex\0"));
        let got = error_payload(NLM_F_CAPPED | NLM_F_ACK_TLVS, &p);
        assert_eq!(got, Some((22, Some("Invalid ifindex".into()))));
        // Uncapped: the whole request (24 bytes, as its length says) before the TLVs.
        let mut p = (-22i32).to_ne_bytes().to_vec();
        p.extend(message(28, 0, 1, &[0; 8]));
        p.extend(nla(NLMSGERR_ATTR_MSG, b"no\0"));
        assert_eq!(error_payload(NLM_F_ACK_TLVS, &p), Some((22, Some("no".into()))));
        // Nonsense codes do not overflow.
        assert_eq!(error_payload(0, &i32::MIN.to_ne_bytes()), Some((i32::MAX, None)));
        assert_eq!(error_payload(0, &5i32.to_ne_bytes()), Some((0, None)));
    }

    /// Every decoder over one datagram, as the socket code calls them.
    fn decode_all(d: &[u8]) {
        for f in frames(d).flatten() {
            let _ = link(f.payload);
            let _ = neighbour(f.payload);
            let _ = error_payload(f.flags, f.payload);
        }
    }

    fn valid_datagram() -> Vec<u8> {
        let v6: Ipv6Addr = "2001:db8::1".parse().unwrap();
        let mut d = message(16, 2, 1, &link_payload());
        d.extend(message(28, 2, 1, &neigh_payload(AddressFamily::Inet6, v6.into(), &[1; 6])));
        let mut e = (-1i32).to_ne_bytes().to_vec();
        e.extend_from_slice(&[0; 16]);
        e.extend(nla(NLMSGERR_ATTR_MSG, b"x\0"));
        d.extend(message(2, NLM_F_CAPPED | NLM_F_ACK_TLVS, 1, &e));
        d
    }

    proptest! {
        #[test]
        fn random_bytes_never_panic(d in proptest::collection::vec(any::<u8>(), 0..512)) {
            decode_all(&d);
            let _ = link(&d);
            let _ = neighbour(&d);
            let _ = error_payload(0x300, &d);
            let _ = error_payload(0x200, &d);
        }

        #[test]
        fn mutated_messages_never_panic(
            edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..8),
            cut in any::<prop::sample::Index>(),
        ) {
            let mut d = valid_datagram();
            for (i, b) in edits {
                let i = i.index(d.len());
                d[i] = b;
            }
            decode_all(&d);
            let cut = cut.index(d.len() + 1);
            decode_all(&d[..cut]);
        }
    }
}
