//! Checkpoints off the commit path (`src/checkpoint.rs`): commits and reads while a
//! checkpoint runs, a checkpoint a crash interrupted, a failed checkpoint, a store with
//! the old log keyspaces, and the format marker that older builds refuse.

mod support;

use runtime::Store;
use std::collections::BTreeMap;
use std::path::Path;
use store::group_log::{GroupWriter, log_key};
use store::log_file::{FRAME_MAGIC, LOG_FILE_NAMES};
use store::{Error, FjallStore, KEYSPACE_STATE, KEYSPACES_LOG, Options};
use support::{Prefix, assert_crash_child_prefix, read_all, write_pre_group_log_store};

/// Options under which no checkpoint starts while a test commits.
fn no_checkpoints(checkpoint_on_close: bool) -> Options {
    Options {
        checkpoint_log_bytes: u64::MAX / 2,
        log_bytes_max: u64::MAX / 2,
        checkpoint_on_close,
        ..Options::default()
    }
}

/// The commit counter's stored bytes, read with fjall directly from a closed store.
fn raw_commit_counter(dir: &Path) -> Vec<u8> {
    let db = fjall::Database::builder(dir.join("fjall")).open().expect("open fjall");
    let state = db.keyspace(KEYSPACE_STATE, fjall::KeyspaceCreateOptions::default).expect("state");
    let value = state.get(store::key::COMMITS_KEY).expect("read").expect("a commit counter");
    value.to_vec()
}

/// The commit counter decoder of the builds before the group logs (main before issue 33,
/// `key::decode_commits`): version 1 only; their `read_commits` refuses the start
/// (`STORE_CORRUPT_RECORD`, "not a commit counter") when it returns `None`.
fn decode_commits_before_group_logs(value: &[u8]) -> Option<u64> {
    let (&version, rest) = value.split_first()?;
    (version == 1).then_some(())?;
    Some(u64::from_be_bytes(rest.try_into().ok()?))
}

/// The decoder of the builds with group log keyspaces (issue 33's first step, e8b9b3c):
/// versions 1 and 2.
fn decode_commits_with_log_keyspaces(value: &[u8]) -> Option<u64> {
    let (&version, rest) = value.split_first()?;
    matches!(version, 1 | 2).then_some(())?;
    Some(u64::from_be_bytes(rest.try_into().ok()?))
}

#[test]
fn commits_and_reads_while_checkpoints_run_see_every_commit() {
    /// Tiny, so that almost every commit starts a checkpoint or finds one running.
    const CHECKPOINT_LOG_BYTES: u64 = 1024;
    const MUTATIONS: u64 = 150;
    // A bound well past the checkpoint size (commits rarely wait), then one equal to it
    // (every commit that finds a checkpoint running and the log due waits for it).
    for log_bytes_max in [64 * CHECKPOINT_LOG_BYTES, CHECKPOINT_LOG_BYTES] {
        let dir = tempfile::tempdir().expect("tempdir");
        let options = Options {
            checkpoint_log_bytes: CHECKPOINT_LOG_BYTES,
            log_bytes_max,
            checkpoint_on_close: false,
            ..Options::default()
        };
        let mut store = FjallStore::open_with(dir.path(), options.clone()).expect("open");
        let mut prefix = Prefix::crash_child();
        for _ in 0..MUTATIONS {
            store.commit(&[prefix.advance()]).expect("a commit is served while a checkpoint runs");
            let (stored, _) = read_all(&mut store);
            assert_eq!(stored, prefix.records, "after {} mutations (bound {log_bytes_max})", prefix.applied);
            assert!(store.group_log_bytes() < log_bytes_max, "a commit that passes the bound waits and checkpoints");
        }
        // Closed as a crash leaves it (the checkpoint in flight ends, nothing more).
        drop(store);
        let mut store = FjallStore::open_with(dir.path(), options).expect("reopen");
        assert_eq!(assert_crash_child_prefix(&mut store, MUTATIONS, 0), MUTATIONS);
    }
}

/// One group commit's log value, written the way the store writes it.
fn group_value(commit: u64, batch: &engine::Batch) -> Vec<u8> {
    let latest: BTreeMap<_, _> = batch.records.iter().map(|r| (r.key(), r)).collect();
    let mut group = GroupWriter::new(commit);
    for (key, record) in &latest {
        group.push(store::key::encode(*key), &store::envelope::encode(record).expect("encode"));
    }
    group.finish()
}

