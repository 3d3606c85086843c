//! Programs as text: the three listings of `tcpdump -d`, `-dd` and `-ddd`, and parsers
//! for the `-d` listing (as libpcap's test suite writes expected programs) and the
//! `-ddd` form users paste from tcpdump.

use crate::insn::*;
use std::fmt::Write;

fn alu_name(op: u16) -> &'static str {
    match op {
        ADD => "add",
        SUB => "sub",
        MUL => "mul",
        DIV => "div",
        MOD => "mod",
        OR => "or",
        AND => "and",
        XOR => "xor",
        LSH => "lsh",
        RSH => "rsh",
        _ => "neg",
    }
}

fn jmp_name(op: u16) -> &'static str {
    match op {
        JEQ => "jeq",
        JGT => "jgt",
        JGE => "jge",
        _ => "jset",
    }
}

/// One instruction as a line of `tcpdump -d` (libpcap's `bpf_image`), without newline.
pub fn image(insns: &[Insn], pc: usize) -> String {
    let i = insns[pc];
    let sz = |s: u16| match s {
        W => "ld",
        H => "ldh",
        _ => "ldb",
    };
    let (op, operand): (String, String) = match i.class() {
        LD => match i.mode() {
            ABS => (sz(i.size()).into(), format!("[{}]", i.k)),
            IND => (sz(i.size()).into(), format!("[x + {}]", i.k)),
            IMM => ("ld".into(), format!("#{:#x}", i.k)),
            LEN => ("ld".into(), "#pktlen".into()),
            _ => ("ld".into(), format!("M[{}]", i.k)),
        },
        LDX => match i.mode() {
            IMM => ("ldx".into(), format!("#{:#x}", i.k)),
            LEN => ("ldx".into(), "#pktlen".into()),
            MEM => ("ldx".into(), format!("M[{}]", i.k)),
            _ => ("ldxb".into(), format!("4*([{}]&0xf)", i.k)),
        },
        ST => ("st".into(), format!("M[{}]", i.k)),
        STX => ("stx".into(), format!("M[{}]", i.k)),
        ALU if i.op() == NEG => ("neg".into(), String::new()),
        ALU if i.src() == X => (alu_name(i.op()).into(), "x".into()),
        // As libpcap's bpf_image: bit operations in hex, arithmetic in decimal.
        ALU if matches!(i.op(), AND | OR | XOR) => {
            (alu_name(i.op()).into(), format!("#{:#x}", i.k))
        }
        ALU => (alu_name(i.op()).into(), format!("#{}", i.k)),
        JMP if i.op() == JA => ("ja".into(), format!("{}", pc as u64 + 1 + i.k as u64)),
        JMP => {
            let operand = if i.src() == X {
                "x".to_string()
            } else {
                format!("#{:#x}", i.k)
            };
            let line = format!(
                "({pc:03}) {:<8} {operand:<16} jt {}\tjf {}",
                jmp_name(i.op()),
                pc + 1 + i.jt as usize,
                pc + 1 + i.jf as usize
            );
            return line;
        }
        RET if i.code & A == A => ("ret".into(), String::new()),
        RET => ("ret".into(), format!("#{}", i.k)),
        _ if i.code == MISC | TXA => ("txa".into(), String::new()),
        _ => ("tax".into(), String::new()),
    };
    format!("({pc:03}) {op:<8} {operand}")
        .trim_end()
        .to_string()
}

/// `tcpdump -d`: one line per instruction.
pub fn dump(insns: &[Insn]) -> String {
    let mut s = String::new();
    for pc in 0..insns.len() {
        s.push_str(&image(insns, pc));
        s.push('\n');
    }
    s
}

/// `tcpdump -dd`: a C array initialiser.
pub fn dump_c(insns: &[Insn]) -> String {
    let mut s = String::new();
    for i in insns {
        let _ = writeln!(
            s,
            "{{ {:#04x}, {}, {}, {:#010x} }},",
            i.code, i.jt, i.jf, i.k
        );
    }
    s
}

