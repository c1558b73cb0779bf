//! [`FjallStore`]: the runtime's store seam on a fjall database in a locked directory.

use crate::before_open::{BeforeOpen, StartGuard};
use crate::checkpoint::{KEYSPACES_LOG, LogSizes, Logs};
use crate::envelope;
use crate::error::{Corruption, Error, StoredKey};
use crate::group_log::{self, GroupWriter};
use crate::journal_scan;
use crate::key;
use crate::log_file::LOG_FILE_NAMES;
use crate::mark::{self, MarkProblem, MarkWriter};
use crate::start_checks::{precheck, read_logs};
use crate::tree_scan;
use engine::event::Event;
use engine::ids::Cursor;
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
pub(crate) const DATABASE_DIR_NAME: &str = "fjall";
/// Where a new database is made before it is renamed to [`DATABASE_DIR_NAME`].
const DATABASE_STAGING_DIR_NAME: &str = "fjall.creating";
/// Upper bound of all fjall journals: the journal a crash leaves behind is replayed on
/// open, so this bounds that part of recovery (64 MiB is fjall's minimum).
const JOURNAL_BYTES_MAX: u64 = 64 * 1024 * 1024;
/// Memtable size per keyspace. With commits in the log files and checkpoints by
/// ingestion only a store written before the log files fills memtables (its old journal
/// replayed at its first start); 16 MiB was measured best when every commit went through
/// fjall's journal (docs/benchmarks.md).
const MEMTABLE_BYTES_MAX: u64 = 16 * 1024 * 1024;
/// Default of [`Options::checkpoint_log_bytes`]: active group log bytes past which a
/// commit starts a checkpoint (a thread that writes the log's records into the `state`
/// and `events` keyspaces, after which the log file may be reused, `checkpoint.rs`). With
/// [`LOG_BYTES_MAX_DEFAULT`] it bounds what a start decodes into the overlays and the
/// memory they hold.
pub const CHECKPOINT_LOG_BYTES_DEFAULT: u64 = 8 * 1024 * 1024;
/// Default of [`Options::log_bytes_max`]: active group log bytes past which a commit
/// waits for the checkpoint in flight (one that did not finish while the log grew by
/// another [`CHECKPOINT_LOG_BYTES_DEFAULT`]). It bounds each log file (this, one group
/// and one growth step, `log_file::LOG_FILE_GROW_BYTES`); a start decodes at most two
/// logs of this size.
pub const LOG_BYTES_MAX_DEFAULT: u64 = 2 * CHECKPOINT_LOG_BYTES_DEFAULT;

