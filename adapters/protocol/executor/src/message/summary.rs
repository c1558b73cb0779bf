//! The operator channel's `operator.summary`: every unfinished run with its workers and
//! their newest continuity sentences, and the most recently finished runs (the history),
//! pushed to an operator executor when they change, built from the MCP tools' views
//! ([`caller_protocol::RunOut`], [`caller_protocol::WorkerOut`]).

use serde::{Deserialize, Serialize};

/// `operator.summary`: every unfinished run with its workers, compact enough to render
/// the popup without further calls (and without raw ids in the primary UI).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OperatorSummaryWire {
    /// Unfinished runs, oldest first.
    pub runs: Vec<RunSummary>,
    /// Finished (completed, failed or cancelled) runs, the most recently ended first, as
    /// many as the daemon's history keeps (`run_history`): the dashboard's "Finished".
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub finished: Vec<RunSummary>,
}

/// One run in an `operator.summary`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunSummary {
    /// Run id (for actions).
    pub run_id: String,
    /// Concise main task name.
    pub task_name: String,
    /// `active`, `completed`, `failed` or `cancelled`.
    pub status: String,
    /// The run default's automatic resume (false when the run has no default: manual).
    pub auto_resume: bool,
    /// The run stopped moving while nobody looked (the dead-man layer fired and nothing
    /// moved it since): a run-wide Needs you, with its sentence in `text`; absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped_moving: Option<caller_protocol::StoppedMovingOut>,
    /// Its workers, `/root` first.
    pub workers: Vec<WorkerSummary>,
    /// When it started, ms since the Unix epoch (0 in a summary from before history).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub created_at_ms: u64,
    /// When it ended, if it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended_at_ms: Option<u64>,
    /// How a finished run ended, in its root's words (the handoff, or the failure or stop
    /// reason).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<String>,
}

/// One worker in an `operator.summary`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WorkerSummary {
    /// Worker id (for actions).
    pub worker_id: String,
    /// Hierarchical name, e.g. `/root/backend`.
    pub name: String,
    /// Owner-readable name.
    pub display_name: String,
    /// `running`, `awaiting_execution`, `awaiting_dependency`, `awaiting_human`, `paused`,
    /// `completed`, `failed` or `cancelled`.
    pub disposition: String,
    /// Attempts so far (the current attempt's number).
    pub attempts: u32,
    /// Automatic resumes delivered so far.
    pub auto_resumes: u32,
    /// When durable progress was last reported, ms since the Unix epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_progress_at_ms: Option<u64>,
    /// The effective policy resumes automatically.
    pub auto_resume: bool,
    /// Where the policy comes from: `run_default`, `worker_override` or `engine_default`.
    pub policy_source: String,
    /// It pauses as soon as its running turn ends.
    pub pause_after_turn: bool,
    /// With disposition `paused`: why (`operator`, `stall`, `host_ui_changed`,
    /// `ambiguous_submission`, `delivery_failing`, `usage_limit`, `account_check`,
    /// `app_unavailable`, `app_not_selected`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pause_reason: Option<String>,
    /// What a person should do about the pause, when there is something specific.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pause_detail: Option<String>,
    /// What holds it without a pause (it lifts by itself), if anything.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hold: Option<HoldWire>,
    /// The open "needs you" question, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub needs_you: Option<String>,
    /// With disposition `awaiting_dependency` on another worker: that worker's id (so a
    /// Stop on it can say who waits; absent for a wait on something outside the run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waits_for: Option<String>,
    /// The stall guard: `clear`, `warned` or `paused`.
    pub stall: String,
    /// The managed conversation's URL, if any (for a CLI worker its session,
    /// `codex:thread/<id>` or `claude:session/<id>`: shown, never opened as a link).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conversation_url: Option<String>,
    /// A CLI worker's executor kind, `codex` or `claude` (absent: `chatgpt`, so a ChatGPT
    /// worker's summary is what it was before kinds existed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub executor_kind: Option<String>,
    /// A CLI worker's directory and branch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace: Option<caller_protocol::WorkspaceOut>,
    /// Its last reported state, if bound.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conversation_state: Option<String>,
    /// With `conversation_state = error`: which error (`host_ui_changed` makes the surfaces
    /// offer "Copy page shape").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conversation_error_kind: Option<String>,
    /// Who carries it while it is unfinished (its executor by id and kind, connected or
    /// not, since when, its CLI retrying): a worker whose executor is `offline` is never
    /// `running`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub liveness: Option<caller_protocol::LivenessOut>,
    /// The line a person reads about it ([`caller_protocol::LivenessOut::line`]), e.g.
    /// "executor offline since 03:12 UTC (Codex CLI cli-host): nothing runs it until it is
    /// back" or "CLI retrying: stream disconnected (since 03:12 UTC; paused after 10 min)".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub liveness_text: Option<String>,
    /// Its newest continuity events, oldest first (at most
    /// [`crate::continuity::SUMMARY_EVENTS_MAX`]).
    #[serde(default)]
    pub recent_events: Vec<RecentEventWire>,
    /// The choices offered with the open "needs you" question, if any.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub needs_you_choices: Vec<String>,
    /// The workers of its run that wait for it (ids): stopping it ends their waits, and
    /// Stop's confirmation says so.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub waited_on_by: Vec<String>,
    /// A finished worker's completion summary (its handoff) or failure or stop reason.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<String>,
    /// When it was spawned, ms since the Unix epoch (0 in a summary from before history).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub created_at_ms: u64,
    /// When it finished, if it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended_at_ms: Option<u64>,
}

