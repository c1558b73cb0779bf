//! The CLI executor's cap on turns at once, checked from its own session records: the
//! daemon never had more of its turns running there than the executor's `--turns-max`
//! (its `hello`'s `concurrencyMax`), daemon restarts included.

use crate::cli_session::CliDisk;
use crate::knobs::Knobs;

/// The executor never ran more of the daemon's turns at once than its `--turns-max`
/// (its `hello`'s `concurrencyMax`): the daemon holds a turn beyond it. Turns nobody here
/// started (foreign turns) are not the daemon's and are not counted. Checked on every run,
/// daemon restarts included: a recovered daemon learns from the executor's `hello` which
/// turns still run there (the journal, and each session's last state under the sequence
/// it was shown with).
pub fn turns_within_cap(knobs: &Knobs, disk: &CliDisk) -> Vec<String> {
    let max = i64::from(knobs.cli.turns_max.unwrap_or(crate::cli_session::TURNS_MAX_DEFAULT));
    // A turn runs from its start to its end; at the same ms an end comes before a start.
    let mut edges: Vec<(u64, i64)> = Vec::new();
    for turn in disk.sessions.values().flat_map(|r| &r.turns).filter(|t| t.starter.is_some()) {
        edges.push((turn.started_ms, 1));
        edges.push((turn.ended_ms.unwrap_or(u64::MAX), -1));
    }
    edges.sort_unstable();
    let mut running = 0;
    for (at_ms, step) in edges {
        running += step;
        if running > max {
            let broken = format!(
                "{running} of the daemon's turns ran at once on the CLI executor at t={at_ms}, whose --turns-max is {max}"
            );
            return vec![broken];
        }
    }
    Vec::new()
}
