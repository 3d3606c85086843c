//! `netsieve`: the command-line front end.

mod bench;
mod matching;

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
    /// Multi-pattern grep: every occurrence of every pattern in the files.
    Match(matching::Args),
    /// Benchmarks against peer libraries.
    #[command(subcommand)]
    Bench(bench::Bench),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Match(args) => matching::run(args),
        Command::Bench(b) => bench::run(b),
    }
}
