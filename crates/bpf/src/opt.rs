//! An optimiser for classic BPF programs: jump threading over known packet facts, then
//! removal of what no path reaches.
//!
//! The expression compiler emits each test on its own, so `ip and tcp` loads the
//! EtherType twice and `port 80` tests the IPv6 next header three times after one load.
//! libpcap removes such redundancy with a data-flow optimiser; this one does the part of
//! it that matters for filters, on the finished instruction array:
//!
//! - **Facts along a path.** Walking the program in order (jumps only go forward, so
//!   every instruction is visited after all of its predecessors), each edge carries what
//!   is known on it: which packet bytes A and X hold (a *symbol*: the load that produced
//!   them) and the outcomes of the comparisons taken so far. Where edges meet, only what
//!   holds on all of them is kept.
//! - **Threading.** A jump's edge is followed past instructions whose effect is known on
//!   that edge: a load of the symbol the register already holds, a comparison whose
//!   outcome the facts decide, a `ja`. The edge is then aimed at where the walk stopped.
//!   A load of a symbol A does *not* hold is skipped only when the walk ends at a
//!   `ret #k`, which does not read A. Such a load cannot fail: the facts that decide the
//!   jump after it were learnt from the same symbol, so on every path to here the same
//!   bytes were loaded before, and a load that fails ends its path.
//! - **Decided jumps.** A conditional jump whose outcome the facts on every edge into it
//!   decide becomes a `ja`.
//! - **Dead code.** An instruction whose only effect is on A, X or a scratch word that no
//!   later instruction reads is dropped (loads from the packet stay: they can fail).
//! - **Shared code.** Copies of the same code (equal instructions with the same
//!   successors) become one: every edge is aimed at the last copy, and the others die.
//! - **Clean-up.** Instructions no edge reaches are dropped, `ja` to the next
//!   instruction and conditional jumps whose two edges agree disappear, and offsets are
//!   recomputed (they can only shrink).
//!
//! Semantics come first: the result is validated, and [`optimize`] returns the input
//! unchanged if it is not shorter. Differential tests run both programs through the
//! interpreter on random programs and packets (`tests/differential.rs`).

use crate::insn::*;

/// What a register holds, when known.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Sym {
    /// `size` bytes of the packet at `off` (an absolute load).
    Pkt { off: u32, size: u16 },
    /// `4 * (packet[off] & 0xf)`.
    Msh(u32),
    /// The packet's wire length.
    Len,
    /// A constant.
    Imm(u32),
}

/// A comparison outcome: `sym op k` was `taken`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Fact {
    sym: Sym,
    op: u16,
    k: u32,
    taken: bool,
}

/// The most facts an edge keeps (the most recent ones).
const MAX_FACTS: usize = 24;

/// What is known on one edge.
#[derive(Clone, Debug, PartialEq, Eq)]
struct State {
    a: Option<Sym>,
    x: Option<Sym>,
    facts: Vec<Fact>,
}

impl State {
    fn start() -> State {
        State {
            a: None,
            x: None,
            facts: Vec::new(),
        }
    }

    /// What holds on both `self` and `o`.
    fn meet(&mut self, o: &State) {
        if self.a != o.a {
            self.a = None;
        }
        if self.x != o.x {
            self.x = None;
        }
        self.facts.retain(|f| o.facts.contains(f));
    }

    /// Adds a fact. An equality that holds decides every test of its symbol, so it
    /// replaces the others and is the last to go when the list is full: a long chain of
    /// `jeq` that fail (`host a or host b or ...`) must not push out the EtherType the
    /// chain is guarded by.
    fn learn(&mut self, f: Fact) {
        if self.facts.contains(&f) {
            return;
        }
        let decisive = |f: &Fact| f.op == JEQ && f.taken;
        if decisive(&f) {
            self.facts.retain(|g| g.sym != f.sym);
        }
        if self.facts.len() == MAX_FACTS {
            let oldest = self.facts.iter().position(|g| !decisive(g)).unwrap_or(0);
            self.facts.remove(oldest);
        }
        self.facts.push(f);
    }

    /// The outcome of `sym op k`, if the facts decide it.
    fn decide(&self, sym: Sym, op: u16, k: u32) -> Option<bool> {
        let eval = |v: u32| match op {
            JEQ => v == k,
            JGT => v > k,
            JGE => v >= k,
            _ => v & k != 0,
        };
        if let Sym::Imm(v) = sym {
            return Some(eval(v));
        }
        for f in &self.facts {
            if f.sym != sym {
                continue;
            }
            if f.op == op && f.k == k {
                return Some(f.taken);
            }
            if f.op == JEQ && f.taken {
                return Some(eval(f.k));
            }
        }
        None
    }
}

