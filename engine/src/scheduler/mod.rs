//! The continuation scheduler: wakes, the ten-step evaluation of spec 000 §10.2 and the
//! anti-spam floor. `timers.rs` holds each worker's next deadline (keepalive jitter,
//! overdue commands, inspections, the dead-man check) and the tick; `stall.rs` the stall
//! guard (no-progress time and attempts); `slots.rs` the caps on CLI turns at once (per
//! host, per account).

pub(crate) mod slots;
mod stall;
pub(crate) mod timers;

use crate::engine::Engine;
use crate::event::EventKind;
use crate::ids::*;
use crate::limits;
use crate::model::*;
use crate::op::PolicySource;
use crate::policy::{ContinuationPolicy, Mode};
use crate::time::Timestamp;
use crate::wake::{WakeReason, WakeSet};

/// Why a pending continuation is not delivered now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Hold {
    /// Step 3: awaiting human.
    AwaitingHuman,
    /// Step 4: awaiting dependency.
    AwaitingDependency,
    /// Step 5: paused (now or after the current turn).
    Paused,
    /// Step 6: manual policy and nobody explicitly asked.
    Manual,
    /// Step 8: another continuation is in flight.
    InFlight,
    /// The conversation is lost or was never created; needs an explicit recovery.
    NoConversation,
    /// The conversation is generating and this wake needs idle (or steering is unavailable).
    Generating,
    /// The page shows an error that another prompt would not fix.
    PageError,
    /// An account-wide usage or rate limit on the worker's executor, until it lifts.
    AccountLimit,
    /// An unknown dialog covers the worker's conversation.
    Dialog,
    /// A tool-approval card waits for a person in the worker's conversation.
    Approval,
    /// The worker's page shows something its executor does not recognize.
    Unrecognized,
    /// No executor has reported the conversation's state yet.
    StateUnknown,
}

/// What a deliverable continuation waits for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Wait {
    /// The idle grace after the conversation became idle.
    Grace,
    /// The anti-spam floor since the last delivery.
    Floor,
    /// The backoff after a definite non-delivery.
    Backoff,
    /// A report about a newly attached conversation ([`limits::ATTACHED_REPORT_WAIT_MS`]).
    Report,
    /// A free slot on the CLI worker's host, which runs as many turns as its `hello`
    /// allows (looked at again every [`limits::HOST_SLOT_RECHECK_MS`]).
    HostSlot,
    /// A free slot on the account the CLI worker runs under, which its hosts together
    /// run as many turns under as their `hello`s allow (looked at again as often).
    AccountSlot,
}

/// Whether the intent is the turn a `worker_attach` asked for (the first turn of a fresh
/// worker, or the recovery of one moved to another conversation) in a conversation no
/// executor has reported yet, with nothing holding the worker. Only an executor that
/// already manages the conversation reports it (then the turn goes to that executor as
/// usual); one that does not never will, as it takes on only conversations a command
/// names. So after [`limits::ATTACHED_REPORT_WAIT_MS`] the send goes out naming it, and
/// the executor opens it and types once the page allows.
/// A pause holds even an operator's attach: it resumes into the new conversation.
fn attached_and_unreported(w: &Worker, binding: &Binding, intent: &Intent) -> bool {
    binding.status == BindingStatus::Pending
        && !binding.conversation.is_empty()
        && w.pause.is_none()
        && !w.pause_after_turn
        && (intent.reasons.contains(WakeReason::Initial) || intent.reasons.contains(WakeReason::Recovery))
}

/// Whether a new turn may be submitted into the worker's conversation now (idle
/// delivery). A CLI session's usage or rate limit ended the turn that hit it and shows no
/// standing notice: the session is idle, and the account's hold (or pause) decides when
/// the next turn goes in. A ChatGPT turn that ended on an error card other than those
/// (`generic`) leaves the composer to the next turn: the fresh continuation goes in there
/// (`failure.rs`, `ContinueAfterPageError`); a CLI session's stays held.
fn accepts_send(w: &Worker, state: ConversationState) -> bool {
    let cli = w.spec.executor.is_cli();
    let cli_limit = matches!(state, ConversationState::Error(kind) if kind.is_account_limit());
    let page_error = state == ConversationState::Error(ErrorKind::Generic);
    state.accepts_send() || (cli && cli_limit) || (!cli && page_error)
}

/// The latest of several optional waits.
fn latest(waits: [Option<(Timestamp, Wait)>; 4]) -> Option<(Timestamp, Wait)> {
    waits.into_iter().flatten().max_by_key(|(at, _)| *at)
}

