//! Turning a deliverable continuation into an execution attempt and an executor command.

use crate::effect::{CommandKind, Effect, ExecutorCommand};
use crate::engine::Engine;
use crate::event::EventKind;
use crate::ids::*;
use crate::model::*;
use crate::prompt::{self, AttemptBrief, Prompt, WorkerBrief};
use crate::time::Timestamp;
use crate::wake::WakeReason;
use std::sync::Arc;

/// Wake reasons that a submitted continuation satisfies; event reasons survive it.
const SATISFIED_BY_SUBMISSION: [WakeReason; 10] = [
    WakeReason::Idle,
    WakeReason::ActiveKeepalive,
    WakeReason::DeliveryTimeout,
    WakeReason::BlockComplete,
    WakeReason::Redelivery,
    WakeReason::ContinueNow,
    WakeReason::Resumed,
    WakeReason::Initial,
    WakeReason::Recovery,
    WakeReason::DeadMan,
];

impl Engine {
    /// Step 10: creates the attempt for the pending continuation and issues its command.
    pub(crate) fn dispatch(&mut self, id: WorkerId, delivery: Delivery) {
        let now = self.now;
        let attempt_id = self.state.ids.next_attempt();
        let deadline = now.plus_ms(self.config.command_deadline_ms);
        let run = self.state.workers[&id].run;
        let has_lanes = self.state.runs[&run].lanes_spawned > 0;
        let w = self.state.workers.get_mut(&id).expect("dispatched worker exists");
        let intent = w.intent.take().expect("dispatch needs an intent");
        debug_assert!(w.in_flight.is_none(), "one continuation in flight per worker");
        let (reason, prompt) = choose(w, &intent, delivery, has_lanes);
        w.attempts += 1;
        if delivery == Delivery::Create {
            // A CLI worker stays on the host that holds its workspace: its fresh session is
            // made by the executor that held the last one (waiting for it while it is away),
            // never by another host's. A browser conversation may open in any browser.
            let pinned = w.binding.as_ref().and_then(|b| b.executor.clone()).filter(|_| w.spec.executor.is_cli());
            w.binding = Some(Binding {
                conversation: Arc::from(""),
                executor: pinned,
                status: BindingStatus::Pending,
                state: ConversationState::Unknown,
                state_seq: 0,
                state_since: now,
            });
        }
        let conversation = w.binding.as_ref().map(|b| b.conversation.clone()).unwrap_or_else(|| Arc::from(""));
        let (steering, followup) = match &intent.payload {
            IntentPayload::Steering(s) if reason == AttemptReason::Corrective => (Some(s.clone()), None),
            IntentPayload::Followup(text) if reason == AttemptReason::Followup => (None, Some(text.clone())),
            IntentPayload::Answer(text) if prompt == PromptKind::Answer => (None, Some(text.clone())),
            IntentPayload::DependencyEnded(text) if prompt == PromptKind::DependencyEnded => (None, Some(text.clone())),
            _ => (None, None),
        };
        let attempt = Attempt {
            id: attempt_id,
            worker: id,
            run: w.run,
            sequence: w.attempts,
            reason,
            wake: intent.reasons,
            origin: intent.origin,
            delivery,
            prompt,
            steering,
            followup,
            conversation,
            state: AttemptState::Scheduled,
            outcome: None,
            error_code: None,
            error_detail: None,
            last_progress_cursor: w.progress.last_cursor,
            scheduled_at: now,
            deadline,
            submitted_at: None,
            submitted_state_seq: 0,
            generating_at: None,
            idle_at: None,
            terminal_at: None,
        };
        w.in_flight = Some(attempt_id);
        let (run, sequence) = (w.run, w.attempts);
        self.state.attempts.insert(attempt_id, attempt);
        self.index.add_attempt(id, attempt_id);
        self.emit(
            run,
            Some(id),
            Some(attempt_id),
            EventKind::ExecutionScheduled { reason, wake: intent.reasons, sequence },
        );
        self.conn.never_sent(attempt_id);
        self.send_command(attempt_id);
    }

