//! Events on the wire: `{cursor, atMs, name, runId, workerId, attemptId, data}`.

use engine::event::{Event, EventKind};
use engine::wake::WakeSet;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

/// One durable event.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EventOut {
    /// Position in the event log (dense, increasing).
    pub cursor: u64,
    /// When it happened, ms since the Unix epoch.
    pub at_ms: u64,
    /// Stable event name, e.g. `execution.scheduled`, `worker.progress`, `worker.completed`.
    pub name: String,
    /// The run it belongs to.
    pub run_id: String,
    /// The worker it concerns, if any.
    pub worker_id: Option<String>,
    /// The execution attempt it concerns, if any.
    pub attempt_id: Option<String>,
    /// The event's own fields (camelCase), e.g. `{"reason": "auto_resume", "sequence": 2}`.
    pub data: Map<String, Value>,
}

fn labels(w: WakeSet) -> Value {
    json!(w.labels())
}

fn data(kind: &EventKind) -> Value {
    match kind {
        EventKind::RunCreated
        | EventKind::RunContextUpdated
        | EventKind::WorkerSpawned
        | EventKind::WorkerFollowup
        | EventKind::WorkerHumanResolved
        | EventKind::WorkerResumed
        | EventKind::ExecutionSubmitted
        | EventKind::ExecutionGenerating
        | EventKind::ExecutionIdle
        | EventKind::ContinuationStallAcknowledged => json!({}),
        EventKind::RunPolicyChanged { mode } => json!({ "mode": mode.as_str() }),
        EventKind::RunEnded { status } => json!({ "status": status.as_str() }),
        EventKind::WorkerAttached { conversation } => json!({ "conversationUrl": &**conversation }),
        EventKind::WorkerProgress { summary, commit } => {
            json!({ "summary": &**summary, "commit": commit.as_deref() })
        }
        EventKind::WorkerCompleted { summary } => json!({ "summary": &**summary }),
        EventKind::WorkerFailed { reason }
        | EventKind::WorkerCancelled { reason }
        | EventKind::WorkerAwaitingHuman { reason }
        | EventKind::WorkerAwaitingDependency { reason } => json!({ "reason": &**reason }),
        EventKind::WorkerDependencyReleased { automatic } => json!({ "automatic": automatic }),
        EventKind::WorkerDependencyEnded { dependency, outcome } => {
            json!({ "dependencyWorkerId": dependency.to_string(), "outcome": outcome.as_str() })
        }
        EventKind::WorkerPaused { reason, after_turn } => {
            json!({ "reason": reason.as_str(), "afterCurrentTurn": after_turn })
        }
        EventKind::PolicyChanged { mode, inherited } => json!({ "mode": mode.as_str(), "inherited": inherited }),
        EventKind::ResumeScheduled { reasons, not_before } => {
            json!({ "wakeReasons": labels(*reasons), "notBeforeMs": not_before.map(|t| t.0) })
        }
        EventKind::ExecutionDeferred { reasons, not_before } => {
            json!({ "wakeReasons": labels(*reasons), "notBeforeMs": not_before.0 })
        }
        EventKind::ResumeCancelled { reasons } => json!({ "wakeReasons": labels(*reasons) }),
        EventKind::ExecutionScheduled { reason, wake, sequence } => {
            json!({ "reason": reason.as_str(), "wakeReasons": labels(*wake), "sequence": sequence })
        }
        EventKind::ExecutionEnded { state, outcome } => {
            json!({ "state": state.as_str(), "outcome": outcome.as_str() })
        }
        EventKind::ContinuationWarning { attempts, quiet_ms }
        | EventKind::ContinuationPausedForStall { attempts, quiet_ms } => {
            json!({ "attemptsWithoutProgress": attempts, "quietMs": quiet_ms })
        }
        EventKind::BindingVerified { conversation } => json!({ "conversationUrl": &**conversation }),
        EventKind::BindingLost { why } => json!({ "why": why.as_str() }),
        EventKind::BindingRefused { executor, conversation, why } => {
            json!({ "executorId": executor.to_string(), "conversationUrl": &**conversation, "why": &**why })
        }
        EventKind::ConversationError { kind } => json!({ "kind": kind.as_str() }),
        EventKind::SteerLanded { landed } => json!({ "landed": landed.as_str() }),
        EventKind::MessageSent { message, from } => {
            json!({ "messageId": message.to_string(), "from": from.map(|f| f.to_string()) })
        }
        EventKind::SteeringRecorded { outcome, material, coalesced } => {
            json!({ "outcome": outcome.as_str(), "material": material, "coalesced": coalesced })
        }
        EventKind::BlockReported { status } => json!({ "status": status.as_str() }),
        EventKind::BlockInvalid { code } => json!({ "code": &**code }),
        EventKind::WorkerHeld { reason, until, detail } => {
            json!({ "reason": reason.as_str(), "untilMs": until.map(|t| t.0), "detail": detail.as_deref() })
        }
        EventKind::WorkerHoldLifted { reason } => json!({ "reason": reason.as_str() }),
        EventKind::WorkerExecutorAbsent { kind, since, executor } => json!({
            "executorKind": kind.as_str(),
            "sinceMs": since.0,
            "executorId": executor.as_ref().map(ToString::to_string),
        }),
        EventKind::DeadManFired { condition, action, quiet_ms, workers, conversations } => json!({
            "condition": condition.as_str(),
            "action": action.as_str(),
            "quietMs": quiet_ms,
            "workerIds": workers.iter().map(|w| w.to_string()).collect::<Vec<_>>(),
            "conversationUrls": conversations.iter().map(|c| &**c).collect::<Vec<_>>(),
        }),
        EventKind::NotificationAbandoned { notice, kind, detail } => json!({
            "notificationId": notice.to_string(),
            "notificationKind": kind.as_str(),
            "detail": &**detail,
        }),
    }
}

impl From<&Event> for EventOut {
    fn from(e: &Event) -> EventOut {
        let data = match data(&e.kind) {
            Value::Object(map) => map,
            _ => Map::new(),
        };
        EventOut {
            cursor: e.cursor.0,
            at_ms: e.at.0,
            name: e.kind.name().to_string(),
            run_id: e.run.to_string(),
            worker_id: e.worker.map(|w| w.to_string()),
            attempt_id: e.attempt.map(|a| a.to_string()),
            data,
        }
    }
}
