//! Reply shapes: [`FromReply`], and what the run, message, policy and event tools return
//! as `structuredContent`; a worker's shapes are in `worker_out.rs`, an attempt's in
//! `attempt_out.rs`.

use crate::deadman::{DeadManOut, StoppedMovingOut};
use crate::error::ErrorOut;
use crate::event::EventOut;
use crate::policy::{PolicyOut, source_name};
use engine::Reply;
use engine::model::*;
use engine::op::{EventsPage, RunView};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Turns an engine reply into the shape a tool promises. A reply of another kind is a
/// server bug (`INTERNAL`), never silently reshaped.
pub trait FromReply: Sized {
    /// The shape, or `INTERNAL` when the engine answered with another kind of reply.
    fn from_reply(reply: Reply) -> Result<Self, ErrorOut>;
}

pub(crate) fn mismatch(expected: &str) -> ErrorOut {
    ErrorOut::internal(&format!("the engine answered with an unexpected reply (expected {expected})"))
}

pub(crate) fn ms(t: engine::Timestamp) -> u64 {
    t.0
}

/// A run and its worker counts.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RunOut {
    /// Run id, e.g. `run-1`.
    pub run_id: String,
    /// Concise main task name.
    pub task_name: String,
    /// Owner-readable name of the root conversation.
    pub root_conversation_name: String,
    /// Run objective / plan.
    pub context: String,
    /// `active`, `completed`, `failed` or `cancelled`.
    pub status: String,
    /// The run's default continuation policy (null: the engine default, manual).
    pub default_policy: Option<PolicyOut>,
    /// The run's `/root` coordinator worker.
    pub root_worker_id: String,
    /// Lanes spawned so far.
    pub lanes_spawned: u32,
    /// Workers in the run (including `/root`).
    pub workers: u32,
    /// Workers not yet completed, failed or cancelled.
    pub unfinished: u32,
    /// Creation time, ms since the Unix epoch.
    pub created_at_ms: u64,
    /// When the run ended, if it did.
    pub ended_at_ms: Option<u64>,
    /// The run's dead-man policy.
    pub dead_man: DeadManOut,
    /// The run stopped moving while nobody looked (the dead-man layer fired and nothing
    /// moved it since): show it as Needs you; absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped_moving: Option<StoppedMovingOut>,
    /// How a finished run ended, in its root's words: the completion summary (the
    /// handoff) or the failure or stop reason; absent while it runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<String>,
}

impl From<&RunView> for RunOut {
    fn from(v: &RunView) -> RunOut {
        let r = &v.run;
        RunOut {
            run_id: r.id.to_string(),
            task_name: r.task_name.to_string(),
            root_conversation_name: r.root_conversation_name.to_string(),
            context: r.context.to_string(),
            status: r.status.as_str().to_string(),
            default_policy: r.default_policy.as_ref().map(PolicyOut::from),
            root_worker_id: r.root.to_string(),
            lanes_spawned: r.lanes_spawned,
            workers: v.workers,
            unfinished: v.unfinished,
            created_at_ms: ms(r.created_at),
            ended_at_ms: r.ended_at.map(ms),
            dead_man: DeadManOut::from(&v.dead_man),
            stopped_moving: v.dead_man.alert.as_ref().map(|f| StoppedMovingOut::new(&r.task_name, f)),
            outcome: v.outcome.as_deref().map(str::to_string),
        }
    }
}

impl FromReply for RunOut {
    fn from_reply(reply: Reply) -> Result<Self, ErrorOut> {
        match reply {
            Reply::Run(v) => Ok(RunOut::from(&*v)),
            _ => Err(mismatch("a run")),
        }
    }
}

/// `run_list`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RunListOut {
    /// The unfinished runs, oldest first, then any finished ones, the most recently ended first.
    pub runs: Vec<RunOut>,
}

impl FromReply for RunListOut {
    fn from_reply(reply: Reply) -> Result<Self, ErrorOut> {
        match reply {
            Reply::Runs(v) => Ok(RunListOut { runs: v.iter().map(RunOut::from).collect() }),
            _ => Err(mismatch("runs")),
        }
    }
}

/// A message between workers or from the operator.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MessageOut {
    /// Message id, e.g. `msg-4`.
    pub message_id: String,
    /// The run.
    pub run_id: String,
    /// Sender worker; null for the operator.
    pub from: Option<String>,
    /// Recipient worker.
    pub to: String,
    /// The text.
    pub body: String,
    /// When it was sent.
    pub at_ms: u64,
}

impl From<&Message> for MessageOut {
    fn from(m: &Message) -> MessageOut {
        MessageOut {
            message_id: m.id.to_string(),
            run_id: m.run.to_string(),
            from: m.from.map(|f| f.to_string()),
            to: m.to.to_string(),
            body: m.body.to_string(),
            at_ms: ms(m.at),
        }
    }
}

impl FromReply for MessageOut {
    fn from_reply(reply: Reply) -> Result<Self, ErrorOut> {
        match reply {
            Reply::Message(m) => Ok(MessageOut::from(&m)),
            _ => Err(mismatch("a message")),
        }
    }
}

/// `worker_continuation_get` and `worker_continuation_set`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ContinuationPolicyOut {
    /// The effective policy.
    pub effective: PolicyOut,
    /// `run_default`, `worker_override` or `engine_default`.
    pub source: String,
}

impl FromReply for ContinuationPolicyOut {
    fn from_reply(reply: Reply) -> Result<Self, ErrorOut> {
        match reply {
            Reply::Policy { effective, source } => {
                Ok(ContinuationPolicyOut { effective: PolicyOut::from(&effective), source: source_name(source) })
            }
            _ => Err(mismatch("a policy")),
        }
    }
}

/// `events_wait`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EventsOut {
    /// Matching durable events, in cursor order (empty when the wait timed out).
    pub events: Vec<EventOut>,
    /// Pass this as `cursor` to the next call.
    pub next_cursor: u64,
}

impl FromReply for EventsOut {
    fn from_reply(reply: Reply) -> Result<Self, ErrorOut> {
        match reply {
            Reply::Events(page) => Ok(EventsOut::from(&page)),
            _ => Err(mismatch("events")),
        }
    }
}

impl From<&EventsPage> for EventsOut {
    fn from(p: &EventsPage) -> EventsOut {
        EventsOut { events: p.events.iter().map(EventOut::from).collect(), next_cursor: p.next_cursor.0 }
    }
}