    /// Whether an in-flight attempt is still wanted: the holds of steps 1-7 for its origin.
    pub(crate) fn in_flight_wanted(&self, a: &Attempt) -> bool {
        let Some(w) = self.state.workers.get(&a.worker) else {
            return false;
        };
        let run_active = self.state.runs.get(&w.run).is_some_and(|r| !r.status.is_terminal());
        let operator = a.origin == Origin::Operator;
        let paused = match &w.pause {
            Some(p) => !(operator && p.reason == PauseReason::Operator),
            None => w.pause_after_turn && !operator,
        };
        let manual = self.effective_policy(w).0.mode == crate::policy::Mode::Manual && a.origin == Origin::Scheduler;
        // A held worker's command is withdrawn too: nothing may be typed while a page
        // shows a limit or a dialog (the wake comes back and waits for the hold to lift).
        let held = self.held(w);
        run_active
            && !w.lifecycle.is_terminal()
            && w.human.is_none()
            && w.dependency.is_none()
            && !paused
            && !manual
            && !held
    }

    /// Withdraws the worker's in-flight continuation if it is no longer wanted
    /// (spec 000 §21.3: terminal or blocking state invalidates it before submission).
    pub(crate) fn withdraw_if_unwanted(&mut self, id: WorkerId) {
        let Some(attempt) = self.state.workers.get(&id).and_then(|w| w.in_flight) else {
            return;
        };
        if !self.in_flight_wanted(&self.state.attempts[&attempt]) {
            self.withdraw(attempt);
        }
    }

    /// Withdraws an in-flight attempt: closed at once when no executor has it, or a
    /// `command.cancel` to the executor that has it (the attempt stays in flight until
    /// the executor answers `CANCELLED`, or reports it submitted after all).
    fn withdraw(&mut self, attempt: AttemptId) {
        if self.conn.take_never_sent(attempt) {
            self.close_attempt(attempt, AttemptState::Cancelled, AttemptOutcome::Withdrawn, None);
            self.restore_intent(attempt, None, false);
            return;
        }
        let Some(executor) = self.conn.sent_to(attempt).cloned() else {
            return;
        };
        if !self.conn.request_cancel(attempt) {
            return;
        }
        let a = &self.state.attempts[&attempt];
        let spec = &self.state.workers[&a.worker].spec;
        let command = control_command(executor, (a, spec), CommandKind::Cancel, a.conversation.clone(), a.deadline);
        self.push_effect(Effect::Command(command));
    }

    /// Asks the executor holding the worker's binding to look at the conversation again
    /// and publish what it sees (no attempt changes: the answer is a `conversation.state`).
    pub(crate) fn inspect(&mut self, id: WorkerId) {
        let now = self.now;
        let w = &self.state.workers[&id];
        if self.held(w) {
            return;
        }
        let (Some(b), Some(aid)) = (&w.binding, w.turn) else { return };
        let Some(executor) = b.executor.clone() else { return };
        let a = &self.state.attempts[&aid];
        let deadline = now.plus_ms(self.config.command_deadline_ms);
        let command = control_command(executor, (a, &w.spec), CommandKind::Inspect, b.conversation.clone(), deadline);
        self.conn.reported(id, now);
        self.push_effect(Effect::Command(command));
    }

    /// Tells an executor to stop managing a conversation the worker no longer uses. The
    /// command names the worker's newest attempt on that conversation or, when none
    /// carries its URL, the newest `conversation.create` (empty conversation): a create
    /// whose answer never came leaves its URL on no attempt, and the conversation it made
    /// was bound from the executor's own report. A worker with neither never had a
    /// conversation handed to an executor by this daemon.
    pub(crate) fn release_conversation(&mut self, executor: ExecutorId, id: WorkerId, conversation: Arc<str>) {
        if !self.conn.is_connected(&executor) || conversation.is_empty() {
            return;
        }
        let attempts = &self.state.attempts;
        let newest_on = |url: &str| {
            self.index.attempts_of(id).rev().find(|a| attempts.get(a).is_some_and(|a| &*a.conversation == url))
        };
        let named = newest_on(&conversation).or_else(|| newest_on(""));
        let Some(a) = named.and_then(|a| attempts.get(&a)) else { return };
        let Some(w) = self.state.workers.get(&id) else { return };
        let deadline = self.now.plus_ms(self.config.command_deadline_ms);
        let command = control_command(executor, (a, &w.spec), CommandKind::Close, conversation, deadline);
        self.push_effect(Effect::Command(command));
    }

