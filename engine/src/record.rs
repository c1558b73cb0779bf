//! Durable records: the unit of persistence, and the engine's state rebuilt from them.
//!
//! A store keeps the latest record per [`RecordKey`] (events are append-only). Recovery
//! loads those records in any order and rebuilds the engine ([`crate::Engine::recover`]).

use crate::event::Event;
use crate::ids::*;
use crate::model::*;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// Engine-wide counters and the installation seed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Meta {
    /// Seeds keepalive jitter; fixed for the life of the data directory.
    pub seed: u64,
    /// Next run id.
    pub next_run: u64,
    /// Next worker id.
    pub next_worker: u64,
    /// Next attempt id.
    pub next_attempt: u64,
    /// Next message id.
    pub next_message: u64,
    /// Next event cursor.
    pub next_cursor: u64,
}

impl Meta {
    /// Fresh counters for a new data directory.
    pub fn new(seed: u64) -> Meta {
        Meta { seed, next_run: 1, next_worker: 1, next_attempt: 1, next_message: 1, next_cursor: 1 }
    }
}

/// One durable record. Records are transient (built per mutation, moved into a batch),
/// so the size difference between variants costs nothing worth a box per record.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Record {
    /// Counters.
    Meta(Meta),
    /// A run.
    Run(Run),
    /// A worker's names and assignment.
    WorkerSpec(Arc<WorkerSpec>),
    /// A worker's live state.
    Worker(Worker),
    /// An execution attempt.
    Attempt(Attempt),
    /// A message.
    Message(Message),
    /// An appended event.
    Event(Event),
    /// Account-wide holds and dialog headings (appended last: older stores lack it).
    Holds(PageHolds),
    /// A run's dead-man state (appended last: older stores lack it).
    DeadMan(DeadMan),
    /// A notification in the outbox (appended last: older stores lack it).
    Notice(crate::notice::Notice),
}

/// The identity of a record; the store keeps the latest record per key.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum RecordKey {
    /// The single meta record.
    Meta,
    /// A run.
    Run(RunId),
    /// A worker spec.
    WorkerSpec(WorkerId),
    /// A worker's live state.
    Worker(WorkerId),
    /// An attempt.
    Attempt(AttemptId),
    /// A message.
    Message(MessageId),
    /// The single page-holds record.
    Holds,
    /// A run's dead-man state.
    DeadMan(RunId),
    /// A notification.
    Notice(crate::notice::NoticeId),
    /// An event.
    Event(Cursor),
}

impl Record {
    /// The key the record is stored under.
    pub fn key(&self) -> RecordKey {
        match self {
            Record::Meta(_) => RecordKey::Meta,
            Record::Run(r) => RecordKey::Run(r.id),
            Record::WorkerSpec(s) => RecordKey::WorkerSpec(s.id),
            Record::Worker(w) => RecordKey::Worker(w.id),
            Record::Attempt(a) => RecordKey::Attempt(a.id),
            Record::Message(m) => RecordKey::Message(m.id),
            Record::Event(e) => RecordKey::Event(e.cursor),
            Record::Holds(_) => RecordKey::Holds,
            Record::DeadMan(d) => RecordKey::DeadMan(d.run),
            Record::Notice(n) => RecordKey::Notice(n.id),
        }
    }
}

/// Why stored records could not be turned back into an engine.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RecoveryError {
    /// The store holds no meta record although it holds other records.
    MissingMeta,
    /// A record refers to something that does not exist.
    Dangling {
        /// The referring record.
        key: RecordKey,
        /// What is missing.
        missing: String,
    },
    /// A counter is behind an id that exists.
    CounterBehind {
        /// The counter.
        counter: &'static str,
    },
}

impl std::fmt::Display for RecoveryError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RecoveryError::MissingMeta => write!(f, "store has records but no meta record"),
            RecoveryError::Dangling { key, missing } => {
                write!(f, "record {key:?} refers to missing {missing}")
            }
            RecoveryError::CounterBehind { counter } => {
                write!(f, "counter {counter} is behind an existing id")
            }
        }
    }
}

impl std::error::Error for RecoveryError {}
