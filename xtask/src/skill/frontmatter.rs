//! A `SKILL.md`'s frontmatter: a deliberately small subset of YAML, parsed and checked the
//! way an uploader reads it, and the skill's name rules.

use super::SKILL_FILE;
use std::fmt;

/// The line that opens and closes the frontmatter.
const FRONTMATTER_DELIMITER: &str = "---";
/// The frontmatter keys of the Agent Skills format; any other key is refused, so a typo
/// (`descripton`) cannot silently drop the description.
pub const FRONTMATTER_KEYS: [&str; 6] =
    ["name", "description", "license", "compatibility", "metadata", "allowed-tools"];
/// The only key whose value is a nested mapping rather than a one-line string.
const KEY_METADATA: &str = "metadata";
const KEY_NAME: &str = "name";
const KEY_DESCRIPTION: &str = "description";

/// Longest skill name (the Agent Skills format's limit).
pub const NAME_CHARS_MAX: usize = 64;
/// Longest description we ship. The format allows more, but the description is what an agent
/// reads to decide when to use the skill, so one short line is the contract here.
pub const DESCRIPTION_CHARS_MAX: usize = 200;

/// The parts of the frontmatter the packaging relies on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Frontmatter {
    /// The skill's name; must equal its folder's name.
    pub name: String,
    /// When to use the skill, on one line.
    pub description: String,
}

/// Why a `SKILL.md` frontmatter was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FrontmatterError {
    /// The file does not open with a `---` line.
    Missing,
    /// No `---` line closes the frontmatter.
    Unterminated,
    /// A line (1-based, counted in the whole file) is not `key: value`.
    BadLine(usize),
    /// A key outside [`FRONTMATTER_KEYS`].
    UnknownKey(String),
    /// A key given twice.
    DuplicateKey(String),
    /// A value YAML would not read as the same one-line string (a stray `: ` or ` #`, an
    /// unbalanced quote, a leading indicator such as `[` or `&`); names the key.
    NotPlain(String),
    /// No `name`.
    NameMissing,
    /// A name that is not 1 to [`NAME_CHARS_MAX`] of `a-z`, `0-9` and single inner hyphens.
    NameInvalid(String),
    /// The name differs from the folder the file sits in.
    NameMismatch {
        /// The name in the frontmatter.
        name: String,
        /// The folder's name.
        folder: String,
    },
    /// No `description`, or an empty one.
    DescriptionMissing,
    /// A block scalar (`|`, `>`) or an indented continuation line.
    DescriptionMultiline,
    /// A description longer than [`DESCRIPTION_CHARS_MAX`] characters; holds its length.
    DescriptionTooLong(usize),
    /// Nothing after the frontmatter.
    BodyEmpty,
}

impl fmt::Display for FrontmatterError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FrontmatterError::Missing => write!(f, "{SKILL_FILE} must open with a `{FRONTMATTER_DELIMITER}` line"),
            FrontmatterError::Unterminated => write!(f, "no `{FRONTMATTER_DELIMITER}` line closes the frontmatter"),
            FrontmatterError::BadLine(line) => write!(f, "frontmatter line {line} is not `key: value`"),
            FrontmatterError::UnknownKey(key) => {
                write!(f, "unknown frontmatter key `{key}`; known keys: {}", FRONTMATTER_KEYS.join(", "))
            }
            FrontmatterError::DuplicateKey(key) => write!(f, "frontmatter key `{key}` appears twice"),
            FrontmatterError::NotPlain(key) => {
                write!(
                    f,
                    "the value of `{key}` is not a plain one-line string; quote it or drop `: `, ` #` and leading symbols"
                )
            }
            FrontmatterError::NameMissing => f.write_str("the frontmatter has no `name`"),
            FrontmatterError::NameInvalid(name) => write!(
                f,
                "name {name:?} must be 1 to {NAME_CHARS_MAX} lowercase letters, digits and single inner hyphens"
            ),
            FrontmatterError::NameMismatch { name, folder } => {
                write!(f, "name `{name}` differs from its folder `{folder}`")
            }
            FrontmatterError::DescriptionMissing => f.write_str("the frontmatter has no non-empty `description`"),
            FrontmatterError::DescriptionMultiline => f.write_str("the description must be a single line"),
            FrontmatterError::DescriptionTooLong(chars) => {
                write!(f, "the description has {chars} characters; at most {DESCRIPTION_CHARS_MAX} are allowed")
            }
            FrontmatterError::BodyEmpty => write!(f, "{SKILL_FILE} has nothing after its frontmatter"),
        }
    }
}

impl std::error::Error for FrontmatterError {}

/// Parses and checks the frontmatter of a `SKILL.md`, and that its name is `folder`.
pub fn validate_frontmatter(folder: &str, text: &str) -> Result<Frontmatter, FrontmatterError> {
    let frontmatter = parse_frontmatter(text)?;
    if frontmatter.name != folder {
        return Err(FrontmatterError::NameMismatch { name: frontmatter.name, folder: folder.to_string() });
    }
    Ok(frontmatter)
}

