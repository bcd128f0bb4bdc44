//! ICMPv6 (RFC 4443): the common header, its checksum over the IPv6
//! pseudo-header (RFC 4443 §2.3, RFC 8200 §8.1), and the error messages sr6
//! sends (Destination Unreachable §3.1, Packet Too Big §3.2, Time Exceeded
//! §3.3, Parameter Problem §3.4, including the SRv6 codes of RFC 8754 §4.3
//! and RFC 8986 §4.1.1).
//!
//! An [`Icmpv6Packet`] covers exactly one message: ICMPv6 has no length
//! field, so slice the buffer to the IPv6 payload first.

use std::net::Ipv6Addr;

use crate::bytes::{need, put_u16, put_u32, put_u8, slice, u16_at, u32_at, u8_at};
use crate::checksum;
use crate::proto::IPPROTO_ICMPV6;
use crate::Result;

/// Destination Unreachable (RFC 4443 §3.1).
pub const DST_UNREACH: u8 = 1;
/// Packet Too Big (RFC 4443 §3.2).
pub const PKT_TOO_BIG: u8 = 2;
/// Time Exceeded (RFC 4443 §3.3).
pub const TIME_EXCEEDED: u8 = 3;
/// Parameter Problem (RFC 4443 §3.4).
pub const PARAM_PROBLEM: u8 = 4;

/// Destination Unreachable code 0: no route to destination.
pub const DU_NO_ROUTE: u8 = 0;

/// Time Exceeded code 0: hop limit exceeded in transit.
pub const TE_HOP_LIMIT: u8 = 0;

/// Parameter Problem code 0: erroneous header field (RFC 4443 §3.4; the SRH
/// errors of RFC 8754 §4.3.1.1 use it, pointing at the field).
pub const PP_ERRONEOUS_HEADER: u8 = 0;
/// Parameter Problem code 2: unrecognized IPv6 option (RFC 4443 §3.4).
pub const PP_UNRECOGNIZED_OPTION: u8 = 2;
/// Parameter Problem code 4: SR Upper-layer Header Error (RFC 8754 §4.3.1.1,
/// RFC 8986 §4.1.1).
pub const PP_SR_UPPER_LAYER: u8 = 4;

/// Largest invoking-packet excerpt an error message carries: the whole error
/// packet must not exceed the IPv6 minimum MTU, 1280 bytes (RFC 4443 §2.4
/// (c)): 1280 - 40 (IPv6) - 8 (ICMPv6 header).
pub const MAX_INVOKING_LEN: usize = 1232;

mod field {
    //! RFC 4443 §2.1 and §3:
    //! ```text
    //!  0                   1                   2                   3
    //!  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
    //! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
    //! |     Type      |     Code      |          Checksum             |
    //! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
    //! |  Unused / MTU / Pointer / Identifier + Sequence Number        |
    //! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
    //! |    As much of invoking packet as possible without the ICMPv6  |
    //! +    packet exceeding the minimum IPv6 MTU  (or message body)   +
    //! ```
    pub const TYPE: usize = 0;
    pub const CODE: usize = 1;
    pub const CHECKSUM: usize = 2;
    pub const PARAM: usize = 4;
    pub const PAYLOAD: usize = 8;
}

