//! Classic BPF to native code with Cranelift.
//!
//! Each BPF instruction becomes a Cranelift block; A, X and the scratch words become SSA
//! variables, so Cranelift keeps them in registers. Packet loads check their bounds
//! against the captured length and branch to "return 0" when they fail, exactly as the
//! interpreter does; division and modulo by X check for zero the same way, and shifts by
//! X of 32 or more give 0.
//!
//! One function is generated per program, `batch(packets, n, out)`: the filter loop of
//! the software-pipelining paper. The loop over a batch of packets is itself native code,
//! the filter is inlined in the loop body, and the verdicts go to an array the caller's
//! action loop reads. A single packet is a batch of one: that costs about 2 ns more per
//! call than a separate one-packet function did (`netsieve bench bpf`), and halves the
//! compile time, which matters more for filters that change with the rules.
//!
//! Five things make the code faster than the same filters written by hand in Rust and
//! compiled by LLVM (docs/BENCHMARKS.md measures each):
//!
//! * the loop is rotated (one branch per packet) and walks pointers, and the wire length
//!   is only loaded by programs that read it;
//! * a bounds check tests for the length the rest of the program needs to accept (see
//!   `needed_lengths`), so later loads need none, and the rejection is laid out cold;
//! * a test of loaded bytes against a constant compares the bytes as they lie in memory
//!   with the constant byte-swapped, instead of swapping every loaded value (`raw` in
//!   `Emitter`; and, or and xor with a constant are followed through);
//! * a test whose two edges both return becomes a select;
//! * `this or tail`, where `tail` is a few instructions that end in a test whose edges
//!   return (the second half of `src or dst`), runs the tail speculatively and selects
//!   (see `Emitter::jump`). Its loads cannot fault: one past the end of the packet
//!   reads the packet's record instead and makes the tail's verdict 0, as the
//!   interpreter's rejection would. A tail behind a guard (`ip and tail`) runs the same
//!   way when its loads all lie within the length already checked.
//!
//! To read the code the JIT makes, set `NETSIEVE_JIT_DISASM=1`: each compiled program's
//! machine code is printed to standard error, in Cranelift's notation (before its last
//! pass removes jumps to the next block).

use crate::Packet;
use crate::insn::*;
use cranelift_codegen::ir::{
    AbiParam, Block, InstBuilder, MemFlags, Value, condcodes::IntCC, types,
};
use cranelift_codegen::settings::{self, Configurable};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext, Variable};
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::{Linkage, Module, default_libcall_names};
use std::mem::offset_of;
use std::sync::OnceLock;

type BatchFn = unsafe extern "C" fn(*const Packet<'_>, u64, *mut u32);

/// A program compiled to native code. The code is immutable once made and its functions
/// only read their arguments, so it can be shared between threads.
pub struct Native {
    module: Option<JITModule>,
    batch: BatchFn,
}

// SAFETY: the JIT module only owns finalised, read-only executable memory; nothing in it
// is mutated after `compile` returns, and the generated functions touch no shared state.
unsafe impl Send for Native {}
// SAFETY: as above; `run` and `run_batch` take `&self` and only call pure functions.
unsafe impl Sync for Native {}

impl Drop for Native {
    fn drop(&mut self) {
        if let Some(m) = self.module.take() {
            // SAFETY: the function pointers into this memory die with `self`; no caller can
            // hold one, since they are private and only called through `&self`.
            unsafe { m.free_memory() };
        }
    }
}

/// Why native code could not be made: the host has no instruction set Cranelift
/// targets, or Cranelift refused the program.
#[derive(Clone, Debug)]
pub struct JitError {
    kind: JitErrorKind,
}

#[derive(Clone, Debug)]
enum JitErrorKind {
    /// No native instruction set for this host.
    Host(String),
    /// Cranelift could not build or finalise the function.
    Codegen(String),
}

impl std::fmt::Display for JitError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.kind {
            JitErrorKind::Host(m) | JitErrorKind::Codegen(m) => write!(f, "JIT: {m}"),
        }
    }
}

impl std::error::Error for JitError {}

fn e(x: impl std::fmt::Display) -> JitError {
    JitError {
        kind: JitErrorKind::Codegen(x.to_string()),
    }
}

