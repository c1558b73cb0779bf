//! What this process knows of its executors, and deliberately does not persist: which are
//! connected (what they run, since when) and when the others went away, which in-flight
//! commands went out over their current connections, which are held by none, which were
//! asked to withdraw, and when each worker's conversation was last reported on. Lost on
//! restart by design: executors reconnect, say `hello` again, and their journals say what
//! they hold; an executor not back yet counts as gone since this process started.
//!
//! [`Connections`] owns all of it behind methods that keep it consistent (a command is
//! sent, or known to be held by nobody, never both; a disconnect orphans what went out
//! over it) and that remember whose timers the change made stale: the engine recomputes
//! them when the input finishes.

use crate::ids::*;
use crate::input::AccountCap;
use crate::kind::ExecutorKind;
use crate::limits::GONE_EXECUTORS_COUNT_MAX;
use crate::time::Timestamp;
use std::collections::{BTreeMap, BTreeSet};

/// A connected executor, as far as this process knows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ExecutorSession {
    /// It can steer mid-turn.
    pub steering: bool,
    /// The executor kinds it runs (its `hello`'s `capabilities.kinds`): only workers of
    /// these kinds get commands through it.
    pub kinds: Vec<ExecutorKind>,
    /// When its current connection said `hello`.
    pub since: Timestamp,
    /// How many CLI workers' turns it runs at once (its `hello`'s cap), if it has one.
    pub turns_max: Option<u32>,
    /// The accounts its CLI workers run under, each with its cap on turns at once.
    pub accounts: Vec<AccountCap>,
}

/// An in-flight command handed to an executor over its current connection.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Sent {
    executor: ExecutorId,
    /// The command's worker, whose timer (overdue command) depends on this.
    worker: WorkerId,
}

/// Connection state, and the timers its changes made stale.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Connections {
    executors: BTreeMap<ExecutorId, ExecutorSession>,
    /// In-flight commands already handed to an executor over its current connection.
    sent: BTreeMap<AttemptId, Sent>,
    /// In-flight commands known to be held by no executor (dispatched by this process
    /// and never handed over, or absent from the target executor's journal).
    never_sent: BTreeSet<AttemptId>,
    /// In-flight commands whose withdrawal was already requested.
    cancel_requested: BTreeSet<AttemptId>,
    /// When the executor holding each worker's binding last reported on it (or was asked
    /// to inspect it): the inspect timer counts from here. Empty after a restart, so a
    /// long-silent turn is inspected soon after the executor says hello again.
    reported_at: BTreeMap<WorkerId, Timestamp>,
    /// Workers whose timer a change made stale, in no order, maybe repeated.
    stale: Vec<WorkerId>,
    /// Executors that connected or went away in this input: the timers of the workers
    /// bound to them are stale (mid-turn steering, overdue commands, inspections).
    changed: Vec<ExecutorId>,
    /// The kinds those executors run: the liveness timers of every worker of these kinds
    /// are stale (a kind may have gained or lost its last executor).
    changed_kinds: Vec<ExecutorKind>,
    /// When each executor that is not connected went away, in this process (at most
    /// [`GONE_EXECUTORS_COUNT_MAX`], the oldest forgotten first).
    gone: BTreeMap<ExecutorId, Timestamp>,
    /// The accounts each executor named in its last `hello` in this process, kept after
    /// it goes away (its turns may still run under them) and forgotten with it from
    /// `gone`: an account's turns are counted on every host that named it.
    declared: BTreeMap<ExecutorId, Vec<AccountCap>>,
    /// When the last connected executor of each kind went away, in this process.
    kinds_gone: BTreeMap<ExecutorKind, Timestamp>,
    /// The first input this process handled: an executor not seen since is gone since then.
    started: Option<Timestamp>,
}

impl Connections {
    // ----- executors -----

    /// The time of the first input this process handles (later calls change nothing);
    /// whether it was the first.
    pub fn start(&mut self, now: Timestamp) -> bool {
        let first = self.started.is_none();
        self.started.get_or_insert(now);
        first
    }

