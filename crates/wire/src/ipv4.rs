//! The IPv4 header (RFC 791 §3.1), with the header checksum (RFC 1071) and
//! its incremental update on a TTL decrement (RFC 1624 §3).
//!
//! sr6 meets IPv4 as the payload of End.DX4/End.DT4 and H.Encaps of IPv4
//! traffic. Options are carried (the header may be longer than 20 bytes) but
//! not interpreted; [`Ipv4Repr`] emits a 20-byte header.

use std::net::Ipv4Addr;

use crate::bytes::{array, need, put, put_u16, put_u8, slice, slice_mut, u16_at, u8_at};
use crate::{checksum, Error, Result};

mod field {
    //! RFC 791 §3.1:
    //! ```text
    //!  0                   1                   2                   3
    //!  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
    //! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
    //! |Version|  IHL  |   DSCP/ECN    |          Total Length         |
    //! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
    //! |         Identification        |Flags|      Fragment Offset    |
    //! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
    //! |  Time to Live |    Protocol   |         Header Checksum       |
    //! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
    //! |                       Source Address                          |
    //! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
    //! |                    Destination Address                        |
    //! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
    //! |                    Options                    |    Padding    |
    //! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
    //! ```
    pub const VER_IHL: usize = 0;
    pub const DSCP_ECN: usize = 1;
    pub const LENGTH: usize = 2;
    pub const IDENT: usize = 4;
    pub const FLAGS_FRAG: usize = 6;
    pub const TTL: usize = 8;
    pub const PROTOCOL: usize = 9;
    pub const CHECKSUM: usize = 10;
    pub const SRC: usize = 12;
    pub const DST: usize = 16;
}

/// Fragment Offset mask within `flags_frag`, in 8-byte units.
pub const FRAG_OFFSET_MASK: u16 = 0x1FFF;
/// Don't Fragment, in `flags_frag` (RFC 791 §3.1).
pub const FLAG_DF: u16 = 0x4000;
/// More Fragments, in `flags_frag` (RFC 791 §3.1).
pub const FLAG_MF: u16 = 0x2000;

/// Option type End of Option List (RFC 791 §3.1).
const OPT_END: u8 = 0;
/// Option type No Operation (RFC 791 §3.1).
const OPT_NOP: u8 = 1;
/// The copied flag of an option type: copied into all fragments (RFC 791 §3.1).
const OPT_COPIED: u8 = 0x80;

