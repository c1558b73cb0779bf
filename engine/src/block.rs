//! Parser for the end-of-response continuation-state block (spec 000 §27, spec 001 C18.2).
//!
//! The block is untrusted page content and only one signal: a parse failure must fail safe, and a
//! parsed `complete` never completes a worker by itself. Accepted shape, as the last non-empty
//! lines of a response (optionally inside a triple-backtick fence, optionally `- ` bulleted, CRLF
//! tolerated):
//!
//! ```text
//! status: working
//! summary: Parser landed; scheduler half done.
//! current: Wiring the idle grace timer.
//! next: Keepalive jitter and floor.
//! ```
//!
//! Rules: the block is the run of `key: value` lines that ends the final paragraph (lines after its
//! first key line must all be key lines); keys are `status|summary|current|next`, ASCII
//! case-insensitive, each exactly once, in any order; every value is a single line; prose may
//! precede the block, but a `status:` line anywhere before it means two blocks.

use serde::{Deserialize, Serialize};

/// Longest text `parse` accepts; callers pass only the tail of a response (see [`response_tail`]).
pub const BLOCK_INPUT_BYTES_MAX: usize = 16 * 1024;
/// Longest accepted value of one field, after trimming.
pub const BLOCK_FIELD_BYTES_MAX: usize = 1024;

/// Markdown fence that may wrap the block.
const FENCE: &str = "```";
/// Bullet prefixes tolerated before a key.
const BULLETS: [&str; 2] = ["- ", "* "];

const KEY_STATUS: &str = "status";
const KEY_SUMMARY: &str = "summary";
const KEY_CURRENT: &str = "current";
const KEY_NEXT: &str = "next";
/// The four keys, in their usual order.
const KEYS: [&str; 4] = [KEY_STATUS, KEY_SUMMARY, KEY_CURRENT, KEY_NEXT];

/// The agent's own view of the assignment at the end of a turn (spec 000 §27.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum BlockStatus {
    /// The assignment is unfinished; another execution can continue it.
    Working,
    /// The agent claims all requested work and acceptance gates are finished.
    Complete,
    /// Progress genuinely needs external input or an unavailable dependency.
    Blocked,
}

impl BlockStatus {
    /// The stable wire name, as written in the block.
    pub fn as_str(self) -> &'static str {
        match self {
            BlockStatus::Working => "working",
            BlockStatus::Complete => "complete",
            BlockStatus::Blocked => "blocked",
        }
    }

    fn from_value(value: &str) -> Option<Self> {
        [BlockStatus::Working, BlockStatus::Complete, BlockStatus::Blocked]
            .into_iter()
            .find(|status| status.as_str().eq_ignore_ascii_case(value))
    }
}

/// A validated continuation-state block; values are trimmed single lines.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ContinuationBlock {
    /// The claimed state of the assignment.
    pub status: BlockStatus,
    /// Overall state of the assignment.
    pub summary: String,
    /// What the agent is doing now.
    pub current: String,
    /// The next step; may be empty only when `status` is `complete`.
    pub next: String,
}

/// Why a response's block was rejected; every rejection fails safe to durable worker state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BlockError {
    /// The response does not end with a block.
    Missing,
    /// A `status:` line appears before the final block, or twice within it.
    Duplicate,
    /// `status` is not one of working, complete, blocked.
    UnknownStatus,
    /// A required field is absent, or empty where a value is required.
    MissingField(&'static str),
    /// A field other than `status` appears twice in the block.
    DuplicateField(&'static str),
    /// A field's value exceeds [`BLOCK_FIELD_BYTES_MAX`].
    FieldTooLong(&'static str),
    /// The text exceeds [`BLOCK_INPUT_BYTES_MAX`].
    InputTooLong,
    /// A continuation line, stray text, a control character or an unbalanced fence.
    Malformed,
}

impl BlockError {
    /// Stable machine-readable code for events and logs.
    pub fn code(&self) -> &'static str {
        match self {
            BlockError::Missing => "BLOCK_MISSING",
            BlockError::Duplicate => "BLOCK_DUPLICATE",
            BlockError::UnknownStatus => "BLOCK_UNKNOWN_STATUS",
            BlockError::MissingField(_) => "BLOCK_MISSING_FIELD",
            BlockError::DuplicateField(_) => "BLOCK_DUPLICATE_FIELD",
            BlockError::FieldTooLong(_) => "BLOCK_FIELD_TOO_LONG",
            BlockError::InputTooLong => "BLOCK_INPUT_TOO_LONG",
            BlockError::Malformed => "BLOCK_MALFORMED",
        }
    }

    /// The field the error is about, if any.
    pub fn field(&self) -> Option<&'static str> {
        match self {
            BlockError::MissingField(field) | BlockError::DuplicateField(field) | BlockError::FieldTooLong(field) => {
                Some(field)
            }
            _ => None,
        }
    }
}