/// Zero-copy view of one ICMPv6 message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Icmpv6Packet<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Icmpv6Packet<T> {
    /// Type, Code, Checksum and the 4-byte parameter.
    pub const HEADER_LEN: usize = 8;

    /// Wraps a buffer without checking it.
    pub const fn new_unchecked(buffer: T) -> Self {
        Icmpv6Packet { buffer }
    }

    /// Wraps a buffer and runs [`check_len`](Self::check_len).
    pub fn new_checked(buffer: T) -> Result<Self> {
        let p = Self::new_unchecked(buffer);
        p.check_len()?;
        Ok(p)
    }

    /// Checks that the 8-byte header is there (every ICMPv6 message of
    /// RFC 4443 and RFC 4861 has at least 8 bytes).
    pub fn check_len(&self) -> Result<()> {
        need(Self::HEADER_LEN, self.buffer.as_ref().len())
    }

    /// Type.
    pub fn msg_type(&self) -> u8 {
        u8_at(self.buffer.as_ref(), field::TYPE)
    }

    /// Code.
    pub fn code(&self) -> u8 {
        u8_at(self.buffer.as_ref(), field::CODE)
    }

    /// Checksum.
    pub fn checksum(&self) -> u16 {
        u16_at(self.buffer.as_ref(), field::CHECKSUM)
    }

    /// The 4 bytes after the checksum: Pointer (Parameter Problem), MTU
    /// (Packet Too Big), Identifier and Sequence Number (Echo), else unused.
    pub fn param(&self) -> u32 {
        u32_at(self.buffer.as_ref(), field::PARAM)
    }

    /// True for the error messages, Types 0 to 127 (RFC 4443 §2.1); no error
    /// is sent about one (RFC 4443 §2.4 (e.1)).
    pub fn is_error(&self) -> bool {
        self.msg_type() < 128
    }

    /// Bytes after the 8-byte header: the invoking packet of an error, the
    /// data of an Echo, the target and options of ND.
    pub fn payload(&self) -> &[u8] {
        let b = self.buffer.as_ref();
        slice(b, field::PAYLOAD, b.len())
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Icmpv6Packet<T> {
    /// Sets Type.
    pub fn set_msg_type(&mut self, v: u8) {
        put_u8(self.buffer.as_mut(), field::TYPE, v);
    }

    /// Sets Code.
    pub fn set_code(&mut self, v: u8) {
        put_u8(self.buffer.as_mut(), field::CODE, v);
    }

    /// Sets Checksum.
    pub fn set_checksum(&mut self, v: u16) {
        put_u16(self.buffer.as_mut(), field::CHECKSUM, v);
    }

    /// Sets the 4-byte parameter (Pointer, MTU, ...).
    pub fn set_param(&mut self, v: u32) {
        put_u32(self.buffer.as_mut(), field::PARAM, v);
    }

    /// Computes the checksum over the pseudo-header (RFC 8200 §8.1, Next
    /// Header 58) and the whole buffer (RFC 4443 §2.3).
    pub fn fill_checksum(&mut self, src: &Ipv6Addr, dst: &Ipv6Addr) {
        self.set_checksum(0);
        let b = self.buffer.as_ref();
        let sum = checksum::pseudo_header_v6(src, dst, b.len() as u32, IPPROTO_ICMPV6) + checksum::sum(b);
        self.set_checksum(checksum::fold(sum));
    }
}

impl<T: AsRef<[u8]>> AsRef<[u8]> for Icmpv6Packet<T> {
    fn as_ref(&self) -> &[u8] {
        self.buffer.as_ref()
    }
}

/// High-level representation of an ICMPv6 error header: type, code and the
/// 4-byte parameter. The invoking packet is the message body, already in the
/// buffer when the header is emitted (sr6 builds errors in place).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Icmpv6Repr {
    /// Type.
    pub msg_type: u8,
    /// Code.
    pub code: u8,
    /// Pointer, MTU or zero.
    pub param: u32,
}

impl Icmpv6Repr {
    /// Parameter Problem with `code` and `pointer`, the offset of the
    /// offending byte from the start of the invoking IPv6 header (RFC 4443 §3.4).
    pub const fn param_problem(code: u8, pointer: u32) -> Self {
        Icmpv6Repr { msg_type: PARAM_PROBLEM, code, param: pointer }
    }

    /// Time Exceeded, code 0: hop limit exceeded in transit (RFC 4443 §3.3).
    pub const fn hop_limit_exceeded() -> Self {
        Icmpv6Repr { msg_type: TIME_EXCEEDED, code: TE_HOP_LIMIT, param: 0 }
    }

    /// Packet Too Big with the MTU of the next-hop link (RFC 4443 §3.2).
    pub const fn packet_too_big(mtu: u32) -> Self {
        Icmpv6Repr { msg_type: PKT_TOO_BIG, code: 0, param: mtu }
    }

    /// Destination Unreachable with `code` (RFC 4443 §3.1).
    pub const fn dst_unreachable(code: u8) -> Self {
        Icmpv6Repr { msg_type: DST_UNREACH, code, param: 0 }
    }

    /// Reads type, code and parameter (runs `check_len`; the checksum is not
    /// verified).
    pub fn parse<T: AsRef<[u8]>>(packet: &Icmpv6Packet<T>) -> Result<Self> {
        packet.check_len()?;
        Ok(Icmpv6Repr { msg_type: packet.msg_type(), code: packet.code(), param: packet.param() })
    }

    /// Header length this repr emits: 8.
    pub const fn buffer_len(&self) -> usize {
        8
    }

