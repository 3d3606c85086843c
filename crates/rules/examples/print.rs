//! Prints each rule of a rules file as netsieve reads it: sticky buffers by their
//! canonical names, variables expanded, one line a rule; failures on stderr.
//!
//! `cargo run -p netsieve-rules --example print -- FILE.rules`

use netsieve_rules::{Loaded, Vars};

fn main() {
    let Some(path) = std::env::args_os().nth(1) else {
        eprintln!("usage: print FILE.rules");
        std::process::exit(2);
    };
    let mut l = Loaded::default();
    if let Err(e) = l.add_file(path.as_ref(), &Vars::default()) {
        eprintln!("{e}");
        std::process::exit(1);
    }
    for r in &l.rules {
        println!("{r}");
    }
    for e in &l.errors {
        eprintln!("{e}");
    }
}
