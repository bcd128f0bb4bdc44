//! sr6-config: the configuration language of sr6, a superset of iproute2.
//!
//! A configuration file is the list of lines an operator would type to configure the
//! Linux kernel (`ip -6 route add ... encap seg6local action End.DX6 nh6 ... dev eth2`,
//! `ip sr hmac set ...`, `sysctl -w ...`); the leading `ip` is optional. The parser
//! produces a [`RouterSpec`] and nothing else: validation of the spec as a whole
//! (unknown devices, missing keys) is the table builder's job.
//!
//! Parsing stops at the first error, which carries `file:line:column` and what was
//! expected; nothing is returned on error, so nothing is half-applied. The grammar is
//! documented in `docs/config.md`.
//!
//! The parameters each `seg6local` action requires or accepts, and the flavours it
//! allows, come from the behaviour table of `sr6-core`
//! ([`sr6_core::behaviour::DESCRIPTORS`]); this crate keeps no copy of it.

#![forbid(unsafe_code)]

mod apply;
mod cmd;
mod firewall;
mod gtp;
mod ids;
mod lex;
mod nexthop;
mod nft;
mod route;
mod rule;
mod value;

use std::fmt;
use std::path::Path;

use sr6_core::spec::RouterSpec;

pub use apply::{note_dev, RouteEdit, RouteIndex};

/// A configuration error: where, what, and what was expected there.
///
/// Displayed as `FILE:LINE:COL: MESSAGE (expected EXPECTED)`; the parenthesis is left
/// out when there is no `expected`. `line` and `col` are 1-based; an I/O error has
/// line 0 and column 0, and is displayed as `FILE: MESSAGE`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}{message}{}", Place(file, *line, *col), ExpectedSuffix(.expected))]
pub struct ConfigError {
    pub file: String,
    pub line: usize,
    /// 1-based column (in characters) of the offending token; for a missing word, the
    /// column just past the last word of the line.
    pub col: usize,
    pub message: String,
    pub expected: Option<String>,
}

/// `FILE:LINE:COL: `, or `FILE: ` for an error about the whole file (line 0).
struct Place<'a>(&'a str, usize, usize);

impl fmt::Display for Place<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Place(file, 0, _) => write!(f, "{file}: "),
            Place(file, line, col) => write!(f, "{file}:{line}:{col}: "),
        }
    }
}

struct ExpectedSuffix<'a>(&'a Option<String>);

impl fmt::Display for ExpectedSuffix<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(e) => write!(f, " (expected {e})"),
            None => Ok(()),
        }
    }
}

/// An error before it knows its file name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PErr {
    pub line: usize,
    pub col: usize,
    pub message: String,
    pub expected: Option<String>,
}

impl PErr {
    pub fn at(t: &lex::Tok, message: impl Into<String>) -> PErr {
        PErr { line: t.line, col: t.col, message: message.into(), expected: None }
    }
    pub fn at_pos(line: usize, col: usize, message: impl Into<String>) -> PErr {
        PErr { line, col, message: message.into(), expected: None }
    }
    pub fn exp(mut self, expected: impl Into<String>) -> PErr {
        self.expected = Some(expected.into());
        self
    }
    fn in_file(self, file: &str) -> ConfigError {
        ConfigError {
            file: file.to_string(),
            line: self.line,
            col: self.col,
            message: self.message,
            expected: self.expected,
        }
    }
}

/// Parse configuration lines, a whole file or a fragment of one: a device that only
/// routes name is accepted (it may be declared in a part not given; [`parse_config`]
/// refuses it). `file` is only used in error messages.
pub fn parse_str(src: &str, file: &str) -> Result<RouterSpec, ConfigError> {
    let mut spec = RouterSpec::default();
    parse_into(src, 1, &mut spec, false, Path::new("")).map_err(|e| e.in_file(file))?;
    Ok(spec)
}

/// [`parse_str`] of a complete configuration: also refuses a device that only routes
/// name (`dev`, `oif`), at its first such word. Relative paths (End.BPF's `endpoint
/// obj FILE`) are relative to the working directory.
pub fn parse_config(src: &str, file: &str) -> Result<RouterSpec, ConfigError> {
    parse_config_in(src, file, Path::new(""))
}

