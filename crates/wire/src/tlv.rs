//! SRH TLVs (RFC 8754 §2.1): Pad1 (§2.1.1.1), PadN (§2.1.1.2), HMAC
//! (§2.1.2) and any other type, which is carried unchanged.
//!
//! The TLV area of an SRH runs from [`SrhPacket::tlv_offset`] to
//! [`SrhPacket::header_len`]. [`TlvIter`] walks it; offsets it reports are
//! relative to the start of the area. Pad1 is a lone zero byte; every other
//! TLV is `Type | Length | Length bytes of value`.
//!
//! [`SrhPacket::tlv_offset`]: crate::srh::SrhPacket::tlv_offset
//! [`SrhPacket::header_len`]: crate::srh::SrhPacket::header_len

use crate::bytes::{need, put_u16, put_u32, put_u8, slice, slice_mut, u16_at, u32_at, u8_at};
use crate::{Error, Result};

/// Pad1: one zero byte, no length (RFC 8754 §2.1.1.1).
pub const TLV_PAD1: u8 = 0;
/// PadN: type, length, `length` zero bytes (RFC 8754 §2.1.1.2).
pub const TLV_PADN: u8 = 4;
/// HMAC TLV (RFC 8754 §2.1.2).
pub const TLV_HMAC: u8 = 5;

/// Largest HMAC value an HMAC TLV may carry, in bytes (RFC 8754 §2.1.2).
pub const HMAC_MAX_LEN: usize = 32;
/// The `D` bit of the HMAC TLV (RFC 8754 §2.1.2): destination address
/// verification disabled.
pub const HMAC_D_FLAG: u16 = 0x8000;

/// One TLV of an SRH TLV area.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Tlv<'a> {
    /// Offset of the Type byte from the start of the TLV area.
    pub offset: usize,
    /// Type.
    pub kind: u8,
    /// Value (empty for Pad1).
    pub value: &'a [u8],
}

impl Tlv<'_> {
    /// Bytes the TLV takes in the area: 1 for Pad1, else 2 + value length.
    pub fn total_len(&self) -> usize {
        if self.kind == TLV_PAD1 {
            1
        } else {
            2 + self.value.len()
        }
    }

    /// True for Pad1 and PadN.
    pub fn is_padding(&self) -> bool {
        self.kind == TLV_PAD1 || self.kind == TLV_PADN
    }
}

/// Iterator over the TLVs of an SRH TLV area. Yields `Err(BadTlv { offset })`
/// for a TLV that overruns the area, then stops.
#[derive(Debug, Clone)]
pub struct TlvIter<'a> {
    area: &'a [u8],
    pos: usize,
    done: bool,
}

impl<'a> TlvIter<'a> {
    /// Iterates over `tlv_area`, the bytes from the SRH's TLV offset to its end.
    pub const fn new(tlv_area: &'a [u8]) -> Self {
        TlvIter { area: tlv_area, pos: 0, done: false }
    }
}

impl<'a> Iterator for TlvIter<'a> {
    type Item = Result<Tlv<'a>>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done || self.pos >= self.area.len() {
            return None;
        }
        let offset = self.pos;
        let kind = u8_at(self.area, offset);
        if kind == TLV_PAD1 {
            self.pos += 1;
            return Some(Ok(Tlv { offset, kind, value: &[] }));
        }
        let start = offset + 2;
        let end = start + usize::from(u8_at(self.area, offset + 1));
        match self.area.get(start..end) {
            Some(value) => {
                self.pos = end;
                Some(Ok(Tlv { offset, kind, value }))
            }
            None => {
                self.done = true;
                Some(Err(Error::BadTlv { offset }))
            }
        }
    }
}

mod field {
    //! HMAC TLV, RFC 8754 §2.1.2:
    //! ```text
    //!  0                   1                   2                   3
    //!  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
    //! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
    //! |     Type      |    Length     |D|        RESERVED             |
    //! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
    //! |                      HMAC Key ID (4 octets)                   |
    //! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
    //! |                                                              //
    //! |                      HMAC (variable)                        //
    //! |                                                              //
    //! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
    //! ```
    //! Length = 6 + HMAC length; the HMAC is a multiple of 8 bytes, at most 32.
    pub const TYPE: usize = 0;
    pub const LENGTH: usize = 1;
    pub const D_RESERVED: usize = 2;
    pub const KEY_ID: usize = 4;
    pub const HMAC: usize = 8;
}

