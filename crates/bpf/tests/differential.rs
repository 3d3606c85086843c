//! The fast paths against the reference: random valid programs over random packets must
//! give the same verdict from the interpreter, the JIT one packet at a time, and the JIT
//! over a batch. Also: listings read back to the same program, and compiled expressions
//! agree with a hand-written meaning of them.

use netsieve_bpf::insn::*;
use netsieve_bpf::{Filter, LinkType, Packet, compile, interp, opt, text, validate};
use proptest::prelude::*;

/// Turns arbitrary numbers into a valid program: every choice is mapped onto a legal
/// instruction, jumps stay forward and inside, and the program ends with a return.
fn program(raw: &[(u8, u32, u8, u8)]) -> Vec<Insn> {
    let n = raw.len() + 1;
    let mut out = Vec::with_capacity(n);
    for (pc, &(sel, k, jt, jf)) in raw.iter().enumerate() {
        let left = (n - pc - 2) as u32; // instructions after this one, minus the final ret
        let size = [W, H, B][(k % 3) as usize];
        let small = k % 72; // offsets that often fall inside the packets
        let mem = k % MEMWORDS as u32;
        let j = |v: u8| {
            if left == 0 {
                0
            } else {
                (v as u32 % (left + 1)).min(255) as u8
            }
        };
        let alu_ops = [ADD, SUB, MUL, DIV, MOD, OR, AND, XOR, LSH, RSH];
        let i = match sel % 20 {
            0 => Insn::stmt(LD | size | ABS, small),
            1 => Insn::stmt(LD | size | IND, small / 2),
            2 => Insn::stmt(LD | W | IMM, k),
            3 => Insn::stmt(LD | W | LEN, 0),
            4 => Insn::stmt(LD | W | MEM, mem),
            5 => Insn::stmt(LDX | W | IMM, k % 80),
            6 => Insn::stmt(LDX | W | MEM, mem),
            7 => Insn::stmt(LDX | B | MSH, small),
            8 => Insn::stmt(ST, mem),
            9 => Insn::stmt(STX, mem),
            10 | 11 => {
                let op = alu_ops[(k as usize / 7) % alu_ops.len()];
                let kk = match op {
                    DIV | MOD => k.max(1),
                    LSH | RSH => k % 32,
                    _ => k,
                };
                Insn::stmt(ALU | op | K, kk)
            }
            12 => Insn::stmt(ALU | alu_ops[(k as usize) % alu_ops.len()] | X, 0),
            13 => Insn::stmt(ALU | NEG, 0),
            14 => Insn::stmt(MISC | TAX, 0),
            15 => Insn::stmt(MISC | TXA, 0),
            16 => Insn::stmt(JMP | JA, if left == 0 { 0 } else { k % (left + 1) }),
            17 | 18 => {
                let op = [JEQ, JGT, JGE, JSET][(k % 4) as usize];
                let kk = if k & 0x100 != 0 { k % 300 } else { k >> 9 };
                let src = if k & 0x200 != 0 { X } else { K };
                Insn::new(JMP | op | src, j(jt), j(jf), if src == X { 0 } else { kk })
            }
            _ => {
                if k % 3 == 0 {
                    Insn::stmt(RET | A, 0)
                } else {
                    Insn::stmt(RET | K, k % 5)
                }
            }
        };
        out.push(i);
    }
    out.push(Insn::stmt(RET | A, 0));
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn interpreter_jit_and_batch_agree(
        raw in prop::collection::vec((any::<u8>(), any::<u32>(), any::<u8>(), any::<u8>()), 1..60),
        bufs in prop::collection::vec((prop::collection::vec(any::<u8>(), 0..90), 0usize..90, 0u32..200), 1..12),
    ) {
        let insns = program(&raw);
        prop_assert!(validate(&insns).is_ok(), "{:?}", validate(&insns));
        let prog = Program::new(insns).unwrap();
        let f = Filter::new(&prog);
        // Each packet is a prefix of a longer buffer: loads past its end find bytes.
        let pkts: Vec<(&[u8], u32)> =
            bufs.iter().map(|(b, n, wl)| (&b[..(*n).min(b.len())], *wl)).collect();
        let batch: Vec<Packet> = pkts.iter().map(|(d, wl)| Packet::new(d, *wl)).collect();
        let mut out = vec![u32::MAX; batch.len()];
        f.run_batch(&batch, &mut out);
        let optimized = opt::optimize(&prog);
        for (n, (d, wl)) in pkts.iter().enumerate() {
            let want = interp::run(&prog, d, *wl);
            prop_assert_eq!(interp::run(&optimized, d, *wl), want, "optimised, {}", text::dump(prog.insns()));
            prop_assert_eq!(f.run(d, *wl), want, "one packet, {}", text::dump(prog.insns()));
            prop_assert_eq!(out[n], want, "batch, {}", text::dump(prog.insns()));
        }
        // Every listing reads back to the same program.
        prop_assert_eq!(text::parse_image(&text::dump(prog.insns())).unwrap(), prog.insns());
        prop_assert_eq!(text::parse_decimal(&text::dump_decimal(prog.insns())).unwrap(), prog.insns());
    }

    /// Arbitrary instructions: the validator may refuse them, but whatever it accepts runs
    /// to the same verdict everywhere, and the interpreter never panics on anything.
    #[test]
    fn arbitrary_programs_never_crash(
        raw in prop::collection::vec((any::<u16>(), any::<u8>(), any::<u8>(), any::<u32>()), 1..40),
        pkt in prop::collection::vec(any::<u8>(), 0..64),
    ) {
        let insns: Vec<Insn> = raw.iter().map(|&(c, t, f, k)| Insn::new(c & 0xff, t, f, k)).collect();
        let _ = interp::run_insns(&insns, &pkt, 64);
        if let Ok(prog) = Program::new(insns) {
            let f = Filter::new(&prog);
            prop_assert_eq!(f.run(&pkt, 64), interp::run(&prog, &pkt, 64));
            prop_assert_eq!(interp::run(&opt::optimize(&prog), &pkt, 64), interp::run(&prog, &pkt, 64));
        }
    }
}

