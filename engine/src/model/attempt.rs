//! Execution attempts: one submitted turn (or mid-turn steer) of a worker, why it exists,
//! how it is delivered, where it stands and how it ended.

use super::intent::{Origin, Steering};
use crate::ids::*;
use crate::time::Timestamp;
use crate::wake::WakeSet;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

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
    /// A person answered the worker's question (appended last: stored attempts keep their
    /// encoding).
    Answer,
    /// A worker this one waited for failed or was stopped (appended last).
    DependencyEnded,
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
    /// Follow-up instructions carried by a follow-up attempt, or the question, choices and
    /// answer carried by an `Answer` attempt (so a re-send renders the same text).
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

/// Where a submitted steer landed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum SteerLanding {
    /// Taken into the running turn (at a tool boundary): it stays a steer.
    Merged,
    /// Not taken by the running turn: it runs as the next turn, booked as a send.
    NextTurn,
}

impl SteerLanding {
    /// The stable wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            SteerLanding::Merged => "merged",
            SteerLanding::NextTurn => "next_turn",
        }
    }
}
