//! The durable domain: runs, logical workers, bindings, wake intents and execution attempts.
//!
//! Every struct here is persisted (see `record.rs`); fields that only speed things up
//! live in `index.rs` instead and are rebuilt on recovery.

use crate::block::BlockStatus;
use crate::ids::*;
use crate::policy::ContinuationPolicy;
use crate::time::Timestamp;
use crate::wake::WakeSet;
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

/// A page error the executor classified.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ErrorKind {
    /// "Message delivery timed out": end the attempt, send a fresh `continue`, never Retry.
    DeliveryTimeout,
    /// "You've reached the maximum length": the conversation needs replacing.
    ConversationFull,
    /// Composer/send/stop controls not found: fail closed.
    HostUiChanged,
    /// A usage limit: a boundary to respect, not to work around.
    UsageLimit,
    /// Logged out: a person must log in (account-wide hard stop).
    LoginRequired,
    /// Any other error card ("Something went wrong").
    Generic,
    /// ChatGPT's "Too many requests" dialog: an account-wide hold until it lifts.
    RateLimited,
    /// "Suspicious activity detected": an account-wide hard stop until a person resumes.
    SuspiciousActivity,
    /// A Cloudflare challenge ("Just a moment...", "Verify you are human"): an
    /// account-wide hard stop until a person resumes.
    Challenge,
    /// An unknown modal dialog over this conversation, which the executor never
    /// dismisses: nothing is typed until a later report shows the page without it.
    BlockedByDialog,
    /// The latest turn says the conversation cannot use the orchestrator's app any more
    /// ("FORBIDDEN: This conversation does not support developer MCPs", "... is
    /// restricted to developer MCPs", "<App> tool has been disabled"): the binding is
    /// lost and the worker paused; recovery is a new conversation, never a retry here.
    AppUnavailable,
    /// A turn the orchestrator did not start ran in a CLI session (a user's own hook, a
    /// scheduled wake-up, a prompt typed by hand): the worker is paused for a person, who
    /// looks at the session and resumes. Appended last: stored states keep their encoding.
    ForeignTurn,
}

impl ErrorKind {
    /// The stable wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::DeliveryTimeout => "delivery_timeout",
            ErrorKind::ConversationFull => "conversation_full",
            ErrorKind::HostUiChanged => "host_ui_changed",
            ErrorKind::UsageLimit => "usage_limit",
            ErrorKind::LoginRequired => "login_required",
            ErrorKind::Generic => "generic",
            ErrorKind::RateLimited => "rate_limited",
            ErrorKind::SuspiciousActivity => "suspicious_activity",
            ErrorKind::Challenge => "challenge",
            ErrorKind::BlockedByDialog => "blocked_by_dialog",
            ErrorKind::AppUnavailable => "app_unavailable",
            ErrorKind::ForeignTurn => "foreign_turn",
        }
    }
    /// Whether a page showing this error takes nothing typed into it, not even an
    /// operator's explicit turn: the page is the truth about limits, account checks and
    /// dialogs.
    pub fn stops_typing(self) -> bool {
        matches!(
            self,
            ErrorKind::UsageLimit
                | ErrorKind::RateLimited
                | ErrorKind::SuspiciousActivity
                | ErrorKind::Challenge
                | ErrorKind::LoginRequired
                | ErrorKind::BlockedByDialog
        )
    }
    /// Whether the error stops the whole account (every worker on that executor) until
    /// a person resumes.
    pub fn needs_account_check(self) -> bool {
        matches!(self, ErrorKind::SuspiciousActivity | ErrorKind::Challenge | ErrorKind::LoginRequired)
    }
    /// Whether the error is an account's usage or rate limit (held until its time).
    pub fn is_account_limit(self) -> bool {
        matches!(self, ErrorKind::UsageLimit | ErrorKind::RateLimited)
    }
}

/// Why a worker is held: waiting on something that lifts by itself (a limit's reset
/// time, a later page state), not a pause a person clears.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum HoldReason {
    /// The account's usage limit, until the reset time the page named.
    UsageLimit,
    /// ChatGPT's "Too many requests", until the time the page named or a default wait.
    RateLimited,
    /// An unknown dialog covers the worker's conversation.
    BlockedByDialog,
    /// ChatGPT shows a tool-approval card ("Allow ChatGPT to use <App>?") in the worker's
    /// conversation: the turn is suspended until a person answers it.
    AwaitingApproval,
}

