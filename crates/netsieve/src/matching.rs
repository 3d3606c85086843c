//! `netsieve match`: `grep -F -f PATTERNS` with DFC underneath.
//!
//! By default it selects lines as grep does: a line is printed when some pattern occurs
//! in it (`-v`: when none does), prefixed by the file name when several are searched,
//! and by its number (`-n`) and byte offset (`-b`). `-o` prints the matches themselves
//! (leftmost-longest, not overlapping, as grep), `-c` counts selected lines, `-l` names
//! the files with one, `-q` only sets the exit status, `-w` keeps whole-word matches,
//! `-r` searches directories. Beyond grep: `--all` prints every occurrence of every
//! pattern, overlapping ones included (`FILE:START:END:ID:TEXT`), `--json` the same as
//! objects, and `--count-matches` their number per file.
//!
//! Exit status as grep: 0 when something was selected, 1 when nothing was, 2 on an error
//! (other files are still searched).

use std::fs::File;
use std::io::{self, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{ArgGroup, ValueEnum};
use dfc::patfile::{self, Format};
use dfc::{Builder, Match, Matcher};

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum PatternsFormat {
    /// One literal per line, byte for byte.
    Lines,
    /// `HEX<TAB>NOCASE` (0 or 1), as in shared/data/patterns/*.tsv.
    Tsv,
    /// Snort content syntax, `abc|0D 0A|def`, optionally `<TAB>nocase`.
    Snort,
}

#[derive(clap::Args)]
#[command(group(ArgGroup::new("every").args(["all", "json", "count_matches"])))]
pub struct Args {
    /// The pattern file, as grep -f; a pattern's id is its 0-based line number.
    #[arg(short = 'f', long = "patterns", value_name = "PATTERNS")]
    patterns: PathBuf,
    /// Format of the pattern file (default: lines).
    #[arg(long, value_enum)]
    patterns_format: Option<PatternsFormat>,
    /// Match every pattern case-insensitively (ASCII letters).
    #[arg(short = 'i', long)]
    ignore_case: bool,
    /// Select the lines with no match.
    #[arg(short = 'v', long)]
    invert_match: bool,
    /// Only whole-word matches: no letter, digit or underscore on either side.
    #[arg(short = 'w', long)]
    word_regexp: bool,
    /// Prefix each line with its line number.
    #[arg(short = 'n', long)]
    line_number: bool,
    /// Prefix each line (with -o: each match) with its byte offset.
    #[arg(short = 'b', long)]
    byte_offset: bool,
    /// Print the number of selected lines per file.
    #[arg(short = 'c', long)]
    count: bool,
    /// Print only the names of files with a selected line.
    #[arg(short = 'l', long)]
    files_with_matches: bool,
    /// Print nothing; the exit status says whether a line was selected.
    #[arg(short = 'q', long)]
    quiet: bool,
    /// Print each match (leftmost-longest, not overlapping) on its own line.
    #[arg(short = 'o', long)]
    only_matching: bool,
    /// Search directories, and the files under them.
    #[arg(short = 'r', long)]
    recursive: bool,
    /// Every occurrence of every pattern, overlapping ones included:
    /// `FILE:START:END:ID:TEXT`, ordered by end then pattern id.
    #[arg(long)]
    all: bool,
    /// Every occurrence as one JSON object: {"file","pattern","start","end"} (end
    /// exclusive).
    #[arg(long)]
    json: bool,
    /// Print `FILE<TAB>N`, the number of occurrences (overlapping ones included).
    #[arg(long)]
    count_matches: bool,
    /// Files to search (`-` or none: standard input; with -r, none is `.`).
    #[arg(value_name = "FILE")]
    files: Vec<PathBuf>,
}

/// What is printed: grep's forms, then netsieve's own over every occurrence.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Output {
    Lines,
    OnlyMatching,
    Count,
    FilesWithMatches,
    Quiet,
    All,
    Json,
    CountMatches,
}

/// The validated command line.
struct Config {
    output: Output,
    invert: bool,
    word: bool,
    line_number: bool,
    byte_offset: bool,
    /// File names prefix what is printed (several inputs, or -r).
    with_name: bool,
}

