//! From a tree of tests to a BPF program.
//!
//! The compiler describes a filter as a [`Bool`]: leaves are straight-line code that
//! leaves a value in A followed by one comparison; inner nodes are `and`, `or` and `not`.
//! [`emit`] lays the tree out with short-circuit jumps (`and`: a false left side jumps
//! straight to the false exit), so every jump goes forward. Jumps further than the 255
//! instructions an 8-bit offset reaches go through `ja` trampolines.

use crate::insn::*;

/// The right-hand operand of a comparison.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Src {
    K(u32),
    X,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Bool {
    Const(bool),
    /// Run `code`, then compare A with `src` using `op` (JEQ, JGT, JGE or JSET).
    Leaf {
        code: Vec<Insn>,
        op: u16,
        src: Src,
    },
    And(Box<Bool>, Box<Bool>),
    Or(Box<Bool>, Box<Bool>),
    Not(Box<Bool>),
    /// Hand-laid code with internal forward jumps; every path ends in a jump to
    /// [`Tgt::True`] or [`Tgt::False`]. For tests that are not one comparison, such as the
    /// header walk of `protochain`.
    Block(Vec<Step>),
}

/// Where a jump inside a [`Bool::Block`] goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tgt {
    True,
    False,
    /// A [`Step::Label`] of the same block, further down.
    L(usize),
}

/// One element of a [`Bool::Block`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    Insn(Insn),
    Jump { code: u16, k: u32, t: Tgt, f: Tgt },
    Ja(Tgt),
    Label(usize),
}

impl Bool {
    pub fn leaf(code: Vec<Insn>, op: u16, k: u32) -> Bool {
        Bool::Leaf {
            code,
            op,
            src: Src::K(k),
        }
    }
    /// `size` bytes at absolute offset `off`, masked with `mask` when it is not all ones,
    /// compared with `k`.
    pub fn cmp(size: u16, off: u32, mask: u32, op: u16, k: u32) -> Bool {
        let mut code = vec![Insn::stmt(LD | size | ABS, off)];
        let full = match size {
            W => u32::MAX,
            H => 0xffff,
            _ => 0xff,
        };
        if mask & full != full {
            code.push(Insn::stmt(ALU | AND | K, mask));
        }
        Bool::leaf(code, op, k)
    }
    pub fn eq(size: u16, off: u32, k: u32) -> Bool {
        Bool::cmp(size, off, u32::MAX, JEQ, k)
    }
    pub fn and(self, b: Bool) -> Bool {
        match (self, b) {
            (Bool::Const(true), b) => b,
            (Bool::Const(false), _) => Bool::Const(false),
            (a, Bool::Const(true)) => a,
            (a, b) => Bool::And(Box::new(a), Box::new(b)),
        }
    }
    pub fn or(self, b: Bool) -> Bool {
        match (self, b) {
            (Bool::Const(false), b) => b,
            (Bool::Const(true), _) => Bool::Const(true),
            (a, Bool::Const(false)) => a,
            (a, b) => Bool::Or(Box::new(a), Box::new(b)),
        }
    }
    #[allow(clippy::should_implement_trait)]
    pub fn not(self) -> Bool {
        match self {
            Bool::Const(c) => Bool::Const(!c),
            Bool::Not(b) => *b,
            b => Bool::Not(Box::new(b)),
        }
    }
    pub fn all(items: impl IntoIterator<Item = Bool>) -> Bool {
        items.into_iter().fold(Bool::Const(true), Bool::and)
    }
    pub fn any(items: impl IntoIterator<Item = Bool>) -> Bool {
        items.into_iter().fold(Bool::Const(false), Bool::or)
    }
}

#[derive(Clone, Copy, Debug)]
enum Item {
    Insn(Insn),
    /// A conditional jump to labels.
    Jump {
        code: u16,
        k: u32,
        t: usize,
        f: usize,
    },
    Ja(usize),
    Label(usize),
}

struct Emitter {
    items: Vec<Item>,
    labels: usize,
}

