//! Worker lifecycle operations: spawn, attach, progress, complete, fail, interrupt,
//! follow-up, and messages.

use crate::engine::Engine;
use crate::event::EventKind;
use crate::ids::*;
use crate::limits::*;
use crate::model::*;
use crate::op::{Reply, SpawnArgs, shared};
use crate::prompt::ROOT_WORKER_NAME;
use crate::reject::{Rejection, RejectionCode};
use crate::results::terminal_outcome;
use crate::validate;
use crate::wake::WakeReason;
use std::sync::Arc;

impl Engine {
    /// Inserts a new worker (the caller validated everything).
    pub(crate) fn insert_worker(
        &mut self,
        spec: WorkerSpec,
        policy: Option<crate::policy::ContinuationPolicy>,
    ) -> WorkerId {
        let now = self.now;
        let (id, run) = (spec.id, spec.run);
        let worker = Worker {
            id,
            run,
            spec: Arc::new(spec),
            lifecycle: Lifecycle::Active,
            outcome: None,
            policy,
            pause: None,
            pause_after_turn: false,
            human: None,
            human_answer: None,
            dependency: None,
            binding: None,
            intent: None,
            in_flight: None,
            turn: None,
            attempts: 0,
            auto_resumes: 0,
            last_delivery_at: None,
            bootstrapped: false,
            keepalive_seq: 0,
            keepalive_draw: 0,
            keepalive_fired: false,
            progress: ProgressAccount {
                last_at: None,
                last_cursor: None,
                baseline_at: now,
                quiet_ms: 0,
                attempts_without: 0,
                since_submission: true,
                stall: StallState::Clear,
            },
            delivery_failures: 0,
            last_block: None,
            last_steering_digest: None,
            created_at: now,
            ended_at: None,
        };
        self.index.add_worker(&worker);
        self.state.workers.insert(worker);
        self.emit(run, Some(id), None, EventKind::WorkerSpawned);
        id
    }

    pub(crate) fn worker_spawn(&mut self, args: SpawnArgs) -> Result<Reply, Rejection> {
        let run = self.active_run(args.run)?;
        validate::worker_name(&args.name)?;
        if let Some(d) = &args.display_name {
            validate::name("displayName", d)?;
        }
        validate::text("taskSummary", &args.task_summary, SUMMARY_BYTES_MAX)?;
        validate_assignment(&args.assignment)?;
        if let Some(w) = &args.worktree {
            validate::name("worktree", w)?;
        }
        if self.index.worker_named(args.run, &args.name).is_some() {
            return Err(Rejection::new(
                RejectionCode::DuplicateWorkerName,
                &format!("run {} already has a worker named {}", args.run, args.name),
            ));
        }
        let parent = validate::parent_name(&args.name);
        let Some(parent_id) = self.index.worker_named(args.run, parent) else {
            return Err(Rejection::new(
                RejectionCode::ParentWorkerMissing,
                &format!("spawn {parent} before {}", args.name),
            ));
        };
        if self.index.workers_of(args.run).len() >= RUN_WORKERS_COUNT_MAX {
            return Err(Rejection::new(
                RejectionCode::LimitExceeded,
                &format!("at most {RUN_WORKERS_COUNT_MAX} workers per run"),
            ));
        }
        let parent_spec = &self.state.workers[&parent_id].spec;
        let (executor, workspace) = crate::kind::for_spawn(
            args.executor,
            args.workspace,
            (parent_spec.executor, parent_spec.workspace.as_ref()),
        )?;
        let (policy, _) = {
            let base = run.default_policy.unwrap_or(self.config.default_policy);
            match &args.policy {
                Some(patch) => {
                    patch.check_worker_fields()?;
                    let p = base.patched(patch);
                    p.validate()?;
                    (Some(p), ())
                }
                None => (None, ()),
            }
        };
        let lane_label = format!("{} Lane {}", run.task_name, validate::lane_letters(run.lanes_spawned));
        let run_id = args.run;
        self.state.runs.get_mut(&run_id).expect("run exists").lanes_spawned += 1;
        let id = self.state.ids.next_worker();
        let spec = WorkerSpec {
            id,
            run: run_id,
            name: args.name,
            display_name: args.display_name.unwrap_or_else(|| lane_label.clone()),
            task_summary: args.task_summary,
            lane_label,
            worktree: args.worktree,
            assignment: args.assignment,
            executor,
            workspace,
        };
        self.insert_worker(spec, policy);
        if args.start {
            self.wake(id, WakeReason::Initial, Origin::Operator, IntentPayload::Continue);
        }
        self.worker_reply(id)
    }

