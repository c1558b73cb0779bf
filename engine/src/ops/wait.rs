//! Explicit waits: human input ("Needs you") and dependencies (spec 000 §14).

use crate::engine::Engine;
use crate::event::EventKind;
use crate::ids::*;
use crate::limits::*;
use crate::model::*;
use crate::op::{Reply, shared};
use crate::reject::{Rejection, RejectionCode};
use crate::validate;
use crate::wake::WakeReason;
use std::sync::Arc;

impl Engine {
    pub(crate) fn worker_await_human(
        &mut self,
        id: WorkerId,
        reason: &str,
        question: &str,
        choices: Vec<String>,
    ) -> Result<Reply, Rejection> {
        self.active_worker(id)?;
        validate::text("reason", reason, SUMMARY_BYTES_MAX)?;
        validate::text("question", question, SUMMARY_BYTES_MAX)?;
        if choices.len() > HUMAN_CHOICES_COUNT_MAX {
            return Err(Rejection::invalid("choices", &format!("at most {HUMAN_CHOICES_COUNT_MAX} choices")));
        }
        for c in &choices {
            validate::name("choices", c)?;
        }
        self.begin_human_wait(id, reason, question, choices, WaitSource::Call);
        self.worker_reply(id)
    }

    /// Records a human wait (from a call or a `blocked` block); a blocker is progress
    /// and an event wake for `/root`.
    pub(crate) fn begin_human_wait(
        &mut self,
        id: WorkerId,
        reason: &str,
        question: &str,
        choices: Vec<String>,
        source: WaitSource,
    ) {
        let now = self.now;
        let w = self.state.workers.get_mut(&id).expect("worker exists");
        w.human = Some(Arc::new(HumanWait {
            reason: shared(reason),
            question: shared(question),
            choices: choices.iter().map(|c| shared(c)).collect(),
            requested_at: now,
            source,
        }));
        let run = w.run;
        let cursor = self.emit(run, Some(id), None, EventKind::WorkerAwaitingHuman { reason: shared(reason) });
        self.record_progress(id, Some(cursor));
        self.block_idle_turn(id);
        self.wake_root(id, WakeReason::LaneBlocked);
        self.evaluate(id);
    }

    pub(crate) fn worker_resolve_human(&mut self, id: WorkerId, answer: &str) -> Result<Reply, Rejection> {
        let w = self.active_worker(id)?;
        validate::text("answer", answer, MESSAGE_BYTES_MAX)?;
        if w.human.is_none() {
            return Err(Rejection::new(
                RejectionCode::NotAwaitingHuman,
                &format!("worker {id} is not waiting for a human"),
            ));
        }
        let w = self.state.workers.get_mut(&id).expect("worker exists");
        w.human = None;
        w.human_answer = Some(shared(answer));
        let run = w.run;
        let cursor = self.emit(run, Some(id), None, EventKind::WorkerHumanResolved);
        self.record_progress(id, Some(cursor));
        self.wake(id, WakeReason::HumanResolved, Origin::Root, IntentPayload::Continue);
        self.worker_reply(id)
    }

    pub(crate) fn worker_await_dependency(
        &mut self,
        id: WorkerId,
        condition: DependencyCondition,
        reason: &str,
    ) -> Result<Reply, Rejection> {
        let w = self.active_worker(id)?;
        validate::text("reason", reason, SUMMARY_BYTES_MAX)?;
        match &condition {
            DependencyCondition::WorkerCompleted(other) => {
                let dep = self.find_worker(*other)?;
                if *other == id {
                    return Err(Rejection::invalid("dependency.workerId", "a worker cannot wait for itself"));
                }
                if dep.run != w.run {
                    return Err(Rejection::invalid(
                        "dependency.workerId",
                        "the dependency must belong to the same run",
                    ));
                }
                if dep.lifecycle == Lifecycle::Completed {
                    return Err(Rejection::invalid(
                        "dependency.workerId",
                        &format!("{} already completed; no need to wait", dep.spec.name),
                    ));
                }
                if dep.lifecycle.is_terminal() {
                    return Err(Rejection::invalid(
                        "dependency.workerId",
                        &format!("{} is {} and will never complete", dep.spec.name, dep.lifecycle.as_str()),
                    ));
                }
            }
            DependencyCondition::External(text) => validate::text("dependency.description", text, SUMMARY_BYTES_MAX)?,
        }
        let now = self.now;
        let w = self.state.workers.get_mut(&id).expect("worker exists");
        w.dependency = Some(Arc::new(DependencyWait { condition, reason: shared(reason), requested_at: now }));
        let run = w.run;
        let cursor = self.emit(run, Some(id), None, EventKind::WorkerAwaitingDependency { reason: shared(reason) });
        self.record_progress(id, Some(cursor));
        self.block_idle_turn(id);
        self.wake_root(id, WakeReason::LaneBlocked);
        self.evaluate(id);
        self.worker_reply(id)
    }

    pub(crate) fn worker_release_dependency(&mut self, id: WorkerId, note: &str) -> Result<Reply, Rejection> {
        let w = self.active_worker(id)?;
        validate::optional_text("note", note, SUMMARY_BYTES_MAX)?;
        if w.dependency.is_none() {
            return Err(Rejection::new(
                RejectionCode::NotAwaitingDependency,
                &format!("worker {id} is not waiting for a dependency"),
            ));
        }
        self.release_dependency(id, false);
        self.worker_reply(id)
    }

    /// Clears a dependency wait; an automatic release (the awaited worker completed) is a
    /// scheduler wake, an explicit one a root action.
    pub(crate) fn release_dependency(&mut self, id: WorkerId, automatic: bool) {
        if self.state.workers[&id].dependency.is_none() {
            return;
        }
        let w = self.state.workers.get_mut(&id).expect("worker exists");
        w.dependency = None;
        let run = w.run;
        let cursor = self.emit(run, Some(id), None, EventKind::WorkerDependencyReleased { automatic });
        self.record_progress(id, Some(cursor));
        let origin = if automatic { Origin::Scheduler } else { Origin::Root };
        self.wake(id, WakeReason::DependencyReleased, origin, IntentPayload::Continue);
    }

    /// Clears both waits as part of an explicit transition (follow-up, continue-now override).
    pub(crate) fn clear_waits(&mut self, id: WorkerId) {
        let w = &self.state.workers[&id];
        let (run, had_human, had_dependency) = (w.run, w.human.is_some(), w.dependency.is_some());
        if had_human || had_dependency {
            let w = self.state.workers.get_mut(&id).expect("worker exists");
            w.human = None;
            w.dependency = None;
        }
        if had_human {
            self.emit(run, Some(id), None, EventKind::WorkerHumanResolved);
        }
        if had_dependency {
            self.emit(run, Some(id), None, EventKind::WorkerDependencyReleased { automatic: false });
        }
    }
}
