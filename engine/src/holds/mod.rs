//! Holds from what pages show: an account's usage or rate limit (every worker of that
//! account waits until the page's reset time), a hard stop a person clears (suspicious
//! activity, a human check, a logged-out page), and a dialog or a tool-approval card over
//! one conversation.
//!
//! An account is an executor and a worker kind ([`AccountKey`]): a browser profile is one
//! ChatGPT login, a CLI executor has a Codex login and a Claude login. A limit holds or
//! pauses the workers of its account only: a Codex usage limit never holds a Claude
//! worker of the same CLI executor, nor a ChatGPT one.
//!
//! A hold is not a pause: nobody clears it, it lifts by itself (the limit's time comes,
//! the dialog goes away). While a worker is held nothing that types goes to it, its wakes
//! are kept, and its stall clock stands still: waiting on a limit is not a stall.
//!
//! The page-holds record is owned here: `holds/state.rs` keeps it ([`state::Holds`]), and
//! only the rules of this module change it; everyone else reads it.

use crate::engine::Engine;
use crate::event::EventKind;
use crate::ids::*;
use crate::limits::{ACCOUNT_HOLD_MS_MAX, ACCOUNT_HOLDS_COUNT_MAX, RATE_LIMIT_DEFAULT_HOLD_MS};
use crate::model::*;
use crate::op::HoldView;
use crate::time::Timestamp;
use std::sync::Arc;

pub(crate) mod state;

/// The state of a conversation covered by an unknown dialog.
pub(crate) const DIALOG: ConversationState = ConversationState::Error(ErrorKind::BlockedByDialog);

/// The hold a conversation state puts on its own worker: an unknown dialog, a
/// tool-approval card waiting for a person, or a page its executor does not recognize.
pub(crate) fn conversation_hold_of(state: ConversationState) -> Option<HoldReason> {
    match state {
        DIALOG => Some(HoldReason::BlockedByDialog),
        ConversationState::AwaitingApproval => Some(HoldReason::AwaitingApproval),
        ConversationState::Unrecognized => Some(HoldReason::PageUnrecognized),
        _ => None,
    }
}

impl Engine {
    /// The account-wide hold on the worker's account at the executor that carries its
    /// commands: the one holding its binding or, when nobody holds it yet, any connected
    /// one of its kind (held only when every such executor is). With none of its kind
    /// connected (after a daemon restart, before the `hello`s), any held account of its
    /// kind holds it: its command could only go to one of them.
    pub(crate) fn account_hold(&self, w: &Worker) -> Option<&AccountHold> {
        let holds = &self.state.holds.record().accounts;
        if holds.is_empty() {
            return None;
        }
        let kind = w.spec.executor;
        if let Some(e) = w.binding.as_ref().and_then(|b| b.executor.as_ref()) {
            return holds.get(&AccountKey { executor: e.clone(), kind });
        }
        let mut soonest: Option<&AccountHold> = None;
        // Only the executors that may take the worker (those of its kind) matter.
        let mut connected = self.conn.connected().filter(|e| self.runs_kind(e, kind)).peekable();
        if connected.peek().is_none() {
            return holds.iter().filter(|(a, _)| a.kind == kind).map(|(_, h)| h).min_by_key(|h| h.until);
        }
        for e in connected {
            let h = holds.get(&AccountKey { executor: e.clone(), kind })?;
            if soonest.is_none_or(|s| h.until < s.until) {
                soonest = Some(h);
            }
        }
        soonest
    }

    /// What the worker's conversation shows that holds it (its latest state): an unknown
    /// dialog, or a tool-approval card waiting for a person.
    pub(crate) fn conversation_hold(&self, w: &Worker) -> Option<HoldReason> {
        let b = w.binding.as_ref().filter(|b| b.status != BindingStatus::Lost)?;
        conversation_hold_of(b.state)
    }

    /// Whether a dialog or an approval card holds the worker's conversation.
    pub(crate) fn conversation_held(&self, w: &Worker) -> bool {
        self.conversation_hold(w).is_some()
    }

    /// Whether the worker is held (account limit, dialog or approval card).
    pub(crate) fn held(&self, w: &Worker) -> bool {
        self.conversation_held(w) || self.account_hold(w).is_some()
    }

