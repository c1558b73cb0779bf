//! Command results from executors: a submission makes the attempt the worker's turn,
//! a failure does what the table in `failure.rs` says (a definite non-delivery gives its
//! wake back, with a backoff; anything that may have been delivered fails closed, spec
//! 000 §22), and attempts close with their outcome.

use crate::engine::Engine;
use crate::event::EventKind;
use crate::failure::{Failure, Trouble};
use crate::ids::*;
use crate::input::*;
use crate::limits::ERROR_DETAIL_BYTES_MAX;
use crate::model::*;
use crate::validate::truncate_detail;
use std::sync::Arc;

impl Engine {
    /// A command result from an executor.
    pub(crate) fn command_result(&mut self, executor: &ExecutorId, attempt: AttemptId, outcome: CommandOutcome) {
        let Some(a) = self.state.attempts.get(&attempt) else {
            return;
        };
        if a.state != AttemptState::Scheduled {
            return; // a duplicate or late result: the first one won
        }
        match outcome {
            CommandOutcome::Accepted => self.conn.accepted(attempt, executor.clone(), a.worker),
            CommandOutcome::Submitted { state_seq, conversation } => {
                self.command_submitted(attempt, executor, state_seq, conversation)
            }
            CommandOutcome::Failed { code, detail } => self.command_failed(attempt, code, &detail),
        }
    }

    /// The prompt reached the conversation: the attempt is the worker's current turn.
    pub(crate) fn command_submitted(
        &mut self,
        attempt: AttemptId,
        executor: &ExecutorId,
        state_seq: u64,
        conversation: Option<Arc<str>>,
    ) {
        let now = self.now;
        self.conn.answered(attempt);
        let a = self.state.attempts.get_mut(&attempt).expect("attempt exists");
        debug_assert_eq!(a.state, AttemptState::Scheduled);
        a.state = AttemptState::Submitted;
        a.submitted_at = Some(now);
        a.submitted_state_seq = state_seq;
        let (id, run, delivery, reason) = (a.worker, a.run, a.delivery, a.reason);
        let digest = a.steering.as_ref().map(|s| s.digest);
        if delivery == Delivery::Create
            && let Some(url) = &conversation
        {
            a.conversation = url.clone();
        }
        self.emit(run, Some(id), Some(attempt), EventKind::ExecutionSubmitted);
        let previous = self.state.workers[&id].turn.filter(|p| *p != attempt);
        if let Some(prev) = previous.filter(|p| !self.state.attempts[p].state.is_closed()) {
            let outcome = if delivery == Delivery::Steer { AttemptOutcome::Steered } else { AttemptOutcome::TurnEnded };
            self.close_attempt(prev, AttemptState::Completed, outcome, None);
        }
        let w = self.state.workers.get_mut(&id).expect("worker exists");
        w.in_flight = None;
        w.turn = Some(attempt);
        w.last_delivery_at = Some(now);
        w.keepalive_seq += 1;
        w.keepalive_draw = crate::scheduler::timers::keepalive_draw(self.state.ids.seed(), id, w.keepalive_seq);
        w.keepalive_fired = false;
        w.delivery_failures = 0;
        if w.bootstrapped && !w.progress.since_submission {
            w.progress.attempts_without += 1;
        }
        if !w.bootstrapped {
            w.bootstrapped = true;
        }
        w.progress.since_submission = false;
        if matches!(reason, AttemptReason::AutoResume | AttemptReason::Checkpoint) {
            w.auto_resumes += 1;
        }
        if digest.is_some() {
            w.last_steering_digest = digest;
        }
        if delivery == Delivery::Create
            && let Some(b) = w.binding.as_mut()
        {
            if let Some(url) = conversation {
                b.conversation = url;
            }
            b.executor = Some(executor.clone());
            b.state_seq = state_seq;
        }
        let terminal = w.lifecycle;
        self.settle_intent_after_submission(id);
        if terminal.is_terminal() {
            let outcome = terminal_outcome(terminal);
            self.close_attempt(attempt, AttemptState::Completed, outcome, None);
            return;
        }
        self.catch_up_turn(id, state_seq, delivery == Delivery::Steer);
        self.evaluate(id);
    }

    /// The worker's current turn was just submitted (or re-booked) after its conversation
    /// reported `state_seq`: applies what the conversation reported since. A steer's turn
    /// is the generation already running.
    pub(crate) fn catch_up_turn(&mut self, id: WorkerId, state_seq: u64, steer: bool) {
        let binding_state = self.state.workers[&id].binding.as_ref().map(|b| (b.state, b.state_seq));
        match binding_state {
            Some((ConversationState::Generating | ConversationState::AwaitingApproval, seq))
                if steer || seq > state_seq =>
            {
                self.observed_generating(id, seq, steer);
            }
            Some((ConversationState::Idle | ConversationState::Ready, seq)) if seq > state_seq => {
                // The whole turn already ran before the result arrived.
                self.observed_generating(id, seq, false);
                self.observed_idle(id, seq, false, None);
            }
            _ => {}
        }
    }

