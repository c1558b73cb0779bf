//! [`Error`], the store's one error enum, and the details of a corrupt value.

use engine::RecordKey;
use std::fmt;
use std::path::PathBuf;

/// What went wrong in the store. Every variant says what to do about it; after a
/// `Fjall` or `Poisoned` error the store refuses further work and the daemon must exit
/// and recover by reopening.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Another process (most likely another daemon) holds the data directory.
    #[error(
        "data directory {} is locked by another process (is another orchestrator daemon running on it?); stop that process or use another data directory",
        dir.display()
    )]
    Locked {
        /// The data directory.
        dir: PathBuf,
    },
    /// The data directory or its lock file could not be created or locked.
    #[error("cannot prepare data directory {}: {source}", dir.display())]
    DataDir {
        /// The data directory.
        dir: PathBuf,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// The fjall database could not be opened (I/O error, or a journal or table that
    /// fails its checks). Nothing was skipped or repaired.
    #[error(
        "cannot open the store in {}: {source}; nothing was skipped or repaired: a corrupt journal or table needs an operator",
        dir.display()
    )]
    Open {
        /// The data directory.
        dir: PathBuf,
        /// fjall's error.
        #[source]
        source: fjall::Error,
    },
    /// fjall failed (I/O, fsync, full disk, an unreadable journal or table). The store is
    /// poisoned from here on; what was acknowledged before is on disk.
    #[error(
        "storage failure while {during} in {}: {source}; the store is poisoned: exit and restart to recover (acknowledged writes are on disk)",
        dir.display()
    )]
    Fjall {
        /// What the store was doing.
        during: &'static str,
        /// The data directory.
        dir: PathBuf,
        /// fjall's error.
        #[source]
        source: fjall::Error,
    },
    /// A group log file could not be written or synced. The store is poisoned from here
    /// on; what was acknowledged before is on disk.
    #[error(
        "storage failure while {during} in {}: {source}; the store is poisoned: exit and restart to recover (acknowledged writes are on disk)",
        path.display()
    )]
    LogFile {
        /// What the store was doing.
        during: &'static str,
        /// The log file.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// A stored value is not a valid record. It is never skipped: recovery stops here.
    #[error("corrupt record at key {key}: {problem}")]
    Corrupt {
        /// Where it is stored.
        key: StoredKey,
        /// What is wrong with it.
        problem: Corruption,
    },
    /// A record could not be encoded (nothing was written).
    #[error("cannot encode record {key:?}: {problem}")]
    Encode {
        /// The record's key.
        key: RecordKey,
        /// Why.
        problem: String,
    },
    /// The store would recover less than it acknowledged: fjall's journal or tables give
    /// back commits through `recovered`, the mark says `acknowledged` were made durable.
    /// Nothing was opened for writing and no file was changed.
    #[error(
        "store in {dir} would lose acknowledged commits: {file} recovers through commit {recovered} but {acknowledged} were acknowledged ({detail}); nothing was changed. Check it with `orchestrator store verify --data-dir DIR` and copy what is intact with `orchestrator store salvage --from DIR --to NEWDIR` (docs/store.md)",
        dir = dir.display(),
        file = file.display(),
        recovered = thousands(*recovered),
        acknowledged = thousands(*acknowledged)
    )]
    BehindAcknowledged {
        /// The data directory.
        dir: PathBuf,
        /// The damaged file (a journal, or the database directory when the loss is not in
        /// one journal file).
        file: PathBuf,
        /// The newest commit that would be recovered.
        recovered: u64,
        /// The newest commit the mark says was acknowledged.
        acknowledged: u64,
        /// Where and why recovery stops.
        detail: String,
    },
    /// A journal is damaged where no torn write can be (a sealed journal, or commits
    /// missing between two intact ones): opening would drop intact commits behind the
    /// damage. Nothing was changed.
    #[error(
        "store in {} has a damaged journal {} at offset {offset}: {detail}; nothing was changed. Check it with `orchestrator store verify --data-dir DIR` and copy what is intact with `orchestrator store salvage --from DIR --to NEWDIR` (docs/store.md)",
        dir.display(),
        file.display()
    )]
    JournalDamaged {
        /// The data directory.
        dir: PathBuf,
        /// The journal file.
        file: PathBuf,
        /// Where the damage starts.
        offset: u64,
        /// What is wrong.
        detail: String,
    },
    /// A version or table file of the database fails its checksum or format checks (or a
    /// folder is where a file belongs). fjall would fail an assertion on it and abort the
    /// process, so the store refuses before fjall opens anything. Nothing was changed.
    #[error(
        "store in {} has a damaged table or version file {}: {detail}; nothing was changed. Check it with `orchestrator store verify --data-dir DIR` and copy what is intact with `orchestrator store salvage --from DIR --to NEWDIR` (docs/store.md)",
        dir.display(),
        file.display()
    )]
    TreeDamaged {
        /// The data directory.
        dir: PathBuf,
        /// The damaged file.
        file: PathBuf,
        /// What is wrong.
        detail: String,
    },
    /// The acknowledged high-water mark exists but none of its slots is valid, so the
    /// store cannot tell what it acknowledged. Nothing was changed.
    #[error(
        "the acknowledged-commit mark {} is unreadable ({problem}); the store cannot tell whether it recovers everything it acknowledged and refuses to start; nothing was changed. `orchestrator store verify` shows what the store holds; `orchestrator store salvage` copies it to a new directory with a fresh mark (docs/store.md)",
        path.display()
    )]
    MarkUnreadable {
        /// The mark file.
        path: PathBuf,
        /// What is wrong with it.
        problem: String,
    },
    /// The store was written with an acknowledged high-water mark, but the mark file is
    /// gone. Nothing was changed.
    #[error(
        "the acknowledged-commit mark {} is missing although the store holds commits through {recovered} written with one; the store cannot tell whether it recovers everything it acknowledged and refuses to start. `orchestrator store salvage` copies what is intact to a new directory with a fresh mark (docs/store.md)",
        path.display(),
        recovered = thousands(*recovered)
    )]
    MarkMissing {
        /// Where the mark file should be.
        path: PathBuf,
        /// The newest commit the journal or tables hold.
        recovered: u64,
    },
    /// The acknowledged high-water mark could not be written or synced. The store is
    /// poisoned from here on.
    #[error("cannot write the acknowledged-commit mark {}: {source}", path.display())]
    Mark {
        /// The mark file.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// `salvage` refuses a target that already exists and is not empty.
    #[error("salvage target {} exists and is not empty; name a new directory", dir.display())]
    TargetExists {
        /// The target.
        dir: PathBuf,
    },
    /// The thread of a checkpoint could not be started. The store is poisoned from here
    /// on; what was acknowledged before is on disk (in the group log).
    #[error(
        "cannot start a checkpoint thread for the store in {}: {source}; the store is poisoned: exit and restart to recover (acknowledged writes are on disk)",
        dir.display()
    )]
    CheckpointThread {
        /// The data directory.
        dir: PathBuf,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// An earlier failure poisoned the store; it accepts no more work.
    #[error(
        "store in {} is poisoned by an earlier failure ({cause}); exit and restart to recover",
        dir.display()
    )]
    Poisoned {
        /// The data directory.
        dir: PathBuf,
        /// The first failure.
        cause: String,
    },
}

