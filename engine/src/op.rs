//! Caller operations (the whole MCP and operator surface, as engine inputs) and their replies.
//!
//! Arguments arrive here already parsed into typed values; the adapters own JSON and
//! name the offending field when parsing fails. Text lengths are checked by the engine.

use crate::event::Event;
use crate::ids::*;
use crate::model::*;
use crate::policy::{ContinuationPolicy, DeadManPolicy, PolicyPatch};
use crate::time::Timestamp;
use std::sync::Arc;

/// The executor of a new run's `/root`, as `worker_spawn` names a lane's: no kind is a
/// ChatGPT root; a `codex` or `claude` root needs its workspace (`WORKSPACE_REQUIRED`),
/// which its CLI lanes then inherit.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RootExecutor {
    /// The root's kind; `None` is `chatgpt`.
    pub executor: Option<crate::kind::ExecutorKind>,
    /// Where a CLI root works.
    pub workspace: Option<crate::kind::Workspace>,
}

/// One operation a caller (agent, root, operator UI) asks of the engine.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Operation {
    /// `run_create`: a run and its `/root` worker.
    RunCreate {
        /// Concise main task name.
        task_name: String,
        /// Owner-readable name of the root conversation.
        root_conversation_name: String,
        /// Run objective / plan.
        context: String,
        /// Default continuation policy for the run's workers (applied to the engine default).
        default_policy: Option<PolicyPatch>,
        /// Which executor runs `/root` (default: a ChatGPT conversation); boxed, as it is
        /// rarely set and would otherwise widen every operation.
        root_executor: Box<RootExecutor>,
    },
    /// A person's "Start a run here" (the operator channel): `run_create` and `/root`
    /// bound at once, in one batch, so no run exists whose root waits for a binding nobody
    /// will make.
    RunStart {
        /// Concise main task name.
        task_name: String,
        /// Owner-readable name of the root conversation.
        root_conversation_name: String,
        /// Run objective / plan.
        context: String,
        /// Default continuation policy for the run's workers (applied to the engine default).
        default_policy: Option<PolicyPatch>,
        /// The conversation `/root` is attached to (as `worker_attach`); `None` for a new
        /// chat, which the root's first turn creates (`conversation.create`).
        root_conversation: Option<String>,
        /// Which executor runs `/root` (default: a ChatGPT conversation); boxed, as it is
        /// rarely set and would otherwise widen every operation.
        root_executor: Box<RootExecutor>,
    },
    /// `run_get`.
    RunGet {
        /// Which run.
        run: RunId,
    },
    /// `run_list`: unfinished runs, oldest first, then (with `include_terminal`) the
    /// finished ones the history keeps (`EngineConfig::history_runs_max`,
    /// `history_kept_ms`), the most recently ended first.
    RunList {
        /// Include completed, failed and cancelled runs.
        include_terminal: bool,
    },
    /// The operator's history (not an MCP tool): finished runs, the most recently ended
    /// first, at most `limit` (up to `LIST_PAGE_COUNT_MAX`).
    RunHistory {
        /// At most this many.
        limit: usize,
    },
    /// `run_update_context`: readable names and context (003).
    RunUpdateContext {
        /// Which run.
        run: RunId,
        /// New task name.
        task_name: Option<String>,
        /// New root conversation name.
        root_conversation_name: Option<String>,
        /// New context.
        context: Option<String>,
    },
    /// `run_cancel` ("Stop run"): every unfinished worker is cancelled.
    RunCancel {
        /// Which run.
        run: RunId,
        /// Why.
        reason: String,
    },
    /// `run_set_default_continuation`.
    RunSetDefaultContinuation {
        /// Which run.
        run: RunId,
        /// Fields to change on the current default.
        patch: PolicyPatch,
    },
    /// `run_pause_all`: pause every unfinished worker after its current turn.
    RunPauseAll {
        /// Which run.
        run: RunId,
    },
    /// `run_resume_all`: clear operator pauses of every unfinished worker.
    RunResumeAll {
        /// Which run.
        run: RunId,
    },
    /// `worker_spawn`.
    WorkerSpawn(Box<SpawnArgs>),
    /// `worker_attach`: bind an existing managed conversation to a worker.
    WorkerAttach {
        /// Which worker.
        worker: WorkerId,
        /// Conversation URL.
        conversation: String,
    },
    /// `worker_get`.
    WorkerGet {
        /// Which worker.
        worker: WorkerId,
    },
    /// `worker_list`.
    WorkerList {
        /// Which run.
        run: RunId,
        /// Include terminal workers.
        include_terminal: bool,
    },
    /// `worker_progress`: durable progress; resets the no-progress counters.
    WorkerProgress {
        /// Which worker.
        worker: WorkerId,
        /// What was done.
        summary: String,
        /// Checkpoint commit, if any.
        commit: Option<String>,
    },
    /// `worker_complete`.
    WorkerComplete {
        /// Which worker.
        worker: WorkerId,
        /// Terminal handoff.
        summary: String,
    },
    /// `worker_fail`.
    WorkerFail {
        /// Which worker.
        worker: WorkerId,
        /// Why.
        reason: String,
    },
    /// `worker_interrupt` ("Stop worker"): destructive, unlike pause.
    WorkerInterrupt {
        /// Which worker.
        worker: WorkerId,
        /// Why.
        reason: String,
    },
    /// `worker_followup`: a new or replaced assignment, delivered as a follow-up attempt.
    WorkerFollowup {
        /// Which worker.
        worker: WorkerId,
        /// What to do now.
        instructions: String,
        /// A replacement assignment, if the old one is obsolete.
        assignment: Option<Assignment>,
    },
    /// `worker_await_human`.
    WorkerAwaitHuman {
        /// Which worker.
        worker: WorkerId,
        /// Why.
        reason: String,
        /// What the human is asked.
        question: String,
        /// Optional choices.
        choices: Vec<String>,
    },
    /// `worker_resolve_human`.
    WorkerResolveHuman {
        /// Which worker.
        worker: WorkerId,
        /// The human's answer.
        answer: String,
    },
    /// `worker_await_dependency`.
    WorkerAwaitDependency {
        /// Which worker.
        worker: WorkerId,
        /// What it waits for.
        condition: DependencyCondition,
        /// Why.
        reason: String,
    },
    /// `worker_release_dependency`.
    WorkerReleaseDependency {
        /// Which worker.
        worker: WorkerId,
        /// What changed.
        note: String,
    },
    /// `worker_pause`: now, or after the current turn.
    WorkerPause {
        /// Which worker.
        worker: WorkerId,
        /// Let the current generation finish first.
        after_current_turn: bool,
    },
    /// `approval_answer` (operator only): a person's answer to the CLI approval request
    /// that holds the worker `awaiting_approval`, sent to its executor once.
    WorkerApprovalAnswer {
        /// Which worker.
        worker: WorkerId,
        /// The request's id, as the dashboard showed it.
        approval: String,
        /// Approve or decline.
        decision: ApprovalDecision,
    },
    /// `worker_resume`: clear any pause (including a stall pause) and let policy decide.
    WorkerResume {
        /// Which worker.
        worker: WorkerId,
    },
    /// `worker_continue_now`: exactly one manual attempt.
    WorkerContinueNow {
        /// Which worker.
        worker: WorkerId,
        /// Clear a human or dependency wait instead of refusing.
        override_wait: bool,
        /// Also clear an operator pause (otherwise the worker stays paused after this turn).
        clear_pause: bool,
    },
    /// `worker_continuation_get`.
    WorkerContinuationGet {
        /// Which worker.
        worker: WorkerId,
    },
    /// `worker_continuation_set`.
    WorkerContinuationSet {
        /// Which worker.
        worker: WorkerId,
        /// Fields to change on the effective policy (becomes a worker override).
        patch: PolicyPatch,
        /// Drop the override and inherit the run default (the patch must then be empty).
        inherit: bool,
    },
    /// `worker_steer`: root review outcome for a lane (spec 000 §10.4).
    WorkerSteer {
        /// Which lane.
        worker: WorkerId,
        /// Root's verdict.
        outcome: SteeringOutcome,
        /// Root's words.
        message: String,
        /// Bypass the anti-spam floor; defaults to true for `correct_direction`.
        material: Option<bool>,
    },
    /// `worker_attempts`.
    WorkerAttempts {
        /// Which worker.
        worker: WorkerId,
        /// Only attempts with a larger sequence.
        after_sequence: u32,
        /// At most this many.
        limit: usize,
    },
    /// `message_send`.
    MessageSend {
        /// Sender; `None` is the operator.
        from: Option<WorkerId>,
        /// Recipient.
        to: WorkerId,
        /// Body.
        body: String,
    },
    /// `events_after` (the engine half of `events_wait`).
    EventsAfter {
        /// Events with a larger cursor.
        cursor: Cursor,
        /// Only this run's events.
        run: Option<RunId>,
        /// Only this worker's events.
        worker: Option<WorkerId>,
        /// At most this many.
        limit: usize,
    },
}

