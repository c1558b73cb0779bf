//! Executor reports: hello and reconciliation, bindings, conversation states and the page
//! errors they show (what a page error makes the engine do is the table in `failure.rs`;
//! command results are in `results.rs`, steer landings in `landing.rs`). Connection state
//! changes through `Connections`, approval requests through `Approvals`.

use crate::block::{self, BlockStatus};
use crate::connections::ExecutorSession;
use crate::engine::Engine;
use crate::event::EventKind;
use crate::failure::{Failure, Trouble};
use crate::holds::conversation_hold_of;
use crate::ids::*;
use crate::input::*;
use crate::model::*;
use crate::time::Timestamp;
use crate::wake::WakeReason;
use std::sync::Arc;

impl Engine {
    /// Dispatches one executor report.
    pub(crate) fn handle_executor(&mut self, input: ExecutorInput) {
        match input {
            ExecutorInput::Hello { executor, steering, kinds, bindings, journal, turns_max, accounts } => {
                let session = ExecutorSession { steering, kinds, since: self.now, turns_max, accounts };
                self.hello(executor, session, bindings, journal)
            }
            ExecutorInput::Disconnected { executor } => self.disconnected(&executor),
            ExecutorInput::Binding { executor, report } => self.apply_binding(&executor, report, false),
            ExecutorInput::State { executor, worker, observation } => {
                if self.holds_binding(&executor, worker) {
                    self.conn.reported(worker, self.now);
                    self.observe(worker, observation, false);
                }
            }
            ExecutorInput::Result { executor, command, outcome } => {
                self.command_result(&executor, command.attempt, outcome)
            }
            ExecutorInput::SteerLanded { executor, worker, command, landed, seq } => {
                if self.holds_binding(&executor, worker) {
                    self.steer_landed(worker, command.attempt, landed, seq);
                }
            }
        }
    }

    /// A (re)connected executor: journal first (what it already did), then its
    /// bindings and their states, then everything that waited for an executor.
    fn hello(
        &mut self,
        executor: ExecutorId,
        session: ExecutorSession,
        bindings: Vec<BindingReport>,
        journal: Vec<JournalEntry>,
    ) {
        if self.conn.is_connected(&executor) {
            // A new connection replaces the old one: what the old one carried is counted
            // up to now.
            self.executor_leaving(&executor);
        }
        self.executor_back(&session.kinds);
        self.conn.connect(executor.clone(), session);
        for entry in journal {
            self.reconcile_journal(&executor, entry);
        }
        for report in bindings {
            self.apply_binding(&executor, report, true);
        }
        let waiting: Vec<(WorkerId, Option<AttemptId>)> = self
            .state
            .workers
            .values()
            .filter(|w| w.in_flight.is_some() || w.intent.is_some())
            .map(|w| (w.id, w.in_flight))
            .collect();
        for (id, in_flight) in waiting {
            if let Some(attempt) = in_flight {
                let ours = self.target_executor(id).as_ref() == Some(&executor);
                if ours && self.conn.sent_to(attempt).is_none() {
                    self.conn.never_sent(attempt);
                }
                self.send_command(attempt);
            }
            self.evaluate(id);
        }
    }

    /// The executor's connection ended: its commands must be reconciled on its next hello.
    fn disconnected(&mut self, executor: &ExecutorId) {
        self.executor_leaving(executor);
        self.conn.disconnect(executor, self.now);
    }

    /// Whether the executor is the one holding the worker's binding (state reports
    /// from anyone else are ignored).
    pub(crate) fn holds_binding(&self, executor: &ExecutorId, worker: WorkerId) -> bool {
        let b = self.state.workers.get(&worker).and_then(|w| w.binding.as_ref());
        b.is_some_and(|b| b.executor.as_ref() == Some(executor))
    }

