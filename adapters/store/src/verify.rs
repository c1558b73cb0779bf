//! The operator's way out: [`verify`] checks a data directory without changing it, and
//! [`salvage`] copies what is intact into a new one. Both work on a private copy of the
//! database, because fjall's open changes files (it cuts journals, deletes superseded
//! version files). The copy is cheap where it can be: table and version files, which
//! lsm-tree never changes in place (it writes new ones and unlinks old ones), are hard
//! links when the work directory is on the same file system; the journals and the
//! database's root files are copied (at most about 64-128 MB of journal).

use crate::counters::{read_checkpointed, read_commits};
use crate::error::{Error, thousands};
use crate::fjall_store::{DATABASE_DIR_NAME, decode_entry};
use crate::journal_scan::{self, Tail};
use crate::key;
use crate::log_file::{self, LOG_FILE_NAMES};
use crate::mark::{self, MarkProblem};
use crate::start_checks::precheck;
use crate::tree_scan;
use engine::{Batch, Record, RecordKey};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::fs::File;
use std::path::{Path, PathBuf};

/// Records per commit when salvage writes the new store.
const SALVAGE_BATCH_RECORDS_MAX: usize = 1_000;
/// The work directory salvage makes inside its target (removed when done).
const SALVAGE_WORK_DIR_NAME: &str = ".salvage-work";

/// What [`verify`] found.
#[derive(Debug)]
pub struct VerifyReport {
    /// Whether the store would start and serve everything it acknowledged.
    pub intact: bool,
    /// The findings, one sentence a line.
    pub text: String,
    /// The newest commit the mark names (`None` when it is missing or unreadable).
    pub acknowledged: Option<u64>,
    /// The newest commit that can be read back.
    pub recovered: Option<u64>,
    /// State records read back (the commit counter not included).
    pub state_records: u64,
    /// Events read back.
    pub events: u64,
}

/// What [`salvage`] copied.
#[derive(Debug)]
pub struct SalvageReport {
    /// The findings and what was copied, one sentence a line.
    pub text: String,
    /// State records copied.
    pub state_records: u64,
    /// Events copied.
    pub events: u64,
    /// Whether every entry read back was copied (none was skipped as unreadable).
    pub complete: bool,
}

/// What was read back from a (copied, cut) database.
struct ReadBack {
    recovered: Option<u64>,
    /// The checkpoint key: commits up to it are in the tables, later ones only in the
    /// group logs (`None` when it cannot be read).
    checkpointed: Option<u64>,
    state: Vec<Record>,
    events: Vec<Record>,
    problems: Vec<String>,
    /// Whether fjall could open the copy at all.
    opened: bool,
}

impl ReadBack {
    /// Nothing read back: fjall could not open the copy, for the reasons in `problems`.
    fn nothing(problems: Vec<String>) -> ReadBack {
        ReadBack { recovered: None, checkpointed: None, state: Vec::new(), events: Vec::new(), problems, opened: false }
    }
}

fn data_dir_error(dir: &Path) -> impl Fn(std::io::Error) -> Error + '_ {
    move |source| Error::DataDir { dir: dir.to_path_buf(), source }
}

/// Copies the database tree `from` to `to` (which must not exist): the files in `from`
/// itself (journals, fjall's marker and lock) are copied, the files below it (lsm-tree's
/// immutable tables and version files) hard-linked where the file system allows, else
/// copied. Returns the bytes copied.
fn copy_tree(from: &Path, to: &Path, link: bool) -> std::io::Result<u64> {
    std::fs::create_dir_all(to)?;
    let mut copied = 0;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copied += copy_tree(&entry.path(), &target, true)?;
        } else if !(link && std::fs::hard_link(entry.path(), &target).is_ok()) {
            copied += std::fs::copy(entry.path(), &target)?;
        }
    }
    Ok(copied)
}

