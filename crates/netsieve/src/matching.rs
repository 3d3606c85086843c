//! `netsieve match`: a multi-pattern grep over files.
//!
//! Exit status as grep: 0 when something matched, 1 when nothing did, 2 on an error.

use std::fs::File;
use std::io::{self, BufWriter, Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{ArgGroup, ValueEnum};
use dfc::patfile::{self, Format};
use dfc::{Builder, Match, Matcher};

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum PatternsFormat {
    /// One literal per line, byte for byte.
    Lines,
    /// `HEX<TAB>NOCASE` (0 or 1), as in shared/data/patterns/*.tsv.
    Tsv,
    /// Snort content syntax, `abc|0D 0A|def`, optionally `<TAB>nocase`.
    Snort,
}

#[derive(clap::Args)]
#[command(group(ArgGroup::new("mode").args(["count", "json"])))]
pub struct Args {
    /// The pattern file; a pattern's id is its 0-based line number.
    #[arg(short = 'f', long = "patterns", value_name = "PATTERNS")]
    patterns: PathBuf,
    /// Format of the pattern file.
    #[arg(long, value_enum, default_value = "lines")]
    patterns_format: PatternsFormat,
    /// Match every pattern case-insensitively (ASCII letters).
    #[arg(short = 'i', long)]
    ignore_case: bool,
    /// Print `FILE<TAB>N`, the number of matches per file.
    #[arg(long)]
    count: bool,
    /// Print one JSON object per match: {"file","pattern","start","end"} (end exclusive).
    #[arg(long)]
    json: bool,
    /// Files to search (`-` for standard input).
    #[arg(required = true, value_name = "FILE")]
    files: Vec<PathBuf>,
}

/// Bytes read and searched at a time; matches are sorted per chunk, which orders them
/// globally because a match is reported by the chunk that holds its last byte.
const CHUNK: usize = 1 << 20;

pub fn run(args: Args) -> ExitCode {
    let matcher = match load(&args) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("netsieve match: {e}");
            return ExitCode::from(2);
        }
    };
    let stdout = io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let mut any = false;
    let mut failed = false;
    for path in &args.files {
        let name = path.display().to_string();
        match search_file(&matcher, &args, path, &name, &mut out) {
            Ok(n) => any |= n > 0,
            // The reader went away (`| head`): it has what it wanted, as with grep.
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => return ExitCode::SUCCESS,
            Err(e) => {
                let _ = out.flush();
                eprintln!("netsieve match: {name}: {e}");
                failed = true;
            }
        }
    }
    if let Err(e) = out.flush()
        && e.kind() != io::ErrorKind::BrokenPipe
    {
        eprintln!("netsieve match: {e}");
        return ExitCode::from(2);
    }
    if failed {
        ExitCode::from(2)
    } else if any {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

fn load(args: &Args) -> Result<Matcher, String> {
    let text =
        std::fs::read(&args.patterns).map_err(|e| format!("{}: {e}", args.patterns.display()))?;
    let format = match args.patterns_format {
        PatternsFormat::Lines => Format::Lines,
        PatternsFormat::Tsv => Format::Tsv,
        PatternsFormat::Snort => Format::Snort,
    };
    let patterns =
        patfile::parse(&text, format).map_err(|e| format!("{}: {e}", args.patterns.display()))?;
    let mut b = Builder::new();
    for p in &patterns {
        b.add(p.id, &p.bytes, p.nocase || args.ignore_case);
    }
    b.build()
        .map_err(|e| format!("{}: {e}", args.patterns.display()))
}

/// Searches one file, printing as it goes; returns the number of matches.
fn search_file(
    m: &Matcher,
    args: &Args,
    path: &PathBuf,
    name: &str,
    out: &mut impl Write,
) -> io::Result<u64> {
    let mut input: Box<dyn Read> = if path.as_os_str() == "-" {
        Box::new(io::stdin().lock())
    } else {
        Box::new(File::open(path)?)
    };
    let json_name = serde_json::to_string(name).expect("a string serialises");
    let mut stream = m.stream();
    let mut buf = vec![0u8; CHUNK];
    // The last bytes of the previous chunk, to print matched text across a boundary.
    let mut tail: Vec<u8> = Vec::new();
    let keep = m.max_pattern_len();
    let mut found: Vec<Match> = Vec::new();
    let mut total = 0u64;
    loop {
        let n = read_full(&mut input, &mut buf)?;
        if n == 0 {
            break;
        }
        let chunk = &buf[..n];
        let base = stream.offset();
        if args.count {
            stream.feed(chunk, |_| total += 1);
            continue;
        }
        found.clear();
        stream.feed(chunk, |x| found.push(x));
        total += found.len() as u64;
        found.sort_unstable_by_key(|x| (x.end, x.pattern, x.start));
        for x in &found {
            if args.json {
                writeln!(
                    out,
                    r#"{{"file":{json_name},"pattern":{},"start":{},"end":{}}}"#,
                    x.pattern, x.start, x.end
                )?;
            } else {
                let text = matched_text(&tail, base, chunk, x);
                writeln!(
                    out,
                    "{name}:{}:{}:{}:{}",
                    x.start,
                    x.end,
                    x.pattern,
                    escape(&text)
                )?;
            }
        }
        if !args.json {
            if chunk.len() >= keep {
                tail.clear();
            } else {
                tail.drain(..tail.len().saturating_sub(keep - chunk.len()));
            }
            tail.extend_from_slice(&chunk[chunk.len().saturating_sub(keep)..]);
        }
    }
    if args.count {
        writeln!(out, "{name}\t{total}")?;
    }
    Ok(total)
}

/// Fills `buf` as far as the input allows (a pipe may return short reads).
fn read_full(r: &mut dyn Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// The bytes of a match: from the kept tail of the previous chunk and this chunk.
fn matched_text(tail: &[u8], base: usize, chunk: &[u8], m: &Match) -> Vec<u8> {
    let tail_start = base - tail.len();
    (m.start..m.end)
        .map(|x| {
            if x >= base {
                chunk[x - base]
            } else {
                tail[x - tail_start]
            }
        })
        .collect()
}

/// Printable ASCII as is, everything else (and `\`) as `\xNN`.
fn escape(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len());
    for &b in bytes {
        if (0x20..0x7f).contains(&b) && b != b'\\' {
            s.push(b as char);
        } else {
            s.push_str(&format!("\\x{b:02x}"));
        }
    }
    s
}
