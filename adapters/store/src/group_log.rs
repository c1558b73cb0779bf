//! The group log's values: one per group commit, holding every record of the group, and
//! the in-memory overlay of what the logs hold since the last checkpoint.
//!
//! A group commit is one value, a frame of the active group log file (`log_file.rs`).
//! Until a checkpoint writes its records into the `state` and `events` keyspaces (by
//! fjall's ingestion, which writes tables and no journal items), they live in an
//! [`Overlay`], which `load` and `events_after` read over the keyspaces; [`order`] tells
//! at a start which log is the active one. A store written between issue 33's first and
//! second steps kept the values as items of two fjall keyspaces, `log-a`/`log-b`, keyed
//! by commit number: [`replay_keyspaces`] reads them (`docs/store.md`).
//!
//! A log value: [`GROUP_VALUE_VERSION`], the commit number (`u64` big-endian), the
//! record count (`u32`), then per record its key length (`u8`), key bytes, value length
//! (`u32`) and value (the record's envelope, `envelope.rs`), and last a CRC32 of all
//! that. Every integer is big-endian.

use crate::error::{Corruption, Error, StoredKey};
use crate::key::{self, KeyBytes};
use engine::RecordKey;
use engine::ids::Cursor;
use fjall::Keyspace;
use std::collections::BTreeMap;
use std::ops::Bound;
use std::path::Path;

/// Format version of a log value.
pub const GROUP_VALUE_VERSION: u8 = 1;
/// Bytes of a log value before its records: version, commit number, record count.
const GROUP_HEADER_BYTES: usize = 1 + 8 + 4;
/// Bytes of the CRC32 that ends a log value.
const GROUP_CRC_BYTES: usize = 4;

/// A log value being written.
pub struct GroupWriter {
    /// The encoded value so far (the count is patched in at [`GroupWriter::finish`]).
    bytes: Vec<u8>,
    /// Records written.
    count: u32,
}

impl GroupWriter {
    /// Starts the value of commit `commit`.
    pub fn new(commit: u64) -> GroupWriter {
        let mut bytes = Vec::with_capacity(256);
        bytes.push(GROUP_VALUE_VERSION);
        bytes.extend_from_slice(&commit.to_be_bytes());
        bytes.extend_from_slice(&0u32.to_be_bytes());
        GroupWriter { bytes, count: 0 }
    }

    /// Adds one record: its key and its envelope.
    pub fn push(&mut self, key: KeyBytes, value: &[u8]) {
        let key = key.as_bytes();
        self.bytes.push(key.len() as u8);
        self.bytes.extend_from_slice(key);
        self.bytes.extend_from_slice(&(value.len() as u32).to_be_bytes());
        self.bytes.extend_from_slice(value);
        self.count += 1;
    }

    /// The finished value.
    pub fn finish(mut self) -> Vec<u8> {
        self.bytes[9..GROUP_HEADER_BYTES].copy_from_slice(&self.count.to_be_bytes());
        let crc = crc32fast::hash(&self.bytes);
        self.bytes.extend_from_slice(&crc.to_be_bytes());
        self.bytes
    }
}

/// The log key of commit `commit`.
pub fn log_key(commit: u64) -> [u8; 8] {
    commit.to_be_bytes()
}

/// The records of one decoded log entry: each key and its envelope.
pub type GroupRecords<'v> = Vec<(RecordKey, &'v [u8])>;

/// Checks one log value's checksum and version: its commit number, or what is wrong.
pub fn check_group(v: &[u8]) -> Result<u64, String> {
    if v.len() < GROUP_HEADER_BYTES + GROUP_CRC_BYTES {
        return Err(format!("{} bytes, shorter than a group header", v.len()));
    }
    let (body, crc) = v.split_at(v.len() - GROUP_CRC_BYTES);
    let stored = u32::from_be_bytes(crc.try_into().expect("four bytes"));
    let computed = crc32fast::hash(body);
    if stored != computed {
        return Err(format!("checksum {stored:#010x} stored, {computed:#010x} computed"));
    }
    if body[0] != GROUP_VALUE_VERSION {
        return Err(format!("unknown version {}", body[0]));
    }
    Ok(u64::from_be_bytes(body[1..9].try_into().expect("eight bytes")))
}

