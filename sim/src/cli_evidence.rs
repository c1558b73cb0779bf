//! What the CLI executor's checks read besides the CLIs' records ([`Sources`]: the durable
//! log, the recovered engine, the daemon's restarts, the accounts' limits, the
//! operator's approval answers) and the windows they allow for races (a stop younger
//! than [`NOTICE_MS`], a report lost to a daemon restart within [`LOST_REPORT_MS`], ...).
//! Shared by `cli_oracle.rs` and `cli_approval_oracle.rs`.

use crate::cli_session::{ApprovalCall, Limit};
use engine::Engine;
use engine::event::Event;
use engine::ids::AttemptId;
use engine::time::Timestamp;

/// How old a stop must be before typing into its session is the executor's or the
/// engine's fault rather than a command already on its way (a cancel takes milliseconds).
pub const NOTICE_MS: u64 = 30_000;
/// How long after a report the daemon may have restarted and lost it.
pub const LOST_REPORT_MS: u64 = 90_000;
/// How late the engine may apply a limit a session reported (republished in a `hello`).
pub const LIMIT_SLACK_MS: u64 = 5 * 60_000;
/// How long a foreign turn may go without the worker's pause.
pub const FOREIGN_PATIENCE_MS: u64 = 10 * 60_000;

/// How long after a CLI worker ended its session may still be bound (the close's round
/// trip, a last turn running to its end).
pub const CLOSE_PATIENCE_MS: u64 = 60_000;

/// What the checks read besides the records.
pub struct Sources<'a> {
    /// The durable events, by cursor.
    pub events: &'a [Event],
    /// The recovered engine (attempts, workers' kinds).
    pub engine: &'a Engine,
    /// The epoch of the run: events' times minus this are simulated ms.
    pub start: Timestamp,
    /// When the daemon (re)started, simulated ms.
    pub daemon_starts: &'a [u64],
    /// Every limit an account reached (scenario and seeded).
    pub limits: Vec<Limit>,
    /// When the run settled (every agent finished, no fault pending), simulated ms;
    /// `None` when it ran to its horizon instead.
    pub settled_ms: Option<u64>,
    /// The operator's `approval_answer` calls and the engine's verdicts.
    pub approval_calls: &'a [ApprovalCall],
}

/// The attempt a nonce (`conversation.send:exe-12`) delivers.
pub(crate) fn attempt_of(key: &str) -> Option<AttemptId> {
    key.rsplit("exe-").next().and_then(|n| n.parse().ok()).map(AttemptId)
}

/// Simulated ms of an event.
pub(crate) fn ms(src: &Sources<'_>, e: &Event) -> u64 {
    e.at.ms_since(src.start)
}

/// Whether the daemon restarted in `[from, to]` (simulated ms).
pub(crate) fn daemon_restarted(src: &Sources<'_>, from: u64, to: u64) -> bool {
    src.daemon_starts.iter().skip(1).any(|s| (from..=to).contains(s))
}
