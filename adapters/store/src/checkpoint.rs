//! [`Logs`]: the two group log files, the overlays of what they hold, and the checkpoint
//! that writes a frozen overlay into the keyspaces on its own thread, off the commit path.
//!
//! Commits go to the active log file (`group-log-a` or `group-log-b`, `log_file.rs`) and its
//! overlay. Once the active log passes [`crate::Options::checkpoint_log_bytes`], the commit
//! that passed it freezes the overlay (an [`Arc`], never changed again), switches new
//! commits to the other file (whose every frame a checkpoint wrote already: it is reused
//! from its start) and starts a thread that ingests the frozen records into `state` and
//! `events`. Reads consult the active overlay, then the frozen one, then the keyspaces. A
//! later commit finds the thread done and drops the frozen overlay. While a checkpoint
//! runs, the active log grows past the checkpoint size without blocking commits, up to
//! [`crate::Options::log_bytes_max`]; a commit that passes that waits for the running
//! checkpoint and starts the next.
//!
//! Records are absolute puts (the store writes the latest envelope of a key and never
//! deletes; events are put once by cursor), so replaying a log whose records a checkpoint
//! already ingested leaves the same latest version of every key, as long as no later
//! checkpoint wrote a newer one: a start skips every frame up to the checkpoint key
//! ([`key::CHECKPOINT_KEY`]), which the checkpoint writes with its last ingestion. That
//! key is also what lets a file be reused without clearing it: its stale frames are all
//! up to it. The frozen log's commits are all older than the active log's, so a start
//! replays the older log under the newer one, and resumes the checkpoint a crash
//! interrupted.
//!
//! A store written between issue 33's first and second steps kept its log in two fjall
//! keyspaces (`log-a`/`log-b`): what they hold after the checkpoint key is frozen at the
//! start like an interrupted checkpoint, and that checkpoint clears them.

use crate::error::Error;
use crate::group_log::{self, Overlay, Replayed};
use crate::key;
use crate::log_file::{LOG_FILE_NAMES, LogFile};
use fjall::Keyspace;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use std::thread::JoinHandle;

/// The two group log keyspaces of a store written between issue 33's first and second
/// steps, keyed by commit number (`group_log.rs`); empty in every other store.
pub const KEYSPACES_LOG: [&str; 2] = ["log-a", "log-b"];

/// An overlay with nothing in it: what reads consult when no checkpoint runs.
static OVERLAY_EMPTY: Overlay = Overlay::new();

/// Where a checkpoint writes: handles shared with the store (fjall's are reference counted).
#[derive(Clone)]
struct Target {
    /// The data directory, for error messages.
    dir: PathBuf,
    /// Receives every record but events.
    state: Keyspace,
    /// Receives events.
    events: Keyspace,
}

/// Writes `overlay` into `events` and then `state` (one ingestion each: sorted tables, no
/// journal items, durable when `finish` returns), the `state` one with
/// [`key::CHECKPOINT_KEY`] naming the overlay's newest commit, then clears the log
/// keyspaces in `legacy` (a store's old fjall logs). The order matters: the checkpoint
/// key is durable only once both keyspaces hold every record up to it, and a start skips
/// log frames up to it. A crash before the key leaves frames the keyspaces may hold
/// already, which a start applies again, which is idempotent.
fn run(target: &Target, overlay: &Overlay, legacy: Option<&[Keyspace; 2]>) -> Result<(), Error> {
    let fail = |during, source| Error::Fjall { during, dir: target.dir.clone(), source };
    group_log::ingest(&target.events, None, overlay.events_from(0))
        .map_err(|e| fail("checkpointing (ingesting events)", e))?;
    let checkpointed = key::encode_commits(overlay.commits_last);
    let state = overlay.state.iter().map(|(k, v)| (key::encode(*k), v.as_slice()));
    group_log::ingest(&target.state, Some((key::CHECKPOINT_KEY, &checkpointed)), state)
        .map_err(|e| fail("checkpointing (ingesting records)", e))?;
    for log in legacy.into_iter().flatten() {
        log.clear().map_err(|e| fail("checkpointing (clearing an old group log keyspace)", e))?;
    }
    Ok(())
}

