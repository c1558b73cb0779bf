//! The console: the operator's commands that talk to a running daemon from a terminal
//! (`orchestrator status`, `start`, `run …`, `worker …`, `doctor`, `service …`, and `oauth …`'s admin calls),
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
//! - `control.rs`: `orchestrator worker pause|resume|continue|stop|answer|release`, each
//!   one MCP tool call.
//! - `run.rs`: `orchestrator run list|show|pause|resume|stop`, the dashboard's run controls.
//! - `reach.rs`: [`reach::Target`], how those commands reach the daemon, and what they say
//!   when nothing answers or the token is refused (a mistyped `--data-dir`).
//! - `refused.rs`: the daemon's refusal of a person's command in a person's words (the
//!   command and the dashboard control, never an MCP tool; `caller_protocol::refusal`).
//! - `words.rs`: the words for what the daemon reports in codes (an attempt's reason and
//!   end, plurals, a question's choices).
//! - `doctor.rs`: `orchestrator doctor`, the installation checked in order (daemon, data
//!   directory, store lock, tokens, the configuration file and its notification URLs,
//!   pairing, a connected browser, the public address's OAuth metadata), each failing check
//!   with what to do.
//! - `executors.rs`: the executors a running daemon has connected now (`executor list`).
//! - `pair.rs`: `orchestrator pair` (a fresh one-time code from the daemon) and the code's
//!   exchange for the executor token behind `executor-cli --pair`.
//! - `notify_test.rs`: `orchestrator notify test`, the daemon's test notification to each
//!   of its targets, and what came of it per target.
//! - `oauth_admin.rs`: the client of the daemon's loopback OAuth admin API.
//! - `service/`: `orchestrator service install|uninstall|status`, the daemon as a systemd
//!   user unit or a launchd agent: the texts and plans as pure functions, the
//!   `systemctl`/`launchctl` calls thin (`service/manage.rs`); `doctor` asks it too.

pub mod client;
pub mod control;
pub mod doctor;
pub mod executors;
pub mod notify_test;
pub mod oauth_admin;
pub mod pair;
pub mod reach;
pub mod refused;
pub mod run;
pub mod service;
pub mod start;
pub mod status;
pub mod words;
