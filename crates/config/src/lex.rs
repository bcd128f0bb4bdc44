//! Splitting a line into words, shell-style, keeping 1-based columns.
//!
//! - Words are separated by whitespace.
//! - `#` at the start of a word starts a comment that runs to the end of the line
//!   (as in a shell script: `key#1` is one word).
//! - `"..."` (with `\"` and `\\` escapes) and `'...'` quote; quotes may be empty.
//! - `\` followed by a character outside quotes is that character; `\` at the end of the
//!   line (only whitespace after it) continues the command on the next line and ends
//!   the current word.

use crate::PErr;

/// One word of a command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Tok {
    /// The word with quotes and escapes removed.
    pub text: String,
    /// 1-based physical line.
    pub line: usize,
    /// 1-based column (in characters) of the word's first character.
    pub col: usize,
    /// Width of the word as written (characters, quotes included).
    pub width: usize,
}

impl Tok {
    /// The column just past the word.
    pub fn end_col(&self) -> usize {
        self.col + self.width
    }
}

pub(crate) struct Lexed {
    pub toks: Vec<Tok>,
    /// Column of the trailing `\` when the command continues on the next line.
    pub continues: Option<usize>,
}

pub(crate) fn lex_line(src: &str, line: usize) -> Result<Lexed, PErr> {
    let chars: Vec<char> = src.chars().collect();
    let n = chars.len();
    let mut toks = Vec::new();
    let mut i = 0;
    loop {
        while i < n && chars[i].is_whitespace() {
            i += 1;
        }
        if i >= n || chars[i] == '#' {
            return Ok(Lexed { toks, continues: None });
        }
        let start = i;
        let mut text = String::new();
        let mut quoted = false;
        let mut continues = None;
        let mut end = None;
        while i < n && !chars[i].is_whitespace() {
            match chars[i] {
                q @ ('"' | '\'') => {
                    quoted = true;
                    let open = i;
                    i += 1;
                    loop {
                        if i >= n {
                            return Err(PErr::at_pos(line, open + 1, "unterminated quote")
                                .exp(format!("a closing {q} on the same line")));
                        }
                        let c = chars[i];
                        if c == q {
                            i += 1;
                            break;
                        }
                        if q == '"' && c == '\\' && i + 1 < n && matches!(chars[i + 1], '"' | '\\') {
                            text.push(chars[i + 1]);
                            i += 2;
                        } else {
                            text.push(c);
                            i += 1;
                        }
                    }
                }
                '\\' => {
                    if chars[i + 1..].iter().all(|c| c.is_whitespace()) {
                        continues = Some(i + 1);
                        end = Some(i);
                        i = n;
                        break;
                    }
                    text.push(chars[i + 1]);
                    i += 2;
                }
                c => {
                    text.push(c);
                    i += 1;
                }
            }
        }
        let end = end.unwrap_or(i);
        if end > start && (quoted || !text.is_empty()) {
            toks.push(Tok { text, line, col: start + 1, width: end - start });
        }
        if continues.is_some() {
            return Ok(Lexed { toks, continues });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<(String, usize)> {
        lex_line(s, 1).unwrap().toks.into_iter().map(|t| (t.text, t.col)).collect()
    }

    #[test]
    fn columns_and_comments() {
        assert_eq!(words("  ip  -6 route # comment"), vec![("ip".into(), 3), ("-6".into(), 7), ("route".into(), 10)]);
        assert_eq!(words("# only a comment"), vec![]);
        assert_eq!(words("key#1 x"), vec![("key#1".into(), 1), ("x".into(), 7)]);
        assert_eq!(words("\ta\tb"), vec![("a".into(), 2), ("b".into(), 4)]);
    }

    #[test]
    fn quotes_and_escapes() {
        assert_eq!(words(r#"set "a b#c" ''"#), vec![("set".into(), 1), ("a b#c".into(), 5), ("".into(), 13)]);
        assert_eq!(words(r#""q\"x\\""#), vec![(r#"q"x\"#.into(), 1)]);
        assert_eq!(words(r"a\ b"), vec![("a b".into(), 1)]);
        assert_eq!(words("'it''s'"), vec![("its".into(), 1)]);
        let e = lex_line("x \"open", 4).err().unwrap();
        assert_eq!((e.line, e.col), (4, 3));
    }

    #[test]
    fn continuation() {
        let l = lex_line("route add \\  ", 1).unwrap();
        assert_eq!(l.continues, Some(11));
        assert_eq!(l.toks.len(), 2);
        let l = lex_line("segs a,b\\", 1).unwrap();
        assert_eq!(l.continues, Some(9));
        assert_eq!(l.toks[1].text, "a,b");
        assert_eq!(l.toks[1].width, 3);
        let l = lex_line("# comment \\", 1).unwrap();
        assert_eq!(l.continues, None);
    }
}