/// When checkpoints start and when commits wait for one (the store's options).
pub(crate) struct LogSizes {
    /// Active log bytes past which a commit starts a checkpoint.
    pub checkpoint_log_bytes: u64,
    /// Active log bytes past which a commit waits for the checkpoint in flight.
    pub log_bytes_max: u64,
}

/// A frozen overlay on its way into the keyspaces.
struct Frozen {
    /// Its records: reads consult them (under the active overlay) until the checkpoint is done.
    overlay: Arc<Overlay>,
    /// Whether they came from a store's old log keyspaces, which the checkpoint clears.
    legacy: bool,
    /// The checkpoint's thread; `None` for a checkpoint a crash interrupted, which the
    /// store resumes at its first commit (a start may still be refused until then, and a
    /// refused start must leave every file as it was).
    thread: Option<JoinHandle<Result<(), Error>>>,
}

/// What a start found in the logs, for [`Logs::new`].
pub(crate) struct Found {
    /// What the log files hold after the checkpoint key (`log_file::replay`).
    pub replayed: Replayed,
    /// Where the next frame goes in each file: the end of its run when it is the active
    /// file and holds commits after the checkpoint key, else 0 (a new cycle).
    pub ends: [u64; 2],
    /// The newest commit in each file (0 when none): a file is reused only once the
    /// checkpoint key covers it.
    pub newest: [u64; 2],
    /// What a store's old log keyspaces hold after the checkpoint key, if anything.
    pub legacy: Option<Overlay>,
    /// The checkpoint key.
    pub checkpointed: u64,
}

/// The group logs, their overlays and the checkpoint in flight.
pub(crate) struct Logs {
    /// Where checkpoints write.
    target: Target,
    /// The data directory's log files ([`LOG_FILE_NAMES`]), once they exist (a store
    /// written before them gets them at its first commit, [`Logs::create_files`]).
    files: Option<[LogFile; 2]>,
    /// Where each file's next frame goes when it is opened.
    ends: [u64; 2],
    /// The newest commit written to each file.
    newest: [u64; 2],
    /// The old log keyspaces ([`KEYSPACES_LOG`]), cleared by the checkpoint of what they held.
    legacy: [Keyspace; 2],
    /// Which log file new commits go to.
    active: usize,
    /// The records of the active log: what commits add to.
    pub overlay: Overlay,
    /// The checkpoint in flight (or interrupted by a crash and not resumed yet).
    frozen: Option<Frozen>,
    /// The store's poison: a checkpoint thread that fails sets it at once, so the next
    /// call fails even before the thread is joined.
    poisoned: Arc<OnceLock<String>>,
    /// Active log bytes past which a commit starts a checkpoint.
    checkpoint_log_bytes: u64,
    /// Active log bytes past which a commit waits for the checkpoint in flight.
    log_bytes_max: u64,
    /// The start found a checkpoint a crash interrupted (the file besides the active one
    /// held commits after the checkpoint key, or the old log keyspaces did).
    resumed: bool,
    /// The newest commit a checkpoint wrote into the keyspaces ([`key::CHECKPOINT_KEY`]).
    checkpointed: u64,
}

