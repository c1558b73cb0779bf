//! Dead-man checks over the durable event log (`deadman.fired`, issue 19):
//!
//! - No firing while a worker of the run waits for a human (from `worker.awaiting_human`
//!   to its resolution or the worker's end) or for a tool approval (from `worker.held`
//!   `awaiting_approval` to its lift, a lost binding or an attach), nor while one is
//!   paused by the operator (from `worker.paused` `operator` to `worker.resumed`).
//! - At most one firing per window: two firings of a run are at least the threshold apart.
//! - At most one root recovery per firing that asked for one: attempts whose wake carries
//!   `deadman` never outnumber the firings with `recovery_requested` before them.

use crate::oracle::Log;
use engine::deadman::DeadManAction;
use engine::event::EventKind;
use engine::ids::{RunId, WorkerId};
use engine::model::{HoldReason, PauseReason};
use engine::time::Timestamp;
use engine::wake::WakeReason;
use std::collections::{BTreeMap, BTreeSet};

/// Every dead-man obligation over the log; `after_ms` is the run's threshold.
pub fn dead_man_honoured(log: Log<'_>, after_ms: u64) -> Vec<String> {
    let mut waiting: BTreeMap<WorkerId, &'static str> = BTreeMap::new();
    let mut approvals: BTreeSet<WorkerId> = BTreeSet::new();
    let mut last: BTreeMap<RunId, Timestamp> = BTreeMap::new();
    let mut asked: BTreeMap<RunId, usize> = BTreeMap::new();
    let mut broken = Vec::new();
    for e in log.events {
        let worker = e.worker;
        match (&e.kind, worker) {
            (EventKind::WorkerAwaitingHuman { .. }, Some(w)) => {
                waiting.insert(w, "waits for a human");
            }
            (EventKind::WorkerPaused { reason: PauseReason::Operator, after_turn: false }, Some(w)) => {
                waiting.entry(w).or_insert("is paused by the operator");
            }
            (
                EventKind::WorkerHumanResolved
                | EventKind::WorkerResumed
                | EventKind::WorkerCompleted { .. }
                | EventKind::WorkerFailed { .. }
                | EventKind::WorkerCancelled { .. },
                Some(w),
            ) => {
                waiting.remove(&w);
                approvals.remove(&w);
            }
            (EventKind::WorkerHeld { reason: HoldReason::AwaitingApproval, .. }, Some(w)) => {
                approvals.insert(w);
            }
            (
                EventKind::WorkerHoldLifted { reason: HoldReason::AwaitingApproval }
                | EventKind::BindingLost { .. }
                | EventKind::WorkerAttached { .. },
                Some(w),
            ) => {
                approvals.remove(&w);
            }
            (EventKind::DeadManFired { action, workers, .. }, _) => {
                for w in workers {
                    if let Some(why) = waiting.get(w) {
                        broken.push(format!("dead-man fired while {w} {why} (event #{})", e.cursor));
                    }
                    if approvals.contains(w) {
                        broken.push(format!("dead-man fired while {w} awaits an approval (event #{})", e.cursor));
                    }
                }
                if let Some(before) = last.insert(e.run, e.at)
                    && e.at.ms_since(before) < after_ms
                {
                    let gap = e.at.ms_since(before) / 1_000;
                    broken.push(format!("dead-man fired twice in one window ({gap} s apart, event #{})", e.cursor));
                }
                if *action == DeadManAction::RecoveryRequested {
                    *asked.entry(e.run).or_default() += 1;
                }
            }
            (EventKind::ExecutionScheduled { wake, .. }, _) if wake.contains(WakeReason::DeadMan) => {
                let left = asked.entry(e.run).or_default();
                if *left == 0 {
                    broken.push(format!("a dead-man recovery nobody asked for (event #{})", e.cursor));
                } else {
                    *left -= 1;
                }
            }
            _ => {}
        }
    }
    broken
}

#[cfg(test)]
mod tests {
    use super::*;
    use engine::deadman::DeadManCondition;
    use engine::event::Event;
    use engine::ids::Cursor;
    use engine::model::AttemptReason;
    use engine::wake::WakeSet;

    fn event(cursor: u64, at_min: u64, worker: u64, kind: EventKind) -> Event {
        let at = Timestamp(at_min * 60_000);
        Event { cursor: Cursor(cursor), at, run: RunId(1), worker: Some(WorkerId(worker)), attempt: None, kind }
    }

    fn fired(cursor: u64, at_min: u64, action: DeadManAction) -> Event {
        let kind = EventKind::DeadManFired {
            condition: DeadManCondition::ConversationsLost,
            action,
            quiet_ms: 45 * 60_000,
            workers: vec![WorkerId(1), WorkerId(2)],
            conversations: vec![],
        };
        event(cursor, at_min, 1, kind)
    }

    fn recovery(cursor: u64, at_min: u64) -> Event {
        let kind = EventKind::ExecutionScheduled {
            reason: AttemptReason::Recovery,
            wake: WakeSet::of(WakeReason::DeadMan),
            sequence: 2,
        };
        event(cursor, at_min, 1, kind)
    }

    fn check(events: &[Event]) -> Vec<String> {
        let log = Log { events, auto: true, start: Timestamp(0), end: Timestamp(600 * 60_000) };
        dead_man_honoured(log, 45 * 60_000)
    }

    #[test]
    fn a_firing_with_one_recovery_per_window_passes() {
        let events =
            [fired(1, 45, DeadManAction::RecoveryRequested), recovery(2, 45), fired(3, 90, DeadManAction::Notified)];
        assert_eq!(check(&events), Vec::<String>::new());
    }

    #[test]
    fn a_firing_while_a_lane_waits_for_a_human_or_an_approval_breaks() {
        let human = event(1, 10, 2, EventKind::WorkerAwaitingHuman { reason: "which?".into() });
        let broken = check(&[human, fired(2, 60, DeadManAction::Notified)]);
        assert_eq!(broken, vec!["dead-man fired while wrk-2 waits for a human (event #2)"]);
        let held =
            event(1, 10, 2, EventKind::WorkerHeld { reason: HoldReason::AwaitingApproval, until: None, detail: None });
        let broken = check(&[held, fired(2, 60, DeadManAction::Notified)]);
        assert_eq!(broken, vec!["dead-man fired while wrk-2 awaits an approval (event #2)"]);
    }

    #[test]
    fn two_firings_in_one_window_or_two_recoveries_break() {
        let broken = check(&[fired(1, 45, DeadManAction::Notified), fired(2, 60, DeadManAction::Notified)]);
        assert_eq!(broken, vec!["dead-man fired twice in one window (900 s apart, event #2)"]);
        let broken = check(&[fired(1, 45, DeadManAction::RecoveryRequested), recovery(2, 45), recovery(3, 46)]);
        assert_eq!(broken, vec!["a dead-man recovery nobody asked for (event #3)"]);
    }
}