impl Native {
    pub fn compile(prog: &Program) -> Result<Native, JitError> {
        let isa = isa()?;
        let mut module = JITModule::new(JITBuilder::with_isa(isa, default_libcall_names()));
        let mut ctx = module.make_context();
        let mut fbc = FunctionBuilderContext::new();
        let ptr = module.target_config().pointer_type();

        // batch(packets, n, out)
        for t in [ptr, types::I64, ptr] {
            ctx.func.signature.params.push(AbiParam::new(t));
        }
        {
            // entry:     if n == 0 goto exit; end = packets + n
            // step(rec, slot): the filter on *rec -> done(v)
            // done(v):   *slot = v; rec += 1; slot += 1; if rec != end goto step
            // The loop is rotated (one branch per packet) and walks pointers, as a
            // compiler makes a counted loop.
            let mut b = FunctionBuilder::new(&mut ctx.func, &mut fbc);
            let entry = b.create_block();
            b.append_block_params_for_function_params(entry);
            let step = b.create_block();
            b.append_block_param(step, ptr);
            b.append_block_param(step, ptr);
            let done = b.create_block();
            b.append_block_param(done, types::I32);
            let exit = b.create_block();

            b.switch_to_block(entry);
            b.seal_block(entry);
            let p = b.block_params(entry).to_vec();
            let (pkts, n, out) = (p[0], p[1], p[2]);
            let size = std::mem::size_of::<Packet<'_>>() as i64;
            let bytes = b.ins().imul_imm(n, size);
            let end = b.ins().iadd(pkts, bytes);
            b.ins().brif(n, step, &[pkts.into(), out.into()], exit, &[]);

            b.switch_to_block(step);
            let (rec, slot) = (b.block_params(step)[0], b.block_params(step)[1]);
            let f = MemFlags::trusted().with_readonly();
            let data = b
                .ins()
                .load(ptr, f, rec, offset_of!(Packet<'_>, ptr) as i32);
            let len = b
                .ins()
                .load(types::I64, f, rec, offset_of!(Packet<'_>, len) as i32);
            body(&mut b, prog.insns(), data, len, rec, done);

            b.switch_to_block(done);
            b.seal_block(done);
            let v = b.block_params(done)[0];
            b.ins().store(MemFlags::trusted(), v, slot, 0);
            let rec = b.ins().iadd_imm(rec, size);
            let slot = b.ins().iadd_imm(slot, 4);
            let more = b.ins().icmp(IntCC::NotEqual, rec, end);
            b.ins()
                .brif(more, step, &[rec.into(), slot.into()], exit, &[]);

            b.switch_to_block(exit);
            b.ins().return_(&[]);
            b.seal_all_blocks();
            b.finalize();
        }
        let batch_id = module
            .declare_function("bpf_batch", Linkage::Local, &ctx.func.signature)
            .map_err(e)?;
        let disasm = std::env::var_os("NETSIEVE_JIT_DISASM").is_some_and(|v| v == "1");
        ctx.set_disasm(disasm);
        module.define_function(batch_id, &mut ctx).map_err(e)?;
        if let Some(code) = ctx.compiled_code().and_then(|c| c.vcode.as_ref()) {
            eprintln!("{code}");
        }
        module.clear_context(&mut ctx);
        module.finalize_definitions().map_err(e)?;
        let batch = module.get_finalized_function(batch_id);
        // SAFETY: the pointer is the function just finalised with exactly this signature
        // (two pointers and a 64-bit count, the native ISA's default C calling convention).
        let batch = unsafe { std::mem::transmute::<*const u8, BatchFn>(batch) };
        Ok(Native {
            module: Some(module),
            batch,
        })
    }

    /// One packet: a batch of one.
    #[inline]
    pub fn run(&self, data: &[u8], wirelen: u32) -> u32 {
        let mut v = [0u32];
        self.run_batch(&[Packet::new(data, wirelen)], &mut v);
        v[0]
    }

    pub fn run_batch(&self, pkts: &[Packet<'_>], out: &mut [u32]) {
        assert!(out.len() >= pkts.len());
        // SAFETY: each `Packet` holds a pointer and length taken from a live slice (its
        // lifetime ties it to that slice); the code bounds-checks every load against that
        // length, and writes exactly `pkts.len()` verdicts into `out`, which is at least
        // that long.
        unsafe { (self.batch)(pkts.as_ptr(), pkts.len() as u64, out.as_mut_ptr()) }
    }
}

/// The host's instruction set, detected once per process.
fn isa() -> Result<cranelift_codegen::isa::OwnedTargetIsa, JitError> {
    static ISA: OnceLock<Result<cranelift_codegen::isa::OwnedTargetIsa, String>> = OnceLock::new();
    ISA.get_or_init(|| {
        let mut flags = settings::builder();
        flags.set("opt_level", "speed").map_err(|x| x.to_string())?;
        flags
            .set("use_colocated_libcalls", "false")
            .map_err(|x| x.to_string())?;
        flags.set("is_pic", "false").map_err(|x| x.to_string())?;
        cranelift_native::builder()
            .map_err(|x| x.to_string())?
            .finish(settings::Flags::new(flags))
            .map_err(|x| x.to_string())
    })
    .clone()
    .map_err(|m| JitError {
        kind: JitErrorKind::Host(m),
    })
}

/// How many straight-line instructions a speculated tail may hold (see [`tail`]).
const MAX_TAIL: usize = 4;

/// Whether `i` can run speculatively: it cannot reject the packet except by a load, and
/// loads are made safe by [`Emitter::load`] in speculative mode. Division and modulo by
/// X can reject on a zero X, so they are excluded; jumps end a tail.
fn speculable(i: &Insn) -> bool {
    match i.class() {
        LD | LDX | ST | STX | MISC => true,
        ALU => !(i.src() == X && matches!(i.op(), DIV | MOD)),
        _ => false,
    }
}

/// A tail that starts at `pc`: at most [`MAX_TAIL`] speculable instructions, then a
/// conditional jump whose two edges both return. Returns the jump's pc.
fn tail(insns: &[Insn], pc: usize) -> Option<usize> {
    for (at, i) in insns.iter().enumerate().skip(pc).take(MAX_TAIL + 1) {
        if i.class() == JMP {
            let (t, f) = (at + 1 + i.jt as usize, at + 1 + i.jf as usize);
            let ret = |p: usize| insns[p].class() == RET;
            return (i.op() != JA && ret(t) && ret(f)).then_some(at);
        }
        if !speculable(i) {
            return None;
        }
    }
    None
}

/// Emits a program's code for one packet; every return jumps to `done` with the verdict.
struct Emitter<'a> {
    insns: &'a [Insn],
    data: Value,
    caplen: Value,
    /// The packet's record (always readable; the safe address of speculative loads).
    rec: Value,
    done: Block,
    reject: Block,
    a: Variable,
    x: Variable,
    mem: Vec<Variable>,
    /// Values of A that are a byte swap of a value in the packet's own (big-endian) byte
    /// order: A -> (the unswapped value, its width in bytes). A test of such a value
    /// against a constant tests the unswapped value against the swapped constant, as a
    /// compiler does for `u16::from_be_bytes(..) == 0x800`; the swap then often has no
    /// other use and disappears.
    raw: std::collections::HashMap<Value, (Value, u32)>,
    /// In speculative mode, the AND of the in-bounds conditions of the loads so far.
    ok: Option<Value>,
    /// Per instruction, a length below which the program certainly returns 0 from there
    /// (see [`needed_lengths`]).
    need: Vec<u64>,
    /// Per instruction, a captured length the packet is known to have on every path into
    /// it (`None`: no path emitted yet).
    known: Vec<Option<u64>>,
    /// The known captured length at the point being emitted, and that point's instruction.
    cur: u64,
    pc: usize,
}

/// Never accepts, whatever the packet's length.
const NEVER: u64 = u64::MAX;

/// For each instruction, a length `L` such that from there the program returns 0 on any
/// packet shorter than `L`: every path from it to a return that can accept loads a byte
/// at offset `L - 1` or beyond (or `NEVER` if no such return is reachable).
///
/// This lets a bounds check test for more than its own load needs, once, where the
/// program still could not accept a shorter packet: `ip and tcp` checks for 24 bytes
/// before it loads the type field at 12 and the protocol at 23, and needs no second
/// check. A check that fails rejects, and the program would have returned 0 anyway. An
/// indexed load needs at least its constant offset, since X is not negative; returns of
/// A may be 0 but count as accepting, which only makes `L` smaller.
fn needed_lengths(insns: &[Insn]) -> Vec<u64> {
    let mut need = vec![0u64; insns.len()];
    for pc in (0..insns.len()).rev() {
        let i = insns[pc];
        let after = || need.get(pc + 1).copied().unwrap_or(NEVER);
        let width = |size: u16| match size {
            W => 4,
            H => 2,
            _ => 1,
        };
        need[pc] = match (i.class(), i.mode()) {
            (RET, _) => {
                if i.code & A != A && i.k == 0 {
                    NEVER
                } else {
                    0
                }
            }
            (JMP, _) if i.op() == JA => need[pc + 1 + i.k as usize],
            (JMP, _) => need[pc + 1 + i.jt as usize].min(need[pc + 1 + i.jf as usize]),
            (LD, ABS | IND) => after().max(i.k as u64 + width(i.size())),
            (LDX, MSH) => after().max(i.k as u64 + 1),
            _ => after(),
        };
    }
    need
}

impl Emitter<'_> {
    /// Loads `size` bytes at the 64-bit offset `off`: the value, and the same bytes
    /// unswapped for halfwords and words. Normally a load past the end branches to
    /// `reject`. In speculative mode (`self.ok` set) it branches nowhere: it reads from
    /// the packet's record instead, and clears `ok`.
    ///
    /// A load at a constant offset `k` needs no check when the packet is known to be long
    /// enough (`self.cur`); when it does, the check is for the length the rest of the
    /// program needs to accept (`self.need`), so later loads may need none.
    fn load(
        &mut self,
        b: &mut FunctionBuilder<'_>,
        off: Value,
        size: u16,
        k: Option<u32>,
    ) -> Value {
        let n = match size {
            W => 4,
            H => 2,
            _ => 1,
        };
        let at = b.ins().iadd(self.data, off);
        let end_k = k.map(|k| k as u64 + n as u64);
        let addr = if end_k.is_some_and(|e| e <= self.cur) {
            at
        } else {
            match (self.ok, end_k) {
                (Some(ok), _) => {
                    let end = b.ins().iadd_imm(off, n);
                    let in_bounds = b
                        .ins()
                        .icmp(IntCC::UnsignedLessThanOrEqual, end, self.caplen);
                    self.ok = Some(b.ins().band(ok, in_bounds));
                    b.ins().select(in_bounds, at, self.rec)
                }
                (None, Some(e)) => {
                    let need = self.need[self.pc];
                    let want = if need == NEVER { e } else { e.max(need) };
                    let in_bounds = b.ins().icmp_imm(
                        IntCC::UnsignedGreaterThanOrEqual,
                        self.caplen,
                        want as i64,
                    );
                    self.cur = want;
                    self.check(b, in_bounds);
                    at
                }
                (None, None) => {
                    let end = b.ins().iadd_imm(off, n);
                    let in_bounds = b
                        .ins()
                        .icmp(IntCC::UnsignedLessThanOrEqual, end, self.caplen);
                    self.check(b, in_bounds);
                    at
                }
            }
        };
        let rd = MemFlags::new().with_notrap().with_readonly();
        let i32t = types::I32;
        match size {
            W => {
                let r = b.ins().load(i32t, rd, addr, 0);
                let v = b.ins().bswap(r);
                self.raw.insert(v, (r, 4));
                v
            }
            H => {
                let r = b.ins().uload16(i32t, rd, addr, 0);
                let s = b.ins().bswap(r);
                let v = b.ins().ushr_imm(s, 16);
                self.raw.insert(v, (r, 2));
                v
            }
            _ => b.ins().uload8(i32t, rd, addr, 0),
        }
    }

    /// Continues in a new block if `ok`, else rejects the packet.
    fn check(&mut self, b: &mut FunctionBuilder<'_>, ok: Value) {
        let cont = b.create_block();
        b.ins().brif(ok, cont, &[], self.reject, &[]);
        b.seal_block(cont);
        b.switch_to_block(cont);
    }

    /// Records that the current point jumps to `pc`: what is known there is what is
    /// known on every path in.
    fn goes_to(&mut self, pc: usize) {
        let k = &mut self.known[pc];
        *k = Some(k.map_or(self.cur, |k| k.min(self.cur)));
    }

    /// Emits an instruction that is not a jump or a return, in the current block.
    fn straight(&mut self, b: &mut FunctionBuilder<'_>, i: &Insn) {
        let (i32t, i64t) = (types::I32, types::I64);
        match i.class() {
            LD | LDX => {
                let v = match (i.class(), i.mode()) {
                    (LD, ABS | IND) => {
                        if i.mode() == ABS {
                            let off = b.ins().iconst(i64t, i.k as i64);
                            self.load(b, off, i.size(), Some(i.k))
                        } else {
                            let xv = b.use_var(self.x);
                            let xw = b.ins().uextend(i64t, xv);
                            let off = b.ins().iadd_imm(xw, i.k as i64);
                            self.load(b, off, i.size(), None)
                        }
                    }
                    (_, IMM) => b.ins().iconst(i32t, i.k as i64),
                    (_, LEN) => b.ins().load(
                        i32t,
                        MemFlags::trusted().with_readonly(),
                        self.rec,
                        offset_of!(Packet<'_>, wirelen) as i32,
                    ),
                    (_, MEM) => b.use_var(self.mem[i.k as usize]),
                    _ => {
                        // ldxb 4*([k]&0xf)
                        let off = b.ins().iconst(i64t, i.k as i64);
                        let v = self.load(b, off, B, Some(i.k));
                        let v = b.ins().band_imm(v, 0xf);
                        b.ins().ishl_imm(v, 2)
                    }
                };
                b.def_var(if i.class() == LD { self.a } else { self.x }, v);
            }
            ST => {
                let v = b.use_var(self.a);
                b.def_var(self.mem[i.k as usize], v);
            }
            STX => {
                let v = b.use_var(self.x);
                b.def_var(self.mem[i.k as usize], v);
            }
            ALU => {
                let av = b.use_var(self.a);
                let v = if i.op() == NEG {
                    b.ins().ineg(av)
                } else if i.src() == K {
                    let k = i.k as i64;
                    match i.op() {
                        ADD => b.ins().iadd_imm(av, k),
                        SUB => {
                            let kv = b.ins().iconst(i32t, k);
                            b.ins().isub(av, kv)
                        }
                        MUL => b.ins().imul_imm(av, k),
                        DIV => b.ins().udiv_imm(av, k),
                        MOD => b.ins().urem_imm(av, k),
                        LSH => b.ins().ishl_imm(av, k),
                        RSH => b.ins().ushr_imm(av, k),
                        op => {
                            let v = match op {
                                OR => b.ins().bor_imm(av, k),
                                AND => b.ins().band_imm(av, k),
                                _ => b.ins().bxor_imm(av, k),
                            };
                            // Bitwise operations commute with the byte swap, as long as
                            // the constant fits the loaded width (A has no higher bits).
                            if let Some(&(r, n)) = self.raw.get(&av) {
                                let m = mask(n);
                                if op == AND || i.k <= m {
                                    let sk = swap(i.k & m, n) as i64;
                                    let rv = match op {
                                        OR => b.ins().bor_imm(r, sk),
                                        AND => b.ins().band_imm(r, sk),
                                        _ => b.ins().bxor_imm(r, sk),
                                    };
                                    self.raw.insert(v, (rv, n));
                                }
                            }
                            v
                        }
                    }
                } else {
                    let xv = b.use_var(self.x);
                    match i.op() {
                        ADD => b.ins().iadd(av, xv),
                        SUB => b.ins().isub(av, xv),
                        MUL => b.ins().imul(av, xv),
                        OR => b.ins().bor(av, xv),
                        AND => b.ins().band(av, xv),
                        XOR => b.ins().bxor(av, xv),
                        DIV | MOD => {
                            // Never speculated (see `speculable`).
                            let cont = b.create_block();
                            b.ins().brif(xv, cont, &[], self.reject, &[]);
                            b.seal_block(cont);
                            b.switch_to_block(cont);
                            if i.op() == DIV {
                                b.ins().udiv(av, xv)
                            } else {
                                b.ins().urem(av, xv)
                            }
                        }
                        op => {
                            let s = if op == LSH {
                                b.ins().ishl(av, xv)
                            } else {
                                b.ins().ushr(av, xv)
                            };
                            let small = b.ins().icmp_imm(IntCC::UnsignedLessThan, xv, 32);
                            let z = b.ins().iconst(i32t, 0);
                            b.ins().select(small, s, z)
                        }
                    }
                };
                b.def_var(self.a, v);
            }
            _ => {
                let (from, to) = if i.code == MISC | TXA {
                    (self.x, self.a)
                } else {
                    (self.a, self.x)
                };
                let v = b.use_var(from);
                b.def_var(to, v);
            }
        }
    }

    /// The condition of a conditional jump: nonzero when it is taken.
    fn cond(&mut self, b: &mut FunctionBuilder<'_>, i: &Insn) -> Value {
        let av = b.use_var(self.a);
        let unswapped = match self.raw.get(&av) {
            Some(&(r, n)) if i.src() == K && i.k <= mask(n) => Some((r, n)),
            _ => None,
        };
        match (i.op(), unswapped) {
            (JEQ, Some((r, n))) => b.ins().icmp_imm(IntCC::Equal, r, swap(i.k, n) as i64),
            (JSET, Some((r, n))) => b.ins().band_imm(r, swap(i.k, n) as i64),
            _ => {
                let rhs = if i.src() == X {
                    b.use_var(self.x)
                } else {
                    b.ins().iconst(types::I32, i.k as i64)
                };
                match i.op() {
                    JEQ => b.ins().icmp(IntCC::Equal, av, rhs),
                    JGT => b.ins().icmp(IntCC::UnsignedGreaterThan, av, rhs),
                    JGE => b.ins().icmp(IntCC::UnsignedGreaterThanOrEqual, av, rhs),
                    _ => b.ins().band(av, rhs),
                }
            }
        }
    }

    /// The value the return at `pc` returns, emitted in the current block (`None` if
    /// `pc` is not a return).
    fn ret_value(&self, b: &mut FunctionBuilder<'_>, pc: usize) -> Option<Value> {
        let i = &self.insns[pc];
        if i.class() != RET {
            return None;
        }
        Some(if i.code & A == A {
            b.use_var(self.a)
        } else {
            b.ins().iconst(types::I32, i.k as i64)
        })
    }

    /// Emits the tail that starts at `from` (see [`tail`]) without a branch, in the
    /// current block: the verdict it reaches, or 0 if one of its loads is out of bounds
    /// (where the program would reject).
    fn speculate(&mut self, b: &mut FunctionBuilder<'_>, from: usize) -> Value {
        let end = tail(self.insns, from).expect("a tail");
        self.ok = Some(b.ins().iconst(types::I8, 1));
        for i in &self.insns[from..end] {
            self.straight(b, i);
        }
        let j = self.insns[end];
        let c = self.cond(b, &j);
        let t = self
            .ret_value(b, end + 1 + j.jt as usize)
            .expect("tail ends in returns");
        let f = self
            .ret_value(b, end + 1 + j.jf as usize)
            .expect("tail ends in returns");
        let v = b.ins().select(c, t, f);
        let ok = self.ok.take().expect("set above");
        let zero = b.ins().iconst(types::I32, 0);
        b.ins().select(ok, v, zero)
    }

    /// Whether a tail starts at `pc` whose loads all lie within the length known here.
    fn in_bounds_tail(&self, pc: usize) -> bool {
        tail(self.insns, pc).is_some_and(|end| {
            self.insns[pc..end]
                .iter()
                .all(|i| match (i.class(), i.mode()) {
                    (LD, ABS) => {
                        let n = match i.size() {
                            W => 4,
                            H => 2,
                            _ => 1,
                        };
                        i.k as u64 + n <= self.cur
                    }
                    (LD | LDX, IMM | MEM | LEN) => true,
                    (LD | LDX, _) => false,
                    _ => true,
                })
        })
    }

    fn jump(&mut self, b: &mut FunctionBuilder<'_>, pc: usize, blocks: &[Block]) {
        let i = self.insns[pc];
        if i.op() == JA {
            self.goes_to(pc + 1 + i.k as usize);
            b.ins().jump(blocks[pc + 1 + i.k as usize], &[]);
            return;
        }
        let c = self.cond(b, &i);
        let (tpc, fpc) = (pc + 1 + i.jt as usize, pc + 1 + i.jf as usize);
        let (t, f) = (self.ret_value(b, tpc), self.ret_value(b, fpc));
        // When both edges return, the verdict is a select, not a branch. This is usually
        // the last test of a filter, the least predictable one (it separates accepted
        // from rejected packets).
        //
        // When one edge accepts and the other runs a short tail that ends in returns,
        // the program is `this or tail`: typically `src or dst`, whose outcome alternates
        // with the direction of a flow's packets and so defeats the branch predictor. The
        // tail then runs speculatively and the verdict is a select of the two. When the
        // returning edge rejects (`this and tail`) the test is a guard (IPv4? not a
        // fragment?) that flows make predictable, and the branch stays: speculating
        // there was measured slower (`dst port N`: 2.7 -> 3.3 ns per packet), because
        // its tail holds a checked, indexed load. Only a tail whose loads all lie within
        // the length already checked runs speculatively behind a guard: then it costs a
        // load, a compare and a select, no more than the branch (`ip and tcp` 0.82 ->
        // 0.77 ns, `ip and dst net A` 0.88 -> 0.82).
        let accepts = |pc: usize| self.insns[pc].code & A == A || self.insns[pc].k != 0;
        let v = match (t, f) {
            (Some(t), Some(f)) => b.ins().select(c, t, f),
            (Some(t), None) if accepts(tpc) && tail(self.insns, fpc).is_some() => {
                let f = self.speculate(b, fpc);
                b.ins().select(c, t, f)
            }
            (None, Some(f)) if accepts(fpc) && tail(self.insns, tpc).is_some() => {
                let t = self.speculate(b, tpc);
                b.ins().select(c, t, f)
            }
            (None, Some(f)) if self.in_bounds_tail(tpc) => {
                let t = self.speculate(b, tpc);
                b.ins().select(c, t, f)
            }
            (Some(t), None) if self.in_bounds_tail(fpc) => {
                let f = self.speculate(b, fpc);
                b.ins().select(c, t, f)
            }
            _ => {
                self.goes_to(tpc);
                self.goes_to(fpc);
                if tpc == fpc {
                    b.ins().jump(blocks[tpc], &[]);
                } else {
                    b.ins().brif(c, blocks[tpc], &[], blocks[fpc], &[]);
                }
                return;
            }
        };
        b.ins().jump(self.done, &[v.into()]);
    }
}

/// All ones in the low `n` bytes.
fn mask(n: u32) -> u32 {
    if n == 4 { u32::MAX } else { 0xffff }
}

/// `k`'s low `n` bytes in the opposite byte order.
fn swap(k: u32, n: u32) -> u32 {
    k.swap_bytes() >> (8 * (4 - n))
}

/// Emits the program's code in the current block; every return jumps to `done` with the
/// verdict.
fn body(
    b: &mut FunctionBuilder<'_>,
    insns: &[Insn],
    data: Value,
    caplen: Value,
    rec: Value,
    done: Block,
) {
    let i32t = types::I32;
    let mut e = Emitter {
        insns,
        data,
        caplen,
        rec,
        done,
        reject: b.create_block(),
        a: b.declare_var(i32t),
        x: b.declare_var(i32t),
        mem: (0..MEMWORDS).map(|_| b.declare_var(i32t)).collect(),
        raw: Default::default(),
        ok: None,
        need: needed_lengths(insns),
        known: vec![None; insns.len()],
        cur: 0,
        pc: 0,
    };
    e.known[0] = Some(0);
    let zero = b.ins().iconst(i32t, 0);
    for v in [e.a, e.x].iter().chain(&e.mem) {
        b.def_var(*v, zero);
    }
    let blocks: Vec<Block> = (0..insns.len()).map(|_| b.create_block()).collect();
    b.ins().jump(blocks[0], &[]);
    for (pc, i) in insns.iter().enumerate() {
        // Jumps only go forward, so every predecessor of this block has been emitted.
        b.seal_block(blocks[pc]);
        b.switch_to_block(blocks[pc]);
        // No path in: the block is dead, and checks everything all the same.
        e.cur = e.known[pc].unwrap_or(0);
        e.pc = pc;
        match i.class() {
            JMP => e.jump(b, pc, &blocks),
            RET => {
                let v = e.ret_value(b, pc).expect("a return");
                b.ins().jump(done, &[v.into()]);
            }
            _ => {
                e.straight(b, i);
                // A program never falls off its end (validated), so pc + 1 exists.
                e.goes_to(pc + 1);
                b.ins().jump(blocks[pc + 1], &[]);
            }
        }
    }
    // Out-of-bounds loads are rare: laid out at the end, so the common path falls
    // through its bounds checks.
    b.set_cold_block(e.reject);
    b.switch_to_block(e.reject);
    b.seal_block(e.reject);
    b.ins().jump(done, &[zero.into()]);
}
