//! The fast path: the common IPv6 cases handled in one pass over fixed offsets, with
//! every lookup done *before* the packet is touched, so that anything unusual returns
//! `None` with the frame unchanged and takes the general path ([`super::forward`] and
//! [`crate::behaviour`]), which stays the reference: a differential test
//! (`crates/sr6/tests/fast_path.rs`) checks both give the same bytes, verdicts and
//! counters.
//!
//! Handled here: transit forwarding (RFC 8200 §3); End, End.X, End.T without flavours
//! on an SRH that directly follows the IPv6 header, has no TLVs and needs no HMAC (RFC
//! 8986 §4.1-§4.3); End.DX6 and End.DT6 on such an SRH with Segments Left 0 and an inner
//! IPv6 packet (§4.4, §4.6); H.Encaps / H.Encaps.Red without per-packet HMAC and H.Insert
//! / H.Insert.Red without HMAC (§5.1, §5.2). Everything else — errors, ICMP, local
//! delivery, on-the-wire oddities — goes to the general path.

use super::Worker;
use crate::packet::{DevId, PacketBuf, Verdict};
use crate::spec::Seg6Mode;
use crate::tables::{NextHop, Route, SidOp, Tables};

/// Ethernet header length.
const E: usize = 14;
/// Where the SRH starts when it directly follows the IPv6 header.
const S: usize = E + 40;

/// Resolves a next hop to its device and Ethernet addresses (`dst` for on-link).
#[inline(always)]
fn resolve(t: &Tables, nh: NextHop, dst: &[u8; 16]) -> Option<(DevId, [u8; 12])> {
    match nh {
        NextHop::Adj(i) => {
            let a = t.adjacencies.get(i as usize)?;
            Some((a.dev, a.eth?))
        }
        NextHop::OnLink(d) => Some((d, t.neighbour_eth(d, u128::from_be_bytes(*dst))?)),
    }
}

/// The adjacency a FIB sends `dst` to, if that is a plain route.
#[inline(always)]
fn route_to(t: &Tables, table: u32, dst: &[u8; 16]) -> Option<(DevId, [u8; 12])> {
    match t.fibs.get(table as usize)?.lookup6(dst)? {
        Route::Forward(nh) => resolve(t, nh, dst),
        _ => None,
    }
}

#[inline(always)]
fn addr(f: &[u8], at: usize) -> Option<[u8; 16]> {
    f.get(at..at + 16)?.try_into().ok()
}

/// Tries the fast path on a received Ethernet frame; `None` leaves it untouched.
#[inline]
pub fn try6(t: &Tables, w: &mut Worker, p: &mut PacketBuf) -> Option<Verdict> {
    let dev = t.devices.get(p.in_dev as usize)?;
    let f = p.data();
    let len = f.len();
    let h: &[u8; S] = f.get(..S)?.try_into().ok()?;
    if h[12] != 0x86 || h[13] != 0xdd || h[E] >> 4 != 6 || !dev.forwarding6 {
        return None;
    }
    // No Ethernet padding, nothing truncated.
    if S + usize::from(u16::from_be_bytes([h[E + 4], h[E + 5]])) != len {
        return None;
    }
    let hl = h[E + 7];
    if hl <= 1 {
        return None;
    }
    let dst = addr(f, E + 24)?;
    if dst[0] == 0xff || (dst[0] == 0xfe && dst[1] & 0xc0 == 0x80) {
        return None;
    }
    match t.fibs.first()?.lookup6(&dst)? {
        Route::Forward(nh) => {
            let (out, eth) = resolve(t, nh, &dst)?;
            let f = p.data_mut();
            f[E + 7] = hl - 1;
            f[..12].copy_from_slice(&eth);
            Some(Verdict::Tx(out))
        }
        Route::Sid(i) => sid(t, w, p, i, hl, dev.require_hmac),
        Route::Policy(i) => policy(t, w, p, i, hl),
        _ => None,
    }
}

