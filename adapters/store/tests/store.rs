//! The fjall store against the runtime's contract suite, then its own promises: reopen
//! in a loop, torn and corrupt journal tails, corrupt values reported with their key,
//! the data-directory lock, a store written before the group log, checkpoints across
//! crash-like and clean closes.

mod support;

use engine::ids::{Cursor, WorkerId};
use engine::{Record, RecordKey};
use runtime::Store;
use runtime::contract::{Harness, check_all};
use std::path::{Path, PathBuf};
use store::{Corruption, Error, FjallStore, KEYSPACE_EVENTS, KEYSPACE_STATE, Options};
use support::{Prefix, assert_crash_child_prefix, read_all, splitmix, write_pre_group_log_store};

/// Fresh stores in temporary directories that live as long as the harness.
#[derive(Default)]
struct Fjall {
    dirs: Vec<tempfile::TempDir>,
}

impl Harness for Fjall {
    type S = FjallStore;
    fn fresh(&mut self) -> FjallStore {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = FjallStore::open(dir.path()).expect("open");
        self.dirs.push(dir);
        store
    }
    fn reopen(&mut self, store: FjallStore) -> FjallStore {
        let dir = store.dir().to_path_buf();
        drop(store);
        FjallStore::open(dir).expect("reopen")
    }
}

#[test]
fn fjall_store_passes_the_contract() {
    check_all(&mut Fjall::default());
}

#[test]
fn reopen_in_a_loop_keeps_every_commit() {
    const ROUNDS: u64 = 50;
    let dir = tempfile::tempdir().expect("tempdir");
    let mut prefix = Prefix::crash_child();
    let mut rng = 5;
    for round in 0..ROUNDS {
        let mut store = FjallStore::open(dir.path()).expect("open");
        let (stored, _) = read_all(&mut store);
        assert_eq!(stored, prefix.records, "round {round}: the reopened store holds every commit");
        let groups = 1 + splitmix(&mut rng) % 4;
        for _ in 0..groups {
            let size = 1 + splitmix(&mut rng) % 5;
            let batches: Vec<_> = (0..size).map(|_| prefix.advance()).collect();
            store.commit(&batches).expect("commit");
        }
    }
    let mut store = FjallStore::open(dir.path()).expect("open");
    assert_eq!(assert_crash_child_prefix(&mut store, prefix.applied, 0), prefix.applied);
}

#[test]
fn load_returns_only_the_newest_events_but_events_after_pages_them_all() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut prefix = Prefix::crash_child();
    let mut store =
        FjallStore::open_with(dir.path(), Options { events_load_count_max: 10, ..Options::default() }).expect("open");
    let batches: Vec<_> = (0..60).map(|_| prefix.advance()).collect();
    store.commit(&batches).expect("commit");
    let loaded = store.load().expect("load");
    let cursors: Vec<u64> = loaded
        .iter()
        .filter_map(|r| match r {
            Record::Event(e) => Some(e.cursor.0),
            _ => None,
        })
        .collect();
    let last = prefix.workload.engine().last_cursor().0;
    assert_eq!(cursors, (last - 9..=last).collect::<Vec<_>>(), "load returns the newest ten events, in order");
    assert_eq!(support::all_events(&store).len() as u64, last, "events_after pages through all of them");
    assert_eq!(store.events_after(Cursor(u64::MAX), 10).expect("events").len(), 0);
}

/// The newest journal file of a data directory.
fn newest_journal(dir: &Path) -> PathBuf {
    let mut journals: Vec<PathBuf> = std::fs::read_dir(dir.join("fjall"))
        .expect("read fjall dir")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "jnl"))
        .collect();
    journals.sort_by_key(|p| p.file_stem().and_then(|s| s.to_str()).and_then(|s| s.parse::<u64>().ok()));
    journals.pop().expect("a journal file")
}

/// Commits `count` mutations one by one and closes the store.
fn commit_one_by_one(dir: &Path, count: u64) -> Prefix {
    commit_one_by_one_with(dir, count, Options::default())
}

/// Commits `count` mutations one by one and closes the store as a crash would: the
/// last frame of the log file is then the last commit (a clean close checkpoints them
/// all into the keyspaces).
fn commit_one_by_one_then_crash(dir: &Path, count: u64) -> Prefix {
    commit_one_by_one_with(dir, count, Options { checkpoint_on_close: false, ..Options::default() })
}