impl Error {
    /// The stable code of this error, for logs, exit messages and tests.
    pub fn code(&self) -> &'static str {
        match self {
            Error::Locked { .. } => "STORE_LOCKED",
            Error::DataDir { .. } => "STORE_DATA_DIR",
            Error::Open { .. } => "STORE_OPEN",
            Error::Fjall { .. } | Error::LogFile { .. } => "STORE_IO",
            Error::Corrupt { .. } => "STORE_CORRUPT_RECORD",
            Error::Encode { .. } => "STORE_ENCODE",
            Error::BehindAcknowledged { .. } => "STORE_BEHIND_ACKNOWLEDGED",
            Error::JournalDamaged { .. } => "STORE_JOURNAL_DAMAGED",
            Error::TreeDamaged { .. } => "STORE_TABLE_DAMAGED",
            Error::MarkUnreadable { .. } => "STORE_MARK_UNREADABLE",
            Error::MarkMissing { .. } => "STORE_MARK_MISSING",
            Error::Mark { .. } => "STORE_MARK_IO",
            Error::TargetExists { .. } => "STORE_TARGET_EXISTS",
            Error::CheckpointThread { .. } => "STORE_CHECKPOINT_THREAD",
            Error::Poisoned { .. } => "STORE_POISONED",
        }
    }
}

