//! The orchestrator daemon's composition root, as a library: the binary (`main.rs`) parses
//! flags and hands over to it. It wires the rooms together and owns what is the process's
//! as a whole; each room is a crate of its own: the HTTP edge (`edge`), the OAuth server
//! (`oauth`), the command-line client (`console`), where a daemon is and how it is reached
//! (`address`), the MCP server (`mcp`), the executor bridge (`bridge`), the store (`store`).
//!
//! # Layout
//! - `main.rs`: the binary: flags in, one line on stderr and exit 1 on failure; each
//!   command handed to the crate that does it (`executor-cli` to `cli_executor`).
//! - `flags.rs` (the binary's): every subcommand and flag (clap), the one place the
//!   binary's command line is written down.
//! - `serve.rs`: `orchestrator serve`: the engine thread, MCP over streamable HTTP at
//!   `/mcp` (rmcp) behind the edge's guard, the OAuth routes, `/health`, the bridge at
//!   `/executor`, all served through [`edge::serve`]; graceful shutdown on SIGINT/SIGTERM;
//!   `orchestrator mcp-stdio`.
//! - `engine_thread.rs`: [`EngineThread`] runs the runtime shell on the fjall store on a
//!   dedicated OS thread (current-thread tokio runtime + `LocalSet`, since the shell
//!   future is `!Send`); everything else talks to it through the cloneable, `Send`
//!   [`runtime::Handle`]. [`NoExecutors`] is the sink of `mcp-stdio` (no executors there).
//! - `notify/`: `--notify` on the wire (`docs/notifications.md`): targets, the signing
//!   secret `DIR/notify-secret`, the bodies, HMAC-SHA256, and the poster that performs the
//!   engine's `Notify` effects.
//! - `notify_test_route.rs`: `POST /notify/test` behind `orchestrator notify test`: a test
//!   notification to each target now, by `notify`'s poster, answered per target.
//! - `health.rs`: `GET /health`, what `orchestrator doctor` asks a running daemon, read
//!   from the parts `serve.rs` mounted (the bridge's registry, the OAuth issuer).
//! - `pair.rs`: [`pair::PairBook`], the one-time pairing codes (keyed hashes in memory,
//!   minutes, once, rate limited), pure; `pair_route.rs`: `GET|POST /pair` and
//!   `POST /pair/code` around it (docs/operator.md "Pairing").
//! - `leader.rs`: one leader per Postgres database: the daemon id (`DIR/daemon-id`), the
//!   lease taken or waited for as a standby, the leader's self-fencing when its lease is
//!   lost; `standby_route.rs`: what a standby answers (503 `NOT_LEADER`, the leader's URL).
//! - `oauth_pg.rs`: the OAuth state in the database on Postgres ([`oauth_pg::PgGrants`],
//!   writes fenced by the leader's epoch; a grants file imported once).
//! - `logs.rs`: the process's log subscriber with bounded lines (every field cut at 1 KiB,
//!   every line at 4 KiB, marked), for rmcp's and every dependency's lines too.
//!
//! Architecture Invariant: the daemon performs engine mutations only through the
//! runtime shell; a reply reaches a caller only after the store acknowledged the batch.

mod engine_thread;
pub mod health;
pub mod leader;
pub mod logs;
pub mod notify;
pub mod notify_test_route;
pub mod oauth_pg;
pub mod pair;
pub mod pair_route;
pub mod serve;
pub mod standby_route;

pub use engine_thread::{ChannelExecutors, EngineThread, NoExecutors};