fn commit_one_by_one_with(dir: &Path, count: u64, options: Options) -> Prefix {
    let mut prefix = Prefix::crash_child();
    let mut store = FjallStore::open_with(dir, options).expect("open");
    for _ in 0..count {
        store.commit(&[prefix.advance()]).expect("commit");
    }
    prefix
}

/// End of the written part of a journal: fjall pre-allocates journal files (sparse,
/// zero-filled) and trims them on a clean close, so the data ends after the last
/// non-zero byte.
fn journal_data_end(bytes: &[u8]) -> usize {
    bytes.iter().rposition(|b| *b != 0).map_or(0, |at| at + 1)
}

/// The first MiB of a journal: the tests write far less than that, and the rest of the
/// pre-allocated file is zeros.
fn read_journal_head(path: &Path) -> Vec<u8> {
    use std::io::Read;
    const HEAD_BYTES: u64 = 1024 * 1024;
    let mut bytes = Vec::new();
    std::fs::File::open(path).expect("open journal").take(HEAD_BYTES).read_to_end(&mut bytes).expect("read journal");
    let len = std::fs::metadata(path).expect("journal").len();
    assert!(len <= HEAD_BYTES || bytes.iter().rev().take(4096).all(|b| *b == 0), "the test data fits the head");
    bytes
}

/// Overwrites bytes of a file in place (the journals are large and sparse).
fn write_at(path: &Path, at: usize, bytes: &[u8]) {
    use std::os::unix::fs::FileExt;
    let file = std::fs::OpenOptions::new().write(true).open(path).expect("open journal");
    file.write_all_at(bytes, at as u64).expect("write journal");
}

/// Where a store of this build commits: its first log file (no test here commits enough
/// for a checkpoint to switch files).
fn log_file(dir: &Path) -> PathBuf {
    dir.join(store::log_file::LOG_FILE_NAMES[0])
}

/// A store of `count` one-mutation commits closed as a crash leaves it: its log file and
/// the file's bytes.
fn crashed_log(dir: &Path, count: u64) -> (PathBuf, Vec<u8>) {
    commit_one_by_one_then_crash(dir, count);
    let log = log_file(dir);
    let bytes = std::fs::read(&log).expect("read the log file");
    (log, bytes)
}

#[test]
fn a_torn_log_file_tail_loses_only_the_torn_frame() {
    const MUTATIONS: u64 = 40;
    let mut rng = 19;
    for round in 0..8 {
        let dir = tempfile::tempdir().expect("tempdir");
        let (log, bytes) = crashed_log(dir.path(), MUTATIONS);
        let end = journal_data_end(&bytes);
        let cut = 1 + (splitmix(&mut rng) % 64) as usize;
        if round % 2 == 0 {
            // The tail never reached the disk, nor the file's new size.
            let file = std::fs::OpenOptions::new().write(true).open(&log).expect("open the log file");
            file.set_len((end - cut) as u64).expect("truncate");
        } else {
            // The tail never reached the disk: the zeros the file grew by are still there.
            write_at(&log, end - cut, &vec![0; cut]);
        }
        match FjallStore::open(dir.path()) {
            Err(err @ Error::BehindAcknowledged { .. }) => assert_eq!(err.code(), "STORE_BEHIND_ACKNOWLEDGED"),
            other => panic!("a lost acknowledged frame must be refused, got {other:?}"),
        }
        store::mark::create(dir.path(), MUTATIONS - 1).expect("mark");
        let mut store = FjallStore::open(dir.path()).expect("reopen after a torn tail");
        assert_eq!(assert_crash_child_prefix(&mut store, MUTATIONS - 1, 1), MUTATIONS - 1, "round {round}");
        // The next commit goes where the torn frame was, and a start reads it back.
        let mut prefix = Prefix::crash_child();
        for _ in 0..MUTATIONS - 1 {
            prefix.advance();
        }
        store.commit(&[prefix.advance()]).expect("commit after the torn tail");
        drop(store);
        let mut store = FjallStore::open(dir.path()).expect("reopen after the repair");
        assert_eq!(assert_crash_child_prefix(&mut store, MUTATIONS, 0), MUTATIONS, "the repair is stable");
    }
}