/// `st` after running `i` (for the edge to the next instruction; jumps add their facts
/// separately).
fn step(st: &mut State, i: &Insn) {
    match i.class() {
        LD => {
            st.a = match i.mode() {
                ABS => Some(Sym::Pkt {
                    off: i.k,
                    size: i.size(),
                }),
                IMM => Some(Sym::Imm(i.k)),
                LEN => Some(Sym::Len),
                _ => None,
            }
        }
        LDX => {
            st.x = match i.mode() {
                IMM => Some(Sym::Imm(i.k)),
                LEN => Some(Sym::Len),
                MSH => Some(Sym::Msh(i.k)),
                _ => None,
            }
        }
        ALU => st.a = None,
        MISC => {
            if i.code == MISC | TAX {
                st.x = st.a;
            } else {
                st.a = st.x;
            }
        }
        _ => {}
    }
}

/// The register (true for A) and symbol a load of a packet byte, the length or a
/// constant sets.
fn loads(i: &Insn) -> Option<(bool, Sym)> {
    Some(match (i.class(), i.mode()) {
        (LD, ABS) => (
            true,
            Sym::Pkt {
                off: i.k,
                size: i.size(),
            },
        ),
        (LD, IMM) => (true, Sym::Imm(i.k)),
        (LD, LEN) => (true, Sym::Len),
        (LDX, IMM) => (false, Sym::Imm(i.k)),
        (LDX, LEN) => (false, Sym::Len),
        (LDX, MSH) => (false, Sym::Msh(i.k)),
        _ => return None,
    })
}

/// The constant a jump compares A with: its `k`, or X when X holds a known constant.
fn operand(i: &Insn, st: &State) -> Option<u32> {
    if i.src() == X {
        match st.x {
            Some(Sym::Imm(v)) => Some(v),
            _ => None,
        }
    } else {
        Some(i.k)
    }
}

/// Follows an edge into `t` with state `st` past what `st` decides; returns where it
/// can be aimed instead (`t` itself when nothing is known).
///
/// The walk follows the original program: `a` is what A holds there. Until it skips a
/// load that changes A, the new edge leaves the registers as the original path would,
/// so any point reached is a valid target (`safe`). After such a skip the new program's
/// A differs, so the walk must end at a `ret #k`, which does not read A.
fn thread(insns: &[Insn], mut t: usize, st: &State) -> usize {
    let mut a = st.a;
    let mut safe = t;
    let mut skipped_a = false;
    loop {
        let i = insns[t];
        if let Some((to_a, sym)) = loads(&i) {
            let held = if to_a { a } else { st.x };
            if held == Some(sym) {
                t += 1; // the register already holds it
            } else {
                // A load of a new A, then a jump on it that the facts decide.
                let j = insns[t + 1];
                if !(to_a && j.class() == JMP && j.op() != JA && j.src() == K) {
                    break;
                }
                let Some(o) = st.decide(sym, j.op(), j.k) else {
                    break;
                };
                a = Some(sym);
                skipped_a = true;
                t += 2 + if o { j.jt } else { j.jf } as usize;
            }
        } else if i.class() == JMP && i.op() == JA {
            t += 1 + i.k as usize;
        } else if i.class() == JMP {
            let (Some(sym), Some(k)) = (a, operand(&i, st)) else {
                break;
            };
            let Some(o) = st.decide(sym, i.op(), k) else {
                break;
            };
            t += 1 + if o { i.jt } else { i.jf } as usize;
        } else {
            break;
        }
        if !skipped_a {
            safe = t;
        }
    }
    // After a skipped load, the walk may end where A's value is dead: a `ret #k`, or a
    // load into A (which reads X or memory, never A).
    if skipped_a && (insns[t].code == RET | K || insns[t].class() == LD) {
        t
    } else {
        safe
    }
}

