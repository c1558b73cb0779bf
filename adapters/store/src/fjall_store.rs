//! [`FjallStore`]: the runtime's store seam on a fjall database in a locked directory.

use crate::envelope;
use crate::error::{Corruption, Error, StoredKey};
use crate::key;
use engine::event::Event;
use engine::ids::{Cursor, WorkerId};
use engine::model::WorkerSpec;
use engine::{Batch, Record, RecordKey};
use fjall::{Database, Keyspace, KeyspaceCreateOptions, PersistMode};
use std::collections::BTreeMap;
use std::fs::{File, OpenOptions, TryLockError};
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

/// The keyspace of every record but events: the latest version per key.
pub const KEYSPACE_STATE: &str = "state";
/// The keyspace of the event log, keyed by cursor.
pub const KEYSPACE_EVENTS: &str = "events";
/// The lock file inside the data directory.
const LOCK_FILE_NAME: &str = "store.lock";
/// The fjall database inside the data directory.
const DATABASE_DIR_NAME: &str = "fjall";
/// Where a new database is made before it is renamed to [`DATABASE_DIR_NAME`].
const DATABASE_STAGING_DIR_NAME: &str = "fjall.creating";
/// Upper bound of all fjall journals: the journal a crash leaves behind is replayed on
/// open, so this bounds that part of recovery (64 MiB is fjall's minimum).
const JOURNAL_BYTES_MAX: u64 = 64 * 1024 * 1024;
/// Memtable size per keyspace. Smaller memtables flush sooner, so less unflushed data is
/// inserted again after a crash; but every flush writes and fsyncs a table next to the
/// journal's fsyncs, and those flushes were the tail of group-commit latency. 16 MiB
/// against 4 MiB: 64-caller p99 4.9 to 2.8 ms (store commit p99 1.9 to 1.2 ms) and no
/// measurable change in recovery, which is dominated by parsing the journal
/// (docs/benchmarks.md); fjall's default of 64 MiB doubled the worst recovery.
const MEMTABLE_BYTES_MAX: u64 = 16 * 1024 * 1024;

/// Knobs of a [`FjallStore`].
#[derive(Clone, Debug)]
pub struct Options {
    /// Newest events `load` returns (older ones stay readable through `events_after`).
    /// The engine keeps this many in memory anyway; loading more would make recovery
    /// grow with the history.
    pub events_load_count_max: usize,
}

impl Default for Options {
    fn default() -> Self {
        Options { events_load_count_max: engine::limits::EVENTS_RETAINED_COUNT_DEFAULT }
    }
}

/// The production store: records in fjall, one fsynced batch per group commit.
///
/// Contract refinement (on top of [`runtime::Store`]): `load` returns every non-event
/// record and only the newest [`Options::events_load_count_max`] events, so recovery
/// time follows the live state, not the history; `events_after` pages through all of
/// them.
pub struct FjallStore {
    /// The data directory, for error messages.
    dir: PathBuf,
    /// The database; its keyspaces below share it.
    db: Database,
    /// Every record but events.
    state: Keyspace,
    /// Events by cursor.
    events: Keyspace,
    /// Bounds on what a load returns.
    options: Options,
    /// The first failure; once set, every call fails with [`Error::Poisoned`].
    poisoned: OnceLock<String>,
    /// Holds the OS lock on the data directory. Declared last so that it is released only
    /// after fjall has shut down.
    _lock: File,
}

impl std::fmt::Debug for FjallStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FjallStore").field("dir", &self.dir).field("poisoned", &self.poisoned.get()).finish()
    }
}

impl FjallStore {
    /// Opens (or creates) the store in `dir` with default options.
    pub fn open(dir: impl AsRef<Path>) -> Result<FjallStore, Error> {
        FjallStore::open_with(dir, Options::default())
    }

    /// Opens (or creates) the store in `dir`. Fails with [`Error::Locked`] while another
    /// process has it open.
    pub fn open_with(dir: impl AsRef<Path>, options: Options) -> Result<FjallStore, Error> {
        assert!(options.events_load_count_max > 0, "a store must load at least the newest event");
        let dir = dir.as_ref().to_path_buf();
        let data_dir_error = |source| Error::DataDir { dir: dir.clone(), source };
        std::fs::create_dir_all(&dir).map_err(data_dir_error)?;
        let lock = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(dir.join(LOCK_FILE_NAME))
            .map_err(data_dir_error)?;
        match lock.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => return Err(Error::Locked { dir }),
            Err(TryLockError::Error(source)) => return Err(data_dir_error(source)),
        }
        let db_path = dir.join(DATABASE_DIR_NAME);
        if !db_path.try_exists().map_err(data_dir_error)? {
            create_database(&dir, &db_path)?;
        }
        let (db, state, events) = open_database(&db_path).map_err(|source| Error::Open { dir: dir.clone(), source })?;
        Ok(FjallStore { dir, db, state, events, options, poisoned: OnceLock::new(), _lock: lock })
    }

    /// The data directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Whether an earlier failure poisoned the store.
    pub fn is_poisoned(&self) -> bool {
        self.poisoned.get().is_some()
    }

    fn check_poisoned(&self) -> Result<(), Error> {
        match self.poisoned.get() {
            Some(cause) => Err(Error::Poisoned { dir: self.dir.clone(), cause: cause.clone() }),
            None => Ok(()),
        }
    }

    /// Turns a fjall error into the store's error and poisons the store.
    fn fail(&self, during: &'static str, source: fjall::Error) -> Error {
        let error = Error::Fjall { during, dir: self.dir.clone(), source };
        let _ = self.poisoned.set(error.to_string());
        error
    }

    /// Decodes one stored entry of `keyspace`, checking that it belongs there.
    fn decode(&self, entry: fjall::Guard, events_keyspace: bool) -> Result<Record, Error> {
        let (k, v) = entry.into_inner().map_err(|e| self.fail("reading records", e))?;
        let record = envelope::decode(&k, &v)?;
        if !envelope::in_keyspace(record.key(), events_keyspace) {
            return Err(Error::Corrupt { key: StoredKey(k.to_vec()), problem: Corruption::WrongKeyspace });
        }
        Ok(record)
    }
}

