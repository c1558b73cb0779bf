//! An execution attempt's reply shape (`worker_attempts`, and a worker's current attempt).

use crate::error::ErrorOut;
use crate::out::{FromReply, mismatch, ms};
use engine::Reply;
use engine::model::*;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One execution attempt: one submitted turn (or mid-turn steer) of a worker.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AttemptOut {
    /// Attempt id, e.g. `exe-7`.
    pub attempt_id: String,
    /// The worker.
    pub worker_id: String,
    /// The run.
    pub run_id: String,
    /// Per-worker sequence, 1-based.
    pub sequence: u32,
    /// `initial`, `auto_resume`, `manual_resume`, `followup`, `recovery`, `checkpoint` or `corrective`.
    pub reason: String,
    /// Coalesced wake reasons (provenance).
    pub wake_reasons: Vec<String>,
    /// `scheduler`, `root` or `operator`.
    pub origin: String,
    /// `conversation.create`, `conversation.send` or `conversation.steer`.
    pub delivery: String,
    /// Which prompt was used.
    pub prompt: String,
    /// The executor command's idempotency key.
    pub idempotency_key: String,
    /// Target conversation (empty for `conversation.create`).
    pub conversation_url: String,
    /// `scheduled`, `submitted`, `generating`, `idle`, `completed`, `blocked`, `failed` or `cancelled`.
    pub state: String,
    /// How it ended, e.g. `turn_ended`, `worker_completed`, `delivery_timeout`, `ambiguous`.
    pub outcome: Option<String>,
    /// Executor error code, e.g. `AMBIGUOUS_SUBMISSION`.
    pub error_code: Option<String>,
    /// Executor error detail.
    pub error_detail: Option<String>,
    /// Root steering outcome carried by a corrective attempt.
    pub steering_outcome: Option<String>,
    /// When it was scheduled.
    pub scheduled_at_ms: u64,
    /// The executor must not start submitting after this.
    pub deadline_ms: u64,
    /// When the executor reported it submitted.
    pub submitted_at_ms: Option<u64>,
    /// When generation was observed.
    pub generating_at_ms: Option<u64>,
    /// When the turn was observed idle.
    pub idle_at_ms: Option<u64>,
    /// When it was closed.
    pub ended_at_ms: Option<u64>,
}

fn prompt_name(p: PromptKind) -> &'static str {
    match p {
        PromptKind::Bootstrap => "bootstrap",
        PromptKind::RootBootstrap => "root_bootstrap",
        PromptKind::Resume => "resume",
        PromptKind::Checkpoint => "checkpoint",
        PromptKind::DeliveryTimeout => "delivery_timeout",
        PromptKind::Corrective => "corrective",
        PromptKind::Followup => "followup",
        PromptKind::Recovery => "recovery",
        PromptKind::CompletionReconcile => "completion_reconcile",
        PromptKind::Answer => "answer",
        PromptKind::DependencyEnded => "dependency_ended",
    }
}

impl From<&Attempt> for AttemptOut {
    fn from(a: &Attempt) -> AttemptOut {
        AttemptOut {
            attempt_id: a.id.to_string(),
            worker_id: a.worker.to_string(),
            run_id: a.run.to_string(),
            sequence: a.sequence,
            reason: a.reason.as_str().to_string(),
            wake_reasons: a.wake.labels().into_iter().map(String::from).collect(),
            origin: a.origin.as_str().to_string(),
            delivery: a.delivery.command_name().to_string(),
            prompt: prompt_name(a.prompt).to_string(),
            idempotency_key: a.idempotency_key(),
            conversation_url: a.conversation.to_string(),
            state: a.state.as_str().to_string(),
            outcome: a.outcome.map(|o| o.as_str().to_string()),
            error_code: a.error_code.as_deref().map(String::from),
            error_detail: a.error_detail.as_deref().map(String::from),
            steering_outcome: a.steering.as_ref().map(|s| s.outcome.as_str().to_string()),
            scheduled_at_ms: ms(a.scheduled_at),
            deadline_ms: ms(a.deadline),
            submitted_at_ms: a.submitted_at.map(ms),
            generating_at_ms: a.generating_at.map(ms),
            idle_at_ms: a.idle_at.map(ms),
            ended_at_ms: a.terminal_at.map(ms),
        }
    }
}

/// `worker_attempts`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AttemptsOut {
    /// Attempts in sequence order.
    pub attempts: Vec<AttemptOut>,
}

impl FromReply for AttemptsOut {
    fn from_reply(reply: Reply) -> Result<Self, ErrorOut> {
        match reply {
            Reply::Attempts(v) => Ok(AttemptsOut { attempts: v.iter().map(AttemptOut::from).collect() }),
            _ => Err(mismatch("attempts")),
        }
    }
}
