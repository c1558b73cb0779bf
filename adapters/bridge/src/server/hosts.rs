//! The book of per-host executor tokens, `DIR/executor-hosts` (docs/scale-out.md
//! "Executors on several hosts"): `orchestrator executor add HOST` issues a token good for
//! the executor id HOST only and keeps its SHA-256 here (never the token), `executor
//! remove HOST` takes it out, and the bridge cuts a removed host's live connection at its
//! next frame (a heartbeat at the latest). The file is JSON, mode 0600, replaced whole
//! (written beside, synced, renamed), and read again whenever it changed on disk, so a
//! running daemon sees every `add` and `remove` without a restart.

use executor_protocol::HostTokens;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The book's file in the data directory.
pub const HOSTS_FILE_NAME: &str = "executor-hosts";
/// Hosts in one book at most.
pub const HOSTS_MAX: usize = 256;
/// The longest book file read, in bytes (256 hosts take about 40 KiB).
const HOSTS_FILE_BYTES_MAX: u64 = 1024 * 1024;

/// Why the book could not be read or changed, with a stable code.
#[derive(Debug, thiserror::Error)]
pub enum HostsError {
    /// The host name breaks the executor id rule.
    #[error("HOST_INVALID: {0:?} is not a host id (1 to 128 printable ASCII characters, no spaces)")]
    Invalid(String),
    /// `add` of a host the book holds already.
    #[error(
        "HOST_EXISTS: {0} has a token already (`orchestrator executor remove {0}` first, then add it again for a new token)"
    )]
    Exists(String),
    /// `remove` of a host the book does not hold.
    #[error("HOST_UNKNOWN: no host {0} in the book (`orchestrator executor list` shows them)")]
    Unknown(String),
    /// The book is full.
    #[error("HOSTS_FULL: the book holds {HOSTS_MAX} hosts already; remove one first")]
    Full,
    /// The file is not a book (edited by hand, or damaged): nothing is accepted from it.
    #[error("HOSTS_CORRUPT: {path} is not a host book ({detail}); remove it to start an empty one")]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What was wrong.
        detail: String,
    },
    /// The file could not be read or written.
    #[error("HOSTS_IO: {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// The OS random source failed.
    #[error("HOSTS_RANDOM: the OS random source failed: {0}")]
    Random(String),
}

/// One host in the book.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostEntry {
    /// The executor id the token is good for.
    pub host: String,
    /// The token's SHA-256, hex (the token itself is shown once, at `add`).
    pub sha256: String,
    /// When the token was issued, ms since the Unix epoch.
    pub added_ms: u64,
}

/// The file's shape.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct BookFile {
    /// Format version (1).
    format: u32,
    /// The hosts, in the order they were added.
    hosts: Vec<HostEntry>,
}

/// The file as last read: what identified it on disk (modification time, length, inode),
/// and its hosts (`None`: it could not be read, so nothing is accepted).
type Cached = ((std::time::SystemTime, u64, u64), Option<Vec<HostEntry>>);

/// The book over `DIR/executor-hosts`.
#[derive(Debug)]
pub struct HostBook {
    path: PathBuf,
    /// The file as last read, reread when its identity on disk changes.
    cache: Mutex<Option<Cached>>,
}

impl HostBook {
    /// The book of the data directory `dir` (the file need not exist: an empty book).
    pub fn in_dir(dir: &Path) -> HostBook {
        HostBook { path: dir.join(HOSTS_FILE_NAME), cache: Mutex::new(None) }
    }

    /// The hosts, in the order they were added.
    pub fn list(&self) -> Result<Vec<HostEntry>, HostsError> {
        Ok(self.read()?.hosts)
    }

    /// Issues a token for `host` (32 random bytes, hex) and keeps its hash; the token is
    /// returned once and stored nowhere.
    pub fn add(&self, host: &str, now_ms: u64) -> Result<String, HostsError> {
        if !valid_host(host) {
            return Err(HostsError::Invalid(host.to_string()));
        }
        let mut book = self.read()?;
        if book.hosts.iter().any(|h| h.host == host) {
            return Err(HostsError::Exists(host.to_string()));
        }
        if book.hosts.len() >= HOSTS_MAX {
            return Err(HostsError::Full);
        }
        let mut bytes = [0u8; 32];
        getrandom::fill(&mut bytes).map_err(|e| HostsError::Random(e.to_string()))?;
        let token: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        book.hosts.push(HostEntry { host: host.to_string(), sha256: hash(&token), added_ms: now_ms });
        self.write(&book)?;
        Ok(token)
    }

    /// Takes `host`'s token out of the book.
    pub fn remove(&self, host: &str) -> Result<(), HostsError> {
        let mut book = self.read()?;
        let before = book.hosts.len();
        book.hosts.retain(|h| h.host != host);
        if book.hosts.len() == before {
            return Err(HostsError::Unknown(host.to_string()));
        }
        self.write(&book)
    }

