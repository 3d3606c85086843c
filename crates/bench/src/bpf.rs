//! The software-pipelining paper's experiment (its Tables 1 and 3) on this machine: the
//! 13 filters of Table 1 over real packets held in memory, time per packet for libpcap's
//! interpreter (`pcap_offline_filter`, with the `libpcap` feature), netsieve's
//! interpreter, netsieve's JIT one packet per call, and netsieve's JIT over batches; the
//! acceleration ratio of each against libpcap's interpreter.
//!
//! What is timed is the paper's Loop1 (its Table 2 times "Loop1" alone): the filter over
//! a batch of packets, writing one verdict per packet to an array. Every engine does the
//! same Loop1; the action loop that reads the verdicts (here, a count of the accepted
//! packets) runs untimed for every engine. The paper picks the best batch size per
//! filter; so do we for the streaming table, from a fixed list, and the table says
//! which. Every engine must match the same number of packets for every filter, or the
//! run fails.
//!
//! The cache-resident table also times two loops that are not filters, to bound what
//! any filter could reach: an empty engine, the cost of the clock reads around each
//! batch (subtracted from every engine's time), and a loop that reads one byte of each
//! packet and stores it, a floor under any filter that looks at the packet at all.

use crate::data::data_dir;
use netsieve_bpf::{Filter, LinkType, Packet, Program, compile};
use std::collections::HashMap;
use std::fmt::Write as _;
use std::hint::black_box;
use std::path::Path;
use std::time::Instant;

/// Ethernet frames from the nDPI captures, one buffer each, in capture order.
pub fn load_frames(dir: &Path) -> Result<Vec<Vec<u8>>, String> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    files.sort();
    let mut out = Vec::new();
    for f in files {
        let Ok(data) = std::fs::read(&f) else {
            continue;
        };
        let Ok((mut rest, p)) = pcap_file::pcap::PcapParser::new(&data) else {
            continue; // pcapng files are left out: one parser keeps the set simple
        };
        if u32::from(p.header().datalink) != 1 {
            continue;
        }
        while !rest.is_empty() {
            match p.next_packet(rest) {
                Ok((r, pk)) => {
                    out.push(pk.data.to_vec());
                    rest = r;
                }
                Err(_) => break,
            }
        }
    }
    Ok(out)
}

/// A (the most frequent destination /16 of IPv4 packets) and N (the most frequent
/// destination port of TCP and UDP over IPv4), as the paper chose them "from the traffic".
fn pick_net_and_port(frames: &[Vec<u8>]) -> (String, u16) {
    let mut nets: HashMap<[u8; 2], usize> = HashMap::new();
    let mut ports: HashMap<u16, usize> = HashMap::new();
    for f in frames {
        if f.len() < 38 || f[12..14] != [8, 0] {
            continue;
        }
        *nets.entry([f[30], f[31]]).or_default() += 1;
        let ihl = (f[14] & 0xf) as usize * 4;
        if matches!(f[23], 6 | 17) && f.len() >= 14 + ihl + 4 {
            let p = u16::from_be_bytes([f[14 + ihl + 2], f[14 + ihl + 3]]);
            *ports.entry(p).or_default() += 1;
        }
    }
    let net = nets
        .into_iter()
        .max_by_key(|&(k, n)| (n, k))
        .map(|(k, _)| k)
        .unwrap_or([10, 0]);
    let port = ports
        .into_iter()
        .max_by_key(|&(k, n)| (n, k))
        .map(|(k, _)| k)
        .unwrap_or(80);
    (format!("{}.{}.0.0/16", net[0], net[1]), port)
}