/// `1234567` as `1,234,567`.
pub(crate) fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A key as stored: raw bytes, shown decoded when they decode.
#[derive(Clone, PartialEq, Eq)]
pub struct StoredKey(pub Vec<u8>);

impl StoredKey {
    /// The record key the bytes encode, if they are a valid key.
    pub fn decoded(&self) -> Option<RecordKey> {
        crate::key::decode(&self.0)
    }
}

impl fmt::Display for StoredKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.decoded() {
            Some(key) => write!(f, "{key:?} (0x{})", hex(&self.0)),
            None => write!(f, "undecodable key 0x{}", hex(&self.0)),
        }
    }
}

impl fmt::Debug for StoredKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// Why a stored value is not a valid record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Corruption {
    /// The key bytes are not a key any format version writes.
    BadKey,
    /// The value is shorter than the envelope header.
    Truncated {
        /// The value's length.
        len: usize,
    },
    /// The value is longer than any record may be.
    TooLarge {
        /// The value's length.
        len: usize,
    },
    /// The value does not start with the envelope magic.
    BadMagic {
        /// The first bytes found.
        found: [u8; 4],
    },
    /// The format version is unknown to this build (written by a newer one?).
    UnknownVersion {
        /// The version found.
        version: u16,
    },
    /// The payload does not match its checksum.
    Checksum {
        /// The stored CRC32.
        stored: u32,
        /// The CRC32 of the payload as read.
        computed: u32,
    },
    /// The payload does not decode as a record of its version.
    Payload {
        /// The decoder's message.
        detail: String,
    },
    /// The payload decodes but leaves bytes over.
    TrailingBytes {
        /// How many.
        count: usize,
    },
    /// The payload is a record of another key.
    KeyMismatch {
        /// The key of the decoded record.
        record: RecordKey,
    },
    /// The record is in the wrong keyspace (an event among state records or the reverse).
    WrongKeyspace,
}

impl fmt::Display for Corruption {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Corruption::BadKey => write!(f, "the key is not a valid record key"),
            Corruption::Truncated { len } => write!(f, "value of {len} bytes is shorter than the envelope header"),
            Corruption::TooLarge { len } => write!(f, "value of {len} bytes exceeds the record size limit"),
            Corruption::BadMagic { found } => write!(f, "bad magic 0x{}", hex(found)),
            Corruption::UnknownVersion { version } => {
                write!(f, "unknown format version {version} (written by a newer build?)")
            }
            Corruption::Checksum { stored, computed } => {
                write!(f, "checksum mismatch: stored {stored:#010x}, computed {computed:#010x}")
            }
            Corruption::Payload { detail } => write!(f, "payload does not decode: {detail}"),
            Corruption::TrailingBytes { count } => write!(f, "{count} trailing bytes after the record"),
            Corruption::KeyMismatch { record } => write!(f, "the value holds the record of {record:?}"),
            Corruption::WrongKeyspace => write!(f, "the record is stored in the wrong keyspace"),
        }
    }
}

/// Lower-case hex of bytes.
pub(crate) fn hex(bytes: &[u8]) -> String {
    use fmt::Write as _;
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(out, "{b:02x}");
    }
    out
}