#[test]
fn jit_is_used() {
    let p = compile("tcp", LinkType::Ethernet).unwrap();
    assert_eq!(Filter::new(&p).is_native(), cfg!(feature = "jit"));
}

/// Builds an Ethernet + IPv4 + TCP frame.
fn tcp_frame(src: [u8; 4], dst: [u8; 4], sport: u16, dport: u16, flags: u8, frag: u16) -> Vec<u8> {
    let mut f = vec![0u8; 12];
    f.extend_from_slice(&[0x08, 0x00]);
    f.extend_from_slice(&[0x45, 0, 0, 40, 0, 0]);
    f.extend_from_slice(&frag.to_be_bytes());
    f.extend_from_slice(&[64, 6, 0, 0]);
    f.extend_from_slice(&src);
    f.extend_from_slice(&dst);
    f.extend_from_slice(&sport.to_be_bytes());
    f.extend_from_slice(&dport.to_be_bytes());
    f.extend_from_slice(&[0; 8]);
    f.extend_from_slice(&[0x50, flags, 0, 0, 0, 0, 0, 0]);
    f
}

type Meaning = Box<dyn Fn([u8; 4], [u8; 4], u16, u16, u8, u16) -> bool>;

/// xorshift64*: deterministic random numbers for the tests below.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// A random program shaped like compiled filters, so the optimiser has work: loads from
/// a few offsets (the same bytes loaded again and again), comparisons with a few small
/// constants (outcomes that earlier ones decide), and between them arithmetic, register
/// moves, indexed loads and returns of A that make skipped loads matter.
fn filter_like(rng: &mut Rng, len: usize) -> Vec<Insn> {
    let mut out = Vec::with_capacity(len + 2);
    let load = |rng: &mut Rng| {
        let (off, size) =
            [(12, H), (13, B), (14, B), (20, H), (23, B), (30, W)][rng.below(6) as usize];
        Insn::stmt(LD | size | ABS, off)
    };
    // Offsets of indexed loads: small, or a transport header's ports.
    let ind = |rng: &mut Rng| [rng.below(8) as u32, 14, 16][rng.below(3) as usize];
    // And, or, xor with constants that only fit some widths.
    let bitwise = |rng: &mut Rng| {
        let op = [AND, OR, XOR][rng.below(3) as usize];
        let k = [1, 0x100, 0xff00, 0x0300, 0x1_0000, 0xffff_0000][rng.below(6) as usize];
        Insn::stmt(ALU | op | K, k)
    };
    while out.len() < len {
        let pc = out.len();
        // Instructions after this one, minus the final ret.
        let left = |at: usize| (len.max(at + 1) - at - 1) as u64;
        let j = |rng: &mut Rng, at: usize| (rng.below(left(at) + 1).min(255)) as u8;
        let jump = |rng: &mut Rng, at: usize| {
            let op = [JEQ, JEQ, JEQ, JGT, JGE, JSET][rng.below(6) as usize];
            let src = if rng.below(8) == 0 { X } else { K };
            let k = match (src, rng.below(4)) {
                (X, _) => 0,
                // Constants that only match in one byte order, or exceed a halfword.
                (_, 0) => [0x100, 0x300, 0x201, 0x1_0000][rng.below(4) as usize],
                _ => rng.below(4) as u32,
            };
            Insn::new(JMP | op | src, j(rng, at), j(rng, at), k)
        };
        if rng.below(2) == 0 && pc + 2 < len {
            // A test as compilers emit it: a load and a jump on it; for a transport
            // header, the IP header length into X first, then an indexed load.
            if rng.below(3) == 0 {
                out.push(Insn::stmt(LDX | B | MSH, [14, 20][rng.below(2) as usize]));
                out.push(Insn::stmt(LD | B | IND, ind(rng)));
                out.push(jump(rng, pc + 2));
            } else if rng.below(3) == 0 && pc + 3 < len {
                // A masked test, as `net` and `tcp[tcpflags] & ..` compile.
                out.push(load(rng));
                out.push(bitwise(rng));
                out.push(jump(rng, pc + 2));
            } else {
                out.push(load(rng));
                out.push(jump(rng, pc + 1));
            }
            continue;
        }
        let i = match rng.below(14) {
            0 => load(rng),
            12 => bitwise(rng),
            // X is often 0 here (see `ldx #k` below): the packet is rejected.
            13 => Insn::stmt(ALU | [DIV, MOD][rng.below(2) as usize] | X, 0),
            1 => Insn::stmt(LDX | B | MSH, [14, 20][rng.below(2) as usize]),
            2 => jump(rng, pc),
            3 => Insn::stmt(ALU | ADD | K, rng.below(3) as u32),
            4 => Insn::stmt(MISC | [TAX, TXA][rng.below(2) as usize], 0),
            5 => Insn::stmt(LD | B | IND, ind(rng)),
            6 => Insn::stmt(JMP | JA, rng.below(left(pc) + 1) as u32),
            7 => Insn::stmt(LDX | W | IMM, rng.below(4) as u32),
            8 | 9 => Insn::stmt(RET | A, 0),
            _ => Insn::stmt(RET | K, rng.below(3) as u32),
        };
        out.push(i);
    }
    out.push(Insn::stmt(RET | A, 0));
    out
}

