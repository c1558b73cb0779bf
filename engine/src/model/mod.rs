//! The durable domain: runs, logical workers, bindings, wake intents and execution attempts.
//!
//! Every struct here is persisted (see `record.rs`); fields that only speed things up
//! live in `index.rs` instead and are rebuilt on recovery. This file holds runs, workers
//! (spec and live state, waits, pauses, progress) and messages; `conversation.rs` what a
//! worker's conversation shows (bindings, page errors, holds, approval requests),
//! `intent.rs` pending continuations (wakes, origins, root steering), `attempt.rs`
//! execution attempts and `deadman.rs` a run's dead-man record and its firings. One file is
//! not persisted: `liveness.rs`, who carries a worker, derived for views from connections
//! and time (kept here, beside the data it describes, so that `op.rs` and the liveness rules
//! share it without an import circle). All of it is re-exported here: `engine::model::X`
//! names each type.

mod attempt;
mod conversation;
mod deadman;
mod intent;
mod liveness;

pub use attempt::*;
pub use conversation::*;
pub use deadman::*;
pub use intent::*;
pub use liveness::*;

use crate::block::BlockStatus;
use crate::ids::*;
use crate::policy::ContinuationPolicy;
use crate::time::Timestamp;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// The lifecycle of a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum RunStatus {
    /// Work is expected.
    Active,
    /// `/root` completed after every other worker finished.
    Completed,
    /// `/root` failed.
    Failed,
    /// The operator stopped the run.
    Cancelled,
}

impl RunStatus {
    /// Whether the run is over (spec 000 §10.2 step 1 cancels every queued continuation).
    pub fn is_terminal(self) -> bool {
        !matches!(self, RunStatus::Active)
    }
    /// The stable wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Active => "active",
            RunStatus::Completed => "completed",
            RunStatus::Failed => "failed",
            RunStatus::Cancelled => "cancelled",
        }
    }
}

/// One orchestrated objective: a `/root` coordinator and its lanes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Run {
    /// Identity.
    pub id: RunId,
    /// Concise main task name; lane labels are `<task name> Lane A/B/...` (003 decision 4).
    pub task_name: Arc<str>,
    /// Owner-readable name of the root conversation, printed on every bootstrap's first line.
    pub root_conversation_name: Arc<str>,
    /// Free-form run context (objective, plan) that `run_update_context` may replace.
    pub context: Arc<str>,
    /// Lifecycle.
    pub status: RunStatus,
    /// Policy inherited by workers without an override; `None` means the engine default.
    pub default_policy: Option<ContinuationPolicy>,
    /// The logical `/root` worker, created with the run.
    pub root: WorkerId,
    /// How many lanes were spawned, so the next gets the next letter.
    pub lanes_spawned: u32,
    /// When the run was created.
    pub created_at: Timestamp,
    /// When the run became terminal.
    pub ended_at: Option<Timestamp>,
}

/// What a worker must achieve (spec: objective, scope, acceptance criteria).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Assignment {
    /// What to build or do.
    pub objective: String,
    /// What the worker owns and must not step outside of.
    pub scope: String,
    /// The checks that define "done".
    pub acceptance_criteria: Vec<String>,
}

/// The rarely changing, text-heavy part of a worker, persisted as its own record so that
/// the frequent live-state writes stay small.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkerSpec {
    /// Identity.
    pub id: WorkerId,
    /// The run the worker belongs to.
    pub run: RunId,
    /// Hierarchical name, e.g. `/root/backend`; unique in the run.
    pub name: String,
    /// Owner-readable display name.
    pub display_name: String,
    /// One-line summary printed on the bootstrap's first line.
    pub task_summary: String,
    /// `<task name> Lane A`, or `Root` for `/root`.
    pub lane_label: String,
    /// Optional worktree/branch label, for provenance only.
    pub worktree: Option<String>,
    /// The current assignment; a follow-up may replace it.
    pub assignment: Assignment,
    /// Which kind of executor runs it: only an executor of this kind gets its commands
    /// (appended last; stores before format version 2 load as `Chatgpt`).
    pub executor: crate::kind::ExecutorKind,
    /// Where a CLI worker works (provenance, sent with its commands); `None` for ChatGPT.
    pub workspace: Option<crate::kind::Workspace>,
}

/// The worker lifecycle (kept apart from the execution disposition, spec 000 §7.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Lifecycle {
    /// Unfinished.
    Active,
    /// `worker_complete` was called.
    Completed,
    /// `worker_fail` was called (or its run failed).
    Failed,
    /// Interrupted by the operator or its run was cancelled.
    Cancelled,
}