#[test]
fn a_flipped_byte_in_the_last_frame_is_refused_when_acknowledged_and_dropped_whole_when_not() {
    const MUTATIONS: u64 = 40;
    let mut rng = 29;
    for _ in 0..8 {
        let dir = tempfile::tempdir().expect("tempdir");
        let (log, bytes) = crashed_log(dir.path(), MUTATIONS);
        let back = 1 + (splitmix(&mut rng) % 64) as usize;
        let at = journal_data_end(&bytes) - back;
        write_at(&log, at, &[bytes[at] ^ 0x5a]);
        match FjallStore::open(dir.path()) {
            Err(err @ Error::BehindAcknowledged { .. }) => {
                assert!(err.to_string().contains("through commit 39 but 40 were acknowledged"), "{err}");
            }
            other => panic!("the acknowledged last frame is damaged: refused, got {other:?}"),
        }
        // As if the damaged frame had never been acknowledged: a torn write leaves the
        // same (a crash that wrote some of a frame's blocks), so it is dropped whole.
        store::mark::create(dir.path(), MUTATIONS - 1).expect("mark");
        let mut store = FjallStore::open(dir.path()).expect("open");
        assert_eq!(assert_crash_child_prefix(&mut store, MUTATIONS - 1, 1), MUTATIONS - 1, "flip {back} bytes back");
    }
}

#[test]
fn a_flipped_byte_before_newer_frames_is_refused_even_when_the_mark_lags() {
    const MUTATIONS: u64 = 40;
    let dir = tempfile::tempdir().expect("tempdir");
    commit_one_by_one_then_crash(dir.path(), MUTATIONS);
    let log = log_file(dir.path());
    let read = store::log_file::read(&log).expect("read the log file");
    assert_eq!(read.commits(), Some((1, MUTATIONS)));
    // A byte in the middle of the run: every frame after it is whole and newer.
    let at = (read.end / 2) as usize;
    let bytes = std::fs::read(&log).expect("read");
    write_at(&log, at, &[bytes[at] ^ 0x21]);
    // The mark after a power loss may name an early commit only: it cannot tell the loss.
    store::mark::create(dir.path(), 5).expect("mark");
    match FjallStore::open(dir.path()) {
        Err(err @ Error::JournalDamaged { .. }) => {
            let message = err.to_string();
            assert!(message.contains("group-log-a") && message.contains("the commits between are lost"), "{message}");
        }
        other => panic!("the commits after the damage must not be dropped silently, got {other:?}"),
    }
}

#[test]
fn a_torn_journal_tail_of_an_older_store_loses_only_the_torn_batch() {
    const MUTATIONS: u64 = 40;
    let mut rng = 17;
    for round in 0..8 {
        let dir = tempfile::tempdir().expect("tempdir");
        // A store of the builds before the group logs: every commit a journal batch.
        write_pre_group_log_store(dir.path(), MUTATIONS);
        let journal = newest_journal(dir.path());
        let mut bytes = read_journal_head(&journal);
        let end = journal_data_end(&bytes);
        let cut = 1 + (splitmix(&mut rng) % 64) as usize;
        if round % 2 == 0 {
            // The tail never reached the disk: the file is shorter.
            let file = std::fs::OpenOptions::new().write(true).open(&journal).expect("open journal");
            file.set_len((end - cut) as u64).expect("truncate");
        } else {
            // The tail never reached the disk: the pre-allocated zeros are still there.
            bytes[end - cut..end].fill(0);
            write_at(&journal, end - cut, &bytes[end - cut..end]);
        }
        // The mark says all MUTATIONS were acknowledged: losing the last one is refused,
        // and the refusal changes nothing.
        match FjallStore::open(dir.path()) {
            Err(err @ Error::BehindAcknowledged { .. }) => assert_eq!(err.code(), "STORE_BEHIND_ACKNOWLEDGED"),
            other => panic!("a lost acknowledged batch must be refused, got {other:?}"),
        }
        // A write torn by a crash was never acknowledged: the mark names the one before.
        store::mark::create(dir.path(), MUTATIONS - 1).expect("mark");
        let mut store = FjallStore::open(dir.path()).expect("reopen after a torn tail");
        let m = assert_crash_child_prefix(&mut store, MUTATIONS - 1, 1);
        assert_eq!(m, MUTATIONS - 1, "tearing the last {cut} bytes loses exactly the last batch");
        drop(store);
        let mut store = FjallStore::open(dir.path()).expect("reopen after the repair");
        assert_eq!(assert_crash_child_prefix(&mut store, MUTATIONS - 1, 0), MUTATIONS - 1, "the repair is stable");
    }
}

