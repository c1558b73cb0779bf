//! The operator channel's messages: actions (`operator.action` / `operator.result`) and
//! read-only queries (`operator.query` / `operator.data`); the pushed `operator.summary`
//! is in `summary.rs`. Actions and queries become the MCP tools' engine operations, with
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
    /// The person's answer (`resolve_human`), reason (`stop_worker`, `stop_run`) or note
    /// (`release_dependency`).
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
    pub dead_man: Option<caller_protocol::DeadManModeArg>,
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
    /// End the worker's wait for another worker (`text`: an optional note); it goes on.
    ReleaseDependency,
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
    pub fn to_request(&self) -> Result<ActionRequest, caller_protocol::ErrorOut> {
        use OperatorAction as A;
        let grants = |action: GrantAction| {
            if self.worker_id.is_some() || self.run_id.is_some() {
                return Err(caller_protocol::ErrorOut::new(
                    caller_protocol::codes::INVALID_ARGUMENT,
                    "the oauth actions take no workerId or runId",
                ));
            }
            Ok(ActionRequest::Grants(action))
        };
        let code = || {
            let typed = self.code.as_deref().ok_or_else(|| {
                caller_protocol::ErrorOut::new(caller_protocol::codes::INVALID_ARGUMENT, "missing field `code`")
            })?;
            OAuthCode::parse(typed)
        };
        match self.action {
            A::OauthApprove => grants(GrantAction::Approve(code()?)),
            A::OauthDeny => grants(GrantAction::Deny(code()?)),
            A::OauthRevoke => {
                let printed = self.grant_id.as_deref().ok_or_else(|| {
                    caller_protocol::ErrorOut::new(caller_protocol::codes::INVALID_ARGUMENT, "missing field `grantId`")
                })?;
                grants(GrantAction::Revoke(GrantId::parse(printed)?))
            }
            _ => self
                .to_operation()
                .map(|op| ActionRequest::Engine(Box::new(op)))
                .map_err(|why| caller_protocol::ErrorOut::new(caller_protocol::codes::INVALID_ARGUMENT, &why)),
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
            A::ReleaseDependency => Operation::WorkerReleaseDependency { worker: worker()?, note: text() },
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
    /// When refused: the engine's typed rejection with its stable code and a message
    /// written for the person (`caller_protocol::refusal`: the control and the command to
    /// use, never an MCP tool), or `INVALID_ARGUMENT`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<caller_protocol::ErrorOut>,
    /// The run the action made or acted on (`run_start`: the new run).
    #[serde(default, skip_serializing_if = "Option::is_none", with = "printed_opt")]
    pub run_id: Option<RunId>,
    /// The worker the action bound (`run_start`: the new `/root`; `worker_attach`).
    #[serde(default, skip_serializing_if = "Option::is_none", with = "printed_opt")]
    pub worker_id: Option<WorkerId>,
}

impl OperatorResultWire {
    /// A refusal.
    pub fn refused(action_id: String, error: caller_protocol::ErrorOut) -> OperatorResultWire {
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
    pub fn to_query(&self) -> Result<Query, caller_protocol::ErrorOut> {
        if self.query == OperatorQueryName::OauthPending {
            if self.worker_id.is_some() || self.after_sequence.is_some() || self.limit.is_some() {
                return Err(caller_protocol::ErrorOut::new(
                    caller_protocol::codes::INVALID_ARGUMENT,
                    "oauth_pending takes no workerId, afterSequence or limit",
                ));
            }
            return Ok(Query::OauthPending);
        }
        let printed = self.worker_id.as_deref().ok_or_else(|| {
            caller_protocol::ErrorOut::new(caller_protocol::codes::INVALID_ARGUMENT, "missing field `workerId`")
        })?;
        let worker = caller_protocol::parse_id::<WorkerId>("workerId", printed)?;
        match self.query {
            OperatorQueryName::WorkerAttempts => Ok(Query::WorkerAttempts {
                worker,
                after_sequence: self.after_sequence.unwrap_or(0),
                limit: self.limit.unwrap_or(caller_protocol::PAGE_LIMIT_DEFAULT),
            }),
            OperatorQueryName::WorkerEvents => {
                if self.after_sequence.is_some() || self.limit.is_some() {
                    return Err(caller_protocol::ErrorOut::new(
                        caller_protocol::codes::INVALID_ARGUMENT,
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
    pub error: Option<caller_protocol::ErrorOut>,
}

impl OperatorDataWire {
    /// The answer to `query_id`, or its refusal.
    pub fn new(query_id: String, answer: Result<OperatorData, caller_protocol::ErrorOut>) -> OperatorDataWire {
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
    Attempts(caller_protocol::AttemptsOut),
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
    pub events: Vec<caller_protocol::EventOut>,
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
