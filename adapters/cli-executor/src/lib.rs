//! The command-line agent executor: sans-IO cores for Codex and Claude Code, the shell
//! that keeps their children in hand, and the executor process connected to the daemon
//! (issue 20).
//!
//! The browser extension is the daemon's hands in ChatGPT tabs; this crate is its hands in
//! command-line coding agents. Its pure part is a state machine
//! that turns the daemon's executor commands (`conversation.create`, `send`, `steer`,
//! `inspect`, `close`, `command.cancel`) into Codex app-server JSON-RPC requests, and the
//! app-server's responses and notifications into what an executor reports: command
//! results and coarse conversation states. No process is spawned, no socket opened and no
//! clock read: time is an argument, and effects (a line to write to the child's stdin, an
//! observation, a command result) come out as data, as in `engine` and
//! `extension/src/core/executor.js`. Around it, the IO shell spawns and supervises one
//! `codex app-server` or `claude -p` child per session (tokio, Linux `/proc`).
//!
//! Layout:
//! - [`jsonrpc`]: JSON-RPC 2.0 framing over JSONL (requests with ids, responses matched to
//!   the request they answer, notifications, server requests).
//! - [`codex`]: the Codex app-server core ([`codex::Codex`]), with turn tracking, the nonce
//!   carried as `clientUserMessageId` and found again by `thread/read`, usage limits, and a
//!   thread's first prompt held until the MCP server is ready and no goal is set, and the
//!   opt-in approval mode (`--approvals ask`: a request waits for a person's answer).
//! - [`claude`]: the Claude Code core ([`claude::Claude`]), one `claude -p` stream-json
//!   process per session: the nonce as the user line's `uuid`, turns from
//!   `command_lifecycle` to `result`, steers merged or queued as the next turn, usage limits
//!   with their reset (IANA zones from tzdata), and transcript reconciliation.
//! - [`child`]: one child in its own process group, with its own config home
//!   (`CODEX_HOME`, `CLAUDE_CONFIG_DIR`) and an allowlisted environment; bounded stdout
//!   lines, a capped stderr tail; stop ends the group.
//! - [`lease`]: one child per session (a lease file), and the reaper of stale leases.
//! - [`group`]: process groups through `/proc`, signalled with rustix (`SIGTERM`, `SIGKILL`).
//! - [`pump`]: a [`pump::Session`] connects a child to its core (either, [`pump::Core`]);
//!   the child's exit is an event.
//! - [`journal`]: the durable journal (phases, bindings, state sequences), fsynced first.
//! - [`ledger`]: a worker's reports, journaled first, and the gate of its prompts.
//! - [`worker`]: what every worker task shares, and the Codex task: its child, a new one
//!   with `thread/resume` after an exit.
//! - [`claude_worker`]: the Claude task: a child only after the MCP probe, `--resume`
//!   after an exit, reconciliation from the session's transcript.
//! - [`claude_cli`]: the Claude binary's settings, the surface checked at start, and what
//!   every Claude child is configured with.
//! - [`reconcile`]: what `thread/read` says of a prompt left `submission-started`.
//! - [`executor`]: daemon commands checked against the journal and routed by kind, and the
//!   `hello`.
//! - [`mcp`]: the orchestrator's MCP server as a child reaches it (URL, token variable), and
//!   the probe that proves it answers before a prompt goes in (fail closed).
//! - [`home`]: a Codex session's own `CODEX_HOME`: its `config.toml` (the MCP server
//!   required, its tools approved, goals off) and the person's login linked in.
//! - [`surface`]: the check at start that the codex on hand is the pinned version and its
//!   app-server schema has everything the core relies on (`surface.txt`).
//! - [`connection`]: the entry point [`connection::run`]: options, the daemon WebSocket.
//! - [`error`]: the crate's one error enum, with stable codes.
//! - [`limits`]: every bound, named with its unit.
//!
//! `docs/cli-agents.md` describes the mapping and what is left.

pub mod child;
pub mod claude;
pub mod claude_cli;
pub mod claude_worker;
pub mod codex;
pub mod connection;
pub mod error;
pub mod executor;
pub mod group;
pub mod home;
pub mod journal;
pub mod jsonrpc;
pub mod lease;
pub mod ledger;
pub mod limits;
pub mod mcp;
pub mod pump;
pub mod reconcile;
pub mod surface;
pub mod worker;

pub use error::Error;
