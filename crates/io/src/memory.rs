//! In-memory backend: replays a set of frames forever (for `sr6 bench`) and discards
//! what is transmitted.

use super::{IoError, RxBackend, TxBackend};
use sr6_core::packet::{Block, PacketBuf};

/// Replays `frames` round-robin into each batch. Which device they come from is the
/// caller's to say ([`Worker::process_batch`](sr6_core::pipeline::Worker::process_batch)
/// takes it per batch): a buffer's `in_dev` is left as it was.
pub struct Replay {
    frames: Frames,
    next: usize,
    /// The CPU has AVX: the copy uses [`fill_avx`].
    avx: bool,
}

/// The frames, stored for a cheap receive copy: when they are all small, each one
/// zero-padded in a fixed-size [`Block`] ([`PacketBuf::load_block`]: inline moves, no
/// `memcpy` call) with its start and length. The block is the longest frame rounded up
/// to 16 bytes, so the copy moves no more 16-byte chunks than the longest frame needs (a
/// NIC writes the frame, no more); `blocks!` lists the sizes. Where the CPU has AVX the
/// copy is compiled with it ([`fill_avx`]): 32 bytes per move.
macro_rules! blocks {
    ($($v:ident = $k:literal),*) => {
        enum Frames {
            $($v(Vec<Block<$k>>),)*
            Any(Vec<Vec<u8>>),
        }

        impl Frames {
            fn new(frames: Vec<Vec<u8>>) -> Frames {
                let longest = frames.iter().map(|f| f.len()).max().unwrap_or(0);
                $(if longest <= $k {
                    if let Some(b) = blocks(&frames) {
                        return Frames::$v(b);
                    }
                })*
                Frames::Any(frames)
            }

            /// See [`fill`].
            #[inline(always)]
            fn fill(&self, next: &mut usize, batch: &mut [PacketBuf]) -> usize {
                match self {
                    $(Frames::$v(f) => fill(f, next, batch, |b, x| b.load_block(x)),)*
                    Frames::Any(f) => fill(f, next, batch, |b, x| {
                        let d = b.in_dev;
                        b.load(x, d);
                    }),
                }
            }
        }
    };
}

blocks!(
    Block64 = 64,
    Block80 = 80,
    Block96 = 96,
    Block112 = 112,
    Block128 = 128,
    Block144 = 144,
    Block160 = 160,
    Block176 = 176,
    Block192 = 192
);

/// The frames as blocks of `K` bytes, if they all fit.
fn blocks<const K: usize>(frames: &[Vec<u8>]) -> Option<Vec<Block<K>>> {
    frames.iter().map(|f| Block::new(f)).collect()
}

impl Replay {
    pub fn new(frames: Vec<Vec<u8>>) -> Self {
        #[cfg(target_arch = "x86_64")]
        let avx = std::arch::is_x86_feature_detected!("avx");
        #[cfg(not(target_arch = "x86_64"))]
        let avx = false;
        Replay { frames: Frames::new(frames), next: 0, avx }
    }
}

/// Fills `batch` round robin from `frames`, starting at `*next`; returns how many
/// buffers were filled. Runs of consecutive frames are zipped with the buffers, so the
/// wrap-around is not tested per packet.
#[inline(always)]
fn fill<T>(frames: &[T], next: &mut usize, batch: &mut [PacketBuf], load: impl Fn(&mut PacketBuf, &T)) -> usize {
    if frames.is_empty() {
        return 0;
    }
    let mut rest = &mut *batch;
    let mut i = *next;
    while !rest.is_empty() {
        let run = frames.get(i..).unwrap_or_default();
        let k = run.len().min(rest.len());
        let (now, later) = rest.split_at_mut(k);
        // Eight at a time: one loop step (a counter, two pointers, a branch) for eight
        // frames, as a driver's receive loop would have it.
        let mut eights = now.chunks_exact_mut(8);
        let mut runs = run.get(..k).unwrap_or_default().chunks_exact(8);
        for (b4, f4) in (&mut eights).zip(&mut runs) {
            for (b, f) in b4.iter_mut().zip(f4) {
                load(b, f);
            }
        }
        for (b, f) in eights.into_remainder().iter_mut().zip(runs.remainder()) {
            load(b, f);
        }
        rest = later;
        i = if i + k >= frames.len() { 0 } else { i + k };
    }
    *next = i;
    batch.len()
}

