//! Caller operations: validate everything first, then mutate, then reply.
//!
//! Architecture Invariant: a rejected operation changes nothing (no record, no event).

mod control;
mod read;
mod run;
mod wait;
mod worker;

use crate::effect::Effect;
use crate::engine::Engine;
use crate::ids::*;
use crate::model::*;
use crate::op::{Operation, Reply};
use crate::reject::{Rejection, RejectionCode};

impl Engine {
    /// Runs one operation and queues its reply.
    pub(crate) fn handle_call(&mut self, call: CallId, op: Operation) {
        let result = self.run_operation(op);
        debug_assert!(
            result.is_ok() || (self.state.log.nothing_appended() && self.state.workers.unchanged()),
            "a rejected operation must not change state"
        );
        self.push_effect(Effect::Reply { call, result });
    }

    fn run_operation(&mut self, op: Operation) -> Result<Reply, Rejection> {
        match op {
            Operation::RunCreate { task_name, root_conversation_name, context, default_policy, root_executor } => {
                self.run_create(&task_name, &root_conversation_name, &context, default_policy, *root_executor)
            }
            Operation::RunStart {
                task_name,
                root_conversation_name,
                context,
                default_policy,
                root_conversation,
                root_executor,
            } => self.run_start(
                &task_name,
                &root_conversation_name,
                &context,
                default_policy,
                root_conversation.as_deref(),
                *root_executor,
            ),
            Operation::RunGet { run } => self.run_get(run),
            Operation::RunList { include_terminal } => Ok(self.run_list(include_terminal)),
            Operation::RunHistory { limit } => self.run_history(limit),
            Operation::RunUpdateContext { run, task_name, root_conversation_name, context } => {
                self.run_update_context(run, task_name, root_conversation_name, context)
            }
            Operation::RunCancel { run, reason } => self.run_cancel(run, &reason),
            Operation::RunSetDefaultContinuation { run, patch } => self.run_set_default_continuation(run, &patch),
            Operation::RunPauseAll { run } => self.run_pause_all(run),
            Operation::RunResumeAll { run } => self.run_resume_all(run),
            Operation::WorkerSpawn(args) => self.worker_spawn(*args),
            Operation::WorkerAttach { worker, conversation } => self.worker_attach(worker, &conversation),
            Operation::WorkerGet { worker } => self.worker_reply(worker),
            Operation::WorkerList { run, include_terminal } => self.worker_list(run, include_terminal),
            Operation::WorkerProgress { worker, summary, commit } => {
                self.worker_progress(worker, &summary, commit.as_deref())
            }
            Operation::WorkerComplete { worker, summary } => self.worker_complete(worker, &summary),
            Operation::WorkerFail { worker, reason } => self.worker_fail(worker, &reason),
            Operation::WorkerInterrupt { worker, reason } => self.worker_interrupt(worker, &reason),
            Operation::WorkerFollowup { worker, instructions, assignment } => {
                self.worker_followup(worker, &instructions, assignment)
            }
            Operation::WorkerAwaitHuman { worker, reason, question, choices } => {
                self.worker_await_human(worker, &reason, &question, choices)
            }
            Operation::WorkerResolveHuman { worker, answer } => self.worker_resolve_human(worker, &answer),
            Operation::WorkerAwaitDependency { worker, condition, reason } => {
                self.worker_await_dependency(worker, condition, &reason)
            }
            Operation::WorkerReleaseDependency { worker, note } => self.worker_release_dependency(worker, &note),
            Operation::WorkerPause { worker, after_current_turn } => self.worker_pause(worker, after_current_turn),
            Operation::WorkerResume { worker } => self.worker_resume(worker),
            Operation::WorkerApprovalAnswer { worker, approval, decision } => {
                self.worker_approval_answer(worker, &approval, decision)
            }
            Operation::WorkerContinueNow { worker, override_wait, clear_pause } => {
                self.worker_continue_now(worker, override_wait, clear_pause)
            }
            Operation::WorkerContinuationGet { worker } => self.worker_continuation_get(worker),
            Operation::WorkerContinuationSet { worker, patch, inherit } => {
                self.worker_continuation_set(worker, &patch, inherit)
            }
            Operation::WorkerSteer { worker, outcome, message, material } => {
                self.worker_steer(worker, outcome, &message, material)
            }
            Operation::WorkerAttempts { worker, after_sequence, limit } => {
                self.worker_attempts(worker, after_sequence, limit)
            }
            Operation::MessageSend { from, to, body } => self.message_send(from, to, &body),
            Operation::EventsAfter { cursor, run, worker, limit } => self.events_after(cursor, run, worker, limit),
        }
    }

    // ----- lookups shared by the operation families -----

    pub(crate) fn find_run(&self, id: RunId) -> Result<&Run, Rejection> {
        self.state.runs.get(&id).ok_or_else(|| Rejection::new(RejectionCode::UnknownRun, &format!("no run {id}")))
    }

    pub(crate) fn find_worker(&self, id: WorkerId) -> Result<&Worker, Rejection> {
        self.state
            .workers
            .get(&id)
            .ok_or_else(|| Rejection::new(RejectionCode::UnknownWorker, &format!("no worker {id}")))
    }

    /// An active run (not completed, failed or cancelled).
    pub(crate) fn active_run(&self, id: RunId) -> Result<&Run, Rejection> {
        let run = self.find_run(id)?;
        if run.status.is_terminal() {
            return Err(Rejection::new(RejectionCode::RunTerminal, &format!("run {id} is {}", run.status.as_str())));
        }
        Ok(run)
    }

    /// A worker that is unfinished, in an active run.
    pub(crate) fn active_worker(&self, id: WorkerId) -> Result<&Worker, Rejection> {
        let w = self.find_worker(id)?;
        if w.lifecycle.is_terminal() {
            return Err(Rejection::new(
                RejectionCode::WorkerTerminal,
                &format!(
                    "worker {id} ({}) is already {}; nothing more can happen to it",
                    w.spec.name,
                    w.lifecycle.as_str()
                ),
            ));
        }
        self.active_run(w.run)?;
        Ok(w)
    }

    /// The worker's reply view.
    pub(crate) fn worker_reply(&self, id: WorkerId) -> Result<Reply, Rejection> {
        self.find_worker(id)?;
        Ok(Reply::Worker(Box::new(self.worker_view(id).expect("worker exists"))))
    }
}
