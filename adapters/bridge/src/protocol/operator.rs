//! The operator channel's messages: actions (`operator.action` / `operator.result`),
//! read-only queries (`operator.query` / `operator.data`) and the pushed
//! `operator.summary`. Actions and queries become the MCP tools' engine operations, with
//! the same validation and typed rejections; data keeps the MCP tools' JSON shapes. The
//! OAuth approval actions and query go to the daemon's authorization server instead
//! (`oauth.rs`).

use super::oauth::{GrantAction, GrantId, OAuthCode, OAuthPendingOut};
use engine::ids::{RunId, WorkerId};
use engine::op::Operation;
use engine::policy::{Mode, PolicyPatch};
use serde::{Deserialize, Serialize};

/// `operator.action`: a person acted in the extension's popup, overlay or dashboard. It
/// becomes the same engine operation the MCP tool of that name performs, with the same
/// validation and typed rejections.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OperatorActionWire {
    /// Chosen by the executor; echoed in the `operator.result` (at most 64 bytes).
    pub action_id: String,
    /// What to do.
    pub action: OperatorAction,
    /// The worker acted on (worker actions).
    #[serde(default, skip_serializing_if = "Option::is_none", with = "printed_opt")]
    pub worker_id: Option<WorkerId>,
    /// The run acted on (run actions, and auto resume for a whole run).
    #[serde(default, skip_serializing_if = "Option::is_none", with = "printed_opt")]
    pub run_id: Option<RunId>,
    /// The person's answer (`resolve_human`) or reason (`stop_worker`, `stop_run`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// The waiting request's short code (`oauth_approve`, `oauth_deny`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    /// The grant to revoke (`oauth_revoke`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grant_id: Option<String>,
    /// The new run's task name (`run_start`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_name: Option<String>,
    /// The new run's root conversation name (`run_start`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub root_conversation_name: Option<String>,
    /// The new run's plan (`run_start`, optional).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<String>,
    /// The new run's Auto Resume default (`run_start`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auto_resume: Option<bool>,
    /// What the new run's dead-man layer does when it stops moving (`run_start`; the
    /// engine's default, `off`, when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dead_man: Option<wire::DeadManModeArg>,
    /// The conversation of the tab the person acted in (`worker_attach`; `run_start`
    /// without it starts `/root` in a new chat).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conversation_url: Option<String>,
    /// The CLI approval request answered (`approval_answer`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval_id: Option<String>,
    /// `approve` or `decline` (`approval_answer`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision: Option<super::ApprovalDecisionWire>,
}

/// The operator actions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OperatorAction {
    /// Automatic resume on (a worker override with `workerId`, else the run default).
    AutoResumeOn,
    /// Automatic resume off (likewise).
    AutoResumeOff,
    /// Pause the worker now.
    PauseNow,
    /// Pause the worker (or with `runId`, every worker of the run) after the current turn.
    PauseAfterTurn,
    /// Clear the worker's pause (or with `runId`, every operator pause of the run).
    Resume,
    /// Exactly one manual attempt now.
    ContinueNow,
    /// One attempt now even though the worker is paused (e.g. after a stall warning).
    ContinueAnyway,
    /// Answer the worker's "needs you" request with `text`.
    ResolveHuman,
    /// Stop the worker (destructive).
    StopWorker,
    /// Stop the run: every unfinished worker is cancelled.
    StopRun,
    /// "Start a run here": a run whose `/root` is bound to the person's tab at once.
    RunStart,
    /// "Attach this conversation to…": bind the person's tab to an existing worker.
    WorkerAttach,
    /// Answer the CLI approval request `approvalId` holding the worker with `decision`.
    ApprovalAnswer,
    /// Approve the waiting OAuth authorization request showing `code`.
    OauthApprove,
    /// Deny it.
    OauthDeny,
    /// Revoke the OAuth grant `grantId`.
    OauthRevoke,
}

/// What an operator action asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ActionRequest {
    /// An engine operation (the MCP tool of the same meaning).
    Engine(Box<Operation>),
    /// A decision of the daemon's authorization server.
    Grants(GrantAction),
}

impl OperatorActionWire {
    /// The action with no fields set (a test or a client fills in what it needs).
    pub fn new(action_id: impl Into<String>, action: OperatorAction) -> OperatorActionWire {
        OperatorActionWire {
            action_id: action_id.into(),
            action,
            worker_id: None,
            run_id: None,
            text: None,
            code: None,
            grant_id: None,
            task_name: None,
            root_conversation_name: None,
            context: None,
            auto_resume: None,
            dead_man: None,
            conversation_url: None,
            approval_id: None,
            decision: None,
        }
    }

