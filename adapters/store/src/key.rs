//! Record keys as big-endian byte strings: a one-byte tag for the record kind, then the
//! id as a big-endian `u64` (the meta and page-holds records are the tag alone).
//!
//! Byte order equals the order of [`RecordKey`]: tags ascend in the enum's variant order
//! and big-endian ids compare like the numbers. Tags are part of the on-disk format:
//! append new ones, never renumber.

use engine::RecordKey;
use engine::ids::{AttemptId, Cursor, MessageId, RunId, WorkerId};

/// Tag of the single meta record.
pub const TAG_META: u8 = 0x01;
/// Tag of run records.
pub const TAG_RUN: u8 = 0x02;
/// Tag of worker spec records.
pub const TAG_WORKER_SPEC: u8 = 0x03;
/// Tag of worker live-state records.
pub const TAG_WORKER: u8 = 0x04;
/// Tag of attempt records.
pub const TAG_ATTEMPT: u8 = 0x05;
/// Tag of message records.
pub const TAG_MESSAGE: u8 = 0x06;
/// Tag of the single page-holds record.
pub const TAG_HOLDS: u8 = 0x07;
/// Tag of a run's dead-man record.
pub const TAG_DEAD_MAN: u8 = 0x08;
/// Tag of events (kept in their own keyspace, keyed by cursor).
pub const TAG_EVENT: u8 = 0x10;
/// A notification in the outbox (`engine::notify::Notice`), by its id.
pub const TAG_NOTICE: u8 = 0x09;

/// Tag of the store's own bookkeeping keys (never a record; `load` skips them).
pub const TAG_STORE: u8 = 0x00;
/// The store's commit counter, in the `state` keyspace. Builds before the log files wrote
/// it with every group commit, one more than the last, in the same fjall batch as its
/// records (what the journal and tables gave back after a crash was "through commit N",
/// compared with the acknowledged high-water mark, `mark.rs`); this build writes it once,
/// as the format marker ([`COMMITS_VALUE_VERSION_LOG_FILES`]), and a commit's number is
/// in its log frame.
pub const COMMITS_KEY: &[u8] = &[TAG_STORE, 0x01];
/// The newest commit whose records a checkpoint wrote into `state` and `events`, in the
/// `state` keyspace, written by the checkpoint's own ingestion (value as
/// [`encode_commits`]). A start skips group log entries up to it: their records are in
/// the keyspaces already, and a log entry of an older version must never be laid over a
/// newer one that a later checkpoint wrote (`checkpoint.rs`).
pub const CHECKPOINT_KEY: &[u8] = &[TAG_STORE, 0x02];
/// Format version of the commit counter's value in a store whose records are all in
/// `state` and `events` (the layout before the group logs): written by builds before
/// issue 33, read by every build.
pub const COMMITS_VALUE_VERSION_KEYSPACES: u8 = 1;
/// Format version of the commit counter's value in a store with group log keyspaces
/// (issue 33's first step): records committed since the last checkpoint are only in
/// `log-a`/`log-b`, which a build before them does not read; every commit writes the
/// counter. Read by this build (such a store opens, and its logs are checkpointed at its
/// first commit), never written.
pub const COMMITS_VALUE_VERSION_GROUP_LOG: u8 = 2;
/// Format version of the commit counter's value in a store with group log files
/// (`log_file.rs`): records committed since the last checkpoint are only in
/// `group-log-a`/`group-log-b`, which no earlier build reads, and the counter is written
/// once (when the store is made, or at the first commit of this build in an older
/// store), holding the commits at that moment; the newest commit is then the newest of
/// the counter, the checkpoint key and the log files. This version is the store's format
/// marker: every earlier build decodes only versions 1 and 2, so its start refuses the
/// store (`STORE_CORRUPT_RECORD`, "not a commit counter") instead of serving it without
/// its latest commits (`docs/store.md`).
pub const COMMITS_VALUE_VERSION_LOG_FILES: u8 = 3;

