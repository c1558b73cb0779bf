//! The opt-in approval mode (`--approvals ask`): an app-server approval request waits,
//! pending, for a person's answer. It is reported `awaiting_approval` with a stable handle
//! and what is asked; an `approval.answer` naming that handle writes the decision once;
//! the request is gone when its turn ends, Codex resolves it itself, or the thread closes.
//! In the default mode (`never`) a request that comes anyway is declined at once.

use super::{Codex, Effect, Outcome, Report};
use crate::Error;
use crate::base::limits::APPROVALS_MAX;
pub use crate::base::settings::Approvals;
use crate::codex::jsonrpc;
use engine::effect::ExecutorCommand;
use engine::ids::CommandId;
use engine::model::{ApprovalDecision, ConversationState};
use executor_protocol::{ApprovalKindWire, ApprovalWire, page_detail};
use serde_json::{Value, json};

/// The app-server's approval requests (0.169.0, `generate-json-schema`).
pub(super) const COMMAND_APPROVAL: &str = "item/commandExecution/requestApproval";
/// Its file-change request.
pub(super) const FILE_CHANGE_APPROVAL: &str = "item/fileChange/requestApproval";

/// One request waiting for a person.
#[derive(Debug, Clone)]
pub(super) struct Asked {
    /// The server's JSON-RPC id, echoed in the answer.
    rpc: Value,
    /// Its thread.
    thread: String,
}

/// The approval mode (`--approvals`) is the executor's setting, shared with the Claude
/// room; what it means for a Codex thread is said here.
impl Approvals {
    /// The thread's `approvalPolicy` (0.169.0's `AskForApproval`: `untrusted`,
    /// `on-request`, `never`).
    pub fn policy(self) -> &'static str {
        match self {
            Approvals::Never => "never",
            Approvals::Ask => "on-request",
        }
    }
}

impl Codex {
    /// How many approval handles this core has given (`apr-1` to `apr-N`).
    pub fn approvals_given(&self) -> u64 {
        self.approval_seq
    }

    /// Numbers this core's handles on from `given`, the handles the worker's earlier
    /// children gave: a handle then names one request for the executor's life, so a new
    /// child's first request is never taken for one answered before.
    pub fn approvals_from(&mut self, given: u64) {
        self.approval_seq = self.approval_seq.max(given);
    }

    /// An approval server request: declined at once unless threads ask
    /// (`approvalPolicy` not `never`); then pending, reported `awaiting_approval`.
    pub(super) fn approval_request(&mut self, id: Value, method: &str, params: &Value) -> Result<(), Error> {
        let thread = params.get("threadId").and_then(Value::as_str).unwrap_or_default().to_string();
        let worker = self.threads.get(&thread).map(|t| t.worker);
        let asks = self.config.approval_policy != "never";
        let (Some(worker), true) = (worker, asks && self.approvals.len() < APPROVALS_MAX) else {
            let line = jsonrpc::result_line(&id, json!({"decision": "decline"}));
            self.effects.push_back(Effect::Write(line));
            return Ok(());
        };
        self.approval_seq += 1;
        let handle = format!("apr-{}", self.approval_seq);
        let (kind, summary) = summary(method, params);
        self.approvals.insert(handle.clone(), Asked { rpc: id, thread: thread.clone() });
        let approval = ApprovalWire { id: handle, kind, summary: summary.clone() };
        let report = Report { detail: Some(summary), ..Report::bare(ConversationState::AwaitingApproval) };
        self.effects.push_back(Effect::Approval { worker, thread, report, approval });
        Ok(())
    }

    /// `approval.answer`: the decision written to the pending request, once; a request
    /// that is gone (answered, resolved by Codex, its turn or child ended) fails
    /// `APPROVAL_GONE` and nothing is written.
    pub(super) fn approval_answer(&mut self, command: &ExecutorCommand) {
        let answer = command.approval.as_ref();
        let asked = answer.and_then(|a| self.approvals.get(&*a.id)).filter(|a| *a.thread == *command.conversation);
        let (Some(answer), Some(asked)) = (answer, asked.cloned()) else {
            return self.answered(
                command.id,
                Outcome::Failed {
                    code: "APPROVAL_GONE",
                    detail: "no such approval request waits here: answered already, or its turn or session ended"
                        .to_string(),
                },
            );
        };
        self.approvals.remove(&*answer.id);
        let decision = match answer.decision {
            ApprovalDecision::Approve => "accept",
            ApprovalDecision::Decline => "decline",
        };
        self.effects.push_back(Effect::Write(jsonrpc::result_line(&asked.rpc, json!({"decision": decision}))));
        let turn = self.threads.get(&asked.thread).and_then(|t| t.turn.clone()).map(|(t, _)| t).unwrap_or_default();
        if let Some(worker) = self.threads.get(&asked.thread).map(|t| t.worker) {
            self.state(worker, &asked.thread, Report::bare(ConversationState::Generating));
        }
        self.answered(command.id, Outcome::Submitted { thread: asked.thread, turn });
    }

    /// Whether a request of `thread` waits: its `waitingOnApproval` status is then already
    /// reported, with the request (a bare report would drop it from the published state).
    pub(super) fn asking(&self, thread: &str) -> bool {
        self.approvals.values().any(|a| a.thread == thread)
    }

    /// Requests of `thread` are gone (its turn ended, or it closed).
    pub(super) fn approvals_gone(&mut self, thread: &str) {
        self.approvals.retain(|_, a| a.thread != thread);
    }

    /// `serverRequest/resolved`: Codex settled the request itself (e.g. the turn was
    /// interrupted); it can no longer be answered.
    pub(super) fn approval_resolved(&mut self, params: &Value) {
        if let Some(rpc) = params.get("requestId") {
            self.approvals.retain(|_, a| a.rpc != *rpc);
        }
    }

    fn answered(&mut self, command: CommandId, outcome: Outcome) {
        self.effects.push_back(Effect::Answered { command, outcome });
    }
}

/// What a request asks, for people: the command line and its directory, or the file
/// change's reason; cleaned and capped as page text is.
fn summary(method: &str, params: &Value) -> (ApprovalKindWire, String) {
    let text = |key: &str| params.get(key).and_then(Value::as_str).unwrap_or_default();
    let (kind, raw) = if method == FILE_CHANGE_APPROVAL {
        let what = [text("reason"), text("grantRoot")].into_iter().find(|t| !t.is_empty()).unwrap_or("");
        (ApprovalKindWire::FileChange, format!("apply file changes {what}"))
    } else {
        let command = text("command");
        let cwd = text("cwd");
        let line = if cwd.is_empty() { command.to_string() } else { format!("{command} (in {cwd})") };
        (ApprovalKindWire::Command, format!("run {line}"))
    };
    (kind, page_detail::clean(&raw).unwrap_or_default())
}