/// `tcpdump -ddd`: the count, then one line of decimal numbers per instruction.
pub fn dump_decimal(insns: &[Insn]) -> String {
    let mut s = format!("{}\n", insns.len());
    for i in insns {
        let _ = writeln!(s, "{} {} {} {}", i.code, i.jt, i.jf, i.k);
    }
    s
}

/// A text program that could not be read: the line (1-based) and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TextError {
    pub line: usize,
    pub reason: String,
}

impl std::fmt::Display for TextError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "line {}: {}", self.line, self.reason)
    }
}

impl std::error::Error for TextError {}

fn num(s: &str) -> Option<u32> {
    let s = s.trim();
    if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        u32::from_str_radix(h, 16).ok()
    } else {
        s.parse().ok()
    }
}

/// Reads the `-ddd` form: a count line, then `code jt jf k` per line. Lines may also be
/// separated by commas (as `tcpdump -ddd | tr '\n' ','` users pass to `iptables -m bpf`).
pub fn parse_decimal(text: &str) -> Result<Vec<Insn>, TextError> {
    let mut lines = text
        .split(['\n', ','])
        .enumerate()
        .map(|(n, l)| (n + 1, l.trim()))
        .filter(|(_, l)| !l.is_empty());
    let err = |line, reason: &str| TextError {
        line,
        reason: reason.into(),
    };
    let (n0, first) = lines.next().ok_or_else(|| err(1, "empty program"))?;
    let count = num(first).ok_or_else(|| err(n0, "expected the instruction count"))? as usize;
    if count > MAXINSNS {
        return Err(err(n0, "more than 4096 instructions"));
    }
    let mut out = Vec::with_capacity(count);
    for (n, l) in lines {
        let f: Vec<&str> = l.split_whitespace().collect();
        if f.len() != 4 {
            return Err(err(n, "expected four numbers: code jt jf k"));
        }
        let code = num(f[0]).filter(|&c| c <= 0xffff);
        let jt = num(f[1]).filter(|&c| c <= 0xff);
        let jf = num(f[2]).filter(|&c| c <= 0xff);
        let k = num(f[3]);
        match (code, jt, jf, k) {
            (Some(c), Some(t), Some(f), Some(k)) => {
                out.push(Insn::new(c as u16, t as u8, f as u8, k))
            }
            _ => return Err(err(n, "a number is out of range")),
        }
        if out.len() > count {
            return Err(err(n, "more instructions than the count says"));
        }
    }
    if out.len() != count {
        return Err(err(0, "fewer instructions than the count says"));
    }
    Ok(out)
}

/// Reads the `-d` listing. Anything after `;` on a line is a comment.
pub fn parse_image(text: &str) -> Result<Vec<Insn>, TextError> {
    let mut out = Vec::new();
    for (n, raw) in text.lines().enumerate() {
        let line = raw.split(';').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let insn = parse_image_line(line, out.len()).map_err(|reason| TextError {
            line: n + 1,
            reason,
        })?;
        out.push(insn);
        if out.len() > MAXINSNS {
            return Err(TextError {
                line: n + 1,
                reason: "more than 4096 instructions".into(),
            });
        }
    }
    Ok(out)
}

