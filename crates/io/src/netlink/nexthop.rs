//! Nexthop objects as the kernel holds them (`RTM_NEWNEXTHOP`, Linux 5.3+): what routes
//! name with `nhid N`, and what FRR's zebra installs its routes through. Decoded from the
//! bytes and written back as the `ip nexthop add` line that makes them, as
//! [`super::route`] does for routes.
//!
//! Decoded: the `nhmsg` header (family, protocol) and `NHA_ID`, `NHA_GROUP` (members and
//! weights), `NHA_GROUP_TYPE`, `NHA_BLACKHOLE`, `NHA_OIF`, `NHA_GATEWAY`,
//! `NHA_ENCAP_TYPE` and `NHA_FDB`; other attributes are skipped unparsed.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use super::route::{attrs, u32_of};

/// Length of `struct nhmsg`.
const NHMSG_LEN: usize = 8;
/// Length of `struct nexthop_grp`.
const NH_GRP_LEN: usize = 8;

/// `NHA_*` of `<linux/nexthop.h>`.
mod nha {
    pub const ID: u16 = 1;
    pub const GROUP: u16 = 2;
    pub const GROUP_TYPE: u16 = 3;
    pub const BLACKHOLE: u16 = 4;
    pub const OIF: u16 = 5;
    pub const GATEWAY: u16 = 6;
    pub const ENCAP_TYPE: u16 = 7;
    pub const FDB: u16 = 11;
}

/// What a nexthop object is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NexthopKind {
    /// One next hop: a gateway (or none: on-link) through a device.
    Single {
        gateway: Option<IpAddr>,
        oif: Option<u32>,
    },
    Blackhole,
    /// A multipath group: member ids and weights (1-256); `resilient` for a resilient
    /// group (`type resilient`).
    Group {
        members: Vec<(u32, u16)>,
        resilient: bool,
    },
}

/// A nexthop object of the kernel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelNexthop {
    pub id: u32,
    /// The family of a single or blackhole nexthop (a group's is unspecified: `None`).
    pub v6: Option<bool>,
    /// Who installed it (`RTPROT_*`: 4 static, 11 zebra, ...).
    pub protocol: u8,
    pub kind: NexthopKind,
    /// A lightweight tunnel on it (`LWTUNNEL_ENCAP_*`), which the line cannot say.
    pub encap: Option<u16>,
    /// A bridge FDB nexthop (`fdb`), for VXLAN, not for routes.
    pub fdb: bool,
}

/// The `RTM_NEWNEXTHOP` (or `RTM_DELNEXTHOP`) payload `payload` as a [`KernelNexthop`];
/// `Err` says what could not be read.
pub fn decode(payload: &[u8]) -> Result<KernelNexthop, String> {
    let h: &[u8; NHMSG_LEN] = payload
        .first_chunk()
        .ok_or_else(|| format!("a nexthop message of {} bytes is shorter than its header", payload.len()))?;
    let v6 = match i32::from(h[0]) {
        libc::AF_INET6 => Some(true),
        libc::AF_INET => Some(false),
        _ => None,
    };
    let mut id = None;
    let mut gateway = None;
    let mut oif = None;
    let mut blackhole = false;
    let mut members = None;
    let mut resilient = false;
    let mut encap = None;
    let mut fdb = false;
    for nla in attrs(&payload[NHMSG_LEN..]) {
        let v = nla.value();
        match nla.kind() {
            nha::ID => id = Some(u32_of(v, "NHA_ID")?),
            nha::OIF => oif = Some(u32_of(v, "NHA_OIF")?),
            nha::BLACKHOLE => blackhole = true,
            nha::FDB => fdb = true,
            nha::GROUP_TYPE => resilient = v.first_chunk().is_some_and(|b| u16::from_ne_bytes(*b) == 1),
            nha::ENCAP_TYPE => encap = v.first_chunk().map(|b| u16::from_ne_bytes(*b)),
            nha::GATEWAY => {
                gateway = Some(match v.len() {
                    4 => IpAddr::V4(Ipv4Addr::new(v[0], v[1], v[2], v[3])),
                    16 => {
                        let mut a = [0; 16];
                        a.copy_from_slice(v);
                        IpAddr::V6(Ipv6Addr::from(a))
                    }
                    n => return Err(format!("NHA_GATEWAY of {n} bytes")),
                })
            }
            nha::GROUP => {
                if v.len() % NH_GRP_LEN != 0 {
                    return Err(format!("NHA_GROUP of {} bytes", v.len()));
                }
                members = Some(
                    v.chunks_exact(NH_GRP_LEN)
                        .map(|g| (u32::from_ne_bytes([g[0], g[1], g[2], g[3]]), u16::from(g[4]) + 1))
                        .collect(),
                );
            }
            _ => {}
        }
    }
    let id = id.ok_or("a nexthop message without its id")?;
    let kind = match (members, blackhole) {
        (Some(members), _) => NexthopKind::Group { members, resilient },
        (None, true) => NexthopKind::Blackhole,
        (None, false) => NexthopKind::Single { gateway, oif },
    };
    Ok(KernelNexthop { id, v6, protocol: h[2], kind, encap, fdb })
}

