//! Loads rule files and prints the load summary: `cargo run -p netsieve-rules --example
//! load -- FILE...`.
use std::time::Instant;

fn main() {
    let vars = netsieve_rules::Vars::default();
    let mut l = netsieve_rules::Loaded::default();
    let t = Instant::now();
    for f in std::env::args().skip(1) {
        if let Err(e) = l.add_file(std::path::Path::new(&f), &vars) {
            eprintln!("{e}");
        }
    }
    let dt = t.elapsed();
    let app = l.rules.iter().filter(|r| !r.app_layer.is_empty()).count();
    let uns = l
        .rules
        .iter()
        .filter(|r| r.app_layer.is_empty() && !r.unsupported.is_empty())
        .count();
    println!(
        "{} rules parsed ({} need app-layer, {} use unsupported keywords), {} failed, in {:.1} ms",
        l.rules.len(),
        app,
        uns,
        l.errors.len(),
        dt.as_secs_f64() * 1e3
    );
    for (k, n) in l.error_summary() {
        println!("  {n:6}  {k}");
    }
    if std::env::var("SHOW").is_ok() {
        for e in l.errors.iter().take(30) {
            println!("{e}");
        }
    }
}
