//! Reading pattern lists from files.
//!
//! Three formats, one pattern per line. A pattern's id is its 0-based line number in the
//! file (comment and blank lines count), so a match can always be traced back to its line.
//!
//! - [`Format::Lines`]: each non-empty line is a literal, byte for byte (a trailing `\r`
//!   is part of the pattern; blank lines are skipped).
//! - [`Format::Tsv`]: `HEX<TAB>NOCASE[<TAB>...]` where `HEX` is the pattern in hex and
//!   `NOCASE` is `0` or `1`; further columns are ignored. Blank lines and lines starting
//!   with `#` are skipped. This is the format of `shared/data/patterns/*.tsv`.
//! - [`Format::Snort`]: Snort/Suricata `content` syntax: text with `|hex bytes|` sections
//!   (`abc|0D 0A|def`) and backslash escapes of `\ " ; : |`, optionally wrapped in double
//!   quotes, optionally followed by `<TAB>nocase`. Blank lines and lines starting with `#`
//!   are skipped.
//!
//! ```
//! use dfc::patfile::{parse, Format};
//! let pats = parse(b"# header\nGET |2f|\tnocase\n", Format::Snort).unwrap();
//! assert_eq!(pats[0].id, 1);
//! assert_eq!(pats[0].bytes, b"GET /");
//! assert!(pats[0].nocase);
//! ```

use std::fmt;

/// A pattern file format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// One literal per line.
    Lines,
    /// `hex<TAB>nocase`.
    Tsv,
    /// Snort content syntax.
    Snort,
}

/// A pattern read from a file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pattern {
    /// The 0-based line number.
    pub id: u32,
    /// The bytes to match.
    pub bytes: Vec<u8>,
    /// Whether ASCII letters match in either case.
    pub nocase: bool,
}

/// A malformed line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    /// 1-based line number.
    pub line: usize,
    /// 1-based byte column.
    pub column: usize,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "line {}, column {}: {}",
            self.line, self.column, self.message
        )
    }
}

impl std::error::Error for ParseError {}

/// Parses a whole pattern file.
pub fn parse(text: &[u8], format: Format) -> Result<Vec<Pattern>, ParseError> {
    let mut out = Vec::new();
    for (n, line) in text.split(|&b| b == b'\n').enumerate() {
        // A final newline does not start another (empty) line.
        if line.is_empty() {
            continue;
        }
        let id = u32::try_from(n).map_err(|_| err(n, 0, "too many lines".into()))?;
        let parsed = match format {
            Format::Lines => Some((line.to_vec(), false)),
            Format::Tsv => tsv_line(line).map_err(|(c, m)| err(n, c, m))?,
            Format::Snort => snort_line(line).map_err(|(c, m)| err(n, c, m))?,
        };
        if let Some((bytes, nocase)) = parsed {
            out.push(Pattern { id, bytes, nocase });
        }
    }
    Ok(out)
}

fn err(line: usize, column: usize, message: String) -> ParseError {
    ParseError {
        line: line + 1,
        column: column + 1,
        message,
    }
}

type LineResult = Result<Option<(Vec<u8>, bool)>, (usize, String)>;

fn is_skipped(line: &[u8]) -> bool {
    line.iter().all(|b| b.is_ascii_whitespace()) || line.first() == Some(&b'#')
}

fn tsv_line(line: &[u8]) -> LineResult {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    if is_skipped(line) {
        return Ok(None);
    }
    let mut cols = line.split(|&b| b == b'\t');
    let hex = cols.next().unwrap_or_default();
    let Some(flag) = cols.next() else {
        return Err((
            hex.len(),
            "expected a tab and the nocase flag (0 or 1)".into(),
        ));
    };
    let nocase = match flag {
        b"0" => false,
        b"1" => true,
        _ => {
            return Err((
                hex.len() + 1,
                format!(
                    "nocase flag must be 0 or 1, not {:?}",
                    String::from_utf8_lossy(flag)
                ),
            ));
        }
    };
    if hex.is_empty() {
        return Err((0, "empty pattern".into()));
    }
    if hex.len() % 2 == 1 {
        return Err((hex.len() - 1, "odd number of hex digits".into()));
    }
    let mut bytes = Vec::with_capacity(hex.len() / 2);
    for (k, pair) in hex.chunks(2).enumerate() {
        let hi =
            hex_digit(pair[0]).ok_or((2 * k, format!("not a hex digit: {:?}", pair[0] as char)))?;
        let lo = hex_digit(pair[1])
            .ok_or((2 * k + 1, format!("not a hex digit: {:?}", pair[1] as char)))?;
        bytes.push(hi << 4 | lo);
    }
    Ok(Some((bytes, nocase)))
}

fn hex_digit(b: u8) -> Option<u8> {
    (b as char).to_digit(16).map(|d| d as u8)
}

