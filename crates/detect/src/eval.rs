//! Evaluating a rule's list of matches over one buffer.
//!
//! The semantics are Suricata's content inspection: matches run in rule order; each
//! content, pcre, `byte_jump` or `byte_extract` moves the *detection pointer* to where it
//! ended, and relative options (`distance`, `within`, `/R`, `relative`) count from it.
//! When a later option fails, an earlier content or pcre is retried at its next
//! occurrence (backtracking), as Suricata does; a step budget bounds the work on
//! adversarial input (Suricata's inspection recursion limit plays the same role). A
//! content that failed from one pointer, and can only fail from every later one, is not
//! tried again (see `step`).

use memchr::memmem;
use netsieve_rules::rule::{Capture, Pcre, VarScope};
use netsieve_rules::{
    Asn1, ByteOp, ByteRead, Cmp, Dataset, DatasetCmd, Endian, Entropy, Match, MathOp, Pick, Val,
};
use std::sync::Arc;

use crate::dataset::{self, DataSet, Declared};
use crate::pcre::{Regex, Regexes};
use crate::rarity::rarest_byte;
use crate::vars::Captured;

/// Steps of backtracking allowed per list evaluation.
const BUDGET: u32 = 3000;
/// The longest list whose failures are kept (see [`step`]).
const MEMO_LEVELS: usize = 32;
/// byte_extract variables per rule.
pub const MAX_VARS: usize = 8;

#[derive(Clone, Copy, Debug)]
pub enum CVal {
    Num(i64),
    Var(u8),
}

#[derive(Debug)]
pub struct CContent {
    /// The pattern, lowercased when `nocase`.
    pub pat: Vec<u8>,
    pub nocase: bool,
    pub negated: bool,
    pub offset: Option<CVal>,
    pub depth: Option<CVal>,
    pub distance: Option<CVal>,
    pub within: Option<CVal>,
    pub startswith: bool,
    pub endswith: bool,
    /// Built the first time the content is searched for: most contents of a large rule
    /// set never are, and a finder is 288 bytes.
    finder: std::sync::OnceLock<Box<memmem::Finder<'static>>>,
    /// A `nocase` content's search looks for this byte of it first, its rarest
    /// ([`rarest_byte`]): its first byte is often a common letter.
    anchor: usize,
}

/// A compiled match. Contents dominate rule lists, so they are stored inline.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub enum CMatch {
    Content(CContent),
    Pcre {
        re: Arc<Regex>,
        negated: bool,
        relative: bool,
        /// The variables its groups set: (group, where, name).
        targets: Box<[(usize, VarScope, Arc<str>)]>,
    },
    /// `read` (its byte count from `count`) compared with `value`.
    ByteTest {
        read: CRead,
        count: CVal,
        negated: bool,
        op: ByteOp,
        value: CVal,
    },
    ByteJump {
        read: CRead,
        multiplier: u64,
        align: bool,
        from_beginning: bool,
        from_end: bool,
        post_offset: i64,
    },
    ByteExtract {
        read: CRead,
        var: u8,
        multiplier: u64,
        align: u8,
    },
    /// `read` (its byte count from `count`), `oper` `rvalue`, into variable `var`.
    ByteMath {
        read: CRead,
        count: CVal,
        oper: MathOp,
        rvalue: CVal,
        var: u8,
    },
    /// Decodes base64 where the rule says; `data` (the rule's `base64_data` list)
    /// must match what it decoded.
    Base64Decode {
        bytes: Option<u64>,
        offset: u64,
        relative: bool,
        data: Vec<CMatch>,
    },
    IsDataAt {
        offset: CVal,
        relative: bool,
        negated: bool,
    },
    Bsize(Cmp),
    Entropy(Entropy),
    Uint(Cmp),
    UintList(Cmp, Pick),
    Asn1(Asn1),
    /// `dataset`: `context_key` names the context a JSON set's value gives the alert.
    Dataset {
        cmd: DatasetCmd,
        set: Arc<DataSet>,
        context_key: Option<Arc<str>>,
    },
    Datarep {
        set: Arc<DataSet>,
        cmp: Cmp,
    },
    DceIface {
        uuid: [u8; 16],
        version: Option<Cmp>,
        any_frag: bool,
    },
}

#[derive(Clone, Copy, Debug)]
pub struct CRead {
    pub bytes: u8,
    pub offset: CVal,
    pub relative: bool,
    pub little: bool,
    pub base: Option<u32>,
    pub bitmask: Option<u64>,
}

type ValFn<'a> = dyn FnMut(&Val, &mut Vec<String>) -> Result<CVal, String> + 'a;

/// Why a list does not compile, and the column of the option at fault when known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListError {
    pub column: Option<usize>,
    pub message: String,
}

