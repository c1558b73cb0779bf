//! `orchestrator worker ACTION WRK`: a person's controls over one worker from a terminal
//! (pause, resume, continue now, stop, answer a question, release a dependency wait), each
//! one MCP tool call on the running daemon, so a CLI worker left overnight can be handled
//! without a browser. A refusal is said in a person's words (`refused.rs`).

use crate::reach::Target;
use crate::refused;
use serde_json::{Value, json};

/// Longest answer, stop reason or release note accepted, in bytes (the tools' own limits:
/// 16 KiB for an answer, 4 KiB for a reason, checked again by the daemon).
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
    /// Answer the worker's question (`worker_resolve_human`).
    Answer(String),
    /// Show the worker's question and its choices (`worker_get`; changes nothing).
    Ask,
    /// End the worker's wait for another worker, with an optional note
    /// (`worker_release_dependency`): it goes on.
    Release(String),
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
            Action::Ask => ("worker_get", json!({ "workerId": worker })),
            Action::Release(note) => ("worker_release_dependency", json!({ "workerId": worker, "note": note })),
        }
    }

    /// What was done, for the person (`answer` is the tool's reply).
    fn done(&self, worker: &str, answer: &Value) -> String {
        match self {
            Action::Pause => format!("{worker} paused: nothing more is sent until you resume it."),
            Action::PauseAfterTurn => format!("{worker} pauses when its running turn ends."),
            Action::Resume => format!("{worker} resumed."),
            Action::Continue => format!("{worker}: one turn asked for now."),
            Action::Stop(_) => format!("{worker} stopped."),
            Action::Answer(_) => format!("{worker} has your answer and goes on with it."),
            Action::Ask => question_text(worker, answer),
            Action::Release(_) => format!("{worker} no longer waits for another worker and goes on."),
        }
    }
}

/// The worker's open question and its choices, with the command that answers it; or that
/// it asks nothing.
pub fn question_text(worker: &str, view: &Value) -> String {
    let Some(wait) = view.get("humanWait").filter(|w| w.is_object()) else {
        return format!("{worker} asked no question (`orchestrator status` shows its state).");
    };
    let question = wait.get("question").and_then(Value::as_str).unwrap_or("");
    let choices: Vec<&str> = wait
        .get("choices")
        .and_then(Value::as_array)
        .map(|c| c.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut text = format!("{worker} asks: {question}\n");
    if !choices.is_empty() {
        text.push_str(&format!("  choices: {}\n", choices.join(" | ")));
    }
    let example = choices.first().copied().unwrap_or("your answer");
    text.push_str(&format!("Answer with: orchestrator worker answer {worker} \"{example}\""));
    text
}

/// Checks the worker id and the text before anything reaches the daemon.
pub fn validate(worker: &str, action: &Action) -> anyhow::Result<()> {
    let digits = worker.strip_prefix("wrk-").unwrap_or("");
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        anyhow::bail!("{worker:?} is not a worker id (e.g. wrk-2; `orchestrator status` lists them)");
    }
    if let Action::Stop(text) | Action::Answer(text) = action
        && text.trim().is_empty()
    {
        anyhow::bail!("say why (a stop) or what (an answer): the text is empty");
    }
    if let Action::Stop(text) | Action::Answer(text) | Action::Release(text) = action
        && text.len() > TEXT_BYTES_MAX
    {
        anyhow::bail!("the text is {} bytes; at most {TEXT_BYTES_MAX} are accepted", text.len());
    }
    Ok(())
}

/// Performs `action` on `worker` through the daemon; returns what to tell the person.
pub async fn perform(target: &Target, worker: &str, action: Action) -> anyhow::Result<String> {
    validate(worker, &action)?;
    let mut client = target.connect().await?;
    let (tool, arguments) = action.call(worker);
    match client.call_ok(tool, arguments).await {
        Ok(answer) => Ok(format!("{}\n", action.done(worker, &answer))),
        Err(error) => Err(refused::for_person(&mut client, error, Some(worker), None).await),
    }
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
        assert_eq!(Action::Release(String::new()).call("wrk-3").0, "worker_release_dependency");
    }

    #[test]
    fn a_bad_id_or_text_is_refused_before_the_daemon_sees_it() {
        assert!(validate("wrk-12", &Action::Pause).is_ok());
        for bad in ["12", "wrk-", "wrk-1a", "run-1"] {
            assert!(validate(bad, &Action::Pause).unwrap_err().to_string().contains("not a worker id"), "{bad}");
        }
        assert!(validate("wrk-1", &Action::Answer(" ".into())).unwrap_err().to_string().contains("empty"));
        assert!(validate("wrk-1", &Action::Release(String::new())).is_ok(), "a release needs no note");
        let long = "x".repeat(TEXT_BYTES_MAX + 1);
        assert!(validate("wrk-1", &Action::Stop(long.clone())).unwrap_err().to_string().contains("at most"));
        assert!(validate("wrk-1", &Action::Release(long)).unwrap_err().to_string().contains("at most"));
    }

    #[test]
    fn a_question_is_shown_with_its_choices_and_the_command_that_answers_it() {
        let asks = json!({ "humanWait": { "question": "Which dialect?", "choices": ["excel", "rfc4180"] } });
        assert_eq!(
            question_text("wrk-4", &asks),
            "wrk-4 asks: Which dialect?\n  choices: excel | rfc4180\nAnswer with: orchestrator worker answer wrk-4 \"excel\""
        );
        let open = json!({ "humanWait": { "question": "Why?", "choices": [] } });
        assert!(question_text("wrk-4", &open).ends_with("\"your answer\""));
        assert!(question_text("wrk-4", &json!({ "humanWait": null })).contains("asked no question"));
    }
}
