//! IPv4 fragmentation (RFC 791 §3.2, RFC 1812 §5.2.6) of a forwarded packet without
//! Don't Fragment that exceeds its egress MTU, as Linux's `ip_do_fragment` does it, so
//! that the fragments are byte for byte the kernel's:
//!
//! - sent in order, first fragment first; each carries `MTU - header` bytes rounded
//!   down to a multiple of 8, the last what is left (which may be more than the others,
//!   up to `MTU - header`, and as little as one byte);
//! - every fragment has the received header (the TTL already decremented by the
//!   forwarding step), its Identification, Total Length and Fragment Offset set, MF on
//!   all but the last — on the last too when the packet was itself a fragment that was
//!   not the last — and the header checksum computed anew;
//! - options: the first fragment has them all; in the later ones an option whose copied
//!   flag is clear is overwritten with No Operation options (the header keeps its
//!   length). A packet that was itself a later fragment (offset not 0) keeps its header
//!   as received in every fragment: its options were already reduced.
//!
//! The fragments go to the worker's [`ExtraFrames`](super::extra::ExtraFrames); the
//! received buffer's verdict becomes [`Verdict::Fragmented`]. Only the general path
//! gets here: the fast path declines every frame that could exceed an MTU.

use super::{output, Next, Worker};
use crate::drop::DropReason;
use crate::packet::{PacketBuf, Verdict};
use crate::tables::{NextHop, Tables};
use sr6_wire::ipv4::{FLAG_DF, FLAG_MF, FRAG_OFFSET_MASK};
use sr6_wire::Ipv4Packet;

/// The longest IPv4 header (IHL 15).
const MAX_HEADER: usize = 60;

/// True when the IPv4 packet in `p` may be fragmented: Don't Fragment is clear.
#[inline]
pub fn allowed(p: &PacketBuf) -> bool {
    let d = p.data();
    d.len() >= Ipv4Packet::<&[u8]>::HEADER_LEN && Ipv4Packet::new_unchecked(d).flags_frag() & FLAG_DF == 0
}

/// Splits the IPv4 packet `packet` into fragments of at most `mtu` bytes, calling
/// `out(header, data)` for each in the order they are sent; `out` returns false to stop
/// (nothing more is emitted). Returns the number of fragments, or `None` when the packet
/// cannot be split: its header is not valid (`Ipv4Packet::check_len`), `mtu` leaves fewer
/// than 8 bytes of data after the header, or `out` stopped. Bytes after Total Length are
/// not sent (Ethernet padding). A packet that fits is one "fragment": itself, with its
/// header checksum recomputed.
pub fn split(packet: &[u8], mtu: usize, mut out: impl FnMut(&[u8], &[u8]) -> bool) -> Option<usize> {
    let ip = Ipv4Packet::new_checked(packet).ok()?;
    let (hlen, total) = (ip.header_len(), usize::from(ip.total_len()));
    let room = mtu.checked_sub(hlen).filter(|r| *r >= 8)?;
    let flags_frag = ip.flags_frag();
    let first_offset = usize::from(flags_frag & FRAG_OFFSET_MASK) * 8;
    let not_last = flags_frag & FLAG_MF != 0;
    let data = packet.get(hlen..total)?;

    let mut head = [0u8; MAX_HEADER];
    let hdr = head.get_mut(..hlen)?;
    hdr.copy_from_slice(ip.header());
    let mut ptr = 0;
    let mut n = 0;
    loop {
        let left = data.len() - ptr;
        let mut len = left.min(room);
        if len < left {
            len &= !7;
        }
        let more = len < left || not_last;
        let offset = first_offset + ptr;
        let mut h = Ipv4Packet::new_unchecked(&mut *hdr);
        // As the kernel's `htons(offset >> 3)`: an offset past 16 bits (a bogus received
        // offset) wraps the same way.
        h.set_flags_frag((offset >> 3) as u16 | if more { FLAG_MF } else { 0 });
        h.set_total_len((len + hlen) as u16);
        h.fill_checksum();
        if !out(h.header(), data.get(ptr..ptr + len)?) {
            return None;
        }
        n += 1;
        if n == 1 && first_offset == 0 {
            Ipv4Packet::new_unchecked(&mut *hdr).nop_uncopied_options();
        }
        ptr += len;
        if ptr >= data.len() {
            return Some(n);
        }
    }
}

/// Fragments the IPv4 packet in `p` (DF clear, TTL already decremented) for next hop
/// `nh`, whose device has MTU `mtu`: the fragments, with their Ethernet headers, go to
/// [`Worker::extra`] and `p` is [`Verdict::Fragmented`]. When the next hop's link-layer
/// address is not known yet (live), each fragment waits for it as a packet would
/// ([`Verdict::Resolve`]). A packet that cannot be split (an MTU below the header + 8
/// bytes; the fragment store full) is dropped, `needs_fragmentation`.
pub fn send(t: &Tables, w: &mut Worker, p: &mut PacketBuf, nh: NextHop, mtu: usize) -> Next {
    let d = p.data();
    let dst = u128::from(Ipv4Packet::new_unchecked(d).dst_addr().to_ipv6_mapped());
    let (dev, eth, key) = match output::link(t, nh, dst) {
        Ok(l) => l,
        Err(r) => return Next::drop(r),
    };
    let verdict = match eth {
        Some(_) => Verdict::Tx(dev),
        None if t.resolve_neighbours => Verdict::Resolve(dev),
        None => return Next::drop(DropReason::NoNeighbour),
    };
    let extra = &mut w.extra;
    let mark = extra.mark();
    let Some(n) = split(d, mtu, |h, data| extra.push(verdict, key, eth.as_ref(), h, data)) else {
        extra.rollback(mark);
        return Next::drop(DropReason::NeedsFragmentation);
    };
    extra.close_group();
    let c = &mut w.counters;
    c.fragmented += 1;
    c.fragments += n as u64;
    match verdict {
        Verdict::Tx(d) => {
            if let Some(c) = c.tx.get_mut(usize::from(d)) {
                *c += n as u64;
            }
        }
        _ => c.unresolved += n as u64,
    }
    Next::Done(Verdict::Fragmented)
}

#[cfg(test)]
mod tests;