/// Appends one frame (magic, length, value) to the log file at `path`.
fn append_frame(path: &Path, value: &[u8]) {
    use std::io::Write;
    let mut file = std::fs::OpenOptions::new().append(true).open(path).expect("open the log file");
    file.write_all(&FRAME_MAGIC).expect("write");
    file.write_all(&(value.len() as u32).to_be_bytes()).expect("write");
    file.write_all(value).expect("write");
    file.sync_all().expect("sync");
}

#[test]
fn a_start_resumes_a_checkpoint_a_crash_interrupted() {
    const OLDER: u64 = 30;
    const NEWER: u64 = 20;
    let dir = tempfile::tempdir().expect("tempdir");
    let mut prefix = Prefix::crash_child();
    // The older commits, all in the first log file.
    let mut store = FjallStore::open_with(dir.path(), no_checkpoints(false)).expect("open");
    for _ in 0..OLDER {
        store.commit(&[prefix.advance()]).expect("commit");
    }
    assert!(!store.resumed_checkpoint());
    drop(store);
    // What a crash leaves while the first log's checkpoint runs: newer commits in the
    // other log file, the first one not checkpointed.
    let log_b = dir.path().join(LOG_FILE_NAMES[1]);
    assert_eq!(std::fs::metadata(&log_b).expect("the store made both files").len(), 0);
    for commit in OLDER + 1..=OLDER + NEWER {
        append_frame(&log_b, &group_value(commit, &prefix.advance()));
    }
    store::mark::create(dir.path(), OLDER + NEWER).expect("mark");
    let mut store = FjallStore::open_with(dir.path(), no_checkpoints(false)).expect("open after the crash");
    assert!(store.resumed_checkpoint(), "both logs hold commits: a checkpoint was interrupted");
    // Before the first commit the interrupted checkpoint has not been resumed: reads see
    // its records only through its frozen overlay.
    assert_eq!(assert_crash_child_prefix(&mut store, OLDER + NEWER, 0), OLDER + NEWER);
    store.commit(&[prefix.advance()]).expect("a commit resumes the checkpoint and is served");
    assert_eq!(assert_crash_child_prefix(&mut store, prefix.applied, 0), prefix.applied);
    store.checkpoint_wait().expect("the resumed checkpoint succeeds");
    drop(store);
    let mut store = FjallStore::open_with(dir.path(), no_checkpoints(false)).expect("reopen");
    assert!(!store.resumed_checkpoint(), "the checkpoint key now covers the older log");
    assert_eq!(assert_crash_child_prefix(&mut store, prefix.applied, 0), prefix.applied);
}

#[test]
fn a_store_with_the_old_log_keyspaces_after_a_crash_is_checkpointed_at_its_first_commit() {
    const OLDER: u64 = 12;
    const LOGGED: u64 = 15;
    let dir = tempfile::tempdir().expect("tempdir");
    // A store of issue 33's first step after a crash: records through OLDER in the
    // keyspaces, later commits only as items of the log keyspace `log-b`, each with the
    // version-2 counter in the same batch.
    let mut prefix = write_pre_group_log_store(dir.path(), OLDER);
    {
        let db = fjall::Database::builder(dir.path().join("fjall"))
            .journal_compression(fjall::CompressionType::None)
            .open()
            .expect("open fjall");
        let state = db.keyspace(KEYSPACE_STATE, fjall::KeyspaceCreateOptions::default).expect("state");
        let log_b = db.keyspace(KEYSPACES_LOG[1], fjall::KeyspaceCreateOptions::default).expect("log-b");
        for commit in OLDER + 1..=OLDER + LOGGED {
            let mut batch = db.batch().durability(Some(fjall::PersistMode::SyncAll));
            batch.insert(&log_b, log_key(commit), group_value(commit, &prefix.advance()));
            let mut counter = vec![store::key::COMMITS_VALUE_VERSION_GROUP_LOG];
            counter.extend_from_slice(&commit.to_be_bytes());
            batch.insert(&state, store::key::COMMITS_KEY, counter);
            batch.commit().expect("commit");
        }
    }
    store::mark::create(dir.path(), OLDER + LOGGED).expect("mark");
    let mut store = FjallStore::open_with(dir.path(), no_checkpoints(false)).expect("open the older store");
    assert!(store.resumed_checkpoint(), "the old log's records wait for a checkpoint");
    assert_eq!(assert_crash_child_prefix(&mut store, OLDER + LOGGED, 0), OLDER + LOGGED);
    assert!(!dir.path().join(LOG_FILE_NAMES[0]).exists(), "a start changes no file");
    store.commit(&[prefix.advance()]).expect("the first commit makes the log files and resumes the checkpoint");
    store.checkpoint_wait().expect("the checkpoint of the old log succeeds");
    drop(store);
    assert!(LOG_FILE_NAMES.iter().all(|name| dir.path().join(name).exists()));
    let mut store = FjallStore::open_with(dir.path(), no_checkpoints(false)).expect("reopen");
    assert!(!store.resumed_checkpoint(), "the checkpoint cleared the old log keyspaces");
    assert_eq!(assert_crash_child_prefix(&mut store, prefix.applied, 0), prefix.applied);
    drop(store);
    let db = fjall::Database::builder(dir.path().join("fjall")).open().expect("open fjall");
    for name in KEYSPACES_LOG {
        let log = db.keyspace(name, fjall::KeyspaceCreateOptions::default).expect("log");
        assert!(log.iter().next().is_none(), "{name} was cleared");
    }
}

