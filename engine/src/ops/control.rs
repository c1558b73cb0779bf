//! Operator and root controls: pause, resume, continue now, policy, root steering.
//!
//! Pause, Continue now and Stop stay distinct (spec 000 §15): pause holds automatic
//! continuation and keeps the worker unfinished; continue now asks for exactly one
//! turn; stop (`worker_interrupt`) is terminal.

use crate::engine::Engine;
use crate::event::EventKind;
use crate::ids::*;
use crate::limits::*;
use crate::model::*;
use crate::op::{ContinueNowOutcome, Reply, shared};
use crate::policy::PolicyPatch;
use crate::reject::{Rejection, RejectionCode};
use crate::validate;
use crate::wake::WakeReason;
use std::sync::Arc;

impl Engine {
    /// Sets a pause (idempotent for the same reason).
    pub(crate) fn set_pause(&mut self, id: WorkerId, reason: PauseReason, detail: Option<&str>) {
        let now = self.now;
        if self.state.workers[&id].pause.as_ref().is_some_and(|p| p.reason == reason) {
            return;
        }
        let w = self.state.workers.get_mut(&id).expect("worker exists");
        w.pause = Some(Pause { reason, at: now, detail: detail.map(shared) });
        if reason == PauseReason::Stall {
            w.progress.stall = StallState::Paused;
        }
        let run = w.run;
        self.emit(run, Some(id), None, EventKind::WorkerPaused { reason, after_turn: false });
        self.block_idle_turn(id);
        self.evaluate(id);
    }

    /// Pauses now, or after the current turn when one is running.
    pub(crate) fn pause_worker(&mut self, id: WorkerId, after_current_turn: bool) {
        let w = &self.state.workers[&id];
        if w.pause.is_some() {
            return;
        }
        let running = self.turn_running(w) || w.in_flight.is_some();
        if after_current_turn && running {
            if w.pause_after_turn {
                return;
            }
            let w = self.state.workers.get_mut(&id).expect("worker exists");
            w.pause_after_turn = true;
            let run = w.run;
            self.emit(run, Some(id), None, EventKind::WorkerPaused { reason: PauseReason::Operator, after_turn: true });
            self.evaluate(id);
        } else {
            self.state.workers.get_mut(&id).expect("worker exists").pause_after_turn = false;
            self.set_pause(id, PauseReason::Operator, None);
        }
    }

    /// Clears every pause (a stall pause is acknowledged, keeping its history).
    pub(crate) fn resume_worker(&mut self, id: WorkerId) {
        self.acknowledge_stall(id);
        let w = &self.state.workers[&id];
        let (run, had_pause) = (w.run, w.pause.is_some() || w.pause_after_turn);
        if had_pause {
            let w = self.state.workers.get_mut(&id).expect("worker exists");
            w.pause = None;
            w.pause_after_turn = false;
            let cursor = self.emit(run, Some(id), None, EventKind::WorkerResumed);
            self.record_progress(id, Some(cursor));
        }
        let w = &self.state.workers[&id];
        if self.effective_policy(w).0.mode == crate::policy::Mode::Auto {
            self.wake(id, WakeReason::Resumed, Origin::Scheduler, IntentPayload::Continue);
        } else {
            self.evaluate(id);
        }
    }

    pub(crate) fn worker_pause(&mut self, id: WorkerId, after_current_turn: bool) -> Result<Reply, Rejection> {
        self.active_worker(id)?;
        self.pause_worker(id, after_current_turn);
        self.worker_reply(id)
    }

    pub(crate) fn worker_resume(&mut self, id: WorkerId) -> Result<Reply, Rejection> {
        self.active_worker(id)?;
        self.resume_worker(id);
        self.worker_reply(id)
    }

