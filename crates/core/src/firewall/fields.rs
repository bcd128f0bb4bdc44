//! What the rules read of a packet, found once per packet however many rules there
//! are: the upper-layer protocol and where it starts (nftables' `nft_set_pktinfo_ipv6`,
//! which ip6tables' rules use under Debian's default nft backend), and the first
//! Routing header (ip6t_srh's `ipv6_find_hdr(.., IPPROTO_ROUTING, ..)`). Both walks are
//! Linux's `ipv6_find_hdr` (net/ipv6/exthdrs_core.c), so that a rule decides as the
//! kernel's does on any packet, malformed ones included: a header that does not fit
//! ends the walk with nothing found, and a rule that needs it does not match.

use sr6_wire::{
    Ipv6Packet, IPPROTO_AH, IPPROTO_DSTOPTS, IPPROTO_FRAGMENT, IPPROTO_HOPOPTS, IPPROTO_NONE, IPPROTO_ROUTING,
};

/// Linux's `ipv6_ext_hdr`: the Next Header values the walk steps over.
fn ext_hdr(nh: u8) -> bool {
    matches!(nh, IPPROTO_HOPOPTS | IPPROTO_ROUTING | IPPROTO_FRAGMENT | IPPROTO_AH | IPPROTO_NONE | IPPROTO_DSTOPTS)
}

/// What `ipv6_find_hdr` looks for.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Target {
    /// The upper-layer header (`target < 0`), stopping at an AH (`IP6_FH_F_AUTH`, as
    /// nftables asks).
    Upper,
    /// The first header of this type.
    Header(u8),
}

/// Where a walk ended: the header's type, offset, and the fragment offset (bytes) when
/// it is behind a non-first fragment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Found {
    pub proto: u8,
    pub offset: usize,
    pub fragoff: u16,
}

/// Linux's `ipv6_find_hdr` over the IPv6 packet `d` (`d` ends where the packet does).
fn find(d: &[u8], target: Target) -> Option<Found> {
    let mut nh = *d.get(6)?;
    let mut start = Ipv6Packet::<&[u8]>::HEADER_LEN;
    loop {
        let found = target == Target::Header(nh);
        if !ext_hdr(nh) || nh == IPPROTO_NONE {
            return match target {
                Target::Upper => Some(Found { proto: nh, offset: start, fragoff: 0 }),
                Target::Header(_) if found => Some(Found { proto: nh, offset: start, fragoff: 0 }),
                Target::Header(_) => None,
            };
        }
        // The header's first two bytes: its Next Header and length.
        let hp = d.get(start..start + 2)?;
        let (next, len_field) = (*hp.first()?, usize::from(*hp.get(1)?));
        if nh == IPPROTO_ROUTING {
            // The Routing header's first four bytes must be there.
            d.get(start..start + 4)?;
        }
        let hdrlen = if nh == IPPROTO_FRAGMENT {
            let fo = d.get(start + 2..start + 4)?;
            let fragoff = u16::from_be_bytes([*fo.first()?, *fo.get(1)?]) & !0x7;
            if fragoff != 0 {
                // A non-first fragment: what follows is no header.
                if target == Target::Upper && (!ext_hdr(next) || next == IPPROTO_NONE) {
                    return Some(Found { proto: next, offset: start, fragoff });
                }
                if !found {
                    return None;
                }
                return Some(Found { proto: nh, offset: start, fragoff });
            }
            8
        } else if nh == IPPROTO_AH {
            if target == Target::Upper {
                return Some(Found { proto: nh, offset: start, fragoff: 0 });
            }
            (len_field + 2) << 2
        } else {
            (len_field + 1) << 3
        };
        if found {
            return Some(Found { proto: nh, offset: start, fragoff: 0 });
        }
        nh = next;
        start += hdrlen;
    }
}

/// The facts of one packet the rules read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Fields {
    pub src: u128,
    pub dst: u128,
    /// The upper-layer protocol, where it starts, and the fragment offset (`None`:
    /// the walk failed, and no rule on the protocol or ports matches).
    pub upper: Option<Found>,
    /// Offset of the first Routing header (any type), if the walk found one.
    pub routing: Option<usize>,
}

impl Fields {
    /// The fields of the IPv6 packet `d` (at least an IPv6 header, ending where the
    /// packet does).
    pub fn of(d: &[u8]) -> Option<Fields> {
        let ip = Ipv6Packet::new_checked(d).ok()?;
        Some(Fields {
            src: u128::from(ip.src_addr()),
            dst: u128::from(ip.dst_addr()),
            upper: find(d, Target::Upper),
            routing: find(d, Target::Header(IPPROTO_ROUTING)).map(|f| f.offset),
        })
    }
}

