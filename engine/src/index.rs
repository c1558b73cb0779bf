//! Derived lookup structures, rebuilt from the durable state on recovery.
//!
//! Indexes of a worker are refreshed when an input that touched it finishes, so lookups
//! during an input see the index as it was when the input began.

use crate::ids::*;
use crate::model::*;
use crate::time::Timestamp;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// The keys under which one worker is indexed, remembered so they can be removed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct WorkerKeys {
    pub conversation: Option<Arc<str>>,
    pub dependency: Option<WorkerId>,
    pub timer: Option<Timestamp>,
}

/// Lookups the engine needs in O(log n); all ordered, none persisted.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Index {
    /// (run, hierarchical name) to worker.
    pub names: BTreeMap<(RunId, String), WorkerId>,
    /// Workers of each run.
    pub run_workers: BTreeSet<(RunId, WorkerId)>,
    /// Attempts of each worker.
    pub worker_attempts: BTreeSet<(WorkerId, AttemptId)>,
    /// Messages to each worker.
    pub inbox: BTreeSet<(WorkerId, MessageId)>,
    /// Live conversations to the unfinished worker leasing them.
    pub conversations: BTreeMap<Arc<str>, WorkerId>,
    /// (dependency, waiter): workers waiting for another worker to complete.
    pub dependents: BTreeSet<(WorkerId, WorkerId)>,
    /// (deadline, worker): the engine's timer wheel.
    pub timers: BTreeSet<(Timestamp, WorkerId)>,
    /// What each worker is currently indexed under.
    pub keys: BTreeMap<WorkerId, WorkerKeys>,
}

impl Index {
    /// Indexes a worker's permanent keys (name, run membership) and its current keys.
    pub fn add_worker(&mut self, w: &Worker) {
        self.names.insert((w.run, w.spec.name.clone()), w.id);
        self.run_workers.insert((w.run, w.id));
        self.refresh_keys(w, None);
    }

    /// Re-indexes a worker's changing keys; `timer` is its freshly computed deadline
    /// (`None` leaves the timer as it is).
    pub fn refresh_keys(&mut self, w: &Worker, timer: Option<Option<Timestamp>>) {
        let old = self.keys.remove(&w.id).unwrap_or_default();
        let conversation = live_conversation(w);
        if old.conversation != conversation {
            if let Some(c) = &old.conversation
                && self.conversations.get(c) == Some(&w.id)
            {
                self.conversations.remove(c);
            }
            if let Some(c) = &conversation {
                self.conversations.insert(c.clone(), w.id);
            }
        }
        let dependency = awaited_worker(w);
        if old.dependency != dependency {
            if let Some(d) = old.dependency {
                self.dependents.remove(&(d, w.id));
            }
            if let Some(d) = dependency {
                self.dependents.insert((d, w.id));
            }
        }
        let timer = timer.unwrap_or(old.timer);
        if old.timer != timer {
            if let Some(t) = old.timer {
                self.timers.remove(&(t, w.id));
            }
            if let Some(t) = timer {
                self.timers.insert((t, w.id));
            }
        }
        self.keys.insert(w.id, WorkerKeys { conversation, dependency, timer });
    }

    /// Equality of everything but the timer wheel.
    pub fn eq_ignoring_timers(&self, other: &Index) -> bool {
        let keys = |i: &Index| -> Vec<(WorkerId, Option<Arc<str>>, Option<WorkerId>)> {
            i.keys.iter().map(|(w, k)| (*w, k.conversation.clone(), k.dependency)).collect()
        };
        self.names == other.names
            && self.run_workers == other.run_workers
            && self.worker_attempts == other.worker_attempts
            && self.inbox == other.inbox
            && self.conversations == other.conversations
            && self.dependents == other.dependents
            && keys(self) == keys(other)
    }

    /// Workers waiting for `dependency` to complete.
    pub fn waiters_of(&self, dependency: WorkerId) -> Vec<WorkerId> {
        self.dependents
            .range((dependency, WorkerId(0))..=(dependency, WorkerId(u64::MAX)))
            .map(|(_, waiter)| *waiter)
            .collect()
    }

    /// Workers of a run, in id order.
    pub fn workers_of(&self, run: RunId) -> Vec<WorkerId> {
        self.run_workers.range((run, WorkerId(0))..=(run, WorkerId(u64::MAX))).map(|(_, w)| *w).collect()
    }

    /// Attempts of a worker, in id (and so sequence) order.
    pub fn attempts_of(&self, worker: WorkerId) -> impl DoubleEndedIterator<Item = AttemptId> + '_ {
        self.worker_attempts.range((worker, AttemptId(0))..=(worker, AttemptId(u64::MAX))).map(|(_, a)| *a)
    }

    /// Messages to a worker, in id order.
    pub fn inbox_of(&self, worker: WorkerId) -> impl DoubleEndedIterator<Item = MessageId> + '_ {
        self.inbox.range((worker, MessageId(0))..=(worker, MessageId(u64::MAX))).map(|(_, m)| *m)
    }
}

/// The conversation a worker holds a live lease on, if any.
fn live_conversation(w: &Worker) -> Option<Arc<str>> {
    if w.lifecycle.is_terminal() {
        return None;
    }
    let b = w.binding.as_ref()?;
    (b.status != BindingStatus::Lost && !b.conversation.is_empty()).then(|| b.conversation.clone())
}

/// The worker this worker waits for, if any.
fn awaited_worker(w: &Worker) -> Option<WorkerId> {
    match w.dependency.as_deref().map(|d| &d.condition) {
        Some(DependencyCondition::WorkerCompleted(id)) if !w.lifecycle.is_terminal() => Some(*id),
        _ => None,
    }
}