impl Logs {
    /// The logs as a start found them. `dir` holds the log files; they are opened (not
    /// created) here.
    pub fn new(
        dir: PathBuf,
        state: Keyspace,
        events: Keyspace,
        legacy: [Keyspace; 2],
        found: Found,
        poisoned: Arc<OnceLock<String>>,
        sizes: LogSizes,
    ) -> io::Result<Logs> {
        let Found { replayed, ends, newest, legacy: legacy_overlay, checkpointed } = found;
        let LogSizes { checkpoint_log_bytes, log_bytes_max } = sizes;
        assert!(checkpoint_log_bytes > 0 && log_bytes_max >= checkpoint_log_bytes, "log sizes out of order");
        assert!(
            legacy_overlay.is_none() || replayed.interrupted.is_none(),
            "the start refuses a store with both an old log and an interrupted checkpoint"
        );
        let frozen = match (replayed.interrupted, legacy_overlay) {
            (Some(overlay), _) => Some(Frozen { overlay: Arc::new(overlay), legacy: false, thread: None }),
            (None, Some(overlay)) => Some(Frozen { overlay: Arc::new(overlay), legacy: true, thread: None }),
            (None, None) => None,
        };
        let files = if LOG_FILE_NAMES.iter().all(|name| dir.join(name).exists()) {
            Some(open_files(&dir, ends)?)
        } else {
            None
        };
        Ok(Logs {
            target: Target { dir, state, events },
            files,
            ends,
            newest,
            legacy,
            active: replayed.active,
            overlay: replayed.overlay,
            resumed: frozen.is_some(),
            frozen,
            poisoned,
            checkpoint_log_bytes,
            log_bytes_max,
            checkpointed,
        })
    }

    /// Creates the log files that are missing (a store written before them), synced, with
    /// the data directory. Before the store's format marker says they exist.
    pub fn create_files(&mut self) -> io::Result<()> {
        if self.files.is_none() {
            let files = open_files(&self.target.dir, self.ends)?;
            for file in &files {
                std::fs::File::open(file.path())?.sync_all()?;
            }
            std::fs::File::open(&self.target.dir)?.sync_all()?;
            self.files = Some(files);
        }
        Ok(())
    }

    /// Appends commit `commit`'s group log value to the active file, durably.
    pub fn append(&mut self, commit: u64, value: &[u8]) -> Result<(), Error> {
        let files = self.files.as_mut().expect("the store creates the log files before its first commit");
        let file = &mut files[self.active];
        if let Err(source) = file.append(value) {
            let error = Error::LogFile { during: "committing a batch", path: file.path().to_path_buf(), source };
            let _ = self.poisoned.set(error.to_string());
            return Err(error);
        }
        self.newest[self.active] = commit;
        Ok(())
    }

    /// The records of the checkpoint in flight (empty when none is).
    pub fn frozen(&self) -> &Overlay {
        self.frozen.as_ref().map_or(&OVERLAY_EMPTY, |f| &f.overlay)
    }

    /// Bytes of the active log's values (under `log_bytes_max` once a commit returned).
    pub fn active_log_bytes(&self) -> u64 {
        self.overlay.log_bytes
    }

    /// Whether the start found (and the store resumes) a checkpoint a crash interrupted.
    pub fn resumed(&self) -> bool {
        self.resumed
    }

    /// Before a commit writes: resumes an interrupted checkpoint, and reaps a finished
    /// one (its error, if it failed).
    pub fn before_commit(&mut self) -> Result<(), Error> {
        self.spawn_frozen()?;
        self.reap(false)
    }

    /// After a commit's records went into the overlay: starts a checkpoint when the active
    /// log is due, waiting for the one in flight only past `log_bytes_max`.
    pub fn after_commit(&mut self) -> Result<(), Error> {
        self.reap(false)?;
        if self.overlay.log_bytes < self.checkpoint_log_bytes {
            return Ok(());
        }
        if self.frozen.is_some() && self.overlay.log_bytes >= self.log_bytes_max {
            self.reap(true)?;
        }
        if self.frozen.is_none() {
            self.freeze()?;
        }
        Ok(())
    }

    /// Waits for the checkpoint in flight, if one runs.
    pub fn wait(&mut self) -> Result<(), Error> {
        self.reap(true)
    }

    /// At a clean close: finishes the checkpoint in flight, then checkpoints what is left
    /// here, on this thread, so that the keyspaces alone hold every record (and the next
    /// start reads only stale frames).
    pub fn close(&mut self) -> Result<(), Error> {
        self.reap(true)?;
        if let Some(frozen) = self.frozen.take() {
            // Interrupted by a crash and never resumed (no commit since the start).
            run(&self.target, &frozen.overlay, frozen.legacy.then_some(&self.legacy))?;
            self.checkpointed = self.checkpointed.max(frozen.overlay.commits_last);
        }
        if !self.overlay.is_empty() {
            run(&self.target, &self.overlay, None)?;
            self.checkpointed = self.checkpointed.max(self.overlay.commits_last);
            self.overlay.clear();
        }
        Ok(())
    }