/// Zero-copy view of an HMAC TLV (RFC 8754 §2.1.2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HmacTlv<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> HmacTlv<T> {
    /// Fixed part: Type, Length, D/Reserved, Key ID.
    pub const HEADER_LEN: usize = 8;

    /// Wraps a buffer without checking it.
    pub const fn new_unchecked(buffer: T) -> Self {
        HmacTlv { buffer }
    }

    /// Wraps a buffer and runs [`check_len`](Self::check_len).
    pub fn new_checked(buffer: T) -> Result<Self> {
        let t = Self::new_unchecked(buffer);
        t.check_len()?;
        Ok(t)
    }

    /// Checks Type = 5, that the fixed part and the `Length` bytes are in the
    /// buffer, and that the HMAC length (Length - 6) is a multiple of 8 and at
    /// most 32. A bad Type or Length is `BadTlv { offset: 0 }`.
    pub fn check_len(&self) -> Result<()> {
        let have = self.buffer.as_ref().len();
        need(Self::HEADER_LEN, have)?;
        let len = usize::from(self.length());
        if self.kind() != TLV_HMAC || len < 6 || (len - 6) % 8 != 0 || len - 6 > HMAC_MAX_LEN {
            return Err(Error::BadTlv { offset: 0 });
        }
        need(2 + len, have)
    }

    /// Type (5).
    pub fn kind(&self) -> u8 {
        u8_at(self.buffer.as_ref(), field::TYPE)
    }

    /// Length: 6 + HMAC length.
    pub fn length(&self) -> u8 {
        u8_at(self.buffer.as_ref(), field::LENGTH)
    }

    /// Bytes the TLV takes: 2 + Length.
    pub fn total_len(&self) -> usize {
        2 + usize::from(self.length())
    }

    /// The `D` bit: destination address verification is disabled.
    pub fn d_flag(&self) -> bool {
        u16_at(self.buffer.as_ref(), field::D_RESERVED) & HMAC_D_FLAG != 0
    }

    /// The 15 reserved bits.
    pub fn reserved(&self) -> u16 {
        u16_at(self.buffer.as_ref(), field::D_RESERVED) & !HMAC_D_FLAG
    }

    /// HMAC Key ID.
    pub fn key_id(&self) -> u32 {
        u32_at(self.buffer.as_ref(), field::KEY_ID)
    }

    /// The HMAC value, Length - 6 bytes.
    pub fn hmac(&self) -> &[u8] {
        slice(self.buffer.as_ref(), field::HMAC, self.total_len())
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> HmacTlv<T> {
    /// Sets Type.
    pub fn set_kind(&mut self, kind: u8) {
        put_u8(self.buffer.as_mut(), field::TYPE, kind);
    }

    /// Sets Length.
    pub fn set_length(&mut self, len: u8) {
        put_u8(self.buffer.as_mut(), field::LENGTH, len);
    }

    /// Sets the `D` bit and clears the reserved bits.
    pub fn set_d_flag(&mut self, d: bool) {
        put_u16(self.buffer.as_mut(), field::D_RESERVED, if d { HMAC_D_FLAG } else { 0 });
    }

    /// Sets HMAC Key ID.
    pub fn set_key_id(&mut self, id: u32) {
        put_u32(self.buffer.as_mut(), field::KEY_ID, id);
    }

    /// The HMAC value, mutable (to write a computed HMAC).
    pub fn hmac_mut(&mut self) -> &mut [u8] {
        let end = self.total_len();
        slice_mut(self.buffer.as_mut(), field::HMAC, end)
    }
}

/// High-level representation of an HMAC TLV; `emit` writes a zero HMAC, to be
/// filled once computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct HmacTlvRepr {
    /// The `D` bit.
    pub d_flag: bool,
    /// HMAC Key ID.
    pub key_id: u32,
    /// HMAC length in bytes: 8, 16, 24 or 32.
    pub hmac_len: u8,
}

impl HmacTlvRepr {
    /// Parses an HMAC TLV (runs `check_len`).
    pub fn parse<T: AsRef<[u8]>>(tlv: &HmacTlv<T>) -> Result<Self> {
        tlv.check_len()?;
        Ok(HmacTlvRepr { d_flag: tlv.d_flag(), key_id: tlv.key_id(), hmac_len: tlv.length() - 6 })
    }