    pub(crate) fn worker_attach(&mut self, id: WorkerId, conversation: &str) -> Result<Reply, Rejection> {
        let w = self.active_worker(id)?;
        validate::conversation(conversation)?;
        crate::kind::conversation_for(w.spec.executor, conversation)?;
        if let Some(other) = self.index.leasing(conversation).filter(|other| *other != id) {
            return Err(Rejection::new(
                RejectionCode::ConversationInUse,
                &format!("conversation is already bound to worker {other}"),
            ));
        }
        if w.in_flight.is_some() {
            return Err(Rejection::new(
                RejectionCode::InvalidArgument,
                "a continuation is being delivered to the current conversation; attach after it settles",
            ));
        }
        let same =
            w.binding.as_ref().is_some_and(|b| &*b.conversation == conversation && b.status != BindingStatus::Lost);
        if same {
            return self.worker_reply(id);
        }
        let bootstrapped = w.bootstrapped;
        let superseded = w
            .binding
            .as_ref()
            .filter(|b| &*b.conversation != conversation)
            .and_then(|b| Some((b.executor.clone()?, b.conversation.clone())));
        if let Some((executor, old)) = superseded {
            self.release_conversation(executor, id, old);
        }
        let now = self.now;
        self.forget_dialog(id);
        let w = self.state.workers.get_mut(&id).expect("worker exists");
        w.binding = Some(Binding {
            conversation: shared(conversation),
            executor: None,
            status: BindingStatus::Pending,
            state: ConversationState::Unknown,
            state_seq: 0,
            state_since: now,
        });
        if let Some(turn) = w.turn {
            // The old conversation's turn cannot be observed any more.
            self.close_attempt(turn, AttemptState::Completed, AttemptOutcome::ConversationLost, None);
        }
        let run = self.state.workers[&id].run;
        self.emit(run, Some(id), None, EventKind::WorkerAttached { conversation: shared(conversation) });
        let reason = if bootstrapped { WakeReason::Recovery } else { WakeReason::Initial };
        self.wake(id, reason, Origin::Operator, IntentPayload::Continue);
        self.worker_reply(id)
    }

    pub(crate) fn worker_list(&self, run: RunId, include_terminal: bool) -> Result<Reply, Rejection> {
        self.find_run(run)?;
        let workers = self
            .index
            .workers_of(run)
            .into_iter()
            .filter(|w| include_terminal || !self.state.workers[w].lifecycle.is_terminal())
            .take(LIST_PAGE_COUNT_MAX)
            .map(|w| self.worker_view(w).expect("worker exists"))
            .collect();
        Ok(Reply::Workers(workers))
    }

    pub(crate) fn worker_progress(
        &mut self,
        id: WorkerId,
        summary: &str,
        commit: Option<&str>,
    ) -> Result<Reply, Rejection> {
        self.active_worker(id)?;
        validate::text("summary", summary, SUMMARY_BYTES_MAX)?;
        if let Some(c) = commit {
            validate::name("commit", c)?;
        }
        let run = self.state.workers[&id].run;
        let cursor = self.emit(
            run,
            Some(id),
            None,
            EventKind::WorkerProgress { summary: shared(summary), commit: commit.map(shared) },
        );
        self.record_progress(id, Some(cursor));
        self.wake_root(id, WakeReason::Progress);
        self.evaluate(id);
        self.worker_reply(id)
    }

    pub(crate) fn worker_complete(&mut self, id: WorkerId, summary: &str) -> Result<Reply, Rejection> {
        let w = self.active_worker(id)?;
        validate::text("summary", summary, SUMMARY_BYTES_MAX)?;
        let run = w.run;
        let is_root = self.state.runs[&run].root == id;
        if is_root {
            let unfinished: Vec<String> = self
                .index
                .workers_of(run)
                .into_iter()
                .filter(|other| *other != id && !self.state.workers[other].lifecycle.is_terminal())
                .map(|other| self.state.workers[&other].spec.name.clone())
                .collect();
            if !unfinished.is_empty() {
                return Err(Rejection::new(
                    RejectionCode::RunHasUnfinishedWorkers,
                    &format!("complete, fail or interrupt these workers first: {}", unfinished.join(", ")),
                ));
            }
        }
        self.end_worker(id, Lifecycle::Completed, summary);
        if is_root {
            let now = self.now;
            let r = self.state.runs.get_mut(&run).expect("run exists");
            r.status = RunStatus::Completed;
            r.ended_at = Some(now);
            self.emit(run, None, None, EventKind::RunEnded { status: RunStatus::Completed });
        }
        self.worker_reply(id)
    }

    pub(crate) fn worker_fail(&mut self, id: WorkerId, reason: &str) -> Result<Reply, Rejection> {
        let w = self.active_worker(id)?;
        validate::text("reason", reason, SUMMARY_BYTES_MAX)?;
        let run = w.run;
        let is_root = self.state.runs[&run].root == id;
        self.end_worker(id, Lifecycle::Failed, reason);
        if is_root {
            self.end_run(run, RunStatus::Failed, "the run's root failed");
        }
        self.worker_reply(id)
    }

    pub(crate) fn worker_interrupt(&mut self, id: WorkerId, reason: &str) -> Result<Reply, Rejection> {
        let w = self.active_worker(id)?;
        validate::text("reason", reason, SUMMARY_BYTES_MAX)?;
        if w.spec.name == ROOT_WORKER_NAME {
            return Err(Rejection::new(
                RejectionCode::RootLifecycle,
                "stop the whole run with run_cancel instead of interrupting /root",
            ));
        }
        self.end_worker(id, Lifecycle::Cancelled, reason);
        self.worker_reply(id)
    }