/// Arguments of `worker_spawn`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpawnArgs {
    /// The run.
    pub run: RunId,
    /// Hierarchical name under `/root`.
    pub name: String,
    /// Owner-readable name; defaults to the lane label.
    pub display_name: Option<String>,
    /// One-line summary.
    pub task_summary: String,
    /// What to do.
    pub assignment: Assignment,
    /// Worktree/branch label (provenance).
    pub worktree: Option<String>,
    /// Worker policy override, applied to the run default.
    pub policy: Option<PolicyPatch>,
    /// Open a fresh conversation and submit the bootstrap now (otherwise wait for `worker_attach`).
    pub start: bool,
    /// Which kind of executor runs it; `None` inherits the parent's kind.
    pub executor: Option<crate::kind::ExecutorKind>,
    /// A CLI worker's directory and branch; `None` inherits the parent's directory.
    pub workspace: Option<crate::kind::Workspace>,
}

impl Operation {
    /// Whether the operation only reads (no batch is persisted for it).
    pub fn is_read(&self) -> bool {
        matches!(
            self,
            Operation::RunGet { .. }
                | Operation::RunList { .. }
                | Operation::RunHistory { .. }
                | Operation::WorkerGet { .. }
                | Operation::WorkerList { .. }
                | Operation::WorkerContinuationGet { .. }
                | Operation::WorkerAttempts { .. }
                | Operation::EventsAfter { .. }
        )
    }

