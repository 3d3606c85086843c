//! Why a rule was refused.

use std::fmt;

/// Why one rule was rejected: what went wrong and at which column of its text.
///
/// Its [`Display`](fmt::Display) is `column N: message`; [`ParseError::category`] is the
/// short reason loaders count failures by.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    column: usize,
    kind: ErrorKind,
}

/// What went wrong. Private, so that kinds can be added and messages improved without
/// breaking callers.
#[derive(Clone, Debug, PartialEq, Eq)]
enum ErrorKind {
    EmptyRule,
    /// The text is not `header (options)`: why not.
    NoOptions(&'static str),
    /// An option not ended by `;`: its start (cut short).
    Unterminated(String),
    NoSid,
    UnknownAction(String),
    NoProtocol,
    UnknownProtocol(String),
    UnknownHook(String),
    /// A header of neither 2 nor 7 fields: how many.
    HeaderFields(usize),
    BadAddress(String),
    BadPort(String),
    BadDirection(String),
    UnknownKeyword(String),
    MissingValue(String),
    BadValue {
        keyword: String,
        /// Cut short.
        value: String,
        why: String,
    },
    /// A content modifier with no content before it.
    NoContent(String),
    /// A legacy buffer modifier (`http_uri`) with no content before it.
    NoContentToMove(String),
    /// A (gid, sid) loaded before.
    DuplicateSid(u32, u32),
}

impl ParseError {
    fn new(column: usize, kind: ErrorKind) -> ParseError {
        ParseError { column, kind }
    }

    /// 1-based column in the rule's text (its first line for a continued rule).
    pub fn column(&self) -> usize {
        self.column
    }

    /// A short reason for summaries ("unknown keyword 'foo'", "bad content").
    pub fn category(&self) -> String {
        match &self.kind {
            ErrorKind::EmptyRule => "empty rule".into(),
            ErrorKind::NoOptions(_) => "no options".into(),
            ErrorKind::Unterminated(_) => "missing ';'".into(),
            ErrorKind::NoSid => "no sid".into(),
            ErrorKind::UnknownAction(_) => "unknown action".into(),
            ErrorKind::NoProtocol | ErrorKind::HeaderFields(_) => "bad header".into(),
            ErrorKind::UnknownProtocol(_) => "unknown protocol".into(),
            ErrorKind::UnknownHook(_) => "unknown hook".into(),
            ErrorKind::BadAddress(_) => "bad address".into(),
            ErrorKind::BadPort(_) => "bad port".into(),
            ErrorKind::BadDirection(_) => "bad direction".into(),
            ErrorKind::UnknownKeyword(k) => format!("unknown keyword '{k}'"),
            ErrorKind::MissingValue(k) => format!("'{k}' without value"),
            ErrorKind::BadValue { keyword, .. } => format!("bad {keyword}"),
            ErrorKind::NoContent(k) | ErrorKind::NoContentToMove(k) => {
                format!("'{k}' without content")
            }
            ErrorKind::DuplicateSid(..) => "duplicate sid".into(),
        }
    }

    /// What went wrong, without the column.
    pub fn message(&self) -> String {
        match &self.kind {
            ErrorKind::EmptyRule => "empty rule".into(),
            ErrorKind::NoOptions(why) => (*why).into(),
            ErrorKind::Unterminated(opt) => format!("option '{opt}' is not ended by ';'"),
            ErrorKind::NoSid => "rule has no sid".into(),
            ErrorKind::UnknownAction(a) => format!("unknown action '{a}'"),
            ErrorKind::NoProtocol => "no protocol".into(),
            ErrorKind::UnknownProtocol(p) => format!("unknown protocol '{p}'"),
            ErrorKind::UnknownHook(h) => format!("unknown hook '{h}'"),
            ErrorKind::HeaderFields(n) => {
                format!("header needs 7 fields (action proto src sport dir dst dport), found {n}")
            }
            ErrorKind::BadAddress(m) | ErrorKind::BadPort(m) => m.clone(),
            ErrorKind::BadDirection(d) => format!("direction must be -> or <>, not '{d}'"),
            ErrorKind::UnknownKeyword(k) => format!("unknown keyword '{k}'"),
            ErrorKind::MissingValue(k) => format!("'{k}' needs a value"),
            ErrorKind::BadValue {
                keyword,
                value,
                why,
            } => format!("bad {keyword} '{value}': {why}"),
            ErrorKind::NoContent(k) => format!("'{k}' needs a content before it"),
            ErrorKind::NoContentToMove(k) => {
                format!("'{k}' modifies a content, but none comes before it")
            }
            ErrorKind::DuplicateSid(gid, sid) => format!("duplicate signature id {gid}:{sid}"),
        }
    }