    /// Freezes the active overlay, switches commits to the other file (from its start)
    /// and starts the checkpoint of the frozen records.
    fn freeze(&mut self) -> Result<(), Error> {
        assert!(self.frozen.is_none(), "one checkpoint at a time");
        let next = 1 - self.active;
        // The checkpoint of the other file's records finished before it was reaped (or
        // the start found none after the checkpoint key): new commits never overwrite
        // frames that are not checkpointed yet.
        assert!(
            self.newest[next] <= self.checkpointed,
            "the group log file {} holds commit {}, past the checkpointed {}, while the other one is active",
            LOG_FILE_NAMES[next],
            self.newest[next],
            self.checkpointed
        );
        if let Some(files) = &mut self.files {
            files[next].restart();
        }
        self.ends[next] = 0;
        let overlay = Arc::new(std::mem::take(&mut self.overlay));
        self.frozen = Some(Frozen { overlay, legacy: false, thread: None });
        self.active = next;
        self.spawn_frozen()
    }

    /// Starts the thread of a frozen overlay that has none.
    fn spawn_frozen(&mut self) -> Result<(), Error> {
        // A failed checkpoint is not run again: the store is poisoned.
        if self.poisoned.get().is_some() {
            return Ok(());
        }
        let Some(frozen) = self.frozen.as_mut().filter(|f| f.thread.is_none()) else { return Ok(()) };
        let target = self.target.clone();
        let overlay = Arc::clone(&frozen.overlay);
        let legacy = frozen.legacy.then(|| self.legacy.clone());
        let poisoned = Arc::clone(&self.poisoned);
        let thread = std::thread::Builder::new().name("store-checkpoint".into()).spawn(move || {
            let result = run(&target, &overlay, legacy.as_ref());
            if let Err(error) = &result {
                let _ = poisoned.set(error.to_string());
            }
            result
        });
        match thread {
            Ok(thread) => {
                frozen.thread = Some(thread);
                Ok(())
            }
            Err(source) => {
                let error = Error::CheckpointThread { dir: self.target.dir.clone(), source };
                let _ = self.poisoned.set(error.to_string());
                Err(error)
            }
        }
    }

    /// Joins the checkpoint's thread if it finished (or, with `wait`, once it does) and
    /// drops the frozen overlay if the checkpoint succeeded.
    fn reap(&mut self, wait: bool) -> Result<(), Error> {
        let Some(frozen) = &mut self.frozen else { return Ok(()) };
        let Some(thread) = frozen.thread.take_if(|t| wait || t.is_finished()) else { return Ok(()) };
        let result = match thread.join() {
            Ok(result) => result,
            // A panic is a programmer error: let it go on up.
            Err(panic) => std::panic::resume_unwind(panic),
        };
        // A failed checkpoint keeps its overlay (the records are still only in the logs)
        // and poisoned the store on its thread; it is reported once, here.
        result?;
        self.checkpointed = self.checkpointed.max(frozen.overlay.commits_last);
        self.frozen = None;
        Ok(())
    }
}

/// Opens both log files in `dir`, creating missing ones empty, each's next frame at its end in `ends`.
fn open_files(dir: &Path, ends: [u64; 2]) -> io::Result<[LogFile; 2]> {
    Ok([LogFile::open(&dir.join(LOG_FILE_NAMES[0]), ends[0])?, LogFile::open(&dir.join(LOG_FILE_NAMES[1]), ends[1])?])
}

impl Drop for Logs {
    /// The checkpoint's thread holds fjall handles: it ends before the database does.
    fn drop(&mut self) {
        let _ = self.reap(true);
    }
}