    /// Makes a worker terminal: no continuation ever again (spec 000 §10.2 step 2).
    pub(crate) fn end_worker(&mut self, id: WorkerId, lifecycle: Lifecycle, reason: &str) {
        debug_assert!(lifecycle.is_terminal());
        let now = self.now;
        let w = self.state.workers.get_mut(&id).expect("worker exists");
        w.lifecycle = lifecycle;
        w.outcome = Some(shared(reason));
        w.ended_at = Some(now);
        w.pause_after_turn = false;
        let (run, turn) = (w.run, w.turn);
        let kind = match lifecycle {
            Lifecycle::Completed => EventKind::WorkerCompleted { summary: shared(reason) },
            Lifecycle::Failed => EventKind::WorkerFailed { reason: shared(reason) },
            _ => EventKind::WorkerCancelled { reason: shared(reason) },
        };
        self.emit(run, Some(id), None, kind);
        self.cancel_intent(id);
        if let Some(turn) = turn {
            self.close_attempt(turn, AttemptState::Completed, terminal_outcome(lifecycle), None);
        }
        self.withdraw_if_unwanted(id);
        // A stopped CLI worker's session ends at once, its running turn with it; a
        // completed or failed one's once its last turn ended (see `close_finished_cli`).
        self.close_finished_cli(id, lifecycle == Lifecycle::Cancelled);
        // The root hears of it first: if it also waited for this lane, its wait is released
        // below and both reasons go in with one continuation (woken once, not twice).
        self.wake_root(id, WakeReason::LaneTerminal);
        // Whoever waited for it is told how it ended, once: released when it completed,
        // released unmet and woken with the outcome when it failed or was stopped.
        for waiter in self.index.waiters_of(id) {
            self.dependency_finished(waiter, id, lifecycle);
        }
    }

    pub(crate) fn worker_followup(
        &mut self,
        id: WorkerId,
        instructions: &str,
        assignment: Option<Assignment>,
    ) -> Result<Reply, Rejection> {
        self.active_worker(id)?;
        validate::text("instructions", instructions, MESSAGE_BYTES_MAX)?;
        if let Some(a) = &assignment {
            validate_assignment(a)?;
        }
        if let Some(a) = assignment {
            let mut spec = (*self.state.workers[&id].spec).clone();
            spec.assignment = a;
            self.state.workers.replace_spec(id, spec);
        }
        let run = self.state.workers[&id].run;
        self.emit(run, Some(id), None, EventKind::WorkerFollowup);
        self.clear_waits(id);
        self.record_progress(id, None);
        self.wake(id, WakeReason::Followup, Origin::Operator, IntentPayload::Followup(shared(instructions)));
        self.worker_reply(id)
    }

    pub(crate) fn message_send(
        &mut self,
        from: Option<WorkerId>,
        to: WorkerId,
        body: &str,
    ) -> Result<Reply, Rejection> {
        let recipient = self.find_worker(to)?;
        let run = recipient.run;
        self.active_run(run)?;
        if let Some(sender) = from {
            let s = self.find_worker(sender)?;
            if s.run != run {
                return Err(Rejection::invalid("from", "sender and recipient must belong to the same run"));
            }
        }
        validate::text("body", body, MESSAGE_BYTES_MAX)?;
        let now = self.now;
        let id = self.state.ids.next_message();
        let message = Message { id, run, from, to, body: shared(body), at: now };
        self.state.messages.insert(id, message.clone());
        self.index.add_message(to, id);
        let cursor = self.emit(run, Some(to), None, EventKind::MessageSent { message: id, from });
        if let Some(sender) = from
            && !self.state.workers[&sender].lifecycle.is_terminal()
        {
            self.record_progress(sender, Some(cursor));
            self.evaluate(sender);
        }
        self.wake(to, WakeReason::Message, Origin::Scheduler, IntentPayload::Continue);
        Ok(Reply::Message(message))
    }

    /// Lane reports are event wakes for `/root` (003 decision 9).
    pub(crate) fn wake_root(&mut self, lane: WorkerId, reason: WakeReason) {
        let run = self.state.workers[&lane].run;
        let root = self.state.runs[&run].root;
        if root != lane {
            self.wake(root, reason, Origin::Scheduler, IntentPayload::Continue);
        }
    }
}

/// Checks an assignment's texts.
fn validate_assignment(a: &Assignment) -> Result<(), Rejection> {
    validate::text("assignment.objective", &a.objective, ASSIGNMENT_TEXT_BYTES_MAX)?;
    validate::optional_text("assignment.scope", &a.scope, ASSIGNMENT_TEXT_BYTES_MAX)?;
    if a.acceptance_criteria.len() > ACCEPTANCE_CRITERIA_COUNT_MAX {
        return Err(Rejection::invalid(
            "assignment.acceptanceCriteria",
            &format!("at most {ACCEPTANCE_CRITERIA_COUNT_MAX} criteria"),
        ));
    }
    for c in &a.acceptance_criteria {
        validate::text("assignment.acceptanceCriteria", c, ASSIGNMENT_TEXT_BYTES_MAX)?;
    }
    Ok(())
}
