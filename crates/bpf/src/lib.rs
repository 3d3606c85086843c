//! Packet filters: tcpdump expressions compiled to classic BPF, and three ways to run them.
//!
//! ```
//! use netsieve_bpf::{compile, LinkType, Filter};
//! let prog = compile("tcp port 80 and not net 10.0.0.0/8", LinkType::Ethernet).unwrap();
//! let filter = Filter::new(&prog);
//! let frame = [0u8; 60];
//! assert_eq!(filter.run(&frame, 60), 0);
//! ```
//!
//! * [`compile()`] turns a pcap-filter expression into a validated [`Program`].
//! * [`text`] prints programs as `tcpdump -d`, `-dd` and `-ddd` do and reads the `-d`
//!   and `-ddd` forms back.
//! * [`interp::run`] is the reference interpreter, with libpcap's `bpf_filter` semantics.
//! * [`Filter`] is the fast path: native code from Cranelift when the `jit` feature is on
//!   (the default), the interpreter otherwise. [`Filter::run_batch`] filters many packets
//!   per call, writing verdicts to a slice, so the filtering loop runs apart from whatever
//!   the caller does with the accepted packets (the split the software-pipelining paper
//!   measures).

pub mod codegen;
pub mod compile;
pub mod insn;
pub mod interp;
#[cfg(feature = "jit")]
pub mod jit;
mod lex;
pub mod opt;
pub mod text;

pub use compile::{CompileError, LinkType, MAX_NESTING, Options, compile, compile_with};
pub use insn::{Insn, Program, ValidateError, validate};

/// A packet for batch filtering: captured bytes and length on the wire. A plain C-layout
/// record, so native code can walk an array of them.
#[derive(Clone, Copy, Debug)]
#[repr(C)]
pub struct Packet<'a> {
    ptr: *const u8,
    len: u64,
    wirelen: u32,
    _data: std::marker::PhantomData<&'a [u8]>,
}

impl<'a> Packet<'a> {
    pub fn new(data: &'a [u8], wirelen: u32) -> Packet<'a> {
        Packet {
            ptr: data.as_ptr(),
            len: data.len() as u64,
            wirelen,
            _data: std::marker::PhantomData,
        }
    }
    pub fn data(&self) -> &'a [u8] {
        // SAFETY: `ptr` and `len` come from a slice that lives for 'a (see `new`).
        unsafe { std::slice::from_raw_parts(self.ptr, self.len as usize) }
    }
    pub fn wirelen(&self) -> u32 {
        self.wirelen
    }
}

// SAFETY: a Packet is a shared borrow of bytes, which may cross threads like `&[u8]`.
unsafe impl Send for Packet<'_> {}
// SAFETY: as above.
unsafe impl Sync for Packet<'_> {}

/// A validated program ready to run: compiled to native code where the platform allows.
pub struct Filter {
    prog: Program,
    #[cfg(feature = "jit")]
    native: Option<jit::Native>,
}

impl Filter {
    /// Prepares `prog`, compiling it to native code when the `jit` feature is on and the
    /// host is supported; otherwise it will be interpreted.
    pub fn new(prog: &Program) -> Filter {
        Filter {
            prog: prog.clone(),
            #[cfg(feature = "jit")]
            native: jit::Native::compile(prog).ok(),
        }
    }

    /// A filter that always interprets.
    pub fn interpreted(prog: &Program) -> Filter {
        Filter {
            prog: prog.clone(),
            #[cfg(feature = "jit")]
            native: None,
        }
    }

    /// Whether native code runs this filter.
    pub fn is_native(&self) -> bool {
        #[cfg(feature = "jit")]
        {
            self.native.is_some()
        }
        #[cfg(not(feature = "jit"))]
        {
            false
        }
    }

    pub fn program(&self) -> &Program {
        &self.prog
    }

    /// The filter's verdict for one packet: 0 rejects, else the bytes to keep.
    #[inline]
    pub fn run(&self, data: &[u8], wirelen: u32) -> u32 {
        #[cfg(feature = "jit")]
        if let Some(n) = &self.native {
            return n.run(data, wirelen);
        }
        interp::run(&self.prog, data, wirelen)
    }

    /// Verdicts for a batch: `out[i]` is the verdict for `pkts[i]`. Panics if `out` is
    /// shorter than `pkts`.
    pub fn run_batch(&self, pkts: &[Packet<'_>], out: &mut [u32]) {
        let out = &mut out[..pkts.len()];
        #[cfg(feature = "jit")]
        if let Some(n) = &self.native {
            n.run_batch(pkts, out);
            return;
        }
        for (p, o) in pkts.iter().zip(out.iter_mut()) {
            *o = interp::run(&self.prog, p.data(), p.wirelen);
        }
    }
}
