//! The opt-in approval mode for Claude Code (`--approvals ask`): under
//! `--permission-prompt-tool stdio`, 2.1.332 writes a `control_request` `can_use_tool` line
//! before it runs a tool its permissions do not let through, and the turn waits for a
//! `control_response` on stdin. The request stays pending here, is reported
//! `awaiting_approval` with a stable handle (`apr-N`) and what is asked, and an
//! `approval.answer` naming that handle writes the decision once. The turn's `result`, the
//! child's exit (a crash, or the close) drop the pending requests: an answer then fails
//! `APPROVAL_GONE` and writes nothing. In the default mode (`never`) no request comes
//! (`--permission-prompts none`); one that comes anyway is denied at once.
//!
//! Recorded with 2.1.332 on 2026-12-02 (`docs/cli-agents.md`, "Approvals").

use super::{Claude, Effect, Outcome, Report};
use crate::base::limits::APPROVALS_MAX;
use engine::effect::ExecutorCommand;
use engine::model::{ApprovalDecision, ConversationState};
use executor_protocol::{ApprovalKindWire, ApprovalWire, page_detail};
use serde_json::{Value, json};

/// What the model is told when a person declines (the CLI hands it over as the tool's
/// error result).
pub const DECLINED: &str =
    "the person declined this: do not try it another way; go on without it or explain what you needed";

/// One request waiting for a person.
#[derive(Debug, Clone)]
pub(super) struct Asked {
    /// The CLI's `request_id`, echoed in the answer.
    request: String,
    /// The tool's input, sent back unchanged as `updatedInput` when allowed.
    input: Value,
}

impl Claude {
    /// A `control_request` line: a `can_use_tool` waits for a person when the session asks
    /// ([`super::Config::asks`]) and fewer than [`APPROVALS_MAX`] wait; otherwise it is
    /// denied at once. Another subtype is answered with an error, never left hanging.
    pub(super) fn control_request(&mut self, msg: &Value) {
        let request = msg.get("request_id").and_then(Value::as_str).unwrap_or_default().to_string();
        let body = msg.get("request").cloned().unwrap_or(Value::Null);
        if body.get("subtype").and_then(Value::as_str) != Some("can_use_tool") {
            let error = "this executor answers can_use_tool requests only";
            let line = json!({"type": "control_response",
                "response": {"subtype": "error", "request_id": request, "error": error}});
            self.effects.push_back(Effect::Write(line.to_string()));
            return;
        }
        if !self.config.asks || self.approvals.len() >= APPROVALS_MAX {
            let line = decision_line(&request, None);
            self.effects.push_back(Effect::Write(line));
            return;
        }
        self.approval_seq += 1;
        let handle = format!("apr-{}", self.approval_seq);
        let (kind, summary) = summary(&body);
        let input = body.get("input").cloned().unwrap_or_else(|| json!({}));
        self.approvals.insert(handle.clone(), Asked { request, input });
        let approval = ApprovalWire { id: handle, kind, summary: summary.clone() };
        let report = Report { detail: Some(summary), ..Report::bare(ConversationState::AwaitingApproval) };
        let (worker, session) = (self.worker, self.session.clone().unwrap_or_default());
        self.effects.push_back(Effect::Approval { worker, session, report, approval });
    }

    /// `approval.answer`: the decision written to the pending request, once; a request
    /// that is gone (answered, its turn or child ended) fails `APPROVAL_GONE` and nothing
    /// is written.
    pub(super) fn approval_answer(&mut self, command: &ExecutorCommand) {
        let answer = command.approval.as_ref().filter(|_| self.session.as_deref() == Some(&*command.conversation));
        let asked = answer.and_then(|a| self.approvals.remove(&*a.id));
        let (Some(answer), Some(asked)) = (answer, asked) else {
            let detail = "no such approval request waits here: answered already, or its turn or session ended";
            let outcome = Outcome::Failed { code: "APPROVAL_GONE", detail: detail.to_string() };
            self.effects.push_back(Effect::Answered { command: command.id, outcome });
            return;
        };
        let input = match answer.decision {
            ApprovalDecision::Approve => Some(&asked.input),
            ApprovalDecision::Decline => None,
        };
        self.effects.push_back(Effect::Write(decision_line(&asked.request, input)));
        self.state(Report::bare(ConversationState::Generating));
        let session = self.session.clone().unwrap_or_default();
        let outcome = Outcome::Submitted { session, nonce: String::new(), duplicate: false };
        self.effects.push_back(Effect::Answered { command: command.id, outcome });
    }

    /// The pending requests are gone (the turn ended, or the child exited).
    pub(super) fn approvals_gone(&mut self) {
        self.approvals.clear();
    }

    /// How many requests wait for a person.
    pub fn approvals_waiting(&self) -> usize {
        self.approvals.len()
    }
}

/// The `control_response` line: allow with `updatedInput` = `input`, or (`None`) deny
/// with [`DECLINED`] (the shapes 2.1.332 acted on, recorded 2026-12-02).
pub fn decision_line(request: &str, input: Option<&Value>) -> String {
    let response = match input {
        Some(input) => json!({"behavior": "allow", "updatedInput": input}),
        None => json!({"behavior": "deny", "message": DECLINED}),
    };
    json!({"type": "control_response", "response": {"subtype": "success", "request_id": request, "response": response}})
        .to_string()
}

/// What a `can_use_tool` request asks, for people: a command line (`Bash`, noting a
/// request to run outside the sandbox), a file changed (`Write`, `Edit`, `MultiEdit`,
/// `NotebookEdit`) or another tool with its description; cleaned and capped as page text
/// is. The wire has two kinds: a tool that changes no file is a `command`.
fn summary(body: &Value) -> (ApprovalKindWire, String) {
    let text = |v: &Value, key: &str| v.get(key).and_then(Value::as_str).unwrap_or_default().to_string();
    let input = body.get("input").cloned().unwrap_or(Value::Null);
    let tool = text(body, "tool_name");
    let (kind, raw) = match tool.as_str() {
        "Bash" => {
            let outside = text(body, "decision_reason_type") == "sandboxOverride"
                || input.get("dangerouslyDisableSandbox").and_then(Value::as_bool) == Some(true);
            let note = if outside { " (outside the sandbox)" } else { "" };
            (ApprovalKindWire::Command, format!("run {}{note}", text(&input, "command")))
        }
        "Write" | "Edit" | "MultiEdit" => {
            (ApprovalKindWire::FileChange, format!("{} {}", tool.to_lowercase(), text(&input, "file_path")))
        }
        "NotebookEdit" => (ApprovalKindWire::FileChange, format!("edit {}", text(&input, "notebook_path"))),
        _ => {
            let what = [text(body, "description"), text(&input, "url"), text(&input, "path")]
                .into_iter()
                .find(|t| !t.is_empty())
                .unwrap_or_default();
            (ApprovalKindWire::Command, format!("use {tool} {what}"))
        }
    };
    (kind, page_detail::clean(raw.trim()).unwrap_or_default())
}
