//! Drivers: the crash matrix (every boundary × occurrence, a daemon or executor crash,
//! the loss of the executor that carries a lane and its return, or the death of the
//! leading daemon and a standby's takeover), swarm seeds, and the report written when a
//! run breaks an invariant.

use crate::chat::Death;
use crate::faults::{Boundary, CrashAt, Reaction, Trigger};
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

/// How long the matrix's executor losses last: under the engine's absence limit
/// (`EXECUTOR_ABSENT_MS_MAX`, 5 min: no `executor.absent` event) and past it (one event
/// for the episode).
pub const LOSS_LENGTHS_MS: [u64; 2] = [2 * MINUTE_MS, 8 * MINUTE_MS];

/// One executor-loss cell: when `lane` passes `at.boundary` for the `at.occurrence`-th
/// time, the executor that carries it (the browser for a ChatGPT lane or `/root`, the CLI
/// executor for a Codex or Claude lane) goes down, and comes back `length_ms` later. No
/// crash: the liveness oracle (no worker shown working while nothing carries it) and
/// every other oracle check the run, which must complete.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Loss {
    /// Where in the lane's pipeline.
    pub at: CrashAt,
    /// Whose pipeline: a lane (spawn order), `usize::MAX` for `/root`.
    pub lane: usize,
    /// How long the executor stays down.
    pub length_ms: u64,
    /// The seed of the run.
    pub seed: u64,
}

impl Loss {
    /// `BOUNDARY:K:laneN:LENGTH` (`root` for `/root`, the length in whole minutes:
    /// `8m`), as `replay --loss` reads it.
    pub fn spec(&self) -> String {
        let lane = if self.lane == usize::MAX { "root".to_string() } else { format!("lane{}", self.lane) };
        format!("{}:{}:{lane}:{}m", self.at.boundary, self.at.occurrence, self.length_ms / MINUTE_MS)
    }

    /// Reads [`Loss::spec`]'s form back, for a run of `seed`.
    pub fn parse(spec: &str, seed: u64) -> Option<Loss> {
        let mut parts = spec.split(':');
        let boundary = Boundary::parse(parts.next()?)?;
        let occurrence = parts.next()?.parse().ok()?;
        let lane = match parts.next()? {
            "root" => usize::MAX,
            lane => lane.strip_prefix("lane")?.parse().ok()?,
        };
        let length_ms = parts.next()?.strip_suffix('m')?.parse::<u64>().ok()? * MINUTE_MS;
        parts.next().is_none().then_some(Loss { at: CrashAt { boundary, occurrence }, lane, length_ms, seed })
    }

    /// The command that replays this cell.
    pub fn replay(&self) -> String {
        format!("cargo run --release -p sim -- replay --seed {} --loss {}", self.seed, self.spec())
    }
}

/// The lanes whose executor the matrix loses at `boundary`: a ChatGPT lane and both CLI
/// lanes (Codex, Claude Code) of a cell's calm run; the stall cell's only lane; `/root`
/// at the dead-man's firing (the worker whose pipeline passes it).
fn loss_lanes(boundary: Boundary) -> &'static [usize] {
    match boundary {
        Boundary::StallMutation => &[0],
        Boundary::DeadmanFired => &[usize::MAX],
        _ => &[0, 2, 3],
    }
}

/// Every executor-loss cell: each boundary at occurrences 1..=3, for each lane of
/// `loss_lanes` and each length of `LOSS_LENGTHS_MS`.
pub fn losses() -> Vec<Loss> {
    let mut losses = Vec::new();
    for (i, boundary) in Boundary::ALL.into_iter().enumerate() {
        for (j, &lane) in loss_lanes(boundary).iter().enumerate() {
            for (k, &length_ms) in LOSS_LENGTHS_MS.iter().enumerate() {
                for occurrence in 1..=MATRIX_OCCURRENCES_MAX {
                    let seed = 3_000 + (i as u64) * 100 + (j as u64) * 20 + (k as u64) * 10 + u64::from(occurrence);
                    losses.push(Loss { at: CrashAt { boundary, occurrence }, lane, length_ms, seed });
                }
            }
        }
    }
    losses
}

