//! The agent skill `durable-continuation-output`: validation and reproducible packaging
//! (spec 000 §27.5, spec 001 C18.6).
//!
//! A skill is a folder whose `SKILL.md` opens with YAML frontmatter. [`package`] turns the
//! folder into an uploadable archive `<name>.zip` holding `<name>/SKILL.md` and the folder's
//! other files, and refuses anything it should not ship:
//! - frontmatter that an uploader would reject or read differently ([`validate_frontmatter`]);
//! - a `SKILL.md` that mentions the mechanics the skill deliberately leaves to the
//!   orchestrator ([`boundary_violations`]);
//! - files that look like secrets, local state or transcripts, by name ([`screen_name`]) or
//!   by content ([`screen_content`]), symlinks and special files.
//!
//! Every check is a pure function of names and contents, so each can be tested on a tiny
//! sample; only [`load`] and [`pack`] touch the disk. The archive itself comes from
//! [`crate::archive`], which fixes order, timestamps and permissions, so the same folder
//! always gives the same bytes.

use std::fmt;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use crate::archive::{self, ArchiveError};

/// Where skills live, relative to the workspace root.
pub const SKILLS_DIR: &str = "skills";
/// The one skill this workspace ships.
pub const SKILL_NAME: &str = "durable-continuation-output";
/// The file every skill folder must hold at its top level.
pub const SKILL_FILE: &str = "SKILL.md";
/// Where `skill-pack` writes the archive by default, relative to the workspace root.
pub const OUT_DIR_DEFAULT: &str = "target/skill";

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

/// Most files one skill folder may hold; a skill is a few documents, not a data set.
pub const SKILL_FILES_COUNT_MAX: usize = 64;
/// Largest single file in a skill folder.
pub const SKILL_FILE_BYTES_MAX: u64 = 1024 * 1024;
/// Deepest folder nesting under the skill folder.
pub const SKILL_DEPTH_MAX: usize = 8;

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

/// Why a file may not go into the archive.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// A name starting with `.`: dotfiles are configuration or local state (`.env`, `.git`,
    /// `.DS_Store`), never skill content.
    Hidden,
    /// A name outside `A-Z a-z 0-9 . _ -`, which not every unzip extracts the same way.
    UnusualName,
    /// A name that suggests a key, token, password or credential store.
    SecretName,
    /// A name that suggests local state: a database, log, lock, swap or backup file.
    LocalState,
    /// A name that suggests a conversation transcript or a network capture.
    Transcript,
    /// Content holding a private-key header.
    PrivateKey,
    /// Content holding what looks like an API token (`sk-...`, `ghp_...`, `AKIA...`).
    ApiToken,
    /// A symlink or special file: the archive holds regular files only.
    NotRegular,
    /// A file larger than [`SKILL_FILE_BYTES_MAX`].
    TooLarge,
}

impl Refusal {
    /// Why, in words, for the report.
    pub fn reason(self) -> &'static str {
        match self {
            Refusal::Hidden => "hidden files are configuration or local state",
            Refusal::UnusualName => "names may use only A-Z a-z 0-9 . _ -",
            Refusal::SecretName => "the name looks like a secret (key, token, password, credential)",
            Refusal::LocalState => "the name looks like local state (database, log, lock, swap, backup)",
            Refusal::Transcript => "the name looks like a transcript or network capture",
            Refusal::PrivateKey => "the content holds a private-key header",
            Refusal::ApiToken => "the content holds what looks like an API token",
            Refusal::NotRegular => "only regular files are packaged (no symlinks or special files)",
            Refusal::TooLarge => "the file is larger than the skill file limit",
        }
    }
}