/// Filter `index` of [`table1`] written by hand in Rust, as the paper's Table 2 compiles
/// each filter to C with gcc: the loop over a batch with the filter inlined, LLVM's code.
/// A load past the end of the packet rejects it, as in BPF; `net` is the /16's address.
fn hand_written<'a>(index: usize, net: u32, port: u16) -> Engine<'a> {
    fn engine<'a, F: Fn(&[u8]) -> bool + 'a>(f: F) -> Engine<'a> {
        Box::new(move |c: &[Packet], o: &mut [u32]| {
            for (p, v) in c.iter().zip(o.iter_mut()) {
                *v = f(p.data()) as u32;
            }
        })
    }
    fn h(p: &[u8], at: usize) -> Option<u16> {
        Some(u16::from_be_bytes(p.get(at..at + 2)?.try_into().ok()?))
    }
    fn w(p: &[u8], at: usize) -> Option<u32> {
        Some(u32::from_be_bytes(p.get(at..at + 4)?.try_into().ok()?))
    }
    fn b(p: &[u8], at: usize) -> Option<u8> {
        p.get(at).copied()
    }
    // IPv4 / IPv6 with upper protocol `proto` (IPv6: next header, or behind a fragment
    // header), as `tcp` and `udp` compile.
    fn l4(p: &[u8], proto: u8, v4_only: bool) -> Option<bool> {
        match h(p, 12)? {
            0x800 => Some(b(p, 23)? == proto),
            0x86dd if !v4_only => {
                let nh = b(p, 20)?;
                Some(nh == proto || (nh == 44 && b(p, 54)? == proto))
            }
            _ => Some(false),
        }
    }
    // `[dst] net`: the /16 of the IPv4 source or destination, or of ARP/RARP's sender or
    // target address.
    fn net16(p: &[u8], net: u32, src: bool, v4_only: bool) -> Option<bool> {
        let is = |v: u32| v & 0xffff_0000 == net;
        let (s, d) = match h(p, 12)? {
            0x800 => (26, 30),
            0x806 | 0x8035 if !v4_only => (28, 38),
            _ => return Some(false),
        };
        Some((src && is(w(p, s)?)) || is(w(p, d)?))
    }
    // `[dst] port`: TCP, UDP or SCTP over unfragmented IPv4 or IPv6 without extension
    // headers.
    fn port_of(p: &[u8], port: u16, src: bool, v4_only: bool) -> Option<bool> {
        let l4 = |x: u8| matches!(x, 6 | 17 | 132);
        match h(p, 12)? {
            0x800 => {
                if !l4(b(p, 23)?) || h(p, 20)? & 0x1fff != 0 {
                    return Some(false);
                }
                let at = 14 + 4 * (b(p, 14)? & 0xf) as usize;
                Some((src && h(p, at)? == port) || h(p, at + 2)? == port)
            }
            0x86dd if !v4_only => {
                if !l4(b(p, 20)?) {
                    return Some(false);
                }
                Some((src && h(p, 54)? == port) || h(p, 56)? == port)
            }
            _ => Some(false),
        }
    }
    fn ok(x: Option<bool>) -> bool {
        x.unwrap_or(false)
    }
    match index {
        0 => engine(|p| h(p, 12) == Some(0x800)),
        1 => engine(|p| ok(l4(p, 6, true))),
        2 => engine(|p| ok(l4(p, 6, false))),
        3 => engine(|p| ok(l4(p, 17, true))),
        4 => engine(|p| ok(l4(p, 17, false))),
        5 => engine(move |p| ok(net16(p, net, false, true))),
        6 => engine(move |p| ok(net16(p, net, false, false))),
        7 => engine(move |p| ok(net16(p, net, true, true))),
        8 => engine(move |p| ok(net16(p, net, true, false))),
        9 => engine(move |p| ok(port_of(p, port, false, true))),
        10 => engine(move |p| ok(port_of(p, port, false, false))),
        11 => engine(move |p| ok(port_of(p, port, true, true))),
        _ => engine(move |p| ok(port_of(p, port, true, false))),
    }
}

/// The 13 filters of the paper's Table 1.
pub fn table1(net: &str, port: u16) -> Vec<String> {
    vec![
        "ip".into(),
        "ip and tcp".into(),
        "tcp".into(),
        "ip and udp".into(),
        "udp".into(),
        format!("ip and dst net {net}"),
        format!("dst net {net}"),
        format!("ip and net {net}"),
        format!("net {net}"),
        format!("ip and dst port {port}"),
        format!("dst port {port}"),
        format!("ip and port {port}"),
        format!("port {port}"),
    ]
}

