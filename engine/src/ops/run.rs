//! Run operations: create, list (unfinished first, then the most recently finished the
//! history keeps), history, update context, cancel, default policy, pause/resume all.

use crate::engine::Engine;
use crate::event::EventKind;
use crate::ids::*;
use crate::kind::ExecutorKind;
use crate::limits::*;
use crate::model::*;
use crate::op::{Reply, RootExecutor, shared};
use crate::policy::PolicyPatch;
use crate::prompt::ROOT_WORKER_NAME;
use crate::reject::{Rejection, RejectionCode};
use crate::validate;
use crate::wake::WakeReason;

impl Engine {
    pub(crate) fn run_create(
        &mut self,
        task_name: &str,
        root_conversation_name: &str,
        context: &str,
        default_policy: Option<PolicyPatch>,
        root_executor: RootExecutor,
    ) -> Result<Reply, Rejection> {
        validate::name("taskName", task_name)?;
        validate::name("rootConversationName", root_conversation_name)?;
        validate::optional_text("context", context, ASSIGNMENT_TEXT_BYTES_MAX)?;
        let (executor, workspace) =
            crate::kind::for_spawn(root_executor.executor, root_executor.workspace, (ExecutorKind::Chatgpt, None))?;
        if self.state.runs.len() >= RUNS_COUNT_MAX {
            return Err(Rejection::new(RejectionCode::LimitExceeded, &format!("at most {RUNS_COUNT_MAX} runs")));
        }
        let patch = default_policy.unwrap_or_default();
        let dead_man = self.dead_man_patched(None, &patch)?;
        let default_policy = match default_policy {
            Some(patch) => {
                let p = self.config.default_policy.patched(&patch);
                p.validate()?;
                Some(p)
            }
            None => None,
        };
        let run_id = self.state.ids.next_run();
        let root_id = self.state.ids.next_worker();
        let now = self.now;
        self.state.runs.insert(
            run_id,
            Run {
                id: run_id,
                task_name: shared(task_name),
                root_conversation_name: shared(root_conversation_name),
                context: shared(context),
                status: RunStatus::Active,
                default_policy,
                root: root_id,
                lanes_spawned: 0,
                created_at: now,
                ended_at: None,
            },
        );
        self.emit(run_id, None, None, EventKind::RunCreated);
        let objective = if context.trim().is_empty() { task_name } else { context };
        let spec = WorkerSpec {
            id: root_id,
            run: run_id,
            name: ROOT_WORKER_NAME.to_string(),
            display_name: root_conversation_name.to_string(),
            task_summary: task_name.to_string(),
            lane_label: "Root".to_string(),
            worktree: None,
            executor,
            workspace,
            assignment: Assignment {
                objective: objective.to_string(),
                scope: "Coordinate the run: lanes, messages, dependencies, integration.".to_string(),
                acceptance_criteria: Vec::new(),
            },
        };
        self.insert_worker(spec, None);
        self.set_dead_man(run_id, &patch, dead_man);
        Ok(Reply::Run(Box::new(self.run_view(run_id).expect("run exists"))))
    }

    /// `run_create` with `/root` started at once: attached to `root_conversation` (as
    /// `worker_attach`, which wakes it for its bootstrap), or, without one, woken for its
    /// bootstrap in a new chat. Everything is checked before anything changes.
    pub(crate) fn run_start(
        &mut self,
        task_name: &str,
        root_conversation_name: &str,
        context: &str,
        default_policy: Option<PolicyPatch>,
        root_conversation: Option<&str>,
        root_executor: RootExecutor,
    ) -> Result<Reply, Rejection> {
        if let Some(conversation) = root_conversation {
            validate::conversation(conversation)?;
            crate::kind::conversation_for(root_executor.executor.unwrap_or(ExecutorKind::Chatgpt), conversation)?;
            if let Some(other) = self.index.leasing(conversation) {
                return Err(Rejection::new(
                    RejectionCode::ConversationInUse,
                    &format!("conversation is already bound to worker {other}"),
                ));
            }
        }
        let reply = self.run_create(task_name, root_conversation_name, context, default_policy, root_executor)?;
        let Reply::Run(view) = &reply else { unreachable!("run_create replies with its run") };
        let (run, root) = (view.run.id, view.run.root);
        match root_conversation {
            Some(conversation) => {
                self.worker_attach(root, conversation).expect("a new root with a free conversation attaches");
            }
            None => self.wake(root, WakeReason::Initial, Origin::Operator, IntentPayload::Continue),
        }
        Ok(Reply::Run(Box::new(self.run_view(run).expect("run exists"))))
    }

    pub(crate) fn run_get(&self, id: RunId) -> Result<Reply, Rejection> {
        self.find_run(id)?;
        Ok(Reply::Run(Box::new(self.run_view(id).expect("run exists"))))
    }

    pub(crate) fn run_list(&self, include_terminal: bool) -> Reply {
        let unfinished = self.state.runs.values().filter(|r| !r.status.is_terminal()).map(|r| r.id);
        let finished = self.history(if include_terminal { LIST_PAGE_COUNT_MAX } else { 0 });
        let runs = unfinished
            .chain(finished)
            .take(LIST_PAGE_COUNT_MAX)
            .map(|r| self.run_view(r).expect("run exists"))
            .collect();
        Reply::Runs(runs)
    }

