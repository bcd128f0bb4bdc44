//! IPv6 options (RFC 8200 §4.2): the Type-Length-Value options that fill a
//! Hop-by-Hop Options header (§4.3) or a Destination Options header (§4.6).
//!
//! ```text
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+- - - - - - - - -
//! |  Option Type  |  Opt Data Len |  Option Data
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+- - - - - - - - -
//! ```
//!
//! Pad1 is a lone zero byte; every other option is Type, Length and `Length`
//! bytes of data. The two high-order bits of the Type say what a node that
//! does not recognise the option must do ([`Action`], §4.2). [`OptIter`]
//! walks the options of one header; the offsets it reports count from the
//! start of that header, so that `40 + offset` is the pointer of an ICMPv6
//! Parameter Problem about an option of a Hop-by-Hop header.

use crate::bytes::{slice, u8_at};
use crate::{Error, Result};

/// Pad1: one zero byte (RFC 8200 §4.2).
pub const OPT_PAD1: u8 = 0;
/// PadN: type, length, `length` zero bytes (RFC 8200 §4.2).
pub const OPT_PADN: u8 = 1;
/// Router Alert, 2 bytes of value (RFC 2711 §2).
pub const OPT_ROUTER_ALERT: u8 = 0x05;
/// CALIPSO, the Common Architecture Label IPv6 Security Option (RFC 5570 §5).
pub const OPT_CALIPSO: u8 = 0x07;
/// IOAM, In-situ OAM (RFC 9486 §3).
pub const OPT_IOAM: u8 = 0x31;
/// Jumbo Payload, a 4-byte length (RFC 2675 §2).
pub const OPT_JUMBO: u8 = 0xC2;

/// Offset of the first option in a Hop-by-Hop or Destination Options header
/// (after Next Header and Hdr Ext Len).
pub const OPTIONS_OFFSET: usize = 2;

/// What a node must do with an option whose type it does not recognise: the
/// two high-order bits of the Option Type (RFC 8200 §4.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Action {
    /// 00: skip over the option and go on.
    Skip,
    /// 01: discard the packet.
    Discard,
    /// 10: discard the packet and send an ICMPv6 Parameter Problem, code 2,
    /// pointing at the option type, whatever the destination.
    DiscardIcmp,
    /// 11: discard the packet and, if the destination is not multicast, send
    /// an ICMPv6 Parameter Problem, code 2, pointing at the option type.
    DiscardIcmpUnicast,
}

impl Action {
    /// The action the two high-order bits of `kind` ask for.
    pub const fn of(kind: u8) -> Action {
        match kind >> 6 {
            0 => Action::Skip,
            1 => Action::Discard,
            2 => Action::DiscardIcmp,
            _ => Action::DiscardIcmpUnicast,
        }
    }
}

/// One option of a Hop-by-Hop or Destination Options header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Opt<'a> {
    /// Offset of the Option Type byte from the start of the header.
    pub offset: usize,
    /// Option Type.
    pub kind: u8,
    /// Option Data (empty for Pad1).
    pub data: &'a [u8],
}

impl Opt<'_> {
    /// Bytes the option takes: 1 for Pad1, else 2 + data length.
    pub fn total_len(&self) -> usize {
        if self.kind == OPT_PAD1 {
            1
        } else {
            2 + self.data.len()
        }
    }
}

/// Iterator over the options of one Hop-by-Hop or Destination Options header.
/// Yields `Err(BadOption { offset })` for an option whose length byte or data
/// runs past the end of the header, then stops.
#[derive(Debug, Clone)]
pub struct OptIter<'a> {
    header: &'a [u8],
    pos: usize,
    done: bool,
}

impl<'a> OptIter<'a> {
    /// Iterates over the options of `header`: the whole extension header,
    /// `(Hdr Ext Len + 1) * 8` bytes (see [`ExtHeader`](crate::ExtHeader)),
    /// from its Next Header byte on.
    pub const fn new(header: &'a [u8]) -> Self {
        OptIter { header, pos: OPTIONS_OFFSET, done: false }
    }
}

