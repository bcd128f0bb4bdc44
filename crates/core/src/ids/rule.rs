//! IDS rules: the subset of Snort's rule language sr6 reads (docs/ids.md), parsed into
//! [`Rule`]s. One rule a line:
//!
//! ```text
//! ACTION PROTO SRC SPORT -> DST DPORT (OPTION; OPTION:VALUE; ...)
//! ```
//!
//! ACTION `alert`, `drop` or `pass`; PROTO `ip`, `tcp`, `udp` or `icmp`; addresses
//! `any`, an IPv4 or IPv6 address or prefix, `[a,b,...]`, `!` before one or before a
//! list; ports `any`, `N`, `N:M`, `N:`, `:M`, lists and `!` likewise; `->` or `<>`
//! (either direction). Options: `msg`, `content` (`!` negates; `|41 42|` hex bytes),
//! its modifiers `nocase`, `offset`, `depth`, `distance`, `within`, then `sid`, `rev`,
//! and the informational `classtype`, `priority`, `reference`, `metadata`, `gid`
//! (checked to have a value, otherwise ignored). `#` starts a comment. Anything else is
//! an error at its line and column ([`RuleError`]), and the whole file is refused.

use std::fmt;
use std::net::IpAddr;

/// What a rule does when it matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Alert,
    Drop,
    Pass,
}

impl Action {
    pub fn name(self) -> &'static str {
        match self {
            Action::Alert => "alert",
            Action::Drop => "drop",
            Action::Pass => "pass",
        }
    }
}

/// The protocol a rule applies to (`icmp` is ICMPv4 or ICMPv6).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Proto {
    Ip,
    Tcp,
    Udp,
    Icmp,
}

/// An address prefix: the value is kept with its host bits cleared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Net {
    V4(u32, u8),
    V6(u128, u8),
}

impl Net {
    fn masked(self) -> Net {
        match self {
            Net::V4(a, l) => Net::V4(a & mask32(l), l),
            Net::V6(a, l) => Net::V6(a & mask128(l), l),
        }
    }
    /// Whether `a` is in the prefix (an address of the other family never is).
    pub fn contains(&self, a: IpAddr) -> bool {
        match (*self, a) {
            (Net::V4(n, l), IpAddr::V4(a)) => u32::from(a) & mask32(l) == n,
            (Net::V6(n, l), IpAddr::V6(a)) => u128::from(a) & mask128(l) == n,
            _ => false,
        }
    }
}

fn mask32(l: u8) -> u32 {
    u32::MAX.checked_shl(32 - u32::from(l.min(32))).unwrap_or(0)
}

fn mask128(l: u8) -> u128 {
    u128::MAX.checked_shl(128 - u32::from(l.min(128))).unwrap_or(0)
}

/// A set of addresses or port ranges as Snort lists them: a value matches when it is in
/// one of `pos` (or `pos` is empty: `any`) and in none of `neg`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Set<T> {
    pub pos: Vec<T>,
    pub neg: Vec<T>,
}

impl<T> Default for Set<T> {
    fn default() -> Self {
        Set { pos: Vec::new(), neg: Vec::new() }
    }
}

impl<T> Set<T> {
    pub fn is_any(&self) -> bool {
        self.pos.is_empty() && self.neg.is_empty()
    }
    pub fn matches(&self, f: impl Fn(&T) -> bool) -> bool {
        (self.pos.is_empty() || self.pos.iter().any(&f)) && !self.neg.iter().any(f)
    }
}

/// One `content` with its modifiers.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Content {
    pub bytes: Vec<u8>,
    /// `content:!"..."`: the rule needs the bytes absent from the window.
    pub neg: bool,
    pub nocase: bool,
    pub offset: Option<u32>,
    pub depth: Option<u32>,
    pub distance: Option<i32>,
    pub within: Option<u32>,
}

impl Content {
    /// Searched from the end of the previous content's match (`distance`, `within`).
    pub fn relative(&self) -> bool {
        self.distance.is_some() || self.within.is_some()
    }
}

/// A parsed rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    /// Line in the rules file.
    pub line: usize,
    pub action: Action,
    pub proto: Proto,
    pub src: Set<Net>,
    pub sport: Set<(u16, u16)>,
    pub dst: Set<Net>,
    pub dport: Set<(u16, u16)>,
    /// `<>`: either direction.
    pub bidir: bool,
    pub msg: String,
    pub contents: Vec<Content>,
    pub sid: u32,
    pub rev: u32,
}

