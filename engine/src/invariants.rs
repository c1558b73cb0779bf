//! `check_invariants`: what must hold after every input. Tests and the simulator call it.

use crate::engine::Engine;
use crate::ids::*;
use crate::model::*;
use std::collections::BTreeMap;

/// A broken invariant: which one, and where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InvariantViolation {
    /// Stable name of the invariant.
    pub invariant: &'static str,
    /// What was found.
    pub detail: String,
}

impl std::fmt::Display for InvariantViolation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.invariant, self.detail)
    }
}

fn violated(invariant: &'static str, detail: String) -> Result<(), InvariantViolation> {
    Err(InvariantViolation { invariant, detail })
}

impl Engine {
    /// Checks every invariant of the durable state and its indexes.
    pub fn check_invariants(&self) -> Result<(), InvariantViolation> {
        for w in self.state.workers.values() {
            self.check_worker(w)?;
        }
        self.check_runs()?;
        self.check_events()?;
        self.check_holds()?;
        self.check_notices()?;
        self.check_index()
    }

    /// Notifications: each notice's id names a target that exists, its episode precedes
    /// the last event, and only pending ones are under way (`notify/state.rs`).
    fn check_notices(&self) -> Result<(), InvariantViolation> {
        let last = self.state.ids.last_cursor();
        for n in self.state.notices.values() {
            if n.id.episode() > last || n.id.episode().0 == 0 {
                return violated("notice_episode", format!("{} after the last event {last}", n.id));
            }
        }
        match self.state.notices.stray() {
            Some(id) => violated("notice_in_flight_pending", format!("{id} is under way but settled")),
            None => Ok(()),
        }
    }

    /// Page holds: bounded, each lifting no earlier than it began and no later than the
    /// clamp allows; a dialog heading (or an app name) belongs to a worker whose page shows a dialog (or an
    /// approval card), and
    /// a held worker has no command in flight that nobody holds (it was withdrawn).
    fn check_holds(&self) -> Result<(), InvariantViolation> {
        let holds = self.state.holds.record();
        if holds.accounts.len() > crate::limits::ACCOUNT_HOLDS_COUNT_MAX {
            return violated("holds_bounded", format!("{} account holds", holds.accounts.len()));
        }
        for (e, h) in &holds.accounts {
            let latest = h.since.max(self.now).plus_ms(crate::limits::ACCOUNT_HOLD_MS_MAX);
            let conversation_only = matches!(
                h.reason,
                HoldReason::BlockedByDialog | HoldReason::AwaitingApproval | HoldReason::PageUnrecognized
            );
            if h.until < h.since || h.until > latest || conversation_only {
                return violated("account_hold", format!("{e}: {h:?}"));
            }
        }
        for id in holds.dialogs.keys() {
            let shown = self.state.workers.get(id).is_some_and(|w| {
                w.binding.as_ref().is_some_and(|b| crate::holds::conversation_hold_of(b.state).is_some())
            });
            if !shown {
                return violated("dialog_heading", format!("{id} keeps a heading with no dialog or card shown"));
            }
        }
        for w in self.state.workers.values().filter(|w| self.held(w)) {
            if let Some(a) = w.in_flight.filter(|a| self.conn.is_never_sent(*a)) {
                return violated("held_in_flight", format!("{}: {a} is in flight while held", w.id));
            }
        }
        Ok(())
    }

    fn check_worker(&self, w: &Worker) -> Result<(), InvariantViolation> {
        let id = w.id;
        let attempts: Vec<&Attempt> = self.index.attempts_of(id).map(|a| &self.state.attempts[&a]).collect();
        // One continuation in flight per worker, and it is the recorded one.
        let scheduled: Vec<AttemptId> =
            attempts.iter().filter(|a| a.state == AttemptState::Scheduled).map(|a| a.id).collect();
        if scheduled.len() > 1 || scheduled.first().copied() != w.in_flight {
            return violated("one_in_flight", format!("{id}: scheduled {scheduled:?}, in_flight {:?}", w.in_flight));
        }
        if let Some(turn) = w.turn {
            let a = self.state.attempts.get(&turn);
            let open = a.is_some_and(|a| {
                a.worker == id
                    && matches!(a.state, AttemptState::Submitted | AttemptState::Generating | AttemptState::Idle)
            });
            if !open {
                return violated("turn_open", format!("{id}: turn {turn} is {:?}", a.map(|a| a.state)));
            }
        }
        // Sequences are dense and monotonic, in id order.
        for (i, a) in attempts.iter().enumerate() {
            if a.sequence != i as u32 + 1 || a.worker != id || a.run != w.run {
                return violated(
                    "sequence_monotonic",
                    format!("{id}: attempt {} has sequence {} at position {}", a.id, a.sequence, i + 1),
                );
            }
        }
        if attempts.len() as u32 != w.attempts {
            return violated(
                "sequence_monotonic",
                format!("{id}: {} attempts recorded, counter {}", attempts.len(), w.attempts),
            );
        }
        if w.lifecycle.is_terminal() {
            if w.intent.is_some() {
                return violated(
                    "terminal_no_intent",
                    format!("{id} is {} with a pending continuation", w.lifecycle.as_str()),
                );
            }
            let ended = w.ended_at.unwrap_or_default();
            if let Some(a) = attempts.iter().find(|a| a.scheduled_at > ended) {
                return violated(
                    "terminal_no_attempt",
                    format!("{id} ended at {ended}, attempt {} scheduled at {}", a.id, a.scheduled_at),
                );
            }
        }
        // No wait names a finished worker for longer than it takes to wake its waiter:
        // `end_worker` settles every waiter in its own batch, and a wait older than that
        // rule (read back from the store) is due on the waiter's timer at once.
        if let Some((dependency, outcome, _)) = self.finished_dependency(w)
            && self.index.timer_of(id).is_none_or(|t| t > self.now)
        {
            return violated(
                "wait_on_finished_worker",
                format!("{id} waits for {dependency}, which is {}, and is not due to be woken", outcome.as_str()),
            );
        }
        if let Some(intent) = &w.intent
            && intent.reasons.is_empty()
        {
            return violated("intent_has_reason", format!("{id}: pending continuation without reason"));
        }
        if w.progress.attempts_without > w.attempts {
            return violated(
                "progress_counter",
                format!("{id}: {} attempts without progress of {}", w.progress.attempts_without, w.attempts),
            );
        }
        self.check_floor(w, &attempts)
    }

