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
//!
//! Two helpers feed other checks: `scheduled_after_end` (attempts scheduled after their
//! worker ended: delivering one is a violation) and `held_submissions` (what scenarios'
//! `expect nothing-while-held` forbids).
//!
//! The run may stop while an obligation is legitimately pending (a keepalive waiting
//! for the end of a long turn on a page that cannot steer): one still open at the end
//! breaks only once it has been open longer than its rule's patience.

use crate::wire::conversation_host;
use engine::ExecutorKind;
use engine::event::{Event, EventKind};
use engine::ids::{AttemptId, RunId, WorkerId};
use engine::model::{AttemptOutcome, AttemptReason, HoldReason};
use engine::policy::Mode;
use engine::time::Timestamp;
use engine::wake::WakeReason;
use std::collections::{BTreeMap, BTreeSet};

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

/// One click on a conversation's Retry control, as its host saw it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RetryClick {
    /// The conversation host whose page was clicked, to find it in the trace.
    pub conversation: String,
    /// The worker whose message the conversation last accepted (`None` before any), to
    /// say whose turn was duplicated.
    pub worker: Option<WorkerId>,
    /// Simulated ms since the start, to find the click in the trace.
    pub at_ms: u64,
    /// The idempotency key of the user message the click re-sent; `None` when no
    /// delivery-timeout card was showing (no control to click, nothing sent).
    pub resubmitted: Option<String>,
}

/// The executor never clicks Retry: after a delivery timeout only the daemon's fresh
/// `continue` follows (spec 000 §22.3.1, 001 C16.4a). Every click breaks, whether or not
/// it re-sent anything.
pub fn no_retry_clicks(clicks: &[RetryClick]) -> Vec<String> {
    clicks
        .iter()
        .map(|click| {
            let whose = click.worker.map(|w| format!(" ({w})")).unwrap_or_default();
            let what = match &click.resubmitted {
                Some(key) => format!("re-sent {key}, a turn the daemon never commanded"),
                None => "with no delivery-timeout card showing".to_string(),
            };
            format!("Retry clicked: {}{whose} at {} ms {what}", click.conversation, click.at_ms)
        })
        .collect()
}

/// One prompt a conversation accepted, as its host saw it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Delivery {
    /// The conversation host that took it: which conversation was typed into.
    pub conversation: String,
    /// The worker whose command it was.
    pub worker: WorkerId,
    /// Its idempotency key, to find its attempt.
    pub key: String,
    /// Simulated ms since the start, to order it against attaches.
    pub at_ms: u64,
}

/// The executor started managing a conversation for a worker (`None`: stopped), as the
/// executor stored it: what it held when an attach committed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Managed {
    /// Whose binding changed.
    pub worker: WorkerId,
    /// The conversation host now managed for the worker, if any.
    pub conversation: Option<String>,
    /// Simulated ms since the start.
    pub at_ms: u64,
}

/// A `conversation.close` the executor received.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Closed {
    /// The worker it named.
    pub worker: WorkerId,
    /// The conversation host it named.
    pub conversation: String,
    /// Simulated ms since the start, when it arrived.
    pub at_ms: u64,
    /// Whether the executor held that binding and released it (a close for a binding not
    /// held is ignored), for `expect closes`.
    pub released: bool,
}

/// A state or binding report the executor published about a worker's conversation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Published {
    /// The worker it was about.
    pub worker: WorkerId,
    /// The conversation host whose page it described.
    pub conversation: String,
    /// Simulated ms since the start.
    pub at_ms: u64,
}

/// What the conversation hosts and the executor saw, for `attachments_honoured`.
#[derive(Clone, Copy, Debug)]
pub struct Seen<'a> {
    /// Every prompt a conversation accepted.
    pub deliveries: &'a [Delivery],
    /// Every change of what the executor manages, in order.
    pub managed: &'a [Managed],
    /// Every `conversation.close` the executor received.
    pub closes: &'a [Closed],
    /// Every state and binding the executor published.
    pub published: &'a [Published],
}

/// One committed `worker_attach`, from the durable log.
#[derive(Clone, Copy, Debug)]
struct Attach<'a> {
    worker: WorkerId,
    /// The conversation host it was attached to.
    to: &'a str,
    at_ms: u64,
    cursor: u64,
}

