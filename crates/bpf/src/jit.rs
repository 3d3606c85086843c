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

/// Why native code could not be made (an unsupported host, or a Cranelift error).
#[derive(Debug)]
pub struct JitError(pub String);

impl std::fmt::Display for JitError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "JIT: {}", self.0)
    }
}

impl std::error::Error for JitError {}

fn e(x: impl std::fmt::Display) -> JitError {
    JitError(x.to_string())
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
            let mut b = FunctionBuilder::new(&mut ctx.func, &mut fbc);
            let entry = b.create_block();
            b.append_block_params_for_function_params(entry);
            let head = b.create_block();
            b.append_block_param(head, types::I64);
            let step = b.create_block();
            let done = b.create_block();
            b.append_block_param(done, types::I32);
            let exit = b.create_block();

            b.switch_to_block(entry);
            let p = b.block_params(entry).to_vec();
            let (pkts, n, out) = (p[0], p[1], p[2]);
            let zero = b.ins().iconst(types::I64, 0);
            b.ins().jump(head, &[zero.into()]);

            b.switch_to_block(head);
            let i = b.block_params(head)[0];
            let more = b.ins().icmp(IntCC::UnsignedLessThan, i, n);
            b.ins().brif(more, step, &[], exit, &[]);

            b.switch_to_block(step);
            let size = std::mem::size_of::<Packet<'_>>() as i64;
            let off = b.ins().imul_imm(i, size);
            let rec = b.ins().iadd(pkts, off);
            let f = MemFlags::trusted().with_readonly();
            let data = b
                .ins()
                .load(ptr, f, rec, offset_of!(Packet<'_>, ptr) as i32);
            let len = b
                .ins()
                .load(types::I64, f, rec, offset_of!(Packet<'_>, len) as i32);
            let wl = b
                .ins()
                .load(types::I32, f, rec, offset_of!(Packet<'_>, wirelen) as i32);
            body(&mut b, prog.insns(), data, len, wl, done);

            b.switch_to_block(done);
            let v = b.block_params(done)[0];
            let at = b.ins().imul_imm(i, 4);
            let slot = b.ins().iadd(out, at);
            b.ins().store(MemFlags::trusted(), v, slot, 0);
            let next = b.ins().iadd_imm(i, 1);
            b.ins().jump(head, &[next.into()]);

            b.switch_to_block(exit);
            b.ins().return_(&[]);
            b.seal_all_blocks();
            b.finalize();
        }
        let batch_id = module
            .declare_function("bpf_batch", Linkage::Local, &ctx.func.signature)
            .map_err(e)?;
        module.define_function(batch_id, &mut ctx).map_err(e)?;
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
    .map_err(JitError)
}

/// The value a return instruction returns, emitted in the current block (`None` for
/// other instructions).
fn ret_value(b: &mut FunctionBuilder<'_>, i: &Insn, a: Variable) -> Option<Value> {
    if i.class() != RET {
        return None;
    }
    Some(if i.code & A == A {
        b.use_var(a)
    } else {
        b.ins().iconst(types::I32, i.k as i64)
    })
}

/// Emits the program's code in the current block; every return jumps to `done` with the
/// verdict.
fn body(
    b: &mut FunctionBuilder<'_>,
    insns: &[Insn],
    data: Value,
    caplen: Value,
    wirelen: Value,
    done: Block,
) {
    let i32t = types::I32;
    let i64t = types::I64;
    let a = b.declare_var(i32t);
    let x = b.declare_var(i32t);
    let mem: Vec<Variable> = (0..MEMWORDS).map(|_| b.declare_var(i32t)).collect();
    let zero = b.ins().iconst(i32t, 0);
    b.def_var(a, zero);
    b.def_var(x, zero);
    for m in &mem {
        b.def_var(*m, zero);
    }
    let blocks: Vec<Block> = (0..insns.len()).map(|_| b.create_block()).collect();
    let reject = b.create_block();
    b.ins().jump(blocks[0], &[]);
    let rd = MemFlags::new().with_notrap().with_readonly();

    // Loads `size` bytes at the 64-bit offset `off` if they are inside the packet.
    let load = |b: &mut FunctionBuilder<'_>, off: Value, size: u16| -> Value {
        let n = match size {
            W => 4,
            H => 2,
            _ => 1,
        };
        let end = b.ins().iadd_imm(off, n);
        let ok = b.ins().icmp(IntCC::UnsignedLessThanOrEqual, end, caplen);
        let cont = b.create_block();
        b.ins().brif(ok, cont, &[], reject, &[]);
        b.switch_to_block(cont);
        let addr = b.ins().iadd(data, off);
        match size {
            W => {
                let v = b.ins().load(i32t, rd, addr, 0);
                b.ins().bswap(v)
            }
            H => {
                let v = b.ins().load(types::I16, rd, addr, 0);
                let v = b.ins().bswap(v);
                b.ins().uextend(i32t, v)
            }
            _ => b.ins().uload8(i32t, rd, addr, 0),
        }
    };

    for (pc, i) in insns.iter().enumerate() {
        b.switch_to_block(blocks[pc]);
        let next = blocks.get(pc + 1).copied().unwrap_or(reject);
        match i.class() {
            LD | LDX => {
                let v = match (i.class(), i.mode()) {
                    (LD, ABS) => {
                        let off = b.ins().iconst(i64t, i.k as i64);
                        load(b, off, i.size())
                    }
                    (LD, IND) => {
                        let xv = b.use_var(x);
                        let xw = b.ins().uextend(i64t, xv);
                        let off = b.ins().iadd_imm(xw, i.k as i64);
                        load(b, off, i.size())
                    }
                    (_, IMM) => b.ins().iconst(i32t, i.k as i64),
                    (_, LEN) => wirelen,
                    (_, MEM) => b.use_var(mem[i.k as usize]),
                    _ => {
                        // ldxb 4*([k]&0xf)
                        let off = b.ins().iconst(i64t, i.k as i64);
                        let v = load(b, off, B);
                        let v = b.ins().band_imm(v, 0xf);
                        b.ins().ishl_imm(v, 2)
                    }
                };
                b.def_var(if i.class() == LD { a } else { x }, v);
                b.ins().jump(next, &[]);
            }
            ST => {
                let v = b.use_var(a);
                b.def_var(mem[i.k as usize], v);
                b.ins().jump(next, &[]);
            }
            STX => {
                let v = b.use_var(x);
                b.def_var(mem[i.k as usize], v);
                b.ins().jump(next, &[]);
            }
            ALU => {
                let av = b.use_var(a);
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
                        OR => b.ins().bor_imm(av, k),
                        AND => b.ins().band_imm(av, k),
                        XOR => b.ins().bxor_imm(av, k),
                        LSH => b.ins().ishl_imm(av, k),
                        _ => b.ins().ushr_imm(av, k),
                    }
                } else {
                    let xv = b.use_var(x);
                    match i.op() {
                        ADD => b.ins().iadd(av, xv),
                        SUB => b.ins().isub(av, xv),
                        MUL => b.ins().imul(av, xv),
                        OR => b.ins().bor(av, xv),
                        AND => b.ins().band(av, xv),
                        XOR => b.ins().bxor(av, xv),
                        DIV | MOD => {
                            let cont = b.create_block();
                            b.ins().brif(xv, cont, &[], reject, &[]);
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
                b.def_var(a, v);
                b.ins().jump(next, &[]);
            }
            JMP => {
                if i.op() == JA {
                    b.ins().jump(blocks[pc + 1 + i.k as usize], &[]);
                    continue;
                }
                let av = b.use_var(a);
                let rhs = if i.src() == X {
                    b.use_var(x)
                } else {
                    b.ins().iconst(i32t, i.k as i64)
                };
                let c = match i.op() {
                    JEQ => b.ins().icmp(IntCC::Equal, av, rhs),
                    JGT => b.ins().icmp(IntCC::UnsignedGreaterThan, av, rhs),
                    JGE => b.ins().icmp(IntCC::UnsignedGreaterThanOrEqual, av, rhs),
                    _ => b.ins().band(av, rhs),
                };
                let (tpc, fpc) = (pc + 1 + i.jt as usize, pc + 1 + i.jf as usize);
                if let (Some(tv), Some(fv)) =
                    (ret_value(b, &insns[tpc], a), ret_value(b, &insns[fpc], a))
                {
                    // Both edges return: the verdict is a select, not a branch. This is
                    // usually the last test of a filter, the least predictable one (it
                    // separates accepted from rejected packets).
                    let v = b.ins().select(c, tv, fv);
                    b.ins().jump(done, &[v.into()]);
                    continue;
                }
                let t = blocks[tpc];
                let f = blocks[fpc];
                if t == f {
                    b.ins().jump(t, &[]);
                } else {
                    b.ins().brif(c, t, &[], f, &[]);
                }
            }
            RET => {
                let v = if i.code & A == A {
                    b.use_var(a)
                } else {
                    b.ins().iconst(i32t, i.k as i64)
                };
                b.ins().jump(done, &[v.into()]);
            }
            _ => {
                if i.code == MISC | TXA {
                    let v = b.use_var(x);
                    b.def_var(a, v);
                } else {
                    let v = b.use_var(a);
                    b.def_var(x, v);
                }
                b.ins().jump(next, &[]);
            }
        }
    }
    b.switch_to_block(reject);
    let z = b.ins().iconst(i32t, 0);
    b.ins().jump(done, &[z.into()]);
}