impl HoldReason {
    /// The stable wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            HoldReason::UsageLimit => "usage_limit",
            HoldReason::RateLimited => "rate_limited",
            HoldReason::BlockedByDialog => "blocked_by_dialog",
            HoldReason::AwaitingApproval => "awaiting_approval",
        }
    }
}

/// One account: an executor and the kind of worker it runs there. A browser profile is
/// one ChatGPT login; a CLI executor has a Codex login and a Claude login, whose limits
/// are apart (a Codex usage limit never holds a Claude worker).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct AccountKey {
    /// The executor that reported the limit (its profile or its CLI logins).
    pub executor: ExecutorId,
    /// The kind of worker whose account it is.
    pub kind: crate::kind::ExecutorKind,
}

impl std::fmt::Display for AccountKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.executor, self.kind)
    }
}

/// An account-wide hold on one account (an executor and a worker kind): nothing is typed
/// into any of that account's conversations until `until`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AccountHold {
    /// Usage limit or rate limit.
    pub reason: HoldReason,
    /// When it began.
    pub since: Timestamp,
    /// When it lifts by itself (clamped between the report and
    /// [`crate::limits::ACCOUNT_HOLD_MS_MAX`] after it).
    pub until: Timestamp,
    /// The page's own words (untrusted, capped), for people.
    pub detail: Option<Arc<str>>,
}

/// A CLI's approval request waiting for a person (the executor's `ask` mode): what the
/// dashboard shows in "Needs you" and what an `approval_answer` must name.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PendingApproval {
    /// The executor's handle for the request, stable while it waits (e.g. `apr-3`).
    pub id: Arc<str>,
    /// What is asked: `command` (run a command line) or `file_change` (apply edits).
    pub kind: Arc<str>,
    /// The command line and its directory, or the files changed (untrusted, capped at
    /// [`crate::limits::PAGE_DETAIL_CHARS_MAX`] characters, control characters removed).
    pub summary: Arc<str>,
}

/// A person's answer to a [`PendingApproval`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ApprovalDecision {
    /// Let the CLI go on with what it asked.
    Approve,
    /// Refuse it; the CLI's turn goes on without it.
    Decline,
}

impl ApprovalDecision {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            ApprovalDecision::Approve => "approve",
            ApprovalDecision::Decline => "decline",
        }
    }
}

/// Holds that come from what pages show, persisted as one record (rarely written: only
/// when a hold begins, changes or lifts).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PageHolds {
    /// Account-wide holds by account (executor and worker kind), at most
    /// [`crate::limits::ACCOUNT_HOLDS_COUNT_MAX`]. Keyed by executor only before store
    /// format version 3 (such a hold loads as a hold of each kind of that executor).
    pub accounts: std::collections::BTreeMap<AccountKey, AccountHold>,
    /// The page's words for a hold over one worker's conversation: the heading of the
    /// dialog covering it, or the name of the app whose approval card waits (the hold
    /// itself is the binding's state, `Error(BlockedByDialog)` or `AwaitingApproval`;
    /// this is only what people read).
    pub dialogs: std::collections::BTreeMap<WorkerId, Arc<str>>,
}

/// The coarse state of a managed conversation, as last reported by its executor.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ConversationState {
    /// Nothing reported yet.
    Unknown,
    /// Loaded, composer usable, nothing generating.
    Ready,
    /// A turn is being generated.
    Generating,
    /// The last turn ended.
    Idle,
    /// An error card is the current state.
    Error(ErrorKind),
    /// The tab is gone.
    Closed,
    /// A tool-approval card waits for a person in this conversation ("Allow ChatGPT to
    /// use <App>?"): the turn is suspended, nothing is typed and the executor never
    /// clicks the card. Appended last: the stored encoding of older states is unchanged.
    AwaitingApproval,
}

