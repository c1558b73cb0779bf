//! A daemon's refusal of a person's command, in a person's words: the MCP tool's refusal
//! (written for agents, it may name a tool) reworded by `caller_protocol::refusal` to name
//! the command and the dashboard control instead, with its stable code kept at the end.

use crate::client::{ClientError, McpClient};
use caller_protocol::ErrorOut;
use caller_protocol::refusal::{self, Subject};
use serde_json::{Value, json};

/// A refusal for a person, with the stable code, e.g. `ROOT_LIFECYCLE`.
#[derive(Debug, thiserror::Error)]
#[error("{message} ({code})")]
pub struct Refused {
    /// The stable code.
    pub code: String,
    /// What happened and what to do.
    pub message: String,
}

/// `error` reworded for a person when it is the daemon's refusal of an action on `worker`
/// (or `run`); the worker's run is looked up when the wording needs it. Else unchanged.
pub async fn for_person(
    client: &mut McpClient,
    error: anyhow::Error,
    worker: Option<&str>,
    run: Option<&str>,
) -> anyhow::Error {
    let Some(ClientError::Refused { code, message, .. }) = error.downcast_ref::<ClientError>() else {
        return error;
    };
    let refusal = ErrorOut::new(code, message);
    let looked_up = match (worker, run) {
        (Some(worker), None) if refusal::needs_run(code) => {
            let found = client.call_ok("worker_get", json!({ "workerId": worker })).await.ok();
            found.and_then(|w| w.get("runId").and_then(Value::as_str).map(str::to_string))
        }
        _ => None,
    };
    let subject = Subject { worker, run: run.or(looked_up.as_deref()) };
    let person = refusal::for_person(&refusal, subject);
    Refused { code: person.code, message: person.message }.into()
}