impl Config {
    fn of(a: &Args) -> Config {
        // grep's precedence: -q over -l over -c over -o.
        let output = if a.quiet {
            Output::Quiet
        } else if a.files_with_matches {
            Output::FilesWithMatches
        } else if a.count {
            Output::Count
        } else if a.only_matching {
            Output::OnlyMatching
        } else if a.all {
            Output::All
        } else if a.json {
            Output::Json
        } else if a.count_matches {
            Output::CountMatches
        } else {
            Output::Lines
        };
        Config {
            output,
            invert: a.invert_match,
            word: a.word_regexp,
            line_number: a.line_number,
            byte_offset: a.byte_offset,
            with_name: a.files.len() > 1 || a.recursive,
        }
    }

    /// Whether lines are selected (grep's forms) rather than occurrences listed.
    fn by_line(&self) -> bool {
        !matches!(
            self.output,
            Output::All | Output::Json | Output::CountMatches
        )
    }
}

/// Bytes read and searched at a time.
const CHUNK: usize = 1 << 20;

pub fn run(args: Args) -> ExitCode {
    let matcher = match load(&args) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("netsieve match: {e}");
            return ExitCode::from(2);
        }
    };
    let mut failed = false;
    let inputs = inputs(&args, &mut failed);
    let cfg = Config::of(&args);
    let stdout = io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let mut any = false;
    for path in &inputs {
        let name = if path.as_os_str() == "-" {
            "(standard input)".to_string()
        } else {
            path.display().to_string()
        };
        match search(&matcher, &cfg, path, &name, &mut out) {
            Ok(found) => any |= found,
            // The reader went away (`| head`): it has what it wanted, as with grep.
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => return ExitCode::SUCCESS,
            Err(e) => {
                let _ = out.flush();
                eprintln!("netsieve match: {name}: {e}");
                failed = true;
            }
        }
        if any && cfg.output == Output::Quiet {
            return ExitCode::SUCCESS;
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

/// The files to search: those named (standard input when none), with -r the files
/// under named directories too, in name order. A directory without -r is an error, as
/// with grep.
fn inputs(a: &Args, failed: &mut bool) -> Vec<PathBuf> {
    let named: Vec<PathBuf> = if a.files.is_empty() {
        vec![PathBuf::from(if a.recursive { "." } else { "-" })]
    } else {
        a.files.clone()
    };
    let mut out = Vec::new();
    for p in named {
        if p.is_dir() {
            if a.recursive {
                walk(&p, &mut out, failed);
            } else {
                eprintln!("netsieve match: {}: Is a directory", p.display());
                *failed = true;
            }
        } else {
            out.push(p);
        }
    }
    out
}

/// The files under `dir`, in name order; symbolic links inside are not followed.
fn walk(dir: &Path, out: &mut Vec<PathBuf>, failed: &mut bool) {
    let mut entries: Vec<_> = match std::fs::read_dir(dir) {
        Ok(rd) => rd.filter_map(Result::ok).collect(),
        Err(e) => {
            eprintln!("netsieve match: {}: {e}", dir.display());
            *failed = true;
            return;
        }
    };
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        match e.file_type() {
            Ok(t) if t.is_dir() => walk(&e.path(), out, failed),
            Ok(t) if t.is_file() => out.push(e.path()),
            _ => {}
        }
    }
}

fn load(args: &Args) -> Result<Matcher, String> {
    let name = args.patterns.display();
    let text = std::fs::read(&args.patterns).map_err(|e| format!("{name}: {e}"))?;
    let format = match args.patterns_format {
        None => {
            if let Some(why) = looks_like_snort(&text) {
                eprintln!(
                    "netsieve match: warning: {name} looks like Snort content syntax ({why}) but is read as literal lines; give --patterns-format snort to read it so"
                );
            }
            Format::Lines
        }
        Some(PatternsFormat::Lines) => Format::Lines,
        Some(PatternsFormat::Tsv) => Format::Tsv,
        Some(PatternsFormat::Snort) => Format::Snort,
    };
    let patterns = patfile::parse(&text, format).map_err(|e| format!("{name}: {e}"))?;
    let mut b = Builder::new();
    for p in &patterns {
        b.add(p.id, &p.bytes, p.nocase || args.ignore_case);
    }
    b.build().map_err(|e| format!("{name}: {e}"))
}

/// Why a pattern file read as lines may have been meant as Snort content syntax: a
/// `|0D 0A|` hex run, or `#` comment lines.
fn looks_like_snort(text: &[u8]) -> Option<&'static str> {
    let hex_run = |l: &[u8]| {
        l.split(|&b| b == b'|').skip(1).step_by(2).any(|run| {
            let run: Vec<u8> = run.iter().copied().filter(|b| *b != b' ').collect();
            !run.is_empty() && run.len().is_multiple_of(2) && run.iter().all(u8::is_ascii_hexdigit)
        }) && l.iter().filter(|&&b| b == b'|').count() >= 2
    };
    let lines = || text.split(|&b| b == b'\n');
    if lines().any(hex_run) {
        Some("`|0D 0A|` hex bytes")
    } else if lines().any(|l| l.starts_with(b"#")) {
        Some("`#` comment lines")
    } else {
        None
    }
}