    /// Bytes the TLV takes: 8 + hmac_len.
    pub const fn buffer_len(&self) -> usize {
        8 + self.hmac_len as usize
    }

    /// Writes the TLV with a zero HMAC value.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, tlv: &mut HmacTlv<T>) {
        tlv.set_kind(TLV_HMAC);
        tlv.set_length(self.hmac_len.saturating_add(6));
        tlv.set_d_flag(self.d_flag);
        tlv.set_key_id(self.key_id);
        tlv.hmac_mut().fill(0);
    }
}

/// What [`find_hmac`] returns: the offset of the HMAC TLV from the start of
/// the TLV area, and a checked view of its bytes.
pub type HmacAt<'a> = (usize, HmacTlv<&'a [u8]>);

/// Finds the HMAC TLV of an SRH TLV area (RFC 8754 §2.1.2) and returns its
/// offset in the area and a checked view of it. The whole area is walked, so
/// a malformed TLV anywhere, or a malformed HMAC TLV, is
/// `Err(BadTlv { offset })` with the offset of that TLV. If several HMAC TLVs
/// are present the first is returned.
pub fn find_hmac(tlv_area: &[u8]) -> Result<Option<HmacAt<'_>>> {
    let mut found = None;
    for tlv in TlvIter::new(tlv_area) {
        let tlv = tlv?;
        if tlv.kind == TLV_HMAC && found.is_none() {
            let bytes = slice(tlv_area, tlv.offset, tlv.offset + tlv.total_len());
            let view = HmacTlv::new_checked(bytes).map_err(|_| Error::BadTlv { offset: tlv.offset })?;
            found = Some((tlv.offset, view));
        }
    }
    Ok(found)
}