    /// Whether the executor's account for workers of `kind` has an account-wide hold.
    pub(crate) fn account_held(&self, executor: &ExecutorId, kind: crate::kind::ExecutorKind) -> bool {
        self.state.holds.record().accounts.contains_key(&AccountKey { executor: executor.clone(), kind })
    }

    /// What holds the worker, for people: a dialog or an approval card first (they need
    /// a person), then an account limit.
    pub(crate) fn hold_view(&self, w: &Worker) -> Option<HoldView> {
        if let Some(reason) = self.conversation_hold(w) {
            let b = w.binding.as_ref().expect("a conversation hold has a binding");
            return Some(HoldView {
                reason,
                since: b.state_since,
                until: None,
                detail: self.state.holds.record().dialogs.get(&w.id).cloned(),
                approval: self.approvals.waiting(w.id).cloned(),
            });
        }
        self.account_hold(w).map(|h| HoldView {
            reason: h.reason,
            since: h.since,
            until: Some(h.until),
            detail: h.detail.clone(),
            approval: None,
        })
    }

    /// Active workers of the account: of its kind, with a binding naming its executor.
    fn workers_on(&self, account: &AccountKey) -> Vec<WorkerId> {
        self.state
            .workers
            .values()
            .filter(|w| !w.lifecycle.is_terminal() && w.spec.executor == account.kind)
            .filter(|w| w.binding.as_ref().is_some_and(|b| b.executor.as_ref() == Some(&account.executor)))
            .map(|w| w.id)
            .collect()
    }

    /// An account-wide limit reported for the account: hold every worker of it until
    /// `until` (a rate limit without one: [`RATE_LIMIT_DEFAULT_HOLD_MS`]), clamped between
    /// now and [`ACCOUNT_HOLD_MS_MAX`] from now. A hold already lasting at least as long
    /// stays as it is.
    pub(crate) fn hold_account(
        &mut self,
        account: &AccountKey,
        reason: HoldReason,
        until: Option<Timestamp>,
        detail: Option<Arc<str>>,
    ) {
        debug_assert!(matches!(reason, HoldReason::UsageLimit | HoldReason::RateLimited));
        let now = self.now;
        let asked = until.unwrap_or(now.plus_ms(RATE_LIMIT_DEFAULT_HOLD_MS));
        let until = asked.clamp(now, now.plus_ms(ACCOUNT_HOLD_MS_MAX));
        let existing = self.state.holds.record().accounts.get(account).cloned();
        if existing.as_ref().is_some_and(|h| h.until >= until) {
            return;
        }
        let affected = self.workers_on(account);
        if existing.is_none() {
            // The stall clock stops now: close the running segments while they still count.
            for id in &affected {
                self.end_running_segment(*id);
            }
            let accounts = &self.state.holds.record().accounts;
            if accounts.len() >= ACCOUNT_HOLDS_COUNT_MAX {
                let soonest = accounts.iter().min_by_key(|(_, h)| h.until).map(|(e, _)| e.clone());
                if let Some(e) = soonest {
                    self.lift_hold(&e);
                }
            }
        }
        let since = existing.map_or(now, |h| h.since);
        let hold = AccountHold { reason, since, until, detail: detail.clone() };
        self.state.holds.set_account(account.clone(), hold);
        debug_assert!(self.state.holds.record().accounts.len() <= ACCOUNT_HOLDS_COUNT_MAX);
        for id in affected {
            let run = self.state.workers[&id].run;
            let kind = EventKind::WorkerHeld { reason, until: Some(until), detail: detail.clone() };
            self.emit(run, Some(id), None, kind);
            self.evaluate(id);
        }
    }

    /// An account-wide hard stop (or a usage limit that names no reset): pause every
    /// active worker of the account for a person. An operator pause gives way to it (and
    /// a usage-limit pause to an account check); the other pauses already wait for a
    /// person and keep their own reason.
    pub(crate) fn pause_account(&mut self, account: &AccountKey, reason: PauseReason, detail: &str) {
        debug_assert!(matches!(reason, PauseReason::UsageLimit | PauseReason::AccountCheck));
        for id in self.workers_on(account) {
            let current = self.state.workers[&id].pause.as_ref().map(|p| p.reason);
            let replace = match current {
                None | Some(PauseReason::Operator) => true,
                Some(PauseReason::UsageLimit) => reason == PauseReason::AccountCheck,
                Some(_) => false,
            };
            if replace {
                self.set_pause(id, reason, Some(detail));
            }
        }
    }