/// Whether `dir` is locked by a running store.
fn check_not_running(dir: &Path) -> Result<(), Error> {
    let Ok(lock) = File::open(dir.join("store.lock")) else { return Ok(()) };
    match lock.try_lock_shared() {
        Ok(()) => Ok(()),
        Err(std::fs::TryLockError::WouldBlock) => Err(Error::Locked { dir: dir.to_path_buf() }),
        Err(std::fs::TryLockError::Error(source)) => Err(Error::DataDir { dir: dir.to_path_buf(), source }),
    }
}

/// Describes the mark and the journals; returns the acknowledged commit and whether
/// everything there is sound.
fn describe(dir: &Path, out: &mut String) -> Result<(Option<u64>, bool), Error> {
    let mut sound = true;
    let mark_path = dir.join(mark::MARK_FILE_NAME);
    let acknowledged = match mark::read(dir) {
        Ok(m) => {
            let _ = writeln!(out, "mark {}: acknowledged through commit {}", mark_path.display(), thousands(m.commits));
            for slot in m.bad_slots {
                let _ = writeln!(
                    out,
                    "  note: slot {slot} of the mark is damaged (a torn write?); the other slot is used, it rewrites on the next commit"
                );
            }
            Some(m.commits)
        }
        Err(MarkProblem::Missing) => {
            let _ = writeln!(out, "mark {}: missing", mark_path.display());
            None
        }
        Err(MarkProblem::Unreadable(problem)) => {
            sound = false;
            let _ = writeln!(out, "mark {}: UNREADABLE ({problem})", mark_path.display());
            None
        }
        Err(MarkProblem::Io(source)) => return Err(Error::DataDir { dir: dir.to_path_buf(), source }),
    };
    let db_path = dir.join(DATABASE_DIR_NAME);
    let scan = journal_scan::scan(&db_path).map_err(data_dir_error(dir))?;
    for file in &scan.files {
        let _ = write!(
            out,
            "journal {}: {} bytes, {} whole batches ending at offset {}",
            file.path.display(),
            file.len,
            file.batches,
            file.valid_end
        );
        match &file.tail {
            Tail::Clean => {
                let _ = writeln!(out, ", then zeros");
            }
            Tail::Data { first_nonzero, last_nonzero_end, reason, .. } => {
                let _ = writeln!(
                    out,
                    ", then {} bytes that do not decode from offset {first_nonzero} ({reason})",
                    last_nonzero_end - file.valid_end
                );
            }
        }
    }
    match (scan.commits_first, scan.commits_last) {
        (Some(first), Some(last)) => {
            let _ = writeln!(out, "journals hold commits {} through {}", thousands(first), thousands(last));
        }
        _ => {
            let _ = writeln!(
                out,
                "journals hold no commit counter (all flushed to tables, or a store from before the counter)"
            );
        }
    }
    let log_files = dir.join(LOG_FILE_NAMES[0]).exists();
    for name in LOG_FILE_NAMES {
        let read = log_file::read(&dir.join(name)).map_err(data_dir_error(dir))?;
        if !read.exists {
            let _ = writeln!(out, "group log {}: none (a store from before the log files)", read.path.display());
            continue;
        }
        let commits = match read.commits() {
            Some((first, last)) => format!(", commits {} through {}", thousands(first), thousands(last)),
            None => String::new(),
        };
        let after = match &read.stop {
            None if read.end == read.len() => "the file's end".to_string(),
            None => "zeros or frames of older commits".to_string(),
            Some(reason) => format!("bytes that are no whole frame ({reason})"),
        };
        let _ = writeln!(
            out,
            "group log {}: {} bytes, {} whole frames{commits} ending at offset {}, then {after}",
            read.path.display(),
            read.len(),
            read.frames(),
            read.end
        );
    }
    if let Err(error) = precheck(dir, &scan, acknowledged, log_files) {
        sound = false;
        let _ = writeln!(out, "REFUSED before opening: {} [{}]", error, error.code());
    }
    // The tables in full: every table file against the checksum its version records
    // (a start checks only the blocks the open reads; the rest is checked as it is read).
    match tree_scan::scan(&db_path, true).map_err(data_dir_error(dir))? {
        Ok(checked) => {
            let _ = writeln!(
                out,
                "tables: {} trees, {} tables ({} bytes) match their checksums",
                checked.trees,
                checked.tables,
                thousands(checked.table_bytes_hashed)
            );
        }
        Err(damage) => {
            sound = false;
            let _ = writeln!(out, "DAMAGED: {}: {}", damage.file.display(), damage.detail);
        }
    }
    Ok((acknowledged, sound))
}

