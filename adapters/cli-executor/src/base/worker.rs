//! What every worker task shares, below both rooms: the messages in ([`In`]) and out
//! ([`Out`]), what the tasks hold in common ([`Shared`]: the journal, the leases, the
//! settings, the reports' channel), the restart backoff ([`Restarts`]) and the `Shell`
//! a room's task implements for the executor loop (`run::supervise::serve`) to drive.
//! The tasks themselves are their rooms': `codex::task`, `claude::task`.

use crate::Error;
use crate::base::journal::Journal;
use crate::base::lease::Leases;
use crate::base::limits::{CHILD_RESTART_BACKOFF_MS_MAX, CHILD_RESTART_BACKOFF_MS_MIN, CHILD_RESTARTS_MAX};
use crate::base::pump::{Core, Event, Pump};
use crate::base::settings::Settings;
use engine::ids::WorkerId;
use executor_protocol::{BindingWire, CommandWire, ResultWire, StateWire, SteerLandedWire};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;
use tokio::sync::mpsc;
use tokio::time::Instant;

/// What the connection hands a worker's task.
#[derive(Debug, Clone)]
pub enum In {
    /// A command from the daemon (a create, send or steer already journaled `received`),
    /// with the working directory it named (`workspace.directory`).
    Command(Box<CommandWire>, Option<String>),
    /// The executor (re)started: start the child, resume the bound thread, settle what the
    /// journal left open and publish the conversation's state.
    Recover,
}

/// What a worker's task reports for the daemon, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Out {
    /// A `conversation.state` (its `seq` already persisted).
    State(StateWire),
    /// A `command.result` (already journaled).
    Result(ResultWire),
    /// A `binding`: a created thread settled (sent after its create's result).
    Binding(BindingWire),
    /// A `steer.landed` (already journaled; a `next_turn` one before the state it names).
    Landed(SteerLandedWire),
}

/// What the worker tasks share.
#[derive(Clone)]
pub struct Shared {
    /// The one journal.
    pub journal: Arc<Mutex<Journal>>,
    /// The lease directory (reaped at start).
    pub leases: Arc<Leases>,
    /// How children start.
    pub settings: Arc<Settings>,
    /// Reports, to the connection.
    pub out: mpsc::Sender<Out>,
}

/// The journal, even if a task panicked while holding it (the journal's own state is
/// only changed after a successful append, so it is never half updated).
pub fn lock(journal: &Mutex<Journal>) -> MutexGuard<'_, Journal> {
    journal.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Children of a worker that exited in a row, and when the next one is due.
#[derive(Debug, Default)]
pub struct Restarts {
    /// Exits in a row (reset by a submitted prompt or an idle turn end).
    pub exits: u32,
    /// When the next child is due after an exit.
    pub at: Option<Instant>,
    /// [`CHILD_RESTARTS_MAX`] exits in a row: no child until the next command.
    pub gave_up: bool,
}

impl Restarts {
    /// A child exited (or could not start): `true` when that made [`CHILD_RESTARTS_MAX`]
    /// in a row (given up); otherwise the next child is due after a backoff of
    /// [`CHILD_RESTART_BACKOFF_MS_MIN`], doubled for each exit in a row.
    pub fn exited(&mut self) -> bool {
        self.exits += 1;
        if self.exits >= CHILD_RESTARTS_MAX {
            self.gave_up = true;
            self.at = None;
            return true;
        }
        let backoff = CHILD_RESTART_BACKOFF_MS_MIN
            .saturating_mul(1 << (self.exits - 1).min(16))
            .min(CHILD_RESTART_BACKOFF_MS_MAX);
        self.at = Some(Instant::now() + Duration::from_millis(backoff));
        false
    }

    /// A command that submits: a worker whose child was given up on tries again.
    pub fn retry(&mut self) {
        if self.gave_up {
            self.gave_up = false;
            self.exits = 0;
        }
    }
}

/// A worker's task as the executor loop drives it (`run::supervise::serve`).
pub(crate) trait Shell: Send {
    /// The core of its children.
    type Core: Core;
    /// The worker.
    fn worker(&self) -> WorkerId;
    /// Its pump (a core and its child), if one was started.
    fn pump(&mut self) -> &mut Option<Pump<Self::Core>>;
    /// Its restart backoff.
    fn restarts(&mut self) -> &mut Restarts;
    /// A message from the connection.
    async fn input(&mut self, message: In);
    /// What its pump observed.
    async fn event(&mut self, event: Result<Event<<Self::Core as Core>::Report>, Error>);
    /// The backoff after an exit passed: start the next child.
    async fn restart(&mut self);
}