    /// A person's answer to the approval request holding the worker: valid only while the
    /// worker's conversation is `awaiting_approval` on that very request and its executor
    /// is connected. The request stops being answerable at once (at most one answer per
    /// request); the executor's `command.result` and its next state say what came of it.
    pub(crate) fn worker_approval_answer(
        &mut self,
        id: WorkerId,
        approval: &str,
        decision: ApprovalDecision,
    ) -> Result<Reply, Rejection> {
        let w = self.active_worker(id)?;
        let refuse = |why: String| Err(Rejection::new(RejectionCode::NotAwaitingApproval, &why));
        let held = w
            .binding
            .as_ref()
            .filter(|b| b.status != BindingStatus::Lost && b.state == ConversationState::AwaitingApproval);
        let Some(b) = held else {
            return refuse(format!("worker {id} is not waiting for an approval"));
        };
        let Some(pending) = self.approvals.waiting(id) else {
            return refuse(format!(
                "worker {id} waits for an approval nobody can answer here (a ChatGPT card is answered in its page)"
            ));
        };
        if &*pending.id != approval {
            return refuse(format!("approval {approval} is not the one worker {id} waits for ({})", pending.id));
        }
        let executor = b.executor.clone().filter(|e| self.conn.is_connected(e));
        let (Some(executor), Some(turn)) = (executor, w.turn) else {
            return refuse(format!("no executor holds worker {id}'s session now: answer when it is back"));
        };
        let a = &self.state.attempts[&turn];
        let deadline = self.now.plus_ms(self.config.command_deadline_ms);
        let conversation = b.conversation.clone();
        let mut command = crate::dispatch::control_command(
            executor,
            (a, &w.spec),
            crate::effect::CommandKind::ApprovalAnswer,
            conversation,
            deadline,
        );
        command.idempotency_key = format!("{}:{}", command.idempotency_key, pending.id);
        command.approval = Some(crate::effect::ApprovalAnswer { id: pending.id.clone(), decision });
        self.approvals.answer(id, approval);
        self.push_effect(crate::effect::Effect::Command(command));
        self.worker_reply(id)
    }

    /// Exactly one manual attempt (spec 000 §8.3, 001 C2.4). While generating, one
    /// post-turn resume is queued (the deterministic, visible choice of §15.2).
    pub(crate) fn worker_continue_now(
        &mut self,
        id: WorkerId,
        override_wait: bool,
        clear_pause: bool,
    ) -> Result<Reply, Rejection> {
        let w = self.active_worker(id)?;
        if w.human.is_some() && !override_wait {
            return Err(Rejection::new(
                RejectionCode::WorkerAwaitingHuman,
                &format!(
                    "worker {id} needs a human answer: resolve it with worker_resolve_human, or pass overrideWait"
                ),
            ));
        }
        if w.dependency.is_some() && !override_wait {
            return Err(Rejection::new(
                RejectionCode::WorkerAwaitingDependency,
                &format!(
                    "worker {id} waits for a dependency: release it with worker_release_dependency, or pass overrideWait"
                ),
            ));
        }
        let already = w.in_flight.is_some() || w.intent.as_ref().is_some_and(|i| i.origin == Origin::Operator);
        if override_wait {
            self.clear_waits(id);
        }
        self.acknowledge_stall(id);
        let w = &self.state.workers[&id];
        if clear_pause && (w.pause.is_some() || w.pause_after_turn) {
            let w = self.state.workers.get_mut(&id).expect("worker exists");
            w.pause = None;
            w.pause_after_turn = false;
            let run = w.run;
            self.emit(run, Some(id), None, EventKind::WorkerResumed);
        }
        if already {
            return self.continue_reply(id, ContinueNowOutcome::AlreadyPending);
        }
        let w = &self.state.workers[&id];
        let lost = w.binding.as_ref().is_none_or(|b| b.status == BindingStatus::Lost);
        let generating = w.binding.as_ref().is_some_and(|b| b.state == ConversationState::Generating);
        let outcome = if lost {
            ContinueNowOutcome::Recovering
        } else if generating {
            ContinueNowOutcome::QueuedAfterTurn
        } else {
            ContinueNowOutcome::Scheduled
        };
        self.wake(id, WakeReason::ContinueNow, Origin::Operator, IntentPayload::Continue);
        self.continue_reply(id, outcome)
    }

