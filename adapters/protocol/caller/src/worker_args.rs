//! The worker tools' arguments (`worker_*`): spawn, attach, the one-id verbs, progress and
//! completion, human and dependency waits, pause, continue-now, continuation policy,
//! steering and attempts; each converts into an engine [`Operation`].

use crate::args::{AssignmentArgs, ToOperation, page_limit_default, parse_id, yes};
use crate::error::ErrorOut;
use crate::kind::{ExecutorKindArg, WorkspaceArgs};
use crate::policy::PolicyPatchArgs;
use engine::Operation;
use engine::ids::WorkerId;
use engine::model::{DependencyCondition, SteeringOutcome};
use engine::op::SpawnArgs;
use schemars::JsonSchema;
use serde::Deserialize;

/// `worker_spawn`.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WorkerSpawnArgs {
    /// The run, e.g. `run-1`.
    pub run_id: String,
    /// Hierarchical name under `/root`, e.g. `/root/backend` (segments of a-z, 0-9, `-`, `_`; parent must exist).
    pub name: String,
    /// Owner-readable name; defaults to the lane label `<taskName> Lane X`.
    #[serde(default)]
    pub display_name: Option<String>,
    /// One-line summary printed on the first line of the worker's bootstrap.
    pub task_summary: String,
    /// What the worker must achieve.
    pub assignment: AssignmentArgs,
    /// Worktree or branch label, for provenance only.
    #[serde(default)]
    pub worktree: Option<String>,
    /// Worker override of the run's default continuation policy.
    #[serde(default)]
    pub policy: Option<PolicyPatchArgs>,
    /// Open a fresh managed conversation and submit the bootstrap now (default true);
    /// false waits for `worker_attach`.
    #[serde(default = "yes")]
    pub start: bool,
    /// Which executor runs the worker: `chatgpt` (a ChatGPT conversation in the browser),
    /// `codex` (Codex CLI) or `claude` (Claude Code). Omitted: the parent's kind
    /// (`/root` is `chatgpt`).
    #[serde(default)]
    pub executor: Option<ExecutorKindArg>,
    /// Where a `codex` or `claude` worker works: required for them unless the parent is a
    /// CLI worker whose directory it inherits; refused for `chatgpt` workers.
    #[serde(default)]
    pub workspace: Option<WorkspaceArgs>,
}

impl ToOperation for WorkerSpawnArgs {
    fn to_operation(self) -> Result<Operation, ErrorOut> {
        Ok(Operation::WorkerSpawn(Box::new(SpawnArgs {
            run: parse_id("runId", &self.run_id)?,
            name: self.name,
            display_name: self.display_name,
            task_summary: self.task_summary,
            assignment: self.assignment.into(),
            worktree: self.worktree,
            policy: self.policy.map(Into::into),
            start: self.start,
            executor: self.executor.map(Into::into),
            workspace: self.workspace.map(Into::into),
        })))
    }
}

/// `worker_attach`.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WorkerAttachArgs {
    /// The worker, e.g. `wrk-2`.
    pub worker_id: String,
    /// URL of the managed conversation to bind (no whitespace, up to 2 KiB): a ChatGPT
    /// URL for a `chatgpt` worker, `codex:thread/<threadId>` for a `codex` worker,
    /// `claude:session/<sessionId>` for a `claude` worker.
    pub conversation_url: String,
}

impl ToOperation for WorkerAttachArgs {
    fn to_operation(self) -> Result<Operation, ErrorOut> {
        Ok(Operation::WorkerAttach {
            worker: parse_id("workerId", &self.worker_id)?,
            conversation: self.conversation_url,
        })
    }
}

/// A tool whose only argument is a worker id.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WorkerIdArgs {
    /// The worker, e.g. `wrk-2`.
    pub worker_id: String,
}

/// Which worker operation a [`WorkerIdArgs`] stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WorkerVerb {
    /// `worker_get`.
    Get,
    /// `worker_resume`.
    Resume,
    /// `worker_continuation_get`.
    ContinuationGet,
}

