//! The command line's words for what the daemon reports in codes: an attempt's reason and
//! how it ended (the dashboard timeline's words, so a paused worker's last attempt reads
//! "Paused or waiting", not `blocked (worker_blocked)`), counts with their plural, and a
//! question's choices.

use serde_json::Value;

/// An attempt's reason (`initial`, `auto_resume`...) as the dashboard names it.
pub fn reason(code: &str) -> &str {
    match code {
        "initial" => "Initial",
        "auto_resume" => "Auto resume",
        "manual_resume" => "Continue now",
        "followup" => "Follow-up",
        "recovery" => "Recovery",
        "checkpoint" => "Checkpoint",
        "corrective" => "Correction",
        other => other,
    }
}

/// How a closed attempt ended (its outcome), or where an open one stands (its state).
pub fn stage(state: &str, outcome: Option<&str>) -> String {
    let said = match outcome {
        Some("turn_ended") => "Turn ended",
        Some("steered") => "Steered",
        Some("worker_completed") => "Worker completed",
        Some("worker_failed") => "Worker failed",
        Some("worker_cancelled") => "Worker stopped",
        // The engine closes an attempt this way when the worker pauses or waits.
        Some("worker_blocked") => "Paused or waiting",
        Some("delivery_timeout") => "Delivery timed out",
        Some("ambiguous") => "Unclear if sent",
        Some("host_ui_changed") => "Page changed",
        Some("not_delivered") => "Not delivered",
        Some("conversation_lost") => "Conversation lost",
        Some("page_error") => "Page error",
        Some("withdrawn") => "Withdrawn",
        Some(other) => other,
        None => match state {
            "scheduled" => "Scheduled",
            "submitted" => "Sent",
            "generating" => "Generating",
            "idle" => "Turn ended",
            other => other,
        },
    };
    said.to_string()
}

/// An attempt of a `worker_get` view in one line: `attempt #2 exe-4: Auto resume, Paused or waiting`.
pub fn attempt_line(attempt: &Value) -> String {
    let text = |k: &str| attempt.get(k).and_then(Value::as_str).unwrap_or("");
    format!(
        "attempt #{} {}: {}, {}",
        attempt.get("sequence").and_then(Value::as_u64).unwrap_or(0),
        text("attemptId"),
        reason(text("reason")),
        stage(text("state"), attempt.get("outcome").and_then(Value::as_str))
    )
}

/// A worker's status in the dashboard's words (`extension/src/ui/view.js` `statusOf`, the
/// same table), from its `worker_list`/`worker_get` view: a worker no executor carries is
/// `Executor offline`, never `Working`; the disposition's code is not for people.
pub fn worker_status(worker: &Value) -> &'static str {
    let text = |p: &str| worker.pointer(p).and_then(Value::as_str);
    let uncarried = match text("/liveness/state") {
        Some("offline") => true,
        Some("unassigned") => worker.pointer("/liveness/capableExecutors").and_then(Value::as_u64) == Some(0),
        _ => false,
    };
    let conversation = text("/binding/state");
    match text("/disposition") {
        Some("completed") => "Complete",
        Some("failed") => "Failed",
        Some("cancelled") => "Stopped",
        Some("awaiting_human") => "Needs you",
        Some("awaiting_dependency") => "Waiting",
        Some("paused") if text("/progress/stall") == Some("paused") => "Stalled",
        Some("paused") if matches!(text("/pause/reason"), Some("account_check" | "foreign_turn")) => "Needs you",
        Some("paused") => "Paused",
        Some("running") if uncarried => "Executor offline",
        Some("running") if conversation == Some("generating") => "Working",
        Some("running") => "Resuming",
        Some("awaiting_execution") if conversation == Some("closed") => "Needs you",
        Some("awaiting_execution") if uncarried => "Executor offline",
        Some("awaiting_execution") if matches!(text("/hold/reason"), Some("usage_limit" | "rate_limited")) => "Waiting",
        Some("awaiting_execution")
            if worker.get("attempts").and_then(Value::as_u64) == Some(0)
                && text("/binding/conversationUrl").is_none_or(str::is_empty) =>
        {
            "Waiting"
        }
        Some("awaiting_execution")
            if text("/policy/mode") == Some("auto")
                && worker.get("pauseAfterTurn").and_then(Value::as_bool) != Some(true) =>
        {
            "Resuming"
        }
        Some("awaiting_execution") => "Paused",
        _ => "Unknown",
    }
}

