//! Rule 16: no Rust file longer than [`MAX_LINES`] lines unless its top `//!` comment says
//! why, in a line starting [`LENGTH_REASON`]. A long file is usually two purposes in one;
//! when it is one purpose that reads best whole (a table, a state machine's match), the
//! reason is written where the next reader sees it first, not left to be rediscovered.
//!
//! The top comment is the file's leading block of `//!` lines (blank lines before it and
//! a byte-order mark allowed), so a reason buried further down does not count, and a
//! reason must say something after its "because".

use crate::tidy_violation::{Rule, SourceFile, Violation};

/// The longest a Rust file may be without a written reason, in lines.
pub const MAX_LINES: usize = 600;

/// How the reason line of a longer file starts, in its top `//!` comment.
pub const LENGTH_REASON: &str = "//! Longer than 600 lines because";

/// Rule 16: a file over [`MAX_LINES`] lines has a [`LENGTH_REASON`] line, with a reason,
/// in its top `//!` comment.
pub fn check_file_length(file: &SourceFile) -> Vec<Violation> {
    let lines = file.text.lines().count();
    if lines <= MAX_LINES || has_length_reason(&file.text) {
        return Vec::new();
    }
    vec![Violation::new(
        &file.path,
        0,
        Rule::FileLength,
        format!(
            "{lines} lines, over {MAX_LINES}: split it along its seams (one purpose per file), or say why it \
             is one purpose in a `{LENGTH_REASON} ...` line of its top `//!` comment"
        ),
    )]
}

/// Whether the top `//!` comment has a reason line with something after "because".
fn has_length_reason(text: &str) -> bool {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    text.lines()
        .map(str::trim)
        .skip_while(|line| line.is_empty())
        .take_while(|line| line.starts_with("//!"))
        .filter_map(|line| line.strip_prefix(LENGTH_REASON))
        .any(|reason| reason.starts_with(' ') && reason.trim().len() > 1)
}