    /// Applies one journal line of a reconnecting executor (spec 000 §12.4).
    fn reconcile_journal(&mut self, executor: &ExecutorId, entry: JournalEntry) {
        let attempt = entry.command.attempt;
        let Some(a) = self.state.attempts.get(&attempt) else {
            return;
        };
        if a.state != AttemptState::Scheduled {
            return;
        }
        match entry.phase {
            // The executor holds it (queued, or being submitted right now): its result
            // will follow. An executor that restarted mid-submission resolves that entry
            // itself (proof of delivery, or AMBIGUOUS_SUBMISSION); if no result ever
            // comes, the command deadline fails it closed.
            JournalPhase::Received | JournalPhase::SubmissionStarted => {
                self.conn.held_by(attempt, executor.clone(), a.worker);
            }
            JournalPhase::Submitted | JournalPhase::Completed => {
                self.command_submitted(attempt, executor, entry.state_seq, entry.conversation)
            }
        }
    }

    /// A binding report: verify, update the URL of a fresh conversation, or lose it.
    fn apply_binding(&mut self, executor: &ExecutorId, report: BindingReport, from_hello: bool) {
        let id = report.worker;
        let Some(w) = self.state.workers.get(&id) else {
            return;
        };
        if w.lifecycle.is_terminal() {
            // A finished CLI worker's session still open (an executor that was away when
            // the worker ended, or that restarted): end it now.
            let running = report.observation.as_ref().is_some_and(|o| {
                matches!(o.state, ConversationState::Generating | ConversationState::AwaitingApproval)
            });
            let stopped = w.lifecycle == Lifecycle::Cancelled;
            if report.open && w.spec.executor.is_cli() && (stopped || !running) {
                self.release_conversation(executor.clone(), id, report.conversation);
            }
            return;
        }
        if let Err(why) = self.may_hold(executor, w, &report.conversation) {
            let run = w.run;
            let (executor, conversation) = (executor.clone(), report.conversation);
            self.emit(run, Some(id), None, EventKind::BindingRefused { executor, conversation, why: Arc::from(why) });
            return;
        }
        let Some(b) = &w.binding else { return };
        let creating = b.conversation.is_empty() && b.status == BindingStatus::Pending;
        if !(b.conversation == report.conversation || creating) || b.status == BindingStatus::Lost {
            // A stale lease on a conversation this worker no longer uses: release it, so
            // the executor stops watching a tab nobody will command again.
            if report.open {
                self.release_conversation(executor.clone(), id, report.conversation);
            }
            return;
        }
        if creating && self.index.leasing(&report.conversation).is_some_and(|other| other != id) {
            return; // never adopt a conversation another worker leases
        }
        if !report.open {
            self.lose_binding(id, ConversationState::Closed);
            return;
        }
        let w = self.state.workers.get_mut(&id).expect("worker exists");
        let b = w.binding.as_mut().expect("binding exists");
        let newly_verified = b.status != BindingStatus::Verified || b.conversation != report.conversation;
        b.conversation = report.conversation.clone();
        b.executor = Some(executor.clone());
        b.status = BindingStatus::Verified;
        self.conn.reported(id, self.now);
        let run = w.run;
        if newly_verified {
            self.emit(run, Some(id), None, EventKind::BindingVerified { conversation: report.conversation });
        }
        if let Some(observation) = report.observation {
            self.observe(id, observation, from_hello);
        }
        self.evaluate(id);
    }

    /// Whether an executor may hold a worker's conversation: it runs the worker's kind,
    /// and the conversation id has that kind's form (a browser never binds a CLI worker,
    /// a CLI executor never a ChatGPT one). `Err` says why not.
    fn may_hold(&self, executor: &ExecutorId, w: &Worker, conversation: &str) -> Result<(), String> {
        let kind = w.spec.executor;
        if !self.runs_kind(executor, kind) {
            return Err(format!("executor {executor} does not run {kind} workers"));
        }
        // A CLI worker is pinned to the host that holds its workspace.
        if let Some(pinned) = w.binding.as_ref().and_then(|b| b.executor.as_ref()).filter(|_| kind.is_cli())
            && pinned != executor
        {
            return Err(format!("the worker is pinned to host {pinned}, which holds its workspace"));
        }
        if conversation.is_empty() {
            return Ok(());
        }
        crate::kind::conversation_for(kind, conversation).map_err(|r| r.message)
    }

