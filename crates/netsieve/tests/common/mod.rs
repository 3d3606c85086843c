//! What the command-line tests share: the repository's root, the binary, and the
//! bundled example capture.

use std::path::PathBuf;
use std::process::{Command, Output};

/// The repository's root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Runs `netsieve` with `args` and waits for it.
pub fn netsieve(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_netsieve"))
        .args(args)
        .output()
        .expect("runs")
}

/// The bundled example capture (`examples/smtp-flowbits.pcap`).
pub fn pcap() -> String {
    root()
        .join("examples/smtp-flowbits.pcap")
        .display()
        .to_string()
}
