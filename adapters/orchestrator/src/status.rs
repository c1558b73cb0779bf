//! `orchestrator status`: runs, workers, dispositions and attempts of a running daemon,
//! for a person at a terminal. Read-only: it calls only reading tools.

use crate::client::McpClient;
use serde_json::{Value, json};
use std::fmt::Write;

/// Renders the daemon's state as text.
pub async fn report(url: &str, token: Option<&str>) -> anyhow::Result<String> {
    let mut client = McpClient::connect(url, token).await?;
    let runs = client.call_ok("run_list", json!({ "includeTerminal": true })).await?;
    let mut out = String::new();
    let runs = runs.get("runs").and_then(Value::as_array).cloned().unwrap_or_default();
    if runs.is_empty() {
        writeln!(out, "No runs yet ({url}).")?;
    }
    for run in runs {
        let s = |k: &str| run.get(k).and_then(Value::as_str).unwrap_or("").to_string();
        let n = |k: &str| run.get(k).and_then(Value::as_u64).unwrap_or(0);
        writeln!(
            out,
            "{} {:<9} {}  (root conversation: {}; {} workers, {} unfinished)",
            s("runId"),
            s("status"),
            s("taskName"),
            s("rootConversationName"),
            n("workers"),
            n("unfinished")
        )?;
        let workers = client.call_ok("worker_list", json!({ "runId": s("runId"), "includeTerminal": true })).await?;
        for w in workers.get("workers").and_then(Value::as_array).cloned().unwrap_or_default() {
            let ws = |k: &str| w.get(k).and_then(Value::as_str).unwrap_or("").to_string();
            let mode = w.pointer("/policy/mode").and_then(Value::as_str).unwrap_or("?");
            let mut line = format!(
                "  {:<7} {:<20} {:<19} {} ({}, {})",
                ws("workerId"),
                ws("name"),
                ws("disposition"),
                ws("displayName"),
                mode,
                ws("policySource")
            );
            if let Some(reason) = w.pointer("/pause/reason").and_then(Value::as_str) {
                write!(line, " paused: {reason}")?;
            }
            if let Some(reason) = w.pointer("/hold/reason").and_then(Value::as_str) {
                write!(line, " held: {reason}")?;
                if let Some(until) = w.pointer("/hold/untilMs").and_then(Value::as_u64) {
                    let now = std::time::SystemTime::now()
                        .duration_since(std::time::UNIX_EPOCH)
                        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
                    write!(line, " for {} more min", until.saturating_sub(now).div_ceil(60_000))?;
                }
                if let Some(detail) = w.pointer("/hold/detail").and_then(Value::as_str) {
                    write!(line, " ({detail})")?;
                }
            }
            if let Some(q) = w.pointer("/humanWait/question").and_then(Value::as_str) {
                write!(line, " needs you: {q}")?;
            }
            writeln!(out, "{line}")?;
            if let Some(a) = w.get("currentAttempt").filter(|a| !a.is_null()) {
                let a_s = |k: &str| a.get(k).and_then(Value::as_str).unwrap_or("").to_string();
                writeln!(
                    out,
                    "          attempt #{} {} {} {}{}",
                    a.get("sequence").and_then(Value::as_u64).unwrap_or(0),
                    a_s("attemptId"),
                    a_s("reason"),
                    a_s("state"),
                    a.get("outcome").and_then(Value::as_str).map(|o| format!(" ({o})")).unwrap_or_default()
                )?;
            }
            if let Some(c) = w.get("pendingContinuation").filter(|c| !c.is_null()) {
                let reasons: Vec<&str> = c
                    .get("wakeReasons")
                    .and_then(Value::as_array)
                    .map(|v| v.iter().filter_map(Value::as_str).collect())
                    .unwrap_or_default();
                writeln!(out, "          pending continuation: {}", reasons.join(", "))?;
            }
        }
    }
    Ok(out)
}
