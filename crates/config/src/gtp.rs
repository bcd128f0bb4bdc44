//! `encap gtp ...`: plain GTP-U tunnels (3GPP TS 29.281), sr6's own grammar — Linux's
//! `gtp` device is configured through libgtpnl, not iproute2:
//!
//! - `encap gtp teid T dst A src B [qfi Q]` (words in any order): encapsulation toward
//!   the peer A from B (both IPv4 or both IPv6), TEID T (32 bits), with a PDU Session
//!   Container carrying QFI Q (0 to 63) if given;
//! - `encap gtp decap [table N]`: decapsulation at the route's addresses, the inner
//!   packet looked up in table N.

use sr6_core::spec::GtpTunnel;

use crate::cmd::{once, P};
use crate::lex::Tok;
use crate::value::{self, Fam};
use crate::PErr;

/// What `encap gtp` takes.
pub(crate) const GTP_WORDS: &str = "teid T dst A src B [qfi Q], or decap [table N]";

/// The words after `encap gtp` (the `gtp` word `kw`), up to the first that is not one
/// of them.
pub(crate) fn parse_gtp(p: &mut P, kw: &Tok) -> Result<GtpTunnel, PErr> {
    if p.peek().is_some_and(|w| w.text == "decap") {
        p.next();
        let mut table = None;
        if let Some(w) = p.peek().filter(|w| w.text == "table") {
            p.next();
            table = Some(value::table_of(p.value(w, "a table id")?)?);
        }
        if let Some(w) = p.peek().filter(|w| matches!(w.text.as_str(), "teid" | "dst" | "src" | "qfi")) {
            return Err(
                PErr::at(w, format!("`{}` is for GTP-U encapsulation, not `decap`", w.text)).exp("decap [table N]")
            );
        }
        return Ok(GtpTunnel::Decap { table });
    }
    let mut seen = Vec::new();
    let (mut teid, mut dst, mut src, mut qfi) = (None, None, None, None);
    while let Some(w) = p.peek() {
        match w.text.as_str() {
            "teid" => {
                p.next();
                once(&mut seen, w)?;
                teid = Some(value::u32_of(p.value(w, "a TEID (32 bits)")?, "teid")?);
            }
            "dst" | "src" => {
                p.next();
                once(&mut seen, w)?;
                let v = p.value(w, "an IPv4 or IPv6 address")?;
                let a = value::ip_of(v)?;
                if w.text == "dst" {
                    dst = Some((a, v));
                } else {
                    src = Some((a, v));
                }
            }
            "qfi" => {
                p.next();
                once(&mut seen, w)?;
                let v = p.value(w, "a QFI from 0 to 63")?;
                let n = value::u32_of(v, "qfi")?;
                // TS 38.415 §5.5.3.3: the QoS Flow Identifier is 6 bits.
                let n = u8::try_from(n).ok().filter(|n| *n <= 63).ok_or_else(|| {
                    PErr::at(v, format!("qfi {n} does not fit in 6 bits")).exp("a QFI from 0 to 63 (TS 38.415)")
                })?;
                qfi = Some(n);
            }
            "decap" => {
                return Err(PErr::at(w, "`decap` goes alone, right after `encap gtp`").exp("encap gtp decap [table N]"))
            }
            _ => break,
        }
    }
    let missing: Vec<&str> = [("teid T", teid.is_none()), ("dst A", dst.is_none()), ("src B", src.is_none())]
        .iter()
        .filter(|m| m.1)
        .map(|m| m.0)
        .collect();
    let (Some(teid), Some((dst, _)), Some((src, src_tok))) = (teid, dst, src) else {
        return Err(PErr::at(kw, format!("`encap gtp` needs {}", missing.join(" and "))).exp(GTP_WORDS));
    };
    if Fam::of(&dst) != Fam::of(&src) {
        return Err(PErr::at(
            src_tok,
            format!("src {src} is {} but dst {dst} is {}", Fam::of(&src).name(), Fam::of(&dst).name()),
        )
        .exp(format!("an {} source, as dst (the outer header has one family)", Fam::of(&dst).name())));
    }
    Ok(GtpTunnel::Encap { teid, dst, src, qfi })
}