/// Extensions of key and credential files.
const SECRET_EXTENSIONS: [&str; 10] = ["key", "pem", "p12", "pfx", "jks", "keystore", "kdbx", "gpg", "ppk", "env"];
/// Prefixes of SSH key files.
const SECRET_PREFIXES: [&str; 4] = ["id_rsa", "id_dsa", "id_ecdsa", "id_ed25519"];
/// Words that mark a file as holding a secret anywhere in its name.
const SECRET_WORDS: [&str; 8] = ["token", "secret", "credential", "password", "passwd", "apikey", "api_key", "api-key"];
/// Extensions of databases, logs, locks, swap and backup files.
const LOCAL_STATE_EXTENSIONS: [&str; 17] = [
    "sqlite",
    "sqlite3",
    "sqlite-wal",
    "sqlite-shm",
    "db",
    "db-journal",
    "db-wal",
    "db-shm",
    "log",
    "lock",
    "pid",
    "swp",
    "swo",
    "tmp",
    "bak",
    "orig",
    "cache",
];
/// Prefixes of exported conversations.
const TRANSCRIPT_PREFIXES: [&str; 4] = ["transcript", "conversation", "chatlog", "chat-log"];
/// Extensions of HTTP archives and line-delimited message logs.
const TRANSCRIPT_EXTENSIONS: [&str; 2] = ["har", "jsonl"];

/// Why the file at `path` (relative to the skill folder, `/`-separated) may not be packaged,
/// judged by the names of the file and of every folder on the way to it.
pub fn screen_name(path: &str) -> Option<Refusal> {
    path.split('/').find_map(screen_component)
}

fn screen_component(name: &str) -> Option<Refusal> {
    if name.starts_with('.') {
        return Some(Refusal::Hidden);
    }
    let lower = name.to_ascii_lowercase();
    let extension = lower.rsplit_once('.').map_or("", |(_, extension)| extension);
    if SECRET_EXTENSIONS.contains(&extension)
        || SECRET_PREFIXES.iter().any(|prefix| lower.starts_with(prefix))
        || SECRET_WORDS.iter().any(|word| lower.contains(word))
    {
        return Some(Refusal::SecretName);
    }
    if LOCAL_STATE_EXTENSIONS.contains(&extension) || lower.ends_with('~') {
        return Some(Refusal::LocalState);
    }
    if TRANSCRIPT_EXTENSIONS.contains(&extension) || TRANSCRIPT_PREFIXES.iter().any(|p| lower.starts_with(p)) {
        return Some(Refusal::Transcript);
    }
    // Checked last, so that a backup such as `notes.md~` is reported as local state.
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')) {
        return Some(Refusal::UnusualName);
    }
    None
}

/// Token prefixes and the fewest token characters that must follow for a match: OpenAI and
/// Anthropic style `sk-`, GitHub, GitLab, Slack, and AWS access key ids.
const TOKEN_PREFIXES: [(&str, usize); 13] = [
    ("sk-", 20),
    ("ghp_", 20),
    ("gho_", 20),
    ("ghu_", 20),
    ("ghs_", 20),
    ("ghr_", 20),
    ("github_pat_", 20),
    ("glpat-", 20),
    ("xoxa-", 10),
    ("xoxb-", 10),
    ("xoxp-", 10),
    ("xoxs-", 10),
    ("AKIA", 16),
];
/// Opens a PEM block; a private key's label follows on the same line.
const PEM_BEGIN: &[u8] = b"-----BEGIN ";
/// Longest PEM label looked at.
const PEM_LABEL_BYTES_MAX: usize = 64;

/// Why a file with these contents may not be packaged, if it holds a private key or a token.
pub fn screen_content(bytes: &[u8]) -> Option<Refusal> {
    if has_private_key(bytes) {
        return Some(Refusal::PrivateKey);
    }
    if has_token(bytes) {
        return Some(Refusal::ApiToken);
    }
    None
}

fn has_private_key(bytes: &[u8]) -> bool {
    find_all(bytes, PEM_BEGIN).any(|at| {
        let rest = &bytes[at + PEM_BEGIN.len()..];
        let label = &rest[..rest.len().min(PEM_LABEL_BYTES_MAX)];
        let label = label.split(|b| *b == b'-' || *b == b'\n').next().unwrap_or_default();
        find_all(label, b"PRIVATE KEY").next().is_some()
    })
}

/// A prefix at a word start followed by enough token characters, at least one a digit; a
/// digit is required so that prose such as `sk-learn-style-...` is not taken for a key.
fn has_token(bytes: &[u8]) -> bool {
    let is_token_byte = |b: &u8| b.is_ascii_alphanumeric() || *b == b'_' || *b == b'-';
    TOKEN_PREFIXES.iter().any(|(prefix, length_min)| {
        find_all(bytes, prefix.as_bytes()).any(|at| {
            let word_start = at == 0 || !is_token_byte(&bytes[at - 1]);
            let tail: Vec<u8> = bytes[at + prefix.len()..].iter().copied().take_while(is_token_byte).collect();
            word_start && tail.len() >= *length_min && tail.iter().any(u8::is_ascii_digit)
        })
    })
}

