//! ICMPv6 (RFC 4443): the common header, its checksum over the IPv6
//! pseudo-header (RFC 4443 §2.3, RFC 8200 §8.1), and the error messages sr6
//! sends (Destination Unreachable §3.1, Packet Too Big §3.2, Time Exceeded
//! §3.3, Parameter Problem §3.4, including the SRv6 codes of RFC 8754 §4.3
//! and RFC 8986 §4.1.1).
//!
//! An [`Icmpv6Packet`] covers exactly one message: ICMPv6 has no length
//! field, so slice the buffer to the IPv6 payload first.

use std::net::Ipv6Addr;

use crate::bytes::{copy_in, need, put_u16, put_u32, put_u8, slice, slice_mut, u16_at, u32_at, u8_at};
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
/// Echo Request (RFC 4443 §4.1).
pub const ECHO_REQUEST: u8 = 128;
/// Echo Reply (RFC 4443 §4.2).
pub const ECHO_REPLY: u8 = 129;
/// Neighbor Solicitation (RFC 4861 §4.3).
pub const NEIGHBOR_SOLICIT: u8 = 135;
/// Neighbor Advertisement (RFC 4861 §4.4).
pub const NEIGHBOR_ADVERT: u8 = 136;

/// Destination Unreachable code 0: no route to destination.
pub const DU_NO_ROUTE: u8 = 0;
/// Destination Unreachable code 1: communication administratively prohibited.
pub const DU_ADMIN_PROHIBITED: u8 = 1;
/// Destination Unreachable code 3: address unreachable.
pub const DU_ADDR_UNREACH: u8 = 3;
/// Destination Unreachable code 4: port unreachable.
pub const DU_PORT_UNREACH: u8 = 4;

/// Time Exceeded code 0: hop limit exceeded in transit.
pub const TE_HOP_LIMIT: u8 = 0;
/// Time Exceeded code 1: fragment reassembly time exceeded.
pub const TE_FRAG_REASSEMBLY: u8 = 1;

