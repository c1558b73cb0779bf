//! The engine: the owners of its state, the handle/poll loop around them, and recovery
//! from stored records.
//!
//! The rules are `impl Engine` blocks in their own files (`ops/`, `scheduler/`,
//! `dispatch.rs`, `executor.rs`, `results.rs`, `failure.rs`, `holds/`, `deadman/`, ...),
//! but none of them reaches into another's state: each part has an owner with private
//! fields (see the fields of [`Engine`]) and changes only through its methods, which
//! record what changed. When an input finishes, the timers of what changed are
//! recomputed (`scheduler/timers.rs`), the durable changes are gathered into one
//! `Persist` batch (`State::drain_batch`), and the commands and replies follow it.

use crate::approvals::Approvals;
use crate::connections::Connections;
use crate::effect::{Batch, Effect};
use crate::event::{Event, EventKind};
use crate::ids::*;
use crate::index::Index;
use crate::input::Input;
use crate::limits::*;
use crate::liveness::Liveness;
use crate::model::*;
use crate::policy::{ContinuationPolicy, DeadManPolicy};
use crate::record::{Record, RecoveryError};
use crate::state::State;
use crate::time::Timestamp;
use std::collections::VecDeque;

/// Knobs fixed when the engine is built. None of them is persisted except the seed,
/// which a fresh data directory takes from here and a recovered one keeps.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EngineConfig {
    /// Seeds keepalive jitter for a fresh data directory.
    pub seed: u64,
    /// The policy workers get when neither their run nor they override it (manual).
    pub default_policy: ContinuationPolicy,
    /// How long an executor may take to start a submission.
    pub command_deadline_ms: u64,
    /// How long past the deadline a connected executor may stay silent before the
    /// submission is treated as ambiguous.
    pub command_result_grace_ms: u64,
    /// How long a submitted turn may go unreported before its conversation is inspected.
    pub inspect_after_ms: u64,
    /// Backoff after a definite non-delivery.
    pub delivery_retry_backoff_ms: u64,
    /// Consecutive definite non-deliveries before the worker is paused.
    pub delivery_failures_max: u32,
    /// Recent events kept in memory.
    pub events_retained_max: usize,
    /// Recent messages per worker shown in its view.
    pub inbox_shown_max: usize,
    /// Finished runs the history shows at most (the retention of `run_history`).
    pub history_runs_max: usize,
    /// How long after it ended a finished run stays in the history.
    pub history_kept_ms: u64,
    /// The dead-man policy of runs that set none (off unless the shell says otherwise).
    pub dead_man: DeadManPolicy,
    /// Where notifications go (`--notify`, in order; at most
    /// [`NOTIFY_TARGETS_COUNT_MAX`]): none, and no notification is ever created.
    pub notify_targets: Vec<std::sync::Arc<str>>,
    /// How long a worker that needs an executor may have none of its kind before
    /// `worker.executor_absent` ([`EXECUTOR_ABSENT_MS_MAX`]; the daemon's tests shorten it).
    pub executor_absent_ms: u64,
}

impl Default for EngineConfig {
    fn default() -> Self {
        EngineConfig {
            seed: 0,
            default_policy: ContinuationPolicy::DEFAULT,
            command_deadline_ms: COMMAND_DEADLINE_MS_DEFAULT,
            command_result_grace_ms: COMMAND_RESULT_GRACE_MS_DEFAULT,
            inspect_after_ms: INSPECT_AFTER_MS_DEFAULT,
            delivery_retry_backoff_ms: DELIVERY_RETRY_BACKOFF_MS_DEFAULT,
            delivery_failures_max: DELIVERY_FAILURES_COUNT_MAX_DEFAULT,
            events_retained_max: EVENTS_RETAINED_COUNT_DEFAULT,
            inbox_shown_max: 20,
            history_runs_max: HISTORY_RUNS_COUNT_DEFAULT,
            history_kept_ms: HISTORY_KEPT_MS_DEFAULT,
            dead_man: DeadManPolicy::DEFAULT,
            notify_targets: Vec::new(),
            executor_absent_ms: EXECUTOR_ABSENT_MS_MAX,
        }
    }
}

/// Effects on their way out: the commands and replies of the input being handled wait
/// behind its `Persist` batch, then everything waits, in order, to be drained.
#[derive(Debug, Default)]
struct Outbox {
    /// Commands and replies of the input being handled.
    held: Vec<Effect>,
    /// Effects of handled inputs, not yet drained.
    ready: VecDeque<Effect>,
}

/// The deterministic orchestration state machine.
///
/// Feed it inputs with [`Engine::handle`], drain effects with [`Engine::poll_effect`],
/// and call `handle(now, Input::Tick)` when [`Engine::next_deadline`] is reached.
#[derive(Debug)]
pub struct Engine {
    /// Fixed knobs.
    pub(crate) config: EngineConfig,
    /// Everything persisted: tables, counters, event log, page holds, dead-man records,
    /// each remembering its changes for the input's batch.
    pub(crate) state: State,
    /// Derived lookups and the timer heap, rebuilt on recovery.
    pub(crate) index: Index,
    /// Connected executors and the commands handed to them: not persisted.
    pub(crate) conn: Connections,
    /// CLI approval requests waiting for a person: not persisted.
    pub(crate) approvals: Approvals,
    /// CLI retries and raised absence episodes: not persisted.
    pub(crate) liveness: Liveness,
    /// Commands, replies and batches on their way out.
    outbox: Outbox,
    /// Time of the input being handled.
    pub(crate) now: Timestamp,
}

impl Engine {
    /// A fresh engine for an empty data directory.
    pub fn new(config: EngineConfig) -> Engine {
        Engine {
            state: State::new(config.seed, config.events_retained_max),
            config,
            index: Index::default(),
            conn: Connections::default(),
            approvals: Approvals::default(),
            liveness: Liveness::default(),
            outbox: Outbox::default(),
            now: Timestamp(0),
        }
    }

