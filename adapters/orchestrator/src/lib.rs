//! The orchestrator daemon as a library: the binary (`main.rs`) only parses flags. Where
//! the daemon keeps its files and how it is reached (data directory, MCP token, public URL,
//! `/health`'s answer) is the `address` crate.
//!
//! # Layout
//! - `engine_thread.rs`: [`EngineThread`] runs the runtime shell on the fjall store on a
//!   dedicated OS thread (current-thread tokio runtime + `LocalSet`, since the shell
//!   future is `!Send`); everything else talks to it through the cloneable, `Send`
//!   [`runtime::Handle`]. [`NoExecutors`] is the sink of `mcp-stdio` (no executors there).
//! - `serve.rs`: `orchestrator serve`: MCP over streamable HTTP at `/mcp` (axum + rmcp)
//!   and the executor bridge at `/executor` ([`serve::serve_with_executors`], the
//!   `bridge` crate's `BridgeSink` as the engine's sink), graceful shutdown on
//!   SIGINT/SIGTERM; `orchestrator mcp-stdio`.
//! - `edge.rs`: the accept loop and every connection's limits, for all routes: the
//!   connection caps (total and per remote IP, 503 past them), hyper's header read
//!   timeout, the idle timeout on the socket ([`edge::EdgeIo`], paused while a request is
//!   answered), [`edge::read_body`] (framing errors are 4xx), summaries of refusals.
//! - `logs.rs`: the subscriber with bounded lines (every field cut at 1 KiB, every line
//!   at 4 KiB, marked), for rmcp's and every dependency's lines too.
//! - `guard.rs`: the HTTP guard in front of `/mcp`: Host and Origin validation
//!   (DNS-rebinding protection), the bearer token (constant-time compare), the body cap.
//! - `health.rs`: `GET /health`, what `orchestrator doctor` asks a running daemon
//!   (version, executor protocol, connected executors, refused hellos); operator only.
//! - `doctor.rs`: `orchestrator doctor`, the installation checked in order, each failing
//!   check with what to do.
//! - `oauth/`: the OAuth 2.1 authorization server beside `/mcp`, on only with
//!   `--public-url` (metadata, registration, authorize with the operator's approval on
//!   the loopback admin API, tokens stored hashed in `DIR/oauth-grants.json`).
//! - `client.rs`: [`client::McpClient`], a small MCP-over-HTTP client (JSON-RPC, session
//!   header, SSE or JSON answers) used by `orchestrator status`, the tests and the benchmark.
//! - `status.rs`: `orchestrator status`, a read-only report for a person at a terminal.
//! - `start.rs`: `orchestrator start`, a run whose `/root` is a Codex CLI or Claude Code
//!   worker in a directory, created and started through the MCP tools.
//! - `control.rs`: `orchestrator worker pause|resume|continue|stop|answer`, one worker's
//!   controls from a terminal, each one MCP tool call.
//!
//! Architecture Invariant: the daemon performs engine mutations only through the
//! runtime shell; a reply reaches a caller only after the store acknowledged the batch.

pub mod client;
pub mod control;
pub mod doctor;
mod engine_thread;
pub mod health;
pub mod logs;
pub mod serve;
pub mod start;
pub mod status;

pub use engine_thread::{ChannelExecutors, EngineThread, NoExecutors};