    /// Hands an in-flight attempt's command to its executor, unless it already has it
    /// over the current connection or no suitable executor is connected (then the
    /// attempt stays scheduled, durably, until one says hello).
    pub(crate) fn send_command(&mut self, attempt_id: AttemptId) {
        let Some(a) = self.state.attempts.get(&attempt_id) else {
            return;
        };
        if a.state != AttemptState::Scheduled {
            return;
        }
        if !self.in_flight_wanted(a) {
            self.withdraw(attempt_id);
            return;
        }
        if self.conn.sent_to(attempt_id).is_some() {
            return;
        }
        let Some(executor) = self.target_executor(a.worker) else {
            return;
        };
        if self.host_full(&executor, a.worker) {
            // Held by nobody until a slot frees on that host (`fill_free_slots`).
            return;
        }
        let now = self.now;
        if a.deadline <= now {
            let deadline = now.plus_ms(self.config.command_deadline_ms);
            self.state.attempts.get_mut(&attempt_id).expect("attempt exists").deadline = deadline;
        }
        let worker_id = self.state.attempts[&attempt_id].worker;
        let binding = self.state.workers.get(&worker_id).and_then(|w| w.binding.as_ref());
        if binding.is_some_and(|b| b.executor.is_none()) {
            let w = self.state.workers.get_mut(&worker_id).expect("worker exists");
            w.binding.as_mut().expect("binding exists").executor = Some(executor.clone());
        }
        let a = &self.state.attempts[&attempt_id];
        let w = &self.state.workers[&a.worker];
        let rendered = self.render_prompt(w, a);
        let command = ExecutorCommand {
            executor: executor.clone(),
            id: a.command_id(),
            idempotency_key: a.idempotency_key(),
            worker: a.worker,
            attempt: a.id,
            kind: match a.delivery {
                Delivery::Create => CommandKind::Create,
                Delivery::Send => CommandKind::Send,
                Delivery::Steer => CommandKind::Steer,
            },
            conversation: a.conversation.clone(),
            prompt: rendered.text,
            prompt_version: rendered.version.into(),
            deadline: a.deadline,
            executor_kind: w.spec.executor,
            workspace: w.spec.workspace.clone(),
            approval: None,
        };
        self.conn.sent(attempt_id, executor, worker_id);
        self.push_effect(Effect::Command(command));
    }

    /// The executor that must carry the worker's next command: the one holding its
    /// binding, or any connected executor of the worker's kind when nobody holds it yet
    /// (none of that kind connected: the command waits, as with no executor at all).
    pub(crate) fn target_executor(&self, worker: WorkerId) -> Option<ExecutorId> {
        let w = self.state.workers.get(&worker)?;
        let kind = w.spec.executor;
        match w.binding.as_ref().and_then(|b| b.executor.clone()) {
            Some(e) => self.runs_kind(&e, kind).then_some(e),
            // Not one whose account is held, when another is connected; and one with a free
            // slot (on the host and on the account it would run under) before one without.
            None => {
                let mut connected = self.conn.connected().filter(|e| self.runs_kind(e, kind));
                let free = |e: &&ExecutorId| self.has_free_slot(e, w);
                connected
                    .clone()
                    .find(|e| !self.account_held(e, kind) && free(e))
                    .or_else(|| connected.clone().find(|e| !self.account_held(e, kind)))
                    .or_else(|| connected.next())
                    .cloned()
            }
        }
    }

    /// Whether the executor is connected and runs workers of this kind.
    pub(crate) fn runs_kind(&self, executor: &ExecutorId, kind: crate::kind::ExecutorKind) -> bool {
        self.conn.runs_kind(executor, kind)
    }

