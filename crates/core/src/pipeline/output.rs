//! The last step: prepend the Ethernet header of the next hop and pick the device.

use super::ETH_LEN;
use crate::drop::DropReason;
use crate::packet::{DevId, PacketBuf, Verdict};
use crate::tables::{neigh_key, NextHop, Tables};
use sr6_wire::EthernetFrame;

/// Prepends the Ethernet header towards `nh` to the L3 packet in `p`. `dst` is the
/// neighbour key of the packet's destination (used for on-link routes).
#[inline]
pub fn emit(t: &Tables, p: &mut PacketBuf, nh: NextHop, dst: u128, ethertype: u16) -> Verdict {
    let (dev, eth, key) = match link(t, nh, dst) {
        Ok(l) => l,
        Err(r) => return Verdict::Drop(r),
    };
    let Some(eth) = eth else {
        if t.resolve_neighbours {
            // Live: the packet waits for neighbour discovery (RFC 4861 §7.2.2 queues
            // it the same way) instead of being dropped.
            p.nh_key = key;
            return Verdict::Resolve(dev);
        }
        return Verdict::Drop(DropReason::NoNeighbour);
    };
    if !p.push_front(ETH_LEN) {
        return Verdict::Drop(DropReason::NoHeadroom);
    }
    let mut f = EthernetFrame::new_unchecked(p.data_mut());
    f.set_addrs(&eth);
    f.set_ethertype(ethertype);
    Verdict::Tx(dev)
}

/// The device towards `nh`, its Ethernet addresses if known, and the neighbour key to
/// resolve them by. `dst` is the neighbour key of the packet's destination (used for
/// on-link routes).
#[inline]
pub fn link(t: &Tables, nh: NextHop, dst: u128) -> Result<(DevId, Option<[u8; 12]>, u128), DropReason> {
    Ok(match nh {
        NextHop::Adj(i) => match t.adjacencies.get(i as usize) {
            Some(a) => (a.dev, a.eth, neigh_key(a.nh)),
            None => return Err(DropReason::NoNeighbour),
        },
        NextHop::OnLink(d) => (d, t.neighbour_eth(d, dst), dst),
    })
}

/// Delivers the L3 packet in `p` to the host: an Ethernet header with the MAC addresses
/// the frame arrived with is put in front.
#[inline]
pub fn local(p: &mut PacketBuf, rx_macs: &[u8; 12], ethertype: u16) -> Verdict {
    if !p.push_front(ETH_LEN) {
        return Verdict::Drop(DropReason::NoHeadroom);
    }
    let mut f = EthernetFrame::new_unchecked(p.data_mut());
    f.set_addrs(rx_macs);
    f.set_ethertype(ethertype);
    Verdict::Local
}