impl ConversationState {
    /// Whether a new user turn may be submitted now (idle delivery).
    pub fn accepts_send(self) -> bool {
        matches!(
            self,
            ConversationState::Ready | ConversationState::Idle | ConversationState::Error(ErrorKind::DeliveryTimeout)
        )
    }
    /// The stable wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            ConversationState::Unknown => "unknown",
            ConversationState::Ready => "ready",
            ConversationState::Generating => "generating",
            ConversationState::Idle => "idle",
            ConversationState::Error(_) => "error",
            ConversationState::Closed => "closed",
            ConversationState::AwaitingApproval => "awaiting_approval",
        }
    }
}

/// Whether a binding can host turns.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum BindingStatus {
    /// Attached by a call or created by a command; no executor has confirmed it yet.
    Pending,
    /// An executor holds this conversation in a managed tab.
    Verified,
    /// The tab is gone or the conversation is full: recovery needs a fresh conversation.
    Lost,
}

/// The managed conversation currently leased to a worker: replaceable, never the identity.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Binding {
    /// Conversation URL (or the empty string while a `conversation.create` is in flight).
    pub conversation: Arc<str>,
    /// The executor that last confirmed the binding.
    pub executor: Option<ExecutorId>,
    /// Usable or lost.
    pub status: BindingStatus,
    /// Last reported coarse state.
    pub state: ConversationState,
    /// Per-binding sequence of that report; older reports are ignored.
    pub state_seq: u64,
    /// When the state was first reported.
    pub state_since: Timestamp,
}

/// One of the seven outcomes of root review (spec 000 §10.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum SteeringOutcome {
    /// Aligned; keep going (obeys the anti-spam floor).
    ContinueAsPlanned,
    /// Drifting from assignment or architecture.
    CorrectDirection,
    /// Another subgoal first.
    ChangePriority,
    /// A commit, contract or result is now available.
    ProvideDependency,
    /// Root needs tests, a diff or proof.
    RequestEvidence,
    /// Stop after the current turn.
    Pause,
    /// The lane claims done; root asks for a final correction or review.
    TerminalReconcile,
}

impl SteeringOutcome {
    /// The stable wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            SteeringOutcome::ContinueAsPlanned => "continue_as_planned",
            SteeringOutcome::CorrectDirection => "correct_direction",
            SteeringOutcome::ChangePriority => "change_priority",
            SteeringOutcome::ProvideDependency => "provide_dependency",
            SteeringOutcome::RequestEvidence => "request_evidence",
            SteeringOutcome::Pause => "pause",
            SteeringOutcome::TerminalReconcile => "terminal_reconcile",
        }
    }
    /// Every outcome, for parsing and tests.
    pub const ALL: [SteeringOutcome; 7] = [
        SteeringOutcome::ContinueAsPlanned,
        SteeringOutcome::CorrectDirection,
        SteeringOutcome::ChangePriority,
        SteeringOutcome::ProvideDependency,
        SteeringOutcome::RequestEvidence,
        SteeringOutcome::Pause,
        SteeringOutcome::TerminalReconcile,
    ];
    /// Parses a wire name.
    pub fn parse(s: &str) -> Option<SteeringOutcome> {
        SteeringOutcome::ALL.into_iter().find(|o| o.as_str() == s)
    }
}

/// A root steering message waiting for delivery.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Steering {
    /// Root's verdict.
    pub outcome: SteeringOutcome,
    /// Root's words, delivered verbatim.
    pub message: Arc<str>,
    /// Material corrections bypass the anti-spam floor.
    pub material: bool,
    /// Stable digest of outcome and message, so identical corrections coalesce.
    pub digest: u64,
}

/// Who created a continuation; a higher origin passes more holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Origin {
    /// An idle, keepalive or event wake: obeys policy, pauses and the stall guard.
    Scheduler,
    /// Root steering or a resolved wait: passes manual mode, not pauses.
    Root,
    /// An explicit operator action (continue now, spawn, attach, follow-up): passes
    /// manual mode and operator pauses.
    Operator,
}

impl Origin {
    /// The stable wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Origin::Scheduler => "scheduler",
            Origin::Root => "root",
            Origin::Operator => "operator",
        }
    }
}

/// Extra content a pending continuation carries beyond its wake reasons.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum IntentPayload {
    /// A plain continuation.
    Continue,
    /// A new or replaced assignment (`worker_followup`).
    Followup(Arc<str>),
    /// Root steering for this lane.
    Steering(Arc<Steering>),
}