/// A rule file's error: where, and what was expected there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleError {
    pub line: usize,
    pub col: usize,
    pub message: String,
}

impl fmt::Display for RuleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.line, self.col, self.message)
    }
}

impl std::error::Error for RuleError {}

/// Parses a rules file: every rule, or the first error. Two rules with one `sid` are an
/// error (alerts name rules by it).
pub fn parse_rules(src: &str) -> Result<Vec<Rule>, RuleError> {
    let mut rules: Vec<Rule> = Vec::new();
    for (i, raw) in src.lines().enumerate() {
        let line = i + 1;
        let mut c = Cur { s: raw, pos: 0, line };
        c.ws();
        if c.eol() {
            continue;
        }
        let r = parse_rule(&mut c)?;
        if let Some(old) = rules.iter().find(|o| o.sid == r.sid) {
            return Err(RuleError {
                line,
                col: 1,
                message: format!(
                    "sid {} is already used by the rule on line {}: expected a sid of its own",
                    r.sid, old.line
                ),
            });
        }
        rules.push(r);
    }
    Ok(rules)
}

/// A cursor over one line; columns are 1-based bytes.
struct Cur<'a> {
    s: &'a str,
    pos: usize,
    line: usize,
}

impl<'a> Cur<'a> {
    fn rest(&self) -> &'a str {
        self.s.get(self.pos..).unwrap_or("")
    }
    fn peek(&self) -> Option<char> {
        self.rest().chars().next()
    }
    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += c.len_utf8();
        Some(c)
    }
    /// Skips blanks; a `#` ends the line.
    fn ws(&mut self) {
        while let Some(c) = self.peek() {
            if c.is_whitespace() {
                self.bump();
            } else {
                break;
            }
        }
        if self.peek() == Some('#') {
            self.pos = self.s.len();
        }
    }
    fn eol(&self) -> bool {
        self.rest().is_empty()
    }
    fn err_at(&self, pos: usize, message: impl Into<String>) -> RuleError {
        RuleError { line: self.line, col: pos + 1, message: message.into() }
    }
    fn err(&self, message: impl Into<String>) -> RuleError {
        self.err_at(self.pos, message)
    }
    /// A header word: up to a blank outside brackets, or a `(`.
    fn word(&mut self, what: &str) -> Result<(usize, &'a str), RuleError> {
        self.ws();
        let start = self.pos;
        let mut depth = 0i32;
        while let Some(c) = self.peek() {
            match c {
                '[' => depth += 1,
                ']' => depth -= 1,
                '(' if depth == 0 => break,
                c if c.is_whitespace() && depth <= 0 => break,
                _ => {}
            }
            self.bump();
        }
        let w = self.s.get(start..self.pos).unwrap_or("");
        if w.is_empty() {
            return Err(self.err(format!("expected {what}")));
        }
        Ok((start, w))
    }
}

const ACTIONS: &str = "an action: alert, drop or pass";
const PROTOS: &str = "a protocol: ip, tcp, udp or icmp";
const ADDRS: &str = "an address: any, ADDR, ADDR/LEN (IPv4 or IPv6), [A,B,...], or ! before one";
const PORTS: &str = "a port: any, N, N:M, N:, :M, [P,Q,...], or ! before one";

