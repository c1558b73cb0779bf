//! What a run produced ([`Outcome`]) and the final checks that fill it in: what the
//! oracles prove over the store recovered after the run and over what the hosts saw, the
//! counts scenarios expect, and the trace hash.

use crate::cli_evidence::Sources;
use crate::cli_oracle;
use crate::cli_session::CliDisk;
use crate::deadman_oracle;
use crate::epoch::EPOCH_MS;
use crate::kinds_oracle;
use crate::knobs::Knobs;
use crate::lease_oracle;
use crate::ledger::SharedLedger;
use crate::notify_oracle;
use crate::oracle;
use engine::model::Lifecycle;
use engine::{Engine, EngineConfig, Record};
use runtime::{Disk, MemStore, Store};
use std::cell::RefCell;
use std::collections::BTreeSet;
use std::rc::Rc;

/// What a run produced.
#[derive(Debug, Default)]
pub struct Outcome {
    /// Broken invariants (empty when the run passed).
    pub violations: Vec<String>,
    /// Hash of the full trace: same seed, same hash.
    pub trace_hash: u64,
    /// The last trace lines, for reports.
    pub trace_tail: Vec<String>,
    /// The whole trace.
    pub trace: Vec<String>,
    /// Simulated time when the run ended.
    pub sim_ms: u64,
    /// Turmoil steps taken.
    pub steps: u64,
    /// Workers spawned, and how many reached `completed`.
    pub workers: usize,
    /// Workers the engine holds as completed at the end.
    pub completed: usize,
    /// CLI workers still waiting, unsent, for an executor of their kind at the end.
    pub cli_waiting: usize,
    /// Workers the engine holds as failed at the end (their agents gave up).
    pub failed: usize,
    /// Workers the engine holds as cancelled at the end (the operator stopped them).
    pub cancelled: usize,
    /// Every `worker.dependency_ended`, in order: the waiter woken and how the worker it
    /// waited for ended (failed, cancelled).
    pub dependency_ended: Vec<(engine::ids::WorkerId, Lifecycle)>,
    /// Workers an attempt of which reached its conversation carrying the
    /// `event:dependency_ended` wake: the wake-up was delivered, not only recorded.
    pub woken_by_dependency_ended: BTreeSet<engine::ids::WorkerId>,
    /// Prompts accepted by conversations.
    pub deliveries: usize,
    /// Every delivery, with the conversation that took it.
    pub delivered: Vec<oracle::Delivery>,
    /// Fresh `continue` prompts delivered after delivery timeouts.
    pub fresh_continues: u32,
    /// Times a page showed the delivery-timeout card, whose Retry control is never to be
    /// clicked: what makes zero clicks meaningful.
    pub retry_offers: u32,
    /// Clicks on a Retry control (each one is also a violation).
    pub retry_clicks: usize,
    /// Workers left paused by the stall guard (a designed human checkpoint).
    pub stalled: usize,
    /// Blocks read from the agents' responses, by status (working, complete, blocked).
    pub blocks: [usize; 3],
    /// Attempts that used the completion-reconcile prompt (a `complete` block without
    /// `worker_complete`).
    pub reconciles: usize,
    /// Continuations scheduled while a worker's `blocked` block was unresolved (must be 0).
    pub scheduled_while_blocked: usize,
    /// Times the dead-man layer fired (`deadman.fired`).
    pub dead_man_fired: usize,
    /// Attempts that carried the dead-man wake (root recoveries).
    pub dead_man_recoveries: usize,
    /// Notifications created (one per episode and target).
    pub notices: usize,
    /// Of them, delivered.
    pub notices_delivered: usize,
    /// Wakes deferred by the anti-spam floor (`execution.deferred`).
    pub deferrals: usize,
    /// Attempts withdrawn before they left or before their submission began.
    pub withdrawn: usize,
    /// Automatic attempts submitted while their worker was held (see `oracle`).
    pub submitted_while_held: Vec<String>,
    /// Times the executor reconnected and said `hello` again.
    pub reconnects: usize,
    /// Conversations the executor stopped managing on `conversation.close`.
    pub closes: usize,
    /// Workers held by a page (`worker.held`: a limit over their account, a dialog).
    pub holds: usize,
    /// Workers paused by a page for a person (a usage limit without a time, an account check).
    pub page_pauses: usize,
    /// Approval cards the pages showed (answered by a simulated person, never clicked).
    pub approvals: u32,
    /// Workers paused because of the app (`app_unavailable`, `app_not_selected`).
    pub app_pauses: usize,
    /// What the CLI executor's sessions did (`cli_oracle.rs`).
    pub cli: cli_oracle::CliCounts,
    /// Planned crashes and triggers that never happened.
    pub unreached: Vec<String>,
    /// Crashes performed.
    pub crashes: Vec<String>,
    /// Leases taken (`standby on`: the first, and one per takeover or restart).
    pub lease_takes: usize,
    /// Daemons that stepped down (fenced, lease lost, store out of reach).
    pub step_downs: Vec<String>,
    /// Times the browser left a daemon silent since its last heartbeat answer.
    pub silent_leaves: usize,
}

