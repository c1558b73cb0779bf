//! The deterministic simulator: the real engine and runtime shell under turmoil, with
//! simulated browsers, ChatGPT conversations and agents, crashes at every submission
//! boundary, swarm fault mixes, and seed-reproducible reports.
//!
//! # Layout
//! - `world.rs`: one run: the hosts, the fault plan, the safety then liveness phases;
//!   `knobs.rs`: every knob of a run (drawn from the seed or written by a scenario) and
//!   the operator's timed actions; `outcome.rs`: what a run produced and the final checks
//!   that fill it in (the oracles, the counts, the trace hash); `epoch.rs`: the
//!   simulated epoch every host and checker counts from.
//! - `daemon.rs`: the daemon host (runtime shell + engine + simulated store).
//! - `operator.rs`: the operator client (the run and its lanes, timed actions, sweeps).
//! - `browser.rs`: the executor host (a Rust model of the extension), with
//!   `browser/queue.rs` (a command's journal, queue and submission) and `browser/tabs.rs`
//!   (managed tabs, state reports, inspect, release).
//! - `chat.rs`: a ChatGPT conversation host, with `chat/agent.rs` (the seeded agent
//!   inside it and its turns) and `chat/stop.rs` (the page stops it can show).
//! - `cli.rs`: the CLI executor host (state, connection, event loop), with
//!   `cli/commands.rs` (journal, routing, delivery, acknowledgement), `cli/turns.rs`
//!   (what runs in its sessions: turns and their agents, Claude steers, child crashes,
//!   foreign turns, limits) and `cli/reconcile.rs` (prompts a crash left, settled from the
//!   session records); `cli_session.rs`: what survives its restarts (journal, the CLIs'
//!   session records, the agents' work, the accounts' limits); `link.rs`: an executor's
//!   connection to the daemon, shared with the browser.
//! - `ledger.rs`: what the hosts observed (the checkers' input, never host logic's).
//! - `oracle/`: obligation checkers over the durable event log (what must follow), and
//!   `oracle/seen.rs` over what the hosts saw (no Retry click, attaches honoured).
//! - `kinds_oracle.rs`: nothing of a CLI worker reaches the browser (a `chatgpt` executor).
//! - `cli_cap_oracle.rs`: the CLI executor's cap on turns at once, from its records.
//! - `cli_oracle.rs`: the CLI executor's checks (exactly once across child and executor
//!   crashes, nothing typed into a stopped worker's session, next-turn steers booked as
//!   turns, foreign turns paused, accounts apart); `cli_evidence.rs`: what they and the
//!   approval checks read besides the sessions' records, and the windows they allow.
//! - `cli/approval.rs`: the CLI executor's approval mode (`--approvals ask`);
//!   `cli_operator.rs`: the stand-in person answering its requests;
//!   `cli_approval_oracle.rs`: their checks (nothing typed while a request waits, one
//!   decision per waiting request, no handle twice, no answer invented).
//! - `liveness_oracle.rs`: no worker is shown running while no executor carries it (its
//!   executor's connection closed, after every commit).
//! - `deadman_oracle.rs`: the dead-man checks (no firing while a person is asked, one
//!   per window, one root recovery per firing that asked for it).
//! - `notifier.rs`: the daemon's notification poster and the model receiver;
//!   `notify_oracle.rs`: their checks (one notice per episode and target, none invented,
//!   none posted twice without a restart between, none left pending).
//! - `lease.rs`: a leased daemon's lease (`standby on`: two daemon hosts on one disk;
//!   standing by, taking the next epoch, renewing, stepping down when fenced or cut off);
//!   `failover.rs`: the world's side (who leads, the leader's death, pause, cut from the
//!   store); `lease_oracle.rs`: its checks (no stale epoch commits or dispatches).
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
pub mod cli_cap_oracle;
pub mod cli_evidence;
mod cli_operator;
pub mod cli_oracle;
pub mod cli_session;
mod daemon;
pub mod deadman_oracle;
mod epoch;
mod failover;
pub mod faults;
pub mod kinds_oracle;
pub mod knobs;
mod lease;
pub mod lease_oracle;
mod ledger;
mod link;
pub mod liveness_oracle;
pub mod matrix;
mod notifier;
pub mod notify_oracle;
mod operator;
pub mod oracle;
pub mod outcome;
pub mod scenario;
pub mod shrink;
mod wire;
pub mod world;