impl Attach<'_> {
    fn describe(&self) -> String {
        format!("{} was attached to {} at {} ms (event #{})", self.worker, self.to, self.at_ms, self.cursor)
    }
}

/// After every committed attach, the worker's old conversations (the ones that took its
/// prompts before, and the one the executor managed for it then) are left alone until
/// the worker is attached back to one of them: nothing is typed into them; the executor
/// that managed one for the worker receives `conversation.close` for it (spec: the
/// daemon sends it when the worker was attached to another conversation, or when the
/// executor reports the stale binding later); and nothing about it is published after
/// that close.
pub fn attachments_honoured(log: Log<'_>, seen: Seen<'_>) -> Vec<String> {
    let attaches = attaches_in(log);
    let mut broken = Vec::new();
    for (i, attach) in attaches.iter().enumerate() {
        let held = seen
            .managed
            .iter()
            .rfind(|m| m.worker == attach.worker && m.at_ms <= attach.at_ms)
            .and_then(|m| m.conversation.as_deref())
            .filter(|c| *c != attach.to);
        let typed = seen.deliveries.iter().filter(|d| d.worker == attach.worker && d.at_ms < attach.at_ms);
        let old: BTreeSet<&str> =
            typed.map(|d| d.conversation.as_str()).chain(held).filter(|c| *c != attach.to).collect();
        for conversation in old {
            // Until the worker is attached back to it.
            let back = attaches[i + 1..].iter().find(|a| a.worker == attach.worker && a.to == conversation);
            let until_ms = back.map_or(u64::MAX, |a| a.at_ms);
            broken.extend(typed_into_old(attach, conversation, until_ms, seen));
            let must_close = held == Some(conversation);
            broken.extend(released(attach, conversation, must_close, until_ms, seen));
        }
    }
    broken
}

