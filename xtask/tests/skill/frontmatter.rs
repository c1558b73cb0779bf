//! The real `SKILL.md` keeps to its boundary and its frontmatter contract; bad variants of
//! the frontmatter are refused.

use crate::{DESCRIPTION_LINE, NAME_LINE, skill_text, validate};
use xtask::skill::{self, FrontmatterError};

#[test]
fn skill_md_leaves_out_every_orchestration_mechanism() {
    let found = skill::boundary_violations(&skill_text());
    assert!(found.is_empty(), "SKILL.md mentions mechanics that belong outside the skill: {found:?}");
}

#[test]
fn the_absence_check_can_fail() {
    for leak in [
        "If the reply stops, click Retry.",
        "Then send `continue`.",
        "Watch the browser tab.",
        "Detect execution boundaries yourself.",
        "Auto-resume will pick it up.",
        "Call the MCP tools to report your lifecycle.",
        "Work in your own worktree.",
        "Follow the project policy on commits.",
    ] {
        assert!(!skill::boundary_violations(leak).is_empty(), "not caught: {leak:?}");
    }
    assert!(skill::boundary_violations("Another execution can continue it; the table is stable.").is_empty());
}

#[test]
fn the_real_frontmatter_is_accepted() {
    let frontmatter = skill::validate_frontmatter(skill::SKILL_NAME, &skill_text()).expect("valid frontmatter");
    assert_eq!(frontmatter.name, skill::SKILL_NAME);
    assert!(frontmatter.description.chars().count() <= skill::DESCRIPTION_CHARS_MAX);
    assert!(frontmatter.description.starts_with("Use for every response"), "say when to use it");
}

// ---------------------------------------------------------------------------------------

#[test]
fn a_minimal_frontmatter_and_optional_keys_are_accepted() {
    assert!(validate(&format!("{NAME_LINE}{DESCRIPTION_LINE}")).is_ok());
    let full = format!(
        "{NAME_LINE}{DESCRIPTION_LINE}license: MIT OR Apache-2.0\ncompatibility: Any agent\n\
         metadata:\n  version: \"1\"\n  owner: someone\n"
    );
    assert!(validate(&full).is_ok());
    let quoted = "name: \"durable-continuation-output\"\ndescription: 'Use it: always.'\n";
    assert_eq!(validate(quoted).map(|f| f.description), Ok("Use it: always.".to_string()));
}

#[test]
fn name_must_match_the_folder() {
    assert_eq!(
        validate(&format!("name: continuation-output\n{DESCRIPTION_LINE}")),
        Err(FrontmatterError::NameMismatch {
            name: "continuation-output".to_string(),
            folder: skill::SKILL_NAME.to_string()
        })
    );
    assert_eq!(
        skill::validate_frontmatter("another-folder", &skill_text()).map(|f| f.name),
        Err(FrontmatterError::NameMismatch {
            name: skill::SKILL_NAME.to_string(),
            folder: "another-folder".to_string()
        })
    );
    assert_eq!(validate(DESCRIPTION_LINE), Err(FrontmatterError::NameMissing));
    assert_eq!(
        validate(&format!("name: Durable_Output\n{DESCRIPTION_LINE}")),
        Err(FrontmatterError::NameInvalid("Durable_Output".to_string()))
    );
}

#[test]
fn description_must_be_present() {
    assert_eq!(validate(NAME_LINE), Err(FrontmatterError::DescriptionMissing));
    assert_eq!(validate(&format!("{NAME_LINE}description:\n")), Err(FrontmatterError::DescriptionMissing));
    assert_eq!(validate(&format!("{NAME_LINE}description: \"  \"\n")), Err(FrontmatterError::DescriptionMissing));
}

#[test]
fn description_must_be_one_line() {
    for multiline in [
        "description: |\n  Use for every response.\n",
        "description: >-\n  Use for every response.\n",
        "description: Use for every response\n  of a long-running assignment.\n",
        "description:\n  Use for every response.\n",
    ] {
        assert_eq!(
            validate(&format!("{NAME_LINE}{multiline}")),
            Err(FrontmatterError::DescriptionMultiline),
            "{multiline:?}"
        );
    }
}

#[test]
fn description_must_be_short() {
    let at_limit = "d".repeat(skill::DESCRIPTION_CHARS_MAX);
    assert!(validate(&format!("{NAME_LINE}description: {at_limit}\n")).is_ok());
    let over = "d".repeat(skill::DESCRIPTION_CHARS_MAX + 1);
    assert_eq!(
        validate(&format!("{NAME_LINE}description: {over}\n")),
        Err(FrontmatterError::DescriptionTooLong(skill::DESCRIPTION_CHARS_MAX + 1))
    );
    // Characters, not bytes: a non-ASCII description at the limit is still accepted.
    let wide = "é".repeat(skill::DESCRIPTION_CHARS_MAX);
    assert!(validate(&format!("{NAME_LINE}description: {wide}\n")).is_ok());
}

#[test]
fn only_known_keys_once_each_in_plain_yaml() {
    assert_eq!(
        validate(&format!("{NAME_LINE}{DESCRIPTION_LINE}version: 1.0.0\n")),
        Err(FrontmatterError::UnknownKey("version".to_string()))
    );
    assert_eq!(
        validate(&format!("{NAME_LINE}descripton: typo\n")),
        Err(FrontmatterError::UnknownKey("descripton".to_string()))
    );
    assert_eq!(
        validate(&format!("{NAME_LINE}{DESCRIPTION_LINE}{DESCRIPTION_LINE}")),
        Err(FrontmatterError::DuplicateKey("description".to_string()))
    );
    assert_eq!(
        validate(&format!("{NAME_LINE}description: Use when: always\n")),
        Err(FrontmatterError::NotPlain("description".to_string()))
    );
    assert_eq!(validate(&format!("{NAME_LINE}{DESCRIPTION_LINE}just words\n")), Err(FrontmatterError::BadLine(4)));
    assert_eq!(
        validate(&format!("{NAME_LINE}{DESCRIPTION_LINE}license: MIT\n  indented: x\n")),
        Err(FrontmatterError::BadLine(5))
    );
    assert_eq!(
        validate(&format!("{NAME_LINE}{DESCRIPTION_LINE}metadata: inline\n")),
        Err(FrontmatterError::NotPlain("metadata".to_string()))
    );
}

#[test]
fn frontmatter_must_open_close_and_be_followed_by_a_body() {
    let plain = format!("---\n{NAME_LINE}{DESCRIPTION_LINE}---\n\nBody.\n");
    assert!(skill::parse_frontmatter(&plain).is_ok());
    assert!(skill::parse_frontmatter(&plain.replace('\n', "\r\n")).is_ok(), "CRLF is tolerated");
    assert_eq!(skill::parse_frontmatter("# Title\n"), Err(FrontmatterError::Missing));
    assert_eq!(skill::parse_frontmatter(&format!("\n{plain}")), Err(FrontmatterError::Missing));
    assert_eq!(
        skill::parse_frontmatter(&format!("---\n{NAME_LINE}{DESCRIPTION_LINE}")),
        Err(FrontmatterError::Unterminated)
    );
    assert_eq!(
        skill::parse_frontmatter(&format!("---\n{NAME_LINE}{DESCRIPTION_LINE}---\n \n")),
        Err(FrontmatterError::BodyEmpty)
    );
}
