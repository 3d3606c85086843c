//! `netsieve`: the command-line front end.

#[cfg(feature = "bench")]
mod bench;
mod clock;
mod config;
mod ctl;
mod filter;
mod firewall;
mod interrupt;
mod live;
mod matching;
mod pcapout;
mod scan;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "netsieve",
    version,
    about = "Packet inspection engine",
    propagate_version = true
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Inspect captures or live traffic with Snort/Suricata rules; write eve.json and fast.log.
    Scan(scan::Args),
    /// tcpdump-style filtering: write the packets an expression accepts.
    Filter(filter::Args),
    /// Ordered firewall rule sets (iptables-save, ClassBench) over a capture or a trace.
    Firewall(firewall::Args),
    /// Multi-pattern grep: every occurrence of every pattern in the files.
    Match(matching::Args),
    /// Benchmarks against peer libraries.
    #[cfg(feature = "bench")]
    #[command(subcommand)]
    Bench(bench::Bench),
}

/// Writes text to standard output. A reader that has gone away (`netsieve ... | head`)
/// is not an error; any other failure is reported once on standard error.
pub(crate) fn print_out(text: &str) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_all(text.as_bytes()).and_then(|()| out.flush())
        && e.kind() != std::io::ErrorKind::BrokenPipe
    {
        eprintln!("netsieve: standard output: {e}");
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Scan(args) => scan::run(args),
        Command::Match(args) => matching::run(args),
        Command::Filter(args) => filter::run(args),
        Command::Firewall(args) => firewall::run(args),
        #[cfg(feature = "bench")]
        Command::Bench(b) => bench::run(b),
    }
}
