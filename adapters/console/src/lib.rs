//! The console: the operator's commands that talk to a running daemon from a terminal
//! (`orchestrator status`, `start`, `worker …`, `doctor`, and `oauth …`'s admin calls),
//! over a small MCP-over-HTTP client that the tests and the benchmark use too. Named
//! `console` rather than `cli`, which `cli-executor` (the command-line *agent* executor)
//! would make ambiguous. An HTTP/1 client only: no axum, no rmcp, no server; the daemon's
//! files and addresses come from the `address` crate, and the flags from the binary.
//!
//! # Layout
//! - `client.rs`: [`client::McpClient`]: JSON-RPC on one keep-alive HTTP/1.1 connection,
//!   the session header, answers as JSON or an SSE stream.
//! - `status.rs`: `orchestrator status`, a read-only report for a person at a terminal.
//! - `start.rs`: `orchestrator start`, a run whose `/root` is a Codex CLI or Claude Code
//!   worker in a directory, created and started through the MCP tools.
//! - `control.rs`: `orchestrator worker pause|resume|continue|stop|answer`, each one MCP
//!   tool call.
//! - `doctor.rs`: `orchestrator doctor`, the installation checked in order (daemon, data
//!   directory, store lock, tokens, a connected browser, the public address's OAuth
//!   metadata), each failing check with what to do.
//! - `oauth_admin.rs`: the client of the daemon's loopback OAuth admin API.

pub mod client;
pub mod control;
pub mod doctor;
pub mod oauth_admin;
pub mod start;
pub mod status;
