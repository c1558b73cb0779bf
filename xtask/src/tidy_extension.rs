//! House rules for the browser extension's JavaScript (`extension/`): every file says what
//! it is for, the executor core stays pure, and no browser test is skipped.

use crate::tidy_violation::{Rule, SourceFile, Violation};

/// Where the extension lives; its `node_modules` is never read.
pub const EXTENSION_PREFIX: &str = "extension/";

/// The pure core: no browser API, socket, timer, clock or randomness.
const CORE_PREFIX: &str = "extension/src/core/";

/// What `extension/src/core/` must not use (outside comments): time and randomness are
/// arguments, effects are data.
pub const CORE_FORBIDDEN_TOKENS: [&str; 11] = [
    "chrome.",
    "browser.",
    "globalThis",
    "WebSocket",
    "setTimeout",
    "setInterval",
    "Date.now",
    "Math.random",
    "fetch(",
    "document.",
    "window.",
];

/// Ways to skip a `node:test` test or narrow a run to one.
pub const SKIPPING_TOKENS: [&str; 4] = [".skip(", ".only(", "skip: true", "only: true"];

/// Whether `path` is one of the extension's own scripts.
pub fn is_extension_script(path: &str) -> bool {
    path.starts_with(EXTENSION_PREFIX) && (path.ends_with(".js") || path.ends_with(".mjs"))
}

/// Rule 8: the first non-empty line of every extension script is a `//` comment saying
/// what the file is for.
pub fn check_script_header(file: &SourceFile) -> Vec<Violation> {
    let first = file.text.lines().enumerate().find(|(_, line)| !line.trim().is_empty());
    match first {
        Some((_, line)) if line.trim_start().starts_with("//") => Vec::new(),
        Some((index, _)) => vec![Violation::new(
            &file.path,
            index + 1,
            Rule::ExtensionHeader,
            "the first non-empty line must be a `//` comment saying what this file is for".to_string(),
        )],
        None => vec![Violation::new(&file.path, 0, Rule::ExtensionHeader, "the file is empty".to_string())],
    }
}

/// Rule 9: `extension/src/core/` uses no browser API, socket, timer, clock or randomness
/// (comments aside).
pub fn check_core_purity(file: &SourceFile) -> Vec<Violation> {
    if !file.path.starts_with(CORE_PREFIX) {
        return Vec::new();
    }
    let mut out = Vec::new();
    for (index, line) in file.text.lines().enumerate() {
        let code = without_comment(line);
        for token in CORE_FORBIDDEN_TOKENS {
            if code.contains(token) {
                out.push(Violation::new(
                    &file.path,
                    index + 1,
                    Rule::ExtensionPurity,
                    format!(
                        "the extension core is pure: `{token}` is forbidden in {CORE_PREFIX} (take it as an input)"
                    ),
                ));
            }
        }
    }
    out
}

/// Rule 10: no extension test is skipped or narrowed to `.only`.
pub fn check_no_skipped_tests(file: &SourceFile) -> Vec<Violation> {
    if !file.path.starts_with("extension/test/") {
        return Vec::new();
    }
    let mut out = Vec::new();
    for (index, line) in file.text.lines().enumerate() {
        for token in SKIPPING_TOKENS {
            if without_comment(line).contains(token) {
                out.push(Violation::new(
                    &file.path,
                    index + 1,
                    Rule::NoSkippedScriptTests,
                    format!("tests must run: remove `{token}`, or fix or delete the test"),
                ));
            }
        }
    }
    out
}

/// The code part of a line: a line comment, or a line inside a block comment (starting
/// with `*` or `/*`), is dropped. A `//` inside a string is rare enough in the core to
/// accept the false positive.
fn without_comment(line: &str) -> &str {
    let trimmed = line.trim_start();
    if trimmed.starts_with('*') || trimmed.starts_with("/*") {
        return "";
    }
    match line.find("//") {
        Some(at) if !line[..at].ends_with(':') => &line[..at],
        _ => line,
    }
}