pub struct Row {
    pub filter: String,
    /// The paper's method: each chunk of packets is first copied into a receive buffer
    /// (untimed), then filtered (timed). ns per packet for libpcap, our interpreter, our
    /// JIT per packet, our JIT batch, and the filter written by hand in Rust (compiled
    /// by rustc/LLVM into the loop, the paper's "compiled C" column).
    /// The clock reads are subtracted from each of them: `clock` is their cost per packet
    /// (an empty engine timed the same way).
    pub resident: [Option<f64>; 5],
    pub clock: f64,
    /// A loop that reads one byte of each packet and stores it as the verdict, timed like
    /// the engines: a floor under any filter that reads the packet.
    pub floor: f64,
    pub insns: usize,
    pub matched: usize,
    /// Nanoseconds per packet, median over the runs.
    pub libpcap: Option<f64>,
    pub interp: f64,
    pub jit: f64,
    pub batch: f64,
    pub batch_size: usize,
    /// Our JIT over batches running libpcap's optimised program.
    pub batch_libpcap_prog: Option<f64>,
    /// The one-byte floor (see `floor`), streaming.
    pub stream_floor: f64,
    /// JIT compile time, microseconds (median).
    pub jit_compile_us: f64,
}

/// A way to filter a chunk of packets: the paper's Loop1, one verdict per packet into
/// the array (nonzero accepts).
type Engine<'a> = Box<dyn Fn(&[Packet], &mut [u32]) + 'a>;

/// Packets accepted by the verdicts of a Loop1.
fn accepted(out: &[u32]) -> usize {
    out.iter().filter(|&&v| v != 0).count()
}

const BATCH_SIZES: [usize; 4] = [16, 64, 256, 1024];
/// Packets per receive-buffer fill in the cache-resident measurement.
const RX: usize = 256;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

