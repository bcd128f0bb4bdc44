//! The kernel's interface addresses (`RTM_NEWADDR`, `RTM_DELADDR`: `struct ifaddrmsg`
//! and its attributes, `include/uapi/linux/if_addr.h`), as the `ip addr add` lines
//! that make them: what kernel-route mirroring takes besides the routes, so that an
//! address a routing daemon or an operator gives a device sr6 serves is sr6's too (its
//! connected prefix routed, the address its own).
//!
//! Only the header (family, prefix length, scope, device) and `IFA_LOCAL` /
//! `IFA_ADDRESS` are decoded; any other attribute is skipped unread.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use super::route::attrs;

/// `sizeof(struct ifaddrmsg)`: family, prefix length, flags, scope (one byte each),
/// then the device's index.
const IFADDRMSG_LEN: usize = 8;
/// `IFA_ADDRESS`: the address (for IPv4 on a point-to-point link, the peer's).
const IFA_ADDRESS: u16 = 1;
/// `IFA_LOCAL`: the local address, where it differs from `IFA_ADDRESS`.
const IFA_LOCAL: u16 = 2;
/// `RT_SCOPE_UNIVERSE`: a global address (not link- or host-scoped).
pub const SCOPE_UNIVERSE: u8 = 0;

/// One address of one device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelAddr {
    pub ifindex: u32,
    pub addr: IpAddr,
    pub prefix_len: u8,
    /// `RT_SCOPE_*`: 0 global, 253 link (`fe80::/10`), 254 host (the loopback's).
    pub scope: u8,
}

/// The `RTM_NEWADDR` (or `RTM_DELADDR`) payload `payload` as a [`KernelAddr`]; `Err`
/// says what could not be read. Families other than IPv4 and IPv6: `Err`.
pub fn decode(payload: &[u8]) -> Result<KernelAddr, String> {
    let h: &[u8; IFADDRMSG_LEN] = payload
        .first_chunk()
        .ok_or_else(|| format!("an address message of {} bytes is shorter than its header", payload.len()))?;
    let [family, prefix_len, _flags, scope, i0, i1, i2, i3] = *h;
    let v6 = match i32::from(family) {
        libc::AF_INET6 => true,
        libc::AF_INET => false,
        f => return Err(format!("an address of family {f}, neither IPv4 nor IPv6")),
    };
    if prefix_len > if v6 { 128 } else { 32 } {
        return Err(format!("an address with a prefix length of {prefix_len}"));
    }
    let (mut address, mut local) = (None, None);
    for nla in attrs(&payload[IFADDRMSG_LEN..]) {
        let v = nla.value();
        let a = match (v6, v.len()) {
            (true, 16) => {
                let mut b = [0u8; 16];
                b.copy_from_slice(v);
                IpAddr::V6(Ipv6Addr::from(b))
            }
            (false, 4) => IpAddr::V4(Ipv4Addr::new(v[0], v[1], v[2], v[3])),
            _ if matches!(nla.kind(), IFA_ADDRESS | IFA_LOCAL) => {
                return Err(format!("an address attribute of {} bytes", v.len()))
            }
            _ => continue,
        };
        match nla.kind() {
            IFA_ADDRESS => address = Some(a),
            IFA_LOCAL => local = Some(a),
            _ => {}
        }
    }
    let addr = local.or(address).ok_or("an address message without an address")?;
    Ok(KernelAddr { ifindex: u32::from_ne_bytes([i0, i1, i2, i3]), addr, prefix_len, scope })
}

impl KernelAddr {
    /// The `ip addr add` line that makes this address (`name` gives a device's name
    /// by index); `Err` says why sr6 does not take it: a link- or host-scoped
    /// address (sr6 has its link-local addresses from the devices' MACs, and the
    /// loopback is not a device it forwards on), or a device `name` does not know.
    pub fn to_line(&self, name: &dyn Fn(u32) -> Option<String>) -> Result<String, String> {
        if self.scope != SCOPE_UNIVERSE {
            return Err(format!("address {}/{} is not global (scope {})", self.addr, self.prefix_len, self.scope));
        }
        let dev = name(self.ifindex).ok_or_else(|| format!("no device of ifindex {}", self.ifindex))?;
        let family = if self.addr.is_ipv6() { "ip -6" } else { "ip" };
        Ok(format!("{family} addr add {}/{} dev {dev}", self.addr, self.prefix_len))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An `ifaddrmsg` with `attrs` (type, value), each padded to 4 bytes.
    fn msg(family: u8, len: u8, scope: u8, ifindex: u32, attrs: &[(u16, &[u8])]) -> Vec<u8> {
        let mut m = vec![family, len, 0, scope];
        m.extend_from_slice(&ifindex.to_ne_bytes());
        for (t, v) in attrs {
            m.extend_from_slice(&((4 + v.len()) as u16).to_ne_bytes());
            m.extend_from_slice(&t.to_ne_bytes());
            m.extend_from_slice(v);
            m.resize(m.len().next_multiple_of(4), 0);
        }
        m
    }

    #[test]
    fn addresses_and_their_lines() {
        let name = |i: u32| (i == 3).then(|| "eth0".to_string());
        let v6: Ipv6Addr = "2001:db8::1".parse().unwrap();
        let a = decode(&msg(libc::AF_INET6 as u8, 64, 0, 3, &[(IFA_ADDRESS, &v6.octets())])).unwrap();
        assert_eq!(a.to_line(&name).unwrap(), "ip -6 addr add 2001:db8::1/64 dev eth0");
        // IPv4: the local address, not the peer's.
        let m = msg(libc::AF_INET as u8, 24, 0, 3, &[(IFA_ADDRESS, &[192, 0, 2, 9]), (IFA_LOCAL, &[192, 0, 2, 1])]);
        assert_eq!(decode(&m).unwrap().to_line(&name).unwrap(), "ip addr add 192.0.2.1/24 dev eth0");
        let link = decode(&msg(libc::AF_INET6 as u8, 64, 253, 3, &[(IFA_ADDRESS, &v6.octets())])).unwrap();
        assert!(link.to_line(&name).unwrap_err().contains("not global"));
        let other = decode(&msg(libc::AF_INET6 as u8, 64, 0, 4, &[(IFA_ADDRESS, &v6.octets())])).unwrap();
        assert!(other.to_line(&name).unwrap_err().contains("ifindex 4"));
    }

    #[test]
    fn malformed_messages_are_errors() {
        assert!(decode(&[10, 64, 0]).unwrap_err().contains("shorter than its header"));
        assert!(decode(&msg(7, 8, 0, 1, &[])).unwrap_err().contains("family 7"));
        assert!(decode(&msg(libc::AF_INET as u8, 33, 0, 1, &[(IFA_LOCAL, &[1, 2, 3, 4])]))
            .unwrap_err()
            .contains("prefix length of 33"));
        assert!(decode(&msg(libc::AF_INET as u8, 24, 0, 1, &[(IFA_LOCAL, &[1, 2, 3])]))
            .unwrap_err()
            .contains("3 bytes"));
        assert!(decode(&msg(libc::AF_INET as u8, 24, 0, 1, &[])).unwrap_err().contains("without an address"));
    }
}