/// The final checks: everything the oracle proves about a run.
pub(crate) fn check(
    outcome: &mut Outcome,
    ledger: &SharedLedger,
    disk: &Rc<RefCell<Disk>>,
    config: &EngineConfig,
    knobs: &Knobs,
) {
    let mut l = ledger.borrow_mut();
    // The lease: no epoch but the newest commits, and nothing leaves a replaced leader.
    {
        let d = disk.borrow();
        for broken in lease_oracle::fence_held(&d.commit_epochs, &d.takes)
            .into_iter()
            .chain(lease_oracle::dispatches_led(&l.dispatches, &d.takes))
        {
            l.violation(broken);
        }
        outcome.lease_takes = d.takes.len();
        outcome.step_downs = l.step_downs.clone();
        outcome.silent_leaves = l.silent_leaves;
    }
    let mut store = MemStore::open(disk.clone());
    let records = store.load().unwrap_or_default();
    match Engine::recover(config.clone(), records.clone()) {
        Err(e) => l.violation(format!("store does not recover: {e}")),
        Ok(engine) => {
            if let Err(v) = engine.check_invariants() {
                l.violation(format!("recovered engine: {v}"));
            }
            // Acknowledged writes survive every crash.
            let summaries: BTreeSet<String> = records
                .iter()
                .filter_map(|r| match r {
                    Record::Event(e) => match &e.kind {
                        engine::event::EventKind::WorkerProgress { summary, .. }
                        | engine::event::EventKind::WorkerCompleted { summary } => Some(summary.to_string()),
                        _ => None,
                    },
                    _ => None,
                })
                .collect();
            let lost: Vec<String> =
                l.acked.iter().filter(|(_, s)| !summaries.contains(s)).map(|(_, s)| s.clone()).collect();
            for s in lost {
                l.violation(format!("acknowledged write {s} lost"));
            }
            // What must follow: a fresh `continue` after each delivery timeout, and every
            // due keepalive delivered or superseded.
            let mut events: Vec<engine::event::Event> =
                records.iter().filter_map(|r| if let Record::Event(e) = r { Some(e.clone()) } else { None }).collect();
            events.sort_by_key(|e| e.cursor);
            let log = oracle::Log {
                events: &events,
                auto: knobs.auto,
                start: engine::time::Timestamp(EPOCH_MS),
                end: engine::time::Timestamp(EPOCH_MS + outcome.sim_ms),
            };
            for broken in oracle::delivery_timeouts_followed(log).into_iter().chain(oracle::keepalives_kept(log)) {
                l.violation(broken);
            }
            let seen = oracle::Seen {
                deliveries: &l.delivered,
                managed: &l.managed,
                closes: &l.closes,
                published: &l.published,
            };
            for broken in oracle::attachments_honoured(log, seen) {
                l.violation(broken);
            }
            let kinds = engine.workers().map(|w| (w.id, w.spec.executor)).collect();
            let holds = oracle::account_holds_honoured(log, &kinds);
            let pages = oracle::approvals_honoured(log).into_iter().chain(oracle::unrecognized_pages_honoured(log));
            for broken in holds.into_iter().chain(pages) {
                l.violation(broken);
            }
            let after_ms = knobs.dead_man.map_or(engine::limits::DEADMAN_AFTER_MS_DEFAULT, |(_, ms)| ms);
            for broken in deadman_oracle::dead_man_honoured(log, after_ms) {
                l.violation(broken);
            }
            outcome.dead_man_fired = events.iter().filter(|e| e.kind.name() == "deadman.fired").count();
            outcome.dead_man_recoveries =
                engine.attempts().filter(|a| a.wake.contains(engine::wake::WakeReason::DeadMan)).count();
            for e in &events {
                match &e.kind {
                    engine::event::EventKind::WorkerHeld { .. } => outcome.holds += 1,
                    engine::event::EventKind::WorkerDependencyEnded { outcome: ended, .. } => {
                        outcome.dependency_ended.extend(e.worker.map(|w| (w, *ended)));
                    }
                    engine::event::EventKind::WorkerPaused {
                        reason: engine::model::PauseReason::UsageLimit | engine::model::PauseReason::AccountCheck,
                        ..
                    } => outcome.page_pauses += 1,
                    engine::event::EventKind::WorkerPaused {
                        reason: engine::model::PauseReason::AppUnavailable | engine::model::PauseReason::AppNotSelected,
                        ..
                    } => outcome.app_pauses += 1,
                    _ => {}
                }
            }
            outcome.submitted_while_held = oracle::held_submissions(log);
            outcome.withdrawn =
                engine.attempts().filter(|a| a.outcome == Some(engine::model::AttemptOutcome::Withdrawn)).count();
            // Event cursors are dense from 1.
            let cursors: Vec<u64> =
                records.iter().filter_map(|r| if let Record::Event(e) = r { Some(e.cursor.0) } else { None }).collect();
            if cursors.iter().enumerate().any(|(i, c)| *c != i as u64 + 1) {
                l.violation("event cursors have a gap");
            }
            // Notifications: once per episode, none invented, none posted twice without a
            // restart between, none left pending once the run had time to settle.
            let notices: Vec<engine::notify::Notice> = engine.notices().cloned().collect();
            let calm_since = l
                .notify_down
                .iter()
                .map(|(_, until)| *until)
                .chain(l.daemon_starts.iter().copied())
                .chain(notices.iter().map(|n| n.at.0.saturating_sub(EPOCH_MS)))
                .max()
                .unwrap_or(0);
            let settle_ms = engine::limits::NOTIFY_RETRY_MS_MAX + engine::limits::NOTIFY_SEND_MS_MAX + 60_000;
            let notify_log = notify_oracle::NotifyLog {
                events: &events,
                notices: &notices,
                targets: knobs.notify_targets,
                received: &l.notify_received,
                daemon_starts: &l.daemon_starts,
                settled: outcome.sim_ms >= calm_since + settle_ms,
            };
            for broken in notify_oracle::notifications_honoured(notify_log) {
                l.violation(broken);
            }
            outcome.notices = notices.len();
            outcome.notices_delivered =
                notices.iter().filter(|n| matches!(n.status, engine::notify::NoticeStatus::Delivered(_))).count();
            // Exactly once: no delivered prompt is one the engine believes was never sent.
            let late = oracle::scheduled_after_end(log);
            let delivered = l.delivered.clone();
            for oracle::Delivery { key, .. } in &delivered {
                let id = key.rsplit("exe-").next().and_then(|n| n.parse::<u64>().ok());
                let attempt = id.and_then(|n| engine.attempt(engine::ids::AttemptId(n)));
                let undelivered = attempt.is_some_and(|a| {
                    matches!(
                        a.outcome,
                        Some(engine::model::AttemptOutcome::Withdrawn | engine::model::AttemptOutcome::NotDelivered)
                    )
                });
                if attempt.is_none() || undelivered {
                    let what = format!("delivered {key} but the engine holds it as {:?}", attempt.map(|a| a.outcome));
                    l.violations.push(what);
                }
                // Nothing new for a finished worker: a prompt that reaches a completed or
                // failed worker's conversation was in flight before it ended (spec 000
                // §21.3), never scheduled after.
                if let Some(a) = attempt
                    && let Some(cursor) = late.get(&a.id)
                {
                    l.violations.push(format!("delivered {key}, scheduled (event #{cursor}) after {} ended", a.worker));
                }
            }
            // Liveness: every lane whose agent finished is completed, with zero manual continues.
            // The coordinator can only complete after every lane: a stalled lane (a designed
            // human checkpoint) keeps it open legitimately.
            let lane_stalled = engine.workers().any(|w| {
                w.spec.name != "/root"
                    && w.pause.as_ref().is_some_and(|p| p.reason == engine::model::PauseReason::Stall)
            });
            let with_root = knobs.root && !lane_stalled;
            // Without a CLI executor, CLI lanes wait for one: checked apart, never live here.
            let served = knobs.cli.executor;
            let facts = kinds_oracle::cli_workers_untouched(&engine, &l.cli_workers, &l.browser_commands, served);
            outcome.cli_waiting = facts.waiting;
            l.violations.extend(facts.violations);
            let with_root = with_root && (l.cli_workers.is_empty() || served);
            let lanes: Vec<_> = engine
                .workers()
                .filter(|w| (with_root || w.spec.name != "/root") && (served || !l.cli_workers.contains(&w.id)))
                .collect();
            outcome.workers = lanes.len();
            outcome.completed = lanes.iter().filter(|w| w.lifecycle == Lifecycle::Completed).count();
            outcome.failed = lanes.iter().filter(|w| w.lifecycle == Lifecycle::Failed).count();
            outcome.cancelled = lanes.iter().filter(|w| w.lifecycle == Lifecycle::Cancelled).count();
            for w in &lanes {
                // An agent that gave up (`worker_fail`) finished too: its worker is failed;
                // a lane the operator stopped is cancelled (unless it ended first).
                let gave_up = l.failed_agents.contains(&w.id);
                let stopped = l.stopped.contains(&w.id) && w.lifecycle == Lifecycle::Cancelled;
                let expected = if stopped {
                    Lifecycle::Cancelled
                } else if gave_up {
                    Lifecycle::Failed
                } else {
                    Lifecycle::Completed
                };
                if l.finished_agents.contains(&w.id) && w.lifecycle != expected {
                    l.violation(format!("{} finished its work but is {}", w.id, w.lifecycle.as_str()));
                }
                // A stall pause is the policy's designed human checkpoint, not a bug: the
                // engine only sets it past the no-progress thresholds.
                let stalled = w.pause.as_ref().is_some_and(|p| p.reason == engine::model::PauseReason::Stall);
                if stalled {
                    outcome.stalled += 1;
                } else if w.lifecycle != expected {
                    l.violation(format!("{} never finished (liveness): {}", w.id, w.lifecycle.as_str()));
                }
            }
            // Zero manual continues, except the operator's recoveries of conversations lost
            // to an ambiguous create (the spec's fail-closed path).
            // An attempt that definitely never reached the page hands its wake to the next
            // one (a redelivery): count the operator's act once, where it may have landed.
            let reached = |a: &engine::model::Attempt| {
                use engine::model::AttemptOutcome::{Ambiguous, DeliveryTimeout};
                a.submitted_at.is_some() || matches!(a.outcome, Some(Ambiguous | DeliveryTimeout))
            };
            let manual = engine
                .attempts()
                .filter(|a| a.wake.contains(engine::wake::WakeReason::ContinueNow) && reached(a))
                .count();
            outcome.woken_by_dependency_ended = engine
                .attempts()
                .filter(|a| a.wake.contains(engine::wake::WakeReason::DependencyEnded) && a.submitted_at.is_some())
                .map(|a| a.worker)
                .collect();
            block_facts(outcome, &engine, &records);
            // `/root`'s own recoveries of its lanes are coordination, not a person's act.
            let recoveries = l.operator_recoveries + l.root_recoveries;
            if manual > recoveries {
                l.violation(format!("{manual} manual continues were needed ({recoveries} recoveries)"));
            }
        }
    }
    // Nobody clicks Retry. The message a click re-sent was also counted a second time
    // for its idempotency key when the page took it (`Ledger::delivered`).
    for broken in oracle::no_retry_clicks(&l.retry_clicks) {
        l.violation(broken);
    }
    outcome.deliveries = l.deliveries.len();
    outcome.delivered = l.delivered.clone();
    outcome.fresh_continues = l.fresh_continues;
    outcome.retry_offers = l.retry_offers;
    outcome.approvals = l.approvals;
    outcome.retry_clicks = l.retry_clicks.len();
    outcome.violations = l.violations.clone();
    outcome.crashes = l.crashes.clone();
    outcome.reconnects = l.hellos.saturating_sub(1);
    outcome.closes = l.closes.iter().filter(|c| c.released).count();
    outcome.unreached = l.crash_plan.iter().map(|c| format!("crash at {} #{}", c.boundary, c.occurrence)).collect();
    let triggers = l
        .triggers
        .iter()
        .map(|t| format!("{:?} at {} #{} of {}", t.reaction, t.at.boundary, t.at.occurrence, t.worker()));
    outcome.unreached.extend(triggers);
    outcome.unreached.extend(l.uncommitted.iter().cloned());
    let mut hasher = Fnv::default();
    for line in &l.trace {
        hasher.write(line.as_bytes());
        hasher.write(b"\n");
    }
    outcome.trace_hash = hasher.0;
    outcome.trace_tail = l.trace.iter().rev().take(40).rev().cloned().collect();
    outcome.trace = l.trace.clone();
}

