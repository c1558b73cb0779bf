//! The Claude Code room: everything the executor knows of the Claude Code CLI, on the
//! shared base (`crate::base`) and under the executor loop (`crate::run`), which it never
//! imports; it never imports the Codex room either.
//!
//! - [`core`]: the sans-IO stream-json core ([`Claude`]): executor commands in, user lines
//!   and observations out, for one `claude -p` process at a time per session, with its
//!   parts (approvals, children, the command line, effects, limits, nonces, transcripts,
//!   time zones).
//! - [`task`]: the Claude worker's task, the shell around the core: a child only after the
//!   MCP probe, `--resume` after an exit, reconciliation from the session's transcript.
//! - [`cli`]: the Claude binary as the executor runs it: the surface checked at start, the
//!   sandbox's programs, what every child is configured with, where its transcript is.
//!
//! The core's API is re-exported here (`claude::Claude`, `claude::Effect`, ...).

pub mod cli;
pub mod core;
pub mod task;

pub use self::core::{
    Claude, Config, DECLINED, Effect, FLAGS, Landed, Launch, Outcome, Report, decision_line, flags_of, limit, nonce,
    transcript, tz,
};