impl From<String> for ListError {
    fn from(message: String) -> ListError {
        ListError {
            column: None,
            message,
        }
    }
}

/// The set a `dataset` (`d`) or `datarep` names, paths as the rule set resolved them.
fn open_set(
    name: &str,
    kind: netsieve_rules::DataType,
    load: Option<&str>,
    d: Option<&Dataset>,
) -> Result<Arc<DataSet>, ListError> {
    dataset::open(&Declared {
        name,
        kind,
        load,
        save: d.and_then(|d| d.save.as_deref()),
        format: d.map_or(netsieve_rules::DataFormat::Csv, |d| d.format),
        value_key: d.and_then(|d| d.value_key.as_deref()),
        array_key: d.and_then(|d| d.array_key.as_deref()),
        remove_key: d.is_some_and(|d| d.remove_key),
        dir: std::path::Path::new(""),
    })
    .map_err(ListError::from)
}

/// Compiles one list. `vars` collects byte_extract names (shared by the rule's lists);
/// its pcres are read through `regexes`, shared by the build's rules.
pub fn compile_list(
    ms: &[Match],
    vars: &mut Vec<String>,
    regexes: &Regexes,
) -> Result<Vec<CMatch>, ListError> {
    let mut val = |v: &Val, vars: &mut Vec<String>| -> Result<CVal, String> {
        Ok(match v {
            Val::Num(n) => CVal::Num(*n),
            Val::Var(name) => CVal::Var(
                vars.iter()
                    .position(|x| x == name)
                    .ok_or_else(|| format!("unknown byte_extract variable '{name}'"))?
                    as u8,
            ),
        })
    };
    let read =
        |r: &ByteRead, vars: &mut Vec<String>, val: &mut ValFn<'_>| -> Result<CRead, String> {
            Ok(CRead {
                bytes: r.bytes,
                offset: val(&r.offset, vars)?,
                relative: r.relative,
                // `dce`: the byte order of the PDU, little-endian as nearly every
                // DCE/RPC peer writes it (a big-endian peer's is not honoured).
                little: r.endian == Endian::Little || r.dce,
                base: r.string_base,
                bitmask: r.bitmask,
            })
        };
    let mut out = Vec::with_capacity(ms.len());
    for m in ms {
        out.push(match m {
            Match::Content(c) => {
                let pat = if c.nocase {
                    c.pattern.to_ascii_lowercase()
                } else {
                    c.pattern.clone()
                };
                let opt =
                    |v: &Option<Val>, vars: &mut Vec<String>| -> Result<Option<CVal>, String> {
                        v.as_ref().map(|v| val(v, vars)).transpose()
                    };
                CMatch::Content(CContent {
                    finder: std::sync::OnceLock::new(),
                    anchor: rarest_byte(&pat, c.nocase),
                    pat,
                    nocase: c.nocase,
                    negated: c.negated,
                    offset: opt(&c.offset, vars)?,
                    depth: opt(&c.depth, vars)?,
                    distance: opt(&c.distance, vars)?,
                    within: opt(&c.within, vars)?,
                    startswith: c.startswith,
                    endswith: c.endswith,
                })
            }
            Match::Pcre(p) => {
                let re = regexes.get(p).map_err(|message| ListError {
                    column: (p.column > 0).then_some(p.column),
                    message,
                })?;
                let targets = capture_targets(p, &re);
                CMatch::Pcre {
                    re,
                    negated: p.negated,
                    relative: p.relative,
                    targets,
                }
            }
            Match::ByteTest {
                read: r,
                count,
                negated,
                op,
                value,
            } => CMatch::ByteTest {
                read: read(r, vars, &mut val)?,
                count: val(count, vars)?,
                negated: *negated,
                op: *op,
                value: val(value, vars)?,
            },
            Match::ByteJump {
                read: r,
                multiplier,
                align,
                from_beginning,
                from_end,
                post_offset,
            } => CMatch::ByteJump {
                read: read(r, vars, &mut val)?,
                multiplier: *multiplier,
                align: *align,
                from_beginning: *from_beginning,
                from_end: *from_end,
                post_offset: *post_offset,
            },
            Match::ByteExtract {
                read: r,
                name,
                multiplier,
                align,
            } => {
                let rd = read(r, vars, &mut val)?;
                if vars.len() >= MAX_VARS {
                    return Err(String::from("too many byte_extract variables").into());
                }
                vars.push(name.clone());
                CMatch::ByteExtract {
                    read: rd,
                    var: (vars.len() - 1) as u8,
                    multiplier: *multiplier,
                    align: *align,
                }
            }
            Match::ByteMath {
                read: r,
                count,
                oper,
                rvalue,
                result,
            } => {
                let (rd, count, rvalue) = (
                    read(r, vars, &mut val)?,
                    val(count, vars)?,
                    val(rvalue, vars)?,
                );
                if vars.len() >= MAX_VARS {
                    return Err(String::from("too many byte_extract variables").into());
                }
                vars.push(result.clone());
                CMatch::ByteMath {
                    read: rd,
                    count,
                    oper: *oper,
                    rvalue,
                    var: (vars.len() - 1) as u8,
                }
            }
            Match::IsDataAt {
                offset,
                relative,
                negated,
            } => CMatch::IsDataAt {
                offset: val(offset, vars)?,
                relative: *relative,
                negated: *negated,
            },
            Match::Bsize(c) => CMatch::Bsize(*c),
            Match::Entropy(e) => CMatch::Entropy(e.clone()),
            Match::Uint(c) => CMatch::Uint(*c),
            Match::UintList(c, pick) => CMatch::UintList(*c, *pick),
            Match::Asn1(a) => CMatch::Asn1(a.clone()),
            Match::Dataset(d) => CMatch::Dataset {
                cmd: d.cmd,
                set: open_set(&d.name, d.kind, d.load.as_deref(), Some(d))?,
                context_key: d.context_key.as_deref().map(Arc::from),
            },
            Match::Datarep(d) => CMatch::Datarep {
                set: open_set(&d.name, d.kind, d.load.as_deref(), None)?,
                cmp: d.cmp,
            },
            Match::DceIface {
                uuid,
                version,
                any_frag,
            } => CMatch::DceIface {
                uuid: *uuid,
                version: *version,
                any_frag: *any_frag,
            },
            Match::Base64Decode {
                bytes,
                offset,
                relative,
            } => CMatch::Base64Decode {
                bytes: *bytes,
                offset: *offset,
                relative: *relative,
                data: Vec::new(),
            },
        });
    }
    Ok(out)
}

