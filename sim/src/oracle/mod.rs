//! Obligation checkers over the durable event log: what must *follow* an event, not only
//! what must never happen. Pure functions of the recovered events (so they judge what
//! the world really saw: effects leave the daemon only after their batch is durable),
//! unit-tested on synthetic traces.
//!
//! - After every delivery timeout (an attempt ending `delivery_timeout`, whether the page
//!   showed the card or the executor answered `MESSAGE_DELIVERY_TIMEOUT`), the worker's
//!   next attempt is the fresh `continue` (its wake carries `delivery_timeout`), or the
//!   command already in flight is submitted (spec 000 §10.2 step 8 coalesces them),
//!   unless the worker became terminal, paused, waiting, manual or lost its conversation
//!   first (spec 000 §22.3.1, 001 C16.4a).
//! - A keepalive that fell due is never dropped: the pending continuation keeps it until
//!   an attempt carries it, a submission supersedes it (a submission resets the
//!   keepalive, spec 000 §10.6), or a recorded cancellation or hold ends it (§10.5).
//!
//! - Nobody ever clicks the Retry control of the delivery-timeout card: a click re-sends
//!   the last user message, a turn the daemon never commanded (`no_retry_clicks`, over
//!   the clicks the conversation hosts saw; the duplicate delivery also breaks the
//!   exactly-once count of its idempotency key).
//!
//! - After a worker was attached to another conversation, its old conversations are left
//!   alone: nothing is typed into them again, the executor that managed one when the
//!   attach committed receives `conversation.close` for it, and publishes nothing about
//!   it after that (`attachments_honoured`, over what the conversation hosts and the
//!   executor saw).
//!
//! - For an account-wide limit (a usage or rate limit: `worker.held` with a time), no
//!   attempt for any worker of that account is scheduled after the hold began and before
//!   its time (`account_holds_honoured`; the simulator has one executor per kind, so an
//!   account is a kind: a Codex limit does not stop Claude or ChatGPT workers). The conversation hosts check the rest of the page states themselves:
//!   nothing is typed into a page that shows a limit, a check or a dialog, and nobody
//!   clicks a dialog (both recorded as violations as they happen).
//!
//! - While an approval card holds a worker, nothing is scheduled for it, no keepalive
//!   falls due and the stall guard stays quiet (`approvals_honoured`). The conversation
//!   hosts record typing into a page awaiting approval, or any click on the card, as
//!   violations as they happen.
//! - While a page shows something the adapter cannot name, nothing is scheduled for its
//!   worker (`unrecognized_pages_honoured`); typing into it is a host's violation too.
//!
//! Two helpers feed other checks: `scheduled_after_end` (attempts scheduled after their
//! worker ended: delivering one is a violation) and `held_submissions` (what scenarios'
//! `expect nothing-while-held` forbids).
//!
//! The run may stop while an obligation is legitimately pending (a keepalive waiting
//! for the end of a long turn on a page that cannot steer): one still open at the end
//! breaks only once it has been open longer than its rule's patience.
//!
//! This file holds the checks over the log; `oracle/seen.rs` those over what the hosts
//! saw, and the records they keep for them.

mod seen;

pub use seen::{Closed, Delivery, Managed, Published, RetryClick, Seen, attachments_honoured, no_retry_clicks};

use engine::ExecutorKind;
use engine::event::{Event, EventKind};
use engine::ids::{AttemptId, RunId, WorkerId};
use engine::model::{AttemptOutcome, AttemptReason, HoldReason};
use engine::policy::Mode;
use engine::time::Timestamp;
use engine::wake::WakeReason;
use std::collections::BTreeMap;

/// What the log says about one worker right now.
#[derive(Clone, Copy, Debug, Default)]
struct Facts {
    run: RunId,
    terminal: bool,
    human: bool,
    dependency: bool,
    paused: bool,
    pause_after_turn: bool,
    /// The worker's own mode override (`None` follows the run).
    mode: Option<Mode>,
    lost: bool,
    /// The attempt whose command is out and not yet submitted or closed.
    in_flight: Option<AttemptId>,
}