#[test]
fn a_failed_checkpoint_poisons_the_store_and_loses_nothing_acknowledged() {
    const CHECKPOINT_LOG_BYTES: u64 = 2 * 1024;
    let dir = tempfile::tempdir().expect("tempdir");
    let options = Options {
        checkpoint_log_bytes: CHECKPOINT_LOG_BYTES,
        log_bytes_max: 64 * CHECKPOINT_LOG_BYTES,
        checkpoint_on_close: false,
        ..Options::default()
    };
    let mut store = FjallStore::open_with(dir.path(), options.clone()).expect("open");
    let mut prefix = Prefix::crash_child();
    store.commit(&[prefix.advance()]).expect("commit");
    // fjall numbers keyspaces in creation order after its own (0): `state` is 1 and
    // `events` 2. A file where their tables folder was makes every table write fail.
    let keyspaces = dir.path().join("fjall/keyspaces");
    for id in ["1", "2"] {
        let tables = keyspaces.join(id).join("tables");
        assert!(tables.is_dir(), "{} is a keyspace's tables folder", tables.display());
        std::fs::rename(&tables, keyspaces.join(id).join("tables.aside")).expect("move aside");
        std::fs::write(&tables, b"not a folder").expect("a file in its place");
    }
    // One group commit past the checkpoint size starts the checkpoint (and returns: it
    // waits for nothing).
    let group: Vec<engine::Batch> = (0..40).map(|_| prefix.advance()).collect();
    store.commit(&group).expect("the commit that starts the checkpoint");
    let failed = store.checkpoint_wait().expect_err("the checkpoint cannot write its tables");
    assert!(matches!(failed, Error::Fjall { during, .. } if during.starts_with("checkpointing")), "{failed}");
    assert!(store.is_poisoned());
    let next = store.commit(&[prefix.workload.next_mutation()]).expect_err("a poisoned store takes no commit");
    assert_eq!(next.code(), "STORE_POISONED", "{next}");
    drop(store);
    for id in ["1", "2"] {
        let tables = keyspaces.join(id).join("tables");
        std::fs::remove_file(&tables).expect("remove the file");
        std::fs::rename(keyspaces.join(id).join("tables.aside"), &tables).expect("put back");
    }
    let mut store = FjallStore::open_with(dir.path(), options).expect("reopen");
    assert_eq!(assert_crash_child_prefix(&mut store, prefix.applied, 0), prefix.applied);
}