/// The verdict of the evaluation order for a worker's pending continuation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Decision {
    /// No pending continuation.
    Nothing,
    /// Steps 1-2: the run or worker is terminal; withdraw it.
    Cancel,
    /// Held until something other than time changes.
    Hold(Hold),
    /// Step 7: the no-progress attempt threshold is reached; pause for stall.
    StallPause,
    /// Step 9 (or idle grace, or retry backoff): deliverable at this time.
    WaitUntil(Timestamp, Wait),
    /// Step 10: deliver now, this way.
    Dispatch(Delivery),
}

impl Engine {
    /// The worker's effective policy and where it comes from.
    pub(crate) fn effective_policy(&self, w: &Worker) -> (ContinuationPolicy, PolicySource) {
        if let Some(p) = w.policy {
            return (p, PolicySource::Worker);
        }
        match self.state.runs.get(&w.run).and_then(|r| r.default_policy) {
            Some(p) => (p, PolicySource::Run),
            None => (self.config.default_policy, PolicySource::Engine),
        }
    }

    /// The derived execution disposition (spec 000 §7.3).
    pub(crate) fn disposition(&self, w: &Worker) -> Disposition {
        match w.lifecycle {
            Lifecycle::Completed => return Disposition::Completed,
            Lifecycle::Failed => return Disposition::Failed,
            Lifecycle::Cancelled => return Disposition::Cancelled,
            Lifecycle::Active => {}
        }
        if w.human.is_some() {
            Disposition::AwaitingHuman
        } else if w.dependency.is_some() {
            Disposition::AwaitingDependency
        } else if w.pause.is_some() {
            Disposition::Paused
        } else if self.conversation_held(w) {
            // A dialog needs a person to close it, an approval card a person to answer it,
            // even while a turn goes on underneath.
            Disposition::AwaitingHuman
        } else if (w.in_flight.is_some() || self.turn_running(w)) && self.carried(w) {
            // A worker whose executor is gone is not reported running, whatever its last
            // reported state: nothing watches or types into its conversation.
            Disposition::Running
        } else {
            Disposition::AwaitingExecution
        }
    }

    /// Whether the worker's current turn is submitted or generating.
    pub(crate) fn turn_running(&self, w: &Worker) -> bool {
        w.turn
            .and_then(|id| self.state.attempts.get(&id))
            .is_some_and(|a| matches!(a.state, AttemptState::Submitted | AttemptState::Generating))
    }

    /// Records a wake for a worker, coalescing it into the pending continuation, then
    /// evaluates. Wakes for terminal workers or runs are dropped (steps 1-2).
    pub(crate) fn wake(&mut self, id: WorkerId, reason: WakeReason, origin: Origin, payload: IntentPayload) {
        let now = self.now;
        let Some(w) = self.state.workers.get(&id) else {
            return;
        };
        let run_terminal = self.state.runs.get(&w.run).is_none_or(|r| r.status.is_terminal());
        if w.lifecycle.is_terminal() || run_terminal {
            return;
        }
        let run = w.run;
        let mut intent = w.intent.clone().unwrap_or(Intent {
            reasons: WakeSet::EMPTY,
            origin: Origin::Scheduler,
            created_at: now,
            not_before: None,
            deferred_until: None,
            idle_only: false,
            payload: IntentPayload::Continue,
        });
        intent.reasons.insert(reason);
        intent.origin = intent.origin.max(origin);
        intent.payload = merge_payload(&intent.payload, payload);
        let (reasons, not_before) = (intent.reasons, intent.not_before);
        if w.intent.as_ref() != Some(&intent) {
            self.state.workers.get_mut(&id).expect("worker exists").intent = Some(intent);
            self.emit(run, Some(id), None, EventKind::ResumeScheduled { reasons, not_before });
        }
        self.evaluate(id);
    }

    /// Withdraws the pending continuation, if any, recording why.
    pub(crate) fn cancel_intent(&mut self, id: WorkerId) {
        if self.state.workers.get(&id).is_none_or(|w| w.intent.is_none()) {
            return;
        }
        let w = self.state.workers.get_mut(&id).expect("worker exists");
        if let Some(intent) = w.intent.take() {
            let run = w.run;
            self.emit(run, Some(id), None, EventKind::ResumeCancelled { reasons: intent.reasons });
        }
    }