/// Copies the database of `dir` into `work`, cuts the copy's journals at the first
/// damage (so that fjall opens exactly the intact prefix), opens it and reads it all.
fn read_back(dir: &Path, work: &Path) -> Result<ReadBack, Error> {
    let copy = work.join(DATABASE_DIR_NAME);
    copy_tree(&dir.join(DATABASE_DIR_NAME), &copy, false).map_err(data_dir_error(work))?;
    let mut problems = Vec::new();
    // A version or table file that fails the checks a start makes would fail an
    // assertion inside fjall's open (which aborts): nothing can be read back then.
    if let Err(damage) = tree_scan::scan(&copy, false).map_err(data_dir_error(work))? {
        problems.push(format!(
            "nothing can be read back: {} is damaged ({}), and fjall cannot open the database without it",
            damage.file.strip_prefix(work).unwrap_or(&damage.file).display(),
            damage.detail
        ));
        return Ok(ReadBack::nothing(problems));
    }
    let scan = journal_scan::scan(&copy).map_err(data_dir_error(work))?;
    // The first damage in replay order: a gap, or bytes that do not decode.
    let cut = scan.files.iter().position(|f| matches!(f.tail, Tail::Data { .. })).map(|i| (i, scan.files[i].valid_end));
    let gap_cut =
        scan.gap.as_ref().and_then(|g| scan.files.iter().position(|f| f.path == g.path).map(|i| (i, g.offset)));
    let cut = match (cut, gap_cut) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    };
    if let Some((index, offset)) = cut {
        let file = &scan.files[index];
        problems.push(format!("journal {} is cut at offset {offset}: what follows is not read", file.path.display()));
        File::options().write(true).open(&file.path).and_then(|f| f.set_len(offset)).map_err(data_dir_error(work))?;
        for later in &scan.files[index + 1..] {
            problems.push(format!("journal {} follows the damage and is not read", later.path.display()));
            std::fs::remove_file(&later.path).map_err(data_dir_error(work))?;
        }
    }
    let (db, state, events, logs) = match crate::fjall_store::open_database(&copy) {
        Ok(opened) => opened,
        Err(source) => {
            let error = Error::Open { dir: dir.to_path_buf(), source };
            problems
                .push(format!("nothing can be read back: fjall cannot open the database [{}]: {error}", error.code()));
            return Ok(ReadBack::nothing(problems));
        }
    };
    let recovered = match read_commits(dir, &state) {
        Ok(recovered) => recovered,
        Err(error) => {
            problems.push(format!("the commit counter cannot be read: {error}"));
            None
        }
    };
    let mut read = |keyspace: &fjall::Keyspace, events_keyspace: bool, out: &mut Vec<Record>| {
        for entry in keyspace.iter() {
            match entry.into_inner() {
                Ok((k, v)) => {
                    // The store's own keys (the commit counter, the checkpoint) are no records.
                    if k.first() == Some(&key::TAG_STORE) {
                        continue;
                    }
                    match decode_entry(&k, &v, events_keyspace) {
                        Ok(record) => out.push(record),
                        Err(error) => problems.push(format!("skipped: {error}")),
                    }
                }
                Err(error) => {
                    problems.push(format!("reading stops in keyspace {}: {error}", keyspace.name()));
                    break;
                }
            }
        }
    };
    let mut state_records = Vec::new();
    let mut event_records = Vec::new();
    read(&state, false, &mut state_records);
    read(&events, true, &mut event_records);
    // The group logs hold the commits since the last checkpoint: they win over the
    // keyspaces, key by key. The log files are read in `dir` itself (read-only).
    let checkpointed = read_checkpointed(dir, &state);
    let legacy = checkpointed
        .as_ref()
        .map_err(|e| e.to_string())
        .and_then(|c| crate::group_log::replay_keyspaces(dir, [&logs[0], &logs[1]], *c).map_err(|e| e.to_string()));
    let mut newest = checkpointed.as_ref().map_or(0, |c| *c);
    let mut overlay = crate::group_log::Overlay::new();
    match legacy {
        Ok(Some(legacy)) => {
            newest = newest.max(legacy.commits_last);
            overlay.extend(legacy);
        }
        Ok(None) => {}
        Err(error) => problems.push(format!("reading stops in the old group log keyspaces: {error}")),
    }
    let reads = LOG_FILE_NAMES.map(|name| log_file::read(&dir.join(name)));
    match reads {
        [Ok(a), Ok(b)] => {
            let reads = [a, b];
            for read in &reads {
                if let Some((_, detail)) = read.damage(checkpointed.as_ref().map_or(0, |c| *c)) {
                    problems.push(format!("group log {} is read up to the damage: {detail}", read.path.display()));
                }
                newest = newest.max(read.commits().map_or(0, |(_, last)| last));
            }
            match crate::log_file::replay(&reads, checkpointed.as_ref().map_or(0, |c| *c)) {
                Ok(replayed) => overlay.extend(replayed.into_overlay()),
                Err(error) => problems.push(format!("reading stops in the group log files: {error}")),
            }
        }
        [a, b] => {
            for error in [a.err(), b.err()].into_iter().flatten() {
                problems.push(format!("the group log files cannot be read: {error}"));
            }
        }
    }
    let recovered = match recovered {
        Some((_, counter)) => Some(counter.max(newest)),
        None => (newest > 0).then_some(newest),
    };
    {
        let mut state_by_key: BTreeMap<RecordKey, Record> = state_records.into_iter().map(|r| (r.key(), r)).collect();
        let mut events_by_key: BTreeMap<RecordKey, Record> = event_records.into_iter().map(|r| (r.key(), r)).collect();
        for (record_key, value) in &overlay.state {
            match decode_entry(key::encode(*record_key).as_bytes(), value, false) {
                Ok(record) => {
                    state_by_key.insert(record.key(), record);
                }
                Err(error) => problems.push(format!("skipped: {error}")),
            }
        }
        for (record_key, value) in overlay.events_from(0) {
            match decode_entry(record_key.as_bytes(), value, true) {
                Ok(record) => {
                    events_by_key.insert(record.key(), record);
                }
                Err(error) => problems.push(format!("skipped: {error}")),
            }
        }
        state_records = state_by_key.into_values().collect();
        event_records = events_by_key.into_values().collect();
    }
    drop((state, events, logs, db));
    let checkpointed = checkpointed.ok();
    Ok(ReadBack { recovered, checkpointed, state: state_records, events: event_records, problems, opened: true })
}

