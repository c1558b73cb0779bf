//! The dead-man rules: when a watched run's check falls due, whether it stopped, and what
//! a firing does (the alert, and with `recover` one recovery of `/root`).

use super::{DeadMan, DeadManAction, DeadManCondition, DeadManFiring, DeadManMode, DeadManPolicy, DeadManView};
use crate::engine::Engine;
use crate::event::EventKind;
use crate::ids::*;
use crate::model::*;
use crate::policy::{Mode, PolicyPatch};
use crate::reject::Rejection;
use crate::scheduler::Decision;
use crate::time::Timestamp;
use crate::wake::WakeReason;

impl Engine {
    /// The run's effective dead-man policy (its own, or the engine's default).
    pub(crate) fn dead_man_policy(&self, run: RunId) -> DeadManPolicy {
        self.state.dead_men.get(&run).map_or(self.config.dead_man, |d| d.policy)
    }

    /// Validates the dead-man part of a run policy patch (before any mutation).
    pub(crate) fn dead_man_patched(&self, run: Option<RunId>, patch: &PolicyPatch) -> Result<DeadManPolicy, Rejection> {
        run.map_or(self.config.dead_man, |r| self.dead_man_policy(r)).patched(patch)
    }

    /// Sets a run's dead-man policy when the patch names it; a new window starts now.
    pub(crate) fn set_dead_man(&mut self, run: RunId, patch: &PolicyPatch, policy: DeadManPolicy) {
        if !patch.has_run_fields() {
            return;
        }
        let now = self.now;
        let last = self.state.dead_men.get(&run).and_then(|d| d.last.clone());
        // (The root's timer, which carries the check, is recomputed with the record.)
        self.state.dead_men.set(DeadMan { run, policy, since: now, last });
    }

    /// When nothing last moved the run: a submission, durable progress, the window's start.
    fn last_moved(&self, run: &Run) -> Timestamp {
        let mut at = run.created_at;
        if let Some(d) = self.state.dead_men.get(&run.id) {
            at = at.max(d.since).max(d.last.as_ref().map_or(at, |f| f.at));
        }
        for id in self.index.workers_of(run.id) {
            let w = &self.state.workers[&id];
            at = [Some(at), w.last_delivery_at, w.progress.last_at].into_iter().flatten().max().expect("at is set");
        }
        at
    }

    /// When the run's dead-man check falls due, if the run is watched. Filed on the root
    /// worker's timer; a check that finds the run moved since simply files the next one.
    pub(crate) fn dead_man_at(&self, root: &Worker) -> Option<Timestamp> {
        let ms = self.dead_man_policy(root.run).armed_ms()?;
        let run = self.state.runs.get(&root.run).filter(|r| r.status == RunStatus::Active && r.root == root.id)?;
        let auto = self.index.workers_of(run.id).into_iter().any(|id| {
            let w = &self.state.workers[&id];
            !w.lifecycle.is_terminal() && self.effective_policy(w).0.mode == Mode::Auto
        });
        auto.then(|| self.last_moved(run).plus_ms(ms))
    }

    /// The check on the root worker's timer.
    pub(crate) fn check_dead_man(&mut self, root: WorkerId) {
        let now = self.now;
        let w = &self.state.workers[&root];
        if self.dead_man_at(w).is_none_or(|t| t > now) {
            return;
        }
        let run = w.run;
        let quiet_ms = now.ms_since(self.last_moved(&self.state.runs[&run]));
        let unfinished: Vec<WorkerId> = self
            .index
            .workers_of(run)
            .into_iter()
            .filter(|id| !self.state.workers[id].lifecycle.is_terminal())
            .collect();
        let Some(condition) = self.stopped(&unfinished) else {
            // Quiet but fine: someone was asked, a clock runs, or a wake is on its way.
            let policy = self.dead_man_policy(run);
            let last = self.state.dead_men.get(&run).and_then(|d| d.last.clone());
            self.state.dead_men.set(DeadMan { run, policy, since: now, last });
            return;
        };
        let recover = self.dead_man_policy(run).mode == DeadManMode::Recover && self.root_recoverable(root);
        let action = if recover { DeadManAction::RecoveryRequested } else { DeadManAction::Notified };
        let conversations = unfinished
            .iter()
            .filter_map(|id| self.state.workers[id].binding.as_ref())
            .map(|b| b.conversation.clone())
            .filter(|c| !c.is_empty())
            .collect();
        let firing = DeadManFiring { at: now, condition, action, quiet_ms, workers: unfinished, conversations };
        let kind = EventKind::DeadManFired {
            condition,
            action,
            quiet_ms,
            workers: firing.workers.clone(),
            conversations: firing.conversations.clone(),
        };
        let policy = self.dead_man_policy(run);
        let since = self.state.dead_men.get(&run).map_or(now, |d| d.since);
        self.state.dead_men.set(DeadMan { run, policy, since, last: Some(firing) });
        self.emit(run, Some(root), None, kind);
        if recover {
            self.recover_root(root);
        }
    }

