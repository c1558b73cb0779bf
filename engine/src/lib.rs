//! The pure, deterministic orchestration engine: durable workers, execution attempts and
//! the continuation scheduler, as a sans-IO state machine.
//!
//! # Layout
//! - [`Engine`] (`engine.rs`): the state machine. `handle(now, Input)` queues effects,
//!   `poll_effect()` drains them, `next_deadline()` says when to `Tick` next.
//! - The owners of its state, each with private fields, recording what changes:
//!   `state/` (the durable state, its counters and event log, the `Persist` batch, its
//!   tables of rows that remember their changes, recovery), `index.rs` (lookups and the
//!   timer heap), `connections.rs` (executors and in-flight commands), `approvals.rs`
//!   (CLI approval requests), `liveness/state.rs` (CLI retries, absence episodes),
//!   `holds/state.rs`, `deadman/state.rs` and `notify/state.rs` (the notification outbox).
//! - `model/`, `event.rs`, `record.rs`: the durable domain, its event log and the
//!   records a store persists. `wake.rs`: wake reasons; `policy.rs`: continuation policy.
//! - `ops/`: one file per family of caller operations (runs, workers, waits, control).
//! - `scheduler/`: the ten-step evaluation of spec 000 §10.2 and the anti-spam floor;
//!   timers and keepalive jitter (`timers.rs`); the stall guard (`stall.rs`).
//!   `dispatch.rs`: attempts and executor commands.
//! - `executor.rs`: executor reports (hello, bindings, states); `results.rs`: command
//!   results; `failure.rs`: the one table from a failure code or page error to what the
//!   engine does.
//! - `kind.rs`: executor kinds (`chatgpt`, `codex`, `claude`), a CLI worker's workspace
//!   and each kind's conversation id form.
//! - `holds/`: holds from what pages show (usage and rate limits, account checks, dialogs).
//! - `liveness/`: who carries each worker (its executor connected or not, since when), the
//!   absence of every executor of a worker's kind, and a CLI that keeps retrying.
//! - `deadman/`: the dead-man fallback: a watched run that stopped moving is reported
//!   (`deadman.fired`) and, by its policy, `/root` recovered once.
//! - `notify/`: notifications (issue 31): an episode a person must hear about becomes one
//!   outbox record per `--notify` target in its event's batch, posted by the shell until
//!   acknowledged; `notice.rs`: the notice as data (shared by effects, inputs, records).
//! - `prompt/`: versioned prompts. `block.rs`: the end-of-response block parser.
//! - `invariants.rs`: `Engine::check_invariants`, called after every input in tests.
//!
//! The engine performs no IO, reads no clock, draws no unseeded randomness and iterates
//! no hash map: the same inputs at the same times give the same effects, byte for byte.

mod approvals;
pub mod block;
mod connections;
pub mod deadman;
mod dense;
mod dispatch;
pub mod effect;
mod engine;
pub mod event;
mod executor;
mod failure;
mod holds;
pub mod ids;
mod index;
pub mod input;
mod invariants;
pub mod kind;
mod landing;
pub mod limits;
mod liveness;
pub mod model;
pub mod notice;
pub mod notify;
pub mod op;
mod ops;
pub mod policy;
pub mod prompt;
pub mod record;
pub mod reject;
mod results;
mod scheduler;
mod state;
pub mod time;
mod validate;
pub mod view;
pub mod wake;

pub use effect::{Batch, CommandKind, Effect, ExecutorCommand};
pub use engine::{Engine, EngineConfig};
pub use input::{
    AccountCap, BindingReport, CommandOutcome, ExecErrorCode, ExecutorInput, Input, JournalEntry, JournalPhase,
    Observation, SteerLanding,
};
pub use invariants::InvariantViolation;
pub use kind::{ExecutorKind, Workspace};
pub use op::{Operation, Reply};
pub use record::{Meta, Record, RecordKey, RecoveryError};
pub use reject::{Rejection, RejectionCode};
pub use time::Timestamp;
