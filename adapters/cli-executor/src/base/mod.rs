//! The shared base: what both CLI rooms (`crate::codex`, `crate::claude`) and the executor
//! loop (`crate::run`) stand on. Nothing here imports a room or the loop.
//!
//! - [`error`]: the crate's one error enum, with stable codes.
//! - [`identity`]: the host id kept across restarts, and each start's epoch.
//! - [`limits`]: every bound, named with its unit.
//! - [`settings`]: the executor's settings as the command line gives them, for both CLIs.
//! - [`report`]: what both cores report (a coarse state) and the failure codes they share.
//! - [`mcp`]: the orchestrator's MCP server as a child reaches it, and the probe.
//! - [`child`]: one child in its own process group, with its own config home and an
//!   allowlisted environment; bounded stdout lines, a capped stderr tail.
//! - [`tmpdir`]: a child's own `TMPDIR`, placed where both CLIs' sandboxes accept it.
//! - [`group`]: process groups through `/proc`, signalled with rustix.
//! - [`lease`]: one child per session (a lease file), and the reaper of stale leases.
//! - [`pump`]: a child connected to its sans-IO core (any [`pump::Core`]).
//! - [`journal`]: the executor's durable command journal, fsynced first.
//! - [`books`]: a worker's books: its reports, journaled first, and the gate of its prompts.
//! - [`worker`]: what every worker task shares: messages in and out, restarts, the shell
//!   the loop drives.

pub mod books;
pub mod child;
pub mod error;
pub mod group;
pub mod identity;
pub mod journal;
pub mod lease;
pub mod limits;
pub mod mcp;
pub mod pump;
pub mod report;
pub mod settings;
pub mod tmpdir;
pub mod worker;