/// A continuation some event made due and nothing has discharged yet.
#[derive(Clone, Copy, Debug)]
struct Owed {
    /// The event that made it due, and when.
    cursor: u64,
    at: Timestamp,
    /// The attempt whose end made it due (delivery timeouts).
    attempt: Option<AttemptId>,
    /// An attempt already in flight then, whose submission also discharges it.
    coalesced: Option<AttemptId>,
}

/// Replays the log, tracking each worker's holds, and lets a rule open, discharge and
/// excuse one obligation per worker.
struct Replay {
    auto: bool,
    runs: BTreeMap<RunId, Mode>,
    workers: BTreeMap<WorkerId, Facts>,
}

impl Replay {
    fn new(auto: bool) -> Replay {
        Replay { auto, runs: BTreeMap::new(), workers: BTreeMap::new() }
    }

    /// Whether nothing automatic is owed to the worker now: terminal, waiting, paused,
    /// manual, or without a conversation (recovery is an explicit act).
    fn excused(&self, worker: WorkerId) -> bool {
        let Some(f) = self.workers.get(&worker) else { return false };
        let run_mode = self.runs.get(&f.run).copied().unwrap_or(if self.auto { Mode::Auto } else { Mode::Manual });
        let manual = f.mode.unwrap_or(run_mode) == Mode::Manual;
        f.terminal || f.human || f.dependency || f.paused || f.pause_after_turn || manual || f.lost
    }

    fn facts(&mut self, worker: WorkerId, run: RunId) -> &mut Facts {
        self.workers.entry(worker).or_insert(Facts { run, ..Facts::default() })
    }

    /// Applies one event to the facts.
    fn apply(&mut self, e: &Event) {
        match &e.kind {
            EventKind::RunPolicyChanged { mode } => {
                self.runs.insert(e.run, *mode);
            }
            EventKind::RunEnded { .. } => {
                for f in self.workers.values_mut().filter(|f| f.run == e.run) {
                    f.terminal = true;
                }
            }
            _ => {}
        }
        let Some(worker) = e.worker else { return };
        let f = self.facts(worker, e.run);
        match &e.kind {
            EventKind::WorkerCompleted { .. } | EventKind::WorkerFailed { .. } | EventKind::WorkerCancelled { .. } => {
                f.terminal = true
            }
            EventKind::WorkerAwaitingHuman { .. } => f.human = true,
            EventKind::WorkerHumanResolved => f.human = false,
            EventKind::WorkerAwaitingDependency { .. } => f.dependency = true,
            EventKind::WorkerDependencyReleased { .. } => f.dependency = false,
            EventKind::WorkerPaused { after_turn: true, .. } => f.pause_after_turn = true,
            EventKind::WorkerPaused { after_turn: false, .. } => {
                f.paused = true;
                f.pause_after_turn = false;
            }
            EventKind::WorkerResumed | EventKind::ContinuationStallAcknowledged => {
                f.paused = false;
                f.pause_after_turn = false;
            }
            EventKind::PolicyChanged { mode, inherited } => f.mode = (!inherited).then_some(*mode),
            EventKind::BindingLost { .. } => f.lost = true,
            EventKind::WorkerAttached { .. } | EventKind::BindingVerified { .. } => f.lost = false,
            EventKind::ExecutionScheduled { .. } => f.in_flight = e.attempt,
            EventKind::ExecutionSubmitted | EventKind::ExecutionEnded { .. } if f.in_flight == e.attempt => {
                f.in_flight = None
            }
            _ => {}
        }
    }
}

/// What one rule does with an event for the worker it concerns.
enum Verdict {
    /// Nothing changes.
    Keep,
    /// A new obligation (replacing none: an open one stays the older).
    Open(Owed),
    /// The obligation is met.
    Discharge,
    /// The obligation is broken: the message says how.
    Break(String),
}

