//! Record values: a versioned, checksummed envelope around a postcard payload.
//!
//! ```text
//! offset 0  magic    4 bytes  "ORCR"
//! offset 4  version  u16 big-endian (4 today)
//! offset 6  crc32    u32 big-endian, CRC-32 (IEEE) of the payload
//! offset 10 payload  postcard encoding of the record in that version's types
//! ```
//!
//! Versions are append-only. Postcard is not self-describing, so a change to the
//! engine's record types changes the meaning of the payload bytes: such a change adds a
//! version, writes it, and keeps every older version's decoder (frozen copies of the old
//! types, converted to the current ones). The golden fixture test in
//! `tests/fixtures/v1/` fails when the types move without a new version.
//!
//! - Version 1: the store's first release.
//! - Version 2: `WorkerSpec` gained `executor` (the executor kind) and `workspace` (a CLI
//!   worker's directory and branch); a version-1 spec loads as a `chatgpt` worker without
//!   a workspace. Every other record encodes as in version 1.
//! - Version 4: the page-holds record keys account holds by account (executor and worker
//!   kind) instead of by executor, so a Codex limit holds only the Codex workers of a CLI
//!   executor. A version-1 or version-2 hold of an executor loads as a hold of each of its
//!   kinds (the old record does not say whose account it was: holding more, until the same
//!   time, is the safe reading). Every other record encodes as in version 2.
//!
//! The checksum covers the payload only, so a version number is chosen at least two bits
//! away from every older one: a flipped bit of the version field then names an unknown
//! version (refused), never an older one that would read the payload differently. That is
//! why 3 is never written (one bit from 1 and from 2).

use crate::error::{Corruption, Error, StoredKey};
use engine::{Record, RecordKey};

/// First bytes of every stored value.
pub const MAGIC: [u8; 4] = *b"ORCR";
/// The first format version: postcard of `engine::Record` as of the store's first release.
pub const FORMAT_VERSION_V1: u16 = 1;
/// The second format version: worker specs carry their executor kind and workspace.
pub const FORMAT_VERSION_V2: u16 = 2;
/// The third format, numbered 4 (see the module's note on version numbers): account
/// holds keyed by executor and worker kind.
pub const FORMAT_VERSION_V4: u16 = 4;
/// The version this build writes.
pub const FORMAT_VERSION_CURRENT: u16 = FORMAT_VERSION_V4;
/// Bytes before the payload: magic, version, checksum.
pub const HEADER_BYTES: usize = 4 + 2 + 4;
/// Largest value the store writes or accepts. Engine records are bounded far below
/// this by the engine's own limits; a larger value is a bug or a corruption.
pub const VALUE_BYTES_MAX: usize = 16 * 1024 * 1024;

/// Encodes a record in the current version.
pub fn encode(record: &Record) -> Result<Vec<u8>, Error> {
    let mut out = Vec::with_capacity(256);
    out.extend_from_slice(&MAGIC);
    out.extend_from_slice(&FORMAT_VERSION_CURRENT.to_be_bytes());
    out.extend_from_slice(&[0; 4]);
    let mut out =
        postcard::to_extend(record, out).map_err(|e| Error::Encode { key: record.key(), problem: e.to_string() })?;
    if out.len() > VALUE_BYTES_MAX {
        return Err(Error::Encode {
            key: record.key(),
            problem: format!("{} bytes exceed the {VALUE_BYTES_MAX} byte limit", out.len()),
        });
    }
    let crc = crc32fast::hash(&out[HEADER_BYTES..]);
    out[6..HEADER_BYTES].copy_from_slice(&crc.to_be_bytes());
    debug_assert_eq!(&out[..4], &MAGIC);
    Ok(out)
}

/// Decodes a stored value, checking the envelope and that the record belongs to `key`.
pub fn decode(key: &[u8], value: &[u8]) -> Result<Record, Error> {
    let corrupt = |problem| Error::Corrupt { key: StoredKey(key.to_vec()), problem };
    let Some(expected) = crate::key::decode(key) else { return Err(corrupt(Corruption::BadKey)) };
    let record = decode_value(value).map_err(corrupt)?;
    let found = record.key();
    if found != expected {
        return Err(corrupt(Corruption::KeyMismatch { record: found }));
    }
    Ok(record)
}

