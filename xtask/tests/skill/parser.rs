//! Every example in `SKILL.md` is a block the engine's parser accepts with the status it
//! illustrates, and the rules the skill states hold in the parser.

use crate::skill_text;
use engine::block::{self, BLOCK_FIELD_BYTES_MAX, BlockError, BlockStatus};

/// One fenced example of `SKILL.md`: the status its heading names and the fence's contents.
struct Example {
    status: BlockStatus,
    body: String,
    fenced: String,
}

/// Every fenced block of `SKILL.md`, each with the status named by the nearest heading above.
fn examples() -> Vec<Example> {
    let text = skill_text();
    let mut out = Vec::new();
    let mut heading = String::new();
    let mut fence: Option<(String, Vec<&str>)> = None;
    for line in text.lines() {
        match &mut fence {
            Some((open, body)) if line.trim_start().starts_with("```") => {
                let status = status_named(&heading).unwrap_or_else(|| panic!("no status in heading {heading:?}"));
                let body = body.join("\n");
                let fenced = format!("{open}\n{body}\n{line}");
                out.push(Example { status, body, fenced });
                fence = None;
            }
            Some((_, body)) => body.push(line),
            None if line.trim_start().starts_with("```") => fence = Some((line.to_string(), Vec::new())),
            None if line.starts_with('#') => heading = line.to_string(),
            None => {}
        }
    }
    assert!(fence.is_none(), "SKILL.md has an unclosed fence");
    out
}

fn status_named(heading: &str) -> Option<BlockStatus> {
    [BlockStatus::Working, BlockStatus::Complete, BlockStatus::Blocked]
        .into_iter()
        .find(|status| heading.to_ascii_lowercase().contains(status.as_str()))
}

#[test]
fn there_is_an_example_of_every_status_and_of_waiting_for_another_agent() {
    let statuses: Vec<BlockStatus> = examples().iter().map(|e| e.status).collect();
    // The third example is a wait for another agent: `working`, never `blocked`.
    assert_eq!(statuses, [BlockStatus::Working, BlockStatus::Complete, BlockStatus::Working, BlockStatus::Blocked]);
}

#[test]
fn every_example_parses_with_the_status_it_illustrates() {
    for example in examples() {
        for input in [
            example.body.clone(),
            example.fenced.clone(),
            format!("I finished the parser and ran its tests.\n\n{}\n", example.body),
            format!("Some work was done.\r\n\r\n{}\r\n", example.fenced.replace('\n', "\r\n")),
        ] {
            let parsed = block::parse(&input).unwrap_or_else(|e| panic!("{e} for {input:?}"));
            assert_eq!(parsed.status, example.status, "{input:?}");
            assert!(!parsed.summary.is_empty() && !parsed.current.is_empty() && !parsed.next.is_empty());
        }
        let lines: Vec<&str> = example.body.lines().collect();
        assert_eq!(lines.len(), 4, "an example is exactly the four lines");
        let keys: Vec<&str> = lines.iter().filter_map(|line| line.split_once(':')).map(|(key, _)| key).collect();
        assert_eq!(keys, ["status", "summary", "current", "next"], "keys in the documented order");
    }
}

#[test]
fn two_blocks_are_rejected() {
    for example in examples() {
        let body = &example.body;
        assert_eq!(block::parse(&format!("{body}\n\n{body}")), Err(BlockError::Duplicate));
        assert_eq!(block::parse(&format!("{body}\n{body}")), Err(BlockError::Duplicate));
        assert_eq!(block::parse(&format!("{}\n\n{body}", example.fenced)), Err(BlockError::Duplicate));
    }
}

#[test]
fn an_unknown_status_is_rejected() {
    for example in examples() {
        let status_line = format!("status: {}", example.status.as_str());
        for unknown in ["done", "in progress", "working | complete | blocked", ""] {
            let input = example.body.replace(&status_line, &format!("status: {unknown}"));
            assert_eq!(block::parse(&input), Err(BlockError::UnknownStatus), "{input:?}");
        }
    }
}

#[test]
fn a_missing_field_is_rejected() {
    for example in examples() {
        for field in ["status", "summary", "current", "next"] {
            let prefix = format!("{field}:");
            let input: Vec<&str> = example.body.lines().filter(|line| !line.starts_with(&prefix)).collect();
            assert_eq!(block::parse(&input.join("\n")), Err(BlockError::MissingField(field)), "without {field}");
        }
    }
}

#[test]
fn an_oversize_field_is_rejected() {
    for example in examples() {
        for field in ["summary", "current", "next"] {
            let prefix = format!("{field}:");
            let with_value = |value: &str| -> String {
                let lines: Vec<String> = example
                    .body
                    .lines()
                    .map(|line| if line.starts_with(&prefix) { format!("{prefix} {value}") } else { line.to_string() })
                    .collect();
                lines.join("\n")
            };
            let at_limit = with_value(&"x".repeat(BLOCK_FIELD_BYTES_MAX));
            assert_eq!(block::parse(&at_limit).map(|b| b.status), Ok(example.status), "{field} at the limit");
            let over = with_value(&"x".repeat(BLOCK_FIELD_BYTES_MAX + 1));
            assert_eq!(block::parse(&over), Err(BlockError::FieldTooLong(field)), "{field} over the limit");
        }
    }
}

#[test]
fn the_rules_stated_in_the_skill_hold_in_the_parser() {
    let example = examples().into_iter().next().expect("an example");
    let body = &example.body;
    // "Nothing comes after it."
    assert!(block::parse(&format!("{body}\n\nThanks!")).is_err());
    assert!(block::parse(&format!("{body}\nThanks!")).is_err());
    // "Never wrap a value onto a second line."
    let wrapped = body.replacen("\ncurrent:", "\n  and more\ncurrent:", 1);
    assert_eq!(block::parse(&wrapped), Err(BlockError::Malformed));
    // "No blank lines inside it."
    let split = body.replacen("\nsummary:", "\n\nsummary:", 1);
    assert!(block::parse(&split).is_err());
    // "Do not start any other line of the response with `status:`."
    assert_eq!(block::parse(&format!("status: nearly there\n\n{body}")), Err(BlockError::Duplicate));
    // "Do not add bold, headings or other formatting to the keys."
    assert!(block::parse(&body.replace("status:", "**status:**")).is_err());
    // "`next` may be left empty only when the status is `complete`."
    let mut lines: Vec<String> = body.lines().map(str::to_string).collect();
    lines[3] = "next:".to_string();
    assert_eq!(block::parse(&lines.join("\n")), Err(BlockError::MissingField("next")));
    lines[0] = "status: complete".to_string();
    assert_eq!(block::parse(&lines.join("\n")).map(|b| b.status), Ok(BlockStatus::Complete));
}

#[test]
fn skill_md_states_the_parser_field_limit() {
    let text = skill_text();
    assert!(
        text.contains(&format!("{BLOCK_FIELD_BYTES_MAX} bytes")),
        "SKILL.md must state the parser's field cap of {BLOCK_FIELD_BYTES_MAX} bytes"
    );
    for status in [BlockStatus::Working, BlockStatus::Complete, BlockStatus::Blocked] {
        assert!(text.contains(&format!("`{}`", status.as_str())), "status {} is not explained", status.as_str());
    }
    for key in ["status:", "summary:", "current:", "next:"] {
        assert!(text.contains(&format!("`{key}`")), "key {key} is not defined");
    }
}

// ---------------------------------------------------------------------------------------
// Frontmatter: bad variants.