/// Evaluation state of one rule over one packet.
pub struct Ctx {
    budget: u32,
    /// The list being evaluated keeps its failures (see [`step`]).
    memo: bool,
    /// By the number of matches left after it, the lowest detection pointer from which
    /// a narrowing match failed.
    failed_from: [usize; MEMO_LEVELS],
    /// Where the buffer being matched starts in the data it is a window of (an HTTP
    /// body inspected again as it grows): a depth counts from the data's start.
    base: usize,
    pub vars: [i64; MAX_VARS],
    /// The contexts JSON datasets gave the rule being evaluated (`alert.context`).
    pub context: Vec<(Arc<str>, Arc<str>)>,
    /// What the `pcre` captures of the rule being evaluated set (kept if it matches).
    pub captured: Vec<Captured>,
    /// `entropy` values taken since the engine last kept them, by buffer.
    pub entropy: Vec<(Arc<str>, f64)>,
}

impl Default for Ctx {
    fn default() -> Self {
        Ctx {
            budget: BUDGET,
            memo: false,
            failed_from: [usize::MAX; MEMO_LEVELS],
            base: 0,
            vars: [0; MAX_VARS],
            context: Vec::new(),
            captured: Vec::new(),
            entropy: Vec::new(),
        }
    }
}

impl Ctx {
    /// A rule's evaluation starts: nothing of the one before is pending.
    pub fn start_rule(&mut self) {
        self.context.clear();
        self.captured.clear();
    }

    /// The rule matched: its `alert:` captures join its alert's context; the others
    /// are handed over, for the flow and the packet.
    pub fn take_captures(&mut self) -> Vec<Captured> {
        let mut kept = std::mem::take(&mut self.captured);
        kept.retain(|c| {
            if c.scope != VarScope::Alert {
                return true;
            }
            // The context holds JSON text: the value as a string.
            let value = serde_json::Value::String(String::from_utf8_lossy(&c.value).into());
            self.context
                .push((c.name.clone(), Arc::from(value.to_string())));
            false
        });
        kept
    }

    fn val(&self, v: CVal) -> i64 {
        match v {
            CVal::Num(n) => n,
            CVal::Var(i) => self.vars[i as usize],
        }
    }
}

/// Whether `list` matches `buf`.
pub fn matches(list: &[CMatch], buf: &[u8], cx: &mut Ctx) -> bool {
    matches_at(list, buf, 0, cx)
}

/// Whether `list` matches `buf`, a window that starts `base` bytes into the data it is
/// part of. Offsets count from the window's start, a depth (and `startswith`) from the
/// data's: measured on the reference, a body inspected again from byte 46,000 finds a
/// content at 62,000 with `depth:63000` and `offset:100`, but not with `depth:20000`
/// or `offset:61000`.
pub fn matches_at(list: &[CMatch], buf: &[u8], base: usize, cx: &mut Ctx) -> bool {
    let memo = list.len() <= MEMO_LEVELS && list.iter().all(CMatch::sets_nothing);
    evaluate(list, buf, base, memo, cx)
}