/// Decodes a stored value without a key check.
pub fn decode_value(value: &[u8]) -> Result<Record, Corruption> {
    if value.len() < HEADER_BYTES {
        return Err(Corruption::Truncated { len: value.len() });
    }
    if value.len() > VALUE_BYTES_MAX {
        return Err(Corruption::TooLarge { len: value.len() });
    }
    let (header, payload) = value.split_at(HEADER_BYTES);
    let magic: [u8; 4] = [header[0], header[1], header[2], header[3]];
    if magic != MAGIC {
        return Err(Corruption::BadMagic { found: magic });
    }
    let version = u16::from_be_bytes([header[4], header[5]]);
    let stored = u32::from_be_bytes([header[6], header[7], header[8], header[9]]);
    let computed = crc32fast::hash(payload);
    if stored != computed {
        return Err(Corruption::Checksum { stored, computed });
    }
    decode_payload(version, payload)
}

/// Dispatches on the format version. A new version appends an arm and a module; no
/// arm is ever removed, so data written by any release keeps loading.
fn decode_payload(version: u16, payload: &[u8]) -> Result<Record, Corruption> {
    match version {
        FORMAT_VERSION_V1 => v1::decode(payload),
        FORMAT_VERSION_V2 => v2::decode(payload),
        FORMAT_VERSION_V4 => whole::<Record>(payload),
        version => Err(Corruption::UnknownVersion { version }),
    }
}

/// Whether a decoded record was expected under the given key kind (used by the store to
/// tell apart the two keyspaces).
pub(crate) fn in_keyspace(key: RecordKey, events_keyspace: bool) -> bool {
    crate::key::is_event(key) == events_keyspace
}

/// Decodes a payload that must be exactly one `T`; trailing bytes are corruption, not
/// padding.
fn whole<T: serde::de::DeserializeOwned>(payload: &[u8]) -> Result<T, Corruption> {
    let (value, rest) =
        postcard::take_from_bytes::<T>(payload).map_err(|e| Corruption::Payload { detail: e.to_string() })?;
    if !rest.is_empty() {
        return Err(Corruption::TrailingBytes { count: rest.len() });
    }
    Ok(value)
}

mod holds_v2 {
    //! The page-holds record of versions 1 and 2: account holds keyed by executor only.

    use engine::ExecutorKind;
    use engine::ids::{ExecutorId, WorkerId};
    use engine::model::{AccountHold, AccountKey, PageHolds};
    use serde::Deserialize;
    use std::collections::BTreeMap;
    use std::sync::Arc;

    /// `engine::model::PageHolds` as versions 1 and 2 wrote it.
    #[derive(Deserialize)]
    pub(super) struct PageHoldsV2 {
        accounts: BTreeMap<ExecutorId, AccountHold>,
        dialogs: BTreeMap<WorkerId, Arc<str>>,
    }

    impl PageHoldsV2 {
        /// Today's record: each executor's hold becomes a hold of each of its kinds' accounts.
        pub(super) fn upgrade(self) -> PageHolds {
            let mut accounts = BTreeMap::new();
            for (executor, hold) in self.accounts {
                for kind in ExecutorKind::ALL {
                    accounts.insert(AccountKey { executor: executor.clone(), kind }, hold.clone());
                }
            }
            PageHolds { accounts, dialogs: self.dialogs }
        }
    }
}

mod v2 {
    //! Version 2: postcard of `engine::Record` with the version-2 page-holds record (keyed
    //! by executor); every other record is today's type, unchanged since.

    use super::holds_v2::PageHoldsV2;
    use crate::error::Corruption;
    use engine::deadman::DeadMan;
    use engine::event::Event;
    use engine::model::{Attempt, Message, Run, Worker, WorkerSpec};
    use engine::{Meta, Record};
    use serde::Deserialize;
    use std::sync::Arc;

