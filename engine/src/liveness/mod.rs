//! Liveness: who carries each worker (the executor holding its conversation, whether it
//! is connected, since when), derived from the connections the shell reports and the
//! time; the two decisions it leads to: a worker with work on its way and no executor of its
//! kind connected for [`crate::limits::EXECUTOR_ABSENT_MS_MAX`] (`EngineConfig::executor_absent_ms`) gets `worker.executor_absent` (once per
//! episode), and a CLI turn that keeps retrying its model connection for
//! [`CLI_RETRY_MS_MAX`] pauses its worker (`cli_retrying`). A worker whose executor is gone
//! is never reported running (`Engine::disposition` asks [`Engine::carried`]).
//!
//! The volatile facts live in their owners: connections and the times executors came and
//! went in `Connections`, retries and raised episodes in [`Liveness`] (`state.rs`).

pub(crate) mod state;

pub(crate) use state::Liveness;

use crate::engine::Engine;
use crate::event::EventKind;
use crate::ids::*;
use crate::input::Observation;
use crate::kind::ExecutorKind;
use crate::limits::CLI_RETRY_MS_MAX;
use crate::model::*;
use crate::scheduler::{Decision, Hold, Wait};
use crate::time::{MINUTE_MS, Timestamp};

impl Engine {
    /// The executor that carries the worker, if any: the one holding its conversation,
    /// else the one its in-flight command went to.
    pub(crate) fn carrier_of(&self, w: &Worker) -> Option<ExecutorId> {
        let bound = w.binding.as_ref().and_then(|b| b.executor.clone());
        bound.or_else(|| w.in_flight.and_then(|a| self.conn.sent_to(a).cloned()))
    }

    /// Whether an executor that runs the worker's kind carries it now. A worker that is not
    /// carried is never reported running, whatever its last reported state.
    pub(crate) fn carried(&self, w: &Worker) -> bool {
        self.carried_since(w).is_some()
    }

    /// Since when an executor that runs the worker's kind carries it (its `hello`), if one
    /// does now.
    pub(crate) fn carried_since(&self, w: &Worker) -> Option<Timestamp> {
        let e = self.carrier_of(w)?;
        self.conn.runs_kind(&e, w.spec.executor).then(|| self.conn.connected_since(&e)).flatten()
    }

    /// The worker's liveness, for views (`None` once it has ended).
    pub(crate) fn liveness_view(&self, w: &Worker) -> Option<LivenessView> {
        if w.lifecycle.is_terminal() {
            return None;
        }
        let kind = w.spec.executor;
        let executor = self.carrier_of(w);
        let (carrier, since) = match &executor {
            Some(e) if self.conn.runs_kind(e, kind) => (Carrier::Connected, self.conn.connected_since(e)),
            Some(e) => (Carrier::Offline, self.conn.gone_since(e)),
            None => (Carrier::Unassigned, self.conn.kind_absent_since(kind)),
        };
        let absent = self.conn.kind_absent_since(kind).filter(|at| self.liveness.raised(w.id, kind, *at));
        let retry = self.liveness.retry_of(w.id).filter(|_| carrier == Carrier::Connected).map(|r| RetryView {
            reason: r.retry.reason.clone(),
            attempt: r.retry.attempt,
            since: r.since,
        });
        let capable = u32::try_from(self.conn.capable(kind)).unwrap_or(u32::MAX);
        let slot = self.slot_wait(w);
        Some(LivenessView { carrier, executor, kind, since, capable, absent_since: absent, retry, slot })
    }

    /// The slot the worker's next turn waits for (on its host, or on the account it would
    /// run under there), when that is what it waits for.
    fn slot_wait(&self, w: &Worker) -> Option<SlotView> {
        let Decision::WaitUntil(_, wait) = self.decide(w) else { return None };
        let executor = self.target_executor(w.id)?;
        match wait {
            Wait::HostSlot => {
                let max = self.conn.turns_max(&executor)?;
                Some(SlotView { busy: self.turns_on(&executor, w.id), max, executor, account: None, unheard: 0 })
            }
            Wait::AccountSlot => {
                let load = self.account_load(&executor, w)?;
                Some(SlotView {
                    busy: load.busy,
                    max: load.max,
                    executor,
                    account: Some(load.name),
                    unheard: load.unheard,
                })
            }
            _ => None,
        }
    }