fn parse_rule(c: &mut Cur) -> Result<Rule, RuleError> {
    let line = c.line;
    let (at, w) = c.word(ACTIONS)?;
    let action = match w {
        "alert" => Action::Alert,
        "drop" => Action::Drop,
        "pass" => Action::Pass,
        _ => return Err(c.err_at(at, format!("unknown action `{w}`: expected {ACTIONS}"))),
    };
    let (at, w) = c.word(PROTOS)?;
    let proto = match w {
        "ip" => Proto::Ip,
        "tcp" => Proto::Tcp,
        "udp" => Proto::Udp,
        "icmp" => Proto::Icmp,
        _ => return Err(c.err_at(at, format!("unknown protocol `{w}`: expected {PROTOS}"))),
    };
    let (at, w) = c.word(ADDRS)?;
    let src = parse_set(w, at, c, parse_net, ADDRS)?;
    let (at, w) = c.word(PORTS)?;
    let sport = parse_set(w, at, c, parse_ports, PORTS)?;
    let sport_at = at;
    let (at, w) = c.word("a direction: -> or <>")?;
    let bidir = match w {
        "->" => false,
        "<>" => true,
        _ => return Err(c.err_at(at, format!("unexpected `{w}`: expected a direction: -> or <>"))),
    };
    let (at, w) = c.word(ADDRS)?;
    let dst = parse_set(w, at, c, parse_net, ADDRS)?;
    let (at, w) = c.word(PORTS)?;
    let dport = parse_set(w, at, c, parse_ports, PORTS)?;
    if matches!(proto, Proto::Ip | Proto::Icmp) {
        for (s, at) in [(&sport, sport_at), (&dport, at)] {
            if !s.is_any() {
                return Err(c.err_at(at, "ports apply to tcp and udp rules: expected `any`"));
            }
        }
    }
    c.ws();
    if c.peek() != Some('(') {
        return Err(c.err("expected `(` and the rule's options"));
    }
    c.bump();
    let mut r = Rule {
        line,
        action,
        proto,
        src,
        sport,
        dst,
        dport,
        bidir,
        msg: String::new(),
        contents: Vec::new(),
        sid: 0,
        rev: 1,
    };
    let mut seen: Vec<&str> = Vec::new();
    loop {
        c.ws();
        match c.peek() {
            None => return Err(c.err("expected `)` closing the options")),
            Some(')') => {
                c.bump();
                break;
            }
            _ => {}
        }
        option(c, &mut r, &mut seen)?;
    }
    c.ws();
    if !c.eol() {
        return Err(c.err("unexpected text after `)`: expected the end of the rule"));
    }
    if r.sid == 0 {
        return Err(c.err_at(0, "the rule has no `sid`: expected sid:N; with N > 0 among its options"));
    }
    Ok(r)
}

/// The keywords of a rule's options.
const OPTIONS: &str = "an option: msg, content, nocase, offset, depth, distance, within, sid, rev, \
classtype, priority, reference, metadata or gid";

fn option<'a>(c: &mut Cur<'a>, r: &mut Rule, seen: &mut Vec<&'a str>) -> Result<(), RuleError> {
    let at = c.pos;
    while c.peek().is_some_and(|ch| ch.is_ascii_alphanumeric() || ch == '_') {
        c.bump();
    }
    let kw = c.s.get(at..c.pos).unwrap_or("");
    if kw.is_empty() {
        return Err(c.err(format!("expected {OPTIONS}")));
    }
    c.ws();
    let value = if c.peek() == Some(':') {
        c.bump();
        c.ws();
        let vat = c.pos;
        Some((vat, value(c)?))
    } else {
        None
    };
    c.ws();
    match c.peek() {
        Some(';') => {
            c.bump();
        }
        _ => return Err(c.err(format!("expected `;` after the `{kw}` option"))),
    }
    let need = |what: &str| value.ok_or_else(|| c.err_at(at, format!("`{kw}` needs a value: expected {kw}:{what};")));
    let once = |seen: &mut Vec<&'a str>| {
        if seen.contains(&kw) {
            return Err(c.err_at(at, format!("`{kw}` given twice: expected it at most once")));
        }
        seen.push(kw);
        Ok(())
    };
    match kw {
        "msg" => {
            once(seen)?;
            let (vat, v) = need("\"TEXT\"")?;
            r.msg = quoted(c, vat, v)?;
        }
        "content" => {
            let (vat, v) = need("\"TEXT\" or !\"TEXT\"")?;
            let (neg, body, bat) = match v.strip_prefix('!') {
                Some(b) => (true, b.trim_start(), vat + 1 + (b.len() - b.trim_start().len())),
                None => (false, v, vat),
            };
            let text = quoted_raw(c, bat, body)?;
            let bytes = content_bytes(c, bat + 1, text)?;
            if bytes.is_empty() {
                return Err(c.err_at(vat, "an empty content: expected at least one byte"));
            }
            r.contents.push(Content { bytes, neg, ..Content::default() });
        }
        "nocase" => {
            if value.is_some() {
                return Err(c.err_at(at, "`nocase` takes no value: expected nocase;"));
            }
            let last = last_content(c, r, at, kw)?;
            if last.nocase {
                return Err(c.err_at(at, "`nocase` given twice for one content: expected it once"));
            }
            last.nocase = true;
        }
        "offset" | "depth" | "distance" | "within" => {
            let (vat, v) = need("N")?;
            let n: i64 = match v.parse() {
                Ok(n) if kw == "distance" && (-65535..=65535).contains(&n) => n,
                Ok(n) if (0..=65535).contains(&n) => n,
                _ => {
                    let range = if kw == "distance" { "-65535..65535" } else { "0..65535" };
                    return Err(c.err_at(vat, format!("bad {kw} `{v}`: expected a number in {range}")));
                }
            };
            let last = last_content(c, r, at, kw)?;
            let len = last.bytes.len() as i64;
            let dup = match kw {
                "offset" => last.offset.replace(n as u32).is_some(),
                "depth" => last.depth.replace(n as u32).is_some(),
                "distance" => last.distance.replace(n as i32).is_some(),
                _ => last.within.replace(n as u32).is_some(),
            };
            if dup {
                return Err(c.err_at(at, format!("`{kw}` given twice for one content: expected it once")));
            }
            if (kw == "depth" || kw == "within") && n < len {
                return Err(c.err_at(
                    vat,
                    format!("{kw} {n} is shorter than the content ({len} bytes): expected at least {len}"),
                ));
            }
            if (last.offset.is_some() || last.depth.is_some()) && last.relative() {
                return Err(c.err_at(at, format!("`{kw}`: a content is either absolute (offset, depth) or relative (distance, within): expected one kind")));
            }
            if last.relative() && r.contents.len() < 2 {
                return Err(c.err_at(
                    at,
                    format!("`{kw}` is relative to a previous content: expected a content before this one"),
                ));
            }
        }
        "sid" | "rev" | "priority" | "gid" => {
            once(seen)?;
            let (vat, v) = need("N")?;
            let n: u32 = match v.parse() {
                Ok(n) if n > 0 || kw == "gid" => n,
                _ => return Err(c.err_at(vat, format!("bad {kw} `{v}`: expected a number from 1 to 4294967295"))),
            };
            match kw {
                "sid" => r.sid = n,
                "rev" => r.rev = n,
                _ => {}
            }
        }
        "classtype" | "reference" | "metadata" => {
            need("VALUE")?;
        }
        _ => return Err(c.err_at(at, format!("unknown option `{kw}`: expected {OPTIONS}"))),
    }
    Ok(())
}