impl std::fmt::Display for BlockError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.field() {
            Some(field) => write!(f, "{} ({field})", self.code()),
            None => f.write_str(self.code()),
        }
    }
}

impl std::error::Error for BlockError {}

/// The last at most [`BLOCK_INPUT_BYTES_MAX`] bytes of a response, cut on a char boundary.
pub fn response_tail(text: &str) -> &str {
    let mut start = text.len().saturating_sub(BLOCK_INPUT_BYTES_MAX);
    while !text.is_char_boundary(start) {
        start += 1;
    }
    text.get(start..).unwrap_or_default()
}

/// Parses the continuation-state block that ends `text`.
pub fn parse(text: &str) -> Result<ContinuationBlock, BlockError> {
    if text.len() > BLOCK_INPUT_BYTES_MAX {
        return Err(BlockError::InputTooLong);
    }
    let lines: Vec<&str> = text.split('\n').map(strip_cr).collect();
    let region = block_region(&lines)?;
    let (before, block) = split_final_block(&lines[..region])?;
    let fields = collect_fields(block)?;
    if fields.status.is_some() && before.iter().any(|line| is_status_line(line)) {
        return Err(BlockError::Duplicate);
    }
    fields.validate()
}

fn strip_cr(line: &str) -> &str {
    line.strip_suffix('\r').unwrap_or(line)
}

fn is_blank(line: &str) -> bool {
    line.trim().is_empty()
}

/// End (exclusive) of the lines that may hold the block: a closing fence and the trailing blank
/// lines are cut off; with a fence, the block's lines must follow the matching opening fence.
fn block_region(lines: &[&str]) -> Result<usize, BlockError> {
    let end = lines.iter().rposition(|line| !is_blank(line)).ok_or(BlockError::Missing)?;
    let last = lines[end].trim();
    if !last.starts_with(FENCE) {
        return Ok(end + 1);
    }
    if last != FENCE {
        return Err(BlockError::Missing);
    }
    let open = lines[..end].iter().rposition(|line| line.trim().starts_with(FENCE)).ok_or(BlockError::Malformed)?;
    let inner_end = lines[..end].iter().rposition(|line| !is_blank(line)).unwrap_or(open);
    if inner_end <= open {
        return Err(BlockError::Missing);
    }
    Ok(inner_end + 1)
}

/// Splits `lines` (ending on a non-blank line) into everything before the block and the block.
fn split_final_block<'l, 't>(lines: &'l [&'t str]) -> Result<(&'l [&'t str], &'l [&'t str]), BlockError> {
    let paragraph_start =
        lines.iter().rposition(|line| is_blank(line) || line.trim().starts_with(FENCE)).map_or(0, |i| i + 1);
    let paragraph = &lines[paragraph_start..];
    let first_key = paragraph.iter().position(|line| split_key(line).is_some()).ok_or(BlockError::Missing)?;
    Ok(lines.split_at(paragraph_start + first_key))
}

fn is_status_line(line: &str) -> bool {
    matches!(split_key(line), Some((KEY_STATUS, _)))
}

/// `(canonical key, raw value)` when the line is `[- ]key: value` for one of the four keys.
fn split_key(line: &str) -> Option<(&'static str, &str)> {
    let body = strip_bullet(line.trim());
    let colon = body.find(':')?;
    let (name, rest) = body.split_at(colon);
    let key = KEYS.into_iter().find(|key| key.eq_ignore_ascii_case(name))?;
    Some((key, rest.get(1..).unwrap_or_default()))
}

fn strip_bullet(line: &str) -> &str {
    BULLETS.into_iter().find_map(|bullet| line.strip_prefix(bullet)).map_or(line, str::trim_start)
}