    /// Puts an undelivered attempt's wake back as a pending continuation.
    pub(crate) fn restore_intent(&mut self, attempt_id: AttemptId, not_before: Option<Timestamp>, idle_only: bool) {
        let a = self.state.attempts[&attempt_id].clone();
        if self.state.workers.get(&a.worker).is_none_or(|w| w.lifecycle.is_terminal()) {
            return;
        }
        let w = self.state.workers.get_mut(&a.worker).expect("worker exists");
        let payload = match (&a.steering, &a.followup) {
            (Some(s), _) => IntentPayload::Steering(s.clone()),
            (_, Some(text)) if a.prompt == PromptKind::Answer => IntentPayload::Answer(text.clone()),
            (_, Some(text)) if a.prompt == PromptKind::DependencyEnded => IntentPayload::DependencyEnded(text.clone()),
            (_, Some(text)) => IntentPayload::Followup(text.clone()),
            _ => IntentPayload::Continue,
        };
        let mut reasons = a.wake;
        if not_before.is_some() {
            reasons.insert(WakeReason::Redelivery);
        }
        let intent = w.intent.get_or_insert(Intent {
            reasons,
            origin: a.origin,
            created_at: self.now,
            not_before: None,
            deferred_until: None,
            idle_only: false,
            payload: IntentPayload::Continue,
        });
        intent.reasons = intent.reasons.union(reasons);
        intent.origin = intent.origin.max(a.origin);
        if !matches!(payload, IntentPayload::Continue) {
            intent.payload = payload;
        }
        intent.not_before = not_before.max(intent.not_before);
        intent.idle_only |= idle_only;
        let (run, reasons, not_before) = (w.run, intent.reasons, intent.not_before);
        self.emit(run, Some(a.worker), Some(attempt_id), EventKind::ResumeScheduled { reasons, not_before });
    }

    /// Removes the wake reasons a just-submitted continuation satisfied (the submission
    /// rewrote the worker already).
    pub(crate) fn settle_intent_after_submission(&mut self, worker: WorkerId) {
        let w = self.state.workers.get_mut(&worker).expect("worker exists");
        if let Some(intent) = &mut w.intent {
            for r in SATISFIED_BY_SUBMISSION {
                intent.reasons.remove(r);
            }
            if intent.reasons.is_empty() {
                w.intent = None;
            }
        }
    }

    /// The prompt of an attempt, generated from durable state only (so a re-send after
    /// a restart renders the same text).
    pub(crate) fn render_prompt(&self, w: &Worker, a: &Attempt) -> Prompt {
        let run = &self.state.runs[&w.run];
        let spec = &w.spec;
        let brief = WorkerBrief {
            task_name: &run.task_name,
            root_conversation_name: &run.root_conversation_name,
            worker_name: &spec.name,
            display_name: &spec.display_name,
            lane_label: &spec.lane_label,
            task_summary: &spec.task_summary,
            objective: &spec.assignment.objective,
            scope: &spec.assignment.scope,
            acceptance_criteria: &spec.assignment.acceptance_criteria,
            worktree: spec.worktree.as_deref(),
        };
        let execution_ref = a.id.to_string();
        let labels = a.wake.labels();
        let attempt = AttemptBrief {
            sequence: a.sequence,
            reason: a.reason.as_str(),
            execution_ref: &execution_ref,
            wake_reasons: &labels,
            last_progress_cursor: a.last_progress_cursor.map(|c| c.0),
        };
        match a.prompt {
            PromptKind::Bootstrap => prompt::bootstrap(&brief, &attempt),
            PromptKind::RootBootstrap => prompt::root_bootstrap(&brief, &attempt),
            PromptKind::Resume => prompt::resume(&brief, &attempt),
            PromptKind::Checkpoint => prompt::checkpoint(&brief, &attempt),
            PromptKind::DeliveryTimeout => prompt::delivery_timeout(),
            PromptKind::CompletionReconcile => prompt::completion_reconcile(&brief, &attempt),
            PromptKind::Recovery => prompt::recovery(&brief, &attempt),
            PromptKind::Followup => prompt::followup(&brief, &attempt, a.followup.as_deref().unwrap_or("")),
            PromptKind::Answer => prompt::answer(&brief, &attempt, a.followup.as_deref().unwrap_or("")),
            PromptKind::DependencyEnded => {
                prompt::dependency_ended(&brief, &attempt, a.followup.as_deref().unwrap_or(""))
            }
            PromptKind::Corrective => {
                let (outcome, message) =
                    a.steering.as_deref().map(|s| (s.outcome.as_str(), &*s.message)).unwrap_or(("", ""));
                prompt::corrective(&brief, &attempt, outcome, message)
            }
        }
    }
}