/// Times the Loop1 `f` over all packets `runs` times, after a warm-up: nanoseconds per
/// packet, median. The verdicts it writes to `out` are counted after each run, untimed,
/// into `counts` under `name` (they must not change).
fn time(
    runs: usize,
    n: usize,
    out: &mut [u32],
    counts: &mut Vec<(&'static str, usize)>,
    name: &'static str,
    mut f: impl FnMut(&mut [u32]),
) -> f64 {
    f(out);
    let mut t = Vec::new();
    for _ in 0..runs {
        out.fill(0);
        let s = Instant::now();
        f(black_box(&mut *out));
        t.push(s.elapsed().as_nanos() as f64 / n as f64);
        counts.push((name, accepted(out)));
    }
    median(t)
}

#[cfg(feature = "libpcap")]
mod peer {
    pub struct Libpcap {
        prog: pcap::BpfProgram,
    }
    impl Libpcap {
        pub fn compile(expr: &str) -> Result<Libpcap, String> {
            let cap = pcap::Capture::dead(pcap::Linktype::ETHERNET).map_err(|e| e.to_string())?;
            let prog = cap.compile(expr, true).map_err(|e| e.to_string())?;
            Ok(Libpcap { prog })
        }
        pub fn matches(&self, pkt: &[u8]) -> bool {
            self.prog.filter(pkt)
        }
        /// libpcap's (optimised) program as netsieve instructions.
        pub fn insns(&self) -> Vec<netsieve_bpf::Insn> {
            let ins = self.prog.get_instructions();
            // SAFETY: `BpfInstruction` is `repr(transparent)` over libpcap's C `struct
            // bpf_insn` {u16 code; u8 jt; u8 jf; u32 k}: 8 bytes each, no padding, and the
            // slice lives as long as `self.prog`.
            let bytes =
                unsafe { std::slice::from_raw_parts(ins.as_ptr() as *const u8, ins.len() * 8) };
            bytes
                .chunks_exact(8)
                .map(|c| {
                    netsieve_bpf::Insn::new(
                        u16::from_ne_bytes([c[0], c[1]]),
                        c[2],
                        c[3],
                        u32::from_ne_bytes([c[4], c[5], c[6], c[7]]),
                    )
                })
                .collect()
        }
    }
}

pub fn run_table(
    data: Option<&Path>,
    runs: usize,
    limit: Option<usize>,
) -> Result<(Vec<Row>, usize, String), String> {
    let dir = data_dir(data)?;
    let mut frames = load_frames(&dir.join("pcaps/ndpi"))?;
    if let Some(l) = limit {
        frames.truncate(l);
    }
    if frames.is_empty() {
        return Err("no Ethernet packets found".into());
    }
    let n = frames.len();
    let (net, port) = pick_net_and_port(&frames);
    // All packets back to back in one buffer, as in a capture buffer or receive ring
    // (and as the paper copies them into its receive buffer).
    let mut ring = Vec::with_capacity(frames.iter().map(Vec::len).sum());
    let mut spans = Vec::with_capacity(n);
    for f in &frames {
        spans.push((ring.len(), f.len()));
        ring.extend_from_slice(f);
    }
    drop(frames);
    let pkts: Vec<Packet> = spans
        .iter()
        .map(|&(at, len)| Packet::new(&ring[at..at + len], len as u32))
        .collect();
    let mut rows = Vec::new();
    // Verdicts for the whole capture (streaming) and for one receive buffer (resident).
    let mut all = vec![0u32; n];
    let mut out = vec![0u32; RX];
    let prefix = {
        let mut it = net.split(['.', '/']).map(|x| x.parse::<u32>().unwrap_or(0));
        (it.next().unwrap_or(0) << 24) | (it.next().unwrap_or(0) << 16)
    };
    for (index, expr) in table1(&net, port).into_iter().enumerate() {
        let prog: Program =
            compile(&expr, LinkType::Ethernet).map_err(|e| format!("{expr}: {e}"))?;
        let compile_us = median(
            (0..9)
                .map(|_| {
                    let s = Instant::now();
                    black_box(Filter::new(&prog));
                    s.elapsed().as_nanos() as f64 / 1000.0
                })
                .collect(),
        );
        let interp = Filter::interpreted(&prog);
        let jit = Filter::new(&prog);
        if !jit.is_native() {
            return Err("the JIT is not available on this machine".into());
        }
        // Streaming: Loop1 over all packets, one verdict each; counted untimed.
        let mut counts = Vec::new();
        let one_by_one = |f: &Filter, all: &mut [u32]| {
            for (p, v) in pkts.iter().zip(all.iter_mut()) {
                *v = f.run(p.data(), p.wirelen());
            }
        };
        let t_interp = time(runs, n, &mut all, &mut counts, "interpreter", |all| {
            one_by_one(&interp, all)
        });
        let t_jit = time(runs, n, &mut all, &mut counts, "JIT", |all| {
            one_by_one(&jit, all)
        });
        let batched = |f: &Filter, size: usize, all: &mut [u32]| {
            for (chunk, v) in pkts.chunks(size).zip(all.chunks_mut(size)) {
                f.run_batch(chunk, v);
            }
        };
        let mut best = (f64::MAX, 0);
        for &size in &BATCH_SIZES {
            let t = time(runs, n, &mut all, &mut counts, "JIT batch", |all| {
                batched(&jit, size, all)
            });
            if t < best.0 {
                best = (t, size);
            }
        }
        let (t_batch, size) = best;
        let mut ignored = Vec::new();
        let t_floor = time(runs, n, &mut all, &mut ignored, "floor", |all| {
            for (p, v) in pkts.iter().zip(all.iter_mut()) {
                *v = p.data().get(12).copied().unwrap_or(0).into();
            }
        });
        #[allow(unused_mut, unused_assignments)]
        let (mut t_pcap, mut t_pcap_prog) = (None, None);
        #[cfg(feature = "libpcap")]
        {
            let lp = peer::Libpcap::compile(&expr)?;
            t_pcap = Some(time(runs, n, &mut all, &mut counts, "libpcap", |all| {
                for (p, v) in pkts.iter().zip(all.iter_mut()) {
                    *v = lp.matches(p.data()) as u32;
                }
            }));
            let theirs = Program::new(lp.insns())
                .map_err(|e| format!("libpcap's program for {expr}: {e}"))?;
            let f = Filter::new(&theirs);
            let mut best = f64::MAX;
            for &size in &BATCH_SIZES {
                let t = time(
                    runs,
                    n,
                    &mut all,
                    &mut counts,
                    "JIT batch on libpcap's program",
                    |all| batched(&f, size, all),
                );
                best = best.min(t);
            }
            t_pcap_prog = Some(best);
        }
        // The paper's method: copy RX packets into a receive buffer, then time the filter
        // loop over them; the packets are in cache, as right after a NIC's DMA.
        let mut rx: Vec<u8> = Vec::new();
        let mut resident = [None; 5];
        let (mut clock, mut floor) = (0.0, 0.0);
        #[cfg(feature = "libpcap")]
        let lp0 = peer::Libpcap::compile(&expr)?;
        // Slots 0 to 4 are the engines of `Row::resident`; EMPTY and FLOOR bound them.
        const EMPTY: usize = 5;
        const FLOOR: usize = 6;
        fn per_packet(f: &Filter) -> Engine<'_> {
            Box::new(move |c: &[Packet], o: &mut [u32]| {
                for (p, v) in c.iter().zip(o.iter_mut()) {
                    *v = f.run(p.data(), p.wirelen());
                }
            })
        }
        #[allow(unused_mut)]
        let mut engines: Vec<(usize, Engine<'_>)> = vec![
            (
                EMPTY,
                Box::new(|c: &[Packet], _: &mut [u32]| {
                    black_box(c);
                }),
            ),
            (
                FLOOR,
                Box::new(|c: &[Packet], o: &mut [u32]| {
                    for (p, v) in c.iter().zip(o.iter_mut()) {
                        *v = p.data().get(12).copied().unwrap_or(0).into();
                    }
                }),
            ),
            (1, per_packet(&interp)),
            (2, per_packet(&jit)),
            (
                3,
                Box::new(|c: &[Packet], o: &mut [u32]| jit.run_batch(c, o)),
            ),
        ];
        engines.push((4, hand_written(index, prefix, port)));
        #[cfg(feature = "libpcap")]
        engines.push((
            0,
            Box::new(|c: &[Packet], o: &mut [u32]| {
                for (p, v) in c.iter().zip(o.iter_mut()) {
                    *v = lp0.matches(p.data()) as u32;
                }
            }),
        ));
        for (slot, engine) in &engines {
            let mut per_run = Vec::new();
            for _ in 0..runs {
                let (mut total, mut m) = (0u128, 0);
                for chunk in spans.chunks(RX) {
                    rx.clear();
                    let mut views = Vec::with_capacity(chunk.len());
                    for &(at, len) in chunk {
                        views.push((rx.len(), len));
                        rx.extend_from_slice(&ring[at..at + len]);
                    }
                    let batch: Vec<Packet> = views
                        .iter()
                        .map(|&(at, len)| Packet::new(&rx[at..at + len], len as u32))
                        .collect();
                    let verdicts = &mut out[..batch.len()];
                    verdicts.fill(0);
                    let t = Instant::now();
                    engine(black_box(&batch), black_box(&mut *verdicts));
                    total += t.elapsed().as_nanos();
                    m += accepted(verdicts);
                }
                if *slot < EMPTY {
                    counts.push(("resident", m));
                }
                per_run.push(total as f64 / n as f64);
            }
            let t = median(per_run);
            match *slot {
                EMPTY => clock = t,
                // The clock's own cost is measured above, before any engine.
                FLOOR => floor = t - clock,
                s => resident[s] = Some(t - clock),
            }
        }
        drop(engines);
        let m_interp = counts[0].1;
        if counts.iter().any(|c| c.1 != m_interp) {
            return Err(format!(
                "{expr}: engines disagree on the matches: {counts:?}"
            ));
        }
        rows.push(Row {
            filter: expr,
            resident,
            clock,
            floor,
            insns: prog.len(),
            matched: m_interp,
            libpcap: t_pcap,
            interp: t_interp,
            jit: t_jit,
            batch: t_batch,
            batch_size: size,
            batch_libpcap_prog: t_pcap_prog,
            stream_floor: t_floor,
            jit_compile_us: compile_us,
        });
    }
    let note = format!("{n} Ethernet frames from pcaps/ndpi; A = {net}, N = {port}");
    Ok((rows, n, note))
}