/// The optimiser against the unoptimised program, through the interpreter, and the JIT
/// (one packet and batches) on both, on filter-like programs and packets whose bytes are
/// mostly 0 to 3 (so comparisons go both ways, and a constant in the wrong byte order
/// fails them) and whose lengths cut loads short (so speculated loads fall outside).
#[test]
fn optimised_programs_agree() {
    let mut rng = Rng(0x0b7f_1e55_0000_0005);
    let (mut shrunk, mut removed) = (0, 0);
    for _ in 0..3000 {
        let len = 1 + rng.below(40) as usize;
        let prog = Program::new(filter_like(&mut rng, len)).expect("valid by construction");
        let o = opt::optimize(&prog);
        assert!(o.len() <= prog.len());
        if o.len() < prog.len() {
            shrunk += 1;
            removed += prog.len() - o.len();
        }
        let (jit, jit_o) = (Filter::new(&prog), Filter::new(&o));
        let mut pkts = Vec::new();
        for _ in 0..40 {
            // Lengths at the loads' boundaries, or any up to 64.
            let n = match rng.below(2) {
                0 => [0, 13, 15, 22, 24, 31, 34, 60][rng.below(8) as usize],
                _ => rng.below(65) as usize,
            };
            // The packet is the first n bytes of a longer buffer whose other bytes are
            // drawn like the packet's: code that loads past the end of the packet reads
            // values that look like packet bytes, and so gets verdicts that differ.
            let buf: Vec<u8> = (0..n + 72)
                .map(|_| {
                    if rng.below(8) == 0 {
                        rng.next() as u8
                    } else {
                        rng.below(4) as u8
                    }
                })
                .collect();
            let pkt = &buf[..n];
            let wl = n as u32 + rng.below(3) as u32;
            let want = interp::run(&prog, pkt, wl);
            let got = [
                interp::run(&o, pkt, wl),
                jit.run(pkt, wl),
                jit_o.run(pkt, wl),
            ];
            assert_eq!(
                got,
                [want; 3],
                "optimised (interpreter), JIT, optimised JIT on packet {pkt:?}\noriginal:\n{}\noptimised:\n{}",
                text::dump(prog.insns()),
                text::dump(o.insns())
            );
            pkts.push((buf, n, wl, want));
        }
        let batch: Vec<Packet> = pkts
            .iter()
            .map(|(b, n, wl, _)| Packet::new(&b[..*n], *wl))
            .collect();
        let want: Vec<u32> = pkts.iter().map(|p| p.3).collect();
        for f in [&jit, &jit_o] {
            let mut out = vec![u32::MAX; batch.len()];
            f.run_batch(&batch, &mut out);
            assert_eq!(out, want, "batch\n{}", text::dump(prog.insns()));
        }
    }
    // The optimiser did work on a good part of them (else this test checks nothing).
    assert!(shrunk > 1000, "only {shrunk} of 3000 programs shrank");
    eprintln!("{shrunk} of 3000 programs shrank, by {removed} instructions in all");
}

