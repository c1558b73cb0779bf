//! Tool arguments: one struct per tool, camelCase as in the spec, unknown fields refused.
//!
//! Each converts into an engine [`Operation`] with [`ToOperation`]. Ids are parsed here
//! (a malformed one is reported under its field name); text sizes and every domain rule
//! are checked by the engine, which names the field as well.
//! The worker tools' arguments are in `worker_args.rs`; this file holds the conversion
//! trait, the id parsing both share, and the run, message and event tools' arguments.

use crate::error::ErrorOut;
use crate::kind::{ExecutorKindArg, WorkspaceArgs};
use crate::policy::PolicyPatchArgs;
use engine::Operation;
use engine::ids::{Cursor, IdParseError, RunId, WorkerId};
use engine::model::Assignment;
use schemars::JsonSchema;
use serde::Deserialize;
use std::str::FromStr;

/// Turns decoded tool arguments into the engine operation they ask for.
pub trait ToOperation {
    /// The operation, or an `INVALID_ARGUMENT` error naming the field that does not parse.
    fn to_operation(self) -> Result<Operation, ErrorOut>;
}

/// Parses an id field, e.g. `workerId` = `wrk-3`.
pub fn parse_id<T: FromStr<Err = IdParseError>>(field: &str, value: &str) -> Result<T, ErrorOut> {
    value.parse().map_err(|e: IdParseError| ErrorOut::invalid(field, &e.to_string()))
}

fn parse_opt<T: FromStr<Err = IdParseError>>(field: &str, value: Option<&str>) -> Result<Option<T>, ErrorOut> {
    value.map(|v| parse_id(field, v)).transpose()
}

/// Default page size of list-like reads.
pub const PAGE_LIMIT_DEFAULT: u32 = 100;

pub(crate) fn page_limit_default() -> u32 {
    PAGE_LIMIT_DEFAULT
}

pub(crate) fn yes() -> bool {
    true
}

/// What a worker must achieve.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AssignmentArgs {
    /// What to build or do (required, up to 32 KiB).
    pub objective: String,
    /// What the worker owns and must not step outside of.
    #[serde(default)]
    pub scope: String,
    /// The checks that define "done" (at most 64).
    #[serde(default)]
    pub acceptance_criteria: Vec<String>,
}

impl From<AssignmentArgs> for Assignment {
    fn from(a: AssignmentArgs) -> Assignment {
        Assignment { objective: a.objective, scope: a.scope, acceptance_criteria: a.acceptance_criteria }
    }
}

/// `run_create`.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RunCreateArgs {
    /// Concise main task name (one line, up to 200 bytes); lanes are labelled `<taskName> Lane A/B/...`.
    pub task_name: String,
    /// Owner-readable name of the root conversation (one line).
    pub root_conversation_name: String,
    /// Run objective and plan, free text (up to 32 KiB).
    #[serde(default)]
    pub context: String,
    /// Default continuation policy for the run's workers (fields not given keep the engine default: manual).
    #[serde(default)]
    pub default_policy: Option<PolicyPatchArgs>,
    /// Which executor runs `/root`: `chatgpt` (default; a ChatGPT conversation in the
    /// browser), `codex` (Codex CLI) or `claude` (Claude Code).
    #[serde(default)]
    pub executor: Option<ExecutorKindArg>,
    /// Where a `codex` or `claude` root works (required for them, refused for `chatgpt`);
    /// its CLI lanes inherit the directory.
    #[serde(default)]
    pub workspace: Option<WorkspaceArgs>,
}

impl ToOperation for RunCreateArgs {
    fn to_operation(self) -> Result<Operation, ErrorOut> {
        Ok(Operation::RunCreate {
            task_name: self.task_name,
            root_conversation_name: self.root_conversation_name,
            context: self.context,
            default_policy: self.default_policy.map(Into::into),
            root_executor: Box::new(engine::op::RootExecutor {
                executor: self.executor.map(Into::into),
                workspace: self.workspace.map(Into::into),
            }),
        })
    }
}

/// A tool whose only argument is a run id.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RunIdArgs {
    /// The run, e.g. `run-1`.
    pub run_id: String,
}

impl RunIdArgs {
    /// The parsed run id.
    pub fn run(&self) -> Result<RunId, ErrorOut> {
        parse_id("runId", &self.run_id)
    }
}

/// `run_list`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RunListArgs {
    /// Also list completed, failed and cancelled runs (default false).
    #[serde(default)]
    pub include_terminal: bool,
}

impl ToOperation for RunListArgs {
    fn to_operation(self) -> Result<Operation, ErrorOut> {
        Ok(Operation::RunList { include_terminal: self.include_terminal })
    }
}

