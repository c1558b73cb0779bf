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
    let Some((running, at_ms)) = first_over(disk, |_| true, max) else { return Vec::new() };
    vec![format!(
        "{running} of the daemon's turns ran at once on the CLI executor at t={at_ms}, whose --turns-max is {max}"
    )]
}

/// The executor never ran more of the daemon's turns of a kind at once than the account it
/// named for that kind allows (`--account`, its `hello`'s `accounts`). With one CLI
/// executor in the world, an account's hosts are that one; the engine's tests cover
/// accounts shared by several (`engine/tests/account_slots.rs`).
pub fn accounts_within_cap(knobs: &Knobs, disk: &CliDisk) -> Vec<String> {
    let over = |account: &engine::AccountCap| {
        let max = i64::from(account.turns_max);
        let (running, at_ms) = first_over(disk, |kind| kind == account.kind, max)?;
        Some(format!(
            "{running} of the daemon's {} turns ran at once under the account {} at t={at_ms}, which allows {max}",
            account.kind, account.name
        ))
    };
    knobs.cli.accounts.iter().filter_map(over).collect()
}

/// The first moment more than `max` of the daemon's turns ran at once in the sessions whose
/// kind `counted` keeps: how many, and when. A turn runs from its start to its end; at the
/// same ms an end comes before a start.
fn first_over(disk: &CliDisk, counted: impl Fn(engine::ExecutorKind) -> bool, max: i64) -> Option<(i64, u64)> {
    let mut edges: Vec<(u64, i64)> = Vec::new();
    let records = disk.sessions.values().filter(|r| counted(r.kind));
    for turn in records.flat_map(|r| &r.turns).filter(|t| t.starter.is_some()) {
        edges.push((turn.started_ms, 1));
        edges.push((turn.ended_ms.unwrap_or(u64::MAX), -1));
    }
    edges.sort_unstable();
    let mut running = 0;
    edges.into_iter().find_map(|(at_ms, step)| {
        running += step;
        (running > max).then_some((running, at_ms))
    })
}
