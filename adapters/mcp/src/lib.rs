//! The orchestrator's MCP server: one tool per engine operation, over the runtime
//! shell's [`runtime::Handle`], for any rmcp transport (streamable HTTP, stdio).
//!
//! # Layout
//! - `server.rs`: [`OrchestratorMcp`], the rmcp `ServerHandler`: lists the catalog,
//!   decodes arguments, sends the operation, shapes the reply; `events_wait` is a
//!   bounded long poll on [`runtime::Handle::durable_cursor`].
//! - `catalog.rs`: the tool catalog: names, descriptions written for the calling agent,
//!   input and output JSON schemas, annotations.
//!
//! Every failure the caller can act on is a tool result with `isError: true` whose text
//! content is the JSON `{code, message}` ([`caller_protocol::ErrorOut`]), and no `structuredContent`
//! (clients validate that against the tool's output schema even on errors): engine rejections keep
//! their stable code, arguments that do not decode are `INVALID_ARGUMENT` naming the
//! field, and a panic in a handler becomes `INTERNAL` without taking the daemon down.
//! Only an unknown tool name is a JSON-RPC error (`-32602`), as the protocol asks.

mod catalog;
mod server;

pub use catalog::{TOOL_NAMES, catalog};
pub use server::{McpConfig, OrchestratorMcp};