    /// A coarse state observation. `force` applies it whatever its sequence: a
    /// reconnecting executor republishes its last state under the sequence it was shown
    /// with, which this daemon may have recorded already (it still says what holds now)
    /// or never seen. A turn ends only at an idle newer than its submission, so a
    /// republished pre-submission idle never ends the turn the executor took meanwhile.
    pub(crate) fn observe(&mut self, id: WorkerId, observation: Observation, force: bool) {
        let now = self.now;
        let Some(w) = self.state.workers.get(&id) else {
            return;
        };
        let Some(b) = w.binding.as_ref() else { return };
        if b.status == BindingStatus::Lost || (!force && observation.seq <= b.state_seq) {
            return;
        }
        let previous = b.state;
        self.note_retry(id, &observation);
        let idle_again = matches!(observation.state, ConversationState::Idle | ConversationState::Ready);
        if previous == observation.state
            && !force
            && !idle_again
            && !observation.approval.as_ref().is_some_and(|a| self.approvals.is_new(id, a))
        {
            return; // coalesced duplicate: one report per real transition
        }
        let (held_before, held_now) = (conversation_hold_of(previous), conversation_hold_of(observation.state));
        if held_now.is_some() && held_before.is_none() {
            // The stall clock stops while a dialog or an approval card shows: count the
            // turn up to now.
            self.end_running_segment(id);
        }
        let b = self.state.workers.get_mut(&id).and_then(|w| w.binding.as_mut()).expect("binding exists");
        b.state_seq = observation.seq;
        if previous != observation.state {
            b.state = observation.state;
            b.state_since = now;
        }
        match (held_before, held_now) {
            (Some(before), now) if now != Some(before) => self.conversation_hold_gone(id, before),
            (_, None) => self.forget_dialog(id),
            _ => {}
        }
        if observation.state != ConversationState::AwaitingApproval {
            // The executor has moved past the request answered last: a later request with
            // the same handle (a new child numbers its requests from `apr-1` again) is a
            // new one, not a late report of the answered one.
            self.approvals.moved_past(id);
        }
        match observation.state {
            ConversationState::Generating => self.observed_generating(id, observation.seq, false),
            ConversationState::AwaitingApproval => {
                // The card shows inside a running turn: that turn has started (a submitted
                // turn counts as generating), and it is suspended until a person answers.
                self.observed_generating(id, observation.seq, false);
                self.approvals.shown(id, observation.approval, force);
                self.conversation_hold_shown(id, HoldReason::AwaitingApproval, previous, observation.detail);
            }
            ConversationState::Idle | ConversationState::Ready => {
                let was_idle = matches!(previous, ConversationState::Idle | ConversationState::Ready);
                self.observed_idle(id, observation.seq, was_idle, observation.block.as_deref());
            }
            ConversationState::Error(kind) => {
                self.observed_error(id, kind, previous, observation.until, observation.detail)
            }
            ConversationState::Closed => self.lose_binding(id, ConversationState::Closed),
            ConversationState::Unrecognized => {
                self.conversation_hold_shown(id, HoldReason::PageUnrecognized, previous, observation.detail)
            }
            ConversationState::Unknown => {}
        }
        self.close_finished_cli(id, false);
        self.evaluate(id);
    }

    /// A finished (completed, failed or stopped) CLI worker's session is closed, so its
    /// executor ends the child: a CLI keeps working in the person's repository while it
    /// runs. `now_even_mid_turn` (a stop) closes it whatever it is doing; otherwise it is
    /// closed once its last turn has ended (the agent's closing words after
    /// `worker_complete` are not cut). A ChatGPT tab is left alone (nothing more is typed
    /// into it either way). Repeats are harmless: the executor answers a close of a
    /// closed conversation with nothing.
    pub(crate) fn close_finished_cli(&mut self, id: WorkerId, now_even_mid_turn: bool) {
        let Some(w) = self.state.workers.get(&id) else { return };
        if !w.lifecycle.is_terminal() || !w.spec.executor.is_cli() {
            return;
        }
        let Some(b) = &w.binding else { return };
        let running = matches!(b.state, ConversationState::Generating | ConversationState::AwaitingApproval);
        if b.status == BindingStatus::Lost || b.conversation.is_empty() || (running && !now_even_mid_turn) {
            return;
        }
        let Some(executor) = b.executor.clone() else { return };
        let conversation = b.conversation.clone();
        self.release_conversation(executor, id, conversation);
    }

