//! Why a packet was dropped. Every drop in the data plane has exactly one reason, and is
//! counted under it ([`crate::counters`]); nothing is logged or raised per packet.

macro_rules! drop_reasons {
    ($($variant:ident => $name:literal, $doc:literal;)*) => {
        /// The reasons a packet is dropped.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[repr(u8)]
        pub enum DropReason {
            $(#[doc = $doc] $variant,)*
        }

        impl DropReason {
            /// Every reason, in counter order.
            pub const ALL: &'static [DropReason] = &[$(DropReason::$variant,)*];
            /// Number of reasons.
            pub const COUNT: usize = Self::ALL.len();

            /// The snake_case name used in counters output.
            pub fn name(self) -> &'static str {
                match self { $(DropReason::$variant => $name,)* }
            }

            /// A sentence for humans.
            pub fn describe(self) -> &'static str {
                match self { $(DropReason::$variant => $doc,)* }
            }
        }
    };
}

drop_reasons! {
    Malformed => "malformed", "a header is truncated or inconsistent";
    TooBig => "too_big", "frame larger than the buffer";
    NoRoute => "no_route", "no route to the destination";
    Blackhole => "blackhole", "blackhole route";
    NoNeighbour => "no_neighbour", "no link-layer address for the next hop";
    HopLimit => "hop_limit", "hop limit / TTL expired (ICMP Time Exceeded sent)";
    ParamProblem => "param_problem", "erroneous header field (ICMP Parameter Problem sent)";
    HmacInvalid => "hmac_invalid", "HMAC missing, unknown key id, or wrong (RFC 8754 §2.1.2.1)";
    Seg6Disabled => "seg6_disabled", "SRH received on a device with seg6_enabled=0";
    ForwardingDisabled => "forwarding_disabled", "forwarding is disabled for this address family";
    NoHeadroom => "no_headroom", "no headroom left to push headers";
    WrongNextHeader => "wrong_next_header", "the payload type does not fit the behaviour";
    Fragment => "fragment", "non-first fragment cannot be processed by the behaviour";
    MtuExceeded => "mtu_exceeded", "larger than the egress device's MTU (ICMP Packet Too Big / Fragmentation Needed sent)";
    NeedsFragmentation => "needs_fragmentation", "IPv4 without DF larger than the egress MTU that is not fragmented: carried in an encapsulation this router added (as Linux), or an MTU below its header + 8 bytes";
    MartianSource => "martian_source", "source no router accepts: loopback, multicast, unspecified, IPv4 limited broadcast or one of the router's own IPv4 addresses (RFC 4291 §2.5.3, §2.7; RFC 1812 §5.3.7)";
    MartianDestination => "martian_destination", "destination no router accepts from a link: loopback, IPv6 multicast of scope 0 or 1, IPv4 0.0.0.0 (RFC 4291 §2.5.3, §2.7; RFC 1812 §5.3.7)";
    ScopeSource => "scope_source", "link-local or unspecified IPv6 source toward another link (RFC 4291 §2.5.6)";
    HbhMalformed => "hbh_malformed", "Hop-by-Hop Options header truncated, an option overrunning it, over 7 bytes of padding in a row or non-zero PadN, Router Alert / IOAM / Jumbo Payload of the wrong length or alignment (RFC 8200 §4.2, §4.3; as Linux)";
    HbhTooManyOptions => "hbh_too_many_options", "more than 8 non-padding Hop-by-Hop options (Linux's net.ipv6.max_hbh_opts_number)";
    HbhUnknownOption => "hbh_unknown_option", "Hop-by-Hop option of an unknown type whose action bits say discard: 01, 10, 11 (ICMP Parameter Problem code 2 sent for 10, and for 11 unless the destination is multicast; RFC 8200 §4.2)";
    HbhJumbo => "hbh_jumbo", "Jumbo Payload option, or Payload Length 0 before a Hop-by-Hop header: sr6 carries no jumbograms (ICMP Parameter Problem code 0 sent where RFC 2675 §3 asks for one)";
    HbhCalipso => "hbh_calipso", "CALIPSO option: no CALIPSO domain of interpretation is configured, so none is valid (RFC 5570; as Linux without one)";
    ProxyCacheEmpty => "proxy_cache_empty", "returned by a service function to an End.AD/End.EAD proxy whose cache holds no headers yet (draft-ietf-spring-sr-service-programming §6.2)";
    ProxyHeadersTooLong => "proxy_headers_too_long", "at an End.AD/End.EAD proxy, outer IPv6 + extension headers over the 384 bytes its cache (and a buffer's headroom) can restore";
    ProxyCacheBusy => "proxy_cache_busy", "returned to an End.AD/End.EAD proxy while its cache was being rewritten, and still after 64 reads";
    IdsDrop => "ids_drop", "a `drop` rule of the IDS matched it in IPS mode (docs/ids.md)";
    Firewall => "firewall", "a firewall rule (ip6tables) or chain policy dropped or rejected it, or its SEG6 action could not apply (no valid SRH, too few segments left)";
    Prohibited => "prohibited", "a policy rule's `prohibit` (ICMP Destination Unreachable, administratively prohibited, sent)";
    BpfInvalidSrh => "bpf_invalid_srh", "at an End.BPF SID: no valid SRH with Segments Left above 0 on arrival, or an SRH the program left invalid (its length, Last Entry or TLVs; net/ipv6/seg6_local.c)";
    BpfDrop => "bpf_drop", "an End.BPF program returned BPF_DROP, or a value other than BPF_OK and BPF_REDIRECT";
    BpfError => "bpf_error", "an End.BPF program was aborted (an access out of what it was given, its instruction budget) or returned BPF_REDIRECT without choosing a route with bpf_lwt_seg6_action";
    LwtBpfDrop => "lwt_bpf_drop", "a route's LWT BPF program (`encap bpf in|out|xmit`) returned BPF_DROP or a value the kernel does not take (net/core/lwt_bpf.c)";
    LwtBpfError => "lwt_bpf_error", "a route's LWT BPF program was aborted (an access out of what it was given, its instruction budget), returned BPF_OK from `xmit` after changing the packet's protocol, BPF_REDIRECT from `xmit` (no bpf_redirect target), or rerouted to no IP packet or too many times";
    RateLimited => "rate_limited", "over the rate of its group at an End.Limit SID (RFC 9433 §6.8): its token bucket was empty";
    NotGtpu => "not_gtpu", "to an H.M.GTP4.D address, End.M.GTP6.D/.Di SID or GTP-U decap address but not UDP to port 2152 (RFC 9433 §6.7 S09, §6.3 S11)";
    GtpuMalformed => "gtpu_malformed", "GTP-U truncated, not version 1 with PT 1, its Length not the UDP length, a bad extension header length, or a UDP checksum that does not verify (3GPP TS 29.281 §5)";
    GtpuSignalling => "gtpu_signalling", "GTP-U message other than a T-PDU that cannot cross SRv6 at H.M.GTP4.D or End.M.GTP6.D/.Di (a type other than Echo Request/Response, Error Indication, End Marker, or an Error Indication with over 251 bytes of IEs), or, at a GTP-U decap address, any but an Echo Request (answered)";
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_snake_case() {
        let mut names: Vec<_> = DropReason::ALL.iter().map(|r| r.name()).collect();
        assert!(names.iter().all(|n| n.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')));
        names.sort();
        names.dedup();
        assert_eq!(names.len(), DropReason::COUNT);
        for (i, r) in DropReason::ALL.iter().enumerate() {
            assert_eq!(*r as usize, i);
        }
    }
}