/// What the agents' end-of-response blocks made the backend do (spec 000 §27.3).
fn block_facts(outcome: &mut Outcome, engine: &Engine, records: &[Record]) {
    use engine::block::BlockStatus;
    use engine::event::EventKind;
    let mut events: Vec<&engine::event::Event> =
        records.iter().filter_map(|r| if let Record::Event(e) = r { Some(e) } else { None }).collect();
    events.sort_by_key(|e| e.cursor);
    let mut blocked = BTreeSet::new();
    for e in events {
        let Some(worker) = e.worker else { continue };
        match &e.kind {
            EventKind::BlockReported { status } => {
                let i = match status {
                    BlockStatus::Working => 0,
                    BlockStatus::Complete => 1,
                    BlockStatus::Blocked => 2,
                };
                outcome.blocks[i] += 1;
                if *status == BlockStatus::Blocked {
                    blocked.insert(worker);
                }
            }
            EventKind::WorkerHumanResolved => {
                blocked.remove(&worker);
            }
            EventKind::ExecutionScheduled { .. } if blocked.contains(&worker) => outcome.scheduled_while_blocked += 1,
            EventKind::ExecutionDeferred { .. } => outcome.deferrals += 1,
            _ => {}
        }
    }
    outcome.reconciles =
        engine.attempts().filter(|a| a.prompt == engine::model::PromptKind::CompletionReconcile).count();
}