    pub(crate) fn empty_rule() -> ParseError {
        ParseError::new(1, ErrorKind::EmptyRule)
    }

    pub(crate) fn no_options(column: usize, why: &'static str) -> ParseError {
        ParseError::new(column, ErrorKind::NoOptions(why))
    }

    pub(crate) fn unterminated(column: usize, option: &str) -> ParseError {
        ParseError::new(column, ErrorKind::Unterminated(short(option)))
    }

    pub(crate) fn no_sid(column: usize) -> ParseError {
        ParseError::new(column, ErrorKind::NoSid)
    }

    pub(crate) fn unknown_action(column: usize, action: &str) -> ParseError {
        ParseError::new(column, ErrorKind::UnknownAction(action.into()))
    }

    pub(crate) fn unknown_hook(column: usize, hook: &str) -> ParseError {
        ParseError::new(column, ErrorKind::UnknownHook(hook.into()))
    }

    pub(crate) fn no_protocol(column: usize) -> ParseError {
        ParseError::new(column, ErrorKind::NoProtocol)
    }

    pub(crate) fn unknown_protocol(column: usize, proto: &str) -> ParseError {
        ParseError::new(column, ErrorKind::UnknownProtocol(proto.into()))
    }

    pub(crate) fn header_fields(column: usize, found: usize) -> ParseError {
        ParseError::new(column, ErrorKind::HeaderFields(found))
    }

    pub(crate) fn bad_address(column: usize, message: String) -> ParseError {
        ParseError::new(column, ErrorKind::BadAddress(message))
    }

    pub(crate) fn bad_port(column: usize, message: String) -> ParseError {
        ParseError::new(column, ErrorKind::BadPort(message))
    }

    pub(crate) fn bad_direction(column: usize, dir: &str) -> ParseError {
        ParseError::new(column, ErrorKind::BadDirection(dir.into()))
    }

    pub(crate) fn unknown_keyword(column: usize, keyword: &str) -> ParseError {
        ParseError::new(column, ErrorKind::UnknownKeyword(keyword.into()))
    }

    pub(crate) fn missing_value(column: usize, keyword: &str) -> ParseError {
        ParseError::new(column, ErrorKind::MissingValue(keyword.into()))
    }

    pub(crate) fn bad_value(column: usize, keyword: &str, value: &str, why: &str) -> ParseError {
        ParseError::new(
            column,
            ErrorKind::BadValue {
                keyword: keyword.into(),
                value: short(value),
                why: why.into(),
            },
        )
    }

    pub(crate) fn no_content(column: usize, keyword: &str) -> ParseError {
        ParseError::new(column, ErrorKind::NoContent(keyword.into()))
    }

    pub(crate) fn no_content_to_move(column: usize, keyword: &str) -> ParseError {
        ParseError::new(column, ErrorKind::NoContentToMove(keyword.into()))
    }

    pub(crate) fn duplicate_sid(gid: u32, sid: u32) -> ParseError {
        ParseError::new(1, ErrorKind::DuplicateSid(gid, sid))
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "column {}: {}", self.column, self.message())
    }
}

impl std::error::Error for ParseError {}

/// The first 40 characters of `s`, and "..." when there were more.
pub(crate) fn short(s: &str) -> String {
    let mut t: String = s.chars().take(40).collect();
    if t.len() < s.len() {
        t.push_str("...");
    }
    t
}