impl RxBackend for Replay {
    #[inline(never)]
    fn rx_batch(&mut self, batch: &mut [PacketBuf]) -> Result<usize, IoError> {
        #[cfg(target_arch = "x86_64")]
        if self.avx {
            // SAFETY: the CPU has AVX (checked in `Replay::new`).
            return Ok(unsafe { fill_avx(&self.frames, &mut self.next, batch) });
        }
        Ok(self.frames.fill(&mut self.next, batch))
    }
}

/// [`Frames::fill`] compiled with AVX, whose 32-byte moves halve the receive copy's.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
fn fill_avx(frames: &Frames, next: &mut usize, batch: &mut [PacketBuf]) -> usize {
    frames.fill(next, batch)
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
        let mut r = Replay::new(vec![vec![1], vec![2, 2]]);
        let mut b: Vec<PacketBuf> = (0..3).map(|_| PacketBuf::new()).collect();
        b[2].in_dev = 3;
        assert_eq!(r.rx_batch(&mut b).unwrap(), 3);
        assert_eq!(b[0].data(), &[1]);
        assert_eq!(b[1].data(), &[2, 2]);
        assert_eq!(b[2].data(), &[1]);
        assert_eq!(b[2].in_dev, 3, "left as it was");
        // The next batch goes on where this one stopped; frames of every size.
        let mut r = Replay::new(vec![vec![1; 10], vec![2; 150], vec![3; 300]]);
        let mut b: Vec<PacketBuf> = (0..7).map(|_| PacketBuf::new()).collect();
        r.rx_batch(&mut b[..2]).unwrap();
        r.rx_batch(&mut b[2..]).unwrap();
        let firsts: Vec<(u8, usize)> = b.iter().map(|p| (p.data()[0], p.len())).collect();
        assert_eq!(firsts, [(1, 10), (2, 150), (3, 300), (1, 10), (2, 150), (3, 300), (1, 10)]);
        let mut r = Replay::new(vec![vec![4; 100], vec![5; 190]]);
        r.rx_batch(&mut b[..3]).unwrap();
        assert_eq!((b[0].data(), b[1].data(), b[2].data()), (&[4; 100][..], &[5; 190][..], &[4; 100][..]));
        // Blocks of 80 bytes (the longest frame, 70, rounded up to 16).
        let mut r = Replay::new(vec![vec![6; 70], vec![7; 33]]);
        r.rx_batch(&mut b[..3]).unwrap();
        assert_eq!((b[0].data(), b[1].data(), b[2].data()), (&[6; 70][..], &[7; 33][..], &[6; 70][..]));
        let mut empty = Replay::new(vec![]);
        assert_eq!(empty.rx_batch(&mut b).unwrap(), 0);
    }

    /// The AVX copy and the portable one load the same frames, for every block size
    /// (each frame's bytes differ, so a misplaced chunk shows).
    #[test]
    fn avx_and_portable_copies_agree() {
        for longest in (1..=12).map(|k| 16 * k).chain([17, 95, 191, 192, 193]) {
            let frames: Vec<Vec<u8>> = [longest, longest / 2, 1]
                .iter()
                .enumerate()
                .map(|(j, &n)| (0..n).map(|i| (i * 31 + j * 7 + 1) as u8).collect())
                .collect();
            for avx in [false, true] {
                let mut r = Replay::new(frames.clone());
                if avx && !r.avx {
                    eprintln!("skipped: no AVX on this CPU");
                    continue;
                }
                r.avx = avx;
                let mut b: Vec<PacketBuf> = (0..4).map(|_| PacketBuf::new()).collect();
                assert_eq!(r.rx_batch(&mut b).unwrap(), 4);
                for (p, f) in b.iter().zip(frames.iter().cycle()) {
                    assert_eq!(p.data(), &f[..], "longest {longest}, avx {avx}");
                    assert_eq!(p.headroom(), sr6_core::packet::HEADROOM);
                }
            }
        }
    }
}