/// The commit counter's stored value (then the count as a big-endian `u64`), always
/// with [`COMMITS_VALUE_VERSION_LOG_FILES`]; the checkpoint key's value too.
pub fn encode_commits(commits: u64) -> [u8; 9] {
    let mut value = [0; 9];
    value[0] = COMMITS_VALUE_VERSION_LOG_FILES;
    value[1..].copy_from_slice(&commits.to_be_bytes());
    value
}

/// Decodes the commit counter's value, of any version, with its version; `None` for
/// bytes no version writes.
pub fn decode_commits_versioned(value: &[u8]) -> Option<(u8, u64)> {
    let (&version, rest) = value.split_first()?;
    matches!(
        version,
        COMMITS_VALUE_VERSION_KEYSPACES | COMMITS_VALUE_VERSION_GROUP_LOG | COMMITS_VALUE_VERSION_LOG_FILES
    )
    .then_some(())?;
    Some((version, u64::from_be_bytes(rest.try_into().ok()?)))
}

/// Decodes the commit counter's value, of any version; `None` for bytes no version
/// writes.
pub fn decode_commits(value: &[u8]) -> Option<u64> {
    decode_commits_versioned(value).map(|(_, commits)| commits)
}

/// The count of a commit counter written with every commit (versions 1 and 2), which the
/// journal pre-scan follows from batch to batch; `None` for the format marker
/// ([`COMMITS_VALUE_VERSION_LOG_FILES`], written once) and for bytes no version writes.
pub fn decode_commits_per_commit(value: &[u8]) -> Option<u64> {
    decode_commits_versioned(value).filter(|(version, _)| *version != COMMITS_VALUE_VERSION_LOG_FILES).map(|(_, c)| c)
}

/// Longest encoded key: a tag and a `u64`.
pub const KEY_BYTES_MAX: usize = 1 + 8;

/// An encoded key, on the stack.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct KeyBytes {
    bytes: [u8; KEY_BYTES_MAX],
    len: u8,
}

impl KeyBytes {
    /// The encoded bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes[..usize::from(self.len)]
    }

    fn tag_only(tag: u8) -> KeyBytes {
        let mut bytes = [0; KEY_BYTES_MAX];
        bytes[0] = tag;
        KeyBytes { bytes, len: 1 }
    }

    fn tag_id(tag: u8, id: u64) -> KeyBytes {
        let mut bytes = [0; KEY_BYTES_MAX];
        bytes[0] = tag;
        bytes[1..].copy_from_slice(&id.to_be_bytes());
        KeyBytes { bytes, len: KEY_BYTES_MAX as u8 }
    }
}

/// Encodes a record key.
pub fn encode(key: RecordKey) -> KeyBytes {
    match key {
        RecordKey::Meta => KeyBytes::tag_only(TAG_META),
        RecordKey::Run(id) => KeyBytes::tag_id(TAG_RUN, id.0),
        RecordKey::WorkerSpec(id) => KeyBytes::tag_id(TAG_WORKER_SPEC, id.0),
        RecordKey::Worker(id) => KeyBytes::tag_id(TAG_WORKER, id.0),
        RecordKey::Attempt(id) => KeyBytes::tag_id(TAG_ATTEMPT, id.0),
        RecordKey::Message(id) => KeyBytes::tag_id(TAG_MESSAGE, id.0),
        RecordKey::Holds => KeyBytes::tag_only(TAG_HOLDS),
        RecordKey::DeadMan(id) => KeyBytes::tag_id(TAG_DEAD_MAN, id.0),
        RecordKey::Notice(id) => KeyBytes::tag_id(TAG_NOTICE, id.0),
        RecordKey::Event(cursor) => KeyBytes::tag_id(TAG_EVENT, cursor.0),
    }
}

