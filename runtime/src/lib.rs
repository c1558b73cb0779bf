//! The runtime shell: drives the pure engine with time and inputs and performs its
//! effects through trait seams, identically in the daemon and in the simulator.
//!
//! # Layout
//! - `shell.rs`: [`Shell`] owns the engine and its [`Store`]; [`Handle`] is how callers
//!   (MCP server, executor bridge, simulated agents) reach it. Effects are released only
//!   after the store acknowledged the batches before them (group commit).
//! - `store.rs`: the [`Store`] seam and [`MemStore`], an in-memory store with a
//!   durability model for the simulator and tests.
//! - `contract.rs`: the store contract suite every [`Store`] implementation runs.
//! - `clock.rs`: the [`Clock`] seam and [`TokioClock`] (virtual under turmoil).
//!
//! Architecture Invariant: nothing here reads the wall clock except through [`Clock`],
//! and nothing here knows JSON, sockets or files: those are the adapters'.

mod clock;
pub mod contract;
mod shell;
mod store;

pub use clock::{Clock, TokioClock};
pub use shell::{CommitObserver, ExecutorSink, Handle, NotifySink, Request, Shell, ShellConfig, ShellError, ShellGone};
pub use store::{Disk, Lease, LeaseTake, MemStore, MemStoreError, Store};
