//! Command line for the workspace automation:
//! `cargo run -p xtask -- tidy`, `cargo run -p xtask -- skill-pack [--out DIR]` and
//! `cargo run -p xtask -- dist [--binary FILE] [--target TRIPLE] [--out DIR] [--fast]`.
//!
//! Logic lives in the library; this file only parses the arguments and reports.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use xtask::skill;

const USAGE: &str = "usage: cargo run -p xtask -- tidy\n       cargo run -p xtask -- skill-pack [--out DIR]\n       \
                     cargo run -p xtask -- dist [--binary FILE] [--target TRIPLE] [--out DIR] [--fast]";

fn main() -> ExitCode {
    // The xtask crate sits directly under the workspace root.
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("xtask lives inside the workspace root");
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
        ["tidy"] => tidy(root),
        ["skill-pack"] => skill_pack(root, &root.join(skill::OUT_DIR_DEFAULT)),
        ["skill-pack", "--out", out] => skill_pack(root, &PathBuf::from(out)),
        ["dist", rest @ ..] => dist(root, rest),
        _ => {
            eprintln!("{USAGE}");
            ExitCode::from(2)
        }
    }
}

#[expect(clippy::print_stdout, reason = "a command-line tool reports its findings on stdout")]
fn tidy(root: &Path) -> ExitCode {
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

#[expect(clippy::print_stdout, reason = "a command-line tool reports what it wrote on stdout")]
fn skill_pack(root: &Path, out_dir: &Path) -> ExitCode {
    let packed = match skill::pack(&skill::skill_dir(root), out_dir) {
        Ok(packed) => packed,
        Err(e) => {
            eprintln!("skill-pack: {e}");
            return ExitCode::FAILURE;
        }
    };
    for entry in &packed.package.entries {
        println!("  {entry}");
    }
    println!(
        "skill-pack: wrote {} ({} {}, {} bytes, crc32 {:08x})",
        packed.path.display(),
        packed.package.entries.len(),
        if packed.package.entries.len() == 1 { "entry" } else { "entries" },
        packed.package.bytes.len(),
        packed.package.crc32()
    );
    ExitCode::SUCCESS
}

/// `dist`: the release archive of a built binary (default `target/release/orchestrator`,
/// for this machine's target, into `target/distrib`), as cargo-dist lays it out.
#[expect(clippy::print_stdout, reason = "a command-line tool reports what it wrote on stdout")]
fn dist(root: &Path, args: &[&str]) -> ExitCode {
    let mut options = xtask::dist::PackOptions {
        binary: root.join("target/release").join(xtask::dist::APP),
        target: xtask::dist::host_target().unwrap_or_default(),
        extra: vec![root.join("README.md")],
        out_dir: root.join("target/distrib"),
        fast: false,
    };
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match (*arg, args.clone().next()) {
            ("--fast", _) => options.fast = true,
            ("--binary", Some(v)) => options.binary = PathBuf::from(v),
            ("--target", Some(v)) => options.target = v.to_string(),
            ("--out", Some(v)) => options.out_dir = PathBuf::from(v),
            _ => {
                eprintln!("{USAGE}");
                return ExitCode::from(2);
            }
        }
        if *arg != "--fast" {
            args.next();
        }
    }
    match xtask::dist::pack(&options) {
        Ok(packed) => {
            println!("dist: wrote {} (sha256 {})", packed.archive.display(), packed.sha256);
            println!("dist: wrote {}", packed.checksum_file.display());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("dist: {e}");
            ExitCode::FAILURE
        }
    }
}