impl Lifecycle {
    /// Terminal states suppress all continuation.
    pub fn is_terminal(self) -> bool {
        !matches!(self, Lifecycle::Active)
    }
    /// The stable wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Lifecycle::Active => "active",
            Lifecycle::Completed => "completed",
            Lifecycle::Failed => "failed",
            Lifecycle::Cancelled => "cancelled",
        }
    }
}

/// The execution disposition of spec 000 §7.3, derived from the worker's facts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Disposition {
    /// A turn is in progress or a continuation is being delivered.
    Running,
    /// Unfinished and eligible for another turn.
    AwaitingExecution,
    /// Cannot progress until a declared dependency changes.
    AwaitingDependency,
    /// Explicit human input is required ("Needs you").
    AwaitingHuman,
    /// Unfinished, but automatic execution is disabled.
    Paused,
    /// Terminal success.
    Completed,
    /// Terminal failure.
    Failed,
    /// Terminal cancellation.
    Cancelled,
}

impl Disposition {
    /// The stable wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Disposition::Running => "running",
            Disposition::AwaitingExecution => "awaiting_execution",
            Disposition::AwaitingDependency => "awaiting_dependency",
            Disposition::AwaitingHuman => "awaiting_human",
            Disposition::Paused => "paused",
            Disposition::Completed => "completed",
            Disposition::Failed => "failed",
            Disposition::Cancelled => "cancelled",
        }
    }
}

/// Why a worker is paused. Every reason holds automatic continuation until cleared.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum PauseReason {
    /// The operator or root paused it.
    Operator,
    /// The stall guard paused it after too long without durable progress.
    Stall,
    /// The executor found the page's controls changed and failed closed.
    HostUiChanged,
    /// A submission may or may not have happened; a person must look first.
    AmbiguousSubmission,
    /// Several consecutive deliveries definitely failed.
    DeliveryFailing,
    /// The executor's page showed a usage limit that names no reset time: a person
    /// resumes once it is over (never a retry loop).
    UsageLimit,
    /// The executor's page showed "Suspicious activity detected", a human check
    /// (challenge) or a logged-out page: a person must look at the browser first.
    AccountCheck,
    /// The conversation lost the orchestrator's app ("FORBIDDEN: This conversation does
    /// not support developer MCPs", "<App> tool has been disabled"): the binding is lost
    /// and a person recovers the worker into a new conversation.
    AppUnavailable,
    /// The executor could not choose or verify the orchestrator's app in the composer
    /// before a send (`APP_NOT_SELECTED`, nothing was sent): a person checks the app's
    /// installation and name, then resumes.
    AppNotSelected,
    /// A turn the orchestrator did not start ran in the worker's CLI session
    /// (`foreign_turn`): a person looks at the session first. Appended last: stored
    /// pauses keep their encoding.
    ForeignTurn,
    /// The worker's CLI kept retrying its model connection inside the running turn for
    /// [`crate::limits::CLI_RETRY_MS_MAX`] (network, login, server errors): a person checks
    /// the network and the CLI's login, then resumes. Appended last.
    CliRetrying,
}

impl PauseReason {
    /// The stable wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            PauseReason::Operator => "operator",
            PauseReason::Stall => "stall",
            PauseReason::HostUiChanged => "host_ui_changed",
            PauseReason::AmbiguousSubmission => "ambiguous_submission",
            PauseReason::DeliveryFailing => "delivery_failing",
            PauseReason::UsageLimit => "usage_limit",
            PauseReason::AccountCheck => "account_check",
            PauseReason::AppUnavailable => "app_unavailable",
            PauseReason::AppNotSelected => "app_not_selected",
            PauseReason::ForeignTurn => "foreign_turn",
            PauseReason::CliRetrying => "cli_retrying",
        }
    }
}

/// An active pause.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pause {
    /// Why.
    pub reason: PauseReason,
    /// Since when.
    pub at: Timestamp,
    /// An actionable sentence for the operator, when there is one.
    pub detail: Option<Arc<str>>,
}

/// Where a human wait came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum WaitSource {
    /// `worker_await_human` was called.
    Call,
    /// The agent's end-of-response block said `status: blocked`.
    Block,
}

/// An explicit, durable request for human input (spec 000 §14.1).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct HumanWait {
    /// Why the worker cannot go on alone.
    pub reason: Arc<str>,
    /// What the human is asked.
    pub question: Arc<str>,
    /// Optional answer choices.
    pub choices: Vec<Arc<str>>,
    /// When it was asked.
    pub requested_at: Timestamp,
    /// Call or end-of-response block.
    pub source: WaitSource,
}

