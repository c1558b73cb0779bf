//! Rule 15: only the files that own it signal a process. In the CLI executor a signal to
//! the wrong process group ends a person's work, so `ARCHITECTURE.md` names the places
//! that may send one (an invariant), and this rule keeps that claim true: production code
//! outside [`SIGNAL_SITES`] uses none of [`SIGNAL_CALLS`]. Tests, examples and benches,
//! which stop the daemons and children they started, are exempt; so are comments.

use crate::tidy_violation::{Rule, SourceFile, Violation, production_lines};

/// The calls that signal a process, each built with `concat!` so that this file does not
/// trip its own rule.
pub const SIGNAL_CALLS: [&str; 8] = [
    concat!("kill_process", "_group"),
    concat!("kill", "pg("),
    concat!("kill", "_on_drop"),
    concat!("start", "_kill("),
    concat!(".kill", "()"),
    concat!("libc::", "kill"),
    concat!("process::", "kill("),
    concat!("Signal", "::"),
];

/// The files that may signal, and with which calls: the CLI executor's process-group
/// owner, and the two start-up checks whose single, ungrouped child tokio kills when
/// their timeout drops it.
pub const SIGNAL_SITES: [(&str, &[&str]); 3] = [
    ("adapters/cli-executor/src/base/group.rs", &[concat!("kill_process", "_group"), concat!("Signal", "::")]),
    ("adapters/cli-executor/src/codex/surface.rs", &[concat!("kill", "_on_drop")]),
    ("adapters/cli-executor/src/claude/cli.rs", &[concat!("kill", "_on_drop")]),
];

/// Path components whose files are not production code for this rule.
const EXEMPT_DIRS: [&str; 3] = ["tests", "examples", "benches"];

/// Rule 15 over one Rust file: a signalling call outside the site that may make it.
pub fn check_signal_sites(file: &SourceFile) -> Vec<Violation> {
    if file.path.split('/').any(|part| EXEMPT_DIRS.contains(&part)) {
        return Vec::new();
    }
    let allowed = SIGNAL_SITES.iter().find(|(path, _)| *path == file.path).map_or(&[][..], |(_, calls)| *calls);
    let mut out = Vec::new();
    for (line_no, line) in production_lines(file) {
        if line.trim_start().starts_with("//") {
            continue;
        }
        for call in SIGNAL_CALLS.iter().filter(|call| line.contains(**call) && !allowed.contains(call)) {
            out.push(Violation::new(
                &file.path,
                line_no,
                Rule::SignalSites,
                format!(
                    "`{call}` signals a process: only the sites of ARCHITECTURE.md's signal invariant may (a child of the CLI executor is ended through `base/group.rs`); if this one must, add it to SIGNAL_SITES in xtask/src/tidy_signals.rs and to the invariant"
                ),
            ));
        }
    }
    out
}