    /// `engine::Record` as version 2 wrote it: same variants in the same order.
    #[allow(clippy::large_enum_variant)]
    #[derive(Deserialize)]
    enum RecordV2 {
        Meta(Meta),
        Run(Run),
        WorkerSpec(Arc<WorkerSpec>),
        Worker(Worker),
        Attempt(Attempt),
        Message(Message),
        Event(Event),
        Holds(PageHoldsV2),
        DeadMan(DeadMan),
    }

    /// Decodes a version-2 payload into today's record.
    pub(super) fn decode(payload: &[u8]) -> Result<Record, Corruption> {
        Ok(match super::whole::<RecordV2>(payload)? {
            RecordV2::Meta(m) => Record::Meta(m),
            RecordV2::Run(r) => Record::Run(r),
            RecordV2::WorkerSpec(s) => Record::WorkerSpec(s),
            RecordV2::Worker(w) => Record::Worker(w),
            RecordV2::Attempt(a) => Record::Attempt(a),
            RecordV2::Message(m) => Record::Message(m),
            RecordV2::Event(e) => Record::Event(e),
            RecordV2::Holds(h) => Record::Holds(h.upgrade()),
            RecordV2::DeadMan(d) => Record::DeadMan(d),
        })
    }
}

mod v1 {
    //! Version 1: postcard of `engine::Record` as it was when the store shipped. The
    //! worker spec changed since (version 2) and the page-holds record (version 4), so the
    //! version-1 record is the current one with frozen copies of those two; the others
    //! are today's types, whose encoding is unchanged (enums only gained variants at their
    //! end).

    use super::holds_v2::PageHoldsV2;
    use crate::error::Corruption;
    use engine::deadman::DeadMan;
    use engine::event::Event;
    use engine::model::{Assignment, Attempt, Message, Run, Worker, WorkerSpec};
    use engine::{ExecutorKind, Meta, Record};
    use serde::Deserialize;
    use std::sync::Arc;

    /// `engine::Record` as version 1 wrote it: same variants in the same order (decoded
    /// once and moved on, like `Record`, so no variant is boxed).
    #[allow(clippy::large_enum_variant)]
    #[derive(Deserialize)]
    enum RecordV1 {
        Meta(Meta),
        Run(Run),
        WorkerSpec(WorkerSpecV1),
        Worker(Worker),
        Attempt(Attempt),
        Message(Message),
        Event(Event),
        Holds(PageHoldsV2),
        DeadMan(DeadMan),
    }

    /// `engine::model::WorkerSpec` as version 1 wrote it (no executor kind, no workspace).
    #[derive(Deserialize)]
    struct WorkerSpecV1 {
        id: engine::ids::WorkerId,
        run: engine::ids::RunId,
        name: String,
        display_name: String,
        task_summary: String,
        lane_label: String,
        worktree: Option<String>,
        assignment: Assignment,
    }

