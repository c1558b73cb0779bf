//! Drivers: the crash matrix (every boundary × occurrence), swarm seeds, and the
//! report written when a run breaks an invariant.

use crate::chat::Death;
use crate::faults::{Boundary, CrashAt};
use crate::knobs::{self, Knobs};
use crate::outcome::Outcome;
use crate::world;
use engine::deadman::DeadManMode;
use engine::model::ConversationState;
use engine::time::{HOUR_MS, MINUTE_MS};
use std::fmt::Write as _;

/// Occurrences of each boundary the matrix crashes at.
pub const MATRIX_OCCURRENCES_MAX: u32 = 3;

/// One cell of the crash matrix.
#[derive(Clone, Copy, Debug)]
pub struct Cell {
    /// Where to crash.
    pub crash: CrashAt,
    /// The seed of the run.
    pub seed: u64,
}

/// Every cell: each boundary at occurrences 1..=3, on a calm two-worker run.
pub fn cells() -> Vec<Cell> {
    let mut cells = Vec::new();
    for (i, boundary) in Boundary::ALL.into_iter().enumerate() {
        for occurrence in 1..=MATRIX_OCCURRENCES_MAX {
            let seed = 1_000 + (i as u64) * 10 + u64::from(occurrence);
            cells.push(Cell { crash: CrashAt { boundary, occurrence }, seed });
        }
    }
    cells
}

/// The knobs of a cell: calm, with a Codex and a Claude Code lane on a CLI executor
/// beside the two ChatGPT lanes (so its boundaries crash it too), except that the stall
/// boundary needs one agent that makes no progress for long enough to cross the warning
/// threshold, and the dead-man boundary a run whose every conversation closes while its
/// person is away (as `scenarios/deadman-recover.scn`), and the notification boundaries
/// notifications on, with lanes that ask questions.
pub fn knobs_for(cell: Cell) -> Knobs {
    let mut knobs = Knobs::calm(cell.seed);
    if !matches!(cell.crash.boundary, Boundary::StallMutation | Boundary::DeadmanFired) {
        knobs.cli_workers = 1;
        knobs.cli.claude_workers = 1;
        knobs.cli.executor = true;
    }
    if cell.crash.boundary == Boundary::StallMutation {
        knobs.workers = 1;
        knobs.agents.progress_pct = 0;
        knobs.agents.turns_min = 14;
        knobs.agents.turns_max = 14;
    }
    if matches!(cell.crash.boundary, Boundary::NotifyCreated | Boundary::NotifySentBeforeAck) {
        // Notifications to two targets, and lanes that ask their person questions.
        knobs.notify_targets = 2;
        knobs.agents.human_pct = 40;
    }
    if cell.crash.boundary == Boundary::DeadmanFired {
        knobs.root = true;
        knobs.agents.turns_min = 4;
        knobs.agents.turns_max = 6;
        knobs.away = Some((2 * MINUTE_MS, 4 * HOUR_MS));
        knobs.dead_man = Some((DeadManMode::Recover, 45 * MINUTE_MS));
        knobs.agents.recover_lanes = true;
        knobs.agents.deaths.push(Death { at_ms: 4 * MINUTE_MS, worker: None, state: ConversationState::Closed });
    }
    knobs
}

/// The result of one matrix cell.
#[derive(Debug)]
pub struct CellResult {
    /// The cell.
    pub cell: Cell,
    /// The run.
    pub outcome: Outcome,
    /// Whether the planned crash happened (the boundary was reached that often).
    pub crashed: bool,
}

/// Runs one cell.
pub fn run_cell(cell: Cell) -> CellResult {
    let knobs = knobs_for(cell);
    let outcome = world::run(&knobs, &[cell.crash]);
    let crashed = outcome.crashes.iter().any(|c| c.contains(cell.crash.boundary.name()));
    CellResult { cell, outcome, crashed }
}

/// A failure report: seed, commit, knobs, broken invariants, the last trace lines and
/// one command that replays the run.
pub fn report(knobs: &Knobs, plan: &[CrashAt], outcome: &Outcome) -> String {
    let mut r = String::new();
    let _ = writeln!(r, "# simulator failure report");
    let _ = writeln!(r, "seed: {}", knobs.seed);
    let _ = writeln!(r, "commit: {}", commit());
    let _ = writeln!(r, "knobs: {}", knobs::describe(knobs));
    for c in plan {
        let _ = writeln!(r, "crash plan: {} #{}", c.boundary, c.occurrence);
    }
    for t in &knobs.triggers {
        let _ = writeln!(r, "trigger: {} #{} of {}: {:?}", t.at.boundary, t.at.occurrence, t.worker(), t.reaction);
    }
    for (at, length) in &knobs.outages {
        let _ = writeln!(r, "executor outage: at {at} ms for {length} ms");
    }
    for (at, length) in &knobs.partitions {
        let _ = writeln!(r, "bridge partition: at {at} ms for {length} ms");
    }
    let _ = writeln!(r, "crashes: {}", outcome.crashes.join("; "));
    let _ = writeln!(r, "\n## broken invariants");
    for v in &outcome.violations {
        let _ = writeln!(r, "- {v}");
    }
    let _ = writeln!(r, "\n## last events (time host what)");
    for line in &outcome.trace_tail {
        let _ = writeln!(r, "{line}");
    }
    let replay = match plan.first() {
        Some(c) => format!(
            "cargo run --release -p sim -- replay --seed {} --crash {}:{}",
            knobs.seed, c.boundary, c.occurrence
        ),
        None => format!("cargo run --release -p sim -- replay --seed {}", knobs.seed),
    };
    let _ = writeln!(r, "\nreplay: {replay}");
    r
}

/// The commit being tested, read from `.git` (best effort).
fn commit() -> String {
    let head = std::fs::read_to_string(".git/HEAD").unwrap_or_default();
    let head = head.trim();
    match head.strip_prefix("ref: ") {
        Some(reference) => {
            std::fs::read_to_string(format!(".git/{reference}")).map(|s| s.trim().to_string()).unwrap_or_default()
        }
        None => head.to_string(),
    }
}
