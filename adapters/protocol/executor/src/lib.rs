//! The executor protocol: how the daemon tells executors what to submit and executors
//! tell the daemon what they observe (spec 000 §12, §18, §19, §22;
//! `docs/protocol/executor.md`), as data and rules without IO.
//!
//! Named `executor-protocol` for the peer it speaks with, beside `caller-protocol` (the
//! MCP callers' shapes, which the operator channel reuses); the `bridge` crate is the
//! daemon's axum/tokio endpoint that carries it, the simulator carries it over turmoil's
//! TCP and the CLI executor over its own WebSocket. It depends on the engine, the caller
//! protocol and serde only (no axum, tokio or socket), which `tidy` checks
//! (`xtask/src/tidy_protocol.rs`).
//!
//! # Layout
//! - `message/`: the versioned JSON messages ([`ExecutorMessage`] from executors,
//!   [`DaemonMessage`] to them) and their exact conversions to and from the engine's
//!   executor types ([`engine::ExecutorInput`], [`engine::ExecutorCommand`]); the
//!   operator channel's messages (actions, queries, summaries), its OAuth approval shapes
//!   and [`GrantDesk`], the daemon's authorization server as the operator channel sees it.
//! - `codec.rs`: [`decode_executor`] / [`decode_daemon`] from `&str` with a size cap
//!   into a typed [`Error`], and [`encode`]. `v` is checked before anything else.
//! - `session.rs`: [`Session`], one connection's rules as a state machine without IO or
//!   clocks (time is an argument): `hello` with the right token first, then every
//!   message becomes an [`engine::ExecutorInput`]; a rate cap; `Disconnected` on close.
//! - `continuity.rs`: which events tell a worker's continuity story, a sentence for
//!   each (the one source of these words: `docs/protocol/fixtures/rules/sentences.json`
//!   pins them for the extension's copy), and bounded buffers of the newest (for
//!   `operator.summary` and the `worker_events` query).
//!
//! Architecture Invariant: nothing here does IO or reads a clock, so the daemon and the
//! simulator run the same codec and session and the engine sees the same inputs in both
//! worlds.

mod codec;
pub mod continuity;
mod message;
mod session;

pub use codec::{Error, MESSAGE_BYTES_MAX, decode_daemon, decode_executor, encode};
pub use message::*;
pub use session::{HELLO_MS_MAX, HostBookRef, HostTokens, IDLE_MS_MAX, Session, SessionConfig, Step};
