//! [`Logs`]: the two group log keyspaces, the overlays of what they hold, and the
//! checkpoint that writes a frozen overlay into the keyspaces on its own thread, off the
//! commit path.
//!
//! Commits go to the active log (`log-a` or `log-b`) and its overlay. Once the active log
//! passes [`crate::Options::checkpoint_log_bytes`], the commit that passed it freezes the
//! overlay (an [`Arc`], never changed again), switches new commits to the other log (empty:
//! the checkpoint before cleared it) and starts a thread that ingests the frozen records
//! into `state` and `events` and then clears the frozen log whole. Reads consult the active
//! overlay, then the frozen one, then the keyspaces. A later commit finds the thread done
//! and drops the frozen overlay. While a checkpoint runs, the active log grows past the
//! checkpoint size without blocking commits, up to [`crate::Options::log_bytes_max`]; a
//! commit that passes that waits for the running checkpoint and starts the next.
//!
//! Records are absolute puts (the store writes the latest envelope of a key and never
//! deletes; events are put once by cursor), so replaying a log whose records a checkpoint
//! already ingested leaves the same latest version of every key, as long as no later
//! checkpoint wrote a newer one: a start skips every entry up to the checkpoint key
//! ([`key::CHECKPOINT_KEY`]), which the checkpoint writes with its last ingestion. The
//! frozen log's commits are all older than the active log's, so a start replays the older
//! log under the newer one, and resumes the checkpoint a crash interrupted.

use crate::error::Error;
use crate::group_log::{self, Overlay};
use crate::key;
use fjall::Keyspace;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use std::thread::JoinHandle;

/// The two group log keyspaces, keyed by commit number (`group_log.rs`).
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
/// [`key::CHECKPOINT_KEY`] naming the overlay's newest commit, then clears `log`. The
/// order matters: the checkpoint key is durable only once both keyspaces hold every
/// record up to it, and a start skips log entries up to it. A crash before the clear
/// leaves log entries the keyspaces hold already, which a start skips or (before the
/// key) applies again, which is idempotent.
fn run(target: &Target, overlay: &Overlay, log: &Keyspace) -> Result<(), Error> {
    let fail = |during, source| Error::Fjall { during, dir: target.dir.clone(), source };
    // Empty for a checkpoint a crash interrupted after its ingestions: only the clear is left.
    if !overlay.is_empty() {
        group_log::ingest(&target.events, None, overlay.events_from(0))
            .map_err(|e| fail("checkpointing (ingesting events)", e))?;
        let checkpointed = key::encode_commits(overlay.commits_last);
        let state = overlay.state.iter().map(|(k, v)| (key::encode(*k), v.as_slice()));
        group_log::ingest(&target.state, Some((key::CHECKPOINT_KEY, &checkpointed)), state)
            .map_err(|e| fail("checkpointing (ingesting records)", e))?;
    }
    log.clear().map_err(|e| fail("checkpointing (clearing the group log)", e))
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
    /// Which of [`KEYSPACES_LOG`] holds them, cleared once they are ingested.
    log: usize,
    /// The checkpoint's thread; `None` for a checkpoint a crash interrupted, which the
    /// store resumes at its first commit (a start may still be refused until then, and a
    /// refused start must leave every file as it was).
    thread: Option<JoinHandle<Result<(), Error>>>,
}

/// The group logs, their overlays and the checkpoint in flight.
pub(crate) struct Logs {
    /// Where checkpoints write.
    target: Target,
    /// The two log keyspaces ([`KEYSPACES_LOG`]).
    logs: [Keyspace; 2],
    /// Which log new commits go to.
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
    /// The start found a checkpoint a crash interrupted (the log besides the active one
    /// held entries).
    resumed: bool,
    /// The newest commit a checkpoint wrote into the keyspaces ([`key::CHECKPOINT_KEY`]).
    checkpointed: u64,
}

impl Logs {
    /// The logs as a start found them: `replayed` is what [`group_log::replay`] read.
    pub fn new(
        dir: PathBuf,
        state: Keyspace,
        events: Keyspace,
        logs: [Keyspace; 2],
        replayed: group_log::Replayed,
        poisoned: Arc<OnceLock<String>>,
        sizes: LogSizes,
    ) -> Logs {
        let checkpointed = replayed.checkpointed;
        let LogSizes { checkpoint_log_bytes, log_bytes_max } = sizes;
        assert!(checkpoint_log_bytes > 0 && log_bytes_max >= checkpoint_log_bytes, "log sizes out of order");
        let resumed = replayed.interrupted.is_some();
        let frozen = replayed.interrupted.map(|overlay| Frozen {
            overlay: Arc::new(overlay),
            log: 1 - replayed.active,
            thread: None,
        });
        Logs {
            target: Target { dir, state, events },
            logs,
            active: replayed.active,
            overlay: replayed.overlay,
            frozen,
            poisoned,
            checkpoint_log_bytes,
            log_bytes_max,
            resumed,
            checkpointed,
        }
    }

