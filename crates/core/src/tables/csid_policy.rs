//! Segment-list compression at the SR source node (RFC 9800 §7): a head-end's list of
//! full SIDs and a scheme (`csid next|replace lblen L nflen N`) become the 128-bit
//! entries it pushes — the first one the destination, the rest the SRH's Segment List.
//! A pure function, run once when the tables are built (and by the parser, to report a
//! bad list with its column); the packets see an ordinary policy.
//!
//! Every SID is split as the lengths say: the Locator-Block (its first `L` bits), the
//! C-SID (the next `N` bits) and the rest. A SID whose C-SID is not zero (0 is reserved,
//! §5) and whose rest is zero is a *C-SID*; any other SID is written whole, an
//! uncompressed SID, which the RFC lets a compressed list mix with C-SID sequences
//! (§3: "any combination of compressed and uncompressed sequences").
//!
//! NEXT-C-SID (§7's first method): a container starts as a C-SID's SID; each following
//! C-SID of the same block goes into its argument, left to right, while it fits; the
//! next one starts a new container. A SID of the same block with bits past its C-SID (a
//! longer function, an argument) goes in whole as the last of a container, if its
//! significant bits fit: the C-SID node before it shifts it into the destination exactly
//! as written, and since its own node is not known to shift, nothing follows it there.
//!
//! REPLACE-C-SID (§7's second method, §4.2.1): a run of at least two C-SIDs of one
//! block (§7.2 rule 2) is a series; its first SID is written whole (argument, so
//! `DA.Arg.Index`, zero), the others go into containers of `128 / N` C-SIDs, the first
//! one visited at index `128 / N - 1` (the least significant bits: §4.2.1 S25 starts a
//! container there and S13 counts down), unused positions zero. A series followed by
//! another entry (or, for insertion, by the original destination) must end at an index
//! above 0 (§7.2 rule 3: at index 0 a REPLACE-C-SID node takes the next entry for a
//! container, S24-S28); when its C-SIDs would fill the last container exactly, its last
//! two SIDs become a series of their own (the second last written whole, the last alone
//! in a container), a path equivalent to the list (§7: "Any other method, resulting in
//! a path equivalent to the original segment list, is compliant"). A lone C-SID is
//! written whole and taken for a SID without the flavour (a series has two elements).

use std::net::Ipv6Addr;

use crate::spec::{CsidLengths, CsidPolicy, CsidScheme};

/// Why a list cannot be compressed as asked; the parser points at the `csid` words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CsidError(pub String);

impl std::fmt::Display for CsidError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// What the lengths of each scheme must be, for error messages.
pub const NEXT_LENGTHS: &str = "lblen and nflen non-zero multiples of 8, lblen + nflen <= 128";
pub const REPLACE_LENGTHS: &str = "nflen 16 or 32, lblen a non-zero multiple of 8, lblen + nflen <= 120";

/// Checks the lengths of `c` as the flavour of its scheme takes them: NEXT-C-SID as
/// Linux's `next-csid`; REPLACE-C-SID as `replace-csid`, with 16- or 32-bit C-SIDs
/// (§6.1) and room after the C-SID for the argument's index (§4.2).
pub fn check_lengths(c: CsidPolicy) -> Result<(), &'static str> {
    let CsidLengths { lblen, nflen } = c.lengths;
    match c.scheme {
        CsidScheme::Next => CsidLengths::new(lblen, nflen).map(|_| ()),
        CsidScheme::Replace => crate::behaviour::replace_csid::lengths(lblen, nflen).map(|_| ()),
    }
}

/// The compressed list of `segs` (visit order, at least one) under `c`: the entries in
/// visit order, the first being the destination. `then_more`: another entry follows
/// the list (insertion's original destination). Errors: lengths `c` does not allow, or
/// a list of two or more SIDs of which nothing compresses (the lengths do not describe
/// these SIDs — write the list without `csid` if that is intended).
pub fn compress(c: CsidPolicy, segs: &[Ipv6Addr], then_more: bool) -> Result<Vec<Ipv6Addr>, CsidError> {
    check_lengths(c).map_err(|e| CsidError(e.to_string()))?;
    let split = Split::new(c.lengths);
    let words: Vec<u128> = segs.iter().map(|s| u128::from(*s)).collect();
    let (out, packed) = match c.scheme {
        CsidScheme::Next => next(&split, &words),
        CsidScheme::Replace => replace(&split, &words, then_more),
    };
    if !packed && segs.len() > 1 {
        return Err(CsidError(format!(
            "csid {} lblen {} nflen {}: no two of these segments share a C-SID container (each needs \
             the same first {} bits and a non-zero C-SID with only zeros after it{})",
            c.scheme.keyword(),
            c.lengths.lblen,
            c.lengths.nflen,
            c.lengths.lblen,
            if c.scheme == CsidScheme::Replace { ", two or more in a row" } else { "" }
        )));
    }
    Ok(out.into_iter().map(Ipv6Addr::from).collect())
}