/// The attempt reason and prompt for a continuation, from its intent and the worker.
fn choose(w: &Worker, intent: &Intent, delivery: Delivery, has_lanes: bool) -> (AttemptReason, PromptKind) {
    let is_root = w.spec.name == prompt::ROOT_WORKER_NAME;
    let bootstrap = if is_root { PromptKind::RootBootstrap } else { PromptKind::Bootstrap };
    if let IntentPayload::Followup(_) = intent.payload {
        return (AttemptReason::Followup, PromptKind::Followup);
    }
    // A root that never had a conversation while its run already has lanes is an
    // orphaned coordinator (003): it gets the recovery prompt, not a fresh bootstrap.
    let orphaned_root = is_root && has_lanes;
    if !w.bootstrapped
        && !orphaned_root
        && (delivery == Delivery::Create || intent.reasons.contains(WakeReason::Initial))
    {
        return (AttemptReason::Initial, bootstrap);
    }
    if delivery == Delivery::Create
        || intent.reasons.contains(WakeReason::Recovery)
        || intent.reasons.contains(WakeReason::DeadMan)
        || (orphaned_root && !w.bootstrapped)
    {
        return (AttemptReason::Recovery, PromptKind::Recovery);
    }
    if let IntentPayload::Steering(_) = intent.payload {
        return (AttemptReason::Corrective, PromptKind::Corrective);
    }
    let manual = intent.origin != Origin::Scheduler;
    let resume_reason = if manual { AttemptReason::ManualResume } else { AttemptReason::AutoResume };
    if intent.reasons.contains(WakeReason::DeliveryTimeout) {
        return (resume_reason, PromptKind::DeliveryTimeout);
    }
    // A person's answer goes in with the question and its choices, in place of the
    // resume (or of a checkpoint it coalesced with).
    if let IntentPayload::Answer(_) = intent.payload {
        return (resume_reason, PromptKind::Answer);
    }
    // So does how a worker it waited for ended, when that worker never will complete.
    if let IntentPayload::DependencyEnded(_) = intent.payload {
        return (resume_reason, PromptKind::DependencyEnded);
    }
    // A lane's keepalive is a checkpoint (spec 000 §10.3, 003 decision 7): report to
    // `/root`, then go on. Mid-turn it is steered in; one that had to wait for the turn's
    // end (no mid-turn steering) keeps its report-to-root part at idle too. A root's
    // keepalive is a resume (it has nobody to report to).
    let keepalive = !manual && intent.reasons.contains(WakeReason::ActiveKeepalive);
    if delivery == Delivery::Steer || keepalive {
        return if is_root {
            (AttemptReason::AutoResume, PromptKind::Resume)
        } else {
            (AttemptReason::Checkpoint, PromptKind::Checkpoint)
        };
    }
    if !manual && intent.reasons.contains(WakeReason::BlockComplete) {
        return (AttemptReason::AutoResume, PromptKind::CompletionReconcile);
    }
    (resume_reason, PromptKind::Resume)
}

/// A command about an attempt that carries no prompt (cancel, inspect, close): it shares
/// the attempt's command id, and its key is derived from the attempt and the kind.
pub(crate) fn control_command(
    executor: ExecutorId,
    (a, spec): (&Attempt, &WorkerSpec),
    kind: CommandKind,
    conversation: Arc<str>,
    deadline: Timestamp,
) -> ExecutorCommand {
    ExecutorCommand {
        executor_kind: spec.executor,
        workspace: spec.workspace.clone(),
        executor,
        id: a.command_id(),
        idempotency_key: format!("{}:{}", kind.as_str(), a.id),
        worker: a.worker,
        attempt: a.id,
        kind,
        conversation,
        prompt: String::new(),
        prompt_version: "".into(),
        deadline,
        approval: None,
    }
}
