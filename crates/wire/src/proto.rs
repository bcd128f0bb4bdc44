//! IP protocol numbers / IPv6 Next Header values used by sr6 (IANA "Assigned
//! Internet Protocol Numbers"; RFC 8200 §4 for the extension headers,
//! RFC 8986 §10.1 for 143 = Ethernet).

/// IPv6 Hop-by-Hop Options (RFC 8200 §4.3).
pub const IPPROTO_HOPOPTS: u8 = 0;
/// ICMP for IPv4 (RFC 792).
pub const IPPROTO_ICMP: u8 = 1;
/// IPv4 encapsulation (RFC 2003), the payload of End.DX4/End.DT4.
pub const IPPROTO_IPV4: u8 = 4;
/// UDP (RFC 768).
pub const IPPROTO_UDP: u8 = 17;
/// IPv6 encapsulation (RFC 2473), the payload of End.DX6/End.DT6.
pub const IPPROTO_IPV6: u8 = 41;
/// Routing header (RFC 8200 §4.4); type 4 is the SRH (RFC 8754).
pub const IPPROTO_ROUTING: u8 = 43;
/// Fragment header (RFC 8200 §4.5).
pub const IPPROTO_FRAGMENT: u8 = 44;
/// Authentication Header (RFC 4302).
pub const IPPROTO_AH: u8 = 51;
/// ICMPv6 (RFC 4443).
pub const IPPROTO_ICMPV6: u8 = 58;
/// No Next Header (RFC 8200 §4.7).
pub const IPPROTO_NONE: u8 = 59;
/// Destination Options (RFC 8200 §4.6).
pub const IPPROTO_DSTOPTS: u8 = 60;
/// Ethernet (RFC 8986 §10.1), the payload of End.DX2 and H.Encaps.L2.
pub const IPPROTO_ETHERNET: u8 = 143;