/// Knobs of a [`FjallStore`].
#[derive(Clone, Debug)]
pub struct Options {
    /// Newest events `load` returns (older ones stay readable through `events_after`).
    /// The engine keeps this many in memory anyway; loading more would make recovery
    /// grow with the history.
    pub events_load_count_max: usize,
    /// Whether a clean close checkpoints the group log (so that the keyspaces alone hold
    /// every record, and the next start decodes no log). `false` leaves the log as a
    /// crash would: the recovery benchmark measures the start after a crash with it.
    pub checkpoint_on_close: bool,
    /// Active group log bytes past which a commit starts a checkpoint in the background
    /// ([`CHECKPOINT_LOG_BYTES_DEFAULT`]); the kill -9 test's child sets it small, so
    /// that kills land inside checkpoints.
    pub checkpoint_log_bytes: u64,
    /// Active group log bytes past which a commit waits for the checkpoint in flight
    /// ([`LOG_BYTES_MAX_DEFAULT`]; at least `checkpoint_log_bytes`).
    pub log_bytes_max: u64,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            events_load_count_max: engine::limits::EVENTS_RETAINED_COUNT_DEFAULT,
            checkpoint_on_close: true,
            checkpoint_log_bytes: CHECKPOINT_LOG_BYTES_DEFAULT,
            log_bytes_max: LOG_BYTES_MAX_DEFAULT,
        }
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
    /// The two group log files (one frame per group commit until a checkpoint), the
    /// overlays of their records that reads consult over `state` and `events`, and the
    /// checkpoint in flight (`checkpoint.rs`).
    logs: Logs,
    /// Bounds on what a load returns.
    options: Options,
    /// The first failure; once set, every call fails with [`Error::Poisoned`]. Shared
    /// with the checkpoint's thread, which sets it when a checkpoint fails.
    poisoned: Arc<OnceLock<String>>,
    /// The newest durable commit (the newest of the commit counter, the checkpoint key
    /// and the log files' frames).
    commits: u64,
    /// Whether the store carries the log files' format marker
    /// ([`key::COMMITS_VALUE_VERSION_LOG_FILES`]); a store an older build wrote gets it,
    /// and its log files, at its first commit.
    marked: bool,
    /// The acknowledged high-water mark, written after every durable commit.
    mark: MarkWriter,
    /// The database's files as they were before fjall opened them, kept until the first
    /// `load` (or `commit`) succeeds: a start refused after fjall's open puts back what
    /// the open cut, removed or made, so that a refused start leaves every file as it
    /// was. Declared after the fjall handles, so that this happens once fjall shut down.
    start: StartGuard,
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
        let mark_path = dir.join(mark::MARK_FILE_NAME);
        // First the mark and the journals, read-only: fjall's open cuts a journal at the
        // first entry it cannot decode, so whatever can be refused is refused before it.
        let acknowledged = match mark::read(&dir) {
            Ok(mark) => Some(mark.commits),
            Err(MarkProblem::Missing) => None,
            Err(MarkProblem::Unreadable(problem)) => return Err(Error::MarkUnreadable { path: mark_path, problem }),
            Err(MarkProblem::Io(source)) => return Err(Error::DataDir { dir, source }),
        };
        let scan = journal_scan::scan(&db_path).map_err(data_dir_error)?;
        // A store with log files commits there: its journal's counters (if any) are an
        // older build's, so only the start's own count is compared with the mark, below.
        let log_files = dir.join(LOG_FILE_NAMES[0]).exists();
        precheck(&dir, &scan, acknowledged, log_files)?;
        // Then the version and table files lsm-tree's open reads: a damaged one would
        // fail an `assert!` inside fjall, which aborts the process.
        if let Err(damage) = tree_scan::scan(&db_path, false).map_err(data_dir_error)? {
            return Err(Error::TreeDamaged { dir, file: damage.file, detail: damage.detail });
        }
        // From here a refusal puts back what the open changed: `start` is declared before
        // the fjall handles, so it is dropped (and puts the files back) after them.
        let mut start = StartGuard::new(BeforeOpen::take(&dir, &db_path, scan).map_err(data_dir_error)?);
        let (db, state, events, legacy_logs) = match open_database(&db_path) {
            Ok(opened) => opened,
            Err(source) => {
                start.refuse();
                return Err(Error::Open { dir: dir.clone(), source });
            }
        };
        let (found, counter) = match read_logs(&dir, &state, &legacy_logs) {
            Ok(found) => found,
            Err(error) => {
                start.refuse();
                return Err(error);
            }
        };
        let marked = counter.is_some_and(|(version, _)| version == key::COMMITS_VALUE_VERSION_LOG_FILES);
        // The newest commit: the counter's, the checkpoint's, or the newest log frame's.
        let newest = [
            Some(found.checkpointed),
            found.newest.into_iter().max(),
            found.legacy.as_ref().map(|overlay| overlay.commits_last),
        ]
        .into_iter()
        .flatten()
        .max()
        .unwrap_or(0);
        let recovered = match counter {
            None if newest == 0 => None,
            counter => Some(counter.map_or(0, |(_, c)| c).max(newest)),
        };
        let check = match (acknowledged, recovered) {
            // A store from before the mark existed: nothing to compare; start the mark.
            (None, None) => mark::create(&dir, 0).map_err(|source| Error::Mark { path: mark_path.clone(), source }),
            (None, Some(recovered)) => Err(Error::MarkMissing { path: mark_path.clone(), recovered }),
            (Some(acknowledged), recovered) if recovered.unwrap_or(0) < acknowledged => {
                Err(Error::BehindAcknowledged {
                    dir: dir.clone(),
                    file: dir.clone(),
                    recovered: recovered.unwrap_or(0),
                    acknowledged,
                    detail: "its group log files, journal and tables together end there".into(),
                })
            }
            (Some(_), _) => Ok(()),
        };
        if let Err(error) = check {
            start.refuse();
            return Err(error);
        }
        let commits = recovered.unwrap_or(0);
        let mark = match MarkWriter::open(&dir) {
            Ok(mark) => mark,
            Err(source) => {
                start.refuse();
                return Err(Error::Mark { path: mark_path, source });
            }
        };
        if acknowledged.is_some_and(|a| a < commits) {
            // The mark fell behind (a power loss before the OS wrote it back): catch up.
            // The mark changes, but only to what the store holds: not a refusal.
            if let Err(source) = mark.record(commits) {
                start.refuse();
                return Err(Error::Mark { path: mark_path, source });
            }
        }
        let poisoned = Arc::new(OnceLock::new());
        let logs = Logs::new(
            dir.clone(),
            state.clone(),
            events.clone(),
            legacy_logs,
            found,
            Arc::clone(&poisoned),
            LogSizes { checkpoint_log_bytes: options.checkpoint_log_bytes, log_bytes_max: options.log_bytes_max },
        );
        let logs = match logs {
            Ok(logs) => logs,
            Err(source) => {
                start.refuse();
                return Err(Error::DataDir { dir, source });
            }
        };
        Ok(FjallStore { dir, db, state, events, logs, options, poisoned, commits, marked, mark, start, _lock: lock })
    }

    /// The newest durable commit: the newest of the format marker's count, the checkpoint
    /// key and the log files' frames.
    pub fn commits(&self) -> u64 {
        self.commits
    }

    /// The data directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Whether the start found a checkpoint a crash interrupted (the log file besides the
    /// active one held commits after the checkpoint key, or a store's old log keyspaces
    /// did); the store finishes it in the background from its first commit on.
    pub fn resumed_checkpoint(&self) -> bool {
        self.logs.resumed()
    }

    /// Bytes of the active group log: what a start decodes besides a frozen log. Always
    /// under [`Options::log_bytes_max`] once a commit returned.
    pub fn group_log_bytes(&self) -> u64 {
        self.logs.active_log_bytes()
    }

    /// Waits for the checkpoint in flight, if one runs: its error if it failed (the
    /// store is poisoned then). A clean close waits too.
    pub fn checkpoint_wait(&mut self) -> Result<(), Error> {
        self.logs.wait()
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

    /// Gives a store an older build wrote its log files (synced) and then, durably, the
    /// format marker ([`key::COMMITS_VALUE_VERSION_LOG_FILES`]), before its first frame:
    /// from here an older build refuses the store instead of serving it without the
    /// frames.
    fn mark_format(&mut self) -> Result<(), Error> {
        if let Err(source) = self.logs.create_files() {
            let error = Error::DataDir { dir: self.dir.clone(), source };
            let _ = self.poisoned.set(error.to_string());
            return Err(error);
        }
        let mut batch = self.db.batch().durability(Some(PersistMode::SyncAll));
        batch.insert(&self.state, key::COMMITS_KEY, key::encode_commits(self.commits));
        batch.commit().map_err(|e| self.fail("writing the store's format marker", e))?;
        self.marked = true;
        Ok(())
    }

    /// Every state record and the newest events (see [`runtime::Store::load`]).
    fn load_records(&self) -> Result<Vec<Record>, Error> {
        let mut records = Vec::new();
        let mut specs = crate::specs::SpecRejoin::default();
        // The store's own keys (the commit counter, the checkpoint) are no records.
        let stored = self
            .state
            .iter()
            .map(entry_bytes)
            .filter(|e| !matches!(e, Ok((k, _)) if k.first() == Some(&key::TAG_STORE)));
        let frozen = self.logs.frozen().state.iter().map(|(k, v)| (key::encode(*k), v.as_slice()));
        let active = self.logs.overlay.state.iter().map(|(k, v)| (key::encode(*k), v.as_slice()));
        for entry in group_log::merge(group_log::merge(stored, frozen, false), active, false) {
            let (k, v) = entry.map_err(|e| self.fail("reading records", e))?;
            let mut record = decode_entry(&k, &v, false)?;
            specs.rejoin(&mut record);
            records.push(record);
        }
        let mut recent = Vec::new();
        let stored = self.events.iter().rev().map(entry_bytes);
        let frozen = group_log::merge(stored, self.logs.frozen().events_newest_first(), true);
        for entry in group_log::merge(frozen, self.logs.overlay.events_newest_first(), true)
            .take(self.options.events_load_count_max)
        {
            let (k, v) = entry.map_err(|e| self.fail("reading records", e))?;
            recent.push(decode_entry(&k, &v, true)?);
        }
        records.extend(recent.into_iter().rev());
        Ok(records)
    }

    /// Fails a start after fjall opened: poisons the store; once it is dropped (and
    /// fjall shut down), every file is put back as it was before the open.
    fn refuse_start(&mut self, error: Error) -> Error {
        let _ = self.poisoned.set(error.to_string());
        self.start.refuse();
        error
    }
}