/// Decodes one log value into its commit number and records (key, envelope), checking
/// its checksum and every record key. The envelopes are checked when read.
pub fn decode_value(v: &[u8]) -> Result<(u64, GroupRecords<'_>), String> {
    let commit = check_group(v)?;
    let body = &v[..v.len() - GROUP_CRC_BYTES];
    let count = u32::from_be_bytes(body[9..GROUP_HEADER_BYTES].try_into().expect("four bytes"));
    let mut records = Vec::with_capacity(count as usize);
    let mut rest = &body[GROUP_HEADER_BYTES..];
    for index in 0..count {
        let short = || format!("record {index} of {count} runs past the end");
        let (&key_len, after) = rest.split_first().ok_or_else(short)?;
        let key_len = usize::from(key_len);
        if after.len() < key_len + 4 {
            return Err(short());
        }
        let (key_bytes, after) = after.split_at(key_len);
        let (len, after) = after.split_at(4);
        let value_len = u32::from_be_bytes(len.try_into().expect("four bytes")) as usize;
        if after.len() < value_len {
            return Err(short());
        }
        let (value, after) = after.split_at(value_len);
        let record_key = key::decode(key_bytes).ok_or_else(|| format!("record {index} has a key no version writes"))?;
        records.push((record_key, value));
        rest = after;
    }
    if !rest.is_empty() {
        return Err(format!("{} bytes after its {count} records", rest.len()));
    }
    Ok((commit, records))
}

/// Decodes one entry of a log keyspace (a store written between issue 33's first and
/// second steps, `docs/store.md`) as [`decode_value`], checking that its key is its
/// commit number.
pub fn decode_group<'v>(k: &[u8], v: &'v [u8]) -> Result<(u64, GroupRecords<'v>), Error> {
    let corrupt = |detail: String| Error::Corrupt {
        key: StoredKey(k.to_vec()),
        problem: Corruption::Payload { detail: format!("group log entry: {detail}") },
    };
    let (commit, records) = decode_value(v).map_err(corrupt)?;
    if k != log_key(commit) {
        return Err(corrupt(format!("holds commit {commit} under another key")));
    }
    Ok((commit, records))
}

/// The records the log holds since the last checkpoint, latest version per key: what
/// `load` and `events_after` read over the `state` and `events` keyspaces, and what the
/// next checkpoint writes into them.
#[derive(Debug, Default)]
pub struct Overlay {
    /// Every record but events, by key (key order is byte order, `key.rs`).
    pub state: BTreeMap<RecordKey, Vec<u8>>,
    /// Events by cursor.
    pub events: BTreeMap<u64, Vec<u8>>,
    /// Bytes of log values since the last checkpoint: when to checkpoint.
    pub log_bytes: u64,
    /// The newest commit whose records are in it (0 when none): what its checkpoint
    /// records as checkpointed ([`key::CHECKPOINT_KEY`]).
    pub commits_last: u64,
}

impl Overlay {
    /// An empty overlay.
    pub const fn new() -> Overlay {
        Overlay { state: BTreeMap::new(), events: BTreeMap::new(), log_bytes: 0, commits_last: 0 }
    }

    /// Records one record's envelope; a later one of the same key wins.
    pub fn put(&mut self, record_key: RecordKey, value: Vec<u8>) {
        match record_key {
            RecordKey::Event(cursor) => {
                self.events.insert(cursor.0, value);
            }
            other => {
                self.state.insert(other, value);
            }
        }
    }

    /// Applies one decoded log entry of commit `commit` (replay): the same as committing
    /// it again.
    pub fn apply(&mut self, commit: u64, records: GroupRecords<'_>, value_bytes: usize) {
        for (record_key, value) in records {
            self.put(record_key, value.to_vec());
        }
        self.log_bytes += value_bytes as u64;
        self.commits_last = self.commits_last.max(commit);
    }

    /// Lays `newer` (the overlay of later commits) over this one.
    pub fn extend(&mut self, newer: Overlay) {
        self.state.extend(newer.state);
        self.events.extend(newer.events);
        self.log_bytes += newer.log_bytes;
        self.commits_last = self.commits_last.max(newer.commits_last);
    }

    /// Whether nothing waits for a checkpoint.
    pub fn is_empty(&self) -> bool {
        self.state.is_empty() && self.events.is_empty()
    }

    /// Forgets everything (after a checkpoint made it durable in the keyspaces).
    pub fn clear(&mut self) {
        self.state.clear();
        self.events.clear();
        self.log_bytes = 0;
        self.commits_last = 0;
    }

    /// Events with a cursor from `first` on, ascending, as (key, envelope).
    pub fn events_from(&self, first: u64) -> impl Iterator<Item = (KeyBytes, &[u8])> {
        self.events
            .range((Bound::Included(first), Bound::Unbounded))
            .map(|(cursor, value)| (key::encode(RecordKey::Event(Cursor(*cursor))), value.as_slice()))
    }