fn find_all<'b>(haystack: &'b [u8], needle: &'b [u8]) -> impl Iterator<Item = usize> + 'b {
    haystack.windows(needle.len()).enumerate().filter(move |(_, window)| *window == needle).map(|(at, _)| at)
}

/// One file of a skill folder.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SkillFile {
    /// Path relative to the skill folder, `/`-separated: the archive entry name without the
    /// leading `<skill>/`.
    pub path: String,
    /// The file's bytes, as packaged.
    pub bytes: Vec<u8>,
}

impl SkillFile {
    /// A file from a path and contents; tests build samples with it.
    pub fn new(path: &str, bytes: &[u8]) -> SkillFile {
        SkillFile { path: path.to_string(), bytes: bytes.to_vec() }
    }
}

/// Why packaging failed.
#[derive(Debug)]
pub enum PackError {
    /// Reading the skill or writing the archive failed.
    Io {
        /// The path being read or written.
        path: PathBuf,
        /// What went wrong.
        source: io::Error,
    },
    /// The skill folder's own name is not valid UTF-8 or missing.
    NotASkillDir(PathBuf),
    /// There is no `SKILL.md` at the top of the folder.
    SkillFileMissing,
    /// `SKILL.md` is not UTF-8.
    SkillFileNotUtf8,
    /// The frontmatter is refused.
    Frontmatter(FrontmatterError),
    /// `SKILL.md` mentions mechanics the skill must leave out; holds the terms found.
    Boundary(Vec<&'static str>),
    /// A file may not be packaged.
    Refused {
        /// The file's path relative to the skill folder.
        path: String,
        /// Why.
        refusal: Refusal,
    },
    /// More than [`SKILL_FILES_COUNT_MAX`] files.
    TooManyFiles,
    /// Folders nest deeper than [`SKILL_DEPTH_MAX`]; holds the path.
    TooDeep(String),
    /// Two files map to the same entry name.
    DuplicatePath(String),
    /// The archive could not be written or read back.
    Archive(ArchiveError),
    /// The archive read back does not list exactly the expected entries with their bytes.
    ArchiveMismatch {
        /// The entries the folder should give, in order.
        expected: Vec<String>,
        /// The entries the archive holds, in order.
        found: Vec<String>,
    },
}

impl PackError {
    /// The refusal, when a file was refused; lets tests match without comparing IO errors.
    pub fn refusal(&self) -> Option<Refusal> {
        match self {
            PackError::Refused { refusal, .. } => Some(*refusal),
            _ => None,
        }
    }
}

impl fmt::Display for PackError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PackError::Io { path, source } => write!(f, "{}: {source}", path.display()),
            PackError::NotASkillDir(path) => write!(f, "{} is not a skill folder with a UTF-8 name", path.display()),
            PackError::SkillFileMissing => write!(f, "the skill folder has no top-level {SKILL_FILE}"),
            PackError::SkillFileNotUtf8 => write!(f, "{SKILL_FILE} is not UTF-8"),
            PackError::Frontmatter(e) => write!(f, "{SKILL_FILE} frontmatter: {e}"),
            PackError::Boundary(terms) => write!(
                f,
                "{SKILL_FILE} mentions mechanics that stay outside the skill: {}",
                terms.iter().map(|t| format!("{t:?}")).collect::<Vec<_>>().join(", ")
            ),
            PackError::Refused { path, refusal } => write!(f, "refused {path}: {}", refusal.reason()),
            PackError::TooManyFiles => write!(f, "the skill folder holds more than {SKILL_FILES_COUNT_MAX} files"),
            PackError::TooDeep(path) => write!(f, "{path} nests deeper than {SKILL_DEPTH_MAX} folders"),
            PackError::DuplicatePath(path) => write!(f, "{path} appears twice"),
            PackError::Archive(e) => write!(f, "archive: {e}"),
            PackError::ArchiveMismatch { expected, found } => {
                write!(f, "the archive holds {found:?} instead of {expected:?}")
            }
        }
    }
}

