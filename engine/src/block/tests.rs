//! Tests of the end-of-response block parser: accepted shapes, rejections, and the
//! tail a caller passes.

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
    check("status:\tworking\nsummary: a\tb\ncurrent: c\nnext: d", Ok(block(BlockStatus::Working, "a\tb", "c", "d")));
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
