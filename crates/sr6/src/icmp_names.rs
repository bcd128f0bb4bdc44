//! Names of ICMP messages for `sr6 dump` and reports: "ICMP6 time exceeded: hop limit
//! exceeded in transit (type 3 code 0)" instead of bare numbers. ICMPv6: RFC 4443 §3
//! (errors) and §4 (echo), RFC 7112 §5 (Parameter Problem code 3), RFC 4861 §4
//! (neighbour discovery), RFC 2710 / RFC 3810 (MLD). ICMPv4: RFC 792, RFC 1812 §5.2.7.1
//! (codes 9-15 of Destination Unreachable). The numbers are always printed as well.

/// `NAME[: CODE NAME] (type T code C)` for an ICMPv6 message.
pub fn icmpv6(t: u8, c: u8) -> String {
    let (name, code) = match t {
        1 => (
            "destination unreachable",
            match c {
                0 => "no route to destination",
                1 => "communication with destination administratively prohibited",
                2 => "beyond scope of source address",
                3 => "address unreachable",
                4 => "port unreachable",
                5 => "source address failed ingress/egress policy",
                6 => "reject route to destination",
                _ => "",
            },
        ),
        2 => ("packet too big", ""),
        3 => (
            "time exceeded",
            match c {
                0 => "hop limit exceeded in transit",
                1 => "fragment reassembly time exceeded",
                _ => "",
            },
        ),
        4 => (
            "parameter problem",
            match c {
                0 => "erroneous header field encountered",
                1 => "unrecognized next header type encountered",
                2 => "unrecognized IPv6 option encountered",
                3 => "first fragment has incomplete header chain",
                _ => "",
            },
        ),
        128 => ("echo request", ""),
        129 => ("echo reply", ""),
        130 => ("multicast listener query", ""),
        131 => ("multicast listener report", ""),
        132 => ("multicast listener done", ""),
        133 => ("router solicitation", ""),
        134 => ("router advertisement", ""),
        135 => ("neighbor solicitation", ""),
        136 => ("neighbor advertisement", ""),
        137 => ("redirect", ""),
        143 => ("multicast listener report v2", ""),
        _ => ("", ""),
    };
    named("ICMP6", name, code, t, c)
}

/// `NAME[: CODE NAME] (type T code C)` for an ICMPv4 message.
pub fn icmpv4(t: u8, c: u8) -> String {
    let (name, code) = match t {
        0 => ("echo reply", ""),
        3 => (
            "destination unreachable",
            match c {
                0 => "net unreachable",
                1 => "host unreachable",
                2 => "protocol unreachable",
                3 => "port unreachable",
                4 => "fragmentation needed and DF set",
                5 => "source route failed",
                6 => "destination network unknown",
                7 => "destination host unknown",
                9 => "network administratively prohibited",
                10 => "host administratively prohibited",
                13 => "communication administratively prohibited",
                _ => "",
            },
        ),
        5 => ("redirect", ""),
        8 => ("echo request", ""),
        11 => (
            "time exceeded",
            match c {
                0 => "time to live exceeded in transit",
                1 => "fragment reassembly time exceeded",
                _ => "",
            },
        ),
        12 => ("parameter problem", ""),
        _ => ("", ""),
    };
    named("ICMP", name, code, t, c)
}

fn named(proto: &str, name: &str, code: &str, t: u8, c: u8) -> String {
    match (name, code) {
        ("", _) => format!("{proto} type {t} code {c}"),
        (n, "") => format!("{proto} {n} (type {t} code {c})"),
        (n, k) => format!("{proto} {n}: {k} (type {t} code {c})"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_numbers() {
        assert_eq!(icmpv6(3, 0), "ICMP6 time exceeded: hop limit exceeded in transit (type 3 code 0)");
        assert_eq!(icmpv6(128, 0), "ICMP6 echo request (type 128 code 0)");
        assert_eq!(icmpv6(1, 9), "ICMP6 destination unreachable (type 1 code 9)");
        assert_eq!(icmpv6(200, 1), "ICMP6 type 200 code 1");
        assert_eq!(icmpv4(11, 0), "ICMP time exceeded: time to live exceeded in transit (type 11 code 0)");
        assert_eq!(icmpv4(99, 0), "ICMP type 99 code 0");
    }
}