#[test]
fn a_corrupt_journal_tail_of_an_older_store_is_refused_or_dropped_whole_never_misread() {
    const MUTATIONS: u64 = 40;
    let mut rng = 23;
    let (mut refused, mut dropped) = (0, 0);
    for _ in 0..8 {
        let dir = tempfile::tempdir().expect("tempdir");
        write_pre_group_log_store(dir.path(), MUTATIONS);
        let journal = newest_journal(dir.path());
        let mut bytes = read_journal_head(&journal);
        let back = 1 + (splitmix(&mut rng) % 64) as usize;
        let at = journal_data_end(&bytes) - back;
        bytes[at] ^= 0x5a;
        write_at(&journal, at, &bytes[at..=at]);
        assert!(FjallStore::open(dir.path()).is_err(), "the acknowledged last batch is damaged: refused");
        // As if the damaged batch had never been acknowledged.
        store::mark::create(dir.path(), MUTATIONS - 1).expect("mark");
        match FjallStore::open(dir.path()) {
            // A complete batch that fails its checksum is corruption, not a torn write:
            // fjall refuses it rather than dropping what may be an acknowledged batch.
            Err(err @ (Error::Open { .. } | Error::JournalDamaged { .. })) => {
                let message = err.to_string();
                assert!(message.contains(&dir.path().display().to_string()), "{message}");
                refused += 1;
            }
            // A flip that makes the batch look unfinished drops it like a torn write.
            Ok(mut store) => {
                let m = assert_crash_child_prefix(&mut store, MUTATIONS - 1, 1);
                assert_eq!(m, MUTATIONS - 1, "a flipped byte {back} bytes before the end drops only the last batch");
                dropped += 1;
            }
            Err(other) => panic!("unexpected error: {other}"),
        }
    }
    assert!(refused > 0, "the seeds exercise the refusal ({refused} refused, {dropped} dropped)");
}

/// Rewrites one stored value through fjall itself, with the store closed.
fn overwrite_raw(dir: &Path, keyspace: &str, key: RecordKey, edit: impl FnOnce(Vec<u8>) -> Vec<u8>) {
    let db = fjall::Database::builder(dir.join("fjall")).open().expect("open fjall");
    let ks = db.keyspace(keyspace, fjall::KeyspaceCreateOptions::default).expect("keyspace");
    let k = store::key::encode(key);
    let value = ks.get(k.as_bytes()).expect("get").expect("the key is stored").to_vec();
    ks.insert(k.as_bytes(), edit(value)).expect("insert");
    db.persist(fjall::PersistMode::SyncAll).expect("persist");
}

#[test]
fn a_flipped_byte_is_reported_with_its_key() {
    let dir = tempfile::tempdir().expect("tempdir");
    commit_one_by_one(dir.path(), 30);
    let worker = RecordKey::Worker(WorkerId(2));
    overwrite_raw(dir.path(), KEYSPACE_STATE, worker, |mut v| {
        let last = v.len() - 1;
        v[last] ^= 0x01;
        v
    });
    let mut store = FjallStore::open(dir.path()).expect("open");
    let err = store.load().expect_err("a corrupt record fails the load");
    match &err {
        Error::Corrupt { key, problem: Corruption::Checksum { .. } } => assert_eq!(key.decoded(), Some(worker)),
        other => panic!("expected a checksum error at {worker:?}, got {other:?}"),
    }
    let message = err.to_string();
    assert!(message.contains("Worker(WorkerId(2))") && message.contains("checksum"), "{message}");
}