/// A test with one edge that returns and one that runs a short tail (a load and a test
/// whose edges return): the JIT may run the tail without a branch, and must still reject
/// where the tail's load falls outside the packet, whether or not an earlier load checked
/// the length. The packets are prefixes of a buffer of bytes the tail accepts, so a load
/// past the end would accept.
#[test]
fn branch_free_tails_never_read_past_the_packet() {
    for guard in [None, Some(2u32), Some(13)] {
        for off in [0u32, 1, 12, 13, 23, 30, 40] {
            for accept_on_true in [true, false] {
                let mut insns = Vec::new();
                if let Some(g) = guard {
                    insns.push(Insn::stmt(LD | B | ABS, g));
                    insns.push(Insn::stmt(ALU | AND | K, 0)); // A = 0 again
                }
                // A == 0 always; the tail is on the true edge or the false one.
                let (jt, jf) = if accept_on_true { (0, 3) } else { (3, 0) };
                let k = if accept_on_true { 0 } else { 1 };
                insns.push(Insn::new(JMP | JEQ | K, jt, jf, k));
                insns.push(Insn::stmt(LD | B | ABS, off));
                insns.push(Insn::new(JMP | JEQ | K, 0, 1, 7));
                insns.push(Insn::stmt(RET | K, 96));
                insns.push(Insn::stmt(RET | K, 0));
                let prog = Program::new(insns).expect("valid");
                let f = Filter::new(&prog);
                let buf = [7u8; 64];
                for n in 0..=off as usize + 2 {
                    let want = interp::run(&prog, &buf[..n], n as u32);
                    let last = off.max(guard.unwrap_or(0)) as usize;
                    assert_eq!(want, if n > last { 96 } else { 0 });
                    assert_eq!(
                        f.run(&buf[..n], n as u32),
                        want,
                        "n = {n}\n{}",
                        text::dump(prog.insns())
                    );
                    let mut out = [u32::MAX; 2];
                    let p = Packet::new(&buf[..n], n as u32);
                    f.run_batch(&[p, p], &mut out);
                    assert_eq!(out, [want; 2], "batch, n = {n}");
                }
            }
        }
    }
}