/// One stored entry's key and value.
fn entry_bytes(entry: fjall::Guard) -> Result<(Vec<u8>, Vec<u8>), fjall::Error> {
    entry.into_inner().map(|(k, v)| (k.to_vec(), v.to_vec()))
}

/// Decodes one stored entry, checking that it belongs in its keyspace.
pub(crate) fn decode_entry(k: &[u8], v: &[u8], events_keyspace: bool) -> Result<Record, Error> {
    let record = envelope::decode(k, v)?;
    if !envelope::in_keyspace(record.key(), events_keyspace) {
        return Err(Error::Corrupt { key: StoredKey(k.to_vec()), problem: Corruption::WrongKeyspace });
    }
    Ok(record)
}

impl Drop for FjallStore {
    fn drop(&mut self) {
        // A store that served (or wrote) and is not poisoned leaves its records in the
        // keyspaces; one that never served leaves every file as the start found it.
        // The checkpoint in flight ends first either way (its thread holds fjall handles).
        if self.options.checkpoint_on_close && !self.start.pending() && !self.is_poisoned() {
            let _ = self.logs.close();
        } else {
            let _ = self.logs.wait();
        }
        // The mark is not synced per commit; a clean close makes it exact.
        let _ = self.mark.sync();
    }
}

/// Opens the fjall database and its keyspaces: `state`, `events` and the two group logs.
pub(crate) fn open_database(path: &Path) -> Result<(Database, Keyspace, Keyspace, [Keyspace; 2]), fjall::Error> {
    // No journal compression: a group log value is large enough for fjall to compress
    // it (LZ4) at every commit, and its replay encodes every item again (compressing it
    // again) to check the batch checksum: most of a start's time (docs/benchmarks.md).
    let db = Database::builder(path)
        .max_journaling_size(JOURNAL_BYTES_MAX)
        .journal_compression(fjall::CompressionType::None)
        .open()?;
    let keyspace_options = || KeyspaceCreateOptions::default().max_memtable_size(MEMTABLE_BYTES_MAX);
    let state = db.keyspace(KEYSPACE_STATE, keyspace_options)?;
    let events = db.keyspace(KEYSPACE_EVENTS, keyspace_options)?;
    let log_a = db.keyspace(KEYSPACES_LOG[0], keyspace_options)?;
    let log_b = db.keyspace(KEYSPACES_LOG[1], keyspace_options)?;
    Ok((db, state, events, [log_a, log_b]))
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
        let open_error = |source| Error::Open { dir: dir.to_path_buf(), source };
        let (db, state, _, _) = open_database(&staging).map_err(open_error)?;
        // The format marker: a store made here commits to log files from the start.
        state.insert(key::COMMITS_KEY, key::encode_commits(0)).map_err(open_error)?;
        db.persist(PersistMode::SyncAll).map_err(open_error)?;
    }
    // Empty log files (a leftover from a database that is gone holds nothing this one
    // has acknowledged), made before the database is renamed into place: a database with
    // the marker always has them (the directory's sync below makes both durable).
    for name in LOG_FILE_NAMES {
        File::create(dir.join(name)).and_then(|f| f.sync_all()).map_err(data_dir_error)?;
    }
    // The mark exists before the database does, so a database without a mark is one
    // written before marks existed (or one whose mark was lost, which its commit counter
    // tells apart).
    mark::create(dir, 0).map_err(|source| Error::Mark { path: dir.join(mark::MARK_FILE_NAME), source })?;
    std::fs::rename(&staging, db_path).map_err(data_dir_error)?;
    // The rename is durable once the directory holding it is synced.
    File::open(dir).and_then(|d| d.sync_all()).map_err(data_dir_error)?;
    Ok(())
}

