//! The durable, ordered event log: every mutation appends its events in the same batch.

use crate::block::BlockStatus;
use crate::ids::*;
use crate::model::*;
use crate::policy::Mode;
use crate::time::Timestamp;
use crate::wake::WakeSet;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// One event. Cursors are dense and strictly increasing across the whole engine.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Event {
    /// Position in the log.
    pub cursor: Cursor,
    /// When it happened.
    pub at: Timestamp,
    /// The run it belongs to.
    pub run: RunId,
    /// The worker it concerns, if any.
    pub worker: Option<WorkerId>,
    /// The execution attempt it concerns, if any.
    pub attempt: Option<AttemptId>,
    /// What happened.
    pub kind: EventKind,
}

/// What happened. Names follow spec 000 §9 (`execution.submitted`, `worker.awaiting_human`...).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum EventKind {
    /// A run was created.
    RunCreated,
    /// Task name, root conversation name or context changed.
    RunContextUpdated,
    /// The run's default continuation policy changed.
    RunPolicyChanged {
        /// The new default mode.
        mode: Mode,
    },
    /// The run became terminal.
    RunEnded {
        /// Completed, failed or cancelled.
        status: RunStatus,
    },
    /// A worker was spawned.
    WorkerSpawned,
    /// A conversation was attached (or re-attached) to the worker.
    WorkerAttached {
        /// The conversation URL.
        conversation: Arc<str>,
    },
    /// Durable progress (`worker_progress`).
    WorkerProgress {
        /// What was done.
        summary: Arc<str>,
        /// A checkpoint commit, when there is one.
        commit: Option<Arc<str>>,
    },
    /// The worker completed.
    WorkerCompleted {
        /// Terminal handoff.
        summary: Arc<str>,
    },
    /// The worker failed.
    WorkerFailed {
        /// Why.
        reason: Arc<str>,
    },
    /// The worker was cancelled (interrupt or run cancellation).
    WorkerCancelled {
        /// Why.
        reason: Arc<str>,
    },
    /// A new or replaced assignment was given.
    WorkerFollowup,
    /// The worker waits for a human ("Needs you").
    WorkerAwaitingHuman {
        /// Why.
        reason: Arc<str>,
    },
    /// The human wait was resolved.
    WorkerHumanResolved,
    /// The worker waits for a dependency.
    WorkerAwaitingDependency {
        /// Why.
        reason: Arc<str>,
    },
    /// The dependency wait was released.
    WorkerDependencyReleased {
        /// By a matching event rather than by a call.
        automatic: bool,
    },
    /// The worker was paused (or will be after the current turn).
    WorkerPaused {
        /// Why.
        reason: PauseReason,
        /// Whether the pause waits for the current turn to end.
        after_turn: bool,
    },
    /// A pause was cleared.
    WorkerResumed,
    /// The worker's continuation policy changed.
    PolicyChanged {
        /// The new effective mode.
        mode: Mode,
        /// Whether the worker now inherits the run default.
        inherited: bool,
    },
    /// A continuation intent was recorded or gained reasons.
    ResumeScheduled {
        /// All reasons so far.
        reasons: WakeSet,
        /// Earliest legal delivery.
        not_before: Option<Timestamp>,
    },
    /// A pending continuation waits for the anti-spam floor (spec 000 §10.5 `notBefore`).
    ExecutionDeferred {
        /// Its reasons.
        reasons: WakeSet,
        /// Earliest legal delivery.
        not_before: Timestamp,
    },
    /// A pending continuation was withdrawn.
    ResumeCancelled {
        /// Its reasons.
        reasons: WakeSet,
    },
    /// An execution attempt was created and its command issued.
    ExecutionScheduled {
        /// Why.
        reason: AttemptReason,
        /// Coalesced provenance.
        wake: WakeSet,
        /// Per-worker sequence.
        sequence: u32,
    },
    /// The executor reported the prompt submitted.
    ExecutionSubmitted,
    /// The conversation began generating.
    ExecutionGenerating,
    /// The turn ended.
    ExecutionIdle,
    /// The attempt closed.
    ExecutionEnded {
        /// Final state.
        state: AttemptState,
        /// How.
        outcome: AttemptOutcome,
    },
    /// No progress for a while: the operator should look.
    ContinuationWarning {
        /// Attempts since the last progress.
        attempts: u32,
        /// Milliseconds since the last progress.
        quiet_ms: u64,
    },
    /// The stall guard paused the worker.
    ContinuationPausedForStall {
        /// Attempts since the last progress.
        attempts: u32,
        /// Milliseconds since the last progress.
        quiet_ms: u64,
    },
    /// The operator chose "Continue anyway": stall acknowledged, history kept.
    ContinuationStallAcknowledged,
    /// An executor confirmed the binding.
    BindingVerified {
        /// The conversation URL.
        conversation: Arc<str>,
    },
    /// The conversation is gone or full: recovery needs a fresh one.
    BindingLost {
        /// The classified reason.
        why: ConversationState,
    },
    /// The page shows an error card.
    ConversationError {
        /// Classified kind.
        kind: ErrorKind,
    },
    /// A message was sent to a worker.
    MessageSent {
        /// The message.
        message: MessageId,
        /// Sender; `None` is the operator.
        from: Option<WorkerId>,
    },
    /// Root steering was recorded for a lane.
    SteeringRecorded {
        /// Root's verdict.
        outcome: SteeringOutcome,
        /// Whether it bypasses the anti-spam floor.
        material: bool,
        /// Whether it merged into an identical pending or delivered correction.
        coalesced: bool,
    },
    /// The agent's end-of-response block was read.
    BlockReported {
        /// Its status.
        status: BlockStatus,
    },
    /// The agent's end-of-response block was malformed (and ignored).
    BlockInvalid {
        /// The parser's stable code.
        code: Arc<str>,
    },
    /// The worker is held by what a page shows: an account's usage or rate limit (until a
    /// time), or a dialog over its conversation (until a later state). Appended last:
    /// stored events keep their encoding.
    WorkerHeld {
        /// Usage limit, rate limit or dialog.
        reason: HoldReason,
        /// When an account hold lifts by itself (`None` for a dialog).
        until: Option<Timestamp>,
        /// The page's words (untrusted, capped).
        detail: Option<Arc<str>>,
    },
    /// The hold is over: the limit's time came, or the dialog is gone.
    WorkerHoldLifted {
        /// Which hold.
        reason: HoldReason,
    },
    /// The dead-man layer found the run stopped (`deadman.rs`). Appended last: stored
    /// events keep their encoding.
    DeadManFired {
        /// Why the run was found stopped.
        condition: DeadManCondition,
        /// What was done.
        action: DeadManAction,
        /// How long nothing had moved the run, ms.
        quiet_ms: u64,
        /// The unfinished workers, in id order.
        workers: Vec<WorkerId>,
        /// Their last conversations, in worker order.
        conversations: Vec<Arc<str>>,
    },
    /// An executor reported a binding it cannot hold: it does not run the worker's kind,
    /// or the conversation id is not of that kind's form. The report was ignored (the
    /// worker's binding is unchanged). Appended last: the stored encoding of older events
    /// is unchanged.
    BindingRefused {
        /// The executor that reported it.
        executor: ExecutorId,
        /// The conversation it named.
        conversation: Arc<str>,
        /// Why, in words.
        why: Arc<str>,
    },
    /// The executor said where a submitted steer landed: merged into the running turn, or
    /// run as the next turn (then its attempt is that turn's, booked as a send). Appended
    /// last: the stored encoding of older events is unchanged.
    SteerLanded {
        /// Merged, or the next turn.
        landed: crate::model::SteerLanding,
    },
    /// The worker this one waited for (`worker_await_dependency`) failed or was stopped:
    /// the wait can never be met, so it is released and the waiter woken with the outcome
    /// (a completion releases it as `worker.dependency_released` alone). Appended last:
    /// the stored encoding of older events is unchanged.
    WorkerDependencyEnded {
        /// The worker waited for.
        dependency: WorkerId,
        /// How it ended: failed or cancelled.
        outcome: Lifecycle,
    },
    /// The worker needs an executor (work is on its way), but none of its kind has been
    /// connected for
    /// [`crate::limits::EXECUTOR_ABSENT_MS_MAX`]: recorded once per episode (until one
    /// connects again, or the daemon restarts), so a person learns that nothing carries it.
    /// Appended last: the stored encoding of older events is unchanged.
    WorkerExecutorAbsent {
        /// The kind of executor it needs.
        kind: crate::kind::ExecutorKind,
        /// Since when none of that kind is connected.
        since: Timestamp,
        /// The executor holding its conversation, if one does.
        executor: Option<ExecutorId>,
    },
    /// A notification nobody took was given up (`notify/`): too old, or its receiver
    /// refused it for good. Appended last: the stored encoding of older events is
    /// unchanged.
    NotificationAbandoned {
        /// Which notification.
        notice: crate::notice::NoticeId,
        /// What it was about.
        kind: crate::notice::NoticeKind,
        /// Why it was given up (never the body).
        detail: Arc<str>,
    },
}

