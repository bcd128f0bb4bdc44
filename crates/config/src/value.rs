//! Values: numbers, addresses, prefixes, MAC addresses, device names, table ids.
//! Strict, like iproute2, and stricter where iproute2 would silently guess.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use sr6_core::spec::{Prefix, LOCAL_TABLE, MAIN_TABLE};

use crate::lex::Tok;
use crate::PErr;

/// The kernel's `default` routing table (`/etc/iproute2/rt_tables`).
pub const DEFAULT_TABLE: u32 = 253;
/// Segments in one `segs` list.
pub const MAX_SEGS: usize = 16;
/// `SEG6_HMAC_SECRET_LEN` of the kernel.
pub const MAX_SECRET: usize = 64;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fam {
    V4,
    V6,
}

impl Fam {
    pub fn of(a: &IpAddr) -> Fam {
        match a {
            IpAddr::V4(_) => Fam::V4,
            IpAddr::V6(_) => Fam::V6,
        }
    }
    pub fn of_prefix(p: &Prefix) -> Fam {
        match p {
            Prefix::V4(..) => Fam::V4,
            Prefix::V6(..) => Fam::V6,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Fam::V4 => "IPv4",
            Fam::V6 => "IPv6",
        }
    }
    pub fn flag(self) -> &'static str {
        match self {
            Fam::V4 => "-4",
            Fam::V6 => "-6",
        }
    }
}

/// An unsigned 32-bit number: decimal, or hexadecimal with `0x`. A decimal with a
/// leading zero is refused: iproute2 would read it as octal.
pub(crate) fn u32_of(t: &Tok, what: &str) -> Result<u32, PErr> {
    let s = t.text.as_str();
    let bad = || PErr::at(t, format!("invalid {what} `{s}`")).exp(format!("{what}: a number from 0 to 4294967295"));
    let (digits, radix) = match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(h) => (h, 16),
        None => (s, 10),
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return Err(bad());
    }
    if radix == 10 && digits.len() > 1 && digits.starts_with('0') {
        return Err(PErr::at(t, format!("ambiguous number `{s}`: iproute2 reads a leading 0 as octal"))
            .exp(format!("{what} without leading zeros (or 0x for hexadecimal)")));
    }
    u32::from_str_radix(digits, radix).map_err(|_| {
        PErr::at(t, format!("{what} `{s}` is out of range")).exp(format!("{what}: a number from 0 to 4294967295"))
    })
}

/// A routing table: a number, `main`, `local` or `default`. Table 0 (unspec) is refused.
pub(crate) fn table_of(t: &Tok) -> Result<u32, PErr> {
    let v = match t.text.as_str() {
        "main" => MAIN_TABLE,
        "local" => LOCAL_TABLE,
        "default" => DEFAULT_TABLE,
        _ => u32_of(t, "table id").map_err(|e| e.exp("a table id: a number from 1, or main, local, default"))?,
    };
    if v == 0 {
        return Err(PErr::at(t, "table 0 is the kernel's \"unspecified\" table")
            .exp("a table id: a number from 1, or main, local, default"));
    }
    Ok(v)
}

pub(crate) fn ip_of(t: &Tok) -> Result<IpAddr, PErr> {
    t.text
        .parse::<IpAddr>()
        .map_err(|_| PErr::at(t, format!("invalid IP address `{}`", t.text)).exp("an IPv4 or IPv6 address"))
}

pub(crate) fn v6_of(t: &Tok) -> Result<Ipv6Addr, PErr> {
    match t.text.parse::<IpAddr>() {
        Ok(IpAddr::V6(a)) => Ok(a),
        Ok(IpAddr::V4(_)) => Err(PErr::at(t, format!("`{}` is an IPv4 address", t.text)).exp("an IPv6 address")),
        Err(_) => Err(PErr::at(t, format!("invalid IPv6 address `{}`", t.text)).exp("an IPv6 address")),
    }
}

pub(crate) fn v4_of(t: &Tok) -> Result<Ipv4Addr, PErr> {
    match t.text.parse::<IpAddr>() {
        Ok(IpAddr::V4(a)) => Ok(a),
        Ok(IpAddr::V6(_)) => Err(PErr::at(t, format!("`{}` is an IPv6 address", t.text)).exp("an IPv4 address")),
        Err(_) => Err(PErr::at(t, format!("invalid IPv4 address `{}`", t.text)).exp("an IPv4 address")),
    }
}