impl Emitter {
    fn label(&mut self) -> usize {
        self.labels += 1;
        self.labels - 1
    }
    fn emit(&mut self, b: &Bool, t: usize, f: usize) {
        match b {
            Bool::Const(c) => self.items.push(Item::Ja(if *c { t } else { f })),
            Bool::Leaf { code, op, src } => {
                self.items.extend(code.iter().map(|i| Item::Insn(*i)));
                let (s, k) = match src {
                    Src::K(k) => (K, *k),
                    Src::X => (X, 0),
                };
                self.items.push(Item::Jump {
                    code: JMP | op | s,
                    k,
                    t,
                    f,
                });
            }
            Bool::And(a, b) => {
                let mid = self.label();
                self.emit(a, mid, f);
                self.items.push(Item::Label(mid));
                self.emit(b, t, f);
            }
            Bool::Or(a, b) => {
                let mid = self.label();
                self.emit(a, t, mid);
                self.items.push(Item::Label(mid));
                self.emit(b, t, f);
            }
            Bool::Not(a) => self.emit(a, f, t),
            Bool::Block(steps) => {
                let base = self.labels;
                let locals = steps
                    .iter()
                    .filter_map(|s| match s {
                        Step::Label(l) => Some(l + 1),
                        _ => None,
                    })
                    .max()
                    .unwrap_or(0);
                self.labels += locals;
                let map = |g: Tgt| match g {
                    Tgt::True => t,
                    Tgt::False => f,
                    Tgt::L(l) => base + l,
                };
                for s in steps {
                    self.items.push(match *s {
                        Step::Insn(i) => Item::Insn(i),
                        Step::Jump { code, k, t, f } => Item::Jump {
                            code,
                            k,
                            t: map(t),
                            f: map(f),
                        },
                        Step::Ja(g) => Item::Ja(map(g)),
                        Step::Label(l) => Item::Label(base + l),
                    });
                }
            }
        }
    }
}

/// Lays out `b` as a program that returns `accept` when `b` holds and 0 otherwise.
pub fn emit(b: &Bool, accept: u32) -> Vec<Insn> {
    let mut e = Emitter {
        items: Vec::new(),
        labels: 2,
    };
    let (t, f) = (0, 1);
    e.emit(b, t, f);
    e.items.push(Item::Label(t));
    e.items.push(Item::Insn(Insn::stmt(RET | K, accept)));
    e.items.push(Item::Label(f));
    e.items.push(Item::Insn(Insn::stmt(RET | K, 0)));
    // A `ja` to the label right after it is a no-op.
    let items: Vec<Item> = e
        .items
        .iter()
        .enumerate()
        .filter(|(n, it)| match it {
            Item::Ja(l) => !matches!(e.items.get(n + 1), Some(Item::Label(m)) if m == l),
            _ => true,
        })
        .map(|(_, it)| *it)
        .collect();
    layout(&items, e.labels)
}

fn layout(items: &[Item], labels: usize) -> Vec<Insn> {
    // A conditional jump whose true target is too far becomes `jxx 0/+1; ja t`, one whose
    // false target is too far `jxx +1/0; ja f`, and one with both `jxx 0/1; ja t; ja f`.
    // `far` only gains bits, so the loop ends.
    const T: u8 = 1;
    const F: u8 = 2;
    let size = |far: u8| 1 + (far & T != 0) as usize + (far & F != 0) as usize;
    let mut far = vec![0u8; items.len()];
    loop {
        let mut pos = vec![0usize; labels];
        let mut at = Vec::with_capacity(items.len());
        let mut pc = 0;
        for (n, it) in items.iter().enumerate() {
            at.push(pc);
            match it {
                Item::Label(l) => pos[*l] = pc,
                Item::Jump { .. } => pc += size(far[n]),
                _ => pc += 1,
            }
        }
        let mut changed = false;
        for (n, it) in items.iter().enumerate() {
            if let Item::Jump { t, f, .. } = it {
                // The conditional jump encodes offsets from itself.
                let mut want = far[n];
                if pos[*t] - at[n] - 1 > 255 {
                    want |= T;
                }
                if pos[*f] - at[n] - 1 > 255 {
                    want |= F;
                }
                if want != far[n] {
                    far[n] = want;
                    changed = true;
                }
            }
        }
        if changed {
            continue;
        }
        let mut out = Vec::with_capacity(pc);
        for (n, it) in items.iter().enumerate() {
            let here = out.len();
            let ja = |to: usize, from: usize| Insn::stmt(JMP | JA, (to - from - 1) as u32);
            match *it {
                Item::Insn(i) => out.push(i),
                Item::Label(_) => {}
                Item::Ja(l) => out.push(ja(pos[l], here)),
                Item::Jump { code, k, t, f } => {
                    let rel = |to: usize| (to - here - 1) as u8;
                    match far[n] {
                        0 => out.push(Insn::new(code, rel(pos[t]), rel(pos[f]), k)),
                        T => {
                            out.push(Insn::new(code, 0, rel(pos[f]), k));
                            out.push(ja(pos[t], here + 1));
                        }
                        F => {
                            out.push(Insn::new(code, rel(pos[t]), 0, k));
                            out.push(ja(pos[f], here + 1));
                        }
                        _ => {
                            out.push(Insn::new(code, 0, 1, k));
                            out.push(ja(pos[t], here + 1));
                            out.push(ja(pos[f], here + 2));
                        }
                    }
                }
            }
        }
        return out;
    }
}