    /// What the action asks for, or `INVALID_ARGUMENT` when the fields do not fit it.
    pub fn to_request(&self) -> Result<ActionRequest, wire::ErrorOut> {
        use OperatorAction as A;
        let grants = |action: GrantAction| {
            if self.worker_id.is_some() || self.run_id.is_some() {
                return Err(wire::ErrorOut::new(
                    wire::codes::INVALID_ARGUMENT,
                    "the oauth actions take no workerId or runId",
                ));
            }
            Ok(ActionRequest::Grants(action))
        };
        let code = || {
            let typed = self
                .code
                .as_deref()
                .ok_or_else(|| wire::ErrorOut::new(wire::codes::INVALID_ARGUMENT, "missing field `code`"))?;
            OAuthCode::parse(typed)
        };
        match self.action {
            A::OauthApprove => grants(GrantAction::Approve(code()?)),
            A::OauthDeny => grants(GrantAction::Deny(code()?)),
            A::OauthRevoke => {
                let printed = self
                    .grant_id
                    .as_deref()
                    .ok_or_else(|| wire::ErrorOut::new(wire::codes::INVALID_ARGUMENT, "missing field `grantId`"))?;
                grants(GrantAction::Revoke(GrantId::parse(printed)?))
            }
            _ => self
                .to_operation()
                .map(|op| ActionRequest::Engine(Box::new(op)))
                .map_err(|why| wire::ErrorOut::new(wire::codes::INVALID_ARGUMENT, &why)),
        }
    }

    /// The engine operation, or why the fields do not fit the action.
    fn to_operation(&self) -> Result<Operation, String> {
        use OperatorAction as A;
        let worker = || self.worker_id.ok_or_else(|| format!("workerId is required for {:?}", self.action));
        let run = || self.run_id.ok_or_else(|| format!("runId is required for {:?}", self.action));
        let text = || self.text.clone().unwrap_or_default();
        let auto = |mode| -> Result<Operation, String> {
            let patch = PolicyPatch { mode: Some(mode), ..PolicyPatch::default() };
            Ok(match (self.worker_id, self.run_id) {
                (Some(worker), _) => Operation::WorkerContinuationSet { worker, patch, inherit: false },
                (None, Some(run)) => Operation::RunSetDefaultContinuation { run, patch },
                (None, None) => return Err("workerId or runId is required".into()),
            })
        };
        Ok(match self.action {
            A::AutoResumeOn => auto(Mode::Auto)?,
            A::AutoResumeOff => auto(Mode::Manual)?,
            A::PauseNow => Operation::WorkerPause { worker: worker()?, after_current_turn: false },
            A::PauseAfterTurn => match self.worker_id {
                Some(worker) => Operation::WorkerPause { worker, after_current_turn: true },
                None => Operation::RunPauseAll { run: run()? },
            },
            A::Resume => match self.worker_id {
                Some(worker) => Operation::WorkerResume { worker },
                None => Operation::RunResumeAll { run: run()? },
            },
            A::ContinueNow => {
                Operation::WorkerContinueNow { worker: worker()?, override_wait: false, clear_pause: false }
            }
            A::ContinueAnyway => {
                Operation::WorkerContinueNow { worker: worker()?, override_wait: false, clear_pause: true }
            }
            A::ResolveHuman => Operation::WorkerResolveHuman { worker: worker()?, answer: text() },
            A::StopWorker => Operation::WorkerInterrupt { worker: worker()?, reason: text() },
            A::StopRun => Operation::RunCancel { run: run()?, reason: text() },
            A::RunStart => {
                if self.worker_id.is_some() || self.run_id.is_some() {
                    return Err("run_start takes no workerId or runId".into());
                }
                let required = |field: &Option<String>, name: &str| {
                    field.clone().ok_or_else(|| format!("{name} is required for RunStart"))
                };
                let auto_resume = self.auto_resume.ok_or("autoResume is required for RunStart")?;
                Operation::RunStart {
                    task_name: required(&self.task_name, "taskName")?,
                    root_conversation_name: required(&self.root_conversation_name, "rootConversationName")?,
                    context: self.context.clone().unwrap_or_default(),
                    default_policy: Some(PolicyPatch {
                        mode: Some(if auto_resume { Mode::Auto } else { Mode::Manual }),
                        dead_man: self.dead_man.map(Into::into),
                        ..PolicyPatch::default()
                    }),
                    root_conversation: self.conversation_url.clone(),
                    root_executor: Default::default(),
                }
            }
            A::WorkerAttach => Operation::WorkerAttach {
                worker: worker()?,
                conversation: self.conversation_url.clone().ok_or("conversationUrl is required for WorkerAttach")?,
            },
            A::ApprovalAnswer => Operation::WorkerApprovalAnswer {
                worker: worker()?,
                approval: self.approval_id.clone().ok_or("approvalId is required for ApprovalAnswer")?,
                decision: self.decision.ok_or("decision is required for ApprovalAnswer")?.into(),
            },
            A::OauthApprove | A::OauthDeny | A::OauthRevoke => {
                return Err(format!("{:?} is not an engine operation", self.action));
            }
        })
    }
}