/// [`matches_at`], keeping failures (see [`step`]) when `memo`.
fn evaluate(list: &[CMatch], buf: &[u8], base: usize, memo: bool, cx: &mut Ctx) -> bool {
    cx.budget = BUDGET;
    cx.base = base;
    cx.memo = memo;
    if memo {
        cx.failed_from[..list.len()].fill(usize::MAX);
    }
    let ok = step(list, buf, 0, cx);
    cx.base = 0;
    ok
}

fn find(c: &CContent, hay: &[u8]) -> Option<usize> {
    if c.pat.len() > hay.len() {
        return None;
    }
    if !c.nocase {
        let f = c
            .finder
            .get_or_init(|| Box::new(memmem::Finder::new(&c.pat).into_owned()));
        return f.find(hay);
    }
    find_nocase(&c.pat, c.anchor, hay)
}

/// The first place in `hay` of `pat` (lower-case) in either case, found by looking for
/// its byte `anchor` first: a match at `s` has that byte at `s + anchor`, so the first
/// place that holds it and the rest of `pat` is the first match.
fn find_nocase(pat: &[u8], anchor: usize, hay: &[u8]) -> Option<usize> {
    if pat.is_empty() {
        return Some(0);
    }
    let last_start = hay.len().checked_sub(pat.len())?;
    let lower = pat[anchor];
    let upper = lower.to_ascii_uppercase();
    let mut s = 0;
    while s <= last_start {
        s += memchr::memchr2(lower, upper, &hay[s + anchor..=last_start + anchor])?;
        if hay[s..s + pat.len()].eq_ignore_ascii_case(pat) {
            return Some(s);
        }
        s += 1;
    }
    None
}

/// The window `[start, end)` a content may occupy, given the detection pointer.
fn window(c: &CContent, prev: usize, len: usize, cx: &Ctx) -> Option<(usize, usize)> {
    let (mut start, mut end): (i64, i64) = (0, len as i64);
    if c.distance.is_some() || c.within.is_some() {
        let dist = c.distance.map_or(0, |d| cx.val(d));
        start = prev as i64 + dist;
        if let Some(w) = c.within {
            end = end.min(prev as i64 + dist + cx.val(w));
        }
        start = start.max(0);
    } else {
        if let Some(o) = c.offset {
            start = cx.val(o).max(0);
        }
        if let Some(d) = c.depth {
            let d = cx.val(d) - cx.base as i64;
            if cx.base > 0 && d <= 0 {
                return None;
            }
            end = end.min(start + d);
        }
    }
    if c.startswith {
        if cx.base > 0 {
            return None;
        }
        end = end.min(start + c.pat.len() as i64);
    }
    if start > end || start > len as i64 {
        return None;
    }
    Some((start as usize, end.max(0) as usize))
}

/// `read` with its byte count from `count` (a number or a variable), held to 1 to
/// `max.0` bytes as a string, 1 to `max.1` in binary; `None` outside them.
fn read_counted(
    read: &CRead,
    count: CVal,
    max: (i64, i64),
    (buf, prev): (&[u8], usize),
    cx: &Ctx,
) -> Option<u64> {
    let n = cx.val(count);
    let max = if read.base.is_some() { max.0 } else { max.1 };
    if !(1..=max).contains(&n) {
        return None;
    }
    let read = CRead {
        bytes: n as u8,
        ..*read
    };
    read_number(&read, buf, prev, cx).map(|(v, _)| v)
}

fn read_number(r: &CRead, buf: &[u8], prev: usize, cx: &Ctx) -> Option<(u64, usize)> {
    let base = if r.relative { prev as i64 } else { 0 };
    let at = base + cx.val(r.offset);
    if at < 0 {
        return None;
    }
    let at = at as usize;
    let n = r.bytes as usize;
    let bytes = buf.get(at..at.checked_add(n)?)?;
    let mut v: u64 = match r.base {
        Some(radix) => {
            let s = std::str::from_utf8(bytes).ok()?;
            let s = s.trim_start_matches(' ');
            // Digits up to the first non-digit, as strtoul.
            let end = s.find(|c: char| !c.is_digit(radix)).unwrap_or(s.len());
            u64::from_str_radix(&s[..end], radix).ok()?
        }
        None => {
            let mut v = 0u64;
            if r.little {
                for &b in bytes.iter().rev() {
                    v = v << 8 | b as u64;
                }
            } else {
                for &b in bytes {
                    v = v << 8 | b as u64;
                }
            }
            v
        }
    };
    if let Some(mask) = r.bitmask {
        v &= mask;
        if mask != 0 {
            v >>= mask.trailing_zeros();
        }
    }
    Some((v, at + n))
}

