//! Long patterns, verified in time linear in the text.
//!
//! DFC verifies a candidate by comparing its pattern with the text where the candidate
//! starts. For a pattern of `m` bytes that is up to `m` comparisons per candidate, and a
//! text that keeps a long pattern almost matched (a run of `a` against `a...ab`) makes
//! every window a candidate: `n * m` work for `n` bytes of text.
//!
//! So a pattern longer than [`LONG`] bytes is verified in two steps. Its first `LONG`
//! bytes, the *head*, are compared as any pattern's are (bounded work per window). A
//! candidate whose head matches starts a *run*: a Knuth-Morris-Pratt scan of the text
//! after the head, which reads each byte once, reports every occurrence it completes, and
//! ends (dies) at the first byte after which no prefix of the pattern is matched. A later
//! candidate inside the span a run has read is already covered by it. KMP's bookkeeping
//! (the length matched so far) is all a run needs to go on, so in a stream it continues
//! with the next chunk and keeps no history.

use std::ops::ControlFlow;

use crate::Match;
use crate::matcher::Matcher;
use crate::search::{Ctx, Got, Input, Probe};

/// Patterns longer than this are verified by runs.
pub(crate) const LONG: usize = 64;

/// The KMP failure function of `p`: `f[j]` is the length of the longest proper prefix of
/// `p[..=j]` that is also a suffix of it.
pub(crate) fn failure(p: &[u8]) -> Vec<u32> {
    let mut f = vec![0u32; p.len()];
    let mut k = 0usize;
    for j in 1..p.len() {
        while k > 0 && p[j] != p[k] {
            k = f[k - 1] as usize;
        }
        if p[j] == p[k] {
            k += 1;
        }
        f[j] = k as u32;
    }
    f
}

/// A KMP scan of one long pattern over the text.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Run {
    /// The distinct pattern.
    pat: u32,
    /// Every occurrence starting at or after this offset, and before `next`, is found
    /// (reported, or to be reported when its last byte is read).
    start: usize,
    /// The next text offset to read.
    next: usize,
    /// Bytes of the pattern matched just before `next`.
    j: u32,
    /// Whether a prefix is still matched (or the run is waiting for more input).
    alive: bool,
    /// Occurrences ending at or before this offset were reported by a run this one
    /// replaced; they are not reported again.
    quiet_until: usize,
}

impl Matcher {
    /// A candidate of long pattern `p` at `s` whose head matched: covered by the
    /// pattern's run, or the start of a new one.
    pub(crate) fn long_candidate<F, P, B>(
        &self,
        inp: &Input,
        p: u32,
        s: usize,
        cx: &mut Ctx<F, P>,
    ) -> ControlFlow<B>
    where
        F: FnMut(Match) -> ControlFlow<B>,
        P: Probe,
    {
        let old = cx.long.iter().position(|r| r.pat == p);
        let mut quiet_until = 0;
        if let Some(i) = old {
            let r = cx.long[i];
            if r.start <= s && s < r.next {
                return ControlFlow::Continue(());
            }
            // Candidates of a pattern come in text order, so this is defensive: a run
            // from an earlier start replaces a later one without repeating its reports.
            if s < r.start {
                quiet_until = r.next;
            }
        }
        let mut run = Run {
            pat: p,
            start: s,
            next: s + LONG,
            j: LONG as u32,
            alive: true,
            quiet_until,
        };
        let flow = self.advance(inp, &mut run, cx);
        match old {
            Some(i) => cx.long[i] = run,
            None => cx.long.push(run),
        }
        flow
    }

    /// Continues every live run over the input (a new chunk of a stream).
    pub(crate) fn advance_runs<F, P, B>(&self, inp: &Input, cx: &mut Ctx<F, P>) -> ControlFlow<B>
    where
        F: FnMut(Match) -> ControlFlow<B>,
        P: Probe,
    {
        for i in 0..cx.long.len() {
            let mut run = cx.long[i];
            if run.alive {
                let flow = self.advance(inp, &mut run, cx);
                cx.long[i] = run;
                flow?;
            }
        }
        ControlFlow::Continue(())
    }

    /// Reads the input from `run.next` while the run is alive, reporting what it completes.
    fn advance<F, P, B>(&self, inp: &Input, run: &mut Run, cx: &mut Ctx<F, P>) -> ControlFlow<B>
    where
        F: FnMut(Match) -> ControlFlow<B>,
        P: Probe,
    {
        let p = run.pat as usize;
        let pat = self.set.pats[p];
        let bytes = self.set.bytes_of(p);
        let fail = self.set.failure_of(p);
        let m = pat.len as usize;
        let mut j = run.j as usize;
        let from = run.next;
        while run.alive && run.next < inp.end {
            let Got::Yes(mut c) = inp.byte(run.next) else {
                break;
            };
            if pat.nocase {
                c = c.to_ascii_lowercase();
            }
            while j > 0 && bytes[j] != c {
                j = fail[j - 1] as usize;
            }
            if bytes[j] == c {
                j += 1;
            }
            run.next += 1;
            if j == m {
                j = fail[m - 1] as usize;
                if run.next > run.quiet_until {
                    run.j = j as u32;
                    if let ControlFlow::Break(b) = self.report(run.pat, run.next - m, cx) {
                        cx.probe.compared(run.next - from);
                        return ControlFlow::Break(b);
                    }
                }
            }
            run.alive = j > 0;
        }
        run.j = j as u32;
        cx.probe.compared(run.next - from);
        if inp.fin && run.next >= inp.end {
            run.alive = false;
        }
        ControlFlow::Continue(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failure_function() {
        assert_eq!(failure(b"aabaaab"), [0, 1, 0, 1, 2, 2, 3]);
        assert_eq!(failure(b"abcd"), [0, 0, 0, 0]);
        assert_eq!(failure(b"aaaa"), [0, 1, 2, 3]);
    }
}
