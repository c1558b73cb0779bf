//! Derived lookup structures and the timer heap, rebuilt from the durable state on
//! recovery; [`Index`] owns them behind lookups and the few calls that change them.
//!
//! Indexes of a worker are refreshed when an input that touched it finishes, so lookups
//! during an input see the index as it was when the input began. Which workers' timers
//! must be recomputed then is gathered from the tables and owners that changed; the
//! scheduler adds the workers it evaluated (`mark_stale`).

use crate::dense::DenseMap;
use crate::ids::*;
use crate::model::*;
use crate::time::Timestamp;
use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet, BinaryHeap};
use std::sync::Arc;

/// The keys under which one worker is indexed, remembered so they can be removed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct WorkerKeys {
    worker: WorkerId,
    /// The worker's attempts, in id (and sequence) order.
    attempts: Vec<AttemptId>,
    /// Messages to the worker, in id order.
    inbox: Vec<MessageId>,
    conversation: Option<Arc<str>>,
    dependency: Option<WorkerId>,
    timer: Option<Timestamp>,
}

impl WorkerKeys {
    /// Equality of everything but the timer.
    fn eq_ignoring_timer(&self, other: &WorkerKeys) -> bool {
        self.worker == other.worker
            && self.attempts == other.attempts
            && self.inbox == other.inbox
            && self.conversation == other.conversation
            && self.dependency == other.dependency
    }
}