    /// Events, newest first, as (key, envelope).
    pub fn events_newest_first(&self) -> impl Iterator<Item = (KeyBytes, &[u8])> {
        self.events
            .iter()
            .rev()
            .map(|(cursor, value)| (key::encode(RecordKey::Event(Cursor(*cursor))), value.as_slice()))
    }
}

/// Merges two streams of (key, value) sorted the same way (`descending` says which),
/// the overlay winning on equal keys: what the keyspace holds under the overlay.
pub fn merge<'a, E>(
    stored: impl Iterator<Item = Result<(Vec<u8>, Vec<u8>), E>>,
    overlay: impl Iterator<Item = (KeyBytes, &'a [u8])>,
    descending: bool,
) -> impl Iterator<Item = Result<(Vec<u8>, Vec<u8>), E>> {
    let mut stored = stored.peekable();
    let mut overlay = overlay.peekable();
    std::iter::from_fn(move || {
        let from_overlay = match (stored.peek(), overlay.peek()) {
            (None, None) => return None,
            (Some(Err(_)), _) => false,
            (Some(Ok(_)), None) => false,
            (None, Some(_)) => true,
            (Some(Ok((k, _))), Some((o, _))) => {
                let ord = k.as_slice().cmp(o.as_bytes());
                if ord == std::cmp::Ordering::Equal {
                    stored.next();
                    true
                } else {
                    (ord == std::cmp::Ordering::Greater) != descending
                }
            }
        };
        if from_overlay { overlay.next().map(|(k, v)| Ok((k.as_bytes().to_vec(), v.to_vec()))) } else { stored.next() }
    })
}

/// Writes sorted (key, value) pairs into `keyspace` by one ingestion, after `first` (a
/// store key, which sorts before every record key) if given.
pub(crate) fn ingest<'a>(
    keyspace: &Keyspace,
    first: Option<(&[u8], &[u8])>,
    entries: impl Iterator<Item = (KeyBytes, &'a [u8])>,
) -> fjall::Result<()> {
    let mut entries = entries.peekable();
    if first.is_none() && entries.peek().is_none() {
        return Ok(());
    }
    let mut ingestion = keyspace.start_ingestion()?;
    if let Some((k, v)) = first {
        assert_eq!(k.first(), Some(&key::TAG_STORE), "only a store key sorts before the records");
        ingestion.write(k, v)?;
    }
    for (k, v) in entries {
        ingestion.write(k.as_bytes(), v)?;
    }
    ingestion.finish()
}

/// One group log as a start reads it: its commits after the checkpoint and their records.
#[derive(Debug, Default)]
pub struct LogRead {
    /// The first and last commit after the checkpoint (`None`: none).
    pub range: Option<(u64, u64)>,
    /// Their records.
    pub overlay: Overlay,
}

impl LogRead {
    /// Applies one log value (of a log keyspace entry under `stored_key`, or of a log file
    /// frame when `None`), checking it whole: a value that does not decode is refused
    /// with its key, never skipped.
    pub fn apply(&mut self, stored_key: Option<&[u8]>, value: &[u8]) -> Result<(), Error> {
        let (commit, records) = match stored_key {
            Some(k) => decode_group(k, value)?,
            None => decode_value(value).map_err(|detail| Error::Corrupt {
                key: StoredKey(log_key(check_group(value).unwrap_or(0)).to_vec()),
                problem: Corruption::Payload { detail: format!("group log frame: {detail}") },
            })?,
        };
        self.range = Some((self.range.map_or(commit, |(first, _)| first), commit));
        self.overlay.apply(commit, records, value.len());
        Ok(())
    }
}

/// What the two group logs hold at a start.
#[derive(Debug)]
pub struct Replayed {
    /// Which log new commits go to: the one holding the newest commits (the first if
    /// neither holds any).
    pub active: usize,
    /// The active log's records.
    pub overlay: Overlay,
    /// The other log's records when it holds commits after the checkpoint: a checkpoint
    /// a crash interrupted, whose commits are all older than the active log's.
    pub interrupted: Option<Overlay>,
}

impl Replayed {
    /// Every record of both logs, the newer laid over the older (what `verify` reads).
    pub fn into_overlay(self) -> Overlay {
        match self.interrupted {
            Some(mut older) => {
                older.extend(self.overlay);
                older
            }
            None => self.overlay,
        }
    }
}