/// How long a fresh `continue` may take at most once due (the idle grace, an executor
/// that reconnects); a run's faults are healed well before it ends.
pub const CONTINUE_PATIENCE_MS: u64 = 10 * 60_000;
/// How long a due keepalive may wait at most: for the end of the longest turn (45
/// minutes in the agent model) on a page that cannot steer.
pub const KEEPALIVE_PATIENCE_MS: u64 = 60 * 60_000;

/// The log of one run and when it ended.
#[derive(Clone, Copy, Debug)]
pub struct Log<'a> {
    /// The durable events, by cursor.
    pub events: &'a [Event],
    /// Auto Resume was the run's default at creation.
    pub auto: bool,
    /// When the run started: what the hosts saw is timed in ms since then.
    pub start: Timestamp,
    /// When the run stopped.
    pub end: Timestamp,
}

/// Runs a rule over the log: `rule` sees each event with the worker's open obligation
/// (excused ones are dropped before it looks). Obligations still open at the end break
/// once older than `patience_ms`.
fn check(
    log: Log<'_>,
    what: &str,
    patience_ms: u64,
    mut rule: impl FnMut(&Event, Option<Owed>, &Replay) -> Verdict,
) -> Vec<String> {
    let mut replay = Replay::new(log.auto);
    let mut owed: BTreeMap<WorkerId, Owed> = BTreeMap::new();
    let mut broken = Vec::new();
    for e in log.events {
        replay.apply(e);
        let Some(worker) = e.worker else { continue };
        if replay.excused(worker) {
            owed.remove(&worker);
            continue;
        }
        match rule(e, owed.get(&worker).copied(), &replay) {
            Verdict::Keep => {}
            Verdict::Open(o) => {
                owed.entry(worker).or_insert(o);
            }
            Verdict::Discharge => {
                owed.remove(&worker);
            }
            Verdict::Break(why) => {
                owed.remove(&worker);
                broken.push(format!("{what}: {worker} {why} (event #{})", e.cursor));
            }
        }
    }
    for (worker, o) in owed.into_iter().filter(|(_, o)| log.end.ms_since(o.at) > patience_ms) {
        let attempt = o.attempt.map(|a| format!(" of {a}")).unwrap_or_default();
        let minutes = log.end.ms_since(o.at) / 60_000;
        broken.push(format!("{what}: {worker} never got it in {minutes} min after event #{}{attempt}", o.cursor));
    }
    broken
}

/// After every delivery timeout a fresh `continue` follows (or the excuses above).
pub fn delivery_timeouts_followed(log: Log<'_>) -> Vec<String> {
    let what = "no fresh continue after a delivery timeout";
    check(log, what, CONTINUE_PATIENCE_MS, |e, owed, replay| match (&e.kind, owed) {
        (EventKind::ExecutionEnded { outcome: AttemptOutcome::DeliveryTimeout, .. }, _) => {
            let coalesced = e.worker.and_then(|w| replay.workers.get(&w)).and_then(|f| f.in_flight);
            Verdict::Open(Owed { cursor: e.cursor.0, at: e.at, attempt: e.attempt, coalesced })
        }
        (EventKind::ExecutionScheduled { wake, .. }, Some(_)) if wake.contains(WakeReason::DeliveryTimeout) => {
            Verdict::Discharge
        }
        (EventKind::ExecutionScheduled { wake, .. }, Some(o)) => Verdict::Break(format!(
            "got {} (wake {}) after the timeout of {} at event #{}",
            e.attempt.map(|a| a.to_string()).unwrap_or_default(),
            wake.labels().join("+"),
            o.attempt.map(|a| a.to_string()).unwrap_or_default(),
            o.cursor
        )),
        (EventKind::ExecutionSubmitted, Some(o)) if o.coalesced.is_some() && e.attempt == o.coalesced => {
            Verdict::Discharge
        }
        _ => Verdict::Keep,
    })
}