/// The knobs of a loss cell: those of the crash cell at its boundary, with the trigger
/// that takes the lane's executor down.
pub fn knobs_for_loss(loss: Loss) -> Knobs {
    let mut knobs = knobs_for(Cell { crash: loss.at, seed: loss.seed });
    knobs.triggers.push(Trigger { at: loss.at, lane: loss.lane, reaction: Reaction::ExecutorDown(loss.length_ms) });
    knobs
}

/// How long the failover cells' dead leader stays down: well past the lease's lapse
/// (`LEASE_TTL_MS`), so the standby takes over; it comes back as a standby.
pub const TAKEOVER_DOWN_MS: u64 = MINUTE_MS;

/// One failover cell: the calm run of the crash cell at its boundary, with a standby
/// daemon on its store; when `lane` passes `at.boundary` for the `at.occurrence`-th time
/// the daemon that leads dies (mid-submission at the executor's boundaries: between
/// dispatching a command and recording its acknowledgement), the standby takes over once
/// the lease lapses, and every check must hold across the takeover.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Takeover {
    /// Where in the lane's pipeline.
    pub at: CrashAt,
    /// Whose pipeline: a lane (spawn order), `usize::MAX` for `/root`.
    pub lane: usize,
    /// The seed of the run.
    pub seed: u64,
}

impl Takeover {
    /// `BOUNDARY:K:laneN` (`root` for `/root`), as `replay --takeover` reads it.
    pub fn spec(&self) -> String {
        let lane = if self.lane == usize::MAX { "root".to_string() } else { format!("lane{}", self.lane) };
        format!("{}:{}:{lane}", self.at.boundary, self.at.occurrence)
    }

    /// Reads [`Takeover::spec`]'s form back, for a run of `seed`.
    pub fn parse(spec: &str, seed: u64) -> Option<Takeover> {
        let loss = Loss::parse(&format!("{spec}:0m"), seed)?;
        Some(Takeover { at: loss.at, lane: loss.lane, seed })
    }

    /// The command that replays this cell.
    pub fn replay(&self) -> String {
        format!("cargo run --release -p sim -- replay --seed {} --takeover {}", self.seed, self.spec())
    }
}

/// Every failover cell: each boundary's first occurrence, for each lane of `loss_lanes`
/// (a ChatGPT lane, the Codex and the Claude Code lane; the stall cell's lane; `/root`).
pub fn takeovers() -> Vec<Takeover> {
    let mut takeovers = Vec::new();
    for (i, boundary) in Boundary::ALL.into_iter().enumerate() {
        for (j, &lane) in loss_lanes(boundary).iter().enumerate() {
            let seed = 5_000 + (i as u64) * 10 + j as u64;
            takeovers.push(Takeover { at: CrashAt { boundary, occurrence: 1 }, lane, seed });
        }
    }
    takeovers
}

/// The knobs of a failover cell: those of the crash cell at its boundary, with a standby
/// and the trigger that kills the leader.
pub fn knobs_for_takeover(takeover: Takeover) -> Knobs {
    let mut knobs = knobs_for(Cell { crash: takeover.at, seed: takeover.seed });
    knobs.standby = true;
    let reaction = Reaction::LeaderDown(TAKEOVER_DOWN_MS);
    knobs.triggers.push(Trigger { at: takeover.at, lane: takeover.lane, reaction });
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

/// The command that replays a run of `knobs.seed` with `plan`: a crash-matrix cell's,
/// or a swarm seed's.
pub fn replay(knobs: &Knobs, plan: &[CrashAt]) -> String {
    match plan.first() {
        Some(c) => format!(
            "cargo run --release -p sim -- replay --seed {} --crash {}:{}",
            knobs.seed, c.boundary, c.occurrence
        ),
        None => format!("cargo run --release -p sim -- replay --seed {}", knobs.seed),
    }
}

/// A failure report: seed, commit, knobs, broken invariants, the last trace lines and
/// `replay`, the one command that replays the run.
pub fn report(knobs: &Knobs, plan: &[CrashAt], outcome: &Outcome, replay: &str) -> String {
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