/// `run_update_context`.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RunUpdateContextArgs {
    /// The run, e.g. `run-1`.
    pub run_id: String,
    /// New concise task name.
    #[serde(default)]
    pub task_name: Option<String>,
    /// New root conversation name.
    #[serde(default)]
    pub root_conversation_name: Option<String>,
    /// New run context (replaces the old one).
    #[serde(default)]
    pub context: Option<String>,
}

impl ToOperation for RunUpdateContextArgs {
    fn to_operation(self) -> Result<Operation, ErrorOut> {
        Ok(Operation::RunUpdateContext {
            run: parse_id("runId", &self.run_id)?,
            task_name: self.task_name,
            root_conversation_name: self.root_conversation_name,
            context: self.context,
        })
    }
}

/// `run_cancel`.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RunCancelArgs {
    /// The run, e.g. `run-1`.
    pub run_id: String,
    /// Why the run is stopped (recorded on every cancelled worker).
    pub reason: String,
}

impl ToOperation for RunCancelArgs {
    fn to_operation(self) -> Result<Operation, ErrorOut> {
        Ok(Operation::RunCancel { run: parse_id("runId", &self.run_id)?, reason: self.reason })
    }
}

/// `run_set_default_continuation`.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RunSetDefaultContinuationArgs {
    /// The run, e.g. `run-1`.
    pub run_id: String,
    /// Fields of the run's default policy to change.
    pub policy: PolicyPatchArgs,
}

impl ToOperation for RunSetDefaultContinuationArgs {
    fn to_operation(self) -> Result<Operation, ErrorOut> {
        Ok(Operation::RunSetDefaultContinuation { run: parse_id("runId", &self.run_id)?, patch: self.policy.into() })
    }
}

/// `run_pause_all` and `run_resume_all` take only the run.
pub type RunPauseAllArgs = RunIdArgs;
/// See [`RunPauseAllArgs`].
pub type RunResumeAllArgs = RunIdArgs;
/// `run_get` takes only the run.
pub type RunGetArgs = RunIdArgs;

/// Which run operation a [`RunIdArgs`] stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunVerb {
    /// `run_get`.
    Get,
    /// `run_pause_all`.
    PauseAll,
    /// `run_resume_all`.
    ResumeAll,
}

impl RunIdArgs {
    /// The operation for `verb`.
    pub fn operation(&self, verb: RunVerb) -> Result<Operation, ErrorOut> {
        let run = self.run()?;
        Ok(match verb {
            RunVerb::Get => Operation::RunGet { run },
            RunVerb::PauseAll => Operation::RunPauseAll { run },
            RunVerb::ResumeAll => Operation::RunResumeAll { run },
        })
    }
}

/// `message_send`.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MessageSendArgs {
    /// Sending worker, e.g. `wrk-3`; omit when the operator sends.
    #[serde(default)]
    pub from: Option<String>,
    /// Recipient worker, e.g. `wrk-1` for `/root`.
    pub to: String,
    /// The message (up to 16 KiB); it wakes the recipient.
    pub body: String,
}

impl ToOperation for MessageSendArgs {
    fn to_operation(self) -> Result<Operation, ErrorOut> {
        Ok(Operation::MessageSend {
            from: parse_opt("from", self.from.as_deref())?,
            to: parse_id("to", &self.to)?,
            body: self.body,
        })
    }
}

/// `events_wait`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EventsWaitArgs {
    /// Return events after this cursor: 0 for the beginning, otherwise the `nextCursor` of the previous page.
    #[serde(default)]
    pub cursor: u64,
    /// Only this run's events.
    #[serde(default)]
    pub run_id: Option<String>,
    /// Only this worker's events.
    #[serde(default)]
    pub worker_id: Option<String>,
    /// How long to wait for a matching event when there is none yet, in ms (default 0:
    /// answer at once; the server caps it).
    #[serde(default)]
    pub timeout_ms: u64,
    /// At most this many events (1-1000, default 100).
    #[serde(default = "page_limit_default")]
    pub limit: u32,
}

impl EventsWaitArgs {
    /// The engine read for one page after `cursor`.
    pub fn page(&self, cursor: Cursor) -> Result<Operation, ErrorOut> {
        Ok(Operation::EventsAfter {
            cursor,
            run: parse_opt::<RunId>("runId", self.run_id.as_deref())?,
            worker: parse_opt::<WorkerId>("workerId", self.worker_id.as_deref())?,
            limit: self.limit as usize,
        })
    }
}

impl ToOperation for EventsWaitArgs {
    fn to_operation(self) -> Result<Operation, ErrorOut> {
        self.page(Cursor(self.cursor))
    }
}