/// Lookups the engine needs in O(log n); all ordered, none persisted. (No equality:
/// the timer heap's layout depends on history; compare with `eq_ignoring_timers`.)
#[derive(Clone, Debug, Default)]
pub(crate) struct Index {
    /// (run, hierarchical name) to worker.
    names: BTreeMap<(RunId, String), WorkerId>,
    /// Workers of each run.
    run_workers: BTreeSet<(RunId, WorkerId)>,
    /// (ended at, run) of every finished run: the history, newest last.
    finished_runs: BTreeSet<(Timestamp, RunId)>,
    /// Live conversations to the unfinished worker leasing them.
    conversations: BTreeMap<Arc<str>, WorkerId>,
    /// (dependency, waiter): workers waiting for another worker to complete.
    dependents: BTreeSet<(WorkerId, WorkerId)>,
    /// (deadline, worker) min-heap with lazy deletion: an entry is live only while it
    /// matches the worker's `keys.timer`; stale entries are skipped when they surface.
    timers: BinaryHeap<Reverse<(Timestamp, WorkerId)>>,
    /// What each worker is currently indexed under.
    keys: DenseMap<WorkerId, WorkerKeys>,
    /// Workers whose timer must be recomputed when the input finishes (besides those
    /// whose row or connection changed), in no order, maybe repeated; the list keeps
    /// its capacity between inputs.
    stale: Vec<WorkerId>,
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
        if !self.keys.contains_key(&w.id) {
            self.keys.insert(w.id, WorkerKeys { worker: w.id, ..WorkerKeys::default() });
        }
        let keys = self.keys.get_mut(&w.id).expect("keys inserted");
        let conversation = live_conversation(w);
        if keys.conversation.as_deref() != conversation.map(|c| &**c) {
            if let Some(c) = &keys.conversation
                && self.conversations.get(c) == Some(&w.id)
            {
                self.conversations.remove(c);
            }
            if let Some(c) = conversation {
                self.conversations.insert(c.clone(), w.id);
            }
            keys.conversation = conversation.cloned();
        }
        let dependency = awaited_worker(w);
        if keys.dependency != dependency {
            if let Some(d) = keys.dependency {
                self.dependents.remove(&(d, w.id));
            }
            if let Some(d) = dependency {
                self.dependents.insert((d, w.id));
            }
            keys.dependency = dependency;
        }
        if let Some(timer) = timer
            && keys.timer != timer
        {
            if let Some(t) = timer {
                self.timers.push(Reverse((t, w.id)));
            }
            keys.timer = timer;
        }
    }

    /// Whether a heap entry is the worker's current timer.
    fn live(&self, at: Timestamp, worker: WorkerId) -> bool {
        self.keys.get(&worker).is_some_and(|k| k.timer == Some(at))
    }

    /// Drops stale entries from the top of the heap, and rebuilds it when stale
    /// entries outnumber live ones, so memory stays proportional to the workers.
    pub fn prune_timers(&mut self) {
        while let Some(Reverse((at, worker))) = self.timers.peek().copied() {
            if self.live(at, worker) {
                break;
            }
            self.timers.pop();
        }
        if self.timers.len() > 2 * self.keys.len() + 1024 {
            let live: Vec<Reverse<(Timestamp, WorkerId)>> =
                self.keys.values().filter_map(|k| k.timer.map(|t| Reverse((t, k.worker)))).collect();
            self.timers = BinaryHeap::from(live);
        }
    }

    /// The earliest live deadline (the heap top after `prune_timers`).
    pub fn next_timer(&self) -> Option<Timestamp> {
        self.timers.peek().map(|Reverse((at, _))| *at)
    }

    /// Removes and returns every worker whose live deadline is at or before `now`.
    pub fn take_due(&mut self, now: Timestamp) -> Vec<WorkerId> {
        let mut due = Vec::new();
        while let Some(Reverse((at, worker))) = self.timers.peek().copied() {
            if at > now {
                break;
            }
            self.timers.pop();
            if self.live(at, worker) {
                due.push(worker);
            }
        }
        due.sort_unstable();
        due.dedup();
        due
    }

    /// Equality of everything but the timer wheel.
    pub fn eq_ignoring_timers(&self, other: &Index) -> bool {
        self.names == other.names
            && self.run_workers == other.run_workers
            && self.finished_runs == other.finished_runs
            && self.conversations == other.conversations
            && self.dependents == other.dependents
            && self.keys.len() == other.keys.len()
            && self.keys.values().zip(other.keys.values()).all(|(a, b)| a.eq_ignoring_timer(b))
    }

    /// The worker of a run with this hierarchical name.
    pub fn worker_named(&self, run: RunId, name: &str) -> Option<WorkerId> {
        self.names.get(&(run, name.to_string())).copied()
    }

    /// The unfinished worker leasing a live conversation.
    pub fn leasing(&self, conversation: &str) -> Option<WorkerId> {
        self.conversations.get(conversation).copied()
    }

    /// How many live conversations are leased.
    pub fn leases(&self) -> usize {
        self.conversations.len()
    }

    /// The worker's filed deadline.
    pub fn timer_of(&self, worker: WorkerId) -> Option<Timestamp> {
        self.keys.get(&worker).and_then(|k| k.timer)
    }

    /// The worker's timer must be recomputed when the input finishes.
    pub fn mark_stale(&mut self, worker: WorkerId) {
        self.stale.push(worker);
    }

    /// Takes the workers marked stale (give the list back with `recycle_stale`).
    pub fn take_stale(&mut self) -> Vec<WorkerId> {
        std::mem::take(&mut self.stale)
    }

    /// Gives back an emptied list, keeping its capacity for the next input.
    pub fn recycle_stale(&mut self, mut list: Vec<WorkerId>) {
        list.clear();
        self.stale = list;
    }

    /// Files a run that has ended (a run never starts again; filing it twice is harmless).
    pub fn add_finished_run(&mut self, run: &Run) {
        if let (true, Some(at)) = (run.status.is_terminal(), run.ended_at) {
            self.finished_runs.insert((at, run.id));
        }
    }

    /// Finished runs, the most recently ended first (ties: the newer run first).
    pub fn finished_runs(&self) -> impl Iterator<Item = RunId> + '_ {
        self.finished_runs.iter().rev().map(|(_, run)| *run)
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

    /// Records a new attempt of a worker (ids only grow, so the list stays sorted).
    pub fn add_attempt(&mut self, worker: WorkerId, attempt: AttemptId) {
        if let Some(k) = self.keys.get_mut(&worker) {
            k.attempts.push(attempt);
        }
    }

    /// Records a message to a worker.
    pub fn add_message(&mut self, worker: WorkerId, message: MessageId) {
        if let Some(k) = self.keys.get_mut(&worker) {
            k.inbox.push(message);
        }
    }

    /// Attempts of a worker, in id (and so sequence) order.
    pub fn attempts_of(&self, worker: WorkerId) -> impl DoubleEndedIterator<Item = AttemptId> + '_ {
        self.keys.get(&worker).map(|k| k.attempts.as_slice()).unwrap_or_default().iter().copied()
    }

    /// Messages to a worker, in id order.
    pub fn inbox_of(&self, worker: WorkerId) -> impl DoubleEndedIterator<Item = MessageId> + '_ {
        self.keys.get(&worker).map(|k| k.inbox.as_slice()).unwrap_or_default().iter().copied()
    }
}

/// The conversation a worker holds a live lease on, if any.
fn live_conversation(w: &Worker) -> Option<&Arc<str>> {
    if w.lifecycle.is_terminal() {
        return None;
    }
    let b = w.binding.as_ref()?;
    (b.status != BindingStatus::Lost && !b.conversation.is_empty()).then_some(&b.conversation)
}

/// The worker this worker waits for, if any.
fn awaited_worker(w: &Worker) -> Option<WorkerId> {
    match w.dependency.as_deref().map(|d| &d.condition) {
        Some(DependencyCondition::WorkerCompleted(id)) if !w.lifecycle.is_terminal() => Some(*id),
        _ => None,
    }
}
