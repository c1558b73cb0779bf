//! `orchestrator status` (and `orchestrator run show RUN`): runs, workers, dispositions and
//! attempts of a running daemon, for a person at a terminal; with `--all`, also the finished
//! runs the daemon keeps, with how each ended (its handoff or reason), when, how long it
//! took and its workers' outcomes. Read-only: it calls only reading tools.

use crate::reach::Target;
use crate::words;
use serde_json::{Value, json};
use std::fmt::Write;

/// Renders the daemon's state as text: the unfinished runs, then (with `all`) the finished
/// ones, the most recently ended first, or else how many there are; or only `only` (a run
/// id), finished or not.
pub async fn report(target: &Target, only: Option<&str>, all: bool) -> anyhow::Result<String> {
    let mut client = target.connect().await?;
    let runs = client.call_ok("run_list", json!({ "includeTerminal": true })).await?;
    let mut out = String::new();
    let mut runs = runs.get("runs").and_then(Value::as_array).cloned().unwrap_or_default();
    if let Some(only) = only {
        runs.retain(|r| r.get("runId").and_then(Value::as_str) == Some(only));
        if runs.is_empty() {
            anyhow::bail!("there is no run {only}: `orchestrator run list` lists them");
        }
    }
    let (unfinished, finished): (Vec<Value>, Vec<Value>) =
        runs.into_iter().partition(|r| r.get("endedAtMs").is_none_or(Value::is_null));
    if unfinished.is_empty() && finished.is_empty() {
        writeln!(out, "No runs yet ({}).", client.url())?;
    } else if unfinished.is_empty() && only.is_none() {
        writeln!(out, "No unfinished runs ({}).", client.url())?;
    }
    if (all || only.is_some()) && !finished.is_empty() {
        let now = now_ms();
        if only.is_none() {
            writeln!(out, "Finished ({}, the most recent first):", finished.len())?;
        }
        for run in &finished {
            let run_id = run.get("runId").and_then(Value::as_str).unwrap_or("");
            let workers = client.call_ok("worker_list", json!({ "runId": run_id, "includeTerminal": true })).await?;
            let workers = workers.get("workers").and_then(Value::as_array).cloned().unwrap_or_default();
            for line in finished_lines(run, &workers, now) {
                writeln!(out, "{line}")?;
            }
        }
    } else if !finished.is_empty() {
        let runs = words::count(finished.len() as u64, "finished run");
        writeln!(out, "{runs}: `orchestrator status --all` lists them.")?;
    }
    for run in unfinished {
        let s = |k: &str| run.get(k).and_then(Value::as_str).unwrap_or("").to_string();
        writeln!(out, "{}", run_line(&run))?;
        let workers = client.call_ok("worker_list", json!({ "runId": s("runId"), "includeTerminal": true })).await?;
        for w in workers.get("workers").and_then(Value::as_array).cloned().unwrap_or_default() {
            let ws = |k: &str| w.get(k).and_then(Value::as_str).unwrap_or("").to_string();
            let mode = w.pointer("/policy/mode").and_then(Value::as_str).unwrap_or("?");
            let mut line = format!(
                "  {:<7} {:<20} {:<16} {} ({})",
                ws("workerId"),
                ws("name"),
                words::worker_status(&w),
                ws("displayName"),
                words::policy(mode, &ws("policySource"))
            );
            if let Some(reason) = w.pointer("/pause/reason").and_then(Value::as_str) {
                write!(line, " paused: {}", words::pause(reason))?;
            }
            if let Some(reason) = w.pointer("/hold/reason").and_then(Value::as_str) {
                write!(line, " held: {reason}")?;
                if let Some(until) = w.pointer("/hold/untilMs").and_then(Value::as_u64) {
                    write!(line, " for {} more min", until.saturating_sub(now_ms()).div_ceil(60_000))?;
                }
                if let Some(detail) = w.pointer("/hold/detail").and_then(Value::as_str) {
                    write!(line, " ({detail})")?;
                }
            }
            if let Some(q) = w.pointer("/humanWait/question").and_then(Value::as_str) {
                write!(line, " needs you: {q}{}", words::choices(&w))?;
            }
            writeln!(out, "{line}")?;
            if let Some(where_) = executor_line(&w) {
                writeln!(out, "          {where_}")?;
            }
            if let Some(carrier) = liveness_line(&w) {
                writeln!(out, "          {carrier}")?;
            }
            if let Some(why) = pause_line(&w) {
                writeln!(out, "          {why}")?;
            }
            if let Some(asked) = approval_line(&w) {
                writeln!(out, "          {asked}")?;
            }
            if let Some(a) = w.get("currentAttempt").filter(|a| !a.is_null()) {
                // Nothing carries it: the attempt's state is what its executor said last.
                let stale = if words::worker_status(&w) == "Executor offline" { " (when last seen)" } else { "" };
                writeln!(out, "          {}{stale}", words::attempt_line(a))?;
            }
            if let Some(c) = w.get("pendingContinuation").filter(|c| !c.is_null()) {
                let reasons: Vec<&str> = c
                    .get("wakeReasons")
                    .and_then(Value::as_array)
                    .map(|v| v.iter().filter_map(Value::as_str).map(words::wake).collect())
                    .unwrap_or_default();
                writeln!(out, "          next turn queued: {}", reasons.join(", "))?;
            }
        }
    }
    Ok(out)
}