/// What a dependency wait waits for.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum DependencyCondition {
    /// Released automatically when that worker completes.
    WorkerCompleted(WorkerId),
    /// Released only by `worker_release_dependency` (CI, deploy, another team...).
    External(Arc<str>),
}

/// A durable dependency wait (spec 000 §14.2).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DependencyWait {
    /// The condition.
    pub condition: DependencyCondition,
    /// Why the worker waits.
    pub reason: Arc<str>,
    /// Since when.
    pub requested_at: Timestamp,
}

/// Stall-guard state (spec 000 §16).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum StallState {
    /// Making progress (or not yet past a threshold).
    Clear,
    /// Past the warning threshold; continuation goes on.
    Warned,
    /// Past the pause threshold; the worker is paused for stall.
    Paused,
}

/// Durable progress accounting (spec 000 §16.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProgressAccount {
    /// When the last durable progress signal arrived.
    pub last_at: Option<Timestamp>,
    /// The event cursor of that signal.
    pub last_cursor: Option<Cursor>,
    /// Start of the current no-progress window (last progress or stall acknowledgement).
    pub baseline_at: Timestamp,
    /// Execution time (turns submitted or generating) in this window, excluding the
    /// turn running now: the stall clock runs only while the worker executes, so
    /// waiting for an executor, a human or a page error is never a stall.
    pub quiet_ms: u64,
    /// Submitted attempts since the last progress signal.
    pub attempts_without: u32,
    /// Whether progress arrived since the last submission.
    pub since_submission: bool,
    /// Stall-guard state.
    pub stall: StallState,
}

/// The live, frequently written state of a logical worker.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Worker {
    /// Identity.
    pub id: WorkerId,
    /// The run.
    pub run: RunId,
    /// Names and assignment; persisted as a separate record.
    #[serde(skip)]
    pub spec: Arc<WorkerSpec>,
    /// Lifecycle.
    pub lifecycle: Lifecycle,
    /// Completion summary or failure/cancellation reason.
    pub outcome: Option<Arc<str>>,
    /// Worker override of the run default; `None` inherits.
    pub policy: Option<ContinuationPolicy>,
    /// Active pause, if any.
    pub pause: Option<Pause>,
    /// Pause as soon as the current turn ends.
    pub pause_after_turn: bool,
    /// Active human wait.
    pub human: Option<Arc<HumanWait>>,
    /// The answer to the last resolved human wait, for the agent to read.
    pub human_answer: Option<Arc<str>>,
    /// Active dependency wait.
    pub dependency: Option<Arc<DependencyWait>>,
    /// The managed conversation lease.
    pub binding: Option<Binding>,
    /// The pending continuation, if any.
    pub intent: Option<Intent>,
    /// The attempt whose command is out and unanswered (at most one: spec 000 §21.1).
    pub in_flight: Option<AttemptId>,
    /// The attempt whose turn was last submitted and is not yet closed.
    pub turn: Option<AttemptId>,
    /// Attempts created so far (the last sequence number).
    pub attempts: u32,
    /// Automatic resumes delivered so far.
    pub auto_resumes: u32,
    /// When the last continuation was submitted (anti-spam floor baseline).
    pub last_delivery_at: Option<Timestamp>,
    /// Whether any attempt of this worker was ever submitted (the bootstrap went out).
    pub bootstrapped: bool,
    /// Bumped at every submission; seeds the keepalive jitter.
    pub keepalive_seq: u32,
    /// The seeded jitter draw of the current sequence (see `scheduler::keepalive_draw`).
    pub keepalive_draw: u64,
    /// The keepalive of the current sequence already fired.
    pub keepalive_fired: bool,
    /// Progress accounting and stall state.
    pub progress: ProgressAccount,
    /// Consecutive definite non-deliveries.
    pub delivery_failures: u32,
    /// The last valid end-of-response block status.
    pub last_block: Option<BlockStatus>,
    /// Digest of the last delivered correction, so identical ones coalesce.
    pub last_steering_digest: Option<u64>,
    /// When the worker was spawned.
    pub created_at: Timestamp,
    /// When it became terminal.
    pub ended_at: Option<Timestamp>,
}

/// A message between workers, or from the operator, kept in the control plane.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Message {
    /// Identity.
    pub id: MessageId,
    /// The run.
    pub run: RunId,
    /// Sender worker; `None` is the operator.
    pub from: Option<WorkerId>,
    /// Recipient worker.
    pub to: WorkerId,
    /// Body (capped).
    pub body: Arc<str>,
    /// When it was sent.
    pub at: Timestamp,
}