/// `operator.result`: how an `operator.action` ended.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OperatorResultWire {
    /// The action's id.
    pub action_id: String,
    /// Done (durably).
    pub ok: bool,
    /// When refused: the engine's typed rejection (`{code, message}`, as the MCP tools
    /// report it), or `INVALID_ARGUMENT`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<wire::ErrorOut>,
    /// The run the action made or acted on (`run_start`: the new run).
    #[serde(default, skip_serializing_if = "Option::is_none", with = "printed_opt")]
    pub run_id: Option<RunId>,
    /// The worker the action bound (`run_start`: the new `/root`; `worker_attach`).
    #[serde(default, skip_serializing_if = "Option::is_none", with = "printed_opt")]
    pub worker_id: Option<WorkerId>,
}

impl OperatorResultWire {
    /// A refusal.
    pub fn refused(action_id: String, error: wire::ErrorOut) -> OperatorResultWire {
        OperatorResultWire { action_id, ok: false, error: Some(error), run_id: None, worker_id: None }
    }

    /// Done, naming nothing.
    pub fn done(action_id: String) -> OperatorResultWire {
        OperatorResultWire { action_id, ok: true, error: None, run_id: None, worker_id: None }
    }
}

/// `operator.query`: a read-only question from the extension's dashboard, answered with
/// `operator.data` through the same engine reads and JSON shapes as the MCP tools.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OperatorQueryWire {
    /// Chosen by the executor; echoed in the `operator.data` (at most 64 bytes).
    pub query_id: String,
    /// What to read.
    pub query: OperatorQueryName,
    /// The worker asked about, printed (`wrk-7`); parsed when answering, so that a bad
    /// one is refused with `INVALID_ARGUMENT` like the MCP tools refuse it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worker_id: Option<String>,
    /// `worker_attempts` only: attempts with a larger per-worker sequence (default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after_sequence: Option<u32>,
    /// `worker_attempts` only: at most this many (1-1000, default 100).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<u32>,
}

/// The operator queries.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OperatorQueryName {
    /// The worker's attempts, as the MCP tool `worker_attempts` returns them.
    WorkerAttempts,
    /// The worker's newest continuity events, as `events_wait` returns events.
    WorkerEvents,
    /// The OAuth authorization requests waiting for the operator, and the live grants.
    OauthPending,
}

/// A validated operator query.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Query {
    /// `worker_attempts`: the engine read of the MCP tool of that name.
    WorkerAttempts {
        /// Whose attempts.
        worker: WorkerId,
        /// Only attempts with a larger sequence.
        after_sequence: u32,
        /// At most this many (the engine checks the range).
        limit: u32,
    },
    /// `worker_events`: the worker's newest continuity events.
    WorkerEvents {
        /// Whose events.
        worker: WorkerId,
    },
    /// `oauth_pending`: the authorization server's waiting requests and grants.
    OauthPending,
}

impl OperatorQueryWire {
    /// The query `query` about `worker`, with the defaults (first page of 100 attempts).
    pub fn about(query_id: &str, query: OperatorQueryName, worker: WorkerId) -> OperatorQueryWire {
        OperatorQueryWire {
            query_id: query_id.to_string(),
            query,
            worker_id: Some(worker.to_string()),
            after_sequence: None,
            limit: None,
        }
    }

    /// The query, or `INVALID_ARGUMENT` naming the field that does not fit (the MCP
    /// tools' own wording for ids).
    pub fn to_query(&self) -> Result<Query, wire::ErrorOut> {
        if self.query == OperatorQueryName::OauthPending {
            if self.worker_id.is_some() || self.after_sequence.is_some() || self.limit.is_some() {
                return Err(wire::ErrorOut::new(
                    wire::codes::INVALID_ARGUMENT,
                    "oauth_pending takes no workerId, afterSequence or limit",
                ));
            }
            return Ok(Query::OauthPending);
        }
        let printed = self
            .worker_id
            .as_deref()
            .ok_or_else(|| wire::ErrorOut::new(wire::codes::INVALID_ARGUMENT, "missing field `workerId`"))?;
        let worker = wire::parse_id::<WorkerId>("workerId", printed)?;
        match self.query {
            OperatorQueryName::WorkerAttempts => Ok(Query::WorkerAttempts {
                worker,
                after_sequence: self.after_sequence.unwrap_or(0),
                limit: self.limit.unwrap_or(wire::PAGE_LIMIT_DEFAULT),
            }),
            OperatorQueryName::WorkerEvents => {
                if self.after_sequence.is_some() || self.limit.is_some() {
                    return Err(wire::ErrorOut::new(
                        wire::codes::INVALID_ARGUMENT,
                        "afterSequence and limit apply to worker_attempts only",
                    ));
                }
                Ok(Query::WorkerEvents { worker })
            }
            OperatorQueryName::OauthPending => Ok(Query::OauthPending),
        }
    }
}