/// Searches one input, printing as it goes; true when it selected something.
fn search(
    m: &Matcher,
    cfg: &Config,
    path: &Path,
    name: &str,
    out: &mut impl Write,
) -> io::Result<bool> {
    let mut input: Box<dyn Read> = if path.as_os_str() == "-" {
        Box::new(io::stdin().lock())
    } else {
        Box::new(File::open(path)?)
    };
    if cfg.by_line() {
        LineSearch::new(m, cfg, name).run(&mut input, out)
    } else {
        occurrences(m, cfg, &mut input, name, out)
    }
}

/// grep's line selection over one input, a chunk of whole lines at a time.
struct LineSearch<'a> {
    m: &'a Matcher,
    cfg: &'a Config,
    name: &'a str,
    /// The number of the next line, and the byte offset where it starts.
    line_no: u64,
    offset: u64,
    /// Lines selected so far.
    selected: u64,
    /// Matches of the chunk being searched: (start, end) within it.
    found: Vec<(usize, usize)>,
}

impl<'a> LineSearch<'a> {
    fn new(m: &'a Matcher, cfg: &'a Config, name: &'a str) -> LineSearch<'a> {
        LineSearch {
            m,
            cfg,
            name,
            line_no: 1,
            offset: 0,
            selected: 0,
            found: Vec::new(),
        }
    }

    fn run(mut self, input: &mut dyn Read, out: &mut impl Write) -> io::Result<bool> {
        let mut buf: Vec<u8> = Vec::with_capacity(CHUNK);
        loop {
            // Read behind the part of a line left over from the last chunk.
            let kept = buf.len();
            buf.resize(kept + CHUNK, 0);
            let n = read_full(input, &mut buf[kept..])?;
            buf.truncate(kept + n);
            let end = if n == 0 {
                buf.len()
            } else {
                match memchr::memrchr(b'\n', &buf) {
                    Some(i) => i + 1,
                    None => continue,
                }
            };
            let stop = self.lines(&buf[..end], out)?;
            buf.drain(..end);
            if n == 0 || stop {
                break;
            }
        }
        let o = self.cfg;
        match o.output {
            Output::Count if o.with_name => writeln!(out, "{}:{}", self.name, self.selected)?,
            Output::Count => writeln!(out, "{}", self.selected)?,
            Output::FilesWithMatches if self.selected > 0 => writeln!(out, "{}", self.name)?,
            _ => {}
        }
        Ok(self.selected > 0)
    }

    /// Selects among whole lines `text` (the last may lack its newline at the end of
    /// the input); true when nothing more needs reading (-l, -q).
    fn lines(&mut self, text: &[u8], out: &mut impl Write) -> io::Result<bool> {
        self.find(text);
        let mut next = 0;
        let mut at = 0;
        while at < text.len() {
            let end = memchr::memchr(b'\n', &text[at..]).map_or(text.len(), |i| at + i);
            // The matches that start on this line (none spans lines).
            let first = next;
            while next < self.found.len() && self.found[next].0 < end {
                next += 1;
            }
            let hits = &self.found[first..next];
            if hits.is_empty() == self.cfg.invert {
                self.selected += 1;
                if matches!(self.cfg.output, Output::FilesWithMatches | Output::Quiet) {
                    return Ok(true);
                }
                self.print(text, at, end, hits, out)?;
            }
            self.offset += (end + 1 - at) as u64;
            self.line_no += 1;
            at = end + 1;
        }
        Ok(false)
    }

    /// The matches in `text` that grep would see: not across a line end, whole words
    /// with -w; sorted by start, longest first.
    fn find(&mut self, text: &[u8]) {
        self.found.clear();
        let word = self.cfg.word;
        let found = &mut self.found;
        self.m.for_each_match(text, |x: Match| {
            let inside = &text[x.start..x.end];
            let whole = !word
                || (!x.start.checked_sub(1).is_some_and(|i| is_word(text[i]))
                    && !text.get(x.end).is_some_and(|&b| is_word(b)));
            if whole && !inside.contains(&b'\n') {
                found.push((x.start, x.end));
            }
        });
        found.sort_unstable_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
        found.dedup();
    }

    /// Prints selected line `text[start..end]`, or with -o its matches `hits`.
    fn print(
        &self,
        text: &[u8],
        start: usize,
        end: usize,
        hits: &[(usize, usize)],
        out: &mut impl Write,
    ) -> io::Result<()> {
        let line_offset = self.offset;
        match self.cfg.output {
            Output::Lines => {
                self.prefix(out, line_offset)?;
                out.write_all(&text[start..end])?;
                out.write_all(b"\n")
            }
            Output::OnlyMatching if !self.cfg.invert => {
                // Leftmost-longest, then on from its end.
                let mut from = start;
                for &(s, e) in hits {
                    if s < from {
                        continue;
                    }
                    self.prefix(out, line_offset + (s - start) as u64)?;
                    out.write_all(&text[s..e])?;
                    out.write_all(b"\n")?;
                    from = e.max(s + 1);
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// `FILE:`, `LINE:` and `OFFSET:` as asked.
    fn prefix(&self, out: &mut impl Write, offset: u64) -> io::Result<()> {
        if self.cfg.with_name {
            write!(out, "{}:", self.name)?;
        }
        if self.cfg.line_number {
            write!(out, "{}:", self.line_no)?;
        }
        if self.cfg.byte_offset {
            write!(out, "{offset}:")?;
        }
        Ok(())
    }
}

/// A letter, digit or underscore: what -w does not allow beside a match.
fn is_word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// Every occurrence (`--all`, `--json`, `--count-matches`), streamed: matches across
/// chunk boundaries are found once.
fn occurrences(
    m: &Matcher,
    cfg: &Config,
    input: &mut dyn Read,
    name: &str,
    out: &mut impl Write,
) -> io::Result<bool> {
    let json_name = serde_json::to_string(name).expect("a string serialises");
    let mut stream = m.stream();
    let mut buf = vec![0u8; CHUNK];
    // The last bytes of the previous chunk, to print matched text across a boundary.
    let mut tail: Vec<u8> = Vec::new();
    let keep = m.max_pattern_len();
    let mut found: Vec<Match> = Vec::new();
    let mut total = 0u64;
    loop {
        let n = read_full(input, &mut buf)?;
        if n == 0 {
            break;
        }
        let chunk = &buf[..n];
        let base = stream.offset();
        if cfg.output == Output::CountMatches {
            stream.feed(chunk, |_| total += 1);
            continue;
        }
        found.clear();
        stream.feed(chunk, |x| found.push(x));
        total += found.len() as u64;
        // Matches are sorted per chunk, which orders them globally: a match is reported
        // by the chunk that holds its last byte.
        found.sort_unstable_by_key(|x| (x.end, x.pattern, x.start));
        for x in &found {
            if cfg.output == Output::Json {
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
        if chunk.len() >= keep {
            tail.clear();
        } else {
            tail.drain(..tail.len().saturating_sub(keep - chunk.len()));
        }
        tail.extend_from_slice(&chunk[chunk.len().saturating_sub(keep)..]);
    }
    if cfg.output == Output::CountMatches {
        writeln!(out, "{name}\t{total}")?;
    }
    Ok(total > 0)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snort_syntax_is_recognised() {
        assert_eq!(
            looks_like_snort(b"GET|20|/\nabc\n"),
            Some("`|0D 0A|` hex bytes")
        );
        assert_eq!(looks_like_snort(b"|0D 0A|\n"), Some("`|0D 0A|` hex bytes"));
        assert_eq!(
            looks_like_snort(b"# rules\nabc\n"),
            Some("`#` comment lines")
        );
        assert_eq!(looks_like_snort(b"a|b\nx | y | z\nplain\n"), None);
    }
}
