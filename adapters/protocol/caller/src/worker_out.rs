//! A worker's reply shapes: `worker_get` and `worker_list` (the worker with its assignment,
//! pause, holds, waits, binding, pending continuation and progress), `worker_progress`'s
//! short answer, `worker_continue_now` and `worker_steer`.

use crate::attempt_out::AttemptOut;
use crate::error::ErrorOut;
use crate::out::{FromReply, MessageOut, mismatch, ms};
use crate::policy::{PolicyOut, source_name};
use engine::Reply;
use engine::model::*;
use engine::op::WorkerView;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// What a worker must achieve.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AssignmentOut {
    /// What to build or do.
    pub objective: String,
    /// What the worker owns.
    pub scope: String,
    /// The checks that define "done".
    pub acceptance_criteria: Vec<String>,
}

/// An active pause.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PauseOut {
    /// `operator`, `stall`, `host_ui_changed`, `ambiguous_submission`, `delivery_failing`,
    /// `usage_limit` (the page named no reset time), `account_check` (suspicious
    /// activity, a human check or a logged-out page: a person must look first),
    /// `app_unavailable` (the conversation lost the orchestrator's app: recover the worker
    /// into a new conversation), `app_not_selected` (the executor could not choose the
    /// app before a send: check its installation and name, then resume), `foreign_turn`
    /// (a turn the orchestrator did not start ran in the CLI session: look, then resume) or
    /// `cli_retrying` (the CLI kept retrying its model connection for 10 minutes: check
    /// the network and its login, then resume).
    pub reason: String,
    /// Since when, ms since the Unix epoch.
    pub since_ms: u64,
    /// What the operator should look at, when there is something specific.
    pub detail: Option<String>,
}

/// What holds a worker without pausing it: it lifts by itself.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HoldOut {
    /// `usage_limit` or `rate_limited` (every worker of that browser account waits until
    /// `untilMs`), `blocked_by_dialog` (a dialog covers this conversation until the page
    /// shows something else; the executor never closes it) or `awaiting_approval` (a
    /// tool-approval card waits for a person in this conversation; the executor never
    /// clicks it; `detail` is the app's name).
    pub reason: String,
    /// Since when, ms since the Unix epoch.
    pub since_ms: u64,
    /// When an account hold lifts, ms since the Unix epoch (absent for a dialog).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until_ms: Option<u64>,
    /// The page's words (a dialog's heading, a limit notice, the app awaiting approval):
    /// untrusted text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// With `awaiting_approval` from a CLI worker (`executor-cli --approvals ask`): the
    /// request waiting, answered by the operator's `approval_answer`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval: Option<ApprovalOut>,
}

/// A CLI approval request waiting for a person.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ApprovalOut {
    /// Its id, which the answer names.
    pub id: String,
    /// `command` (run a command line) or `file_change` (apply edits).
    pub kind: String,
    /// What is asked (untrusted text).
    pub summary: String,
}

impl From<&engine::view::HoldView> for HoldOut {
    fn from(h: &engine::view::HoldView) -> HoldOut {
        HoldOut {
            reason: h.reason.as_str().to_string(),
            since_ms: ms(h.since),
            until_ms: h.until.map(ms),
            detail: h.detail.as_deref().map(String::from),
            approval: h.approval.as_ref().map(|a| ApprovalOut {
                id: a.id.to_string(),
                kind: a.kind.to_string(),
                summary: a.summary.to_string(),
            }),
        }
    }
}

/// An open request for human input.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HumanWaitOut {
    /// Why the worker cannot go on alone.
    pub reason: String,
    /// The question.
    pub question: String,
    /// Offered choices.
    pub choices: Vec<String>,
    /// When it was asked.
    pub requested_at_ms: u64,
    /// `call` (`worker_await_human`) or `block` (the agent's end-of-response block said blocked).
    pub source: String,
}

/// An open dependency wait.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DependencyWaitOut {
    /// The worker waited for (released when it completes), if that is the condition.
    pub worker_id: Option<String>,
    /// The external condition, if that is the condition.
    pub description: Option<String>,
    /// Why the worker waits.
    pub reason: String,
    /// Since when.
    pub requested_at_ms: u64,
}

/// The managed conversation leased to a worker.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BindingOut {
    /// Conversation URL (empty while a fresh conversation is being opened).
    pub conversation_url: String,
    /// The executor holding it, once one confirmed it.
    pub executor_id: Option<String>,
    /// `pending`, `verified` or `lost`.
    pub status: String,
    /// Last reported state: `unknown`, `ready`, `generating`, `idle`, `error`, `closed` or
    /// `awaiting_approval` (a tool-approval card waits for a person).
    pub state: String,
    /// With `state = error`: `delivery_timeout`, `conversation_full`, `host_ui_changed`, `usage_limit`, `login_required`, `rate_limited`, `suspicious_activity`, `challenge`, `blocked_by_dialog`, `app_unavailable`, `foreign_turn` or `generic`.
    pub error_kind: Option<String>,
    /// When the state was first reported.
    pub state_since_ms: u64,
}