/// Parses and checks the frontmatter of a `SKILL.md`. A deliberately small subset of YAML:
/// top-level `key: value` lines with one-line values, plus the indented `key: value` lines of
/// `metadata`. Anything else is refused rather than guessed at.
pub fn parse_frontmatter(text: &str) -> Result<Frontmatter, FrontmatterError> {
    let mut lines = text.split('\n').map(|line| line.strip_suffix('\r').unwrap_or(line)).enumerate();
    if lines.next().map(|(_, line)| line) != Some(FRONTMATTER_DELIMITER) {
        return Err(FrontmatterError::Missing);
    }
    let mut fields: Vec<(&str, &str)> = Vec::new();
    let mut closed = false;
    for (index, line) in lines.by_ref() {
        if line == FRONTMATTER_DELIMITER {
            closed = true;
            break;
        }
        if line.trim().is_empty() {
            continue;
        }
        let line_no = index + 1;
        if line.starts_with(' ') {
            match fields.last() {
                Some(&(KEY_METADATA, "")) => {
                    let (_, value) = split_key(line.trim_start()).ok_or(FrontmatterError::BadLine(line_no))?;
                    scalar(KEY_METADATA, value)?;
                    continue;
                }
                Some(&(KEY_DESCRIPTION, _)) => return Err(FrontmatterError::DescriptionMultiline),
                _ => return Err(FrontmatterError::BadLine(line_no)),
            }
        }
        let (key, value) = split_key(line).ok_or(FrontmatterError::BadLine(line_no))?;
        if !FRONTMATTER_KEYS.contains(&key) {
            return Err(FrontmatterError::UnknownKey(key.to_string()));
        }
        if fields.iter().any(|(seen, _)| *seen == key) {
            return Err(FrontmatterError::DuplicateKey(key.to_string()));
        }
        fields.push((key, value));
    }
    if !closed {
        return Err(FrontmatterError::Unterminated);
    }
    if lines.all(|(_, line)| line.trim().is_empty()) {
        return Err(FrontmatterError::BodyEmpty);
    }

    let mut name = None;
    let mut description = None;
    for (key, raw) in fields {
        match key {
            KEY_METADATA if !raw.is_empty() => return Err(FrontmatterError::NotPlain(key.to_string())),
            KEY_METADATA => {}
            KEY_DESCRIPTION if raw.starts_with(['|', '>']) => return Err(FrontmatterError::DescriptionMultiline),
            KEY_DESCRIPTION => description = Some(scalar(key, raw)?),
            KEY_NAME => name = Some(scalar(key, raw)?),
            _ => {
                scalar(key, raw)?;
            }
        }
    }
    let name = name.ok_or(FrontmatterError::NameMissing)?;
    if !is_valid_name(&name) {
        return Err(FrontmatterError::NameInvalid(name));
    }
    let description = description.map(|d| d.trim().to_string()).filter(|d| !d.is_empty());
    let description = description.ok_or(FrontmatterError::DescriptionMissing)?;
    let chars = description.chars().count();
    if chars > DESCRIPTION_CHARS_MAX {
        return Err(FrontmatterError::DescriptionTooLong(chars));
    }
    Ok(Frontmatter { name, description })
}

/// `(key, trimmed value)` for a `key: value` or `key:` line whose key is a plain identifier.
fn split_key(line: &str) -> Option<(&str, &str)> {
    let (key, rest) = line.split_once(':')?;
    let key_ok = !key.is_empty() && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    let rest_ok = rest.is_empty() || rest.starts_with(' ');
    (key_ok && rest_ok).then(|| (key, rest.trim()))
}

/// The string a one-line YAML scalar stands for, or `NotPlain` when YAML would read it as
/// something else (a mapping, a comment, an alias, a block) or the quoting is not simple.
fn scalar(key: &str, raw: &str) -> Result<String, FrontmatterError> {
    let not_plain = || FrontmatterError::NotPlain(key.to_string());
    if raw.chars().any(char::is_control) {
        return Err(not_plain());
    }
    if let Some(quote) = raw.chars().next().filter(|c| *c == '"' || *c == '\'') {
        let inner = raw.strip_prefix(quote).and_then(|r| r.strip_suffix(quote)).ok_or_else(not_plain)?;
        // Escapes and doubled quotes are valid YAML but not worth supporting here.
        if inner.contains(quote) || inner.contains('\\') {
            return Err(not_plain());
        }
        return Ok(inner.to_string());
    }
    const INDICATORS: [char; 14] = ['[', ']', '{', '}', '&', '*', '!', '|', '>', '%', '@', '`', '#', ','];
    let indicator =
        raw.starts_with(INDICATORS) || ["-", "?", "- ", "? "].iter().any(|p| raw == *p || raw.starts_with(p));
    if indicator || raw.contains(": ") || raw.contains(" #") || raw.ends_with(':') {
        return Err(not_plain());
    }
    Ok(raw.to_string())
}

/// Whether `name` is a valid skill name: 1 to [`NAME_CHARS_MAX`] of `a-z`, `0-9` and `-`,
/// neither starting nor ending with `-`, with no `--`.
pub fn is_valid_name(name: &str) -> bool {
    (1..=NAME_CHARS_MAX).contains(&name.len())
        && name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && !name.starts_with('-')
        && !name.ends_with('-')
        && !name.contains("--")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scalars() {
        assert_eq!(scalar("k", "plain text, with commas"), Ok("plain text, with commas".to_string()));
        assert_eq!(scalar("k", "\"quoted: fine\""), Ok("quoted: fine".to_string()));
        assert_eq!(scalar("k", "'single # fine'"), Ok("single # fine".to_string()));
        for bad in
            ["a: b", "a #c", "[x]", "&anchor", "*alias", "- item", "\"open", "'a'b'", "\"a\\\"\"", "x:", "a\u{7}"]
        {
            assert_eq!(scalar("k", bad), Err(FrontmatterError::NotPlain("k".to_string())), "{bad:?}");
        }
    }

    #[test]
    fn names() {
        for good in ["a", "durable-continuation-output", "x1-2y"] {
            assert!(is_valid_name(good), "{good}");
        }
        for bad in ["", "-a", "a-", "a--b", "A", "a_b", "a b", &"a".repeat(NAME_CHARS_MAX + 1)] {
            assert!(!is_valid_name(bad), "{bad}");
        }
    }
}
