//! Screening of a skill folder's files: names and contents that look like secrets, local
//! state or transcripts never go into the archive.

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
    /// A file larger than [`super::SKILL_FILE_BYTES_MAX`].
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

#[cfg(test)]
mod tests {
    use super::*;

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