/// Compiled expressions shrink as libpcap's do: the redundant loads and tests of
/// `ip and tcp` and `port 80` go, and tcpdump's instruction counts are met.
#[test]
fn optimiser_removes_redundancy() {
    let opts = |optimize| netsieve_bpf::Options {
        optimize,
        ..netsieve_bpf::Options::new(LinkType::Ethernet)
    };
    for (expr, libpcap) in [("ip and tcp", 6), ("tcp", 12), ("port 80", 24)] {
        let raw = netsieve_bpf::compile_with(expr, &opts(false)).unwrap();
        let o = netsieve_bpf::compile_with(expr, &opts(true)).unwrap();
        assert!(o.len() < raw.len(), "{expr}: {} -> {}", raw.len(), o.len());
        assert!(
            o.len() <= libpcap,
            "{expr}: {} instructions, libpcap {libpcap}",
            o.len()
        );
    }
}

/// Compiled expressions against their meaning written out in Rust, over random headers.
#[test]
fn expressions_mean_what_they_say() {
    let cases: Vec<(&str, Meaning)> = vec![
        (
            "tcp port 80",
            Box::new(|_, _, s, d, _, fr| fr & 0x1fff == 0 && (s == 80 || d == 80)),
        ),
        (
            "tcp dst portrange 1000-2000",
            Box::new(|_, _, _, d, _, fr| fr & 0x1fff == 0 && (1000..=2000).contains(&d)),
        ),
        (
            "src net 10.0.0.0/8 and not dst host 10.1.2.3",
            Box::new(|s, d, _, _, _, _| s[0] == 10 && d != [10, 1, 2, 3]),
        ),
        (
            "tcp[tcpflags] & (tcp-syn|tcp-fin) != 0",
            Box::new(|_, _, _, _, fl, fr| fr & 0x1fff == 0 && fl & 3 != 0),
        ),
        (
            "tcp port 21 or 22 and host 192.168.0.1",
            Box::new(|s, d, sp, dp, _, fr| {
                fr & 0x1fff == 0
                    && [21, 22].iter().any(|p| sp == *p || dp == *p)
                    && (s == [192, 168, 0, 1] || d == [192, 168, 0, 1])
            }),
        ),
        (
            "ip[6:2] & 0x1fff != 0 or not tcp",
            Box::new(|_, _, _, _, _, fr| fr & 0x1fff != 0),
        ),
    ];
    let mut rng = 0x1234_5678_9abc_def0u64;
    let mut r = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    for (expr, want) in &cases {
        let f = Filter::new(&compile(expr, LinkType::Ethernet).unwrap());
        for _ in 0..3000 {
            let pick = |v: u64, a: &[u8; 4]| {
                if v.is_multiple_of(2) {
                    *a
                } else {
                    (v as u32).to_be_bytes()
                }
            };
            let s = pick(r(), &[10, 1, 2, 3]);
            let d = pick(r(), &[192, 168, 0, 1]);
            let ports = [21u16, 22, 80, 999, 1000, 1500, 2000, 2001];
            let sp = ports[(r() % 8) as usize];
            let dp = ports[(r() % 8) as usize];
            let fl = r() as u8;
            let fr = if r() % 4 == 0 { r() as u16 } else { 0x4000 };
            let frame = tcp_frame(s, d, sp, dp, fl, fr);
            let got = f.run(&frame, frame.len() as u32) != 0;
            assert_eq!(got, want(s, d, sp, dp, fl, fr), "{expr} on {frame:02x?}");
        }
    }
}