    /// Whether the worker needs an executor now: it would run (active, not waiting, not
    /// paused) and has work on its way (a turn running, a command in flight or a pending
    /// continuation that does not wait for a person: a manual worker between turns, or a
    /// root that never had a conversation, needs none until someone asks or attaches).
    fn needs_executor(&self, w: &Worker) -> bool {
        let asked =
            w.intent.is_some() && !matches!(self.decide(w), Decision::Hold(Hold::Manual | Hold::NoConversation));
        self.runnable(w) && (w.in_flight.is_some() || self.turn_running(w) || asked)
    }

    /// When `worker.executor_absent` falls due for the worker: it needs an executor, none
    /// of its kind is connected, and this episode was not recorded yet.
    pub(crate) fn executor_absent_at(&self, w: &Worker) -> Option<Timestamp> {
        if !self.needs_executor(w) {
            return None;
        }
        let kind = w.spec.executor;
        let since = self.conn.kind_absent_since(kind)?;
        (!self.liveness.raised(w.id, kind, since)).then(|| since.plus_ms(self.config.executor_absent_ms))
    }

    /// When a worker whose CLI keeps retrying inside its running turn is paused: the retry
    /// is reported by its connected executor, the turn is still generating, nothing paused
    /// it yet, and neither the retry's start nor the worker's last durable progress (a
    /// resume counts) is within [`CLI_RETRY_MS_MAX`].
    pub(crate) fn retry_pause_at(&self, w: &Worker) -> Option<Timestamp> {
        let retry = self.liveness.retry_of(w.id)?;
        let generating = w.binding.as_ref().is_some_and(|b| b.state == ConversationState::Generating);
        if w.lifecycle.is_terminal() || w.pause.is_some() || !generating || !self.carried(w) {
            return None;
        }
        let from = w.progress.last_at.map_or(retry.since, |at| at.max(retry.since));
        Some(from.plus_ms(CLI_RETRY_MS_MAX))
    }

    /// The worker's liveness timers due at `now`: an absence to record, a retry that went
    /// on too long.
    pub(crate) fn on_liveness_timer(&mut self, id: WorkerId) {
        let now = self.now;
        let Some(w) = self.state.workers.get(&id) else { return };
        if self.executor_absent_at(w).is_some_and(|t| t <= now)
            && let Some(since) = self.conn.kind_absent_since(w.spec.executor)
        {
            let (kind, run, executor) = (w.spec.executor, w.run, self.carrier_of(w));
            self.liveness.raise(id, kind, since);
            self.emit(run, Some(id), None, EventKind::WorkerExecutorAbsent { kind, since, executor });
        }
        let w = &self.state.workers[&id];
        if self.retry_pause_at(w).is_some_and(|t| t <= now) {
            let detail = self.retry_pause_detail(w);
            self.set_pause(id, PauseReason::CliRetrying, Some(&detail));
        }
    }

    /// What a person reads on a worker paused because its CLI kept retrying.
    fn retry_pause_detail(&self, w: &Worker) -> String {
        let name = match w.spec.executor {
            ExecutorKind::Chatgpt => "ChatGPT",
            ExecutorKind::Codex => "Codex CLI",
            ExecutorKind::Claude => "Claude Code",
        };
        let reason = self.liveness.retry_of(w.id).map(|r| r.retry.reason.clone()).unwrap_or_default();
        let host = self.carrier_of(w).map(|e| format!(" on executor {e}")).unwrap_or_default();
        format!(
            "{name} kept retrying its model connection for {} min ({reason}). Check the network and {name}'s \
             login{host}, then resume.",
            CLI_RETRY_MS_MAX / MINUTE_MS
        )
    }

    /// A state report for the worker: a `generating` one says whether its CLI retries.
    pub(crate) fn note_retry(&mut self, id: WorkerId, observation: &Observation) {
        match (&observation.state, &observation.retry) {
            (ConversationState::Generating, Some(retry)) => self.liveness.retrying(id, retry.clone(), self.now),
            _ => self.liveness.retry_over(id),
        }
    }

    /// An executor said hello: the absence episodes of its kinds are over.
    pub(crate) fn executor_back(&mut self, kinds: &[ExecutorKind]) {
        self.liveness.kinds_back(kinds);
    }

    /// An executor is going away (called before its connection is forgotten): the running
    /// turns it carried stop counting toward the stall guard, and the retries it reported
    /// are its, gone with it (its `hello` republishes what still holds).
    pub(crate) fn executor_leaving(&mut self, executor: &ExecutorId) {
        let carried: Vec<WorkerId> = self
            .state
            .workers
            .values()
            .filter(|w| self.carrier_of(w).as_ref() == Some(executor))
            .map(|w| w.id)
            .collect();
        for id in carried {
            self.end_running_segment(id);
            self.liveness.retry_over(id);
        }
    }
}