impl WorkerIdArgs {
    /// The parsed worker id.
    pub fn worker(&self) -> Result<WorkerId, ErrorOut> {
        parse_id("workerId", &self.worker_id)
    }
    /// The operation for `verb`.
    pub fn operation(&self, verb: WorkerVerb) -> Result<Operation, ErrorOut> {
        let worker = self.worker()?;
        Ok(match verb {
            WorkerVerb::Get => Operation::WorkerGet { worker },
            WorkerVerb::Resume => Operation::WorkerResume { worker },
            WorkerVerb::ContinuationGet => Operation::WorkerContinuationGet { worker },
        })
    }
}

/// `worker_list`.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WorkerListArgs {
    /// The run, e.g. `run-1`.
    pub run_id: String,
    /// Also list completed, failed and cancelled workers (default false).
    #[serde(default)]
    pub include_terminal: bool,
}

impl ToOperation for WorkerListArgs {
    fn to_operation(self) -> Result<Operation, ErrorOut> {
        Ok(Operation::WorkerList { run: parse_id("runId", &self.run_id)?, include_terminal: self.include_terminal })
    }
}

/// `worker_progress`.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WorkerProgressArgs {
    /// The worker reporting, e.g. `wrk-2`.
    pub worker_id: String,
    /// What was done since the last report (up to 4 KiB).
    pub summary: String,
    /// Checkpoint commit SHA or ref, if any (one line).
    #[serde(default)]
    pub commit: Option<String>,
}

impl ToOperation for WorkerProgressArgs {
    fn to_operation(self) -> Result<Operation, ErrorOut> {
        Ok(Operation::WorkerProgress {
            worker: parse_id("workerId", &self.worker_id)?,
            summary: self.summary,
            commit: self.commit,
        })
    }
}

/// `worker_complete`.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WorkerCompleteArgs {
    /// The worker, e.g. `wrk-2`.
    pub worker_id: String,
    /// Terminal handoff: what was delivered and where (up to 4 KiB).
    pub summary: String,
}

impl ToOperation for WorkerCompleteArgs {
    fn to_operation(self) -> Result<Operation, ErrorOut> {
        Ok(Operation::WorkerComplete { worker: parse_id("workerId", &self.worker_id)?, summary: self.summary })
    }
}

/// `worker_fail` and `worker_interrupt`.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WorkerReasonArgs {
    /// The worker, e.g. `wrk-2`.
    pub worker_id: String,
    /// Why (up to 4 KiB).
    pub reason: String,
}

impl WorkerReasonArgs {
    /// `worker_fail`.
    pub fn fail(self) -> Result<Operation, ErrorOut> {
        Ok(Operation::WorkerFail { worker: parse_id("workerId", &self.worker_id)?, reason: self.reason })
    }
    /// `worker_interrupt`.
    pub fn interrupt(self) -> Result<Operation, ErrorOut> {
        Ok(Operation::WorkerInterrupt { worker: parse_id("workerId", &self.worker_id)?, reason: self.reason })
    }
}

/// `worker_followup`.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WorkerFollowupArgs {
    /// The worker, e.g. `wrk-2`.
    pub worker_id: String,
    /// What to do now (up to 16 KiB); delivered as a follow-up turn.
    pub instructions: String,
    /// A replacement assignment, when the old one is obsolete.
    #[serde(default)]
    pub assignment: Option<AssignmentArgs>,
}

impl ToOperation for WorkerFollowupArgs {
    fn to_operation(self) -> Result<Operation, ErrorOut> {
        Ok(Operation::WorkerFollowup {
            worker: parse_id("workerId", &self.worker_id)?,
            instructions: self.instructions,
            assignment: self.assignment.map(Into::into),
        })
    }
}

