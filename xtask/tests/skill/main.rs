//! The agent skill `durable-continuation-output` and its packaging: the real `SKILL.md` keeps
//! to its boundary and its frontmatter contract, every example in it is a block the engine's
//! parser accepts with the status it illustrates, and `skill-pack` produces the same archive
//! every time, lists exactly the skill's files and refuses secrets, local state and transcripts.//! One module per concern: `frontmatter.rs` (the real `SKILL.md`'s boundary and
//! frontmatter), `parser.rs` (its examples against the engine's parser), `package.rs` (the
//! archive); this file holds the helpers they share.

use std::fs;
use std::path::PathBuf;

use xtask::skill::{self, FrontmatterError};

mod frontmatter;
mod package;
mod parser;

/// The workspace root: the xtask crate sits directly under it.
fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn skill_dir() -> PathBuf {
    skill::skill_dir(&root())
}

fn skill_text() -> String {
    fs::read_to_string(skill_dir().join(skill::SKILL_FILE)).expect("SKILL.md is readable")
}

/// `SKILL.md` with its frontmatter lines replaced by `frontmatter`.
fn with_frontmatter(frontmatter: &str) -> String {
    let text = skill_text();
    let body = text.splitn(3, "---\n").nth(2).expect("SKILL.md has frontmatter");
    format!("---\n{frontmatter}---\n{body}")
}

const NAME_LINE: &str = "name: durable-continuation-output\n";
const DESCRIPTION_LINE: &str = "description: Use for every response of a long-running assignment.\n";

fn validate(frontmatter: &str) -> Result<skill::Frontmatter, FrontmatterError> {
    skill::validate_frontmatter(skill::SKILL_NAME, &with_frontmatter(frontmatter))
}