#[test]
fn a_corrupt_old_event_is_reported_when_paged_and_a_bad_envelope_when_loaded() {
    let dir = tempfile::tempdir().expect("tempdir");
    commit_one_by_one(dir.path(), 30);
    let old = RecordKey::Event(Cursor(1));
    overwrite_raw(dir.path(), KEYSPACE_EVENTS, old, |mut v| {
        v[0] = b'X';
        v
    });
    {
        let mut store = FjallStore::open_with(dir.path(), Options { events_load_count_max: 5, ..Options::default() })
            .expect("open");
        store.load().expect("the corrupt event is older than what load reads");
        match store.events_after(Cursor(0), 10) {
            Err(Error::Corrupt { key, problem: Corruption::BadMagic { .. } }) => assert_eq!(key.decoded(), Some(old)),
            other => panic!("expected bad magic at {old:?}, got {other:?}"),
        }
        let page = store.events_after(Cursor(1), 10).expect("the events after it are fine");
        assert_eq!(page.first().map(|e| e.cursor), Some(Cursor(2)));
    }
    let meta = RecordKey::Meta;
    overwrite_raw(dir.path(), KEYSPACE_STATE, meta, |v| v[..7].to_vec());
    let mut store = FjallStore::open(dir.path()).expect("open");
    match store.load() {
        Err(Error::Corrupt { key, problem: Corruption::Truncated { len: 7 } }) => assert_eq!(key.decoded(), Some(meta)),
        other => panic!("expected a truncated value at {meta:?}, got {other:?}"),
    }
}

#[test]
fn a_record_under_a_foreign_key_is_reported() {
    let dir = tempfile::tempdir().expect("tempdir");
    commit_one_by_one(dir.path(), 30);
    let (spec, worker) = (RecordKey::WorkerSpec(WorkerId(1)), RecordKey::Worker(WorkerId(1)));
    let db = fjall::Database::builder(dir.path().join("fjall")).open().expect("open fjall");
    let ks = db.keyspace(KEYSPACE_STATE, fjall::KeyspaceCreateOptions::default).expect("keyspace");
    let value = ks.get(store::key::encode(worker).as_bytes()).expect("get").expect("stored");
    ks.insert(store::key::encode(spec).as_bytes(), value).expect("insert");
    db.persist(fjall::PersistMode::SyncAll).expect("persist");
    drop(ks);
    drop(db);
    let mut store = FjallStore::open(dir.path()).expect("open");
    match store.load() {
        Err(Error::Corrupt { key, problem: Corruption::KeyMismatch { record } }) => {
            assert_eq!((key.decoded(), record), (Some(spec), worker));
        }
        other => panic!("expected a key mismatch at {spec:?}, got {other:?}"),
    }
}

#[test]
fn a_second_opener_is_refused_with_the_directory_named() {
    let dir = tempfile::tempdir().expect("tempdir");
    let first = FjallStore::open(dir.path()).expect("open");
    let err = FjallStore::open(dir.path()).expect_err("the directory is locked");
    assert!(matches!(&err, Error::Locked { dir: d } if d == dir.path()), "{err:?}");
    let message = err.to_string();
    assert!(message.contains(&dir.path().display().to_string()) && message.contains("locked"), "{message}");
    drop(first);
    FjallStore::open(dir.path()).expect("the lock is released with the store");
}

#[test]
fn a_creation_interrupted_by_a_crash_is_redone() {
    let dir = tempfile::tempdir().expect("tempdir");
    // What a kill in the middle of creating the database leaves: a half-made staging
    // directory (fjall itself cannot open a half-made database directory).
    std::fs::create_dir_all(dir.path().join("fjall.creating/keyspaces/1")).expect("half-made database");
    std::fs::write(dir.path().join("fjall.creating/0.jnl"), b"torn").expect("half-made journal");
    let mut store = FjallStore::open(dir.path()).expect("open redoes the creation");
    assert!(store.load().expect("load").is_empty());
    assert!(!dir.path().join("fjall.creating").exists(), "the staging directory became the database");
    let mut prefix = Prefix::crash_child();
    store.commit(&[prefix.advance()]).expect("commit");
    drop(store);
    let mut store = FjallStore::open(dir.path()).expect("reopen");
    assert_eq!(assert_crash_child_prefix(&mut store, 1, 0), 1);
}

