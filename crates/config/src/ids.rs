//! `ids rules FILE [mode ids|ips] [on input|forward|input,forward] [alerts FILE]`: the
//! SR-aware IDS (docs/ids.md). The rules file is read and parsed here, relative to
//! the configuration file's directory (as End.BPF's `obj`); an error in it is
//! reported at the `FILE` word, with the rules file's own `FILE:LINE:COL`.

use sr6_core::ids::rule::parse_rules;
use sr6_core::ids::{IdsSpec, Mode};

use crate::cmd::{once, Item, P};
use crate::PErr;

const SYNTAX: &str = "ids rules FILE [mode ids|ips] [on input|forward|input,forward] [alerts FILE]";

pub(crate) fn parse(p: &mut P, line: usize) -> Result<Item, PErr> {
    let w = p.need("`rules FILE`")?;
    if w.text != "rules" {
        return Err(PErr::at(w, format!("unexpected `{}`", w.text)).exp(SYNTAX));
    }
    let file = p.value(w, "a rules file")?;
    let path = p.base.join(&file.text);
    let text = std::fs::read_to_string(&path).map_err(|e| {
        PErr::at(file, format!("cannot read the IDS rules `{}`: {e}", path.display()))
            .exp("a readable rules file (a relative path is relative to the configuration file)")
    })?;
    let rules = parse_rules(&text)
        .map_err(|e| PErr::at(file, format!("{}:{}:{}: {}", path.display(), e.line, e.col, e.message)))?;
    let mut spec = IdsSpec { line, file: path, rules, mode: Mode::Ids, input: true, forward: false, alerts: None };
    let mut seen = Vec::new();
    while let Some(w) = p.next() {
        once(&mut seen, w)?;
        match w.text.as_str() {
            "mode" => {
                let v = p.value(w, "ids or ips")?;
                spec.mode = match v.text.as_str() {
                    "ids" => Mode::Ids,
                    "ips" => Mode::Ips,
                    _ => return Err(PErr::at(v, format!("unknown mode `{}`", v.text)).exp("ids or ips")),
                };
            }
            "on" => {
                let v = p.value(w, "input, forward or input,forward")?;
                (spec.input, spec.forward) = (false, false);
                for part in v.text.split(',') {
                    match part {
                        "input" if !spec.input => spec.input = true,
                        "forward" if !spec.forward => spec.forward = true,
                        _ => {
                            return Err(PErr::at(v, format!("`{}`: unknown or repeated point `{part}`", v.text))
                                .exp("input, forward or input,forward"))
                        }
                    }
                }
            }
            "alerts" => {
                let v = p.value(w, "a file for the alerts (JSON lines)")?;
                spec.alerts = Some(p.base.join(&v.text));
            }
            _ => return Err(PErr::at(w, format!("unexpected `{}`", w.text)).exp(SYNTAX)),
        }
    }
    Ok(Item::Ids { spec })
}
