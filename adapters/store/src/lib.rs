//! The production store: the runtime's [`runtime::Store`] seam on fjall, with keys that
//! sort in a defined order and values in a versioned, checksummed envelope.
//!
//! # Layout
//! - `fjall_store.rs`: [`FjallStore`], the [`runtime::Store`] implementation: one fsynced
//!   fjall batch per group commit, bounded loads, the data-directory lock and poisoning.
//! - [`group_log`]: one fjall item per group commit (the `log-a`/`log-b` keyspaces) and
//!   the overlay of what a log holds until a checkpoint writes it into the keyspaces.
//! - `checkpoint.rs`: the two logs, their overlays and the checkpoint that runs on its
//!   own thread, off the commit path.
//! - `counters.rs`: the commit counter and the checkpointed commit, read at a start.
//! - [`key`]: record keys as big-endian byte strings (a one-byte kind tag, then the id).
//! - [`specs`]: [`specs::SpecRejoin`], each worker given its spec back as a load reads
//!   them (both stores' loads).
//! - [`envelope`]: record values: magic, format version, CRC32, postcard payload; the
//!   decode path dispatches on the version so that old versions keep loading.
//! - `error.rs`: [`Error`], the one error enum of this adapter, and [`Corruption`].
//! - [`workload`]: deterministic engine-made mutations shared by the crash test, the
//!   golden fixture and the benchmark.
//! - [`mark`]: the acknowledged high-water mark, `commits.mark`, outside fjall's journal.
//! - [`journal_scan`]: a read-only scan of fjall's journals, done before fjall opens them.
//! - [`tree_scan`]: a read-only check of lsm-tree's version and table files (their
//!   checksums), done before fjall opens them, so that damage there is refused, never a
//!   panic (which aborts inside fjall).
//! - `before_open.rs`: hard links of the database's files taken before fjall's open, so
//!   that a start refused after the open puts every file back.
//! - `verify.rs`: [`verify`] and [`salvage`], the operator's tools for a damaged store.
//! - `bin/store-crash-child.rs`: the child process the kill -9 test kills.
//!
//! # On disk
//! A data directory holds `store.lock` (an OS lock held for the life of the store),
//! `commits.mark` (the newest acknowledged commit, see [`mark`]) and `fjall/`, a fjall
//! database with four keyspaces: `state` (every record but events, latest version per
//! key), `events` (the event log, keyed by cursor, so paging it is a range scan) and
//! `log-a`/`log-b` (the group logs: one item per group commit since the last checkpoint,
//! see [`group_log`]). A commit writes one item of the active log and the commit counter;
//! past 8 MiB of active log a checkpoint starts on its own thread: it writes the frozen
//! log's records into `state` and `events` by ingestion and clears that log, while
//! commits go to the other one (at a clean close the store checkpoints what is left). The
//! commit counter's version is the format marker (version 2: records may be in the logs;
//! builds before the logs refuse it, [`key::COMMITS_VALUE_VERSION_GROUP_LOG`]). A new
//! database is made in `fjall.creating/`
//! and renamed into place, because fjall cannot reopen a database whose creation a crash
//! interrupted.
//!
//! Recovery reads all of `state`, only the newest [`Options::events_load_count_max`]
//! events and both logs (the active one, and the frozen one when a crash interrupted its
//! checkpoint: at most about 8 MiB plus [`Options::log_bytes_max`]), so `load` costs
//! what the live state costs, not what the history costs. Opening also replays fjall's
//! journal (up to about 64 MB before fjall rotates it); fjall's replay costs per item,
//! and a group commit is two items, so that stays small (see `docs/benchmarks.md`).
//!
//! Architecture Invariant: `commit` returns only after fjall fsynced the journal batch
//! that holds every record of every batch given to it (the group log item); nothing is
//! acknowledged earlier, and a batch is applied whole or not at all. A checkpoint clears
//! its log only after the ingestion that wrote its records returned (tables and version
//! fsynced); a start skips log items up to the checkpoint key (written with the last
//! ingestion), and every commit of the frozen log is older than every commit of the
//! active one.
//!
//! Architecture Invariant: a checkpoint never fails silently: its thread poisons the
//! store, and every later call fails with [`Error::Poisoned`].
//!
//! Architecture Invariant: the store never serves less than it acknowledged without
//! saying so. Every commit carries a counter; the mark names the newest acknowledged one.
//! A start whose journals or tables give back less is refused with
//! [`Error::BehindAcknowledged`] (or [`Error::JournalDamaged`]), and a refused start
//! leaves every file as it was: the journals, version and table files are checked before
//! fjall opens them, and what fjall's open cut, deleted or made is put back if a later
//! check refuses (`before_open.rs`).
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
pub mod mark;
pub mod specs;
pub mod tree_scan;
mod verify;
pub mod workload;

pub use checkpoint::KEYSPACES_LOG;
pub use error::{Corruption, Error, StoredKey};
pub use fjall_store::{
    CHECKPOINT_LOG_BYTES_DEFAULT, FjallStore, KEYSPACE_EVENTS, KEYSPACE_STATE, LOG_BYTES_MAX_DEFAULT, Options,
};
pub use verify::{SalvageReport, VerifyReport, salvage, verify};