    /// Ordinary non-idle deliveries (mid-turn steers that are not material corrections)
    /// are at least the policy's spacing after the previous delivery.
    fn check_floor(&self, w: &Worker, attempts: &[&Attempt]) -> Result<(), InvariantViolation> {
        let spacing = self.effective_policy(w).0.min_continuation_spacing_ms;
        let mut last_delivery: Option<crate::time::Timestamp> = None;
        let mut submitted: Vec<&&Attempt> = attempts.iter().filter(|a| a.submitted_at.is_some()).collect();
        submitted.sort_by_key(|a| (a.submitted_at, a.id));
        for a in submitted {
            let material = a.steering.as_ref().is_some_and(|s| s.material);
            if let (Delivery::Steer, false, Some(prev)) = (a.delivery, material, last_delivery)
                && a.scheduled_at.ms_since(prev) < spacing
            {
                return violated(
                    "anti_spam_floor",
                    format!(
                        "{}: steer {} scheduled {} ms after the previous delivery",
                        w.id,
                        a.id,
                        a.scheduled_at.ms_since(prev)
                    ),
                );
            }
            last_delivery = a.submitted_at;
        }
        Ok(())
    }

    fn check_runs(&self) -> Result<(), InvariantViolation> {
        for r in self.state.runs.values() {
            let workers = self.index.workers_of(r.id);
            if r.status.is_terminal()
                && let Some(w) = workers.iter().find(|w| !self.state.workers[w].lifecycle.is_terminal())
            {
                return violated(
                    "terminal_run",
                    format!("run {} is {} but {w} is unfinished", r.id, r.status.as_str()),
                );
            }
            if r.status == RunStatus::Completed && self.state.workers[&r.root].lifecycle != Lifecycle::Completed {
                return violated("terminal_run", format!("run {} completed without its root", r.id));
            }
        }
        Ok(())
    }

    fn check_events(&self) -> Result<(), InvariantViolation> {
        let events = self.state.log.retained();
        let next_cursor = self.state.ids.meta().next_cursor;
        let mut expected = events.front().map(|e| e.cursor.0);
        for e in events {
            if Some(e.cursor.0) != expected {
                return violated("event_cursor_dense", format!("cursor {} where {expected:?} was expected", e.cursor));
            }
            expected = Some(e.cursor.0 + 1);
        }
        if let Some(next) = expected
            && next != next_cursor
        {
            return violated("event_cursor_dense", format!("last cursor {} but next is {next_cursor}", next - 1));
        }
        Ok(())
    }

    fn check_index(&self) -> Result<(), InvariantViolation> {
        let mut conversations: BTreeMap<&str, WorkerId> = BTreeMap::new();
        for w in self.state.workers.values() {
            if let Some(b) =
                w.binding.as_ref().filter(|b| b.status != BindingStatus::Lost && !b.conversation.is_empty())
            {
                if w.lifecycle.is_terminal() {
                    continue;
                }
                if let Some(other) = conversations.insert(&b.conversation, w.id) {
                    return violated(
                        "conversation_unique",
                        format!("{other} and {} both lease {}", w.id, b.conversation),
                    );
                }
            }
            let indexed = self.index.timer_of(w.id);
            let computed = self.compute_timer(w);
            // A due timer may be stale until the next tick handles it.
            let due = indexed.is_some_and(|t| t <= self.now);
            if indexed != computed && !due {
                return violated(
                    "timer_index",
                    format!("{}: indexed timer {indexed:?}, computed {computed:?} at {}: {w:?}", w.id, self.now),
                );
            }
        }
        if conversations.len() != self.index.leases() {
            return violated(
                "conversation_index",
                format!("{} live leases, {} indexed", conversations.len(), self.index.leases()),
            );
        }
        Ok(())
    }
}