/// A due keepalive is delivered, superseded by a submission, or ended by a recorded
/// cancellation or hold; never silently dropped from the pending continuation.
pub fn keepalives_kept(log: Log<'_>) -> Vec<String> {
    check(log, "keepalive dropped", KEEPALIVE_PATIENCE_MS, |e, owed, _| match (&e.kind, owed) {
        (EventKind::ResumeScheduled { reasons, .. }, None) if reasons.contains(WakeReason::ActiveKeepalive) => {
            Verdict::Open(Owed { cursor: e.cursor.0, at: e.at, attempt: None, coalesced: None })
        }
        (EventKind::ExecutionScheduled { wake, .. }, Some(_)) if wake.contains(WakeReason::ActiveKeepalive) => {
            Verdict::Discharge
        }
        (EventKind::ExecutionScheduled { wake, .. }, Some(o)) => Verdict::Break(format!(
            "got {} (wake {}) without the keepalive due since event #{}",
            e.attempt.map(|a| a.to_string()).unwrap_or_default(),
            wake.labels().join("+"),
            o.cursor
        )),
        (EventKind::ExecutionSubmitted | EventKind::ResumeCancelled { .. }, Some(_)) => Verdict::Discharge,
        _ => Verdict::Keep,
    })
}

/// Attempts scheduled after their worker became terminal (by log order, not by time:
/// both may carry the same millisecond). Delivering one breaks spec 000 §10.2 steps 1-2;
/// an attempt already in flight when the worker ended is the accepted race of §21.3.
pub fn scheduled_after_end(log: Log<'_>) -> BTreeMap<AttemptId, u64> {
    let mut replay = Replay::new(log.auto);
    let mut late = BTreeMap::new();
    for e in log.events {
        if let (EventKind::ExecutionScheduled { .. }, Some(a), Some(w)) = (&e.kind, e.attempt, e.worker)
            && replay.workers.get(&w).is_some_and(|f| f.terminal)
        {
            late.insert(a, e.cursor.0);
        }
        replay.apply(e);
    }
    late
}

/// Automatic attempts submitted while their worker waited for a human or a dependency
/// or was paused (spec 000 §10.2 steps 3-5). Not a global rule: a command whose
/// submission began before the hold is the spec's accepted race (§21.3); scenarios whose
/// timing rules that out (a composer delay longer than the cancel's trip) expect none.
pub fn held_submissions(log: Log<'_>) -> Vec<String> {
    let mut replay = Replay::new(log.auto);
    let mut automatic: BTreeMap<AttemptId, bool> = BTreeMap::new();
    let mut found = Vec::new();
    for e in log.events {
        replay.apply(e);
        match (&e.kind, e.attempt, e.worker) {
            (EventKind::ExecutionScheduled { reason, .. }, Some(a), _) => {
                let auto =
                    matches!(reason, AttemptReason::AutoResume | AttemptReason::Checkpoint | AttemptReason::Corrective);
                automatic.insert(a, auto);
            }
            (EventKind::ExecutionSubmitted, Some(a), Some(w)) if automatic.get(&a) == Some(&true) => {
                let f = replay.workers.get(&w).copied().unwrap_or_default();
                if f.human || f.dependency || f.paused {
                    found.push(format!("{a} was submitted to {w} while it was held (event #{})", e.cursor));
                }
            }
            _ => {}
        }
    }
    found
}

/// While an approval card holds a worker (`worker.held` `awaiting_approval` until its
/// `worker.hold_lifted`, or until the binding is lost or replaced), nothing is scheduled
/// for it, no keepalive falls due and the stall guard neither warns nor pauses it: time
/// spent waiting for a person is neither a turn to nudge nor a stall (issue 17).
pub fn approvals_honoured(log: Log<'_>) -> Vec<String> {
    let mut held: BTreeMap<WorkerId, u64> = BTreeMap::new();
    let mut broken = Vec::new();
    for e in log.events {
        let Some(worker) = e.worker else { continue };
        match &e.kind {
            EventKind::WorkerHeld { reason: HoldReason::AwaitingApproval, .. } => {
                held.entry(worker).or_insert(e.cursor.0);
            }
            EventKind::WorkerHoldLifted { reason: HoldReason::AwaitingApproval }
            | EventKind::BindingLost { .. }
            | EventKind::WorkerAttached { .. } => {
                held.remove(&worker);
            }
            _ => {}
        }
        let Some(since) = held.get(&worker) else { continue };
        let what = match &e.kind {
            EventKind::ExecutionScheduled { .. } => "an attempt was scheduled",
            EventKind::ResumeScheduled { reasons, .. } if reasons.contains(WakeReason::ActiveKeepalive) => {
                "a keepalive fell due"
            }
            EventKind::ContinuationWarning { .. } => "the stall guard warned",
            EventKind::ContinuationPausedForStall { .. } => "the stall guard paused it",
            _ => continue,
        };
        broken.push(format!(
            "approval not honoured: {worker} awaits approval since event #{since}, yet {what} (event #{})",
            e.cursor
        ));
    }
    broken
}