/// The worker's pending continuation (at most one; every wake merges into it).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ContinuationOut {
    /// Why it exists, e.g. `idle`, `active_keepalive`, `event:message`, `operator:continue_now`.
    pub wake_reasons: Vec<String>,
    /// `scheduler`, `root` or `operator`: which holds it passes.
    pub origin: String,
    /// `continue`, `followup`, `steering` or `answer` (a person's answer to the worker's question).
    pub kind: String,
    /// When the first reason arrived.
    pub created_at_ms: u64,
    /// Earliest retry after a failed delivery.
    pub not_before_ms: Option<u64>,
    /// The anti-spam floor time last announced for it.
    pub deferred_until_ms: Option<u64>,
    /// Delivered only when the conversation is idle (the executor cannot steer mid-turn).
    pub idle_only: bool,
}

/// No-progress accounting and the stall guard.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProgressOut {
    /// When durable progress was last reported.
    pub last_at_ms: Option<u64>,
    /// Event cursor of that report.
    pub last_cursor: Option<u64>,
    /// Submitted attempts since then.
    pub attempts_without_progress: u32,
    /// Execution time since then (turns submitted or generating), ms.
    pub quiet_ms: u64,
    /// `clear`, `warned` or `paused`.
    pub stall: String,
}

/// Everything a caller needs to act on a worker.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkerOut {
    /// Worker id, e.g. `wrk-2`.
    pub worker_id: String,
    /// The run.
    pub run_id: String,
    /// Hierarchical name, e.g. `/root/backend`.
    pub name: String,
    /// Owner-readable name.
    pub display_name: String,
    /// One-line summary.
    pub task_summary: String,
    /// `<taskName> Lane X`, or `Root`.
    pub lane_label: String,
    /// Worktree or branch label.
    pub worktree: Option<String>,
    /// Which executor runs it: `chatgpt`, `codex` or `claude`.
    pub executor: String,
    /// A `codex` or `claude` worker's directory and branch (absent for `chatgpt`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace: Option<crate::WorkspaceOut>,
    /// The current assignment.
    pub assignment: AssignmentOut,
    /// `active`, `completed`, `failed` or `cancelled`.
    pub lifecycle: String,
    /// Derived disposition: `running`, `awaiting_execution`, `awaiting_dependency`,
    /// `awaiting_human`, `paused`, `completed`, `failed` or `cancelled`. A worker whose
    /// executor is not connected (`liveness.state` `offline`) reads `awaiting_execution`,
    /// never `running`. A worker held by
    /// an account limit reads `awaiting_execution` (or `running` while its turn goes on);
    /// one held by a dialog or an approval card reads `awaiting_human` (a person must
    /// close or answer it).
    pub disposition: String,
    /// Completion summary or failure/cancellation reason.
    pub outcome: Option<String>,
    /// The effective continuation policy.
    pub policy: PolicyOut,
    /// Where it comes from: `run_default`, `worker_override` or `engine_default`.
    pub policy_source: String,
    /// The active pause, if any.
    pub pause: Option<PauseOut>,
    /// What holds it without a pause (an account's usage or rate limit, a dialog, an
    /// approval card), if
    /// anything: nothing is typed for it until this lifts by itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hold: Option<HoldOut>,
    /// Who carries it while it is unfinished: its executor (id and kind), connected or not,
    /// since when, and its CLI retrying. A worker whose executor is `offline` is never
    /// `running`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub liveness: Option<crate::LivenessOut>,
    /// The worker pauses as soon as its running turn ends.
    pub pause_after_turn: bool,
    /// The open human wait ("Needs you"), if any.
    pub human_wait: Option<HumanWaitOut>,
    /// The answer to the last resolved human wait.
    pub human_answer: Option<String>,
    /// The open dependency wait, if any.
    pub dependency_wait: Option<DependencyWaitOut>,
    /// The managed conversation, if any.
    pub binding: Option<BindingOut>,
    /// The pending continuation, if any.
    pub pending_continuation: Option<ContinuationOut>,
    /// The attempt whose command is out and unanswered (at most one).
    pub in_flight_attempt_id: Option<String>,
    /// The latest attempt (in flight, or the current or last turn).
    pub current_attempt: Option<AttemptOut>,
    /// Attempts created so far.
    pub attempts: u32,
    /// Automatic resumes delivered so far.
    pub auto_resumes: u32,
    /// When the last continuation was submitted.
    pub last_delivery_at_ms: Option<u64>,
    /// No-progress counters and the stall guard.
    pub progress: ProgressOut,
    /// Consecutive deliveries that definitely failed.
    pub delivery_failures: u32,
    /// Last valid end-of-response block status: `working`, `complete` or `blocked`.
    pub last_block_status: Option<String>,
    /// Recent messages to this worker, oldest first.
    pub inbox: Vec<MessageOut>,
    /// When it was spawned.
    pub created_at_ms: u64,
    /// When it became terminal.
    pub ended_at_ms: Option<u64>,
    /// Unfinished workers waiting for this one (`worker_await_dependency`), by id:
    /// stopping it ends their waits unmet (each is woken with the outcome).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub waited_on_by: Vec<String>,
}