fn has_control_chars(line: &str) -> bool {
    line.chars().any(|c| c.is_control() && c != '\t')
}

/// The four raw values of one block, each seen at most once.
#[derive(Default)]
struct Fields<'t> {
    status: Option<&'t str>,
    summary: Option<&'t str>,
    current: Option<&'t str>,
    next: Option<&'t str>,
}

fn collect_fields<'t>(block: &[&'t str]) -> Result<Fields<'t>, BlockError> {
    let mut fields = Fields::default();
    for line in block {
        if has_control_chars(line) {
            return Err(BlockError::Malformed);
        }
        let (key, value) = split_key(line).ok_or(BlockError::Malformed)?;
        fields.set(key, value.trim())?;
    }
    Ok(fields)
}

impl<'t> Fields<'t> {
    fn slot(&mut self, key: &'static str) -> &mut Option<&'t str> {
        match key {
            KEY_STATUS => &mut self.status,
            KEY_SUMMARY => &mut self.summary,
            KEY_CURRENT => &mut self.current,
            _ => &mut self.next,
        }
    }

    fn set(&mut self, key: &'static str, value: &'t str) -> Result<(), BlockError> {
        if value.len() > BLOCK_FIELD_BYTES_MAX {
            return Err(BlockError::FieldTooLong(key));
        }
        let slot = self.slot(key);
        match (slot.is_some(), key) {
            (true, KEY_STATUS) => Err(BlockError::Duplicate),
            (true, _) => Err(BlockError::DuplicateField(key)),
            (false, _) => {
                *slot = Some(value);
                Ok(())
            }
        }
    }

    fn validate(self) -> Result<ContinuationBlock, BlockError> {
        let status = self.status.ok_or(BlockError::MissingField(KEY_STATUS))?;
        let status = BlockStatus::from_value(status).ok_or(BlockError::UnknownStatus)?;
        let summary = required(self.summary, KEY_SUMMARY, false)?;
        let current = required(self.current, KEY_CURRENT, false)?;
        let next = required(self.next, KEY_NEXT, status == BlockStatus::Complete)?;
        Ok(ContinuationBlock {
            status,
            summary: summary.to_string(),
            current: current.to_string(),
            next: next.to_string(),
        })
    }
}

fn required<'t>(value: Option<&'t str>, key: &'static str, empty_ok: bool) -> Result<&'t str, BlockError> {
    match value {
        Some(value) if empty_ok || !value.is_empty() => Ok(value),
        _ => Err(BlockError::MissingField(key)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const VALID: &str = "status: working\n\
                         summary: Parser landed; scheduler half done.\n\
                         current: Wiring the idle grace timer.\n\
                         next: Keepalive jitter and floor.";

    fn working() -> ContinuationBlock {
        ContinuationBlock {
            status: BlockStatus::Working,
            summary: "Parser landed; scheduler half done.".to_string(),
            current: "Wiring the idle grace timer.".to_string(),
            next: "Keepalive jitter and floor.".to_string(),
        }
    }

    fn block(status: BlockStatus, summary: &str, current: &str, next: &str) -> ContinuationBlock {
        ContinuationBlock { status, summary: summary.to_string(), current: current.to_string(), next: next.to_string() }
    }

    fn check(input: &str, expected: Result<ContinuationBlock, BlockError>) {
        assert_eq!(parse(input), expected, "input: {input:?}");
    }

    fn err(input: &str, expected: BlockError) {
        check(input, Err(expected));
    }

    // ---- valid variants ----

    #[test]
    fn plain_block() {
        check(VALID, Ok(working()));
    }

    #[test]
    fn prose_before_block() {
        check(&format!("I wired the parser.\n\nMore prose.\n{VALID}"), Ok(working()));
    }

    #[test]
    fn trailing_blank_lines_and_whitespace() {
        check(&format!("\n  {VALID}  \n\n   \n"), Ok(working()));
    }

    #[test]
    fn fenced_block() {
        check(&format!("Done for now.\n```\n{VALID}\n```\n"), Ok(working()));
    }

    #[test]
    fn fenced_block_with_language_and_blank_edges() {
        check(&format!("```text\n\n{VALID}\n\n```"), Ok(working()));
    }

    #[test]
    fn fenced_block_after_other_code_block() {
        check(&format!("```rust\nfn main() {{}}\n```\n```\n{VALID}\n```"), Ok(working()));
    }

    #[test]
    fn bulleted_keys() {
        check(&VALID.replace("\n", "\n- ").replacen("status", "- status", 1), Ok(working()));
    }

    #[test]
    fn star_bullets() {
        check(&format!("* {}", VALID.replace('\n', "\n* ")), Ok(working()));
    }

    #[test]
    fn crlf_line_endings() {
        check(&format!("Prose.\r\n\r\n{}\r\n", VALID.replace('\n', "\r\n")), Ok(working()));
    }

    #[test]
    fn any_order() {
        check(
            "next: Keepalive jitter and floor.\n\
             current: Wiring the idle grace timer.\n\
             status: working\n\
             summary: Parser landed; scheduler half done.",
            Ok(working()),
        );
    }

    #[test]
    fn uppercase_keys_and_status() {
        check(
            "STATUS: WORKING\nSummary: Parser landed; scheduler half done.\n\
             CURRENT: Wiring the idle grace timer.\nNext: Keepalive jitter and floor.",
            Ok(working()),
        );
    }

    #[test]
    fn values_are_trimmed_and_keep_inner_colons() {
        check(
            "status:blocked\nsummary:   Waiting: CI is red.  \ncurrent: a:b\nnext: ask root",
            Ok(block(BlockStatus::Blocked, "Waiting: CI is red.", "a:b", "ask root")),
        );
    }

    #[test]
    fn tabs_are_allowed() {
        check(
            "status:\tworking\nsummary: a\tb\ncurrent: c\nnext: d",
            Ok(block(BlockStatus::Working, "a\tb", "c", "d")),
        );
    }

    #[test]
    fn complete_may_have_empty_next() {
        check(
            "status: complete\nsummary: All done.\ncurrent: Handoff sent.\nnext:",
            Ok(block(BlockStatus::Complete, "All done.", "Handoff sent.", "")),
        );
    }

    #[test]
    fn intro_line_in_same_paragraph() {
        check(&format!("Continuation state:\n{VALID}"), Ok(working()));
    }

    #[test]
    fn non_ascii_values() {
        check(
            "status: working\nsummary: Ünïcödé ✓\ncurrent: 日本語\nnext: 🚀",
            Ok(block(BlockStatus::Working, "Ünïcödé ✓", "日本語", "🚀")),
        );
    }

    #[test]
    fn field_at_exact_limit() {
        let long = "x".repeat(BLOCK_FIELD_BYTES_MAX);
        let input = format!("status: working\nsummary: {long}\ncurrent: c\nnext: n");
        check(&input, Ok(block(BlockStatus::Working, &long, "c", "n")));
    }

    #[test]
    fn input_at_exact_limit() {
        let padding = "p".repeat(BLOCK_INPUT_BYTES_MAX - VALID.len() - 2);
        let input = format!("{padding}\n\n{VALID}");
        assert_eq!(input.len(), BLOCK_INPUT_BYTES_MAX);
        check(&input, Ok(working()));
    }

    // ---- Missing ----

    #[test]
    fn empty_input_is_missing() {
        err("", BlockError::Missing);
        err(" \n\r\n\t", BlockError::Missing);
    }

    #[test]
    fn prose_only_is_missing() {
        err("I did some work today.\nMore tomorrow.", BlockError::Missing);
    }

    #[test]
    fn prose_after_block_paragraph_is_missing() {
        err(&format!("{VALID}\n\nThanks for reading!"), BlockError::Missing);
    }

    #[test]
    fn empty_fence_is_missing() {
        err("```\n\n```", BlockError::Missing);
    }

    #[test]
    fn unterminated_fence_at_end_is_missing() {
        err(&format!("{VALID}\n```text"), BlockError::Missing);
    }

    // ---- Malformed ----

    #[test]
    fn prose_directly_after_block_is_malformed() {
        err(&format!("{VALID}\nThanks for reading!"), BlockError::Malformed);
    }

    #[test]
    fn continuation_line_is_malformed() {
        err("status: working\nsummary: first half\n  second half\ncurrent: c\nnext: n", BlockError::Malformed);
    }

    #[test]
    fn closing_fence_without_opening_is_malformed() {
        err(&format!("{VALID}\n```"), BlockError::Malformed);
    }

    #[test]
    fn control_character_is_malformed() {
        err("status: working\nsummary: a\u{7}b\ncurrent: c\nnext: n", BlockError::Malformed);
        err("status: working\nsummary: a\rb\ncurrent: c\nnext: n", BlockError::Malformed);
        err("status: working\nsummary: a\u{0}\ncurrent: c\nnext: n", BlockError::Malformed);
        err("status: working\nsummary: a\u{85}\ncurrent: c\nnext: n", BlockError::Malformed);
    }

    #[test]
    fn control_characters_in_prose_are_ignored() {
        check(&format!("bell \u{7} in prose\n\n{VALID}"), Ok(working()));
    }

    // ---- Duplicate ----

    #[test]
    fn earlier_block_is_duplicate() {
        err(&format!("{VALID}\n\n{VALID}"), BlockError::Duplicate);
    }

    #[test]
    fn earlier_status_line_in_prose_is_duplicate() {
        err(&format!("- Status: complete\n\nProse.\n\n{VALID}"), BlockError::Duplicate);
    }

    #[test]
    fn two_blocks_back_to_back_are_duplicate() {
        err(&format!("{VALID}\n{VALID}"), BlockError::Duplicate);
    }

    #[test]
    fn earlier_non_status_keys_are_not_duplicates() {
        check(&format!("next: a plan in prose\n\n{VALID}"), Ok(working()));
    }

    // ---- UnknownStatus ----

    #[test]
    fn unknown_status() {
        err("status: done\nsummary: s\ncurrent: c\nnext: n", BlockError::UnknownStatus);
    }

    #[test]
    fn empty_status_is_unknown() {
        err("status:\nsummary: s\ncurrent: c\nnext: n", BlockError::UnknownStatus);
    }

    #[test]
    fn status_with_extra_words_is_unknown() {
        err("status: working hard\nsummary: s\ncurrent: c\nnext: n", BlockError::UnknownStatus);
    }

    // ---- MissingField ----

    #[test]
    fn missing_status_field() {
        err("summary: s\ncurrent: c\nnext: n", BlockError::MissingField("status"));
    }

    #[test]
    fn missing_summary_field() {
        err("status: working\ncurrent: c\nnext: n", BlockError::MissingField("summary"));
    }

    #[test]
    fn missing_current_field() {
        err("status: working\nsummary: s\nnext: n", BlockError::MissingField("current"));
    }

    #[test]
    fn missing_next_field() {
        err("status: complete\nsummary: s\ncurrent: c", BlockError::MissingField("next"));
    }

    #[test]
    fn empty_summary_is_missing() {
        err("status: complete\nsummary:  \ncurrent: c\nnext:", BlockError::MissingField("summary"));
    }

    #[test]
    fn empty_next_needs_complete() {
        err("status: working\nsummary: s\ncurrent: c\nnext:", BlockError::MissingField("next"));
        err("status: blocked\nsummary: s\ncurrent: c\nnext: ", BlockError::MissingField("next"));
    }

    #[test]
    fn blank_line_inside_block_splits_it() {
        err("status: working\n\nsummary: s\ncurrent: c\nnext: n", BlockError::MissingField("status"));
    }

    // ---- DuplicateField ----

    #[test]
    fn duplicate_summary() {
        err("status: working\nsummary: a\nsummary: b\ncurrent: c\nnext: n", BlockError::DuplicateField("summary"));
    }

    #[test]
    fn duplicate_next_case_insensitive() {
        err("status: working\nsummary: s\ncurrent: c\nnext: n\nNEXT: m", BlockError::DuplicateField("next"));
    }

    #[test]
    fn duplicate_status_within_block() {
        err("status: working\nstatus: complete\nsummary: s\ncurrent: c\nnext: n", BlockError::Duplicate);
    }

    // ---- FieldTooLong / InputTooLong ----

    #[test]
    fn field_too_long() {
        let long = "x".repeat(BLOCK_FIELD_BYTES_MAX + 1);
        err(&format!("status: working\nsummary: s\ncurrent: {long}\nnext: n"), BlockError::FieldTooLong("current"));
    }

    #[test]
    fn multibyte_field_too_long_counts_bytes() {
        let long = "é".repeat(BLOCK_FIELD_BYTES_MAX / 2 + 1);
        err(&format!("status: working\nsummary: {long}\ncurrent: c\nnext: n"), BlockError::FieldTooLong("summary"));
    }

    #[test]
    fn input_too_long() {
        let input = format!("{}\n\n{VALID}", "p".repeat(BLOCK_INPUT_BYTES_MAX));
        err(&input, BlockError::InputTooLong);
    }

    // ---- helpers and codes ----

    #[test]
    fn codes_are_stable_and_distinct() {
        let all = [
            BlockError::Missing,
            BlockError::Duplicate,
            BlockError::UnknownStatus,
            BlockError::MissingField("summary"),
            BlockError::DuplicateField("summary"),
            BlockError::FieldTooLong("summary"),
            BlockError::InputTooLong,
            BlockError::Malformed,
        ];
        let mut codes: Vec<&str> = all.iter().map(BlockError::code).collect();
        assert!(codes.iter().all(|c| c.starts_with("BLOCK_")));
        assert_eq!(BlockError::Missing.code(), "BLOCK_MISSING");
        codes.sort_unstable();
        codes.dedup();
        assert_eq!(codes.len(), all.len());
    }

    #[test]
    fn display_names_field() {
        assert_eq!(BlockError::MissingField("next").to_string(), "BLOCK_MISSING_FIELD (next)");
        assert_eq!(BlockError::Malformed.to_string(), "BLOCK_MALFORMED");
    }

    #[test]
    fn status_wire_names_round_trip() {
        for status in [BlockStatus::Working, BlockStatus::Complete, BlockStatus::Blocked] {
            assert_eq!(BlockStatus::from_value(status.as_str()), Some(status));
        }
    }

    #[test]
    fn response_tail_cuts_on_char_boundary() {
        let text = format!("é{}", "x".repeat(BLOCK_INPUT_BYTES_MAX - 1));
        let tail = response_tail(&text);
        assert_eq!(tail.len(), BLOCK_INPUT_BYTES_MAX - 1);
        assert_eq!(response_tail("short"), "short");
        let long = format!("{}\n\n{VALID}", "é".repeat(BLOCK_INPUT_BYTES_MAX));
        check(response_tail(&long), Ok(working()));
    }

    // ---- never panics ----

    /// Tiny deterministic xorshift64 generator; no crates.
    struct XorShift(u64);

    impl XorShift {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }

        fn below(&mut self, bound: usize) -> usize {
            (self.next() % bound as u64) as usize
        }
    }

    const FUZZ_CASES_COUNT: usize = 4_000;
    const FUZZ_LEN_BYTES_MAX: usize = 300;
    const FUZZ_TOKENS: [&str; 18] = [
        "status", "summary", "current", "next", ":", " ", "\n", "\r\n", "\r", "```", "- ", "* ", "working", "complete",
        "é", "🚀", "\u{0}", "\t",
    ];

    #[test]
    fn random_bytes_never_panic() {
        let mut rng = XorShift(0x9E37_79B9_7F4A_7C15);
        for _ in 0..FUZZ_CASES_COUNT {
            let len = rng.below(FUZZ_LEN_BYTES_MAX);
            let bytes: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
            let text = String::from_utf8_lossy(&bytes);
            let _ = parse(&text);
            let _ = parse(response_tail(&text));
        }
    }

    #[test]
    fn random_token_soup_never_panics() {
        let mut rng = XorShift(0xD1B5_4A32_D192_ED03);
        for _ in 0..FUZZ_CASES_COUNT {
            let count = rng.below(40);
            let text: String = (0..count).map(|_| FUZZ_TOKENS[rng.below(FUZZ_TOKENS.len())]).collect();
            let _ = parse(&text);
        }
    }

    #[test]
    fn mutated_valid_blocks_never_panic() {
        let mut rng = XorShift(0x2545_F491_4F6C_DD1D);
        let base = format!("Prose é.\r\n```\r\n{}\r\n```\r\n", VALID.replace('\n', "\r\n"));
        for _ in 0..FUZZ_CASES_COUNT {
            let mut bytes = base.clone().into_bytes();
            for _ in 0..=rng.below(4) {
                let at = rng.below(bytes.len());
                bytes[at] = rng.next() as u8;
            }
            let text = String::from_utf8_lossy(&bytes);
            let _ = parse(&text);
        }
    }
}