/// The committed attaches of the log, in order.
fn attaches_in(log: Log<'_>) -> Vec<Attach<'_>> {
    log.events
        .iter()
        .filter_map(|e| match (&e.kind, e.worker) {
            (EventKind::WorkerAttached { conversation }, Some(worker)) => Some(Attach {
                worker,
                to: conversation_host(conversation)?,
                at_ms: e.at.ms_since(log.start),
                cursor: e.cursor.0,
            }),
            _ => None,
        })
        .collect()
}

/// The executor received `conversation.close` for the old `conversation` if it
/// `must_close` it (it managed it when the attach committed), and published nothing about
/// it after a close (until `until_ms`). This holds for a conversation adopted from the
/// executor's report after an ambiguous create too, which no attempt names by URL: the
/// engine names that close by the create (the matrix found it sent none before).
fn released(attach: &Attach<'_>, conversation: &str, must_close: bool, until_ms: u64, seen: Seen<'_>) -> Vec<String> {
    let close = seen
        .closes
        .iter()
        .find(|c| c.worker == attach.worker && c.conversation == conversation && c.at_ms >= attach.at_ms);
    match close {
        Some(close) => published_after_close(attach, close, until_ms, seen),
        None if must_close => vec![format!(
            "old conversation never released: the executor managed {conversation} when {} and never received \
             conversation.close for it",
            attach.describe()
        )],
        None => Vec::new(),
    }
}

/// Prompts typed into the attach's old `conversation` in `[attach, until_ms)`.
fn typed_into_old(attach: &Attach<'_>, conversation: &str, until_ms: u64, seen: Seen<'_>) -> Vec<String> {
    seen.deliveries
        .iter()
        .filter(|d| d.conversation == conversation && (attach.at_ms..until_ms).contains(&d.at_ms))
        .map(|d| {
            format!(
                "typed into an old conversation: {} went into {conversation} at {} ms, after {}",
                d.key,
                d.at_ms,
                attach.describe()
            )
        })
        .collect()
}

/// Reports about the closed conversation the executor published after the close.
fn published_after_close(attach: &Attach<'_>, close: &Closed, until_ms: u64, seen: Seen<'_>) -> Vec<String> {
    seen.published
        .iter()
        .filter(|p| p.worker == close.worker && p.conversation == close.conversation)
        .filter(|p| p.at_ms > close.at_ms && p.at_ms < until_ms)
        .map(|p| {
            format!(
                "old conversation still managed: the executor published {} for {} at {} ms, after \
                 conversation.close at {} ms ({})",
                p.conversation,
                p.worker,
                p.at_ms,
                close.at_ms,
                attach.describe()
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use engine::ids::Cursor;
    use engine::model::{AttemptState, PauseReason};
    use engine::wake::WakeSet;

    const W: WorkerId = WorkerId(2);

    /// A synthetic log: one event a second, cursors dense from 1.
    #[derive(Default)]
    struct Trace(Vec<Event>);

    impl Trace {
        /// The log as the run ended `minutes` after its last event.
        fn ended(&self, auto: bool, minutes: u64) -> Log<'_> {
            let last = self.0.last().map_or(Timestamp(0), |e| e.at);
            Log { events: &self.0, auto, start: Timestamp(0), end: last.plus_ms(minutes * 60_000) }
        }
        fn push(mut self, attempt: Option<u64>, kind: EventKind) -> Trace {
            let cursor = Cursor(self.0.len() as u64 + 1);
            let at = Timestamp(cursor.0 * 1_000);
            self.0.push(Event { cursor, at, run: RunId(1), worker: Some(W), attempt: attempt.map(AttemptId), kind });
            self
        }
        fn scheduled(self, attempt: u64, reasons: &[WakeReason]) -> Trace {
            let mut wake = WakeSet::EMPTY;
            for r in reasons {
                wake.insert(*r);
            }
            let kind =
                EventKind::ExecutionScheduled { reason: AttemptReason::AutoResume, wake, sequence: attempt as u32 };
            self.push(Some(attempt), kind)
        }
        fn submitted(self, attempt: u64) -> Trace {
            self.push(Some(attempt), EventKind::ExecutionSubmitted)
        }
        fn timed_out(self, attempt: u64) -> Trace {
            let kind =
                EventKind::ExecutionEnded { state: AttemptState::Failed, outcome: AttemptOutcome::DeliveryTimeout };
            self.push(Some(attempt), kind)
        }
        fn keepalive_due(self) -> Trace {
            let kind =
                EventKind::ResumeScheduled { reasons: WakeSet::of(WakeReason::ActiveKeepalive), not_before: None };
            self.push(None, kind)
        }
        fn paused(self) -> Trace {
            self.push(None, EventKind::WorkerPaused { reason: PauseReason::Operator, after_turn: false })
        }
    }

    /// A worker whose first turn runs.
    fn running() -> Trace {
        Trace::default().scheduled(1, &[WakeReason::Initial]).submitted(1)
    }

    fn held(trace: Trace, reason: HoldReason, until_s: u64) -> Trace {
        let kind = EventKind::WorkerHeld { reason, until: Some(Timestamp(until_s * 1_000)), detail: None };
        trace.push(None, kind)
    }

    #[test]
    fn nothing_is_scheduled_while_an_account_is_held() {
        // Held at 3 s until 10 s: an attempt at 4 s breaks, one at or after 10 s passes.
        let log = held(running(), HoldReason::UsageLimit, 10).scheduled(2, &[WakeReason::Idle]);
        let broken = account_holds_honoured(log.ended(true, 1), &BTreeMap::new());
        assert_eq!(broken.len(), 1, "{broken:?}");
        assert!(
            broken[0].starts_with("scheduled while the account was held: exe-2 for wrk-2 at 4000 ms"),
            "{broken:?}"
        );
        let log = held(running(), HoldReason::RateLimited, 4).scheduled(2, &[WakeReason::Idle]);
        assert!(account_holds_honoured(log.ended(true, 1), &BTreeMap::new()).is_empty());
        // A dialog holds only its own conversation, with no time: not an account hold.
        let dialog = EventKind::WorkerHeld { reason: HoldReason::BlockedByDialog, until: None, detail: None };
        let log = running().push(None, dialog).scheduled(2, &[WakeReason::Idle]);
        assert!(account_holds_honoured(log.ended(true, 1), &BTreeMap::new()).is_empty());
    }

    #[test]
    fn a_fresh_continue_after_the_timeout_passes() {
        let log = running().timed_out(1).scheduled(2, &[WakeReason::DeliveryTimeout]).submitted(2);
        assert_eq!(delivery_timeouts_followed(log.ended(true, 1)), Vec::<String>::new());
    }

    #[test]
    fn a_plain_resume_instead_of_the_continue_breaks() {
        let log = running().timed_out(1).scheduled(2, &[WakeReason::Idle]);
        let broken = delivery_timeouts_followed(log.ended(true, 1));
        assert_eq!(broken.len(), 1, "{broken:?}");
        assert!(broken[0].contains("exe-2 (wake idle)"), "{broken:?}");
    }

    #[test]
    fn nothing_at_all_after_the_timeout_breaks_at_the_end() {
        let broken = delivery_timeouts_followed(running().timed_out(1).ended(true, 11));
        assert_eq!(broken.len(), 1, "{broken:?}");
        assert!(broken[0].contains("never got it in 11 min"), "{broken:?}");
        // A run that stops within the patience is not judged on it.
        assert!(delivery_timeouts_followed(running().timed_out(1).ended(true, 9)).is_empty());
    }

    #[test]
    fn a_pause_a_completion_or_manual_mode_excuses_the_continue() {
        assert!(delivery_timeouts_followed(running().timed_out(1).paused().ended(true, 1)).is_empty());
        let done = running().timed_out(1).push(None, EventKind::WorkerCompleted { summary: "done".into() });
        assert!(delivery_timeouts_followed(done.ended(true, 1)).is_empty());
        assert!(delivery_timeouts_followed(running().timed_out(1).ended(false, 1)).is_empty());
    }

    #[test]
    fn a_command_already_in_flight_carries_the_continue() {
        let log = running().scheduled(2, &[WakeReason::ActiveKeepalive]).timed_out(1).submitted(2);
        assert!(delivery_timeouts_followed(log.ended(true, 1)).is_empty());
        // ...but only that command: another attempt without the wake still breaks.
        let log = running().scheduled(2, &[WakeReason::ActiveKeepalive]).timed_out(1).timed_out(2);
        let log = log.scheduled(3, &[WakeReason::Idle]);
        assert_eq!(delivery_timeouts_followed(log.ended(true, 1)).len(), 1);
    }

    #[test]
    fn a_keepalive_carried_by_an_attempt_or_superseded_passes() {
        let carried = running().keepalive_due().scheduled(2, &[WakeReason::ActiveKeepalive]);
        assert!(keepalives_kept(carried.ended(true, 1)).is_empty());
        let superseded = running().scheduled(2, &[WakeReason::Idle]).keepalive_due().submitted(2);
        assert!(keepalives_kept(superseded.ended(true, 1)).is_empty());
        let cancelled = running()
            .keepalive_due()
            .push(None, EventKind::ResumeCancelled { reasons: WakeSet::of(WakeReason::ActiveKeepalive) });
        assert!(keepalives_kept(cancelled.ended(true, 1)).is_empty());
    }

    #[test]
    fn an_attempt_scheduled_after_the_end_is_found_by_log_order() {
        let done = || EventKind::WorkerCompleted { summary: "done".into() };
        let log = running().scheduled(2, &[WakeReason::Idle]).push(None, done());
        assert!(scheduled_after_end(log.ended(true, 1)).is_empty());
        let log = running().push(None, done()).scheduled(2, &[WakeReason::Idle]);
        assert_eq!(scheduled_after_end(log.ended(true, 1)).keys().copied().collect::<Vec<_>>(), vec![AttemptId(2)]);
    }

    #[test]
    fn an_automatic_submission_while_paused_is_found() {
        let log = running().scheduled(2, &[WakeReason::Idle]).paused().submitted(2);
        assert_eq!(held_submissions(log.ended(true, 1)).len(), 1);
        let log = running().scheduled(2, &[WakeReason::Idle]).submitted(2).paused();
        assert!(held_submissions(log.ended(true, 1)).is_empty());
    }

    #[test]
    fn a_keepalive_missing_from_the_next_attempt_was_dropped() {
        let log = running().keepalive_due().scheduled(2, &[WakeReason::Idle]);
        let broken = keepalives_kept(log.ended(true, 1));
        assert_eq!(broken.len(), 1, "{broken:?}");
        assert!(broken[0].starts_with("keepalive dropped: wrk-2"), "{broken:?}");
        assert_eq!(keepalives_kept(running().keepalive_due().ended(true, 61)).len(), 1);
        assert!(keepalives_kept(running().keepalive_due().ended(true, 59)).is_empty());
        assert!(keepalives_kept(running().keepalive_due().paused().ended(true, 61)).is_empty());
    }

    /// The key of the first attempt, a create.
    const CREATE: &str = "conversation.create:exe-1";

    fn attach_kind() -> EventKind {
        EventKind::WorkerAttached { conversation: "https://chatgpt.com/c/fresh-0".into() }
    }

    /// A worker typed into `chat-0`, then attached to `fresh-0` at 3 s (event #3).
    fn attached() -> Trace {
        running().push(None, attach_kind())
    }

    fn delivery(conversation: &str, key: &str, at_ms: u64) -> Delivery {
        Delivery { conversation: conversation.into(), worker: W, key: key.into(), at_ms }
    }

    fn managed(conversation: Option<&str>, at_ms: u64) -> Managed {
        Managed { worker: W, conversation: conversation.map(String::from), at_ms }
    }

    fn published(conversation: &str, at_ms: u64) -> Published {
        Published { worker: W, conversation: conversation.into(), at_ms }
    }

    /// What a correct executor shows: `chat-0` managed, closed at 3.1 s, `fresh-0`
    /// opened and typed into after.
    fn honoured() -> (Vec<Delivery>, Vec<Managed>, Vec<Closed>, Vec<Published>) {
        let deliveries = vec![delivery("chat-0", CREATE, 1_500), delivery("fresh-0", "conversation.send:exe-2", 9_000)];
        let managed = vec![managed(Some("chat-0"), 1_000), managed(None, 3_100), managed(Some("fresh-0"), 8_000)];
        let closes = vec![Closed { worker: W, conversation: "chat-0".into(), at_ms: 3_100, released: true }];
        let published = vec![published("chat-0", 2_000), published("fresh-0", 8_500)];
        (deliveries, managed, closes, published)
    }

    fn check_attach(seen: &(Vec<Delivery>, Vec<Managed>, Vec<Closed>, Vec<Published>)) -> Vec<String> {
        let (deliveries, managed, closes, published) = seen;
        let seen = Seen { deliveries, managed, closes, published };
        attachments_honoured(attached().ended(true, 1), seen)
    }

    #[test]
    fn an_attach_honoured_passes() {
        assert_eq!(check_attach(&honoured()), Vec::<String>::new());
    }

    #[test]
    fn typing_into_the_old_conversation_after_an_attach_breaks() {
        let mut seen = honoured();
        seen.0.push(delivery("chat-0", "conversation.send:exe-3", 9_500));
        let broken = check_attach(&seen);
        assert_eq!(
            broken,
            vec![
                "typed into an old conversation: conversation.send:exe-3 went into chat-0 at 9500 ms, after wrk-2 \
                 was attached to fresh-0 at 3000 ms (event #3)"
            ]
        );
        // Attached back to it: typing there is right again.
        let back = EventKind::WorkerAttached { conversation: "https://chatgpt.com/c/chat-0".into() };
        let log = attached().push(None, back);
        let (deliveries, managed, closes, published) = &seen;
        let seen = Seen { deliveries, managed, closes, published };
        assert!(attachments_honoured(log.ended(true, 1), seen).is_empty());
    }

    #[test]
    fn a_close_never_received_or_not_honoured_breaks() {
        let mut seen = honoured();
        seen.2.clear();
        let broken = check_attach(&seen);
        assert_eq!(broken.len(), 1, "{broken:?}");
        assert!(broken[0].starts_with("old conversation never released: the executor managed chat-0 when wrk-2"));
        let mut seen = honoured();
        seen.3.push(published("chat-0", 5_000));
        let broken = check_attach(&seen);
        assert_eq!(broken.len(), 1, "{broken:?}");
        assert!(broken[0].contains("published chat-0 for wrk-2 at 5000 ms, after conversation.close at 3100 ms"));
    }

    #[test]
    fn every_retry_click_breaks() {
        assert!(no_retry_clicks(&[]).is_empty());
        let click = |resubmitted: Option<&str>| RetryClick {
            conversation: "chat-0".into(),
            worker: Some(W),
            at_ms: 5_000,
            resubmitted: resubmitted.map(String::from),
        };
        let broken = no_retry_clicks(&[click(Some("wrk-2-exe-3")), click(None)]);
        assert_eq!(broken.len(), 2, "{broken:?}");
        assert!(broken[0].starts_with("Retry clicked: chat-0 (wrk-2) at 5000 ms re-sent wrk-2-exe-3"), "{broken:?}");
        assert!(broken[1].ends_with("with no delivery-timeout card showing"), "{broken:?}");
    }
}