fn binding_status(s: BindingStatus) -> &'static str {
    match s {
        BindingStatus::Pending => "pending",
        BindingStatus::Verified => "verified",
        BindingStatus::Lost => "lost",
    }
}

fn stall_name(s: StallState) -> &'static str {
    match s {
        StallState::Clear => "clear",
        StallState::Warned => "warned",
        StallState::Paused => "paused",
    }
}

fn pause_out(w: &Worker) -> Option<PauseOut> {
    w.pause.as_ref().map(|p| PauseOut {
        reason: p.reason.as_str().to_string(),
        since_ms: ms(p.at),
        detail: p.detail.as_deref().map(String::from),
    })
}

fn progress_out(w: &Worker) -> ProgressOut {
    ProgressOut {
        last_at_ms: w.progress.last_at.map(ms),
        last_cursor: w.progress.last_cursor.map(|c| c.0),
        attempts_without_progress: w.progress.attempts_without,
        quiet_ms: w.progress.quiet_ms,
        stall: stall_name(w.progress.stall).to_string(),
    }
}

impl From<&WorkerView> for WorkerOut {
    fn from(v: &WorkerView) -> WorkerOut {
        let w = &v.worker;
        let spec = &w.spec;
        WorkerOut {
            worker_id: w.id.to_string(),
            run_id: w.run.to_string(),
            name: spec.name.clone(),
            display_name: spec.display_name.clone(),
            task_summary: spec.task_summary.clone(),
            lane_label: spec.lane_label.clone(),
            worktree: spec.worktree.clone(),
            executor: spec.executor.as_str().to_string(),
            workspace: spec.workspace.as_ref().map(crate::WorkspaceOut::from),
            assignment: AssignmentOut {
                objective: spec.assignment.objective.clone(),
                scope: spec.assignment.scope.clone(),
                acceptance_criteria: spec.assignment.acceptance_criteria.clone(),
            },
            lifecycle: w.lifecycle.as_str().to_string(),
            disposition: v.disposition.as_str().to_string(),
            outcome: w.outcome.as_deref().map(String::from),
            policy: PolicyOut::from(&v.policy),
            policy_source: source_name(v.policy_source),
            pause: pause_out(w),
            hold: v.hold.as_ref().map(HoldOut::from),
            liveness: v.liveness.as_ref().map(crate::LivenessOut::from),
            pause_after_turn: w.pause_after_turn,
            human_wait: w.human.as_ref().map(|h| HumanWaitOut {
                reason: h.reason.to_string(),
                question: h.question.to_string(),
                choices: h.choices.iter().map(|c| c.to_string()).collect(),
                requested_at_ms: ms(h.requested_at),
                source: match h.source {
                    WaitSource::Call => "call".to_string(),
                    WaitSource::Block => "block".to_string(),
                },
            }),
            human_answer: w.human_answer.as_deref().map(String::from),
            dependency_wait: w.dependency.as_ref().map(|d| {
                let (worker_id, description) = match &d.condition {
                    DependencyCondition::WorkerCompleted(id) => (Some(id.to_string()), None),
                    DependencyCondition::External(text) => (None, Some(text.to_string())),
                };
                DependencyWaitOut {
                    worker_id,
                    description,
                    reason: d.reason.to_string(),
                    requested_at_ms: ms(d.requested_at),
                }
            }),
            binding: w.binding.as_ref().map(|b| BindingOut {
                conversation_url: b.conversation.to_string(),
                executor_id: b.executor.as_ref().map(|e| e.to_string()),
                status: binding_status(b.status).to_string(),
                state: b.state.as_str().to_string(),
                error_kind: match b.state {
                    ConversationState::Error(kind) => Some(kind.as_str().to_string()),
                    _ => None,
                },
                state_since_ms: ms(b.state_since),
            }),
            pending_continuation: w.intent.as_ref().map(|i| ContinuationOut {
                wake_reasons: i.reasons.labels().into_iter().map(String::from).collect(),
                origin: i.origin.as_str().to_string(),
                kind: match i.payload {
                    IntentPayload::Continue => "continue",
                    IntentPayload::Followup(_) => "followup",
                    IntentPayload::Steering(_) => "steering",
                    IntentPayload::Answer(_) => "answer",
                    IntentPayload::DependencyEnded(_) => "dependency_ended",
                }
                .to_string(),
                created_at_ms: ms(i.created_at),
                not_before_ms: i.not_before.map(ms),
                deferred_until_ms: i.deferred_until.map(ms),
                idle_only: i.idle_only,
            }),
            in_flight_attempt_id: w.in_flight.map(|a| a.to_string()),
            current_attempt: v.current_attempt.as_ref().map(AttemptOut::from),
            attempts: w.attempts,
            auto_resumes: w.auto_resumes,
            last_delivery_at_ms: w.last_delivery_at.map(ms),
            progress: progress_out(w),
            delivery_failures: w.delivery_failures,
            last_block_status: w.last_block.map(|b| b.as_str().to_string()),
            inbox: v.inbox.iter().map(MessageOut::from).collect(),
            created_at_ms: ms(w.created_at),
            ended_at_ms: w.ended_at.map(ms),
            waited_on_by: v.waited_on_by.iter().map(|w| w.to_string()).collect(),
        }
    }
}