    /// Lifts every account hold whose time has come (from the tick).
    pub(crate) fn lift_due_holds(&mut self) {
        let now = self.now;
        let due: Vec<AccountKey> =
            self.state.holds.record().accounts.iter().filter(|(_, h)| h.until <= now).map(|(a, _)| a.clone()).collect();
        for account in due {
            self.lift_hold(&account);
        }
    }

    /// Ends an account hold: its workers' stall clocks start again from now, and
    /// everything that waited is evaluated (and any command kept back is handed over).
    fn lift_hold(&mut self, account: &AccountKey) {
        let Some(hold) = self.state.holds.remove_account(account) else { return };
        let now = self.now;
        for id in self.workers_on(account) {
            let w = self.state.workers.get_mut(&id).expect("worker exists");
            w.progress.baseline_at = w.progress.baseline_at.max(now);
            let run = w.run;
            self.emit(run, Some(id), None, EventKind::WorkerHoldLifted { reason: hold.reason });
        }
        let waiting: Vec<(WorkerId, Option<AttemptId>)> = self
            .state
            .workers
            .values()
            .filter(|w| w.in_flight.is_some() || w.intent.is_some())
            .map(|w| (w.id, w.in_flight))
            .collect();
        for (id, in_flight) in waiting {
            if let Some(attempt) = in_flight {
                self.send_command(attempt);
            }
            self.evaluate(id);
        }
    }

    /// The page shows a dialog or an approval card over the worker's conversation (the
    /// state is already recorded): keep its words for people (the dialog's heading, the
    /// app's name) and say so once.
    pub(crate) fn conversation_hold_shown(
        &mut self,
        id: WorkerId,
        reason: HoldReason,
        previous: ConversationState,
        detail: Option<Arc<str>>,
    ) {
        // A report of the same dialog or card without words keeps the words known (a
        // republished state may carry none).
        let same = conversation_hold_of(previous) == Some(reason);
        let known = self.state.holds.record().dialogs.get(&id);
        let changed = known != detail.as_ref() && !(same && detail.is_none());
        if changed {
            self.state.holds.set_words(id, detail.clone());
        }
        if conversation_hold_of(previous) != Some(reason) {
            let run = self.state.workers[&id].run;
            let kind = EventKind::WorkerHeld { reason, until: None, detail };
            self.emit(run, Some(id), None, kind);
        }
    }

    /// A later state without the dialog or the card: the hold lifts by itself, and the
    /// stall clock starts again from now. A wake kept while a card waited waits for the
    /// turn's end (no steer into the turn the approval resumed). No keepalive fires while a card waits
    /// (`keepalive_armed`); one whose time came during the wait is skipped for this
    /// submission (the card showed the turn alive, and the report that lifted it is
    /// fresh), so a long wait for a person is not answered by a checkpoint the moment the
    /// turn goes on. The next submission arms the keepalive again.
    pub(crate) fn conversation_hold_gone(&mut self, id: WorkerId, reason: HoldReason) {
        self.forget_dialog(id);
        let now = self.now;
        let w = &self.state.workers[&id];
        let (policy, _) = self.effective_policy(w);
        let keepalive_passed = self.keepalive_time(w, &policy).is_some_and(|t| t <= now);
        let w = self.state.workers.get_mut(&id).expect("worker exists");
        w.progress.baseline_at = w.progress.baseline_at.max(now);
        if reason == HoldReason::AwaitingApproval && keepalive_passed {
            w.keepalive_fired = true;
        }
        // The approved tool call runs now, and the worker may be answering it (its
        // `worker_complete` may be the very call approved, arriving with this report): a
        // wake kept while the card waited goes in when the turn ends, never as a steer into
        // the resumed turn.
        if reason == HoldReason::AwaitingApproval
            && let Some(intent) = w.intent.as_mut()
        {
            intent.idle_only = true;
        }
        let run = w.run;
        self.emit(run, Some(id), None, EventKind::WorkerHoldLifted { reason });
    }

    /// Drops a dialog heading or app name no longer shown (the worker's conversation changed).
    pub(crate) fn forget_dialog(&mut self, id: WorkerId) {
        self.approvals.forget(id);
        self.state.holds.forget_words(id);
    }
}