/// The table as Markdown.
pub fn markdown(rows: &[Row], n: usize, note: &str) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{note}; streaming (all frames back to back in one buffer, Loop1 over all of them); time per packet in ns (median); ratio = libpcap interpreter / engine; \"one-byte floor\" as in the resident table below.\n"
    );
    let _ = writeln!(
        s,
        "| # | filter | insns | matched | libpcap interp | our interp | our JIT | JIT batch (size) | JIT batch, libpcap's program | one-byte floor | A interp | A JIT | A batch | A floor | JIT compile |"
    );
    let _ = writeln!(
        s,
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
    );
    let ratio =
        |base: Option<f64>, t: f64| base.map_or("-".to_string(), |b| format!("{:.1}x", b / t));
    let opt = |t: Option<f64>| t.map_or("-".to_string(), |t| format!("{t:.2}"));
    let mut sums = [0.0f64; 4];
    for (i, r) in rows.iter().enumerate() {
        let _ = writeln!(
            s,
            "| {} | `{}` | {} | {:.1}% | {} | {:.2} | {:.2} | {:.2} ({}) | {} | {:.2} | {} | {} | {} | {} | {:.0} µs |",
            i + 1,
            r.filter,
            r.insns,
            100.0 * r.matched as f64 / n as f64,
            opt(r.libpcap),
            r.interp,
            r.jit,
            r.batch,
            r.batch_size,
            opt(r.batch_libpcap_prog),
            r.stream_floor,
            ratio(r.libpcap, r.interp),
            ratio(r.libpcap, r.jit),
            ratio(r.libpcap, r.batch),
            ratio(r.libpcap, r.stream_floor),
            r.jit_compile_us
        );
        if let Some(b) = r.libpcap {
            sums[0] += b / r.interp;
            sums[1] += b / r.jit;
            sums[2] += b / r.batch;
            sums[3] += b / r.stream_floor;
        }
    }
    if rows.iter().all(|r| r.libpcap.is_some()) {
        let k = rows.len() as f64;
        let _ = k;
        let _ = writeln!(
            s,
            "| | **average** | | | | | | | | | **{:.1}x** | **{:.1}x** | **{:.1}x** | **{:.1}x** | |",
            sums[0] / k,
            sums[1] / k,
            sums[2] / k,
            sums[3] / k
        );
    }
    s
}