/// Whether `list` matches from detection pointer `prev`: its first match, then the rest
/// from where that one leaves the pointer.
///
/// In a list that sets no variables, a content whose window only narrows as the pointer
/// moves on (see [`CMatch::narrows`]) that failed from `prev` fails from every later
/// pointer too: each of its occurrences there was tried from `prev`, and what follows
/// depends only on the occurrence. Such failures are kept for the list's evaluation,
/// so a chain that backtracks (`content:"<script"; content:"<"; distance:0; ...`) does
/// not search the same text again for every earlier occurrence.
fn step(list: &[CMatch], buf: &[u8], prev: usize, cx: &mut Ctx) -> bool {
    let Some((m, rest)) = list.split_first() else {
        return true;
    };
    if cx.budget == 0 {
        return false;
    }
    let level = list.len() - 1;
    if cx.memo && prev >= cx.failed_from[level] {
        return false;
    }
    cx.budget -= 1;
    let ok = step_one(m, rest, buf, prev, cx);
    if !ok && cx.memo && m.narrows() {
        cx.failed_from[level] = cx.failed_from[level].min(prev);
    }
    ok
}

/// [`step`] for its first match `m`.
fn step_one(m: &CMatch, rest: &[CMatch], buf: &[u8], prev: usize, cx: &mut Ctx) -> bool {
    match m {
        CMatch::Content(c) => {
            let Some((start, end)) = window(c, prev, buf.len(), cx) else {
                return c.negated && step(rest, buf, prev, cx);
            };
            let region = &buf[start..end];
            if c.negated {
                let hit = if c.endswith {
                    region.len() >= c.pat.len() && eq(c, &region[region.len() - c.pat.len()..])
                } else {
                    find(c, region).is_some()
                };
                return !hit && step(rest, buf, prev, cx);
            }
            let mut from = 0;
            while let Some(p) = find(c, &region[from..]) {
                let s = start + from + p;
                let e = s + c.pat.len();
                from += p + 1;
                if c.endswith && e != buf.len() {
                    continue;
                }
                if step(rest, buf, e, cx) {
                    return true;
                }
                if cx.budget == 0 || !rest_is_relative(rest) {
                    return false;
                }
            }
            false
        }
        CMatch::Pcre {
            re,
            negated,
            relative,
            targets,
        } => {
            let start = if *relative { prev } else { 0 };
            if *negated {
                return re.find_at(buf, start).is_none() && step(rest, buf, prev, cx);
            }
            if !targets.is_empty() {
                return pcre_capturing(re, targets, (buf, start), rest, cx);
            }
            let mut from = start;
            while let Some((s, e)) = re.find_at(buf, from) {
                if step(rest, buf, e, cx) {
                    return true;
                }
                if cx.budget == 0 || !rest_is_relative(rest) || s >= buf.len() {
                    return false;
                }
                from = s + 1;
            }
            false
        }
        CMatch::ByteTest {
            read,
            count,
            negated,
            op,
            value,
        } => {
            let Some(v) = read_counted(read, *count, (23, 8), (buf, prev), cx) else {
                return false;
            };
            let want = cx.val(*value) as u64;
            let ok = match op {
                ByteOp::Lt => v < want,
                ByteOp::Gt => v > want,
                ByteOp::Le => v <= want,
                ByteOp::Ge => v >= want,
                ByteOp::Eq => v == want,
                ByteOp::And => v & want != 0,
                ByteOp::Or => v | want != 0,
            };
            ok != *negated && step(rest, buf, prev, cx)
        }
        CMatch::ByteJump {
            read,
            multiplier,
            align,
            from_beginning,
            from_end,
            post_offset,
        } => {
            let Some((v, after)) = read_number(read, buf, prev, cx) else {
                return false;
            };
            let mut jump = (v as i64).saturating_mul(*multiplier as i64);
            if *align && jump % 4 != 0 {
                jump += 4 - jump % 4;
            }
            let base = if *from_beginning {
                0
            } else if *from_end {
                buf.len() as i64
            } else {
                after as i64
            };
            // A jump before the buffer start lands on the start (Suricata since its
            // bug 4624, a negative post_offset); one past the end fails.
            let to = base
                .saturating_add(jump)
                .saturating_add(*post_offset)
                .max(0);
            if to > buf.len() as i64 {
                return false;
            }
            step(rest, buf, to as usize, cx)
        }
        CMatch::ByteExtract {
            read,
            var,
            multiplier,
            align,
        } => {
            let Some((v, after)) = read_number(read, buf, prev, cx) else {
                return false;
            };
            let mut v = (v as i64).saturating_mul(*multiplier as i64);
            if *align > 1 && v % *align as i64 != 0 {
                v += *align as i64 - v % *align as i64;
            }
            cx.vars[*var as usize] = v;
            step(rest, buf, after, cx)
        }
        CMatch::ByteMath {
            read,
            count,
            oper,
            rvalue,
            var,
        } => {
            let Some(v) = read_counted(read, *count, (10, 4), (buf, prev), cx) else {
                return false;
            };
            let (v, r) = (v as i64, cx.val(*rvalue));
            let out = match oper {
                MathOp::Add => v.checked_add(r),
                MathOp::Sub => v.checked_sub(r),
                MathOp::Mul => v.checked_mul(r),
                MathOp::Div => v.checked_div(r),
                MathOp::Shl => u32::try_from(r).ok().and_then(|r| v.checked_shl(r)),
                MathOp::Shr => u32::try_from(r).ok().and_then(|r| v.checked_shr(r)),
            };
            let Some(out) = out else { return false };
            cx.vars[*var as usize] = out;
            step(rest, buf, prev, cx)
        }
        CMatch::IsDataAt {
            offset,
            relative,
            negated,
        } => {
            // Suricata's semantics: absolute `isdataat:N` asks for a byte at offset N
            // (N < len); relative asks for N more bytes after the detection pointer
            // (pos + N <= len), so `isdataat:32,relative` holds on a 32-byte buffer
            // where `isdataat:32` does not.
            let n = cx.val(*offset);
            let ok = if *relative {
                n >= 0 && prev as i64 + n <= buf.len() as i64
            } else {
                n >= 0 && n < buf.len() as i64
            };
            ok != *negated && step(rest, buf, prev, cx)
        }
        CMatch::Base64Decode {
            bytes,
            offset,
            relative,
            data,
        } => {
            let base = if *relative { prev as u64 } else { 0 };
            let start = base.saturating_add(*offset).min(buf.len() as u64) as usize;
            let end = bytes.map_or(buf.len(), |n| {
                (start as u64).saturating_add(n).min(buf.len() as u64) as usize
            });
            let decoded = base64_decode(&buf[start..end]);
            !decoded.is_empty() && step(data, &decoded, 0, cx) && step(rest, buf, prev, cx)
        }
        CMatch::Bsize(c) => c.test(buf.len() as i64) && step(rest, buf, prev, cx),
        CMatch::Entropy(e) => {
            let from = buf.get(e.offset as usize..).unwrap_or_default();
            let part = &from[..e.bytes.map_or(from.len(), |n| from.len().min(n as usize))];
            let h = shannon_entropy(part);
            cx.entropy.push((e.key.clone(), h));
            e.holds(h) && step(rest, buf, prev, cx)
        }
        CMatch::Uint(c) => {
            // A number's buffer holds it big-endian, in at most 8 bytes.
            let v = (buf.len() <= 8)
                .then(|| buf.iter().fold(0u64, |v, &b| (v << 8) | b as u64))
                .and_then(|v| i64::try_from(v).ok());
            v.is_some_and(|v| c.test(v)) && step(rest, buf, prev, cx)
        }
        CMatch::UintList(c, pick) => {
            // Each number in 8 bytes, big-endian.
            let list = buf
                .chunks_exact(8)
                .map(|b| i64::from_be_bytes(b.try_into().expect("chunks of 8 bytes")));
            pick.holds(*c, list) && step(rest, buf, prev, cx)
        }
        CMatch::Asn1(a) => crate::asn1::matches(a, buf, prev) && step(rest, buf, prev, cx),
        CMatch::Dataset {
            cmd,
            set,
            context_key,
        } => {
            let (hit, context) = set.apply(*cmd, buf);
            if hit && let (Some(k), Some(c)) = (context_key, context) {
                cx.context.push((k.clone(), c));
            }
            hit && step(rest, buf, prev, cx)
        }
        CMatch::Datarep { set, cmp } => {
            set.reputation(buf).is_some_and(|r| cmp.test(r)) && step(rest, buf, prev, cx)
        }
        CMatch::DceIface {
            uuid,
            version,
            any_frag,
        } => {
            // UUID, version (big-endian), accepted, bound with the first-fragment flag.
            let [u @ .., v0, v1, accepted, first] = buf else {
                return false;
            };
            u == uuid
                && *accepted == 1
                && (*any_frag || *first == 1)
                && version.is_none_or(|c| c.test(i64::from(u16::from_be_bytes([*v0, *v1]))))
                && step(rest, buf, prev, cx)
        }
    }
}