/// Zero-copy view of an IPv4 packet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ipv4Packet<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Ipv4Packet<T> {
    /// Length of a header without options.
    pub const HEADER_LEN: usize = 20;

    /// Wraps a buffer without checking it.
    pub const fn new_unchecked(buffer: T) -> Self {
        Ipv4Packet { buffer }
    }

    /// Wraps a buffer and runs [`check_len`](Self::check_len).
    pub fn new_checked(buffer: T) -> Result<Self> {
        let p = Self::new_unchecked(buffer);
        p.check_len()?;
        Ok(p)
    }

    /// Checks version 4, IHL >= 5, that the header and Total Length fit in the
    /// buffer and that Total Length covers the header. A buffer longer than
    /// Total Length is accepted (Ethernet padding).
    pub fn check_len(&self) -> Result<()> {
        let have = self.buffer.as_ref().len();
        need(Self::HEADER_LEN, have)?;
        if self.version() != 4 {
            return Err(Error::BadVersion(self.version()));
        }
        let hlen = self.header_len();
        if hlen < Self::HEADER_LEN {
            return Err(Error::BadHeaderLen { len: hlen, min: Self::HEADER_LEN });
        }
        need(hlen, have)?;
        let total = usize::from(self.total_len());
        if total < hlen {
            return Err(Error::BadTotalLen { len: total, min: hlen });
        }
        need(total, have)
    }

    /// Version field (4).
    pub fn version(&self) -> u8 {
        u8_at(self.buffer.as_ref(), field::VER_IHL) >> 4
    }

    /// Header length in bytes (IHL * 4).
    pub fn header_len(&self) -> usize {
        usize::from(u8_at(self.buffer.as_ref(), field::VER_IHL) & 0x0F) * 4
    }

    /// The whole second byte: DSCP (6 bits) and ECN (2 bits) (RFC 2474, RFC 3168).
    pub fn dscp_ecn(&self) -> u8 {
        u8_at(self.buffer.as_ref(), field::DSCP_ECN)
    }

    /// Total Length: header plus payload, in bytes.
    pub fn total_len(&self) -> u16 {
        u16_at(self.buffer.as_ref(), field::LENGTH)
    }

    /// Identification.
    pub fn ident(&self) -> u16 {
        u16_at(self.buffer.as_ref(), field::IDENT)
    }

    /// Flags (3 bits: reserved, DF 0x4000, MF 0x2000) and Fragment Offset
    /// (13 bits, [`FRAG_OFFSET_MASK`]) as one word.
    pub fn flags_frag(&self) -> u16 {
        u16_at(self.buffer.as_ref(), field::FLAGS_FRAG)
    }

    /// Fragment offset in bytes.
    pub fn frag_offset(&self) -> usize {
        usize::from(self.flags_frag() & FRAG_OFFSET_MASK) * 8
    }

    /// Time to Live.
    pub fn ttl(&self) -> u8 {
        u8_at(self.buffer.as_ref(), field::TTL)
    }

    /// Protocol.
    pub fn protocol(&self) -> u8 {
        u8_at(self.buffer.as_ref(), field::PROTOCOL)
    }

    /// Header Checksum.
    pub fn checksum(&self) -> u16 {
        u16_at(self.buffer.as_ref(), field::CHECKSUM)
    }

    /// Source address.
    pub fn src_addr(&self) -> Ipv4Addr {
        Ipv4Addr::from(array::<4>(self.buffer.as_ref(), field::SRC))
    }

    /// Destination address.
    pub fn dst_addr(&self) -> Ipv4Addr {
        Ipv4Addr::from(array::<4>(self.buffer.as_ref(), field::DST))
    }

    /// The header bytes, options included.
    pub fn header(&self) -> &[u8] {
        slice(self.buffer.as_ref(), 0, self.header_len())
    }

    /// True when the header checksum verifies (RFC 791 §3.1).
    pub fn verify_checksum(&self) -> bool {
        let h = self.header();
        h.len() >= Self::HEADER_LEN && checksum::fold(checksum::sum(h)) == 0
    }

    /// Bytes from the end of the header to Total Length (padding excluded).
    pub fn payload(&self) -> &[u8] {
        slice(self.buffer.as_ref(), self.header_len(), usize::from(self.total_len()))
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Ipv4Packet<T> {
    /// Sets Version, keeping IHL.
    pub fn set_version(&mut self, version: u8) {
        let b = self.buffer.as_mut();
        let v = (u8_at(b, field::VER_IHL) & 0x0F) | (version << 4);
        put_u8(b, field::VER_IHL, v);
    }

    /// Sets IHL from a header length in bytes (a multiple of 4, 20..=60), keeping Version.
    pub fn set_header_len(&mut self, len: usize) {
        let b = self.buffer.as_mut();
        let ihl = ((len / 4) & 0x0F) as u8;
        let v = (u8_at(b, field::VER_IHL) & 0xF0) | ihl;
        put_u8(b, field::VER_IHL, v);
    }

    /// Sets the DSCP/ECN byte.
    pub fn set_dscp_ecn(&mut self, v: u8) {
        put_u8(self.buffer.as_mut(), field::DSCP_ECN, v);
    }

    /// Sets Total Length.
    pub fn set_total_len(&mut self, v: u16) {
        put_u16(self.buffer.as_mut(), field::LENGTH, v);
    }

    /// Sets Identification.
    pub fn set_ident(&mut self, v: u16) {
        put_u16(self.buffer.as_mut(), field::IDENT, v);
    }

    /// Sets Flags and Fragment Offset.
    pub fn set_flags_frag(&mut self, v: u16) {
        put_u16(self.buffer.as_mut(), field::FLAGS_FRAG, v);
    }

    /// Sets Time to Live (the checksum is not updated; see
    /// [`decrement_ttl`](Self::decrement_ttl)).
    pub fn set_ttl(&mut self, v: u8) {
        put_u8(self.buffer.as_mut(), field::TTL, v);
    }

    /// Sets Protocol.
    pub fn set_protocol(&mut self, v: u8) {
        put_u8(self.buffer.as_mut(), field::PROTOCOL, v);
    }

    /// Sets Header Checksum.
    pub fn set_checksum(&mut self, v: u16) {
        put_u16(self.buffer.as_mut(), field::CHECKSUM, v);
    }

    /// Sets the source address.
    pub fn set_src_addr(&mut self, a: &Ipv4Addr) {
        put(self.buffer.as_mut(), field::SRC, a.octets());
    }

    /// Sets the destination address.
    pub fn set_dst_addr(&mut self, a: &Ipv4Addr) {
        put(self.buffer.as_mut(), field::DST, a.octets());
    }

    /// Computes and writes the header checksum over `header_len()` bytes.
    pub fn fill_checksum(&mut self) {
        self.set_checksum(0);
        let c = checksum::fold(checksum::sum(self.header()));
        self.set_checksum(c);
    }

    /// Decrements TTL by one and updates the checksum incrementally
    /// (RFC 1624 §3; RFC 1812 §5.3.1). Returns the new TTL. A TTL of 0 is
    /// left alone (the caller must already have dropped such a packet).
    pub fn decrement_ttl(&mut self) -> u8 {
        let ttl = self.ttl();
        if ttl == 0 {
            return 0;
        }
        let proto = u16::from(self.protocol());
        let old = (u16::from(ttl) << 8) | proto;
        let new = (u16::from(ttl - 1) << 8) | proto;
        let c = checksum::update16(self.checksum(), old, new);
        self.set_ttl(ttl - 1);
        self.set_checksum(c);
        ttl - 1
    }

    /// Overwrites with No Operation options every option whose copied flag is clear,
    /// for the fragments after the first (RFC 791 §3.2: only options with the copied
    /// flag appear in them). The header keeps its length, as Linux's
    /// `ip_options_fragment` leaves it: the walk stops at End of Option List or at an
    /// option whose length is below 2 or runs past the header.
    pub fn nop_uncopied_options(&mut self) {
        let hlen = self.header_len().max(Self::HEADER_LEN);
        let opts = slice_mut(self.buffer.as_mut(), Self::HEADER_LEN, hlen);
        let mut i = 0;
        while let Some(&kind) = opts.get(i) {
            match kind {
                OPT_END => return,
                OPT_NOP => i += 1,
                _ => {
                    let len = opts.get(i + 1).map_or(0, |&l| usize::from(l));
                    let Some(opt) = opts.get_mut(i..i + len).filter(|_| len >= 2) else { return };
                    if kind & OPT_COPIED == 0 {
                        opt.fill(OPT_NOP);
                    }
                    i += len;
                }
            }
        }
    }

    /// Mutable bytes from the end of the header to Total Length.
    pub fn payload_mut(&mut self) -> &mut [u8] {
        let (start, end) = (self.header_len(), usize::from(self.total_len()));
        slice_mut(self.buffer.as_mut(), start, end)
    }
}

impl<T: AsRef<[u8]>> AsRef<[u8]> for Ipv4Packet<T> {
    fn as_ref(&self) -> &[u8] {
        self.buffer.as_ref()
    }
}

/// High-level representation of an IPv4 header without options.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Ipv4Repr {
    /// Source address.
    pub src_addr: Ipv4Addr,
    /// Destination address.
    pub dst_addr: Ipv4Addr,
    /// Protocol.
    pub protocol: u8,
    /// Payload length in bytes (Total Length minus header length).
    pub payload_len: u16,
    /// Time to Live.
    pub ttl: u8,
    /// DSCP/ECN byte.
    pub dscp_ecn: u8,
    /// Identification.
    pub ident: u16,
    /// Flags and Fragment Offset word.
    pub flags_frag: u16,
}