    fn read(&self) -> Result<BookFile, HostsError> {
        let io = |source| HostsError::Io { path: self.path.clone(), source };
        let file = match std::fs::File::open(&self.path) {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(BookFile { format: 1, hosts: Vec::new() }),
            Err(e) => return Err(io(e)),
        };
        let mut text = String::new();
        std::io::Read::read_to_string(&mut std::io::Read::take(file, HOSTS_FILE_BYTES_MAX), &mut text).map_err(io)?;
        let corrupt = |detail: String| HostsError::Corrupt { path: self.path.clone(), detail };
        let book: BookFile = serde_json::from_str(&text).map_err(|e| corrupt(e.to_string()))?;
        if book.format != 1 {
            return Err(corrupt(format!("format {} (this daemon reads 1)", book.format)));
        }
        Ok(book)
    }

    fn write(&self, book: &BookFile) -> Result<(), HostsError> {
        let io = |source| HostsError::Io { path: self.path.clone(), source };
        let text = serde_json::to_string_pretty(book).map_err(|e| io(std::io::Error::other(e)))?;
        let beside = self.path.with_extension("new");
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create(true).truncate(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(0o600);
        }
        let mut file = options.open(&beside).map_err(io)?;
        std::io::Write::write_all(&mut file, format!("{text}\n").as_bytes()).map_err(io)?;
        file.sync_all().map_err(io)?;
        std::fs::rename(&beside, &self.path).map_err(io)?;
        if let Some(dir) = self.path.parent() {
            std::fs::File::open(dir).and_then(|d| d.sync_all()).map_err(io)?;
        }
        Ok(())
    }

    /// The hosts as the file holds them now, read again only when it changed on disk;
    /// `None` when it cannot be read (logged: nothing is accepted from a damaged book).
    fn current(&self) -> Option<Vec<HostEntry>> {
        let identity = match std::fs::metadata(&self.path) {
            Ok(m) => {
                use std::os::unix::fs::MetadataExt;
                (m.modified().unwrap_or(std::time::UNIX_EPOCH), m.len(), m.ino())
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Some(Vec::new()),
            Err(e) => {
                tracing::warn!(path = %self.path.display(), error = %e, "the host book cannot be read: no host token is accepted");
                return None;
            }
        };
        let mut cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((seen, hosts)) = cache.as_ref()
            && *seen == identity
        {
            return hosts.clone();
        }
        let hosts = match self.read() {
            Ok(book) => Some(book.hosts),
            Err(e) => {
                tracing::warn!(error = %e, "no host token is accepted until the book is fixed");
                None
            }
        };
        *cache = Some((identity, hosts.clone()));
        hosts
    }
}

impl HostTokens for HostBook {
    fn accepts(&self, executor_id: &str, token: &str) -> bool {
        let Some(hosts) = self.current() else { return false };
        let presented = hash(token);
        hosts.iter().any(|h| h.host == executor_id && same(h.sha256.as_bytes(), presented.as_bytes()))
    }
}

/// The executor id rule (`executorId` in `hello`): 1 to 128 printable ASCII characters.
pub fn valid_host(host: &str) -> bool {
    !host.is_empty() && host.len() <= 128 && host.bytes().all(|b| b.is_ascii_graphic())
}

fn hash(token: &str) -> String {
    Sha256::digest(token.as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
}

/// Compares without an early exit on the first differing byte.
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_host_token_is_good_for_its_host_only_and_until_it_is_removed() {
        let dir = tempfile::tempdir().expect("tempdir");
        let book = HostBook::in_dir(dir.path());
        assert!(!book.accepts("build-1", "anything"), "an empty book accepts nothing");
        let one = book.add("build-1", 1).expect("add");
        let two = book.add("build-2", 2).expect("add");
        assert!(book.accepts("build-1", &one));
        assert!(!book.accepts("build-2", &one), "build-1's token is not build-2's");
        assert!(!book.accepts("build-1", &two));
        assert!(matches!(book.add("build-1", 3), Err(HostsError::Exists(_))));
        let text = std::fs::read_to_string(dir.path().join(HOSTS_FILE_NAME)).expect("file");
        assert!(!text.contains(&one) && text.contains(&hash(&one)), "the hash is kept, never the token");
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(dir.path().join(HOSTS_FILE_NAME)).expect("meta").permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        book.remove("build-1").expect("remove");
        assert!(!book.accepts("build-1", &one), "removed: refused");
        assert!(book.accepts("build-2", &two));
        assert!(matches!(book.remove("build-1"), Err(HostsError::Unknown(_))));
        assert_eq!(book.list().expect("list").iter().map(|h| h.host.as_str()).collect::<Vec<_>>(), ["build-2"]);
    }

    #[test]
    fn a_damaged_book_accepts_nothing_and_says_so() {
        let dir = tempfile::tempdir().expect("tempdir");
        let book = HostBook::in_dir(dir.path());
        let token = book.add("build-1", 1).expect("add");
        std::fs::write(dir.path().join(HOSTS_FILE_NAME), "{\"format\":1,\"hosts\":[{]}").expect("damage");
        assert!(!book.accepts("build-1", &token));
        let err = book.list().expect_err("damaged");
        assert!(err.to_string().starts_with("HOSTS_CORRUPT"), "{err}");
        assert!(matches!(book.add("bad host", 1), Err(HostsError::Invalid(_))));
    }
}