impl std::error::Error for PackError {}

impl From<FrontmatterError> for PackError {
    fn from(e: FrontmatterError) -> PackError {
        PackError::Frontmatter(e)
    }
}

impl From<ArchiveError> for PackError {
    fn from(e: ArchiveError) -> PackError {
        PackError::Archive(e)
    }
}

fn io_error(path: &Path) -> impl FnOnce(io::Error) -> PackError + '_ {
    move |source| PackError::Io { path: path.to_path_buf(), source }
}

/// Reads every file of the skill folder at `skill_dir`, sorted by path. Names are screened
/// before a file is read, contents right after; the first refusal stops the walk.
pub fn load(skill_dir: &Path) -> Result<Vec<SkillFile>, PackError> {
    let mut files = Vec::new();
    walk(skill_dir, "", 0, &mut files)?;
    files.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(files)
}

fn walk(dir: &Path, prefix: &str, depth: usize, files: &mut Vec<SkillFile>) -> Result<(), PackError> {
    if depth > SKILL_DEPTH_MAX {
        return Err(PackError::TooDeep(prefix.to_string()));
    }
    let mut children = Vec::new();
    for entry in fs::read_dir(dir).map_err(io_error(dir))? {
        children.push(entry.map_err(io_error(dir))?.path());
    }
    // Sorted so that, of several bad files, the same one is always reported.
    children.sort();
    for path in children {
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let relative = if prefix.is_empty() { name } else { format!("{prefix}/{name}") };
        if let Some(refusal) = screen_name(&relative) {
            return Err(PackError::Refused { path: relative, refusal });
        }
        let meta = fs::symlink_metadata(&path).map_err(io_error(&path))?;
        if meta.is_dir() {
            walk(&path, &relative, depth + 1, files)?;
            continue;
        }
        if !meta.is_file() {
            return Err(PackError::Refused { path: relative, refusal: Refusal::NotRegular });
        }
        if meta.len() > SKILL_FILE_BYTES_MAX {
            return Err(PackError::Refused { path: relative, refusal: Refusal::TooLarge });
        }
        if files.len() >= SKILL_FILES_COUNT_MAX {
            return Err(PackError::TooManyFiles);
        }
        let bytes = fs::read(&path).map_err(io_error(&path))?;
        if let Some(refusal) = screen_content(&bytes) {
            return Err(PackError::Refused { path: relative, refusal });
        }
        files.push(SkillFile { path: relative, bytes });
    }
    Ok(())
}

/// A validated, verified archive of one skill, not yet on disk.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Package {
    /// The skill's name, which is also the archive's top folder.
    pub skill_name: String,
    /// The entry names, in archive order.
    pub entries: Vec<String>,
    /// The archive's bytes.
    pub bytes: Vec<u8>,
}

impl Package {
    /// `<skill>.zip`, the archive's file name.
    pub fn file_name(&self) -> String {
        format!("{}.zip", self.skill_name)
    }

    /// CRC-32 of the whole archive, printed so two builds can be compared at a glance.
    pub fn crc32(&self) -> u32 {
        crc32fast::hash(&self.bytes)
    }
}

/// The entry names for `files` of skill `skill_name`: `<skill>/<path>`, sorted.
pub fn expected_entries(skill_name: &str, files: &[SkillFile]) -> Vec<String> {
    let mut entries: Vec<String> = files.iter().map(|file| format!("{skill_name}/{}", file.path)).collect();
    entries.sort();
    entries
}

/// Loads, validates and archives the skill folder at `skill_dir`.
pub fn package(skill_dir: &Path) -> Result<Package, PackError> {
    let skill_name = skill_dir
        .file_name()
        .and_then(|name| name.to_str())
        .ok_or_else(|| PackError::NotASkillDir(skill_dir.to_path_buf()))?;
    let files = load(skill_dir)?;
    package_files(skill_name, &files)
}

