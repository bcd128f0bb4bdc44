//! zebra's Forwarding Plane Manager stream: what FRR's `dplane_fpm_nl` module sends a
//! data plane over TCP (zebra connects; port 2620 by default), instead of — or beside —
//! installing routes in the kernel.
//!
//! The stream is a sequence of frames, each a 4-byte header — version 1, message type
//! (1: netlink; 2, protobuf, is not `dplane_fpm_nl`'s), the frame's length in bytes
//! with the header, big-endian 16 bits — then that many bytes less four of payload: one
//! or more netlink messages, `RTM_NEWROUTE`/`RTM_DELROUTE` and, with zebra's `fpm
//! use-next-hop-groups`, `RTM_NEWNEXTHOP`/`RTM_DELNEXTHOP`, as zebra would send them
//! to the kernel. They decode with the kernel mirror's own decoder
//! ([`super::RouteMonitor`]'s), into the same [`RouteEvent`]s: one decoder for both
//! ways of following a routing daemon.
//!
//! [`FpmStream`] frames what a connection delivers, in whatever pieces it arrives.

use super::decode::frames;
use super::route_monitor::{route_event, RouteEvent};

/// The port zebra's `fpm address A` connects to when the line names none.
pub const DEFAULT_PORT: u16 = 2620;
/// `FPM_PROTO_VERSION`.
const VERSION: u8 = 1;
/// `FPM_MSG_TYPE_NETLINK`.
const TYPE_NETLINK: u8 = 1;
/// The frame header's length.
const HEADER: usize = 4;

/// The frames of one FPM connection: bytes in ([`feed`](Self::feed)), route events out.
#[derive(Debug, Default)]
pub struct FpmStream {
    /// Bytes received and not yet part of a complete frame.
    pending: Vec<u8>,
    /// Frames decoded so far.
    pub frames: u64,
}

impl FpmStream {
    pub fn new() -> FpmStream {
        FpmStream::default()
    }

    /// Takes `bytes` as they came from the connection and returns the events of every
    /// frame they complete, in order. A netlink message that does not decode is an
    /// [`RouteEvent::Undecodable`] and the rest of its frame is skipped; a frame of
    /// another type than netlink is skipped whole. `Err` when the stream cannot be
    /// framed any more (a version other than 1, a length under the header's): the
    /// caller closes the connection, zebra reconnects and sends everything again.
    pub fn feed(&mut self, bytes: &[u8]) -> Result<Vec<RouteEvent>, String> {
        self.pending.extend_from_slice(bytes);
        let mut events = Vec::new();
        let mut at = 0;
        while let Some(h) = self.pending.get(at..at + HEADER) {
            let (version, ty, len) = (h[0], h[1], usize::from(u16::from_be_bytes([h[2], h[3]])));
            if version != VERSION {
                return Err(format!("FPM frame of version {version}, not {VERSION}"));
            }
            if len < HEADER {
                return Err(format!("FPM frame of {len} bytes, shorter than its header"));
            }
            let Some(frame) = self.pending.get(at + HEADER..at + len) else { break };
            self.frames += 1;
            if ty == TYPE_NETLINK {
                for m in frames(frame) {
                    match m {
                        Ok(f) => events.extend(route_event(f)),
                        Err(e) => events.push(RouteEvent::Undecodable(e)),
                    }
                }
            }
            at += len;
        }
        self.pending.drain(..at);
        Ok(events)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::netlink::route::nla;

    /// A netlink message `ty` (`RTM_NEWROUTE`/`RTM_DELROUTE`) for IPv6 prefix
    /// `dst`/`len` out of ifindex 2, as zebra sends it (protocol zebra, table main).
    fn route_msg(ty: u16, dst: &str, len: u8) -> Vec<u8> {
        // struct rtmsg: family, dst_len, src_len, tos, table, protocol, scope, type, flags.
        let mut body = vec![libc::AF_INET6 as u8, len, 0, 0, 254, 11, 0, 1, 0, 0, 0, 0];
        body.extend(nla(1, &dst.parse::<std::net::Ipv6Addr>().unwrap().octets()));
        body.extend(nla(4, &2u32.to_ne_bytes()));
        let mut m = ((16 + body.len()) as u32).to_ne_bytes().to_vec();
        m.extend_from_slice(&ty.to_ne_bytes());
        m.extend_from_slice(&[0; 10]);
        m.extend(body);
        m
    }

    /// An FPM frame around `payload`.
    fn frame(payload: &[u8]) -> Vec<u8> {
        let len = (HEADER + payload.len()) as u16;
        let mut f = vec![VERSION, TYPE_NETLINK];
        f.extend_from_slice(&len.to_be_bytes());
        f.extend_from_slice(payload);
        f
    }

    #[test]
    fn frames_in_pieces_and_messages_per_frame() {
        let (a, b) = (route_msg(libc::RTM_NEWROUTE, "fc00:1::", 48), route_msg(libc::RTM_DELROUTE, "fc00:2::", 64));
        let mut two = a.clone();
        two.extend_from_slice(&b);
        let mut bytes = frame(&two);
        bytes.extend(frame(&a));
        // Byte by byte: nothing until a frame is whole.
        let mut s = FpmStream::new();
        let mut got = Vec::new();
        for byte in &bytes {
            got.extend(s.feed(std::slice::from_ref(byte)).unwrap());
        }
        assert_eq!(s.frames, 2);
        let kinds: Vec<(bool, String)> = got
            .iter()
            .map(|e| match e {
                RouteEvent::New(r) => (true, format!("{}/{}", r.dst, r.prefix_len)),
                RouteEvent::Del(r) => (false, format!("{}/{}", r.dst, r.prefix_len)),
                other => panic!("{other:?}"),
            })
            .collect();
        let want = [(true, "fc00:1::/48"), (false, "fc00:2::/64"), (true, "fc00:1::/48")];
        assert_eq!(kinds, want.map(|(n, p)| (n, p.to_string())));
    }

    #[test]
    fn other_types_are_skipped_and_bad_headers_refused() {
        let mut s = FpmStream::new();
        let mut protobuf = frame(&[1, 2, 3, 4]);
        protobuf[1] = 2;
        protobuf.extend(frame(&route_msg(libc::RTM_NEWROUTE, "fc00:1::", 48)));
        assert_eq!(s.feed(&protobuf).unwrap().len(), 1, "the netlink frame after it is read");
        assert!(s.feed(&[2, 1, 0, 8, 0, 0, 0, 0]).unwrap_err().contains("version 2"));
        assert!(FpmStream::new().feed(&[1, 1, 0, 3]).unwrap_err().contains("shorter than its header"));
        let garbage = frame(&[0xff; 20]);
        assert!(matches!(FpmStream::new().feed(&garbage).unwrap()[..], [RouteEvent::Undecodable(_)]));
    }

    proptest::proptest! {
        /// No input panics, and the bytes fed in any pieces give the same events.
        #[test]
        fn any_bytes_any_pieces(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..600),
                                cut in 0usize..600) {
            let whole = FpmStream::new().feed(&bytes);
            let mut s = FpmStream::new();
            let cut = cut.min(bytes.len());
            let first = s.feed(&bytes[..cut]);
            let pieces = first.and_then(|mut a| s.feed(&bytes[cut..]).map(|b| { a.extend(b); a }));
            proptest::prop_assert_eq!(whole.is_ok(), pieces.is_ok());
            if let (Ok(w), Ok(p)) = (&whole, &pieces) {
                proptest::prop_assert_eq!(w, p);
            }
        }
    }
}
