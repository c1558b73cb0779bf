//! The executor bridge: the daemon's end of the executor protocol over axum and tokio
//! (spec 000 §12, §18, §19, §22; `docs/protocol/executor.md`). The protocol itself (its
//! messages, codec, connection rules and continuity sentences) is the `executor-protocol`
//! crate, which the simulator and the CLI executor use without this one.
//!
//! # Layout
//! - `server/` (axum, tokio): the `/executor` endpoint ([`server::Bridge`]), the
//!   [`server::Registry`] of live connections, [`server::BridgeSink`] (the engine's
//!   executor sink in the daemon), the operator channel (`operator.action` performed as
//!   the MCP tools' engine operations, `operator.query` answered through their reads,
//!   `operator.summary` pushed on durable changes) and the executor token
//!   (`DIR/executor-token`).
//!
//! The scriptable test executor that drives it in tests and benchmarks is the
//! `test-executor` crate (`adapters/bridge/test-executor/`, a dev-dependency only).

pub mod server;