/// The reference for `protochain`: walks the chain in Rust. `None` when a header lies past
/// the end of the packet (BPF rejects on the out-of-bounds load).
fn chain_has(p: &[u8], v6: bool, want: u8, hops: usize) -> Option<bool> {
    let (mut nh, mut off) = if v6 {
        (*p.get(6)?, 40usize)
    } else {
        (*p.get(9)?, 4 * (*p.first()? as usize & 0xf))
    };
    for _ in 0..=hops {
        if nh == want {
            return Some(true);
        }
        let ext = v6 && matches!(nh, 0 | 60 | 43 | 44);
        if !ext && nh != 51 {
            return Some(false);
        }
        let len = *p.get(off + 1)? as usize;
        let next = *p.get(off)?;
        off += if ext { (len + 1) * 8 } else { (len + 2) * 4 };
        nh = next;
    }
    Some(false)
}

/// `protochain` over random chains of extension and AH headers, some longer than the
/// unrolled walk and some truncated, on raw IP and Ethernet.
#[test]
fn protochain_walks_the_header_chain() {
    let mut rng = 0x0bad_cafe_f00d_1234u64;
    let mut r = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let hops = netsieve_bpf::compile::PROTOCHAIN_HOPS;
    let filters: Vec<(String, Filter, Filter, u8, bool, bool)> = [
        ("protochain 17", 17, true, true),
        ("ip6 protochain tcp", 6, false, true),
        ("ip protochain 6", 6, true, false),
        ("ip6 protochain 51", 51, false, true),
    ]
    .into_iter()
    .map(|(e, p, v4, v6)| {
        let raw = Filter::new(&compile(e, LinkType::Raw).unwrap());
        let eth = Filter::new(&compile(e, LinkType::Ethernet).unwrap());
        (e.to_string(), raw, eth, p, v4, v6)
    })
    .collect();
    for _ in 0..4000 {
        let v6 = r() % 2 == 0;
        let mut p = if v6 {
            let mut h = vec![0x60, 0, 0, 0, 0, 0, 0, 64];
            h.extend_from_slice(&[0; 32]);
            h
        } else {
            let ihl = 5 + (r() % 3) as usize;
            let mut h = vec![0u8; ihl * 4];
            h[0] = 0x40 | ihl as u8;
            h
        };
        let depth = (r() % (hops as u64 + 6)) as usize;
        let kinds: &[u8] = if v6 { &[0, 60, 43, 44, 51] } else { &[51] };
        let last = [6u8, 17, 58, 59][(r() % 4) as usize];
        let chain: Vec<u8> = (0..depth)
            .map(|_| kinds[(r() % kinds.len() as u64) as usize])
            .chain([last])
            .collect();
        p[if v6 { 6 } else { 9 }] = chain[0];
        for w in chain.windows(2) {
            let units = (r() % 3) as usize;
            let len = if w[0] == 51 {
                (units + 2) * 4
            } else {
                (units + 1) * 8
            };
            let mut h = vec![0u8; len];
            h[0] = w[1];
            h[1] = units as u8;
            p.extend_from_slice(&h);
        }
        p.extend_from_slice(&[0; 8]);
        if r() % 5 == 0 {
            let cut = (r() % p.len() as u64) as usize;
            p.truncate(cut);
        }
        let mut frame = vec![0u8; 12];
        frame.extend_from_slice(if v6 { &[0x86, 0xdd] } else { &[0x08, 0x00] });
        frame.extend_from_slice(&p);
        for (e, raw, eth, want, v4ok, v6ok) in &filters {
            let applies = if v6 { *v6ok } else { *v4ok };
            let expect = if applies {
                chain_has(&p, v6, *want, hops).unwrap_or(false)
            } else {
                false
            };
            let got_raw = raw.run(&p, p.len() as u32) != 0;
            let got_eth = eth.run(&frame, frame.len() as u32) != 0;
            assert_eq!(got_raw, expect, "{e} raw on {p:02x?} chain {chain:?}");
            assert_eq!(got_eth, expect, "{e} ether on {frame:02x?} chain {chain:?}");
        }
    }
}

