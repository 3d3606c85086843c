//! `iptables-save` / `ip6tables-save` output -> an ordered [`RuleSet`].
//!
//! Only the `filter` table is read; other tables are skipped. One built-in chain (INPUT,
//! FORWARD or OUTPUT) is classified: user chains reached by `-j` are flattened into it, the
//! jump's conditions added to every rule inlined, and a conditional `RETURN` becomes an
//! [`Complex::Unless`] on the rules after it. Non-terminating targets (LOG, TCPMSS, MARK,
//! ...) do not change a verdict and are left out of the list (and counted). A rule the
//! parser cannot represent is reported with its line, column and reason and skipped; the
//! rest load.

mod error;
mod rule;

pub use error::ParseError;
pub use rule::parse_one;

use crate::rule::*;
use std::collections::HashMap;

/// Which family a dump is for: rules without addresses match only that family.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    V4,
    V6,
}

/// The result of reading a dump.
#[derive(Debug)]
pub struct Parsed {
    pub set: RuleSet,
    /// Rules skipped, with why.
    pub errors: Vec<ParseError>,
    /// Rules with non-terminating targets (LOG, ...) left out, by target.
    pub non_terminating: Vec<(String, usize)>,
    /// The rules the classified chain holds, those left out included (what `iptables -I
    /// CHAIN N` counts).
    pub chain_len: u32,
}

#[derive(Clone, Debug)]
enum Target {
    Verdict(Action),
    Return,
    Jump(String),
    /// `-g`: like a jump, but a packet that falls off the end of the chain does not come
    /// back to the rules after the goto.
    Goto(String),
    Other(String),
}

#[derive(Clone, Debug)]
struct Raw {
    header: Vec<Header>,
    complex: Vec<Complex>,
    target: Target,
    line: usize,
    /// The rule as the dump writes it (without `iptables-save -c` counters).
    text: String,
    /// Its number in its chain, from 1 (rules that could not be read count too).
    nth: u32,
}

#[derive(Default)]
struct Chain {
    policy: Option<Action>,
    rules: Vec<Raw>,
}

/// How many header alternatives a rule may expand to before its header part goes to the
/// slow path instead.
const MAX_ALTS: usize = 64;