    /// An executor said hello: what went out over its previous connection is unknown
    /// until its journal says.
    pub fn connect(&mut self, executor: ExecutorId, session: ExecutorSession) {
        self.gone.remove(&executor);
        self.changed_kinds.extend(session.kinds.iter().copied());
        for kind in &session.kinds {
            self.kinds_gone.remove(kind);
        }
        if session.accounts.is_empty() {
            self.declared.remove(&executor);
        } else {
            self.declared.insert(executor.clone(), session.accounts.clone());
        }
        if let Some(old) = self.executors.insert(executor.clone(), session) {
            self.changed_kinds.extend(old.kinds);
        }
        self.sent.retain(|_, s| s.executor != executor);
        self.changed.push(executor);
    }

    /// An executor's connection ended at `now`: the commands handed to it are orphaned
    /// (to be reconciled on its next hello).
    pub fn disconnect(&mut self, executor: &ExecutorId, now: Timestamp) {
        if let Some(session) = self.executors.remove(executor) {
            for kind in session.kinds {
                if !self.executors.values().any(|s| s.kinds.contains(&kind)) {
                    self.kinds_gone.insert(kind, now);
                }
                self.changed_kinds.push(kind);
            }
            if self.gone.len() >= GONE_EXECUTORS_COUNT_MAX
                && let Some(oldest) = self.gone.iter().min_by_key(|(_, at)| **at).map(|(e, _)| e.clone())
            {
                self.gone.remove(&oldest);
                self.declared.remove(&oldest);
            }
            self.gone.insert(executor.clone(), now);
        }
        self.changed.push(executor.clone());
        let orphaned: Vec<AttemptId> =
            self.sent.iter().filter(|(_, s)| s.executor == *executor).map(|(a, _)| *a).collect();
        for attempt in orphaned {
            if let Some(s) = self.sent.remove(&attempt) {
                self.stale.push(s.worker);
            }
            self.cancel_requested.remove(&attempt);
        }
    }

    /// Whether the executor said `hello` in this process (connected now, or gone since,
    /// until forgotten from `gone`): what it runs under is known only then.
    pub fn heard(&self, executor: &ExecutorId) -> bool {
        self.executors.contains_key(executor) || self.gone.contains_key(executor)
    }

    /// Whether the executor is connected.
    pub fn is_connected(&self, executor: &ExecutorId) -> bool {
        self.executors.contains_key(executor)
    }

    /// The connected executors, in id order.
    pub fn connected(&self) -> impl Iterator<Item = &ExecutorId> + Clone {
        self.executors.keys()
    }

    /// Whether the executor is connected and runs workers of this kind.
    pub fn runs_kind(&self, executor: &ExecutorId, kind: ExecutorKind) -> bool {
        self.executors.get(executor).is_some_and(|s| s.kinds.contains(&kind))
    }

    /// The executor's cap on CLI turns at once, when it is connected and has one.
    pub fn turns_max(&self, executor: &ExecutorId) -> Option<u32> {
        self.executors.get(executor).and_then(|s| s.turns_max)
    }

    /// The account the executor's workers of `kind` run under, as its last `hello` in this
    /// process named it (connected or gone since).
    pub fn account_of(&self, executor: &ExecutorId, kind: ExecutorKind) -> Option<&AccountCap> {
        self.declared.get(executor)?.iter().find(|a| a.kind == kind)
    }

    /// The executors that named this account for `kind`, and the account's cap: the
    /// smallest any of them gave.
    pub fn account_hosts(&self, kind: ExecutorKind, name: &str) -> (Vec<&ExecutorId>, u32) {
        let mut hosts = Vec::new();
        let mut max = u32::MAX;
        for (executor, accounts) in &self.declared {
            if let Some(a) = accounts.iter().find(|a| a.kind == kind && &*a.name == name) {
                hosts.push(executor);
                max = max.min(a.turns_max);
            }
        }
        (hosts, max)
    }

    /// Since when the executor is connected (its current connection's `hello`), or `None`.
    pub fn connected_since(&self, executor: &ExecutorId) -> Option<Timestamp> {
        self.executors.get(executor).map(|s| s.since)
    }

    /// Since when the executor, not connected, is gone: the end of its last connection in
    /// this process, or the process's start (`None` before its first input).
    pub fn gone_since(&self, executor: &ExecutorId) -> Option<Timestamp> {
        self.gone.get(executor).copied().or(self.started)
    }