/// Aims every edge into a block of code at the last copy of that block: two places are
/// the same code when their instructions are equal and their successors are the same
/// code (computed from the end, as jumps only go forward; a `ja` is the code it jumps
/// to). The copies then unreachable are dropped by [`compact`]. This is what lets the
/// tests of `host a or host b` share their ARP and RARP tails, as libpcap's block
/// merging does.
fn merge_copies(insns: &[Insn]) -> Vec<Insn> {
    use std::collections::HashMap;
    let n = insns.len();
    // The code class of each instruction, and the last instruction of each class.
    let mut class = vec![0u32; n];
    let mut last: Vec<usize> = Vec::new();
    let mut ids: HashMap<(u16, u32, u32, u32), u32> = HashMap::new();
    for pc in (0..n).rev() {
        let i = insns[pc];
        let after = |off: usize| class[pc + 1 + off];
        let key = match i.class() {
            RET => (i.code, i.k, u32::MAX, u32::MAX),
            JMP if i.op() == JA => {
                class[pc] = after(i.k as usize);
                continue;
            }
            JMP => (i.code, i.k, after(i.jt as usize), after(i.jf as usize)),
            _ => (i.code, i.k, after(0), u32::MAX),
        };
        let next = ids.len() as u32;
        let c = *ids.entry(key).or_insert(next);
        if c == next {
            last.push(pc);
        }
        class[pc] = c;
    }
    let mut out = insns.to_vec();
    let aim = |pc: usize, off: usize| -> usize {
        let t = pc + 1 + off;
        let rep = last[class[t] as usize];
        if rep >= t { rep } else { t }
    };
    for pc in 0..n {
        let i = insns[pc];
        if i.class() != JMP {
            continue;
        }
        if i.op() == JA {
            out[pc].k = (aim(pc, i.k as usize) - pc - 1) as u32;
        } else {
            let (t, f) = (aim(pc, i.jt as usize), aim(pc, i.jf as usize));
            if t - pc - 1 <= u8::MAX as usize && f - pc - 1 <= u8::MAX as usize {
                out[pc].jt = (t - pc - 1) as u8;
                out[pc].jf = (f - pc - 1) as u8;
            }
        }
    }
    out
}

/// Threads every jump edge; returns the new instructions.
fn thread_jumps(insns: &[Insn]) -> Vec<Insn> {
    let n = insns.len();
    let mut out = insns.to_vec();
    let mut into: Vec<Option<State>> = vec![None; n];
    into[0] = Some(State::start());
    let arrive = |into: &mut Vec<Option<State>>, t: usize, st: State| match &mut into[t] {
        Some(s) => s.meet(&st),
        slot => *slot = Some(st),
    };
    for pc in 0..n {
        let Some(mut st) = into[pc].take() else {
            continue; // unreachable
        };
        let i = insns[pc];
        match i.class() {
            RET => {}
            JMP if i.op() == JA => {
                let t = thread(insns, pc + 1 + i.k as usize, &st);
                out[pc].k = (t - pc - 1) as u32;
                arrive(&mut into, t, st);
            }
            JMP => {
                let rhs = operand(&i, &st);
                let decided = match (st.a, rhs) {
                    (Some(sym), Some(k)) => st.decide(sym, i.op(), k),
                    _ => None,
                };
                if let Some(o) = decided {
                    // The facts decide this jump: it becomes a `ja` to the edge taken.
                    let t = thread(insns, pc + 1 + if o { i.jt } else { i.jf } as usize, &st);
                    out[pc] = Insn::stmt(JMP | JA, (t - pc - 1) as u32);
                    arrive(&mut into, t, st);
                    continue;
                }
                for taken in [true, false] {
                    let mut s = st.clone();
                    if let (Some(sym), Some(k)) = (st.a, rhs) {
                        s.learn(Fact {
                            sym,
                            op: i.op(),
                            k,
                            taken,
                        });
                    }
                    let t0 = pc + 1 + if taken { i.jt } else { i.jf } as usize;
                    let mut t = thread(insns, t0, &s);
                    if t - pc - 1 > u8::MAX as usize {
                        t = t0;
                    }
                    if taken {
                        out[pc].jt = (t - pc - 1) as u8;
                    } else {
                        out[pc].jf = (t - pc - 1) as u8;
                    }
                    arrive(&mut into, t, s);
                }
            }
            _ => {
                step(&mut st, &i);
                arrive(&mut into, pc + 1, st);
            }
        }
    }
    out
}

/// What an instruction reads and writes among A (bit 0), X (bit 1) and the scratch
/// words (bit 2 + k), and whether that is all it does: loads from the packet can fail
/// and a division by X can reject, so those are never *pure*.
fn effect(i: &Insn) -> (u32, u32, bool) {
    const A_: u32 = 1;
    const X_: u32 = 2;
    let m = |k: u32| 4u32 << (k as usize % MEMWORDS);
    match i.class() {
        LD => match i.mode() {
            ABS => (0, A_, false),
            IND => (X_, A_, false),
            MEM => (m(i.k), A_, true),
            _ => (0, A_, true), // IMM, LEN
        },
        LDX => match i.mode() {
            MSH => (0, X_, false),
            MEM => (m(i.k), X_, true),
            _ => (0, X_, true),
        },
        ST => (A_, m(i.k), true),
        STX => (X_, m(i.k), true),
        ALU if i.op() == NEG || i.src() == K => (A_, A_, true),
        ALU => (A_ | X_, A_, !matches!(i.op(), DIV | MOD)),
        JMP if i.op() == JA => (0, 0, false),
        JMP if i.src() == X => (A_ | X_, 0, false),
        JMP => (A_, 0, false),
        RET if i.code & A == A => (A_, 0, false),
        RET => (0, 0, false),
        _ if i.code == MISC | TAX => (A_, X_, true),
        _ => (X_, A_, true), // txa
    }
}

