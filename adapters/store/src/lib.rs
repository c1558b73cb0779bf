//! The production store: the runtime's [`runtime::Store`] seam on fjall, with keys that
//! sort in a defined order and values in a versioned, checksummed envelope.
//!
//! # Layout
//! - `fjall_store.rs`: [`FjallStore`], the [`runtime::Store`] implementation: one
//!   fdatasynced log frame per group commit, bounded loads, the data-directory lock and
//!   poisoning.
//! - [`log_file`]: the two group log files, `group-log-a`/`group-log-b`: one frame per
//!   group commit, written in place and reused after a checkpoint; what a start reads
//!   back of them, and damage no crash leaves.
//! - [`group_log`]: a group commit's value (every record of the group, checksummed), the
//!   overlay of what a log holds until a checkpoint writes it into the keyspaces, and
//!   the old log keyspaces `log-a`/`log-b` of stores written before the log files.
//! - `checkpoint.rs`: the two logs, their overlays and the checkpoint that runs on its
//!   own thread, off the commit path.
//! - `counters.rs`: the commit counter (the format marker) and the checkpointed commit,
//!   read at a start.
//! - [`key`]: record keys as big-endian byte strings (a one-byte kind tag, then the id).
//! - [`specs`]: [`specs::SpecRejoin`], each worker given its spec back as a load reads
//!   them (both stores' loads).
//! - [`envelope`]: record values: magic, format version, CRC32, postcard payload; the
//!   decode path dispatches on the version so that old versions keep loading.
//! - `error.rs`: [`Error`], the one error enum of this adapter, and [`Corruption`].
//! - [`workload`]: deterministic engine-made mutations shared by the crash test, the
//!   golden fixture and the benchmark.
//! - [`mark`]: the acknowledged high-water mark, `commits.mark`, outside fjall's journal.
//! - [`journal_scan`]: a read-only scan of fjall's journals, done before fjall opens them
//!   (they hold commits only in stores written before the log files).
//! - [`tree_scan`]: a read-only check of lsm-tree's version and table files (their
//!   checksums), done before fjall opens them, so that damage there is refused, never a
//!   panic (which aborts inside fjall).
//! - `start_checks.rs`: what a start refuses: the journal pre-scan's verdict before fjall
//!   opens, and the logs read after it (damage in a log file, a missing one).
//! - `before_open.rs`: hard links of the database's files taken before fjall's open, so
//!   that a start refused after the open puts every file back.
//! - `verify.rs`: [`verify`] and [`salvage`], the operator's tools for a damaged store.
//! - `bin/store-crash-child.rs`: the child process the kill -9 test kills.
//!
//! # On disk
//! A data directory holds `store.lock` (an OS lock held for the life of the store),
//! `commits.mark` (the newest acknowledged commit, see [`mark`]), the group log files
//! `group-log-a` and `group-log-b` (see [`log_file`]) and `fjall/`, a fjall database
//! with four keyspaces: `state` (every record but events, latest version per key, and
//! the store's own keys), `events` (the event log, keyed by cursor, so paging it is a
//! range scan) and `log-a`/`log-b` (the old log keyspaces, empty in a store this build
//! made). A commit appends one frame to the active log file and fdatasyncs it; past 8 MiB
//! of active log a checkpoint starts on its own thread: it writes the frozen log's
//! records into `state` and `events` by ingestion (tables, no journal items) with the
//! checkpoint key, while commits go to the other file, which is reused from its start (at
//! a clean close the store checkpoints what is left). The commit counter's version is the
//! format marker (version 3: records may be in the log files; every earlier build
//! refuses it, [`key::COMMITS_VALUE_VERSION_LOG_FILES`]). A new database is made in
//! `fjall.creating/` and renamed into place, because fjall cannot reopen a database
//! whose creation a crash interrupted.
//!
//! Recovery reads all of `state`, only the newest [`Options::events_load_count_max`]
//! events and both log files (the active one, and the frozen one when a crash
//! interrupted its checkpoint: at most about 8 MiB plus [`Options::log_bytes_max`] of
//! frames), so `load` costs what the live state costs, not what the history costs; fjall's
//! journal, which a start replays item by item, holds almost nothing (see
//! `docs/benchmarks.md`).
//!
//! Architecture Invariant: `commit` returns only after the frame that holds every record
//! of every batch given to it is written and fdatasynced; nothing is acknowledged
//! earlier, and a frame is applied whole or not at all (its checksum). A log file is
//! reused only once the checkpoint key covers every commit in it (the checkpoint's
//! ingestions, tables and version fsynced); a start skips frames up to the checkpoint
//! key, and every commit of the frozen log is older than every commit of the active one.
//!
//! Architecture Invariant: a checkpoint never fails silently: its thread poisons the
//! store, and every later call fails with [`Error::Poisoned`].
//!
//! Architecture Invariant: the store never serves less than it acknowledged without
//! saying so. Every commit carries a number; the mark names the newest acknowledged one.
//! A start whose log files, journals or tables give back less is refused with
//! [`Error::BehindAcknowledged`] (or [`Error::JournalDamaged`]), and a refused start
//! leaves every file as it was: the journals, version and table files are checked before
//! fjall opens them, what fjall's open cut, deleted or made is put back if a later
//! check refuses (`before_open.rs`), and the log files are only read until a start serves.
//!
//! Architecture Invariant: no damaged file reaches an `assert!` inside fjall or lsm-tree
//! (a panic there aborts the process): [`tree_scan`] checks the checksums of everything
//! their open trusts first, so damage is [`Error::TreeDamaged`], never an abort.
//!
//! Architecture Invariant: a stored value that fails its magic, version, checksum or key
//! check is reported with its key; it is never skipped.

mod before_open;
mod checkpoint;
mod counters;
pub mod envelope;
mod error;
mod fjall_store;
pub mod group_log;
pub mod journal_scan;
pub mod key;
pub mod log_file;
pub mod mark;
pub mod specs;
mod start_checks;
pub mod tree_scan;
mod verify;
pub mod workload;

pub use checkpoint::KEYSPACES_LOG;
pub use error::{Corruption, Error, StoredKey};
pub use fjall_store::{
    CHECKPOINT_LOG_BYTES_DEFAULT, FjallStore, KEYSPACE_EVENTS, KEYSPACE_STATE, LOG_BYTES_MAX_DEFAULT, Options,
};
pub use verify::{SalvageReport, VerifyReport, salvage, verify};
