//! A worker's liveness on the wire (`worker_get`'s and `worker_list`'s `liveness`, and the
//! operator summary's): who carries it (its executor, by id and kind), connected or not,
//! since when, and its CLI retrying inside the running turn.

use crate::out::ms;
use engine::view::{LivenessView, RetryView};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Who carries an unfinished worker.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LivenessOut {
    /// `connected` (its executor is there), `offline` (the executor holding its
    /// conversation is gone: nothing watches or types into it until that executor is back;
    /// never reported `running` meanwhile) or `unassigned` (no executor holds it yet: its
    /// next command goes to any connected executor of its kind).
    pub state: String,
    /// The executor holding its conversation (or its command), by the id its `hello` gave.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub executor_id: Option<String>,
    /// The kind of executor it needs: `chatgpt` (a browser profile), `codex` or `claude` (a
    /// CLI executor).
    pub executor_kind: String,
    /// `connected`: since the executor's `hello`; `offline`: since it went away (or the
    /// daemon started); `unassigned`: since no executor of its kind is connected (absent
    /// while one is). Ms since the Unix epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since_ms: Option<u64>,
    /// Connected executors that run its kind.
    pub capable_executors: u32,
    /// Present once no executor of its kind has been connected for the daemon's limit
    /// (5 minutes) and `worker.executor_absent` was recorded: since when none is. One
    /// episode per value: notify a person once per value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub absent_since_ms: Option<u64>,
    /// Its CLI retrying its model connection inside the running turn (network, login,
    /// server errors), while its executor is connected.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry: Option<RetryOut>,
}

/// A CLI retrying inside a worker's running turn.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RetryOut {
    /// What the CLI said, e.g. "Reconnecting... waiting for network" (untrusted text).
    pub reason: String,
    /// Which retry, when the CLI counts them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempt: Option<u32>,
    /// Since when it retries, ms since the Unix epoch. The daemon pauses the worker
    /// (`cli_retrying`) after 10 minutes of it without progress.
    pub since_ms: u64,
}

impl From<&RetryView> for RetryOut {
    fn from(r: &RetryView) -> RetryOut {
        RetryOut { reason: r.reason.to_string(), attempt: r.attempt, since_ms: ms(r.since) }
    }
}

impl From<&LivenessView> for LivenessOut {
    fn from(l: &LivenessView) -> LivenessOut {
        LivenessOut {
            state: l.carrier.as_str().to_string(),
            executor_id: l.executor.as_ref().map(ToString::to_string),
            executor_kind: l.kind.as_str().to_string(),
            since_ms: l.since.map(ms),
            capable_executors: l.capable,
            absent_since_ms: l.absent_since.map(ms),
            retry: l.retry.as_ref().map(RetryOut::from),
        }
    }
}
