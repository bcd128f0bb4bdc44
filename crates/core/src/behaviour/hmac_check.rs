//! SRH HMAC verification by the ingress device's `seg6_require_hmac`
//! (RFC 8754 §2.1.2.1; Linux `seg6_hmac_validate_skb`):
//! -1 never verify; 0 verify when an HMAC TLV is present; 1 an HMAC TLV is required.
//! The TLV is found by walking the TLVs (RFC 8754 §2.1), whatever the SRH flags say.

use crate::packet::PacketBuf;
use crate::tables::Tables;
use sr6_wire::{find_hmac, Ipv6Packet, RoutingInfo, SrhPacket};

/// True when the packet passes the HMAC policy of its ingress device.
pub fn verify(t: &Tables, p: &PacketBuf, r: &RoutingInfo) -> bool {
    let require = t.devices.get(p.in_dev as usize).map_or(0, |d| d.require_hmac);
    if require < 0 {
        return true;
    }
    let d = p.data();
    let Some(srh) = d.get(r.offset..r.offset + r.len) else {
        return false;
    };
    let srh = SrhPacket::new_unchecked(srh);
    // No TLV area, or a Segment List that overruns the header (the SRH checks answer
    // that with a Parameter Problem): the area is empty, no HMAC TLV is found, and only
    // "required" fails here.
    match find_hmac(srh.tlv_area()) {
        Ok(None) => require == 0,
        Err(_) => false,
        Ok(Some((_, tlv))) => {
            let key_id = tlv.key_id();
            let Some(key) = t.hmac.keys.get(&key_id) else {
                return false;
            };
            let src = Ipv6Packet::new_unchecked(d).src_addr().octets();
            key.verify(&src, srh.last_entry(), srh.flags(), key_id, srh.segment_list(), tlv.hmac())
        }
    }
}
