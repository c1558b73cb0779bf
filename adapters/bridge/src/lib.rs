//! The executor bridge: the daemon tells executors what to submit, executors tell the
//! daemon what they observe (spec 000 §12, §18, §19, §22; `docs/protocol/executor.md`).
//!
//! # Layout
//! - `protocol/`: the versioned JSON messages ([`ExecutorMessage`] from executors,
//!   [`DaemonMessage`] to them) and their exact conversions to and from the engine's
//!   executor types ([`engine::ExecutorInput`], [`engine::ExecutorCommand`]);
//!   `protocol/operator.rs` holds the operator channel's messages (actions, queries,
//!   summaries).
//! - `codec.rs`: [`decode_executor`] / [`decode_daemon`] from `&str` with a size cap
//!   into a typed [`Error`], and [`encode`]. `v` is checked before anything else.
//! - `session.rs`: [`Session`], one connection's rules as a state machine without IO or
//!   clocks (time is an argument): `hello` with the right token first, then every
//!   message becomes an [`engine::ExecutorInput`]; a rate cap; `Disconnected` on close.
//! - `continuity.rs`: which events tell a worker's continuity story, a sentence for
//!   each, and bounded buffers of the newest (for `operator.summary` and the
//!   `worker_events` query). No IO.
//! - `server/` (axum, tokio): the `/executor` endpoint ([`server::Bridge`]), the
//!   [`server::Registry`] of live connections, [`server::BridgeSink`] (the engine's
//!   executor sink in the daemon), the operator channel (`operator.action` performed as
//!   the MCP tools' engine operations, `operator.query` answered through their reads,
//!   `operator.summary` pushed on durable changes) and the executor token
//!   (`DIR/executor-token`).
//! - `client.rs` (tokio-tungstenite): [`client::TestExecutor`], a scriptable executor
//!   for integration tests.
//!
//! Architecture Invariant: `protocol`, `codec` and `session` depend on no axum, tokio or socket, so the
//! simulator can run the same codec and session over turmoil's TCP and the engine sees
//! the same inputs in both worlds.

pub mod client;
mod codec;
pub mod continuity;
mod protocol;
pub mod server;
mod session;

pub use codec::{Error, MESSAGE_BYTES_MAX, decode_daemon, decode_executor, encode};
pub use protocol::*;
pub use session::{Session, SessionConfig, Step};