/// The lengths as shifts and masks over a SID held as a `u128`.
struct Split {
    /// Locator-Block length L.
    lb: u32,
    /// C-SID length N.
    nf: u32,
}

/// The `n` least significant bits set (`n` <= 128).
fn low(n: u32) -> u128 {
    if n >= 128 {
        u128::MAX
    } else {
        (1u128 << n) - 1
    }
}

impl Split {
    fn new(l: CsidLengths) -> Split {
        Split { lb: u32::from(l.lblen), nf: u32::from(l.nflen) }
    }

    /// Bits after the block (the room of a NEXT-C-SID container).
    fn after_block(&self) -> u32 {
        128 - self.lb
    }

    fn block(&self, s: u128) -> u128 {
        s >> self.after_block()
    }

    fn csid(&self, s: u128) -> u128 {
        (s >> (self.after_block() - self.nf)) & low(self.nf)
    }

    /// The bits after the C-SID.
    fn rest(&self, s: u128) -> u128 {
        s & low(self.after_block() - self.nf)
    }

    /// A C-SID: not zero, nothing after it.
    fn is_csid(&self, s: u128) -> bool {
        self.csid(s) != 0 && self.rest(s) == 0
    }

    /// How many bits after the block a SID uses: up to its last one bit.
    fn used(&self, s: u128) -> u32 {
        let tail = s & low(self.after_block());
        if tail == 0 {
            0
        } else {
            self.after_block() - tail.trailing_zeros()
        }
    }
}

/// NEXT-C-SID (see the module docs). Returns the entries and whether any container
/// holds more than one SID.
fn next(sp: &Split, segs: &[u128]) -> (Vec<u128>, bool) {
    struct Open {
        value: u128,
        block: u128,
        /// Bits after the block in use.
        used: u32,
    }
    let mut out = Vec::new();
    let mut open: Option<Open> = None;
    let mut packed = false;
    for &s in segs {
        let csid = sp.is_csid(s);
        // A SID with bits after its C-SID may end a container, never start one.
        let long = sp.csid(s) != 0 && !csid;
        if let Some(o) = open.as_mut() {
            let need = if csid { sp.nf } else { sp.used(s) };
            if (csid || long) && sp.block(s) == o.block && o.used + need <= sp.after_block() {
                o.value |= (s & low(sp.after_block())) >> o.used;
                o.used += need;
                packed = true;
                if long {
                    out.push(o.value);
                    open = None;
                }
                continue;
            }
        }
        if let Some(o) = open.take() {
            out.push(o.value);
        }
        if csid {
            open = Some(Open { value: s, block: sp.block(s), used: sp.nf });
        } else {
            out.push(s);
        }
    }
    if let Some(o) = open {
        out.push(o.value);
    }
    (out, packed)
}

/// REPLACE-C-SID (see the module docs). Returns the entries and whether any series
/// was formed.
fn replace(sp: &Split, segs: &[u128], then_more: bool) -> (Vec<u128>, bool) {
    let per = (128 / sp.nf) as usize;
    let mut out = Vec::new();
    let mut packed = false;
    let mut i = 0;
    while let Some(&first) = segs.get(i) {
        // The run of C-SIDs of one block starting at i.
        let mut end = i + 1;
        if sp.is_csid(first) {
            while segs.get(end).is_some_and(|&s| sp.is_csid(s) && sp.block(s) == sp.block(first)) {
                end += 1;
            }
        }
        let run = &segs[i..end];
        i = end;
        let Some((&head, tail)) = run.split_first().filter(|(_, t)| !t.is_empty()) else {
            out.push(first);
            continue;
        };
        packed = true;
        let followed = i < segs.len() || then_more;
        let csids: Vec<u128> = tail.iter().map(|&s| sp.csid(s)).collect();
        out.push(head);
        if followed && csids.len().is_multiple_of(per) {
            // The last C-SID would sit at index 0: the last two SIDs become a series
            // of their own (csids.len() >= per >= 4, so two remain before them).
            let (main, last2) = csids.split_at(csids.len() - 2);
            containers(sp, main, per, &mut out);
            out.push(tail[tail.len() - 2]);
            containers(sp, &last2[1..], per, &mut out);
        } else {
            containers(sp, &csids, per, &mut out);
        }
    }
    (out, packed)
}