/// A run's header line: id, status, name, root conversation and its workers, counted in
/// words (`1 worker`, `3 workers`).
pub fn run_line(run: &Value) -> String {
    let s = |k: &str| run.get(k).and_then(Value::as_str).unwrap_or("").to_string();
    let n = |k: &str| run.get(k).and_then(Value::as_u64).unwrap_or(0);
    format!(
        "{} {:<9} {}  (root conversation: {}; {}, {} unfinished)",
        s("runId"),
        s("status"),
        s("taskName"),
        s("rootConversationName"),
        words::count(n("workers"), "worker"),
        n("unfinished")
    )
}

/// Where a worker runs, from its `worker_get` view: a ChatGPT worker's conversation URL
/// (none before it has one), or a CLI worker's kind, session and directory
/// (`codex session 019a... in /src/app (branch lane-a)`): a `codex:thread/` id is no link.
pub fn executor_line(worker: &Value) -> Option<String> {
    let kind = worker.get("executor").and_then(Value::as_str).unwrap_or("chatgpt");
    let conversation = worker.pointer("/binding/conversationUrl").and_then(Value::as_str).filter(|c| !c.is_empty());
    let Some(prefix) = engine::ExecutorKind::parse(kind).and_then(|k| k.conversation_prefix()) else {
        return conversation.map(|c| format!("conversation: {c}"));
    };
    let session = conversation.and_then(|c| c.strip_prefix(prefix)).unwrap_or("none yet");
    let directory = worker.pointer("/workspace/directory").and_then(Value::as_str).unwrap_or("?");
    let branch = worker.pointer("/workspace/branch").and_then(Value::as_str);
    Some(format!(
        "{kind} session {session} in {directory}{}",
        branch.map(|b| format!(" (branch {b})")).unwrap_or_default()
    ))
}

/// Who carries an unfinished worker, from its `worker_get` view's `liveness`, in the
/// words every surface uses (`executor offline since 03:12 UTC (Codex CLI cli-host): ...`).
pub fn liveness_line(worker: &Value) -> Option<String> {
    let liveness = worker.get("liveness").filter(|l| l.is_object())?;
    let liveness: caller_protocol::LivenessOut = serde_json::from_value(liveness.clone()).ok()?;
    Some(liveness.line())
}

/// What a paused worker's person should do, from its `worker_get` view's pause detail
/// (`why: A turn the orchestrator did not start ran in this Codex CLI session ...`).
pub fn pause_line(worker: &Value) -> Option<String> {
    worker.pointer("/pause/detail").and_then(Value::as_str).filter(|d| !d.is_empty()).map(|d| format!("why: {d}"))
}

/// A CLI approval request holding the worker (`executor-cli --approvals ask`), from its
/// `worker_get` view's `hold.approval`: what is asked, answered on the dashboard.
pub fn approval_line(worker: &Value) -> Option<String> {
    let approval = worker.pointer("/hold/approval").filter(|a| a.is_object())?;
    let text = |k: &str| approval.get(k).and_then(Value::as_str).unwrap_or("?");
    Some(format!(
        "approval {} ({}): {}; approve or decline it under Needs you on the dashboard",
        text("id"),
        text("kind"),
        text("summary")
    ))
}