    /// The MCP tool name of the operation.
    pub fn tool_name(&self) -> &'static str {
        match self {
            Operation::RunCreate { .. } => "run_create",
            Operation::RunStart { .. } => "run_start",
            Operation::RunGet { .. } => "run_get",
            Operation::RunList { .. } => "run_list",
            Operation::RunHistory { .. } => "run_history",
            Operation::RunUpdateContext { .. } => "run_update_context",
            Operation::RunCancel { .. } => "run_cancel",
            Operation::RunSetDefaultContinuation { .. } => "run_set_default_continuation",
            Operation::RunPauseAll { .. } => "run_pause_all",
            Operation::RunResumeAll { .. } => "run_resume_all",
            Operation::WorkerSpawn(_) => "worker_spawn",
            Operation::WorkerAttach { .. } => "worker_attach",
            Operation::WorkerGet { .. } => "worker_get",
            Operation::WorkerList { .. } => "worker_list",
            Operation::WorkerProgress { .. } => "worker_progress",
            Operation::WorkerComplete { .. } => "worker_complete",
            Operation::WorkerFail { .. } => "worker_fail",
            Operation::WorkerInterrupt { .. } => "worker_interrupt",
            Operation::WorkerFollowup { .. } => "worker_followup",
            Operation::WorkerAwaitHuman { .. } => "worker_await_human",
            Operation::WorkerResolveHuman { .. } => "worker_resolve_human",
            Operation::WorkerAwaitDependency { .. } => "worker_await_dependency",
            Operation::WorkerReleaseDependency { .. } => "worker_release_dependency",
            Operation::WorkerPause { .. } => "worker_pause",
            Operation::WorkerResume { .. } => "worker_resume",
            Operation::WorkerApprovalAnswer { .. } => "approval_answer",
            Operation::WorkerContinueNow { .. } => "worker_continue_now",
            Operation::WorkerContinuationGet { .. } => "worker_continuation_get",
            Operation::WorkerContinuationSet { .. } => "worker_continuation_set",
            Operation::WorkerSteer { .. } => "worker_steer",
            Operation::WorkerAttempts { .. } => "worker_attempts",
            Operation::MessageSend { .. } => "message_send",
            Operation::EventsAfter { .. } => "events_wait",
        }
    }
}

/// Where a worker's effective policy comes from (the UI shows overrides differently).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PolicySource {
    /// The engine default (manual).
    Engine,
    /// The run default.
    Run,
    /// A worker override.
    Worker,
}

impl PolicySource {
    /// The stable wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            PolicySource::Engine => "engine_default",
            PolicySource::Run => "run_default",
            PolicySource::Worker => "worker_override",
        }
    }
}