/// [`parse_config`] of a file in directory `base`: relative paths on its lines are
/// relative to `base`. What [`parse_file`] does.
pub fn parse_config_in(src: &str, file: &str, base: &Path) -> Result<RouterSpec, ConfigError> {
    let mut spec = RouterSpec::default();
    let undeclared = parse_into(src, 1, &mut spec, false, base).map_err(|e| e.in_file(file))?;
    match undeclared.first() {
        Some(t) => Err(undeclared_device(t).in_file(file)),
        None => Ok(spec),
    }
}

/// Read and parse a configuration file ([`parse_config`]). An I/O error is a
/// [`ConfigError`] at line 0.
pub fn parse_file(path: &Path) -> Result<RouterSpec, ConfigError> {
    let file = path.display().to_string();
    let src = std::fs::read_to_string(path).map_err(|e| ConfigError {
        file: file.clone(),
        line: 0,
        col: 0,
        message: format!("cannot read the configuration: {e}"),
        expected: None,
    })?;
    parse_config_in(&src, &file, path.parent().unwrap_or(Path::new("")))
}

/// Parse one command (for instance a `route add` line from the control socket) and apply
/// it to `spec`. `line_no` is the line number reported in errors and recorded in the
/// spec. A blank or comment-only line is accepted and changes nothing; on error `spec`
/// is left unchanged. The line may be continued with `\` + newline, but must hold
/// exactly one command. Relative paths are relative to the working directory.
pub fn parse_line(line: &str, file: &str, line_no: usize, spec: &mut RouterSpec) -> Result<(), ConfigError> {
    // (One command: its route is found by a scan, not by hashing every route.)
    let mut idx = apply::Index::scanning(spec);
    parse_indexed(line, line_no, spec, true, Path::new(""), &mut idx).map(|_| ()).map_err(|e| e.in_file(file))
}

/// [`parse_line`] on `spec` itself, finding its route by `index` (the spec's
/// [`RouteIndex`], kept up to date) and recording each change it makes to `spec.routes`:
/// with them ([`RouteEdit::undo`], last first) and a copy of the rest taken before
/// ([`RouterSpec::clone_without_routes`]) the caller puts `spec` back as it was, if the
/// line is refused here or later, instead of working on a copy of a configuration that
/// may hold a full table. The edits are returned whether the line was taken or not (a
/// command of several lines may have changed routes before one is refused).
pub fn parse_line_logged(
    line: &str,
    file: &str,
    line_no: usize,
    spec: &mut RouterSpec,
    index: &mut RouteIndex,
) -> (Result<(), ConfigError>, Vec<RouteEdit>) {
    let mut idx = apply::Index::logging(spec, index);
    let r = parse_indexed(line, line_no, spec, true, Path::new(""), &mut idx).map(|_| ()).map_err(|e| e.in_file(file));
    index.0 = idx.routes.take().unwrap_or_default();
    (r, idx.edits.take().unwrap_or_default())
}

/// [`parse_lines`] without `keep_going`, on `spec` itself as [`parse_line_logged`]
/// applies one line (its routes found by `index`, its route changes recorded): the
/// commands applied, the first error (the lines after it are not applied; undo the
/// edits to put the routes back), and the edits of every line applied, in order
/// (`sr6 ctl batch` on a configuration that may hold a full table).
pub fn parse_lines_logged<'a>(
    lines: impl IntoIterator<Item = &'a str>,
    file: &str,
    spec: &mut RouterSpec,
    index: &mut RouteIndex,
) -> (usize, Option<ConfigError>, Vec<RouteEdit>) {
    let mut idx = apply::Index::logging(spec, index);
    let (applied, mut errors) = apply_lines(lines, file, spec, false, &mut idx);
    index.0 = idx.routes.take().unwrap_or_default();
    (applied, errors.pop(), idx.edits.take().unwrap_or_default())
}

/// Applies `lines` to `spec` with `idx`, one command a line, blank and comment lines
/// skipped: the commands applied and the errors (with `keep_going`, every refused line's;
/// otherwise the first, after which no line is applied).
fn apply_lines<'a>(
    lines: impl IntoIterator<Item = &'a str>,
    file: &str,
    spec: &mut RouterSpec,
    keep_going: bool,
    idx: &mut apply::Index,
) -> (usize, Vec<ConfigError>) {
    let (mut applied, mut errors) = (0, Vec::new());
    for (i, line) in lines.into_iter().enumerate() {
        let l = line.trim();
        if l.is_empty() || l.starts_with('#') {
            continue;
        }
        match parse_indexed(line, i + 1, spec, true, Path::new(""), idx) {
            Ok(_) => applied += 1,
            Err(e) => {
                errors.push(e.in_file(file));
                if !keep_going {
                    break;
                }
            }
        }
    }
    (applied, errors)
}

