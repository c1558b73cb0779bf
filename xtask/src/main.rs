//! Command line for the workspace automation: `cargo run -p xtask -- tidy`.
//!
//! Logic lives in the library; this file only parses the arguments and reports.

use std::path::Path;
use std::process::ExitCode;

#[expect(clippy::print_stdout, reason = "a command-line tool reports its findings on stdout")]
fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
        ["tidy"] => {}
        _ => {
            eprintln!("usage: cargo run -p xtask -- tidy");
            return ExitCode::from(2);
        }
    }

    // The xtask crate sits directly under the workspace root.
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("xtask lives inside the workspace root");
    let report = match xtask::tidy::run(root) {
        Ok(report) => report,
        Err(e) => {
            eprintln!("tidy: cannot read {}: {e}", root.display());
            return ExitCode::from(2);
        }
    };
    for v in &report.violations {
        println!("{v}");
    }
    println!("tidy: {} files checked, {} violations", report.files_checked, report.violations.len());
    if report.violations.is_empty() { ExitCode::SUCCESS } else { ExitCode::FAILURE }
}