/// Why a continuation is queued, from its wake reason codes: `the turn ended` for `idle`,
/// the code itself for the rarer ones.
pub fn wake(code: &str) -> &str {
    match code {
        "idle" => "the turn ended",
        "active_keepalive" => "keepalive",
        "event:worker.progress" => "a worker's progress",
        "event:message" => "a message",
        "operator:continue_now" => "Continue now",
        "operator:resume" => "Resume",
        "event:human_resolved" => "your answer",
        "event:dependency_released" => "released",
        other => other,
    }
}

/// A worker's continuation policy in words: `Auto Resume, the run's setting`, `manual,
/// this worker's own setting` (its mode and where the mode comes from).
pub fn policy(mode: &str, source: &str) -> String {
    let mode = match mode {
        "auto" => "Auto Resume",
        "manual" => "manual",
        other => other,
    };
    let source = match source {
        "run_default" => "the run's setting",
        "worker_override" => "this worker's own setting",
        "engine_default" => "the default",
        other => other,
    };
    format!("{mode}, {source}")
}

/// Why a worker is paused, from its pause reason's code, in the dashboard's words
/// (`extension/src/ui/view.js` `PAUSES`).
pub fn pause(code: &str) -> &str {
    match code {
        "operator" => "by you",
        "stall" => "no progress for too long",
        "cli_retrying" => "its CLI kept retrying its model connection",
        "usage_limit" => "usage limit with no reset time",
        "account_check" => "ChatGPT asked for a check",
        "host_ui_changed" => "page not recognised",
        "ambiguous_submission" => "delivery unknown: check the conversation",
        "delivery_failing" => "deliveries keep failing",
        "app_unavailable" => "the conversation lost the app: recover into a new conversation",
        "app_not_selected" => "the app could not be chosen: check its name in Settings, then resume",
        "foreign_turn" => "a turn the orchestrator did not start ran in this session",
        other => other,
    }
}

/// `1 worker`, `3 workers`.
pub fn count(n: u64, noun: &str) -> String {
    if n == 1 { format!("1 {noun}") } else { format!("{n} {noun}s") }
}

/// A human wait's choices as ` (choices: a | b)`, or nothing when it offers none.
pub fn choices(worker: &Value) -> String {
    let list: Vec<&str> = worker
        .pointer("/humanWait/choices")
        .and_then(Value::as_array)
        .map(|c| c.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    if list.is_empty() { String::new() } else { format!(" (choices: {})", list.join(" | ")) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_worker_nobody_carries_is_offline_never_working() {
        let generating = json!({ "disposition": "running", "binding": { "state": "generating" },
            "liveness": { "state": "connected", "capableExecutors": 1 } });
        assert_eq!(worker_status(&generating), "Working");
        let gone = json!({ "disposition": "running", "binding": { "state": "generating" },
            "liveness": { "state": "offline", "capableExecutors": 0 } });
        assert_eq!(worker_status(&gone), "Executor offline");
        let next = json!({ "disposition": "awaiting_execution", "attempts": 1, "policy": { "mode": "auto" },
            "pauseAfterTurn": false, "binding": { "state": "idle", "conversationUrl": "codex:thread/t" } });
        assert_eq!(worker_status(&next), "Resuming");
        let blocked = json!({ "disposition": "paused", "pause": { "reason": "worker_blocked" }, "progress": { "stall": "none" } });
        assert_eq!(worker_status(&blocked), "Paused");
        assert_eq!(worker_status(&json!({ "disposition": "cancelled" })), "Stopped");
        assert_eq!(wake("idle"), "the turn ended");
        assert_eq!(policy("auto", "run_default"), "Auto Resume, the run's setting");
        assert_eq!(pause("operator"), "by you");
    }
    use serde_json::json;

    #[test]
    fn a_paused_worker_s_attempt_reads_in_words() {
        let paused = json!({ "sequence": 2, "attemptId": "exe-4", "reason": "auto_resume", "state": "blocked", "outcome": "worker_blocked" });
        assert_eq!(attempt_line(&paused), "attempt #2 exe-4: Auto resume, Paused or waiting");
        let open =
            json!({ "sequence": 1, "attemptId": "exe-1", "reason": "initial", "state": "generating", "outcome": null });
        assert_eq!(attempt_line(&open), "attempt #1 exe-1: Initial, Generating");
    }

    #[test]
    fn counts_take_their_plural() {
        assert_eq!(count(1, "worker"), "1 worker");
        assert_eq!(count(0, "worker"), "0 workers");
        assert_eq!(count(3, "worker"), "3 workers");
    }

    #[test]
    fn choices_are_listed_only_when_offered() {
        assert_eq!(
            choices(&json!({ "humanWait": { "choices": ["excel", "rfc4180"] } })),
            " (choices: excel | rfc4180)"
        );
        assert_eq!(choices(&json!({ "humanWait": { "choices": [] } })), "");
        assert_eq!(choices(&json!({})), "");
    }
}