    /// Applies the evaluation order to the worker's pending continuation.
    pub(crate) fn evaluate(&mut self, id: WorkerId) {
        self.withdraw_if_unwanted(id);
        let Some(w) = self.state.workers.get(&id) else {
            return;
        };
        match self.decide(w) {
            Decision::Nothing | Decision::Hold(_) => {}
            Decision::Cancel => self.cancel_intent(id),
            Decision::StallPause => self.pause_for_stall(id),
            Decision::WaitUntil(at, wait) => self.defer(id, at, wait),
            Decision::Dispatch(delivery) => {
                self.warn_if_stalling(id);
                self.dispatch(id, delivery);
            }
        }
        // Evaluation may change what the timer depends on without changing the row.
        self.index.mark_stale(id);
    }

    /// Announces a floor deferral once (durably, as provenance); grace and backoff
    /// waits are already implied by durable state.
    fn defer(&mut self, id: WorkerId, at: Timestamp, wait: Wait) {
        let run = self.state.workers[&id].run;
        // Not recorded by itself: see `Workers::intent_unrecorded`.
        let intent = self.state.workers.intent_unrecorded(&id).expect("worker exists");
        let intent = intent.as_mut().expect("deferred intent exists");
        if wait != Wait::Floor || intent.deferred_until == Some(at) {
            return;
        }
        intent.deferred_until = Some(at);
        let reasons = intent.reasons;
        self.emit(run, Some(id), None, EventKind::ExecutionDeferred { reasons, not_before: at });
    }

    /// The ten-step evaluation order of spec 000 §10.2 (pure).
    pub(crate) fn decide(&self, w: &Worker) -> Decision {
        let Some(intent) = &w.intent else {
            return Decision::Nothing;
        };
        // 1-2: terminal run or worker.
        let run_terminal = self.state.runs.get(&w.run).is_none_or(|r| r.status.is_terminal());
        if run_terminal || w.lifecycle.is_terminal() {
            return Decision::Cancel;
        }
        // 3-4: explicit waits.
        if w.human.is_some() {
            return Decision::Hold(Hold::AwaitingHuman);
        }
        if w.dependency.is_some() {
            return Decision::Hold(Hold::AwaitingDependency);
        }
        // 5: pauses (an operator action passes an operator pause, never a stall it did not acknowledge).
        let pass_pause = intent.origin == Origin::Operator;
        if let Some(p) = &w.pause
            && !(pass_pause && p.reason == PauseReason::Operator)
        {
            return Decision::Hold(Hold::Paused);
        }
        if w.pause_after_turn && !pass_pause {
            return Decision::Hold(Hold::Paused);
        }
        // Holds from what pages show, for every origin: the page is the truth. Before the
        // stall guard, since waiting on a limit, a dialog or an approval is not a stall.
        match self.conversation_hold(w) {
            Some(HoldReason::AwaitingApproval) => return Decision::Hold(Hold::Approval),
            Some(HoldReason::PageUnrecognized) => return Decision::Hold(Hold::Unrecognized),
            Some(_) => return Decision::Hold(Hold::Dialog),
            None => {}
        }
        if self.account_hold(w).is_some() {
            return Decision::Hold(Hold::AccountLimit);
        }
        // 6: manual policy.
        let (policy, _) = self.effective_policy(w);
        if policy.mode == Mode::Manual && intent.origin == Origin::Scheduler {
            return Decision::Hold(Hold::Manual);
        }
        // 7: stall guard (attempt threshold; the time threshold runs on timers).
        if intent.origin == Origin::Scheduler
            && policy.stall_pause_after_no_progress_attempts.is_some_and(|max| w.progress.attempts_without >= max)
        {
            return Decision::StallPause;
        }
        // 8: one continuation in flight per worker (a steer queued as the next turn is
        // on its way too, until that turn is seen starting).
        if w.in_flight.is_some() || self.steer_awaits_its_turn(w) {
            return Decision::Hold(Hold::InFlight);
        }
        let binding = match &w.binding {
            Some(b) if b.status != BindingStatus::Lost => b,
            _ => {
                let may_create = intent.origin == Origin::Operator
                    || intent.reasons.contains(WakeReason::Initial)
                    || intent.reasons.contains(WakeReason::DeadMan);
                return if may_create {
                    match self.slot_at(w) {
                        Some((at, wait)) => Decision::WaitUntil(at, wait),
                        None => Decision::Dispatch(Delivery::Create),
                    }
                } else {
                    Decision::Hold(Hold::NoConversation)
                };
            }
        };
        let backoff = intent.not_before.filter(|t| *t > self.now).map(|t| (t, Wait::Backoff));
        match binding.state {
            state if accepts_send(w, state) => {
                let grace = Some((binding.state_since.plus_ms(policy.idle_grace_ms), Wait::Grace));
                // Material corrective steering is never held by the floor, idle or not
                // (spec 000 §10.4, 003 decision 10).
                let bypass = policy.idle_may_bypass_min_spacing || is_material(intent);
                let floor = if bypass { None } else { self.floor_at(w, &policy) };
                match latest([grace, floor, backoff, self.slot_at(w)]) {
                    Some((at, wait)) if at > self.now => Decision::WaitUntil(at, wait),
                    _ => Decision::Dispatch(Delivery::Send),
                }
            }
            ConversationState::Generating => {
                if intent.idle_only || intent.reasons.all_need_idle() || !self.can_steer(binding) {
                    return Decision::Hold(Hold::Generating);
                }
                let floor = if is_material(intent) { None } else { self.floor_at(w, &policy) };
                match latest([floor, backoff, None, None]) {
                    Some((at, wait)) if at > self.now => Decision::WaitUntil(at, wait),
                    _ => Decision::Dispatch(Delivery::Steer),
                }
            }
            ConversationState::Error(kind) if kind.stops_typing() => Decision::Hold(Hold::PageError),
            ConversationState::Error(_) if intent.origin == Origin::Operator => {
                match latest([backoff, self.slot_at(w), None, None]) {
                    Some((at, wait)) => Decision::WaitUntil(at, wait),
                    None => Decision::Dispatch(Delivery::Send),
                }
            }
            ConversationState::Error(_) => Decision::Hold(Hold::PageError),
            ConversationState::Closed => Decision::Hold(Hold::NoConversation),
            ConversationState::Unknown if attached_and_unreported(w, binding, intent) => {
                let report = Some((binding.state_since.plus_ms(limits::ATTACHED_REPORT_WAIT_MS), Wait::Report));
                match latest([report, backoff, self.slot_at(w), None]) {
                    Some((at, wait)) if at > self.now => Decision::WaitUntil(at, wait),
                    _ => Decision::Dispatch(Delivery::Send),
                }
            }
            _ => Decision::Hold(Hold::StateUnknown),
        }
    }

