//! The crash matrix's notification cells (issue 31): each crashes the daemon where it
//! means to (a notice durable, not yet posted; posted, not yet acknowledged) and the run
//! still keeps every notification obligation (`sim/src/notify_oracle.rs`).

use sim::faults::Boundary;
use sim::matrix::{cells, run_cell};

#[test]
fn the_notification_cells_reach_their_crash_and_pass() {
    let notify = [Boundary::NotifyCreated, Boundary::NotifySentBeforeAck];
    let chosen: Vec<_> = cells().into_iter().filter(|c| notify.contains(&c.crash.boundary)).collect();
    assert_eq!(chosen.len(), 6);
    for cell in chosen {
        let result = run_cell(cell);
        assert!(result.crashed, "{:?} never reached its boundary", cell.crash);
        assert!(result.outcome.violations.is_empty(), "{:?}: {:?}", cell.crash, result.outcome.violations);
        assert!(result.outcome.notices > 0, "{:?}: no notification was created", cell.crash);
    }
}