/// A worker's hold in an `operator.summary`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HoldWire {
    /// `usage_limit`, `rate_limited` (the whole browser account waits) or
    /// `blocked_by_dialog` (a dialog covers this conversation) or `awaiting_approval` (a
    /// tool-approval card waits for a person; `detail` is the app's name).
    pub reason: String,
    /// When an account hold lifts, ms since the Unix epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until_ms: Option<u64>,
    /// The page's words (a dialog's heading, a limit notice): untrusted text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// With `awaiting_approval` from a CLI worker: the request the dashboard's Approve and
    /// Decline answer (`approval_answer`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval: Option<caller_protocol::ApprovalOut>,
}

/// One recent continuity event of a worker, as a sentence for people.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RecentEventWire {
    /// When it happened, ms since the Unix epoch.
    pub at_ms: u64,
    /// The event's stable name, as `events_wait` reports it (`execution.scheduled`...).
    pub kind: String,
    /// A short sentence, e.g. "Auto resume sent (attempt 4)".
    pub text: String,
}

impl From<&caller_protocol::WorkerOut> for WorkerSummary {
    fn from(w: &caller_protocol::WorkerOut) -> WorkerSummary {
        WorkerSummary {
            worker_id: w.worker_id.clone(),
            name: w.name.clone(),
            display_name: w.display_name.clone(),
            disposition: w.disposition.clone(),
            attempts: w.attempts,
            auto_resumes: w.auto_resumes,
            last_progress_at_ms: w.progress.last_at_ms,
            auto_resume: w.policy.mode == "auto",
            policy_source: w.policy_source.clone(),
            pause_after_turn: w.pause_after_turn,
            pause_reason: w.pause.as_ref().map(|p| p.reason.clone()),
            pause_detail: w.pause.as_ref().and_then(|p| p.detail.clone()),
            hold: w.hold.as_ref().map(|h| HoldWire {
                reason: h.reason.clone(),
                until_ms: h.until_ms,
                detail: h.detail.clone(),
                approval: h.approval.clone(),
            }),
            needs_you: w.human_wait.as_ref().map(|h| h.question.clone()),
            waits_for: w.dependency_wait.as_ref().and_then(|d| d.worker_id.clone()),
            stall: w.progress.stall.clone(),
            conversation_url: w.binding.as_ref().map(|b| b.conversation_url.clone()),
            executor_kind: (w.executor != engine::ExecutorKind::Chatgpt.as_str()).then(|| w.executor.clone()),
            workspace: w.workspace.clone(),
            conversation_state: w.binding.as_ref().map(|b| b.state.clone()),
            conversation_error_kind: w.binding.as_ref().and_then(|b| b.error_kind.clone()),
            liveness: w.liveness.clone(),
            liveness_text: w.liveness.as_ref().map(caller_protocol::LivenessOut::line),
            recent_events: Vec::new(),
            needs_you_choices: w.human_wait.as_ref().map(|h| h.choices.clone()).unwrap_or_default(),
            waited_on_by: w.waited_on_by.clone(),
            outcome: w.outcome.clone(),
            created_at_ms: w.created_at_ms,
            ended_at_ms: w.ended_at_ms,
        }
    }
}

impl RunSummary {
    /// The summary of `run` with `workers`.
    pub fn new(run: &caller_protocol::RunOut, workers: &[caller_protocol::WorkerOut]) -> RunSummary {
        RunSummary {
            run_id: run.run_id.clone(),
            task_name: run.task_name.clone(),
            status: run.status.clone(),
            auto_resume: run.default_policy.as_ref().is_some_and(|p| p.mode == "auto"),
            stopped_moving: run.stopped_moving.clone(),
            workers: workers.iter().map(WorkerSummary::from).collect(),
            created_at_ms: run.created_at_ms,
            ended_at_ms: run.ended_at_ms,
            outcome: run.outcome.clone(),
        }
    }
}

/// A time left out of the wire: a summary built before history carried none.
fn is_zero(ms: &u64) -> bool {
    *ms == 0
}
