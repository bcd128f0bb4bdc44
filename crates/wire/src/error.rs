//! The single error type of `sr6-wire`.
//!
//! Every variant is `Copy` and carries the numbers that explain it, so the
//! data plane can turn it into a counted drop reason or an ICMPv6 Parameter
//! Problem (RFC 4443 §3.4) without allocating.

use core::fmt;

/// What was wrong with a header. Offsets are in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Error {
    /// The buffer holds `have` bytes where the header needs `need`.
    Truncated {
        /// Bytes required.
        need: usize,
        /// Bytes available.
        have: usize,
    },
    /// The IP Version field is not the one the view expects (RFC 791 §3.1, RFC 8200 §3).
    BadVersion(u8),
    /// A header-length field says `len` bytes, below the minimum `min`
    /// (IPv4 IHL, RFC 791 §3.1; a TLV length, RFC 8754 §2.1).
    BadHeaderLen {
        /// Length the field encodes, in bytes.
        len: usize,
        /// Smallest legal length, in bytes.
        min: usize,
    },
    /// A total-length field says `len` bytes, less than the header's `min`
    /// (IPv4 Total Length, RFC 791 §3.1; UDP Length, RFC 768).
    BadTotalLen {
        /// Length the field encodes, in bytes.
        len: usize,
        /// Smallest legal length, in bytes.
        min: usize,
    },
    /// A Routing header whose Routing Type is not 4 where an SRH was expected
    /// (RFC 8754 §2).
    BadRoutingType(u8),
    /// SRH Segments Left is larger than Last Entry + 1 (RFC 8754 §4.3.1.1, S02).
    SegmentsLeftTooBig {
        /// Segments Left field.
        sl: u8,
        /// Last Entry field.
        last_entry: u8,
    },
    /// The SRH segment list, 16 * (Last Entry + 1) bytes, does not fit in the
    /// header length (Hdr Ext Len + 1) * 8 (RFC 8754 §2).
    BadLastEntry {
        /// Last Entry field.
        last_entry: u8,
        /// Hdr Ext Len field.
        hdr_ext_len: u8,
    },
    /// The SRH TLV at `offset` (from the start of the TLV area) overruns the
    /// area or is malformed (RFC 8754 §2.1).
    BadTlv {
        /// Offset of the TLV's Type byte from the start of the TLV area.
        offset: usize,
    },
    /// The IPv6 option at `offset` (from the start of its Hop-by-Hop or
    /// Destination Options header) runs past the end of the header
    /// (RFC 8200 §4.2).
    BadOption {
        /// Offset of the Option Type byte from the start of the header.
        offset: usize,
    },
    /// A Hop-by-Hop Options header that is not directly after the IPv6 header
    /// (RFC 8200 §4.1). `nh_field` is the offset, from the IPv6 header, of the
    /// Next Header byte that names it: the pointer of an ICMPv6 Parameter
    /// Problem, code 1 (RFC 8200 §4).
    HopByHopNotFirst {
        /// Offset of the Next Header byte that names the misplaced header.
        nh_field: usize,
    },
    /// A checksum did not verify (RFC 1071).
    BadChecksum,
}

/// `Result` with [`Error`].
pub type Result<T> = core::result::Result<T, Error>;

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Error::Truncated { need, have } => {
                write!(f, "truncated: need {need} bytes, have {have}")
            }
            Error::BadVersion(v) => write!(f, "bad IP version {v}"),
            Error::BadHeaderLen { len, min } => {
                write!(f, "bad header length {len} (minimum {min})")
            }
            Error::BadTotalLen { len, min } => {
                write!(f, "bad total length {len} (minimum {min})")
            }
            Error::BadRoutingType(t) => write!(f, "routing type {t} is not an SRH (4)"),
            Error::SegmentsLeftTooBig { sl, last_entry } => {
                write!(f, "segments left {sl} exceeds last entry {last_entry} + 1")
            }
            Error::BadLastEntry { last_entry, hdr_ext_len } => {
                write!(f, "last entry {last_entry} does not fit in hdr ext len {hdr_ext_len}")
            }
            Error::BadTlv { offset } => write!(f, "malformed SRH TLV at offset {offset}"),
            Error::BadOption { offset } => write!(f, "IPv6 option at offset {offset} overruns its header"),
            Error::HopByHopNotFirst { nh_field } => {
                write!(f, "hop-by-hop options header not first (named at offset {nh_field})")
            }
            Error::BadChecksum => write!(f, "bad checksum"),
        }
    }
}

impl std::error::Error for Error {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_carries_numbers() {
        let e = Error::Truncated { need: 40, have: 3 };
        assert_eq!(e.to_string(), "truncated: need 40 bytes, have 3");
        let e = Error::SegmentsLeftTooBig { sl: 5, last_entry: 2 };
        assert_eq!(e.to_string(), "segments left 5 exceeds last entry 2 + 1");
        let b: Box<dyn std::error::Error> = Box::new(Error::BadChecksum);
        assert_eq!(b.to_string(), "bad checksum");
    }
}