/// `ADDR[/LEN]`; without `/LEN` the full length (a host). Host bits are allowed.
pub(crate) fn addr_len_of(t: &Tok) -> Result<(IpAddr, u8), PErr> {
    let (a, len) = match t.text.split_once('/') {
        Some((a, l)) => (a, Some(l)),
        None => (t.text.as_str(), None),
    };
    let addr = a
        .parse::<IpAddr>()
        .map_err(|_| PErr::at(t, format!("invalid address `{a}`")).exp("ADDR[/LEN] with an IPv4 or IPv6 address"))?;
    let max: u8 = if addr.is_ipv4() { 32 } else { 128 };
    let len = match len {
        None => max,
        Some(l) => {
            let ok = !l.is_empty()
                && l.len() <= 3
                && l.chars().all(|c| c.is_ascii_digit())
                && !(l.len() > 1 && l.starts_with('0'));
            match l.parse::<u8>() {
                Ok(v) if ok && v <= max => v,
                _ => {
                    return Err(PErr::at_pos(
                        t.line,
                        t.col + a.chars().count() + 1,
                        format!("invalid prefix length `{l}`"),
                    )
                    .exp(format!("a prefix length from 0 to {max}")))
                }
            }
        }
    };
    Ok((addr, len))
}

/// A route prefix `ADDR[/LEN]` whose host bits are zero.
pub(crate) fn prefix_of(t: &Tok) -> Result<Prefix, PErr> {
    let (addr, len) = addr_len_of(t)?;
    let (p, masked) = match addr {
        IpAddr::V6(a) => {
            let m = if len == 0 { 0 } else { u128::MAX << (128 - u32::from(len)) };
            let masked = Ipv6Addr::from(u128::from(a) & m);
            (Prefix::V6(a, len), Prefix::V6(masked, len))
        }
        IpAddr::V4(a) => {
            let m = if len == 0 { 0 } else { u32::MAX << (32 - u32::from(len)) };
            let masked = Ipv4Addr::from(u32::from(a) & m);
            (Prefix::V4(a, len), Prefix::V4(masked, len))
        }
    };
    if p != masked {
        return Err(PErr::at(t, format!("invalid prefix for the given prefix length: `{}` has host bits set", t.text))
            .exp(fmt_prefix(&masked)));
    }
    Ok(p)
}

pub(crate) fn fmt_prefix(p: &Prefix) -> String {
    match p {
        Prefix::V6(a, l) => format!("{a}/{l}"),
        Prefix::V4(a, l) => format!("{a}/{l}"),
    }
}

/// `aa:bb:cc:dd:ee:ff` (one or two hex digits per byte, as iproute2 reads them).
pub(crate) fn mac_of(t: &Tok) -> Result<[u8; 6], PErr> {
    let bad = || PErr::at(t, format!("invalid MAC address `{}`", t.text)).exp("a MAC address like 02:00:00:00:00:01");
    let mut mac = [0u8; 6];
    let mut n = 0;
    for part in t.text.split(':') {
        if n == 6 || part.is_empty() || part.len() > 2 || !part.chars().all(|c| c.is_ascii_hexdigit()) {
            return Err(bad());
        }
        mac[n] = u8::from_str_radix(part, 16).map_err(|_| bad())?;
        n += 1;
    }
    if n != 6 {
        return Err(bad());
    }
    Ok(mac)
}

/// A device name as the kernel accepts it (`dev_valid_name`): 1 to 15 bytes, not `.`
/// or `..`, without `/`, `:` or whitespace.
pub(crate) fn dev_of(t: &Tok) -> Result<String, PErr> {
    let s = t.text.as_str();
    let ok = !s.is_empty()
        && s.len() <= 15
        && s != "."
        && s != ".."
        && !s.chars().any(|c| c == '/' || c == ':' || c.is_whitespace() || c.is_control());
    if !ok {
        return Err(PErr::at(t, format!("invalid device name `{s}`"))
            .exp("a device name: 1 to 15 bytes, without `/`, `:` or spaces"));
    }
    Ok(s.to_string())
}

/// `S1,S2,...,Sn`: 1 to [`MAX_SEGS`] IPv6 addresses.
pub(crate) fn segs_of(t: &Tok) -> Result<Vec<Ipv6Addr>, PErr> {
    let mut segs = Vec::new();
    let mut off = 0;
    for part in t.text.split(',') {
        let col = t.col + off;
        off += part.chars().count() + 1;
        let a = match part.parse::<IpAddr>() {
            Ok(IpAddr::V6(a)) => a,
            Ok(IpAddr::V4(_)) => {
                return Err(PErr::at_pos(t.line, col, format!("segment `{part}` is an IPv4 address"))
                    .exp("IPv6 segments S1,S2,...,Sn"))
            }
            Err(_) if part.is_empty() => {
                return Err(PErr::at_pos(t.line, col, "empty segment in the list").exp("IPv6 segments S1,S2,...,Sn"))
            }
            Err(_) => {
                return Err(
                    PErr::at_pos(t.line, col, format!("invalid segment `{part}`")).exp("IPv6 segments S1,S2,...,Sn")
                )
            }
        };
        segs.push(a);
    }
    if segs.len() > MAX_SEGS {
        return Err(
            PErr::at(t, format!("{} segments is too many", segs.len())).exp(format!("at most {MAX_SEGS} segments"))
        );
    }
    Ok(segs)
}