/// Tokenize `src` line by line (joining `\` continuations) and apply each command to
/// `spec`. Each command is applied all-or-nothing. Returns, for a whole file, the first
/// word of each device that routes send through and no line declares (`link set`,
/// `addr add`, `neigh add`, a device's sysctl); none for one command (`single`: a
/// running router checks its devices itself).
fn parse_into(
    src: &str,
    first_line: usize,
    spec: &mut RouterSpec,
    single: bool,
    base: &Path,
) -> Result<Vec<lex::Tok>, PErr> {
    parse_indexed(src, first_line, spec, single, base, &mut apply::Index::of(spec))
}

/// Commands one a line, each applied to `spec` as [`parse_line`] applies one, with one
/// index of the spec for all of them (so N lines cost O(N), not O(N) each): `sr6 ctl
/// batch` and the merge of mirrored routes. Blank and comment lines are skipped. With
/// `keep_going`, a refused line is left out and its error collected; otherwise the
/// first error is the only one returned and the lines after it are not applied (`spec`
/// then holds the lines before it: work on a copy). Returns the commands applied and
/// the errors.
pub fn parse_lines<'a>(
    lines: impl IntoIterator<Item = &'a str>,
    file: &str,
    spec: &mut RouterSpec,
    keep_going: bool,
) -> (usize, Vec<ConfigError>) {
    let mut idx = apply::Index::of(spec);
    apply_lines(lines, file, spec, keep_going, &mut idx)
}

fn parse_indexed(
    src: &str,
    first_line: usize,
    spec: &mut RouterSpec,
    single: bool,
    base: &Path,
    idx: &mut apply::Index,
) -> Result<Vec<lex::Tok>, PErr> {
    let src = src.strip_prefix('\u{feff}').unwrap_or(src);
    let mut pending: Vec<lex::Tok> = Vec::new();
    let mut continued: Option<(usize, usize)> = None;
    let mut stashed: Option<cmd::Cmd> = None;
    // Devices declared by the file, and the first route word naming each other device.
    let mut declared: Vec<String> = Vec::new();
    let mut undeclared: Vec<lex::Tok> = Vec::new();
    for (i, raw) in src.lines().enumerate() {
        let line_no = first_line + i;
        let lexed = lex::lex_line(raw, line_no)?;
        pending.extend(lexed.toks);
        if let Some(col) = lexed.continues {
            continued = Some((line_no, col));
            continue;
        }
        continued = None;
        if pending.is_empty() {
            continue;
        }
        if single && stashed.is_some() {
            return Err(PErr::at(&pending[0], "only one command may be given here")
                .exp("a single command (continue it with `\\` at the end of the line)"));
        }
        let cmd = cmd::parse_command(&pending, base)?;
        if single {
            // Applied only once the whole input is known to hold one good command.
            stashed = Some(cmd);
        } else {
            if cmd.route_devs.is_empty() {
                declared.extend(cmd.devs.iter().cloned());
            }
            for t in &cmd.route_devs {
                if !undeclared.iter().any(|u| u.text == t.text) {
                    undeclared.push(t.clone());
                }
            }
            apply::commit(spec, idx, cmd)?;
        }
        pending.clear();
    }
    if let Some((line, col)) = continued {
        return Err(PErr::at_pos(line, col, "`\\` continues the command but nothing follows")
            .exp("the rest of the command on the next line"));
    }
    if let Some(cmd) = stashed {
        apply::commit(spec, idx, cmd)?;
    }
    undeclared.retain(|t| !declared.contains(&t.text));
    Ok(undeclared)
}

/// A device that routes send through but no line of the file declares: the kernel
/// refuses such a route (`Cannot find device`); in a file it is most likely a typo,
/// which would otherwise make a new device.
fn undeclared_device(t: &lex::Tok) -> PErr {
    PErr::at(t, format!("device `{}` is only named by routes", t.text)).exp(format!(
        "a device declared by an `ip link set {0} up`, `ip addr add ... dev {0}` or `ip neigh add ... dev {0}` line",
        t.text
    ))
}