/// A durable, coalesced wake: at most one per worker, never dropped while it may still
/// be delivered (spec 000 §10.5).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Intent {
    /// Every reason that asked for this continuation (provenance).
    pub reasons: WakeSet,
    /// Who asked: scheduler wakes obey every hold; root actions pass manual mode;
    /// operator actions also pass pauses (spec 000 §10.2 steps 5-6, 001 C2.4).
    pub origin: Origin,
    /// When the first reason arrived.
    pub created_at: Timestamp,
    /// Earliest retry after a definite non-delivery (the floor itself is derived from
    /// `Worker::last_delivery_at`, so an idle delivery may still bypass it).
    pub not_before: Option<Timestamp>,
    /// The anti-spam floor time last announced for this intent (provenance only).
    pub deferred_until: Option<Timestamp>,
    /// The executor cannot steer mid-turn: deliver only when the conversation is idle.
    pub idle_only: bool,
    /// Follow-up text or root steering to deliver.
    pub payload: IntentPayload,
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

/// Why an attempt exists (spec 000 §7.2, plus checkpoint and corrective from 003).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum AttemptReason {
    /// The bootstrap of a new worker.
    Initial,
    /// The scheduler resumed an unfinished worker.
    AutoResume,
    /// An operator or root asked for one more turn.
    ManualResume,
    /// A new or replaced assignment.
    Followup,
    /// A fresh conversation for a worker whose conversation was lost.
    Recovery,
    /// A keepalive checkpoint.
    Checkpoint,
    /// Root steering.
    Corrective,
}

impl AttemptReason {
    /// The stable wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            AttemptReason::Initial => "initial",
            AttemptReason::AutoResume => "auto_resume",
            AttemptReason::ManualResume => "manual_resume",
            AttemptReason::Followup => "followup",
            AttemptReason::Recovery => "recovery",
            AttemptReason::Checkpoint => "checkpoint",
            AttemptReason::Corrective => "corrective",
        }
    }
}

/// Where an attempt stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum AttemptState {
    /// Command issued, no result yet: the continuation in flight.
    Scheduled,
    /// The executor reported the prompt submitted and accepted.
    Submitted,
    /// The conversation is generating this turn.
    Generating,
    /// The turn ended; the worker's next step is being decided.
    Idle,
    /// Closed normally (next attempt took over, or the worker finished).
    Completed,
    /// Closed because the worker is waiting (human, dependency, pause).
    Blocked,
    /// Closed by an executor or page error.
    Failed,
    /// Never submitted.
    Cancelled,
}

impl AttemptState {
    /// Whether the attempt is closed.
    pub fn is_closed(self) -> bool {
        matches!(self, AttemptState::Completed | AttemptState::Blocked | AttemptState::Failed | AttemptState::Cancelled)
    }
    /// The stable wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            AttemptState::Scheduled => "scheduled",
            AttemptState::Submitted => "submitted",
            AttemptState::Generating => "generating",
            AttemptState::Idle => "idle",
            AttemptState::Completed => "completed",
            AttemptState::Blocked => "blocked",
            AttemptState::Failed => "failed",
            AttemptState::Cancelled => "cancelled",
        }
    }
}

/// How the attempt's prompt reaches the conversation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Delivery {
    /// `conversation.create`: open a fresh conversation and submit the first prompt.
    Create,
    /// `conversation.send`: idle delivery.
    Send,
    /// `conversation.steer`: mid-turn delivery while generating.
    Steer,
}

impl Delivery {
    /// The executor command name.
    pub fn command_name(self) -> &'static str {
        match self {
            Delivery::Create => "conversation.create",
            Delivery::Send => "conversation.send",
            Delivery::Steer => "conversation.steer",
        }
    }
}

/// Which prompt generator produced the attempt's text.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum PromptKind {
    /// Worker bootstrap.
    Bootstrap,
    /// `/root` bootstrap.
    RootBootstrap,
    /// Resume (spec 000 §11).
    Resume,
    /// Keepalive checkpoint (spec 000 §10.3).
    Checkpoint,
    /// Exactly `continue`, after a delivery timeout.
    DeliveryTimeout,
    /// Root steering.
    Corrective,
    /// New assignment.
    Followup,
    /// Fresh conversation for a lost one.
    Recovery,
    /// The block said complete without `worker_complete`.
    CompletionReconcile,
}

