//! Filter expressions and BPF programs from an attacker.
//!
//! The first byte picks the mode:
//! * expression: the rest is text, compiled for Ethernet, raw IP and Linux cooked; each
//!   program must validate, and the interpreter, the JIT and the unoptimised program
//!   must agree on packets cut from the same input;
//! * program: the rest is instructions (8 bytes each) then a packet; whatever the
//!   validator accepts must run to the same verdict in the interpreter, the JIT and the
//!   interpreter on the optimised program, and
//!   the `-d` and `-ddd` listings must read back to the same program (`-d` up to fields
//!   the instruction ignores). The interpreter
//!   also runs unvalidated programs (it must never panic or loop).
#![no_main]

use libfuzzer_sys::fuzz_target;
use netsieve_bpf::{
    Filter, Insn, LinkType, Options, Program, compile, compile_with, interp, opt, text,
};

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    if mode & 1 == 0 {
        let Ok(s) = std::str::from_utf8(rest) else {
            return;
        };
        for link in [LinkType::Ethernet, LinkType::Raw, LinkType::LinuxSll] {
            if let Ok(p) = compile(s, link) {
                assert!(netsieve_bpf::validate(p.insns()).is_ok());
                let f = Filter::new(&p);
                let raw = compile_with(
                    s,
                    &Options {
                        optimize: false,
                        ..Options::new(link)
                    },
                )
                .expect("compiles unoptimised too");
                for cut in [0, 14, 34, 54, rest.len()] {
                    let pkt = &rest[..cut.min(rest.len())];
                    let want = interp::run(&raw, pkt, pkt.len() as u32);
                    assert_eq!(f.run(pkt, pkt.len() as u32), want);
                    assert_eq!(interp::run(&p, pkt, pkt.len() as u32), want);
                }
            }
        }
    } else {
        let n = (rest.len() / 8).min((mode as usize >> 1) + 1);
        let insns: Vec<Insn> = rest[..n * 8]
            .chunks_exact(8)
            .map(|c| {
                Insn::new(
                    u16::from_le_bytes([c[0], c[1]]),
                    c[2],
                    c[3],
                    u32::from_le_bytes([c[4], c[5], c[6], c[7]]),
                )
            })
            .collect();
        let pkt = &rest[n * 8..];
        let _ = interp::run_insns(&insns, pkt, pkt.len() as u32 + 3);
        if let Ok(p) = Program::new(insns) {
            let f = Filter::new(&p);
            let want = interp::run(&p, pkt, pkt.len() as u32 + 3);
            assert_eq!(f.run(pkt, pkt.len() as u32 + 3), want);
            assert_eq!(
                interp::run(&opt::optimize(&p), pkt, pkt.len() as u32 + 3),
                want
            );
            // Listings drop fields an instruction ignores (jt/jf of a `ret`): compare the
            // listing of what was read back.
            let d = text::dump(p.insns());
            assert_eq!(text::dump(&text::parse_image(&d).unwrap()), d);
            assert_eq!(
                text::parse_decimal(&text::dump_decimal(p.insns())).unwrap(),
                p.insns()
            );
        }
    }
});
