//! The Codex room: everything the executor knows of the Codex CLI, on the shared base
//! (`crate::base`) and under the executor loop (`crate::run`), which it never imports; it
//! never imports the Claude room either.
//!
//! - [`core`]: the sans-IO app-server core ([`Codex`]): executor commands in, JSON-RPC
//!   lines and observations out, with its parts (approvals, effects, notifications, the
//!   MCP and goal gate, `thread/read` records, resumption, usage limits).
//! - [`jsonrpc`]: JSON-RPC 2.0 framing over JSONL, the core's wire.
//! - [`task`]: the Codex worker's task, the shell around the core: its child, a new one
//!   with `thread/resume` after an exit, the prompts a crash left settled.
//! - [`reconcile`]: what `thread/read` says of a prompt left `submission-started`.
//! - [`home`]: a session's own `CODEX_HOME` (its `config.toml`, the person's login linked).
//! - [`surface`]: the check at start that the codex on hand is the pinned version with the
//!   app-server schema the core relies on (`surface.txt`).
//!
//! The core's API is re-exported here (`codex::Codex`, `codex::Effect`, ...).

pub mod core;
pub mod home;
pub mod jsonrpc;
pub mod reconcile;
pub mod surface;
pub mod task;

pub use self::core::{
    Approvals, CODEX_GOAL, Codex, Config, Effect, MCP_UNREACHABLE, Outcome, Report, Resume, record, usage,
};
