//! The liveness oracle: no worker is reported working while no executor carries it.
//!
//! The daemon host keeps [`Links`](crate::ledger::Links) in the ledger, the ground truth of its executor
//! connections (which executor's connection is open, and when each one's last connection
//! closed, as the daemon's socket saw it; a daemon start closes them all). After every
//! commit, and at every operator sweep (every ten simulated minutes, through
//! `worker_list` as a surface reads it, so quiet stretches without commits are looked at
//! too), [`check`] reads each unfinished worker's view (disposition and liveness) and
//! reports a worker shown `running` while its carrying executor's connection has been
//! closed for longer than [`DISCONNECT_NOTICED_MS_MAX`], or shown `running` without being
//! carried by a connected executor at all. Executor loss comes from the simulator's
//! crashes of the browser and CLI hosts and its bridge partitions, at every boundary of
//! the matrix.

use crate::ledger::Links;
use engine::Engine;
use engine::ids::ExecutorId;
use engine::model::Disposition;
use engine::op::WorkerView;
use engine::view::Carrier;

/// How long after a connection closed the engine may still show its workers running: the
/// `Disconnected` input is queued behind inputs the shell took first, and a commit of
/// those may be observed after the socket closed (the simulated network takes
/// milliseconds; this bound is generous, not a wait).
pub const DISCONNECT_NOTICED_MS_MAX: u64 = 2_000;

/// After a commit: every worker shown running while nothing carries it is a violation.
pub(crate) fn observe(ledger: &crate::ledger::SharedLedger, engine: &Engine) {
    let views: Vec<WorkerView> = engine
        .workers()
        .filter(|w| !w.lifecycle.is_terminal())
        .map(|w| w.id)
        .collect::<Vec<_>>()
        .into_iter()
        .filter_map(|id| engine.worker_view(id))
        .collect();
    record(ledger, &views);
}

/// Records a violation for every worker of `views` shown running while nothing carries it.
pub(crate) fn record(ledger: &crate::ledger::SharedLedger, views: &[WorkerView]) {
    let now_ms = turmoil::sim_elapsed().map_or(0, |d| d.as_millis() as u64);
    let links = ledger.borrow().links.clone();
    for broken in check(views, &links, now_ms) {
        ledger.borrow_mut().violation(format!("liveness: {broken}"));
    }
}

/// The workers of `views` shown `running` at `now_ms` (simulated) while nothing carries
/// them, and those shown carried by an executor whose connection is gone.
pub fn check(views: &[WorkerView], links: &Links, now_ms: u64) -> Vec<String> {
    let mut broken = Vec::new();
    for view in views {
        let id = view.worker.id;
        let gone = |executor: &ExecutorId| {
            links
                .closed_since(executor)
                .map(|closed| now_ms.saturating_sub(closed))
                .filter(|ago| *ago > DISCONNECT_NOTICED_MS_MAX)
        };
        if let Some(live) = &view.liveness
            && live.carrier == Carrier::Connected
            && let Some(ago) = live.executor.as_ref().and_then(gone)
        {
            let executor = live.executor.as_ref().map(ToString::to_string).unwrap_or_default();
            broken.push(format!("{id} is shown carried by {executor}, whose connection closed {ago} ms ago"));
        }
        if view.disposition != Disposition::Running {
            continue;
        }
        let Some(live) = &view.liveness else {
            broken.push(format!("{id} is shown running without liveness"));
            continue;
        };
        if live.carrier != Carrier::Connected || live.executor.is_none() {
            broken.push(format!("{id} is shown running while its executor is {}", live.carrier.as_str()));
        } else if let Some(ago) = live.executor.as_ref().and_then(gone) {
            let executor = live.executor.as_ref().map(ToString::to_string).unwrap_or_default();
            broken.push(format!(
                "{id} is shown running while the connection of its executor {executor} closed {ago} ms ago"
            ));
        }
    }
    broken
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_daemon_start_closes_what_was_open_and_keeps_older_closings() {
        let links = Links::default();
        let (a, b) = (ExecutorId::new("a"), ExecutorId::new("b"));
        links.opened(&a);
        links.closed(&b, 10);
        links.daemon_started(50);
        assert_eq!((links.closed_since(&a), links.closed_since(&b)), (Some(50), Some(10)));
    }

    #[test]
    fn a_connection_is_open_until_it_closes_and_closed_until_it_opens_again() {
        let links = Links::default();
        let e = ExecutorId::new("browser-1");
        assert_eq!(links.closed_since(&e), None);
        links.opened(&e);
        assert_eq!(links.closed_since(&e), None);
        links.closed(&e, 40);
        assert_eq!(links.closed_since(&e), Some(40));
        links.opened(&e);
        assert_eq!(links.closed_since(&e), None);
    }
}