    /// Writes the header into the first 8 bytes of `packet`, whose body (the
    /// invoking packet) is already in place after them, then the checksum over
    /// the pseudo-header and the whole buffer: an error built in place, with no
    /// copy of the invoking packet. The caller keeps the body within
    /// [`MAX_INVOKING_LEN`] bytes.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, src: &Ipv6Addr, dst: &Ipv6Addr, packet: &mut Icmpv6Packet<T>) {
        packet.set_msg_type(self.msg_type);
        packet.set_code(self.code);
        packet.set_param(self.param);
        packet.fill_checksum(src, dst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Error;
    use proptest::prelude::*;

    fn a(s: &str) -> Ipv6Addr {
        s.parse().unwrap()
    }

    /// The checksum verifies: the sum over pseudo-header and message, checksum
    /// field included, folds to 0 (RFC 4443 §2.3).
    fn verifies(msg: &[u8], src: &Ipv6Addr, dst: &Ipv6Addr) -> bool {
        checksum::fold(checksum::pseudo_header_v6(src, dst, msg.len() as u32, IPPROTO_ICMPV6) + checksum::sum(msg)) == 0
    }

    // scapy: bytes(IPv6(src="fc00:1::1", dst="2001:db8::1")
    //              / ICMPv6ParamProblem(code=0, ptr=43) / (bytes(range(16))))[40:]
    // (checksum CSUM, zeroed here)
    static BYTES: [u8; 24] =
        [0x04, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x2b, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15];
    static REPR: Icmpv6Repr = Icmpv6Repr { msg_type: PARAM_PROBLEM, code: PP_ERRONEOUS_HEADER, param: 43 };
    const CSUM: u16 = 0x9985;

    #[test]
    fn parse() {
        let p = Icmpv6Packet::new_checked(&BYTES[..]).unwrap();
        assert_eq!((p.msg_type(), p.code(), p.param(), p.checksum()), (4, 0, 43, 0));
        assert_eq!(p.payload().len(), 16);
        assert_eq!(Icmpv6Repr::parse(&p).unwrap(), REPR);
        assert_eq!(Icmpv6Repr::param_problem(0, 43), REPR);
    }

    #[test]
    fn emit() {
        // The Parameter Problem of BYTES, built over its invoking packet.
        let (src, dst) = (a("fc00:1::1"), a("2001:db8::1"));
        let mut b = BYTES;
        b[..8].fill(0xFF);
        assert_eq!(REPR.buffer_len(), 8);
        REPR.emit(&src, &dst, &mut Icmpv6Packet::new_unchecked(&mut b[..]));
        assert_eq!(Icmpv6Packet::new_unchecked(&b[..]).checksum(), CSUM);
        assert!(verifies(&b, &src, &dst));
        assert!(!verifies(&b, &a("fc00:1::2"), &dst));
        b[2..4].fill(0);
        assert_eq!(b, BYTES);
        // scapy: bytes(IPv6(src="fc00:1::1", dst="2001:db8::1")
        //              / ICMPv6TimeExceeded(code=0) / bytes(range(16)))[40:]
        let want: [u8; 24] =
            [0x03, 0x00, 0x9a, 0xb0, 0x00, 0x00, 0x00, 0x00, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15];
        let mut buf = want;
        buf[..8].fill(0xFF);
        Icmpv6Repr::hop_limit_exceeded().emit(&src, &dst, &mut Icmpv6Packet::new_unchecked(&mut buf[..]));
        assert_eq!(buf, want);
        assert_eq!(Icmpv6Repr::dst_unreachable(DU_NO_ROUTE), Icmpv6Repr { msg_type: 1, code: 0, param: 0 });
    }

    #[test]
    fn is_error() {
        assert!(Icmpv6Packet::new_unchecked(&BYTES[..]).is_error());
        assert!(Icmpv6Packet::new_unchecked(&[127u8][..]).is_error());
        // scapy: bytes(ICMPv6EchoRequest())[:1], bytes(ICMPv6ND_NS())[:1]
        assert!(!Icmpv6Packet::new_unchecked(&[128u8][..]).is_error());
        assert!(!Icmpv6Packet::new_unchecked(&[135u8][..]).is_error());
    }

    #[test]
    fn truncated_prefixes() {
        for n in 0..Icmpv6Packet::<&[u8]>::HEADER_LEN {
            assert_eq!(Icmpv6Packet::new_checked(&BYTES[..n]).unwrap_err(), Error::Truncated { need: 8, have: n });
        }
        // A buffer shorter than the header: the writes that fit, no panic.
        let mut small = [0u8; 3];
        let (s, d) = (a("fc00::1"), a("fc00::2"));
        REPR.emit(&s, &d, &mut Icmpv6Packet::new_unchecked(&mut small[..]));
        assert_eq!(small[..2], [PARAM_PROBLEM, PP_ERRONEOUS_HEADER]);
    }

    proptest! {
        #[test]
        fn round_trip(msg_type in any::<u8>(), code in any::<u8>(), param in any::<u32>(),
                      invoking in proptest::collection::vec(any::<u8>(), 0..MAX_INVOKING_LEN),
                      src in any::<[u8; 16]>(), dst in any::<[u8; 16]>()) {
            let repr = Icmpv6Repr { msg_type, code, param };
            let (s, d) = (Ipv6Addr::from(src), Ipv6Addr::from(dst));
            let mut buf = vec![0xFFu8; repr.buffer_len()];
            buf.extend_from_slice(&invoking);
            repr.emit(&s, &d, &mut Icmpv6Packet::new_unchecked(&mut buf[..]));
            let p = Icmpv6Packet::new_checked(&buf[..]).unwrap();
            prop_assert!(verifies(&buf, &s, &d));
            prop_assert_eq!(Icmpv6Repr::parse(&p).unwrap(), repr);
            prop_assert_eq!(p.payload(), &invoking[..]);
        }
    }
}
