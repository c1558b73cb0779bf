//! Rule 7: `ARCHITECTURE.md` exists, names every member crate and states its invariants.

use crate::tidy_manifest::workspace_members;
use crate::tidy_violation::{Rule, Violation};

/// The root document every member crate must appear in.
pub const ARCHITECTURE_FILE: &str = "ARCHITECTURE.md";

/// The prefix of a line stating an architecture invariant.
const ARCHITECTURE_INVARIANT_PREFIX: &str = "Architecture Invariant:";

/// Rule 7: `ARCHITECTURE.md` exists, names every workspace member (as a whole word) and
/// has at least one line starting with `Architecture Invariant:`.
pub fn check_architecture(root_manifest: &str, architecture: Option<&str>) -> Vec<Violation> {
    let Some(text) = architecture else {
        return vec![Violation::new(
            ARCHITECTURE_FILE,
            0,
            Rule::Architecture,
            format!(
                "{ARCHITECTURE_FILE} is missing at the workspace root: it must name every member crate and state at least one `{ARCHITECTURE_INVARIANT_PREFIX}` line"
            ),
        )];
    };
    let mut out = Vec::new();
    for member in workspace_members(root_manifest) {
        if !contains_word(text, &member) {
            out.push(Violation::new(
                ARCHITECTURE_FILE,
                0,
                Rule::Architecture,
                format!("the codemap must mention the member crate `{member}`"),
            ));
        }
    }
    let has_invariant = text.lines().any(|line| line.trim_start().starts_with(ARCHITECTURE_INVARIANT_PREFIX));
    if !has_invariant {
        out.push(Violation::new(
            ARCHITECTURE_FILE,
            0,
            Rule::Architecture,
            format!("state at least one line starting with `{ARCHITECTURE_INVARIANT_PREFIX}`"),
        ));
    }
    out
}

fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Whether `word` occurs in `text` with no word character on either side.
fn contains_word(text: &str, word: &str) -> bool {
    if word.is_empty() {
        return false;
    }
    text.match_indices(word).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + word.len()..].chars().next();
        !before.is_some_and(is_word_char) && !after.is_some_and(is_word_char)
    })
}