impl runtime::Store for FjallStore {
    type Error = Error;

    fn load(&mut self) -> Result<Vec<Record>, Error> {
        self.check_poisoned()?;
        match self.load_records() {
            Ok(records) => {
                // The first full load succeeded: the start is good, and the files from
                // before the open are not needed any more.
                self.start.accept();
                Ok(records)
            }
            Err(error) if self.start.pending() => Err(self.refuse_start(error)),
            Err(error) => Err(error),
        }
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
        // Writing accepts the start: what was there before the open is superseded.
        self.start.accept();
        // A checkpoint a crash interrupted is resumed now; a failed one fails this commit.
        self.logs.before_commit()?;
        if !self.marked {
            self.mark_format()?;
        }
        let commits = self.commits + 1;
        // The whole group is one value, one frame of the active log file (`log_file.rs`).
        let mut group = GroupWriter::new(commits);
        let mut staged = Vec::with_capacity(latest.len());
        for (record_key, record) in latest {
            let value = match envelope::encode(record) {
                Ok(value) => value,
                Err(error) => {
                    let _ = self.poisoned.set(error.to_string());
                    return Err(error);
                }
            };
            group.push(key::encode(record_key), &value);
            staged.push((record_key, value));
        }
        let group = group.finish();
        let group_bytes = group.len() as u64;
        // `append` returns after the frame's write and its `fdatasync`: only then is the
        // group acknowledged. A failed write or sync poisons the store.
        self.logs.append(commits, &group)?;
        self.commits = commits;
        // Only now, with the commit durable, may the mark name it: the mark is never
        // ahead of the disk.
        if let Err(source) = self.mark.record(commits) {
            let error = Error::Mark { path: self.mark.path().to_path_buf(), source };
            let _ = self.poisoned.set(error.to_string());
            return Err(error);
        }
        for (record_key, value) in staged {
            self.logs.overlay.put(record_key, value);
        }
        self.logs.overlay.log_bytes += group_bytes;
        self.logs.overlay.commits_last = commits;
        // Starts a checkpoint in the background when the log is due; waits only when the
        // one in flight fell a whole log behind (`Options::log_bytes_max`).
        self.logs.after_commit()
    }

    fn events_after(&self, after: Cursor, limit: usize) -> Result<Vec<Event>, Error> {
        self.check_poisoned()?;
        let Some(first) = after.0.checked_add(1) else { return Ok(Vec::new()) };
        let from = key::encode(RecordKey::Event(Cursor(first)));
        let to = key::encode(RecordKey::Event(Cursor(u64::MAX)));
        let mut events = Vec::with_capacity(limit.min(engine::limits::EVENTS_PAGE_COUNT_MAX));
        let stored = self.events.range(from.as_bytes()..=to.as_bytes()).map(entry_bytes);
        let frozen = group_log::merge(stored, self.logs.frozen().events_from(first), false);
        for entry in group_log::merge(frozen, self.logs.overlay.events_from(first), false).take(limit) {
            let (k, v) = entry.map_err(|e| self.fail("reading records", e))?;
            match decode_entry(&k, &v, true)? {
                Record::Event(event) => events.push(event),
                // `decode` checked the keyspace: only events live here.
                other => unreachable!("non-event {:?} passed the keyspace check", other.key()),
            }
        }
        Ok(events)
    }
}