/// Validates the files of skill `skill_name` and archives them: the pure core of [`package`].
pub fn package_files(skill_name: &str, files: &[SkillFile]) -> Result<Package, PackError> {
    if files.len() > SKILL_FILES_COUNT_MAX {
        return Err(PackError::TooManyFiles);
    }
    let mut sorted: Vec<&SkillFile> = files.iter().collect();
    sorted.sort_by(|a, b| a.path.cmp(&b.path));
    if let Some(pair) = sorted.windows(2).find(|pair| pair[0].path == pair[1].path) {
        return Err(PackError::DuplicatePath(pair[0].path.clone()));
    }
    for file in &sorted {
        let refusal = screen_name(&file.path).or_else(|| screen_content(&file.bytes));
        if let Some(refusal) = refusal {
            return Err(PackError::Refused { path: file.path.clone(), refusal });
        }
    }
    let skill_file = sorted.iter().find(|file| file.path == SKILL_FILE).ok_or(PackError::SkillFileMissing)?;
    let text = std::str::from_utf8(&skill_file.bytes).map_err(|_| PackError::SkillFileNotUtf8)?;
    validate_frontmatter(skill_name, text)?;
    let found = boundary_violations(text);
    if !found.is_empty() {
        return Err(PackError::Boundary(found));
    }

    let entries = expected_entries(skill_name, files);
    let contents: Vec<(&str, &[u8])> =
        entries.iter().zip(&sorted).map(|(entry, file)| (entry.as_str(), file.bytes.as_slice())).collect();
    let bytes = archive::write(&contents)?;
    verify_archive(skill_name, files, &bytes)?;
    Ok(Package { skill_name: skill_name.to_string(), entries, bytes })
}

/// Reads `bytes` back and checks that it holds exactly `files` of skill `skill_name`: every
/// entry under `<skill>/`, `<skill>/SKILL.md` among them, sorted, each with its file's bytes.
pub fn verify_archive(skill_name: &str, files: &[SkillFile], bytes: &[u8]) -> Result<(), PackError> {
    let read = archive::read(bytes)?;
    let expected = expected_entries(skill_name, files);
    let found: Vec<String> = read.iter().map(|entry| entry.name.clone()).collect();
    let mismatch = || PackError::ArchiveMismatch { expected: expected.clone(), found: found.clone() };
    if found != expected || !found.contains(&format!("{skill_name}/{SKILL_FILE}")) {
        return Err(mismatch());
    }
    let prefix = format!("{skill_name}/");
    for entry in &read {
        let path = entry.name.strip_prefix(&prefix).ok_or_else(mismatch)?;
        let file = files.iter().find(|file| file.path == path).ok_or_else(mismatch)?;
        if file.bytes != entry.data {
            return Err(mismatch());
        }
    }
    Ok(())
}

/// What [`pack`] wrote.
#[derive(Clone, Debug)]
pub struct Packed {
    /// Where the archive is.
    pub path: PathBuf,
    /// What it holds.
    pub package: Package,
}

/// Packages the skill folder at `skill_dir` into `<out_dir>/<skill>.zip`, creating `out_dir`
/// if needed, and checks that the file on disk holds exactly the packaged bytes.
pub fn pack(skill_dir: &Path, out_dir: &Path) -> Result<Packed, PackError> {
    let package = package(skill_dir)?;
    fs::create_dir_all(out_dir).map_err(io_error(out_dir))?;
    let path = out_dir.join(package.file_name());
    // Written beside the target and renamed, so a crash never leaves a half archive behind.
    let staging = out_dir.join(format!("{}.partial", package.file_name()));
    fs::write(&staging, &package.bytes).map_err(io_error(&staging))?;
    fs::rename(&staging, &path).map_err(io_error(&path))?;
    let written = fs::read(&path).map_err(io_error(&path))?;
    if written != package.bytes {
        return Err(PackError::Io { path, source: io::Error::other("the archive on disk differs from the package") });
    }
    Ok(Packed { path, package })
}

/// The canonical skill folder of the workspace at `root`.
pub fn skill_dir(root: &Path) -> PathBuf {
    root.join(SKILLS_DIR).join(SKILL_NAME)
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

    #[test]
    fn token_needs_a_word_start_length_and_a_digit() {
        let key = format!("sk-{}", "aB3".repeat(8));
        assert!(has_token(key.as_bytes()));
        assert!(has_token(format!("key={key}").as_bytes()));
        assert!(!has_token(format!("task{key}").as_bytes()));
        assert!(!has_token(b"sk-short1"));
        assert!(!has_token(b"sk-learn-is-a-library-name-without-digits"));
    }
}
