//! The classic BPF instruction set: encoding, and the validator every program passes
//! before it runs.
//!
//! An instruction is the `struct bpf_insn` of the BSD packet filter: a 16-bit opcode, two
//! 8-bit jump offsets and a 32-bit constant. The opcode packs a class (low 3 bits), and
//! for loads a size and addressing mode, for arithmetic an operation and an operand
//! source, for jumps a comparison and an operand source.

use std::fmt;

// Classes.
pub const LD: u16 = 0x00;
pub const LDX: u16 = 0x01;
pub const ST: u16 = 0x02;
pub const STX: u16 = 0x03;
pub const ALU: u16 = 0x04;
pub const JMP: u16 = 0x05;
pub const RET: u16 = 0x06;
pub const MISC: u16 = 0x07;
// Load sizes.
pub const W: u16 = 0x00;
pub const H: u16 = 0x08;
pub const B: u16 = 0x10;
// Load modes.
pub const IMM: u16 = 0x00;
pub const ABS: u16 = 0x20;
pub const IND: u16 = 0x40;
pub const MEM: u16 = 0x60;
pub const LEN: u16 = 0x80;
pub const MSH: u16 = 0xa0;
// ALU operations.
pub const ADD: u16 = 0x00;
pub const SUB: u16 = 0x10;
pub const MUL: u16 = 0x20;
pub const DIV: u16 = 0x30;
pub const OR: u16 = 0x40;
pub const AND: u16 = 0x50;
pub const LSH: u16 = 0x60;
pub const RSH: u16 = 0x70;
pub const NEG: u16 = 0x80;
pub const MOD: u16 = 0x90;
pub const XOR: u16 = 0xa0;
// Jumps.
pub const JA: u16 = 0x00;
pub const JEQ: u16 = 0x10;
pub const JGT: u16 = 0x20;
pub const JGE: u16 = 0x30;
pub const JSET: u16 = 0x40;
// Operand source: the constant or the index register.
pub const K: u16 = 0x00;
pub const X: u16 = 0x08;
// Return value source (with K and X above).
pub const A: u16 = 0x10;
// MISC operations.
pub const TAX: u16 = 0x00;
pub const TXA: u16 = 0x80;

/// Scratch memory words (`M[0]` .. `M[15]`).
pub const MEMWORDS: usize = 16;
/// The longest program the validator accepts (libpcap's `BPF_MAXINSNS`).
pub const MAXINSNS: usize = 4096;

/// One instruction, as `struct bpf_insn`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Insn {
    pub code: u16,
    pub jt: u8,
    pub jf: u8,
    pub k: u32,
}

impl Insn {
    pub const fn new(code: u16, jt: u8, jf: u8, k: u32) -> Insn {
        Insn { code, jt, jf, k }
    }
    /// A statement (no jump offsets).
    pub const fn stmt(code: u16, k: u32) -> Insn {
        Insn {
            code,
            jt: 0,
            jf: 0,
            k,
        }
    }
    pub const fn class(&self) -> u16 {
        self.code & 0x07
    }
    pub const fn size(&self) -> u16 {
        self.code & 0x18
    }
    pub const fn mode(&self) -> u16 {
        self.code & 0xe0
    }
    pub const fn op(&self) -> u16 {
        self.code & 0xf0
    }
    pub const fn src(&self) -> u16 {
        self.code & 0x08
    }
}

/// Why a program was refused by [`validate`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ValidateError {
    /// The instruction at fault (0-based); `None` for faults of the whole program.
    pub pc: Option<usize>,
    pub reason: String,
}

impl fmt::Display for ValidateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.pc {
            Some(pc) => write!(f, "instruction {pc}: {}", self.reason),
            None => f.write_str(&self.reason),
        }
    }
}

impl std::error::Error for ValidateError {}

/// A program that passed [`validate`]: every opcode known, every jump forward and inside
/// the program, every scratch index below 16, no division by a constant zero, and the last
/// instruction a return. Running it can therefore never leave the program or loop.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Program {
    insns: Vec<Insn>,
}

impl Program {
    /// Validates `insns`.
    pub fn new(insns: Vec<Insn>) -> Result<Program, ValidateError> {
        validate(&insns)?;
        Ok(Program { insns })
    }
    pub fn insns(&self) -> &[Insn] {
        &self.insns
    }
    pub fn len(&self) -> usize {
        self.insns.len()
    }
    pub fn is_empty(&self) -> bool {
        self.insns.is_empty()
    }
}

fn bad(pc: usize, reason: impl Into<String>) -> ValidateError {
    ValidateError {
        pc: Some(pc),
        reason: reason.into(),
    }
}

/// Checks `insns` as libpcap's `bpf_validate` does, so that the interpreter and the JIT
/// need no run-time checks beyond packet bounds and division by the X register.
pub fn validate(insns: &[Insn]) -> Result<(), ValidateError> {
    if insns.is_empty() {
        return Err(ValidateError {
            pc: None,
            reason: "empty program".into(),
        });
    }
    if insns.len() > MAXINSNS {
        return Err(ValidateError {
            pc: None,
            reason: format!("{} instructions, more than {MAXINSNS}", insns.len()),
        });
    }
    let n = insns.len();
    for (pc, i) in insns.iter().enumerate() {
        if i.code > 0xff {
            return Err(bad(pc, format!("unknown opcode {:#x}", i.code)));
        }
        let ok = match i.class() {
            LD => match i.mode() {
                ABS | IND => i.size() != 0x18,
                IMM | LEN => i.size() == W,
                MEM => i.size() == W && (i.k as usize) < MEMWORDS,
                _ => false,
            },
            LDX => match i.mode() {
                IMM | LEN => i.size() == W,
                MEM => i.size() == W && (i.k as usize) < MEMWORDS,
                MSH => i.size() == B,
                _ => false,
            },
            ST | STX => {
                if i.code & !0x07 != 0 {
                    false
                } else if i.k as usize >= MEMWORDS {
                    return Err(bad(pc, format!("scratch index {} out of range", i.k)));
                } else {
                    true
                }
            }
            ALU => {
                let op = i.op();
                if op > XOR {
                    false
                } else if op == NEG {
                    i.src() == K
                } else {
                    if i.src() == K && (op == DIV || op == MOD) && i.k == 0 {
                        return Err(bad(pc, "division by the constant zero"));
                    }
                    if i.src() == K && (op == LSH || op == RSH) && i.k >= 32 {
                        return Err(bad(pc, format!("shift by {} bits", i.k)));
                    }
                    true
                }
            }
            JMP => {
                let op = i.op();
                if op > JSET {
                    false
                } else if op == JA {
                    if i.src() != K {
                        false
                    } else if (i.k as u64) >= (n - pc - 1) as u64 {
                        return Err(bad(pc, "jump beyond the end of the program"));
                    } else {
                        true
                    }
                } else if pc + 1 + i.jt as usize >= n || pc + 1 + i.jf as usize >= n {
                    return Err(bad(pc, "jump beyond the end of the program"));
                } else {
                    true
                }
            }
            RET => matches!(i.code, 0x06 | 0x16),
            _ => matches!(i.code, 0x07 | 0x87),
        };
        if !ok {
            return Err(bad(pc, format!("invalid opcode {:#04x}", i.code)));
        }
    }
    if insns[n - 1].class() != RET {
        return Err(bad(n - 1, "the program does not end with a return"));
    }
    Ok(())
}