fn last_content<'r>(c: &Cur, r: &'r mut Rule, at: usize, kw: &str) -> Result<&'r mut Content, RuleError> {
    r.contents
        .last_mut()
        .ok_or_else(|| c.err_at(at, format!("`{kw}` modifies a content: expected a content before it")))
}

/// An option's value: up to the `;` outside quotes (a `\` escapes the next character).
fn value<'a>(c: &mut Cur<'a>) -> Result<&'a str, RuleError> {
    let start = c.pos;
    let mut quoted = false;
    loop {
        match c.peek() {
            None => return Err(c.err("expected `;` ending the option's value")),
            Some('\\') => {
                c.bump();
                c.bump();
            }
            Some('"') => {
                quoted = !quoted;
                c.bump();
            }
            Some(';') if !quoted => break,
            Some(_) => {
                c.bump();
            }
        }
    }
    Ok(c.s.get(start..c.pos).unwrap_or("").trim_end())
}

/// The text between the quotes of `v` (at column `at`), escapes left in.
fn quoted_raw<'a>(c: &Cur, at: usize, v: &'a str) -> Result<&'a str, RuleError> {
    match v.strip_prefix('"').and_then(|b| b.strip_suffix('"')) {
        Some(b) if v.len() >= 2 => Ok(b),
        _ => Err(c.err_at(at, format!("`{v}`: expected a quoted string \"...\""))),
    }
}

/// A quoted string with its escapes (`\"`, `\\`, `\;`, `\:`) resolved.
fn quoted(c: &Cur, at: usize, v: &str) -> Result<String, RuleError> {
    let b = quoted_raw(c, at, v)?;
    let mut out = String::new();
    let mut it = b.char_indices();
    while let Some((i, ch)) = it.next() {
        if ch == '\\' {
            match it.next() {
                Some((_, e @ ('"' | '\\' | ';' | ':'))) => out.push(e),
                _ => return Err(c.err_at(at + 1 + i, "a bad escape: expected \\\", \\\\, \\; or \\:")),
            }
        } else if ch == '"' {
            return Err(c.err_at(at + 1 + i, "a quote inside a string: expected it escaped, \\\""));
        } else {
            out.push(ch);
        }
    }
    Ok(out)
}