/// Now, ms since the Unix epoch.
fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// A duration for people: `45s`, `18m`, `2h 5m`, `3d 4h` (as the dashboard writes it).
pub fn duration_text(ms: u64) -> String {
    let s = ms / 1000;
    let (m, h, d) = (s / 60, s / 3600, s / 86_400);
    match (d, h, m) {
        (0, 0, 0) => format!("{s}s"),
        (0, 0, _) => format!("{m}m"),
        (0, _, _) if m % 60 == 0 => format!("{h}h"),
        (0, _, _) => format!("{h}h {}m", m % 60),
        _ if h % 24 == 0 => format!("{d}d"),
        _ => format!("{d}d {}h", h % 24),
    }
}

/// A finished run as `status --all` prints it, from its `run_list` and `worker_list`
/// views: what it was, how it ended, when, how long it took, its workers and their
/// attempts, then its root's handoff (or reason) and each worker's own.
pub fn finished_lines(run: &Value, workers: &[Value], now_ms: u64) -> Vec<String> {
    let text = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).unwrap_or("").to_string();
    let time = |v: &Value, k: &str| v.get(k).and_then(Value::as_u64);
    let took = |v: &Value| match (time(v, "createdAtMs"), time(v, "endedAtMs")) {
        (Some(from), Some(to)) => Some(format!("took {}", duration_text(to.saturating_sub(from)))),
        _ => None,
    };
    let attempts: u64 = workers.iter().filter_map(|w| w.get("attempts").and_then(Value::as_u64)).sum();
    let plural = |n: u64, one: &str| if n == 1 { format!("1 {one}") } else { format!("{n} {one}s") };
    let mut facts = vec![match run.get("status").and_then(Value::as_str) {
        Some("cancelled") => "stopped".to_string(),
        Some(other) => other.to_string(),
        None => "finished".to_string(),
    }];
    if let Some(ended) = time(run, "endedAtMs") {
        facts.push(format!("ended {} ago", duration_text(now_ms.saturating_sub(ended))));
    }
    facts.extend(took(run));
    facts.push(plural(workers.len() as u64, "worker"));
    facts.push(plural(attempts, "attempt"));
    let mut out = vec![format!("{} {}  ({})", text(run, "runId"), text(run, "taskName"), facts.join(", "))];
    if let Some(outcome) = run.get("outcome").and_then(Value::as_str) {
        out.push(format!("  how it ended: {outcome}"));
    }
    for w in workers {
        let mut line = format!(
            "  {:<7} {:<20} {:<9} {} ({}",
            text(w, "workerId"),
            text(w, "name"),
            words::worker_status(w),
            text(w, "displayName"),
            plural(w.get("attempts").and_then(Value::as_u64).unwrap_or(0), "attempt")
        );
        if let Some(took) = took(w) {
            write!(line, ", {took}").expect("a String takes writes");
        }
        line.push(')');
        if let Some(outcome) = w.get("outcome").and_then(Value::as_str) {
            write!(line, ": {outcome}").expect("a String takes writes");
        }
        out.push(line);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{approval_line, duration_text, executor_line, finished_lines, liveness_line, pause_line};

    #[test]
    fn a_finished_run_says_how_it_ended_when_and_how_long_it_took() {
        let run = json!({ "runId": "run-3", "taskName": "Ship the importer", "status": "completed",
            "createdAtMs": 1_000_000, "endedAtMs": 1_000_000 + 26_200_000,
            "outcome": "The importer ships; all checks pass." });
        let workers = [
            json!({ "workerId": "wrk-7", "name": "/root", "displayName": "Importer root", "disposition": "completed",
                "attempts": 12, "createdAtMs": 1_000_000, "endedAtMs": 27_200_000, "outcome": "The importer ships; all checks pass." }),
            json!({ "workerId": "wrk-9", "name": "/root/parser", "displayName": "Importer Lane A", "disposition": "cancelled",
                "attempts": 1, "createdAtMs": 2_000_000, "endedAtMs": 11_000_000, "outcome": "Not needed" }),
        ];
        let now = 27_200_000 + 2 * 3_600_000;
        assert_eq!(
            finished_lines(&run, &workers, now),
            [
                "run-3 Ship the importer  (completed, ended 2h ago, took 7h 16m, 2 workers, 13 attempts)",
                "  how it ended: The importer ships; all checks pass.",
                "  wrk-7   /root                Complete  Importer root (12 attempts, took 7h 16m): The importer ships; all checks pass.",
                "  wrk-9   /root/parser         Stopped   Importer Lane A (1 attempt, took 2h 30m): Not needed",
            ]
        );
        let stopped = json!({ "runId": "run-4", "taskName": "T", "status": "cancelled" });
        assert_eq!(finished_lines(&stopped, &[], now), ["run-4 T  (stopped, 0 workers, 0 attempts)"]);
    }

    #[test]
    fn durations_read_as_on_the_dashboard() {
        for (ms, text) in [
            (45_000, "45s"),
            (18 * 60_000, "18m"),
            (2 * 3_600_000, "2h"),
            (125 * 60_000, "2h 5m"),
            (3 * 86_400_000, "3d"),
            (100 * 3_600_000, "4d 4h"),
        ] {
            assert_eq!(duration_text(ms), text);
        }
    }

    #[test]
    fn a_worker_shows_who_carries_it_and_an_offline_one_says_so() {
        let offline = json!({ "disposition": "awaiting_execution", "liveness": { "state": "offline",
            "executorId": "cli-host", "executorKind": "codex", "sinceMs": 1_764_466_000_000_u64, "capableExecutors": 0 } });
        assert_eq!(
            liveness_line(&offline).as_deref(),
            Some("executor offline since 01:26 UTC (Codex CLI cli-host): nothing runs it until it is back")
        );
        let retrying = json!({ "liveness": { "state": "connected", "executorId": "cli-host", "executorKind": "codex",
            "sinceMs": 1_764_466_000_000_u64, "capableExecutors": 1,
            "retry": { "reason": "stream disconnected", "sinceMs": 1_764_466_000_000_u64 } } });
        assert_eq!(
            liveness_line(&retrying).as_deref(),
            Some("CLI retrying: stream disconnected (since 01:26 UTC; paused after 10 min)")
        );
        assert_eq!(liveness_line(&json!({ "disposition": "completed" })), None, "a finished worker has none");
    }

    #[test]
    fn a_pending_cli_approval_is_shown_with_what_is_asked() {
        let held = json!({ "hold": { "reason": "awaiting_approval", "detail": "run make (in /src)",
            "approval": { "id": "apr-3", "kind": "command", "summary": "run make (in /src)" } } });
        assert_eq!(
            approval_line(&held).as_deref(),
            Some(
                "approval apr-3 (command): run make (in /src); approve or decline it under Needs you on the dashboard"
            )
        );
        let card = json!({ "hold": { "reason": "awaiting_approval", "detail": "Orchestrator" } });
        assert_eq!(approval_line(&card), None, "a ChatGPT card is answered in its page");
    }

    #[test]
    fn a_pause_says_why_when_the_daemon_said_it() {
        let foreign = json!({ "pause": { "reason": "foreign_turn", "detail": "A turn the orchestrator did not start ran in this Codex CLI session. Look at the session, then resume." } });
        assert_eq!(
            pause_line(&foreign).as_deref(),
            Some(
                "why: A turn the orchestrator did not start ran in this Codex CLI session. Look at the session, then resume."
            )
        );
        assert_eq!(pause_line(&json!({ "pause": { "reason": "operator", "detail": null } })), None);
        assert_eq!(pause_line(&json!({})), None);
    }
    use serde_json::json;

    #[test]
    fn a_cli_worker_shows_its_session_and_directory_and_a_chatgpt_worker_its_conversation() {
        let codex = json!({ "executor": "codex", "workspace": { "directory": "/src/app", "branch": "lane-a" },
            "binding": { "conversationUrl": "codex:thread/019a-t1" } });
        assert_eq!(executor_line(&codex).as_deref(), Some("codex session 019a-t1 in /src/app (branch lane-a)"));
        let claude = json!({ "executor": "claude", "workspace": { "directory": "/src/api", "branch": null } });
        assert_eq!(executor_line(&claude).as_deref(), Some("claude session none yet in /src/api"));
        let web = json!({ "executor": "chatgpt", "binding": { "conversationUrl": "https://chatgpt.com/c/1" } });
        assert_eq!(executor_line(&web).as_deref(), Some("conversation: https://chatgpt.com/c/1"));
        assert_eq!(executor_line(&json!({ "executor": "chatgpt" })), None, "nothing before a conversation");
    }
}
