//! `netsieve filter`: tcpdump-style capture filtering.
//!
//! `netsieve filter -r in.pcap -w out.pcap 'tcp port 80'` writes the packets the
//! expression accepts, like `tcpdump -r in.pcap -w out.pcap 'tcp port 80'`; without
//! `-w` it prints a line per packet as tcpdump does ([`mod@line`]); `-d`, `-dd` and `-ddd`
//! print the compiled program; `--count` prints how many packets matched. Programs run
//! as native code (Cranelift) over batches of packets.

mod line;

use std::collections::HashMap;
use std::io::{self, BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use netsieve_bpf::{Filter, LinkType, Options, compile_with, text};
use netsieve_packet::capture::{Capture, Frame};
use netsieve_packet::decode::{Decoder, Packet};

use crate::interrupt::Interrupt;
use crate::pcapout::PcapOut;

#[derive(clap::Args)]
pub struct Args {
    /// Capture file to read (pcap or pcapng), a directory, or - for standard input;
    /// repeat for several.
    #[arg(short = 'r')]
    read: Vec<PathBuf>,
    /// Write the matching packets to this pcap file (- for standard output).
    #[arg(short = 'w')]
    write: Option<PathBuf>,
    /// Print the program as tcpdump -d does (-dd: as C, -ddd: as decimal numbers).
    #[arg(short = 'd', action = clap::ArgAction::Count)]
    dump: u8,
    /// Print only the number of matching packets.
    #[arg(long)]
    count: bool,
    /// Stop after this many matching packets (as tcpdump -c).
    #[arg(short = 'c', value_name = "N")]
    limit: Option<u64>,
    /// Do not resolve names (as tcpdump -n and -nn): netsieve never does, so this only
    /// keeps the habit working.
    #[arg(short = 'n', action = clap::ArgAction::Count)]
    numeric: u8,
    /// Print each IP header's fields too (as tcpdump -v).
    #[arg(short = 'v', action = clap::ArgAction::Count)]
    verbose: u8,
    /// Link type to compile for when no capture is read: ethernet, raw, linux-sll.
    #[arg(long, default_value = "ethernet")]
    linktype: String,
    /// Snap length returned for accepted packets (as tcpdump -s).
    #[arg(short = 's', long, default_value_t = 262_144)]
    snaplen: u32,
    /// Run the interpreter instead of native code.
    #[arg(long)]
    interpret: bool,
    /// Do not optimise the program (as tcpdump -O).
    #[arg(short = 'O', long = "no-optimize")]
    no_optimize: bool,
    /// The filter expression (the words are joined with spaces, as tcpdump does).
    expression: Vec<String>,
}

const BATCH: usize = 256;

/// Exit codes as tcpdump's: 0 when every input was read, 1 on any error (an input
/// damaged or unreadable, after writing what was read before it; a bad expression; an
/// output that cannot be written).
pub fn run(a: Args) -> ExitCode {
    match go(&a) {
        Ok(Done::Complete) => ExitCode::SUCCESS,
        Ok(Done::InputDamaged) => ExitCode::from(1),
        Ok(Done::Interrupted(code)) => code,
        Err(Stop::ReaderGone) => ExitCode::SUCCESS,
        Err(Stop::Error(e)) => {
            eprintln!("netsieve filter: {e}");
            ExitCode::from(1)
        }
    }
}

/// How a run that went to the end of its input ended.
enum Done {
    Complete,
    /// A capture was damaged or unreadable; every packet before the damage was handled.
    InputDamaged,
    /// Ctrl-C or SIGTERM stopped the run; what was read was handled. The exit code.
    Interrupted(ExitCode),
}

/// Why a run stopped early.
enum Stop {
    /// The reader of standard output went away (`-w - | head`): stop quietly.
    ReaderGone,
    Error(String),
}

impl From<String> for Stop {
    fn from(e: String) -> Stop {
        Stop::Error(e)
    }
}

impl From<io::Error> for Stop {
    fn from(e: io::Error) -> Stop {
        if e.kind() == io::ErrorKind::BrokenPipe {
            Stop::ReaderGone
        } else {
            Stop::Error(e.to_string())
        }
    }
}

fn options(link: LinkType, a: &Args) -> Options {
    let mut o = Options::new(link);
    o.snaplen = a.snaplen;
    o.optimize = !a.no_optimize;
    o
}

fn go(a: &Args) -> Result<Done, Stop> {
    let expr = a.expression.join(" ");
    if a.dump > 0 && a.read.is_empty() {
        let link = match a.linktype.as_str() {
            "ethernet" | "en10mb" | "1" => LinkType::Ethernet,
            "raw" | "101" => LinkType::Raw,
            "linux-sll" | "sll" | "113" => LinkType::LinuxSll,
            o => {
                return Err(Stop::Error(format!(
                    "unknown link type `{o}` (ethernet, raw, linux-sll)"
                )));
            }
        };
        let p = compile_with(&expr, &options(link, a)).map_err(|e| e.in_expr(&expr))?;
        crate::print_out(&dump(a.dump, &p));
        return Ok(Done::Complete);
    }
    if a.read.is_empty() {
        return Err(Stop::Error(
            "no capture to read: give -r FILE (live capture is not supported)".into(),
        ));
    }
    // A syntax error is reported before any capture is opened.
    let tries = [LinkType::Ethernet, LinkType::Raw, LinkType::LinuxSll]
        .map(|l| compile_with(&expr, &options(l, a)));
    if tries.iter().all(|t| t.is_err())
        && let Some(Err(e)) = tries.into_iter().next()
    {
        return Err(Stop::Error(e.in_expr(&expr)));
    }
    let mut cap = Capture::open(&a.read).map_err(|e| e.to_string())?;
    let stdout = io::stdout();
    let mut sink = Sink {
        a,
        expr,
        filters: HashMap::new(),
        writer: a.write.as_deref().map(|p| PcapOut::new(p, a.snaplen)),
        out: BufWriter::new(stdout.lock()),
        verdicts: vec![0; BATCH],
        seen: 0,
        matched: 0,
        dumped: false,
        decoder: Decoder::new(false),
        unsupported: Vec::new(),
        first_linktype: None,
    };
    // Frames are read into a batch of one link type; a frame of another type ends it.
    let mut frames: Vec<Frame> = vec![Frame::default(); BATCH + 1];
    let mut n = 0;
    let mut damaged = false;
    let interrupt = Interrupt::install();
    loop {
        if interrupt.requested() {
            // Stop between packets: what was read is filtered and written.
            break;
        }
        match cap.next(&mut frames[n]) {
            Ok(true) => {
                if n > 0 && frames[n].linktype != frames[0].linktype {
                    sink.batch(&frames[..n])?;
                    frames.swap(0, n);
                    n = 0;
                }
                n += 1;
                if n == BATCH {
                    sink.batch(&frames[..n])?;
                    n = 0;
                }
            }
            Ok(false) => break,
            // A damaged file ends there; the next one is read.
            Err(e) => {
                eprintln!("netsieve filter: {e}");
                damaged = true;
            }
        }
        if sink.dumped {
            return Ok(Done::Complete);
        }
        if sink.limit_reached() {
            break;
        }
    }
    if n > 0 && !sink.limit_reached() {
        sink.batch(&frames[..n])?;
    }
    if sink.dumped {
        return Ok(Done::Complete);
    }
    if let Some(w) = sink.writer.take() {
        // With no packet written, the file still holds a header, of the input's link type.
        w.finish(sink.first_linktype.or(cap.linktype()).unwrap_or(1))?;
    }
    if a.count {
        writeln!(sink.out, "{}", sink.matched)?;
    }
    sink.out.flush()?;
    eprintln!(
        "netsieve filter: {} of {} packets matched",
        sink.matched, sink.seen
    );
    // Packets of a link type no filter can be compiled for were not filtered: as a
    // damaged input, the run did not do all it was asked.
    Ok(if let Some(code) = interrupt.exit_code() {
        Done::Interrupted(code)
    } else if damaged || !sink.unsupported.is_empty() {
        Done::InputDamaged
    } else {
        Done::Complete
    })
}

struct Sink<'a> {
    a: &'a Args,
    expr: String,
    filters: HashMap<u32, Filter>,
    writer: Option<PcapOut>,
    out: BufWriter<io::StdoutLock<'static>>,
    verdicts: Vec<u32>,
    seen: u64,
    matched: u64,
    /// `-d` with a capture: the program was printed for its link type.
    dumped: bool,
    /// Decodes the packets printed as lines.
    decoder: Decoder,
    /// Link types no expression can be compiled for.
    unsupported: Vec<u32>,
    /// The link type of the first frame read.
    first_linktype: Option<u32>,
}