    /// Decodes a version-1 payload into today's record: a spec becomes a `chatgpt`
    /// worker's, the only kind there was.
    pub(super) fn decode(payload: &[u8]) -> Result<Record, Corruption> {
        Ok(match super::whole::<RecordV1>(payload)? {
            RecordV1::Meta(m) => Record::Meta(m),
            RecordV1::Run(r) => Record::Run(r),
            RecordV1::WorkerSpec(s) => Record::WorkerSpec(Arc::new(WorkerSpec {
                id: s.id,
                run: s.run,
                name: s.name,
                display_name: s.display_name,
                task_summary: s.task_summary,
                lane_label: s.lane_label,
                worktree: s.worktree,
                assignment: s.assignment,
                executor: ExecutorKind::Chatgpt,
                workspace: None,
            })),
            RecordV1::Worker(w) => Record::Worker(w),
            RecordV1::Attempt(a) => Record::Attempt(a),
            RecordV1::Message(m) => Record::Message(m),
            RecordV1::Event(e) => Record::Event(e),
            RecordV1::Holds(h) => Record::Holds(h.upgrade()),
            RecordV1::DeadMan(d) => Record::DeadMan(d),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use engine::Meta;

    fn meta() -> Record {
        Record::Meta(Meta::new(7))
    }

    #[test]
    fn round_trips_and_starts_with_the_header() {
        let bytes = encode(&meta()).expect("encode");
        assert_eq!(&bytes[..4], &MAGIC);
        assert_eq!(u16::from_be_bytes([bytes[4], bytes[5]]), FORMAT_VERSION_CURRENT);
        assert_eq!(decode(crate::key::encode(RecordKey::Meta).as_bytes(), &bytes).expect("decode"), meta());
    }

    /// A version-2 page-holds record, byte by byte as version 2 wrote it (postcard: the
    /// variant index, then a map keyed by executor id), loads as a hold of each kind of that
    /// executor; the same payload read as version 4 is refused, not misread.
    #[test]
    fn a_version_two_hold_of_an_executor_loads_as_a_hold_of_each_of_its_kinds() {
        let mut payload = vec![7, 1, 9]; // Record::Holds, one account, a 9-byte executor id
        payload.extend_from_slice(b"browser-1");
        payload.extend_from_slice(&[0, 0xE8, 0x07, 0x88, 0x27]); // usage limit, since 1000, until 5000
        payload.extend_from_slice(&[1, 5]); // detail: Some, 5 bytes
        payload.extend_from_slice(b"limit");
        payload.push(0); // no dialogs
        let value = |version: u16| {
            let mut v = MAGIC.to_vec();
            v.extend_from_slice(&version.to_be_bytes());
            v.extend_from_slice(&crc32fast::hash(&payload).to_be_bytes());
            v.extend_from_slice(&payload);
            v
        };
        let Ok(Record::Holds(holds)) = decode_value(&value(FORMAT_VERSION_V2)) else { panic!("a holds record") };
        let hold = engine::model::AccountHold {
            reason: engine::model::HoldReason::UsageLimit,
            since: engine::Timestamp(1_000),
            until: engine::Timestamp(5_000),
            detail: Some("limit".into()),
        };
        let kinds: Vec<_> = holds.accounts.iter().map(|(k, h)| (k.executor.to_string(), k.kind, h == &hold)).collect();
        let want: Vec<_> = engine::ExecutorKind::ALL.into_iter().map(|k| ("browser-1".to_string(), k, true)).collect();
        assert_eq!(kinds, want);
        assert!(holds.dialogs.is_empty());
        assert!(decode_value(&value(FORMAT_VERSION_V4)).is_err(), "version 4 reads the key differently");
    }

    #[test]
    fn every_single_bit_flip_is_detected() {
        let bytes = encode(&meta()).expect("encode");
        for at in 0..bytes.len() {
            for bit in 0..8 {
                let mut bad = bytes.clone();
                bad[at] ^= 1 << bit;
                assert!(decode_value(&bad).is_err(), "flip of bit {bit} at byte {at} went unnoticed");
            }
        }
    }

    #[test]
    fn problems_are_named() {
        let good = encode(&meta()).expect("encode");
        assert_eq!(decode_value(&good[..5]), Err(Corruption::Truncated { len: 5 }));
        let mut v = good.clone();
        v[4..6].copy_from_slice(&9u16.to_be_bytes());
        assert_eq!(decode_value(&v), Err(Corruption::UnknownVersion { version: 9 }));
        let mut v = good.clone();
        v.push(0);
        let crc = crc32fast::hash(&v[HEADER_BYTES..]);
        v[6..HEADER_BYTES].copy_from_slice(&crc.to_be_bytes());
        assert_eq!(decode_value(&v), Err(Corruption::TrailingBytes { count: 1 }));
        let run_key = crate::key::encode(RecordKey::Run(engine::ids::RunId(1)));
        let err = decode(run_key.as_bytes(), &good).expect_err("wrong key");
        assert!(err.to_string().contains("Run(RunId(1))"), "{err}");
        assert!(err.to_string().contains("Meta"), "{err}");
    }
}