/// Parameter Problem code 0: erroneous header field (RFC 4443 §3.4; the SRH
/// errors of RFC 8754 §4.3.1.1 use it, pointing at the field).
pub const PP_ERRONEOUS_HEADER: u8 = 0;
/// Parameter Problem code 1: unrecognized Next Header type (RFC 4443 §3.4;
/// unknown Routing Type with Segments Left != 0, RFC 8200 §4.4).
pub const PP_UNRECOGNIZED_NH: u8 = 1;
/// Parameter Problem code 2: unrecognized IPv6 option (RFC 4443 §3.4).
pub const PP_UNRECOGNIZED_OPTION: u8 = 2;
/// Parameter Problem code 3: IPv6 first fragment has incomplete header chain (RFC 7112 §5).
pub const PP_FIRST_FRAGMENT_INCOMPLETE: u8 = 3;
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

    /// Gives the buffer back.
    pub fn into_inner(self) -> T {
        self.buffer
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

    /// Echo Identifier (high half of `param`).
    pub fn echo_ident(&self) -> u16 {
        u16_at(self.buffer.as_ref(), field::PARAM)
    }

    /// Echo Sequence Number (low half of `param`).
    pub fn echo_seq(&self) -> u16 {
        u16_at(self.buffer.as_ref(), field::PARAM + 2)
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

    /// True when the checksum over the pseudo-header and the whole buffer
    /// verifies (RFC 4443 §2.3).
    pub fn verify_checksum(&self, src: &Ipv6Addr, dst: &Ipv6Addr) -> bool {
        let b = self.buffer.as_ref();
        b.len() >= Self::HEADER_LEN && checksum::fold(sum_with_pseudo(src, dst, b)) == 0
    }
}

fn sum_with_pseudo(src: &Ipv6Addr, dst: &Ipv6Addr, msg: &[u8]) -> u32 {
    checksum::pseudo_header_v6(src, dst, msg.len() as u32, IPPROTO_ICMPV6) + checksum::sum(msg)
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

    /// Mutable bytes after the header.
    pub fn payload_mut(&mut self) -> &mut [u8] {
        let b = self.buffer.as_mut();
        let end = b.len();
        slice_mut(b, field::PAYLOAD, end)
    }

    /// Computes the checksum over the pseudo-header and the whole buffer.
    pub fn fill_checksum(&mut self, src: &Ipv6Addr, dst: &Ipv6Addr) {
        self.set_checksum(0);
        let c = checksum::fold(sum_with_pseudo(src, dst, self.buffer.as_ref()));
        self.set_checksum(c);
    }
}

impl<T: AsRef<[u8]>> AsRef<[u8]> for Icmpv6Packet<T> {
    fn as_ref(&self) -> &[u8] {
        self.buffer.as_ref()
    }
}

/// High-level representation of an ICMPv6 error message: type, code and
/// the 4-byte parameter; the invoking packet is passed to `emit`.
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

    /// Destination Unreachable with `code` (RFC 4443 §3.1).
    pub const fn dst_unreachable(code: u8) -> Self {
        Icmpv6Repr { msg_type: DST_UNREACH, code, param: 0 }
    }

    /// Packet Too Big with the next-hop `mtu` (RFC 4443 §3.2).
    pub const fn packet_too_big(mtu: u32) -> Self {
        Icmpv6Repr { msg_type: PKT_TOO_BIG, code: 0, param: mtu }
    }

    /// True for the error types (0..=127, RFC 4443 §2.1).
    pub const fn is_error(&self) -> bool {
        self.msg_type < 128
    }

    /// Reads type, code and parameter (runs `check_len`; verify the checksum
    /// with [`Icmpv6Packet::verify_checksum`]).
    pub fn parse<T: AsRef<[u8]>>(packet: &Icmpv6Packet<T>) -> Result<Self> {
        packet.check_len()?;
        Ok(Icmpv6Repr { msg_type: packet.msg_type(), code: packet.code(), param: packet.param() })
    }

    /// Message length when `invoking_len` bytes of invoking packet are
    /// offered: `8 + min(invoking_len, MAX_INVOKING_LEN)`.
    pub const fn buffer_len(&self, invoking_len: usize) -> usize {
        let n = if invoking_len < MAX_INVOKING_LEN { invoking_len } else { MAX_INVOKING_LEN };
        8 + n
    }

    /// Writes the message into the start of `packet`: header, then as much of
    /// `invoking` as fits in the buffer and in [`MAX_INVOKING_LEN`], then the
    /// checksum over exactly those bytes. Returns the message length (the
    /// IPv6 Payload Length to use).
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(
        &self,
        src: &Ipv6Addr,
        dst: &Ipv6Addr,
        invoking: &[u8],
        packet: &mut Icmpv6Packet<T>,
    ) -> usize {
        packet.set_msg_type(self.msg_type);
        packet.set_code(self.code);
        packet.set_checksum(0);
        packet.set_param(self.param);
        let offered = slice(invoking, 0, invoking.len().min(MAX_INVOKING_LEN));
        let b = packet.buffer.as_mut();
        let n = Icmpv6Packet::<&[u8]>::HEADER_LEN + copy_in(b, field::PAYLOAD, offered);
        let n = n.min(b.len());
        let c = checksum::fold(sum_with_pseudo(src, dst, slice(b, 0, n)));
        put_u16(b, field::CHECKSUM, c);
        n
    }

    /// Writes the header into the first 8 bytes of `packet`, whose body (the
    /// invoking packet) is already in place after them, then the checksum over
    /// the pseudo-header and the whole buffer: an error built in place, with no
    /// copy of the invoking packet. The caller keeps the buffer within
    /// [`MAX_INVOKING_LEN`] + 8 bytes.
    pub fn emit_in_place<T: AsRef<[u8]> + AsMut<[u8]>>(
        &self,
        src: &Ipv6Addr,
        dst: &Ipv6Addr,
        packet: &mut Icmpv6Packet<T>,
    ) {
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

    // scapy: bytes(IPv6(src="fc00:1::1", dst="2001:db8::1")
    //              / ICMPv6ParamProblem(code=0, ptr=43) / (bytes(range(16))))[40:]
    static BYTES: [u8; 24] =
        [0x04, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x2b, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15];
    static REPR: Icmpv6Repr = Icmpv6Repr { msg_type: PARAM_PROBLEM, code: PP_ERRONEOUS_HEADER, param: 43 };
    const CSUM: u16 = 0x9985;

    #[test]
    fn parse() {
        let p = Icmpv6Packet::new_checked(&BYTES[..]).unwrap();
        assert_eq!((p.msg_type(), p.code(), p.param()), (4, 0, 43));
        assert_eq!(p.payload().len(), 16);
        assert_eq!(Icmpv6Repr::parse(&p).unwrap(), REPR);
        assert_eq!(Icmpv6Repr::param_problem(0, 43), REPR);
    }

    #[test]
    fn emit() {
        let invoking: Vec<u8> = (0..16).collect();
        let mut buf = [0xFFu8; 24];
        let (src, dst) = (a("fc00:1::1"), a("2001:db8::1"));
        assert_eq!(REPR.buffer_len(16), 24);
        let n = REPR.emit(&src, &dst, &invoking, &mut Icmpv6Packet::new_unchecked(&mut buf[..]));
        assert_eq!(n, 24);
        assert_eq!(u16::from_be_bytes([buf[2], buf[3]]), CSUM);
        buf[2] = 0;
        buf[3] = 0;
        assert_eq!(buf, BYTES);
    }

    #[test]
    fn checksum_known_answer() {
        let (src, dst) = (a("fc00:1::1"), a("2001:db8::1"));
        let mut b = BYTES;
        b[2..4].copy_from_slice(&CSUM.to_be_bytes());
        let p = Icmpv6Packet::new_checked(&b[..]).unwrap();
        assert!(p.verify_checksum(&src, &dst));
        assert!(!p.verify_checksum(&a("fc00:1::2"), &dst));
        let mut c = BYTES;
        let mut p = Icmpv6Packet::new_checked(&mut c[..]).unwrap();
        p.fill_checksum(&src, &dst);
        assert_eq!(c, b);
    }

    #[test]
    fn truncated_prefixes() {
        for n in 0..Icmpv6Packet::<&[u8]>::HEADER_LEN {
            assert_eq!(Icmpv6Packet::new_checked(&BYTES[..n]).unwrap_err(), Error::Truncated { need: 8, have: n });
        }
    }

    #[test]
    fn emit_caps_invoking_packet() {
        let big = vec![0xAB; 2000];
        let repr = Icmpv6Repr::hop_limit_exceeded();
        assert_eq!(repr.buffer_len(big.len()), 1240);
        let mut buf = vec![0u8; 1500];
        let (s, d) = (a("fc00::1"), a("fc00::2"));
        let n = repr.emit(&s, &d, &big, &mut Icmpv6Packet::new_unchecked(&mut buf[..]));
        assert_eq!(n, 1240);
        assert!(buf[1240..].iter().all(|&x| x == 0));
        assert!(Icmpv6Packet::new_checked(&buf[..n]).unwrap().verify_checksum(&s, &d));
        // A buffer too small for the offer: copy what fits, checksum what was written.
        let mut small = [0u8; 20];
        let n = repr.emit(&s, &d, &big, &mut Icmpv6Packet::new_unchecked(&mut small[..]));
        assert_eq!(n, 20);
        assert!(Icmpv6Packet::new_checked(&small[..]).unwrap().verify_checksum(&s, &d));
        assert!(repr.is_error());
        assert_eq!(Icmpv6Repr::packet_too_big(1280).param, 1280);
        assert_eq!(Icmpv6Repr::dst_unreachable(DU_NO_ROUTE).msg_type, DST_UNREACH);
    }

    #[test]
    fn emit_in_place() {
        // scapy: bytes(IPv6(src="fc00:1::1", dst="2001:db8::1")
        //              / ICMPv6TimeExceeded(code=0) / bytes(range(16)))[40:]
        let want: [u8; 24] =
            [0x03, 0x00, 0x9a, 0xb0, 0x00, 0x00, 0x00, 0x00, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15];
        let mut buf = want;
        buf[..8].fill(0xFF);
        let (src, dst) = (a("fc00:1::1"), a("2001:db8::1"));
        Icmpv6Repr::hop_limit_exceeded().emit_in_place(&src, &dst, &mut Icmpv6Packet::new_unchecked(&mut buf[..]));
        assert_eq!(buf, want);
        // The Parameter Problem of BYTES, built over its invoking packet.
        let mut b = BYTES;
        b[..8].fill(0xFF);
        REPR.emit_in_place(&src, &dst, &mut Icmpv6Packet::new_unchecked(&mut b[..]));
        assert_eq!(&b[8..], &BYTES[8..]);
        assert_eq!((b[0], b[1], u16::from_be_bytes([b[2], b[3]]), &b[4..8]), (4, 0, CSUM, &[0, 0, 0, 43][..]));
    }

    #[test]
    fn is_error() {
        assert!(Icmpv6Packet::new_unchecked(&BYTES[..]).is_error());
        // scapy: bytes(ICMPv6EchoRequest(id=0x1234, seq=7))[:1]
        assert!(!Icmpv6Packet::new_unchecked(&[ECHO_REQUEST][..]).is_error());
        assert!(Icmpv6Packet::new_unchecked(&[127u8][..]).is_error());
    }

    #[test]
    fn echo_fields() {
        let b = [ECHO_REQUEST, 0, 0, 0, 0x12, 0x34, 0x00, 0x07];
        let p = Icmpv6Packet::new_checked(&b[..]).unwrap();
        assert_eq!((p.echo_ident(), p.echo_seq()), (0x1234, 7));
    }

    proptest! {
        #[test]
        fn round_trip(msg_type in any::<u8>(), code in any::<u8>(), param in any::<u32>(),
                      invoking in proptest::collection::vec(any::<u8>(), 0..1400),
                      src in any::<[u8; 16]>(), dst in any::<[u8; 16]>()) {
            let repr = Icmpv6Repr { msg_type, code, param };
            let (s, d) = (Ipv6Addr::from(src), Ipv6Addr::from(dst));
            let mut buf = vec![0xFFu8; repr.buffer_len(invoking.len())];
            let n = repr.emit(&s, &d, &invoking, &mut Icmpv6Packet::new_unchecked(&mut buf[..]));
            prop_assert_eq!(n, buf.len());
            let p = Icmpv6Packet::new_checked(&buf[..]).unwrap();
            prop_assert!(p.verify_checksum(&s, &d));
            prop_assert_eq!(Icmpv6Repr::parse(&p).unwrap(), repr);
            prop_assert_eq!(p.payload(), &invoking[..invoking.len().min(MAX_INVOKING_LEN)]);
        }
    }
}