#[test]
fn an_older_store_opens_and_its_first_commit_writes_the_marker_older_builds_refuse() {
    const MUTATIONS: u64 = 10;
    let dir = tempfile::tempdir().expect("tempdir");
    let mut prefix = write_pre_group_log_store(dir.path(), MUTATIONS);
    assert_eq!(decode_commits_before_group_logs(&raw_commit_counter(dir.path())), Some(MUTATIONS));
    // Opened, read and closed cleanly without a commit: still what an older build reads.
    let mut store = FjallStore::open(dir.path()).expect("open the older store");
    assert_eq!(assert_crash_child_prefix(&mut store, MUTATIONS, 0), MUTATIONS);
    drop(store);
    assert_eq!(decode_commits_before_group_logs(&raw_commit_counter(dir.path())), Some(MUTATIONS));
    assert!(!dir.path().join(LOG_FILE_NAMES[0]).exists(), "a start without a commit made no log file");
    // One commit puts records in a log file that an older build would not read: the
    // marker written before it is the version every such build refuses.
    let mut store = FjallStore::open_with(dir.path(), no_checkpoints(false)).expect("open");
    store.commit(&[prefix.advance()]).expect("commit");
    drop(store);
    let counter = raw_commit_counter(dir.path());
    assert_eq!(counter[0], store::key::COMMITS_VALUE_VERSION_LOG_FILES);
    assert_eq!(decode_commits_before_group_logs(&counter), None, "a build before the group logs refuses the store");
    assert_eq!(decode_commits_with_log_keyspaces(&counter), None, "a build with log keyspaces refuses it too");
    assert_eq!(store::key::decode_commits(&counter), Some(MUTATIONS), "the commits when the marker was written");
    let mut store = FjallStore::open(dir.path()).expect("reopen");
    assert_eq!(store.commits(), MUTATIONS + 1, "the newest commit is the log file's");
    assert_eq!(assert_crash_child_prefix(&mut store, MUTATIONS + 1, 0), MUTATIONS + 1);
    // A clean close checkpoints into the keyspaces but keeps the marker.
    drop(store);
    assert_eq!(raw_commit_counter(dir.path())[0], store::key::COMMITS_VALUE_VERSION_LOG_FILES);
    let store = FjallStore::open(dir.path()).expect("reopen");
    assert_eq!(store.commits(), MUTATIONS + 1, "the checkpoint key holds the newest commit");
}

#[test]
fn a_log_entry_a_checkpoint_already_wrote_is_never_laid_over_newer_records() {
    const MUTATIONS: u64 = 30;
    let dir = tempfile::tempdir().expect("tempdir");
    let mut prefix = Prefix::crash_child();
    let first = prefix.advance();
    let mut store = FjallStore::open_with(dir.path(), no_checkpoints(true)).expect("open");
    store.commit(std::slice::from_ref(&first)).expect("commit");
    for _ in 1..MUTATIONS {
        store.commit(&[prefix.advance()]).expect("commit");
    }
    // A clean close checkpoints every commit into the keyspaces and clears the log.
    drop(store);
    // What a log keeps if its clear does not hold (a flush of the log racing the clear):
    // commit 1 again, whose meta record is older than the checkpointed one.
    {
        let db = fjall::Database::builder(dir.path().join("fjall"))
            .journal_compression(fjall::CompressionType::None)
            .open()
            .expect("open fjall");
        let log_a = db.keyspace(KEYSPACES_LOG[0], fjall::KeyspaceCreateOptions::default).expect("log-a");
        let latest: BTreeMap<_, _> = first.records.iter().map(|r| (r.key(), r)).collect();
        let mut group = GroupWriter::new(1);
        for (key, record) in &latest {
            group.push(store::key::encode(*key), &store::envelope::encode(record).expect("encode"));
        }
        log_a.insert(log_key(1), group.finish()).expect("insert");
        db.persist(fjall::PersistMode::SyncAll).expect("persist");
    }
    let options =
        Options { checkpoint_log_bytes: 1024, log_bytes_max: 4096, checkpoint_on_close: false, ..Options::default() };
    let mut store = FjallStore::open_with(dir.path(), options.clone()).expect("open");
    assert_eq!(assert_crash_child_prefix(&mut store, MUTATIONS, 0), MUTATIONS, "the stale entry is skipped");
    // Checkpoints switch commits into the log that holds it, and the start after skips it.
    for _ in 0..MUTATIONS {
        store.commit(&[prefix.advance()]).expect("commit");
    }
    drop(store);
    let mut store = FjallStore::open_with(dir.path(), options).expect("reopen");
    assert_eq!(assert_crash_child_prefix(&mut store, prefix.applied, 0), prefix.applied);
}