    /// The attempt whose turn is open (submitted, generating or idle), if any.
    fn open_turn(&self, id: WorkerId) -> Option<&Attempt> {
        let w = self.state.workers.get(&id)?;
        w.turn.and_then(|a| self.state.attempts.get(&a)).filter(|a| !a.state.is_closed())
    }

    /// The conversation is generating; `steered` marks a mid-turn delivery, whose turn is
    /// the generation already running.
    pub(crate) fn observed_generating(&mut self, id: WorkerId, seq: u64, steered: bool) {
        let now = self.now;
        if let Some(a) = self.open_turn(id)
            && a.state == AttemptState::Submitted
            && (steered || seq > a.submitted_state_seq)
        {
            let (aid, run) = (a.id, a.run);
            let a = self.state.attempts.get_mut(&aid).expect("attempt exists");
            a.state = AttemptState::Generating;
            a.generating_at = Some(now);
            self.emit(run, Some(id), Some(aid), EventKind::ExecutionGenerating);
        }
        // A wake about the previous turn's end is moot once a new turn runs. (Not
        // recorded by itself: see `Workers::intent_unrecorded`.)
        let intent = self.state.workers.intent_unrecorded(&id).expect("worker exists");
        if let Some(intent) = intent {
            for r in [WakeReason::Idle, WakeReason::DeliveryTimeout, WakeReason::PageError, WakeReason::BlockComplete] {
                intent.reasons.remove(r);
            }
            if intent.reasons.is_empty() {
                self.cancel_intent(id);
            }
        }
    }

    /// The conversation is idle. Only a report newer than the submission ends the turn:
    /// a republished pre-submission state (same or older sequence) is not a turn end.
    pub(crate) fn observed_idle(&mut self, id: WorkerId, seq: u64, was_idle: bool, block_text: Option<&str>) {
        let now = self.now;
        let turn_ended = self.open_turn(id).filter(|a| {
            matches!(a.state, AttemptState::Submitted | AttemptState::Generating) && seq > a.submitted_state_seq
        });
        let ended = turn_ended.map(|a| (a.id, a.run));
        if let Some((aid, run)) = ended {
            if was_idle {
                // Idle again with a newer sequence: a turn whose generation was never
                // reported (shorter than the executor's coalescing) ended just now.
                let b = self.state.workers.get_mut(&id).and_then(|w| w.binding.as_mut()).expect("binding exists");
                b.state_since = now;
            }
            self.end_running_segment(id);
            let a = self.state.attempts.get_mut(&aid).expect("attempt exists");
            a.state = AttemptState::Idle;
            a.idle_at = Some(now);
            self.emit(run, Some(id), Some(aid), EventKind::ExecutionIdle);
        }
        if ended.is_none() && was_idle {
            return;
        }
        self.apply_pause_after_turn(id);
        if ended.is_none() && self.steer_awaits_its_turn(&self.state.workers[&id]) {
            return; // the turn a queued steer missed ended: the steer's own turn follows
        }
        let block = match (ended, block_text) {
            (Some(_), Some(text)) => self.read_block(id, text),
            _ => None,
        };
        let w = &self.state.workers[&id];
        if w.lifecycle.is_terminal() || w.in_flight.is_some() {
            return;
        }
        if (w.human.is_some() || w.dependency.is_some() || w.pause.is_some())
            && let Some((aid, _)) = ended
        {
            self.close_attempt(aid, AttemptState::Blocked, AttemptOutcome::WorkerBlocked, None);
        }
        let reason = if block == Some(BlockStatus::Complete) { WakeReason::BlockComplete } else { WakeReason::Idle };
        self.wake(id, reason, Origin::Scheduler, IntentPayload::Continue);
    }

