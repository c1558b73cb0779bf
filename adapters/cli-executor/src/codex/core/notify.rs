//! What the app-server tells of its threads, as the core reports it: a turn starting
//! (ours, or foreign), user messages carrying a nonce we did not send, approval waits, a
//! turn's end as `idle` or `error` (a completed turn is an observation, never a completion),
//! a running turn's model connection being retried (`error` with `willRetry`: still
//! `generating`, with the retry's reason, until the turn moves again),
//! a usage limit lifting at its reset, and a thread read for `conversation.inspect`.

use super::record::{ThreadRecord, TurnStatus, agent_text, item_type};
use super::{Codex, Effect, Report, usage};
use crate::Error;
use crate::base::limits::BLOCK_CHARS_MAX;
use engine::ids::WorkerId;
use engine::model::{CliRetry, ConversationState, ErrorKind};
use engine::time::Timestamp;
use serde_json::Value;

impl Codex {
    pub(super) fn notification(&mut self, now: Timestamp, method: &str, params: &Value) -> Result<(), Error> {
        if method == "account/rateLimits/updated" {
            self.rate_limits = params.get("rateLimits").cloned();
            return Ok(());
        }
        if method == "mcpServer/startupStatus/updated" {
            return self.startup_status(now, params);
        }
        if method == "serverRequest/resolved" {
            self.approval_resolved(params);
            return Ok(());
        }
        let Some(thread) = params.get("threadId").and_then(Value::as_str).map(str::to_string) else { return Ok(()) };
        let Some(t) = self.threads.get_mut(&thread) else { return Ok(()) };
        let worker = t.worker;
        if method == "error" {
            self.turn_error(&thread, params);
            return Ok(());
        }
        if t.retrying && t.turn.is_some() && method.starts_with("item/") {
            // The turn moves again: the retry is over.
            t.retrying = false;
            self.state(worker, &thread, Report::bare(ConversationState::Generating));
        }
        let Some(t) = self.threads.get_mut(&thread) else { return Ok(()) };
        match method {
            "turn/started" => {
                let turn = params.pointer("/turn/id").and_then(Value::as_str).unwrap_or_default().to_string();
                let ours = t.starting || t.turn.as_ref().is_some_and(|(id, _)| *id == turn);
                t.starting = false;
                t.turn = Some((turn.clone(), ours));
                t.agent_text = None;
                t.retrying = false;
                t.limit_until = None;
                if !ours {
                    self.effects.push_back(Effect::Foreign { worker, thread: thread.clone(), turn });
                }
                self.state(worker, &thread, Report::bare(ConversationState::Generating));
            }
            "item/started" if params.get("item").and_then(item_type) == Some("userMessage") => {
                let client = params.pointer("/item/clientId").and_then(Value::as_str);
                let known = client.is_some_and(|c| t.nonces.iter().any(|n| n == c));
                let turn = params.get("turnId").and_then(Value::as_str).unwrap_or_default().to_string();
                let flagged = t.turn.as_ref().is_some_and(|(id, ours)| *id == turn && !ours);
                if !known
                    && !flagged
                    && let Some((id, ours)) = t.turn.as_mut().filter(|(id, _)| *id == turn)
                {
                    *ours = false;
                    let turn = id.clone();
                    self.effects.push_back(Effect::Foreign { worker, thread, turn });
                }
            }
            "item/completed" => {
                if let Some(text) = params.get("item").and_then(agent_text) {
                    t.agent_text = Some(text.to_string());
                }
            }
            "thread/goal/updated" => return self.goal_updated(now, &thread, params),
            "thread/status/changed" => {
                let flags = params
                    .pointer("/status/activeFlags")
                    .and_then(Value::as_array)
                    .map(Vec::as_slice)
                    .unwrap_or_default();
                let waiting =
                    flags.iter().any(|f| matches!(f.as_str(), Some("waitingOnApproval" | "waitingOnUserInput")));
                if waiting && !self.asking(&thread) {
                    self.state(worker, &thread, Report::bare(ConversationState::AwaitingApproval));
                }
            }
            "turn/completed" => {
                let turn = params.get("turn").cloned().unwrap_or_default();
                let id = turn.get("id").and_then(Value::as_str).unwrap_or_default().to_string();
                t.turn = None;
                t.retrying = false;
                t.starting = false;
                t.ended = Some(id);
                let text = turn
                    .get("items")
                    .and_then(Value::as_array)
                    .and_then(|items| items.iter().rev().find_map(agent_text));
                let text = text.map(str::to_string).or_else(|| t.agent_text.take());
                let status = turn.get("status").and_then(Value::as_str).and_then(TurnStatus::parse);
                let report = self.turn_report(now, status, text.as_deref(), turn.get("error"));
                let until = report.until;
                self.state(worker, &thread, report);
                if let Some(t) = self.threads.get_mut(&thread) {
                    t.limit_until = until;
                }
                self.approvals_gone(&thread);
                let held = self.threads.get_mut(&thread).and_then(|t| t.held.take());
                if let Some(command) = held {
                    return self.command(now, command);
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// `error` on a thread: with `willRetry` while a turn runs, Codex retries its model
    /// connection inside the turn (network, login, server errors): the turn is reported
    /// still `generating`, with what Codex said. Without `willRetry` the turn's end says
    /// what failed (`turn/completed`).
    fn turn_error(&mut self, thread: &str, params: &Value) {
        let Some(t) = self.threads.get_mut(thread) else { return };
        let retrying = params.get("willRetry").and_then(Value::as_bool) == Some(true);
        if !retrying || t.turn.is_none() {
            return;
        }
        t.retrying = true;
        let worker = t.worker;
        let reason = retry_reason(params.get("error").unwrap_or(&Value::Null));
        let retry = CliRetry { reason: reason.into(), attempt: None };
        self.state(worker, thread, Report { retry: Some(retry), ..Report::bare(ConversationState::Generating) });
    }

    /// A usage or rate limit's reset came: the thread whose turn it failed is idle again
    /// (Codex ended that turn; the thread takes a prompt), so it is reported `idle`, and
    /// the daemon's usual idle wake resumes the worker after its grace. Never before:
    /// until then the conversation stays `error` with the reset as `until`.
    pub(super) fn lift_limits(&mut self, now: Timestamp) {
        let lifted: Vec<(WorkerId, String)> = self
            .threads
            .iter_mut()
            .filter_map(|(id, t)| t.limit_until.take_if(|until| now >= *until).map(|_| (t.worker, id.clone())))
            .collect();
        for (worker, thread) in lifted {
            self.state(worker, &thread, Report::bare(ConversationState::Idle));
        }
    }

    /// The state a turn's end shows: `idle` (completed or interrupted, an observed end,
    /// never a completion), `error` when it failed, `generating` while it runs.
    fn turn_report(
        &self,
        now: Timestamp,
        status: Option<TurnStatus>,
        text: Option<&str>,
        error: Option<&Value>,
    ) -> Report {
        match status {
            Some(TurnStatus::Completed | TurnStatus::Interrupted) => {
                Report { block: text.map(tail), ..Report::bare(ConversationState::Idle) }
            }
            Some(TurnStatus::InProgress) => Report::bare(ConversationState::Generating),
            Some(TurnStatus::Failed) | None => {
                let failure = usage::classify(error.unwrap_or(&Value::Null), self.rate_limits.as_ref(), now);
                Report {
                    state: ConversationState::Error(failure.kind),
                    block: None,
                    until: failure.until,
                    detail: failure.detail,
                    retry: None,
                }
            }
        }
    }

    /// `conversation.inspect`: the last turn's state, and foreign turns flagged.
    /// A limit the record shows without a reset (the notification that named it went with
    /// an earlier child) keeps the reset the thread was resumed with ([`super::Resume`]):
    /// held until then, or `idle` if it already passed.
    pub(super) fn observe_record(&mut self, now: Timestamp, worker: WorkerId, record: &ThreadRecord) {
        let mut report = match record.turns.last() {
            None => Report::bare(ConversationState::Ready),
            Some(last) => self.turn_report(now, last.status, last.last_agent_text.as_deref(), last.error.as_ref()),
        };
        if let Some(t) = self.threads.get_mut(&record.id) {
            let limited =
                matches!(report.state, ConversationState::Error(ErrorKind::UsageLimit | ErrorKind::RateLimited));
            match (limited, report.until, t.limit_until) {
                (true, None, Some(until)) if until > now => report.until = Some(until),
                (true, None, Some(_)) => {
                    t.limit_until = None;
                    report = Report::bare(ConversationState::Idle);
                }
                (true, Some(until), _) => t.limit_until = Some(until),
                (false, _, _) => t.limit_until = None,
                (true, None, None) => {}
            }
        }
        if let Some(t) = self.threads.get(&record.id) {
            let ours = t.nonces.iter().cloned().collect();
            let foreign: Vec<String> = record.foreign_turns(&ours).iter().map(|turn| turn.id.clone()).collect();
            for turn in foreign {
                self.effects.push_back(Effect::Foreign { worker, thread: record.id.clone(), turn });
            }
        }
        self.state(worker, &record.id, report);
    }
}

/// The last [`BLOCK_CHARS_MAX`] characters of an agent message.
fn tail(text: &str) -> String {
    let skip = text.chars().count().saturating_sub(BLOCK_CHARS_MAX);
    text.chars().skip(skip).collect()
}

/// Why a turn's model connection is retried, for a person: what failed (from
/// `codexErrorInfo`, with its HTTP status when Codex gives one), Codex's own words on it
/// (`additionalDetails`) and its count (`message`, "Reconnecting... 2/6"): e.g. "the model's
/// stream broke off: We're currently experiencing high demand, which may cause temporary
/// errors. (Reconnecting... 1/5)". 0.169.0's `message` alone says only the count.
fn retry_reason(error: &Value) -> String {
    let text = |key: &str| error.get(key).and_then(Value::as_str).map(str::trim).filter(|t| !t.is_empty());
    let (info, status) = match error.get("codexErrorInfo") {
        Some(Value::String(name)) => (Some(name.as_str()), None),
        Some(Value::Object(object)) => {
            let (name, inner) = object.iter().next().map_or((None, None), |(k, v)| (Some(k.as_str()), Some(v)));
            (name, inner.and_then(|v| v.get("httpStatusCode")).and_then(Value::as_u64))
        }
        _ => (None, None),
    };
    let what = match info {
        Some("httpConnectionFailed" | "responseStreamConnectionFailed") => Some("cannot reach the model"),
        Some("responseStreamDisconnected") => Some("the model's stream broke off"),
        Some("internalServerError") => Some("the model's server failed"),
        Some("unauthorized") => Some("the model refused the login"),
        Some("responseTooManyFailedAttempts") => Some("the model failed too often"),
        Some(other) => Some(other),
        None => None,
    };
    let what = match (what, status) {
        (Some(what), Some(status)) => Some(format!("{what} (HTTP {status})")),
        (what, _) => what.map(str::to_string),
    };
    let said = [what, text("additionalDetails").map(str::to_string)].into_iter().flatten().collect::<Vec<_>>();
    let reason = match (said.is_empty(), text("message")) {
        (true, Some(message)) => message.to_string(),
        (true, None) => "no detail".to_string(),
        (false, Some(message)) => format!("{} ({message})", said.join(": ")),
        (false, None) => said.join(": "),
    };
    crate::base::report::cut_detail(&reason)
}

#[cfg(test)]
mod tests {
    use super::retry_reason;
    use serde_json::{Value, json};

    /// The `error` notification the real codex-cli 0.169.0 wrote on its stdout (app-server
    /// JSON-RPC, not stderr) when the loopback mock model answered HTTP 500
    /// (`tests/mock/mock_responses.py`, a plan's `fail`; captured 2026-12-06 through a `tee`
    /// wrapper around the binary, stream_max_retries=5).
    const CAPTURED: &str = r#"{"method":"error","params":{"error":{"message":"Reconnecting... 1/5","codexErrorInfo":{"responseStreamDisconnected":{"httpStatusCode":null}},"additionalDetails":"We’re currently experiencing high demand, which may cause temporary errors.","misalignment":null},"willRetry":true,"threadId":"01a24a06-6379-7711-b592-dfaaf96ef8c0","turnId":"01a24a06-64ac-7030-9247-89781e9dff5e"},"emittedAtMs":1796538263155}"#;

    #[test]
    fn a_retry_says_what_failed_in_codex_s_words_and_its_count() {
        let line: Value = serde_json::from_str(CAPTURED).expect("the captured line");
        assert_eq!(
            retry_reason(&line["params"]["error"]),
            "the model's stream broke off: We’re currently experiencing high demand, which may cause temporary \
             errors. (Reconnecting... 1/5)"
        );
        let status = json!({ "message": "Reconnecting... 2/5", "codexErrorInfo": { "httpConnectionFailed": { "httpStatusCode": 502 } } });
        assert_eq!(retry_reason(&status), "cannot reach the model (HTTP 502) (Reconnecting... 2/5)");
        assert_eq!(retry_reason(&json!({ "message": "Reconnecting... 3/5" })), "Reconnecting... 3/5");
        assert_eq!(retry_reason(&Value::Null), "no detail");
    }
}