fn parse_image_line(line: &str, pc: usize) -> Result<Insn, String> {
    let rest = match line.strip_prefix('(') {
        Some(r) => {
            let (idx, r) = r.split_once(')').ok_or("unclosed instruction number")?;
            if num(idx) != Some(pc as u32) {
                return Err(format!("instruction number {idx}, expected {pc}"));
            }
            r.trim()
        }
        None => line,
    };
    let (op, rest) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
    let rest = rest.trim();
    let (operand, jumps) = match rest.find("jt ") {
        Some(p) => (rest[..p].trim(), Some(&rest[p..])),
        None => (rest, None),
    };
    let bad = || format!("cannot read `{line}`");
    let n = |s: &str| num(s).ok_or_else(bad);
    let mem = |s: &str| -> Result<u32, String> {
        n(s.strip_prefix("M[")
            .and_then(|s| s.strip_suffix(']'))
            .ok_or_else(bad)?)
    };
    let size = |op: &str| match op {
        "ld" => W,
        "ldh" => H,
        _ => B,
    };
    let alu = |o: u16| -> Result<Insn, String> {
        if operand == "x" {
            Ok(Insn::stmt(ALU | o | X, 0))
        } else {
            Ok(Insn::stmt(ALU | o | K, n(operand.trim_start_matches('#'))?))
        }
    };
    let insn = match op {
        "ld" | "ldh" | "ldb" => {
            let sz = size(op);
            if let Some(k) = operand.strip_prefix('#') {
                if op != "ld" {
                    return Err(bad());
                }
                if k == "pktlen" || k == "len" {
                    Insn::stmt(LD | W | LEN, 0)
                } else {
                    Insn::stmt(LD | W | IMM, n(k)?)
                }
            } else if operand.starts_with("M[") {
                Insn::stmt(LD | W | MEM, mem(operand)?)
            } else if let Some(inner) = operand.strip_prefix('[').and_then(|s| s.strip_suffix(']'))
            {
                match inner.strip_prefix('x') {
                    Some(off) => {
                        let off = off.trim().trim_start_matches('+').trim();
                        Insn::stmt(LD | sz | IND, n(off)?)
                    }
                    None => Insn::stmt(LD | sz | ABS, n(inner)?),
                }
            } else {
                return Err(bad());
            }
        }
        "ldx" => {
            if let Some(k) = operand.strip_prefix('#') {
                if k == "pktlen" || k == "len" {
                    Insn::stmt(LDX | W | LEN, 0)
                } else {
                    Insn::stmt(LDX | W | IMM, n(k)?)
                }
            } else {
                Insn::stmt(LDX | W | MEM, mem(operand)?)
            }
        }
        "ldxb" => {
            let inner = operand
                .strip_prefix("4*([")
                .and_then(|s| s.strip_suffix("]&0xf)"))
                .ok_or_else(bad)?;
            Insn::stmt(LDX | B | MSH, n(inner)?)
        }
        "st" => Insn::stmt(ST, mem(operand)?),
        "stx" => Insn::stmt(STX, mem(operand)?),
        "add" => alu(ADD)?,
        "sub" => alu(SUB)?,
        "mul" => alu(MUL)?,
        "div" => alu(DIV)?,
        "mod" => alu(MOD)?,
        "and" => alu(AND)?,
        "or" => alu(OR)?,
        "xor" => alu(XOR)?,
        "lsh" => alu(LSH)?,
        "rsh" => alu(RSH)?,
        "neg" => Insn::stmt(ALU | NEG, 0),
        "tax" => Insn::stmt(MISC | TAX, 0),
        "txa" => Insn::stmt(MISC | TXA, 0),
        "ret" => {
            if operand.is_empty() || operand == "a" || operand == "A" {
                Insn::stmt(RET | A, 0)
            } else {
                Insn::stmt(RET | K, n(operand.trim_start_matches('#'))?)
            }
        }
        "ja" | "jmp" => {
            let t = n(operand)? as u64;
            if t < pc as u64 + 1 {
                return Err("backward jump".into());
            }
            Insn::stmt(
                JMP | JA,
                u32::try_from(t - pc as u64 - 1).map_err(|_| bad())?,
            )
        }
        "jeq" | "jgt" | "jge" | "jset" => {
            let o = match op {
                "jeq" => JEQ,
                "jgt" => JGT,
                "jge" => JGE,
                _ => JSET,
            };
            let j = jumps.ok_or_else(bad)?;
            let mut it = j.split_whitespace();
            let (Some("jt"), Some(t), Some("jf"), Some(f)) =
                (it.next(), it.next(), it.next(), it.next())
            else {
                return Err(bad());
            };
            let rel = |t: &str| -> Result<u8, String> {
                let t = n(t)? as usize;
                t.checked_sub(pc + 1)
                    .and_then(|d| u8::try_from(d).ok())
                    .ok_or_else(|| format!("jump target {t} out of reach"))
            };
            let (jt, jf) = (rel(t)?, rel(f)?);
            if operand == "x" {
                Insn::new(JMP | o | X, jt, jf, 0)
            } else {
                Insn::new(JMP | o | K, jt, jf, n(operand.trim_start_matches('#'))?)
            }
        }
        _ => return Err(format!("unknown instruction `{op}`")),
    };
    Ok(insn)
}
