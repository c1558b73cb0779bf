//! The caller protocol: the JSON shapes of the orchestrator's caller surface (tool
//! arguments, replies and errors), shared by the MCP server and the executor protocol's
//! operator channel.
//!
//! Named `caller-protocol` (it was `wire`) for what it describes, the caller's side of the
//! daemon, beside `executor-protocol`; `wire` also named the simulator's own frames
//! (`sim/src/wire.rs`). It depends on the engine and serde only (no runtime, no IO), which
//! `tidy` checks (`xtask/src/tidy_protocol.rs`).
//!
//! # Layout
//! - `args.rs`: one argument struct per tool (camelCase, unknown fields refused), each
//!   converting into an [`engine::Operation`] through [`ToOperation`]; ids are parsed
//!   with the engine's `FromStr` and a bad one is reported under its field name; the
//!   worker tools' arguments are in `worker_args.rs`.
//! - `out.rs`: [`FromReply`], which turns an engine [`engine::Reply`] into the shape a tool
//!   promises, and the reply shapes of runs, messages, policies and events;
//!   `worker_out.rs` a worker's (and `worker_progress`'s, `worker_continue_now`'s,
//!   `worker_steer`'s), `attempt_out.rs` an execution attempt's, `liveness_out.rs` who
//!   carries a worker (its executor, connected or not, since when, a CLI retrying).
//! - `kind.rs`: executor kinds (`chatgpt`, `codex`, `claude`) and a CLI worker's
//!   workspace, as `worker_spawn` takes them and worker views show them.
//! - `policy.rs`: continuation policy in (a partial patch) and out (the full policy).
//! - `deadman.rs`: a run's dead-man policy and its "stopped moving" alert.
//! - `event.rs`: events as `{cursor, name, ..., data}` with the name from `EventKind::name()`.
//! - `error.rs`: [`ErrorOut`], `{code, message}` with the engine's stable codes plus the
//!   adapter's own (`INVALID_ARGUMENT` for JSON that does not fit, `ENGINE_UNAVAILABLE`,
//!   `INTERNAL`).
//! - `refusal.rs`: a refusal as a person reads it ([`refusal::for_person`]): the same code,
//!   in words naming the command line's command and the dashboard's control instead of an
//!   MCP tool (for the command line and the operator channel).
//!
//! Architecture Invariant: nothing reaches the engine half-validated. Arguments are
//! decoded whole ([`decode`]) and converted whole before the operation is sent; text
//! sizes are the engine's to check (it names the field), the HTTP layer caps the body.

mod args;
mod attempt_out;
mod deadman;
mod error;
mod event;
mod kind;
mod liveness_out;
mod out;
mod policy;
pub mod refusal;
mod worker_args;
mod worker_out;

pub use args::*;
pub use attempt_out::{AttemptOut, AttemptsOut};
pub use deadman::{DeadManOut, StoppedMovingOut, why as dead_man_why};
pub use error::{ErrorOut, codes, decode};
pub use event::EventOut;
pub use kind::{ExecutorKindArg, WorkspaceArgs, WorkspaceOut};
pub use liveness_out::{LivenessOut, RetryOut, executor_kind_name};
pub use out::*;
pub use policy::{DeadManModeArg, ModeArg, PolicyOut, PolicyPatchArgs};
pub use worker_args::*;
pub use worker_out::*;