    /// Handles one input at `now` and queues its effects: first the `Persist` batch
    /// (if the input changed anything), then commands and replies.
    ///
    /// `now` must not go backwards; an earlier `now` is treated as the latest seen.
    pub fn handle(&mut self, now: Timestamp, input: Input) {
        self.now = now.max(self.now);
        if self.conn.start(self.now) {
            // Absence counts from this process's first input: every worker's timer may
            // gain its liveness deadline.
            let ids: Vec<WorkerId> = self.state.workers.values().map(|w| w.id).collect();
            for id in ids {
                self.index.mark_stale(id);
            }
        }
        match input {
            Input::Call { call, op } => self.handle_call(call, op),
            Input::Executor(report) => self.handle_executor(report),
            Input::Tick => self.handle_tick(),
            Input::Notified { id, outcome } => self.notified(id, outcome),
        }
        self.finish_input();
    }

    /// The next queued effect, in order.
    pub fn poll_effect(&mut self) -> Option<Effect> {
        self.outbox.ready.pop_front()
    }

    /// When the engine next needs a `Tick`, if ever: a worker's timer, or the moment an
    /// account-wide hold lifts.
    pub fn next_deadline(&self) -> Option<Timestamp> {
        let lift = self.state.holds.next_lift();
        [self.index.next_timer(), lift, self.state.notices.next_deadline()].into_iter().flatten().min()
    }

    /// The time of the latest input.
    pub fn now(&self) -> Timestamp {
        self.now
    }

    /// The configuration.
    pub fn config(&self) -> &EngineConfig {
        &self.config
    }

    /// The seed of this data directory.
    pub fn seed(&self) -> u64 {
        self.state.ids.seed()
    }

    /// The last event cursor handed out (0 before any event).
    pub fn last_cursor(&self) -> Cursor {
        self.state.ids.last_cursor()
    }

    /// Read access to a worker.
    pub fn worker(&self, id: WorkerId) -> Option<&Worker> {
        self.state.workers.get(&id)
    }

    /// Read access to a run.
    pub fn run(&self, id: RunId) -> Option<&Run> {
        self.state.runs.get(&id)
    }

    /// Read access to an attempt.
    pub fn attempt(&self, id: AttemptId) -> Option<&Attempt> {
        self.state.attempts.get(&id)
    }

    /// Every worker, in id order.
    pub fn workers(&self) -> impl Iterator<Item = &Worker> {
        self.state.workers.values()
    }

    /// Every attempt, in id order.
    pub fn attempts(&self) -> impl Iterator<Item = &Attempt> {
        self.state.attempts.values()
    }

    /// Every notification in the outbox (pending, delivered, abandoned), in id order.
    pub fn notices(&self) -> impl Iterator<Item = &crate::notify::Notice> {
        self.state.notices.values()
    }

    /// The retained recent events, oldest first.
    pub fn recent_events(&self) -> impl Iterator<Item = &Event> {
        self.state.log.retained().iter()
    }

    /// Rebuilds an engine from stored records (latest version per key, any order).
    /// Events older than the retained window are skipped; connection state starts empty.
    pub fn recover(config: EngineConfig, records: impl IntoIterator<Item = Record>) -> Result<Engine, RecoveryError> {
        let mut engine = Engine::new(config);
        let events_retained_max = engine.config.events_retained_max;
        if let Some(state) = State::recover(events_retained_max, records)? {
            engine.state = state;
            engine.rebuild_index();
        }
        Ok(engine)
    }

    /// Compares the durable state and derived indexes of two engines (connection state,
    /// queued effects and timers excluded, since timers depend on which executors are
    /// connected): what recovery must reproduce.
    pub fn durable_eq(&self, other: &Engine) -> bool {
        self.state == other.state && self.index.eq_ignoring_timers(&other.index)
    }

    /// Rebuilds every derived index from the durable state.
    fn rebuild_index(&mut self) {
        self.index = Index::default();
        for w in self.state.workers.values() {
            self.index.add_worker(w);
        }
        for r in self.state.runs.values() {
            self.index.add_finished_run(r);
        }
        for a in self.state.attempts.values() {
            self.index.add_attempt(a.worker, a.id);
        }
        for m in self.state.messages.values() {
            self.index.add_message(m.to, m.id);
        }
        let ids: Vec<WorkerId> = self.state.workers.values().map(|w| w.id).collect();
        for id in ids {
            self.refresh_timer(id);
        }
        self.index.prune_timers();
    }

    // ----- mutation helpers used by every module -----

    /// Appends an event to the current batch and the retained window.
    pub(crate) fn emit(
        &mut self,
        run: RunId,
        worker: Option<WorkerId>,
        attempt: Option<AttemptId>,
        kind: EventKind,
    ) -> Cursor {
        self.state.append_event(self.now, run, worker, attempt, kind)
    }

    /// Queues a command or reply behind the current batch.
    pub(crate) fn push_effect(&mut self, effect: Effect) {
        self.outbox.held.push(effect);
    }

    /// Closes the current input: timers, then the batch, then the other effects.
    fn finish_input(&mut self) {
        self.fill_free_slots();
        self.notify_appended();
        self.refresh_stale_timers();
        for i in 0..self.state.runs.changed().len() {
            let id = self.state.runs.changed()[i];
            self.index.add_finished_run(&self.state.runs[&id]);
        }
        let records = self.state.drain_batch();
        if !records.is_empty() {
            self.outbox.ready.push_back(Effect::Persist(Batch { records }));
        }
        self.outbox.ready.extend(self.outbox.held.drain(..));
    }
}
