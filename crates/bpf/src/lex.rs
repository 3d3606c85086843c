//! Tokens of the pcap-filter language.
//!
//! Words are runs of letters, digits and `-_.:` (host names, addresses, `icmp-echo`,
//! `25-53`); a leading backslash marks a word as a name rather than a keyword (`\tcp`).
//! Inside brackets `:` separates offset and size, so `ip[2:2]` is not read as an address.

use crate::compile::CompileError;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Tok {
    /// A word; `true` when it was written with a leading backslash.
    Word(String, bool),
    /// Punctuation and operators: `( ) [ ] : + - * / % & | ^ << >> ! != == = > >= < <=
    /// && ||`.
    Op(&'static str),
}

#[derive(Clone, Debug)]
pub struct Token {
    pub tok: Tok,
    /// Byte offset in the expression.
    pub pos: usize,
}

const OPS: [&str; 25] = [
    "&&", "||", "<<", ">>", "!=", "==", ">=", "<=", "(", ")", "[", "]", ":", "+", "-", "*", "/",
    "%", "&", "|", "^", "!", ">", "<", "=",
];

fn word_char(c: u8, in_brackets: bool) -> bool {
    c.is_ascii_alphanumeric()
        || matches!(c, b'-' | b'_' | b'.' | b'$')
        || (c == b':' && !in_brackets)
}

pub fn lex(src: &str) -> Result<Vec<Token>, CompileError> {
    let b = src.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    let mut depth = 0usize;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        let escaped = c == b'\\';
        let start = i;
        let ws = if escaped { i + 1 } else { i };
        let starts_word = b.get(ws).is_some_and(|&c| {
            c.is_ascii_alphanumeric()
                || c == b'$'
                || (c == b':' && depth == 0 && b.get(ws + 1) == Some(&b':'))
        });
        if starts_word {
            let mut j = ws;
            while j < b.len() && word_char(b[j], depth > 0) {
                j += 1;
            }
            // A word never ends in '-' or '.': those belong to the next token.
            while j > ws + 1 && matches!(b[j - 1], b'-' | b'.') {
                j -= 1;
            }
            out.push(Token {
                tok: Tok::Word(src[ws..j].to_string(), escaped),
                pos: start,
            });
            i = j;
            continue;
        }
        if escaped {
            return Err(CompileError::at(
                start,
                "a backslash must be followed by a name",
            ));
        }
        let Some(op) = OPS.iter().find(|op| src[i..].starts_with(**op)) else {
            let ch = src[i..].chars().next().unwrap_or('?');
            return Err(CompileError::at(i, format!("unexpected character `{ch}`")));
        };
        match *op {
            "[" => depth += 1,
            "]" => depth = depth.saturating_sub(1),
            _ => {}
        }
        out.push(Token {
            tok: Tok::Op(op),
            pos: i,
        });
        i += op.len();
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        lex(s)
            .unwrap()
            .into_iter()
            .map(|t| match t.tok {
                Tok::Word(w, e) => format!("{}{w}", if e { "\\" } else { "" }),
                Tok::Op(o) => o.to_string(),
            })
            .collect()
    }

    #[test]
    fn tokens() {
        assert_eq!(
            words("ip[2:2] > 576"),
            ["ip", "[", "2", ":", "2", "]", ">", "576"]
        );
        assert_eq!(
            words("ether host ab:cd:ef:0:0:1"),
            ["ether", "host", "ab:cd:ef:0:0:1"]
        );
        assert_eq!(words("ip6 host ::1"), ["ip6", "host", "::1"]);
        assert_eq!(words("ip proto \\tcp"), ["ip", "proto", "\\tcp"]);
        assert_eq!(
            words("tcp[tcpflags]&(tcp-syn|tcp-fin)!=0"),
            [
                "tcp", "[", "tcpflags", "]", "&", "(", "tcp-syn", "|", "tcp-fin", ")", "!=", "0"
            ]
        );
        assert_eq!(words("net 10.0.0.0/8"), ["net", "10.0.0.0", "/", "8"]);
        assert!(lex("host #").is_err());
    }
}