impl CMatch {
    /// Whether the match only reads: it sets no variable and records nothing (no
    /// capture, context or entropy), and searches no buffer of its own.
    fn sets_nothing(&self) -> bool {
        match self {
            CMatch::Pcre { targets, .. } => targets.is_empty(),
            CMatch::Content(_)
            | CMatch::ByteTest { .. }
            | CMatch::IsDataAt { .. }
            | CMatch::Bsize(_)
            | CMatch::Uint(_) => true,
            _ => false,
        }
    }

    /// Whether a later detection pointer only narrows where the match may be: a content
    /// not negated, without `within`, whose `distance` (if any) is a number.
    fn narrows(&self) -> bool {
        match self {
            CMatch::Content(c) => {
                !c.negated && c.within.is_none() && !matches!(c.distance, Some(CVal::Var(_)))
            }
            _ => false,
        }
    }
}

fn eq(c: &CContent, s: &[u8]) -> bool {
    if c.nocase {
        s.eq_ignore_ascii_case(&c.pat)
    } else {
        s == c.pat.as_slice()
    }
}

/// Whether anything after this point depends on the detection pointer (so a later
/// occurrence of the current match could change the outcome).
fn rest_is_relative(rest: &[CMatch]) -> bool {
    rest.iter().any(|m| match m {
        CMatch::Content(c) => c.distance.is_some() || c.within.is_some(),
        CMatch::Pcre { relative, .. } => *relative,
        CMatch::ByteTest { read, .. }
        | CMatch::ByteJump { read, .. }
        | CMatch::ByteExtract { read, .. }
        | CMatch::ByteMath { read, .. } => read.relative,
        CMatch::IsDataAt { relative, .. } | CMatch::Base64Decode { relative, .. } => *relative,
        CMatch::Asn1(a) => a.relative_offset.is_some(),
        CMatch::Dataset { .. } | CMatch::Datarep { .. } => false,
        CMatch::Bsize(_)
        | CMatch::Entropy(_)
        | CMatch::Uint(_)
        | CMatch::UintList(..)
        | CMatch::DceIface { .. } => false,
    })
}