impl Fields {
    /// SERA's basic mode (thesis §4.3.1, the *Inner match* module): the fields of the
    /// original packet of an SRv6 packet `d` whose fields are `self`, with the bytes
    /// they index. SRv6 traffic is a packet with a Segment Routing Header (Routing Type
    /// 4, RFC 8754) that the walk reaches:
    /// - *encap* mode, the upper layer after it is IPv6 (41): the inner packet's own
    ///   fields;
    /// - *insert* mode, any other upper layer: the source is the packet's, the
    ///   destination the last segment, Segment List\[0\] (RFC 8754 §2: the original
    ///   destination), the protocol and ports the packet's.
    ///
    /// `None` (the rules read the packet as it is): no SRH, an SRH too short for its
    /// Segment List\[0\], an IPv4 packet inside (ip6tables rules have no IPv4 address
    /// to compare; an iptables rule set would judge it), or an inner IPv6 header that
    /// does not fit.
    pub fn original<'a>(&self, d: &'a [u8]) -> Option<(Fields, &'a [u8])> {
        let at = self.routing?;
        let srh = d.get(at..)?;
        if *srh.get(2)? != 4 {
            return None;
        }
        let upper = self.upper?;
        match upper.proto {
            sr6_wire::IPPROTO_IPV6 if upper.fragoff == 0 => {
                let inner = d.get(upper.offset..)?;
                Some((Fields::of(inner)?, inner))
            }
            // A fragment of an encapsulation, or IPv4 inside.
            sr6_wire::IPPROTO_IPV6 | sr6_wire::IPPROTO_IPV4 => None,
            _ => {
                let last = srh.get(8..24)?;
                let dst = u128::from_be_bytes(last.try_into().ok()?);
                Some((Fields { dst, ..*self }, d))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ipv6(nh: u8, rest: &[u8]) -> Vec<u8> {
        let mut v = vec![0u8; 40];
        v[0] = 0x60;
        v[4..6].copy_from_slice(&(rest.len() as u16).to_be_bytes());
        v[6] = nh;
        v.extend_from_slice(rest);
        v
    }

    /// An SRH of Segments Left 1 with Segment List [last, active] and `nh` after it.
    fn srh(nh: u8, last: u128, active: u128) -> Vec<u8> {
        let mut v = vec![nh, 4, 4, 1, 1, 0, 0, 0];
        v.extend_from_slice(&last.to_be_bytes());
        v.extend_from_slice(&active.to_be_bytes());
        v
    }

    #[test]
    fn original_packet_of_srv6_traffic() {
        let a = |s: &str| u128::from(s.parse::<std::net::Ipv6Addr>().unwrap());
        let (last, active, inner_src, inner_dst) = (a("fc00:3::53"), a("fc00:f::1"), a("fc00:bad::7"), a("fc00:9::1"));
        // Encap mode: the inner IPv6 packet's fields, indexed in it.
        let mut inner = ipv6(17, &[0x03, 0xe8, 0, 80, 0, 8, 0, 0]);
        inner[8..24].copy_from_slice(&u128::to_be_bytes(inner_src));
        inner[24..40].copy_from_slice(&u128::to_be_bytes(inner_dst));
        let mut rest = srh(41, last, active);
        rest.extend_from_slice(&inner);
        let d = ipv6(43, &rest);
        let f = Fields::of(&d).unwrap();
        let (o, od) = f.original(&d).unwrap();
        assert_eq!((o.src, o.dst), (inner_src, inner_dst));
        assert_eq!(o.upper, Some(Found { proto: 17, offset: 40, fragoff: 0 }));
        assert_eq!(od, &inner[..]);
        // Insert mode: the packet's source and upper layer, Segment List[0] as destination.
        let mut rest = srh(17, last, active);
        rest.extend_from_slice(&[0x03, 0xe8, 0, 80, 0, 8, 0, 0]);
        let d = ipv6(43, &rest);
        let f = Fields::of(&d).unwrap();
        let (o, od) = f.original(&d).unwrap();
        assert_eq!((o.src, o.dst, o.upper, o.routing), (f.src, last, f.upper, f.routing));
        assert_eq!(od, &d[..]);
        // No original packet: IPv4 inside, no SRH (a Type 0 Routing header), no routing
        // header at all, an SRH cut short before Segment List[0].
        let mut rest = srh(4, last, active);
        rest.extend_from_slice(&[0x45; 20]);
        assert_eq!(Fields::of(&ipv6(43, &rest)).unwrap().original(&ipv6(43, &rest)), None);
        let mut rt0 = srh(17, last, active);
        rt0[2] = 0;
        let d = ipv6(43, &rt0);
        assert_eq!(Fields::of(&d).unwrap().original(&d), None);
        let d = ipv6(17, &[0; 8]);
        assert_eq!(Fields::of(&d).unwrap().original(&d), None);
        let cut = &srh(17, last, active)[..12];
        let d = ipv6(43, cut);
        assert_eq!(Fields::of(&d).unwrap().original(&d), None);
    }

    #[test]
    fn walks_like_ipv6_find_hdr() {
        // Hop-by-Hop (8 bytes) -> Routing (24 bytes) -> UDP.
        let mut rest = vec![43, 0, 0, 0, 0, 0, 0, 0];
        rest.extend_from_slice(&[17, 2, 4, 0, 0, 0, 0, 0]);
        rest.extend_from_slice(&[0; 16]);
        rest.extend_from_slice(&[0; 8]);
        let d = ipv6(0, &rest);
        let f = Fields::of(&d).unwrap();
        assert_eq!(f.routing, Some(48));
        assert_eq!(f.upper, Some(Found { proto: 17, offset: 72, fragoff: 0 }));
        // Truncated inside the Routing header's first 4 bytes: nothing found.
        let d = ipv6(0, &rest[..10]);
        let f = Fields::of(&d).unwrap();
        assert_eq!((f.routing, f.upper), (None, None));
        // A non-first fragment: the protocol after it, no Routing header behind it.
        let d = ipv6(44, &[17, 0, 0x00, 0x10, 0, 0, 0, 1, 0, 0]);
        let f = Fields::of(&d).unwrap();
        assert_eq!(f.upper, Some(Found { proto: 17, offset: 40, fragoff: 16 }));
        assert_eq!(f.routing, None);
        // An AH is the upper layer for nftables.
        let d = ipv6(51, &[17, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(Fields::of(&d).unwrap().upper.map(|u| u.proto), Some(51));
        // No Next Header.
        let d = ipv6(59, &[]);
        assert_eq!(Fields::of(&d).unwrap().upper.map(|u| u.proto), Some(59));
    }
}
