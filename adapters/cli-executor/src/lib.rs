//! The command-line agent executor's core, sans IO (issue 20, first slice).
//!
//! The browser extension is the daemon's hands in ChatGPT tabs; this crate will be its
//! hands in command-line coding agents. Today it holds the pure part only: a state machine
//! that turns the daemon's executor commands (`conversation.create`, `send`, `steer`,
//! `inspect`, `close`, `command.cancel`) into Codex app-server JSON-RPC requests, and the
//! app-server's responses and notifications into what an executor reports: command
//! results and coarse conversation states. No process is spawned, no socket opened and no
//! clock read: time is an argument, and effects (a line to write to the child's stdin, an
//! observation, a command result) come out as data, as in `engine` and
//! `extension/src/core/executor.js`.
//!
//! Layout:
//! - [`jsonrpc`]: JSON-RPC 2.0 framing over JSONL (requests with ids, responses matched to
//!   the request they answer, notifications, server requests).
//! - [`codex`]: the Codex app-server core ([`codex::Codex`]), with turn tracking, the nonce
//!   carried as `clientUserMessageId` and found again by `thread/read`, and usage limits.
//! - [`error`]: the crate's one error enum, with stable codes.
//! - [`limits`]: every bound, named with its unit.
//!
//! `docs/cli-agents.md` describes the mapping and what is left.

pub mod codex;
pub mod error;
pub mod jsonrpc;
pub mod limits;

pub use error::Error;