/// A `pcre` whose groups set variables: as the plain search, each match's captures
/// pending in `cx` while the rest of the list is tried from its end (and dropped if it
/// fails there).
fn pcre_capturing(
    re: &Regex,
    targets: &[(usize, VarScope, Arc<str>)],
    (buf, start): (&[u8], usize),
    rest: &[CMatch],
    cx: &mut Ctx,
) -> bool {
    let mut from = start;
    while let Some(groups) = re.captures_at(buf, from) {
        let Some((s, e)) = groups[0] else {
            return false;
        };
        let before = cx.captured.len();
        for (g, scope, name) in targets {
            if let Some(&Some((a, b))) = groups.get(*g) {
                cx.captured.push(Captured {
                    scope: *scope,
                    name: name.clone(),
                    value: crate::vars::kept(&buf[a..b]),
                });
            }
        }
        if step(rest, buf, e, cx) {
            return true;
        }
        cx.captured.truncate(before);
        if cx.budget == 0 || !rest_is_relative(rest) || s >= buf.len() {
            return false;
        }
        from = s + 1;
    }
    false
}

/// Where a `pcre`'s groups go: those the targets after its flags name, in order from
/// group 1, and the groups named `flow_x`, `pkt_x` or `alert_x`.
fn capture_targets(p: &Pcre, re: &Regex) -> Box<[(usize, VarScope, Arc<str>)]> {
    let mut t: Vec<(usize, VarScope, Arc<str>)> = p
        .captures
        .iter()
        .enumerate()
        .map(|(i, c)| (i + 1, c.scope, Arc::from(c.name.as_str())))
        .collect();
    if p.pattern.contains("(?P<") || p.pattern.contains("(?<") {
        for (g, name) in re.group_names().iter().enumerate() {
            if let Some(c) = name.as_deref().and_then(Capture::of_group) {
                t.push((g, c.scope, Arc::from(c.name.as_str())));
            }
        }
    }
    t.into_boxed_slice()
}

/// The Shannon entropy of `b` in bits per byte (0 for no bytes).
fn shannon_entropy(b: &[u8]) -> f64 {
    let mut counts = [0u32; 256];
    for &c in b {
        counts[c as usize] += 1;
    }
    let n = b.len() as f64;
    counts
        .iter()
        .filter(|&&k| k > 0)
        .map(|&k| {
            let p = f64::from(k) / n;
            -p * p.log2()
        })
        .sum()
}

/// Base64 (RFC 4648's alphabet) decoded up to the first byte outside it or the first
/// `=`; an incomplete last group gives what its characters hold.
pub(crate) fn base64_decode(text: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len() / 4 * 3);
    let (mut acc, mut n) = (0u32, 0);
    for &c in text {
        let Some(v) = netsieve_applayer::mime::base64_value(c) else {
            break;
        };
        acc = acc << 6 | u32::from(v);
        n += 1;
        if n == 4 {
            out.extend_from_slice(&acc.to_be_bytes()[1..]);
            (acc, n) = (0, 0);
        }
    }
    match n {
        2 => out.push((acc >> 4) as u8),
        3 => out.extend_from_slice(&((acc >> 2) as u16).to_be_bytes()),
        _ => {}
    }
    out
}