/// Writes padding of `len` bytes at the start of `buf`: nothing for 0, Pad1
/// for 1, else one PadN with zero value (RFC 8754 §2.1.1). `len` must be at
/// most 257; longer runs are written as several PadN.
pub fn emit_padding(buf: &mut [u8], len: usize) {
    let mut at = 0;
    let mut left = len;
    while left > 0 {
        if left == 1 {
            put_u8(buf, at, TLV_PAD1);
            return;
        }
        // Leave at least 2 bytes for another PadN rather than a lone byte.
        let chunk = if left > 257 { (left - 2).min(257) } else { left };
        put_u8(buf, at, TLV_PADN);
        put_u8(buf, at + 1, (chunk - 2) as u8);
        slice_mut(buf, at + 2, at + chunk).fill(0);
        at += chunk;
        left -= chunk;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    // PadN(2) | HMAC(D, key 0x01020304, 8-byte HMAC) | unknown type 9, 1 byte | Pad1 x3
    static AREA: [u8; 24] = [
        4, 2, 0, 0, // PadN
        5, 14, 0x80, 0x00, 0x01, 0x02, 0x03, 0x04, 1, 2, 3, 4, 5, 6, 7, 8, // HMAC
        9, 1, 0xAA, // unknown
        0,    // Pad1
    ];

    #[test]
    fn iterate() {
        let tlvs: Vec<_> = TlvIter::new(&AREA).collect::<Result<_>>().unwrap();
        assert_eq!(tlvs.len(), 4);
        assert_eq!(tlvs[0], Tlv { offset: 0, kind: TLV_PADN, value: &[0, 0] });
        assert_eq!(tlvs[1].offset, 4);
        assert_eq!(tlvs[1].kind, TLV_HMAC);
        assert_eq!(tlvs[1].value.len(), 14);
        assert_eq!(tlvs[2], Tlv { offset: 20, kind: 9, value: &[0xAA] });
        assert_eq!(tlvs[3], Tlv { offset: 23, kind: TLV_PAD1, value: &[] });
        assert!(tlvs[0].is_padding() && tlvs[3].is_padding() && !tlvs[2].is_padding());
        assert_eq!(tlvs.iter().map(Tlv::total_len).sum::<usize>(), AREA.len());
    }

    #[test]
    fn overrun_is_bad_tlv_then_stop() {
        let area = [0u8, 4, 3, 0, 0];
        let v: Vec<_> = TlvIter::new(&area).collect();
        assert_eq!(v.len(), 2);
        assert_eq!(v[1], Err(Error::BadTlv { offset: 1 }));
        let area = [0u8, 7];
        let v: Vec<_> = TlvIter::new(&area).collect();
        assert_eq!(v, vec![Ok(Tlv { offset: 0, kind: 0, value: &[] }), Err(Error::BadTlv { offset: 1 })]);
        assert_eq!(TlvIter::new(&[]).count(), 0);
    }

    #[test]
    fn hmac_view_and_find() {
        let (off, h) = find_hmac(&AREA).unwrap().unwrap();
        assert_eq!(off, 4);
        assert!(h.d_flag());
        assert_eq!(h.reserved(), 0);
        assert_eq!(h.key_id(), 0x0102_0304);
        assert_eq!(h.hmac(), &[1, 2, 3, 4, 5, 6, 7, 8]);
        assert_eq!(HmacTlvRepr::parse(&h).unwrap(), HmacTlvRepr { d_flag: true, key_id: 0x0102_0304, hmac_len: 8 });
        assert_eq!(find_hmac(&[4, 0, 0, 0]).unwrap().map(|x| x.0), None);
        // HMAC length 7 is not a multiple of 8.
        let bad = [4u8, 0, 5, 13, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0];
        assert_eq!(find_hmac(&bad).unwrap_err(), Error::BadTlv { offset: 2 });
        // A bad TLV after the HMAC still fails the area.
        let mut tail = AREA;
        tail[21] = 9;
        assert_eq!(find_hmac(&tail).unwrap_err(), Error::BadTlv { offset: 20 });
    }

    #[test]
    fn hmac_emit() {
        static BYTES: [u8; 40] = [
            5, 38, 0, 0, 0xde, 0xad, 0xbe, 0xef, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
            0, 0, 0, 0, 0, 0, 0, 0, 0,
        ];
        static REPR: HmacTlvRepr = HmacTlvRepr { d_flag: false, key_id: 0xdeadbeef, hmac_len: 32 };
        let mut buf = [0xFFu8; 40];
        assert_eq!(REPR.buffer_len(), 40);
        REPR.emit(&mut HmacTlv::new_unchecked(&mut buf[..]));
        assert_eq!(buf, BYTES);
        let h = HmacTlv::new_checked(&BYTES[..]).unwrap();
        assert_eq!(HmacTlvRepr::parse(&h).unwrap(), REPR);
        for n in 0..BYTES.len() {
            assert!(HmacTlv::new_checked(&BYTES[..n]).is_err(), "len {n}");
        }
        let mut b = BYTES;
        let mut h = HmacTlv::new_checked(&mut b[..]).unwrap();
        h.hmac_mut().fill(0x11);
        h.set_d_flag(true);
        assert!(h.d_flag());
        assert_eq!(h.hmac(), &[0x11; 32]);
        // 40-byte HMAC is too long.
        let mut b = [0u8; 48];
        b[0] = 5;
        b[1] = 46;
        assert_eq!(HmacTlv::new_checked(&b[..]).unwrap_err(), Error::BadTlv { offset: 0 });
    }

    #[test]
    fn padding() {
        for len in 0..600 {
            let mut buf = vec![0xFFu8; len];
            emit_padding(&mut buf, len);
            let tlvs: Vec<_> = TlvIter::new(&buf).collect::<Result<_>>().unwrap();
            assert!(tlvs.iter().all(Tlv::is_padding), "len {len}");
            assert_eq!(tlvs.iter().map(Tlv::total_len).sum::<usize>(), len);
        }
    }

    proptest! {
        #[test]
        fn hmac_round_trip(d_flag in any::<bool>(), key_id in any::<u32>(), n in 0u8..=4) {
            let repr = HmacTlvRepr { d_flag, key_id, hmac_len: 8 * n };
            let mut buf = vec![0xFFu8; repr.buffer_len()];
            repr.emit(&mut HmacTlv::new_unchecked(&mut buf[..]));
            let h = HmacTlv::new_checked(&buf[..]).unwrap();
            prop_assert_eq!(HmacTlvRepr::parse(&h).unwrap(), repr);
            prop_assert!(h.hmac().iter().all(|&b| b == 0));
        }
    }
}