/// A run with its worker counts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunView {
    /// The run.
    pub run: Run,
    /// Workers in the run.
    pub workers: u32,
    /// Unfinished workers.
    pub unfinished: u32,
    /// The dead-man policy and the open "stopped moving" alert, if any.
    pub dead_man: DeadManView,
    /// How a finished run ended, in its root's words: the completion summary (the
    /// handoff) or the failure or stop reason; `None` while it runs.
    pub outcome: Option<Arc<str>>,
}

/// The dead-man state of a run as reads show it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeadManView {
    /// The run's effective policy.
    pub policy: DeadManPolicy,
    /// The latest firing while nothing moved the run since: "Run X has stopped moving".
    pub alert: Option<DeadManFiring>,
}

/// What holds a worker without pausing it: it lifts by itself (derived, never stored
/// per worker).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HoldView {
    /// Usage limit, rate limit or dialog.
    pub reason: HoldReason,
    /// Since when.
    pub since: Timestamp,
    /// When an account hold lifts (`None` for a dialog: when the page shows another state).
    pub until: Option<Timestamp>,
    /// The page's words (a dialog's heading, a limit notice): untrusted, capped.
    pub detail: Option<Arc<str>>,
    /// With `awaiting_approval` from a CLI executor in `ask` mode: the request a person
    /// answers with `approval_answer`.
    pub approval: Option<PendingApproval>,
}

/// A worker with everything a caller needs to act on it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WorkerView {
    /// The worker (spec included).
    pub worker: Worker,
    /// Derived execution disposition.
    pub disposition: Disposition,
    /// Effective policy.
    pub policy: ContinuationPolicy,
    /// Where the effective policy comes from.
    pub policy_source: PolicySource,
    /// The latest attempt (in flight or current turn).
    pub current_attempt: Option<Attempt>,
    /// Recent messages to this worker, oldest first.
    pub inbox: Vec<Message>,
    /// What holds it (an account limit or a dialog), if anything.
    pub hold: Option<HoldView>,
    /// Who carries it (its executor, connected or not, since when), while it is unfinished.
    pub liveness: Option<crate::model::LivenessView>,
    /// Unfinished workers that wait for this one (`worker_await_dependency`), by id: what a
    /// Stop's confirmation names, since stopping it ends their waits unmet.
    pub waited_on_by: Vec<WorkerId>,
}

/// What `worker_continue_now` did (spec 000 §15.2: one deterministic behaviour).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ContinueNowOutcome {
    /// A manual attempt was scheduled (or is waiting for an executor).
    Scheduled,
    /// The conversation is generating: one manual resume is queued for when the turn ends.
    QueuedAfterTurn,
    /// A continuation was already pending or in flight; nothing was added.
    AlreadyPending,
    /// The conversation is lost: a recovery attempt opens a fresh one.
    Recovering,
}

impl ContinueNowOutcome {
    /// The stable wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            ContinueNowOutcome::Scheduled => "scheduled",
            ContinueNowOutcome::QueuedAfterTurn => "queued_after_turn",
            ContinueNowOutcome::AlreadyPending => "already_pending",
            ContinueNowOutcome::Recovering => "recovering",
        }
    }
}

/// A page of events.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EventsPage {
    /// Matching events, in cursor order.
    pub events: Vec<Event>,
    /// Pass this as the next cursor.
    pub next_cursor: Cursor,
    /// The engine's memory starts after this cursor; older events live in the store.
    pub retained_after: Cursor,
}

/// The reply to a successful operation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reply {
    /// One run.
    Run(Box<RunView>),
    /// Several runs.
    Runs(Vec<RunView>),
    /// One worker.
    Worker(Box<WorkerView>),
    /// Several workers.
    Workers(Vec<WorkerView>),
    /// A policy read or write.
    Policy {
        /// Effective policy.
        effective: ContinuationPolicy,
        /// Where it comes from.
        source: PolicySource,
    },
    /// `worker_continue_now`.
    ContinueNow {
        /// What happened.
        outcome: ContinueNowOutcome,
        /// The worker after it.
        worker: Box<WorkerView>,
    },
    /// `worker_steer`.
    Steer {
        /// Whether it merged into an identical correction.
        coalesced: bool,
        /// The lane after it.
        worker: Box<WorkerView>,
    },
    /// `worker_attempts`.
    Attempts(Vec<Attempt>),
    /// `message_send`.
    Message(Message),
    /// `events_after`.
    Events(EventsPage),
}

/// Shared text, as stored.
pub(crate) fn shared(s: &str) -> Arc<str> {
    Arc::from(s)
}