impl FromReply for WorkerOut {
    fn from_reply(reply: Reply) -> Result<Self, ErrorOut> {
        match reply {
            Reply::Worker(v) => Ok(WorkerOut::from(&*v)),
            _ => Err(mismatch("a worker")),
        }
    }
}

/// `worker_progress`: what a worker needs to hear back after a report. A worker reports
/// after every meaningful step, so echoing its whole record (assignment, policy, binding:
/// a few KiB, twice with the text copy) would fill its context with what it already
/// knows; `worker_get` returns everything.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProgressReportOut {
    /// Worker id, e.g. `wrk-2`.
    pub worker_id: String,
    /// Hierarchical name, e.g. `/root/backend`.
    pub name: String,
    /// `active`, `completed`, `failed` or `cancelled`.
    pub lifecycle: String,
    /// Derived disposition (as in `worker_get`): `paused` or a wait means the worker should
    /// finish its turn and stop.
    pub disposition: String,
    /// The no-progress counters after this report (reset by it) and the stall guard.
    pub progress: ProgressOut,
    /// The active pause, if any.
    pub pause: Option<PauseOut>,
    /// The worker pauses as soon as its running turn ends.
    pub pause_after_turn: bool,
    /// Messages in the worker's inbox (`worker_get` shows them).
    pub inbox_count: u32,
}

impl FromReply for ProgressReportOut {
    fn from_reply(reply: Reply) -> Result<Self, ErrorOut> {
        match reply {
            Reply::Worker(v) => Ok(ProgressReportOut {
                worker_id: v.worker.id.to_string(),
                name: v.worker.spec.name.clone(),
                lifecycle: v.worker.lifecycle.as_str().to_string(),
                disposition: v.disposition.as_str().to_string(),
                progress: progress_out(&v.worker),
                pause: pause_out(&v.worker),
                pause_after_turn: v.worker.pause_after_turn,
                inbox_count: u32::try_from(v.inbox.len()).unwrap_or(u32::MAX),
            }),
            _ => Err(mismatch("a worker")),
        }
    }
}

/// `worker_list`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkerListOut {
    /// The workers, `/root` first, then in spawn order.
    pub workers: Vec<WorkerOut>,
}

impl FromReply for WorkerListOut {
    fn from_reply(reply: Reply) -> Result<Self, ErrorOut> {
        match reply {
            Reply::Workers(v) => Ok(WorkerListOut { workers: v.iter().map(WorkerOut::from).collect() }),
            _ => Err(mismatch("workers")),
        }
    }
}

/// `worker_continue_now`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ContinueNowOut {
    /// `scheduled`, `queued_after_turn` (the conversation is generating: one resume
    /// follows the turn), `already_pending` (nothing added) or `recovering` (a fresh
    /// conversation is being opened).
    pub outcome: String,
    /// The worker afterwards.
    pub worker: WorkerOut,
}

impl FromReply for ContinueNowOut {
    fn from_reply(reply: Reply) -> Result<Self, ErrorOut> {
        match reply {
            Reply::ContinueNow { outcome, worker } => {
                Ok(ContinueNowOut { outcome: outcome.as_str().to_string(), worker: WorkerOut::from(&*worker) })
            }
            _ => Err(mismatch("a continue-now outcome")),
        }
    }
}

/// `worker_steer`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SteerOut {
    /// The steering merged into an identical pending or already delivered correction.
    pub coalesced: bool,
    /// The lane afterwards.
    pub worker: WorkerOut,
}

impl FromReply for SteerOut {
    fn from_reply(reply: Reply) -> Result<Self, ErrorOut> {
        match reply {
            Reply::Steer { coalesced, worker } => Ok(SteerOut { coalesced, worker: WorkerOut::from(&*worker) }),
            _ => Err(mismatch("a steering result")),
        }
    }
}
