//! SRH HMAC verification by the ingress device's `seg6_require_hmac`
//! (RFC 8754 §2.1.2.1; Linux `seg6_hmac_validate_skb`):
//! -1 never verify; 0 verify when an HMAC TLV is present; 1 an HMAC TLV is required.
//! The TLV is found by walking the TLVs (RFC 8754 §2.1), whatever the SRH flags say.

use crate::packet::PacketBuf;
use crate::tables::Tables;
use sr6_wire::{find_hmac, RoutingInfo};

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
    let le = srh[4] as usize;
    let tlv_start = 8 + 16 * (le + 1);
    if tlv_start == srh.len() {
        // No TLV area: no HMAC TLV.
        return require == 0;
    }
    let Some(tlvs) = srh.get(tlv_start..) else {
        // The Segment List overruns the header (the SRH checks answer that with a
        // Parameter Problem): no TLV can be found, so only "required" fails here.
        return require == 0;
    };
    match find_hmac(tlvs) {
        Ok(None) => require == 0,
        Err(_) => false,
        Ok(Some((_, tlv))) => {
            let key_id = tlv.key_id();
            let Some(key) = t.hmac.keys.get(&key_id) else {
                return false;
            };
            let mut src = [0u8; 16];
            src.copy_from_slice(&d[8..24]);
            key.verify(&src, srh[4], srh[5], key_id, &srh[8..tlv_start], tlv.hmac())
        }
    }
}
