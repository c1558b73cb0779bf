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
//! Layout: three layers, each a folder, each importing only from the layers below it
//! (checked by `cargo xtask tidy`, rule `cli-executor-layers`):
//! - [`base`]: what both CLIs share: the error and the limits, the settings, process
//!   handling (`child`, `tmpdir`, `group`, `lease`, `pump`), the MCP server and its probe, the
//!   journal, a worker's books, the core types both CLIs report with, and what every
//!   worker task shares. It imports neither a room nor the loop.
//! - One room per CLI, each its sans-IO core (`core/`) and the shell around it; a room
//!   imports the base only, never the loop or the other room:
//!   - [`codex`]: the Codex app-server core, its JSON-RPC framing, its task, its
//!     reconciliation from `thread/read`, its `CODEX_HOME`, its surface check at start.
//!   - [`claude`]: the Claude Code core, its task, and the Claude binary's checks and
//!     configuration.
//! - [`run`]: the executor loop on top: the connection ([`connection::run`], the entry
//!   point), the router of daemon commands by kind, and the supervision of each worker's
//!   task.
//!
//! Names that other rooms of the project also use, as this crate means them (each
//! module's header says why): `base::journal` is the executor's command journal (the
//! protocol's `hello.journal`, as `extension/src/core/journal.js` is the browser
//! executor's), not the store's; `base::books` are what one worker reported (the
//! simulator's `ledger.rs` is another thing); `base::pump::Pump` is a core and its child
//! (a session is the CLI's); `run::router` routes daemon commands (the engine's
//! `executor.rs` takes executor reports in).
//!
//! `docs/cli-agents.md` describes the mapping and what is left.

pub mod base;
pub mod claude;
pub mod codex;
pub mod run;

pub use base::error::Error;
/// The entry point, where the orchestrator's `executor-cli` names it
/// (`cli_executor::connection::run`).
pub use run::connection;