/// How an attempt ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum AttemptOutcome {
    /// The turn ended and a later attempt took over.
    TurnEnded,
    /// A mid-turn steer superseded this turn.
    Steered,
    /// The worker completed.
    WorkerCompleted,
    /// The worker failed.
    WorkerFailed,
    /// The worker was cancelled.
    WorkerCancelled,
    /// The worker waits for a human or a dependency, or is paused.
    WorkerBlocked,
    /// Message delivery timed out on the page.
    DeliveryTimeout,
    /// The executor could not tell whether the prompt was submitted.
    Ambiguous,
    /// The executor found the page's controls changed.
    HostUiChanged,
    /// Definitely not submitted (deadline, composer busy, steering unavailable...).
    NotDelivered,
    /// The conversation was closed or is full.
    ConversationLost,
    /// An error card ended the turn.
    PageError,
    /// The continuation was no longer wanted before it left.
    Withdrawn,
}

impl AttemptOutcome {
    /// The stable wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            AttemptOutcome::TurnEnded => "turn_ended",
            AttemptOutcome::Steered => "steered",
            AttemptOutcome::WorkerCompleted => "worker_completed",
            AttemptOutcome::WorkerFailed => "worker_failed",
            AttemptOutcome::WorkerCancelled => "worker_cancelled",
            AttemptOutcome::WorkerBlocked => "worker_blocked",
            AttemptOutcome::DeliveryTimeout => "delivery_timeout",
            AttemptOutcome::Ambiguous => "ambiguous",
            AttemptOutcome::HostUiChanged => "host_ui_changed",
            AttemptOutcome::NotDelivered => "not_delivered",
            AttemptOutcome::ConversationLost => "conversation_lost",
            AttemptOutcome::PageError => "page_error",
            AttemptOutcome::Withdrawn => "withdrawn",
        }
    }
}

/// One execution attempt: a submitted turn (or steer) of a logical worker.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Attempt {
    /// Identity (`exe-N`), also the base of the command id and idempotency key.
    pub id: AttemptId,
    /// The worker.
    pub worker: WorkerId,
    /// The worker's run.
    pub run: RunId,
    /// Per-worker sequence, 1-based, strictly increasing.
    pub sequence: u32,
    /// Why it exists.
    pub reason: AttemptReason,
    /// Every coalesced wake reason.
    pub wake: WakeSet,
    /// Who asked for it.
    pub origin: Origin,
    /// How the prompt is delivered.
    pub delivery: Delivery,
    /// Which prompt.
    pub prompt: PromptKind,
    /// Root steering carried by a corrective attempt.
    pub steering: Option<Arc<Steering>>,
    /// Follow-up instructions carried by a follow-up attempt.
    pub followup: Option<Arc<str>>,
    /// The conversation it targets (empty for `conversation.create`).
    pub conversation: Arc<str>,
    /// Where it stands.
    pub state: AttemptState,
    /// How it ended.
    pub outcome: Option<AttemptOutcome>,
    /// Executor error code, e.g. `AMBIGUOUS_SUBMISSION`.
    pub error_code: Option<Arc<str>>,
    /// Executor error detail (capped).
    pub error_detail: Option<Arc<str>>,
    /// The worker's last progress cursor when scheduled.
    pub last_progress_cursor: Option<Cursor>,
    /// When it was scheduled.
    pub scheduled_at: Timestamp,
    /// The executor must not start submitting after this.
    pub deadline: Timestamp,
    /// When the executor reported submission.
    pub submitted_at: Option<Timestamp>,
    /// Binding state sequence at submission; older state reports do not end this turn.
    pub submitted_state_seq: u64,
    /// When generation was observed.
    pub generating_at: Option<Timestamp>,
    /// When the turn was observed idle.
    pub idle_at: Option<Timestamp>,
    /// When it was closed.
    pub terminal_at: Option<Timestamp>,
}

impl Attempt {
    /// The executor command id.
    pub fn command_id(&self) -> CommandId {
        CommandId { attempt: self.id }
    }
    /// The stable idempotency key derived from the attempt (spec 000 §12.4).
    pub fn idempotency_key(&self) -> String {
        format!("{}:{}", self.delivery.command_name(), self.id)
    }
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