/// Gives the first `base64_decode` of `lists` the rule's `base64_data` list (a rule
/// has one decoded buffer; a later `base64_decode` only needs to decode something).
/// Returns the list back if no `base64_decode` took it.
pub fn attach_base64_data<'a>(
    lists: impl IntoIterator<Item = &'a mut Vec<CMatch>>,
    data: Vec<CMatch>,
) -> Option<Vec<CMatch>> {
    for m in lists.into_iter().flatten() {
        if let CMatch::Base64Decode { data: d, .. } = m {
            *d = data;
            return None;
        }
    }
    Some(data)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The first place of `pat` in `hay`, in either case, by trying every place.
    fn naive_nocase(pat: &[u8], hay: &[u8]) -> Option<usize> {
        (0..=hay.len().checked_sub(pat.len())?)
            .find(|&s| hay[s..s + pat.len()].eq_ignore_ascii_case(pat))
    }

    proptest! {
        /// Over a small alphabet of letters of both cases, digits and binary bytes,
        /// so that anchors repeat and partial matches abound.
        #[test]
        fn nocase_search_finds_the_first_match(
            pat in prop::collection::vec(prop::sample::select(b"aAbB0 \x00\xff".to_vec()), 1..6),
            hay in prop::collection::vec(prop::sample::select(b"aAbB0 \x00\xff".to_vec()), 0..40),
        ) {
            let pat = pat.to_ascii_lowercase();
            for anchor in 0..pat.len() {
                prop_assert_eq!(find_nocase(&pat, anchor, &hay), naive_nocase(&pat, &hay));
            }
        }
    }

    /// A content of a generated list: pattern, `nocase`, `negated`, and how it is
    /// placed (0: anywhere, 1: `distance`, 2: `distance` and `within`, 3: `within`,
    /// 4: `offset` and `depth`), with two numbers for it.
    type Spec = (Vec<u8>, bool, bool, u8, i64, i64);

    fn content(&(ref pat, nocase, negated, how, a, b): &Spec) -> CMatch {
        let pat = if nocase {
            pat.to_ascii_lowercase()
        } else {
            pat.clone()
        };
        let (mut distance, mut within, mut offset, mut depth) = (None, None, None, None);
        match how % 5 {
            1 => distance = Some(CVal::Num(a)),
            2 => (distance, within) = (Some(CVal::Num(a)), Some(CVal::Num(b.abs() + 1))),
            3 => within = Some(CVal::Num(b.abs() + 1)),
            4 => (offset, depth) = (Some(CVal::Num(a.abs())), Some(CVal::Num(b.abs() + 1))),
            _ => {}
        }
        CMatch::Content(CContent {
            anchor: rarest_byte(&pat, nocase),
            pat,
            nocase,
            negated,
            offset,
            depth,
            distance,
            within,
            startswith: false,
            endswith: false,
            finder: std::sync::OnceLock::new(),
        })
    }

    fn spec() -> impl Strategy<Value = Spec> {
        (
            prop::collection::vec(prop::sample::select(b"abA".to_vec()), 1..3),
            any::<bool>(),
            prop::bool::weighted(0.15),
            0u8..5,
            -2i64..4,
            0i64..12,
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1024))]

        /// Keeping the failures of narrowing contents gives the answer that trying every
        /// occurrence gives, on chains that backtrack a lot: short patterns over a
        /// two-letter text. Cases where trying every occurrence ran out of budget (and
        /// so answered no) prove nothing and are left out.
        #[test]
        fn kept_failures_give_the_answer_of_every_occurrence(
            specs in prop::collection::vec(spec(), 1..6),
            buf in prop::collection::vec(prop::sample::select(b"abAB".to_vec()), 0..48),
        ) {
            let list: Vec<CMatch> = specs.iter().map(content).collect();
            let mut cx = Ctx::default();
            let every = evaluate(&list, &buf, 0, false, &mut cx);
            prop_assume!(cx.budget > 0);
            prop_assert_eq!(evaluate(&list, &buf, 0, true, &mut cx), every);
        }
    }

    #[test]
    fn nocase_search_edges() {
        assert_eq!(find_nocase(b"", 0, b"abc"), Some(0));
        assert_eq!(find_nocase(b"abc", 1, b"ab"), None);
        assert_eq!(find_nocase(b"abc", 2, b"xxABC"), Some(2));
        assert_eq!(
            find_nocase(b"a.c", rarest_byte(b"a.c", true), b"a.a.C"),
            Some(2)
        );
    }
}