#[test]
fn errors_name_the_position() {
    let e = compile("tcp port 80 and host 300.1.2.3", LinkType::Ethernet).unwrap_err();
    assert_eq!(e.pos, 21, "{e}");
    let e = compile("ip[0:3] == 1", LinkType::Ethernet).unwrap_err();
    assert!(e.reason.contains("data size"), "{e}");
    let e = compile("tcp port 80 and (udp", LinkType::Ethernet).unwrap_err();
    assert_eq!(e.pos, 20, "{e}");
    assert!(compile("frobnicate", LinkType::Ethernet).is_err());
    assert!(compile("ip[0] / 0 == 1", LinkType::Ethernet).is_err());
}

/// Packet builders for the encapsulation tests.
mod enc {
    pub const INNER_SRC_MAC: [u8; 6] = [2, 0, 0, 0, 0, 0x42];

    /// An inner Ethernet frame (source MAC [`INNER_SRC_MAC`]).
    pub fn eth(et: u16, payload: &[u8]) -> Vec<u8> {
        eth_from(INNER_SRC_MAC, et, payload)
    }
    /// An outer one.
    pub fn outer(et: u16, payload: &[u8]) -> Vec<u8> {
        eth_from([2, 0, 0, 0, 0, 0x99], et, payload)
    }
    fn eth_from(src: [u8; 6], et: u16, payload: &[u8]) -> Vec<u8> {
        let mut f = vec![1, 0, 0, 0, 0, 1];
        f.extend_from_slice(&src);
        f.extend_from_slice(&et.to_be_bytes());
        f.extend_from_slice(payload);
        f
    }
    /// IPv4 with `words` 32-bit words of header (5 to 15) and a fragment offset.
    pub fn ipv4(proto: u8, words: u8, frag: u16, payload: &[u8]) -> Vec<u8> {
        let mut h = vec![0u8; words as usize * 4];
        h[0] = 0x40 | words;
        h[6..8].copy_from_slice(&frag.to_be_bytes());
        h[8] = 64;
        h[9] = proto;
        h[12..16].copy_from_slice(&[10, 0, 0, 1]);
        h[16..20].copy_from_slice(&[10, 0, 0, 2]);
        h.extend_from_slice(payload);
        h
    }
    pub fn ipv6(nh: u8, payload: &[u8]) -> Vec<u8> {
        let mut h = vec![0u8; 40];
        h[0] = 0x60;
        h[6] = nh;
        h[7] = 64;
        h.extend_from_slice(payload);
        h
    }
    pub fn ports(sport: u16, dport: u16, rest: usize, payload: &[u8]) -> Vec<u8> {
        let mut h = sport.to_be_bytes().to_vec();
        h.extend_from_slice(&dport.to_be_bytes());
        h.extend(std::iter::repeat_n(0, rest));
        h.extend_from_slice(payload);
        h
    }
    pub fn udp(sport: u16, dport: u16, payload: &[u8]) -> Vec<u8> {
        ports(sport, dport, 4, payload)
    }
    pub fn tcp(sport: u16, dport: u16) -> Vec<u8> {
        let mut t = ports(sport, dport, 16, &[]);
        t[12] = 0x50;
        t
    }
    pub fn vxlan(vni: u32, inner: &[u8]) -> Vec<u8> {
        let mut h = vec![0x08, 0, 0, 0];
        h.extend_from_slice(&(vni << 8).to_be_bytes());
        h.extend_from_slice(inner);
        h
    }
    /// Geneve with `opt_words` words of options and protocol type `proto`.
    pub fn geneve(opt_words: u8, proto: u16, vni: u32, inner: &[u8]) -> Vec<u8> {
        let mut h = vec![opt_words & 0x3f, 0];
        h.extend_from_slice(&proto.to_be_bytes());
        h.extend_from_slice(&(vni << 8).to_be_bytes());
        h.extend(std::iter::repeat_n(0xee, opt_words as usize * 4));
        h.extend_from_slice(inner);
        h
    }
}