/// While a worker's page shows something the adapter cannot name (`worker.held`
/// `page_unrecognized`, issue 27), no attempt is scheduled for it until the page is known
/// again (`worker.hold_lifted`), or the binding is lost or replaced: an unrecognized page
/// is never taken for idle. (The conversation hosts record typing into it as it happens.)
pub fn unrecognized_pages_honoured(log: Log<'_>) -> Vec<String> {
    let mut held: BTreeMap<WorkerId, u64> = BTreeMap::new();
    let mut broken = Vec::new();
    for e in log.events {
        let Some(worker) = e.worker else { continue };
        match &e.kind {
            EventKind::WorkerHeld { reason: HoldReason::PageUnrecognized, .. } => {
                held.entry(worker).or_insert(e.cursor.0);
            }
            EventKind::WorkerHoldLifted { reason: HoldReason::PageUnrecognized }
            | EventKind::BindingLost { .. }
            | EventKind::WorkerAttached { .. } => {
                held.remove(&worker);
            }
            EventKind::ExecutionScheduled { .. } => {
                if let Some(since) = held.get(&worker) {
                    broken.push(format!(
                        "unrecognized page not honoured: {worker}'s page is unrecognized since event #{since}, \
                         yet an attempt was scheduled (event #{})",
                        e.cursor
                    ));
                }
            }
            _ => {}
        }
    }
    broken
}

/// No attempt is scheduled while an account-wide hold (a `worker.held` for a usage or
/// rate limit, with its time) is in force: from that event to its time, for any worker of
/// the held worker's kind (`kinds`; absent: `chatgpt`). The simulator has one executor per
/// kind, so an account is a kind. A later, longer hold extends the window; holds lift
/// only at their time.
pub fn account_holds_honoured(log: Log<'_>, kinds: &BTreeMap<WorkerId, ExecutorKind>) -> Vec<String> {
    let kind_of = |w: Option<WorkerId>| w.and_then(|w| kinds.get(&w).copied()).unwrap_or_default();
    let mut holds: BTreeMap<ExecutorKind, (Timestamp, u64)> = BTreeMap::new();
    let mut broken = Vec::new();
    for e in log.events {
        holds.retain(|_, (until, _)| e.at < *until);
        let kind = kind_of(e.worker);
        let hold = holds.get(&kind).copied();
        match (&e.kind, hold) {
            (
                EventKind::WorkerHeld {
                    reason: HoldReason::UsageLimit | HoldReason::RateLimited,
                    until: Some(until),
                    ..
                },
                _,
            ) if hold.is_none_or(|(t, _)| *until > t) => {
                holds.insert(kind, (*until, e.cursor.0));
            }
            (EventKind::ExecutionScheduled { .. }, Some((until, cursor))) => broken.push(format!(
                "scheduled while the account was held: {} for {} at {} ms (event #{}), held since event #{cursor} \
                 until {} ms",
                e.attempt.map(|a| a.to_string()).unwrap_or_default(),
                e.worker.map(|w| w.to_string()).unwrap_or_default(),
                e.at.ms_since(log.start),
                e.cursor,
                until.ms_since(log.start)
            )),
            _ => {}
        }
    }
    broken
}

#[cfg(test)]
mod tests;
