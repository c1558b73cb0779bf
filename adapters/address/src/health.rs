//! `GET /health`'s answer: what a running daemon says about itself to the operator (its
//! version, the executor protocol it speaks, the executors connected now, the hellos it
//! refused for their protocol version, its public address). The daemon serves it;
//! `orchestrator doctor` reads it.

use serde::{Deserialize, Serialize};

/// The route.
pub const HEALTH_PATH: &str = "/health";

/// What `/health` answers (JSON, camelCase).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Health {
    /// The daemon's version (`orchestrator --version`).
    pub version: String,
    /// The executor protocol version it speaks; `None` when no bridge is mounted.
    pub executor_protocol: Option<u32>,
    /// The executors connected now (their `hello` accepted), by id.
    pub executors: Vec<String>,
    /// The same executors with the worker kinds each runs (`chatgpt`: a browser profile;
    /// `codex`, `claude`: a CLI executor). Absent from older daemons.
    #[serde(default)]
    pub executor_kinds: Vec<ExecutorKindsView>,
    /// The newest hellos refused because the executor spoke another protocol version.
    pub refused_hellos: Vec<RefusedHelloView>,
    /// The `--public-url` the daemon serves OAuth for (its issuer), if any.
    pub public_url: Option<String>,
}

/// One connected executor and the worker kinds it runs, as `/health` shows it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExecutorKindsView {
    /// Its id (its `hello`'s `executorId`).
    pub executor_id: String,
    /// The kinds it runs: `chatgpt`, `codex`, `claude`.
    pub kinds: Vec<String>,
}

/// One refused hello, as `/health` shows it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RefusedHelloView {
    /// The protocol version the executor asked for.
    pub protocol: u32,
    /// When, in ms since the Unix epoch.
    pub at_ms: u64,
}