    fn continue_reply(&self, id: WorkerId, outcome: ContinueNowOutcome) -> Result<Reply, Rejection> {
        Ok(Reply::ContinueNow { outcome, worker: Box::new(self.worker_view(id).expect("worker exists")) })
    }

    pub(crate) fn worker_continuation_get(&self, id: WorkerId) -> Result<Reply, Rejection> {
        let w = self.find_worker(id)?;
        let (effective, source) = self.effective_policy(w);
        Ok(Reply::Policy { effective, source })
    }

    pub(crate) fn worker_continuation_set(
        &mut self,
        id: WorkerId,
        patch: &PolicyPatch,
        inherit: bool,
    ) -> Result<Reply, Rejection> {
        let w = self.active_worker(id)?;
        let policy = if inherit {
            if *patch != PolicyPatch::default() {
                return Err(Rejection::invalid(
                    "inherit",
                    "inherit drops the override; do not combine it with policy fields",
                ));
            }
            None
        } else {
            patch.check_worker_fields()?;
            let p = self.effective_policy(w).0.patched(patch);
            p.validate()?;
            Some(p)
        };
        let w = self.state.workers.get_mut(&id).expect("worker exists");
        w.policy = policy;
        let run = w.run;
        let w = &self.state.workers[&id];
        let mode = self.effective_policy(w).0.mode;
        self.emit(run, Some(id), None, EventKind::PolicyChanged { mode, inherited: inherit });
        self.evaluate(id);
        self.worker_continuation_get(id)
    }

    /// Root review outcome for a lane (spec 000 §10.4). Material corrections bypass the
    /// anti-spam floor; identical corrections coalesce.
    pub(crate) fn worker_steer(
        &mut self,
        id: WorkerId,
        outcome: SteeringOutcome,
        message: &str,
        material: Option<bool>,
    ) -> Result<Reply, Rejection> {
        let w = self.active_worker(id)?;
        validate::text("message", message, MESSAGE_BYTES_MAX)?;
        if self.state.runs[&w.run].root == id {
            return Err(Rejection::invalid("workerId", "root steering targets a lane, not /root itself"));
        }
        let may_be_material = !matches!(outcome, SteeringOutcome::ContinueAsPlanned | SteeringOutcome::Pause);
        let material = material.unwrap_or(outcome == SteeringOutcome::CorrectDirection);
        if material && !may_be_material {
            return Err(Rejection::invalid("material", &format!("{} is never material", outcome.as_str())));
        }
        let digest = validate::digest(&[outcome.as_str(), message]);
        let pending_same =
            matches!(&w.intent, Some(Intent { payload: IntentPayload::Steering(s), .. }) if s.digest == digest);
        let delivered_same = w.last_steering_digest == Some(digest);
        let coalesced = pending_same || delivered_same;
        let run = w.run;
        self.emit(run, Some(id), None, EventKind::SteeringRecorded { outcome, material, coalesced });
        if !coalesced {
            match outcome {
                SteeringOutcome::Pause => self.pause_worker(id, true),
                _ => {
                    if outcome == SteeringOutcome::ProvideDependency && self.state.workers[&id].dependency.is_some() {
                        self.release_dependency(id, false, WakeReason::DependencyReleased, IntentPayload::Continue);
                    }
                    let steering = Steering { outcome, message: shared(message), material, digest };
                    self.wake(id, WakeReason::Steering, Origin::Root, IntentPayload::Steering(Arc::new(steering)));
                }
            }
        }
        Ok(Reply::Steer { coalesced, worker: Box::new(self.worker_view(id).expect("worker exists")) })
    }
}