/// Tells which of two logs read at a start is the active one: the one with the newest
/// commits. Two logs whose commits interleave are no state the store writes: refused as
/// corrupt.
pub fn order([a, b]: [LogRead; 2]) -> Result<Replayed, Error> {
    let active = match (a.range, b.range) {
        (Some(ra), Some(rb)) if ra.1 < rb.0 => 1,
        (Some(ra), Some(rb)) if rb.1 < ra.0 => 0,
        (Some(ra), Some(rb)) => {
            return Err(Error::Corrupt {
                key: StoredKey(log_key(ra.0.max(rb.0)).to_vec()),
                problem: Corruption::Payload {
                    detail: format!(
                        "the group logs hold interleaved commits ({}..={} and {}..={}), which no checkpoint leaves",
                        ra.0, ra.1, rb.0, rb.1
                    ),
                },
            });
        }
        (None, Some(_)) => 1,
        _ => 0,
    };
    let (active_log, other) = if active == 0 { (a, b) } else { (b, a) };
    let interrupted = other.range.is_some().then_some(other.overlay);
    Ok(Replayed { active, overlay: active_log.overlay, interrupted })
}

/// Reads the two log keyspaces `log-a`/`log-b` of a store written between issue 33's
/// first and second steps (records since the last checkpoint were fjall items there),
/// skipping entries up to `checkpointed`: every record they hold that no checkpoint
/// wrote into the keyspaces, the newer commit winning (`None` when they hold none).
pub fn replay_keyspaces(dir: &Path, logs: [&Keyspace; 2], checkpointed: u64) -> Result<Option<Overlay>, Error> {
    let mut read = [LogRead::default(), LogRead::default()];
    for (log, one) in logs.into_iter().zip(&mut read) {
        // Keys are big-endian commit numbers: the iteration is in commit order.
        for entry in log.iter() {
            let (k, v) = entry.into_inner().map_err(|source| Error::Open { dir: dir.to_path_buf(), source })?;
            if <[u8; 8]>::try_from(&*k).is_ok_and(|commit| u64::from_be_bytes(commit) <= checkpointed) {
                continue;
            }
            one.apply(Some(&k), &v)?;
        }
    }
    let held = read.iter().any(|r| r.range.is_some());
    Ok(held.then(|| order(read)).transpose()?.map(Replayed::into_overlay))
}

#[cfg(test)]
mod tests {
    use super::*;
    use engine::ids::WorkerId;

    #[test]
    fn a_group_round_trips_and_a_flipped_byte_is_caught() {
        let mut writer = GroupWriter::new(7);
        writer.push(key::encode(RecordKey::Worker(WorkerId(3))), b"abc");
        writer.push(key::encode(RecordKey::Event(Cursor(9))), b"");
        let value = writer.finish();
        let (commit, records) = decode_group(&log_key(7), &value).expect("decodes");
        assert_eq!(commit, 7);
        assert_eq!(
            records,
            vec![(RecordKey::Worker(WorkerId(3)), &b"abc"[..]), (RecordKey::Event(Cursor(9)), &b""[..])]
        );
        assert!(decode_group(&log_key(8), &value).is_err(), "under another commit's key");
        for at in 0..value.len() {
            let mut bad = value.clone();
            bad[at] ^= 0x10;
            assert!(decode_group(&log_key(7), &bad).is_err(), "flip at {at}");
        }
        assert!(decode_group(&log_key(7), &value[..value.len() - 1]).is_err(), "short");
    }

    #[test]
    fn merge_lets_the_overlay_win_in_both_directions() {
        type Stored = Vec<Result<(Vec<u8>, Vec<u8>), ()>>;
        let stored = |keys: &[u64]| -> Stored {
            keys.iter()
                .map(|c| Ok((key::encode(RecordKey::Event(Cursor(*c))).as_bytes().to_vec(), b"s".to_vec())))
                .collect()
        };
        let mut overlay = Overlay::default();
        for c in [2, 4, 5] {
            overlay.put(RecordKey::Event(Cursor(c)), b"o".to_vec());
        }
        let up: Vec<(u64, Vec<u8>)> = merge(stored(&[1, 2, 3]).into_iter(), overlay.events_from(0), false)
            .map(|r| r.expect("ok"))
            .map(|(k, v)| (u64::from_be_bytes(k[1..].try_into().expect("id")), v))
            .collect();
        let o = |c: u64| (c, b"o".to_vec());
        let s = |c: u64| (c, b"s".to_vec());
        assert_eq!(up, vec![s(1), o(2), s(3), o(4), o(5)]);
        let down: Vec<(u64, Vec<u8>)> = merge(stored(&[3, 2, 1]).into_iter(), overlay.events_newest_first(), true)
            .map(|r| r.expect("ok"))
            .map(|(k, v)| (u64::from_be_bytes(k[1..].try_into().expect("id")), v))
            .collect();
        assert_eq!(down, vec![o(5), o(4), s(3), o(2), s(1)]);
    }
}