/// Opens the fjall database and its two keyspaces.
fn open_database(path: &Path) -> Result<(Database, Keyspace, Keyspace), fjall::Error> {
    let db = Database::builder(path).max_journaling_size(JOURNAL_BYTES_MAX).open()?;
    let keyspace_options = || KeyspaceCreateOptions::default().max_memtable_size(MEMTABLE_BYTES_MAX);
    let state = db.keyspace(KEYSPACE_STATE, keyspace_options)?;
    let events = db.keyspace(KEYSPACE_EVENTS, keyspace_options)?;
    Ok((db, state, events))
}

/// Creates the database in a staging directory and renames it into place. fjall does
/// not survive a crash in the middle of creating a database (the next open finds a
/// half-made directory and fails), and the kill -9 test hits exactly that; a staging
/// directory never holds data, so a leftover one is removed and made again.
fn create_database(dir: &Path, db_path: &Path) -> Result<(), Error> {
    let data_dir_error = |source| Error::DataDir { dir: dir.to_path_buf(), source };
    let staging = dir.join(DATABASE_STAGING_DIR_NAME);
    if staging.try_exists().map_err(data_dir_error)? {
        std::fs::remove_dir_all(&staging).map_err(data_dir_error)?;
    }
    {
        let (db, _, _) = open_database(&staging).map_err(|source| Error::Open { dir: dir.to_path_buf(), source })?;
        db.persist(PersistMode::SyncAll).map_err(|source| Error::Open { dir: dir.to_path_buf(), source })?;
    }
    std::fs::rename(&staging, db_path).map_err(data_dir_error)?;
    // The rename is durable once the directory holding it is synced.
    File::open(dir).and_then(|d| d.sync_all()).map_err(data_dir_error)?;
    Ok(())
}

impl runtime::Store for FjallStore {
    type Error = Error;

    fn load(&mut self) -> Result<Vec<Record>, Error> {
        self.check_poisoned()?;
        let mut records = Vec::new();
        // A worker's spec is stored as its own record (`Worker.spec` is not serialized);
        // the spec keys sort before the worker keys, so each worker gets its spec back
        // as it is read, and `load` returns the records exactly as they were committed.
        let mut specs: BTreeMap<WorkerId, Arc<WorkerSpec>> = BTreeMap::new();
        for entry in self.state.iter() {
            let mut record = self.decode(entry, false)?;
            match &mut record {
                Record::WorkerSpec(spec) => {
                    specs.insert(spec.id, spec.clone());
                }
                Record::Worker(worker) => {
                    if let Some(spec) = specs.remove(&worker.id) {
                        worker.spec = spec;
                    }
                }
                _ => {}
            }
            records.push(record);
        }
        let mut recent = Vec::new();
        for entry in self.events.iter().rev().take(self.options.events_load_count_max) {
            recent.push(self.decode(entry, true)?);
        }
        records.extend(recent.into_iter().rev());
        Ok(records)
    }

    fn commit(&mut self, batches: &[Batch]) -> Result<(), Error> {
        self.check_poisoned()?;
        // fjall gives every item of one write batch the same sequence number, so two
        // writes of one key in a batch would be ambiguous: keep the latest per key, which
        // is exactly what committing the batches one by one would leave.
        let mut latest: BTreeMap<RecordKey, &Record> = BTreeMap::new();
        for record in batches.iter().flat_map(|b| &b.records) {
            latest.insert(record.key(), record);
        }
        if latest.is_empty() {
            return Ok(());
        }
        let mut batch = self.db.batch().durability(Some(PersistMode::SyncAll));
        for (record_key, record) in latest {
            let value = match envelope::encode(record) {
                Ok(value) => value,
                Err(error) => {
                    let _ = self.poisoned.set(error.to_string());
                    return Err(error);
                }
            };
            let keyspace = if key::is_event(record_key) { &self.events } else { &self.state };
            batch.insert(keyspace, key::encode(record_key).as_bytes(), value);
        }
        // `commit` returns after the journal write and its fsync (SyncAll): only then is
        // the group acknowledged. fjall poisons itself on a failed write or fsync, and so
        // do we.
        batch.commit().map_err(|e| self.fail("committing a batch", e))
    }

    fn events_after(&self, after: Cursor, limit: usize) -> Result<Vec<Event>, Error> {
        self.check_poisoned()?;
        let Some(first) = after.0.checked_add(1) else { return Ok(Vec::new()) };
        let from = key::encode(RecordKey::Event(Cursor(first)));
        let to = key::encode(RecordKey::Event(Cursor(u64::MAX)));
        let mut events = Vec::with_capacity(limit.min(engine::limits::EVENTS_PAGE_COUNT_MAX));
        for entry in self.events.range(from.as_bytes()..=to.as_bytes()).take(limit) {
            match self.decode(entry, true)? {
                Record::Event(event) => events.push(event),
                // `decode` checked the keyspace: only events live here.
                other => unreachable!("non-event {:?} passed the keyspace check", other.key()),
            }
        }
        Ok(events)
    }
}