/// A fresh work directory under `parent`.
fn work_dir(parent: &Path) -> PathBuf {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
    parent.join(format!("orchestrator-store-verify-{}-{nanos}", std::process::id()))
}

/// Checks the store in `dir` without changing any file in it: the mark, the journals,
/// and every record of a private copy. `intact` only if a start would serve everything
/// that was acknowledged and every record decodes.
pub fn verify(dir: &Path) -> Result<VerifyReport, Error> {
    check_not_running(dir)?;
    if !dir.join(DATABASE_DIR_NAME).is_dir() {
        return Err(Error::DataDir {
            dir: dir.to_path_buf(),
            source: std::io::Error::new(std::io::ErrorKind::NotFound, "no store database (fjall/) in this directory"),
        });
    }
    let mut text = String::new();
    let (acknowledged, mut intact) = describe(dir, &mut text)?;
    let work = work_dir(&std::env::temp_dir());
    let back = read_back(dir, &work);
    let _ = std::fs::remove_dir_all(&work);
    let back = back?;
    if !back.problems.is_empty() {
        intact = false;
    }
    for problem in &back.problems {
        let _ = writeln!(text, "  {problem}");
    }
    let recovered = back.recovered;
    if let (Some(a), r) = (acknowledged, recovered)
        && r.unwrap_or(0) < a
    {
        intact = false;
    }
    let cursors: Vec<u64> = back
        .events
        .iter()
        .filter_map(|r| match r {
            Record::Event(e) => Some(e.cursor.0),
            _ => None,
        })
        .collect();
    if let Some(hole) = cursors.windows(2).find(|w| w[1] != w[0] + 1) {
        intact = false;
        let _ = writeln!(text, "  events jump from cursor {} to {}", hole[0], hole[1]);
    }
    let _ = writeln!(
        text,
        "readable: through commit {}{}, {} state records, {} events{}",
        recovered.map(thousands).unwrap_or_else(|| "(no counter)".into()),
        match back.checkpointed {
            Some(c) if recovered.is_some_and(|r| r > c) => {
                format!(" (the tables hold commits through {}, the group logs the rest)", thousands(c))
            }
            Some(c) if c > 0 => " (all of it in the tables)".to_string(),
            _ => String::new(),
        },
        thousands(back.state.len() as u64),
        thousands(back.events.len() as u64),
        match (cursors.first(), cursors.last()) {
            (Some(a), Some(b)) => format!(" (cursors {a} to {b})"),
            _ => String::new(),
        }
    );
    let _ = writeln!(text, "{}", if intact { "intact" } else { "NOT INTACT" });
    Ok(VerifyReport {
        intact,
        text,
        acknowledged,
        recovered,
        state_records: back.state.len() as u64,
        events: back.events.len() as u64,
    })
}