impl Sink<'_> {
    /// `-c N`: N packets matched.
    fn limit_reached(&self) -> bool {
        self.a.limit.is_some_and(|n| self.matched >= n)
    }

    /// Filters frames of one link type, then acts on the verdicts.
    fn batch(&mut self, frames: &[Frame]) -> Result<(), Stop> {
        let a = self.a;
        let lt = frames[0].linktype;
        self.first_linktype.get_or_insert(lt);
        if self.unsupported.contains(&lt) {
            self.seen += frames.len() as u64;
            return Ok(());
        }
        if !self.filters.contains_key(&lt) {
            let Some(link) = LinkType::from_linktype(lt) else {
                // As if the expression did not compile for those files: warn, skip them.
                eprintln!(
                    "netsieve filter: link type {lt} is not one netsieve filters; its packets are skipped"
                );
                self.unsupported.push(lt);
                return self.batch(frames);
            };
            let p =
                compile_with(&self.expr, &options(link, a)).map_err(|e| e.in_expr(&self.expr))?;
            if a.dump > 0 {
                crate::print_out(&dump(a.dump, &p));
                self.dumped = true;
                return Ok(());
            }
            let f = if a.interpret {
                Filter::interpreted(&p)
            } else {
                Filter::new(&p)
            };
            self.filters.insert(lt, f);
        }
        let batch: Vec<netsieve_bpf::Packet> = frames
            .iter()
            .map(|fr| netsieve_bpf::Packet::new(&fr.data, fr.orig_len))
            .collect();
        // The filter loop, then the action loop over its verdicts.
        self.filters[&lt].run_batch(&batch, &mut self.verdicts);
        for (fr, &v) in frames.iter().zip(&self.verdicts) {
            if self.limit_reached() {
                break;
            }
            self.seen += 1;
            if v == 0 {
                continue;
            }
            self.matched += 1;
            let keep = v as usize;
            if let Some(w) = self.writer.as_mut() {
                w.write(fr, keep)?;
            } else if !a.count {
                let mut p = Packet::default();
                self.decoder.decode(fr, self.seen, &mut p);
                writeln!(self.out, "{}", line::line(&p, a.verbose > 0))?;
            }
        }
        Ok(())
    }
}

fn dump(level: u8, p: &netsieve_bpf::Program) -> String {
    match level {
        1 => text::dump(p.insns()),
        2 => text::dump_c(p.insns()),
        _ => text::dump_decimal(p.insns()),
    }
}