/// Flushes both keyspaces into tables (so the tree folders hold tables and versions).
fn flush_tables(dir: &Path) {
    let db = fjall::Database::builder(dir.join("fjall")).open().expect("open fjall");
    for name in [KEYSPACE_STATE, KEYSPACE_EVENTS] {
        let ks = db.keyspace(name, fjall::KeyspaceCreateOptions::default).expect("keyspace");
        ks.rotate_memtable_and_wait().expect("flush");
    }
}

#[test]
fn a_keyspace_without_its_version_pointer_is_refused_not_deleted() {
    let dir = tempfile::tempdir().expect("tempdir");
    commit_one_by_one(dir.path(), 20);
    flush_tables(dir.path());
    // fjall takes a keyspace folder without `current` for one whose creation a crash
    // interrupted, and deletes it with every table in it.
    let keyspaces = dir.path().join("fjall").join("keyspaces");
    let tree = std::fs::read_dir(&keyspaces)
        .expect("keyspaces")
        .map(|e| e.expect("entry").path())
        .find(|p| {
            p.file_name().is_some_and(|n| n != "0") && p.join("tables").read_dir().is_ok_and(|mut t| t.next().is_some())
        })
        .expect("a keyspace with tables");
    std::fs::remove_file(tree.join("current")).expect("remove current");
    let tables_before: Vec<_> =
        std::fs::read_dir(tree.join("tables")).expect("tables").map(|e| e.expect("e").path()).collect();
    let err = FjallStore::open(dir.path()).expect_err("refused");
    assert_eq!(err.code(), "STORE_TABLE_DAMAGED", "{err}");
    assert!(err.to_string().contains(&tree.join("current").display().to_string()), "{err}");
    for table in tables_before {
        assert!(table.exists(), "{} was deleted", table.display());
    }
    assert!(!dir.path().join("fjall.before-open").exists(), "no links are taken before a refusal before the open");
}

#[test]
fn a_store_written_before_the_group_log_opens_and_serves() {
    const MUTATIONS: u64 = 40;
    let dir = tempfile::tempdir().expect("tempdir");
    let mut prefix = write_pre_group_log_store(dir.path(), MUTATIONS);
    let crash_like = Options { checkpoint_on_close: false, ..Options::default() };
    let mut store = FjallStore::open_with(dir.path(), crash_like.clone()).expect("open the old store");
    assert_eq!(store.commits(), MUTATIONS);
    assert_eq!(assert_crash_child_prefix(&mut store, MUTATIONS, 0), MUTATIONS);
    for _ in 0..MUTATIONS {
        store.commit(&[prefix.advance()]).expect("commit on top of the old layout");
    }
    drop(store);
    let mut store = FjallStore::open_with(dir.path(), crash_like).expect("reopen");
    assert_eq!(assert_crash_child_prefix(&mut store, 2 * MUTATIONS, 0), 2 * MUTATIONS);
    drop(store);
    let mut store = FjallStore::open(dir.path()).expect("reopen");
    assert_eq!(assert_crash_child_prefix(&mut store, 2 * MUTATIONS, 0), 2 * MUTATIONS);
}

#[test]
fn checkpoints_keep_every_commit_across_crash_like_and_clean_closes() {
    /// Small, so that the commits below pass many checkpoints, each writing records of
    /// keys that earlier checkpoints wrote.
    const CHECKPOINT_LOG_BYTES: u64 = 2 * 1024;
    const MUTATIONS_PER_OPEN: u64 = 60;
    let dir = tempfile::tempdir().expect("tempdir");
    let mut prefix = Prefix::crash_child();
    for round in 0..6 {
        let options = Options {
            checkpoint_log_bytes: CHECKPOINT_LOG_BYTES,
            checkpoint_on_close: round % 2 == 1,
            ..Options::default()
        };
        let mut store = FjallStore::open_with(dir.path(), options).expect("open");
        assert_eq!(assert_crash_child_prefix(&mut store, prefix.applied, 0), prefix.applied, "round {round}");
        for i in 0..MUTATIONS_PER_OPEN {
            let group: Vec<engine::Batch> = (0..1 + i % 3).map(|_| prefix.advance()).collect();
            store.commit(&group).expect("commit");
        }
    }
    let mut store = FjallStore::open(dir.path()).expect("open");
    assert_eq!(assert_crash_child_prefix(&mut store, prefix.applied, 0), prefix.applied);
}