/// `worker_await_human`.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WorkerAwaitHumanArgs {
    /// The worker that needs a person, e.g. `wrk-2`.
    pub worker_id: String,
    /// Why the worker cannot go on alone.
    pub reason: String,
    /// The question for the human.
    pub question: String,
    /// Optional answer choices (at most 16, one line each).
    #[serde(default)]
    pub choices: Vec<String>,
}

impl ToOperation for WorkerAwaitHumanArgs {
    fn to_operation(self) -> Result<Operation, ErrorOut> {
        Ok(Operation::WorkerAwaitHuman {
            worker: parse_id("workerId", &self.worker_id)?,
            reason: self.reason,
            question: self.question,
            choices: self.choices,
        })
    }
}

/// `worker_resolve_human`.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WorkerResolveHumanArgs {
    /// The waiting worker, e.g. `wrk-2`.
    pub worker_id: String,
    /// The human's answer (up to 16 KiB).
    pub answer: String,
}

impl ToOperation for WorkerResolveHumanArgs {
    fn to_operation(self) -> Result<Operation, ErrorOut> {
        Ok(Operation::WorkerResolveHuman { worker: parse_id("workerId", &self.worker_id)?, answer: self.answer })
    }
}

/// What a dependency wait waits for: exactly one of `workerId` or `description`.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DependencyArgs {
    /// Another worker of the same run; the wait is released automatically when it completes.
    #[serde(default)]
    pub worker_id: Option<String>,
    /// An external condition (CI, a deploy, another team); released only by `worker_release_dependency`.
    #[serde(default)]
    pub description: Option<String>,
}

/// `worker_await_dependency`.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WorkerAwaitDependencyArgs {
    /// The waiting worker, e.g. `wrk-2`.
    pub worker_id: String,
    /// What it waits for.
    pub dependency: DependencyArgs,
    /// Why it cannot progress without it.
    pub reason: String,
}

impl ToOperation for WorkerAwaitDependencyArgs {
    fn to_operation(self) -> Result<Operation, ErrorOut> {
        let worker = parse_id("workerId", &self.worker_id)?;
        let condition = match (self.dependency.worker_id, self.dependency.description) {
            (Some(w), None) => DependencyCondition::WorkerCompleted(parse_id("dependency.workerId", &w)?),
            (None, Some(d)) => DependencyCondition::External(d.into()),
            _ => return Err(ErrorOut::invalid("dependency", "give exactly one of workerId or description")),
        };
        Ok(Operation::WorkerAwaitDependency { worker, condition, reason: self.reason })
    }
}

/// `worker_release_dependency`.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WorkerReleaseDependencyArgs {
    /// The waiting worker, e.g. `wrk-2`.
    pub worker_id: String,
    /// What changed (optional).
    #[serde(default)]
    pub note: String,
}

impl ToOperation for WorkerReleaseDependencyArgs {
    fn to_operation(self) -> Result<Operation, ErrorOut> {
        Ok(Operation::WorkerReleaseDependency { worker: parse_id("workerId", &self.worker_id)?, note: self.note })
    }
}

/// `worker_pause`.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WorkerPauseArgs {
    /// The worker, e.g. `wrk-2`.
    pub worker_id: String,
    /// Let the running turn finish first (default false: pause now).
    #[serde(default)]
    pub after_current_turn: bool,
}

impl ToOperation for WorkerPauseArgs {
    fn to_operation(self) -> Result<Operation, ErrorOut> {
        Ok(Operation::WorkerPause {
            worker: parse_id("workerId", &self.worker_id)?,
            after_current_turn: self.after_current_turn,
        })
    }
}

/// `worker_continue_now`.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WorkerContinueNowArgs {
    /// The worker, e.g. `wrk-2`.
    pub worker_id: String,
    /// Clear a human or dependency wait instead of refusing (default false).
    #[serde(default)]
    pub override_wait: bool,
    /// Also clear an operator pause (default false: the worker stays paused after this one turn).
    #[serde(default)]
    pub clear_pause: bool,
}

