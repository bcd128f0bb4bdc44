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