    /// Step 9: when the anti-spam floor allows the next non-idle delivery.
    fn floor_at(&self, w: &Worker, policy: &ContinuationPolicy) -> Option<(Timestamp, Wait)> {
        w.last_delivery_at.map(|t| (t.plus_ms(policy.min_continuation_spacing_ms), Wait::Floor))
    }

    /// Whether the executor holding the binding is connected and can steer mid-turn.
    fn can_steer(&self, b: &Binding) -> bool {
        b.executor.as_ref().is_some_and(|e| self.conn.can_steer(e))
    }
}

/// Whether a pending continuation is material corrective steering (bypasses the floor).
fn is_material(intent: &Intent) -> bool {
    matches!(&intent.payload, IntentPayload::Steering(s) if s.material)
}

/// Coalesces payloads: a follow-up outranks steering, which outranks a person's answer,
/// which outranks a plain continue; a newer one of a kind replaces an older one. (An
/// answer that gives way is still the worker's `humanAnswer` in `worker_get`.)
fn merge_payload(current: &IntentPayload, new: IntentPayload) -> IntentPayload {
    match (current, new) {
        (IntentPayload::Followup(_), IntentPayload::Followup(text)) => IntentPayload::Followup(text),
        (IntentPayload::Followup(text), _) => IntentPayload::Followup(text.clone()),
        (_, IntentPayload::Followup(text)) => IntentPayload::Followup(text),
        (_, IntentPayload::Steering(s)) => IntentPayload::Steering(s),
        (IntentPayload::Steering(s), IntentPayload::Answer(_)) => IntentPayload::Steering(s.clone()),
        (_, IntentPayload::Answer(text)) => IntentPayload::Answer(text),
        // A person's answer or the root's steering goes first; the ended dependency stays
        // in the worker's events (`worker.dependency_ended`).
        (IntentPayload::Steering(s), IntentPayload::DependencyEnded(_)) => IntentPayload::Steering(s.clone()),
        (IntentPayload::Answer(text), IntentPayload::DependencyEnded(_)) => IntentPayload::Answer(text.clone()),
        (_, IntentPayload::DependencyEnded(text)) => IntentPayload::DependencyEnded(text),
        (current, IntentPayload::Continue) => current.clone(),
    }
}
