//! In-memory backend: replays a set of frames forever (for `sr6 bench`) and discards
//! what is transmitted.

use super::{IoError, RxBackend, TxBackend};
use sr6_core::packet::{DevId, PacketBuf};

/// Replays `frames` round-robin into each batch.
pub struct Replay {
    frames: Vec<Vec<u8>>,
    in_dev: DevId,
    next: usize,
}

impl Replay {
    pub fn new(frames: Vec<Vec<u8>>, in_dev: DevId) -> Self {
        Replay { frames, in_dev, next: 0 }
    }
}

impl RxBackend for Replay {
    #[inline(never)]
    fn rx_batch(&mut self, batch: &mut [PacketBuf]) -> Result<usize, IoError> {
        if self.frames.is_empty() {
            return Ok(0);
        }
        let n = self.frames.len();
        let mut next = self.next;
        for b in batch.iter_mut() {
            let Some(f) = self.frames.get(next) else { break };
            b.load(f, self.in_dev);
            // Round robin without a division per packet.
            next = if next + 1 == n { 0 } else { next + 1 };
        }
        self.next = next;
        Ok(batch.len())
    }
}

/// Discards everything.
#[derive(Default)]
pub struct Discard {
    pub frames: u64,
}

impl TxBackend for Discard {
    fn tx_batch(&mut self, batch: &[PacketBuf]) -> Result<(), IoError> {
        self.frames += batch.len() as u64;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replay_cycles() {
        let mut r = Replay::new(vec![vec![1], vec![2, 2]], 3);
        let mut b: Vec<PacketBuf> = (0..3).map(|_| PacketBuf::new()).collect();
        assert_eq!(r.rx_batch(&mut b).unwrap(), 3);
        assert_eq!(b[0].data(), &[1]);
        assert_eq!(b[1].data(), &[2, 2]);
        assert_eq!(b[2].data(), &[1]);
        assert_eq!(b[2].in_dev, 3);
        let mut empty = Replay::new(vec![], 0);
        assert_eq!(empty.rx_batch(&mut b).unwrap(), 0);
    }
}