    /// The command failed: what follows is the failure table's (`failure.rs`). Definite
    /// non-deliveries put the wake back; anything that may have been delivered fails
    /// closed (spec 000 §22).
    pub(crate) fn command_failed(&mut self, attempt: AttemptId, code: ExecErrorCode, detail: &str) {
        self.conn.answered(attempt);
        let a = &self.state.attempts[&attempt];
        let (id, origin) = (a.worker, a.origin);
        if a.delivery == Delivery::Create {
            // No conversation came out of it (or none we can trust): no half binding.
            self.forget_pending_binding(id);
        }
        let detail = truncate_detail(detail, ERROR_DETAIL_BYTES_MAX);
        {
            let a = self.state.attempts.get_mut(&attempt).expect("attempt exists");
            a.error_detail = (!detail.is_empty()).then(|| Arc::from(detail.as_str()));
        }
        let failure = Failure::Command(&code);
        let words = Some(Arc::from(detail.as_str()));
        let previous = ConversationState::Unknown; // (only a dialog reads it)
        let trouble = Trouble {
            worker: id,
            failure,
            attempt: Some(attempt),
            origin,
            words,
            until: None,
            executor: None,
            previous,
        };
        self.react(trouble);
        self.evaluate(id);
    }

    /// A definite non-delivery: the wake comes back after a backoff, and after several
    /// in a row the worker is paused for a person to look.
    pub(crate) fn retry_after_non_delivery(&mut self, id: WorkerId, attempt: AttemptId) {
        // (The closed attempt rewrote the worker already.)
        let w = self.state.workers.get_mut(&id).expect("worker exists");
        w.delivery_failures += 1;
        if w.delivery_failures >= self.config.delivery_failures_max {
            let detail = "Several deliveries in a row did not reach the conversation. Check the tab, then resume.";
            self.restore_intent(attempt, None, false);
            self.set_pause(id, PauseReason::DeliveryFailing, Some(detail));
        } else {
            let retry_at = self.now.plus_ms(self.config.delivery_retry_backoff_ms);
            self.restore_intent(attempt, Some(retry_at), false);
        }
    }

    /// A connected executor never answered by the deadline: fail closed.
    pub(crate) fn command_unanswered(&mut self, attempt: AttemptId) {
        self.command_failed(
            attempt,
            ExecErrorCode::AmbiguousSubmission,
            "no result from the executor by the command deadline",
        );
    }

    /// A `conversation.create` that never produced a conversation leaves no binding.
    pub(crate) fn forget_pending_binding(&mut self, id: WorkerId) {
        let w = &self.state.workers[&id];
        if w.binding.as_ref().is_some_and(|b| b.conversation.is_empty()) {
            self.state.workers.get_mut(&id).expect("worker exists").binding = None;
        }
    }

    /// Closes an attempt with a final state and outcome.
    pub(crate) fn close_attempt(
        &mut self,
        attempt: AttemptId,
        state: AttemptState,
        outcome: AttemptOutcome,
        code: Option<&str>,
    ) {
        debug_assert!(state.is_closed());
        let now = self.now;
        if self.state.attempts[&attempt].state.is_closed() {
            return;
        }
        let a = self.state.attempts.get_mut(&attempt).expect("attempt exists");
        if a.state == AttemptState::Scheduled {
            self.conn.closed(attempt);
        }
        a.state = state;
        a.outcome = Some(outcome);
        a.terminal_at = Some(now);
        if let Some(code) = code {
            a.error_code = Some(Arc::from(code));
        }
        let (id, run) = (a.worker, a.run);
        let w = self.state.workers.get_mut(&id).expect("worker exists");
        if w.turn == Some(attempt) {
            w.turn = None;
        }
        if w.in_flight == Some(attempt) {
            w.in_flight = None;
        }
        self.emit(run, Some(id), Some(attempt), EventKind::ExecutionEnded { state, outcome });
    }
}

/// The attempt outcome matching a terminal worker lifecycle.
pub(crate) fn terminal_outcome(lifecycle: Lifecycle) -> AttemptOutcome {
    match lifecycle {
        Lifecycle::Completed => AttemptOutcome::WorkerCompleted,
        Lifecycle::Failed => AttemptOutcome::WorkerFailed,
        _ => AttemptOutcome::WorkerCancelled,
    }
}
