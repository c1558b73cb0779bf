//! Read models: the views replies carry, computed from durable state.

use crate::engine::Engine;
use crate::ids::*;
pub use crate::model::{Carrier, LivenessView, RetryView};
pub use crate::op::{HoldView, PolicySource, RunView, WorkerView};

impl Engine {
    /// The view of a worker: disposition, effective policy, latest attempt, recent inbox.
    pub fn worker_view(&self, id: WorkerId) -> Option<WorkerView> {
        let w = self.state.workers.get(&id)?;
        let (policy, policy_source) = self.effective_policy(w);
        let current = w.in_flight.or(w.turn).or_else(|| self.index.attempts_of(id).next_back());
        let mut inbox: Vec<_> = self
            .index
            .inbox_of(id)
            .rev()
            .take(self.config.inbox_shown_max)
            .map(|m| self.state.messages[&m].clone())
            .collect();
        inbox.reverse();
        Some(WorkerView {
            worker: w.clone(),
            disposition: self.disposition(w),
            policy,
            policy_source,
            current_attempt: current.and_then(|a| self.state.attempts.get(&a)).cloned(),
            inbox,
            hold: self.hold_view(w),
            liveness: self.liveness_view(w),
            waited_on_by: self
                .index
                .waiters_of(id)
                .into_iter()
                .filter(|w| !self.state.workers[w].lifecycle.is_terminal())
                .collect(),
        })
    }

    /// The view of a run: the run, its worker counts and, once it ended, how (its root's
    /// outcome).
    pub fn run_view(&self, id: RunId) -> Option<RunView> {
        let run = self.state.runs.get(&id)?;
        let workers = self.index.workers_of(id);
        let unfinished = workers.iter().filter(|w| !self.state.workers[w].lifecycle.is_terminal()).count();
        Some(RunView {
            run: run.clone(),
            workers: workers.len() as u32,
            unfinished: unfinished as u32,
            dead_man: self.dead_man_view(run),
            outcome: run
                .status
                .is_terminal()
                .then(|| self.state.workers.get(&run.root).and_then(|root| root.outcome.clone()))
                .flatten(),
        })
    }
}