    /// Why the run stopped, or `None` while something can still move it or a person or a
    /// clock is already in charge.
    fn stopped(&self, unfinished: &[WorkerId]) -> Option<DeadManCondition> {
        let mut any_live = false;
        for id in unfinished {
            let w = &self.state.workers[id];
            let asked = w.human.is_some() || w.pause.is_some() || w.pause_after_turn || self.held(w);
            let external =
                w.dependency.as_ref().is_some_and(|d| matches!(d.condition, DependencyCondition::External(_)));
            if asked || external {
                return None;
            }
            if matches!(self.decide(w), Decision::Dispatch(_) | Decision::WaitUntil(..) | Decision::StallPause) {
                return None;
            }
            // A lane waiting for another lane moves when that one does: it adds nothing.
            if w.dependency.is_none() && (w.in_flight.is_some() || conversation_alive(w)) {
                any_live = true;
            }
        }
        Some(if any_live { DeadManCondition::NoProgress } else { DeadManCondition::ConversationsLost })
    }

    /// Whether root may be recovered into a fresh conversation: no command in flight, no
    /// live conversation (a fresh one would be a second root), no wait.
    fn root_recoverable(&self, root: WorkerId) -> bool {
        let w = &self.state.workers[&root];
        !w.lifecycle.is_terminal() && w.in_flight.is_none() && w.dependency.is_none() && !conversation_alive(w)
    }

    /// Asks for one recovery of root: a conversation that shows an error is released and
    /// its lease lost first, then a dead-man wake (coalesced into any pending
    /// continuation) opens a fresh conversation with the recovery prompt.
    fn recover_root(&mut self, root: WorkerId) {
        let w = &self.state.workers[&root];
        if let Some(b) = w.binding.as_ref().filter(|b| b.status != BindingStatus::Lost) {
            let (state, executor, conversation) = (b.state, b.executor.clone(), b.conversation.clone());
            if let Some(executor) = executor {
                self.release_conversation(executor, root, conversation);
            }
            self.lose_binding(root, state);
        }
        self.wake(root, WakeReason::DeadMan, Origin::Root, IntentPayload::Continue);
    }

    /// The run's dead-man state for reads: the alert stays while nothing moved the run
    /// since the firing, and while the run is active.
    pub(crate) fn dead_man_view(&self, run: &Run) -> DeadManView {
        let policy = self.dead_man_policy(run.id);
        let last = self.state.dead_men.get(&run.id).and_then(|d| d.last.as_ref());
        let moved_since = |f: &DeadManFiring| {
            self.index.workers_of(run.id).into_iter().any(|id| {
                let w = &self.state.workers[&id];
                [w.last_delivery_at, w.progress.last_at].into_iter().flatten().any(|t| t > f.at)
            })
        };
        let alert = last.filter(|f| run.status == RunStatus::Active && !moved_since(f)).cloned();
        DeadManView { policy, alert }
    }
}

/// Whether the worker's conversation could still host a turn: bound, not lost, not closed,
/// and not showing an error card that another prompt would not clear (a ChatGPT turn that
/// ended on an error card gets a fresh continuation; a CLI session's error holds it).
pub(crate) fn conversation_alive(w: &Worker) -> bool {
    w.binding.as_ref().is_some_and(|b| {
        b.status != BindingStatus::Lost
            && match b.state {
                ConversationState::Closed => false,
                ConversationState::Error(ErrorKind::Generic) => !w.spec.executor.is_cli(),
                ConversationState::Error(kind) => kind == ErrorKind::DeliveryTimeout || kind.stops_typing(),
                _ => true,
            }
    })
}