    /// The log keyspace new commits go to.
    pub fn active_log(&self) -> &Keyspace {
        &self.logs[self.active]
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
    /// one (its error, if it failed). `Ok(true)` if one finished.
    pub fn before_commit(&mut self) -> Result<bool, Error> {
        self.spawn_frozen()?;
        self.reap(false)
    }

    /// After a commit's records went into the overlay: starts a checkpoint when the active
    /// log is due, waiting for the one in flight only past `log_bytes_max`.
    /// `Ok(true)` when a checkpoint finished here (fjall may then rotate its journal).
    pub fn after_commit(&mut self) -> Result<bool, Error> {
        let mut finished = self.reap(false)?;
        if self.overlay.log_bytes < self.checkpoint_log_bytes {
            return Ok(finished);
        }
        if self.frozen.is_some() && self.overlay.log_bytes >= self.log_bytes_max {
            finished |= self.reap(true)?;
        }
        if self.frozen.is_none() {
            self.freeze()?;
        }
        Ok(finished)
    }

    /// Waits for the checkpoint in flight, if one runs. `Ok(true)` if one finished.
    pub fn wait(&mut self) -> Result<bool, Error> {
        self.reap(true)
    }

    /// At a clean close: finishes the checkpoint in flight, then checkpoints what is left
    /// here, on this thread, so that the keyspaces alone hold every record.
    pub fn close(&mut self) -> Result<(), Error> {
        self.reap(true)?;
        if let Some(frozen) = self.frozen.take() {
            // Interrupted by a crash and never resumed (no commit since the start).
            run(&self.target, &frozen.overlay, &self.logs[frozen.log])?;
            self.checkpointed = self.checkpointed.max(frozen.overlay.commits_last);
        }
        if !self.overlay.is_empty() {
            run(&self.target, &self.overlay, &self.logs[self.active])?;
            self.checkpointed = self.checkpointed.max(self.overlay.commits_last);
            self.overlay.clear();
        }
        Ok(())
    }

    /// Freezes the active overlay, switches commits to the other log and starts the
    /// checkpoint of the frozen records.
    fn freeze(&mut self) -> Result<(), Error> {
        assert!(self.frozen.is_none(), "one checkpoint at a time");
        let next = 1 - self.active;
        // The checkpoint that froze the other log cleared it before it was reaped (or the
        // start found only checkpointed entries in it, which it skips): new commits never
        // share a log with commits that are not checkpointed yet.
        let newest = match self.logs[next].last_key_value().map(fjall::Guard::key).transpose() {
            Ok(newest) => newest.and_then(|k| <[u8; 8]>::try_from(&*k).ok()).map(u64::from_be_bytes),
            Err(error) => return Err(self.fail("checkpointing (reading the group log)", error)),
        };
        assert!(
            newest.is_none_or(|commit| commit <= self.checkpointed),
            "the group log {} holds commit {newest:?}, past the checkpointed {}, while the other one is active",
            KEYSPACES_LOG[next],
            self.checkpointed
        );
        let overlay = Arc::new(std::mem::take(&mut self.overlay));
        self.frozen = Some(Frozen { overlay, log: self.active, thread: None });
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
        let log = self.logs[frozen.log].clone();
        let poisoned = Arc::clone(&self.poisoned);
        let thread = std::thread::Builder::new().name("store-checkpoint".into()).spawn(move || {
            let result = run(&target, &overlay, &log);
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
    /// drops the frozen overlay if the checkpoint succeeded. `Ok(true)` if one finished.
    fn reap(&mut self, wait: bool) -> Result<bool, Error> {
        let Some(frozen) = &mut self.frozen else { return Ok(false) };
        let Some(thread) = frozen.thread.take_if(|t| wait || t.is_finished()) else { return Ok(false) };
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
        Ok(true)
    }

    fn fail(&self, during: &'static str, source: fjall::Error) -> Error {
        let error = Error::Fjall { during, dir: self.target.dir.clone(), source };
        let _ = self.poisoned.set(error.to_string());
        error
    }
}

impl Drop for Logs {
    /// The checkpoint's thread holds fjall handles: it ends before the database does.
    fn drop(&mut self) {
        let _ = self.reap(true);
    }
}
