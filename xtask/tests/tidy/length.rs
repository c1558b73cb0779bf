//! Rule 16: no Rust file over 600 lines without its reason at the top.

use crate::{assert_clean, over_rust_files, rules};
use xtask::tidy_length::{self, LENGTH_REASON, MAX_LINES};
use xtask::tidy_violation::{Rule, SourceFile};

#[test]
fn workspace_rule_16_no_file_over_600_lines_without_a_reason() {
    assert_clean("file-length", over_rust_files(tidy_length::check_file_length));
}

/// A file of `lines` lines: `head` first, then plain code lines.
fn file_of(head: &str, lines: usize) -> SourceFile {
    let mut text = head.to_string();
    for i in head.lines().count()..lines {
        text.push_str(&format!("const C{i}: u32 = {i};\n"));
    }
    assert_eq!(text.lines().count(), lines);
    SourceFile::new("k/src/long.rs", &text)
}

#[test]
fn rule_16_fires_past_600_lines_without_a_reason() {
    let doc = "//! A long file.\n";
    assert_eq!(tidy_length::check_file_length(&file_of(doc, MAX_LINES)), []);
    let v = tidy_length::check_file_length(&file_of(doc, MAX_LINES + 1));
    assert_eq!(rules(&v), [(0, Rule::FileLength)]);
    assert!(v[0].message.contains("601 lines"), "{}", v[0].message);
    // Test files count too.
    let test = SourceFile::new("k/tests/long.rs", &file_of(doc, 700).text);
    assert_eq!(rules(&tidy_length::check_file_length(&test)), [(0, Rule::FileLength)]);
}

#[test]
fn rule_16_accepts_a_reason_in_the_top_comment() {
    let head = format!("\n//! A table.\n//!\n{LENGTH_REASON} it is one table, read top to bottom.\n//! More.\n");
    assert_eq!(tidy_length::check_file_length(&file_of(&head, 900)), []);
    let first = format!("\u{feff}{LENGTH_REASON} the match is one state machine.\n");
    assert_eq!(tidy_length::check_file_length(&file_of(&first, 900)), []);
}

#[test]
fn rule_16_fires_on_a_reason_below_the_top_comment_or_an_empty_one() {
    let cases = [
        // Below the top comment: after code, or in a plain comment.
        format!("//! A file.\nuse std::fmt;\n{LENGTH_REASON} it is long.\n"),
        format!("//! A file.\n\n{LENGTH_REASON} a blank line ended the top comment.\n"),
        format!("// {}\n", LENGTH_REASON.trim_start_matches("//! ")),
        // No reason after "because", or a word glued to it.
        format!("//! A file.\n{LENGTH_REASON}\n"),
        format!("//! A file.\n{LENGTH_REASON} .\n"),
        format!("//! A file.\n{LENGTH_REASON}x it is long.\n"),
    ];
    for head in cases {
        let v = tidy_length::check_file_length(&file_of(&head, 650));
        assert_eq!(rules(&v), [(0, Rule::FileLength)], "{head:?}");
    }
}
