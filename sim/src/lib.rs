//! The deterministic simulator: the real engine and runtime shell under turmoil, with
//! simulated browsers, ChatGPT conversations and agents, crashes at every submission
//! boundary, swarm fault mixes, and seed-reproducible reports.
//!
//! # Layout
//! - `world.rs`: one run: hosts, fault plan, the safety then liveness phases, checks.
//! - `daemon.rs`: the daemon host (runtime shell + engine + simulated store).
//! - `browser.rs`: the executor host (a Rust model of the extension).
//! - `chat.rs`: a ChatGPT conversation host and the seeded agent inside it.
//! - `cli.rs`: the CLI executor host (journal, commands, reports), with `cli/turns.rs`
//!   (what runs in its sessions: turns and their agents, Claude steers, child crashes,
//!   foreign turns, limits) and `cli/reconcile.rs` (prompts a crash left, settled from the
//!   session records); `cli_session.rs`: what survives its restarts (journal, the CLIs'
//!   session records, the agents' work, the accounts' limits); `link.rs`: an executor's
//!   connection to the daemon, shared with the browser.
//! - `ledger.rs`: what the hosts observed (the checkers' input, never host logic's).
//! - `oracle.rs`: obligation checkers over the durable event log (what must follow).
//! - `kinds_oracle.rs`: nothing of a CLI worker reaches the browser (a `chatgpt` executor).
//! - `cli_oracle.rs`: the CLI executor's checks (exactly once across child and executor
//!   crashes, nothing typed into a stopped worker's session, next-turn steers booked as
//!   turns, foreign turns paused, accounts apart).
//! - `cli/approval.rs`: the CLI executor's approval mode (`--approvals ask`);
//!   `cli_operator.rs`: the stand-in person answering its requests;
//!   `cli_approval_oracle.rs`: their checks (nothing typed while a request waits, one
//!   decision per waiting request, no handle twice, no answer invented).
//! - `liveness_oracle.rs`: no worker is shown running while no executor carries it (its
//!   executor's connection closed, after every commit).
//! - `deadman_oracle.rs`: the dead-man checks (no firing while a person is asked, one
//!   per window, one root recovery per firing that asked for it).
//! - `faults.rs`: named crash boundaries. `wire.rs`: the simulated network's frames.
//! - `matrix.rs`: the crash matrix and swarm drivers, and failure reports.
//! - `scenario.rs`: the scenario file language (`scenarios/*.scn`).
//! - `shrink.rs`: reduces a failing configuration and writes it as a scenario file.
//!
//! Architecture Invariant: checkers live here, never in the engine; hosts talk only
//! over the simulated network; one `u64` seed decides everything.

mod browser;
mod chat;
mod cli;
pub mod cli_approval_oracle;
mod cli_operator;
pub mod cli_oracle;
pub mod cli_session;
mod daemon;
pub mod deadman_oracle;
pub mod faults;
pub mod kinds_oracle;
mod ledger;
mod link;
pub mod liveness_oracle;
pub mod matrix;
pub mod oracle;
pub mod scenario;
pub mod shrink;
mod wire;
pub mod world;