/// FNV-1a, for trace hashes that are stable across processes and platforms.
struct Fnv(u64);

impl Default for Fnv {
    fn default() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
}

impl Fnv {
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 ^= u64::from(*b);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
}

/// The CLI executor's checks (`cli_oracle.rs`), over the store recovered after the run
/// and the CLIs' own records of their sessions.
pub(crate) fn check_cli(
    outcome: &mut Outcome,
    knobs: &Knobs,
    ledger: &SharedLedger,
    disk: &Rc<RefCell<Disk>>,
    cli_disk: &CliDisk,
    config: &EngineConfig,
    settled_ms: Option<u64>,
) {
    if let Some((engine, events)) = recovered(disk, config) {
        let daemon_starts = ledger.borrow().daemon_starts.clone();
        let approval_calls = ledger.borrow().approval_calls.clone();
        let limits = cli_oracle::limits_of(knobs, cli_disk);
        let start = engine::time::Timestamp(EPOCH_MS);
        let src = Sources {
            events: &events,
            engine: &engine,
            start,
            daemon_starts: &daemon_starts,
            limits,
            settled_ms,
            approval_calls: &approval_calls,
        };
        let facts = cli_oracle::check(knobs, cli_disk, &src);
        outcome.cli = facts.counts;
        outcome.violations.extend(facts.violations);
    }
}

/// The engine as the store recovers it after the run, and every durable event by cursor.
fn recovered(disk: &Rc<RefCell<Disk>>, config: &EngineConfig) -> Option<(Engine, Vec<engine::event::Event>)> {
    let records = MemStore::open(disk.clone()).load().ok()?;
    let mut events: Vec<engine::event::Event> =
        records.iter().filter_map(|r| if let Record::Event(e) = r { Some(e.clone()) } else { None }).collect();
    events.sort_by_key(|e| e.cursor);
    Some((Engine::recover(config.clone(), records).ok()?, events))
}
