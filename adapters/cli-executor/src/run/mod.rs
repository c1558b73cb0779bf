//! The executor loop, on top of the base and both CLI rooms: the connection to the daemon,
//! the commands routed to a task of their kind, and each task's supervision.
//!
//! - [`connection`]: the entry point [`connection::run`]: options, the kinds run, the
//!   daemon WebSocket.
//! - [`router`]: daemon commands checked against the journal and routed by kind to a
//!   Codex or Claude task, and the `hello`.
//! - [`supervise`]: one worker task served: its messages, its pump's events, its restarts.
//! - [`stream`]: the TCP or TLS stream to a daemon's address.
//! - [`mcp_relay`]: the loopback MCP endpoint the children use when the executor follows
//!   a leader among several daemons.

pub mod connection;
pub mod mcp_relay;
pub mod router;
pub mod stream;
pub mod supervise;