/// Instructions whose only effect is on a register or scratch word that nothing reads
/// afterwards, on any path (backward liveness; jumps only go forward, so one pass from
/// the end sees every successor first, and a removed instruction's own reads die too).
fn dead_code(insns: &[Insn]) -> Vec<bool> {
    let n = insns.len();
    let mut live_in = vec![0u32; n];
    let mut dead = vec![false; n];
    for pc in (0..n).rev() {
        let i = insns[pc];
        let at = |off: usize| live_in.get(pc + 1 + off).copied().unwrap_or(0);
        let after = match i.class() {
            RET => 0,
            JMP if i.op() == JA => at(i.k as usize),
            JMP => at(i.jt as usize) | at(i.jf as usize),
            _ => at(0),
        };
        let (uses, defs, pure) = effect(&i);
        if pure && defs & after == 0 {
            dead[pc] = true;
            live_in[pc] = after;
        } else {
            live_in[pc] = (after & !defs) | uses;
        }
    }
    dead
}

/// Drops unreachable instructions and jumps that go nowhere, and recomputes offsets.
fn compact(insns: &[Insn]) -> Vec<Insn> {
    let n = insns.len();
    let dead = dead_code(insns);
    let target = |pc: usize, off: usize| pc + 1 + off;
    let mut live = vec![false; n];
    live[0] = true;
    // Deleted no-op jumps pass their edges on to the next instruction.
    let mut keep = vec![false; n];
    for pc in 0..n {
        if !live[pc] {
            continue;
        }
        let i = insns[pc];
        let succ: Vec<usize> = match i.class() {
            RET => vec![],
            JMP if i.op() == JA => vec![target(pc, i.k as usize)],
            JMP => vec![target(pc, i.jt as usize), target(pc, i.jf as usize)],
            _ => vec![pc + 1],
        };
        let noop = i.class() == JMP && succ.iter().all(|&s| s == pc + 1);
        keep[pc] = !noop && !dead[pc];
        for s in succ {
            live[s] = true;
        }
    }
    // new[pc]: the index in the output of the first kept instruction at or after pc.
    let mut new = vec![0usize; n + 1];
    let mut count = 0;
    for pc in 0..n {
        new[pc] = count;
        count += keep[pc] as usize;
    }
    new[n] = count;
    let mut out = Vec::with_capacity(count);
    for pc in 0..n {
        if !keep[pc] {
            continue;
        }
        let mut i = insns[pc];
        let here = new[pc];
        if i.class() == JMP {
            if i.op() == JA {
                i.k = (new[target(pc, i.k as usize)] - here - 1) as u32;
            } else {
                let (t, f) = (
                    new[target(pc, i.jt as usize)],
                    new[target(pc, i.jf as usize)],
                );
                if t == f {
                    // Both edges agree: the test decides nothing.
                    i = Insn::stmt(JMP | JA, (t - here - 1) as u32);
                } else {
                    i.jt = (t - here - 1) as u8;
                    i.jf = (f - here - 1) as u8;
                }
            }
        }
        out.push(i);
    }
    out
}

/// The optimised program, or `prog` itself when optimising does not shorten it.
pub fn optimize(prog: &Program) -> Program {
    match Program::new(optimize_insns(prog.insns())) {
        Ok(p) if p.len() < prog.len() => p,
        _ => prog.clone(),
    }
}

/// The optimisation of an instruction array that may be longer than a program may be
/// (the expression compiler's output, before it is cut down to size). The result is
/// not validated: [`optimize`] and the compiler do that.
pub(crate) fn optimize_insns(insns: &[Insn]) -> Vec<Insn> {
    let mut insns = insns.to_vec();
    // Each round can expose more (a threaded edge meets fewer others, merged copies
    // leave edges to thread); a few suffice.
    for _ in 0..6 {
        let next = compact(&merge_copies(&compact(&thread_jumps(&insns))));
        if next.len() >= insns.len() {
            break;
        }
        insns = next;
    }
    insns
}