impl Ipv4Repr {
    /// Parses a header (runs `check_len`, verifies the checksum, ignores options).
    pub fn parse<T: AsRef<[u8]>>(packet: &Ipv4Packet<T>) -> Result<Self> {
        packet.check_len()?;
        if !packet.verify_checksum() {
            return Err(Error::BadChecksum);
        }
        // check_len guarantees total_len >= header_len, and header_len <= 60.
        let payload_len = packet.total_len() - packet.header_len() as u16;
        Ok(Ipv4Repr {
            src_addr: packet.src_addr(),
            dst_addr: packet.dst_addr(),
            protocol: packet.protocol(),
            payload_len,
            ttl: packet.ttl(),
            dscp_ecn: packet.dscp_ecn(),
            ident: packet.ident(),
            flags_frag: packet.flags_frag(),
        })
    }

    /// Header length this repr emits: 20.
    pub const fn buffer_len(&self) -> usize {
        20
    }

    /// Writes a 20-byte header with its checksum into `packet`. Total Length
    /// is `20 + payload_len` (saturating at 65535).
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, packet: &mut Ipv4Packet<T>) {
        packet.set_version(4);
        packet.set_header_len(20);
        packet.set_dscp_ecn(self.dscp_ecn);
        packet.set_total_len(self.payload_len.saturating_add(20));
        packet.set_ident(self.ident);
        packet.set_flags_frag(self.flags_frag);
        packet.set_ttl(self.ttl);
        packet.set_protocol(self.protocol);
        packet.set_src_addr(&self.src_addr);
        packet.set_dst_addr(&self.dst_addr);
        packet.fill_checksum();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A header of 20 bytes + `opts`, IHL set.
    fn with_options(opts: &[u8]) -> Vec<u8> {
        let mut b = vec![0x40 | ((20 + opts.len()) / 4) as u8];
        b.resize(20, 0);
        b.extend_from_slice(opts);
        b
    }

    #[test]
    fn nop_uncopied_options_keeps_copied_ones_and_stops_where_the_list_does() {
        // NOP, not copied (0x1e, len 4), copied (0x88, len 4), End, then bytes after End.
        let mut b = with_options(&[1, 0x1e, 4, 0xaa, 0xbb, 0x88, 4, 0x12, 0x34, 0, 0x1e, 2]);
        Ipv4Packet::new_unchecked(&mut b[..]).nop_uncopied_options();
        assert_eq!(&b[20..], &[1, 1, 1, 1, 1, 0x88, 4, 0x12, 0x34, 0, 0x1e, 2]);
        // A length below 2 or past the header ends the walk; what was before is done.
        for bad in [[0x1e, 2, 0x44, 1], [0x1e, 2, 0x44, 9]] {
            let mut b = with_options(&bad);
            Ipv4Packet::new_unchecked(&mut b[..]).nop_uncopied_options();
            assert_eq!(&b[20..], &[1, 1, 0x44, bad[3]]);
        }
        // IHL 5: nothing to do; a truncated buffer: no panic.
        let mut b = with_options(&[]);
        Ipv4Packet::new_unchecked(&mut b[..]).nop_uncopied_options();
        let mut b = with_options(&[0x1e, 4, 0, 0]);
        b.truncate(22);
        Ipv4Packet::new_unchecked(&mut b[..]).nop_uncopied_options();
    }

    // scapy: bytes(IP(src="192.0.2.1", dst="198.51.100.2", ttl=64, id=0x1234,
    //                 flags="DF", tos=0xb8, proto=17, len=24))
    static BYTES: [u8; 24] = [
        0x45, 0xb8, 0x00, 0x18, 0x12, 0x34, 0x40, 0x00, 0x40, 0x11, 0x3b, 0xb2, 0xc0, 0x00, 0x02, 0x01, 0xc6, 0x33,
        0x64, 0x02, // header
        0xde, 0xad, 0xbe, 0xef, // payload
    ];
    static REPR: Ipv4Repr = Ipv4Repr {
        src_addr: Ipv4Addr::new(192, 0, 2, 1),
        dst_addr: Ipv4Addr::new(198, 51, 100, 2),
        protocol: 17,
        payload_len: 4,
        ttl: 64,
        dscp_ecn: 0xb8,
        ident: 0x1234,
        flags_frag: 0x4000, // DF
    };

    #[test]
    fn parse() {
        let p = Ipv4Packet::new_checked(&BYTES[..]).unwrap();
        assert_eq!(p.version(), 4);
        assert_eq!(p.header_len(), 20);
        assert_eq!(p.total_len(), 24);
        assert_eq!(p.frag_offset(), 0);
        assert!(p.verify_checksum());
        assert_eq!(p.payload(), &[0xde, 0xad, 0xbe, 0xef]);
        assert_eq!(Ipv4Repr::parse(&p).unwrap(), REPR);
    }

    #[test]
    fn emit() {
        let mut buf = [0xFFu8; 24];
        REPR.emit(&mut Ipv4Packet::new_unchecked(&mut buf[..]));
        buf[20..].copy_from_slice(&[0xde, 0xad, 0xbe, 0xef]);
        assert_eq!(buf, BYTES);
    }

    #[test]
    fn truncated_prefixes() {
        for n in 0..BYTES.len() {
            assert!(Ipv4Packet::new_checked(&BYTES[..n]).is_err(), "len {n}");
        }
        // Ethernet padding after Total Length is fine.
        let mut padded = [0u8; 46];
        padded[..24].copy_from_slice(&BYTES);
        let p = Ipv4Packet::new_checked(&padded[..]).unwrap();
        assert_eq!(p.payload().len(), 4);
    }

    #[test]
    fn bad_fields() {
        let mut b = BYTES;
        b[0] = 0x65;
        assert_eq!(Ipv4Packet::new_checked(&b[..]).unwrap_err(), Error::BadVersion(6));
        b[0] = 0x44;
        assert_eq!(Ipv4Packet::new_checked(&b[..]).unwrap_err(), Error::BadHeaderLen { len: 16, min: 20 });
        b[0] = 0x47;
        assert_eq!(Ipv4Packet::new_checked(&b[..]).unwrap_err(), Error::Truncated { need: 28, have: 24 });
        let mut b = BYTES;
        b[3] = 19;
        assert_eq!(Ipv4Packet::new_checked(&b[..]).unwrap_err(), Error::BadTotalLen { len: 19, min: 20 });
        b[3] = 25;
        assert_eq!(Ipv4Packet::new_checked(&b[..]).unwrap_err(), Error::Truncated { need: 25, have: 24 });
        let mut b = BYTES;
        b[11] ^= 1;
        let p = Ipv4Packet::new_checked(&b[..]).unwrap();
        assert!(!p.verify_checksum());
        assert_eq!(Ipv4Repr::parse(&p).unwrap_err(), Error::BadChecksum);
    }

    #[test]
    fn decrement_ttl_incremental() {
        let mut b = BYTES;
        let mut p = Ipv4Packet::new_checked(&mut b[..]).unwrap();
        assert_eq!(p.decrement_ttl(), 63);
        assert!(p.verify_checksum());
        let inc = p.checksum();
        p.fill_checksum();
        assert_eq!(p.checksum(), inc);
        p.set_ttl(0);
        p.fill_checksum();
        assert_eq!(p.decrement_ttl(), 0);
        assert!(p.verify_checksum());
    }

    fn arb_repr() -> impl Strategy<Value = Ipv4Repr> {
        (
            any::<[u8; 4]>(),
            any::<[u8; 4]>(),
            any::<u8>(),
            0u16..1500,
            any::<u8>(),
            any::<u8>(),
            any::<u16>(),
            any::<u16>(),
        )
            .prop_map(|(s, d, protocol, payload_len, ttl, dscp_ecn, ident, flags_frag)| Ipv4Repr {
                src_addr: s.into(),
                dst_addr: d.into(),
                protocol,
                payload_len,
                ttl,
                dscp_ecn,
                ident,
                flags_frag,
            })
    }

    proptest! {
        #[test]
        fn round_trip(repr in arb_repr()) {
            let mut buf = vec![0xFFu8; repr.buffer_len() + usize::from(repr.payload_len)];
            repr.emit(&mut Ipv4Packet::new_unchecked(&mut buf[..]));
            let p = Ipv4Packet::new_checked(&buf[..]).unwrap();
            prop_assert_eq!(Ipv4Repr::parse(&p).unwrap(), repr);
        }

        #[test]
        fn decrement_matches_recompute(repr in arb_repr()) {
            let mut buf = vec![0u8; 20 + usize::from(repr.payload_len)];
            let mut p = Ipv4Packet::new_unchecked(&mut buf[..]);
            repr.emit(&mut p);
            p.decrement_ttl();
            prop_assert!(p.verify_checksum());
            let inc = p.checksum();
            p.fill_checksum();
            prop_assert_eq!(p.checksum(), inc);
        }
    }
}