fn sid(t: &Tables, w: &mut Worker, p: &mut PacketBuf, i: u32, hl: u8, require_hmac: i8) -> Option<Verdict> {
    let s = t.sids.get(i as usize)?;
    let f = p.data();
    let len = f.len();
    if f[E + 6] != sr6_wire::IPPROTO_ROUTING {
        return None;
    }
    let srh: &[u8; 8] = f.get(S..S + 8)?.try_into().ok()?;
    if srh[2] != sr6_wire::srh::ROUTING_TYPE_SRH {
        return None;
    }
    let srh_len = (usize::from(srh[1]) + 1) * 8;
    let (sl, le) = (srh[3], srh[4]);
    // No TLV area (so Last Entry fills the header exactly and no HMAC is present), and
    // no HMAC required (RFC 8754 §2.1.2.1 / seg6_require_hmac).
    if S + srh_len > len || 8 + 16 * (usize::from(le) + 1) != srh_len || require_hmac > 0 {
        return None;
    }
    let (out, eth) = match s.op {
        SidOp::End | SidOp::EndX { .. } | SidOp::EndT { .. } if sl > 0 && s.flavors.is_empty() => {
            if u16::from(sl) > u16::from(le) + 1 {
                return None;
            }
            let seg = S + 8 + 16 * usize::from(sl - 1);
            let nda = addr(f, seg)?;
            let (out, eth) = match s.op {
                SidOp::EndX { nh } => resolve(t, nh, &nda)?,
                SidOp::EndT { table } => route_to(t, table, &nda)?,
                _ => route_to(t, Tables::MAIN, &nda)?,
            };
            // RFC 8986 §4.1 S12-S14.
            let f = p.data_mut();
            f[E + 7] = hl - 1;
            f[S + 3] = sl - 1;
            f.copy_within(seg..seg + 16, E + 24);
            f[..12].copy_from_slice(&eth);
            (out, eth)
        }
        SidOp::EndDx6 { .. } | SidOp::EndDt6 { .. } if sl == 0 && srh[0] == 41 => {
            let inner = S + srh_len;
            let ih: &[u8; 40] = f.get(inner..inner + 40)?.try_into().ok()?;
            let ihl = ih[7];
            if ih[0] >> 4 != 6 || inner + 40 + usize::from(u16::from_be_bytes([ih[4], ih[5]])) != len || ihl <= 1 {
                return None;
            }
            let ida = addr(f, inner + 24)?;
            let (out, eth) = match s.op {
                SidOp::EndDx6 { nh } => resolve(t, nh, &ida)?,
                SidOp::EndDt6 { table } => route_to(t, table, &ida)?,
                _ => return None,
            };
            // RFC 8986 §4.4 S03-S05: drop the outer header and the SRH; forward.
            if !p.pull_front(inner - E) {
                return None;
            }
            let f = p.data_mut();
            f[..12].copy_from_slice(&eth);
            f[12..14].copy_from_slice(&[0x86, 0xdd]);
            f[E + 7] = ihl - 1;
            (out, eth)
        }
        _ => return None,
    };
    let _ = eth;
    if let Some(c) = w.counters.sids.get_mut(i as usize) {
        c.packets += 1;
        c.bytes += (len - E) as u64;
    }
    Some(Verdict::Tx(out))
}

fn policy(t: &Tables, w: &mut Worker, p: &mut PacketBuf, i: u32, hl: u8) -> Option<Verdict> {
    let pol = t.policies.get(i as usize)?;
    let encap = match pol.mode {
        Seg6Mode::Encap | Seg6Mode::EncapRed if pol.hmac_key_id.is_none() || pol.hmac_ready => true,
        Seg6Mode::Inline | Seg6Mode::InlineRed if pol.hmac_key_id.is_none() => false,
        _ => return None,
    };
    let (out, eth) = route_to(t, Tables::MAIN, &pol.first)?;
    let srh_len = pol.srh.len();
    let inner_len = p.len() - E;
    if srh_len + inner_len > usize::from(u16::MAX) || (!encap && srh_len == 0) {
        return None;
    }
    if encap {
        // RFC 8986 §5.1 with Linux's outer fields (seg6_do_srh_encap).
        let f = p.data();
        let (b0, b1, b2, b3) = (f[E], f[E + 1], f[E + 2], f[E + 3]);
        if !p.push_front(40 + srh_len) {
            return None;
        }
        let f = p.data_mut();
        f[..12].copy_from_slice(&eth);
        f[12..14].copy_from_slice(&[0x86, 0xdd]);
        f[E..E + 4].copy_from_slice(&[b0, b1, b2, b3]);
        f[E + 4..E + 6].copy_from_slice(&((srh_len + inner_len) as u16).to_be_bytes());
        f[E + 6] = if srh_len > 0 { sr6_wire::IPPROTO_ROUTING } else { 41 };
        f[E + 7] = hl - 1;
        f[E + 8..E + 24].copy_from_slice(&pol.src);
        f[E + 24..E + 40].copy_from_slice(&pol.first);
        if srh_len > 0 {
            f[S..S + srh_len].copy_from_slice(&pol.srh);
            f[S] = 41;
        }
    } else {
        // H.Insert: only the Ethernet + IPv6 headers move.
        if !p.open_gap(S, srh_len) {
            return None;
        }
        let f = p.data_mut();
        f[..12].copy_from_slice(&eth);
        f[S..S + srh_len].copy_from_slice(&pol.srh);
        f[S] = f[E + 6];
        f.copy_within(E + 24..E + 40, S + 8);
        f[E + 6] = sr6_wire::IPPROTO_ROUTING;
        f[E + 7] = hl - 1;
        let plen = u16::from_be_bytes([f[E + 4], f[E + 5]]) + srh_len as u16;
        f[E + 4..E + 6].copy_from_slice(&plen.to_be_bytes());
        f[E + 24..E + 40].copy_from_slice(&pol.first);
    }
    if let Some(c) = w.counters.policies.get_mut(i as usize) {
        *c += 1;
    }
    Some(Verdict::Tx(out))
}