    /// Finished runs, the most recently ended first (the operator's history): at most
    /// `limit`, and never more than the retention allows (`history_runs_max` runs, ended
    /// within `history_kept_ms`).
    pub(crate) fn run_history(&self, limit: usize) -> Result<Reply, Rejection> {
        validate::limit("limit", limit, LIST_PAGE_COUNT_MAX)?;
        Ok(Reply::Runs(self.history(limit).map(|r| self.run_view(r).expect("run exists")).collect()))
    }

    /// The finished runs the history keeps, the most recently ended first: at most `limit`,
    /// `history_runs_max` and those ended within `history_kept_ms`.
    fn history(&self, limit: usize) -> impl Iterator<Item = RunId> + '_ {
        let since = self.now.0.saturating_sub(self.config.history_kept_ms);
        self.index
            .finished_runs()
            .take(limit.min(self.config.history_runs_max))
            .take_while(move |r| self.state.runs[r].ended_at.is_some_and(|at| at.0 >= since))
    }

    pub(crate) fn run_update_context(
        &mut self,
        id: RunId,
        task_name: Option<String>,
        root_conversation_name: Option<String>,
        context: Option<String>,
    ) -> Result<Reply, Rejection> {
        self.find_run(id)?;
        if let Some(t) = &task_name {
            validate::name("taskName", t)?;
        }
        if let Some(r) = &root_conversation_name {
            validate::name("rootConversationName", r)?;
        }
        if let Some(c) = &context {
            validate::optional_text("context", c, ASSIGNMENT_TEXT_BYTES_MAX)?;
        }
        if task_name.is_none() && root_conversation_name.is_none() && context.is_none() {
            return Err(Rejection::invalid("taskName", "give at least one of taskName, rootConversationName, context"));
        }
        let run = self.state.runs.get_mut(&id).expect("run exists");
        let old_task = run.task_name.clone();
        if let Some(t) = &task_name {
            run.task_name = shared(t);
        }
        if let Some(r) = &root_conversation_name {
            run.root_conversation_name = shared(r);
        }
        if let Some(c) = &context {
            run.context = shared(c);
        }
        let (root, new_task) = (run.root, run.task_name.clone());
        // Lane labels follow the task name; display names that were the lane label follow too.
        for wid in self.index.workers_of(id) {
            let w = &self.state.workers[&wid];
            let mut spec = (*w.spec).clone();
            if wid == root {
                if let Some(r) = &root_conversation_name {
                    spec.display_name = r.clone();
                }
                spec.task_summary = new_task.to_string();
            } else if let Some(letters) = spec.lane_label.strip_prefix(&format!("{old_task} Lane ")) {
                let label = format!("{new_task} Lane {letters}");
                if spec.display_name == spec.lane_label {
                    spec.display_name = label.clone();
                }
                spec.lane_label = label;
            }
            if spec != *w.spec {
                self.state.workers.replace_spec(wid, spec);
            }
        }
        self.emit(id, None, None, EventKind::RunContextUpdated);
        self.run_get(id)
    }

    pub(crate) fn run_cancel(&mut self, id: RunId, reason: &str) -> Result<Reply, Rejection> {
        self.active_run(id)?;
        validate::text("reason", reason, SUMMARY_BYTES_MAX)?;
        self.end_run(id, RunStatus::Cancelled, reason);
        self.run_get(id)
    }

    /// Ends a run: every unfinished worker is cancelled (or failed with a failed run).
    pub(crate) fn end_run(&mut self, id: RunId, status: RunStatus, reason: &str) {
        let now = self.now;
        let run = self.state.runs.get_mut(&id).expect("run exists");
        run.status = status;
        run.ended_at = Some(now);
        for wid in self.index.workers_of(id) {
            if !self.state.workers[&wid].lifecycle.is_terminal() {
                self.end_worker(wid, Lifecycle::Cancelled, reason);
            }
        }
        self.emit(id, None, None, EventKind::RunEnded { status });
    }

    pub(crate) fn run_set_default_continuation(&mut self, id: RunId, patch: &PolicyPatch) -> Result<Reply, Rejection> {
        let run = self.active_run(id)?;
        let policy = run.default_policy.unwrap_or(self.config.default_policy).patched(patch);
        policy.validate()?;
        let dead_man = self.dead_man_patched(Some(id), patch)?;
        self.set_dead_man(id, patch, dead_man);
        self.state.runs.get_mut(&id).expect("run exists").default_policy = Some(policy);
        self.emit(id, None, None, EventKind::RunPolicyChanged { mode: policy.mode });
        for wid in self.index.workers_of(id) {
            // Rewritten unchanged (their effective policy changed with the run's): kept
            // so that batches stay as they were; only their timers need recomputing.
            self.state.workers.mark(wid);
            self.evaluate(wid);
        }
        self.run_get(id)
    }

    pub(crate) fn run_pause_all(&mut self, id: RunId) -> Result<Reply, Rejection> {
        self.active_run(id)?;
        for wid in self.index.workers_of(id) {
            if !self.state.workers[&wid].lifecycle.is_terminal() {
                self.pause_worker(wid, true);
            }
        }
        self.run_get(id)
    }

    pub(crate) fn run_resume_all(&mut self, id: RunId) -> Result<Reply, Rejection> {
        self.active_run(id)?;
        for wid in self.index.workers_of(id) {
            let w = &self.state.workers[&wid];
            let operator_pause = w.pause.as_ref().is_some_and(|p| p.reason == PauseReason::Operator);
            if !w.lifecycle.is_terminal() && (operator_pause || w.pause_after_turn) {
                self.resume_worker(wid);
            }
        }
        self.run_get(id)
    }
}
