//! The skill's boundary: the orchestration mechanics `SKILL.md` must not mention, since
//! the skill is an output contract only.

/// Terms `SKILL.md` must not contain (ASCII case-insensitive, as whole words): the skill is an
/// output contract only, and Retry handling, sending `continue`, browser state, execution
/// boundaries, automatic resumption, MCP lifecycle, worktrees and project policy belong to
/// the orchestrator and the assignment (spec 000 §27.1, §27.4; spec 001 C18.1). Keeping them
/// out lets executor policy change without touching the skill.
pub const SKILL_FORBIDDEN_TERMS: [&str; 49] = [
    "retry",
    "retries",
    "retrying",
    "regenerate",
    "`continue`",
    "\"continue\"",
    "'continue'",
    "send continue",
    "type continue",
    "say continue",
    "write continue",
    "reply continue",
    "browser",
    "tab",
    "tabs",
    "click",
    "button",
    "dom",
    "chatgpt",
    "execution boundary",
    "execution boundaries",
    "turn boundary",
    "turn boundaries",
    "auto-resume",
    "auto resume",
    "autoresume",
    "resume",
    "resumes",
    "resumed",
    "resuming",
    "schedule",
    "scheduled",
    "scheduler",
    "scheduling",
    "keepalive",
    "keep-alive",
    "idle",
    "timer",
    "wake",
    "mcp",
    "lifecycle",
    "orchestrator",
    "orchestration",
    "worktree",
    "worktrees",
    "recovery",
    "project policy",
    "policy",
    "policies",
];

/// Every term of [`SKILL_FORBIDDEN_TERMS`] that `text` contains as a whole word (ASCII
/// case-insensitive), in list order.
pub fn boundary_violations(text: &str) -> Vec<&'static str> {
    let lower = text.to_ascii_lowercase();
    SKILL_FORBIDDEN_TERMS.into_iter().filter(|term| contains_word(&lower, term)).collect()
}

/// Whether `term` occurs in `text` with no ASCII letter or digit right before or after it.
fn contains_word(text: &str, term: &str) -> bool {
    let bytes = text.as_bytes();
    let is_word = |at: Option<&u8>| at.is_some_and(u8::is_ascii_alphanumeric);
    text.match_indices(term).any(|(at, _)| {
        let before = at.checked_sub(1).and_then(|i| bytes.get(i));
        !is_word(before) && !is_word(bytes.get(at + term.len()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_match_only_whole() {
        assert!(contains_word("a tab here", "tab"));
        assert!(contains_word("tab", "tab"));
        assert!(!contains_word("a table and a stable", "tab"));
        assert!(contains_word("no auto-resume.", "resume"));
        assert!(contains_word("send `continue` now", "`continue`"));
        assert!(!contains_word("can continue it", "`continue`"));
    }
}