impl ToOperation for WorkerContinueNowArgs {
    fn to_operation(self) -> Result<Operation, ErrorOut> {
        Ok(Operation::WorkerContinueNow {
            worker: parse_id("workerId", &self.worker_id)?,
            override_wait: self.override_wait,
            clear_pause: self.clear_pause,
        })
    }
}

/// `worker_continuation_set`.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WorkerContinuationSetArgs {
    /// The worker, e.g. `wrk-2`.
    pub worker_id: String,
    /// Fields to change on the worker's effective policy (the result becomes a worker override).
    #[serde(default)]
    pub policy: PolicyPatchArgs,
    /// Drop the worker override and inherit the run default again (do not combine with `policy`).
    #[serde(default)]
    pub inherit: bool,
}

impl ToOperation for WorkerContinuationSetArgs {
    fn to_operation(self) -> Result<Operation, ErrorOut> {
        Ok(Operation::WorkerContinuationSet {
            worker: parse_id("workerId", &self.worker_id)?,
            patch: self.policy.into(),
            inherit: self.inherit,
        })
    }
}

/// Root's review outcome for a lane.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SteeringOutcomeArg {
    /// Aligned; keep going (obeys the 15-minute anti-spam floor).
    ContinueAsPlanned,
    /// Drifting from assignment or architecture (material by default: bypasses the floor).
    CorrectDirection,
    /// Another subgoal first.
    ChangePriority,
    /// A commit, contract or result it waited for is now available.
    ProvideDependency,
    /// Root needs tests, a diff or proof.
    RequestEvidence,
    /// Stop after the current turn.
    Pause,
    /// The lane claims done; root asks for a final correction or review.
    TerminalReconcile,
}

impl From<SteeringOutcomeArg> for SteeringOutcome {
    fn from(o: SteeringOutcomeArg) -> SteeringOutcome {
        match o {
            SteeringOutcomeArg::ContinueAsPlanned => SteeringOutcome::ContinueAsPlanned,
            SteeringOutcomeArg::CorrectDirection => SteeringOutcome::CorrectDirection,
            SteeringOutcomeArg::ChangePriority => SteeringOutcome::ChangePriority,
            SteeringOutcomeArg::ProvideDependency => SteeringOutcome::ProvideDependency,
            SteeringOutcomeArg::RequestEvidence => SteeringOutcome::RequestEvidence,
            SteeringOutcomeArg::Pause => SteeringOutcome::Pause,
            SteeringOutcomeArg::TerminalReconcile => SteeringOutcome::TerminalReconcile,
        }
    }
}

/// `worker_steer`.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WorkerSteerArgs {
    /// The lane (not `/root`), e.g. `wrk-3`.
    pub worker_id: String,
    /// Root's verdict.
    pub outcome: SteeringOutcomeArg,
    /// Root's words, delivered verbatim (up to 16 KiB).
    pub message: String,
    /// Bypass the anti-spam floor; defaults to true for `correct_direction` only.
    #[serde(default)]
    pub material: Option<bool>,
}

impl ToOperation for WorkerSteerArgs {
    fn to_operation(self) -> Result<Operation, ErrorOut> {
        Ok(Operation::WorkerSteer {
            worker: parse_id("workerId", &self.worker_id)?,
            outcome: self.outcome.into(),
            message: self.message,
            material: self.material,
        })
    }
}

/// `worker_attempts`.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WorkerAttemptsArgs {
    /// The worker, e.g. `wrk-2`.
    pub worker_id: String,
    /// Only attempts with a larger per-worker sequence (default 0: from the first).
    #[serde(default)]
    pub after_sequence: u32,
    /// At most this many (1-1000, default 100).
    #[serde(default = "page_limit_default")]
    pub limit: u32,
}

impl ToOperation for WorkerAttemptsArgs {
    fn to_operation(self) -> Result<Operation, ErrorOut> {
        Ok(Operation::WorkerAttempts {
            worker: parse_id("workerId", &self.worker_id)?,
            after_sequence: self.after_sequence,
            limit: self.limit as usize,
        })
    }
}
