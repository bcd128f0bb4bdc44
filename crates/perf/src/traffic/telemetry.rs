//! The 16-byte telemetry block every test packet carries, and the clock it is stamped
//! with.
//!
//! ```text
//!  0               2               4                               8
//!  +---------------+---------------+-------------------------------+
//!  | magic 0x5336  |  stream id    |        sequence number        |
//!  +---------------+---------------+-------------------------------+
//!  |             TX timestamp, ns of CLOCK_MONOTONIC (u64)         |
//!  +---------------------------------------------------------------+
//!  8                                                              16
//! ```
//!
//! All fields big-endian. The block is the last 16 bytes of the innermost UDP payload,
//! and the innermost packet is the last thing in every frame the tester sends: whatever
//! headers a forwarder pushes in front (T.Insert, T.Encaps, T.Encaps.L2) or pops
//! (End.DX*, End.DT*), the block stays the **last 16 bytes of the frame** — the idea of
//! the GTP-U/SRv6 paper's in-payload telemetry. The receiver therefore reads it at a
//! fixed offset from the end of each frame ([`Telemetry::from_frame`]) without parsing
//! any header. Every frame is at least 78 bytes, so Ethernet padding (added to frames
//! under 60 bytes) never moves it; a device that keeps the FCS (`rx-fcs on`) would.
//!
//! A frame counts as a test packet when the magic matches **and** its timestamp is
//! plausible (not before the receiver started counting, not in the future): a random
//! frame passes both with a probability around 2^-16 × (window / 2^64), nil in
//! practice. The sequence number starts at 0 for each stream at each run of the
//! generator; the timestamp is the moment the generator queued the packet's batch
//! (one clock read per batch).
//!
//! The UDP checksum covers the block: the generator patches the sequence number and the
//! timestamp and updates the checksum incrementally (RFC 1624) from the template's sum,
//! so every packet on the wire has a valid checksum (see `gen.rs`).

use rustix::time::{clock_gettime, ClockId};

/// Bytes of the telemetry block.
pub const TELEMETRY_LEN: usize = 16;
/// The first two bytes of the block: "S6".
pub const MAGIC: u16 = 0x5336;
/// Offset of the sequence number in the block.
pub const SEQ_OFFSET: usize = 4;
/// Offset of the timestamp in the block.
pub const TS_OFFSET: usize = 8;

/// Nanoseconds of `CLOCK_MONOTONIC` (the absolute value, comparable between processes
/// on one host; read through the vDSO, about 20 ns).
#[inline]
pub fn mono_ns() -> u64 {
    let t = clock_gettime(ClockId::Monotonic);
    (t.tv_sec as u64).wrapping_mul(1_000_000_000).wrapping_add(t.tv_nsec as u64)
}

/// One decoded telemetry block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Telemetry {
    pub stream: u16,
    pub seq: u32,
    /// When the generator queued the packet, [`mono_ns`].
    pub tx_ns: u64,
}

impl Telemetry {
    /// The block's 16 bytes.
    pub fn to_bytes(&self) -> [u8; TELEMETRY_LEN] {
        let mut b = [0u8; TELEMETRY_LEN];
        b[0..2].copy_from_slice(&MAGIC.to_be_bytes());
        b[2..4].copy_from_slice(&self.stream.to_be_bytes());
        b[4..8].copy_from_slice(&self.seq.to_be_bytes());
        b[8..16].copy_from_slice(&self.tx_ns.to_be_bytes());
        b
    }

    /// Decodes a block; `None` if `b` is not 16 bytes starting with the magic.
    #[inline]
    pub fn from_block(b: &[u8]) -> Option<Telemetry> {
        let b: &[u8; TELEMETRY_LEN] = b.try_into().ok()?;
        if u16::from_be_bytes([b[0], b[1]]) != MAGIC {
            return None;
        }
        Some(Telemetry {
            stream: u16::from_be_bytes([b[2], b[3]]),
            seq: u32::from_be_bytes([b[4], b[5], b[6], b[7]]),
            tx_ns: u64::from_be_bytes([b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]]),
        })
    }

    /// The block at the end of `frame`, if the magic is there. The caller still checks
    /// that the timestamp is plausible (see the module docs).
    #[inline]
    pub fn from_frame(frame: &[u8]) -> Option<Telemetry> {
        let at = frame.len().checked_sub(TELEMETRY_LEN)?;
        Telemetry::from_block(frame.get(at..)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_position() {
        let t = Telemetry { stream: 7, seq: 0xdead_beef, tx_ns: 0x0102_0304_0506_0708 };
        let mut frame = vec![0xaa; 50];
        frame.extend_from_slice(&t.to_bytes());
        assert_eq!(Telemetry::from_frame(&frame), Some(t));
        assert_eq!(&frame[50..52], b"S6");
        frame.push(0);
        assert_eq!(Telemetry::from_frame(&frame), None);
        assert_eq!(Telemetry::from_frame(&[0x53, 0x36]), None);
    }

    #[test]
    fn clock_moves_forward() {
        let a = mono_ns();
        let b = mono_ns();
        assert!(a > 0 && b >= a);
    }
}