/// A content's bytes: text with escapes, and hex bytes between `|`s (`|0d 0a|`).
fn content_bytes(c: &Cur, at: usize, text: &str) -> Result<Vec<u8>, RuleError> {
    let mut out = Vec::new();
    let mut it = text.char_indices();
    while let Some((i, ch)) = it.next() {
        match ch {
            '\\' => match it.next() {
                Some((_, e @ ('"' | '\\' | ';' | ':' | '|'))) => out.push(e as u8),
                _ => return Err(c.err_at(at + i, "a bad escape: expected \\\", \\\\, \\;, \\: or \\|")),
            },
            '|' => {
                let mut hex: Option<u8> = None;
                loop {
                    match it.next() {
                        None => return Err(c.err_at(at + i, "hex bytes not closed: expected `|` after them")),
                        Some((_, '|')) => break,
                        Some((_, ' ')) if hex.is_none() => {}
                        Some((j, h)) => {
                            let Some(d) = h.to_digit(16) else {
                                return Err(c.err_at(at + j, format!("`{h}` in hex bytes: expected hex digits")));
                            };
                            match hex.take() {
                                None => hex = Some(d as u8),
                                Some(hi) => out.push(hi << 4 | d as u8),
                            }
                        }
                    }
                }
                if hex.is_some() {
                    return Err(c.err_at(at + i, "an odd number of hex digits: expected two per byte"));
                }
            }
            '"' | ';' => {
                return Err(c.err_at(at + i, format!("`{ch}` in a content: expected it escaped, \\{ch}")));
            }
            _ => {
                let mut buf = [0u8; 4];
                out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
            }
        }
    }
    Ok(out)
}

/// `any`, `X`, `!X`, `[X,!Y,...]` or `![X,Y,...]` of items `item` parses.
fn parse_set<T>(
    w: &str,
    at: usize,
    c: &Cur,
    item: fn(&str) -> Option<Vec<T>>,
    what: &str,
) -> Result<Set<T>, RuleError> {
    let mut set = Set::default();
    if w == "any" {
        return Ok(set);
    }
    if w.starts_with('$') {
        return Err(c.err_at(at, format!("`{w}`: variables are not supported, expected {what}")));
    }
    let (neg, body, bat) = match w.strip_prefix('!') {
        Some(b) => (true, b, at + 1),
        None => (false, w, at),
    };
    let (items, iat) = match body.strip_prefix('[') {
        Some(b) => match b.strip_suffix(']') {
            Some(inner) => (inner, bat + 1),
            None => return Err(c.err_at(at, format!("`{w}`: a list not closed, expected {what}"))),
        },
        None => (body, bat),
    };
    let list = body.starts_with('[');
    let mut col = iat;
    for part in items.split(',') {
        let (pneg, v, vat) = match part.strip_prefix('!') {
            Some(v) if list => (true, v, col + 1),
            _ => (false, part, col),
        };
        if pneg && neg {
            return Err(c.err_at(col, format!("`{part}`: a negation inside a negated list, expected {what}")));
        }
        let bad = || c.err_at(vat, format!("`{v}`: expected {what}"));
        if v == "any" || v.contains('[') || v.contains(']') || v.contains('!') {
            return Err(bad());
        }
        let vals = item(v).ok_or_else(bad)?;
        if neg || pneg {
            set.neg.extend(vals);
        } else {
            set.pos.extend(vals);
        }
        col += part.len() + 1;
    }
    Ok(set)
}

fn parse_net(v: &str) -> Option<Vec<Net>> {
    let (a, len) = match v.split_once('/') {
        Some((a, l)) => (a, Some(l.parse::<u8>().ok()?)),
        None => (v, None),
    };
    let n = match a.parse::<IpAddr>().ok()? {
        IpAddr::V4(x) if len.unwrap_or(32) <= 32 => Net::V4(u32::from(x), len.unwrap_or(32)),
        IpAddr::V6(x) if len.unwrap_or(128) <= 128 => Net::V6(u128::from(x), len.unwrap_or(128)),
        _ => return None,
    };
    Some(vec![n.masked()])
}

fn parse_ports(v: &str) -> Option<Vec<(u16, u16)>> {
    let num = |s: &str| -> Option<u16> {
        if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        s.parse().ok()
    };
    let r = match v.split_once(':') {
        None => {
            let n = num(v)?;
            (n, n)
        }
        Some(("", "")) => return None,
        Some(("", hi)) => (0, num(hi)?),
        Some((lo, "")) => (num(lo)?, u16::MAX),
        Some((lo, hi)) => (num(lo)?, num(hi)?),
    };
    (r.0 <= r.1).then(|| vec![r])
}