/// `operator.data`: the answer to an `operator.query`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OperatorDataWire {
    /// The query's id.
    pub query_id: String,
    /// Answered (`data` holds the answer).
    pub ok: bool,
    /// The answer, when `ok`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<OperatorData>,
    /// When refused: the engine's typed rejection (`UNKNOWN_WORKER`...), `INVALID_ARGUMENT`
    /// or `ENGINE_UNAVAILABLE`, as the MCP tools report them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<wire::ErrorOut>,
}

impl OperatorDataWire {
    /// The answer to `query_id`, or its refusal.
    pub fn new(query_id: String, answer: Result<OperatorData, wire::ErrorOut>) -> OperatorDataWire {
        match answer {
            Ok(data) => OperatorDataWire { query_id, ok: true, data: Some(data), error: None },
            Err(error) => OperatorDataWire { query_id, ok: false, data: None, error: Some(error) },
        }
    }
}

/// What an `operator.data` holds, by query.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum OperatorData {
    /// `worker_attempts`: exactly the MCP tool's output, `{attempts: [...]}`.
    Attempts(wire::AttemptsOut),
    /// `worker_events`: `{events: [...]}`, each as `events_wait` returns it.
    Events(WorkerEventsOut),
    /// `oauth_pending`: `{enabled, pending: [...], grants: [...]}`.
    OAuth(OAuthPendingOut),
}

/// `worker_events`: the worker's newest continuity events, oldest first.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WorkerEventsOut {
    /// At most [`crate::continuity::WORKER_EVENTS_MAX`], in cursor order.
    pub events: Vec<wire::EventOut>,
}

/// `operator.summary`: every unfinished run with its workers, compact enough to render
/// the popup without further calls (and without raw ids in the primary UI).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OperatorSummaryWire {
    /// Unfinished runs, oldest first.
    pub runs: Vec<RunSummary>,
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
    pub stopped_moving: Option<wire::StoppedMovingOut>,
    /// Its workers, `/root` first.
    pub workers: Vec<WorkerSummary>,
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
    pub workspace: Option<wire::WorkspaceOut>,
    /// Its last reported state, if bound.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conversation_state: Option<String>,
    /// With `conversation_state = error`: which error (`host_ui_changed` makes the surfaces
    /// offer "Copy page shape").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conversation_error_kind: Option<String>,
    /// Its newest continuity events, oldest first (at most
    /// [`crate::continuity::SUMMARY_EVENTS_MAX`]).
    #[serde(default)]
    pub recent_events: Vec<RecentEventWire>,
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
    pub approval: Option<wire::ApprovalOut>,
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

impl From<&wire::WorkerOut> for WorkerSummary {
    fn from(w: &wire::WorkerOut) -> WorkerSummary {
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
            stall: w.progress.stall.clone(),
            conversation_url: w.binding.as_ref().map(|b| b.conversation_url.clone()),
            executor_kind: (w.executor != engine::ExecutorKind::Chatgpt.as_str()).then(|| w.executor.clone()),
            workspace: w.workspace.clone(),
            conversation_state: w.binding.as_ref().map(|b| b.state.clone()),
            conversation_error_kind: w.binding.as_ref().and_then(|b| b.error_kind.clone()),
            recent_events: Vec::new(),
        }
    }
}

impl RunSummary {
    /// The summary of `run` with `workers`.
    pub fn new(run: &wire::RunOut, workers: &[wire::WorkerOut]) -> RunSummary {
        RunSummary {
            run_id: run.run_id.clone(),
            task_name: run.task_name.clone(),
            status: run.status.clone(),
            auto_resume: run.default_policy.as_ref().is_some_and(|p| p.mode == "auto"),
            stopped_moving: run.stopped_moving.clone(),
            workers: workers.iter().map(WorkerSummary::from).collect(),
        }
    }
}

/// Serde for optional ids in their printed form.
mod printed_opt {
    use serde::{Deserialize, Deserializer, Serializer};
    use std::fmt::Display;
    use std::str::FromStr;

    pub fn serialize<T: Display, S: Serializer>(id: &Option<T>, s: S) -> Result<S::Ok, S::Error> {
        match id {
            Some(id) => s.collect_str(id),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, T: FromStr, D: Deserializer<'de>>(d: D) -> Result<Option<T>, D::Error>
    where
        T::Err: Display,
    {
        let text = Option::<String>::deserialize(d)?;
        text.map(|t| t.parse().map_err(serde::de::Error::custom)).transpose()
    }
}