/// The cache-resident table (the paper's method) as Markdown.
pub fn markdown_resident(rows: &[Row]) -> String {
    let mut s = String::new();
    let clock = median(rows.iter().map(|r| r.clock).collect());
    let _ = writeln!(
        s,
        "Cache-resident (the paper's method: {RX} packets copied into a receive buffer, untimed, then Loop1 timed: the filter writes a verdict per packet); ns per packet, median, less the clock reads around each buffer ({clock:.3} ns per packet, an empty engine timed the same way). \"one-byte floor\" reads one byte of each packet and stores it, and nothing else: no filter that reads the packet can be faster, so \"A floor\" bounds every engine's ratio.\n"
    );
    let _ = writeln!(
        s,
        "| # | filter | libpcap interp | our interp | our JIT | our JIT batch | hand-written Rust | one-byte floor | A interp | A JIT | A batch | A hand-written | A floor |"
    );
    let _ = writeln!(s, "|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    let f = |t: Option<f64>| t.map_or("-".to_string(), |t| format!("{t:.2}"));
    let mut sums = [0.0f64; 5];
    for (i, r) in rows.iter().enumerate() {
        let [lp, it, jit, b, hw] = r.resident;
        let ratio = |t: Option<f64>| match (lp, t) {
            (Some(a), Some(b)) => format!("{:.1}x", a / b),
            _ => "-".into(),
        };
        if let (Some(a), Some(x), Some(y), Some(z), Some(v)) = (lp, it, jit, b, hw) {
            for (k, t) in [x, y, z, v, r.floor].into_iter().enumerate() {
                sums[k] += a / t;
            }
        }
        let _ = writeln!(
            s,
            "| {} | `{}` | {} | {} | {} | {} | {} | {:.2} | {} | {} | {} | {} | {} |",
            i + 1,
            r.filter,
            f(lp),
            f(it),
            f(jit),
            f(b),
            f(hw),
            r.floor,
            ratio(it),
            ratio(jit),
            ratio(b),
            ratio(hw),
            ratio(Some(r.floor))
        );
    }
    if rows.iter().all(|r| r.resident[0].is_some()) {
        let k = rows.len() as f64;
        let _ = writeln!(
            s,
            "| | **average** | | | | | | | **{:.1}x** | **{:.1}x** | **{:.1}x** | **{:.1}x** | **{:.1}x** |",
            sums[0] / k,
            sums[1] / k,
            sums[2] / k,
            sums[3] / k,
            sums[4] / k
        );
    }
    s
}

/// The paper's Table 2 (Itanium 2 at 900 MHz, machine cycles per packet), per Table 1
/// filter: libpcap's interpreter (T_ip) and its best code, software-pipelined (T_hyb).
const PAPER_CYCLES: [(f64, f64); 13] = [
    (80.6, 4.3),
    (126.7, 4.5),
    (143.6, 5.5),
    (126.5, 4.5),
    (143.6, 5.5),
    (132.5, 6.9),
    (132.7, 10.7),
    (181.8, 9.1),
    (181.6, 14.4),
    (266.2, 15.1),
    (283.2, 16.9),
    (309.5, 20.5),
    (326.5, 22.2),
];

/// The core's clock in GHz while it runs: a chain of dependent 64-bit multiplications,
/// three cycles each on x86-64 cores since Intel's Core 2 and AMD's Zen. (A chain of
/// additions of an immediate is not a clock: Intel's Golden Cove cores fold them at
/// rename, several per cycle.) Median of 5. `None` on other architectures.
pub fn clock_ghz() -> Option<f64> {
    #[cfg(target_arch = "x86_64")]
    {
        let mut v = Vec::new();
        for _ in 0..5 {
            let n: u64 = 200_000_000;
            let t = Instant::now();
            // SAFETY: register arithmetic only (no memory, no stack); both registers are
            // declared operands, and the flags it changes are not preserved by contract.
            unsafe {
                std::arch::asm!(
                    "2:",
                    "imul {x}, {x}",
                    "imul {x}, {x}",
                    "imul {x}, {x}",
                    "imul {x}, {x}",
                    "sub {n}, 4",
                    "jnz 2b",
                    x = inout(reg) 3u64 => _,
                    n = inout(reg) n => _,
                    options(nomem, nostack),
                );
            }
            v.push(3.0 * n as f64 / t.elapsed().as_nanos() as f64);
        }
        Some(median(v))
    }
    #[cfg(not(target_arch = "x86_64"))]
    None
}

/// The cache-resident times in core cycles beside the paper's Table 2: where the ratio
/// to libpcap comes from on each machine.
pub fn markdown_cycles(rows: &[Row], ghz: f64) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "Cycles per packet, cache-resident (clock {ghz:.2} GHz, measured by a chain of dependent multiplications), beside the paper's Table 2 (Itanium 2, 900 MHz):\n"
    );
    let _ = writeln!(
        s,
        "| # | filter | libpcap interp | paper: interpreter (T_ip) | our JIT batch | paper: best (T_hyb) | hand-written Rust |"
    );
    let _ = writeln!(s, "|---|---|---|---|---|---|---|");
    let c = |t: Option<f64>| t.map_or("-".to_string(), |t| format!("{:.1}", t * ghz));
    let mut sums = [0.0f64; 5];
    for (i, (r, &(ip, hyb))) in rows.iter().zip(&PAPER_CYCLES).enumerate() {
        let [lp, _, _, b, hw] = r.resident;
        for (k, v) in [
            lp.map(|t| t * ghz),
            Some(ip),
            b.map(|t| t * ghz),
            Some(hyb),
            hw.map(|t| t * ghz),
        ]
        .into_iter()
        .enumerate()
        {
            sums[k] += v.unwrap_or(f64::NAN);
        }
        let _ = writeln!(
            s,
            "| {} | `{}` | {} | {ip:.1} | {} | {hyb:.1} | {} |",
            i + 1,
            r.filter,
            c(lp),
            c(b),
            c(hw)
        );
    }
    let k = rows.len().min(PAPER_CYCLES.len()) as f64;
    let avg = |v: f64| {
        if v.is_nan() {
            "-".to_string()
        } else {
            format!("**{:.1}**", v / k)
        }
    };
    let _ = writeln!(
        s,
        "| | **average** | {} | {} | {} | {} | {} |",
        avg(sums[0]),
        avg(sums[1]),
        avg(sums[2]),
        avg(sums[3]),
        avg(sums[4])
    );
    s
}