/// Parses `text` (an `iptables-save` dump) and flattens `chain` of its filter table.
/// Rules that cannot be read are skipped and listed in [`Parsed::errors`]; a dump with
/// no filter table, or without `chain` in it, is an error: there is no rule set to
/// classify with, and a firewall must not fall back to accepting everything.
pub fn parse(text: &str, family: Family, chain: &str, origin: &str) -> Result<Parsed, ParseError> {
    let mut chains: HashMap<String, Chain> = HashMap::new();
    let mut errors = Vec::new();
    let mut table: Option<String> = None;
    let mut saw_filter = false;
    let mut numbered: HashMap<String, u32> = HashMap::new();
    for (n, line) in text.lines().enumerate() {
        let ln = n + 1;
        let t = line.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        if let Some(name) = t.strip_prefix('*') {
            table = Some(name.trim().to_string());
            saw_filter |= name.trim() == "filter";
            continue;
        }
        if t == "COMMIT" {
            table = None;
            continue;
        }
        if table.as_deref() != Some("filter") {
            continue;
        }
        if let Some(rest) = t.strip_prefix(':') {
            let mut it = rest.split_whitespace();
            let name = it.next().unwrap_or("");
            let policy = match it.next() {
                Some("ACCEPT") => Some(Action::Accept),
                Some("DROP") => Some(Action::Drop),
                Some("-") | None => None,
                Some(p) => {
                    errors.push(ParseError::line_error(
                        ln,
                        1,
                        format!("unknown chain policy `{p}`"),
                    ));
                    None
                }
            };
            chains.entry(name.to_string()).or_default().policy = policy;
            continue;
        }
        // Every `-A CHAIN` line takes a number in its chain, read or not.
        let nth = rule::appended_chain(t).map_or(0, |c| {
            let n = numbered.entry(c.to_string()).or_insert(0);
            *n += 1;
            *n
        });
        match rule::parse_rule(line, ln, family) {
            Ok((Some(chain), mut raw)) => {
                raw.nth = nth;
                chains.entry(chain).or_default().rules.push(raw)
            }
            Ok((None, _)) => errors.push(ParseError::line_error(ln, 1, "expected `-A CHAIN`")),
            Err(e) => errors.push(e),
        }
    }
    if !saw_filter {
        return Err(ParseError::no_rule_set(
            "no `*filter` table: not an iptables-save dump (nor an `nft list ruleset` dump \
             with filter chains of this family)"
                .into(),
        ));
    }
    if !chains.contains_key(chain) {
        let mut names: Vec<&str> = chains.keys().map(String::as_str).collect();
        names.sort();
        return Err(ParseError::no_rule_set(format!(
            "no chain `{chain}` in the filter table (it has {})",
            names.join(", ")
        )));
    }
    let mut non_terminating: HashMap<String, usize> = HashMap::new();
    let base = match family {
        Family::V4 => Header::any_v4(),
        Family::V6 => Header {
            src: ANY,
            dst: ANY,
            ..Header::any_v4()
        },
    };
    let mut f = Flattener {
        chains: &chains,
        errors: &mut errors,
        non_terminating: &mut non_terminating,
        origin,
        out: Vec::new(),
        stack: Vec::new(),
        budget: MAX_FLAT_RULES,
    };
    let policy = match chains.get(chain) {
        Some(c) => {
            f.flatten(chain, &[base], &[], 0, 0);
            c.policy.unwrap_or(Action::Accept)
        }
        None => Action::Accept,
    };
    let rules = f.out;
    let mut non_terminating: Vec<(String, usize)> = non_terminating.into_iter().collect();
    non_terminating.sort();
    errors.sort_by_key(|e| (e.line(), e.column()));
    errors.dedup();
    Ok(Parsed {
        set: RuleSet { rules, policy },
        errors,
        non_terminating,
        chain_len: numbered.get(chain).copied().unwrap_or(0),
    })
}

struct Flattener<'a> {
    chains: &'a HashMap<String, Chain>,
    errors: &'a mut Vec<ParseError>,
    non_terminating: &'a mut HashMap<String, usize>,
    origin: &'a str,
    out: Vec<Rule>,
    /// The chains being flattened, outermost first: a jump to one of them is a loop.
    stack: Vec<String>,
    /// Rules the flattening may still visit: chains that jump to chains many times over
    /// multiply, and a hostile dump must not make that unbounded.
    budget: usize,
}

/// The most rules flattening visits.
const MAX_FLAT_RULES: usize = 500_000;