    /// "Pause after current turn" takes effect when the turn ends.
    fn apply_pause_after_turn(&mut self, id: WorkerId) {
        if !self.state.workers[&id].pause_after_turn {
            return;
        }
        let w = self.state.workers.get_mut(&id).expect("worker exists");
        w.pause_after_turn = false;
        if w.pause.is_none() {
            self.set_pause(id, PauseReason::Operator, None);
        }
    }

    /// Parses the agent's end-of-response block (untrusted) and records it as one signal.
    fn read_block(&mut self, id: WorkerId, text: &str) -> Option<BlockStatus> {
        let run = self.state.workers[&id].run;
        match block::parse(block::response_tail(text)) {
            Ok(parsed) => {
                self.state.workers.get_mut(&id).expect("worker exists").last_block = Some(parsed.status);
                self.emit(run, Some(id), None, EventKind::BlockReported { status: parsed.status });
                if parsed.status == BlockStatus::Blocked {
                    self.blocked_by_block(id, &parsed.summary, &parsed.next);
                }
                Some(parsed.status)
            }
            Err(e) => {
                self.emit(run, Some(id), None, EventKind::BlockInvalid { code: Arc::from(e.code()) });
                None
            }
        }
    }

    /// The page shows an error card (or a limit, a check, a dialog): `until` and
    /// `detail` are the page's reset time and words, when it gave them. What follows is
    /// the failure table's (`failure.rs`).
    fn observed_error(
        &mut self,
        id: WorkerId,
        kind: ErrorKind,
        previous: ConversationState,
        until: Option<Timestamp>,
        detail: Option<Arc<str>>,
    ) {
        let run = self.state.workers[&id].run;
        let executor = self.state.workers[&id].binding.as_ref().and_then(|b| b.executor.clone());
        if previous != ConversationState::Error(kind) {
            self.emit(run, Some(id), None, EventKind::ConversationError { kind });
        }
        // The turn that was running when the page showed it, if one was.
        let running =
            self.open_turn(id).filter(|a| matches!(a.state, AttemptState::Submitted | AttemptState::Generating));
        let attempt = running.map(|a| a.id);
        let (failure, origin, words) = (Failure::Page(kind), Origin::Scheduler, detail);
        self.react(Trouble { worker: id, failure, attempt, origin, words, until, executor, previous });
    }

    /// A worker that starts waiting (or is paused) while its turn sits idle closes that
    /// turn as blocked: the next turn, if any, comes after the wait.
    pub(crate) fn block_idle_turn(&mut self, id: WorkerId) {
        if let Some(a) = self.open_turn(id).filter(|a| a.state == AttemptState::Idle).map(|a| a.id) {
            self.close_attempt(a, AttemptState::Blocked, AttemptOutcome::WorkerBlocked, None);
        }
    }

    /// The conversation is gone (or full): the lease is lost; the worker keeps its
    /// history and waits for an explicit recovery into a fresh conversation.
    pub(crate) fn lose_binding(&mut self, id: WorkerId, why: ConversationState) {
        let now = self.now;
        let bound = self.state.workers[&id].binding.as_ref();
        if bound.is_none_or(|b| b.status == BindingStatus::Lost) {
            return;
        }
        let w = self.state.workers.get_mut(&id).expect("worker exists");
        let b = w.binding.as_mut().expect("binding exists");
        b.status = BindingStatus::Lost;
        b.state = why;
        b.state_since = now;
        let run = w.run;
        self.forget_dialog(id);
        self.emit(run, Some(id), None, EventKind::BindingLost { why });
        if let Some(aid) = self.open_turn(id).map(|a| a.id) {
            self.close_attempt(
                aid,
                AttemptState::Failed,
                AttemptOutcome::ConversationLost,
                Some("CONVERSATION_CLOSED"),
            );
        }
    }
}