/// Decodes a key; `None` for bytes that no version of [`encode`] produces.
pub fn decode(bytes: &[u8]) -> Option<RecordKey> {
    let (&tag, rest) = bytes.split_first()?;
    if tag == TAG_META {
        return rest.is_empty().then_some(RecordKey::Meta);
    }
    if tag == TAG_HOLDS {
        return rest.is_empty().then_some(RecordKey::Holds);
    }
    let id = u64::from_be_bytes(rest.try_into().ok()?);
    match tag {
        TAG_RUN => Some(RecordKey::Run(RunId(id))),
        TAG_WORKER_SPEC => Some(RecordKey::WorkerSpec(WorkerId(id))),
        TAG_WORKER => Some(RecordKey::Worker(WorkerId(id))),
        TAG_ATTEMPT => Some(RecordKey::Attempt(AttemptId(id))),
        TAG_MESSAGE => Some(RecordKey::Message(MessageId(id))),
        TAG_DEAD_MAN => Some(RecordKey::DeadMan(RunId(id))),
        TAG_NOTICE => Some(RecordKey::Notice(engine::notify::NoticeId(id))),
        TAG_EVENT => Some(RecordKey::Event(Cursor(id))),
        _ => None,
    }
}

/// Whether the key belongs in the events keyspace.
pub fn is_event(key: RecordKey) -> bool {
    matches!(key, RecordKey::Event(_))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all_kinds(id: u64) -> [RecordKey; 10] {
        [
            RecordKey::Meta,
            RecordKey::Run(RunId(id)),
            RecordKey::WorkerSpec(WorkerId(id)),
            RecordKey::Worker(WorkerId(id)),
            RecordKey::Attempt(AttemptId(id)),
            RecordKey::Message(MessageId(id)),
            RecordKey::Holds,
            RecordKey::DeadMan(RunId(id)),
            RecordKey::Notice(engine::notify::NoticeId(id)),
            RecordKey::Event(Cursor(id)),
        ]
    }

    #[test]
    fn keys_round_trip() {
        for id in [0, 1, 255, 256, u64::MAX - 1, u64::MAX] {
            for key in all_kinds(id) {
                assert_eq!(decode(encode(key).as_bytes()), Some(key), "{key:?}");
            }
        }
    }

    #[test]
    fn byte_order_is_key_order() {
        let mut keys: Vec<RecordKey> =
            [0, 1, 2, 255, 256, 65_536, 1 << 40, u64::MAX].into_iter().flat_map(all_kinds).collect();
        keys.sort();
        keys.dedup();
        let bytes: Vec<KeyBytes> = keys.iter().map(|k| encode(*k)).collect();
        for pair in bytes.windows(2) {
            assert!(pair[0].as_bytes() < pair[1].as_bytes(), "{:?} must sort before {:?}", pair[0], pair[1]);
        }
    }

    #[test]
    fn foreign_bytes_do_not_decode() {
        assert_eq!(decode(&[]), None);
        assert_eq!(decode(&[TAG_META, 0]), None, "meta is the tag alone");
        assert_eq!(decode(&[TAG_RUN, 0, 0, 0, 1]), None, "ids are eight bytes");
        assert_eq!(decode(&[0x7f, 0, 0, 0, 0, 0, 0, 0, 1]), None, "unknown tag");
        assert_eq!(decode(&[TAG_EVENT, 0, 0, 0, 0, 0, 0, 0, 1, 0]), None, "trailing byte");
        assert_eq!(decode(COMMITS_KEY), None, "the commit counter is not a record");
    }

    #[test]
    fn commit_counter_round_trips_and_rejects_foreign_bytes() {
        for n in [0, 1, 1_900, u64::MAX] {
            assert_eq!(decode_commits(&encode_commits(n)), Some(n));
        }
        assert_eq!(decode_commits(&[]), None);
        assert_eq!(encode_commits(1)[0], COMMITS_VALUE_VERSION_LOG_FILES, "written with the log-file marker");
        assert_eq!(decode_commits_per_commit(&encode_commits(4)), None, "the marker is no per-commit counter");
        assert_eq!(decode_commits_per_commit(&[2, 0, 0, 0, 0, 0, 0, 0, 4]), Some(4));
        assert_eq!(decode_commits(&[1, 0, 0, 0, 0, 0, 0, 0, 1]), Some(1), "as builds before the group logs wrote it");
        assert_eq!(decode_commits(&[4, 0, 0, 0, 0, 0, 0, 0, 1]), None, "unknown version");
        assert_eq!(decode_commits(&[1, 0, 0, 1]), None, "short");
    }
}