impl Flattener<'_> {
    /// Flattens chain `name`, reached under `cond` and `cond_c`; `top` is the number of
    /// the classified chain's rule that led here (0 in that chain itself).
    fn flatten(&mut self, name: &str, cond: &[Header], cond_c: &[Complex], depth: usize, top: u32) {
        let Some(chain) = self.chains.get(name) else {
            return;
        };
        self.stack.push(name.to_string());
        let mut guards: Vec<Complex> = Vec::new();
        for r in &chain.rules {
            let top = if depth == 0 { r.nth } else { top };
            if self.budget == 0 {
                self.errors.push(ParseError::chain(
                    r.line,
                    format!(
                        "flattening the chains visits more than {MAX_FLAT_RULES} rules; the \
                         rest of chain `{name}` is skipped"
                    ),
                ));
                break;
            }
            self.budget -= 1;
            // The conjunction of the jump's header tests and the rule's, unless it would
            // multiply into too many alternatives: then the jump's stay a slow-path test.
            let (header, extra) = if cond.len() * r.header.len() > MAX_ALTS * 4 {
                (
                    r.header.clone(),
                    Some(Complex::Header {
                        alts: cond.to_vec(),
                        negate: false,
                    }),
                )
            } else {
                (intersect_all(cond, &r.header), None)
            };
            if header.is_empty() {
                continue;
            }
            let mut complex: Vec<Complex> = extra.into_iter().collect();
            complex.extend(cond_c.iter().cloned());
            complex.extend(guards.iter().cloned());
            complex.extend(r.complex.iter().cloned());
            let err = |msg: String| ParseError::chain(r.line, msg);
            match &r.target {
                Target::Verdict(a) => self.out.push(Rule {
                    header,
                    complex,
                    action: *a,
                    origin: format!("{}:{}", self.origin, r.line),
                    text: r.text.clone(),
                    chain: self.stack.clone(),
                    top,
                }),
                Target::Return => {
                    let unconditional =
                        r.complex.is_empty() && r.header.iter().any(|h| h == &cond_any(h));
                    if unconditional {
                        break;
                    }
                    if r.complex.iter().any(Complex::is_stateful) {
                        self.errors.push(err(
                            "a RETURN with a stateful match (limit, statistic) cannot be \
                             flattened; rule skipped"
                                .into(),
                        ));
                        continue;
                    }
                    guards.push(Complex::Unless {
                        header: r.header.clone(),
                        all: r.complex.clone(),
                    });
                }
                Target::Jump(to) | Target::Goto(to) => {
                    if depth > 16 {
                        self.errors.push(err(format!(
                            "chain `{to}`: jumps nested too deep or looping"
                        )));
                        continue;
                    }
                    if !self.chains.contains_key(to) {
                        self.errors
                            .push(err(format!("jump to unknown chain `{to}`")));
                        continue;
                    }
                    if self.stack.iter().any(|c| c == to) {
                        self.errors
                            .push(err(format!("jump to `{to}` makes a loop")));
                        continue;
                    }
                    if r.complex.iter().any(Complex::is_stateful) {
                        self.errors.push(err(
                            "a jump with a stateful match (limit, statistic) cannot be \
                             flattened; rule skipped"
                                .into(),
                        ));
                        continue;
                    }
                    let to = to.clone();
                    self.flatten(&to, &header, &complex, depth + 1, top);
                    if matches!(r.target, Target::Goto(_)) {
                        guards.push(Complex::Unless {
                            header: r.header.clone(),
                            all: r.complex.clone(),
                        });
                    }
                }
                Target::Other(t) => *self.non_terminating.entry(t.clone()).or_default() += 1,
            }
        }
        self.stack.pop();
    }
}

/// The header that matches everything of `h`'s family.
fn cond_any(h: &Header) -> Header {
    let all = if h.src.len >= 96 && h.src.addr >> 32 == 0xffff {
        V4_ANY
    } else {
        ANY
    };
    Header {
        src: all,
        dst: all,
        ..Header::any_v4()
    }
}

fn intersect_prefix(a: Prefix, b: Prefix) -> Option<Prefix> {
    let (short, long) = if a.len <= b.len { (a, b) } else { (b, a) };
    short.contains(long.addr).then_some(long)
}

fn intersect_range(a: Range, b: Range) -> Option<Range> {
    let lo = a.lo.max(b.lo);
    let hi = a.hi.min(b.hi);
    (lo <= hi).then_some(Range::new(lo, hi))
}

/// The conjunction of two header tests, or `None` when nothing satisfies both.
pub fn intersect(a: &Header, b: &Header) -> Option<Header> {
    let common = a.flags_mask & b.flags_mask;
    if a.flags & common != b.flags & common {
        return None;
    }
    Some(Header {
        src: intersect_prefix(a.src, b.src)?,
        dst: intersect_prefix(a.dst, b.dst)?,
        sport: intersect_range(a.sport, b.sport)?,
        dport: intersect_range(a.dport, b.dport)?,
        proto: intersect_range(a.proto, b.proto)?,
        flags: a.flags | b.flags,
        flags_mask: a.flags_mask | b.flags_mask,
    })
}

fn intersect_all(a: &[Header], b: &[Header]) -> Vec<Header> {
    let mut out = Vec::new();
    for x in a {
        for y in b {
            if let Some(h) = intersect(x, y)
                && !out.contains(&h)
            {
                out.push(h);
            }
        }
    }
    out
}
