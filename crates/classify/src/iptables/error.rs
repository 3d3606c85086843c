//! Why a dump, or a rule of it, was refused.

use std::fmt;

/// A problem with one line of a dump (or with the dump as a whole, at line 1).
///
/// Its [`Display`](fmt::Display) is `line:column: message`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    line: usize,
    column: usize,
    kind: ErrorKind,
}

/// What went wrong. Private, so that kinds can be added and messages improved without
/// breaking callers.
#[derive(Clone, Debug, PartialEq, Eq)]
enum ErrorKind {
    /// The dump holds no rule set to classify with (no filter table, no such chain).
    NoRuleSet(String),
    /// A line is not what an `iptables-save` dump holds (a chain policy, a rule without
    /// `-A`, an unterminated quote, a rule without a target).
    Line(String),
    /// An option's value is not valid.
    BadValue(String),
    /// iptables reads it; netsieve does not represent it.
    Unsupported(String),
    /// The chains cannot be flattened here (an unknown chain, a loop, too deep or too
    /// large, a stateful match on a jump).
    Chain(String),
}

impl ParseError {
    fn new(line: usize, column: usize, kind: ErrorKind) -> ParseError {
        ParseError { line, column, kind }
    }

    /// 1-based line in the dump.
    pub fn line(&self) -> usize {
        self.line
    }

    /// 1-based column in the line.
    pub fn column(&self) -> usize {
        self.column
    }

    /// What went wrong, without the position.
    pub fn message(&self) -> &str {
        match &self.kind {
            ErrorKind::NoRuleSet(m)
            | ErrorKind::Line(m)
            | ErrorKind::BadValue(m)
            | ErrorKind::Unsupported(m)
            | ErrorKind::Chain(m) => m,
        }
    }

    pub(crate) fn no_rule_set(message: String) -> ParseError {
        ParseError::new(1, 1, ErrorKind::NoRuleSet(message))
    }

    pub(crate) fn line_error(line: usize, column: usize, message: impl Into<String>) -> ParseError {
        ParseError::new(line, column, ErrorKind::Line(message.into()))
    }

    pub(crate) fn bad_value(line: usize, column: usize, message: impl Into<String>) -> ParseError {
        ParseError::new(line, column, ErrorKind::BadValue(message.into()))
    }

    pub(crate) fn unsupported(
        line: usize,
        column: usize,
        message: impl Into<String>,
    ) -> ParseError {
        ParseError::new(line, column, ErrorKind::Unsupported(message.into()))
    }

    pub(crate) fn chain(line: usize, message: impl Into<String>) -> ParseError {
        ParseError::new(line, 1, ErrorKind::Chain(message.into()))
    }

    /// The same error, found on line `line`.
    pub(crate) fn on_line(mut self, line: usize) -> ParseError {
        self.line = line;
        self
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.line, self.column, self.message())
    }
}

impl std::error::Error for ParseError {}