/// Containers of `per` C-SIDs each: the j-th of a container (in visit order) at index
/// `per - 1 - j`, i.e. `j * N` bits from the least significant end (RFC 9800 §4.2.1:
/// `Segment List[SL][i]` is bits `[i*N..(i+1)*N-1]`, bit 0 the most significant).
fn containers(sp: &Split, csids: &[u128], per: usize, out: &mut Vec<u128>) {
    for chunk in csids.chunks(per) {
        let value = chunk.iter().enumerate().fold(0u128, |v, (j, &c)| v | c << (j as u32 * sp.nf));
        out.push(value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn a(s: &str) -> Ipv6Addr {
        s.parse().unwrap()
    }

    fn list(s: &[&str]) -> Vec<Ipv6Addr> {
        s.iter().map(|x| a(x)).collect()
    }

    fn next_c(lblen: u8, nflen: u8) -> CsidPolicy {
        CsidPolicy { scheme: CsidScheme::Next, lengths: CsidLengths { lblen, nflen } }
    }

    fn repl(lblen: u8, nflen: u8) -> CsidPolicy {
        CsidPolicy { scheme: CsidScheme::Replace, lengths: CsidLengths { lblen, nflen } }
    }

    #[test]
    fn next_packs_one_container() {
        let segs = list(&["fc00:0:1::", "fc00:0:2::", "fc00:0:3::"]);
        assert_eq!(compress(next_c(32, 16), &segs, false).unwrap(), list(&["fc00:0:1:2:3::"]));
        // Six 16-bit C-SIDs fill a /32 block's container exactly.
        let six = list(&["fc00:0:1::", "fc00:0:2::", "fc00:0:3::", "fc00:0:4::", "fc00:0:5::", "fc00:0:6::"]);
        assert_eq!(compress(next_c(32, 16), &six, false).unwrap(), list(&["fc00:0:1:2:3:4:5:6"]));
    }

    #[test]
    fn next_starts_a_new_container_when_full() {
        let segs: Vec<Ipv6Addr> = (1..=8).map(|i| a(&format!("fc00:0:{i:x}::"))).collect();
        assert_eq!(compress(next_c(32, 16), &segs, false).unwrap(), list(&["fc00:0:1:2:3:4:5:6", "fc00:0:7:8::"]));
        // 48-bit block, 32-bit C-SIDs: two per container.
        let segs = list(&["2001:db8:b1:1:2::", "2001:db8:b1:3:4::", "2001:db8:b1:5:6::"]);
        assert_eq!(
            compress(next_c(48, 32), &segs, false).unwrap(),
            list(&["2001:db8:b1:1:2:3:4:0", "2001:db8:b1:5:6::"])
        );
    }

    #[test]
    fn next_keeps_other_blocks_and_odd_sids_whole() {
        // A SID of another block ends the container and is written whole; a later run of
        // one block shares a container again.
        let segs = list(&["fc00:0:1::", "fc00:0:2::", "2001:db8::1", "fc00:0:3::", "fc00:0:4::"]);
        assert_eq!(
            compress(next_c(32, 16), &segs, false).unwrap(),
            list(&["fc00:0:1:2::", "2001:db8::1", "fc00:0:3:4::"])
        );
        // A zero C-SID is never packed.
        let segs = list(&["fc00:0:1::", "fc00:0:2::", "fc00:0:0:5::", "fc00:0:3::"]);
        assert_eq!(
            compress(next_c(32, 16), &segs, false).unwrap(),
            list(&["fc00:0:1:2::", "fc00:0:0:5::", "fc00:0:3::"])
        );
    }

    #[test]
    fn next_long_sid_ends_a_container() {
        // fc00:0:3:d6:: has a function after its C-SID: it goes in whole, last.
        let segs = list(&["fc00:0:1::", "fc00:0:2::", "fc00:0:3:d6::", "fc00:0:4::"]);
        assert_eq!(compress(next_c(32, 16), &segs, false).unwrap(), list(&["fc00:0:1:2:3:d6::", "fc00:0:4::"]));
        // Too long to fit: written whole, the container before it closed.
        let segs = list(&["fc00:0:1::", "fc00:0:2::", "fc00:0:3::", "fc00:0:4::", "fc00:0:5::9"]);
        assert_eq!(compress(next_c(32, 16), &segs, false).unwrap(), list(&["fc00:0:1:2:3:4::", "fc00:0:5::9"]));
        // First: alone (nothing packs after it).
        let segs = list(&["fc00:0:3:d6::", "fc00:0:1::", "fc00:0:2::"]);
        assert_eq!(compress(next_c(32, 16), &segs, false).unwrap(), list(&["fc00:0:3:d6::", "fc00:0:1:2::"]));
    }

    #[test]
    fn next_single_sid_and_errors() {
        assert_eq!(compress(next_c(32, 16), &list(&["fc00:0:1::"]), false).unwrap(), list(&["fc00:0:1::"]));
        // lblen 32 for SIDs of a /48 block: every C-SID field is zero.
        let e = compress(next_c(32, 16), &list(&["fc00:0:0:1::", "fc00:0:0:2::"]), false).unwrap_err();
        assert!(e.0.contains("no two of these segments"), "{e}");
        assert!(compress(next_c(32, 0), &list(&["fc00:0:1::"]), false).is_err());
        assert!(compress(next_c(120, 16), &list(&["fc00:0:1::"]), false).is_err());
    }

    /// F6432 SIDs under block 2001:db8:0:1 with C-SID `i`.
    fn f6432(i: u32) -> Ipv6Addr {
        a(&format!("2001:db8:0:1:0:{i:x}::"))
    }

    #[test]
    fn replace_series_in_containers() {
        // F6432: first SID whole, then C-SIDs from the least significant end.
        let segs: Vec<Ipv6Addr> = (1..=4).map(f6432).collect();
        assert_eq!(compress(repl(64, 32), &segs, false).unwrap(), list(&["2001:db8:0:1:0:1::", "0:0:0:4:0:3:0:2"]));
        // 16-bit C-SIDs: eight per container; nine C-SIDs take two.
        let segs: Vec<Ipv6Addr> = (1..=10).map(|i| a(&format!("2001:db8:0:1:{i:x}::"))).collect();
        assert_eq!(
            compress(repl(64, 16), &segs, false).unwrap(),
            list(&["2001:db8:0:1:1::", "9:8:7:6:5:4:3:2", "0:0:0:0:0:0:0:a"])
        );
    }

    #[test]
    fn replace_full_last_container_is_split_when_followed() {
        // Five SIDs: four C-SIDs fill a 32-bit container. At the end of the list, fine.
        let segs: Vec<Ipv6Addr> = (1..=5).map(f6432).collect();
        let whole = list(&["2001:db8:0:1:0:1::", "0:5:0:4:0:3:0:2"]);
        assert_eq!(compress(repl(64, 32), &segs, false).unwrap(), whole);
        // Followed (insertion): the last one would be at index 0, so 4 and 5 become a
        // series of their own.
        let split = list(&["2001:db8:0:1:0:1::", "0:0:0:0:0:3:0:2", "2001:db8:0:1:0:4::", "::5"]);
        assert_eq!(compress(repl(64, 32), &segs, true).unwrap(), split);
        let mut more = segs.clone();
        more.push(a("fc00::9"));
        let mut split_more = split.clone();
        split_more.push(a("fc00::9"));
        assert_eq!(compress(repl(64, 32), &more, false).unwrap(), split_more);
    }

    #[test]
    fn replace_lone_sids_stay_whole() {
        // Another block, a run of two, a lone C-SID of a third block.
        let segs = list(&["fc00::9", "2001:db8:0:1:0:1::", "2001:db8:0:1:0:2::", "2001:db8:0:2:0:1::"]);
        assert_eq!(
            compress(repl(64, 32), &segs, false).unwrap(),
            list(&["fc00::9", "2001:db8:0:1:0:1::", "::2", "2001:db8:0:2:0:1::"])
        );
        let e = compress(repl(64, 32), &list(&["2001:db8:0:1:0:1::", "2001:db8:0:2:0:1::"]), false).unwrap_err();
        assert!(e.0.contains("two or more in a row"), "{e}");
        assert!(compress(repl(64, 24), &segs, false).is_err());
        assert!(compress(repl(96, 32), &segs, false).is_err());
        assert!(compress(repl(88, 32), &segs, false).is_ok());
    }
}