/// `vxlan` and `geneve` against hand-built encapsulations: the outer tests, the VNI, and
/// the rest of the expression applied to the inner frame (nested, over IPv6, behind
/// Geneve options, and a Geneve payload that is not Ethernet). Each expression is run
/// optimised and not, by the interpreter and by the JIT.
#[test]
fn encapsulations_mean_what_they_say() {
    use enc::*;
    let inner = eth(0x800, &ipv4(6, 5, 0, &tcp(1234, 80)));
    let udp4 = |words: u8, frag: u16, dport: u16, payload: &[u8]| {
        outer(0x800, &ipv4(17, words, frag, &udp(5555, dport, payload)))
    };
    let a = udp4(6, 0, 4789, &vxlan(100, &inner));
    let b = outer(0x86dd, &ipv6(17, &udp(1, 4789, &vxlan(7, &inner))));
    let c = udp4(5, 0, 4789, &vxlan(1, &udp4(7, 0, 4789, &vxlan(2, &inner))));
    let d = udp4(5, 0, 6081, &geneve(2, 0x6558, 10, &inner));
    let e = udp4(
        5,
        0,
        6081,
        &geneve(1, 0x800, 3, &ipv4(6, 5, 0, &tcp(22, 99))),
    );
    let f = udp4(5, 0x0010, 4789, &vxlan(100, &inner));
    let g = udp4(5, 0, 4790, &vxlan(100, &inner));
    let h = a[..a.len() - 30].to_vec(); // cut inside the inner TCP header
    let mac = INNER_SRC_MAC.map(|x| format!("{x:02x}")).join(":");
    let cases: Vec<(&str, &[u8], bool)> = vec![
        ("vxlan", &a, true),
        ("vxlan 100", &a, true),
        ("vxlan 101", &a, false),
        ("vxlan and tcp port 80", &a, true),
        ("vxlan and tcp port 81", &a, false),
        ("vxlan and udp", &a, false),
        ("vxlan and ip and src host 10.0.0.1", &a, true),
        ("tcp port 80", &a, false),
        ("vxlan 7 and tcp dst port 80", &b, true),
        ("vxlan 8", &b, false),
        ("vxlan 1 and vxlan 2 and tcp", &c, true),
        ("vxlan 2", &c, false),
        ("vxlan and vxlan 1", &c, false),
        ("vxlan and (udp port 4789 and not tcp)", &c, true),
        ("geneve 10 and tcp port 80", &d, true),
        ("geneve 11", &d, false),
        ("vxlan", &d, false),
        ("geneve and tcp src port 22", &e, true),
        ("geneve and ip", &e, true),
        ("geneve and ip6", &e, false),
        ("vxlan", &f, false),
        ("vxlan", &g, false),
        ("vxlan", &h, true),
        ("vxlan and tcp port 80", &h, false),
    ];
    let mut cases: Vec<(String, &[u8], bool)> = cases
        .into_iter()
        .map(|(x, p, w)| (x.to_string(), p, w))
        .collect();
    cases.push((format!("vxlan and ether src {mac}"), &a, true));
    cases.push((format!("ether src {mac}"), &a, false));
    for (expr, pkt, want) in &cases {
        let wl = pkt.len() as u32 + 7; // a cut capture: the wire length is longer
        for optimize in [true, false] {
            let opts = netsieve_bpf::Options {
                optimize,
                ..netsieve_bpf::Options::new(LinkType::Ethernet)
            };
            let prog = netsieve_bpf::compile_with(expr, &opts).unwrap();
            let got = interp::run(&prog, pkt, wl) != 0;
            assert_eq!(
                got,
                *want,
                "`{expr}` (optimised: {optimize})\n{}",
                text::dump(prog.insns())
            );
            assert_eq!(
                Filter::new(&prog).run(pkt, wl),
                interp::run(&prog, pkt, wl),
                "`{expr}` JIT"
            );
        }
    }
    // What cannot be moved onto the inner frame is refused with its position.
    let e = compile("vxlan and ip protochain 6", LinkType::Ethernet).unwrap_err();
    assert!(e.to_string().contains("vxlan"), "{e}");
}