impl KernelNexthop {
    /// The `ip nexthop add` line that makes this nexthop, as sr6's configuration reads
    /// it, with device names from `name`. `Err` for what sr6 does not have: a resilient
    /// group, an FDB nexthop, a nexthop with a tunnel, a device `name` does not know.
    pub fn to_line(&self, name: &dyn Fn(u32) -> Option<String>) -> Result<String, String> {
        if self.fdb {
            return Err(format!("nexthop {}: an FDB nexthop (for VXLAN), not for routes", self.id));
        }
        if let Some(t) = self.encap {
            return Err(format!("nexthop {}: a lightweight tunnel of type {t} on a nexthop object", self.id));
        }
        let fam = match self.v6 {
            Some(true) => "ip -6 nexthop add",
            _ => "ip nexthop add",
        };
        let mut s = format!("{fam} id {}", self.id);
        match &self.kind {
            NexthopKind::Single { gateway, oif } => {
                if let Some(g) = gateway {
                    s.push_str(&format!(" via {g}"));
                }
                let i = oif.ok_or_else(|| format!("nexthop {}: no device", self.id))?;
                let d = name(i).ok_or_else(|| format!("nexthop {}: no device of ifindex {i}", self.id))?;
                s.push_str(&format!(" dev {d}"));
            }
            NexthopKind::Blackhole => s.push_str(" blackhole"),
            NexthopKind::Group { resilient: true, .. } => {
                return Err(format!("nexthop {}: a resilient group, which sr6 does not have", self.id))
            }
            NexthopKind::Group { members, .. } => {
                let m: Vec<String> =
                    members.iter().map(|(id, w)| if *w == 1 { id.to_string() } else { format!("{id},{w}") }).collect();
                // A group has no family of its own (sr6's grammar refuses `-6` on one).
                s = format!("ip nexthop add id {} group {}", self.id, m.join("/"));
            }
        }
        Ok(s)
    }
}

#[cfg(test)]
mod tests {
    use super::super::route::nla;
    use super::*;
    use proptest::prelude::*;

    fn names(i: u32) -> Option<String> {
        Some(format!("eth{i}"))
    }

    #[test]
    fn single_blackhole_and_group() {
        let mut m = vec![libc::AF_INET6 as u8, 0, 11, 0, 0, 0, 0, 0];
        m.extend(nla(nha::ID, &7u32.to_ne_bytes()));
        m.extend(nla(nha::GATEWAY, &"fc00::2".parse::<Ipv6Addr>().unwrap().octets()));
        m.extend(nla(nha::OIF, &2u32.to_ne_bytes()));
        let n = decode(&m).unwrap();
        assert_eq!(n.protocol, 11);
        assert_eq!(n.to_line(&names).unwrap(), "ip -6 nexthop add id 7 via fc00::2 dev eth2");
        let mut m = vec![libc::AF_INET as u8, 0, 4, 0, 0, 0, 0, 0];
        m.extend(nla(nha::ID, &8u32.to_ne_bytes()));
        m.extend(nla(nha::BLACKHOLE, &[]));
        assert_eq!(decode(&m).unwrap().to_line(&names).unwrap(), "ip nexthop add id 8 blackhole");
        let mut g = Vec::new();
        for (id, w) in [(7u32, 1u8), (9, 3)] {
            g.extend(id.to_ne_bytes());
            g.extend([w - 1, 0, 0, 0]);
        }
        let mut m = vec![0, 0, 11, 0, 0, 0, 0, 0];
        m.extend(nla(nha::ID, &10u32.to_ne_bytes()));
        m.extend(nla(nha::GROUP, &g));
        assert_eq!(decode(&m).unwrap().to_line(&names).unwrap(), "ip nexthop add id 10 group 7/9,3");
        m.extend(nla(nha::GROUP_TYPE, &1u16.to_ne_bytes()));
        assert!(decode(&m).unwrap().to_line(&names).unwrap_err().contains("resilient"));
        assert!(decode(&[0; 8]).unwrap_err().contains("without its id"));
        assert!(decode(&[0; 3]).unwrap_err().contains("shorter"));
    }

    proptest! {
        #[test]
        fn never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
            let _ = decode(&bytes).map(|n| n.to_line(&names));
            let mut m = vec![10, 0, 0, 0, 0, 0, 0, 0];
            m.extend(bytes);
            let _ = decode(&m).map(|n| n.to_line(&names));
        }
    }
}