/// Copies what is intact in the store in `from` into a new store in `to` (which must
/// not exist or be empty), never changing `from`: the journals up to their first damage,
/// every table entry that reads back and decodes. The new store has its own commit
/// counter and mark.
pub fn salvage(from: &Path, to: &Path) -> Result<SalvageReport, Error> {
    check_not_running(from)?;
    if to.exists() && std::fs::read_dir(to).map_err(data_dir_error(to))?.next().is_some() {
        return Err(Error::TargetExists { dir: to.to_path_buf() });
    }
    let mut text = String::new();
    let (acknowledged, _) = describe(from, &mut text)?;
    std::fs::create_dir_all(to).map_err(data_dir_error(to))?;
    let work = to.join(SALVAGE_WORK_DIR_NAME);
    let back = read_back(from, &work);
    let _ = std::fs::remove_dir_all(&work);
    let back = back?;
    for problem in &back.problems {
        let _ = writeln!(text, "  {problem}");
    }
    let complete =
        back.opened && !back.problems.iter().any(|p| p.starts_with("skipped") || p.starts_with("reading stops"));
    let state_records = back.state.len() as u64;
    let events = back.events.len() as u64;
    let mut records = back.state;
    records.extend(back.events);
    {
        let mut store = crate::FjallStore::open(to)?;
        for chunk in records.chunks(SALVAGE_BATCH_RECORDS_MAX) {
            runtime::Store::commit(&mut store, &[Batch { records: chunk.to_vec() }])?;
        }
    }
    let _ = writeln!(
        text,
        "salvaged into {}: {} state records and {} events, from commit {} of {} acknowledged{}",
        to.display(),
        thousands(state_records),
        thousands(events),
        back.recovered.map(thousands).unwrap_or_else(|| "(no counter)".into()),
        acknowledged.map(thousands).unwrap_or_else(|| "(unknown)".into()),
        if complete { "" } else { "; some entries could not be read (listed above)" }
    );
    Ok(SalvageReport { text, state_records, events, complete })
}
