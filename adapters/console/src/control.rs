//! `orchestrator worker ACTION WRK`: a person's controls over one worker from a terminal
//! (pause, resume, continue now, stop, answer a human wait), each one MCP tool call on
//! the running daemon, so a CLI worker left overnight can be handled without a browser.

use crate::client::McpClient;
use anyhow::Context;
use serde_json::{Value, json};

/// Longest answer or stop reason accepted, in bytes (the tools' own limits: 16 KiB for an
/// answer, 4 KiB for a reason, checked again by the daemon).
pub const TEXT_BYTES_MAX: usize = 16 * 1024;

/// What a person asks of a worker.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    /// Pause now (`worker_pause`); nothing more is sent until resumed.
    Pause,
    /// Let the running turn finish, then pause (`worker_pause` after the current turn).
    PauseAfterTurn,
    /// Lift a pause (`worker_resume`).
    Resume,
    /// Exactly one turn now, also lifting a pause (`worker_continue_now`).
    Continue,
    /// Stop the worker for good, with why (`worker_interrupt`).
    Stop(String),
    /// Answer the worker's human wait (`worker_resolve_human`).
    Answer(String),
}

impl Action {
    /// The MCP tool and its arguments for `worker`.
    pub fn call(&self, worker: &str) -> (&'static str, Value) {
        match self {
            Action::Pause => ("worker_pause", json!({ "workerId": worker })),
            Action::PauseAfterTurn => ("worker_pause", json!({ "workerId": worker, "afterCurrentTurn": true })),
            Action::Resume => ("worker_resume", json!({ "workerId": worker })),
            Action::Continue => ("worker_continue_now", json!({ "workerId": worker, "clearPause": true })),
            Action::Stop(reason) => ("worker_interrupt", json!({ "workerId": worker, "reason": reason })),
            Action::Answer(answer) => ("worker_resolve_human", json!({ "workerId": worker, "answer": answer })),
        }
    }

    /// What was done, for the person.
    fn done(&self, worker: &str) -> String {
        match self {
            Action::Pause => format!("{worker} paused: nothing more is sent until you resume it."),
            Action::PauseAfterTurn => format!("{worker} pauses when its running turn ends."),
            Action::Resume => format!("{worker} resumed."),
            Action::Continue => format!("{worker}: one turn asked for now."),
            Action::Stop(_) => format!("{worker} stopped."),
            Action::Answer(_) => format!("{worker} has your answer; its next turn carries it."),
        }
    }
}

/// Checks the worker id and the text before anything reaches the daemon.
pub fn validate(worker: &str, action: &Action) -> anyhow::Result<()> {
    let digits = worker.strip_prefix("wrk-").unwrap_or("");
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        anyhow::bail!("{worker:?} is not a worker id (e.g. wrk-2; `orchestrator status` lists them)");
    }
    if let Action::Stop(text) | Action::Answer(text) = action {
        if text.trim().is_empty() {
            anyhow::bail!("say why (a stop) or what (an answer): the text is empty");
        }
        if text.len() > TEXT_BYTES_MAX {
            anyhow::bail!("the text is {} bytes; at most {TEXT_BYTES_MAX} are accepted", text.len());
        }
    }
    Ok(())
}

/// Performs `action` on `worker` through the daemon; returns what to tell the person.
pub async fn perform(url: &str, token: Option<&str>, worker: &str, action: Action) -> anyhow::Result<String> {
    validate(worker, &action)?;
    let mut client = McpClient::connect(url, token).await?;
    let (tool, arguments) = action.call(worker);
    client.call_ok(tool, arguments).await.with_context(|| format!("{tool} on {worker} was refused"))?;
    Ok(format!("{}\n", action.done(worker)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_action_is_one_tool_call() {
        assert_eq!(Action::Pause.call("wrk-2"), ("worker_pause", json!({ "workerId": "wrk-2" })));
        let (tool, args) = Action::PauseAfterTurn.call("wrk-2");
        assert_eq!((tool, &args["afterCurrentTurn"]), ("worker_pause", &json!(true)));
        assert_eq!(Action::Continue.call("wrk-2").1["clearPause"], true);
        assert_eq!(Action::Stop("enough".into()).call("wrk-3").1["reason"], "enough");
        assert_eq!(Action::Answer("use v2".into()).call("wrk-3").0, "worker_resolve_human");
    }

    #[test]
    fn a_bad_id_or_text_is_refused_before_the_daemon_sees_it() {
        assert!(validate("wrk-12", &Action::Pause).is_ok());
        for bad in ["12", "wrk-", "wrk-1a", "run-1"] {
            assert!(validate(bad, &Action::Pause).unwrap_err().to_string().contains("not a worker id"), "{bad}");
        }
        assert!(validate("wrk-1", &Action::Answer(" ".into())).unwrap_err().to_string().contains("empty"));
        let long = "x".repeat(TEXT_BYTES_MAX + 1);
        assert!(validate("wrk-1", &Action::Stop(long)).unwrap_err().to_string().contains("at most"));
    }
}
