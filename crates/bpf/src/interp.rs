//! The reference interpreter, with the semantics of libpcap's `bpf_filter`.
//!
//! The accumulator A, the index register X and the 16 scratch words start at zero. A load
//! that reaches past the captured bytes, or a division or modulo by X when X is zero,
//! ends the run with 0 (reject). `ld #pktlen` reads the length on the wire, which may
//! exceed the captured bytes. The result is the returned value: 0 rejects, anything else
//! is the number of bytes to keep (the snap length in programs from expressions).

use crate::insn::*;

/// Runs `prog` over the captured bytes `pkt` of a packet that was `wirelen` bytes long on
/// the wire.
pub fn run(prog: &Program, pkt: &[u8], wirelen: u32) -> u32 {
    run_insns(prog.insns(), pkt, wirelen)
}

fn load(pkt: &[u8], at: u64, size: u16) -> Option<u32> {
    let n = match size {
        W => 4,
        H => 2,
        _ => 1,
    };
    let at = usize::try_from(at).ok()?;
    let b = pkt.get(at..at.checked_add(n)?)?;
    Some(b.iter().fold(0u32, |v, &x| (v << 8) | x as u32))
}

/// A shift as libpcap performs it for the X operand: by 32 or more bits gives 0.
pub(crate) fn shl(a: u32, n: u32) -> u32 {
    if n < 32 { a << n } else { 0 }
}
pub(crate) fn shr(a: u32, n: u32) -> u32 {
    if n < 32 { a >> n } else { 0 }
}

/// The ALU operation `op` on `a` and `b`; `None` for division or modulo by zero.
pub(crate) fn alu(op: u16, a: u32, b: u32) -> Option<u32> {
    Some(match op {
        ADD => a.wrapping_add(b),
        SUB => a.wrapping_sub(b),
        MUL => a.wrapping_mul(b),
        DIV => a.checked_div(b)?,
        MOD => a.checked_rem(b)?,
        OR => a | b,
        AND => a & b,
        XOR => a ^ b,
        LSH => shl(a, b),
        RSH => shr(a, b),
        _ => a.wrapping_neg(),
    })
}

/// [`run`] over instructions that passed [`validate`]. Kept separate so that tests can
/// run programs they built without the wrapper; on an unvalidated program it still never
/// panics or loops (it returns 0 at anything invalid).
pub fn run_insns(insns: &[Insn], pkt: &[u8], wirelen: u32) -> u32 {
    let mut a: u32 = 0;
    let mut x: u32 = 0;
    let mut mem = [0u32; MEMWORDS];
    let mut pc = 0usize;
    while let Some(i) = insns.get(pc) {
        pc += 1;
        match i.class() {
            LD => {
                a = match i.mode() {
                    ABS => match load(pkt, i.k as u64, i.size()) {
                        Some(v) => v,
                        None => return 0,
                    },
                    IND => match load(pkt, i.k as u64 + x as u64, i.size()) {
                        Some(v) => v,
                        None => return 0,
                    },
                    IMM => i.k,
                    LEN => wirelen,
                    MEM => match mem.get(i.k as usize) {
                        Some(&v) => v,
                        None => return 0,
                    },
                    _ => return 0,
                }
            }
            LDX => {
                x = match i.mode() {
                    IMM => i.k,
                    LEN => wirelen,
                    MEM => match mem.get(i.k as usize) {
                        Some(&v) => v,
                        None => return 0,
                    },
                    MSH => match pkt.get(i.k as usize) {
                        Some(&b) => 4 * (b as u32 & 0xf),
                        None => return 0,
                    },
                    _ => return 0,
                }
            }
            ST => match mem.get_mut(i.k as usize) {
                Some(m) => *m = a,
                None => return 0,
            },
            STX => match mem.get_mut(i.k as usize) {
                Some(m) => *m = x,
                None => return 0,
            },
            ALU => {
                let b = if i.src() == X { x } else { i.k };
                a = match alu(i.op(), a, b) {
                    Some(v) => v,
                    None => return 0,
                };
            }
            JMP => {
                let b = if i.src() == X { x } else { i.k };
                let taken = match i.op() {
                    JA => {
                        pc = pc.saturating_add(i.k as usize);
                        continue;
                    }
                    JEQ => a == b,
                    JGT => a > b,
                    JGE => a >= b,
                    JSET => a & b != 0,
                    _ => return 0,
                };
                pc += if taken { i.jt } else { i.jf } as usize;
            }
            RET => return if i.code & A == A { a } else { i.k },
            _ => {
                if i.code == MISC | TXA {
                    a = x;
                } else {
                    x = a;
                }
            }
        }
    }
    0
}