fn snort_line(line: &[u8]) -> LineResult {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    if is_skipped(line) {
        return Ok(None);
    }
    let (content, nocase) = match line.iter().position(|&b| b == b'\t') {
        None => (line, false),
        Some(tab) => {
            let modifier = &line[tab + 1..];
            if modifier.trim_ascii() == b"nocase" {
                (&line[..tab], true)
            } else {
                return Err((
                    tab + 1,
                    format!(
                        "expected `nocase` after the tab, found {:?}",
                        String::from_utf8_lossy(modifier)
                    ),
                ));
            }
        }
    };
    let (content, base) = match content {
        [b'"', inner @ .., b'"'] if !inner.is_empty() => (inner, 1),
        _ => (content, 0),
    };
    decode_content(content)
        .map(|bytes| Some((bytes, nocase)))
        .map_err(|(c, m)| (c + base, m))
}

/// Decodes Snort `content` text: literal bytes, `|hex|` sections and backslash escapes.
/// Errors carry the 0-based byte column.
pub fn decode_content(content: &[u8]) -> Result<Vec<u8>, (usize, String)> {
    let mut out = Vec::with_capacity(content.len());
    let mut k = 0;
    while k < content.len() {
        match content[k] {
            b'\\' => {
                let Some(&next) = content.get(k + 1) else {
                    return Err((k, "backslash at the end of the content".into()));
                };
                if !matches!(next, b'\\' | b'"' | b';' | b':' | b'|') {
                    return Err((k, format!("unknown escape \\{}", next as char)));
                }
                out.push(next);
                k += 2;
            }
            b'|' => {
                let open = k;
                k += 1;
                let mut high: Option<(u8, usize)> = None;
                loop {
                    let Some(&b) = content.get(k) else {
                        return Err((open, "unterminated |hex| section".into()));
                    };
                    match b {
                        b'|' => break,
                        b' ' | b'\t' => {}
                        _ => {
                            let Some(d) = hex_digit(b) else {
                                return Err((
                                    k,
                                    format!("not a hex digit in |hex| section: {:?}", b as char),
                                ));
                            };
                            match high.take() {
                                None => high = Some((d, k)),
                                Some((h, _)) => out.push(h << 4 | d),
                            }
                        }
                    }
                    k += 1;
                }
                if let Some((_, at)) = high {
                    return Err((at, "odd number of hex digits in |hex| section".into()));
                }
                k += 1;
            }
            b'"' | b';' => {
                return Err((k, format!("unescaped {:?} in content", content[k] as char)));
            }
            b => {
                out.push(b);
                k += 1;
            }
        }
    }
    if out.is_empty() {
        return Err((0, "empty pattern".into()));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_keep_bytes_and_line_ids() {
        let p = parse(b"abc\n\n\xff x\r\n", Format::Lines).unwrap();
        assert_eq!(p.len(), 2);
        assert_eq!((p[0].id, p[0].bytes.as_slice()), (0, &b"abc"[..]));
        assert_eq!((p[1].id, p[1].bytes.as_slice()), (2, &b"\xff x\r"[..]));
    }

    #[test]
    fn tsv_parses_and_reports_errors() {
        let p = parse(b"# h\n414243\t1\t5\n00\t0\n", Format::Tsv).unwrap();
        assert_eq!(
            p[0],
            Pattern {
                id: 1,
                bytes: b"ABC".to_vec(),
                nocase: true
            }
        );
        assert_eq!(
            p[1],
            Pattern {
                id: 2,
                bytes: vec![0],
                nocase: false
            }
        );
        let e = parse(b"41\t0\n4g\t0\n", Format::Tsv).unwrap_err();
        assert_eq!((e.line, e.column), (2, 2));
        let e = parse(b"414\t0\n", Format::Tsv).unwrap_err();
        assert!(e.message.contains("odd"), "{e}");
        let e = parse(b"41\tyes\n", Format::Tsv).unwrap_err();
        assert_eq!((e.line, e.column), (1, 4));
        assert!(parse(b"41\n", Format::Tsv).is_err());
    }

    #[test]
    fn snort_content_syntax() {
        let p = parse(b"abc|0D 0a|def\tnocase\n\"x\\;y\"\n|00|\n", Format::Snort).unwrap();
        assert_eq!(p[0].bytes, b"abc\r\ndef");
        assert!(p[0].nocase);
        assert_eq!(p[1].bytes, b"x;y");
        assert_eq!(p[2].bytes, b"\0");
        for (bad, col) in [
            (&b"ab|0D"[..], 3),
            (b"ab|0D 0|", 7),
            (b"a|zz|", 3),
            (b"a;b", 2),
            (b"a\\qb", 2),
            (b"||", 1),
            (b"abc\tfast", 5),
        ] {
            let e = parse(bad, Format::Snort).unwrap_err();
            assert_eq!(e.column, col, "{:?}: {e}", String::from_utf8_lossy(bad));
        }
    }
}