    /// How many connected executors run workers of this kind.
    pub fn capable(&self, kind: ExecutorKind) -> usize {
        self.executors.values().filter(|s| s.kinds.contains(&kind)).count()
    }

    /// Since when no connected executor runs workers of this kind (`None` while one does,
    /// and before the process's first input): the end of the last one's connection in this
    /// process, or the process's start.
    pub fn kind_absent_since(&self, kind: ExecutorKind) -> Option<Timestamp> {
        if self.capable(kind) > 0 {
            return None;
        }
        self.kinds_gone.get(&kind).copied().or(self.started)
    }

    /// Whether the executor is connected and can steer mid-turn.
    pub fn can_steer(&self, executor: &ExecutorId) -> bool {
        self.executors.get(executor).is_some_and(|s| s.steering)
    }

    // ----- in-flight commands -----

    /// A command was just handed to `executor` (its timer counts from now).
    pub fn sent(&mut self, attempt: AttemptId, executor: ExecutorId, worker: WorkerId) {
        self.sent.insert(attempt, Sent { executor, worker });
        self.never_sent.remove(&attempt);
        self.stale.push(worker);
    }

    /// A reconnecting executor's journal shows it holds the command (queued, or being
    /// submitted): its result will follow.
    pub fn held_by(&mut self, attempt: AttemptId, executor: ExecutorId, worker: WorkerId) {
        self.sent.insert(attempt, Sent { executor, worker });
        self.stale.push(worker);
    }

    /// The executor accepted the command. (Its timer is left as it is, as before this
    /// owner existed: the command was handed over, and its timer filed, when it was sent.)
    pub fn accepted(&mut self, attempt: AttemptId, executor: ExecutorId, worker: WorkerId) {
        self.sent.insert(attempt, Sent { executor, worker });
    }

    /// The executor answered for the command (submitted, or failed).
    pub fn answered(&mut self, attempt: AttemptId) {
        self.sent.remove(&attempt);
    }

    /// The executor that holds the command over its current connection, if any.
    pub fn sent_to(&self, attempt: AttemptId) -> Option<&ExecutorId> {
        self.sent.get(&attempt).map(|s| &s.executor)
    }

    /// The command is held by no executor (just dispatched, or absent from the journal
    /// of the executor it is meant for).
    pub fn never_sent(&mut self, attempt: AttemptId) {
        self.never_sent.insert(attempt);
    }

    /// Whether the command is known to be held by no executor.
    pub fn is_never_sent(&self, attempt: AttemptId) -> bool {
        self.never_sent.contains(&attempt)
    }

    /// Forgets that the command is held by nobody; whether it was.
    pub fn take_never_sent(&mut self, attempt: AttemptId) -> bool {
        self.never_sent.remove(&attempt)
    }

    /// Records a withdrawal request; `false` if one was already requested.
    pub fn request_cancel(&mut self, attempt: AttemptId) -> bool {
        self.cancel_requested.insert(attempt)
    }

    /// The command's attempt closed: nothing about it is in flight any more.
    pub fn closed(&mut self, attempt: AttemptId) {
        self.sent.remove(&attempt);
        self.never_sent.remove(&attempt);
        self.cancel_requested.remove(&attempt);
    }

    // ----- reports -----

    /// The executor holding the worker's binding reported on it (or was asked to look).
    pub fn reported(&mut self, worker: WorkerId, at: Timestamp) {
        self.reported_at.insert(worker, at);
        self.stale.push(worker);
    }

    /// When the worker's conversation was last reported on, since this process started.
    pub fn reported_at(&self, worker: WorkerId) -> Option<Timestamp> {
        self.reported_at.get(&worker).copied()
    }

    // ----- timers -----

    /// Moves the workers whose timers went stale into `into`, and returns the executors
    /// that connected or went away (the timers of the workers bound to them are stale too)
    /// and the kinds they run (so are those of every worker of these kinds), each kind once.
    pub fn drain_stale(&mut self, into: &mut Vec<WorkerId>) -> (Vec<ExecutorId>, Vec<ExecutorKind>) {
        into.append(&mut self.stale);
        let mut kinds = std::mem::take(&mut self.changed_kinds);
        kinds.sort_unstable();
        kinds.dedup();
        (std::mem::take(&mut self.changed), kinds)
    }
}