/// An HMAC key id on a route: 1 to 2^32-1 (0 is not a key).
pub(crate) fn hmac_id_of(t: &Tok) -> Result<u32, PErr> {
    let v = u32_of(t, "HMAC key id")?;
    if v == 0 {
        return Err(PErr::at(t, "HMAC key id 0 is not valid").exp("an HMAC key id from 1 to 4294967295"));
    }
    Ok(v)
}

/// iproute2's `matches()`: `word` is a non-empty prefix of `keyword`.
pub(crate) fn matches(word: &str, keyword: &str) -> bool {
    !word.is_empty() && keyword.starts_with(word)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tok(s: &str) -> Tok {
        Tok { text: s.into(), line: 1, col: 10, width: s.chars().count() }
    }

    #[test]
    fn numbers() {
        assert_eq!(u32_of(&tok("0"), "n").unwrap(), 0);
        assert_eq!(u32_of(&tok("4294967295"), "n").unwrap(), u32::MAX);
        assert_eq!(u32_of(&tok("0x10"), "n").unwrap(), 16);
        for bad in ["", "-1", "+1", "010", "4294967296", "1e3", "0x", "12a"] {
            assert!(u32_of(&tok(bad), "n").is_err(), "{bad}");
        }
        assert_eq!(table_of(&tok("main")).unwrap(), 254);
        assert_eq!(table_of(&tok("local")).unwrap(), 255);
        assert!(table_of(&tok("0")).is_err());
        assert!(table_of(&tok("mian")).is_err());
    }

    #[test]
    fn prefixes() {
        assert_eq!(prefix_of(&tok("fc00::/16")).unwrap(), Prefix::V6("fc00::".parse().unwrap(), 16));
        assert_eq!(prefix_of(&tok("fc00::1")).unwrap(), Prefix::V6("fc00::1".parse().unwrap(), 128));
        assert_eq!(prefix_of(&tok("10.0.0.0/8")).unwrap(), Prefix::V4("10.0.0.0".parse().unwrap(), 8));
        assert_eq!(prefix_of(&tok("::/0")).unwrap(), Prefix::V6(Ipv6Addr::UNSPECIFIED, 0));
        let e = prefix_of(&tok("fc00::1/64")).unwrap_err();
        assert!(e.message.contains("invalid prefix for the given prefix length"));
        assert_eq!(e.expected.as_deref(), Some("fc00::/64"));
        let e = prefix_of(&tok("fc00::/129")).unwrap_err();
        assert_eq!(e.col, 10 + 7);
        for bad in ["10/8", "fc00::/", "fc00::/064", "10.0.0.0/33", "fc00::/-1", "x/1", "10.0.0.0/+8"] {
            assert!(prefix_of(&tok(bad)).is_err(), "{bad}");
        }
    }

    #[test]
    fn macs_devs_segs() {
        assert_eq!(mac_of(&tok("02:00:0a:0B:ff:1")).unwrap(), [2, 0, 10, 11, 255, 1]);
        for bad in ["02:00:00:00:00", "02:00:00:00:00:00:00", "02-00-00-00-00-01", "002:0:0:0:0:1", "g0:0:0:0:0:0"] {
            assert!(mac_of(&tok(bad)).is_err(), "{bad}");
        }
        assert!(dev_of(&tok("eth0.100")).is_ok());
        for bad in ["", "a/b", "a:b", ".", "..", "sixteen-chars-xx"] {
            assert!(dev_of(&tok(bad)).is_err(), "{bad}");
        }
        assert_eq!(segs_of(&tok("fc00::1,fc00::2")).unwrap().len(), 2);
        let e = segs_of(&tok("fc00::1,zz")).unwrap_err();
        assert_eq!(e.col, 10 + 8);
        assert!(segs_of(&tok("fc00::1,,fc00::2")).is_err());
        assert!(segs_of(&tok("10.0.0.1")).is_err());
        let many = vec!["fc00::1"; 17].join(",");
        assert!(segs_of(&tok(&many)).unwrap_err().message.contains("too many"));
        let sixteen = vec!["fc00::1"; 16].join(",");
        assert_eq!(segs_of(&tok(&sixteen)).unwrap().len(), 16);
    }
}
