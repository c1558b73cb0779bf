//! Pending continuations: the coalesced wake a worker waits to have delivered (at most
//! one per worker), who asked for it, and what it carries beyond its reasons (a root's
//! steering, an operator's follow-up, a person's answer).

use crate::time::Timestamp;
use crate::wake::WakeSet;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

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
    /// A person's answer to the worker's question: the question, its choices and the
    /// answer as the prompt shows them (`prompt::answered`). Appended last: stored intents
    /// keep their encoding.
    Answer(Arc<str>),
    /// A worker this one waited for ended without completing: which, how, and its reason,
    /// as the prompt shows them (`prompt::dependency_ended_note`). Appended last.
    DependencyEnded(Arc<str>),
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