impl<'a> Iterator for OptIter<'a> {
    type Item = Result<Opt<'a>>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done || self.pos >= self.header.len() {
            return None;
        }
        let offset = self.pos;
        let kind = u8_at(self.header, offset);
        if kind == OPT_PAD1 {
            self.pos += 1;
            return Some(Ok(Opt { offset, kind, data: &[] }));
        }
        let start = offset + 2;
        let end = start + usize::from(u8_at(self.header, offset + 1));
        if end > self.header.len() {
            self.done = true;
            return Some(Err(Error::BadOption { offset }));
        }
        self.pos = end;
        Some(Ok(Opt { offset, kind, data: slice(self.header, start, end) }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn walks_options() {
        // nh, len, Pad1, RA (value 0x0001), PadN (1 byte), unknown 0x3e len 0, 4 x Pad1
        let h = [59u8, 0, 0, 5, 2, 0, 1, 1, 1, 0, 0x3e, 0, 0, 0, 0, 0];
        let opts: Vec<_> = OptIter::new(&h[..11 + 1]).map(|o| o.unwrap()).collect();
        let kinds: Vec<_> = opts.iter().map(|o| (o.offset, o.kind, o.data.len(), o.total_len())).collect();
        assert_eq!(kinds, [(2, 0, 0, 1), (3, 5, 2, 4), (7, 1, 1, 3), (10, 0x3e, 0, 2)]);
        assert_eq!(opts[1].data, &[0, 1]);
        assert_eq!(OptIter::new(&h).count(), 4 + 4);
    }

    #[test]
    fn overrun_is_an_error_then_stops() {
        // A length byte missing, then data running past the end.
        let h = [59u8, 0, 0, 0, 0, 0, 0, 5];
        let r: Vec<_> = OptIter::new(&h).collect();
        assert_eq!(r.last(), Some(&Err(Error::BadOption { offset: 7 })));
        let h = [59u8, 0, 0x1e, 5, 0, 0, 0, 0];
        let r: Vec<_> = OptIter::new(&h).collect();
        assert_eq!(r, [Err(Error::BadOption { offset: 2 })]);
        // Exactly filling the header is fine.
        let h = [59u8, 0, 0x1e, 4, 9, 9, 9, 9];
        let r: Vec<_> = OptIter::new(&h).collect();
        assert_eq!(r, [Ok(Opt { offset: 2, kind: 0x1e, data: &[9, 9, 9, 9] })]);
    }

    #[test]
    fn actions() {
        assert_eq!(Action::of(0x1e), Action::Skip);
        assert_eq!(Action::of(0x7e), Action::Discard);
        assert_eq!(Action::of(OPT_JUMBO), Action::DiscardIcmpUnicast);
        assert_eq!(Action::of(0x9e), Action::DiscardIcmp);
        assert_eq!(Action::of(0xfe), Action::DiscardIcmpUnicast);
    }

    #[test]
    fn any_bytes_no_panic_and_offsets_inside() {
        // Every header of up to 8 bytes over a small alphabet: the iterator ends,
        // every option lies inside the header, and they tile it up to an error.
        let alphabet = [0u8, 1, 2, 5, 0xff];
        for n in 0..=8usize {
            let total = alphabet.len().pow(n as u32);
            for mut k in 0..total {
                let mut h = vec![0u8; n];
                for b in h.iter_mut() {
                    *b = alphabet[k % alphabet.len()];
                    k /= alphabet.len();
                }
                let mut pos = OPTIONS_OFFSET;
                for o in OptIter::new(&h) {
                    match o {
                        Ok(o) => {
                            assert_eq!(o.offset, pos);
                            pos += o.total_len();
                            assert!(pos <= n);
                        }
                        Err(Error::BadOption { offset }) => assert_eq!(offset, pos),
                        Err(e) => panic!("{e}"),
                    }
                }
            }
        }
    }
}