impl EventKind {
    /// The stable event name.
    pub fn name(&self) -> &'static str {
        match self {
            EventKind::RunCreated => "run.created",
            EventKind::RunContextUpdated => "run.context_updated",
            EventKind::RunPolicyChanged { .. } => "run.policy_changed",
            EventKind::RunEnded { .. } => "run.ended",
            EventKind::WorkerSpawned => "worker.spawned",
            EventKind::WorkerAttached { .. } => "worker.attached",
            EventKind::WorkerProgress { .. } => "worker.progress",
            EventKind::WorkerCompleted { .. } => "worker.completed",
            EventKind::WorkerFailed { .. } => "worker.failed",
            EventKind::WorkerCancelled { .. } => "worker.cancelled",
            EventKind::WorkerFollowup => "worker.followup",
            EventKind::WorkerAwaitingHuman { .. } => "worker.awaiting_human",
            EventKind::WorkerHumanResolved => "worker.human_resolved",
            EventKind::WorkerAwaitingDependency { .. } => "worker.awaiting_dependency",
            EventKind::WorkerDependencyReleased { .. } => "worker.dependency_released",
            EventKind::WorkerDependencyEnded { .. } => "worker.dependency_ended",
            EventKind::WorkerPaused { .. } => "worker.paused",
            EventKind::WorkerResumed => "worker.resumed",
            EventKind::PolicyChanged { .. } => "continuation.policy_changed",
            EventKind::ResumeScheduled { .. } => "execution.resume_scheduled",
            EventKind::ResumeCancelled { .. } => "execution.resume_cancelled",
            EventKind::ExecutionDeferred { .. } => "execution.deferred",
            EventKind::ExecutionScheduled { .. } => "execution.scheduled",
            EventKind::ExecutionSubmitted => "execution.submitted",
            EventKind::ExecutionGenerating => "execution.generating",
            EventKind::ExecutionIdle => "execution.idle",
            EventKind::ExecutionEnded { .. } => "execution.ended",
            EventKind::ContinuationWarning { .. } => "continuation.warning",
            EventKind::ContinuationPausedForStall { .. } => "continuation.paused_for_stall",
            EventKind::ContinuationStallAcknowledged => "continuation.stall_acknowledged",
            EventKind::BindingVerified { .. } => "binding.verified",
            EventKind::BindingLost { .. } => "binding.lost",
            EventKind::BindingRefused { .. } => "binding.refused",
            EventKind::SteerLanded { .. } => "execution.steer_landed",
            EventKind::WorkerExecutorAbsent { .. } => "worker.executor_absent",
            EventKind::ConversationError { .. } => "conversation.error",
            EventKind::WorkerHeld { .. } => "worker.held",
            EventKind::WorkerHoldLifted { .. } => "worker.hold_lifted",
            EventKind::DeadManFired { .. } => "deadman.fired",
            EventKind::MessageSent { .. } => "message.sent",
            EventKind::SteeringRecorded { .. } => "steering.recorded",
            EventKind::BlockReported { .. } => "block.reported",
            EventKind::BlockInvalid { .. } => "block.invalid",
            EventKind::NotificationAbandoned { .. } => "notification.abandoned",
        }
    }
}
