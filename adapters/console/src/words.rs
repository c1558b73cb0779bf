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
